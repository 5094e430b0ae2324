"""Read a Perfetto protobuf trace (``.perfetto-trace``, ``.pftrace``, ``.pb``; gzipped or
not) into the reader's typed events (:mod:`hetsched.traces.parse`).

What Android's ``perfetto`` / ``record_android_trace`` write on a phone, and what
``hetsched run --trace`` writes: a ``Trace`` message, that is a sequence of
``TracePacket``s, whose scheduler data are per-CPU ``FtraceEventBundle``s. A bundle holds
ordinary ``FtraceEvent``s (each with its timestamp and ``pid``, the task current on the
CPU when the event was written) and, since Android 10, the ``compact_sched`` encoding of
sched_switch and sched_waking: one packed array per field, timestamps as deltas from the
one before (the first from zero), comms as indices into the bundle's intern table. A
compact switch does not carry the task switched out: it is the task the CPU's previous
switch switched in, so the reader walks each CPU's events in time order and fills it in
(the first switch of a CPU whose previous task the trace never showed gets ``prev_pid``
-1). A compact waking does not carry the waker either: it is the task current on the
emitting CPU, and its ``common_flags`` say whether the kernel wrote it in interrupt
context (where they are recorded).

``prev_state`` is the kernel's raw integer, read by the kernel version the trace's
SystemInfo names (include/trace/events/sched.h, ``__trace_sched_switch_state``): from
v4.14 a preempted task is ``TASK_REPORT_MAX`` (0x100) and a blocked one ``1 << (index-1)``
of task_state_index() (S 1, D 2, T 4, t 8, X 16, Z 32, P 64, I 128); before, the raw
``p->state`` with ``TASK_STATE_MAX`` (1024, 2048 or 4096 by version) for preempted.

Decoding uses Perfetto's own protos (``perfetto.protos.perfetto.trace.perfetto_trace_pb2``,
from the ``perfetto`` package). Only the file's framing is read here: a serialized
``Trace`` is its packets one after the other, each as field 1 (tag byte 0x0A), a varint
length and the packet's bytes, so the reader can decode one packet at a time rather than
build the whole trace as one message.

Thread and process names and tgids come from ProcessTree packets (``threads``: tid, tgid,
name; ``processes``: pid, cmdline), task_newtask and task_rename events.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import Iterator, Optional

from hetsched.errors import InputError
from hetsched.traces.parse import (IDLE_EXIT, KHZ_MAX, NR_CPUS_MAX, PID_MAX, PRIO_MAX, Exit, Fork, Freq, Idle,
                                   Switch, Trace, Wakeup, parse_state)

__all__ = ["PERFETTO_SUFFIXES", "looks_like_perfetto", "read_perfetto", "prev_state_letter"]

PERFETTO_SUFFIXES = (".perfetto-trace", ".pftrace", ".pb", ".perfetto")

#: Trace.packet is field 1, length-delimited: its tag byte
_PACKET_TAG = 0x0A

# kernel/trace/trace.h enum trace_flag_type: the event was written in hard irq, soft irq
# or NMI context (so not by the task the CPU was running)
_TRACE_FLAG_HARDIRQ, _TRACE_FLAG_SOFTIRQ, _TRACE_FLAG_NMI = 0x08, 0x10, 0x40
_IRQ_FLAGS = _TRACE_FLAG_HARDIRQ | _TRACE_FLAG_SOFTIRQ | _TRACE_FLAG_NMI

# task_state_index() order from v4.14 (TASK_REPORT bits, then TASK_REPORT_IDLE), and what a
# switch-out in each means for the reader: R runnable, S/D blocked, T stopped, X exiting
_STATE_BITS_4_14 = ((1, "S"), (2, "D"), (4, "T"), (8, "T"), (16, "X"), (32, "X"), (64, "P"), (128, "I"))
_TASK_REPORT_MAX_4_14 = 0x100


def _kernel_version(release: str) -> Optional[tuple[int, int]]:
    m = re.match(r"(\d+)\.(\d+)", release or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def prev_state_letter(raw: int, kernel: Optional[tuple[int, int]]) -> Optional[str]:
    """sched_switch's raw ``prev_state`` as the reader's letter (R, S, D, T, X, P, I), for
    a trace of kernel ``kernel`` (major, minor; None when the trace does not say, read as
    v4.14 or later: every kernel Perfetto runs on since Android 10 is). None for a value
    no such kernel writes."""
    if raw < 0:
        return None
    if kernel is None or kernel >= (4, 14):
        if raw == 0:
            return "R"  # switched out still TASK_RUNNING (a yield, or a wakeup that raced the switch)
        if raw & _TASK_REPORT_MAX_4_14:
            return "R"  # preempted
        for bit, letter in _STATE_BITS_4_14:
            if raw & bit:
                return letter
        return None
    # before v4.14: p->state itself, TASK_STATE_MAX or'ed in when preempted
    return parse_state(str(raw))


def looks_like_perfetto(data: bytes, name: str) -> bool:
    """A Perfetto trace by its name, or by its first packet's framing in a binary file."""
    if name.lower().endswith(PERFETTO_SUFFIXES):
        return True
    if not data or data[0] != _PACKET_TAG or b"\x00" not in data[:4096]:
        return False
    n, pos = _varint(data, 1)
    return n is not None and pos + n <= len(data)


def _varint(data: bytes, pos: int) -> tuple[Optional[int], int]:
    """A base-128 varint at ``pos`` (at most 10 bytes), and the position after it."""
    value = shift = 0
    for i in range(pos, min(pos + 10, len(data))):
        b = data[i]
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, i + 1
        shift += 7
    return None, pos


def _packets(data: bytes, source: str) -> Iterator[tuple[int, memoryview]]:
    """(offset, bytes) of each TracePacket of a serialized Trace."""
    view = memoryview(data)
    pos, end = 0, len(data)
    while pos < end:
        tag = data[pos]
        if tag != _PACKET_TAG:
            raise InputError(source, f"byte {pos}", "a Perfetto trace: a TracePacket (field 1, tag 0x0a) at each "
                             f"packet boundary", got=f"tag 0x{tag:02x}")
        n, body = _varint(data, pos + 1)
        if n is None:
            raise InputError(source, f"byte {pos}", "a Perfetto trace: a packet length (varint) after the tag "
                             "(the file ends inside it: truncated?)")
        if body + n > end:
            raise InputError(source, f"byte {pos}", f"a Perfetto trace whose packets are whole: this one says "
                             f"{n} bytes, {end - body} remain (truncated?)")
        yield pos, view[body:body + n]
        pos = body + n


class _Reader:
    """Collects a trace's events per CPU, then resolves what the compact encoding leaves
    implied (the task switched out, the waker) walking each CPU in time order."""

    def __init__(self, source: str):
        from perfetto.protos.perfetto.trace import perfetto_trace_pb2

        self.pb = perfetto_trace_pb2
        self.t = Trace(source=source, format="perfetto")
        # per CPU: (ts, order, kind, fields...) in the order the file gives them
        self.cpu_events: dict[int, list] = defaultdict(list)
        self.kernel: Optional[tuple[int, int]] = None
        self.release = ""
        self.lost_bundles: Counter = Counter()
        self.nonboot_clock: Counter = Counter()
        self.order = 0
        self.max_cpu = -1

    # -- packets -----------------------------------------------------------------------------
    def packet(self, offset: int, raw: memoryview) -> None:
        pkt = self.pb.TracePacket()
        try:
            pkt.ParseFromString(raw)
        except Exception as e:  # protobuf's DecodeError, or a message nested past its limit
            raise InputError(self.t.source, f"byte {offset}", f"a TracePacket Perfetto's protos decode ({e})") \
                from None
        which = pkt.WhichOneof("data")
        if which == "ftrace_events":
            self.bundle(pkt.ftrace_events)
        elif which == "process_tree":
            self.process_tree(pkt.process_tree)
        elif which == "system_info":
            self.release = pkt.system_info.utsname.release
            self.kernel = _kernel_version(self.release)

    def process_tree(self, tree) -> None:
        for p in tree.processes:
            if 0 < p.pid <= PID_MAX:
                self.t.tgids[p.pid] = p.pid
                if p.cmdline:
                    # the process's name as ps shows it: argv[0] without its directory
                    self.t.process_names[p.pid] = p.cmdline[0].rsplit("/", 1)[-1]
        for th in tree.threads:
            if 0 < th.tid <= PID_MAX:
                if th.tgid:
                    self.t.tgids[th.tid] = th.tgid
                if th.name:
                    self.t.thread_names[th.tid] = th.name

    def bundle(self, b) -> None:
        if not b.HasField("cpu"):
            self.t.skipped["ftrace bundle without a cpu"] += 1
            return
        cpu = b.cpu
        if cpu >= NR_CPUS_MAX:
            raise InputError(self.t.source, "ftrace_events.cpu", f"a CPU below {NR_CPUS_MAX}", got=cpu)
        if b.lost_events:
            self.lost_bundles[cpu] += 1
        if b.ftrace_clock not in (0,):  # FTRACE_CLOCK_UNSPECIFIED: the boot clock, as the rest of the trace
            self.nonboot_clock[self.pb.FtraceClock.Name(b.ftrace_clock)] += 1
        offset = 0
        if b.ftrace_clock and b.HasField("ftrace_timestamp") and b.HasField("boot_timestamp"):
            # a bundle read under another clock carries one reading of both clocks
            offset = b.boot_timestamp - b.ftrace_timestamp
        self.max_cpu = max(self.max_cpu, cpu)
        out = self.cpu_events[cpu]
        if b.HasField("compact_sched"):
            self.compact(b.compact_sched, cpu, offset, out)
        for ev in b.event:
            self.event(ev, cpu, offset, out)

    def compact(self, cs, cpu: int, offset: int, out: list) -> None:
        src = self.t.source
        table = list(cs.intern_table)
        n = len(cs.switch_timestamp)
        if not (len(cs.switch_prev_state) == len(cs.switch_next_pid) == len(cs.switch_next_prio)
                == len(cs.switch_next_comm_index) == n):
            raise InputError(src, "compact_sched.switch_*", "arrays of one length (one entry per sched_switch)")
        for i, (ts, order, comm) in enumerate(self._walk(cs.switch_timestamp, cs.switch_next_comm_index, table,
                                                         "switch_next_comm_index")):
            out.append((ts + offset, order, "cswitch", cs.switch_prev_state[i], cs.switch_next_pid[i],
                        cs.switch_next_prio[i], comm))
        n = len(cs.waking_timestamp)
        if not (len(cs.waking_pid) == len(cs.waking_target_cpu) == len(cs.waking_prio) == len(cs.waking_comm_index)
                == n) or len(cs.waking_common_flags) not in (0, n):
            raise InputError(src, "compact_sched.waking_*", "arrays of one length (one entry per sched_waking)")
        flags = cs.waking_common_flags
        for i, (ts, order, comm) in enumerate(self._walk(cs.waking_timestamp, cs.waking_comm_index, table,
                                                         "waking_comm_index")):
            out.append((ts + offset, order, "cwaking", cs.waking_pid[i], cs.waking_prio[i],
                        cs.waking_target_cpu[i], comm, bool(flags[i] & _IRQ_FLAGS) if flags else None))

    def _walk(self, stamps, comm_indices, table: list, field: str) -> Iterator[tuple[int, int, str]]:
        """(timestamp, file order, comm) of a compact array's events: each timestamp a
        delta from the one before (the first from zero), each comm an intern-table index."""
        ts = 0
        for delta, comm in zip(stamps, comm_indices):
            ts += delta
            if comm >= len(table):
                raise InputError(self.t.source, f"compact_sched.{field}",
                                 f"an index into the bundle's {len(table)}-entry intern table", got=comm)
            self.order += 1
            self.t.lines += 1
            yield ts, self.order, table[comm]

    def event(self, ev, cpu: int, offset: int, out: list) -> None:
        which = ev.WhichOneof("event")
        if which is None:
            self.t.skipped["ftrace event without a payload"] += 1
            return
        self.t.lines += 1
        if which not in _USED:
            self.t.skipped[f"event {which}"] += 1
            return
        self.order += 1
        irq = bool(ev.common_flags & _IRQ_FLAGS) if ev.HasField("common_flags") else None
        out.append((ev.timestamp + offset, self.order, which, ev.pid, irq, getattr(ev, which)))

    # -- per CPU, in time order ----------------------------------------------------------------
    def resolve(self) -> Trace:
        t = self.t
        events: list = []
        self.first_switch_unknown = 0
        for cpu, recs in self.cpu_events.items():
            recs.sort(key=lambda r: (r[0], r[1]))
            cur_pid: Optional[int] = None     # the task current on this CPU, once known
            cur_comm, cur_prio = "", 120
            for r in recs:
                ts, kind = r[0], r[2]
                if kind == "cswitch":
                    _, _, _, raw_state, npid, nprio, ncomm = r
                    if cur_pid is None:
                        self.first_switch_unknown += 1
                        prev_pid, prev_comm, prev_prio, state = -1, "", 120, "R"
                    else:
                        prev_pid, prev_comm, prev_prio = cur_pid, cur_comm, cur_prio
                        state = prev_state_letter(raw_state, self.kernel)
                    if state is None or not 0 <= npid <= PID_MAX:
                        self.bad("malformed sched_switch (compact)")
                        continue
                    events.append(Switch(ts, cpu, prev_comm, prev_pid, prev_prio, state, ncomm, npid,
                                         _prio(nprio)))
                    cur_pid, cur_comm, cur_prio = npid, ncomm, _prio(nprio)
                elif kind == "cwaking":
                    _, _, _, pid, prio, target, comm, irq = r
                    if not 0 < pid <= PID_MAX or not 0 <= target < NR_CPUS_MAX:
                        self.bad("malformed sched_waking (compact)")
                        continue
                    waker = cur_pid or 0  # 0 until the CPU's task is known
                    events.append(Wakeup(ts, cpu, "waking", waker, cur_comm if waker else "", bool(irq), comm, pid,
                                         _prio(prio), target))
                else:
                    _, _, _, common_pid, irq, f = r
                    if cur_pid is None and common_pid is not None and kind != "sched_switch":
                        # an ordinary event names the task current on its CPU
                        cur_pid = common_pid
                        cur_comm = t.thread_names.get(common_pid, "")
                    e = self.ordinary(kind, ts, cpu, common_pid, irq, f, cur_comm)
                    if e is None:
                        continue
                    events.append(e)
                    if isinstance(e, Switch):
                        cur_pid, cur_comm, cur_prio = e.next_pid, e.next_comm, e.next_prio
        events.sort(key=lambda e: e.ts)  # stable: each CPU's order within a timestamp
        t.events = events
        t.used = len(events)
        t.nr_cpus = self.max_cpu + 1
        t.meta["kernel_release"] = self.release
        if self.lost_bundles:
            t.meta["ftrace_lost_events"] = dict(sorted(self.lost_bundles.items()))
        if self.nonboot_clock:
            t.meta["ftrace_clock"] = dict(self.nonboot_clock)
        if self.first_switch_unknown:
            t.meta["switches_with_unknown_prev"] = self.first_switch_unknown
        return t

    def bad(self, reason: str) -> None:
        self.t.skipped[reason] += 1

    def ordinary(self, kind: str, ts: int, cpu: int, common_pid: int, irq, f, cur_comm: str):
        names = self.t.thread_names
        if kind == "sched_switch":
            state = prev_state_letter(f.prev_state, self.kernel)
            if state is None or not (-PID_MAX <= f.prev_pid <= PID_MAX and 0 <= f.next_pid <= PID_MAX):
                self.bad("malformed sched_switch")
                return None
            return Switch(ts, cpu, f.prev_comm, f.prev_pid, _prio(f.prev_prio), state, f.next_comm, f.next_pid,
                          _prio(f.next_prio))
        if kind in ("sched_waking", "sched_wakeup", "sched_wakeup_new"):
            if not 0 < f.pid <= PID_MAX or not 0 <= f.target_cpu < NR_CPUS_MAX:
                self.bad(f"malformed {kind}")
                return None
            success = f.success != 0 if f.HasField("success") else True
            return Wakeup(ts, cpu, kind[6:], common_pid, names.get(common_pid, cur_comm) if common_pid else "",
                          bool(irq), f.comm, f.pid, _prio(f.prio), f.target_cpu, success)
        if kind == "sched_process_fork":
            return Fork(ts, cpu, f.parent_pid, f.parent_comm, f.child_pid, f.child_comm)
        if kind == "task_newtask":
            # the new task's pid and comm, written by the task that cloned it
            if f.pid > 0 and f.comm:
                names.setdefault(f.pid, f.comm)
            return Fork(ts, cpu, common_pid, names.get(common_pid, ""), f.pid, f.comm)
        if kind == "task_rename":
            if f.pid > 0 and f.newcomm:
                names[f.pid] = f.newcomm
            return None
        if kind == "sched_process_exit":
            return Exit(ts, cpu, f.pid, f.comm)
        if kind == "cpu_frequency":
            if not 0 <= f.cpu_id < NR_CPUS_MAX or not 0 <= f.state <= KHZ_MAX:
                self.bad(f"malformed {kind}")
                return None
            return Freq(ts, f.cpu_id, f.state)
        if kind == "cpu_idle":
            if not 0 <= f.cpu_id < NR_CPUS_MAX:
                self.bad(f"malformed {kind}")
                return None
            return Idle(ts, f.cpu_id, IDLE_EXIT if f.state == KHZ_MAX else f.state)
        return None


_USED = frozenset(("sched_switch", "sched_waking", "sched_wakeup", "sched_wakeup_new", "sched_process_fork",
                   "sched_process_exit", "task_newtask", "task_rename", "cpu_frequency", "cpu_idle"))


def _prio(p: int) -> int:
    return p if -PRIO_MAX <= p <= PRIO_MAX else 120


def read_perfetto(data: bytes, source: str) -> Trace:
    """The scheduler events of a serialized Perfetto ``Trace`` (already decompressed)."""
    try:
        r = _Reader(source)
    except ImportError:
        raise InputError(source, "format", "Perfetto's Python protos to read a Perfetto trace: "
                         "pip install perfetto") from None
    for offset, raw in _packets(data, source):
        r.packet(offset, raw)
    return r.resolve()
