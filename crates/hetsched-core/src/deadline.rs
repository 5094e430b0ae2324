//! SCHED_DEADLINE's bandwidth enforcement, after kernel/sched/deadline.c (v6.12): the
//! CBS runtime is consumed scaled by frequency and capacity (`update_curr_dl`, in
//! `update_curr`), a task that used it up is throttled until its next period
//! (`start_dl_timer`), and the dl timer replenishes it (`replenish_dl_entity`). Placement
//! and the EDF order on the runqueue are rt.rs's (the deadline tasks share its queue at a
//! level above every RT priority); rt.rs lists the simplifications.
//!
//! docs/mechanisms/deadline.md works the budget and the overflow test by hand.
use crate::core::*;
use crate::event::EventKind;

/// SCHED_DEADLINE parameters and CBS state (sched_dl_entity)
#[derive(Debug, Clone, Copy, Default)]
pub struct DlEntity {
    pub dl_runtime: u64,
    pub dl_deadline: u64,
    pub dl_period: u64,
    pub runtime: i64,
    pub deadline: u64,
}

impl Sim {
    /// The deadline task ran out of runtime: off the runqueue until the dl timer fires at
    /// the start of its next period (start_dl_timer()).
    pub(crate) fn dl_throttle(&mut self, cpu: usize, t: TaskId) {
        self.trace_slice_end(cpu, t);
        self.dequeue_task(cpu, t, false);
        self.rqs[cpu].curr = None;
        let task = &mut self.tasks[t as usize];
        task.state = TaskState::Throttled;
        task.stats.dl_throttled += 1;
        let dl = &task.dl;
        let at = (dl.deadline + dl.dl_period)
            .saturating_sub(dl.dl_deadline)
            .max(self.now);
        self.events.push(at, EventKind::Wakeup { task: t });
    }

    /// dl_task_timer() -> replenish_dl_entity(): postpone the deadline by periods until the
    /// runtime is positive again, and queue the task back on its CPU.
    pub(crate) fn dl_replenish(&mut self, t: TaskId) {
        let task = &mut self.tasks[t as usize];
        let dl = &mut task.dl;
        while dl.runtime <= 0 {
            dl.deadline += dl.dl_period;
            dl.runtime += dl.dl_runtime as i64;
        }
        if dl.deadline < self.now {
            dl.deadline = self.now + dl.dl_deadline;
            dl.runtime = dl.dl_runtime as i64;
        }
        if task.allowed & (1 << task.cpu) == 0 {
            // its CPU left the task's affinity while it was throttled (hotplug)
            task.cpu = select_fallback_rq(task);
        }
        let cpu = task.cpu;
        let rq = &self.rqs[cpu];
        if rq.waking_until.is_some() || (rq.curr.is_none() && rq.idle_state.is_some() && self.wake_latency_ns(cpu) > 0)
        {
            let task = &mut self.tasks[t as usize];
            task.state = TaskState::Waking;
            self.rqs[cpu].pending.push((t, false));
            self.kick_idle_cpu(cpu);
            return;
        }
        self.enqueue_task(cpu, t, false, false);
        self.check_preempt(cpu, t);
    }

    /// setup_new_dl_entity() / update_dl_entity() at a wakeup: a new period unless the old
    /// deadline is still ahead and the remaining runtime fits the bandwidth.
    pub(crate) fn update_dl_entity(&mut self, t: TaskId) {
        let now = self.now;
        let task = &mut self.tasks[t as usize];
        let dl = &mut task.dl;
        let overflow = dl.deadline <= now
            || (dl.runtime.max(0) as u128) * (dl.dl_deadline as u128)
                > ((dl.deadline - now) as u128) * (dl.dl_runtime as u128);
        if task.state == TaskState::Unstarted || overflow {
            dl.deadline = now + dl.dl_deadline;
            dl.runtime = dl.dl_runtime as i64;
        }
    }
}

// ---------------------------------------------------------------------------------------
// The fair server (v6.12: fair.c fair_server_init, deadline.c dl_server_*): what replaced
// RT throttling. Without CONFIG_RT_GROUP_SCHED v6.12 no longer throttles RT runqueues
// (sched_rt_runtime_us only bounds admission control); instead each CPU has a deadline
// entity, 50 ms of runtime every 1000 ms, that runs the fair tasks at deadline priority
// when RT has starved them. It is deferred (dl_defer): started throttled, with its timer at
// the zero-laxity time deadline - runtime; fair running time (and idle time) is charged to
// its runtime in the meantime, scaled by frequency and capacity as a deadline task's, and
// a runtime used up that way starts a new period and pushes the activation back. Once it
// has fired (dl_defer_running) it behaves as a plain CBS server until the fair tasks get to
// run on their own again. Runtime overruns are seen at update_curr(), so at the tick.

/// The fair server of one CPU (rq->fair_server).
#[derive(Debug, Clone, Copy, Default)]
pub struct FairServer {
    /// dl_server: set up by the first dl_server_start() (then dl_defer is set too)
    pub setup: bool,
    /// dl_server_active: between dl_server_start() and dl_server_stop()
    pub active: bool,
    /// on the deadline runqueue, runnable (neither throttled nor stopped)
    pub queued: bool,
    pub deadline: u64,
    pub runtime: i64,
    pub throttled: bool,
    pub defer_armed: bool,
    pub defer_running: bool,
    /// the dl_timer's expiry (None: not armed)
    pub timer: Option<u64>,
    /// the earliest timer event in the event queue for this server: a later expiry waits
    /// for it and is queued then, so a timer re-armed at every fair wakeup does not fill
    /// the queue with cancelled events
    pub queued_at: Option<u64>,
    /// exec_start of the idle task (set_next_task_idle), while the CPU is idle
    pub idle_mark: Option<u64>,
    /// times the server started running fair tasks at zero laxity (dl_defer_running set)
    pub activations: u64,
}

/// dl_server_min_res: a defer timer is not pushed back by less than this
const DL_SERVER_MIN_RES_NS: i64 = 1_000_000;
/// DL_SCALE: the overflow test drops this many bits to stay in 64 bits
const DL_SCALE: u32 = 10;

impl Sim {
    fn fs_params(&self) -> (u64, u64) {
        (
            self.knobs.derived.fair_server_runtime_ns,
            self.knobs.derived.fair_server_period_ns,
        )
    }

    /// dl_scaled_delta_exec(): time scaled by the CPU's frequency and capacity.
    fn fs_scaled(&self, cpu: usize, delta: u64) -> i64 {
        let cap = self.platform.capacity_orig(cpu);
        let fmax = self.platform.cluster_of(cpu).fmax_khz;
        mul_div(mul_div(delta, self.khz(cpu) << 10, fmax), cap, 1 << 20) as i64
    }

    /// Whether the server is runnable: it then runs the fair tasks ahead of every RT task.
    pub(crate) fn fair_server_runnable(&self, cpu: usize) -> bool {
        let fs = &self.fair_server[cpu];
        fs.queued && !fs.throttled && self.rqs[cpu].cfs.nr_running > 0
    }

    /// dl_entity_overflow(): runtime / (deadline - t) > dl_runtime / dl_period.
    fn fs_overflow(&self, cpu: usize) -> bool {
        let (dl_runtime, period) = self.fs_params();
        let fs = &self.fair_server[cpu];
        let left = (period >> DL_SCALE) as i128 * (fs.runtime.max(0) >> DL_SCALE) as i128;
        let right = (fs.deadline.saturating_sub(self.now) >> DL_SCALE) as i128 * (dl_runtime >> DL_SCALE) as i128;
        right < left
    }

    /// replenish_dl_new_period(): a new period from now; deferred unless the server is
    /// handling a starvation (dl_defer_running).
    fn fs_new_period(&mut self, cpu: usize) {
        let (dl_runtime, period) = self.fs_params();
        let now = self.now;
        let fs = &mut self.fair_server[cpu];
        fs.deadline = now + period;
        fs.runtime = dl_runtime as i64;
        if !fs.defer_running {
            fs.throttled = true;
            fs.defer_armed = true;
        }
    }

    /// start_dl_timer(): at deadline - runtime when the activation is deferred, else at the
    /// next period (dl_next_period(): the deadline, the server's deadline being its period);
    /// false if that time has passed.
    fn fs_start_timer(&mut self, cpu: usize) -> bool {
        let now = self.now;
        let fs = &mut self.fair_server[cpu];
        let act = if fs.defer_armed {
            fs.deadline as i64 - fs.runtime
        } else {
            fs.deadline as i64
        };
        if act < now as i64 {
            return false;
        }
        fs.timer = Some(act as u64);
        self.fs_queue_timer(cpu);
        true
    }

    fn fs_queue_timer(&mut self, cpu: usize) {
        let fs = &mut self.fair_server[cpu];
        if let Some(at) = fs.timer {
            if fs.queued_at.is_none_or(|q| q > at) {
                fs.queued_at = Some(at);
                self.events.push(at, EventKind::FairServer { cpu: cpu as u32 });
            }
        }
    }

    fn fs_cancel_timer(&mut self, cpu: usize) {
        self.fair_server[cpu].timer = None;
    }

    /// replenish_dl_entity()
    fn fs_replenish(&mut self, cpu: usize) {
        let (dl_runtime, period) = self.fs_params();
        let now = self.now;
        if self.fair_server[cpu].defer_armed && self.fs_overflow(cpu) {
            // a deferred activation that would now exceed the bandwidth: a new deadline
            let fs = &mut self.fair_server[cpu];
            fs.deadline = now + period;
            fs.runtime = dl_runtime as i64;
        }
        let fs = &mut self.fair_server[cpu];
        while fs.runtime <= 0 {
            fs.deadline += period;
            fs.runtime += dl_runtime as i64;
        }
        if fs.deadline < now {
            self.fs_new_period(cpu);
        }
        let fs = &mut self.fair_server[cpu];
        fs.throttled = false;
        if fs.defer_armed {
            fs.defer_armed = false;
            return;
        }
        let has_tasks = self.rqs[cpu].cfs.nr_running > 0;
        let fs = &mut self.fair_server[cpu];
        if !fs.defer_running && (now as i64) < fs.deadline as i64 - fs.runtime && has_tasks {
            fs.defer_armed = true;
            fs.throttled = true;
            if !self.fs_start_timer(cpu) {
                self.fs_cancel_timer(cpu);
                let fs = &mut self.fair_server[cpu];
                fs.defer_armed = false;
                fs.throttled = false;
            }
        }
    }

    /// enqueue_dl_entity() of the server: on a start (wakeup) the CBS wakeup rule
    /// (update_dl_entity), on a timer the replenishment; a server still throttled (a
    /// deferred activation) waits for its timer instead.
    fn fs_enqueue(&mut self, cpu: usize, replenish: bool) {
        if replenish {
            self.fs_replenish(cpu);
        } else {
            let now = self.now;
            if self.fair_server[cpu].deadline < now || self.fs_overflow(cpu) {
                self.fs_new_period(cpu);
            } else if !self.fair_server[cpu].defer_running {
                let fs = &mut self.fair_server[cpu];
                fs.defer_armed = true;
                fs.throttled = true;
            }
        }
        if self.fair_server[cpu].throttled && self.fs_start_timer(cpu) {
            return;
        }
        if self.fair_server[cpu].throttled {
            self.fs_cancel_timer(cpu);
        }
        let fs = &mut self.fair_server[cpu];
        fs.defer_armed = false;
        fs.throttled = false;
        fs.queued = true;
    }

    /// dl_server_start(): the first fair task is enqueued on the CPU (h_nr_running 0 -> 1).
    pub(crate) fn dl_server_start(&mut self, cpu: usize) {
        if self.fs_params().0 == 0 {
            return; // 0 runtime: no server
        }
        if !self.fair_server[cpu].setup {
            // the first start: dl_server and dl_defer set, setup_new_dl_entity()
            self.fair_server[cpu].setup = true;
            self.fs_new_period(cpu);
        }
        if self.fair_server[cpu].active {
            return;
        }
        self.fair_server[cpu].active = true;
        // task_contending() -> add_running_bw(): to_ratio(period, runtime) in BW_SHIFT (20)
        // bits, read by cpu_bw_dl() in capacity units
        let (runtime, period) = self.fs_params();
        self.rqs[cpu].dl_bw = (((runtime as u128) << 20) / period as u128 * 1024 >> 20) as u64;
        self.fs_enqueue(cpu, false);
        let fs = &self.fair_server[cpu];
        if self.rqs[cpu].curr.is_some() && fs.queued && !fs.throttled {
            self.resched_cpu(cpu); // a server not deferred (dl_defer_running kept) runs now
        }
    }

    /// dl_server_stop(): the last fair task left the CPU. dl_defer_running is kept (v6.12).
    pub(crate) fn dl_server_stop(&mut self, cpu: usize) {
        if !self.fair_server[cpu].active {
            return;
        }
        self.fs_cancel_timer(cpu);
        let fs = &mut self.fair_server[cpu];
        fs.queued = false;
        fs.defer_armed = false;
        fs.throttled = false;
        fs.active = false;
        self.rqs[cpu].dl_bw = 0;
    }

    /// update_curr_dl_se() of the server, for `delta` ns a fair task ran (under the server
    /// or not): a deferred server whose runtime the fair tasks used up on their own is not
    /// needed this period (a new one starts, the activation moves back); a running server
    /// whose runtime ran out is throttled until its next period.
    pub(crate) fn fair_server_update(&mut self, cpu: usize, delta: u64) {
        if self.fs_params().0 == 0 || !self.fair_server[cpu].setup || delta == 0 {
            return;
        }
        let scaled = self.fs_scaled(cpu, delta);
        self.fair_server[cpu].runtime -= scaled;
        if self.fair_server[cpu].runtime > 0 {
            return;
        }
        if self.fair_server[cpu].throttled {
            self.fair_server[cpu].defer_running = false;
            self.fs_cancel_timer(cpu);
            self.fs_new_period(cpu);
            self.fs_start_timer(cpu);
            return;
        }
        if !self.fair_server[cpu].queued {
            return;
        }
        // throttle: off the deadline runqueue until the next period
        let fs = &mut self.fair_server[cpu];
        fs.throttled = true;
        fs.queued = false;
        if !self.fs_start_timer(cpu) {
            self.fs_enqueue(cpu, true);
        }
        self.resched_cpu(cpu);
    }

    /// dl_server_update_idle_time(): in defer mode, idle time counts as time the fair tasks
    /// could have had (it leaves a server runtime of 0 at worst, and ends a starvation).
    /// `leaving`: the CPU leaves idle (put_prev_task_idle), else the idle task goes on.
    pub(crate) fn dl_server_update_idle_time(&mut self, cpu: usize, leaving: bool) {
        let Some(mark) = self.fair_server[cpu].idle_mark else {
            return;
        };
        if leaving {
            self.fair_server[cpu].idle_mark = None;
        }
        if !self.fair_server[cpu].setup || self.fair_server[cpu].runtime < 0 {
            return;
        }
        let delta = self.now.saturating_sub(mark);
        let scaled = self.fs_scaled(cpu, delta);
        let now = self.now;
        let fs = &mut self.fair_server[cpu];
        fs.runtime -= scaled;
        if fs.runtime < 0 {
            fs.defer_running = false;
            fs.runtime = 0;
        }
        if !leaving {
            fs.idle_mark = Some(now);
        }
    }

    /// dl_server_timer(): a deferred activation at zero laxity (pushed back instead if
    /// the fair tasks ran meanwhile), or the replenishment at the next period.
    pub(crate) fn fair_server_timer(&mut self, cpu: usize) {
        let now = self.now;
        let fs = &mut self.fair_server[cpu];
        if fs.queued_at != Some(now) {
            return; // superseded by an earlier event
        }
        fs.queued_at = None;
        match fs.timer {
            None => return, // cancelled
            Some(at) if at > now => {
                self.fs_queue_timer(cpu); // re-armed later meanwhile
                return;
            }
            Some(_) => fs.timer = None,
        }
        if !self.fair_server[cpu].throttled || self.fs_params().0 == 0 {
            return;
        }
        self.update_rq_clock(cpu);
        self.update_curr(cpu);
        if !self.fair_server[cpu].throttled {
            return; // update_curr() ran its own course (a new period)
        }
        if self.rqs[cpu].cfs.nr_running == 0 {
            self.fs_replenish(cpu);
            return;
        }
        if self.fair_server[cpu].defer_armed {
            let fs = &self.fair_server[cpu];
            let zero_lax = fs.deadline as i64 - fs.runtime;
            if (self.now as i64) < zero_lax - DL_SERVER_MIN_RES_NS {
                // the fair tasks consumed runtime in the background: fire later
                self.fair_server[cpu].timer = Some(zero_lax as u64);
                self.fs_queue_timer(cpu);
                return;
            }
            let fs = &mut self.fair_server[cpu];
            fs.defer_running = true;
            fs.activations += 1;
        }
        self.fs_enqueue(cpu, true);
        if self.fair_server_runnable(cpu) {
            let curr_dl_first = self.rqs[cpu].curr.is_some_and(|c| {
                let t = &self.tasks[c as usize];
                t.policy == crate::workload::Policy::Deadline && t.dl.deadline <= self.fair_server[cpu].deadline
            });
            if !curr_dl_first {
                self.resched_cpu(cpu);
            }
        }
    }
}
