"""Silent mechanisms: a run whose policy's own mechanism never acted says so, naming the
counter, and a run where it acted says nothing.

Every case is a real short run. Where a line claims the run is its base policy's by
construction, the test holds the two runs' energies equal.
"""

from __future__ import annotations

import json

import pytest

from hetsched import Simulation
from hetsched.mechanisms import silent_in_all, silent_mechanisms

SPEC = "spec-repeat:repeats=1"


# phone-mix's own threads, without the recorded system it runs beside by default and
# without the run-to-run noise's kernel workers: the light load on which these mechanisms
# find nothing to do, and say so (beside the recorded system hcs-td migrates and
# hcs-balance pulls)
LIGHT = "phone-mix:system=none,noise=0"


def doc(scheduler: str, platform: str = "gs101", workload: str = LIGHT, duration_s: float = 1.0,
        governor: str = "schedutil", **kw) -> dict:
    return Simulation(platform=platform, workload=workload, scheduler=scheduler, governor=governor,
                      **kw).run(duration_s).doc


def lines_of(d: dict, name: str) -> list[str]:
    return [line for line in silent_mechanisms(d) if line.startswith(name + ":")]


# --- fa-cfs -------------------------------------------------------------------------------

def test_fa_cfs_equal_frequencies_rescale_nothing_and_say_so():
    # both CPUs of the homogeneous platform run at 2.8 GHz: eq. 10 never applies
    d = doc("fa-cfs", platform="hetero-2cpu-homogeneous", workload=SPEC, governor="performance", duration_s=2)
    assert d["counters"]["policy"]["rescales"] == 0
    (line,) = lines_of(d, "fa-cfs")
    assert "(counters.policy.rescales = 0)" in line and "fair.eevdf=0" in line
    base = doc("cfs", platform="hetero-2cpu-homogeneous", workload=SPEC, governor="performance", duration_s=2,
               knobs={"fair.eevdf": 0})
    assert d["energy_fj"] == base["energy_fj"]


def test_fa_cfs_between_frequencies_has_no_line():
    d = doc("fa-cfs", platform="hetero-2cpu", workload=SPEC, governor="performance", duration_s=2)
    assert d["counters"]["policy"]["rescales"] > 0
    assert silent_mechanisms(d) == []


def test_fa_cfs_on_phone_mix_rescales_slices_so_has_no_line():
    # the counter says eq. 10 applied; whether a rescaled slice changed a decision it
    # cannot say (the module's docstring), so no line is drawn from it
    d = doc("fa-cfs", duration_s=2)
    assert d["counters"]["policy"]["rescales"] > 0
    assert lines_of(d, "fa-cfs") == []


# --- hcs-td, hcs-balance ---------------------------------------------------------------------

def test_hcs_td_on_phone_mix_moves_nothing_and_says_so():
    d, cfs = doc("hcs-td", duration_s=2), doc("cfs", duration_s=2)
    pol = d["counters"]["policy"]
    assert pol["migrations"] == 0 and pol["evaluations"] == 0
    (line,) = lines_of(d, "hcs-td")
    assert (f"(counters.policy.migrations = 0, counters.policy.decisions = {pol['decisions']}, "
            "counters.policy.evaluations = 0)") in line
    assert "no candidate" in line
    assert d["energy_fj"] == cfs["energy_fj"]


def test_hcs_td_that_migrates_has_no_line():
    d = doc("hcs-td", platform="hetero-2cpu", workload=SPEC, governor="performance", duration_s=2)
    assert d["counters"]["policy"]["migrations"] > 0
    assert silent_mechanisms(d) == []


def test_hcs_td_with_migrations_off_is_not_expected_to_migrate():
    d = doc("hcs-td", duration_s=0.5, knobs={"hcs_td.max_migrations": 0})
    assert lines_of(d, "hcs-td") == []


def test_hcs_balance_on_phone_mix_pulls_nothing_and_says_so():
    d, cfs = doc("hcs-balance", duration_s=2), doc("cfs", duration_s=2)
    assert d["counters"]["policy"]["pulls"] == 0
    (line,) = lines_of(d, "hcs-balance")
    assert "(counters.policy.pulls = 0)" in line and "cfs's by construction" in line
    assert d["energy_fj"] == cfs["energy_fj"]


def test_hcs_balance_that_pulls_has_no_line():
    d = doc("hcs-balance", platform="hetero-2cpu", workload=SPEC, governor="performance", duration_s=2)
    assert d["counters"]["policy"]["pulls"] > 0
    assert silent_mechanisms(d) == []


# --- gts, eas, the vendor knobs -----------------------------------------------------------

def test_gts_without_hmp_moves(tmp_path):
    # one task pinned to CPU 0: no faster domain it may use, so no fork boost and no move
    w = tmp_path / "pinned.json"
    w.write_text(json.dumps({"tasks": {"little": {"cpus": [0], "loop": -1, "run": 2000,
                                                  "timer": {"ref": "t", "period": 10000}}}}))
    d = doc("gts", workload=str(w), duration_s=0.5)
    (line,) = lines_of(d, "gts")
    assert ("counters.policy.hmp_up_migrations = 0, counters.policy.hmp_down_migrations = 0, "
            "counters.policy.hmp_fork_boosts = 0") in line
    assert silent_mechanisms(doc("gts", duration_s=1)) == []


def test_eas_that_cannot_run_says_why():
    d = doc("eas", governor="performance", duration_s=0.2)
    (line,) = lines_of(d, "eas")
    assert "(eas.enabled = false)" in line and "EAS needs schedutil" in line and "the policy was cfs" in line
    assert silent_mechanisms(doc("eas", duration_s=0.5)) == []


def test_eas_always_overutilized_never_calls_feec():
    # 40 tasks asking for the whole platform: the root domain stays overutilized
    d = doc("eas", workload="periodic:n=40,util=1.0,umax=1.0", duration_s=0.5)
    assert d["counters"]["policy"]["feec_calls"] == 0
    (line,) = lines_of(d, "eas")
    assert "(counters.policy.feec_calls = 0, counters.overutilized_set = " in line
    woken = sum(t["nr_wakeups"] for t in d["tasks"]) - d["counters"]["delayed_requeues"]
    assert f"wakeups of fair tasks placed = {woken}): the root domain was overutilized at each of the {woken}" in line
    # the cause follows the counters it cites: never overutilized, nothing else counted
    never = {**d, "counters": {**d["counters"], "overutilized_set": 0}}
    (line,) = lines_of(never, "eas")
    assert "never overutilized" in line and "do not say why" in line and "overutilized at" not in line
    # schedtune's prefer_idle placing the wakeups instead
    idle = {**never, "counters": {**never["counters"],
                                  "policy": {**d["counters"]["policy"], "schedtune.prefer_idle": woken}}}
    (line,) = lines_of(idle, "eas")
    assert f"schedtune's prefer_idle placed {woken} of the {woken} fair wakeups" in line


def test_vendor_knob_on_cfs_says_it_never_acted():
    d = doc("cfs", duration_s=0.5, knobs={"vendor.task_packing": 1})
    (line,) = lines_of(d, "vendor.task_packing")
    assert "(counters.vendor.task_packing = 0)" in line and "the scheduler is cfs" in line


def test_cpu_isolation():
    # mainline with the knob: core_ctl runs beside EAS and isolates
    on = doc("eas", platform="sm8150", duration_s=1, knobs={"vendor.cpu_isolation": 1})
    assert on["counters"]["vendor"]["cpu_isolation"] > 0
    assert lines_of(on, "vendor.cpu_isolation") == []
    # msm-4.14 sets the knob; built without WALT it has no core_ctl
    off = doc("eas", platform="sm8150", duration_s=0.5, knobs={"kernel": "msm-4.14", "sched_walt": 0})
    assert off["knobs"]["vendor.cpu_isolation"] > 0
    (line,) = lines_of(off, "vendor.cpu_isolation")
    assert "counters.vendor.cpu_isolation = 0, counters.vendor.core_ctl_evaluations = 0" in line
    assert "has no core_ctl" in line


def test_msm_walt_schedutil_raises_and_prefer_idle():
    d = doc("eas", platform="sm8150", duration_s=1,
            knobs={"kernel": "msm-4.14", "schedtune.root.prefer_idle": 1})
    assert d["counters"]["walt"]["hispeed_raises"] > 0 and d["counters"]["walt"]["pl_raises"] > 0
    assert d["counters"]["schedtune"]["prefer_idle_placements"] > 0
    assert [x for x in silent_mechanisms(d) if x.startswith(("schedutil.", "schedtune."))] == []
    # the same groups under cfs: prefer_idle is an eas wakeup path
    c = doc("cfs", platform="sm8150", duration_s=0.5,
            knobs={"kernel": "msm-4.14", "schedtune.root.prefer_idle": 1})
    (line,) = lines_of(c, "schedtune.prefer_idle")
    assert "(counters.schedtune.prefer_idle_placements = 0)" in line and "the scheduler is cfs" in line


# --- hps, the switcher, util-aware, learning-eas ---------------------------------------------

def test_hps_before_its_first_period():
    d = doc("gts", platform="exynos5422", duration_s=0.03, knobs={"hotplug": "hps"})
    (line,) = lines_of(d, "hps")
    assert "(hotplug.cpu_down = 0)" in line and "hps.period_ms = 40" in line
    on = doc("gts", platform="exynos5422", duration_s=1, knobs={"hotplug": "hps"})
    assert on["hotplug"]["cpu_down"] > 0 and lines_of(on, "hps") == []


def test_switcher_without_switches():
    d = doc("legacy", platform="exynos5422:switcher", governor="ondemand", duration_s=0.5)
    (line,) = lines_of(d, "switcher")
    assert "(counters.switches_up = 0, counters.switches_down = 0)" in line
    busy = doc("legacy", platform="exynos5422:switcher", governor="ondemand", workload=SPEC, duration_s=1)
    assert busy["counters"]["switches_up"] > 0 and silent_mechanisms(busy) == []


def test_util_aware_levels():
    d = doc("util-aware", platform="exynos5422:switcher", governor="ondemand", duration_s=0.5)
    assert d["counters"]["policy"]["leveling_moves"] > 0
    assert lines_of(d, "util-aware") == []


def test_learning_eas_algorithm_2_needs_its_period():
    d = doc("learning-eas", duration_s=1)
    (line,) = lines_of(d, "learning-eas Algorithm 2")
    assert "(learning.migration_cost_steps = 0)" in line and "lasted 1 s" in line
    assert lines_of(d, "learning-eas Algorithm 1") == []
    stepped = doc("learning-eas", duration_s=1, knobs={"learning.mc.period_ms": 500})
    assert stepped["learning"]["migration_cost_steps"] > 0
    assert silent_mechanisms(stepped) == []


# --- policies without a mechanism of their own, and the comparison -------------------------

@pytest.mark.parametrize("scheduler", ["cfs", "baseline"])
def test_no_mechanism_no_line(scheduler):
    assert silent_mechanisms(doc(scheduler, duration_s=0.5)) == []


def test_silent_in_all_seeds():
    runs = [doc("hcs-td", duration_s=2, seed=s) for s in (0, 1)]
    decisions = sum(r["counters"]["policy"]["decisions"] for r in runs)
    evaluations = sum(r["counters"]["policy"]["evaluations"] for r in runs)
    (line,) = silent_in_all(runs)
    assert line.startswith("hcs-td: eq. 4 moved no task in any of the 2 runs (counters.policy.migrations = 0 in each")
    assert f"counters.policy.decisions = {decisions} over the runs" in line
    assert f"counters.policy.evaluations = {evaluations} over the runs" in line
    assert silent_in_all(runs[:1]) == silent_mechanisms(runs[0])
    assert silent_in_all([]) == []


def test_silent_in_all_needs_every_run_silent():
    silent = doc("fa-cfs", platform="hetero-2cpu-homogeneous", workload=SPEC, governor="performance")
    fired = doc("fa-cfs", platform="hetero-2cpu", workload=SPEC, governor="performance")
    assert lines_of(silent, "fa-cfs") and not lines_of(fired, "fa-cfs")
    assert silent_in_all([silent, fired]) == []


def test_unjudged_without_its_counter():
    d = doc("hcs-balance", duration_s=0.5)
    del d["counters"]["policy"]["pulls"]
    assert lines_of(d, "hcs-balance") == []
    with pytest.raises(TypeError, match="result_doc"):
        silent_mechanisms([d])

