"""Built-in workloads, selected by ``--workload NAME[:key=value,...]``.

Each entry declares its parameters once (name, type, default, range, meaning); the CLI's
help, the parser and the docs read the same table.  A workload is a function of its
parameters, the platform (for sizing) and the seed, returning a WorkloadSpec
(docs/engine-interface.md).  Anything else given to ``--workload`` that names an existing
file (or ends in ``.json``) is read as an rt-app file; a bare ``NAME.json`` that names no
file is the rt-app example of that name shipped with the package (workloads/examples.py).

* ``periodic``: n independent periodic tasks, the task-set generator of real-time
  scheduling research: utilisations from UUniFast-discard (Bini & Buttazzo 2005; Davis &
  Burns 2009), periods log-uniform in [pmin, pmax] (Emberson, Stafford & Davis 2010).
  ``util`` is the total demand as a fraction of the platform's capacity at f_max
  (sum of capacity_orig / 1024); no task asks for more than ``umax`` of a 1024 CPU.
* ``phone-mix``: a phone-like mixed load with Android's thread roles: the 60 Hz frame
  pipeline (UI thread, RenderThread, SurfaceFlinger), a 10 ms audio mixer at SCHED_FIFO,
  binder and background work. Roles and periods are Android's; the work amounts are
  stated assumptions (docs/workloads.md).
"""

from __future__ import annotations

import dataclasses
import math
import os
from typing import Iterable

import numpy as np

from hetsched.errors import InputError, UnknownNameError
from hetsched.workloads.base import Param, WorkloadDef
from hetsched.workloads.examples import rtapp_file
from hetsched.workloads.noise import NOISE_PARAM, add_kworkers, creation_offsets_ns, noise_rng
from hetsched.workloads.rtapp import load_rtapp, periodic
from hetsched.workloads.spec import merge_workloads, workload

__all__ = ["WORKLOADS", "Param", "parse_workload_arg", "resolve_workloads", "uunifast_discard"]


def uunifast_discard(n: int, total: float, umax: float, rng: np.random.Generator,
                     tries: int = 1000) -> list[float]:
    """n utilisations summing to ``total``, each at most ``umax`` (UUniFast-discard)."""
    if total > n * umax:
        raise ValueError("total utilisation above n * umax")
    for _ in range(tries):
        utils, rest = [], total
        for i in range(1, n):
            nxt = rest * rng.random() ** (1.0 / (n - i))
            utils.append(rest - nxt)
            rest = nxt
        utils.append(rest)
        if max(utils) <= umax:
            return utils
    raise ValueError("UUniFast-discard did not find a task set; lower util or raise umax")


def _capacity_sum(platform_spec: dict) -> float:
    return sum(c["capacity_orig"] * len(c["cpus"]) for c in platform_spec["clusters"]) / 1024.0


def _periodic(p: dict, platform_spec: dict, seed: int) -> dict:
    rng = np.random.default_rng([seed, 0x5EED])
    n = p["n"]
    total = p["util"] * _capacity_sum(platform_spec)
    if total > n * p["umax"]:
        raise InputError("--workload periodic", "util",
                         f"a total demand reachable by n={n} tasks of at most umax={p['umax']} "
                         f"(util <= {n * p['umax'] / _capacity_sum(platform_spec):.3f})", got=p["util"])
    try:
        utils = uunifast_discard(n, total, p["umax"], rng)
    except ValueError:
        # reachable in principle, but so close to n * umax that discarding finds no set
        raise InputError("--workload periodic", "util",
                         f"a total demand UUniFast-discard can split into n={n} tasks of at most "
                         f"umax={p['umax']} (lower util, or raise n or umax)", got=p["util"]) from None
    lo, hi = math.log(p["pmin_ms"]), math.log(p["pmax_ms"])
    tasks = []
    for i, u in enumerate(utils):
        period_us = round(math.exp(rng.uniform(lo, hi)) * 1000.0)
        tasks.append(periodic(f"periodic-{i}", period_us=period_us, run_us=round(u * period_us)))
    spec = workload(f"periodic:n={n},util={p['util']}", tasks)
    if p["noise"]:
        # rt-app creates its threads one after another, each starting (and counting its
        # timer from) its own creation
        nrng = noise_rng(seed, 0x5EED)
        for t, off in zip(spec["tasks"], creation_offsets_ns(nrng, len(spec["tasks"]))):
            t["delay_ns"] = off
        add_kworkers(spec, platform_spec, nrng)
    return spec


# Thread roles of a phone UI at 60 Hz, sized in invariant work (µs on a capacity-1024 CPU
# at f_max). Periods and policies follow Android's threads (vsync at 16.67 ms, a 10 ms
# audio buffer at SCHED_FIFO); the work amounts are assumptions, chosen for a total demand
# of about two thirds of one big CPU at f_max, not measurements (docs/workloads.md). The mobile
# workloads calibrated against the studies are in mobile.py and bench.py.
_PHONE_THREADS = [
    # name, period_us, run_us, policy, prio (nice or RT priority)
    ("ui-thread", 16_667, 2_600, "other", -10),
    ("RenderThread", 16_667, 3_200, "other", -10),
    ("surfaceflinger", 16_667, 1_300, "other", -8),
    ("audio-mixer", 10_000, 450, "fifo", 3),
    ("binder-1", 33_333, 900, "other", 0),
    ("binder-2", 50_000, 1_100, "other", 0),
    ("gc-daemon", 200_000, 9_000, "other", 4),
    ("sync-adapter", 100_000, 6_000, "other", 10),
    ("kworker", 8_000, 120, "other", 0),
    ("location", 250_000, 3_000, "other", 0),
]


def _phone_mix(p: dict, platform_spec: dict, seed: int) -> dict:
    rng = np.random.default_rng([seed, 0xF0E])
    scale = p["load"]
    tasks = []
    for name, period, run, policy, prio in _PHONE_THREADS:
        # each thread starts at a seeded phase within its period, as real threads do
        t = periodic(name, period_us=period, run_us=round(run * scale),
                     delay_us=round(rng.uniform(0, period)))
        if policy == "other":
            t["nice"] = prio
        else:
            t["policy"], t["rt_priority"] = policy, prio
        tasks.append(t)
    spec = workload(f"phone-mix:load={scale}", tasks)
    if p["noise"]:
        add_kworkers(spec, platform_spec, noise_rng(seed, 0xF0E))
    return spec


WORKLOADS: dict[str, WorkloadDef] = {
    "periodic": WorkloadDef(
        "periodic",
        (
            Param("n", int, 20, 1, 512, "number of tasks"),
            Param("util", float, 0.5, 0.0, 1.0, "total demand / platform capacity at f_max"),
            Param("umax", float, 0.8, 0.01, 1.0, "largest single-task utilisation (of a 1024 CPU)"),
            Param("pmin_ms", float, 5.0, 0.1, 10_000.0, "shortest period, ms"),
            Param("pmax_ms", float, 50.0, 0.1, 10_000.0, "longest period, ms"),
            NOISE_PARAM,
        ),
        _periodic,
        "n periodic tasks, UUniFast-discard utilisations, log-uniform periods",
    ),
    "phone-mix": WorkloadDef(
        "phone-mix",
        (Param("load", float, 1.0, 0.05, 20.0, "multiplies every thread's work"), NOISE_PARAM),
        _phone_mix,
        "a 60 Hz UI frame pipeline with audio, binder and background threads",
    ),
}

# The studies' workloads, each module declaring its own table.
from hetsched.workloads import android as _android, bench as _bench, mobile as _mobile  # noqa: E402

WORKLOADS.update(_bench.WORKLOADS)
WORKLOADS.update(_mobile.WORKLOADS)
WORKLOADS.update(_android.WORKLOADS)

# The phone workloads run beside a real phone's own threads (android-system) unless their
# system parameter says none: a phone's frames wait behind system_server, SurfaceFlinger's
# partners, the HALs and kernel workers, which the app models alone do not have. Those
# that model SurfaceFlinger themselves (it composites their frames and ends their frame
# metrics) run beside the background without the recorded one.
_PHONE_WORKLOADS = {"browsing": True, "game": True, "app-launch": True, "phone-mix": True, "pcmark": False}
WORKLOADS.update({name: _android.with_system(WORKLOADS[name], models_sf)
                  for name, models_sf in _PHONE_WORKLOADS.items()})

# Each workload's headline: the figure its study judges a scheduler by (frame drops for the
# game, entry time for app launches, completion time for hackbench and the job streams,
# the score for PCMark), beside the energy every run reports.
_HEADLINE = {
    "game": ("fps", "frame_drop_pct"),
    "video": ("late_frames", "frame_time_ms_mean"),
    "app-launch": ("entry_ms_mean",),
    "browsing": ("frame_ms_mean", "frames_over_16_6_pct"),
    "pcmark": ("score",),
    "hackbench": ("completion_s",),
    "job-stream": ("mean_s", "throughput_jobs_per_s"),
}
WORKLOADS.update({name: dataclasses.replace(WORKLOADS[name], headline=h) for name, h in _HEADLINE.items()})


def headline_metrics(workload_args: Iterable[str]) -> list[str]:
    """The flat metric keys (``game.fps``) of the headline figures of these ``--workload``
    arguments' built-in workloads (rt-app files have none)."""
    keys = []
    for arg in workload_args:
        name = arg.partition(":")[0]
        if name in WORKLOADS:
            keys += [f"{name}.{m}" for m in WORKLOADS[name].headline if f"{name}.{m}" not in keys]
    return keys


def parse_workload_arg(arg: str) -> tuple[str, dict]:
    """``NAME:k=v,k=v`` -> (name, typed params with defaults), validated."""
    name, _, rest = arg.partition(":")
    if name not in WORKLOADS:
        raise UnknownNameError("--workload", "workload", name, list(WORKLOADS) + ["<rt-app file>.json"])
    wd = WORKLOADS[name]
    params = {p.name: p.default for p in wd.params}
    decl = {p.name: p for p in wd.params}
    for item in filter(None, rest.split(",")):
        key, eq, val = item.partition("=")
        if key not in decl:
            raise UnknownNameError(f"--workload {name}", "parameter", key, list(decl))
        if not eq:
            raise InputError(f"--workload {name}", key, "key=value")
        p = decl[key]
        if p.choices is not None:
            if val not in p.choices:
                raise UnknownNameError(f"--workload {name}", key, val, list(p.choices))
            params[key] = val
            continue
        try:
            v = p.kind(val)
        except ValueError:
            raise InputError(f"--workload {name}", key, f"a{'n integer' if p.kind is int else ' number'}",
                             got=val) from None
        if isinstance(v, float) and not math.isfinite(v):
            # NaN fails every comparison, so no range below would catch it
            raise InputError(f"--workload {name}", key, f"a finite number in [{p.lo}, {p.hi}]", got=val)
        if (p.lo is not None and v < p.lo) or (p.hi is not None and v > p.hi):
            raise InputError(f"--workload {name}", key, f"a value in [{p.lo}, {p.hi}]", got=v)
        params[key] = v
    if name == "periodic" and params["pmin_ms"] > params["pmax_ms"]:
        raise InputError(f"--workload {name}", "pmin_ms", "pmin_ms <= pmax_ms", got=params["pmin_ms"])
    return name, params


def _is_file_arg(arg: str) -> bool:
    return arg.endswith(".json") or os.sep in arg or os.path.isfile(arg)


#: Workloads one run may take together (``--workload`` repeated, a grid cell's list): far
#: more than a scenario mixes (a handful of rt-app files and built-ins), few enough that
#: resolving and merging them stays under a second (merging renames clashing task names
#: and grows faster than linearly: a thousand took 4 s, twenty thousand never ended).
MAX_WORKLOADS = 256


def resolve_workloads(args: list[str], platform_spec: dict, seed: int) -> dict:
    """Resolve one or several ``--workload`` arguments into one WorkloadSpec."""
    if len(args) > MAX_WORKLOADS:
        raise InputError("--workload", "workloads", f"at most {MAX_WORKLOADS} workloads run together",
                         got=len(args))
    specs = []
    for arg in args:
        if _is_file_arg(arg):
            path = rtapp_file(arg)  # a file, else a shipped example of that bare name
            if path is None:
                raise InputError(arg, "--workload", "an existing rt-app JSON file, a shipped example "
                                 f"(hetsched workloads lists them) or a built-in workload ({', '.join(WORKLOADS)})")
            specs.append(load_rtapp(path))
        else:
            name, params = parse_workload_arg(arg)
            specs.append(WORKLOADS[name].build(params, platform_spec, seed))
    if len(specs) == 1:
        return specs[0]
    return merge_workloads(specs)
