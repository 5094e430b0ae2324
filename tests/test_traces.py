"""Real traces: parsing every file of ../shared/realdata/traces, turning traces into replay
specs, the host platform, `hetsched record` / `hetsched replay`.

Expected values are derived from the trace files themselves with grep-level logic (line
counts, per-task busy time from the sched_switch lines), not copied from the parser.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from hetsched.errors import InputError
from hetsched.platforms import load_platform
from hetsched.platforms.host import load_host
from hetsched.traces import ReplayOptions, build_replay, compare, load_trace, parse_text
from hetsched.traces.parse import IDLE_EXIT, Freq, Idle, Switch, Wakeup, parse_state
from hetsched.traces.record import find_tracefs
from hetsched.sim import NO_COSTS

REPO = Path(__file__).resolve().parents[1]
TRACES = REPO.parent / "shared" / "realdata" / "traces"
needs_trace_cmd = pytest.mark.skipif(shutil.which("trace-cmd") is None,
                                     reason="trace-cmd is not installed (apt-get install trace-cmd)")


def real(name: str) -> Path:
    p = TRACES / name
    if not p.is_file():
        pytest.skip(f"{p} is not available")
    return p


def event_lines(text: str, event: str) -> list[str]:
    return [ln for ln in text.splitlines() if f": {event}: " in ln]


def ts_ns(line: str) -> int:
    m = re.search(r"\s(\d+)\.(\d+): ", line)
    return int(m.group(1)) * 10**9 + int((m.group(2) + "000000000")[:9])


def busy_by_pid(switch_lines: list[str], t_start: int, t_end: int) -> dict[int, int]:
    """Per-pid run time from sched_switch lines alone: per CPU, the next task runs from
    the switch until the next switch on that CPU; before a CPU's first switch its prev
    task has run since the trace start; at the end, until the trace end."""
    cur: dict[int, tuple[int, int]] = {}
    busy: dict[int, int] = defaultdict(int)
    for ln in switch_lines:
        cpu = int(re.search(r"\[(\d+)\]", ln).group(1))
        t = ts_ns(ln)
        prev = int(re.search(r"prev_pid=(\d+)", ln).group(1))
        nxt = int(re.search(r"next_pid=(\d+)", ln).group(1))
        pid, since = cur.get(cpu, (prev, t_start))
        busy[pid] += t - since
        cur[cpu] = (nxt, t)
    for pid, since in cur.values():
        busy[pid] += t_end - since
    busy.pop(0, None)
    return dict(busy)


def first_last_ts(text: str) -> tuple[int, int]:
    stamps = [ts_ns(ln) for ln in text.splitlines() if re.search(r"\]\s.*\d+\.\d+: \w+: ", ln)]
    return min(stamps), max(stamps)


# --- parsing the real files -----------------------------------------------------------------


@pytest.mark.parametrize("name", ["lisa_juno_r0_trace.txt", "tracecompass_android_sched_ftrace.txt",
                                  "tracecompass_x86_critical_path_ftrace.txt"])
def test_text_traces_switch_and_wakeup_counts(name):
    p = real(name)
    text = p.read_text()
    tr = load_trace(p)
    c = tr.counts()
    assert c["switch"] == len(event_lines(text, "sched_switch"))
    assert c["wakeup"] == len(event_lines(text, "sched_wakeup"))
    assert c["waking"] == len(event_lines(text, "sched_waking"))
    # every line that names an event is either used or counted as skipped
    n_event_lines = sum(1 for ln in text.splitlines() if re.search(r"\d+\.\d+: [\w.-]+: ", ln))
    assert tr.used + tr.nr_skipped == n_event_lines
    assert tr.skipped["malformed line"] == 0


def test_lisa_trace_details():
    p = real("lisa_juno_r0_trace.txt")
    text = p.read_text()
    tr = load_trace(p)
    assert tr.format == "trace-cmd report" and tr.nr_cpus == 6
    # skipped: every event other than the used ones (sched_overutilized, plain prints)
    overutil = len(event_lines(text, "sched_overutilized"))
    prints = [ln for ln in event_lines(text, "print") if "cpu_frequency_devlib" not in ln]
    assert tr.skipped == Counter({"event sched_overutilized": overutil, "event print": len(prints)})
    # devlib's frequencies (print text) are read as cpu_frequency
    devlib = [ln for ln in text.splitlines() if "cpu_frequency_devlib" in ln]
    assert sum(isinstance(e, Freq) for e in tr.events) == len(devlib) > 0
    # integer prev_state: the raw values, mapped; 4096 and 0 mean still runnable
    raw = Counter(re.search(r"prev_state=(\d+)", ln).group(1) for ln in event_lines(text, "sched_switch"))
    got = Counter(e.prev_state for e in tr.events if isinstance(e, Switch))
    assert got["R"] == raw["0"] + raw["4096"]
    assert got["S"] == raw["1"]
    assert got["D"] == raw["2"] + raw["130"]
    assert got["X"] == raw["64"]


def test_comms_with_spaces_and_placeholders():
    tr = load_trace(real("tracecompass_x86_critical_path_ftrace.txt"))
    comms = {e.prev_comm for e in tr.events if isinstance(e, Switch)} | \
            {e.waker_comm for e in tr.events if isinstance(e, Wakeup)}
    assert "Web Content" in comms
    web = [e for e in tr.events if isinstance(e, Wakeup) and e.waker_comm == "Web Content"]
    assert web and all(e.waker_pid == 2711 for e in web)
    assert {e.prev_state for e in tr.events if isinstance(e, Switch)} >= {"R", "S", "D", "T"}


def test_systrace_html():
    p = real("trappy_android_surfaceflinger_systrace.html")
    text = p.read_text()
    block = text[text.index("<!-- BEGIN TRACE -->"):text.index("<!-- END TRACE -->")]
    tr = load_trace(p)
    assert tr.format == "systrace" and tr.nr_cpus == 8
    c = tr.counts()
    assert c["switch"] == len(event_lines(block, "sched_switch"))
    assert c["wakeup"] == len(event_lines(block, "sched_wakeup"))
    assert c["freq"] == len(event_lines(block, "cpu_frequency"))
    assert c["idle"] == len(event_lines(block, "cpu_idle"))
    exits = [e for e in tr.events if isinstance(e, Idle) and e.state == IDLE_EXIT]
    assert len(exits) == block.count("state=4294967295")  # PWR_EVENT_EXIT
    wakers = {e.waker_comm for e in tr.events if isinstance(e, Wakeup)}
    assert "<7952>" in wakers
    names = wakers | {e.prev_comm for e in tr.events if isinstance(e, Switch)} | \
        {e.next_comm for e in tr.events if isinstance(e, Switch)}
    assert any("<-transport" in n or n.startswith("<-") for n in names) or \
        "<-transport" not in block   # present in the block -> parsed
    assert tr.skipped["malformed line"] == 0


@needs_trace_cmd
@pytest.mark.parametrize("name", ["trappy_juno_raw_trace.dat", "lisa_juno_sched_load_trace.dat.gz"])
def test_trace_dat_through_trace_cmd(name, tmp_path):
    p = real(name)
    data = p.read_bytes()
    src = tmp_path / "t.dat"
    src.write_bytes(gzip.decompress(data) if name.endswith(".gz") else data)
    report = subprocess.run(["trace-cmd", "report", "-R", "-i", str(src)], capture_output=True, text=True).stdout
    tr = load_trace(p)
    assert tr.format == "trace.dat" and tr.nr_cpus == 6
    assert tr.counts()["switch"] == len(event_lines(report, "sched_switch")) > 0
    rep = build_replay(tr, ReplayOptions(include_kthreads=True))
    assert rep.busy_ns > 0


def test_trace_dat_without_trace_cmd(monkeypatch):
    p = real("trappy_juno_raw_trace.dat")
    monkeypatch.setattr("hetsched.traces.parse.shutil.which", lambda _name: None)
    with pytest.raises(InputError, match="trace-cmd"):
        load_trace(p)


@pytest.mark.parametrize("name", ["lisa_juno_r0_plat_info.yml", "SOURCES.md"])
def test_non_traces_rejected_with_a_reason(name):
    with pytest.raises(InputError) as ei:
        load_trace(real(name))
    msg = str(ei.value)
    assert name in msg and "sched_switch" in msg and "\n" not in msg


# --- bad input: read as far as valid ---------------------------------------------------------


def test_truncated_unknown_and_spaced_lines_are_counted(tmp_path):
    p = real("tracecompass_android_sched_ftrace.txt")
    lines = p.read_text().splitlines()
    body = [ln for ln in lines if not ln.startswith("#")]
    n_switch = sum(": sched_switch: " in ln for ln in body)
    bad = list(lines)
    # a switch line cut in its fields, one cut before the event name, an unknown event,
    # garbage, a comm with spaces, and a file that ends mid-line
    i = next(k for k, ln in enumerate(bad) if ": sched_switch: " in ln)
    bad[i] = bad[i][: bad[i].index("next_comm")]
    j = next(k for k, ln in enumerate(bad) if k > i and ": sched_switch: " in ln)
    # the added switch takes the time of the line it is put after (the file is in time
    # order, and a CPU's time going backwards would be refused: test_trace_kernel_checks)
    ts = re.search(r"\] \S+ (\d+\.\d+):", bad[j]).group(1)
    bad[j] = bad[j][:30]
    bad.insert(j + 1, "   some_thread-77   [001] d..3 365761.700000: my_custom_event: a=1 b=2")
    bad.insert(j + 2, "%%% not a trace line %%%")
    bad.insert(j + 3, f"   My Spaced Thread-78 [001] d..3 {ts}: sched_switch: prev_comm=My Spaced "
                      "Thread prev_pid=78 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 "
                      "next_prio=120")
    last = next(k for k in range(len(bad) - 1, 0, -1) if ": sched_switch: " in bad[k])
    bad[last] = bad[last][:-25]
    f = tmp_path / "bad.txt"
    f.write_text("\n".join(bad))
    tr = load_trace(f)
    assert tr.counts()["switch"] == n_switch - 3 + 1
    assert tr.skipped["malformed sched_switch"] == 2      # cut in its fields (twice)
    assert tr.skipped["malformed line"] == 2              # cut before the event, garbage
    assert tr.skipped["event my_custom_event"] == 1
    assert tr.nr_skipped == 5
    sp = [e for e in tr.events if isinstance(e, Switch) and e.prev_pid == 78]
    assert sp and sp[0].prev_comm == "My Spaced Thread"


def test_a_cpu_the_header_does_not_declare_is_refused(tmp_path, tools):
    # the header says 4 CPUs (#P:4); a line on CPU 5 (or an event naming cpu_id=7) is not a
    # trace of that machine: one line naming the file and the line, exit 2, nothing replayed
    p = real("tracecompass_android_sched_ftrace.txt")
    lines = p.read_text().splitlines()
    assert any("#P:4" in ln for ln in lines if ln.startswith("#"))
    i = next(k for k, ln in enumerate(lines) if ": sched_switch: " in ln)
    for bad_line, cpu in ((lines[i].replace("[001]", "[005]").replace("[000]", "[005]")
                           .replace("[002]", "[005]").replace("[003]", "[005]"), 5),
                          ("          <idle>-0     [000] d..2 365761.700000: cpu_idle: state=1 cpu_id=7", 7)):
        f = tmp_path / f"cpu{cpu}.txt"
        f.write_text("\n".join(lines[:i + 1] + [bad_line] + lines[i + 1:]) + "\n")
        with pytest.raises(InputError, match=rf"line {i + 2}: expected a CPU number below the 4 CPUs its header "
                                             rf"declares .*got 'CPU {cpu}'"):
            load_trace(f)
        out = tmp_path / f"out{cpu}"
        proc = tools.run_cli(["replay", str(f), "--out", str(out)])
        tools.assert_one_line_error(proc, f"line {i + 2}")
        assert not out.exists()


def test_parse_state_values():
    assert [parse_state(s) for s in ("R", "R+", "S", "D", "D|K", "t", "x", "I")] == \
        ["R", "R", "S", "D", "D", "T", "X", "I"]
    assert [parse_state(s) for s in ("0", "1", "2", "64", "130", "1024", "4096")] == \
        ["R", "S", "D", "X", "D", "R", "R"]


# --- replay building ----------------------------------------------------------------------


def _events(spec, name):
    t = next(t for t in spec["tasks"] if t["name"] == name)
    return t["phases"][0]["events"]


SYNTH = """\
# tracer: nop
#P:2
           a-10    [000] d..2   100.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=10 next_prio=120
           a-10    [000] d..2   100.000100: sched_waking: comm=b pid=11 prio=120 target_cpu=001
          <idle>-0 [001] d..2   100.000102: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=b next_pid=11 next_prio=120
           a-10    [000] d..2   100.000300: sched_switch: prev_comm=a prev_pid=10 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
           b-11    [001] d..2   100.000400: sched_switch: prev_comm=b prev_pid=11 prev_prio=120 prev_state=D ==> next_comm=c next_pid=12 next_prio=110
           c-12    [001] d..2   100.000500: sched_switch: prev_comm=c prev_pid=12 prev_prio=110 prev_state=R+ ==> next_comm=swapper/1 next_pid=0 next_prio=120
          <idle>-0 [001] d.h2   100.000600: sched_waking: comm=b pid=11 prio=120 target_cpu=001
          <idle>-0 [001] d..2   100.000610: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=c next_pid=12 next_prio=110
           c-12    [001] d..2   100.000700: sched_switch: prev_comm=c prev_pid=12 prev_prio=110 prev_state=x ==> next_comm=b next_pid=11 next_prio=120
          <idle>-0 [000] d..2   100.000800: sched_waking: comm=a pid=10 prio=120 target_cpu=000
          <idle>-0 [000] d..2   100.000810: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=10 next_prio=120
           a-10    [000] d..2   100.000900: sched_switch: prev_comm=a prev_pid=10 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
           b-11    [001] d..2   100.001000: sched_switch: prev_comm=b prev_pid=11 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
"""


def test_replay_of_a_small_trace_by_hand():
    tr = parse_text(SYNTH.splitlines(), "synth")
    rep = build_replay(tr)
    spec = rep.spec
    # a: runs 100 us, wakes b (post), runs 200 more, sleeps until 800 us (woken from idle), runs 90
    assert _events(spec, "a-10") == [{"run": 100_000}, {"sem_post": 0}, {"run": 200_000},
                                     {"sleep_until": 810_000 - 10_000}, {"run": 90_000}, {"mark": 0}]
    # b: starts by waiting for a, runs 298 us, blocks in D, woken from IRQ: iowait, runs 300
    assert _events(spec, "b-11") == [{"sem_wait": 0}, {"run": 298_000}, {"iowait": 200_000},
                                     {"run": 300_000}, {"mark": 0}]
    # c: prio 110 -> nice -10; preempted (R+) is not a sleep: one run of 100 + 90 us
    c = next(t for t in spec["tasks"] if t["name"] == "c-12")
    assert c["nice"] == -10 and c["delay_ns"] == 400_000
    assert _events(spec, "c-12") == [{"run": 190_000}, {"mark": 0}]
    assert spec["sems"] == [0] and spec["marks"] == ["end"]
    assert rep.busy_ns == 390_000 + 598_000 + 190_000
    assert rep.makespan_ns == 1_000_000


def test_replay_takes_the_switch_after_a_wakeup_off_the_burst():
    # switch_cost_ns=5000: each switch-in that follows a wakeup loses 5 us of run work (the
    # engine charges that switch itself); a first switch-in (a at 0, c at 400) and one after
    # a preemption (c at 610, R+) keep theirs
    rep = build_replay(parse_text(SYNTH.splitlines(), "synth"), ReplayOptions(switch_cost_ns=5000))
    spec = rep.spec
    assert _events(spec, "a-10") == [{"run": 100_000}, {"sem_post": 0}, {"run": 200_000},
                                     {"sleep_until": 800_000}, {"run": 90_000 - 5000}, {"mark": 0}]
    assert _events(spec, "b-11") == [{"sem_wait": 0}, {"run": 298_000 - 5000}, {"iowait": 200_000},
                                     {"run": 300_000 - 5000}, {"mark": 0}]
    assert _events(spec, "c-12") == [{"run": 190_000}, {"mark": 0}]
    assert rep.busy_ns == 390_000 + 598_000 + 190_000  # the trace's busy time is unchanged


def test_replay_takes_off_the_switch_the_engine_charges():
    # switch_cost_ns=None: the engine's own charge on the recording CPU; without a source
    # platform the trace's CPUs are the reference, so the engine's default (2000 ns of
    # invariant work, costs.rs) comes off each run after a wakeup: a's 90 us, b's 298 and 300 us
    rep = build_replay(parse_text(SYNTH.splitlines(), "synth"), ReplayOptions(switch_cost_ns=None))
    assert _events(rep.spec, "a-10")[-2:] == [{"run": 90_000 - 2000}, {"mark": 0}]
    assert _events(rep.spec, "b-11") == [{"sem_wait": 0}, {"run": 298_000 - 2000}, {"iowait": 200_000},
                                         {"run": 300_000 - 2000}, {"mark": 0}]
    assert "switch work not taken off (ns, runs shorter than the switch)" not in rep.stats


def test_a_run_shorter_than_the_switch_runs_nothing_and_the_rest_is_not_carried():
    # 100 us of switch against a's last run of 90 us: the run goes (a then ends with its
    # 200 us before the sleep), the 10 us it could not give back are counted, and b's runs
    # after it lose 100 us each, no more
    rep = build_replay(parse_text(SYNTH.splitlines(), "synth"), ReplayOptions(switch_cost_ns=100_000))
    assert _events(rep.spec, "a-10") == [{"run": 100_000}, {"sem_post": 0}, {"run": 200_000}, {"mark": 0}]
    assert _events(rep.spec, "b-11") == [{"sem_wait": 0}, {"run": 198_000}, {"iowait": 200_000},
                                         {"run": 200_000}, {"mark": 0}]
    assert rep.stats["switch work not taken off (ns, runs shorter than the switch)"] == 10_000


SHORT = """\
           a-10    [000] d..2   100.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=10 next_prio=120
           a-10    [000] d..2   100.000010: sched_waking: comm=b pid=11 prio=120 target_cpu=001
          <idle>-0 [001] d..2   100.000012: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=b next_pid=11 next_prio=120
           b-11    [001] d..2   100.000013: sched_switch: prev_comm=b prev_pid=11 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
           a-10    [000] d..2   100.000100: sched_switch: prev_comm=a prev_pid=10 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
"""
AGAIN = """\
          <idle>-0 [001] d..2   100.000200: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=b next_pid=11 next_prio=120
           b-11    [001] d..2   100.000210: sched_switch: prev_comm=b prev_pid=11 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
"""


def test_a_task_whose_runs_are_shorter_than_the_switch_is_kept():
    # b runs 1 us after a's wakeup: against 2000 ns of switch it runs 0, and is kept (the
    # engine still switches it in and charges the switch)
    rep = build_replay(parse_text(SHORT.splitlines(), "s"), ReplayOptions(switch_cost_ns=2000))
    assert _events(rep.spec, "b-11") == [{"sem_wait": 0}, {"run": 0}, {"mark": 0}]
    assert rep.stats["switch work not taken off (ns, runs shorter than the switch)"] == 1000


def test_what_a_run_could_not_give_back_does_not_come_off_a_later_one():
    # b's 1-us run leaves 1000 ns of its switch; its next run, 10 us after a switch-in
    # without a wakeup in the trace, keeps all of it
    rep = build_replay(parse_text((SHORT + AGAIN).splitlines(), "s"), ReplayOptions(switch_cost_ns=2000))
    ev = _events(rep.spec, "b-11")
    assert ev[0] == {"sem_wait": 0} and ev[-2:] == [{"run": 10_000}, {"mark": 0}]
    assert rep.stats["switch work not taken off (ns, runs shorter than the switch)"] == 1000


def test_replay_gives_back_the_switch_the_run_will_charge():
    from hetsched.traces.plan import switch_charged as _switch_charged

    # --set cost.context_switch_ns=N is what the run charges; unset, -1 (the platform's
    # figure) or a value the simulation will refuse: the engine's own (None)
    assert _switch_charged(["cost.context_switch_ns=0"]) == 0
    assert _switch_charged(["cost.context_switch_ns=1500.7", "x=1"]) == 1500
    assert _switch_charged([]) is None
    assert _switch_charged(["cost.context_switch_ns=-1"]) is None
    assert _switch_charged(["cost.context_switch_ns=nan"]) is None
    assert _switch_charged(["cost.context_switch_ns=lots"]) is None


def test_switch_work_follows_the_engines_charge_per_cluster():
    import dataclasses

    from hetsched.platforms import load_platform
    from hetsched.traces.replay import switch_work

    # juno-r0: little (CPUs 0, 3, 4, 5) capacity 446, big (1, 2) 1024; a measured 3000 ns
    # on little at its f_max is 3000 * 446 // 1024 = 1306 ns of invariant work, and big
    # without a figure takes the engine's default
    p = load_platform("juno-r0")
    little = dataclasses.replace(p.clusters[0], context_switch_ns=3000)
    p = dataclasses.replace(p, clusters=(little,) + tuple(p.clusters[1:]))
    assert switch_work(p) == [1306, 2000, 2000, 1306, 1306, 1306]
    assert switch_work(None) == [2000]


def test_work_conversion_with_capacity_and_frequency():
    # juno-r0: CPU 0 little (446, f_max 850 MHz), CPU 1 big (1024, 1100 MHz)
    text = """\
           x-5     [000] d..2   1.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=x next_pid=5 next_prio=120
    kworker-7      [000] ...1   1.000100: cpu_frequency: state=425000 cpu_id=0
           x-5     [000] d..2   1.000300: sched_switch: prev_comm=x prev_pid=5 prev_prio=120 prev_state=R ==> next_comm=swapper/0 next_pid=0 next_prio=120
          <idle>-0 [001] d..2   1.000300: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=x next_pid=5 next_prio=120
           x-5     [001] d..2   1.000400: sched_switch: prev_comm=x prev_pid=5 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
"""
    rep = build_replay(parse_text(text.splitlines()), ReplayOptions(source_platform=load_platform("juno-r0")))
    little = 446 / 1024
    expected = 100_000 * little + 200_000 * little * 0.5 + 100_000 * 1.0
    assert _events(rep.spec, "x-5")[0]["run"] == round(expected)
    assert rep.busy_ns == 400_000
    # without a source platform, work is the run time
    rep0 = build_replay(parse_text(text.splitlines()))
    assert _events(rep0.spec, "x-5")[0]["run"] == 400_000


@pytest.mark.parametrize("name", ["tracecompass_android_sched_ftrace.txt", "lisa_juno_r0_trace.txt"])
def test_replay_busy_time_matches_the_switch_lines(name):
    p = real(name)
    text = p.read_text()
    t0, t1 = first_last_ts(text)
    expected = busy_by_pid(event_lines(text, "sched_switch"), t0, t1)
    rep = build_replay(load_trace(p), ReplayOptions(include_kthreads=True))
    got = {r["pid"]: r["busy_ns"] for r in rep.tasks}
    for pid, ns in got.items():
        assert ns == expected[pid], pid
    # the dropped tasks are the ones that never ran
    assert all(expected[pid] == 0 for pid in set(expected) - set(got))
    # run work (no source platform) = run time, task by task
    for t in rep.spec["tasks"]:
        row = next(r for r in rep.tasks if r["name"] == t["name"])
        assert abs(sum(e.get("run", 0) for e in t["phases"][0]["events"]) - row["busy_ns"]) <= 1


def test_posts_and_waits_pair_up_and_kthreads_filter():
    tr = load_trace(real("trappy_android_surfaceflinger_systrace.html"))
    for inc in (False, True):
        rep = build_replay(tr, ReplayOptions(include_kthreads=inc))
        posts, waits = Counter(), Counter()
        for t in rep.spec["tasks"]:
            for e in t["phases"][0]["events"]:
                if "sem_post" in e:
                    posts[e["sem_post"]] += 1
                if "sem_wait" in e:
                    waits[e["sem_wait"]] += 1
        # a wait may be dropped at a task's end, never a post
        assert all(waits[s] <= posts[s] for s in waits) and sum(posts.values()) > 0
        names = [t["name"] for t in rep.spec["tasks"]]
        assert any(n.startswith("kworker/") for n in names) == inc


def test_replay_runs_in_the_engine_and_keeps_busy_time():
    from hetsched import Simulation

    tr = load_trace(real("tracecompass_android_sched_ftrace.txt"))
    rep = build_replay(tr, ReplayOptions(include_kthreads=True))
    # a 4-CPU reference platform (capacity 1024, one OPP): run time == work
    plat = Path(os.environ.get("TMPDIR", "/tmp")) / f"ref4-{os.getpid()}.json"
    raw = {"name": "ref4", "soc": "ref4", "clusters": [
        {"name": "c", "core": "ref", "cpus": [0, 1, 2, 3], "capacity_dmips_mhz": 1024,
         "opps": [{"khz": 1000000, "uv": 800000}], "dynamic_power_coefficient": 100,
         "idle_states": [{"name": "WFI", "level": "cpu", "entry_latency_us": 1, "exit_latency_us": 1,
                          "min_residency_us": 1}]}]}
    plat.write_text(json.dumps(raw))
    try:
        # the scheduler's costs off: every burst once, nothing added (the check is the replay's)
        sim = Simulation(platform=str(plat), workload=rep.spec, scheduler="cfs", governor="performance",
                         knobs=NO_COSTS)
        doc = sim.run().doc
    finally:
        plat.unlink()
    c = compare(rep, doc)
    assert c["measured_tasks_ended"]
    assert c["sim_busy_s"] == pytest.approx(c["trace_busy_s"], rel=1e-6)
    assert c["sim_makespan_s"] > 0


# --- host platform --------------------------------------------------------------------------


def _fake_sys(root: Path, caps: dict[int, int], policies: dict[tuple, list[int]] | None, idle=True):
    cpu = root / "sys/devices/system/cpu"
    cpu.mkdir(parents=True)
    n = len(caps)
    (cpu / "online").write_text(f"0-{n - 1}\n")
    for c, cap in caps.items():
        d = cpu / f"cpu{c}"
        d.mkdir()
        (d / "cpu_capacity").write_text(f"{cap}\n")
        if idle:
            for k, (name, lat, res) in enumerate([("WFI", 1, 1), ("cpu-sleep", 150, 700)]):
                s = d / f"cpuidle/state{k}"
                s.mkdir(parents=True)
                (s / "name").write_text(name)
                (s / "latency").write_text(str(lat))
                (s / "residency").write_text(str(res))
    for cpus, freqs in (policies or {}).items():
        for c in cpus:
            f = cpu / f"cpu{c}/cpufreq"
            f.mkdir()
            (f / "related_cpus").write_text(" ".join(map(str, cpus)))
            (f / "scaling_available_frequencies").write_text(" ".join(map(str, freqs)) + " \n")
            (f / "cpuinfo_min_freq").write_text(str(min(freqs)))
            (f / "cpuinfo_max_freq").write_text(str(max(freqs)))
    proc = root / "proc"
    proc.mkdir()
    (proc / "cpuinfo").write_text("".join(f"processor\t: {c}\ncpu MHz\t\t: 1996.800\n\n" for c in caps))
    return root / "sys", proc


def test_host_platform_from_a_big_little_sysfs(tmp_path):
    sys_root, proc = _fake_sys(tmp_path, {0: 446, 1: 446, 2: 1024, 3: 1024},
                               {(0, 1): [450000, 850000], (2, 3): [450000, 800000, 1100000]})
    p = load_host(sys_root, proc, machine="aarch64")
    assert p.power_model == "estimated" and p.nr_cpus == 4
    assert [(c.cpus, c.capacity_orig, [o.khz for o in c.opps]) for c in p.clusters] == [
        ((0, 1), 446, [450000, 850000]), ((2, 3), 1024, [450000, 800000, 1100000])]
    assert [s.exit_latency_ns for s in p.clusters[0].idle_states] == [1000, 150000]
    assert p.clusters[1].opps[-1].power_uw == 1_000_000
    assert any("ESTIMATED" in n for n in p.notes)


def test_host_platform_without_cpufreq(tmp_path):
    sys_root, proc = _fake_sys(tmp_path, {0: 1024, 1: 1024}, None, idle=False)
    p = load_host(sys_root, proc, machine="x86_64")
    assert [[o.khz for o in c.opps] for c in p.clusters] == [[1996800]]
    assert any("no cpufreq" in n for n in p.notes)
    assert p.clusters[0].idle_states[0].name == "WFI"


def test_host_platform_in_a_vm_takes_a_measured_wakeup_latency(tmp_path, monkeypatch):
    # no cpuidle in sysfs (a VM): the WFI-like state's exit latency is the measured cost of
    # waking a task on another, idle CPU; given here, so 5000 ns exactly
    sys_root, proc = _fake_sys(tmp_path, {0: 1024, 1: 1024}, None, idle=False)
    p = load_host(sys_root, proc, machine="x86_64", wakeup_latency_ns=5000)
    (wfi,) = p.clusters[0].idle_states
    assert (wfi.name, wfi.exit_latency_ns, wfi.target_residency_ns) == ("WFI", 5000, 5000)
    assert any("5000 ns, measured on this machine" in n for n in p.notes)
    # a redirected /sys measures nothing: 1 µs, as before
    assert load_host(sys_root, proc, machine="x86_64").clusters[0].idle_states[0].exit_latency_ns == 1000
    # on this machine the environment sets it, if its sysfs lists no idle state and it has 2 CPUs
    if not Path("/sys/devices/system/cpu/cpu0/cpuidle/state0").is_dir() and os.cpu_count() > 1:
        monkeypatch.setenv("HETSCHED_HOST_WAKEUP_LATENCY_NS", "4321")
        assert {c.idle_states[0].exit_latency_ns for c in load_host().clusters} == {4321}
        monkeypatch.setenv("HETSCHED_HOST_WAKEUP_LATENCY_NS", "soon")
        with pytest.raises(InputError, match="HETSCHED_HOST_WAKEUP_LATENCY_NS"):
            load_host()


def test_host_platform_of_this_machine():
    p = load_platform("host")
    assert p.nr_cpus == os.cpu_count()
    assert p.to_spec()["power_model"] == "estimated"


def test_host_context_switch_is_measured_once_and_kept(tmp_path, monkeypatch):
    # a redirected /sys measures nothing: the engine's default applies (no field)
    sys_root, proc = _fake_sys(tmp_path, {0: 1024, 1: 1024}, None, idle=False)
    assert "context_switch_ns" not in load_host(sys_root, proc).clusters[0].to_spec()
    # the environment sets it
    monkeypatch.setenv("HETSCHED_HOST_CONTEXT_SWITCH_NS", "1234")
    assert {c.context_switch_ns for c in load_host().clusters} == {1234}
    assert load_host().clusters[0].to_spec()["context_switch_ns"] == 1234
    monkeypatch.setenv("HETSCHED_HOST_CONTEXT_SWITCH_NS", "fast")
    with pytest.raises(InputError, match="HETSCHED_HOST_CONTEXT_SWITCH_NS"):
        load_host()
    # else measured once, cached, and the cached figure returned from then on
    monkeypatch.delenv("HETSCHED_HOST_CONTEXT_SWITCH_NS")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    first = load_host().clusters[0].context_switch_ns
    assert isinstance(first, int) and first >= 1
    cache = tmp_path / "cache" / "hetsched" / "host.json"
    (key, entry), = json.loads(cache.read_text()).items()
    assert entry["context_switch_ns"] == first
    cache.write_text(json.dumps({key: {"context_switch_ns": first + 7}}))
    assert load_host().clusters[0].context_switch_ns == first + 7


# --- CLI ------------------------------------------------------------------------------------


def test_cli_replay_writes_result_with_comparison(tools, tmp_path):
    p = real("tracecompass_android_sched_ftrace.txt")
    out = tmp_path / "out"
    proc = tools.run_cli(["replay", p, "--platform", "juno-r0", "--include-kthreads", "--out", out,
                          "--write-spec"])
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((out / "result.json").read_text())
    rp = doc["replay"]
    assert rp["trace"]["events"]["switch"] == len(event_lines(p.read_text(), "sched_switch"))
    assert rp["compare"]["trace_busy_s"] > 0 and rp["compare"]["measured_tasks_ended"]
    spec = json.loads((out / "workload.json").read_text())
    assert len(spec["tasks"]) == rp["replay"]["tasks"]
    assert "makespan" in proc.stdout


def test_cli_replay_bad_input(tools, tmp_path):
    out = tmp_path / "out"
    notrace = tmp_path / "notes.txt"
    notrace.write_text("hello\nworld\n")
    proc = tools.run_cli(["replay", notrace, "--out", out])
    tools.assert_one_line_error(proc, "notes.txt", "events", "sched_switch")
    tools.assert_no_outputs(out)
    proc = tools.run_cli(["replay", tmp_path / "missing.txt", "--out", out])
    tools.assert_one_line_error(proc, "missing.txt", "file")
    proc = tools.run_cli(["replay", real("tracecompass_android_sched_ftrace.txt"), "--tasks", "tree",
                          "--out", out])
    tools.assert_one_line_error(proc, "--tasks")
    tools.assert_no_outputs(out)


# --- recording on this machine -----------------------------------------------------------------


def _can_trace() -> str | None:
    if not sys.platform.startswith("linux"):
        return "not Linux"
    if os.geteuid() != 0:
        return "recording through tracefs needs root"
    if find_tracefs() is None and not Path("/sys/kernel/tracing").is_dir():
        return "no tracefs"
    return None


needs_tracefs = pytest.mark.skipif(_can_trace() is not None, reason=str(_can_trace()))


def _tracefs_state() -> dict:
    root = find_tracefs()
    if root is None:
        return {"mounted": False}
    state = {"mounted": True}
    for f in ("tracing_on", "current_tracer", "buffer_size_kb", "events/sched/sched_switch/enable",
              "events/sched/sched_waking/enable", "set_event_pid"):
        try:
            state[f] = (root / f).read_text()
        except OSError:
            pass
    state["instances"] = sorted(p.name for p in (root / "instances").glob("hetsched-*"))
    return state


@needs_tracefs
def test_record_and_replay_a_real_program(tools, tmp_path):
    before = _tracefs_state()
    out = tmp_path / "sh.trace"
    cmd = ["sh", "-c", "i=0; while [ $i -lt 3 ]; do echo $i | cat > /dev/null; sleep 0.01; i=$((i+1)); done"]
    proc = tools.run_cli(["record", "--out", out, "--", *cmd])
    assert proc.returncode == 0, proc.stderr
    assert _tracefs_state() == before
    text = out.read_text()
    header = json.loads(text.splitlines()[0].split(":", 1)[1])
    assert header["command"] == cmd and header["exit_status"] == 0
    # the tree: sh and its children (forks of the recorded root)
    forks = [ln for ln in event_lines(text, "sched_process_fork")]
    tr = load_trace(out)
    rep = build_replay(tr)
    assert rep.tasks and any(r["pid"] == header["root_pid"] for r in rep.tasks)
    assert len(rep.tasks) <= 1 + len(forks)
    # the scheduler's costs off and the bursts whole (--keep-switch): the trace's bursts
    # hold the switches already
    res = tools.run_cli(["replay", out, "--platform", "host", "--out", tmp_path / "o", "--keep-switch",
                         *(a for k in NO_COSTS for a in ("--set", f"{k}=0"))])
    assert res.returncode == 0, res.stderr
    doc = json.loads((tmp_path / "o" / "result.json").read_text())
    c = doc["replay"]["compare"]
    assert c["sim_busy_s"] == pytest.approx(c["trace_busy_s"], rel=1e-6)


@needs_tracefs
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_record_interrupted_restores_tracefs_and_writes_nothing(tools, tmp_path, sig):
    before = _tracefs_state()
    out = tmp_path / "x.trace"
    env = dict(os.environ)
    import hetsched
    env["PYTHONPATH"] = str(Path(hetsched.__file__).resolve().parents[1])
    proc = subprocess.Popen([sys.executable, "-m", "hetsched.cli", "record", "--out", str(out), "--",
                             "sleep", "30"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # wait until the command runs under tracing (a child process exists), then interrupt
    for _ in range(200):
        kids = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
        if kids:
            break
        time.sleep(0.05)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig, err
    assert not out.exists() and list(tmp_path.iterdir()) == []
    assert _tracefs_state() == before
