//! WALT under the msm-4.14 profile, checked against values worked by hand from
//! msm-4.14 kernel/sched/walt.c: a task's demand from its window history
//! (WINDOW_STATS_MAX_RECENT_AVG over 5 windows), a new task's initial load (15 % of the
//! window), and a migration mid-window carrying the task's busy time to the other
//! frequency domain. Placement is fixed in advance so that only WALT is under test.

use hetsched_core::balance::LoadBalancer;
use hetsched_core::policies::{SchedPolicy, WakeKind};
use hetsched_core::testutils::{costs_off, two_cluster_platform};
use hetsched_core::{PolicyConfig, SchedView, Sim, TaskId, WorkloadSpec};
use serde_json::json;

const US: u64 = 1_000;
const MS: u64 = 1_000_000;
/// scale_demand(): demand / (sched_ravg_window >> 10) = demand / 19531 at 20 ms
const DIV: u64 = 20_000_000 >> 10;

/// A new task on `fork_to`, a woken one on `wake_to` (None: where it was); no balancing.
struct Fixed {
    fork_to: usize,
    wake_to: Option<usize>,
}

impl SchedPolicy for Fixed {
    fn placement(&self) -> &'static str {
        "fixed"
    }
    fn load_balancer(&self, _v: &SchedView) -> Option<Box<dyn LoadBalancer>> {
        None
    }
    fn select_task_rq(&mut self, _v: &SchedView, _p: TaskId, prev_cpu: usize, wake: WakeKind) -> usize {
        match wake {
            WakeKind::Fork => self.fork_to,
            WakeKind::Wakeup => self.wake_to.unwrap_or(prev_cpu),
        }
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// test-2x2 (little CPUs 0-1: capacity 512, 0.5/1 GHz; big CPUs 2-3: capacity 1024,
/// 1/2 GHz) under msm-4.14 with the performance governor: every CPU at its top OPP.
/// Both clusters have the same capacity per MHz, so exec_scale_factor is 1024 for both and
/// scale_exec_time() is delta · f / 2 GHz: a little CPU's busy ns count half, a big one's
/// in full.
fn sim(tasks: Vec<serde_json::Value>, timers: usize, fixed: Fixed) -> Sim {
    let w = json!({"name": "walt", "duration_ns": null, "timers": timers, "tasks": tasks});
    let pol: PolicyConfig = costs_off(
        serde_json::from_value(json!({"scheduler": "cfs", "governor": "performance",
            "idle_governor": "oracle", "kernel": "msm-4.14"}))
        .unwrap(),
    );
    Sim::with_policy(
        two_cluster_platform(),
        WorkloadSpec::from_json(&w.to_string()).unwrap(),
        pol,
        |_| Box::new(fixed),
    )
    .unwrap()
}

/// P: woken by its 20 ms timer at the start of every window, 10 ms of work in each of the
/// first 5 windows, then 2 ms.
fn ten_then_two() -> serde_json::Value {
    json!({"name": "P", "loop": 1, "phases": [
        {"loop": 5, "events": [{"run": 10 * MS}, {"timer": {"id": 0, "period_ns": 20 * MS}}]},
        {"loop": 20, "events": [{"run": 2 * MS}, {"timer": {"id": 0, "period_ns": 20 * MS}}]}]})
}

fn demand_scaled(s: &Sim, t: usize) -> u64 {
    s.walt.as_ref().unwrap().tasks[t].demand_scaled
}

#[test]
fn demand_is_the_larger_of_the_last_window_and_the_history_average() {
    // P on big CPU 2 at 2 GHz: woken by its 20 ms timer at the start of every window (the
    // CPU leaves WFI in 1 µs), it runs 10 ms in each of the first 5 windows, then 2 ms.
    // Its history starts at the initial load, 3 ms (15 % of 20 ms), in all 5 slots; each
    // wakeup in a new window pushes the last window's busy time (10 ms = 10e6 scaled, the
    // CPU being the most efficient at the top frequency) and recomputes
    // demand = max(runtime, sum / 5):
    //   20 ms: [10,3,3,3,3] avg 4.4 -> 10 ms -> 10e6 / 19531 = 512
    //   100 ms: [10,10,10,10,10] -> 512
    //   120 ms: [2,10,10,10,10] avg 8.4 -> 8.4e6 / 19531 = 430
    //   140 ms: [2,2,10,10,10] avg 6.8 -> 348;  160 ms: 5.2 -> 266;  180 ms: 3.6 -> 184
    //   200 ms: [2,2,2,2,2] -> 2e6 / 19531 = 102
    let mut s = sim(
        vec![ten_then_two()],
        1,
        Fixed {
            fork_to: 2,
            wake_to: None,
        },
    );
    // a new task: init_new_task_load(), 15 % of the window: 3e6 / 19531 = 153
    s.run_until(10 * US);
    assert_eq!(demand_scaled(&s, 0), 3 * MS / DIV);
    assert_eq!(demand_scaled(&s, 0), 153);
    let expect = [
        (20, 10 * MS),
        (40, 10 * MS),
        (100, 10 * MS),
        (120, 8_400_000),
        (140, 6_800_000),
        (160, 5_200_000),
        (180, 3_600_000),
        (200, 2 * MS),
        (240, 2 * MS),
    ];
    for (t_ms, demand) in expect {
        s.run_until(t_ms * MS + 10 * US);
        let r = &s.walt.as_ref().unwrap().tasks[0];
        assert_eq!(r.demand, demand, "demand at {t_ms} ms");
        assert_eq!(r.demand_scaled, demand / DIV, "demand_scaled at {t_ms} ms");
    }
    assert_eq!(demand_scaled(&s, 0), 102);
}

#[test]
fn the_cpu_busy_time_of_the_last_window_is_prev_runnable_sum() {
    // The same P: in window [100, 120) ms it ran 2 ms (wall = scaled on big at 2 GHz).
    // The first update of CPU 2 in the next window rolls curr into prev: at 120 ms (P's
    // wakeup) prev_runnable_sum is 2e6, and curr has nothing yet.
    let mut s = sim(
        vec![ten_then_two()],
        1,
        Fixed {
            fork_to: 2,
            wake_to: None,
        },
    );
    s.run_until(100 * MS + 10 * US);
    assert_eq!(s.walt.as_ref().unwrap().rqs[2].prev_runnable_sum, 10 * MS);
    s.run_until(120 * MS + 500 * US);
    let rq = &s.walt.as_ref().unwrap().rqs[2];
    assert_eq!(rq.window_start, 120 * MS);
    assert_eq!(rq.prev_runnable_sum, 2 * MS);
    // the sums are brought up to date at events only: P was picked at 120.001 ms (the
    // idle exit is not busy time) and nothing has been accounted since
    assert_eq!(rq.curr_runnable_sum, 0);
    // the queued demand of CPU 2 is P's (cumulative_runnable_avg_scaled): 430
    assert_eq!(rq.cumulative_runnable_avg_scaled, 8_400_000 / DIV);
    // P blocks at 122.001 ms (PUT_PREV_TASK): its 2 ms are in the current window, and it
    // has left the runqueue's sum
    s.run_until(123 * MS);
    let rq = &s.walt.as_ref().unwrap().rqs[2];
    assert_eq!(rq.curr_runnable_sum, 2 * MS);
    assert_eq!(rq.cumulative_runnable_avg_scaled, 0);
}

#[test]
fn a_migration_to_another_frequency_domain_carries_the_windows() {
    // P forked on little CPU 0 at t = 0 (the cluster is in cluster-sleep: 500 µs exit),
    // runs 2 ms of invariant work = 4 ms at capacity 512, [0.5, 4.5] ms, which WALT scales
    // to 4 ms · 1 GHz / 2 GHz = 2 ms; sleeps 1 ms (CPU 0 in WFI, its timer 1 ms away is
    // too close for cluster-sleep); the timer fires at 5.5 ms on CPU 0, out of WFI at
    // 5.501 ms, which wakes P onto big CPU 2 (fixed placement; WFI exit 1 µs); P runs 3 ms
    // there, [5.502, 8.502] ms, then sleeps. All in window 0.
    let p = json!({"name": "P", "loop": 1, "phases": [{"loop": 1, "events": [
        {"run": 2 * MS}, {"sleep": MS}, {"run": 3 * MS}, {"sleep": 100 * MS}]}]});
    let mut s = sim(
        vec![p],
        0,
        Fixed {
            fork_to: 0,
            wake_to: Some(2),
        },
    );
    s.run_until(5 * MS);
    {
        let w = s.walt.as_ref().unwrap();
        assert_eq!(w.rqs[0].curr_runnable_sum, 2 * MS);
        assert_eq!(w.rqs[2].curr_runnable_sum, 0);
        assert_eq!(w.tasks[0].curr_window, 2 * MS);
        assert_eq!(w.tasks[0].curr_window_cpu[0], 2 * MS);
    }
    // just after the wakeup, before P runs on CPU 2: inter_cluster_migration_fixup() moved
    // its 2 ms from CPU 0's sum to CPU 2's
    s.run_until(5 * MS + 501 * US + 500);
    {
        let w = s.walt.as_ref().unwrap();
        assert_eq!(w.rqs[0].curr_runnable_sum, 0);
        assert_eq!(w.rqs[2].curr_runnable_sum, 2 * MS);
        assert_eq!(w.tasks[0].curr_window_cpu[0], 0);
        assert_eq!(w.tasks[0].curr_window_cpu[2], 2 * MS);
        assert_eq!(w.counters.inter_cluster_fixups, 1);
        // new tasks (fewer than 5 active windows) also count in nt_*
        assert_eq!(w.rqs[2].nt_curr_runnable_sum, 2 * MS);
    }
    // it ran 3 ms more on CPU 2 (accounted when it slept at 8.502 ms): 5 ms there, and its
    // own window is 5 ms
    s.run_until(10 * MS);
    let w = s.walt.as_ref().unwrap();
    assert_eq!(w.rqs[2].curr_runnable_sum, 5 * MS);
    assert_eq!(w.tasks[0].curr_window, 5 * MS);
}

/// B: 50 ms busy (wall clock) on big CPU 2 from t = 0, then asleep; L keeps little CPU 0
/// busy so that its ticks roll the windows over (with every CPU idle, nothing would).
/// schedutil with no rate limit (the kernel's up/down_rate_limit_us written 0, as the
/// sm8150 init script does for policy0). Returns the big cluster's frequency changes.
fn burst(kernel: &str) -> Vec<(u64, u64)> {
    let b = json!({"name": "B", "loop": 1, "phases": [{"loop": 1, "events": [
        {"runtime": 50 * MS}, {"sleep": 400 * MS}]}]});
    let l = json!({"name": "L", "loop": 1, "cpus": [0], "phases": [{"loop": 1, "events": [
        {"runtime": 400 * MS}]}]});
    let w = json!({"name": "burst", "duration_ns": null, "timers": 0, "tasks": [b, l]});
    let pol: PolicyConfig = costs_off(
        serde_json::from_value(json!({"scheduler": "cfs", "governor": "schedutil",
            "idle_governor": "oracle", "kernel": kernel,
            "knobs": {"schedutil.rate_limit_us": 0.0, "schedutil.up_rate_limit_us": 0.0,
                      "schedutil.down_rate_limit_us": 0.0}}))
        .unwrap(),
    );
    let mut s = Sim::with_policy(
        two_cluster_platform(),
        WorkloadSpec::from_json(&w.to_string()).unwrap(),
        pol,
        |_| {
            Box::new(Fixed {
                fork_to: 2,
                wake_to: None,
            })
        },
    )
    .unwrap();
    let mut changes = vec![];
    let mut last = s.cpu_freq_khz(2);
    while let Some(t) = s.events.peek_time() {
        if t >= 300 * MS {
            break;
        }
        s.step();
        let f = s.cpu_freq_khz(2);
        if f != last {
            changes.push((s.now, f));
            last = f;
        }
    }
    changes
}

#[test]
fn after_a_burst_walt_drops_the_frequency_at_the_first_window_that_fits() {
    // WALT (msm-4.14): the big cluster starts at 1 GHz. At the 20 ms rollover (L's tick on
    // CPU 0), CPU 2's previous window holds 19.999 ms busy at 1 GHz = 9.9995e6 scaled:
    // util 511, raw 1.25 · 2 GHz · 511 / 1024 = 1.2476 GHz -> 2 GHz, effective after the
    // 100 µs transition: 20.1 ms. Windows [20, 40) and [40, 60) keep it there (the latter
    // holds 10.001 ms busy: util 512, raw 1.25 GHz). At 80 ms the window [60, 80) was idle:
    // util 0 -> 1 GHz at 80.1 ms, 30.1 ms after the burst ended at 50.001 ms.
    let walt = burst("msm-4.14");
    assert_eq!(walt, vec![(20_100 * US, 2_000_000), (80_100 * US, 1_000_000)]);
    // PELT (android-4.19) on the same run: CPU 2's util only decays, by 2^(-t/32 ms) from
    // its value at 50 ms, and schedutil sees an idle CPU at its NOHZ blocked-load update
    // (every 32 ms). The drop to 1 GHz needs util <= 409 (409 · 1.25 · 2 GHz / 1024 <= 1 GHz).
    let pelt = burst("android-4.19");
    let drop = pelt
        .iter()
        .rev()
        .find(|&&(_, f)| f == 1_000_000)
        .map(|&(t, _)| t)
        .unwrap();
    let walt_drop = 80_100 * US;
    assert!(drop > walt_drop, "PELT's drop at {drop} ns, WALT's at {walt_drop} ns");
    // measured: 96.1 ms, the NOHZ update at 96 ms (+100 µs transition). The one at 64 ms
    // came 14 ms after the burst, when util was still above 409 (x 2^(-14/32) = 0.74 of a
    // util of at least 554); by 96 ms it had decayed 46 ms (x 0.37). PELT's drop comes
    // 46.1 ms after the burst, WALT's 30.1 ms.
    assert_eq!(drop, 96_100 * US);
}

/// T: a top-app task (schedtune group top-app) that runs 1 ms of work every 10 ms, under
/// eas on test-4-3-1 (little 0-3 capacity 256, mid 4-6 768, big 7 1024) with msm-4.14.
/// Returns T's run time on each CPU after 200 ms.
fn top_app(knobs: serde_json::Value) -> Vec<u64> {
    let t = json!({"name": "T", "stune": "top-app", "loop": -1, "phases": [{"loop": 1, "events": [
        {"run": MS}, {"timer": {"id": 0, "period_ns": 10 * MS}}]}]});
    let w = json!({"name": "top-app", "duration_ns": null, "timers": 1, "tasks": [t]});
    let pol: PolicyConfig = costs_off(
        serde_json::from_value(json!({"scheduler": "eas", "governor": "schedutil",
            "idle_governor": "menu", "kernel": "msm-4.14", "knobs": knobs}))
        .unwrap(),
    );
    let mut s = Sim::new(
        hetsched_core::testutils::three_cluster_platform(),
        WorkloadSpec::from_json(&w.to_string()).unwrap(),
        pol,
    )
    .unwrap();
    s.run_until(200 * MS);
    s.task_cpu_time(0)
}

#[test]
fn prefer_idle_sends_a_top_app_task_to_an_idle_cpu_from_the_smallest_up_or_the_biggest_down_if_boosted() {
    // prefer_idle without boost: msm-4.14's find_energy_efficient_cpu() places the fork
    // and every wakeup (find_best_target.rs). start_cpu() is little CPU 0 (T fits it at
    // its maximum: a new task's WALT demand is 15 % of the window, 153, and
    // 256 * 1024 > 153 * 1077), and T's prev_cpu, CPU 0 (a new task's CPU), is idle, of
    // that capacity and in idle state 0 (WFI; cluster-sleep is no cpuidle state of msm's): the prev_cpu
    // fast path takes it at once, at the fork and at every wakeup after it
    let per_cpu = top_app(json!({"schedtune.top-app.prefer_idle": 1.0}));
    let total: u64 = per_cpu.iter().sum();
    assert!(total > 0);
    assert_eq!(per_cpu[0], total, "{per_cpu:?}");
    // boosted (schedtune.boost 10, Pixel 4's top-app value): start_cpu() is the middle
    // capacity (T fits it), so CPU 0 is no fast path; case A keeps mid CPU 4, climbs to
    // the bigger idle CPU 7 and stops before little; from then on prev_cpu 7 is not of
    // start_cpu()'s capacity and the same scan ends on it again
    let per_cpu = top_app(json!({"schedtune.top-app.prefer_idle": 1.0, "schedtune.top-app.boost": 10.0}));
    let total: u64 = per_cpu.iter().sum();
    assert_eq!(per_cpu[7], total, "{per_cpu:?}");
}

/// test-4-3-1 under msm-4.14 with the sm8150 init script's core_ctl values on its clusters:
/// little disabled; mid (as gold) min_cpus 2, busy 60/30 %, offline delay 100 ms,
/// task_thres 3; big (as gold+) min_cpus 0, task_thres 1, nr_prev_assist_thresh 1.
/// T (pinned to little CPU 0) runs 1 ms every 10 ms; from 150 ms four hogs pinned to the mid
/// CPUs run without a break. Returns the isolated mask after each step that changed it.
fn core_ctl_run(t_end: u64) -> (Vec<(u64, u64)>, Sim) {
    core_ctl_run_built(t_end, 1.0)
}

/// core_ctl_run() on the tree built with WALT (`sched_walt` 1) or without (0).
fn core_ctl_run_built(t_end: u64, sched_walt: f64) -> (Vec<(u64, u64)>, Sim) {
    let t = json!({"name": "T", "cpus": [0], "loop": -1, "phases": [{"loop": 1, "events": [
        {"run": MS}, {"timer": {"id": 0, "period_ns": 10 * MS}}]}]});
    let mut tasks = vec![t];
    for i in 0..4 {
        tasks.push(
            json!({"name": format!("hog{i}"), "cpus": [4, 5, 6], "delay_ns": 150 * MS, "loop": 1,
            "phases": [{"loop": 1, "events": [{"runtime": 1_000 * MS}]}]}),
        );
    }
    let w = json!({"name": "core_ctl", "duration_ns": null, "timers": 1, "tasks": tasks});
    let knobs = json!({
        "vendor.cpu_isolation": 1.0, "core_ctl.enable.cluster0": 0.0,
        "core_ctl.min_cpus.cluster1": 2.0, "core_ctl.busy_up_thres.cluster1": 60.0,
        "core_ctl.busy_down_thres.cluster1": 30.0, "core_ctl.offline_delay_ms.cluster1": 100.0,
        "core_ctl.task_thres.cluster1": 3.0,
        "core_ctl.min_cpus.cluster2": 0.0, "core_ctl.busy_up_thres.cluster2": 60.0,
        "core_ctl.busy_down_thres.cluster2": 30.0, "core_ctl.offline_delay_ms.cluster2": 100.0,
        "core_ctl.task_thres.cluster2": 1.0, "core_ctl.nr_prev_assist_thresh.cluster2": 1.0,
        "sched_walt": sched_walt});
    let pol: PolicyConfig = costs_off(
        serde_json::from_value(json!({"scheduler": "eas", "governor": "schedutil",
            "idle_governor": "menu", "kernel": "msm-4.14", "knobs": knobs}))
        .unwrap(),
    );
    let mut s = Sim::new(
        hetsched_core::testutils::three_cluster_platform(),
        WorkloadSpec::from_json(&w.to_string()).unwrap(),
        pol,
    )
    .unwrap();
    let mut out = vec![];
    let mut last = 0;
    while let Some(t) = s.events.peek_time() {
        if t >= t_end {
            break;
        }
        s.step();
        if s.cpu_isolated != last {
            last = s.cpu_isolated;
            out.push((s.now, last));
        }
    }
    (out, s)
}

#[test]
fn core_ctl_isolates_and_unisolates_at_the_init_scripts_thresholds() {
    // Windows of 20 ms; core_ctl evaluates at each rollover, which T's wakeup at the start
    // of each window triggers once little CPU 0 is out of cluster-sleep (300 µs).
    // Up to 150 ms only T runs: every window's runqueue average is 0.1 task on CPU 0
    // (rounded down: floor(0.1 + 0.15)), mid and big CPUs are idle (busy 0 %). Mid: need =
    // 0 busy, nrrun 0: 0, clamped to min_cpus 2, below its 3 active CPUs; big: 0 below 1.
    // A lower need waits offline_delay_ms (100 ms) from the last change of need (t = 0):
    // at the 100 ms rollover (100.3 ms) mid isolates its first CPU in LRU order (4) and big
    // its only one (7): mask 0b1001_0000.
    // The hogs start at 150 ms on the active mid CPUs 5 and 6 (two each). The window
    // [160, 180) holds them throughout: nr 2 + 2 = 4 >= task_thres 3, so mid needs all 3
    // CPUs, above its 2 active: CPU 4 returns at once at 180 ms. Big is not helped yet:
    // while mid had an isolated CPU its nr_prev_assist is 0.
    // In [180, 200) one hog moves to CPU 4 partway (the balancer's pull), so that window's
    // rounded averages add up to 3; in [200, 220) they are 2 + 1 + 1 = 4 on 3 active CPUs:
    // nr_prev_assist = 1 >= nr_prev_assist_thresh 1, big's need 1 > 0: CPU 7 returns at 220 ms.
    let (changes, _) = core_ctl_run(300 * MS);
    assert_eq!(
        changes,
        vec![(100_300 * US, 0b1001_0000), (180 * MS, 0b1000_0000), (220 * MS, 0)]
    );
    // while isolated, a CPU idles in its cluster's deepest state (big: CPU-off, index 1)
    let (_, s) = core_ctl_run(150 * MS);
    let deepest = s.platform.clusters[2].idle_states.len() - 1;
    assert_eq!(s.rqs[7].idle_state, Some(deepest));
    assert_eq!(s.rqs[4].idle_state, Some(s.platform.clusters[1].idle_states.len() - 1));
}

#[test]
fn built_without_walt_there_is_no_walt_state_no_core_ctl_and_prefer_idle_runs_on_pelt() {
    // sched_walt=0, the Pixel 4's floral_defconfig (no CONFIG_SCHED_WALT, no
    // CONFIG_SCHED_CORE_CTL). The core_ctl scenario above isolates CPUs 4 and 7 at 100.3 ms
    // with WALT; without core_ctl nothing is ever evaluated or isolated, whatever
    // vendor.cpu_isolation and the core_ctl knobs say.
    let (changes, s) = core_ctl_run_built(300 * MS, 0.0);
    assert_eq!(changes, vec![]);
    assert!(s.walt.is_none());
    let doc = s.result();
    assert!(doc["counters"].get("walt").is_none(), "{}", doc["counters"]);
    assert_eq!(doc["counters"]["vendor"]["core_ctl_evaluations"], 0);
    assert_eq!(doc["counters"]["vendor"]["cpu_isolation"], 0);
    // schedtune is still built, and msm-4.14's wakeup path reads PELT: at T's fork its
    // util is 0 (post_init_entity_util_avg() comes after the placement), so start_cpu() is
    // little CPU 0 and prev_cpu 0 is idle in a shallow state: the prev_cpu fast path, at
    // the fork and at every wakeup (T's util, near 100, fits little at its maximum)
    let per_cpu = top_app(json!({"sched_walt": 0.0, "schedtune.top-app.prefer_idle": 1.0}));
    let total: u64 = per_cpu.iter().sum();
    assert!(total > 0);
    assert_eq!(per_cpu[0], total, "{per_cpu:?}");
    // boosted (10): start_cpu() is the middle capacity and case A climbs to the idle
    // biggest CPU, at the fork and at every wakeup, so T runs nowhere else
    let per_cpu = top_app(json!({"sched_walt": 0.0, "schedtune.top-app.prefer_idle": 1.0,
        "schedtune.top-app.boost": 10.0}));
    let total: u64 = per_cpu.iter().sum();
    assert_eq!(per_cpu[7], total, "{per_cpu:?}");
}

#[test]
fn sched_walt_is_a_build_option_of_msm_4_14_only() {
    let build = |kernel: &str, v: f64| {
        let w = json!({"name": "w", "duration_ns": null, "timers": 0, "tasks": [
            {"name": "t", "loop": 1, "phases": [{"loop": 1, "events": [{"run": MS}]}]}]});
        let pol: PolicyConfig = serde_json::from_value(json!({"scheduler": "eas", "kernel": kernel,
            "knobs": {"sched_walt": v}}))
        .unwrap();
        Sim::new(
            hetsched_core::testutils::three_cluster_platform(),
            WorkloadSpec::from_json(&w.to_string()).unwrap(),
            pol,
        )
    };
    assert!(build("msm-4.14", 0.0).is_ok());
    assert!(build("msm-4.14", 1.0).is_ok());
    assert!(build("msm-4.14", 0.5).is_err());
    assert!(build("android-4.19", 0.0).is_err());
    assert!(build("mainline-6.12", 0.0).is_err());
    assert!(build("mainline-6.12", 1.0).is_ok());
    // and not switched while the simulation runs
    let mut s = build("msm-4.14", 1.0).unwrap();
    assert!(s.set_knob("sched_walt", 0.0).is_err());
}

#[test]
fn the_reported_load_is_the_larger_of_the_busy_time_and_the_biggest_task() {
    // FREQ_REPORT_MAX_CPU_LOAD_TOP_TASK. P forks on big CPU 2 (WFI exit 1 µs) and runs 4 ms
    // at 2 GHz, [0.001, 4.001] ms; sleeps 2 ms; its timer wakes it at 6.001 ms onto big CPU 3
    // (the same frequency domain: the busy time stays in CPU 2's sum, but P's top-task entry,
    // 4 ms, moves to CPU 3's table); it runs 1 ms there and sleeps. L's ticks on little CPU 0
    // roll the window over at 20 ms. Then:
    //   CPU 2: prev_runnable_sum 4e6, no task in its table: load 4e6 -> util 4e6/19531 = 204;
    //   CPU 3: prev_runnable_sum 1e6, P's 5 ms in bucket 5e6/20000 = 250, whose top is
    //   (250 + 1) · 20000 = 5.02e6: load 5.02e6 -> util 257.
    let p = json!({"name": "P", "loop": 1, "phases": [{"loop": 1, "events": [
        {"run": 4 * MS}, {"sleep": 2 * MS}, {"run": MS}, {"sleep": 500 * MS}]}]});
    let l = json!({"name": "L", "cpus": [0], "loop": 1, "phases": [{"loop": 1, "events": [
        {"runtime": 100 * MS}]}]});
    let mut s = sim(
        vec![p, l],
        0,
        Fixed {
            fork_to: 2,
            wake_to: Some(3),
        },
    );
    s.run_until(21 * MS);
    let w = s.walt.as_ref().unwrap();
    assert_eq!(w.rqs[2].prev_runnable_sum, 4 * MS);
    assert_eq!(w.rqs[3].prev_runnable_sum, MS);
    assert_eq!(w.cpu_load(2, 1024).util, 4 * MS / DIV);
    assert_eq!(w.cpu_load(3, 1024).util, 5_020_000 / DIV);
    assert_eq!(w.cpu_load(3, 1024).util, 257);
}
