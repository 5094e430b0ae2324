"""A deadlock that stopped a run, as result.json and the command line report it.

The engine finds it (crates/hetsched-core/src/deadlock.rs: a cycle of mutex waits when
it closes, or every task blocked on a synchronisation object with none left that could
release it) and stops the run at that instant. Its record names tasks by name and objects
by kind and id; :func:`describe` names the objects as the workload does (an rt-app file's
mutex ``m1``, from the spec's ``origin``) and each task's event as the user wrote it
(``abba.json: tasks.A.phases.p0.lock2``). :func:`warning` is the one line ``hetsched run``
prints.
"""

from __future__ import annotations

from typing import Any, Mapping

from hetsched.workloads.rtapp import user_field

__all__ = ["describe", "warning"]

# engine kind -> (the origin's id space, the word for it)
_KINDS = {"mutex": ("mutexes", "mutex"), "cond": ("conds", "condition"), "sem": ("sems", "semaphore"),
          "barrier": ("barriers", "barrier")}


def _object(kind: str, i: int, spec: Mapping) -> str:
    space, word = _KINDS.get(kind, (kind, kind))
    names = ((spec.get("origin") or {}).get("names") or {}).get(space) if isinstance(spec, Mapping) else None
    name = names[i] if isinstance(names, list) and 0 <= i < len(names) and names[i] is not None else None
    return f"{word} {name if name is not None else i}"


def describe(engine_doc: Mapping, spec: Mapping) -> dict:
    """result.json's ``deadlock`` from the engine's record and the workload ``spec``:
    ``time_s``, ``found`` (``mutex cycle`` or ``all blocked``), ``cycle`` (the tasks wait
    for one another; else for tasks that have exited), ``tasks`` and ``resources`` (what
    they wait for), and ``waits``: per task, the object, the tasks it waits for (``by``),
    the mutexes it holds and the event it blocked at (``at``)."""
    waits, resources = [], []
    for t in engine_doc.get("tasks", []):
        w = t["waits_for"]
        obj = _object(w["kind"], w["id"], spec)
        if w["kind"] == "barrier":
            obj += f" ({w.get('arrived')} of {w.get('need')} arrived)"
        if obj not in resources:
            resources.append(obj)
        where = user_field(dict(spec), t["field"]) or (f"workload {spec.get('name') or ''}".strip(), t["field"])
        at = f"{where[0]}: {where[1]}"
        waits.append({"task": t["name"], "waits_for": obj, "by": list(t["by"]),
                      "holds": [_object("mutex", m, spec) for m in t["holds"]], "at": at})
    return {"time_s": engine_doc["time_ns"] / 1e9, "found": engine_doc["found"], "cycle": bool(engine_doc["cycle"]),
            "tasks": [w["task"] for w in waits], "resources": resources, "waits": waits}


def _source(d: Mapping, spec: Mapping) -> str:
    """The files the deadlocked tasks come from (else the workload's name)."""
    files = []
    for w in d.get("waits", []):
        src = w["at"].rsplit(": ", 1)[0]
        if src not in files:
            files.append(src)
    return ", ".join(files) or f"workload {spec.get('name') or ''}".strip()


def warning(d: Mapping[str, Any], spec: Mapping, shown: int = 4) -> str:
    """The one line (without ``hetsched: warning:``) a run a deadlock stopped prints:
    where from, when, each task and what it waits for (the first ``shown``), and that the
    run stopped there."""
    parts = []
    for w in d["waits"][:shown]:
        who = " or ".join(w["by"])
        if who and w["waits_for"].startswith("mutex "):
            tail = f"held by {who}"
        elif who:
            tail = f"which only {who} could release"
        else:
            tail = "which only tasks that have exited could release"
        parts.append(f"{w['task']} waits for {w['waits_for']}, {tail}")
    more = len(d["waits"]) - shown
    if more > 0:
        parts.append(f"and {more} more task{'s' if more > 1 else ''}")
    what = "deadlock" if d["cycle"] else "every task blocked for good"
    return (f"{_source(d, spec)}: {what} at {d['time_s']:.6g} s: " + "; ".join(parts)
            + "; the run stopped there (result.json: deadlock)")
