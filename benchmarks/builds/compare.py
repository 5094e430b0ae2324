"""Two builds of hetsched side by side: energy, wakeup latency and migrations of the same
runs under each, with the change in percent.

    python benchmarks/builds/compare.py --before OLD/python --after python [--seconds 3]
        [--seeds 0 1 2] [--platforms gs101 sm8150:msm-4.14] [--workloads browsing game ...]

OLD/python is the `python/` directory of another checkout whose extension is built, e.g.

    git worktree add /tmp/old REV
    (cd /tmp/old && cargo build --release -p hetsched-py &&
     cp target/release/lib_engine.so python/hetsched/_engine.abi3.so)

Each build runs in its own interpreter (PYTHONPATH), so the two never share a module.
The matrix, by default: cfs and eas on gs101 and sm8150 with the built-in workloads
phone-mix, periodic, hackbench and game, seed 1. A platform may name its kernel profile
(`sm8150:msm-4.14`). Runs of several seeds are paired by seed: a case's change is the mean
of its seeds' changes, since a 3-s run of a phone's load is chaotic enough that one seed's
change says little about a mechanism's effect.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

PLATFORMS = ("gs101", "sm8150")
WORKLOADS = ("phone-mix", "periodic", "hackbench", "game")
SCHEDULERS = ("cfs", "eas")

WORKER = """
import json, sys
import hetsched
seconds, cases = float(sys.argv[1]), json.loads(sys.argv[2])
out = {}
for plat, wl, s, seed in cases:
    name, _, kernel = plat.partition(":")
    knobs = {"kernel": kernel} if kernel else {}
    d = hetsched.Simulation(platform=name, workload=wl, scheduler=s, seed=seed, knobs=knobs,
                            lower_bound=False).run(seconds).doc
    m = d["metrics"]
    out[f"{plat}/{wl}/{s}/{seed}"] = {"energy_j": d["energy_j"], "lat_us": m["wakeup_latency_us_mean"],
                                      "p99_us": m["wakeup_latency_us_p99"],
                                      "migrations": d["counters"]["migrations"]}
json.dump(out, sys.stdout)
"""


def run_build(path: Path, seconds: float, platforms, workloads, schedulers, seeds) -> dict:
    cases = [(p, w, s, seed) for p in platforms for w in workloads for s in schedulers for seed in seeds]
    env = {**os.environ, "PYTHONPATH": str(path.resolve())}
    proc = subprocess.run([sys.executable, "-c", WORKER, str(seconds), json.dumps(cases)],
                          env=env, capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)


def pct(a: float, b: float) -> float:
    return 100.0 * (b / a - 1.0) if a else 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, required=True, help="python/ directory of the old build")
    ap.add_argument("--after", type=Path, required=True, help="python/ directory of the new build")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1])
    ap.add_argument("--platforms", nargs="+", default=list(PLATFORMS), help="NAME or NAME:KERNEL_PROFILE")
    ap.add_argument("--workloads", nargs="+", default=list(WORKLOADS))
    ap.add_argument("--schedulers", nargs="+", default=list(SCHEDULERS))
    ap.add_argument("--json", type=Path, help="also write both builds' figures here")
    a = ap.parse_args()
    matrix = (a.platforms, a.workloads, a.schedulers, a.seeds)
    before, after = run_build(a.before, a.seconds, *matrix), run_build(a.after, a.seconds, *matrix)
    print(f"{a.seconds:g} s per run, seeds {' '.join(map(str, a.seeds))}; change = after / before - 1, "
          f"a case's the mean of its seeds'")
    print(f"{'case':34}{'energy J before':>16}{'after':>9}{'change':>9}"
          f"{'latency us before':>19}{'after':>9}{'change':>9}{'migrations':>20}")
    cases: dict[str, list[tuple]] = {}
    for k, x in before.items():
        cases.setdefault(k.rsplit("/", 1)[0], []).append((x, after[k]))
    changes: dict[str, tuple[list[float], list[float]]] = {s: ([], []) for s in a.schedulers}
    for case, pairs in cases.items():
        de = statistics.fmean(pct(x["energy_j"], y["energy_j"]) for x, y in pairs)
        dl = statistics.fmean(pct(x["lat_us"], y["lat_us"]) for x, y in pairs)
        changes[case.split("/")[-1]][0].append(de)
        changes[case.split("/")[-1]][1].append(dl)
        mean = lambda side, key: statistics.fmean(p[side][key] for p in pairs)  # noqa: E731
        print(f"{case:34}{mean(0, 'energy_j'):16.3f}{mean(1, 'energy_j'):9.3f}{de:+8.1f}%"
              f"{mean(0, 'lat_us'):19.1f}{mean(1, 'lat_us'):9.1f}{dl:+8.1f}%"
              f"{mean(0, 'migrations'):10.0f}{mean(1, 'migrations'):10.0f}")
    for s, (de, dl) in changes.items():
        print(f"{s}: energy change median {statistics.median(de):+.1f} % [{min(de):+.1f}, {max(de):+.1f}], "
              f"mean wakeup latency median {statistics.median(dl):+.1f} % [{min(dl):+.1f}, {max(dl):+.1f}]")
    if a.json:
        a.json.write_text(json.dumps({"before": before, "after": after}, indent=1))


if __name__ == "__main__":
    main()
