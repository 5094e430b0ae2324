"""What the kernel cannot write into a trace (hetsched.traces.check, docs/traces.md
"Impossible traces"): time going backwards on a CPU, a task on two CPUs at once. Every
reader refuses them with the line or packet, and repairs them only when asked, with one
warning counting the repairs. Small traces written here; the committed real traces are
checked to load as they are."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest

from hetsched.errors import InputError
from hetsched.traces import ReplayOptions, build_replay, load_trace
from hetsched.traces.check import BACKWARDS, TWO_CPUS
from hetsched.traces.parse import Switch, TraceRepairWarning

REAL = Path(__file__).resolve().parents[2] / "shared" / "realdata" / "traces"


def sw(cpu, ts, prev, nxt, state="S"):
    """A trace-cmd report sched_switch line: (pid, comm) out, (pid, comm) in."""
    (pp, pc), (np_, nc) = prev, nxt
    return (f"{pc:>16}-{pp:<5} [{cpu:03d}] {ts:.6f}: sched_switch: prev_comm={pc} prev_pid={pp} prev_prio=120 "
            f"prev_state={state} ==> next_comm={nc} next_pid={np_} next_prio=120")


IDLE0, IDLE1 = (0, "swapper/0"), (0, "swapper/1")
W, O, P = (42, "worker"), (43, "other"), (44, "other2")
HEADER = ["version = 6", "cpus=2"]

#: CPU 0 goes back from 0.011 s to 0.005 s at line 6 (CPU 1's line between is in order)
BACKWARDS_LINES = HEADER + [sw(0, 0.001, IDLE0, W, "R"), sw(0, 0.011, W, IDLE0), sw(1, 0.002, IDLE1, O, "R"),
                            sw(0, 0.005, IDLE0, P, "R"), sw(1, 0.009, O, IDLE1)]
#: the worker switched in on CPU 1 at line 4 while it runs on CPU 0 since line 3
TWO_CPU_LINES = HEADER + [sw(0, 0.001, IDLE0, W, "R"), sw(1, 0.002, IDLE1, W, "R"), sw(1, 0.009, W, IDLE1),
                          sw(0, 0.011, W, IDLE0)]


def write(tmp_path, lines, name="t.txt"):
    f = tmp_path / name
    f.write_text("\n".join(lines) + "\n")
    return f


def test_time_going_backwards_on_a_cpu_is_refused_at_its_line(tmp_path):
    f = write(tmp_path, BACKWARDS_LINES)
    with pytest.raises(InputError) as e:
        load_trace(f)
    assert e.value.source == str(f) and e.value.field == "line 6"
    assert "CPU 0's previous event at 0.011000000 s" in str(e.value) and "got 0.005000000 s" in str(e.value)
    assert "\n" not in str(e.value)


def test_cpus_interleaved_out_of_global_order_are_accepted(tmp_path):
    # only each CPU's own order is the kernel's: CPU 1's 0.002 after CPU 0's 0.011 is fine
    f = write(tmp_path, HEADER + [sw(0, 0.001, IDLE0, W, "R"), sw(0, 0.011, W, IDLE0), sw(1, 0.002, IDLE1, O, "R"),
                                  sw(1, 0.009, O, IDLE1)])
    tr = load_trace(f)
    assert [e.ts for e in tr.events] == [1_000_000, 2_000_000, 9_000_000, 11_000_000]
    assert not tr.repaired


def test_a_task_on_two_cpus_at_once_is_refused_naming_both_places(tmp_path):
    f = write(tmp_path, TWO_CPU_LINES)
    with pytest.raises(InputError) as e:
        load_trace(f)
    msg = str(e.value)
    assert e.value.field == "line 4"
    assert "pid 42 (worker) is switched in on CPU 1" in msg and "runs on CPU 0" in msg
    assert "switched in there at line 3, out only at line 6" in msg


def test_a_cpu_that_lost_events_is_not_a_task_on_two_cpus(tmp_path):
    # CPU 0's next switch leaves another task (Z): it lost the worker's switch-out (a ring
    # buffer that overflowed), so the worker's run there ended unseen, before CPU 1 took
    # it; and a CPU that never switches again confirms nothing
    lost = write(tmp_path, HEADER + [sw(0, 0.001, IDLE0, W, "R"), sw(1, 0.002, IDLE1, W, "R"),
                                     sw(0, 0.004, (30, "Z"), IDLE0), sw(1, 0.006, W, IDLE1)], "lost.txt")
    assert load_trace(lost).counts()["switch"] == 4
    end = write(tmp_path, HEADER + [sw(0, 0.001, IDLE0, W, "R"), sw(1, 0.002, IDLE1, W, "R"),
                                    sw(1, 0.006, W, IDLE1)], "end.txt")
    assert not load_trace(end).repaired


def test_the_idle_task_and_a_migration_at_one_timestamp_are_not_two_cpus(tmp_path):
    # pid 0 is each CPU's own idle task; a switch-out on CPU 0 printed just after the
    # switch-in on CPU 1 at the same microsecond is the merge of two buffers, not an overlap
    f = write(tmp_path, HEADER + [sw(0, 0.001, IDLE0, W, "R"), sw(1, 0.001, IDLE1, O, "R"),
                                  sw(1, 0.004, O, W, "S"), sw(0, 0.004, W, IDLE0, "R"),
                                  sw(1, 0.008, W, IDLE1)])
    tr = load_trace(f)
    assert tr.counts()["switch"] == 5 and not tr.repaired


def test_a_task_back_on_the_same_cpu_after_a_lost_switch_out_is_not_two_cpus(tmp_path):
    # the same CPU switching the worker in twice: one CPU, whatever was lost between
    f = write(tmp_path, HEADER + [sw(0, 0.001, IDLE0, W, "R"), sw(0, 0.003, O, W, "R"), sw(0, 0.005, W, IDLE0)])
    assert load_trace(f).counts()["switch"] == 3


def test_repair_sorts_per_cpu_and_warns_once(tmp_path):
    f = write(tmp_path, BACKWARDS_LINES)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        tr = load_trace(f, repair=True)
    assert [str(w.message) for w in got if w.category is TraceRepairWarning] == \
        [f"{f}: repaired what the kernel cannot write: 1 event earlier than its CPU's previous event "
         "(sorted per CPU)"]
    assert tr.repaired == {BACKWARDS: 1}
    cpu0 = [e.ts for e in tr.events if e.cpu == 0]
    assert cpu0 == sorted(cpu0) == [1_000_000, 5_000_000, 11_000_000]


def test_repair_ends_the_earlier_run_at_the_later_switch_in(tmp_path):
    f = write(tmp_path, TWO_CPU_LINES)
    with pytest.warns(TraceRepairWarning, match="1 switch-in of a task still running on another CPU"):
        tr = load_trace(f, repair=True)
    assert tr.repaired == {TWO_CPUS: 1}
    sws = [(e.ts, e.cpu, e.prev_pid, e.prev_state, e.next_pid) for e in tr.events if isinstance(e, Switch)]
    assert sws == [(1_000_000, 0, 0, "R", 42),
                   (2_000_000, 0, 42, "R", 0),     # the run on CPU 0 ends where CPU 1 takes it
                   (2_000_000, 1, 0, "R", 42),
                   (9_000_000, 1, 42, "S", 0),
                   (11_000_000, 0, 0, "R", 0)]     # CPU 0's own switch-out now leaves its idle task
    rep = build_replay(tr, ReplayOptions())
    # one task, never two CPUs at once: busy time within its makespan (1 ms + 7 ms)
    assert rep.busy_ns == 8_000_000 and rep.busy_ns <= rep.makespan_ns


def test_an_unrepaired_busy_time_no_longer_exceeds_the_makespan(tmp_path):
    # the case: replay of an impossible trace used to report more busy time than
    # its makespan; now it is refused, and repaired the two agree
    f = write(tmp_path, TWO_CPU_LINES)
    with pytest.raises(InputError):
        load_trace(f)
    with pytest.warns(TraceRepairWarning):
        rep = build_replay(load_trace(f, repair=True), ReplayOptions())
    assert rep.busy_ns <= rep.makespan_ns


def test_a_systrace_page_is_checked_at_its_page_line(tmp_path):
    lines = ["<!DOCTYPE html>", "<html>", "<body>", '  <script class="trace-data" type="application/text">',
             "# tracer: nop", *TWO_CPU_LINES[2:], "  </script>", "</body>", "</html>"]
    f = write(tmp_path, lines, "t.html")
    with pytest.raises(InputError) as e:
        load_trace(f)
    # the second switch of the block is the page's seventh line
    assert e.value.field == "line 7" and "two" not in e.value.field
    assert "pid 42 (worker)" in str(e.value)
    with pytest.warns(TraceRepairWarning):
        assert load_trace(f, repair=True).repaired == {TWO_CPUS: 1}


def cli(monkeypatch, capsys, args):
    from hetsched import cli as cli_mod

    monkeypatch.setattr(sys, "argv", ["hetsched", *map(str, args)])
    code = 0
    try:
        cli_mod.main()
    except SystemExit as e:
        code = e.code or 0
    cap = capsys.readouterr()
    return code, cap.out, cap.err


@pytest.mark.parametrize("lines, needle", [(BACKWARDS_LINES, "line 6: expected a time no earlier than CPU 0's"),
                                           (TWO_CPU_LINES, "line 4: expected a task on one CPU at a time")])
@pytest.mark.parametrize("command", ["replay", "trace-stats"])
def test_the_cli_refuses_with_one_line_and_repairs_with_one_warning(monkeypatch, capsys, tmp_path, lines, needle,
                                                                     command):
    f = write(tmp_path, lines)
    out = tmp_path / "out"
    extra = ["--out", out, "--platform", "juno-r0", "--duration", "0.05"] if command == "replay" else []
    code, stdout, err = cli(monkeypatch, capsys, [command, f, *extra])
    assert code == 2 and "Traceback" not in err
    assert err.splitlines() == [err.strip()] and err.startswith(f"hetsched: error: {f}: {needle}"), err
    assert not out.exists() or not any(out.iterdir())
    code, stdout, err = cli(monkeypatch, capsys, [command, f, *extra, "--repair"])
    assert code == 0, err
    warn = [ln for ln in err.splitlines() if "warning" in ln]
    assert len(warn) == 1 and warn[0].startswith(f"hetsched: warning: {f}: repaired what the kernel cannot write: 1 ")


# ------------------------------------------------------------------ Perfetto

def _perfetto(bundles):
    """A Perfetto trace of ordinary sched_switch events: bundles of (cpu, [(ts, prev_pid,
    next_pid)]), one packet each, after a SystemInfo packet (packet 0)."""
    pb = pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2",
                             reason="Perfetto's Python protos (pip install perfetto)")
    trace = pb.Trace()
    trace.packet.add().system_info.utsname.release = "5.10.107-android13"
    for cpu, events in bundles:
        b = trace.packet.add().ftrace_events
        b.cpu = cpu
        for ts, prev, nxt in events:
            ev = b.event.add()
            ev.timestamp, ev.pid = ts, prev
            s = ev.sched_switch
            s.prev_pid, s.prev_comm, s.prev_prio, s.prev_state = prev, f"t{prev}", 120, 1
            s.next_pid, s.next_comm, s.next_prio = nxt, f"t{nxt}", 120
    return trace.SerializeToString()


def test_a_perfetto_cpu_whose_next_bundle_goes_back_in_time_is_refused_at_that_packet(tmp_path):
    f = tmp_path / "t.perfetto-trace"
    f.write_bytes(_perfetto([(0, [(1000, 0, 42), (2000, 42, 0)]), (1, [(500, 0, 43)]),
                             (0, [(1500, 0, 44)])]))
    with pytest.raises(InputError) as e:
        load_trace(f)
    assert e.value.field == "packet 3" and "CPU 0's previous event" in str(e.value)
    with pytest.warns(TraceRepairWarning):
        tr = load_trace(f, repair=True)
    assert tr.repaired == {BACKWARDS: 1}


def test_a_perfetto_task_on_two_cpus_is_refused_at_its_packet(tmp_path):
    f = tmp_path / "t.perfetto-trace"
    f.write_bytes(_perfetto([(0, [(1000, 0, 42), (5000, 42, 0)]), (1, [(2000, 0, 42), (3000, 42, 0)])]))
    with pytest.raises(InputError) as e:
        load_trace(f)
    assert e.value.field == "packet 2" and "runs on CPU 0 (switched in there at packet 1" in str(e.value)
    with pytest.warns(TraceRepairWarning):
        assert load_trace(f, repair=True).repaired == {TWO_CPUS: 1}


# ------------------------------------------------------------------ the real traces

REAL_TRACES = ["lisa_juno_r0_trace.txt", "tracecompass_android_sched_ftrace.txt",
               "tracecompass_x86_critical_path_ftrace.txt", "catapult_2cpu_launcher_2012.html",
               "trappy_android_surfaceflinger_systrace.html", "lisa_juno_sched_load_trace.dat.gz",
               "trappy_juno_raw_trace.dat", "pixel6a_tensor_warm_startup.perfetto-trace"]


@pytest.mark.parametrize("name", REAL_TRACES)
def test_every_committed_real_trace_loads_without_repair(name):
    path = REAL / name
    if not path.exists():
        pytest.skip(f"{path} not present")
    if name.endswith(".dat") or name.endswith(".dat.gz"):
        from hetsched.traces import trace_cmd_available

        if not trace_cmd_available():
            pytest.skip("trace-cmd is not installed")
    if name.endswith(".perfetto-trace"):
        pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no repair warning either
        tr = load_trace(path)
    assert not tr.repaired
