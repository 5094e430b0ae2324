"""A phone's figures (hetsched.traces.figures, `hetsched trace-stats`).

Hand-built traces whose figures are worked out by hand in the comments; the real traces
of ../shared/realdata/traces checked against counts taken from their text with regular
expressions and a per-switch-in reckoning of the wait (not the module's forward pass),
and against the figures SOURCES.md records; a simulated run's trace against the engine's
own accounting in result.json.
"""

from __future__ import annotations

import json
import re
import statistics
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from hetsched.errors import InputError
from hetsched.platforms import load_platform
from hetsched.traces import load_trace, parse_text
from hetsched.traces.figures import LATENCY_THREADS, phone_figures

REPO = Path(__file__).resolve().parents[1]
TRACES = REPO.parent / "shared" / "realdata" / "traces"
MS = 1_000_000


def real(name: str) -> Path:
    p = TRACES / name
    if not p.is_file():
        pytest.skip(f"{p} is not available")
    return p


def text_trace(text: str):
    return parse_text(text.strip("\n").splitlines(), "hand-built")


# --- hand-built traces ----------------------------------------------------------------------

# Two CPUs, 10 ms (1.000000 to 1.010000 s). A (pid 100) runs on CPU0 from before the trace;
# B (200) and C (300) are woken. Times below are ms from the start.
#   CPU0: A 0-3 | A preempted (R+) by C 3-6 | A 6-10      -> busy 10
#   CPU1: idle 0-1.5 | B 1.5-5 | idle 5-7.2 | B 7.2-8 | idle 8-10   -> busy 4.3
#   busy share (10 + 4.3) / (2 x 10) = 0.715
#   wakeups counted from sched_waking (B@1, C@2, B@7): 3 in 10 ms = 300/s
#   wait: B 1->1.5 (0.5) and 7->7.2 (0.2); C 2->3 (1.0); A preempted 3->6 (3.0): 4.7
#   run: A 7, B 4.3, C 3 = 14.3; wait/run 4.7/14.3
#   latency: B median(0.5, 0.2) = 0.35, C 1.0; median over both 0.675 ms
#   CPU1 cpuidle: state 1 at 0-1.2, 8-9, 9.5-10 (3 entries, 2.7 ms); state 0 at 5-7.05
#   (1 entry, 2.05 ms); exits at 1.2, 7.05, 9; the first two lead to a switch-in 0.3 and
#   0.15 ms later (p50 0.225 ms), the third goes back to idle
#   wakeup CPUs (sched_wakeup's target_cpu; sched_waking's is the last CPU): B@1 -> CPU1,
#   idle task in state 1; C@2 -> CPU0 running A; B@7 -> CPU1, idle task in state 0
HAND = """
# tracer: nop
#
# entries-in-buffer/entries-written: 21/21   #P:2
          <idle>-0     (-----) [001] d..2  1.000000: cpu_idle: state=1 cpu_id=1
               A-100   (  100) [000] d..4  1.001000: sched_waking: comm=B pid=200 prio=120 target_cpu=001
          <idle>-0     (-----) [001] d..2  1.001200: cpu_idle: state=4294967295 cpu_id=1
          <idle>-0     (-----) [001] dn.3  1.001300: sched_wakeup: comm=B pid=200 prio=120 target_cpu=001
          <idle>-0     (-----) [001] d..3  1.001500: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=B next_pid=200 next_prio=120
               A-100   (  100) [000] d..4  1.002000: sched_waking: comm=C pid=300 prio=120 target_cpu=000
               A-100   (  100) [000] d..4  1.002000: sched_wakeup: comm=C pid=300 prio=120 target_cpu=000
               A-100   (  100) [000] d..3  1.003000: sched_switch: prev_comm=A prev_pid=100 prev_prio=120 prev_state=R+ ==> next_comm=C next_pid=300 next_prio=120
               B-200   (  100) [001] d..3  1.005000: sched_switch: prev_comm=B prev_pid=200 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
          <idle>-0     (-----) [001] d..2  1.005000: cpu_idle: state=0 cpu_id=1
               C-300   (  100) [000] d..3  1.006000: sched_switch: prev_comm=C prev_pid=300 prev_prio=120 prev_state=S ==> next_comm=A next_pid=100 next_prio=120
               A-100   (  100) [000] d..4  1.007000: sched_waking: comm=B pid=200 prio=120 target_cpu=001
          <idle>-0     (-----) [001] d..2  1.007050: cpu_idle: state=4294967295 cpu_id=1
          <idle>-0     (-----) [001] dn.3  1.007100: sched_wakeup: comm=B pid=200 prio=120 target_cpu=001
          <idle>-0     (-----) [001] d..3  1.007200: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=B next_pid=200 next_prio=120
               B-200   (  100) [001] d..3  1.008000: sched_switch: prev_comm=B prev_pid=200 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
          <idle>-0     (-----) [001] d..2  1.008000: cpu_idle: state=1 cpu_id=1
          <idle>-0     (-----) [001] d..2  1.009000: cpu_idle: state=4294967295 cpu_id=1
          <idle>-0     (-----) [001] d..2  1.009500: cpu_idle: state=1 cpu_id=1
               A-100   (  100) [000] d..3  1.010000: sched_switch: prev_comm=A prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
"""


def test_hand_built_trace():
    f = phone_figures(text_trace(HAND))
    assert f.window_ns == 10 * MS and f.nr_cpus == 2
    assert f.threads_run == 3
    assert f.wakeup_event == "sched_waking" and f.wakeups == 3
    assert f.wakeups_per_s == pytest.approx(300)
    assert f.busy_ns_by_cpu == {0: 10 * MS, 1: 4_300_000}
    assert f.busy_share == pytest.approx(0.715)
    assert f.run_ns == 14_300_000 and f.wait_ns == 4_700_000
    assert f.wait_run == pytest.approx(4.7 / 14.3)
    assert f.wakeup_latency_ns == pytest.approx(675_000) and f.wakeup_latency_threads == 2
    idle = {(s.cpu, s.state): (s.entries, s.entries_per_s, s.residency_ns, s.residency_share) for s in f.idle}
    assert idle == {(1, 0): (1, pytest.approx(100), 2_050_000, pytest.approx(0.205)),
                    (1, 1): (3, pytest.approx(300), 2_700_000, pytest.approx(0.27))}
    assert f.idle_exits == 3 and f.idle_exits_to_switch == 2
    assert f.idle_exit_to_switch_ns == pytest.approx(225_000)
    assert f.wakeups_placed == 3
    assert f.wakeups_to_idle_cpu == pytest.approx(2 / 3)
    assert f.wakeups_by_idle_state == {"state 0": pytest.approx(1 / 3), "state 1": pytest.approx(1 / 3),
                                       "not idle": pytest.approx(1 / 3)}
    assert f.ui is None and f.render is None and f.surfaceflinger is None and f.app is None
    # wakeup -> switch-in by what the task's next CPU was doing at the wakeup: B@1 found
    # CPU1 in state 1 (out at 1.2, B in at 1.5), C@2 found CPU0 running A (in at 3), B@7
    # found CPU1 in state 0 (out at 7.05, B in at 7.2); no platform: one "all" cluster
    assert f.wakeup_latency_by_state == {
        ("all", "running a task"): {"wakeups": 1, "p50_ns": 1_000_000},
        ("all", "state 0"): {"wakeups": 1, "p50_ns": 200_000, "to_exit_p50_ns": 50_000,
                             "exit_to_switch_p50_ns": 150_000},
        ("all", "state 1"): {"wakeups": 1, "p50_ns": 500_000, "to_exit_p50_ns": 200_000,
                             "exit_to_switch_p50_ns": 300_000},
    }
    rows = {label: text for _, label, _, text in f.rows()}
    assert rows["wakeup -> switch-in p50, state 1"] == \
        "500.0 µs (1 wakeups; to exit 200.0 µs, exit to switch 300.0 µs)"


def test_platform_clusters_and_mismatch(tmp_path):
    # a two-CPU platform of one-CPU clusters: CPU0's share is 10/10, CPU1's 4.3/10
    plat = json.loads((REPO / "python" / "hetsched" / "platforms" / "data" / "gs101.json").read_text())
    plat["clusters"] = plat["clusters"][:2]
    plat["clusters"][0]["cpus"], plat["clusters"][1]["cpus"] = [0], [1]
    path = tmp_path / "two.json"
    path.write_text(json.dumps(plat))
    f = phone_figures(text_trace(HAND), str(path))
    names = [c["name"] for c in plat["clusters"]]
    assert f.busy_share_by_cluster == {names[0]: pytest.approx(1.0), names[1]: pytest.approx(0.43)}
    with pytest.raises(InputError, match="the 2 CPUs"):
        phone_figures(text_trace(HAND), "gs101")


# trace-cmd report text, integer prev_state, no wakeup events; ms from 5.000000 s:
#   0: X (10) switched in on CPU0, Y (20) on CPU1
#   2: CPU1 switches Y out (S) and X in, while X is still running on CPU0: X's switch-out
#      there was lost, so its run there ends now (2 ms) and CPU0's task is unknown
#   4: CPU0 switches out Z (30), never switched in: it ran since CPU0's task became
#      unknown, 2 -> 4
#   6: X out on CPU1 (ran 2 -> 6); 10: Y switched in on CPU0 with no wakeup: no wait
#   run X 2 + 4, Y 2, Z 2 = 10 ms; busy CPU0 4 (X 0-2, Z 2-4), CPU1 6; share 10/20
LOST = """
version = 6
cpus=2
          <idle>-0     [000]     5.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=0 next_comm=X next_pid=10 next_prio=120
          <idle>-0     [001]     5.000000: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=0 next_comm=Y next_pid=20 next_prio=120
               Y-20    [001]     5.002000: sched_switch: prev_comm=Y prev_pid=20 prev_prio=120 prev_state=1 next_comm=X next_pid=10 next_prio=120
               Z-30    [000]     5.004000: sched_switch: prev_comm=Z prev_pid=30 prev_prio=120 prev_state=1 next_comm=swapper/0 next_pid=0 next_prio=120
               X-10    [001]     5.006000: sched_switch: prev_comm=X prev_pid=10 prev_prio=120 prev_state=1 next_comm=swapper/1 next_pid=0 next_prio=120
          <idle>-0     [000]     5.010000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=0 next_comm=Y next_pid=20 next_prio=120
"""


def test_lost_events_and_no_wakeups():
    f = phone_figures(text_trace(LOST))
    assert f.threads_run == 3
    assert f.wakeup_event is None and f.wakeups == 0 and f.wakeups_per_s == 0
    assert f.busy_ns_by_cpu == {0: 4 * MS, 1: 6 * MS}
    assert f.busy_share == pytest.approx(0.5)
    # without wakeup events a wait could only start at a preemption: no wait figure
    assert f.run_ns == 10 * MS and f.wait_ns is None and f.wait_run is None
    assert f.wakeup_latency_ns is None and f.wakeup_latency_threads == 0
    assert not f.has_cpu_idle and f.idle == [] and f.wakeups_placed == 0 and f.wakeups_to_idle_cpu is None
    assert f.stats["switch-ins of a task running elsewhere (lost events)"] == 1
    assert f.stats["switch-ins inferred (lost events)"] == 1


# A switch-out without its switch-in, of a task woken after the CPU's last switch; ms from
# 7.000000 s:
#   0: CPU0 switches to P (50); 1: CPU1 switches from its idle task to Q (60)
#   3: P wakes W (70); 6: CPU1 switches W out, never switched in: it ran since the later of
#   CPU1's last switch (1) and its wakeup (3), 3 -> 6; Q, whose switch-out was lost, ran
#   1 -> 3; W waited 3 - 3 = 0 and its wakeup has no measured latency (the switch-in is
#   inferred); 10: P out (ran 0 -> 10)
#   run P 10, Q 2, W 3; busy CPU0 10, CPU1 5; W's CPU (where it ran) was running Q
LOST_WOKEN = """
# tracer: nop
#P:2
          <idle>-0     [000] d..3  7.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=P next_pid=50 next_prio=120
          <idle>-0     [001] d..3  7.001000: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=Q next_pid=60 next_prio=120
               P-50    [000] d..4  7.003000: sched_waking: comm=W pid=70 prio=120 target_cpu=001
               W-70    [001] d..3  7.006000: sched_switch: prev_comm=W prev_pid=70 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
               P-50    [000] d..3  7.010000: sched_switch: prev_comm=P prev_pid=50 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
"""


def test_switch_out_of_a_woken_task_never_switched_in():
    f = phone_figures(text_trace(LOST_WOKEN))
    assert f.busy_ns_by_cpu == {0: 10 * MS, 1: 5 * MS}
    assert f.run_ns == 15 * MS and f.wait_ns == 0 and f.threads_run == 3
    assert f.wakeups == 1 and f.wakeup_latency_ns is None
    assert f.wakeups_placed == 1 and f.wakeups_to_idle_cpu == 0
    assert f.stats["switch-ins inferred (lost events)"] == 1


def test_unsuccessful_wakeups_and_zero_window():
    # kernels before 4.x traced try_to_wake_up() on a running task too, with success=0
    text = """
# tracer: nop
#P:1
     k-5     [000] d..3     2.000000: sched_wakeup: comm=t pid=6 prio=120 success=0 target_cpu=000
     k-5     [000] d..3     2.000500: sched_wakeup: comm=t pid=6 prio=120 success=1 target_cpu=000
     k-5     [000] d..3     2.001000: sched_switch: prev_comm=k prev_pid=5 prev_prio=120 prev_state=S ==> next_comm=t next_pid=6 next_prio=120
"""
    f = phone_figures(text_trace(text))
    # one wakeup in 1 ms; t waited 0.5 ms and ran 0; k ran 2.000 -> 2.001
    assert f.wakeup_event == "sched_wakeup" and f.wakeups == 1 and f.wakeups_per_s == pytest.approx(1000)
    assert f.run_ns == MS and f.wait_ns == 500_000 and f.wakeup_latency_ns == 500_000
    one = text.strip("\n").splitlines()[:3]
    with pytest.raises(InputError, match="span some time"):
        phone_figures(parse_text(one, "one event"))


# The frame pipeline, two CPUs, ms from 3.000000 s; com.example.app (tgid 500, its
# RenderThread 510), the launcher s.nexuslauncher (tgid 400, RenderThread 410) and
# surfaceflinger (300):
#   UI 500: woken at 0, in at 0.5 (wait 0.5), out at 1.5 (run 1.0)          -> 0.5
#   RT 510: woken by UI at 1.0, in at 1.2 (wait 0.2), preempted at 3.0 (run 1.8), in
#           again at 6.0 (wait 3.0), out at 6.5 (run 0.5): 3.2 / 2.3
#   SF 300: woken by RT at 2.0, in at 2.4 (wait 0.4), out at 3.2 (run 0.8)   -> 0.5
#   two IRQs on CPU0 while surfaceflinger runs wake the RenderThread, already running: no
#   wait, and not the UI thread's doing (in hard-IRQ context, the h of the flags)
#   launcher RT 410 ran 3.0-6.0 and 8.2-9.0 (3.8 ms, more than 510's 2.3): the app is
#   still com.example.app, the launcher being left out while another app's RenderThread ran
FRAME = """
# tracer: nop
#P:2
          <idle>-0     (-----) [000] d.h3  3.000000: sched_waking: comm=com.example.app pid=500 prio=110 target_cpu=000
          <idle>-0     (-----) [000] d..3  3.000500: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=com.example.app next_pid=500 next_prio=110
 com.example.app-500   (  500) [000] d..4  3.001000: sched_waking: comm=RenderThread pid=510 prio=110 target_cpu=001
          <idle>-0     (-----) [001] d..3  3.001200: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=RenderThread next_pid=510 next_prio=110
 com.example.app-500   (  500) [000] d..3  3.001500: sched_switch: prev_comm=com.example.app prev_pid=500 prev_prio=110 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
    RenderThread-510   (  500) [001] d..4  3.002000: sched_waking: comm=surfaceflinger pid=300 prio=98 target_cpu=000
          <idle>-0     (-----) [000] d..3  3.002400: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=surfaceflinger next_pid=300 next_prio=98
  surfaceflinger-300   (  300) [000] d.h4  3.002500: sched_waking: comm=RenderThread pid=510 prio=110 target_cpu=001
  surfaceflinger-300   (  300) [000] d.h4  3.002800: sched_waking: comm=RenderThread pid=510 prio=110 target_cpu=001
    RenderThread-510   (  500) [001] d..3  3.003000: sched_switch: prev_comm=RenderThread prev_pid=510 prev_prio=110 prev_state=R+ ==> next_comm=RenderThread next_pid=410 next_prio=110
  surfaceflinger-300   (  300) [000] d..3  3.003200: sched_switch: prev_comm=surfaceflinger prev_pid=300 prev_prio=98 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
    RenderThread-410   (  400) [001] d..3  3.006000: sched_switch: prev_comm=RenderThread prev_pid=410 prev_prio=110 prev_state=S ==> next_comm=RenderThread next_pid=510 next_prio=110
    RenderThread-510   (  500) [001] d..3  3.006500: sched_switch: prev_comm=RenderThread prev_pid=510 prev_prio=110 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
          <idle>-0     (-----) [000] d.h3  3.007000: sched_waking: comm=s.nexuslauncher pid=400 prio=110 target_cpu=000
          <idle>-0     (-----) [000] d..3  3.007100: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=s.nexuslauncher next_pid=400 next_prio=110
 s.nexuslauncher-400   (  400) [000] d..4  3.008000: sched_waking: comm=RenderThread pid=410 prio=110 target_cpu=001
 s.nexuslauncher-400   (  400) [000] d..3  3.008000: sched_switch: prev_comm=s.nexuslauncher prev_pid=400 prev_prio=110 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
          <idle>-0     (-----) [001] d..3  3.008200: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=RenderThread next_pid=410 next_prio=110
    RenderThread-410   (  400) [001] d..3  3.009000: sched_switch: prev_comm=RenderThread prev_pid=410 prev_prio=110 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
"""


def _frame_checks(f, found_by):
    assert f.app == "com.example.app" and f.ui_found_by == found_by
    assert (f.ui.pid, f.render.pid, f.surfaceflinger.pid) == (500, 510, 300)
    assert (f.ui.run_ns, f.ui.wait_ns) == (MS, 500_000)
    assert (f.render.run_ns, f.render.wait_ns) == (2_300_000, 3_200_000)
    assert f.render.wait_run == pytest.approx(3.2 / 2.3)
    assert (f.surfaceflinger.run_ns, f.surfaceflinger.wait_ns) == (800_000, 400_000)


def test_frame_threads_by_tgid():
    tr = text_trace(FRAME)
    assert tr.tgids[510] == 500 and tr.tgids[410] == 400
    _frame_checks(phone_figures(tr), "tgid")


def test_frame_threads_without_tgids():
    # the same trace without its tgid column: the UI thread is the RenderThread's most
    # frequent waker from task context (500 for 510, 400 for 410), and its name stands for
    # the process's
    tr = text_trace(re.sub(r"\((?:-----| +\d+)\) ", "", FRAME))
    assert tr.tgids == {}
    _frame_checks(phone_figures(tr), "waker")


def test_launcher_alone_is_the_app():
    # without com.example.app's RenderThread, the launcher's is the only one: it is the app
    lines = [ln for ln in FRAME.splitlines() if "pid=510" not in ln and "-510 " not in ln]
    f = phone_figures(text_trace("\n".join(lines)))
    assert f.app == "s.nexuslauncher" and (f.ui.pid, f.render.pid) == (400, 410)


# --- real traces: counted from their text -----------------------------------------------------

USED = ("sched_switch", "sched_waking", "sched_wakeup", "sched_wakeup_new", "sched_process_fork",
        "sched_process_exit", "sched_process_exec", "cpu_frequency", "cpu_idle")
_EV = re.compile(r"^\s*(?P<comm>.+?)-(?P<pid>\d+)\s+(?:\([^)]*\)\s+)?\[(?P<cpu>\d+)\].*?\s(?P<s>\d+)\.(?P<f>\d+): "
                 r"(?P<event>[\w.-]+): (?P<body>.*)$")


def text_events(text: str) -> list[dict]:
    """Every line of a used event as a dict: ts (ns), cpu, line_pid (the task current on
    that CPU), event, and the event's key=value fields (sched_switch's arrow dropped)."""
    out = []
    for ln in text.splitlines():
        m = _EV.match(ln)
        if m is None or m["event"] not in USED:
            continue
        ev = {"ts": int(m["s"]) * 10**9 + int((m["f"] + "000000000")[:9]), "cpu": int(m["cpu"]),
              "line_pid": int(m["pid"]), "event": m["event"]}
        ev.update(re.findall(r"(\w+)=(.*?)(?= \w+=| ==> |$)", m["body"].strip()))
        out.append(ev)
    out.sort(key=lambda e: e["ts"])   # stable: file order within an instant
    return out


def counted_wakeups(evs: list[dict]) -> list[dict]:
    kind = "sched_waking" if any(e["event"] == "sched_waking" for e in evs) else "sched_wakeup"
    return [e for e in evs if e["event"] in (kind, "sched_wakeup_new") and e.get("success", "1") != "0"]


def runnable(state: str) -> bool:
    return state.startswith("R") or (state.isdigit() and (int(state) == 0 or int(state) >= 1024))


def run_by_pid(evs: list[dict], t0: int, t1: int) -> dict[int, int]:
    """Run time from the switch lines alone: each switch closes its CPU's stretch since the
    CPU's last switch (the window's start before the first) for its prev_pid; after the
    last, next_pid runs to the end."""
    last: dict[int, tuple[int, int]] = {}
    run: dict[int, int] = defaultdict(int)
    for e in evs:
        if e["event"] == "sched_switch":
            run[int(e["prev_pid"])] += e["ts"] - last.get(e["cpu"], (0, t0))[1]
            last[e["cpu"]] = (int(e["next_pid"]), e["ts"])
    for pid, since in last.values():
        run[pid] += t1 - since
    run.pop(0, None)
    return run


def wait_by_pid(evs: list[dict], t1: int) -> dict[int, int]:
    """Each thread's run-queue wait, reckoned at each switch-in: since its counted wakeup
    or its preemption, whichever came since it last ran (a thread still waiting at the
    end, to the end)."""
    counted = {id(e) for e in counted_wakeups(evs)}
    ready: dict[int, int] = {}
    on_cpu: set[int] = set()
    wait: dict[int, int] = defaultdict(int)
    for e in evs:
        if e["event"] == "sched_switch":
            prev, nxt = int(e["prev_pid"]), int(e["next_pid"])
            on_cpu.discard(prev)
            ready.pop(prev, None)
            if prev and runnable(e["prev_state"]):
                ready[prev] = e["ts"]
            if nxt in ready:
                wait[nxt] += e["ts"] - ready.pop(nxt)
            if nxt:
                on_cpu.add(nxt)
        elif id(e) in counted:
            pid = int(e["pid"])
            if pid not in on_cpu and pid not in ready:
                ready[pid] = e["ts"]
    for pid, since in ready.items():
        wait[pid] += t1 - since
    return wait


def read_text(name: str) -> str:
    text = real(name).read_text()
    if name.endswith(".html"):
        text = text[text.index("<!-- BEGIN TRACE -->"):text.index("<!-- END TRACE -->")]
    return text


TEXT_TRACES = ["tracecompass_android_sched_ftrace.txt", "trappy_android_surfaceflinger_systrace.html",
               "lisa_juno_r0_trace.txt"]


@pytest.mark.parametrize("name", TEXT_TRACES)
def test_real_text_traces(name):
    evs = text_events(read_text(name))
    t0, t1 = evs[0]["ts"], evs[-1]["ts"]
    f = phone_figures(load_trace(real(name)))
    assert f.window_ns == t1 - t0
    switches = [e for e in evs if e["event"] == "sched_switch"]
    ran = {int(e[k]) for e in switches for k in ("prev_pid", "next_pid")}
    ran |= {e["line_pid"] for e in evs if e["event"].startswith("sched_wak")}
    assert f.threads_run == len(ran - {0})
    wakeups = counted_wakeups(evs)
    assert f.wakeups == len(wakeups) > 0
    assert f.wakeups_per_s == pytest.approx(len(wakeups) / ((t1 - t0) / 1e9))
    run = run_by_pid(evs, t0, t1)
    assert f.run_ns == sum(run.values()) == sum(f.busy_ns_by_cpu.values())
    assert f.busy_share == pytest.approx(sum(run.values()) / (f.nr_cpus * (t1 - t0)))
    wait = wait_by_pid(evs, t1)
    assert f.wait_ns == sum(wait.values())
    # none of these has lost events: only the tasks running when it starts are inferred
    assert set(f.stats) <= {"running at the trace's start", "wakeups of a task running or runnable",
                            "wakeups with a known CPU"}
    # latency: per thread, switch-in minus the wakeup that made it runnable
    lat: dict[int, list] = defaultdict(list)
    woken: dict[int, int] = {}
    counted = {id(e) for e in wakeups}
    on_cpu: set[int] = set()
    for e in evs:
        if e["event"] == "sched_switch":
            on_cpu.discard(int(e["prev_pid"]))
            woken.pop(int(e["prev_pid"]), None)
            nxt = int(e["next_pid"])
            if nxt in woken:
                lat[nxt].append(e["ts"] - woken.pop(nxt))
            on_cpu.add(nxt)
        elif id(e) in counted and int(e["pid"]) not in on_cpu:
            woken.setdefault(int(e["pid"]), e["ts"])
    top = sorted(lat, key=lambda p: (-run.get(p, 0), p))[:LATENCY_THREADS]
    assert f.wakeup_latency_threads == len(top)
    assert f.wakeup_latency_ns == pytest.approx(statistics.median(statistics.median(lat[p]) for p in top))


def test_real_systrace_idle_and_frame_threads():
    name = "trappy_android_surfaceflinger_systrace.html"
    text = read_text(name)
    evs = text_events(text)
    t0, t1 = evs[0]["ts"], evs[-1]["ts"]
    f = phone_figures(load_trace(real(name)))
    # cpuidle: entries counted per CPU and state; residency from each line to the CPU's next
    idle = [e for e in evs if e["event"] == "cpu_idle"]
    entries = Counter((int(e["cpu_id"]), int(e["state"])) for e in idle if e["state"] != "4294967295")
    assert {(s.cpu, s.state): s.entries for s in f.idle} == dict(entries)
    spent: Counter = Counter()
    by_cpu = defaultdict(list)
    for e in idle:
        by_cpu[int(e["cpu_id"])].append(e)
    for cpu, es in by_cpu.items():
        for a, b in zip(es, es[1:] + [None]):
            if a["state"] != "4294967295":
                spent[cpu, int(a["state"])] += (b["ts"] if b else t1) - a["ts"]
    assert {(s.cpu, s.state): s.residency_ns for s in f.idle} == dict(spent)
    assert f.idle_exits == sum(1 for e in idle if e["state"] == "4294967295")
    # an exit followed, on its CPU, by a switch to a task before the next idle entry
    after_exit = []
    for i, e in enumerate(evs):
        if e["event"] == "cpu_idle" and e["state"] == "4294967295":
            cpu = int(e["cpu_id"])
            nxt = next((x for x in evs[i + 1:] if (x["event"] == "cpu_idle" and int(x["cpu_id"]) == cpu) or
                        (x["event"] == "sched_switch" and x["cpu"] == cpu and x["next_pid"] != "0")), None)
            if nxt is not None and nxt["event"] == "sched_switch":
                after_exit.append(nxt["ts"] - e["ts"])
    assert f.idle_exits_to_switch == len(after_exit) > 0
    assert f.idle_exit_to_switch_ns == pytest.approx(statistics.median(after_exit))
    # the frame threads, from the tgid column: the RenderThread (the only one that ran,
    # YouTube's) and its process's main thread; surfaceflinger's main thread
    rt = {int(m[1]): int(m[2]) for m in re.finditer(r"RenderThread-(\d+) +\( *(\d+)\)", text)}
    assert len(rt) == 1
    (rt_pid, tgid), = rt.items()
    sf = {int(p) for p in re.findall(r"surfaceflinger-(\d+) +\( *\1\)", text)}
    assert (f.render.pid, f.ui.pid, {f.surfaceflinger.pid}) == (rt_pid, tgid, sf)
    assert f"next_comm={f.app} next_pid={tgid} " in text
    run, wait = run_by_pid(evs, t0, t1), wait_by_pid(evs, t1)
    for ft in (f.ui, f.render, f.surfaceflinger):
        assert (ft.run_ns, ft.wait_ns) == (run[ft.pid], wait[ft.pid])


# --- real traces: the figures SOURCES.md records ------------------------------------------------

def test_pixel6a_warm_launch():
    """Perfetto protobuf: SOURCES.md's figures (3,572 wakeups/s, 15 % busy, wait/run 0.75
    over all threads, UI thread 0.22, RenderThread 0.27, surfaceflinger 0.09, 368 threads)."""
    tr = load_trace(real("pixel6a_tensor_warm_startup.perfetto-trace"))
    f = phone_figures(tr, "gs101")
    assert f.threads_run == 368
    assert f.wakeups == sum(1 for e in tr.events if type(e).__name__ == "Wakeup" and e.kind == "waking")
    assert f.wakeups_per_s == pytest.approx(3572, rel=1e-3)
    assert round(100 * f.busy_share) == 15
    assert round(f.wait_run, 2) == 0.75
    assert (round(f.ui.wait_run, 2), round(f.render.wait_run, 2), round(f.surfaceflinger.wait_run, 2)) == \
        (0.22, 0.27, 0.09)
    assert f.ui_found_by == "tgid" and f.render.name == "RenderThread" and f.surfaceflinger.name == "surfaceflinger"
    assert tr.tgids[f.render.pid] == f.ui.pid and "launcher" not in f.app and "systemui" not in f.app
    # the clusters' busy time adds up to the whole
    assert sum(f.busy_share_by_cluster[c] * n for c, n in (("little", 4), ("mid", 2), ("big", 2))) == \
        pytest.approx(8 * f.busy_share)


def test_catapult_launcher():
    """The older systrace HTML: 63 threads, 1,365 wakeups/s, 20 % busy, wait/run 0.48."""
    try:
        tr = load_trace(real("catapult_2cpu_launcher_2012.html"))
    except InputError as e:
        pytest.skip(f"this reader does not read it yet ({e})")
    f = phone_figures(tr)
    assert f.threads_run == 63
    assert round(f.wakeups_per_s) == 1365
    assert round(100 * f.busy_share) == 20
    assert round(f.wait_run, 2) == 0.48


# --- a simulated run's own trace ------------------------------------------------------------------

@pytest.fixture(scope="module")
def sim_run(tmp_path_factory, tools):
    out = tmp_path_factory.mktemp("browsing")
    r = tools.run_cli(["run", "--workload", "browsing", "--platform", "gs101", "--duration", "1", "--trace",
                 "--trace-format", "ftrace", "--no-lower-bound", "--out", out])
    assert r.returncode == 0, r.stderr
    return out


def test_simulated_trace_against_the_run(sim_run):
    """The engine's own accounting (result.json) against the figures of its ftrace output."""
    doc = json.loads((sim_run / "result.json").read_text())
    text = (sim_run / "trace.txt").read_text()
    f = phone_figures(load_trace(sim_run / "trace.txt"), "gs101")
    # task i of result.json is pid 1000 + i - 1 in the trace; run times to the nanosecond,
    # but for the tasks still running when the run ends: the window ends at the trace's
    # last event, which comes before
    threads = {t["pid"] + 999: t for t in doc["tasks"]}
    evs = text_events(text)
    tail = round(doc["sim_duration_s"] * 1e9) - (evs[-1]["ts"] - evs[0]["ts"])
    run = run_by_pid(evs, evs[0]["ts"], evs[-1]["ts"])
    assert run == {pid: round(t["runtime_s"] * 1e9) - (tail if t["state"] == "running" else 0)
                   for pid, t in threads.items() if t["runtime_s"]}
    assert f.run_ns == sum(run.values())
    assert f.wakeups == doc["counters"]["wakeups"]
    # the frame pipeline: the browser's main thread hands each frame to its RenderThread
    assert (threads[f.ui.pid]["name"], threads[f.render.pid]["name"], threads[f.surfaceflinger.pid]["name"]) == \
        ("CrBrowserMain", "web-RenderThread", "web-surfaceflinger")
    # idle residency: the engine's per CPU and state, less what follows the trace's last
    # event (the run lasts 1 s) for the state a CPU's last cpu_idle line left it in
    tail = doc["sim_duration_s"] * 1e9 - (evs[-1]["ts"] - evs[0]["ts"])
    last, last_ts = {}, {}
    for e in evs:
        if e["event"] == "cpu_idle":
            last[int(e["cpu_id"])] = int(e["state"])
            last_ts[int(e["cpu_id"])] = e["ts"]
    # The engine counts a state's wake latency (gs101's are measured: measured_wakeup_ns)
    # as busy (the CPU draws power from its start); the trace leaves the state when the
    # latency is over. So the trace's residency is the engine's plus one wake latency per
    # exit a wakeup paid for, at most one per entry (an exit back into idle, or with
    # nothing to run, pays none). A CPU still in the state at the end may be part way
    # through an exit: a timer that fired there less than one latency before the end
    # wakes its task only once out, so the trace has no event of it yet, while the
    # engine counts the CPU busy from the expiry: the part done is the remainder
    states = {cpu: cl.idle_states for cl in load_platform("gs101").clusters for cpu in cl.cpus}
    got = {(s.cpu, s.state): (s.residency_ns, s.entries) for s in f.idle}
    paid = 0
    for c in doc["cpus"]:
        for st, sec in c["idle_residency_s"].items():
            k = [s.name for s in states[c["cpu"]]].index(st)
            expect = sec * 1e9 - (tail if last.get(c["cpu"]) == k else 0)
            residency, entries = got.get((c["cpu"], k), (0, 0))
            lat = states[c["cpu"]][k].measured_wakeup_ns
            exits = round((residency - expect) / lat)
            in_exit = residency - expect - exits * lat
            if last.get(c["cpu"]) == k and abs(in_exit) > 2:
                exits = int((residency - expect) // lat)
                in_exit = residency - expect - exits * lat
                # begun after the CPU entered the state, less than one latency ago
                since_entry = doc["sim_duration_s"] * 1e9 - (last_ts[c["cpu"]] - evs[0]["ts"])
                assert 0 < in_exit < min(lat, since_entry), (c["cpu"], st)
                in_exit = 0
            assert 0 <= exits <= entries, (c["cpu"], st, residency, expect)
            assert in_exit == pytest.approx(0, abs=2), (c["cpu"], st)
            paid += exits
    assert paid > 0
    # so a task woken onto a CPU in a state runs once that state's measured latency is over,
    # the exit written then (the IPI, the exit and the idle loop's way out are one span)
    by_name = {cl.name: cl.idle_states for cl in load_platform("gs101").clusters}
    seen = 0
    for (cl, what), v in f.wakeup_latency_by_state.items():
        if what.startswith("state ") and v["wakeups"] >= 10:
            st = by_name[cl][int(what.split()[1])]
            assert (v["p50_ns"], v["to_exit_p50_ns"], v["exit_to_switch_p50_ns"]) == \
                (st.measured_wakeup_ns, st.measured_wakeup_ns, 0), (cl, what)
            seen += 1
    assert seen >= 4


# --- the command ------------------------------------------------------------------------------------

def test_trace_stats_command(tmp_path, sim_run, tools):
    run_cli = tools.run_cli
    hand, lost = tmp_path / "hand.txt", tmp_path / "lost.txt"
    hand.write_text(HAND.lstrip("\n"))
    lost.write_text(LOST.lstrip("\n"))
    r = run_cli(["trace-stats", hand, lost])
    assert r.returncode == 0, r.stderr
    rows = {ln.split("│")[1].strip(): [c.strip() for c in ln.split("│")[2:-1]] for ln in r.stdout.splitlines()
            if ln.count("│") == 4}
    assert rows["threads that run"] == ["3", "3"]
    assert rows["wakeups per s"] == ["300 (sched_waking)", "- (no wakeup events)"]
    assert rows["busy share, all CPUs"] == ["71.5 %", "50.0 %"]
    assert rows["wait / run, all threads"] == ["0.329", "-"]
    assert rows["wakeup latency p50 (µs)"] == ["675.0 µs (2 threads)", "-"]
    assert rows["cpu1 state 1 residency"] == ["27.0 %", "-"]
    assert str(hand) in r.stdout and str(lost) in r.stdout

    r = run_cli(["trace-stats", hand, lost, "--format", "csv"])
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == f"figure,{hand},{lost}"
    assert "threads that run,3,3" in lines and "wakeup latency p50 (µs),675.0," in lines

    r = run_cli(["trace-stats", hand, sim_run / "trace.txt", "--format", "json"])
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert [d["source"] for d in doc] == [str(hand), str(sim_run / "trace.txt")]
    assert doc[0]["wakeups"] == 3 and doc[0]["wait_ns"] == 4_700_000 and doc[0]["busy_ns_by_cpu"] == \
        {"0": 10 * MS, "1": 4_300_000}
    assert doc[1]["render"]["name"] == "web-RenderThrea"
    assert r.stdout == run_cli(["trace-stats", hand, sim_run / "trace.txt", "--format", "json"]).stdout

    r = run_cli(["trace-stats", sim_run / "trace.txt", "--platform", "gs101"])
    assert r.returncode == 0, r.stderr
    assert "busy share, big" in r.stdout and "cpu6 state 1 (c2) residency" in r.stdout


@pytest.mark.parametrize("args, says", [
    (["--platform", "gs101"], "--platform: platform: expected a platform with the 2 CPUs of"),
    (["--format", "xml"], "--format: format: expected one of: csv, json, table"),
])
def test_trace_stats_bad_input(tmp_path, tools, args, says):
    hand = tmp_path / "hand.txt"
    hand.write_text(HAND.lstrip("\n"))
    tools.assert_one_line_error(tools.run_cli(["trace-stats", hand, *args]), says)


def test_frequency_residency_per_cluster_by_hand():
    """gs101's clusters are cpufreq policies: little 0-3 (lowest OPP 300 MHz), mid 4-5
    (400 MHz), big 6-7. Over 0-4 ms: cpu0 at 300 MHz for 1 ms then 1,803 MHz for 3 ms, so
    the little cluster's mean is (1 x 300 + 3 x 1803) / 4 = 1,427.25 MHz and a quarter of
    the time at f_min; cpu4's first event is at 2 ms (400 MHz to the end): mean 400 MHz,
    all of it at f_min; cpu6 has none: no figure for big."""
    text = """
cpus=8
          <idle>-0     [000] 1.000000: cpu_frequency: state=300000 cpu_id=0
          <idle>-0     [000] 1.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=10 next_prio=120
               a-10    [000] 1.001000: cpu_frequency: state=1803000 cpu_id=0
          <idle>-0     [004] 1.002000: cpu_frequency: state=400000 cpu_id=4
               a-10    [000] 1.004000: sched_switch: prev_comm=a prev_pid=10 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
"""
    fig = phone_figures(text_trace(text), load_platform("gs101"))
    assert set(fig.freq_by_cluster) == {"little", "mid"}
    assert fig.freq_by_cluster["little"]["mean_khz"] == pytest.approx(1_427_250)
    assert fig.freq_by_cluster["little"]["at_fmin_share"] == pytest.approx(0.25)
    assert fig.freq_by_cluster["mid"] == {"mean_khz": pytest.approx(400_000), "at_fmin_share": pytest.approx(1.0)}
    rows = {label: value for _, label, value, _ in fig.rows()}
    assert rows["mean frequency, little (MHz)"] == pytest.approx(1427.25)
