//! The `gts` scheduler (policies/gts.rs) and MediaTek's hot plug strategy (extensions/hotplug.rs).
//! Every assertion is about where work ran, which CPUs were online and what the counters
//! say; none about timings.

use hetsched_core::energy::CpuPowerState;
use hetsched_core::testutils::two_cluster_platform;
use hetsched_core::{PolicyConfig, Sim, WorkloadSpec};
use serde_json::{json, Value};

const MS: u64 = 1_000_000;

fn sim(tasks: Vec<Value>, timers: usize, scheduler: &str, governor: &str, knobs: Value) -> Sim {
    let w = json!({"name": "test", "duration_ns": null, "timers": timers, "tasks": tasks});
    let pol: PolicyConfig =
        serde_json::from_value(json!({"scheduler": scheduler, "governor": governor, "knobs": knobs})).unwrap();
    Sim::new(
        two_cluster_platform(),
        WorkloadSpec::from_json(&w.to_string()).unwrap(),
        pol,
    )
    .unwrap()
}

/// run `run_ns` of work every `period_ns`, `loops` times (-1: forever)
fn periodic(name: &str, run_ns: u64, period_ns: u64, timer: usize, loops: i64) -> Value {
    json!({"name": name, "phases": [{"loop": loops, "events": [{"run": run_ns}, {"timer": {"id": timer, "period_ns": period_ns}}]}]})
}

/// (little, big) CPU time of task `t` in ns on the 2+2 test platform
fn split(s: &Sim, t: usize) -> (u64, u64) {
    let ct = s.task_cpu_time(t);
    (ct[0] + ct[1], ct[2] + ct[3])
}

/// A counter of the policy's (`counters.policy`) or of the core's.
fn counter(r: &Value, name: &str) -> u64 {
    let c = &r["counters"];
    c["policy"]
        .get(name)
        .unwrap_or(&c[name])
        .as_u64()
        .unwrap_or_else(|| panic!("no counter {name}"))
}

#[test]
fn gts_moves_a_light_task_down_and_a_heavy_one_up() {
    // 300 ms light (1 ms of work every 20 ms), then busy: forkboost puts it on big, its load
    // falls below 256 and it goes down; once busy its load passes 700 and it goes up
    let t = json!({"name": "t", "phases": [
        {"loop": 15, "events": [{"run": MS}, {"timer": {"id": 0, "period_ns": 20 * MS}}]},
        {"loop": -1, "events": [{"run": 10 * MS}]}
    ]});
    let mut s = sim(vec![t], 1, "gts", "performance", json!({}));
    s.run_until(290 * MS);
    let (little_light, _) = split(&s, 0);
    assert!(s.tasks[0].cpu < 2, "light phase ends on a LITTLE CPU");
    assert!(little_light > 0);
    s.run_until(600 * MS);
    let r = s.result();
    assert!(s.tasks[0].cpu >= 2, "busy phase ends on a big CPU");
    assert!(counter(&r, "hmp_down_migrations") >= 1);
    assert!(counter(&r, "hmp_up_migrations") >= 1);
    assert_eq!(counter(&r, "hmp_fork_boosts"), 1);
    let (_, big_end) = split(&s, 0);
    assert!(big_end > 250 * MS, "the busy phase ran on big: {big_end}");
}

#[test]
fn gts_hysteresis_keeps_a_medium_task_where_it_is() {
    // 3 ms every 10 ms on big at 2 GHz: tracked load ~307, between 256 and 700
    let mut s = sim(
        vec![periodic("m", 3 * MS, 10 * MS, 0, -1)],
        1,
        "gts",
        "performance",
        json!({}),
    );
    s.run_until(1000 * MS);
    let r = s.result();
    let (little, big) = split(&s, 0);
    assert_eq!(little, 0, "never went down");
    assert!(big > 250 * MS);
    assert_eq!(counter(&r, "hmp_down_migrations"), 0);
    assert_eq!(counter(&r, "hmp_up_migrations"), 0);
    // a higher down threshold sends it down: the threshold decides
    let mut s = sim(
        vec![periodic("m", 3 * MS, 10 * MS, 0, -1)],
        1,
        "gts",
        "performance",
        json!({"gts.down_threshold": 400.0}),
    );
    s.run_until(1000 * MS);
    let r = s.result();
    assert!(counter(&r, "hmp_down_migrations") >= 1);
    let (little, _) = split(&s, 0);
    assert!(little > 100 * MS, "ran on LITTLE after going down: {little}");
    // on LITTLE (half speed: 6 ms busy of 10, load ~614 < 700) it stays: no ping-pong
    assert_eq!(counter(&r, "hmp_up_migrations"), 0);
}

#[test]
fn gts_differs_from_cfs_and_eas() {
    // the medium task: EAS finds LITTLE cheaper (util ~300 fits 512), GTS keeps it on big
    let run = |sched: &str| {
        let mut s = sim(
            vec![periodic("m", 3 * MS, 10 * MS, 0, -1)],
            1,
            sched,
            "schedutil",
            json!({}),
        );
        s.run_until(1000 * MS);
        (split(&s, 0), s.result())
    };
    let ((gl, gb), g) = run("gts");
    let ((el, eb), e) = run("eas");
    let (_, c) = run("cfs");
    assert!(gb > gl, "gts: big {gb} little {gl}");
    assert!(el > eb, "eas: big {eb} little {el}");
    assert!(c["counters"]["policy"].get("hmp_up_migrations").is_none());
    assert!(e["counters"]["policy"].get("hmp_up_migrations").is_none());
    assert_eq!(g["policy"]["placement"], "gts");
    // balancing stays inside clusters under gts
    assert!(g["counters"]["balance_domains"]["PKG"]["attempts"].as_u64().unwrap() == 0);
}

#[test]
fn hps_takes_cpus_offline_under_light_load_and_back_under_heavy_load() {
    // one light task for 400 ms, then four busy tasks
    let light = periodic("light", MS, 20 * MS, 0, 20);
    let busy = |i: usize| {
        json!({"name": format!("busy{i}"), "delay_ns": 400 * MS,
               "phases": [{"loop": -1, "events": [{"run": 10 * MS}]}]})
    };
    let tasks = vec![light, busy(0), busy(1), busy(2), busy(3)];
    let mut s = sim(tasks, 1, "eas", "schedutil", json!({"hotplug.hps": 1.0}));
    let mut min_online = 4;
    let mut t = 0;
    while t < 1200 * MS {
        t += 2 * MS;
        s.run_until(t);
        let hp = s.hotplug.as_ref().unwrap();
        min_online = min_online.min(hp.online.count_ones());
        for cpu in 0..4 {
            if !s.cpu_online(cpu) {
                // an offline CPU runs nothing and sits powered down
                assert!(
                    s.rqs[cpu].curr.is_none() && s.rqs[cpu].nr_running() == 0,
                    "cpu{cpu} at {t}"
                );
                let deepest = s.platform.clusters[s.platform.cpu_cluster[cpu]].idle_states.len() - 1;
                assert_eq!(s.meter.cpus[cpu].state, CpuPowerState::Idle(deepest), "cpu{cpu} at {t}");
            }
        }
        s.check_invariants().unwrap();
        if t == 390 * MS {
            assert!(
                s.hotplug.as_ref().unwrap().online.count_ones() <= 2,
                "light load: CPUs offline"
            );
        }
    }
    assert_eq!(min_online, 1, "the light phase needs one CPU");
    let r = s.result();
    let hp = &r["hotplug"];
    assert!(hp["cpu_down"].as_u64().unwrap() >= 3);
    assert!(hp["cpu_up"].as_u64().unwrap() >= 3);
    assert_eq!(hp["online_cpus_end"], 4, "heavy load: every CPU back online");
    assert!(hp["mean_online_cpus"].as_f64().unwrap() < 4.0);
    // CPU 0 never goes offline; the others spent part of the run offline
    assert!((r["cpus"][0]["online_s"].as_f64().unwrap() - 1.2).abs() < 1e-9);
    assert!(r["cpus"][3]["online_s"].as_f64().unwrap() < 1.0);
}

#[test]
fn hps_saves_energy_on_a_light_load_and_is_deterministic() {
    let run = |knobs: Value| {
        let mut s = sim(
            vec![periodic("light", MS, 20 * MS, 0, -1)],
            1,
            "gts",
            "schedutil",
            knobs,
        );
        s.run_until(1000 * MS);
        s.result()
    };
    let off = run(json!({}));
    let on = run(json!({"hotplug.hps": 1.0}));
    let on2 = run(json!({"hotplug.hps": 1.0}));
    assert!(off.get("hotplug").is_none());
    assert_eq!(on["energy_fj"], on2["energy_fj"]);
    assert_eq!(on["hotplug"], on2["hotplug"]);
    assert!(on["hotplug"]["cpu_down"].as_u64().unwrap() >= 1);
}
