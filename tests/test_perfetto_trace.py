"""Reading Perfetto protobuf traces (hetsched.traces.perfetto): a compact_sched trace built
here with Perfetto's own protos round-trips a schedule written down by hand; the engine's
own Perfetto output reads back as the same events as its ftrace text (parsed by other
code); the Pixel 6a trace (../shared/realdata/traces) replays whole; bad files get one
line."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

import pytest

pb = pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2",
                         reason="Perfetto's Python protos (pip install perfetto)")

from hetsched.errors import InputError  # noqa: E402
from hetsched.traces import ReplayOptions, build_replay, load_trace  # noqa: E402
from hetsched.traces.parse import IDLE_EXIT, Freq, Idle, Switch, Wakeup  # noqa: E402
from hetsched.traces.perfetto import prev_state_letter  # noqa: E402

TRACES = Path(__file__).resolve().parents[2] / "shared" / "realdata" / "traces"
PIXEL = TRACES / "pixel6a_tensor_warm_startup.perfetto-trace"


def _compact_bundle(cpu, switches, wakings, table):
    """A bundle whose compact_sched holds ``switches`` (ts, prev_state, next_pid, prio,
    comm) and ``wakings`` (ts, pid, target_cpu, prio, comm, common_flags), timestamps
    delta-encoded as traced_probes writes them."""
    b = pb.FtraceEventBundle(cpu=cpu)
    cs = b.compact_sched
    cs.intern_table.extend(table)
    last = 0
    for ts, state, pid, prio, comm in switches:
        cs.switch_timestamp.append(ts - last)
        last = ts
        cs.switch_prev_state.append(state)
        cs.switch_next_pid.append(pid)
        cs.switch_next_prio.append(prio)
        cs.switch_next_comm_index.append(table.index(comm))
    last = 0
    for ts, pid, target, prio, comm, flags in wakings:
        cs.waking_timestamp.append(ts - last)
        last = ts
        cs.waking_pid.append(pid)
        cs.waking_target_cpu.append(target)
        cs.waking_prio.append(prio)
        cs.waking_comm_index.append(table.index(comm))
        cs.waking_common_flags.append(flags)
    return b


def _hand_trace(release="5.10.107-android13"):
    """Two CPUs, a UI thread (pid 100, tgid 100), its RenderThread (101) and a binder
    thread of another process (200, tgid 199), on a v5.10 kernel:

    cpu0: 1000 idle -> 100 (ui) ... 1500 ui wakes 101 onto cpu1 ... 2000 ui preempted
          (0x100) -> 200 ... 2600 200 blocks (S, 1) -> idle ... 3000 an interrupt on idle
          wakes 100 (hard irq flag 0x08) ... 3100 idle -> 100
    cpu1: 1600 idle -> 101 ... 2200 101 blocks (D, 2) -> idle
    plus ordinary events: cpu_frequency of cpu1 at 1550, cpu_idle exit of cpu1 at 1590.
    Bundles are cut mid-sequence (cpu0's second bundle starts at the preemption), as a
    reader of the per-CPU buffers cuts them."""
    trace = pb.Trace()
    pkt = trace.packet.add()
    pkt.system_info.utsname.release = release
    pkt = trace.packet.add()
    th = pkt.process_tree.threads.add()
    th.tid, th.tgid, th.name = 101, 100, "RenderThread"
    pr = pkt.process_tree.processes.add()
    pr.pid, pr.cmdline[:] = 100, ["/system/bin/app_process64", "com.example.app"]
    pr = pkt.process_tree.processes.add()
    pr.pid = 199
    pr.cmdline.append("/system/bin/surfaceflinger")
    th = pkt.process_tree.threads.add()
    th.tid, th.tgid, th.name = 200, 199, "binder:199_2"
    # ActivityManager's oom_score_adj: the top app 0, a native daemon -1000; a process
    # without the field (a kernel thread's) is not named
    pkt = trace.packet.add()
    for pid, adj in ((100, 0), (199, -1000), (2, None)):
        ps = pkt.process_stats.processes.add()
        ps.pid = pid
        if adj is not None:
            ps.oom_score_adj = adj
    # cpu0, first bundle: the UI thread runs and wakes RenderThread
    trace.packet.add().ftrace_events.CopyFrom(_compact_bundle(
        0, [(1000, 0, 100, 110, "ample.app")], [(1500, 101, 1, 110, "RenderThread", 0)],
        ["ample.app", "RenderThread"]))
    # cpu1: ordinary cpu_frequency and cpu_idle events beside the compact ones
    b = _compact_bundle(1, [(1600, 0, 101, 110, "RenderThread"), (2200, 2, 0, 120, "swapper/1")], [],
                        ["RenderThread", "swapper/1"])
    ev = b.event.add()
    ev.timestamp, ev.pid = 1550, 0
    ev.cpu_frequency.state, ev.cpu_frequency.cpu_id = 1_803_000, 1
    ev = b.event.add()
    ev.timestamp, ev.pid = 1590, 0
    ev.cpu_idle.state, ev.cpu_idle.cpu_id = 2**32 - 1, 1
    trace.packet.add().ftrace_events.CopyFrom(b)
    # cpu0, second bundle: preemption, a block, an interrupt's wakeup on the idle CPU
    trace.packet.add().ftrace_events.CopyFrom(_compact_bundle(
        0, [(2000, 0x100, 200, 120, "binder:199_2"), (2600, 1, 0, 120, "swapper/0"),
            (3100, 0, 100, 110, "ample.app")],
        [(3000, 100, 0, 110, "ample.app", 0x08)],
        ["binder:199_2", "swapper/0", "ample.app"]))
    return trace.SerializeToString()


EXPECTED_SWITCHES = [
    # ts, cpu, prev_pid, prev_state, next_pid
    (1000, 0, -1, "R", 100),   # the CPU's first switch: what ran before is not in the trace
    (1600, 1, 0, "R", 101),    # cpu1's ordinary events, written with pid 0, say it was idle
    (2000, 0, 100, "R", 200),  # 0x100: preempted
    (2200, 1, 101, "D", 0),
    (2600, 0, 200, "S", 0),
    (3100, 0, 0, "R", 100),    # 0 from the idle task: TASK_RUNNING
]


def _check_hand_trace(tr):
    assert tr.format == "perfetto" and tr.nr_cpus == 2
    sw = [(e.ts, e.cpu, e.prev_pid, e.prev_state, e.next_pid) for e in tr.events if isinstance(e, Switch)]
    assert sw == EXPECTED_SWITCHES
    by_ts = {e.ts: e for e in tr.events}
    assert by_ts[2000].prev_comm == "ample.app" and by_ts[2000].prev_prio == 110
    assert by_ts[2600].prev_comm == "binder:199_2"
    wk = [(e.ts, e.cpu, e.waker_pid, e.irq, e.pid, e.target_cpu) for e in tr.events if isinstance(e, Wakeup)]
    # 1500: written while the UI thread ran on cpu0, by it; 3000: in hard irq on the idle CPU
    assert wk == [(1500, 0, 100, False, 101, 1), (3000, 0, 0, True, 100, 0)]
    assert [(e.ts, e.cpu, e.khz) for e in tr.events if isinstance(e, Freq)] == [(1550, 1, 1_803_000)]
    assert [(e.ts, e.cpu, e.state) for e in tr.events if isinstance(e, Idle)] == [(1590, 1, IDLE_EXIT)]
    assert tr.tgids[101] == 100 and tr.tgids[200] == 199 and tr.tgids[100] == 100
    assert tr.thread_names[101] == "RenderThread"
    assert tr.process_names == {100: "app_process64", 199: "surfaceflinger"}
    assert tr.oom_score_adj == {100: 0, 199: -1000}
    assert [e.ts for e in tr.events] == sorted(e.ts for e in tr.events)


@pytest.mark.parametrize("suffix,compress", [(".perfetto-trace", False), (".pftrace.gz", True),
                                             (".bin", False)])
def test_a_compact_sched_trace_round_trips_a_schedule_written_by_hand(tmp_path, suffix, compress):
    data = _hand_trace()
    path = tmp_path / f"hand{suffix}"
    path.write_bytes(gzip.compress(data) if compress else data)
    _check_hand_trace(load_trace(path))


def test_the_replay_of_the_hand_trace_keeps_its_run_time_and_its_wakeups(tmp_path):
    path = tmp_path / "hand.perfetto-trace"
    path.write_bytes(_hand_trace())
    rep = build_replay(load_trace(path), ReplayOptions())
    runs = {r["pid"]: r["busy_ns"] for r in rep.tasks}
    # ui: 1000-2000 and 3100-3100 (the trace's end); RenderThread 1600-2200; binder 2000-2600
    assert runs == {100: 1000, 101: 600, 200: 600}
    prog = {t["name"]: t["phases"][0]["events"] for t in rep.spec["tasks"]}
    ui = prog["ample.app-100"]
    assert any("sem_post" in ev for ev in ui)  # it wakes RenderThread
    render = prog["RenderThread-101"]
    assert "sem_wait" in render[0]  # RenderThread starts by waiting for the UI thread's wakeup


def test_prev_state_by_kernel_version():
    # v4.14+: TASK_REPORT_MAX (0x100) is preempted, 0x80 TASK_REPORT_IDLE (I), 0x40 parked
    assert [prev_state_letter(v, (5, 10)) for v in (0, 1, 2, 4, 16, 32, 64, 128, 256)] == \
        ["R", "S", "D", "T", "X", "X", "P", "I", "R"]
    # v4.9: p->state itself, TASK_STATE_MAX (4096) or'ed in when preempted; 64 is TASK_DEAD
    assert [prev_state_letter(v, (4, 9)) for v in (0, 1, 2, 64, 4096, 4097)] == ["R", "S", "D", "X", "R", "R"]


def test_the_engines_perfetto_trace_reads_back_as_its_ftrace_text():
    """One run written both ways: the Perfetto reader (protos) and the text parser (regular
    expressions) give the same switches, wakeups, frequencies and idle transitions."""
    from hetsched.sim import Simulation

    def events(fmt):
        sim = Simulation(platform="gs101", workload="phone-mix", scheduler="eas", trace=fmt, lower_bound=False)
        sim.run(0.5)
        data = sim.take_trace()
        return data.encode() if isinstance(data, str) else data

    import tempfile

    with tempfile.TemporaryDirectory() as d:
        pf, ft = Path(d) / "t.perfetto-trace", Path(d) / "t.txt"
        pf.write_bytes(events("perfetto"))
        ft.write_bytes(events("ftrace"))
        a, b = load_trace(pf), load_trace(ft)

    def key(tr):
        out = []
        for e in tr.events:
            if isinstance(e, Switch):
                out.append(("switch", e.ts, e.cpu, e.prev_pid, e.prev_state, e.next_pid, e.next_prio))
            elif isinstance(e, Wakeup):
                out.append((e.kind, e.ts, e.cpu, e.pid, e.target_cpu))
            elif isinstance(e, (Freq, Idle)):
                out.append((type(e).__name__, e.ts, e.cpu, getattr(e, "khz", getattr(e, "state", None))))
        return sorted(out)

    ka, kb = key(a), key(b)
    assert len(ka) > 1000
    assert ka == kb


def _pixel():
    if not PIXEL.is_file():
        pytest.skip(f"{PIXEL} is not available")
    return load_trace(PIXEL)


def test_the_pixel_6a_trace_reads_whole():
    tr = _pixel()
    # the file's compact arrays and ordinary events, counted with the protos directly
    t = pb.Trace()
    t.ParseFromString(PIXEL.read_bytes())
    n_switch = n_waking = n_freq = n_idle = 0
    for p in t.packet:
        if p.HasField("ftrace_events"):
            n_switch += len(p.ftrace_events.compact_sched.switch_timestamp)
            n_waking += len(p.ftrace_events.compact_sched.waking_timestamp)
            n_freq += sum(e.HasField("cpu_frequency") for e in p.ftrace_events.event)
            n_idle += sum(e.HasField("cpu_idle") for e in p.ftrace_events.event)
    c = tr.counts()
    assert (c["switch"], c["waking"], c["freq"], c["idle"]) == (n_switch, n_waking, n_freq, n_idle)
    assert n_switch == 11_086 and n_freq == 1_442 and n_idle == 6_809  # SOURCES.md
    assert tr.nr_cpus == 8 and tr.meta["kernel_release"].startswith("5.10.107")
    ran = {e.next_pid for e in tr.events if isinstance(e, Switch) and e.next_pid > 0} | \
        {e.prev_pid for e in tr.events if isinstance(e, Switch) and e.prev_pid > 0}
    assert len(ran) == 368   # SOURCES.md: 368 distinct threads ran
    # every switch's previous task is the one the CPU's switch before brought in
    on = {}
    for e in tr.events:
        if isinstance(e, Switch):
            if e.cpu in on:
                assert e.prev_pid == on[e.cpu]
            on[e.cpu] = e.next_pid


def test_the_pixel_6a_trace_replays_every_thread_with_its_busy_time():
    tr = _pixel()
    busy, last = 0, {}
    for e in tr.events:
        if isinstance(e, Switch):
            if e.cpu in last and last[e.cpu][1] != 0:
                busy += e.ts - last[e.cpu][0]
            last[e.cpu] = (e.ts, e.next_pid)
    busy += sum(tr.end_ns - ts for ts, pid in last.values() if pid)
    rep = build_replay(tr, ReplayOptions(include_kthreads=True))
    assert len(rep.tasks) == 368
    assert abs(rep.busy_ns - busy) / busy < 0.01


def test_a_truncated_perfetto_trace_is_one_line(tmp_path):
    data = _hand_trace()
    cut = tmp_path / "cut.perfetto-trace"
    cut.write_bytes(data[:-7])
    with pytest.raises(InputError) as e:
        load_trace(cut)
    assert "truncated" in str(e.value) and str(cut) in str(e.value)
    garbage = tmp_path / "garbage.pftrace"
    garbage.write_bytes(data + b"\x12\x03abc")
    with pytest.raises(InputError) as e:
        load_trace(garbage)
    assert "tag 0x12" in str(e.value)
    # through the CLI: one line, exit 2, nothing written
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "hetsched.cli", "replay", str(cut), "--platform", "gs101",
                           "--out", str(out)], capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert not out.exists()


def test_a_bundle_whose_compact_arrays_disagree_is_refused(tmp_path):
    trace = pb.Trace()
    b = _compact_bundle(0, [(1000, 0, 100, 120, "a")], [], ["a"])
    b.compact_sched.switch_next_pid.append(5)   # one pid more than timestamps
    trace.packet.add().ftrace_events.CopyFrom(b)
    path = tmp_path / "bad.perfetto-trace"
    path.write_bytes(trace.SerializeToString())
    with pytest.raises(InputError, match="compact_sched.switch"):
        load_trace(path)


def test_replay_prints_the_phones_figures_beside_the_runs(tmp_path):
    """`hetsched replay --figures`: the trace's figures and the run's, both measured by
    hetsched.traces.figures (the run's on the ftrace text it writes)."""
    if not PIXEL.is_file():
        pytest.skip(f"{PIXEL} is not available")
    out = tmp_path / "px"
    cmd = [sys.executable, "-m", "hetsched.cli", "replay", str(PIXEL), "--platform", "gs101", "--source-platform",
           "gs101", "--include-kthreads", "--figures", "--out", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"})
    assert proc.returncode == 0, proc.stderr
    assert (out / "trace.txt").is_file()
    lines = {ln.split("│")[1].strip(): ln for ln in proc.stdout.splitlines() if ln.count("│") >= 3}
    assert "threads that run" in lines and lines["threads that run"].count("368") == 2
    for row in ("mean frequency, little (MHz)", "time at f_min, big", "wait / run, RenderThread",
                "wakeup latency p50 (µs)"):
        assert row in lines, row
    # another trace format cannot be measured: one line, exit 2
    bad = subprocess.run(cmd[:-2] + ["--trace", "--trace-format", "perfetto", "--out", str(tmp_path / "bad")],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "--figures" in bad.stderr
