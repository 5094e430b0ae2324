"""hetsched's `trace-cmd report` text read by ARM's LISA (`lisa-linux` on PyPI), the trace
toolkit EAS was developed with: every event row LISA parses is checked against the line it
came from, and LISA's own task, idle and frequency analyses against the run's result.json.

LISA is not a dependency of hetsched (its 3.1 release pulls in bokeh, holoviews, panel and
selenium, and uses np.NaN, which numpy 2 removed), so without it this module is skipped.
Known to pass with lisa-linux 3.1.0, numpy 1.26, pandas 2.3, pyarrow 18 (pyarrow 26 needs
numpy 2) and nest_asyncio (which LISA imports but does not declare)."""

import re
from collections import defaultdict

import numpy as np
import pytest

try:
    from lisa.platforms.platinfo import PlatformInfo
    from lisa.trace import Trace
except ImportError as e:
    pytest.skip(f"LISA's trace parser is not installed (pip install lisa-linux): {e}", allow_module_level=True)

from hetsched.sim import Simulation

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning:lisa")  # LISA 3.1 on pandas 2.x's deprecations

FIRST_PID = 1000  # trace/mod.rs: task i is pid 1000 + i (result.json's pid + 999)
PWR_EVENT_EXIT = 2**32 - 1
EVENTS = ("sched_switch", "sched_waking", "sched_wakeup", "sched_wakeup_new", "sched_migrate_task",
          "cpu_frequency", "cpu_idle")
COMM_FIELDS = ("comm", "prev_comm", "next_comm")
# v6.12's TASK_REPORT bits for the letters sched_switch prints (fs/proc/array.c's order);
# the "+" of a preempted task is TASK_REPORT_MAX, outside them
PREV_STATE_BITS = {"R": 0, "R+": 0, "S": 0x1, "D": 0x2, "Z": 0x20}
LINE = re.compile(r"^\s*(?P<comm>.+)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\] (?P<s>\d+)\.(?P<ns>\d{9}): "
                  r"(?P<event>\w+): +(?P<fields>.*)$")


def _lines_by_event(text):
    """{event: [(ns, cpu, comm, pid, {field: text})]} in file order, read from the text
    alone, as the reference LISA's rows are held to."""
    out = defaultdict(list)
    for line in text.splitlines()[2:]:
        m = LINE.match(line)
        assert m, line
        fields = dict(re.findall(r"(\w+)=(\S+)", m["fields"]))
        out[m["event"]].append((int(m["s"]) * 10**9 + int(m["ns"]), int(m["cpu"]), m["comm"], int(m["pid"]),
                                fields))
    return out


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    sim = Simulation(platform="gs101", workload="phone-mix", scheduler="eas", trace="ftrace", lower_bound=False)
    res = sim.run(1.0)
    text = sim.take_trace()
    path = tmp_path_factory.mktemp("lisa") / "trace.txt"
    path.write_text(text)
    plat = PlatformInfo()
    # LISA reads the CPU count and frequency domains from platform info, not from a text
    # trace's `cpus=` header, and refuses frequency residency without the domains
    plat.add_src("hetsched", {"cpus-count": sum(len(c["cpus"]) for c in res.doc["clusters"]),
                              "freq-domains": [c["cpus"] for c in res.doc["clusters"]]})
    # `.txt` selects LISA's parser of `trace-cmd report` without -R (HRTxtTraceParser)
    trace = Trace(str(path), plat_info=plat, enable_swap=False)
    return res, _lines_by_event(text), trace, sim.platform_spec


def test_lisa_parses_every_event_line(run):
    _, lines, trace, _ = run
    assert set(EVENTS) <= set(lines)
    assert all(event in trace.available_events for event in lines)
    for event, expected in lines.items():
        df = trace.df_event(event)
        assert len(df) == len(expected), event
        # LISA keeps seconds as float64 and moves a repeated timestamp up by one ulp to keep
        # the index unique; to the nanosecond it is still the text's time
        ns = np.rint(df.index.to_numpy() * 1e9).astype(np.int64)
        assert ns.tolist() == [e[0] for e in expected], event
        assert df["__cpu"].tolist() == [e[1] for e in expected], event
        assert df["__pid"].tolist() == [e[3] for e in expected], event
        assert df["__comm"].astype(str).tolist() == [e[2] for e in expected], event
        for field in expected[0][4]:
            if field == "prev_state":
                continue
            col = df[field]
            want = [e[4][field] for e in expected]
            if field in COMM_FIELDS:
                assert col.astype(str).tolist() == want, (event, field)
            else:
                assert col.dtype.kind in "iu", (event, field, col.dtype)
                assert col.tolist() == [int(v) for v in want], (event, field)


def test_lisa_reads_prev_state_letters_as_the_kernels_state_bits(run):
    _, lines, trace, _ = run
    df = trace.df_event("sched_switch")
    assert df["prev_state"].dtype.kind in "iu"
    letters = [e[4]["prev_state"] for e in lines["sched_switch"]]
    assert {"R", "R+", "S"} <= set(letters)
    # LISA 3.1's TaskState.from_sched_switch_str also ORs in every state whose letter is
    # empty (TASK_WAKEKILL, TASK_NOLOAD, TASK_NEW, TASK_STATE_MAX: 0x1d00), as "" is in any
    # string; the reported states are the low byte
    assert (df["prev_state"].to_numpy() & 0xFF).tolist() == [PREV_STATE_BITS[s] for s in letters]


def test_lisa_sees_each_cpus_switch_sequence_of_the_text(run):
    _, lines, trace, _ = run
    df = trace.df_event("sched_switch")
    want = defaultdict(list)
    for _, cpu, _, _, f in lines["sched_switch"]:
        want[cpu].append((int(f["prev_pid"]), int(f["next_pid"])))
    got = {cpu: list(zip(g["prev_pid"], g["next_pid"])) for cpu, g in df.groupby("__cpu")}
    assert got == dict(want)


def _at_end(lines, event, key):
    """Each CPU's value of `key` in its last `event` line: what LISA's window, closed at the
    trace's last event rather than at the run's end, leaves out the rest of the run for."""
    last = {}
    for _, cpu, _, _, f in lines[event]:
        last[int(f.get("cpu_id", cpu))] = f[key]
    return last


def _tail(res, trace):
    return res.doc["sim_duration_s"] - trace.end


def test_lisa_task_runtimes_are_the_engines(run):
    res, lines, trace, _ = run
    tail = _tail(res, trace)
    assert 0 <= tail < 0.01
    running = {int(pid) for pid in _at_end(lines, "sched_switch", "next_pid").values()}
    runtime = trace.ana.tasks.df_tasks_runtime()["runtime"]
    for task in res.doc["tasks"]:
        pid = FIRST_PID - 1 + task["pid"]
        expect = task["runtime_s"] - (tail if pid in running else 0.0)
        assert runtime.get(pid, 0.0) == pytest.approx(expect, abs=1e-9), task["name"]


def test_lisa_idle_and_frequency_residencies_are_the_engines(run):
    res, lines, trace, spec = run
    tail = _tail(res, trace)
    idle_at_end = _at_end(lines, "cpu_idle", "state")
    khz_at_end = _at_end(lines, "cpu_frequency", "state")
    states = {c: cl["idle_states"] for cl in spec["clusters"] for c in cl["cpus"]}
    for cpu_doc in res.doc["cpus"]:
        cpu = cpu_doc["cpu"]
        # LISA's idle analysis turns PWR_EVENT_EXIT into -1, the CPU out of idle
        end_state = int(idle_at_end[cpu])
        end_state = -1 if end_state == PWR_EVENT_EXIT else end_state
        expect = {-1: cpu_doc["busy_s"]}
        expect.update((i, cpu_doc["idle_residency_s"][s["name"]]) for i, s in enumerate(states[cpu]))
        expect[end_state] -= tail
        residency = trace.ana.idle.df_cpu_idle_state_residency(cpu)["time"]
        for state, seconds in expect.items():
            assert residency.get(state, 0.0) == pytest.approx(seconds, abs=1e-9), (cpu, state)
        # result.json's frequency residency counts the CPU's busy time at each OPP, as
        # LISA's active_time does
        active = trace.ana.frequency.df_cpu_frequency_residency(cpu)["active_time"]
        for khz, seconds in cpu_doc["freq_residency_s"].items():
            if end_state == -1 and khz == khz_at_end[cpu]:
                seconds -= tail
            assert active.get(int(khz), 0.0) == pytest.approx(seconds, abs=1e-9), (cpu, khz)
