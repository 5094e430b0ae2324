//! hcs-td: the self-tuning scheduler of Fedorova, Vengerov, Doucette, "Operating System
//! Scheduling On Heterogeneous Core Systems" §5: per core i a benefit
//! function learned by TD(0),
//!
//! ```text
//!     B_i(s, p) = sum_n p_n phi_n(s)                                        (eq. 3)
//!     migrate k from i to j  iff  B_{i,k-} + B_{j,k+} > B_{i,0} + B_{j,0}
//!                                                  + a D_CAB + b D_RTF        (eq. 4)
//!     p(t+1) = p(t) + alpha_t [r_t + gamma B(s_{t+1}, p(t)) - B(s_t, p(t))] phi(s_t)  (eq. 5)
//! ```
//!
//! The state s of a core is the average over the threads on it of (eq. 2's normalised
//! core preference NCP, cache affinity within rechoose_interval, cache miss rate); the
//! basis functions are `BASIS`. This module is the pure part (state, B, eq. 4, eq. 5, the
//! predicted CAB and RTF); `sim_hcs_td.rs` reads the simulation into `Thread`s, applies
//! the migrations and feeds the per-core work counters in.

/// Names of the basis functions phi_n(s), s = (ncp, aff, miss) the core's averages.
pub const BASIS: [&str; NB] = ["1", "ncp", "aff", "miss", "aff*(1-miss)"];
/// Number of basis functions.
pub const NB: usize = 5;

/// A thread as hcs-td sees it at a decision.
#[derive(Debug, Clone)]
pub struct Thread {
    pub task: u32,
    /// the core it is assigned to (its runqueue)
    pub cpu: usize,
    /// CFS load weight (nice)
    pub weight: u64,
    /// queued, not running, fair: may be migrated
    pub movable: bool,
    pub allowed: u64,
    /// NCP_{k,c} per core c (eq. 2)
    pub ncp: Vec<f64>,
    /// cache affinity with core c: ran there within rechoose_interval
    pub aff: Vec<bool>,
    /// cache miss rate stand-in (the perf model's mem_frac)
    pub miss: f64,
    /// run time so far on each core, ns (for CAB_J)
    pub ran_ns: Vec<u64>,
}

/// Parameters (knobs `hcs_td.*`).
#[derive(Debug, Clone, Copy)]
pub struct Params {
    pub gamma: f64,
    pub alpha0: f64,
    pub a: f64,
    pub b: f64,
    pub eps: f64,
    /// F of Def. 3; <= 0: 1.1 x jobs / cores (as metrics004)
    pub f: f64,
    /// CFS: sched_latency and min_granularity (effective, ns) and sched_nr_latency
    pub latency_ns: u64,
    pub min_gran_ns: u64,
    pub nr_latency: u64,
}

/// The learner's state and counters.
#[derive(Debug, Clone)]
pub struct HcsTd {
    pub params: Params,
    /// p^i per core
    pub p: Vec<[f64; NB]>,
    /// TD(0) updates done per core (t of alpha_t = alpha0 / t)
    pub updates: Vec<u64>,
    /// invariant work executed on each core (`Rq::work_done`), read at each decision
    pub work: Vec<u64>,
    /// at the last decision: time, each core's work, each core's post-decision phi
    pub last_t: Option<u64>,
    pub last_work: Vec<u64>,
    pub last_phi: Vec<[f64; NB]>,
    pub decisions: u64,
    pub migrations: u64,
    /// candidate (thread, destination) pairs evaluated with eq. 4
    pub evaluations: u64,
    /// next decision time, ns
    pub next_ns: u64,
    /// last time each task executed on each core (ns + 1; 0: never), [task][core]
    pub last_exec: Vec<Vec<u64>>,
}

/// The state of a core under an assignment: the averages (ncp, aff, miss) of its threads,
/// None for a core without threads.
pub fn state(threads: &[Thread], assign: &[usize], core: usize) -> Option<[f64; 3]> {
    let mut s = [0.0; 3];
    let mut n = 0usize;
    for (x, &c) in threads.iter().zip(assign) {
        if c == core {
            s[0] += x.ncp[core];
            s[1] += if x.aff[core] { 1.0 } else { 0.0 };
            s[2] += x.miss;
            n += 1;
        }
    }
    if n == 0 {
        return None;
    }
    Some(s.map(|v| v / n as f64))
}

/// phi(s): (1, ncp, aff, miss, aff (1 - miss)); a core without threads has phi = 0 (and
/// so B = 0: no thread, no instructions).
pub fn phi(s: Option<[f64; 3]>) -> [f64; NB] {
    match s {
        None => [0.0; NB],
        Some([ncp, aff, miss]) => [1.0, ncp, aff, miss, aff * (1.0 - miss)],
    }
}

/// B(s, p) = sum_n p_n phi_n(s) (eq. 3)
pub fn benefit(p: &[f64; NB], phi: &[f64; NB]) -> f64 {
    p.iter().zip(phi).map(|(a, b)| a * b).sum()
}

/// One TD(0) step (eq. 5): p += alpha [r + gamma B(s_next, p) - B(s_t, p)] phi(s_t).
pub fn td_update(p: &mut [f64; NB], alpha: f64, gamma: f64, r: f64, phi_t: &[f64; NB], phi_next: &[f64; NB]) {
    let delta = r + gamma * benefit(p, phi_next) - benefit(p, phi_t);
    for n in 0..NB {
        p[n] += alpha * delta * phi_t[n];
    }
}

/// eq. 4: take the migration when B_{i,k-} + B_{j,k+} > B_{i,0} + B_{j,0} + a D_CAB + b D_RTF;
/// `moved` = (B_{i,k-}, B_{j,k+}), `stay` = (B_{i,0}, B_{j,0}), `d` = (D_CAB, D_RTF).
pub fn eq4(moved: (f64, f64), stay: (f64, f64), a: f64, b: f64, d: (f64, f64)) -> bool {
    moved.0 + moved.1 > stay.0 + stay.1 + a * d.0 + b * d.1
}

/// Per core: (threads, total weight) under an assignment.
fn loads(threads: &[Thread], assign: &[usize], ncores: usize) -> Vec<(u64, u64)> {
    let mut l = vec![(0u64, 0u64); ncores];
    for (x, &c) in threads.iter().zip(assign) {
        l[c].0 += 1;
        l[c].1 += x.weight;
    }
    l
}

impl Params {
    /// CFS's sched_slice for a thread of weight w on a core with n threads of total weight W:
    /// period = latency, or n x min_granularity beyond sched_nr_latency; slice = period w / W.
    pub fn slice_ns(&self, w: u64, n: u64, total_w: u64) -> u64 {
        let period = if n > self.nr_latency {
            n * self.min_gran_ns
        } else {
            self.latency_ns
        };
        (period as u128 * w as u128 / total_w.max(1) as u128) as u64
    }

    fn f_for(&self, jobs: usize, ncores: usize) -> f64 {
        if self.f > 0.0 {
            self.f
        } else {
            1.1 * jobs as f64 / ncores as f64
        }
    }
}

/// System-wide CAB (Def. 2, a fraction): the share of threads whose CAB_J (the population
/// standard deviation of their run-time fractions over the cores) is <= eps, after every
/// thread ran its next CFS slice on its assigned core.
pub fn cab_system(threads: &[Thread], assign: &[usize], ncores: usize, pr: &Params) -> f64 {
    if threads.is_empty() {
        return 1.0;
    }
    let l = loads(threads, assign, ncores);
    let mut ok = 0usize;
    for (x, &c) in threads.iter().zip(assign) {
        // the thread's run time per core after its next slice on c, read in place (no Vec
        // per thread: eq. 4 evaluates this for every thread at every candidate move)
        let slice = pr.slice_ns(x.weight, l[c].0, l[c].1) as f64;
        let ran = |i: usize| {
            let v = x.ran_ns[i] as f64;
            if i == c {
                v + slice
            } else {
                v
            }
        };
        let cores = 0..x.ran_ns.len();
        let tot: f64 = cores.clone().map(ran).sum();
        let cab = if tot > 0.0 {
            let mean = 1.0 / ncores as f64;
            (cores.map(|i| (ran(i) / tot - mean).powi(2)).sum::<f64>() / ncores as f64).sqrt()
        } else {
            0.0
        };
        if cab <= pr.eps {
            ok += 1;
        }
    }
    ok as f64 / threads.len() as f64
}

/// System-wide RTF (Def. 4A, a fraction): the share of sub-jobs (each thread's next slice)
/// with slowdown S = (wait + run) / run <= F, where a thread of weight w on a core of total
/// weight W waits for the others' slices: S = W / w.
pub fn rtf_system(threads: &[Thread], assign: &[usize], ncores: usize, pr: &Params) -> f64 {
    if threads.is_empty() {
        return 1.0;
    }
    let f = pr.f_for(threads.len(), ncores);
    let l = loads(threads, assign, ncores);
    let ok = threads
        .iter()
        .zip(assign)
        .filter(|(x, &c)| l[c].1 as f64 / x.weight.max(1) as f64 <= f)
        .count();
    ok as f64 / threads.len() as f64
}

/// A migration eq. 4 takes: thread index, source, destination, and its margin
/// (left side - right side, > 0).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Choice {
    pub k: usize,
    pub src: usize,
    pub dst: usize,
    pub margin: f64,
}

impl HcsTd {
    pub fn new(ncores: usize, ntasks: usize, params: Params) -> Self {
        HcsTd {
            params,
            p: vec![[0.0; NB]; ncores],
            updates: vec![0; ncores],
            work: vec![0; ncores],
            last_t: None,
            last_work: vec![0; ncores],
            last_phi: vec![[0.0; NB]; ncores],
            decisions: 0,
            migrations: 0,
            evaluations: 0,
            next_ns: 0,
            last_exec: vec![vec![0; ncores]; ntasks],
        }
    }

    /// Record that `task` executes on `core` at `now`.
    pub fn ran(&mut self, task: usize, core: usize, now: u64) {
        if task >= self.last_exec.len() {
            self.last_exec.resize(task + 1, vec![0; self.work.len()]);
        }
        self.last_exec[task][core] = now + 1;
    }

    /// The TD(0) step of every core at a decision at `now` (eq. 5): r_t = the core's
    /// instruction rate since the last decision (invariant work per ns), s_t the state
    /// left by the last decision, s_{t+1} the state now; alpha_t = alpha0 / t.
    pub fn learn(&mut self, now: u64, phi_now: &[[f64; NB]]) {
        if let Some(t0) = self.last_t {
            let dt = now.saturating_sub(t0);
            if dt > 0 {
                for (i, phi_next) in phi_now.iter().enumerate() {
                    let r = (self.work[i] - self.last_work[i]) as f64 / dt as f64;
                    self.updates[i] += 1;
                    let alpha = self.params.alpha0 / self.updates[i] as f64;
                    td_update(&mut self.p[i], alpha, self.params.gamma, r, &self.last_phi[i], phi_next);
                }
            }
        }
    }

    /// Remember the post-decision state and the work counters for the next step.
    pub fn mark(&mut self, now: u64, phi_after: Vec<[f64; NB]>) {
        self.last_t = Some(now);
        self.last_work.clone_from(&self.work);
        self.last_phi = phi_after;
    }

    /// Evaluate eq. 4 for every movable thread k on its core i and every other core j it
    /// may run on; the migration with the largest margin, if any margin is > 0.
    pub fn choose(&mut self, threads: &[Thread], ncores: usize) -> Option<Choice> {
        let pr = self.params;
        let assign: Vec<usize> = threads.iter().map(|x| x.cpu).collect();
        let b0: Vec<f64> = (0..ncores)
            .map(|c| benefit(&self.p[c], &phi(state(threads, &assign, c))))
            .collect();
        let cab0 = cab_system(threads, &assign, ncores, &pr);
        let rtf0 = rtf_system(threads, &assign, ncores, &pr);
        let mut best: Option<Choice> = None;
        let mut alt = assign.clone();
        for (k, x) in threads.iter().enumerate() {
            if !x.movable {
                continue;
            }
            let i = x.cpu;
            for j in 0..ncores {
                if j == i || x.allowed & (1u64 << j) == 0 {
                    continue;
                }
                self.evaluations += 1;
                alt[k] = j;
                let bi = benefit(&self.p[i], &phi(state(threads, &alt, i)));
                let bj = benefit(&self.p[j], &phi(state(threads, &alt, j)));
                let d_cab = cab_system(threads, &alt, ncores, &pr) - cab0;
                let d_rtf = rtf_system(threads, &alt, ncores, &pr) - rtf0;
                alt[k] = i;
                if eq4((bi, bj), (b0[i], b0[j]), pr.a, pr.b, (d_cab, d_rtf)) {
                    let margin = bi + bj - (b0[i] + b0[j] + pr.a * d_cab + pr.b * d_rtf);
                    if best.is_none_or(|c| margin > c.margin) {
                        best = Some(Choice {
                            k,
                            src: i,
                            dst: j,
                            margin,
                        });
                    }
                }
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn td0_step_by_hand() {
        // p = (1, 2, 0, 0, 0); s_t: ncp 0.5, aff 1, miss 0.2 -> phi_t = (1, .5, 1, .2, .8);
        // B(s_t) = 1 + 1 = 2; s_next: ncp 1, aff 0, miss 0 -> phi = (1, 1, 0, 0, 0), B = 3;
        // r = 0.7, gamma 0.9, alpha 0.5: delta = 0.7 + 2.7 - 2 = 1.4; p += 0.7 phi_t
        let mut p = [1.0, 2.0, 0.0, 0.0, 0.0];
        let pt = phi(Some([0.5, 1.0, 0.2]));
        assert_eq!(pt, [1.0, 0.5, 1.0, 0.2, 0.8]);
        td_update(&mut p, 0.5, 0.9, 0.7, &pt, &phi(Some([1.0, 0.0, 0.0])));
        let want = [1.7, 2.35, 0.7, 0.14, 0.56];
        for n in 0..NB {
            assert!((p[n] - want[n]).abs() < 1e-12, "{p:?}");
        }
    }
}

// ---------------------------------------------------------------------------------------
// The `hcs-td` policy: the learner on the engine. What it reads of the simulation, the
// decision at regular intervals, and the migrations eq. 4 takes.
//
// State variables (what the engine knows in place of the hardware counters):
// * NCP_{k,c} (eq. 2) = IPC_{k,c} / max_m IPC_{k,m}, IPC in reference cycles: the task's
//   invariant work rate on core c at the current OPP of c's cluster (its perf model:
//   (1 - mem_frac) F / (u f) + mem_frac ns per unit of work; without a perf model,
//   capacity x f / f_max), over its best core's;
// * cache affinity with core c: 1 if the task executed on c within rechoose_interval
//   (running there now, or its last execution there ended that recently; sampled at the
//   ticks and exact for the CPU it last ran on);
// * cache miss rate: the perf model's mem_frac (the share of its time stalled on DRAM; 0
//   without a perf model).

use super::cfs::Cfs;
use super::{PolicyCtx, PolicyInfo, Requires, SchedPolicy, WakeKind};
use crate::balance::Migration;
use crate::core::{SchedView, Sim, TaskId};
use crate::fair::CfsTunables;
use crate::features::{Knob, Knobs};
use crate::workload::Policy;

pub static INFO: PolicyInfo = PolicyInfo {
    name: "hcs-td",
    summary: "cfs plus the self-tuning scheduler of Fedorova et al. (§5): per CPU a benefit function of (NCP, cache affinity, miss rate) learned by TD(0); every hcs_td.interval_ms the queued task migration with the largest margin in eq. 4 is taken",
    source: "Fedorova et al. §5, eqs. 2-5 (the self-tuning scheduler)",
    knobs: &["hcs_td."],
    requires: Requires::NONE,
    differences: "The paper outlines the algorithm as future work; the choices it leaves open are knobs with stated assumptions (hcs_td.interval_ms, a, b, cab_eps, rtf_f, max_migrations). The hardware counters are stand-ins: the core preference is the task's work rate per core from its perf model, cache affinity is whether it ran on the CPU within rechoose_interval, the miss rate is the perf model's memory fraction, the instruction count is the CPU's invariant work (Rq::work_done).",
    status: "Measured in docs/schedulers.md (its hcs-td section: IPC, CAB, RTF against cfs and hcs-balance).",
    controller: None,
    build: |ctx: &PolicyCtx| {
        let n = ctx.platform.nr_cpus();
        let params = params(ctx.knobs, &CfsTunables::from_knobs(n, ctx.knobs));
        Box::new(HcsTdPolicy {
            cfs: Cfs::default(),
            td: HcsTd::new(n, ctx.nr_tasks, params),
        })
    },
};

pub struct HcsTdPolicy {
    cfs: Cfs,
    pub td: HcsTd,
}

fn params(knobs: &Knobs, tunables: &CfsTunables) -> Params {
    let k = |x| knobs.get(x);
    Params {
        gamma: k(Knob::HcsTdGamma),
        alpha0: k(Knob::HcsTdAlpha0),
        a: k(Knob::HcsTdA),
        b: k(Knob::HcsTdB),
        eps: k(Knob::HcsTdCabEps),
        f: k(Knob::HcsTdRtfF),
        latency_ns: tunables.latency,
        min_gran_ns: tunables.min_granularity,
        nr_latency: tunables.nr_latency,
    }
}

/// Work rate of task `t` on `cpu` at its cluster's current OPP (relative units).
fn rate(s: &Sim, t: TaskId, cpu: usize) -> f64 {
    let ci = s.platform.cpu_cluster[cpu];
    let opp = s.clusters[ci].opp;
    match &s.tasks[t as usize].perf {
        Some(pf) => pf.rate_q32[ci][opp] as f64,
        None => {
            let c = &s.platform.clusters[ci];
            c.capacity_orig as f64 * c.opps[opp].khz as f64 / c.fmax_khz as f64
        }
    }
}

/// The fair tasks on the runqueues as hcs-td sees them now (a run with `hcs-td` only;
/// for tests and inspection).
pub fn threads(s: &Sim) -> Vec<Thread> {
    let p = s.policy.as_any().downcast_ref::<HcsTdPolicy>().expect("hcs-td");
    threads_of(s, &p.td)
}

/// The fair tasks on the runqueues, as hcs-td sees them.
fn threads_of(s: &Sim, td: &HcsTd) -> Vec<Thread> {
    let n = s.rqs.len();
    let now = s.now;
    let rechoose = (s.knobs.get(Knob::HcsTdRechooseMs) * 1e6) as u64;
    let mut out = Vec::new();
    for cpu in 0..n {
        let rq = &s.rqs[cpu];
        let queued = rq.cfs.timeline.iter().map(|&(_, t)| (t, true));
        for (t, movable) in rq.curr.map(|t| (t, false)).into_iter().chain(queued) {
            let task = &s.tasks[t as usize];
            if task.policy != Policy::Other {
                continue;
            }
            let rates: Vec<f64> = (0..n).map(|c| rate(s, t, c)).collect();
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

fn phis(ncores: usize, threads: &[Thread]) -> Vec<[f64; NB]> {
    let assign: Vec<usize> = threads.iter().map(|x| x.cpu).collect();
    (0..ncores).map(|c| phi(state(threads, &assign, c))).collect()
}

impl SchedPolicy for HcsTdPolicy {
    fn placement(&self) -> &'static str {
        self.cfs.placement()
    }

    fn select_task_rq(&mut self, v: &SchedView, p: TaskId, prev_cpu: usize, kind: WakeKind) -> usize {
        self.cfs.select_task_rq(v, p, prev_cpu, kind)
    }

    /// At the tick of a busy CPU: note that its task executes there; at the first tick at
    /// or after the next decision time, the TD(0) step and the migration decision.
    fn task_tick(&mut self, s: &mut Sim, cpu: usize, _curr: TaskId) {
        let now = s.now;
        let td = &mut self.td;
        if let Some(t) = s.rqs[cpu].curr {
            td.ran(t as usize, cpu, now);
        }
        if now < td.next_ns {
            return;
        }
        let interval = (s.knobs.get(Knob::HcsTdIntervalMs) * 1e6) as u64;
        let max_mig = s.knobs.get(Knob::HcsTdMaxMigrations) as u64;
        let n = s.rqs.len();
        for c in 0..n {
            s.account_progress(c); // the work counters up to now
            if let Some(t) = s.rqs[c].curr {
                td.ran(t as usize, c, now);
            }
        }
        let threads = threads_of(s, td);
        let phi_now = phis(n, &threads);
        td.params = params(&s.knobs, &s.tunables);
        td.next_ns = now + interval.max(1);
        td.decisions += 1;
        td.work = s.rqs.iter().map(|rq| rq.work_done).collect();
        td.learn(now, &phi_now);
        let mut threads = threads;
        for _ in 0..max_mig {
            let Some(ch) = self.td.choose(&threads, n) else { break };
            let t = threads[ch.k].task;
            s.migrate_queued(
                Migration {
                    task: t,
                    src: ch.src,
                    dst: ch.dst,
                },
                true,
            );
            self.td.migrations += 1;
            threads = threads_of(s, &self.td);
        }
        let after = phis(n, &threads);
        // the migrations accounted the destinations' running tasks up to now
        self.td.work = s.rqs.iter().map(|rq| rq.work_done).collect();
        self.td.mark(now, after);
    }

    fn counters(&self) -> Vec<(&'static str, serde_json::Value)> {
        let td = &self.td;
        vec![
            ("decisions", td.decisions.into()),
            ("migrations", td.migrations.into()),
            ("evaluations", td.evaluations.into()),
            ("td_updates", serde_json::json!(td.updates)),
            ("basis", serde_json::json!(BASIS)),
            ("p", serde_json::json!(td.p)),
        ]
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
