//! hcs-td, paper 004 §5's TD(0) benefit-function scheduler. Expected values are
//! worked out by hand from eq. 3-5 and Def. 2 / 4A, never read back from the engine.

use hetsched_core::platform::{ClusterSpec, OppSpec, PlatformSpec};
use hetsched_core::policies::hcs_td::{
    self, benefit, cab_system, phi, rtf_system, state, td_update, HcsTd, HcsTdPolicy, Params, Thread, NB,
};
use hetsched_core::testutils::idle;
use hetsched_core::{Platform, PolicyConfig, Sim, WorkloadSpec};
use serde_json::{json, Value};

const MS: u64 = 1_000_000;

fn params(a: f64, b: f64, f: f64) -> Params {
    Params {
        gamma: 0.9,
        alpha0: 1.0,
        a,
        b,
        eps: 0.05,
        f,
        latency_ns: 12 * MS,
        min_gran_ns: 1_500_000,
        nr_latency: 8,
    }
}

/// A thread on `cpu` of two cores; `ran` its run time so far on each.
fn th(task: u32, cpu: usize, movable: bool, ncp: [f64; 2], ran: [u64; 2]) -> Thread {
    Thread {
        task,
        cpu,
        weight: 1024,
        movable,
        allowed: 0b11,
        ncp: ncp.to_vec(),
        aff: vec![cpu == 0, cpu == 1],
        miss: 0.25,
        ran_ns: ran.to_vec(),
    }
}

#[test]
fn state_and_benefit_by_hand() {
    let ts = [th(0, 0, false, [1.0, 0.5], [0, 0]), th(1, 0, true, [1.0, 0.25], [0, 0])];
    let assign = [0, 0];
    // core 0: ncp (1 + 1)/2 = 1, aff 1, miss 0.25; core 1: no threads
    assert_eq!(state(&ts, &assign, 0), Some([1.0, 1.0, 0.25]));
    assert_eq!(state(&ts, &assign, 1), None);
    let p = [0.5, 1.0, 2.0, -4.0, 1.0];
    // B = 0.5 + 1 + 2 - 1 + 0.75 = 3.25; an empty core has phi = 0, B = 0
    assert_eq!(benefit(&p, &phi(state(&ts, &assign, 0))), 3.25);
    assert_eq!(benefit(&p, &phi(None)), 0.0);
    // thread 1 moved to core 1: ncp 0.25, aff 0 there
    assert_eq!(state(&ts, &[0, 1], 1), Some([0.25, 0.0, 0.25]));
}

#[test]
fn eq4_takes_the_migration_exactly_when_the_inequality_holds() {
    // Both threads on core 0 with long equal run times on both cores (CAB_J ~ 0 whatever
    // the next slice) and F = 100 (every slowdown within F): D_CAB = D_RTF = 0. p^0 = 0,
    // p^1 = (beta, 0, ...): B_{0,0} = B_{0,k-} = 0, B_{1,0} = 0 (empty), B_{1,k+} = beta.
    // Eq. 4: migrate iff beta > 0 (strictly).
    let long = 1_000_000 * MS;
    let ts = [
        th(0, 0, false, [1.0, 0.5], [long, long]),
        th(1, 0, true, [1.0, 0.5], [long, long]),
    ];
    let decide = |beta: f64, pr: Params| {
        let mut td = HcsTd::new(2, 2, pr);
        td.p[1][0] = beta;
        td.choose(&ts, 2)
    };
    let pr = params(-1.0, -1.0, 100.0);
    let c = decide(1e-9, pr).expect("beta > 0 migrates");
    assert_eq!((c.k, c.src, c.dst), (1, 0, 1));
    assert!((c.margin - 1e-9).abs() < 1e-15);
    assert!(decide(0.0, pr).is_none(), "equality does not migrate");
    assert!(decide(-1e-9, pr).is_none());
    // F = 1.5: before, both threads share core 0 (S = 2 > F, RTF 0); after, each is alone
    // (S = 1, RTF 1): D_RTF = +1, D_CAB = 0; eq. 4: beta > b * 1.
    let pr = params(0.0, -1.0, 1.5);
    assert!(decide(-0.999, pr).is_some());
    assert!(decide(-1.0, pr).is_none());
    let pr = params(0.0, -0.5, 1.5);
    assert!(decide(-0.499, pr).is_some());
    assert!(decide(-0.5, pr).is_none());
    // the thread running (not movable) is never chosen, nor a core outside its mask
    let mut pinned = ts.clone();
    pinned[1].allowed = 0b01;
    let mut td = HcsTd::new(2, 2, params(-1.0, -1.0, 100.0));
    td.p[1][0] = 1.0;
    assert!(td.choose(&pinned, 2).is_none());
}

#[test]
fn d_cab_and_d_rtf_by_hand() {
    // Thread 0 ran 10 ms on core 0 only, thread 1 90 ms on core 0 and 90 on core 1; both on
    // core 0: each next slice = 12 ms x 1/2 = 6 ms. Thread 0: fractions (1, 0), CAB_J 0.5.
    // Thread 1: (96, 90)/186, CAB_J = |96/186 - 1/2| = 0.0161 <= 0.05. CAB = 1/2.
    let pr = params(-1.0, -1.0, 0.0);
    let ts = [
        th(0, 0, false, [1.0, 0.5], [10 * MS, 0]),
        th(1, 0, true, [1.0, 0.5], [90 * MS, 90 * MS]),
    ];
    assert_eq!(cab_system(&ts, &[0, 0], 2, &pr), 0.5);
    // thread 1 to core 1: slices 12 ms each; thread 1 (90, 102)/192: CAB_J 0.03125; still 1/2
    assert_eq!(cab_system(&ts, &[0, 1], 2, &pr), 0.5);
    // F auto = 1.1 x 2 / 2 = 1.1: shared core S = 2 (RTF 0); alone S = 1 (RTF 1)
    assert_eq!(rtf_system(&ts, &[0, 0], 2, &pr), 0.0);
    assert_eq!(rtf_system(&ts, &[0, 1], 2, &pr), 1.0);
    // a nice-5 thread (weight 335) beside a nice-0 one: S = 1359/335 = 4.06 and 1359/1024
    let mut ts2 = ts.clone();
    ts2[0].weight = 335;
    assert_eq!(rtf_system(&ts2, &[0, 0], 2, &params(0.0, 0.0, 4.0)), 0.5);
}

#[test]
fn td0_learning_rate_is_one_over_t() {
    // One core, phi_t from a state (ncp 1, aff 0, miss 0) = (1, 1, 0, 0, 0).
    // Step 1 (alpha 1): r = 0.8 (8 ms of work in 10 ms), s_next = s_t: delta = 0.8 + 0 - 0;
    // p = 0.8 phi = (0.8, 0.8, 0, 0, 0), B(s) = 1.6.
    // Step 2 (alpha 1/2): r = 0.5: delta = 0.5 + 0.9 x 1.6 - 1.6 = 0.34; p += 0.17 phi.
    let mut td = HcsTd::new(1, 1, params(-1.0, -1.0, 0.0));
    let f = phi(Some([1.0, 0.0, 0.0]));
    td.learn(0, &[f]); // no previous decision: no step
    assert_eq!(td.updates, vec![0]);
    td.mark(0, vec![f]);
    td.work[0] += 8 * MS;
    td.learn(10 * MS, &[f]);
    td.mark(10 * MS, vec![f]);
    assert_eq!(td.updates, vec![1]);
    for n in 0..NB {
        assert!((td.p[0][n] - [0.8, 0.8, 0.0, 0.0, 0.0][n]).abs() < 1e-12, "{:?}", td.p);
    }
    td.work[0] += 5 * MS;
    td.learn(20 * MS, &[f]);
    for n in 0..NB {
        assert!(
            (td.p[0][n] - [0.97, 0.97, 0.0, 0.0, 0.0][n]).abs() < 1e-12,
            "{:?}",
            td.p
        );
    }
    // the free function: the same step
    let mut p = [0.8, 0.8, 0.0, 0.0, 0.0];
    td_update(&mut p, 0.5, 0.9, 0.5, &f, &f);
    assert!((p[0] - 0.97).abs() < 1e-12);
}

/// The paper's heterogeneous setup: one core type, CPU 0 at 2.8 GHz (capacity 1024), CPU 1
/// at 1.05 GHz (capacity 384).
fn hetero2() -> Platform {
    let cl = |name: &str, cpu: usize, cap: u64, khz: u64| ClusterSpec {
        name: name.into(),
        cpus: vec![cpu],
        capacity_orig: cap,
        opps: vec![OppSpec {
            khz,
            power_uw: khz / 100,
            cluster_power_uw: 0,
        }],
        idle_states: vec![idle("WFI", hetsched_core::platform::IdleLevel::Cpu, 1, 1, 1, 0)],
        context_switch_ns: None,
    };
    Platform::from_spec(PlatformSpec {
        name: "test-hetero2".into(),
        power_model: "dt".into(),
        clusters: vec![cl("fast", 0, 1024, 2_800_000), cl("slow", 1, 384, 1_050_000)],
        switcher: false,
        idle_domains: vec![],
        shared_llc: false,
        device_init: None,
    })
    .unwrap()
}

/// Eight CPU hogs, half compute-bound and half memory-bound (perf models).
fn hogs(scheduler: &str, knobs: Value) -> Sim {
    let tasks: Vec<Value> = (0..8)
        .map(|i| {
            let (mem, ipc) = if i % 2 == 0 { (0.02, 1.2) } else { (0.5, 0.7) };
            json!({"name": format!("j{i}"), "loop": 1,
                   "perf": {"ipc_exp": ipc, "mem_frac": mem, "cache_ns": 400_000, "cache_slowdown": 0.3},
                   "phases": [{"loop": 1, "events": [{"run": 100_000 * MS}]}]})
        })
        .collect();
    let w = json!({"name": "t", "duration_ns": null, "timers": 0, "tasks": tasks});
    let mut k = json!({"tick_hz": 1000.0});
    for (a, b) in knobs.as_object().unwrap() {
        k[a] = b.clone();
    }
    let pol: PolicyConfig =
        serde_json::from_value(json!({"scheduler": scheduler, "governor": "performance", "knobs": k})).unwrap();
    Sim::new(hetero2(), WorkloadSpec::from_json(&w.to_string()).unwrap(), pol).unwrap()
}

#[test]
fn hcs_td_decides_every_interval_learns_and_differs_from_cfs() {
    let mut td = hogs("hcs-td", json!({}));
    td.run_until(2_000 * MS);
    let l = &td.policy_state::<HcsTdPolicy>().unwrap().td;
    // a decision at the first tick at or after each 10 ms (1 ms ticks, CPUs always busy):
    // t = 1 ms (the first tick), then every 10 ms up to 2 s
    assert!((199..=201).contains(&l.decisions), "{}", l.decisions);
    assert_eq!(l.updates, vec![l.decisions - 1; 2]);
    assert!(l.migrations > 0 && l.migrations <= l.decisions);
    assert!(l.p.iter().flatten().all(|v| v.is_finite()));
    assert!(l.p.iter().any(|p| p.iter().any(|&v| v != 0.0)), "learned nothing");
    // the per-CPU instruction counters hcs-td reads at each decision (Rq::work_done) sum to
    // the tasks' work, and the learner's copy is the one of its last decision
    let work: u64 = td.tasks.iter().map(|t| t.stats.work_done).sum();
    assert_eq!(td.rqs.iter().map(|rq| rq.work_done).sum::<u64>(), work);
    assert!(l.work.iter().sum::<u64>() <= work && l.work.iter().sum::<u64>() > 0);
    let r = td.result();
    assert_eq!(r["counters"]["policy"]["migrations"], json!(l.migrations));
    assert_eq!(r["counters"]["policy"]["p"].as_array().unwrap().len(), 2);
    let mut cfs = hogs("cfs", json!({}));
    cfs.run_until(2_000 * MS);
    assert_ne!(cfs.result()["tasks"], r["tasks"]);
    assert!(cfs.result()["counters"]["policy"].get("p").is_none());
    // deterministic
    let mut again = hogs("hcs-td", json!({}));
    again.run_until(2_000 * MS);
    assert_eq!(again.result()["tasks"], r["tasks"]);
    assert_eq!(again.result()["counters"]["policy"], r["counters"]["policy"]);
    // learn only: no migration, the same number of TD(0) steps
    let mut learn = hogs("hcs-td", json!({"hcs_td.max_migrations": 0.0}));
    learn.run_until(2_000 * MS);
    let l0 = &learn.policy_state::<HcsTdPolicy>().unwrap().td;
    assert_eq!(l0.migrations, 0);
    assert_eq!(l0.decisions, l.decisions);
}

#[test]
fn state_variables_read_from_the_engine() {
    // hetero2: one core type (u = 1), F / f = 2.8 / 1.05 on CPU 1, so a task of mem_frac m
    // runs 1 / ((1 - m) 8/3 + m) = 3 / (8 - 5 m) as fast there: NCP = (1, 3 / (8 - 5m)).
    let mut sim = hogs("hcs-td", json!({"hcs_td.max_migrations": 0.0}));
    sim.run_until(205 * MS);
    let view = hcs_td::threads(&sim);
    assert_eq!(view.len(), 8);
    for x in &view {
        let m = if x.task % 2 == 0 { 0.02 } else { 0.5 };
        assert_eq!(x.miss, m);
        assert!((x.ncp[0] - 1.0).abs() < 1e-9, "{x:?}");
        assert!((x.ncp[1] - 3.0 / (8.0 - 5.0 * m)).abs() < 1e-6, "{x:?}");
        assert_eq!(x.weight, 1024);
        // the running task is not a candidate, the queued ones are; it has affinity here
        let running = sim.tasks[x.task as usize].state == hetsched_core::TaskState::Running;
        assert_eq!(x.movable, !running);
        if running {
            assert!(x.aff[x.cpu]);
        }
        // affinity with a CPU it never ran on is 0
        for c in 0..2 {
            if sim.task_cpu_time(x.task as usize)[c] == 0 {
                assert!(!x.aff[c], "{x:?}");
            }
        }
    }
    // 8 tasks on 2 CPUs, slices of a few ms: every task has run within the last 30 ms on
    // its CPU, so each CPU's average affinity is 1 with rechoose_interval 30 ms; with 0
    // only the running task has affinity: 1 / n
    let assign: Vec<usize> = view.iter().map(|x| x.cpu).collect();
    for c in 0..2 {
        if let Some(s) = state(&view, &assign, c) {
            assert_eq!(s[1], 1.0, "cpu {c}: {view:?}");
        }
    }
    let mut sim0 = hogs(
        "hcs-td",
        json!({"hcs_td.max_migrations": 0.0, "hcs_td.rechoose_interval_ms": 0.0}),
    );
    sim0.run_until(205 * MS);
    let view = hcs_td::threads(&sim0);
    let assign: Vec<usize> = view.iter().map(|x| x.cpu).collect();
    for c in 0..2 {
        let n = assign.iter().filter(|&&a| a == c).count();
        if n > 0 {
            let running = sim0
                .tasks
                .iter()
                .any(|t| t.cpu == c && t.state == hetsched_core::TaskState::Running);
            let want = if running { 1.0 / n as f64 } else { 0.0 };
            assert_eq!(state(&view, &assign, c).unwrap()[1], want, "cpu {c}");
        }
    }
}
