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
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from hetsched.errors import InputError, UnknownNameError, shorten

if TYPE_CHECKING:
    from hetsched.sim import SchedView
    from hetsched.energy_model import EnergyModel
    from hetsched.platforms import Platform

__all__ = ["Policy", "PerfDomain", "PerfState", "WF_FORK", "WF_TTWU", "HOOKS", "load_policy"]

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
    # HOOKS and _ENGINE_ONLY_HOOKS, read from the engine when first asked for (PEP 562)
    if name in ("HOOKS", "_ENGINE_ONLY_HOOKS"):
        return _hook_lists()[name != "HOOKS"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

#: how close (difflib's ratio) a method's name must come to a hook's to be taken for it
_NEAR_MISS = 0.85


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
        be a registered scheduler's name.
    ``base``
        The registered scheduler (``hetsched schedulers``) the policy runs on: ``cfs``
        (the default), ``eas``, ``gts``, ... Every hook the class does not define is the
        base's, so a subclass that defines nothing runs exactly as its base.

    Hooks (define any of them; the engine calls only those a subclass defines, decided
    once when the simulation is built). Each hook that takes a ``view`` gets a
    :class:`hetsched.sim.SchedView` of the engine's state at the call, valid for that
    call only (it refuses access afterwards: keep numbers, not the view). A hook that
    raises, or returns what the engine cannot use, stops the run with
    :class:`hetsched.errors.PolicyError` naming the policy and the hook.

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
        return [h for h in _hook_lists()[0] if getattr(type(self), h) is not getattr(Policy, h)]

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name or type(self).__name__!r} on {self.base}>"


def checked_policy(policy: Any, schedulers: Mapping[str, str], reserved: Iterable[str]) -> Policy:
    """``policy`` (a :class:`Policy` instance or subclass) ready to drive one simulation:
    its ``name`` set and its own, its ``base`` one of ``schedulers``, no hook defined
    that the engine would never call, not already driving another simulation."""
    if isinstance(policy, type) and issubclass(policy, Policy):
        policy = policy()
    if not isinstance(policy, Policy):
        raise InputError("--scheduler", "scheduler", "a scheduler name, or a hetsched.Policy (instance or subclass)",
                         got=policy)
    cls = type(policy).__name__
    if not policy.name:
        policy.name = cls
    if not isinstance(policy.name, str) or not policy.name.strip() or policy.name != policy.name.strip():
        raise InputError(cls, "name", "a non-empty name without surrounding spaces", got=policy.name)
    taken = set(schedulers) | set(reserved)
    if policy.name in taken:
        raise InputError(cls, "name", f"a name of its own, not a registered scheduler's ({', '.join(sorted(taken))})",
                         got=policy.name)
    if not isinstance(policy.base, str) or policy.base not in schedulers:
        raise UnknownNameError(cls, "base", str(policy.base), schedulers)
    hooks, others = _hook_lists()
    engine_only = [h for h in others if callable(getattr(policy, h, None))]
    if engine_only:
        raise InputError(cls, engine_only[0], f"only the hooks a Python policy may define ({', '.join(hooks)}); "
                         f"{engine_only[0]} stays the base's")
    for name in _own_methods(type(policy)):
        if name in hooks:
            continue
        # the kernel's per-class names of a hook (select_task_rq_fair, task_tick_rt, ...)
        near = [h for h in hooks + others if name in (f"{h}_fair", f"{h}_rt", f"{h}_dl")]
        near = near or difflib.get_close_matches(name, hooks + others, n=1, cutoff=_NEAR_MISS)
        if near:
            raise InputError(cls, name, f"a hook's own name ({', '.join(hooks)}): the engine would never call "
                             f"{name}; did you mean {near[0]}?")
    if getattr(policy, "_hetsched_bound", False):
        raise InputError(cls, "scheduler", f"a policy instance of its own for each Simulation (a policy keeps state); "
                         f"pass {cls}() or {cls}")
    policy._hetsched_bound = True
    return policy


def _own_methods(cls: type) -> list[str]:
    """The public methods ``cls`` and its bases below :class:`Policy` define."""
    names: list[str] = []
    for k in cls.__mro__:
        if k is Policy or not issubclass(k, Policy):
            break
        names += [n for n, v in vars(k).items() if not n.startswith("_") and callable(v) and n not in names]
    return names


def engine_args(policy: Policy, platform: "Platform", kernel: str) -> dict:
    """The engine's arguments for a Python policy: the policy and what every view of the
    simulation shares (its perf domains, its Energy Model), built once here."""
    from hetsched.energy_model import EnergyModel

    em = EnergyModel.from_platform(platform, kernel=kernel)
    names = {cpu: c.name for c in platform.clusters for cpu in c.cpus}
    domains = tuple(PerfDomain(name=names.get(d["cpus"][0], ""), cpus=tuple(d["cpus"]), capacity=d["capacity"],
                               states=tuple(PerfState(**s) for s in d["states"]))
                    for d in em.domains())
    return {"policy": policy, "perf_domains": domains, "energy_model": em}


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
    mod_name = "hetsched_policy_" + "".join(c if c.isalnum() else "_" for c in str(path.resolve()))
    mspec = importlib.util.spec_from_file_location(mod_name, path)
    if mspec is None or mspec.loader is None:
        raise InputError(source, path_s, "a Python file (FILE.py:CLASS)", got=spec)
    mod = importlib.util.module_from_spec(mspec)
    sys.modules[mod_name] = mod  # what dataclasses and pickle look a class's module up in
    try:
        mspec.loader.exec_module(mod)
    except Exception as e:  # the researcher's file: say where it failed, in one line
        del sys.modules[mod_name]
        line = e.lineno if isinstance(e, SyntaxError) else None
        tb = e.__traceback__
        while tb is not None:  # the innermost frame in the file itself
            if Path(tb.tb_frame.f_code.co_filename).resolve() == path.resolve():
                line = tb.tb_lineno
            tb = tb.tb_next
        first = shorten((str(e).strip().splitlines() or [""])[0], 200)
        raise InputError(source, path_s, f"a Python file that loads; it raised {type(e).__name__}: {first}"
                         + (f" (line {line})" if line else "")) from None
    cls = getattr(mod, cls_name, None)
    if cls is None:
        defined = sorted(n for n, o in vars(mod).items()
                         if inspect.isclass(o) and issubclass(o, Policy) and o is not Policy)
        raise InputError(source, spec, f"a class {shorten(cls_name, 100)} in {shorten(path_s, 200)} (its Policy "
                         f"subclasses: {shorten(', '.join(defined) or 'none', 300)})")
    if not (inspect.isclass(cls) and issubclass(cls, Policy)):
        kind = "class" if inspect.isclass(cls) else type(cls).__name__
        raise InputError(source, spec, "a subclass of hetsched.Policy", got=f"{kind} {cls_name}")
    return cls
