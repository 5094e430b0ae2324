"""Read real scheduler traces into a list of typed events.

Formats (../shared/reference/workloads.md §2, ../shared/realdata/traces/SOURCES.md):

* ``trace-cmd report`` text (``version = 6`` / ``cpus=N`` header, integer ``prev_state``,
  no ``==>``), and its plugin form (``prev:pid [prio] S ==> next:pid [prio]``);
* raw ftrace text (``/sys/kernel/tracing/trace``: optional ``(tgid)`` column, a flags
  field such as ``d.h.``, ``prev_state=S|R|R+|D|t|x`` and `` ==> ``);
* systrace / Catapult HTML (the ftrace text inside ``<script class="trace-data">``);
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
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Optional, Union

from hetsched import _input
from hetsched.errors import InputError

__all__ = ["Switch", "Wakeup", "Fork", "Exit", "Exec", "Freq", "Idle", "Trace", "load_trace", "parse_text",
           "parse_state", "TRACE_DAT_MAGIC", "trace_cmd_available"]

TRACE_DAT_MAGIC = b"\x17\x08\x44tracing"

#: A trace is read whole and becomes Python objects of about twice its size; a recording
#: of a few minutes is tens of MB. 1 GiB (also the most a gzipped one may expand to) keeps
#: a wrong path (a disk image, /dev/zero) from exhausting memory.
MAX_TRACE_BYTES = 2**30
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

Event = Union[Switch, Wakeup, Fork, Exit, Exec, Freq, Idle]


@dataclass
class Trace:
    source: str
    format: str                       # "trace-cmd report", "ftrace", "systrace", "trace.dat", "hetsched-record"
    events: list = field(default_factory=list)
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
_DEVLIB_FREQ = re.compile(r"cpu_frequency_devlib:\s+state=(?P<s>\d+)\s+cpu_id=(?P<c>\d+)\s*$")

#: events read here; every other event name is skipped and counted by name
USED_EVENTS = ("sched_switch", "sched_waking", "sched_wakeup", "sched_wakeup_new", "sched_process_fork",
               "sched_process_exit", "sched_process_exec", "cpu_frequency", "cpu_idle")

# kernel task-state letters (task_state_to_char / TASK_REPORT) and what a switch-out means
_LETTERS = {"R": "R", "S": "S", "D": "D", "T": "T", "t": "T", "X": "X", "Z": "X", "x": "X",
            "I": "I", "P": "P", "W": "W", "K": "D", "N": "S"}


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
    def __init__(self, trace: Trace):
        self.t = trace
        self.max_cpu = -1

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
                self.t.nr_cpus = int(m.group(1))
            return True
        if s.startswith("version = ") or s.startswith("CPU ") and s.endswith("is empty"):
            return True
        m = re.fullmatch(r"cpus=(\d+)", s)
        if m:
            if _num(m.group(1), NR_CPUS_MAX) is not None:
                self.t.nr_cpus = int(m.group(1))
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
        tgid = m.group("tgid")
        if tgid is not None and tgid.isdigit() and pid:
            self.t.tgids.setdefault(pid, int(tgid))
        self.max_cpu = max(self.max_cpu, cpu)
        self.t.used += 1
        self.t.events.append(out)

    def event(self, lineno: int, m: re.Match, ts: int, cpu: int, pid: int) -> Optional[Event]:
        """The event of a line whose prefix parsed; None if skipped (counted), _Bad if a
        number of its fields is out of range."""
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
            out = Switch(ts, cpu, f.group("pc"), _n(f.group("pp"), PID_MAX, -PID_MAX),
                         _n(f.group("ppr"), PRIO_MAX, -PRIO_MAX), state, f.group("nc"), _n(f.group("np"), PID_MAX),
                         _n(f.group("npr"), PRIO_MAX, -PRIO_MAX))
        elif ev in ("sched_waking", "sched_wakeup", "sched_wakeup_new"):
            f = _WAKE.match(body) or _WAKE_PLUGIN.match(body)
            if f is None:
                self.bad(lineno, f"malformed {ev}")
                return None
            out = Wakeup(ts, cpu, ev[6:], pid, comm, _irq_flags(m.group("flags")), f.group("c"),
                         _n(f.group("p"), PID_MAX), _n(f.group("pr"), PRIO_MAX, -PRIO_MAX),
                         _n(f.group("t"), NR_CPUS_MAX - 1) if f.group("t") else None,
                         f.group("s") != "0")
        elif ev == "sched_process_fork":
            f = _FORK.match(body)
            if f is None:
                self.bad(lineno, f"malformed {ev}")
                return None
            out = Fork(ts, cpu, _n(f.group("p"), PID_MAX), f.group("c"), _n(f.group("cp"), PID_MAX), f.group("cc"))
        elif ev == "sched_process_exit":
            f = _EXIT.match(body)
            if f is None:
                self.bad(lineno, f"malformed {ev}")
                return None
            out = Exit(ts, cpu, _n(f.group("p"), PID_MAX), f.group("c"))
        elif ev == "sched_process_exec":
            f = _EXEC.match(body)
            if f is None:
                self.bad(lineno, f"malformed {ev}")
                return None
            out = Exec(ts, cpu, _n(f.group("p"), PID_MAX), os.path.basename(f.group("f"))[:15])
        elif ev == "cpu_frequency":
            f = _FREQ.match(body)
            if f is None:
                self.bad(lineno, f"malformed {ev}")
                return None
            out = Freq(ts, _n(f.group("c"), NR_CPUS_MAX - 1), _n(f.group("s"), KHZ_MAX))
        elif ev == "cpu_idle":
            f = _FREQ.match(body)  # the same "state=N cpu_id=N" fields
            if f is None:
                self.bad(lineno, f"malformed {ev}")
                return None
            state = _n(f.group("s"), KHZ_MAX)
            out = Idle(ts, _n(f.group("c"), NR_CPUS_MAX - 1), IDLE_EXIT if state == KHZ_MAX else state)
        elif ev == "print" and "cpu_frequency_devlib" in body:
            f = _DEVLIB_FREQ.search(body)
            if f is None:
                self.bad(lineno, "malformed cpu_frequency_devlib")
                return None
            out = Freq(ts, _n(f.group("c"), NR_CPUS_MAX - 1), _n(f.group("s"), KHZ_MAX))
        else:
            self.t.skipped[f"event {ev}"] += 1
            return None
        return out

    def finish(self) -> Trace:
        self.t.events.sort(key=lambda e: e.ts)  # stable: file order within a timestamp
        if self.t.nr_cpus <= self.max_cpu:
            self.t.nr_cpus = self.max_cpu + 1
        return self.t


def parse_text(lines: Iterable[str], source: str = "<text>", fmt: str = "ftrace",
               first_lineno: int = 1) -> Trace:
    """Parse trace text lines (any of the text formats); never raises on a bad line."""
    p = _Parser(Trace(source=source, format=fmt))
    for i, line in enumerate(lines, first_lineno):
        p.line(i, line.rstrip("\r\n"))
    return p.finish()


# --- files --------------------------------------------------------------------------------

_SCRIPT = re.compile(r'<script class="trace-data" type="application/text">(.*?)</script>', re.S)


def _systrace_blocks(text: str, source: str) -> tuple[str, int]:
    """The ftrace text block of a systrace HTML page and the file line it starts on."""
    for m in _SCRIPT.finditer(text):
        block = m.group(1)
        if block.lstrip().startswith("{"):
            continue  # the JSON metadata block
        return block, text.count("\n", 0, m.start(1)) + 1
    raise InputError(source, "trace-data",
                     'a <script class="trace-data" type="application/text"> block with ftrace text '
                     "(this HTML page has none)")


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


def load_trace(path: Union[str, os.PathLike]) -> Trace:
    """Read a trace file of any supported format (detected from its content)."""
    p = Path(path)
    source = str(p)
    data = _input.read_bytes(p, source, "trace file", MAX_TRACE_BYTES)
    if data[:2] == b"\x1f\x8b":
        data = _gunzip(data, source)
    from hetsched.traces.perfetto import looks_like_perfetto, read_perfetto

    name = p.name[:-3] if p.name.lower().endswith(".gz") else p.name
    not_utf8: Optional[int] = None
    if looks_like_perfetto(data, name):
        tr = read_perfetto(data, source)
    elif data.startswith(TRACE_DAT_MAGIC):
        if p.suffix == ".gz":
            with tempfile.TemporaryDirectory(prefix="hetsched-trace-") as d:
                tmp = Path(d) / "trace.dat"
                tmp.write_bytes(data)
                text = _trace_dat_text(tmp, source)
        else:
            text = _trace_dat_text(p, source)
        tr = parse_text(text.splitlines(), source, "trace.dat")
    else:
        if b"\x00" in data[:4096]:
            raise InputError(source, "format", "a trace (trace-cmd report / ftrace text, systrace HTML or "
                             "a trace-cmd trace.dat): this is an unknown binary file")
        try:
            text, not_utf8 = data.decode("utf-8"), None
        except UnicodeDecodeError as e:  # kept (see the module's docstring), and named if nothing parses
            text, not_utf8 = data.decode("utf-8", errors="replace"), e.start
        head = text[:4096].lower()
        if "<html" in head or "<!doctype html" in head:
            block, first = _systrace_blocks(text, source)
            tr = parse_text(block.splitlines(), source, "systrace", first)
        else:
            fmt = "trace-cmd report" if re.match(r"\s*version = \d+", text) else "ftrace"
            tr = parse_text(text.splitlines(), source, fmt)
            if tr.meta:
                tr.format = "hetsched-record"
    if not any(isinstance(e, Switch) for e in tr.events):
        what = (f"{tr.used} scheduler events, none sched_switch" if tr.used else
                f"none of its {tr.lines} lines has the form 'comm-pid [cpu] seconds: event: fields'"
                if tr.nr_skipped == tr.skipped["malformed line"] else
                f"{tr.lines} event lines, none sched_switch")
        if not_utf8 is not None:
            what += f"; byte 0x{data[not_utf8]:02x} at offset {not_utf8} is not UTF-8"
        raise InputError(source, "events", f"a scheduler trace with sched_switch events ({what})")
    return tr


def _gunzip(data: bytes, source: str) -> bytes:
    """A gzip stream's content, at most MAX_TRACE_BYTES of it (a small file may expand to
    any size)."""
    import zlib

    parts: list[bytes] = []
    size, rest = 0, data
    while rest:  # one member after the other, as gzip.decompress reads them
        d = zlib.decompressobj(wbits=31)  # a gzip header and trailer
        try:
            out = d.decompress(rest, MAX_TRACE_BYTES + 1 - size)
        except zlib.error as e:
            raise InputError(source, "gzip", f"a complete gzip stream ({e})") from None
        size += len(out)
        parts.append(out)
        if size > MAX_TRACE_BYTES or d.unconsumed_tail:
            raise InputError(source, "gzip", f"a trace of at most {MAX_TRACE_BYTES >> 20} MB once decompressed",
                             got=_input.Shown(f"more than {MAX_TRACE_BYTES} bytes"))
        if not d.eof:
            raise InputError(source, "gzip", "a complete gzip stream (it ends early)")
        rest = d.unused_data.lstrip(b"\0")  # gzip(1) allows zero padding after a member
    return b"".join(parts)


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
