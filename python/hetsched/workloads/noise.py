"""Run-to-run variation: what a workload's seed varies beyond the workload's own content.

Two runs of the same benchmark on a real phone differ because the phone does other
things at times the benchmark does not choose. A built-in workload draws these from its
seed with the primitives of the WorkloadSpec (docs/engine-interface.md), each sized from a
kernel constant or a measurement (docs/workloads.md, "Run-to-run variation"):

* **kernel-worker bursts**: per-CPU bound workqueue workers (``kworker/N:0``, SCHED_OTHER
  nice 0, bound to CPU N as ``kthread_bind_mask()`` binds them) that wake at Poisson times
  and run a short burst, at the rate and size measured on the Pixel 6a (gs101) trace;
* **timer slack**: a fair task's hrtimer sleep ends ``timer_slack_ns`` (50 us) after its
  expiry unless another interrupt reaches the CPU inside that window first;
* **process creation**: threads and processes a program starts one after another begin
  one creation interval apart, drawn from the back-to-back forks of that trace.

What these primitives cannot express (interrupt time that no task owns, slack on a
``timer`` event) is listed in docs/workloads.md with the engine change it would take.

Every draw comes from ``default_rng([seed, NOISE_SALT, salt])`` where ``salt`` names the
workload, a stream apart from the workload's own content draws, so a workload built with
``noise=0`` is the same spec, to the byte, as before the noise existed.
"""

from __future__ import annotations

import math
import re
from typing import Sequence

import numpy as np

from hetsched.workloads.base import Param

__all__ = ["NOISE_PARAM", "NOISE_KEY", "KWORKER_HZ", "KWORKER_WORK_GEOMEAN_NS", "KWORKER_WORK_LOG_SD",
           "KWORKER_CYCLE_NS", "TIMER_SLACK_NS", "IRQ_HZ", "CREATE_GEOMEAN_NS", "CREATE_LOG_SD", "noise_rng",
           "hrtimer_delay_ns", "poll_slack_window_ns", "creation_interval_ns", "creation_offsets_ns",
           "kworker_tasks", "run_length_lower_bound_ns", "add_kworkers", "is_noise_task", "has_kernel_workers"]

#: the ``noise`` parameter every built-in workload takes
NOISE_PARAM = Param("noise", int, 1, 0, 1,
                    "1: the seed also draws a phone's run-to-run variation (kernel-worker bursts, timer slack, "
                    "process-creation stagger; docs/workloads.md), 0: none")

NOISE_SALT = 0x0153

# --- kernel-worker bursts -------------------------------------------------------------
# Measured on pixel6a_tensor_warm_startup.perfetto-trace (Perfetto's test data
# api32_startup_warm: a Pixel 6a, gs101, Android 13, kernel 5.10), its second half
# (0.96 s; the first half, with most of the harness's shell commands, has 62 runs per
# CPU-second): 145 runs of the bound workers kworker/N:M and kworker/N:MH, every one on
# its own CPU, 18.9 per CPU-second, taken as a Poisson rate. A run's
# invariant work (its time x capacity_orig / 1024 x f / f_max, the conversion `hetsched
# replay` uses, with the trace's cpu_frequency events) is log-normal: geometric mean
# 5.1 us, log standard deviation 0.58 (median 4.6 us, mean 6.3 us). The whole trace: 40.5
# per CPU-second; an older 8-CPU phone's SurfaceFlinger systrace (trappy's test data): 5.4.
KWORKER_HZ = 18.9
KWORKER_WORK_GEOMEAN_NS = 5_100
KWORKER_WORK_LOG_SD = 0.58
#: a workload that never ends repeats a cycle of this many ns of bursts (about 76 per CPU);
#: not a multiple of the 60 Hz vsync or of a 10 ms audio period, so a cycle's bursts do
#: not land on the same frame phase each time round
KWORKER_CYCLE_NS = 4_001_300_000
#: a finite workload longer than this (a job stream at a thousandth of a job a second ends
#: after a day) has daemon workers that repeat a drawn cycle, rather than a burst drawn for
#: each of its 1.6 million per CPU-day (gigabytes of events, most of which a run of a few
#: seconds never reaches). Daemons: a cycle lasts its sleeps plus its bursts' run time and
#: waits, so a count of cycles would outlast the workload, and a worker must not hold a run
#: open once the workload's own tasks have ended
KWORKER_DRAWN_HORIZON_NS = 3_600_000_000_000

# --- timer slack ----------------------------------------------------------------------
# init/init_task.c: init_task.timer_slack_ns = 50000 ("50 usec default slack"), inherited
# by every task (Android's task profiles keep 50 us, TimerSlackNormal, for foreground and
# top-app threads; background ones get TimerSlackHigh, 40 ms). kernel/time/hrtimer.c:
# hrtimer_nanosleep() arms the sleeper with hrtimer_set_expires_range_ns(expiry, slack),
# slack = current->timer_slack_ns, 0 for rt_or_dl_task(current). The clock event is
# programmed for the hard expiry (expiry + slack); __hrtimer_run_queues() runs any timer
# whose soft expiry has passed whenever the CPU takes a timer interrupt, so the sleeper
# wakes at the first interrupt after its expiry or at expiry + slack, whichever is first.
TIMER_SLACK_NS = 50_000
# The interrupts that can end the window early: on the same trace, an idle CPU left idle
# and went back without switching to a task (an interrupt handled in the idle task) 41
# times per idle CPU-second (17-92 by CPU). With that rate a 50 us window catches one
# 0.2 % of the time: the sleep is late by 50 us minus 0.05 us on average.
IRQ_HZ = 41.0
# fs/select.c select_estimate_accuracy(): a poll/epoll timeout (Android's Looper) gets
# max(timer_slack_ns, 0.1 % of the timeout; 0.5 % for a task at nice > 0), at most 100 ms
POLL_SLACK_DIV = 1000
POLL_SLACK_DIV_NICE = 200
POLL_SLACK_MAX_NS = 100_000_000

# --- process creation -----------------------------------------------------------------
# The same trace's back-to-back process creations: one parent forks three children per
# command of the harness (10 commands); the shortest interval of each triple, two forks
# with nothing else between them, is 77-273 us (geometric mean 143 us, log standard
# deviation 0.39). A program that starts its workers one after another (hackbench's
# group(), rt-app's thread creation, a launch script) starts worker k that many intervals
# after the first.
CREATE_GEOMEAN_NS = 143_000
CREATE_LOG_SD = 0.39

#: the spec's record of its noise: {"tasks": [names], "horizon_ns": int or None}
NOISE_KEY = "noise"
_BOUND_KWORKER = re.compile(r"kworker/\d+:\d+H?(-\d+)?")


def noise_rng(seed: int, salt: int) -> np.random.Generator:
    """The noise stream of a workload (``salt`` names the workload): apart from the
    stream its content is drawn from."""
    return np.random.default_rng([seed, NOISE_SALT, salt])


def poll_slack_window_ns(timeout_ns: int, nice: int = 0) -> int:
    """The slack of a poll/epoll timeout of ``timeout_ns`` (select_estimate_accuracy())."""
    div = POLL_SLACK_DIV_NICE if nice > 0 else POLL_SLACK_DIV
    return max(TIMER_SLACK_NS, min(POLL_SLACK_MAX_NS, int(timeout_ns) // div))


def hrtimer_delay_ns(rng: np.random.Generator, window_ns: int = TIMER_SLACK_NS) -> int:
    """How late a sleep with a slack window of ``window_ns`` ends: the first interrupt of a
    Poisson stream at IRQ_HZ, or the window's end."""
    if window_ns <= 0:
        return 0
    first = rng.exponential(1e9 / IRQ_HZ)
    return int(min(window_ns, round(first)))


def creation_interval_ns(rng: np.random.Generator) -> int:
    """One process creation interval (CREATE_GEOMEAN_NS, CREATE_LOG_SD)."""
    return int(round(rng.lognormal(math.log(CREATE_GEOMEAN_NS), CREATE_LOG_SD)))


def creation_offsets_ns(rng: np.random.Generator, n: int) -> list[int]:
    """Start offsets of ``n`` threads or processes created one after another: 0 for the
    first, then cumulative creation intervals."""
    if n <= 0:
        return []
    gaps = rng.lognormal(math.log(CREATE_GEOMEAN_NS), CREATE_LOG_SD, size=n - 1)
    return [0] + [int(round(x)) for x in np.cumsum(gaps)]


def _cpus(platform_spec: dict) -> list[int]:
    return sorted({c for cl in platform_spec["clusters"] for c in cl["cpus"]})


def kworker_tasks(platform_spec: dict, rng: np.random.Generator, horizon_ns: int | None) -> list[dict]:
    """One bound kernel worker per CPU: Poisson wakeups at KWORKER_HZ, each running a
    log-normal burst. ``horizon_ns`` None: a cycle of KWORKER_CYCLE_NS repeated forever;
    else bursts at times below the horizon, then the worker exits (a CPU drawing none gets
    no worker); beyond KWORKER_DRAWN_HORIZON_NS, the cycle repeated by daemon workers, which
    the run does not wait for. (A drawn worker's sleeps end before the horizon, its bursts'
    run time and waits come on top: about 1.2e-4 of the horizon over the CPU's speed.) The
    gaps are sleeps: a burst that waits for its CPU delays the later ones by that wait, a
    few us against gaps of 53 ms on average."""
    cyclic = horizon_ns is None or horizon_ns > KWORKER_DRAWN_HORIZON_NS
    daemon = horizon_ns is not None and cyclic
    span = KWORKER_CYCLE_NS if cyclic else int(horizon_ns)
    out = []
    for cpu in _cpus(platform_spec):
        n = int(rng.poisson(KWORKER_HZ * span / 1e9))
        at = np.sort(rng.uniform(0.0, span, size=n)).round().astype(np.int64)
        work = rng.lognormal(math.log(KWORKER_WORK_GEOMEAN_NS), KWORKER_WORK_LOG_SD, size=n)
        if n == 0:
            continue
        events, last = [], 0
        for t, w in zip(at.tolist(), work.tolist()):
            if t > last:
                events.append({"sleep": t - last})
            events.append({"run": max(1, int(round(w)))})
            last = t
        if cyclic and span > last:
            events.append({"sleep": span - last})   # the cycle's tail, so it repeats at its rate
        w = {"name": f"kworker/{cpu}:0", "policy": "other", "nice": 0, "rt_priority": 0, "cpus": [cpu],
             "util_min": None, "util_max": None, "delay_ns": 0, "loop": -1 if cyclic else 1,
             "phases": [{"loop": 1, "events": events}]}
        if daemon:
            w["daemon"] = True
        out.append(w)
    return out


def _speeds(platform_spec: dict, perf: dict | None) -> list[float]:
    """Work per ns of a task with this perf model on each cluster at its f_max (the
    engine's model, docs/engine-interface.md; at most 1, on the biggest core at F)."""
    clusters = platform_spec["clusters"]
    fmax = [max(o["khz"] for o in c["opps"]) for c in clusters]
    big = max(range(len(clusters)), key=lambda i: (clusters[i]["capacity_orig"], fmax[i]))
    F = fmax[big]
    perf = perf or {}
    m = float(perf.get("mem_frac", 0.0))
    out = []
    for i, c in enumerate(clusters):
        if perf.get("ipc") is not None:
            u = float(perf["ipc"][i])
        else:
            u = (c["capacity_orig"] * F / (1024.0 * fmax[i])) ** float(perf.get("ipc_exp", 1.0))
        out.append(1.0 / ((1.0 - m) * F / (u * fmax[i]) + m))
    return out


def run_length_lower_bound_ns(spec: dict, platform_spec: dict) -> int | None:
    """A time before which a finite workload cannot have ended, or None for one that runs
    forever (some loop is -1). The largest of: each started task's own program (its delay,
    every run at the fastest speed any core gives it, its sleeps and I/O waits, the periods
    of a timer only it uses, an absolute sleep's end), and all started tasks' work spread
    over every CPU at f_max (each CPU at the best speed any of the tasks has on a core it
    can run on: its cluster's, or on a switcher platform, where a virtual CPU runs on
    either cluster, the better of the two). Fork templates are left out: what they would
    add can only make the run longer."""
    timer_users: dict[int, set] = {}
    for i, t in enumerate(spec["tasks"]):
        for ph in t["phases"]:
            for ev in ph["events"]:
                if "timer" in ev:
                    timer_users.setdefault(ev["timer"]["id"], set()).add(i)
    sizes = [len(c["cpus"]) for c in platform_spec["clusters"]]
    if platform_spec.get("switcher"):
        # a cluster's cpus are those it backs at the start; any virtual CPU may move to the
        # other cluster: every CPU counts at the better cluster's speed
        n = len(_cpus(platform_spec))
        sizes = [n if i == 0 else 0 for i in range(len(sizes))]
    best = [0.0] * len(sizes)
    work_total = 0.0
    bound = 0.0
    for i, t in enumerate(spec["tasks"]):
        if not t.get("start", True):
            continue
        if t.get("loop", -1) < 0 or any(ph.get("loop", 1) < 0 for ph in t["phases"]):
            return None
        own = timed = 0.0
        until = 0.0
        work = 0.0
        memory = 0.0
        for ph in t["phases"]:
            k = ph.get("loop", 1) * t["loop"]
            for ev in ph["events"]:
                (kind, val), = ev.items()
                if kind == "run":
                    work += k * val
                elif kind == "memrun":
                    memory += k * val
                elif kind in ("runtime", "sleep", "iowait"):
                    own += k * val
                elif kind == "timer" and timer_users[val["id"]] == {i}:
                    timed += k * val["period_ns"]
                elif kind == "sleep_until":
                    until = max(until, float(val))
        work_total += work + memory
        speeds = _speeds(platform_spec, t.get("perf"))
        if platform_spec.get("switcher"):
            speeds = [max(speeds)] * len(speeds)
        for c, s in enumerate(speeds):
            best[c] = max(best[c], 1.0 if memory else s)
        delay = float(t.get("delay_ns", 0))
        bound = max(bound, delay + own + work / max(speeds) + memory, delay + timed, until)
    capacity = sum(n * s for n, s in zip(sizes, best))
    if capacity > 0:
        bound = max(bound, work_total / capacity)
    return int(bound)


def add_kworkers(spec: dict, platform_spec: dict, rng: np.random.Generator,
                 horizon_ns: int | None | str = "auto") -> dict:
    """Append the kernel workers to a built spec and record them under ``spec["noise"]``.
    ``horizon_ns`` "auto": the spec's lower bound of its run length (forever for a spec
    that never ends), so the workers never outlast a finite workload."""
    if horizon_ns == "auto":
        horizon_ns = run_length_lower_bound_ns(spec, platform_spec)
    workers = kworker_tasks(platform_spec, rng, horizon_ns)
    spec["tasks"] = list(spec["tasks"]) + workers
    spec[NOISE_KEY] = {"tasks": [w["name"] for w in workers], "horizon_ns": horizon_ns}
    return spec


def is_noise_task(spec: dict, task: dict) -> bool:
    """Whether ``task`` of ``spec`` is one of the workers :func:`add_kworkers` added."""
    return task["name"] in set(spec.get(NOISE_KEY, {}).get("tasks", ()))


def has_kernel_workers(tasks: Sequence[dict]) -> bool:
    """Whether these tasks hold a recorded phone's own bound kernel workers (a replayed
    trace, ``android-system``): then the synthetic ones would count the same work twice."""
    return any(_BOUND_KWORKER.fullmatch(t["name"]) for t in tasks)
