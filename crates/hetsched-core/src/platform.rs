//! The hardware: CPUs, clusters (= frequency / perf domains), OPP tables with per-CPU
//! power, idle states. Immutable during a run. Built from the resolved `PlatformSpec`
//! (docs/engine-interface.md); the Python loader reads device-tree-derived files and does
//! the capacity normalisation of `drivers/base/arch_topology.c` and the Energy Model power
//! of `drivers/opp/of.c`, so every number here is already in kernel units.

use crate::error::{config, from_json, Result};
use serde::Deserialize;

pub const SCHED_CAPACITY_SHIFT: u32 = 10;
pub const SCHED_CAPACITY_SCALE: u64 = 1 << SCHED_CAPACITY_SHIFT;

#[derive(Debug, Clone, Deserialize)]
pub struct OppSpec {
    pub khz: u64,
    pub power_uw: u64,
    #[serde(default)]
    pub cluster_power_uw: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IdleLevel {
    Cpu,
    Cluster,
}

#[derive(Debug, Clone, Deserialize)]
pub struct IdleStateSpec {
    pub name: String,
    pub level: IdleLevel,
    /// cpuidle's exit_latency: what the governor weighs (the DT's wakeup-latency-us, else
    /// entry + exit, a worst case)
    pub exit_latency_ns: u64,
    pub target_residency_ns: u64,
    /// the time a real phone of this SoC takes from waking a CPU in this state to running
    /// the woken task there (its traces' median; docs/mechanisms/idle.md "Measured
    /// wakeups"); None: the CPU pays `exit_latency_ns`
    #[serde(default)]
    pub measured_wakeup_ns: Option<u64>,
    #[serde(default)]
    pub power_uw: u64,
    #[serde(default)]
    pub cluster_power_uw: u64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ClusterSpec {
    pub name: String,
    pub cpus: Vec<usize>,
    pub capacity_orig: u64,
    pub opps: Vec<OppSpec>,
    pub idle_states: Vec<IdleStateSpec>,
    /// a measured context-switch cost on this cluster at f_max, ns (the host platform
    /// measures its own); None: the cost.context_switch_ns default (costs.rs)
    #[serde(default)]
    pub context_switch_ns: Option<u64>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PlatformSpec {
    pub name: String,
    #[serde(default = "default_power_model")]
    pub power_model: String,
    pub clusters: Vec<ClusterSpec>,
    /// big.LITTLE in-kernel switcher, CPU mode (Kim et al.; switcher.rs): each CPU number is
    /// a virtual CPU backed by one core of either cluster at a time; a cluster's `cpus`
    /// lists the virtual CPUs it backs at the start (the other may be empty).
    #[serde(default)]
    pub switcher: bool,
    /// Clusters (indices into `clusters`) whose cluster-level idle states are one power
    /// domain: such a state holds only while every CPU of every cluster listed is idle.
    /// A DynamIQ SoC has several frequency domains ("clusters" here) in one DSU cluster
    /// whose power-down (the DT's `CLUSTER_PD` above every `CPU_PD`) needs all its CPUs
    /// idle. A cluster not listed is a domain of its own (classic big.LITTLE).
    #[serde(default)]
    pub idle_domains: Vec<Vec<usize>>,
    /// Every CPU shares the last-level cache (a DynamIQ DSU's L3): the domain spanning all
    /// clusters carries SD_SHARE_LLC, as v6.12's MC domain over the DSU does. Otherwise
    /// each cluster is its own LLC (classic big.LITTLE: one L2 per cluster).
    #[serde(default)]
    pub shared_llc: bool,
    /// What the device's init scripts write at boot, applied before the user's knobs under
    /// the kernel profile those scripts ran on (the platform file's `device_init`)
    #[serde(default)]
    pub device_init: Option<DeviceInit>,
}

/// A device's boot-time writes (sysctls, cgroup and governor tunables) as engine knobs.
#[derive(Debug, Clone, Deserialize)]
pub struct DeviceInit {
    /// the kernel profile whose device writes them
    pub kernel: String,
    /// (knob, value), in the scripts' order
    pub knobs: Vec<(String, f64)>,
}

fn default_power_model() -> String {
    "dt".into()
}

#[derive(Debug, Clone)]
pub struct Cluster {
    pub name: String,
    pub cpus: Vec<usize>,
    pub capacity_orig: u64,
    pub opps: Vec<OppSpec>,
    pub idle_states: Vec<IdleStateSpec>,
    pub fmax_khz: u64,
    pub context_switch_ns: Option<u64>,
}

#[derive(Debug, Clone)]
pub struct Platform {
    pub name: String,
    pub power_model: String,
    pub clusters: Vec<Cluster>,
    /// cluster index of each CPU (in switcher mode: of the core backing it now)
    pub cpu_cluster: Vec<usize>,
    /// switcher mode (switcher.rs): `cpu_cluster` and `clusters[].cpus` change at runtime
    pub switcher: bool,
    /// idle power domain of each cluster (an index into `domains`)
    pub cluster_domain: Vec<usize>,
    /// the clusters of each idle power domain, ascending
    pub domains: Vec<Vec<usize>>,
    /// every CPU shares the last-level cache (PlatformSpec::shared_llc)
    pub shared_llc: bool,
    /// PlatformSpec::device_init
    pub device_init: Option<DeviceInit>,
}

/// The largest value of a device-tree cell (`opp-hz` in kHz, `exit-latency-us`,
/// `min-residency-us`): no real platform's frequency or latency comes near it, and the
/// engine's sums of them (cycles, energies, deadlines in ns) stay far from u64's end.
pub const DT_U32_MAX: u64 = u32::MAX as u64;

/// The kernel's EM_MAX_POWER (include/linux/energy_model.h): 64 W in µW, the most any
/// performance state of one CPU may draw in an Energy Model.
pub const EM_MAX_POWER_UW: u64 = 64_000_000;

fn check_at_most(v: u64, max: u64, field: impl FnOnce() -> String) -> Result<()> {
    if v > max {
        return Err(config(
            "platform",
            field(),
            format!("at most {max} (a device-tree u32)"),
        ));
    }
    Ok(())
}

fn check_power(uw: u64, field: impl FnOnce() -> String) -> Result<()> {
    if uw > EM_MAX_POWER_UW {
        return Err(config(
            "platform",
            field(),
            format!("at most {EM_MAX_POWER_UW} µW (the kernel's EM_MAX_POWER, 64 W)"),
        ));
    }
    Ok(())
}

impl Platform {
    pub fn from_json(text: &str) -> Result<Platform> {
        let spec: PlatformSpec = from_json("platform", text)?;
        Platform::from_spec(spec)
    }

    pub fn from_spec(spec: PlatformSpec) -> Result<Platform> {
        if spec.clusters.is_empty() {
            return Err(config("platform", "clusters", "at least one cluster"));
        }
        let n: usize = spec.clusters.iter().map(|c| c.cpus.len()).sum();
        let switcher = spec.switcher;
        if switcher {
            let caps: Vec<u64> = spec.clusters.iter().map(|c| c.capacity_orig).collect();
            if caps.len() != 2 || caps[0] == caps[1] {
                return Err(config(
                    "platform",
                    "switcher",
                    "two clusters of different capacity (a big/little pairing)",
                ));
            }
        }
        if n > 64 {
            return Err(config("platform", "clusters", "at most 64 CPUs"));
        }
        let mut cpu_cluster = vec![usize::MAX; n];
        let mut clusters = Vec::with_capacity(spec.clusters.len());
        for (ci, c) in spec.clusters.into_iter().enumerate() {
            let f = |s: &str| format!("clusters[{ci}].{s}");
            if c.cpus.is_empty() && !switcher {
                return Err(config("platform", f("cpus"), "a non-empty list of CPU numbers"));
            }
            for &cpu in &c.cpus {
                if cpu >= n || cpu_cluster[cpu] != usize::MAX {
                    return Err(config(
                        "platform",
                        f("cpus"),
                        format!("each CPU 0..{} exactly once", n - 1),
                    ));
                }
                cpu_cluster[cpu] = ci;
            }
            if c.capacity_orig == 0 || c.capacity_orig > SCHED_CAPACITY_SCALE {
                return Err(config("platform", f("capacity_orig"), "an integer in 1..=1024"));
            }
            if c.opps.is_empty() {
                return Err(config("platform", f("opps"), "at least one OPP"));
            }
            for (i, o) in c.opps.iter().enumerate() {
                if o.khz == 0 || (i > 0 && o.khz <= c.opps[i - 1].khz) {
                    return Err(config(
                        "platform",
                        f(&format!("opps[{i}].khz")),
                        "positive, strictly ascending kHz",
                    ));
                }
                check_at_most(o.khz, DT_U32_MAX, || f(&format!("opps[{i}].khz")))?;
                check_power(o.power_uw, || f(&format!("opps[{i}].power_uw")))?;
                check_power(o.cluster_power_uw, || f(&format!("opps[{i}].cluster_power_uw")))?;
            }
            if c.idle_states.is_empty() {
                return Err(config("platform", f("idle_states"), "at least the WFI state"));
            }
            for (i, s) in c.idle_states.iter().enumerate() {
                check_at_most(s.exit_latency_ns, DT_U32_MAX, || {
                    f(&format!("idle_states[{i}].exit_latency_ns"))
                })?;
                if let Some(ns) = s.measured_wakeup_ns {
                    check_at_most(ns, DT_U32_MAX, || f(&format!("idle_states[{i}].measured_wakeup_ns")))?;
                }
                let residency = || f(&format!("idle_states[{i}].target_residency_ns"));
                check_at_most(s.target_residency_ns, DT_U32_MAX, residency)?;
                check_power(s.power_uw, || f(&format!("idle_states[{i}].power_uw")))?;
            }
            if let Some(ns) = c.context_switch_ns {
                check_at_most(ns, DT_U32_MAX, || f("context_switch_ns"))?;
            }
            let fmax_khz = c.opps.last().unwrap().khz;
            clusters.push(Cluster {
                name: c.name,
                cpus: c.cpus,
                capacity_orig: c.capacity_orig,
                opps: c.opps,
                idle_states: c.idle_states,
                fmax_khz,
                context_switch_ns: c.context_switch_ns,
            });
        }
        if !clusters.iter().any(|c| c.capacity_orig == SCHED_CAPACITY_SCALE) {
            return Err(config(
                "platform",
                "clusters[].capacity_orig",
                "the biggest CPU normalised to 1024",
            ));
        }
        let (cluster_domain, domains) = idle_domains(&clusters, &spec.idle_domains, switcher)?;
        Ok(Platform {
            name: spec.name,
            power_model: spec.power_model,
            clusters,
            cpu_cluster,
            switcher,
            cluster_domain,
            domains,
            shared_llc: spec.shared_llc,
            device_init: spec.device_init,
        })
    }

    pub fn nr_cpus(&self) -> usize {
        self.cpu_cluster.len()
    }

    #[inline]
    pub fn cluster_of(&self, cpu: usize) -> &Cluster {
        &self.clusters[self.cpu_cluster[cpu]]
    }

    /// arch_scale_cpu_capacity()
    #[inline]
    pub fn capacity_orig(&self, cpu: usize) -> u64 {
        self.cluster_of(cpu).capacity_orig
    }
}

/// Resolve `idle_domains`: each cluster in at most one listed domain, the others alone.
/// The clusters of a shared domain must list the same cluster-level states (exit latency
/// and target residency; their powers may differ), after all their CPU-level states.
fn idle_domains(clusters: &[Cluster], spec: &[Vec<usize>], switcher: bool) -> Result<(Vec<usize>, Vec<Vec<usize>>)> {
    if switcher && spec.iter().any(|d| d.len() > 1) {
        return Err(config(
            "platform",
            "idle_domains",
            "no shared idle domain in switcher mode (each cluster is its own)",
        ));
    }
    let mut cluster_domain = vec![usize::MAX; clusters.len()];
    let mut domains: Vec<Vec<usize>> = Vec::new();
    for (di, d) in spec.iter().enumerate() {
        let f = format!("idle_domains[{di}]");
        if d.is_empty() {
            return Err(config("platform", f, "a non-empty list of cluster indices"));
        }
        let mut members = d.clone();
        members.sort_unstable();
        for &ci in &members {
            if ci >= clusters.len() || cluster_domain[ci] != usize::MAX {
                return Err(config(
                    "platform",
                    f,
                    format!("cluster indices 0..{}, each in at most one domain", clusters.len() - 1),
                ));
            }
            cluster_domain[ci] = domains.len();
        }
        let shape = |c: &Cluster| -> Option<Vec<(u64, u64)>> {
            let first = c.first_cluster_state();
            if c.idle_states[first..].iter().any(|s| s.level != IdleLevel::Cluster) {
                return None;
            }
            Some(
                c.idle_states[first..]
                    .iter()
                    .map(|s| (s.exit_latency_ns, s.target_residency_ns))
                    .collect(),
            )
        };
        let s0 = shape(&clusters[members[0]]);
        if s0.is_none() || members.iter().any(|&ci| shape(&clusters[ci]) != s0) {
            return Err(config(
                "platform",
                f,
                "clusters with the same cluster-level idle states (exit latency, residency), deeper than their CPU-level ones",
            ));
        }
        domains.push(members);
    }
    for (ci, d) in cluster_domain.iter_mut().enumerate() {
        if *d == usize::MAX {
            *d = domains.len();
            domains.push(vec![ci]);
        }
    }
    Ok((cluster_domain, domains))
}

impl Cluster {
    /// Index of the first cluster-level idle state (`idle_states.len()` if none).
    pub fn first_cluster_state(&self) -> usize {
        self.idle_states
            .iter()
            .position(|s| s.level == IdleLevel::Cluster)
            .unwrap_or(self.idle_states.len())
    }
}

impl Platform {
    /// Switcher mode: back `cpu` by the core of cluster `to` from now on.
    pub fn move_cpu(&mut self, cpu: usize, to: usize) {
        let from = self.cpu_cluster[cpu];
        self.clusters[from].cpus.retain(|&c| c != cpu);
        let l = &mut self.clusters[to].cpus;
        let at = l.partition_point(|&c| c < cpu);
        l.insert(at, cpu);
        self.cpu_cluster[cpu] = to;
    }
}

impl Cluster {
    /// Index of the lowest OPP whose frequency is >= khz (RELATION_L), else the highest.
    pub fn opp_at_least(&self, khz: u64) -> usize {
        self.opps
            .iter()
            .position(|o| o.khz >= khz)
            .unwrap_or(self.opps.len() - 1)
    }
}
