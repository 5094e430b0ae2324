"""Turn a parsed trace into a replayable WorkloadSpec (docs/traces.md).

Per task (pid), in trace order:

* **run**: the time it ran (sched_switch in -> out), as invariant work
  ``duration * capacity_orig(cpu)/1024 * min(1, f/f_max(cpu))`` when a source platform is
  given (and the trace has cpu_frequency events: before a CPU's first one, f_max is
  assumed); without a source platform the duration itself is the work (the trace's CPUs
  are taken to be the reference: capacity 1024 at f_max).
* **preemption** (``prev_state`` R / R+) is not a sleep: the run simply continues later.
* **who woke whom**: when task B, blocked, is woken (sched_waking if the trace has it,
  else sched_wakeup; sched_wakeup_new for new tasks) by a traced task A that is running on
  the emitting CPU, A's run is split at the wakeup time and A gets ``sem_post(A>B)`` there,
  B gets ``sem_wait(A>B)`` where it blocked.  One counting semaphore per (A, B) pair.
  Where A had just sent a binder transaction or reply from that CPU (binder_transaction,
  two-way or a reply) to B or B's process, the post is ``sem_post_sync``: binder wakes B
  with WF_SYNC, which the placement of several kernels reads.
* **wakeups from idle, IRQ context or an excluded/untraced task**: ``sleep_until`` the
  wakeup time (relative to the trace start) for a voluntary sleep (S), ``iowait`` of the
  blocked duration for an uninterruptible one (D); ``relative_sleeps`` makes both plain
  durations.  A task switched in again without any wakeup in the trace (a trace without
  wakeup events, or lost events) sleeps for the whole gap.
* tasks first seen mid-trace start with ``delay_ns`` at that time, or with a ``sem_wait``
  on their first waker.  Trailing waits and sleeps are dropped: a task ends after its last
  run (and the posts made in it).

Excluded by default: the idle task (pid 0), kernel threads (by name, ``KTHREAD_PREFIXES``)
unless ``include_kthreads``, and, for a ``hetsched record`` file, every task outside the
recorded command's process tree unless ``all_tasks``.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Mapping, Optional, Sequence

from hetsched.errors import InputError
from hetsched.traces import store as _st
from hetsched.traces.parse import Binder, Exec, Exit, Fork, Freq, Switch, Trace, Wakeup
from hetsched.traces.store import EventStore
from hetsched.workloads.spec import SpecBuilder, task

__all__ = ["ReplayOptions", "Replay", "build_replay", "is_kthread", "percpu_kthread_cpu", "switch_work",
           "KTHREAD_PREFIXES"]

KTHREAD_PREFIXES = (
    "kworker/", "ksoftirqd/", "migration/", "rcu_", "rcuc/", "rcuop/", "rcuos/", "rcub/", "kthreadd",
    "watchdog/", "watchdogd", "cpuhp/", "irq/", "kcompactd", "khugepaged", "kswapd", "jbd2/", "kblockd",
    "kauditd", "oom_reaper", "writeback", "kdevtmpfs", "khungtaskd", "ksmd", "kintegrityd", "idle_inject/",
    "scsi_eh_", "scsi_tmf_", "ext4-rsv-conver", "ipv6_addrconf", "kthrotld", "edac-poller", "netns",
    "kstrp", "kverityd", "dm_bufio", "kdmflush", "kpsmoused", "psimon", "pr/", "sugov:", "mmcqd/",
    "usb-storage", "khubd", "kpktgend", "crypto", "ksgxd", "hwrng", "swapper", "system_wq",
    "mm_percpu_wq", "inet_frag_wq", "cfg80211", "devfreq_wq", "pool_workqueue", "ecryptfs-kthrea",
    "kmpathd", "kmpath_handlerd", "nvme-", "ata_sff", "md", "raid5wq", "deferwq", "charger_manager",
)


def is_kthread(comm: str, pid: int) -> bool:
    """A kernel thread, judged by its name (the traces carry no ppid or flags)."""
    return pid <= 2 or comm.startswith(KTHREAD_PREFIXES)


#: the kernel threads bound to one CPU, by name: a per-CPU workqueue pool's workers
#: (kworker/N:M, kworker/N:MH; an unbound pool's are kworker/uN:M), ksoftirqd/N, the hotplug
#: thread cpuhp/N, rcuc/N, idle_inject/N, the stopper migration/N and the old watchdog/N
#: (kthread_bind(), kthread_create_on_cpu(), smpboot's per-CPU threads)
_PERCPU_KTHREAD = re.compile(r"^(?:kworker/(\d+):\d+|(?:ksoftirqd|cpuhp|rcuc|idle_inject|migration|watchdog)/(\d+)$)")


def percpu_kthread_cpu(comm: str) -> Optional[int]:
    """The CPU a per-CPU kernel thread is bound to, by its name; None for any other task."""
    m = _PERCPU_KTHREAD.match(comm)
    if m is None:
        return None
    return int(m.group(1) or m.group(2))


@dataclass
class ReplayOptions:
    include_kthreads: bool = False
    #: "auto": the recorded command's process tree for a ``hetsched record`` file, else all
    #: tasks; "all": every task; "tree": only the tree (needs a root pid)
    tasks: str = "auto"
    #: the platform the trace was recorded on (capacities, f_max); None: work = duration
    source_platform: object = None
    relative_sleeps: bool = False
    #: a workload that repeats the trace's window without end: each task's program runs
    #: once per window (its sleeps relative, a task that starts mid-window sleeping to its
    #: start), then waits for the next window on an absolute timer of the window's length;
    #: waits on semaphores are all kept, so every window's posts and waits balance
    loop: bool = False
    #: only these pids (after the other filters), if given
    pids: Optional[set] = None
    #: the context switch the engine charges itself (cost.context_switch_ns), which a
    #: recorded run burst (one sched_switch to the next) already holds: each switch-in after
    #: a wakeup takes it off the task's run work. Invariant ns (the engine's unit: ns on a
    #: capacity-1024 CPU at f_max); None: the engine's own charge on the recording CPU (the
    #: source platform's measured figure, else the engine's default: :func:`switch_work`);
    #: 0 (the default here; ``hetsched replay`` gives None) keeps the bursts whole. A burst
    #: shorter than the switch runs 0 and the rest is not carried (``stats``: switch work
    #: not taken off)
    switch_cost_ns: Optional[int] = 0
    #: pid -> the scheduling group a task was in (its ``stune``: top-app, foreground,
    #: background, rt; the root group where absent), e.g. :func:`android_groups.thread_groups`
    groups: Optional[Mapping[int, str]] = None
    #: pid -> the CPUs a task may run on (its cpuset; every CPU where absent), e.g.
    #: :func:`android_groups.cpuset_cpus` of :func:`android_groups.thread_cpusets`
    cpus: Optional[Mapping[int, Sequence[int]]] = None
    #: the CPUs of the platform replayed on: each per-CPU kernel thread of a CPU below it is
    #: bound to that CPU, as the kernel binds it (:func:`percpu_kthread_cpu`); None: free
    bind_percpu_kthreads: Optional[int] = None


@dataclass
class _T:
    pid: int
    comm: str
    prio: int = 120
    state: str = "new"     # new | running | runnable | blocked | woken | exited
    start_ns: Optional[int] = None    # relative to the trace start
    waits_first: bool = False         # starts (delay 0) with a sem_wait on its first waker
    prog: list = field(default_factory=list)
    seg: Optional[int] = None         # start of the current running segment
    cpu: int = -1
    work: float = 0.0                 # unflushed run work
    carry: float = 0.0
    switch_due: float = 0.0           # the switch into the current run, not taken off yet
    block_ts: int = 0
    block_kind: str = "S"
    ready_ts: int = 0                 # when it last became runnable (woken or preempted)
    busy_ns: int = 0
    work_total: float = 0.0
    last_end: Optional[int] = None    # end of its last run, relative to the trace start


@dataclass
class Replay:
    spec: dict
    #: per included task: name, pid, busy_ns (trace), work (ns at the reference), start/end
    tasks: list
    busy_ns: int               # total busy time of the included tasks in the trace
    makespan_ns: int           # first start to last run end of the included tasks
    first_start_ns: int
    notes: list
    stats: dict                # counters of how events were turned into the spec

    def summary(self) -> dict:
        return {"tasks": len(self.tasks), "busy_s": self.busy_ns / 1e9, "makespan_s": self.makespan_ns / 1e9,
                "notes": list(self.notes), "stats": dict(self.stats)}


class _Builder:
    def __init__(self, trace: Trace, opt: ReplayOptions):
        self.tr, self.opt = trace, opt
        self.t0 = trace.start_ns
        self.b = SpecBuilder(f"replay:{trace.source.rsplit('/', 1)[-1]}")
        self.tasks: dict[int, _T] = {}
        self.excluded: set[int] = set()
        self.stats: Counter = Counter()
        self.notes: list[str] = []
        self.freq: dict[int, int] = {}
        self.cpu_switch: dict[int, int] = {}        # cpu -> time of its last traced switch
        self.running_on: dict[int, _T] = {}          # cpu -> included task running there
        #: cpu -> the binder transaction its task has just sent, whose wakeup is WF_SYNC
        #: (until that wakeup or the CPU's next switch)
        self.binder_sync: dict[int, Binder] = {}
        self.cap: dict[int, float] = {}
        self.fmax: dict[int, int] = {}
        self.freq_unknown_ns = 0
        self.over_fmax: set = set()
        self._setup_platform()
        self._setup_filter()
        cost = self.opt.switch_cost_ns
        #: per CPU, the switch work taken off a run after a wakeup
        self.switch_cost: list = switch_work(self.opt.source_platform) if cost is None else [max(0, int(cost))]
        self.switch_short = 0.0

    # -- set-up ---------------------------------------------------------------------------
    def _setup_platform(self) -> None:
        p = self.opt.source_platform
        if p is None:
            self.notes.append("no source platform: run time converted 1:1 into work (the trace's CPUs "
                              "taken as the reference, capacity 1024 at f_max)")
            return
        for c in p.clusters:
            for cpu in c.cpus:
                self.cap[cpu] = c.capacity_orig / 1024
                self.fmax[cpu] = c.fmax_khz
        if p.nr_cpus < self.tr.nr_cpus:
            raise InputError("--source-platform", "platform",
                             f"a platform with at least the trace's {self.tr.nr_cpus} CPUs", got=p.name)
        has_freq = _has(self.tr.events, _st.FREQ)
        self.notes.append(f"run time converted to work with {p.name}'s capacities"
                          + (" and the trace's cpu_frequency events" if has_freq else
                             " at f_max (the trace has no cpu_frequency events)"))

    def _setup_filter(self) -> None:
        mode = self.opt.tasks
        root = self.tr.meta.get("root_pid")
        if mode == "auto":
            mode = "tree" if root is not None else "all"
        if mode == "tree":
            if root is None:
                raise InputError("--tasks", "tasks", "'all' for a trace not written by `hetsched record` "
                                 "(it names no root process)", got="tree")
            tree = {int(root)}
            for e in _forks(self.tr.events):
                if e.parent_pid in tree:
                    tree.add(e.child_pid)
            self.tree: Optional[set] = tree
            self.notes.append(f"tasks: the process tree of pid {root} ({len(tree)} pids)")
        else:
            self.tree = None
        #: the tasks busy time and makespan are measured on: the recorded command's tree
        self.focus: Optional[set] = None
        if root is not None:
            focus = {int(root)}
            for e in _forks(self.tr.events):
                if e.parent_pid in focus:
                    focus.add(e.child_pid)
            self.focus = focus
            if self.tree is None:
                self.notes.append(f"tasks: every task of the trace; busy time and makespan measured on the "
                                  f"process tree of pid {root}")

    def included(self, pid: int, comm: str) -> bool:
        if pid in self.tasks:
            return True
        if pid in self.excluded:
            return False
        # pid -1: a task the trace does not name (Perfetto's compact encoding, before a CPU's
        # first switch)
        ok = pid > 0 and (self.tree is None or pid in self.tree) and \
            (self.opt.include_kthreads or self.tree is not None or not is_kthread(comm, pid)) and \
            (self.opt.pids is None or pid in self.opt.pids)
        if ok:
            self.tasks[pid] = _T(pid, comm)
        else:
            self.excluded.add(pid)
        return ok

    # -- work accounting ----------------------------------------------------------------------
    def factor(self, cpu: int) -> float:
        if not self.cap:
            return 1.0
        f = self.cap.get(cpu, 1.0)
        khz = self.freq.get(cpu)
        if khz is not None and cpu in self.fmax:
            if khz > self.fmax[cpu]:
                self.over_fmax.add(cpu)
            f *= min(1.0, khz / self.fmax[cpu])
        return f

    def accumulate(self, t: _T, now: int) -> None:
        if t.seg is None:
            return
        d = now - t.seg
        if d > 0:
            if self.cap and t.cpu not in self.freq:
                self.freq_unknown_ns += d
            w = d * self.factor(t.cpu)
            t.work += w
            t.work_total += w
            t.busy_ns += d
            t.last_end = now - self.t0
        t.seg = now

    def flush(self, t: _T) -> None:
        w = t.work + t.carry
        if t.switch_due:
            take = min(t.switch_due, max(w, 0.0))
            w -= take
            t.switch_due -= take
        n = int(round(w))
        t.carry = w - n
        t.work = 0.0
        if n > 0:
            if t.prog and "run" in t.prog[-1]:
                t.prog[-1]["run"] += n
            else:
                t.prog.append({"run": n})

    def start_running(self, t: _T, cpu: int, since: int) -> None:
        if t.state not in ("running", "runnable"):
            # a new run (not the continuation of a preempted one): what the last run's work
            # could not give back stays in the trace's run time, not taken off this one
            self.switch_short += t.switch_due
            t.switch_due = 0.0
        if t.state == "woken":
            # the switch after a wakeup, which the replay reproduces (one after a preemption
            # by a task the replay may not have is not taken off)
            t.switch_due = self.switch_cost[cpu] if cpu < len(self.switch_cost) else self.switch_cost[-1]
        t.state, t.seg, t.cpu = "running", since, cpu

    def ensure_running(self, t: _T, cpu: int, ts: int) -> None:
        """``t`` is seen running on ``cpu`` at ``ts`` (it switches out there, or emits an
        event there).  If the trace did not show it being switched in (it ran since before
        the trace began, or the switch-in is missing: some kernels do not trace switches
        away from the idle task), it has been running since the later of its wakeup and the
        CPU's last traced switch."""
        if t.state == "running" and t.cpu == cpu:
            return
        since = max(self.cpu_switch.get(cpu, self.t0), t.ready_ts if t.state != "new" else self.t0)
        since = min(since, ts)
        if t.state == "new":
            t.start_ns = since - self.t0
        else:
            self.stats["switch-ins inferred (not in the trace)"] += 1
            if t.state == "running":          # ran elsewhere: end it there
                self.accumulate(t, min(ts, max(t.seg or ts, self.cpu_switch.get(t.cpu, ts))))
            elif t.state == "blocked":
                self.flush(t)
                gap = max(0, since - t.block_ts)
                t.prog.append({"iowait": gap} if t.block_kind == "D" else {"sleep": gap})
        other = self.running_on.get(cpu)
        if other is not None and other is not t and other.state == "running" and other.cpu == cpu:
            self.accumulate(other, since)   # its switch-out is missing too
            other.seg, other.state, other.ready_ts = None, "runnable", since
        self.start_running(t, cpu, since)
        self.running_on[cpu] = t

    def on_switch(self, e: Switch) -> None:
        if self.included(e.prev_pid, e.prev_comm):
            p = self.tasks[e.prev_pid]
            p.prio = e.prev_prio
            self.ensure_running(p, e.cpu, e.ts)
            self.accumulate(p, e.ts)
            p.seg = None
            if e.prev_state == "R":
                p.state, p.ready_ts = "runnable", e.ts
                self.stats["preemptions"] += 1
            elif e.prev_state == "X":
                self.flush(p)
                p.state = "exited"
            else:
                p.state, p.block_ts = "blocked", e.ts
                p.block_kind = "D" if e.prev_state == "D" else "S"
                self.stats["blocks"] += 1
        self.cpu_switch[e.cpu] = e.ts
        self.running_on.pop(e.cpu, None)
        self.binder_sync.pop(e.cpu, None)
        if self.included(e.next_pid, e.next_comm):
            n = self.tasks[e.next_pid]
            n.prio = e.next_prio
            if n.state == "new":
                n.start_ns = e.ts - self.t0
            elif n.state == "blocked":
                self.flush(n)
                gap = e.ts - n.block_ts
                n.prog.append({"iowait": gap} if n.block_kind == "D" else {"sleep": gap})
                self.stats["switch-in without a wakeup (slept the whole gap)"] += 1
            elif n.state == "running":
                self.stats["switch-in of a task seen running (lost events)"] += 1
                self.accumulate(n, e.ts)
            elif n.state == "exited":
                self.stats["switch-in after exit (pid reused?)"] += 1
            self.start_running(n, e.cpu, e.ts)
            self.running_on[e.cpu] = n

    def on_wakeup(self, e: Wakeup) -> None:
        if not e.success or not self.included(e.pid, e.comm):
            return
        b = self.tasks[e.pid]
        a: Optional[_T] = None
        if e.waker_pid != 0 and self.included(e.waker_pid, e.waker_comm) and \
                self.tasks[e.waker_pid].state != "exited":
            # the line's task is current on that CPU (in IRQ context too: it was interrupted)
            self.ensure_running(self.tasks[e.waker_pid], e.cpu, e.ts)
            if not e.irq and e.waker_pid != e.pid:
                a = self.tasks[e.waker_pid]
        # binder's wakeup is the first its sender makes after the transaction, if any
        sync = a is not None and self._binder_wakeup(e)
        if b.state in ("new", "blocked"):
            b.ready_ts = e.ts
        if b.state == "new":
            b.state = "woken"
            if a is not None:
                b.start_ns, b.waits_first = e.ts - self.t0, True
                self._post_wait(a, b, e.ts, sync)
            else:
                b.start_ns = e.ts - self.t0
            return
        if b.state != "blocked":
            self.stats["wakeups of a task already runnable"] += 1
            return
        self.flush(b)
        if a is not None:
            self._post_wait(a, b, e.ts, sync)
            self.stats["wakeups by a traced task (sem_post/sem_wait)"] += 1
        else:
            gap = e.ts - b.block_ts
            if b.block_kind == "D":
                b.prog.append({"iowait": gap})
            elif self.opt.relative_sleeps or self.opt.loop:
                b.prog.append({"sleep": gap})
            else:
                b.prog.append({"sleep_until": e.ts - self.t0})
            self.stats["wakeups from idle/IRQ/untraced tasks (sleep)"] += 1
        b.state = "woken"

    def _binder_wakeup(self, e: Wakeup) -> bool:
        """Whether wakeup ``e``, in task context, is the one binder makes with WF_SYNC for
        the transaction (or reply) its waker has just sent from that CPU: the first wakeup
        the sender makes after it (binder wakes at most one thread, in the same call; the
        transaction is spent either way), of the thread the transaction names or, for one
        to a process's pool (thread 0), of a thread of that process (a binder pool thread,
        by its name, where the trace has no tgids)."""
        tr = self.binder_sync.get(e.cpu)
        if tr is None or tr.pid != e.waker_pid:
            return False
        del self.binder_sync[e.cpu]
        if tr.to_thread:
            return e.pid == tr.to_thread
        tgid = self.tr.tgids.get(e.pid)
        if tgid is None:
            return e.comm.startswith(BINDER_POOL_COMMS)
        return tgid == tr.to_proc

    def on_binder(self, e: Binder) -> None:
        if e.sync:
            self.binder_sync[e.cpu] = e
        else:
            self.binder_sync.pop(e.cpu, None)

    def _post_wait(self, a: _T, b: _T, ts: int, sync: bool = False) -> None:
        self.accumulate(a, ts)
        self.flush(a)
        s = self.b.sem(f"{a.pid}>{b.pid}")
        a.prog.append({"sem_post_sync" if sync else "sem_post": s})
        if sync:
            self.stats["binder's WF_SYNC wakeups (sem_post_sync)"] += 1
        b.prog.append({"sem_wait": s})

    def on_freq(self, e: Freq) -> None:
        for t in self.tasks.values():
            if t.state == "running" and t.cpu == e.cpu:
                self.accumulate(t, e.ts)
        self.freq[e.cpu] = e.khz

    # -- the whole trace ----------------------------------------------------------------------
    def build(self) -> Replay:
        has_waking = _has(self.tr.events, _st.WAKING)
        for e in self.tr.events:
            if isinstance(e, Switch):
                self.on_switch(e)
            elif isinstance(e, Wakeup):
                if e.kind == "wakeup_new" or e.kind == ("waking" if has_waking else "wakeup"):
                    self.on_wakeup(e)
            elif isinstance(e, Freq):
                self.on_freq(e)
            elif isinstance(e, Binder):
                self.on_binder(e)
            elif isinstance(e, Exec):
                if e.pid in self.tasks:
                    self.tasks[e.pid].comm = e.comm
            elif isinstance(e, Exit):
                pass  # the switch-out with prev_state X/dead follows; nothing to do here
        end = self.tr.end_ns
        for t in self.tasks.values():
            if t.state == "running":
                self.accumulate(t, end)
            self.flush(t)
            self.switch_short += t.switch_due
        if self.switch_short >= 0.5:
            self.stats["switch work not taken off (ns, runs shorter than the switch)"] = int(round(self.switch_short))
        if has_waking:
            self.notes.append("who-woke-whom from sched_waking (emitted in the waker's context)")
        if self.freq_unknown_ns and _has(self.tr.events, _st.FREQ):
            self.notes.append(f"{self.freq_unknown_ns / 1e6:.3f} ms of run time before a CPU's first "
                              "cpu_frequency event: taken at f_max")
        if self.over_fmax:
            self.notes.append(f"CPUs {sorted(self.over_fmax)} report frequencies above the source "
                              "platform's f_max: taken as f_max")
        return self._spec()

    def _spec(self) -> Replay:
        kept = []
        for t in sorted(self.tasks.values(), key=lambda t: (t.start_ns if t.start_ns is not None else 0, t.pid)):
            prog = list(t.prog)
            # a trailing sleep is the task waiting past the trace's end; a trailing sem_wait
            # (woken, not yet run) is kept when the window repeats: its post is in the program
            # of its waker, and a wait dropped would leave one post more each window
            while prog and not ("run" in prog[-1] or _posts(prog[-1]) or (self.opt.loop and "sem_wait" in prog[-1])):
                prog.pop()
            if not any("run" in ev or _posts(ev) for ev in prog):
                if not t.busy_ns:
                    self.stats["tasks dropped (no run time)"] += 1
                    continue
                # it ran, for less than the switch the engine charges itself: kept, its last
                # run one with nothing left to run after the switch
                prog = list(t.prog) + [{"run": 0}]
            kept.append((t, prog))
        if not kept:
            raise InputError(self.tr.source, "tasks", "at least one task that runs in the trace "
                             "(after the kernel-thread/process-tree filters; try --include-kthreads "
                             "or --tasks all)")
        rows = []
        end_mark = None if self.opt.loop else self.b.mark("end")
        window = max(1, self.tr.end_ns - self.t0)
        for t, prog in kept:
            start = 0 if t.waits_first else (t.start_ns or 0)
            if self.opt.loop:
                prog = ([{"sleep": start}] if start else []) + prog + \
                    [{"timer": {"id": self.b.timer(f"window-{t.pid}"), "period_ns": window, "mode": "absolute"}}]
                start = 0
            else:
                prog = prog + [{"mark": end_mark}]
            if 0 <= t.prio < 100:
                pol = dict(policy="fifo", rt_priority=max(1, 99 - t.prio))
            else:
                pol = dict(nice=min(19, max(-20, t.prio - 120)) if 100 <= t.prio <= 139 else 0)
            name = f"{t.comm}-{t.pid}"
            group = self.opt.groups.get(t.pid) if self.opt.groups else None
            cpus = self.opt.cpus.get(t.pid) if self.opt.cpus else None
            if cpus is not None:
                self.stats["tasks held to a cpuset"] += 1
            bound = percpu_kthread_cpu(t.comm) if self.opt.bind_percpu_kthreads else None
            if bound is not None:
                if bound < self.opt.bind_percpu_kthreads:
                    cpus = [bound]
                    self.stats["per-CPU kernel threads bound to their CPU"] += 1
                else:
                    self.stats["per-CPU kernel threads of CPUs the platform has not (left free)"] += 1
            self.b.add(task(name, [{"loop": 1, "events": prog}], delay_ns=start, loop=-1 if self.opt.loop else 1,
                            stune=group, cpus=cpus, **pol))
            if group:
                self.stats[f"tasks in the {group} group"] += 1
            rows.append({"name": name, "pid": t.pid, "comm": t.comm, "busy_ns": t.busy_ns,
                         "work_ns": round(t.work_total), "start_ns": t.start_ns or 0,
                         "end_ns": t.last_end if t.last_end is not None else (t.start_ns or 0),
                         "focus": self.focus is None or t.pid in self.focus})
        measured = [r for r in rows if r["focus"]] or rows
        busy = sum(r["busy_ns"] for r in measured)
        first = min(r["start_ns"] for r in measured)
        last = max(r["end_ns"] for r in measured)
        spec = self.b.build()
        spec["duration_ns"] = None
        self.stats["tasks"] = len(rows)
        self.stats["semaphores"] = len(self.b.sems)
        self.stats["tasks excluded"] = len(self.excluded)
        return Replay(spec=spec, tasks=rows, busy_ns=busy, makespan_ns=last - first, first_start_ns=first,
                      notes=self.notes, stats=dict(self.stats))


def switch_work(platform) -> list:
    """Per CPU of ``platform``, the invariant work of one context switch as the engine
    charges it with ``cost.context_switch_ns`` unset (costs.rs ``context_switch_work``): the
    cluster's measured figure (ns at its f_max) converted by its capacity, else the
    engine's default. Without a platform, the default (the trace's CPUs are the reference)."""
    from hetsched.sim import DEFAULT_CONTEXT_SWITCH_NS

    if platform is None:
        return [DEFAULT_CONTEXT_SWITCH_NS]
    out = [DEFAULT_CONTEXT_SWITCH_NS] * platform.nr_cpus
    for c in platform.clusters:
        for cpu in c.cpus:
            if c.context_switch_ns is not None:
                out[cpu] = c.context_switch_ns * c.capacity_orig // 1024
    return out


def _has(events, kind: int) -> bool:
    """Whether the trace has an event of this kind (store.py's code), from the columns."""
    if isinstance(events, EventStore):
        return events.has(kind)
    if kind == _st.FREQ:
        return any(isinstance(e, Freq) for e in events)
    return any(isinstance(e, Wakeup) and e.kind == _st.WAKE_NAMES[kind] for e in events)


def _forks(events):
    """The trace's Fork events, in time order."""
    if isinstance(events, EventStore):
        return events.iter_rows(events.indices(_st.FORK))
    return (e for e in events if isinstance(e, Fork))


#: the names of binder's pool threads (binder:PID_N, hwbinder's HwBinder:PID_N), which
#: take a transaction sent to their process rather than to a thread
BINDER_POOL_COMMS = ("binder:", "HwBinder:")


def _posts(ev: dict) -> bool:
    return "sem_post" in ev or "sem_post_sync" in ev


def build_replay(trace: Trace, options: Optional[ReplayOptions] = None) -> Replay:
    """The WorkloadSpec that replays ``trace`` and what the trace itself shows (busy time,
    makespan) for the tasks it keeps."""
    return _Builder(trace, options or ReplayOptions()).build()


def compare(rep: Replay, doc: dict) -> dict:
    """Trace vs simulation on the measured tasks (the recorded command's process tree for a
    ``hetsched record`` file, else every replayed task): total busy time, and makespan from
    the first start to the last run end (in the simulation: the last task's "end" mark,
    logged when its program is done)."""
    focus = {i for i, r in enumerate(rep.tasks) if r["focus"]} or set(range(len(rep.tasks)))
    names = {rep.tasks[i]["name"] for i in focus}
    sim_busy = sum(t.get("runtime_s", 0.0) for t in doc["tasks"] if t.get("name") in names)
    ends = [m[0] for m in doc.get("marks", []) if m[1] in focus]
    done = len(ends) == len(focus)
    sim_mk = (max(ends) - rep.first_start_ns) / 1e9 if done else None
    tr_busy, tr_mk = rep.busy_ns / 1e9, rep.makespan_ns / 1e9

    def err(a, b):
        return None if a is None or not b else (a - b) / b

    return {"tasks_measured": len(focus), "trace_busy_s": tr_busy, "sim_busy_s": sim_busy,
            "busy_error": err(sim_busy, tr_busy), "trace_makespan_s": tr_mk, "sim_makespan_s": sim_mk,
            "makespan_error": err(sim_mk, tr_mk), "measured_tasks_ended": done}
