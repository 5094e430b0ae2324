"""Learning EAS learning curve: a 60 fps game on gs101, minute by minute, EAS
against Learning EAS that carries its weights (and knob values) from minute to minute.

    PYTHONPATH=python python benchmarks/learning/curve.py --minutes 12 --out docs/learning-curve.png

Every minute is one Simulation of 60 s; Learning EAS restores its state file at the start
of each and saves it at the end (``learning.state``, ``learning.restore_knobs=1``), so the
run is one continuous training of ``--minutes`` simulated minutes. ``--switch-at M`` swaps
the workload to ``--workload2`` from minute M on (a change of workload).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np


def minute(workload: str, scheduler: str, knobs: dict, seed: int):
    from hetsched import Simulation

    sim = Simulation(platform="gs101", workload=workload, scheduler=scheduler, knobs=knobs, seed=seed)
    res = sim.run(60.0)
    g = res.metrics.get("game", {})
    return sim, {"energy_j": res.energy_j, "drops": g.get("frame_drops", float("nan")),
                 "fps": g.get("fps", float("nan"))}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=int, default=12)
    ap.add_argument("--workload", default="game:fps=60,level=3")
    ap.add_argument("--workload2", default="game:fps=60,level=1")
    ap.add_argument("--switch-at", type=int, default=0, help="minute from which workload2 runs (0: never)")
    ap.add_argument("--set", action="append", default=[], help="learning.KEY=VALUE for Learning EAS")
    ap.add_argument("--out", default="docs/learning-curve.png")
    ap.add_argument("--json-out", default=None)
    a = ap.parse_args(argv)
    extra = dict(kv.split("=", 1) for kv in a.set)
    t0 = time.perf_counter()
    rows, steps = [], []
    with tempfile.TemporaryDirectory() as td:
        state = str(Path(td) / "state.json")
        for m in range(a.minutes):
            wl = a.workload2 if a.switch_at and m >= a.switch_at else a.workload
            _, eas = minute(wl, "eas", {}, seed=m)
            knobs = {"learning.state": state, "learning.restore_knobs": "1", "learning.keep_record": "1", **extra}
            sim, le = minute(wl, "learning-eas", knobs, seed=m)
            for r in sim.learning.record:
                steps.append({**r, "t_s": r["t_s"] + 60.0 * m})
            rows.append({"minute": m + 1, "workload": wl, "eas": eas, "learning_eas": le,
                         "target_load": {x.cluster: x.target_load for x in sim.learning.tl_agents},
                         "migration_cost_ns": sim.learning.mc_agent.cost if sim.learning.mc_agent else None})
            print(f"min {m + 1:2d} {wl}: EAS {eas['energy_j']:.2f} J {eas['drops']:.0f} drops | "
                  f"Learning EAS {le['energy_j']:.2f} J {le['drops']:.0f} drops | TL "
                  + " ".join(f"{k}={v:.3f}" for k, v in rows[-1]["target_load"].items())
                  + (f" | mc {rows[-1]['migration_cost_ns']:.0f}" if rows[-1]["migration_cost_ns"] else ""),
                  flush=True)
    plot(rows, steps, a.out, a)
    settle = settling(steps, 60.0 * a.switch_at if a.switch_at else 0.0, 60.0 * a.minutes)
    for k, v in settle.items():
        print(f"settling after t={60 * a.switch_at if a.switch_at else 0} s, {k}: {v}")
    out = {"rows": rows, "settling_s": settle, "steps_every_s": thin(steps), "wall_s": time.perf_counter() - t0, "args": vars(a)}
    if a.json_out:
        Path(a.json_out).write_text(json.dumps(out, indent=1) + "\n")
    return out


def thin(steps, every_s: float = 1.0) -> list:
    """The record, one row per agent and cluster per ``every_s`` (for the JSON)."""
    seen, out = set(), []
    for r in steps:
        k = (r["agent"], r["cluster"], int(r["t_s"] // every_s))
        if k not in seen:
            seen.add(k)
            out.append({k2: v for k2, v in r.items()})
    return out


def settling(steps, t_change: float, t_end: float, window_s: float = 10.0, band: float = 0.02,
             band_mc: float = 34054.0) -> dict:
    """Seconds after ``t_change`` from which the ``window_s`` running mean of each agent's
    value stays within ``band`` (TARGET_LOAD; ``band_mc`` ns for the cost, two steps) of its
    mean over the last minute; None if it never does."""
    import pandas as pd

    df = pd.DataFrame(steps)
    out = {}
    for (agent, cluster), g in df[df.t_s >= t_change].groupby(["agent", "cluster"], sort=False):
        g = g.set_index(pd.to_timedelta(g.t_s, unit="s"))
        mean = g.value.rolling(f"{window_s}s").mean() if agent == "target_load" else g.value
        final = g.value[g.t_s >= t_end - 60.0].mean()
        b = band if agent == "target_load" else band_mc
        outside = g.t_s[(mean - final).abs() > b]
        name = f"{agent}:{cluster}" if cluster else agent
        out[name] = 0.0 if outside.empty else (
            None if outside.iloc[-1] >= t_end - window_s else round(float(outside.iloc[-1] - t_change), 1))
    return out


def plot(rows, steps, path, a):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    df = pd.DataFrame(steps)
    fig, ax = plt.subplots(4, 1, figsize=(9, 11), sharex=True)
    tl = df[df.agent == "target_load"]
    for c, g in tl.groupby("cluster", sort=False):
        ax[0].plot(g.t_s / 60, g.value, lw=0.8, label=f"TARGET_LOAD {c}")
    ax[0].axhline(0.8, color="k", ls=":", lw=0.8, label="EAS (0.8)")
    ax[0].set_ylabel("TARGET_LOAD")
    ax[0].legend(fontsize=7, loc="best")
    mc = df[df.agent == "migration_cost"]
    if len(mc):
        ax[1].step(mc.t_s / 60, mc.value / 1000, where="post", label="sched_migration_cost")
        ax[1].axhline(500, color="k", ls=":", lw=0.8, label="EAS (500 us)")
        ax[1].legend(fontsize=7)
    ax[1].set_ylabel("migration cost (us)")
    for c, g in tl.groupby("cluster", sort=False):
        ax[2].plot(g.t_s / 60, g.error.abs().rolling(100, min_periods=1).mean(), lw=0.8, label=f"|eq. 12 error| {c}")
        ax[2].plot(g.t_s / 60, g.w_norm / g.w_norm.iloc[0], lw=0.8, ls="--", label=f"|weights|/initial {c}")
    ax[2].set_yscale("log")
    ax[2].legend(fontsize=6, ncol=2)
    ax[2].set_ylabel("error (10 s mean), weights")
    mins = [r["minute"] for r in rows]
    e_eas = np.array([r["eas"]["energy_j"] for r in rows])
    e_le = np.array([r["learning_eas"]["energy_j"] for r in rows])
    ax[3].plot(np.array(mins) - 0.5, 100 * (e_le / e_eas - 1), "o-", label="energy vs EAS (%)")
    ax[3].set_ylabel("energy: Learning EAS vs EAS (%)")
    ax[3].legend(fontsize=7, loc="upper left")
    axd = ax[3].twinx()
    d_eas = np.array([r["eas"]["drops"] for r in rows])
    d_le = np.array([r["learning_eas"]["drops"] for r in rows])
    axd.bar(np.array(mins) - 0.7, d_eas, width=0.35, alpha=0.4, color="C7", label="EAS frame drops / min")
    axd.bar(np.array(mins) - 0.3, d_le, width=0.35, alpha=0.4, color="C3", label="Learning EAS frame drops / min")
    axd.set_ylabel("frame drops per minute")
    axd.legend(fontsize=7, loc="upper right")
    ax[3].axhline(0, color="k", lw=0.6)
    ax[3].set_xlabel("simulated minutes")
    if a.switch_at:
        for x in ax:
            x.axvline(a.switch_at, color="gray", ls="--", lw=0.8)
    fig.suptitle(f"Learning EAS on gs101: {a.workload}" + (f" -> {a.workload2} at min {a.switch_at}" if a.switch_at else ""),
                 fontsize=10)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
