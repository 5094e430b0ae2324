//! Learning EAS (Han & Lee 2020), the engine's side: the engine runs `eas`, and the userspace
//! controller named in the registry line (python/hetsched/learning) steps the simulation
//! every 100 ms and 7 s, setting each cluster's TARGET_LOAD (Algorithm 1,
//! `schedutil.target_load.clusterN`) and sched_migration_cost (Algorithm 2).

use super::{PolicyInfo, Requires};

/// Learning EAS (Han & Lee 2020): the engine runs `eas`; the Python controller sets its
/// per-cluster TARGET_LOAD (Algorithm 1) and sched_migration_cost (Algorithm 2).
pub static INFO: PolicyInfo = PolicyInfo {
    name: "learning-eas",
    summary: "EAS + Learning EAS (Han & Lee 2020): per-cluster TARGET_LOAD (Alg. 1) and sched_migration_cost (Alg. 2) set by policy networks; --set learning.*",
    source: "Learning EAS (Han & Lee 2020), Algorithms 1 and 2, on eas",
    knobs: &["schedutil.target_load.cluster", "sched_migration_cost_ns", "learning."],
    requires: Requires::NONE,
    differences: "The engine runs eas; the controller (python/hetsched/learning) follows Learning EAS Algorithms 1 and 2 every 100 ms and 7 s. The choices the paper leaves open (the network's input reading, its initialisation, TARGET_LOAD bounds, learning rate) are options under --set learning.*.",
    status: "docs/learning.md: after training it does not beat EAS with one static TARGET_LOAD on the game (the measured tuning search).",
    controller: Some("hetsched.learning:LearningEAS"),
    build: super::eas::build,
};
