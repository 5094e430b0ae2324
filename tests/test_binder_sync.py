"""binder's WF_SYNC wakeups: read from a trace's binder_transaction events (ftrace text and
Perfetto), replayed as ``sem_post_sync``, and placed as each kernel profile places a sync
wakeup (drivers/android/binder.c wakes the thread taking a two-way transaction, and the
sender of a reply, with wake_up_interruptible_sync(); a one-way transaction without)."""

from __future__ import annotations

import pytest

from hetsched.sim import Simulation
from hetsched.traces import build_replay, load_trace
from hetsched.traces.parse import Binder, parse_text

# client a (pid 10, process 10) calls process 20, whose binder thread b (21) replies;
# then a one-way call, then a call whose sender is switched out before the wakeup
BINDER_TEXT = """\
# tracer: nop
#P:2
           a-10    (   10) [000] d..2   100.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=10 next_prio=120
           a-10    (   10) [000] ...1   100.000100: binder_transaction: transaction=7 dest_node=3 dest_proc=20 dest_thread=0 reply=0 flags=0x10 code=0x1
           a-10    (   10) [000] d..3   100.000105: sched_waking: comm=b pid=21 prio=120 target_cpu=001
           a-10    (   10) [000] d..2   100.000110: sched_switch: prev_comm=a prev_pid=10 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
          <idle>-0     (-----) [001] d..2   100.000120: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=b next_pid=21 next_prio=120
           b-21    (   20) [001] ...1   100.000300: binder_transaction: transaction=8 dest_node=0 dest_proc=10 dest_thread=10 reply=1 flags=0x0 code=0x0
           b-21    (   20) [001] d..3   100.000305: sched_waking: comm=a pid=10 prio=120 target_cpu=000
           b-21    (   20) [001] d..2   100.000310: sched_switch: prev_comm=b prev_pid=21 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
          <idle>-0     (-----) [000] d..2   100.000320: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=10 next_prio=120
           a-10    (   10) [000] ...1   100.000400: binder_transaction: transaction=9 dest_node=3 dest_proc=20 dest_thread=0 reply=0 flags=0x11 code=0x2
           a-10    (   10) [000] d..3   100.000405: sched_waking: comm=b pid=21 prio=120 target_cpu=001
          <idle>-0     (-----) [001] d..2   100.000420: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=b next_pid=21 next_prio=120
           b-21    (   20) [001] d..2   100.000500: sched_switch: prev_comm=b prev_pid=21 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
           a-10    (   10) [000] ...1   100.000600: binder_transaction: transaction=10 dest_node=3 dest_proc=20 dest_thread=0 reply=0 flags=0x10 code=0x1
           a-10    (   10) [000] d..2   100.000610: sched_switch: prev_comm=a prev_pid=10 prev_prio=120 prev_state=R ==> next_comm=c next_pid=30 next_prio=120
           c-30    (   30) [000] d..2   100.000650: sched_switch: prev_comm=c prev_pid=30 prev_prio=120 prev_state=S ==> next_comm=a next_pid=10 next_prio=120
           a-10    (   10) [000] d..3   100.000655: sched_waking: comm=b pid=21 prio=120 target_cpu=001
           a-10    (   10) [000] d..2   100.000700: sched_switch: prev_comm=a prev_pid=10 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
          <idle>-0     (-----) [001] d..2   100.000720: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=b next_pid=21 next_prio=120
           b-21    (   20) [001] d..2   100.000800: sched_switch: prev_comm=b prev_pid=21 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
"""


def _posts(spec, name):
    t = next(t for t in spec["tasks"] if t["name"] == name)
    return [next(iter(ev)) for ev in t["phases"][0]["events"] if "sem_post" in next(iter(ev))]


def test_binder_transactions_in_ftrace_text():
    tr = parse_text(BINDER_TEXT.splitlines(), "binder")
    tx = [(e.ts - 100_000_000_000, e.cpu, e.pid, e.reply, e.one_way, e.to_proc, e.to_thread, e.sync)
          for e in tr.events if isinstance(e, Binder)]
    assert tx == [(100_000, 0, 10, False, False, 20, 0, True), (300_000, 1, 21, True, False, 10, 10, True),
                  (400_000, 0, 10, False, True, 20, 0, False), (600_000, 0, 10, False, False, 20, 0, True)]
    assert tr.counts()["binder"] == 4


def test_binder_lines_as_other_tools_print_them():
    # debug_id and target_node are ints that wrap negative; trace-cmd report -R prints the
    # struct's own field names, flags in decimal
    lines = [
        "  a-10 [000] ...1 1.000000: binder_transaction: transaction=-2147483000 dest_node=-5 dest_proc=20 "
        "dest_thread=0 reply=0 flags=0x11 code=0x1",
        "  a-10 [000] ...1 1.000001: binder_transaction: debug_id=7 target_node=3 to_proc=20 to_thread=21 "
        "reply=1 code=0 flags=16",
    ]
    tr = parse_text(lines, "binder")
    got = [(e.reply, e.one_way, e.to_proc, e.to_thread) for e in tr.events if isinstance(e, Binder)]
    assert got == [(False, True, 20, 0), (True, False, 20, 21)] and not tr.skipped


def test_without_tgids_a_pool_transaction_wakes_a_binder_thread():
    # no tgid column: a transaction to process 20's pool is taken as woken only in a binder
    # pool thread (binder:PID_N); a wakeup of another task right after it is a plain post
    text = "\n".join(line.replace("(   10) ", "").replace("(   20) ", "").replace("(   30) ", "")
                     .replace("(-----) ", "") for line in BINDER_TEXT.splitlines())
    spec = build_replay(parse_text(text.splitlines(), "binder")).spec
    assert _posts(spec, "a-10") == ["sem_post", "sem_post", "sem_post"]
    assert _posts(spec, "b-21") == ["sem_post_sync"]   # the reply names a's thread
    named = text.replace("comm=b pid=21", "comm=binder:20_1 pid=21").replace("b-21 ", "binder:20_1-21 ")
    spec = build_replay(parse_text(named.splitlines(), "binder")).spec
    assert _posts(spec, "a-10") == ["sem_post_sync", "sem_post", "sem_post"]


def test_the_replay_posts_binders_two_way_calls_and_replies_with_wf_sync():
    spec = build_replay(parse_text(BINDER_TEXT.splitlines(), "binder")).spec
    # a: the call (sync), the one-way call (not), the call whose wakeup came after a switch
    # on its CPU (the transaction's wakeup is not known to be that one: not)
    assert _posts(spec, "a-10") == ["sem_post_sync", "sem_post", "sem_post"]
    # b: the reply to a's thread (sync)
    assert _posts(spec, "b-21") == ["sem_post_sync"]


def test_binder_transactions_in_perfetto():
    pb = pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2",
                             reason="Perfetto's Python protos (pip install perfetto)")
    trace = pb.Trace()
    b = trace.packet.add().ftrace_events
    b.cpu = 3
    for ts, reply, flags in ((1000, 0, 0x10), (2000, 1, 0), (3000, 0, 0x11)):
        ev = b.event.add()
        ev.timestamp, ev.pid = ts, 5732
        bt = ev.binder_transaction
        bt.debug_id, bt.target_node, bt.to_proc, bt.to_thread = ts, 1, 1858, 0 if not reply else 11237
        bt.reply, bt.flags, bt.code = reply, flags, 3
    tr = load_trace_bytes(trace.SerializeToString())
    got = [(e.ts, e.cpu, e.pid, e.reply, e.one_way, e.to_proc, e.to_thread, e.sync)
           for e in tr.events if isinstance(e, Binder)]
    assert got == [(1000, 3, 5732, False, False, 1858, 0, True), (2000, 3, 5732, True, False, 1858, 11237, True),
                   (3000, 3, 5732, False, True, 1858, 0, False)]


def load_trace_bytes(data: bytes):
    from hetsched.traces.perfetto import read_perfetto

    return read_perfetto(data, "hand.perfetto-trace")


def _server_cpu_time(kernel: str, post: str) -> dict:
    """A client pinned to big CPU 7 calls a server (2 ms of work between calls, 0.1 ms to
    serve one) on gs101 under eas: the server's run time by CPU."""
    spec = {"name": "binder-pair", "sems": [0, 0], "tasks": [
        {"name": "client", "cpus": [7], "loop": -1,
         "phases": [{"events": [{"run": 2_000_000}, {post: 0}, {"sem_wait": 1}]}]},
        {"name": "server", "loop": -1, "phases": [{"events": [{"sem_wait": 0}, {"run": 100_000}, {post: 1}]}]}]}
    sim = Simulation(platform="gs101", workload=spec, scheduler="eas", governor="schedutil", lower_bound=False,
                     seed=0, knobs={"kernel": kernel})
    sim.run(0.2)
    return sim.engine_result()["tasks"][1]["cpu_time_s"]


@pytest.mark.parametrize("kernel", ["android-4.19", "pixel-5.10"])
def test_a_sync_post_wakes_the_server_on_the_callers_cpu(kernel):
    # android-4.19's feec and the Pixel's vendor hook take a sync wakeup to the waking CPU
    # (the caller running alone there, for the Pixel); a plain post goes where the energy
    # search says, off CPU 7
    sync = _server_cpu_time(kernel, "sem_post_sync")
    plain = _server_cpu_time(kernel, "sem_post")
    assert max(sync, key=sync.get) == "7" and sync["7"] > 0.99 * sum(sync.values()) - 1e-4
    assert plain.get("7", 0.0) < 0.1 * sum(plain.values())


def test_mainline_feec_does_not_read_wf_sync():
    # v6.12's find_energy_efficient_cpu() takes no sync flag (wake_affine() reads it, on the
    # path an overutilized root domain takes; this pair never overutilizes it): the same
    # runs to the byte
    assert _server_cpu_time("mainline-6.12", "sem_post_sync") == _server_cpu_time("mainline-6.12", "sem_post")
