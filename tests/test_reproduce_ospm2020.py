"""`hetsched reproduce ospm2020` (paper 003's vendor EAS changes): the study at level smoke
writes its files, has a row for every number transcribed from the slides, and its
statistics (Wilcoxon significance, the slides' direction rule) give hand-derived values."""

from __future__ import annotations

import csv
import json

import pytest

from hetsched.reproduce import reproduce
from hetsched.reproduce import ospm2020 as study
from hetsched.reproduce.core import Run, execute


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    out = tmp_path_factory.mktemp("ospm2020")
    [res] = reproduce(["ospm2020"], out_dir=out, level="smoke", seeds=2, jobs=2, progress=False)
    return out, res


def test_files_and_plots_written(smoke):
    out, res = smoke
    for name in ("ospm2020.csv", "ospm2020.md", "ospm2020.json", "report.html"):
        assert (out / name).stat().st_size > 0, name
    assert len(res.plots) == 2
    for name, caption in res.plots:
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and caption
    doc = json.loads((out / "ospm2020.json").read_text())
    assert doc["study"] == "ospm2020" and doc["level"] == "smoke" and doc["seeds"] == 2
    # 5 configurations (msm-4.14 and its sensitivity checks) x (mainline + 5 changes) x 2 seeds
    assert res.runs == 5 * 6 * 2


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
        if r.paper_ratio is not None:  # a % change: its ratio is 1 + change / 100
            assert r.paper_ratio == pytest.approx(1 + r.paper / 100)


def test_smoke_cannot_be_significant_so_only_the_no_change_row_agrees(smoke):
    # 2 pairs: the smallest two-sided Wilcoxon p is 2 / 2^2 = 0.5 > 0.01, so every simulated
    # direction is "no significant change" (0); of the 7 published directions only the CPU
    # isolation value (0.0125: no significant change either way it is read) is 0
    _, res = smoke
    assert res.agreement() == (1, 7)
    [iso] = [r for r in res.rows if r.agree]
    assert "cpu_isolation" in iso.row and iso.metric == "PcmaWritingV2Score"
    assert all("not significant (p > 0.01)" in r.note or "identical" in r.note
               for r in res.rows if r.agree is not None)


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


def test_direction_rule_uses_significance_not_size():
    # the slides' -0.57 % is a significant change: a significant +2 % disagrees, a
    # non-significant -3 % is "no change" and disagrees too, a significant -0.2 % agrees
    pub = next(p for p in study.PUBLISHED if p.value == -0.57)
    base = [{"pcmark.score": 1000.0} for _ in range(10)]

    def row(deltas):
        new = [{"pcmark.score": 1000.0 * (1 + d / 100)} for d in deltas]
        grid = {(pub.change, "pcmark.score"): study.paired_cell(base, new, "pcmark.score")}
        return study._row(pub, grid, {}, study.Sizes(10, 10, 10))

    assert row([2.0] * 10).agree is False
    assert row([-3.0, 3.0] * 5).agree is False
    r = row([-0.2] * 10)
    assert r.agree is True and r.paper_ratio == pytest.approx(0.9943) and r.sim_ratio == pytest.approx(0.998)


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
