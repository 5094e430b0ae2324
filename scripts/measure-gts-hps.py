#!/usr/bin/env python3
"""GTS and MediaTek's hot plug strategy (hps): gts, gts+hps and eas+hps against eas (and
cfs) with the game and app-launch workloads; prints the markdown table of docs/schedulers.md.

    PYTHONPATH=python python scripts/measure-gts-hps.py exynos5422 gs101
"""
import sys

from hetsched import Simulation

CONFIGS = [("eas", {}), ("cfs", {}), ("gts", {}), ("gts", {"hotplug": "hps"}), ("eas", {"hotplug": "hps"})]
WORKLOADS = [("game:fps=60,level=3", 10.0), ("game:fps=30,level=1", 10.0),
             ("app-launch:app=browser", None), ("app-launch:app=game3d", None)]


def main(platforms):
    print("| platform | workload | scheduler | energy J | FPS / drops / mA | entry ms mean / max "
          "| HMP up / down | migrations | mean online CPUs | cpu_down / cpu_up |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for plat in platforms:
        for wl, dur in WORKLOADS:
            for sched, knobs in CONFIGS:
                sim = Simulation(platform=plat, workload=wl, scheduler=sched, governor="schedutil",
                                 knobs=dict(knobs), seed=0)
                d = sim.run(dur).doc
                name = wl.split(":")[0]
                m = d["metrics"].get(name, {})
                c, hp = d["counters"], d.get("hotplug")
                game = (f"{m['fps']:.1f} / {m['frame_drops']:.0f} / {m['current_ma']:.0f}"
                        if name == "game" else "")
                entry = (f"{m['entry_ms_mean']:.0f} / {m['entry_ms_max']:.0f}"
                         if name == "app-launch" else "")
                pc = c["policy"]
                hmp = (f"{pc['hmp_up_migrations']} / {pc['hmp_down_migrations']}"
                       if "hmp_up_migrations" in pc else "")
                online = f"{hp['mean_online_cpus']:.2f}" if hp else "all"
                plug = f"{hp['cpu_down']} / {hp['cpu_up']}" if hp else ""
                label = sched + ("+hps" if knobs else "")
                print(f"| {plat} | {wl} | {label} | {d['energy_j']:.3f} | {game} | {entry} | {hmp} "
                      f"| {c['migrations']} | {online} | {plug} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or ["exynos5422"])
