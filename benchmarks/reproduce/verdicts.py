"""Two `hetsched reproduce` output folders side by side under today's verdict rules: each
study's four counts (agrees, disagrees, inconclusive, not decidable) and the rows that agree
by construction, before and after a change.

    python benchmarks/reproduce/verdicts.py BEFORE_DIR AFTER_DIR

BEFORE_DIR may have been written by an older build, before the rules existed, as long as its
STUDY.json rows keep their per-seed values (``values``, ``base_values``). Its rows are judged
again by ``hetsched.reproduce.core`` (the interval of the change from the per-seed values,
then the verdict). Three lines per study:

* ``before``: the before rows under the rules alone (no row marked not decidable or by
  construction, as an older build marked none);
* ``before, today's marks``: the same rows, each taking the marks of the after row with the
  same table, row and metric (which rows lie within the paper's own noise and which agree
  by construction are facts about the paper and the model, not about a run): what the
  marks change, apart from any change of calibration;
* ``after``: the after folder as written.

A before row whose after partner is a change in percent (no baseline values) is judged as
one.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from hetsched.reproduce import STUDIES
from hetsched.reproduce.core import VERDICTS, Row, read_study, verdict_counts


def _key(r: Row) -> tuple[str, str, str]:
    return r.table, r.row, r.metric


def _load_rows(path: Path) -> list[Row]:
    """Rows of a STUDY.json, whatever fields the build that wrote it had."""
    doc = json.loads(path.read_text())
    fields = set(Row.__dataclass_fields__)
    return [Row(**{k: v for k, v in r.items() if k in fields}) for r in doc["rows"]]


def rejudge(before: list[Row], after: list[Row], *, marks: bool) -> list[Row]:
    """``before`` judged by today's rules; ``marks``: with the after rows' marks."""
    partner = {_key(r): r for r in after}
    out = []
    for r in before:
        p = partner.get(_key(r))
        pct = p is not None and p.base_values is None and p.values is not None and p.sim_ratio is not None
        r.undecidable = r.construction = ""
        if p is not None:
            if marks:
                r.undecidable, r.construction = p.undecidable, p.construction
            if p.paper_ratio is None:
                r.paper_ratio = None  # the after build no longer compares this number
            elif r.paper_ratio is None or pct:
                r.paper_ratio = p.paper_ratio
        r.verdict = None
        if marks and p is not None and p.verdict is None:
            out.append(r)  # the after build shows this number without judging it (e.g. counted on another row)
            continue
        if r.paper_ratio is not None and r.values is not None and (pct or r.base_values is not None):
            r.change_lo = r.change_hi = None
            r.rejudge(pct=pct)
        elif r.paper_ratio is not None and r.sim_ratio is not None:
            r.change_lo = r.change_hi = None
            r.judge()
        out.append(r)
    return out


def counts(rows: list[Row]) -> tuple[dict[str, int], dict[str, int]]:
    return verdict_counts(rows), verdict_counts(rows, construction=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    args = ap.parse_args(argv)
    print("| study | level | rows | " + " | ".join(VERDICTS) + " | by construction |")
    print("|---|---|---|" + "---|" * (len(VERDICTS) + 1))
    for study in STUDIES:
        b, a = args.before / f"{study}.json", args.after / f"{study}.json"
        if not (b.exists() and a.exists()):
            continue
        after = read_study(a)
        lines = [("before", rejudge(_load_rows(b), list(after.rows), marks=False)),
                 ("before, today's marks", rejudge(_load_rows(b), list(after.rows), marks=True)),
                 ("after", list(after.rows))]
        for label, rows in lines:
            c, k = counts(rows)
            kk = ", ".join(f"{v} {k[v]}" for v in VERDICTS if k[v])
            print(f"| {study} | {after.level} | {label} | " + " | ".join(str(c[v]) for v in VERDICTS)
                  + f" | {sum(k.values())}{f' ({kk})' if kk else ''} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
