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
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from hetsched.outputs import OutputSet
from hetsched.reproduce.journal import RunJournal
from hetsched.runner import Runner as BatchRunner
from hetsched.runner import RunFailed, RunSpec, flat_result
from hetsched.runner import execute as run_one

__all__ = ["Run", "execute", "Runner", "RunFailed", "Context", "Row", "StudyResult", "mean_ci", "wilcoxon_p",
           "ratio", "change_interval", "judge", "row_from", "write_study", "study_files", "run_times_csv",
           "read_study", "LEVELS", "metric_values",
           "VERDICTS", "AGREES", "DISAGREES", "INCONCLUSIVE", "NOT_DECIDABLE", "change_pct", "change_text",
           "ratio_pct", "verdict_counts", "counts_text", "judge_magnitude", "magnitude_counts", "magnitude_text",
           "MAGNITUDES", "AGREES_IN_MAGNITUDE", "DIFFERS_IN_MAGNITUDE", "MAGNITUDE_FACTOR"]

# smoke: seconds, for tests; quick: a few minutes a study on 2 cores; full: the paper's scale
LEVELS = ("smoke", "quick", "full")

# The four verdicts a published change can get (docs/reproduce.md, "Verdicts"):
AGREES = "agrees"                # the simulated change has the paper's sign, its 95 % interval excludes none
DISAGREES = "disagrees"          # the interval excludes no change, with the opposite sign
INCONCLUSIVE = "inconclusive"    # the interval includes no change
NOT_DECIDABLE = "not decidable"  # the paper's own change lies within the paper's own noise
VERDICTS = (AGREES, DISAGREES, INCONCLUSIVE, NOT_DECIDABLE)
# the confidence level of the simulated change's interval
CHANGE_LEVEL = 0.95

# The magnitude of a published change beside the simulated one (docs/reproduce.md,
# "Magnitude"), a second result beside the direction verdict:
AGREES_IN_MAGNITUDE = "agrees in magnitude"    # the paper's change within the simulated interval
#                                                widened by the paper's noise, or (no noise) within
#                                                a factor of MAGNITUDE_FACTOR of the simulated change
DIFFERS_IN_MAGNITUDE = "differs in magnitude"
MAGNITUDES = (AGREES_IN_MAGNITUDE, DIFFERS_IN_MAGNITUDE)
# where the paper shows no noise: |paper change| / |simulated change| within [1/F, F]
MAGNITUDE_FACTOR = 2.0
# the direction verdicts that get a magnitude: the simulation says something about the size of
# a change the paper measured (not "not decidable": the paper's change is within its own noise)
_WITH_MAGNITUDE = (AGREES, DISAGREES, INCONCLUSIVE)
# float slack at the rules' boundaries (a paper ratio of 0.85 is 0.85000000000000001 - 1 ...)
_EPS = 1e-9


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
    e.g. the same baseline by two tables, runs once): :class:`hetsched.runner.Runner`.
    ``journal``: every completed run is written to it, and the runs it holds from an
    earlier reproduction (``--resume``) are taken from it instead of being run."""

    def __init__(self, jobs: int | None = None, progress: bool = True, ray: str | None = None,
                 journal: RunJournal | None = None):
        super().__init__(jobs, ray=ray, extended=True)
        self.progress = progress
        self.journal = journal
        # (label, wall_s, resumed) of every run a study used, in the order they finished;
        # a resumed run's wall time is the one it took when it ran
        self.timings: list[tuple[str, float, bool]] = []
        self.resumed = 0  # runs taken from the journal

    @property
    def runs_done(self) -> int:
        return self.executed

    def _take_stored(self, runs: list[Run]) -> None:
        stored = self.journal.stored if self.journal is not None else {}
        got = {}
        for r in runs:
            result = stored.pop(r.hash, None)
            if result is not None:
                got[r.hash] = result
                self.timings.append((_run_label(r), float(result.get("wall_s") or 0.0), True))
        self.resumed += len(got)
        self.preload(got)

    def run(self, runs: Iterable[Run], label: str = "runs") -> list[dict]:
        """The results of ``runs``, in order. A failing run raises :class:`RunFailed`."""
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        runs = list(runs)
        self._take_stored(runs)
        todo = self.pending(runs)
        if not todo:
            return super().run(runs)
        # on stderr, like every progress bar of the CLI: stdout keeps the results
        progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), transient=True, disable=not self.progress,
                            console=Console(stderr=True))
        def done(spec: Run, result: dict) -> None:
            self.timings.append((_run_label(spec), float(result.get("wall_s") or 0.0), False))
            if self.journal is not None:
                self.journal.add(spec.hash, spec.label, result)
            progress.advance(task)

        with progress:
            task = progress.add_task(label, total=len(todo))
            return super().run(runs, on_result=done)

    def close(self) -> None:
        try:
            super().close()
        finally:
            if self.journal is not None:
                self.journal.close()


def _run_label(spec: Run) -> str:
    what = (f"{spec.fn}" if spec.fn else
            f"{spec.platform} {spec.scheduler} {'+'.join(spec.workload)}") + f", seed {spec.seed}"
    return spec.label or what


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


def _t_half(xs: Sequence[float], level: float) -> float:
    """Half the width of Student's t interval of the mean of ``xs`` (n >= 2)."""
    from scipy import stats

    n = len(xs)
    m = sum(xs) / n
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
    return float(stats.t.ppf(0.5 + level / 2, n - 1)) * sd / math.sqrt(n)


def change_interval(values: Sequence[float], base_values: Sequence[float] | None = None, *,
                    pct: bool = False, level: float = CHANGE_LEVEL) -> tuple[float, float, float] | None:
    """(ratio, lower, upper): the simulated change as a ratio to its baseline with its
    ``level`` confidence interval, or None where there is no interval (fewer than two values
    on either side, or a baseline mean of 0).

    With ``base_values``: the ratio is mean(values) / mean(base). Equal lengths are taken as
    paired by seed (a study runs a configuration and its baseline on the same seeds, so the
    same random draws): the interval is Student's t on the per-seed differences, divided by
    the baseline's mean. Unequal lengths: Welch's interval of the difference of the means,
    divided the same way. The baseline's mean is taken as known; its own spread enters
    through the differences.

    ``pct``: ``values`` are themselves changes in percent (no change = 0), as a study that
    computes a per-pair change reports them; the ratio is 1 + mean / 100."""
    xs = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    if pct:
        if len(xs) < 2:
            return None
        m = sum(xs) / len(xs)
        h = _t_half(xs, level)
        return 1.0 + m / 100.0, 1.0 + (m - h) / 100.0, 1.0 + (m + h) / 100.0
    if base_values is None:
        raise ValueError("change_interval: a baseline is needed unless the values are changes (pct=True)")
    bs = [float(v) for v in base_values if v is not None and not math.isnan(float(v))]
    if len(xs) < 2 or len(bs) < 2:
        return None
    mb = sum(bs) / len(bs)
    if mb == 0:
        return None
    if len(xs) == len(bs) == len(list(values)) == len(list(base_values)):
        d = [x - b for x, b in zip(xs, bs)]
        md = sum(d) / len(d)
        h = _t_half(d, level)
    else:
        from scipy import stats

        nx, nb = len(xs), len(bs)
        mx = sum(xs) / nx
        vx = sum((x - mx) ** 2 for x in xs) / (nx - 1) / nx
        vb = sum((b - mb) ** 2 for b in bs) / (nb - 1) / nb
        md = mx - mb
        se = math.sqrt(vx + vb)
        if se == 0:
            h = 0.0
        else:
            df = (vx + vb) ** 2 / (vx ** 2 / (nx - 1) + vb ** 2 / (nb - 1))
            h = float(stats.t.ppf(0.5 + level / 2, df)) * se
    return 1.0 + md / mb, 1.0 + (md - h) / mb, 1.0 + (md + h) / mb


def judge(paper_ratio: float | None, lo: float | None, hi: float | None, *, undecidable: str = "") -> str | None:
    """The verdict on one published change (docs/reproduce.md, "Verdicts"):

    * ``not decidable`` when ``undecidable`` says why the paper's own change lies within
      the paper's own noise (a noise band or a control condition it shows);
    * ``inconclusive`` when the simulated interval [lo, hi] includes no change (1), or
      there is no interval;
    * ``agrees`` when it excludes no change on the paper's side, ``disagrees`` on the other.

    A paper that prints no change at all (ratio exactly 1) can be disagreed with but never
    agreed with: an interval that includes no change is inconclusive, whatever its width.
    None: there is nothing to compare (no published or no simulated change)."""
    if paper_ratio is None or (isinstance(paper_ratio, float) and math.isnan(paper_ratio)):
        return None
    if undecidable:
        return NOT_DECIDABLE
    if lo is None or hi is None or math.isnan(lo) or math.isnan(hi):
        return INCONCLUSIVE
    if lo <= 1.0 <= hi:
        return INCONCLUSIVE
    sim_sign = 1 if lo > 1.0 else -1
    paper_sign = 0 if paper_ratio == 1.0 else (1 if paper_ratio > 1.0 else -1)
    return AGREES if sim_sign == paper_sign else DISAGREES


def _finite_or_none(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else float(x)


def judge_magnitude(paper_ratio: float | None, sim_ratio: float | None, lo: float | None = None,
                    hi: float | None = None, *, noise: float | None = None) -> str | None:
    """Whether the paper's change and the simulated one agree in size (docs/reproduce.md,
    "Magnitude"): :data:`AGREES_IN_MAGNITUDE` or :data:`DIFFERS_IN_MAGNITUDE`; None where
    there is nothing to compare (no published or no simulated change). Ratios as in
    :class:`Row` (0.85 = -15 %).

    * ``noise`` (the paper's own run-to-run spread of this change, a relative half-width:
      0.02 = +-2 % of the baseline): agrees when ``paper_ratio`` lies in the simulated 95 %
      interval widened by it, [lo - noise, hi + noise] (no interval, one seed: [sim - noise,
      sim + noise]).
    * no noise: agrees when the two changes have the same sign and |paper change| /
      |simulated change| lies in [1/2, 2] (:data:`MAGNITUDE_FACTOR`). A simulated change of
      exactly 0 has no sign: it differs from any published change.
    * a paper that prints no change at all (ratio exactly 1) and shows no noise: no factor
      of 0 exists; it agrees when the simulated interval itself includes no change (noise 0),
      without an interval when the simulated change is exactly 0.

    Boundaries count as inside (with a slack of 1e-9 for the floats' rounding)."""
    pr, sr = _finite_or_none(paper_ratio), _finite_or_none(sim_ratio)
    if pr is None or sr is None:
        return None
    lo, hi = _finite_or_none(lo), _finite_or_none(hi)
    if lo is None or hi is None:
        lo = hi = sr
    if noise is not None or pr == 1.0:
        w = float(noise or 0.0)
        if w < 0 or not math.isfinite(w):
            raise ValueError(f"judge_magnitude: the paper's noise must be a finite half-width >= 0, not {noise!r}")
        inside = lo - w - _EPS <= pr <= hi + w + _EPS
        return AGREES_IN_MAGNITUDE if inside else DIFFERS_IN_MAGNITUDE
    cp, cs = pr - 1.0, sr - 1.0
    if cs == 0.0 or (cp > 0) != (cs > 0):
        return DIFFERS_IN_MAGNITUDE
    q = abs(cp) / abs(cs)
    f = MAGNITUDE_FACTOR
    return AGREES_IN_MAGNITUDE if 1.0 / f - _EPS <= q <= f + _EPS else DIFFERS_IN_MAGNITUDE


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
    or a number without a baseline. ``change_lo`` / ``change_hi``: the 95 % interval of
    ``sim_ratio`` (:func:`change_interval`). ``verdict``: one of :data:`VERDICTS`
    (:func:`judge`); None when there is nothing to compare. ``undecidable``: why the
    paper's own change is within its own noise (which noise band or control condition);
    ``construction``: why agreement follows from the model's construction, so that the
    row is counted apart. ``note``: why a number has no simulated counterpart, or what
    differs.

    ``paper_noise``: the paper's own run-to-run spread of this change, as a relative
    half-width of the ratio (0.02 = +-2 % of the baseline); None where the paper shows none
    (the study module quotes the paper's sentence where it sets one). ``magnitude``: one of
    :data:`MAGNITUDES` (:func:`judge_magnitude`), set with the verdict; None where the row
    has no direction verdict, is not decidable, or prints no value of its own (a direction
    stated in the text only)."""

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
    change_lo: float | None = None
    change_hi: float | None = None
    verdict: str | None = None
    n: int = 0
    note: str = ""
    undecidable: str = ""
    construction: str = ""
    # the per-seed simulated values and, for a row with a baseline, the baseline's, in seed
    # order (runs of one seed are paired): what the verdict's interval is computed from
    values: list[float] | None = None
    base_values: list[float] | None = None
    paper_noise: float | None = None
    magnitude: str | None = None

    CSV_FIELDS = ("table", "row", "metric", "unit", "paper", "sim", "ci_lo", "ci_hi", "paper_ratio",
                  "paper_noise", "sim_ratio", "change_lo", "change_hi", "verdict", "magnitude", "construction",
                  "undecidable", "n", "note")

    def judge(self) -> "Row":
        """Set ``verdict`` from the ratios, the interval and ``undecidable`` (:func:`judge`),
        and ``magnitude`` (:func:`judge_magnitude`) for a row that agrees, disagrees or is
        inconclusive and prints a value of its own."""
        self.verdict = judge(self.paper_ratio, self.change_lo, self.change_hi, undecidable=self.undecidable) \
            if self.sim_ratio is not None or self.undecidable else None
        self.magnitude = judge_magnitude(self.paper_ratio, self.sim_ratio, self.change_lo, self.change_hi,
                                         noise=self.paper_noise) \
            if self.verdict in _WITH_MAGNITUDE and self.paper is not None else None
        return self

    def rejudge(self, *, pct: bool = False) -> "Row":
        """Recompute ``sim_ratio``, its interval and the verdict from ``values`` and
        ``base_values`` (``pct``: the values are changes in percent)."""
        if self.values is not None and (pct or self.base_values is not None):
            ci = change_interval(self.values, self.base_values, pct=pct)
            if ci is not None:
                self.sim_ratio, self.change_lo, self.change_hi = ci
        return self.judge()


def _nan_none(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def row_from(table: str, row: str, metric: str, unit: str, paper: float | None,
             sim_values: Sequence[float] | None, *, paper_base: float | None = None,
             sim_base_values: Sequence[float] | None = None, note: str = "", undecidable: str = "",
             construction: str = "", pct: bool = False, paper_noise: float | None = None) -> Row:
    """A :class:`Row` from the simulated values over seeds (mean and 95 % CI) and, for a
    row with a baseline, the baseline's published value and simulated values: the ratios,
    the simulated change's interval and the verdict. ``sim_values`` None: no simulated
    counterpart (``note`` must say why).

    ``pct``: the row is itself a change in percent (the paper's value and each simulated
    value, e.g. a per-seed paired change); its ratios are 1 + value / 100.
    ``undecidable`` / ``construction`` / ``paper_noise`` (a relative half-width: 0.02 =
    +-2 %, also for a ``pct`` row): see :class:`Row`."""
    if pct:
        pr = None if paper is None else 1.0 + float(paper) / 100.0
    else:
        pr = ratio(paper, paper_base) if paper_base is not None else None
    if sim_values is None:
        if not note:
            raise ValueError(f"{table} / {row} / {metric}: a number without a simulated value needs a note")
        # the paper's improvement is kept: the reader still sees what the paper claimed
        return Row(table, row, metric, unit, paper, None, paper_ratio=pr, note=note, paper_noise=paper_noise)
    m, lo, hi = mean_ci(sim_values)
    sr = clo = chi = None
    if pct or sim_base_values is not None:
        if pct:
            sr = None if math.isnan(m) else 1.0 + m / 100.0
        else:
            sr = ratio(m, mean_ci(sim_base_values)[0])
        ci = change_interval(sim_values, sim_base_values, pct=pct)
        if ci is not None:
            sr, clo, chi = ci
    r = Row(table, row, metric, unit, paper, _nan_none(m), _nan_none(lo), _nan_none(hi), pr, sr, clo, chi,
            None, len(list(sim_values)), note, undecidable, construction,
            values=[float(v) for v in sim_values],
            base_values=None if sim_base_values is None else [float(v) for v in sim_base_values],
            paper_noise=paper_noise)
    return r.judge() if pr is not None else r


def verdict_counts(rows: Iterable[Row], *, construction: bool = False) -> dict[str, int]:
    """How many of ``rows`` got each verdict (:data:`VERDICTS`, in that order), over the
    rows that do not agree by construction (``construction=True``: over those that do)."""
    out = {v: 0 for v in VERDICTS}
    for r in rows:
        if r.verdict is not None and bool(r.construction) == construction:
            out[r.verdict] += 1
    return out


def counts_text(c: dict[str, int]) -> str:
    """The four counts in one line: "agrees 1, disagrees 0, inconclusive 2, not decidable 0"."""
    return ", ".join(f"{v} {c.get(v, 0)}" for v in VERDICTS)


def magnitude_counts(rows: Iterable[Row], *, construction: bool = False) -> dict[str, int]:
    """How many of ``rows`` agree and differ in magnitude (:data:`MAGNITUDES`, in that
    order), over the rows that do not agree by construction (``construction=True``: over
    those that do), as :func:`verdict_counts`."""
    out = {m: 0 for m in MAGNITUDES}
    for r in rows:
        m = getattr(r, "magnitude", None)
        if m is not None and bool(r.construction) == construction:
            out[m] += 1
    return out


def magnitude_text(c: dict[str, int]) -> str:
    """The two magnitude counts in one line: "agrees in magnitude 1, differs in magnitude 3"."""
    return ", ".join(f"{m} {c.get(m, 0)}" for m in MAGNITUDES)


# ----------------------------------------------------------------------------- a study's result

@dataclass
class StudyResult:
    """What a study's reproduction produced. ``plots``: (file name in the output folder,
    caption; SVG files are embedded as vector graphics). ``notes``: Markdown paragraphs,
    among them the explanation of every disagreement with the paper. ``platforms``: the
    built-in platforms used and why. ``finding``: the study's answer in two or three
    sentences (Markdown), drawn from the run's verdicts and counters; the report opens
    with it. ``calibrations``: each condition set from the paper's own statements, as
    (what was set, the value, the paper's sentence with its section). ``sensitivity``: for
    a value the paper does not state, one dict per value tried:
    ``{"parameter": ..., "value": ..., "chosen": bool, "counts": {verdict: n}}``."""

    study: str
    title: str
    paper: str
    platforms: str
    rows: list[Row]
    plots: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    finding: str = ""
    calibrations: list[tuple[str, str, str]] = field(default_factory=list)
    sensitivity: list[dict] = field(default_factory=list)
    level: str = "quick"
    seeds: int = 0
    runs: int = 0
    wall_s: float = 0.0
    resumed: int = 0   # runs taken from OUT/runs.jsonl (--resume), beside the ``runs`` run

    def counts(self, *, construction: bool = False) -> dict[str, int]:
        """The study's :func:`verdict_counts`."""
        return verdict_counts(self.rows, construction=construction)

    def agreement(self) -> tuple[int, int]:
        """(rows that agree, rows with a verdict), rows that agree by construction left out."""
        c = self.counts()
        return c[AGREES], sum(c.values())

    def magnitude_counts(self, *, construction: bool = False) -> dict[str, int]:
        """The study's :func:`magnitude_counts`."""
        return magnitude_counts(self.rows, construction=construction)

    def magnitude_agreement(self) -> tuple[int, int]:
        """(rows that agree in magnitude, rows with a magnitude), rows that agree by
        construction left out."""
        c = self.magnitude_counts()
        return c[AGREES_IN_MAGNITUDE], sum(c.values())

    def counts_line(self) -> str:
        """The four counts and the two magnitude counts in one line, and the rows that agree
        by construction apart: "agrees 1, disagrees 1, inconclusive 0, not decidable 1;
        agrees in magnitude 1, differs in magnitude 1; by construction 1 (agrees 1; agrees
        in magnitude 1)"."""
        k, km = self.counts(construction=True), self.magnitude_counts(construction=True)
        line = counts_text(self.counts()) + "; " + magnitude_text(self.magnitude_counts())
        nk = sum(k.values())
        if nk:
            line += f"; by construction {nk} ({', '.join(f'{v} {k[v]}' for v in VERDICTS if k[v])}"
            if sum(km.values()):
                line += "; " + ", ".join(f"{m} {km[m]}" for m in MAGNITUDES if km[m])
            line += ")"
        return line


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


def _md_cell(x: Any) -> str:
    return str(x).replace("|", "\\|").replace("\n", " ")


def magnitude_label(r: Row) -> str:
    """The magnitude as the tables print it: "agrees", "**differs**" or "—"."""
    m = getattr(r, "magnitude", None)
    if m is None:
        return "—"
    return "agrees" if m == AGREES_IN_MAGNITUDE else "**differs**"


def paper_change_text(r: Row) -> str:
    """The paper's change in percent, with its noise where the paper shows one:
    "-11.0 % ± 2.0", or "—"."""
    v = ratio_pct(r.paper_ratio)
    if v is None:
        return "—"
    out = change_pct(v)
    if getattr(r, "paper_noise", None) is not None:
        out += f" ± {r.paper_noise * 100:.1f}"
    return out


def verdict_label(r: Row) -> str:
    """The verdict as the tables print it: the verdict, and "by construction" where so."""
    if r.verdict is None:
        return "—"
    v = f"**{r.verdict}**" if r.verdict == DISAGREES else r.verdict
    return v + " (by construction)" if r.construction else v


def change_pct(v: float, lo: float | None = None, hi: float | None = None) -> str:
    """A change in percent, with its interval if given: "-7.1 % [-9.0, -5.2]". One decimal,
    or as many more (up to four) as it takes to show a nonzero change as nonzero and an
    interval that excludes no change as excluding it (+0.004 % [+0.002, +0.006], not
    +0.0 % [+0.0, +0.0] beside a verdict that says it disagrees)."""
    d = 1
    while d < 4:
        shown = [float(f"{x:.{d}f}") for x in (v, lo, hi) if x is not None]
        vague = any(x != 0 and y == 0 for x, y in zip((v, lo, hi), shown))
        if lo is not None and hi is not None and (lo > 0 or hi < 0):
            vague = vague or shown[1] == shown[2]
        if not vague:
            break
        d += 1
    out = f"{v:+.{d}f} %"
    if lo is not None and hi is not None:
        out += f" [{lo:+.{d}f}, {hi:+.{d}f}]"
    return out


def ratio_pct(ratio: float | None) -> float | None:
    """A ratio as a change in percent (0.85: -15.0); None where there is none."""
    return None if ratio is None or not math.isfinite(ratio) else (ratio - 1.0) * 100.0


def change_text(r: Row) -> str:
    """The simulated change of ``r`` and its 95 % interval in percent (:func:`change_pct`),
    or "—"."""
    v = ratio_pct(r.sim_ratio)
    if v is None:
        return "—"
    lo, hi = ratio_pct(r.change_lo), ratio_pct(r.change_hi)
    return change_pct(v, lo, hi) if lo is not None and hi is not None else change_pct(v)


def rows_markdown(rows: Sequence[Row]) -> str:
    head = ("| table | row | metric | unit | paper | simulated (95 % CI) | paper change | simulated change "
            "(95 % CI) | verdict | magnitude | note |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
    lines = []
    for r in rows:
        sim = _fmt(r.sim)
        if r.ci_lo is not None and r.ci_hi is not None:
            sim += f" [{_fmt(r.ci_lo)}, {_fmt(r.ci_hi)}]"
        why = " · ".join(x for x in (r.undecidable, r.construction, r.note) if x)
        note = why.replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {r.table} | {r.row} | {r.metric} | {r.unit} | {_fmt(r.paper)} | {sim} | "
                     f"{paper_change_text(r)} | {change_text(r)} | {verdict_label(r)} | {magnitude_label(r)} | "
                     f"{note} |")
    return head + "\n".join(lines) + "\n"


def study_markdown(res: StudyResult) -> str:
    parts = [f"# {res.title}\n", f"Paper: {res.paper}\n",
             f"Platforms: {res.platforms}\n",
             f"Level `{res.level}`, {res.seeds} seed(s) per configuration, {res.runs} runs"
             + (f" (and {res.resumed} taken from runs.jsonl)" if res.resumed else "")
             + f", {res.wall_s:.0f} s wall. Verdicts: {res.counts_line()}.\n"]
    if res.finding:
        parts += ["## Finding\n", res.finding.rstrip() + "\n"]
    if res.calibrations:
        parts.append("## Calibrated to the paper's stated conditions\n")
        parts.append("| what | value | the paper |\n|---|---|---|\n" + "\n".join(
            "| " + " | ".join(_md_cell(x) for x in c) + " |" for c in res.calibrations) + "\n")
    if res.sensitivity:
        parts.append("## Sensitivity to values the paper does not state\n")
        parts.append("| parameter | value | " + " | ".join(VERDICTS) + " |\n|---|---|" + "---|" * len(VERDICTS)
                     + "\n" + "\n".join(
                         f"| {s['parameter']} | {s['value']}{' (chosen)' if s.get('chosen') else ''} | "
                         + " | ".join(str(s['counts'].get(v, 0)) for v in VERDICTS) + " |"
                         for s in res.sensitivity) + "\n")
    parts += ["## Published numbers beside the simulation\n", rows_markdown(res.rows)]
    if res.plots:
        parts.append("## Plots\n")
        for name, caption in res.plots:
            parts.append(f"![{caption}]({name})\n\n*{caption}*\n")
    if res.notes:
        parts.append("## Notes, and where the simulation disagrees\n")
        parts.extend(n.rstrip() + "\n" for n in res.notes)
    return "\n".join(parts)


def run_times_csv(timings: Sequence[tuple[str, float, bool]]) -> str:
    """``STUDY.runs.csv``: each run the study used, with its wall time in its worker, the
    longest first: where a reproduction's time goes. ``resumed`` 1: the run was taken from
    OUT/runs.jsonl, and its time is the one it took when it ran."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["run", "wall_s", "resumed"])
    for label, wall, resumed in sorted(timings, key=lambda t: (-t[1], t[0])):
        w.writerow([label, f"{wall:.3f}", int(resumed)])
    return buf.getvalue()


def write_run_times(study: str, timings: Sequence[tuple[str, float, bool]], out_dir: Path) -> Path:
    """``OUT/STUDY.runs.csv`` (:func:`run_times_csv`)."""
    return _write_files(out_dir, {f"{study}.runs.csv": run_times_csv(timings)})[0]


def study_files(res: StudyResult) -> dict[str, str]:
    """A study's tables by file name: ``STUDY.csv``, ``STUDY.md`` and ``STUDY.json`` (what
    the HTML report reads)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(Row.CSV_FIELDS)
    for r in res.rows:
        w.writerow(["" if getattr(r, f) is None else getattr(r, f) for f in Row.CSV_FIELDS])
    doc = _finite(asdict(res))
    return {f"{res.study}.csv": buf.getvalue(), f"{res.study}.md": study_markdown(res),
            f"{res.study}.json": json.dumps(doc, indent=1, allow_nan=False, default=_json_default)}


def write_study(res: StudyResult, out_dir: Path) -> list[Path]:
    """``OUT/STUDY.csv``, ``OUT/STUDY.md`` and ``OUT/STUDY.json`` (:func:`study_files`),
    all or none (hetsched.outputs)."""
    return _write_files(out_dir, study_files(res))


def _write_files(out_dir: Path, files: dict[str, str]) -> list[Path]:
    """The files staged and renamed together: none is ever seen half-written."""
    with OutputSet(out_dir) as outs:
        for name, text in files.items():
            outs.write(name, text)
        return outs.commit()


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
    rows = []
    for r in doc.pop("rows"):
        row = Row(**r)
        if "magnitude" not in r:
            # written before the magnitude existed: weighed now, from its ratios and interval
            # (no noise: those builds had none), the verdict kept as it was written
            row.magnitude = judge_magnitude(row.paper_ratio, row.sim_ratio, row.change_lo, row.change_hi) \
                if row.verdict in _WITH_MAGNITUDE and row.paper is not None else None
        rows.append(row)
    doc["plots"] = [tuple(p) for p in doc.get("plots", [])]
    doc["calibrations"] = [tuple(c) for c in doc.get("calibrations", [])]
    return StudyResult(rows=rows, **doc)
