"""What the msm-4.14 profile (WALT, schedtune, Qualcomm's schedutil, core_ctl) changes
against the same phone-era EAS on PELT (android-4.19), side by side in one run: on sm8150,
`eas` with schedutil, the game and pcmark workloads, a few seeds each.

    python benchmarks/kernels/walt_vs_pelt.py [--seeds 3] [--seconds 10]

Per workload and profile (means over the seeds): CPU energy, the workload's own metric,
per cluster the energy, the time-weighted mean frequency of its busy CPUs' residency and
its share of the tasks' run time, the migrations, and under msm-4.14 WALT's counters
(frequency reports, hispeed / pl raises) and core_ctl's isolations. docs/mechanisms/walt.md
quotes the output.
"""

from __future__ import annotations

import argparse
import statistics

from hetsched.sim import Simulation

PROFILES = ("android-4.19", "msm-4.14")
WORKLOADS = {"game": ("game", "fps", "frame_drops"), "pcmark": ("pcmark", "score", None)}


def one(workload: str, kernel: str, seed: int, seconds: float) -> dict:
    doc = Simulation(platform="sm8150", workload=workload, scheduler="eas", governor="schedutil",
                     knobs={"kernel": kernel}, seed=seed, lower_bound=False).run(seconds).doc
    name, metric, extra = WORKLOADS[workload]
    out = {"energy_j": doc["energy_j"], "metric": doc["metrics"][name][metric],
           "migrations": doc["counters"]["migrations"]}
    if extra:
        out["extra"] = doc["metrics"][name][extra]
    run_by_cluster: dict[str, float] = {}
    cluster_of = {str(c["cpu"]): c["cluster"] for c in doc["cpus"]}
    for c in doc["cpus"]:
        res = c["freq_residency_s"]
        t = sum(res.values())
        out[f"{c['cluster']}.busy_s"] = out.get(f"{c['cluster']}.busy_s", 0.0) + t
        out[f"{c['cluster']}.khz_s"] = out.get(f"{c['cluster']}.khz_s", 0.0) + sum(float(f) * s for f, s in res.items())
    for t in doc["tasks"]:
        for cpu, s in t["cpu_time_s"].items():
            cl = cluster_of[cpu]
            run_by_cluster[cl] = run_by_cluster.get(cl, 0.0) + s
    tot = sum(run_by_cluster.values()) or 1.0
    for cl, s in run_by_cluster.items():
        out[f"{cl}.share"] = s / tot
    for c in doc["clusters"]:
        out[f"{c['cluster']}.energy_j"] = c["energy_j"]
    w = doc["counters"].get("walt")
    if w:
        out.update({"walt.freq_reports": w["freq_reports"], "walt.hispeed": w["hispeed_raises"],
                    "walt.pl": w["pl_raises"]})
    out["core_ctl.isolations"] = doc["counters"]["vendor"]["cpu_isolation"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=10.0)
    args = ap.parse_args()
    clusters = ("silver", "gold", "prime")
    for wl, (_, metric, extra) in WORKLOADS.items():
        rows = {k: [one(wl, k, s, args.seconds) for s in range(args.seeds)] for k in PROFILES}
        m = {k: {key: statistics.mean(r[key] for r in rs if key in r) for key in rs[0]} for k, rs in rows.items()}
        print(f"\n## {wl} on sm8150, eas + schedutil, {args.seconds:g} s, {args.seeds} seeds (means)\n")
        print("| | " + " | ".join(PROFILES) + " |\n|---|" + "---|" * len(PROFILES))
        print(f"| CPU energy (J) | " + " | ".join(f"{m[k]['energy_j']:.3f}" for k in PROFILES) + " |")
        print(f"| {metric} | " + " | ".join(f"{m[k]['metric']:.2f}" for k in PROFILES) + " |")
        if extra:
            print(f"| {extra} | " + " | ".join(f"{m[k]['extra']:.1f}" for k in PROFILES) + " |")
        for c in clusters:
            print(f"| {c}: energy (J) | " + " | ".join(f"{m[k].get(f'{c}.energy_j', 0):.3f}" for k in PROFILES) + " |")
            print(f"| {c}: mean busy frequency (MHz) | " + " | ".join(
                f"{m[k].get(f'{c}.khz_s', 0) / max(m[k].get(f'{c}.busy_s', 0), 1e-9) / 1e3:.0f}" for k in PROFILES) + " |")
            print(f"| {c}: share of the tasks' run time | " + " | ".join(
                f"{100 * m[k].get(f'{c}.share', 0):.1f} %" for k in PROFILES) + " |")
        print("| migrations | " + " | ".join(f"{m[k]['migrations']:.0f}" for k in PROFILES) + " |")
        print("| core_ctl isolations | " + " | ".join(f"{m[k]['core_ctl.isolations']:.0f}" for k in PROFILES) + " |")
        w = m["msm-4.14"]
        print(f"\nmsm-4.14's WALT: {w['walt.freq_reports']:.0f} frequency reports per run, "
              f"{w['walt.hispeed']:.0f} hispeed and {w['walt.pl']:.0f} predicted-load raises.")


if __name__ == "__main__":
    main()
