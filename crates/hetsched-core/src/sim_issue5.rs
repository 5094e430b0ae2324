//! Issue 5's hooks into the simulation: the FA-CFS migration hook (paper 002, `facfs.rs`)
//! and the hcs-balance neighbour pull (paper 004 §3). A child module of `sim`, so that it
//! reaches the simulation's private state and helpers without widening them.

use super::{Sim, TaskId, TaskState};
use crate::balance::Migration;
use crate::workload::Policy;

impl Sim {
    /// FA-CFS: a migration of `t` from `src` to `dst` rescales its next slice by
    /// f_src / f_dst (the two CPUs' current frequencies).
    pub(super) fn facfs_migrate(&mut self, t: TaskId, src: usize, dst: usize) {
        if self.facfs.is_none() || src == dst || src >= self.rqs.len() {
            return;
        }
        let (fs, fd) = (self.khz(src), self.khz(dst));
        if let Some(fa) = self.facfs.as_mut() {
            fa.on_migrate(t as usize, fs, fd);
        }
    }

    /// hcs-balance (paper 004 §3): "On each scheduler tick, the CPU inspects the run queue
    /// of the CPU one number higher than the current CPU to see if there are any jobs
    /// that have completed their timeslice on that CPU. (The highest numbered CPU examines
    /// the lowest numbered CPU.) If such jobs are found, they are moved from the inspected
    /// CPU to the inspecting CPU." A job's `hcs_last_cpu` is the CPU where it ran its last
    /// timeslice (the engine's `last_ran`); the jobs pulled are the fair tasks queued on
    /// the inspected CPU, not running, whose last timeslice ran there and which may run on
    /// the inspecting CPU. A task placed there by a migration that has not run since keeps
    /// its old hcs_last_cpu and stays.
    pub(super) fn hcs_balance_tick(&mut self, cpu: usize) {
        let n = self.rqs.len();
        if n < 2 {
            return;
        }
        let src = (cpu + 1) % n;
        let pull: Vec<TaskId> = self.rqs[src]
            .cfs
            .timeline
            .iter()
            .map(|&(_, t)| t)
            .filter(|&t| {
                let task = &self.tasks[t as usize];
                task.policy == Policy::Other
                    && task.state == TaskState::Runnable
                    && task.cpu == src
                    && task.last_ran == src
                    && task.allowed & (1u64 << cpu) != 0
            })
            .collect();
        for t in pull {
            self.migrate_queued(Migration { task: t, src, dst: cpu }, true);
            self.hcs_pulls += 1;
        }
    }
}
