//! The `cfs` policy: the kernel's `select_task_rq_fair()` without EAS (v6.12,
//! kernel/sched/fair.c) with the kernel's load balancer, `sched_balance_rq`
//! (balance_fair.rs). Policies that add to CFS (fa-cfs, hcs-balance, hcs-td) place as it
//! does, through [`SelectIdleSibling`].

use super::baseline::select_task_rq_baseline;
use super::{PolicyInfo, Requires, SchedPolicy, WakeKind};
use crate::core::{SchedView, TaskId};
use crate::workload::Policy;

pub static INFO: PolicyInfo = PolicyInfo {
    name: "cfs",
    summary: "the kernel without EAS: select_task_rq_fair (select_idle_sibling / select_idle_capacity), CFS and RT classes, sched_balance_rq",
    source: "Linux v6.12 kernel/sched/fair.c: select_task_rq_fair, select_idle_sibling, select_idle_capacity; sched_balance_rq",
    knobs: &["sched_latency_ns", "sched_min_granularity_ns", "sched_wakeup_granularity_ns", "sched_migration_cost_ns", "balance.busy_factor", "fair.eevdf", "fair.delay_dequeue", "fair.preempt_short"],
    requires: Requires::NONE,
    differences: "A woken task's waker is the CPU its timer fires on, so wake_affine does not apply and the target is prev_cpu. New tasks take the idle CPU with the most spare capacity (the effect of sched_balance_find_dst_cpu on a flat topology). One flat cfs_rq per CPU (no task groups). The fair class is the kernel profile's (mainline-6.12: EEVDF with DELAY_DEQUEUE and PREEMPT_SHORT; android-4.19: CFS as v6.5 has it) unless `fair.eevdf` is 0 or 1; delayed tasks are not migrated by the balancer. The load balancer has no SMT, NUMA or asym packing (balance_fair.rs names the rest).",
    status: "The default scheduler. Its mechanisms are documented with worked examples in docs/mechanisms/.",
    controller: None,
    build: |_| Box::new(Cfs::default()),
};

/// The kernel's select_task_rq_fair() without EAS (v6.12), for the `cfs` and `eas`
/// schedulers and those built on `cfs`. A woken task's waker is the CPU its timer fires on, its prev_cpu, so
/// wake_affine does not apply and the target is prev_cpu; `select_idle_sibling` then
/// takes the target or the task's recent_used_cpu if idle and the task fits it
/// (asym_fits_cpu), else on asymmetric systems `select_idle_capacity`: from the target,
/// wrapping, the first idle CPU the task fits, else the idle CPU that fits best and is
/// biggest, else the target. On symmetric systems the first idle CPU from the target. New
/// tasks take the baseline's idle-CPU choice (the kernel's slow path,
/// sched_balance_find_dst_cpu, looks for the idlest group and CPU; this is its effect on
/// a flat topology) and RT tasks `select_task_rq_rt`.
#[derive(Default)]
pub struct SelectIdleSibling {
    /// p->recent_used_cpu, per task
    recent_used_cpu: Vec<usize>,
}

impl SelectIdleSibling {
    fn asym(v: &SchedView) -> bool {
        let caps = v.platform.clusters.iter().map(|c| c.capacity_orig);
        caps.clone().min() != caps.max()
    }

    /// select_idle_capacity(): the kernel's -1 is None.
    fn select_idle_capacity(v: &SchedView, p: TaskId, target: usize) -> Option<usize> {
        let n = v.nr_cpus();
        let allowed = v.tasks[p as usize].allowed;
        let task_util = v.task_util_est(p);
        let [umin, umax] = v.tasks[p as usize].uclamp;
        let (mut best_cpu, mut best_fits, mut best_cap) = (None, 0i32, 0u64);
        for k in 0..n {
            let cpu = (target + k) % n;
            if allowed & (1u64 << cpu) == 0 || !v.idle_cpu(cpu) {
                continue;
            }
            let mut cap = v.capacity_of(cpu);
            let fits = v.util_fits_cpu(task_util, umin, umax, cpu);
            if fits > 0 {
                return Some(cpu);
            }
            if fits < 0 {
                cap = v.capacity_orig(cpu); // get_actual_cpu_capacity()
            }
            if fits < best_fits || (fits == best_fits && cap > best_cap) {
                (best_cpu, best_fits, best_cap) = (Some(cpu), fits, cap);
            }
        }
        best_cpu
    }

    /// select_idle_sibling(p, prev, target) with target = prev.
    pub fn select_idle_sibling(&mut self, v: &SchedView, p: TaskId, prev: usize) -> usize {
        let n = v.nr_cpus();
        let allowed = v.tasks[p as usize].allowed;
        let ok = |c: usize| allowed & (1u64 << c) != 0;
        if self.recent_used_cpu.len() < v.tasks.len() {
            self.recent_used_cpu.resize(v.tasks.len(), usize::MAX);
        }
        let target = prev;
        let asym = Self::asym(v);
        let task_util = v.task_util_est(p);
        let [umin, umax] = v.tasks[p as usize].uclamp;
        // asym_fits_cpu()
        let fits = |c: usize| !asym || v.util_fits_cpu(task_util, umin, umax, c) > 0;
        if ok(target) && v.idle_cpu(target) && fits(target) {
            return target;
        }
        let recent = std::mem::replace(&mut self.recent_used_cpu[p as usize], prev);
        if recent < n && recent != prev && ok(recent) && v.idle_cpu(recent) && fits(recent) {
            return recent;
        }
        let fallback = if ok(target) {
            target
        } else {
            allowed.trailing_zeros() as usize
        };
        if asym {
            return Self::select_idle_capacity(v, p, target).unwrap_or(fallback);
        }
        (0..n)
            .map(|k| (target + k) % n)
            .find(|&c| ok(c) && v.idle_cpu(c))
            .unwrap_or(fallback)
    }
}

impl SelectIdleSibling {
    /// select_task_rq_fair() without EAS: new tasks and RT tasks as the baseline (see
    /// above), woken fair tasks select_idle_sibling().
    pub fn select_task_rq(&mut self, v: &SchedView, p: TaskId, prev_cpu: usize, kind: WakeKind) -> usize {
        if v.tasks[p as usize].policy != Policy::Other || kind == WakeKind::Fork {
            return select_task_rq_baseline(v, p, prev_cpu, kind);
        }
        self.select_idle_sibling(v, p, prev_cpu)
    }
}

/// The `cfs` policy: the kernel's fair class as it is, placement and balancing.
#[derive(Default)]
pub struct Cfs {
    pub sis: SelectIdleSibling,
}

impl SchedPolicy for Cfs {
    fn placement(&self) -> &'static str {
        "select_task_rq_fair"
    }

    fn select_task_rq(&mut self, v: &SchedView, p: TaskId, prev_cpu: usize, kind: WakeKind) -> usize {
        self.sis.select_task_rq(v, p, prev_cpu, kind)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
