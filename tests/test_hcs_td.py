"""hcs-td, paper 004 §5's TD(0) benefit-function scheduler, through the package.

The learner's arithmetic (eq. 3-5, the eq. 4 boundary, D_CAB / D_RTF) is worked by hand in
crates/hetsched-core/tests/hcs_td.rs; here: the scheduler is reachable by name, its knobs
are listed, its result section is complete, it differs from cfs and hcs-balance, and with
migrations off it is cfs on the paper's workload.
"""

from __future__ import annotations

import hetsched
from hetsched import Simulation

SPEC = "spec-repeat:repeats=3"
BASIS = ["1", "ncp", "aff", "miss", "aff*(1-miss)"]


def run(scheduler: str, **kw):
    return Simulation(platform="hetero-2cpu", workload=SPEC, scheduler=scheduler,
                      governor="performance", **kw).run(5)


def hcs(res) -> dict:
    return {k[4:]: v for k, v in res.metrics["spec-repeat"].items() if k.startswith("hcs.")}


def test_hcs_td_is_listed_with_its_knobs():
    from hetsched.sim import SCHEDULERS

    assert "hcs-td" in SCHEDULERS
    names = {k["name"]: k for k in hetsched.knob_table()}
    assert names["hcs_td.gamma"]["default"] == 0.9          # paper 004 §5.3
    assert names["hcs_td.rechoose_interval_ms"]["default"] == 30.0  # §5.1, Solaris
    assert names["hcs_td.alpha0"]["default"] == 1.0          # alpha_t = 1/t
    for k in ("hcs_td.a", "hcs_td.b", "hcs_td.interval_ms", "hcs_td.cab_eps", "hcs_td.rtf_f",
              "hcs_td.max_migrations"):
        assert names[k]["source"]


def test_hcs_td_result_section_and_tradeoff():
    # one fair class for the three, CFS, the class the study runs and hcs-balance requires
    # (under EEVDF one of the eight jobs ends at 4.41 x its fast-core time, F = 4.4)
    cfs_class = {"knobs": {"fair.eevdf": 0}}
    td, cfs, bal = run("hcs-td", **cfs_class), run("cfs", **cfs_class), run("hcs-balance", **cfs_class)
    sec = td["counters"]["policy"]
    assert sec["basis"] == BASIS
    assert len(sec["p"]) == 2 and all(len(p) == 5 for p in sec["p"])
    # a decision every 10 ms of busy ticks: about 500 in 5 s
    assert 400 <= sec["decisions"] <= 501
    assert sec["td_updates"] == [sec["decisions"] - 1] * 2
    assert 0 < sec["migrations"] <= sec["decisions"]
    assert "decisions" not in cfs["counters"]["policy"]
    # the learned weights are not the zero start
    assert any(v != 0 for p in sec["p"] for v in p)
    mt, mc, mb = hcs(td), hcs(cfs), hcs(bal)
    assert mt != mc and mt != mb
    # the RTF term of eq. 4 (b = -1) keeps every job within F, cfs does not
    assert mt["rtf_pct"] == 100.0 > mc["rtf_pct"]
    # fewer migrations than hcs-balance's rotation, so less cold-cache cost
    assert td["counters"]["migrations"] < bal["counters"]["migrations"]
    assert mt["system_ipc"] > mb["system_ipc"]


def test_hcs_td_without_migrations_is_cfs_on_spec_repeat():
    learn = run("hcs-td", knobs={"hcs_td.max_migrations": 0})
    cfs = run("cfs")
    assert learn["counters"]["policy"]["migrations"] == 0
    assert learn["counters"]["policy"]["decisions"] > 0
    assert hcs(learn) == hcs(cfs)
    assert [t["runtime_s"] for t in learn["tasks"]] == [t["runtime_s"] for t in cfs["tasks"]]
