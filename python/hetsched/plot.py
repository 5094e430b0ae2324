"""Pictures of a result directory: what ``hetsched run``, ``compare --out`` and ``sweep``
wrote, drawn into ``DIR/plots/`` (docs/plots.md).

>>> from pathlib import Path
>>> from hetsched.plot import plot_dir
>>> plot_dir(Path("out"), formats=("png", "html"))         # doctest: +SKIP
[PosixPath('out/plots/run_frequency.png'), ..., PosixPath('out/plots/run.html')]

The kind of a directory is read from the files in it: ``result.json`` is a run,
``compare.json`` a comparison, ``sweep.parquet`` a sweep; a directory holding several
gets the plots of each, their names prefixed by the kind. Every figure says what it was
drawn from; what a directory cannot give (a run without ``timeseries.csv`` has no
frequency over time) is said in a note in the figures and the page, and handed back to
the caller through ``notes``, never left out silently.

Every number drawn is one the result files hold, or follows from them exactly: the split
of a CPU's energy into running and idle uses the platform's per-OPP and per-idle-state
power and is drawn only when it adds back up to the energy the engine integrated
(energy.rs), else the CPUs' energy is drawn whole with the reason.

matplotlib is imported by the functions that draw, so importing this module costs nothing;
figures are drawn on ``matplotlib.figure.Figure`` with the Agg canvas, never through
pyplot, so a caller's own pyplot backend and state stay as they were. SVG output is
byte-for-byte reproducible (a fixed ``svg.hashsalt`` and no date).
"""

from __future__ import annotations

import html
import io
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from hetsched.errors import InputError, UnknownNameError
from hetsched.metric_names import COMPARE_DEFAULT, mean_ci95, metric_label
from hetsched.metric_names import lower_is_better as _lower_is_better
from hetsched.metric_names import metric_unit as _metric_unit

__all__ = ["PLOT_FORMATS", "PLOTS_DIR", "detect_kinds", "plot_dir", "run_figures", "compare_figures",
           "sweep_figures", "Figures"]

PLOT_FORMATS = ("png", "svg", "html")
PLOTS_DIR = "plots"

RUN_FILE = "result.json"
TIMESERIES_FILE = "timeseries.csv"
COMPARE_FILE = "compare.json"
SWEEP_FILE = "sweep.parquet"  # hetsched.sweep.SWEEP_FILE, not imported: that module pulls in the runner
_KIND_FILES = (("run", RUN_FILE), ("compare", COMPARE_FILE), ("sweep", SWEEP_FILE))

# The quality axis of a workload with no headline (phone-mix, an rt-app file): the tail of
# the wakeup latency every run reports, which moves with placement and frequency where the
# missed activations of a light workload sit at zero for every scheduler.
FALLBACK_QUALITY = "wakeup_latency_us_p99"

# Colours. Clusters little to big; energy parts; a change for the better or the worse
# (ColorBrewer PiYG ends: green and magenta stay apart under the common colour-vision
# deficiencies), grey where the metric's direction is not declared.
_CLUSTER_COLOURS = ("#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02")
_ACTIVE, _IDLE, _CLUSTER_TERM, _UNSPLIT = "#3a6ea5", "#a6cbe8", "#c9a227", "#7f9fbf"
_BETTER, _WORSE, _NEUTRAL = "#1b7837", "#c51b7d", "#8c8c8c"
_MARKERS = ("o", "s", "D", "^", "v", "P", "X", "<", ">", "h")

# Past this many samples a CPU's series is drawn per time bin (a mean, a min-max band, the
# most frequent idle state): an hour at the default 4 ms is 900,000 samples, which as SVG
# paths would be hundreds of megabytes and no more legible than the binned picture.
_MAX_POINTS = 4000

_RC = {
    "svg.hashsalt": "hetsched-plot",  # clip-path ids: the same figure, the same bytes
    "svg.fonttype": "none",  # text stays text: searchable, and the page's font draws it
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Arial", "Helvetica"],
    "font.size": 9.0,
    "axes.titlesize": 10.0,
    "axes.labelsize": 9.0,
    "legend.fontsize": 8.0,
    "xtick.labelsize": 8.0,
    "ytick.labelsize": 8.0,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "image.interpolation": "nearest",
}
_PNG_DPI = 110


def _styled(build: Callable[[Path], "Figures"]) -> Callable[[Path], "Figures"]:
    """``build`` under the plots' rc settings: matplotlib reads most of them (fonts,
    spines) when an artist is made, not when the figure is saved."""
    import functools

    @functools.wraps(build)
    def styled(path: Path) -> Figures:
        import matplotlib

        with matplotlib.rc_context(_RC):
            return build(path)
    return styled


@dataclass
class Figures:
    """The figures of one result directory: each as (name, matplotlib Figure, caption),
    the page's title and summary table (HTML), and what could not be drawn and why."""

    kind: str
    title: str
    figures: list[tuple[str, Any, str]] = field(default_factory=list)
    table: str = ""
    notes: list[str] = field(default_factory=list)


# ----------------------------------------------------------------------------- reading the files


def _fail(source: Path | str, fld: str, expected: str, got: object = None) -> InputError:
    return InputError(str(source), fld, expected, got)


def _load_json(path: Path, what: str) -> dict:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise _fail(path, "file", f"{what} (it is missing)") from None
    except (OSError, UnicodeDecodeError) as e:
        raise _fail(path, "file", f"{what} readable as UTF-8 text ({getattr(e, 'strerror', None) or e})") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise _fail(path, "json", f"{what} ({e.msg} at line {e.lineno} column {e.colno})") from None
    if not isinstance(doc, dict):
        raise _fail(path, "json", f"{what}: a JSON object", got=type(doc).__name__)
    return doc


def _is_num(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _num(src: Path, obj: dict, key: str, where: str, *, optional: bool = False) -> float | None:
    v = obj.get(key)
    if v is None and optional:
        return None
    if not _is_num(v):
        raise _fail(src, f"{where}{key}", "a finite number", got=v)
    return float(v)


def _text(src: Path, obj: dict, key: str, where: str = "") -> str:
    v = obj.get(key)
    if not isinstance(v, str):
        raise _fail(src, f"{where}{key}", "a string", got=v)
    return v


def _seconds_map(src: Path, obj: dict, key: str, where: str) -> dict[str, float] | None:
    v = obj.get(key)
    if v is None:
        return None
    if not isinstance(v, dict) or not all(isinstance(k, str) and _is_num(x) for k, x in v.items()):
        raise _fail(src, f"{where}{key}", "an object of name: seconds", got=v)
    return {k: float(x) for k, x in v.items()}


@dataclass
class _Cpu:
    cpu: int
    cluster: str
    capacity: float
    energy_j: float
    freq_residency_s: dict[str, float] | None
    idle_residency_s: dict[str, float] | None


@dataclass
class _Cluster:
    name: str
    cpus: list[int]
    energy_j: float
    cluster_term_energy_j: float


@dataclass
class _Run:
    path: Path
    doc: dict
    platform: str
    workload: str
    scheduler: str
    governor: str
    idle_governor: str
    duration_s: float
    energy_j: float
    cpus: list[_Cpu]
    clusters: list[_Cluster]


def _read_run(d: Path) -> _Run:
    src = d / RUN_FILE
    doc = _load_json(src, "a hetsched result document")
    for key in ("platform", "workload", "scheduler", "governor"):
        _text(src, doc, key)
    cpus_raw, clusters_raw = doc.get("cpus"), doc.get("clusters")
    if not isinstance(cpus_raw, list) or not cpus_raw or not all(isinstance(c, dict) for c in cpus_raw):
        raise _fail(src, "cpus", "a non-empty list of per-CPU objects", got=cpus_raw)
    if not isinstance(clusters_raw, list) or not clusters_raw or not all(isinstance(c, dict) for c in clusters_raw):
        raise _fail(src, "clusters", "a non-empty list of per-cluster objects", got=clusters_raw)
    cpus = []
    for i, c in enumerate(cpus_raw):
        w = f"cpus[{i}]."
        cpu = c.get("cpu")
        if not isinstance(cpu, int) or isinstance(cpu, bool) or cpu < 0:
            raise _fail(src, f"{w}cpu", "a CPU number", got=cpu)
        cpus.append(_Cpu(cpu, _text(src, c, "cluster", w), _num(src, c, "capacity", w), _num(src, c, "energy_j", w),
                         _seconds_map(src, c, "freq_residency_s", w), _seconds_map(src, c, "idle_residency_s", w)))
    clusters = []
    for i, c in enumerate(clusters_raw):
        w = f"clusters[{i}]."
        members = c.get("cpus")
        if not isinstance(members, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in members):
            raise _fail(src, f"{w}cpus", "a list of CPU numbers", got=members)
        clusters.append(_Cluster(_text(src, c, "cluster", w), list(members), _num(src, c, "energy_j", w),
                                 _num(src, c, "cluster_term_energy_j", w, optional=True) or 0.0))
    return _Run(d, doc, doc["platform"], doc["workload"], doc["scheduler"], doc["governor"],
                str(doc.get("idle_governor") or ""), _num(src, doc, "sim_duration_s", ""),
                _num(src, doc, "energy_j", ""), cpus, clusters)


_TS_COLUMNS = ("t_ns", "cpu", "util", "freq_khz", "idle_state")


def _read_timeseries(d: Path):
    """timeseries.csv as a DataFrame sorted by (cpu, t_ns), or None when there is none."""
    src = d / TIMESERIES_FILE
    if not src.exists():
        return None
    import pandas as pd

    try:
        ts = pd.read_csv(src, usecols=lambda c: c in _TS_COLUMNS)
    except (OSError, ValueError, UnicodeDecodeError) as e:  # pandas' parser errors are ValueErrors
        raise _fail(src, "csv", f"the time series hetsched run --timeseries writes ({_first_line(e)})") from None
    missing = [c for c in _TS_COLUMNS if c not in ts.columns]
    if missing:
        raise _fail(src, "header", f"the columns {', '.join(_TS_COLUMNS)}", got=",".join(map(str, ts.columns)))
    for c in _TS_COLUMNS:
        if not pd.api.types.is_integer_dtype(ts[c]):
            raise _fail(src, c, "an integer in every row")
    return ts.sort_values(["cpu", "t_ns"], kind="stable").reset_index(drop=True)


def _first_line(e: BaseException) -> str:
    """An exception's message on one line, for the expectation of an InputError."""
    first = str(e).strip().splitlines()
    return first[0][:160] if first else type(e).__name__


@dataclass
class _Compare:
    path: Path
    platform: str
    workload: list[str]
    duration_s: float
    seeds: int
    baseline: str
    summary: list[dict]
    cells: list[str]
    #: the test behind the stars, as compare.json names it ("test"); files written before
    #: compare named its test there used Welch's
    test: str = "Welch's unpaired t-test against the baseline"


def _read_compare(d: Path) -> _Compare:
    src = d / COMPARE_FILE
    doc = _load_json(src, "the comparison hetsched compare --out writes")
    wl = doc.get("workload")
    if not isinstance(wl, list) or not wl or not all(isinstance(x, str) for x in wl):
        raise _fail(src, "workload", "a list of workload arguments", got=wl)
    seeds = doc.get("seeds")
    if not isinstance(seeds, int) or isinstance(seeds, bool) or seeds < 1:
        raise _fail(src, "seeds", "a positive integer", got=seeds)
    summary = doc.get("summary")
    if not isinstance(summary, list) or not summary:
        raise _fail(src, "summary", "a non-empty list of per-metric, per-configuration entries", got=summary)
    cells: list[str] = []
    for i, e in enumerate(summary):
        w = f"summary[{i}]."
        if not isinstance(e, dict):
            raise _fail(src, f"summary[{i}]", "an object", got=e)
        _text(src, e, "metric", w)
        if _text(src, e, "cell", w) not in cells:
            cells.append(e["cell"])
        for key in ("mean", "ci95", "rel_change_vs_first", "p_value"):
            v = e.get(key)
            # a mean is NaN where no run reported the metric (json.dumps writes NaN)
            if v is not None and not (isinstance(v, (int, float)) and not isinstance(v, bool)):
                raise _fail(src, f"{w}{key}", "a number or null", got=v)
    baseline = _text(src, doc, "baseline")
    if baseline not in cells:
        raise _fail(src, "baseline", "one of the summary's configurations: " + ", ".join(cells), got=baseline)
    test = doc.get("test", _Compare.test)
    if not isinstance(test, str) or not test:
        raise _fail(src, "test", "the name of the test behind the stars (text)", got=test)
    return _Compare(d, _text(src, doc, "platform"), wl, _num(src, doc, "duration_s", ""), seeds, baseline,
                    summary, cells, test)


_SWEEP_COLUMNS = ("platform", "workload", "scheduler", "governor", "seed", "energy_j", "error")


def _read_sweep(d: Path):
    src = d / SWEEP_FILE
    import pandas as pd

    try:
        df = pd.read_parquet(src)
    except FileNotFoundError:
        raise _fail(src, "file", "the rows hetsched sweep writes (it is missing)") from None
    except Exception as e:  # pyarrow's errors have no common base with OSError and ValueError
        raise _fail(src, "parquet", f"the rows hetsched sweep writes, as Parquet ({_first_line(e)})") from None
    missing = [c for c in _SWEEP_COLUMNS if c not in df.columns]
    if missing:
        raise _fail(src, "columns", f"the sweep's columns ({', '.join(_SWEEP_COLUMNS)})", got=", ".join(missing)
                    + " missing")
    return df


def detect_kinds(path: Path) -> list[str]:
    """The kinds of result ``path`` holds, in the order run, compare, sweep; refuses (one
    line, naming the path) a path that is not a directory or holds none of them."""
    p = Path(path)
    if not p.is_dir():
        raise _fail(p, "directory", "an existing result directory" + (" (this is a file)" if p.exists() else ""))
    kinds = [k for k, f in _KIND_FILES if (p / f).is_file()]
    if not kinds:
        raise _fail(p, "directory", "a hetsched result directory: result.json (hetsched run), compare.json "
                                    "(hetsched compare --out) or sweep.parquet (hetsched sweep)")
    return kinds


# ----------------------------------------------------------------------------- words and numbers


def _metric_label(key: str, with_direction: bool = True) -> str:
    """``wakeup latency p99 [us]``, with ``(lower is better)`` where the metric declares it."""
    return metric_label(key, with_direction)



def _headline(workloads: Iterable[str]) -> list[str]:
    from hetsched.workloads.builtin import headline_metrics

    return headline_metrics(list(workloads))


def _workload_title(workload: str) -> str:
    """A run's workload for a title: as given, or its names alone when its parameters make
    it too long to read (game:fps=60,level=2+hackbench:groups=10,...)."""
    if len(workload) <= 48:
        return workload
    return "+".join(part.partition(":")[0] for part in re.split(r"\s*\+\s*", workload))


def _sig(x: float | None, digits: int = 4) -> str:
    if x is None or not math.isfinite(x):
        return "–"
    if x == 0:
        return "0"
    mag = math.floor(math.log10(abs(x)))
    if mag >= 6 or mag < -3:
        return f"{x:.{digits}g}"
    return f"{x:.{max(0, digits - 1 - mag)}f}"


def _mean_ci(values: Sequence[float]) -> tuple[float, float | None, int]:
    """Mean, half-width of its 95 % confidence interval (compare's summary, mean_ci95) and
    the count of the finite values; no interval from one value."""
    mean, _sd, ci, n = mean_ci95([float(v) for v in values if v is not None and math.isfinite(float(v))])
    return mean, ci, n


def _e(x: object) -> str:
    return html.escape(str(x))


# ----------------------------------------------------------------------------- one run


def _cluster_colour(i: int) -> str:
    return _CLUSTER_COLOURS[i % len(_CLUSTER_COLOURS)]


def _cpu_list(cpus: Sequence[int]) -> str:
    """0-3,6 as the kernel prints a cpumask."""
    out, s = [], sorted(cpus)
    i = 0
    while i < len(s):
        j = i
        while j + 1 < len(s) and s[j + 1] == s[j] + 1:
            j += 1
        out.append(str(s[i]) if i == j else f"{s[i]}-{s[j]}")
        i = j + 1
    return ",".join(out)


def _run_title(r: _Run) -> str:
    idle = f", {r.idle_governor}" if r.idle_governor else ""
    return f"{r.platform} | {_workload_title(r.workload)} | {r.scheduler}/{r.governor}{idle} | {r.duration_s:g} s"


def _platform_tables(r: _Run) -> tuple[Any | None, str | None]:
    """The platform the run names, if it loads and matches the run's clusters (names and
    CPUs), else the reason it cannot be used."""
    from hetsched.platforms import load_platform

    try:
        p = load_platform(r.platform)
    except Exception as e:  # a platform file that has moved or changed since the run
        return None, f"platform {r.platform!r} does not load here ({_first_line(e)})"
    if [(c.name, list(c.cpus)) for c in p.clusters] != [(c.name, c.cpus) for c in r.clusters]:
        return None, f"platform {r.platform!r} as loaded here has other clusters than the run"
    return p, None


def _energy_split(r: _Run) -> tuple[dict[str, tuple[float, float]] | None, str | None]:
    """Per cluster, the energy its CPUs drew running and idle [J], or the reason there is
    none. The meter charges a running CPU its OPP's power and an idle one its idle state's
    (energy.rs), so each part is residency x power; the split is kept only if, CPU by CPU,
    the parts add up to the energy the engine integrated (to 1e-6 relative), which fails
    where the residencies do not cover all of a CPU's energy (a switcher's CPU that moved
    between cores)."""
    if any(c.freq_residency_s is None or c.idle_residency_s is None for c in r.cpus):
        return None, "result.json has no per-CPU residencies"
    p, why = _platform_tables(r)
    if p is None:
        return None, why
    by_name = {c.name: c for c in p.clusters}
    out: dict[str, list[float]] = {c.name: [0.0, 0.0] for c in r.clusters}
    for cpu in r.cpus:
        cl = by_name.get(cpu.cluster)
        if cl is None or cpu.cluster not in out:
            return None, f"CPU {cpu.cpu}'s cluster {cpu.cluster!r} is not one of the platform's"
        try:
            active = sum(cpu.freq_residency_s[str(o.khz)] * o.power_uw for o in cl.opps) * 1e-6
            idle = sum(cpu.idle_residency_s[s.name] * s.power_uw for s in cl.idle_states) * 1e-6
        except KeyError as e:
            return None, f"CPU {cpu.cpu}'s residencies name no {e.args[0]!r} of the platform's {cpu.cluster}"
        if not math.isclose(active + idle, cpu.energy_j, rel_tol=1e-6, abs_tol=1e-9):
            return None, (f"CPU {cpu.cpu}: residency x power ({active + idle:.6g} J) is not the energy the engine "
                          f"integrated ({cpu.energy_j:.6g} J)")
        out[cpu.cluster][0] += active
        out[cpu.cluster][1] += idle
    return {k: (a, i) for k, (a, i) in out.items()}, None


def _idle_state_names(r: _Run) -> dict[str, list[str]]:
    """Per cluster, its idle states in index order (the time series' idle_state numbers
    index them; result.json lists them by name, sorted)."""
    p, _ = _platform_tables(r)
    if p is None:
        return {}
    return {c.name: [s.name for s in c.idle_states] for c in p.clusters}


def _series_per_cpu(ts, cpu: int):
    sel = ts[ts["cpu"] == cpu]
    return sel["t_ns"].to_numpy() / 1e9, sel


def _binned(t, values, n_bins: int):
    """Per time bin: its centre, mean, min and max (numpy arrays)."""
    import numpy as np

    edges = np.linspace(t[0], t[-1], n_bins + 1)
    idx = np.clip(np.searchsorted(edges, t, side="right") - 1, 0, n_bins - 1)
    count = np.bincount(idx, minlength=n_bins)
    keep = count > 0
    mean = np.bincount(idx, weights=values, minlength=n_bins)[keep] / count[keep]
    lo = np.full(n_bins, np.inf)
    hi = np.full(n_bins, -np.inf)
    np.minimum.at(lo, idx, values)
    np.maximum.at(hi, idx, values)
    centre = (edges[:-1] + edges[1:])[keep] / 2
    return centre, mean, lo[keep], hi[keep]


def _period_s(r: _Run, t) -> float:
    knob = r.doc.get("knobs", {}).get("timeseries.period_us") if isinstance(r.doc.get("knobs"), dict) else None
    if _is_num(knob) and knob > 0:
        return float(knob) * 1e-6
    return float(t[1] - t[0]) if len(t) > 1 else 0.0


def _frequency_figure(r: _Run, ts, Figure) -> tuple[Any, str]:
    """The frequency of each cluster over time; one CPU speaks for its cluster (cpufreq
    sets a policy's frequency for all its CPUs). Where a cluster's CPUs disagree (a
    switcher, whose CPU runs at its current core's frequency) each CPU is drawn."""
    import numpy as np

    lines: list[tuple[str, Any, Any, str]] = []
    notes = []
    for i, c in enumerate(r.clusters):
        members = [x for x in c.cpus if (ts["cpu"] == x).any()]
        if not members:
            continue
        series = {x: _series_per_cpu(ts, x) for x in members}
        t0, s0 = series[members[0]]
        same = all(len(s) == len(s0) and np.array_equal(s["freq_khz"].to_numpy(), s0["freq_khz"].to_numpy())
                   for _t, s in series.values())
        if same:
            lines.append((f"{c.name} (CPUs {_cpu_list(c.cpus)})", t0, s0["freq_khz"].to_numpy() / 1e6,
                          _cluster_colour(i)))
        else:
            notes.append(f"the CPUs of {c.name} ran at different frequencies (cores switched): one line per CPU")
            for k, x in enumerate(members):
                t, s = series[x]
                lines.append((f"CPU {x} ({c.name})", t, s["freq_khz"].to_numpy() / 1e6,
                              _CLUSTER_COLOURS[(i + k) % len(_CLUSTER_COLOURS)]))
    fig = Figure(figsize=(10, 3.6), layout="constrained")
    ax = fig.add_subplot()
    binned = False
    for label, t, ghz, colour in lines:
        if len(t) > _MAX_POINTS:
            binned = True
            centre, mean, lo, hi = _binned(t, ghz, _MAX_POINTS // 2)
            ax.fill_between(centre, lo, hi, color=colour, alpha=0.25, lw=0, step="mid")
            ax.step(centre, mean, where="mid", color=colour, lw=0.9, label=label)
        else:
            ax.step(t, ghz, where="post", color=colour, lw=0.9, label=label)
    ax.set_xlabel("simulated time [s]")
    ax.set_ylabel("frequency [GHz]")
    ax.set_ylim(bottom=0)
    ax.set_xlim(0, max(r.duration_s, max((t[-1] for _l, t, _g, _c in lines), default=0.0)))
    ax.grid(axis="y", color="#e4e4e4", lw=0.6)
    fig.legend(loc="outside right upper", frameon=False)
    ax.set_title(f"{_run_title(r)}\nfrequency of each cluster", loc="left")
    t_any = lines[0][1] if lines else np.array([0.0])
    period = _period_s(r, t_any)
    cap = (f"Each cluster's frequency as sampled every {period * 1e3:g} ms (timeseries.csv); a change between "
           "two samples shows at the next.")
    if binned:
        cap += (f" More than {_MAX_POINTS} samples: the line is the mean per time bin, the band its minimum "
                "to maximum.")
    if notes:
        cap += " " + "; ".join(notes) + "."
    return fig, cap


def _cpu_states_figure(r: _Run, ts, Figure) -> tuple[Any, str]:
    """Two heat strips, a row per CPU: its utilisation as a share of its capacity, and
    whether it ran or sat in which idle state."""
    import numpy as np
    from matplotlib.colors import BoundaryNorm, ListedColormap

    cpus = sorted(c.cpu for c in r.cpus if (ts["cpu"] == c.cpu).any())
    cap_of = {c.cpu: c.capacity for c in r.cpus}
    cluster_of = {c.cpu: c.cluster for c in r.cpus}
    names = _idle_state_names(r)
    t, _ = _series_per_cpu(ts, cpus[0])
    n = len(t)
    util = np.zeros((len(cpus), n))
    state = np.zeros((len(cpus), n), dtype=int)
    for row, cpu in enumerate(cpus):
        tc, s = _series_per_cpu(ts, cpu)
        m = min(n, len(tc))
        util[row, :m] = np.clip(s["util"].to_numpy()[:m] / max(cap_of[cpu], 1.0) * 100.0, 0, 100)
        state[row, :m] = s["idle_state"].to_numpy()[:m]
    max_state = int(state.max()) if state.size else 0
    period = _period_s(r, t)
    binned = n > _MAX_POINTS
    if binned:
        # util: the mean per bin; state: the most frequent per bin (ties to the shallower)
        bins = _MAX_POINTS
        idx = np.minimum((np.arange(n) * bins) // n, bins - 1)
        count = np.bincount(idx, minlength=bins)
        util = np.stack([np.bincount(idx, weights=u, minlength=bins) / count for u in util])
        votes = np.stack([np.stack([np.bincount(idx, weights=(srow == k), minlength=bins)
                                    for k in range(-1, max_state + 1)]) for srow in state])
        state = votes.argmax(axis=1) - 1
    extent = (float(t[0]), float(t[-1]) + period, len(cpus) - 0.5, -0.5)
    labels = [f"CPU {c} ({cluster_of[c]})" for c in cpus]

    height = 1.6 + 0.34 * len(cpus) * 2
    fig = Figure(figsize=(10, height), layout="constrained")
    a1, a2 = fig.subplots(2, 1, sharex=True)
    im = a1.imshow(util, aspect="auto", extent=extent, cmap="viridis", vmin=0, vmax=100, interpolation="nearest")
    cb = fig.colorbar(im, ax=a1, pad=0.01, fraction=0.04)
    cb.set_label("utilisation [% of capacity]")
    a1.set_title(f"{_run_title(r)}\nutilisation of each CPU (cpu_util_cfs / capacity_orig)", loc="left")

    # running first, dark; idle states lighter the deeper they are
    n_states = max_state + 2
    palette = ["#b2182b", "#2166ac", "#67a9cf", "#d1e5f0", "#f7f7f7", "#fddbc7"][:n_states]
    palette += ["#eeeeee"] * (n_states - len(palette))
    cmap = ListedColormap(palette)
    norm = BoundaryNorm(np.arange(-1.5, max_state + 1.5), cmap.N)
    # nearest: a column between a running and a deep idle sample must not blend into a
    # state that neither sample was in
    im2 = a2.imshow(state, aspect="auto", extent=extent, cmap=cmap, norm=norm, interpolation="nearest")
    a2.set_title("running, or the idle state each CPU's governor chose", loc="left")
    state_names = ["running"]
    for k in range(max_state + 1):
        named = sorted({names[cl][k] for cl in names if k < len(names[cl])})
        state_names.append(f"idle {k}" + (f": {'/'.join(named)}" if named else ""))
    cb2 = fig.colorbar(im2, ax=a2, pad=0.01, fraction=0.04, ticks=range(-1, max_state + 1))
    cb2.ax.set_yticklabels(state_names)
    cb2.ax.invert_yaxis()
    cb2.ax.tick_params(length=0)
    cb2.set_label("state")
    for ax in (a1, a2):
        ax.set_yticks(range(len(cpus)), labels)
        ax.tick_params(axis="y", length=0)
        for side in ("left", "bottom"):
            ax.spines[side].set_visible(False)
    a2.set_xlabel("simulated time [s]")
    cap = (f"Sampled every {period * 1e3:g} ms (timeseries.csv): a burst shorter than that may fall between "
           "two samples. Utilisation is the CPU's PELT utilisation (cpu_util_cfs) over its capacity_orig.")
    if binned:
        cap += (f" More than {_MAX_POINTS} samples a CPU: each column is a time bin, utilisation its mean and "
                "the state its most frequent.")
    return fig, cap


def _energy_figure(r: _Run, Figure, undrawn: list[str]) -> tuple[Any, str, str | None]:
    """Each cluster's energy: its CPUs running, its CPUs idle, and the cluster term (the
    power a legacy table charges the cluster itself)."""
    split, why = _energy_split(r)
    names = [c.name for c in r.clusters]
    fig = Figure(figsize=(8.6, 3.8 + 0.16 * len(undrawn)), layout="constrained")
    ax = fig.add_subplot()
    x = list(range(len(names)))
    term = [c.cluster_term_energy_j for c in r.clusters]
    if split is not None:
        active = [split[n][0] for n in names]
        idle = [split[n][1] for n in names]
        parts = [(f"CPUs running (busy at an OPP): {_sig(sum(active), 3)} J", active, _ACTIVE),
                 (f"CPUs idle (in an idle state): {_sig(sum(idle), 3)} J", idle, _IDLE)]
    else:
        cpus_j = [c.energy_j - c.cluster_term_energy_j for c in r.clusters]
        parts = [("CPUs, running and idle (not split)", cpus_j, _UNSPLIT)]
    if any(v > 0 for v in term):
        parts.append((f"cluster term: {_sig(sum(term), 3)} J", term, _CLUSTER_TERM))
    bottom = [0.0] * len(names)
    for label, values, colour in parts:
        ax.bar(x, values, bottom=bottom, color=colour, width=0.6, label=label, edgecolor="white", lw=0.5)
        bottom = [b + v for b, v in zip(bottom, values)]
    top = max(bottom) if bottom else 0.0
    for xi, total in zip(x, bottom):
        ax.annotate(f"{_sig(total, 3)} J", (xi, total), xytext=(0, 3), textcoords="offset points", ha="center",
                    va="bottom", fontsize=8)
    # a switcher's cluster whose cores back no CPU at the end of the run has none to list
    ax.set_xticks(x, [f"{c.name}\n" + (f"CPUs {_cpu_list(c.cpus)}" if c.cpus else "(no CPU at the end)")
                      for c in r.clusters])
    ax.set_ylabel("energy [J]")
    ax.set_xlabel("cluster")
    ax.set_ylim(0, top * 1.18 if top > 0 else 1.0)
    ax.grid(axis="y", color="#e4e4e4", lw=0.6)
    ax.set_axisbelow(True)
    fig.legend(loc="outside right upper", frameon=False)
    ax.set_title(f"{_run_title(r)}\nenergy by cluster: {_sig(r.energy_j, 4)} J in all", loc="left", fontsize=9)
    if undrawn:
        fig.text(0.01, 0.005, "\n".join(f"not drawn: {u}" for u in undrawn), fontsize=7.5, color="#8e0152",
                 va="bottom", ha="left")
        fig.get_layout_engine().set(h_pad=0.04 + 0.12 * len(undrawn))
    cap = ("Energy the engine integrated (result.json clusters[].energy_j), split by what each CPU was doing: "
           "residency at each OPP times that OPP's power, residency in each idle state times its power.")
    if split is None:
        cap = f"Energy the engine integrated (result.json clusters[].energy_j); not split into running and idle: {why}."
    else:
        idle_share = sum(v[1] for v in split.values()) / r.energy_j if r.energy_j else 0.0
        cap += f" Idle states drew {idle_share * 100:.2g} % of the energy."
    return fig, cap, (None if split is not None else f"energy split into running and idle: {why}")


def _residency_figure(r: _Run, Figure) -> tuple[Any, str] | None:
    have = [c for c in r.cpus if c.freq_residency_s]
    if not have:
        return None
    by_cluster = []
    for i, cl in enumerate(r.clusters):
        tot: dict[int, float] = {}
        for c in r.cpus:
            if c.cluster == cl.name and c.cpu in cl.cpus and c.freq_residency_s:
                for khz, s in c.freq_residency_s.items():
                    try:
                        k = int(khz)
                    except ValueError:
                        raise _fail(r.path / RUN_FILE, f"cpus[{c.cpu}].freq_residency_s", "frequencies in kHz as keys",
                                    got=khz) from None
                    tot[k] = tot.get(k, 0.0) + s
        if tot:
            by_cluster.append((i, cl, sorted(tot.items())))
    if not by_cluster:
        return None
    fig = Figure(figsize=(10, 0.7 + 2.3 * len(by_cluster)), layout="constrained")
    axes = fig.subplots(len(by_cluster), 1, squeeze=False)[:, 0]
    for ax, (i, cl, opps) in zip(axes, by_cluster):
        xs = range(len(opps))
        busy = sum(s for _k, s in opps)
        ax.bar(xs, [s for _k, s in opps], color=_cluster_colour(i), width=0.75)
        ax.set_xticks(list(xs), [f"{k / 1000:g}" for k, _s in opps])
        ax.set_xlim(-0.6, max(len(opps), 8) - 0.4)
        ax.set_title(f"{cl.name} (CPUs {_cpu_list(cl.cpus)}): {_sig(busy, 3)} CPU-s busy", fontsize=9, loc="left")
        ax.set_ylabel("busy [s]")
        ax.set_xlabel("OPP [MHz]", labelpad=1)
        ax.grid(axis="y", color="#e4e4e4", lw=0.6)
        ax.set_axisbelow(True)
    fig.suptitle(f"{_run_title(r)}\nfrequency residency while running: time at each OPP, summed over the "
                 "cluster's CPUs", x=0.01, ha="left", fontsize=10)
    cap = ("Time each cluster's CPUs ran (not idle) at each OPP, summed over its CPUs (result.json "
           "cpus[].freq_residency_s): CPU-seconds, so a cluster of four CPUs can add up to four times the run.")
    return fig, cap


@_styled
def run_figures(path: Path) -> Figures:
    """The figures of a run directory (result.json, timeseries.csv if recorded)."""
    from matplotlib.figure import Figure

    d = Path(path)
    r = _read_run(d)
    ts = _read_timeseries(d)
    out = Figures("run", _run_title(r))
    undrawn = []
    if ts is None:
        undrawn.append("frequency over time and CPU states: no timeseries.csv (run with --timeseries)")
    elif ts.empty:
        undrawn.append("frequency over time and CPU states: timeseries.csv has no samples")
        ts = None
    else:
        known = {c.cpu for c in r.cpus}
        stray = sorted(set(ts["cpu"].unique().tolist()) - known)
        if stray:
            raise _fail(d / TIMESERIES_FILE, "cpu", f"the CPUs of result.json ({_cpu_list(sorted(known))})",
                        got=stray[0])
    residency = _residency_figure(r, Figure)
    if residency is None:
        undrawn.append("frequency residency: result.json has no cpus[].freq_residency_s")
    if ts is not None:
        out.figures.append(("frequency", *_frequency_figure(r, ts, Figure)))
        out.figures.append(("cpu_states", *_cpu_states_figure(r, ts, Figure)))
    fig, cap, unsplit = _energy_figure(r, Figure, list(undrawn))
    if unsplit:
        undrawn.append(unsplit)
    out.figures.append(("energy", fig, cap))
    if residency is not None:
        out.figures.append(("freq_residency", *residency))
    out.notes = undrawn
    out.table = _run_table(r)
    return out


def _run_table(r: _Run) -> str:
    from hetsched.sim import flat_metrics

    doc = r.doc
    flat = flat_metrics(doc)
    rows = [("energy", f"{_sig(r.energy_j)} J")]
    if _is_num(doc.get("energy_lower_bound_j")):
        rows.append(("energy lower bound", f"{_sig(doc['energy_lower_bound_j'])} J"))
    if _is_num(doc.get("energy_over_bound")):
        rows.append(("energy / lower bound", f"{_sig(doc['energy_over_bound'], 3)}x"))
    if _is_num(doc.get("avg_power_mw")):
        rows.append(("avg power", f"{_sig(doc['avg_power_mw'])} mW"))
    names = [k for k, v in (doc.get("metrics") or {}).items() if isinstance(v, dict)]
    for key in ["wakeup_latency_us_p99", "missed_activation_pct", *_headline(names)]:
        if _is_num(flat.get(key)):
            unit = _metric_unit(key)
            rows.append((_metric_label(key, with_direction=False).rsplit(" [", 1)[0],
                         f"{_sig(flat[key])}{' ' + unit if unit else ''}"))
    for c in r.clusters:
        rows.append((f"energy of {c.name} (CPUs {_cpu_list(c.cpus)})", f"{_sig(c.energy_j)} J"))
    meta = [("power model", doc.get("power_model")), ("idle power", doc.get("idle_power_model")),
            ("kernel", doc.get("kernel")), ("seed", doc.get("seed")), ("hetsched", doc.get("hetsched_version"))]
    rows += [(k, str(v)) for k, v in meta if v is not None]
    body = "".join(f"<tr><th>{_e(k)}</th><td class=\"num\">{_e(v)}</td></tr>" for k, v in rows)
    return f'<table class="summary"><tbody>{body}</tbody></table>'


# ----------------------------------------------------------------------------- a comparison


def _palette(n: int) -> list[tuple[str, str]]:
    """(colour, marker) for n configurations: the colour-blind-safe qualitative colours
    first, the markers telling apart those that share one."""
    base = ["#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#000000"]
    return [(base[i % len(base)], _MARKERS[(i // len(base) + i) % len(_MARKERS)]) for i in range(n)]


def _quality_keys(headline: list[str], available: Callable[[str], bool]) -> tuple[list[str], str]:
    keys = [k for k in headline if available(k)]
    if keys:
        return keys[:2], "the workload's headline"
    if available(FALLBACK_QUALITY):
        return [FALLBACK_QUALITY], "the workload names no headline metric: the tail of the wakeup latency"
    return [], ""


def _energy_quality_axes(ax, points, xkey: str, ykey: str = "energy_j") -> bool:
    """One point per configuration, 95 % CI bars on both axes. ``points``: (label, colour,
    marker, x, xci, y, yci, baseline). Returns whether any bar was drawn."""
    any_bar = False
    for label, colour, marker, x, xci, y, yci, base in points:
        if not (math.isfinite(x) and math.isfinite(y)):
            continue
        any_bar |= xci is not None or yci is not None
        ax.errorbar([x], [y], xerr=None if xci is None else [[xci], [xci]],
                    yerr=None if yci is None else [[yci], [yci]], fmt=marker, color=colour, ms=7 if base else 6,
                    mfc="white" if base else colour, mew=1.6 if base else 0.8, mec=colour, elinewidth=1.0,
                    capsize=2.5, label=label + (" (baseline)" if base else ""))
    ax.set_xlabel(_metric_label(xkey))
    ax.set_ylabel(_metric_label(ykey))
    ax.grid(color="#ececec", lw=0.6)
    ax.set_axisbelow(True)
    ax.margins(0.12)
    return any_bar


def _coincident(points) -> str:
    """The configurations whose points lie on one another (equal means on both axes), which
    a reader would otherwise take for one: "cfs/schedutil = fa-cfs/schedutil"."""
    groups: dict[tuple, list[str]] = {}
    for label, _c, _m, x, _xci, y, _yci, _b in points:
        if math.isfinite(x) and math.isfinite(y):
            groups.setdefault((_sig(x, 6), _sig(y, 6)), []).append(label)
    same = [" = ".join(g) for g in groups.values() if len(g) > 1]
    return f" Drawn on one another (equal means): {'; '.join(same)}." if same else ""


def _compare_title(c: _Compare) -> str:
    wl = " + ".join(_workload_title(w) for w in c.workload)
    return f"{c.platform} | {wl} | {c.duration_s:g} s x {c.seeds} seed{'s' if c.seeds != 1 else ''}"


@_styled
def compare_figures(path: Path) -> Figures:
    """The figures of a comparison directory (compare.json)."""
    from matplotlib.figure import Figure

    c = _read_compare(Path(path))
    by = {(e["metric"], e["cell"]): e for e in c.summary}
    metrics = list(dict.fromkeys(e["metric"] for e in c.summary))
    out = Figures("compare", _compare_title(c))
    colours = dict(zip(c.cells, _palette(len(c.cells))))

    def finite(key: str) -> bool:
        return all((key, cell) in by and _is_num(by[key, cell]["mean"]) for cell in c.cells)

    qkeys, why = _quality_keys(_headline(c.workload), finite)
    if "energy_j" not in metrics or not finite("energy_j"):
        out.notes.append("energy against quality: compare.json has no energy_j for every configuration")
    elif not qkeys:
        out.notes.append("energy against quality: compare.json has no headline metric and no "
                         f"{FALLBACK_QUALITY}")
    else:
        fig = Figure(figsize=(5.2 * len(qkeys) + 2.6, 4.4), layout="constrained")
        axes = fig.subplots(1, len(qkeys), squeeze=False)[0]
        bars = False
        overlaps = ""
        for ax, q in zip(axes, qkeys):
            pts = [(cell, *colours[cell], by[q, cell]["mean"], by[q, cell]["ci95"], by["energy_j", cell]["mean"],
                    by["energy_j", cell]["ci95"], cell == c.baseline) for cell in c.cells]
            bars |= _energy_quality_axes(ax, pts, q)
            overlaps = overlaps or _coincident(pts)
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside right upper", frameon=False, title="configuration")
        fig.suptitle(f"{_compare_title(c)}: energy against quality", x=0.01, ha="left", fontsize=10)
        cap = (f"One point per configuration: the mean over {c.seeds} seed{'s' if c.seeds != 1 else ''}, "
               + ("with the 95 % confidence interval of each mean (Student's t) on both axes. " if bars else
                  "without intervals (one seed, or no spread). ")
               + f"Quality axis: {why}." + overlaps)
        out.figures.append(("energy_quality", fig, cap))

    shown = _change_metrics(c, metrics, by)
    if len(c.cells) < 2:
        out.notes.append("changes against the baseline: the comparison has one configuration")
    elif not shown:
        out.notes.append("changes against the baseline: no metric has a change for any configuration")
    else:
        out.figures.append(("changes", *_changes_figure(c, shown, by, Figure)))
    out.table = _compare_table(c, metrics, by)
    return out


def _change_metrics(c: _Compare, metrics: list[str], by: dict) -> list[str]:
    """The metrics compare shows by default (and the workload's headline), which have a
    change against the baseline for some configuration."""

    wanted = [*COMPARE_DEFAULT, *_headline(c.workload)]
    return [k for k in dict.fromkeys(wanted) if k in metrics
            and any(_is_num(by.get((k, cell), {}).get("rel_change_vs_first")) for cell in c.cells)]


def _changes_figure(c: _Compare, keys: list[str], by: dict, Figure) -> tuple[Any, str]:
    from matplotlib.ticker import MaxNLocator

    others = [cell for cell in c.cells if cell != c.baseline]
    ncol = min(3, len(keys))
    nrow = math.ceil(len(keys) / ncol)
    label_w = max(len(x) for x in others) * 0.062 + 0.3
    fig = Figure(figsize=(label_w + 3.0 * ncol, 0.9 + nrow * (0.75 + 0.26 * len(others))), layout="constrained")
    axes = fig.subplots(nrow, ncol, squeeze=False, sharey=True)
    for j, ax in enumerate(axes.flat):
        if j >= len(keys):
            ax.set_visible(False)
            continue
        key = keys[j]
        lower = _lower_is_better(key)
        base_mean = by[key, c.baseline]["mean"]
        ys = list(range(len(others)))
        vals, errs, cols = [], [], []
        for cell in others:
            e = by.get((key, cell), {})
            rel = e.get("rel_change_vs_first")
            v = rel * 100 if _is_num(rel) else math.nan
            vals.append(v)
            ci = e.get("ci95")
            errs.append(ci / abs(base_mean) * 100 if _is_num(ci) and _is_num(base_mean) and base_mean else 0.0)
            if lower is None or not math.isfinite(v) or v == 0:
                cols.append(_NEUTRAL)
            else:
                cols.append(_BETTER if (v < 0) == lower else _WORSE)
        ax.barh(ys, [0 if math.isnan(v) else v for v in vals], color=cols, height=0.62,
                xerr=errs, error_kw={"elinewidth": 0.8, "capsize": 2, "ecolor": "#333"})
        ax.axvline(0, color="#444", lw=0.8)
        lim = max([abs(v) + er for v, er in zip(vals, errs) if math.isfinite(v)] + [1.0])
        ax.set_xlim(-lim * 1.35, lim * 1.35)
        ax.xaxis.set_major_locator(MaxNLocator(5, symmetric=True))
        for y, v, cell, er in zip(ys, vals, others, errs):
            mark = by.get((key, cell), {}).get("significance") or ""
            if math.isnan(v):
                ax.text(0, y, " n/a", va="center", fontsize=7, color="#777")
            elif mark:
                ax.text(v + (er if v >= 0 else -er), y, f" {mark} " if v >= 0 else f" {mark} ", va="center",
                        ha="left" if v >= 0 else "right", fontsize=8, fontweight="bold")
        unit_label = _metric_label(key, with_direction=False)
        ax.set_title(unit_label + ("" if lower is None else f"\n{'lower' if lower else 'higher'} is better"),
                     fontsize=8.5)
        ax.set_xlabel(f"change vs {c.baseline} [%]", fontsize=8)
        ax.grid(axis="x", color="#ececec", lw=0.6)
        ax.set_axisbelow(True)
        ax.set_yticks(ys, others)
    axes[0, 0].invert_yaxis()  # the first configuration on top (the axes share y)
    fig.suptitle(f"{_compare_title(c)}: change of each mean against the baseline {c.baseline}", x=0.01, ha="left",
                 fontsize=10)
    cap = (f"Change of each configuration's mean against {c.baseline}'s, in per cent of the baseline's. "
           f"Green: better, magenta: worse, grey: the metric declares no direction. Whiskers: the 95 % "
           f"confidence interval of the configuration's mean, relative to the baseline's mean (held fixed). "
           f"* p < 0.05, ** p < 0.01 ({c.test}, from compare.json).")
    return fig, cap


def _compare_table(c: _Compare, metrics: list[str], by: dict) -> str:
    head = "".join(f"<th>{_e(cell)}{' (baseline)' if cell == c.baseline else ''}</th>" for cell in c.cells)
    rows = []
    for k in metrics:
        cells = []
        for cell in c.cells:
            e = by.get((k, cell))
            if e is None:
                cells.append("<td class=\"num\">–</td>")
                continue
            mean = e["mean"] if _is_num(e["mean"]) else None
            text = _sig(mean) + (f" ±{_sig(e['ci95'], 2)}" if _is_num(e.get("ci95")) else "")
            rel = e.get("rel_change_vs_first")
            if _is_num(rel):
                mark = f" {_e(e['significance'])}" if e.get("significance") else ""
                text += f'<br><span class="chg">{rel * 100:+.1f}%{mark}</span>'
            cells.append(f"<td class=\"num\">{text}</td>")
        rows.append(f"<tr><th>{_e(_metric_label(k, with_direction=False))}</th>{''.join(cells)}</tr>")
    legend = ("Mean over the seeds ± the half-width of its 95 % confidence interval (Student's t); below it, "
              f"the change against {c.baseline} (* p &lt; 0.05, ** p &lt; 0.01, {_e(c.test)}).")
    return (f'<p class="meta">{legend}</p><div class="scroll"><table class="summary"><thead><tr><th>metric</th>'
            f"{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>")


# ----------------------------------------------------------------------------- a sweep


def _sweep_groups(df):
    """The sweep's panels: one per (platform, workload, duration) present, and in each, per
    configuration (the columns that vary: scheduler, governor, idle governor, knobs), its
    rows over the seeds."""
    config_cols = [c for c in ("scheduler", "governor", "idle_governor") if c in df.columns]
    config_cols += sorted(c for c in df.columns if c.startswith("knob."))
    varying = [c for c in config_cols if df[c].astype(str).nunique() > 1]
    if not varying:
        varying = ["scheduler"]
    panel_cols = [c for c in ("platform", "workload", "duration_s") if c in df.columns]
    return panel_cols, varying


def _config_label(row: dict, varying: list[str]) -> str:
    parts = []
    sched_gov = [str(row[c]) for c in ("scheduler", "governor") if c in varying]
    if sched_gov:
        parts.append("/".join(sched_gov))
    for c in varying:
        if c in ("scheduler", "governor"):
            continue
        name = c[len("knob."):] if c.startswith("knob.") else c
        parts.append(f"{name}={row[c]}" if c.startswith("knob.") else str(row[c]))
    return " ".join(parts)


@_styled
def sweep_figures(path: Path) -> Figures:
    """The figures of a sweep directory (sweep.parquet)."""
    from matplotlib.figure import Figure

    df = _read_sweep(Path(path))
    out = Figures("sweep", "")
    ok = df[df["error"].isna()] if len(df) else df
    failed = len(df) - len(ok)
    if failed:
        out.notes.append(f"{failed} failed cell{'s' if failed != 1 else ''} (their rows hold an error): not drawn")
    panel_cols, varying = _sweep_groups(df)
    platforms = sorted(df["platform"].astype(str).unique()) if len(df) else []
    out.title = f"sweep of {len(df)} cell{'s' if len(df) != 1 else ''} on {', '.join(platforms) or 'no platform'}"
    if ok.empty:
        out.notes.append("energy against quality: the sweep has no successful row")
        out.table = _sweep_table([], varying)
        return out
    all_labels = sorted({_config_label(r, varying) for r in ok.to_dict("records")})
    colours = dict(zip(all_labels, _palette(len(all_labels))))

    panels = []
    for key, rows in ok.groupby(panel_cols, sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        info = dict(zip(panel_cols, key))
        wl = str(info.get("workload", ""))
        q, _why = _quality_keys(_headline(re.split(r"\s*\+\s*", wl)),
                                lambda k: k in rows.columns and rows[k].notna().any())
        title = " | ".join([str(info.get("platform", "")), _workload_title(wl)]
                           + ([f"{info['duration_s']:g} s"] if _is_num(info.get("duration_s")) else []))
        if not q:
            out.notes.append(f"{title}: no headline metric and no {FALLBACK_QUALITY}")
            continue
        pts, table_rows = [], []
        for label in all_labels:
            sel = [r for r in rows.to_dict("records") if _config_label(r, varying) == label]
            if not sel:
                continue
            x, xci, n = _mean_ci([r.get(q[0]) for r in sel])
            y, yci, ny = _mean_ci([r.get("energy_j") for r in sel])
            pts.append((label, *colours[label], x, xci, y, yci, False))
            table_rows.append((title, label, min(n, ny), q[0], x, xci, y, yci))
        panels.append((title, q[0], pts, table_rows))
    out.table = _sweep_table([r for p in panels for r in p[3]], varying)
    if not panels:
        return out
    ncol = min(2, len(panels))
    nrow = math.ceil(len(panels) / ncol)
    fig = Figure(figsize=(4.9 * ncol + 2.8, 0.7 + 3.9 * nrow), layout="constrained")
    axes = fig.subplots(nrow, ncol, squeeze=False)
    bars = False
    overlaps = ""
    seen: dict[str, Any] = {}
    for j, ax in enumerate(axes.flat):
        if j >= len(panels):
            ax.set_visible(False)
            continue
        title, q, pts, _rows = panels[j]
        bars |= _energy_quality_axes(ax, pts, q)
        overlaps += _coincident(pts).replace(" Drawn", f" {title}: drawn")
        ax.set_title(title, fontsize=9)
        for h, lab in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(lab, h)
    fig.legend(list(seen.values()), list(seen.keys()), loc="outside right upper", frameon=False,
               title="configuration (" + ", ".join(v[len("knob."):] if v.startswith("knob.") else v
                                                    for v in varying) + ")")
    seeds = int(ok["seed"].nunique())
    fig.suptitle(f"{out.title}: energy against quality, per configuration", x=0.01, ha="left", fontsize=10)
    cap = (f"One panel per platform, workload and duration; one point per configuration, the mean over its "
           f"{seeds} seed{'s' if seeds != 1 else ''}"
           + (", with the 95 % confidence interval of each mean (Student's t) on both axes." if bars else
              " (one seed: no interval).")
           + f" Quality axis: the workload's headline metric, else {FALLBACK_QUALITY}." + overlaps)
    out.figures.append(("energy_quality", fig, cap))
    return out


def _sweep_table(rows: list[tuple], varying: list[str]) -> str:
    if not rows:
        return ""
    body = []
    for title, label, n, q, x, xci, y, yci in rows:
        unit = _metric_unit(q)
        body.append(f"<tr><td>{_e(title)}</td><td>{_e(label)}</td><td class=\"num\">{n}</td>"
                    f"<td class=\"num\">{_sig(y)}{(' ±' + _sig(yci, 2)) if yci is not None else ''}</td>"
                    f"<td>{_e(q)}</td><td class=\"num\">{_sig(x)}{(' ±' + _sig(xci, 2)) if xci is not None else ''}"
                    f"{(' ' + _e(unit)) if unit else ''}</td></tr>")
    return ('<p class="meta">Means over the seeds ± the half-width of the 95 % confidence interval (Student\'s t).'
            '</p><div class="scroll"><table class="summary"><thead><tr><th>panel</th><th>configuration</th>'
            '<th>seeds</th><th>energy [J]</th><th>quality metric</th><th>quality</th></tr></thead><tbody>'
            + "".join(body) + "</tbody></table></div>")


# ----------------------------------------------------------------------------- files


def _render(fig, fmt: str) -> bytes:
    """A figure as PNG or SVG bytes, through the Agg canvas (not pyplot's)."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    with matplotlib.rc_context(_RC):
        if fmt == "svg":
            fig.savefig(buf, format="svg", metadata={"Date": None})
        else:
            fig.savefig(buf, format="png", dpi=_PNG_DPI, metadata={"Software": None})
    return buf.getvalue()


def _svg_inline(svg: str, prefix: str, label: str) -> str:
    """A matplotlib SVG made to sit inside an HTML page beside others: no prolog, no
    metadata, every id prefixed (matplotlib numbers its groups alike in every figure), and
    its global <style> (which the page would apply to everything) on the root instead."""
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"\s*<metadata>.*?</metadata>", "", svg, flags=re.S)
    svg = re.sub(r'\s*<style type="text/css">.*?</style>', "", svg, flags=re.S)
    svg = re.sub(r"\s*<defs>\s*</defs>", "", svg)
    ids = set(re.findall(r'\sid="([^"]+)"', svg))

    def sub(m: re.Match) -> str:
        return m.group(1) + prefix + m.group(2) if m.group(2) in ids else m.group(0)

    svg = re.sub(r'(\sid="|#)([A-Za-z_][\w.:-]*)(?=["\)])', sub, svg)
    return svg.replace("<svg ", f'<svg role="img" aria-label="{_e(label)}" class="fig" '
                                'style="stroke-linejoin:round;stroke-linecap:butt" ', 1)


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:1.2em auto;max-width:1240px;
 color:#1b1b1b;line-height:1.4;padding:0 1em}
h1{font-size:1.35em;margin:.2em 0 .4em} h2{font-size:1.1em;margin:1.6em 0 .3em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:.86em;margin:.4em 0 .8em}
th,td{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}
thead th{background:#f1f3f5} tbody th{font-weight:500;background:#fafafa}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.chg{color:#555;font-size:.9em} .meta{color:#555;font-size:.9em;margin:.3em 0}
.scroll{overflow-x:auto;max-width:100%}
.notes{background:#fdf3f8;border-left:4px solid #c51b7d;padding:.3em 1em;margin:.6em 0}
figure{margin:.8em 0} svg.fig{max-width:100%;height:auto} figcaption{font-size:.86em;color:#444;max-width:62em}
"""


def _page(f: Figures, svgs: list[tuple[str, str, str]], source: Path) -> str:
    kind = {"run": "run", "compare": "comparison", "sweep": "sweep"}[f.kind]
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>hetsched {kind}: {_e(f.title)}</title><style>{_CSS}</style></head><body>",
             f"<h1>hetsched {kind}: {_e(f.title)}</h1>",
             f'<p class="meta">drawn from {_e(source)}</p>']
    if f.notes:
        parts.append('<div class="notes"><p><b>Not drawn</b></p><ul>'
                     + "".join(f"<li>{_e(n)}</li>" for n in f.notes) + "</ul></div>")
    if f.table:
        parts.append(f"<h2>Summary</h2>{f.table}")
    for name, svg, cap in svgs:
        parts.append(f'<figure id="{_e(name)}">{svg}<figcaption>{_e(cap)}</figcaption></figure>')
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _check_formats(formats: Sequence[str]) -> tuple[str, ...]:
    if isinstance(formats, str):
        formats = (formats,)
    fmts = tuple(dict.fromkeys(formats))
    if not fmts:
        raise InputError("--format", "format", "at least one of: " + ", ".join(PLOT_FORMATS))
    for f in fmts:
        if f not in PLOT_FORMATS:
            raise UnknownNameError("--format", "format", str(f), PLOT_FORMATS)
    return fmts


_BUILDERS: dict[str, Callable[[Path], Figures]] = {"run": run_figures, "compare": compare_figures,
                                                   "sweep": sweep_figures}


def plot_dir(path: Path, formats: tuple[str, ...] = ("png",), notes: list[str] | None = None) -> list[Path]:
    """Draw the result directory ``path`` (a run, a comparison, a sweep, or several of
    them) into ``path/plots/`` and return the files written, in order.

    ``formats``: any of ``png``, ``svg`` (each figure its own file, ``KIND_NAME.EXT``) and
    ``html`` (one self-contained page per kind, ``KIND.html``: every figure inline as SVG,
    the summary table, and what was not drawn). Every file is written under a temporary
    name and renamed once all are complete, so an interrupted call leaves the earlier
    plots, or none, never half a file. What a directory cannot give is appended to
    ``notes`` (if given) as one line each, ``KIND: what, why``, and said in the figures.

    Raises :class:`hetsched.errors.InputError` (one line naming the path or file) when
    ``path`` is not a result directory or a file in it is missing or malformed.
    """
    from hetsched.outputs import OutputSet

    fmts = _check_formats(formats)
    root = Path(path)
    kinds = detect_kinds(root)
    built = [_BUILDERS[k](root) for k in kinds]  # every file read and checked before anything is written
    # all or none (hetsched.outputs): a plots/ this call made goes again if nothing is drawn
    with OutputSet(root / PLOTS_DIR, option="plots") as outs:
        write = outs.write
        for f in built:
            svgs = []
            for name, fig, cap in f.figures:
                svg = _render(fig, "svg") if {"svg", "html"} & set(fmts) else b""
                for fmt in fmts:
                    if fmt in ("png", "svg"):
                        write(f"{f.kind}_{name}.{fmt}", svg if fmt == "svg" else _render(fig, fmt))
                if "html" in fmts:
                    svg = svg.decode("utf-8")
                    svgs.append((name, _svg_inline(svg, f"{f.kind}-{name}-", f"{f.title}: {name}"), cap))
            if "html" in fmts:
                write(f"{f.kind}.html", _page(f, svgs, root).encode("utf-8"))
        written = outs.commit()
    if notes is not None:
        notes.extend(f"{f.kind}: not drawn: {n}" for f in built for n in f.notes)
    return written
