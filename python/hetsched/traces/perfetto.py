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
from array import array
from collections import Counter
from itertools import accumulate
from typing import Callable, Iterator, Optional

import numpy as np

from hetsched import _input
from hetsched.errors import InputError
from hetsched.traces import check as _check
from hetsched.traces import store as _st
from hetsched.traces.parse import IDLE_EXIT, KHZ_MAX, NR_CPUS_MAX, PID_MAX, PRIO_MAX, TF_ONE_WAY, Trace, parse_state

__all__ = ["PERFETTO_SUFFIXES", "looks_like_perfetto", "read_perfetto", "read_perfetto_stream",
           "prev_state_letter"]

PERFETTO_SUFFIXES = (".perfetto-trace", ".pftrace", ".pb", ".perfetto")

#: Trace.packet is field 1, length-delimited: its tag byte
_PACKET_TAG = 0x0A
#: the longest message protozero writes (include/perfetto/protozero/proto_utils.h,
#: kMaxMessageLength: a length of four 7-bit varint bytes, 2^28 - 1 = 256 MiB): a TracePacket
#: said to be longer is refused before it is read, not gathered in memory first
MAX_PACKET_BYTES = (1 << 28) - 1

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


def looks_like_perfetto(data: bytes, name: str, length_at_least: Optional[Callable[[int], bool]] = None) -> bool:
    """A Perfetto trace by its name, or by its first packet's framing in a binary file
    (``data`` its first bytes, at least 4096 of them if it has them; ``length_at_least``
    says whether the whole has at least so many bytes, when ``data`` is not the whole)."""
    if name.lower().endswith(PERFETTO_SUFFIXES):
        return True
    if not data or data[0] != _PACKET_TAG or b"\x00" not in data[:4096]:
        return False
    n, pos = _varint(data, 1)
    if n is None:
        return False
    return pos + n <= len(data) or (length_at_least is not None and length_at_least(pos + n))


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


def _packets_stream(read: Callable[[int], bytes], source: str) -> Iterator[tuple[int, bytes]]:
    """(offset, bytes) of each TracePacket of a serialized Trace read from ``read`` (up to
    n bytes a call, fewer only at the end), one packet at a time."""
    pos = 0
    while True:
        tag = read(1)
        if not tag:
            return
        if tag[0] != _PACKET_TAG:
            raise InputError(source, f"byte {pos}", "a Perfetto trace: a TracePacket (field 1, tag 0x0a) at each "
                             f"packet boundary", got=f"tag 0x{tag[0]:02x}")
        n = shift = 0
        size = 0
        for size in range(1, 11):
            b = read(1)
            if not b:
                size = 11
                break
            n |= (b[0] & 0x7F) << shift
            if not b[0] & 0x80:
                break
            shift += 7
        else:
            size = 11
        if size > 10:
            raise InputError(source, f"byte {pos}", "a Perfetto trace: a packet length (varint) after the tag "
                             "(the file ends inside it: truncated?)")
        if n > MAX_PACKET_BYTES:
            raise InputError(source, f"byte {pos}", f"a Perfetto trace: a packet of at most {MAX_PACKET_BYTES} "
                             "bytes (the most protozero writes)", got=_input.Shown(f"a length of {n} bytes"))
        got = read(n)
        if len(got) < n:
            raise InputError(source, f"byte {pos}", f"a Perfetto trace whose packets are whole: this one says "
                             f"{n} bytes, {len(got)} remain (truncated?)")
        yield pos, got
        pos += 1 + size + n


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


# what the reader keeps of each event of a CPU until it walks the CPU in time order: a
# code, then up to five numbers and two comms (as indices into the trace's comm table)
(_CSWITCH, _CWAKING, _SWITCH, _WAKING, _WAKEUP, _WAKEUP_NEW, _FORK, _NEWTASK, _RENAME, _EXIT, _FREQ, _IDLE,
 _BINDER) = range(13)
_CODES = {"sched_switch": _SWITCH, "sched_waking": _WAKING, "sched_wakeup": _WAKEUP,
          "sched_wakeup_new": _WAKEUP_NEW, "sched_process_fork": _FORK, "task_newtask": _NEWTASK,
          "task_rename": _RENAME, "sched_process_exit": _EXIT, "cpu_frequency": _FREQ, "cpu_idle": _IDLE,
          "binder_transaction": _BINDER}
_NAMES = {v: k for k, v in _CODES.items()}


class _CpuEvents:
    """One CPU's events in columns, in the file's order: ts, code, the task current on
    the CPU as the event names it (common pid), irq (-1 unknown, 0, 1), v0..v4, c0, c1,
    and the index of the packet it came in (pkt: what a refusal names)."""

    __slots__ = ("cols",)
    NAMES = ("ts", "code", "cpid", "irq", "v0", "v1", "v2", "v3", "v4", "c0", "c1", "pkt")

    def __init__(self) -> None:
        self.cols = [array("q") for _ in self.NAMES]

    def add(self, *row) -> None:
        for col, v in zip(self.cols, row):
            col.append(v)


class _Reader:
    """Collects a trace's events per CPU, then resolves what the compact encoding leaves
    implied (the task switched out, the waker) walking each CPU in time order."""

    def __init__(self, source: str, repair: bool = False):
        from perfetto.protos.perfetto.trace import perfetto_trace_pb2

        self.repair = repair
        #: the index of the packet being read (0 the file's first)
        self.pkt = -1

        self.pb = perfetto_trace_pb2
        self.t = Trace(source=source, format="perfetto")
        self.intern = self.t.events.intern
        # per CPU, its events in the order the file gives them
        self.cpu_events: dict[int, _CpuEvents] = {}
        self.kernel: Optional[tuple[int, int]] = None
        self.release = ""
        self.lost_bundles: Counter = Counter()
        self.nonboot_clock: Counter = Counter()
        self.max_cpu = -1

    # -- packets -----------------------------------------------------------------------------
    def packet(self, offset: int, raw) -> None:
        self.pkt += 1
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
        elif which == "process_stats":
            for ps in pkt.process_stats.processes:
                if 0 < ps.pid <= PID_MAX and ps.HasField("oom_score_adj"):
                    self.t.oom_score_adj[ps.pid] = ps.oom_score_adj
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
        out = self.cpu_events.get(cpu)
        if out is None:
            out = self.cpu_events[cpu] = _CpuEvents()
        if b.HasField("compact_sched"):
            self.compact(b.compact_sched, cpu, offset, out)
        for ev in b.event:
            self.event(ev, cpu, offset, out)

    def compact(self, cs, cpu: int, offset: int, out: _CpuEvents) -> None:
        src = self.t.source
        ids = [self.intern(c) for c in cs.intern_table]
        n = len(cs.switch_timestamp)
        if not (len(cs.switch_prev_state) == len(cs.switch_next_pid) == len(cs.switch_next_prio)
                == len(cs.switch_next_comm_index) == n):
            raise InputError(src, "compact_sched.switch_*", "arrays of one length (one entry per sched_switch)")
        comms = self._comms(cs.switch_next_comm_index, ids, "switch_next_comm_index")
        self._extend(out, cs.switch_timestamp, offset, _CSWITCH, (cs.switch_prev_state, cs.switch_next_pid,
                     cs.switch_next_prio), comms)
        n = len(cs.waking_timestamp)
        if not (len(cs.waking_pid) == len(cs.waking_target_cpu) == len(cs.waking_prio) == len(cs.waking_comm_index)
                == n) or len(cs.waking_common_flags) not in (0, n):
            raise InputError(src, "compact_sched.waking_*", "arrays of one length (one entry per sched_waking)")
        comms = self._comms(cs.waking_comm_index, ids, "waking_comm_index")
        flags = cs.waking_common_flags
        irq = [1 if f & _IRQ_FLAGS else 0 for f in flags] if flags else [-1] * n
        self._extend(out, cs.waking_timestamp, offset, _CWAKING, (cs.waking_pid, cs.waking_prio,
                     cs.waking_target_cpu), comms, irq)

    def _comms(self, indices, ids: list, field: str) -> list:
        """Each comm of a compact array: an index into the bundle's intern table."""
        try:
            return [ids[i] for i in indices]
        except IndexError:
            bad = next(i for i in indices if i >= len(ids))
            raise InputError(self.t.source, f"compact_sched.{field}",
                             f"an index into the bundle's {len(ids)}-entry intern table", got=bad) from None

    def _extend(self, out: _CpuEvents, deltas, offset: int, code: int, values: tuple, comms: list,
                irq: Optional[list] = None) -> None:
        """A compact array's events: each timestamp a delta from the one before (the
        first from zero)."""
        n = len(comms)
        self.t.lines += n
        ts, cd, cpid, ir, v0, v1, v2, v3, v4, c0, c1, _ = out.cols
        ts.extend(t + offset for t in accumulate(deltas))
        cd.extend([code] * n)
        cpid.extend([0] * n)
        ir.extend(irq if irq is not None else [-1] * n)
        for col, vals in zip((v0, v1, v2), values):
            col.extend(vals)
        zeros = [0] * n
        v3.extend(zeros)
        v4.extend(zeros)
        c0.extend(comms)
        c1.extend(zeros)
        out.cols[11].extend([self.pkt] * n)

    def event(self, ev, cpu: int, offset: int, out: _CpuEvents) -> None:
        which = ev.WhichOneof("event")
        if which is None:
            self.t.skipped["ftrace event without a payload"] += 1
            return
        self.t.lines += 1
        code = _CODES.get(which)
        if code is None:
            self.t.skipped[f"event {which}"] += 1
            return
        irq = (1 if ev.common_flags & _IRQ_FLAGS else 0) if ev.HasField("common_flags") else -1
        f = getattr(ev, which)
        i = self.intern
        ts = ev.timestamp + offset
        if code == _SWITCH:
            out.add(ts, code, ev.pid, irq, f.prev_pid, f.prev_prio, f.prev_state, f.next_pid, f.next_prio,
                    i(f.prev_comm), i(f.next_comm), self.pkt)
        elif code <= _WAKEUP_NEW:
            out.add(ts, code, ev.pid, irq, f.pid, f.prio, f.target_cpu, (f.success != 0) if f.HasField("success")
                    else 1, 0, i(f.comm), 0, self.pkt)
        elif code == _FORK:
            out.add(ts, code, ev.pid, irq, f.parent_pid, f.child_pid, 0, 0, 0, i(f.parent_comm), i(f.child_comm),
                    self.pkt)
        elif code == _NEWTASK:
            out.add(ts, code, ev.pid, irq, f.pid, 0, 0, 0, 0, i(f.comm), 0, self.pkt)
        elif code == _RENAME:
            out.add(ts, code, ev.pid, irq, f.pid, 0, 0, 0, 0, i(f.newcomm), 0, self.pkt)
        elif code == _EXIT:
            out.add(ts, code, ev.pid, irq, f.pid, 0, 0, 0, 0, i(f.comm), 0, self.pkt)
        elif code == _BINDER:
            out.add(ts, code, ev.pid, irq, f.to_proc, f.to_thread, f.reply, f.flags, 0, 0, 0, self.pkt)
        else:  # cpu_frequency, cpu_idle
            out.add(ts, code, ev.pid, irq, f.cpu_id, f.state, 0, 0, 0, 0, 0, self.pkt)

    # -- per CPU, in time order ----------------------------------------------------------------
    def resolve(self) -> Trace:
        t = self.t
        store = t.events
        add = store.add_row
        comms = store.comms
        names = t.thread_names
        self.first_switch_unknown = 0
        SWITCH, STATE = _st.SWITCH, _STATE_CODE
        places = array("q")   # the packet of each row added, in the order added
        for cpu in list(self.cpu_events):
            recs = self.cpu_events.pop(cpu)
            cols = [np.frombuffer(c, dtype=np.int64) if len(c) else np.zeros(0, np.int64) for c in recs.cols]
            # Each of a CPU's streams is in time order in the file: its compact switches,
            # its compact wakings, its ordinary events (a bundle holds its compact arrays
            # apart from its events, so the three interleave in time, not in the file)
            for stream in (cols[1] == _CSWITCH, cols[1] == _CWAKING, (cols[1] != _CSWITCH) & (cols[1] != _CWAKING)):
                n = _check.check_per_cpu_order(cols[0][stream], cols[11][stream], cpu, t.source, _packet,
                                               self.repair)
                if n:
                    t.repaired[_check.BACKWARDS] += n
            order = np.argsort(cols[0], kind="stable")   # time order; the file's within a timestamp
            cur_pid: Optional[int] = None     # the task current on this CPU, once known
            cur_comm, cur_prio = "", 120
            for start in range(0, len(order), 4096):
                rows = order[start:start + 4096]
                chunk = [c[rows].tolist() for c in cols]
                for ts, code, cpid, irq, v0, v1, v2, v3, v4, c0, c1, pkt in zip(*chunk):
                    if code == _CSWITCH:
                        if cur_pid is None:
                            self.first_switch_unknown += 1
                            prev_pid, prev_comm, prev_prio, state = -1, "", 120, "R"
                        else:
                            prev_pid, prev_comm, prev_prio = cur_pid, cur_comm, cur_prio
                            state = prev_state_letter(v0, self.kernel)
                        if state is None or not 0 <= v1 <= PID_MAX:
                            self.bad("malformed sched_switch (compact)")
                            continue
                        ncomm, nprio = comms[c0], _prio(v2)
                        add((ts, cpu, SWITCH, prev_pid, prev_comm, prev_prio, v1, ncomm, nprio, STATE[state], 0, 0))
                        places.append(pkt)
                        cur_pid, cur_comm, cur_prio = v1, ncomm, nprio
                    elif code == _CWAKING:
                        if not 0 < v0 <= PID_MAX or not 0 <= v2 < NR_CPUS_MAX:
                            self.bad("malformed sched_waking (compact)")
                            continue
                        waker = cur_pid or 0  # 0 until the CPU's task is known
                        add((ts, cpu, _st.WAKING, waker, cur_comm if waker else "", 0, v0, comms[c0], _prio(v1), 0,
                             v2, (_st.IRQ if irq > 0 else 0) | _st.SUCCESS))
                        places.append(pkt)
                    else:
                        if cur_pid is None and code != _SWITCH:
                            # an ordinary event names the task current on its CPU
                            cur_pid = cpid
                            cur_comm = names.get(cpid, "")
                        row = self.ordinary(code, ts, cpu, cpid, irq, v0, v1, v2, v3, v4, comms[c0], comms[c1],
                                            cur_comm)
                        if row is None:
                            continue
                        add(row)
                        places.append(pkt)
                        if row[2] == SWITCH:
                            cur_pid, cur_comm, cur_prio = row[6], row[7], row[8]
            del recs, cols, order
        store.finish()  # sorted by time, stably: each CPU's order within a timestamp
        n = _check.check_one_cpu_at_a_time(store, places, t.source, _packet, self.repair)
        if n:
            t.repaired[_check.TWO_CPUS] += n
        del places
        t.used = len(store)
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

    def ordinary(self, code: int, ts: int, cpu: int, common_pid: int, irq: int, v0: int, v1: int, v2: int, v3: int,
                 v4: int, c0: str, c1: str, cur_comm: str) -> Optional[tuple]:
        """An ordinary event's row of the trace's EventStore; None if it is none."""
        names = self.t.thread_names
        kind = _NAMES[code]
        if code == _SWITCH:
            prev_pid, prev_prio, raw_state, next_pid, next_prio = v0, v1, v2, v3, v4
            state = prev_state_letter(raw_state, self.kernel)
            if state is None or not (-PID_MAX <= prev_pid <= PID_MAX and 0 <= next_pid <= PID_MAX):
                self.bad("malformed sched_switch")
                return None
            return (ts, cpu, _st.SWITCH, prev_pid, c0, _prio(prev_prio), next_pid, c1, _prio(next_prio),
                    _STATE_CODE[state], 0, 0)
        if code <= _WAKEUP_NEW:
            pid, prio, target, success = v0, v1, v2, v3
            if not 0 < pid <= PID_MAX or not 0 <= target < NR_CPUS_MAX:
                self.bad(f"malformed {kind}")
                return None
            return (ts, cpu, _st.WAKE_CODES[kind[6:]], common_pid, names.get(common_pid, cur_comm) if common_pid
                    else "", 0, pid, c0, _prio(prio), 0, target,
                    (_st.IRQ if irq > 0 else 0) | (_st.SUCCESS if success else 0))
        if code == _FORK:
            return (ts, cpu, _st.FORK, v0, c0, 0, v1, c1, 0, 0, 0, 0)
        if code == _NEWTASK:
            # the new task's pid and comm, written by the task that cloned it
            if v0 > 0 and c0:
                names.setdefault(v0, c0)
            return (ts, cpu, _st.FORK, common_pid, names.get(common_pid, ""), 0, v0, c0, 0, 0, 0, 0)
        if code == _RENAME:
            if v0 > 0 and c0:
                names[v0] = c0
            return None
        if code == _EXIT:
            return (ts, cpu, _st.EXIT, v0, c0, 0, 0, "", 0, 0, 0, 0)
        if code == _BINDER:
            to_proc, to_thread, reply, flags = v0, v1, v2, v3
            if not (0 <= to_proc <= PID_MAX and 0 <= to_thread <= PID_MAX and common_pid > 0):
                self.bad(f"malformed {kind}")
                return None
            return (ts, cpu, _st.BINDER, common_pid, names.get(common_pid, cur_comm), 0, to_thread, "", 0, 0, to_proc,
                    (_st.REPLY if reply else 0) | (_st.ONE_WAY if flags & TF_ONE_WAY else 0))
        cpu_id, state = v0, v1
        if code == _FREQ:
            if not 0 <= cpu_id < NR_CPUS_MAX or not 0 <= state <= KHZ_MAX:
                self.bad(f"malformed {kind}")
                return None
            return (ts, cpu_id, _st.FREQ, 0, "", 0, 0, "", 0, 0, state, 0)
        if not 0 <= cpu_id < NR_CPUS_MAX:
            self.bad(f"malformed {kind}")
            return None
        return (ts, cpu_id, _st.IDLE, 0, "", 0, 0, "", 0, 0, IDLE_EXIT if state == KHZ_MAX else state, 0)


_STATE_CODE = {c: i for i, c in enumerate(_st.STATES)}
_USED = frozenset(("sched_switch", "sched_waking", "sched_wakeup", "sched_wakeup_new", "sched_process_fork",
                   "sched_process_exit", "task_newtask", "task_rename", "cpu_frequency", "cpu_idle",
                   "binder_transaction"))


def _packet(i: int) -> str:
    """Where a refusal is: the packet's index in the file (0 the first)."""
    return f"packet {i}"


def _prio(p: int) -> int:
    return p if -PRIO_MAX <= p <= PRIO_MAX else 120


def read_perfetto(data: bytes, source: str, repair: bool = False) -> Trace:
    """The scheduler events of a serialized Perfetto ``Trace`` (already decompressed);
    what the kernel cannot write refused, or repaired with ``repair`` (hetsched.traces.check)."""
    r = _new_reader(source, repair)
    for offset, raw in _packets(data, source):
        r.packet(offset, raw)
    return r.resolve()


def read_perfetto_stream(read: Callable[[int], bytes], source: str, repair: bool = False) -> Trace:
    """:func:`read_perfetto` of a trace read forward from ``read`` (up to n bytes a call,
    fewer only at its end), one packet at a time."""
    r = _new_reader(source, repair)
    for offset, raw in _packets_stream(read, source):
        r.packet(offset, raw)
    return r.resolve()


def _new_reader(source: str, repair: bool = False) -> _Reader:
    try:
        return _Reader(source, repair)
    except ImportError:
        raise InputError(source, "format", "Perfetto's Python protos to read a Perfetto trace: "
                         "pip install perfetto") from None
