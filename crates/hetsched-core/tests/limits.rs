//! The engine's limits (limits.rs): a workload that would take the machine stops the run
//! with an error naming the task, phase and event at fault, within a bounded number of
//! steps; a workload that stays within them runs as before.

// `1 * MS`: quantities are written with their units
#![allow(clippy::identity_op)]

use hetsched_core::limits::{MAX_TASKS, NO_PROGRESS_STEPS};
use hetsched_core::testutils::{costs_off, two_cluster_platform};
use hetsched_core::{Error, PolicyConfig, Sim, TaskState, WorkloadSpec};
use serde_json::{json, Value};

const US: u64 = 1_000;
const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

fn sim(w: Value) -> Sim {
    let pol: PolicyConfig = serde_json::from_value(json!({"scheduler": "cfs", "governor": "performance"})).unwrap();
    Sim::new(
        two_cluster_platform(),
        WorkloadSpec::from_json(&w.to_string()).unwrap(),
        costs_off(pol),
    )
    .unwrap()
}

fn task(name: &str, loop_: i64, phase_loop: i64, events: Value) -> Value {
    json!({"name": name, "loop": loop_, "phases": [{"loop": phase_loop, "events": events}]})
}

fn template(name: &str, loop_: i64, events: Value) -> Value {
    let mut t = task(name, loop_, 1, events);
    t["start"] = json!(false);
    t
}

/// The Runaway error that stopped `s`: (field, expected, got).
fn runaway(s: &Sim) -> (String, String, String) {
    match s.stopped() {
        Some(Error::Runaway { field, expected, got }) => (field.clone(), expected.clone(), got.clone()),
        other => panic!("expected a Runaway stop, got {other:?}"),
    }
}

#[test]
fn a_fork_loop_that_takes_no_time_stops_at_the_task_limit() {
    // "a" forks copies of "b" forever without spending time: without the limit, memory
    // runs out
    let w = json!({"tasks": [template("b", 1, json!([{"run": 1 * MS}])),
                             task("a", -1, 1, json!([{"fork": 0}]))]});
    let mut s = sim(w);
    s.run_until(1 * S);
    let (field, expected, got) = runaway(&s);
    assert_eq!(field, "tasks[1].phases[0].events[0]");
    assert!(
        expected.starts_with(&format!("at most {MAX_TASKS} tasks in a run")),
        "{expected}"
    );
    assert_eq!(got, "a forking a copy of b");
    assert_eq!(s.tasks.len(), MAX_TASKS);
    // stopped where it stopped (the CPU's idle exit), not at the end of the window, and
    // for good: nothing runs any more
    let (events, now) = (s.events.popped, s.now);
    assert!(now < 10 * US, "{now}");
    s.run_until(2 * S);
    assert!(!s.run_until_exited(3 * S));
    assert_eq!((s.events.popped, s.now), (events, now));
}

#[test]
fn a_forked_copy_that_forks_without_end_is_named_by_its_templates_spec() {
    // "a" forks one copy of "b" after 1 ms; that copy forks copies of "b" forever,
    // spending no time
    let w = json!({"tasks": [template("b", -1, json!([{"run": 0}, {"fork": 0}])),
                             task("a", 1, 1, json!([{"run": 1 * MS}, {"fork": 0}]))]});
    let mut s = sim(w);
    s.run_until(10 * S);
    let (field, _, got) = runaway(&s);
    // the copy's spec is its template's, the fork its second event
    assert_eq!(field, "tasks[0].phases[0].events[1]");
    assert_eq!(got, "b-0000 forking a copy of b");
    assert_eq!(s.tasks.len(), MAX_TASKS);
    assert!(s.now > 1 * MS && s.now < 2 * MS, "{}", s.now);
}

#[test]
fn a_loop_that_takes_no_time_stops_after_the_step_limit() {
    for (loop_, phase_loop) in [(-1, 1), (1, 1_000_000_000)] {
        let w = json!({"tasks": [task("busy", 1, 1, json!([{"run": 1 * MS}])),
                                 task("spin", loop_, phase_loop, json!([{"run": 0}, {"yield": null}]))]});
        let mut s = sim(w);
        s.run_until(100 * MS);
        let (field, expected, got) = runaway(&s);
        assert_eq!(field, "tasks[1].phases[0]");
        assert!(
            expected.contains(&format!("at most {NO_PROGRESS_STEPS} events and program events")),
            "{expected}"
        );
        assert_eq!(got, format!("spin at t={} ns", s.now));
        assert!(s.now < 10 * US, "{}", s.now);
        assert_eq!(s.tasks[1].state, TaskState::Sleeping, "the spinning task is stopped");
    }
}

#[test]
fn tasks_that_wake_each_other_without_time_passing_stop_after_the_step_limit() {
    // a semaphore ping-pong of two tasks on one CPU, with no cost for a context switch:
    // each post wakes the other task, and no simulated time ever passes
    let mut ping = task("ping", -1, 1, json!([{"sem_post": 0}, {"sem_wait": 1}]));
    let mut pong = task("pong", -1, 1, json!([{"sem_wait": 0}, {"sem_post": 1}]));
    ping["cpus"] = json!([0]);
    pong["cpus"] = json!([0]);
    let w = json!({"sems": [0, 0], "tasks": [ping, pong]});
    let mut s = sim(w);
    s.run_until(100 * MS);
    let (field, _, got) = runaway(&s);
    assert!(
        field == "tasks[0].phases[0]" || field == "tasks[1].phases[0]",
        "{field}"
    );
    assert!(got.ends_with(&format!(" at t={} ns", s.now)), "{got}");
    assert!(s.now < 1 * MS, "{}", s.now);
    assert!(s.events.popped < 2 * NO_PROGRESS_STEPS);
}

#[test]
fn a_fork_that_spends_time_runs_to_its_end() {
    // the same shape as the fork bomb, bounded: each copy forks once after 1 ms of work
    let w = json!({"tasks": [template("b", 1, json!([{"run": 1 * MS}])),
                             task("a", 1, 100, json!([{"fork": 0}, {"run": 1 * MS}]))]});
    let mut s = sim(w);
    assert!(s.run_until_exited(10 * S));
    assert!(s.stopped().is_none());
    assert_eq!(s.tasks.len(), 2 + 100);
}

#[test]
fn more_tasks_than_a_run_may_hold_are_refused_when_the_spec_is_read() {
    let tasks: Vec<Value> = (0..=MAX_TASKS)
        .map(|i| task(&format!("t{i}"), 1, 1, json!([{"run": 1}])))
        .collect();
    let text = json!({"tasks": tasks}).to_string();
    let e = WorkloadSpec::from_json(&text).unwrap_err();
    assert!(
        e.to_string()
            .starts_with(&format!("workload: tasks: expected at most {MAX_TASKS} tasks")),
        "{e}"
    );
}

#[test]
fn a_count_of_synchronisation_objects_past_the_limit_is_refused_before_it_is_allocated() {
    for key in ["timers", "mutexes", "conds"] {
        let mut w = json!({"tasks": [task("a", 1, 1, json!([{"run": 1}]))]});
        w[key] = json!(i64::MAX);
        let e = WorkloadSpec::from_json(&w.to_string()).unwrap_err();
        assert!(
            e.to_string()
                .starts_with(&format!("workload: {key}: expected at most 1048576")),
            "{e}"
        );
    }
}

#[test]
fn a_spec_error_names_the_field_serde_stopped_at() {
    let w = json!({"tasks": [task("a", 1, 1, json!([{"run": 1}, {"timer": {"id": 0, "period_ns": 1.5}}]))],
                   "timers": 1});
    let e = WorkloadSpec::from_json(&w.to_string()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "workload: tasks[0].phases[0].events[1].timer.period_ns: expected a non-negative integer (u64), got 1.5"
    );
    // a validation error names the event too
    let w = json!({"tasks": [task("a", 1, 1, json!([{"timer": {"id": 0, "period_ns": 0}}]))], "timers": 1});
    let e = WorkloadSpec::from_json(&w.to_string()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "workload: tasks[0].phases[0].events[0].timer.period_ns: expected a positive period"
    );
}

#[test]
fn deep_nesting_in_a_spec_is_refused_by_serdes_recursion_limit() {
    // `yield` takes any JSON value: 100 000 nested arrays would overflow a recursive reader
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let text = format!(r#"{{"tasks": [{{"name": "a", "phases": [{{"events": [{{"yield": {deep}}}]}}]}}]}}"#);
    let e = WorkloadSpec::from_json(&text).unwrap_err();
    assert!(e.to_string().contains("recursion limit exceeded"), "{e}");
    assert!(e.to_string().len() < 200, "{e}");
}
