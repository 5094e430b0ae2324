"""`hetsched reproduce hmc-balance` (paper 004): the study at the smoke level, and its
arithmetic against numbers worked by hand."""

from __future__ import annotations

import csv
import json
import math

import pytest

from hetsched.reproduce import hmc_balance as H

SEEDS = 2


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    from hetsched.reproduce import reproduce

    out = tmp_path_factory.mktemp("repro-hmc")
    (res,) = reproduce(["hmc-balance"], out_dir=out, level="smoke", seeds=SEEDS, jobs=2, progress=False)
    return res, out


# ----------------------------------------------------------------------------- by hand

def test_normalised_spread_by_hand():
    # mean 10; min 9 and max 11 are 0.9 and 1.1 of it; population std sqrt((1+0+1+0)/4) = 0.7071
    got = H.normalised_spread([9.0, 10.0, 11.0, 10.0])
    assert got["mean_s"] == pytest.approx(10.0)
    assert got["min"] == pytest.approx(0.9)
    assert got["max"] == pytest.approx(1.1)
    assert got["std"] == pytest.approx(math.sqrt(0.5) / 10.0)
    st = H.runtime_stats([2.0, 4.0])
    assert (st["mean"], st["min"], st["max"], st["std"]) == pytest.approx((3.0, 2.0, 4.0, 1.0))


def test_experiment_runs_stop_rule_by_hand():
    # (end ns, run s) per benchmark. §2.2: the experiment ends at the last benchmark's 2nd
    # run (b's, at 40); a's runs ending by then count (10, 20, 30), its run ending at 50 not
    runs = {"a": [(10, 1.0), (20, 1.1), (30, 1.2), (50, 9.0)], "b": [(15, 1.5), (40, 2.5)]}
    got = H.experiment_runs(runs, 2, ["a", "b"])
    assert got == {"a": [1.0, 1.1, 1.2], "b": [1.5, 2.5]}
    assert H.experiment_runs(runs, 3, ["a", "b"]) is None          # b has only two runs
    assert H.experiment_runs(runs, 2, ["a", "b", "c"]) is None     # c has none
    # §2.3: the measured benchmark's first k runs, whatever the others did
    assert H.experiment_runs(runs, 3, ["a", "b"], ["a"]) == {"a": [1.0, 1.1, 1.2]}


def test_claim_row_direction_by_hand():
    # normalised std 0.05 against 0.01: up by 0.04 of the mean, beyond the 1 % tolerance
    r = H.claim_row("Fig. 2", "x", "std / mean", "× mean", [0.05, 0.05], [0.01, 0.01], claim=H.UP,
                    base="Fig. 1", absolute=True)
    assert r.paper is None and r.sim_ratio == pytest.approx(5.0) and r.agree is True
    assert H.claim_row("Fig. 2", "x", "s", "", [0.05, 0.05], [0.01, 0.01], claim=H.DOWN, base="b",
                       absolute=True).agree is False
    # 0.0002 against 0.0001 is a doubling, but 0.01 % of the mean: no change
    r = H.claim_row("Fig. 2", "x", "s", "", [0.0002], [0.0001], claim=H.UP, base="b", absolute=True)
    assert r.sim_ratio == pytest.approx(2.0) and r.agree is False
    # seconds: ratio 1.005 is within 1 % (the same), 0.8 is lower: "not higher" holds for both
    assert H.claim_row("Fig. 4", "x", "s", "", [100.5], [100.0], claim=H.SAME, base="b").agree is True
    assert H.claim_row("Fig. 4", "x", "s", "", [80.0], [100.0], claim=H.NOT_UP, base="b").agree is True
    assert H.claim_row("Fig. 4", "x", "s", "", [120.0], [100.0], claim=H.NOT_UP, base="b").agree is False
    assert H.claim_row("Fig. 1", "x", "s", "", [1.0]).agree is None


def test_nice_string():
    assert H.nice_string(0, 8) == "8:0:0:0"     # §2.3, gzip niced
    assert H.nice_string(2, 12) == "0:0:12:0"   # twolf niced


def test_run_times_match_spec_repeat_metric():
    # the marks parser reads spec-repeat's own loop runs as its metric does
    from hetsched.sim import Simulation

    sim = Simulation(platform="hetero-2cpu", workload="spec-repeat:repeats=2,scale_ms=40", scheduler="cfs")
    doc = sim.run().doc
    runs = H.job_runs(doc, sim.workload_spec["marks"])
    metric = doc["metrics"]["spec-repeat"]
    for b in H.BENCH8:
        first = [x for _, x in runs[b][:2]]
        got = H.normalised_spread(first)
        assert got["min"] == pytest.approx(metric[f"{b}.min_over_mean"], rel=1e-9)
        assert got["max"] == pytest.approx(metric[f"{b}.max_over_mean"], rel=1e-9)
        assert got["std"] == pytest.approx(metric[f"{b}.cv"], rel=1e-9)


def test_restarts_are_processes_and_the_measured_chain_ends():
    out = H.simulate(0, "hetero-2cpu", "cfs", jobs="int4", nice="8:0:0:0", measured="gzip", scale_ms=40,
                     repeats=3)
    assert out["gzip.n"] == 3 and "mcf.n" not in out
    # a different seed launches the jobs at other offsets, the same seed again is the same run
    assert H.launch_offsets_ns(8, 1) != H.launch_offsets_ns(8, 2)
    assert H.simulate(0, "hetero-2cpu", "cfs", jobs="int4", nice="8:0:0:0", measured="gzip", scale_ms=40,
                      repeats=3) == {**out}
    spec = H.restart_workload({"tasks": [
        {"name": "spec-gzip-0", "phases": [{"loop": 9, "events": [{"mark": 0}, {"run": 5}, {"mark": 1}]}]},
        {"name": "spec-mcf-0", "phases": [{"loop": 9, "events": [{"mark": 0}, {"run": 7}, {"mark": 1}]}]}],
        "marks": ["job.start", "job.end"]}, 3, measured="gzip", offsets=[11, 22])
    names = [t["name"] for t in spec["tasks"]]
    assert names == ["spec-gzip-0", "spec-mcf-0", "spec-gzip-r1", "spec-gzip-r2", "spec-mcf-r"]
    forks = [next((e["fork"] for e in t["phases"][0]["events"] if "fork" in e), None) for t in spec["tasks"]]
    assert forks == [2, 4, 3, None, 4]   # gzip: 3 processes then none; mcf: a template forking itself
    assert [t["delay_ns"] for t in spec["tasks"]] == [11, 22, 0, 0, 0]
    assert [t["start"] for t in spec["tasks"]] == [True, True, False, False, False]


# ----------------------------------------------------------------------------- the study

def test_study_files_rows_and_plots(study):
    res, out = study
    for ext in ("csv", "md", "json"):
        assert (out / f"hmc-balance.{ext}").stat().st_size > 0
    assert (out / "report.html").exists()
    for name, caption in res.plots:
        assert (out / name).stat().st_size > 1000 and caption
    names = {n for n, _ in res.plots}
    for fig in ("fig1", "fig2", "fig3", "fig4", "fig5", "td_tradeoff"):
        assert f"hmc-balance_{fig}.png" in names

    keys = {(r.table.split(" (")[0], r.row, r.metric) for r in res.rows}
    want = set()
    for fig in ("Fig. 1", "Fig. 2", "Fig. 5"):
        for b in H.BENCH8:
            want |= {(fig, b, m) for m in ("min / mean", "max / mean", "std / mean")}
    for fig in ("Fig. 3", "Fig. 4"):
        for b in H.INT4:
            for lvl in H.NICES:
                want |= {(fig, f"{b} nice {lvl}", m)
                         for m in ("mean run time", "min run time", "max run time", "std of run time")}
    assert want <= keys, sorted(want - keys)[:5]
    assert len(res.rows) == len(want) + 3 * 6  # and §5's three schedulers x six metrics
    for r in res.rows:
        assert r.paper is None and r.note          # the text gives no bar values: every row says so
        assert r.sim is not None or r.note
        assert r.n == SEEDS
    # the text's stated directions are compared: Fig. 2 vs 1, Fig. 5 vs 2, Figs. 3-4's
    assert sum(1 for r in res.rows if r.agree is not None) == 8 * 3 + 7 * 3 + 4 * 3 + 2 + 1 + 2 + 3
    rows = list(csv.DictReader((out / "hmc-balance.csv").open()))
    assert len(rows) == len(res.rows)
    doc = json.loads((out / "hmc-balance.json").read_text())
    assert doc["study"] == "hmc-balance" and doc["notes"] and "hetero-2cpu" in doc["platforms"]
