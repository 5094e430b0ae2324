//! The engine's side of cpufreq, after drivers/cpufreq/cpufreq.c and the cpufreq_update_util()
//! hook of kernel/sched/cpufreq.c (v6.12). Governors implement one trait: a util-driven one
//! (schedutil) is called where the scheduler calls the hook, at that point of the event:
//! `cfs_rq_util_change()` (the root cfs_rq's PELT decayed, or an entity was attached or
//! detached), the enqueue of a task waking from an I/O wait (SCHED_CPUFREQ_IOWAIT), an RT
//! enqueue or dequeue (enqueue_top_rt_rq()) and the blocked-load update of an idle CPU; a
//! sampling one (ondemand, conservative, interactive) runs on a timer per cluster and gets
//! each CPU's busy time from the energy meter. A chosen frequency is committed after
//! `cpufreq.transition_latency_us` (a knob: the platform files carry no clock-latency-ns);
//! at the commit the CPUs' progress and PELT time are accounted at the old speed first.
//! performance and powersave pin the top or bottom OPP.
//!
//! Differences: one transition latency for every cluster; no thermal or user limits on the
//! policy. docs/mechanisms/cpufreq.md.

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

/// SCHED_CPUFREQ_WALT (msm-4.14 include/linux/sched/cpufreq.h): WALT's window-rollover
/// report of a CPU's load.
pub const SCHED_CPUFREQ_WALT: u32 = 1 << 4;
/// SCHED_CPUFREQ_INTERCLUSTER_MIG (msm-4.14): the report of a CPU a task just left or
/// joined from another frequency domain (walt_irq_work for a migration)
pub const SCHED_CPUFREQ_INTERCLUSTER_MIG: u32 = 1 << 3;

/// What schedutil reads of one CPU (sugov_get_util inputs).
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuUtil {
    /// cpu_util_cfs_boost(): max(util_avg, runnable_avg, util_est), capped at capacity_orig;
    /// android-4.19: cpu_util_cfs(), max(util_avg, util_est) (no runnable boost before v6.5)
    pub cfs: u64,
    /// rq->avg_rt.util_avg
    pub rt: u64,
    /// an RT task is runnable on this CPU
    pub rt_runnable: bool,
    /// cpu_bw_dl(): the running deadline bandwidth (the fair server's), capacity units
    pub dl_bw: u64,
    /// the rq's [uclamp_min, uclamp_max] when uclamp is in use
    pub uclamp: Option<[u64; 2]>,
    /// uclamp_rq_is_capped(): cpu_util_cfs + util_rt >= a uclamp_max below 1024
    pub uclamp_capped: bool,
    /// tick_nohz_get_idle_calls_cpu(): idle entries so far (sugov_hold_freq())
    pub idle_calls: u64,
    /// the msm-4.14 profile: WALT's load of the CPU (cpu_util_freq_walt() with nl and pl)
    /// and its schedtune boost margin; `cfs` then holds the boosted util
    pub walt: Option<crate::walt::WaltCpuLoad>,
}

pub trait Governor: Send {
    fn name(&self) -> &'static str;
    /// Whether `update()` needs the per-CPU utils (false: skip computing them); only the
    /// util-driven governors (schedutil) do.
    fn needs_util(&self) -> bool {
        false
    }
    /// cpufreq_update_util(rq, flags) on CPU `idx` of cluster `ci`: the per-CPU bookkeeping
    /// that runs whatever the rate limit says (schedutil's iowait boost); true when the
    /// policy is to be evaluated now, which `update()` then does with the utils.
    fn hook(&mut self, _ci: usize, _idx: usize, _now: u64, _flags: u32, _knobs: &Knobs) -> bool {
        true
    }
    /// The msm-4.14 profile: Qualcomm's variant of the governor, on WALT (`walt`) or, in
    /// the tree built without it (sched_walt=0), on PELT.
    fn set_msm(&mut self, _walt: bool) {}
    /// The Pixel's sched_pixel governor (pixel-5.10): schedutil with separate up and down
    /// rate limits and mainline's utilisation forms on a 5.10 OPP table.
    fn set_sched_pixel(&mut self) {}
    /// msm-4.14 schedutil: how often sugov_walt_adjust() raised a CPU's util by hispeed,
    /// by the new tasks' load, by the predicted load.
    fn walt_raises(&self) -> [u64; 3] {
        [0; 3]
    }
    /// OPP index a cluster starts at (the lowest by default).
    fn initial_opp(&self, _cluster: &Cluster, _knobs: &Knobs) -> usize {
        0
    }
    /// The evaluation that follows a `hook()` returning true, `idx` being the CPU whose
    /// hook it was; returns a new target frequency in kHz (a table frequency) when one is
    /// committed. Governors that are not util-driven ignore it.
    fn update(
        &mut self,
        _ci: usize,
        _idx: usize,
        _now: u64,
        _cluster: &Cluster,
        _utils: &[CpuUtil],
        _knobs: &Knobs,
    ) -> Option<u64> {
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

/// dbs sampling_rate (cpufreq_governor.c): max(2 ticks, the policy's transition delay),
/// unless the governor's own knob sets it (> 0); schedutil's rate limit is schedutil's.
pub fn dbs_sampling_rate_ns(knob_us: f64, knobs: &Knobs) -> u64 {
    if knob_us > 0.0 {
        return (knob_us * 1000.0) as u64;
    }
    (2 * knobs.derived.tick_ns).max(knobs.derived.transition_delay_ns)
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

pub fn make_governor(name: &str, platform: &crate::platform::Platform, legacy: bool) -> Result<Box<dyn Governor>> {
    let nr_clusters = platform.clusters.len();
    match name {
        "schedutil" => Ok(Box::new(schedutil::Schedutil::new(platform, legacy))),
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
    /// cpufreq_update_util(rq, flags) for `cpu`: a util-driven governor is called now, with
    /// the state the caller has left so far.
    pub(crate) fn cpufreq_update_util(&mut self, cpu: usize, flags: u32) {
        if !self.governor.needs_util() {
            return;
        }
        let ci = self.platform.cpu_cluster[cpu];
        let Some(idx) = self.platform.clusters[ci].cpus.iter().position(|&c| c == cpu) else {
            return;
        };
        if self.walt_on() && !self.walt_cpufreq_filter(cpu, flags) {
            return;
        }
        #[cfg(test)]
        {
            self.cpufreq_hook_calls += 1;
        }
        if !self.governor.hook(ci, idx, self.now, flags, &self.knobs) {
            return;
        }
        let mut buf = std::mem::take(&mut self.utils_buf);
        buf.clear();
        for &c in &self.platform.clusters[ci].cpus {
            let rq = &self.rqs[c];
            let cap = self.platform.capacity_orig(c);
            if let Some(w) = self.walt.as_ref() {
                // boosted_cpu_util(): WALT's load plus the CPU's schedtune margin
                let load = w.cpu_load(c, cap);
                let margin = self.schedtune_cpu_margin(c, load.util);
                buf.push(CpuUtil {
                    cfs: ((load.util as i64 + margin).max(0) as u64).min(cap),
                    idle_calls: rq.idle_calls,
                    walt: Some(load),
                    ..Default::default()
                });
                continue;
            }
            if !self.rt_avg.is_empty() {
                // msm-4.14 built without WALT: boosted_cpu_util() on PELT plus the
                // rq->rt_avg share (schedutil::msm_pelt_cpu_util)
                let boost = self.stune.as_ref().map_or(0, |st| st.cpu_boost(c, self.now));
                let rt = self.rt_avg[c].rt_util(self.now, cap);
                buf.push(CpuUtil {
                    cfs: schedutil::msm_pelt_cpu_util(
                        rq.cfs.avg.util_avg,
                        rq.cfs.util_est,
                        rq.avg_rt.util_avg,
                        boost,
                        rt,
                        cap,
                    ),
                    idle_calls: rq.idle_calls,
                    ..Default::default()
                });
                continue;
            }
            let cfs = &rq.cfs;
            let uclamp = if self.uclamp_used { Some(rq.uclamp.value) } else { None };
            let runnable = if self.legacy() { 0 } else { cfs.avg.runnable_avg };
            buf.push(CpuUtil {
                cfs: cfs.avg.util_avg.max(runnable).max(cfs.util_est).min(cap),
                rt: rq.avg_rt.util_avg,
                rt_runnable: !rq.rt_queue.is_empty(),
                dl_bw: rq.dl_bw,
                uclamp,
                // uclamp_rq_is_capped(): cpu_util_cfs() (no runnable_avg) + util_rt
                uclamp_capped: uclamp.is_some_and(|[_, umax]| {
                    umax != 1024 && cfs.avg.util_avg.max(cfs.util_est).min(cap) + rq.avg_rt.util_avg >= umax
                }),
                idle_calls: rq.idle_calls,
                walt: None,
            });
        }
        let r = self
            .governor
            .update(ci, idx, self.now, &self.platform.clusters[ci], &buf, &self.knobs);
        self.utils_buf = buf;
        if let Some(khz) = r {
            self.commit_freq(ci, khz);
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
            // account progress and PELT time at the old speed up to now (WALT too:
            // cpufreq_notifier_trans); the kernel's update_curr() measures wall time,
            // which a frequency change does not split
            self.update_rq_clock(cpu);
            self.account_progress(cpu);
            self.walt_update_curr(cpu, crate::walt::RavgEvent::TaskUpdate);
        }
        let faster = opp > self.clusters[ci].opp;
        self.clusters[ci].opp = opp;
        // topology_set_freq_scale(): (cur << 10) / f_max for the whole policy
        self.clusters[ci].freq_scale = (khz << 10) / self.platform.clusters[ci].fmax_khz;
        self.counters.freq_changes += 1;
        self.meter.set_opp(&self.platform, ci, self.now, opp);
        self.trace_frequency(ci, khz);
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

#[cfg(test)]
mod tests {
    use crate::platform::{ClusterSpec, IdleLevel, OppSpec, PlatformSpec};
    use crate::testutils::{idle, two_cluster_platform};
    use crate::{Platform, PolicyConfig, Sim, TaskState, WorkloadSpec};
    use serde_json::{json, Value};

    const US: u64 = 1_000;
    const MS: u64 = 1_000_000;

    fn sim(p: Platform, tasks: Vec<Value>) -> Sim {
        let w = json!({"name": "test", "duration_ns": null, "timers": 0, "tasks": tasks});
        let pol: PolicyConfig = serde_json::from_value(json!({"scheduler": "cfs", "governor": "schedutil"})).unwrap();
        Sim::new(p, WorkloadSpec::from_json(&w.to_string()).unwrap(), pol).unwrap()
    }

    /// A task pinned to big CPU 2 of the test platform (capacity 1024, 1/2 GHz) runs
    /// `run_ns` of work once, then sleeps 50 ms. At the fork its attach asks for
    /// util 512 (post_init_entity_util_avg: half the free capacity) -> 640 -> 1.25 GHz raw
    /// -> 2 GHz, in effect 100 µs later; at 1 GHz then 2 GHz, 100 µs of work ends near
    /// 150 µs, 2 ms near 2.05 ms. By 120 µs the task runs and the commit is done.
    fn hooks_around_the_sleep(run_ns: u64) -> u64 {
        let task = json!({"name": "t", "cpus": [2], "loop": 1,
            "phases": [{"loop": 1, "events": [{"run": run_ns}, {"sleep": 50 * MS}]}]});
        let mut s = sim(two_cluster_platform(), vec![task]);
        s.run_until(120 * US);
        assert_eq!(s.tasks[0].state, TaskState::Running);
        let before = s.cpufreq_hook_calls;
        s.run_until(3 * MS); // before the first tick's PELT update (4 ms)
        assert_eq!(s.tasks[0].state, TaskState::Sleeping);
        s.cpufreq_hook_calls - before
    }

    #[test]
    fn a_dequeue_calls_cpufreq_only_when_pelt_decayed() {
        // Sleeping at ~150 µs, the rq's PELT clock has not crossed its first 1024-µs period
        // since the fork: update_cfs_rq_load_avg() reports no decay, so the dequeue does not
        // reach cpufreq (v6.12 calls it from cfs_rq_util_change() only). The CPU then
        // idles with no further hook before 3 ms.
        assert_eq!(hooks_around_the_sleep(100 * US), 0);
        // Sleeping at ~2.05 ms, at full speed since ~0.1 ms: the period boundary at
        // 1.048576 ms has passed, the dequeue's update decays, one hook.
        assert_eq!(hooks_around_the_sleep(2 * MS), 1);
    }

    /// Idle calls of `cpu` after 50 ms of a task pinned there that runs 100 µs of work and
    /// sleeps `sleep_ns`, with the number of its sleeps and of the ticks idle CPUs took.
    fn idle_calls_with_sleeps_of(cpu: usize, sleep_ns: u64) -> (u64, u64, u64) {
        let task = json!({"name": "t", "cpus": [cpu], "loop": 1,
            "phases": [{"loop": -1, "events": [{"run": 100 * US}, {"sleep": sleep_ns}]}]});
        let mut s = sim(two_cluster_platform(), vec![task]);
        s.run_until(50 * MS);
        let sleeps = s.tasks[0].stats.nr_wakeups + (s.tasks[0].state == TaskState::Sleeping) as u64;
        (s.rqs[cpu].idle_calls, sleeps, s.counters.idle_ticks)
    }

    /// The 3-ms sleeper on little CPU 0 (one period 3.704 ms: sleeps begin at 0.754,
    /// 4.458, 8.162, 11.866 ms). The first three timers (3.754, 7.458, 11.162 ms) come
    /// before the next jiffy (4, 8, 12 ms): cluster-sleep with the tick kept, each ended by
    /// its timer (measured 3.5 - 0.5 = 3 ms, capped at 3 ms: bucket 3 stays at 8192).
    /// The fourth: the jiffy at 12 ms is 134 µs away, under cluster-sleep's 2 ms: WFI, and
    /// the tick ends it (residency 135 µs with the 1-µs exit: 134 µs measured, the timer
    /// within a tick so not the tick-wakeup case): factor 7168 + 1024·134/3000 = 7213.
    /// The re-selection at 12.001 ms, timer 2.865 ms away: 2865000·7213/8192 = 2522613 ns
    /// (history [250, 3000 x3, 134, 0 x3] has no pattern), cluster-sleep fits, < a tick:
    /// the tick is kept again, the next event the timer (2.865 ms >= 2 ms). No idle call
    /// through all this but the start's. Returns the idle calls by 11.8 ms.
    fn three_ms_sleeper_idle_calls() -> u64 {
        let task = json!({"name": "t", "cpus": [0], "loop": 1,
            "phases": [{"loop": -1, "events": [{"run": 100 * US}, {"sleep": 3 * MS}]}]});
        let mut s = sim(two_cluster_platform(), vec![task]);
        s.run_until(11_800_000);
        let calls = s.rqs[0].idle_calls;
        assert_eq!(s.counters.idle_ticks, 0);
        s.run_until(12_100_000);
        assert_eq!(s.counters.idle_ticks, 1);
        assert_eq!(s.rqs[0].idle_state, Some(1));
        assert_eq!(s.rqs[0].menu.predicted_ns, 2_522_613);
        assert!(!s.rqs[0].tick_stopped);
        assert_eq!(s.rqs[0].idle_calls, calls);
        calls
    }

    #[test]
    fn an_idle_entry_counts_an_idle_call_when_menu_stops_the_tick() {
        // Little CPU 0's states: WFI (residency 1 µs) and cluster-sleep (2 ms); the tick
        // is 4 ms. Each sleep arms a timer `sleep` ahead; with no idle history menu predicts
        // the timer itself (correction factor 1), and a regular pattern keeps it there.
        // 10 ms: predicted >= a tick, the tick is stopped at every idle entry;
        // 3 ms: 2 ms <= 3 ms < 4 ms, the tick is kept, no idle call (checked below);
        // 1 ms: the timer is closer than cluster-sleep's 2-ms residency, WFI is taken
        // outright with the tick stopped: every entry counts.
        // Plus one for the start, where every CPU enters idle with no timer armed.
        // 10 ms: the timer is beyond a tick, so the tick really stops: no idle tick
        let (calls, sleeps, ticks) = idle_calls_with_sleeps_of(0, 10 * MS);
        assert!(
            sleeps >= 4 && calls == sleeps + 1 && ticks == 0,
            "10 ms: {calls} idle calls, {sleeps} sleeps, {ticks} ticks"
        );
        assert_eq!(three_ms_sleeper_idle_calls(), 1);
        // 1 ms: menu lets the tick stop, but tick_nohz_next_event() keeps it with the timer
        // within a tick: a jiffy inside a sleep ends the WFI, and the idle loop stops the
        // tick again (one more idle call) for the rest of the sleep
        let (calls, sleeps, ticks) = idle_calls_with_sleeps_of(0, MS);
        assert!(
            sleeps >= 30 && ticks > 0 && calls == sleeps + 1 + ticks,
            "1 ms: {calls} idle calls, {sleeps} sleeps, {ticks} ticks"
        );
        // big CPU 2 has WFI only (state_count 1): menu always lets the tick stop
        let (calls, sleeps, ticks) = idle_calls_with_sleeps_of(2, 3 * MS);
        assert!(
            sleeps >= 10 && calls == sleeps + 1 + ticks,
            "big: {calls} idle calls, {sleeps} sleeps, {ticks} ticks"
        );
    }

    /// Two CPUs, capacity 1024, OPPs 0.2/0.5/1/2 GHz, every OPP efficient (EM costs
    /// 10·P/perf at performance 102, 256, 512, 1024: 1960, 2343, 2929, 3906, rising).
    fn low_opp_platform() -> Platform {
        let opp = |mhz: u64, mw: u64| OppSpec {
            khz: mhz * 1000,
            power_uw: mw * 1000,
            cluster_power_uw: 0,
        };
        Platform::from_spec(PlatformSpec {
            switcher: false,
            idle_domains: vec![],
            shared_llc: false,
            device_init: None,
            name: "test-low-opp".into(),
            power_model: "dt".into(),
            clusters: vec![ClusterSpec {
                name: "c".into(),
                cpus: vec![0, 1],
                capacity_orig: 1024,
                opps: vec![opp(200, 20), opp(500, 60), opp(1000, 150), opp(2000, 400)],
                idle_states: vec![idle("WFI", IdleLevel::Cpu, 1, 1, 10, 0)],
                context_switch_ns: None,
            }],
        })
        .unwrap()
    }

    /// Busy time of CPU 0 at each OPP between 400 and 600 ms: 200 ms of a task pinned to
    /// CPU 0 that runs 50 µs of work then waits 2 ms, by `sleep` up to 400 ms and by
    /// `wait` after.
    fn residency_of_io_phase(wait: &str) -> Vec<u64> {
        let task = json!({"name": "io", "cpus": [0], "loop": 1, "phases": [
            {"loop": 180, "events": [{"run": 50 * US}, {"sleep": 2 * MS}]},
            {"loop": -1, "events": [{"run": 50 * US}, {wait: 2 * MS}]}]});
        let mut s = sim(low_opp_platform(), vec![task]);
        s.run_until(400 * MS);
        let before = s.meter.cpus[0].freq_residency_ns.clone();
        s.run_until(600 * MS);
        let after = &s.meter.cpus[0].freq_residency_ns;
        after.iter().zip(&before).map(|(a, b)| a - b).collect()
    }

    #[test]
    fn io_waits_boost_the_frequency() {
        // By 400 ms the fork's initial util (512) has decayed for ~0.4 s (half-life 32 ms):
        // the task's util is that of 50 µs of work per ≥ 2.05 ms, < 1024 · 50 / 2050 ≈ 25
        // plus its util_est of the same order: well under the 82 (-> 102 with headroom ->
        // 200 MHz raw) that would leave the lowest OPP. With `sleep` the CPU stays at
        // 200 MHz. With `iowait` each wakeup passes SCHED_CPUFREQ_IOWAIT, 2-2.5 ms apart
        // (within a 4-ms tick, so the sequence never resets): boost 128 -> 160 -> 312.5 MHz
        // raw -> 500 MHz (a change, so the enqueue's own PELT hook right after is rate
        // limited and does not halve it); 256 -> 625 MHz -> 1 GHz; 512 -> 1.25 GHz -> 2 GHz.
        let slept = residency_of_io_phase("sleep");
        assert!(
            slept[0] > 0 && slept[1..] == [0, 0, 0],
            "sleep: only at 200 MHz {slept:?}"
        );
        let io = residency_of_io_phase("iowait");
        assert!(io[3] > 0, "iowait: the boost reaches 2 GHz {io:?}");
    }

    /// What schedutil reads of a runqueue whose runnable_avg (600) exceeds its util_avg
    /// (200) and util_est (300): big CPU 2 of the test platform (capacity 1024, 1/2 GHz),
    /// its sibling CPU 3 empty.
    ///  * mainline-6.12: cpu_util_cfs_boost = max(200, 600, 300) = 600; with the 1.25
    ///    headroom 750; f = 2 GHz * 750/1024 = 1464843 kHz -> the 2-GHz OPP.
    ///  * android-4.19: cpu_util_cfs = max(200, 300) = 300 (no runnable boost before
    ///    v6.5); f = 1.25 * 2 GHz * 300/1024 = 732421 kHz -> the 1-GHz OPP.
    #[test]
    fn cpu_util_cfs_has_the_runnable_boost_in_mainline_only() {
        use crate::cpufreq::schedutil::{cpu_util_v4_19, effective_cpu_perf, raw_freq, resolve_freq};
        for (kernel, cfs, raw, khz) in [
            ("mainline-6.12", 600u64, 1_464_843u64, 2_000_000u64),
            ("android-4.19", 300, 732_421, 1_000_000),
        ] {
            // a task that sleeps on little CPU 0 the whole time: the big CPUs stay idle
            let t = json!({"name": "t", "cpus": [0], "loop": 1,
                "phases": [{"loop": 1, "events": [{"sleep": 1_000 * MS}]}]});
            let w = json!({"name": "test", "duration_ns": null, "timers": 0, "tasks": [t]});
            let pol: PolicyConfig =
                serde_json::from_value(json!({"scheduler": "cfs", "governor": "schedutil", "kernel": kernel})).unwrap();
            let mut s = Sim::new(
                two_cluster_platform(),
                WorkloadSpec::from_json(&w.to_string()).unwrap(),
                pol,
            )
            .unwrap();
            s.run_until(20 * MS);
            let rq = &mut s.rqs[2];
            (rq.cfs.avg.util_avg, rq.cfs.avg.runnable_avg, rq.cfs.util_est) = (200, 600, 300);
            assert_eq!(s.view().cpu_util_cfs_boost(2), cfs, "{kernel}");
            s.cpufreq_update_util(2, 0);
            assert_eq!(s.utils_buf.len(), 2, "{kernel}: the policy was evaluated");
            assert_eq!(s.utils_buf[0].cfs, cfs, "{kernel}");
            let big = &s.platform.clusters[1];
            let legacy = kernel == "android-4.19";
            let util = if legacy {
                cpu_util_v4_19(&s.utils_buf[0], 1024, 0)
            } else {
                effective_cpu_perf(&s.utils_buf[0], 1024, 8000, 0)
            };
            let f = raw_freq(big, util, legacy, 8000);
            assert_eq!(f, raw, "{kernel}");
            assert_eq!(resolve_freq(big, &[], f), khz, "{kernel}");
        }
    }
}
