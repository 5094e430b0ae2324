//! CPU idle-state selection (drivers/cpuidle/). The simulator knows the next timer of
//! each CPU exactly, so instead of menu's prediction it applies the rule that menu and teo
//! converge to when the prediction is right: the deepest state whose target residency fits
//! the time until the next expected event on this CPU (no event known: the deepest
//! state). A wakeup then pays that state's exit latency before the task runs.

use crate::platform::Cluster;

pub fn select_idle_state(cluster: &Cluster, predicted_ns: Option<u64>) -> usize {
    let states = &cluster.idle_states;
    match predicted_ns {
        None => states.len() - 1,
        Some(t) => states.iter().rposition(|s| s.target_residency_ns <= t).unwrap_or(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutils::two_cluster_platform;

    #[test]
    fn deepest_state_that_fits() {
        let p = two_cluster_platform();
        let little = &p.clusters[0]; // WFI res 1us, cluster-sleep res 2000us
        assert_eq!(select_idle_state(little, Some(500)), 0);
        assert_eq!(select_idle_state(little, Some(1_999_999)), 0);
        assert_eq!(select_idle_state(little, Some(2_000_000)), 1);
        assert_eq!(select_idle_state(little, None), 1);
    }
}
