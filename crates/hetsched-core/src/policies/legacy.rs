//! The `legacy` policy: the baseline of the big.LITTLE switcher study (Kim et al.) on a
//! switcher platform (`NAME:switcher`): the v3.4 kernel's CFS on the virtual CPUs, blind to
//! the core backing each.

use super::cfs::SelectIdleSibling;
use super::{PolicyInfo, Requires, SchedPolicy, WakeKind};
use crate::balance::LoadBalancer;
use crate::balance_fair::KernelLb;
use crate::core::{SchedView, TaskId};
use crate::workload::Policy;

pub static INFO: PolicyInfo = PolicyInfo {
    name: "legacy",
    summary: "the baseline of the big.LITTLE switcher study (Kim et al.) on a switcher platform (NAME:switcher): cfs's placement and balancing on the virtual CPUs, blind to the backing core",
    source: "the big.LITTLE switcher study (Kim et al.) §II-A; Linux v3.4 find_idlest_cpu, select_idle_sibling",
    knobs: &["switcher."],
    requires: Requires {
        switcher_platform: true,
        fair: None,
    },
    differences: "The paper's kernel is v3.4; this is the engine's v6.12 CFS and sched_balance_rq on one flat domain of identical virtual CPUs (load = PELT load_avg in the balancer instead of instantaneous weights); the fork placement uses eq. 1's weights as v3.4's find_idlest_cpu.",
    status: "Reproduced against util-aware in docs/studies/util-aware-lb.md.",
    controller: None,
    build: |_| Box::new(SwitcherLegacy::default()),
};

/// Kim et al.'s legacy CFS on the switcher's virtual CPUs (§II-A: "CFS uses the loads on
/// the virtual CPUs for assigning and moving tasks"): a new task goes to the CPU of the
/// least load (eq. 1, the queued weights; ties to the lowest number), as the v3.4
/// find_idlest_cpu() does with weighted_cpuload(); a waking task to select_idle_sibling().
#[derive(Default)]
pub struct SwitcherLegacy {
    sis: SelectIdleSibling,
}

impl SchedPolicy for SwitcherLegacy {
    fn placement(&self) -> &'static str {
        "switcher-legacy"
    }

    /// The kernel's balancer on one flat domain of the identical virtual CPUs.
    fn load_balancer(&self, v: &SchedView) -> Option<Box<dyn LoadBalancer>> {
        let n = v.nr_cpus();
        let mut flat = v.platform.clone();
        flat.clusters.truncate(1);
        flat.clusters[0].cpus = (0..n).collect();
        flat.cpu_cluster = vec![0; n];
        let fv = SchedView { platform: &flat, ..*v };
        Some(Box::new(KernelLb::new(
            &fv,
            v.knobs.derived.migration_cost_ns,
            v.knobs.derived.busy_factor,
        )))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn select_task_rq(&mut self, v: &SchedView, p: TaskId, prev_cpu: usize, kind: WakeKind) -> usize {
        let task = &v.tasks[p as usize];
        if task.policy != Policy::Other {
            return crate::rt::select_task_rq_rt(v, p, prev_cpu);
        }
        if kind == WakeKind::Fork {
            let allowed = task.allowed;
            return (0..v.nr_cpus())
                .filter(|&c| allowed & (1u64 << c) != 0)
                .min_by_key(|&c| (v.rqs[c].cfs.load_weight, c))
                .unwrap_or(prev_cpu);
        }
        self.sis.select_idle_sibling(v, p, prev_cpu, prev_cpu)
    }
}
