//! Each cpufreq governor reads its own tunables only: a run under one governor is the
//! same, to the byte, whatever every other governor's knobs say (a knob must not drive
//! another mechanism: schedutil.rate_limit_us once set ondemand's sampling rate too).

use hetsched_core::cpufreq::GOVERNORS;
use hetsched_core::features::{KnobDecl, KNOBS};
use hetsched_core::testutils::{run_sleep_mix, two_cluster_platform};
use hetsched_core::{PolicyConfig, Sim};
use serde_json::{json, Map, Value};

/// The governor a knob belongs to: its name's first part, if that is a governor's name.
fn owner(k: &KnobDecl) -> Option<&'static str> {
    let family = k.name.split('.').next()?;
    GOVERNORS.iter().map(|g| g.0).find(|g| *g == family)
}

fn sim(governor: &str, kernel: &str, knobs: &Map<String, Value>) -> Result<Sim, hetsched_core::Error> {
    let pol: PolicyConfig = serde_json::from_value(json!({
        "scheduler": "cfs", "governor": governor, "kernel": kernel, "knobs": knobs
    }))
    .unwrap();
    Sim::new(
        two_cluster_platform(),
        run_sleep_mix(5, 300_000, 70_000, 900_000, 110_000),
        pol,
    )
}

/// A value the engine takes for `k` other than its default: a 0/1 flag flipped, else half
/// way to its maximum, its maximum or its minimum, the first one accepted.
fn other_value(k: &KnobDecl, kernel: &str) -> f64 {
    let d = k.default;
    let flag = k.min == 0.0 && k.max == 1.0 && (d == 0.0 || d == 1.0);
    let first = if flag { 1.0 - d } else { d + (k.max - d) / 2.0 };
    [first, k.max, k.min]
        .into_iter()
        .filter(|v| *v != d && (k.min..=k.max).contains(v))
        .find(|v| {
            let mut one = Map::new();
            one.insert(k.name.into(), json!(v));
            sim("performance", kernel, &one).is_ok()
        })
        .unwrap_or_else(|| panic!("no other value of {} is accepted", k.name))
}

fn run(governor: &str, kernel: &str, knobs: &Map<String, Value>) -> Value {
    let mut s = sim(governor, kernel, knobs).unwrap();
    s.run_until(2_000_000_000);
    let mut doc = s.result();
    doc.as_object_mut().unwrap().remove("knobs"); // the settings themselves, echoed
    doc
}

#[test]
fn a_governor_reads_only_its_own_knobs() {
    for kernel in ["mainline-6.12", "msm-4.14"] {
        for &(gov, _) in GOVERNORS {
            let mut others = Map::new();
            for k in KNOBS.iter().filter(|k| owner(k).is_some_and(|o| o != gov)) {
                others.insert(k.name.into(), json!(other_value(k, kernel)));
            }
            assert!(others.len() >= 10, "{} knobs of the other governors", others.len());
            assert_eq!(
                run(gov, kernel, &Map::new()),
                run(gov, kernel, &others),
                "{gov} under {kernel} changed with the other governors' knobs"
            );
        }
    }
}
