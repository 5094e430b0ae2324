//! Every registered policy, run through the same checks: the scheduler's invariants after
//! every event (invariants.rs), determinism (two runs, the same result document), and
//! the registry's own promises (the name resolves to its line, the placement and the
//! counters reach result.json). A new policy is tested here without a new test.

use hetsched_core::policies::{lookup, REGISTRY};
use hetsched_core::testutils::three_cluster_platform;
use hetsched_core::{Platform, PolicyConfig, Sim, WorkloadSpec};
use serde_json::{json, Value};

const MS: u64 = 1_000_000;

fn switcher_platform() -> Platform {
    hetsched_core::testutils::switcher_platform(4)
}

/// Fair tasks of several sizes and periods (one pinned, one at nice 5), an RR and a FIFO
/// task, a burst of forks, and a mutex two tasks share: every class and path a policy's
/// hooks can meet.
fn workload() -> WorkloadSpec {
    let periodic = |name: &str, run: u64, period: u64, timer: usize, nice: i32, cpus: Value| {
        json!({"name": name, "nice": nice, "cpus": cpus,
               "phases": [{"loop": -1, "events": [{"run": run}, {"timer": {"id": timer, "period_ns": period}}]}]})
    };
    let mut tasks = vec![
        periodic("big", 9 * MS, 12 * MS, 0, 0, Value::Null),
        periodic("mid", 3 * MS, 8 * MS, 1, 0, Value::Null),
        periodic("small", MS / 2, 4 * MS, 2, 5, Value::Null),
        periodic("pinned", 2 * MS, 10 * MS, 3, 0, json!([0])),
        json!({"name": "hog", "phases": [{"loop": -1, "events": [{"run": 20 * MS}, {"sleep": 5 * MS}]}]}),
        json!({"name": "rr", "policy": "rr", "rt_priority": 10,
               "phases": [{"loop": -1, "events": [{"run": MS}, {"sleep": 6 * MS}]}]}),
        json!({"name": "fifo", "policy": "fifo", "rt_priority": 20,
               "phases": [{"loop": -1, "events": [{"run": MS / 4}, {"timer": {"id": 4, "period_ns": 5 * MS}}]}]}),
        json!({"name": "locker-a", "phases": [{"loop": -1, "events": [
            {"lock": 0}, {"run": MS}, {"unlock": 0}, {"sleep": 3 * MS}]}]}),
        json!({"name": "locker-b", "phases": [{"loop": -1, "events": [
            {"lock": 0}, {"run": 2 * MS}, {"unlock": 0}, {"sleep": 2 * MS}]}]}),
        json!({"name": "worker", "start": false, "loop": 1,
               "phases": [{"loop": 3, "events": [{"run": 2 * MS}, {"sleep": MS}]}]}),
    ];
    let worker = tasks.len() as u64 - 1;
    tasks.push(json!({"name": "spawner", "phases": [{"loop": -1, "events": [
        {"fork": worker}, {"fork": worker}, {"sleep": 40 * MS}]}]}));
    let w = json!({"name": "registry-mix", "duration_ns": null, "timers": 5, "mutexes": 1, "tasks": tasks});
    WorkloadSpec::from_json(&w.to_string()).unwrap()
}

fn build(name: &str) -> Sim {
    let info = lookup(name).unwrap();
    let (platform, governor) = if info.requires.switcher_platform {
        (switcher_platform(), "ondemand")
    } else {
        (three_cluster_platform(), "schedutil")
    };
    let pol: PolicyConfig = serde_json::from_value(json!({"scheduler": name, "governor": governor})).unwrap();
    Sim::new(platform, workload(), pol).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn every_policy_keeps_the_invariants_after_every_event() {
    for info in REGISTRY {
        let mut sim = build(info.name);
        sim.check_invariants()
            .unwrap_or_else(|e| panic!("{}: at start: {e}", info.name));
        let mut n = 0u64;
        while sim.events.peek_time().is_some_and(|t| t < 400 * MS) {
            assert!(sim.step());
            n += 1;
            if let Err(e) = sim.check_invariants() {
                panic!("{}: after event {n}: {e}", info.name);
            }
        }
        // the mix reaches every class: fair and RT tasks ran, and forks started
        let ran = |name: &str| {
            sim.tasks
                .iter()
                .filter(|t| t.name.starts_with(name))
                .map(|t| t.stats.cpu_time_ns.iter().sum::<u64>())
                .sum::<u64>()
        };
        for task in ["big", "small", "pinned", "rr", "fifo", "locker-b", "worker-"] {
            assert!(ran(task) > 0, "{}: {task} never ran", info.name);
        }
        assert!(n > 500, "{}: only {n} events", info.name);
    }
}

#[test]
fn every_policy_is_deterministic() {
    for info in REGISTRY {
        let run = || {
            let mut sim = build(info.name);
            sim.run_until(300 * MS);
            sim.result().to_string()
        };
        assert_eq!(run(), run(), "{}: two runs differ", info.name);
    }
}

#[test]
fn every_line_resolves_and_reports_itself() {
    let mut names: Vec<&str> = REGISTRY.iter().map(|p| p.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), REGISTRY.len(), "a name is registered twice");
    for info in REGISTRY {
        assert!(std::ptr::eq(lookup(info.name).unwrap(), *info));
        assert!(!info.summary.is_empty() && !info.source.is_empty(), "{}", info.name);
        let mut sim = build(info.name);
        sim.run_until(100 * MS);
        let r = sim.result();
        assert_eq!(r["policy"]["placement"], json!(sim.placement_name()), "{}", info.name);
        assert_eq!(r["policy"]["name"], json!(info.name));
        // the policy's counters, and only they, under counters.policy
        assert_eq!(
            r["counters"]["policy"].as_object().unwrap().len(),
            sim.policy.counters().len()
        );
        for (k, v) in sim.policy.counters() {
            assert_eq!(r["counters"]["policy"][k], v, "{}: counter {k}", info.name);
        }
    }
    let err = lookup("cfs-typo").err().unwrap().to_string();
    assert!(
        err.contains("unknown scheduler 'cfs-typo'") && err.contains("eas"),
        "{err}"
    );
}

#[test]
fn requirements_are_enforced_with_one_line() {
    let pol = |name: &str, eevdf: f64| -> PolicyConfig {
        serde_json::from_value(json!({"scheduler": name, "governor": "ondemand", "knobs": {"fair.eevdf": eevdf}}))
            .unwrap()
    };
    for info in REGISTRY {
        let wrong_platform = if info.requires.switcher_platform {
            three_cluster_platform()
        } else {
            switcher_platform()
        };
        let err = Sim::new(wrong_platform, workload(), pol(info.name, 0.0))
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("switcher platform"), "{}: {err}", info.name);
        assert!(!err.contains('\n'));
    }
    // FA-CFS rescales the CFS slice; EEVDF has none
    let err = Sim::new(three_cluster_platform(), workload(), pol("fa-cfs", 1.0))
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("knobs.fair.eevdf") && err.contains("FA-CFS"), "{err}");
}
