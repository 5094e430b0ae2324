//! Load balancing behind one interface: the periodic pass (per CPU, at its balance
//! interval) and the newidle pass (a CPU about to go idle). This module holds the
//! interface and the baseline pull balancer of the `baseline` scheduler; the kernel's
//! sched_balance_rq, which `cfs` and `eas` use, is balance_fair.rs.

use crate::sim::{SchedView, TaskId};
use crate::workload::Policy;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Migration {
    pub task: TaskId,
    pub src: usize,
    pub dst: usize,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct BalanceStats {
    /// tasks examined for migration (can_migrate_task calls)
    pub attempts: u64,
    /// tasks moved
    pub successes: u64,
}

pub trait LoadBalancer: Send {
    fn name(&self) -> &'static str;
    /// Periodic balance with `dst` as the pulling CPU; `idle` = dst has nothing to run.
    fn balance(&mut self, v: &SchedView, dst: usize, idle: bool, stats: &mut BalanceStats) -> Option<Migration>;
    /// At the tick of `src`, whose running fair task does not fit it: where to move it
    /// (an active migration of a running task), if anywhere.
    fn misfit(&mut self, _v: &SchedView, _src: usize, _stats: &mut BalanceStats) -> Option<Migration> {
        None
    }
}

/// Baseline pull balancer: the busiest CPU is the one with the most runnable fair tasks;
/// it is pulled from when it has at least 2 and at least 2 more than dst (1 more if dst is
/// idle). The candidate is the queued (not running) fair task that ran least recently,
/// allowed on dst and not cache hot (`task_hot`: it ran within sched_migration_cost_ns),
/// one task per pass. On asymmetric CPUs it does not pull a task down to a smaller CPU
/// that it would not fit (util_fits_cpu), so the balancer never creates a misfit; and a
/// running task that does not fit its CPU is moved, at its CPU's tick, to the idle CPU of
/// the largest capacity that is noticeably bigger (capacity_greater), the effect of the
/// kernel's misfit active balance without its group machinery.
pub struct SimplePull {
    pub migration_cost_ns: u64,
}

impl LoadBalancer for SimplePull {
    fn name(&self) -> &'static str {
        "simple-pull"
    }

    fn balance(&mut self, v: &SchedView, dst: usize, idle: bool, stats: &mut BalanceStats) -> Option<Migration> {
        let nr_dst = v.rqs[dst].cfs.nr_running;
        let need = if idle { 1 } else { 2 };
        let busiest = (0..v.nr_cpus())
            .filter(|&c| c != dst)
            .map(|c| (v.rqs[c].cfs.nr_running, std::cmp::Reverse(c)))
            .filter(|&(n, _)| n >= 2 && n >= nr_dst + need)
            .max()?;
        let src = busiest.1 .0;
        let rq = &v.rqs[src];
        // least recently run first, like detach_tasks() walking cfs_tasks from the tail
        let mut cands: Vec<TaskId> = rq.cfs.timeline.iter().map(|&(_, t)| t).collect();
        cands.sort_by_key(|&t| (v.tasks[t as usize].se.exec_start, t));
        for t in cands {
            let task = &v.tasks[t as usize];
            if task.policy != Policy::Other {
                continue;
            }
            stats.attempts += 1;
            if task.allowed & (1u64 << dst) == 0 {
                continue;
            }
            let (cap_dst, cap_src) = (v.capacity_orig(dst), v.capacity_orig(src));
            let [umin, umax] = task.uclamp;
            if cap_dst < cap_src && v.util_fits_cpu(v.task_util_est(t), umin, umax, dst) <= 0 {
                continue;
            }
            let hot = v.now.saturating_sub(task.se.exec_start) < self.migration_cost_ns;
            if hot {
                continue;
            }
            stats.successes += 1;
            return Some(Migration { task: t, src, dst });
        }
        None
    }

    fn misfit(&mut self, v: &SchedView, src: usize, stats: &mut BalanceStats) -> Option<Migration> {
        let t = v.rqs[src].curr?;
        let task = &v.tasks[t as usize];
        let cap_src = v.capacity_orig(src);
        // task_fits_cpu(): util_fits_cpu() with the task's clamps
        let [umin, umax] = task.uclamp;
        if task.policy != Policy::Other || v.util_fits_cpu(v.task_util_est(t), umin, umax, src) > 0 {
            return None;
        }
        stats.attempts += 1;
        let dst = (0..v.nr_cpus())
            .filter(|&c| task.allowed & (1u64 << c) != 0 && v.idle_cpu(c))
            .filter(|&c| capacity_greater(v.capacity_orig(c), cap_src))
            .max_by_key(|&c| (v.capacity_orig(c), std::cmp::Reverse(c)))?;
        stats.successes += 1;
        Some(Migration { task: t, src, dst })
    }
}

/// capacity_greater(): a is more than ~5% bigger than b.
#[inline]
pub fn capacity_greater(a: u64, b: u64) -> bool {
    a * 1024 > b * 1078
}
