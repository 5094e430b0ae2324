"""Read real scheduler traces into a list of typed events.

Formats (../shared/reference/workloads.md §2, ../shared/realdata/traces/SOURCES.md):

* ``trace-cmd report`` text (``version = 6`` / ``cpus=N`` header, integer ``prev_state``,
  no ``==>``), and its plugin form (``prev:pid [prio] S ==> next:pid [prio]``);
* raw ftrace text (``/sys/kernel/tracing/trace``: optional ``(tgid)`` column, a flags
  field such as ``d.h.``, ``prev_state=S|R|R+|D|t|x`` and `` ==> ``);
* systrace / Catapult HTML: every ``<script class="trace-data">`` block with ftrace text or a
  process dump, trace2html's base64-gzipped ``viewer-data``, and the 2012 pages' ftrace text
  as a JavaScript string (``var linuxPerfData = "..."``);
* trace-cmd binary ``trace.dat`` (optionally gzipped), decoded by Debian's ``trace-cmd
  report -R`` when it is installed;
* the files ``hetsched record`` writes (raw ftrace text with a ``# hetsched-record:`` line).

Lines that cannot be used are skipped and counted (``Trace.skipped``): events this reader
does not use (by name), and malformed lines (a truncated last line, a line that is not
``comm-pid [cpu] ts: event: fields``, an event whose fields do not parse, numbers out of
the kernel's ranges, a line longer than any the kernel writes).  Comms may contain spaces
(``Web Content``), dashes (``<-transport``) and brackets (``<...>``).

Bytes that are not UTF-8 are read as U+FFFD, not refused: a comm is the kernel's raw 15
bytes, and a thread name cut there (Android truncates Java thread names to them) may end
in half a UTF-8 character. A file with no usable line names its first such byte.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import warnings
from array import array
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Optional, Union

from hetsched import _input
from hetsched.errors import InputError
from hetsched.traces import check as _check
from hetsched.traces import store as _st
from hetsched.traces.store import EventStore

__all__ = ["Switch", "Wakeup", "Fork", "Exit", "Exec", "Freq", "Idle", "Trace", "load_trace", "parse_text",
           "parse_state", "TRACE_DAT_MAGIC", "trace_cmd_available", "TraceRepairWarning"]

TRACE_DAT_MAGIC = b"\x17\x08\x44tracing"

#: A trace is read as a stream, a few MB at a time, into columns of about 50 bytes an
#: event (store.py); a recording of a few minutes is tens of MB. 1 GiB (also the most a
#: gzipped one may expand to) keeps a wrong path (a disk image, /dev/zero) from reading
#: without end.
MAX_TRACE_BYTES = 2**30
#: bytes read from a file at a time
CHUNK_BYTES = 1 << 20
#: The kernel formats each trace line into one trace_seq buffer (a page or two, and
#: trace_marker text is at most 4 KiB): a longer line is not one it wrote. Bounding it also
#: bounds the work of the field patterns, whose comm groups backtrack.
MAX_LINE_CHARS = 8192
#: The ranges the kernel's own numbers have: PID_MAX_LIMIT (4M pids), CONFIG_NR_CPUS at
#: most 8192, timestamps u64 ns, cpufreq kHz an unsigned int.
PID_MAX = 4 * 1024 * 1024
NR_CPUS_MAX = 8192
TS_MAX_NS = 2**64 - 1
KHZ_MAX = 2**32 - 1
PRIO_MAX = 1 << 16


@dataclass(slots=True)
class Switch:
    ts: int          # ns, as in the trace
    cpu: int
    prev_comm: str
    prev_pid: int
    prev_prio: int
    prev_state: str  # normalised: R (preempted / runnable), S, D, T, X (exiting), I, P, W
    next_comm: str
    next_pid: int
    next_prio: int


@dataclass(slots=True)
class Wakeup:
    ts: int
    cpu: int              # CPU that emitted the event
    kind: str             # "waking" | "wakeup" | "wakeup_new"
    waker_pid: int        # the task current on the emitting CPU (the line's comm-pid)
    waker_comm: str
    irq: bool             # emitted in hard/soft-irq context (flags column), so not by waker_pid
    comm: str
    pid: int
    prio: int
    target_cpu: Optional[int]
    success: bool = True


@dataclass(slots=True)
class Fork:
    ts: int
    cpu: int
    parent_pid: int
    parent_comm: str
    child_pid: int
    child_comm: str


@dataclass(slots=True)
class Exit:
    ts: int
    cpu: int
    pid: int
    comm: str


@dataclass(slots=True)
class Exec:
    ts: int
    cpu: int
    pid: int
    comm: str


@dataclass(slots=True)
class Freq:
    ts: int
    cpu: int
    khz: int


@dataclass(slots=True)
class Idle:
    """cpu_idle: ``cpu`` enters idle state ``state`` (cpuidle's index), or leaves idle
    (``state`` -1; the kernel writes PWR_EVENT_EXIT, (u32)-1, as 4294967295)."""
    ts: int
    cpu: int
    state: int


#: cpu_idle's state on leaving idle: PWR_EVENT_EXIT
IDLE_EXIT = -1


@dataclass(slots=True)
class Binder:
    """binder_transaction: task ``pid``, running on ``cpu``, sends a transaction (or, with
    ``reply``, the reply to one) to process ``to_proc``, thread ``to_thread`` (0: any of
    its binder threads). binder then wakes the thread that takes it, in the same context:
    with WF_SYNC for a reply and for a two-way transaction (``wake_up_interruptible_sync()``,
    the sender waits for the answer), without for a one-way one (TF_ONE_WAY)."""
    ts: int
    cpu: int
    pid: int
    comm: str
    reply: bool
    one_way: bool
    to_proc: int
    to_thread: int

    @property
    def sync(self) -> bool:
        """The wakeup it makes carries WF_SYNC."""
        return self.reply or not self.one_way


Event = Union[Switch, Wakeup, Fork, Exit, Exec, Freq, Idle, Binder]


@dataclass
class Trace:
    source: str
    format: str                       # "trace-cmd report", "ftrace", "systrace", "trace.dat", "hetsched-record"
    #: the events in time order: a sequence of Switch, Wakeup, ... objects, made one at a
    #: time as they are read, from columns (store.py; a list of them works as well)
    events: EventStore = field(default_factory=EventStore)
    nr_cpus: int = 0
    lines: int = 0                    # event lines seen (header/comment lines not counted)
    used: int = 0                     # event lines turned into events
    skipped: Counter = field(default_factory=Counter)   # reason -> lines
    first_bad_lines: list = field(default_factory=list)  # (line number, reason) of the first few
    meta: dict = field(default_factory=dict)            # from a "# hetsched-record:" line
    #: pid -> tgid, where the trace says (the tgid column, a systrace process dump, a
    #: Perfetto ProcessTree); the process of a thread not named here is unknown
    tgids: dict = field(default_factory=dict)
    #: pid -> the thread's name as the trace's process/thread tables give it (a comm in an
    #: event may be older or cut to 15 bytes)
    thread_names: dict = field(default_factory=dict)
    #: tgid -> the process's name (its cmdline's first word, as ps shows it)
    process_names: dict = field(default_factory=dict)
    #: tgid -> the process's oom_score_adj, the last the trace gives (Perfetto's
    #: ProcessStats): Android's ActivityManager writes it with the process's state, so it
    #: tells the top app (0) from the system (-900), persistent (-800) and cached (900+) ones
    oom_score_adj: dict = field(default_factory=dict)
    #: what was repaired of what the kernel cannot write (read with ``repair=True``;
    #: hetsched.traces.check): what -> how many
    repaired: Counter = field(default_factory=Counter)

    @property
    def nr_skipped(self) -> int:
        return sum(self.skipped.values())

    @property
    def start_ns(self) -> int:
        return self.events[0].ts if self.events else 0

    @property
    def end_ns(self) -> int:
        return self.events[-1].ts if self.events else 0

    def counts(self) -> Counter:
        if isinstance(self.events, EventStore):
            return Counter(self.events.kind_counts())
        c: Counter = Counter()
        for e in self.events:
            c[e.kind if isinstance(e, Wakeup) else type(e).__name__.lower()] += 1
        return c

    def summary(self) -> dict:
        return {"source": self.source, "format": self.format, "cpus": self.nr_cpus,
                "event_lines": self.lines, "used": self.used, "skipped": self.nr_skipped,
                "skipped_by_reason": dict(self.skipped.most_common()),
                "window_s": [self.start_ns / 1e9, self.end_ns / 1e9],
                "events": dict(self.counts())}


# --- line grammar -------------------------------------------------------------------------

# comm-pid [(tgid)] [cpu] [flags] sec.frac: event: body. A comm in the fields is the
# kernel's (at most 15 bytes): its groups match at most 64 characters, so that a line
# repeating a pattern cannot make them backtrack over the whole line at every candidate.
_LINE = re.compile(
    r"^\s*(?P<comm>.+?)-(?P<pid>\d+)\s+(?:\(\s*(?P<tgid>[\d-]+)\s*\)\s+)?\[(?P<cpu>\d+)\]\s+"
    r"(?:(?P<flags>[^\s:]{4,6})\s+)?(?P<ts>\d+\.\d+):\s+(?P<event>[\w.-]+):\s*(?P<body>.*?)\s*$")

_SWITCH = re.compile(
    r"^prev_comm=(?P<pc>.{0,64}?) prev_pid=(?P<pp>-?\d+) prev_prio=(?P<ppr>-?\d+) prev_state=(?P<ps>\S+)"
    r"(?: ==>)? next_comm=(?P<nc>.{0,64}?) next_pid=(?P<np>\d+) next_prio=(?P<npr>-?\d+)$")
# trace-cmd's sched_switch plugin: "prev:pid [prio] S ==> next:pid [prio]"
_SWITCH_PLUGIN = re.compile(
    r"^(?P<pc>.{0,64}?):(?P<pp>\d+) \[(?P<ppr>-?\d+)\] (?P<ps>\S+) ==> "
    r"(?P<nc>.{0,64}?):(?P<np>\d+) \[(?P<npr>-?\d+)\]$")
_WAKE = re.compile(
    r"^comm=(?P<c>.{0,64}?) pid=(?P<p>\d+) prio=(?P<pr>-?\d+)(?: success=(?P<s>\d+))?(?: target_cpu=(?P<t>\d+))?$")
# trace-cmd's sched_wakeup plugin: "comm:pid [prio] success=1 CPU:002"
_WAKE_PLUGIN = re.compile(
    r"^(?P<c>.{0,64}?):(?P<p>\d+) \[(?P<pr>-?\d+)\](?: success=(?P<s>\d+))?(?: CPU:(?P<t>\d+))?$")
_FORK = re.compile(r"^comm=(?P<c>.{0,64}?) pid=(?P<p>\d+) child_comm=(?P<cc>.{0,64}?) child_pid=(?P<cp>\d+)$")
_EXIT = re.compile(r"^comm=(?P<c>.{0,64}?) pid=(?P<p>\d+)(?: prio=-?\d+)?(?: group_dead=\w+)?$")
_EXEC = re.compile(r"^filename=(?P<f>.*?) pid=(?P<p>\d+) old_pid=\d+$")
_FREQ = re.compile(r"^state=(?P<s>\d+) cpu_id=(?P<c>\d+)$")
# devlib logs the frequencies at the start of a LISA trace as trace_marker text:
#   print: 0xffff00000819ff24s: cpu_frequency_devlib:        state=950000 cpu_id=0
# binder_trace.h's binder_transaction: "transaction=%d dest_node=%d dest_proc=%d
# dest_thread=%d reply=%d flags=0x%x code=0x%x" (debug_id and target_node are ints that
# wrap to negative), or the struct's own field names as `trace-cmd report -R` prints them
# ("debug_id= target_node= to_proc= to_thread= reply= code= flags=")
_BINDER = re.compile(r"^transaction=-?\d+ dest_node=-?\d+ dest_proc=(?P<p>\d+) dest_thread=(?P<t>\d+) "
                     r"reply=(?P<r>[01]) flags=(?P<f>0x[0-9a-fA-F]{1,8})\b")
_BINDER_RAW = re.compile(r"^debug_id=-?\d+ target_node=-?\d+ to_proc=(?P<p>\d+) to_thread=(?P<t>\d+) "
                         r"reply=(?P<r>[01]) code=(?:0x[0-9a-fA-F]+|\d+) flags=(?P<f>0x[0-9a-fA-F]{1,8}|\d+)\b")
#: binder's TF_ONE_WAY transaction flag (uapi/linux/android/binder.h)
TF_ONE_WAY = 0x01
_DEVLIB_FREQ = re.compile(r"cpu_frequency_devlib:\s+state=(?P<s>\d+)\s+cpu_id=(?P<c>\d+)\s*$")

#: events read here; every other event name is skipped and counted by name
USED_EVENTS = ("sched_switch", "sched_waking", "sched_wakeup", "sched_wakeup_new", "sched_process_fork",
               "sched_process_exit", "sched_process_exec", "cpu_frequency", "cpu_idle", "binder_transaction")

# kernel task-state letters (task_state_to_char / TASK_REPORT) and what a switch-out means
_LETTERS = {"R": "R", "S": "S", "D": "D", "T": "T", "t": "T", "X": "X", "Z": "X", "x": "X",
            "I": "I", "P": "P", "W": "W", "K": "D", "N": "S"}
_STATE_CODE = {c: i for i, c in enumerate(_st.STATES)}


def parse_state(raw: str) -> Optional[str]:
    """Normalise a sched_switch ``prev_state``: letters (``R``, ``R+``, ``S``, ``D|K``,
    ``t``, ``x``) or the raw integer bitmask of trace-cmd ``report -R`` output.

    Integers: 0 is R; any bit at or above 1024 is the kernel's "preempted" marker
    (TASK_STATE_MAX / TASK_REPORT_MAX: 1024 in 3.x, 4096 on LISA's 4.19) so R; otherwise
    D (2) wins over S (1); 16/32/64 (EXIT_DEAD, EXIT_ZOMBIE, TASK_DEAD) are X; 4/8 are T.
    Returns None for anything else."""
    if raw.isdigit():
        v = int(raw)
        if v == 0 or v >= 1024:
            return "R"
        if v & 2:
            return "D"
        if v & 1:
            return "S"
        if v & (16 | 32 | 64):
            return "X"
        if v & (4 | 8):
            return "T"
        return "S"  # 128 (parked / idle bits) alone: blocked
    if raw.startswith("R"):
        return "R"   # R and R+ (preempted): still runnable
    return _LETTERS.get(raw[0]) if raw else None


def _ns(ts: str) -> Optional[int]:
    """``sec.frac`` in ns; None beyond the kernel's u64 ns."""
    sec, _, frac = ts.partition(".")
    if len(sec) > 11:  # u64 ns is 1.8e10 s
        return None
    ns = int(sec) * 1_000_000_000 + int((frac + "000000000")[:9])
    return ns if ns <= TS_MAX_NS else None


def _num(text: Optional[str], hi: int) -> Optional[int]:
    """A decimal field of a line (``-?\\d+``) within ``[-hi, hi]``; None otherwise (text of
    any length: the int is made only once it is known to be short)."""
    if text is None or len(text.lstrip("-")) > 20:
        return None
    v = int(text)
    return v if -hi <= v <= hi else None


class _Bad(Exception):
    """A number of a line out of the kernel's range: the line is skipped."""


def _n(text: Optional[str], hi: int, low: int = 0) -> int:
    v = _num(text, hi)
    if v is None or v < low:
        raise _Bad
    return v


def _irq_flags(flags: Optional[str]) -> bool:
    # ftrace's latency format: irqs-off, need-resched, hardirq/softirq, preempt-depth.
    # The third character is h (hardirq), s (softirq), H (hardirq inside softirq) or '.'
    return bool(flags) and len(flags) >= 3 and flags[2] in "hsH"


class _Parser:
    def __init__(self, trace: Trace, repair: bool = False):
        self.t = trace
        self.repair = repair
        #: cpu -> the latest time of an event it wrote (the line's [cpu]): its ring buffer
        #: is in time order
        self.last_ts: dict[int, int] = {}
        #: the line number of each event added, in the order added (check.py maps a
        #: refusal's row back to its line with it)
        self.places = array("q")
        self.max_cpu = -1
        #: the CPU count the header declares (``cpus=N``, ``#P:N``), None if it declares none
        self.declared_cpus: Optional[int] = None
        self.add = trace.events.add_row

    def bad(self, lineno: int, reason: str) -> None:
        self.t.skipped[reason] += 1
        if len(self.t.first_bad_lines) < 5:
            self.t.first_bad_lines.append((lineno, reason))

    def header(self, line: str) -> bool:
        s = line.strip()
        if not s:
            return True
        if s.startswith("#"):
            if s.startswith("# hetsched-record:"):
                self.record_meta(s.split(":", 1)[1])
            m = re.search(r"#P:(\d+)", s)
            if m and _num(m.group(1), NR_CPUS_MAX) is not None:
                self.t.nr_cpus = self.declared_cpus = int(m.group(1))
            return True
        if s.startswith("version = ") or s.startswith("CPU ") and s.endswith("is empty"):
            return True
        m = re.fullmatch(r"cpus=(\d+)", s)
        if m:
            if _num(m.group(1), NR_CPUS_MAX) is not None:
                self.t.nr_cpus = self.declared_cpus = int(m.group(1))
            return True
        return False

    def record_meta(self, text: str) -> None:
        """The ``# hetsched-record:`` JSON line: kept if it is an object whose keys this
        reader uses have their types (root_pid a pid, platform a name); a line that is not
        JSON is ignored, as it always was (the trace itself is still usable)."""
        src = self.t.source
        try:
            _input.check_json_nesting(text, src)
            meta = json.loads(text)
        except (ValueError, RecursionError, InputError):
            return
        if not isinstance(meta, dict):
            return
        root = meta.get("root_pid")
        if root is not None and (isinstance(root, bool) or not isinstance(root, int) or not 0 < root <= PID_MAX):
            raise InputError(src, "# hetsched-record: root_pid", f"a pid in [1, {PID_MAX}]", got=root)
        plat = meta.get("platform")
        if plat is not None and (not isinstance(plat, str) or not plat.strip()):
            raise InputError(src, "# hetsched-record: platform", "a platform name", got=plat)
        self.t.meta.update(meta)

    def line(self, lineno: int, line: str) -> None:
        if self.header(line):
            return
        self.t.lines += 1
        if len(line) > MAX_LINE_CHARS:
            self.bad(lineno, "line too long")
            return
        m = _LINE.match(line)
        if m is None:
            self.bad(lineno, "malformed line")
            return
        ts = _ns(m.group("ts"))
        cpu = _num(m.group("cpu"), NR_CPUS_MAX - 1)
        pid = _num(m.group("pid"), PID_MAX)
        if ts is None or cpu is None or pid is None:
            self.bad(lineno, "number out of range")
            return
        try:
            out = self.event(lineno, m, ts, cpu, pid)
        except _Bad:
            self.bad(lineno, f"malformed {m.group('event')}")
            return
        if out is None:
            return
        # a CPU the header says the machine does not have: the file is not what it claims
        # (the line's own CPU, or the one a cpu_frequency / cpu_idle event names)
        n = self.declared_cpus
        if n is not None and max(cpu, out[1]) >= n:
            raise InputError(self.t.source, f"line {lineno}", f"a CPU number below the {n} CPUs its header declares "
                             f"(cpus={n} / #P:{n})", got=f"CPU {max(cpu, out[1])}")
        last = self.last_ts.get(cpu)
        if last is not None and ts < last:
            if not self.repair:
                raise _check.backwards_error(self.t.source, f"line {lineno}", cpu, ts, last)
            self.t.repaired[_check.BACKWARDS] += 1
        else:
            self.last_ts[cpu] = ts
        tgid = m.group("tgid")
        if tgid is not None and tgid.isdigit() and pid:
            self.t.tgids.setdefault(pid, int(tgid))
        if cpu > self.max_cpu:
            self.max_cpu = cpu
        self.t.used += 1
        self.places.append(lineno)
        self.add(out)

    def event(self, lineno: int, m: re.Match, ts: int, cpu: int, pid: int) -> Optional[tuple]:
        """The event of a line whose prefix parsed, as its row of the trace's EventStore;
        None if skipped (counted), _Bad if a number of its fields is out of range."""
        ev = m.group("event")
        body = m.group("body")
        comm = m.group("comm").strip()
        out: Optional[Event] = None
        if ev == "sched_switch":
            f = _SWITCH.match(body) or _SWITCH_PLUGIN.match(body)
            state = parse_state(f.group("ps")) if f else None
            if f is None or state is None:
                self.bad(lineno, "malformed sched_switch")
                return None
            out = (ts, cpu, _st.SWITCH, _n(f.group("pp"), PID_MAX, -PID_MAX), f.group("pc"),
                   _n(f.group("ppr"), PRIO_MAX, -PRIO_MAX), _n(f.group("np"), PID_MAX), f.group("nc"),
                   _n(f.group("npr"), PRIO_MAX, -PRIO_MAX), _STATE_CODE[state], 0, 0)
        elif ev in ("sched_waking", "sched_wakeup", "sched_wakeup_new"):
            f = _WAKE.match(body) or _WAKE_PLUGIN.match(body)
            if f is None:
                self.bad(lineno, f"malformed {ev}")
                return None
            out = (ts, cpu, _st.WAKE_CODES[ev[6:]], pid, comm, 0, _n(f.group("p"), PID_MAX), f.group("c"),
                   _n(f.group("pr"), PRIO_MAX, -PRIO_MAX), 0,
                   _n(f.group("t"), NR_CPUS_MAX - 1) if f.group("t") else -1,
                   (_st.IRQ if _irq_flags(m.group("flags")) else 0) | (_st.SUCCESS if f.group("s") != "0" else 0))
        elif ev == "sched_process_fork":
            f = _FORK.match(body)
            if f is None:
                self.bad(lineno, f"malformed {ev}")
                return None
            out = (ts, cpu, _st.FORK, _n(f.group("p"), PID_MAX), f.group("c"), 0, _n(f.group("cp"), PID_MAX),
                   f.group("cc"), 0, 0, 0, 0)
        elif ev == "sched_process_exit":
            f = _EXIT.match(body)
            if f is None:
                self.bad(lineno, f"malformed {ev}")
                return None
            out = (ts, cpu, _st.EXIT, _n(f.group("p"), PID_MAX), f.group("c"), 0, 0, "", 0, 0, 0, 0)
        elif ev == "sched_process_exec":
            f = _EXEC.match(body)
            if f is None:
                self.bad(lineno, f"malformed {ev}")
                return None
            out = (ts, cpu, _st.EXEC, _n(f.group("p"), PID_MAX), os.path.basename(f.group("f"))[:15], 0, 0, "", 0, 0,
                   0, 0)
        elif ev == "cpu_frequency":
            f = _FREQ.match(body)
            if f is None:
                self.bad(lineno, f"malformed {ev}")
                return None
            out = (ts, _n(f.group("c"), NR_CPUS_MAX - 1), _st.FREQ, 0, "", 0, 0, "", 0, 0, _n(f.group("s"), KHZ_MAX), 0)
        elif ev == "cpu_idle":
            f = _FREQ.match(body)  # the same "state=N cpu_id=N" fields
            if f is None:
                self.bad(lineno, f"malformed {ev}")
                return None
            state = _n(f.group("s"), KHZ_MAX)
            out = (ts, _n(f.group("c"), NR_CPUS_MAX - 1), _st.IDLE, 0, "", 0, 0, "", 0, 0,
                   IDLE_EXIT if state == KHZ_MAX else state, 0)
        elif ev == "binder_transaction":
            f = _BINDER.match(body) or _BINDER_RAW.match(body)
            if f is None:
                self.bad(lineno, f"malformed {ev}")
                return None
            out = (ts, cpu, _st.BINDER, pid, comm, 0, _n(f.group("t"), PID_MAX), "", 0, 0, _n(f.group("p"), PID_MAX),
                   (_st.REPLY if f.group("r") == "1" else 0) | (_st.ONE_WAY if int(f.group("f"), 0) & TF_ONE_WAY
                                                                else 0))
        elif ev == "print" and "cpu_frequency_devlib" in body:
            f = _DEVLIB_FREQ.search(body)
            if f is None:
                self.bad(lineno, "malformed cpu_frequency_devlib")
                return None
            out = (ts, _n(f.group("c"), NR_CPUS_MAX - 1), _st.FREQ, 0, "", 0, 0, "", 0, 0, _n(f.group("s"), KHZ_MAX), 0)
        else:
            self.t.skipped[f"event {ev}"] += 1
            return None
        return out

    def finish(self) -> Trace:
        self.t.events.finish()  # sorted by time, stably: file order within a timestamp
        n = _check.check_one_cpu_at_a_time(self.t.events, self.places, self.t.source, lambda i: f"line {i}",
                                           self.repair)
        if n:
            self.t.repaired[_check.TWO_CPUS] += n
        self.places = array("q")
        if self.t.nr_cpus <= self.max_cpu:
            self.t.nr_cpus = self.max_cpu + 1
        return self.t


def parse_text(lines: Iterable[str], source: str = "<text>", fmt: str = "ftrace",
               first_lineno: int = 1, repair: bool = False) -> Trace:
    """Parse trace text lines (any of the text formats); a bad line is skipped and
    counted, but what the kernel cannot write (time going backwards on a CPU, a task on
    two CPUs at once, a CPU beyond the header's) is refused unless ``repair``
    (hetsched.traces.check)."""
    p = _Parser(Trace(source=source, format=fmt), repair)
    for i, line in enumerate(lines, first_lineno):
        p.line(i, line.rstrip("\r\n"))
    return p.finish()


# --- systrace / Catapult HTML -------------------------------------------------------------
#
# How the tools put a trace into a page (catapult-project/catapult):
#
# * systrace (systrace/output_generator.py; Android's systrace.py since 2016) writes, after
#   "<!-- BEGIN TRACE -->", one `<script class="trace-data" type="application/text">` block per
#   tracing agent, holding what the agent returned as it is:
#   - atrace's ftrace text: a "# tracer: nop" header, then one line per event, with a
#     "(tgid)" column when the kernel prints it ("(-----)" where it did not know it, or
#     "( 128)" once atrace_agent.fix_missing_tgids has filled it from /proc);
#   - "PROCESS DUMP" (android_process_data_agent.py): `ps -A -o USER,PID,PPID,VSIZE,RSS,
#     WCHAN,ADDR=PC,S,NAME,COMM` then `ps -AT -o USER,PID,TID,CMD`, once when tracing starts
#     and once when it stops; on devices whose ps is toolbox's, `ps` then `ps -t`;
#   - "ATRACE_PROCESS_DUMP" and a JSON document (atrace_process_dump.py, atrace_helper's
#     dump: dump.processes[pid] = {name, threads: {tid: {name}}});
#   - "CGROUP DUMP", and the controller's JSON ({"traceEvents": [...]}: clock syncs, argv).
# * systrace-legacy.py (Android 4.3's) wrote its one trace-data block with every newline
#   of the text as "\n\" and a newline, which the viewer strips.
# * Android 4.1 and 4.2's systrace (2012) wrote the ftrace text as a JavaScript string,
#   `var linuxPerfData = "\` and then one trace line per source line, each ending in
#   "\n\" (the viewer's ftrace importer, _extractEventsFromSystraceHTML).
# * trace2html (tracing/tracing_build/trace2html.py), which systrace also calls when it
#   has more than four agents (trace_data.TraceDataBuilder), writes each trace as
#   `<script id="viewer-data" type="text/plain">` (or application/json): base64 of its
#   gzip. A JSON trace may carry the ftrace text as its "systemTraceEvents" string
#   (Chrome's JSON trace format; systrace's JSON output keys each agent's data by the
#   names below).
#
# Every block with scheduler data is read: all ftrace blocks into one trace, the process
# dumps into Trace.tgids / thread_names / process_names. A block is read one line at a time
# from the page's text, never copied whole: only a JSON block is (once, to parse it), and a
# viewer-data block's base64 is decoded whole, its gzip then inflated a few MB at a time.

_TRACE_DATA_TAG = re.compile(r'^[ \t]*<script class="trace-data" type="application/text">', re.M)
_VIEWER_DATA_TAG = re.compile(r'^[ \t]*<\s*script id="viewer-data" type="(?:application/json|text/plain)">', re.M)
_LINUX_PERF_DATA = re.compile(r'^[ \t]*var linuxPerfData\s*=\s*(["\'])', re.M)
_SCRIPT_END = "</script>"
#: systrace's names for an agent's text in a JSON trace (trace_data.py's TraceDataParts)
_JSON_TEXT_PARTS = ("systemTraceEvents", "androidProcessDump", "atraceProcessDump")
#: what systrace-legacy.py wrote for each newline of a trace-data block
_LEGACY_NEWLINE = "\\n\\"


class _Embedded:
    """One trace in a page: where it is, its lines (line number, text) read one at a
    time, and (for JSON) its whole text."""

    __slots__ = ("where", "lines", "whole")

    def __init__(self, where: str, lines, whole) -> None:
        self.where = where
        self.lines = lines   # () -> Iterator[tuple[int, str]]
        self.whole = whole   # () -> str


def _text_lines(text: str, start: int, end: int, lineno: int) -> Iterator[tuple[int, str]]:
    """The lines of text[start:end] with their line numbers, each its own small string."""
    while start < end:
        nl = text.find("\n", start, end)
        if nl < 0:
            nl = end
        yield lineno, text[start:nl]
        lineno += 1
        start = nl + 1


def _gzip_lines(data: bytes, source: str, where: str) -> Iterator[tuple[int, str]]:
    """The lines of a gzip stream's UTF-8 text (numbered from 1), decompressed a chunk at
    a time once its size is known to be at most MAX_TRACE_BYTES (:func:`_gunzipped_size`).
    A line longer than MAX_LINE_CHARS is given as its first MAX_LINE_CHARS + 1 characters:
    a reader skips it as too long (it is no line the kernel wrote) and the rest of it is
    never held, a JSON block being read whole (:func:`_gunzip`) instead."""
    import codecs

    _gunzipped_size([data], source, where)
    decode = codecs.getincrementaldecoder("utf-8")(errors="replace").decode
    lineno, rest, rest_len = 1, [], 0   # the line so far, in pieces, and its length
    for out in _gunzip_chunks([data], source, where):
        text = decode(out)
        start = 0
        while True:
            nl = text.find("\n", start)
            piece = text[start:] if nl < 0 else text[start:nl]
            if rest_len <= MAX_LINE_CHARS:
                piece = piece[:MAX_LINE_CHARS + 1 - rest_len]
                rest.append(piece)
                rest_len += len(piece)
            if nl < 0:
                break
            yield lineno, "".join(rest)
            lineno += 1
            rest, rest_len = [], 0
            start = nl + 1
    tail = decode(b"", final=True)
    if tail and rest_len <= MAX_LINE_CHARS:
        rest.append(tail[:MAX_LINE_CHARS + 1 - rest_len])
    if rest and any(rest):
        yield lineno, "".join(rest)


# One JavaScript escape after its backslash (ECMAScript's EscapeSequence and
# LineContinuation, with the legacy octal escapes non-strict code still accepts)
_JS_ESCAPE = re.compile(r"u\{([0-9A-Fa-f]+)\}|u([0-9A-Fa-f]{4})|x([0-9A-Fa-f]{2})|([0-3][0-7]{0,2}|[4-7][0-7]?)"
                        r"|(\r\n|[\s\S])")
_JS_SINGLE = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v"}
_JS_LINE_BREAKS = "\n\r\u2028\u2029"


def _js_string_lines(text: str, start: int, quote: str, lineno: int, source: str) -> Iterator[tuple[int, str]]:
    """The lines of the JavaScript string literal that opens just before text[start]
    (``quote`` its quote), decoded as a browser decodes it, one line at a time, each
    numbered with the page line it starts on.

    The old systrace pages end each source line of the string with a line continuation
    (a backslash before the newline), which JSON has no such thing as: so the literal is
    not handed to json.loads but decoded here, escape by escape, to the ECMAScript
    grammar (single-character escapes, \\xHH, \\uHHHH, \\u{H...}, the legacy octal ones,
    any other escaped character standing for itself, a continuation standing for
    nothing). A UTF-16 surrogate pair written as two \\u escapes is one character; a lone
    surrogate is read as U+FFFD, as undecodable bytes are."""
    special = re.compile(r"[\\\n\r" + re.escape(quote) + "]")
    where = f"linuxPerfData (line {lineno})"
    pieces: list[str] = []
    first: Optional[int] = None   # page line of the current decoded line's first character
    phys = lineno                 # page line the scan is on
    pos = start
    high: Optional[int] = None    # a \u high surrogate waiting for its low half

    def char(c: str) -> Optional[str]:
        nonlocal high
        if high is not None:
            h, high = high, None
            if 0xDC00 <= ord(c) <= 0xDFFF:
                return chr(0x10000 + ((h - 0xD800) << 10) + (ord(c) - 0xDC00))
            pieces.append("\ufffd")
        if 0xD800 <= ord(c) <= 0xDBFF:
            high = ord(c)
            return None
        return "\ufffd" if 0xDC00 <= ord(c) <= 0xDFFF else c

    while True:
        m = special.search(text, pos)
        if m is None:
            raise InputError(source, where, f"a JavaScript string that ends with its closing {quote} "
                             "(the file ends inside it: it may be truncated)")
        i = m.start()
        if i > pos:
            if high is not None:
                pieces.append("\ufffd")
                high = None
            if first is None:
                first = phys
            pieces.append(text[pos:i])
        c = text[i]
        if c == quote:
            if high is not None:
                pieces.append("\ufffd")
            if pieces:
                yield (first or phys), "".join(pieces)
            return
        if c != "\\":
            raise InputError(source, f"linuxPerfData (line {phys})", "a JavaScript string whose line breaks are "
                             "escaped (this line ends inside the string without a backslash)")
        e = _JS_ESCAPE.match(text, i + 1)
        if e is None:  # a backslash as the file's last character
            raise InputError(source, where, f"a JavaScript string that ends with its closing {quote} "
                             "(the file ends inside it: it may be truncated)")
        pos = e.end()
        brace, u4, x2, octal, other = e.groups()
        if other is not None:
            if other in _JS_LINE_BREAKS or other == "\r\n":
                phys += "\n" in other
                continue  # a line continuation: nothing
            if other in "ux":
                raise InputError(source, f"linuxPerfData (line {phys})",
                                 f"a JavaScript string with valid escapes (\\{other} without its hex digits)")
            got = _JS_SINGLE.get(other, other)
        elif octal is not None:
            got = chr(int(octal, 8))
        else:
            digits = (brace or u4 or x2).lstrip("0")
            cp = int(digits, 16) if len(digits) <= 6 else 0x110000
            if cp > 0x10FFFF:
                raise InputError(source, f"linuxPerfData (line {phys})",
                                 "a JavaScript string with valid escapes (\\u{...} beyond U+10FFFF)")
            got = chr(cp)
        out = char(got)
        if out is None:
            continue
        if out == "\n":
            yield (first or phys), "".join(pieces)
            pieces.clear()
            first = None
        else:
            if first is None:
                first = phys
            pieces.append(out)


def _viewer_part(text: str, start: int, end: int, where: str, source: str) -> _Embedded:
    """A trace2html viewer-data block, text[start:end]: base64 of a trace, gzipped or not."""
    import base64
    import binascii

    def raw() -> bytes:
        try:
            return base64.b64decode(text[start:end])
        except (binascii.Error, ValueError) as err:
            raise InputError(source, where, f"base64 text, as trace2html writes it ({err})") from None

    def lines() -> Iterator[tuple[int, str]]:
        data = raw()
        if data[:2] == b"\x1f\x8b":
            return _gzip_lines(data, source, where)
        dec = data.decode("utf-8", errors="replace")
        return _text_lines(dec, 0, len(dec), 1)

    def whole() -> str:
        data = raw()
        return (_gunzip(data, source, where) if data[:2] == b"\x1f\x8b" else data).decode("utf-8", errors="replace")

    return _Embedded(where, lines, whole)


def _html_parts(text: str, source: str) -> Iterator[_Embedded]:
    """Every trace the page embeds, in page order."""
    tags = sorted([(m.start(), m.end(), "trace-data") for m in _TRACE_DATA_TAG.finditer(text)]
                  + [(m.start(), m.end(), "viewer-data") for m in _VIEWER_DATA_TAG.finditer(text)])
    pos = line = 0   # line numbers are counted forward from the last block
    after = 0        # a tag inside an earlier block is its text, not a block
    for at, start, kind in tags:
        if at < after:
            continue
        line += text.count("\n", pos, at)
        pos = at
        where = f"{kind} block at line {line + 1}"
        end = text.find(_SCRIPT_END, start)
        if end < 0:
            raise InputError(source, where, f"a block closed by {_SCRIPT_END} (it never closes: the file ends "
                             "inside it, so it may be truncated)")
        after = end
        if kind == "trace-data":
            yield _Embedded(where, lambda s=start, e=end, n=line + 1: _text_lines(text, s, e, n),
                            lambda s=start, e=end: text[s:e])
            continue

        yield _viewer_part(text, start, end, where, source)
    if tags:
        return
    # the 2012 pages: one JavaScript string (searched for only where no block is, so that
    # no viewer code that names it is taken for it)
    m = _LINUX_PERF_DATA.search(text)
    if m is not None:
        n = text.count("\n", 0, m.start()) + 1
        q = m.group(1)
        yield _Embedded(f"linuxPerfData (line {n})", lambda: _js_string_lines(text, m.end(), q, n, source),
                        lambda: "\n".join(t for _, t in _js_string_lines(text, m.end(), q, n, source)))


class _StreamBlock:
    """A trace-data block of a page being read one line at a time: its lines (read from
    the page as they are asked for) and, for a JSON block, its whole text."""

    #: the most lines _part_kind reads before it decides (200), with room
    HEAD_LINES = 256

    def __init__(self, next_line, first: str, lineno: int, source: str, where: str) -> None:
        self.next_line, self.source, self.where = next_line, source, where   # () -> the page's next line or None
        self.next_piece: Optional[str] = first   # the rest of the tag's line
        self.lineno = lineno
        self.done = False
        self.seen: Optional[list] = []           # the pieces read, while few (all, once whole() is asked)
        self.keep = self.HEAD_LINES
        self.after_lines = 0                     # page lines read past the tag's

    def _pieces(self) -> Iterator[tuple[int, str]]:
        """(line number, piece) of the block's text split at newlines, the last piece
        (before </script>) included even if empty; marks the block done."""
        while not self.done:
            cur = self.next_piece
            if cur is None:
                cur = self.next_line()
                if cur is None:
                    raise InputError(self.source, self.where, f"a block closed by {_SCRIPT_END} (it never closes: "
                                     "the file ends inside it, so it may be truncated)")
                self.after_lines += 1
                self.lineno += 1
            self.next_piece = None
            k = cur.find(_SCRIPT_END)
            if k >= 0:
                cur = cur[:k]
                self.done = True
            if self.seen is not None:
                self.seen.append(cur)
                if len(self.seen) > self.keep:
                    self.seen = None
            yield self.lineno, cur

    def lines(self) -> Iterator[tuple[int, str]]:
        # as _text_lines: every piece but an empty one just before </script>
        for lineno, piece in self._pieces():
            if self.done and not piece:
                return
            yield lineno, piece

    def whole(self) -> str:
        if self.seen is None:
            raise RuntimeError("a block's whole text asked for after its head was read")
        self.keep = MAX_TRACE_BYTES
        for _ in self._pieces():
            pass
        text = "\n".join(self.seen)
        self.seen = None
        return text

    def drain(self) -> None:
        self.seen = None
        for _ in self._pieces():
            pass


_TAG_OPEN_LINE = re.compile(r"[ \t]*<\s*\Z")


def _read_systrace_stream(page: Iterator[str], source: str, repair: bool = False) -> Optional[Trace]:
    """A systrace / Catapult page read one line at a time (``page``: its text split at
    newlines): every ftrace block into one trace, with the process tables of its process
    dumps, as :func:`_read_systrace_html` reads the whole text. None if the page has no
    trace-data or viewer-data block (it is then read whole, for the old pages' string)."""
    p = _Parser(Trace(source=source, format="systrace"), repair)
    tables = _ProcessTables()
    found: list[tuple[str, str]] = []
    lineno = 0
    page = iter(page)
    held: list[str] = []   # lines read ahead (a tag broken across lines), to be read again
    any_tag = False
    while True:
        if held:
            line = held.pop(0)
        else:
            line = next(page, None)
            if line is None:
                break
        lineno += 1
        m = _TRACE_DATA_TAG.match(line)
        kind = "trace-data"
        if m is None:
            m = _VIEWER_DATA_TAG.match(line)
            kind = "viewer-data"
        at = lineno
        if m is None and _TAG_OPEN_LINE.match(line):
            # "<" then only white space to the line's end: a viewer-data tag may go on below
            joined, extra = line, []
            while _TAG_OPEN_LINE.match(joined):
                nxt = held.pop(0) if held else next(page, None)
                if nxt is None:
                    break
                extra.append(nxt)
                joined += "\n" + nxt
            m = _VIEWER_DATA_TAG.match(joined)
            if m is None:
                held[:0] = extra
                continue
            lineno += len(extra)
            line = joined[joined.rfind("\n", 0, m.end()) + 1:]
            m_end = m.end() - (len(joined) - len(line))
        elif m is None:
            continue
        else:
            m_end = m.end()
        any_tag = True
        where = f"{kind} block at line {at}"
        block = _StreamBlock(lambda: held.pop(0) if held else next(page, None), line[m_end:], at, source, where)
        if kind == "trace-data":
            part = _Embedded(where, block.lines, block.whole)
            found.append((where, _read_part(part, p, tables, source)))
            block.drain()
        else:
            text = block.whole()
            found.append((where, _read_part(_viewer_part(text, 0, len(text), where, source), p, tables, source)))
            del text
        lineno += block.after_lines
    if not any_tag:
        return None
    return _finish_systrace(p, tables, found, source)


def _part_kind(lines: Iterator[tuple[int, str]]) -> tuple[str, list]:
    """What an embedded trace holds, from its first lines (returned, to be read again):
    "ftrace", "process dump", "atrace process dump", "cgroup dump", "json", "other" or
    "empty"."""
    head: list = []
    for item in lines:
        head.append(item)
        s = item[1].strip()
        if not s:
            continue
        if s.startswith("#") and not s.startswith("# tracer") and len(head) < 200:
            continue  # a comment header: the first event line decides
        for prefix, kind in (("ATRACE_PROCESS_DUMP", "atrace process dump"), ("PROCESS DUMP", "process dump"),
                             ("CGROUP DUMP", "cgroup dump"), ("{", "json"), ("[", "json")):
            if s.startswith(prefix):
                return kind, head
        if s.startswith("# tracer") or _LINE.match(s.removesuffix(_LEGACY_NEWLINE)):
            return "ftrace", head
        return "other", head
    return "empty", head


class _ProcessTables:
    """pid -> tgid, pid -> thread name and tgid -> process name from process dumps; a later
    dump (systrace's second snapshot, when tracing stopped) names a thread or process
    again with the name it ended the trace with."""

    def __init__(self) -> None:
        self.tgids: dict[int, int] = {}
        self.thread_names: dict[int, str] = {}
        self.process_names: dict[int, str] = {}

    @staticmethod
    def _pid(text) -> Optional[int]:
        v = _num(text, PID_MAX) if isinstance(text, str) and text.isdecimal() else None
        return v if v else None

    def process(self, pid: int, name) -> None:
        self.tgids[pid] = pid
        if isinstance(name, str) and name:
            if name.startswith("[") and name.endswith("]"):
                return  # ps brackets the comm of a process without a command line: a kernel thread
            # ps's NAME (toybox) is argv[0] without its directory; toolbox's shows it whole
            self.process_names[pid] = name.rsplit("/", 1)[-1] if name.startswith("/") else name

    def thread(self, tid: int, tgid: int, name) -> None:
        self.tgids[tid] = tgid
        if isinstance(name, str) and name:
            self.thread_names[tid] = name

    def read_ps(self, lines: Iterable[tuple[int, str]], p: _Parser) -> None:
        """A PROCESS DUMP block: listings, each under its header line.

        * ``USER PID PPID VSZ RSS WCHAN PC S NAME COMMAND`` (toybox, ``ps -A -o ...``): one
          process a row, NAME the 9th column;
        * ``USER PID TID CMD`` (``ps -AT -o USER,PID,TID,CMD``): one thread a row, its
          process's pid, its tid and its name (the rest of the row: names have spaces);
        * ``USER PID PPID VSIZE RSS WCHAN PC NAME`` (toolbox): an unlabelled state column
          before NAME. The agent ran ``ps`` then ``ps -t``, so listings alternate: the
          processes, then the processes with their threads, where a thread's row has its
          tid as PID and its process's pid as PPID (told apart, as Catapult's importer
          does, by the first listing's pids)."""
        mode = None
        legacy_listings = 0
        legacy_pids: set[int] = set()
        for lineno, line in lines:
            cols = line.split()
            if not cols or cols == ["PROCESS", "DUMP"]:
                continue
            if cols[0] == "USER" and len(cols) >= 4 and cols[1] == "PID":
                if cols[2] == "TID":
                    mode = "threads"
                elif cols[2] == "PPID" and len(cols) >= 9 and cols[7] == "S":
                    mode = "processes"
                elif cols[2] == "PPID" and cols[-1] == "NAME":
                    legacy_listings += 1
                    mode = "legacy processes" if legacy_listings % 2 else "legacy threads"
                else:
                    mode = None
                    p.bad(lineno, "process dump listing not read")
                continue
            if mode is None:
                p.bad(lineno, "malformed process dump line")
                continue
            if mode == "processes":
                pid = self._pid(cols[1]) if len(cols) >= 9 else None
                if pid is None:
                    p.bad(lineno, "malformed process dump line")
                    continue
                self.process(pid, cols[8])
                continue
            m = (_PS_THREAD_ROW if mode == "threads" else _PS_LEGACY_ROW).match(line)
            a, b = (self._pid(m.group(1)), _num(m.group(2), PID_MAX)) if m else (None, None)
            # a PPID may be 0 (init, kthreadd); a tgid may not
            if a is None or b is None or not b and mode != "legacy processes" and a not in legacy_pids:
                p.bad(lineno, "malformed process dump line")
                continue
            name = m.group(3)
            if mode == "threads":
                self.thread(b, a, name)
            elif mode == "legacy processes":
                legacy_pids.add(a)
                self.process(a, name)
            elif a not in legacy_pids:  # a thread's row: PID is its tid, PPID its process
                self.thread(a, b, name)

    def read_atrace_dump(self, doc, source: str, where: str) -> None:
        """atrace_helper's JSON: dump.processes maps each pid (a string) to its name and
        its threads (tid -> {name})."""
        procs = doc.get("dump", {}).get("processes") if isinstance(doc, dict) and isinstance(doc.get("dump"), dict) \
            else None
        if not isinstance(procs, dict):
            raise InputError(source, f"{where}: dump.processes", "an object mapping each pid to its process "
                             "(atrace_helper's process dump)")
        for spid, proc in procs.items():
            pid = self._pid(spid)
            if pid is None or not isinstance(proc, dict):
                raise InputError(source, f"{where}: dump.processes", "pids (decimal strings, at most "
                                 f"{PID_MAX}) mapped to objects", got=spid)
            self.process(pid, proc.get("name"))
            threads = proc.get("threads") or {}
            if not isinstance(threads, dict):
                raise InputError(source, f"{where}: dump.processes.{spid}.threads", "an object mapping tids "
                                 "to threads")
            for stid, th in threads.items():
                tid = self._pid(stid)
                if tid is None or not isinstance(th, dict):
                    raise InputError(source, f"{where}: dump.processes.{spid}.threads",
                                     f"tids (decimal strings, at most {PID_MAX}) mapped to objects", got=stid)
                self.thread(tid, pid, th.get("name"))

    def merge_into(self, t: Trace) -> None:
        """The ftrace text's tgid column stands (it is the kernel's, at each event); the
        dumps fill in the rest, and alone name threads and processes."""
        for pid, tgid in self.tgids.items():
            t.tgids.setdefault(pid, tgid)
        t.thread_names.update(self.thread_names)
        t.process_names.update(self.process_names)


# USER PID TID CMD, and toolbox's USER PID PPID VSIZE RSS WCHAN PC S NAME
_PS_THREAD_ROW = re.compile(r"^\s*\S+\s+(\d+)\s+(\d+)\s+(.*?)\s*$")
_PS_LEGACY_ROW = re.compile(r"^\s*\S+\s+(\d+)\s+(\d+)(?:\s+\S+){5}\s+(.*?)\s*$")


def _read_part(part: _Embedded, p: _Parser, tables: _ProcessTables, source: str, depth: int = 0) -> str:
    """Reads one embedded trace into the parser or the process tables; returns its kind."""
    from itertools import chain

    lines = part.lines()
    kind, head = _part_kind(lines)
    if kind == "ftrace":
        legacy = next(t for _, t in head if t.strip()).rstrip().endswith(_LEGACY_NEWLINE)
        for lineno, line in chain(head, lines):
            line = line.rstrip("\r\n")
            if legacy:
                line = line.rstrip().removesuffix(_LEGACY_NEWLINE)
            p.line(lineno, line)
    elif kind == "process dump":
        tables.read_ps(chain(head, lines), p)
    elif kind == "atrace process dump":
        body = part.whole().lstrip()[len("ATRACE_PROCESS_DUMP"):]
        tables.read_atrace_dump(_json_of(body, source, part.where), source, part.where)
    elif kind == "json" and depth == 0:
        text = part.whole()
        if not any(f'"{k}"' in text for k in _JSON_TEXT_PARTS):
            return "json"  # clock syncs, the command line, Chrome's own events: nothing of the scheduler's
        doc = _json_of(text, source, part.where)
        del text
        kinds: list[str] = []
        if isinstance(doc, dict):
            for k in _JSON_TEXT_PARTS:
                v = doc.get(k)
                if isinstance(v, str):
                    sub = _Embedded(f"{part.where}: {k}", lambda v=v: _text_lines(v, 0, len(v), 1), lambda v=v: v)
                    kinds.append(f"{k}: {_read_part(sub, p, tables, source, depth + 1)}")
        return f"json ({', '.join(kinds) or 'nothing of the scheduler'})"
    return kind


def _json_of(text: str, source: str, where: str):
    try:
        return _input.parse_json(text, source)
    except InputError as e:
        raise InputError(source, where, e.expected) from None


def _finish_systrace(p: "_Parser", tables: "_ProcessTables", found: list, source: str) -> Trace:
    """The trace of a systrace page whose parts were read: ``found`` lists each part's
    (where, kind); a page with no ftrace part at all is an error naming what it had."""
    if not any("ftrace" in k for _, k in found):
        what = "; ".join(f"{k} ({w})" for w, k in found) or "none"
        raise InputError(source, "trace-data",
                         'a <script class="trace-data" type="application/text"> block (or trace2html\'s '
                         "viewer-data, or the old pages' linuxPerfData string) with ftrace text; "
                         f"this page has: {what}")
    tr = p.finish()
    tables.merge_into(tr)
    return tr


def _read_systrace_html(text: str, source: str, repair: bool = False) -> Trace:
    """A systrace / Catapult page: every ftrace block into one trace, with the process
    tables of its process dumps."""
    p = _Parser(Trace(source=source, format="systrace"), repair)
    tables = _ProcessTables()
    found: list[tuple[str, str]] = []
    for part in _html_parts(text, source):
        found.append((part.where, _read_part(part, p, tables, source)))
    return _finish_systrace(p, tables, found, source)


# --- files --------------------------------------------------------------------------------

def trace_cmd_available() -> Optional[str]:
    return shutil.which("trace-cmd")


def _trace_dat_text(path: Path, source: str) -> str:
    exe = trace_cmd_available()
    if exe is None:
        raise InputError(source, "format", "a trace format readable without tools: this is a binary "
                         "trace-cmd trace.dat, which needs Debian's trace-cmd to decode "
                         "(apt-get install trace-cmd), or convert it with `trace-cmd report -R`")
    try:
        proc = subprocess.run([exe, "report", "-R", "-i", str(path)], capture_output=True, text=True,
                              errors="replace", timeout=600)
    except subprocess.TimeoutExpired:
        raise InputError(source, "trace.dat", "a trace trace-cmd decodes within 10 minutes") from None
    if proc.returncode != 0 or not proc.stdout.strip():
        msg = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise InputError(source, "trace.dat", f"a file `trace-cmd report -R` can decode ({msg})")
    return proc.stdout


def load_trace(path: Union[str, os.PathLike], repair: bool = False) -> Trace:
    """Read a trace file of any supported format (detected from its content).

    What the kernel cannot write (time going backwards on a CPU, a task switched in on a
    CPU while it runs on another, a CPU beyond the header's count) is refused with its
    line or packet (:class:`InputError`); with ``repair`` the first two are repaired
    instead (hetsched.traces.check), counted in ``Trace.repaired``, and one
    :class:`TraceRepairWarning` says how many.

    The file is read forward a chunk at a time (a gzipped one decompressed as it goes) and
    its events go into columns as they are read (store.py): neither the file nor its
    decoded text is held whole. Only a page with no trace-data block (the 2012 pages'
    JavaScript string), a trace2html block and a trace.dat's decoded text are."""
    p = Path(path)
    source = str(p)
    src = _FileBytes(p, source)
    from hetsched.traces.perfetto import looks_like_perfetto, read_perfetto_stream

    name = p.name[:-3] if p.name.lower().endswith(".gz") else p.name
    head = src.head(4096)
    bad_utf8: list = []
    if looks_like_perfetto(head, name, src.length_at_least):
        tr = read_perfetto_stream(_Reader(src.chunks()).read, source, repair)
    elif head.startswith(TRACE_DAT_MAGIC):
        if src.gzipped:
            with tempfile.TemporaryDirectory(prefix="hetsched-trace-") as d:
                tmp = Path(d) / "trace.dat"
                with open(tmp, "wb") as fh:
                    for chunk in src.chunks():
                        fh.write(chunk)
                text = _trace_dat_text(tmp, source)
        else:
            text = _trace_dat_text(p, source)
        tr = parse_text(text.splitlines(), source, "trace.dat", repair=repair)
    else:
        if b"\x00" in head[:4096]:
            raise InputError(source, "format", "a trace (trace-cmd report / ftrace text, systrace HTML or "
                             "a trace-cmd trace.dat): this is an unknown binary file")
        texts = _decoded(_line_chunks(src.chunks()), bad_utf8)
        first = next(texts, "")
        low = first[:4096].lower()
        if "<html" in low or "<!doctype html" in low:
            tr = _read_systrace_stream(_split_lines(first, texts), source, repair)
            if tr is None:  # no block: the old pages' JavaScript string, read from the whole text
                bad_utf8.clear()
                text = "".join(_decoded(_line_chunks(src.chunks()), bad_utf8))
                tr = _read_systrace_html(text, source, repair)
                del text
        else:
            fmt = "trace-cmd report" if re.match(r"\s*version = \d+", first) else "ftrace"
            p_ = _Parser(Trace(source=source, format=fmt), repair)
            lineno = 1
            for chunk in _chain_one(first, texts):
                for line in chunk.splitlines():
                    p_.line(lineno, line)
                    lineno += 1
            tr = p_.finish()
            if tr.meta:
                tr.format = "hetsched-record"
    if not _has_switch(tr.events):
        what = (f"{tr.used} scheduler events, none sched_switch" if tr.used else
                f"none of its {tr.lines} lines has the form 'comm-pid [cpu] seconds: event: fields'"
                if tr.nr_skipped == tr.skipped["malformed line"] else
                f"{tr.lines} event lines, none sched_switch")
        if bad_utf8:
            offset, byte = bad_utf8[0]
            what += f"; byte 0x{byte:02x} at offset {offset} is not UTF-8"
        raise InputError(source, "events", f"a scheduler trace with sched_switch events ({what})")
    msg = _check.repair_message(source, tr.repaired)
    if msg:
        warnings.warn(msg, TraceRepairWarning, stacklevel=2)
    return tr


class TraceRepairWarning(UserWarning):
    """``load_trace(..., repair=True)`` repaired what the kernel cannot write."""


def _has_switch(events) -> bool:
    if isinstance(events, EventStore):
        return events.has(_st.SWITCH)
    return any(isinstance(e, Switch) for e in events)


def _chain_one(first: str, rest: Iterator[str]) -> Iterator[str]:
    if first:
        yield first
    yield from rest


class _FileBytes:
    """A trace file's bytes, read forward a chunk at a time from its start as often as
    asked (gunzipped when it is gzip); what read_bytes checks, checked on opening."""

    def __init__(self, path: Path, source: str) -> None:
        import stat

        self.path, self.source = path, source
        _input._no_nul(path, source, "file", "trace file")
        self.data: Optional[bytes] = None   # the bytes of a file that is not a regular one
        try:
            st = os.stat(path)
            if stat.S_ISDIR(st.st_mode):
                raise InputError(source, "file", "a trace file", got=_input.Shown("a directory"))
            if stat.S_ISREG(st.st_mode):
                if st.st_size > MAX_TRACE_BYTES:
                    raise InputError(source, "file", f"a trace file of at most {MAX_TRACE_BYTES // 2**20} MB",
                                     got=_input.Shown(f"{st.st_size} bytes"))
                self.size: Optional[int] = st.st_size
                with open(path, "rb") as fh:
                    magic = fh.read(2)
            else:  # a device or a pipe: read once, as a whole (it cannot be read again)
                self.data = _input.read_bytes(path, source, "trace file", MAX_TRACE_BYTES)
                self.size, magic = len(self.data), self.data[:2]
        except FileNotFoundError:
            raise InputError(source, "file", "an existing trace file", got=_input.Shown("no such file")) from None
        except OSError as e:
            raise InputError(source, "file", "a readable trace file",
                             got=_input.Shown(e.strerror or type(e).__name__)) from None
        self.gzipped = magic == b"\x1f\x8b"
        if self.gzipped:
            # measured before anything is read: a gzip bomb is refused at MAX_TRACE_BYTES
            # having kept nothing (then every pass reads at most that much)
            self.size = _gunzipped_size(self._raw(), source)

    def _raw(self) -> Iterator[bytes]:
        if self.data is not None:
            yield self.data
            return
        try:
            with open(self.path, "rb") as fh:
                while True:
                    chunk = fh.read(CHUNK_BYTES)
                    if not chunk:
                        return
                    yield chunk
        except OSError as e:
            raise InputError(self.source, "file", "a readable trace file",
                             got=_input.Shown(e.strerror or type(e).__name__)) from None

    def chunks(self) -> Iterator[bytes]:
        """The content from its start (decompressed), in chunks of about CHUNK_BYTES."""
        return _gunzip_chunks(self._raw(), self.source) if self.gzipped else self._raw()

    def head(self, n: int) -> bytes:
        """At least the first ``n`` bytes of the content (all of it if it is shorter)."""
        out = b""
        for chunk in self.chunks():
            out += chunk
            if len(out) >= n:
                break
        return out

    def length_at_least(self, n: int) -> bool:
        """Whether the content has at least ``n`` bytes."""
        if self.size is not None:
            return self.size >= n
        size = 0
        for chunk in self.chunks():
            size += len(chunk)
            if size >= n:
                return True
        return False


class _Reader:
    """read(n) over a stream of chunks: up to n bytes, fewer only at its end."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self.chunks = chunks
        self.buf = b""
        self.pos = 0

    def read(self, n: int) -> bytes:
        avail = len(self.buf) - self.pos
        if avail >= n:
            out = self.buf[self.pos:self.pos + n]
            self.pos += n
            return out
        parts = [self.buf[self.pos:]]
        for chunk in self.chunks:
            parts.append(chunk)
            avail += len(chunk)
            if avail >= n:
                break
        data = b"".join(parts)
        self.buf, self.pos = data, min(n, len(data))
        return data[:n]


def _line_chunks(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """The same bytes re-cut to end at a newline (but the last): UTF-8 never has a
    newline byte inside a character, so each decodes as it would in the whole. A line
    that spans chunks is gathered in pieces and joined once (a page's base64 block is one
    line of tens of MB; added to chunk by chunk it was copied again at every chunk)."""
    rest: list[bytes] = []
    for chunk in chunks:
        nl = chunk.rfind(b"\n")
        if nl < 0:
            rest.append(chunk)
            continue
        rest.append(chunk[:nl + 1])
        yield b"".join(rest) if len(rest) > 1 else rest[0]
        rest = [chunk[nl + 1:]] if nl + 1 < len(chunk) else []
    if rest:
        yield b"".join(rest)


def _decoded(chunks: Iterator[bytes], bad: list) -> Iterator[str]:
    """Each chunk as UTF-8 text, bytes that are not read as U+FFFD; the first such byte's
    (offset, value) appended to ``bad``."""
    offset = 0
    for chunk in chunks:
        try:
            text = chunk.decode("utf-8")
        except UnicodeDecodeError as e:
            if not bad:
                bad.append((offset + e.start, chunk[e.start]))
            text = chunk.decode("utf-8", errors="replace")
        offset += len(chunk)
        yield text


def _split_lines(first: str, rest: Iterator[str]) -> Iterator[str]:
    """The text of ``first`` and then ``rest`` (chunks that end at a newline, but the
    last) as ``text.split("\n")`` would give it, one line at a time."""
    chunk = first
    for nxt in rest:
        pieces = chunk.split("\n")
        pieces.pop()  # "" after the chunk's last newline
        yield from pieces
        chunk = nxt
    yield from chunk.split("\n")


def _gunzip_chunks(raw: Iterable[bytes], source: str, field: str = "gzip") -> Iterator[bytes]:
    """A gzip stream's content, decompressed at most CHUNK_BYTES at a time and refused once
    it passes MAX_TRACE_BYTES (a small file may expand to any size); one member after the
    other, zero padding after a member allowed, as gzip(1) reads them. Each chunk is
    handed on, none kept: a caller that keeps them checks the size first
    (:func:`_gunzipped_size`)."""
    import zlib

    size = 0
    pending = b""
    raw = iter(raw)
    at_end = False

    def more() -> bytes:
        nonlocal at_end
        for chunk in raw:
            if chunk:
                return chunk
        at_end = True
        return b""

    pending = more()
    while pending:
        d = zlib.decompressobj(wbits=31)  # a gzip header and trailer
        data = pending
        while True:
            try:
                out = d.decompress(data, CHUNK_BYTES)
            except zlib.error as e:
                raise InputError(source, field, f"a complete gzip stream ({e})") from None
            size += len(out)
            if size > MAX_TRACE_BYTES:
                raise InputError(source, field, f"a trace of at most {MAX_TRACE_BYTES >> 20} MB once "
                                 "decompressed", got=_input.Shown(f"more than {MAX_TRACE_BYTES} bytes "
                                                                  "(decompression stopped there)"))
            if out:
                yield out
            if d.eof:
                break
            data = d.unconsumed_tail
            if not data:
                data = more()
                if not data:
                    raise InputError(source, field, "a complete gzip stream (it ends early)")
        pending = d.unused_data.lstrip(b"\0")
        while not pending and not at_end:
            pending = more().lstrip(b"\0")


def _gunzipped_size(raw: Iterable[bytes], source: str, field: str = "gzip") -> int:
    """The size a gzip stream expands to, measured by decompressing it a chunk at a time
    and keeping nothing; refused past MAX_TRACE_BYTES. Every reader measures first, so
    that a gzip bomb (a few MB expanding to gigabytes) costs the time of decompressing
    MAX_TRACE_BYTES (about 2 s) and no memory, before anything of it is kept."""
    return sum(len(chunk) for chunk in _gunzip_chunks(raw, source, field))


def _gunzip(data: bytes, source: str, field: str = "gzip") -> bytes:
    """A gzip stream's content whole, once its size is known to be at most
    MAX_TRACE_BYTES."""
    _gunzipped_size([data], source, field)
    return b"".join(_gunzip_chunks([data], source, field))


def iter_tasks(trace: Trace) -> Iterator[tuple[int, str]]:
    """(pid, comm) of every task the trace names, first name seen."""
    seen: dict[int, str] = {}
    for e in trace.events:
        if isinstance(e, Switch):
            seen.setdefault(e.prev_pid, e.prev_comm)
            seen.setdefault(e.next_pid, e.next_comm)
        elif isinstance(e, Wakeup):
            seen.setdefault(e.pid, e.comm)
    yield from seen.items()
