"""Scheduler policies written in Python: subclass :class:`Policy`, define the hooks you
want, and run it where a scheduler name goes.

>>> import hetsched
>>> class LittleFirst(hetsched.Policy):
...     name = "little-first"
...     base = "eas"                       # every hook not defined here is eas's
...     def select_task_rq(self, view, task, prev_cpu, wake_flags):
...         cpus = view.cpus_allowed(task)
...         idle = [c for c in cpus if view.idle_cpu(c)]
...         return min(idle, key=view.capacity_orig) if idle else None   # None: eas decides
>>> res = hetsched.Simulation(platform="gs101", workload="periodic", scheduler=LittleFirst()).run(0.2)
>>> res["scheduler"]
'little-first'

On the command line: ``hetsched run --scheduler path/to/file.py:LittleFirst`` (and as a
``hetsched compare`` cell). docs/python-policies.md has the whole story, and what a hook
costs: each call crosses from the engine into Python.
"""

from __future__ import annotations

import difflib
import importlib.util
import inspect
import signal
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping

from hetsched.errors import InputError, UnknownNameError, shorten

if TYPE_CHECKING:
    from hetsched.sim import SchedView
    from hetsched.energy_model import EnergyModel
    from hetsched.platforms import Platform

__all__ = ["Policy", "PerfDomain", "PerfState", "WF_FORK", "WF_TTWU", "HOOKS", "MAX_HOOK_ITEMS", "MAX_NAME_LEN",
           "load_policy"]

#: ``wake_flags`` of :meth:`Policy.select_task_rq` (the kernel's, kernel/sched/sched.h):
#: a new task (``wake_up_new_task``) or a wakeup (``try_to_wake_up``).
WF_FORK = 0x04
WF_TTWU = 0x08



def _hook_lists() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The hooks a Python policy may define (``HOOKS``: crates/hetsched-py/src/policy.rs
    crosses these), and the engine's others (``_ENGINE_ONLY_HOOKS``: of the list
    crates/hetsched-core/src/policies/mod.rs keeps of them all). A method of one of the
    others would never be called, so a class that defines one is refused rather than
    silently ignored; so is one whose name is a near miss of a hook (a typo, or the
    kernel's per-class name: select_task_rq_fair), never called either. Both come from the
    engine, which only hetsched.sim reaches (imported here when first asked for: sim
    imports this module)."""
    from hetsched.sim import ENGINE_HOOKS, POLICY_HOOKS

    return POLICY_HOOKS, tuple(h for h in ENGINE_HOOKS if h not in POLICY_HOOKS)


def __getattr__(name: str):
    # HOOKS and _ENGINE_ONLY_HOOKS, read from the engine when first asked for (PEP 562);
    # MAX_HOOK_ITEMS, the most items (migrations, counters) one hook call may return: the
    # tasks one run may hold (crates/hetsched-py/src/policy.rs)
    if name in ("HOOKS", "_ENGINE_ONLY_HOOKS"):
        return _hook_lists()[name != "HOOKS"]
    if name == "MAX_HOOK_ITEMS":
        from hetsched.sim import MAX_HOOK_ITEMS

        return MAX_HOOK_ITEMS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

#: how close (difflib's ratio) a method's name must come to a hook's to be taken for it,
#: beside one edit away (a letter added, dropped, changed, or two swapped)
_NEAR_MISS = 0.85

#: The longest name a policy may take. A name is printed whole where a scheduler's is: the
#: run's summary line, compare's table, result.json, every error about it (a name of
#: 100,000 characters took the terminal printer 20 s). The registered names have 12
#: characters at most; the kernel names a sched_ext scheduler in at most 127
#: (SCX_OPS_NAME_LEN, 128 with its NUL, include/linux/sched/ext.h) and a task in 15
#: (TASK_COMM_LEN): 64 holds any name a person would type and still fits a table's column.
MAX_NAME_LEN = 64

#: the module names load_policy runs policy files as (one per file), and the path each
#: was given as (its module's __file__ is made absolute)
_MODULE_PREFIX = "hetsched_policy_"
_LOADED_FROM: dict[str, str] = {}


@dataclass(frozen=True)
class PerfState:
    """One performance state of a perf domain (an OPP, as the Energy Model has it)."""

    khz: int
    #: the capacity this state delivers (0..1024)
    performance: int
    power_uw: int
    #: the Energy Model's cost (10 x power / performance on mainline-6.12)
    cost: int
    #: skipped by EAS: a faster state costs no more energy
    inefficient: bool


@dataclass(frozen=True)
class PerfDomain:
    """A perf domain (a cluster: CPUs that share a frequency), in ``rd->pd`` order."""

    #: the cluster's name on the platform
    name: str
    cpus: tuple[int, ...]
    #: capacity_orig of its CPUs
    capacity: int
    #: its performance states, slowest first
    states: tuple[PerfState, ...]


class Policy:
    """A scheduler policy in Python, on top of a registered one.

    Attributes a subclass sets:

    ``name``
        What ``result.json``'s ``scheduler`` says (default: the class's name). It may not
        be a registered scheduler's name, and is at most :data:`MAX_NAME_LEN` printable
        characters.
    ``base``
        The registered scheduler (``hetsched schedulers``) the policy runs on: ``cfs``
        (the default), ``eas``, ``gts``, ... Every hook the class does not define is the
        base's, so a subclass that defines nothing runs exactly as its base.

    Hooks (define any of them; the engine calls only those a subclass defines, decided
    once when the simulation is built). Each hook that takes a ``view`` gets a
    :class:`hetsched.sim.SchedView` of the engine's state at the call, valid for that
    call and in its thread only (it refuses access afterwards or from another thread:
    keep numbers, not the view). A hook that raises (SystemExit too), or returns what
    the engine cannot use, stops the run with :class:`hetsched.errors.PolicyError`
    naming the policy, its class and the hook; so do more than 32,768 migrations or
    counters from one call (:data:`MAX_HOOK_ITEMS`), which ends an endless iterator.

    ``select_task_rq(view, task, prev_cpu, wake_flags) -> int | None``
        The kernel's ``select_task_rq_fair()``: the CPU a waking (``wake_flags &
        WF_TTWU``) or new (``WF_FORK``) fair task is enqueued on. ``task`` is its id,
        ``prev_cpu`` the CPU it last ran on. Return a CPU in ``view.cpus_allowed(task)``
        (any other CPU is an error), or None to leave this wakeup to the base. RT and
        deadline tasks are placed by their own classes (the base's) and never reach it.
        Default: the base's choice.
    ``task_tick(view, cpu, curr) -> None | [(task, cpu), ...]``
        The tick of ``cpu`` while it runs the fair task ``curr``, after the base's own
        tick work (which still runs). Return migrations to make: fair tasks to move to an
        allowed CPU. They are carried out at the end of this tick, after every CPU's tick
        (a running task is pushed by the stopper, a queued one moved; one that sleeps, or
        slept or moved meanwhile, is left alone). Default: nothing.
    ``balance(view) -> None | [(task, cpu), ...]``
        Once per tick, after every CPU's tick: migrations as ``task_tick``'s (GTS's
        up-migration lives here). Runs after the base's. Default: nothing.
    ``counters() -> dict[str, int | float | bool]``
        Numbers to report in ``result.json``'s ``counters``, beside the engine's (a name
        the engine or the base already reports is an error). Called when a result is
        made. Default: none.

    The view (``hetsched.sim.SchedView``): ``nr_cpus``, ``nr_tasks``, ``now_ns``,
    ``overutilized``; per CPU ``capacity_orig(cpu)``, ``capacity_of(cpu)``,
    ``idle_cpu(cpu)``, ``cpu_util(cpu)`` (cpu_util_cfs), ``cpu_overutilized(cpu)``,
    ``cpu_freq_khz(cpu)``, ``nr_running(cpu)``, ``cpu_curr(cpu)`` (the running task or
    None); per task ``task_util(task)`` (task_util_est), ``cpus_allowed(task)``,
    ``task_cpu(task)``, ``task_on_rq(task)`` (running or queued), ``task_policy(task)``
    ("other" is fair), ``task_name(task)``;
    ``perf_domains`` (:class:`PerfDomain` tuple) and ``energy_model`` (the simulation's
    :class:`hetsched.EnergyModel`, for ``compute_energy`` / ``find_energy_efficient_cpu``
    what-ifs).

    One instance drives one simulation (a policy keeps state): pass a new instance, or
    the class, to each :class:`hetsched.Simulation`.
    """

    name: str = ""
    base: str = "cfs"

    WF_FORK = WF_FORK
    WF_TTWU = WF_TTWU

    def select_task_rq(self, view: "SchedView", task: int, prev_cpu: int, wake_flags: int) -> int | None:
        return None

    def task_tick(self, view: "SchedView", cpu: int, curr: int) -> Iterable[tuple[int, int]] | None:
        return None

    def balance(self, view: "SchedView") -> Iterable[tuple[int, int]] | None:
        return None

    def counters(self) -> Mapping[str, int | float | bool]:
        return {}

    def hooks(self) -> list[str]:
        """The hooks this policy defines (those the engine calls)."""
        return [h for h in _hook_lists()[0] if _class_attr(type(self), h) is not vars(Policy)[h]]

    def __repr__(self) -> str:
        try:
            return f"<{type(self).__name__} {self.name or type(self).__name__!r} on {self.base}>"
        except Exception:  # a name or base that raises: repr must not
            return f"<{type(self).__name__}>"


# ------------------------------------------------------------------ a class, checked


def _class_attr(cls: type, name: str, below: type | None = None) -> Any:
    """``name`` as the class statically defines it: the first of its MRO's namespaces that
    holds it (None if none does; with ``below``, only classes before it in the MRO). This
    is how Python finds a method for ``instance.method(...)``: a metaclass's
    ``__getattribute__`` or ``__getattr__``, which ``cls.name`` would run, plays no part."""
    for k in type.__dict__["__mro__"].__get__(cls):
        if k is below:
            break
        ns = type.__dict__["__dict__"].__get__(k)
        if name in ns:
            return ns[name]
    return None


def policy_label(cls: type) -> str:
    """Where a policy class is defined, as its errors name it: ``FILE.py:CLASS``, FILE being
    the path given to ``FILE.py:CLASS`` (:func:`load_policy`) or the name of the file of
    the module that defines it; the class's name alone when it has no file (a notebook)."""
    try:
        name = type.__dict__["__name__"].__get__(cls)
        module = type.__dict__["__dict__"].__get__(cls).get("__module__")
        file = getattr(sys.modules.get(module) if isinstance(module, str) else None, "__file__", None)
    except Exception:
        return "a hetsched.Policy subclass"
    if module in _LOADED_FROM:
        return f"{_LOADED_FROM[module]}:{name}"
    return f"{Path(file).name}:{name}" if isinstance(file, str) else name


@contextmanager
def _signals_noted() -> Iterator[list[int]]:
    """Notes a SIGINT or SIGTERM that arrives inside (its handler runs as before), so that
    what surfaces from a policy's own code can be told apart: a Ctrl-C's KeyboardInterrupt
    (or the CLI's Interrupted) goes on as itself, the same raised by the code is its
    failure. Only the main thread runs handlers: elsewhere no signal lands, none is noted."""
    noted: list[int] = []
    installed: dict[int, tuple[Callable, Any]] = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            old = signal.getsignal(sig)
            if callable(old):
                def note(signum: int, frame: Any, old: Callable = old) -> Any:
                    noted.append(signum)
                    return old(signum, frame)

                signal.signal(sig, note)
                installed[sig] = (note, old)
    try:
        yield noted
    finally:
        for sig, (note, old) in installed.items():
            if signal.getsignal(sig) is note:  # unless the code installed its own
                signal.signal(sig, old)


def _raised(e: BaseException, file: str | None = None) -> str:
    """What ``e`` was, on one line: its type, its message's first line and where it was
    raised (the line of ``file``, else the innermost frame outside hetsched)."""
    try:
        first = (str(e).strip().splitlines() or [""])[0]
    except Exception:
        first = ""
    what = type(e).__name__ + (f": {shorten(first, 200)}" if first else "")
    line = e.lineno if isinstance(e, SyntaxError) and file else None
    at = None
    here = Path(__file__).resolve().parent
    tb = e.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        code_file = Path(name).resolve()
        if file is not None and code_file == Path(file).resolve():
            line = tb.tb_lineno
        elif here not in code_file.parents and not name.startswith("<"):  # not <frozen importlib...>
            at = f"{code_file.name}:{tb.tb_lineno}"
        tb = tb.tb_next
    if line:
        return f"{what} (line {line})"
    return f"{what} (at {at})" if at else what


def _policy_code(source: str, field: str, expected: str, fn: Callable[[], Any], file: str | None = None,
                 doer: str = "it") -> Any:
    """``fn()``, which runs the policy's own code (its file, its ``__init__``, its ``name``):
    whatever it raises, SystemExit and KeyboardInterrupt too, is an InputError naming
    ``source`` and ``field``, "expected ``expected``; ``doer`` raised ..."; a signal that
    arrived meanwhile goes on as itself."""
    with _signals_noted() as noted:
        try:
            return fn()
        except BaseException as e:
            if noted and not isinstance(e, Exception):
                raise
            raise InputError(source, field, f"{expected}; {doer} raised {_raised(e, file)}") from None


@dataclass(frozen=True)
class CheckedPolicy:
    """A policy ready to drive one simulation (:func:`checked_policy`): each attribute read
    once, so that a property is never asked twice."""

    policy: "Policy"
    #: its name (the class's when it names none), ``result.json``'s ``scheduler``
    name: str
    #: the registered scheduler it runs on
    base: str
    #: where the class is defined, ``FILE.py:CLASS``, for its errors
    label: str
    #: the bound method of each hook the class defines, by name: what the engine calls
    hooks: Mapping[str, Callable]


def checked_policy(policy: Any, schedulers: Mapping[str, str], reserved: Iterable[str]) -> CheckedPolicy:
    """``policy`` (a :class:`Policy` instance or subclass) ready to drive one simulation:
    made (a class), its ``name`` its own, printable and at most :data:`MAX_NAME_LEN`
    characters, its ``base`` one of ``schedulers``, no method that the engine would never
    call under a hook's name or one close to it, not already driving another simulation.
    Whatever the policy's code raises meanwhile is an InputError naming its class."""
    if isinstance(policy, type) and issubclass(policy, Policy):
        label = policy_label(policy)
        policy = _policy_code(label, "__init__", "a class that needs no arguments to make (or pass an instance)",
                              policy, doer=f"{type.__dict__['__name__'].__get__(policy)}()")
    if not isinstance(policy, Policy):
        raise InputError("--scheduler", "scheduler", "a scheduler name, or a hetsched.Policy (instance or subclass)",
                         got=policy)
    kind = type(policy)
    cls, label = type.__dict__["__name__"].__get__(kind), policy_label(kind)
    name = _policy_code(label, "name", "a name that can be read", lambda: policy.name, doer="reading it")
    if isinstance(name, str) and not name:
        name = cls
    if not isinstance(name, str) or not name.strip() or name != name.strip():
        raise InputError(label, "name", "a non-empty name without surrounding spaces", got=name)
    if len(name) > MAX_NAME_LEN:
        raise InputError(label, "name", f"a name of at most {MAX_NAME_LEN} characters (it is printed wherever a "
                         f"scheduler's is), not {len(name)}", got=name)
    if not name.isprintable():
        raise InputError(label, "name", "a name of printable characters (no newline, tab or control character)",
                         got=name)
    taken = set(schedulers) | set(reserved)
    if name in taken:
        raise InputError(label, "name", f"a name of its own, not a registered scheduler's ({', '.join(sorted(taken))})",
                         got=name)
    base = _policy_code(label, "base", "a base that can be read", lambda: policy.base, doer="reading it")
    if not isinstance(base, str) or base not in schedulers:
        raise UnknownNameError(label, "base", str(base), schedulers)
    hooks, others = _hook_lists()
    engine_only = [h for h in others if callable(_class_attr(kind, h, below=Policy))]
    if engine_only:
        near = _nearest(engine_only[0], hooks)
        raise InputError(label, engine_only[0], f"only the hooks a Python policy may define ({', '.join(hooks)}); "
                         f"the engine never calls {engine_only[0]} from Python (it stays the base's)"
                         + (f"; did you mean {near}?" if near else ""))
    for method in _own_methods(kind):
        if method in hooks:
            continue
        near = _nearest(method, hooks + others)
        if near:
            raise InputError(label, method, f"a hook's own name ({', '.join(hooks)}): the engine would never call "
                             f"{method}; did you mean {near}?")
    if _bound(policy):
        raise InputError(label, "scheduler", f"a policy instance of its own for each Simulation (a policy keeps "
                         f"state); pass {cls}() or {cls}")
    defined = {}
    for h in hooks:
        if _class_attr(kind, h) is vars(Policy)[h]:
            continue  # the base's: it never crosses into Python
        # as Python finds it for policy.hook(...): the instance's lookup, past any metaclass
        method = _policy_code(label, h, "a hook the instance can look up", lambda h=h: getattr(policy, h),
                              doer=f"policy.{h}")
        if not callable(method):
            raise InputError(label, h, "a method", got=method)
        defined[h] = method
    return CheckedPolicy(policy=policy, name=name, base=base, label=label, hooks=defined)


def _nearest(name: str, hooks: Iterable[str]) -> str | None:
    """The hook ``name`` is a near miss of, if any: the kernel's per-class name of it
    (select_task_rq_fair, task_tick_rt), one edit away (balanc, task_tik), or as close
    as difflib's :data:`_NEAR_MISS` (selecttaskrq)."""
    hooks = [h for h in hooks if h != name]
    near = [h for h in hooks if name in (f"{h}_fair", f"{h}_rt", f"{h}_dl")]
    near = near or [h for h in hooks if _one_edit(name, h)]
    near = near or difflib.get_close_matches(name, hooks, n=1, cutoff=_NEAR_MISS)
    return near[0] if near else None


def _one_edit(a: str, b: str) -> bool:
    """Whether ``a`` is ``b`` with one letter added, dropped or changed, or two neighbours swapped."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long_ = sorted((a, b), key=len)
    i = next((i for i, (x, y) in enumerate(zip(short, long_)) if x != y), len(short))
    return short[i:] == long_[i + 1:]


def _bound(policy: Policy) -> bool:
    """Whether ``policy`` drives a simulation already (:func:`bind`)."""
    return bool(object.__getattribute__(policy, "__dict__").get("_hetsched_bound"))


def bind(policy: Policy) -> None:
    """Marks ``policy`` as driving a simulation: called once its engine is built, so that a
    Simulation that refused its other arguments leaves the instance free for the next."""
    object.__setattr__(policy, "_hetsched_bound", True)


def _own_methods(cls: type) -> list[str]:
    """The public methods ``cls`` and its bases below :class:`Policy` define."""
    names: list[str] = []
    for k in type.__dict__["__mro__"].__get__(cls):
        if k is Policy or not issubclass(k, Policy):
            break
        ns = type.__dict__["__dict__"].__get__(k)
        names += [n for n, v in ns.items() if not n.startswith("_") and callable(v) and n not in names]
    return names


def engine_args(checked: CheckedPolicy, platform: "Platform", kernel: str) -> dict:
    """The engine's arguments for a Python policy: its name, label and hooks, and what
    every view of the simulation shares (its perf domains, its Energy Model), built once here."""
    from hetsched.energy_model import EnergyModel

    em = EnergyModel.from_platform(platform, kernel=kernel)
    names = {cpu: c.name for c in platform.clusters for cpu in c.cpus}
    domains = tuple(PerfDomain(name=names.get(d["cpus"][0], ""), cpus=tuple(d["cpus"]), capacity=d["capacity"],
                               states=tuple(PerfState(**s) for s in d["states"]))
                    for d in em.domains())
    return {"policy": {"name": checked.name, "label": checked.label, "hooks": dict(checked.hooks)},
            "perf_domains": domains, "energy_model": em}


def is_policy_file(spec: str) -> bool:
    """Whether a ``--scheduler`` value names a Python file's class: ``FILE.py:CLASS``."""
    path, sep, cls = spec.rpartition(":")
    return bool(sep) and path.endswith(".py") and bool(cls)


def load_policy(spec: str, source: str = "--scheduler") -> type[Policy]:
    """The :class:`Policy` subclass ``CLASS`` of ``FILE.py:CLASS`` (the file is run as a
    module of its own). Every failure is an :class:`InputError` naming ``source``."""
    path_s, _, cls_name = spec.rpartition(":")
    path = Path(path_s)
    if not is_policy_file(spec):
        raise InputError(source, "scheduler", "FILE.py:CLASS", got=spec)
    try:
        is_file = path.is_file()
    except (OSError, ValueError):  # a name too long for the file system, a NUL byte
        is_file = False
    if not is_file:
        raise InputError(source, path_s, "an existing Python file (FILE.py:CLASS)", got=spec)
    # a module name of its own per file, so that two policy files never share one; run
    # afresh on every load, so that an edited file is what runs
    mod_name = _MODULE_PREFIX + "".join(c if c.isalnum() else "_" for c in str(path.resolve()))
    mspec = importlib.util.spec_from_file_location(mod_name, path)
    if mspec is None or mspec.loader is None:
        raise InputError(source, path_s, "a Python file (FILE.py:CLASS)", got=spec)
    mod = importlib.util.module_from_spec(mspec)
    sys.modules[mod_name] = mod  # what dataclasses and pickle look a class's module up in
    try:
        # the researcher's file: whatever it raises (sys.exit() and KeyboardInterrupt
        # too) is said in one line, with where it failed
        _policy_code(source, path_s, "a Python file that loads", lambda: mspec.loader.exec_module(mod), file=path_s)
    except BaseException:
        del sys.modules[mod_name]
        raise
    _LOADED_FROM[mod_name] = path_s
    # read from the module's namespace: no code of the file runs (a module __getattr__)
    cls = vars(mod).get(cls_name)
    if cls is None:
        defined = sorted(n for n, o in vars(mod).items()
                         if inspect.isclass(o) and issubclass(o, Policy) and o is not Policy)
        raise InputError(source, spec, f"a class {shorten(cls_name, 100)} in {shorten(path_s, 200)} (its Policy "
                         f"subclasses: {shorten(', '.join(defined) or 'none', 300)})")
    if not (inspect.isclass(cls) and issubclass(cls, Policy)):
        kind = "class" if inspect.isclass(cls) else type(cls).__name__
        raise InputError(source, spec, "a subclass of hetsched.Policy", got=f"{kind} {cls_name}")
    return cls
