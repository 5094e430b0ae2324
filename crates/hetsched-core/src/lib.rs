//! hetsched-core: a deterministic discrete-event simulator of the Linux scheduler on
//! heterogeneous SoCs. Module names follow kernel/sched/ (pelt, fair, cpufreq/schedutil,
//! idle) so that a reader of the kernel finds each mechanism where they expect it.

pub mod balance;
pub mod balance_fair;
pub mod cpufreq;
pub mod energy;
pub mod energy_model;
pub mod error;
pub mod event;
pub mod fair;
pub mod features;
pub mod hotplug;
pub mod idle;
pub mod invariants;
pub mod pelt;
pub mod platform;
pub mod policies;
pub mod result;
pub mod rt;
mod sched_pelt;
pub mod sim;
pub mod sorted_vec;
pub mod switcher;
pub mod sync;
pub mod trace;
pub mod uclamp;
pub mod vendor;
pub mod workload;

#[cfg(any(test, feature = "testutils"))]
pub mod testutils;

pub use error::{Error, Result};
pub use platform::Platform;
pub use sim::{PolicyConfig, Sim};
pub use workload::WorkloadSpec;

/// Build a simulation from the three resolved JSON documents (docs/engine-interface.md).
pub fn build(platform_json: &str, workload_json: &str, policy_json: &str) -> Result<Sim> {
    build_with_policy(platform_json, workload_json, policy_json, |base| base)
}

/// As `build`, with the registry's policy handed to `wrap` (`Sim::with_policy`): a policy
/// defined outside the registry runs on top of it.
pub fn build_with_policy(
    platform_json: &str,
    workload_json: &str,
    policy_json: &str,
    wrap: impl FnOnce(Box<dyn policies::SchedPolicy>) -> Box<dyn policies::SchedPolicy>,
) -> Result<Sim> {
    let platform = Platform::from_json(platform_json)?;
    let workload = WorkloadSpec::from_json(workload_json)?;
    let policy: PolicyConfig = serde_json::from_str(policy_json).map_err(|e| Error::Json {
        doc: "policy",
        msg: e.to_string(),
    })?;
    Sim::with_policy(platform, workload, policy, wrap)
}
