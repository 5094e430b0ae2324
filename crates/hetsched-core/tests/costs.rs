//! The scheduler's own costs (costs.rs, docs/mechanisms/costs.md), each number worked by
//! hand. Platforms: testutils::two_cluster_platform (little: CPUs 0-1, capacity 512,
//! f_max 1 GHz; big: CPUs 2-3, capacity 1024, f_max 2 GHz) and three_cluster_platform
//! (3 perf domains, 8 CPUs: little 0-3 with 2 OPPs, mid 4-6 with 3, big 7 with 2).

use hetsched_core::costs::feec_steps;
use hetsched_core::testutils::{three_cluster_platform, two_cluster_platform};
use hetsched_core::{Platform, PolicyConfig, Sim, WorkloadSpec};
use serde_json::{json, Value};

const US: u64 = 1_000;
const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

/// every cost off, then `knobs` on top
fn knobs(extra: Value) -> Value {
    let mut k = json!({"cost.context_switch_ns": 0, "cost.migration_ns": 0,
                       "cost.feec_step_ns": 0, "cost.balance_cpu_ns": 0});
    for (n, v) in extra.as_object().unwrap() {
        k[n] = v.clone();
    }
    k
}

fn sim(platform: Platform, w: Value, scheduler: &str, governor: &str, knobs: Value) -> Sim {
    let pol: PolicyConfig =
        serde_json::from_value(json!({"scheduler": scheduler, "governor": governor, "knobs": knobs})).unwrap();
    Sim::new(platform, WorkloadSpec::from_json(&w.to_string()).unwrap(), pol).unwrap()
}

fn task(name: &str, cpus: &[usize], loop_: i64, events: Value) -> Value {
    json!({"name": name, "cpus": cpus, "loop": loop_, "phases": [{"loop": 1, "events": events}]})
}

/// Two tasks on one CPU handing a token back and forth (rt-app suspend/resume), each
/// running `work` between handoffs; the time between consecutive marks.
fn ping_pong(cpu: usize, work: u64, knobs: Value) -> (Vec<u64>, Sim) {
    let resume = |c: u32| json!([{"lock": c}, {"broad": c}, {"unlock": c}]);
    let suspend = |c: u32| json!([{"lock": c}, {"wait": {"cond": c, "mutex": c}}, {"unlock": c}]);
    let cat = |xs: Vec<Value>| Value::Array(xs.into_iter().flat_map(|x| x.as_array().unwrap().clone()).collect());
    let a = cat(vec![json!([{"run": work}, {"mark": 0}]), resume(1), suspend(0)]);
    let b = cat(vec![suspend(1), json!([{"run": work}, {"mark": 1}]), resume(0)]);
    let w = json!({"mutexes": 2, "conds": 2, "marks": ["a", "b"], "duration_ns": null,
                   "tasks": [task("a", &[cpu], 6, a), task("b", &[cpu], 6, b)]});
    // CFS: its tick preemption lets b reach its wait before a's first broadcast; under
    // EEVDF a runs its first 1 ms within one slice and the broadcast finds no waiter
    let mut knobs = knobs;
    knobs["fair.eevdf"] = json!(0);
    let mut s = sim(two_cluster_platform(), w, "cfs", "performance", knobs);
    s.run_until(40 * MS);
    let m = s.marks.clone();
    (m.windows(2).map(|p| p[1].0 - p[0].0).collect(), s)
}

#[test]
fn a_ping_pong_pair_pays_one_switch_per_handoff() {
    // Between two marks one task blocks and the other is switched in, then runs 1 ms of
    // work: 1 ms + one switch. On big at f_max (capacity 1024, 2 GHz of 2 GHz) 1500 ns of
    // cost is 1500 ns; a round trip (two handoffs) costs work + 2 x 1500 ns.
    let (d, s) = ping_pong(2, MS, knobs(json!({"cost.context_switch_ns": 1500})));
    assert!(d.len() >= 8, "{d:?}");
    for x in &d[1..] {
        assert_eq!(*x, MS + 1500, "{d:?}");
    }
    // the switch is busy time on that CPU: each task's CPU time is its work plus the
    // switches into it (the kernel accounts the switch to the task switched in)
    let busy: u64 = s.tasks.iter().map(|t| s.task_cpu_time(t.id as usize)[2]).sum();
    let switches = s.rqs[2].nr_switches;
    let work: u64 = s.tasks.iter().map(|t| t.stats.work_done).sum();
    assert_eq!(
        busy,
        work + switches * 1500,
        "busy {busy} work {work} switches {switches}"
    );
    // On little (capacity 512, 1 GHz of 1 GHz) the same invariant work takes twice as
    // long: 1 ms of work = 2 ms, a 1500 ns switch = 3000 ns.
    let (d, _) = ping_pong(0, MS, knobs(json!({"cost.context_switch_ns": 1500})));
    for x in &d[1..] {
        assert_eq!(*x, 2 * MS + 3000, "{d:?}");
    }
}

#[test]
fn costs_of_zero_keep_the_old_timing() {
    // every cost 0: the handoff costs nothing (the engine before costs were modelled), and
    // result.json has no sched_cost_ns counters
    let (d, s) = ping_pong(2, MS, knobs(json!({})));
    for x in &d[1..] {
        assert_eq!(*x, MS, "{d:?}");
    }
    let doc = s.result();
    assert!(doc["counters"].get("sched_cost_ns").is_none());
    // the defaults charge: 2000 ns per switch on a capacity-1024 CPU without a measured
    // figure
    let (d, s) = ping_pong(2, MS, json!({"cost.migration_ns": 0, "cost.balance_cpu_ns": 0}));
    for x in &d[1..] {
        assert_eq!(*x, MS + 2000, "{d:?}");
    }
    assert!(
        s.result()["counters"]["sched_cost_ns"]["context_switch"]
            .as_u64()
            .unwrap()
            > 0
    );
}

#[test]
fn a_migration_is_charged_on_the_destination() {
    // One task runs 5 ms of work on CPU 2, then on CPU 3, then on CPU 0 (setattr moves
    // it; each mark pair brackets the run, the switch-in comes before the first mark).
    // Switch 1000, migration 3000 (invariant ns); the CPU time on each:
    //   CPU 2 (first run, nothing to migrate from): 5 ms + 1000 ns
    //   CPU 3 (big, 2 GHz of 2): 5 ms + (1000 + 3000) ns
    //   CPU 0 (little, capacity 512, 1 GHz of 1): (5 ms + 4000 ns) x 1024/512
    // The destination's CPU time holds the move: CPU 2 is charged nothing for it.
    let ev = |cpus: Value| json!([{"setattr": {"cpus": cpus}}, {"mark": 0}, {"run": 5 * MS}, {"mark": 0}]);
    let mut events = Vec::new();
    for c in [json!([2]), json!([3]), json!([0])] {
        events.extend(ev(c).as_array().unwrap().clone());
    }
    let w = json!({"tasks": [task("t", &[2], 1, Value::Array(events))], "marks": ["m"]});
    let k = knobs(json!({"cost.context_switch_ns": 1000, "cost.migration_ns": 3000}));
    let mut s = sim(two_cluster_platform(), w, "cfs", "performance", k);
    assert!(s.run_until_exited(S));
    let m: Vec<u64> = s.marks.iter().map(|x| x.0).collect();
    let d: Vec<u64> = m.chunks(2).map(|p| p[1] - p[0]).collect();
    assert_eq!(d, vec![5 * MS, 5 * MS, 10 * MS]);
    // between the runs: the destination's idle exit (CPU 3 from WFI, 1 us; CPU 0 from
    // little's cluster-sleep, 500 us), then the switch and the attach there
    assert_eq!((m[2] - m[1], m[4] - m[3]), (1000 + 4000, 500_000 + 8000));
    let t = &s.tasks[0].stats;
    assert_eq!(
        (t.cpu_time_ns[2], t.cpu_time_ns[3], t.cpu_time_ns[0]),
        (5 * MS + 1000, 5 * MS + 4000, 10 * MS + 8000)
    );
}

#[test]
fn feec_steps_on_three_perf_domains() {
    // commit 5b77261c5510's count: per pd 4 x CPUs + 2 x OPPs, plus prev_cpu's pd again:
    //   little 4 x 4 + 2 x 2 = 20, mid 4 x 3 + 2 x 3 = 18, big 4 x 1 + 2 x 2 = 8: 46;
    //   prev on little: 46 + 4 + 2 = 52; prev on big: 46 + 1 + 2 = 49.
    // (pds listed in the EM's rd->pd order, which does not change the sum)
    assert_eq!(feec_steps(&[4, 3, 1], &[2, 3, 2], 0), 52);
    assert_eq!(feec_steps(&[1, 3, 4], &[2, 3, 2], 0), 49);
}

/// A task pinned to CPU 0 waking from a timer every 4 ms to run 200 µs of work, under
/// eas on the 3-pd platform; the placement cost counter and the policy's counters.
fn eas_wakeups(fastpath: bool) -> (u64, u64, u64) {
    let w = json!({"tasks": [task("p", &[0], 20, json!([{"run": 200 * US}, {"sleep": 4 * MS}]))]});
    let k = knobs(json!({"cost.feec_step_ns": 20, "vendor.prev_cpu_fastpath": fastpath as u8}));
    let mut s = sim(three_cluster_platform(), w, "eas", "schedutil", k);
    assert!(s.run_until_exited(S));
    let doc = s.result();
    let placement = doc["counters"]["sched_cost_ns"]["placement"].as_u64().unwrap_or(0);
    (
        placement,
        s.policy_counter("feec_calls"),
        s.policy_counter("vendor.prev_cpu_fastpath"),
    )
}

#[test]
fn feec_costs_its_steps_and_the_fast_path_one() {
    // prev_cpu is CPU 0 (little) at every wakeup: feec is 52 steps x 20 ns = 1040 ns of
    // invariant work; the fast path (prev_cpu idle, the task fits) is 1 step = 20 ns.
    let (p, feec, fast) = eas_wakeups(false);
    assert!(feec >= 19, "one feec per wakeup: {feec}");
    assert_eq!(p, feec * 52 * 20);
    let (p, feec2, fast2) = eas_wakeups(true);
    assert!(fast2 >= 19, "{fast2}");
    assert_eq!(fast, 0);
    assert_eq!(p, feec2 * 52 * 20 + fast2 * 20);
}
