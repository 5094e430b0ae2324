//! FA-CFS, the Frequency-Aware Completely Fair Scheduler (Tran, Carlier, Hagimont,
//! §3.2): when a thread migrates from core j (frequency f_j) to core k
//! (f_k), the time slice it gets on k is rescaled so that it does as much work as the slice
//! would have done on j,
//!
//! ```text
//!     S' = (f_j / f_k) · S                                        (eq. 10)
//! ```
//!
//! which makes the performance penalty δ = f_j·π·S − f_k·π·S' of eq. (8) zero. The paper's
//! kernel "adjusts weights and time slices in Linux's CFS according to the core
//! frequencies" (§3.3): in CFS the slice is the entity's weight share of the period, so
//! the rescaled slice is the slice of an entity of weight w' = w · f_j / f_k, and its run
//! time is charged to vruntime with that weight (Δvruntime = Δt · NICE_0_LOAD / w'), i.e.
//! the longer slice on a slower core costs the same virtual time as S would have cost on
//! the faster one.
//!
//! Lifetime of a rescaling (the paper has one S'_i per migration event i): set at the
//! migration with the two CPUs' frequencies at that moment (no rescaling, and no count,
//! when they are equal); used by `check_preempt_tick` and `update_curr` from the moment
//! the task runs on the destination; ended when that first slice there ends (the task is
//! switched out, or the tick finds the slice used up); a new migration before it ran
//! replaces it. The cfs_rq's load weight, PELT and the balancer keep the task's nice
//! weight (the adjustment is local to the slice and its vruntime accounting).

/// Per-task FA-CFS state and the count of rescalings for result.json.
use super::cfs::Cfs;
use super::{FairVariant, PolicyInfo, Requires, SchedPolicy, WakeKind};
use crate::core::{SchedView, TaskId};

pub static INFO: PolicyInfo = PolicyInfo {
    name: "fa-cfs",
    summary: "cfs with FA-CFS (Tran et al.): on a migration between CPUs at different frequencies the next slice is S' = (f_src/f_dst) S, its vruntime charged with the weight scaled alike",
    source: "FA-CFS (Tran, Carlier, Hagimont) §3.2 eq. 10, §3.3",
    knobs: &["sched_latency_ns", "sched_min_granularity_ns"],
    requires: Requires {
        switcher_platform: false,
        fair: Some((
            FairVariant::Cfs,
            "FA-CFS rescales the CFS slice of check_preempt_tick; EEVDF has none",
        )),
    },
    differences: "The paper does not say which weight is adjusted or when the adjustment ends: here the next slice after a migration (from the task's first pick on the destination to the end of that slice) is S' = (f_src/f_dst) S, with vruntime charged at the weight scaled alike; the cfs_rq load weight, PELT and the balancer keep the nice weight. Enforced at tick granularity (no HRTICK). Not with EEVDF (no sched_slice in check_preempt_tick).",
    status: "Reproduced in docs/studies/fa-cfs.md; equal frequencies give cfs's result exactly (tested).",
    controller: None,
    build: |_| Box::new(FaCfsPolicy::default()),
};

/// The `fa-cfs` policy: cfs's placement and balancing, with the slice rescaled after a
/// migration.
#[derive(Default)]
pub struct FaCfsPolicy {
    cfs: Cfs,
    pub fa: FaCfs,
}

impl SchedPolicy for FaCfsPolicy {
    fn placement(&self) -> &'static str {
        self.cfs.placement()
    }

    fn select_task_rq(&mut self, v: &SchedView, p: TaskId, prev_cpu: usize, kind: WakeKind) -> usize {
        self.cfs.select_task_rq(v, p, prev_cpu, kind)
    }

    /// Eq. 10's frequencies are the two CPUs' at the moment of the migration.
    fn migrate_task_rq(&mut self, v: &SchedView, p: TaskId, src: usize, dst: usize) {
        if src == dst || src >= v.nr_cpus() {
            return;
        }
        self.fa.on_migrate(p as usize, v.cpu_freq_khz(src), v.cpu_freq_khz(dst));
    }

    fn set_next_task(&mut self, p: TaskId) {
        self.fa.on_run(p as usize);
    }

    fn put_prev_task(&mut self, p: TaskId) {
        self.fa.on_slice_end(p as usize);
    }

    #[inline]
    fn calc_delta_fair(&self, p: TaskId, vdelta: u64) -> u64 {
        self.fa.vdelta(p as usize, vdelta)
    }

    #[inline]
    fn sched_slice(&self, p: TaskId, slice: u64) -> u64 {
        self.fa.slice(p as usize, slice)
    }

    fn counters(&self) -> Vec<(&'static str, serde_json::Value)> {
        vec![("rescales", self.fa.rescales.into())]
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[derive(Debug, Clone, Default)]
pub struct FaCfs {
    /// (f_src, f_dst) in kHz of the pending or running rescaled slice, per task
    scale: Vec<Option<(u64, u64)>>,
    /// the task has started its rescaled slice on the destination CPU
    started: Vec<bool>,
    /// migrations between CPUs at different frequencies (slices rescaled)
    pub rescales: u64,
}

impl FaCfs {
    fn ensure(&mut self, t: usize) {
        if self.scale.len() <= t {
            self.scale.resize(t + 1, None);
            self.started.resize(t + 1, false);
        }
    }

    /// A migration of task `t` from a CPU at `f_src` kHz to one at `f_dst` kHz.
    pub fn on_migrate(&mut self, t: usize, f_src: u64, f_dst: u64) {
        self.ensure(t);
        self.started[t] = false;
        if f_src == f_dst || f_src == 0 || f_dst == 0 {
            self.scale[t] = None;
            return;
        }
        self.scale[t] = Some((f_src, f_dst));
        self.rescales += 1;
    }

    /// The task starts running (set_next_entity).
    pub fn on_run(&mut self, t: usize) {
        if self.scale.get(t).is_some_and(|s| s.is_some()) {
            self.started[t] = true;
        }
    }

    /// The task's slice ended (switched out, or its slice is used up at the tick): a
    /// started rescaled slice is over.
    pub fn on_slice_end(&mut self, t: usize) {
        if self.started.get(t).copied().unwrap_or(false) {
            self.scale[t] = None;
            self.started[t] = false;
        }
    }

    /// The ratio (f_src, f_dst) in force for the running task, if any.
    #[inline]
    pub fn active(&self, t: usize) -> Option<(u64, u64)> {
        match (self.scale.get(t), self.started.get(t)) {
            (Some(Some(r)), Some(true)) => Some(*r),
            _ => None,
        }
    }

    /// S' = (f_src / f_dst) · S (eq. 10) while the rescaled slice runs, else S.
    #[inline]
    pub fn slice(&self, t: usize, ideal: u64) -> u64 {
        match self.active(t) {
            Some((fs, fd)) => (ideal as u128 * fs as u128 / fd as u128) as u64,
            None => ideal,
        }
    }

    /// vruntime charge with the adjusted weight w' = w · f_src / f_dst: the plain charge
    /// (with w) times f_dst / f_src.
    #[inline]
    pub fn vdelta(&self, t: usize, vdelta: u64) -> u64 {
        match self.active(t) {
            Some((fs, fd)) => (vdelta as u128 * fd as u128 / fs as u128) as u64,
            None => vdelta,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eq10_scales_the_slice_only_between_different_frequencies() {
        let mut fa = FaCfs::default();
        // 2.8 GHz -> 1.05 GHz: S' = 8/3 S, the weight (and so the vruntime rate) likewise
        fa.on_migrate(0, 2_800_000, 1_050_000);
        assert_eq!(fa.rescales, 1);
        assert_eq!(fa.slice(0, 6_000_000), 6_000_000, "not before it runs there");
        fa.on_run(0);
        assert_eq!(fa.slice(0, 6_000_000), 16_000_000);
        assert_eq!(fa.vdelta(0, 16_000_000), 6_000_000);
        fa.on_slice_end(0);
        assert_eq!(fa.slice(0, 6_000_000), 6_000_000, "one slice only");
        // back: S' = 3/8 S
        fa.on_migrate(0, 1_050_000, 2_800_000);
        fa.on_run(0);
        assert_eq!(fa.slice(0, 4_000_000), 1_500_000);
        // equal frequencies: plain CFS, not counted
        fa.on_migrate(1, 2_800_000, 2_800_000);
        fa.on_run(1);
        assert_eq!(fa.slice(1, 4_000_000), 4_000_000);
        assert_eq!(fa.vdelta(1, 4_000_000), 4_000_000);
        assert_eq!(fa.rescales, 2);
    }
}
