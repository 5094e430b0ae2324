"""The scheduler trace in the kernel's event shapes: `trace-cmd report` text that `hetsched
replay` reads back into the run's own task timeline, and a Perfetto protobuf trace decoded
with Perfetto's published protos (the `perfetto` package), checked event by event against
the same run's Chrome slices and result.json."""

import json
import re
from collections import defaultdict

import pytest

from hetsched.sim import Simulation
from hetsched.traces.parse import Switch, Wakeup, load_trace
from hetsched.traces.replay import ReplayOptions, build_replay

FIRST_PID = 1000  # trace/mod.rs: task i is pid 1000 + i (result.json's pid + 999)
PWR_EVENT_EXIT = 2**32 - 1


def _run(fmt, platform="gs101", workload="phone-mix", duration=1.0, **kw):
    sim = Simulation(platform=platform, workload=workload, scheduler="eas", trace=fmt, lower_bound=False, **kw)
    res = sim.run(duration)
    return res, sim.take_trace()


def _chrome_intervals(text):
    """{(pid, cpu, start_ns, end_ns)} from the Chrome slices."""
    doc = json.loads(text)
    out = set()
    for e in doc["traceEvents"]:
        if e.get("ph") == "X":
            start = round(float(e["ts"]) * 1000)
            out.add((FIRST_PID + e["args"]["task"], e["tid"], start, start + round(float(e["dur"]) * 1000)))
    return out


def _switch_intervals(switches, end_ns):
    """{(pid, cpu, start, end)}: each task's stretches on a CPU, from sched_switch alone
    (switches: (ts, cpu, prev_pid, next_pid) in trace order)."""
    on = {}
    out = set()
    for ts, cpu, prev_pid, next_pid in switches:
        if cpu in on:
            pid, start = on.pop(cpu)
            assert pid == prev_pid, f"cpu{cpu} at {ts}: switch from {prev_pid} but {pid} was running"
            if pid and ts > start:
                out.add((pid, cpu, start, ts))
        on[cpu] = (next_pid, ts)
    for cpu, (pid, start) in on.items():
        if pid and end_ns > start:
            out.add((pid, cpu, start, end_ns))
    return out


@pytest.fixture(scope="module")
def runs():
    return {fmt: _run(fmt) for fmt in ("chrome", "ftrace", "perfetto")}


def test_the_trace_format_changes_nothing_of_the_run(runs):
    docs = [r.doc for r, _ in runs.values()]
    for d in docs:
        d.pop("wall_s")
    assert docs[0] == docs[1] == docs[2]


def test_ftrace_text_round_trips_to_the_runs_own_task_timeline(runs, tmp_path):
    res, text = runs["ftrace"]
    assert text.startswith("version = 6\ncpus=8\n")
    path = tmp_path / "trace.txt"
    path.write_text(text)
    tr = load_trace(path)
    assert tr.format == "trace-cmd report" and tr.nr_cpus == 8
    # every line is an event replay reads or counts: nothing malformed
    assert not any(reason.startswith("malformed") for reason in tr.skipped), tr.skipped
    end_ns = round(res.doc["sim_duration_s"] * 1e9)
    switches = [(e.ts, e.cpu, e.prev_pid, e.next_pid) for e in tr.events if isinstance(e, Switch)]
    # the stretches each task ran, to the nanosecond, are the Chrome slices of the same run
    assert _switch_intervals(switches, end_ns) == _chrome_intervals(runs["chrome"][1])
    # and the replay built from the file gives each task the busy time the engine counted
    # (sum_exec_runtime), up to the file's last event: a task still running at the end has
    # no switch closing its last stretch there. The workload's kernel workers (phone-mix's
    # run-to-run noise) are named as kernel threads, which replay leaves out by default
    rep = build_replay(tr, ReplayOptions(include_kthreads=True))
    busy = {t["pid"]: t["busy_ns"] for t in rep.tasks}
    last = max(e.ts for e in tr.events)
    tail = defaultdict(int)
    for pid, cpu, start, end in _switch_intervals(switches, end_ns):
        tail[pid] += end - max(start, last) if end > last else 0
    engine = {FIRST_PID - 1 + t["pid"]: round(t["runtime_s"] * 1e9) for t in res.doc["tasks"]}
    assert busy.keys() == engine.keys()
    for pid, ns in busy.items():
        assert abs(ns + tail[pid] - engine[pid]) <= 1, (pid, ns, tail[pid], engine[pid])


def test_ftrace_lines_have_the_kernels_shapes(runs):
    _, text = runs["ftrace"]
    lines = text.splitlines()[2:]
    events = defaultdict(list)
    for line in lines:
        head, _, fields = line.partition(": ")
        event, _, fields = fields.partition(":")
        events[event].append((head, fields.strip()))
    assert {"sched_switch", "sched_waking", "sched_wakeup", "sched_wakeup_new", "sched_migrate_task",
            "cpu_frequency", "cpu_idle"} <= set(events)
    # TP_printk of v6.12's sched_switch; prev_state is one of the letters the engine makes
    for head, f in events["sched_switch"]:
        prev, arrow, nxt = f.partition(" ==> ")
        assert arrow and prev.startswith("prev_comm=") and nxt.startswith("next_comm=")
        state = prev.rsplit("prev_state=", 1)[1]
        assert state in ("R", "R+", "S", "D", "Z")
    # the line's comm-pid is the task on that CPU: for a switch, the one leaving
    for head, f in events["sched_switch"][:50]:
        comm_pid = re.match(r"^\s*(.*?)\s+\[\d{3}\]", head).group(1)  # a comm may hold "[" (lowpool[69])
        prev_pid = int(f.split("prev_pid=")[1].split()[0])
        assert comm_pid.endswith(f"-{prev_pid}")
    # a wakeup's target_cpu is printed %03d, as the kernel's format does
    for _, f in events["sched_wakeup"][:20]:
        assert len(f.rsplit("target_cpu=", 1)[1]) == 3


def _perfetto(data):
    pb = pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2",
                             reason="Perfetto's Python protos (pip install perfetto)")
    trace = pb.Trace()
    trace.ParseFromString(data)
    return trace


def test_perfetto_trace_decodes_with_perfettos_protos(runs):
    res, data = runs["perfetto"]
    trace = _perfetto(data)
    kinds = defaultdict(int)
    switches, idle, freq, wakes = [], defaultdict(list), defaultdict(list), []
    for p in trace.packet:
        kinds[p.WhichOneof("data")] += 1
        if not p.HasField("ftrace_events"):
            continue
        cpu = p.ftrace_events.cpu
        for e in p.ftrace_events.event:
            which = e.WhichOneof("event")
            kinds[which] += 1
            if which == "sched_switch":
                s = e.sched_switch
                switches.append((e.timestamp, cpu, s.prev_pid, s.next_pid, s.prev_state, e.pid))
            elif which == "cpu_idle":
                assert e.cpu_idle.cpu_id == cpu
                idle[cpu].append((e.timestamp, e.cpu_idle.state))
            elif which == "cpu_frequency":
                freq[e.cpu_frequency.cpu_id].append((e.timestamp, e.cpu_frequency.state))
            elif which in ("sched_waking", "sched_wakeup", "sched_wakeup_new"):
                wakes.append((e.timestamp, which, getattr(e, which).pid))
    assert kinds["system_info"] == 1 and kinds["track_descriptor"] == 16  # util and power per CPU
    assert trace.packet[0].system_info.utsname.release.startswith("6.12")
    # the cpu table: each CPU's capacity_orig and frequency table, from the platform
    from hetsched.platforms import load_platform

    (info,) = [p.cpu_info for p in trace.packet if p.HasField("cpu_info")]
    spec = load_platform("gs101").to_spec()
    want = {cpu: (c["capacity_orig"], [o["khz"] for o in c["opps"]]) for c in spec["clusters"] for cpu in c["cpus"]}
    assert [(c.capacity, list(c.frequencies)) for c in info.cpus] == [want[i] for i in range(8)]
    # bundles are per CPU and each is in time order; the whole, sorted by time as the trace
    # processor sorts it, is the run's timeline
    switches.sort(key=lambda s: s[0])
    end_ns = round(res.doc["sim_duration_s"] * 1e9)
    intervals = _switch_intervals([s[:4] for s in switches], end_ns)
    assert intervals == _chrome_intervals(runs["chrome"][1])
    # prev_state raw values: 0 (R), 0x100 (TASK_REPORT_MAX: preempted), 1 (S), 2 (D), 0x20 (Z)
    assert {s[4] for s in switches} <= {0, 0x100, 1, 2, 0x20}
    assert any(s[4] == 1 for s in switches) and any(s[4] == 0x100 for s in switches)
    # the event's pid field is the task running on the CPU: the one switched out
    assert all(s[5] == s[2] for s in switches)
    # cpu_idle alternates: a state, then PWR_EVENT_EXIT, on every CPU
    for cpu, evs in idle.items():
        entered = [s != PWR_EVENT_EXIT for _, s in evs]
        assert entered[0] and all(a != b for a, b in zip(entered, entered[1:])), cpu
    # cpu_frequency per CPU: the CPUs of a cluster always report the same frequency
    assert freq[0] == freq[1] == freq[2] == freq[3]
    assert freq[6] == freq[7] and freq[4] == freq[5]
    # every sched_wakeup follows its task's sched_waking: at once, or once the target CPU is
    # out of its idle state (the exit latency)
    pending = set()
    for t, kind, pid in sorted(wakes, key=lambda w: (w[0], w[1] != "sched_waking")):
        if kind == "sched_waking":
            pending.add(pid)
        elif kind == "sched_wakeup":
            assert pid in pending, (t, pid)
            pending.discard(pid)
    assert kinds["sched_wakeup_new"] == len(res.doc["tasks"])


def test_idle_and_switch_events_on_a_hand_worked_periodic_task(tmp_path):
    """One rt-app task, 2000 us of work every 10 ms, three loops, pinned to CPU 0 of
    hetero-2cpu (capacity 1024 at its one OPP, 2.8 GHz; one idle state, WFI, exit latency
    1 us), the switch cost set to 0. Worked by hand: each period the timer fires at
    k x 10 ms, the CPU is out of WFI 1 us later (the exit latency; cpu_idle's exit is
    written then, as cpuidle_enter_state() writes it when the state's enter() returns), the
    task is woken and switched in at that instant, runs 2 ms (2000 us of work at capacity
    1024 and f_max), and sleeps (prev_state S), the CPU entering WFI (state 0) again. The fourth
    timer ends the loops: the task exits (sched_process_exit, then prev_state Z)."""
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"global": {"duration": -1}, "tasks": {"p": {
        "loop": 3, "cpus": [0], "run": 2000, "timer": {"ref": "t", "period": 10000}}}}))
    sim = Simulation(platform="hetero-2cpu", workload=str(path), scheduler="cfs", governor="performance",
                     knobs={"cost.context_switch_ns": 0}, trace="ftrace", lower_bound=False)
    sim.run(0.05)
    got = [(ln.split("]")[1].split(":")[0].strip(), ln.split(": ", 1)[1].split(":")[0], ln.split(": ", 2)[2].strip())
           for ln in sim.take_trace().splitlines()[2:] if "[000]" in ln]

    def t(ns):
        return f"{ns // 10**9}.{ns % 10**9:09d}"

    task = "comm=p-0 pid=1000 prio=120 target_cpu=000"
    switch_in = ("sched_switch", "prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> "
                 "next_comm=p-0 next_pid=1000 next_prio=120")
    want = [(t(0), "cpu_idle", "state=0 cpu_id=0"), (t(0), "cpu_frequency", "state=2800000 cpu_id=0"),
            (t(1000), "cpu_idle", "state=4294967295 cpu_id=0"),
            (t(1000), "sched_wakeup_new", task), (t(1000), *switch_in)]
    for k in range(4):
        start = k * 10_000_000 + 1000
        if k:
            want += [(t(start), "cpu_idle", "state=4294967295 cpu_id=0"),
                     (t(start), "sched_waking", task), (t(start), "sched_wakeup", task), (t(start), *switch_in)]
        end, state = (start + 2_000_000, "S") if k < 3 else (start, "Z")
        if k == 3:
            want.append((t(end), "sched_process_exit", "comm=p-0 pid=1000 prio=120"))
        want += [(t(end), "sched_switch", f"prev_comm=p-0 prev_pid=1000 prev_prio=120 prev_state={state} ==> "
                  "next_comm=swapper/0 next_pid=0 next_prio=120"),
                 (t(end), "cpu_idle", "state=0 cpu_id=0")]
    assert got == want


def test_a_fork_names_its_parent_before_the_childs_first_wakeup():
    """rt-app's example 9: thread3 forks thread1 and thread2 in turn. Each fork is a
    sched_process_fork on the parent's CPU, naming the parent as the line's running task,
    and the child's next event is its sched_wakeup_new."""
    res, text = _run("ftrace", workload="rtapp_example9.json", duration=0.3)
    lines = [ln for ln in text.splitlines()[2:]]
    forks = [i for i, ln in enumerate(lines) if ": sched_process_fork: " in ln]
    names = {t["pid"] + FIRST_PID - 1: t["name"] for t in res.doc["tasks"]}
    parent = next(p for p, n in names.items() if n.startswith("thread3"))
    # the tasks forked from a template (thread1 and thread3 start by themselves)
    assert len(forks) == sum(t["name"].endswith("-0000") for t in res.doc["tasks"]) == 2
    for i in forks:
        head, fields = lines[i].split(": sched_process_fork: ")
        assert head.split("[")[0].strip() == f"{names[parent][:15]}-{parent}"
        f = dict(kv.split("=", 1) for kv in fields.split())
        assert int(f["pid"]) == parent and names[int(f["child_pid"])][:15] == f["child_comm"]
        ts = head.rsplit(" ", 1)[1]
        # the child's next event is its sched_wakeup_new: at once, or once the CPU chosen
        # for it has left its idle state
        after = [ln for ln in lines[i + 1:] if f"={f['child_comm']} " in ln or f"-{f['child_pid']} " in ln]
        assert f": sched_wakeup_new: comm={f['child_comm']} pid={f['child_pid']} " in after[0]
        assert float(after[0].split(": sched_wakeup_new")[0].rsplit(" ", 1)[1]) >= float(ts)
