"""rt-app JSON workload files -> WorkloadSpec (the periodic subset).

Follows scheduler-tools/rt-app @55cb0c04: ``src/rt-app_parse_config.c`` (what a file
means), ``src/rt-app.c`` (how threads are named and looped) and ``doc/tutorial.txt``.
The resolved form is the ``WorkloadSpec`` of docs/engine-interface.md; the user-facing
description, with the decisions taken where rt-app is lax, is docs/workloads.md.

Scope: the *periodic subset* of the grammar.  Events ``run``, ``runtime``, ``sleep``
and ``timer``; task properties ``instance``, ``delay``, ``loop``, ``phases``,
``policy`` (OTHER, FIFO, RR), ``priority``, ``cpus``, ``util_min``, ``util_max``.
Everything else rt-app knows is refused with an :class:`InputError` that names the
file, the field path and what is missing; nothing is silently dropped except the
``global`` keys that only steer rt-app's own logging and calibration.

Differences from rt-app, on purpose:

* Repeated keys are a sequence in file order (``doc/workgen`` semantics), where plain
  json-c would keep only the last value.
* Keys rt-app silently ignores (typos, events next to ``phases``) are errors here.
* Values rt-app would accept but treat oddly are refused: loop 0 or below -1, a
  missing timer ``ref`` or ``period``, a timer ``mode`` other than relative/absolute.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from hetsched.errors import InputError, did_you_mean

__all__ = ["load_rtapp", "periodic", "workload", "merge_workloads"]

# rt-app reads every integer with json_object_get_int(): a C int.
_INT_MAX = 2**31 - 1
_NS_PER_US = 1_000
_NS_PER_S = 1_000_000_000

# obj_is_event() in rt-app_parse_config.c: a key is an event when it *starts* with one
# of these, tested in this order ("runtime" before "run", "memrun" before "mem").
EVENT_PREFIXES = (
    "lock", "unlock", "wait", "signal", "broad", "sync", "sleep", "runtime", "run",
    "timer", "suspend", "resume", "memrun", "mem", "iorun", "yield", "barrier",
    "fork", "sem_post", "sem_wait",
)
SUPPORTED_EVENTS = ("run", "runtime", "sleep", "timer")
_SUBSET_EVENTS = "an event of the periodic subset (run, runtime, sleep, timer)"

SUPPORTED_TASK_PROPERTIES = (
    "instance", "delay", "loop", "phases", "policy", "priority", "cpus",
    "util_min", "util_max",
)
# Properties rt-app knows but the WorkloadSpec has no place for yet.  "runtime" is
# absent: as an exact key it is first of all a run-time event (see docs/workloads.md).
_UNSUPPORTED_TASK_PROPERTIES = {
    "dl-runtime": "deadline parameters and the CFS slice are not modelled yet",
    "dl-period": "deadline parameters are not modelled yet",
    "dl-deadline": "deadline parameters are not modelled yet",
    "period": "the legacy deadline 'period' is not modelled yet",
    "deadline": "the legacy deadline 'deadline' is not modelled yet",
    "nodes_membind": "NUMA memory binding is not modelled",
    "taskgroup": "task groups (cgroups) are not modelled yet",
}
# Keys that may appear inside a phase in the full grammar.
_PHASE_PROPERTIES = (
    "policy", "priority", "cpus", "util_min", "util_max", "dl-runtime", "dl-period",
    "dl-deadline", "nodes_membind", "taskgroup",
)

# parse_global(): keys that only steer rt-app itself (logs, traces, calibration,
# memory locking, buffers of events we refuse anyway).  "frag" is a legacy key found
# in the Android use cases; rt-app never reads it.
IGNORED_GLOBAL_KEYS = (
    "calibration", "pi_enabled", "lock_pages", "logdir", "log_basename", "log_size",
    "gnuplot", "ftrace", "io_device", "mem_buffer_size", "cumulative_slack", "frag",
)
_GLOBAL_KEYS = ("duration", "default_policy") + IGNORED_GLOBAL_KEYS
_TOP_LEVEL_KEYS = ("tasks", "global", "resources")

_POLICIES = {
    "SCHED_OTHER": "other", "OTHER": "other",
    "SCHED_FIFO": "fifo", "FIFO": "fifo",
    "SCHED_RR": "rr", "RR": "rr",
}
_UNSUPPORTED_POLICIES = ("SCHED_BATCH", "BATCH", "SCHED_IDLE", "IDLE",
                         "SCHED_DEADLINE", "DEADLINE")
# rt-app_types.h
DEFAULT_THREAD_PRIORITY = 10
DEFAULT_THREAD_NICE = 0


# --------------------------------------------------------------------------- parsing

class _Obj:
    """A JSON object as its (key, value) pairs in file order, repeats included."""

    __slots__ = ("pairs",)

    def __init__(self, pairs: Sequence[tuple[str, Any]]):
        self.pairs = list(pairs)

    def get(self, key: str, default: Any = None) -> Any:
        for k, v in self.pairs:
            if k == key:
                return v
        return default

    def __contains__(self, key: str) -> bool:
        return any(k == key for k, _ in self.pairs)

    def items(self) -> Iterator[tuple[str, str, Any]]:
        """(key, label, value) in file order; the label of the n-th copy of a
        repeated key is ``key#n`` (``run``, ``run#2``, ...), used in error paths."""
        seen: dict[str, int] = {}
        for k, v in self.pairs:
            seen[k] = seen.get(k, 0) + 1
            yield k, (k if seen[k] == 1 else f"{k}#{seen[k]}"), v

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{k!r}: {v!r}" for k, v in self.pairs) + "}"


class _SyntaxError(Exception):
    def __init__(self, pos: int, msg: str):
        super().__init__(msg)
        self.pos = pos
        self.msg = msg


def _strip_json_c_extensions(text: str) -> str:
    """Blank out what json-c accepts and JSON does not: comments, trailing commas.

    ``/* */`` and ``//`` comments outside strings become spaces (newlines kept), and
    so does a comma whose next significant character closes an object or array.  The
    result has the same length and line structure as ``text``, so the positions in a
    JSON error still point into the user's file.
    """
    out = list(text)
    n = len(text)
    i = 0
    last_comma = -1          # index of a comma not yet followed by a value
    prev = ""                # the last significant character seen
    while i < n:
        c = text[i]
        if c == '"':
            last_comma, prev = -1, '"'
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            continue
        if c == "/" and i + 1 < n and text[i + 1] == "*":
            end = text.find("*/", i + 2)
            if end < 0:
                raise _SyntaxError(i, "unterminated /* comment")
            for j in range(i, end + 2):
                if out[j] != "\n":
                    out[j] = " "
            i = end + 2
            continue
        if c == "/" and i + 1 < n and text[i + 1] == "/":
            end = text.find("\n", i)
            end = n if end < 0 else end
            for j in range(i, end):
                out[j] = " "
            i = end
            continue
        if c == ",":
            # Only a comma that follows a value can be trailing: "{,}" stays an error.
            last_comma = i if prev not in ("{", "[", ",") else -1
        elif c in "}]":
            if last_comma >= 0:
                out[last_comma] = " "
            last_comma = -1
        elif not c.isspace():
            last_comma = -1
        if not c.isspace():
            prev = c
        i += 1
    return "".join(out)


def _line_col(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return line, col


def _parse_json(text: str, source: str) -> Any:
    def bad(pos: int, msg: str) -> InputError:
        line, col = _line_col(text, pos)
        return InputError(source, "json", f"valid JSON (line {line}, column {col}: {msg})")

    try:
        cleaned = _strip_json_c_extensions(text)
    except _SyntaxError as err:
        raise bad(err.pos, err.msg) from None

    def no_constant(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    decoder = json.JSONDecoder(object_pairs_hook=_Obj, parse_constant=no_constant)
    try:
        value, end = decoder.raw_decode(cleaned, _skip_ws(cleaned, 0))
    except json.JSONDecodeError as err:
        raise bad(err.pos, err.msg) from None
    except ValueError as err:  # NaN / Infinity
        raise InputError(source, "json", f"valid JSON ({err})") from None
    end = _skip_ws(cleaned, end)
    if end != len(cleaned):
        raise bad(end, "extra data after the top-level object")
    return value


def _skip_ws(s: str, i: int) -> int:
    while i < len(s) and s[i] in " \t\r\n":
        i += 1
    return i


# --------------------------------------------------------------------- small checks

def _path(*parts: str) -> str:
    return ".".join(parts)


def _event_kind(key: str) -> str | None:
    for prefix in EVENT_PREFIXES:
        if key.startswith(prefix):
            return prefix
    return None


def _int(value: Any, source: str, field: str, expected: str,
         lo: int | None = None, hi: int | None = _INT_MAX) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(source, field, expected, got=value)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise InputError(source, field, expected, got=value)
    return value


def _loop(value: Any, source: str, field: str) -> int:
    v = _int(value, source, field, "a loop count: a positive integer, or -1 for forever")
    if v == 0 or v < -1:
        raise InputError(source, field,
                         "a loop count: a positive integer, or -1 for forever", got=v)
    return v


def _policy(value: Any, source: str, field: str) -> str:
    if not isinstance(value, str):
        raise InputError(source, field, "a policy name string such as \"SCHED_OTHER\"",
                         got=value)
    if value in _POLICIES:
        return _POLICIES[value]
    if value in _UNSUPPORTED_POLICIES:
        raise InputError(source, field,
                         f"SCHED_OTHER, SCHED_FIFO or SCHED_RR; {value} is not supported yet")
    expected = "one of: SCHED_OTHER, SCHED_FIFO, SCHED_RR (or OTHER, FIFO, RR)"
    hint = did_you_mean(value, list(_POLICIES) + list(_UNSUPPORTED_POLICIES))
    if hint:
        expected += f" (did you mean {hint!r}?)"
    raise InputError(source, field, expected, got=value)


def _unknown_key(source: str, field: str, key: str, expected: str,
                 choices: Iterable[str]) -> InputError:
    hint = did_you_mean(key, choices)
    if hint:
        expected += f" (did you mean {hint!r}?)"
    return InputError(source, field, expected, got=key)


def _once(source: str, field: str, key: str, label: str) -> None:
    if label != key:    # the 2nd, 3rd, ... copy of a key
        raise InputError(source, field,
                         "a key given once (only event keys may repeat)")


# ----------------------------------------------------------------- intermediate form

@dataclass
class _Timer:
    ref: str
    unique: bool
    period_ns: int
    absolute: bool


@dataclass
class _Phase:
    loop: int
    events: list  # of (kind, value): ("run", ns) ... ("timer", _Timer)


@dataclass
class _TaskDef:
    key: str
    instance: int = 1
    delay_ns: int = 0
    loop: int = -1
    policy: str | None = None
    priority: int | None = None
    priority_field: str = ""
    cpus: list[int] | None = None
    util_min: int | None = None
    util_max: int | None = None
    phases: list[_Phase] = field(default_factory=list)


def _parse_event(source: str, fpath: str, kind: str, value: Any) -> tuple[str, Any]:
    if kind in ("run", "runtime", "sleep"):
        us = _int(value, source, fpath, f"a '{kind}' duration: an integer >= 0 (µs)", lo=0)
        return kind, us * _NS_PER_US
    # kind == "timer"
    if not isinstance(value, _Obj):
        raise InputError(source, fpath,
                         'a timer object {"ref": name, "period": µs, "mode": '
                         '"relative"|"absolute"}', got=value)
    ref = period = None
    mode = "relative"
    for key, label, v in value.items():
        f = _path(fpath, label)
        _once(source, f, key, label)
        if key == "ref":
            if not isinstance(v, str):
                raise InputError(source, f, "a timer name string", got=v)
            ref = v
        elif key == "period":
            period = _int(v, source, f, "a timer period: an integer >= 0 (µs)", lo=0)
        elif key == "mode":
            if v not in ("relative", "absolute"):
                raise InputError(source, f, '"relative" or "absolute"', got=v)
            mode = v
        else:
            raise _unknown_key(source, f, key, "a timer key: ref, period or mode",
                               ("ref", "period", "mode"))
    if ref is None:
        raise InputError(source, _path(fpath, "ref"),
                         "a timer 'ref' (rt-app would silently use a shared timer "
                         "named \"unknown\")")
    if period is None:
        raise InputError(source, _path(fpath, "period"),
                         "a timer 'period' in µs (rt-app would silently use 0)")
    # rt-app_parse_config.c: strncmp(ref, "unique", 6) -> one timer per thread.
    return "timer", _Timer(ref=ref, unique=ref.startswith("unique"),
                           period_ns=period * _NS_PER_US, absolute=(mode == "absolute"))


def _unsupported_event(source: str, fpath: str, kind: str) -> InputError:
    return InputError(source, fpath,
                      f"{_SUBSET_EVENTS}; '{kind}' comes with the full rt-app grammar")


def _parse_phase(source: str, base: str, obj: Any) -> _Phase:
    if not isinstance(obj, _Obj):
        raise InputError(source, base, "a phase object", got=obj)
    loop, events = 1, []
    for key, label, value in obj.items():
        fpath = _path(base, label)
        kind = _event_kind(key)
        if kind in SUPPORTED_EVENTS:
            events.append(_parse_event(source, fpath, kind, value))
        elif kind is not None:
            raise _unsupported_event(source, fpath, kind)
        elif key == "loop":
            _once(source, fpath, key, label)
            loop = _loop(value, source, fpath)
        elif key in _PHASE_PROPERTIES:
            raise InputError(source, fpath,
                             "only 'loop' and events inside a phase of the periodic subset; "
                             f"phase-level '{key}' comes with the full rt-app grammar "
                             "(issue 4)")
        else:
            raise _unknown_key(source, fpath, key,
                               "an event (run, runtime, sleep, timer) or 'loop'",
                               list(SUPPORTED_EVENTS) + ["loop"])
    if not events:
        raise InputError(source, base,
                         "at least one event in the phase (rt-app: \"No events found\")")
    return _Phase(loop=loop, events=events)


def _parse_task(source: str, key: str, obj: Any, default_policy: str) -> _TaskDef:
    """One task object, its keys taken in file order so the first problem is reported."""
    base = _path("tasks", key)
    if not isinstance(obj, _Obj):
        raise InputError(source, base, "a task object", got=obj)
    t = _TaskDef(key=key)
    has_phases = "phases" in obj
    loop_key: int | None = None
    events: list = []
    for k, label, value in obj.items():
        fpath = _path(base, label)
        kind = _event_kind(k)
        if kind is not None:
            if kind not in SUPPORTED_EVENTS:
                raise _unsupported_event(source, fpath, kind)
            if has_phases:
                raise InputError(source, fpath,
                                 "no events beside 'phases' (rt-app silently ignores "
                                 "them); move them into a phase")
            events.append(_parse_event(source, fpath, kind, value))
            continue
        if k in SUPPORTED_TASK_PROPERTIES:
            _once(source, fpath, k, label)
        if k == "instance":
            t.instance = _int(value, source, fpath, "an instance count: an integer >= 0", lo=0)
        elif k == "delay":
            t.delay_ns = _int(value, source, fpath, "a delay: an integer >= 0 (µs)",
                              lo=0) * _NS_PER_US
        elif k == "loop":
            loop_key = _loop(value, source, fpath)
        elif k == "phases":
            if not isinstance(value, _Obj):
                raise InputError(source, fpath, "an object of phases", got=value)
            if not value.pairs:
                raise InputError(source, fpath, "at least one phase")
            # Repeated phase names are kept: workgen renames them, order is what counts.
            t.phases = [_parse_phase(source, _path(fpath, plabel), pvalue)
                        for _, plabel, pvalue in value.items()]
        elif k == "policy":
            t.policy = _policy(value, source, fpath)
        elif k == "priority":
            t.priority = _int(value, source, fpath, "an integer priority", lo=None)
            t.priority_field = fpath
        elif k == "cpus":
            t.cpus = _cpus(source, fpath, value)
        elif k in ("util_min", "util_max"):
            v = _int(value, source, fpath,
                     f"a {k} from 0 to 1024, or -1 for unchanged", lo=-1, hi=1024)
            setattr(t, k, None if v == -1 else v)
        elif k in _UNSUPPORTED_TASK_PROPERTIES:
            raise InputError(source, fpath,
                             "a task property of the periodic subset ("
                             + ", ".join(SUPPORTED_TASK_PROPERTIES) + f"); '{k}' is not "
                             f"supported yet: {_UNSUPPORTED_TASK_PROPERTIES[k]}")
        else:
            raise _unknown_key(source, fpath, k,
                               "an event (run, runtime, sleep, timer) or a task property ("
                               + ", ".join(SUPPORTED_TASK_PROPERTIES) + ")",
                               list(SUPPORTED_EVENTS) + list(SUPPORTED_TASK_PROPERTIES))

    # parse_sched_data(): policy defaults to global.default_policy, priority to the
    # policy's default (nice 0, or RT priority 10).
    policy = t.policy or default_policy
    t.policy = policy
    if t.priority is None:
        t.priority = DEFAULT_THREAD_NICE if policy == "other" else DEFAULT_THREAD_PRIORITY
    elif policy == "other" and not -20 <= t.priority <= 19:
        raise InputError(source, t.priority_field,
                         "a nice value from -20 to 19 (priority of a SCHED_OTHER task)",
                         got=t.priority)
    elif policy != "other" and not 1 <= t.priority <= 99:
        raise InputError(source, t.priority_field,
                         "an RT priority from 1 to 99 (priority of a "
                         f"SCHED_{policy.upper()} task)", got=t.priority)
    if t.util_min is not None and t.util_max is not None and t.util_min > t.util_max:
        raise InputError(source, _path(base, "util_min"),
                         f"util_min <= util_max ({t.util_max}); the kernel refuses the clamp",
                         got=t.util_min)

    if has_phases:
        t.loop = -1 if loop_key is None else loop_key
    else:
        # parse_task_data(): the task is its own single phase.  A "loop" key is that
        # phase's count and the task runs once; without one the task loops forever.
        if not events:
            raise InputError(source, base,
                             "events (run, runtime, sleep, timer) or a 'phases' object "
                             "(rt-app: \"No events found\")")
        if loop_key is None:
            t.phases, t.loop = [_Phase(loop=1, events=events)], -1
        else:
            t.phases, t.loop = [_Phase(loop=loop_key, events=events)], 1
    return t


def _cpus(source: str, fpath: str, value: Any) -> list[int]:
    expected = "a non-empty array of CPU numbers (integers >= 0)"
    if not isinstance(value, list) or not value:
        raise InputError(source, fpath, expected, got=value)
    cpus = [_int(c, source, f"{fpath}[{i}]", "a CPU number: an integer >= 0", lo=0)
            for i, c in enumerate(value)]
    return sorted(set(cpus))


def _parse_global(source: str, obj: Any) -> tuple[int | None, str]:
    duration_ns: int | None = None
    policy = "other"
    if obj is None:
        return duration_ns, policy
    if not isinstance(obj, _Obj):
        raise InputError(source, "global", "a global object", got=obj)
    for key, label, value in obj.items():
        fpath = _path("global", label)
        if key in _GLOBAL_KEYS:
            _once(source, fpath, key, label)
        if key == "duration":
            d = _int(value, source, fpath,
                     "a duration: a positive integer (s), or -1 until every task ends",
                     lo=-1)
            if d == 0:
                raise InputError(source, fpath,
                                 "a duration: a positive integer (s), or -1 until every "
                                 "task ends", got=d)
            duration_ns = None if d == -1 else d * _NS_PER_S
        elif key == "default_policy":
            policy = _policy(value, source, fpath)
        elif key == "calibration":
            # Only decides how rt-app converts a "run" µs into busy loops on the host;
            # the simulator models run as invariant work instead (docs/workloads.md).
            if not (isinstance(value, str) and re.fullmatch(r"CPU\d+", value)) and (
                    isinstance(value, bool) or not isinstance(value, int)):
                raise InputError(source, fpath,
                                 "\"CPUn\" or an integer ns per loop", got=value)
        elif key in IGNORED_GLOBAL_KEYS:
            pass
        else:
            raise _unknown_key(source, fpath, key,
                               "a global key (" + ", ".join(_GLOBAL_KEYS) + ")", _GLOBAL_KEYS)
    return duration_ns, policy


# --------------------------------------------------------------------------- resolve

def _resolve(source: str, name: str, root: Any) -> dict:
    if not isinstance(root, _Obj):
        raise InputError(source, "json", "a top-level JSON object", got=root)
    for key, label, _ in root.items():
        if key not in _TOP_LEVEL_KEYS:
            raise _unknown_key(source, label, key, "a top-level key: tasks, global or resources",
                               _TOP_LEVEL_KEYS)
        _once(source, label, key, label)
    duration_ns, default_policy = _parse_global(source, root.get("global"))
    tasks = root.get("tasks")
    if tasks is None:
        raise InputError(source, "tasks", "a 'tasks' object (mandatory in rt-app)")
    if not isinstance(tasks, _Obj):
        raise InputError(source, "tasks", "an object of tasks", got=tasks)

    defs: list[_TaskDef] = []
    for key, label, value in tasks.items():
        if label != key:
            raise InputError(source, _path("tasks", label),
                             "a task name used once (it names the threads)")
        defs.append(_parse_task(source, key, value, default_policy))

    # A timer's mode belongs to the timer: rt-app sets relative = 0 on the resource as
    # soon as one event that refers to it says "absolute" (even in an instance-0 task).
    absolute_shared = {ev.ref for d in defs for p in d.phases for kind, ev in p.events
                       if kind == "timer" and not ev.unique and ev.absolute}
    absolute_unique = {(d.key, ev.ref) for d in defs for p in d.phases for kind, ev in p.events
                       if kind == "timer" and ev.unique and ev.absolute}

    timer_ids: dict[tuple, int] = {}
    out_tasks = []
    thread_index = 0     # rt-app.c main(): one index over all threads, in file order
    for d in defs:
        for _ in range(d.instance):     # instance 0: created only by "fork" -> omitted
            idx = thread_index
            thread_index += 1
            phases = []
            for p in d.phases:
                events = []
                for kind, value in p.events:
                    if kind != "timer":
                        events.append({kind: value})
                        continue
                    if value.unique:
                        tkey = ("unique", idx, value.ref)
                        absolute = (d.key, value.ref) in absolute_unique
                    else:
                        tkey = ("shared", value.ref)
                        absolute = value.ref in absolute_shared
                    tid = timer_ids.setdefault(tkey, len(timer_ids))
                    events.append({"timer": {"id": tid, "period_ns": value.period_ns,
                                             "mode": "absolute" if absolute else "relative"}})
                phases.append({"loop": p.loop, "events": events})
            out_tasks.append({
                "name": f"{d.key}-{idx}",
                "policy": d.policy,
                "nice": d.priority if d.policy == "other" else 0,
                "rt_priority": d.priority if d.policy != "other" else 0,
                "cpus": None if d.cpus is None else list(d.cpus),
                "util_min": d.util_min,
                "util_max": d.util_max,
                "delay_ns": d.delay_ns,
                "loop": d.loop,
                "phases": phases,
            })
    if not out_tasks:
        raise InputError(source, "tasks",
                         "at least one task with instance >= 1 (instance 0 tasks only "
                         "exist for 'fork')")
    return {"name": name, "duration_ns": duration_ns, "timers": len(timer_ids),
            "tasks": out_tasks}


def load_rtapp(path_or_text: str | os.PathLike, source: str | None = None,
               name: str | None = None) -> dict:
    """Load an rt-app JSON file (or its text) and resolve it into a WorkloadSpec dict.

    ``path_or_text`` is a path, or the JSON text itself: a ``str`` that starts,
    after blanks, with ``{``, ``[``, ``/*`` or ``//``, or that spans several lines.
    ``source`` names it in error messages (default: the path, or
    ``"<rt-app text>"``); ``name`` is the workload name (default: the file's stem,
    or the stem of ``source``).
    Raises :class:`InputError` for anything outside the periodic subset.
    """
    is_text = isinstance(path_or_text, str) and (
        path_or_text.lstrip().startswith(("{", "[", "/*", "//")) or "\n" in path_or_text)
    if is_text:
        text = path_or_text
        source = source or "<rt-app text>"
        default_name = Path(source).stem if source != "<rt-app text>" else "rtapp"
    else:
        path = Path(path_or_text)
        source = source or str(path_or_text)
        default_name = path.stem
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise InputError(source, "file", "a readable UTF-8 rt-app JSON file",
                             got=str(err)) from None
    root = _parse_json(text, source)
    return _resolve(source, name or default_name, root)


# ------------------------------------------------------------------ building blocks

def _num_ns(value: Any, what: str, field: str, lo: float = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < lo \
            or value != value:
        raise InputError("periodic()", field, what, got=value)
    return round(value * _NS_PER_US)


def periodic(name: str, period_us: float, run_us: float, count: int | None = None,
             nice: int = 0, cpus: Sequence[int] | None = None, delay_us: float = 0) -> dict:
    """One periodic task in WorkloadSpec form: ``run`` then a unique ``timer``.

    The LISA ``PeriodicWload(period, duty_cycle, duration)`` mapping:
    ``count = floor(duration / period)`` periods of ``run_us = duty_cycle * period_us``
    invariant work; ``count=None`` repeats forever.  The timer id is 0 and local to
    this task: put tasks into a spec with :func:`workload`, which renumbers them.
    """
    if not isinstance(name, str) or not name:
        raise InputError("periodic()", "name", "a non-empty task name", got=name)
    period_ns = _num_ns(period_us, "a period > 0 (µs)", "period_us")
    if period_ns <= 0:
        raise InputError("periodic()", "period_us", "a period > 0 (µs)", got=period_us)
    run_ns = _num_ns(run_us, "a run amount >= 0 (µs)", "run_us")
    delay_ns = _num_ns(delay_us, "a delay >= 0 (µs)", "delay_us")
    if count is not None:
        _int(count, "periodic()", "count", "a period count >= 1, or None for forever", lo=1,
             hi=None)
    _int(nice, "periodic()", "nice", "a nice value from -20 to 19", lo=-20, hi=19)
    if cpus is not None:
        cpus = _cpus("periodic()", "cpus", list(cpus))
    return {
        "name": name, "policy": "other", "nice": nice, "rt_priority": 0,
        "cpus": cpus, "util_min": None, "util_max": None, "delay_ns": delay_ns,
        # LISA writes a task loop of 1 around phases that carry the count.
        "loop": -1 if count is None else 1,
        "phases": [{"loop": 1 if count is None else count, "events": [
            {"run": run_ns},
            {"timer": {"id": 0, "period_ns": period_ns, "mode": "relative"}},
        ]}],
    }


def _task_timer_ids(task: dict) -> list[int]:
    return [ev["timer"]["id"] for ph in task["phases"] for ev in ph["events"] if "timer" in ev]


def _renumber(task: dict, mapping: dict[int, int]) -> dict:
    out = dict(task)
    out["phases"] = [
        {"loop": ph["loop"], "events": [
            {"timer": {**ev["timer"], "id": mapping[ev["timer"]["id"]]}} if "timer" in ev
            else dict(ev)
            for ev in ph["events"]]}
        for ph in task["phases"]]
    return out


def workload(name: str, tasks: Sequence[dict], duration_ns: int | None = None) -> dict:
    """A WorkloadSpec from task dicts whose timer ids are each task's own.

    Every task keeps its timers to itself (as :func:`periodic` builds them): the ids
    of task k are shifted past those of tasks 0..k-1, in first-appearance order.
    """
    out, total = [], 0
    for task in tasks:
        mapping: dict[int, int] = {}
        for tid in _task_timer_ids(task):
            if tid not in mapping:
                mapping[tid] = total + len(mapping)
        total += len(mapping)
        out.append(_renumber(task, mapping))
    return {"name": name, "duration_ns": duration_ns, "timers": total, "tasks": out}


_AUTO = object()


def merge_workloads(specs: Sequence[dict], name: str | None = None,
                    duration_ns: Any = _AUTO) -> dict:
    """Run several WorkloadSpecs together (several ``--workload`` options).

    Tasks are concatenated in order; the timer ids of spec k are offset by the
    ``timers`` of specs 0..k-1, so no timer is shared across specs (they would be
    separate rt-app processes).  Task names are kept as they are.
    ``duration_ns`` defaults to None if any spec runs until its tasks end, else to
    the longest duration.  ``name`` defaults to the names joined with ``+``.
    """
    if not specs:
        raise InputError("merge_workloads()", "specs", "at least one WorkloadSpec")
    tasks, offset = [], 0
    for k, spec in enumerate(specs):
        timers = spec.get("timers")
        if isinstance(timers, bool) or not isinstance(timers, int) or timers < 0:
            raise InputError("merge_workloads()", f"specs[{k}].timers",
                             "a timer count >= 0", got=timers)
        for task in spec["tasks"]:
            ids = _task_timer_ids(task)
            bad = [t for t in ids if not 0 <= t < timers]
            if bad:
                raise InputError("merge_workloads()", f"specs[{k}].tasks",
                                 f"timer ids below timers ({timers})", got=bad[0])
            tasks.append(_renumber(task, {t: t + offset for t in ids}))
        offset += timers
    if duration_ns is _AUTO:
        durations = [s.get("duration_ns") for s in specs]
        duration_ns = None if any(d is None for d in durations) else max(durations)
    return {"name": name or "+".join(str(s.get("name", "")) for s in specs),
            "duration_ns": duration_ns, "timers": offset, "tasks": tasks}
