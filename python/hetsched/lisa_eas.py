"""LISA's EAS behaviour cases, sized as LISA sizes them, against the best fixed placement.

LISA (ARM-software/lisa, ``lisa/tests/scheduler/eas_behaviour.py`` and
``lisa/tests/base.py``) runs periodic rt-app tasks of period ``TASK_PERIOD_MS = 16`` whose
duty cycle is scaled from one CPU's capacity (``unscaled_utilization(plat_info, cpu, pct)
= int(capacity(cpu) / 1024 * pct)``, a percentage of the biggest CPU at f_max, rt-app's
unit):

* OneSmallTask: one task at 50 % of the smallest CPU;
* ThreeSmallTasks: three such tasks (allowed margin 20 %, not 5 %: the test only wants
  the big CPUs left alone);
* TwoBigTasks: two tasks at 80 % of the biggest CPU;
* TwoBigThreeSmall: three small tasks and two at 70 % of the biggest CPU.

LISA has no energy meter: ``test_task_placement`` compares the Energy Model's estimate of
the placement seen in the trace (each task's expected utilisation on the CPU it last ran
on) with the estimate of the optimal placement (``EnergyModel.get_optimal_placements``: a
brute-force search over every task-to-CPU mapping that leaves no CPU over its capacity),
and fails when the first exceeds the second by more than ``energy_est_threshold_pct``.
The simulator meters energy, so here both sides are runs of the engine: the EAS run, and
the least energy of the same tasks pinned (``cpus`` of one CPU each) in every mapping that
LISA's search would consider (per-CPU utilisation within capacity, LISA's
``capacity_margin_pct = 20``). Both sides pay the same idle, cluster and cpufreq costs, so
the ratio measures placement, which is what LISA's estimate isolates.

The misfit case follows ``lisa/tests/scheduler/misfit.py`` StaggeredFinishes: a 100 %
task spawned pinned for ``PIN_DELAY_S`` on a smallest CPU, then free; misfit handling
should move it to a biggest CPU, where it should spend most of its time.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Mapping

from hetsched.platforms import load_platform
from hetsched.sim import Simulation
from hetsched.workloads.rtapp import periodic
from hetsched.workloads.spec import task, workload

__all__ = ["CASES", "THRESHOLD_PCT", "case_tasks", "case_spec", "run_case", "best_fixed_placement",
           "misfit_hog", "CaseResult"]

# lisa/tests/base.py RTATestBundle.TASK_PERIOD_MS
TASK_PERIOD_MS = 16
# The runs are 2 s (LISA's Periodic(duration_s=1)); 125 periods of 16 ms.
DURATION_S = 2.0
# RTATestBundle._BUFFER_PHASE_DURATION_S = pelt_settling_time() * 2: every task first runs
# a copy of its first phase for the time PELT takes to settle (0 to within 1 of 1024:
# 10 half-lives of 32 windows of 1.024 ms = 327.68 ms), twice; LISA's trace window starts
# after it, so a new task's first placements (its util_avg from post_init_entity_util_avg)
# are not judged. Here: whole periods covering 655.36 ms, and energy is counted after them.
BUFFER_PERIODS = -(-int(2 * 10 * 32 * 1024) // (TASK_PERIOD_MS * 1000))   # 41 periods, 656 ms
BUFFER_S = BUFFER_PERIODS * TASK_PERIOD_MS / 1000
# EASBehaviour.test_task_placement(energy_est_threshold_pct=5); ThreeSmallTasks: 20
THRESHOLD_PCT = {"OneSmallTask": 5, "ThreeSmallTasks": 20, "TwoBigTasks": 5, "TwoBigThreeSmall": 5}
CASES = tuple(THRESHOLD_PCT)
# test_task_placement(capacity_margin_pct=20): the optimal-placement search keeps a mapping
# only if every CPU's utilisation leaves this margin of its capacity.
CAPACITY_MARGIN_PCT = 20
# misfit.py StaggeredFinishes.PIN_DELAY_S
PIN_DELAY_S = 0.001


def capacity_classes(platform: str) -> list[tuple[int, list[int]]]:
    """(capacity, cpus) per cluster, smallest first (plat_info["capacity-classes"])."""
    spec = load_platform(platform).to_spec()
    return sorted((c["capacity_orig"], sorted(c["cpus"])) for c in spec["clusters"])


def unscaled_utilization(capacity: int, pct: int) -> int:
    """lisa/tests/base.py: ``int(capacity / capacity_scale * pct)``, capacity_scale 1024."""
    return int(capacity / 1024 * pct)


def case_tasks(case: str, platform: str) -> list[tuple[str, int]]:
    """(name, duty cycle in % of the biggest CPU at f_max) per task of the case."""
    classes = capacity_classes(platform)
    small = unscaled_utilization(classes[0][0], 50)
    if case == "OneSmallTask":
        return [("small", small)]
    if case == "ThreeSmallTasks":
        return [(f"small_{i}", small) for i in range(3)]
    if case == "TwoBigTasks":
        return [(f"big_{i}", unscaled_utilization(classes[-1][0], 80)) for i in range(2)]
    if case == "TwoBigThreeSmall":
        big = unscaled_utilization(classes[-1][0], 70)
        return [(f"small_{i}", small) for i in range(3)] + [(f"big_{i}", big) for i in range(2)]
    raise ValueError(f"unknown case {case!r}; one of {CASES}")


def case_spec(case: str, platform: str, cpus: Mapping[str, int] | None = None) -> dict:
    """The case as a WorkloadSpec: LISA's Periodic(duty_cycle_pct, period_ms=16) is
    ``run`` of duty x period invariant work then a 16 ms timer; ``cpus`` pins tasks."""
    count = BUFFER_PERIODS + round(DURATION_S * 1000 / TASK_PERIOD_MS)
    period_us = TASK_PERIOD_MS * 1000
    tasks = [periodic(name, period_us, duty * period_us / 100, count=count,
                      cpus=None if cpus is None else [cpus[name]])
             for name, duty in case_tasks(case, platform)]
    return workload(case, tasks, duration_ns=int((BUFFER_S + DURATION_S) * 1e9))


def _run(platform: str, spec: dict, knobs: Mapping[str, Any] | None, kernel: str | None,
         buffer_s: float = BUFFER_S) -> dict:
    """The run's result document, with ``window_energy_j``: the energy after the buffer."""
    kw: dict[str, Any] = {"knobs": dict(knobs or {})}
    if kernel is not None:
        kw["knobs"]["kernel"] = kernel
    sim = Simulation(platform=platform, workload=spec, scheduler="eas", seed=0, lower_bound=False, **kw)
    sim.run_until(round(buffer_s * 1e9))
    e0 = sim.observe()["energy_j"]
    doc = sim.run(DURATION_S).doc
    doc["window_energy_j"] = doc["energy_j"] - e0
    return doc


def _placements(case: str, platform: str):
    """One task-to-CPU mapping per distinct per-cluster load pattern that leaves every
    CPU within (100 - CAPACITY_MARGIN_PCT) % of its capacity; CPUs of a cluster are
    interchangeable, and so are tasks of equal duty (LISA's search keeps one mapping per
    utilisation vector for the same reason)."""
    tasks = case_tasks(case, platform)
    classes = capacity_classes(platform)
    cpu_cap = {c: cap for cap, cpus in classes for c in cpus}
    seen = set()
    for mapping in itertools.product(sorted(cpu_cap), repeat=len(tasks)):
        load = {c: [] for c in cpu_cap}
        for (_, duty), c in zip(tasks, mapping):
            load[c].append(duty)
        if any(sum(d) * 1024 / 100 > cpu_cap[c] * (100 - CAPACITY_MARGIN_PCT) / 100 for c, d in load.items()):
            continue
        key = tuple(tuple(sorted(tuple(sorted(load[c])) for c in cpus)) for _, cpus in classes)
        if key in seen:
            continue
        seen.add(key)
        yield {name: c for (name, _), c in zip(tasks, mapping)}


def best_fixed_placement(case: str, platform: str, knobs: Mapping[str, Any] | None = None,
                         kernel: str | None = None) -> tuple[float, dict]:
    """(energy in J, mapping) of the pinned run of least energy."""
    best = None
    for mapping in _placements(case, platform):
        e = _run(platform, case_spec(case, platform, mapping), knobs, kernel)["window_energy_j"]
        if best is None or e < best[0]:
            best = (e, mapping)
    if best is None:
        raise ValueError(f"{case} does not fit {platform} (LISA: EnergyModelCapacityError)")
    return best


@dataclass
class CaseResult:
    case: str
    platform: str
    energy_j: float
    best_j: float
    best_mapping: dict
    overutilized_set: int
    migrations: dict          # task -> migrations
    cluster_time_s: dict      # task -> {cluster: run time}

    @property
    def over_best_pct(self) -> float:
        return 100 * (self.energy_j / self.best_j - 1)

    @property
    def passed(self) -> bool:
        return self.over_best_pct < THRESHOLD_PCT[self.case]


def _cluster_times(doc: dict, platform: str) -> dict:
    spec = load_platform(platform).to_spec()
    cluster_of = {c: cl["name"] for cl in spec["clusters"] for c in cl["cpus"]}
    out = {}
    for t in doc["tasks"]:
        per: dict[str, float] = {}
        for cpu, s in t["cpu_time_s"].items():
            per[cluster_of[int(cpu)]] = per.get(cluster_of[int(cpu)], 0.0) + s
        out[t["name"]] = per
    return out


def run_case(case: str, platform: str, knobs: Mapping[str, Any] | None = None,
             kernel: str | None = None) -> CaseResult:
    doc = _run(platform, case_spec(case, platform), knobs, kernel)
    best_j, mapping = best_fixed_placement(case, platform, knobs, kernel)
    return CaseResult(case, platform, doc["window_energy_j"], best_j, mapping, doc["counters"]["overutilized_set"],
                      {t["name"]: t["migrations"] for t in doc["tasks"]}, _cluster_times(doc, platform))


def misfit_hog(platform: str, knobs: Mapping[str, Any] | None = None, kernel: str | None = None) -> float:
    """Share of a 100 % task's run time on the biggest CPUs: spawned pinned to the first
    smallest CPU for PIN_DELAY_S, then free to run anywhere for DURATION_S."""
    classes = capacity_classes(platform)
    period_ns = TASK_PERIOD_MS * 1_000_000
    count = round(DURATION_S * 1000 / TASK_PERIOD_MS)
    # Periodic(duty_cycle_pct=100): run a whole period's work, then the timer (already due)
    hog = task("misfit", [
        {"loop": 1, "events": [{"run": int(PIN_DELAY_S * 1e9)}]},
        {"loop": 1, "events": [{"setattr": {"cpus": None}}]},
        {"loop": count, "events": [{"run": period_ns},
                                   {"timer": {"id": 0, "period_ns": period_ns, "mode": "relative"}}]},
    ], cpus=[classes[0][1][0]])
    # misfit.py sets _BUFFER_PHASE_DURATION_S = 0: the whole run counts
    doc = _run(platform, workload("misfit", [hog], duration_ns=int(DURATION_S * 1e9)), knobs, kernel, 0.0)
    t = doc["tasks"][0]
    total = sum(t["cpu_time_s"].values())
    big = sum(s for c, s in t["cpu_time_s"].items() if int(c) in classes[-1][1])
    return big / total


def table(platforms=("juno-r0", "hikey960", "gs101"), variants=None) -> list[dict]:
    """Rows of the docs' table: energy over the best fixed placement, per case, platform
    and variant (name -> (knobs, kernel))."""
    variants = variants or {"eevdf": ({}, None), "fair.eevdf=0": ({"fair.eevdf": 0}, None)}
    rows = []
    for p in platforms:
        for v, (knobs, kernel) in variants.items():
            for c in CASES:
                r = run_case(c, p, knobs, kernel)
                rows.append({"platform": p, "variant": v, "case": c, "over_best_pct": r.over_best_pct,
                             "limit_pct": THRESHOLD_PCT[c], "overutilized_set": r.overutilized_set,
                             "migrations": r.migrations, "cluster_time_s": r.cluster_time_s,
                             "best": r.best_mapping})
            rows.append({"platform": p, "variant": v, "case": "misfit hog",
                         "big_share_pct": 100 * misfit_hog(p, knobs, kernel)})
    return rows


if __name__ == "__main__":
    import sys
    for row in table(tuple(sys.argv[1:]) or ("juno-r0", "hikey960", "gs101")):
        if "big_share_pct" in row:
            print(f"{row['platform']:9} {row['variant']:13} misfit hog on biggest: {row['big_share_pct']:.1f} %")
            continue
        print(f"{row['platform']:9} {row['variant']:13} {row['case']:17} {row['over_best_pct']:+7.1f} % "
              f"(limit {row['limit_pct']}) OU={row['overutilized_set']} mig={row['migrations']} "
              f"time={ {k: {c: round(s, 3) for c, s in v.items()} for k, v in row['cluster_time_s'].items()} }"
              f" best={row['best']}")
