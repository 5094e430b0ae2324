//! Bad documents at the engine's door. The engine takes three JSON documents
//! (docs/engine-interface.md): the PlatformSpec, the WorkloadSpec and the PolicyConfig. Each
//! one, whatever its text, must either become a spec the engine accepts or come back as an
//! `Err` naming the document: never a panic, never an abort. A spec that is accepted must
//! then simulate: a short run of it must not panic either.
//!
//! The documents are arbitrary JSON, or one of the seeds below edited: a value replaced by
//! an edge value (negative, zero, u64::MAX, 1e308, the wrong type), a key deleted or
//! repeated, a value nested past serde_json's depth limit, the text cut short or a number
//! written past what its field holds. The seeds use every event kind of the workload
//! grammar so that edits reach them all.
//!
//! `cargo test -p hetsched-core --test spec_fuzz` runs 256 cases a property (the CI
//! budget); `PROPTEST_CASES=20000` runs more (the nightly budget, docs/robustness.md).

use hetsched_core::features::KNOBS;
use hetsched_core::{build, Platform, PolicyConfig, WorkloadSpec};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use serde_json::{json, Map, Value};

/// 256 cases a property from a fixed seed in CI; `PROPTEST_CASES=N` runs N from a fresh
/// seed each time (or `PROPTEST_RNG_SEED`'s). A failure is not saved to a regressions file:
/// its minimal edit goes into `FOUND` below, where it reads as what it is.
fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok());
    let mut c = ProptestConfig {
        cases: cases.unwrap_or(256),
        max_shrink_iters: 2048,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    if cases.is_none() && matches!(c.rng_seed, RngSeed::Random) {
        c.rng_seed = RngSeed::Fixed(0x6865_7473_6368);
    }
    c
}

/// How far an accepted spec is simulated: events, and simulated time.
const MAX_STEPS: u64 = 20_000;
const RUN_NS: u64 = 50_000_000;

// ---------------------------------------------------------------------------- the seeds

fn opp(khz: u64, power_uw: u64) -> Value {
    json!({"khz": khz, "power_uw": power_uw, "cluster_power_uw": power_uw / 4})
}

fn idle_states() -> Value {
    json!([
        {"name": "WFI", "level": "cpu", "exit_latency_ns": 1000, "target_residency_ns": 1000,
         "power_uw": 6000, "cluster_power_uw": 50000},
        {"name": "cpu-sleep", "level": "cpu", "exit_latency_ns": 150000, "target_residency_ns": 300000,
         "power_uw": 0, "cluster_power_uw": 50000},
        {"name": "cluster-sleep", "level": "cluster", "exit_latency_ns": 800000, "target_residency_ns": 2000000,
         "power_uw": 0, "cluster_power_uw": 0}
    ])
}

/// A big.LITTLE platform in the resolved form the Python loader hands the engine.
fn platform_seed() -> Value {
    json!({
        "name": "fuzz-bl", "power_model": "published",
        "clusters": [
            {"name": "little", "cpus": [0, 1], "capacity_orig": 446,
             "opps": [opp(450_000, 33_000), opp(700_000, 61_000), opp(850_000, 93_000)],
             "idle_states": idle_states()},
            {"name": "big", "cpus": [2, 3], "capacity_orig": 1024, "context_switch_ns": 3000,
             "opps": [opp(450_000, 168_000), opp(800_000, 359_000), opp(1_100_000, 616_000)],
             "idle_states": idle_states()}
        ],
        "idle_domains": [[0, 1]], "shared_llc": true, "switcher": false
    })
}

/// A workload that uses every event kind and task attribute at least once.
fn workload_seed() -> Value {
    json!({
        "name": "fuzz", "duration_ns": null, "timers": 2, "mutexes": 1, "conds": 1, "sems": [0],
        "barriers": [2], "marks": ["frame"],
        "tasks": [
            {"name": "ui", "nice": -10, "cpus": [0, 1, 2, 3], "util_min": 128, "util_max": 1024,
             "slice_ns": 3_000_000, "perf": {"ipc_exp": 1.0, "mem_frac": 0.1, "cache_ns": 1000, "cache_slowdown": 0.2},
             "phases": [
                {"loop": -1, "events": [
                    {"run": 2_000_000}, {"mark": 0}, {"lock": 0}, {"signal": 0}, {"unlock": 0},
                    {"sem_post": 0}, {"barrier": 0}, {"fork": 3},
                    {"timer": {"id": 0, "period_ns": 16_666_667, "mode": "absolute"}}]}
             ]},
            {"name": "render", "policy": "fifo", "rt_priority": 10, "delay_ns": 1_000_000,
             "phases": [
                {"loop": 3, "events": [{"sem_wait": 0}, {"runtime": 500_000}, {"memrun": 100_000},
                                       {"yield": null}, {"barrier": 0}]},
                {"loop": -1, "events": [{"sleep": 4_000_000}, {"iowait": 200_000},
                                        {"setattr": {"policy": "other", "nice": 5, "cpus": null,
                                                     "util_min": 0, "util_max": 512}},
                                        {"timer": {"id": 1, "period_ns": 8_000_000}}]}
             ]},
            {"name": "waiter", "loop": 5,
             "phases": [{"events": [{"lock": 0}, {"wait": {"cond": 0, "mutex": 0}}, {"unlock": 0},
                                    {"broad": 0}, {"sync": {"cond": 0, "mutex": 0}},
                                    {"sleep_until": 30_000_000}]}]},
            {"name": "worker", "start": false, "loop": 1, "stune": "top-app",
             "phases": [{"events": [{"run": 300_000}]}]},
            {"name": "dl", "policy": "deadline", "dl_runtime_ns": 1_000_000, "dl_period_ns": 10_000_000,
             "dl_deadline_ns": 5_000_000, "phases": [{"loop": -1, "events": [{"run": 500_000}, {"sleep": 9_000_000}]}]}
        ]
    })
}

fn policy_seed() -> Value {
    json!({"scheduler": "eas", "governor": "schedutil", "idle_governor": "menu", "kernel": "mainline-6.12",
           "knobs": {"schedutil.rate_limit_us": 500.0, "tick_hz": 250.0}, "trace": false, "timeseries": true,
           "lower_bound": "stream"})
}

// ---------------------------------------------------------------------------- edits

fn edge_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        Just(json!(true)),
        Just(json!(-1)),
        Just(json!(0)),
        Just(json!(1)),
        Just(json!(u64::MAX)),
        Just(json!(i64::MIN)),
        Just(json!(u32::MAX as u64 + 1)),
        Just(json!(1e308)),
        Just(json!(-1e308)),
        Just(json!(1e33)),
        Just(json!(0.5)),
        Just(json!(-0.0)),
        Just(json!("")),
        Just(json!("x")),
        Just(json!([])),
        Just(json!({})),
        Just(json!([0, 0, 0])),
        (0u64..5000).prop_map(|n| json!(n)),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("JSON has no NaN/inf", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        "[a-z_]{0,12}".prop_map(Value::String),
    ]
}

#[derive(Debug, Clone)]
enum Edit {
    /// the value at a path (picked by the index, modulo the number of paths) replaced
    Replace(usize, Value),
    Delete(usize),
    /// the array element duplicated, or the object given an extra key
    Grow(usize, Value),
    /// the value wrapped in that many arrays (serde_json stops at 128)
    Nest(usize, usize),
    /// the value replaced by an array of that many copies of it
    Repeat(usize, usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        4 => (any::<usize>(), edge_value()).prop_map(|(i, v)| Edit::Replace(i, v)),
        2 => any::<usize>().prop_map(Edit::Delete),
        2 => (any::<usize>(), edge_value()).prop_map(|(i, v)| Edit::Grow(i, v)),
        1 => (any::<usize>(), prop_oneof![Just(2usize), Just(127), Just(200), Just(1000)])
            .prop_map(|(i, d)| Edit::Nest(i, d)),
        1 => (any::<usize>(), prop_oneof![Just(64usize), Just(1000)]).prop_map(|(i, n)| Edit::Repeat(i, n)),
    ]
}

/// Every path into a document, parents before children: each a list of keys / indices.
fn paths(v: &Value) -> Vec<Vec<PathStep>> {
    fn walk(v: &Value, here: &mut Vec<PathStep>, out: &mut Vec<Vec<PathStep>>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    here.push(PathStep::Key(k.clone()));
                    out.push(here.clone());
                    walk(x, here, out);
                    here.pop();
                }
            }
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    here.push(PathStep::Index(i));
                    out.push(here.clone());
                    walk(x, here, out);
                    here.pop();
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(v, &mut Vec::new(), &mut out);
    out
}

#[derive(Debug, Clone)]
enum PathStep {
    Key(String),
    Index(usize),
}

/// The parent container of a path and the last step into it.
fn parent<'a>(doc: &'a mut Value, path: &[PathStep]) -> Option<(&'a mut Value, PathStep)> {
    let (last, init) = path.split_last()?;
    let mut cur = doc;
    for step in init {
        cur = match (step, cur) {
            (PathStep::Key(k), Value::Object(m)) => m.get_mut(k)?,
            (PathStep::Index(i), Value::Array(a)) => a.get_mut(*i)?,
            _ => return None,
        };
    }
    Some((cur, last.clone()))
}

fn slot<'a>(container: &'a mut Value, step: &PathStep) -> Option<&'a mut Value> {
    match (step, container) {
        (PathStep::Key(k), Value::Object(m)) => m.get_mut(k),
        (PathStep::Index(i), Value::Array(a)) => a.get_mut(*i),
        _ => None,
    }
}

fn apply(doc: &mut Value, e: &Edit) {
    let ps = paths(doc);
    if ps.is_empty() {
        return;
    }
    let pick = |i: usize| ps[i % ps.len()].clone();
    match e {
        Edit::Replace(i, v) => {
            if let Some((c, s)) = parent(doc, &pick(*i)) {
                if let Some(x) = slot(c, &s) {
                    *x = v.clone();
                }
            }
        }
        Edit::Delete(i) => {
            if let Some((c, s)) = parent(doc, &pick(*i)) {
                match (c, s) {
                    (Value::Object(m), PathStep::Key(k)) => {
                        m.remove(&k);
                    }
                    (Value::Array(a), PathStep::Index(j)) => {
                        a.remove(j);
                    }
                    _ => {}
                }
            }
        }
        Edit::Grow(i, v) => {
            if let Some((c, s)) = parent(doc, &pick(*i)) {
                match (c, s) {
                    (Value::Object(m), PathStep::Key(k)) => {
                        m.insert(format!("{k}_extra"), v.clone());
                    }
                    (Value::Array(a), PathStep::Index(j)) => {
                        let x = a[j].clone();
                        a.insert(j, x);
                    }
                    _ => {}
                }
            }
        }
        Edit::Nest(i, depth) => {
            if let Some((c, s)) = parent(doc, &pick(*i)) {
                if let Some(x) = slot(c, &s) {
                    let mut v = x.take();
                    for _ in 0..*depth {
                        v = Value::Array(vec![v]);
                    }
                    *x = v;
                }
            }
        }
        Edit::Repeat(i, n) => {
            if let Some((c, s)) = parent(doc, &pick(*i)) {
                if let Some(x) = slot(c, &s) {
                    let v = x.take();
                    *x = Value::Array(vec![v; *n]);
                }
            }
        }
    }
}

/// What is done to the text once the edits are made.
#[derive(Debug, Clone)]
enum TextEdit {
    None,
    /// cut at this fraction of the length
    Truncate(f64),
    /// the first number in the text (after this fraction) written as this literal
    Number(f64, &'static str),
    /// these characters inserted at this fraction
    Insert(f64, &'static str),
}

fn text_edit() -> impl Strategy<Value = TextEdit> {
    let frac = 0.0..1.0f64;
    prop_oneof![
        6 => Just(TextEdit::None),
        1 => frac.clone().prop_map(TextEdit::Truncate),
        2 => (frac.clone(), prop_oneof![Just("1e999"), Just("-1e999"), Just("18446744073709551616"), Just("1.0"),
                                       Just("-0"), Just("1e-400"), Just("NaN"), Just("Infinity"),
                                       Just("0x10"), Just("99999999999999999999999999999999")])
            .prop_map(|(f, n)| TextEdit::Number(f, n)),
        1 => (frac, prop_oneof![Just(","), Just("}"), Just("\u{0}"), Just("\u{feff}"), Just("\"\\ud800\""),
                                Just("/* */")])
            .prop_map(|(f, s)| TextEdit::Insert(f, s)),
    ]
}

fn at(text: &str, f: f64) -> usize {
    let mut i = ((text.len() as f64) * f) as usize;
    while i < text.len() && !text.is_char_boundary(i) {
        i += 1;
    }
    i.min(text.len())
}

fn apply_text(text: String, e: &TextEdit) -> String {
    match e {
        TextEdit::None => text,
        TextEdit::Truncate(f) => text[..at(&text, *f)].to_string(),
        TextEdit::Insert(f, s) => {
            let i = at(&text, *f);
            format!("{}{}{}", &text[..i], s, &text[i..])
        }
        TextEdit::Number(f, lit) => {
            let start = at(&text, *f);
            let b = text.as_bytes();
            let Some(off) = b[start..].iter().position(|c| c.is_ascii_digit()) else {
                return text;
            };
            let s = start + off;
            let mut e = s;
            while e < b.len() && (b[e].is_ascii_digit() || matches!(b[e], b'.' | b'e' | b'E' | b'+' | b'-')) {
                e += 1;
            }
            format!("{}{}{}", &text[..s], lit, &text[e..])
        }
    }
}

/// An edited seed: up to four edits, then perhaps a text edit.
fn edited(seed: fn() -> Value) -> impl Strategy<Value = String> {
    (prop::collection::vec(edit(), 1..4), text_edit()).prop_map(move |(edits, te)| {
        let mut doc = seed();
        for e in &edits {
            apply(&mut doc, e);
        }
        apply_text(doc.to_string(), &te)
    })
}

fn arbitrary_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        prop_oneof![
            Just("name".to_string()),
            Just("clusters".to_string()),
            Just("tasks".to_string()),
            Just("phases".to_string()),
            Just("events".to_string()),
            Just("run".to_string()),
            "[a-z_]{0,8}"
        ]
        .prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("name".to_string()),
                        Just("cpus".to_string()),
                        Just("opps".to_string()),
                        Just("tasks".to_string()),
                        Just("phases".to_string()),
                        Just("events".to_string()),
                        Just("loop".to_string()),
                        Just("knobs".to_string()),
                        "[a-z_]{1,8}"
                    ],
                    inner
                ),
                0..6
            )
            .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

// ---------------------------------------------------------------------------- the properties

/// Build a simulation from the three texts; if the engine accepts them, run it a little.
/// Panics (a test failure) only if the engine does.
fn build_and_run(platform: &str, workload: &str, policy: &str) -> bool {
    let Ok(mut sim) = build(platform, workload, policy) else {
        return false;
    };
    let mut steps = 0;
    while let Some(t) = sim.events.peek_time() {
        if t >= RUN_NS || steps >= MAX_STEPS {
            break;
        }
        if !sim.step() {
            break;
        }
        steps += 1;
    }
    let doc = sim.result_json();
    assert!(
        serde_json::from_str::<Value>(&doc).is_ok(),
        "the result is not JSON: {doc:.200}"
    );
    true
}

#[test]
fn the_seeds_are_accepted_and_run() {
    let (p, w, pol) = (
        platform_seed().to_string(),
        workload_seed().to_string(),
        policy_seed().to_string(),
    );
    Platform::from_json(&p).unwrap();
    WorkloadSpec::from_json(&w).unwrap();
    serde_json::from_str::<PolicyConfig>(&pol).unwrap();
    // every edit lands somewhere that matters only if the seeds themselves run
    assert!(build_and_run(&p, &w, &pol));
}

#[test]
fn a_document_past_the_depth_limit_is_an_error() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(Platform::from_json(&deep).is_err());
    assert!(WorkloadSpec::from_json(&deep).is_err());
    assert!(build(&platform_seed().to_string(), &deep, &policy_seed().to_string()).is_err());
}

/// Documents edits found to break the engine: (document, JSON pointer, value). Each edited
/// seed must be refused or simulate; the test names every one that does neither.
const FOUND: &[(&str, &str, &str)] = &[
    // u64 fields multiplied or added without a bound (energy_model.rs em_cost, costs.rs,
    // idle.rs): a debug build panicked, a release build wrapped to a wrong number
    ("platform", "/clusters/0/opps/2/khz", "18446744073709551615"),
    ("platform", "/clusters/1/opps/0/power_uw", "18446744073709551615"),
    (
        "platform",
        "/clusters/1/idle_states/0/exit_latency_ns",
        "18446744073709551615",
    ),
    ("platform", "/clusters/1/context_switch_ns", "18446744073709551615"),
    // a count the engine allocates for: capacity overflow (at 2^32 the allocation aborts the process)
    ("workload", "/timers", "9223372036854775807"),
    // event lengths added to the clock unchecked (workload/rtapp.rs): a release build wraps
    // the time of the event's end to before now
    ("workload", "/tasks/1/phases/0/events/1/runtime", "18446744073709551615"),
    ("workload", "/tasks/1/phases/0/events/2/memrun", "18446744073709551615"),
    ("workload", "/tasks/4/phases/0/events/1/sleep", "18446744073709551615"),
    ("workload", "/tasks/4/phases/0/events/0/run", "18446744073709551615"),
];

fn edited_seed(doc: &str, pointer: &str, value: &str) -> (String, String, String) {
    let (mut p, mut w, mut pol) = (platform_seed(), workload_seed(), policy_seed());
    let target = match doc {
        "platform" => &mut p,
        "workload" => &mut w,
        _ => &mut pol,
    };
    *target
        .pointer_mut(pointer)
        .unwrap_or_else(|| panic!("{doc}{pointer}: not in the seed")) = serde_json::from_str(value).unwrap();
    (p.to_string(), w.to_string(), pol.to_string())
}

#[test]
fn every_edit_found_to_break_the_engine_is_refused_or_simulates() {
    let mut broken = Vec::new();
    for &(doc, pointer, value) in FOUND {
        let (p, w, pol) = edited_seed(doc, pointer, value);
        if let Err(e) = std::panic::catch_unwind(|| build_and_run(&p, &w, &pol)) {
            let why = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()));
            broken.push(format!(
                "{doc}{pointer} = {value}: panicked: {}",
                why.unwrap_or_default()
            ));
        }
    }
    assert!(
        broken.is_empty(),
        "{} of {} found edits still break the engine:\n{}",
        broken.len(),
        FOUND.len(),
        broken.join("\n")
    );
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_json_is_a_spec_or_an_error(doc in arbitrary_json()) {
        let text = doc.to_string();
        let _ = Platform::from_json(&text);
        let _ = WorkloadSpec::from_json(&text);
        let _ = serde_json::from_str::<PolicyConfig>(&text);
    }

    #[test]
    fn an_edited_platform_is_refused_or_simulates(p in edited(platform_seed)) {
        let _ = Platform::from_json(&p);
        build_and_run(&p, &workload_seed().to_string(), &policy_seed().to_string());
    }

    #[test]
    fn an_edited_workload_is_refused_or_simulates(w in edited(workload_seed)) {
        let _ = WorkloadSpec::from_json(&w);
        build_and_run(&platform_seed().to_string(), &w, &policy_seed().to_string());
    }

    #[test]
    fn an_edited_policy_is_refused_or_simulates(pol in edited(policy_seed), sched in prop_oneof![
        Just("cfs"), Just("eas"), Just("gts"), Just("baseline"), Just("fa-cfs"), Just("hcs-balance"),
        Just("hcs-td"), Just("learning-eas")], gov in prop_oneof![
        Just("schedutil"), Just("ondemand"), Just("conservative"), Just("interactive"), Just("userspace"),
        Just("performance"), Just("powersave")], kernel in prop_oneof![
        Just("mainline-6.12"), Just("android-4.19"), Just("msm-4.14")]) {
        let _ = serde_json::from_str::<PolicyConfig>(&pol);
        build_and_run(&platform_seed().to_string(), &workload_seed().to_string(), &pol);
        // the same edits on each registered scheduler, governor and kernel profile
        if let Ok(Value::Object(mut m)) = serde_json::from_str::<Value>(&pol) {
            m.insert("scheduler".into(), json!(sched));
            m.insert("governor".into(), json!(gov));
            m.insert("kernel".into(), json!(kernel));
            build_and_run(&platform_seed().to_string(), &workload_seed().to_string(), &Value::Object(m).to_string());
        }
    }

    #[test]
    fn knob_values_at_the_edges_are_refused_or_simulate(
        knob in 0usize..1000, edge in 0usize..6, value in prop_oneof![
            Just(0.0), Just(-1.0), Just(1e308), Just(-1e308), Just(f64::MIN_POSITIVE), Just(1e-300),
            Just(u64::MAX as f64), Just(0.5), Just(1.0), Just(1e12), any::<f64>().prop_filter("finite", |f| f.is_finite())]) {
        // every knob of the engine's table, at its bounds, just past them, or anywhere
        let k = &KNOBS[knob % KNOBS.len()];
        let v = [k.min, k.max, k.min - 1.0, k.max + 1.0, value, value][edge];
        let mut pol = policy_seed();
        pol["knobs"] = json!({k.name: v});
        build_and_run(&platform_seed().to_string(), &workload_seed().to_string(), &pol.to_string());
    }
}
