//! hetsched-core: a deterministic discrete-event simulator of the Linux scheduler on
//! heterogeneous SoCs. The files are split as kernel/sched/ splits them, so that a reader of
//! the kernel finds each mechanism where they expect it: core.rs (core.c), sched.rs
//! (sched.h), fair.rs, rt.rs, deadline.rs, idle.rs, pelt.rs, uclamp.rs, syscalls.rs,
//! balance_fair.rs (sched_balance_rq), energy_model.rs, cpufreq/ (schedutil and the
//! drivers/cpufreq governors); beside them the engine's own parts (event.rs, energy.rs,
//! features.rs, workload/, policies/ with the registry, extensions/). docs/architecture.md
//! maps the tree; docs/engine.md links one page per mechanism.

pub mod balance;
pub mod balance_fair;
pub mod core;
pub mod costs;
pub mod cpufreq;
pub mod deadline;
pub mod deadlock;
pub mod energy;
pub mod energy_model;
pub mod error;
pub mod event;
pub mod extensions;
pub mod fair;
pub mod features;
pub mod find_best_target;
pub mod hmp_load;
pub mod idle;
pub mod invariants;
pub mod limits;
pub mod lower_bound;
pub mod pelt;
pub mod pixel_sched;
pub mod platform;
pub mod policies;
pub mod result;
pub mod rt;
pub mod sched;
mod sched_pelt;
pub mod schedtune;
pub mod sorted_vec;
pub mod switcher;
pub mod sync;
pub mod syscalls;
pub mod trace;
pub mod uclamp;
pub mod vendor;
pub mod walt;
pub mod workload;

#[cfg(any(test, feature = "testutils"))]
pub mod testutils;

pub use crate::core::{PolicyConfig, SchedView, Sim, Task, TaskId, TaskState};
pub use error::{Error, Result};
pub use platform::Platform;
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
    let policy: PolicyConfig = error::from_json("policy", policy_json)?;
    Sim::with_policy(platform, workload, policy, wrap)
}
