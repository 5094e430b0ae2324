"""uclamp (rt-app util_min/util_max) and its effect on schedutil, against the formulas of
linux-eas.md §3 and §9."""

import pytest

from hetsched import Simulation
from hetsched.platforms import load_platform
from hetsched.workloads import periodic, workload


def clamped(name, run_us, period_us, util_min=None, util_max=None, cpus=None):
    t = periodic(name, period_us=period_us, run_us=run_us, cpus=cpus)
    t.update(util_min=util_min, util_max=util_max)
    return t


def x1_opps():
    big = next(c for c in load_platform("gs101").to_spec()["clusters"] if 6 in c["cpus"])
    return [o["khz"] for o in big["opps"]]


def resolve(khz_list, raw):
    return next((k for k in khz_list if k >= raw), khz_list[-1])


def test_uclamp_max_caps_the_frequency_of_a_cpu_hog():
    """A task that never sleeps on X1 CPU 6 (capacity 1024, f_max 2.802 GHz) with
    util_max 300: effective_cpu_util's max is 300, so schedutil asks for
    f_max x 300 / 1024 = 820.9 MHz -> the 851 MHz OPP, not f_max."""
    opps = x1_opps()
    want = resolve(opps, opps[-1] * 300 // 1024)
    assert want == 851000
    d = Simulation(platform="gs101", workload=workload("w", [clamped("hog", 100_000, 100_000, util_max=300,
                                                                     cpus=[6])])).run(1.0).doc
    res = d["cpus"][6]["freq_residency_s"]
    assert res[str(want)] > 0.99 * d["cpus"][6]["busy_s"]


def test_uclamp_min_boosts_the_frequency_while_the_task_is_runnable():
    """A task of 4 ms (at f_max) every 32 ms (util ~128) on CPU 6 with util_min 800: while it
    is runnable the rq's min clamp is 800, so schedutil asks for at least
    f_max x 800 / 1024 = 2.189 GHz -> 2.252 GHz. v6.12's enqueue_task() raises the rq clamp
    after the class's enqueue has already called schedutil, so the boost arrives at the
    next call, the first tick of the activation (at most 4 ms in); from then on the task
    runs at 2.252 GHz. Without the clamp the CPU never reaches that OPP."""
    opps = x1_opps()
    boosted = resolve(opps, opps[-1] * 800 // 1024)
    assert boosted == 2252000
    d = Simulation(platform="gs101", workload=workload("w", [clamped("s", 4000, 32000, util_min=800,
                                                                     cpus=[6])])).run(1.0).doc
    cpu = d["cpus"][6]
    assert cpu["freq_residency_s"][str(boosted)] > 0.4 * cpu["busy_s"]
    plain = Simulation(platform="gs101", workload=workload("w", [clamped("s", 4000, 32000, cpus=[6])])).run(1.0).doc
    assert plain["cpus"][6]["freq_residency_s"][str(boosted)] == 0.0


def test_default_clamps_change_nothing():
    """Setting a CFS task's clamps to their defaults, [0, 1024], turns uclamp on but must
    not change the result: the rq clamps are then [0, 1024] and effective_cpu_util's min
    and max are what they are without uclamp."""
    tasks = lambda clamp: [clamped(f"t{i}", 700 * (i + 1), 10_000 + 3_000 * i,
                                   util_min=0 if clamp and i == 0 else None,
                                   util_max=1024 if clamp and i == 0 else None) for i in range(5)]
    a = Simulation(platform="gs101", workload=workload("w", tasks(False)), scheduler="eas").run(2.0).doc
    b = Simulation(platform="gs101", workload=workload("w", tasks(True)), scheduler="eas").run(2.0).doc
    for d in (a, b):
        d.pop("wall_s")
    assert a["energy_fj"] == b["energy_fj"] and a["tasks"] == b["tasks"]
