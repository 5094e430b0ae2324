"""The Python face of the engine: :class:`Simulation` (build, step, observe, set knobs)
and :class:`Result` (the ``result.json`` document, with pandas views).

>>> from hetsched import Simulation
>>> sim = Simulation(platform="gs101", workload="phone-mix", governor="schedutil", seed=1)
>>> res = sim.run(2.0)                      # seconds of simulated time
>>> round(res.energy_j, 3) > 0
True

A controller steps it: ``sim.run_until(t_ns)``, ``sim.observe()``, ``sim.set_knob(...)``.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import threading
import time
import warnings
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from hetsched import _engine
from hetsched import _input
from hetsched.errors import InputError, UnknownNameError
from hetsched.platforms import Platform, load_platform
from hetsched.policy import Policy, bind, checked_policy, engine_args, is_policy_file, load_policy
from hetsched.workloads.builtin import _is_file_arg, resolve_workloads
from hetsched.workloads.metrics import check_metric_defs, compute_metrics
from hetsched.workloads.rtapp import errors_located

__all__ = ["Simulation", "Result", "knob_table", "flat_metrics", "SCHEDULERS", "GOVERNORS", "DEFAULT_DURATION_S",
           "ENGINE_VERSION", "energy_model_of_platform", "energy_model_of_table"]

# the engine's registry of scheduler policies (crates/hetsched-core/src/policies/mod.rs)
POLICIES: dict[str, dict] = {p["name"]: p for p in _engine.policies()}
# the policies the engine runs alone, and those a userspace controller steps beside it
SCHEDULERS: dict[str, str] = {n: p["summary"] for n, p in POLICIES.items() if not p["controller"]}
CONTROLLER_SCHEDULERS: dict[str, str] = {n: p["summary"] for n, p in POLICIES.items() if p["controller"]}
# the policies of a switcher platform, and only of one (the big.LITTLE switcher study, Kim et al.)
SWITCHER_SCHEDULERS: tuple[str, ...] = tuple(n for n, p in POLICIES.items() if p["switcher_platform"])
GOVERNORS: dict[str, str] = dict(_engine.governors())
#: the hooks a Python policy may define, and every hook of the engine's policies
POLICY_HOOKS: tuple[str, ...] = tuple(_engine.POLICY_HOOKS)
ENGINE_HOOKS: tuple[str, ...] = tuple(_engine.ENGINE_HOOKS)
#: the most items (migrations, counters) one call of a Python policy's hook may return
MAX_HOOK_ITEMS: int = _engine.MAX_HOOK_ITEMS

#: The kernel's bound on an Energy Model's size for EAS (kernel/sched/topology.c,
#: EM_MAX_COMPLEXITY): perf domains x (performance states + CPUs).
EM_MAX_COMPLEXITY = 2048


def default_policy(platform: "Platform", governor: str | None = None) -> tuple[str, str, str]:
    """The scheduler and governor a platform runs when none is named, and why, as the kernel
    decides (kernel/sched/topology.c, build_perf_domains): EAS where every perf domain has
    an Energy Model, the CPUs' capacities differ, the governor is schedutil and the model is
    small enough (EM_MAX_COMPLEXITY); a switcher platform runs the switcher's own scheduler
    under ondemand; CFS elsewhere. Returns (scheduler, governor, why)."""
    if platform.switcher:
        return ("legacy", governor or "ondemand",
                "a switcher platform runs the switcher's own scheduler under ondemand, as its study did")
    gov = governor or "schedutil"
    spec = platform.to_spec()
    clusters = spec["clusters"]
    asymmetric = len({c["capacity_orig"] for c in clusters}) > 1
    has_em = all(o.get("power_uw", 0) > 0 for c in clusters for o in c["opps"])
    complexity = len(clusters) * (sum(len(c["opps"]) for c in clusters) + sum(len(c["cpus"]) for c in clusters))
    if asymmetric and has_em and gov == "schedutil" and complexity <= EM_MAX_COMPLEXITY:
        return "eas", gov, ("an Energy Model and CPUs of different capacities under schedutil: "
                            "the kernel enables EAS")
    why = ("the CPUs' capacities are all equal" if not asymmetric else "no Energy Model" if not has_em
           else f"EAS needs schedutil, not {gov}" if gov != "schedutil"
           else f"an Energy Model too large for EAS ({complexity} > {EM_MAX_COMPLEXITY})")
    return "cfs", gov, f"{why}: the kernel runs CFS (EEVDF) without EAS"
IDLE_GOVERNORS: dict[str, str] = dict(_engine.idle_governors())
KERNEL_PROFILES: dict[str, str] = {name: about for name, _, about in _engine.kernel_profiles()}
#: the kernel release each profile follows (its sources' version), recorded in result.json
KERNEL_RELEASES: dict[str, str] = {name: release for name, release, _ in _engine.kernel_profiles()}
# the view of the engine's state a Python policy's hook is handed (policy.py)
SchedView = _engine.SchedView
# the version every result document and sweep row carries
ENGINE_VERSION: str = _engine.__version__
# GTS and MediaTek's hps: `--set hotplug=NAME` (hotplug.rs; docs/schedulers.md)
HOTPLUG_POLICIES: dict[str, str] = {
    "none": "every CPU stays online (the default)",
    "off": "same as none",
    "hps": "MediaTek's hot plug strategy: every 40 ms keep online only the CPUs the load needs (= hotplug.hps=1)",
}
DEFAULT_KERNEL = "mainline-6.12"
# the trace formats the engine writes (crates/hetsched-core/src/trace/), with a file name each
TRACE_FORMATS: dict[str, str] = {
    "perfetto": "trace.perfetto-trace",
    "ftrace": "trace.txt",
    "chrome": "trace.json",
}
DEFAULT_DURATION_S = 10.0
# a workload whose tasks all end runs until they have, for at most this long
UNTIL_EXIT_LIMIT_S = 3600.0


def registered_policies() -> list[dict]:
    """Every policy of the engine's registry: name, summary, source, knobs, differences,
    status, controller (``module:Class`` of a userspace controller, or None) and
    requirements (``switcher_platform``, ``fair``)."""
    return _engine.policies()


def _controller_options(knobs: dict, scheduler: str) -> dict:
    """Takes out of ``knobs`` the options of a userspace controller: the names the engine's
    knob table does not have, in a family (``learning.``) a controller's registry line
    lists. One that belongs to another policy's controller is an input error."""
    engine = _knobs_by_name()
    options = {}
    for name in [k for k in knobs if k not in engine]:
        owners = [p["name"] for p in POLICIES.values() if p["controller"]
                  and any(f.endswith(".") and name.startswith(f) for f in p["knobs"])]
        if not owners:
            continue  # not a controller's: _check_knobs names it as unknown
        if scheduler not in owners:
            family = name.split(".", 1)[0]
            raise InputError("--set", name, f"{family}.* only with --scheduler {' or '.join(owners)}",
                             got=scheduler)
        options[name] = knobs.pop(name)
    return options


def _controller_class(path: str):
    """The class a registry line names as ``module:Class``."""
    import importlib

    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)


def knob_table() -> list[dict]:
    """Every knob: name, default, min, max, unit, source, description (from the engine)."""
    return _engine.knobs()


@functools.lru_cache(maxsize=1)
def _knobs_by_name() -> dict[str, dict]:
    # the engine's table is fixed when it is built; every Simulation checks its knobs
    # against it, so it is converted from the engine once per process (read only)
    return {k["name"]: k for k in knob_table()}


#: The engine's limits on one run (crates/hetsched-core/src/limits.rs): the tasks it
#: creates (the kernel's default pid_max), and the steps it takes at one simulated instant
#: before it calls the workload one that stops time.
MAX_TASKS: int = _engine.MAX_TASKS
#: cost.context_switch_ns where the platform measured none (a replay takes the switch the
#: engine charges off each recorded run)
DEFAULT_CONTEXT_SWITCH_NS: int = _engine.DEFAULT_CONTEXT_SWITCH_NS
NO_PROGRESS_STEPS: int = _engine.NO_PROGRESS_STEPS

#: The engine was built with profile-guided optimisation (scripts/build-pgo.sh): the same
#: results, sooner (crates/hetsched-py/build.rs reads it from the compiler's flags).
PROFILE_GUIDED: bool = _engine.PROFILE_GUIDED


#: Knobs that set the scheduler's own modelled costs to zero (docs/mechanisms/costs.md):
#: a run then charges the tasks' work alone, as hand-worked timings count it.
NO_COSTS: dict[str, float] = {k["name"]: 0.0 for k in _engine.knobs() if k["name"].startswith("cost.")}


# The built-in workloads this process resolved lately, as the JSON text the engine is given.
# A batch runs one workload on one platform and seed under several schedulers, governors
# and knobs, and a browsing session (thousands of frames) takes longer to resolve and
# write than its text takes to read back. A workload is kept only if reading its text
# back gives it exactly (no tuples, no keys that are not text, no NaN); the least recently
# used go first once the texts exceed _RESOLVED_KEEP_CHARS (a batch's seeds of every
# workload it runs: 36 browsing sessions of 0.7 MB, 400 PCMark + phone-mix runs of 10 kB).
_RESOLVED: OrderedDict[tuple, str] = OrderedDict()
_RESOLVED_KEEP_CHARS = 32_000_000


def _resolved_workload(args: list[str], platform_spec: dict, seed: int) -> tuple[dict, str]:
    """(WorkloadSpec, its JSON text) of ``--workload`` arguments: resolve_workloads's,
    or a fresh copy of the same resolution earlier in this process. Files are read anew
    each time (they may have changed)."""
    if any(_is_file_arg(a) for a in args):
        spec = resolve_workloads(args, platform_spec, seed)
        return spec, json.dumps(spec)
    key = (tuple(args), hashlib.sha256(json.dumps(platform_spec, sort_keys=True).encode()).digest(), seed)
    text = _RESOLVED.get(key)
    if text is not None:
        _RESOLVED.move_to_end(key)
        return json.loads(text), text
    spec = resolve_workloads(args, platform_spec, seed)
    text = json.dumps(spec)
    if len(text) <= _RESOLVED_KEEP_CHARS // 4 and json.loads(text) == spec:
        _RESOLVED[key] = text
        kept = sum(len(t) for t in _RESOLVED.values())
        while kept > _RESOLVED_KEEP_CHARS:
            kept -= len(_RESOLVED.popitem(last=False)[1])
    return spec, text


#: engines whose last reference went away in another thread than their own: (their
#: thread, the engine), freed by their own thread when it next makes a Simulation
_ORPHANS: list = []
#: reentrant: a garbage collection while a thread holds it (its lists' allocations) may
#: finalize another thread's engine in this one, whose __del__ takes it again
_ORPHANS_LOCK = threading.RLock()


class _ThreadBound:
    """The engine, used only from the thread that made it. The engine is a PyO3 class that
    holds the simulation's Rust state unsynchronised (``unsendable``); PyO3 answers a call
    from another thread with a panic and a Rust backtrace on stderr. This wrapper answers it
    with one RuntimeError that says what to do instead, before the engine is touched.

    Freeing it is a use too: PyO3 refuses to drop the engine in another thread, and raises
    its RuntimeError into whatever code of that thread let the last reference go (a
    ``list.clear()``, a garbage collection). So an engine let go in another thread is kept,
    with one RuntimeWarning, and freed by its own thread when that thread next makes a
    Simulation (kept to the process's end if it never does, as PyO3 would keep it)."""

    __slots__ = ("_engine", "_thread")

    def __init__(self, engine: Any) -> None:
        self._engine = engine
        # the Thread object, not its ident: Python hands an ended thread's ident to a new one
        self._thread = threading.current_thread()
        if _ORPHANS:
            mine = []
            with _ORPHANS_LOCK:
                # in place, from the end: an orphan appended meanwhile (a collection in
                # this loop) is neither lost nor freed in the wrong thread
                for i in range(len(_ORPHANS) - 1, -1, -1):
                    if _ORPHANS[i][0] is self._thread:
                        mine.append(_ORPHANS.pop(i))
            del mine  # dropped here, in their own thread

    def __del__(self) -> None:
        try:
            engine, owner = self._engine, self._thread
        except AttributeError:   # never set (an instance copy.copy made)
            return
        here = threading.current_thread()
        if here is not owner:
            with _ORPHANS_LOCK:
                _ORPHANS.append((owner, engine))
            warnings.warn(f"a Simulation made in thread {owner.name!r} was let go in thread {here.name!r}: "
                          "its engine is kept until that thread makes another Simulation, or to the "
                          "process's end if it never does (free a Simulation in the thread that made it)",
                          RuntimeWarning)

    def __getattr__(self, name: str) -> Any:
        if name in _ThreadBound.__slots__:   # unset (an instance copy.copy made): no recursion
            raise AttributeError(name)
        here = threading.current_thread()
        if here is not self._thread:
            raise RuntimeError(
                f"this Simulation was made in thread {self._thread.name!r} and is used from thread "
                f"{here.name!r}: a Simulation belongs to the thread that made it "
                "(make one per thread, or hand the work to that thread)")
        return getattr(self._engine, name)


def _check_knobs(knobs: Mapping[str, Any], source: str) -> dict[str, float]:
    table = _knobs_by_name()
    out = {}
    for name, value in knobs.items():
        if name not in table:
            raise UnknownNameError(source, "knob", name, table)
        k = table[name]
        if name == "util_aware.estimator":  # Kim et al.: E_A (eq. 2) = a = 0, E_B (eq. 3) = b = 1
            est = {"a": 0, "b": 1, "0": 0, "1": 1, "0.0": 0, "1.0": 1}.get(str(value).strip().lower())
            if est is None:
                raise InputError(source, name, "a or b (E_A, eq. 2, or E_B, eq. 3)", got=value)
            value = est
        # a finite number in the engine's range (NaN passes no comparison, so it is refused
        # by name, not by a range test)
        out[name] = _input.number(value, source, name, _input.Range(k["min"], k["max"], unit=k["unit"]))
    return out


@contextlib.contextmanager
def _policy_errors_as_options():
    """The engine names its policy document's fields (``policy: scheduler``,
    ``policy: knobs.NAME``); a user gave them as options (``--scheduler``, ``--governor``,
    ``--idle-governor``, ``--set NAME=...``)."""
    try:
        yield
    except InputError as e:
        if e.source == "policy" and e.field.startswith("knobs."):
            # a knob the engine checks against the run's other settings (WALT's window)
            raise InputError("--set", e.field.removeprefix("knobs."), e.expected, e.got) from None
        if e.source != "policy" or e.field not in ("scheduler", "governor", "idle_governor"):
            raise
        option = "--" + e.field.replace("_", "-")
        if isinstance(e, UnknownNameError):
            raise UnknownNameError(option, e.field, e.name, e.choices) from None
        raise InputError(option, e.field, e.expected, e.got) from None


class Simulation:
    """One simulated SoC running one workload under one policy.

    ``platform``: a built-in name or a JSON path, or a loaded :class:`Platform`.
    ``workload``: a built-in name (``NAME:k=v``), an rt-app JSON path, a list of those
    (run together), or a resolved WorkloadSpec dict.
    ``lower_bound``: True (the default), the engine solves the minimum-energy lower bound
    window by window as the run goes; False skips it (``energy_lower_bound_j`` is then
    None; nothing else changes); ``"lp"`` keeps the per-window work table and solves it
    after the run as one linear program with HiGHS (the reference the engine's solver is
    tested against: slower, and its memory grows with the run's length).
    ``scheduler``: a registered name, or a :class:`hetsched.Policy` written in Python (an
    instance or the class; ``result.json``'s ``scheduler`` is then its ``name``). It is
    ``cfs`` unless given, here: a script's results do not change with the platform's
    defaults. ``hetsched run`` and ``replay`` choose as the kernel does,
    :func:`default_policy` (eas where the platform has an Energy Model and asymmetric
    capacities).
    ``trace``: a scheduler trace in one of :data:`TRACE_FORMATS`: ``"perfetto"`` (Perfetto's
    protobuf), ``"ftrace"`` (``trace-cmd report`` text) or ``"chrome"`` (trace-event JSON;
    ``True`` means this one); :meth:`take_trace` hands it over (docs/traces.md).
    """

    def __init__(self, platform: str | Platform = "gs101", workload: str | list[str] | dict = "phone-mix",
                 scheduler: "str | Policy | type[Policy]" = "cfs", governor: str = "schedutil",
                 knobs: Mapping[str, Any] | None = None, seed: int = 0,
                 trace: bool | str = False, timeseries: bool = False, idle_governor: str = "menu",
                 lower_bound: bool | str = True):
        # the arguments' types, before anything is looked up by them
        if isinstance(platform, os.PathLike):
            platform = os.fspath(platform)
        if not isinstance(platform, (str, Platform)):
            raise InputError("--platform", "platform", "a platform name, a platform JSON path or a Platform",
                             got=platform)
        if isinstance(workload, os.PathLike):
            workload = os.fspath(workload)
        if not isinstance(workload, (str, dict)) and not (
                isinstance(workload, (list, tuple)) and workload
                and all(isinstance(w, (str, os.PathLike)) for w in workload)):
            raise InputError("--workload", "workload", "a workload name, an rt-app JSON path, a non-empty list of "
                             "those, or a WorkloadSpec dict", got=workload)
        for opt, value in (("--governor", governor), ("--idle-governor", idle_governor)):
            if not isinstance(value, str):
                raise UnknownNameError(opt, opt[2:].replace("-", " "), repr(value),
                                       GOVERNORS if opt == "--governor" else IDLE_GOVERNORS)
        # a policy written in Python runs on its base, a registered scheduler (policy.py);
        # `FILE.py:CLASS` names one in a file
        self.python_policy: Policy | None = None
        checked = None
        if isinstance(scheduler, str) and is_policy_file(scheduler):
            scheduler = load_policy(scheduler)
        if not isinstance(scheduler, str):
            checked = checked_policy(scheduler, SCHEDULERS, CONTROLLER_SCHEDULERS)
            self.python_policy = checked.policy
            scheduler, registered = checked.name, checked.base
        elif scheduler not in POLICIES:
            raise UnknownNameError("--scheduler", "scheduler", scheduler, POLICIES)
        else:
            registered = scheduler
        if governor not in GOVERNORS:
            raise UnknownNameError("--governor", "governor", governor, GOVERNORS)
        if idle_governor not in IDLE_GOVERNORS:
            raise UnknownNameError("--idle-governor", "idle governor", idle_governor, IDLE_GOVERNORS)
        seed = _input.seed(seed)
        if not isinstance(timeseries, bool):
            raise InputError("--timeseries", "timeseries", "True or False", got=timeseries)
        if not isinstance(trace, bool) and trace not in TRACE_FORMATS:
            raise InputError("--trace", "trace", f"True, False or a format ({', '.join(TRACE_FORMATS)})", got=trace)
        # True keeps its meaning from before the formats: the Chrome JSON
        trace_format = "chrome" if trace is True else trace or None
        self.platform = platform if isinstance(platform, Platform) else load_platform(platform)
        self.platform_spec = self.platform.to_spec()
        if isinstance(workload, dict):
            # a WorkloadSpec given whole: the engine checks what it reads; the metric
            # definitions only Python reads, and the text must be JSON at all
            check_metric_defs(workload, "workload")
            try:
                workload_json = json.dumps(workload, allow_nan=False)
            except (TypeError, ValueError, RecursionError) as e:
                raise InputError("workload", "(the WorkloadSpec)", "JSON types only (finite numbers, text, lists, "
                                 "objects with text keys)", got=_input.Shown(str(e).splitlines()[0][:80])) from None
            self.workload_spec = workload
        else:
            args = [workload] if isinstance(workload, str) else [os.fspath(w) for w in workload]
            self.workload_spec, workload_json = _resolved_workload(args, self.platform_spec, seed)
        self.scheduler, self.governor, self.seed = scheduler, governor, seed
        self.idle_governor = idle_governor
        try:
            knobs = dict(knobs or {})
        except (TypeError, ValueError):
            raise InputError("--set", "knobs", "a mapping of knob names to values", got=knobs) from None
        for name in knobs:
            if not isinstance(name, str):
                raise InputError("--set", "knobs", "knob names (text)", got=name)
        # `--set kernel=PROFILE` selects the kernel profile; every other knob is a number
        self.kernel = str(knobs.pop("kernel", DEFAULT_KERNEL))
        if self.kernel not in KERNEL_PROFILES:
            raise UnknownNameError("--set", "kernel", self.kernel, KERNEL_PROFILES)
        # hps (MediaTek's hot plug): `--set hotplug=hps` is the named form of `hotplug.hps=1` (`none`/`off`: 0)
        if "hotplug" in knobs:
            hp = str(knobs.pop("hotplug")).strip().lower()
            if hp not in HOTPLUG_POLICIES:
                raise UnknownNameError("--set", "hotplug", hp, HOTPLUG_POLICIES)
            if "hotplug.hps" in knobs:  # both forms given: the numeric one must still be a value
                _check_knobs({"hotplug.hps": knobs["hotplug.hps"]}, "--set")
            knobs["hotplug.hps"] = 1.0 if hp == "hps" else 0.0
        # a userspace controller's options (Learning EAS's `--set learning.*`)
        self._controller = None
        controller_opts = _controller_options(knobs, registered)
        self.knobs = _check_knobs(knobs, "--set")
        self.trace_format, self.timeseries_enabled = trace_format, timeseries
        # the engine solves the bound window by window as the run goes (lower_bound.rs);
        # "lp" keeps the per-window work table instead and solves it with HiGHS after the
        # run (the reference the engine's solver is tested against)
        if lower_bound not in (True, False, "lp"):
            raise InputError("lower_bound", "lower bound", "True, False or 'lp'", got=lower_bound)
        self.lower_bound_mode = lower_bound
        self.lower_bound_enabled = lower_bound is not False
        policy = {"scheduler": registered, "governor": governor, "idle_governor": idle_governor,
                  "kernel": self.kernel,
                  "knobs": self.knobs,
                  "trace": self.trace_enabled, "trace_format": trace_format or "chrome",
                  "timeseries": timeseries,
                  "lower_bound": {True: "stream", False: "off", "lp": "record"}[self.lower_bound_mode]}
        # what the engine refuses arrives as hetsched.errors' own InputError / UnknownNameError
        # (crates/hetsched-py/src/error.rs), already naming the document, field and expectation
        py_policy = {} if checked is None else engine_args(checked, self.platform, self.kernel)
        # a workload from rt-app files: the engine's field is re-addressed to the file's
        with errors_located(self.workload_spec), _policy_errors_as_options():
            self._engine = _ThreadBound(_engine.Engine(json.dumps(self.platform_spec),
                                                       workload_json or json.dumps(self.workload_spec),
                                                       json.dumps(policy), **py_policy))
        if checked is not None:  # only now: a Simulation that refused its arguments leaves it free
            bind(checked.policy)
        self._wall_s = 0.0
        self._task_names: list[str] = []  # marks() names tasks from these, forks added as it meets them
        self._stop_reason = "duration"
        # a policy with a userspace controller (its registry line names the class): the
        # controller steps the engine from here on
        if POLICIES[registered]["controller"]:
            self._controller = _controller_class(POLICIES[registered]["controller"]).from_options(
                self, controller_opts)

    @property
    def controller(self):
        """The userspace controller of the policy (Learning EAS's for ``learning-eas``),
        else None."""
        return self._controller

    @property
    def learning(self):
        """The Learning EAS controller (``scheduler="learning-eas"``), else None."""
        return self._controller

    def __repr__(self) -> str:
        return (f"Simulation(platform={self.platform.name!r}, workload={Result._short(self.workload_spec.get('name') or '')!r}, "
                f"scheduler={self.scheduler!r}, governor={self.governor!r}, now={self.now_ns / 1e9:g} s)")

    # -- stepping -----------------------------------------------------------------
    @property
    def now_ns(self) -> int:
        """The simulated clock, in ns since the run began."""
        return self._engine.now_ns

    def run_until(self, t_ns: int) -> None:
        """Advance to absolute simulated time ``t_ns`` (every event before it runs), at
        most ``hetsched._input.MAX_SIM_NS`` (30 simulated days)."""
        t_ns = int(_input.number(t_ns, "run_until()", "t_ns", _input.Range(
            0, _input.MAX_SIM_NS, text=f"a simulated time in ns in [0, {_input.MAX_SIM_NS}] (30 days)")))
        t0 = time.perf_counter()
        # an engine panic arrives as hetsched.errors.EngineError; a limit that stops a
        # runaway workload (crates/hetsched-core/src/limits.rs) as an InputError
        with errors_located(self.workload_spec):
            if self._controller is not None:  # the controller acts on the way
                self._controller.run_until(t_ns)
            else:
                self._engine.run_until(t_ns)
        self._wall_s += time.perf_counter() - t0

    def step_engine(self, t_ns: int) -> Any:
        """Advance the engine alone to ``t_ns``: a controller's own stepping (Learning
        EAS acts between these steps; :meth:`run_until` goes through the controller).
        Not counted in the run's wall time: the caller's ``run_until`` counts it."""
        with errors_located(self.workload_spec):
            return self._engine.run_until(int(t_ns))

    @property
    def deadlocked(self) -> bool:
        """Whether a deadlock stopped the run (hetsched.deadlock): the clock stays where
        it formed, later steps run nothing, and the result's ``deadlock`` says which tasks
        and objects."""
        return self._engine.deadlocked

    def runs_until_exit(self, duration_s: float | None = None) -> bool:
        """True when a run with this ``duration_s`` goes until every task has ended: no
        duration given, none in the workload (rt-app's ``duration: -1``), and every task's
        loops are finite."""
        return (duration_s is None and not self.workload_spec.get("duration_ns")
                and self._engine.workload_is_finite)

    def run_until_exited(self, limit_s: float = UNTIL_EXIT_LIMIT_S) -> bool:
        """Run until every task has ended (the clock stops at the last exit), or for
        ``limit_s`` more simulated seconds; True if every task ended."""
        limit_s = _input.duration_s(limit_s, "run_until_exited()", "limit_s")
        t0 = time.perf_counter()
        end = min(self.now_ns + round(limit_s * 1e9), _input.MAX_SIM_NS)
        with errors_located(self.workload_spec):
            if self._controller is not None:
                ended = bool(self._controller.run_until(end, self._engine.run_until_exited))
            else:
                ended = self._engine.run_until_exited(end)
        self._wall_s += time.perf_counter() - t0
        self._stop_reason = "all tasks exited" if ended else f"limit of {limit_s:g} s"
        return ended

    def duration_ns(self, duration_s: float | None = None) -> int:
        """``duration_s`` in ns, validated: positive, and the run's end at most
        ``hetsched._input.MAX_SIM_S`` (30 simulated days; why there: _input.py). None
        means the workload's own duration, else 10 s."""
        source, field_ = "--duration", "duration_s"
        if duration_s is None:
            d = self.workload_spec.get("duration_ns")
            duration_s = d / 1e9 if isinstance(d, (int, float)) and d else DEFAULT_DURATION_S
            source, field_ = f"workload {self.workload_spec.get('name') or ''}".strip(), "duration"
        duration_s = _input.duration_s(duration_s, source, field_)
        ns = round(duration_s * 1e9)
        if self.now_ns + ns > _input.MAX_SIM_NS:
            raise InputError(source, field_, f"a run ending within {_input.MAX_SIM_S} simulated seconds "
                             f"(30 days; it is at {self.now_ns / 1e9:g} s)", got=duration_s)
        return ns

    def run(self, duration_s: float | None = None) -> "Result":
        """Run for ``duration_s`` simulated seconds and return the result. Without a
        duration: the workload's own; else, if every task ends, until they have
        (rt-app's ``duration: -1``; at most an hour); else 10 s. The engine runs in steps
        of about a tenth of a second of wall time, so Ctrl-C stops a long run at once; the
        result is the same to the byte as one step's."""
        from hetsched.runner import run_stepped

        return run_stepped(self, duration_s)

    # -- observation and control ------------------------------------------------------
    def marks(self, since: int = 0) -> list[tuple[int, str, str]]:
        """The marks the workload's programs made so far (rt-app's ``mark`` events, in the
        order they happened), from the ``since``-th on: (time ns, task name, mark name),
        as a result's metrics read them. Cheap enough to call between steps: a caller that
        waits for a mark need not build a result to see it."""
        since = int(_input.number(since, "marks()", "since",
                                  _input.Range(0, None, integer=True, text="a mark index >= 0")))
        got = self._engine.marks_since(since)
        if not got:
            return []
        if len(self._task_names) <= max(ti for _, ti, _ in got):  # forks since the last call
            self._task_names += self._engine.task_names(len(self._task_names))
        mark_names = self.workload_spec.get("marks") or []
        return [(t, self._task_names[ti], mark_names[mi]) for t, ti, mi in got]

    def observe(self) -> dict:
        """Per-CPU util, util_avg, util_est, freq_khz, idle_state, nr_running, energy, and
        the counters (migrations attempted/succeeded, wakeups, context switches)."""
        return self._engine.observe()

    def set_knob(self, name: str, value: float) -> None:
        """Set a knob (a name of :func:`knob_table`) from now on, checked against its
        range, and record it among the configured ``knobs``."""
        if name == "kernel":
            raise InputError("set_knob()", "kernel", "the kernel profile to be chosen when the simulation is built",
                             got=value)
        v = _check_knobs({name: value}, "set_knob()")[name]
        self._engine.set_knob(name, v)
        self.knobs[name] = v

    def apply_knob(self, name: str, value: float) -> None:
        """A knob set from inside the run by a controller (Learning EAS's agents, every
        period), as the kernel's own code writes its tunable: straight to the engine,
        without :meth:`set_knob`'s range check (the controller bounds its own values) and
        not recorded among the configured ``knobs`` (the result reads the engine's)."""
        self._engine.set_knob(name, float(value))

    def knob_values(self) -> dict[str, float]:
        """Every knob's value in the engine now, by name (defaults included)."""
        return dict(self._engine.knob_values())

    # -- results ----------------------------------------------------------------------
    def engine_result(self) -> dict:
        """The engine's own result document at this instant (counters, metrics, tasks,
        CPUs): no header, no energy lower bound, no workload metrics, and unlike
        :meth:`result` it has no side effect (a controller's state is not saved), so a
        stepping caller may read it at every step."""
        return json.loads(self._engine.result_json())

    def result(self) -> "Result":
        """The :class:`Result` at this instant: ``result.json``'s document (header,
        engine figures, energy lower bound, workload metrics) and the time series if
        recorded. A controller saves its state with it."""
        doc = json.loads(self._engine.result_json())
        head = {
            "hetsched_version": ENGINE_VERSION,
            "platform": self.platform.name,
            "workload": self.workload_spec.get("name") or "",
            "scheduler": self.scheduler,
            "governor": self.governor,
            "idle_governor": self.idle_governor,
            "kernel": self.kernel,
            "kernel_release": KERNEL_RELEASES[self.kernel],
            "knobs": self.knob_values(),
            "seed": self.seed,
            "power_model": self.platform.power_model,
            "idle_power_model": self.platform.idle_power_model,
            "platform_notes": list(self.platform.notes),
            "wall_s": self._wall_s,
            "stop_reason": "deadlock" if self._engine.deadlocked else self._stop_reason,
        }
        doc = {**head, **doc}
        if "deadlock" in doc:  # named as the workload names its tasks' objects and events
            from hetsched.deadlock import describe

            doc["deadlock"] = describe(doc["deadlock"], self.workload_spec)
        # the least energy any schedule could have spent on the same work (lower_bound.py)
        lb = None
        bound = doc.pop("_lower_bound")
        if bound is not None and "energy_j" in bound:
            lb = bound["energy_j"]
        elif bound is not None:
            # recorded: asked for (lower_bound="lp"), or a platform whose power data the
            # engine's solver does not take (a negative cost above idle)
            from hetsched.lower_bound import energy_lower_bound
            try:
                lb = energy_lower_bound(bound, self.platform_spec, self.workload_spec,
                                        [t["name"] for t in doc["tasks"]]).energy_j
            except RuntimeError as e:  # a solver failure must not cost the user the run
                doc["lower_bound_error"] = str(e)
        doc["energy_lower_bound_j"] = lb
        doc["energy_over_bound"] = doc["energy_j"] / lb if lb else None
        # each workload's own metrics (frame drops, entry time, ...) beside the engine's
        doc["metrics"].update(compute_metrics(doc, self.workload_spec))
        # a controller saves its state with every result and reports under its own key
        if self._controller is not None:
            self._controller.add_to_result(doc)
        ts = self._engine.timeseries() if self.timeseries_enabled else None
        return Result(doc=doc, timeseries=ts)

    @property
    def trace_enabled(self) -> bool:
        """Whether the run records a trace (``trace_format`` names its format)."""
        return self.trace_format is not None

    def _trace_out(self, data: bytes | None) -> str | bytes | None:
        if data is None or self.trace_format == "perfetto":
            return data
        return data.decode()

    def take_trace(self) -> str | bytes | None:
        """The trace, closed at the current time: text for ``"chrome"`` (trace-event JSON)
        and ``"ftrace"`` (``trace-cmd report`` text), bytes for ``"perfetto"`` (a protobuf
        trace). After :meth:`drain_trace`, only what was recorded since the last drain."""
        return self._trace_out(self._engine.take_trace())

    def take_trace_bytes(self) -> bytes | None:
        """:meth:`take_trace` as bytes, whatever the format (for writing to a file)."""
        return self._engine.take_trace()

    def drain_trace(self) -> str | bytes | None:
        """The trace recorded since the last drain (text or bytes, as :meth:`take_trace`);
        the engine keeps none of it. A caller that appends each drain to a file, and
        :meth:`take_trace` at the end, writes the whole trace with memory flat in the run's
        length (``hetsched run --trace``)."""
        return self._trace_out(self._engine.drain_trace())

    def drain_trace_bytes(self) -> bytes | None:
        """:meth:`drain_trace` as bytes, whatever the format."""
        return self._engine.drain_trace()

    def drain_timeseries(self) -> dict | None:
        """The time series' rows sampled since the last drain, as columns; the engine keeps
        none of them (a later :meth:`result` holds only the rows after the last drain)."""
        return self._engine.drain_timeseries()


# the engine's Energy Model, built by the engine's own code (energy_model.py wraps it)
def energy_model_of_platform(platform_spec: dict) -> Any:
    """The native Energy Model of a platform spec (``Platform.to_spec()``)."""
    return _engine.EnergyModel.from_platform_json(json.dumps(platform_spec))


def energy_model_of_table(table: list) -> Any:
    """The native Energy Model of ``[(cpus, [(capacity, power_uw), ...]), ...]``; a table
    the engine refuses is an :class:`InputError` naming the field (error.rs)."""
    return _engine.EnergyModel.from_table(table)


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def flat_metrics(doc: dict, extended: bool = False) -> dict:
    """A result document's metrics as one flat dict, in this order: the engine's numeric
    metrics (as they are), ``counters.X`` with the policy's own as ``counters.policy.X``,
    then each workload's numbers as ``KEY.name`` (floats; the names `hetsched compare`
    shows). ``extended`` also keeps a workload's booleans (as 0/1) and lists of numbers,
    and the other nested counters as ``counters.X.name`` (what a sweep's Parquet columns
    leave out)."""
    out: dict[str, Any] = {}
    workload: dict[str, Any] = {}
    for key, val in doc.get("metrics", {}).items():
        if isinstance(val, dict):
            for name, x in val.items():
                if _number(x) or (extended and isinstance(x, bool)):
                    workload[f"{key}.{name}"] = float(x)
                elif extended and isinstance(x, list) and x and all(_number(v) for v in x):
                    workload[f"{key}.{name}"] = [float(v) for v in x]
        elif _number(val):
            out[key] = val
    for key, val in doc.get("counters", {}).items():
        if _number(val):
            out[f"counters.{key}"] = val
        elif isinstance(val, dict) and (extended or key == "policy"):
            out.update({f"counters.{key}.{name}": x for name, x in val.items() if _number(x)})
    out.update(workload)
    return out


@dataclass
class Result:
    """``result.json`` as a dict (``doc``), with pandas views (:meth:`to_pandas`)."""

    #: the result document, as ``result.json`` holds it
    doc: dict
    #: the time series' columns (``timeseries=True``), else None
    timeseries: dict | None = field(default=None, repr=False)

    def __getitem__(self, key: str) -> Any:
        """A top-level field of the document: ``res["cpus"]``."""
        return self.doc[key]

    @property
    def energy_j(self) -> float:
        """The energy of the whole run, in J (every CPU's and every cluster term's)."""
        return self.doc["energy_j"]

    @property
    def avg_power_mw(self) -> float:
        """The run's energy over its simulated duration, in mW."""
        return self.doc["avg_power_mw"]

    @property
    def metrics(self) -> dict:
        """The engine's metrics and, under each workload's key, the workload's own."""
        return self.doc["metrics"]

    def to_json(self) -> str:
        """The document as ``result.json``'s text."""
        return json.dumps(self.doc, indent=1, sort_keys=False) + "\n"

    @staticmethod
    def _short(text: str, limit: int = 48) -> str:
        # a list of workloads names them all; a repr stays one line
        return text if len(text) <= limit else text[:limit - 3] + "..."

    @staticmethod
    def _name_values(tree: Any, prefix: str = "") -> list[tuple[str, Any]]:
        # (dotted name, value) of every leaf, so a nested counter or a workload's list
        # of figures is a row like any other
        if isinstance(tree, dict):
            return [nv for k, v in tree.items()
                    for nv in Result._name_values(v, f"{prefix}.{k}" if prefix else str(k))]
        if isinstance(tree, list):
            return [nv for i, v in enumerate(tree) for nv in Result._name_values(v, f"{prefix}[{i}]")]
        return [(prefix, tree)]

    def _headline(self) -> list[tuple[str, str]]:
        d = self.doc
        return [("platform", str(d.get("platform", ""))),
                ("workload", str(d.get("workload", ""))),
                ("scheduler", str(d.get("scheduler", ""))),
                ("governor", str(d.get("governor", ""))),
                ("duration", f"{d.get('sim_duration_s', float('nan')):g} s"),
                ("energy", f"{d.get('energy_j', float('nan')):.4g} J"),
                ("average power", f"{d.get('avg_power_mw', float('nan')):.4g} mW")]

    def __repr__(self) -> str:
        h = dict(self._headline())
        return (f"Result({h['platform']}, {self._short(h['workload'])!r}, {self._short(h['scheduler'], 32)}/"
                f"{self._short(h['governor'], 24)}, {h['duration']}, {h['energy']}, {h['average power']})")

    def _repr_html_(self) -> str:
        import html

        rows = "".join(f"<tr><th style=\"text-align:left\">{html.escape(k)}</th><td>{html.escape(v)}</td></tr>"
                       for k, v in self._headline())
        return f"<table><caption>hetsched Result</caption>{rows}</table>"

    def to_pandas(self, trace: str | os.PathLike | None = None) -> dict:
        """DataFrames of the whole document:

        - ``cpus``, ``tasks``, ``clusters``: one row each, their scalar fields (and the
          ``phases`` list of a task, the ``cpus`` list of a cluster);
        - ``time_in_state`` (cluster, khz, seconds, time_in_state): each cluster's wall
          time at each frequency, busy or idle, also in cpufreq_stats' unit (10 ms, what
          ``policyN/stats/time_in_state`` prints);
        - ``freq_residency`` (cpu, cluster, khz, seconds): the time each CPU ran (was not
          idle) at each of its cluster's frequencies;
        - ``idle_residency`` (cpu, cluster, state, seconds): the time in each idle state;
        - ``cpu_time`` (pid, name, cpu, seconds): each task's run time on each CPU it ran on;
        - ``phases`` (pid, name, phase, ...): each task's rt-app phases;
        - ``metrics`` and ``counters`` (name, value): the run's metrics and counters, one
          row each, nested names joined with dots, a list's items as ``name[i]``;
        - ``run`` (name, value): every other field (the configuration, the lower bound,
          the policy's and the switcher's sections, ...), nested names joined with dots;
        - ``timeseries`` (if recorded), with ``t_s`` beside ``t_ns``;
        - ``events`` (ts_ns, cpu, comm, pid, event and the event's fields), when ``trace``
          is given: the run's ftrace text (``trace="ftrace"``'s :meth:`Simulation.take_trace`)
          or its file (``hetsched run --trace --trace-format ftrace``'s ``trace.txt``).
        """
        import pandas as pd

        d = self.doc
        cpus = pd.DataFrame([{k: v for k, v in c.items() if not isinstance(v, dict)} for c in d["cpus"]])
        tasks = pd.DataFrame([{k: v for k, v in t.items() if not isinstance(v, dict)} for t in d["tasks"]])
        clusters = pd.DataFrame(d["clusters"])
        freq = [{"cpu": c["cpu"], "cluster": c["cluster"], "khz": int(khz), "seconds": s}
                for c in d["cpus"] for khz, s in c.get("freq_residency_s", {}).items()]
        idle = [{"cpu": c["cpu"], "cluster": c["cluster"], "state": state, "seconds": s}
                for c in d["cpus"] for state, s in c.get("idle_residency_s", {}).items()]
        cpu_time = [{"pid": t["pid"], "name": t["name"], "cpu": int(cpu), "seconds": s}
                    for t in d["tasks"] for cpu, s in t.get("cpu_time_s", {}).items()]
        phases = [{"pid": t["pid"], "name": t["name"], "phase": ph.get("phase"), **ph} for t in d["tasks"] for ph in t.get("phases", [])]
        # cpufreq_stats prints nsec_to_clock_t(time): USER_HZ = 100 ticks a second
        tis = [{"cluster": c["cluster"], "khz": int(khz), "seconds": sec, "time_in_state": round(sec * 1e9) // 10_000_000}
               for c in d["clusters"] for khz, sec in c.get("time_in_state_s", {}).items()]
        rest = {k: v for k, v in d.items() if k not in ("cpus", "tasks", "clusters", "metrics", "counters")}
        out = {
            "cpus": cpus, "tasks": tasks, "clusters": clusters.drop(columns="time_in_state_s", errors="ignore"),
            "time_in_state": pd.DataFrame(tis, columns=["cluster", "khz", "seconds", "time_in_state"]),
            "freq_residency": pd.DataFrame(freq, columns=["cpu", "cluster", "khz", "seconds"]),
            "idle_residency": pd.DataFrame(idle, columns=["cpu", "cluster", "state", "seconds"]),
            "cpu_time": pd.DataFrame(cpu_time, columns=["pid", "name", "cpu", "seconds"]),
            "phases": pd.DataFrame(phases, columns=None if phases else ["pid", "name", "phase"]),
            "metrics": pd.DataFrame(self._name_values(d.get("metrics", {})), columns=["name", "value"]),
            "counters": pd.DataFrame(self._name_values(d.get("counters", {})), columns=["name", "value"]),
            "run": pd.DataFrame(self._name_values(rest), columns=["name", "value"]),
        }
        if self.timeseries is not None:
            ts = pd.DataFrame(self.timeseries)
            ts["t_s"] = ts["t_ns"] / 1e9
            out["timeseries"] = ts
        if trace is not None:
            from hetsched.traces.events import events_frame

            out["events"] = events_frame(trace)
        return out


def run(platform: str = "gs101", workload: str | Iterable[str] = "phone-mix", duration_s: float | None = None,
        **kw: Any) -> Result:
    """One-shot convenience: build, run, return the :class:`Result`."""
    return Simulation(platform=platform, workload=workload if isinstance(workload, str) else list(workload),
                      **kw).run(duration_s)
