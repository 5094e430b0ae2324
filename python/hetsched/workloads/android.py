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
:func:`background_spec`). The phone workloads run beside it by default (:func:`with_system`). Sources: docs/workloads-mobile.md "The system beside the app".
"""

from __future__ import annotations

import gzip
import json
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np

from hetsched.traces.android_groups import cpuset_cpus
from hetsched.workloads.base import Param, WorkloadDef
from hetsched.workloads.noise import NOISE_PARAM
from hetsched.workloads.spec import SYSTEM_KEY

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
#: snapshot (their tgid is unknown), and adbd's USB worker
EXCLUDED_COMMS = ("sh", "cmd", "am", "pgrep", "kill", "cat", "cp", "rm", "dumpsys", "logcat", "UsbFfs-worker")
#: processes whose name starts so: the app under test and its instrumentation
EXCLUDED_PROCESS_PREFIXES = ("androidx.benchmark.",)
#: kernel threads the engine models itself: schedutil's kthread (the engine applies a
#: frequency change without a task) and the CPU stopper's
EXCLUDED_KTHREAD_PREFIXES = ("sugov:", "migration/")


def background_pids(trace) -> tuple[set, dict]:
    """The pids of ``trace`` that form the background, and what was left out (reason ->
    number of threads)."""
    from hetsched.traces.parse import iter_tasks

    keep: set = set()
    left: dict = {}
    for pid, comm in iter_tasks(trace):
        if pid <= 0:  # the idle task, and a task the trace does not name
            continue
        name = trace.thread_names.get(pid, comm)
        proc = trace.process_names.get(trace.tgids.get(pid), "")
        if proc in EXCLUDED_PROCESSES or name in EXCLUDED_COMMS:
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


#: processes of the composition pipeline: SurfaceFlinger and the composer HAL. An app
#: workload that models SurfaceFlinger itself (its frames composited by its own thread)
#: runs beside the background without them, so that one SurfaceFlinger composites
COMPOSITION_PROCESSES = ("surfaceflinger",)
COMPOSITION_PROCESS_PREFIXES = ("android.hardware.graphics.composer",)


def _composition_pids(trace, pids: set) -> set:
    out = set()
    for pid in pids:
        proc = trace.process_names.get(trace.tgids.get(pid), "")
        if proc in COMPOSITION_PROCESSES or proc.startswith(COMPOSITION_PROCESS_PREFIXES):
            out.add(pid)
    return out


def derive_background(trace, source_platform) -> dict:
    """The background's loop specs from a trace: the kept threads replayed window after
    window (docs/workloads-mobile.md), whole (``recorded``) and without the composition
    pipeline (``none``: a wakeup by one of its threads becomes a timed sleep, as a wakeup by
    any thread left out does). Deterministic: the same trace gives the same bytes."""
    from hetsched.traces.android_groups import thread_cpusets, thread_groups
    from hetsched.traces.replay import ReplayOptions, build_replay, percpu_kthread_cpu

    keep, left = background_pids(trace)
    # the app in front is the one the workload beside the background models: every process
    # kept is in the group its state gives it, none in top-app as the top app
    groups = thread_groups(trace)
    cpusets = thread_cpusets(trace)
    variants = {}
    for name, pids in (("recorded", keep), ("none", keep - _composition_pids(trace, keep))):
        rep = build_replay(trace, ReplayOptions(include_kthreads=True, tasks="all", pids=pids,
                                                source_platform=source_platform, loop=True,
                                                switch_cost_ns=None, groups=groups))
        spec = rep.spec
        spec["name"] = "android-system"
        for t in spec["tasks"]:
            t["daemon"] = True
        # each task's cpuset by name, and each per-CPU kernel thread's CPU: the CPUs are the
        # platform's, set where the background runs
        variants[name] = {"spec": spec, "threads": len(rep.tasks), "busy_ns": rep.busy_ns, "stats": rep.stats,
                          "cpusets": {r["name"]: cpusets[r["pid"]] for r in rep.tasks if r["pid"] in cpusets},
                          "bound": {r["name"]: cpu for r in rep.tasks
                                    if (cpu := percpu_kthread_cpu(r["comm"])) is not None}}
    return {"window_ns": trace.end_ns - trace.start_ns, "excluded": dict(sorted(left.items())),
            "surfaceflinger": variants, "notes": rep.notes}


@lru_cache(maxsize=4)
def _load(source: str) -> dict:
    fname = BACKGROUNDS[source][0]
    data = resources.files("hetsched.workloads").joinpath("data", fname).read_bytes()
    return json.loads(gzip.decompress(data))


#: hrtimer slack of a normal task (init_task's timer_slack_ns, include/linux/init_task.h:
#: 50 us): a sleep of a SCHED_OTHER thread ends anywhere up to that much after its expiry
TIMER_SLACK_NS = 50_000


def background_spec(source: str, surfaceflinger: str, phase_ms: float, seed: int, noise: bool,
                    platform: str = "", nr_cpus: int = 0) -> dict:
    """The recorded background, started ``phase_ms`` after the run. With ``noise``, the
    seed draws each SCHED_OTHER sleep's timer slack anew: the recording holds one draw of it
    per sleep (a wakeup up to TIMER_SLACK_NS late), so a run moves each by a uniform draw in
    [-slack/2, +slack/2), keeping the mean (a sleep is at least 1 us after the move);
    SCHED_FIFO threads get no slack, as in the kernel (rt_task() tasks skip it in hrtimer
    sleeps)."""
    bg = _load(source)
    spec = json.loads(json.dumps(bg["surfaceflinger"][surfaceflinger]["spec"]))  # the cached one stays
    delay = int(round(phase_ms * 1e6))
    sleeps = [ev for t in spec["tasks"] if t["policy"] == "other"
              for ph in t["phases"] for ev in ph["events"] if "sleep" in ev]
    if noise:
        half = TIMER_SLACK_NS // 2
        moves = np.random.default_rng([seed, 0xA5D0]).integers(-half, half, len(sleeps))
        for ev, m in zip(sleeps, moves):
            # a recorded sleep shorter than the move (17 of 1,286, the shortest 14 us) still
            # blocks: at least 1 us, as a wakeup an interrupt brings that soon
            ev["sleep"] = max(min(int(ev["sleep"]), 1_000), int(ev["sleep"]) + int(m))
    # on a platform whose device's cpusets are known, each thread is held to its own; a
    # per-CPU kernel thread is bound to its CPU where the platform has that CPU
    variant = bg["surfaceflinger"][surfaceflinger]
    cpus = cpuset_cpus(variant.get("cpusets", {}), platform)
    cpus.update({name: [cpu] for name, cpu in variant.get("bound", {}).items() if cpu < nr_cpus})
    for t in spec["tasks"]:
        t["delay_ns"] = int(t["delay_ns"]) + delay
        if t["name"] in cpus:
            t["cpus"] = cpus[t["name"]]
    spec[SYSTEM_KEY] = {"source": source, "surfaceflinger": surfaceflinger,
                        "tasks": [t["name"] for t in spec["tasks"]]}
    return spec


def _nr_cpus(platform_spec: dict) -> int:
    return sum(len(c["cpus"]) for c in platform_spec.get("clusters", ()))


def _android_system(p: dict, platform_spec: dict, seed: int) -> dict[str, Any]:
    return background_spec(p["source"], p["surfaceflinger"], p["phase"], seed, bool(p["noise"]),
                           platform_spec.get("name", ""), _nr_cpus(platform_spec))


_SOURCE = Param("source", str, "pixel6a-launch", None, None, "the recorded phone the background comes from",
                choices=tuple(BACKGROUNDS))

WORKLOADS = {
    "android-system": WorkloadDef(
        "android-system",
        (_SOURCE,
         Param("surfaceflinger", str, "recorded", None, None,
               "recorded: SurfaceFlinger and the composer HAL as recorded; none: left out (an app workload "
               "beside it models SurfaceFlinger)", choices=("recorded", "none")),
         Param("phase", float, 0.0, 0.0, 60_000.0, "the background's start, ms after the run's"),
         NOISE_PARAM),
        _android_system,
        "the threads a real Android phone runs beside the app in front (system_server, SurfaceFlinger, HALs, "
        "Play services, System UI, kernel workers: about 300 threads and 3,000 wakeups/s), replayed from a "
        "real phone's trace window after window, as daemons (a run until the app's tasks end does not wait "
        "for them); the phone workloads run beside it by default (their system parameter)",
    ),
}


def with_system(wd: WorkloadDef, models_surfaceflinger: bool) -> WorkloadDef:
    """``wd`` run beside the recorded system by default: a ``system`` parameter (a
    background's name, or ``none`` for the app's own threads alone). The background leaves
    out SurfaceFlinger and the composer HAL when the app models SurfaceFlinger itself."""
    from hetsched.workloads.spec import merge_workloads

    system = Param("system", str, "pixel6a-launch", None, None,
                   "the phone's own threads beside the app: a recorded background (android-system), or none",
                   choices=tuple(BACKGROUNDS) + ("none",))

    def build(p: dict, platform_spec: dict, seed: int) -> dict:
        app_p = {k: v for k, v in p.items() if k != "system"}
        app = wd.build(app_p, platform_spec, seed)
        if p["system"] == "none":
            # named so: the same name beside the system would say a different load
            name = str(app.get("name") or wd.name)
            app["name"] = name + ("," if ":" in name else ":") + "system=none"
            return app
        bg = background_spec(p["system"], "none" if models_surfaceflinger else "recorded", 0.0, seed,
                             bool(p.get("noise", 1)), platform_spec.get("name", ""), _nr_cpus(platform_spec))
        return merge_workloads([app, bg], name=app.get("name"))

    return WorkloadDef(wd.name, tuple(wd.params) + (system,), build,
                       wd.description + "; beside a real phone's own threads (system=none: the app's alone)",
                       wd.headline)
