//! Wakeup and fork placement, behind one interface (`select_task_rq` of the kernel's
//! sched_class). The kernel-faithful EAS path (find_energy_efficient_cpu, select_idle_sibling,
//! cpupri fitness) is a later policy; this module holds the interface and the baseline.

use crate::sim::{SchedView, TaskId};
use crate::workload::Policy;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WakeKind {
    /// wake_up_new_task (SD_BALANCE_FORK)
    Fork,
    /// try_to_wake_up (WF_TTWU)
    Wakeup,
}

pub trait Placement: Send {
    fn name(&self) -> &'static str;
    /// Returns the CPU the task is enqueued on; must be in the task's affinity.
    fn select_task_rq(&mut self, v: &SchedView, p: TaskId, prev_cpu: usize, kind: WakeKind) -> usize;
}

/// The baseline of issue 2: for a fair task, prev_cpu if it is idle and the task fits it
/// (`fits_capacity(task_util_est, capacity_orig)`, the 80% margin that asymmetric kernels
/// apply in select_idle_sibling; a new task has no prev_cpu and skips this step), else the
/// idle CPU
/// with the most spare capacity (capacity_orig - cpu_util_cfs), else the CPU with the
/// fewest runnable tasks and then the lowest cfs load_avg. For an RT task, prev_cpu unless
/// it runs an RT task of equal or higher priority, else the CPU running the lowest
/// priority (idle < fair < lower RT), a cpupri search without capacity fitness. Ties go
/// to the lowest CPU number.
pub struct Baseline;

impl Placement for Baseline {
    fn name(&self) -> &'static str {
        "baseline"
    }

    fn select_task_rq(&mut self, v: &SchedView, p: TaskId, prev_cpu: usize, kind: WakeKind) -> usize {
        let task = &v.tasks[p as usize];
        let allowed = task.allowed;
        let ok = |c: usize| allowed & (1u64 << c) != 0;
        if task.policy != Policy::Other {
            // cpupri: a lower `rq_prio_level` is a better target.
            let level = |c: usize| v.rq_prio_level(c);
            if ok(prev_cpu) && level(prev_cpu) < task.prio_level() {
                return prev_cpu;
            }
            let best = (0..v.nr_cpus()).filter(|&c| ok(c)).min_by_key(|&c| (level(c), c));
            return best.unwrap_or(prev_cpu);
        }
        let fits = |c: usize| fits_capacity(v.task_util_est(p), v.capacity_orig(c));
        if kind == WakeKind::Wakeup && ok(prev_cpu) && v.idle_cpu(prev_cpu) && fits(prev_cpu) {
            return prev_cpu;
        }
        let idle_best = (0..v.nr_cpus()).filter(|&c| ok(c) && v.idle_cpu(c)).max_by_key(|&c| {
            (
                v.capacity_orig(c).saturating_sub(v.cpu_util_cfs(c)),
                std::cmp::Reverse(c),
            )
        });
        if let Some(c) = idle_best {
            return c;
        }
        (0..v.nr_cpus())
            .filter(|&c| ok(c))
            .min_by_key(|&c| (v.rqs[c].nr_running(), v.rqs[c].cfs.avg.load_avg, c))
            .unwrap_or(prev_cpu)
    }
}

/// fits_capacity(): util must stay below ~80% of the capacity (util * 1280 < cap * 1024).
#[inline]
pub fn fits_capacity(util: u64, capacity: u64) -> bool {
    util * 1280 < capacity * 1024
}

pub const SCHEDULERS: &[(&str, &str)] = &[(
    "cfs",
    "CFS fair class + RT class; baseline placement (prev if idle and the task fits, else the idle CPU with most spare capacity, else least loaded) and a simple pull balancer",
)];
