//! The big.LITTLE switcher study (Kim et al., "Utilization-aware Load Balancing for the
//! Energy Efficient Operation of the big.LITTLE Processor"): the big.LITTLE in-kernel
//! switcher in CPU mode and its ondemand governor, a platform mechanism under any policy
//! that may run on it.
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
//! * **util-aware (Fig. 3)** is a policy of its own (`policies/util_aware.rs`); `legacy`
//!   (`policies/legacy.rs`) is the kernel's CFS on the virtual CPUs.

use crate::core::{PolicyConfig, Sim};
use crate::cpufreq::relation_l;
use crate::energy::EnergyMeter;
use crate::error::{config, Result};
use crate::event::EventKind;
use crate::features::Knob;
use crate::platform::Platform;

#[derive(Debug, Clone, Default)]
pub struct Switcher {
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
    /// per vCPU, per cluster: busy ns and energy (fJ) of that core, closed segments
    core_busy: Vec<Vec<u64>>,
    core_energy: Vec<Vec<u128>>,
    seg_busy: Vec<u64>,
    seg_energy: Vec<u128>,
}

/// The switcher platform runs ondemand (one clear line otherwise); which policies may run
/// on it is their registry line's (policies/mod.rs).
pub fn check(platform: &Platform, policy: &PolicyConfig) -> Result<()> {
    if platform.switcher && policy.governor != "ondemand" {
        return Err(config(
            "policy",
            "governor",
            format!(
                "ondemand on a switcher platform (the big.LITTLE switcher study, Kim et al., runs ondemand), got {}",
                policy.governor
            ),
        ));
    }
    Ok(())
}

impl Switcher {
    /// U(s) over [GE(s,k), now] in %, and ΔT(s,k) in ns.
    pub fn measured_util(&self, meter: &EnergyMeter, v: usize, now: u64) -> (f64, u64) {
        let dt = now - self.last_epoch[v];
        if dt == 0 {
            return (self.last_load[v] as f64, 0);
        }
        let busy = meter.busy_ns_at(v, now) - self.busy_mark[v];
        (100.0 * busy as f64 / dt as f64, dt)
    }
}

impl Sim {
    /// Set up the switcher state and the vCPUs' staggered governor epochs.
    pub(crate) fn switcher_start(&mut self) {
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
            little,
            big,
            rate_ns,
            last_epoch: vec![0; n],
            busy_mark: vec![0; n],
            last_load: vec![0; n],
            request_khz,
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
    pub(crate) fn switcher_sample(&mut self, v: usize) {
        let now = self.now;
        let (load, _) = self.sw.as_ref().unwrap().measured_util(&self.meter, v, now);
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
    pub(crate) fn switch_core(&mut self, v: usize, to: usize) {
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
            self.trace_frequency(to, self.platform.clusters[to].opps[0].khz);
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
        self.trace_cpu_frequency(v, khz);
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
    }
}
