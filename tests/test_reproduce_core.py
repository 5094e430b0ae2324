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

from hetsched.reproduce.core import (Context, Row, Run, Runner, StudyResult, direction_agrees, mean_ci, ratio,
                                     read_study, row_from, wilcoxon_p, write_study)
from hetsched.reproduce.report import render_report, write_report


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


def test_ratio_and_direction():
    assert ratio(85.0, 100.0) == 0.85
    assert ratio(1.0, 0.0) is None and ratio(None, 1.0) is None
    assert direction_agrees(0.85, 0.9) is True
    assert direction_agrees(0.85, 1.2) is False
    assert direction_agrees(1.005, 0.995) is True       # both "no change" within 1 %
    assert direction_agrees(1.005, 0.95) is False
    assert direction_agrees(None, 0.9) is None


def test_row_from_fills_ratios_and_ci():
    r = row_from("Table 2", "Learning EAS", "current", "mA", 850.0, [80.0, 90.0, 100.0],
                 paper_base=1000.0, sim_base_values=[100.0, 100.0, 100.0])
    assert r.sim == 90.0 and r.n == 3
    assert r.paper_ratio == 0.85 and r.sim_ratio == pytest.approx(0.9)
    assert r.agree is True
    half = 4.302652729911275 * 10.0 / math.sqrt(3)  # t(0.975, 2) * s / sqrt(n)
    assert r.ci_lo == pytest.approx(90.0 - half) and r.ci_hi == pytest.approx(90.0 + half)
    # a baseline row: no ratios, no direction
    b = row_from("Table 2", "EAS", "current", "mA", 1000.0, [100.0, 100.0])
    assert b.paper_ratio is None and b.agree is None
    with pytest.raises(ValueError, match="needs a note"):
        row_from("T", "r", "m", "u", 1.0, None)
    n = row_from("T", "r", "m", "u", 1.0, None, note="no such chipset")
    assert n.sim is None and n.note == "no such chipset" and n.paper_ratio is None
    k = row_from("T", "r", "m", "u", 9.0, None, paper_base=10.0, note="only the paper's")
    assert k.paper_ratio == 0.9 and k.sim_ratio is None and k.agree is None


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
                     sim_base_values=[100.0, 101.0]),
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
    assert rows[1]["agree"] == "True" and rows[2]["agree"] == "False" and rows[3]["sim"] == ""
    md = (tmp_path / "learning-eas.md").read_text()
    assert "| Table 4 | Exynos 7420 |" in md and "Direction agrees on 1 of 2" in md
    back = read_study(tmp_path / "learning-eas.json")
    assert back.rows == res.rows and back.plots == res.plots
    assert not list(tmp_path.glob("*.tmp"))


def test_nan_never_reaches_json(tmp_path):
    res = _result(tmp_path)
    res.rows.append(Row("T", "r", "m", "u", float("nan"), float("inf")))
    write_study(res, tmp_path)
    doc = json.loads((tmp_path / "learning-eas.json").read_text())
    assert doc["rows"][-1]["paper"] is None and doc["rows"][-1]["sim"] is None


def test_report_is_self_contained(tmp_path):
    write_study(_result(tmp_path), tmp_path)
    p = write_report(tmp_path)
    text = p.read_text()
    assert "data:image/png;base64," in text
    assert 'class="disagree"' in text and "<strong>disagrees</strong>" in text
    assert "src=\"demo_fig.png\"" not in text  # no reference to a file beside it
    assert "1 / 2" in text  # the summary's agreement count


def test_runner_runs_in_order_and_caches():
    runner = Runner(jobs=2, progress=False)
    try:
        runs = [Run.sim("gs101", "periodic:n=3,util=0.1", "eas", seed=s, duration_s=0.2) for s in (0, 1)]
        a = runner.run(runs + [runs[0]])
        assert a[0] is a[2] and runner.runs_done == 2
        b = runner.run([runs[1]])
        assert b[0] is a[1] and runner.runs_done == 2
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


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def test_report_renders_in_headless_chromium(tmp_path):
    """The report opened in a real browser: the screenshot has the table's colours and the
    plot's red bar (CI installs Debian's chromium; elsewhere this skips without it)."""
    exe = _chromium()
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("CI must have chromium (.ci/run installs it)")
        pytest.skip("no chromium")
    write_study(_result(tmp_path), tmp_path)
    html_path = write_report(tmp_path)
    shot = tmp_path / "shot.png"
    subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--screenshot={shot}", "--window-size=1300,1400", html_path.as_uri()],
                   capture_output=True, timeout=120, check=False)
    assert shot.exists(), "chromium wrote no screenshot"
    from matplotlib.image import imread

    img = imread(str(shot))[:, :, :3]
    def has(rgb, tol=0.04):
        return bool((abs(img - [c / 255 for c in rgb]).max(axis=2) < tol).any())
    assert has((0xfd, 0xec, 0xea)), "the disagreeing row's shading is not on the screenshot"
    assert has((0xe6, 0xf4, 0xea)), "the agreeing row's shading is not on the screenshot"
    assert has((0xcc, 0x33, 0x33), tol=0.06), "the plot's red bar is not on the screenshot"


def test_lower_bound_off_changes_nothing_else():
    from hetsched import Simulation

    on = Simulation("gs101", "periodic:n=3,util=0.1", "eas", seed=3).run(0.3).doc
    off = Simulation("gs101", "periodic:n=3,util=0.1", "eas", seed=3, lower_bound=False).run(0.3).doc
    assert on["energy_lower_bound_j"] > 0 and off["energy_lower_bound_j"] is None
    assert off["energy_over_bound"] is None
    for k in ("energy_j", "counters", "per_cpu", "events"):
        if k in on:
            assert on[k] == off[k]


def test_long_tables_are_folded_with_the_disagreements_shown(tmp_path):
    from hetsched.reproduce.report import FOLD_ROWS

    res = _result(tmp_path)
    res.rows = [row_from("T", f"r{i}", "m", "u", 1.0, [1.0, 1.0], paper_base=2.0,
                         sim_base_values=[0.5, 0.5] if i % 10 == 0 else [2.0, 2.0]) for i in range(FOLD_ROWS + 10)]
    html = render_report([res], tmp_path)
    assert html.count("<details>") == 1
    head, folded = html.split("<details>")
    # the 6 rows of 60 whose simulated ratio (2.0) disagrees with the paper's (0.5) come first
    assert head.count('class="disagree"') == 6 and folded.count('class="disagree"') == 6


def test_help_keeps_square_brackets():
    """Option help with defaults in brackets ('[workload's own, else 10]', 'NAME[knob=v]')
    must reach the user: rich markup would swallow them as style tags."""
    p = subprocess.run([sys.executable, "-m", "hetsched.cli", "compare", "--help"], capture_output=True, text=True)
    assert p.returncode == 0 and "NAME[knob=v,...]" in p.stdout and "[all registered]" in p.stdout
