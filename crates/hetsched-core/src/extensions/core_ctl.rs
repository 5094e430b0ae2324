//! The core controller after Qualcomm's core_ctl (kernel/sched/core_ctl.c, msm-4.14), as
//! paper 003 (Arm, OSPM 2020) lists it among the vendor changes: `vendor.cpu_isolation`.
//! Every `vendor.core_ctl.window_ms` (WALT's 20 ms window) each cluster but the smallest
//! counts its busy CPUs (util ≥ busy_up_thres % of capacity, staying busy down to
//! busy_down_thres %), adds one CPU if more tasks are runnable there (or misfit below it)
//! than busy CPUs, and needs all its CPUs at task_thres runnable tasks; the need is
//! clamped to [min_cpus, nr_cpus]. Above the active CPUs it unisolates at once, below
//! them for offline_delay_ms it isolates idle CPUs, highest number first. Isolated CPUs
//! take no placements and do not balance (so they stay idle). It acts where EAS runs (the
//! vendor kernels pair it with EAS); the same extension counts the ticks at which
//! `vendor.migration_margins` decides overutilized or misfit differently from mainline.

use super::{Extension, ExtensionInfo};
use crate::core::Sim;
use crate::features::Knob;
use crate::vendor::{cpu_overutilized, task_fits_cpu};
use crate::workload::Policy;

pub static INFO: ExtensionInfo = ExtensionInfo {
    name: "core_ctl",
    summary: "Qualcomm's core controller: isolates idle CPUs of the bigger clusters the load does not need (vendor.cpu_isolation), and counts vendor.migration_margins' decisions",
    source: "kernel/sched/core_ctl.c (msm-4.14); paper 003 (Arm, OSPM 2020) slide 1",
    knobs: &["vendor.cpu_isolation", "vendor.core_ctl.", "vendor.migration_margins"],
    // always installed: the knobs are read at every tick, so a controller may turn it on
    // during a run, and counters.vendor is in every result
    enabled: |_| true,
    build: |_| Box::new(CoreCtl::default()),
};

/// The core controller's state (vendor.cpu_isolation). The isolated CPUs themselves are
/// core state (`Sim::cpu_isolated`, msm's cpu_isolated_mask) that placement and balancing
/// read.
#[derive(Debug, Clone, Default)]
pub struct CoreCtl {
    /// CPUs core_ctl counts as busy (hysteresis state)
    busy: u64,
    /// per cluster: since when the need has been below the active CPUs
    below_since: Vec<Option<u64>>,
    next_eval: u64,
    /// CPUs isolated, unisolated, evaluations
    pub isolations: u64,
    pub unisolations: u64,
    pub evaluations: u64,
    /// vendor.migration_margins: ticks × CPUs where the margins decided overutilized or
    /// misfit differently from the kernel's 80%
    pub margin_ticks: u64,
}

impl Extension for CoreCtl {
    fn name(&self) -> &'static str {
        "core_ctl"
    }

    /// Counts the CPUs whose overutilized or misfit status the migration margins change,
    /// then runs the core controller.
    fn tick(&mut self, s: &mut Sim) {
        margins_tick(self, s);
        core_ctl_tick(self, s);
    }

    /// `counters.vendor` of result.json: how often each vendor change fired.
    fn result(&self, s: &Sim, out: &mut serde_json::Value) {
        let pc = |n: &str| s.policy_counter(n);
        out["counters"]["vendor"] = serde_json::json!({
            "cpu_isolation": self.isolations,
            "cpu_unisolation": self.unisolations,
            "core_ctl_evaluations": self.evaluations,
            "isolation_redirects": pc("vendor.isolation_redirects"),
            "migration_margins": pc("vendor.migration_margins") + self.margin_ticks,
            "migration_margins_placements": pc("vendor.migration_margins"),
            "migration_margins_ticks": self.margin_ticks,
            "task_packing": pc("vendor.task_packing"),
            "prev_cpu_fastpath": pc("vendor.prev_cpu_fastpath"),
            "rt_placement": pc("vendor.rt_placement"),
        });
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

fn margins_tick(cc: &mut CoreCtl, s: &mut Sim) {
    if s.eas_status == Some(Ok(())) && s.knobs.get(Knob::VendorMigrationMargins) > 0.0 {
        let v = s.sched_view();
        let mut n = 0;
        for cpu in 0..v.nr_cpus() {
            let [umin, umax] = v.rqs[cpu].uclamp.value;
            let kernel_over = v.util_fits_cpu(v.cpu_util_cfs(cpu), umin, umax, cpu) == 0;
            let mut differs = cpu_overutilized(&v, cpu) != Some(kernel_over);
            if let Some(t) = v.rqs[cpu].curr {
                let task = &v.tasks[t as usize];
                if task.policy == Policy::Other {
                    let [tmin, tmax] = task.uclamp;
                    let kernel_fits = v.util_fits_cpu(v.task_util_est(t), tmin, tmax, cpu) > 0;
                    differs |= task_fits_cpu(&v, t, cpu) != Some(kernel_fits);
                }
            }
            n += differs as u64;
        }
        cc.margin_ticks += n;
    }
}

/// Evaluates the controller at the first tick of each window.
fn core_ctl_tick(cc: &mut CoreCtl, s: &mut Sim) {
    let on = s.eas_status == Some(Ok(())) && s.knobs.get(Knob::VendorCpuIsolation) > 0.0;
    if !on {
        if s.cpu_isolated != 0 {
            cc.unisolations += s.cpu_isolated.count_ones() as u64;
            s.cpu_isolated = 0;
        }
        return;
    }
    let now = s.now;
    if now < cc.next_eval {
        return;
    }
    let window = (s.knobs.get(Knob::VendorCoreCtlWindowMs) * 1e6) as u64;
    cc.next_eval = (now / window + 1) * window;
    cc.evaluations += 1;
    let k = &s.knobs;
    let up = k.get(Knob::VendorCoreCtlBusyUpThres);
    let down = k.get(Knob::VendorCoreCtlBusyDownThres);
    let task_thres = k.get(Knob::VendorCoreCtlTaskThres) as usize;
    let min_cpus = k.get(Knob::VendorCoreCtlMinCpus) as usize;
    let delay = (k.get(Knob::VendorCoreCtlOfflineDelayMs) * 1e6) as u64;
    let p = &s.platform;
    let ncl = p.clusters.len();
    let isolated = &mut s.cpu_isolated;
    cc.below_since.resize(ncl, None);
    let min_cap = p.clusters.iter().map(|c| c.capacity_orig).min().unwrap_or(0);
    // busy CPUs, with hysteresis
    for (cpu, rq) in s.rqs.iter().enumerate() {
        let cap = p.capacity_orig(cpu);
        let c = &rq.cfs;
        let util = c.avg.util_avg.max(c.util_est).min(cap) + rq.avg_rt.util_avg;
        let pct = 100.0 * util as f64 / cap as f64;
        let was = cc.busy & (1u64 << cpu) != 0;
        let busy = if was { pct >= down } else { pct >= up };
        if busy {
            cc.busy |= 1u64 << cpu;
        } else {
            cc.busy &= !(1u64 << cpu);
        }
    }
    for (ci, cl) in p.clusters.iter().enumerate() {
        if cl.capacity_orig == min_cap {
            continue; // the smallest cluster is never isolated
        }
        let ncpus = cl.cpus.len();
        let nr_busy = cl.cpus.iter().filter(|&&c| cc.busy & (1u64 << c) != 0).count();
        let nr_run: usize = cl.cpus.iter().map(|&c| s.rqs[c].nr_running() as usize).sum();
        // tasks below this cluster that want up (misfit)
        let misfits = (0..s.rqs.len())
            .filter(|&c| p.capacity_orig(c) < cl.capacity_orig && s.rqs[c].misfit_task_load > 0)
            .count();
        let mut need = nr_busy;
        if nr_run + misfits > nr_busy {
            need += 1;
        }
        if nr_run >= task_thres {
            need = ncpus;
        }
        let need = need.clamp(min_cpus.min(ncpus), ncpus);
        let active = cl.cpus.iter().filter(|&&c| *isolated & (1u64 << c) == 0).count();
        if need > active {
            cc.below_since[ci] = None;
            for &c in &cl.cpus {
                let n_active = cl.cpus.iter().filter(|&&x| *isolated & (1u64 << x) == 0).count();
                if n_active >= need {
                    break;
                }
                if *isolated & (1u64 << c) != 0 {
                    *isolated &= !(1u64 << c);
                    cc.unisolations += 1;
                }
            }
        } else if need < active {
            let since = *cc.below_since[ci].get_or_insert(now);
            if now - since >= delay {
                let mut n_active = active;
                for &c in cl.cpus.iter().rev() {
                    if n_active <= need {
                        break;
                    }
                    let rq = &s.rqs[c];
                    let idle = rq.curr.is_none() && rq.nr_running() == 0 && rq.waking_until.is_none();
                    if *isolated & (1u64 << c) == 0 && idle {
                        *isolated |= 1u64 << c;
                        cc.isolations += 1;
                        n_active -= 1;
                    }
                }
                cc.below_since[ci] = None;
            }
        } else {
            cc.below_since[ci] = None;
        }
    }
}
