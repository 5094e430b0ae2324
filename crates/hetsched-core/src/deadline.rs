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
        if rq.waking_until.is_some() || (rq.curr.is_none() && rq.idle_state.is_some() && self.exit_latency_ns(cpu) > 0)
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
