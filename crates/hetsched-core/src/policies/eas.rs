//! The `eas` policy: cfs plus Energy Aware Scheduling on the wakeup path,
//! `find_energy_efficient_cpu()` (v6.12, kernel/sched/fair.c) on the Energy Model built
//! from the platform (energy_model.rs), while the root domain is not overutilized. Arm's
//! vendor changes (its OSPM 2020 talk, vendor.rs) are knobs of this policy.
//!
//! EAS runs only where the kernel would (`sched_is_eas_possible()`, topology.c):
//! asymmetric CPU capacities and schedutil on every policy; elsewhere the policy is cfs,
//! and `result.json`'s `eas` says why.

use super::cfs::{Cfs, SelectIdleSibling};
use super::{PolicyCtx, PolicyInfo, Requires, SchedPolicy, WakeKind};
use crate::core::{SchedView, TaskId};
use crate::sched::KernelProfile;
use crate::energy_model::{EnergyModel, FeecInput};
use crate::workload::Policy;

pub static INFO: PolicyInfo = PolicyInfo {
    name: "eas",
    summary: "cfs plus Energy Aware Scheduling on wakeup: find_energy_efficient_cpu (v6.12) while the root domain is not overutilized",
    source: "Linux v6.12 kernel/sched/fair.c find_energy_efficient_cpu, compute_energy; kernel/power/energy_model.c; Arm's OSPM 2020 talk on vendor EAS changes for the vendor.* knobs",
    knobs: &["vendor.", "schedutil.", "eas."],
    requires: Requires::NONE,
    differences: "find_energy_efficient_cpu() as v6.12 (kernel profile `android-4.19`: the EM cost P*f_max/f with the 1.25 headroom inside and feec's 6 % margin, and feec run for every fair wakeup, a WF_SYNC one going to the waking CPU first thing, overutilized or not, as sysctl_sched_sync_hint_enable does). The Energy Model is built from the platform's OPP table. Without asymmetric capacities or without schedutil EAS does not run, as the kernel's sched_is_eas_possible() decides, and the policy is cfs (result.json's `eas` says why). The vendor.* knobs (Arm's OSPM 2020 talk on vendor EAS changes) are off by default; with them off the policy is mainline's. Kernel profile `msm-4.14`: that kernel's own path (find_best_target.rs), find_energy_efficient_cpu() with find_best_target() on every fair wakeup and fork whether overutilized or not, its energy comparison estimated with the Energy Model above rather than 4.14's sched-group energy model; `eas.find_best_target=0` gives the mainline path instead. Kernel profile `pixel-5.10`: the Pixel 6/6a's vendor hook (pixel_sched.rs) places each fair task first (a sync wakeup to a waker running alone, an idle prev_cpu in WFI, else Google's find_energy_efficient_cpu() by vendor group), the 5.10 GKI's path (android-4.19's feec, the CFS path while overutilized) only where it names no CPU; binder inheritance, ADPF and the Pixel Energy Model's idle-exit energy are not modelled.",
    status: "Measured against the papers' phones in docs/studies/ospm2020.md (vendor knobs) and docs/learning.md (Learning EAS runs on it).",
    controller: None,
    build,
};

/// EAS where the kernel would run it, else cfs saying why.
pub(crate) fn build(ctx: &PolicyCtx) -> Box<dyn SchedPolicy> {
    let mut em = EnergyModel::from_platform(ctx.platform);
    if ctx.legacy {
        em.set_legacy();
    }
    let why = if !em.asymmetric() {
        "no asymmetric CPU capacities (no SD_ASYM_CPUCAPACITY domain)".to_string()
    } else if ctx.governor != "schedutil" {
        format!("the governor is {}, EAS needs schedutil", ctx.governor)
    } else {
        return Box::new(Eas::new(em));
    };
    Box::new(EasImpossible {
        cfs: Cfs::default(),
        why,
    })
}

/// `eas` where EAS cannot run: cfs, reporting why.
struct EasImpossible {
    cfs: Cfs,
    why: String,
}

impl SchedPolicy for EasImpossible {
    fn placement(&self) -> &'static str {
        self.cfs.placement()
    }

    fn energy_aware(&self) -> Option<std::result::Result<(), String>> {
        Some(Err(self.why.clone()))
    }

    fn select_task_rq(&mut self, v: &SchedView, p: TaskId, prev_cpu: usize, kind: WakeKind) -> usize {
        self.cfs.select_task_rq(v, p, prev_cpu, kind)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// EAS on the wakeup path (select_task_rq_fair, v6.12): while the root domain is not
/// overutilized, a waking fair task goes where find_energy_efficient_cpu() says; otherwise,
/// and for new tasks and RT tasks, cfs's placement decides.
pub struct Eas {
    em: EnergyModel,
    inp: FeecInput,
    fallback: SelectIdleSibling,
    pub feec_calls: u64,
    pub feec_moves: u64,
    /// each perf domain's CPUs and OPPs (feec's step count, costs.rs), and the steps of
    /// the last placement
    pd_cpus: Vec<u64>,
    pd_opps: Vec<u64>,
    placement_steps: u64,
    /// vendor knobs (Arm's OSPM 2020 talk, vendor.rs): how often each fired
    pub vendor: crate::vendor::VendorCounters,
    /// schedtune.prefer_idle placements (msm-4.14)
    pub prefer_idle_placements: u64,
    /// msm-4.14's own wakeup path (find_best_target.rs)
    pub fbt: crate::find_best_target::FbtCounters,
    /// the Pixel's vendor hook (pixel_sched.rs)
    pub pixel: crate::pixel_sched::PixelCounters,
    /// android-4.19: WF_SYNC wakeups placed on the waking CPU (sysctl_sched_sync_hint_enable)
    pub sync_wakeups: u64,
}

impl Eas {
    pub fn new(em: EnergyModel) -> Self {
        Eas {
            pd_cpus: em.pds.iter().map(|pd| pd.cpus.len() as u64).collect(),
            pd_opps: em.pds.iter().map(|pd| pd.states.len() as u64).collect(),
            placement_steps: 0,
            em,
            inp: FeecInput::default(),
            fallback: SelectIdleSibling::default(),
            feec_calls: 0,
            feec_moves: 0,
            vendor: Default::default(),
            prefer_idle_placements: 0,
            fbt: Default::default(),
            pixel: Default::default(),
            sync_wakeups: 0,
        }
    }

    /// android-4.19's find_energy_efficient_cpu() runs for every fair wakeup, overutilized
    /// or not, and starts with sysctl_sched_sync_hint_enable (1 by default): a WF_SYNC
    /// wakeup goes to the waking CPU wherever the task may run there, before any fit or
    /// energy test. None on the other profiles, whose feec reads no WF_SYNC.
    fn sync_hint(&mut self, v: &SchedView, p: TaskId) -> Option<usize> {
        if v.profile != KernelProfile::Android419 || !v.wake.sync {
            return None;
        }
        let this = v.wake.this_cpu.filter(|&c| v.tasks[p as usize].allowed & (1u64 << c) != 0)?;
        self.sync_wakeups += 1;
        Some(this)
    }

    // --- vendor (OSPM 2020 talk) hook: the eas wakeup path with the vendor knobs (vendor.rs) ---
    fn select_vendor(
        &mut self,
        v: &SchedView,
        p: TaskId,
        prev_cpu: usize,
        kind: WakeKind,
        vk: &crate::vendor::VendorKnobs,
    ) -> usize {
        use crate::vendor;
        let iso = if vk.isolation { v.isolated } else { 0 };
        if vk.rt && vendor::is_rt(v, p) {
            self.vendor.rt_placement += 1;
            return vendor::select_task_rq_rt(v, p, prev_cpu, iso);
        }
        let ttwu_fair = kind == WakeKind::Wakeup && v.tasks[p as usize].policy == Policy::Other;
        if ttwu_fair {
            self.fallback.record_wakee(v, p, prev_cpu);
        }
        let prefer_idle = ttwu_fair && v.stune.is_some_and(|st| st.prefer_idle(p as usize));
        // schedtune.prefer_idle (msm-4.14): find_best_target()'s case A, no energies; where
        // it finds no CPU the wakeup goes on to feec, as on the path without vendor knobs
        let prefer_idle_cpu = if prefer_idle && !v.overutilized {
            crate::schedtune::prefer_idle_target(v, p, iso)
        } else {
            None
        };
        let sync_cpu = if ttwu_fair { self.sync_hint(v, p) } else { None };
        let cpu = if let Some(c) = sync_cpu {
            c
        } else if let Some(c) = prefer_idle_cpu {
            self.prefer_idle_placements += 1;
            c
        } else if ttwu_fair && !v.overutilized {
            Self::fill(&mut self.inp, v, p, prev_cpu);
            if iso != 0 && self.inp.allowed & !iso != 0 {
                self.inp.allowed &= !iso;
            }
            if vk.fastpath && vendor::prev_cpu_fastpath(v, &self.inp, vk, p) {
                self.vendor.prev_cpu_fastpath += 1;
                self.placement_steps = 1; // prev_cpu's idleness and fit, no energies
                return prev_cpu;
            }
            let mut r = self.em.find_energy_efficient_cpu(&self.inp);
            self.placement_steps = self.feec_steps(prev_cpu);
            if vk.margins {
                let mut pct = std::mem::take(&mut self.em.fit_pct);
                vendor::fit_pct(v, prev_cpu, vk, &mut pct);
                self.em.fit_pct = pct;
                let with_margins = self.em.find_energy_efficient_cpu(&self.inp);
                self.placement_steps += self.feec_steps(prev_cpu);
                self.em.fit_pct.clear();
                if with_margins.cpu != r.cpu {
                    self.vendor.migration_margins += 1;
                }
                r = with_margins;
            }
            self.feec_calls += 1;
            if r.cpu != prev_cpu {
                self.feec_moves += 1;
            }
            let mut cpu = r.cpu;
            if vk.packing && v.idle_cpu(cpu) {
                if let Some(c) = vendor::task_packing(&self.em, v, &self.inp, vk, p, cpu) {
                    self.vendor.task_packing += 1;
                    cpu = c;
                }
            }
            cpu
        } else if ttwu_fair {
            self.fallback.select_wakeup_after_record(v, p, prev_cpu)
        } else {
            self.fallback.select_task_rq(v, p, prev_cpu, kind)
        };
        let out = vendor::avoid_isolated(v, p, cpu, iso);
        if out != cpu {
            self.vendor.isolation_redirects += 1;
        }
        out
    }
    // --- end vendor hook ---

    /// msm-4.14 with sched_feat FIND_BEST_TARGET: select_task_rq_fair() returns
    /// find_energy_efficient_cpu() for every fair wakeup and fork (find_best_target.rs);
    /// RT tasks take their class's path. Core isolation redirects as on the vendor path.
    fn select_msm(&mut self, v: &SchedView, p: TaskId, prev_cpu: usize, kind: WakeKind) -> usize {
        use crate::vendor;
        let vk = crate::vendor::VendorKnobs::read(v);
        let iso = if vk.isolation { v.isolated } else { 0 };
        if v.tasks[p as usize].policy != Policy::Other {
            if vk.rt && vendor::is_rt(v, p) {
                self.vendor.rt_placement += 1;
                return vendor::select_task_rq_rt(v, p, prev_cpu, iso);
            }
            return self.fallback.select_task_rq(v, p, prev_cpu, kind);
        }
        // the energy inputs are gathered only when candidates are compared
        let (em, inp) = (&self.em, &mut self.inp);
        let energies = |cands: &[usize], mask: u64| {
            Self::fill(inp, v, p, prev_cpu);
            cands.iter().map(|&c| em.energy_with_task_on(inp, c, mask)).collect()
        };
        let (cpu, estimated) = crate::find_best_target::find_energy_efficient_cpu(
            v,
            p,
            prev_cpu,
            kind == WakeKind::Fork,
            energies,
            &mut self.fbt,
        );
        self.feec_calls += 1;
        if cpu != prev_cpu {
            self.feec_moves += 1;
        }
        // the CPU scan, then each energy estimate over every pd's CPUs and OPPs
        let pd_steps: u64 = self.pd_cpus.iter().zip(&self.pd_opps).map(|(c, o)| c + o).sum();
        self.placement_steps = v.nr_cpus() as u64 + estimated as u64 * pd_steps;
        let out = vendor::avoid_isolated(v, p, cpu, iso);
        if out != cpu {
            self.vendor.isolation_redirects += 1;
        }
        out
    }

    /// pixel-5.10: the GKI's select_task_rq_fair() returns the CPU the vendor hook names
    /// (pixel_sched.rs); None sends the task on along the GKI's own path.
    fn select_pixel(
        &mut self,
        v: &SchedView,
        vg: &crate::pixel_sched::VendorGroups,
        p: TaskId,
        prev_cpu: usize,
        kind: WakeKind,
    ) -> Option<usize> {
        let all = (1u64 << v.nr_cpus()) - 1;
        let (em, inp) = (&self.em, &mut self.inp);
        let mut filled = false;
        let energy = |cpu: usize| {
            if !filled {
                Self::fill(inp, v, p, prev_cpu);
                filled = true;
            }
            em.energy_with_task_on(inp, cpu, all)
        };
        let feec_before = self.pixel.feec;
        let (cpu, estimated) = crate::pixel_sched::select_task_rq_fair(
            v,
            vg,
            p,
            prev_cpu,
            kind == WakeKind::Wakeup,
            energy,
            &mut self.pixel,
        );
        // the CPU scan, then each energy estimate over every pd's CPUs and OPPs
        let pd_steps: u64 = self.pd_cpus.iter().zip(&self.pd_opps).map(|(c, o)| c + o).sum();
        self.placement_steps = v.nr_cpus() as u64 + estimated as u64 * pd_steps;
        if self.pixel.feec > feec_before {
            self.feec_calls += 1;
            if cpu.is_some_and(|c| c != prev_cpu) {
                self.feec_moves += 1;
            }
        }
        cpu
    }

    /// find_energy_efficient_cpu()'s steps for a task whose prev_cpu is `prev` (costs.rs)
    fn feec_steps(&self, prev: usize) -> u64 {
        crate::costs::feec_steps(&self.pd_cpus, &self.pd_opps, self.em.cpu_pd[prev])
    }

    fn fill(inp: &mut FeecInput, v: &SchedView, p: TaskId, prev: usize) {
        let n = v.nr_cpus();
        inp.util_avg.clear();
        inp.runnable_avg.clear();
        inp.util_est.clear();
        inp.util_rt.clear();
        inp.rt_runnable.clear();
        inp.dl_bw.clear();
        inp.capacity_orig.clear();
        inp.capacity.clear();
        inp.walt = v.walt.is_some();
        if let Some(w) = v.walt {
            // WALT's signals: every class's queued demand, no separate RT or util_est
            for c in 0..n {
                inp.util_avg.push(w.cpu_util(c));
                inp.runnable_avg.push(0);
                inp.util_est.push(0);
                inp.util_rt.push(0);
                inp.rt_runnable.push(false);
                inp.capacity_orig.push(v.capacity_orig(c));
                inp.capacity.push(v.capacity_of(c));
            }
        }
        for c in 0..n {
            if inp.walt {
                break;
            }
            let rq = &v.rqs[c];
            inp.util_avg.push(rq.cfs.avg.util_avg);
            inp.runnable_avg.push(rq.cfs.avg.runnable_avg);
            inp.util_est.push(rq.cfs.util_est);
            inp.util_rt.push(rq.avg_rt.util_avg);
            inp.rt_runnable.push(!rq.rt_queue.is_empty());
            inp.dl_bw.push(rq.dl_bw);
            inp.capacity_orig.push(v.capacity_orig(c));
            inp.capacity.push(v.capacity_of(c));
        }
        inp.rq_uclamp.clear();
        inp.rq_uclamp_idle.clear();
        for c in 0..n {
            inp.rq_uclamp.push(v.rqs[c].uclamp.value);
            inp.rq_uclamp_idle.push(v.rqs[c].uclamp.idle);
        }
        let t = &v.tasks[p as usize];
        inp.uclamp_used = v.uclamp_used;
        inp.p_uclamp = if v.uclamp_used { t.uclamp } else { [0, 1024] };
        // find_energy_efficient_cpu() starts with sync_entity_load_avg(): the task's util
        // decayed over its sleep, not the value it had when it blocked
        if let Some(w) = v.walt {
            inp.task_util = w.task_util(p);
            inp.task_ewma = 0;
            inp.task_min_util = v.boosted_task_util(p);
        } else {
            let avg = v.sync_entity_load_avg(p);
            inp.task_util = avg.util_avg;
            inp.task_ewma = avg.ewma();
            // msm-4.14 built without WALT: find_best_target()'s boosted_task_util() on PELT
            // (0 elsewhere: no schedtune, no floor)
            inp.task_min_util = match v.stune {
                Some(st) => crate::schedtune::boosted_util(avg.util_avg.max(avg.ewma()), st.task_boost(p as usize)),
                None => 0,
            };
        }
        inp.task_queued = false;
        inp.prev_cpu = prev;
        inp.allowed = t.allowed;
    }
}

impl SchedPolicy for Eas {
    fn placement(&self) -> &'static str {
        "eas"
    }

    fn energy_aware(&self) -> Option<std::result::Result<(), String>> {
        Some(Ok(()))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn select_task_rq(&mut self, v: &SchedView, p: TaskId, prev_cpu: usize, kind: WakeKind) -> usize {
        self.placement_steps = 0;
        if v.stune.is_some() && v.knobs.get(crate::features::Knob::EasFindBestTarget) > 0.0 {
            return self.select_msm(v, p, prev_cpu, kind);
        }
        if let Some(vg) = v.pixel.filter(|_| v.tasks[p as usize].policy == Policy::Other) {
            if let Some(cpu) = self.select_pixel(v, vg, p, prev_cpu, kind) {
                return cpu;
            }
        }
        let vk = crate::vendor::VendorKnobs::read(v);
        if vk.any() {
            return self.select_vendor(v, p, prev_cpu, kind, &vk); // vendor (OSPM 2020 talk)
        }
        if kind != WakeKind::Wakeup || v.tasks[p as usize].policy != Policy::Other {
            return self.fallback.select_task_rq(v, p, prev_cpu, kind);
        }
        // WF_TTWU: the waker records its wakee whichever way the task is placed
        self.fallback.record_wakee(v, p, prev_cpu);
        if let Some(this) = self.sync_hint(v, p) {
            return this;
        }
        if !v.overutilized && v.stune.is_some_and(|st| st.prefer_idle(p as usize)) {
            // schedtune.prefer_idle (msm-4.14): find_best_target()'s case A, no energies
            if let Some(c) = crate::schedtune::prefer_idle_target(v, p, 0) {
                self.prefer_idle_placements += 1;
                return c;
            }
        }
        if !v.overutilized {
            Self::fill(&mut self.inp, v, p, prev_cpu);
            let r = self.em.find_energy_efficient_cpu(&self.inp);
            self.placement_steps = self.feec_steps(prev_cpu);
            self.feec_calls += 1;
            if r.cpu != prev_cpu {
                self.feec_moves += 1;
            }
            return r.cpu;
        }
        self.fallback.select_wakeup_after_record(v, p, prev_cpu)
    }

    fn take_placement_steps(&mut self) -> u64 {
        std::mem::take(&mut self.placement_steps)
    }

    fn counters(&self) -> Vec<(&'static str, serde_json::Value)> {
        let vc = &self.vendor;
        let mut c = vec![
            ("feec_calls", self.feec_calls.into()),
            ("feec_moves", self.feec_moves.into()),
            ("vendor.migration_margins", vc.migration_margins.into()),
            ("vendor.task_packing", vc.task_packing.into()),
            ("vendor.prev_cpu_fastpath", vc.prev_cpu_fastpath.into()),
            ("vendor.rt_placement", vc.rt_placement.into()),
            ("vendor.isolation_redirects", vc.isolation_redirects.into()),
        ];
        let prefer_idle = self.prefer_idle_placements + self.fbt.prefer_idle;
        if prefer_idle > 0 {
            c.push(("schedtune.prefer_idle", prefer_idle.into()));
        }
        if self.sync_wakeups > 0 {
            c.push(("sync_wakeups", self.sync_wakeups.into()));
        }
        if self.fbt.calls > 0 {
            c.push(("find_best_target", self.fbt.to_json()));
        }
        if self.pixel.calls > 0 {
            c.push(("pixel_sched", self.pixel.to_json()));
        }
        c.extend(self.fallback.counters());
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::WakeCtx;
    use serde_json::json;

    /// test-4-3-1 under `kernel`: task 0 (util 50) asleep on idle little CPU 1; the waker
    /// runs alone on big CPU 7 (its filler, task 8) and wakes it, sync or not.
    fn placed(kernel: &str, sync: bool, overutilized: bool, allowed: u64) -> (usize, u64) {
        placed_with(kernel, json!({}), sync, overutilized, allowed)
    }

    fn placed_with(kernel: &str, knobs: serde_json::Value, sync: bool, overutilized: bool, allowed: u64) -> (usize, u64) {
        let mut s = crate::testutils::waking_task_on_three_clusters(kernel, "root", 1, knobs);
        s.tasks[0].se.avg.util_avg = 50;
        s.tasks[0].allowed = allowed;
        s.rqs[7].curr = Some(8);
        s.rqs[7].cfs.nr_running = 1;
        s.rqs[7].cfs.avg.util_avg = 300;
        let ctx = crate::policies::PolicyCtx {
            platform: &s.platform,
            governor: "schedutil",
            knobs: &s.knobs,
            legacy: kernel != "mainline-6.12",
            nr_tasks: s.tasks.len(),
        };
        let mut pol = build(&ctx);
        let v = SchedView {
            wake: WakeCtx { this_cpu: Some(7), sync },
            overutilized,
            ..s.sched_view()
        };
        let cpu = pol.select_task_rq(&v, 0, 1, WakeKind::Wakeup);
        let eas = pol.as_any().downcast_ref::<Eas>().unwrap();
        (cpu, eas.sync_wakeups)
    }

    #[test]
    fn android_4_19_places_a_sync_wakeup_on_the_waking_cpu_before_any_fit_or_energy_test() {
        // 4.19's feec, first thing: sysctl_sched_sync_hint_enable (1) && sync, and the task
        // may run on the waking CPU -> that CPU, busy big 7, for a task of util 50 that an
        // idle little CPU would take
        assert_eq!(placed("android-4.19", true, false, 0xff), (7, 1));
        // select_task_rq_fair() calls feec overutilized or not; the sync test comes first
        assert_eq!(placed("android-4.19", true, true, 0xff), (7, 1));
        // not allowed there: on to the energy search, which keeps it on little CPUs
        let (cpu, n) = placed("android-4.19", true, false, 0x7f);
        assert!(cpu < 4 && n == 0, "{cpu}");
        // without WF_SYNC: the energy search
        let (cpu, n) = placed("android-4.19", false, false, 0xff);
        assert!(cpu < 4 && n == 0, "{cpu}");
        // the vendor knobs change what feec does after the sync test, not the test itself
        assert_eq!(placed_with("android-4.19", json!({"vendor.task_packing": 1}), true, false, 0xff), (7, 1));
    }

    #[test]
    fn mainline_feec_does_not_read_wf_sync() {
        // v6.12's find_energy_efficient_cpu() has no sync argument: the same wakeup sync or
        // not goes where the energy search says
        let (sync_cpu, n) = placed("mainline-6.12", true, false, 0xff);
        assert_eq!((sync_cpu, n), (placed("mainline-6.12", false, false, 0xff).0, 0));
        assert!(sync_cpu < 4, "{sync_cpu}");
    }
}
