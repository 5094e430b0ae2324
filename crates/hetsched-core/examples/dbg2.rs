fn main() {
    let p = std::fs::read_to_string("/tmp/pj.json").unwrap();
    let w = std::fs::read_to_string("/tmp/w3.json").unwrap();
    let mut sim = hetsched_core::build(&p, &w, r#"{"scheduler": "eas"}"#).unwrap();
    for k in 1..12 {
        sim.run_until(k * 50_000_000);
        let rq: Vec<String> = sim
            .rqs
            .iter()
            .map(|r| format!("{}:{}/{}", r.cpu, r.cfs.avg.util_avg, r.cfs.util_est))
            .collect();
        let ts: Vec<String> = sim
            .tasks
            .iter()
            .map(|t| {
                format!(
                    "{}@{}:{}/{} {:?} att={}",
                    t.name,
                    t.cpu,
                    t.se.avg.util_avg,
                    t.se.avg.ewma(),
                    t.state,
                    t.se.attached
                )
            })
            .collect();
        println!("{} ou={} {:?}\n   {:?}", sim.now / 1_000_000, sim.overutilized, rq, ts);
    }
}
