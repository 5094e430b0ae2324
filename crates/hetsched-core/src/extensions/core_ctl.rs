//! The core controller after Qualcomm's core_ctl (kernel/sched/core_ctl.c of the msm
//! kernels of the Snapdragon 855 generation, with its nr_prev_assist; read from a CAF
//! core_ctl.c of that line, described here in our own words), as Arm's OSPM 2020 talk
//! on vendor EAS changes lists it among them: `vendor.cpu_isolation`.
//!
//! At each WALT window rollover (`core_ctl_check()` from walt_irq_work; without WALT, at the
//! first tick of each `vendor.core_ctl.window_ms`) every CPU's busy percentage is read
//! (`sched_get_cpu_util()`: WALT's prev_runnable_sum over the capacity, or PELT's util_avg),
//! and the runqueue statistics of the window that ended (`sched_get_nr_running_avg()`:
//! per CPU the time-averaged nr_running and number of big tasks, each rounded up past
//! .85, and the largest nr_running seen). A big task is a queued fair task whose p->misfit
//! is set, a flag the scheduler writes only at enqueue and, for the running task, at the
//! tick (msm-4.14 fair.c: `!task_fits_max()`; a pick leaves it), so a task stays counted
//! until then after it has come to fit (read in sched_avg.c, walt.h and fair.c of
//! OnePlus's SM8150 release). Then, per cluster (smallest capacity first):
//! * a CPU is busy at `busy_up_thres` % and stays so down to `busy_down_thres` %;
//! * nrrun = the averaged tasks of this cluster and every bigger one, plus the big tasks
//!   of the cluster below (they want up); nr_prev_assist = what the cluster below cannot
//!   hold (its tasks and misfits beyond its active CPUs; 0 while it has isolated CPUs);
//! * need = the busy CPUs; all CPUs at nrrun >= task_thres; plus nr_prev_assist when it
//!   reaches nr_prev_assist_thresh; one more when nrrun exceeds it; one more when a CPU
//!   held more than 4 tasks (MAX_NR_THRESHOLD); clamped to [min_cpus, max_cpus]; a
//!   disabled cluster needs all of its CPUs;
//! * a need above the active CPUs unisolates at once; a lower one isolates once it has
//!   held for offline_delay_ms, non-busy CPUs in LRU order (a CPU isolated or unisolated
//!   goes to the back).
//!
//! An isolated CPU takes no placements and does not balance; its timers fire elsewhere and
//! it idles in its deepest state (power-collapsed, as sched_isolate_cpu() leaves it with
//! nothing to wake it). The per-cluster values are `core_ctl.<param>.clusterN` knobs with
//! the kernel's defaults (cluster_init(): min_cpus 1, offline_delay_ms 100, task_thres and
//! nr_prev_assist_thresh never, busy thresholds 0, so every CPU counts as busy and nothing
//! is isolated until a device writes them); `vendor.core_ctl.*` give the values of the
//! clusters whose own knob is unset, and by default the smallest cluster is disabled, as the
//! phones' scripts do. The msm-4.14 profile on sm8150 applies the init script's values
//! (the platform's device_init). The same tree built without WALT (`sched_walt=0`, the
//! Pixel 4's floral_defconfig) has no CONFIG_SCHED_CORE_CTL: nothing isolates a CPU there,
//! whatever `vendor.cpu_isolation` says.
//!
//! A CPU isolated with tasks on it hands them to the first allowed CPU that is not isolated
//! (migrate_tasks() with select_fallback_rq()); tasks that may run nowhere else stay.
//!
//! Differences: isolation is immediate (the kernel's core_ctl thread does it shortly after);
//! a CPU leaving an idle state with a wakeup pending is left for the next evaluation; no
//! boost or not_preferred CPUs.
//! The same extension counts the ticks at which `vendor.migration_margins` decides
//! overutilized or misfit differently from mainline.

use super::{Extension, ExtensionInfo};
use crate::core::Sim;
use crate::features::{Knob, Knobs};
use crate::vendor::{cpu_overutilized, task_fits_cpu};
use crate::workload::Policy;

pub static INFO: ExtensionInfo = ExtensionInfo {
    name: "core_ctl",
    summary: "Qualcomm's core controller: isolates CPUs of a cluster the load does not need, per cluster as the device configures it (vendor.cpu_isolation), and counts vendor.migration_margins' decisions",
    source: "kernel/sched/core_ctl.c (msm kernels, Snapdragon 855 generation); Arm's OSPM 2020 talk on vendor EAS changes, slide 1",
    knobs: &["vendor.cpu_isolation", "vendor.core_ctl.", "core_ctl.", "vendor.migration_margins"],
    // always installed: the knobs are read at every tick, so a controller may turn it on
    // during a run, and counters.vendor is in every result
    enabled: |_| true,
    build: |_| Box::new(CoreCtl::default()),
};

/// MAX_NR_THRESHOLD: a CPU that held more tasks than this in the window asks for one more CPU
pub const MAX_NR_THRESHOLD: u64 = 4;
/// NR_THRESHOLD_PCT (sched_avg.c): an average counts as one task more from .85 up
pub const NR_THRESHOLD_PCT: u64 = 15;

/// One cluster's core_ctl parameters (its sysfs files), resolved from the knobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClusterParams {
    pub enable: bool,
    pub min_cpus: usize,
    pub max_cpus: usize,
    pub busy_up_thres: u64,
    pub busy_down_thres: u64,
    /// u64::MAX: never (the kernel's UINT_MAX)
    pub task_thres: u64,
    pub nr_prev_assist_thresh: u64,
    pub offline_delay_ns: u64,
}

/// `core_ctl.<param>.clusterN`, the global `vendor.core_ctl.*` for the ones unset (< 0),
/// and the kernel's default for those without a global knob.
pub fn cluster_params(k: &Knobs, ci: usize, nr_cpus: usize, smallest: bool) -> ClusterParams {
    let own = |p: &str| k.get_named(&format!("core_ctl.{p}.cluster{ci}")).filter(|&v| v >= 0.0);
    let never = |v: f64| if v >= 1e9 { u64::MAX } else { v as u64 };
    let enable = own("enable").map_or(!smallest, |v| v > 0.0);
    let min_cpus = own("min_cpus").unwrap_or(k.get(Knob::VendorCoreCtlMinCpus)) as usize;
    let max_cpus = own("max_cpus").map_or(nr_cpus, |v| v as usize);
    ClusterParams {
        enable,
        min_cpus: min_cpus.min(nr_cpus),
        max_cpus: max_cpus.min(nr_cpus),
        busy_up_thres: own("busy_up_thres").unwrap_or(k.get(Knob::VendorCoreCtlBusyUpThres)) as u64,
        busy_down_thres: own("busy_down_thres").unwrap_or(k.get(Knob::VendorCoreCtlBusyDownThres)) as u64,
        task_thres: never(own("task_thres").unwrap_or(k.get(Knob::VendorCoreCtlTaskThres))),
        nr_prev_assist_thresh: own("nr_prev_assist_thresh").map_or(u64::MAX, never),
        offline_delay_ns: (own("offline_delay_ms").unwrap_or(k.get(Knob::VendorCoreCtlOfflineDelayMs)) * 1e6) as u64,
    }
}

/// sched_get_nr_running_avg()'s accumulators of one CPU (sched_update_nr_prod() at each
/// change of nr_running).
#[derive(Debug, Clone, Default)]
pub struct NrAvg {
    pub nr: u64,
    pub nr_big: u64,
    pub last_time: u64,
    pub nr_prod_sum: u128,
    pub big_prod_sum: u128,
    pub nr_max: u64,
}

impl NrAvg {
    /// Account the time since the last change at the old counts, then take the new ones.
    pub fn update(&mut self, now: u64, nr: u64, nr_big: u64) {
        let d = now.saturating_sub(self.last_time) as u128;
        self.nr_prod_sum += self.nr as u128 * d;
        self.big_prod_sum += self.nr_big as u128 * d;
        self.last_time = now;
        self.nr = nr;
        self.nr_big = nr_big;
        self.nr_max = self.nr_max.max(nr);
    }

    /// The window's (nr, nr_misfit, nr_max), and a fresh window.
    pub fn take(&mut self, now: u64, period: u64) -> (u64, u64, u64) {
        let (nr, big) = (self.nr, self.nr_big);
        self.update(now, nr, big);
        let p = period.max(1) as u128;
        let avg = |s: u128| (((s * 100 / p) as u64) + NR_THRESHOLD_PCT) / 100;
        let out = (avg(self.nr_prod_sum), avg(self.big_prod_sum), self.nr_max);
        self.nr_prod_sum = 0;
        self.big_prod_sum = 0;
        self.nr_max = self.nr;
        out
    }
}

/// A cluster's controller state (struct cluster_data).
#[derive(Debug, Clone, Default)]
struct ClusterCtl {
    /// CPUs in LRU order: the front is tried first
    lru: Vec<usize>,
    need_cpus: usize,
    need_ts: u64,
    nrrun: u64,
    max_nr: u64,
    nr_prev_assist: u64,
}

/// The core controller's state (vendor.cpu_isolation). The isolated CPUs themselves are
/// core state (`Sim::cpu_isolated`, msm's cpu_isolated_mask) that placement and balancing
/// read.
#[derive(Debug, Clone, Default)]
pub struct CoreCtl {
    /// CPUs core_ctl counts as busy (hysteresis state), and each CPU's busy % last read
    busy: u64,
    pub busy_pct: Vec<u64>,
    clusters: Vec<ClusterCtl>,
    /// cluster indices, smallest capacity first
    order: Vec<usize>,
    next_eval: u64,
    last_check: Option<u64>,
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

    /// Counts the CPUs whose overutilized or misfit status the migration margins change;
    /// without WALT, runs the controller at the first tick of each window.
    fn tick(&mut self, s: &mut Sim) {
        margins_tick(self, s);
        if s.walt.is_none() {
            let now = s.now;
            if now >= self.next_eval {
                let window = (s.knobs.get(Knob::VendorCoreCtlWindowMs) * 1e6) as u64;
                self.next_eval = (now / window + 1) * window;
                core_ctl_check(self, s);
            }
        }
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

    /// core_ctl_check() from WALT's rollover work.
    fn window_rollover(&mut self, s: &mut Sim) {
        core_ctl_check(self, s);
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

/// sched_get_cpu_util(): the CPU's busy time in the last window over its capacity, in %:
/// WALT's prev_runnable_sum, or (without WALT) PELT's util_avg.
pub fn core_ctl_cpu_util(s: &Sim, cpu: usize) -> u64 {
    let cap = s.platform.capacity_orig(cpu);
    let util = match s.walt.as_ref() {
        Some(w) => w.rqs[cpu].prev_runnable_sum / (w.tun.window >> 10),
        None => s.rqs[cpu].cfs.avg.util_avg,
    };
    util.min(cap) * 100 / cap
}

/// core_ctl_check(): the evaluation at a window's start (WALT's rollover work calls it).
pub fn core_ctl_check(cc: &mut CoreCtl, s: &mut Sim) {
    // the runqueue averages exist only where core_ctl is built (Sim::nr_avg): msm-4.14
    // without WALT (sched_walt=0, the Pixel 4) has no core_ctl to read the knob
    let on = !s.nr_avg.is_empty() && s.eas_status == Some(Ok(())) && s.knobs.get(Knob::VendorCpuIsolation) > 0.0;
    if !on {
        if s.cpu_isolated != 0 {
            cc.unisolations += s.cpu_isolated.count_ones() as u64;
            s.cpu_isolated = 0;
        }
        return;
    }
    let now = s.now;
    let period = now.saturating_sub(cc.last_check.unwrap_or(0));
    cc.last_check = Some(now);
    cc.evaluations += 1;
    let n = s.rqs.len();
    let ncl = s.platform.clusters.len();
    if cc.clusters.len() != ncl {
        cc.clusters = s
            .platform
            .clusters
            .iter()
            .map(|c| ClusterCtl {
                lru: c.cpus.clone(),
                need_cpus: c.cpus.len(),
                ..Default::default()
            })
            .collect();
        cc.order = (0..ncl).collect();
        cc.order.sort_by_key(|&ci| (s.platform.clusters[ci].capacity_orig, ci));
        cc.busy_pct = vec![0; n];
    }
    // the window's runqueue statistics and busy percentages
    s.core_ctl_nr_refresh();
    let mut nr = vec![(0u64, 0u64, 0u64); n];
    for (cpu, slot) in nr.iter_mut().enumerate() {
        *slot = s.nr_avg[cpu].take(now, period);
        cc.busy_pct[cpu] = core_ctl_cpu_util(s, cpu);
    }
    let isolated = s.cpu_isolated;
    let active = |ci: usize| {
        s.platform.clusters[ci]
            .cpus
            .iter()
            .filter(|&&c| isolated & (1u64 << c) == 0)
            .count()
    };
    // update_running_avg(): nrrun, max_nr, nr_prev_assist per cluster
    for (pos, &ci) in cc.order.iter().enumerate() {
        let above: u64 = cc.order[pos..]
            .iter()
            .flat_map(|&cj| s.platform.clusters[cj].cpus.iter())
            .map(|&c| nr[c].0)
            .sum();
        let prev_misfit = |p: usize| -> u64 {
            if p == 0 {
                return 0;
            }
            s.platform.clusters[cc.order[p - 1]].cpus.iter().map(|&c| nr[c].1).sum()
        };
        let nr_prev_assist = if pos == 0 {
            0
        } else {
            let pc = cc.order[pos - 1];
            let paused = active(pc) < s.platform.clusters[pc].cpus.len();
            let need: u64 = s.platform.clusters[pc].cpus.iter().map(|&c| nr[c].0).sum::<u64>() + prev_misfit(pos - 1);
            if paused {
                0
            } else {
                need.saturating_sub(active(pc) as u64)
            }
        };
        let cl = &mut cc.clusters[ci];
        cl.nrrun = above + prev_misfit(pos);
        cl.max_nr = s.platform.clusters[ci].cpus.iter().map(|&c| nr[c].2).max().unwrap_or(0);
        cl.nr_prev_assist = nr_prev_assist;
    }
    // eval_need() per cluster, then do_core_ctl()
    for (pos, &ci) in cc.order.clone().iter().enumerate() {
        let cpus = s.platform.clusters[ci].cpus.clone();
        let p = cluster_params(&s.knobs, ci, cpus.len(), pos == 0);
        let n_active = cpus.iter().filter(|&&c| s.cpu_isolated & (1u64 << c) == 0).count();
        let need = if !p.enable {
            p.max_cpus
        } else {
            let mut busy = 0;
            for &c in &cpus {
                let was = cc.busy & (1u64 << c) != 0;
                let b = if cc.busy_pct[c] >= p.busy_up_thres {
                    true
                } else if cc.busy_pct[c] < p.busy_down_thres {
                    false
                } else {
                    was
                };
                if b {
                    cc.busy |= 1u64 << c;
                    busy += 1;
                } else {
                    cc.busy &= !(1u64 << c);
                }
            }
            apply_task_need(&cc.clusters[ci], &p, busy, cpus.len())
        };
        let new_need = need.clamp(p.min_cpus, p.max_cpus.max(p.min_cpus));
        let cl = &mut cc.clusters[ci];
        let last_need = cl.need_cpus;
        let adj = if new_need > n_active {
            true
        } else if new_need == last_need && new_need == n_active {
            cl.need_ts = now;
            false
        } else {
            now.saturating_sub(cl.need_ts) >= p.offline_delay_ns
        };
        if !adj {
            continue;
        }
        cl.need_ts = now;
        cl.need_cpus = new_need;
        if new_need < n_active {
            try_to_isolate(cc, s, ci, new_need, n_active);
        } else if new_need > n_active {
            try_to_unisolate(cc, s, ci, new_need, n_active);
        }
    }
}

/// apply_task_need(): the busy CPUs, raised by the cluster's runqueue statistics.
fn apply_task_need(cl: &ClusterCtl, p: &ClusterParams, busy: usize, nr_cpus: usize) -> usize {
    if cl.nrrun >= p.task_thres {
        return nr_cpus;
    }
    let mut need = busy as u64;
    if cl.nr_prev_assist >= p.nr_prev_assist_thresh {
        need += cl.nr_prev_assist;
    }
    if cl.nrrun > need {
        need += 1;
    }
    if cl.max_nr > MAX_NR_THRESHOLD {
        need += 1;
    }
    need as usize
}

/// try_to_isolate(): non-busy active CPUs in LRU order until the need is met; each goes
/// to the back of the list.
fn try_to_isolate(cc: &mut CoreCtl, s: &mut Sim, ci: usize, need: usize, mut n_active: usize) {
    let lru = cc.clusters[ci].lru.clone();
    for c in lru {
        if n_active <= need {
            break;
        }
        if s.cpu_isolated & (1u64 << c) != 0 || cc.busy & (1u64 << c) != 0 {
            continue;
        }
        if s.rqs[c].waking_until.is_some() {
            continue; // leaving an idle state with a wakeup pending: left for the next evaluation
        }
        s.isolate_cpu(c);
        cc.isolations += 1;
        n_active -= 1;
        let l = &mut cc.clusters[ci].lru;
        l.retain(|&x| x != c);
        l.push(c);
    }
}

/// try_to_unisolate(): isolated CPUs in LRU order until the need is met.
fn try_to_unisolate(cc: &mut CoreCtl, s: &mut Sim, ci: usize, need: usize, mut n_active: usize) {
    let lru = cc.clusters[ci].lru.clone();
    for c in lru {
        if n_active >= need {
            break;
        }
        if s.cpu_isolated & (1u64 << c) == 0 {
            continue;
        }
        s.cpu_isolated &= !(1u64 << c);
        cc.unisolations += 1;
        n_active += 1;
        let l = &mut cc.clusters[ci].lru;
        l.retain(|&x| x != c);
        l.push(c);
    }
}

impl Sim {
    /// sched_isolate_cpu(): no placements from now on; its tasks, but those that may run
    /// nowhere else, move to the first allowed CPU that is not isolated (migrate_tasks()
    /// with select_fallback_rq(): the lowest-numbered, on one node); an idle CPU, with nothing
    /// left to wake it, goes to its deepest idle state at once.
    pub(crate) fn isolate_cpu(&mut self, cpu: usize) {
        self.cpu_isolated |= 1u64 << cpu;
        let fallback = |s: &Sim, t: crate::sched::TaskId| {
            let allowed = s.tasks[t as usize].allowed & !s.cpu_isolated & !(1u64 << cpu);
            (allowed != 0).then(|| allowed.trailing_zeros() as usize)
        };
        let queued: Vec<crate::sched::TaskId> = {
            let rq = &self.rqs[cpu];
            rq.cfs
                .timeline
                .iter()
                .map(|&(_, t)| t)
                .chain(rq.rt_queue.iter().map(|&(_, _, t)| t))
                .filter(|&t| Some(t) != rq.curr)
                .collect()
        };
        for t in queued {
            if let Some(dst) = fallback(self, t) {
                self.migrate_queued(crate::balance::Migration { task: t, src: cpu, dst }, true);
            }
        }
        if let Some(t) = self.rqs[cpu].curr {
            if let Some(dst) = fallback(self, t) {
                self.migrate_running(crate::balance::Migration { task: t, src: cpu, dst });
            }
        }
        let ci = self.platform.cpu_cluster[cpu];
        let deepest = self.platform.clusters[ci].idle_states.len().saturating_sub(1);
        let now = self.now;
        let rq = &mut self.rqs[cpu];
        if rq.curr.is_none() && rq.waking_until.is_none() {
            if let Some(st) = rq.idle_state {
                if st != deepest {
                    rq.idle_state = Some(deepest);
                    rq.tick_stopped = true;
                    self.meter
                        .set_cpu(&self.platform, cpu, now, crate::energy::CpuPowerState::Idle(deepest));
                    self.trace_power(cpu);
                }
            }
        }
    }

    /// sched_update_nr_prod(): a CPU's nr_running (and big tasks) changed; the extension's
    /// averages integrate them. Kept only while core_ctl can act.
    pub(crate) fn core_ctl_nr_update(&mut self, cpu: usize) {
        if self.nr_avg.is_empty() {
            return;
        }
        // rq->nr_running: the queued tasks of every class, the running one included
        let nr = self.rqs[cpu].nr_running() as u64;
        let big = self.nr_big_tasks(cpu);
        let now = self.now;
        self.nr_avg[cpu].update(now, nr, big);
    }

    /// Every CPU's counts brought up to now (before the window's statistics are read).
    pub(crate) fn core_ctl_nr_refresh(&mut self) {
        for cpu in 0..self.rqs.len() {
            self.core_ctl_nr_update(cpu);
        }
    }

    /// walt_big_tasks(): rq->walt_stats.nr_big_tasks, the queued fair tasks whose p->misfit
    /// is set. The kernel keeps it as a counter that moves with each enqueue and dequeue
    /// and with each flag the tick flips; a count over the flags is the same number.
    fn nr_big_tasks(&self, cpu: usize) -> u64 {
        let cfs = &self.rqs[cpu].cfs;
        cfs.timeline
            .iter()
            .map(|&(_, t)| t)
            .chain(cfs.curr)
            .filter(|&t| self.tasks[t as usize].misfit)
            .count() as u64
    }

    /// enqueue_task_fair() (msm-4.14): p->misfit = !task_fits_max(p, cpu), before the
    /// task joins the runqueue, so the add_nr_running() that follows counts it.
    pub(crate) fn core_ctl_set_misfit(&mut self, cpu: usize, t: crate::sched::TaskId) {
        if self.nr_avg.is_empty() {
            return;
        }
        let misfit = !crate::find_best_target::task_fits_max_here(&self.sched_view(), t, cpu);
        self.tasks[t as usize].misfit = misfit;
    }

    /// task_tick_fair() (msm-4.14): the running task's flag taken again from
    /// task_fits_max() (update_misfit_status()); a change is counted from this instant
    /// (walt_fixup_nr_big_tasks() integrates the old count up to now first). The only
    /// other writer is the enqueue: a pick leaves the flag as it was.
    pub(crate) fn core_ctl_misfit_tick(&mut self, cpu: usize, t: crate::sched::TaskId) {
        if self.nr_avg.is_empty() {
            return;
        }
        let misfit = !crate::find_best_target::task_fits_max_here(&self.sched_view(), t, cpu);
        if misfit != self.tasks[t as usize].misfit {
            self.tasks[t as usize].misfit = misfit;
            self.core_ctl_nr_update(cpu);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::testutils::{costs_off, two_cluster_platform};
    use crate::{PolicyConfig, Sim, WorkloadSpec};
    use serde_json::json;

    const MS: u64 = 1_000_000;
    /// schedtune's group index of top-app (schedtune::GROUPS)
    const TOP_APP: usize = 3;

    /// test-2x2 under msm-4.14 (WALT, so core_ctl's runqueue statistics are kept; ticks
    /// every 4 ms): B, in top-app, and C, in the root group, both pinned to little CPU 0;
    /// C arrives at 7 ms. Both run without a break.
    fn sim() -> Sim {
        let b = json!({"name": "B", "cpus": [0], "stune": "top-app", "loop": 1,
            "phases": [{"loop": 1, "events": [{"runtime": 1_000 * MS}]}]});
        let c = json!({"name": "C", "cpus": [0], "delay_ns": 7 * MS, "loop": 1,
            "phases": [{"loop": 1, "events": [{"runtime": 1_000 * MS}]}]});
        let w = json!({"name": "misfit", "duration_ns": null, "timers": 0, "tasks": [b, c]});
        let pol: PolicyConfig = costs_off(
            serde_json::from_value(json!({"scheduler": "cfs", "governor": "performance",
                "idle_governor": "oracle", "kernel": "msm-4.14"}))
            .unwrap(),
        );
        Sim::new(
            two_cluster_platform(),
            WorkloadSpec::from_json(&w.to_string()).unwrap(),
            pol,
        )
        .unwrap()
    }

    /// Every event before `t`.
    fn run_to(s: &mut Sim, t: u64) {
        while s.events.peek_time().is_some_and(|e| e < t) {
            s.step();
        }
    }

    #[test]
    fn a_boost_written_while_the_task_runs_counts_from_the_next_tick_to_the_tick_after_the_unboost() {
        let mut s = sim();
        assert_eq!(s.knobs.derived.tick_ns, 4 * MS);
        // Until the first window ends (20 ms) B's demand is WALT's initial load, 15 % of
        // the window: 153. Unboosted it fits little CPU 0 (capacity 512) under
        // sched_upmigrate 95 % (margin 1024 * 100 / 95 = 1077): 512 * 1024 > 153 * 1077. Its enqueue leaves p->misfit clear.
        run_to(&mut s, 4 * MS + 1);
        assert_eq!((s.nr_avg[0].nr, s.nr_avg[0].nr_big), (1, 0));
        // top-app's boost written to 10 after the 4 ms tick. Its boosted util, 153 +
        // (1024 - 153) * 10 / 100 = 240, would fit the margin too, but task_fits_max()
        // never fits a boosted task on a smallest-capacity CPU. Nothing re-reads the flag
        // at the write, nor at C's enqueue at 7 ms (C unboosted, 153: fits): 2 tasks, 0
        // big.
        s.stune.as_mut().unwrap().boost[TOP_APP] = 10;
        run_to(&mut s, 8 * MS);
        assert_eq!(s.nr_avg[0].last_time, 7 * MS);
        assert_eq!((s.nr_avg[0].nr, s.nr_avg[0].nr_big), (2, 0));
        // the 8 ms tick finds B running (C, forked with START_DEBIT, did not preempt it)
        // and sets its flag: 1 big task from 8 ms
        run_to(&mut s, 8 * MS + 1);
        assert_eq!(s.rqs[0].curr, Some(0));
        assert_eq!((s.nr_avg[0].nr_big, s.nr_avg[0].big_prod_sum), (1, 0));
        // unboosted again after the 8 ms tick: B (153) fits once more, but stays counted
        // until the 12 ms tick clears the flag; the window's big-task integral holds
        // 1 task x [8, 12) ms
        s.stune.as_mut().unwrap().boost[TOP_APP] = 0;
        run_to(&mut s, 12 * MS);
        assert_eq!(s.nr_avg[0].nr_big, 1);
        run_to(&mut s, 12 * MS + 1);
        assert_eq!((s.nr_avg[0].nr_big, s.nr_avg[0].big_prod_sum), (0, 4 * MS as u128));
    }
}
