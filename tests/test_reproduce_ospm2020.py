"""`hetsched reproduce ospm2020` (paper 003's vendor EAS changes): the study at level smoke
writes its files with a row for every number transcribed from the slides; the verdicts follow
core.judge on hand-built per-pair changes (the slides' sign against a simulated interval, the
slides' own "no significant change" as not decidable); the Wilcoxon statistics and the
Pixel 4's core_ctl values give hand-derived results."""

from __future__ import annotations

import csv
import json

import pytest

from hetsched.reproduce import reproduce
from hetsched.reproduce import ospm2020 as study
from hetsched.reproduce.core import AGREES, DISAGREES, INCONCLUSIVE, NOT_DECIDABLE, VERDICTS, Run, execute


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    out = tmp_path_factory.mktemp("ospm2020")
    [res] = reproduce(["ospm2020"], out_dir=out, level="smoke", seeds=2, jobs=1, progress=False)
    return out, res


def test_files_and_plots_written(smoke):
    out, res = smoke
    for name in ("ospm2020.csv", "ospm2020.md", "ospm2020.json", "report.html"):
        assert (out / name).stat().st_size > 0, name
    assert [name for name, _ in res.plots] == ["ospm2020_changes.svg", "ospm2020_sensitivity.svg"]
    for name, caption in res.plots:
        svg = (out / name).read_text()
        assert svg.lstrip().startswith("<?xml") and "<svg" in svg and caption
        assert "<dc:date>" not in svg  # no date: the same inputs give the same bytes
    doc = json.loads((out / "ospm2020.json").read_text())
    assert doc["study"] == "ospm2020" and doc["level"] == "smoke" and doc["seeds"] == 2
    # 7 configurations (the study's and two values of each of 3 open parameters) x (mainline
    # + 5 changes) x 2 seeds, and the isolation change at the reference core_ctl values
    assert res.runs == 7 * 6 * 2 + 2


def test_every_published_number_has_a_row(smoke):
    out, res = smoke
    with open(out / "ospm2020.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(study.PUBLISHED) == 10
    for pub, row in zip(study.PUBLISHED, rows):
        assert row["table"] == pub.table and row["metric"] == pub.metric
        assert study.CHANGE[pub.change].knob in row["row"]
        if pub.value is not None:
            assert float(row["paper"]) == pytest.approx(pub.value)
        assert row["note"], "every row says where its paper value comes from"
    # the slides' legible values, transcribed: 3.32, 2.35, -0.67, -0.6, 0.83, -0.57, 0.0125..., 16k, 500k
    values = sorted(p.value for p in study.PUBLISHED if p.value is not None)
    assert values == [-0.67, -0.6, -0.57, 0.012515318690073973, 0.83, 2.35, 3.32, 16_000.0, 500_000.0]
    for r in res.rows:
        if r.sim is None:
            assert r.note
        if r.paper_ratio is not None and r.unit == study.UNIT_PCT:  # a % change: ratio 1 + change / 100
            assert r.paper_ratio == pytest.approx(1 + r.paper / 100)


def test_smoke_structure(smoke):
    _, res = smoke
    by = {(r.row.split(" (")[0], r.metric): r for r in res.rows}
    # the slides' CPU isolation value is their own "no significant change": not decidable
    iso = by[("1. CPU Isolation", "PcmaWritingV2Score")]
    assert iso.verdict == NOT_DECIDABLE and iso.undecidable == study.UNDECIDABLE
    # no paper value (energy-estimate) and the two counts (no baseline): no verdict
    assert by[("1. CPU Isolation", "energy-estimate")].verdict is None
    assert [r.verdict for r in res.rows if r.unit == "count per run"] == [None, None]
    # the six significant published changes each get a verdict, with the Wilcoxon p in the note
    judged = [r for r in res.rows if r.verdict in (AGREES, DISAGREES, INCONCLUSIVE)]
    assert len(judged) == 6 and all("Wilcoxon p =" in r.note for r in judged)
    assert sum(res.counts().values()) == 7
    # the sensitivity table: three open parameters, each chosen value and two others, 7 verdicts each
    params = {}
    for s in res.sensitivity:
        params.setdefault(s["parameter"], []).append(s)
        assert sum(s["counts"].get(v, 0) for v in VERDICTS) == 7 and s["counts"][NOT_DECIDABLE] == 1
    assert sorted(params) == sorted([study.BACKGROUND, study.WINDOW, study.KERNEL_PROFILE])
    assert all(len(v) == 3 and sum(s["chosen"] for s in v) == 1 for v in params.values())
    assert [s["counts"] for s in res.sensitivity if s["chosen"]] == [res.counts()] * 3
    assert res.finding.startswith("Of the slides' 7 published changes")
    cal = {c[0]: c for c in res.calibrations}
    assert "init.hardware.rc lines 95-103" in cal["core_ctl (CPU isolation)"][2]
    assert "up_rate_limit_us 500" in cal["schedutil rate limits"][2]


def _row(pub, deltas, key=None):
    """The row of ``pub`` from hand-built per-pair changes (%): base 1000, new 1000 (1 + d/100)."""
    key = key or pub.sim_key
    base = [{key: 1000.0} for _ in deltas]
    new = [{key: 1000.0 * (1 + d / 100)} for d in deltas]
    grid = {(pub.change, key): study.paired_cell(base, new, key)}
    c = study.CHANGE[pub.change]
    fired = {c.knob: [{f"counters.vendor.{c.counter}": 7.0}] * len(deltas)}
    return study.published_row(pub, grid, fired, study.Sizes(len(deltas), len(deltas)))


def test_verdict_follows_the_interval_not_the_wilcoxon_test():
    # the slides' task packing change is -0.57 %, significant on their 100 runs
    pub = next(p for p in study.PUBLISHED if p.value == -0.57)
    # +2 % in every pair: the interval excludes no change on the other side
    assert _row(pub, [1.5, 2.5] * 5).verdict == DISAGREES
    # -0.1 / -0.3 % alternating: mean -0.2, sd 0.10541, t(0.975, 9) = 2.2622, half-width
    # 2.2622 x 0.10541 / sqrt(10) = 0.07541: [-0.2754, -0.1246] %, the slides' side
    r = _row(pub, [-0.1, -0.3] * 5)
    assert r.verdict == AGREES
    assert r.paper_ratio == pytest.approx(0.9943) and r.sim_ratio == pytest.approx(0.998)
    assert r.change_lo == pytest.approx(1 - 0.002754, abs=2e-6) and r.change_hi == pytest.approx(1 - 0.001246, abs=2e-6)
    assert "Wilcoxon p = " in r.note and "significant (p <= 0.01)" in r.note
    # -3 / +3 %: the interval includes no change
    assert _row(pub, [-3.0, 3.0] * 5).verdict == INCONCLUSIVE
    # a tie (no pair differs) is never agreement
    tie = _row(pub, [0.0] * 10)
    assert tie.verdict == INCONCLUSIVE and "identical in every pair" in tie.note


def test_seven_pairs_of_one_sign_agree_though_the_wilcoxon_test_cannot_reach_001():
    # the verdict is the interval's: 7 pairs all down give p = 2 / 2^7 = 0.0156 > 0.01 (the
    # slides would not draw it; distinct sizes, so the exact test) and an interval that
    # excludes no change: mean -0.6, sd 0.13229, t(0.975, 6) = 2.4469: [-0.7223, -0.4777] %
    pub = next(p for p in study.PUBLISHED if p.value == -0.57)
    r = _row(pub, [-0.4, -0.5, -0.6, -0.7, -0.8, -0.55, -0.65])
    assert r.change_hi == pytest.approx(1 - 0.004777, abs=2e-6)
    assert r.verdict == AGREES and "p = 0.016" in r.note and "not significant (p > 0.01)" in r.note


def test_the_slides_no_change_is_not_decidable_whatever_is_simulated():
    pub = next(p for p in study.PUBLISHED if p.change == "cpu_isolation" and p.value is not None)
    assert pub.paper_sign == 0
    for deltas in ([5.0, 6.0] * 5, [-5.0, -6.0] * 5, [0.0] * 10):
        r = _row(pub, deltas)
        assert r.verdict == NOT_DECIDABLE and r.undecidable == study.UNDECIDABLE


def test_wilcoxon_significance_by_hand():
    # 8 pairs, all up: two-sided exact p = 2 / 2^8 = 0.0078125 <= 0.01; 7 pairs: 0.015625 > 0.01
    assert study.min_pairs(0.01) == 8 and study.min_pairs(0.05) == 6
    base = [{"m": 100.0} for _ in range(8)]
    new = [{"m": 100.0 + i} for i in range(1, 9)]
    cell = study.paired_cell(base, new, "m")
    assert cell.p == pytest.approx(2 / 2 ** 8)
    assert cell.significant and cell.sign == 1
    assert cell.mean == pytest.approx(4.5) and cell.median == pytest.approx(4.5)  # changes 1..8 %
    assert study.significance(cell.p) == "significant (p <= 0.01)"
    seven = study.paired_cell(base[:7], new[:7], "m")
    assert seven.p == pytest.approx(2 / 2 ** 7) and not seven.significant and seven.sign == 0
    assert study.significance(seven.p) == "not significant (p > 0.01)"
    # a pair whose suite did not finish is dropped with its partner
    cut = study.paired_cell(base, [dict(new[0], **{"pcmark.complete": 0.0})] + new[1:], "m")
    assert cut.n == 7 and cut.dropped == 1


def test_pixel4_kernel_builds_neither_walt_nor_core_ctl():
    # floral_defconfig: no CONFIG_SCHED_WALT, no CONFIG_SCHED_CORE_CTL, CONFIG_HZ_300
    assert study.PIXEL4_INIT["sched_walt"] == 0 and study.PIXEL4_INIT["tick_hz"] == 300
    # and the device tree writes no core_ctl value: where a build has core_ctl,
    # cluster_init()'s busy thresholds 0 make every CPU busy (busy >= 0), so need = all CPUs
    for c in range(3):
        assert study.PIXEL4_INIT[f"core_ctl.busy_up_thres.cluster{c}"] == 0
        assert study.PIXEL4_INIT[f"core_ctl.busy_down_thres.cluster{c}"] == 0
        assert study.PIXEL4_INIT[f"core_ctl.min_cpus.cluster{c}"] == 1
        assert study.PIXEL4_INIT[f"core_ctl.enable.cluster{c}"] == 1
        assert study.PIXEL4_INIT[f"core_ctl.task_thres.cluster{c}"] >= 1e9  # UINT_MAX: never
    kw = dict(seed=0, platform="sm8150", workload=study.WORKLOAD, kernel=study.KERNEL,
              knob="vendor.cpu_isolation", window_s=study.WINDOW_S)
    pixel4 = study.measure(knobs=study.PRIMARY.knobs, **kw)
    assert pixel4["counters.vendor.cpu_isolation"] == 0 and pixel4["counters.vendor.core_ctl_evaluations"] == 0
    assert not any(k.startswith("counters.walt.") for k in pixel4)
    # the same values on the tree built with WALT: core_ctl runs, and isolates nothing
    on_walt = dict(study.PIXEL4_INIT, sched_walt=1)
    built = study.measure(knobs=tuple(on_walt.items()) + study.VENDOR_OFF, **kw)
    assert built["counters.vendor.cpu_isolation"] == 0 and built["counters.vendor.core_ctl_evaluations"] > 0
    # with the Snapdragon 855 reference script's thresholds (busy 60 %, gold+ min_cpus 0) a
    # CPU is isolated once the suite's windows are light
    reference = study.measure(knobs=study.CORE_CTL_REFERENCE.knobs, **kw)
    assert reference["counters.vendor.cpu_isolation"] > 0


def test_measure_is_run_sim_without_the_lower_bound():
    kw = dict(platform="sm8150", workload=("pcmark", "phone-mix"), kernel="android-4.19",
              knob="vendor.task_packing", window_s=study.WINDOW_S)
    mine = study.measure(seed=3, **kw)
    ref = execute(Run.sim("sm8150", ("pcmark", "phone-mix"), "eas",
                          knobs={"kernel": "android-4.19", "vendor.task_packing": 1}, seed=3, duration_s=4.0))
    skip = {"wall_s", "energy_lower_bound_j", "energy_over_bound"}
    assert {k: v for k, v in ref.items() if k not in skip} == \
        {k: v for k, v in mine.items() if k not in skip and not k.startswith("cluster.")}
    assert mine["pcmark.complete"] == 1.0 and mine["counters.vendor.task_packing"] > 0
    assert sum(v for k, v in mine.items() if k.endswith(".energy_j") and k.startswith("cluster.")) == \
        pytest.approx(mine["energy_j"], rel=1e-9)
