"""A trace's events in columns: what :class:`hetsched.traces.parse.Trace` keeps of a trace
once it is read, in about 50 bytes an event (a sched_switch line of ftrace text is 150 or
so; the same event as a Python object with its own comm strings, about 300).

One row per event, in time order (stable: the file's order within a timestamp). Every
kind shares the same columns; what each means by kind:

======  =====  ==========  ==========  ==========  ==========  ==========  ==========  =====  =========
kind    cpu    a_pid       a_comm      a_prio      b_pid       b_comm      b_prio      state  x
======  =====  ==========  ==========  ==========  ==========  ==========  ==========  =====  =========
switch  cpu    prev_pid    prev_comm   prev_prio   next_pid    next_comm   next_prio   prev   -
waking  cpu    waker_pid   waker_comm  -           pid         comm        prio        -      target_cpu
fork    cpu    parent_pid  parent_comm -           child_pid   child_comm  -           -      -
exit    cpu    pid         comm        -           -           -           -           -      -
exec    cpu    pid         comm        -           -           -           -           -      -
freq    cpu_id -           -           -           -           -           -           -      kHz
idle    cpu_id -           -           -           -           -           -           -      state
binder  cpu    pid         comm        -           to_thread   -           -           -      to_proc
======  =====  ==========  ==========  ==========  ==========  ==========  ==========  =====  =========

(wakeup and wakeup_new as waking; ``flags`` holds a wakeup's irq and success bits, and
``x`` -1 for a wakeup without a target CPU; a binder_transaction's reply and one-way bits.) Comms are indices into one table of distinct
names (``comms``), each name held once.

The store is a sequence of the reader's event objects (:class:`~hetsched.traces.parse.Switch`,
``Wakeup``, ...): iterating it, indexing it or comparing it to a list makes each object
when it is asked for, so that code written for a list of events reads it unchanged, one
event at a time. Code that scans a long trace often can read the columns instead
(:meth:`column`, :meth:`has`).
"""

from __future__ import annotations

from array import array
from typing import Iterator

import numpy as np

__all__ = ["EventStore", "SWITCH", "WAKING", "WAKEUP", "WAKEUP_NEW", "FORK", "EXIT", "EXEC", "FREQ", "IDLE",
           "BINDER", "STATES"]

SWITCH, WAKING, WAKEUP, WAKEUP_NEW, FORK, EXIT, EXEC, FREQ, IDLE, BINDER = range(10)
#: a wakeup kind's name (Wakeup.kind) by its code
WAKE_NAMES = {WAKING: "waking", WAKEUP: "wakeup", WAKEUP_NEW: "wakeup_new"}
WAKE_CODES = {v: k for k, v in WAKE_NAMES.items()}
#: Trace.counts()'s name of each kind
KIND_NAMES = ("switch", "waking", "wakeup", "wakeup_new", "fork", "exit", "exec", "freq", "idle", "binder")
#: the reader's prev_state letters (parse.parse_state, perfetto.prev_state_letter); the column holds the index
STATES = "RSDTXIPW"
_STATE_CODE = {c: i for i, c in enumerate(STATES)}
IRQ, SUCCESS = 1, 2
#: a binder_transaction row's flags: a reply, a one-way transaction (TF_ONE_WAY)
REPLY, ONE_WAY = 1, 2

# column name, array typecode while the store is filled, numpy dtype once finished
_COLUMNS = (("ts", "q", np.int64), ("cpu", "i", np.int32), ("kind", "b", np.int8), ("a_pid", "q", np.int64),
            ("a_comm", "i", np.int32), ("a_prio", "i", np.int32), ("b_pid", "q", np.int64),
            ("b_comm", "i", np.int32), ("b_prio", "i", np.int32), ("state", "b", np.int8),
            ("x", "q", np.int64), ("flags", "b", np.int8))
_NAMES = tuple(c[0] for c in _COLUMNS)
#: rows collected as tuples before they are moved into the columns, a batch at a time
_BATCH = 1 << 12
#: rows made into objects at a time when the store is iterated
_CHUNK = 1 << 12


class EventStore:
    """The events of one trace, in columns (see the module's docstring).

    Filled with :meth:`add` (a row of plain values, comms as strings) or :meth:`append`
    (an event object), then :meth:`finish` (sorts by time); read as a sequence of event
    objects, or by column."""

    def __init__(self) -> None:
        self.comms: list[str] = []
        self._comm_ids: dict[str, int] = {"": 0}
        self.comms.append("")
        self._cols: dict[str, object] = {name: array(code) for name, code, _ in _COLUMNS}
        self._rows: list[tuple] = []
        #: timestamps beyond int64 (a u64 the kernel could write, never seen): the ts column
        #: is then a Python list
        self._wide_ts = False
        self._n = 0
        self._finished = False
        #: the permutation finish() sorted the rows by (row i of the store was added
        #: ``sort_order[i]``-th), None if they were added in time order: a reader maps
        #: what it kept per added row (a line number) onto the store's rows with it
        self.sort_order = None

    # -- filling ------------------------------------------------------------------------------
    def add(self, ts: int, cpu: int, kind: int, a_pid: int = 0, a_comm: str = "", a_prio: int = 0,
            b_pid: int = 0, b_comm: str = "", b_prio: int = 0, state: int = 0, x: int = 0, flags: int = 0) -> None:
        """One event's row (comms as strings, ``state`` an index into :data:`STATES`)."""
        self._rows.append((ts, cpu, kind, a_pid, a_comm, a_prio, b_pid, b_comm, b_prio, state, x, flags))
        if len(self._rows) >= _BATCH:
            self._flush()

    def add_row(self, row: tuple) -> None:
        """:meth:`add` of a tuple of its twelve values, in its order."""
        self._rows.append(row)
        if len(self._rows) >= _BATCH:
            self._flush()

    def append(self, e) -> None:
        """An event object (Switch, Wakeup, ...) as a row."""
        self.add_row(row_of(e))

    def intern(self, comm: str) -> int:
        i = self._comm_ids.get(comm)
        if i is None:
            i = self._comm_ids[comm] = len(self.comms)
            self.comms.append(comm)
        return i

    def _flush(self) -> None:
        rows = self._rows
        if not rows:
            return
        if self._finished:
            raise RuntimeError("events added to a finished EventStore")
        self._rows = []
        cols = list(zip(*rows))
        del rows
        ids, intern = self._comm_ids, self.intern
        for j in (4, 7):  # a_comm, b_comm
            cols[j] = [ids[c] if c in ids else intern(c) for c in cols[j]]
        for (name, _, _), values in zip(_COLUMNS, cols):
            col = self._cols[name]
            if name == "ts" and not self._wide_ts:
                try:
                    col.extend(values)
                    continue
                except OverflowError:
                    self._wide_ts = True
                    col = self._cols["ts"] = col.tolist()
            col.extend(values)
        self._n += len(cols[0])

    def finish(self) -> "EventStore":
        """The rows into numpy columns, sorted by time (stably: the order they were added
        within a timestamp)."""
        self._flush()
        if self._finished:
            return self
        self._finished = True
        for name, _, dtype in _COLUMNS:
            col = self._cols[name]
            if name == "ts" and self._wide_ts:
                self._cols[name] = np.array(col, dtype=object)
            else:
                self._cols[name] = np.frombuffer(col, dtype=dtype) if len(col) else np.zeros(0, dtype)
        ts = self._cols["ts"]
        if len(ts) > 1 and not (ts[1:] >= ts[:-1]).all():
            order = np.argsort(ts, kind="stable")
            for name in _NAMES:
                self._cols[name] = self._cols[name][order]
            self.sort_order = order
        return self

    # -- repairs (hetsched.traces.check) ------------------------------------------------------
    def patch_idle_prev(self, rows) -> None:
        """Make these switch rows switch out their CPU's idle task (pid 0, ``swapper/N``,
        preempted): the task they named had been switched out already, by a repair."""
        self.finish()
        if not len(rows):
            return
        rows = np.asarray(rows, dtype=np.int64)
        for name in ("a_pid", "a_comm", "a_prio", "state"):
            if not self._cols[name].flags.writeable:
                self._cols[name] = self._cols[name].copy()
        c = self._cols
        c["a_pid"][rows] = 0
        c["a_prio"][rows] = 120
        c["state"][rows] = _STATE_CODE["R"]
        c["a_comm"][rows] = [self.intern(f"swapper/{cpu}") for cpu in c["cpu"][rows].tolist()]

    def insert_rows(self, inserts) -> None:
        """Insert rows (``(index, row)``, index into the finished store, in increasing
        order; row as :meth:`add`'s twelve values): each goes before that index's row."""
        self.finish()
        if not inserts:
            return
        at = np.asarray([i for i, _ in inserts], dtype=np.int64)
        for j, name in enumerate(_NAMES):
            values = [r[j] for _, r in inserts]
            if name in ("a_comm", "b_comm"):
                values = [self.intern(v) for v in values]
            col = self._cols[name]
            self._cols[name] = np.insert(col, at, np.asarray(values, dtype=col.dtype))
        self._n += len(inserts)

    # -- reading by column --------------------------------------------------------------------
    def column(self, name: str) -> np.ndarray:
        """One column (see the module's docstring) as a numpy array, in time order."""
        self.finish()
        return self._cols[name]

    def has(self, *kinds: int) -> bool:
        """Whether any event is of one of these kinds."""
        k = self.column("kind")
        return bool(np.isin(k, kinds).any()) if len(kinds) > 1 else bool((k == kinds[0]).any())

    def indices(self, *kinds: int) -> np.ndarray:
        """The rows of these kinds, in time order."""
        k = self.column("kind")
        return np.flatnonzero(np.isin(k, kinds))

    def kind_counts(self) -> dict[str, int]:
        """Events by Trace.counts()'s name, in the order each first occurs."""
        k = self.column("kind")
        counts = np.bincount(k, minlength=len(KIND_NAMES)) if len(k) else np.zeros(len(KIND_NAMES), int)
        first = {c: int(np.argmax(k == c)) for c in range(len(KIND_NAMES)) if counts[c]}
        return {KIND_NAMES[c]: int(counts[c]) for c in sorted(first, key=first.__getitem__)}

    @property
    def nbytes(self) -> int:
        """Bytes the columns hold (the comm table not counted)."""
        self.finish()
        return sum(c.nbytes for c in self._cols.values())

    # -- reading as event objects -------------------------------------------------------------
    def __len__(self) -> int:
        return self._n + len(self._rows)

    def __bool__(self) -> bool:
        return len(self) > 0

    def _objects(self, start: int, stop: int) -> list:
        Switch, Wakeup, Fork, Exit, Exec, Freq, Idle, Binder = _classes()
        c = self._cols
        comms, states = self.comms, STATES
        cols = [c[n][start:stop].tolist() for n in _NAMES]
        out = []
        add = out.append
        for ts, cpu, kind, ap, ac, apr, bp, bc, bpr, st, x, fl in zip(*cols):
            if kind == SWITCH:
                add(Switch(ts, cpu, comms[ac], ap, apr, states[st], comms[bc], bp, bpr))
            elif kind <= WAKEUP_NEW:
                add(Wakeup(ts, cpu, WAKE_NAMES[kind], ap, comms[ac], bool(fl & IRQ), comms[bc], bp, bpr,
                           None if x < 0 else x, bool(fl & SUCCESS)))
            elif kind == FORK:
                add(Fork(ts, cpu, ap, comms[ac], bp, comms[bc]))
            elif kind == EXIT:
                add(Exit(ts, cpu, ap, comms[ac]))
            elif kind == EXEC:
                add(Exec(ts, cpu, ap, comms[ac]))
            elif kind == FREQ:
                add(Freq(ts, cpu, x))
            elif kind == IDLE:
                add(Idle(ts, cpu, x))
            elif kind == BINDER:
                add(Binder(ts, cpu, ap, comms[ac], bool(fl & REPLY), bool(fl & ONE_WAY), x, bp))
            else:
                raise ValueError(f"an EventStore row of unknown kind {kind}")
        return out

    def __iter__(self) -> Iterator:
        self.finish()
        n = self._n
        for start in range(0, n, _CHUNK):
            yield from self._objects(start, min(n, start + _CHUNK))

    def iter_rows(self, rows: np.ndarray) -> Iterator:
        """The events of these rows (indices in time order), as objects."""
        self.finish()
        for i in range(0, len(rows), _CHUNK):
            for j in rows[i:i + _CHUNK].tolist():
                yield self._objects(j, j + 1)[0]

    def __getitem__(self, i):
        self.finish()
        if isinstance(i, slice):
            start, stop, step = i.indices(self._n)
            if step == 1:
                return self._objects(start, max(start, stop))
            return [self._objects(j, j + 1)[0] for j in range(start, stop, step)]
        n = self._n
        j = i + n if i < 0 else i
        if not 0 <= j < n:
            raise IndexError("event index out of range")
        return self._objects(j, j + 1)[0]

    def __eq__(self, other) -> bool:
        if isinstance(other, EventStore):
            if len(self) != len(other):
                return False
            self.finish()
            other.finish()
            for name in _NAMES:
                if name in ("a_comm", "b_comm"):
                    a = np.asarray(self.comms, dtype=object)[self._cols[name]]
                    b = np.asarray(other.comms, dtype=object)[other._cols[name]]
                    if not (a == b).all():
                        return False
                elif not np.array_equal(self._cols[name], other._cols[name]):
                    return False
            return True
        try:
            n = len(other)
        except TypeError:
            return NotImplemented
        return n == len(self) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # mutable, compared by value

    def __repr__(self) -> str:
        return f"<EventStore: {len(self)} events>"


_CLASSES: tuple = ()


def _classes() -> tuple:
    global _CLASSES
    if not _CLASSES:
        from hetsched.traces.parse import Binder, Exec, Exit, Fork, Freq, Idle, Switch, Wakeup

        _CLASSES = (Switch, Wakeup, Fork, Exit, Exec, Freq, Idle, Binder)
    return _CLASSES


def row_of(e) -> tuple:
    """An event object's row (the twelve values of :meth:`EventStore.add`)."""
    name = type(e).__name__
    if name == "Switch":
        return (e.ts, e.cpu, SWITCH, e.prev_pid, e.prev_comm, e.prev_prio, e.next_pid, e.next_comm, e.next_prio,
                _STATE_CODE[e.prev_state], 0, 0)
    if name == "Wakeup":
        return (e.ts, e.cpu, WAKE_CODES[e.kind], e.waker_pid, e.waker_comm, 0, e.pid, e.comm, e.prio, 0,
                -1 if e.target_cpu is None else e.target_cpu, (IRQ if e.irq else 0) | (SUCCESS if e.success else 0))
    if name == "Fork":
        return (e.ts, e.cpu, FORK, e.parent_pid, e.parent_comm, 0, e.child_pid, e.child_comm, 0, 0, 0, 0)
    if name == "Exit":
        return (e.ts, e.cpu, EXIT, e.pid, e.comm, 0, 0, "", 0, 0, 0, 0)
    if name == "Exec":
        return (e.ts, e.cpu, EXEC, e.pid, e.comm, 0, 0, "", 0, 0, 0, 0)
    if name == "Freq":
        return (e.ts, e.cpu, FREQ, 0, "", 0, 0, "", 0, 0, e.khz, 0)
    if name == "Idle":
        return (e.ts, e.cpu, IDLE, 0, "", 0, 0, "", 0, 0, e.state, 0)
    if name == "Binder":
        return (e.ts, e.cpu, BINDER, e.pid, e.comm, 0, e.to_thread, "", 0, 0, e.to_proc,
                (REPLY if e.reply else 0) | (ONE_WAY if e.one_way else 0))
    raise TypeError(f"not a trace event: {e!r}")


def state_code(letter: str) -> int:
    return _STATE_CODE[letter]
