"""Two builds of hetsched side by side: energy, wakeup latency and migrations of the same
runs under each, with the change in percent.

    python benchmarks/builds/compare.py --before OLD/python --after python [--seconds 3]

OLD/python is the `python/` directory of another checkout whose extension is built, e.g.

    git worktree add /tmp/old REV
    (cd /tmp/old && cargo build --release -p hetsched-py &&
     cp target/release/lib_engine.so python/hetsched/_engine.abi3.so)

Each build runs in its own interpreter (PYTHONPATH), so the two never share a module.
The matrix: cfs and eas on gs101 and sm8150 with the built-in workloads phone-mix,
periodic, hackbench and game, seed 1.
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
for plat, wl, s in cases:
    d = hetsched.Simulation(platform=plat, workload=wl, scheduler=s, seed=1).run(seconds).doc
    m = d["metrics"]
    out[f"{plat}/{wl}/{s}"] = {"energy_j": d["energy_j"], "lat_us": m["wakeup_latency_us_mean"],
                               "p99_us": m["wakeup_latency_us_p99"], "migrations": d["counters"]["migrations"]}
json.dump(out, sys.stdout)
"""


def run_build(path: Path, seconds: float) -> dict:
    cases = [(p, w, s) for p in PLATFORMS for w in WORKLOADS for s in SCHEDULERS]
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
    ap.add_argument("--json", type=Path, help="also write both builds' figures here")
    a = ap.parse_args()
    before, after = run_build(a.before, a.seconds), run_build(a.after, a.seconds)
    print(f"{a.seconds:g} s per run, seed 1; change = after / before - 1")
    print(f"{'run':28}{'energy J before':>16}{'after':>9}{'change':>9}"
          f"{'latency us before':>19}{'after':>9}{'change':>9}{'p99 us':>17}{'migrations':>16}")
    changes: dict[str, tuple[list[float], list[float]]] = {s: ([], []) for s in SCHEDULERS}
    for k, x in before.items():
        y = after[k]
        de, dl = pct(x["energy_j"], y["energy_j"]), pct(x["lat_us"], y["lat_us"])
        changes[k.split("/")[-1]][0].append(de)
        changes[k.split("/")[-1]][1].append(dl)
        print(f"{k:28}{x['energy_j']:16.3f}{y['energy_j']:9.3f}{de:+8.1f}%{x['lat_us']:19.1f}"
              f"{y['lat_us']:9.1f}{dl:+8.1f}%{x['p99_us']:9.0f}{y['p99_us']:8.0f}{x['migrations']:8}{y['migrations']:8}")
    for s, (de, dl) in changes.items():
        print(f"{s}: energy change median {statistics.median(de):+.1f} % [{min(de):+.1f}, {max(de):+.1f}], "
              f"mean wakeup latency median {statistics.median(dl):+.1f} % [{min(dl):+.1f}, {max(dl):+.1f}]")
    if a.json:
        a.json.write_text(json.dumps({"before": before, "after": after}, indent=1))


if __name__ == "__main__":
    main()
