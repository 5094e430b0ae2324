//! The fair class: CFS as in kernel/sched/fair.c before EEVDF (v6.5 and earlier):
//! nice weights, vruntime, `sched_slice()` from the period, tick and wakeup preemption,
//! placement with `min_vruntime`. EEVDF (6.6+) is a later variant; this is the documented
//! default until then (docs/mechanisms/fair.md).
//!
//! Not modelled: task groups (one flat cfs_rq per CPU), next/last/skip buddies.

use crate::pelt::SchedAvg;
use crate::sorted_vec::SortedVec;

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
    pub min_vruntime: u64,
    /// Queued entities except curr, by (vruntime, task id).
    pub timeline: SortedVec<(u64, u32)>,
    /// The task running from this cfs_rq, if it is a fair task.
    pub curr: Option<u32>,
    pub avg: SchedAvg,
    /// Sum of the util_est ewma of enqueued tasks (root cfs_rq).
    pub util_est: u64,
}

impl Default for CfsRq {
    fn default() -> Self {
        CfsRq {
            load_weight: 0,
            nr_running: 0,
            min_vruntime: MIN_VRUNTIME_START,
            timeline: SortedVec::default(),
            curr: None,
            avg: SchedAvg::default(),
            util_est: 0,
        }
    }
}

impl CfsRq {
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
