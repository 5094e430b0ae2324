//! The fair class, after kernel/sched/fair.c, in two forms chosen by the knob `fair.eevdf`
//! (-1: the kernel profile's): EEVDF as v6.12 runs it, the mainline-6.12 form
//! (`avg_vruntime()`, `pick_eevdf()` with RUN_TO_PARITY, `update_deadline()`, lag-preserving
//! `place_entity()`, DELAY_DEQUEUE with DELAY_ZERO, PREEMPT_SHORT), and CFS as v6.5 had it,
//! the android-4.19 form (nice weights, vruntime, `sched_slice()` from the period,
//! `check_preempt_tick()` and wakeup preemption, `place_entity()` with `min_vruntime`). Also
//! here: the PELT updates of the class, util_est's enqueue and dequeue, `update_curr()` (and
//! the deadline budget), and `task_tick_fair()`.
//!
//! Differences: no task groups (one flat cfs_rq per CPU); no next/last buddies (the skip buddy
//! only for sched_yield); no HRTICK; EEVDF's pick walks the queue by deadline to the first
//! eligible entity where the kernel's tree prunes by min_vruntime (the same pick), and
//! delayed tasks left where they are by the balancers; inverse weights computed as 2^32/w,
//! one unit below the kernel's table for some nice levels. docs/mechanisms/fair.md works the slices, the
//! eligibility test, delayed dequeue and util_est by hand.

use crate::core::*;
use crate::features::Knob;
use crate::pelt::SchedAvg;
use crate::pelt::{self, UTIL_AVG_UNCHANGED, UTIL_AVG_UNCHANGED_V4_19};
use crate::sorted_vec::{OrdSet, OrdSetIter};
use crate::workload::rtapp::work_in;
use crate::workload::Policy;

/// sched_prio_to_weight[], nice -20..19 (kernel/sched/core.c)
pub const SCHED_PRIO_TO_WEIGHT: [u64; 40] = [
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904, 3906, 3121, 2501,
    1991, 1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87, 70, 56, 45, 36, 29, 23, 18, 15,
];
pub const NICE_0_LOAD: u64 = 1024;

pub fn nice_to_weight(nice: i32) -> u64 {
    SCHED_PRIO_TO_WEIGHT[(nice + 20) as usize]
}

/// sched_prio_to_wmult[] = 2^32 / weight, truncated, as the kernel's table.
pub fn weight_to_wmult(w: u64) -> u64 {
    (1u64 << 32) / w
}

/// calc_delta_fair(): delta * NICE_0_LOAD / weight, via the inverse weight like
/// __calc_delta().
#[inline]
pub fn calc_delta_fair(delta: u64, weight: u64, wmult: u64) -> u64 {
    if weight == NICE_0_LOAD {
        return delta;
    }
    match delta.checked_mul(NICE_0_LOAD * wmult) {
        Some(p) => p >> 32,
        None => ((delta as u128 * NICE_0_LOAD as u128 * wmult as u128) >> 32) as u64,
    }
}

/// fits_capacity(): util must stay below ~80% of the capacity (util * 1280 < cap * 1024).
#[inline]
pub fn fits_capacity(util: u64, capacity: u64) -> bool {
    util * 1280 < capacity * 1024
}

/// se->slice: the custom slice, clamped as sched_attr's (0.1 ms .. 100 ms), else the base slice.
#[inline]
pub(crate) fn base_slice(se: &SchedEntity, base: u64) -> u64 {
    if se.slice > 0 {
        se.slice.clamp(100_000, 100_000_000)
    } else {
        base
    }
}

/// The scheduling entity of a task.
#[derive(Debug, Clone, Default)]
pub struct SchedEntity {
    pub weight: u64,
    pub wmult: u64,
    pub vruntime: u64,
    pub exec_start: u64,
    pub sum_exec_runtime: u64,
    pub prev_sum_exec_runtime: u64,
    pub on_rq: bool,
    /// the PELT signal is attached to the cfs_rq of the task's CPU (the kernel marks the
    /// detached state with last_update_time == 0)
    pub attached: bool,
    pub avg: SchedAvg,
    /// EEVDF: virtual deadline, lag saved at dequeue, and RUN_TO_PARITY's protection (the
    /// kernel's `vlag == deadline` marker, set when the entity is picked)
    pub deadline: u64,
    pub vlag: i64,
    pub protect: bool,
    /// `deadline` holds deadline − vruntime while the task migrates (PLACE_REL_DEADLINE)
    pub rel_deadline: bool,
    /// the custom slice (sched_attr.sched_runtime, 6.12); 0 = sysctl_sched_base_slice
    pub slice: u64,
    /// DELAY_DEQUEUE: the task slept while ineligible and stays queued (se.on_rq) until it
    /// is picked or woken
    pub sched_delayed: bool,
}

/// Tunables after SCHED_TUNABLESCALING_LOG: base value * (1 + ilog2(min(ncpu, 8))).
#[derive(Debug, Clone, Copy)]
pub struct CfsTunables {
    pub latency: u64,
    pub min_granularity: u64,
    pub wakeup_granularity: u64,
    pub nr_latency: u64,
}

impl CfsTunables {
    pub fn new(nr_cpus: usize, latency: u64, min_gran: u64, wakeup_gran: u64) -> Self {
        let factor = 1 + (nr_cpus.min(8) as u64).ilog2() as u64;
        let latency = latency * factor;
        let min_granularity = min_gran * factor;
        CfsTunables {
            latency,
            min_granularity,
            wakeup_granularity: wakeup_gran * factor,
            nr_latency: latency.div_ceil(min_granularity),
        }
    }

    /// The tunables from the sysctl knobs, scaled for `nr_cpus` as the kernel does.
    pub fn from_knobs(nr_cpus: usize, knobs: &crate::features::Knobs) -> Self {
        use crate::features::Knob;
        CfsTunables::new(
            nr_cpus,
            knobs.get(Knob::SchedLatencyNs) as u64,
            knobs.get(Knob::SchedMinGranularityNs) as u64,
            knobs.get(Knob::SchedWakeupGranularityNs) as u64,
        )
    }

    /// __sched_period()
    pub fn period(&self, nr_running: u64) -> u64 {
        if nr_running > self.nr_latency {
            nr_running * self.min_granularity
        } else {
            self.latency
        }
    }
}

pub const MIN_VRUNTIME_START: u64 = 1 << 40;

#[derive(Debug, Clone)]
pub struct CfsRq {
    /// Sum of the weights of queued entities, curr included.
    pub load_weight: u64,
    pub nr_running: u32,
    /// h_nr_delayed: queued entities DELAY_DEQUEUE keeps (in nr_running, not runnable)
    pub nr_delayed: u32,
    pub min_vruntime: u64,
    /// Queued entities except curr, by (vruntime, task id), with their weighted sums.
    pub timeline: Timeline,
    /// The task running from this cfs_rq, if it is a fair task.
    pub curr: Option<u32>,
    pub avg: SchedAvg,
    /// Sum of the util_est ewma of enqueued tasks (root cfs_rq).
    pub util_est: u64,
    /// cfs_rq->removed.nr != 0: a task left by remove_entity_load_avg() (a wakeup
    /// migration, an exit), which the next update_cfs_rq_load_avg() reports as a decay.
    /// The engine subtracts the load at once; only this report is deferred.
    pub removed: bool,
}

impl Default for CfsRq {
    fn default() -> Self {
        CfsRq {
            load_weight: 0,
            nr_running: 0,
            nr_delayed: 0,
            min_vruntime: MIN_VRUNTIME_START,
            timeline: Timeline::default(),
            curr: None,
            avg: SchedAvg::default(),
            util_est: 0,
            removed: false,
        }
    }
}

/// The cfs_rq's queued entities except curr, by (vruntime, task id), and Σ w·v and Σ w
/// over them: the kernel keeps these sums as entities come and go (avg_vruntime_add() and
/// avg_vruntime_sub(), cfs_rq->avg_vruntime and avg_load) so that avg_vruntime() and
/// entity_eligible() do not walk the tree. They are kept absolute here, in i128 (a term
/// is below 2^81), so a move of min_vruntime changes nothing, and
/// Σ w·(v − min_vruntime) = Σ w·v − min_vruntime·Σ w is exact: the same sums a walk takes.
/// The entities are also kept by (deadline, vruntime, task id), the order v6.12's tree
/// keeps them in, so that pick_eevdf() stops at the first eligible one, and by (exec_start,
/// task id), least recently run first, so that detach_tasks() reads its few candidates off
/// the front as the kernel reads them off cfs_tasks' tail. Neither key changes while an
/// entity is queued (update_curr() and set_next_entity() move curr's only).
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    by_vruntime: OrdSet<(u64, u32)>,
    by_deadline: OrdSet<(u64, u64, u32)>,
    by_last_run: OrdSet<(u64, u32)>,
    sum_wv: i128,
    load: i128,
}

impl Timeline {
    /// Inserts the entity (vruntime, task) of weight `w`, virtual deadline `deadline` and
    /// exec_start `ran`; false if it was there.
    #[inline]
    pub fn insert(&mut self, key: (u64, u32), w: u64, deadline: u64, ran: u64) -> bool {
        if !self.by_vruntime.insert(key) {
            return false;
        }
        self.by_deadline.insert((deadline, key.0, key.1));
        self.by_last_run.insert((ran, key.1));
        self.sum_wv += key.0 as i128 * w as i128;
        self.load += w as i128;
        true
    }

    /// Removes the entity, whose weight is `w` and whose deadline and exec_start were
    /// `deadline` and `ran` when it was inserted; false if it was not there.
    #[inline]
    pub fn remove(&mut self, key: &(u64, u32), w: u64, deadline: u64, ran: u64) -> bool {
        if !self.by_vruntime.remove(key) {
            return false;
        }
        let found = self.by_deadline.remove(&(deadline, key.0, key.1));
        debug_assert!(found, "task {} left the timeline with another deadline", key.1);
        let found = self.by_last_run.remove(&(ran, key.1));
        debug_assert!(found, "task {} left the timeline with another exec_start", key.1);
        self.sum_wv -= key.0 as i128 * w as i128;
        self.load -= w as i128;
        true
    }

    /// (Σ w·(v − base), Σ w) over the entities.
    #[inline]
    pub fn sums(&self, base: i128) -> (i128, i128) {
        (self.sum_wv - base * self.load, self.load)
    }

    #[inline]
    pub fn contains(&self, key: &(u64, u32)) -> bool {
        self.by_vruntime.contains(key)
    }

    #[inline]
    pub fn first(&self) -> Option<&(u64, u32)> {
        self.by_vruntime.first()
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.by_vruntime.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.by_vruntime.is_empty()
    }

    /// By (vruntime, task id).
    #[inline]
    pub fn iter(&self) -> OrdSetIter<'_, (u64, u32)> {
        self.by_vruntime.iter()
    }

    /// (exec_start, task id), least recently run first.
    #[inline]
    pub fn iter_by_last_run(&self) -> OrdSetIter<'_, (u64, u32)> {
        self.by_last_run.iter()
    }

    /// (deadline, vruntime, task id), earliest deadline first.
    #[inline]
    pub fn iter_by_deadline(&self) -> OrdSetIter<'_, (u64, u64, u32)> {
        self.by_deadline.iter()
    }
}

impl<'a> IntoIterator for &'a Timeline {
    type Item = &'a (u64, u32);
    type IntoIter = OrdSetIter<'a, (u64, u32)>;
    fn into_iter(self) -> Self::IntoIter {
        self.by_vruntime.iter()
    }
}

impl CfsRq {
    /// h_nr_running - h_nr_delayed: the entities that want to run, the cfs_rq's runnable.
    pub fn nr_runnable(&self) -> u32 {
        self.nr_running - self.nr_delayed
    }

    #[inline]
    pub fn leftmost(&self) -> Option<(u64, u32)> {
        self.timeline.first().copied()
    }

    /// update_min_vruntime(): monotonic, follows min(curr, leftmost).
    pub fn update_min_vruntime(&mut self, curr_vruntime: Option<u64>) {
        let mut v = self.min_vruntime;
        let left = self.leftmost().map(|(vr, _)| vr);
        let cand = match (curr_vruntime, left) {
            (Some(c), Some(l)) => Some(c.min(l)),
            (Some(c), None) => Some(c),
            (None, Some(l)) => Some(l),
            (None, None) => None,
        };
        if let Some(c) = cand {
            v = v.max(c);
        }
        self.min_vruntime = v;
    }

    /// sched_slice(): the entity's share of the period. `on_rq` says whether se's weight
    /// is already in load_weight.
    pub fn sched_slice(&self, t: &CfsTunables, se_weight: u64, on_rq: bool) -> u64 {
        let nr = self.nr_running as u64 + (!on_rq) as u64;
        let slice = t.period(nr);
        let load = self.load_weight + if on_rq { 0 } else { se_weight };
        let s = (slice * se_weight).checked_div(load).unwrap_or(slice);
        // BASE_SLICE feature: never below the minimum granularity
        s.max(t.min_granularity)
    }

    /// place_entity(): new tasks start one vslice after min_vruntime (START_DEBIT); waking
    /// tasks get at most half a latency of sleeper credit (GENTLE_FAIR_SLEEPERS), and never
    /// gain time by being placed backwards.
    pub fn place_entity(&self, t: &CfsTunables, se: &mut SchedEntity, initial: bool) {
        let mut vruntime = self.min_vruntime;
        if initial {
            let slice = self.sched_slice(t, se.weight, false);
            vruntime += calc_delta_fair(slice, se.weight, se.wmult);
            se.vruntime = vruntime;
        } else {
            vruntime = vruntime.saturating_sub(t.latency >> 1);
            se.vruntime = se.vruntime.max(vruntime);
        }
    }

    /// wakeup_preempt_entity(): 1 if `se` should preempt curr.
    pub fn wakeup_preempt(&self, t: &CfsTunables, curr_vruntime: u64, se: &SchedEntity) -> bool {
        let vdiff = curr_vruntime as i64 - se.vruntime as i64;
        if vdiff <= 0 {
            return false;
        }
        let gran = calc_delta_fair(t.wakeup_granularity, se.weight, se.wmult);
        vdiff > gran as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_are_the_kernel_table() {
        assert_eq!(nice_to_weight(0), 1024);
        assert_eq!(nice_to_weight(-20), 88761);
        assert_eq!(nice_to_weight(19), 15);
        // each nice step is ~1.25x ("10% of CPU per nice level")
        for w in SCHED_PRIO_TO_WEIGHT.windows(2) {
            let r = w[0] as f64 / w[1] as f64;
            assert!((1.15..1.35).contains(&r), "{r}");
        }
        assert_eq!(weight_to_wmult(1024), 4194304);
        assert_eq!(weight_to_wmult(88761), 48388);
    }

    #[test]
    fn vruntime_advances_inversely_to_weight() {
        let w = nice_to_weight(5); // 335
        let d = calc_delta_fair(1_000_000, w, weight_to_wmult(w));
        let exact = 1_000_000.0 * 1024.0 / 335.0;
        assert!((d as f64 - exact).abs() / exact < 1e-6, "{d} vs {exact}");
    }

    #[test]
    fn tunables_scale_with_log_cpus_and_slices_split_the_period() {
        let t = CfsTunables::new(8, 6_000_000, 750_000, 1_000_000);
        assert_eq!(t.latency, 24_000_000);
        assert_eq!(t.min_granularity, 3_000_000);
        assert_eq!(t.nr_latency, 8);
        let rq = CfsRq {
            nr_running: 2,
            load_weight: 1024 + 335,
            ..Default::default()
        };
        // two tasks, nice 0 and nice 5: slices 24ms * w/W
        let s0 = rq.sched_slice(&t, 1024, true);
        assert_eq!(s0, 24_000_000 * 1024 / 1359);
        assert_eq!(rq.sched_slice(&t, 335, true), 24_000_000 * 335 / 1359);
        // 10 tasks: the period stretches to 10 * min_granularity
        assert_eq!(t.period(10), 30_000_000);
        let t2 = CfsTunables::new(2, 6_000_000, 750_000, 1_000_000);
        assert_eq!(t2.latency, 12_000_000);
    }
}

/// How a task's PELT contribution leaves its old cfs_rq.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detach {
    /// dequeued for a migration or a class change: detach_entity_load_avg() at once, and
    /// the cpufreq hook
    Queued,
    /// a sleeping task migrating at its wakeup, or exiting: remove_entity_load_avg(), which
    /// the old cfs_rq's next PELT update reports as a decay
    Removed,
}

// ---------------------------------------------------------------------------------------
// the fair class on the runqueues: PELT updates, update_curr, EEVDF, check_preempt_tick (fair.c)

impl Sim {
    /// The 4.19 PELT's accumulate_sum() factors for `cpu` (pelt.rs); None from v5.1 on,
    /// whose clock_pelt is invariant already.
    #[inline]
    pub(crate) fn pelt_scale(&self, cpu: usize) -> Option<pelt::ContribScale> {
        self.profile.pelt_4_19().then(|| pelt::ContribScale {
            freq: self.freq_scale(cpu),
            cpu: self.platform.capacity_orig(cpu),
        })
    }

    /// __update_load_avg_se(): with UTIL_EST, a recomputed util_avg clears UNCHANGED
    /// (cfs_se_util_change(); 4.19's flag is enqueued's LSB).
    pub(crate) fn update_se_avg(&mut self, cpu: usize, t: TaskId) {
        let scale = self.pelt_scale(cpu);
        let rq = &self.rqs[cpu];
        let now = rq.pelt_now();
        let running = rq.cfs.curr == Some(t);
        let task = &mut self.tasks[t as usize];
        let on_rq = task.se.on_rq as u64;
        // se_runnable() (v6.12): a delayed entity still weighs in load but is not runnable
        let runnable = (task.se.on_rq && !task.se.sched_delayed) as u64;
        if task
            .se
            .avg
            .update_scaled(now, on_rq, runnable, running, task.se.weight, scale)
        {
            task.se.avg.util_est &= !UTIL_AVG_UNCHANGED;
            task.se.avg.util_est_enqueued &= !UTIL_AVG_UNCHANGED_V4_19;
        }
    }

    /// update_load_avg(cfs_rq, se, flags): the entity (if any, and if attached), then the
    /// cfs_rq; attach a migrated/new entity. cfs_rq_util_change() calls the cpufreq hook
    /// when the root cfs_rq's signals decayed (a PELT period boundary passed, or removed
    /// load was folded in) or an entity was attached.
    pub(crate) fn update_load_avg(&mut self, cpu: usize, se: Option<TaskId>, attach: bool) {
        if self.update_load_avg_nohook(cpu, se, attach) {
            self.cpufreq_update_util(cpu, 0);
        }
    }

    /// update_load_avg() up to the hook: whether cfs_rq_util_change() is due.
    pub(crate) fn update_load_avg_nohook(&mut self, cpu: usize, se: Option<TaskId>, attach: bool) -> bool {
        if let Some(t) = se {
            if self.tasks[t as usize].se.attached {
                self.update_se_avg(cpu, t);
            }
        }
        let scale = self.pelt_scale(cpu);
        let rq = &mut self.rqs[cpu];
        let now = rq.pelt_now();
        // __update_load_avg_cfs_rq(): runnable is h_nr_running less h_nr_delayed (v6.12.8:
        // "sched/eevdf: More PELT vs DELAYED_DEQUEUE", backported to the stable 6.12 series)
        let decayed = rq.cfs.avg.update_scaled(
            now,
            rq.cfs.load_weight,
            rq.cfs.nr_runnable() as u64,
            rq.cfs.curr.is_some(),
            1,
            scale,
        ) | std::mem::take(&mut rq.cfs.removed);
        if let Some(t) = se {
            let task = &mut self.tasks[t as usize];
            if attach && !task.se.attached {
                pelt::attach_entity_load_avg(&mut self.rqs[cpu].cfs.avg, &mut task.se.avg, task.se.weight);
                task.se.attached = true;
                return true;
            }
        }
        decayed
    }

    /// The running task's progress up to now, at the speed its CPU ran since the last
    /// account: the kernel's work queued before it (costs.rs), then its own work, and its
    /// CPU time per CPU and per phase. This is the simulated machine's bookkeeping, not
    /// the kernel's: it runs wherever the speed or the program changes (a frequency
    /// commit, the end of a run event), where the kernel sees nothing.
    pub(crate) fn account_progress(&mut self, cpu: usize) {
        let Some(t) = self.rqs[cpu].curr else { return };
        let now = self.now;
        let delta = now.saturating_sub(self.tasks[t as usize].progress_at);
        if delta == 0 {
            return;
        }
        let own = self.run_overhead(cpu, delta);
        let ci = self.platform.cpu_cluster[cpu];
        let opp = self.clusters[ci].opp;
        let task = &mut self.tasks[t as usize];
        task.progress_at = now;
        task.stats.cpu_time_ns[cpu] += delta;
        task.stats.phases[task.phase].run_ns += delta;
        let done = match (task.cur, &task.perf) {
            (Cur::Run, None) => {
                let c = &self.platform.clusters[ci];
                mul_div(own, c.capacity_orig * c.opps[opp].khz, 1024 * c.fmax_khz)
            }
            (Cur::Run, Some(pf)) => work_in(own, pf.rate_q32[ci][opp], &mut task.cold_left, pf.cold_q32),
            (Cur::Memrun, _) => {
                let d = own.min(task.work_left);
                task.stats.memrun_done += d;
                own
            }
            (Cur::Runtime, _) => {
                task.stats.runtime_busy_ns += delta;
                0
            }
            _ => 0,
        };
        if done > 0 {
            let done = done.min(task.work_left);
            task.work_left -= done;
            task.stats.work_done += done;
            self.rqs[cpu].work_done += done;
        }
    }

    /// update_curr(): the running task's progress (account_progress), then the kernel's
    /// accounting of the time since exec_start: sum_exec_runtime, and the class's own
    /// (vruntime and the slice's end, a deadline task's runtime, RT bandwidth).
    pub(crate) fn update_curr(&mut self, cpu: usize) {
        self.account_progress(cpu);
        let Some(t) = self.rqs[cpu].curr else { return };
        let now = self.now;
        let delta = now.saturating_sub(self.tasks[t as usize].se.exec_start);
        if delta == 0 {
            return;
        }
        let task = &mut self.tasks[t as usize];
        task.se.exec_start = now;
        task.se.sum_exec_runtime += delta;
        if task.policy == Policy::Deadline {
            // update_curr_dl(): runtime is consumed scaled by frequency and capacity
            let (khz, fmax) = (self.khz(cpu), self.platform.cluster_of(cpu).fmax_khz);
            let scaled = mul_div(
                mul_div(delta, khz << 10, fmax),
                self.platform.capacity_orig(cpu),
                1 << 20,
            );
            let task = &mut self.tasks[t as usize];
            task.dl.runtime -= scaled as i64;
            if task.dl.runtime <= 0 {
                self.resched_cpu(cpu);
            }
            return;
        }
        if task.policy == Policy::Other {
            let vd = calc_delta_fair(delta, task.se.weight, task.se.wmult);
            task.se.vruntime += self.policy.calc_delta_fair(t, vd);
            let v = task.se.vruntime;
            let mut resched = false;
            if self.fair_eevdf && v >= task.se.deadline {
                // update_deadline(): a new slice; reschedule if anyone else is queued
                let slice = base_slice(&task.se, self.tunables.min_granularity);
                task.se.deadline = v + calc_delta_fair(slice, task.se.weight, task.se.wmult);
                task.se.protect = false;
                resched = true;
            }
            let unprotected = !task.se.protect;
            self.rqs[cpu].cfs.update_min_vruntime(Some(v));
            if self.fair_eevdf && self.rqs[cpu].cfs.nr_running > 1 {
                // did_preempt_short(): a curr whose protection is gone (a new deadline, or
                // cancelled by a shorter-slice waker) yields once it is no longer eligible
                if !resched && unprotected && self.knobs.get(Knob::FairPreemptShort) > 0.0 {
                    resched = !self.entity_eligible(cpu, t);
                }
                if resched {
                    self.resched_cpu(cpu);
                }
            }
            // a fair task's running time is charged to the fair server, whether it ran
            // under the server or not
            self.fair_server_update(cpu, delta);
        } else {
            if task.policy == Policy::Rr {
                task.rr_left_ns = task.rr_left_ns.saturating_sub(delta);
            }
            self.account_rt_bandwidth(cpu, delta);
        }
    }

    /// check_update_overutilized_status(): set rd->overutilized if this CPU is; it is
    /// cleared only by the load balancer's statistics pass.
    pub(crate) fn check_overutilized(&mut self, cpu: usize) {
        if self.eas_status == Some(Ok(())) && !self.overutilized && self.view().cpu_overutilized(cpu) {
            self.overutilized = true;
            self.counters.overutilized_set += 1;
        }
    }

    /// Move a sleeping or queued fair task's PELT and vruntime from `src` to `dst`'s frame
    /// (migrate_task_rq_fair / remove_entity_load_avg: sync to the source cfs_rq, subtract,
    /// attach on the next enqueue).
    pub(crate) fn detach_pelt_for_migration(&mut self, src: usize, t: TaskId, how: Detach) {
        let task = &mut self.tasks[t as usize];
        if task.is_rt() {
            return;
        }
        let src_idle = self.rqs[src].curr.is_none() && self.rqs[src].waking_until.is_none();
        if src_idle {
            self.update_rq_clock(src);
        }
        let scale = self.pelt_scale(src);
        let task = &mut self.tasks[t as usize];
        let rq = &mut self.rqs[src];
        // sync_entity_load_avg(): decay the blocked task to the cfs_rq's last update. If the
        // source CPU is idle its signals are not being updated, so migrate_se_pelt_lag()
        // decays the task further, to the PELT time the CPU would have now (its clock_pelt
        // at idle entry plus the time idle since: here the clock less lost_idle_time). The
        // engine decays the idle cfs_rq's blocked load to that time too before subtracting,
        // so the task's share leaves no residue (the kernel subtracts the removed load at
        // the cfs_rq's next update, before decaying it, and the residue decays away).
        let mut lut = rq.cfs.avg.last_update_time;
        if src_idle {
            lut = lut.max(rq.pelt_now());
            let (w, nr) = (rq.cfs.load_weight, rq.cfs.nr_runnable() as u64);
            rq.cfs.avg.update_scaled(lut, w, nr, false, 1, scale);
        }
        let cfs = &mut rq.cfs;
        task.se.avg.update(lut, 0, 0, false, task.se.weight);
        pelt::detach_entity_load_avg(&mut cfs.avg, &task.se.avg, task.se.weight);
        task.se.avg.last_update_time = 0;
        task.se.attached = false;
        match how {
            // detach_entity_load_avg() -> cfs_rq_util_change()
            Detach::Queued => self.cpufreq_update_util(src, 0),
            Detach::Removed => self.rqs[src].cfs.removed = true,
        }
    }

    /// post_init_entity_util_avg(): a new task starts with half the spare capacity of its
    /// CPU, in proportion to its weight; its load starts at its weight.
    pub(crate) fn post_init_entity_util_avg(&mut self, cpu: usize, t: TaskId) {
        let cap_orig = self.platform.capacity_orig(cpu) as i64;
        let cfs = &self.rqs[cpu].cfs.avg;
        let task = &mut self.tasks[t as usize];
        let w = task.se.weight;
        let sa = &mut task.se.avg;
        *sa = SchedAvg::default();
        sa.load_avg = w;
        let cap = (cap_orig - cfs.util_avg as i64) / 2;
        if task.policy == Policy::Other && cap > 0 {
            sa.util_avg = if cfs.util_avg != 0 {
                (cfs.util_avg * w / (cfs.load_avg + 1)).min(cap as u64)
            } else {
                cap as u64
            };
        }
        sa.runnable_avg = sa.util_avg;
    }

    #[inline]
    pub(crate) fn eevdf(&self) -> bool {
        self.fair_eevdf
    }

    /// entity_eligible(): v <= V, tested as Σ w (v_j − v0) >= (v − v0) Σ w (no division).
    pub(crate) fn entity_eligible(&self, cpu: usize, t: TaskId) -> bool {
        let (sum, load) = self.eevdf_sums(cpu, self.rqs[cpu].cfs.curr);
        let key = self.tasks[t as usize].se.vruntime as i128 - self.rqs[cpu].cfs.min_vruntime as i128;
        key * load <= sum
    }

    /// The entity EEVDF weighs besides the timeline's: `curr` if it runs a fair task that is
    /// on the runqueue and not in the timeline, as (task, vruntime − min_vruntime, weight).
    #[inline]
    fn eevdf_curr(&self, cpu: usize, curr: Option<TaskId>) -> Option<(TaskId, i128, i128)> {
        let cfs = &self.rqs[cpu].cfs;
        let c = curr?;
        let task = &self.tasks[c as usize];
        let se = &task.se;
        // cfs.curr is never in the timeline (set_next_entity() takes it out)
        let extra = se.on_rq && !task.is_rt() && (cfs.curr == Some(c) || !cfs.timeline.contains(&(se.vruntime, c)));
        extra.then(|| (c, se.vruntime as i128 - cfs.min_vruntime as i128, se.weight as i128))
    }

    /// Σ w (v − min_vruntime) and Σ w over the entities EEVDF weighs: the timeline's running
    /// sums and curr.
    #[inline]
    fn eevdf_sums(&self, cpu: usize, curr: Option<TaskId>) -> (i128, i128) {
        let cfs = &self.rqs[cpu].cfs;
        let (sum, load) = cfs.timeline.sums(cfs.min_vruntime as i128);
        match self.eevdf_curr(cpu, curr) {
            Some((_, key, w)) => (sum + key * w, load + w),
            None => (sum, load),
        }
    }

    /// avg_vruntime(): V = min_vruntime + Σ w (v − min_vruntime) / Σ w, floored; and Σ w.
    pub(crate) fn avg_vruntime(&self, cpu: usize) -> (i128, i128) {
        let (sum, load) = self.eevdf_sums(cpu, self.rqs[cpu].cfs.curr);
        let base = self.rqs[cpu].cfs.min_vruntime as i128;
        if load == 0 {
            return (base, 0);
        }
        (base + sum.div_euclid(load), load)
    }

    /// pick_eevdf(): among the eligible entities (v <= V, tested without division), the
    /// earliest deadline; a protected curr (RUN_TO_PARITY) keeps the CPU while eligible.
    /// The timeline's entities are walked by deadline, to the first eligible one (v6.12's
    /// tree prunes the ineligible subtrees by their min_vruntime instead).
    pub(crate) fn pick_eevdf(&self, cpu: usize, curr: Option<TaskId>) -> Option<TaskId> {
        let cfs = &self.rqs[cpu].cfs;
        let extra = self.eevdf_curr(cpu, curr);
        match (cfs.timeline.len(), extra) {
            (0, None) => return None,
            (0, Some(e)) => return Some(e.0),
            (1, None) => return cfs.timeline.first().map(|&(_, t)| t),
            _ => {}
        }
        let base = cfs.min_vruntime as i128;
        let (sum, load) = self.eevdf_sums(cpu, curr);
        let eligible = |key: i128| key * load <= sum;
        let prev = curr.or(self.rqs[cpu].curr);
        if let Some(c) = prev {
            let se = &self.tasks[c as usize].se;
            let weighed = extra.is_some_and(|e| e.0 == c) || cfs.timeline.contains(&(se.vruntime, c));
            if weighed && se.protect && eligible(se.vruntime as i128 - base) {
                return Some(c);
            }
        }
        let mut best = cfs
            .timeline
            .iter_by_deadline()
            .map(|&(d, v, t)| (d, v as i128 - base, t))
            .find(|e| eligible(e.1));
        if let Some((c, key, _)) = extra.filter(|e| eligible(e.1)) {
            let k = (self.tasks[c as usize].se.deadline, key, c);
            if best.is_none_or(|b| k < b) {
                best = Some(k);
            }
        }
        if let Some((_, _, t)) = best {
            return Some(t);
        }
        // none eligible: the smallest vruntime
        let left = cfs.timeline.first().map(|&(v, t)| (v as i128 - base, t));
        match (left, extra) {
            (Some(l), Some(e)) => Some(if (e.1, e.0) < l { e.0 } else { l.1 }),
            (Some(l), None) => Some(l.1),
            (None, e) => e.map(|e| e.0),
        }
    }

    /// place_entity() (PLACE_LAG, PLACE_DEADLINE_INITIAL, PLACE_REL_DEADLINE):
    /// v = V − vlag·(W + w)/W, and a deadline one slice (half for a new task, the rest of
    /// its slice for a migrated one) ahead.
    pub(crate) fn place_entity_eevdf(&mut self, cpu: usize, t: TaskId, initial: bool) {
        let (v_avg, load) = self.avg_vruntime(cpu);
        let se = &self.tasks[t as usize].se;
        let w = se.weight as i128;
        let lag = if load > 0 && se.vlag != 0 {
            se.vlag as i128 * (load + w) / load
        } else {
            0
        };
        let v = (v_avg - lag).max(0) as u64;
        let mut vslice = calc_delta_fair(base_slice(se, self.tunables.min_granularity), se.weight, se.wmult);
        if initial {
            vslice /= 2;
        }
        let se = &mut self.tasks[t as usize].se;
        if se.rel_deadline {
            vslice = se.deadline;
            se.rel_deadline = false;
        }
        se.vruntime = v;
        se.deadline = v + vslice;
        se.protect = false;
    }

    /// update_entity_lag(): vlag = V − v, clamped to ±(max(2 slices, a tick) in virtual time).
    pub(crate) fn update_entity_lag(&mut self, cpu: usize, t: TaskId) {
        let (v_avg, _) = self.avg_vruntime(cpu);
        let tick = self.knobs.derived.tick_ns;
        let se = &self.tasks[t as usize].se;
        let limit = calc_delta_fair(
            (2 * base_slice(se, self.tunables.min_granularity)).max(tick),
            se.weight,
            se.wmult,
        ) as i128;
        let lag = (v_avg - se.vruntime as i128).clamp(-limit, limit);
        self.tasks[t as usize].se.vlag = lag as i64;
    }

    /// check_preempt_tick(): the slice is used up, or curr is more than a slice ahead of
    /// the leftmost task once it has run at least the minimum granularity.
    pub(crate) fn check_preempt_tick(&self, cpu: usize, t: TaskId) -> bool {
        let rq = &self.rqs[cpu];
        let se = &self.tasks[t as usize].se;
        let ideal = self
            .policy
            .sched_slice(t, rq.cfs.sched_slice(&self.tunables, se.weight, true));
        let delta_exec = se.sum_exec_runtime - se.prev_sum_exec_runtime;
        if delta_exec > ideal {
            return true;
        }
        if delta_exec < self.tunables.min_granularity {
            return false;
        }
        match rq.cfs.leftmost() {
            Some((v, _)) => {
                let d = se.vruntime as i64 - v as i64;
                d > ideal as i64
            }
            None => false,
        }
    }

    /// enqueue_task_fair(): util_est, the iowait hook, PELT attach, the entity's place, the
    /// timeline.
    pub(crate) fn enqueue_task_fair(&mut self, cpu: usize, t: TaskId, wakeup: bool, initial: bool) {
        // util_est_enqueue() comes first so that the hooks below see the task's estimate
        let ewma = self.tasks[t as usize].se.avg.ewma();
        self.rqs[cpu].cfs.util_est += ewma;
        // the PELT update below may not reach cpufreq: a task back from an I/O wait
        // calls it here with SCHED_CPUFREQ_IOWAIT (on the Pixel's kernel only a task whose
        // uclamp.min is above 0: rvh_set_iowait_pixel_mod())
        let task = &self.tasks[t as usize];
        if task.in_iowait && (!self.profile.pixel() || task.uclamp[0] > 0) {
            self.cpufreq_update_util(cpu, crate::cpufreq::schedutil::SCHED_CPUFREQ_IOWAIT);
        }
        self.update_curr(cpu);
        if self.rqs[cpu].cfs.nr_running == 0 {
            if self.rqs[cpu].nr_running() == 0 {
                self.dl_server_update_idle_time(cpu, false); // the idle time until now
            }
            self.dl_server_start(cpu);
        }
        self.update_load_avg(cpu, Some(t), true);
        let eevdf = self.eevdf();
        if eevdf {
            self.place_entity_eevdf(cpu, t, initial);
        }
        let rq = &mut self.rqs[cpu];
        let task = &mut self.tasks[t as usize];
        if !eevdf && (initial || wakeup) {
            rq.cfs.place_entity(&self.tunables, &mut task.se, initial);
        }
        rq.cfs.load_weight += task.se.weight;
        rq.cfs.nr_running += 1;
        task.se.on_rq = true;
        rq.cfs.timeline.insert(
            (task.se.vruntime, t),
            task.se.weight,
            task.se.deadline,
            task.se.exec_start,
        );
        // only a wakeup's enqueue checks it: v6.12 (and the 4.14/4.19 Android kernels) take
        // any enqueue without ENQUEUE_WAKEUP as "task_new", a fork's, a balancer's
        // attach_task() or an affinity move alike
        if wakeup {
            self.check_overutilized(cpu);
        }
    }

    /// dequeue_task_fair(): `sleep` = the task blocks (util_est is updated), else it
    /// migrates or changes class. With DELAY_DEQUEUE a task that blocks while ineligible
    /// stays queued, marked sched_delayed (dequeue_entity() returning early).
    pub(crate) fn dequeue_task_fair(&mut self, cpu: usize, t: TaskId, sleep: bool) {
        self.update_curr(cpu);
        self.policy.dequeue_task(&view!(self), cpu, t, sleep);
        let cap = self.platform.capacity_orig(cpu);
        let legacy = self.legacy();
        if !legacy || self.profile.pixel() {
            let rq = &mut self.rqs[cpu];
            let task = &mut self.tasks[t as usize];
            // util_est_dequeue() then, for a sleep, util_est_update() before the PELT update;
            // a delayed task's estimate left at its sleep. 5.10 leaves the rq's sum first too
            // but samples at the end (below).
            if !task.se.sched_delayed {
                rq.cfs.util_est = rq.cfs.util_est.saturating_sub(task.se.avg.ewma());
            }
            if sleep && !legacy {
                pelt::util_est_update(&mut task.se.avg, cap);
            }
        }
        // DEQUEUE_SPECIAL (a dying task) is never delayed: nothing would wake it
        if sleep
            && self.tasks[t as usize].state != TaskState::Exited
            && self.fair_eevdf
            && self.knobs.get(Knob::FairDelayDequeue) > 0.0
            && !self.entity_eligible(cpu, t)
        {
            // it keeps its place, its weight in the load and its count in nr_running until
            // pick_next_entity() meets it or it wakes; set_delayed() counts it in
            // h_nr_delayed, so the cfs_rq's runnable PELT leaves it out
            self.update_load_avg(cpu, Some(t), false);
            self.tasks[t as usize].se.sched_delayed = true;
            self.rqs[cpu].cfs.nr_delayed += 1;
            self.counters.delayed_dequeues += 1;
            let rq = &mut self.rqs[cpu];
            if rq.cfs.curr == Some(t) {
                // schedule()'s put_prev_entity(): back into the tree
                rq.cfs.curr = None;
                rq.curr = None;
                let se = &self.tasks[t as usize].se;
                rq.cfs
                    .timeline
                    .insert((se.vruntime, t), se.weight, se.deadline, se.exec_start);
            }
            return;
        }
        // a sleep: the hook only if PELT decayed; a migration or class change (DO_DETACH):
        // the detach that follows (detach_pelt_for_migration) calls it instead
        if sleep {
            self.update_load_avg(cpu, Some(t), false);
        } else {
            self.update_load_avg_nohook(cpu, Some(t), false);
        }
        if self.legacy() {
            // 4.19 calls util_est_dequeue() at the end of dequeue_task_fair(): the hook
            // above still saw the task's estimate in the rq's sum, and the sample is the
            // util_avg that update has just recomputed (clearing the flag)
            let rq = &mut self.rqs[cpu];
            let task = &mut self.tasks[t as usize];
            if self.profile.pixel() {
                if sleep {
                    pelt::util_est_update_v5_10(&mut task.se.avg, task.uclamp[1], cap);
                }
            } else {
                rq.cfs.util_est = rq.cfs.util_est.saturating_sub(task.se.avg.ewma());
                if sleep {
                    pelt::util_est_dequeue_v4_19(&mut task.se.avg);
                }
            }
        }
        // the deadline the timeline holds the task by, before PLACE_REL_DEADLINE makes it relative
        let queued_deadline = self.tasks[t as usize].se.deadline;
        if self.eevdf() {
            self.update_entity_lag(cpu, t);
            if !sleep {
                // PLACE_REL_DEADLINE: a migrating task keeps what is left of its slice
                let se = &mut self.tasks[t as usize].se;
                se.deadline = se.deadline.saturating_sub(se.vruntime);
                se.rel_deadline = true;
            }
        }
        let rq = &mut self.rqs[cpu];
        let task = &mut self.tasks[t as usize];
        if rq.cfs.curr == Some(t) {
            rq.cfs.curr = None;
            rq.curr = None;
        } else {
            rq.cfs.timeline.remove(
                &(task.se.vruntime, t),
                task.se.weight,
                queued_deadline,
                task.se.exec_start,
            );
        }
        rq.cfs.load_weight -= task.se.weight;
        rq.cfs.nr_running -= 1;
        task.se.on_rq = false;
        rq.cfs.update_min_vruntime(None);
        if !sleep {
            task.se.vruntime = task.se.vruntime.saturating_sub(rq.cfs.min_vruntime);
        }
        if rq.cfs.nr_running == 0 {
            self.dl_server_stop(cpu);
        }
    }

    /// The dequeue pick_next_entity() completes for a delayed task it picked
    /// (DEQUEUE_SLEEP | DEQUEUE_DELAYED): its lag is saved as at any dequeue, then
    /// finish_delayed_dequeue_entity() clips a positive one to 0 (DELAY_ZERO). util_est
    /// and the policy saw the sleep already.
    pub(crate) fn finish_delayed_dequeue(&mut self, cpu: usize, t: TaskId) {
        self.update_curr(cpu);
        self.update_load_avg(cpu, Some(t), false);
        self.update_entity_lag(cpu, t);
        let rq = &mut self.rqs[cpu];
        let task = &mut self.tasks[t as usize];
        debug_assert!(task.se.sched_delayed && rq.cfs.curr != Some(t));
        rq.cfs.timeline.remove(
            &(task.se.vruntime, t),
            task.se.weight,
            task.se.deadline,
            task.se.exec_start,
        );
        rq.cfs.load_weight -= task.se.weight;
        rq.cfs.nr_running -= 1;
        rq.cfs.nr_delayed -= 1;
        task.se.on_rq = false;
        task.se.sched_delayed = false;
        task.se.vlag = task.se.vlag.min(0);
        rq.cfs.update_min_vruntime(None);
        if rq.cfs.nr_running == 0 {
            self.dl_server_stop(cpu);
        }
    }

    /// enqueue_task_fair(ENQUEUE_DELAYED) from ttwu_runnable(): util_est_enqueue(), then
    /// requeue_delayed_entity(): DELAY_ZERO replaces a positive lag by 0 (placed at V with a
    /// fresh deadline), a negative one keeps the entity where it is.
    pub(crate) fn requeue_delayed_entity(&mut self, cpu: usize, t: TaskId) {
        let ewma = self.tasks[t as usize].se.avg.ewma();
        self.rqs[cpu].cfs.util_est += ewma;
        self.update_entity_lag(cpu, t);
        if self.tasks[t as usize].se.vlag > 0 {
            let se = &self.tasks[t as usize].se;
            let (key, w) = ((se.vruntime, t), se.weight);
            self.rqs[cpu].cfs.timeline.remove(&key, w, se.deadline, se.exec_start);
            self.tasks[t as usize].se.vlag = 0;
            self.place_entity_eevdf(cpu, t, false);
            let se = &self.tasks[t as usize].se;
            let (key, deadline, ran) = ((se.vruntime, t), se.deadline, se.exec_start);
            self.rqs[cpu].cfs.timeline.insert(key, w, deadline, ran);
        }
        self.update_load_avg(cpu, Some(t), false);
        self.tasks[t as usize].se.sched_delayed = false;
        self.rqs[cpu].cfs.nr_delayed -= 1;
    }

    /// check_preempt_wakeup_fair(): the woken fair task `p` preempts `c` if EEVDF would
    /// pick it now, or (CFS) it is far enough behind in vruntime.
    pub(crate) fn check_preempt_wakeup_fair(&mut self, cpu: usize, p: TaskId, c: TaskId) {
        self.update_rq_clock(cpu);
        self.update_curr(cpu);
        if self.eevdf() {
            // do_preempt_short(): a waker with a shorter slice that is eligible and has the
            // earlier deadline (or curr is no longer eligible) ends curr's protection
            if self.knobs.get(Knob::FairPreemptShort) > 0.0 && self.tasks[c as usize].se.protect {
                let min_gran = self.tunables.min_granularity;
                let (ps, cs) = (&self.tasks[p as usize].se, &self.tasks[c as usize].se);
                if base_slice(ps, min_gran) < base_slice(cs, min_gran)
                    && self.entity_eligible(cpu, p)
                    && (ps.deadline < cs.deadline || !self.entity_eligible(cpu, c))
                {
                    self.tasks[c as usize].se.protect = false; // cancel_protect_slice()
                    self.counters.preempt_short += 1;
                }
            }
            if self.pick_eevdf(cpu, Some(c)) == Some(p) {
                self.resched_cpu(cpu);
            }
            return;
        }
        let cv = self.tasks[c as usize].se.vruntime;
        if self.rqs[cpu]
            .cfs
            .wakeup_preempt(&self.tunables, cv, &self.tasks[p as usize].se)
        {
            self.resched_cpu(cpu);
        }
    }

    /// task_tick_fair(): PELT, overutilized and misfit status, the slice (CFS), the
    /// policy's own tick, and the misfit push of a balancer that has one.
    pub(crate) fn task_tick_fair(&mut self, cpu: usize, t: TaskId) {
        self.update_load_avg(cpu, Some(t), false);
        self.update_rt_avg(cpu);
        self.check_overutilized(cpu);
        self.rqs[cpu].misfit_task_load = crate::balance_fair::KernelLb::update_misfit_status(&self.view(), cpu);
        self.core_ctl_misfit_tick(cpu, t);
        if !self.eevdf() && self.check_preempt_tick(cpu, t) {
            self.resched_cpu(cpu);
            self.policy.put_prev_task(t);
        }
        // the policy acts on the whole simulation: it is held apart meanwhile,
        // so the core's calls into it during its tick reach a stand-in
        let mut policy = std::mem::replace(&mut self.policy, Box::new(crate::policies::Detached));
        policy.task_tick(self, cpu, t);
        self.policy = policy;
        if let Some(lb) = self.balancer.as_mut() {
            if let Some(m) = lb.misfit(&view!(self), cpu) {
                self.migrate_running(m);
            }
        }
    }
}
