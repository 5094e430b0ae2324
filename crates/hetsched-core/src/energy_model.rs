//! The Energy Model and EAS's energy estimate, after include/linux/energy_model.h,
//! kernel/power/energy_model.c and kernel/sched/fair.c (v6.12; linux-eas.md §4-5).
//!
//! A perf domain (pd) is a cluster: its CPUs share a frequency. Each performance state has
//! `performance = capacity_orig * f / f_max`, the power of one CPU, and
//! `cost = 10 * power / performance` (em_compute_costs); walking from the top state down,
//! a state whose cost is not below the cheapest higher state is INEFFICIENT and skipped
//! (the pd has SKIP_INEFFICIENCIES, as with schedutil). `em_cpu_energy` is then
//! `cost_i * sum_util` for the lowest efficient state whose performance covers the pd's
//! max util. The EM knows no idle power, as in the kernel.
//!
//! `find_energy_efficient_cpu` works on a `FeecInput`, the per-CPU signals the kernel reads
//! (util_avg, runnable_avg, util_est, RT util, capacity) and the waking task's, so that the
//! engine and the Python what-if API share one implementation, uclamp included (the task's
//! clamps merge with each candidate rq's); IRQ and DL load are 0.
//!
//! The android-4.19 profile switches to the v4.19/5.4 formulation (cost = power x f_max/f,
//! the headroom inside the frequency mapping, feec's 1/16 margin).
//! docs/mechanisms/energy_model.md works the costs, the estimate and feec by hand.

use crate::error::{config, Result};
use crate::platform::Platform;

/// One perf domain as a plain table: its CPUs and its (performance, power µW) states.
pub type DomainTable = (Vec<usize>, Vec<(u64, u64)>);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PerfState {
    pub khz: u64,
    pub performance: u64,
    pub power_uw: u64,
    pub cost: u64,
    pub inefficient: bool,
}

#[derive(Debug, Clone)]
pub struct PerfDomain {
    pub cpus: Vec<usize>,
    pub capacity_orig: u64,
    pub states: Vec<PerfState>,
}

/// The root domain's perf domains, in the kernel's `rd->pd` order: built by walking CPUs
/// upwards and prepending each new pd, so descending by first CPU.
#[derive(Debug, Clone)]
pub struct EnergyModel {
    pub pds: Vec<PerfDomain>,
    /// perf domain of each CPU
    pub cpu_pd: Vec<usize>,
    /// the v4.19/5.4 formulation (android-4.19 profile): cost = P·f_max/f, the headroom
    /// inside the frequency mapping, no inefficient states, feec's 6% margin
    pub legacy: bool,
    // --- vendor (OSPM 2020 talk) hook: vendor.migration_margins ---
    /// Per-CPU fit percentage replacing feec's fits test (util * 100 < capacity * pct);
    /// empty (the default) keeps the kernel's util_fits_cpu. Set by `vendor.rs`.
    pub fit_pct: Vec<u64>,
    // --- end vendor hook ---
}

/// em_compute_costs() (v6.12): cost = 10 * power / performance; inefficiency from the top.
fn compute_costs(states: &mut [PerfState]) {
    for s in states.iter_mut() {
        s.cost = 10 * s.power_uw / s.performance.max(1);
    }
    let mut min_cost = u64::MAX;
    for s in states.iter_mut().rev() {
        s.inefficient = s.cost >= min_cost;
        min_cost = min_cost.min(s.cost);
    }
}

/// One cluster's OPPs as the EM's performance states, costs not yet computed
/// (em_create_perf_table(): performance = capacity · f / f_max).
fn perf_states(c: &crate::platform::Cluster) -> Vec<PerfState> {
    c.opps
        .iter()
        .map(|o| PerfState {
            khz: o.khz,
            performance: c.capacity_orig * o.khz / c.fmax_khz,
            power_uw: o.power_uw,
            cost: 0,
            inefficient: false,
        })
        .collect()
}

/// The EM's EM_PERF_STATE_INEFFICIENT flags for one cluster's OPP table (v6.12): what
/// em_cpufreq_update_efficiencies() hands to cpufreq as CPUFREQ_INEFFICIENT_FREQ, so that
/// schedutil's frequency resolution (CPUFREQ_RELATION_E) skips the same states the energy
/// estimate does. Built from the same performance states as `from_platform`.
pub fn inefficient_opps(c: &crate::platform::Cluster) -> Vec<bool> {
    let mut states = perf_states(c);
    compute_costs(&mut states);
    states.iter().map(|s| s.inefficient).collect()
}

impl EnergyModel {
    pub fn from_platform(p: &Platform) -> EnergyModel {
        // a perf domain per cpufreq policy with CPUs: a switcher platform's cluster whose
        // cores back no virtual CPU has none (em_dev_register_perf_domain() is called for
        // the policies that exist)
        let doms = p
            .clusters
            .iter()
            .filter(|c| !c.cpus.is_empty())
            .map(|c| (c.cpus.clone(), c.capacity_orig, perf_states(c)))
            .collect();
        Self::build(doms)
    }

    /// A model from plain (performance, power) tables: the `EnergyModel.from_table` of the
    /// Python API. A pd's capacity is its top performance.
    pub fn from_table(domains: &[DomainTable]) -> Result<EnergyModel> {
        let mut doms = Vec::new();
        let mut seen = Vec::new();
        for (i, (cpus, opps)) in domains.iter().enumerate() {
            let f = |s: &str| format!("domains[{i}].{s}");
            if cpus.is_empty() {
                return Err(config("energy model", f("cpus"), "a non-empty list of CPU numbers"));
            }
            if opps.is_empty() {
                return Err(config("energy model", f("opps"), "at least one (capacity, power) pair"));
            }
            for w in opps.windows(2) {
                if w[1].0 <= w[0].0 {
                    return Err(config("energy model", f("opps"), "capacities strictly ascending"));
                }
            }
            if opps.iter().any(|&(c, p)| c == 0 || c > 1024 || p == 0) {
                return Err(config(
                    "energy model",
                    f("opps"),
                    "capacities in 1..=1024 and positive powers",
                ));
            }
            seen.extend(cpus.iter().copied());
            let states = opps
                .iter()
                .map(|&(perf, power)| PerfState {
                    khz: perf,
                    performance: perf,
                    power_uw: power,
                    cost: 0,
                    inefficient: false,
                })
                .collect();
            doms.push((cpus.clone(), opps.last().unwrap().0, states));
        }
        seen.sort_unstable();
        if seen.iter().enumerate().any(|(i, &c)| i != c) {
            return Err(config(
                "energy model",
                "domains[].cpus",
                "each CPU 0..N-1 in exactly one domain",
            ));
        }
        Ok(Self::build(doms))
    }

    fn build(mut doms: Vec<(Vec<usize>, u64, Vec<PerfState>)>) -> EnergyModel {
        let n = doms.iter().map(|d| d.0.len()).sum();
        doms.sort_by_key(|d| std::cmp::Reverse(*d.0.iter().min().unwrap()));
        let mut cpu_pd = vec![0; n];
        let pds = doms
            .into_iter()
            .enumerate()
            .map(|(i, (mut cpus, capacity_orig, mut states))| {
                cpus.sort_unstable();
                for &c in &cpus {
                    cpu_pd[c] = i;
                }
                compute_costs(&mut states);
                PerfDomain {
                    cpus,
                    capacity_orig,
                    states,
                }
            })
            .collect();
        EnergyModel {
            pds,
            cpu_pd,
            legacy: false,
            fit_pct: Vec::new(),
        }
    }

    /// Switch to the v4.19/5.4 Energy Model: em_create_pd()'s cost = power · f_max / f,
    /// and no state is flagged inefficient (that came with 5.16).
    pub fn set_legacy(&mut self) {
        for pd in &mut self.pds {
            let fmax = pd.states.last().unwrap().khz;
            for s in &mut pd.states {
                s.cost = s.power_uw * fmax / s.khz.max(1);
                s.inefficient = false;
            }
        }
        self.legacy = true;
    }

    /// Whether EAS can run: more than one CPU capacity (an SD_ASYM_CPUCAPACITY domain).
    pub fn asymmetric(&self) -> bool {
        self.pds.iter().any(|pd| pd.capacity_orig != self.pds[0].capacity_orig)
    }
}

impl PerfDomain {
    /// em_cpu_energy() (v6.12): the lowest efficient state covering max_util (capped at
    /// allowed_cap), else the highest; energy = cost * sum_util.
    /// em_pd_energy() of v4.19/5.4: the 1.25 headroom is inside map_util_freq(), the state
    /// is the lowest whose frequency covers it, and energy = cost · sum_util / capacity.
    pub fn em_cpu_energy_legacy(&self, max_util: u64, sum_util: u64) -> u64 {
        let fmax = self.states.last().unwrap().khz;
        let freq = (fmax + (fmax >> 2)) * max_util / self.capacity_orig;
        let ps = self
            .states
            .iter()
            .find(|s| s.khz >= freq)
            .unwrap_or_else(|| self.states.last().unwrap());
        ps.cost * sum_util / self.capacity_orig
    }

    pub fn em_cpu_energy(&self, max_util: u64, sum_util: u64, allowed_cap: u64) -> u64 {
        if sum_util == 0 {
            return 0;
        }
        let m = max_util.min(allowed_cap);
        let ps = self
            .states
            .iter()
            .find(|s| !s.inefficient && s.performance >= m)
            .unwrap_or_else(|| self.states.last().unwrap());
        ps.cost * sum_util
    }
}

/// map_util_perf(): the 1.25 DVFS headroom, util + util/4.
#[inline]
pub fn map_util_perf(util: u64) -> u64 {
    util + (util >> 2)
}

/// What find_energy_efficient_cpu() reads, per CPU and of the waking task.
#[derive(Debug, Clone, Default)]
pub struct FeecInput {
    pub util_avg: Vec<u64>,
    pub runnable_avg: Vec<u64>,
    /// cfs_rq util_est (sum of the enqueued tasks' ewma)
    pub util_est: Vec<u64>,
    pub util_rt: Vec<u64>,
    pub rt_runnable: Vec<bool>,
    /// cpu_bw_dl() per CPU (the fair server's bandwidth while started); empty: none
    pub dl_bw: Vec<u64>,
    pub capacity_orig: Vec<u64>,
    /// capacity_of(): capacity_orig less RT pressure
    pub capacity: Vec<u64>,
    /// the waking task
    pub task_util: u64,
    pub task_ewma: u64,
    /// task_on_rq_queued(p) || current == p (false for a waking task)
    pub task_queued: bool,
    pub prev_cpu: usize,
    pub allowed: u64,
    /// uclamp_is_used(), the task's effective clamps, and each rq's clamps and idle flag
    pub uclamp_used: bool,
    pub p_uclamp: [u64; 2],
    pub rq_uclamp: Vec<[u64; 2]>,
    pub rq_uclamp_idle: Vec<bool>,
    /// DVFS headroom in 1/10000 (0 or 12500: the kernel's util + util/4)
    pub headroom_permyriad: u64,
    /// msm-4.14 (WALT): `util_avg` holds each CPU's cumulative_runnable_avg_scaled, which a
    /// waking task is in nowhere (cpu_util_next_walt() adds it on the destination only);
    /// the fit test takes at least `task_min_util`, the boosted_task_util() (with WALT or,
    /// in the tree built without it, on PELT; 0 outside msm-4.14)
    pub walt: bool,
    pub task_min_util: u64,
}

/// The outcome: the CPU, and every candidate evaluated with its energy delta over its pd's
/// energy without the task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeecResult {
    pub cpu: usize,
    pub candidates: Vec<(usize, u64)>,
}

impl FeecInput {
    /// cpu_util(cpu, p, dst, boost)
    pub fn cpu_util(&self, cpu: usize, dst: Option<usize>, boost: bool) -> u64 {
        if self.walt {
            let add = if dst == Some(cpu) { self.task_util } else { 0 };
            return (self.util_avg[cpu] + add).min(self.capacity_orig[cpu]);
        }
        let mut u = self.util_avg[cpu];
        if boost {
            u = u.max(self.runnable_avg[cpu]);
        }
        let p_here = self.prev_cpu == cpu;
        if p_here && dst != Some(cpu) {
            u = u.saturating_sub(self.task_util);
        } else if !p_here && dst == Some(cpu) {
            u += self.task_util;
        }
        let mut e = self.util_est[cpu];
        if dst == Some(cpu) {
            e += self.task_ewma;
        } else if p_here && self.task_queued {
            e = e.saturating_sub(self.task_ewma);
        }
        u.max(e).min(self.capacity_orig[cpu])
    }

    /// effective_cpu_util() without IRQ or DL tasks' util: (util, min, max), min taking
    /// the running DL bandwidth (the fair server's, `dl_bw`; none where not given)
    fn effective_cpu_util(&self, cpu: usize, util: u64) -> (u64, u64, u64) {
        let s = self.capacity_orig[cpu];
        let dl_bw = self.dl_bw.get(cpu).copied().unwrap_or(0);
        let (min, max) = if self.uclamp_used {
            (self.rq_uclamp[cpu][0].max(dl_bw), self.rq_uclamp[cpu][1].min(s))
        } else {
            (if self.rt_runnable[cpu] { s } else { dl_bw }, s)
        };
        let u = util + self.util_rt[cpu];
        (u.min(s), min, max)
    }

    /// map_util_perf() with this input's headroom.
    fn headroom(&self, u: u64) -> u64 {
        match self.headroom_permyriad {
            0 | 12_500 => map_util_perf(u),
            h => u * h / 10_000,
        }
    }

    /// task_util_est()
    pub fn task_util_est(&self) -> u64 {
        self.task_util.max(self.task_ewma)
    }
}

/// eenv_pd_busy_time(): the pd's busy time without the task, capped at its capacity.
fn pd_busy_time(pd: &PerfDomain, inp: &FeecInput) -> u64 {
    let pd_cap = pd.capacity_orig * pd.cpus.len() as u64;
    pd.cpus
        .iter()
        .map(|&c| inp.effective_cpu_util(c, inp.cpu_util(c, None, false)).0)
        .sum::<u64>()
        .min(pd_cap)
}

/// compute_energy(): the pd's energy with the task on `dst` (None: nowhere in this pd).
fn compute_energy(
    pd: &PerfDomain,
    inp: &FeecInput,
    dst: Option<usize>,
    pd_busy: u64,
    task_busy: u64,
    legacy: bool,
) -> u64 {
    let cap = pd.capacity_orig;
    let pd_cap = cap * pd.cpus.len() as u64;
    let mut max_util = 0;
    for &c in &pd.cpus {
        // eenv_pd_max_util() reads the runnable boost (v6.5); 4.19's cpu_util_next() has none
        let (eff, mut min, mut max) = inp.effective_cpu_util(c, inp.cpu_util(c, dst, !legacy));
        if inp.uclamp_used && dst == Some(c) {
            // the task's clamps join the destination rq's
            let [pmin, pmax] = inp.p_uclamp;
            min = min.max(pmin);
            max = if inp.rq_uclamp_idle[c] { pmax } else { max.max(pmax) };
        }
        // sugov_effective_cpu_perf(); v4.19/5.4: schedutil_cpu_util(FREQUENCY_UTIL), the
        // headroom being applied later in the EM
        let perf = if legacy {
            min.max(eff.min(max))
        } else {
            min.max(inp.headroom(eff).min(max))
        };
        max_util = max_util.max(perf);
    }
    let busy = (pd_busy + if dst.is_some() { task_busy } else { 0 }).min(pd_cap);
    if legacy {
        pd.em_cpu_energy_legacy(max_util.min(cap), busy)
    } else {
        pd.em_cpu_energy(max_util.min(cap), busy, cap)
    }
}

impl EnergyModel {
    /// find_energy_efficient_cpu() (v6.12, identical in 6.18), uclamp included (the task's
    /// and the runqueues' clamps, when some task sets one).
    pub fn find_energy_efficient_cpu(&self, inp: &FeecInput) -> FeecResult {
        if self.legacy {
            return self.feec_v5_4(inp);
        }
        let prev = inp.prev_cpu;
        let mut out = FeecResult {
            cpu: prev,
            candidates: Vec::new(),
        };
        if inp.task_util_est() == 0 && inp.p_uclamp[0] == 0 {
            return out;
        }
        let task_busy = inp.task_util_est();
        let (mut best, mut best_delta, mut prev_delta) = (prev, u64::MAX, u64::MAX);
        let (mut best_fits, mut prev_fits) = (-1i32, -1i32);
        let (mut best_cap, mut prev_cap) = (0u64, 0u64);
        for pd in &self.pds {
            let cap = pd.capacity_orig;
            let mut prev_spare: i64 = -1;
            let (mut cand, mut cand_spare, mut cand_fits) = (None, -1i64, -1i32);
            // initialised once per pd: merged rq clamps persist over the following CPUs,
            // a kernel quirk kept as is
            let [mut umin, mut umax] = inp.p_uclamp;
            for &c in &pd.cpus {
                if inp.allowed & (1u64 << c) == 0 {
                    continue;
                }
                let u = inp.cpu_util(c, Some(c), false);
                if inp.uclamp_used && !inp.rq_uclamp_idle[c] {
                    umin = inp.rq_uclamp[c][0].max(inp.p_uclamp[0]);
                    umax = inp.rq_uclamp[c][1].max(inp.p_uclamp[1]);
                }
                let fits = if self.fit_pct.is_empty() {
                    crate::uclamp::util_fits_cpu(u, umin, umax, inp.capacity[c], inp.capacity_orig[c], inp.uclamp_used)
                } else {
                    // vendor.migration_margins (vendor.rs)
                    (u * 100 < inp.capacity[c] * self.fit_pct[c]) as i32
                };
                if fits == 0 {
                    continue;
                }
                let spare = inp.capacity[c].saturating_sub(u) as i64;
                if c == prev {
                    prev_spare = spare;
                    prev_fits = fits;
                } else if fits > cand_fits || (fits == cand_fits && spare > cand_spare) {
                    (cand, cand_spare, cand_fits) = (Some(c), spare, fits);
                }
            }
            if cand.is_none() && prev_spare < 0 {
                continue;
            }
            let pd_busy = pd_busy_time(pd, inp);
            let base = compute_energy(pd, inp, None, pd_busy, task_busy, false);
            if prev_spare >= 0 {
                let e = compute_energy(pd, inp, Some(prev), pd_busy, task_busy, false);
                if e < base {
                    return FeecResult {
                        cpu: prev,
                        candidates: out.candidates,
                    };
                }
                prev_delta = e - base;
                prev_cap = cap;
                best_delta = best_delta.min(prev_delta);
                out.candidates.push((prev, prev_delta));
            }
            if let Some(c) = cand {
                if cand_spare > prev_spare {
                    if cand_fits < best_fits || (cand_fits < 0 && cap <= best_cap) {
                        continue;
                    }
                    let e = compute_energy(pd, inp, Some(c), pd_busy, task_busy, false);
                    if e < base {
                        return FeecResult {
                            cpu: prev,
                            candidates: out.candidates,
                        };
                    }
                    let d = e - base;
                    out.candidates.push((c, d));
                    if cand_fits > 0 && best_fits > 0 && d >= best_delta {
                        continue;
                    }
                    (best, best_delta, best_fits, best_cap) = (c, d, cand_fits, cap);
                }
            }
        }
        let take_best = best_fits > prev_fits
            || (best_fits > 0 && best_delta < prev_delta)
            || (best_fits < 0 && best_cap > prev_cap);
        out.cpu = if take_best { best } else { prev };
        out
    }

    /// find_energy_efficient_cpu() of v4.19/5.4: candidates are prev_cpu and each pd's
    /// max-spare-capacity CPU among those the task fits (`fits_capacity` on the util
    /// clamped by uclamp_rq_util_with); the best CPU is taken only if prev_cpu cannot be used
    /// or the best saves more than 1/16 (~6%) of prev's delta plus the base energy of all
    /// pds.
    fn feec_v5_4(&self, inp: &FeecInput) -> FeecResult {
        let prev = inp.prev_cpu;
        let mut out = FeecResult {
            cpu: prev,
            candidates: Vec::new(),
        };
        if inp.task_util_est() == 0 {
            return out;
        }
        let task_busy = inp.task_util_est();
        let (mut prev_delta, mut best_delta, mut best_cpu) = (u64::MAX, u64::MAX, prev);
        let mut base_energy = 0u64;
        for pd in &self.pds {
            let pd_busy = pd_busy_time(pd, inp);
            let base = compute_energy(pd, inp, None, pd_busy, task_busy, true);
            base_energy += base;
            let (mut max_spare, mut max_spare_cpu) = (0u64, None);
            for &c in &pd.cpus {
                if inp.allowed & (1u64 << c) == 0 {
                    continue;
                }
                let util = inp.cpu_util(c, Some(c), false);
                let cap = inp.capacity[c];
                let spare = cap.saturating_sub(util);
                // find_best_target(): new_util = max(cpu_util + task_util, boosted_task_util)
                // (msm-4.14, on WALT or PELT; task_min_util is 0 elsewhere)
                let util = util.max(inp.task_min_util);
                // uclamp_rq_util_with()
                let clamped = if inp.uclamp_used {
                    let (rq, p) = (inp.rq_uclamp[c], inp.p_uclamp);
                    let (lo, hi) = (rq[0].max(p[0]), rq[1].max(p[1]));
                    if lo >= hi {
                        lo
                    } else {
                        util.clamp(lo, hi)
                    }
                } else {
                    util
                };
                let fits = if self.fit_pct.is_empty() {
                    crate::fair::fits_capacity(clamped, cap)
                } else {
                    clamped * 100 < cap * self.fit_pct[c] // vendor.migration_margins
                };
                if !fits {
                    continue;
                }
                if c == prev {
                    prev_delta = compute_energy(pd, inp, Some(prev), pd_busy, task_busy, true) - base;
                    best_delta = best_delta.min(prev_delta);
                    out.candidates.push((prev, prev_delta));
                }
                if spare > max_spare {
                    (max_spare, max_spare_cpu) = (spare, Some(c));
                }
            }
            if let Some(c) = max_spare_cpu {
                if c != prev {
                    let d = compute_energy(pd, inp, Some(c), pd_busy, task_busy, true) - base;
                    out.candidates.push((c, d));
                    if d < best_delta {
                        (best_delta, best_cpu) = (d, c);
                    }
                }
            }
        }
        out.cpu = if prev_delta == u64::MAX || prev_delta - best_delta > (prev_delta + base_energy) >> 4 {
            best_cpu
        } else {
            prev
        };
        out
    }

    /// The energy of the pds holding a CPU of `cpus` (a mask) with the waking task on
    /// `dst`: what msm-4.14's select_energy_cpu_idx() sums for each candidate, over the
    /// sched groups that hold one (find_best_target.rs).
    pub fn energy_with_task_on(&self, inp: &FeecInput, dst: usize, cpus: u64) -> u64 {
        let task_busy = inp.task_util_est();
        self.pds
            .iter()
            .filter(|pd| pd.cpus.iter().any(|&c| cpus & (1u64 << c) != 0))
            .map(|pd| {
                let here = pd.cpus.contains(&dst).then_some(dst);
                compute_energy(pd, inp, here, pd_busy_time(pd, inp), task_busy, self.legacy)
            })
            .sum()
    }

    /// The energy of every pd without the task (compute_energy with no destination): the
    /// base that the candidates' deltas of `find_energy_efficient_cpu` add to.
    pub fn energy_without_task(&self, inp: &FeecInput) -> u64 {
        let task_busy = inp.task_util_est();
        self.pds
            .iter()
            .map(|pd| {
                let pd_busy = pd_busy_time(pd, inp);
                compute_energy(pd, inp, None, pd_busy, task_busy, self.legacy)
            })
            .sum()
    }

    /// The energy of a whole placement: every pd at the state its max util (with the 1.25
    /// headroom) needs, energy = cost * sum util (the Python `compute_energy`).
    pub fn compute_energy(&self, cpu_utils: &[u64], headroom: impl Fn(u64) -> u64) -> (u64, Vec<u64>) {
        let per_pd: Vec<u64> = self
            .pds
            .iter()
            .map(|pd| {
                let sum: u64 = pd.cpus.iter().map(|&c| cpu_utils[c]).sum();
                if self.legacy {
                    let max_util = pd.cpus.iter().map(|&c| cpu_utils[c]).max().unwrap_or(0);
                    return pd.em_cpu_energy_legacy(max_util.min(pd.capacity_orig), sum);
                }
                let max_util = pd.cpus.iter().map(|&c| headroom(cpu_utils[c])).max().unwrap_or(0);
                pd.em_cpu_energy(max_util.min(pd.capacity_orig), sum, pd.capacity_orig)
            })
            .collect();
        (per_pd.iter().sum(), per_pd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Documentation/scheduler/sched-energy.rst's example platform shape: two pds of two
    /// CPUs; little (capacity 512: states 256/512) and big (1024: states 512/768/1024).
    fn em() -> EnergyModel {
        EnergyModel::from_table(&[
            (vec![0, 1], vec![(256, 100), (512, 300)]),
            (vec![2, 3], vec![(512, 400), (768, 700), (1024, 1300)]),
        ])
        .unwrap()
    }

    #[test]
    fn costs_and_pd_order() {
        let m = em();
        // rd->pd order: descending first CPU -> big first
        assert_eq!(m.pds[0].cpus, vec![2, 3]);
        // cost = 10 * P / perf
        let costs: Vec<u64> = m.pds[0].states.iter().map(|s| s.cost).collect();
        assert_eq!(costs, vec![10 * 400 / 512, 10 * 700 / 768, 10 * 1300 / 1024]);
        assert_eq!(m.pds[1].states.iter().map(|s| s.cost).collect::<Vec<_>>(), vec![3, 5]);
        // an inefficient state: its cost is not below a higher state's
        let m2 = EnergyModel::from_table(&[(vec![0], vec![(300, 300), (600, 400), (1024, 1500)])]).unwrap();
        // costs 10, 6, 14: the 300 state (10 >= 6) is inefficient
        assert_eq!(
            m2.pds[0].states.iter().map(|s| s.inefficient).collect::<Vec<_>>(),
            vec![true, false, false]
        );
        // em_cpu_energy skips it: max util 200 takes the 600 state
        assert_eq!(m2.pds[0].em_cpu_energy(200, 200, 1024), 6 * 200);
    }

    #[test]
    fn compute_energy_worked_example() {
        let m = em();
        // utils little (100, 50), big (300, 0); headroom 1.25
        let (total, per) = m.compute_energy(&[100, 50, 300, 0], map_util_perf);
        // big: max 375 -> state 512 (cost 7), sum 300 -> 2100; little: max 125 -> 256 (cost 3),
        // sum 150 -> 450
        assert_eq!(per, vec![7 * 300, 3 * 150]);
        assert_eq!(total, 2100 + 450);
    }

    fn input(utils: [u64; 4], task: u64, prev: usize) -> FeecInput {
        FeecInput {
            util_avg: utils.to_vec(),
            runnable_avg: utils.to_vec(),
            util_est: vec![0; 4],
            util_rt: vec![0; 4],
            rt_runnable: vec![false; 4],
            dl_bw: Vec::new(),
            capacity_orig: vec![512, 512, 1024, 1024],
            capacity: vec![512, 512, 1024, 1024],
            task_util: task,
            task_ewma: task,
            task_queued: false,
            prev_cpu: prev,
            allowed: 0b1111,
            uclamp_used: false,
            p_uclamp: [0, 1024],
            rq_uclamp: vec![[0, 1024]; 4],
            rq_uclamp_idle: vec![true; 4],
            headroom_permyriad: 12_500,
            walt: false,
            task_min_util: 0,
        }
    }

    #[test]
    fn feec_packs_a_small_task_on_little_and_sends_a_big_one_to_big() {
        let m = em();
        // small task (100), prev = big CPU 3 (its util includes the task: 100), little idle:
        // on little CPU 0 the pd goes to state 256 (cost 3): delta 3 * 100 = 300; on big
        // CPU 3 (prev), max util 125 -> state 512 (cost 7): delta 700. Little wins.
        let r = m.find_energy_efficient_cpu(&input([0, 0, 0, 100], 100, 3));
        assert_eq!(r.cpu, 0);
        assert_eq!(r.candidates, vec![(3, 7 * 100), (0, 3 * 100)]);
        // a task of 450 does not fit a little CPU (450 * 1280 >= 512 * 1024): big CPU 2
        let r = m.find_energy_efficient_cpu(&input([0, 0, 0, 0], 450, 0));
        assert_eq!(r.cpu, 2);
    }

    #[test]
    fn feec_keeps_prev_when_nothing_saves_energy() {
        let m = em();
        // prev little CPU 1 already holds the task (util 100 there); little CPU 0 is idle:
        // same pd, same state, same delta -> prev (strictly smaller delta needed)
        let r = m.find_energy_efficient_cpu(&input([0, 100, 0, 0], 100, 1));
        assert_eq!(r.cpu, 1);
    }

    #[test]
    fn feec_with_uclamp_max_keeps_a_capped_task_on_little() {
        let m = em();
        // without uclamp a 450-util task fits no little CPU and goes big
        assert_eq!(m.find_energy_efficient_cpu(&input([0, 0, 0, 0], 450, 0)).cpu, 2);
        // with uclamp_max 300 it fits a little CPU (300 <= 512): there the pd runs at the
        // 512 state (cost 5) for 450 util: 2250; on big CPU 2 the capped request (300)
        // takes the 512 state too (cost 7): 3150; prev (little CPU 0) wins
        let mut inp = input([0, 0, 0, 0], 450, 0);
        inp.uclamp_used = true;
        inp.p_uclamp = [0, 300];
        let r = m.find_energy_efficient_cpu(&inp);
        assert_eq!(r.cpu, 0);
        assert_eq!(r.candidates, vec![(2, 7 * 450), (0, 5 * 450)]);
    }

    #[test]
    fn legacy_em_costs_and_feec_margin() {
        let mut m = em();
        m.set_legacy();
        // cost = P · f_max / f (the table's "frequencies" are its performances here)
        assert_eq!(
            m.pds[1].states.iter().map(|s| s.cost).collect::<Vec<_>>(),
            vec![100 * 512 / 256, 300]
        );
        assert_eq!(
            m.pds[0].states.iter().map(|s| s.cost).collect::<Vec<_>>(),
            vec![800, 700 * 1024 / 768, 1300]
        );
        // a 100-util task on big CPU 3: 1.25 x 100 inside the frequency mapping needs the
        // 512 state (cost 800): 800 x 100 / 1024 = 78; on little CPU 0, the 256 state
        // (cost 200): 200 x 100 / 512 = 39; it saves more than (78 + 0) / 16: little
        let r = m.find_energy_efficient_cpu(&input([0, 0, 0, 100], 100, 3));
        assert_eq!(r.cpu, 0);
        assert_eq!(r.candidates, vec![(3, 78), (2, 78), (0, 39)]);
        // with a large base energy (big CPU 2 at 900, little CPU 0 at 300) the saving
        // (127 on big vs 59 on little CPU 1) is under (127 + 1142 + 175) / 16 = 90: prev stays
        let r = m.find_energy_efficient_cpu(&input([300, 0, 900, 100], 100, 3));
        assert_eq!(r.cpu, 3);
        assert_eq!(
            r.candidates,
            vec![
                (3, 1300 * 1000 / 1024 - 1300 * 900 / 1024),
                (1, 300 * 400 / 512 - 300 * 300 / 512)
            ]
        );
    }
}
