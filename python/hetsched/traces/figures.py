"""A phone's scheduling figures, measured the same way on any trace :func:`load_trace`
reads: a real phone's (Perfetto, systrace, ftrace text) and a simulated run's own
``--trace`` output.  docs/traces.md, "Measuring a phone's figures", defines each figure.

One pass over the trace's events rebuilds, per CPU, who was running when (the stretches
between its sched_switch events) and, per thread, when it was running, runnable (woken,
or preempted: switched out with prev_state R) or blocked.  Every figure is read from
those two timelines over the trace's window, its first event to its last.

Events a trace may lack or lose, taken as hetsched.traces.replay takes them:

* **wakeups**: sched_waking where the trace has it (try_to_wake_up() emits it in the
  waker's context, before the task is queued), else sched_wakeup; sched_wakeup_new for new
  tasks in both cases; a sched_wakeup whose ``success`` is 0 (kernels before 4.x) woke
  nothing.  A trace without any has no wait, latency or wakeup figures (a wait could
  only start at a preemption there, which would understate it).
* **tasks running at the start**: a CPU's first sched_switch names the task it switches
  away from: that task has run since the later of the window's start and the time it was
  last seen changing state (woken, say).
* **a switch-out without its switch-in** (lost events, or a kernel that does not trace
  every switch): the task the switch names has run since the later of the CPU's last
  switch and its own last change of state; the task believed running there ends then
  (its switch-out was lost too, so whether it blocked or was preempted is unknown, and no
  wait is counted for it until it is seen woken or preempted again).  The task that emits
  an event (the ``comm-pid`` of a line; in IRQ context the interrupted one) is likewise
  running on that CPU.
* **a switch-in of a task already running on another CPU**: its run there ends at that
  moment, and that CPU's task is unknown (counted idle) until its next switch.
* a thread's wait before the window (runnable at its start) is unknown and not counted;
  one still runnable at the end has waited until the end.
"""

from __future__ import annotations

import statistics
from bisect import bisect_left, bisect_right
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Optional

from hetsched.errors import InputError
from hetsched.traces.parse import IDLE_EXIT, Exec, Fork, Freq, Idle, Switch, Trace, Wakeup
from hetsched.traces.replay import is_kthread

__all__ = ["PhoneFigures", "FrameThread", "IdleState", "phone_figures", "wakeup_latency_samples",
           "foreground_app", "figure_cells", "LATENCY_THREADS"]

#: the wakeup-latency figure is the median over this many threads, those with the most
#: run time (a phone's frame pipeline and its busiest helpers, not the hundreds of threads
#: that wake once in a trace)
LATENCY_THREADS = 30

#: TASK_COMM_LEN - 1: a comm is the thread's name cut to this many bytes
COMM_BYTES = 15
#: process names (a cmdline, or its main thread's comm) of the phone's own UI: the
#: foreground app is another process when one with a RenderThread ran
SYSTEM_UI_NAMES = ("systemui", "launcher")


@dataclass
class FrameThread:
    """One thread of the frame pipeline and its run-queue wait over its run time."""
    role: str          # "ui", "render" or "surfaceflinger"
    pid: int
    name: str
    run_ns: int
    #: None: the trace has no wakeup events, so a wait can only start at a preemption
    wait_ns: Optional[int]

    @property
    def wait_run(self) -> Optional[float]:
        return self.wait_ns / self.run_ns if self.run_ns and self.wait_ns is not None else None


@dataclass
class IdleState:
    """cpu_idle: how often ``cpu`` entered ``state`` and what share of the window it spent there."""
    cpu: int
    state: int
    entries: int
    entries_per_s: float
    residency_ns: int
    residency_share: float


@dataclass
class PhoneFigures:
    source: str
    format: str
    nr_cpus: int
    window_ns: int
    platform: Optional[str]
    #: distinct pids but the idle task's that were running at some time
    threads_run: int
    #: the event wakeups are counted from: "sched_waking" or "sched_wakeup" (with
    #: sched_wakeup_new in both cases); None: the trace has neither
    wakeup_event: Optional[str]
    wakeups: int
    wakeups_per_s: float
    busy_ns_by_cpu: dict
    busy_share: float
    busy_share_by_cluster: dict
    run_ns: int
    #: None: the trace has no wakeup events (a wait would start at preemptions alone)
    wait_ns: Optional[int]
    #: the foreground app's process name (or, without tgids, its UI thread's name); None:
    #: no RenderThread ran
    app: Optional[str]
    #: "tgid" (the app's main thread) or "waker" (its RenderThread's most frequent waker)
    ui_found_by: Optional[str]
    ui: Optional[FrameThread]
    render: Optional[FrameThread]
    surfaceflinger: Optional[FrameThread]
    #: the median, over the LATENCY_THREADS threads with the most run time among those
    #: with a measured wakeup, of each one's median wakeup -> switch-in time
    wakeup_latency_ns: Optional[float]
    wakeup_latency_threads: int
    #: per CPU and cpuidle state; empty when the trace has no cpu_idle
    idle: list
    has_cpu_idle: bool
    #: median time from a CPU's cpu_idle exit to its next switch to a task
    idle_exit_to_switch_ns: Optional[float]
    idle_exits: int
    idle_exits_to_switch: int
    #: wakeups whose CPU (sched_wakeup's target_cpu, else where the task next ran) is known
    wakeups_placed: int
    #: share of those whose CPU was running the idle task just before the wakeup
    wakeups_to_idle_cpu: Optional[float]
    #: share of those by the cpuidle state their CPU was in just before the wakeup:
    #: "state N", "not idle" (not in a cpuidle state) or "unknown" (before its first cpu_idle)
    wakeups_by_idle_state: dict
    stats: dict = field(default_factory=dict)
    #: per cluster (with a platform, from the cpu_frequency events of its first CPU): the
    #: time-weighted mean frequency in kHz and the share of time at the lowest OPP, over
    #: the part of the window after that CPU's first cpu_frequency event; empty without
    freq_by_cluster: dict = field(default_factory=dict)
    #: wakeup -> switch-in by where the task ran next and what that CPU was doing when the
    #: wakeup came: (cluster, or "all" without a platform; "running a task", "idle task"
    #: (not in a cpuidle state) or "state N") -> {"wakeups", "p50_ns", and for a state N,
    #: "to_exit_p50_ns" (wakeup -> that CPU's cpu_idle exit) and "exit_to_switch_p50_ns"};
    #: only for a trace with cpu_idle
    wakeup_latency_by_state: dict = field(default_factory=dict)

    @property
    def window_s(self) -> float:
        return self.window_ns / 1e9

    @property
    def wait_run(self) -> Optional[float]:
        return self.wait_ns / self.run_ns if self.run_ns and self.wait_ns is not None else None

    def as_dict(self) -> dict:
        d = asdict(self)
        d["window_s"] = self.window_s
        d["wait_run"] = self.wait_run
        for role in ("ui", "render", "surfaceflinger"):
            ft = getattr(self, role)
            if ft is not None:
                d[role]["wait_run"] = ft.wait_run
        d["busy_ns_by_cpu"] = {str(k): v for k, v in self.busy_ns_by_cpu.items()}
        d["wakeup_latency_by_state"] = {f"{cl}, {st}": v for (cl, st), v in self.wakeup_latency_by_state.items()}
        return d

    def rows(self, idle_names: Optional[dict] = None) -> list[tuple[tuple, str, object, str]]:
        """(order, figure, value, value as text): the rows of ``trace-stats``, ``order``
        placing each among the rows of any trace (CPUs and idle states in number order).
        ``idle_names`` (a CPU or a cluster's name -> the platform's state names) labels
        the idle rows."""
        def pct(x):
            return "-" if x is None else f"{100 * x:.1f} %"

        def ratio(x):
            return "-" if x is None else f"{x:.3f}"

        def us(x):
            return "-" if x is None else f"{x / 1000:.1f} µs"

        out: list[tuple[tuple, str, object, str]] = [
            ((0,), "window (s)", self.window_s, f"{self.window_s:.3f}"),
            ((1,), "CPUs", self.nr_cpus, str(self.nr_cpus)),
            ((2,), "threads that run", self.threads_run, str(self.threads_run)),
            ((3,), "wakeups per s", self.wakeups_per_s if self.wakeup_event else None,
             f"{self.wakeups_per_s:,.0f} ({self.wakeup_event})" if self.wakeup_event else "- (no wakeup events)"),
            ((4,), "busy share, all CPUs", self.busy_share, pct(self.busy_share)),
        ]
        for i, (name, share) in enumerate(self.busy_share_by_cluster.items()):
            out.append(((4, i), f"busy share, {name}", share, pct(share)))
        for i, (name, f) in enumerate(self.freq_by_cluster.items()):
            out.append(((4, 50 + i), f"mean frequency, {name} (MHz)", f["mean_khz"] / 1000,
                        f"{f['mean_khz'] / 1000:,.0f}"))
            out.append(((4, 100 + i), f"time at f_min, {name}", f["at_fmin_share"], pct(f["at_fmin_share"])))
        out.append(((5,), "wait / run, all threads", self.wait_run, ratio(self.wait_run)))
        out.append(((6,), "foreground app", self.app,
                    "-" if self.ui_found_by is None else f"{self.app or '?'} (UI thread by {self.ui_found_by})"))
        for i, (role, label) in enumerate((("ui", "UI thread"), ("render", "RenderThread"),
                                           ("surfaceflinger", "surfaceflinger"))):
            ft = getattr(self, role)
            text = "-" if ft is None else f"{ratio(ft.wait_run)} ({ft.name} {ft.pid})"
            out.append(((7, i), f"wait / run, {label}", None if ft is None else ft.wait_run, text))
        lat, n = self.wakeup_latency_ns, self.wakeup_latency_threads
        out.append(((8,), "wakeup latency p50 (µs)", None if lat is None else lat / 1000,
                    us(lat) + (f" ({n} threads)" if n else "")))
        out.append(((9,), "wakeups to a CPU running its idle task", self.wakeups_to_idle_cpu,
                    pct(self.wakeups_to_idle_cpu)))
        if self.has_cpu_idle:
            for st, share in self.wakeups_by_idle_state.items():
                if st.startswith("state "):
                    key, what = (10, 0, int(st.split()[1])), f"in idle {st}"
                else:
                    key, what = ((10, 1), "in no idle state") if st == "not idle" else \
                        ((10, 2), "in an unknown idle state")
                out.append((key, f"wakeups to a CPU {what}", share, pct(share)))
            exit_ns = self.idle_exit_to_switch_ns
            out.append(((11,), "idle exit -> switch-in p50 (µs)", None if exit_ns is None else exit_ns / 1000,
                        us(exit_ns) + f" ({self.idle_exits_to_switch} of {self.idle_exits} exits)"))
            clusters = list(dict.fromkeys(cl for cl, _ in self.wakeup_latency_by_state))
            for (cl, st), v in self.wakeup_latency_by_state.items():
                where = f"{cl}, {st}" if cl != "all" else st
                if st.startswith("state "):
                    names = (idle_names or {}).get(cl, ())
                    k = int(st.split()[1])
                    if k < len(names):
                        where += f" ({names[k]})"
                    order = (11, 1, clusters.index(cl), 2, k)
                    split = f"; to exit {us(v['to_exit_p50_ns'])}, exit to switch {us(v['exit_to_switch_p50_ns'])}"
                else:
                    order = (11, 1, clusters.index(cl), 0 if st == "running a task" else 1)
                    split = ""
                p50 = v["p50_ns"]
                out.append((order, f"wakeup -> switch-in p50, {where}", p50 / 1000,
                            us(p50) + f" ({v['wakeups']} wakeups{split})"))
            for s in self.idle:
                names = (idle_names or {}).get(s.cpu, ())
                label = f"cpu{s.cpu} state {s.state}" + (f" ({names[s.state]})" if s.state < len(names) else "")
                out.append(((12, s.cpu, s.state, 0), f"{label} entries per s", s.entries_per_s,
                            f"{s.entries_per_s:,.1f}"))
                out.append(((12, s.cpu, s.state, 1), f"{label} residency", s.residency_share,
                            pct(s.residency_share)))
        return out


@dataclass
class _Thread:
    pid: int
    #: unknown (not seen yet, or a switch-out was lost) | running | runnable | blocked | exited
    state: str = "unknown"
    cpu: int = -1
    since: int = 0                  # start of the current run, or of the runnable stretch
    woken_at: Optional[int] = None  # the wakeup that made it runnable (None: preempted)
    changed: Optional[int] = None   # last time it was seen changing state
    run_ns: int = 0
    wait_ns: int = 0
    latencies: list = field(default_factory=list)


class _Scan:
    def __init__(self, trace: Trace):
        self.tr = trace
        self.t0, self.t1 = trace.start_ns, trace.end_ns
        ev = trace.events
        self.has_waking = any(isinstance(e, Wakeup) and e.kind == "waking" for e in ev)
        self.threads: dict[int, _Thread] = {}
        self.names: dict[int, str] = {}
        self.ran: set[int] = set()
        self.stats: Counter = Counter()
        n = trace.nr_cpus
        self.cur: list[Optional[int]] = [None] * n     # pid running (0: the idle task), None: unknown
        self.cur_since: list[int] = [self.t0] * n
        self.switched: list[bool] = [False] * n
        #: per CPU, its closed stretches (start, end, pid) in time order
        self.segments: list[list[tuple[int, int, int]]] = [[] for _ in range(n)]
        self.wakeups = 0
        self.wakers: Counter = Counter()               # (wakee, waker) -> wakeups from task context
        #: wakeups waiting for their CPU: pid -> index in self.placed
        self.pending: dict[int, int] = {}
        self.placed: list[list] = []                   # [ts, cpu or None]
        # cpuidle
        self.idle_changes: list[list[tuple[int, int]]] = [[] for _ in range(n)]   # (ts, state or -1)
        self.idle_first: list[Optional[int]] = [None] * n
        self.exit_pending: list[Optional[int]] = [None] * n
        self.exit_to_switch: list[int] = []
        #: each wakeup's (wakeup, CPU the task ran on next, its switch-in there)
        self.switch_ins: list[tuple[int, int, int]] = []
        self.idle_exits = 0
        #: per CPU, its cpu_frequency events (ts, kHz) in time order
        self.freq_changes: list[list[tuple[int, int]]] = [[] for _ in range(n)]

    # -- per-CPU stretches ------------------------------------------------------------------
    def thread(self, pid: int) -> _Thread:
        t = self.threads.get(pid)
        if t is None:
            t = self.threads[pid] = _Thread(pid)
        return t

    def close(self, cpu: int, end: int) -> None:
        """The stretch of the task current on ``cpu`` ends at ``end``."""
        pid = self.cur[cpu]
        start = self.cur_since[cpu]
        if pid is not None and end >= start:
            self.segments[cpu].append((start, end, pid))
            if pid:
                self.threads[pid].run_ns += end - start

    def open(self, cpu: int, pid: Optional[int], ts: int) -> None:
        self.cur[cpu], self.cur_since[cpu] = pid, ts
        if pid:
            t = self.thread(pid)
            t.state, t.cpu, t.since, t.changed = "running", cpu, ts, ts
            self.ran.add(pid)
            idx = self.pending.pop(pid, None)
            if idx is not None and self.placed[idx][1] is None:
                self.placed[idx][1] = cpu

    def ensure_running(self, pid: int, cpu: int, ts: int) -> None:
        """``pid`` is seen running on ``cpu`` at ``ts`` (it switches out there, or emits an
        event there): if it was not known to be, it has run since the later of the CPU's
        last switch and its own last change of state."""
        if self.cur[cpu] == pid:
            return
        t = self.thread(pid) if pid else None
        since = self.cur_since[cpu]
        if t is not None and t.changed is not None:
            since = max(since, t.changed)
        since = min(since, ts)
        if not self.switched[cpu] and self.cur[cpu] is None:
            self.stats["running at the trace's start"] += 1
        else:
            self.stats["switch-ins inferred (lost events)"] += 1
        if t is not None and t.state == "running" and t.cpu != cpu:
            # its switch-out over there was lost as well
            other = t.cpu
            self.close(other, max(since, self.cur_since[other]))
            self.cur[other], self.cur_since[other] = None, max(since, self.cur_since[other])
        # the task current here was switched out unseen: blocked or preempted, unknown
        self.close(cpu, since)
        prev = self.cur[cpu]
        if prev:
            p = self.threads[prev]
            p.state, p.changed, p.woken_at = "unknown", since, None
        if t is not None and t.state == "runnable":
            t.wait_ns += since - t.since
        self.open(cpu, pid, since)

    # -- events -----------------------------------------------------------------------------
    def on_switch(self, e: Switch) -> None:
        c = e.cpu
        if e.prev_pid > 0:
            self.names[e.prev_pid] = e.prev_comm
        if e.next_pid:
            self.names[e.next_pid] = e.next_comm
        if e.prev_pid < 0:
            # the reader does not know the task switched out (Perfetto's compact_sched names
            # only the task switched in, and a CPU's first switch has no earlier one): the
            # task believed current, if any, ran until now and how it stopped is unknown
            self.stats["switches from an unknown task"] += 1
            unknown = self.cur[c]
            self.close(c, e.ts)
            if unknown:
                p = self.threads[unknown]
                p.state, p.changed, p.woken_at = "unknown", e.ts, None
        else:
            self.ensure_running(e.prev_pid, c, e.ts)
            self.close(c, e.ts)
        self.switched[c] = True
        if e.prev_pid > 0:
            p = self.threads[e.prev_pid]
            p.changed, p.woken_at = e.ts, None
            if e.prev_state == "R":
                p.state, p.since = "runnable", e.ts
            elif e.prev_state == "X":
                p.state = "exited"
            else:
                p.state = "blocked"
        n = e.next_pid
        if n:
            t = self.thread(n)
            if t.state == "running":
                # running elsewhere: the switch-out there (and this one's wakeup) was lost
                self.stats["switch-ins of a task running elsewhere (lost events)"] += 1
                other = t.cpu
                self.close(other, e.ts)
                self.cur[other], self.cur_since[other] = None, e.ts
            elif t.state == "runnable":
                t.wait_ns += e.ts - t.since
                if t.woken_at is not None:
                    t.latencies.append(e.ts - t.woken_at)
                    self.switch_ins.append((t.woken_at, c, e.ts))
            if self.exit_pending[c] is not None:
                self.exit_to_switch.append(e.ts - self.exit_pending[c])
                self.exit_pending[c] = None
        self.open(c, n, e.ts)

    def on_wakeup(self, e: Wakeup) -> None:
        if e.waker_pid > 0 and not (e.waker_comm.startswith("<") and e.waker_comm.endswith(">")):
            # ftrace's "<...>" (and systrace's "<7952>") is a comm it did not have saved
            self.names[e.waker_pid] = e.waker_comm
        self.names[e.pid] = e.comm
        if e.cpu < len(self.cur) and e.waker_pid >= 0:
            self.ensure_running(e.waker_pid, e.cpu, e.ts)
        counted = e.success and (e.kind == "wakeup_new" or e.kind == ("waking" if self.has_waking else "wakeup"))
        if not counted:
            # sched_wakeup after sched_waking: the task is on the runqueue of target_cpu
            idx = self.pending.get(e.pid)
            if e.kind == "wakeup" and idx is not None and self.placed[idx][1] is None and e.target_cpu is not None:
                self.placed[idx][1] = e.target_cpu
            return
        self.wakeups += 1
        if e.waker_pid > 0 and not e.irq and e.waker_pid != e.pid:
            self.wakers[(e.pid, e.waker_pid)] += 1
        t = self.thread(e.pid)
        if t.state in ("running", "runnable"):
            self.stats["wakeups of a task running or runnable"] += 1
            return
        if t.state == "exited":
            self.stats["wakeups of an exited pid (reused)"] += 1
        t.state, t.since, t.woken_at, t.changed = "runnable", e.ts, e.ts, e.ts
        # sched_waking's target_cpu is still the task's last CPU: its CPU is the next
        # sched_wakeup's, or where it runs next
        cpu = e.target_cpu if e.kind != "waking" else None
        self.placed.append([e.ts, cpu])
        if cpu is None:
            self.pending[e.pid] = len(self.placed) - 1
        else:
            self.pending.pop(e.pid, None)

    def on_idle(self, e: Idle) -> None:
        c = e.cpu
        if c >= len(self.idle_changes):
            return
        if self.idle_first[c] is None:
            self.idle_first[c] = e.state
        self.idle_changes[c].append((e.ts, e.state))
        if e.state == IDLE_EXIT:
            self.idle_exits += 1
            self.exit_pending[c] = e.ts
        else:
            self.exit_pending[c] = None   # back to idle without running a task

    def run(self) -> None:
        for e in self.tr.events:
            if isinstance(e, Switch):
                if e.cpu < len(self.cur):
                    self.on_switch(e)
            elif isinstance(e, Wakeup):
                self.on_wakeup(e)
            elif isinstance(e, Idle):
                self.on_idle(e)
            elif isinstance(e, Freq):
                if e.cpu < len(self.freq_changes):
                    self.freq_changes[e.cpu].append((e.ts, e.khz))
            elif isinstance(e, Exec):
                self.names[e.pid] = e.comm
            elif isinstance(e, Fork):
                self.names.setdefault(e.child_pid, e.child_comm)
        for c in range(len(self.cur)):
            self.close(c, self.t1)
        for t in self.threads.values():
            if t.state == "runnable":
                t.wait_ns += self.t1 - t.since

    # -- lookups after the pass ---------------------------------------------------------------
    def task_at(self, cpu: int, ts: int) -> Optional[int]:
        """The pid running on ``cpu`` just before ``ts`` (None: unknown)."""
        segs = self.segments[cpu]
        i = bisect_left(segs, (ts,)) - 1   # the last stretch starting before ts
        if i < 0 or segs[i][1] < ts:
            return None
        return segs[i][2]

    def idle_state_at(self, cpu: int, ts: int) -> Optional[int]:
        """The cpuidle state ``cpu`` was in just before ``ts``: its index, -1 for none,
        None if unknown (before its first cpu_idle, when that one is an exit)."""
        ch = self.idle_changes[cpu]
        i = bisect_left(ch, (ts,)) - 1
        if i < 0:
            return None if self.idle_first[cpu] in (None, IDLE_EXIT) else IDLE_EXIT
        return ch[i][1]


def _latency_samples(s: _Scan, platform) -> dict:
    """Each wakeup's wakeup -> switch-in time by where the task ran next and what that CPU
    was doing when the wakeup came: (cluster or "all", what) -> (totals, to-exit parts,
    exit-to-switch parts). A CPU in a cpuidle state is woken by an IPI (or its own
    interrupt) and writes cpu_idle's exit once out of the state, then runs the idle loop's
    way out and schedule(): the two parts are split at that exit."""
    if not any(s.idle_changes):
        return {}
    cluster = {c: cl.name for cl in platform.clusters for c in cl.cpus} if platform is not None else {}
    rows: dict = {}
    for woken, cpu, ts in s.switch_ins:
        on = s.task_at(cpu, woken)
        if on is None:
            continue
        split = None
        if on:
            what = "running a task"
        else:
            st = s.idle_state_at(cpu, woken)
            if st is None:
                continue
            what = "idle task" if st == IDLE_EXIT else f"state {st}"
            if st != IDLE_EXIT:
                ch = s.idle_changes[cpu]
                i = bisect_right(ch, (woken, IDLE_EXIT))
                while i < len(ch) and ch[i][0] == woken and ch[i][1] != IDLE_EXIT:
                    i += 1
                if not (i < len(ch) and ch[i][1] == IDLE_EXIT and ch[i][0] <= ts):
                    continue   # its exit was lost, or the task ran elsewhere first
                split = (ch[i][0] - woken, ts - ch[i][0])
        r = rows.setdefault((cluster.get(cpu, "all"), what), ([], [], []))
        r[0].append(ts - woken)
        if split:
            r[1].append(split[0])
            r[2].append(split[1])
    names = list(dict.fromkeys(cluster.values()))

    def key(k):
        cl, what = k
        return (names.index(cl) if cl in names else -1,
                (0, 0) if what == "running a task" else (1, 0) if what == "idle task" else (2, int(what.split()[1])))

    return {k: rows[k] for k in sorted(rows, key=key)}


def wakeup_latency_samples(trace: Trace, platform=None) -> dict:
    """Every wakeup's samples behind PhoneFigures.wakeup_latency_by_state, to pool over
    several traces: (cluster or "all", what the CPU was doing) -> (wakeup -> switch-in,
    wakeup -> cpu_idle exit, exit -> switch-in), in ns."""
    s = _Scan(trace)
    s.run()
    return _latency_samples(s, platform)


def _latency_by_state(s: _Scan, platform) -> dict:
    """PhoneFigures.wakeup_latency_by_state: the medians of :func:`_latency_samples`."""
    out = {}
    for k, (tot, to_exit, after) in _latency_samples(s, platform).items():
        v = {"wakeups": len(tot), "p50_ns": _median(tot)}
        if k[1].startswith("state "):
            v["to_exit_p50_ns"] = _median(to_exit)
            v["exit_to_switch_p50_ns"] = _median(after)
        out[k] = v
    return out


def _median(xs) -> Optional[float]:
    return float(statistics.median(xs)) if xs else None


def _named(name: str, base: str) -> bool:
    """``name`` names ``base``: it holds it, or it is a comm that TASK_COMM_LEN cut in the
    middle of it behind a prefix ("web-RenderThrea" for "web-RenderThread")."""
    if base in name:
        return True
    if len(name.encode()) == COMM_BYTES:
        return any(name.endswith(base[:k]) for k in range(len(base) - 1, 7, -1))
    return False


def _frame_threads(s: _Scan) -> tuple:
    """(the app's name, how its UI thread was found, UI thread, RenderThread,
    surfaceflinger's main thread)."""
    tr = s.tr
    names = dict(s.names)
    names.update({p: n for p, n in tr.thread_names.items() if n})

    def run(pid):
        t = s.threads.get(pid)
        return t.run_ns if t else 0

    def process_name(tgid: int) -> Optional[str]:
        return tr.process_names.get(tgid) or names.get(tgid)

    def top_waker(pid: int) -> Optional[int]:
        best = None
        for (wakee, waker), n in s.wakers.items():
            if wakee != pid or is_kthread(names.get(waker, ""), waker):
                continue
            if best is None or (n, -waker) > (best[0], -best[1]):
                best = (n, waker)
        return best[1] if best else None

    candidates = []
    for pid in sorted(s.ran):
        if not _named(names.get(pid, ""), "RenderThread"):
            continue
        tgid = tr.tgids.get(pid)
        ui = tgid if tgid is not None else top_waker(pid)
        pname = process_name(tgid) if tgid is not None else (names.get(ui) if ui is not None else None)
        system = bool(pname) and any(w in pname.lower() for w in SYSTEM_UI_NAMES)
        candidates.append((system, -run(pid), pid, ui, tgid, pname))
    app = how = ui = render = None
    if candidates:
        others = [c for c in candidates if not c[0] and c[1] < 0]
        system, _, render, ui, tgid, app = min(others or candidates, key=lambda c: (c[1], c[2]))
        how = "tgid" if tgid is not None else "waker"
    # surfaceflinger: the process of that name, or its main thread by name
    sf_pids = [tgid for tgid, n in tr.process_names.items() if n and n.rsplit("/", 1)[-1] == "surfaceflinger"]
    if not sf_pids:
        sf_pids = [p for p in sorted(s.ran) if _named(names.get(p, ""), "surfaceflinger")
                   and tr.tgids.get(p, p) == p]
    sf = min(sf_pids, key=lambda p: (-run(p), p)) if sf_pids else None
    return app, how, ui, render, sf


def _freq_by_cluster(s: "_Scan", platform) -> dict:
    """Each cluster's frequency residency from its first CPU's cpu_frequency events (a
    cluster is one cpufreq policy: its CPUs share the frequency): the mean frequency and
    the share of time at the lowest OPP, from the first event to the window's end."""
    out = {}
    for cl in platform.clusters:
        changes = s.freq_changes[cl.cpus[0]]
        if not changes:
            continue
        fmin = min(o.khz for o in cl.opps)
        spans = [(b[0] - a[0], a[1]) for a, b in zip(changes, changes[1:] + [(s.t1, None)])]
        total = sum(d for d, _ in spans)
        if total <= 0:
            continue
        out[cl.name] = {"mean_khz": sum(d * k for d, k in spans) / total,
                        "at_fmin_share": sum(d for d, k in spans if k <= fmin) / total}
    return out


def foreground_app(trace: Trace) -> Optional[str]:
    """The name of the foreground app's process, found as :func:`phone_figures` finds it
    (the busiest RenderThread outside the system UI and the launcher), None if none ran."""
    s = _Scan(trace)
    s.run()
    return _frame_threads(s)[0]


def figure_cells(figs: list, plat) -> tuple[list[str], dict[str, list]]:
    """The rows of several traces' figures, in the figures' order: (labels, label -> a
    (value, text) per trace, "-" where a trace has no such row)."""
    idle_names = {k: tuple(s.name for s in cl.idle_states) for cl in plat.clusters
                  for k in (*cl.cpus, cl.name)} if plat else None
    order: dict[str, tuple] = {}
    cells: dict[str, list] = {}
    for i, fig in enumerate(figs):
        for key, label, value, text in fig.rows(idle_names):
            order.setdefault(label, key)
            cells.setdefault(label, [("", "-")] * len(figs))[i] = (value, text)
    return sorted(order, key=order.__getitem__), cells


def phone_figures(trace: Trace, platform=None) -> PhoneFigures:
    """Measure ``trace``'s figures (docs/traces.md, "Measuring a phone's figures").

    ``platform`` (a hetsched.platforms Platform, or its name) adds the busy share of each
    cluster; it must have the trace's CPUs.

    The foreground app: among the threads named RenderThread that ran (a comm cut to 15
    bytes counts: "web-RenderThrea"), the one with the most run time, leaving out those of
    the system UI and the launcher (a process name holding "systemui" or "launcher") when
    any other ran.  Its UI thread is its process's main thread (pid == tgid); in a trace
    without tgids, the thread that woke the RenderThread most often from task context (the
    UI thread hands it every frame), kernel threads aside, whose name stands for the
    process's.  surfaceflinger's main thread: the main thread of the process named
    surfaceflinger, else the thread of that name (its main thread's comm) that ran longest."""
    if isinstance(platform, str):
        from hetsched.platforms import load_platform

        platform = load_platform(platform)
    window = trace.end_ns - trace.start_ns
    if window <= 0:
        raise InputError(trace.source, "events", "a trace whose events span some time (its first and last "
                         "events are at the same instant)")
    if platform is not None:
        cpus = sorted(c for cl in platform.clusters for c in cl.cpus)
        if len(cpus) != trace.nr_cpus:
            raise InputError("--platform", "platform", f"a platform with the {trace.nr_cpus} CPUs of "
                             f"{trace.source}", got=f"{platform.name} ({len(cpus)} CPUs)")
    s = _Scan(trace)
    s.run()
    n = trace.nr_cpus
    busy = {c: sum(b - a for a, b, pid in s.segments[c] if pid) for c in range(n)}
    by_cluster = {}
    freq_by_cluster = {}
    if platform is not None:
        for cl in platform.clusters:
            by_cluster[cl.name] = sum(busy[c] for c in cl.cpus) / (len(cl.cpus) * window)
        freq_by_cluster = _freq_by_cluster(s, platform)
    run_ns = sum(t.run_ns for t in s.threads.values())
    wakeup_event = "sched_waking" if s.has_waking else "sched_wakeup" if s.wakeups else None
    wait_ns = sum(t.wait_ns for t in s.threads.values()) if wakeup_event else None

    app, how, ui, render, sf = _frame_threads(s)
    names = dict(s.names)
    names.update({p: nm for p, nm in trace.thread_names.items() if nm})

    def frame(role, pid):
        if pid is None:
            return None
        t = s.threads.get(pid) or _Thread(pid)
        return FrameThread(role, pid, names.get(pid, "?"), t.run_ns, t.wait_ns if wakeup_event else None)

    measured = sorted((t for t in s.threads.values() if t.latencies), key=lambda t: (-t.run_ns, t.pid))
    top = measured[:LATENCY_THREADS]
    latency = _median([statistics.median(t.latencies) for t in top])

    idle: list[IdleState] = []
    for c in range(n):
        spent: Counter = Counter()
        entries: Counter = Counter()
        ch = s.idle_changes[c]
        for i, (ts, st) in enumerate(ch):
            if st == IDLE_EXIT:
                continue
            entries[st] += 1
            end = ch[i + 1][0] if i + 1 < len(ch) else trace.end_ns
            spent[st] += end - ts
        for st in sorted(entries):
            idle.append(IdleState(c, st, entries[st], entries[st] / (window / 1e9), spent[st], spent[st] / window))
    has_idle = any(s.idle_changes)

    placed = [(ts, cpu) for ts, cpu in s.placed if cpu is not None and cpu < n]
    on_cpu = [s.task_at(cpu, ts) for ts, cpu in placed]
    to_idle_task = sum(1 for pid in on_cpu if pid == 0)
    by_state: Counter = Counter()
    if has_idle:
        for (ts, cpu), pid in zip(placed, on_cpu):
            # a CPU running a task is in no idle state, whether or not it has idled yet
            st = IDLE_EXIT if pid else s.idle_state_at(cpu, ts)
            by_state["unknown" if st is None else "not idle" if st == IDLE_EXIT else f"state {st}"] += 1

    def state_key(k):
        return (0, int(k.split()[1])) if k.startswith("state ") else (1, k)

    s.stats["wakeups with a known CPU"] = len(placed)
    return PhoneFigures(
        source=trace.source, format=trace.format, nr_cpus=n, window_ns=window,
        platform=platform.name if platform is not None else None,
        threads_run=len(s.ran),
        wakeup_event=wakeup_event,
        wakeups=s.wakeups, wakeups_per_s=s.wakeups / (window / 1e9),
        busy_ns_by_cpu=busy, busy_share=sum(busy.values()) / (n * window), busy_share_by_cluster=by_cluster,
        freq_by_cluster=freq_by_cluster,
        run_ns=run_ns, wait_ns=wait_ns,
        app=app, ui_found_by=how, ui=frame("ui", ui), render=frame("render", render),
        surfaceflinger=frame("surfaceflinger", sf),
        wakeup_latency_ns=latency, wakeup_latency_threads=len(top),
        idle=idle, has_cpu_idle=has_idle,
        idle_exit_to_switch_ns=_median(s.exit_to_switch), idle_exits=s.idle_exits,
        idle_exits_to_switch=len(s.exit_to_switch),
        wakeups_placed=len(placed),
        wakeups_to_idle_cpu=to_idle_task / len(placed) if placed else None,
        wakeups_by_idle_state={k: by_state[k] / len(placed) for k in sorted(by_state, key=state_key)},
        stats=dict(sorted(s.stats.items())),
        wakeup_latency_by_state=_latency_by_state(s, platform),
    )
