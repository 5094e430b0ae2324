"""The fa-cfs and hcs-balance schedulers, paper 004's platforms and metrics.

Expected values come from the papers' definitions (002 eq. 10; 004 §3, §4) and the
platform formulas (capacity = dmips * f_max normalised; P = dpc * V^2 * MHz), written
out here rather than read back from the package.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import hetsched
from hetsched import Simulation, load_platform

SPEC = "spec-repeat:repeats=3"


def run(scheduler: str, platform: str = "hetero-2cpu", workload: str = SPEC, **kw):
    return Simulation(platform=platform, workload=workload, scheduler=scheduler,
                      governor=kw.pop("governor", "performance"), **kw).run()


def hcs_of(res) -> dict:
    """Paper 004's metrics as the spec-repeat metric reports them (``hcs.*`` keys)."""
    return {k[4:]: v for k, v in res.metrics["spec-repeat"].items() if k.startswith("hcs.")}


def without_policy(doc: dict) -> dict:
    d = {k: v for k, v in doc.items() if k not in ("wall_s", "scheduler", "knobs", "counters")}
    d["policy"] = {k: v for k, v in d["policy"].items() if k != "name"}
    return json.loads(json.dumps(d))


# --- platforms ------------------------------------------------------------------------

def test_paper_004_platforms():
    het = load_platform("hetero-2cpu")
    hom = load_platform("hetero-2cpu-homogeneous")
    assert het.power_model == hom.power_model == "estimated"
    assert any("ESTIMATED" in n for n in het.notes)
    # one core type: capacity = 1024 * f / 2.8 GHz
    assert [c.capacity_orig for c in het.clusters] == [1024, 1024 * 1_050_000 // 2_800_000]
    assert [c.capacity_orig for c in hom.clusters] == [1024, 1024]
    assert [[o.khz for o in c.opps] for c in het.clusters] == [[2_800_000], [1_050_000]]
    for c in het.clusters + hom.clusters:
        o = c.opps[0]
        # DT formula, integer: dpc * mV^2 * MHz / 10^6; clock modulation keeps the voltage
        assert o.power_uw == 9214 * 1525 ** 2 * (o.khz // 1000) // 10 ** 6
    assert het.clusters[1].opps[0].power_uw * 8 // 3 == pytest.approx(het.clusters[0].opps[0].power_uw, rel=1e-3)


# --- fa-cfs -----------------------------------------------------------------------------

def test_facfs_counts_a_rescale_per_migration_between_frequencies():
    het = run("fa-cfs")
    # on hetero-2cpu every migration is between 2.8 and 1.05 GHz
    assert het["counters"]["migrations"] > 0
    assert het["counters"]["policy"]["rescales"] == het["counters"]["migrations"]
    # equal frequencies: nothing rescaled, the run is cfs's
    hom = run("fa-cfs", platform="hetero-2cpu-homogeneous")
    base = run("cfs", platform="hetero-2cpu-homogeneous", knobs={"fair.eevdf": 0})  # fa-cfs is CFS
    assert hom["counters"]["policy"]["rescales"] == 0
    assert without_policy(hom.doc) == without_policy(base.doc)
    assert "rescales" not in base["counters"]["policy"]


def test_facfs_changes_the_run_when_frequencies_differ():
    # with hogs migrating (placement + balancer) between 2.8 and 1.05 GHz, rescaled slices
    # change the schedule: fa-cfs is not cfs here
    w = "spec-repeat:repeats=3,copies=2"
    fa, cfs = run("fa-cfs", workload=w), run("cfs", workload=w, knobs={"fair.eevdf": 0})
    assert fa["counters"]["policy"]["rescales"] > 0
    assert without_policy(fa.doc) != without_policy(cfs.doc)


# --- hcs-balance --------------------------------------------------------------------------

def test_hcs_balance_spreads_jobs_and_lowers_jitter():
    # paper 004 measured against CFS (v6.5 form)
    cfs, hcs = run("cfs", knobs={"fair.eevdf": 0}), run("hcs-balance", knobs={"fair.eevdf": 0})
    mc, mh = hcs_of(cfs), hcs_of(hcs)
    # each job's run time is split evenly over the two cores: CAB_J = |f0 - 1/2| small
    assert mh["cab_max"] < 0.05 < mc["cab_max"]
    assert mh["cab_mean"] < mc["cab_mean"]
    assert mh["cab_system_pct"] == 100.0 and mc["cab_system_pct"] < 100.0
    # completion-time jitter (paper 004 Fig. 2 vs Fig. 5)
    assert mh["jitter_cv_mean"] < mc["jitter_cv_mean"]
    # the same mean summed in another order: equal to the last bits
    assert mc["jitter_cv_mean"] == pytest.approx(cfs.metrics["spec-repeat"]["mean_cv"], rel=1e-12)
    assert set(hcs.metrics["spec-repeat"]["hcs_jobs"]) == {t["name"] for t in hcs["tasks"]}
    assert hcs["counters"]["policy"]["pulls"] > 0


def test_hcs_balance_requires_cfs():
    # under EEVDF its rotation fails (docs/policies/hcs-balance.md): refused in one line
    with pytest.raises(hetsched.InputError, match="fair.eevdf: expected 0 with --scheduler hcs-balance"):
        run("hcs-balance", knobs={"fair.eevdf": 1})


def test_hcs_balance_knob_off_is_cfs():
    off = run("hcs-balance", knobs={"hcs_balance_enabled": 0})
    cfs = run("cfs", knobs={"fair.eevdf": 0})  # hcs-balance is CFS
    assert off["counters"]["policy"]["pulls"] == 0
    assert without_policy(off.doc) == without_policy(cfs.doc)


def test_hcs_balance_knob_can_be_switched_at_run_time():
    sim = Simulation(platform="hetero-2cpu", workload=SPEC, scheduler="hcs-balance", governor="performance",
                     knobs={"hcs_balance_enabled": 0})
    sim.run_until(500_000_000)
    assert sim.result()["counters"]["policy"]["pulls"] == 0
    sim.set_knob("hcs_balance_enabled", 1)
    sim.run_until(1_000_000_000)
    assert sim.result()["counters"]["policy"]["pulls"] > 0


# --- paper 004's metrics ---------------------------------------------------------------

def _doc() -> dict:
    cpu = lambda c, cap, res: {"cpu": c, "capacity": cap, "freq_residency_s": res}  # noqa: E731
    return {
        "cpus": [cpu(0, 1024, {"2000000": 2.0}), cpu(1, 512, {"1000000": 2.0})],
        "tasks": [
            {"name": "a", "policy": "other", "cpu_time_s": {"0": 1.0, "1": 1.0}, "runtime_s": 2.0,
             "wait_s": 2.0, "work_completed_us": 2.0e6},
            {"name": "b", "policy": "other", "cpu_time_s": {"0": 1.0}, "runtime_s": 1.0,
             "wait_s": 3.0, "work_completed_us": 1.0e6},
            {"name": "c", "policy": "other", "cpu_time_s": {"1": 1.0}, "runtime_s": 1.0,
             "wait_s": 0.5, "work_completed_us": 0.0},
        ],
        "metrics": {},
    }


def test_the_metrics_old_name_still_answers_with_a_warning():
    with pytest.warns(DeprecationWarning, match="core_assignment_metrics"):
        f = hetsched.metrics_004
    assert f is hetsched.core_assignment_metrics


def test_core_assignment_metrics_formulas():
    m = hetsched.core_assignment_metrics(_doc())
    # fractions (1/2, 1/2), (1, 0), (0, 1): CAB_J = population std = 0, 1/2, 1/2
    assert [m["jobs"][n]["cab"] for n in "abc"] == [0.0, 0.5, 0.5]
    assert m["cab_system_pct"] == pytest.approx(100 / 3)
    # slowdown (wait + run) / run: 2, 4, 1.5; F = 1.1 * 3 jobs / 2 CPUs = 1.65
    assert [m["jobs"][n]["slowdown"] for n in "abc"] == [2.0, 4.0, 1.5]
    assert m["F"] == pytest.approx(1.65)
    assert m["rtf_pct"] == pytest.approx(100 / 3)
    # IPC: 3 s of reference work at 2 GHz over 2 s x 2 GHz + 2 s x 1 GHz of cycles
    assert m["system_ipc"] == pytest.approx(3.0 * 2e6 / (2.0 * 2e6 + 2.0 * 1e6))
    m2 = hetsched.core_assignment_metrics(_doc(), eps=0.5, F=4.0)
    assert m2["cab_system_pct"] == 100.0 and m2["rtf_pct"] == 100.0
    # jitter: CV of each group's completion times
    m3 = hetsched.core_assignment_metrics(_doc(), groups={"a": "x", "b": "x", "c": "y"},
                              runs={"a": [1.0, 3.0], "b": [2.0], "c": [5.0, 5.0]})
    x = np.array([1.0, 3.0, 2.0])
    assert m3["jitter_cv_mean"] == pytest.approx((x.std() / x.mean() + 0.0) / 2)


# --- CLI -----------------------------------------------------------------------------------

def test_cli_bad_input(tools, tmp_path):
    p = tools.run_cli(["run", "--platform", "hetero-2cpu", "--workload", SPEC, "--scheduler", "fa-cfs",
                       "--set", "fair.eevdf=1", "--out", str(tmp_path / "o")])
    tools.assert_one_line_error(p, "fa-cfs")
    p = tools.run_cli(["run", "--platform", "hetero-2cpu", "--workload", SPEC, "--scheduler", "hcs-balance",
                       "--set", "hcs_balance_enabled=2", "--out", str(tmp_path / "o")])
    tools.assert_one_line_error(p, "hcs_balance_enabled")


def test_cli_compare_shows_the_hcs_metrics(tools):
    p = tools.run_cli(["compare", "--platform", "hetero-2cpu", "--workload", SPEC, "--scheduler", "cfs",
                       "--scheduler", "hcs-balance", "--governor", "performance", "--seeds", "1",
                       "--duration", "60"])
    assert p.returncode == 0, p.stderr
    assert "spec-repeat.hcs.cab_mean" in p.stdout and "spec-repeat.hcs.jitter_cv_mean" in p.stdout
