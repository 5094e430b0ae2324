//! The engine's limits against a workload that would take the machine instead of being
//! simulated: a fork bomb (tasks without end, each a record in memory) and a program that
//! stops simulated time (a loop of events that take no time, handed round without end).
//! Both stop the run with an `Error::Runaway` naming the task, phase and event at fault;
//! `Sim::stopped()` returns it, and the Python binding raises it as an InputError.
//!
//! They cost the hot loop one counter and one compare per event (core.rs `step`) and per
//! program event (workload/rtapp.rs `advance_program`); a valid run never reaches them,
//! so its results are the same to the byte.

use crate::core::{Sim, TaskId};
use crate::error::Error;

/// Tasks one run may hold, started and forked, exited ones included: the kernel's default
/// pid_max (PID_MAX_DEFAULT, include/linux/threads.h), beyond which its fork() fails with
/// EAGAIN. The kernel reuses the pid of a task that has exited; the engine keeps every
/// task's record to the end of the run (its result lists them all), so its ids are never
/// reused and the limit bounds the records too: about 1.4 KB each in the engine and
/// 10 KB in the Python result, some 400 MB at the limit.
pub const MAX_TASKS: usize = 32_768;
pub(crate) const MAX_TASKS_WHY: &str = "the kernel's default pid_max; a run keeps every task it started, \
exited or not";

/// Timers, mutexes and condition variables a workload may declare (each a count the engine
/// allocates state for at once): far more than a spec uses (one per name its tasks
/// refer to), at most some 64 MB of state; a wrong count of 2^63 would abort the process.
pub const MAX_SYNC_OBJECTS: usize = 1 << 20;

/// The longest time one event may take (a run's work at the highest OPP, a runtime, a sleep,
/// a memrun or iowait, a timer's period): 2^52 ns, some 52 days, beyond any run the tools
/// start (at most 30 simulated days). It keeps `now + length` and the work's time at the
/// slowest OPP far from u64's end, where they would wrap to before now.
pub const MAX_EVENT_NS: u64 = 1 << 52;

/// Engine steps (events handled and program events run) one simulated instant may take.
/// A valid workload needs few at any one instant: every task waking at once, each running
/// a few program events, is some thousands of steps; a program that spends no time in a
/// loop of a billion iterations is billions. At about 4 ns per program event and at most
/// 1 µs per event handled, the limit is reached within 0.04 to 10 s of wall time.
pub const NO_PROGRESS_STEPS: u64 = 10_000_000;

impl Sim {
    /// The limit that stopped the run, if one did: the run cannot go on (`run_until`
    /// returns at once) and its state is not a result.
    pub fn stopped(&self) -> Option<&Error> {
        self.stop.as_deref()
    }

    /// The spec's path of what task `t` runs now: `tasks[i].phases[j]`, i being its spec's
    /// index (the template's for a forked copy).
    fn phase_field(&self, t: TaskId) -> String {
        let task = &self.tasks[t as usize];
        format!("tasks[{}].phases[{}]", task.spec_index, task.phase)
    }

    fn stop_with(&mut self, e: Error) {
        if self.stop.is_none() {
            self.stop = Some(Box::new(e));
        }
    }

    /// `t`'s fork of template `k` would make the run hold more than MAX_TASKS tasks.
    pub(crate) fn stop_fork(&mut self, t: TaskId, k: u32) {
        let task = &self.tasks[t as usize];
        let field = format!("{}.events[{}]", self.phase_field(t), task.ev.saturating_sub(1));
        let got = format!("{} forking a copy of {}", task.name, self.tasks[k as usize].name);
        self.stop_with(Error::Runaway {
            field,
            expected: format!("at most {MAX_TASKS} tasks in a run ({MAX_TASKS_WHY})"),
            got,
        });
    }

    /// NO_PROGRESS_STEPS steps at this instant; `t` is the task whose program ran last.
    pub(crate) fn stop_no_progress(&mut self, t: TaskId) {
        let field = self.phase_field(t);
        let got = format!("{} at t={} ns", self.tasks[t as usize].name, self.now);
        self.stop_with(Error::Runaway {
            field,
            expected: format!(
                "simulated time to pass: at most {NO_PROGRESS_STEPS} events and program \
                 events at one instant (a loop that spends no time, or tasks that wake \
                 each other without end)"
            ),
            got,
        });
    }
}
