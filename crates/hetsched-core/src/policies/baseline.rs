//! The `baseline` policy: a simple placement and a pull balancer with misfit migration,
//! simpler than the kernel's, kept as the reference the kernel-faithful policies are
//! measured against. Its balancer is `balance.rs`'s `SimplePull`.

use super::{PolicyInfo, Requires, SchedPolicy, WakeKind};
use crate::balance::{LoadBalancer, SimplePull};
use crate::core::{SchedView, TaskId};
use crate::fair::fits_capacity;
use crate::workload::Policy;

pub static INFO: PolicyInfo = PolicyInfo {
    name: "baseline",
    summary: "a simple placement (prev if idle and the task fits, else the idle CPU with most spare capacity, else least loaded) and pull balancer with misfit migration",
    source: "hetsched: a reference simpler than the kernel (select_task_rq_fair's capacity fitness, detach_tasks' least recently run, task_hot)",
    knobs: &["sched_migration_cost_ns"],
    requires: Requires::NONE,
    differences: "Not a kernel policy: a reference simpler than the kernel. Placement ignores wake_affine, the energy model and select_idle_sibling's LLC scan; the pull balancer has one flat domain, moves one task per pass (the least recently run queued one that is not cache hot and would fit), and pushes a running misfit task only to an idle, noticeably bigger CPU at its tick, instead of the kernel's group statistics and active balance.",
    status: "Kept as the reference the kernel-faithful policies are measured against; its results are in the golden set (tests/golden).",
    controller: None,
    build: |_| Box::new(Baseline),
};

/// The baseline's placement for fair tasks (RT tasks take the kernel's select_task_rq_rt):
/// prev_cpu if it is idle and the task fits it
/// (`fits_capacity(task_util_est, capacity_orig)`, the 80% margin that asymmetric kernels
/// apply in select_idle_sibling; a new task has no prev_cpu and skips this step), else the
/// idle CPU
/// with the most spare capacity (capacity_orig - cpu_util_cfs), else the CPU with the
/// fewest runnable tasks and then the lowest cfs load_avg. Ties go to the lowest CPU
/// number. RT tasks take the kernel's select_task_rq_rt (rt.rs: cpupri with capacity
/// fitness on asymmetric systems).
pub struct Baseline;

/// The baseline's choice (also the kernel-like policies' choice for new tasks, whose slow
/// path this is on a flat topology).
pub fn select_task_rq_baseline(v: &SchedView, p: TaskId, prev_cpu: usize, kind: WakeKind) -> usize {
    let task = &v.tasks[p as usize];
    let allowed = task.allowed;
    let ok = |c: usize| allowed & (1u64 << c) != 0;
    if task.policy != Policy::Other {
        return crate::rt::select_task_rq_rt(v, p, prev_cpu);
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

impl SchedPolicy for Baseline {
    fn placement(&self) -> &'static str {
        "baseline"
    }

    fn load_balancer(&self, v: &SchedView) -> Option<Box<dyn LoadBalancer>> {
        Some(Box::new(SimplePull::new(v)))
    }

    fn select_task_rq(&mut self, v: &SchedView, p: TaskId, prev_cpu: usize, kind: WakeKind) -> usize {
        select_task_rq_baseline(v, p, prev_cpu, kind)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
