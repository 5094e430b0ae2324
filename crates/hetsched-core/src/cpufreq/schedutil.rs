//! schedutil, after kernel/sched/cpufreq_schedutil.c (v6.12), shared-policy path
//! (`sugov_update_shared`): the cluster's frequency follows the most utilised CPU.
//!
//! Per CPU (sugov_get_util + effective_cpu_util + sugov_effective_cpu_perf):
//!   u = min(cpu_util_cfs_boost + util_rt, capacity_orig);
//!   min = rq uclamp_min with uclamp in use, else capacity_orig if an RT task is runnable, else 0;
//!   max = min(rq uclamp_max, capacity_orig);  util = max(min, min(u / target_load, max))
//! Policy: util = max over CPUs; raw = f_max * util / capacity_orig; resolved to the lowest
//! OPP >= raw (RELATION_L). Rate limit: evaluate only if `rate_limit_us` passed since the
//! last *committed* change (default 1.5 x the transition latency, as v6.12).
//!
//! Differences: no IRQ or DL utilisation, no iowait boost; single-CPU clusters take the shared
//! path too, so `sugov_hold_freq()` never applies; EM-inefficient OPPs are not skipped.
//! docs/mechanisms/cpufreq_schedutil.md works the OPP choice by hand.

use super::{CpuUtil, Governor};
use crate::features::Knobs;
use crate::platform::Cluster;

#[derive(Debug, Clone, Default)]
struct PolicyState {
    last_freq_update_time: Option<u64>,
    next_freq: u64,
}

pub struct Schedutil {
    policies: Vec<PolicyState>,
}

impl Schedutil {
    pub fn new(nr_clusters: usize) -> Self {
        Schedutil {
            policies: vec![PolicyState::default(); nr_clusters],
        }
    }
}

/// map_util_perf(): util + util/4 at the default target load 0.8, computed in integers so
/// that 0.8 (8000 per myriad) gives exactly the kernel's `util + (util >> 2)`.
#[inline]
pub fn apply_headroom(util: u64, target_load_permyriad: u64) -> u64 {
    if target_load_permyriad == 8000 {
        return util + (util >> 2); // the kernel's own form, and no division
    }
    util * 10_000 / target_load_permyriad
}

/// sugov_effective_cpu_perf() applied to one CPU: the util it asks for, with headroom.
#[inline]
pub fn effective_cpu_perf(u: &CpuUtil, capacity_orig: u64, target_load_permyriad: u64) -> u64 {
    let s = capacity_orig;
    // effective_cpu_util(): min and max from the rq's uclamp; without uclamp a runnable RT
    // task asks for the top
    let (min, max) = match u.uclamp {
        Some([umin, umax]) => (umin, umax.min(s)),
        None => (if u.rt_runnable { s } else { 0 }, s),
    };
    let actual = (u.cfs + u.rt).min(s);
    // sugov_effective_cpu_perf()
    min.max(apply_headroom(actual, target_load_permyriad).min(max))
}

/// get_next_freq() without the cache: f_ref * util / max_cap, then the table.
pub fn next_freq(cluster: &Cluster, util: u64) -> u64 {
    let raw = cluster.fmax_khz * util / cluster.capacity_orig;
    cluster.opps[cluster.opp_at_least(raw)].khz
}

impl Governor for Schedutil {
    fn name(&self) -> &'static str {
        "schedutil"
    }

    fn needs_util(&self) -> bool {
        true
    }

    fn wants_update(&self, ci: usize, now: u64, knobs: &Knobs) -> bool {
        match self.policies[ci].last_freq_update_time {
            Some(last) => now - last >= knobs.derived.rate_limit_ns,
            None => true,
        }
    }

    fn update(&mut self, ci: usize, now: u64, cluster: &Cluster, utils: &[CpuUtil], knobs: &Knobs) -> Option<u64> {
        let pol = &mut self.policies[ci];
        if pol.next_freq == 0 {
            pol.next_freq = cluster.opps[0].khz;
        }
        if let Some(last) = pol.last_freq_update_time {
            if now - last < knobs.derived.rate_limit_ns {
                return None;
            }
        }
        let tl = knobs.target_load_permyriad_for(ci); // Learning EAS: a per-cluster override
        let util = utils
            .iter()
            .map(|u| effective_cpu_perf(u, cluster.capacity_orig, tl))
            .max()
            .unwrap_or(0);
        let f = next_freq(cluster, util);
        if f == pol.next_freq {
            return None;
        }
        pol.next_freq = f;
        pol.last_freq_update_time = Some(now);
        Some(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutils::two_cluster_platform;

    #[test]
    fn headroom_is_util_plus_quarter_at_target_load_0_8() {
        for u in [0u64, 1, 3, 100, 599, 600, 819, 1023] {
            assert_eq!(apply_headroom(u, 8000), u + (u >> 2));
        }
        assert_eq!(apply_headroom(500, 5000), 1000);
    }

    #[test]
    fn worked_example_util_600_on_2ghz_big() {
        // linux-eas.md §3: util 600 at cap 1024 with f_max 2 GHz -> 1.465 GHz raw, rounded
        // up to the next OPP (here the 2 GHz one).
        let p = two_cluster_platform();
        let big = &p.clusters[1];
        let u = effective_cpu_perf(
            &CpuUtil {
                cfs: 600,
                ..Default::default()
            },
            1024,
            8000,
        );
        assert_eq!(u, 750);
        assert_eq!(big.fmax_khz * u / 1024, 1_464_843);
        assert_eq!(next_freq(big, u), 2_000_000);
        // util/cap = 0.8 requests f_max; below 1 GHz-equivalent stays at the lowest OPP
        assert_eq!(
            next_freq(
                big,
                effective_cpu_perf(
                    &CpuUtil {
                        cfs: 819,
                        ..Default::default()
                    },
                    1024,
                    8000
                )
            ),
            2_000_000
        );
        assert_eq!(
            next_freq(
                big,
                effective_cpu_perf(
                    &CpuUtil {
                        cfs: 400,
                        ..Default::default()
                    },
                    1024,
                    8000
                )
            ),
            1_000_000
        );
        // an RT task runnable asks for the top
        assert_eq!(
            effective_cpu_perf(
                &CpuUtil {
                    rt_runnable: true,
                    ..Default::default()
                },
                512,
                8000
            ),
            512
        );
    }

    #[test]
    fn rate_limit_counts_from_the_last_commit_only() {
        let p = two_cluster_platform();
        let mut knobs = Knobs::default();
        knobs.set("schedutil.rate_limit_us", 1000.0).unwrap();
        let mut g = Schedutil::new(2);
        let big = &p.clusters[1];
        let hi = [CpuUtil {
            cfs: 900,
            ..Default::default()
        }];
        let lo = [CpuUtil {
            cfs: 10,
            ..Default::default()
        }];
        assert_eq!(g.update(1, 0, big, &hi, &knobs), Some(2_000_000));
        assert_eq!(g.update(1, 500_000, big, &lo, &knobs), None); // rate limited
        assert_eq!(g.update(1, 1_000_000, big, &lo, &knobs), Some(1_000_000));
        // same OPP again: no commit, and the window does not restart
        assert_eq!(g.update(1, 2_500_000, big, &lo, &knobs), None);
        assert_eq!(g.update(1, 2_600_000, big, &hi, &knobs), Some(2_000_000));
    }
}
