//! userspace (drivers/cpufreq/cpufreq_userspace.c): every cluster at the frequency the
//! knob `userspace.khz` names, resolved per cluster to the lowest table frequency at or
//! above it (its highest if none is): scaling_setspeed written once at the start of the
//! run. 0 (the default) means each cluster's lowest OPP.
//!
//! docs/mechanisms/cpufreq.md.

use super::{relation_l, Governor};
use crate::features::{Knob, Knobs};
use crate::platform::Cluster;

pub struct Userspace;

impl Userspace {
    pub fn opp(cluster: &Cluster, knobs: &Knobs) -> usize {
        let khz = relation_l(cluster, knobs.get(Knob::UserspaceKhz) as u64);
        cluster.opps.iter().position(|o| o.khz == khz).unwrap_or(0)
    }
}

impl Governor for Userspace {
    fn name(&self) -> &'static str {
        "userspace"
    }
    fn initial_opp(&self, cluster: &Cluster, knobs: &Knobs) -> usize {
        Self::opp(cluster, knobs)
    }
}
