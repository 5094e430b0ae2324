//! hcs-td's hooks into the simulation (paper 004 §5, the learner in `hcs_td.rs`): the
//! state variables read from the engine, the decision at regular intervals, and the
//! migrations eq. 4 takes. A child module of `sim`, as `sim_issue5.rs`.
//!
//! State variables (what the engine knows in place of the hardware counters):
//! * NCP_{k,c} (eq. 2) = IPC_{k,c} / max_m IPC_{k,m}, IPC in reference cycles: the task's
//!   invariant work rate on core c at the current OPP of c's cluster (its perf model:
//!   (1 - mem_frac) F / (u f) + mem_frac ns per unit of work; without a perf model,
//!   capacity x f / f_max), over its best core's;
//! * cache affinity with core c: 1 if the task executed on c within rechoose_interval
//!   (running there now, or its last execution there ended that recently; sampled at the
//!   ticks and exact for the CPU it last ran on);
//! * cache miss rate: the perf model's mem_frac (the share of its time stalled on DRAM; 0
//!   without a perf model).

use super::{Sim, TaskId};
use crate::balance::Migration;
use crate::features::Knob;
use crate::hcs_td::{phi, state, Params, Thread, NB};
use crate::workload::Policy;

impl Sim {
    pub(super) fn hcs_td_params(&self) -> Params {
        let k = |x| self.knobs.get(x);
        Params {
            gamma: k(Knob::HcsTdGamma),
            alpha0: k(Knob::HcsTdAlpha0),
            a: k(Knob::HcsTdA),
            b: k(Knob::HcsTdB),
            eps: k(Knob::HcsTdCabEps),
            f: k(Knob::HcsTdRtfF),
            latency_ns: self.tunables.latency,
            min_gran_ns: self.tunables.min_granularity,
            nr_latency: self.tunables.nr_latency,
        }
    }

    /// Work rate of task `t` on `cpu` at its cluster's current OPP (relative units).
    fn hcs_td_rate(&self, t: TaskId, cpu: usize) -> f64 {
        let ci = self.platform.cpu_cluster[cpu];
        let opp = self.clusters[ci].opp;
        match &self.tasks[t as usize].perf {
            Some(pf) => pf.rate_q32[ci][opp] as f64,
            None => {
                let c = &self.platform.clusters[ci];
                c.capacity_orig as f64 * c.opps[opp].khz as f64 / c.fmax_khz as f64
            }
        }
    }

    /// The fair tasks on the runqueues as hcs-td sees them now (`hcs-td` only; for tests
    /// and inspection).
    pub fn hcs_td_view(&self) -> Vec<Thread> {
        self.hcs_td_threads()
    }

    /// The fair tasks on the runqueues, as hcs-td sees them.
    fn hcs_td_threads(&self) -> Vec<Thread> {
        let n = self.rqs.len();
        let now = self.now;
        let rechoose = (self.knobs.get(Knob::HcsTdRechooseMs) * 1e6) as u64;
        let td = self.hcs_td.as_ref().expect("hcs-td");
        let mut out = Vec::new();
        for cpu in 0..n {
            let rq = &self.rqs[cpu];
            let queued = rq.cfs.timeline.iter().map(|&(_, t)| (t, true));
            for (t, movable) in rq.curr.map(|t| (t, false)).into_iter().chain(queued) {
                let task = &self.tasks[t as usize];
                if task.policy != Policy::Other {
                    continue;
                }
                let rates: Vec<f64> = (0..n).map(|c| self.hcs_td_rate(t, c)).collect();
                let best = rates.iter().cloned().fold(0.0f64, f64::max).max(f64::MIN_POSITIVE);
                let aff = (0..n)
                    .map(|c| {
                        if rq.curr == Some(t) && c == cpu {
                            return true;
                        }
                        let mut last = td.last_exec.get(t as usize).map_or(0, |v| v[c]);
                        if task.last_ran == c {
                            last = last.max(task.se.exec_start + 1);
                        }
                        last > 0 && now + 1 - last <= rechoose
                    })
                    .collect();
                out.push(Thread {
                    task: t,
                    cpu,
                    weight: task.se.weight,
                    movable,
                    allowed: task.allowed,
                    ncp: rates.iter().map(|r| r / best).collect(),
                    aff,
                    miss: task.spec.perf.as_ref().map_or(0.0, |p| p.mem_frac),
                    ran_ns: task.stats.cpu_time_ns.clone(),
                });
            }
        }
        out
    }

    fn hcs_td_phis(&self, threads: &[Thread]) -> Vec<[f64; NB]> {
        let assign: Vec<usize> = threads.iter().map(|x| x.cpu).collect();
        (0..self.rqs.len()).map(|c| phi(state(threads, &assign, c))).collect()
    }

    /// At the tick of a busy CPU: note that its task executes there; at the first tick at
    /// or after the next decision time, the TD(0) step and the migration decision.
    pub(super) fn hcs_td_tick(&mut self, cpu: usize) {
        let now = self.now;
        if let (Some(t), Some(td)) = (self.rqs[cpu].curr, self.hcs_td.as_mut()) {
            td.ran(t as usize, cpu, now);
        }
        if self.hcs_td.as_ref().is_none_or(|td| now < td.next_ns) {
            return;
        }
        let interval = (self.knobs.get(Knob::HcsTdIntervalMs) * 1e6) as u64;
        let max_mig = self.knobs.get(Knob::HcsTdMaxMigrations) as u64;
        let params = self.hcs_td_params();
        for c in 0..self.rqs.len() {
            self.update_curr(c); // the work counters up to now
            if let (Some(t), Some(td)) = (self.rqs[c].curr, self.hcs_td.as_mut()) {
                td.ran(t as usize, c, now);
            }
        }
        let threads = self.hcs_td_threads();
        let phis = self.hcs_td_phis(&threads);
        let td = self.hcs_td.as_mut().unwrap();
        td.params = params;
        td.next_ns = now + interval.max(1);
        td.decisions += 1;
        td.learn(now, &phis);
        let mut threads = threads;
        for _ in 0..max_mig {
            let ncores = self.rqs.len();
            let choice = self.hcs_td.as_mut().unwrap().choose(&threads, ncores);
            let Some(ch) = choice else { break };
            let t = threads[ch.k].task;
            self.migrate_queued(
                Migration {
                    task: t,
                    src: ch.src,
                    dst: ch.dst,
                },
                true,
            );
            self.hcs_td.as_mut().unwrap().migrations += 1;
            threads = self.hcs_td_threads();
        }
        let after = self.hcs_td_phis(&threads);
        self.hcs_td.as_mut().unwrap().mark(now, after);
    }
}
