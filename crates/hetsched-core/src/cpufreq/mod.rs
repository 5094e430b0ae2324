//! The engine's side of cpufreq, after drivers/cpufreq/cpufreq.c and the cpufreq_update_util()
//! hook of kernel/sched/cpufreq.c (v6.12). Governors implement one trait: a util-driven one
//! (schedutil) is offered each cluster whose util signals changed (enqueue, dequeue, tick, RT
//! activity, clamps), once per event, after it; a sampling one (ondemand, conservative,
//! interactive) runs on a timer per cluster and gets each CPU's busy time from the energy
//! meter. A chosen frequency is committed after `cpufreq.transition_latency_us` (a knob: the
//! platform files carry no clock-latency-ns); at the commit the CPUs' progress and PELT time
//! are accounted at the old speed first. performance and powersave pin the top or bottom OPP.
//!
//! Differences: the hook runs once per event rather than at each trigger inside it; one
//! transition latency for every cluster; no thermal or user limits on the policy.
//! docs/mechanisms/cpufreq.md.

pub mod conservative;
pub mod interactive;
pub mod ondemand;
pub mod schedutil;
pub mod userspace;

use crate::core::*;
use crate::error::{Error, Result};
use crate::event::EventKind;
use crate::features::Knobs;
use crate::platform::Cluster;

/// What schedutil reads of one CPU (sugov_get_util inputs).
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuUtil {
    /// cpu_util_cfs_boost(): max(util_avg, runnable_avg, util_est), capped at capacity_orig
    pub cfs: u64,
    /// rq->avg_rt.util_avg
    pub rt: u64,
    /// an RT task is runnable on this CPU
    pub rt_runnable: bool,
    /// the rq's [uclamp_min, uclamp_max] when uclamp is in use
    pub uclamp: Option<[u64; 2]>,
}

pub trait Governor: Send {
    fn name(&self) -> &'static str;
    /// Whether `update()` needs the per-CPU utils (false: skip computing them); only the
    /// util-driven governors (schedutil) do.
    fn needs_util(&self) -> bool {
        false
    }
    /// Cheap pre-check before the engine gathers the utils: false when an update now
    /// would be ignored anyway (schedutil's rate limit).
    fn wants_update(&self, _ci: usize, _now: u64, _knobs: &Knobs) -> bool {
        true
    }
    /// OPP index a cluster starts at (the lowest by default).
    fn initial_opp(&self, _cluster: &Cluster, _knobs: &Knobs) -> usize {
        0
    }
    /// The cpufreq_update_util() hook for cluster `ci`; returns a new target frequency in
    /// kHz (a table frequency) when one is committed. Governors that are not util-driven
    /// ignore it.
    fn update(&mut self, _ci: usize, _now: u64, _cluster: &Cluster, _utils: &[CpuUtil], _knobs: &Knobs) -> Option<u64> {
        None
    }
    /// Sampling governors (the kernel's cpufreq_governor.c "dbs" family): the delay to the
    /// first sample of each cluster; None for governors that are not timer driven.
    fn first_sample_ns(&self, _knobs: &Knobs) -> Option<u64> {
        None
    }
    /// One sample of cluster `ci`: `loads` are the CPUs' busy percentages over `window_ns`
    /// (dbs_update: 100 x (wall - idle) / wall), `loadadj` the same weighted by the
    /// frequency each busy ns ran at, in % x kHz (interactive's cputime_speedadj x 100 /
    /// Δt). Returns the new target frequency, if any, and the delay to the next sample.
    #[allow(clippy::too_many_arguments)]
    fn sample(
        &mut self,
        _ci: usize,
        _cluster: &Cluster,
        _loads: &[u64],
        _loadadj: &[u64],
        _window_ns: u64,
        _cur_khz: u64,
        _knobs: &Knobs,
    ) -> (Option<u64>, u64) {
        (None, u64::MAX)
    }
}

/// dbs sampling_rate (cpufreq_governor.c): max(2 ticks, the transition delay), unless the
/// knob sets it (> 0).
pub fn dbs_sampling_rate_ns(knob_us: f64, knobs: &Knobs) -> u64 {
    if knob_us > 0.0 {
        return (knob_us * 1000.0) as u64;
    }
    (2 * knobs.derived.tick_ns).max(knobs.derived.rate_limit_ns)
}

/// The lowest table frequency >= khz (CPUFREQ_RELATION_L), else the highest.
pub fn relation_l(cluster: &Cluster, khz: u64) -> u64 {
    cluster.opps[cluster.opp_at_least(khz)].khz
}

/// The highest table frequency <= khz (CPUFREQ_RELATION_H), else the lowest.
pub fn relation_h(cluster: &Cluster, khz: u64) -> u64 {
    cluster
        .opps
        .iter()
        .rev()
        .find(|o| o.khz <= khz)
        .unwrap_or(&cluster.opps[0])
        .khz
}

/// The table frequency closest to khz, ties to the higher (CPUFREQ_RELATION_C).
pub fn relation_c(cluster: &Cluster, khz: u64) -> u64 {
    let (lo, hi) = (relation_h(cluster, khz), relation_l(cluster, khz));
    if khz.abs_diff(lo) < hi.abs_diff(khz) {
        lo
    } else {
        hi
    }
}

/// `performance`: pin to policy->max.
pub struct Performance;
/// `powersave`: pin to policy->min.
pub struct Powersave;

impl Governor for Performance {
    fn name(&self) -> &'static str {
        "performance"
    }
    fn initial_opp(&self, c: &Cluster, _knobs: &Knobs) -> usize {
        c.opps.len() - 1
    }
}

impl Governor for Powersave {
    fn name(&self) -> &'static str {
        "powersave"
    }
}

pub const GOVERNORS: &[(&str, &str)] = &[
    (
        "schedutil",
        "util-driven DVFS: f = f_max * 1.25 * util / capacity, per cluster (kernel/sched/cpufreq_schedutil.c)",
    ),
    ("performance", "every cluster at its highest OPP"),
    ("powersave", "every cluster at its lowest OPP"),
    (
        "ondemand",
        "sampled busy load: above up_threshold -> f_max, else proportional (drivers/cpufreq/cpufreq_ondemand.c)",
    ),
    (
        "conservative",
        "sampled busy load: one freq_step up above up_threshold, down below down_threshold (cpufreq_conservative.c)",
    ),
    (
        "userspace",
        "a fixed frequency, userspace.khz, resolved per cluster (cpufreq_userspace.c)",
    ),
    (
        "interactive",
        "Android's: speed-adjusted load against target_load, hispeed jump, min_sample_time hold (cpufreq_interactive.c)",
    ),
];

pub fn make_governor(name: &str, nr_clusters: usize) -> Result<Box<dyn Governor>> {
    match name {
        "schedutil" => Ok(Box::new(schedutil::Schedutil::new(nr_clusters))),
        "ondemand" => Ok(Box::new(ondemand::Ondemand::new(nr_clusters))),
        "conservative" => Ok(Box::new(conservative::Conservative::new(nr_clusters))),
        "userspace" => Ok(Box::new(userspace::Userspace)),
        "interactive" => Ok(Box::new(interactive::Interactive::new(nr_clusters))),
        "performance" => Ok(Box::new(Performance)),
        "powersave" => Ok(Box::new(Powersave)),
        _ => Err(Error::Unknown {
            field: "governor".into(),
            kind: "governor",
            name: name.into(),
            choices: GOVERNORS.iter().map(|g| g.0).collect::<Vec<_>>().join(", "),
        }),
    }
}

// ---------------------------------------------------------------------------------------
// the engine's side of cpufreq: cpufreq_update_util, the frequency commit, sampling governors' timers

impl Sim {
    pub(crate) fn run_cpufreq(&mut self) {
        for ci in 0..self.clusters.len() {
            if !self.clusters[ci].dirty {
                continue;
            }
            self.clusters[ci].dirty = false;
            if self.governor.needs_util() && self.governor.wants_update(ci, self.now, &self.knobs) {
                let mut buf = std::mem::take(&mut self.utils_buf);
                buf.clear();
                for &cpu in &self.platform.clusters[ci].cpus {
                    let rq = &self.rqs[cpu];
                    let cap = self.platform.capacity_orig(cpu);
                    let c = &rq.cfs;
                    buf.push(CpuUtil {
                        cfs: c.avg.util_avg.max(c.avg.runnable_avg).max(c.util_est).min(cap),
                        rt: rq.avg_rt.util_avg,
                        rt_runnable: !rq.rt_queue.is_empty(),
                        uclamp: if self.uclamp_used { Some(rq.uclamp.value) } else { None },
                    });
                }
                let r = self
                    .governor
                    .update(ci, self.now, &self.platform.clusters[ci], &buf, &self.knobs);
                self.utils_buf = buf;
                if let Some(khz) = r {
                    self.commit_freq(ci, khz);
                }
            }
        }
    }

    /// __cpufreq_driver_target(): the new frequency takes effect after the transition
    /// latency; a later commit supersedes a pending one.
    pub(crate) fn commit_freq(&mut self, ci: usize, khz: u64) {
        let lat = self.knobs.derived.transition_latency_ns;
        let cs = &mut self.clusters[ci];
        cs.gen = cs.gen.wrapping_add(1);
        let gen = cs.gen;
        self.pending_khz[ci] = khz;
        self.events.push(
            self.now + lat,
            EventKind::FreqCommit {
                cluster: ci as u32,
                gen,
            },
        );
    }

    /// A sampling governor's timer (dbs_work_handler): the busy load of each CPU of the
    /// cluster since the last sample, as cpufreq_governor.c's dbs_update measures it
    /// (busy = not in an idle state; leaving an idle state counts as busy here).
    pub(crate) fn governor_sample(&mut self, ci: usize) {
        let now = self.now;
        let window = now - self.gov_last_sample[ci];
        self.gov_last_sample[ci] = now;
        let mut loads = Vec::with_capacity(self.platform.clusters[ci].cpus.len());
        let mut loadadj = Vec::with_capacity(loads.capacity());
        for &cpu in &self.platform.clusters[ci].cpus {
            let busy = self.meter.busy_ns_at(cpu, now);
            let delta = busy - self.gov_busy_mark[cpu];
            self.gov_busy_mark[cpu] = busy;
            loads.push((100 * delta).checked_div(window).unwrap_or(0));
            let speed = self.meter.busy_khz_ns_at(&self.platform, cpu, now);
            let dspeed = speed - self.gov_speed_mark[cpu];
            self.gov_speed_mark[cpu] = speed;
            loadadj.push((100 * dspeed).checked_div(window as u128).unwrap_or(0) as u64);
        }
        let cur = self.platform.clusters[ci].opps[self.clusters[ci].opp].khz;
        let (target, next) = self.governor.sample(
            ci,
            &self.platform.clusters[ci],
            &loads,
            &loadadj,
            window,
            cur,
            &self.knobs,
        );
        if let Some(khz) = target {
            self.commit_freq(ci, khz);
        }
        if next != u64::MAX {
            self.events
                .push(now + next, EventKind::GovSample { cluster: ci as u32 });
        }
    }

    pub(crate) fn on_freq_commit(&mut self, ci: usize, khz: u64) {
        let opp = self.platform.clusters[ci]
            .opps
            .iter()
            .position(|o| o.khz == khz)
            .unwrap();
        if opp == self.clusters[ci].opp {
            return;
        }
        let nr = self.platform.clusters[ci].cpus.len();
        for i in 0..nr {
            let cpu = self.platform.clusters[ci].cpus[i];
            // account progress and PELT time at the old speed up to now
            self.update_rq_clock(cpu);
            self.update_curr(cpu);
        }
        let faster = opp > self.clusters[ci].opp;
        self.clusters[ci].opp = opp;
        // topology_set_freq_scale(): (cur << 10) / f_max for the whole policy
        self.clusters[ci].freq_scale = (khz << 10) / self.platform.clusters[ci].fmax_khz;
        self.counters.freq_changes += 1;
        self.meter.set_opp(&self.platform, ci, self.now, opp);
        if let Some(tr) = self.trace.as_mut() {
            tr.freq(self.now, ci, khz);
        }
        for i in 0..nr {
            let cpu = self.platform.clusters[ci].cpus[i];
            // A faster CPU finishes earlier: re-arm. A slower one finds work left when the
            // old event fires and re-arms then (on_complete), which saves an event.
            if faster && self.rqs[cpu].curr.is_some() {
                self.arm_completion(cpu);
            }
            self.trace_power(cpu);
        }
    }
}
