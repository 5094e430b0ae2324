"""One runner for every batch of simulations: ``hetsched compare``, ``hetsched sweep`` and
``hetsched reproduce`` describe their runs as :class:`RunSpec` s and hand them to a
:class:`Runner`.

>>> from hetsched.runner import RunSpec, Runner
>>> specs = [RunSpec(platform="gs101", workload="periodic:n=3", scheduler="eas", seed=s, duration_s=0.2)
...          for s in range(4)]
>>> with Runner(jobs=2) as runner:                       # doctest: +SKIP
...     results = runner.run(specs)                      # flat metrics, in the order of specs

A run description is a frozen, hashable value with a stable content hash
(:attr:`RunSpec.hash`, 16 hex digits: the sweep's ``cell_hash``). A runner executes runs in
this process (one job), on a pool of spawned local processes, or as Ray tasks on a cluster
(``ray="host:port"``; Ray is imported only then); a run asked for twice in one runner runs
once, and with a :class:`RunStore` a run whose hash is already stored is not run again.
Every simulation's result is flattened here, by :func:`flat_result` on
:func:`hetsched.sim.flat_metrics`. See docs/runner.md.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import importlib
import json
import math
import os
import signal
import socket
import sys
import threading
import time
import weakref
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

from hetsched import _input
from hetsched.errors import ClusterError, HetschedError, InputError, OutputError
from hetsched.outputs import OutputSet, remove_dead_temporaries

__all__ = ["RunSpec", "Runner", "RunStore", "RunFailed", "parse_cell", "run_hash", "knob_key", "flat_result",
           "execute", "run_row", "error_row", "read_rows", "RESULT_KEYS", "FIXED_COLUMNS", "STORE_FILE",
           "run_stepped", "Interrupted", "stop_on_signals", "interrupting_signal", "uninterrupted", "OutLock",
           "LOCK_FILE", "remove_dead_temporaries"]

# a run's own numbers and strings, ahead of its metrics in every flat result
RESULT_KEYS = ("energy_j", "energy_lower_bound_j", "energy_over_bound", "avg_power_mw", "sim_duration_s",
               "events", "stop_reason", "power_model", "idle_power_model", "hetsched_version")
# every row has these columns, in this order (then knob.*, the engine's metrics, counters.*,
# and the workloads' metrics KEY.name), with these Arrow types
FIXED_COLUMNS: dict[str, str] = {
    "cell_hash": "string", "platform": "string", "workload": "string", "scheduler": "string",
    "governor": "string", "idle_governor": "string", "seed": "int64", "duration_s": "float64",
    "knobs": "string",
    "energy_j": "float64", "energy_lower_bound_j": "float64", "energy_over_bound": "float64",
    "avg_power_mw": "float64", "sim_duration_s": "float64", "events": "int64", "stop_reason": "string",
    "power_model": "string", "idle_power_model": "string", "wall_s": "float64", "error": "string", "worker": "string",
    "hetsched_version": "string",
}
STORE_FILE = "runs.parquet"


# ----------------------------------------------------------------------------- the description

def knob_key(value: Any) -> Any:
    """A knob value as it enters the hash: numbers (and numeric strings) as floats, so that
    ``500``, ``500.0`` and ``"500"`` are one value."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    try:
        return float(str(value).strip())
    except ValueError:
        return str(value).strip()


def parse_cell(cell: str, source: str, field_: str) -> tuple[str, dict[str, str]]:
    """``NAME[knob=value,...]`` -> (NAME, {knob: value}); a plain ``NAME`` has no knobs.

    This is the one reading of a scheduler cell (``compare --scheduler``, a grid's
    ``schedulers``); a malformed one is an :class:`InputError` naming ``source``,
    ``field_`` and the cell."""
    if "[" not in cell and "]" not in cell:
        return cell, {}
    name, _, rest = cell.partition("[")
    inner = rest[:-1]
    if not name.strip() or not rest.endswith("]") or "[" in inner or "]" in inner:
        raise InputError(source, field_, "NAME or NAME[knob=value,...]", got=cell)
    knobs: dict[str, str] = {}
    for kv in inner.split(","):
        if not kv.strip():
            continue
        k, eq, v = kv.partition("=")
        if not eq or not k.strip():
            raise InputError(source, field_, f"NAME[knob=value,...], each knob as knob=value (not {kv.strip()!r})",
                             got=cell)
        knobs[k.strip()] = v.strip()
    return name, knobs


def run_hash(config: dict) -> str:
    """16 hex digits of the SHA-256 of a configuration as canonical JSON (sorted keys, no
    spaces): the same configuration gives the same hash in every process and version."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _is_path(s: str) -> bool:
    # the loaders' rule (platforms/loader.py, workloads/builtin.py): a "/" or a .json name
    return "/" in s or s.endswith(".json")


def relative_to(base_dir: str | os.PathLike, s: str) -> str:
    """A grid's or a run spec's file argument, read from ``base_dir`` (its file's folder):
    a relative path there, a name or an absolute path as it is. A bare name that is no file
    in ``base_dir`` but a shipped example (``rtapp_example3.json``) stays bare, for the
    loader to find as ``--workload`` does (hetsched.workloads.examples)."""
    if not _is_path(s) or os.path.isabs(s):
        return s
    local = Path(base_dir) / s
    if not local.exists():
        from hetsched.workloads.examples import example_path

        if os.path.basename(s) == s and example_path(s) is not None:
            return s
    return str(local)


def _pairs(x: Any) -> tuple[tuple[str, Any], ...]:
    # sorted by name only: a value never decides the order (nor must it be comparable)
    items = x.items() if isinstance(x, Mapping) else x
    return tuple(sorted(((str(k), v) for k, v in items), key=lambda kv: kv[0]))


@dataclass(frozen=True, kw_only=True, eq=False)
class RunSpec:
    """One run: a simulation (``Simulation(platform, workload, scheduler, governor,
    idle_governor, knobs, seed, lower_bound)`` run for ``duration_s``; None: the
    workload's own end, else 10 s), or ``fn`` (``"module:function"``, called in the worker
    with ``seed`` and ``kwargs``; it returns a flat dict).

    ``scheduler`` is a name; a cell ``NAME[knob=v,...]`` goes through :meth:`from_cell`.
    ``knobs`` and ``kwargs`` may be given as mappings; they are kept sorted by name.
    ``label`` (what the run is called where it was asked for: the cell as written, a
    study's name for its run) and ``base_dir`` (where relative paths resolve) are not part
    of the run. Two descriptions are equal when their hashes are: ``2000``, ``2000.0`` and
    ``"2000"`` are one knob value (the sweep's rows keep the value as written)."""

    platform: str = "gs101"
    workload: tuple[str, ...] = ("phone-mix",)
    scheduler: str = "cfs"
    governor: str = "schedutil"
    idle_governor: str = "menu"
    knobs: tuple[tuple[str, Any], ...] = ()
    seed: int = 0
    duration_s: float | None = None
    lower_bound: bool = True
    fn: str | None = None
    kwargs: tuple[tuple[str, Any], ...] = ()
    label: str = ""
    base_dir: str = "."

    def __post_init__(self) -> None:
        # frozen: the normal forms (tuples, knobs sorted by name, a float duration) are set
        # once, here, so that a description reads the same however it was written
        if isinstance(self.workload, str):
            object.__setattr__(self, "workload", (self.workload,))
        elif not isinstance(self.workload, tuple):
            object.__setattr__(self, "workload", tuple(self.workload))
        object.__setattr__(self, "knobs", _pairs(self.knobs))
        object.__setattr__(self, "kwargs", _pairs(self.kwargs))
        d = self.duration_s
        if isinstance(d, int) and not isinstance(d, bool):
            object.__setattr__(self, "duration_s", float(d))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RunSpec) and self.hash == other.hash

    def __hash__(self) -> int:
        return hash(self.hash)

    @classmethod
    def from_cell(cls, cell: str, *, knobs: Mapping[str, Any] | None = None, source: str = "--scheduler",
                  field_: str = "scheduler", **fields: Any) -> "RunSpec":
        """The run of a scheduler cell ``NAME[knob=v,...]``: its own knobs win over
        ``knobs``; the cell as written is the run's label."""
        name, own = parse_cell(cell, source, field_)
        return cls(scheduler=name, knobs={**dict(knobs or {}), **own}, label=cell, **fields)

    @property
    def cell(self) -> str:
        """The name the run was asked for by: its label, else its scheduler."""
        return self.label or self.scheduler

    def config(self) -> dict:
        """What the hash covers: the effective configuration. For a simulation that is
        exactly the sweep's cell (platform, workloads, scheduler, governor, idle governor,
        knobs as :func:`knob_key`, seed, duration), plus ``lower_bound: false`` when the
        bound is skipped (the result differs); for ``fn``, the function, its arguments
        and the seed."""
        if self.fn:
            return {"fn": self.fn, "kwargs": dict(self.kwargs), "seed": self.seed}
        cfg = {"platform": self.platform, "workload": list(self.workload), "scheduler": self.scheduler,
               "governor": self.governor, "idle_governor": self.idle_governor,
               "knobs": {k: knob_key(v) for k, v in self.knobs}, "seed": self.seed,
               "duration_s": self.duration_s}
        if not self.lower_bound:
            cfg["lower_bound"] = False
        return cfg

    @functools.cached_property
    def hash(self) -> str:
        try:
            return run_hash(self.config())
        except TypeError as e:  # an fn argument JSON cannot express
            raise InputError(self.label or self.fn or "RunSpec", "kwargs", f"JSON values ({e})") from None

    def _resolve(self, s: str) -> str:
        return relative_to(self.base_dir, s)

    def simulation_args(self) -> dict:
        """The keyword arguments of :class:`hetsched.sim.Simulation` for this run."""
        return {"platform": self._resolve(self.platform), "workload": [self._resolve(w) for w in self.workload],
                "scheduler": self.scheduler, "governor": self.governor, "idle_governor": self.idle_governor,
                "knobs": dict(self.knobs), "seed": self.seed, "lower_bound": self.lower_bound}

    def simulation(self):
        """The run's :class:`~hetsched.sim.Simulation`, built (so checked) and not run."""
        from hetsched.sim import Simulation

        return Simulation(**self.simulation_args())


# ----------------------------------------------------------------------------- interruption

class Interrupted(BaseException):
    """SIGINT (Ctrl-C) or SIGTERM arrived while :func:`stop_on_signals` was in force: the
    work stops where it is, keeps what is complete and removes what is not, and the
    ``hetsched`` command exits with ``128 + signum`` (130, 143), as a shell reports it.

    Neither a KeyboardInterrupt nor an Exception: typer turns a KeyboardInterrupt into an
    exit code that ``standalone_mode=False`` returns instead of raising (0.13 and later;
    an Abort before), and an ``except Exception`` on the way out (a run's error row, a
    policy's error) must not take it for a failure of the run."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class _SignalState:
    signum: int | None = None   # the first SIGINT/SIGTERM received
    raised = False              # ... and its Interrupted was raised
    depth = 0                   # nesting of uninterrupted() sections


_signals = _SignalState()


def _on_signal(signum: int, frame: Any) -> None:
    if _signals.signum is not None:
        # already stopping: the cleanup on the way out (terminate workers, write the rows
        # that are done) is not itself interrupted, so it stays bounded and complete
        return
    _signals.signum = signum
    if _signals.depth == 0:
        _signals.raised = True
        raise Interrupted(signum)


def stop_on_signals() -> None:
    """From now on SIGINT and SIGTERM raise :class:`Interrupted` in the main thread (once:
    later ones are ignored while the process cleans up and exits). For the ``hetsched``
    command; a library caller keeps Python's own handling. A signal this process was
    started with ignored stays ignored (a shell's background job ignores Ctrl-C)."""
    _signals.signum, _signals.raised, _signals.depth = None, False, 0
    for s in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(s) is not signal.SIG_IGN:
            signal.signal(s, _on_signal)


def interrupting_signal() -> int | None:
    """The signal that is stopping this process (after :func:`stop_on_signals`), else None.
    What a signal interrupted may surface as another exception (a Python policy's hook
    raises it inside the engine, which reports a PolicyError): this tells them apart."""
    return _signals.signum


@contextmanager
def uninterrupted() -> Iterator[None]:
    """A signal that arrives inside is raised when the body has completed: for steps that
    must not stop half-way (renaming a set of files into place, rewriting the store)."""
    _signals.depth += 1
    try:
        yield
    finally:
        _signals.depth -= 1
    if _signals.depth == 0 and _signals.signum is not None and not _signals.raised:
        _signals.raised = True
        raise Interrupted(_signals.signum)


# ----------------------------------------------------------------------------- one run, in steps

# Wall time of one engine call: how often a run's progress (on_step) is reported. Ctrl-C
# does not wait for a step to end: the engine runs Python's signal handlers between its
# events (every 1,024 events, at most every 50 ms; lib.rs SignalPoll). A step is sized
# on the last one's pace, which a quiet stretch (every task asleep) makes look fast: a
# step is also at most _MAX_STEP_NS long, so that the first step of a busy stretch after it
# stays short too (2 simulated s of phone-mix take about 3 ms, of
# hackbench:groups=4,loops=2000 about 3 s, the slowest measured). A call costs about 8 us
# beyond its events: the few hundred a second of the fastest runs cost under 0.5 %.
STEP_WALL_S = 0.1
_FIRST_STEP_NS = 10_000_000      # 10 ms simulated: a first pace to size the next step on
_MIN_STEP_NS = 100_000
_MAX_STEP_NS = 2_000_000_000


def run_stepped(sim: Any, duration_s: float | None = None,
                on_step: Callable[[int, int | None], None] | None = None, step_wall_s: float = STEP_WALL_S):
    """``sim.run(duration_s)`` (:meth:`hetsched.sim.Simulation.run`, the same result to
    the byte: the engine's state does not depend on where a run is cut), in steps of
    about ``step_wall_s`` of wall time each, which ``on_step`` reports (a signal's handler
    does not wait for a step: the engine runs it between events).
    ``on_step(done_ns, total_ns)`` after each step; ``total_ns`` is None for a run until
    every task ends (its end is not known in advance)."""
    from hetsched.sim import UNTIL_EXIT_LIMIT_S

    until_exit = sim.runs_until_exit(duration_s)
    start = sim.now_ns
    total = round(UNTIL_EXIT_LIMIT_S * 1e9) if until_exit else sim.duration_ns(duration_s)
    end = start + total
    step = min(total, _FIRST_STEP_NS)
    ended = False
    while not ended:
        now = sim.now_ns
        t = min(end, now + step)
        t0 = time.perf_counter()
        if until_exit:
            ended = sim.run_until_exited((t - now) / 1e9)
        else:
            sim.run_until(t)
        wall = time.perf_counter() - t0
        if on_step is not None:
            on_step(sim.now_ns - start, None if until_exit else total)
        if sim.now_ns >= end or sim.now_ns == now or sim.deadlocked:
            break
        # the next step at this step's pace, growing at most fourfold (a quiet stretch
        # says little about the busy one that may follow)
        step = max(_MIN_STEP_NS, min(4 * step, _MAX_STEP_NS, int(step * step_wall_s / max(wall, 1e-6))))
    # the stop reason Simulation.run gives (each step set its own; a deadlock's is read
    # from the engine)
    sim._stop_reason = ("all tasks exited" if ended else f"limit of {UNTIL_EXIT_LIMIT_S:g} s") if until_exit \
        else "duration"
    return sim.result()


# ----------------------------------------------------------------------------- one run

class RunFailed(HetschedError):
    """A run failed; the message names the run (its label) and the error."""


#: flat_result's key for the lines of hetsched.mechanisms.silent_mechanisms
SILENT_MECHANISMS = "silent_mechanisms"


def flat_result(doc: dict, extended: bool = False) -> dict:
    """A result document as one flat dict: :data:`RESULT_KEYS`, then
    :func:`hetsched.sim.flat_metrics` (``extended``: with a workload's booleans and lists
    and the nested counters, as the reproductions read them)."""
    from hetsched.mechanisms import silent_mechanisms
    from hetsched.sim import flat_metrics

    out: dict[str, Any] = {k: doc.get(k) for k in RESULT_KEYS}
    out.update(flat_metrics(doc, extended=extended))
    # the policy's mechanisms that never acted in this run, a line each ("" if none): a
    # row equal to its base policy's says why (hetsched.mechanisms)
    out[SILENT_MECHANISMS] = "\n".join(silent_mechanisms(doc))
    return out


def _call(spec: RunSpec, extended: bool) -> dict:
    if spec.fn:
        mod, _, name = spec.fn.partition(":")
        fn: Callable[..., dict] = getattr(importlib.import_module(mod), name)
        return dict(fn(seed=spec.seed, **dict(spec.kwargs)))
    return flat_result(run_stepped(spec.simulation(), spec.duration_s).doc, extended)


def execute(spec: RunSpec, extended: bool = False) -> dict:
    """Run ``spec`` in this process: its flat result plus ``wall_s``; errors are raised."""
    t0 = time.perf_counter()
    out = _call(spec, extended)
    out["wall_s"] = time.perf_counter() - t0
    return out


def _worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


Outcome = tuple  # (flat result | None, error | None, wall_s | None, worker | None)


def _work(spec: RunSpec, extended: bool, catch_all: bool) -> Outcome:
    """A run in a worker. A HetschedError comes back as its message (the exception itself
    need not survive pickling); any other exception too with ``catch_all`` (a sweep
    records it and goes on), else it is raised (a bug keeps its traceback)."""
    t0 = time.perf_counter()
    try:
        out = _call(spec, extended)
    except HetschedError as e:
        return None, str(e), time.perf_counter() - t0, _worker_id()
    except Exception as e:
        if not catch_all:
            raise
        return None, f"{type(e).__name__}: {e}", time.perf_counter() - t0, _worker_id()
    wall = time.perf_counter() - t0
    out["wall_s"] = wall
    return out, None, wall, _worker_id()


# ----------------------------------------------------------------------------- rows

def _config_row(spec: RunSpec) -> dict:
    if spec.fn:
        return {"cell_hash": spec.hash, "seed": spec.seed, "fn": spec.fn,
                "kwargs": json.dumps(dict(spec.kwargs), sort_keys=True)}
    row: dict[str, Any] = {
        "cell_hash": spec.hash, "platform": spec.platform, "workload": " + ".join(spec.workload),
        "scheduler": spec.cell, "governor": spec.governor, "idle_governor": spec.idle_governor,
        "seed": spec.seed, "duration_s": spec.duration_s,
        "knobs": json.dumps(dict(spec.knobs), sort_keys=True),
    }
    for k, v in spec.knobs:
        row[f"knob.{k}"] = knob_key(v)
    return row


def error_row(spec: RunSpec, error: str, wall_s: float | None = None, worker: str | None = None) -> dict:
    """The row of a run that failed: its configuration, the error, wall_s and worker."""
    from hetsched.sim import ENGINE_VERSION

    row = _config_row(spec)
    row.update({"wall_s": wall_s, "error": error or "error", "worker": worker, "hetsched_version": ENGINE_VERSION})
    return row


def run_row(spec: RunSpec, outcome: Outcome | None = None) -> dict:
    """A run's row: its configuration (``cell_hash``, ..., ``knob.NAME``), its results,
    ``wall_s``, ``error`` (None) and ``worker``, then its flat metrics. Without an outcome
    the run is run here; a failing run is an error row, never raised."""
    result, error, wall_s, worker = outcome if outcome is not None else _work(spec, False, True)
    if error is not None:
        return error_row(spec, error, wall_s, worker)
    row = _config_row(spec)
    for k in RESULT_KEYS:
        row[k] = result.get(k)
    row["wall_s"] = wall_s
    row["error"] = None
    row["worker"] = worker
    row.update((k, v) for k, v in result.items() if k not in RESULT_KEYS and k != "wall_s")
    return row


def _arrow_table(rows: list[dict]):
    """One Arrow table from rows with differing keys: the fixed columns with fixed types,
    then the others sorted by kind; a column mixing numbers and text becomes text."""
    import pyarrow as pa

    cols: dict[str, None] = dict.fromkeys(FIXED_COLUMNS)
    extra: dict[str, None] = {}
    for r in rows:
        for k in r:
            if k not in cols:
                extra[k] = None

    def order(k: str) -> tuple:
        return (0 if k.startswith("knob.") else 2 if k.startswith("counters.") else 3 if "." in k else 1, k)

    names = list(cols) + sorted(extra, key=order)
    arrays, fields = [], []
    for name in names:
        vals = [r.get(name) for r in rows]
        vals = [None if isinstance(v, float) and math.isnan(v) else v for v in vals]
        typ = FIXED_COLUMNS.get(name)
        if typ is None:
            present = [v for v in vals if v is not None]
            if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
                typ = "int64"
            elif all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
                typ = "float64"
            else:
                typ = "string"
        if typ == "string":
            vals = [None if v is None else v if isinstance(v, str) else json.dumps(v) if isinstance(v, bool)
                    else str(v) for v in vals]
        elif typ == "float64":
            vals = [None if v is None else float(v) for v in vals]
        arrays.append(pa.array(vals, type=getattr(pa, typ)()))
        fields.append(name)
    return pa.Table.from_arrays(arrays, names=fields)


def read_rows(directory: str | os.PathLike, file: str = STORE_FILE) -> list[dict]:
    """The rows of ``DIRECTORY/FILE`` (none if it does not exist)."""
    import pyarrow.parquet as pq

    path = Path(directory) / file
    if not path.exists():
        return []
    if path.is_dir():  # pyarrow would read it as a dataset of the files inside
        raise InputError(str(path), "--resume", f"a {file} written by hetsched (it is a directory)")
    try:
        table = pq.read_table(path)
    except Exception as e:  # not ours, or damaged by something other than a runner
        raise InputError(str(path), "--resume", f"a {file} written by hetsched ({e})") from None
    if "cell_hash" not in table.column_names:
        raise InputError(str(path), "--resume", f"a {file} with a cell_hash column")
    rows = table.to_pylist()
    # a column a row never had comes back as None: drop those, so rewriting is stable
    return [{k: v for k, v in r.items() if v is not None or k in FIXED_COLUMNS} for r in rows]


LOCK_FILE = ".hetsched.lock"
_held_locks: "weakref.WeakSet[OutLock]" = weakref.WeakSet()


class OutLock:
    """The output directory's lock, held by the one process that writes there (a sweep, a
    reproduction) for as long as it writes: a second writer is refused at once, naming the
    holder, rather than interleaving its rows with the first's (two sweeps rewriting one
    sweep.parquet keep only one's rows).

    flock(2) on ``DIRECTORY/.hetsched.lock``: the kernel drops the lock with the holder's
    last descriptor, however the holder ends (SIGKILL included), so a dead holder never
    leaves the directory locked. The file holds the holder's PID and what it writes,
    for the message; it is removed on :meth:`release` (and the directory too, if the lock
    created it and nothing else was written), so that a finished writer leaves nothing."""

    def __init__(self, directory: str | os.PathLike, purpose: str):
        self.directory = Path(directory)
        self.path = self.directory / LOCK_FILE
        self.purpose = purpose
        self.fd: int | None = None
        self.created_directory = False

    def acquire(self) -> "OutLock":
        where = str(self.directory)
        if self.directory.exists() and not self.directory.is_dir():
            raise InputError(where, "--out", "a directory (it is a file)")
        try:
            import fcntl
        except ImportError:  # not a POSIX system: no lock, as before there was one
            return self
        # a holder that releases removes the file (and maybe the directory) while we open
        # it: then the lock we took is on a name nobody else will open, and we start over
        for _ in range(20):
            try:
                self.directory.mkdir(parents=True)
                self.created_directory = True
            except FileExistsError:
                pass
            except OSError as e:
                raise InputError(where, "--out", f"a writable directory ({e.strerror or e})") from None
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            except FileNotFoundError:
                continue
            except OSError as e:
                raise InputError(where, "--out", f"a writable directory ({e.strerror or e})") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 200, 0).decode(errors="replace").strip()
                os.close(fd)
                pid, _, what = holder.partition(" ")
                who = f"process {pid}, {what}," if pid.isdigit() else "another process"
                raise InputError(where, "--out", f"a directory no other hetsched process is writing to "
                                 f"({who} holds {self.path})") from None
            except BaseException:
                os.close(fd)
                raise
            try:
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if not same:
                os.close(fd)
                continue
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()} {self.purpose}\n".encode(), 0)
            self.fd = fd
            _held_locks.add(self)
            return self
        raise InputError(where, "--out", "a directory whose lock file can be taken "
                         f"({self.path} keeps being replaced)")

    def release(self) -> None:
        fd, self.fd = self.fd, None
        if fd is None:
            return
        _held_locks.discard(self)
        try:
            # removed while still held: whoever opened the old file takes a lock on a name
            # that is gone, sees it and starts over (acquire)
            self.path.unlink(missing_ok=True)
            if self.created_directory:
                try:
                    self.directory.rmdir()  # only if empty: nothing was written
                except OSError:
                    pass
        finally:
            os.close(fd)

    def __enter__(self) -> "OutLock":
        return self.acquire()

    def __exit__(self, *exc: Any) -> None:
        self.release()

    def __del__(self) -> None:
        self.release()


def _release_held_locks() -> None:
    for lock in list(_held_locks):
        lock.release()


atexit.register(_release_held_locks)


class RunStore:
    """The rows of runs, one per run hash (``cell_hash``), kept in ``DIRECTORY/FILE``
    (Parquet): what makes a batch resumable.

    An existing file is refused unless ``resume``; with it, its rows are read back and
    :meth:`completed` names the runs not to run again. ``write()`` rewrites the whole file
    under a temporary name in the same directory, fsyncs it and renames it over the old
    one: at any instant the file is a complete, readable Parquet file holding every row
    written so far."""

    def __init__(self, directory: str | os.PathLike, *, file: str = STORE_FILE, resume: bool = False,
                 replaces: Iterable[str] = ()):
        self.out_dir = Path(directory)
        self.file = file
        self.path = self.out_dir / file
        self.replaces = tuple(replaces)  # files drawn from an earlier state of the rows (plots)
        if self.out_dir.exists() and not self.out_dir.is_dir():
            raise InputError(str(self.out_dir), "--out", "a directory (it is a file)")
        # held until close(): from before the file is first looked at, so that two batches
        # started together cannot both find it absent (or both resume it)
        self.lock = OutLock(self.out_dir, f"writing {file}").acquire()
        try:
            if self.path.is_dir():
                raise InputError(str(self.path), "--out", f"{file} to be a file or absent (it is a directory)")
            if self.path.exists() and not resume:
                raise InputError(str(self.out_dir), "--out",
                                 f"a directory without {file}, or --resume to continue the runs stored in it")
            self.rows: dict[str, dict] = {r["cell_hash"]: r for r in read_rows(self.out_dir, file)}
        except BaseException:
            self.lock.release()
            raise
        self.dirty = False
        self.written_rows = len(self.rows)  # the rows the file on disk holds
        self.last_write_s = 0.0
        self.writes = 0

    def done(self) -> set[str]:
        return {h for h, r in self.rows.items() if r.get("error") is None}

    def failed(self) -> set[str]:
        return {h for h, r in self.rows.items() if r.get("error") is not None}

    def kept(self) -> str:
        """What the store keeps, for the line of a command that stops short: its rows
        (written at the latest when the store is closed) and how to go on."""
        n = len(self.rows)
        return f"{n} row{'s' * (n != 1)} in {self.path} (continue with --resume)"

    def completed(self, retry_failed: bool = False) -> set[str]:
        """The hashes not to run again: the successes, and the failures unless retried."""
        return self.done() | (set() if retry_failed else self.failed())

    def add(self, row: dict) -> None:
        self.rows[row["cell_hash"]] = row  # a retried run replaces its error row
        self.dirty = True

    def write(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not self.dirty:
            return
        t0 = time.perf_counter()
        buf = pa.BufferOutputStream()
        pq.write_table(_arrow_table(list(self.rows.values())), buf)
        # a signal waits for the rename (a few ms): the rows written are then all that is done
        with uninterrupted():
            try:
                with OutputSet(self.out_dir, sync=True, replaces=self.replaces) as outs:
                    outs.write(self.file, buf.getvalue().to_pybytes())
                    outs.commit()
            except OutputError as e:
                n = self.written_rows
                e.kept = (f"the {n} row{'s' * (n != 1)} of its last write in {self.path} (continue with --resume)"
                          if n else None)
                raise
        self.dirty = False
        self.written_rows = len(self.rows)
        # the first write of a process loads pyarrow's writer (~0.2 s): not the file's cost
        self.last_write_s = time.perf_counter() - t0 if self.writes else 0.0
        self.writes += 1

    def remove_stale_temporaries(self) -> None:
        """Temporary files of runners killed while writing (never a complete result): all
        of them, since the lock says no other process writes here."""
        if self.out_dir.is_dir():
            for p in self.out_dir.glob(f".{self.file}.tmp-*"):
                p.unlink(missing_ok=True)

    def close(self) -> None:
        """Write the rows and release the directory's lock."""
        try:
            self.write()
        finally:
            self.lock.release()


# ----------------------------------------------------------------------------- executors

_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _die_with_parent(parent_pid: int) -> None:
    """Linux: the kernel sends this process SIGKILL when its parent ends, however it ends
    (SIGKILL included, when the parent can stop nothing). Elsewhere the parent's close()
    is all there is."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            return
    except (OSError, AttributeError):
        return
    # the parent may have died before prctl took effect: this process was then reparented
    # and no signal will come
    if os.getppid() != parent_pid:
        os._exit(1)


def _worker_init(parent_pid: int) -> None:
    # Ctrl-C reaches the whole process group: the parent alone decides (keeps the rows
    # that are done, then ends the workers)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent(parent_pid)


@contextmanager
def _sigint_blocked() -> Iterator[None]:
    """SIGINT held back in this thread, so that a worker started meanwhile inherits it
    blocked until its initializer ignores it (a Ctrl-C during its start would otherwise
    kill it with a traceback, and its run would count as failed). The parent's handler
    still runs: another thread takes the signal, or it is delivered on the way out."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


class InProcess:
    """Every run in this process, one after the other, in description order."""

    description = "this process"

    def run(self, specs: Iterable[RunSpec], extended: bool, catch_all: bool) -> Iterator[tuple[RunSpec, Outcome]]:
        for spec in specs:
            yield spec, _work(spec, extended, catch_all)

    def close(self) -> None:
        pass


class LocalPool:
    """A pool of ``workers`` local processes, spawned (no thread of the parent, such as a
    progress bar's, is inherited) and kept until :meth:`close`. At most ``depth`` runs are
    in flight: with ``depth == workers`` a worker that dies takes only its own run with it."""

    def __init__(self, workers: int, depth: int | None = None):
        self.workers = max(1, workers)
        self.depth = max(self.workers, depth or self.workers)
        self.pool = None
        self.description = f"{self.workers} local worker{'s' if self.workers > 1 else ''}"

    def _new_pool(self):
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        # the workers are started by submit(), in this (the main) thread: PR_SET_PDEATHSIG
        # follows the thread that started a process, and this one lasts as long as the process
        return ProcessPoolExecutor(max_workers=self.workers, mp_context=mp.get_context("spawn"),
                                   initializer=_worker_init, initargs=(os.getpid(),))

    def run(self, specs: Iterable[RunSpec], extended: bool, catch_all: bool) -> Iterator[tuple[RunSpec, Outcome]]:
        from concurrent.futures import FIRST_COMPLETED, wait
        from concurrent.futures.process import BrokenProcessPool

        todo = iter(specs)
        if self.pool is None:
            self.pool = self._new_pool()
        inflight: dict[Any, RunSpec] = {}
        while True:
            while len(inflight) < self.depth:
                s = next(todo, None)
                if s is None:
                    break
                # submit() may start a worker: not stopped half-way (a worker started
                # but not yet recorded by the pool would not be ended with it)
                with uninterrupted(), _sigint_blocked():
                    inflight[self.pool.submit(_work, s, extended, catch_all)] = s
            if not inflight:
                break
            done, _ = wait(list(inflight), return_when=FIRST_COMPLETED)
            broken = False
            for f in done:
                s = inflight.pop(f)
                try:
                    yield s, f.result()
                except BrokenProcessPool as e:
                    broken = True
                    yield s, (None, f"the worker process died while running this run ({e})", None, None)
                except Exception as e:
                    if not catch_all:
                        raise
                    yield s, (None, f"{type(e).__name__}: {e}", None, None)
            if broken:
                self.pool.shutdown(wait=False, cancel_futures=True)
                self.pool = self._new_pool()

    def close(self) -> None:
        if self.pool is None:
            return
        # stop at once (Ctrl-C, SIGTERM, a failed run): cancel what is queued, end the
        # running and wait for them, so that none outlives the parent
        pool, self.pool = self.pool, None
        procs = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for p in procs:
            if p.is_alive():
                p.kill()
        for p in procs:
            p.join(5)


def _check_reachable(address: str) -> None:
    """A ``host:port`` nobody listens on fails here at once (ray.init would retry for
    minutes)."""
    host, sep, port = address.rpartition(":")
    if not sep or "://" in address or not port.isdigit():
        return  # "auto", "ray://...": Ray's own resolution
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as e:
        raise InputError("--ray", "address", "the address of a running Ray cluster, host:port "
                         f"(`ray start --head` prints it; {e.strerror or e})", got=address) from None


def _runtime_gcs_address(ray: Any) -> str:
    """The connected driver's GCS address ("" if Ray does not say)."""
    try:
        return str(ray.get_runtime_context().gcs_address or "")
    except Exception:
        return ""


def _gcs_endpoint(address: str) -> tuple[str, int] | None:
    """(host, port) of a cluster's GCS from a ``host:port`` address, else None."""
    host, sep, port = address.rpartition(":")
    if not sep or "://" in address or not port.isdigit():
        return None
    return host.strip("[]"), int(port)


class RayCluster:
    """Runs as Ray tasks on the cluster at ``address`` (``ray start --head`` prints it).
    Every node must be able to import hetsched (installed there, or on its PYTHONPATH).

    A cluster that dies while it runs (its head killed, ``ray stop``, the network gone)
    ends the batch within seconds with a :class:`ClusterError`. Ray's own driver would wait
    for the head for 60 s (``gcs_rpc_server_reconnect_timeout_s``) and then end the process
    from C++, exit status 1, printing only its own log line: no row written, the output
    directory left locked. Here ``ray.wait`` returns every POLL_S seconds, and when
    nothing has come back, or Ray raised, the head's GCS port is tried: a cluster whose
    GCS accepts no connection for LOST_AFTER_S seconds is taken for dead, and the runs in
    flight stay undone (not failed), for ``--resume``."""

    #: seconds ray.wait waits for a result before the cluster is looked at
    POLL_S = 1.0
    #: seconds the GCS may refuse connections before the cluster is taken for dead (a
    #: head that restarts takes longer: it is then a new cluster, which the runs in
    #: flight did not survive either)
    LOST_AFTER_S = 3.0
    #: what Ray raises when the cluster, not the run, failed
    _SYSTEM_ERRORS = ("RaySystemError", "GetTimeoutError", "RayActorError", "LocalRayletDiedError",
                      "NodeDiedError", "WorkerCrashedError", "ObjectLostError", "OwnerDiedError")

    def __init__(self, address: str):
        host = address.rpartition(":")[0].strip("[]")
        if host in ("localhost", "::1") or host.startswith("127."):
            # a cluster on this machine's loopback: Ray would otherwise swap 127.0.0.1 for
            # the interface address, which `ray start --node-ip-address=127.0.0.1` does
            # not listen on (read when ray is imported: before the import)
            os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        # what this driver's ray.shutdown() waits for its task events to reach the GCS: 5 s
        # by default, all of it spent when the head has died (read when the driver starts)
        os.environ.setdefault("RAY_task_events_shutdown_flush_timeout_ms", "500")
        try:
            import ray
        except ImportError:
            raise InputError("--ray", "ray", "the ray package (pip install 'hetsched[ray]')") from None
        self.ray = ray
        self.address = address
        _check_reachable(address)
        # ray.init sets a SIGTERM handler that exits at once with status 15: the rows that
        # are done would not be written; the one in force before is put back
        on_term = signal.getsignal(signal.SIGTERM)
        try:
            ray.init(address=address, logging_level="ERROR", log_to_driver=False,
                     configure_logging=True, namespace="hetsched")
        except Exception as e:  # ConnectionError, RuntimeError, ValueError
            raise InputError("--ray", "address", f"the address of a running Ray cluster, host:port "
                             f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})",
                             got=address) from None
        finally:
            if threading.current_thread() is threading.main_thread() and on_term is not None:
                signal.signal(signal.SIGTERM, on_term)
        self.cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.description = f"Ray cluster {address} ({self.cpus} CPUs)"
        self.remote = ray.remote(num_cpus=1, max_retries=1)(_work)
        self.inflight: dict[Any, RunSpec] = {}
        self.connected = True
        self.lost = False
        # the GCS to try: the address given, or the one "auto" found; none through a Ray
        # client ("ray://"), whose cluster-side address this driver may not reach
        self.gcs = None if "://" in address else _gcs_endpoint(address) or _gcs_endpoint(_runtime_gcs_address(ray))

    def _gcs_answers(self) -> bool:
        if self.gcs is None:  # not known ("ray://" client mode): Ray's own errors decide
            return True
        try:
            socket.create_connection(self.gcs, timeout=1.0).close()
            return True
        except OSError:
            return False

    def _lost(self) -> bool:
        """Whether the cluster is gone: its GCS refused connections for LOST_AFTER_S."""
        if self._gcs_answers():
            return False
        since = time.monotonic()
        while time.monotonic() - since < self.LOST_AFTER_S:
            time.sleep(0.25)
            if self._gcs_answers():
                return False
        self.lost = True
        return True

    def _error(self, raised: BaseException | None) -> ClusterError:
        after = f" after Ray's {type(raised).__name__}" if raised is not None else ""
        return ClusterError("--ray", "address", f"the Ray cluster at {self.address} to keep running{after}",
                            got=_input.Shown(f"no connection to its GCS for {self.LOST_AFTER_S:g} s "
                                             "(the head stopped?)"))

    def _system_error(self, e: BaseException) -> bool:
        return isinstance(e, ConnectionError) or type(e).__name__ in self._SYSTEM_ERRORS

    def run(self, specs: Iterable[RunSpec], extended: bool, catch_all: bool) -> Iterator[tuple[RunSpec, Outcome]]:
        ray = self.ray
        todo = iter(specs)
        inflight = self.inflight
        limit = 2 * self.cpus  # a little queue on every node, not the whole batch at once
        while True:
            while len(inflight) < limit:
                s = next(todo, None)
                if s is None:
                    break
                inflight[self.remote.remote(s, extended, catch_all)] = s
            if not inflight:
                break
            try:
                ready, _ = ray.wait(list(inflight), num_returns=1, timeout=self.POLL_S)
            except Exception as e:
                if self._lost():
                    raise self._error(e) from None
                raise
            if not ready:  # nothing back within POLL_S: is there still a cluster?
                if self._lost():
                    raise self._error(None)
                continue
            for ref in ready:
                try:
                    out = ray.get(ref)
                except Exception as e:  # RayTaskError, WorkerCrashedError, ...
                    # a run the cluster's death took with it stays undone, for --resume
                    if self._system_error(e) and self._lost():
                        raise self._error(e) from None
                    s = inflight.pop(ref)
                    if not catch_all:
                        raise
                    yield s, (None, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", None, None)
                    continue
                yield inflight.pop(ref), out

    def close(self) -> None:
        if not self.lost:  # a dead cluster has nothing left to cancel
            for ref in list(self.inflight):  # interrupted: the runs in flight are not waited for
                try:
                    self.ray.cancel(ref, force=True)
                except Exception:
                    pass
        self.inflight.clear()
        if self.connected:
            # disconnects this driver; the cluster keeps running. Without it a driver whose
            # cluster died crashes (SIGSEGV) on its way out; with it, it waits for its
            # task events to reach the dead GCS, task_events_shutdown_flush_timeout_ms
            # (set below 1 s in __init__)
            self.ray.shutdown()
            self.connected = False


# ----------------------------------------------------------------------------- the runner

class Runner:
    """Runs :class:`RunSpec` s and keeps their results for its lifetime.

    ``jobs``: local worker processes (None: one per CPU; 1, or a batch of one run: in this
    process, unless ``isolate``, which keeps every run in a worker process). ``ray``: a Ray cluster's address instead. ``rows``: every result is the
    run's row (:func:`run_row`) and a failing run is a row with its error; otherwise the
    result is the run's flat result (:func:`flat_result` plus ``wall_s``, or an ``fn``'s
    dict) and a failing run raises :class:`RunFailed`. ``store`` (rows only): runs whose
    hash it holds are not run again (their stored rows are the results), every new row is
    added and the store is rewritten at most every ``flush_every_s`` seconds (and never
    more often than 10 times its last write took) and at the end. ``extended``: see
    :func:`flat_result`."""

    def __init__(self, jobs: int | None = None, *, ray: str | None = None, store: RunStore | None = None,
                 rows: bool = False, extended: bool = False, isolate: bool = False, retry_failed: bool = False,
                 flush_every_s: float = 2.0):
        if store is not None and not rows:
            raise ValueError("Runner: a store keeps rows (rows=True)")
        self.jobs = max(1, jobs or os.cpu_count() or 1)
        self.store = store
        self.rows = rows
        self.extended = extended
        self.retry_failed = retry_failed
        self.flush_every_s = flush_every_s
        self.isolate = isolate
        self.executed = 0  # runs this runner actually ran
        self._results: dict[str, dict] = {}
        self._in_process = InProcess()
        self._pool: LocalPool | RayCluster | None = None
        if ray:
            self._pool = RayCluster(ray)
        elif self.jobs > 1 or isolate:
            # a batch whose failures are recorded keeps one run per worker in flight (a dying
            # worker costs its own run only); otherwise two, so that no worker waits on the parent
            self._pool = LocalPool(self.jobs, depth=self.jobs if rows else 2 * self.jobs)
        self.description = self._pool.description if self._pool is not None else self._in_process.description

    def __enter__(self) -> "Runner":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def pending(self, specs: Iterable[RunSpec]) -> list[RunSpec]:
        """The runs of ``specs`` that running them would run: each hash once, none this
        runner already has a result for, none the store holds."""
        keep = self.store.completed(self.retry_failed) if self.store is not None else set()
        out: dict[str, RunSpec] = {}
        for s in specs:
            h = s.hash
            if h not in self._results and h not in keep:
                out.setdefault(h, s)
        return list(out.values())

    def preload(self, results: Mapping[str, dict]) -> None:
        """Results obtained before this runner (run hash -> result), taken as its own: those
        runs are not run again."""
        self._results.update(results)

    def stream(self, specs: Iterable[RunSpec]) -> Iterator[tuple[RunSpec, dict]]:
        """Run the pending runs of ``specs``; yield each with its result as it completes."""
        todo = self.pending(specs)
        if not todo:
            return
        catch_all = self.rows
        # one run alone is not worth a worker's start-up, unless runs must be isolated
        alone = len(todo) == 1 and not self.isolate and isinstance(self._pool, LocalPool)
        executor = self._in_process if self._pool is None or alone else self._pool
        store = self.store
        last_flush = time.monotonic()
        finished = False
        try:
            for spec, outcome in executor.run(todo, self.extended, catch_all):
                if self.rows:
                    result = run_row(spec, outcome)
                else:
                    result, error = outcome[0], outcome[1]
                    if error is not None:
                        raise RunFailed(f"{spec.label or spec.fn or spec.workload}: {error}")
                self._results[spec.hash] = result
                self.executed += 1
                if store is not None:
                    store.add(result)
                    if time.monotonic() - last_flush >= max(self.flush_every_s, 10 * store.last_write_s):
                        store.write()
                        last_flush = time.monotonic()
                yield spec, result
            finished = True
        except ClusterError as e:  # the cluster died: the rows so far are written below
            if store is not None and e.kept is None:
                e.kept = store.kept()
            raise
        finally:
            if not finished:  # interrupted or failed: stop the runs in flight at once
                executor.close()
            if store is not None:
                store.write()

    def run(self, specs: Iterable[RunSpec],
            on_result: Callable[[RunSpec, dict], None] | None = None) -> list[dict]:
        """The results of ``specs``, in their order; ``on_result(spec, result)`` after each
        run that is actually run."""
        specs = list(specs)
        for spec, result in self.stream(specs):
            if on_result is not None:
                on_result(spec, result)
        stored = self.store.rows if self.store is not None else {}
        return [self._results[s.hash] if s.hash in self._results else stored[s.hash] for s in specs]

    def close(self) -> None:
        """Stop the workers (the Ray driver disconnects; the cluster keeps running), write
        the store and release its directory's lock."""
        try:
            if self._pool is not None:
                self._pool.close()
        finally:
            if self.store is not None:
                self.store.close()
