"""One self-contained HTML page (``OUT/report.html``) that gathers every study written in an
output folder and leads with the answer: how many published changes the simulation matches in
magnitude (and in direction), what a verdict means, then per study its four verdict counts,
its two magnitude counts and one figure of the simulated change against the published change; then
each study's finding, its calibrations to the paper's stated conditions, its sensitivity to
the values the paper does not state, and its published numbers with the disagreeing rows
first; then its own plots and notes. Every figure is inside the file (the summary figures as
inline SVG, the study's plots as data: URIs), so the page travels alone.
"""

from __future__ import annotations

import base64
import html
import io
import math
import re
from pathlib import Path
from typing import Any, Sequence

from markdown_it import MarkdownIt

from hetsched.reproduce.core import (AGREES, AGREES_IN_MAGNITUDE, DISAGREES, INCONCLUSIVE, MAGNITUDE_FACTOR,
                                     MAGNITUDES, NOT_DECIDABLE, VERDICTS, Row, StudyResult, change_pct, change_text,
                                     paper_change_text, ratio_pct)

__all__ = ["render_report", "write_report", "headline", "FOLD_ROWS", "VERDICT_COLOURS", "axis_threshold",
           "point_id"]

# The summary figures' colours, one per verdict, from ColorBrewer's PiYG and PuOr diverging
# schemes: green and magenta stay apart under the common colour-vision deficiencies (unlike
# green and red), grey says "no answer", and orange is far from all three. Each verdict also
# has its own marker shape, so that the figure reads in grey print too.
VERDICT_COLOURS = {AGREES: "#1b7837", DISAGREES: "#c51b7d", INCONCLUSIVE: "#7f7f7f", NOT_DECIDABLE: "#e08214"}
_MARKERS = {AGREES: "o", DISAGREES: "D", INCONCLUSIVE: "s", NOT_DECIDABLE: "^"}
# the order of the rows table and of drawing (the last drawn is on top): disagreements first
_ORDER = (DISAGREES, INCONCLUSIVE, NOT_DECIDABLE, AGREES)
# the rows' CSS class per verdict
_CLASS = {AGREES: "agrees", DISAGREES: "disagrees", INCONCLUSIVE: "inconclusive", NOT_DECIDABLE: "undecidable"}

# a study's table of judged rows longer than this is cut after its first FOLD_ROWS (the
# disagreements come first, so the cut falls on rows that agree); the folded table below it
# holds every published number
FOLD_ROWS = 50

# The row shading and the verdicts' text colours are kept apart from the figures' marker
# colours, so that a screenshot tells the tables and the figures apart.
_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:1.5em auto;max-width:1240px;
 color:#1b1b1b;line-height:1.45;padding:0 1em}
h1{font-size:1.6em;margin:.2em 0 .3em} h2{border-bottom:2px solid #ddd;padding-bottom:.2em;margin-top:2.2em}
h3{font-size:1.05em;margin:1.3em 0 .3em}
table{border-collapse:collapse;font-size:.84em;margin:.5em 0 .8em;width:100%}
th,td{border:1px solid #ccc;padding:.22em .45em;text-align:left;vertical-align:top}
th{background:#f1f3f5} td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.disagrees td{background:#f6d5e7} tr.agrees td{background:#dcefe0}
tr.inconclusive td{background:#ececec} tr.undecidable td{background:#fde6c8}
tr.noverdict td{color:#555} table.rows,table.sens{width:auto;min-width:60%}
table.rows td:last-child{min-width:14em} .scroll{overflow-x:auto;max-width:100%}
table.summary td:nth-child(2){font-size:.8em;max-width:26em}
td.verdict{white-space:nowrap;font-weight:600} td.magnitude{white-space:nowrap}
.m-agrees{color:#0f5a24} .m-differs{color:#8e0152;font-weight:600}
.headline{font-size:1.12em;margin:.2em 0 .6em;max-width:64em}
.v-agrees{color:#0f5a24} .v-disagrees{color:#8e0152} .v-inconclusive{color:#505050} .v-undecidable{color:#8a4500}
.bc{font-weight:400;font-style:italic;font-size:.9em}
table.summary td,table.summary th{font-size:1.02em} table.summary td.zero{color:#aaa;font-weight:400}
table.summary td.count{font-weight:700;text-align:right}
.lead{font-size:.98em;max-width:64em}
.meta{color:#555;font-size:.9em;margin:.3em 0}
.finding{background:#f4f7fb;border-left:4px solid #3a6ea5;padding:.1em 1em;margin:.6em 0;font-size:1.02em}
.figs{display:flex;flex-wrap:wrap;gap:.6em 1.2em;align-items:flex-start}
figure{margin:.6em 0;max-width:100%} figure.verdicts{width:385px}
figure.verdicts svg{width:100%;height:auto} figure.plot{display:inline-block}
figure.plot img{max-width:100%;border:1px solid #ddd} figcaption{font-size:.84em;color:#444}
table.calib{table-layout:fixed} table.calib th:nth-child(1){width:22%} table.calib th:nth-child(2){width:28%}
table.calib td.quote{font-style:italic;color:#333}
tr.chosen td{font-weight:700}
code{background:#f4f4f4;padding:0 .2em} .missing{color:#8e0152}
details{margin:.6em 0} summary{cursor:pointer;font-weight:600;color:#234}
.notes{background:#fafafa;border-left:4px solid #c9a227;padding:.2em 1em;margin:.5em 0}
"""

_LEAD = ("Each published change gets a verdict from the simulated change over its baseline (95 % interval "
         "over seeds): it <b class=\"v-agrees\">agrees</b> when the interval excludes no change on the paper's "
         "side, <b class=\"v-disagrees\">disagrees</b> when it excludes no change on the other side, is "
         "<b class=\"v-inconclusive\">inconclusive</b> when it includes no change, and is "
         "<b class=\"v-undecidable\">not decidable</b> when the paper's own change lies within the paper's own "
         "noise; a number that agrees by construction of the model is counted apart (the rules: "
         "docs/reproduce.md, \u201cVerdicts\u201d). Beside the direction, each change that agrees, disagrees or is "
         "inconclusive is weighed in size: it <b class=\"m-agrees\">agrees in magnitude</b> when the paper's change "
         "lies inside the simulated 95 % interval widened by the paper's own run-to-run noise, or, where the paper "
         f"shows none, within a factor of {MAGNITUDE_FACTOR:g} of the simulated change (same sign); otherwise it "
         "<b class=\"m-differs\">differs in magnitude</b> (docs/reproduce.md, \u201cMagnitude\u201d).")


def _e(x: Any) -> str:
    return html.escape(str(x))


def _num(x: Any) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    if isinstance(x, float):
        return f"{x:.4g}"
    return _e(x)


def _wall(s: float) -> str:
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.1f} min"


def _slug(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", s).strip("-") or "study"


def _verdict_cell(r: Row) -> str:
    if r.verdict is None:
        return '<td class="verdict">—</td>'
    bc = ' <span class="bc">by construction</span>' if r.construction else ""
    return f'<td class="verdict v-{_CLASS[r.verdict]}">{_e(r.verdict)}{bc}</td>'


def _magnitude_cell(r: Row) -> str:
    m = getattr(r, "magnitude", None)
    if m is None:
        return '<td class="magnitude">—</td>'
    cls, word = ("m-agrees", "agrees") if m == AGREES_IN_MAGNITUDE else ("m-differs", "differs")
    return f'<td class="magnitude {cls}">{word}</td>'


def _rows_table(rows: Sequence[Row]) -> str:
    out = ['<div class="scroll"><table class="rows"><thead><tr><th>table</th><th>row</th><th>metric</th><th>unit</th>'
           "<th>paper</th><th>simulated [95 % CI]</th><th>n</th><th>paper change (± its noise)</th>"
           "<th>simulated change [95 % interval]</th><th>verdict</th><th>magnitude</th><th>note</th></tr></thead>"
           "<tbody>"]
    for r in rows:
        cls = _CLASS.get(r.verdict, "noverdict") + (" construction" if r.construction else "")
        sim = _num(r.sim)
        if r.ci_lo is not None and r.ci_hi is not None:
            sim += f" [{_num(r.ci_lo)}, {_num(r.ci_hi)}]"
        why = " · ".join(x for x in (r.undecidable, r.construction, r.note) if x)
        out.append(f'<tr class="{cls}"><td>{_e(r.table)}</td><td>{_e(r.row)}</td><td>{_e(r.metric)}</td>'
                   f'<td>{_e(r.unit)}</td><td class="num">{_num(r.paper)}</td><td class="num">{sim}</td>'
                   f'<td class="num">{r.n or "—"}</td>'
                   f'<td class="num">{_e(paper_change_text(r))}</td>'
                   f'<td class="num">{_e(change_text(r))}</td>{_verdict_cell(r)}{_magnitude_cell(r)}'
                   f'<td>{_e(why)}</td></tr>')
    out.append("</tbody></table></div>")
    return "".join(out)


def _judged_first(res: StudyResult) -> list[Row]:
    """The rows with a verdict, disagreements first, then inconclusive, not decidable and
    agreeing ones; within a verdict in the paper's order, those counted apart (agreement
    by construction) last."""
    judged = [(i, r) for i, r in enumerate(res.rows) if r.verdict is not None]
    judged.sort(key=lambda t: (_ORDER.index(t[1].verdict), bool(t[1].construction), t[0]))
    return [r for _, r in judged]


def _rows_block(res: StudyResult) -> str:
    judged = _judged_first(res)
    parts = []
    if judged:
        shown = judged[:FOLD_ROWS]
        rest = ""
        if len(judged) > len(shown):
            rest = (f" The first {len(shown)} are listed; the other {len(judged) - len(shown)} are in the "
                    "table of all published numbers below.")
        parts.append(f"<p>The {len(judged)} published changes with a verdict, disagreements first.{rest}</p>"
                     + _rows_table(shown))
    else:
        parts.append("<p>No published change has a verdict.</p>")
    without = len(res.rows) - len(judged)
    parts.append(f'<details class="all-rows"><summary>All {len(res.rows)} published numbers, in the paper\'s order '
                 f"({without} without a verdict: baselines and numbers without a simulated change)</summary>"
                 f"{_rows_table(res.rows)}</details>")
    return "\n".join(parts)


def _calibrations(res: StudyResult, md: MarkdownIt) -> str:
    if not res.calibrations:
        return ""
    rows = "".join(f"<tr><td>{_inline(md, c[0])}</td><td>{_inline(md, c[1])}</td>"
                   f'<td class="quote">{_inline(md, c[2])}</td></tr>' for c in res.calibrations)
    n = len(res.calibrations)
    return (f"<details class=\"calib\"><summary>Calibrated to the paper's stated conditions: {n} value"
            f"{'s' if n != 1 else ''}, each with the paper's sentence</summary>"
            '<table class="calib"><thead><tr><th>what</th><th>value</th><th>the paper</th></tr></thead>'
            f"<tbody>{rows}</tbody></table></details>")


def _sensitivity(res: StudyResult, md: MarkdownIt) -> str:
    if not res.sensitivity:
        return ""
    head = "".join(f'<th class="v-{_CLASS[v]}">{_e(v)}</th>' for v in VERDICTS)
    rows = []
    for s in res.sensitivity:
        counts = s.get("counts") or {}
        chosen = bool(s.get("chosen"))
        cells = "".join(f'<td class="num">{_e(counts.get(v, 0))}</td>' for v in VERDICTS)
        tr = '<tr class="chosen">' if chosen else "<tr>"
        rows.append(f'{tr}'
                    f'<td>{_inline(md, s.get("parameter", ""))}</td>'
                    f'<td>{_inline(md, s.get("value", ""))}{" (chosen)" if chosen else ""}</td>{cells}</tr>')
    params = len({str(s.get("parameter", "")) for s in res.sensitivity})
    return (f'<details class="sens"><summary>Sensitivity to values the paper does not state: the verdicts at '
            f"{len(res.sensitivity)} values of {params} parameter{'s' if params != 1 else ''}</summary>"
            f'<table class="sens"><thead><tr><th>parameter</th><th>value</th>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table></details>")


# ----------------------------------------------------------------------------- the summary figure

def _nice_ceil(x: float) -> float:
    """The smallest of 1, 2, 5 x 10^k that is >= x (x > 0)."""
    k = math.floor(math.log10(x))
    for m in (1, 2, 5, 10):
        if m * 10 ** k >= x * (1 - 1e-12):
            return float(m * 10 ** k)
    return float(10 ** (k + 1))


def _percentile(xs: Sequence[float], q: float) -> float:
    """The q-th percentile of xs, linear between order statistics (numpy's default)."""
    s = sorted(xs)
    pos = q / 100.0 * (len(s) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def axis_threshold(centres: Sequence[float], extremes: Sequence[float]) -> float | None:
    """The symmetric-log threshold (in %) of a summary figure's axes, or None for linear
    axes. A few large changes (a +300 % row among changes of a few per cent) would squash
    every other point into the middle: the axes are linear within +-L % and logarithmic
    beyond, where L is 80th percentile of the points' absolute changes (the published and
    simulated ones) rounded up to 1, 2 or 5 x 10^k, whenever some point or interval end
    lies beyond 3 L."""
    mags = [abs(v) for v in centres if math.isfinite(v)]
    if not mags:
        return None
    q = _percentile(mags, 80)
    if q <= 0:
        return None
    lin = _nice_ceil(q)
    far = max(abs(v) for v in list(centres) + list(extremes) if math.isfinite(v))
    return lin if far > 3 * lin else None


def _svg_inline(svg: str, prefix: str, titles: dict[str, str], label: str) -> str:
    """A matplotlib SVG made fit to sit inside the HTML: no prolog, no metadata, no
    namespace URIs (the HTML parser supplies them), every id prefixed (matplotlib numbers
    its groups figure_1, axes_1, ... in every figure), its global <style> moved onto the
    root (inherited), and a <title> (a tooltip) in each point's group."""
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"\s*<metadata>.*?</metadata>", "", svg, flags=re.S)
    svg = re.sub(r'\s*<style type="text/css">.*?</style>', "", svg, flags=re.S)
    svg = re.sub(r"\s*<defs>\s*</defs>", "", svg)
    svg = re.sub(r'\sxmlns(:xlink)?="[^"]*"', "", svg)
    ids = set(re.findall(r'\sid="([^"]+)"', svg))

    def sub(m: re.Match) -> str:
        return m.group(1) + prefix + m.group(2) if m.group(2) in ids else m.group(0)

    svg = re.sub(r'(\sid="|#)([A-Za-z_][\w.:-]*)(?=["\)])', sub, svg)
    for gid, title in titles.items():
        svg = svg.replace(f'<g id="{prefix}{gid}">', f'<g id="{prefix}{gid}"><title>{_e(title)}</title>', 1)
    return svg.replace("<svg ", f'<svg class="verdicts" role="img" aria-label="{_e(label)}" '
                               'style="stroke-linejoin:round;stroke-linecap:butt" ', 1)


def _limits(values: Sequence[float], lin: float | None) -> tuple[float, float]:
    """An axis' limits around ``values`` and 0, with a margin: 8 % of the span on a linear
    side, an eighth of a decade on a logarithmic one."""
    vs = [v for v in values if math.isfinite(v)] + [0.0]
    lo, hi = min(vs), max(vs)
    span = hi - lo or 1.0

    def out(v: float, sign: int) -> float:
        if lin is not None and abs(v) > lin:
            return v * 10 ** 0.12
        return v + sign * 0.08 * span if lin is None else v + sign * 0.08 * min(span, 2 * lin)
    return out(lo, -1), out(hi, 1)


def _symlog_ticks(lin: float, lim: tuple[float, float]) -> list[float]:
    """Ticks of a symmetric-log axis: inside the linear band (not on its edges, which are
    dotted lines, where a tick would crowd the first one beyond), and beyond it every decade
    or, where no decade is in range, the largest 1, 2, 5 x 10^k that is."""
    from matplotlib.ticker import MaxNLocator

    inner = [t for t in MaxNLocator(4, symmetric=True).tick_values(-lin, lin) if abs(t) < lin * 0.999]
    steps = [m * 10 ** k for k in range(-3, 12) for m in (1, 2, 5) if m * 10 ** k > lin * 1.0001]
    outer = []
    for sign, edge in ((-1, -lim[0]), (1, lim[1])):
        fit = [t for t in steps if t <= edge]
        dec = [t for t in fit if math.log10(t).is_integer()]
        outer += [sign * t for t in (dec or fit[-1:])]
    return sorted(set(inner + outer))


def point_id(index: int, verdict: str) -> str:
    """The SVG group id of row ``index``'s point in its study's summary figure."""
    return f"row-{index}-{verdict.replace(' ', '-')}"


def _verdict_figure(res: StudyResult) -> tuple[str, int]:
    """The study's summary figure as inline SVG (empty if no row can be drawn), and how
    many rows with a verdict it cannot draw (no simulated change)."""
    pts = []
    undrawn = 0
    for i, r in enumerate(res.rows):
        if r.verdict is None:
            continue
        x, y = ratio_pct(r.paper_ratio), ratio_pct(r.sim_ratio)
        if x is None or y is None:
            undrawn += 1
            continue
        lo, hi = ratio_pct(r.change_lo), ratio_pct(r.change_hi)
        pts.append((i, r, x, y, lo, hi))
    if not pts:
        return "", undrawn

    import matplotlib
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator

    xs = [p[2] for p in pts]
    ys = [p[3] for p in pts]
    ext = [v for p in pts for v in (p[4], p[5]) if v is not None]
    # One scale for both axes where the published and simulated changes are of a size, so
    # that y = x is the diagonal; each its own where not (a paper that states directions
    # only, +-0.1 %, against simulated changes of tens of per cent), so that neither
    # collapses onto its zero.
    reach_x = max(abs(v) for v in xs)
    reach_y = max(abs(v) for v in ys + ext)
    if min(reach_x, reach_y) * 4 >= max(reach_x, reach_y):
        lin = axis_threshold(xs + ys, ext)
        lim = _limits(xs + ys + ext, lin)
        xaxis = yaxis = (lin, lim)
    else:
        xaxis = (axis_threshold(xs, []), _limits(xs, axis_threshold(xs, [])))
        yaxis = (axis_threshold(ys, ext), _limits(ys + ext, axis_threshold(ys, ext)))

    # the scale's note goes under the x label: the y label's side has no room
    if xaxis is yaxis:
        scale = [] if xaxis[0] is None else [f"both axes linear within ±{xaxis[0]:g} % (dotted), log beyond"]
    else:
        scale = [f"{n} linear within ±{a[0]:g} % (dotted), log beyond" for n, a in (("x", xaxis), ("y", yaxis))
                 if a[0] is not None]
    xlab = "\n".join(["published change (%)"] + scale)
    ylab = "simulated change (%), 95 % interval"
    rc = {"svg.hashsalt": "hetsched-report", "svg.fonttype": "none", "font.family": "sans-serif",
          "font.sans-serif": ["DejaVu Sans", "Arial"], "font.size": 8.5}
    with matplotlib.rc_context(rc):
        # axes square in inches, so that a shared scale puts y = x corner to corner; legend beneath
        w, side, top, left = 4.1, 3.1, 0.12, 0.85
        h = top + side + 0.44 + 0.13 * len(scale) + 0.5
        fig = Figure(figsize=(w, h))
        ax = fig.add_axes((left / w, (h - top - side) / h, side / w, side / h))
        fmt = FuncFormatter(lambda v, _: "0" if v == 0 else f"{v:+g}")
        for axis, (lin, lim), setscale, setlim, rule in (
                (ax.xaxis, xaxis, ax.set_xscale, ax.set_xlim, ax.axvline),
                (ax.yaxis, yaxis, ax.set_yscale, ax.set_ylim, ax.axhline)):
            if lin is not None:
                setscale("symlog", linthresh=lin, linscale=1.0)
                ticks = _symlog_ticks(lin, lim)
                axis.set_major_locator(FixedLocator(ticks))
                axis.set_minor_locator(FixedLocator([]))
                # where the scale turns logarithmic
                for t in (-lin, lin):
                    rule(t, color="#bbb", lw=0.6, ls=":", zorder=0)
            else:
                axis.set_major_locator(MaxNLocator(6, symmetric=False))
            setlim(lim)
            axis.set_major_formatter(fmt)
        ax.axhline(0, color="#444", lw=0.8, zorder=1)
        ax.axvline(0, color="#444", lw=0.8, zorder=1)
        # y = x, drawn through the x axis' own scale so that it stays exact on any pair of scales
        lo_d, hi_d = max(xaxis[1][0], yaxis[1][0]), min(xaxis[1][1], yaxis[1][1])
        if lo_d < hi_d:
            tr = ax.xaxis.get_transform()
            a, b = tr.transform([lo_d, hi_d])
            diag = tr.inverted().transform([a + (b - a) * k / 200 for k in range(201)])
            ax.plot(diag, diag, ls=(0, (5, 3)), color="#333", lw=0.9, zorder=1)
        ax.set_xlabel(xlab)
        ax.set_ylabel(ylab)

        titles = {}
        for v in _ORDER:
            colour = VERDICT_COLOURS[v]
            z = 3 + _ORDER[::-1].index(v)
            for i, r, x, y, lo, hi in pts:
                if r.verdict != v:
                    continue
                if lo is not None and hi is not None:
                    ax.plot([x, x], [lo, hi], color=colour, lw=1.1, alpha=0.55, zorder=z, gid=f"bar-{i}",
                            solid_capstyle="butt")
                hollow = bool(r.construction)
                ax.plot([x], [y], ls="none", marker=_MARKERS[v], ms=6.5 if v != DISAGREES else 6,
                        mfc="white" if hollow else colour, mec=colour if hollow else "white",
                        mew=1.4 if hollow else 0.5, zorder=z + 0.5, gid=point_id(i, v))
                titles[point_id(i, v)] = (f"{r.table} / {r.row} / {r.metric}: paper {paper_change_text(r)}, "
                                          f"simulated {change_text(r)}: {v}"
                                          + (f", {r.magnitude}" if getattr(r, "magnitude", None) else "")
                                          + (" (by construction)" if hollow else ""))

        c, k = res.counts(), res.counts(construction=True)
        handles = [Line2D([], [], ls=(0, (5, 3)), color="#333", lw=0.9, label="simulated = published")]
        for v in VERDICTS:
            lab = f"{v}: {c[v]}"
            handles.append(Line2D([], [], ls="none", marker=_MARKERS[v], ms=6.5, mfc=VERDICT_COLOURS[v],
                                  mec="white", mew=0.5, label=lab))
        if sum(k.values()):
            handles.append(Line2D([], [], ls="none", marker="o", ms=6.5, mfc="white", mec="#555", mew=1.4,
                                  label=f"hollow: by construction ({sum(k.values())})"))
        fig.legend(handles=handles, loc="upper center",
                   bbox_to_anchor=(0.5, (h - top - side - 0.44 - 0.13 * len(scale)) / h),
                   ncol=2, frameon=False, fontsize=7.5, handletextpad=0.3, columnspacing=1.0,
                   handlelength=1.6)
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None})
    label = f"{res.study}: simulated change against published change, per row with a verdict"
    return _svg_inline(buf.getvalue(), f"{_slug(res.study)}-", titles, label), undrawn


def _verdict_figure_block(res: StudyResult) -> str:
    svg, undrawn = _verdict_figure(res)
    if not svg:
        return f'<figure class="verdicts"><p>No published change of {_e(res.study)} has a verdict.</p></figure>'
    k = res.counts(construction=True)
    drawn = sum(res.counts().values()) + sum(k.values()) - undrawn
    cap = (f'<a href="#{_e(_slug(res.study))}">{_e(res.study)}</a>: {drawn} published changes with a verdict; '
           "bars: the simulated change's 95 % interval; dashed: the simulated change equal to the paper's.")
    if sum(k.values()):
        cap += (f" Hollow: the {sum(k.values())} counted apart, where agreement follows from the model's "
                f"construction ("
                + ", ".join(f"{v} {k[v]}" for v in VERDICTS if k[v]) + ").")
    if undrawn:
        cap += f" {undrawn} with a verdict but no simulated change are not drawn."
    return f'<figure class="verdicts">{svg}<figcaption>{cap}</figcaption></figure>'


# ----------------------------------------------------------------------------- the study's own plots

_MIME = {".png": "image/png", ".svg": "image/svg+xml", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
         ".gif": "image/gif", ".webp": "image/webp"}


def _plot(out_dir: Path, name: str, caption: str) -> str:
    # A study's plot goes in as an <img> with a data: URI, SVG included: it stays vector, and
    # the <img> keeps it apart from the page, whose other SVGs use the same ids (matplotlib
    # numbers figure_1, axes_1, ... in every file) and whose CSS its global
    # `<style>*{...}</style>` would otherwise reach. The summary figures, made here, are
    # inline instead, with their ids prefixed, so that each point can carry a tooltip.
    p = out_dir / name
    mime = _MIME.get(p.suffix.lower())
    if not p.exists():
        return f'<p class="missing"><i>plot {_e(name)} missing from the output folder</i></p>'
    if mime is None:
        return f'<p class="missing"><i>plot {_e(name)}: not an image this page can hold</i></p>'
    data = base64.b64encode(p.read_bytes()).decode("ascii")
    return (f'<figure class="plot"><img alt="{_e(caption)}" src="data:{mime};base64,{data}">'
            f"<figcaption>{_e(caption)}</figcaption></figure>")


# ----------------------------------------------------------------------------- the page

def _markdown() -> MarkdownIt:
    # the findings and notes are text from the studies: raw HTML in them is shown, not
    # interpreted, and an image reference (a file beside the page) cannot slip in
    return MarkdownIt("commonmark", {"html": False}).enable("table").disable("image")


def _inline(md: MarkdownIt, x: Any) -> str:
    """A table cell's text from a study (``code`` spans and *emphasis* in it rendered; raw
    HTML shown as text)."""
    return md.renderInline(str(x))


_MCLASS = {m: ("m-agrees" if m == AGREES_IN_MAGNITUDE else "m-differs") for m in MAGNITUDES}


def headline(results: Sequence[StudyResult]) -> str:
    """The page's opening sentence (HTML): over every study, how many published changes
    agree in magnitude, of those with a magnitude, and how many agree in direction, of those
    with a verdict; rows that agree by construction left out of both."""
    am = sum(r.magnitude_agreement()[0] for r in results)
    nm = sum(r.magnitude_agreement()[1] for r in results)
    ad = sum(r.agreement()[0] for r in results)
    nd = sum(r.agreement()[1] for r in results)
    per = "; ".join(f"{_e(r.study)} {r.magnitude_agreement()[0]} of {r.magnitude_agreement()[1]}" for r in results)
    return (f'<p class="headline"><b>{am} of {nm}</b> published changes weighed in size '
            f'<b class="m-agrees">agree in magnitude</b> with the simulation ({per}); {ad} of {nd} published '
            "changes with a verdict agree in direction. Rows that agree by construction are left out of both.</p>")


def _summary_table(results: Sequence[StudyResult]) -> str:
    head = "".join(f'<th class="v-{_CLASS[v]}">{_e(v)}</th>' for v in VERDICTS)
    head += "".join(f'<th class="{_MCLASS[m]}">{_e(m)}</th>' for m in MAGNITUDES)
    out = ['<table class="summary"><thead><tr><th>study</th><th>paper</th>', head,
           "<th>by construction (apart)</th><th>published numbers</th><th>level</th><th>seeds</th>"
           "<th>runs</th><th>wall</th></tr></thead><tbody>"]
    for r in results:
        c, k = r.counts(), r.counts(construction=True)
        cm, km = r.magnitude_counts(), r.magnitude_counts(construction=True)
        cells = "".join(f'<td class="count {"zero" if not c[v] else "v-" + _CLASS[v]}">{c[v]}</td>'
                        for v in VERDICTS)
        cells += "".join(f'<td class="count {"zero" if not cm[m] else _MCLASS[m]}">{cm[m]}</td>' for m in MAGNITUDES)
        nk = sum(k.values())
        kd = f"{nk}" + (f" ({', '.join(f'{v} {k[v]}' for v in VERDICTS if k[v])}" if nk else "")
        if nk:
            kd += "".join(f"; {m} {km[m]}" for m in MAGNITUDES if km[m]) + ")"
        out.append(f'<tr><td><a href="#{_e(_slug(r.study))}">{_e(r.study)}</a></td><td>{_e(r.paper)}</td>'
                   f'{cells}<td class="num">{_e(kd)}</td><td class="num">{len(r.rows)}</td>'
                   f"<td>{_e(r.level)}</td><td class=\"num\">{r.seeds}</td><td class=\"num\">{r.runs + r.resumed}</td>"
                   f'<td class="num">{_wall(r.wall_s)}</td></tr>')
    out.append("</tbody></table>")
    return "".join(out)


def _study_section(res: StudyResult, out_dir: Path, md: MarkdownIt) -> str:
    c = res.counts()
    counts = ", ".join(f'<span class="v-{_CLASS[v]}">{_e(v)} {c[v]}</span>' for v in VERDICTS)
    cm = res.magnitude_counts()
    counts += "; " + ", ".join(f'<span class="{_MCLASS[m]}">{_e(m)} {cm[m]}</span>' for m in MAGNITUDES)
    nk = sum(res.counts(construction=True).values())
    if nk:
        km = res.magnitude_counts(construction=True)
        counts += f"; by construction {nk}, counted apart"
        if sum(km.values()):
            counts += " (" + ", ".join(f"{m} {km[m]}" for m in MAGNITUDES if km[m]) + ")"
    parts = [f'<section id="{_e(_slug(res.study))}"><h2>{_e(res.title)}</h2>']
    if res.finding:
        parts.append(f'<div class="finding">{md.render(res.finding)}</div>')
    parts.append(f'<p class="meta">Paper: {_inline(md, res.paper)}<br>Platforms: {_inline(md, res.platforms)}<br>'
                 f"Level <code>{_e(res.level)}</code>, {res.seeds} seed(s) per configuration, {res.runs} runs"
                 + (f" (and {res.resumed} taken from runs.jsonl)" if res.resumed else "")
                 + f", {_wall(res.wall_s)} wall. Verdicts: {counts}.</p>")
    parts.append(_calibrations(res, md))
    parts.append(_sensitivity(res, md))
    parts.append("<h3>Published numbers beside the simulation</h3>")
    parts.append(_rows_block(res))
    if res.plots:
        parts.append('<div class="figs">' + "".join(_plot(out_dir, n, cap) for n, cap in res.plots) + "</div>")
    if res.notes:
        parts.append('<details class="notes-fold"><summary>Notes and explanations</summary><div class="notes">')
        parts.extend(md.render(n) for n in res.notes)
        parts.append("</div></details>")
    parts.append("</section>")
    return "\n".join(p for p in parts if p)


def render_report(results: Sequence[StudyResult], out_dir: Path) -> str:
    """The report page of ``results`` (plots read from ``out_dir``)."""
    md = _markdown()
    out_dir = Path(out_dir)
    figs = "".join(_verdict_figure_block(r) for r in results)
    body = "\n".join(_study_section(r, out_dir, md) for r in results)
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
            "<title>hetsched: the studies reproduced</title>"
            f"<style>{_CSS}</style></head><body>"
            "<h1>hetsched: the studies reproduced, verdicts first</h1>"
            + headline(results)
            + f'<p class="lead">{_LEAD}</p>'
            + _summary_table(results)
            + f'<div class="figs">{figs}</div>'
            + body
            + '<p class="meta">Made by <code>hetsched reproduce</code>.</p></body></html>\n')


def write_report(out_dir: Path) -> Path | None:
    """Write ``OUT/report.html`` from every ``STUDY.json`` in ``out_dir``; None if there is none."""
    from hetsched.reproduce import load_results

    results = load_results(out_dir)
    if not results:
        return None
    from hetsched.outputs import OutputSet

    with OutputSet(out_dir) as outs:
        p = outs.write("report.html", render_report(results, Path(out_dir)))
        outs.commit()
    return p
