//! Android's interactive governor, after drivers/cpufreq/cpufreq_interactive.c of the
//! Android 3.10-4.9 kernels (linux-eas.md §10), with its defaults: timer_rate 20 ms,
//! go_hispeed_load 99, hispeed_freq = f_max, target_loads 90, min_sample_time 80 ms,
//! above_hispeed_delay 20 ms.
//!
//! Every timer_rate, per CPU: the speed-adjusted load `loadadj` (busy time weighted by the
//! frequency it ran at, x 100 / Δt, in % x kHz) and `load = loadadj / target_freq`. At or
//! above go_hispeed_load the CPU jumps to at least hispeed_freq; otherwise `choose_freq`
//! finds the lowest frequency whose load stays at or below the target load. A raise above
//! hispeed waits above_hispeed_delay; a lowering waits until min_sample_time has passed
//! since the floor was last set. The policy runs at the max of its CPUs' targets.
//!
//! Differences: one target load for all frequencies (the list form `L0 f1:L1 ...` is not
//! parsed); no boost/boostpulse; the CPUs of a cluster are sampled together on one timer
//! (the kernel has a deferrable timer per CPU, unsynchronised); the slack timer is moot
//! because the engine's timer is not deferrable.
//!
//! docs/mechanisms/cpufreq_governor.md works the hold by hand.

use super::{relation_h, relation_l, Governor};
use crate::features::{Knob, Knobs};
use crate::platform::Cluster;

#[derive(Debug, Clone, Default)]
struct CpuState {
    target_freq: u64,
    floor_freq: u64,
    floor_validate_time: u64,
    hispeed_validate_time: u64,
}

pub struct Interactive {
    policies: Vec<Vec<CpuState>>,
    now: Vec<u64>,
}

impl Interactive {
    pub fn new(nr_clusters: usize) -> Self {
        Interactive {
            policies: vec![Vec::new(); nr_clusters],
            now: vec![0; nr_clusters],
        }
    }
}

/// choose_freq(): the lowest table frequency f with loadadj / f <= target_load, found by
/// the kernel's bracketed iteration from the current frequency.
pub fn choose_freq(cluster: &Cluster, cur_khz: u64, loadadj: u64, target_load: u64) -> u64 {
    let mut freq = cur_khz;
    let (mut freqmin, mut freqmax) = (0u64, u64::MAX);
    loop {
        let prevfreq = freq;
        freq = relation_l(cluster, loadadj / target_load);
        if freq > prevfreq {
            // the previous frequency is too low
            freqmin = prevfreq;
            if freq >= freqmax {
                freq = relation_h(cluster, freqmax - 1);
                if freq == freqmin {
                    freq = freqmax;
                    break;
                }
            }
        } else if freq < prevfreq {
            // the previous frequency is high enough
            freqmax = prevfreq;
            if freq <= freqmin {
                freq = relation_l(cluster, freqmin + 1);
                if freq == freqmax {
                    break;
                }
            }
        }
        if freq == prevfreq {
            break;
        }
    }
    freq
}

impl Governor for Interactive {
    fn name(&self) -> &'static str {
        "interactive"
    }

    fn first_sample_ns(&self, knobs: &Knobs) -> Option<u64> {
        Some((knobs.get(Knob::InteractiveTimerRateUs) * 1000.0) as u64)
    }

    fn sample(
        &mut self,
        ci: usize,
        cluster: &Cluster,
        _loads: &[u64],
        loadadj: &[u64],
        window_ns: u64,
        cur_khz: u64,
        knobs: &Knobs,
    ) -> (Option<u64>, u64) {
        let us = |k: Knob| (knobs.get(k) * 1000.0) as u64;
        let rate = us(Knob::InteractiveTimerRateUs);
        self.now[ci] += window_ns;
        let now = self.now[ci];
        let hispeed = match knobs.get(Knob::InteractiveHispeedKhz) as u64 {
            0 => cluster.fmax_khz,
            k => relation_l(cluster, k),
        };
        let go_hispeed_load = knobs.get(Knob::InteractiveGoHispeedLoad) as u64;
        let target_load = knobs.get(Knob::InteractiveTargetLoad) as u64;
        let cpus = &mut self.policies[ci];
        if cpus.len() != loadadj.len() {
            let f = cluster.opps[0].khz;
            *cpus = vec![
                CpuState {
                    target_freq: f,
                    floor_freq: f,
                    ..Default::default()
                };
                loadadj.len()
            ];
        }
        for (st, &la) in cpus.iter_mut().zip(loadadj) {
            let cpu_load = la / st.target_freq.max(1);
            let mut new = if cpu_load >= go_hispeed_load {
                if st.target_freq < hispeed {
                    hispeed
                } else {
                    choose_freq(cluster, cur_khz, la, target_load).max(hispeed)
                }
            } else {
                choose_freq(cluster, cur_khz, la, target_load)
            };
            if st.target_freq >= hispeed
                && new > st.target_freq
                && now - st.hispeed_validate_time < us(Knob::InteractiveAboveHispeedDelayUs)
            {
                continue;
            }
            st.hispeed_validate_time = now;
            new = relation_l(cluster, new);
            // hold a lowering until min_sample_time has passed at the floor
            if new < st.floor_freq && now - st.floor_validate_time < us(Knob::InteractiveMinSampleTimeUs) {
                continue;
            }
            st.floor_freq = new;
            st.floor_validate_time = now;
            st.target_freq = new;
        }
        let max_target = cpus.iter().map(|s| s.target_freq).max().unwrap_or(cur_khz);
        let f = relation_h(cluster, max_target);
        ((f != cur_khz).then_some(f), rate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutils::two_cluster_platform;

    #[test]
    fn choose_freq_finds_the_lowest_frequency_under_the_target_load() {
        let p = two_cluster_platform();
        // big: 1 GHz, 2 GHz
        let big = &p.clusters[1];
        // 50% busy at 1 GHz: loadadj = 50 x 1e6; at 1 GHz the load is 50 <= 90
        assert_eq!(choose_freq(big, 2_000_000, 50 * 1_000_000, 90), 1_000_000);
        // 95% busy at 1 GHz: needs 95e6/90 = 1.056 GHz -> 2 GHz
        assert_eq!(choose_freq(big, 1_000_000, 95 * 1_000_000, 90), 2_000_000);
        // more than f_max can deliver: the top
        assert_eq!(choose_freq(big, 1_000_000, 100 * 2_000_000, 90), 2_000_000);
    }

    #[test]
    fn hispeed_jump_then_min_sample_time_hold() {
        let p = two_cluster_platform();
        let big = &p.clusters[1];
        let knobs = Knobs::default();
        let mut g = Interactive::new(2);
        let ms = 1_000_000u64;
        // 20 ms at 1 GHz, 100% busy: load 100 >= 99 -> hispeed (f_max)
        assert_eq!(
            g.sample(1, big, &[], &[100 * 1_000_000], 20 * ms, 1_000_000, &knobs),
            (Some(2_000_000), 20 * ms)
        );
        // then idle at 2 GHz: choose 1 GHz, but the floor (2 GHz) was set 20 ms ago < 80 ms
        for _ in 0..3 {
            assert_eq!(g.sample(1, big, &[], &[0], 20 * ms, 2_000_000, &knobs).0, None);
        }
        // 80 ms after the floor was set, the lowering goes through
        assert_eq!(
            g.sample(1, big, &[], &[0], 20 * ms, 2_000_000, &knobs).0,
            Some(1_000_000)
        );
    }
}
