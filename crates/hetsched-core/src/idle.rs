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
//! menu also decides whether the tick may stop: a prediction under a tick keeps it, and an
//! idle CPU whose tick runs is woken at each jiffy (`idle_tick`), records the idle as
//! menu_update()'s tick case and chooses again (kernel/time/tick-sched.c, menu.c).
//!
//! v6.12's menu still weighs tasks in I/O wait (they went with 38f83090f515 in v6.13, and
//! in 6.12.y only with a stable backport of August 2025): a CPU that some task blocked in
//! I/O wait on (rq->nr_iowait, `nr_iowait_cpu()`) learns its correction factors in a
//! second set of buckets, and its latency limit is the prediction divided by 1 + 10 per
//! such task, keeping it shallower.
//!
//! menu differences: no PM QoS latency limit, no RESIDENCY_THRESHOLD_NS short-cut (the
//! timer is always read). A CPU with no timer armed predicts from the typical interval
//! alone (next timer: infinite).
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

/// six orders of magnitude of the timer distance, twice: without and with I/O waiters
const BUCKETS: usize = 12;
const INTERVALS: usize = 8;
const RESOLUTION: u64 = 1024;
const DECAY: u64 = 8;
/// MAX_INTERESTING: idles this long count as perfectly predicted
const MAX_INTERESTING_NS: u64 = 50_000_000;

/// which_bucket(): <10 µs, <100 µs, <1 ms, <10 ms, <100 ms, longer; the upper half when
/// any task waits for I/O on the CPU, since idles then end on I/O completions and would
/// skew the factors learnt without them
fn which_bucket(duration_ns: u64, nr_iowaiters: u32) -> usize {
    let base = if nr_iowaiters > 0 { BUCKETS / 2 } else { 0 };
    base + match duration_ns {
        d if d < 10_000 => 0,
        d if d < 100_000 => 1,
        d if d < 1_000_000 => 2,
        d if d < 10_000_000 => 3,
        d if d < 100_000_000 => 4,
        _ => 5,
    }
}

/// performance_multiplier(): the prediction must be this many times a state's exit
/// latency; each I/O waiter adds 10, menu's rule of thumb being that a CPU with I/O
/// outstanding is busy and should not pay for deep states
fn performance_multiplier(nr_iowaiters: u32) -> u64 {
    1 + 10 * nr_iowaiters as u64
}

/// What menu_select() reads of the tick (tick-sched.c): the period (TICK_NSEC), the time
/// to the next jiffy, and whether this CPU's tick is already stopped.
#[derive(Debug, Clone, Copy)]
pub struct TickContext {
    pub tick_ns: u64,
    pub to_next_tick_ns: u64,
    pub stopped: bool,
}

/// Per-CPU state of the menu governor (struct menu_device).
#[derive(Debug, Clone)]
pub struct Menu {
    correction_factor: [u64; BUCKETS],
    /// the last idle durations, µs
    pub(crate) intervals: [u64; INTERVALS],
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
            bucket: BUCKETS / 2 - 1,
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
    /// away (None: no timer), with `nr_iowaiters` tasks blocked in I/O wait on this CPU,
    /// and whether the tick may be stopped for it (`stop_tick`).
    /// The prediction is the timer distance corrected by the bucket's factor, capped by
    /// the typical interval. With the tick still running a short prediction keeps it, so a
    /// wrong guess costs at most one tick in a shallow state; once the tick is stopped (an
    /// idle period resumed without leaving the idle loop) a short prediction is distrusted
    /// and the time to the next timer used instead, since nothing would end a shallow state.
    pub fn select(
        &mut self,
        cluster: &Cluster,
        next_timer_ns: Option<u64>,
        nr_iowaiters: u32,
        tick: &TickContext,
    ) -> (usize, bool) {
        let states = &cluster.idle_states;
        let next = next_timer_ns.unwrap_or(u64::MAX);
        self.next_timer_ns = next;
        self.bucket = which_bucket(next, nr_iowaiters);
        // the next clock event: the tick if it runs, else the timer (tick_nohz_get_sleep_length's
        // delta_next)
        let delta_tick = if tick.stopped {
            next
        } else {
            next.min(tick.to_next_tick_ns)
        };
        // the timer comes before state 1 could pay off: WFI, and the tick may stop (WFI
        // is not a polling state)
        if states.len() <= 1 || next < states[1].target_residency_ns {
            self.predicted_ns = next;
            return (0, true);
        }
        let corrected = if next == u64::MAX {
            u64::MAX
        } else {
            let f = self.correction_factor[self.bucket] as u128;
            ((next as u128 * f + (RESOLUTION * DECAY / 2) as u128) / (RESOLUTION * DECAY) as u128) as u64
        };
        let typical = self.typical_interval_us();
        let mut predicted = corrected.min(typical.saturating_mul(1000));
        let mut latency_req = u64::MAX;
        if tick.stopped {
            if predicted < tick.tick_ns {
                predicted = next;
            }
        } else {
            // a stopped tick leaves the limit alone: a shallow state could then last long
            latency_req = predicted / performance_multiplier(nr_iowaiters);
        }
        let mut idx = 0;
        for (i, s) in states.iter().enumerate() {
            if s.target_residency_ns > predicted {
                if predicted < tick.tick_ns {
                    break;
                }
                if !tick.stopped {
                    // a shallow choice that the tick will end early: keep the tick and
                    // choose again then
                    predicted = states[idx].target_residency_ns;
                    break;
                }
                if states[idx].target_residency_ns < tick.tick_ns && s.target_residency_ns <= delta_tick {
                    idx = i;
                }
                self.predicted_ns = predicted;
                return (idx, true);
            }
            if s.exit_latency_ns > latency_req {
                break;
            }
            idx = i;
        }
        self.predicted_ns = predicted;
        if predicted < tick.tick_ns && !tick.stopped {
            // the tick stays: no state deeper than the time to the next event (tick included)
            if idx > 0 && states[idx].target_residency_ns > delta_tick {
                idx = states[..idx]
                    .iter()
                    .rposition(|s| s.target_residency_ns <= delta_tick)
                    .unwrap_or(0);
            }
            return (idx, false);
        }
        (idx, true)
    }

    /// menu_update(): learn from an idle period. `residency_ns` is what cpuidle measures,
    /// from idle entry to the return from the state, so it includes the exit latency;
    /// `exit_latency_ns` is that of the state the governor chose. The wakeup itself came an
    /// exit latency before the end, so that much is taken off; a residency within twice the
    /// exit latency is read as a state barely reached and counts half. Capped at the time
    /// to the timer (a factor above 1 would only come from a late timer), the value trains
    /// the bucket's factor and is also what the pattern history keeps.
    /// An idle period ended by the tick (`tick_wakeup`: the tick was kept at selection)
    /// while the timer was more than a tick away says the prediction was too short: it
    /// counts as 9/10 of MAX_INTERESTING (45 ms, then capped at the timer), pushing the
    /// next choices deeper.
    pub fn update(&mut self, residency_ns: u64, exit_latency_ns: u64, tick_wakeup: bool, tick_ns: u64) {
        let measured = if tick_wakeup && self.next_timer_ns > tick_ns {
            9 * MAX_INTERESTING_NS / 10
        } else if residency_ns > 2 * exit_latency_ns {
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

    /// CONFIG_HZ=250
    const TICK_NS: u64 = 4_000_000;
    /// a tick still running, the next jiffy a full period away
    const RUNNING_TICK: TickContext = TickContext {
        tick_ns: TICK_NS,
        to_next_tick_ns: TICK_NS,
        stopped: false,
    };

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
        assert_eq!(m.select(little, Some(5_000_000), 0, &RUNNING_TICK).0, 1);
        // every wakeup comes 300 µs into the idle (other CPUs' wakeups, not the timer);
        // the measured residency adds the exit latency of the state the CPU was in
        for _ in 0..40 {
            let s = m.select(little, Some(5_000_000), 0, &RUNNING_TICK).0;
            let lat = little.idle_states[s].exit_latency_ns;
            m.update(300_000 + lat, lat, false, TICK_NS);
        }
        // in cluster-sleep 800 µs <= 2·500 µs counts half (400 µs); once in WFI 301 - 1 =
        // 300 µs. factor -> 1024·8·(300/5000) ≈ 491: prediction ≈ 300 µs, and the last 8
        // idles say 300 µs steadily: WFI
        assert_eq!(m.typical_interval_us(), 300);
        assert_eq!(m.select(little, Some(5_000_000), 0, &RUNNING_TICK).0, 0);
    }

    /// menu_update() on a fresh bucket (factor 8192) after a selection with the timer 5 ms
    /// away (bucket 3), for a CPU that was in cluster-sleep (exit latency 500 µs).
    fn one_update(residency_ns: u64) -> Menu {
        let p = two_cluster_platform();
        let little = &p.clusters[0];
        let mut m = Menu::default();
        assert_eq!(m.select(little, Some(5_000_000), 0, &RUNNING_TICK).0, 1);
        assert_eq!(m.bucket, 3);
        m.update(residency_ns, little.idle_states[1].exit_latency_ns, false, TICK_NS);
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

    /// A tick running, `to_next_tick_ns` to the next jiffy.
    fn running_tick(to_next_tick_ns: u64) -> TickContext {
        TickContext {
            tick_ns: TICK_NS,
            to_next_tick_ns,
            stopped: false,
        }
    }

    #[test]
    fn a_short_prediction_keeps_the_tick_until_tick_wakeups_push_menu_deeper() {
        // Little cluster: WFI (exit 1 µs, residency 1 µs), cluster-sleep (exit 500 µs,
        // residency 2 ms); TICK_NSEC 4 ms. The last 8 idles lasted 300 µs; a timer is due
        // 20 ms after idle entry, and the CPU re-enters idle right after each tick
        // (4, 8, 12 ms), the timer then 16, 12, 8 ms away.
        let p = two_cluster_platform();
        let little = &p.clusters[0];
        let mut m = Menu {
            intervals: [300; INTERVALS],
            ..Default::default()
        };
        // 1) timer 20 ms: bucket 4, factor 8192 (unity) -> 20 ms; typical interval 300 µs
        // (variance 0) -> predicted 300 µs, latency limit 300 µs. WFI fits; cluster-sleep's
        // 2 ms residency does not, and 300 µs < TICK_NSEC: stop there, keep the tick.
        assert_eq!(m.select(little, Some(20_000_000), 0, &RUNNING_TICK), (0, false));
        assert_eq!(m.predicted_ns, 300_000);
        // the tick ends it 4 ms in: a tick wakeup with the timer (20 ms) beyond a tick, so
        // measured = 9/10·50 ms = 45 ms, capped at the 20 ms timer; 20 ms < MAX_INTERESTING:
        // factor = 8192 - 8192/8 + 1024·20/20 = 8192; history keeps 20000 µs
        m.update(4_000_000 + 1_000, 1_000, true, TICK_NS);
        assert_eq!(m.correction_factor[4], 8192);
        assert_eq!(m.intervals[0], 20_000);
        // 2) timer 16 ms: [20000, 300 x7] has no pattern (variance ~3.6e7 µs², avg 2762 µs),
        // dropping 20000 leaves 300 x7: typical 300 µs -> WFI, tick kept again
        assert_eq!(m.select(little, Some(16_000_000), 0, &RUNNING_TICK), (0, false));
        m.update(4_000_000 + 1_000, 1_000, true, TICK_NS); // 45 ms capped at 16 ms
        assert_eq!(m.intervals[1], 16_000);
        // 3) timer 12 ms: [20000, 16000, 300 x6]: fails, drop 20000; [16000, 300 x6]: avg
        // 2542, variance 30182449 (avg² 6.5e6 < 36·var), 7 samples > 6: drop 16000; 300 x6
        // variance 0 -> 300 µs, WFI with the tick
        assert_eq!(m.select(little, Some(12_000_000), 0, &RUNNING_TICK), (0, false));
        m.update(4_000_000 + 1_000, 1_000, true, TICK_NS); // capped at 12 ms
        assert_eq!(m.intervals[2], 12_000);
        // 4) timer 8 ms (bucket 3, unity factor): [20000, 16000, 12000, 300 x5] fails; drop
        // 20000, fails; drop 16000: [12000, 300 x5] avg 2250, variance 19012500, fails, and
        // 6 samples is 3/4 of 8: no pattern. Predicted = the 8 ms timer >= TICK_NSEC:
        // cluster-sleep (2 ms <= 8 ms, exit 500 µs <= 8 ms), and the tick may stop.
        assert_eq!(m.select(little, Some(8_000_000), 0, &RUNNING_TICK), (1, true));
        assert_eq!(m.predicted_ns, 8_000_000);
    }

    #[test]
    fn an_idle_ended_by_the_tick_with_the_timer_within_a_tick_is_measured() {
        // timer 3 ms away (<= TICK_NSEC 4 ms), bucket 3: the tick-wakeup rule does not apply;
        // 1.001 ms in WFI (exit 1 µs) -> 1 ms measured; factor = 7168 + 1024·1/3 = 7509
        let p = two_cluster_platform();
        let mut m = Menu::default();
        m.select(&p.clusters[0], Some(3_000_000), 0, &RUNNING_TICK);
        m.update(1_001_000, 1_000, true, TICK_NS);
        assert_eq!(m.correction_factor[3], 7168 + 341);
        assert_eq!(m.intervals[0], 1_000);
    }

    #[test]
    fn a_stopped_tick_makes_menu_use_the_timer_for_a_short_prediction() {
        // history 300 µs, timer 20 ms: with the tick running, WFI and the tick kept; with the
        // tick already stopped, 300 µs < TICK_NSEC is replaced by the 20 ms timer:
        // cluster-sleep, and the tick stays stopped
        let p = two_cluster_platform();
        let little = &p.clusters[0];
        let mut m = Menu {
            intervals: [300; INTERVALS],
            ..Default::default()
        };
        assert_eq!(m.select(little, Some(20_000_000), 0, &RUNNING_TICK), (0, false));
        let stopped = TickContext {
            tick_ns: TICK_NS,
            to_next_tick_ns: TICK_NS,
            stopped: true,
        };
        assert_eq!(m.select(little, Some(20_000_000), 0, &stopped), (1, true));
        assert_eq!(m.predicted_ns, 20_000_000);
    }

    #[test]
    fn a_kept_tick_bounds_the_state_by_the_next_tick() {
        // no history, timer 3 ms: predicted 3 ms (unity factor) fits cluster-sleep (2 ms),
        // but 3 ms < TICK_NSEC keeps the tick. Next jiffy 4 ms away: the next event is the
        // timer (3 ms >= 2 ms), cluster-sleep stays; next jiffy 1 ms away: 2 ms > 1 ms, back
        // to WFI
        let p = two_cluster_platform();
        let little = &p.clusters[0];
        let mut m = Menu::default();
        assert_eq!(
            m.select(little, Some(3_000_000), 0, &running_tick(4_000_000)),
            (1, false)
        );
        assert_eq!(
            m.select(little, Some(3_000_000), 0, &running_tick(1_000_000)),
            (0, false)
        );
        // a timer closer than cluster-sleep's residency: WFI outright, the tick may stop
        assert_eq!(
            m.select(little, Some(1_500_000), 0, &running_tick(1_000_000)),
            (0, true)
        );
    }

    /// One CPU, one OPP (1 GHz: 200 mW, cluster 50 mW); WFI (exit 10 µs, residency 1 µs,
    /// 10 mW, cluster 15 mW) and cluster-sleep (exit 500 µs, residency 2 ms, 0 mW, cluster
    /// 2 mW). One task, forked only at 1 s; the scheduler's own costs at 0.
    fn one_cpu_idle_sim() -> Sim {
        one_cpu_sim(serde_json::json!(
            {"name": "late", "delay_ns": 1_000_000_000u64, "loop": 1, "phases": [{"events": [{"run": 1000}]}]}))
    }

    /// The same CPU running `task`.
    fn one_cpu_sim(task: serde_json::Value) -> Sim {
        use crate::platform::{ClusterSpec, IdleLevel, OppSpec, PlatformSpec};
        use crate::testutils::idle;
        use crate::{Platform, PolicyConfig, WorkloadSpec};
        let p = Platform::from_spec(PlatformSpec {
            switcher: false,
            idle_domains: vec![],
            shared_llc: false,
            device_init: None,
            name: "one".into(),
            power_model: "dt".into(),
            clusters: vec![ClusterSpec {
                name: "c".into(),
                cpus: vec![0],
                capacity_orig: 1024,
                opps: vec![OppSpec {
                    khz: 1_000_000,
                    power_uw: 200_000,
                    cluster_power_uw: 50_000,
                }],
                idle_states: vec![
                    idle("WFI", IdleLevel::Cpu, 10, 1, 10, 15),
                    idle("cluster-sleep", IdleLevel::Cluster, 500, 2000, 0, 2),
                ],
                context_switch_ns: None,
            }],
        })
        .unwrap();
        let w = serde_json::json!({"name": "idle", "duration_ns": null, "timers": 0, "tasks": [task]});
        let pol: PolicyConfig = crate::testutils::costs_off(
            serde_json::from_value(serde_json::json!({"scheduler": "cfs", "governor": "schedutil"})).unwrap(),
        );
        Sim::new(p, WorkloadSpec::from_json(&w.to_string()).unwrap(), pol).unwrap()
    }

    #[test]
    fn an_idle_cpu_with_a_kept_tick_wakes_each_jiffy_until_menu_goes_deep() {
        // The CPU sits in WFI from t=0 with the tick running. Its last idles: 4 of 45 ms
        // and, the 4 most recent slots to be overwritten next, 300 µs; no timer armed.
        // Each tick (4, 8, 12, 16 ms) takes it out of WFI (10 µs at busy power) and
        // menu_update() records 45 ms (a tick wakeup, the timer infinitely far):
        //   after the tick at 4 ms:  [45000 x5, 300 x3] -> no pattern; dropping every
        //     45000 leaves 300 x3, variance 0: typical 300 µs -> WFI, tick kept
        //   at 8 ms: [45000 x6, 300 x2] -> 300 µs, WFI; at 12 ms: x7 and 300 -> WFI
        //   at 16 ms: 45000 x8, variance 0: typical 45 ms >= TICK_NSEC -> cluster-sleep
        //     (residency 2 ms, exit 500 µs fit), the tick stops: no more ticks by 20 ms.
        let mut sim = one_cpu_idle_sim();
        sim.rqs[0].menu.intervals = [45_000, 45_000, 45_000, 45_000, 300, 300, 300, 300];
        sim.rqs[0].menu.interval_ptr = 4;
        // the idle entry at t=0, as the idle loop makes it after running a task: the tick
        // runs. [45000 x4, 300 x4]: avg 22650, variance 22350² -> no pattern; dropping the
        // 45000s leaves 300 x4: 300 µs, WFI with the tick kept
        sim.rqs[0].tick_stopped = false;
        sim.enter_idle(0);
        assert_eq!(sim.rqs[0].idle_state, Some(0));
        assert!(!sim.rqs[0].tick_stopped);
        sim.run_until(20_000_000);
        assert_eq!(sim.counters.idle_ticks, 4);
        assert_eq!(sim.rqs[0].idle_state, Some(1));
        assert!(sim.rqs[0].tick_stopped);
        sim.meter.sync(&sim.platform, 20_000_000);
        // WFI: [0, 4] + 3 x [x.01, x+4] = 4 + 3·3.99 = 15.97 ms
        // exits: 4 x 10 µs = 40 µs busy;  cluster-sleep: [16.01, 20] = 3.99 ms
        let m = &sim.meter.cpus[0];
        assert_eq!(m.idle_residency_ns, vec![15_970_000, 3_990_000]);
        assert_eq!(m.busy_ns, 40_000);
        // energy: WFI 15.97 ms x (10 + 15) mW = 399.25 µJ; busy 40 µs x (200 + 50) mW =
        // 10 µJ; cluster-sleep 3.99 ms x (0 + 2) mW = 7.98 µJ; 417.23 µJ in all (fJ below)
        assert_eq!(sim.meter.total_fj(), 417_230_000_000);
    }

    #[test]
    fn an_idle_cpu_with_a_long_prediction_stops_the_tick_and_sleeps_through() {
        // Same CPU, idle history 45 ms x8 (typical 45 ms, variance 0), no timer: the idle
        // entry at t=0 predicts 45 ms >= TICK_NSEC: cluster-sleep with the tick stopped, and
        // nothing wakes it by 20 ms (the jiffies at 4..16 ms pass it by).
        // energy: 20 ms x (0 + 2) mW = 40 µJ
        let mut sim = one_cpu_idle_sim();
        sim.rqs[0].menu.intervals = [45_000; INTERVALS];
        sim.rqs[0].tick_stopped = false;
        sim.enter_idle(0);
        assert_eq!(sim.rqs[0].idle_state, Some(1));
        assert!(sim.rqs[0].tick_stopped);
        sim.run_until(20_000_000);
        assert_eq!(sim.counters.idle_ticks, 0);
        sim.meter.sync(&sim.platform, 20_000_000);
        assert_eq!(sim.meter.cpus[0].idle_residency_ns, vec![0, 20_000_000]);
        assert_eq!(sim.meter.total_fj(), 40_000_000_000);
    }

    #[test]
    fn io_waiters_move_menu_to_the_upper_buckets() {
        // which_bucket(): 3 ms is in [1, 10) ms, bucket 3; with any task in I/O wait on the
        // CPU, the same magnitude in the upper half, 6 + 3 = 9
        assert_eq!(which_bucket(3_000_000, 0), 3);
        assert_eq!(which_bucket(3_000_000, 1), 9);
        assert_eq!(which_bucket(3_000_000, 4), 9);
        assert_eq!(which_bucket(9_999, 1), 6);
        assert_eq!(which_bucket(u64::MAX, 1), 11);
        // timer 3 ms, no history, next jiffy 4 ms away: predicted 3 ms (unity factor).
        // Without waiters the limit is 3 ms: cluster-sleep (residency 2 ms, exit 500 µs),
        // the tick kept (3 ms < TICK_NSEC). With one, 3 ms / 11 = 272,727 ns < 500 µs: WFI.
        let p = two_cluster_platform();
        let little = &p.clusters[0];
        let mut m = Menu::default();
        assert_eq!(m.select(little, Some(3_000_000), 0, &RUNNING_TICK), (1, false));
        assert_eq!(m.bucket, 3);
        assert_eq!(m.select(little, Some(3_000_000), 1, &RUNNING_TICK), (0, false));
        assert_eq!(m.bucket, 9);
        // 1.001 ms in WFI (exit 1 µs): 1 ms measured against the 3 ms timer trains bucket 9
        // alone: 8192 - 8192/8 + 1024·1/3 = 7168 + 341 = 7509
        m.update(1_001_000, 1_000, false, TICK_NS);
        assert_eq!(m.correction_factor[9], 7509);
        assert_eq!(m.correction_factor[3], 8192);
        // the next 3-ms selection with a waiter predicts (3e6·7509 + 4096) / 8192 =
        // 2,749,878 ns (the history [1000, 0 x7] has no pattern); without, still 3 ms
        m.select(little, Some(3_000_000), 1, &RUNNING_TICK);
        assert_eq!(m.predicted_ns, 2_749_878);
        m.select(little, Some(3_000_000), 0, &RUNNING_TICK);
        assert_eq!(m.predicted_ns, 3_000_000);
    }

    #[test]
    fn io_waiters_divide_the_latency_limit() {
        // performance_multiplier(): 1 + 10 per waiter. Timer 5 ms (>= TICK_NSEC), no
        // history: predicted 5 ms. Cluster-sleep (exit 500 µs) fits the 5-ms limit of no
        // waiters; with 2 the limit is 5 ms / 21 = 238,095 ns: WFI, the tick may stop.
        let p = two_cluster_platform();
        let little = &p.clusters[0];
        let mut m = Menu::default();
        assert_eq!(m.select(little, Some(5_000_000), 0, &RUNNING_TICK), (1, true));
        assert_eq!(m.select(little, Some(5_000_000), 2, &RUNNING_TICK), (0, true));
        // one waiter: the limit is 1/11 of the prediction; 5.5 ms / 11 = 500,000 ns admits
        // the 500-µs exit, 5,499,989 ns / 11 = 499,999 ns does not
        assert_eq!(m.select(little, Some(5_500_000), 1, &RUNNING_TICK), (1, true));
        assert_eq!(m.select(little, Some(5_499_989), 1, &RUNNING_TICK), (0, true));
        // with the tick already stopped menu_select() does not set the limit at all
        let stopped = TickContext {
            tick_ns: TICK_NS,
            to_next_tick_ns: TICK_NS,
            stopped: true,
        };
        assert_eq!(m.select(little, Some(5_000_000), 2, &stopped), (1, true));
    }

    #[test]
    fn a_task_in_io_wait_counts_on_its_cpu_until_its_wakeup() {
        // The task runs 1 µs of work, then waits 5 ms, in I/O (`iowait`) or not (`sleep`).
        // Either way the CPU's next event is 5 ms away (the wait's end is queued on the
        // CPU) and menu, with no history, predicts it. Sleeping: cluster-sleep (exit
        // 500 µs <= 5 ms). In I/O wait: rq->nr_iowait = 1, limit ~5 ms / 11 ≈ 454 µs: WFI.
        // The count ends with the wakeup at ~5 ms.
        let run = |wait: &str| {
            let mut sim = one_cpu_sim(serde_json::json!(
                {"name": "io", "loop": 1, "phases": [{"events": [{"run": 1000}, {wait: 5_000_000}, {"run": 1000}]}]}));
            sim.run_until(1_000_000);
            let during = (sim.nr_iowait_cpu(0), sim.rqs[0].idle_state, sim.rqs[0].menu.bucket);
            sim.run_until(6_000_000);
            (during, sim.nr_iowait_cpu(0))
        };
        assert_eq!(run("sleep"), ((0, Some(1), 3), 0));
        assert_eq!(run("iowait"), ((1, Some(0), 9), 0));
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
        if self.profile.pelt_4_19() {
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
        let tick_ns = self.knobs.derived.tick_ns;
        // the jiffy grid is global: the next tick is the next multiple of the period
        let tick = TickContext {
            tick_ns,
            to_next_tick_ns: (now / tick_ns + 1) * tick_ns - now,
            stopped: self.rqs[cpu].tick_stopped,
        };
        // hot-unplugged, or isolated by core_ctl with nothing left to wake it
        let offline =
            self.hotplug.as_ref().is_some_and(|h| !h.is_online(cpu)) || self.cpu_isolated & (1u64 << cpu) != 0;
        let (state, stop_tick) = if offline {
            (cluster.idle_states.len() - 1, true) // hot-unplugged: powered down (hotplug.rs)
        } else if self.config.idle_governor == "menu" {
            let nr_iowaiters = self.nr_iowait_cpu(cpu);
            self.rqs[cpu].menu.select(cluster, next_timer, nr_iowaiters, &tick)
        } else {
            // the oracle knows when its idle ends: nothing for a tick to correct
            (select_idle_state(cluster, next_timer), true)
        };
        self.trace_switch(cpu, None);
        self.trace_idle_enter(cpu, state);
        let rq = &mut self.rqs[cpu];
        rq.idle_state = Some(state);
        // cpuidle_idle_call() -> tick_nohz_idle_stop_tick() when the governor lets the tick
        // stop: that counts an idle call, and the tick stops unless the next timer is within
        // a tick anyway (tick_nohz_next_event() then keeps it); once stopped it stays so
        // until the CPU leaves the idle loop for a task
        if stop_tick {
            rq.idle_calls += 1;
            let keep = self.config.idle_governor == "menu" && !offline && next_timer.is_some_and(|t| t <= tick_ns);
            if !keep {
                rq.tick_stopped = true;
            }
        }
        rq.idle_since = now;
        rq.gen = rq.gen.wrapping_add(1);
        // set_next_task_idle(), only when schedule() picked the idle task: an idle loop that
        // goes back to cpuidle (after an idle tick or a timer expiry) keeps its start
        if self.fair_server[cpu].idle_mark.is_none() {
            self.fair_server[cpu].idle_mark = Some(now);
        }
        self.meter.set_cpu(&self.platform, cpu, now, CpuPowerState::Idle(state));
        self.trace_power(cpu);
    }

    /// A task was enqueued on an idle CPU: the CPU leaves its idle state, taking its wake
    /// latency (counted as busy power) before it can schedule. A measured one holds the
    /// IPI, the state's exit and the idle loop's way out to schedule(), which a real
    /// trace splits at cpu_idle's exit; here the exit is written when the CPU can schedule.
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
        let lat = self.wake_latency_ns(cpu);
        if lat == 0 {
            self.resched_cpu(cpu);
            return;
        }
        let now = self.now;
        self.menu_reflect(cpu, lat);
        // cpu_idle's PWR_EVENT_EXIT is written at CpuReady: cpuidle_enter_state() traces it
        // when the state's enter() returns, once the CPU is out of it (a measured wake
        // latency ends later, at schedule(): the simulated exit -> switch-in reads 0)
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
    /// from idle entry to the return from the state). `rq.idle_tick_wakeup` says whether the
    /// tick ended it (tick_nohz_idle_got_tick()).
    pub(crate) fn menu_reflect(&mut self, cpu: usize, exit_ns: u64) {
        let Some(state) = self.rqs[cpu].idle_state else { return };
        let target_exit_latency = self.platform.cluster_of(cpu).idle_states[state].exit_latency_ns;
        let tick_ns = self.knobs.derived.tick_ns;
        let rq = &mut self.rqs[cpu];
        let residency = self.now + exit_ns - rq.idle_since;
        rq.menu
            .update(residency, target_exit_latency, rq.idle_tick_wakeup, tick_ns);
    }

    /// The tick of an idle CPU whose tick was kept (menu's short prediction): the timer
    /// interrupt takes the CPU out of its idle state (the exit latency, as busy power), the
    /// tick runs once it is out (`idle_tick_handled`), and the idle loop, with nothing
    /// to run, asks the governor again.
    pub(crate) fn idle_tick(&mut self, cpu: usize) {
        self.counters.idle_ticks += 1;
        self.rqs[cpu].idle_tick_wakeup = true;
        if self.wake_latency_ns(cpu) == 0 {
            self.menu_reflect(cpu, 0);
            self.idle_tick_handled(cpu);
        } else {
            self.kick_idle_cpu(cpu);
        }
    }

    /// sched_tick() on a CPU out of idle for its tick, with the idle task current:
    /// update_rq_clock(), task_tick_idle() (nothing), then sched_balance_trigger(): the
    /// CPU's own periodic balance as CPU_IDLE when its next_balance has passed (an idle CPU
    /// does not kick the NOHZ balancer: its tick runs, so it is not in nohz.idle_cpus_mask).
    /// Then back to cpuidle, unless the balance pulled work.
    pub(crate) fn idle_tick_handled(&mut self, cpu: usize) {
        self.rqs[cpu].idle_tick_wakeup = false;
        let now = self.now;
        self.update_rq_clock(cpu);
        self.walt_update_curr(cpu, crate::walt::RavgEvent::TaskUpdate); // scheduler_tick()
        let isolated = self.cpu_isolated & (1u64 << cpu) != 0;
        if !isolated && self.balancer.as_ref().is_some_and(|lb| lb.periodic_due(cpu, now)) {
            let tick_ns = self.knobs.derived.tick_ns;
            let lb = self.balancer.as_mut().unwrap();
            let acts = lb.periodic(&view!(self), cpu, false, tick_ns);
            self.charge_balance_pass(cpu, true);
            self.update_rd_flags();
            self.apply_lb(acts, true);
        }
        let rq = &self.rqs[cpu];
        if rq.nr_running() > 0 || rq.curr.is_some() {
            self.resched_cpu(cpu);
        } else {
            self.resched[cpu] = false;
            self.enter_idle(cpu);
        }
    }

    /// nr_iowait_cpu(): rq->nr_iowait, the tasks blocked in I/O wait that left this CPU's
    /// runqueue. __block_task() counts a task when it really leaves the queue, so a fair
    /// task whose dequeue is delayed counts only once pick_next_entity() completes it;
    /// try_to_wake_up() uncounts it, on the runqueue it blocked on, whichever CPU it is
    /// then placed on (a delayed task woken in place was never counted).
    pub(crate) fn nr_iowait_cpu(&self, cpu: usize) -> u32 {
        self.tasks
            .iter()
            .filter(|t| {
                t.cpu == cpu && t.iowait_since.is_some() && t.state == TaskState::Sleeping && !t.se.sched_delayed
            })
            .count() as u32
    }

    /// Whether `cpu` sits in an idle state it must leave, paying an exit latency, before it
    /// can take an interrupt's work (or is already leaving one).
    pub(crate) fn in_idle_state(&self, cpu: usize) -> bool {
        let rq = &self.rqs[cpu];
        rq.waking_until.is_some() || (rq.curr.is_none() && rq.idle_state.is_some() && self.wake_latency_ns(cpu) > 0)
    }

    /// How long `cpu` takes, woken in the idle state it is really in (a cluster state it
    /// chose counts only if the whole cluster is in it), to run what woke it: what real
    /// phones of the SoC were measured to take where the platform has it, else the state's
    /// cpuidle exit_latency (the DT's worst case, entry + exit).
    pub(crate) fn wake_latency_ns(&self, cpu: usize) -> u64 {
        let state = &self.platform.cluster_of(cpu).idle_states[self.meter.cpus[cpu].effective_idle];
        state.measured_wakeup_ns.unwrap_or(state.exit_latency_ns)
    }
}
