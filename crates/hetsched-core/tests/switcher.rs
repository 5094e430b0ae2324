//! Paper 001 (utilization-aware load balancing on the big.LITTLE switcher): the switcher's
//! (H,H)/(L,L) rule, Fig. 3's leveling and placement, and the estimators of eqs. 2 and 3.
//! Expected values are worked out from the paper's formulas on a 2-pair test platform
//! (little 512 at 0.5/1 GHz, big 1024 at 1/2 GHz; 100-ms governor epochs, vCPU 0's at
//! 100, 200, ... ms, vCPU 1's at 150, 250, ... ms).

use hetsched_core::policies::util_aware::UtilAware;
use hetsched_core::testutils::costs_off;
use hetsched_core::{Platform, PolicyConfig, Sim, WorkloadSpec};
use serde_json::{json, Value};

const MS: u64 = 1_000_000;

fn switcher_platform() -> Platform {
    hetsched_core::testutils::switcher_platform(2)
}

fn sim(scheduler: &str, estimator: f64, tasks: Vec<Value>) -> Sim {
    let w = json!({"name": "t", "duration_ns": null, "timers": 0, "tasks": tasks});
    let pol: PolicyConfig = serde_json::from_value(json!({
        "scheduler": scheduler, "governor": "ondemand",
        "knobs": {"util_aware.estimator": estimator}
    }))
    .unwrap();
    Sim::new(
        switcher_platform(),
        WorkloadSpec::from_json(&w.to_string()).unwrap(),
        costs_off(pol),
    )
    .unwrap()
}

fn hog(name: &str, nice: i32, delay_ms: u64, cpus: Option<Vec<usize>>) -> Value {
    json!({"name": name, "nice": nice, "cpus": cpus, "delay_ns": delay_ms * MS,
           "phases": [{"loop": -1, "events": [{"runtime": 1000 * MS}]}]})
}

/// A counter of the policy's (`counters.policy`) or of the switcher's.
fn counter(s: &Sim, k: &str) -> u64 {
    let c = &s.result()["counters"];
    c["policy"].get(k).unwrap_or(&c[k]).as_u64().unwrap_or(0)
}

/// §III's example: s1 has the lower load but the higher utilisation. At 300 ms vCPU 0 runs
/// nice-0 A since 0 (U = 100 %, load 1024); vCPU 1 runs nice -5 B since 290 ms (U ≈ 10/50
/// = 20 %, load 3121). A new task goes to vCPU 1 under util-aware (lowest E[U]) and to
/// vCPU 0 under legacy (lowest load). B is running, so leveling has nothing to move.
#[test]
fn new_task_goes_by_expected_utilisation_not_load() {
    let tasks = || {
        vec![
            hog("A", 0, 0, Some(vec![0])),
            hog("B", -5, 290, Some(vec![1])),
            json!({"name": "C", "delay_ns": 300 * MS, "loop": 1, "phases": [{"loop": 1, "events": [{"runtime": 5 * MS}]}]}),
        ]
    };
    for est in [0.0, 1.0] {
        let mut s = sim("util-aware", est, tasks());
        s.run_until(300 * MS + 1);
        assert_eq!(s.rqs[0].cfs.load_weight, 1024);
        assert_eq!(s.rqs[1].cfs.load_weight, 3121 + 1024, "C joined vCPU 1");
        assert_eq!(s.tasks[2].cpu, 1, "estimator {est}: placed by E[U], not by load");
        assert_eq!(counter(&s, "leveling_moves"), 0);
        let k = if est == 0.0 {
            "placements_estimator_a"
        } else {
            "placements_estimator_b"
        };
        assert_eq!(counter(&s, k), 3, "A, B and C left the wait queue through Fig. 3");
    }
    let mut s = sim("legacy", 0.0, tasks());
    s.run_until(300 * MS + 1);
    assert_eq!(s.tasks[2].cpu, 0, "legacy places a new task by load");
}

/// Eq. 3 by hand. P (pinned to vCPU 0) runs 20 ms from 110 ms and sleeps: the SMA of task
/// execution times is 20 ms. At 190 ms: vCPU 0 has U = 20.001/90 (exit latency 1 µs
/// counts as busy), ΔT = 90 ms; vCPU 1 has U = 0, ΔT = 40 ms.
#[test]
fn estimators_follow_eqs_2_and_3() {
    let p = json!({"name": "P", "cpus": [0], "delay_ns": 110 * MS, "loop": 1,
                   "phases": [{"loop": 1, "events": [{"runtime": 20 * MS}, {"sleep": 10_000 * MS}]}]});
    let u0 = 100.0 * 20.001 / 90.0;
    let mut a = sim("util-aware", 0.0, vec![p.clone()]);
    a.run_until(190 * MS);
    assert!(
        (a.policy_state::<UtilAware>().unwrap().expected_util(&a.sched_view(), 0) - u0).abs() < 1e-6,
        "{}",
        a.policy_state::<UtilAware>().unwrap().expected_util(&a.sched_view(), 0)
    );
    assert_eq!(
        a.policy_state::<UtilAware>().unwrap().expected_util(&a.sched_view(), 1),
        0.0
    );
    let mut b = sim("util-aware", 1.0, vec![p]);
    b.run_until(190 * MS);
    let e0 = u0 * 90.0 / 110.0 + 100.0 * 20.0 / 110.0;
    let e1 = 100.0 * 20.0 / 60.0;
    assert!(
        (b.policy_state::<UtilAware>().unwrap().expected_util(&b.sched_view(), 0) - e0).abs() < 1e-3,
        "{} vs {e0}",
        b.policy_state::<UtilAware>().unwrap().expected_util(&b.sched_view(), 0)
    );
    assert!(
        (b.policy_state::<UtilAware>().unwrap().expected_util(&b.sched_view(), 1) - e1).abs() < 1e-3,
        "{} vs {e1}",
        b.policy_state::<UtilAware>().unwrap().expected_util(&b.sched_view(), 1)
    );
}

/// Fig. 3 lines 5-8: three nice-0 hogs queued on vCPU 0 (load 3072), vCPU 1 empty. At the
/// next enqueue, 3072 > 1.25 x 0: one moves (2048 vs 1024), 2048 > 1280: another moves
/// (1024 vs 2048), 1024 <= 2560: stop. Exactly two moves.
#[test]
fn leveling_moves_until_within_1_25() {
    let h = |n: &str| {
        json!({"name": n, "cpus": [0], "phases": [
            {"loop": 1, "events": [{"setattr": {"cpus": null}}]},
            {"loop": -1, "events": [{"runtime": 1000 * MS}]}]})
    };
    let n = json!({"name": "N", "delay_ns": 50 * MS, "loop": 1, "phases": [{"loop": 1, "events": [{"runtime": MS}]}]});
    let mut s = sim("util-aware", 0.0, vec![h("H1"), h("H2"), h("H3"), n]);
    s.run_until(50 * MS - 1);
    assert_eq!(s.rqs[0].cfs.load_weight, 3072);
    assert_eq!(s.rqs[1].cfs.load_weight, 0);
    s.run_until(50 * MS + 10_000); // N is enqueued once vCPU 1 is out of WFI (1 µs)
    assert_eq!(counter(&s, "leveling_moves"), 2);
    // N then goes to the vCPU with the lower U: vCPU 1 (idle since its last epoch)
    assert_eq!(s.tasks[3].cpu, 1);
    assert_eq!(s.rqs[0].cfs.load_weight, 1024);
    assert_eq!(s.rqs[1].cfs.load_weight, 3 * 1024);
    // no periodic or newidle balancing afterwards: the loads stay as leveled
    s.run_until(500 * MS);
    assert_eq!(s.rqs[0].cfs.load_weight, 1024);
}

/// Fig. 1: a hog on vCPU 0's little core. Epoch 100 ms: load 100 > 80 at 0.5 GHz, state
/// (L,H): ondemand asks for f_max, no switch. Epoch 200 ms: (H,H): switch up; the big
/// cluster has no live core, so the A15 starts at its lowest OPP (1 GHz). The hog stops at
/// 250 ms: epoch 300 ms sees load 50 < 70 at 1 GHz < 2 GHz, (L,L): switch down.
#[test]
fn switches_only_in_hh_and_ll() {
    let t = json!({"name": "T", "cpus": [0], "loop": 1,
                   "phases": [{"loop": 1, "events": [{"runtime": 250 * MS}, {"sleep": 10_000 * MS}]}]});
    for sched in ["legacy", "util-aware"] {
        let mut s = sim(sched, 0.0, vec![t.clone()]);
        s.run_until(200 * MS);
        assert_eq!(counter(&s, "switches_up"), 0, "(L,H) at 100 ms: no switch");
        assert_eq!(s.cpu_freq_khz(0), 1_000_000, "ondemand went to the little f_max");
        s.run_until(200 * MS + 1);
        assert_eq!(counter(&s, "switches_up"), 1);
        assert_eq!(s.platform.cpu_cluster[0], 1);
        assert_eq!(s.cpu_freq_khz(0), 1_000_000, "the A15 starts at the lowest OPP");
        s.run_until(300 * MS + 1);
        assert_eq!(counter(&s, "switches_down"), 1);
        assert_eq!(s.platform.cpu_cluster[0], 0);
        s.run_until(2000 * MS);
        assert_eq!((counter(&s, "switches_up"), counter(&s, "switches_down")), (1, 1));
        assert_eq!(
            counter(&s, "switches_up"),
            s.result()["switcher"]["switches_up"].as_u64().unwrap()
        );
    }
}

/// A hog never switches down (utilisation stays H), and a 75 % task on a little core at
/// f_max never switches up (utilisation between the thresholds is neither H nor L).
#[test]
fn no_switch_outside_hh_ll() {
    let mut s = sim("legacy", 0.0, vec![hog("H", 0, 0, Some(vec![0]))]);
    s.run_until(3000 * MS);
    assert_eq!((counter(&s, "switches_up"), counter(&s, "switches_down")), (1, 0));
    // 75 ms busy per 100 ms, in phase with vCPU 1's epochs (150, 250, ...): every window 75 %
    let p = json!({"name": "P", "cpus": [1], "delay_ns": 150 * MS,
                   "phases": [{"loop": -1, "events": [{"runtime": 75 * MS}, {"sleep": 25 * MS}]}]});
    let mut s = sim("legacy", 0.0, vec![p]);
    s.run_until(3000 * MS);
    assert_eq!(counter(&s, "switches_up"), 0);
    assert_eq!(s.platform.cpu_cluster[1], 0);
}

#[test]
fn switcher_policy_errors() {
    let tasks = json!([{"name": "x", "loop": 1, "phases": [{"loop": 1, "events": [{"run": 1000}]}]}]);
    let w =
        WorkloadSpec::from_json(&json!({"name": "t", "duration_ns": null, "timers": 0, "tasks": tasks}).to_string())
            .unwrap();
    let pol = |sched: &str, gov: &str| -> PolicyConfig {
        serde_json::from_value(json!({"scheduler": sched, "governor": gov})).unwrap()
    };
    for (sched, gov) in [("cfs", "ondemand"), ("legacy", "schedutil")] {
        let e = Sim::new(switcher_platform(), w.clone(), pol(sched, gov))
            .err()
            .unwrap()
            .to_string();
        assert!(!e.contains('\n') && e.contains("switcher"), "{e}");
    }
    let e = Sim::new(
        hetsched_core::testutils::two_cluster_platform(),
        w,
        pol("util-aware", "ondemand"),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("switcher platform"), "{e}");
}
