#!/usr/bin/env python3
"""Phone-scale loads: does the engine's cost per event grow with the thread count?

Real phones run a few hundred threads and 3,000-11,000 wakeups a second. The loads here
keep the total work fixed and spread it over more threads: rt-app files of N periodic
threads on sm8150 (eas, schedutil), each with period 1e6·N/13,700 µs and run 3.39·period/N
µs (about 13,700 wakeups a second and 3.4 CPUs of work at f_max, whatever N), N from 10 to
1,000; and the built-in phone workloads ``browsing``, ``game`` and ``app-launch`` on gs101,
which run beside about 280 recorded Android system threads. Each run is what ``hetsched
run --no-lower-bound`` does (the result's ``wall_s``: the stepped run, Python's steps
included).

For each load: ns per event (wall_s over the run's events), events per wakeup, the
real-time factor (simulated s per wall s), and the bare event loop's ns per event (the
engine's own queue popped as many times at the run's longest queue, nothing simulated: the
design's floor). The growth columns are each load's ns per event over the 10-thread load's.

Two builds side by side (a change's before and after): ``--compare NAME=PYTHONPATH``, twice
or more, each a directory holding a ``hetsched`` package with its compiled engine. Every
(load, build) runs in its own process; the builds take turns, load by load and repeat by
repeat, so a slow spell of the machine falls on every build alike; the best of --repeat is
kept.

    python benchmarks/speed/phone_scale.py [--repeat 3] [--duration 5]
    python benchmarks/speed/phone_scale.py --compare before=/tmp/before/python --compare after=python
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

THREADS = (10, 30, 100, 300, 1000)
PHONE = ("browsing", "game", "app-launch")
WAKEUPS_PER_S = 13_700
CPUS_OF_WORK = 3.39


def rtapp_file(n: int, directory: str) -> str:
    """The issue's load: n periodic threads, the same total wakeup rate and work for every n."""
    period_us = round(1e6 * n / WAKEUPS_PER_S)
    run_us = round(CPUS_OF_WORK * period_us / n)
    path = os.path.join(directory, f"periodic{n}.json")
    with open(path, "w") as f:
        json.dump({"tasks": {"thread": {"instance": n, "loop": -1, "run": run_us,
                                        "timer": {"ref": "unique", "period": period_us}}}}, f)
    return path


def load_config(load: str, directory: str) -> dict:
    if load.startswith("threads="):
        return {"platform": "sm8150", "workload": rtapp_file(int(load.split("=")[1]), directory)}
    return {"platform": "gs101", "workload": load}


def one(load: str, duration: float, seed: int, directory: str) -> dict:
    """One run as `hetsched run --no-lower-bound` makes it; its wall time and counts."""
    from hetsched import Simulation, _engine

    cfg = load_config(load, directory)
    sim = Simulation(**cfg, scheduler="eas", governor="schedutil", seed=seed, lower_bound=False)
    doc = sim.run(duration).doc
    events = doc["events"]
    queue = doc["events_by_class"]["max_queue_len"]
    bare = min(_engine.bare_event_loop(events, max(queue, 1)) for _ in range(3))
    return {"wall_s": doc["wall_s"], "events": events, "wakeups": doc["counters"]["wakeups"],
            "threads": len(doc["tasks"]), "queue": queue, "bare_s": bare}


def run_in(path: str | None, load: str, a: argparse.Namespace, directory: str) -> dict:
    code = ("import json, sys; sys.path.insert(0, %r); import phone_scale as p; "
            "print(json.dumps(p.one(%r, %r, %r, %r)))"
            % (os.path.dirname(os.path.abspath(__file__)), load, a.duration, a.seed, directory))
    env = dict(os.environ)
    if path:
        env["PYTHONPATH"] = os.path.abspath(path)
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--duration", type=float, default=5.0, help="simulated seconds per run")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, nargs="*", default=list(THREADS))
    ap.add_argument("--phone", nargs="*", default=list(PHONE), help="built-in phone workloads (gs101)")
    ap.add_argument("--json", action="store_true", help="print one JSON line instead of a table")
    ap.add_argument("--compare", action="append", metavar="NAME=PYTHONPATH", default=[],
                    help="a build to run side by side with the others")
    a = ap.parse_args()
    builds = [tuple(c.split("=", 1)) for c in a.compare] or [("this", None)]
    if any(len(b) != 2 for b in builds):
        ap.error("--compare takes NAME=PYTHONPATH")
    loads = [f"threads={n}" for n in a.threads] + list(a.phone)
    best: dict[tuple[str, str], dict] = {}
    with tempfile.TemporaryDirectory() as directory:
        for _ in range(a.repeat):
            for load in loads:
                for name, path in builds:
                    r = run_in(path, load, a, directory)
                    key = (name, load)
                    if key not in best or r["wall_s"] < best[key]["wall_s"]:
                        best[key] = r | {"bare_s": min(r["bare_s"], best.get(key, r)["bare_s"])}
    rows = []
    for load in loads:
        for name, _ in builds:
            r = best[(name, load)]
            base = best.get((name, loads[0]))
            ns = 1e9 * r["wall_s"] / r["events"]
            rows.append({"load": load, "build": name, "threads": r["threads"], "events": r["events"],
                         "events_per_wakeup": r["events"] / max(r["wakeups"], 1),
                         "wakeups_per_s": r["wakeups"] / a.duration, "ns_per_event": ns,
                         "bare_ns_per_event": 1e9 * r["bare_s"] / r["events"],
                         "x_realtime": a.duration / r["wall_s"],
                         "ns_vs_first": ns / (1e9 * base["wall_s"] / base["events"]) if base else None,
                         "x_realtime_vs_first": (a.duration / r["wall_s"]) / (a.duration / base["wall_s"])
                         if base else None})
    if a.json:
        print(json.dumps(rows))
        return
    print(f"sm8150 (threads=N) and gs101 (phone workloads), eas, schedutil, no lower bound, {a.duration:g} s "
          f"simulated, best of {a.repeat}" + (", builds taking turns" if len(builds) > 1 else ""))
    print(f"{'load':12s} {'build':8s} {'tasks':>5s} {'wakeups/s':>9s} {'ev/wakeup':>9s} {'ns/event':>8s} "
          f"{'bare ns':>7s} {'x real':>7s} {'ns/ev vs ' + loads[0]:>20s}")
    for r in rows:
        print(f"{r['load']:12s} {r['build']:8s} {r['threads']:5d} {r['wakeups_per_s']:9.0f} "
              f"{r['events_per_wakeup']:9.2f} {r['ns_per_event']:8.0f} {r['bare_ns_per_event']:7.1f} "
              f"{r['x_realtime']:6.0f}x {r['ns_vs_first']:20.2f}")


if __name__ == "__main__":
    main()
