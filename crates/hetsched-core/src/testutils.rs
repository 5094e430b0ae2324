//! Synthetic platforms for unit tests (like scx_utils' make_het_test_topo), with round
//! numbers so expected values can be worked out by hand.

use crate::platform::{ClusterSpec, IdleLevel, IdleStateSpec, OppSpec, Platform, PlatformSpec};

pub fn idle(name: &str, level: IdleLevel, exit_us: u64, res_us: u64, mw: u64, cl_mw: u64) -> IdleStateSpec {
    IdleStateSpec {
        measured_wakeup_ns: None,
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
        switcher: false,
        idle_domains: vec![],
        shared_llc: false,
        device_init: None,
        name: "test-2x2".into(),
        power_model: "dt".into(),
        clusters: vec![
            ClusterSpec {
                name: "little".into(),
                cpus: vec![0, 1],
                capacity_orig: 512,
                opps: vec![
                    OppSpec {
                        khz: 500_000,
                        power_uw: 100_000,
                        cluster_power_uw: 20_000,
                    },
                    OppSpec {
                        khz: 1_000_000,
                        power_uw: 300_000,
                        cluster_power_uw: 40_000,
                    },
                ],
                idle_states: vec![
                    idle("WFI", IdleLevel::Cpu, 1, 1, 10, 15),
                    idle("cluster-sleep", IdleLevel::Cluster, 500, 2000, 0, 2),
                ],
                context_switch_ns: None,
            },
            ClusterSpec {
                name: "big".into(),
                cpus: vec![2, 3],
                capacity_orig: 1024,
                opps: vec![
                    OppSpec {
                        khz: 1_000_000,
                        power_uw: 400_000,
                        cluster_power_uw: 0,
                    },
                    OppSpec {
                        khz: 2_000_000,
                        power_uw: 1_200_000,
                        cluster_power_uw: 0,
                    },
                ],
                idle_states: vec![idle("WFI", IdleLevel::Cpu, 1, 1, 5, 0)],
                context_switch_ns: None,
            },
        ],
    })
    .unwrap()
}

/// An 8-CPU, 3-cluster synthetic platform: little = CPUs 0-3 (capacity 256, 400/800 MHz,
/// WFI + cluster sleep), mid = CPUs 4-6 (capacity 768, 1/1.5/2 GHz, WFI + CPU off +
/// cluster sleep), big = CPU 7 (capacity 1024, 1.5/3 GHz, WFI + CPU off). Exit latencies
/// differ per cluster so that wakeup paths through each idle state are exercised.
pub fn three_cluster_platform() -> Platform {
    Platform::from_spec(PlatformSpec {
        switcher: false,
        idle_domains: vec![],
        shared_llc: false,
        device_init: None,
        name: "test-4-3-1".into(),
        power_model: "dt".into(),
        clusters: vec![
            ClusterSpec {
                name: "little".into(),
                cpus: vec![0, 1, 2, 3],
                capacity_orig: 256,
                opps: vec![
                    OppSpec {
                        khz: 400_000,
                        power_uw: 30_000,
                        cluster_power_uw: 10_000,
                    },
                    OppSpec {
                        khz: 800_000,
                        power_uw: 80_000,
                        cluster_power_uw: 20_000,
                    },
                ],
                idle_states: vec![
                    idle("WFI", IdleLevel::Cpu, 1, 1, 3, 8),
                    idle("cluster-sleep", IdleLevel::Cluster, 300, 1500, 0, 1),
                ],
                context_switch_ns: None,
            },
            ClusterSpec {
                name: "mid".into(),
                cpus: vec![4, 5, 6],
                capacity_orig: 768,
                opps: vec![
                    OppSpec {
                        khz: 1_000_000,
                        power_uw: 250_000,
                        cluster_power_uw: 0,
                    },
                    OppSpec {
                        khz: 1_500_000,
                        power_uw: 450_000,
                        cluster_power_uw: 0,
                    },
                    OppSpec {
                        khz: 2_000_000,
                        power_uw: 800_000,
                        cluster_power_uw: 0,
                    },
                ],
                idle_states: vec![
                    idle("WFI", IdleLevel::Cpu, 2, 2, 20, 0),
                    idle("cpu-off", IdleLevel::Cpu, 80, 300, 2, 0),
                    idle("cluster-sleep", IdleLevel::Cluster, 700, 3000, 0, 0),
                ],
                context_switch_ns: None,
            },
            ClusterSpec {
                name: "big".into(),
                cpus: vec![7],
                capacity_orig: 1024,
                opps: vec![
                    OppSpec {
                        khz: 1_500_000,
                        power_uw: 600_000,
                        cluster_power_uw: 0,
                    },
                    OppSpec {
                        khz: 3_000_000,
                        power_uw: 2_000_000,
                        cluster_power_uw: 0,
                    },
                ],
                idle_states: vec![
                    idle("WFI", IdleLevel::Cpu, 1, 1, 30, 0),
                    idle("cpu-off", IdleLevel::Cpu, 150, 600, 5, 0),
                ],
                context_switch_ns: None,
            },
        ],
    })
    .unwrap()
}

/// A switcher platform (the big.LITTLE in-kernel switcher of Kim et al.): `nr_pairs` virtual
/// CPUs, each backed by its little core (capacity 512, 500 MHz/1 GHz) at the start, its big
/// core (capacity 1024, 1 GHz/2 GHz) when switched up.
pub fn switcher_platform(nr_pairs: usize) -> Platform {
    let idle = serde_json::json!([{"name": "WFI", "level": "cpu", "exit_latency_ns": 1000,
                                   "target_residency_ns": 1000, "power_uw": 10000}]);
    let p = serde_json::json!({
        "name": "test-switcher", "switcher": true,
        "clusters": [
            {"name": "little", "cpus": (0..nr_pairs).collect::<Vec<_>>(), "capacity_orig": 512,
             "opps": [{"khz": 500000, "power_uw": 100000}, {"khz": 1000000, "power_uw": 300000}],
             "idle_states": idle},
            {"name": "big", "cpus": [], "capacity_orig": 1024,
             "opps": [{"khz": 1000000, "power_uw": 400000}, {"khz": 2000000, "power_uw": 1200000}],
             "idle_states": idle}
        ]
    });
    Platform::from_json(&p.to_string()).unwrap()
}

/// `pol` with the scheduler's own costs off (costs.rs): for tests whose hand-worked numbers
/// leave the kernel's work out (the context switch, migration, placement and balance
/// costs are checked in tests/costs.rs).
pub fn costs_off(mut pol: crate::PolicyConfig) -> crate::PolicyConfig {
    for k in [
        "cost.context_switch_ns",
        "cost.migration_ns",
        "cost.feec_step_ns",
        "cost.balance_cpu_ns",
    ] {
        pol.knobs.entry(k.into()).or_insert(0.0);
    }
    pol
}

/// `n` endless tasks, task i running `run_ns + i * run_step_ns` then sleeping
/// `sleep_ns + i * sleep_step_ns`: a mix whose activations drift apart, so that wakeups,
/// idle exits and completions interleave on every CPU.
pub fn run_sleep_mix(
    n: u64,
    run_ns: u64,
    run_step_ns: u64,
    sleep_ns: u64,
    sleep_step_ns: u64,
) -> crate::workload::WorkloadSpec {
    let tasks: Vec<_> = (0..n)
        .map(|i| {
            serde_json::json!({"name": format!("t{i}"), "loop": -1, "phases": [{"loop": -1, "events": [
                {"run": run_ns + run_step_ns * i}, {"sleep": sleep_ns + sleep_step_ns * i}]}]})
        })
        .collect();
    let w = serde_json::json!({"name": "mix", "duration_ns": null, "timers": 0, "tasks": tasks});
    crate::workload::WorkloadSpec::from_json(&w.to_string()).expect("a valid workload")
}

/// test-4-3-1 under `kernel` with eas, schedutil and menu, costs off: task 0 ("P", in
/// workload group `group`) asleep on `prev`, and a filler task per CPU (tasks 1-8) that a
/// test may set running.
pub fn waking_task_on_three_clusters(kernel: &str, group: &str, prev: usize, knobs: serde_json::Value) -> crate::Sim {
    use serde_json::json;
    let filler = |n: String| json!({"name": n, "phases": [{"events": [{"run": 1_000_000}]}]});
    let mut tasks = vec![json!({"name": "P", "stune": group, "phases": [{"events": [{"run": 1_000_000}]}]})];
    tasks.extend((0..8).map(|c| filler(format!("filler{c}"))));
    let w = json!({"name": "placement", "duration_ns": null, "tasks": tasks});
    let pol: crate::PolicyConfig = costs_off(
        serde_json::from_value(json!({"scheduler": "eas", "governor": "schedutil",
            "idle_governor": "menu", "kernel": kernel, "knobs": knobs}))
        .unwrap(),
    );
    let mut s = crate::Sim::new(
        three_cluster_platform(),
        crate::WorkloadSpec::from_json(&w.to_string()).unwrap(),
        pol,
    )
    .unwrap();
    s.tasks[0].state = crate::sched::TaskState::Sleeping;
    s.tasks[0].cpu = prev;
    s
}

/// The registry's eas policy for `s`'s platform and knobs (android forms on), as a test
/// calls its select_task_rq() directly.
pub fn eas_policy(s: &crate::Sim) -> Box<dyn crate::policies::SchedPolicy> {
    let ctx = crate::policies::PolicyCtx {
        platform: &s.platform,
        governor: "schedutil",
        knobs: &s.knobs,
        legacy: true,
        nr_tasks: s.tasks.len(),
    };
    crate::policies::eas::build(&ctx)
}
