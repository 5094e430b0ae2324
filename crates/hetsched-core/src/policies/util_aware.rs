//! The `util-aware` policy: utilization-aware load balancing on the big.LITTLE
//! switcher (Kim et al., Fig. 3), on a switcher platform (`NAME:switcher`, switcher.rs).
//!
//! At every enqueue from the wait queue (fork or wakeup of a fair task):
//! idlest = argmin load(s), busiest = argmax load(s) (eq. 1: the sum of the queued
//! weights); while load(busiest) > 1.25 x load(idlest), a waiting task of busiest moves to
//! idlest; then the task goes to argmin E[U(s, task)], E_A (eq. 2, = U(s)) or E_B (eq. 3,
//! with the simple moving average of the last 16 task execution times). The kernel's
//! periodic and newidle balancing are off. RT tasks take select_task_rq_rt.

use super::{PolicyInfo, Requires, SchedPolicy, WakeKind};
use crate::balance::{LoadBalancer, Migration};
use crate::core::{SchedView, TaskId};
use crate::features::Knob;
use crate::workload::Policy;
use std::collections::VecDeque;

/// Fig. 3 line 1: IPC = 1.25 (as 5/4).
pub const IPC_NUM: u64 = 5;
pub const IPC_DEN: u64 = 4;
/// §III-C: the moving average of the last sixteen task execution times.
pub const SMA_LEN: usize = 16;

pub static INFO: PolicyInfo = PolicyInfo {
    name: "util-aware",
    summary: "utilization-aware load balancing (Kim et al.) Fig. 3 on a switcher platform: at each enqueue level loads while busiest > 1.25 x idlest, then place by expected utilisation (util_aware.estimator a|b); no periodic or newidle balancing",
    source: "utilization-aware load balancing (Kim et al.) Fig. 3, eqs. 1-3",
    knobs: &["util_aware.estimator", "switcher."],
    requires: Requires {
        switcher_platform: true,
        fair: None,
    },
    differences: "Fig. 3 moves only waiting tasks, never the running one; a vCPU that goes idle does not pull. The switcher's governor epochs are strictly periodic and staggered; ΔT_gov = 100 ms is an assumption (switcher.sampling_rate_us). A switch is instantaneous and free.",
    status: "Reproduced in docs/studies/util-aware-lb.md; its simplifications are named in docs/schedulers.md.",
    controller: None,
    build: |ctx| {
        Box::new(UtilAware {
            estimator: ctx.knobs.get(Knob::UtilAwareEstimator).round() as usize,
            exec_at_wake: vec![0; ctx.nr_tasks],
            ..Default::default()
        })
    },
};

#[derive(Debug, Clone, Default)]
pub struct UtilAware {
    /// 0 = E_A, 1 = E_B
    pub estimator: usize,
    pub leveling_moves: u64,
    pub placements: [u64; 2],
    sma: VecDeque<u64>,
    /// per task: its sum_exec_runtime when it last left the wait queue
    exec_at_wake: Vec<u64>,
}

/// load(s) of eq. 1: the sum of the weights of the fair tasks on s's runqueue.
fn load(v: &SchedView, c: usize) -> u64 {
    v.rqs[c].cfs.load_weight
}

impl UtilAware {
    /// E[U(s, task)]: eq. 2 (E_A = U(s), the paper's approximation for ΔT_task << ΔT_gov)
    /// or eq. 3 (E_B).
    pub fn expected_util(&self, v: &SchedView, c: usize) -> f64 {
        let sw = v.switcher.expect("a switcher platform");
        let (u, dt) = sw.measured_util(v.meter, c, v.now);
        if self.estimator == 0 {
            return u;
        }
        let sma = if self.sma.is_empty() {
            0.0
        } else {
            self.sma.iter().sum::<u64>() as f64 / self.sma.len() as f64
        };
        let (dt, sma) = (dt as f64, sma);
        if dt + sma <= 0.0 {
            return u;
        }
        u * dt / (dt + sma) + 100.0 * sma / (dt + sma)
    }
}

impl SchedPolicy for UtilAware {
    fn placement(&self) -> &'static str {
        "util-aware"
    }

    fn load_balancer(&self, _v: &SchedView) -> Option<Box<dyn LoadBalancer>> {
        None // Fig. 3 levels the loads at enqueue instead
    }

    /// Fig. 3 lines 3-8 for task `p` leaving the wait queue: level the loads.
    fn balance_wakeup(&mut self, v: &SchedView, p: TaskId) -> Vec<Migration> {
        let n = v.nr_cpus();
        if self.exec_at_wake.len() <= p as usize {
            self.exec_at_wake.resize(p as usize + 1, 0);
        }
        self.exec_at_wake[p as usize] = v.tasks[p as usize].se.sum_exec_runtime;
        let idlest = (0..n).min_by_key(|&c| (load(v, c), c)).unwrap();
        let busiest = (0..n).max_by_key(|&c| (load(v, c), std::cmp::Reverse(c))).unwrap();
        let (mut lb, mut li) = (load(v, busiest), load(v, idlest));
        let mut moves = Vec::new();
        while IPC_DEN * lb > IPC_NUM * li {
            // DEQUEUE(Qrun(busiest)): the waiting task that would run last
            let cand = v.rqs[busiest].cfs.timeline.iter().rev().map(|&(_, x)| x).find(|&x| {
                v.tasks[x as usize].allowed & (1u64 << idlest) != 0 && !moves.iter().any(|m: &Migration| m.task == x)
            });
            let Some(x) = cand else { break };
            // the move carries the task's weight from one load to the other
            let w = v.tasks[x as usize].se.weight;
            lb -= w;
            li += w;
            moves.push(Migration {
                task: x,
                src: busiest,
                dst: idlest,
            });
        }
        self.leveling_moves += moves.len() as u64;
        moves
    }

    /// Fig. 3 lines 9-10: the vCPU of the least expected utilisation.
    fn select_task_rq(&mut self, v: &SchedView, p: TaskId, prev_cpu: usize, _kind: WakeKind) -> usize {
        let task = &v.tasks[p as usize];
        if task.policy != Policy::Other {
            return crate::rt::select_task_rq_rt(v, p, prev_cpu);
        }
        let allowed = task.allowed;
        let mut best: Option<(f64, u64, usize)> = None;
        for c in (0..v.nr_cpus()).filter(|&c| allowed & (1u64 << c) != 0) {
            let key = (self.expected_util(v, c), load(v, c), c);
            if best.is_none_or(|b| key < b) {
                best = Some(key);
            }
        }
        self.placements[self.estimator] += 1;
        best.map(|b| b.2).unwrap_or(allowed.trailing_zeros() as usize)
    }

    /// A fair task enters the wait queue (sleep or exit): its execution time since it left
    /// the wait queue joins the moving average.
    fn dequeue_task(&mut self, v: &SchedView, _cpu: usize, p: TaskId, sleep: bool) {
        if !sleep {
            return;
        }
        let exec = v.tasks[p as usize].se.sum_exec_runtime;
        let start = self.exec_at_wake.get(p as usize).copied().unwrap_or(0);
        if self.sma.len() == SMA_LEN {
            self.sma.pop_front();
        }
        self.sma.push_back(exec.saturating_sub(start));
    }

    fn counters(&self) -> Vec<(&'static str, serde_json::Value)> {
        vec![
            ("leveling_moves", self.leveling_moves.into()),
            ("placements_estimator_a", self.placements[0].into()),
            ("placements_estimator_b", self.placements[1].into()),
        ]
    }

    fn result(&self, _v: &SchedView, out: &mut serde_json::Value) {
        let sma = &self.sma;
        let estimator = ["a", "b"][self.estimator];
        out["util_aware"] = serde_json::json!({
            "estimator": estimator,
            "leveling_moves": self.leveling_moves,
            "placements": self.placements[self.estimator],
            "sma_ns": if sma.is_empty() { 0 } else { sma.iter().sum::<u64>() / sma.len() as u64 },
        });
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
