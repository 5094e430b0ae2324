"""Parameter sweeps: a grid of platforms, workloads, schedulers, governors, knob values and
seeds, run on a local process pool or a Ray cluster, one row per run in a Parquet file.

>>> grid = load_grid("grid.yaml")                      # doctest: +SKIP
>>> run_sweep(grid, Path("out"), workers=2)            # doctest: +SKIP
>>> pd.read_parquet("out/sweep.parquet")               # doctest: +SKIP

``hetsched sweep`` is :func:`plan_sweep` (its options and the grid checked before anything
runs or is written), :meth:`SweepPlan.run` under a progress bar, and the plan's lines.

The grid file (YAML; every key optional)::

    platforms: [gs101, juno-r0]            # names or platform JSON paths
    workloads: [phone-mix, [periodic:n=4, hackbench]]   # an item that is a list runs together
    schedulers: [cfs, eas, "eas[vendor.task_packing=1]"]
    governors: [schedutil, ondemand]
    idle_governors: [menu]
    knobs: {schedutil.rate_limit_us: [500, 2000]}       # the product of the value lists
    seeds: 3                               # 0, 1, 2; or a list: [0, 7]
    duration: 2.0                          # simulated seconds; null: the workload's own, else 10

Every cell is keyed by :func:`cell_hash`, a hash of its effective configuration; the file
``OUT/sweep.parquet`` holds one row per cell hash, is rewritten whole under a temporary
name and renamed (atomic: a reader, or a killed sweep, sees the previous complete file or
the new one), and ``resume`` skips every hash already in it.  See docs/sweeps.md.
"""

from __future__ import annotations

import itertools
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from hetsched import _input
from hetsched.errors import HetschedError, InputError, UnknownNameError
from hetsched.runner import (FIXED_COLUMNS, Runner, RunSpec, RunStore, _is_path, error_row, parse_cell, relative_to,
                             run_hash, run_row)
from hetsched.runner import read_rows as _read_rows

__all__ = ["Grid", "Cell", "load_grid", "cell_hash", "run_cell", "RowStore", "run_sweep", "read_rows",
           "SweepPlan", "SweepStats", "plan_sweep", "SWEEP_FILE", "GRID_KEYS", "FIXED_COLUMNS", "error_row"]

SWEEP_FILE = "sweep.parquet"
#: The most cells a grid may have: each is a run and a row held in memory and rewritten
#: with sweep.parquet at every flush (a million rows is already about a GB in memory);
#: a grid beyond this is a typo (``seeds: 1e9``), refused before the product is made.
MAX_CELLS = 1_000_000
GRID_KEYS = ("platforms", "workloads", "schedulers", "governors", "idle_governors", "knobs", "seeds",
             "duration")
CONFIG_COLUMNS = ("cell_hash", "platform", "workload", "scheduler", "governor", "idle_governor", "seed",
                  "duration_s", "knobs")

# A cell is one run of the runner: its hash is the run's (hetsched.runner.run_hash of the
# effective configuration), its label the grid's scheduler as written.
Cell = RunSpec
cell_hash = run_hash


# ----------------------------------------------------------------------------- the grid

@dataclass
class Grid:
    source: str
    platforms: list[str]
    workloads: list[tuple[str, ...]]
    schedulers: list[str]
    governors: list[str]
    idle_governors: list[str]
    knobs: dict[str, list[Any]]
    seeds: list[int]
    duration_s: float | None
    base_dir: str = "."

    def cells(self) -> list[RunSpec]:
        """Every cell of the product, in grid order, each configuration once."""
        names = list(self.knobs)
        seen: dict[str, Cell] = {}
        for p, w, s, g, ig in itertools.product(self.platforms, self.workloads, self.schedulers, self.governors,
                                                self.idle_governors):
            for values in itertools.product(*(self.knobs[n] for n in names)):
                for seed in self.seeds:
                    c = RunSpec.from_cell(s, knobs=dict(zip(names, values)), source=self.source, field_="schedulers",
                                          platform=p, workload=w, governor=g, idle_governor=ig, seed=seed,
                                          duration_s=self.duration_s, base_dir=self.base_dir)
                    seen.setdefault(c.hash, c)
        return list(seen.values())


def _str_list(doc: dict, key: str, src: str, default: list) -> list[str]:
    val = doc.get(key, default)
    if isinstance(val, str):
        val = [val]
    if not isinstance(val, list) or not val or not all(isinstance(v, str) and v.strip() for v in val):
        raise InputError(src, key, "a non-empty list of names", got=val)
    return [v.strip() for v in val]


def _rebased(e: HetschedError, src: str, field_: str) -> InputError:
    """An error of a loader, re-addressed to the grid file and key."""
    if isinstance(e, InputError):
        inner = e.field if e.field not in ("--workload", "--platform", "platform", "workload") else ""
        return InputError(src, f"{field_}: {inner}" if inner else field_, e.expected, got=e.got)
    return InputError(src, field_, f"a usable value ({e})")


def _check_knob(src: str, name: str, value: Any, where: str = "knobs") -> None:
    from hetsched.sim import HOTPLUG_POLICIES, KERNEL_PROFILES, _check_knobs, knob_table

    if isinstance(value, bool) or value is None or isinstance(value, (list, dict)):
        raise InputError(src, f"knobs.{name}", "a list of numbers (or names for kernel, hotplug)", got=value)
    if name == "kernel":
        if str(value) not in KERNEL_PROFILES:
            raise UnknownNameError(src, "knobs.kernel", str(value), KERNEL_PROFILES)
        return
    if name == "hotplug":
        if str(value).strip().lower() not in HOTPLUG_POLICIES:
            raise UnknownNameError(src, "knobs.hotplug", str(value), HOTPLUG_POLICIES)
        return
    if name not in {k["name"] for k in knob_table()}:
        raise UnknownNameError(src, where, name, [k["name"] for k in knob_table()] + ["kernel", "hotplug"])
    try:
        _check_knobs({name: value}, src)
    except InputError as e:
        raise InputError(src, f"knobs.{name}", e.expected, got=value) from None


def load_grid(path: str | os.PathLike) -> Grid:
    """Read and validate a grid file; every error names the file, the key and what was
    expected (an :class:`InputError`)."""
    from hetsched.platforms import load_platform
    from hetsched.sim import GOVERNORS, IDLE_GOVERNORS, SCHEDULERS
    from hetsched.workloads.builtin import resolve_workloads

    src = str(path)
    # size, encoding (UTF-8, the byte offset of a bad one), nesting and syntax (_input.py)
    doc = _input.parse_yaml(_input.read_text(path, src, "YAML grid file"), src)
    if not isinstance(doc, dict):
        raise InputError(src, "top level", "a mapping with keys " + ", ".join(GRID_KEYS), got=doc)
    for k in doc:
        if k not in GRID_KEYS:
            raise UnknownNameError(src, "key", str(k), GRID_KEYS)
    base_dir = str(Path(path).resolve().parent)

    platforms = _str_list(doc, "platforms", src, ["gs101"])
    specs = []
    for i, p in enumerate(platforms):
        try:
            specs.append(load_platform(str(Path(base_dir) / p) if _is_path(p) and not os.path.isabs(p) else p)
                         .to_spec())
        except HetschedError as e:
            raise _rebased(e, src, f"platforms[{i}]") from None

    raw = doc.get("workloads", ["phone-mix"])
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not raw:
        raise InputError(src, "workloads", "a non-empty list of workloads (NAME[:k=v,...], an rt-app file, "
                         "or a list of those to run together)", got=raw)
    workloads = []
    for i, w in enumerate(raw):
        items = [w] if isinstance(w, str) else w
        if not isinstance(items, list) or not items or not all(isinstance(x, str) and x.strip() for x in items):
            raise InputError(src, f"workloads[{i}]", "NAME[:k=v,...], an rt-app file, or a list of those", got=w)
        items = tuple(x.strip() for x in items)
        resolved = [relative_to(base_dir, x) for x in items]
        for spec in specs:
            try:
                resolve_workloads(resolved, spec, 0)
            except HetschedError as e:
                raise _rebased(e, src, f"workloads[{i}]") from None
        workloads.append(items)

    schedulers = _str_list(doc, "schedulers", src, ["cfs"])
    for i, s in enumerate(schedulers):
        name, own = parse_cell(s, src, f"schedulers[{i}]")
        if name not in SCHEDULERS:
            raise UnknownNameError(src, f"schedulers[{i}]", name, SCHEDULERS)
        for k, v in own.items():
            _check_knob(src, k, v, f"schedulers[{i}]")
    governors = _str_list(doc, "governors", src, ["schedutil"])
    for i, g in enumerate(governors):
        if g not in GOVERNORS:
            raise UnknownNameError(src, f"governors[{i}]", g, GOVERNORS)
    idle = _str_list(doc, "idle_governors", src, ["menu"])
    for i, g in enumerate(idle):
        if g not in IDLE_GOVERNORS:
            raise UnknownNameError(src, f"idle_governors[{i}]", g, IDLE_GOVERNORS)

    knobs_doc = doc.get("knobs") or {}
    if not isinstance(knobs_doc, dict):
        raise InputError(src, "knobs", "a mapping knob name: list of values", got=knobs_doc)
    knobs: dict[str, list] = {}
    for name, values in knobs_doc.items():
        if not isinstance(name, str):
            raise InputError(src, "knobs", "knob names (text)", got=name)
        if not isinstance(values, list):
            values = [values]
        if not values:
            raise InputError(src, f"knobs.{name}", "a non-empty list of values", got=values)
        for v in values:
            _check_knob(src, str(name), v)
        knobs[str(name)] = values

    seeds_doc = doc.get("seeds", [0])
    if isinstance(seeds_doc, int) and not isinstance(seeds_doc, bool):
        if not 1 <= seeds_doc <= MAX_CELLS:
            raise InputError(src, "seeds", f"a count N in [1, {MAX_CELLS}] (seeds 0..N-1) or a list of seeds",
                             got=seeds_doc)
        seeds = list(range(seeds_doc))
    elif (isinstance(seeds_doc, list) and seeds_doc
          and all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s <= _input.MAX_SEED for s in seeds_doc)):
        seeds = list(dict.fromkeys(seeds_doc))
    else:
        raise InputError(src, "seeds", "a positive count N (seeds 0..N-1) or a list of non-negative integers "
                                       "(at most 2**63 - 1)", got=seeds_doc)

    dur = doc.get("duration")
    if dur is not None:
        dur = _input.duration_s(dur, src, "duration")

    n_cells = len(platforms) * len(workloads) * len(schedulers) * len(governors) * len(idle) * len(seeds)
    for values in knobs.values():
        n_cells *= len(values)
    if n_cells > MAX_CELLS:
        raise InputError(src, "(the product of the lists)", f"at most {MAX_CELLS} cells", got=n_cells)
    return Grid(src, platforms, workloads, schedulers, governors, idle, knobs, seeds, dur, base_dir)


# ----------------------------------------------------------------------------- the rows

def run_cell(cell: RunSpec) -> dict:
    """Run one cell here; its row (:func:`hetsched.runner.run_row`). Any exception becomes
    the row's ``error`` (never raised)."""
    return run_row(cell)


def read_rows(out_dir: str | os.PathLike) -> list[dict]:
    """The rows of ``OUT/sweep.parquet`` (none if it does not exist)."""
    return _read_rows(out_dir, SWEEP_FILE)


class RowStore(RunStore):
    """The rows of a sweep, one per cell hash, kept in ``OUT/sweep.parquet``: the runner's
    store (:class:`hetsched.runner.RunStore`) under the sweep's file name. Its first write
    removes the plots drawn from the rows of an earlier one (``--resume``)."""

    def __init__(self, out_dir: str | os.PathLike, resume: bool):
        super().__init__(out_dir, file=SWEEP_FILE, resume=resume, replaces=("plots/sweep_*", "plots/sweep.html"))


# ----------------------------------------------------------------------------- the sweep

@dataclass
class SweepStats:
    total: int
    done: int = 0           # cells with a row without error (from before or now)
    failed: int = 0         # cells with an error row
    skipped: int = 0        # cells found in sweep.parquet, not run again
    ran: int = 0            # cells run now
    wall_s: float = 0.0
    executor: str = ""

    @property
    def remaining(self) -> int:
        return self.total - self.done - self.failed

    @property
    def runs_per_s(self) -> float:
        return self.ran / self.wall_s if self.wall_s > 0 else 0.0


def run_sweep(grid: Grid, out_dir: str | os.PathLike, *, workers: int | None = None, ray_address: str | None = None,
              resume: bool = False, retry_failed: bool = False, flush_every_s: float = 2.0,
              on_progress: Callable[[SweepStats], None] | None = None) -> SweepStats:
    """Run every cell of ``grid`` not yet in ``OUT/sweep.parquet``; the rows are written
    every ``flush_every_s`` seconds (at least 10 times as long as the last write took,
    so that rewriting a large file never dominates) and at the end, also when interrupted."""
    store = RowStore(out_dir, resume)
    store.remove_stale_temporaries()
    cells = grid.cells()
    # every cell in a worker process, even with one worker: a cell that kills its process
    # is recorded as failed and the sweep goes on
    runner = Runner(workers or os.cpu_count() or 1, ray=ray_address, store=store, rows=True, isolate=True,
                    retry_failed=retry_failed, flush_every_s=flush_every_s)
    todo = runner.pending(cells)
    hashes = {c.hash for c in cells}
    stats = SweepStats(total=len(cells))
    stats.done = len(store.done() & hashes)
    stats.failed = len(store.failed() & hashes) if not retry_failed else 0
    stats.skipped = len(cells) - len(todo)
    stats.executor = runner.description
    if on_progress:
        on_progress(stats)
    t0 = time.perf_counter()
    gen = runner.stream(todo)
    try:
        for _cell, row in gen:
            stats.ran += 1
            if row.get("error") is None:
                stats.done += 1
            else:
                stats.failed += 1
            if on_progress:
                on_progress(stats)
    finally:
        stats.wall_s = time.perf_counter() - t0
        gen.close()
        runner.close()
    return stats


# ----------------------------------------------------------------------------- the command's steps

@dataclass
class SweepPlan:
    """A sweep whose options and grid are checked, nothing run or written yet: what
    ``hetsched sweep`` runs under its progress bar, and the lines it prints of it."""
    grid: Grid
    out_dir: Path
    workers: int | None = None
    ray_address: str | None = None
    resume: bool = False
    retry_failed: bool = False
    flush_every_s: float = 2.0
    total: int = field(init=False)  # the grid's cells, each configuration once

    def __post_init__(self) -> None:
        self.out_dir = Path(self.out_dir)
        self.total = len(self.grid.cells())

    @property
    def path(self) -> Path:
        """The rows' file, ``OUT/sweep.parquet``."""
        return self.out_dir / SWEEP_FILE

    def run(self, on_progress: Callable[[SweepStats], None] | None = None) -> SweepStats:
        """:func:`run_sweep` with the plan's options."""
        return run_sweep(self.grid, self.out_dir, workers=self.workers, ray_address=self.ray_address,
                         resume=self.resume, retry_failed=self.retry_failed, flush_every_s=self.flush_every_s,
                         on_progress=on_progress)

    def summary(self, st: SweepStats) -> str:
        """The line of a finished sweep: its cells, where and how fast they ran, what was
        already in the file and what each cell came to."""
        return (f"{st.total} cells on {st.executor}: {st.ran} run in {st.wall_s:.1f} s "
                f"({st.runs_per_s:.2f} runs/s), {st.skipped} already in {self.path}; "
                f"done {st.done}, failed {st.failed}, remaining {st.remaining}")

    def kept(self) -> str:
        """What a sweep a signal stopped leaves: the rows of its last write (every write
        is whole, hetsched.runner), which ``resume`` continues from."""
        if not self.path.exists():
            return f"sweep stopped before its first row; nothing written to {self.out_dir}"
        import pyarrow.parquet as pq

        n = pq.read_metadata(self.path).num_rows
        return (f"sweep stopped; {n} row{'s' if n != 1 else ''} kept in {self.path} (the grid has {self.total} "
                "cells), continue with --resume")


def plan_sweep(grid: str, out_dir: str | os.PathLike, *, workers: int | None = None, ray_address: str | None = None,
               resume: bool = False, retry_failed: bool = False, flush_every_s: float = 2.0) -> SweepPlan:
    """Check a sweep's options and load its grid file (:func:`load_grid`): every error,
    an :class:`InputError` naming the option or the grid's key, comes before the first
    run, not hours into a sweep. ``retry_failed`` needs ``resume`` (the failed rows are
    those of the file resumed). The output directory is the caller's to check."""
    _input.number(flush_every_s, "--flush-every", "flush_every", _input.Range(0, 86_400, unit="s"))  # NaN too
    if retry_failed and not resume:
        raise InputError("--retry-failed", "--retry-failed", "--resume as well")
    if not grid.strip():  # a Path would read '' as '.', this directory
        raise InputError("GRID.yaml", "grid", "a grid file path", got=grid)
    g = load_grid(grid)  # every error in the grid before anything runs or is written
    return SweepPlan(g, Path(out_dir), workers=workers, ray_address=ray_address, resume=resume,
                     retry_failed=retry_failed, flush_every_s=flush_every_s)
