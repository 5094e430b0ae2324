//! conservative, after drivers/cpufreq/cpufreq_conservative.c (v6.12): the dbs load as in
//! ondemand; above `up_threshold` the requested frequency goes up by one `freq_step` (a
//! percentage of f_max), resolved to the highest table frequency not above it
//! (CPUFREQ_RELATION_HE); below `down_threshold`, checked every `sampling_down_factor`
//! samples, it goes down one step (CPUFREQ_RELATION_LE, the lowest table frequency not
//! below it).
//!
//! Defaults: up 80, down 20, freq_step 5 %, sampling_down_factor 1, sampling_rate as
//! ondemand's. Not modelled: the catch-up of idle periods (the engine's sampling timer
//! fires every period, so there are none), ignore_nice_load.
//!
//! docs/mechanisms/cpufreq_governor.md works the steps by hand.

use super::ondemand::dbs_load;
use super::{dbs_sampling_rate_ns, relation_h, relation_l, Governor};
use crate::features::{Knob, Knobs};
use crate::platform::Cluster;

#[derive(Debug, Clone, Default)]
struct CsPolicy {
    requested_freq: u64,
    down_skip: u64,
    prev_load: Vec<u64>,
}

pub struct Conservative {
    policies: Vec<CsPolicy>,
}

impl Conservative {
    pub fn new(nr_clusters: usize) -> Self {
        Conservative {
            policies: vec![CsPolicy::default(); nr_clusters],
        }
    }
}

impl Governor for Conservative {
    fn name(&self) -> &'static str {
        "conservative"
    }

    fn first_sample_ns(&self, knobs: &Knobs) -> Option<u64> {
        Some(dbs_sampling_rate_ns(knobs.get(Knob::ConservativeSamplingRateUs), knobs))
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
        let rate = dbs_sampling_rate_ns(knobs.get(Knob::ConservativeSamplingRateUs), knobs);
        let pol = &mut self.policies[ci];
        let load = dbs_load(&mut pol.prev_load, loads, window_ns, rate);
        let (fmin, fmax) = (cluster.opps[0].khz, cluster.fmax_khz);
        let step_pct = knobs.get(Knob::ConservativeFreqStep) as u64;
        if step_pct == 0 {
            return (None, rate);
        }
        if pol.requested_freq > fmax || pol.requested_freq < fmin {
            pol.requested_freq = cur_khz; // limits changed, or the first sample
        }
        let step = (step_pct * fmax / 100).max(5);
        let changed = |f: u64| (f != cur_khz).then_some(f);
        if load > knobs.get(Knob::ConservativeUpThreshold) as u64 {
            pol.down_skip = 0;
            if pol.requested_freq == fmax {
                return (None, rate);
            }
            pol.requested_freq = (pol.requested_freq + step).min(fmax);
            return (changed(relation_h(cluster, pol.requested_freq)), rate);
        }
        pol.down_skip += 1;
        if pol.down_skip < knobs.get(Knob::ConservativeSamplingDownFactor) as u64 {
            return (None, rate);
        }
        pol.down_skip = 0;
        if load < knobs.get(Knob::ConservativeDownThreshold) as u64 {
            if pol.requested_freq == fmin {
                return (None, rate);
            }
            pol.requested_freq = if pol.requested_freq > step {
                pol.requested_freq - step
            } else {
                fmin
            };
            return (changed(relation_l(cluster, pol.requested_freq)), rate);
        }
        (None, rate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutils::two_cluster_platform;

    #[test]
    fn steps_of_five_percent_of_fmax() {
        let p = two_cluster_platform();
        let big = &p.clusters[1]; // OPPs 1 GHz, 2 GHz; step = 5% of 2 GHz = 100 MHz
        let knobs = Knobs::default();
        let mut g = Conservative::new(2);
        // from 1 GHz, load 90 > 80: requested 1.1 GHz -> RELATION_H -> 1 GHz (no change)
        assert_eq!(
            g.sample(1, big, &[90], &[], 8_000_000, 1_000_000, &knobs),
            (None, 8_000_000)
        );
        // ten steps later the request reaches 2 GHz
        let mut last = None;
        for _ in 0..9 {
            last = g.sample(1, big, &[90], &[], 8_000_000, 1_000_000, &knobs).0;
        }
        assert_eq!(last, Some(2_000_000));
        // load 50: between the thresholds, no change
        assert_eq!(g.sample(1, big, &[50], &[], 8_000_000, 2_000_000, &knobs).0, None);
        // load 10 < 20: requested 1.9 GHz -> RELATION_L -> 2 GHz (no change), then down
        assert_eq!(g.sample(1, big, &[10], &[], 8_000_000, 2_000_000, &knobs).0, None);
        for _ in 0..8 {
            g.sample(1, big, &[10], &[], 8_000_000, 2_000_000, &knobs);
        }
        // requested now 1.0 GHz
        assert_eq!(
            g.sample(1, big, &[10], &[], 8_000_000, 2_000_000, &knobs).0,
            Some(1_000_000)
        );
    }
}
