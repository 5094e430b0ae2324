"""Comparisons: several scheduler/governor cells on one platform, workload and seed set, and
per metric each cell's mean over the seeds with, against the first cell (the baseline), the
change and a test's p (the statistics are hetsched.compare_stats'). ``hetsched compare``
is this module's command line; docs/compare.md describes what it prints.

>>> c = run_comparison(schedulers=["cfs", "eas"], duration_s=1.0, seeds=3)   # doctest: +SKIP
>>> print(c.document("markdown"))                                             # doctest: +SKIP

A comparison has three steps, which the command line takes apart to show a progress bar
around the runs alone: :func:`plan_comparison` checks the options and builds every cell
before the first long run, :meth:`ComparisonPlan.run` runs them, and
:meth:`ComparisonPlan.summarize` makes the :class:`Comparison`: the summary, the lines
printed above and below it, and the documents and files it is written as.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from hetsched import _input
from hetsched.compare_stats import DEFAULT_TEST, TESTS, WILCOXON_MIN_SEEDS, achieved_levels, legend
from hetsched.errors import InputError, UnknownNameError
from hetsched.metric_names import COMPARE_DEFAULT, COMPARE_METRICS, metric_label, metric_unit

__all__ = ["DEFAULT_PLATFORM", "DEFAULT_WORKLOAD", "DOCUMENT_FORMATS", "TESTS", "DEFAULT_TEST", "ComparisonPlan",
           "Comparison", "plan_comparison", "run_comparison", "metric_keys", "summarize_groups", "significant",
           "format_mean", "format_change", "FILES"]

DEFAULT_PLATFORM = "gs101"
DEFAULT_WORKLOAD = "phone-mix"
#: the documents a comparison is written as (the command line's table is drawn by rich)
DOCUMENT_FORMATS = ("csv", "json", "markdown")
#: what a comparison writes into an output directory
FILES = ("compare.csv", "compare.json")

#: the fair class as compare's lines name it, and the fair.eevdf value that selects it
_FAIR_CLASSES = {"cfs": ("CFS v6.5", 0), "eevdf": ("EEVDF v6.12", 1)}


# ----------------------------------------------------------------------------- the statistics

def metric_keys(df, workload: Sequence[str], asked: Sequence[str]) -> list[str]:
    """The metrics compare shows: those asked for (`all`: every one every run reported),
    else the defaults and the workloads' headline figures (all of a workload's own metrics
    when it names no headline, as an rt-app file's)."""
    from hetsched.workloads.builtin import headline_metrics

    engine = [k for k, *_ in COMPARE_METRICS]
    own = [k for k in df.columns if "." in k and k not in engine and df[k].notna().all()]
    available = engine + own
    if asked:
        if "all" in asked:
            return available
        for k in asked:
            if k not in available:
                raise UnknownNameError("--metric", "metric", k, [*available, "all"])
        return list(dict.fromkeys(asked))
    headline = [k for k in headline_metrics(workload) if k in own]
    named = {k.partition(".")[0] for k in headline}
    rest = [k for k in own if k.partition(".")[0] not in named] if not headline else []
    return [*COMPARE_DEFAULT, *headline, *rest]


def summarize_groups(groups: dict, cols: list[str], keys: list[str], test: str = DEFAULT_TEST) -> list[dict]:
    """compare's statistics (hetsched.compare_stats.summary): per metric and configuration
    the mean and its 95 % CI; against the baseline the change, its interval and ``test``'s p."""
    from hetsched import compare_stats

    return compare_stats.summary(groups, cols, keys, test, unit=metric_unit)


# ----------------------------------------------------------------------------- like with like

def _fair_label(fair: str) -> str:
    name, knob = _FAIR_CLASSES.get(fair, (fair, None))
    return name if knob is None else f"{name} (fair.eevdf = {knob})"


def _cell_setup(sp) -> dict:
    """A cell's kernel profile and fair class as the engine builds its run (a simulation
    built and read at time 0), whether the user set the class (fair.eevdf 0 or 1 in --set
    or the cell's knobs) and the class the scheduler requires (its registry line)."""
    from hetsched.sim import registered_policies

    sim = sp.simulation()
    fair = sim.result().doc["policy"]["fair_class"]
    required = {p["name"]: p["fair"] for p in registered_policies()}.get(sp.scheduler)
    return {"kernel": sim.kernel, "fair_class": fair, "fair_set": float(sim.knob_values().get("fair.eevdf", -1)) >= 0,
            "requires": required[0] if required else None, "scheduler": sp.scheduler}


def _align_fair_class(cols: list[str], setups: list[dict]) -> tuple[dict[int, str], list[str]]:
    """The cells to run another fair class ({index: class}) so that every cell runs the
    same one, and compare's lines on the cells' kernel profiles and fair classes. Cells
    differing only because a scheduler requires a class (fa-cfs: CFS) and the others follow
    the kernel profile's are aligned to the required class; cells the user set apart (an
    explicit fair.eevdf, a cell's own kernel=...) or requiring different classes are not,
    and the lines say which runs what."""
    kernels = [st["kernel"] for st in setups]
    classes = [st["fair_class"] for st in setups]
    lines = []
    if len(set(kernels)) > 1:
        lines.append("kernel profile: the cells run different kernel profiles: "
                     + ", ".join(f"{c} {k}" for c, k in zip(cols, kernels)))
    if len(set(classes)) == 1:
        return {}, lines
    required = {st["requires"] for st in setups if st["requires"]}
    if len(set(kernels)) == 1 and len(required) == 1:
        want = required.pop()
        if all(st["fair_class"] == want for st in setups if st["fair_set"]):
            moved = {i: want for i, st in enumerate(setups) if st["fair_class"] != want}
            needs = list(dict.fromkeys(st["scheduler"] for st in setups if st["requires"] == want))
            other = _FAIR_CLASSES.get(classes[next(iter(moved))], (classes[next(iter(moved))],))[0]
            lines.append(f"fair class: every cell runs {_fair_label(want)}, the class {' and '.join(needs)} "
                         f"require{'s' if len(needs) == 1 else ''}; {', '.join(cols[i] for i in moved)} would run "
                         f"{other} under {kernels[0]} (set fair.eevdf in a cell to keep it apart)")
            return moved, lines

    def why(st: dict) -> str:
        if st["fair_set"]:
            return " (fair.eevdf set)"
        if st["requires"]:
            return f" (required by {st['scheduler']})"
        return f" ({st['kernel']}'s)"

    lines.append("fair class: the cells run different fair classes: "
                 + ", ".join(f"{c} {_FAIR_CLASSES.get(st['fair_class'], (st['fair_class'],))[0]}{why(st)}"
                             for c, st in zip(cols, setups)))
    return {}, lines


def _shared(values: list):
    """The one value every cell has, else None."""
    return values[0] if len(set(values)) == 1 else None


# ----------------------------------------------------------------------------- the runs

def _metric(flat: dict, key: str) -> float | None:
    """A metric of compare's table from a run's flat result: the run's own numbers and the
    engine's metrics under their names, else the counter of that name."""
    if key in flat:
        return flat[key]
    return flat.get(f"counters.{key}")


def _silent_notes(cols: list[str], cells: list, specs: list, results: list[dict]) -> list[str]:
    """A line per configuration whose every run equals the baseline's of the same seed,
    and per configuration and mechanism that never acted in any of its runs (its seeds):
    the table's "+0.0 %" comes from that."""
    from hetsched.runner import SILENT_MECHANISMS

    runs: dict[tuple, dict[int, dict]] = {}
    for sp, flat in zip(specs, results):
        runs.setdefault((sp.cell, sp.governor), {})[sp.seed] = flat
    # equal to the last digit: its mechanism, whatever its counters say it did, changed no
    # decision that mattered
    same_keys = ("energy_j", "counters.context_switches", "counters.migrations", "counters.freq_changes")
    base = runs.get(cells[0], {})
    notes = []
    for col, cell in zip(cols[1:], cells[1:]):
        mine = runs.get(cell, {})
        if mine and mine.keys() == base.keys() and all(
                all(mine[seed].get(k) == base[seed].get(k) for k in same_keys) for seed in mine):
            notes.append(f"{col}: every run equals {cols[0]}'s of the same seed in energy, context switches, "
                         f"migrations and frequency changes: its mechanism left this workload's outcome as "
                         f"it was")
    for col, cell in zip(cols, cells):
        lines = [(flat.get(SILENT_MECHANISMS) or "").splitlines() for _, flat in sorted(runs.get(cell, {}).items())]
        if not lines:
            continue
        for line in lines[0]:
            name = line.split(":", 1)[0]
            if all(any(other.split(":", 1)[0] == name for other in r) for r in lines[1:]):
                where = f"in all {len(lines)} runs; seed 0: " if len(lines) > 1 else ""
                notes.append(f"{col}: {where}{line}")
    return notes


def _run_row(spec, flat: dict, setup: dict | None = None) -> dict:
    row = {"scheduler": spec.cell, "governor": spec.governor, "seed": spec.seed, "power_model": flat["power_model"],
           "idle_power_model": flat["idle_power_model"]}
    if setup is not None:  # the kernel profile and fair class the cell's runs were built with
        row.update(kernel=setup["kernel"], fair_class=setup["fair_class"])
    for key, *_ in COMPARE_METRICS:
        row[key] = _metric(flat, key)
    # each workload's own scalar metrics, KEY.name (the engine's metrics have no dot)
    row.update((k, v) for k, v in flat.items() if "." in k and not k.startswith("counters."))
    return row


@dataclass
class ComparisonPlan:
    """A comparison's cells, checked and built, and its runs: each cell on the seeds
    0..seeds-1, cells apart only by a scheduler's required fair class aligned to it."""

    platform: str
    workload: list[str]
    duration_s: float
    seeds: int
    test: str
    metrics: list[str]
    cells: list[tuple[str, str]]  # (scheduler cell, governor)
    cols: list[str]  # "cell/governor", the summary's and the table's names of the cells
    setups: list[dict]  # per cell: kernel profile, fair class and where the class came from
    setup_lines: list[str]  # what the kernel profiles and fair classes are, above the table
    specs: list  # the runs, cell by cell, seed by seed

    def run(self, jobs: int | None = 1, ray: str | None = None,
            on_result: Callable[[Any, dict], None] | None = None) -> list[dict]:
        """Every run's flat result, in :attr:`specs`' order, on ``jobs`` worker processes
        (None: one per CPU; 1: in this process) or the Ray cluster at ``ray``;
        ``on_result(spec, result)`` as each ends."""
        import importlib
        import threading

        from hetsched.runner import Runner

        # the summary's statistics need scipy.stats, whose import takes about a second: it
        # runs on another thread while the engine, which releases the GIL, simulates the cells
        threading.Thread(target=importlib.import_module, args=("scipy.stats",), daemon=True).start()
        with Runner(jobs, ray=ray) as runner:
            return runner.run(self.specs, on_result=on_result)

    def summarize(self, results: list[dict]) -> Comparison:
        """The comparison of :meth:`run`'s results."""
        import pandas as pd

        cell_of = {(s, g): i for i, (s, g) in enumerate(self.cells)}
        rows = [_run_row(sp, flat, self.setups[cell_of[sp.cell, sp.governor]])
                for sp, flat in zip(self.specs, results)]
        df = pd.DataFrame(rows)
        groups = {c: df[(df.scheduler == s) & (df.governor == g)] for c, (s, g) in zip(self.cols, self.cells)}
        keys = metric_keys(df, self.workload, self.metrics)
        summary = _cell_summary(self, groups, keys)
        kernel = _shared([st["kernel"] for st in self.setups])
        fair = _shared([st["fair_class"] for st in self.setups])
        title = (f"{self.platform} | {' + '.join(self.workload)} | {self.duration_s:g} s x {self.seeds} seeds "
                 f"| kernel {kernel or 'per cell'}, fair class "
                 f"{_FAIR_CLASSES[fair][0] if fair in _FAIR_CLASSES else fair or 'per cell'} "
                 f"| power model: {df.power_model.iloc[0]}, idle power: {df.idle_power_model.iloc[0]}")
        said = legend(self.cols[0], self.test, achieved_levels(summary)) if self.seeds > 1 else (
            f"baseline {self.cols[0]}; one seed: no interval and no test (--seeds 2 or more for them)")
        return Comparison(plan=self, keys=keys, summary=summary, title=title, legend=said,
                          notes=_silent_notes(self.cols, self.cells, self.specs, results), rows=rows, runs=df,
                          groups=groups, kernel=kernel, fair_class=fair)


def _cell_summary(plan: ComparisonPlan, groups: dict, keys: list[str]) -> list[dict]:
    # each entry names its cell's kernel profile and fair class (the CSV's columns)
    by_cell = dict(zip(plan.cols, plan.setups))
    return [{**e, "kernel": by_cell[e["cell"]]["kernel"], "fair_class": by_cell[e["cell"]]["fair_class"]}
            for e in summarize_groups(groups, plan.cols, keys, plan.test)]


def plan_comparison(platform: str = DEFAULT_PLATFORM, workload: Sequence[str] = (DEFAULT_WORKLOAD,),
                    schedulers: Sequence[str] = (), governors: Sequence[str] = (), idle_governor: str = "menu",
                    knobs: Mapping[str, Any] | Iterable[str] = (), duration_s: float = 5.0, seeds: int = 3,
                    metrics: Sequence[str] = (), test: str = DEFAULT_TEST) -> ComparisonPlan:
    """Check a comparison's options and build every cell (each is validated, and its kernel
    profile and fair class read, before the first long run).

    ``schedulers``: cells, each a registered name, ``NAME[knob=v,...]`` (that scheduler with
    its own knobs, which win over ``knobs``) or ``FILE.py:CLASS``; none: every registered
    scheduler (the switcher's own on a big.LITTLE switcher platform). ``governors``: none,
    schedutil (ondemand on a switcher platform). ``knobs``: for every cell, a mapping or
    ``knob=value`` strings as ``--set`` takes them. ``metrics``: metric keys, or ``all``;
    none, the defaults and the workloads' headline figures. ``test``: a key of
    :data:`TESTS`."""
    # a bare name is one name (a str is a Sequence of its characters)
    workload, schedulers, governors, metrics = (
        [x] if isinstance(x, str) else list(x) for x in (workload, schedulers, governors, metrics))
    _input.duration_s(duration_s)
    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
        raise InputError("--seeds", "seeds", "a whole number of runs per cell, 1 or more", got=seeds)
    if test not in TESTS:
        raise UnknownNameError("--test", "test", test, TESTS)
    if test == "wilcoxon" and seeds < WILCOXON_MIN_SEEDS:
        raise InputError("--test", "wilcoxon", f"--seeds {WILCOXON_MIN_SEEDS} or more (with {seeds} pairs the "
                         f"signed-rank test's smallest two-sided p is {2 / 2 ** seeds:.3g}, it cannot mark a "
                         f"difference at 0.05; --test paired-t does)", got=seeds)
    engine_metrics = [k for k, *_ in COMPARE_METRICS]
    for k in metrics:  # the engine's before any run; a workload's own (NAME.metric) once they report
        if "." not in k and k not in (*engine_metrics, "all"):
            raise UnknownNameError("--metric", "metric", k, [*engine_metrics, "all"])
    from hetsched.platforms import load_platform
    from hetsched.runner import RunSpec
    from hetsched.sim import SCHEDULERS, SWITCHER_SCHEDULERS

    # the big.LITTLE switcher study (Kim et al.): a switcher platform runs its own schedulers
    # under ondemand, others the rest
    sw = load_platform(platform).switcher
    scheds = list(schedulers) or [s for s in SCHEDULERS if (s in SWITCHER_SCHEDULERS) == sw]
    govs = list(governors) or (["ondemand"] if sw else ["schedutil"])
    cells = [(s, g) for s in scheds for g in govs]
    # parsed after the platform is loaded: given a bad --platform and a bad --set, the platform is named
    knobs = dict(knobs) if isinstance(knobs, Mapping) else _input.knob_settings(knobs)

    def spec(cell: str, gov: str, seed: int) -> RunSpec:
        # a scheduler cell may carry its own knobs, which win: eas[vendor.task_packing=1]
        return RunSpec.from_cell(cell, knobs=knobs, platform=platform, workload=tuple(workload), governor=gov,
                                 idle_governor=idle_governor, seed=seed, duration_s=duration_s)

    cols = [f"{s}/{g}" for s, g in cells]
    # validate every cell before the first long run, reading the kernel profile and fair
    # class it builds; cells apart only by a scheduler's required class run that class
    setups = [_cell_setup(spec(s, g, 0)) for s, g in cells]
    moved, setup_lines = _align_fair_class(cols, setups)
    aligned = {i: {"fair.eevdf": str(_FAIR_CLASSES[c][1])} for i, c in moved.items()}

    def cell_spec(i: int, seed: int) -> RunSpec:
        sp = spec(*cells[i], seed)
        return dataclasses.replace(sp, knobs={**dict(sp.knobs), **aligned[i]}) if i in aligned else sp

    for i in moved:  # built again, so checked, and its class read from the engine
        setups[i] = {**_cell_setup(cell_spec(i, 0)), "aligned": True}
    specs = [cell_spec(i, seed) for i in range(len(cells)) for seed in range(seeds)]
    return ComparisonPlan(platform=platform, workload=workload, duration_s=duration_s, seeds=seeds, test=test,
                          metrics=list(metrics), cells=cells, cols=cols, setups=setups, setup_lines=setup_lines,
                          specs=specs)


def run_comparison(platform: str = DEFAULT_PLATFORM, workload: Sequence[str] = (DEFAULT_WORKLOAD,),
                   schedulers: Sequence[str] = (), governors: Sequence[str] = (), idle_governor: str = "menu",
                   knobs: Mapping[str, Any] | Iterable[str] = (), duration_s: float = 5.0, seeds: int = 3,
                   metrics: Sequence[str] = (), test: str = DEFAULT_TEST, jobs: int | None = 1,
                   ray: str | None = None, on_result: Callable[[Any, dict], None] | None = None) -> Comparison:
    """A comparison planned (:func:`plan_comparison`), run and summarized at once."""
    plan = plan_comparison(platform, workload, schedulers, governors, idle_governor, knobs, duration_s, seeds,
                           metrics, test)
    return plan.summarize(plan.run(jobs=jobs, ray=ray, on_result=on_result))


# ----------------------------------------------------------------------------- the result

@dataclass
class Comparison:
    """A comparison's outcome: per metric (:attr:`keys`) and cell the summary's entry, the
    title, the cells' setup lines and the legend printed above it and the notes below."""

    plan: ComparisonPlan
    keys: list[str]  # the metrics shown
    summary: list[dict]  # per metric and cell: compare_stats.summary's entry, its kernel and fair class
    title: str
    legend: str
    notes: list[str]  # cells that equal the baseline, mechanisms that never acted
    rows: list[dict]  # one a run
    runs: Any  # rows as a pandas DataFrame
    groups: dict  # each cell's rows
    kernel: str | None = None  # every cell's, else None
    fair_class: str | None = None

    @property
    def cols(self) -> list[str]:
        return self.plan.cols

    @property
    def setup_lines(self) -> list[str]:
        return self.plan.setup_lines

    def head(self) -> dict:
        """The JSON documents' fields before the summary."""
        p, test = self.plan, self.plan.test
        return {"platform": p.platform, "workload": p.workload, "duration_s": p.duration_s, "seeds": p.seeds,
                "kernel": self.kernel, "fair_class": self.fair_class,
                "cells": [{"cell": c, "kernel": st["kernel"], "fair_class": st["fair_class"],
                           "fair_class_from": "aligned" if st.get("aligned") else "set" if st["fair_set"]
                           else "scheduler" if st["requires"] else "kernel profile"}
                          for c, st in zip(p.cols, p.setups)],
                "setup": p.setup_lines, "baseline": p.cols[0], "interval": "95 % CI of the mean (Student's t)",
                "test": f"{TESTS[test][0]} against the baseline", "test_name": test,
                "change_interval": f"95 % interval of the change ({TESTS[test][1]}), relative to the "
                                   f"baseline's mean (rel_change_ci95)" if test != "wilcoxon" else
                                   f"Hodges-Lehmann estimate of the change (rel_change_hl) and its "
                                   f"distribution-free 95 % interval (rel_change_ci_low, rel_change_ci_high) "
                                   f"from the Walsh averages of the per-seed differences, relative to the "
                                   f"baseline's mean; the interval's achieved confidence is rel_change_ci_level"}

    def document(self, format: str) -> str:
        """The summary as CSV (one row a metric and configuration), JSON, or a Markdown
        table (metrics as rows, configurations as columns)."""
        import json

        summary, cols, keys = self.summary, self.cols, self.keys
        if format == "json":
            return json.dumps({**self.head(), "summary": summary, "notes": self.notes}, indent=1) + "\n"
        if format == "csv":
            import csv
            import io

            f = io.StringIO()
            w = csv.DictWriter(f, fieldnames=list(summary[0]), lineterminator="\n")
            w.writeheader()
            w.writerows(summary)
            return f.getvalue()
        if format != "markdown":
            raise UnknownNameError("--format", "format", format, DOCUMENT_FORMATS)
        by = {(e["metric"], e["cell"]): e for e in summary}

        def cell(text: str) -> str:
            return text.replace("|", "\\|")

        lines = [f"**{cell(self.title)}**", "", *(x for line in self.setup_lines for x in (cell(line), "")),
                 cell(self.legend), "",
                 "| metric | " + " | ".join(cell(c) for c in cols) + " |",
                 "|---|" + "---:|" * len(cols)]
        for k in keys:
            vals = [format_mean(by[k, c]) + (f" ({format_change(by[k, c])})" if format_change(by[k, c]) else "")
                    for c in cols]
            lines.append(f"| {cell(metric_label(k))} | " + " | ".join(cell(v) for v in vals) + " |")
        return "\n".join(lines) + "\n"

    def files(self) -> dict[str, str]:
        """The files of an output directory (:data:`FILES`): every run's row, and every
        metric's summary with the runs."""
        import json

        everything = _cell_summary(self.plan, self.groups, metric_keys(self.runs, self.plan.workload, ["all"]))
        return {"compare.csv": self.runs.to_csv(index=False),
                "compare.json": json.dumps({**self.head(), "summary": everything, "notes": self.notes,
                                            "runs": self.rows}, indent=1) + "\n"}


# ----------------------------------------------------------------------------- numbers as text

def significant(x: float, digits: int) -> str:
    """``x`` to about ``digits`` significant digits, without an exponent unless it is very
    large or small (a CI of 100 reads "100", not "1e+02")."""
    import math

    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    mag = math.floor(math.log10(abs(x)))
    if mag >= 6 or mag < -3:
        return f"{x:.{digits}g}"
    return f"{x:.{max(0, digits - 1 - mag)}f}"


def format_mean(e: dict) -> str:
    """A summary entry's mean and the half-width of its 95 % CI."""
    return significant(e["mean"], 4) + (f" ±{significant(e['ci95'], 2)}" if e["ci95"] is not None else "")


def format_change(e: dict) -> str:
    """A summary entry's change against the baseline, its interval and significance stars;
    empty for the baseline."""
    if "rel_change_hl" in e:  # --test wilcoxon: Hodges-Lehmann's estimate and interval, not symmetric
        if e["rel_change_hl"] is None:
            return ""
        lo, hi, level = e["rel_change_ci_low"], e["rel_change_ci_high"], e["rel_change_ci_level"]
        # an interval short of 95 % (fewer than 6 nonzero differences) says so where it stands
        short = f" at {level * 100:.1f}%" if level is not None and level < 0.95 else ""
        return (f"{e['rel_change_hl'] * 100:+.1f}%"
                + (f" [{lo * 100:+.1f}, {hi * 100:+.1f}]{short}" if lo is not None else "")
                + (f" {e['significance']}" if e["significance"] else ""))
    if e["rel_change_vs_first"] is None:
        return ""
    half = e.get("rel_change_ci95")
    return (f"{e['rel_change_vs_first'] * 100:+.1f}%" + (f" ±{half * 100:.1f}" if half is not None else "")
            + (f" {e['significance']}" if e["significance"] else ""))
