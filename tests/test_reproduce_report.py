"""`hetsched reproduce`'s HTML report: it leads with the answer (the verdict counts and one
figure per study), then each study's finding, calibrations, sensitivity and its rows with the
disagreements first; it holds every figure inside itself; and it renders in headless
Chromium with its colours where they belong.

The study below is built by hand, with every number worked out from its seeds:

=====  ==========================  ================  ==================================  =============  =========
index  row                         paper change      simulated change, 95 % interval     verdict        magnitude
=====  ==========================  ================  ==================================  =============  =========
0      Table 2 / EAS (baseline)    —                 —                                   —              —
1      Table 2 / Learning EAS      850/1000: -15 %   -19.0 % [-21.5, -16.5]              agrees         agrees
2      Table 2 / Learning EAS FPS  59/58: +1.7 %     -18.0 % [-23.0, -13.0]              disagrees      differs
3      Table 3 / Learning EAS      90/100: -10 %     0.0 % [-12.4, +12.4]                inconclusive   differs
4      Table 3 / EAS+              98/100: -2 %      (within the paper's band)           not decidable  —
5      Table 3 / pinned            50/100: -50 %     -49.0 % [-51.5, -46.5]              agrees, by     agrees
                                                                                         construction
6      Table 9 / Learning EAS      400/100: +300 %   +300.0 % [+275.2, +324.8]           agrees         agrees
7      Table 4 / Exynos 7420       —                 — (no simulated value)              —              —
=====  ==========================  ================  ==================================  =============  =========

The magnitudes (no row shows the paper's noise: the factor-of-2 rule): row 1, 15 / 19 = 0.79;
row 2, opposite signs; row 3, a simulated change of exactly 0 (-5, +5 and 0 over 100), which
has no sign; row 5, 50 / 49 = 1.02; row 6, 300 / 300 = 1.

Each simulated change is paired by seed over a constant baseline of 100 (or 50): the
per-seed differences are d, d +- 1 (or d, d +- 5, or d, d +- 10), so the interval's half
width is t(0.975, 2) * s / sqrt(3) / base = 4.302653 * s / sqrt(3) / base: 2.48 % for s = 1
over 100, 4.97 % for s = 1 over 50, 12.42 % for s = 5 over 100, 24.84 % for s = 10 over 100.
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from hetsched.reproduce.core import StudyResult, row_from, write_study
from hetsched.reproduce.report import (FOLD_ROWS, VERDICT_COLOURS, axis_threshold, point_id, render_report,
                                       write_report)


def _result(tmp: Path, plots: list[tuple[str, str]] | None = None) -> StudyResult:
    base = [100.0, 100.0, 100.0]
    rows = [row_from("Table 2", "EAS", "current", "mA", 1000.0, base),
            row_from("Table 2", "Learning EAS", "current", "mA", 850.0, [80.0, 81.0, 82.0], paper_base=1000.0,
                     sim_base_values=base),
            row_from("Table 2", "Learning EAS", "FPS", "fps", 59.0, [40.0, 41.0, 42.0], paper_base=58.0,
                     sim_base_values=[50.0, 50.0, 50.0], note="the agents hold TARGET_LOAD at its bound"),
            row_from("Table 3", "Learning EAS", "energy", "J", 90.0, [95.0, 105.0, 100.0], paper_base=100.0,
                     sim_base_values=base),
            row_from("Table 3", "EAS+", "energy", "J", 98.0, [90.0, 91.0, 92.0], paper_base=100.0,
                     sim_base_values=base, undecidable="within the paper's ±5 % band (Fig. 3)"),
            row_from("Table 3", "pinned", "energy", "J", 50.0, [50.0, 51.0, 52.0], paper_base=100.0,
                     sim_base_values=base, construction="pinning fixes the placement"),
            row_from("Table 9", "Learning EAS", "jank", "%", 400.0, [390.0, 400.0, 410.0], paper_base=100.0,
                     sim_base_values=base),
            row_from("Table 4", "Exynos 7420", "current", "mA", 700.0, None, note="no such platform built in")]
    return StudyResult(
        "learning-eas", "Learning EAS (demo)", "paper 000", "sm8150: three clusters", rows,
        plots=plots or [],
        notes=["FPS **disagrees**: the agents drive TARGET_LOAD to its bound.", "A <script>x</script> tag."],
        finding="Learning EAS saves current as the paper says, but **its frame rate falls** where the paper's rises.",
        calibrations=[("frame rate", "60 fps", "“every game runs at 60 fps” (§5.1) <sic>")],
        sensitivity=[{"parameter": "`TARGET_LOAD`", "value": 70, "chosen": False,
                      "counts": {"agrees": 1, "disagrees": 2}},
                     {"parameter": "`TARGET_LOAD`", "value": 80, "chosen": True,
                      "counts": {"agrees": 2, "disagrees": 1, "inconclusive": 1, "not decidable": 1}}],
        level="quick", seeds=3, runs=24, wall_s=12.0)


class _Tables(HTMLParser):
    """Every <table> of a page: its class and its rows' cell texts (and each row's class)."""

    def __init__(self, text: str):
        super().__init__()
        self.tables: list[dict] = []
        self._open: list[dict] = []
        self._cell: list[str] | None = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self._open.append({"class": a.get("class", ""), "rows": [], "row_class": []})
        elif tag == "tr" and self._open:
            self._open[-1]["rows"].append([])
            self._open[-1]["row_class"].append(a.get("class", ""))
        elif tag in ("td", "th") and self._open:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None and self._open:
            self._open[-1]["rows"][-1].append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "table" and self._open:
            self.tables.append(self._open.pop())

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def _section(page: str, study: str) -> str:
    start = page.index(f'<section id="{study}">')
    return page[start:page.index("</section>", start)]


def _tables(text: str, cls: str) -> list[dict]:
    return [t for t in _Tables(text).tables if t["class"] == cls]


def test_summary_table_has_the_four_counts_and_construction_apart(tmp_path):
    page = render_report([_result(tmp_path)], tmp_path)
    (summary,) = _tables(page, "summary")
    head, row = summary["rows"][0], summary["rows"][1]
    cell = dict(zip(head, row))
    # rows 1 and 6 agree, 2 disagrees, 3 is inconclusive, 4 not decidable; 5 agrees by construction
    assert (cell["agrees"], cell["disagrees"], cell["inconclusive"], cell["not decidable"]) == ("2", "1", "1", "1")
    assert (cell["agrees in magnitude"], cell["differs in magnitude"]) == ("2", "2")
    assert cell["by construction (apart)"] == "1 (agrees 1; agrees in magnitude 1)"
    assert cell["published numbers"] == "8"
    assert (cell["level"], cell["seeds"], cell["runs"], cell["wall"]) == ("quick", "3", "24", "12 s")
    # the headline is the magnitude agreement (rows 1 and 6 of rows 1, 2, 3, 6), then the direction's
    # (rows 1 and 6 of rows 1-4 and 6); row 5 (by construction) in neither
    assert ('<p class="headline"><b>2 of 4</b> published changes weighed in size <b class="m-agrees">agree in '
            "magnitude</b> with the simulation (learning-eas 2 of 4); 2 of 5 published changes with a verdict agree "
            "in direction.") in page
    assert page.index('<p class="headline">') < page.index('<p class="lead">')
    # the verdict sentence opens the page, before the summary table
    assert page.index("not decidable</b> when the paper's own change") < page.index('<table class="summary"')
    assert page.index("agrees in magnitude</b> when the paper's change") < page.index('<table class="summary"')
    assert "docs/reproduce.md" in page


def test_rows_are_listed_disagreements_first_and_all_are_folded(tmp_path):
    sec = _section(render_report([_result(tmp_path)], tmp_path), "learning-eas")
    shown, everything = _tables(sec, "rows")
    # the table before the fold: judged rows only, disagreements first, agreement by construction last
    body = shown["rows"][1:]
    verdicts = [r[9] for r in body]
    assert verdicts == ["disagrees", "inconclusive", "not decidable", "agrees", "agrees", "agrees by construction"]
    assert [r[1] for r in body] == ["Learning EAS", "Learning EAS", "EAS+", "Learning EAS", "Learning EAS", "pinned"]
    assert shown["row_class"][1:4] == ["disagrees", "inconclusive", "undecidable"]
    assert shown["row_class"][4] == "agrees" and "construction" in shown["row_class"][6]
    assert sec.index("-18.0 % [-23.0, -13.0]") < sec.index("-19.0 % [-21.5, -16.5]")
    # the worked changes, paper's and simulated
    assert body[0][7:9] == ["+1.7 %", "-18.0 % [-23.0, -13.0]"]
    assert body[1][8] == "+0.0 % [-12.4, +12.4]"
    assert body[3][7:9] == ["-15.0 %", "-19.0 % [-21.5, -16.5]"]
    assert body[4][8] == "+300.0 % [+275.2, +324.8]"
    assert body[5][8] == "-49.0 % [-51.5, -46.5]"
    assert [r[10] for r in body] == ["differs", "differs", "—", "agrees", "agrees", "agrees"]
    assert body[0][11] == "the agents hold TARGET_LOAD at its bound"
    assert body[2][11] == "within the paper's ±5 % band (Fig. 3)"
    # folded: all 8 in the paper's order, the baseline and the number without a simulated value included
    fold = sec.index('<details class="all-rows">')
    assert sec.index('<table class="rows">') < fold < sec.index('<table class="rows">', fold)
    assert "All 8 published numbers" in sec and "2 without a verdict" in sec
    assert [r[1] for r in everything["rows"][1:]] == ["EAS", "Learning EAS", "Learning EAS", "Learning EAS", "EAS+",
                                                      "pinned", "Learning EAS", "Exynos 7420"]
    assert everything["row_class"][1] == everything["row_class"][8] == "noverdict"
    assert everything["rows"][8][5] == "—" and everything["rows"][8][11] == "no such platform built in"
    assert everything["rows"][1][10] == everything["rows"][8][10] == "—"


def test_long_tables_are_cut_after_the_disagreements(tmp_path):
    res = _result(tmp_path)
    # 60 rows, every 10th disagreeing (paper -50 %, simulated +100 % [+97.5, +102.5]), the others agreeing
    res.rows = [row_from("T", f"r{i}", "m", "u", 1.0, [2.0, 1.99, 2.01] if i % 10 == 0 else [0.5, 0.49, 0.51],
                         paper_base=2.0, sim_base_values=[1.0, 1.0, 1.0]) for i in range(FOLD_ROWS + 10)]
    shown, everything = _tables(_section(render_report([res], tmp_path), "learning-eas"), "rows")
    assert len(shown["rows"]) - 1 == FOLD_ROWS and len(everything["rows"]) - 1 == FOLD_ROWS + 10
    assert shown["row_class"][1:7] == ["disagrees"] * 6 and shown["row_class"][7] == "agrees"
    assert [r[1] for r in shown["rows"][1:7]] == ["r0", "r10", "r20", "r30", "r40", "r50"]


def test_a_tiny_change_is_printed_with_the_digits_its_verdict_needs(tmp_path):
    res = _result(tmp_path)
    # per-seed differences 0.003, 0.004, 0.005 over 100: +0.004 %, half width
    # 4.302653 * 0.001 / sqrt(3) = 0.00248 %: [+0.0015, +0.0065], which excludes no change
    # on the other side of the paper's -10 %; at one decimal it would read +0.0 [+0.0, +0.0]
    res.rows = [row_from("T", "tiny", "m", "u", 90.0, [100.003, 100.004, 100.005], paper_base=100.0,
                         sim_base_values=[100.0, 100.0, 100.0])]
    shown, _ = _tables(_section(render_report([res], tmp_path), "learning-eas"), "rows")
    assert shown["rows"][1][7:10] == ["-10.0 %", "+0.004 % [+0.002, +0.006]", "disagrees"]


def test_finding_comes_first_then_calibrations_and_sensitivity(tmp_path):
    sec = _section(render_report([_result(tmp_path)], tmp_path), "learning-eas")
    finding = sec.index("Learning EAS saves current as the paper says")
    assert "<strong>its frame rate falls</strong>" in sec  # Markdown rendered
    assert finding < sec.index('<table class="calib"') < sec.index('<table class="sens"') \
        < sec.index('<table class="rows"')
    # folded, so that the rows with the disagreements come on the first screen; each fold says what it holds
    assert "<summary>Calibrated to the paper's stated conditions: 1 value, each with the paper's sentence" in sec
    assert "<summary>Sensitivity to values the paper does not state: the verdicts at 2 values of 1 parameter" in sec
    (calib,) = _tables(sec, "calib")
    assert calib["rows"][1] == ["frame rate", "60 fps", "“every game runs at 60 fps” (§5.1) <sic>"]
    assert "(§5.1) &lt;sic&gt;" in sec
    (sens,) = _tables(sec, "sens")
    assert sens["rows"][0] == ["parameter", "value", "agrees", "disagrees", "inconclusive", "not decidable"]
    assert sens["rows"][1] == ["TARGET_LOAD", "70", "1", "2", "0", "0"]
    assert sens["rows"][2] == ["TARGET_LOAD", "80 (chosen)", "2", "1", "1", "1"]
    assert sens["row_class"][1:] == ["", "chosen"]
    assert "<td><code>TARGET_LOAD</code></td>" in sec  # the Markdown code span of the study's text
    # the notes, folded after the table; the raw HTML of a note shown, not run
    assert sec.index("<summary>Notes and explanations</summary>") > sec.rindex('<table class="rows"')
    assert "<script>" not in sec and "&lt;script&gt;x&lt;/script&gt;" in sec


def test_page_is_self_contained_and_deterministic(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([0, 1], [0, 1])
    fig.savefig(tmp_path / "fig.svg")
    fig.savefig(tmp_path / "fig.png", dpi=40)
    plt.close(fig)
    res = _result(tmp_path, plots=[("fig.svg", "a line"), ("fig.png", "the same line")])
    page = render_report([res], tmp_path)
    assert page == render_report([res], tmp_path)
    assert "http:" not in page and "https:" not in page
    assert re.findall(r'\s(?:src|href)="(?!data:|#)', page) == []
    assert "<link" not in page and "@import" not in page
    assert re.findall(r"url\((?!#)", page) == []
    assert 'src="fig.svg"' not in page and 'src="fig.png"' not in page


def test_summary_figure_is_inline_svg_with_one_marker_per_judged_row(tmp_path):
    page = render_report([_result(tmp_path)], tmp_path)
    fig = page[page.index('<figure class="verdicts">'):page.index("</figure>")]
    assert "<svg " in fig and "</svg>" in fig and "<?xml" not in fig and "<!DOCTYPE svg" not in fig
    assert fig.index("<svg ") < page.index('<section id="learning-eas">')
    points = re.findall(r'<g id="learning-eas-(row-\d+-[a-z-]+)">', fig)
    # the six judged rows (1-6); the baseline (0) and the number without a simulated value (7) are not drawn
    assert sorted(points) == sorted(["row-1-agrees", "row-2-disagrees", "row-3-inconclusive",
                                     "row-4-not-decidable", "row-5-agrees", "row-6-agrees"])
    assert point_id(4, "not decidable") == "row-4-not-decidable"
    # one interval bar per drawn row (all six have an interval)
    assert len(re.findall(r'<g id="learning-eas-bar-\d+">', fig)) == 6

    def group(gid: str) -> str:
        start = fig.index(f'<g id="learning-eas-{gid}">')
        return fig[start:fig.index("</g>", start)]

    assert VERDICT_COLOURS["disagrees"] in group("row-2-disagrees")
    assert "fill: #ffffff" in group("row-5-agrees") and VERDICT_COLOURS["agrees"] in group("row-5-agrees")
    assert ("<title>Table 2 / Learning EAS / FPS: paper +1.7 %, simulated -18.0 % [-23.0, -13.0]: disagrees, "
            "differs in magnitude</title>") in group("row-2-disagrees")
    # ids are this figure's own (matplotlib numbers figure_1, axes_1, ... in every figure)
    ids = re.findall(r'\sid="([^"]+)"', fig)
    assert ids and all(i.startswith("learning-eas-") for i in ids) and len(ids) == len(set(ids))
    # the legend's counts, and the axes: the +300 % row pushes them to a symmetric log scale
    for label in ("agrees: 2", "disagrees: 1", "inconclusive: 1", "not decidable: 1", "hollow: by construction (1)"):
        assert f">{label}</text>" in fig
    assert "6 published changes with a verdict" in fig
    assert "Hollow: the 1 counted apart, where agreement follows from the model's construction (agrees 1)." in fig
    assert "both axes linear within ±50 % (dotted), log beyond" in fig


def test_directions_only_keep_their_own_axis(tmp_path):
    """A paper that states directions only (changes of +-0.1 %) beside simulated changes of
    about 20 %: on one shared scale its points would sit on x = 0; the x axis keeps its own."""
    res = _result(tmp_path)
    base = [100.0, 100.0, 100.0]
    res.rows = [row_from("Fig. 1", "down", "m", "u", 99.9, [80.0, 81.0, 82.0], paper_base=100.0, sim_base_values=base),
                row_from("Fig. 1", "up", "m", "u", 100.1, [119.0, 120.0, 121.0], paper_base=100.0,
                         sim_base_values=base)]
    page = render_report([res], tmp_path)
    fig = page[page.index('<figure class="verdicts">'):page.index("</figure>")]
    xaxis = fig[fig.index('id="learning-eas-matplotlib.axis_1"'):fig.index('id="learning-eas-matplotlib.axis_2"')]
    yaxis = fig[fig.index('id="learning-eas-matplotlib.axis_2"'):]
    def ticks(group: str) -> list[float]:
        return [float(t) for t in re.findall(r">([-+]?[0-9.]+)</text>", group)]

    # x: the paper's -0.1 and +0.1 with 8 % of their span beyond, +-0.116; y: -19 % to +20 %
    # and their intervals, -21.5 to +22.5 (the same half width 2.48 as row 1 above)
    assert 0.05 <= max(map(abs, ticks(xaxis))) <= 0.116
    assert max(map(abs, ticks(yaxis))) >= 10
    assert "linear within" not in fig  # neither needs a logarithmic part


def test_axis_threshold_worked_examples():
    # the learning-eas rows above: |changes| 0, 1.72, 2, 9, 10, 15, 18, 19, 49, 50, 300, 300; the
    # 80th percentile sits 0.8 of the way from 49 to 50 (49.8), rounded up to 50; 324.8 > 3 x 50
    centres = [-15, 59 / 58 * 100 - 100, -10, -2, -50, 300, -19, -18, 0, -9, -49, 300]
    assert axis_threshold(centres, [324.84]) == 50
    # 1..9 and 300: 80th percentile 8.2, rounded to 10; 300 is beyond 30
    assert axis_threshold([1, 2, 3, 4, 5, 6, 7, 8, 9, 300], []) == 10
    # 1, -2, 3: 80th percentile 2.6, rounded to 5; nothing beyond 15: linear
    assert axis_threshold([1, -2, 3], [14.0]) is None
    assert axis_threshold([1, -2, 3], [16.0]) == 5
    assert axis_threshold([0.0, 0.0], [1.0]) is None


def test_plots_are_embedded_vector_svg_and_png(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([0, 1, 2], [0, 1, 4])
    fig.savefig(tmp_path / "curve.svg")
    fig.savefig(tmp_path / "curve.png", dpi=40)
    plt.close(fig)
    res = _result(tmp_path, plots=[("curve.svg", "Fig. 1 as vector"), ("curve.png", "Fig. 1 as pixels"),
                                   ("gone.png", "Fig. 2")])
    sec = _section(render_report([res], tmp_path), "learning-eas")
    svg = re.search(r'<img alt="Fig. 1 as vector" src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)">', sec)
    assert svg and base64.b64decode(svg.group(1)) == (tmp_path / "curve.svg").read_bytes()
    assert b"<path" in base64.b64decode(svg.group(1))  # vector paths, not an embedded bitmap
    png = re.search(r'<img alt="Fig. 1 as pixels" src="data:image/png;base64,([A-Za-z0-9+/=]+)">', sec)
    assert png and base64.b64decode(png.group(1)) == (tmp_path / "curve.png").read_bytes()
    assert "plot gone.png missing" in sec
    # the plots come after the rows' tables, before the notes
    assert sec.rindex('<table class="rows"') < sec.index("data:image/svg+xml") < sec.index("Notes and explanations")


def test_write_report_writes_atomically_or_nothing(tmp_path):
    assert write_report(tmp_path) is None
    assert not (tmp_path / "report.html").exists()
    write_study(_result(tmp_path), tmp_path)
    p = write_report(tmp_path)
    assert p == tmp_path / "report.html"
    text = p.read_text()
    assert text.startswith("<!DOCTYPE html>") and '<section id="learning-eas">' in text
    assert not list(tmp_path.glob("*.tmp"))
    # what the report reads back from STUDY.json is what was rendered from the result itself
    assert text == render_report([_result(tmp_path)], tmp_path)


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def test_report_renders_in_headless_chromium(tmp_path):
    """The report in a real browser: the shading of the disagreeing and agreeing rows and
    the summary figure's magenta disagreeing marker are on the screenshot, the marker above
    the rows (the page leads with the answer). CI installs Debian's chromium; elsewhere this
    skips without it."""
    exe = _chromium()
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("CI must have chromium (.ci/run installs it)")
        pytest.skip("no chromium")
    write_study(_result(tmp_path), tmp_path)
    html_path = write_report(tmp_path)
    shot = tmp_path / "shot.png"
    subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--disable-background-networking", "--disable-component-update", "--no-first-run",
                    "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}",
                    "--window-size=1300,2600", html_path.as_uri()],
                   capture_output=True, timeout=120, check=False)
    assert shot.exists(), "chromium wrote no screenshot"
    import numpy as np
    from matplotlib.image import imread

    img = imread(str(shot))[:, :, :3]

    def where(hex_rgb: str, tol: float, run: int):
        """The screenshot's pixel rows with at least ``run`` pixels of the colour: a shaded
        table row fills hundreds; the edges of text or markers in a near colour, a few."""
        rgb = [int(hex_rgb[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        return np.nonzero((abs(img - rgb).max(axis=2) < tol).sum(axis=1) >= run)[0]

    disagree_rows, agree_rows = where("#f6d5e7", 0.02, 300), where("#dcefe0", 0.02, 300)
    assert disagree_rows.size > 10, "the disagreeing row's shading is not on the screenshot"
    assert agree_rows.size > 10, "the agreeing rows' shading is not on the screenshot"
    assert disagree_rows.min() < agree_rows.min(), "the disagreeing row is not above the agreeing ones"
    marker = where(VERDICT_COLOURS["disagrees"], 0.03, 4)
    assert marker.size >= 4, "the summary figure's disagreeing marker is not on the screenshot"
    assert marker.min() < disagree_rows.min(), "the summary figure is not above the rows"
