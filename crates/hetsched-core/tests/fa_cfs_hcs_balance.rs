//! FA-CFS (paper 002, eq. 10) and hcs-balance (paper 004 §3). Expected values
//! are worked out from the papers' formulas and CFS's sched_slice, never read back from
//! the engine.

use hetsched_core::platform::{ClusterSpec, OppSpec, PlatformSpec};
use hetsched_core::testutils::idle;
use hetsched_core::{Platform, PolicyConfig, Sim, WorkloadSpec};
use serde_json::{json, Value};

const MS: u64 = 1_000_000;

/// Two CPUs of one core type, each its own frequency domain: CPU 0 with OPPs 1.4/2.8 GHz,
/// CPU 1 with 1.05/2.8 GHz (both capacity 1024).
fn two_domains() -> Platform {
    let cl = |name: &str, cpu: usize, khz: &[u64]| ClusterSpec {
        name: name.into(),
        cpus: vec![cpu],
        capacity_orig: 1024,
        opps: khz
            .iter()
            .map(|&k| OppSpec {
                khz: k,
                power_uw: k / 100,
                cluster_power_uw: 0,
            })
            .collect(),
        idle_states: vec![idle("WFI", hetsched_core::platform::IdleLevel::Cpu, 1, 1, 1, 0)],
        context_switch_ns: None,
    };
    Platform::from_spec(PlatformSpec {
        name: "test-2dom".into(),
        power_model: "dt".into(),
        clusters: vec![cl("a", 0, &[1_400_000, 2_800_000]), cl("b", 1, &[1_050_000, 2_800_000])],
        switcher: false,
        idle_domains: vec![],
        shared_llc: false,
        device_init: None,
    })
    .unwrap()
}

fn hog(name: &str, cpus: Value) -> Value {
    json!({"name": name, "cpus": cpus, "loop": 1, "phases": [{"loop": 1, "events": [{"run": 10_000 * MS}]}]})
}

/// H1, H2 pinned to CPU 0; C runs 10 ms alone on CPU 1, then moves itself to CPU 0
/// (sched_setattr with cpus = [0]) and runs on beside the hogs.
fn scenario(scheduler: &str, khz: u64) -> Sim {
    let c = json!({"name": "C", "cpus": [1], "loop": 1, "phases": [{"loop": 1, "events": [
        {"run": 10 * MS}, {"setattr": {"cpus": [0]}}, {"run": 10_000 * MS}]}]});
    let w = json!({"name": "t", "duration_ns": null, "timers": 0,
                   "tasks": [hog("H1", json!([0])), hog("H2", json!([0])), c]});
    let pol: PolicyConfig = serde_json::from_value(json!({
        "scheduler": scheduler, "governor": "userspace",
        "knobs": {"userspace.khz": khz as f64, "tick_hz": 1000.0, "fair.eevdf": 0.0}
    }))
    .unwrap();
    Sim::new(two_domains(), WorkloadSpec::from_json(&w.to_string()).unwrap(), pol).unwrap()
}

/// The length of C's first stint on CPU 0 (from being picked to being switched out).
fn first_stint_on_cpu0(sim: &mut Sim) -> u64 {
    let mut start = None;
    while sim.now < 500 * MS {
        assert!(sim.step());
        let on = sim.rqs[0].curr == Some(2);
        match (start, on) {
            (None, true) => start = Some(sim.now),
            (Some(s), false) => return sim.now - s,
            _ => {}
        }
    }
    panic!("C never left CPU 0");
}

#[test]
fn facfs_rescales_the_slice_after_a_migration_between_frequencies() {
    // userspace.khz = 1.2 GHz: CPU 0 at 1.4 GHz (lowest OPP >= 1.2), CPU 1 at 2.8 GHz.
    // Three nice-0 tasks on CPU 0: sched_slice = latency 6 ms x (1 + ilog2(2)) / 3 = 4 ms.
    let s = 4 * MS;
    let tick = MS;
    let mut cfs = scenario("cfs", 1_200_000);
    let d_cfs = first_stint_on_cpu0(&mut cfs);
    assert!(d_cfs > s && d_cfs <= s + tick, "cfs stint {d_cfs}");
    // FA-CFS: S' = (f_src / f_dst) S = (2.8 / 1.4) x 4 ms = 8 ms, preempted at the tick after
    let mut fa = scenario("fa-cfs", 1_200_000);
    let d_fa = first_stint_on_cpu0(&mut fa);
    let s2 = s * 2_800_000 / 1_400_000;
    assert!(
        d_fa > s2 && d_fa <= s2 + tick,
        "fa-cfs stint {d_fa}, expected ({s2}, {}]",
        s2 + tick
    );
    let r = fa.result();
    assert_eq!(r["counters"]["policy"]["rescales"], json!(1));
    assert!(r["counters"]["policy"]["rescales"].is_u64());
    assert!(cfs.result()["counters"]["policy"].get("rescales").is_none());
    // the rescaled slice is one slice: C's next stint is plain again (its vruntime was
    // charged with the adjusted weight, so it may wait longer, but runs S then)
    let d_next = first_stint_again(&mut fa);
    assert!(d_next > s && d_next <= s + tick, "second stint {d_next}");
}

fn first_stint_again(sim: &mut Sim) -> u64 {
    // skip to C's next pick on CPU 0
    while sim.rqs[0].curr != Some(2) {
        assert!(sim.step());
    }
    let s = sim.now;
    while sim.rqs[0].curr == Some(2) {
        assert!(sim.step());
    }
    sim.now - s
}

#[test]
fn facfs_is_cfs_when_the_frequencies_are_equal() {
    // userspace.khz = 2.8 GHz: both CPUs at 2.8 GHz; nothing is rescaled, the run is cfs's
    let mut cfs = scenario("cfs", 2_800_000);
    let mut fa = scenario("fa-cfs", 2_800_000);
    cfs.run_until(300 * MS);
    fa.run_until(300 * MS);
    let (a, b) = (cfs.result(), fa.result());
    assert_eq!(b["counters"]["policy"]["rescales"], json!(0));
    assert_eq!(a["tasks"], b["tasks"]);
    assert_eq!(a["energy_fj"], b["energy_fj"]);
    assert_eq!(a["counters"]["context_switches"], b["counters"]["context_switches"]);
}

#[test]
fn facfs_rejects_eevdf() {
    let w = json!({"name": "t", "duration_ns": null, "timers": 0, "tasks": [hog("H1", Value::Null)]});
    let pol: PolicyConfig =
        serde_json::from_value(json!({"scheduler": "fa-cfs", "governor": "performance", "knobs": {"fair.eevdf": 1.0}}))
            .unwrap();
    let e = Sim::new(two_domains(), WorkloadSpec::from_json(&w.to_string()).unwrap(), pol)
        .err()
        .expect("an error");
    assert!(e.to_string().contains("fa-cfs"), "{e}");
}

/// Eight CPU hogs (no pinning) on the two CPUs.
fn hogs8(scheduler: &str, knobs: Value) -> Sim {
    let tasks: Vec<Value> = (0..8).map(|i| hog(&format!("j{i}"), Value::Null)).collect();
    let w = json!({"name": "t", "duration_ns": null, "timers": 0, "tasks": tasks});
    let pol: PolicyConfig =
        serde_json::from_value(json!({"scheduler": scheduler, "governor": "performance", "knobs": knobs})).unwrap();
    Sim::new(two_domains(), WorkloadSpec::from_json(&w.to_string()).unwrap(), pol).unwrap()
}

#[test]
fn hcs_balance_spreads_every_task_over_both_cpus() {
    // paper 004 §3: each task moves to the other CPU after each timeslice, so its run time
    // is divided (nearly) evenly; cfs's balancer leaves a settled 4 + 4 split in place.
    let frac0 = |sim: &Sim| -> Vec<f64> {
        (0..8)
            .map(|t| {
                let ct = sim.task_cpu_time(t);
                ct[0] as f64 / (ct[0] + ct[1]) as f64
            })
            .collect()
    };
    // hcs-balance requires CFS: its baseline runs the same class
    let mut cfs = hogs8("cfs", json!({"fair.eevdf": 0.0}));
    cfs.run_until(2_000 * MS);
    let mut hcs = hogs8("hcs-balance", json!({}));
    hcs.run_until(2_000 * MS);
    let f_cfs = frac0(&cfs);
    let f_hcs = frac0(&hcs);
    // CAB_J = std of a job's per-core fractions = |f0 - 1/2| on two cores
    let cab = |f: &[f64]| f.iter().map(|x| (x - 0.5).abs()).fold(0.0, f64::max);
    assert!(cab(&f_hcs) < 0.1, "hcs-balance fractions {f_hcs:?}");
    assert!(cab(&f_cfs) > 0.3, "cfs fractions {f_cfs:?}");
    assert!(hcs.policy_counter("pulls") > 100);
    // the knob off gives back cfs exactly
    let mut off = hogs8("hcs-balance", json!({"hcs_balance_enabled": 0.0}));
    off.run_until(2_000 * MS);
    assert_eq!(off.policy_counter("pulls"), 0);
    let (a, b) = (cfs.result(), off.result());
    assert_eq!(a["tasks"], b["tasks"]);
    assert_eq!(a["energy_fj"], b["energy_fj"]);
}
