"""One self-contained HTML page (``OUT/report.html``) that gathers every study written in an
output folder: its table of published numbers beside the simulated ones (rows whose
direction disagrees are marked), its plots (embedded as data: URIs, so the file travels
alone) and its notes, which explain every disagreement."""

from __future__ import annotations

import base64
import html
import math
import os
from pathlib import Path
from typing import Any, Sequence

from markdown_it import MarkdownIt

from hetsched.reproduce.core import Row, StudyResult

__all__ = ["render_report", "write_report"]

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;max-width:1200px;
 color:#1b1b1b;line-height:1.45;padding:0 1em}
h1{font-size:1.7em;margin-bottom:.2em} h2{border-bottom:2px solid #ddd;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;font-size:.86em;margin:.8em 0;width:100%}
th,td{border:1px solid #ccc;padding:.25em .45em;text-align:left;vertical-align:top}
th{background:#f1f3f5} td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.disagree td{background:#fdecea} tr.agree td.dir{background:#e6f4ea} tr.none td.dir{color:#777}
.meta{color:#555;font-size:.92em} figure{margin:1em 0;display:inline-block;max-width:100%}
figure img{max-width:100%;border:1px solid #ddd} figcaption{font-size:.85em;color:#444}
.summary td,.summary th{font-size:.95em} code{background:#f4f4f4;padding:0 .2em}
details{margin:.6em 0} summary{cursor:pointer;font-weight:600;color:#234}
.notes{background:#fafafa;border-left:4px solid #c9a227;padding:.2em 1em;margin:1em 0}
"""


def _num(x: Any) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    if isinstance(x, float):
        return f"{x:.4g}"
    return html.escape(str(x))


def _rows_table(rows: Sequence[Row]) -> str:
    head = ("<table><thead><tr><th>table</th><th>row</th><th>metric</th><th>unit</th><th>paper</th>"
            "<th>simulated</th><th>95 % CI</th><th>n</th><th>paper ratio</th><th>sim ratio</th>"
            "<th>direction</th><th>note</th></tr></thead><tbody>")
    out = [head]
    for r in rows:
        cls = "none" if r.agree is None else ("agree" if r.agree else "disagree")
        ci = "—" if r.ci_lo is None or r.ci_hi is None else f"[{_num(r.ci_lo)}, {_num(r.ci_hi)}]"
        d = "—" if r.agree is None else ("agrees" if r.agree else "disagrees")
        out.append(f'<tr class="{cls}"><td>{html.escape(r.table)}</td><td>{html.escape(r.row)}</td>'
                   f"<td>{html.escape(r.metric)}</td><td>{html.escape(r.unit)}</td>"
                   f'<td class="num">{_num(r.paper)}</td><td class="num">{_num(r.sim)}</td>'
                   f'<td class="num">{ci}</td><td class="num">{r.n or "—"}</td>'
                   f'<td class="num">{_num(r.paper_ratio)}</td><td class="num">{_num(r.sim_ratio)}</td>'
                   f'<td class="dir">{d}</td><td>{html.escape(r.note)}</td></tr>')
    out.append("</tbody></table>")
    return "".join(out)


# a study's table longer than this is folded (a <details> element) so that every study's
# plots and notes stay within reach; the rows that disagree are listed above it
FOLD_ROWS = 50


def _rows_block(res: StudyResult) -> str:
    if len(res.rows) <= FOLD_ROWS:
        return _rows_table(res.rows)
    agree, total = res.agreement()
    bad = [r for r in res.rows if r.agree is False]
    parts = []
    if bad:
        shown = bad[:FOLD_ROWS]
        more = f" (the first {len(shown)})" if len(bad) > len(shown) else ""
        parts.append(f"<p>The {len(bad)} rows whose direction disagrees{more}:</p>" + _rows_table(shown))
    parts.append(f"<details><summary>All {len(res.rows)} published numbers (direction agrees on {agree} of "
                 f"{total})</summary>{_rows_table(res.rows)}</details>")
    return "\n".join(parts)


def _img(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f"data:image/png;base64,{data}"


def _study_section(res: StudyResult, out_dir: Path, md: MarkdownIt) -> str:
    agree, total = res.agreement()
    parts = [f'<section id="{html.escape(res.study)}"><h2>{html.escape(res.title)}</h2>',
             f'<p class="meta">Paper: {html.escape(res.paper)}<br>Platforms: {html.escape(res.platforms)}<br>'
             f"Level <code>{html.escape(res.level)}</code>, {res.seeds} seed(s) per configuration, "
             f"{res.runs} runs, {res.wall_s:.0f} s wall. Direction agrees on <b>{agree} of {total}</b> "
             f"compared rows.</p>",
             _rows_block(res)]
    for name, caption in res.plots:
        p = out_dir / name
        if p.exists():
            parts.append(f'<figure><img alt="{html.escape(caption)}" src="{_img(p)}">'
                         f"<figcaption>{html.escape(caption)}</figcaption></figure>")
        else:
            parts.append(f"<p><i>plot {html.escape(name)} missing</i></p>")
    if res.notes:
        parts.append('<div class="notes"><h3>Notes, and where the simulation disagrees</h3>')
        parts.extend(md.render(n) for n in res.notes)
        parts.append("</div>")
    parts.append("</section>")
    return "\n".join(parts)


def render_report(results: Sequence[StudyResult], out_dir: Path) -> str:
    md = MarkdownIt("commonmark").enable("table")
    summary = ["<table class=\"summary\"><thead><tr><th>study</th><th>paper</th><th>level</th><th>seeds</th>"
               "<th>runs</th><th>wall</th><th>published numbers</th><th>with a simulated value</th>"
               "<th>direction agrees</th></tr></thead><tbody>"]
    for r in results:
        agree, total = r.agreement()
        with_sim = sum(1 for x in r.rows if x.sim is not None)
        summary.append(f'<tr><td><a href="#{html.escape(r.study)}">{html.escape(r.study)}</a></td>'
                       f"<td>{html.escape(r.paper)}</td><td>{html.escape(r.level)}</td><td>{r.seeds}</td>"
                       f"<td>{r.runs}</td><td>{r.wall_s:.0f} s</td><td>{len(r.rows)}</td><td>{with_sim}</td>"
                       f"<td>{agree} / {total}</td></tr>")
    summary.append("</tbody></table>")
    body = "\n".join(_study_section(r, out_dir, md) for r in results)
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<title>hetsched: the five studies reproduced</title>"
            f"<style>{_CSS}</style></head><body>"
            "<h1>hetsched: the studies reproduced beside their published tables</h1>"
            "<p class=\"meta\">Each row is one published number and its simulated counterpart (mean over "
            "seeds, Student's t 95 % confidence interval). Ratios are a value over its baseline row's "
            "(e.g. 0.85: 15 % below the baseline); rows where the simulation's direction differs from "
            "the paper's are shaded red and explained in the study's notes. Made by "
            "<code>hetsched reproduce</code>.</p>"
            + "".join(summary) + body + "</body></html>\n")


def write_report(out_dir: Path) -> Path | None:
    """Write ``OUT/report.html`` from every ``STUDY.json`` in ``out_dir``; None if there is none."""
    from hetsched.reproduce import load_results

    results = load_results(out_dir)
    if not results:
        return None
    p = Path(out_dir) / "report.html"
    tmp = p.with_name(p.name + ".tmp")
    tmp.write_text(render_report(results, Path(out_dir)))
    os.replace(tmp, p)
    return p
