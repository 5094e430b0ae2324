//! EEVDF as v6.12 runs it (the mainline-6.12 fair class): DELAY_DEQUEUE with DELAY_ZERO,
//! ttwu_runnable()'s in-place requeue, PREEMPT_SHORT, and the runnable PELT of a CPU that
//! holds a delayed task. Expected numbers are worked by hand from kernel/sched/fair.c
//! (v6.12) on the 2+2 testutils platform: 4 CPUs, so the base slice is
//! 0.75 ms x (1 + ilog2(4)) = 2.25 ms, a new task's first deadline half of it (1.125 ms,
//! PLACE_DEADLINE_INITIAL); big CPU 2 has capacity 1024 and runs at f_max under the
//! performance governor, so 1 ns of work is 1 ns of time and PELT time is wall time.

// quantities are written with their units: `1 * MS`
#![allow(clippy::identity_op)]

use hetsched_core::testutils::{costs_off, two_cluster_platform};
use hetsched_core::TaskState;
use hetsched_core::{PolicyConfig, Sim, WorkloadSpec};
use serde_json::{json, Value};

const MS: u64 = 1_000_000;
/// MIN_VRUNTIME_START: an empty cfs_rq's min_vruntime, where both tasks are placed
const M: u64 = 1 << 40;

fn sim(tasks: Vec<Value>, knobs: Value) -> Sim {
    let w = json!({"name": "t", "duration_ns": null, "timers": 0, "tasks": tasks});
    let pol: PolicyConfig =
        serde_json::from_value(json!({"scheduler": "cfs", "governor": "performance", "knobs": knobs})).unwrap();
    Sim::new(
        two_cluster_platform(),
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
        sim.check_invariants().unwrap_or_else(|e| panic!("{e}"));
    }
    sim.run_until(t_ns);
    sim.check_invariants().unwrap_or_else(|e| panic!("{e}"));
}

/// S runs 1.5 ms then sleeps `sleep_ns`; H is a hog; both pinned to CPU 2, HZ=100 so that
/// the first tick is at 10 ms.
fn pair(sleep_ns: u64, extra: Value) -> Sim {
    let s = json!({"name": "S", "cpus": [2], "loop": 1, "phases": [{"loop": 1, "events": [
        {"run": 3 * MS / 2}, {"sleep": sleep_ns}, {"run": 10_000 * MS}]}]});
    let h = json!({"name": "H", "cpus": [2], "loop": 1, "phases": [{"loop": 1, "events": [{"run": 10_000 * MS}]}]});
    let mut knobs = json!({"tick_hz": 100.0});
    for (k, v) in extra.as_object().unwrap() {
        knobs[k] = v.clone();
    }
    sim(vec![s, h], knobs)
}

/// Both tasks are placed at V = M (lag 0) with deadline M + 1.125 ms; the tie goes to S,
/// which runs from t0 (when CPU 2 is up) to t0 + 1.5 ms. At its sleep update_curr() finds
/// v_S = M + 1.5 ms past its deadline: a new one, M + 1.5 + 2.25 = M + 3.75 ms. Then
/// V = (v_S + v_H) / 2 = M + 0.75 ms < v_S: S is not eligible, so dequeue_entity() leaves it
/// queued (sched_delayed): CPU 2 still counts 2 fair tasks while H runs.
///
/// The tick at 10 ms: H has run 8.5 ms - t0, v_H = M + 8.5 ms - t0 is past its deadline
/// (M + 1.125 ms): new deadline, resched. pick_eevdf(): V = (v_H + v_S) / 2 >= v_S, S is
/// eligible with the earlier deadline (M + 3.75 ms against v_H + 2.25 ms), so
/// pick_next_entity() meets it and dequeues it for good. Its lag there is
/// V - v_S = (v_H - v_S) / 2 = (7 ms - t0) / 2 > 0 (within the clamp of 10 ms, a tick),
/// which DELAY_ZERO clips to 0; H is picked again.
#[test]
fn a_task_that_sleeps_ineligible_stays_queued_until_picked() {
    let mut sim = pair(20 * MS, json!({}));
    run_checked(&mut sim, 5 * MS);
    let (s, h) = (&sim.tasks[0], &sim.tasks[1]);
    // update_curr() at the sleep stamped exec_start: t0 + 1.5 ms
    let t0 = s.se.exec_start - 3 * MS / 2;
    assert!(t0 < 3 * MS, "CPU 2 up at {t0}");
    assert_eq!(s.state, TaskState::Sleeping);
    assert!(s.se.sched_delayed && s.se.on_rq);
    assert_eq!(s.se.vruntime, M + 3 * MS / 2);
    assert_eq!(s.se.deadline, M + 3 * MS / 2 + 9 * MS / 4);
    assert_eq!(h.state, TaskState::Running);
    assert_eq!(sim.rqs[2].cfs.nr_running, 2);
    assert_eq!(
        sim.rqs[2].nr_running(),
        2,
        "h_nr_running counts the delayed task (v6.12)"
    );
    assert_eq!(sim.counters.delayed_dequeues, 1);
    // the estimate left at the sleep (util_est_dequeue before the delay)
    assert_eq!(sim.rqs[2].cfs.util_est, h.se.avg.ewma());

    run_checked(&mut sim, 10 * MS + 1);
    let (s, h) = (&sim.tasks[0], &sim.tasks[1]);
    assert!(!s.se.on_rq && !s.se.sched_delayed, "dequeued at the pick");
    assert_eq!(
        s.se.vlag,
        0,
        "DELAY_ZERO: the lag (7 ms - t0)/2 = {} is clipped",
        (7 * MS - t0) / 2
    );
    assert_eq!(h.state, TaskState::Running);
    assert_eq!(h.se.vruntime, M + 17 * MS / 2 - t0);
    assert_eq!(sim.rqs[2].cfs.nr_running, 1);
    // without DELAY_DEQUEUE S leaves at its sleep with lag V - v_S = -0.75 ms
    let mut plain = pair(20 * MS, json!({"fair.delay_dequeue": 0.0}));
    run_checked(&mut plain, 5 * MS);
    assert!(!plain.tasks[0].se.on_rq);
    assert_eq!(plain.tasks[0].se.vlag, -(3 * MS as i64) / 4);
    assert_eq!(plain.rqs[2].nr_running(), 1);
}

/// S as above but waking after 1 ms, at t0 + 2.5 ms, still delayed: ttwu_runnable()
/// requeues it on CPU 2 (no select_task_rq(), no migration). Its lag then is negative
/// (V = (v_H + v_S)/2 with v_H <= M + 1 ms, so V - v_S <= -0.25 ms): DELAY_ZERO leaves it,
/// and S keeps v = M + 1.5 ms and deadline M + 3.75 ms. H (v_H = M + 1 ms <= V, picked at
/// t0 + 1.5 ms and protected by RUN_TO_PARITY) keeps the CPU; nothing looks again until
/// the tick at 10 ms renews H's deadline, and S (v_S < V, earlier deadline) runs: a
/// wakeup latency of 10 ms - (t0 + 2.5 ms).
#[test]
fn a_delayed_task_that_wakes_is_requeued_in_place() {
    let mut sim = pair(MS, json!({}));
    run_checked(&mut sim, 9 * MS);
    let (s, h) = (&sim.tasks[0], &sim.tasks[1]);
    let t0 = s.se.exec_start - 3 * MS / 2;
    assert_eq!(sim.counters.delayed_dequeues, 1);
    assert_eq!(sim.counters.delayed_requeues, 1);
    assert_eq!(s.state, TaskState::Runnable);
    assert!(s.se.on_rq && !s.se.sched_delayed);
    assert_eq!(s.se.vruntime, M + 3 * MS / 2);
    assert_eq!(s.se.deadline, M + 3 * MS / 2 + 9 * MS / 4);
    assert_eq!((s.cpu, s.stats.migrations), (2, 0));
    assert_eq!(h.state, TaskState::Running);
    assert_eq!(sim.rqs[2].cfs.util_est, h.se.avg.ewma() + s.se.avg.ewma());
    run_checked(&mut sim, 10 * MS + 1);
    let s = &sim.tasks[0];
    assert_eq!(s.state, TaskState::Running);
    assert_eq!(s.stats.wakeup_latency_ns.last(), Some(10 * MS - t0 - 5 * MS / 2));
}

/// The runnable PELT of CPU 2 with S delayed: from S's sleep at t_b = t0 + 1.5 ms to the
/// tick at 10 ms the cfs_rq's runnable input is h_nr_running - h_nr_delayed = 2 - 1 (v6.12.8,
/// "sched/eevdf: More PELT vs DELAYED_DEQUEUE"), as without DELAY_DEQUEUE; util (H running)
/// is the same: the delayed S adds nothing to its CPU's runnable signal. (Before that fix
/// the input was h_nr_running = 2, and the difference the step response of one more
/// runnable task over the window, 1024 (1 - y^n), about 1000 here.) S's own runnable does
/// not count while delayed either.
#[test]
fn a_delayed_task_does_not_keep_its_cpu_runnable() {
    let mut on = pair(20 * MS, json!({}));
    let mut off = pair(20 * MS, json!({"fair.delay_dequeue": 0.0}));
    run_checked(&mut on, 10 * MS + 1);
    run_checked(&mut off, 10 * MS + 1);
    let t_b = on.tasks[0].se.exec_start;
    assert_eq!(t_b, off.tasks[0].se.exec_start);
    let n = (10 * MS - t_b) as f64 / (1024.0 * 1024.0);
    let (a, b) = (&on.rqs[2].cfs.avg, &off.rqs[2].cfs.avg);
    let got = a.runnable_avg as f64 - b.runnable_avg as f64;
    assert!(
        got.abs() <= 8.0,
        "runnable {} - {} = {got}, want 0 (the delayed S is not runnable)",
        a.runnable_avg,
        b.runnable_avg
    );
    assert!(
        (a.util_avg as i64 - b.util_avg as i64).abs() <= 2,
        "util {} vs {}",
        a.util_avg,
        b.util_avg
    );
    // S itself, dequeued at 10 ms in `on` and last updated at its sleep in `off`: queued but
    // not runnable (se_runnable() is false for a delayed entity), its runnable decays by
    // y^n over the window while its load (weight 1024, on_rq) moves a fraction 1 - y^n of
    // the way to 1024
    let yn = 0.5f64.powf(n / 32.0);
    let (sa, sb) = (&on.tasks[0].se.avg, &off.tasks[0].se.avg);
    let want_r = sb.runnable_avg as f64 * yn;
    assert!(
        (sa.runnable_avg as f64 - want_r).abs() <= 3.0,
        "S runnable {} want {want_r:.1}",
        sa.runnable_avg
    );
    let want_l = sb.load_avg as f64 * yn + 1024.0 * (1.0 - yn);
    assert!(
        (sa.load_avg as f64 - want_l).abs() <= 3.0,
        "S load {} want {want_l:.1}",
        sa.load_avg
    );
}

/// PREEMPT_SHORT: two hogs share CPU 2 (HZ=250: with no HRTICK each runs a whole tick,
/// 4 ms, against its 2.25-ms slice, and a re-picked one is protected by RUN_TO_PARITY until
/// a tick renews its deadline); W asks for a 0.5 ms slice (sched_attr.sched_runtime) and
/// runs 0.1 ms every 7 ms. W wakes with lag >= 0 (DELAY_ZERO), so eligible, with deadline
/// V + 0.5 ms. When curr is protected and its deadline is later, do_preempt_short()
/// cancels the protection and pick_eevdf() returns W, which runs at once (costs are 0);
/// without PREEMPT_SHORT it waits for the tick that renews curr's deadline (at most 4 ms).
/// Either way W waits when the waiting hog, up to a tick behind, has the earlier deadline
/// (v + 2.25 ms < V + 0.5 ms): those wakeups are the same in both runs, so PREEMPT_SHORT
/// only adds immediate ones.
#[test]
fn a_shorter_slice_waker_cancels_curr_protection() {
    let hog =
        |n: &str| json!({"name": n, "cpus": [2], "loop": 1, "phases": [{"loop": 1, "events": [{"run": 10_000 * MS}]}]});
    let w = json!({"name": "W", "cpus": [2], "slice_ns": MS / 2, "loop": -1, "phases": [{"loop": 1, "events": [
        {"sleep": 7 * MS}, {"run": MS / 10}]}]});
    let mut at_once = [0u64; 2];
    for (i, short) in [1.0, 0.0].into_iter().enumerate() {
        let mut s = sim(
            vec![hog("H1"), hog("H2"), w.clone()],
            json!({"fair.preempt_short": short}),
        );
        run_checked(&mut s, 300 * MS);
        let lat = &s.tasks[2].stats.wakeup_latency_ns;
        assert!(lat.len() >= 40, "{}", lat.len());
        assert!(lat.max() <= Some(4 * MS), "{lat:?}");
        at_once[i] = lat.count_of(0);
        assert_eq!(s.counters.preempt_short > 0, short > 0.0, "{:?}", s.counters);
    }
    assert!(
        at_once[0] > at_once[1],
        "immediate wakeups with/without PREEMPT_SHORT: {at_once:?}"
    );
}
