"""Building and combining WorkloadSpecs (docs/engine-interface.md).

:class:`SpecBuilder` is how generators (built-in workloads, rt-app files, trace replay)
write a spec: it hands out the ids of timers, mutexes, condition variables, semaphores,
barriers and marks by name, so a generator speaks in names and the ids stay dense.
:func:`merge_workloads` runs several specs together, shifting every id of spec k past
those of specs 0..k-1 so that nothing is shared across them (they would be separate
processes).
"""

from __future__ import annotations

from typing import Any, Sequence

from hetsched.errors import InputError
from hetsched.workloads.noise import NOISE_KEY, has_kernel_workers

__all__ = ["SpecBuilder", "workload", "merge_workloads", "task", "SYNC_EVENTS"]

# event -> which id space its operand indexes ("cond+mutex" events carry both)
SYNC_EVENTS = {
    "timer": "timers", "lock": "mutexes", "unlock": "mutexes", "wait": "cond+mutex",
    "sync": "cond+mutex", "signal": "conds", "broad": "conds", "barrier": "barriers",
    "sem_post": "sems", "sem_post_sync": "sems", "sem_wait": "sems", "mark": "marks", "fork": "tasks",
}


def task(name: str, phases: list[dict], *, policy: str = "other", nice: int = 0,
         rt_priority: int = 0, cpus: Sequence[int] | None = None, util_min: int | None = None,
         util_max: int | None = None, delay_ns: int = 0, loop: int = 1, start: bool = True,
         perf: dict | None = None, slice_ns: int | None = None, stune: str | None = None) -> dict:
    """A task dict of the WorkloadSpec with its defaults spelled out. ``stune`` is the
    Android scheduling group (foreground, background, top-app, rt) the task runs in: its
    schedtune boost group under the msm-4.14 kernel profile, its vendor group under
    pixel-5.10."""
    t = {"name": name, "policy": policy, "nice": nice, "rt_priority": rt_priority,
         "cpus": list(cpus) if cpus is not None else None, "util_min": util_min,
         "util_max": util_max, "delay_ns": int(delay_ns), "loop": loop, "phases": phases}
    if not start:
        t["start"] = False
    if perf:
        t["perf"] = dict(perf)
    if slice_ns is not None:
        t["slice_ns"] = int(slice_ns)
    if stune is not None:
        t["stune"] = stune
    return t


class SpecBuilder:
    """Accumulates tasks and named synchronisation objects into one WorkloadSpec."""

    def __init__(self, name: str, duration_ns: int | None = None):
        self.name, self.duration_ns = name, duration_ns
        self.tasks: list[dict] = []
        self._timers: dict[str, int] = {}
        self._mutexes: dict[str, int] = {}
        self._conds: dict[str, int] = {}
        self.sems: list[int] = []
        self._sem_ids: dict[str, int] = {}
        self.barriers: list[int] = []
        self._barrier_ids: dict[str, int] = {}
        self.marks: list[str] = []
        self.metric_defs: list[dict] = []

    @staticmethod
    def _id(table: dict[str, int], key: str) -> int:
        if key not in table:
            table[key] = len(table)
        return table[key]

    def timer(self, ref: str) -> int:
        return self._id(self._timers, ref)

    def mutex(self, ref: str) -> int:
        return self._id(self._mutexes, ref)

    def cond(self, ref: str) -> int:
        return self._id(self._conds, ref)

    def sem(self, ref: str, initial: int = 0) -> int:
        if ref not in self._sem_ids:
            self._sem_ids[ref] = len(self.sems)
            self.sems.append(int(initial))
        return self._sem_ids[ref]

    def barrier(self, ref: str, count: int | None = None) -> int:
        """The barrier ``ref``; ``count`` (tasks meeting there) may be given now or set
        later with :meth:`set_barrier_count`."""
        if ref not in self._barrier_ids:
            self._barrier_ids[ref] = len(self.barriers)
            self.barriers.append(0)
        i = self._barrier_ids[ref]
        if count is not None:
            self.barriers[i] = int(count)
        return i

    def set_barrier_count(self, ref: str, count: int) -> None:
        self.barriers[self._barrier_ids[ref]] = int(count)

    def names(self) -> dict[str, list[str]]:
        """The names of the mutexes, condition variables, semaphores and barriers, each
        list indexed by id (how a deadlock names them)."""
        return {"mutexes": list(self._mutexes), "conds": list(self._conds),
                "sems": list(self._sem_ids), "barriers": list(self._barrier_ids)}

    def mark(self, name: str) -> int:
        if name not in self.marks:
            self.marks.append(name)
        return self.marks.index(name)

    def add(self, t: dict) -> int:
        """Add a task dict (see :func:`task`); returns its index (what ``fork`` takes)."""
        self.tasks.append(t)
        return len(self.tasks) - 1

    def metric(self, workload_name: str, params: dict, tasks: Sequence[str] = (),
               marks: Sequence[str] = (), **extra: Any) -> None:
        self.metric_defs.append({"workload": workload_name, "key": workload_name,
                                 "params": dict(params), "tasks": list(tasks),
                                 "marks": list(marks), **extra})

    def build(self) -> dict:
        if not self.tasks:
            raise InputError(f"workload {self.name}", "tasks", "at least one task")
        spec = {"name": self.name, "duration_ns": self.duration_ns,
                "timers": len(self._timers), "tasks": self.tasks}
        if self._mutexes:
            spec["mutexes"] = len(self._mutexes)
        if self._conds:
            spec["conds"] = len(self._conds)
        if self.sems:
            spec["sems"] = list(self.sems)
        if self.barriers:
            unset = [r for r, i in self._barrier_ids.items() if self.barriers[i] <= 0]
            if unset:
                raise InputError(f"workload {self.name}", f"barrier {unset[0]}",
                                 "a count of the tasks that meet there")
            spec["barriers"] = list(self.barriers)
        if self.marks:
            spec["marks"] = list(self.marks)
        if self.metric_defs:
            spec["metric_defs"] = list(self.metric_defs)
        return spec


#: the id spaces whose objects have names a deadlock is reported with (SpecBuilder.names)
_NAMED_SPACES = ("mutexes", "conds", "sems", "barriers")


def _shift_event(ev: dict, off: dict[str, int]) -> dict:
    (kind, val), = ev.items()
    space = SYNC_EVENTS.get(kind)
    if space is None:
        return dict(ev)
    if space == "timers":
        return {kind: {**val, "id": val["id"] + off["timers"]}}
    if space == "cond+mutex":
        return {kind: {**val, "cond": val["cond"] + off["conds"], "mutex": val["mutex"] + off["mutexes"]}}
    return {kind: val + off[space]}


def _ids_used(spec: dict) -> dict[str, list[int]]:
    used: dict[str, list[int]] = {k: [] for k in ("timers", "mutexes", "conds", "barriers", "sems", "marks", "tasks")}
    for t in spec["tasks"]:
        for ph in t["phases"]:
            for ev in ph["events"]:
                (kind, val), = ev.items()
                space = SYNC_EVENTS.get(kind)
                if space == "timers":
                    used["timers"].append(val["id"])
                elif space == "cond+mutex":
                    used["conds"].append(val["cond"])
                    used["mutexes"].append(val["mutex"])
                elif space is not None:
                    used[space].append(val)
    return used


def _count(spec: dict, space: str) -> int:
    if space == "tasks":
        return len(spec["tasks"])
    v = spec.get(space, 0)
    if isinstance(v, list):
        return len(v)
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise InputError("merge_workloads()", space, "a count >= 0 or a list", got=v)
    return v


def workload(name: str, tasks: Sequence[dict], duration_ns: int | None = None) -> dict:
    """A WorkloadSpec from task dicts whose timer ids are each task's own (as
    :func:`hetsched.workloads.periodic` builds them): the ids of task k are shifted past
    those of tasks 0..k-1, in first-appearance order."""
    out, total = [], 0
    for t in tasks:
        mapping: dict[int, int] = {}
        for ph in t["phases"]:
            for ev in ph["events"]:
                if "timer" in ev and ev["timer"]["id"] not in mapping:
                    mapping[ev["timer"]["id"]] = total + len(mapping)
        total += len(mapping)
        out.append({**t, "phases": [
            {"loop": ph["loop"], "events": [
                {"timer": {**ev["timer"], "id": mapping[ev["timer"]["id"]]}} if "timer" in ev else dict(ev)
                for ev in ph["events"]]}
            for ph in t["phases"]]})
    return {"name": name, "duration_ns": duration_ns, "timers": total, "tasks": out}


_AUTO = object()


def merge_workloads(specs: Sequence[dict], name: str | None = None, duration_ns: Any = _AUTO) -> dict:
    """Run several WorkloadSpecs together (several ``--workload`` options).

    Tasks are concatenated in order; every id of spec k (timers, mutexes, conds,
    semaphores, barriers, marks, fork targets) is offset past those of specs 0..k-1.
    The kernel workers a built-in workload adds for its run-to-run variation
    (``spec["noise"]``, workloads/noise.py) belong to the phone, not to the workload: the
    run keeps one set, the longest-lived (one that never ends before any that does), after
    every spec's tasks, and none when a spec brings a recorded phone's own workers
    (``android-system``); and one recorded phone system (``spec["system"]``), the first.
    Task names are kept unless an earlier spec has taken them: then the task of spec k
    becomes ``NAME#k+1`` (its forked copies ``NAME#k+1-nnnn``) and its metric defs follow
    the rename; a second def of the same workload is keyed ``NAME#2``.  ``duration_ns`` defaults to None if
    any spec runs until its tasks end, else to the longest duration.
    """
    if not specs:
        raise InputError("merge_workloads()", "specs", "at least one WorkloadSpec")
    specs, noise = _split_noise(specs)
    specs, system = _one_system(specs)
    off = {k: 0 for k in ("timers", "mutexes", "conds", "barriers", "sems", "marks", "tasks")}
    tasks: list[dict] = []
    sems: list[int] = []
    barriers: list[int] = []
    marks: list[str] = []
    defs: list[dict] = []
    keys: dict[str, int] = {}
    # where the tasks of rt-app files came from (rtapp.locate_engine_error), None elsewhere
    origin_defs: list = []
    origin_tasks: list = []
    # and the names of their synchronisation objects by id (None for the other specs')
    origin_names: dict[str, list] = {s: [] for s in _NAMED_SPACES}
    for k, spec in enumerate(specs):
        o = spec.get("origin")
        counts = {s: _count(spec, s) for s in off}
        if isinstance(o, dict) and len(o.get("tasks", ())) == len(spec["tasks"]):
            origin_tasks += [None if i is None else i + len(origin_defs) for i in o["tasks"]]
            origin_defs += o["defs"]
        else:
            origin_tasks += [None] * len(spec["tasks"])
        names = o.get("names") if isinstance(o, dict) else None
        for space in _NAMED_SPACES:
            given = names.get(space) if isinstance(names, dict) else None
            ok = isinstance(given, list) and len(given) == counts[space]
            origin_names[space] += list(given) if ok else [None] * counts[space]
        for space, ids in _ids_used(spec).items():
            bad = [i for i in ids if not (isinstance(i, int) and 0 <= i < counts[space])]
            if bad:
                raise InputError("merge_workloads()", f"specs[{k}].tasks",
                                 f"{space} ids below {counts[space]}", got=bad[0])
        # a second copy of a workload would reuse its task names, and its metric defs
        # (which name their tasks) would read both copies: rename the colliding ones
        taken = {t["name"] for t in tasks}
        rename = {t["name"]: f"{t['name']}#{k + 1}" for t in spec["tasks"] if t["name"] in taken}
        for t in spec["tasks"]:
            tasks.append({**t, "name": rename.get(t["name"], t["name"]), "phases": [
                {"loop": ph["loop"], "events": [_shift_event(ev, off) for ev in ph["events"]]}
                for ph in t["phases"]]})
        sems += list(spec.get("sems", []))
        barriers += list(spec.get("barriers", []))
        marks += list(spec.get("marks", []))
        for d in spec.get("metric_defs", []):
            if rename:
                d = {**d, "tasks": [rename.get(x, x) for x in d.get("tasks", [])],
                     "params": {pk: rename.get(pv, pv) if isinstance(pv, str) else pv
                                for pk, pv in d.get("params", {}).items()}}
            base = d.get("key", d["workload"]).split("#")[0]
            keys[base] = keys.get(base, 0) + 1
            defs.append({**d, "key": base if keys[base] == 1 else f"{base}#{keys[base]}"})
        for space in off:
            off[space] += counts[space]
    if duration_ns is _AUTO:
        durations = [s.get("duration_ns") for s in specs]
        duration_ns = None if any(d is None for d in durations) else max(durations)
    out = {"name": name or "+".join(str(s.get("name", "")) for s in specs),
           "duration_ns": duration_ns, "timers": off["timers"], "tasks": tasks}
    if off["mutexes"]:
        out["mutexes"] = off["mutexes"]
    if off["conds"]:
        out["conds"] = off["conds"]
    if sems:
        out["sems"] = sems
    if barriers:
        out["barriers"] = barriers
    if marks:
        out["marks"] = marks
    if defs:
        out["metric_defs"] = defs
    if origin_defs:
        out["origin"] = {"defs": origin_defs, "tasks": origin_tasks, "names": origin_names}
    if system is not None:
        out[SYSTEM_KEY] = system
    if noise is not None and not has_kernel_workers(tasks):
        record, workers = noise
        out["tasks"] = tasks + workers
        out[NOISE_KEY] = record
    return out


#: a spec's record of the recorded phone system it carries (workloads/android.py):
#: {"source": name, "tasks": [names]}; a phone has one, so a merged run keeps one
SYSTEM_KEY = "system"


def _take_recorded(spec: dict, key: str) -> tuple[dict, dict, list[dict]] | None:
    """``spec`` without the tasks its record ``spec[key]`` names (and without the record),
    the record, and those tasks; None if it has no such record. A spec lists them after its
    own tasks, so taking them off moves no task id; their semaphores and timers stay."""
    record = spec.get(key)
    if not isinstance(record, dict) or not record.get("tasks"):
        return None
    names = set(record["tasks"])
    own = [t for t in spec["tasks"] if t["name"] not in names]
    taken = [t for t in spec["tasks"] if t["name"] in names]
    return {k: v for k, v in spec.items() if k != key} | {"tasks": own}, dict(record), taken


def _one_system(specs: Sequence[dict]) -> tuple[list[dict], dict | None]:
    """The specs with one recorded phone system among them: the first spec that carries
    one keeps it (its tasks where they are), the others lose theirs (the browsing and the
    game of one phone run beside one system_server)."""
    out, kept = [], None
    for spec in specs:
        took = _take_recorded(spec, SYSTEM_KEY)
        if took is None:
            out.append(spec)
        elif kept is None:
            kept = took[1]
            out.append({k: v for k, v in spec.items() if k != SYSTEM_KEY})
        else:
            out.append(took[0])
    return out, kept


def _split_noise(specs: Sequence[dict]) -> tuple[list[dict], tuple[dict, list[dict]] | None]:
    """The specs without their noise workers, and the set the merged run keeps (its
    record and tasks): the longest horizon, None (forever) first, the earliest spec on a
    tie."""
    out, best = [], None
    for spec in specs:
        took = _take_recorded(spec, NOISE_KEY)
        if took is None:
            out.append(spec)
            continue
        own, record, workers = took
        out.append(own)
        h = record.get("horizon_ns")
        key = float("inf") if h is None else float(h)
        if best is None or key > best[0]:
            best = (key, record, workers)
    return out, None if best is None else (best[1], best[2])
