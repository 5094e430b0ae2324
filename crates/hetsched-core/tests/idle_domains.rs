//! Idle power domains that span several frequency domains (`PlatformSpec::idle_domains`).
//!
//! On a DynamIQ SoC (sm8150: silver, gold and prime frequency domains in one DSU) the
//! cluster-level idle state belongs to the DT's `CLUSTER_PD`, the parent of every CPU's
//! power domain: it holds only while *all* CPUs are idle. Before `idle_domains` the engine
//! applied it per frequency domain, so a lone prime CPU entered the whole-subsystem
//! power-down (9.8 ms exit latency) whenever it idled. Expected values are worked out by
//! hand from the platform below, never read back from the engine.

use hetsched_core::platform::{ClusterSpec, IdleLevel, OppSpec, PlatformSpec};
use hetsched_core::testutils::{costs_off, idle};
use hetsched_core::TaskState;
use hetsched_core::{Platform, PolicyConfig, Sim, WorkloadSpec};
use serde_json::{json, Value};

const US: u64 = 1_000;
const MS: u64 = 1_000_000;

/// little = CPUs 0,1 (capacity 512; 500 MHz at 100 mW / 1 GHz at 300 mW; cluster term 20 /
/// 40 mW); big = CPUs 2,3 (capacity 1024; 1 / 2 GHz at 400 / 1200 mW; no busy cluster
/// term). Idle, both: WFI (exit 1 µs, residency 1 µs) and cluster-sleep (exit 500 µs,
/// residency 2 ms). Per-CPU idle power: little WFI 10 mW, big WFI 5 mW, cluster-sleep 0.
/// Cluster terms while all the cluster's CPUs idle: little WFI 15 mW / cluster-sleep 2 mW,
/// big WFI 7 mW / cluster-sleep 1 mW. `shared`: one idle domain over both clusters.
fn platform(shared: bool) -> Platform {
    let opp = |khz: u64, mw: u64, cl_mw: u64| OppSpec {
        khz,
        power_uw: mw * 1000,
        cluster_power_uw: cl_mw * 1000,
    };
    Platform::from_spec(PlatformSpec {
        name: "test-dsu".into(),
        power_model: "dt".into(),
        clusters: vec![
            ClusterSpec {
                name: "little".into(),
                cpus: vec![0, 1],
                capacity_orig: 512,
                opps: vec![opp(500_000, 100, 20), opp(1_000_000, 300, 40)],
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
                opps: vec![opp(1_000_000, 400, 0), opp(2_000_000, 1200, 0)],
                idle_states: vec![
                    idle("WFI", IdleLevel::Cpu, 1, 1, 5, 7),
                    idle("cluster-sleep", IdleLevel::Cluster, 500, 2000, 0, 1),
                ],
                context_switch_ns: None,
            },
        ],
        switcher: false,
        idle_domains: if shared { vec![vec![0, 1]] } else { vec![] },
        shared_llc: false,
        device_init: None,
    })
    .unwrap()
}

fn sim(shared: bool, tasks: Vec<Value>, timers: usize, governor: &str) -> Sim {
    let w = json!({"name": "test", "duration_ns": null, "timers": timers, "tasks": tasks});
    let pol: PolicyConfig =
        serde_json::from_value(json!({"scheduler": "cfs", "governor": governor, "idle_governor": "oracle"})).unwrap();
    Sim::new(
        platform(shared),
        WorkloadSpec::from_json(&w.to_string()).unwrap(),
        costs_off(pol),
    )
    .unwrap()
}

fn run_checked(sim: &mut Sim, t_ns: u64) {
    while let Some(t) = sim.events.peek_time() {
        if t >= t_ns {
            break;
        }
        assert!(sim.step());
        sim.check_invariants()
            .unwrap_or_else(|e| panic!("at {} ns: {e}", sim.now));
    }
    sim.run_until(t_ns);
    sim.check_invariants().unwrap_or_else(|e| panic!("at the end: {e}"));
}

#[test]
fn the_domain_state_needs_every_cpu_of_every_cluster_in_it_idle() {
    // B on little CPU 0: 1 ms of work (2 ms at capacity 512 and f_max), then a 10 ms sleep.
    // Its CPU idles 10 ms with a timer 10 ms away: the oracle picks cluster-sleep
    // (residency 2 ms <= 10 ms). H on big CPU 2 runs all along.
    // * Separate domains: CPU 1 sits in cluster-sleep (no timer: the deepest state), so at
    //   each wakeup the little cluster is all in cluster-sleep and B's CPU pays 500 µs.
    // * One shared domain: CPU 2 is busy, so the domain is up and CPU 0 is effectively in
    //   WFI: each wakeup pays 1 µs.
    // Period of B: 2 ms run + 10 ms sleep + the exit latency (the sleep starts when the run
    // ends), so in 200 ms it wakes floor((200 - first) / period) times after its start.
    let tasks = || {
        vec![
            json!({"name": "B", "cpus": [0], "phases": [{"loop": -1, "events": [{"run": MS}, {"sleep": 10 * MS}]}]}),
            json!({"name": "H", "cpus": [2], "loop": 1, "phases": [{"loop": 1, "events": [{"run": 10_000 * MS}]}]}),
        ]
    };
    for (shared, exit) in [(false, 500 * US), (true, US)] {
        let mut s = sim(shared, tasks(), 0, "performance");
        run_checked(&mut s, 200 * MS);
        let lat = &s.tasks[0].stats.wakeup_latency_ns;
        // the first wakeup is the start at t = 0 (all CPUs idle in cluster-sleep, domain or
        // not: every CPU has no timer), 500 µs; the sleeps' wakeups follow
        assert!(lat.len() > 10, "B woke {} times", lat.len());
        let after_start: Vec<(u64, u64)> = lat
            .iter()
            .map(|(l, n)| (l, n - u64::from(l == 500 * US)))
            .filter(|&(_, n)| n > 0)
            .collect();
        assert_eq!(
            after_start,
            [(exit, lat.len() - 1)],
            "shared={shared}: every wakeup after the start pays {exit} ns"
        );
        // start: 500 µs (t = 0, everything in cluster-sleep), then periods of 12 ms + exit
        let periods = (200 * MS - 500 * US) / (12 * MS + exit);
        assert_eq!(lat.len() as u64, 1 + periods, "shared={shared}");
    }
}

#[test]
fn energy_with_one_domain_over_two_clusters() {
    // powersave, one task pinned to little CPU 0 with 5 ms of work, 30 ms observed; the
    // big CPUs never run.
    // * t = 0: every CPU idle with no timer, in cluster-sleep; the domain is all idle, so
    //   cluster-sleep is in effect and CPU 0 pays its 500 µs exit (busy, 100 mW at 500 MHz)
    //   and then runs 5 ms · 1024/512 · 1000/500 = 20 ms: busy until 20.5 ms.
    // * While CPU 0 is busy the domain is up: CPUs 1, 2, 3 chose cluster-sleep but sit in
    //   WFI: CPU 1 10 mW, CPUs 2, 3 5 mW each; the little cluster term is 20 mW (OPP 0),
    //   the big cluster's (all its CPUs idle, the shallowest state in effect WFI) 7 mW.
    // * From 20.5 ms CPU 0 goes to cluster-sleep (no timer: the deepest), the domain is all
    //   idle again: every CPU 0 mW, cluster terms 2 mW (little) and 1 mW (big).
    let task = json!({"name": "t", "cpus": [0], "loop": 1, "phases": [{"loop": 1, "events": [{"run": 5 * MS}]}]});
    let mut s = sim(true, vec![task], 0, "powersave");
    let t_end = 30 * MS;
    run_checked(&mut s, t_end);
    assert_eq!(s.tasks[0].state, TaskState::Exited);
    let busy = 500 * US + 20 * MS;
    let rest = (t_end - busy) as u128;
    let b = busy as u128;
    assert_eq!(s.meter.cpus[0].energy_fj, 100_000 * b);
    assert_eq!(s.meter.cpus[1].energy_fj, 10_000 * b);
    assert_eq!(s.meter.cpus[2].energy_fj, 5_000 * b);
    assert_eq!(s.meter.cpus[3].energy_fj, 5_000 * b);
    assert_eq!(s.meter.clusters[0].energy_fj, 20_000 * b + 2_000 * rest);
    assert_eq!(s.meter.clusters[1].energy_fj, 7_000 * b + 1_000 * rest);
    for cpu in 1..4 {
        assert_eq!(
            s.meter.cpus[cpu].idle_residency_ns,
            vec![busy, t_end - busy],
            "CPU {cpu} residency [WFI, cluster-sleep]"
        );
    }
    let total = 100_000 * b + 10_000 * b + 2 * 5_000 * b + 20_000 * b + 2_000 * rest + 7_000 * b + 1_000 * rest;
    // 2.05e12 + 0.205e12 + 0.205e12 + 0.41e12 + 0.019e12 + 0.1435e12 + 0.0095e12 fJ
    assert_eq!(total, 3_042_000_000_000);
    assert_eq!(s.result()["energy_fj"], total.to_string());

    // Separate domains (classic big.LITTLE): the big cluster sleeps through, 0 mW per CPU
    // and its 1 mW cluster term all along; the little side is the same.
    let task = json!({"name": "t", "cpus": [0], "loop": 1, "phases": [{"loop": 1, "events": [{"run": 5 * MS}]}]});
    let mut s = sim(false, vec![task], 0, "powersave");
    run_checked(&mut s, t_end);
    assert_eq!(s.meter.cpus[2].energy_fj + s.meter.cpus[3].energy_fj, 0);
    assert_eq!(s.meter.clusters[1].energy_fj, 1_000 * t_end as u128);
    assert_eq!(s.meter.cpus[1].energy_fj, 10_000 * b);
    assert_eq!(s.meter.clusters[0].energy_fj, 20_000 * b + 2_000 * rest);
}

#[test]
fn a_shared_domain_needs_matching_cluster_states() {
    let spec = |domains: Vec<Vec<usize>>, big_exit_us: u64| {
        let p = platform(true);
        PlatformSpec {
            name: "x".into(),
            power_model: "dt".into(),
            clusters: p
                .clusters
                .iter()
                .map(|c| ClusterSpec {
                    name: c.name.clone(),
                    cpus: c.cpus.clone(),
                    capacity_orig: c.capacity_orig,
                    opps: c.opps.clone(),
                    idle_states: c
                        .idle_states
                        .iter()
                        .map(|s| {
                            let mut s = s.clone();
                            if c.name == "big" && s.level == IdleLevel::Cluster {
                                s.exit_latency_ns = big_exit_us * US;
                            }
                            s
                        })
                        .collect(),
                    context_switch_ns: None,
                })
                .collect(),
            switcher: false,
            idle_domains: domains,
            shared_llc: false,
            device_init: None,
        }
    };
    assert!(Platform::from_spec(spec(vec![vec![0, 1]], 500)).is_ok());
    assert!(
        Platform::from_spec(spec(vec![vec![0, 1]], 600)).is_err(),
        "exit latencies differ"
    );
    assert!(
        Platform::from_spec(spec(vec![vec![0, 2]], 500)).is_err(),
        "no cluster 2"
    );
    assert!(
        Platform::from_spec(spec(vec![vec![0], vec![0, 1]], 500)).is_err(),
        "cluster 0 twice"
    );
    // differing states are fine when each cluster is its own domain
    let p = Platform::from_spec(spec(vec![], 600)).unwrap();
    assert_eq!(p.domains, vec![vec![0], vec![1]]);
}
