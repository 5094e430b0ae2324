"""What the kernel cannot write into a trace, checked by every reader (docs/traces.md,
"Impossible traces").

* **Time going backwards on a CPU.** Each CPU writes its events into its own ring buffer,
  stamped by one clock as it goes: a CPU's events are in time order. Across CPUs only the
  merge (``trace-cmd report``, tracefs' ``trace`` file) puts them in order, and a
  Perfetto trace is per-CPU bundles, so only each CPU's own order is checked, in the
  order the file gives its events (the CPU that wrote an event: a line's ``[cpu]``, a
  bundle's ``cpu``; not the CPU a cpu_frequency names).
* **A task on two CPUs at once.** A task is switched out of one CPU before it is
  switched in on another: sched_switch in on CPU b while the task's last switch-in, on
  CPU a, has not been followed by a switch away from it on a, and a's next switch does
  switch it out, later. (When a's next switch names another task, a lost events: see
  :func:`check_one_cpu_at_a_time`.) Pid 0 (each CPU's own idle task, ``swapper/N``) and
  the -1 of a task the trace does not name are not tasks here. Events at the same
  timestamp are taken as simultaneous (text traces print microseconds): a switch-out on a
  at the very time of the switch-in on b is in time.

Either is refused (:class:`~hetsched.errors.InputError`, naming the line or packet) unless
the reader is asked to repair: then time is sorted per CPU (stably: the file's order
within a timestamp), and an earlier run is ended at the later switch-in (its CPU is idle
from then until its own next switch, whose ``prev`` becomes that CPU's idle task), and the
repairs are counted in ``Trace.repaired``.
"""

from __future__ import annotations

from array import array
from typing import Callable, Optional

import numpy as np

from hetsched._input import Shown
from hetsched.errors import InputError
from hetsched.traces import store as _st

__all__ = ["BACKWARDS", "TWO_CPUS", "repair_message", "check_per_cpu_order", "check_one_cpu_at_a_time"]

#: Trace.repaired's keys
BACKWARDS = "events earlier than their CPU's previous event (sorted per CPU)"
TWO_CPUS = "tasks switched in on a CPU while running on another (the earlier run ended at the later switch-in)"


def backwards_error(source: str, where: str, cpu: int, ts: int, last: int) -> InputError:
    return InputError(source, where, f"a time no earlier than CPU {cpu}'s previous event at {last / 1e9:.9f} s "
                      "(each CPU writes its events in time order; --repair sorts them per CPU)",
                      got=Shown(f"{ts / 1e9:.9f} s"))


def check_per_cpu_order(ts: np.ndarray, places: np.ndarray, cpu: int, source: str,
                        where: Callable[[int], str], repair: bool) -> int:
    """One CPU's timestamps in the file's order: the number of events earlier than one
    before them (0 if none); the first such refused unless ``repair``."""
    if len(ts) < 2:
        return 0
    seen = np.maximum.accumulate(ts)
    bad = np.flatnonzero(ts[1:] < seen[:-1]) + 1
    if len(bad) and not repair:
        i = int(bad[0])
        raise backwards_error(source, where(int(places[i])), cpu, int(ts[i]), int(seen[i - 1]))
    return len(bad)


def check_one_cpu_at_a_time(store: _st.EventStore, places: array, source: str, where: Callable[[int], str],
                            repair: bool) -> int:
    """Whether a task runs on two CPUs at once, on a finished store whose rows were added
    with ``places`` (one per row, in the order they were added). Refused at the switch-in
    that begins the overlap unless ``repair``; the number repaired otherwise (the store is
    changed in place).

    A switch-in on CPU b of a task whose last switch-in was on CPU a is an overlap only
    once a's own next switch confirms it, switching that task out later than b switched
    it in. If a's next switch switches out another task, a lost the events between (the
    switch away from the task, and the switch to the one it names), which a ring buffer
    that overflowed does; the consumers of such traces (Perfetto's trace processor,
    figures.py, replay.py) end the task's run on a at the switch-in on b, and so is it
    read here, not refused. A CPU that never switches again confirms nothing."""
    store.finish()
    kind = store.column("kind")
    rows = np.flatnonzero(kind == _st.SWITCH)
    if not len(rows):
        return 0
    order = store.sort_order
    pl = np.frombuffer(places, dtype=np.int64) if len(places) else np.zeros(0, np.int64)
    if order is not None:
        pl = pl[order]
    ts_col, cpu_col = store.column("ts"), store.column("cpu")
    prev_col, next_col = store.column("a_pid"), store.column("b_pid")
    cur: dict[int, int] = {}       # cpu -> the task its last switch switched in (pid > 0)
    since: dict[int, int] = {}     # cpu -> the row of that switch-in
    on: dict[int, int] = {}        # pid -> the cpu it runs on
    #: cpu a -> (pid, row of its switch-in on another CPU, row of its switch-in on a):
    #: an overlap that a's next switch confirms or not
    suspect: dict[int, tuple[int, int, int]] = {}
    inserts: list[tuple[int, tuple]] = []
    rewrites: list[int] = []
    n = len(rows)
    for start in range(0, n, 1 << 14):
        chunk = rows[start:start + (1 << 14)]
        for row, t, c, p, nx in zip(chunk.tolist(), ts_col[chunk].tolist(), cpu_col[chunk].tolist(),
                                    prev_col[chunk].tolist(), next_col[chunk].tolist()):
            s = suspect.pop(c, None)
            if s is not None and s[0] == p and t > ts_col[s[1]]:
                pid, rb, r0 = s
                if not repair:
                    comm = store.comms[store.column("b_comm")[rb]]
                    raise InputError(source, where(int(pl[rb])),
                                     f"a task on one CPU at a time: pid {pid} ({comm}) is switched in on CPU "
                                     f"{cpu_col[rb]} at {ts_col[rb] / 1e9:.9f} s while it runs on CPU {c} (switched "
                                     f"in there at {where(int(pl[r0]))}, out only at {where(int(pl[row]))}, "
                                     f"{t / 1e9:.9f} s; --repair ends that run at the switch-in)")
                # the run on c ends at the switch-in elsewhere: a switch on c from the task
                # to c's idle task then, and c's own switch-out now leaves its idle task
                inserts.append((rb, (int(ts_col[rb]), c, _st.SWITCH, pid, store.comms[store.column("b_comm")[r0]],
                                     int(store.column("b_prio")[r0]), 0, f"swapper/{c}", 120, _st.state_code("R"),
                                     0, 0)))
                rewrites.append(row)
            old = cur.pop(c, None)
            if old is not None and on.get(old) == c:
                del on[old]
            if p > 0 and on.get(p) == c:
                del on[p]
            if nx <= 0:
                continue
            a = on.get(nx)
            if a is not None and a != c:
                suspect[a] = (nx, row, since[a])
            cur[c] = nx
            since[c] = row
            on[nx] = c
    if inserts:
        inserts.sort(key=lambda x: x[0])
        store.patch_idle_prev(rewrites)
        store.insert_rows(inserts)
    return len(inserts)


def repair_message(source: str, repaired: dict) -> Optional[str]:
    """The one warning line of what a reader repaired, None if nothing."""
    if not any(repaired.values()):
        return None
    parts = []
    n = repaired.get(BACKWARDS, 0)
    if n:
        parts.append(f"{n} event earlier than its CPU's previous event (sorted per CPU)" if n == 1 else
                     f"{n} events earlier than their CPU's previous event (sorted per CPU)")
    n = repaired.get(TWO_CPUS, 0)
    if n:
        parts.append(f"{n} switch-in{'' if n == 1 else 's'} of a task still running on another CPU (its earlier "
                     "run ended there)")
    return f"{source}: repaired what the kernel cannot write: " + "; ".join(parts)
