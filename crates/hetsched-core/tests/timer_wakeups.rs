//! A sleeping task's timer fires on the CPU that armed it (hrtimer_start_range_ns() with
//! get_nohz_timer_target(): the CPU the task slept on, busy when it armed the timer). That
//! CPU leaves its idle state, runs try_to_wake_up(), and wakes the target CPU in turn when
//! the task is placed elsewhere. Expected values are worked out by hand from the platform
//! below, never read back from the engine.

use hetsched_core::balance::LoadBalancer;
use hetsched_core::platform::{ClusterSpec, IdleLevel, OppSpec, PlatformSpec};
use hetsched_core::policies::{SchedPolicy, WakeKind};
use hetsched_core::testutils::idle;
use hetsched_core::{Platform, PolicyConfig, SchedView, Sim, TaskId, TaskState, WorkloadSpec};
use serde_json::json;

const US: u64 = 1_000;
const MS: u64 = 1_000_000;

/// little = CPUs 0,1 (capacity 512; 1 GHz at 300 mW, cluster term 40 mW); big = CPUs 2,3
/// (capacity 1024; 2 GHz at 1200 mW, no busy cluster term). Idle states, per CPU / cluster
/// term: little WFI (exit 1 µs, 10 / 15 mW) and cluster-sleep (exit 500 µs, residency
/// 2 ms, 0 / 2 mW); big WFI (exit 1 µs, 5 / 7 mW) and cluster-sleep (exit 200 µs,
/// residency 2 ms, 0 / 1 mW). Each cluster is its own idle domain.
fn platform() -> Platform {
    let opp = |khz: u64, mw: u64, cl_mw: u64| OppSpec {
        khz,
        power_uw: mw * 1000,
        cluster_power_uw: cl_mw * 1000,
    };
    Platform::from_spec(PlatformSpec {
        name: "test-timer".into(),
        power_model: "dt".into(),
        clusters: vec![
            ClusterSpec {
                name: "little".into(),
                cpus: vec![0, 1],
                capacity_orig: 512,
                opps: vec![opp(1_000_000, 300, 40)],
                idle_states: vec![
                    idle("WFI", IdleLevel::Cpu, 1, 1, 10, 15),
                    idle("cluster-sleep", IdleLevel::Cluster, 500, 2000, 0, 2),
                ],
                context_switch_ns: None,
            },
            ClusterSpec {
                name: "big".into(),
                cpus: vec![2, 3],
                capacity_orig: 1024,
                opps: vec![opp(2_000_000, 1200, 0)],
                idle_states: vec![
                    idle("WFI", IdleLevel::Cpu, 1, 1, 5, 7),
                    idle("cluster-sleep", IdleLevel::Cluster, 200, 2000, 0, 1),
                ],
                context_switch_ns: None,
            },
        ],
        switcher: false,
        idle_domains: vec![],
        shared_llc: false,
        device_init: None,
    })
    .unwrap()
}

/// A placement fixed in advance: a new task on CPU 0, a woken one on `wake_to` (None: its
/// previous CPU); no load balancing, so nothing else moves a task.
struct Fixed {
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
            WakeKind::Fork => 0,
            WakeKind::Wakeup => self.wake_to.unwrap_or(prev_cpu),
        }
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// P: 1 ms of invariant work, a 10 ms sleep, 1 ms of work, exit. The oracle governor picks
/// the deepest state whose residency fits the time to the CPU's next timer.
/// With `busy`, H (pinned to CPU 0) starts at 5 ms and runs 20 ms of work.
fn run(wake_to: Option<usize>, t_end: u64, busy: bool) -> Sim {
    let p = json!({"name": "P", "loop": 1,
        "phases": [{"loop": 1, "events": [{"run": MS}, {"sleep": 10 * MS}, {"run": MS}]}]});
    let mut tasks = vec![p];
    if busy {
        tasks.push(json!({"name": "H", "cpus": [0], "delay_ns": 5 * MS, "loop": 1,
            "phases": [{"loop": 1, "events": [{"run": 20 * MS}]}]}));
    }
    let w = json!({"name": "test", "duration_ns": null, "timers": 0, "tasks": tasks});
    // the hand-worked energies count the work and the exits, not the scheduler's costs
    let pol: PolicyConfig = hetsched_core::testutils::costs_off(
        serde_json::from_value(json!({"scheduler": "cfs", "governor": "performance", "idle_governor": "oracle"}))
            .unwrap(),
    );
    let mut sim = Sim::with_policy(
        platform(),
        WorkloadSpec::from_json(&w.to_string()).unwrap(),
        pol,
        |_| Box::new(Fixed { wake_to }),
    )
    .unwrap();
    while let Some(t) = sim.events.peek_time() {
        if t >= t_end {
            break;
        }
        assert!(sim.step());
        sim.check_invariants()
            .unwrap_or_else(|e| panic!("at {} ns: {e}", sim.now));
    }
    sim.run_until(t_end);
    sim
}

// Common to both cases, little cluster up to the timer:
// * t = 0: no timer anywhere, so every CPU is in its cluster's deepest state, in effect
//   (each cluster all idle). P is forked onto CPU 0, which pays 500 µs (busy, 300 mW), then
//   runs 1 ms · 1024/512 = 2 ms: busy [0, 2.5 ms]; CPU 1 is held in WFI meanwhile (10 mW).
// * 2.5 ms: P sleeps; its timer is armed on CPU 0 for 12.5 ms. CPU 0's next timer is 10 ms
//   away: cluster-sleep (2 ms <= 10 ms); CPU 1 is in it too, so it is in effect (0 mW).
// * 12.5 ms: the timer fires on CPU 0, which leaves cluster-sleep: busy [12.5, 13.0 ms].

#[test]
fn a_timer_wakeup_that_moves_the_task_wakes_both_cpus_in_series() {
    // * 13.0 ms: CPU 0 is out and runs try_to_wake_up(): P goes to big CPU 2, in
    //   cluster-sleep (exit 200 µs): CPU 2 busy [13.0, 13.2 ms]. CPU 0 has nothing to run
    //   and goes back to idle with no timer: cluster-sleep, in effect with CPU 1's.
    // * 13.2 ms: P runs 1 ms · 1024/1024 at f_max: 1 ms, exits at 14.2 ms; CPU 2 then idles
    //   in cluster-sleep (no timer). CPU 3 is held in WFI while CPU 2 is busy (5 mW).
    // P's wakeup latency: the fork 500 µs; the timer 13.2 - 12.5 = 700 µs = 500 + 200.
    let t_end = 20 * MS;
    let s = run(Some(2), t_end, false);
    let p = &s.tasks[0];
    assert_eq!(p.state, TaskState::Exited);
    let lat = &p.stats.wakeup_latency_ns;
    assert_eq!(lat.iter().collect::<Vec<_>>(), [(500 * US, 1), (700 * US, 1)]);
    assert_eq!(lat.last(), Some(700 * US));
    assert_eq!(p.stats.migrations, 1);
    assert_eq!(s.now, t_end);
    let m = &s.meter;
    // CPU 0: busy 2.5 + 0.5 = 3 ms at 300 mW; idle 20 - 3 = 17 ms in cluster-sleep at 0 mW
    assert_eq!(m.cpus[0].busy_ns, 3 * MS);
    assert_eq!(m.cpus[0].energy_fj, 300_000 * 3_000_000);
    assert_eq!(m.cpus[0].idle_residency_ns, vec![0, 17 * MS]);
    // CPU 1: held in WFI while CPU 0 is busy, 3 ms at 10 mW; cluster-sleep otherwise
    assert_eq!(m.cpus[1].energy_fj, 10_000 * 3_000_000);
    assert_eq!(m.cpus[1].idle_residency_ns, vec![3 * MS, 17 * MS]);
    // little cluster: 40 mW for the 3 ms a CPU is busy, 2 mW for the 17 ms in cluster-sleep
    assert_eq!(m.clusters[0].energy_fj, 40_000 * 3_000_000 + 2_000 * 17_000_000);
    // CPU 2: busy 0.2 + 1 = 1.2 ms at 1200 mW; CPU 3 in WFI meanwhile at 5 mW
    assert_eq!(m.cpus[2].busy_ns, 1_200 * US);
    assert_eq!(m.cpus[2].energy_fj, 1_200_000 * 1_200_000);
    assert_eq!(m.cpus[2].idle_residency_ns, vec![0, 20 * MS - 1_200 * US]);
    assert_eq!(m.cpus[3].energy_fj, 5_000 * 1_200_000);
    // big cluster: 0 mW busy, 1 mW in cluster-sleep for 20 - 1.2 = 18.8 ms
    assert_eq!(m.clusters[1].energy_fj, 1_000 * 18_800_000);
    // CpuReady events: the fork's exit, CPU 0's exit for the timer, CPU 2's for the IPI
    assert_eq!(s.events.popped_by_class[2], 3);
}

#[test]
fn a_timer_wakeup_that_stays_wakes_only_the_arming_cpu() {
    // * 13.0 ms: CPU 0 is out and P stays there: it runs another 2 ms, exits at 15.0 ms,
    //   and CPU 0 idles in cluster-sleep. The big CPUs never leave cluster-sleep.
    // P's wakeup latency: 500 µs (fork) and 500 µs (the timer: CPU 0's exit alone).
    let t_end = 20 * MS;
    let s = run(None, t_end, false);
    let p = &s.tasks[0];
    assert_eq!(p.state, TaskState::Exited);
    assert_eq!(p.stats.wakeup_latency_ns.iter().collect::<Vec<_>>(), [(500 * US, 2)]);
    assert_eq!(p.stats.migrations, 0);
    let m = &s.meter;
    // CPU 0: busy [0, 2.5] and [12.5, 15.0]: 5 ms at 300 mW; 15 ms in cluster-sleep
    assert_eq!(m.cpus[0].busy_ns, 5 * MS);
    assert_eq!(m.cpus[0].energy_fj, 300_000 * 5_000_000);
    assert_eq!(m.cpus[0].idle_residency_ns, vec![0, 15 * MS]);
    assert_eq!(m.cpus[1].energy_fj, 10_000 * 5_000_000);
    assert_eq!(m.clusters[0].energy_fj, 40_000 * 5_000_000 + 2_000 * 15_000_000);
    // big: 20 ms of cluster-sleep, 0 mW per CPU and 1 mW for the cluster
    for cpu in [2, 3] {
        assert_eq!(m.cpus[cpu].busy_ns, 0);
        assert_eq!(m.cpus[cpu].energy_fj, 0);
        assert_eq!(m.cpus[cpu].idle_residency_ns, vec![0, 20 * MS]);
    }
    assert_eq!(m.clusters[1].energy_fj, 1_000 * 20_000_000);
    // CpuReady events: the fork's exit and CPU 0's exit for the timer
    assert_eq!(s.events.popped_by_class[2], 2);
}

#[test]
fn a_timer_on_a_busy_cpu_wakes_only_the_target() {
    // H is forked onto CPU 0 at 5 ms (in cluster-sleep: P's timer is 7.5 ms away), runs
    // from 5.5 ms for 20 ms · 1024/512 = 40 ms. At 12.5 ms P's timer fires on CPU 0, which
    // is running H: try_to_wake_up() runs at once and places P on CPU 2, which leaves
    // cluster-sleep (200 µs). P's wakeup latency: 200 µs, the target's exit alone.
    let s = run(Some(2), 20 * MS, true);
    let (p, h) = (&s.tasks[0], &s.tasks[1]);
    assert_eq!(p.state, TaskState::Exited);
    let lat = &p.stats.wakeup_latency_ns;
    assert_eq!(lat.iter().collect::<Vec<_>>(), [(200 * US, 1), (500 * US, 1)]);
    assert_eq!(lat.last(), Some(200 * US));
    assert_eq!(h.stats.wakeup_latency_ns.iter().collect::<Vec<_>>(), [(500 * US, 1)]);
    // CPU 0 busy [0, 2.5 ms] and from 5 ms on (exit, then H): 2.5 + 15 = 17.5 ms
    assert_eq!(s.meter.cpus[0].busy_ns, 17_500 * US);
    // CPU 2: 200 µs of exit and 1 ms of P
    assert_eq!(s.meter.cpus[2].busy_ns, 1_200 * US);
    // CpuReady events: P's start, H's start, CPU 2's exit
    assert_eq!(s.events.popped_by_class[2], 3);
}
