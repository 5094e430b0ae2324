//! ondemand, after drivers/cpufreq/cpufreq_ondemand.c and cpufreq_governor.c (v6.12).
//!
//! Every `sampling_rate` the busy load of each CPU of the policy over the window is
//! measured (dbs_update: 100 x (wall - idle) / wall; a window longer than two sampling
//! periods reuses the previous load once) and the policy takes the max. Above
//! `up_threshold` the policy goes to f_max (and, if it was below, the next sample waits
//! `sampling_down_factor` periods); otherwise f = f_min + load x (f_max - f_min) / 100,
//! resolved to the closest table frequency (CPUFREQ_RELATION_C).
//!
//! Defaults: `up_threshold` 95 (MICRO_FREQUENCY_UP_THRESHOLD, what a NO_HZ kernel with
//! micro idle accounting uses; 80 without it), `sampling_down_factor` 1, `sampling_rate`
//! max(2 ticks, the transition delay) = 8 ms at HZ=250.
//!
//! Not modelled: powersave_bias (default 0), io_is_busy (default 0 on arm64, where
//! should_io_be_busy() is false: a CPU's I/O-wait time counts as idle, as here),
//! ignore_nice_load (default 0). The engine's sampling timer fires every period even when
//! the CPUs are idle (the kernel's is deferrable), which only matters for the
//! prev_load rule above.
//!
//! docs/mechanisms/cpufreq_governor.md works the examples by hand.

use super::{dbs_sampling_rate_ns, relation_c, Governor};
use crate::features::{Knob, Knobs};
use crate::platform::Cluster;

#[derive(Debug, Clone, Default)]
struct PolicyDbs {
    rate_mult: u64,
    prev_load: Vec<u64>,
}

pub struct Ondemand {
    policies: Vec<PolicyDbs>,
}

impl Ondemand {
    pub fn new(nr_clusters: usize) -> Self {
        Ondemand {
            policies: vec![
                PolicyDbs {
                    rate_mult: 1,
                    prev_load: Vec::new()
                };
                nr_clusters
            ],
        }
    }
}

/// dbs_update()'s load: the max over the policy's CPUs, with the prev_load rule.
pub fn dbs_load(prev_load: &mut Vec<u64>, loads: &[u64], window_ns: u64, sampling_rate_ns: u64) -> u64 {
    prev_load.resize(loads.len(), 0);
    let mut max_load = 0;
    for (i, &l) in loads.iter().enumerate() {
        let load = if window_ns > 2 * sampling_rate_ns && prev_load[i] > 0 {
            std::mem::take(&mut prev_load[i])
        } else {
            prev_load[i] = l;
            l
        };
        max_load = max_load.max(load);
    }
    max_load
}

impl Governor for Ondemand {
    fn name(&self) -> &'static str {
        "ondemand"
    }

    fn first_sample_ns(&self, knobs: &Knobs) -> Option<u64> {
        Some(dbs_sampling_rate_ns(knobs.get(Knob::OndemandSamplingRateUs), knobs))
    }

    fn sample(
        &mut self,
        ci: usize,
        cluster: &Cluster,
        loads: &[u64],
        _loadadj: &[u64],
        window_ns: u64,
        cur_khz: u64,
        knobs: &Knobs,
    ) -> (Option<u64>, u64) {
        let rate = dbs_sampling_rate_ns(knobs.get(Knob::OndemandSamplingRateUs), knobs);
        let pol = &mut self.policies[ci];
        let load = dbs_load(&mut pol.prev_load, loads, window_ns, rate);
        let (fmin, fmax) = (cluster.opps[0].khz, cluster.fmax_khz);
        let target = if load > knobs.get(Knob::OndemandUpThreshold) as u64 {
            // dbs_freq_increase(policy, policy->max)
            if cur_khz < fmax {
                pol.rate_mult = knobs.get(Knob::OndemandSamplingDownFactor) as u64;
            }
            fmax
        } else {
            pol.rate_mult = 1;
            relation_c(cluster, fmin + load * (fmax - fmin) / 100)
        };
        ((target != cur_khz).then_some(target), rate * pol.rate_mult)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutils::two_cluster_platform;

    #[test]
    fn worked_examples() {
        let p = two_cluster_platform();
        let big = &p.clusters[1]; // 1 GHz, 2 GHz
        let mut knobs = Knobs::default();
        // sampling_rate = max(2 ticks = 8 ms, 1.5 x 100 us) = 8 ms
        assert_eq!(dbs_sampling_rate_ns(-1.0, &knobs), 8_000_000);
        let mut g = Ondemand::new(2);
        // max load 96 > 95: f_max
        assert_eq!(
            g.sample(1, big, &[10, 96], &[], 8_000_000, 1_000_000, &knobs),
            (Some(2_000_000), 8_000_000)
        );
        // load 40: 1 GHz + 0.4 x 1 GHz = 1.4 GHz -> closest OPP 1 GHz
        assert_eq!(
            g.sample(1, big, &[40, 0], &[], 8_000_000, 2_000_000, &knobs),
            (Some(1_000_000), 8_000_000)
        );
        // load 60: 1.6 GHz -> closest 2 GHz; already there: no change
        assert_eq!(g.sample(1, big, &[60, 0], &[], 8_000_000, 2_000_000, &knobs).0, None);
        // sampling_down_factor 4 applies on the way up to f_max
        knobs.set("ondemand.sampling_down_factor", 4.0).unwrap();
        assert_eq!(
            g.sample(1, big, &[99, 0], &[], 8_000_000, 1_000_000, &knobs),
            (Some(2_000_000), 32_000_000)
        );
        // a window of over two periods reuses the previous load once (99 on CPU 0)
        assert_eq!(
            g.sample(1, big, &[0, 0], &[], 32_000_000, 2_000_000, &knobs),
            (None, 32_000_000)
        );
        // up_threshold 80 (the non-micro-accounting default)
        knobs.set("ondemand.up_threshold", 80.0).unwrap();
        assert_eq!(
            g.sample(1, big, &[85, 0], &[], 8_000_000, 1_000_000, &knobs).0,
            Some(2_000_000)
        );
    }
}
