//! The engine's part of `result.json`: energy, residencies, per-task statistics, counters
//! and the rt-app metrics, computed from the state at the current time.

use crate::core::Sim;
use crate::lower_bound::LowerBoundMode;
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{json, Map, Value};

const NS: f64 = 1e9;

/// Nearest-rank percentile of the samples counted in `counts` ((value, samples), sorted by
/// value; a value may repeat), `n` samples in all.
fn percentile(counts: &[(u64, u64)], n: u64, q: f64) -> u64 {
    if n == 0 {
        return 0;
    }
    let rank = ((q * n as f64).ceil() as u64).clamp(1, n);
    let mut below = 0;
    for &(v, c) in counts {
        below += c;
        if below >= rank {
            return v;
        }
    }
    unreachable!("{n} samples counted, fewer held")
}

impl Sim {
    /// The energy lower bound: streamed, `{"energy_j"}`; recorded, the
    /// per-window work table python/hetsched/lower_bound.py solves (window end times, and
    /// rows (window, task, work, memrun work, runtime ns); the window still open at `now`
    /// is closed here); off, null. Python replaces it with `energy_lower_bound_j`.
    fn lower_bound_doc(&self) -> Value {
        let lb = &self.lb;
        match lb.mode {
            LowerBoundMode::Off => Value::Null,
            LowerBoundMode::Stream => json!({"energy_j": lb.energy_j(self)}),
            LowerBoundMode::Record => {
                let mut rows: Vec<Value> = lb.rows.iter().map(|r| json!([r.0, r.1, r.2, r.3, r.4])).collect();
                let mut ends = lb.ends.clone();
                if ends.last().copied().unwrap_or(0) < self.now {
                    let w = ends.len();
                    rows.extend(lb.deltas(self).map(|(i, d)| json!([w, i, d[0], d[1], d[2]])));
                    ends.push(self.now);
                }
                json!({"ends_ns": ends, "rows": rows})
            }
        }
    }

    pub fn result(&self) -> Value {
        let mut out = self.result_doc();
        out["marks"] = self.marks.iter().map(|&(t, task, m)| json!([t, task, m])).collect();
        out
    }

    /// `result()` as JSON text. The marks grow with the run (a game's frames, 60 a second)
    /// and are written straight from `self.marks`: as a JSON tree they took about 150 bytes
    /// each besides their text, 30 MB at the end of an hour of `game`.
    pub fn result_json(&self) -> String {
        let doc = self.result_doc();
        let mut buf = Vec::with_capacity(64 * 1024 + 24 * self.marks.len());
        serde_json::to_writer(&mut buf, &WithMarks(&doc, &self.marks)).expect("a result document is JSON");
        String::from_utf8(buf).expect("serde_json writes UTF-8")
    }

    /// The result with `marks` null, in its place among the keys.
    fn result_doc(&self) -> Value {
        let mut out = self.result_base();
        self.switcher_result(&mut out); // the big.LITTLE switcher study (Kim et al.)
                                        // only in a run a deadlock stopped: the others' documents are as before
        if let Some(d) = self.deadlock_doc() {
            out["deadlock"] = d;
        }
        out
    }

    /// The document's sections, each from its own function below; then the policy's and
    /// the extensions' sections.
    fn result_base(&self) -> Value {
        let dur = self.now;
        let total_fj = self.meter.total_fj();
        let energy_j = total_fj as f64 * 1e-15;
        let popped = &self.events.popped_by_class;
        let mut r = json!({
            "sim_duration_s": dur as f64 / NS,
            "events": self.events.popped,
            "events_by_class": {
                "freq_commit": popped[0],
                "complete": popped[1],
                "cpu_ready": popped[2],
                "wakeup": popped[3],
                "tick": popped[4],
                "governor_sample": popped[5],
                "sample": popped[6],
                "max_queue_len": self.events.max_len,
            },
            "energy_j": energy_j,
            "energy_fj": total_fj.to_string(),
            "avg_power_mw": if dur > 0 { energy_j / (dur as f64 / NS) * 1e3 } else { 0.0 },
            "clusters": self.clusters_doc(),
            "cpus": self.cpus_doc(),
            "tasks": self.tasks_doc(),
            "_lower_bound": self.lower_bound_doc(),
            "marks": null,
            "counters": self.counters_doc(),
            "metrics": self.metrics_doc(),
            "eas": match &self.eas_status {
                None => Value::Null,
                Some(Ok(())) => json!({"enabled": true}),
                Some(Err(why)) => json!({"enabled": false, "reason": why}),
            },
            "policy": {
                "name": self.config.scheduler,
                "placement": self.placement_name(),
                "balancer": self.balancer_name(),
                "fair_class": if self.fair_eevdf { "eevdf" } else { "cfs" },
                "governor": self.governor_name(),
                "idle_governor": self.config.idle_governor,
            },
        });
        self.result_policy(&mut r);
        for e in &self.extensions {
            e.result(self, &mut r);
        }
        r
    }

    /// `cpus`: per CPU, its busy time, energy, and residencies per OPP and per idle
    /// state (what cpufreq's stats and cpuidle's per-state `time` report), and its
    /// context switches.
    fn cpus_doc(&self) -> Vec<Value> {
        let p = &self.platform;
        (0..p.nr_cpus())
            .map(|cpu| {
                let c = p.cluster_of(cpu);
                let m = &self.meter.cpus[cpu];
                let mut fres = Map::new();
                for (i, o) in c.opps.iter().enumerate() {
                    fres.insert(o.khz.to_string(), json!(m.freq_residency_ns[i] as f64 / NS));
                }
                let mut ires = Map::new();
                for (i, s) in c.idle_states.iter().enumerate() {
                    ires.insert(s.name.clone(), json!(m.idle_residency_ns[i] as f64 / NS));
                }
                json!({
                    "cpu": cpu,
                    "cluster": c.name,
                    "capacity": c.capacity_orig,
                    "busy_s": m.busy_ns as f64 / NS,
                    "energy_j": m.energy_fj as f64 * 1e-15,
                    "freq_residency_s": fres,
                    "idle_residency_s": ires,
                    "nr_switches": self.rqs[cpu].nr_switches,
                })
            })
            .collect()
    }

    /// `clusters`: per cluster, its CPUs' energy with the cluster's own term, that term
    /// alone, and its time in each OPP (cpufreq's `time_in_state`).
    fn clusters_doc(&self) -> Vec<Value> {
        self.platform
            .clusters
            .iter()
            .enumerate()
            .map(|(ci, c)| {
                let cpu_j: u128 = c.cpus.iter().map(|&x| self.meter.cpus[x].energy_fj).sum();
                let cm = &self.meter.clusters[ci];
                let cl = cm.energy_fj;
                let mut tis = Map::new();
                for (o, ns) in c.opps.iter().zip(&cm.time_in_state_ns) {
                    tis.insert(o.khz.to_string(), json!(*ns as f64 / NS));
                }
                json!({
                    "cluster": c.name,
                    "cpus": c.cpus,
                    "energy_j": (cpu_j + cl) as f64 * 1e-15,
                    "cluster_term_energy_j": cl as f64 * 1e-15,
                    "time_in_state_s": tis,
                })
            })
            .collect()
    }

    /// `tasks`: per task, its CPU time per CPU, waits, migrations, wakeups, the rt-app
    /// metrics of its activations, and per phase of its program.
    fn tasks_doc(&self) -> Vec<Value> {
        self.tasks
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let ct = self.task_cpu_time(i);
                let mut per = Map::new();
                for (cpu, ns) in ct.iter().enumerate() {
                    if *ns > 0 {
                        per.insert(cpu.to_string(), json!(*ns as f64 / NS));
                    }
                }
                let s = &t.stats;
                json!({
                    "name": t.name,
                    "pid": i + 1,
                    "policy": format!("{:?}", t.policy).to_lowercase(),
                    "nice": t.nice,
                    "cpu_time_s": per,
                    "runtime_s": ct.iter().sum::<u64>() as f64 / NS,
                    "wait_s": s.wait_ns as f64 / NS,
                    "migrations": s.migrations,
                    "nr_wakeups": s.nr_wakeups,
                    "activations": s.activations,
                    "missed_activations": s.missed_activations,
                    "wakeup_latency_us_max": s.wakeup_latency_ns.max().unwrap_or(0) as f64 / 1e3,
                    "work_completed_us": s.work_completed as f64 / 1e3,
                    "iowait_s": s.iowait_ns as f64 / NS,
                    "dl_throttled": s.dl_throttled,
                    "state": format!("{:?}", t.state).to_lowercase(),
                    "phases": s.phases.iter().enumerate().map(|(pi, ps)| json!({
                        "phase": pi,
                        "loops": ps.loops,
                        "activations": ps.activations,
                        "slack_us_min": ps.slack_min_ns.map(|x| x as f64 / 1e3),
                        "slack_us_mean": if ps.activations > 0 { Some(ps.slack_sum_ns as f64 / ps.activations as f64 / 1e3) } else { None },
                        "wu_lat_us_max": ps.wu_lat_max_ns as f64 / 1e3,
                        "wu_lat_us_mean": if ps.wakeups > 0 { ps.wu_lat_sum_ns as f64 / ps.wakeups as f64 / 1e3 } else { 0.0 },
                        "run_s": ps.run_ns as f64 / NS,
                    })).collect::<Vec<_>>(),
                })
            })
            .collect()
    }

    /// `metrics`: the rt-app metrics over every task: activations missed, mean slack,
    /// and the wakeup latency's mean, nearest-rank p50 and p99, and maximum over all of
    /// the tasks' wakeups.
    fn metrics_doc(&self) -> Value {
        // every task's wakeups, as (latency, wakeups)
        let mut all_lat: Vec<(u64, u64)> = Vec::new();
        let (mut lat_n, mut lat_sum) = (0u64, 0u64);
        let (mut act, mut missed) = (0u64, 0u64);
        let mut slack: i128 = 0;
        for t in &self.tasks {
            let s = &t.stats;
            all_lat.extend(s.wakeup_latency_ns.iter());
            lat_n += s.wakeup_latency_ns.len();
            lat_sum += s.wakeup_latency_ns.sum();
            act += s.activations;
            missed += s.missed_activations;
            slack += s.slack_sum_ns;
        }
        all_lat.sort_unstable();
        let mean_lat = if lat_n == 0 {
            0.0
        } else {
            lat_sum as f64 / lat_n as f64 / 1e3
        };
        json!({
            "activations": act,
            "missed_activations": missed,
            "missed_activation_pct": if act > 0 { 100.0 * missed as f64 / act as f64 } else { 0.0 },
            "slack_us_mean": if act > 0 { slack as f64 / act as f64 / 1e3 } else { 0.0 },
            "wakeup_latency_us_mean": mean_lat,
            "wakeup_latency_us_p50": percentile(&all_lat, lat_n, 0.5) as f64 / 1e3,
            "wakeup_latency_us_p99": percentile(&all_lat, lat_n, 0.99) as f64 / 1e3,
            "wakeup_latency_us_max": all_lat.last().map_or(0, |&(v, _)| v) as f64 / 1e3,
        })
    }

    /// `counters`: the core's counters and the balancer's attempts and successes (by
    /// kind and, for the kernel's balancer, by domain, as schedstat's lb_count and
    /// lb_balanced are kept per domain); the scheduler's modelled cost when costs are
    /// on; WALT's and schedtune's activity under msm-4.14. `counters.policy` is
    /// `result_policy`'s.
    fn counters_doc(&self) -> Value {
        let c = &self.counters;
        let lb = self.balancer.as_ref().map(|b| b.stats()).unwrap_or_default();
        let mut counters = json!({
            "wakeups": c.wakeups,
            "context_switches": c.context_switches,
            "migrations": c.migrations,
            "freq_changes": c.freq_changes,
            "balance_attempts": lb.totals().attempts,
            "balance_successes": lb.totals().successes,
            "balance_domains": lb.domains.as_ref().map(|d| {
                d.iter().map(|(name, s)| (name.to_string(), json!({"attempts": s.attempts, "successes": s.successes}))).collect::<Map<String, Value>>()
            }),
            "overutilized_set": c.overutilized_set,
            "delayed_dequeues": c.delayed_dequeues,
            "delayed_requeues": c.delayed_requeues,
            "preempt_short": c.preempt_short,
            "sync_misuse": self.sync.misuse,
            "misfit_balance_attempts": lb.misfit.attempts,
            "misfit_balance_successes": lb.misfit.successes,
            "periodic_balance_attempts": lb.periodic.attempts,
            "idle_ticks": c.idle_ticks,
            "periodic_balance_successes": lb.periodic.successes,
            "newidle_balance_attempts": lb.newidle.attempts,
            "newidle_balance_successes": lb.newidle.successes,
        });
        if c.cost_work > 0 {
            // the scheduler's own work (costs.rs), as ns on a capacity-1024 CPU at f_max;
            // absent when every cost is 0, as before costs were modelled
            counters["sched_cost_ns"] = json!({
                "total": c.cost_work,
                "context_switch": c.cost_context_switch,
                "migration": c.cost_migration,
                "placement": c.cost_placement,
                "balance": c.cost_balance,
            });
        }
        if let Some(w) = self.walt.as_ref() {
            // the msm-4.14 profile built with WALT: its activity
            let wc = &w.counters;
            counters["walt"] = json!({
                "sched_ravg_window_ns": w.tun.window,
                "windows": wc.windows,
                "inter_cluster_fixups": wc.inter_cluster_fixups,
                "freq_reports": wc.freq_updates,
                "freq_reports_filtered": wc.freq_updates_filtered,
                "hispeed_raises": self.governor.walt_raises()[0],
                "nl_max": self.governor.walt_raises()[1],
                "pl_raises": self.governor.walt_raises()[2],
            });
        }
        // the msm-4.14 profile, with WALT or without: schedtune's groups and placements
        if let Some(st) = self.stune.as_ref() {
            let groups: Map<String, Value> = crate::schedtune::GROUPS
                .iter()
                .enumerate()
                .map(|(g, name)| {
                    let tasks = st.task_group.iter().filter(|&&x| x == g).count();
                    (
                        name.to_string(),
                        json!({"boost": st.boost[g], "prefer_idle": st.prefer_idle[g], "tasks": tasks}),
                    )
                })
                .collect();
            counters["schedtune"] = json!({
                "groups": groups,
                "prefer_idle_placements": self.policy_counter("schedtune.prefer_idle"),
            });
        }
        counters
    }

    /// The policy's counters (`SchedPolicy::counters`) under one key, `counters.policy`
    /// (`policy.name` says which policy), and the sections of its own.
    fn result_policy(&self, r: &mut Value) {
        let own: Map<String, Value> = self
            .policy
            .counters()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        r["counters"]["policy"] = Value::Object(own);
        self.policy.result(&self.sched_view(), r);
    }
}

/// A result document written with its `marks` entry taken from the run's list.
struct WithMarks<'a>(&'a Value, &'a [(u64, u32, u32)]);

impl Serialize for WithMarks<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Value::Object(doc) = self.0 else {
            return self.0.serialize(s);
        };
        let mut m = s.serialize_map(Some(doc.len()))?;
        for (k, v) in doc {
            if k == "marks" {
                m.serialize_entry(k, self.1)?;
            } else {
                m.serialize_entry(k, v)?;
            }
        }
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::percentile;
    use crate::sched::WakeupLatencies;

    /// Nearest-rank over every sample, as the result read it when each wakeup was kept.
    fn percentile_of_samples(sorted: &[u64], q: f64) -> u64 {
        if sorted.is_empty() {
            return 0;
        }
        let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
        sorted[rank - 1]
    }

    #[test]
    fn counted_latencies_give_the_percentiles_of_every_sample() {
        let mut x: u64 = 12345;
        for n in [0usize, 1, 2, 3, 7, 100, 101, 999, 5000] {
            for spread in [1u64, 5, 300, 1 << 40] {
                let mut tasks = vec![WakeupLatencies::default(); 4];
                let mut samples = Vec::new();
                for i in 0..n {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    let v = (x >> 24) % spread;
                    tasks[i % 3].push(v); // one task never wakes
                    samples.push(v);
                }
                samples.sort_unstable();
                let mut all: Vec<(u64, u64)> = tasks.iter().flat_map(|t| t.iter()).collect();
                all.sort_unstable();
                let total: u64 = tasks.iter().map(|t| t.len()).sum();
                assert_eq!(total, n as u64);
                for q in [0.0, 0.01, 0.5, 0.9, 0.99, 0.999, 1.0] {
                    assert_eq!(
                        percentile(&all, total, q),
                        percentile_of_samples(&samples, q),
                        "n={n} q={q}"
                    );
                }
                let sum: u64 = tasks.iter().map(|t| t.sum()).sum();
                assert_eq!(sum, samples.iter().sum::<u64>());
                assert_eq!(tasks.iter().filter_map(|t| t.max()).max(), samples.last().copied());
                assert!(tasks.iter().all(|t| t.distinct() as u64 <= spread));
            }
        }
    }
}
