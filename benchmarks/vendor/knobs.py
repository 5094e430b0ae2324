"""Paper 003's study of Arm's vendor changes to EAS, in the simulator: each vendor knob on
its own against plain `eas` (schedutil), on the PCMark-like `pcmark` suite, paired by seed,
with the slides' statistics: a Wilcoxon signed-rank test per metric, results with
p > 0.01 excluded (shown as "—").

    python benchmarks/vendor/knobs.py [--platform gs101] [--seeds 20] [--background]
                                      [--kernel android-4.19] [--json]

Metrics: the PCMark-like scores (higher is better) and the CPU energy of the run (lower is
better; the slides measure the PMIC CPU rails). Each cell is the median over the seeds of
the per-seed relative change (%) from plain eas. `--background` runs `phone-mix` beside the
suite (an Android phone's threads, among them an RT audio mixer: pcmark alone has no RT
task, so `vendor.rt_placement` cannot fire on it) for a fixed `--duration` (4 s: the
suite ends within it on gs101 and sm8150, checked per run).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys

from scipy.stats import wilcoxon

from hetsched import Simulation

KNOBS = ["vendor.cpu_isolation", "vendor.migration_margins", "vendor.task_packing",
         "vendor.prev_cpu_fastpath", "vendor.rt_placement"]
COUNTER = {"vendor.cpu_isolation": "cpu_isolation", "vendor.migration_margins": "migration_margins",
           "vendor.task_packing": "task_packing", "vendor.prev_cpu_fastpath": "prev_cpu_fastpath",
           "vendor.rt_placement": "rt_placement"}
SCORES = ["web_score", "video_score", "writing_score", "photo_score", "data_score", "score"]
ALPHA = 0.01


def one(platform: str, knob: str | None, seed: int, background: bool, duration: float,
        kernel: str = "mainline-6.12") -> dict:
    wl = ["pcmark", "phone-mix"] if background else "pcmark"
    sim = Simulation(platform=platform, workload=wl, scheduler="eas", governor="schedutil",
                     knobs=({knob: 1} if knob else {}) | {"kernel": kernel}, seed=seed)
    r = sim.run(duration if background else None)
    m = r.metrics["pcmark"]
    if not m["complete"]:
        raise SystemExit(f"pcmark did not complete: {platform} {knob} seed {seed}")
    out = {s: m[s] for s in SCORES}
    out["energy_j"] = r.energy_j
    out["counter"] = r.doc["counters"]["vendor"][COUNTER[knob]] if knob else 0
    out["wakeups"] = r.doc["counters"]["wakeups"]
    return out


def compare(base: list[dict], new: list[dict], metric: str) -> tuple[float | None, float | None]:
    """(median % change, p) of a metric over paired runs; p None if every pair is equal."""
    a = [b[metric] for b in base]
    b = [n[metric] for n in new]
    diffs = [y - x for x, y in zip(a, b)]
    rel = statistics.median(100.0 * (y - x) / x for x, y in zip(a, b))
    if all(d == 0 for d in diffs):
        return 0.0, None
    return rel, float(wilcoxon(a, b).pvalue)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--platform", default="gs101")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--background", action="store_true", help="phone-mix beside pcmark")
    ap.add_argument("--duration", type=float, default=4.0, help="s, with --background")
    ap.add_argument("--kernel", default="mainline-6.12", help="kernel profile (android-4.19: the phone's)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    seeds = range(a.seeds)
    base = [one(a.platform, None, s, a.background, a.duration, a.kernel) for s in seeds]
    rows = {}
    for k in KNOBS:
        new = [one(a.platform, k, s, a.background, a.duration, a.kernel) for s in seeds]
        row = {"fired_per_run": statistics.mean(n["counter"] for n in new),
               "wakeups_per_run": statistics.mean(n["wakeups"] for n in new)}
        for metric in SCORES + ["energy_j"]:
            rel, p = compare(base, new, metric)
            row[metric] = {"median_change_pct": rel, "p": p, "excluded": p is None or p > ALPHA}
        rows[k] = row
    if a.json:
        json.dump({"platform": a.platform, "kernel": a.kernel, "seeds": a.seeds, "background": a.background, "rows": rows},
                  sys.stdout, indent=1)
        return 0
    cols = SCORES + ["energy_j"]
    wl = "pcmark + phone-mix" if a.background else "pcmark"
    print(f"{a.platform}, {wl}, eas/schedutil, {a.kernel}, {a.seeds} seeds; median change from plain eas (%), "
          f"Wilcoxon signed-rank p; — = p > {ALPHA} or identical")
    print("| knob | fired/run | " + " | ".join(cols) + " |")
    print("|---|---|" + "---|" * len(cols))
    for k, row in rows.items():
        cells = []
        for c in cols:
            x = row[c]
            if x["p"] is None:
                cells.append("= (identical)")
            elif x["excluded"]:
                cells.append(f"— ({x['median_change_pct']:+.2f}, p={x['p']:.2g})")
            else:
                cells.append(f"**{x['median_change_pct']:+.2f}** (p={x['p']:.1g})")
        print(f"| `{k}` | {row['fired_per_run']:.1f} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
