"""The runs the full reproductions spend their time on, timed build against build.

`hetsched reproduce all` at the full level is dominated by a few kinds of run, each many
times over (docs/reproduce.md#measured): hackbench on the Pixel 4's sm8150 under EAS with
its msm-4.14 kernel (Learning EAS's Table 5, and the background of Table 7; almost every
event a completion of a ~1 µs piece of work), and the CPU-bound jobs of the balanced core
assignment study restarted for hours of simulated time on two CPUs (its Fig. 2 at the full
level's scale). This script runs one of each, as the study's own code builds it, in a
process per build with that build's PYTHONPATH, the builds taking turns run by run; it
prints each build's best wall time, its events, and the ratio to the first build.

    python benchmarks/speed/reproduce_runs.py --compare before=/tmp/before/python \\
        --compare after=python [--repeat 3] [--cases hackbench,hmc-fig2]

Without --compare, the installed build alone.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

# name -> (what it is, the code that runs it and returns (simulated s, events))
CASES = {
    "hackbench": (
        "Learning EAS Table 5: hackbench 1 process 100000 on sm8150, eas, msm-4.14, to its end",
        "from hetsched import Simulation\n"
        "from hetsched.reproduce.learning_eas import kernel_knobs\n"
        "sim = Simulation(platform='sm8150', workload=['hackbench:groups=1,loops=100000'], scheduler='eas',\n"
        "                 knobs=kernel_knobs('sm8150'), seed=1, lower_bound=False)\n"
        "doc = sim.run(None).doc\n"
        "result = (doc['sim_duration_s'], doc['events'])\n"),
    "hmc-fig2": (
        "balanced core assignment Fig. 2: 8 SPEC jobs x 5 runs on hetero-2cpu, cfs, full scale",
        "from hetsched.reproduce import hmc_balance as h\n"
        "import hetsched.sim as S\n"
        "docs = []\n"
        "orig = S.Simulation.result\n"
        "def keep(self, *a, **k):\n"
        "    r = orig(self, *a, **k); docs.append(r.doc); return r\n"
        "S.Simulation.result = keep\n"
        "p, s, k = h.SPREAD['fig2']\n"
        "h.simulate(seed=1, platform=p, scheduler=s, knobs=k, scale_ms=100_000.0)\n"
        "result = (docs[-1]['sim_duration_s'], docs[-1]['events'])\n"),
}


def run_case(name: str, path: str | None) -> tuple[float, float, int]:
    code = ("import json, time\nt0 = time.perf_counter()\n" + CASES[name][1]
            + "print(json.dumps([time.perf_counter() - t0, *result]))\n")
    env = dict(os.environ)
    if path:
        env["PYTHONPATH"] = os.path.abspath(path)
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True).stdout
    wall, sim_s, events = json.loads(out.splitlines()[-1])
    return wall, sim_s, events


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--compare", action="append", metavar="NAME=PYTHONPATH", default=[])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    builds = [tuple(c.split("=", 1)) for c in a.compare] or [("installed", None)]
    if any(len(b) != 2 for b in builds):
        ap.error("--compare takes NAME=PYTHONPATH")
    cases = a.cases.split(",")
    for c in cases:
        if c not in CASES:
            ap.error(f"--cases: unknown case {c!r} (expected some of {', '.join(CASES)})")
    best: dict[tuple[str, str], tuple[float, float, int]] = {}
    t_start = time.perf_counter()
    for _ in range(a.repeat):
        for case in cases:
            for name, path in builds:
                r = run_case(case, path)
                if (case, name) not in best or r[0] < best[(case, name)][0]:
                    best[(case, name)] = r
    first = builds[0][0]
    rows = {f"{case}/{name}": {"wall_s": w, "sim_s": s, "events": n, "x_realtime": s / w,
                               "events_per_s": n / w, "wall_vs_" + first: w / best[(case, first)][0]}
            for case in cases for name, _ in builds for w, s, n in [best[(case, name)]]}
    if a.json:
        print(json.dumps(rows))
        return
    print(f"best of {a.repeat}, builds taking turns ({time.perf_counter() - t_start:.0f} s in all)")
    for case in cases:
        print(f"{case}: {CASES[case][0]}")
        for name, _ in builds:
            r = rows[f"{case}/{name}"]
            print(f"  {name:10s} wall {r['wall_s']:7.2f} s  {r['x_realtime']:7.0f}x real time  "
                  f"{r['events']:>10d} events  {r['events_per_s'] / 1e6:5.2f} M events/s  "
                  f"wall / {first}: {r['wall_vs_' + first]:.3f}")


if __name__ == "__main__":
    main()
