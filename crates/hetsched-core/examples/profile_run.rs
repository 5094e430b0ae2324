//! Run one simulation from resolved spec files, for profilers (perf, valgrind):
//! `cargo run --release --example profile_run -- PLATFORM.json WORKLOAD.json SECONDS [REPEAT]`
//! (write the specs with `hetsched.platforms.load_platform(..).to_spec()` and
//! `hetsched.workloads.builtin.resolve_workloads(..)`). The environment variable POLICY
//! sets the PolicyConfig JSON (default `{"governor": "schedutil"}`).

use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: profile_run PLATFORM.json WORKLOAD.json SECONDS [REPEAT]");
        std::process::exit(2);
    }
    let p = std::fs::read_to_string(&args[1]).expect("platform file");
    let w = std::fs::read_to_string(&args[2]).expect("workload file");
    let secs: f64 = args[3].parse().expect("seconds");
    let repeat: usize = args.get(4).map(|r| r.parse().expect("repeat")).unwrap_or(1);
    for _ in 0..repeat {
        let policy = std::env::var("POLICY").unwrap_or_else(|_| r#"{"governor": "schedutil"}"#.into());
        let mut sim = hetsched_core::build(&p, &w, &policy).expect("valid specs");
        let t = Instant::now();
        sim.run_until((secs * 1e9) as u64);
        let wall = t.elapsed().as_secs_f64();
        println!(
            "{:.4} s wall, {:.0}x real time, {} events, {:.2} M events/s",
            wall,
            secs / wall,
            sim.events.popped,
            sim.events.popped as f64 / wall / 1e6
        );
        // the event mix, to see which class a change of the work per event should target
        println!(
            "  by class (FreqCommit, Complete, CpuReady, Wakeup, Tick, GovSample, Sample, FairServer, RtPeriod): {:?}, queue at most {}",
            sim.events.popped_by_class, sim.events.max_len
        );
    }
}
