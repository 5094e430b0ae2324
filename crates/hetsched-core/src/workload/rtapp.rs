//! The rt-app program interpreter: userspace, not the kernel. A task runs its program from
//! its current position until it needs the CPU (run, runtime, memrun), blocks (sleep, a
//! timer, a held lock, ...), gives the CPU up (yield, a class or affinity change) or ends;
//! rt-app's own bookkeeping (per-phase loops, activations, slack, wakeup latency) is
//! recorded on the way. The synchronisation objects are sync.rs.
use crate::core::*;
use crate::deadline::DlEntity;
use crate::error::{config, Result};
use crate::event::EventKind;
use crate::fair::SchedEntity;
use crate::fair::{nice_to_weight, weight_to_wmult};
use crate::limits::NO_PROGRESS_STEPS;
use crate::platform::Platform;
use crate::sync::Go;
use crate::workload::{Ev, PerfSpec, Policy, TaskSpec, TimerMode};

/// What an event leaves the program interpreter to do: take the next event, or stop (the
/// task has work for the CPU, blocked, gave the CPU up, or the program ended).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Step {
    Next,
    Stop,
}

/// The event advance_program() just took: it moves `ev` past an event before running it.
fn taken_event(task: &Task) -> &Ev {
    &task.spec.phases[task.phase].events[task.ev - 1]
}

impl Sim {
    /// Run the task's program from its current position until it needs the CPU (run,
    /// runtime, memrun), blocks (sleep, timer, a held lock, ...), gives the CPU up (yield,
    /// a class or affinity change) or ends. Called with the task running on `cpu`.
    pub(crate) fn advance_program(&mut self, cpu: usize, t: TaskId) {
        self.last_program = t;
        loop {
            // a loop of events that take no time would run here without end
            self.steps_at_now += 1;
            if self.steps_at_now > NO_PROGRESS_STEPS {
                self.stop_no_progress(t);
                self.block_sync(cpu, t);
                return;
            }
            let task = &mut self.tasks[t as usize];
            let Some(ev) = task.spec.phases[task.phase].events.get(task.ev) else {
                if self.program_end_of_phase(cpu, t) == Step::Stop {
                    return;
                }
                continue;
            };
            task.ev += 1;
            // the variant only: cloning the event (an enum with setattr's and yield's
            // heap-held fields) at every step cost more than the step, so each helper
            // copies its payload out in place
            let step = match ev {
                Ev::Run(_) | Ev::Memrun(_) | Ev::Runtime(_) => self.program_run(cpu, t),
                Ev::Sleep(_) | Ev::SleepUntil(_) | Ev::Iowait(_) | Ev::Timer(_) => self.program_sleep(cpu, t),
                Ev::Lock(_)
                | Ev::Unlock(_)
                | Ev::Wait(_)
                | Ev::Signal(_)
                | Ev::Broad(_)
                | Ev::Sync(_)
                | Ev::Barrier(_)
                | Ev::SemPost(_)
                | Ev::SemPostSync(_)
                | Ev::SemWait(_) => self.program_sync(cpu, t),
                Ev::Fork(_) | Ev::Yield(_) | Ev::Setattr(_) | Ev::Mark(_) => self.program_misc(cpu, t),
            };
            if step == Step::Stop {
                return;
            }
        }
    }

    /// Past a phase's last event: its loop count, then the next phase, then the program's
    /// own loop count, which ends the task.
    fn program_end_of_phase(&mut self, cpu: usize, t: TaskId) -> Step {
        let task = &mut self.tasks[t as usize];
        let phase = &task.spec.phases[task.phase];
        task.ev = 0;
        task.phase_iter += 1;
        task.stats.phases[task.phase].loops += 1;
        if phase.loop_ >= 0 && task.phase_iter >= phase.loop_ {
            task.phase_iter = 0;
            task.phase += 1;
            if task.phase >= task.spec.phases.len() {
                task.phase = 0;
                task.iter += 1;
                if task.spec.loop_ >= 0 && task.iter >= task.spec.loop_ {
                    self.task_exit(cpu, t);
                    return Step::Stop;
                }
            }
        }
        Step::Next
    }

    /// run, memrun, runtime: the task keeps the CPU until the work is done (an event of
    /// no length is skipped).
    fn program_run(&mut self, cpu: usize, t: TaskId) -> Step {
        let task = &mut self.tasks[t as usize];
        match *taken_event(task) {
            Ev::Run(0) | Ev::Memrun(0) => return Step::Next,
            Ev::Run(w) => {
                task.cur = Cur::Run;
                task.work_left = w;
                task.work_armed = w;
            }
            Ev::Memrun(w) => {
                task.cur = Cur::Memrun;
                task.work_left = w;
                task.work_armed = w;
            }
            Ev::Runtime(ns) => {
                if ns == 0 {
                    return Step::Next;
                }
                task.cur = Cur::Runtime;
                task.runtime_end = self.now + ns;
            }
            _ => unreachable!("advance_program() sends run events only"),
        }
        self.arm_completion(cpu);
        Step::Stop
    }

    /// sleep, sleep-until, iowait and timer: the task blocks until a time (a timer or a
    /// sleep-until already past lets it go on).
    fn program_sleep(&mut self, cpu: usize, t: TaskId) -> Step {
        let task = &mut self.tasks[t as usize];
        match *taken_event(task) {
            Ev::Sleep(ns) => {
                task.cur = Cur::None;
                self.block(cpu, t, self.now + ns);
                Step::Stop
            }
            Ev::SleepUntil(at) => {
                task.cur = Cur::None;
                if at > self.now {
                    self.block(cpu, t, at);
                    return Step::Stop;
                }
                Step::Next
            }
            Ev::Iowait(ns) => {
                task.cur = Cur::None;
                task.iowait_since = Some(self.now);
                task.in_iowait = true;
                self.block(cpu, t, self.now + ns);
                Step::Stop
            }
            Ev::Timer(ts) => {
                task.cur = Cur::None;
                let now = self.now;
                // rt-app: the first use counts from the thread's start (t_first)
                let start = self.tasks[t as usize].spec.delay_ns;
                let next = self.timers[ts.id].unwrap_or(start) + ts.period_ns;
                self.timers[ts.id] = Some(next);
                let task = &mut self.tasks[t as usize];
                let slack = next as i128 - now as i128;
                task.stats.activations += 1;
                task.stats.slack_sum_ns += slack;
                let ps = &mut task.stats.phases[task.phase];
                ps.activations += 1;
                ps.slack_sum_ns += slack;
                ps.slack_min_ns = Some(ps.slack_min_ns.map_or(slack as i64, |m| m.min(slack as i64)));
                if now < next {
                    task.timer_wake = true;
                    self.block(cpu, t, next);
                    return Step::Stop;
                }
                task.stats.missed_activations += 1;
                if ts.mode == TimerMode::Relative {
                    self.timers[ts.id] = Some(now);
                }
                Step::Next
            }
            _ => unreachable!("advance_program() sends sleep events only"),
        }
    }

    /// The synchronisation objects (sync.rs). The tasks an operation releases wake before
    /// the caller blocks, as pthread_cond_wait() unlocks the mutex before it sleeps.
    fn program_sync(&mut self, cpu: usize, t: TaskId) -> Step {
        let task = &self.tasks[t as usize];
        match *taken_event(task) {
            Ev::Lock(m) => {
                if self.sync.lock(m, t) == Go::Block {
                    self.block_wait(cpu, t);
                    return Step::Stop;
                }
            }
            Ev::Unlock(m) => {
                self.sync.unlock(m, t, &mut self.wake_buf);
                self.wake_released(cpu, false);
            }
            Ev::Wait(c) => {
                self.sync.wait(c.cond, c.mutex, t, &mut self.wake_buf);
                self.wake_released(cpu, false);
                self.block_wait(cpu, t);
                return Step::Stop;
            }
            ref ev @ (Ev::Signal(c) | Ev::Broad(c)) => {
                let broadcast = matches!(ev, Ev::Broad(_));
                self.sync.signal(c, broadcast, &mut self.wake_buf);
                self.wake_released(cpu, false);
                // a waiter requeued on a held mutex may close a cycle
                self.check_mutex_cycle();
            }
            Ev::Sync(c) => {
                // rt-app's sig_and_wait: signal, then wait with the mutex it holds
                self.sync.signal(c.cond, false, &mut self.wake_buf);
                self.sync.wait(c.cond, c.mutex, t, &mut self.wake_buf);
                self.wake_released(cpu, false);
                self.block_wait(cpu, t);
                return Step::Stop;
            }
            Ev::Barrier(b) => {
                let go = self.sync.barrier(b, t, &mut self.wake_buf);
                self.wake_released(cpu, false);
                if go == Go::Block {
                    self.block_wait(cpu, t);
                    return Step::Stop;
                }
            }
            Ev::SemPost(x) => {
                self.sync.sem_post(x, &mut self.wake_buf);
                self.wake_released(cpu, false);
            }
            Ev::SemPostSync(x) => {
                self.sync.sem_post(x, &mut self.wake_buf);
                self.wake_released(cpu, true);
            }
            Ev::SemWait(x) => {
                if self.sync.sem_wait(x, t) == Go::Block {
                    self.block_wait(cpu, t);
                    return Step::Stop;
                }
            }
            _ => unreachable!("advance_program() sends synchronisation events only"),
        }
        Step::Next
    }

    /// fork, yield, setattr and mark: a yield or a class or affinity change may give the
    /// CPU up, and a fork past the task limit stops the run (limits.rs).
    fn program_misc(&mut self, cpu: usize, t: TaskId) -> Step {
        let task = &mut self.tasks[t as usize];
        match *taken_event(task) {
            Ev::Mark(m) => self.marks.push((self.now, t, m)),
            Ev::Fork(k) => {
                if !self.fork(t, k) {
                    self.block_sync(cpu, t);
                    return Step::Stop;
                }
            }
            Ev::Yield(_) => {
                task.cur = Cur::None;
                if self.sched_yield(cpu, t) {
                    return Step::Stop;
                }
            }
            Ev::Setattr(ref a) => {
                let a = a.clone();
                task.cur = Cur::None;
                if self.setattr(cpu, t, &a) {
                    return Step::Stop;
                }
            }
            _ => unreachable!("advance_program() sends fork, yield, setattr and mark only"),
        }
        Step::Next
    }

    pub(crate) fn block(&mut self, cpu: usize, t: TaskId, until: u64) {
        self.dequeue_task(cpu, t, true);
        let task = &mut self.tasks[t as usize];
        task.state = TaskState::Sleeping;
        task.wake_due = Some(until);
        self.trace_slice_end(cpu, t);
        self.rqs[cpu].timers.insert((until, t));
        self.events.push(until, EventKind::Wakeup { task: t });
        self.resched_cpu(cpu);
    }

    /// Block on a synchronisation object: no timer, another task's operation wakes it.
    pub(crate) fn block_sync(&mut self, cpu: usize, t: TaskId) {
        self.dequeue_task(cpu, t, true);
        let task = &mut self.tasks[t as usize];
        task.cur = Cur::None;
        task.state = TaskState::Sleeping;
        task.wake_due = None;
        self.trace_slice_end(cpu, t);
        self.resched_cpu(cpu);
    }

    /// Wake the tasks the synchronisation operation just done released into `wake_buf`
    /// (most release none: a post nobody waits for).
    #[inline]
    fn wake_released(&mut self, cpu: usize, wf_sync: bool) {
        if !self.wake_buf.is_empty() {
            self.wake_sync(cpu, wf_sync);
        }
    }

    /// Wake the tasks in `wake_buf` (wakeup latency counts from now), with WF_SYNC when
    /// `wf_sync` (futex wakeups, FUTEX_WAKE and FUTEX_CMP_REQUEUE's, pass none).
    fn wake_sync(&mut self, cpu: usize, wf_sync: bool) {
        let mut wake = std::mem::take(&mut self.wake_buf);
        // the running task on `cpu` does the wakeups: the placement's cost is its CPU's
        self.waker_cpu = Some(cpu);
        for &w in &wake {
            if self.tasks[w as usize].state == TaskState::Sleeping {
                self.tasks[w as usize].wake_due = Some(self.now);
                self.try_to_wake_up(w, Some(cpu), wf_sync);
            }
        }
        self.waker_cpu = None;
        wake.clear();
        self.wake_buf = wake;
    }

    pub(crate) fn on_complete(&mut self, cpu: usize) {
        let Some(t) = self.rqs[cpu].curr else { return };
        // the end of a run event is the program's, which the kernel does not see: no
        // rq clock, no update_curr() (whose slice check would otherwise end slices here,
        // as an hrtick would, rather than at the tick, and differently for the same work
        // written as one run event or as many); the kernel paths the program takes next
        // (a block, a wakeup, a yield) do their own
        self.account_progress(cpu);
        let task = &mut self.tasks[t as usize];
        match task.cur {
            Cur::Run | Cur::Memrun => {
                if task.work_left > 0 {
                    // the CPU slowed down since the event was armed (or truncation of
                    // intermediate accounting left a few units): finish at today's speed
                    self.arm_completion(cpu);
                    return;
                }
                task.stats.work_completed += task.work_armed;
            }
            Cur::Runtime => {
                if self.now < task.runtime_end {
                    self.arm_completion(cpu);
                    return;
                }
            }
            Cur::None => {}
        }
        task.cur = Cur::None;
        self.advance_program(cpu, t);
    }

    /// Arm the completion event of the running task's current event at the CPU's speed.
    pub(crate) fn arm_completion(&mut self, cpu: usize) {
        let rq = &mut self.rqs[cpu];
        rq.gen = rq.gen.wrapping_add(1);
        let gen = rq.gen;
        let Some(t) = rq.curr else { return };
        let task = &self.tasks[t as usize];
        // the kernel's work queued on the CPU (costs.rs) comes first
        let overhead = self.rqs[cpu].overhead_left;
        let kernel = if overhead == 0 {
            0
        } else {
            self.view().cost_ns(cpu, overhead)
        };
        let at = kernel
            + match task.cur {
                Cur::Run => match &task.perf {
                    None => {
                        let cap = self.platform.capacity_orig(cpu);
                        let khz = self.khz(cpu);
                        let fmax = self.platform.cluster_of(cpu).fmax_khz;
                        self.now + mul_div_ceil(task.work_left, 1024 * fmax, cap * khz)
                    }
                    Some(pf) => {
                        let ci = self.platform.cpu_cluster[cpu];
                        let rate = pf.rate_q32[ci][self.clusters[ci].opp];
                        self.now + time_for(task.work_left, rate, task.cold_left, pf.cold_q32)
                    }
                },
                Cur::Memrun => self.now + task.work_left,
                // rt-app's runtime loops on the clock: the kernel's work only delays an end
                // it would pass
                Cur::Runtime => task.runtime_end.max(self.now + kernel) - kernel,
                Cur::None => self.now,
            };
        self.events.push_complete(at, cpu, gen);
    }
}

/// rt-app's per-phase log columns, summed over the phase's loops.
#[derive(Debug, Clone, Default)]
pub struct PhaseStats {
    pub loops: u64,
    pub activations: u64,
    pub slack_min_ns: Option<i64>,
    pub slack_sum_ns: i128,
    pub wu_lat_max_ns: u64,
    pub wu_lat_sum_ns: u64,
    pub wakeups: u64,
    pub run_ns: u64,
}

/// The task performance model resolved on the platform: work per ns (Q32) at each
/// cluster's OPPs, and the cold-cache state after a migration.
#[derive(Debug, Clone)]
pub struct PerfModel {
    pub(crate) rate_q32: Vec<Vec<u64>>,
    pub(crate) cache_ns: u64,
    /// 1 / (1 + cache_slowdown) in Q32
    pub(crate) cold_q32: u64,
}

const Q32: u64 = 1 << 32;

/// A task in its initial state from its spec; `field` names it in errors.
pub(crate) fn make_task(id: TaskId, t: &TaskSpec, platform: &Platform, field: String) -> Result<Task> {
    let n = platform.nr_cpus();
    let allowed = cpus_mask(t.cpus.as_deref(), n, &field)?;
    let weight = nice_to_weight(t.nice);
    let uclamp = match t.policy {
        Policy::Other => [t.util_min.unwrap_or(0) as u64, t.util_max.unwrap_or(1024) as u64],
        _ => [t.util_min.unwrap_or(1024) as u64, t.util_max.unwrap_or(1024) as u64],
    };
    let perf = match &t.perf {
        Some(pf) => Some(Box::new(perf_model(pf, platform, &field)?)),
        None => None,
    };
    let dl = if t.policy == Policy::Deadline {
        let period = if t.dl_period_ns == 0 {
            t.dl_runtime_ns
        } else {
            t.dl_period_ns
        };
        DlEntity {
            dl_runtime: t.dl_runtime_ns,
            dl_period: period,
            dl_deadline: if t.dl_deadline_ns == 0 {
                period
            } else {
                t.dl_deadline_ns
            },
            runtime: 0,
            deadline: 0,
        }
    } else {
        DlEntity::default()
    };
    Ok(Task {
        id,
        spec_index: id,
        name: t.name.clone(),
        policy: t.policy,
        nice: t.nice,
        rt_priority: t.rt_priority,
        allowed,
        state: if t.start {
            TaskState::Unstarted
        } else {
            TaskState::Template
        },
        cpu: allowed.trailing_zeros() as usize,
        se: SchedEntity {
            weight,
            wmult: weight_to_wmult(weight),
            slice: t.slice_ns.unwrap_or(0),
            ..Default::default()
        },
        spec: t.clone(),
        iter: 0,
        phase: 0,
        phase_iter: 0,
        ev: 0,
        cur: Cur::None,
        work_left: 0,
        work_armed: 0,
        runtime_end: 0,
        progress_at: 0,
        wake_due: None,
        queued_since: 0,
        rr_left_ns: 0,
        uclamp,
        uclamp_req: uclamp,
        uclamp_min_user: t.util_min.is_some(),
        stats: TaskStats {
            cpu_time_ns: vec![0; n],
            phases: vec![PhaseStats::default(); t.phases.len()],
            ..Default::default()
        },
        perf,
        cold_left: 0,
        last_ran: usize::MAX,
        dl,
        iowait_since: None,
        in_iowait: false,
        forks: 0,
        timer_wake: false,
        misfit: false,
        sync_blocked: false,
    })
}

pub(crate) fn cpus_mask(cpus: Option<&[usize]>, n: usize, field: &str) -> Result<u64> {
    let all_mask = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
    let Some(list) = cpus else { return Ok(all_mask) };
    let mut m = 0u64;
    for &c in list {
        if c >= n {
            return Err(config(
                "workload",
                format!("{field}.cpus"),
                format!("CPU numbers below {n} (the platform's CPU count)"),
            ));
        }
        m |= 1 << c;
    }
    if m == 0 {
        return Err(config("workload", format!("{field}.cpus"), "a non-empty CPU list"));
    }
    Ok(m)
}

/// Resolve the performance model on the platform: at cluster c and frequency f, one unit
/// of work takes (1 - mem_frac) * F / (u_c * f) + mem_frac ns, F the biggest cluster's
/// f_max and u_c the speed per Hz relative to the biggest core.
pub(crate) fn perf_model(pf: &PerfSpec, platform: &Platform, field: &str) -> Result<PerfModel> {
    let fbig = platform
        .clusters
        .iter()
        .max_by_key(|c| c.capacity_orig)
        .map_or(1, |c| c.fmax_khz) as f64;
    if let Some(ipc) = &pf.ipc {
        if ipc.len() != platform.clusters.len() {
            return Err(config(
                "workload",
                format!("{field}.perf.ipc"),
                format!("one speed ratio per cluster ({})", platform.clusters.len()),
            ));
        }
    }
    let rate_q32 = platform
        .clusters
        .iter()
        .enumerate()
        .map(|(ci, c)| {
            let uarch = c.capacity_orig as f64 * fbig / (1024.0 * c.fmax_khz as f64);
            let u = match &pf.ipc {
                Some(v) => v[ci],
                None => uarch.powf(pf.ipc_exp),
            };
            c.opps
                .iter()
                .map(|o| {
                    let ns_per_work = (1.0 - pf.mem_frac) * fbig / (u * o.khz as f64) + pf.mem_frac;
                    ((Q32 as f64 / ns_per_work).round() as u64).max(1)
                })
                .collect()
        })
        .collect();
    Ok(PerfModel {
        rate_q32,
        cache_ns: pf.cache_ns,
        cold_q32: ((Q32 as f64) / (1.0 + pf.cache_slowdown)).round() as u64,
    })
}

/// Work done in `delta` ns at `rate` (Q32 work/ns), the first `cold` units at `rate * cold_q`.
pub(crate) fn work_in(delta: u64, rate: u64, cold: &mut u64, cold_q: u64) -> u64 {
    let mut d = delta;
    let mut done = 0;
    if *cold > 0 {
        let cold_rate = ((rate as u128 * cold_q as u128) >> 32).max(1);
        let w = ((d as u128 * cold_rate) >> 32) as u64;
        if w < *cold {
            *cold -= w;
            return w;
        }
        let t_cold = shl32_div_ceil(*cold, cold_rate as u64) as u64;
        done = *cold;
        *cold = 0;
        d = d.saturating_sub(t_cold);
    }
    done + ((d as u128 * rate as u128) >> 32) as u64
}

/// Time to run `work` at `rate`, the first `cold` units at `rate * cold_q` (ceiling).
#[inline]
pub(crate) fn time_for(work: u64, rate: u64, cold: u64, cold_q: u64) -> u64 {
    let c = cold.min(work);
    let mut t = 0u128;
    if c > 0 {
        let cold_rate = ((rate as u128 * cold_q as u128) >> 32).max(1);
        t += shl32_div_ceil(c, cold_rate as u64) as u128;
    }
    t += shl32_div_ceil(work - c, rate) as u128;
    t.min(u64::MAX as u128 / 2) as u64
}

/// ceil(x * 2^32 / d) in 128 bits; in 64 when x * 2^32 fits, which it does for any run
/// shorter than 4.3 s of work: the 128-bit division is a library call many times slower.
#[inline]
fn shl32_div_ceil(x: u64, d: u64) -> u128 {
    if x >> 32 == 0 {
        (x << 32).div_ceil(d) as u128
    } else {
        ((x as u128) << 32).div_ceil(d as u128)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shl32_div_ceil_is_the_128_bit_ceiling_on_both_sides_of_its_fast_path() {
        // worked by hand: 2^32 / 3 = 1431655765.33.., 2^32 * (2^32 - 1) / 2^32 = 2^32 - 1
        assert_eq!(shl32_div_ceil(1, 3), 1_431_655_766);
        assert_eq!(shl32_div_ceil(u32::MAX as u64, 1 << 32), u32::MAX as u128);
        // just past the fast path: 2^32 * 2^32 / 7 = 2635249153387078802.28..
        assert_eq!(shl32_div_ceil(1 << 32, 7), 2_635_249_153_387_078_803);
        for &x in &[0u64, 1, 975, (1 << 32) - 1, 1 << 32, u64::MAX] {
            for &d in &[1u64, 2, 3, 1 << 31, (1 << 32) + 1, u64::MAX] {
                assert_eq!(
                    shl32_div_ceil(x, d),
                    ((x as u128) << 32).div_ceil(d as u128),
                    "x {x} d {d}"
                );
            }
        }
    }

    #[test]
    fn time_for_runs_the_cold_units_at_the_cold_rate_then_the_rest() {
        // rate 1 unit/ns (Q32 1<<32), cold at half speed (cold_q 1<<31): 100 cold units take
        // 200 ns, the 900 warm ones 900 ns
        assert_eq!(time_for(1000, 1 << 32, 100, 1 << 31), 1100);
        // and work_in is its inverse: 1100 ns do the 1000 units, leaving nothing cold
        let mut cold = 100;
        assert_eq!(work_in(1100, 1 << 32, &mut cold, 1 << 31), 1000);
        assert_eq!(cold, 0);
    }
}
