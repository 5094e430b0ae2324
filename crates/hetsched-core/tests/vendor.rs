//! The vendor EAS knobs of paper 003 (vendor.rs): each, on a workload built to trigger it,
//! changes placements (or frequencies) and moves its counter; with every knob off, or only
//! their parameters changed, the results are those of plain `eas`.

use hetsched_core::testutils::three_cluster_platform;
use hetsched_core::{PolicyConfig, Sim, WorkloadSpec};
use serde_json::{json, Value};

const MS: u64 = 1_000_000;

fn workload(tasks: Vec<Value>, timers: usize) -> WorkloadSpec {
    let w = json!({"name": "test", "duration_ns": null, "timers": timers, "tasks": tasks});
    WorkloadSpec::from_json(&w.to_string()).unwrap()
}

fn eas(tasks: Vec<Value>, timers: usize, knobs: Value) -> Sim {
    let pol: PolicyConfig =
        serde_json::from_value(json!({"scheduler": "eas", "governor": "schedutil", "knobs": knobs})).unwrap();
    Sim::new(three_cluster_platform(), workload(tasks, timers), pol).unwrap()
}

/// rt-app periodic task: `run_ns` of invariant work every `period_ns` on timer `timer`.
fn periodic(name: &str, run_ns: u64, period_ns: u64, timer: usize, delay_ns: u64, cpus: Option<Vec<usize>>) -> Value {
    json!({
        "name": name, "cpus": cpus, "delay_ns": delay_ns,
        "phases": [{"loop": -1, "events": [{"run": run_ns}, {"timer": {"id": timer, "period_ns": period_ns}}]}]
    })
}

fn run(sim: &mut Sim, t: u64) -> Value {
    sim.run_until(t);
    sim.check_invariants().unwrap_or_else(|e| panic!("{e}"));
    sim.result()
}

fn vendor(r: &Value, name: &str) -> u64 {
    r["counters"]["vendor"][name].as_u64().unwrap()
}

/// Share of task `t`'s CPU time spent on the given CPUs.
fn share(sim: &Sim, t: usize, cpus: &[usize]) -> f64 {
    let ct = sim.task_cpu_time(t);
    let tot: u64 = ct.iter().sum();
    cpus.iter().map(|&c| ct[c]).sum::<u64>() as f64 / tot.max(1) as f64
}

/// The result without the fields that name the policy's knobs.
fn strip(mut r: Value) -> Value {
    r.as_object_mut().unwrap().remove("policy");
    r
}

fn mixed() -> Vec<Value> {
    vec![
        periodic("a", 600_000, 10 * MS, 0, 0, None),
        periodic("b", 2_500_000, 16 * MS, 1, 300_000, None),
        periodic("c", 300_000, 4 * MS, 2, 1_000_000, None),
        json!({"name": "rt", "policy": "fifo", "rt_priority": 10, "delay_ns": 2_000_000,
               "phases": [{"loop": -1, "events": [{"run": 200_000}, {"timer": {"id": 3, "period_ns": 5 * MS}}]}]}),
    ]
}

#[test]
fn every_knob_off_or_only_parameters_changed_is_plain_eas() {
    let plain = strip(run(&mut eas(mixed(), 4, json!({})), 500 * MS));
    let params = json!({
        "vendor.sched_upmigrate": 99.0, "vendor.sched_downmigrate": 50.0,
        "vendor.core_ctl.busy_up_thres": 10.0, "vendor.core_ctl.offline_delay_ms": 0.0,
        "vendor.core_ctl.min_cpus": 0.0, "vendor.core_ctl.window_ms": 4.0,
    });
    let with_params = strip(run(&mut eas(mixed(), 4, params), 500 * MS));
    assert_eq!(plain, with_params);
    let off = json!({"vendor.cpu_isolation": 0.0, "vendor.migration_margins": 0.0, "vendor.task_packing": 0.0,
                     "vendor.prev_cpu_fastpath": 0.0, "vendor.rt_placement": 0.0});
    assert_eq!(plain, strip(run(&mut eas(mixed(), 4, off), 500 * MS)));
    for (k, v) in plain["counters"]["vendor"].as_object().unwrap() {
        assert_eq!(v.as_u64(), Some(0), "{k}");
    }
}

/// A small task forked onto the idle big CPU (the fork path takes the idle CPU with the
/// most spare capacity): feec moves it to a little CPU at its first wakeup; the fast path
/// sees prev_cpu idle and fitting and keeps it on big without computing energies.
#[test]
fn prev_cpu_fastpath_keeps_an_idle_fitting_prev_cpu() {
    let tasks = || vec![periodic("p", 500_000, 10 * MS, 0, 0, None)];
    let mut plain = eas(tasks(), 1, json!({}));
    let r0 = run(&mut plain, 300 * MS);
    let mut fast = eas(tasks(), 1, json!({"vendor.prev_cpu_fastpath": 1.0}));
    let r1 = run(&mut fast, 300 * MS);
    assert!(
        share(&plain, 0, &[7]) < 0.1,
        "plain eas leaves big: {}",
        share(&plain, 0, &[7])
    );
    assert!(
        share(&fast, 0, &[7]) > 0.9,
        "fast path stays on big: {}",
        share(&fast, 0, &[7])
    );
    assert!(vendor(&r1, "prev_cpu_fastpath") >= 25);
    assert!(r1["counters"]["policy"]["feec_calls"].as_u64() < r0["counters"]["policy"]["feec_calls"].as_u64());
}

/// A task pinned to little CPU 0 (util ~60) runs when a second small task (util ~20) wakes
/// 1 ms later: feec wakes an idle little CPU; packing puts it on CPU 0, whose domain needs
/// the same OPP with it (81 × 1.25 ≤ 128, the lowest little state).
#[test]
fn task_packing_puts_a_wakee_on_an_active_cpu_at_the_same_opp() {
    // worked with CFS (v6.5): under EEVDF the small task keeps ~35 % of its time on CPU 0
    let tasks = || {
        vec![
            periodic("pinned", 600_000, 10 * MS, 0, 0, Some(vec![0])),
            periodic("small", 200_000, 10 * MS, 1, MS, None),
        ]
    };
    let mut plain = eas(tasks(), 2, json!({"fair.eevdf": 0.0}));
    run(&mut plain, 500 * MS);
    let mut pack = eas(tasks(), 2, json!({"vendor.task_packing": 1.0, "fair.eevdf": 0.0}));
    let r = run(&mut pack, 500 * MS);
    assert!(share(&plain, 1, &[0]) < 0.1, "plain: {}", share(&plain, 1, &[0]));
    // packed once, feec then keeps it on its prev_cpu
    assert!(share(&pack, 1, &[0]) > 0.6, "packed: {}", share(&pack, 1, &[0]));
    assert!(vendor(&r, "task_packing") >= 1);
}

/// A task of util ~100 that grows to ~210: on a little CPU (capacity 256) the kernel's
/// 80% margin (210 × 1280 ≥ 256 × 1024) makes it overutilized and misfit, so it leaves for
/// mid; with sched_upmigrate 95% it still fits (21000 < 256 × 95) and stays on little.
#[test]
fn migration_margins_keep_a_task_on_little_up_to_upmigrate() {
    let tasks = || {
        vec![json!({"name": "grow", "phases": [
            {"loop": 20, "events": [{"run": 1_000_000}, {"timer": {"id": 0, "period_ns": 10 * MS}}]},
            {"loop": -1, "events": [{"run": 2_100_000}, {"timer": {"id": 0, "period_ns": 10 * MS}}]}
        ]})]
    };
    let little = [0, 1, 2, 3];
    let mut plain = eas(tasks(), 1, json!({}));
    run(&mut plain, 1000 * MS);
    let mut marg = eas(tasks(), 1, json!({"vendor.migration_margins": 1.0}));
    let r1 = run(&mut marg, 1000 * MS);
    assert!(share(&plain, 0, &little) < 0.5, "plain: {}", share(&plain, 0, &little));
    assert!(share(&marg, 0, &little) > 0.9, "margins: {}", share(&marg, 0, &little));
    assert!(vendor(&r1, "migration_margins") > 0);
    // the margins kept the little CPU from being overutilized / the task from being misfit
    assert!(vendor(&r1, "migration_margins_ticks") > 0);
    // and with downmigrate below the task's util, a task on mid does not come back
    let mut low = eas(
        tasks(),
        1,
        json!({"vendor.migration_margins": 1.0, "vendor.sched_upmigrate": 70.0}),
    );
    run(&mut low, 1000 * MS);
    assert!(share(&low, 0, &little) < 0.5);
}

/// A FIFO task: mainline's capacity fitness (RT uclamp_min 1024) keeps it on the big CPU;
/// the vendor's lowest mask, by utilisation, idle state and capacity, takes a little CPU.
#[test]
fn rt_placement_orders_the_lowest_mask_by_util_idle_state_and_capacity() {
    let tasks = || {
        vec![json!({"name": "rt", "policy": "fifo", "rt_priority": 10,
               "phases": [{"loop": -1, "events": [{"run": 100_000}, {"timer": {"id": 0, "period_ns": 5 * MS}}]}]})]
    };
    let mut plain = eas(tasks(), 1, json!({}));
    run(&mut plain, 300 * MS);
    let mut vend = eas(tasks(), 1, json!({"vendor.rt_placement": 1.0}));
    let r = run(&mut vend, 300 * MS);
    assert!(share(&plain, 0, &[7]) > 0.9);
    // the CPU it ran on keeps some RT util: it moves to another CPU of zero util, a
    // shallower idle state first (a mid CPU in WFI before a little one in cluster sleep)
    assert!(share(&vend, 0, &[7]) < 0.2, "{}", share(&vend, 0, &[7]));
    assert!(vendor(&r, "rt_placement") >= 50);
}

/// Light load: the controller isolates two of the three mid CPUs (min_cpus 1) after
/// offline_delay_ms; isolated CPUs stay idle throughout, and the run differs from plain
/// eas. Seven tasks needing mid make it busy again: CPUs come back. (Five are not enough
/// since misfit active balancing from newly idle CPUs keeps the mid and big CPUs left busy:
/// 5 x 3.5 ms per 10 ms is 1.75 CPUs for the two it has.)
#[test]
fn cpu_isolation_isolates_idle_cpus_that_then_stay_idle() {
    let tasks = || {
        let mut v = vec![periodic("s", 300_000, 10 * MS, 0, 0, None)];
        // from 400 ms seven tasks of util ~350 (do not fit little): need mid CPUs
        for i in 1..=7 {
            v.push(json!({"name": format!("m{i}"), "delay_ns": 400 * MS, "phases": [{"loop": -1, "events": [{"run": 3_500_000}, {"timer": {"id": i, "period_ns": 10 * MS}}]}]}));
        }
        v
    };
    let mut iso = eas(tasks(), 8, json!({"vendor.cpu_isolation": 1.0}));
    let mut seen = 0u64;
    while iso.now < 1000 * MS {
        assert!(iso.step());
        let m = iso.cpu_isolated;
        seen |= m;
        for c in 0..8 {
            if m & (1 << c) != 0 {
                assert!(
                    iso.rqs[c].curr.is_none() && iso.rqs[c].nr_running() == 0,
                    "isolated CPU {c} runs"
                );
            }
        }
    }
    let r1 = iso.result();
    assert!(seen & 0b0111_0000 != 0, "mid CPUs isolated: {seen:#b}");
    assert!(vendor(&r1, "cpu_isolation") >= 2);
    assert!(vendor(&r1, "cpu_unisolation") >= 1);
    let r0 = run(&mut eas(tasks(), 8, json!({})), 1000 * MS);
    assert_ne!(r0["cpus"], r1["cpus"]);
}
