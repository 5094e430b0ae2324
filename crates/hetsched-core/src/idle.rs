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
//!
//! menu differences: no iowait buckets or multiplier (no I/O is simulated), no PM QoS
//! latency limit, the tick is not kept for short predictions (NO_HZ idle throughout). A
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
}

impl Default for Menu {
    fn default() -> Self {
        Menu {
            correction_factor: [RESOLUTION * DECAY; BUCKETS],
            intervals: [0; INTERVALS],
            interval_ptr: 0,
            bucket: BUCKETS - 1,
            next_timer_ns: u64::MAX,
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

    /// menu_update()/menu_reflect(): learn from an idle period that lasted `measured_ns`.
    pub fn update(&mut self, measured_ns: u64) {
        let measured = measured_ns.min(self.next_timer_ns);
        let mut f = self.correction_factor[self.bucket];
        f -= f / DECAY;
        if self.next_timer_ns > 0 && self.next_timer_ns != u64::MAX && measured < MAX_INTERESTING_NS {
            f += RESOLUTION * measured / self.next_timer_ns;
        } else {
            f += RESOLUTION;
        }
        self.correction_factor[self.bucket] = f.max(1);
        self.intervals[self.interval_ptr] = measured_ns / 1000;
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
        // every idle ends after 300 µs (woken by other CPUs' wakeups, not the timer)
        for _ in 0..40 {
            m.select(little, Some(5_000_000));
            m.update(300_000);
        }
        // factor -> 1024·8·(300/5000) ≈ 491: prediction ≈ 300 µs, and the last 8 idles
        // say 300 µs steadily: WFI
        assert_eq!(m.typical_interval_us(), 300);
        assert_eq!(m.select(little, Some(5_000_000)), 0);
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
    pub(crate) fn update_idle_rq_clock_pelt(&mut self, cpu: usize) {
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
        let rq = &mut self.rqs[cpu];
        rq.menu.update(now - rq.idle_since); // menu_reflect(): the idle period ends here
        rq.waking_until = Some(now + lat);
        rq.gen = rq.gen.wrapping_add(1);
        let gen = rq.gen;
        rq.idle_state = None;
        self.meter.set_cpu(&self.platform, cpu, now, CpuPowerState::Busy);
        self.trace_power(cpu);
        self.events
            .push(now + lat, EventKind::CpuReady { cpu: cpu as u32, gen });
    }

    /// Exit latency of the idle state `cpu` is really in (a cluster state it chose counts
    /// only if the whole cluster is in it).
    pub(crate) fn exit_latency_ns(&self, cpu: usize) -> u64 {
        let state = self.meter.cpus[cpu].effective_idle;
        self.platform.cluster_of(cpu).idle_states[state].exit_latency_ns
    }
}
