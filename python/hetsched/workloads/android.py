"""``android-system``: the threads a real Android phone runs beside the app in front,
rebuilt from a real phone's trace.

A phone's frames wait behind a few hundred other threads: system_server's binder threads
and handlers, SurfaceFlinger and the composer HAL, the sensor HALs, Google Play services,
System UI, the launcher, statsd, logd, kernel workers and RCU. No parametric model of
them exists with sources for every figure, so this workload replays them: the threads of
a real trace, each with its own priority, its run bursts (as invariant work, converted
with the recording SoC's capacities and the trace's frequencies) and who woke whom (a
semaphore per waker and wakee, so a binder call still waits for its reply), repeated
window after window (:class:`hetsched.traces.replay.ReplayOptions` ``loop``). The
timing within a window is the trace's; the scheduler under test decides everything else
(placement, frequency, the waits behind other threads).

What is left out of the recording, and why (``EXCLUDED_*`` below): the harness that made
it (Perfetto's traced and traced_probes, adbd, the instrumentation and its shell
commands), which a phone in a user's hand does not run; the app the trace launched, which
the workload it runs beside models; and the kernel threads the engine models itself
(schedutil's sugov kthread, the stopper's migration threads).

The seed redraws the timer slack of each sleep of a SCHED_OTHER thread (see
``_android_system``). Sources: docs/workloads-mobile.md "The system beside the app".
"""

from __future__ import annotations

import gzip
import json
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np

from hetsched.workloads.base import Param, WorkloadDef

__all__ = ["WORKLOADS", "BACKGROUNDS", "EXCLUDED_PROCESSES", "EXCLUDED_COMMS", "EXCLUDED_KTHREAD_PREFIXES",
           "background_pids", "derive_background"]

#: Recorded backgrounds: name -> (data file, the trace it was derived from, what it shows)
BACKGROUNDS = {
    "pixel6a-launch": (
        "android-pixel6a-launch.json.gz",
        "pixel6a_tensor_warm_startup.perfetto-trace (Perfetto's test data api32_startup_warm, Apache-2.0)",
        "Pixel 6a (gs101), Android 13, kernel 5.10.107: the system during a warm app launch, 1.92 s",
    ),
}

#: processes of the recording harness: Perfetto's tracing service and probes, adb, the
#: Jetpack Macrobenchmark instrumentation and the shell commands it runs (am, cmd,
#: dumpsys, pgrep, kill, cat, cp, rm through sh), and a host's logcat over adb
EXCLUDED_PROCESSES = ("traced_probes", "traced", "perfetto", "adbd", "logcat", "app_process", "sh", "cmd",
                      "am", "pgrep", "kill", "cat", "cp", "rm", "dumpsys")
#: the same commands by thread name, for processes that exited before the trace's process
#: snapshot (their tgid is unknown)
EXCLUDED_COMMS = ("sh", "cmd", "am", "pgrep", "kill", "cat", "cp", "rm", "dumpsys", "logcat", "UsbFfs-worker")
#: processes whose name starts so: the app under test and its instrumentation
EXCLUDED_PROCESS_PREFIXES = ("androidx.benchmark.",)
#: kernel threads the engine models itself: schedutil's kthread (the engine applies a
#: frequency change without a task) and the CPU stopper's
EXCLUDED_KTHREAD_PREFIXES = ("sugov:", "migration/")


def background_pids(trace) -> tuple[set, dict]:
    """The pids of ``trace`` that form the background, and what was left out (reason ->
    number of threads)."""
    from hetsched.traces.parse import Switch, Wakeup

    seen: dict[int, str] = {}
    for e in trace.events:
        if isinstance(e, Switch):
            for pid, comm in ((e.prev_pid, e.prev_comm), (e.next_pid, e.next_comm)):
                if pid > 0:
                    seen.setdefault(pid, comm)
        elif isinstance(e, Wakeup) and e.pid > 0:
            seen.setdefault(e.pid, e.comm)
    keep: set = set()
    left: dict = {}
    for pid, comm in seen.items():
        name = trace.thread_names.get(pid, comm)
        proc = trace.process_names.get(trace.tgids.get(pid), "")
        if proc in EXCLUDED_PROCESSES or (not proc and name in EXCLUDED_COMMS) or name in EXCLUDED_COMMS:
            why = "recording harness"
        elif proc.startswith(EXCLUDED_PROCESS_PREFIXES):
            why = "the app under test and its instrumentation"
        elif name.startswith(EXCLUDED_KTHREAD_PREFIXES):
            why = "kernel threads the engine models"
        else:
            keep.add(pid)
            continue
        left[why] = left.get(why, 0) + 1
    return keep, left


def derive_background(trace, source_platform) -> dict:
    """The background's loop spec from a trace: the kept threads replayed window after
    window (docs/workloads-mobile.md). Deterministic: the same trace gives the same bytes."""
    from hetsched.traces.replay import ReplayOptions, build_replay

    keep, left = background_pids(trace)
    rep = build_replay(trace, ReplayOptions(include_kthreads=True, tasks="all", pids=keep,
                                            source_platform=source_platform, loop=True))
    spec = rep.spec
    spec["name"] = "android-system"
    return {"spec": spec, "window_ns": trace.end_ns - trace.start_ns, "threads": len(rep.tasks),
            "busy_ns": rep.busy_ns, "excluded": dict(sorted(left.items())), "notes": rep.notes,
            "stats": rep.stats}


@lru_cache(maxsize=4)
def _load(source: str) -> dict:
    fname = BACKGROUNDS[source][0]
    data = resources.files("hetsched.workloads").joinpath("data", fname).read_bytes()
    return json.loads(gzip.decompress(data))


#: hrtimer slack of a normal task (init_task's timer_slack_ns, include/linux/init_task.h:
#: 50 us): a sleep of a SCHED_OTHER thread ends anywhere up to that much after its expiry
TIMER_SLACK_NS = 50_000


def _android_system(p: dict, platform_spec: dict, seed: int) -> dict[str, Any]:
    """The recorded background, started ``phase`` ms into the run. The seed draws each
    SCHED_OTHER sleep's timer slack anew: the recording holds one draw of it per sleep (a
    wakeup up to TIMER_SLACK_NS late), so a run moves each by a uniform draw in
    [-slack/2, +slack/2), keeping the mean; SCHED_FIFO threads get no slack, as in the
    kernel (rt_task() tasks skip it in hrtimer sleeps)."""
    bg = _load(p["source"])
    spec = json.loads(json.dumps(bg["spec"]))  # a copy: the cached one stays as loaded
    rng = np.random.default_rng([seed, 0xA5D0])
    delay = int(round(p["phase"] * 1e6))
    half = TIMER_SLACK_NS // 2
    for t in spec["tasks"]:
        t["delay_ns"] = int(t["delay_ns"]) + delay
        if t["policy"] != "other":
            continue
        for ph in t["phases"]:
            for ev in ph["events"]:
                if "sleep" in ev:
                    ev["sleep"] = max(0, int(ev["sleep"]) + int(rng.integers(-half, half)))
    return spec


WORKLOADS = {
    "android-system": WorkloadDef(
        "android-system",
        (Param("source", str, "pixel6a-launch", None, None, "the recorded phone the background comes from",
               choices=tuple(BACKGROUNDS)),
         Param("phase", float, 0.0, 0.0, 60_000.0, "the background's start, ms after the run's")),
        _android_system,
        "the threads a real Android phone runs beside the app in front (system_server, SurfaceFlinger, HALs, "
        "Play services, System UI, kernel workers: 300 threads, about 2,600 wakeups/s), replayed from a real "
        "phone's trace window after window; combine it with an app workload (--workload browsing "
        "--workload android-system)",
    ),
}
