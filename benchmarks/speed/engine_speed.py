#!/usr/bin/env python3
"""Engine speed: simulated seconds per wall second and events per second.

The issue's configuration: 20 periodic tasks (periods 5-50 ms, log-uniform; total demand
half of the platform's capacity at f_max, UUniFast-discard), an 8-CPU platform (gs101 by
default), schedutil and the energy meter, 60 simulated seconds; once without and once with
the Chrome trace. Each configuration runs --repeat times and the best wall time is kept
(the machine is shared; the minimum is the least disturbed run). Ratios are measured side
by side in this one run.

    python benchmarks/speed/engine_speed.py [--platform gs101] [--duration 60] [--repeat 5]

The physical limit of this design: the same event queue popped as many times with nothing
simulated (each pop pushes one event; 50 queued, the reference run's longest queue), best of
--repeat, in the same process; the run's events per second over the bare loop's is the
share of the limit the simulation reaches.

Two builds side by side (a refactor's before and after): ``--compare NAME=PYTHONPATH``,
twice or more. Each build runs in its own process with that PYTHONPATH (a directory
holding a ``hetsched`` package with its compiled engine); the builds take turns, run by
run, so that a slow spell of the machine falls on every build alike, and the table gives
each build's best wall time and its ratio to the first build's.

    python benchmarks/speed/engine_speed.py --compare before=/tmp/before/python \
        --compare after=python --repeat 10
"""

from __future__ import annotations

import argparse
import json
import os
import platform as pyplatform
import subprocess
import sys
import time

from hetsched import Simulation


def one(platform: str, duration: float, trace: bool, seed: int, scheduler: str = "cfs") -> tuple[float, int, int]:
    sim = Simulation(platform=platform, workload="periodic:n=20,util=0.5,pmin_ms=5,pmax_ms=50",
                     scheduler=scheduler, governor="schedutil", seed=seed, trace=trace)
    t0 = time.perf_counter()
    sim.run_until(round(duration * 1e9))
    trace_bytes = len(sim.take_trace() or "") if trace else 0
    wall = time.perf_counter() - t0
    return wall, sim.observe()["counters"]["events"], trace_bytes


def compare(builds: list[tuple[str, str]], a: argparse.Namespace) -> None:
    """Each build in its own process, taking turns; best wall time per build and trace setting."""
    best: dict[tuple[str, bool], float] = {}
    events: dict[tuple[str, bool], int] = {}
    for _ in range(a.repeat):
        for name, path in builds:
            for trace in (False, True):
                code = ("import json, sys; sys.path.insert(0, %r); import engine_speed as e; "
                        "w, n, _ = e.one(%r, %r, %r, %r, %r); print(json.dumps([w, n]))"
                        % (os.path.dirname(os.path.abspath(__file__)), a.platform, a.duration, trace, a.seed,
                           a.scheduler))
                env = dict(os.environ, PYTHONPATH=os.path.abspath(path))
                out = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                     capture_output=True, text=True).stdout
                wall, n = json.loads(out)
                key = (name, trace)
                best[key] = min(best.get(key, wall), wall)
                events[key] = n
    first = builds[0][0]
    rows = {f"{name}/{'trace' if t else 'no_trace'}": {
        "wall_s": best[(name, t)], "x_realtime": a.duration / best[(name, t)], "events": events[(name, t)],
        "wall_vs_" + first: best[(name, t)] / best[(first, t)]} for name, _ in builds for t in (False, True)}
    if a.json:
        print(json.dumps(rows))
        return
    print(f"{a.platform}, 20 periodic tasks, {a.scheduler}, schedutil, {a.duration:g} s simulated, "
          f"best of {a.repeat}, builds taking turns")
    for key, r in rows.items():
        print(f"  {key:24s} wall {r['wall_s']:.3f} s  {r['x_realtime']:7.0f}x real time  "
              f"{r['events']} events  wall / {first}: {r['wall_vs_' + first]:.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--platform", default="gs101")
    ap.add_argument("--duration", type=float, default=60.0)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--scheduler", default="cfs")
    ap.add_argument("--json", action="store_true", help="print one JSON line instead of a table")
    ap.add_argument("--compare", action="append", metavar="NAME=PYTHONPATH", default=[],
                    help="a build to run side by side with the others (give two or more)")
    a = ap.parse_args()
    if a.compare:
        builds = [tuple(c.split("=", 1)) for c in a.compare]
        if len(builds) < 2 or any(len(b) != 2 for b in builds):
            ap.error("--compare takes NAME=PYTHONPATH, at least twice")
        compare(builds, a)
        return
    rows = {}
    for trace in (False, True):
        runs = [one(a.platform, a.duration, trace, a.seed, a.scheduler) for _ in range(a.repeat)]
        wall, events, tb = min(runs)
        rows["trace" if trace else "no_trace"] = {
            "wall_s": wall, "events": events, "x_realtime": a.duration / wall,
            "events_per_s": events / wall, "trace_mb": tb / 1e6,
        }
    rows["trace_cost_ratio"] = rows["trace"]["wall_s"] / rows["no_trace"]["wall_s"]
    from hetsched import _engine

    n = rows["no_trace"]["events"]
    bare = min(_engine.bare_event_loop(n, 50) for _ in range(a.repeat))
    rows["bare_loop"] = {"wall_s": bare, "events": n, "events_per_s": n / bare,
                         "engine_over_bare": (n / rows["no_trace"]["wall_s"]) / (n / bare)}
    rows["config"] = {"platform": a.platform, "duration_s": a.duration, "repeat": a.repeat,
                      "python": pyplatform.python_version(), "machine": pyplatform.machine()}
    if a.json:
        print(json.dumps(rows))
        return
    print(f"{a.platform}, 20 periodic tasks, schedutil, {a.duration:g} s simulated, best of {a.repeat}")
    for k in ("no_trace", "trace"):
        r = rows[k]
        print(f"  {k:9s} wall {r['wall_s']:.3f} s  {r['x_realtime']:8.0f}x real time  "
              f"{r['events_per_s'] / 1e6:6.2f} M events/s  ({r['events']} events"
              + (f", trace {r['trace_mb']:.1f} MB)" if k == "trace" else ")"))
    print(f"  trace costs {rows['trace_cost_ratio']:.2f}x the wall time of the untraced run")
    b = rows["bare_loop"]
    print(f"  bare event loop (same queue, {b['events']} pops, nothing simulated): {b['events_per_s'] / 1e6:.1f} M "
          f"events/s; the engine runs at {100 * b['engine_over_bare']:.1f} % of it")


if __name__ == "__main__":
    main()
