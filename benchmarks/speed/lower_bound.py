#!/usr/bin/env python3
"""The energy lower bound: what it costs a run, solved by the engine as the run goes against
HiGHS after the run, and how closely the two agree.

Speed: the reference configuration (20 periodic tasks, gs101, schedutil, 60 simulated s)
run without the bound, with the engine's (streamed) bound and with the LP reference
(``lower_bound="lp"``), taking turns run by run, best of --repeat; the wall time includes
``result()``, where the LP is solved. The bound's share of a run is (streamed - none) /
streamed.

Agreement: --cases random runs (the property test's workloads, five platforms and the
switcher, random governors, windows and lengths; seeds from 100, disjoint from the test's)
and the ten built-in workloads on three platforms, each run in both modes; the worst
relative difference of the two bounds.

    python benchmarks/speed/lower_bound.py [--repeat 5] [--cases 300]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

import hetsched

REF = dict(platform="gs101", workload="periodic:n=20,util=0.5,pmin_ms=5,pmax_ms=50", governor="schedutil")
BUILTIN = ["phone-mix", "game", "hackbench", "pcmark", "app-launch", "video", "browsing", "job-stream",
           "spec-repeat", "periodic"]


def timed(mode, duration: float) -> tuple[float, float | None]:
    t0 = time.perf_counter()
    sim = hetsched.Simulation(**REF, lower_bound=mode)
    sim.run_until(round(duration * 1e9))
    doc = sim.result().doc
    return time.perf_counter() - t0, doc["energy_lower_bound_j"]


def agreement(cases: int) -> tuple[int, float]:
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests"))
    from test_lower_bound import GOVS, PLATFORMS, SCHEDS, _random_workload

    worst, n = 0.0, 0
    plats = PLATFORMS + ["exynos5422:switcher"]
    for seed in range(100, 100 + cases):
        rng = np.random.default_rng([seed, 0x1B])
        wl = _random_workload(rng)
        plat = plats[seed % len(plats)]
        switcher = plat.endswith("switcher")
        sched = "util-aware" if switcher else SCHEDS[seed % len(SCHEDS)]
        gov = "ondemand" if switcher else GOVS[int(rng.integers(len(GOVS)))]
        knobs = {"lower_bound.window_ms": float(rng.choice([4, 20, 100, 1000]))}
        d = float(rng.choice([0.05, 0.7, 2.0]))
        v = [hetsched.Simulation(platform=plat, workload=wl, scheduler=sched, governor=gov, knobs=knobs, seed=seed,
                                 lower_bound=m).run(d)["energy_lower_bound_j"] for m in (True, "lp")]
        worst, n = max(worst, abs(v[0] - v[1]) / v[1]), n + 1
    for wl in BUILTIN:
        for plat in ("gs101", "sdm845", "exynos5422"):
            v = [hetsched.Simulation(platform=plat, workload=wl, scheduler="eas", lower_bound=m).run(3.0)
                 ["energy_lower_bound_j"] for m in (True, "lp")]
            worst, n = max(worst, abs(v[0] - v[1]) / v[1]), n + 1
    return n, worst


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=float, default=60.0)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--cases", type=int, default=300, help="random runs for the agreement (0: skip)")
    a = ap.parse_args()
    modes = {"none": False, "engine": True, "lp": "lp"}
    best: dict[str, float] = {}
    bound: dict[str, float | None] = {}
    for _ in range(a.repeat):
        for name, mode in modes.items():
            wall, lb = timed(mode, a.duration)
            best[name] = min(best.get(name, wall), wall)
            bound[name] = lb
    print(f"{REF['platform']}, 20 periodic tasks, cfs, schedutil, {a.duration:g} s simulated, best of {a.repeat}, "
          f"modes taking turns (wall includes result())")
    for name in modes:
        print(f"  {name:7s} wall {best[name]:.3f} s  {a.duration / best[name]:6.0f}x real time  "
              f"bound {bound[name]}")
    share = (best["engine"] - best["none"]) / best["engine"]
    print(f"  the engine's bound: {100 * share:.1f} % of the run; the LP reference takes "
          f"{best['lp'] / best['engine']:.1f}x the run with the engine's bound")
    if a.cases:
        n, worst = agreement(a.cases)
        print(f"  agreement over {n} runs: worst relative difference {worst:.2e}")


if __name__ == "__main__":
    main()
