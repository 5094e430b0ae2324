"""A replay of a real trace planned from its options: the trace read and checked, the
workload built from it with what the run on its platform needs (the switch the run will
charge, the platform's CPUs for the per-CPU kernel threads, Android's groups and cpusets),
and the result document's ``replay`` section. ``hetsched replay`` is this plus the printing
(docs/traces.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional

from hetsched import _input
from hetsched.errors import InputError

__all__ = ["ReplayPlan", "plan_replay", "switch_charged", "android_options"]

TASK_MODES = ("auto", "all", "tree")


def switch_charged(sets: Iterable[str]) -> Optional[int]:
    """The switch the run will charge, where ``--set`` gives cost.context_switch_ns (a value
    the simulation then refuses is left to it); None: the engine's own on the recording CPU."""
    value = _input.knob_settings(sets).get("cost.context_switch_ns")
    try:
        v = float(value) if value is not None else -1.0
    except ValueError:
        return None
    return int(v) if 0 <= v < float("inf") else None


def android_options(tr, platform: str) -> dict:
    """ReplayOptions' groups and cpus: each thread's Android scheduling group and, where the
    device's cpusets on ``platform`` are known, the CPUs of its cpuset; nothing for a trace
    that does not name its processes' states."""
    if not tr.oom_score_adj or not tr.tgids:  # no process of a thread known: no rule applies
        return {}
    from hetsched.platforms import load_platform
    from hetsched.traces.android_groups import cpuset_cpus, thread_cpusets, thread_groups
    from hetsched.traces.figures import foreground_app

    top = foreground_app(tr)
    return {"groups": thread_groups(tr, top_app=top),
            "cpus": cpuset_cpus(thread_cpusets(tr, top_app=top), load_platform(platform).name)}


@dataclass
class ReplayPlan:
    """A trace read and turned into a workload for ``platform``."""
    trace: object            # hetsched.traces.parse.Trace
    replay: object           # hetsched.traces.replay.Replay
    #: the recording platform's name as given (the option, or a record file's header)
    source: Optional[str]
    source_platform: object  # its Platform, or None

    def document(self, doc: dict) -> dict:
        """The result document's ``replay`` section: the trace's and the replay's summaries
        and the run's busy time and makespan against the trace's."""
        from hetsched.traces.replay import compare

        cmp = compare(self.replay, doc)
        doc["replay"] = {"trace": self.trace.summary(), "replay": self.replay.summary(), "compare": cmp,
                         "source_platform": self.source}
        return cmp


def plan_replay(trace_file: str, load, *, platform: str, source_platform: Optional[str] = None,
                include_kthreads: bool = False, tasks: str = "auto", relative_sleeps: bool = False,
                keep_switch: bool = False, groups: bool = True, sets: Iterable[str] = ()) -> ReplayPlan:
    """Check the options, read ``trace_file`` with ``load`` (its one-line errors are the
    reader's) and build the workload for ``platform``. A platform named by a ``hetsched
    record`` file's header that is not known is that file's error, not ``--source-platform``'s."""
    from hetsched.platforms import load_platform
    from hetsched.traces.replay import ReplayOptions, build_replay

    if tasks not in TASK_MODES:
        raise InputError("--tasks", "tasks", "one of: auto, all, tree", got=tasks)
    if not trace_file.strip():  # a Path would read '' as '.', this directory
        raise InputError("FILE", "trace", "a trace file path", got=trace_file)
    tr = load(trace_file)
    src = source_platform or (tr.meta.get("platform") if tr.meta else None)
    try:
        src_platform = load_platform(src) if src else None
    except InputError as e:
        if source_platform:
            raise InputError("--source-platform", e.field, e.expected, e.got) from None
        # the platform the trace's own header names (hetsched record writes it)
        raise InputError(str(trace_file), "hetsched-record header: platform", e.expected, e.got) from None
    try:
        rep = build_replay(tr, ReplayOptions(include_kthreads=include_kthreads, tasks=tasks,
                                             source_platform=src_platform, relative_sleeps=relative_sleeps,
                                             switch_cost_ns=0 if keep_switch else switch_charged(sets),
                                             bind_percpu_kthreads=load_platform(platform).nr_cpus,
                                             **(android_options(tr, platform) if groups else {})))
    except InputError as e:
        if e.source != "--source-platform" or source_platform:
            raise
        # the platform came from the trace's own header, not from the option
        raise InputError(str(trace_file), "hetsched-record header: platform", e.expected, e.got) from None
    return ReplayPlan(trace=tr, replay=rep, source=src, source_platform=src_platform)
