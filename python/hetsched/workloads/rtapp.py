"""rt-app JSON workload files -> WorkloadSpec (the whole grammar).

Follows scheduler-tools/rt-app @55cb0c04: ``src/rt-app_parse_config.c`` (what a file
means), ``src/rt-app.c`` (how threads are named, looped and how each event runs) and
``doc/tutorial.txt``.  The resolved form is the ``WorkloadSpec`` of
docs/engine-interface.md; the user-facing description, with every decision taken where
rt-app is lax and every modelling assumption, is docs/workloads.md ("rt-app JSON files").

Every event of rt-app is read (lock, unlock, wait, signal, broad, sync, sleep, runtime,
run, timer, suspend, resume, memrun, mem, iorun, yield, barrier, fork, sem_post,
sem_wait) and lowered to the engine's events; resources are named as rt-app names them
(one namespace per kind: mutexes, condition variables, barriers, semaphores, timers),
and :class:`~hetsched.workloads.spec.SpecBuilder` hands out their ids.  Task and phase
properties (policy, priority, cpus, util_min/util_max, dl-runtime/-period/-deadline,
taskgroup, nodes_membind) are read as ``parse_sched_data()`` reads them; a property
given in a phase becomes a ``setattr`` event at the start of that phase.

Differences from rt-app, on purpose:

* Repeated keys are a sequence in file order (``doc/workgen`` semantics), where plain
  json-c would keep only the last value.
* Keys rt-app silently ignores (typos, events next to ``phases``) are errors here.
* Values rt-app would accept but treat oddly are refused: loop 0 or below -1, a
  missing timer ``ref`` or ``period``, a ``wait``/``sync`` without ``ref`` or
  ``mutex``, a timer ``mode`` other than relative/absolute, a fork of a task that does
  not exist (rt-app exits when the fork runs), an ``unlock``/``wait``/``sync`` of a
  mutex nobody ever locks, a barrier in a task that is forked.
* What would run away in the simulation is refused when the file is read, naming the
  tasks: a fork cycle in which no task spends time or waits before the next fork (copies
  without end at one instant; rt-app forks until a task reaches its limit of 1024 forks
  and exits), a loop of events that take no time repeated forever or for more engine
  steps than the engine allows at one instant (rt-app busy-loops on the real clock; the
  simulated clock would stand still), more threads than the engine holds.  What gets
  past these the engine stops (crates/hetsched-core/src/limits.rs), and
  :func:`locate_engine_error` names its error, like any engine error about the spec, in
  the file's terms: the spec's ``origin`` key says where each task came from.

:func:`phase_log` turns the engine's per-phase statistics into rt-app's per-phase log
rows (slack, wake-up latency, run time).
"""

from __future__ import annotations

import json
import math
import os
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from hetsched._input import MAX_NESTING, check_json_nesting, read_text
from hetsched.errors import InputError, did_you_mean
from hetsched.workloads.spec import SpecBuilder

__all__ = ["load_rtapp", "periodic", "phase_log", "format_phase_log", "PHASE_LOG_COLUMNS",
           "workload", "merge_workloads", "locate_engine_error", "errors_located"]

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
SUPPORTED_EVENTS = EVENT_PREFIXES
# events whose value is the name of a resource (a JSON string in rt-app)
_NAMED_EVENTS = ("lock", "unlock", "signal", "broad", "resume", "barrier", "fork",
                 "sem_post", "sem_wait")

# Properties read by parse_sched_data(), parse_cpuset_data(), parse_numa_data() and
# parse_taskgroup_data(): at task level and in a phase.
_SCHED_PROPERTIES = ("policy", "priority", "cpus", "util_min", "util_max", "dl-runtime",
                     "dl-period", "dl-deadline", "taskgroup", "nodes_membind")
SUPPORTED_TASK_PROPERTIES = ("instance", "delay", "loop", "phases") + _SCHED_PROPERTIES + (
    "period", "deadline")   # legacy deadline keys, read at task level only
_PHASE_PROPERTIES = ("loop",) + _SCHED_PROPERTIES

# parse_global(): keys that only steer rt-app itself (logs, traces, calibration,
# memory locking).  "frag" is a legacy key found in the Android use cases; rt-app never
# reads it.  io_device and mem_buffer_size are read: they set the cost of iorun/mem.
IGNORED_GLOBAL_KEYS = (
    "calibration", "pi_enabled", "lock_pages", "logdir", "log_basename", "log_size",
    "gnuplot", "ftrace", "cumulative_slack", "frag",
)
_GLOBAL_KEYS = ("duration", "default_policy", "io_device", "mem_buffer_size") \
    + IGNORED_GLOBAL_KEYS
_TOP_LEVEL_KEYS = ("tasks", "global", "resources")

# string_to_policy() in rt-app_utils.c knows the SCHED_ names; the short forms are a
# convenience of this loader.  BATCH runs as OTHER and IDLE as OTHER at nice 19 (the
# engine has neither class; docs/workloads.md says what that changes).
_POLICIES = {
    "SCHED_OTHER": "other", "OTHER": "other",
    "SCHED_BATCH": "batch", "BATCH": "batch",
    "SCHED_IDLE": "idle", "IDLE": "idle",
    "SCHED_FIFO": "fifo", "FIFO": "fifo",
    "SCHED_RR": "rr", "RR": "rr",
    "SCHED_DEADLINE": "deadline", "DEADLINE": "deadline",
}
_FAIR = ("other", "batch", "idle")
# rt-app_types.h
DEFAULT_THREAD_PRIORITY = 10
DEFAULT_THREAD_NICE = 0
# SCHED_IDLE has weight 3 (WEIGHT_IDLEPRIO); nice 19, the nearest the engine has, 15.
IDLE_NICE = 19
# kernel/sched/syscalls.c (v6.12) __setscheduler_params(): a fair task's custom slice is
# clamped to [0.1 ms, 100 ms].
SLICE_MIN_NS = 100_000
SLICE_MAX_NS = 100_000_000

# ---- cost of the memory and I/O events (assumptions, docs/workloads.md) ----------------
# rt-app's "mem" memsets a per-thread buffer of global.mem_buffer_size (4 MiB by
# default) in chunks: a streaming store, bounded by the memory system, not the core
# clock.  Assumed single-thread memset bandwidth: 8 GB/s = 8 bytes/ns (the order of a
# single big core writing LPDDR4/4X; not measured here).
MEMSET_BYTES_PER_NS = 8.0
# "memrun" read/write walk the buffer one volatile byte at a time: one load or store per
# byte; assumed 1 byte/ns, memory-bound (frequency dependence not modelled).
BYTE_LOOP_BYTES_PER_NS = 1.0
# "memrun" chase: one dependent load per count.  A random chase through a buffer larger
# than the last-level cache pays a DRAM access; otherwise a cache hit.
CHASE_DRAM_NS = 100
CHASE_CACHE_NS = 5
LLC_BYTES = 2 * 1024 * 1024
# "iorun" write()s the buffer to global.io_device (default /dev/null).  /dev/null's
# write_null() returns at once: the cost is one system call per buffer-sized chunk,
# CPU work (assumed 0.5 µs at capacity 1024 and f_max).  Any other device is taken as a
# page-cache write: the syscalls plus a copy at half the memset bandwidth.
SYSCALL_NS = 500
COPY_BYTES_PER_NS = MEMSET_BYTES_PER_NS / 2
DEFAULT_IO_DEVICE = "/dev/null"
DEFAULT_MEM_BUFFER_SIZE = 4 * 1024 * 1024     # rt-app_parse_config.c DEFAULT_MEM_BUF_SIZE
_NULL_DEVICES = ("/dev/null", "/dev/zero")


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

    # Python's decoder recurses once per level: refused with a message, not a RecursionError
    check_json_nesting(cleaned, source)
    decoder = json.JSONDecoder(object_pairs_hook=_Obj, parse_constant=no_constant)
    try:
        value, end = decoder.raw_decode(cleaned, _skip_ws(cleaned, 0))
    except json.JSONDecodeError as err:
        raise bad(err.pos, err.msg) from None
    except ValueError as err:  # NaN / Infinity
        raise InputError(source, "json", f"valid JSON ({err})") from None
    except RecursionError:   # called deep in a stack already
        raise InputError(source, "json", f"at most {MAX_NESTING} levels of nested arrays and "
                         "objects") from None
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
    # a key of 100 KB is named, not echoed
    return ".".join(p if i == 0 or len(p) <= 40 else p[:37] + "..." for i, p in enumerate(parts))


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
    expected = ("one of: SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_FIFO, SCHED_RR, "
                "SCHED_DEADLINE (or without SCHED_)")
    hint = did_you_mean(value, list(_POLICIES))
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
class _Ev:
    kind: str      # the rt-app event: "run", "lock", "wait", "memrun", ...
    value: Any     # ns, a resource name, (cond, mutex) names, a _Timer, a dict
    fpath: str     # where it is in the file, for error messages


@dataclass
class _Sched:
    """What parse_sched_data() found in one object (None = not given there)."""

    policy: str | None = None
    priority: int | None = None
    priority_field: str = ""
    dl_runtime: int | None = None     # µs
    dl_period: int | None = None
    dl_deadline: int | None = None
    util_min: int | None = None       # -1 = unchanged
    util_max: int | None = None
    fields: dict = field(default_factory=dict)   # property -> field path

    def given(self) -> bool:
        """parse_sched_data() returns sched data only when one of these is set."""
        return (self.policy is not None or self.priority is not None
                or bool(self.dl_runtime) or bool(self.dl_period) or bool(self.dl_deadline)
                or self.util_min not in (None, -1) or self.util_max not in (None, -1))


@dataclass
class _Phase:
    loop: int
    events: list                      # of _Ev
    fpath: str = ""
    sched: _Sched = field(default_factory=_Sched)
    cpus: list[int] | None = None
    taskgroup: str | None = None


@dataclass
class _TaskDef:
    key: str
    fpath: str = ""
    instance: int = 1
    delay_ns: int = 0
    loop: int = -1
    sched: _Sched = field(default_factory=_Sched)
    cpus: list[int] | None = None
    taskgroup: str | None = None
    legacy_runtime: int | None = None  # the exact task-level "runtime" event, µs
    phases: list[_Phase] = field(default_factory=list)


def _name_value(source: str, fpath: str, kind: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        what = {"fork": "the name of a task", "resume": "the name of a task",
                "barrier": "a barrier name", "lock": "a mutex name", "unlock": "a mutex name",
                "signal": "a condition name", "broad": "a condition name"}.get(kind, "a name")
        raise InputError(source, fpath, f"{what} (a string) for '{kind}'", got=value)
    return value


def _parse_event(source: str, fpath: str, kind: str, value: Any) -> _Ev:
    if kind in ("run", "runtime", "sleep"):
        us = _int(value, source, fpath, f"a '{kind}' duration: an integer >= 0 (µs)", lo=0)
        return _Ev(kind, us * _NS_PER_US, fpath)
    if kind in _NAMED_EVENTS:
        return _Ev(kind, _name_value(source, fpath, kind, value), fpath)
    if kind in ("suspend", "yield"):
        # rt-app reads no value: suspend always waits on the thread's own task key.
        return _Ev(kind, None, fpath)
    if kind in ("mem", "iorun"):
        return _Ev(kind, _int(value, source, fpath,
                              f"a '{kind}' size: an integer >= 0 (bytes)", lo=0), fpath)
    if kind in ("wait", "sync"):
        expected = f'a {kind} object {{"ref": condition name, "mutex": mutex name}}'
        if not isinstance(value, _Obj):
            raise InputError(source, fpath, expected, got=value)
        got: dict[str, str] = {}
        for key, label, v in value.items():
            f = _path(fpath, label)
            _once(source, f, key, label)
            if key not in ("ref", "mutex"):
                raise _unknown_key(source, f, key, f"a {kind} key: ref or mutex",
                                   ("ref", "mutex"))
            if not isinstance(v, str) or not v:
                raise InputError(source, f, f"a {'condition' if key == 'ref' else 'mutex'} "
                                 "name string", got=v)
            got[key] = v
        for key in ("ref", "mutex"):
            if key not in got:
                raise InputError(source, _path(fpath, key),
                                 f"'{key}' in {kind} (rt-app would silently use a resource "
                                 "named \"unknown\")")
        return _Ev(kind, (got["ref"], got["mutex"]), fpath)
    if kind == "memrun":
        return _Ev(kind, _parse_memrun(source, fpath, value), fpath)
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
    return _Ev("timer", _Timer(ref=ref, unique=ref.startswith("unique"),
                               period_ns=period * _NS_PER_US,
                               absolute=(mode == "absolute")), fpath)


_MEMRUN_KEYS = ("type", "size", "count", "ref", "pattern", "stride")


def _parse_memrun(source: str, fpath: str, value: Any) -> dict:
    """memrun {type: read|write|chase, size, count[, ref][, pattern, stride]}."""
    if not isinstance(value, _Obj):
        raise InputError(source, fpath, 'a memrun object {"type": "read"|"write"|"chase", '
                         '"size": bytes, "count": n}', got=value)
    out: dict[str, Any] = {"pattern": "random", "stride": 64}
    for key, label, v in value.items():
        f = _path(fpath, label)
        _once(source, f, key, label)
        if key == "type":
            if v not in ("read", "write", "chase"):
                raise InputError(source, f, '"read", "write" or "chase"', got=v)
        elif key in ("size", "count"):
            v = _int(v, source, f, f"a memrun {key}: an integer >= 0", lo=0)
        elif key == "stride":
            v = _int(v, source, f, "a chase stride: an integer >= 1 (bytes)", lo=1)
        elif key in ("ref", "pattern"):
            if not isinstance(v, str):
                raise InputError(source, f, f"a memrun {key} string", got=v)
        else:
            raise _unknown_key(source, f, key, "a memrun key (" + ", ".join(_MEMRUN_KEYS) + ")",
                               _MEMRUN_KEYS)
        out[key] = v
    for key in ("type", "size", "count"):     # get_*_value_from(..., FALSE): mandatory
        if key not in out:
            raise InputError(source, _path(fpath, key), f"a memrun '{key}' (rt-app exits "
                             "without it)")
    if out["type"] == "chase" and out["size"] < 8:
        raise InputError(source, _path(fpath, "size"), "a chase buffer of at least one "
                         "pointer (8 bytes)", got=out["size"])
    return out


def _parse_property(source: str, fpath: str, key: str, value: Any, sched: _Sched,
                    holder: Any) -> None:
    """One of _SCHED_PROPERTIES (and the legacy period/deadline) into sched / holder."""
    if key == "policy":
        sched.policy = _policy(value, source, fpath)
    elif key == "priority":
        sched.priority = _int(value, source, fpath, "an integer priority", lo=None)
        sched.priority_field = fpath
    elif key in ("dl-runtime", "dl-period", "dl-deadline", "period", "deadline"):
        v = _int(value, source, fpath, f"a '{key}': an integer >= 0 (µs)", lo=0)
        attr = {"dl-runtime": "dl_runtime", "dl-period": "dl_period",
                "dl-deadline": "dl_deadline", "period": "legacy_period",
                "deadline": "legacy_deadline"}[key]
        if attr.startswith("legacy"):
            sched.fields[attr] = v
        else:
            setattr(sched, attr, v)
    elif key in ("util_min", "util_max"):
        setattr(sched, key, _int(value, source, fpath,
                                 f"a {key} from 0 to 1024, or -1 for unchanged",
                                 lo=-1, hi=1024))
    elif key == "cpus":
        holder.cpus = _cpus(source, fpath, value)
    elif key == "taskgroup":
        # parse_taskgroup_data(): a cgroup path; "" = none.  Recorded, not modelled.
        if not isinstance(value, str) or (value and not value.startswith("/")):
            raise InputError(source, fpath, "a taskgroup path starting with '/'", got=value)
        holder.taskgroup = value or None
    elif key == "nodes_membind":
        # parse_numa_data(): NUMA memory binding.  One memory node here: accepted, ignored.
        if not isinstance(value, list) or not all(
                isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in value):
            raise InputError(source, fpath, "an array of NUMA node numbers", got=value)
    sched.fields[key] = fpath


def _parse_phase(source: str, base: str, obj: Any) -> _Phase:
    if not isinstance(obj, _Obj):
        raise InputError(source, base, "a phase object", got=obj)
    ph = _Phase(loop=1, events=[], fpath=base)
    for key, label, value in obj.items():
        fpath = _path(base, label)
        kind = _event_kind(key)
        if kind is not None:
            ph.events.append(_parse_event(source, fpath, kind, value))
            continue
        if key in _PHASE_PROPERTIES:
            _once(source, fpath, key, label)
        if key == "loop":
            ph.loop = _loop(value, source, fpath)
        elif key in _SCHED_PROPERTIES:
            _parse_property(source, fpath, key, value, ph.sched, ph)
        else:
            raise _unknown_key(source, fpath, key,
                               "an event or a phase property (" + ", ".join(_PHASE_PROPERTIES)
                               + ")", list(EVENT_PREFIXES) + list(_PHASE_PROPERTIES))
    if not ph.events:
        raise InputError(source, base,
                         "at least one event in the phase (rt-app: \"No events found\")")
    return ph


def _parse_task(source: str, key: str, obj: Any) -> _TaskDef:
    """One task object, its keys taken in file order so the first problem is reported."""
    base = _path("tasks", key)
    if not isinstance(obj, _Obj):
        raise InputError(source, base, "a task object", got=obj)
    t = _TaskDef(key=key, fpath=base)
    has_phases = "phases" in obj
    loop_key: int | None = None
    events: list[_Ev] = []
    for k, label, value in obj.items():
        fpath = _path(base, label)
        kind = _event_kind(k)
        if kind is not None:
            if has_phases:
                raise InputError(source, fpath,
                                 "no events beside 'phases' (rt-app silently ignores "
                                 "them); move them into a phase")
            ev = _parse_event(source, fpath, kind, value)
            events.append(ev)
            if k == "runtime" and label == k:
                # parse_sched_data() also reads the exact key "runtime" as the legacy
                # dl-runtime (the custom slice of a fair task since Linux 6.12).
                t.legacy_runtime = ev.value // _NS_PER_US
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
        elif k in SUPPORTED_TASK_PROPERTIES:
            _parse_property(source, fpath, k, value, t.sched, t)
        else:
            raise _unknown_key(source, fpath, k,
                               "an event or a task property ("
                               + ", ".join(SUPPORTED_TASK_PROPERTIES) + ")",
                               list(EVENT_PREFIXES) + list(SUPPORTED_TASK_PROPERTIES))
    if has_phases:
        t.loop = -1 if loop_key is None else loop_key
    else:
        # parse_task_data(): the task is its own single phase.  A "loop" key is that
        # phase's count and the task runs once; without one the task loops forever.
        if not events:
            raise InputError(source, base,
                             "events or a 'phases' object (rt-app: \"No events found\")")
        if loop_key is None:
            t.phases, t.loop = [_Phase(loop=1, events=events, fpath=base)], -1
        else:
            t.phases, t.loop = [_Phase(loop=loop_key, events=events, fpath=base)], 1
    return t


def _cpus(source: str, fpath: str, value: Any) -> list[int]:
    expected = "a non-empty array of CPU numbers (integers >= 0)"
    if not isinstance(value, list) or not value:
        raise InputError(source, fpath, expected, got=value)
    cpus = [_int(c, source, f"{fpath}[{i}]", "a CPU number: an integer >= 0", lo=0)
            for i, c in enumerate(value)]
    return sorted(set(cpus))


@dataclass
class _Global:
    duration_ns: int | None = None
    policy: str = "other"
    io_device: str = DEFAULT_IO_DEVICE
    mem_buffer_size: int = DEFAULT_MEM_BUFFER_SIZE


def _parse_global(source: str, obj: Any) -> _Global:
    g = _Global()
    if obj is None:
        return g
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
            g.duration_ns = None if d == -1 else d * _NS_PER_S
        elif key == "default_policy":
            g.policy = _policy(value, source, fpath)
        elif key == "io_device":
            if not isinstance(value, str) or not value:
                raise InputError(source, fpath, "a device or file path", got=value)
            g.io_device = value
        elif key == "mem_buffer_size":
            g.mem_buffer_size = _int(value, source, fpath,
                                     "a buffer size: an integer >= 1 (bytes)", lo=1)
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
    return g


# --------------------------------------------------------------------------- resolve

@dataclass
class _Attrs:
    """A thread's scheduling attributes in engine terms."""

    policy: str            # rt-app policy: other, batch, idle, fifo, rr, deadline
    prio: int


def _default_prio(policy: str) -> int:
    return DEFAULT_THREAD_PRIORITY if policy in ("fifo", "rr") else DEFAULT_THREAD_NICE


def _check_prio(source: str, fpath: str, policy: str, prio: int) -> None:
    if policy in ("other", "batch") and not -20 <= prio <= 19:
        raise InputError(source, fpath, "a nice value from -20 to 19 (priority of a "
                         f"SCHED_{policy.upper()} task)", got=prio)
    if policy in ("fifo", "rr") and not 1 <= prio <= 99:
        raise InputError(source, fpath, "an RT priority from 1 to 99 (priority of a "
                         f"SCHED_{policy.upper()} task)", got=prio)


def _check_clamps(source: str, base: str, s: _Sched) -> None:
    lo, hi = s.util_min, s.util_max
    if lo is not None and hi is not None and lo != -1 and hi != -1 and lo > hi:
        raise InputError(source, _path(base, "util_min"),
                         f"util_min <= util_max ({hi}); the kernel refuses the clamp", got=lo)


def _clamp(v: int | None) -> int | None:
    return None if v is None or v == -1 else v


def _task_attrs(source: str, t: _TaskDef, default_policy: str) -> dict:
    """parse_sched_data(task, default_policy) and set_thread_param() at thread start, as
    the task dict's attribute keys."""
    s = t.sched
    policy = s.policy or default_policy
    prio = _default_prio(policy) if s.priority is None else s.priority
    _check_prio(source, s.priority_field or t.fpath, policy, prio)
    _check_clamps(source, t.fpath, s)
    # deadline parameters, with rt-app's defaults and its legacy keys
    runtime = s.dl_runtime or 0
    period = s.dl_period if s.dl_period is not None else runtime
    deadline = s.dl_deadline if s.dl_deadline is not None else period
    if not runtime:
        runtime = t.legacy_runtime or 0
    if not period:
        period = s.fields.get("legacy_period", runtime)
    if not deadline:
        deadline = s.fields.get("legacy_deadline", period)
    out: dict[str, Any] = {"policy": "other", "nice": 0, "rt_priority": 0,
                           "util_min": _clamp(s.util_min), "util_max": _clamp(s.util_max)}
    if policy in ("other", "batch"):
        out["nice"] = prio
        if runtime:
            # sched_attr.sched_runtime of a fair task: the custom slice (Linux >= 6.12)
            out["slice_ns"] = min(max(runtime * _NS_PER_US, SLICE_MIN_NS), SLICE_MAX_NS)
    elif policy == "idle":
        out["nice"] = IDLE_NICE
    elif policy in ("fifo", "rr"):
        out["policy"], out["rt_priority"] = policy, prio
    else:  # deadline
        f = s.fields.get("dl-runtime") or t.fpath
        if runtime <= 0:
            raise InputError(source, _path(t.fpath, "dl-runtime"),
                             "a dl-runtime > 0 (µs) for a SCHED_DEADLINE task")
        if not runtime <= deadline <= period:
            raise InputError(source, f, "dl-runtime <= dl-deadline <= dl-period "
                             f"(sched_setattr's rule), got {runtime} / {deadline} / {period} µs")
        out.update(policy="deadline", dl_runtime_ns=runtime * _NS_PER_US,
                   dl_period_ns=period * _NS_PER_US, dl_deadline_ns=deadline * _NS_PER_US)
        # set_thread_param() applies no uclamp to a deadline task
        out["util_min"] = out["util_max"] = None
    return out


def _phase_setattrs(source: str, t: _TaskDef, task_policy: str) -> list[dict | None]:
    """Per phase, the setattr event its properties give (None: none), following
    set_thread_param() (a phase's attributes stay until another phase changes them)
    and set_thread_affinity() (a phase's cpus hold for that phase only)."""
    out: list[dict | None] = []
    policy = task_policy
    passes = 1 if t.loop == 1 else 2
    eff_cpus = [p.cpus if p.cpus is not None else t.cpus for p in t.phases]
    for pas in range(passes):
        for i, p in enumerate(t.phases):
            s = p.sched
            attr: dict[str, Any] = {}
            if s.given():
                _check_clamps(source, p.fpath, s)
                eff = s.policy or policy
                where = s.fields.get("policy") or s.fields.get("priority") or p.fpath
                if eff == "deadline":
                    raise InputError(source, where, "phase-level scheduling attributes on a "
                                     "task that is not SCHED_DEADLINE (a phase cannot switch "
                                     "to or retune SCHED_DEADLINE here; set it on the task)")
                if s.dl_runtime and eff in ("other", "batch") and (
                        s.policy is not None or s.priority is not None):
                    raise InputError(source, s.fields["dl-runtime"], "no phase-level "
                                     "dl-runtime (a custom slice that changes in a phase is "
                                     "not modelled; give it on the task)")
                if s.policy is not None or s.priority is not None:
                    prio = _default_prio(eff) if s.priority is None else s.priority
                    _check_prio(source, s.priority_field or where, eff, prio)
                    if eff in ("fifo", "rr"):
                        attr.update(policy=eff, rt_priority=prio)
                    else:
                        attr["policy"] = "other"
                        attr["nice"] = IDLE_NICE if eff == "idle" else prio
                for k in ("util_min", "util_max"):
                    if _clamp(getattr(s, k)) is not None:
                        attr[k] = getattr(s, k)
                policy = eff
            prev = (t.cpus if i == 0 else eff_cpus[i - 1]) if pas == 0 else eff_cpus[i - 1]
            if eff_cpus[i] != prev:
                attr["cpus"] = None if eff_cpus[i] is None else list(eff_cpus[i])
            if pas == 0:
                out.append(attr or None)
            elif attr and out[i] is None:
                out[i] = attr
            elif attr and "cpus" in attr and "cpus" not in (out[i] or {}):
                out[i] = {**out[i], "cpus": attr["cpus"]}
    return out


def _mem_events(ev: _Ev, g: _Global) -> list[dict]:
    """mem / iorun / memrun as engine work (the constants above, docs/workloads.md)."""
    if ev.kind == "mem":
        return [{"memrun": round(ev.value / MEMSET_BYTES_PER_NS)}]
    if ev.kind == "iorun":
        chunks = math.ceil(ev.value / g.mem_buffer_size)
        out = [{"run": chunks * SYSCALL_NS}]
        if g.io_device not in _NULL_DEVICES:
            out.append({"memrun": round(ev.value / COPY_BYTES_PER_NS)})
        return out
    m = ev.value
    if m["type"] in ("read", "write"):
        return [{"memrun": round(m["count"] / BYTE_LOOP_BYTES_PER_NS)}]
    random = m["pattern"] != "sequential"
    per = CHASE_DRAM_NS if (random and m["size"] > LLC_BYTES) else CHASE_CACHE_NS
    return [{"memrun": m["count"] * per}]


# ------------------------------------------------------------------ runaway workloads
#
# The engine stops a run that holds more than MAX_TASKS tasks or in which simulated time
# stops passing (crates/hetsched-core/src/limits.rs); what can be proved from the file is
# refused here first, naming the tasks in the user's terms.

_SPENDS = "spends time (run, runtime, sleep, timer, mem, iorun, memrun) or waits"


def _check_thread_count(source: str, defs: list[_TaskDef], n_threads: int) -> None:
    from hetsched.sim import MAX_TASKS  # the engine's, through its one boundary

    if n_threads > MAX_TASKS:
        d = max(defs, key=lambda d: d.instance)
        raise InputError(source, _path(d.fpath, "instance"),
                         f"at most {MAX_TASKS} threads with the fork templates "
                         f"(the kernel's default pid_max); the file starts {n_threads}",
                         got=d.instance)


def _cost(ev: dict) -> str:
    """What an engine event does to simulated time: "time" (it spends some of its own),
    "wait" (it may block until another task acts), "cpu" (it may hand the CPU to another
    task, which may spend time) or "none"."""
    (kind, v), = ev.items()
    if kind in ("run", "runtime", "sleep", "memrun", "iowait"):
        return "time" if v > 0 else "none"
    if kind == "timer":
        return "time" if v["period_ns"] > 0 else "none"
    if kind in ("lock", "wait", "sync", "barrier", "sem_wait"):
        return "wait"
    if kind in ("yield", "setattr"):
        return "cpu"
    return "none"    # fork, unlock, signal, broad, sem_post


def _describe(ev: _Ev | None) -> str:
    if ev is None:
        return "the phase's properties"
    if ev.kind in ("run", "runtime", "sleep"):
        return f"{ev.kind} {ev.value // _NS_PER_US}"
    if ev.kind in _NAMED_EVENTS:
        return f"{ev.kind} {ev.value}"
    return ev.kind


def _summary(program: list[tuple[dict, _Ev | None]]) -> str:
    seen: list[str] = []
    for _, ev in program:
        text = _describe(ev)
        if text not in seen:
            seen.append(text)
    return ", ".join(seen)


def _check_fork_cycles(source: str, defs: list[_TaskDef], programs: dict) -> None:
    """A task that forks a copy of itself, directly or through others, before any of them
    spends time or waits: copies without end at one instant.  rt-app runs such a file
    until a task reaches its fork limit (FORKS_LIMIT, 1024 copies) and exits with an
    error; here it is refused before it runs.  A cycle that spends time is legal: its
    copies are bounded by the duration (and the engine's task limit)."""
    # key -> [(target, the fork's _Ev)] for the forks reached before time passes
    at_once: dict[str, list[tuple[str, _Ev]]] = {}
    forks: dict[str, list[str]] = {}
    for d in defs:
        at_once[d.key], forks[d.key] = [], []
        stopped = False
        for phase in programs.get(d.key, []):
            for ev, src in phase:
                if src is not None and src.kind == "fork":
                    forks[d.key].append(src.value)
                    if not stopped:
                        at_once[d.key].append((src.value, src))
                # a yield or a property change may let another task run, but spends no
                # time of this task's: the chain of copies goes on
                stopped = stopped or _cost(ev) in ("time", "wait")
    started = [d.key for d in defs if d.instance > 0]
    reachable, todo = set(started), list(started)
    while todo:
        for k in forks[todo.pop()]:
            if k not in reachable:
                reachable.add(k)
                todo.append(k)
    # depth-first search for a cycle, in file order (iterative: a file may chain
    # thousands of tasks)
    state: dict[str, int] = {}      # 1: on the path, 2: done
    for d in defs:
        if d.key not in reachable or d.key in state:
            continue
        path: list[tuple[str, _Ev | None]] = [(d.key, None)]
        edges = [iter(at_once[d.key])]
        state[d.key] = 1
        while edges:
            step = next(edges[-1], None)
            if step is None:
                state[path.pop()[0]] = 2
                edges.pop()
                continue
            target, ev = step
            if state.get(target) == 1:
                start = next(i for i, (key, _) in enumerate(path) if key == target)
                cycle = path[start:] + [(target, ev)]
                raise InputError(source, cycle[1][1].fpath,
                                 f"a fork cycle that {_SPENDS} before it forks again (this "
                                 "one forks without end at one instant; rt-app exits at 1024 "
                                 "forks of a task)", got=" -> ".join(k for k, _ in cycle))
            if target not in state:
                state[target] = 1
                path.append((target, ev))
                edges.append(iter(at_once[target]))


def _check_zero_time_loops(source: str, defs: list[_TaskDef], programs: dict) -> None:
    """A loop whose every event takes no time and hands the CPU to nobody repeats at one
    instant: forever (loop -1) it stops simulated time; a finite loop is refused when the
    engine would refuse it (NO_PROGRESS_STEPS engine steps at one instant: one per event
    and one per loop)."""
    from hetsched.sim import NO_PROGRESS_STEPS  # the engine's, through its one boundary

    limit = NO_PROGRESS_STEPS
    why = f"a loop that {_SPENDS} when it repeats more than {limit} engine steps (this one:"
    for d in defs:
        program = programs.get(d.key)
        if not program:
            continue
        instant = [all(_cost(ev) == "none" for ev, _ in phase) for phase in program]
        for p, phase, still in zip(d.phases, program, instant):
            if not still:
                continue
            steps = p.loop * (len(phase) + 1)
            if p.loop == -1 or steps > limit:
                raise InputError(source, _path(p.fpath, "loop"),
                                 f"{why} {'forever' if p.loop == -1 else steps}, at one instant)",
                                 got=_summary(phase))
        if all(instant):
            steps = sum(p.loop * (len(ph) + 1) for p, ph in zip(d.phases, program))
            if d.loop == -1 or d.loop * steps > limit:
                raise InputError(source, _path(d.fpath, "loop"),
                                 f"{why} {'forever' if d.loop == -1 else d.loop * steps}, at one "
                                 "instant; a task without 'loop' loops forever)",
                                 got=_summary([e for ph in program for e in ph]))


def _origin(source: str, defs: list[_TaskDef], task_defs: list[_TaskDef],
            origins: dict[str, list[list[_Ev | None]]]) -> dict:
    """The spec's "origin" key (ignored by the engine): for each task, where it is in the
    user's file, so that an engine error about ``tasks[i].phases[j].events[k]`` can name
    the file, task, phase and event as the user wrote them (:func:`locate_engine_error`);
    the caller adds the names of the mutexes, conditions, semaphores and barriers by id
    (``names``, :meth:`SpecBuilder.names`), with which a deadlock is reported."""
    index = {d.key: i for i, d in enumerate(d for d in defs if d.key in origins)}
    out_defs = []
    for d in defs:
        if d.key not in index:
            continue
        out_defs.append({"source": source, "task": d.fpath, "phases": [
            [p.fpath, [p.fpath if ev is None else ev.fpath for ev in evs]]
            for p, evs in zip(d.phases, origins[d.key])]})
    return {"defs": out_defs, "tasks": [index[d.key] for d in task_defs]}


# The engine's names for what the user wrote under another key (or unit).
_USER_KEYS = {"nice": "priority", "rt_priority": "priority", "delay_ns": "delay",
              "dl_runtime_ns": "dl-runtime", "dl_period_ns": "dl-period",
              "dl_deadline_ns": "dl-deadline", "slice_ns": "runtime",
              "util_min/util_max": "util_min"}
_USER_EVENT_KEYS = {"period_ns": "period", "id": "ref", "mode": "mode", "cond": "ref",
                    "mutex": "mutex"}
_ENGINE_FIELD = re.compile(r"tasks\[(\d+)\](?:\.phases\[(\d+)\](?:\.events\[(\d+)\])?)?(.*)")


def locate_engine_error(err: InputError, spec: dict) -> InputError:
    """The engine's InputError about ``spec`` (``workload: tasks[3].phases[0].timer...``)
    re-addressed to the rt-app file and field the value came from
    (``my.json: tasks.video.phases.p1.timer.period``), when ``spec`` came from
    :func:`load_rtapp` (alone or merged); else ``err`` itself."""
    if err.source != "workload":
        return err
    located = user_field(spec, err.field or "")
    if located is None:
        return err
    return InputError(located[0], located[1], err.expected, got=err.got)


def user_field(spec: dict, field: str) -> tuple[str, str] | None:
    """The engine's ``field`` of ``spec`` (``tasks[3].phases[0].events[2]...``) as the
    rt-app file and the field there it came from (``my.json``,
    ``tasks.video.phases.p1.lock``), when ``spec`` came from :func:`load_rtapp` (alone or
    merged); else None."""
    origin = spec.get("origin") if isinstance(spec, dict) else None
    if not isinstance(origin, dict) or len(origin.get("tasks", ())) != len(spec.get("tasks", ())):
        return None   # not from a file, or its tasks were changed since
    m = _ENGINE_FIELD.fullmatch(field)
    if not m:
        return None
    try:
        i = int(m.group(1))
        d = origin["defs"][origin["tasks"][i]]
    except (IndexError, KeyError, TypeError):
        return None
    if d is None:
        return None
    rest = [k for k in m.group(4).split(".") if k]
    if m.group(2) is None:
        field = d["task"]
        if rest:
            field = _path(field, _USER_KEYS.get(rest[0], rest[0]))
    else:
        phase_path, event_paths = d["phases"][int(m.group(2))]
        if m.group(3) is None:
            field = phase_path
            if rest and rest[0] == "loop":
                field = _path(field, "loop")
        else:
            field = event_paths[int(m.group(3))]
            # an event's own keys: the timer's, wait's (the rest is the event itself)
            inner = [_USER_EVENT_KEYS[k] for k in rest if k in _USER_EVENT_KEYS]
            if inner and field != phase_path:
                field = _path(field, inner[-1])
    return d["source"], field


@contextmanager
def errors_located(spec: dict) -> Iterator[None]:
    """Within it, an engine InputError about ``spec`` is raised as
    :func:`locate_engine_error` re-addresses it."""
    try:
        yield
    except InputError as err:
        located = locate_engine_error(err, spec)
        if located is err:
            raise
        raise located from None


def _resolve(source: str, name: str, root: Any) -> dict:
    if not isinstance(root, _Obj):
        raise InputError(source, "json", "a top-level JSON object", got=root)
    for key, label, _ in root.items():
        if key not in _TOP_LEVEL_KEYS:
            raise _unknown_key(source, label, key, "a top-level key: tasks, global or resources",
                               _TOP_LEVEL_KEYS)
        _once(source, label, key, label)
    g = _parse_global(source, root.get("global"))
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
        defs.append(_parse_task(source, key, value))
    by_key = {d.key: d for d in defs}
    all_events = [(d, ev) for d in defs for p in d.phases for ev in p.events]

    # fork: the target must be a task of the file; it gets one template, in order of
    # the first fork that names it.
    forked: list[str] = []
    for d, ev in all_events:
        if ev.kind == "fork":
            if ev.value not in by_key:
                raise InputError(source, ev.fpath, "the name of a task of this file "
                                 "(rt-app exits: \"Can't fork unknown task\")" + (
                                     f" (did you mean {h!r}?)" if (h := did_you_mean(
                                         ev.value, by_key)) else ""), got=ev.value)
            if ev.value not in forked:
                forked.append(ev.value)
    for d, ev in all_events:
        if ev.kind == "barrier" and d.key in forked:
            raise InputError(source, ev.fpath, "no barrier in a task created by 'fork' "
                             "(rt-app counts a barrier's threads when it reads the file, so "
                             f"forked copies of '{d.key}' would never be counted)",
                             got=ev.value)
    # a mutex that is released or waited with must be taken somewhere
    locked = {ev.value for _, ev in all_events if ev.kind in ("lock", "resume")}
    locked |= {d.key for d, ev in all_events if ev.kind == "suspend"}
    for d, ev in all_events:
        mutex = ev.value if ev.kind == "unlock" else (
            ev.value[1] if ev.kind in ("wait", "sync") else None)
        if mutex is not None and mutex not in locked:
            raise InputError(source, ev.fpath, f"a mutex that some task locks; no 'lock' "
                             f"takes {mutex!r}", got=mutex)

    # A timer's mode belongs to the timer: rt-app sets relative = 0 on the resource as
    # soon as one event that refers to it says "absolute" (even in an instance-0 task).
    absolute_shared = {ev.value.ref for _, ev in all_events
                       if ev.kind == "timer" and not ev.value.unique and ev.value.absolute}
    absolute_unique = {(d.key, ev.value.ref) for d, ev in all_events
                       if ev.kind == "timer" and ev.value.unique and ev.value.absolute}

    b = SpecBuilder(name, g.duration_ns)
    n_started = sum(d.instance for d in defs)
    if n_started == 0:
        raise InputError(source, "tasks",
                         "at least one task with instance >= 1 (instance 0 tasks only "
                         "exist for 'fork')")
    _check_thread_count(source, defs, n_started + len(forked))
    template_index = {k: n_started + i for i, k in enumerate(forked)}
    barrier_users: dict[str, set[int]] = {}

    # per task key: for each phase, the _Ev each engine event comes from (None: the
    # setattr of the phase's properties); the same for every thread of the task
    origins: dict[str, list[list[_Ev | None]]] = {}

    def lower(d: _TaskDef, idx: int, thread: str, template: bool) -> dict:
        attrs = _task_attrs(source, d, default_policy)
        setattrs = _phase_setattrs(source, d, d.sched.policy or default_policy)
        phases = []
        sources: list[list[_Ev | None]] = []
        for p, sa in zip(d.phases, setattrs):
            events: list[dict] = [{"setattr": sa}] if sa else []
            came_from: list[_Ev | None] = [None] * len(events)
            sources.append(came_from)
            for ev in p.events:
                k, v = ev.kind, ev.value
                if k in ("run", "runtime", "sleep"):
                    events.append({k: v})
                elif k == "timer":
                    if v.unique:
                        tkey = f"unique\0{'template' if template else idx}\0{d.key}\0{v.ref}"
                        absolute = (d.key, v.ref) in absolute_unique
                    else:
                        tkey = f"shared\0{v.ref}"
                        absolute = v.ref in absolute_shared
                    events.append({"timer": {"id": b.timer(tkey), "period_ns": v.period_ns,
                                             "mode": "absolute" if absolute else "relative"}})
                elif k in ("lock", "unlock"):
                    events.append({k: b.mutex(v)})
                elif k in ("signal", "broad"):
                    events.append({k: b.cond(v)})
                elif k in ("wait", "sync"):
                    events.append({k: {"cond": b.cond(v[0]), "mutex": b.mutex(v[1])}})
                elif k == "suspend":
                    # rt-app: lock(own); pthread_cond_wait(own, own); unlock(own), "own"
                    # being the resources named after the thread's task key
                    m, c = b.mutex(d.key), b.cond(d.key)
                    events += [{"lock": m}, {"wait": {"cond": c, "mutex": m}}, {"unlock": m}]
                elif k == "resume":
                    m, c = b.mutex(v), b.cond(v)
                    events += [{"lock": m}, {"broad": c}, {"unlock": m}]
                elif k == "barrier":
                    events.append({"barrier": b.barrier(v)})
                    barrier_users.setdefault(v, set()).add(idx)
                elif k in ("sem_post", "sem_wait"):
                    events.append({k: b.sem(v, 0)})
                elif k == "fork":
                    events.append({"fork": template_index[v]})
                elif k == "yield":
                    events.append({"yield": None})
                else:   # mem, iorun, memrun
                    events += _mem_events(ev, g)
                came_from += [ev] * (len(events) - len(came_from))
            phase: dict[str, Any] = {"loop": p.loop, "events": events}
            if p.taskgroup:
                phase["taskgroup"] = p.taskgroup
            phases.append(phase)
        out = {"name": thread, **attrs,
               "cpus": None if d.cpus is None else list(d.cpus),
               "delay_ns": d.delay_ns, "loop": d.loop, "phases": phases}
        # keep the key order of the periodic subset; the new keys only when used
        order = ["name", "policy", "nice", "rt_priority", "cpus", "util_min", "util_max",
                 "delay_ns", "loop", "phases"]
        res = {k: out[k] for k in order}
        res.update({k: v for k, v in out.items() if k not in res})
        if template:
            res["start"] = False
        if d.taskgroup:
            res["taskgroup"] = d.taskgroup     # recorded; cgroups are not modelled
        origins.setdefault(d.key, sources)
        return res

    default_policy = g.policy
    thread_index = 0     # rt-app.c main(): one index over all threads, in file order
    task_defs: list[_TaskDef] = []
    for d in defs:
        for _ in range(d.instance):     # instance 0: created only by "fork"
            b.add(lower(d, thread_index, f"{d.key}-{thread_index}", False))
            task_defs.append(d)
            thread_index += 1
    for k in forked:
        # rt-app names a fork <key>-<index>-<nnnn>, the index being the next thread
        # number when it forks; the engine appends -<nnnn> to the template's name.
        b.add(lower(by_key[k], template_index[k], f"{k}-{template_index[k]}", True))
        task_defs.append(by_key[k])
    for ref, users in barrier_users.items():
        b.set_barrier_count(ref, len(users))
    programs = {}
    for d, t in zip(task_defs, b.tasks):
        programs.setdefault(d.key, [list(zip(ph["events"], evs))
                                    for ph, evs in zip(t["phases"], origins[d.key])])
    _check_fork_cycles(source, defs, programs)
    _check_zero_time_loops(source, defs, programs)
    spec = b.build()
    spec["origin"] = _origin(source, defs, task_defs, origins)
    spec["origin"]["names"] = b.names()
    return spec


def load_rtapp(path_or_text: str | os.PathLike, source: str | None = None,
               name: str | None = None) -> dict:
    """Load an rt-app JSON file (or its text) and resolve it into a WorkloadSpec dict.

    ``path_or_text`` is a path, or the JSON text itself: a ``str`` that starts,
    after blanks, with ``{``, ``[``, ``/*`` or ``//``, or that spans several lines.
    ``source`` names it in error messages (default: the path, or
    ``"<rt-app text>"``); ``name`` is the workload name (default: the file's stem,
    or the stem of ``source``).
    Raises :class:`InputError` for anything rt-app would refuse or misread.
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
        # size, encoding (a bad byte named by its offset) and readability
        text = read_text(path, source, "rt-app JSON file")
    root = _parse_json(text, source)
    return _resolve(source, name or default_name, root)


# ------------------------------------------------------------------ per-phase log

PHASE_LOG_COLUMNS = ("thread", "phase", "loops", "activations", "slack_us_min",
                     "slack_us_mean", "wu_lat_us_max", "wu_lat_us_mean", "run_s")


def phase_log(result_doc: Any) -> list[dict]:
    """rt-app's per-phase log, one row per thread and phase, from a result document
    (``Result.doc`` or the Result itself): the thread (its comm), the phase index, how
    many loops of the phase ran, its timer activations, the slack before each timer
    (next wake-up minus the end of the work; negative = missed) min/mean in µs, the
    wake-up latency max/mean in µs and the CPU time in s.  Columns:
    :data:`PHASE_LOG_COLUMNS`; a value the engine has not (no timer in the phase) is None."""
    doc = getattr(result_doc, "doc", result_doc)
    if not isinstance(doc, dict) or not isinstance(doc.get("tasks"), list):
        raise InputError("phase_log()", "result_doc", "a result document with 'tasks'",
                         got=type(result_doc).__name__)
    rows = []
    for t in doc["tasks"]:
        for ph in t.get("phases") or []:
            rows.append({"thread": t["name"], "phase": ph.get("phase"),
                         **{c: ph.get(c) for c in PHASE_LOG_COLUMNS[2:]}})
    return rows


def format_phase_log(rows: Sequence[dict]) -> str:
    """The rows of :func:`phase_log` as an aligned text table."""
    def cell(v: Any) -> str:
        if v is None:
            return "-"
        if isinstance(v, float):
            return f"{v:.6f}" if abs(v) < 10 else f"{v:.1f}"
        return str(v)
    table = [list(PHASE_LOG_COLUMNS)] + [[cell(r.get(c)) for c in PHASE_LOG_COLUMNS]
                                          for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(PHASE_LOG_COLUMNS))]
    return "\n".join("  ".join(c.rjust(w) if i else c.ljust(w)
                               for i, (c, w) in enumerate(zip(row, widths)))
                     for row in table) + "\n"

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


from hetsched.workloads.spec import merge_workloads, workload  # noqa: E402  (re-exported)
