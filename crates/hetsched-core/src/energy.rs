//! The energy meter: every watt passes through here. Mechanisms report state changes
//! (a CPU starts or stops running, picks an idle state, a cluster changes OPP); the meter
//! integrates power x time exactly, in integer femtojoules (µW x ns), between changes.
//!
//! Model (docs/mechanisms/energy.md):
//! * a running CPU draws its OPP's per-CPU power (Energy Model `power`), a CPU leaving an
//!   idle state (exit latency) counts as running;
//! * an idle CPU draws its idle state's power; a cluster-level state is only in effect when
//!   every CPU of its idle power domain is idle (the cluster, or on a DynamIQ SoC every
//!   cluster of the DSU: `Platform::domains`), otherwise the CPU sits in the deepest
//!   CPU-level state not deeper than the one it chose;
//! * the cluster draws its OPP's `cluster_power` while any CPU runs, else the
//!   `cluster_power` of the shallowest state among its CPUs (published legacy tables only).

use crate::platform::{IdleLevel, Platform};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuPowerState {
    Busy,
    Idle(usize),
}

#[derive(Debug, Clone)]
pub struct CpuMeter {
    pub state: CpuPowerState,
    /// accounted up to here
    pub last: u64,
    pub effective_idle: usize,
    pub power_uw: u64,
    pub energy_fj: u128,
    pub busy_ns: u64,
    pub freq_residency_ns: Vec<u64>,
    pub idle_residency_ns: Vec<u64>,
}

#[derive(Debug, Clone)]
pub struct ClusterMeter {
    pub opp: usize,
    /// the cluster term is accounted up to here
    pub last: u64,
    /// CPUs of the cluster that are running (or leaving idle)
    pub nr_busy: usize,
    pub power_uw: u64,
    pub energy_fj: u128,
    /// wall time at each OPP, busy or idle: cpufreq_stats' time_in_state of the policy
    pub time_in_state_ns: Vec<u64>,
}

#[derive(Debug, Clone)]
pub struct EnergyMeter {
    pub cpus: Vec<CpuMeter>,
    pub clusters: Vec<ClusterMeter>,
    /// switcher mode: per CPU, per cluster, the residencies (freq, idle) of the cores not
    /// backing the CPU now (the current core's are in `cpus[cpu]`)
    pub stash: Vec<Vec<(Vec<u64>, Vec<u64>)>>,
    /// per idle power domain (`Platform::domains`): CPUs running (or leaving idle)
    pub domain_busy: Vec<usize>,
}

impl EnergyMeter {
    /// All CPUs start idle in WFI at each cluster's `initial_opp`.
    pub fn new(p: &Platform, initial_opp: &[usize]) -> Self {
        let cpus = (0..p.nr_cpus())
            .map(|cpu| {
                let c = p.cluster_of(cpu);
                CpuMeter {
                    state: CpuPowerState::Idle(0),
                    last: 0,
                    effective_idle: 0,
                    power_uw: 0,
                    energy_fj: 0,
                    busy_ns: 0,
                    freq_residency_ns: vec![0; c.opps.len()],
                    idle_residency_ns: vec![0; c.idle_states.len()],
                }
            })
            .collect();
        let clusters = initial_opp
            .iter()
            .zip(&p.clusters)
            .map(|(&opp, c)| ClusterMeter {
                opp,
                last: 0,
                nr_busy: 0,
                power_uw: 0,
                energy_fj: 0,
                time_in_state_ns: vec![0; c.opps.len()],
            })
            .collect();
        let stash = if p.switcher {
            (0..p.nr_cpus())
                .map(|_| {
                    p.clusters
                        .iter()
                        .map(|c| (vec![0; c.opps.len()], vec![0; c.idle_states.len()]))
                        .collect()
                })
                .collect()
        } else {
            Vec::new()
        };
        let mut m = EnergyMeter {
            cpus,
            clusters,
            stash,
            domain_busy: vec![0; p.domains.len()],
        };
        for ci in 0..p.clusters.len() {
            m.recompute(p, ci);
        }
        m
    }

    /// Close the interval [last, now) of one CPU at its current power.
    #[inline]
    fn accumulate_cpu(&mut self, cpu: usize, opp: usize, now: u64) {
        let m = &mut self.cpus[cpu];
        debug_assert!(now >= m.last);
        let dt = now - m.last;
        if dt == 0 {
            return;
        }
        m.last = now;
        m.energy_fj += m.power_uw as u128 * dt as u128;
        match m.state {
            CpuPowerState::Busy => {
                m.busy_ns += dt;
                m.freq_residency_ns[opp] += dt;
            }
            CpuPowerState::Idle(_) => m.idle_residency_ns[m.effective_idle] += dt,
        }
    }

    /// Close the interval [last, now) of cluster `ci`, its CPUs and its cluster term.
    fn accumulate(&mut self, p: &Platform, ci: usize, now: u64) {
        let cm = &mut self.clusters[ci];
        debug_assert!(now >= cm.last);
        cm.energy_fj += cm.power_uw as u128 * (now - cm.last) as u128;
        cm.time_in_state_ns[cm.opp] += now - cm.last;
        cm.last = now;
        let opp = cm.opp;
        for &cpu in &p.clusters[ci].cpus {
            self.accumulate_cpu(cpu, opp, now);
        }
    }

    /// Whether every CPU of idle domain `d` is idle, and the shallowest of their states as
    /// a rank among the cluster-level states (negative: a CPU-level state). The clusters of
    /// a shared domain list the same cluster-level states last (platform.rs checks), so
    /// ranks compare across them; in a domain of one cluster they order like the indices.
    fn domain_state(&self, p: &Platform, d: usize) -> (bool, i64) {
        let mut shallowest = i64::MAX;
        for &ci in &p.domains[d] {
            let c = &p.clusters[ci];
            let first = c.first_cluster_state() as i64;
            for &cpu in &c.cpus {
                match self.cpus[cpu].state {
                    CpuPowerState::Busy => return (false, shallowest),
                    CpuPowerState::Idle(s) => shallowest = shallowest.min(s as i64 - first),
                }
            }
        }
        (true, shallowest)
    }

    fn recompute(&mut self, p: &Platform, ci: usize) {
        let c = &p.clusters[ci];
        if c.cpus.is_empty() {
            // switcher mode: no core of this cluster backs a CPU; the cluster is off
            self.clusters[ci].power_uw = 0;
            return;
        }
        let opp = self.clusters[ci].opp;
        let (all_idle, shallowest) = self.domain_state(p, p.cluster_domain[ci]);
        let first = c.first_cluster_state() as i64;
        let mut cluster_idle = usize::MAX;
        for &cpu in &c.cpus {
            let m = &mut self.cpus[cpu];
            m.power_uw = match m.state {
                CpuPowerState::Busy => c.opps[opp].power_uw,
                CpuPowerState::Idle(s) => {
                    // A cluster state holds only while every CPU of its domain is in one:
                    // the domain goes as deep as its shallowest CPU allows.
                    let mut eff = s;
                    while eff > 0
                        && c.idle_states[eff].level == IdleLevel::Cluster
                        && (!all_idle || eff as i64 - first > shallowest)
                    {
                        eff -= 1;
                    }
                    m.effective_idle = eff;
                    cluster_idle = cluster_idle.min(eff);
                    c.idle_states[eff].power_uw
                }
            };
        }
        self.clusters[ci].power_uw = if self.clusters[ci].nr_busy == 0 {
            // every CPU of the cluster idle: the shallowest state in effect among them
            c.idle_states[cluster_idle].cluster_power_uw
        } else {
            c.opps[opp].cluster_power_uw
        };
    }

    pub fn set_cpu(&mut self, p: &Platform, cpu: usize, now: u64, state: CpuPowerState) {
        let old = self.cpus[cpu].state;
        if old == state {
            return;
        }
        let ci = p.cpu_cluster[cpu];
        let d = p.cluster_domain[ci];
        let was_all_idle = self.clusters[ci].nr_busy == 0;
        let domain_was_all_idle = self.domain_busy[d] == 0;
        match (old, state) {
            (CpuPowerState::Busy, CpuPowerState::Idle(_)) => {
                self.clusters[ci].nr_busy -= 1;
                self.domain_busy[d] -= 1;
            }
            (CpuPowerState::Idle(_), CpuPowerState::Busy) => {
                self.clusters[ci].nr_busy += 1;
                self.domain_busy[d] += 1;
            }
            _ => {}
        }
        if domain_was_all_idle || self.domain_busy[d] == 0 {
            // the domain is or becomes all idle: the cluster terms and the effective idle
            // state of every CPU in it may change
            for &cj in &p.domains[d] {
                self.accumulate(p, cj, now);
            }
            self.cpus[cpu].state = state;
            for &cj in &p.domains[d] {
                self.recompute(p, cj);
            }
        } else if was_all_idle || self.clusters[ci].nr_busy == 0 {
            // (a domain of several clusters) the cluster is or becomes all idle while its
            // domain stays up: its cluster term changes
            self.accumulate(p, ci, now);
            self.cpus[cpu].state = state;
            self.recompute(p, ci);
        } else {
            // the cluster stays up: only this CPU's power changes, and an idle CPU sits in
            // its deepest CPU-level state at most
            self.accumulate_cpu(cpu, self.clusters[ci].opp, now);
            let c = &p.clusters[ci];
            let m = &mut self.cpus[cpu];
            m.state = state;
            m.power_uw = match state {
                CpuPowerState::Busy => c.opps[self.clusters[ci].opp].power_uw,
                CpuPowerState::Idle(s) => {
                    let mut eff = s;
                    while eff > 0 && c.idle_states[eff].level == IdleLevel::Cluster {
                        eff -= 1;
                    }
                    m.effective_idle = eff;
                    c.idle_states[eff].power_uw
                }
            };
        }
    }

    pub fn set_opp(&mut self, p: &Platform, ci: usize, now: u64, opp: usize) {
        self.accumulate(p, ci, now);
        self.clusters[ci].opp = opp;
        self.recompute(p, ci);
    }

    /// Switcher mode: `cpu` is backed by a core of cluster `to` from `now` (the caller
    /// moves it in `p` with `Platform::move_cpu`, then calls `moved`). Closes every
    /// interval at the old core's power and swaps the residency tables.
    pub fn move_cpu(&mut self, p: &Platform, cpu: usize, to: usize, now: u64) {
        self.sync(p, now);
        let from = p.cpu_cluster[cpu];
        if self.cpus[cpu].state == CpuPowerState::Busy {
            self.clusters[from].nr_busy -= 1;
            self.clusters[to].nr_busy += 1;
            self.domain_busy[p.cluster_domain[from]] -= 1;
            self.domain_busy[p.cluster_domain[to]] += 1;
        }
        let nidle = p.clusters[to].idle_states.len();
        let m = &mut self.cpus[cpu];
        if let CpuPowerState::Idle(s) = m.state {
            m.state = CpuPowerState::Idle(s.min(nidle - 1));
        }
        m.effective_idle = m.effective_idle.min(nidle - 1);
        let (f_to, i_to) = std::mem::take(&mut self.stash[cpu][to]);
        let f_from = std::mem::replace(&mut m.freq_residency_ns, f_to);
        let i_from = std::mem::replace(&mut m.idle_residency_ns, i_to);
        self.stash[cpu][from] = (f_from, i_from);
    }

    /// After `move_cpu` and the platform's move: the powers of the two clusters' domains.
    pub fn moved(&mut self, p: &Platform, from: usize, to: usize) {
        for d in [p.cluster_domain[from], p.cluster_domain[to]] {
            for &ci in &p.domains[d] {
                self.recompute(p, ci);
            }
        }
    }

    /// Bring every accumulator up to `now`.
    pub fn sync(&mut self, p: &Platform, now: u64) {
        for ci in 0..self.clusters.len() {
            self.accumulate(p, ci, now);
        }
    }

    /// Frequency and idle residency of a CPU (ns) over every core that backed it: on a
    /// switcher platform the residencies of the cores not backing it now are stashed.
    pub fn residency_ns_all_cores(&self, cpu: usize) -> (u64, u64) {
        let m = &self.cpus[cpu];
        let (mut freq, mut idle) = (
            m.freq_residency_ns.iter().sum::<u64>(),
            m.idle_residency_ns.iter().sum::<u64>(),
        );
        for (f, i) in self.stash.get(cpu).into_iter().flatten() {
            freq += f.iter().sum::<u64>();
            idle += i.iter().sum::<u64>();
        }
        (freq, idle)
    }

    /// Busy time of a CPU up to `now`, without accounting anything.
    pub fn busy_ns_at(&self, cpu: usize, now: u64) -> u64 {
        let m = &self.cpus[cpu];
        m.busy_ns
            + if m.state == CpuPowerState::Busy {
                now - m.last
            } else {
                0
            }
    }

    /// Σ over OPPs of (busy ns at that OPP × its kHz) of a CPU up to `now`, without
    /// accounting anything: the frequency-weighted busy time interactive measures.
    pub fn busy_khz_ns_at(&self, p: &Platform, cpu: usize, now: u64) -> u128 {
        let m = &self.cpus[cpu];
        let c = p.cluster_of(cpu);
        let mut s: u128 = m
            .freq_residency_ns
            .iter()
            .zip(&c.opps)
            .map(|(&ns, o)| ns as u128 * o.khz as u128)
            .sum();
        if m.state == CpuPowerState::Busy {
            s += (now - m.last) as u128 * c.opps[self.clusters[p.cpu_cluster[cpu]].opp].khz as u128;
        }
        s
    }

    pub fn total_fj(&self) -> u128 {
        self.cpus.iter().map(|c| c.energy_fj).sum::<u128>() + self.clusters.iter().map(|c| c.energy_fj).sum::<u128>()
    }

    /// Instantaneous power of a CPU (without its cluster share).
    pub fn cpu_power_uw(&self, cpu: usize) -> u64 {
        self.cpus[cpu].power_uw
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutils::two_cluster_platform;

    #[test]
    fn hand_computed_energy_with_cluster_and_idle_terms() {
        // little: 2 CPUs, OPPs (500 MHz, 100 mW, cluster 20 mW), (1 GHz, 300 mW, cluster 40 mW)
        // idle: WFI 10 mW (cluster 15 mW), cluster-sleep 0 mW (cluster 2 mW)
        let p = two_cluster_platform();
        let mut m = EnergyMeter::new(&p, &[0, 0]);
        let ms = 1_000_000u64;
        // t=0..10ms: cpu0 busy at OPP0, cpu1 in WFI
        m.set_cpu(&p, 0, 0, CpuPowerState::Busy);
        // t=10ms: OPP1
        m.set_opp(&p, 0, 10 * ms, 1);
        // t=20ms: cpu0 goes to cluster-sleep (state 1); cpu1 picks cluster sleep too at 25ms
        m.set_cpu(&p, 0, 20 * ms, CpuPowerState::Idle(1));
        m.set_cpu(&p, 1, 25 * ms, CpuPowerState::Idle(1));
        m.sync(&p, 40 * ms);
        // cpu0: 10ms*100mW + 10ms*300mW + [20,25) cpu-level fallback = WFI 10 mW*5ms + 15ms*0
        let cpu0 = 100_000u128 * 10_000_000 + 300_000 * 10_000_000 + 10_000 * 5_000_000;
        // cpu1: WFI 25ms * 10mW, then cluster sleep 15ms * 0
        let cpu1 = 10_000u128 * 25_000_000;
        // cluster: busy 0-10ms at 20 mW, 10-20 at 40 mW, all idle 20-25 shallowest(1,0)=WFI 15mW,
        // 25-40 cluster-sleep 2 mW
        let cl = 20_000u128 * 10_000_000 + 40_000 * 10_000_000 + 15_000 * 5_000_000 + 2_000 * 15_000_000;
        assert_eq!(m.cpus[0].energy_fj, cpu0);
        assert_eq!(m.cpus[1].energy_fj, cpu1);
        assert_eq!(m.clusters[0].energy_fj, cl);
        assert_eq!(m.cpus[0].freq_residency_ns, vec![10 * ms, 10 * ms]);
        // time_in_state counts the policy's wall time at each OPP, idle or not: OPP0 for
        // [0, 10 ms), OPP1 from then to 40 ms though every CPU slept from 25 ms
        assert_eq!(m.clusters[0].time_in_state_ns, vec![10 * ms, 30 * ms]);
        assert_eq!(m.clusters[1].time_in_state_ns, vec![40 * ms, 0]);
        assert_eq!(m.cpus[0].idle_residency_ns, vec![5 * ms, 15 * ms]);
        assert_eq!(m.cpus[1].idle_residency_ns, vec![25 * ms, 15 * ms]);
        // the other cluster sat idle in WFI for 40ms: 2 CPUs * 5 mW + cluster 0
        assert_eq!(m.cpus[2].energy_fj, 5_000u128 * 40_000_000);
    }
}
