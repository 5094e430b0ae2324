"""What every study's reproduction shares: the runs and their runner (hetsched.runner's, with
a progress bar), the statistics (95 % confidence intervals, the Wilcoxon signed-rank test),
one row per published number, and the CSV / Markdown / JSON writers.

A study module builds its :class:`Run` list, hands it to ``ctx.runner.run(...)``, turns the
metrics into :class:`Row` s (with :func:`row_from`), draws its plots into ``ctx.out_dir`` and
returns a :class:`StudyResult`. See docs/reproduce.md.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from hetsched.runner import Runner as BatchRunner
from hetsched.runner import RunFailed, RunSpec, flat_result
from hetsched.runner import execute as run_one

__all__ = ["Run", "execute", "Runner", "RunFailed", "Context", "Row", "StudyResult", "mean_ci", "wilcoxon_p",
           "ratio", "direction_agrees", "row_from", "write_study", "read_study", "LEVELS", "metric_values"]

# smoke: seconds, for tests; quick: a few minutes a study on 2 cores; full: the paper's scale
LEVELS = ("smoke", "quick", "full")
# a change smaller than this (relative) counts as "no change" when directions are compared
SAME_TOLERANCE = 0.01


# ----------------------------------------------------------------------------- runs

@dataclass(frozen=True, kw_only=True, eq=False)
class Run(RunSpec):
    """One run of a study: a :class:`hetsched.runner.RunSpec` whose defaults are the
    studies' (``eas``; no energy lower bound: its linear program often takes longer than a
    short run, so a study that reports the bound asks for it).

    A simulation returns the flat metrics of :func:`flat_metrics`; ``fn``
    (``"module:function"``) is called with ``**kwargs`` and ``seed`` and returns a flat
    dict of numbers (and strings)."""

    scheduler: str = "eas"
    lower_bound: bool = False

    @staticmethod
    def sim(platform: str, workload: str | Sequence[str], scheduler: str = "eas", *, governor: str = "schedutil",
            knobs: dict | None = None, seed: int = 0, duration_s: float | None = None,
            idle_governor: str = "menu", label: str = "", lower_bound: bool = False) -> "Run":
        return Run(platform=platform, workload=workload, scheduler=scheduler, governor=governor, knobs=knobs or {},
                   seed=seed, duration_s=duration_s, idle_governor=idle_governor, label=label,
                   lower_bound=lower_bound)

    @staticmethod
    def call(fn: str, *, seed: int = 0, label: str = "", **kwargs) -> "Run":
        return Run(fn=fn, seed=seed, kwargs=kwargs, label=label)


def flat_metrics(doc: dict) -> dict:
    """A result document as one flat dict (:func:`hetsched.runner.flat_result`, extended):
    the run's numbers, the engine's metrics, ``counters.X`` (and nested
    ``counters.X.name``), and each workload's metrics as ``KEY.name``, with its booleans
    and lists of numbers too."""
    return flat_result(doc, extended=True)


def execute(run: Run) -> dict:
    """Run one :class:`Run` in this process; its flat metrics plus ``wall_s``."""
    return run_one(run, extended=True)


class Runner(BatchRunner):
    """Runs lists of :class:`Run` on a process pool (``jobs`` workers; 1: in this process),
    with a progress bar, and keeps every result for the session (a run asked for twice,
    e.g. the same baseline by two tables, runs once): :class:`hetsched.runner.Runner`."""

    def __init__(self, jobs: int | None = None, progress: bool = True, ray: str | None = None):
        super().__init__(jobs, ray=ray, extended=True)
        self.progress = progress

    @property
    def runs_done(self) -> int:
        return self.executed

    def run(self, runs: Iterable[Run], label: str = "runs") -> list[dict]:
        """The results of ``runs``, in order. A failing run raises :class:`RunFailed`."""
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        runs = list(runs)
        todo = self.pending(runs)
        if not todo:
            return super().run(runs)
        # on stderr, like every progress bar of the CLI: stdout keeps the results
        progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), transient=True, disable=not self.progress,
                            console=Console(stderr=True))
        with progress:
            task = progress.add_task(label, total=len(todo))
            return super().run(runs, on_result=lambda *_: progress.advance(task))


@dataclass
class Context:
    """What a study's ``run(ctx)`` is given."""

    level: str = "quick"          # smoke | quick | full
    seeds: int = 5                # repetitions per configuration
    out_dir: Path = Path("reproduce")
    runner: Runner = field(default_factory=lambda: Runner(progress=False))

    @property
    def quick(self) -> bool:
        return self.level != "full"

    def pick(self, smoke: Any, quick: Any, full: Any) -> Any:
        """The value for this level: ``ctx.pick(2.0, 20.0, 120.0)``."""
        return {"smoke": smoke, "quick": quick, "full": full}[self.level]

    def seed_list(self) -> list[int]:
        return list(range(self.seeds))


# ----------------------------------------------------------------------------- statistics

def mean_ci(values: Sequence[float], level: float = 0.95) -> tuple[float, float, float]:
    """(mean, lower, upper): Student's t interval of the mean. One value: no interval (nan)."""
    xs = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    if not xs:
        return math.nan, math.nan, math.nan
    n = len(xs)
    m = sum(xs) / n
    if n == 1:
        return m, math.nan, math.nan
    from scipy import stats

    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
    half = float(stats.t.ppf(0.5 + level / 2, n - 1)) * sd / math.sqrt(n)
    return m, m - half, m + half


def wilcoxon_p(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Two-sided Wilcoxon signed-rank p of paired samples (scipy); None if every pair is
    equal (the test is undefined: no difference was observed at all)."""
    diffs = [float(y) - float(x) for x, y in zip(a, b)]
    if len(a) != len(b):
        raise ValueError("wilcoxon_p: samples of different lengths")
    if all(d == 0 for d in diffs):
        return None
    from scipy.stats import wilcoxon

    return float(wilcoxon(list(map(float, a)), list(map(float, b))).pvalue)


def ratio(value: float | None, base: float | None) -> float | None:
    """value / base; None where either is missing or the base is 0."""
    if value is None or base is None or base == 0 or math.isnan(value) or math.isnan(base):
        return None
    return value / base


def direction_agrees(paper_ratio: float | None, sim_ratio: float | None,
                     tolerance: float = SAME_TOLERANCE) -> bool | None:
    """Whether both ratios say the same thing: both above 1, both below, or both within
    ``tolerance`` of 1 (no change). None when either is missing."""
    if paper_ratio is None or sim_ratio is None:
        return None

    def sign(r: float) -> int:
        return 0 if abs(r - 1.0) <= tolerance else (1 if r > 1.0 else -1)

    return sign(paper_ratio) == sign(sim_ratio)


def metric_values(results: Sequence[dict], key: str) -> list[float]:
    """The metric ``key`` over results (runs of one configuration over seeds)."""
    out = []
    for r in results:
        if key not in r:
            raise KeyError(f"metric {key!r} not in the run's result (have: {', '.join(sorted(r)[:40])})")
        out.append(float(r[key]))
    return out


# ----------------------------------------------------------------------------- rows

@dataclass
class Row:
    """One published number beside its simulated counterpart.

    ``paper_ratio`` / ``sim_ratio``: the value over its baseline row's (the paper's
    improvement ratio; e.g. 0.85 = 15 % less than the baseline); None for a baseline row
    or a number without a baseline. ``agree``: whether the directions agree (see
    :func:`direction_agrees`); None when there is nothing to compare. ``note``: why a
    number has no simulated counterpart, or what differs."""

    table: str
    row: str
    metric: str
    unit: str
    paper: float | None
    sim: float | None
    ci_lo: float | None = None
    ci_hi: float | None = None
    paper_ratio: float | None = None
    sim_ratio: float | None = None
    agree: bool | None = None
    n: int = 0
    note: str = ""

    CSV_FIELDS = ("table", "row", "metric", "unit", "paper", "sim", "ci_lo", "ci_hi", "paper_ratio",
                  "sim_ratio", "agree", "n", "note")


def _nan_none(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def row_from(table: str, row: str, metric: str, unit: str, paper: float | None,
             sim_values: Sequence[float] | None, *, paper_base: float | None = None,
             sim_base_values: Sequence[float] | None = None, note: str = "") -> Row:
    """A :class:`Row` from the simulated values over seeds (mean and 95 % CI) and, for a
    row with a baseline, the baseline's published value and simulated values: the ratios
    and whether their directions agree. ``sim_values`` None: no simulated counterpart
    (``note`` must say why)."""
    pr = ratio(paper, paper_base) if paper_base is not None else None
    if sim_values is None:
        if not note:
            raise ValueError(f"{table} / {row} / {metric}: a number without a simulated value needs a note")
        # the paper's improvement is kept: the reader still sees what the paper claimed
        return Row(table, row, metric, unit, paper, None, paper_ratio=pr, note=note)
    m, lo, hi = mean_ci(sim_values)
    sr = None
    if sim_base_values is not None:
        sr = ratio(m, mean_ci(sim_base_values)[0])
    return Row(table, row, metric, unit, paper, _nan_none(m), _nan_none(lo), _nan_none(hi), pr, sr,
               direction_agrees(pr, sr), len(list(sim_values)), note)


# ----------------------------------------------------------------------------- a study's result

@dataclass
class StudyResult:
    """What a study's reproduction produced. ``plots``: (file name in the output folder,
    caption). ``notes``: Markdown paragraphs, among them the explanation of every
    disagreement with the paper. ``platforms``: the built-in platforms used and why."""

    study: str
    title: str
    paper: str
    platforms: str
    rows: list[Row]
    plots: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    level: str = "quick"
    seeds: int = 0
    runs: int = 0
    wall_s: float = 0.0

    def agreement(self) -> tuple[int, int]:
        """(rows whose direction agrees, rows with a direction to compare)."""
        cmp = [r for r in self.rows if r.agree is not None]
        return sum(1 for r in cmp if r.agree), len(cmp)


def _fmt(x: Any, digits: int = 4) -> str:
    if x is None:
        return "—"
    if isinstance(x, bool):
        return "yes" if x else "**no**"
    if isinstance(x, float):
        if math.isnan(x):
            return "—"
        return f"{x:.{digits}g}"
    return str(x)


def rows_markdown(rows: Sequence[Row]) -> str:
    head = ("| table | row | metric | unit | paper | simulated (95 % CI) | paper ratio | sim ratio | "
            "direction agrees | note |\n|---|---|---|---|---|---|---|---|---|---|\n")
    lines = []
    for r in rows:
        sim = _fmt(r.sim)
        if r.ci_lo is not None and r.ci_hi is not None:
            sim += f" [{_fmt(r.ci_lo)}, {_fmt(r.ci_hi)}]"
        note = r.note.replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {r.table} | {r.row} | {r.metric} | {r.unit} | {_fmt(r.paper)} | {sim} | "
                     f"{_fmt(r.paper_ratio, 3)} | {_fmt(r.sim_ratio, 3)} | {_fmt(r.agree)} | {note} |")
    return head + "\n".join(lines) + "\n"


def study_markdown(res: StudyResult) -> str:
    agree, total = res.agreement()
    parts = [f"# {res.title}\n", f"Paper: {res.paper}\n",
             f"Platforms: {res.platforms}\n",
             f"Level `{res.level}`, {res.seeds} seed(s) per configuration, {res.runs} runs, "
             f"{res.wall_s:.0f} s wall. Direction agrees on {agree} of {total} compared rows.\n",
             "## Published numbers beside the simulation\n", rows_markdown(res.rows)]
    if res.plots:
        parts.append("## Plots\n")
        for name, caption in res.plots:
            parts.append(f"![{caption}]({name})\n\n*{caption}*\n")
    if res.notes:
        parts.append("## Notes, and where the simulation disagrees\n")
        parts.extend(n.rstrip() + "\n" for n in res.notes)
    return "\n".join(parts)


def write_study(res: StudyResult, out_dir: Path) -> list[Path]:
    """``OUT/STUDY.csv``, ``OUT/STUDY.md`` and ``OUT/STUDY.json`` (what the HTML report
    reads), each written under a temporary name and renamed."""
    out_dir.mkdir(parents=True, exist_ok=True)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(Row.CSV_FIELDS)
    for r in res.rows:
        w.writerow(["" if getattr(r, f) is None else getattr(r, f) for f in Row.CSV_FIELDS])
    doc = _finite(asdict(res))
    files = {f"{res.study}.csv": buf.getvalue(), f"{res.study}.md": study_markdown(res),
             f"{res.study}.json": json.dumps(doc, indent=1, allow_nan=False, default=_json_default)}
    paths = []
    for name, text in files.items():
        p = out_dir / name
        tmp = p.with_name(p.name + ".tmp")
        tmp.write_text(text)
        os.replace(tmp, p)
        paths.append(p)
    return paths


def _finite(x: Any) -> Any:
    """nan and inf (a study's own arithmetic) as None: JSON has neither."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite(v) for v in x]
    return x


def _json_default(x: Any) -> Any:
    raise TypeError(f"not JSON: {type(x).__name__}")


def read_study(path: Path) -> StudyResult:
    doc = json.loads(Path(path).read_text())
    rows = [Row(**r) for r in doc.pop("rows")]
    doc["plots"] = [tuple(p) for p in doc.get("plots", [])]
    return StudyResult(rows=rows, **doc)
