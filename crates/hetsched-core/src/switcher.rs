//! Paper 001 (Kim et al., "Utilization-aware Load Balancing for the Energy Efficient
//! Operation of the big.LITTLE Processor"): the big.LITTLE in-kernel switcher in CPU mode,
//! its ondemand governor, and the utilisation-aware load balancer of Fig. 3.
//!
//! A child module of `sim` (it reads the simulation's private state).
//!
//! * **Switcher (CPU mode).** Each CPU number is a virtual CPU (vCPU) backed by one core of
//!   its A15/A7 pair at a time (`Platform::switcher`; the platform's `cpu_cluster` says which
//!   core backs it now). Every vCPU is its own cpufreq policy (as under the IKS cpufreq
//!   driver) with its own governor epoch GE(s,k) every `switcher.sampling_rate_us`; the
//!   vCPUs' epochs are staggered by rate/N so that GE(i,k) != GE(j,k), as §III-A says. At an
//!   epoch the vCPU's state is (frequency, utilisation) of Table I: frequency H when its
//!   policy's frequency is its core's f_max, utilisation H above `switcher.up_threshold`
//!   (80), L below `switcher.down_threshold` (70). A vCPU on its little core in (H,H)
//!   switches up; on its big core in (L,L) it switches down (Fig. 1); the newly active core
//!   runs at its cluster's present frequency, or at the lowest OPP if no core of that
//!   cluster is live (§II-C). The switch itself takes no time; the task's caches move with
//!   it for free (no cold-cache penalty).
//! * **ondemand (v3.4, as the paper's kernel).** Otherwise the vCPU's policy asks for f_max
//!   above the up-threshold, for `cur x load / down_threshold` (RELATION_L, not below f_min)
//!   below the down-threshold, and keeps its request in between; a cluster runs at the max
//!   of the requests of the vCPUs its cores back (the IKS cpufreq driver's cluster
//!   frequency), and a cluster none of whose cores backs a vCPU is off (no power).
//! * **util-aware (Fig. 3).** At every enqueue from the wait queue (fork or wakeup of a fair
//!   task): idlest = argmin load(s), busiest = argmax load(s) (eq. 1: sum of the queued
//!   weights); while load(busiest) > 1.25 x load(idlest), a waiting task of busiest moves to
//!   idlest; then the task goes to argmin E[U(s, task)], E_A (eq. 2, = U(s)) or E_B (eq. 3,
//!   with the simple moving average of the last 16 task execution times). The kernel's
//!   periodic and newidle balancing are off.

use super::*;
use crate::cpufreq::relation_l;
use std::collections::VecDeque;

/// Fig. 3 line 1: IPC = 1.25 (as 5/4).
pub const IPC_NUM: u64 = 5;
pub const IPC_DEN: u64 = 4;
/// §III-C: the moving average of the last sixteen task execution times.
pub const SMA_LEN: usize = 16;

#[derive(Debug, Clone, Default)]
pub struct Switcher {
    pub util_aware: bool,
    /// 0 = E_A, 1 = E_B
    pub estimator: usize,
    little: usize,
    big: usize,
    rate_ns: u64,
    /// per vCPU: the last governor epoch, the busy time then, the load it measured, the
    /// frequency its policy asks for
    last_epoch: Vec<u64>,
    busy_mark: Vec<u64>,
    last_load: Vec<u64>,
    request_khz: Vec<u64>,
    pub switches_up: u64,
    pub switches_down: u64,
    pub leveling_moves: u64,
    pub placements: [u64; 2],
    sma: VecDeque<u64>,
    /// per task: its sum_exec_runtime when it last left the wait queue
    exec_at_wake: Vec<u64>,
    /// per vCPU, per cluster: busy ns and energy (fJ) of that core, closed segments
    core_busy: Vec<Vec<u64>>,
    core_energy: Vec<Vec<u128>>,
    seg_busy: Vec<u64>,
    seg_energy: Vec<u128>,
}

/// Policy checks for switcher platforms and paper 001's schedulers (one clear line each).
pub fn check(platform: &Platform, policy: &PolicyConfig) -> Result<()> {
    let ours = matches!(policy.scheduler.as_str(), "legacy" | "util-aware");
    if platform.switcher && !ours {
        return Err(config(
            "policy",
            "scheduler",
            format!(
                "legacy or util-aware on a switcher platform (paper 001), got {}",
                policy.scheduler
            ),
        ));
    }
    if ours && !platform.switcher {
        return Err(config(
            "policy",
            "scheduler",
            format!(
                "a switcher platform (--platform NAME:switcher) for --scheduler {}",
                policy.scheduler
            ),
        ));
    }
    if platform.switcher && policy.governor != "ondemand" {
        return Err(config(
            "policy",
            "governor",
            format!(
                "ondemand on a switcher platform (paper 001's switcher runs ondemand), got {}",
                policy.governor
            ),
        ));
    }
    Ok(())
}

impl Sim {
    #[inline]
    pub(super) fn balancing_off(&self) -> bool {
        self.sw.as_ref().is_some_and(|s| s.util_aware)
    }

    /// Set up the switcher state and the vCPUs' staggered governor epochs.
    pub(super) fn switcher_start(&mut self) {
        let n = self.rqs.len();
        let p = &self.platform;
        let (little, big) = if p.clusters[0].capacity_orig < p.clusters[1].capacity_orig {
            (0, 1)
        } else {
            (1, 0)
        };
        let rate_ns = (self.knobs.get(Knob::SwitcherSamplingRateUs) * 1000.0) as u64;
        let request_khz = (0..n).map(|c| self.khz(c)).collect();
        let nc = p.clusters.len();
        self.sw = Some(Switcher {
            util_aware: self.policy.scheduler == "util-aware",
            estimator: self.knobs.get(Knob::UtilAwareEstimator).round() as usize,
            little,
            big,
            rate_ns,
            last_epoch: vec![0; n],
            busy_mark: vec![0; n],
            last_load: vec![0; n],
            request_khz,
            exec_at_wake: vec![0; self.tasks.len()],
            core_busy: vec![vec![0; nc]; n],
            core_energy: vec![vec![0; nc]; n],
            seg_busy: vec![0; n],
            seg_energy: vec![0; n],
            ..Default::default()
        });
        for v in 0..n {
            let first = rate_ns + rate_ns * v as u64 / n as u64;
            self.events.push(first, EventKind::GovSample { cluster: v as u32 });
        }
    }

    /// U(s) over [GE(s,k), now] in %, and ΔT(s,k) in ns.
    fn measured_util(&self, v: usize) -> (f64, u64) {
        let sw = self.sw.as_ref().unwrap();
        let dt = self.now - sw.last_epoch[v];
        if dt == 0 {
            return (sw.last_load[v] as f64, 0);
        }
        let busy = self.meter.busy_ns_at(v, self.now) - sw.busy_mark[v];
        (100.0 * busy as f64 / dt as f64, dt)
    }

    /// E[U(s, task)]: eq. 2 (E_A = U(s), the paper's approximation for ΔT_task << ΔT_gov)
    /// or eq. 3 (E_B).
    pub fn expected_util(&self, v: usize) -> f64 {
        let (u, dt) = self.measured_util(v);
        let sw = self.sw.as_ref().unwrap();
        if sw.estimator == 0 {
            return u;
        }
        let sma = if sw.sma.is_empty() {
            0.0
        } else {
            sw.sma.iter().sum::<u64>() as f64 / sw.sma.len() as f64
        };
        let (dt, sma) = (dt as f64, sma);
        if dt + sma <= 0.0 {
            return u;
        }
        u * dt / (dt + sma) + 100.0 * sma / (dt + sma)
    }

    /// Whether Fig. 3 places this wakeup (util-aware, a fair task).
    pub(super) fn util_aware_places(&self, t: TaskId) -> bool {
        self.balancing_off() && self.tasks[t as usize].policy == Policy::Other
    }

    /// load(s) of eq. 1: the sum of the weights of the fair tasks on s's runqueue.
    fn load(&self, v: usize) -> u64 {
        self.rqs[v].cfs.load_weight
    }

    /// Fig. 3 for task `t` leaving the wait queue: level the loads, then pick the vCPU.
    pub(super) fn util_aware_select(&mut self, t: TaskId) -> usize {
        let n = self.rqs.len();
        let exec = self.tasks[t as usize].se.sum_exec_runtime;
        {
            let sw = self.sw.as_mut().unwrap();
            if sw.exec_at_wake.len() <= t as usize {
                sw.exec_at_wake.resize(t as usize + 1, 0);
            }
            sw.exec_at_wake[t as usize] = exec;
        }
        // lines 3-8
        let idlest = (0..n).min_by_key(|&c| (self.load(c), c)).unwrap();
        let busiest = (0..n).max_by_key(|&c| (self.load(c), std::cmp::Reverse(c))).unwrap();
        while IPC_DEN * self.load(busiest) > IPC_NUM * self.load(idlest) {
            // DEQUEUE(Qrun(busiest)): the waiting task that would run last
            let cand = self.rqs[busiest]
                .cfs
                .timeline
                .iter()
                .rev()
                .map(|&(_, x)| x)
                .find(|&x| self.tasks[x as usize].allowed & (1u64 << idlest) != 0);
            let Some(x) = cand else { break };
            self.migrate_queued(
                Migration {
                    task: x,
                    src: busiest,
                    dst: idlest,
                },
                true,
            );
            self.sw.as_mut().unwrap().leveling_moves += 1;
        }
        // lines 9-10
        let allowed = self.tasks[t as usize].allowed;
        let mut best: Option<(f64, u64, usize)> = None;
        for c in (0..n).filter(|&c| allowed & (1u64 << c) != 0) {
            let key = (self.expected_util(c), self.load(c), c);
            if best.is_none_or(|b| (key.0, key.1, key.2) < b) {
                best = Some(key);
            }
        }
        let sw = self.sw.as_mut().unwrap();
        sw.placements[sw.estimator] += 1;
        best.map(|b| b.2).unwrap_or(allowed.trailing_zeros() as usize)
    }

    /// A fair task enters the wait queue (sleep or exit): its execution time since it left
    /// the wait queue joins the moving average.
    pub(super) fn switcher_on_sleep(&mut self, t: TaskId) {
        let exec = self.tasks[t as usize].se.sum_exec_runtime;
        let Some(sw) = self.sw.as_mut() else { return };
        let start = sw.exec_at_wake.get(t as usize).copied().unwrap_or(0);
        if sw.sma.len() == SMA_LEN {
            sw.sma.pop_front();
        }
        sw.sma.push_back(exec.saturating_sub(start));
    }

    fn cluster_target(&self, ci: usize) -> Option<u64> {
        let sw = self.sw.as_ref().unwrap();
        self.platform.clusters[ci].cpus.iter().map(|&c| sw.request_khz[c]).max()
    }

    fn set_cluster_freq(&mut self, ci: usize, khz: u64) {
        // a commit may be pending (pending_khz): commit unless it is already the target
        if khz != self.platform.clusters[ci].opps[self.clusters[ci].opp].khz || self.pending_khz[ci] != khz {
            self.commit_freq(ci, khz);
        }
    }

    /// The governor epoch GE(v,k) of vCPU `v`: switch, or ondemand.
    pub(super) fn switcher_sample(&mut self, v: usize) {
        let now = self.now;
        let (load, _) = self.measured_util(v);
        let load = load as u64;
        let busy = self.meter.busy_ns_at(v, now);
        let ci = self.platform.cpu_cluster[v];
        let c = &self.platform.clusters[ci];
        let (fmin, fmax) = (c.opps[0].khz, c.fmax_khz);
        let up = self.knobs.get(Knob::SwitcherUpThreshold) as u64;
        let down = self.knobs.get(Knob::SwitcherDownThreshold) as u64;
        let (little, big, rate, cur) = {
            let sw = self.sw.as_mut().unwrap();
            sw.last_epoch[v] = now;
            sw.busy_mark[v] = busy;
            sw.last_load[v] = load;
            // policy->cur: each vCPU is its own cpufreq policy (the IKS driver)
            (sw.little, sw.big, sw.rate_ns, sw.request_khz[v])
        };
        let f_high = cur == fmax;
        if ci == little && f_high && load > up {
            self.switch_core(v, big);
            self.sw.as_mut().unwrap().switches_up += 1;
        } else if ci == big && !f_high && load < down {
            self.switch_core(v, little);
            self.sw.as_mut().unwrap().switches_down += 1;
        } else {
            // v3.4 od_check_cpu(): up to f_max above up_threshold; below the down
            // threshold the lowest frequency keeping the load at it
            let sw = self.sw.as_mut().unwrap();
            if load > up {
                sw.request_khz[v] = fmax;
            } else if load < down {
                let next = (cur * load / down.max(1)).max(fmin);
                sw.request_khz[v] = relation_l(&self.platform.clusters[ci], next);
            }
            if let Some(k) = self.cluster_target(ci) {
                self.set_cluster_freq(ci, k);
            }
        }
        self.events.push(now + rate, EventKind::GovSample { cluster: v as u32 });
    }

    /// The switcher moves vCPU `v` (and its tasks) to the other core of its pair.
    pub(super) fn switch_core(&mut self, v: usize, to: usize) {
        let now = self.now;
        self.update_rq_clock(v);
        self.update_curr(v);
        let from = self.platform.cpu_cluster[v];
        if self.platform.clusters[to].cpus.is_empty() {
            // no live core in that cluster: it starts at its lowest OPP (§II-C)
            let cs = &mut self.clusters[to];
            cs.gen = cs.gen.wrapping_add(1); // drop a pending commit
            cs.opp = 0;
            cs.freq_scale = (self.platform.clusters[to].opps[0].khz << 10) / self.platform.clusters[to].fmax_khz;
            self.meter.set_opp(&self.platform, to, now, 0);
            if let Some(tr) = self.trace.as_mut() {
                tr.freq(now, to, self.platform.clusters[to].opps[0].khz);
            }
        }
        self.meter.move_cpu(&self.platform, v, to, now);
        {
            let m = &self.meter.cpus[v];
            let sw = self.sw.as_mut().unwrap();
            sw.core_busy[v][from] += m.busy_ns - sw.seg_busy[v];
            sw.core_energy[v][from] += m.energy_fj - sw.seg_energy[v];
            sw.seg_busy[v] = m.busy_ns;
            sw.seg_energy[v] = m.energy_fj;
        }
        self.platform.move_cpu(v, to);
        self.meter.moved(&self.platform, from, to);
        let nidle = self.platform.clusters[to].idle_states.len();
        if let Some(s) = self.rqs[v].idle_state {
            self.rqs[v].idle_state = Some(s.min(nidle - 1));
        }
        // the newly active core takes its cluster's present frequency
        let khz = self.khz(v);
        self.sw.as_mut().unwrap().request_khz[v] = khz;
        // the old cluster runs at the max of the remaining requests
        if let Some(k) = self.cluster_target(from) {
            self.set_cluster_freq(from, k);
        }
        if self.rqs[v].curr.is_some() {
            self.arm_completion(v);
        }
        self.trace_power(v);
    }

    /// result.json: the switcher's and util-aware's counters and the time per core.
    pub fn switcher_result(&self, out: &mut serde_json::Value) {
        let Some(sw) = &self.sw else { return };
        let p = &self.platform;
        let vcpus: Vec<serde_json::Value> = (0..self.rqs.len())
            .map(|v| {
                let m = &self.meter.cpus[v];
                let cur = p.cpu_cluster[v];
                let mut busy = sw.core_busy[v].clone();
                let mut energy = sw.core_energy[v].clone();
                busy[cur] += m.busy_ns - sw.seg_busy[v];
                energy[cur] += m.energy_fj - sw.seg_energy[v];
                let cores: serde_json::Map<String, serde_json::Value> = p
                    .clusters
                    .iter()
                    .enumerate()
                    .map(|(ci, c)| {
                        (
                            c.name.clone(),
                            serde_json::json!({"busy_s": busy[ci] as f64 / 1e9, "energy_j": energy[ci] as f64 * 1e-15}),
                        )
                    })
                    .collect();
                serde_json::json!({"cpu": v, "core_now": p.clusters[cur].name, "cores": cores})
            })
            .collect();
        let est = ["a", "b"][sw.estimator];
        out["switcher"] = serde_json::json!({
            "mode": "cpu",
            "up_threshold": self.knobs.get(Knob::SwitcherUpThreshold),
            "down_threshold": self.knobs.get(Knob::SwitcherDownThreshold),
            "switches_up": sw.switches_up,
            "switches_down": sw.switches_down,
            "vcpus": vcpus,
        });
        let c = &mut out["counters"];
        c["switches_up"] = sw.switches_up.into();
        c["switches_down"] = sw.switches_down.into();
        if sw.util_aware {
            c["leveling_moves"] = sw.leveling_moves.into();
            c["placements_estimator_a"] = sw.placements[0].into();
            c["placements_estimator_b"] = sw.placements[1].into();
            out["util_aware"] = serde_json::json!({
                "estimator": est,
                "leveling_moves": sw.leveling_moves,
                "placements": sw.placements[sw.estimator],
                "sma_ns": if sw.sma.is_empty() { 0 } else { sw.sma.iter().sum::<u64>() / sw.sma.len() as u64 },
            });
        }
    }
}
