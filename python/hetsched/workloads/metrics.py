"""Workload metrics: each built-in workload states in its WorkloadSpec which metric
function reads its result (``metric_defs``), and that function turns the engine's marks
and task statistics into the numbers its study reports (frame drops, entry time, ...).

A metric def is ``{"workload": NAME, "key": KEY, "params": {...}, "tasks": [names],
"marks": [mark names]}``; ``tasks`` and ``marks`` name what the workload created, so the
def survives :func:`merge_workloads` renumbering.  ``key`` is where the numbers go in
``result.json["metrics"]`` (the workload name, ``NAME#2`` for a second copy).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

__all__ = ["RunView", "METRICS", "register", "compute_metrics", "check_metric_defs"]


@dataclass
class RunView:
    """What a metric function may read: the result document, the marks as
    ``(t_ns, task_name, mark_name)`` tuples in time order, and the task dicts by name
    (forked copies are named ``<template>-<nnnn>``)."""

    doc: dict
    marks: list[tuple[int, str, str]]
    tasks: dict[str, dict] = field(default_factory=dict)

    def marks_named(self, mark: str, task_prefix: str | None = None) -> list[tuple[int, str]]:
        return [(t, task) for t, task, m in self.marks
                if m == mark and (task_prefix is None or task.startswith(task_prefix))]

    @property
    def duration_ns(self) -> int:
        return round(self.doc["sim_duration_s"] * 1e9)


METRICS: dict[str, Callable[[dict, RunView], dict]] = {}


def register(name: str) -> Callable:
    def deco(fn: Callable[[dict, RunView], dict]) -> Callable[[dict, RunView], dict]:
        METRICS[name] = fn
        return fn
    return deco


def check_metric_defs(workload_spec: dict, source: str = "workload") -> None:
    """The ``metric_defs`` and ``marks`` of a WorkloadSpec given whole (the engine does not
    read them; the metric functions do, after the run): each def an object naming a
    registered metric function, with text ``key``, an object ``params`` and lists of
    names ``tasks`` and ``marks``. An :class:`InputError` before the run, not a traceback
    after it."""
    from hetsched.errors import InputError

    marks = workload_spec.get("marks")
    if marks is not None and not (isinstance(marks, list) and all(isinstance(m, str) for m in marks)):
        raise InputError(source, "marks", "a list of mark names", got=marks)
    defs = workload_spec.get("metric_defs")
    if defs is None:
        return
    if not isinstance(defs, list):
        raise InputError(source, "metric_defs", "a list of metric definitions", got=defs)
    for i, d in enumerate(defs):
        where = f"metric_defs[{i}]"
        if not isinstance(d, dict):
            raise InputError(source, where, "an object {workload, key, params, tasks, marks}", got=d)
        if d.get("workload") not in METRICS:
            raise InputError(source, f"{where}.workload", "one of: " + ", ".join(sorted(METRICS)),
                             got=d.get("workload"))
        if not isinstance(d.get("key", ""), str) or not isinstance(d.get("params", {}), dict):
            raise InputError(source, where, "a text key and an object params", got=d)
        for names in ("tasks", "marks"):
            v = d.get(names, [])
            if not (isinstance(v, list) and all(isinstance(x, str) for x in v)):
                raise InputError(source, f"{where}.{names}", "a list of names", got=v)


def compute_metrics(doc: dict, workload_spec: dict) -> dict:
    """Per metric def of the workload, its metric function's output, keyed by ``key``."""
    defs = workload_spec.get("metric_defs") or []
    if not defs:
        return {}
    names = workload_spec.get("marks") or []
    task_names = [t["name"] for t in doc["tasks"]]
    marks = [(int(t), task_names[ti], names[mi]) for t, ti, mi in doc.get("marks", [])]
    view = RunView(doc=doc, marks=marks, tasks={t["name"]: t for t in doc["tasks"]})
    out = {}
    for d in defs:
        fn = METRICS.get(d["workload"])
        if fn is None:
            continue
        out[d.get("key", d["workload"])] = fn(d, view)
    return out
