//! Invariants of the scheduler state, checked by tests after every event.
//!
//! `Sim::check_invariants()` holds between two calls of `Sim::step()` (after the
//! reschedules and cpufreq updates an event causes have been processed) and after
//! `Sim::run_until()`. It reads only state that is visible outside core.rs; what it cannot
//! see (pending wakeup timers, the completion event of a running task, the cluster's OPP
//! as the scheduler knows it apart from the energy meter) is not checked.
//!
//! Checked:
//! * time: no event in the past; rq clocks not ahead of `now`; `clock_pelt <= clock`;
//!   `lost_idle_time <= clock_pelt` (PELT time never underflows); PELT signals not updated
//!   beyond their rq's PELT time;
//! * running: a CPU's `curr` is a Running task whose `cpu` is that CPU; every Running task
//!   is the `curr` of exactly one CPU; `cfs.curr` is `curr` when that is a fair task;
//! * CFS bookkeeping: `nr_running`, `load_weight` and `util_est` are the count, the sum of
//!   weights and the sum of util_est ewmas of the fair tasks with `se.on_rq` and
//!   `cpu == rq` (util_est without the delayed ones: DELAY_DEQUEUE keeps a sleeping task
//!   queued, its estimate gone); every such task but `cfs.curr` is in the timeline exactly
//!   once under its current vruntime, and the timeline holds nothing else; a task is
//!   `sched_delayed` only asleep under EEVDF;
//! * RT: `rt_queue` (rt.rs) holds exactly the runnable RT tasks of that CPU, keyed by their
//!   priority; the running task is the highest-priority one when any RT task is runnable
//!   (or a fair task, while the CPU's fair server is runnable);
//! * work conservation and idle: a CPU with runnable tasks runs one unless it is leaving an
//!   idle state; exactly one of {running, leaving idle, in an idle state} holds;
//! * affinity: a queued or running task is on an allowed CPU;
//! * PELT ranges: task and RT util in [0, 1024] (and a task's runnable_avg too); a cfs_rq's
//!   util is a sum over the tasks attached to it, so it may exceed 1024 transiently after
//!   migrations (as in the kernel) but not 1024 x the number of tasks attached there;
//! * energy meter: its per-CPU power state matches the rq (busy = running or leaving
//!   idle); per CPU, busy + idle residency = the time up to which the meter accounted it;
//!   frequency residency = busy time; its OPP is the cluster's current OPP; a busy
//!   CPU draws that OPP's power;
//! * statistics: a task's per-CPU cpu time sums to its `sum_exec_runtime`, plus, while it
//!   runs, the progress accounted past the kernel's last `update_curr()`.

use crate::core::{Rq, Sim, Task, TaskState};
use crate::energy::CpuPowerState;
use crate::workload::Policy;

macro_rules! ensure {
    ($cond:expr, $($arg:tt)*) => {
        if !$cond {
            return Err(format!($($arg)*));
        }
    };
}

impl Sim {
    /// Check every invariant of the scheduler state; the first violation is returned as a
    /// message naming the time, the CPU and/or task, and the values involved.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.check_time()
            .and_then(|_| self.check_running())
            .and_then(|_| self.check_queues())
            .and_then(|_| self.check_pelt())
            .and_then(|_| self.check_meter())
            .and_then(|_| self.check_stats())
            .map_err(|e| format!("invariant violated at t={} ns: {e}", self.now))
    }

    fn check_time(&self) -> Result<(), String> {
        if let Some(t) = self.events.peek_time() {
            ensure!(t >= self.now, "next event at {t} ns is in the past");
        }
        for rq in &self.rqs {
            let c = rq.cpu;
            ensure!(rq.clock <= self.now, "cpu{c}: rq clock {} ahead of now", rq.clock);
            ensure!(
                rq.clock_pelt <= rq.clock,
                "cpu{c}: clock_pelt {} > clock {}",
                rq.clock_pelt,
                rq.clock
            );
            ensure!(
                rq.lost_idle_time <= rq.clock_pelt,
                "cpu{c}: lost_idle_time {} > clock_pelt {}",
                rq.lost_idle_time,
                rq.clock_pelt
            );
            if let Some(w) = rq.waking_until {
                ensure!(w >= self.now, "cpu{c}: waking_until {w} in the past");
            }
        }
        Ok(())
    }

    fn check_running(&self) -> Result<(), String> {
        let n = self.rqs.len();
        for rq in &self.rqs {
            let c = rq.cpu;
            match rq.curr {
                Some(t) => {
                    ensure!((t as usize) < self.tasks.len(), "cpu{c}: curr {t} is not a task");
                    let task = &self.tasks[t as usize];
                    ensure!(
                        task.state == TaskState::Running,
                        "cpu{c}: curr {} ({}) is {:?}, not Running",
                        t,
                        task.name,
                        task.state
                    );
                    ensure!(
                        task.cpu == c,
                        "cpu{c}: curr {} ({}) has task.cpu = {}",
                        t,
                        task.name,
                        task.cpu
                    );
                    ensure!(
                        task.se.exec_start <= self.now,
                        "cpu{c}: curr {t} exec_start in the future"
                    );
                    ensure!(
                        rq.idle_state.is_none(),
                        "cpu{c}: runs task {t} but is in idle state {:?}",
                        rq.idle_state
                    );
                    ensure!(rq.waking_until.is_none(), "cpu{c}: runs task {t} while leaving idle");
                    if task.is_rt() {
                        ensure!(
                            rq.cfs.curr.is_none(),
                            "cpu{c}: RT task {t} runs but cfs.curr = {:?}",
                            rq.cfs.curr
                        );
                    } else {
                        ensure!(
                            rq.cfs.curr == Some(t),
                            "cpu{c}: fair task {t} runs but cfs.curr = {:?}",
                            rq.cfs.curr
                        );
                    }
                }
                None => {
                    ensure!(
                        rq.cfs.curr.is_none(),
                        "cpu{c}: nothing runs but cfs.curr = {:?}",
                        rq.cfs.curr
                    );
                    // exactly one of: leaving idle, in an idle state
                    ensure!(
                        rq.waking_until.is_some() != rq.idle_state.is_some(),
                        "cpu{c}: not running, waking_until = {:?}, idle_state = {:?}",
                        rq.waking_until,
                        rq.idle_state
                    );
                    // a throttled RT runqueue is off the rq (sched_rt_rq_dequeue): not runnable
                    let throttled_rt = if self.rt_bw[c].throttled {
                        rq.rt_queue
                            .iter()
                            .filter(|k| self.tasks[k.2 as usize].policy != Policy::Deadline)
                            .count() as u32
                    } else {
                        0
                    };
                    if rq.waking_until.is_none() {
                        ensure!(
                            rq.nr_running() == throttled_rt,
                            "cpu{c}: idle (state {:?}) with {} runnable tasks (lost wakeup)",
                            rq.idle_state,
                            rq.nr_running()
                        );
                    }
                }
            }
            if let Some(s) = rq.idle_state {
                let ns = self.platform.cluster_of(c).idle_states.len();
                ensure!(s < ns, "cpu{c}: idle state {s} of {ns}");
            }
        }
        for task in &self.tasks {
            let t = task.id;
            ensure!(task.cpu < n, "task {t}: cpu {} out of range", task.cpu);
            let on = self.rqs.iter().filter(|rq| rq.curr == Some(t)).count();
            if task.state == TaskState::Running {
                ensure!(on == 1, "task {t} ({}) is Running and the curr of {on} CPUs", task.name);
            } else {
                ensure!(
                    on == 0,
                    "task {t} ({}) is {:?} but the curr of {on} CPUs",
                    task.name,
                    task.state
                );
            }
            if matches!(task.state, TaskState::Running | TaskState::Runnable) {
                ensure!(
                    task.allowed & (1u64 << task.cpu) != 0,
                    "task {t} ({}) is {:?} on cpu{} outside its affinity {:#x}",
                    task.name,
                    task.state,
                    task.cpu,
                    task.allowed
                );
            }
        }
        Ok(())
    }

    fn check_queues(&self) -> Result<(), String> {
        for task in &self.tasks {
            self.check_task_on_rq(task)?;
        }
        for rq in &self.rqs {
            self.check_cfs_accounting(rq)?;
            self.check_cfs_timeline(rq)?;
            self.check_rt_queue(rq)?;
        }
        Ok(())
    }

    /// Where a task says it is queued agrees with its state: an RT task in exactly its own
    /// CPU's rt_queue while runnable, a fair task with se.on_rq.
    fn check_task_on_rq(&self, task: &Task) -> Result<(), String> {
        let t = task.id;
        let active = matches!(task.state, TaskState::Running | TaskState::Runnable);
        if task.is_rt() {
            ensure!(!task.se.on_rq, "RT task {t} has se.on_rq");
            let here = self
                .rqs
                .iter()
                .map(|rq| rq.rt_queue.iter().filter(|k| k.2 == t).count())
                .sum::<usize>();
            let mine = self.rqs[task.cpu].rt_queue.iter().filter(|k| k.2 == t).count();
            if active {
                ensure!(
                    mine == 1 && here == 1,
                    "RT task {t} ({:?}) is in {here} rt_queues ({mine} on its cpu{})",
                    task.state,
                    task.cpu
                );
            } else {
                ensure!(here == 0, "RT task {t} is {:?} but in {here} rt_queues", task.state);
            }
        } else {
            // a delayed task (DELAY_DEQUEUE) sleeps on the runqueue
            ensure!(
                task.se.on_rq == (active || task.se.sched_delayed),
                "fair task {t} ({}) is {:?} with se.on_rq = {}, sched_delayed = {}",
                task.name,
                task.state,
                task.se.on_rq,
                task.se.sched_delayed
            );
            ensure!(
                !task.se.sched_delayed || (task.state == TaskState::Sleeping && self.fair_eevdf),
                "fair task {t} ({}) is {:?} and sched_delayed (eevdf {})",
                task.name,
                task.state,
                self.fair_eevdf
            );
        }
        Ok(())
    }

    /// The cfs_rq's running counts and sums are those of the fair tasks queued on it, and
    /// each of them but cfs.curr is in the timeline under its vruntime.
    fn check_cfs_accounting(&self, rq: &Rq) -> Result<(), String> {
        let c = rq.cpu;
        let mut nr = 0u32;
        let mut delayed = 0u32;
        let mut load = 0u64;
        let mut util_est = 0u64;
        for task in &self.tasks {
            if task.policy != Policy::Other || !task.se.on_rq || task.cpu != c {
                continue;
            }
            nr += 1;
            delayed += task.se.sched_delayed as u32;
            load += task.se.weight;
            if !task.se.sched_delayed {
                util_est += task.se.avg.ewma(); // a delayed task's left at its sleep
            }
            let key = (task.se.vruntime, task.id);
            if rq.cfs.curr == Some(task.id) {
                ensure!(
                    !rq.cfs.timeline.iter().any(|k| k.1 == task.id),
                    "cpu{c}: cfs.curr {} is also in the timeline",
                    task.id
                );
            } else {
                ensure!(
                    rq.cfs.timeline.contains(&key),
                    "cpu{c}: queued fair task {} not in the timeline under its vruntime {}",
                    task.id,
                    task.se.vruntime
                );
            }
        }
        ensure!(
            rq.cfs.nr_running == nr,
            "cpu{c}: cfs.nr_running {} but {nr} fair tasks queued",
            rq.cfs.nr_running
        );
        ensure!(
            rq.cfs.nr_delayed == delayed,
            "cpu{c}: cfs.nr_delayed {} but {delayed} queued fair tasks are delayed",
            rq.cfs.nr_delayed
        );
        ensure!(
            rq.cfs.load_weight == load,
            "cpu{c}: cfs.load_weight {} but queued weights sum to {load}",
            rq.cfs.load_weight
        );
        ensure!(
            rq.cfs.util_est == util_est,
            "cpu{c}: cfs.util_est {} but queued ewmas sum to {util_est}",
            rq.cfs.util_est
        );
        let queued = nr as usize - rq.cfs.curr.is_some() as usize;
        ensure!(
            rq.cfs.timeline.len() == queued,
            "cpu{c}: timeline holds {} entries, {queued} fair tasks are queued besides curr",
            rq.cfs.timeline.len()
        );
        Ok(())
    }

    /// The timeline holds nothing stale, and its deadline and last-run orders and its
    /// augmented sums describe the same entities as its vruntime order.
    fn check_cfs_timeline(&self, rq: &Rq) -> Result<(), String> {
        let c = rq.cpu;
        // every entry is vetted as a task first: the walks below index self.tasks by it
        for &(v, t) in &rq.cfs.timeline {
            ensure!(
                (t as usize) < self.tasks.len(),
                "cpu{c}: timeline entry {t} is not a task"
            );
            let task = &self.tasks[t as usize];
            ensure!(
                task.policy == Policy::Other && task.se.on_rq && task.cpu == c && task.se.vruntime == v,
                "cpu{c}: stale timeline entry ({v}, {t}): task {:?} on cpu{} on_rq {} vruntime {}",
                task.policy,
                task.cpu,
                task.se.on_rq,
                task.se.vruntime
            );
        }
        let walked = rq.cfs.timeline.iter().fold((0i128, 0i128), |(s, l), &(v, t)| {
            let w = self.tasks[t as usize].se.weight as i128;
            (s + v as i128 * w, l + w)
        });
        for &(d, v, t) in rq.cfs.timeline.iter_by_deadline() {
            ensure!(
                rq.cfs.timeline.contains(&(v, t)) && self.tasks[t as usize].se.deadline == d,
                "cpu{c}: the timeline holds task {t} by deadline {d} (vruntime {v}), its deadline is {}",
                self.tasks[t as usize].se.deadline
            );
        }
        for &(ran, t) in rq.cfs.timeline.iter_by_last_run() {
            ensure!(
                self.tasks[t as usize].se.exec_start == ran,
                "cpu{c}: the timeline holds task {t} by exec_start {ran}, its exec_start is {}",
                self.tasks[t as usize].se.exec_start
            );
        }
        ensure!(
            rq.cfs.timeline.iter_by_last_run().len() == rq.cfs.timeline.len(),
            "cpu{c}: the timeline holds {} entities by exec_start, {} by vruntime",
            rq.cfs.timeline.iter_by_last_run().len(),
            rq.cfs.timeline.len()
        );
        ensure!(
            rq.cfs.timeline.iter_by_deadline().len() == rq.cfs.timeline.len(),
            "cpu{c}: the timeline holds {} entities by deadline, {} by vruntime",
            rq.cfs.timeline.iter_by_deadline().len(),
            rq.cfs.timeline.len()
        );
        ensure!(
            rq.cfs.timeline.sums(0) == walked,
            "cpu{c}: the timeline's sums {:?} are not its entities' {walked:?}",
            rq.cfs.timeline.sums(0)
        );
        Ok(())
    }

    /// The rt_queue holds each of this CPU's runnable RT tasks once at its priority level,
    /// and the CPU runs the first of them unless the fair server or RT throttling says not.
    fn check_rt_queue(&self, rq: &Rq) -> Result<(), String> {
        let c = rq.cpu;
        let mut seen = std::collections::BTreeSet::new();
        for &(neg, _, t) in rq.rt_queue.iter() {
            ensure!(
                (t as usize) < self.tasks.len(),
                "cpu{c}: rt_queue entry {t} is not a task"
            );
            let task = &self.tasks[t as usize];
            ensure!(seen.insert(t), "cpu{c}: RT task {t} queued twice");
            ensure!(task.is_rt(), "cpu{c}: fair task {t} in rt_queue");
            ensure!(task.cpu == c, "cpu{c}: rt_queue holds task {t} of cpu{}", task.cpu);
            ensure!(
                -neg == task.prio_level() as i64,
                "cpu{c}: RT task {t} queued at level {} but its level is {}",
                -neg,
                task.prio_level()
            );
        }
        if let (Some(&(_, _, first)), Some(cur)) = (rq.rt_queue.first(), rq.curr) {
            // a runnable fair server runs fair tasks ahead of RT (deadline.rs); a
            // throttled RT runqueue's tasks wait (android-4.19, rt.rs)
            let served = self.fair_server_runnable(c) && !self.tasks[cur as usize].is_rt();
            let throttled = self.rt_bw[c].throttled && self.tasks[first as usize].policy != Policy::Deadline;
            ensure!(
                first == cur || served || throttled,
                "cpu{c}: runs task {cur} while RT task {first} has the highest priority on the queue"
            );
        }
        Ok(())
    }

    fn check_pelt(&self) -> Result<(), String> {
        const MAX: u64 = 1024;
        for rq in &self.rqs {
            let c = rq.cpu;
            let pelt_now = rq.clock_pelt - rq.lost_idle_time;
            ensure!(
                rq.cfs.avg.last_update_time <= pelt_now,
                "cpu{c}: cfs PELT updated to {} beyond the PELT clock {pelt_now}",
                rq.cfs.avg.last_update_time
            );
            ensure!(
                rq.avg_rt.last_update_time <= pelt_now,
                "cpu{c}: rt PELT updated to {} beyond the PELT clock {pelt_now}",
                rq.avg_rt.last_update_time
            );
            ensure!(
                rq.cfs.avg.period_contrib < 1024,
                "cpu{c}: cfs period_contrib {}",
                rq.cfs.avg.period_contrib
            );
            ensure!(rq.avg_rt.util_avg <= MAX, "cpu{c}: rt util_avg {}", rq.avg_rt.util_avg);
            // the tasks whose PELT signal is attached to this cfs_rq
            let attached = self
                .tasks
                .iter()
                .filter(|t| t.policy == Policy::Other && t.state != TaskState::Unstarted && t.cpu == c)
                .count() as u64;
            ensure!(
                rq.cfs.avg.util_avg <= MAX * attached.max(1),
                "cpu{c}: cfs util_avg {} with {attached} attached tasks",
                rq.cfs.avg.util_avg
            );
        }
        for task in &self.tasks {
            let a = &task.se.avg;
            let t = task.id;
            ensure!(a.util_avg <= MAX, "task {t}: util_avg {}", a.util_avg);
            ensure!(a.runnable_avg <= MAX, "task {t}: runnable_avg {}", a.runnable_avg);
            ensure!(task.se.avg.ewma() <= MAX, "task {t}: util_est {}", task.se.avg.ewma());
            ensure!(a.period_contrib < 1024, "task {t}: period_contrib {}", a.period_contrib);
            if task.policy == Policy::Other && task.se.on_rq {
                let rq = &self.rqs[task.cpu];
                let pelt_now = rq.clock_pelt - rq.lost_idle_time;
                ensure!(
                    a.last_update_time <= pelt_now,
                    "task {t}: PELT updated to {} beyond cpu{}'s PELT clock {pelt_now}",
                    a.last_update_time,
                    task.cpu
                );
            }
        }
        Ok(())
    }

    fn check_meter(&self) -> Result<(), String> {
        let p = &self.platform;
        for (ci, cl) in p.clusters.iter().enumerate() {
            let cm = &self.meter.clusters[ci];
            ensure!(
                cm.last <= self.now,
                "cluster {ci}: meter synced to {} beyond now",
                cm.last
            );
            ensure!(
                cm.opp < cl.opps.len(),
                "cluster {ci}: meter OPP {} out of range",
                cm.opp
            );
            // the cluster's own state: a switcher platform's cluster may back no CPU now
            let khz = cl.opps[self.clusters[ci].opp].khz;
            ensure!(
                cl.opps[cm.opp].khz == khz,
                "cluster {ci}: meter at {} kHz, cluster at {khz} kHz",
                cl.opps[cm.opp].khz
            );
            for &cpu in &cl.cpus {
                let m = &self.meter.cpus[cpu];
                let rq = &self.rqs[cpu];
                let busy = rq.curr.is_some() || rq.waking_until.is_some();
                match m.state {
                    CpuPowerState::Busy => {
                        ensure!(busy, "cpu{cpu}: meter busy, rq idle in state {:?}", rq.idle_state);
                        ensure!(
                            m.power_uw == cl.opps[cm.opp].power_uw,
                            "cpu{cpu}: busy at {} uW, OPP power {}",
                            m.power_uw,
                            cl.opps[cm.opp].power_uw
                        );
                    }
                    CpuPowerState::Idle(s) => {
                        ensure!(
                            !busy && rq.idle_state == Some(s),
                            "cpu{cpu}: meter idle in state {s}, rq curr {:?} waking {:?} idle {:?}",
                            rq.curr,
                            rq.waking_until,
                            rq.idle_state
                        );
                        ensure!(
                            m.effective_idle <= s,
                            "cpu{cpu}: effective idle state {} deeper than chosen {s}",
                            m.effective_idle
                        );
                    }
                }
                let (freq, idle) = self.meter.residency_ns_all_cores(cpu);
                ensure!(
                    m.busy_ns + idle == m.last,
                    "cpu{cpu}: busy {} + idle {idle} ns != {} ns accounted by the meter",
                    m.busy_ns,
                    m.last
                );
                ensure!(m.last <= self.now, "cpu{cpu}: meter accounted to {} beyond now", m.last);
                ensure!(
                    freq == m.busy_ns,
                    "cpu{cpu}: frequency residency {freq} != busy {}",
                    m.busy_ns
                );
            }
        }
        Ok(())
    }

    fn check_stats(&self) -> Result<(), String> {
        for task in &self.tasks {
            let sum: u64 = task.stats.cpu_time_ns.iter().sum();
            // a running task's progress may be accounted past the kernel's last
            // update_curr() (account_progress at the end of a run event), never before it
            let ahead = if self.rqs[task.cpu].curr == Some(task.id) {
                ensure!(
                    task.se.exec_start <= task.progress_at && task.progress_at <= self.now,
                    "task {}: progress accounted to {} outside exec_start {}..now {}",
                    task.id,
                    task.progress_at,
                    task.se.exec_start,
                    self.now
                );
                task.progress_at - task.se.exec_start
            } else {
                0
            };
            ensure!(
                sum == task.se.sum_exec_runtime + ahead,
                "task {}: cpu time {sum} != sum_exec_runtime {} + progress ahead of it {ahead}",
                task.id,
                task.se.sum_exec_runtime
            );
            ensure!(
                task.stats.work_completed <= task.stats.work_done,
                "task {}: work completed {} > work done {}",
                task.id,
                task.stats.work_completed,
                task.stats.work_done
            );
        }
        Ok(())
    }
}
