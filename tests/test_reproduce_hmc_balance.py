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
    (res,) = reproduce(["hmc-balance"], out_dir=out, level="smoke", seeds=SEEDS, jobs=1, progress=False)
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


def test_claim_row_encoding_by_hand():
    # a direction-only claim is judged by core.judge with a nominal paper ratio on its side of 1
    assert (H.paper_ratio_of(H.UP), H.paper_ratio_of(H.DOWN), H.paper_ratio_of(H.SAME)) == \
        pytest.approx((1.001, 0.999, 1.0))
    # std / mean 0.05, 0.06, 0.07 over 0.01 on three paired seeds: differences 0.04, 0.05, 0.06,
    # mean 0.05, sd 0.01, t(0.975, 2) = 4.3027: 0.05 ± 0.02484, over the baseline's 0.01:
    # ratio 6, interval [3.516, 8.484], above 1
    v, b = [0.05, 0.06, 0.07], [0.01, 0.01, 0.01]
    r = H.claim_row("Fig. 2", "x", "std / mean", "× mean", v, b, claim=H.UP, base="Fig. 1")
    assert r.paper is None and r.paper_ratio == pytest.approx(1.001)
    assert r.sim_ratio == pytest.approx(6.0)
    assert (r.change_lo, r.change_hi) == pytest.approx((3.5159, 8.4841), abs=1e-3)
    assert r.verdict == "agrees" and "no magnitude" in r.note
    assert H.claim_row("", "x", "", "", v, b, claim=H.DOWN, base="b").verdict == "disagrees"
    # "the same": the interval excludes no change, so the claim is disagreed with ...
    assert H.claim_row("", "x", "", "", v, b, claim=H.SAME, base="b").verdict == "disagrees"
    # ... and an interval that includes it is inconclusive, never an agreement: differences
    # 0, 0.2, -0.1 (mean 0.033, half-width 4.3027 × 0.1528 / √3 = 0.38)
    w = [1.0, 1.2, 0.9]
    for claim in (H.UP, H.DOWN, H.SAME):
        assert H.claim_row("", "x", "", "", w, [1.0] * 3, claim=claim, base="b").verdict == "inconclusive"
    # a tie (every per-seed difference 0) never agrees, whatever the claim
    for claim in (H.UP, H.DOWN, H.SAME):
        assert H.claim_row("", "x", "", "", [2.0] * 3, [2.0] * 3, claim=claim, base="b").verdict == "inconclusive"
    # twolf's overlap, read as nice 12's fastest run below nice 8's slowest: 80, 82, 81 s
    # against 100 s: differences -20, -18, -19, ratio 0.81, interval [0.785, 0.835]
    r = H.claim_row("Fig. 4", "twolf nice 12", "min run time", "s", [80.0, 82.0, 81.0], [100.0] * 3,
                    claim=H.DOWN, base="nice 8's max")
    assert r.sim_ratio == pytest.approx(0.81) and r.change_hi == pytest.approx(0.8348, abs=1e-3)
    assert r.verdict == "agrees"
    # a baseline of 0 (no jitter at all) gives no ratio: no interval, inconclusive
    assert H.claim_row("", "x", "", "", [0.01, 0.02], [0.0, 0.0], claim=H.UP, base="b").verdict == "inconclusive"
    # no stated direction, or no baseline: no verdict
    assert H.claim_row("", "x", "", "", v, b, base="b").verdict is None
    assert H.claim_row("Fig. 1", "x", "s", "", [1.0, 1.0]).verdict is None
    # the construction mark is carried, and the row then counts apart
    r = H.claim_row("", "x", "", "", v, b, claim=H.UP, base="b", construction=H.BY_FLOOR)
    res = H.StudyResult("s", "t", "p", "pl", [r, H.claim_row("", "y", "", "", v, b, claim=H.DOWN, base="b")])
    assert res.counts(construction=True)["agrees"] == 1 and res.counts()["agrees"] == 0
    assert res.counts()["disagrees"] == 1 and res.agreement() == (0, 1)


def test_nice_weights_order_the_homogeneous_run_times_by_hand():
    # the reason Fig. 3's rows agree by construction: a niced job beside two nice-0 jobs
    # gets w / (w + 2048), beside one w / (w + 1024) of its CPU; nice 12: 70 / 2118 and
    # 70 / 1094; nice 8: 172 / 2220 and 172 / 1196
    assert H.nice_share_bounds(12) == pytest.approx((70 / 2118, 70 / 1094))
    assert H.nice_share_bounds(8) == pytest.approx((0.077477, 0.143813), abs=1e-6)
    assert H.nice_share_bounds(0) == pytest.approx((1 / 3, 1 / 2))
    # consecutive levels do not overlap: the worst placement of the lower level beats the
    # best of the higher, so every run at the higher level is slower, whatever the balancer
    for lower, higher in zip(H.NICES, H.NICES[1:]):
        assert H.nice_share_bounds(lower)[0] > H.nice_share_bounds(higher)[1]
    # nice 8 -> 12 at least: 0.0775 / 0.0640 = 1.21 x the run time
    assert H.nice_share_bounds(8)[0] / H.nice_share_bounds(12)[1] == pytest.approx(1.2108, abs=1e-3)


def test_run_share_cv_by_hand():
    # gzip's two runs ran 10 s each and waited 30 and 10 s: shares 0.25 and 0.5, mean 0.375,
    # population std 0.125, CV 1/3; mcf's two runs the same share (CV 0); a run not in the
    # list and a template that never ran are left out: mean of 1/3 and 0
    doc = {"tasks": [
        {"name": "spec-gzip-0", "runtime_s": 10.0, "wait_s": 30.0},
        {"name": "spec-gzip-r-0000", "runtime_s": 10.0, "wait_s": 10.0},
        {"name": "spec-gzip-r-0001", "runtime_s": 3.0, "wait_s": 0.0},
        {"name": "spec-gzip-r", "runtime_s": 0.0, "wait_s": 0.0},
        {"name": "spec-mcf-0", "runtime_s": 5.0, "wait_s": 15.0},
        {"name": "spec-mcf-r-0000", "runtime_s": 6.0, "wait_s": 18.0}]}
    ended = ["spec-gzip-0", "spec-gzip-r-0000", "spec-gzip-r", "spec-mcf-0", "spec-mcf-r-0000"]
    assert H.run_share_cv(doc, ended) == pytest.approx((1 / 3 + 0.0) / 2)


def test_nice_string():
    assert H.nice_string(0, 8) == "8:0:0:0"     # §2.3, gzip niced
    assert H.nice_string(2, 12) == "0:0:12:0"   # twolf niced


def test_run_times_match_spec_repeat_metric():
    # the marks parser reads spec-repeat's own loop runs as its metric does
    from hetsched.sim import Simulation

    sim = Simulation(platform="hetero-2cpu", workload="spec-repeat:repeats=2,scale_ms=40", scheduler="cfs")
    doc = sim.run().doc
    runs = H.job_runs(sim.marks())  # the marks as the run made them, read from the engine
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
        assert name.endswith(".svg") and caption
        svg = (out / name).read_text()
        # text kept as text, no date: the same data give the same bytes
        assert svg.startswith("<?xml") and "<text" in svg and "dc:date" not in svg
    names = {n for n, _ in res.plots}
    for fig in ("fig1", "fig2", "fig3", "fig4", "fig5", "td_tradeoff"):
        assert f"hmc-balance_{fig}.svg" in names

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
    rows = list(csv.DictReader((out / "hmc-balance.csv").open()))
    assert len(rows) == len(res.rows)
    doc = json.loads((out / "hmc-balance.json").read_text())
    assert doc["study"] == "hmc-balance" and doc["notes"] and "hetero-2cpu" in doc["platforms"]
    assert doc["finding"] and doc["calibrations"]


def test_study_claims_and_construction_marks(study):
    res, _ = study
    judged = [r for r in res.rows if r.verdict is not None]
    fig = lambda r: r.table.split(" (")[0]  # noqa: E731
    # the text's stated directions: Fig. 2 over Fig. 1 (8 benchmarks x min / max / std),
    # Fig. 5 over Fig. 2 (7: art's is not stated), Fig. 3's means at nice 4/8/12 (4 x 3)
    # and twolf's and parser's overlap, Fig. 4's mcf means (3), gzip's "the same" and the
    # two overlaps
    assert len(judged) == 8 * 3 + 7 * 3 + 4 * 3 + 2 + 3 + 1 + 2 == 65
    apart = [r for r in judged if r.construction]
    # counted apart: Fig. 2 but art (21 rows), all of Fig. 3's (14)
    assert sorted((fig(r), r.row == "art") for r in apart) == sorted([("Fig. 2", False)] * 21
                                                                     + [("Fig. 3", False)] * 14)
    assert all(r.construction == H.BY_FLOOR for r in apart if fig(r) == "Fig. 2")
    assert all(r.construction == H.BY_WEIGHT for r in apart if fig(r) == "Fig. 3")
    # what is left tests the scheduler: art's three Fig. 2 rows, Fig. 5's 21 (hcs-balance's
    # rule fixes the split between the cores, not a run's share of the CPUs) and Fig. 4's six
    tested = sorted((fig(r), r.row, r.metric) for r in judged if not r.construction)
    spread = ("min / mean", "max / mean", "std / mean")
    assert tested == sorted([("Fig. 2", "art", m) for m in spread]
                            + [("Fig. 5", b, m) for b in H.BENCH8 if b != "art" for m in spread]
                            + [("Fig. 4", f"mcf nice {l}", "mean run time") for l in (4, 8, 12)]
                            + [("Fig. 4", f"{b} nice 12", "min run time") for b in ("gzip", "twolf", "parser")])
    assert sum(res.counts(construction=True).values()) == 35 and sum(res.counts().values()) == 30
    # the encodings: art's "less jittery" is a lower std; "the same" is a ratio of exactly 1
    by = {(fig(r), r.row, r.metric): r for r in judged}
    assert by[("Fig. 2", "art", "std / mean")].paper_ratio < 1 < by[("Fig. 2", "gzip", "std / mean")].paper_ratio
    assert by[("Fig. 4", "gzip nice 12", "min run time")].paper_ratio == 1.0
    assert by[("Fig. 4", "twolf nice 12", "min run time")].paper_ratio < 1
    # Fig. 1's rows and hcs-balance's CAB rows carry the mark but no verdict
    assert all(r.construction == H.BY_HOMOGENEOUS and r.verdict is None for r in res.rows if fig(r) == "Fig. 1")
    cab = [r for r in res.rows if r.row == "hcs-balance" and r.metric.startswith(("CAB", "mean CAB"))]
    assert len(cab) == 2 and all(r.construction == H.BY_BALANCE_CAB and r.verdict is None for r in cab)
    # the sensitivity: the chosen launch spread and fair class, each beside the others
    values = [(s["parameter"].split(" (")[0], s["value"], s["chosen"]) for s in res.sensitivity]
    assert values == [("launch spread of the jobs, ms", 10.0, True), ("launch spread of the jobs, ms", 1.0, False),
                      ("launch spread of the jobs, ms", 100.0, False),
                      ("fair class", "CFS v6.5 (fair.eevdf = 0), rows without hcs-balance", True),
                      ("fair class", "EEVDF v6.12 (fair.eevdf = 1), rows without hcs-balance", False)]
    assert all(sum(s["counts"].values()) == 30 for s in res.sensitivity[:3])
    # hcs-balance requires CFS: the fair class's counts are over the rows cfs alone decides,
    # the same rows under both classes
    no_hcs = [r for r in judged if not r.construction and not H._needs_hcs_balance(r)]
    assert 0 < len(no_hcs) < 30
    assert [sum(s["counts"].values()) for s in res.sensitivity[3:]] == [len(no_hcs)] * 2
