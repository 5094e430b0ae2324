"""Two `hetsched reproduce` output folders side by side under today's verdict rules: each
study's four counts (agrees, disagrees, inconclusive, not decidable) and the rows that agree
by construction, before and after a change.

    python benchmarks/reproduce/verdicts.py BEFORE_DIR AFTER_DIR

BEFORE_DIR may have been written by an older build, before the rules existed, as long as its
STUDY.json rows keep their per-seed values (``values``, ``base_values``). Its rows are judged
again by ``hetsched.reproduce.core`` (the interval of the change from the per-seed values,
then the verdict). A study's own marks, which rows are not decidable (the paper's noise or
control) and which agree by construction, are facts about the paper and the model rather
than about a run, so a before row takes them from the after row with the same table, row
and metric; a before row with no such partner keeps none. A row whose values are changes in
percent (no baseline values) is judged as such when its after partner is.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from hetsched.reproduce import STUDIES
from hetsched.reproduce.core import VERDICTS, Row, StudyResult, read_study


def _key(r: Row) -> tuple[str, str, str]:
    return r.table, r.row, r.metric


def _load_rows(path: Path) -> list[Row]:
    """Rows of a STUDY.json, whatever fields the build that wrote it had."""
    doc = json.loads(path.read_text())
    fields = set(Row.__dataclass_fields__)
    return [Row(**{k: v for k, v in r.items() if k in fields}) for r in doc["rows"]]


def rejudge(before: list[Row], after: list[Row]) -> list[Row]:
    partner = {_key(r): r for r in after}
    out = []
    for r in before:
        p = partner.get(_key(r))
        if p is not None:
            r.undecidable, r.construction = p.undecidable, p.construction
            pct = p.base_values is None and p.values is not None and p.sim_ratio is not None
            if p.paper_ratio is None:
                r.paper_ratio = None  # the after build no longer compares this number
            elif r.paper_ratio is None or pct:
                r.paper_ratio = p.paper_ratio
        else:
            pct = False
        r.verdict = None
        if r.paper_ratio is not None and r.values is not None and (pct or r.base_values is not None):
            r.rejudge(pct=pct)
        elif r.paper_ratio is not None and r.sim_ratio is not None:
            r.change_lo = r.change_hi = None
            r.judge()
        out.append(r)
    return out


def counts(rows: list[Row]) -> tuple[dict[str, int], dict[str, int]]:
    res = StudyResult("", "", "", "", rows)
    return res.counts(), res.counts(construction=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    args = ap.parse_args(argv)
    print("| study | level | " + " | ".join(f"{v} before → after" for v in VERDICTS)
          + " | by construction before → after |")
    print("|---|---|" + "---|" * (len(VERDICTS) + 1))
    for study in STUDIES:
        b, a = args.before / f"{study}.json", args.after / f"{study}.json"
        if not (b.exists() and a.exists()):
            continue
        after = read_study(a)
        before_rows = rejudge(_load_rows(b), list(after.rows))
        cb, kb = counts(before_rows)
        ca, ka = counts(after.rows)
        cells = [f"{cb[v]} → {ca[v]}" for v in VERDICTS]
        print(f"| {study} | {after.level} | " + " | ".join(cells) + f" | {sum(kb.values())} → {sum(ka.values())} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
