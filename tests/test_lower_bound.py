"""The minimum-energy lower bound (lower_bound.py, docs/lower-bound.md): never above the
energy any scheduler spent on the same work, exact on cases solvable by hand."""

import numpy as np
import pytest

import hetsched
from hetsched.lower_bound import _groups, _speeds, energy_lower_bound
from hetsched.workloads.spec import SpecBuilder, task

SCHEDS = ["cfs", "eas", "baseline"]
GOVS = ["schedutil", "performance", "powersave", "ondemand", "interactive"]
PLATFORMS = ["gs101", "juno-r0", "exynos5422", "sdm845", "hikey960"]


def _random_workload(rng: np.random.Generator) -> dict:
    b = SpecBuilder("random")
    s = b.sem("s")
    for i in range(int(rng.integers(1, 9))):
        ev = []
        for _ in range(int(rng.integers(1, 4))):
            kind = rng.choice(["run", "memrun", "runtime"], p=[0.7, 0.15, 0.15])
            ev.append({str(kind): int(rng.integers(50_000, 8_000_000))})
            ev.append({"sleep": int(rng.integers(0, 20_000_000))})
        if i == 0:
            ev.append({"sem_post": s})
        if i == 1:
            ev.append({"sem_wait": s})
        perf = None
        if rng.random() < 0.4:
            perf = {"ipc_exp": float(rng.uniform(0.3, 1.3)), "mem_frac": float(rng.uniform(0, 0.6)),
                    "cache_ns": int(rng.integers(0, 500_000)), "cache_slowdown": float(rng.uniform(0, 1))}
        b.add(task(f"t{i}", [{"loop": -1, "events": ev}], loop=-1, nice=int(rng.integers(-5, 6)),
                   policy="fifo" if rng.random() < 0.1 else "other",
                   rt_priority=int(rng.integers(1, 50)), perf=perf))
    return b.build()


@pytest.mark.parametrize("seed", range(12))
def test_the_bound_never_exceeds_the_energy_spent(seed):
    rng = np.random.default_rng([seed, 0xB0])
    wl = _random_workload(rng)
    plat = PLATFORMS[seed % len(PLATFORMS)]
    for sched in SCHEDS:
        gov = GOVS[int(rng.integers(len(GOVS)))]
        knobs = {"lower_bound.window_ms": float(rng.choice([4, 20, 100, 1000]))}
        r = hetsched.Simulation(platform=plat, workload=wl, scheduler=sched, governor=gov, knobs=knobs).run(1.5)
        assert 0 < r["energy_lower_bound_j"] <= r["energy_j"], (plat, sched, gov, knobs)


@pytest.mark.parametrize("seed", range(16))
def test_the_engines_solver_matches_the_lp(seed):
    # the engine solves each window as it closes (lower_bound.rs, dual simplex); HiGHS
    # solves the recorded table after the run: the same optimum to 1e-9, on random
    # workloads (plain, memory-bound and wall-clock work, perf models), five platforms
    # and the switcher, three schedulers, random governors, windows and lengths
    rng = np.random.default_rng([seed, 0x1B])
    wl = _random_workload(rng)
    plat = (PLATFORMS + ["exynos5422:switcher"])[seed % (len(PLATFORMS) + 1)]
    sched = SCHEDS[seed % len(SCHEDS)] if not plat.endswith("switcher") else "util-aware"
    gov = GOVS[int(rng.integers(len(GOVS)))] if not plat.endswith("switcher") else "ondemand"
    knobs = {"lower_bound.window_ms": float(rng.choice([4, 20, 100, 1000]))}
    duration = float(rng.choice([0.05, 0.7, 2.0]))
    docs = {}
    for mode in (True, "lp"):
        sim = hetsched.Simulation(platform=plat, workload=wl, scheduler=sched, governor=gov, knobs=knobs,
                                  seed=seed, lower_bound=mode)
        docs[mode] = sim.run(duration).doc
    fast, lp = docs[True]["energy_lower_bound_j"], docs["lp"]["energy_lower_bound_j"]
    assert docs[True]["energy_j"] == docs["lp"]["energy_j"]
    assert fast == pytest.approx(lp, rel=1e-9, abs=0), (plat, sched, gov, knobs, duration)
    assert 0 < fast <= docs[True]["energy_j"]


def test_no_bound_when_asked():
    r = hetsched.Simulation(platform="gs101", workload="periodic", lower_bound=False).run(0.5)
    assert r["energy_lower_bound_j"] is None and r["energy_over_bound"] is None
    with pytest.raises(hetsched.errors.InputError):
        hetsched.Simulation(platform="gs101", workload="periodic", lower_bound="simplex")


def test_an_idle_platform_costs_its_cheapest_idle_states():
    # a task that starts after the run: nothing runs, every CPU and cluster could sit in
    # its cheapest idle state the whole second
    b = SpecBuilder("idle")
    b.add(task("late", [{"loop": 1, "events": [{"run": 1000}]}], delay_ns=10**10))
    r = hetsched.Simulation(platform="juno-r0", workload=b.build()).run(1.0)
    p = hetsched.Simulation(platform="juno-r0", workload=b.build()).platform_spec
    floor_uw = sum(len(c["cpus"]) * min(s["power_uw"] for s in c["idle_states"])
                   + min(s["cluster_power_uw"] for s in c["idle_states"]) for c in p["clusters"])
    assert r["energy_lower_bound_j"] == pytest.approx(floor_uw * 1e-6, rel=2e-6)
    assert r["energy_lower_bound_j"] <= r["energy_j"]


# one cluster of 2 CPUs (capacity 1024), OPPs 1 GHz at 100 mW and 2 GHz at 400 mW, idle 0
_PLAT = {"name": "t", "clusters": [{
    "name": "c", "cpus": [0, 1], "capacity_orig": 1024,
    "opps": [{"khz": 1_000_000, "power_uw": 100_000, "cluster_power_uw": 0},
             {"khz": 2_000_000, "power_uw": 400_000, "cluster_power_uw": 0}],
    "idle_states": [{"name": "WFI", "power_uw": 0, "cluster_power_uw": 0}]}]}
MS = 1_000_000


def _bound(works: list[int], window_ns: int = 10 * MS) -> float:
    rec = {"ends_ns": [window_ns], "rows": [[0, i, w, 0, 0] for i, w in enumerate(works)]}
    names = [f"t{i}" for i in range(len(works))]
    return energy_lower_bound(rec, _PLAT, {"tasks": [{"name": n} for n in names]}, names).energy_j


def test_worked_examples_by_hand():
    # 1 ms of work in a 10-ms window: at 1 GHz it takes 2 ms x 100 mW = 0.2 mJ, at 2 GHz
    # 1 ms x 400 mW = 0.4 mJ: the bound is 0.2 mJ
    assert _bound([1 * MS]) == pytest.approx(0.2e-3, rel=1e-5)
    # 8 ms of work: 1 GHz alone would need 16 ms, more than the window on one CPU. With t1
    # at 1 GHz and t2 at 2 GHz: t1 + t2 <= 10, t1/2 + t2 >= 8; least 100 t1 + 400 t2 at
    # t1 = 4, t2 = 6: 2.8 mJ (spread over both CPUs it would be 1.6 mJ: the one-CPU limit binds)
    assert _bound([8 * MS]) == pytest.approx(2.8e-3, rel=1e-5)
    # two such tasks, one per CPU: twice that
    assert _bound([8 * MS, 8 * MS]) == pytest.approx(5.6e-3, rel=1e-5)
    # eight 1-ms tasks pool: 16 ms of CPU time at 1 GHz over 2 CPUs = 1.6 mJ
    assert _bound([1 * MS] * 8) == pytest.approx(1.6e-3, rel=1e-5)


def test_large_tasks_keep_their_own_limit():
    assert _groups([("a", 5.0), ("a", 9.0), ("b", 1.0), ("a", 7.0), ("a", 1.0), ("a", 2.0)]) == (
        ("a", 9.0, 1), ("a", 7.0, 1), ("a", 7.0, 2), ("a", 1.0, 1), ("b", 1.0, 1))


def test_speeds_follow_the_engine_model():
    p = hetsched.Simulation(platform="juno-r0", workload="phone-mix").platform_spec
    s = _speeds(p, None)
    big = max(p["clusters"], key=lambda c: c["capacity_orig"])
    assert s.max() == pytest.approx(1.0) and s.max() == pytest.approx(
        big["capacity_orig"] * big["opps"][-1]["khz"] / (1024 * big["opps"][-1]["khz"]))
    # a fully memory-bound task goes at 1 everywhere
    assert np.allclose(_speeds(p, {"mem_frac": 1.0}), 1.0)
