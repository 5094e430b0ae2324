//! The full rt-app event set and the task performance model (docs/engine-interface.md):
//! each expected number is worked out by hand from the event's semantics and the round
//! numbers of testutils::two_cluster_platform (little: CPUs 0-1, capacity 512 at 1 GHz;
//! big: CPUs 2-3, capacity 1024 at 2 GHz; WFI exit 1 µs).

#![allow(clippy::identity_op)]

use hetsched_core::testutils::{costs_off, two_cluster_platform};
use hetsched_core::TaskState;
use hetsched_core::{PolicyConfig, Sim, WorkloadSpec};
use serde_json::{json, Value};

const US: u64 = 1_000;
const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

fn sim(w: Value, governor: &str) -> Sim {
    sim_knobs(w, governor, json!({}))
}

fn sim_knobs(w: Value, governor: &str, knobs: Value) -> Sim {
    let pol: PolicyConfig =
        serde_json::from_value(json!({"scheduler": "cfs", "governor": governor, "knobs": knobs})).unwrap();
    Sim::new(
        two_cluster_platform(),
        WorkloadSpec::from_json(&w.to_string()).unwrap(),
        costs_off(pol),
    )
    .unwrap()
}

fn task(name: &str, cpus: &[usize], loop_: i64, events: Value) -> Value {
    json!({"name": name, "cpus": cpus, "loop": loop_, "phases": [{"loop": 1, "events": events}]})
}

/// (time, task, mark) of the marks logged so far
fn marks(s: &Sim) -> Vec<(u64, u32, u32)> {
    s.marks.clone()
}

// ---------------------------------------------------------------- performance model

/// Time of one `run` of 1 ms of work, marked before and after, for a perf model on a CPU.
fn run_time(perf: Value, cpu: usize) -> u64 {
    let mut t = task("t", &[cpu], 1, json!([{"mark": 0}, {"run": 1 * MS}, {"mark": 1}]));
    if !perf.is_null() {
        t["perf"] = perf;
    }
    let w = json!({"tasks": [t], "marks": ["a", "b"]});
    let mut s = sim(w, "performance");
    assert!(s.run_until_exited(S));
    let m = marks(&s);
    m[1].0 - m[0].0
}

#[test]
fn perf_model_times_follow_the_formula() {
    // plain run: w * 1024 * fmax / (cap * f): 1 ms on big at 2 GHz, 2 ms on little at 1 GHz
    assert_eq!(run_time(Value::Null, 2), 1 * MS);
    assert_eq!(run_time(Value::Null, 0), 2 * MS);
    // the default model is the plain one (u_little = 512 * 2 GHz / (1024 * 1 GHz) = 1)
    assert_eq!(run_time(json!({}), 0), 2 * MS);
    // mem_frac 0.5 on little: w * (0.5 * F / (u f) + 0.5) = 1 ms * (0.5 * 2 + 0.5) = 1.5 ms
    let t = run_time(json!({"mem_frac": 0.5}), 0);
    assert!(t.abs_diff(1_500 * US) <= 1, "{t}");
    // on big at F the memory-bound part changes nothing: 1 ms
    assert!(run_time(json!({"mem_frac": 0.5}), 2).abs_diff(1 * MS) <= 1);
    // an explicit IPC ratio of 0.5 on little: w * F / (0.5 f) = 4 ms
    assert!(run_time(json!({"ipc": [0.5, 1.0]}), 0).abs_diff(4 * MS) <= 1);
}

#[test]
fn memrun_takes_the_same_time_on_every_core() {
    for cpu in [0, 2] {
        let w = json!({"tasks": [task("t", &[cpu], 1, json!([{"mark": 0}, {"memrun": 3 * MS}, {"mark": 0}]))],
                       "marks": ["m"]});
        let mut s = sim(w, "powersave");
        assert!(s.run_until_exited(S));
        let m = marks(&s);
        assert_eq!(m[1].0 - m[0].0, 3 * MS, "cpu{cpu}");
    }
}

#[test]
fn a_migration_runs_the_cache_footprint_cold() {
    // 2 ms cold footprint, cold work 2x slower. Phase on CPU 2, then CPU 3 (same cluster:
    // half the footprint cold, +1 ms), then CPU 0 (another cluster: all of it, and little
    // at 1 GHz takes 2 ns per unit: 2 ms cold x 2 x 2 + 3 ms warm x 2 = 14 ms).
    let ev = |cpus: Value| json!([{"setattr": {"cpus": cpus}}, {"mark": 0}, {"run": 5 * MS}, {"mark": 0}]);
    let mut events = Vec::new();
    for c in [json!([2]), json!([3]), json!([0])] {
        events.extend(ev(c).as_array().unwrap().clone());
    }
    let mut t = task("t", &[2], 1, Value::Array(events));
    t["perf"] = json!({"cache_ns": 2 * MS, "cache_slowdown": 1.0});
    let mut s = sim(json!({"tasks": [t], "marks": ["m"]}), "performance");
    assert!(s.run_until_exited(S));
    let m = marks(&s);
    let d: Vec<u64> = m.chunks(2).map(|p| p[1].0 - p[0].0).collect();
    assert_eq!(d[0], 5 * MS, "first run: nothing to migrate from");
    assert!(d[1].abs_diff(6 * MS) <= 2, "{d:?}");
    assert!(d[2].abs_diff(14 * MS) <= 2, "{d:?}");
}

// ---------------------------------------------------------------- synchronisation

#[test]
fn the_result_text_writes_the_marks_as_the_result_holds_them() {
    // result_json() writes the marks from the run's list, not from a JSON tree of them
    let t = |cpu: usize| {
        task(
            &format!("t{cpu}"),
            &[cpu],
            3,
            json!([{"mark": 0}, {"run": MS}, {"mark": 1}]),
        )
    };
    let w = json!({"marks": ["in", "out"], "tasks": [t(2), t(3), t(0)]});
    let mut s = sim(w, "schedutil");
    assert!(s.run_until_exited(S));
    let m = marks(&s);
    assert_eq!(m.len(), 18);
    let doc = s.result();
    assert_eq!(doc["marks"][17], json!([m[17].0, m[17].1, m[17].2]));
    assert_eq!(s.result_json(), doc.to_string());
}

#[test]
fn a_mutex_serialises_critical_sections_in_fifo_order() {
    // three tasks on three CPUs contend for one lock; each holds it for 1 ms of work on
    // big at 2 GHz (performance) = 1 ms. Sections never overlap and follow arrival order.
    let cs = |cpu: usize| {
        task(
            &format!("t{cpu}"),
            &[cpu],
            1,
            json!([{"lock": 0}, {"mark": 0}, {"run": 1 * MS}, {"mark": 1}, {"unlock": 0}]),
        )
    };
    let w = json!({"mutexes": 1, "marks": ["in", "out"], "tasks": [cs(2), cs(3), cs(1)]});
    let mut s = sim(w, "performance");
    assert!(s.run_until_exited(S));
    let m = marks(&s);
    assert_eq!(m.len(), 6);
    let mut last_out = 0;
    for p in m.chunks(2) {
        assert_eq!(
            (p[0].2, p[1].2, p[0].1),
            (0, 1, p[1].1),
            "in/out pairs of one task: {m:?}"
        );
        assert!(p[0].0 >= last_out, "overlap: {m:?}");
        last_out = p[1].0;
    }
    // the big CPUs' tasks run 1 ms each; the little one 2 ms (1 GHz, capacity 512)
    assert_eq!(m.iter().map(|x| x.1).collect::<Vec<_>>(), vec![0, 0, 1, 1, 2, 2]);
    assert_eq!(m[1].0 - m[0].0, 1 * MS);
    assert_eq!(m[5].0 - m[4].0, 2 * MS);
    assert_eq!(s.sync.misuse, 0);
}

#[test]
fn semaphores_remember_posts_and_wake_the_waiter() {
    // producer posts 5 times, 1 ms apart; consumer waits 5 times and marks each wakeup.
    let w = json!({"sems": [0], "marks": ["got"], "tasks": [
        task("prod", &[2], 5, json!([{"run": 1 * MS}, {"sem_post": 0}])),
        task("cons", &[3], 5, json!([{"sem_wait": 0}, {"mark": 0}])),
    ]});
    let mut s = sim(w, "performance");
    assert!(s.run_until_exited(S));
    let m = marks(&s);
    assert_eq!(m.len(), 5);
    for (k, x) in m.iter().enumerate() {
        // post k at (k+1) ms; the consumer's CPU leaves WFI (1 µs) and runs it
        let post = (k as u64 + 1) * MS;
        assert!(x.0 >= post && x.0 <= post + 10 * US, "{m:?}");
    }
}

#[test]
fn a_barrier_releases_everyone_when_the_last_arrives() {
    let w = json!({"barriers": [3], "marks": ["out"], "tasks": [
        task("a", &[2], 1, json!([{"run": 1 * MS}, {"barrier": 0}, {"mark": 0}])),
        task("b", &[3], 1, json!([{"run": 2 * MS}, {"barrier": 0}, {"mark": 0}])),
        task("c", &[1], 1, json!([{"run": 1 * MS}, {"barrier": 0}, {"mark": 0}])),
    ]});
    let mut s = sim(w, "performance");
    assert!(s.run_until_exited(S));
    let m = marks(&s);
    assert_eq!(m.len(), 3);
    // the last arrives at 2.5 ms: c's 1 ms of work takes 2 ms on little at 1 GHz, after
    // its cluster leaves cluster-sleep (exit 500 µs); a and b leave WFI (1 µs) after that
    assert_eq!((m[0].0, m[0].1), (2_500 * US, 2));
    for x in &m[1..] {
        assert_eq!(x.0, 2_500 * US + 1 * US, "{m:?}");
    }
}

#[test]
fn condition_ping_pong_alternates() {
    // rt-app's suspend/resume lowered: each waits on its own cond, resumes the other's.
    // a: run 1 ms, resume b, suspend; b: suspend first, then run 1 ms, resume a.
    let resume = |c: u32| json!([{"lock": c}, {"broad": c}, {"unlock": c}]);
    let suspend = |c: u32| json!([{"lock": c}, {"wait": {"cond": c, "mutex": c}}, {"unlock": c}]);
    let cat = |xs: Vec<Value>| Value::Array(xs.into_iter().flat_map(|x| x.as_array().unwrap().clone()).collect());
    let a = cat(vec![json!([{"run": 1 * MS}, {"mark": 0}]), resume(1), suspend(0)]);
    let b = cat(vec![suspend(1), json!([{"run": 1 * MS}, {"mark": 1}]), resume(0)]);
    let w = json!({"mutexes": 2, "conds": 2, "marks": ["a", "b"], "duration_ns": null,
                   "tasks": [task("a", &[2], 4, a), task("b", &[3], 4, b)]});
    let mut s = sim(w, "performance");
    s.run_until(20 * MS);
    let m = marks(&s);
    assert!(m.len() >= 7, "{m:?}");
    for (k, x) in m.iter().enumerate() {
        assert_eq!(x.2, (k % 2) as u32, "strict alternation: {m:?}");
        let at = (k as u64 + 1) * MS;
        assert!(x.0 >= at && x.0 <= at + 10 * US * (k as u64 + 1), "{m:?}");
    }
}

#[test]
fn fork_starts_named_copies_of_a_template() {
    let mut tmpl = task("worker", &[2, 3], 1, json!([{"run": 1 * MS}]));
    tmpl["start"] = json!(false);
    let w = json!({"tasks": [tmpl, task("parent", &[1], 3, json!([{"fork": 0}, {"sleep": 5 * MS}]))]});
    let mut s = sim(w, "performance");
    assert!(s.run_until_exited(S));
    let names: Vec<&str> = s.tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        vec!["worker", "parent", "worker-0000", "worker-0001", "worker-0002"]
    );
    assert_eq!(s.tasks[0].state, TaskState::Template);
    for t in &s.tasks[2..] {
        assert_eq!(t.state, TaskState::Exited);
        assert_eq!(t.stats.work_completed, 1 * MS);
    }
}

#[test]
fn yield_lets_the_other_fair_task_go_first() {
    // both on CPU 2: a runs 1 ms, then yields (or not) before its mark; b arrives at
    // 100 µs behind a in vruntime (START_DEBIT), so it does not preempt, and marks as soon
    // as it runs
    for (yield_, a_first) in [(true, false), (false, true)] {
        let between = if yield_ {
            json!({"yield": null})
        } else {
            json!({"run": 0})
        };
        let mut b = task("b", &[2], 1, json!([{"mark": 1}, {"run": 1 * MS}]));
        b["delay_ns"] = json!(100 * US);
        let w = json!({"marks": ["a", "b"], "tasks": [
            task("a", &[2], 1, json!([{"run": 1 * MS}, between, {"mark": 0}, {"run": 1 * MS}])),
            b,
        ]});
        let mut s = sim(w, "performance");
        assert!(s.run_until_exited(S));
        let m = marks(&s);
        assert_eq!(m[0].2 == 0, a_first, "yield={yield_}: {m:?}");
    }
}

#[test]
fn iowait_is_a_sleep_counted_as_io() {
    let w = json!({"tasks": [task("io", &[2], 4, json!([{"run": 1 * MS}, {"iowait": 3 * MS}]))]});
    let mut s = sim(w, "performance");
    assert!(s.run_until_exited(S));
    assert_eq!(s.tasks[0].stats.iowait_ns, 12 * MS);
    // plus five exits from WFI (1 µs): the start and each I/O completion
    assert_eq!(s.now, 16 * MS + 5 * US);
}

#[test]
fn setattr_to_fifo_preempts_a_fair_task() {
    // b (fair) hogs CPU 2; a (fair) on CPU 2 turns itself SCHED_FIFO: from then on it
    // runs its 5 ms in one go (no fair sharing)
    let w = json!({"marks": ["go", "done"], "tasks": [
        task("a", &[2], 1, json!([{"setattr": {"policy": "fifo", "rt_priority": 10}}, {"mark": 0}, {"run": 5 * MS}, {"mark": 1}])),
        task("b", &[2], 1, json!([{"run": 50 * MS}])),
    ]});
    let mut s = sim(w, "performance");
    assert!(s.run_until_exited(S));
    let m = marks(&s);
    assert_eq!(m[1].0 - m[0].0, 5 * MS, "{m:?}");
    assert_eq!(s.tasks[0].policy, hetsched_core::workload::Policy::Fifo);
}

#[test]
fn a_deadline_task_gets_its_bandwidth_beside_a_hog() {
    // runtime 2 ms every 10 ms on big at f_max (runtime scale 1): 20 % of the CPU, the fair
    // hog the rest; throttling at the tick overruns, but replenishment repays the overrun.
    let mut dl = task("dl", &[2], -1, json!([{"run": 100 * MS}]));
    dl["policy"] = json!("deadline");
    dl["dl_runtime_ns"] = json!(2 * MS);
    dl["dl_period_ns"] = json!(10 * MS);
    let hog = task("hog", &[2], -1, json!([{"run": 100 * MS}]));
    let mut s = sim(json!({"tasks": [dl, hog]}), "performance");
    s.run_until(1 * S);
    let dl_time = s.tasks[0].stats.cpu_time_ns[2] as f64 / S as f64;
    assert!((dl_time - 0.2).abs() < 0.01, "{dl_time}");
    // enforced at the 4-ms tick, a 2-ms budget may overrun to -2 ms and take two periods
    // to repay: between one throttle per period and one per two periods
    let n = s.tasks[0].stats.dl_throttled;
    assert!((50..=100).contains(&n), "{n}");
}

#[test]
fn per_phase_statistics_count_loops_and_activations() {
    let t = json!({"name": "p", "cpus": [2], "loop": 1, "phases": [
        {"loop": 5, "events": [{"run": 1 * MS}, {"timer": {"id": 0, "period_ns": 10 * MS}}]},
        {"loop": 3, "events": [{"run": 4 * MS}, {"timer": {"id": 0, "period_ns": 5 * MS}}]},
    ]});
    let mut s = sim(json!({"timers": 1, "tasks": [t]}), "performance");
    assert!(s.run_until_exited(S));
    let ph = &s.tasks[0].stats.phases;
    assert_eq!((ph[0].loops, ph[0].activations), (5, 5));
    assert_eq!((ph[1].loops, ph[1].activations), (3, 3));
    // phase 0: each 1 ms run ends 9 ms before its 10-ms deadline, the first one 1 µs
    // less (the CPU left WFI at the start)
    assert_eq!(ph[0].slack_min_ns, Some((9 * MS - 1 * US) as i64));
    assert_eq!(ph[0].run_ns, 5 * MS);
    assert_eq!(ph[1].run_ns, 12 * MS);
    // phase 1: 4 ms in 5 ms periods, 1 ms slack each, less the 1 µs the phase started late
    // (the timer's schedule carries on from phase 0's last expiry at 50 ms)
    assert_eq!(ph[1].slack_min_ns, Some((1 * MS - 1 * US) as i64));
}

#[test]
fn a_custom_slice_sets_the_eevdf_request() {
    // two hogs on one CPU under EEVDF, one with a 12 ms custom slice: each runs its whole
    // slice before the other gets the CPU, so the slices show as context-switch counts
    let mk = |slice: Option<u64>| {
        let mut t = task("h", &[2], -1, json!([{"run": 100 * MS}]));
        if let Some(sl) = slice {
            t["slice_ns"] = json!(sl);
        }
        t
    };
    let switches = |slice: Option<u64>| {
        let mut s = sim_knobs(
            json!({"tasks": [mk(slice), mk(slice)]}),
            "performance",
            json!({"fair.eevdf": 1.0}),
        );
        s.run_until(1 * S);
        s.counters.context_switches
    };
    let (base, long) = (switches(None), switches(Some(12 * MS)));
    assert!(
        long * 2 < base,
        "a 12 ms slice must switch far less than the base slice: {long} vs {base}"
    );
}

// ---------------------------------------------------------------- invariants under stress

mod stress {
    use super::*;
    use hetsched_core::testutils::three_cluster_platform;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    struct Stage {
        run_us: u64,
        locked: bool,
        yield_: bool,
        io_us: u64,
        setattr: u8,
        perf: bool,
    }

    fn stage() -> impl Strategy<Value = Stage> {
        (
            10u64..3000,
            any::<bool>(),
            any::<bool>(),
            prop_oneof![Just(0u64), 10u64..2000],
            0u8..5,
            any::<bool>(),
        )
            .prop_map(|(run_us, locked, yield_, io_us, setattr, perf)| Stage {
                run_us,
                locked,
                yield_,
                io_us,
                setattr,
                perf,
            })
    }

    /// A token ring of stages (each waits for its semaphore, runs, maybe under a shared
    /// lock, maybe yields, sleeps in I/O or changes its attributes, then posts the next
    /// stage's semaphore), a barrier all stages meet at each round, a parent forking a
    /// template, and optionally a deadline hog: the invariants hold after every event and
    /// the token keeps going round.
    fn ring(stages: &[Stage], n_cpus: usize, dl: bool) -> Value {
        let k = stages.len();
        let mut tasks = Vec::new();
        for (i, s) in stages.iter().enumerate() {
            let mut ev = vec![json!({"sem_wait": i})];
            if s.locked {
                ev.push(json!({"lock": 0}));
            }
            ev.push(json!({"run": s.run_us * US}));
            if s.locked {
                ev.push(json!({"unlock": 0}));
            }
            if s.yield_ {
                ev.push(json!({"yield": null}));
            }
            if s.io_us > 0 {
                ev.push(json!({"iowait": s.io_us * US}));
            }
            match s.setattr {
                1 => ev.push(json!({"setattr": {"nice": (i as i32 % 7) - 3}})),
                2 => ev.push(json!({"setattr": {"cpus": [i % n_cpus]}})),
                3 => ev.push(json!({"setattr": {"cpus": null, "util_min": 300}})),
                4 => {
                    ev.push(json!({"setattr": {"policy": if i % 2 == 0 { "fifo" } else { "other" }, "rt_priority": 5}}))
                }
                _ => {}
            }
            ev.push(json!({"sem_post": (i + 1) % k}));
            ev.push(json!({"mark": 0}));
            ev.push(json!({"barrier": 0}));
            let mut t = task(&format!("s{i}"), &(0..n_cpus).collect::<Vec<_>>(), -1, Value::Array(ev));
            if s.perf {
                t["perf"] = json!({"ipc_exp": 0.7, "mem_frac": 0.2, "cache_ns": 200 * US, "cache_slowdown": 0.5});
            }
            tasks.push(t);
        }
        let mut tmpl = task(
            "child",
            &[0],
            1,
            json!([{"run": 300 * US}, {"sleep": 100 * US}, {"run": 100 * US}]),
        );
        tmpl["start"] = json!(false);
        tasks.push(tmpl);
        tasks.push(task(
            "parent",
            &[n_cpus - 1],
            -1,
            json!([{"fork": k}, {"sleep": 7 * MS}]),
        ));
        if dl {
            let mut d = task("dl", &[n_cpus - 1], -1, json!([{"run": 5 * MS}, {"sleep": 2 * MS}]));
            d["policy"] = json!("deadline");
            d["dl_runtime_ns"] = json!(1 * MS);
            d["dl_period_ns"] = json!(4 * MS);
            tasks.push(d);
        }
        let mut sems = vec![0u64; k];
        sems[0] = 1;
        json!({"tasks": tasks, "sems": sems, "mutexes": 1, "barriers": [k], "marks": ["round"]})
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

        #[test]
        fn token_rings_keep_invariants_and_progress(
            stages in proptest::collection::vec(stage(), 1..7),
            three in any::<bool>(),
            gov in 0usize..hetsched_core::cpufreq::GOVERNORS.len(),
            eevdf in any::<bool>(),
            sched in 0usize..6,
            hps in any::<bool>(),
            vendor in 0usize..6,
            dl in any::<bool>(),
        ) {
            let (p, n) = if three { (three_cluster_platform(), 8) } else { (two_cluster_platform(), 4) };
            let w = ring(&stages, n, dl);
            // the studies' schedulers too, with hotplug and the vendor knobs on eas
            let scheduler = ["cfs", "eas", "fa-cfs", "hcs-balance", "gts", "hcs-td"][sched];
            // a policy that requires a fair class (fa-cfs, hcs-balance: CFS) runs it
            let eevdf = match hetsched_core::policies::lookup(scheduler).unwrap().requires.fair {
                Some((variant, _)) => variant == hetsched_core::policies::FairVariant::Eevdf,
                None => eevdf,
            };
            let mut knobs = json!({"fair.eevdf": if eevdf { 1.0 } else { 0.0 }, "hotplug.hps": if hps { 1.0 } else { 0.0 }});
            let vk = ["vendor.cpu_isolation", "vendor.migration_margins", "vendor.task_packing",
                      "vendor.prev_cpu_fastpath", "vendor.rt_placement"];
            if scheduler == "eas" && vendor < vk.len() {
                knobs[vk[vendor]] = json!(1.0);
            }
            let pol: PolicyConfig = serde_json::from_value(json!({
                "scheduler": scheduler,
                "governor": hetsched_core::cpufreq::GOVERNORS[gov].0,
                "knobs": knobs
            })).unwrap();
            let mut sim = Sim::new(p, WorkloadSpec::from_json(&w.to_string()).unwrap(), pol).unwrap();
            let t_end = 150 * MS;
            let mut events = 0u64;
            while let Some(t) = sim.events.peek_time() {
                if t >= t_end {
                    break;
                }
                sim.step();
                events += 1;
                prop_assert!(events < 500_000, "no progress: {} events by t={}", events, sim.now);
                sim.check_invariants().map_err(TestCaseError::fail)?;
            }
            // each round costs at most k * (3 ms of work at the slowest CPU + 2 ms of I/O)
            // + the fork's and the DL task's interference; in 150 ms some must complete
            prop_assert!(sim.marks.len() >= stages.len(), "token stuck: {} marks", sim.marks.len());
            prop_assert_eq!(sim.sync.misuse, 0);
        }
    }
}

// ---------------------------------------------------------------- daemon tasks

#[test]
fn a_run_until_exit_does_not_wait_for_daemons() {
    // the worker: 3 x (1 ms on big at 2 GHz, then 1 ms asleep); the daemon beside it loops
    // forever, and forks copies of a daemon template, which are daemons too
    let worker = task("w", &[2], 3, json!([{"run": 1 * MS}, {"sleep": 1 * MS}]));
    let mut d = task(
        "d",
        &[3],
        -1,
        json!([{"fork": 2}, {"run": 100 * US}, {"sleep": 2 * MS}]),
    );
    d["daemon"] = json!(true);
    let mut tmpl = task("t", &[0], -1, json!([{"run": 10 * US}, {"sleep": 1 * MS}]));
    tmpl["daemon"] = json!(true);
    tmpl["start"] = json!(false);
    let w = json!({"tasks": [worker, d, tmpl]});
    let mut s = sim(w.clone(), "performance");
    assert!(s.workload_is_finite());
    assert!(s.run_until_exited(S));
    // 3 x (1 ms run + 1 ms sleep), and CPU 2 leaves WFI (1 us) at the start and after each
    // sleep: the worker's program ends at 6 ms + 4 us, and the run with it
    assert_eq!(s.now, 6 * MS + 4 * US);
    assert!(s.tasks.len() > 3, "the daemon forked");
    // daemons alone never end: the run is not finite
    let mut daemon = w["tasks"][1].clone();
    daemon["phases"][0]["events"][0] = json!({"fork": 1});
    let only = json!({"tasks": [daemon, w["tasks"][2].clone()]});
    let s = sim(only, "performance");
    assert!(!s.workload_is_finite());
}
