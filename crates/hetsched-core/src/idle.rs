//! CPU idle-state selection, after drivers/cpuidle/ (v6.12; linux-eas.md §11).
//!
//! `menu` (the default governor, as in the kernel) predicts the idle duration from the
//! time to the CPU's next timer, corrected per bucket by how long past idles actually
//! lasted against their timer, and capped by the typical interval of the last 8 idles
//! when they form a stable pattern; it then takes the deepest state whose target
//! residency and exit latency fit the prediction. `oracle` takes the deepest state whose
//! target residency fits the exact time to the next timer (what menu converges to when its
//! predictions are right). Either way a wakeup pays the exit latency of the state the CPU
//! is really in (a cluster-level state only if its whole idle domain is in one: energy.rs).
//! A sleep timer expires on the CPU that armed it, which leaves its idle state to run the
//! wakeup before any target CPU is woken (core.rs `timer_expired`).
//!
//! menu differences: no iowait buckets or multiplier (no I/O is simulated), no PM QoS
//! latency limit, the tick is not kept for short predictions (NO_HZ idle throughout, so no
//! idle ends with a tick). A
//! CPU with no timer armed predicts from the typical interval alone (next timer: infinite).
//!
//! docs/mechanisms/idle.md works the menu correction by hand.

use crate::core::*;
use crate::energy::CpuPowerState;
use crate::event::EventKind;
use crate::pelt::{self};
use crate::platform::Cluster;

/// Deepest state whose target residency fits `predicted_ns` (None: any), exit latency
/// within `latency_limit_ns`.
pub fn select_idle_state(cluster: &Cluster, predicted_ns: Option<u64>) -> usize {
    let states = &cluster.idle_states;
    match predicted_ns {
        None => states.len() - 1,
        Some(t) => states.iter().rposition(|s| s.target_residency_ns <= t).unwrap_or(0),
    }
}

const BUCKETS: usize = 6;
const INTERVALS: usize = 8;
const RESOLUTION: u64 = 1024;
const DECAY: u64 = 8;
/// MAX_INTERESTING: idles this long count as perfectly predicted
const MAX_INTERESTING_NS: u64 = 50_000_000;

/// which_bucket(): <10 µs, <100 µs, <1 ms, <10 ms, <100 ms, longer
fn which_bucket(duration_ns: u64) -> usize {
    match duration_ns {
        d if d < 10_000 => 0,
        d if d < 100_000 => 1,
        d if d < 1_000_000 => 2,
        d if d < 10_000_000 => 3,
        d if d < 100_000_000 => 4,
        _ => 5,
    }
}

/// Per-CPU state of the menu governor (struct menu_device).
#[derive(Debug, Clone)]
pub struct Menu {
    correction_factor: [u64; BUCKETS],
    /// the last idle durations, µs
    intervals: [u64; INTERVALS],
    interval_ptr: usize,
    bucket: usize,
    next_timer_ns: u64,
    /// the expected idle duration of the last select (u64::MAX: no prediction)
    pub(crate) predicted_ns: u64,
}

impl Default for Menu {
    fn default() -> Self {
        Menu {
            correction_factor: [RESOLUTION * DECAY; BUCKETS],
            intervals: [0; INTERVALS],
            interval_ptr: 0,
            bucket: BUCKETS - 1,
            next_timer_ns: u64::MAX,
            predicted_ns: u64::MAX,
        }
    }
}

impl Menu {
    /// get_typical_interval(): the mean of the last 8 idles if they are steady (mean² >
    /// 36·variance with at least 6 samples, or variance <= 400 µs²), dropping the largest
    /// outlier and retrying; u64::MAX when there is no pattern.
    fn typical_interval_us(&self) -> u64 {
        let mut thresh = u64::MAX;
        loop {
            let (mut sum, mut max, mut n) = (0u64, 0u64, 0u64);
            for &v in &self.intervals {
                if v <= thresh {
                    sum += v;
                    n += 1;
                    max = max.max(v);
                }
            }
            if max == 0 {
                return u64::MAX; // no history (or only zero-length idles): no pattern
            }
            let avg = sum / n;
            let variance = self
                .intervals
                .iter()
                .filter(|&&v| v <= thresh)
                .map(|&v| (v as i64 - avg as i64).pow(2) as u64)
                .sum::<u64>()
                / n;
            if ((avg as u128 * avg as u128) > 36 * variance as u128 && n >= (INTERVALS as u64 * 3 / 4))
                || variance <= 400
            {
                return avg;
            }
            if n * 4 <= INTERVALS as u64 * 3 {
                return u64::MAX; // too few samples left: no pattern
            }
            thresh = max - 1; // drop the largest and retry
        }
    }

    /// menu_select(): the state for an idle period whose next timer is `next_timer_ns`
    /// away (None: no timer).
    pub fn select(&mut self, cluster: &Cluster, next_timer_ns: Option<u64>) -> usize {
        let next = next_timer_ns.unwrap_or(u64::MAX);
        self.next_timer_ns = next;
        self.bucket = which_bucket(next);
        let corrected = if next == u64::MAX {
            u64::MAX
        } else {
            let f = self.correction_factor[self.bucket] as u128;
            ((next as u128 * f + (RESOLUTION * DECAY / 2) as u128) / (RESOLUTION * DECAY) as u128) as u64
        };
        let typical = self.typical_interval_us();
        let predicted = corrected.min(typical.saturating_mul(1000));
        self.predicted_ns = predicted;
        if predicted == u64::MAX {
            return cluster.idle_states.len() - 1;
        }
        // the deepest state whose residency and exit latency fit the prediction
        cluster
            .idle_states
            .iter()
            .rposition(|s| s.target_residency_ns <= predicted && s.exit_latency_ns <= predicted)
            .unwrap_or(0)
    }

    /// menu_update(): learn from an idle period. `residency_ns` is what cpuidle measures,
    /// from idle entry to the return from the state, so it includes the exit latency;
    /// `exit_latency_ns` is that of the state the governor chose. The wakeup itself came an
    /// exit latency before the end, so that much is taken off; a residency within twice the
    /// exit latency is read as a state barely reached and counts half. Capped at the time
    /// to the timer (a factor above 1 would only come from a late timer), the value trains
    /// the bucket's factor and is also what the pattern history keeps.
    pub fn update(&mut self, residency_ns: u64, exit_latency_ns: u64) {
        let measured = if residency_ns > 2 * exit_latency_ns {
            residency_ns - exit_latency_ns
        } else {
            residency_ns / 2
        };
        let measured = measured.min(self.next_timer_ns);
        let mut f = self.correction_factor[self.bucket];
        f -= f / DECAY;
        if self.next_timer_ns > 0 && self.next_timer_ns != u64::MAX && measured < MAX_INTERESTING_NS {
            f += RESOLUTION * measured / self.next_timer_ns;
        } else {
            f += RESOLUTION;
        }
        self.correction_factor[self.bucket] = f.max(1);
        self.intervals[self.interval_ptr] = measured / 1000;
        self.interval_ptr = (self.interval_ptr + 1) % INTERVALS;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutils::two_cluster_platform;

    #[test]
    fn deepest_state_that_fits() {
        let p = two_cluster_platform();
        let little = &p.clusters[0]; // WFI res 1us, cluster-sleep res 2000us
        assert_eq!(select_idle_state(little, Some(500)), 0);
        assert_eq!(select_idle_state(little, Some(1_999_999)), 0);
        assert_eq!(select_idle_state(little, Some(2_000_000)), 1);
        assert_eq!(select_idle_state(little, None), 1);
    }

    #[test]
    fn menu_learns_that_idles_end_early() {
        let p = two_cluster_platform();
        let little = &p.clusters[0]; // cluster-sleep: residency 2 ms, exit 500 µs
        let mut m = Menu::default();
        // timer 5 ms away, no history: the factor is 1 and the prediction 5 ms -> deep
        assert_eq!(m.select(little, Some(5_000_000)), 1);
        // every wakeup comes 300 µs into the idle (other CPUs' wakeups, not the timer);
        // the measured residency adds the exit latency of the state the CPU was in
        for _ in 0..40 {
            let s = m.select(little, Some(5_000_000));
            let lat = little.idle_states[s].exit_latency_ns;
            m.update(300_000 + lat, lat);
        }
        // in cluster-sleep 800 µs <= 2·500 µs counts half (400 µs); once in WFI 301 - 1 =
        // 300 µs. factor -> 1024·8·(300/5000) ≈ 491: prediction ≈ 300 µs, and the last 8
        // idles say 300 µs steadily: WFI
        assert_eq!(m.typical_interval_us(), 300);
        assert_eq!(m.select(little, Some(5_000_000)), 0);
    }

    /// menu_update() on a fresh bucket (factor 8192) after a selection with the timer 5 ms
    /// away (bucket 3), for a CPU that was in cluster-sleep (exit latency 500 µs).
    fn one_update(residency_ns: u64) -> Menu {
        let p = two_cluster_platform();
        let little = &p.clusters[0];
        let mut m = Menu::default();
        assert_eq!(m.select(little, Some(5_000_000)), 1);
        assert_eq!(m.bucket, 3);
        m.update(residency_ns, little.idle_states[1].exit_latency_ns);
        m
    }

    #[test]
    fn menu_update_halves_a_residency_within_twice_the_exit_latency() {
        // 400 µs measured, under the 500 µs exit latency itself: 400 <= 2·500, so the
        // state is taken as barely reached and the idle as 400/2 = 200 µs.
        // factor = 8192 - 8192/8 + 1024·200/5000 = 7168 + 40 (40.96) = 7208
        let m = one_update(400_000);
        assert_eq!(m.correction_factor[3], 7208);
        assert_eq!(m.intervals[0], 200);
        assert_eq!(m.interval_ptr, 1);
        // 700 µs (between one and two exit latencies): halved as well, 350 µs.
        // factor = 7168 + 1024·350/5000 = 7168 + 71 (71.68) = 7239
        let m = one_update(700_000);
        assert_eq!(m.correction_factor[3], 7239);
        assert_eq!(m.intervals[0], 350);
        // exactly 2·500 µs is still halved: 500 µs, factor 7168 + 102 (102.4) = 7270
        let m = one_update(1_000_000);
        assert_eq!(m.correction_factor[3], 7270);
        assert_eq!(m.intervals[0], 500);
        // the other buckets keep their unity factor
        assert_eq!(m.correction_factor[2], 8192);
    }

    #[test]
    fn menu_update_takes_the_exit_latency_off_a_long_residency_and_caps_it() {
        // 4.8 ms measured: the wakeup came 500 µs before the end, 4.3 ms into the idle.
        // factor = 7168 + 1024·4300/5000 = 7168 + 880 (880.64) = 8048; history 4300 µs
        let m = one_update(4_800_000);
        assert_eq!(m.correction_factor[3], 8048);
        assert_eq!(m.intervals[0], 4300);
        // 6 ms measured: 5.5 ms is past the 5 ms timer, so it is stored capped at 5 ms,
        // a perfect prediction: factor = 7168 + 1024·5000/5000 = 8192; history 5000 µs
        let m = one_update(6_000_000);
        assert_eq!(m.correction_factor[3], 8192);
        assert_eq!(m.intervals[0], 5000);
    }

    #[test]
    fn typical_interval_drops_outliers() {
        let mut m = Menu {
            intervals: [1000, 1010, 990, 1000, 1005, 995, 1000, 50_000],
            ..Default::default()
        };
        assert_eq!(m.typical_interval_us(), 1000);
        m.intervals = [10, 5000, 300, 90_000, 7, 2000, 40_000, 600];
        assert_eq!(m.typical_interval_us(), u64::MAX);
    }
}

// ---------------------------------------------------------------------------------------
// entering and leaving idle states (idle.c, cpuidle)

impl Sim {
    /// update_idle_rq_clock_pelt(): on idle entry, time a saturated CPU could not account
    /// (its util_sum at the max) is added to lost_idle_time so util does not creep up.
    /// (4.19 has neither: lost_idle_time stays 0 in the android-4.19 profile.)
    pub(crate) fn update_idle_rq_clock_pelt(&mut self, cpu: usize) {
        if self.legacy {
            self.rqs[cpu].clock_pelt = self.rqs[cpu].clock;
            return;
        }
        let rq = &mut self.rqs[cpu];
        let divider = ((pelt::LOAD_AVG_MAX as u64 - 1024) << 10) - pelt::LOAD_AVG_MAX as u64;
        let util_sum = rq.cfs.avg.util_sum + rq.avg_rt.util_sum;
        if util_sum >= divider {
            rq.lost_idle_time += rq.clock - rq.clock_pelt;
        }
        rq.clock_pelt = rq.clock;
    }

    pub(crate) fn enter_idle(&mut self, cpu: usize) {
        let now = self.now;
        self.rqs[cpu].misfit_task_load = 0; // update_misfit_status(NULL)
        self.update_idle_rq_clock_pelt(cpu);
        let next_timer = self.rqs[cpu].timers.first().map(|&(t, _)| t.saturating_sub(now));
        let cluster = &self.platform.clusters[self.platform.cpu_cluster[cpu]];
        let state = if self.hotplug.as_ref().is_some_and(|h| !h.is_online(cpu)) {
            cluster.idle_states.len() - 1 // hot-unplugged: powered down (hotplug.rs)
        } else if self.config.idle_governor == "menu" {
            self.rqs[cpu].menu.select(cluster, next_timer)
        } else {
            select_idle_state(cluster, next_timer)
        };
        let rq = &mut self.rqs[cpu];
        rq.idle_state = Some(state);
        // cpuidle_idle_call(): the tick is stopped, and tick_nohz_idle_stop_tick() counts an
        // idle call, unless menu expects less than a tick of idle (stop_tick = false); a
        // next timer closer than state 1's residency means WFI with the tick stopped
        let tick_ns = self.knobs.derived.tick_ns;
        let predicted = if self.config.idle_governor == "menu" {
            rq.menu.predicted_ns
        } else {
            next_timer.unwrap_or(u64::MAX)
        };
        let shallow_only = cluster.idle_states.len() <= 1
            || next_timer.is_some_and(|t| t < cluster.idle_states[1].target_residency_ns);
        if shallow_only || predicted >= tick_ns {
            rq.idle_calls += 1;
        }
        rq.idle_since = now;
        rq.gen = rq.gen.wrapping_add(1);
        self.fair_server[cpu].idle_mark = Some(now); // set_next_task_idle()
        self.meter.set_cpu(&self.platform, cpu, now, CpuPowerState::Idle(state));
        self.trace_power(cpu);
    }

    /// A task was enqueued on an idle CPU: the CPU leaves its idle state, paying the
    /// state's exit latency (counted as busy power) before it can schedule.
    pub(crate) fn kick_idle_cpu(&mut self, cpu: usize) {
        let rq = &self.rqs[cpu];
        if rq.waking_until.is_some() || rq.curr.is_some() {
            return;
        }
        if rq.idle_state.is_none() {
            // between a block and the next pick: not in an idle state yet
            self.resched_cpu(cpu);
            return;
        }
        let lat = self.exit_latency_ns(cpu);
        if lat == 0 {
            self.resched_cpu(cpu);
            return;
        }
        let now = self.now;
        self.menu_reflect(cpu, lat);
        let rq = &mut self.rqs[cpu];
        rq.waking_until = Some(now + lat);
        rq.gen = rq.gen.wrapping_add(1);
        let gen = rq.gen;
        rq.idle_state = None;
        self.meter.set_cpu(&self.platform, cpu, now, CpuPowerState::Busy);
        self.trace_power(cpu);
        self.events
            .push(now + lat, EventKind::CpuReady { cpu: cpu as u32, gen });
    }

    /// cpuidle_reflect() and the menu update it leads to: the idle period of `cpu` ends
    /// once the exit now starting, `exit_ns` long, is over (cpuidle's last_residency_ns runs
    /// from idle entry to the return from the state).
    pub(crate) fn menu_reflect(&mut self, cpu: usize, exit_ns: u64) {
        let Some(state) = self.rqs[cpu].idle_state else { return };
        let target_exit_latency = self.platform.cluster_of(cpu).idle_states[state].exit_latency_ns;
        let rq = &mut self.rqs[cpu];
        let residency = self.now + exit_ns - rq.idle_since;
        rq.menu.update(residency, target_exit_latency);
    }

    /// Whether `cpu` sits in an idle state it must leave, paying an exit latency, before it
    /// can take an interrupt's work (or is already leaving one).
    pub(crate) fn in_idle_state(&self, cpu: usize) -> bool {
        let rq = &self.rqs[cpu];
        rq.waking_until.is_some() || (rq.curr.is_none() && rq.idle_state.is_some() && self.exit_latency_ns(cpu) > 0)
    }

    /// Exit latency of the idle state `cpu` is really in (a cluster state it chose counts
    /// only if the whole cluster is in it).
    pub(crate) fn exit_latency_ns(&self, cpu: usize) -> u64 {
        let state = self.meter.cpus[cpu].effective_idle;
        self.platform.cluster_of(cpu).idle_states[state].exit_latency_ns
    }
}
