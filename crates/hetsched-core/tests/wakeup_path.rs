//! select_task_rq_fair()'s wakeup path as v6.12 has it (kernel/sched/fair.c): the sleeping
//! task's util synced before placement (sync_entity_load_avg in select_idle_sibling and
//! find_energy_efficient_cpu), record_wakee / wake_wide, wake_affine (WA_IDLE, WA_WEIGHT,
//! WA_BIAS), recent_used_cpu only within the target's LLC, and a task-to-task wakeup
//! placed from the waker's CPU. Expected values are worked by hand from the kernel's
//! arithmetic and the testutils platforms' round numbers.

#![allow(clippy::identity_op)]

use hetsched_core::energy_model::EnergyModel;
use hetsched_core::policies::cfs::SelectIdleSibling;
use hetsched_core::policies::eas::Eas;
use hetsched_core::policies::{SchedPolicy, WakeKind};
use hetsched_core::sched::WakeCtx;
use hetsched_core::testutils::{costs_off, two_cluster_platform};
use hetsched_core::{Platform, PolicyConfig, SchedView, Sim, TaskState, WorkloadSpec};
use serde_json::{json, Value};

const MS: u64 = 1_000_000;
/// one PELT period: 1024 us
const PERIOD_NS: u64 = 1024 * 1024;
/// LOAD_AVG_MAX - 1024 + period_contrib (0): the PELT divider
const DIVIDER: u64 = 47742 - 1024;

fn sim_on(p: Platform, tasks: Vec<Value>, scheduler: &str) -> Sim {
    let w = json!({"name": "test", "duration_ns": null, "timers": 0, "mutexes": 1, "conds": 1, "tasks": tasks});
    let w = WorkloadSpec::from_json(&w.to_string()).unwrap();
    let pol: PolicyConfig = serde_json::from_value(json!({"scheduler": scheduler, "governor": "performance"})).unwrap();
    Sim::new(p, w, costs_off(pol)).unwrap()
}

/// `n` tasks that never start within the test (a far delay): placement is called on them
/// by hand, with the runqueues set by hand.
fn parked(p: Platform, n: usize) -> Sim {
    let tasks = (0..n)
        .map(|i| {
            json!({"name": format!("t{i}"), "delay_ns": 1_000_000 * MS, "loop": 1,
                         "phases": [{"loop": 1, "events": [{"run": MS}]}]})
        })
        .collect();
    sim_on(p, tasks, "cfs")
}

/// Task `t` asleep on `cpu`, its util `util` (sums consistent with a divider of 46718)
/// as of PELT time `lut`, no util_est.
fn asleep(sim: &mut Sim, t: usize, cpu: usize, util: u64, lut: u64) {
    let task = &mut sim.tasks[t];
    task.state = TaskState::Sleeping;
    task.cpu = cpu;
    task.se.attached = true;
    let a = &mut task.se.avg;
    a.last_update_time = lut;
    a.period_contrib = 0;
    a.util_sum = util * DIVIDER;
    a.util_avg = util;
    a.load_sum = util * DIVIDER / 1024; // load_avg = weight 1024 · load_sum / divider
    a.load_avg = util;
    a.util_est = 0;
}

fn view<'a>(sim: &'a Sim, this_cpu: Option<usize>) -> SchedView<'a> {
    SchedView {
        wake: WakeCtx { this_cpu, sync: false },
        ..sim.sched_view()
    }
}

/// sync_entity_load_avg() before select_idle_sibling's fit tests. The task's util was 480
/// when it blocked on little CPU 0 (capacity 512); CPU 0's cfs_rq was last updated 32 PELT
/// periods later. Decayed: util_sum 480 · 46718 = 22424640 → decay_load(·, 32) = (x >> 1)
/// · 0xffffffff >> 32 = 11212320 − 1 = 11212319 → util_avg 11212319 / 46718 = 239.
/// fits_capacity: 239 · 1280 = 305920 < 512 · 1024 = 524288, so idle prev_cpu 0 is taken.
/// Undecayed, 480 · 1280 = 614400 does not fit, and select_idle_capacity from CPU 0 takes
/// the first idle CPU that fits: big CPU 2.
#[test]
fn sleeping_util_is_decayed_before_select_idle_sibling() {
    let mut sim = parked(two_cluster_platform(), 1);
    let lut0 = 100 * PERIOD_NS;
    asleep(&mut sim, 0, 0, 480, lut0);
    sim.rqs[0].cfs.avg.last_update_time = lut0 + 32 * PERIOD_NS;
    let v = view(&sim, Some(0));
    assert_eq!(v.sync_entity_load_avg(0).util_avg, 239);
    let mut sis = SelectIdleSibling::default();
    assert_eq!(sis.select_task_rq(&v, 0, 0, WakeKind::Wakeup), 0);
    // the same task with its cfs_rq not updated since it slept: nothing to decay
    sim.rqs[0].cfs.avg.last_update_time = lut0;
    let v = view(&sim, Some(0));
    assert_eq!(v.sync_entity_load_avg(0).util_avg, 480);
    let mut sis = SelectIdleSibling::default();
    assert_eq!(sis.select_task_rq(&v, 0, 0, WakeKind::Wakeup), 2);
}

/// find_energy_efficient_cpu() starts with sync_entity_load_avg(): the same task (480
/// decayed to 239, as is its blocked share of CPU 0's cfs_rq) fits little prev_cpu 0 and,
/// every CPU idle, costs less there: at util
/// 239 both clusters run their 1 GHz OPP (239 · 1.25 = 299 above little's 500 MHz capacity
/// 256, below big's 1 GHz capacity 512), energy per unit util little 300 mW / 512 = 0.59
/// against big 400 mW · (2 GHz / 1 GHz) / 1024 = 0.78: prev_cpu 0 stays. With the util
/// as it blocked (480 > 512 / 1.25 = 409.6) no little CPU fits and feec must go big.
#[test]
fn sleeping_util_is_decayed_before_find_energy_efficient_cpu() {
    let place = |decay: bool| {
        let mut sim = parked(two_cluster_platform(), 1);
        let lut0 = 100 * PERIOD_NS;
        asleep(&mut sim, 0, 0, 480, lut0);
        let lut = lut0 + if decay { 32 * PERIOD_NS } else { 0 };
        for rq in sim.rqs.iter_mut() {
            rq.cfs.avg.last_update_time = lut;
        }
        // a sleeping task's util stays in its CPU's cfs_rq as blocked util, decayed as the
        // cfs_rq is updated: 239 after the 32 periods, 480 without them
        sim.rqs[0].cfs.avg.util_avg = if decay { 239 } else { 480 };
        let mut eas = Eas::new(EnergyModel::from_platform(&sim.platform));
        let v = view(&sim, Some(0));
        let cpu = eas.select_task_rq(&v, 0, 0, WakeKind::Wakeup);
        (cpu, eas.feec_calls)
    };
    assert_eq!(place(true), (0, 1));
    let (cpu, calls) = place(false);
    assert!(cpu >= 2 && calls == 1, "util 480 fits no little CPU: {cpu}");
}

/// recent_used_cpu must share the target's cache. The task last left CPU 0 (little) for a
/// placement from there, so recent_used_cpu = 0; woken now with prev_cpu = target = 2 (big,
/// busy), little CPU 0 idle. Classic big.LITTLE (one LLC per cluster): CPU 0 is not a
/// candidate and select_idle_capacity from CPU 2 finds idle big CPU 3 (util 100 fits it).
/// With one LLC over both clusters (DynamIQ) CPU 0 is taken (100 · 1280 < 512 · 1024).
#[test]
fn recent_used_cpu_only_within_the_targets_llc() {
    for shared_llc in [false, true] {
        let mut p = two_cluster_platform();
        p.shared_llc = shared_llc;
        let mut sim = parked(p, 3);
        asleep(&mut sim, 0, 0, 100, 0);
        // first wakeup: prev_cpu 0 busy, so select_idle_sibling reaches the recent_used_cpu
        // step and records prev_cpu 0
        sim.rqs[0].curr = Some(1);
        let mut sis = SelectIdleSibling::default();
        let first = sis.select_idle_sibling(&view(&sim, Some(0)), 0, 0, 0);
        assert_eq!(first, 1, "little CPU 1 is idle and fits");
        // second wakeup from big CPU 2, which is busy; CPU 0 idle again
        sim.rqs[0].curr = None;
        sim.rqs[1].curr = Some(1);
        sim.rqs[2].curr = Some(2);
        sim.tasks[0].cpu = 2;
        let got = sis.select_idle_sibling(&view(&sim, Some(2)), 0, 2, 2);
        assert_eq!(got, if shared_llc { 0 } else { 3 }, "shared_llc {shared_llc}");
    }
}

/// record_wakee() and wake_wide(). Waker W (task 0, running on CPU 2) wakes tasks 1, 2, 3,
/// 4 in turn: wakee_flips 4. Task 1 itself (running on CPU 0) woke tasks 5 and 6: its
/// flips 2. W now wakes task 1: flips 5 (a new wakee). llc_size(CPU 2) = 2 on classic
/// big.LITTLE: slave 2 ≥ 2 and master 5 ≥ 2 · 2, so wake_wide. With one LLC of 4 CPUs,
/// slave 2 < 4: not wide. After 1.5 s (375 jiffies at HZ 250, past the last decay + HZ)
/// W's flips halve: 5 >> 1 = 2 (waking task 1 again adds none), master 2 < 2 · 2: not wide.
#[test]
fn wake_wide_from_wakee_flips() {
    for shared_llc in [false, true] {
        let mut p = two_cluster_platform();
        p.shared_llc = shared_llc;
        let mut sim = parked(p, 7);
        sim.rqs[2].curr = Some(0);
        sim.rqs[0].curr = Some(1);
        let mut sis = SelectIdleSibling::default();
        for wakee in [5, 6] {
            sis.record_wakee(&view(&sim, Some(0)), wakee, 0);
        }
        for wakee in [1, 2, 3, 4] {
            sis.record_wakee(&view(&sim, Some(2)), wakee, 2);
        }
        sim.rqs[0].curr = None; // task 1 went to sleep
        let v = view(&sim, Some(2));
        sis.record_wakee(&v, 1, 0);
        assert_eq!(sis.wake_wide(&v, 1, 0), !shared_llc, "shared_llc {shared_llc}");
        let later = SchedView {
            now: 1_500 * MS,
            ..view(&sim, Some(2))
        };
        sis.record_wakee(&later, 1, 0);
        assert!(!sis.wake_wide(&later, 1, 0));
    }
}

/// wake_affine(): WA_IDLE then WA_WEIGHT with WA_BIAS (imbalance_pct 117: prev_cpu's load
/// weighs 108 %). The wakee (task 0, load_avg 512) slept on little CPU 1; the waker runs on
/// little CPU 0.
#[test]
fn wake_affine_idle_and_weight() {
    let mut sim = parked(two_cluster_platform(), 3);
    asleep(&mut sim, 0, 1, 512, 0);
    sim.tasks[0].se.avg.load_avg = 512;
    let mut sis = SelectIdleSibling::default();
    // the waking CPU 0 idle (a timer taken there), sharing the cache with busy prev_cpu 1:
    // the waking CPU
    sim.rqs[1].curr = Some(2);
    assert_eq!(sis.wake_affine(&view(&sim, Some(0)), 0, 0, 1, false), 0);
    // a sync wakeup from CPU 0 running only the waker: the waker's CPU
    sim.rqs[0].curr = Some(1);
    sim.rqs[0].cfs.nr_running = 1;
    let v = SchedView {
        wake: WakeCtx {
            this_cpu: Some(0),
            sync: true,
        },
        ..sim.sched_view()
    };
    assert_eq!(sis.wake_affine(&v, 0, 0, 1, true), 0);
    // not sync, both busy: WA_WEIGHT. CPU 0's load 1024, CPU 1's 2048 (the wakee's
    // cfs_rq): task_h_load = 512 · 2048 / 2049 = 511.
    //   this_eff = (1024 + 511) · 100 · capacity_of(1) 512 = 78 592 000
    //   prev_eff = (2048 − 511) · 108 · capacity_of(0) 512 = 84 989 952  → the waking CPU
    sim.rqs[0].cfs.avg.load_avg = 1024;
    sim.rqs[1].cfs.avg.load_avg = 2048;
    assert_eq!(sis.wake_affine(&view(&sim, Some(0)), 0, 0, 1, false), 0);
    // CPU 1's load 1024: task_h_load = 512 · 1024 / 1025 = 511,
    //   prev_eff = (1024 − 511) · 108 · 512 = 28 366 848 < 78 592 000 → prev_cpu
    sim.rqs[1].cfs.avg.load_avg = 1024;
    assert_eq!(sis.wake_affine(&view(&sim, Some(0)), 0, 0, 1, false), 1);
    // CPU 1's load 1100: task_h_load = 512 · 1100 / 1101 = 511; prev_eff = 589 · 108 · 512
    // = 32 569 344 against this_eff 78 592 000 → prev_cpu; WA_BIAS alone (without the
    // 108 %) would not change it: 589 · 100 · 512 = 30 156 800
    sim.rqs[1].cfs.avg.load_avg = 1100;
    assert_eq!(sis.wake_affine(&view(&sim, Some(0)), 0, 0, 1, false), 1);
    assert_eq!(sis.counters.wake_affine, 3);
}

/// WA_BIAS decides: CPU 0 (waker) load 900, CPU 1 (prev) load 1000, wakee load 64:
/// task_h_load = 64 · 1000 / 1001 = 63.
///   this_eff = (900 + 63) · 100 · 512 = 49 305 600
///   prev_eff = (1000 − 63) · 108 · 512 = 51 810 304 → the waking CPU;
/// without the bias prev would be 937 · 100 · 512 = 47 974 400 < this_eff.
#[test]
fn wake_affine_weight_bias_favours_the_waker() {
    let mut sim = parked(two_cluster_platform(), 3);
    asleep(&mut sim, 0, 1, 64, 0);
    sim.tasks[0].se.avg.load_avg = 64;
    sim.rqs[0].curr = Some(1);
    sim.rqs[1].curr = Some(2);
    sim.rqs[0].cfs.avg.load_avg = 900;
    sim.rqs[1].cfs.avg.load_avg = 1000;
    let mut sis = SelectIdleSibling::default();
    assert_eq!(sis.wake_affine(&view(&sim, Some(0)), 0, 0, 1, false), 0);
    sim.rqs[0].cfs.avg.load_avg = 940; // (940 + 63) · 100 · 512 = 51 353 600 < 51 810 304
    assert_eq!(sis.wake_affine(&view(&sim, Some(0)), 0, 0, 1, false), 0);
    sim.rqs[0].cfs.avg.load_avg = 950; // (950 + 63) · 100 · 512 = 51 865 600 > 51 810 304
    assert_eq!(sis.wake_affine(&view(&sim, Some(0)), 0, 0, 1, false), 1);
}

/// Two clusters of two CPUs, all capacity 1024 (no asymmetry: select_idle_cpu over the
/// target's LLC), one LLC per cluster.
fn symmetric_2x2() -> Platform {
    let cluster = |name: &str, cpus: [usize; 2]| {
        json!({"name": name, "cpus": cpus, "capacity_orig": 1024,
               "opps": [{"khz": 1_000_000, "power_uw": 400_000, "cluster_power_uw": 0}],
               "idle_states": [{"name": "WFI", "level": "cpu", "exit_latency_ns": 1000,
                                "target_residency_ns": 1000, "power_uw": 5000, "cluster_power_uw": 0}]})
    };
    let spec = json!({"name": "sym-2x2", "power_model": "dt",
                      "clusters": [cluster("a", [0, 1]), cluster("b", [2, 3])]});
    Platform::from_spec(serde_json::from_value(spec).unwrap()).unwrap()
}

/// A task-to-task wakeup is placed from the waker's CPU. Task B runs 1 ms every 21 ms on
/// CPU 0 for 210 ms (its load_avg stays near 1024 · 1/21 of the time, well under 512),
/// then blocks on a condition. Two hogs pinned to CPU 0 start at 215 ms (CPU 0's load
/// 2048 at once: each new task's load starts at its weight); waker W, pinned to CPU 2,
/// starts at 215 ms, runs 10 ms, then unlocks the mutex B waits on (a futex wakeup: no
/// WF_SYNC). wake_wide: W's flips 1, B's ≤ 1 < llc_size 2: no. WA_IDLE: CPU 2 runs W,
/// prev_cpu 0 runs the hogs: no. WA_WEIGHT: this_eff ≤ (1024 + 512) · 100 · 1024 <
/// prev_eff ≥ (2048 − 512) · 108 · 1024: the waking CPU 2 is the target, and
/// select_idle_sibling finds CPU 3 idle in its LLC. With the target at prev_cpu 0 (no
/// wake_affine) the task would go to idle CPU 1, beside the hogs.
#[test]
fn task_to_task_wakeup_lands_near_the_waker() {
    let b = json!({"name": "B", "loop": 1, "phases": [
        {"loop": 10, "events": [{"run": 1 * MS}, {"sleep": 20 * MS}]},
        {"loop": 1, "events": [{"lock": 0}, {"wait": {"cond": 0, "mutex": 0}}, {"unlock": 0}, {"run": 1 * MS}]}
    ]});
    let hog = |name: &str| {
        json!({"name": name, "cpus": [0], "delay_ns": 215 * MS, "loop": 1,
               "phases": [{"loop": 1, "events": [{"run": 500 * MS}]}]})
    };
    let w = json!({"name": "W", "cpus": [2], "delay_ns": 215 * MS, "loop": 1, "phases": [
        {"loop": 1, "events": [{"run": 10 * MS}, {"lock": 0}, {"signal": 0}, {"unlock": 0}, {"run": 10 * MS}]}
    ]});
    let mut sim = sim_on(symmetric_2x2(), vec![b, hog("h1"), hog("h2"), w], "cfs");
    sim.run_until(214 * MS);
    assert_eq!(sim.tasks[0].state, TaskState::Sleeping);
    assert_eq!(sim.tasks[0].cpu, 0, "B slept on CPU 0");
    assert!(sim.tasks[0].se.avg.load_avg < 512, "{}", sim.tasks[0].se.avg.load_avg);
    sim.run_until(240 * MS);
    assert_eq!(sim.tasks[0].stats.migrations, 1);
    assert!(matches!(sim.tasks[0].cpu, 3), "B on CPU {}", sim.tasks[0].cpu);
    let c = sim.policy.counters();
    let get = |k: &str| c.iter().find(|(n, _)| *n == k).map(|(_, v)| v.as_u64().unwrap());
    assert_eq!(get("wake_affine"), Some(1));
}
