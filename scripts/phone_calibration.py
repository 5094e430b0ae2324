#!/usr/bin/env python3
"""The phone workloads' figures beside real phones', measured by the same code.

    python scripts/phone_calibration.py [REAL_TRACE ...] [--duration 3] [--seed 0] [--format markdown|csv]
    python scripts/phone_calibration.py --latency-seeds 5 [--kernel android-4.19]

Runs browsing, game and app-launch for ``--duration`` simulated seconds on gs101 (the
default profile, then pixel-5.10, the kernel the Pixel 6a ran) and on sm8150 under msm-4.14, each writing its ftrace text, and measures
every trace (the runs' and the real ones given, by default the Pixel 6a and Catapult traces
in ../shared/realdata/traces/) with hetsched.traces.figures, the code behind ``hetsched
trace-stats``; then each run's figures against the real phones doing the same thing
(hetsched.workloads.phone_reference: within a factor of 2 of their range, or not).
docs/workloads-mobile.md, "Calibration", holds its tables.

``--latency-seeds N`` prints instead each run's wakeup latency p50 on seeds 0 to N-1 and
their median, the figure tests/test_phone_reference.py checks; ``--kernel K`` adds the
three workloads on gs101 under kernel profile K (repeatable).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT.parent / "shared" / "realdata" / "traces"
DEFAULT_REAL = [REAL / "pixel6a_tensor_warm_startup.perfetto-trace", REAL / "catapult_2cpu_launcher_2012.html"]
RUNS = [(w, "gs101", {}) for w in ("browsing", "game", "app-launch")] + \
       [(w, "gs101", {"kernel": "pixel-5.10"}) for w in ("browsing", "game", "app-launch")] + \
       [(w, "sm8150", {"kernel": "msm-4.14"}) for w in ("browsing", "game", "app-launch")]

def _in_idle(f):
    if not f.has_cpu_idle:
        return None
    return 100 * sum(v for k, v in f.wakeups_by_idle_state.items() if k.startswith("state "))


def simulated(workload: str, platform: str, knobs: dict, duration: float, seed: int, tmp: Path):
    from hetsched.platforms import load_platform
    from hetsched.sim import Simulation, default_policy
    from hetsched.traces import load_trace
    from hetsched.traces.figures import phone_figures

    scheduler, governor, _ = default_policy(load_platform(platform))  # as `hetsched run` chooses
    sim = Simulation(platform=platform, workload=workload, scheduler=scheduler, governor=governor,
                     trace="ftrace", lower_bound=False, seed=seed, knobs=knobs)
    sim.run(duration)
    path = tmp / f"{workload}-{platform}.txt"
    path.write_text(sim.take_trace())
    return phone_figures(load_trace(path))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("real", nargs="*", type=Path)
    ap.add_argument("--duration", type=float, default=3.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--format", choices=("markdown", "csv"), default="markdown")
    ap.add_argument("--kernel", action="append", default=[],
                    help="also run the three workloads on gs101 under this kernel profile")
    ap.add_argument("--latency-seeds", type=int, default=0, metavar="N",
                    help="print each run's wakeup latency p50 on seeds 0..N-1 and their median")
    args = ap.parse_args()
    from hetsched.traces import load_trace
    from hetsched.traces.figures import phone_figures

    runs = RUNS + [(w, "gs101", {"kernel": k}) for k in args.kernel for w in ("browsing", "game", "app-launch")]
    if args.latency_seeds > 0:
        return latency_over_seeds(runs, args.duration, args.latency_seeds)

    cols = []
    for p in args.real or [p for p in DEFAULT_REAL if p.is_file()]:
        cols.append((p.name, phone_figures(load_trace(p))))
    with tempfile.TemporaryDirectory() as d:
        for w, plat, knobs in runs:
            label = f"{w} on {plat}" + (f" ({knobs['kernel']})" if knobs else "")
            cols.append((label, simulated(w, plat, knobs, args.duration, args.seed, Path(d))))
    from hetsched.workloads.phone_reference import FIGURES, figure_values, written

    values = [figure_values(f) for _, f in cols]
    rows = [(label, [written(key, v[key]) for v in values]) for key, label, _ in FIGURES]
    rows.append(("wakeups to a CPU in an idle state",
                 ["-" if _in_idle(f) is None else f"{_in_idle(f):.0f} %" for _, f in cols]))
    if args.format == "csv":
        print(",".join(["figure"] + [c for c, _ in cols]))
        for name, cells in rows:
            print(",".join([name] + [c.replace(",", "") for c in cells]))
    else:
        print("| figure | " + " | ".join(c for c, _ in cols) + " |")
        print("|---|" + "---|" * len(cols))
        for name, cells in rows:
            print(f"| {name} | " + " | ".join(cells) + " |")
        print()
        print(verdicts([(label, f) for label, f in cols if " on " in label]))
    return 0


def latency_over_seeds(runs: list, duration: float, n: int) -> int:
    """Each run's wakeup latency p50 (µs) on seeds 0..n-1 and their median, as markdown."""
    import statistics

    from hetsched.workloads.phone_reference import figure_values

    print("| run | " + " | ".join(f"seed {s}" for s in range(n)) + " | median |")
    print("|---|" + "---|" * (n + 1))
    with tempfile.TemporaryDirectory() as d:
        for w, plat, knobs in runs:
            label = f"{w} on {plat}" + (f" ({knobs['kernel']})" if knobs else "")
            lat = [figure_values(simulated(w, plat, knobs, duration, s, Path(d)))["wakeup_latency_us"]
                   for s in range(n)]
            print(f"| {label} | " + " | ".join(f"{x:.0f}" for x in lat) + f" | {statistics.median(lat):.0f} |",
                  flush=True)
    return 0


def verdicts(runs: list) -> str:
    """Each run's figures against the real phones doing the same thing
    (hetsched.workloads.phone_reference.REFERENCES): ✓ within a factor of 2 of their range,
    ✗ with the range beside it."""
    from hetsched.workloads.phone_reference import FIGURES, REFERENCES, figure_values, reference_range, \
        within_2x, written

    out = ["| figure (within 2x of the same activity's real phones?) | " + " | ".join(l for l, _ in runs) + " |",
           "|---|" + "---|" * len(runs)]
    for key, name, _ in FIGURES:
        cells = []
        for label, f in runs:
            v = figure_values(f)[key]
            rng = reference_range(key, REFERENCES[label.split(" on ")[0]])
            ok = within_2x(v, rng)
            shown = written(key, v)
            if ok is None:
                cells.append(shown)
            elif ok:
                cells.append(f"{shown} ✓")
            else:
                lo, hi = (written(key, x) for x in rng)
                cells.append(f"{shown} ✗ ({lo if lo == hi else f'{lo}-{hi}'})")
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
