//! cpufreq governors behind one interface. The engine calls `update()` where the kernel
//! calls `cpufreq_update_util()` (a CPU's util signal changed: enqueue, dequeue, tick,
//! RT activity) and commits the returned frequency after the cluster's transition latency.

pub mod schedutil;

use crate::error::{Error, Result};
use crate::features::Knobs;
use crate::platform::Cluster;

/// What schedutil reads of one CPU (sugov_get_util inputs).
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuUtil {
    /// cpu_util_cfs_boost(): max(util_avg, runnable_avg, util_est), capped at capacity_orig
    pub cfs: u64,
    /// rq->avg_rt.util_avg
    pub rt: u64,
    /// an RT task is runnable on this CPU
    pub rt_runnable: bool,
}

pub trait Governor: Send {
    fn name(&self) -> &'static str;
    /// Whether `update()` needs the per-CPU utils (false: skip computing them).
    fn needs_util(&self) -> bool {
        true
    }
    /// Cheap pre-check before the engine gathers the utils: false when an update now
    /// would be ignored anyway (schedutil's rate limit).
    fn wants_update(&self, _ci: usize, _now: u64, _knobs: &Knobs) -> bool {
        true
    }
    /// OPP index a cluster starts at.
    fn initial_opp(&self, cluster: &Cluster) -> usize;
    /// The cpufreq_update_util() hook for cluster `ci`; returns a new target frequency in
    /// kHz (a table frequency) when one is committed.
    fn update(&mut self, ci: usize, now: u64, cluster: &Cluster, utils: &[CpuUtil], knobs: &Knobs) -> Option<u64>;
}

/// `performance`: pin to policy->max.
pub struct Performance;
/// `powersave`: pin to policy->min.
pub struct Powersave;

impl Governor for Performance {
    fn name(&self) -> &'static str {
        "performance"
    }
    fn needs_util(&self) -> bool {
        false
    }
    fn initial_opp(&self, c: &Cluster) -> usize {
        c.opps.len() - 1
    }
    fn update(&mut self, _: usize, _: u64, _: &Cluster, _: &[CpuUtil], _: &Knobs) -> Option<u64> {
        None
    }
}

impl Governor for Powersave {
    fn name(&self) -> &'static str {
        "powersave"
    }
    fn needs_util(&self) -> bool {
        false
    }
    fn initial_opp(&self, _: &Cluster) -> usize {
        0
    }
    fn update(&mut self, _: usize, _: u64, _: &Cluster, _: &[CpuUtil], _: &Knobs) -> Option<u64> {
        None
    }
}

pub const GOVERNORS: &[(&str, &str)] = &[
    (
        "schedutil",
        "util-driven DVFS: f = f_max * 1.25 * util / capacity, per cluster (kernel/sched/cpufreq_schedutil.c)",
    ),
    ("performance", "every cluster at its highest OPP"),
    ("powersave", "every cluster at its lowest OPP"),
];

pub fn make_governor(name: &str, nr_clusters: usize) -> Result<Box<dyn Governor>> {
    match name {
        "schedutil" => Ok(Box::new(schedutil::Schedutil::new(nr_clusters))),
        "performance" => Ok(Box::new(Performance)),
        "powersave" => Ok(Box::new(Powersave)),
        _ => Err(Error::Unknown {
            field: "governor".into(),
            kind: "governor",
            name: name.into(),
            choices: GOVERNORS.iter().map(|g| g.0).collect::<Vec<_>>().join(", "),
        }),
    }
}
