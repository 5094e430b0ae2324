//! Synthetic platforms for unit tests (like scx_utils' make_het_test_topo), with round
//! numbers so expected values can be worked out by hand.

use crate::platform::{ClusterSpec, IdleLevel, IdleStateSpec, OppSpec, Platform, PlatformSpec};

pub fn idle(name: &str, level: IdleLevel, exit_us: u64, res_us: u64, mw: u64, cl_mw: u64) -> IdleStateSpec {
    IdleStateSpec {
        name: name.into(),
        level,
        exit_latency_ns: exit_us * 1000,
        target_residency_ns: res_us * 1000,
        power_uw: mw * 1000,
        cluster_power_uw: cl_mw * 1000,
    }
}

/// little = CPUs 0,1 (capacity 512, 500 MHz/1 GHz); big = CPUs 2,3 (capacity 1024,
/// 1 GHz/2 GHz).
pub fn two_cluster_platform() -> Platform {
    Platform::from_spec(PlatformSpec {
        name: "test-2x2".into(),
        power_model: "dt".into(),
        clusters: vec![
            ClusterSpec {
                name: "little".into(),
                cpus: vec![0, 1],
                capacity_orig: 512,
                opps: vec![
                    OppSpec { khz: 500_000, power_uw: 100_000, cluster_power_uw: 20_000 },
                    OppSpec { khz: 1_000_000, power_uw: 300_000, cluster_power_uw: 40_000 },
                ],
                idle_states: vec![
                    idle("WFI", IdleLevel::Cpu, 1, 1, 10, 15),
                    idle("cluster-sleep", IdleLevel::Cluster, 500, 2000, 0, 2),
                ],
            },
            ClusterSpec {
                name: "big".into(),
                cpus: vec![2, 3],
                capacity_orig: 1024,
                opps: vec![
                    OppSpec { khz: 1_000_000, power_uw: 400_000, cluster_power_uw: 0 },
                    OppSpec { khz: 2_000_000, power_uw: 1_200_000, cluster_power_uw: 0 },
                ],
                idle_states: vec![idle("WFI", IdleLevel::Cpu, 1, 1, 5, 0)],
            },
        ],
    })
    .unwrap()
}
