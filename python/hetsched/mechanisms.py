"""Mechanisms a run was set up to use and that never acted, read from its result.json.

A policy is its base (cfs, eas) plus one distinctive mechanism. When the counters of that
mechanism are all zero, the run is its base's, often by construction, and a comparison
shows "+0.0 %" for a reason no number gives. `silent_mechanisms` names each such
mechanism in one line: the counter, its value, what it means for the result.

Each entry of `MECHANISMS` says when its mechanism is expected to act (the scheduler, a
knob, a section of the result) and which counters show that it did. A counter absent
from the document (another engine version, another profile) leaves the mechanism
unjudged rather than guessed. Only counters that count the mechanism's *actions* are
used. FA-CFS's `rescales` counts slices that eq. 10 rescaled, not slices whose rescaling
changed a decision: a run can rescale slices and still equal cfs (phone-mix on gs101
does, seeds 0-2, 10 s), and no counter shows that.

Mechanisms without a counter of their own are not listed: uclamp's clamps on a task, and
schedtune's boost (msm-4.14). Both change util, and so frequency and placement, with
nothing counting the decisions that changed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

__all__ = ["Mechanism", "MECHANISMS", "silent_mechanisms", "silent_in_all"]

#: the schedulers that run eas's wakeup path (find_energy_efficient_cpu and the vendor knobs)
EAS_SCHEDULERS = ("eas", "learning-eas")


def _get(doc: Mapping, path: str) -> Any:
    """The value at a dotted path of the document, None where any step is missing."""
    node: Any = doc
    for key in path.split("."):
        if not isinstance(node, Mapping) or key not in node:
            return None
        node = node[key]
    return node


def _scheduler(doc: Mapping) -> str | None:
    # `policy.name` is the registered policy the engine ran: a policy written in Python
    # reports its own name under `scheduler` but runs its base's mechanisms
    return _get(doc, "policy.name") or doc.get("scheduler")


def _knob(doc: Mapping, name: str, default: float = 0.0) -> float:
    # result.json's `knobs` are the values the run used (a kernel profile's included)
    v = (doc.get("knobs") or {}).get(name, default)
    return float(v) if isinstance(v, (int, float)) else default


def _g(x: float) -> str:
    return f"{x:g}"


def _eas_not_running(doc: Mapping) -> str | None:
    """Why eas's wakeup path could not run in this run (a clause), None if it could."""
    sched = _scheduler(doc)
    if sched not in EAS_SCHEDULERS:
        return f"the scheduler is {sched}"
    eas = doc.get("eas")
    if isinstance(eas, Mapping) and eas.get("enabled") is False:
        return f"EAS did not run ({eas.get('reason', 'no reason given')})"
    return None


@dataclass(frozen=True)
class Mechanism:
    """One mechanism: when it should act, the counters that show it did, and the line
    that says it did not."""

    #: the line's prefix: the policy or knob the mechanism belongs to
    name: str
    #: whether the run was set up for the mechanism to act
    expected: Callable[[Mapping], bool]
    #: result.json paths; the mechanism never acted when every one is 0 (or false)
    counters: tuple[str, ...]
    #: what never happened, as a clause ("no slice was rescaled")
    never: str
    #: why that matters, from one of the run documents and the counters (`counters` and
    #: `context`, summed over the runs)
    why: Callable[[Mapping, Mapping[str, Any]], str]
    #: counters shown beside, to say how often the mechanism had the chance
    context: tuple[str, ...] = field(default=())
    #: the registered schedulers the mechanism belongs to (empty: any, `expected` decides)
    policies: tuple[str, ...] = field(default=())
    #: figures shown beside `context` that no single path holds: (name, function of the
    #: document giving a number, or None where it cannot)
    derived: tuple[tuple[str, Callable[[Mapping], Any]], ...] = field(default=())

    @property
    def shown(self) -> tuple[str, ...]:
        """What a line shows beside the counters, summed over runs: `context`, `derived`."""
        return self.context + tuple(name for name, _ in self.derived)

    def observe(self, doc: Mapping) -> dict[str, Any] | None:
        """The counters of one run, or None when the mechanism is not expected to act
        there or a counter is missing (nothing can be said then)."""
        if (self.policies and _scheduler(doc) not in self.policies) or not self.expected(doc):
            return None
        out = {}
        for path in self.counters + self.context:
            v = _get(doc, path)
            if isinstance(v, bool) or (isinstance(v, (int, float)) and v == v):
                out[path] = v
            else:
                return None
        for name, fn in self.derived:
            v = fn(doc)
            if v is None:
                return None
            out[name] = v
        return out

    def silent(self, values: Mapping[str, Any]) -> bool:
        return all(not values[c] for c in self.counters)


# --- the table ---------------------------------------------------------------------------

def _hcs_td_why(doc: Mapping, v: Mapping[str, Any]) -> str:
    decisions, evaluations = v["counters.policy.decisions"], v["counters.policy.evaluations"]
    if decisions == 0:
        cause = (f"no decision came due (one per hcs_td.interval_ms = "
                 f"{_g(_knob(doc, 'hcs_td.interval_ms', 10.0))} ms, at the tick of a CPU running a fair task)")
    elif evaluations == 0:
        cause = ("at no decision was a fair task waiting on a runqueue, and only waiting tasks may move, "
                 "so eq. 4 had no candidate")
    else:
        cause = f"eq. 4's margin was positive for none of its {evaluations} candidate moves"
    return f"{cause}; TD(0) learning alone moves nothing, so the run is cfs's by construction"


#: `derived`'s name for the figure _fair_wakeups gives
FAIR_WAKEUPS = "wakeups of fair tasks placed"


def _fair_wakeups(doc: Mapping) -> int | None:
    """The wakeups of fair tasks that went through select_task_rq(), the only path that
    calls find_energy_efficient_cpu(): the tasks' nr_wakeups (a start is not one) of those
    whose policy is SCHED_OTHER at the end, less the delayed tasks requeued where they were
    (ttwu_runnable(), counters.delayed_requeues). None where the document lacks them."""
    tasks, requeued = doc.get("tasks"), _get(doc, "counters.delayed_requeues")
    if not isinstance(tasks, list) or not isinstance(requeued, int):
        return None
    woken = sum(t.get("nr_wakeups", 0) for t in tasks
                if isinstance(t, Mapping) and t.get("policy") == "other" and isinstance(t.get("nr_wakeups"), int))
    return max(woken - requeued, 0)


def _feec_why(doc: Mapping, v: Mapping[str, Any]) -> str:
    """Why feec never ran, from the figures the line cites: no fair wakeup to place, the
    root domain overutilized at each, or another path placing them."""
    woken, overutilized = v[FAIR_WAKEUPS], v["counters.overutilized_set"]
    own = _get(doc, "counters.policy") or {}  # the policy's counters have dotted names
    prefer_idle, fastpath = own.get("schedtune.prefer_idle") or 0, own.get("vendor.prev_cpu_fastpath") or 0
    if woken == 0:
        stopped = doc.get("deadlock")
        why = ("no fair task woke up, and feec places only wakeups: each task was placed when it started "
               "(an RT task by its class), as cfs places it")
        if isinstance(stopped, Mapping) and isinstance(stopped.get("time_s"), (int, float)):
            how = "in a deadlock of" if stopped.get("cycle") else "with these tasks blocked for good:"
            why += (f"; the run stopped at {_g(stopped['time_s'])} s {how} "
                    f"{', '.join(map(str, stopped.get('tasks', [])))} (result.json: deadlock)")
        return why
    others = [f"schedtune's prefer_idle placed {prefer_idle}"] if prefer_idle else []
    if fastpath:
        others.append(f"the vendor prev_cpu fast path placed {fastpath}")
    if overutilized:
        times = "once" if overutilized == 1 else f"{overutilized} times"
        why = f"the root domain was overutilized at each of the {woken} fair wakeups (it became so {times})"
        return why + (f", unless {' and '.join(others)}" if others else "") + ", so every placement was cfs's"
    if others:
        return (f"the root domain was never overutilized, but {' and '.join(others)} of the {woken} fair "
                "wakeups, so feec had none left to place")
    return (f"the root domain was never overutilized and nothing counted placed the {woken} fair wakeups "
            "otherwise: these counters do not say why")


def _gts_why(doc: Mapping, v: Mapping[str, Any]) -> str:
    return (f"no task's tracked load reached gts.up_threshold = {_g(_knob(doc, 'gts.up_threshold', 700))} "
            f"or fell below gts.down_threshold = {_g(_knob(doc, 'gts.down_threshold', 256))} where a move was "
            "possible, and no new task was started in the fastest cluster; what remains of GTS is "
            "sched_balance_rq inside each cluster only")


def _vendor(knob: str, counter: str, never: str, cause: str) -> Mechanism:
    def why(doc: Mapping, v: Mapping[str, Any]) -> str:
        missing = _eas_not_running(doc)
        return f"it acts on eas's wakeup path and {missing}" if missing else f"{cause}, so {knob} changed no placement"

    return Mechanism(knob, lambda d: _knob(d, knob) > 0, (f"counters.vendor.{counter}",), never, why)


def _isolation_why(doc: Mapping, v: Mapping[str, Any]) -> str:
    evaluations = v["counters.vendor.core_ctl_evaluations"]
    missing = _eas_not_running(doc)
    if evaluations == 0 and missing:
        return f"core_ctl isolates CPUs only while EAS places tasks, and {missing}"
    if evaluations == 0 and doc.get("kernel") == "msm-4.14" and _get(doc, "counters.walt") is None:
        return "the msm-4.14 tree built without WALT (sched_walt=0) has no core_ctl"
    if evaluations == 0:
        return ("core_ctl never evaluated the clusters (once per WALT window, or per vendor.core_ctl.window_ms "
                "without WALT)")
    return f"at each of its {evaluations} evaluations core_ctl found every CPU needed, so no CPU was isolated"


def _hps_why(doc: Mapping) -> str:
    period_ms = _knob(doc, "hps.period_ms", 40.0)
    if doc.get("sim_duration_s", 0.0) * 1e3 < period_ms:
        return (f"the run ({_g(doc.get('sim_duration_s', 0.0))} s) ended before HPS's first period "
                f"(hps.period_ms = {_g(period_ms)}), so every CPU stayed online")
    return "at no period did HPS find a CPU the load could do without, so every CPU stayed online throughout"


def _prefer_idle_expected(doc: Mapping) -> bool:
    groups = _get(doc, "counters.schedtune.groups")
    return isinstance(groups, Mapping) and any(
        isinstance(g, Mapping) and g.get("prefer_idle") and g.get("tasks", 0) > 0 for g in groups.values())


def _prefer_idle_why(doc: Mapping, v: Mapping[str, Any]) -> str:
    missing = _eas_not_running(doc)
    if missing:
        return f"it acts on eas's wakeup path and {missing}"
    return ("find_best_target()'s idle-CPU search placed no wakeup of a prefer_idle group's task (it found no "
            "CPU, or the root domain was overutilized), so those tasks were placed as every other task")


def _schedutil_why(knob_text: str, cause: str) -> Callable[[Mapping, Mapping[str, Any]], str]:
    def why(doc: Mapping, v: Mapping[str, Any]) -> str:
        if doc.get("governor") != "schedutil":
            return f"{knob_text} acts in schedutil and the governor is {doc.get('governor')}"
        return cause

    return why


def _hispeed_expected(doc: Mapping) -> bool:
    return _get(doc, "counters.walt") is not None and any(
        k.startswith("schedutil.hispeed_freq.") and _knob(doc, k) > 0 for k in doc.get("knobs") or {})


MECHANISMS: tuple[Mechanism, ...] = (
    Mechanism(
        "fa-cfs", lambda d: True, ("counters.policy.rescales",),
        "no slice was rescaled",
        lambda d, v: ("no task migrated between CPUs running at different frequencies, so eq. 10's "
                      "S' = (f_src/f_dst) S never applied and the run is CFS's (cfs with fair.eevdf=0, "
                      "the class fa-cfs runs on) by construction"),
        policies=("fa-cfs",)),
    Mechanism(
        "hcs-balance",
        lambda d: _knob(d, "hcs_balance_enabled", 1.0) > 0,
        ("counters.policy.pulls",),
        "no task was pulled from the next CPU",
        lambda d, v: ("at no tick did the next CPU hold a waiting fair task whose last timeslice ran there, "
                      "so the balanced core assignment never acted and the run is cfs's by construction"),
        policies=("hcs-balance",)),
    Mechanism(
        "hcs-td",
        lambda d: _knob(d, "hcs_td.max_migrations", 1.0) >= 1,
        ("counters.policy.migrations",),
        "eq. 4 moved no task", _hcs_td_why,
        context=("counters.policy.decisions", "counters.policy.evaluations"), policies=("hcs-td",)),
    Mechanism(
        "gts", lambda d: True,
        ("counters.policy.hmp_up_migrations", "counters.policy.hmp_down_migrations",
         "counters.policy.hmp_fork_boosts"),
        "no HMP migration and no fork boost", _gts_why, policies=("gts",)),
    Mechanism(
        "eas", lambda d: _scheduler(d) in EAS_SCHEDULERS and isinstance(d.get("eas"), Mapping)
        and d["eas"].get("enabled") is False,
        ("eas.enabled",),
        "Energy Aware Scheduling did not run",
        lambda d, v: f"{d['eas'].get('reason', 'no reason given')}; the policy was cfs"),
    Mechanism(
        "eas", lambda d: _scheduler(d) in EAS_SCHEDULERS and _get(d, "eas.enabled") is True,
        ("counters.policy.feec_calls",),
        "find_energy_efficient_cpu() never ran", _feec_why,
        context=("counters.overutilized_set",), derived=((FAIR_WAKEUPS, _fair_wakeups),)),
    _vendor("vendor.task_packing", "task_packing", "no wakeup was packed onto an active CPU",
            "whenever feec chose an idle CPU, no active CPU as small or smaller took the task without "
            "raising its domain's OPP"),
    _vendor("vendor.prev_cpu_fastpath", "prev_cpu_fastpath", "no wakeup took the prev_cpu fast path",
            "at no EAS wakeup was prev_cpu idle with the task fitting it"),
    _vendor("vendor.rt_placement", "rt_placement", "no RT wakeup was placed by the vendor search",
            "no FIFO or RR task woke through eas's wakeup path"),
    _vendor("vendor.migration_margins", "migration_margins",
            "sched_upmigrate/sched_downmigrate decided nothing differently from mainline",
            "neither feec's choice nor a tick's overutilized or misfit test came out otherwise than with "
            "the kernel's fits_capacity"),
    Mechanism(
        "vendor.cpu_isolation", lambda d: _knob(d, "vendor.cpu_isolation") > 0,
        ("counters.vendor.cpu_isolation",),
        "no CPU was isolated", _isolation_why,
        context=("counters.vendor.core_ctl_evaluations",)),
    Mechanism(
        "schedtune.prefer_idle", _prefer_idle_expected, ("counters.schedtune.prefer_idle_placements",),
        "no wakeup was placed by prefer_idle", _prefer_idle_why),
    Mechanism(
        "schedutil.hispeed_freq", _hispeed_expected, ("counters.walt.hispeed_raises",),
        "no frequency request was raised to hispeed_freq",
        _schedutil_why("hispeed_freq", "no CPU was busy for schedutil.hispeed_load % of the capacity its "
                       "cluster delivered over the last window while asking for less")),
    Mechanism(
        "schedutil.pl",
        lambda d: _get(d, "counters.walt") is not None and _knob(d, "schedutil.pl") > 0,
        ("counters.walt.pl_raises",),
        "no frequency request was raised by predicted load",
        _schedutil_why("schedutil.pl", "WALT's predicted demand never exceeded the utilisation schedutil "
                       "had already asked for")),
    Mechanism(
        "hps", lambda d: _knob(d, "hotplug.hps") > 0, ("hotplug.cpu_down",),
        "no CPU went offline",
        lambda d, v: _hps_why(d)),
    Mechanism(
        "switcher", lambda d: isinstance(d.get("switcher"), Mapping),
        ("counters.switches_up", "counters.switches_down"),
        "no virtual CPU switched core",
        lambda d, v: ("at no governor epoch was a virtual CPU on its LITTLE core at f_max above "
                      f"switcher.up_threshold = {_g(_knob(d, 'switcher.up_threshold', 80))} %, or on its big core "
                      f"below f_max under switcher.down_threshold = {_g(_knob(d, 'switcher.down_threshold', 70))} %, "
                      "so each stayed on the core it started on")),
    Mechanism(
        "util-aware", lambda d: True, ("counters.policy.leveling_moves",),
        "Fig. 3's levelling moved no task",
        lambda d, v: ("at no enqueue did the busiest virtual CPU's queued weight exceed 1.25 x the idlest's "
                      "with a task waiting to move; only the placement by expected utilisation acted"),
        policies=("util-aware",)),
    Mechanism(
        "learning-eas Algorithm 1", lambda d: bool(_get(d, "learning.target_load")),
        ("learning.target_load_steps",),
        "TARGET_LOAD was never stepped",
        lambda d, v: ("Algorithm 1 steps every learning.tl.period_ms (100 ms unless set) and the run lasted "
                      f"{_g(d.get('sim_duration_s', 0.0))} s, so each cluster kept its starting TARGET_LOAD")),
    Mechanism(
        "learning-eas Algorithm 2", lambda d: _get(d, "learning.migration_cost_ns") is not None,
        ("learning.migration_cost_steps",),
        "sched_migration_cost was never stepped",
        lambda d, v: ("Algorithm 2 steps every learning.mc.period_ms (7000 ms unless set) and the run lasted "
                      f"{_g(d.get('sim_duration_s', 0.0))} s, so sched_migration_cost_ns stayed "
                      f"{_g(d['learning']['migration_cost_ns'])}")),
)


# --- the lines ---------------------------------------------------------------------------

def _shown(v: Any) -> str:
    return json.dumps(v) if isinstance(v, bool) else _g(v) if isinstance(v, float) else str(v)


def _check_doc(doc: Any, what: str) -> Mapping:
    if not isinstance(doc, Mapping):
        raise TypeError(f"{what}: expected a result.json document (a dict), got {type(doc).__name__}")
    return doc


def silent_mechanisms(result_doc: dict) -> list[str]:
    """One line per mechanism the run was set up to use whose counters show it never
    acted, in `MECHANISMS` order; [] when every expected mechanism acted, or the policy
    has none beyond its base (cfs, eas with EAS running)."""
    doc = _check_doc(result_doc, "result_doc")
    lines = []
    for m in MECHANISMS:
        values = m.observe(doc)
        if values is None or not m.silent(values):
            continue
        shown = ", ".join(f"{p} = {_shown(values[p])}" for p in m.counters + m.shown)
        lines.append(f"{m.name}: {m.never} ({shown}): {m.why(doc, values)}")
    return lines


def silent_in_all(result_docs: Sequence[dict]) -> list[str]:
    """The lines of the mechanisms silent in every run of one configuration (its seeds):
    expected in each run, and never acting in any. A mechanism that acted in one run
    has no line."""
    docs = [_check_doc(d, f"result_docs[{i}]") for i, d in enumerate(result_docs)]
    if not docs:
        return []
    if len(docs) == 1:
        return silent_mechanisms(docs[0])
    lines = []
    for m in MECHANISMS:
        runs = [m.observe(d) for d in docs]
        if any(v is None or not m.silent(v) for v in runs):
            continue
        totals = {p: sum(v[p] for v in runs) for p in m.shown}
        totals.update({p: runs[0][p] for p in m.counters})
        zero = ", ".join(f"{p} = {_shown(runs[0][p])}" for p in m.counters)
        ctx = "".join(f"; {p} = {_shown(totals[p])} over the runs" for p in m.shown)
        lines.append(f"{m.name}: {m.never} in any of the {len(docs)} runs ({zero} in each{ctx}): "
                     f"{m.why(docs[0], totals)}")
    return lines
