"""Parameter sweeps: a grid of platforms, workloads, schedulers, governors, knob values and
seeds, run on a local process pool or a Ray cluster, one row per run in a Parquet file.

>>> grid = load_grid("grid.yaml")                      # doctest: +SKIP
>>> run_sweep(grid, Path("out"), workers=2)            # doctest: +SKIP
>>> pd.read_parquet("out/sweep.parquet")               # doctest: +SKIP

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

import hashlib
import itertools
import json
import math
import os
import signal
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from hetsched.errors import HetschedError, InputError, UnknownNameError

__all__ = ["Grid", "Cell", "load_grid", "cell_hash", "run_cell", "RowStore", "run_sweep", "read_rows",
           "SWEEP_FILE", "GRID_KEYS"]

SWEEP_FILE = "sweep.parquet"
GRID_KEYS = ("platforms", "workloads", "schedulers", "governors", "idle_governors", "knobs", "seeds",
             "duration")
# every row has these columns, in this order (then knob.*, the engine's metrics, counters.*,
# and the workloads' metrics KEY.name), with these Arrow types
FIXED_COLUMNS: dict[str, str] = {
    "cell_hash": "string", "platform": "string", "workload": "string", "scheduler": "string",
    "governor": "string", "idle_governor": "string", "seed": "int64", "duration_s": "float64",
    "knobs": "string",
    "energy_j": "float64", "energy_lower_bound_j": "float64", "energy_over_bound": "float64",
    "avg_power_mw": "float64", "sim_duration_s": "float64", "events": "int64", "stop_reason": "string",
    "power_model": "string", "wall_s": "float64", "error": "string", "worker": "string",
    "hetsched_version": "string",
}
CONFIG_COLUMNS = ("cell_hash", "platform", "workload", "scheduler", "governor", "idle_governor", "seed",
                  "duration_s", "knobs")


# ----------------------------------------------------------------------------- the grid

def _is_path(s: str) -> bool:
    # the loaders' rule (platforms/loader.py, workloads/builtin.py): a "/" or a .json name
    return "/" in s or s.endswith(".json")


def _knob_key(value: Any) -> Any:
    """A knob value as it enters the hash: numbers (and numeric strings) as floats."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    try:
        return float(str(value).strip())
    except ValueError:
        return str(value).strip()


def _split_scheduler(label: str, source: str, field_: str) -> tuple[str, dict]:
    """``NAME[k=v,...]`` -> (NAME, {k: v}), as compare's scheduler cells."""
    if "[" not in label:
        return label, {}
    if not label.endswith("]"):
        raise InputError(source, field_, "NAME or NAME[knob=value,...]", got=label)
    knobs = {}
    for kv in label[label.index("[") + 1:-1].split(","):
        if not kv.strip():
            continue
        k, eq, v = kv.partition("=")
        if not eq or not k.strip():
            raise InputError(source, field_, "NAME[knob=value,...]", got=label)
        knobs[k.strip()] = v.strip()
    return label[:label.index("[")], knobs


@dataclass(frozen=True)
class Cell:
    """One run of a sweep. ``scheduler`` is the grid's label (it may carry knobs,
    ``eas[vendor.task_packing=1]``); ``knobs`` are the effective ones, sorted."""

    platform: str
    workload: tuple[str, ...]
    scheduler: str
    governor: str
    idle_governor: str
    knobs: tuple[tuple[str, Any], ...]
    seed: int
    duration_s: float | None
    base_dir: str = field(default=".", compare=False)  # relative paths in the grid resolve here

    @property
    def scheduler_name(self) -> str:
        return self.scheduler.split("[")[0]

    def config(self) -> dict:
        """The effective configuration: what the hash covers."""
        return {"platform": self.platform, "workload": list(self.workload), "scheduler": self.scheduler_name,
                "governor": self.governor, "idle_governor": self.idle_governor,
                "knobs": {k: _knob_key(v) for k, v in self.knobs}, "seed": self.seed,
                "duration_s": self.duration_s}

    @property
    def hash(self) -> str:
        return cell_hash(self.config())

    def _resolve(self, s: str) -> str:
        return str(Path(self.base_dir) / s) if _is_path(s) and not os.path.isabs(s) else s

    def simulation_args(self) -> dict:
        return {"platform": self._resolve(self.platform), "workload": [self._resolve(w) for w in self.workload],
                "scheduler": self.scheduler_name, "governor": self.governor,
                "idle_governor": self.idle_governor, "knobs": dict(self.knobs), "seed": self.seed}


def cell_hash(config: dict) -> str:
    """16 hex digits of the SHA-256 of the configuration as canonical JSON."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


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

    def cells(self) -> list[Cell]:
        """Every cell of the product, in grid order, each configuration once."""
        names = list(self.knobs)
        seen: dict[str, Cell] = {}
        for p, w, s, g, ig in itertools.product(self.platforms, self.workloads, self.schedulers, self.governors,
                                                self.idle_governors):
            _, own = _split_scheduler(s, self.source, "schedulers")
            for values in itertools.product(*(self.knobs[n] for n in names)):
                knobs = {**dict(zip(names, values)), **own}
                for seed in self.seeds:
                    c = Cell(p, w, s, g, ig, tuple(sorted(knobs.items())), seed, self.duration_s, self.base_dir)
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
    import yaml

    from hetsched.platforms import load_platform
    from hetsched.sim import GOVERNORS, IDLE_GOVERNORS, SCHEDULERS
    from hetsched.workloads.builtin import resolve_workloads

    src = str(path)
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise InputError(src, "GRID", f"a readable YAML file ({e.strerror or e})") from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise InputError(src, "YAML", f"valid YAML ({getattr(e, 'problem', None) or e}{where})") from None
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
        resolved = [str(Path(base_dir) / x) if _is_path(x) and not os.path.isabs(x) else x for x in items]
        for spec in specs:
            try:
                resolve_workloads(resolved, spec, 0)
            except HetschedError as e:
                raise _rebased(e, src, f"workloads[{i}]") from None
        workloads.append(items)

    schedulers = _str_list(doc, "schedulers", src, ["cfs"])
    for i, s in enumerate(schedulers):
        name, own = _split_scheduler(s, src, f"schedulers[{i}]")
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
        if not isinstance(values, list):
            values = [values]
        if not values:
            raise InputError(src, f"knobs.{name}", "a non-empty list of values", got=values)
        for v in values:
            _check_knob(src, str(name), v)
        knobs[str(name)] = values

    seeds_doc = doc.get("seeds", [0])
    if isinstance(seeds_doc, int) and not isinstance(seeds_doc, bool):
        if seeds_doc < 1:
            raise InputError(src, "seeds", "a positive count N (seeds 0..N-1) or a list of seeds", got=seeds_doc)
        seeds = list(range(seeds_doc))
    elif (isinstance(seeds_doc, list) and seeds_doc
          and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds_doc)):
        seeds = list(dict.fromkeys(seeds_doc))
    else:
        raise InputError(src, "seeds", "a positive count N (seeds 0..N-1) or a list of non-negative integers",
                         got=seeds_doc)

    dur = doc.get("duration")
    if dur is not None:
        if isinstance(dur, bool) or not isinstance(dur, (int, float)) or not (dur > 0) or math.isinf(dur):
            raise InputError(src, "duration", "a positive, finite number of simulated seconds (or null)", got=dur)
        dur = float(dur)
    return Grid(src, platforms, workloads, schedulers, governors, idle, knobs, seeds, dur, base_dir)


# ----------------------------------------------------------------------------- one cell

def _worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _config_row(cell: Cell) -> dict:
    row: dict[str, Any] = {
        "cell_hash": cell.hash, "platform": cell.platform, "workload": " + ".join(cell.workload),
        "scheduler": cell.scheduler, "governor": cell.governor, "idle_governor": cell.idle_governor,
        "seed": cell.seed, "duration_s": cell.duration_s,
        "knobs": json.dumps(dict(cell.knobs), sort_keys=True),
    }
    for k, v in cell.knobs:
        row[f"knob.{k}"] = _knob_key(v)
    return row


def error_row(cell: Cell, error: str, wall_s: float | None = None, worker: str | None = None) -> dict:
    from hetsched import _engine

    row = _config_row(cell)
    row.update({"wall_s": wall_s, "error": error or "error", "worker": worker,
                "hetsched_version": _engine.__version__})
    return row


def run_cell(cell: Cell) -> dict:
    """Run one cell; its row. Any exception becomes the row's ``error`` (never raised)."""
    t0 = time.perf_counter()
    from hetsched.sim import Simulation, flat_metrics

    try:
        doc = Simulation(**cell.simulation_args()).run(cell.duration_s).doc
    except Exception as e:  # a failing cell records its error; the sweep goes on
        msg = str(e) if isinstance(e, HetschedError) else f"{type(e).__name__}: {e}"
        return error_row(cell, msg, time.perf_counter() - t0, _worker_id())
    row = _config_row(cell)
    for k in ("energy_j", "energy_lower_bound_j", "energy_over_bound", "avg_power_mw", "sim_duration_s",
              "events", "stop_reason", "power_model", "hetsched_version"):
        row[k] = doc.get(k)
    row["wall_s"] = time.perf_counter() - t0
    row["error"] = None
    row["worker"] = _worker_id()
    row.update(flat_metrics(doc))  # a workload's own metrics flattened as compare does
    return row


# ----------------------------------------------------------------------------- the rows

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


def read_rows(out_dir: str | os.PathLike) -> list[dict]:
    """The rows of ``OUT/sweep.parquet`` (none if it does not exist)."""
    import pyarrow.parquet as pq

    path = Path(out_dir) / SWEEP_FILE
    if not path.exists():
        return []
    try:
        table = pq.read_table(path)
    except Exception as e:  # not ours, or damaged by something other than a sweep
        raise InputError(str(path), "--resume", f"a sweep.parquet written by hetsched sweep ({e})") from None
    if "cell_hash" not in table.column_names:
        raise InputError(str(path), "--resume", "a sweep.parquet with a cell_hash column")
    rows = table.to_pylist()
    # a column a row never had comes back as None: drop those, so rewriting is stable
    return [{k: v for k, v in r.items() if v is not None or k in FIXED_COLUMNS} for r in rows]


class RowStore:
    """The rows of a sweep, one per cell hash, kept in ``OUT/sweep.parquet``.

    ``write()`` rewrites the whole file under a temporary name in the same directory,
    fsyncs it and renames it over the old one: at any instant the file is a complete,
    readable Parquet file holding every row written so far."""

    def __init__(self, out_dir: str | os.PathLike, resume: bool):
        self.out_dir = Path(out_dir)
        self.path = self.out_dir / SWEEP_FILE
        if self.out_dir.exists() and not self.out_dir.is_dir():
            raise InputError(str(self.out_dir), "--out", "a directory (it is a file)")
        if self.path.exists() and not resume:
            raise InputError(str(self.out_dir), "--out",
                             f"a directory without {SWEEP_FILE}, or --resume to continue the sweep in it")
        self.rows: dict[str, dict] = {r["cell_hash"]: r for r in read_rows(self.out_dir)}
        self.dirty = False
        self.last_write_s = 0.0
        self.writes = 0

    def done(self) -> set[str]:
        return {h for h, r in self.rows.items() if r.get("error") is None}

    def failed(self) -> set[str]:
        return {h for h, r in self.rows.items() if r.get("error") is not None}

    def add(self, row: dict) -> None:
        self.rows[row["cell_hash"]] = row  # a retried cell replaces its error row
        self.dirty = True

    def write(self) -> None:
        import pyarrow.parquet as pq

        if not self.dirty:
            return
        t0 = time.perf_counter()
        table = _arrow_table(list(self.rows.values()))
        tmp = self.out_dir / f".{SWEEP_FILE}.tmp-{os.getpid()}"
        try:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            pq.write_table(table, tmp)
            with open(tmp, "rb+") as f:
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
            dfd = os.open(self.out_dir, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
        except OSError as e:
            tmp.unlink(missing_ok=True)
            raise InputError(str(self.out_dir), "--out", f"a writable directory ({e.strerror or e})") from None
        self.dirty = False
        # the first write of a process loads pyarrow's writer (~0.2 s): not the file's cost
        self.last_write_s = time.perf_counter() - t0 if self.writes else 0.0
        self.writes += 1

    def remove_stale_temporaries(self) -> None:
        """Temporary files of sweeps killed while writing (never a complete result)."""
        if self.out_dir.is_dir():
            for p in self.out_dir.glob(f".{SWEEP_FILE}.tmp-*"):
                p.unlink(missing_ok=True)


# ----------------------------------------------------------------------------- executors

def _ignore_sigint() -> None:
    # Ctrl-C goes to the whole process group: the parent alone decides (saves rows, stops)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class LocalExecutor:
    """A pool of ``workers`` local processes (spawned, so that no thread of the parent is
    inherited); at most ``workers`` cells in flight, so a worker that dies takes only its
    own cell with it."""

    def __init__(self, workers: int):
        self.workers = max(1, workers)
        self.pool = None
        self.description = f"{self.workers} local worker{'s' if self.workers > 1 else ''}"

    def _new_pool(self):
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        return ProcessPoolExecutor(max_workers=self.workers, mp_context=mp.get_context("spawn"),
                                   initializer=_ignore_sigint)

    def run(self, cells: Iterable[Cell]) -> Iterator[tuple[Cell, dict]]:
        from concurrent.futures import FIRST_COMPLETED, wait
        from concurrent.futures.process import BrokenProcessPool

        todo = iter(cells)
        self.pool = self._new_pool()
        inflight: dict[Any, Cell] = {}
        while True:
            while len(inflight) < self.workers:
                c = next(todo, None)
                if c is None:
                    break
                inflight[self.pool.submit(run_cell, c)] = c
            if not inflight:
                break
            done, _ = wait(list(inflight), return_when=FIRST_COMPLETED)
            broken = False
            for f in done:
                c = inflight.pop(f)
                try:
                    yield c, f.result()
                except BrokenProcessPool as e:
                    broken = True
                    yield c, error_row(c, f"the worker process died while running this cell ({e})")
                except Exception as e:
                    yield c, error_row(c, f"{type(e).__name__}: {e}")
            if broken:
                self.pool.shutdown(wait=False, cancel_futures=True)
                self.pool = self._new_pool()
        self.close()

    def close(self) -> None:
        if self.pool is None:
            return
        # stop at once (Ctrl-C, SIGTERM): cancel what is queued and end the running cells
        procs = list(getattr(self.pool, "_processes", {}).values())
        self.pool.shutdown(wait=False, cancel_futures=True)
        for p in procs:
            if p.is_alive():
                p.terminate()
        self.pool = None


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


class RayExecutor:
    """Cells as Ray tasks on the cluster at ``address`` (``ray start --head`` prints it).
    Every node must be able to import hetsched (installed there, or on its PYTHONPATH)."""

    def __init__(self, address: str):
        host = address.rpartition(":")[0].strip("[]")
        if host in ("localhost", "::1") or host.startswith("127."):
            # a cluster on this machine's loopback: Ray would otherwise swap 127.0.0.1 for
            # the interface address, which `ray start --node-ip-address=127.0.0.1` does
            # not listen on (read when ray is imported: before the import)
            os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        try:
            import ray
        except ImportError:
            raise InputError("--ray", "ray", "the ray package (pip install 'hetsched[ray]')") from None
        self.ray = ray
        self.address = address
        _check_reachable(address)
        try:
            ray.init(address=address, logging_level="ERROR", log_to_driver=False,
                     configure_logging=True, namespace="hetsched-sweep")
        except Exception as e:  # ConnectionError, RuntimeError, ValueError
            raise InputError("--ray", "address", f"the address of a running Ray cluster, host:port "
                             f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})",
                             got=address) from None
        self.cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.description = f"Ray cluster {address} ({self.cpus} CPUs)"
        self.remote = ray.remote(num_cpus=1, max_retries=1)(run_cell)
        self.inflight: dict[Any, Cell] = {}

    def run(self, cells: Iterable[Cell]) -> Iterator[tuple[Cell, dict]]:
        ray = self.ray
        todo = iter(cells)
        inflight = self.inflight
        limit = 2 * self.cpus  # a little queue on every node, not the whole grid at once
        while True:
            while len(inflight) < limit:
                c = next(todo, None)
                if c is None:
                    break
                inflight[self.remote.remote(c)] = c
            if not inflight:
                break
            ready, _ = ray.wait(list(inflight), num_returns=1)
            for ref in ready:
                c = inflight.pop(ref)
                try:
                    yield c, ray.get(ref)
                except Exception as e:  # RayTaskError, WorkerCrashedError, ...
                    yield c, error_row(c, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
        self.close()

    def close(self) -> None:
        for ref in list(self.inflight):  # interrupted: the cells in flight are not waited for
            try:
                self.ray.cancel(ref, force=True)
            except Exception:
                pass
        self.inflight.clear()
        self.ray.shutdown()  # disconnects this driver; the cluster keeps running


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
    keep = store.done() | (set() if retry_failed else store.failed())
    todo = [c for c in cells if c.hash not in keep]
    hashes = {c.hash for c in cells}
    stats = SweepStats(total=len(cells))
    stats.done = len(store.done() & hashes)
    stats.failed = len(store.failed() & hashes) if not retry_failed else 0
    stats.skipped = len(cells) - len(todo)
    executor = RayExecutor(ray_address) if ray_address else LocalExecutor(workers or os.cpu_count() or 1)
    stats.executor = executor.description
    if on_progress:
        on_progress(stats)
    t0 = time.perf_counter()
    last_flush = time.monotonic()
    gen = executor.run(todo)
    try:
        for _cell, row in gen:
            store.add(row)
            stats.ran += 1
            if row.get("error") is None:
                stats.done += 1
            else:
                stats.failed += 1
            if time.monotonic() - last_flush >= max(flush_every_s, 10 * store.last_write_s):
                store.write()
                last_flush = time.monotonic()
            if on_progress:
                on_progress(stats)
    finally:
        stats.wall_s = time.perf_counter() - t0
        gen.close()
        try:
            executor.close()
        finally:
            store.write()
    return stats
