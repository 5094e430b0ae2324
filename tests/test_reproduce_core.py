"""`hetsched reproduce`'s shared machinery: statistics against hand-derived numbers, rows,
the writers, the runner and the HTML report (and its rendering in headless Chromium)."""

from __future__ import annotations

import csv
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hetsched.reproduce.core import (AGREES, AGREES_IN_MAGNITUDE, DIFFERS_IN_MAGNITUDE, DISAGREES, INCONCLUSIVE,
                                     NOT_DECIDABLE, Context, Row, Run, Runner, StudyResult, change_interval, judge,
                                     judge_magnitude, magnitude_counts, mean_ci, ratio, read_study, row_from,
                                     wilcoxon_p, write_run_times, write_study)
from hetsched.reproduce import reproduce
from hetsched.reproduce.journal import RunJournal, build_id

T975_2 = 4.302652729911275  # Student's t, 97.5 % quantile, 2 degrees of freedom


def test_mean_ci_worked_example():
    # 1..5: mean 3, s = sqrt(2.5); t(0.975, 4) = 2.7764451; half = 2.7764451 * 1.5811388 / sqrt(5)
    m, lo, hi = mean_ci([1, 2, 3, 4, 5])
    half = 2.7764451051977987 * math.sqrt(2.5) / math.sqrt(5)
    assert m == 3.0
    assert lo == pytest.approx(3.0 - half, rel=1e-12) and hi == pytest.approx(3.0 + half, rel=1e-12)
    assert hi - lo == pytest.approx(3.9264, abs=1e-4)


def test_mean_ci_edges():
    assert mean_ci([7.0])[0] == 7.0 and math.isnan(mean_ci([7.0])[1])
    assert all(math.isnan(x) for x in mean_ci([]))
    m, lo, hi = mean_ci([2.0, 2.0, 2.0])
    assert (m, lo, hi) == (2.0, 2.0, 2.0)


def test_wilcoxon_exact_p():
    # 8 pairs, every difference positive and distinct: the exact two-sided p is 2 / 2^8
    a = [1, 2, 3, 4, 5, 6, 7, 8]
    b = [x + d for x, d in zip(a, [1, 2, 3, 4, 5, 6, 7, 8])]
    assert wilcoxon_p(a, b) == pytest.approx(2 / 256)
    assert wilcoxon_p(a, a) is None
    with pytest.raises(ValueError):
        wilcoxon_p([1, 2], [1])


def test_ratio():
    assert ratio(85.0, 100.0) == 0.85
    assert ratio(1.0, 0.0) is None and ratio(None, 1.0) is None


def test_paired_change_interval_worked_example():
    # docs/reproduce.md's example: per-seed differences -20, -11, -15 (mean -15.333, s = 4.5092),
    # half-width t * s / sqrt(3) = 11.2016, over the baseline's mean 100.333
    r, lo, hi = change_interval([80.0, 90.0, 85.0], [100.0, 101.0, 100.0])
    md, mb = -46.0 / 3, 301.0 / 3
    s = math.sqrt(((-20 - md) ** 2 + (-11 - md) ** 2 + (-15 - md) ** 2) / 2)
    half = T975_2 * s / math.sqrt(3)
    assert s == pytest.approx(4.5092, abs=1e-4) and half == pytest.approx(11.2016, abs=1e-4)
    assert r == pytest.approx(1 + md / mb) == pytest.approx(0.84718, abs=1e-5)
    assert lo == pytest.approx(1 + (md - half) / mb) == pytest.approx(0.73553, abs=1e-5)
    assert hi == pytest.approx(1 + (md + half) / mb) == pytest.approx(0.95882, abs=1e-5)


def test_unpaired_change_interval_is_welch():
    from scipy import stats

    # 1, 2, 3 against 2, 4: difference of the means -1; variances of the means 1/3 and 1
    r, lo, hi = change_interval([1.0, 2.0, 3.0], [2.0, 4.0])
    se = math.sqrt(1 / 3 + 1)
    df = (1 / 3 + 1) ** 2 / ((1 / 3) ** 2 / 2 + 1 ** 2 / 1)
    half = stats.t.ppf(0.975, df) * se
    assert r == pytest.approx(1 - 1 / 3)
    assert lo == pytest.approx(1 + (-1 - half) / 3) and hi == pytest.approx(1 + (-1 + half) / 3)


def test_change_interval_of_changes_in_percent():
    r, lo, hi = change_interval([-1.0, -2.0, -3.0], pct=True)
    half = T975_2 * 1.0 / math.sqrt(3)
    assert r == pytest.approx(0.98) and lo == pytest.approx(0.98 - half / 100) and hi == pytest.approx(0.98 + half / 100)
    assert change_interval([5.0], pct=True) is None
    assert change_interval([1.0, 2.0], [1.0]) is None and change_interval([1.0, 2.0], [0.0, 0.0]) is None
    with pytest.raises(ValueError):
        change_interval([1.0, 2.0])


def test_judge_rules():
    assert judge(0.85, 0.74, 0.96) == AGREES
    assert judge(0.85, 1.02, 1.10) == DISAGREES
    assert judge(0.85, 0.90, 1.05) == INCONCLUSIVE
    assert judge(1.20, 1.00, 1.10) == INCONCLUSIVE       # the interval touches no change
    assert judge(0.85, None, None) == INCONCLUSIVE       # one seed: no interval
    assert judge(0.85, 0.74, 0.96, undecidable="within the control's band") == NOT_DECIDABLE
    # a paper that prints no change is never agreed with; a change it did not see disagrees
    assert judge(1.0, 0.99, 1.01) == INCONCLUSIVE and judge(1.0, 1.02, 1.05) == DISAGREES
    assert judge(None, 0.9, 0.95) is None


def test_magnitude_inside_and_outside_the_interval_widened_by_the_papers_noise():
    # docs/reproduce.md's magnitude example. Paper: 89 against 100, -11 %. Simulated: 92, 93, 94
    # over 100, 100, 100: differences -8, -7, -6 (mean -7, s = 1), half-width t(0.975, 2) / sqrt(3)
    # = 2.4841, over the baseline's 100: -7.0 % [-9.48 %, -4.52 %]; agrees in direction
    vals, base = [92.0, 93.0, 94.0], [100.0, 100.0, 100.0]
    half = T975_2 / math.sqrt(3) / 100
    r = row_from("T", "r", "m", "u", 89.0, vals, paper_base=100.0, sim_base_values=base, paper_noise=0.02)
    assert (r.change_lo, r.change_hi) == (pytest.approx(0.93 - half), pytest.approx(0.93 + half))
    assert r.change_lo == pytest.approx(0.90516, abs=1e-5) and r.verdict == AGREES
    # widened by the paper's +-2 %: [-11.48 %, -2.52 %], which holds -11 %
    assert r.paper_noise == 0.02 and r.magnitude == AGREES_IN_MAGNITUDE
    # by +-1 %: [-10.48 %, -3.52 %], which does not
    r1 = row_from("T", "r", "m", "u", 89.0, vals, paper_base=100.0, sim_base_values=base, paper_noise=0.01)
    assert r1.verdict == AGREES and r1.magnitude == DIFFERS_IN_MAGNITUDE
    # no noise shown: the factor of 2, 11 / 7 = 1.57, agrees
    r0 = row_from("T", "r", "m", "u", 89.0, vals, paper_base=100.0, sim_base_values=base)
    assert r0.paper_noise is None and r0.magnitude == AGREES_IN_MAGNITUDE
    # the widened interval on the other side of no change: -11 % ± 2 % against +5 % [+3, +7] -> [+1, +9]
    assert judge_magnitude(0.89, 1.05, 1.03, 1.07, noise=0.02) == DIFFERS_IN_MAGNITUDE
    # one seed, no interval: the point widened, -9 % +- 2 % reaches -11 % (a bound, inside), +- 1.9 % does not
    assert judge_magnitude(0.89, 0.91, noise=0.02) == AGREES_IN_MAGNITUDE
    assert judge_magnitude(0.89, 0.91, noise=0.019) == DIFFERS_IN_MAGNITUDE
    with pytest.raises(ValueError):
        judge_magnitude(0.89, 0.93, noise=-0.01)


def test_magnitude_factor_of_two_both_ways_and_signs():
    # the case: the paper's -11 % against a tight -0.1 %: both agree in direction,
    # but 11 / 0.1 = 110: differs in magnitude
    r = row_from("T", "r", "m", "u", 89.0, [99.9, 99.9, 99.9], paper_base=100.0,
                 sim_base_values=[100.0, 100.0, 100.0])
    assert r.verdict == AGREES and r.magnitude == DIFFERS_IN_MAGNITUDE
    # paper -10 %: simulated -5 % (10 / 5 = 2) and -20 % (10 / 20 = 1/2) agree, at the bounds
    assert judge_magnitude(0.90, 0.95, 0.94, 0.96) == AGREES_IN_MAGNITUDE
    assert judge_magnitude(0.90, 0.80, 0.78, 0.82) == AGREES_IN_MAGNITUDE
    # -4.9 % (10 / 4.9 = 2.04) and -21 % (10 / 21 = 0.476) differ
    assert judge_magnitude(0.90, 0.951, 0.94, 0.96) == DIFFERS_IN_MAGNITUDE
    assert judge_magnitude(0.90, 0.79, 0.78, 0.80) == DIFFERS_IN_MAGNITUDE
    # increases likewise: paper +30 % against +20 % (1.5) agrees, against +10 % (3) differs
    assert judge_magnitude(1.30, 1.20) == AGREES_IN_MAGNITUDE and judge_magnitude(1.30, 1.10) == DIFFERS_IN_MAGNITUDE
    # opposite signs differ whatever the sizes (+5 % against -5 %), and a simulated change of
    # exactly 0 has no sign
    assert judge_magnitude(1.05, 0.95, 0.94, 0.96) == DIFFERS_IN_MAGNITUDE
    assert judge_magnitude(0.90, 1.0, 1.0, 1.0) == DIFFERS_IN_MAGNITUDE
    # ... unless the paper's noise reaches it: -10 % +- 10 % holds 0 (a bound, inside)
    assert judge_magnitude(0.90, 1.0, 1.0, 1.0, noise=0.10) == AGREES_IN_MAGNITUDE
    # an inconclusive row is weighed too: -10 % against -6 % [-13, +1] (10 / 6 = 1.67)
    assert judge(0.90, 0.87, 1.01) == INCONCLUSIVE and judge_magnitude(0.90, 0.94, 0.87, 1.01) == AGREES_IN_MAGNITUDE
    # a percent row: -3 % against -6 % (1/2) agrees
    p = row_from("T", "r", "energy change", "%", -3.0, [-5.0, -6.0, -7.0], pct=True)
    assert p.magnitude == AGREES_IN_MAGNITUDE
    assert judge_magnitude(None, 0.9) is None and judge_magnitude(0.9, None) is None
    assert judge_magnitude(0.9, float("nan")) is None


def test_magnitude_of_a_paper_ratio_of_one_and_rows_without_one():
    # the paper prints no change (ratio exactly 1) and no noise: the simulated interval itself
    # must hold no change; the direction is never "agrees" (ties never agree)
    assert judge(1.0, 0.99, 1.01) == INCONCLUSIVE and judge_magnitude(1.0, 1.0, 0.99, 1.01) == AGREES_IN_MAGNITUDE
    assert judge(1.0, 1.02, 1.05) == DISAGREES and judge_magnitude(1.0, 1.035, 1.02, 1.05) == DIFFERS_IN_MAGNITUDE
    # with the paper's +-3 %: [+2, +5] widened to [-1, +8] holds 0
    assert judge_magnitude(1.0, 1.035, 1.02, 1.05, noise=0.03) == AGREES_IN_MAGNITUDE
    # identical runs: [1, 1] holds no change; without an interval, only a simulated 0 matches
    tie = row_from("T", "r", "m", "u", 100.0, [5.0, 5.0, 5.0], paper_base=100.0, sim_base_values=[5.0, 5.0, 5.0])
    assert tie.verdict == INCONCLUSIVE and tie.magnitude == AGREES_IN_MAGNITUDE
    assert judge_magnitude(1.0, 1.0) == AGREES_IN_MAGNITUDE and judge_magnitude(1.0, 1.01) == DIFFERS_IN_MAGNITUDE
    # not decidable: the paper's change is within its own noise, no magnitude to weigh
    nd = row_from("T", "r", "m", "u", 98.0, [90.0, 91.0, 92.0], paper_base=100.0,
                  sim_base_values=[100.0, 100.0, 100.0], undecidable="within the paper's band")
    assert nd.verdict == NOT_DECIDABLE and nd.magnitude is None
    # a baseline row and a row without a simulated value: neither verdict nor magnitude
    b = row_from("T", "EAS", "m", "u", 100.0, [100.0, 100.0])
    k = row_from("T", "r", "m", "u", 9.0, None, paper_base=10.0, note="only the paper's", paper_noise=0.02)
    assert (b.verdict, b.magnitude, k.verdict, k.magnitude, k.paper_noise) == (None, None, None, None, 0.02)
    # a direction stated in the text only (no printed value, a nominal ratio, as hmc-balance's
    # rows): judged in direction, never in magnitude
    d = row_from("T", "r", "m", "u", None, [90.0, 91.0, 92.0], sim_base_values=[100.0, 100.0, 100.0])
    d.paper_ratio = 0.999
    d.judge()
    assert d.verdict == AGREES and d.magnitude is None
    # rows agreeing by construction are counted apart, as the verdicts are
    c = row_from("T", "r", "m", "u", 90.0, [90.0, 91.0, 92.0], paper_base=100.0,
                 sim_base_values=[100.0, 100.0, 100.0], construction="identical cores")
    assert c.magnitude == AGREES_IN_MAGNITUDE
    assert magnitude_counts([c, nd, tie]) == {AGREES_IN_MAGNITUDE: 1, DIFFERS_IN_MAGNITUDE: 0}
    assert magnitude_counts([c, nd, tie], construction=True) == {AGREES_IN_MAGNITUDE: 1, DIFFERS_IN_MAGNITUDE: 0}


def test_magnitude_counts_reach_the_report(tmp_path):
    from hetsched.reproduce.report import render_report

    res = _result(tmp_path)
    page = render_report([res], tmp_path)
    # one row agrees in magnitude (current, -15 % against -14.9 %), one differs (FPS)
    assert ('<p class="headline"><b>1 of 2</b> published changes weighed in size <b class="m-agrees">agree in '
            "magnitude</b> with the simulation (learning-eas 1 of 2); 0 of 2 published changes with a verdict "
            "agree in direction.") in page
    assert '<span class="m-agrees">agrees in magnitude 1</span>, <span class="m-differs">differs in magnitude 1' in page
    assert '<td class="magnitude m-agrees">agrees</td>' in page and '<td class="magnitude m-differs">differs</td>' in page


def test_a_tie_is_never_agreement():
    # identical runs (a deterministic workload the change does not touch): the interval is
    # [1, 1], which includes no change, whatever the paper says
    r = row_from("T", "r", "m", "u", 99.0, [5.0, 5.0, 5.0], paper_base=100.0, sim_base_values=[5.0, 5.0, 5.0])
    assert (r.sim_ratio, r.change_lo, r.change_hi) == (1.0, 1.0, 1.0) and r.verdict == INCONCLUSIVE


def test_row_from_fills_ratios_and_ci():
    r = row_from("Table 2", "Learning EAS", "current", "mA", 850.0, [80.0, 90.0, 100.0],
                 paper_base=1000.0, sim_base_values=[100.0, 100.0, 100.0])
    assert r.sim == 90.0 and r.n == 3
    assert r.paper_ratio == 0.85 and r.sim_ratio == pytest.approx(0.9)
    half = T975_2 * 10.0 / math.sqrt(3)  # t(0.975, 2) * s / sqrt(n)
    assert r.ci_lo == pytest.approx(90.0 - half) and r.ci_hi == pytest.approx(90.0 + half)
    # the same spread in the paired differences: the interval of the change includes 1
    assert r.change_lo == pytest.approx(0.9 - half / 100) and r.change_hi == pytest.approx(0.9 + half / 100)
    assert r.verdict == INCONCLUSIVE
    assert r.values == [80.0, 90.0, 100.0] and r.base_values == [100.0, 100.0, 100.0]
    # a baseline row: no ratios, no verdict
    b = row_from("Table 2", "EAS", "current", "mA", 1000.0, [100.0, 100.0])
    assert b.paper_ratio is None and b.verdict is None
    with pytest.raises(ValueError, match="needs a note"):
        row_from("T", "r", "m", "u", 1.0, None)
    n = row_from("T", "r", "m", "u", 1.0, None, note="no such chipset")
    assert n.sim is None and n.note == "no such chipset" and n.paper_ratio is None
    k = row_from("T", "r", "m", "u", 9.0, None, paper_base=10.0, note="only the paper's")
    assert k.paper_ratio == 0.9 and k.sim_ratio is None and k.verdict is None
    # a row that is itself a change in percent
    p = row_from("T", "r", "energy change", "%", -3.0, [-5.0, -6.0, -7.0], pct=True)
    assert p.paper_ratio == pytest.approx(0.97) and p.sim_ratio == pytest.approx(0.94) and p.verdict == AGREES


def test_counts_keep_rows_by_construction_apart():
    rows = [row_from("T", "a", "m", "u", 85.0, [80.0, 90.0, 85.0], paper_base=100.0,
                     sim_base_values=[100.0, 101.0, 100.0]),
            row_from("T", "b", "m", "u", 85.0, [80.0, 90.0, 85.0], paper_base=100.0,
                     sim_base_values=[100.0, 101.0, 100.0], construction="identical cores"),
            row_from("T", "c", "m", "u", 115.0, [80.0, 90.0, 85.0], paper_base=100.0,
                     sim_base_values=[100.0, 101.0, 100.0]),
            row_from("T", "d", "m", "u", 115.0, [80.0, 90.0, 85.0], paper_base=100.0,
                     sim_base_values=[100.0, 101.0, 100.0], undecidable="the paper's control moves 8 %"),
            row_from("T", "e", "m", "u", 100.0, [80.0, 90.0, 85.0])]
    res = StudyResult("s", "t", "p", "pl", rows)
    assert [r.verdict for r in rows] == [AGREES, AGREES, DISAGREES, NOT_DECIDABLE, None]
    assert res.counts() == {AGREES: 1, DISAGREES: 1, INCONCLUSIVE: 0, NOT_DECIDABLE: 1}
    assert res.counts(construction=True) == {AGREES: 1, DISAGREES: 0, INCONCLUSIVE: 0, NOT_DECIDABLE: 0}
    assert res.agreement() == (1, 3)
    # magnitude (no noise, the factor of 2): a and b, -15 % against -15.3 %, agree; c, +15 % against
    # -15.3 %, differs (signs); d is not decidable and e has no verdict: no magnitude
    assert [r.magnitude for r in rows] == [AGREES_IN_MAGNITUDE, AGREES_IN_MAGNITUDE, DIFFERS_IN_MAGNITUDE, None, None]
    assert res.magnitude_counts() == {AGREES_IN_MAGNITUDE: 1, DIFFERS_IN_MAGNITUDE: 1}
    assert res.magnitude_counts(construction=True) == {AGREES_IN_MAGNITUDE: 1, DIFFERS_IN_MAGNITUDE: 0}
    assert res.magnitude_agreement() == (1, 2)
    assert res.counts_line() == ("agrees 1, disagrees 1, inconclusive 0, not decidable 1; "
                                 "agrees in magnitude 1, differs in magnitude 1; "
                                 "by construction 1 (agrees 1; agrees in magnitude 1)")


def _result(tmp: Path) -> StudyResult:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3))
    ax.bar(["EAS", "Learning EAS"], [1000, 850], color=["#888", "#c33"])
    ax.set_title("game current")
    fig.savefig(tmp / "demo_fig.png", dpi=80)
    plt.close(fig)
    rows = [row_from("Table 2", "EAS", "current", "mA", 1000.0, [100.0, 101.0]),
            row_from("Table 2", "Learning EAS", "current", "mA", 850.0, [80.0, 90.0], paper_base=1000.0,
                     sim_base_values=[100.0, 101.0], paper_noise=0.03),
            row_from("Table 2", "Learning EAS", "FPS", "fps", 59.0, [40.0, 41.0], paper_base=58.0,
                     sim_base_values=[59.0, 59.5]),
            row_from("Table 4", "Exynos 7420", "current", "mA", 700.0, None, note="no such platform built in")]
    return StudyResult("learning-eas", "Learning EAS (demo)", "paper 000", "gs101: three clusters", rows,
                       plots=[("demo_fig.png", "Fig. demo: game current")],
                       notes=["FPS **disagrees**: the agents drive TARGET_LOAD to its bound."])


def test_write_and_read_study(tmp_path):
    res = _result(tmp_path)
    paths = write_study(res, tmp_path)
    assert sorted(p.name for p in paths) == ["learning-eas.csv", "learning-eas.json", "learning-eas.md"]
    rows = list(csv.DictReader((tmp_path / "learning-eas.csv").open()))
    assert [r["row"] for r in rows] == ["EAS", "Learning EAS", "Learning EAS", "Exynos 7420"]
    assert [r["verdict"] for r in rows] == ["", "inconclusive", "disagrees", ""] and rows[3]["sim"] == ""
    # Learning EAS current: paper -15 %, simulated -14.9 % (mean 85 over 100.5): 15 / 14.9, agrees;
    # FPS: paper +1.7 %, simulated -31.3 %: opposite signs, differs
    assert [r["magnitude"] for r in rows] == ["", "agrees in magnitude", "differs in magnitude", ""]
    assert [r["paper_noise"] for r in rows] == ["", "0.03", "", ""]
    assert list(rows[0]) == list(Row.CSV_FIELDS)
    md = (tmp_path / "learning-eas.md").read_text()
    assert "| Table 4 | Exynos 7420 |" in md
    assert ("Verdicts: agrees 0, disagrees 1, inconclusive 1, not decidable 0; "
            "agrees in magnitude 1, differs in magnitude 1.") in md
    assert "| -15.0 % ± 3.0 |" in md and "| inconclusive | agrees |" in md and "| **disagrees** | **differs** |" in md
    back = read_study(tmp_path / "learning-eas.json")
    assert back.rows == res.rows and back.plots == res.plots
    # a STUDY.json of a build before the magnitude: weighed when read (no noise), verdicts kept
    doc = json.loads((tmp_path / "learning-eas.json").read_text())
    for r in doc["rows"]:
        del r["magnitude"], r["paper_noise"]
    (tmp_path / "old.json").write_text(json.dumps(doc))
    old = read_study(tmp_path / "old.json")
    assert [r.magnitude for r in old.rows] == [None, "agrees in magnitude", "differs in magnitude", None]
    assert [r.verdict for r in old.rows] == [r.verdict for r in res.rows]
    assert not list(tmp_path.glob("*.tmp"))


def test_run_times_longest_first(tmp_path):
    p = write_run_times("learning-eas", [("Table 5 eas500, seed 0", 2.5, False), ("game, seed 1", 10.25, True),
                                         ("game, seed 0", 10.25, False)], tmp_path)
    assert p.name == "learning-eas.runs.csv"
    # ties in wall time go by name; csv quotes the labels' commas
    assert p.read_text() == ('run,wall_s,resumed\n"game, seed 0",10.250,0\n"game, seed 1",10.250,1\n'
                             '"Table 5 eas500, seed 0",2.500,0\n')
    assert not list(tmp_path.glob("*.tmp"))


# ----------------------------------------------------------------------------- the journal

def test_journal_keeps_this_builds_runs_and_drops_the_rest(tmp_path):
    j = RunJournal(tmp_path, resume=False, build="b1")
    assert j.add("h1", "one", {"energy_j": 1.5, "series": [0.1, float("nan")], "n": 3, "s": "x"})
    assert j.add("h2", "two", {"energy_j": 2.0})
    assert j.add("h1", "one again", {"energy_j": 1.25})  # the last line of a run wins
    j.close()
    with (tmp_path / "runs.jsonl").open("a") as f:
        f.write('{"run": "h3", "build": "b1", "res')  # a write cut short by SIGKILL
    warned = []
    again = RunJournal(tmp_path, resume=True, build="b1", warn=warned.append)
    again.close()
    assert warned == [f"{tmp_path / 'runs.jsonl'}: line 4: cut short (the disk filled, or the process was killed, "
                      "while it was written): dropped, its run runs again"]
    assert again.dropped == 1 and set(again.stored) == {"h1", "h2"}
    assert again.stored["h1"] == {"energy_j": 1.25}
    # without --resume nothing is offered, and nothing is lost either
    kept = RunJournal(tmp_path, resume=False, build="b1")
    kept.close()
    assert kept.stored == {} and len((tmp_path / "runs.jsonl").read_text().splitlines()) == 2
    # another build's results are not this build's: dropped
    other = RunJournal(tmp_path, resume=True, build="b2")
    other.close()
    assert other.stored == {} and other.dropped == 2 and (tmp_path / "runs.jsonl").read_text() == ""
    assert [p.name for p in tmp_path.iterdir()] == ["runs.jsonl"]


def test_journal_drops_lines_it_cannot_trust_and_records_only_when_asked(tmp_path):
    (tmp_path / "runs.jsonl").write_text(
        '{"build": "b", "result": {}}\n'                      # no run hash
        '{"run": ["h"], "build": "b", "result": {}}\n'        # not a hash
        '{"run": "h", "build": "b", "result": [1]}\n'         # not a result
        '[1, 2]\n'
        '{"run": "ok", "build": "b", "result": {"x": 1.0}}\n')
    with pytest.warns(UserWarning, match=r"runs.jsonl: line 1 and 3 more: not a journal record \(no run hash"):
        j = RunJournal(tmp_path, resume=True, build="b", record=False)
    assert j.stored == {"ok": {"x": 1.0}} and j.dropped == 4
    assert not j.add("new", "a Ray run", {"x": 2.0})  # not recorded: its worker's build is its own
    j.close()
    assert (tmp_path / "runs.jsonl").read_text() == '{"run": "ok", "build": "b", "result": {"x": 1.0}}\n'


def test_journal_refuses_a_result_json_would_change(tmp_path):
    import numpy as np

    j = RunJournal(tmp_path, resume=False, build="b")
    assert not j.add("t", "a tuple", {"x": (1, 2)})            # would come back a list
    assert not j.add("n", "a numpy scalar", {"x": np.float64(0.5)})
    assert not j.add("k", "an int key", {"x": {1: 2.0}})        # would come back "1"
    assert not j.add("o", "no JSON at all", {"x": object()})
    j.close()
    assert list(tmp_path.iterdir()) == []  # the file is made by the first run journaled


def test_build_id_is_stable_and_covers_every_file(tmp_path):
    import hetsched._engine as engine

    a, b = build_id(), build_id()
    assert a == b and len(a) == 16 and int(a, 16) >= 0
    # the compiled engine is one of the package's files, so a rebuilt engine is another build
    assert Path(engine.__file__).resolve().parent == Path(build_id.__code__.co_filename).resolve().parents[1]
    pkg = tmp_path / "pkg"
    (pkg / "reproduce").mkdir(parents=True)
    (pkg / "reproduce" / "study.py").write_text("X = 1\n")
    (pkg / "_engine.abi3.so").write_bytes(b"\x7fELF one")
    first = build_id(pkg)
    (pkg / "__pycache__").mkdir()
    (pkg / "__pycache__" / "study.cpython-311.pyc").write_bytes(b"compiled")  # not the build
    assert build_id(pkg) == first
    (pkg / "_engine.abi3.so").write_bytes(b"\x7fELF two")
    second = build_id(pkg)
    (pkg / "reproduce" / "study.py").write_text("X = 2\n")
    assert len({first, second, build_id(pkg)}) == 3


def test_a_reproduction_refused_before_it_runs_leaves_no_journal(tmp_path):
    from hetsched.errors import HetschedError

    out = tmp_path / "out"
    with pytest.raises(HetschedError):
        reproduce(["fa-cfs"], out_dir=out, level="smoke", seeds=1, jobs=1, ray="garbage")
    assert not out.exists() or list(out.iterdir()) == []


def test_resume_takes_every_run_and_writes_the_same_study(tmp_path):
    (first,) = reproduce(["ospm2020"], out_dir=tmp_path, level="smoke", seeds=2, jobs=1)
    files = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.suffix in (".csv", ".svg")}
    lines = (tmp_path / "runs.jsonl").read_text().splitlines()
    assert first.runs == len(lines) > 0 and first.resumed == 0
    (again,) = reproduce(["ospm2020"], out_dir=tmp_path, level="smoke", seeds=2, jobs=1, resume=True)
    assert again.runs == 0 and again.resumed == first.runs
    for name, data in files.items():
        if name.endswith(".runs.csv"):
            # the same runs and times, each marked as taken from the journal
            assert (tmp_path / name).read_text() == data.decode().replace(",0\n", ",1\n")
        else:
            assert (tmp_path / name).read_bytes() == data, name
    md = (tmp_path / "ospm2020.md").read_text()
    assert f"0 runs (and {first.runs} taken from runs.jsonl)" in md


def test_nan_never_reaches_json(tmp_path):
    res = _result(tmp_path)
    res.rows.append(Row("T", "r", "m", "u", float("nan"), float("inf")))
    write_study(res, tmp_path)
    doc = json.loads((tmp_path / "learning-eas.json").read_text())
    assert doc["rows"][-1]["paper"] is None and doc["rows"][-1]["sim"] is None


def test_runner_runs_in_order_and_caches():
    runner = Runner(jobs=2, progress=False)
    try:
        runs = [Run.sim("gs101", "periodic:n=3,util=0.1", "eas", seed=s, duration_s=0.2) for s in (0, 1)]
        a = runner.run(runs + [runs[0]])
        assert a[0] is a[2] and runner.runs_done == 2
        b = runner.run([runs[1]])
        assert b[0] is a[1] and runner.runs_done == 2
        # each run actually run is timed once, under the name it was asked for by
        assert len(runner.timings) == 2 and {w for _, w, _ in runner.timings} == {a[0]["wall_s"], a[1]["wall_s"]}
        assert not any(resumed for _, _, resumed in runner.timings)
        assert sorted(label for label, _, _ in runner.timings) == ["gs101 eas periodic:n=3,util=0.1, seed 0",
                                                                "gs101 eas periodic:n=3,util=0.1, seed 1"]
        # the same run in this process gives the same numbers, to the bit
        from hetsched.reproduce.core import execute

        again = execute(runs[0])
        assert again["energy_j"] == a[0]["energy_j"]
        assert {"energy_j", "avg_power_mw", "counters.policy.feec_calls"} <= set(a[0])
    finally:
        runner.close()


def test_context_levels():
    ctx = Context(level="smoke", seeds=3)
    assert ctx.pick(1, 2, 3) == 1 and ctx.quick and ctx.seed_list() == [0, 1, 2]
    assert not Context(level="full").quick


def test_cli_unknown_study_is_one_line_exit_2(tmp_path):
    p = subprocess.run([sys.executable, "-m", "hetsched.cli", "reproduce", "nope", "--out", str(tmp_path / "o")],
                       capture_output=True, text=True)
    assert p.returncode == 2
    assert p.stderr.strip().count("\n") == 0 and "learning-eas" in p.stderr and "nope" in p.stderr
    assert not (tmp_path / "o").exists()


def test_lower_bound_off_changes_nothing_else():
    from hetsched import Simulation

    on = Simulation("gs101", "periodic:n=3,util=0.1", "eas", seed=3).run(0.3).doc
    off = Simulation("gs101", "periodic:n=3,util=0.1", "eas", seed=3, lower_bound=False).run(0.3).doc
    assert on["energy_lower_bound_j"] > 0 and off["energy_lower_bound_j"] is None
    assert off["energy_over_bound"] is None
    for k in ("energy_j", "counters", "per_cpu", "events"):
        if k in on:
            assert on[k] == off[k]


def test_help_keeps_square_brackets():
    """Option help with defaults in brackets ('[workload's own, else 10]', 'NAME[knob=v]')
    must reach the user: rich markup would swallow them as style tags."""
    p = subprocess.run([sys.executable, "-m", "hetsched.cli", "compare", "--help"], capture_output=True, text=True)
    assert p.returncode == 0 and "NAME[knob=v,...]" in p.stdout and "[all registered]" in p.stdout
