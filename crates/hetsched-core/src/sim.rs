//! The simulation: runqueues, tasks, and the event loop that drives the scheduler core
//! (kernel/sched/core.c's role): enqueue/dequeue, schedule(), the tick, try_to_wake_up(),
//! frequency commits and idle entry/exit. Mechanisms live in their own modules (pelt,
//! fair, cpufreq, idle, energy, placement, balance); this file sequences them.
//!
//! Time is integer ns. A running task progresses at capacity_orig/1024 * f/f_max of
//! invariant work per ns; its completion is an event recomputed whenever its speed or its
//! CPU changes (stale ones are dropped by generation).

use crate::balance::{LbAction, LoadBalancer, Migration};
use crate::balance_fair::KernelLb;
use crate::cpufreq::{make_governor, CpuUtil, Governor};
use crate::energy::{CpuPowerState, EnergyMeter};
use crate::error::{config, Error, Result};
use crate::event::{EventKind, EventQueue};
use crate::fair::{calc_delta_fair, nice_to_weight, weight_to_wmult, CfsRq, CfsTunables, SchedEntity};
use crate::features::{Knob, Knobs};
use crate::idle::{select_idle_state, Menu};
use crate::pelt::{self, SchedAvg, UTIL_AVG_UNCHANGED};
use crate::platform::Platform;
use crate::policies::{SchedPolicy, WakeKind};
use crate::rt::RtRq;
use crate::sorted_vec::SortedVec;
use crate::sync::{Go, SyncObjects};
use crate::trace::{TimeSeries, Trace};
use crate::uclamp::UclampRq;
use crate::workload::{Ev, PerfSpec, Policy, SetAttr, TaskSpec, TimerMode, WorkloadSpec};
use serde::Deserialize;

pub type TaskId = u32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskState {
    Unstarted,
    /// woken onto a CPU that is still leaving its idle state: enqueued once it is out
    Waking,
    Runnable,
    Running,
    Sleeping,
    /// a SCHED_DEADLINE task that used up its runtime, off the runqueue until replenished
    Throttled,
    Exited,
    /// never runs itself: `fork` starts copies of it
    Template,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cur {
    None,
    Run,
    Runtime,
    /// memory-bound work: no frequency or core type speeds it up
    Memrun,
}

/// rt-app's per-phase log columns, summed over the phase's loops.
#[derive(Debug, Clone, Default)]
pub struct PhaseStats {
    pub loops: u64,
    pub activations: u64,
    pub slack_min_ns: Option<i64>,
    pub slack_sum_ns: i128,
    pub wu_lat_max_ns: u64,
    pub wu_lat_sum_ns: u64,
    pub wakeups: u64,
    pub run_ns: u64,
}

/// The task performance model resolved on the platform: work per ns (Q32) at each
/// cluster's OPPs, and the cold-cache state after a migration.
#[derive(Debug, Clone)]
pub struct PerfModel {
    pub(crate) rate_q32: Vec<Vec<u64>>,
    pub(crate) cache_ns: u64,
    /// 1 / (1 + cache_slowdown) in Q32
    cold_q32: u64,
}

/// SCHED_DEADLINE parameters and CBS state (sched_dl_entity)
#[derive(Debug, Clone, Copy, Default)]
pub struct DlEntity {
    pub dl_runtime: u64,
    pub dl_deadline: u64,
    pub dl_period: u64,
    pub runtime: i64,
    pub deadline: u64,
}

const Q32: u64 = 1 << 32;

#[derive(Debug, Clone, Default)]
pub struct TaskStats {
    pub cpu_time_ns: Vec<u64>,
    pub wait_ns: u64,
    pub migrations: u64,
    pub nr_wakeups: u64,
    pub wakeup_latency_ns: Vec<u64>,
    pub activations: u64,
    pub missed_activations: u64,
    pub slack_sum_ns: i128,
    /// invariant work executed, ns at capacity 1024 and f_max
    pub work_done: u64,
    /// invariant work of completed run events
    pub work_completed: u64,
    pub iowait_ns: u64,
    /// work of memrun events (also in work_done) and time in runtime events: what the
    /// energy lower bound must deliver besides plain work
    pub memrun_done: u64,
    pub runtime_busy_ns: u64,
    pub phases: Vec<PhaseStats>,
    pub dl_throttled: u64,
}

#[derive(Debug, Clone)]
pub struct Task {
    pub id: TaskId,
    pub name: String,
    pub policy: Policy,
    pub nice: i32,
    pub rt_priority: u32,
    pub allowed: u64,
    pub state: TaskState,
    pub cpu: usize,
    pub se: SchedEntity,
    pub(crate) spec: crate::workload::TaskSpec,
    pub(crate) iter: i64,
    pub(crate) phase: usize,
    pub(crate) phase_iter: i64,
    pub(crate) ev: usize,
    pub(crate) cur: Cur,
    pub(crate) work_left: u64,
    pub(crate) runtime_end: u64,
    /// when the current wakeup was due (timer expiry), for wakeup latency
    pub(crate) wake_due: Option<u64>,
    /// when the task last became runnable without running (for wait time)
    pub(crate) queued_since: u64,
    pub(crate) rr_left_ns: u64,
    /// effective uclamp [min, max] (no cgroups: the request, or the class default)
    pub uclamp: [u64; 2],
    pub stats: TaskStats,
    pub(crate) perf: Option<Box<PerfModel>>,
    /// work still to run with a cold cache, and the CPU the task last ran on
    pub(crate) cold_left: u64,
    pub(crate) last_ran: usize,
    pub dl: DlEntity,
    pub(crate) iowait_since: Option<u64>,
    /// copies forked from this template so far
    pub(crate) forks: u32,
    /// the pending wakeup is a timer event's (rt-app logs wu_lat for those only)
    pub(crate) timer_wake: bool,
}

impl Task {
    /// cpupri level of this task's priority: fair = 1, RT = 1 + rt_priority.
    pub fn prio_level(&self) -> u32 {
        match self.policy {
            Policy::Other => 1,
            // above every RT priority (cpupri's CPUPRI_HIGHER)
            Policy::Deadline => 101,
            _ => 1 + self.rt_priority,
        }
    }
    pub fn is_rt(&self) -> bool {
        self.policy != Policy::Other
    }
}

#[derive(Debug, Clone)]
pub struct Rq {
    pub cpu: usize,
    pub curr: Option<TaskId>,
    pub cfs: CfsRq,
    /// runnable RT tasks, the running one included (rt.rs)
    pub rt_queue: RtRq,
    pub clock: u64,
    pub clock_pelt: u64,
    pub lost_idle_time: u64,
    pub avg_rt: SchedAvg,
    pub uclamp: UclampRq,
    /// rq->misfit_task_load (update_misfit_status at pick and tick)
    pub misfit_task_load: u64,
    /// rq->avg_idle and rq->idle_stamp (the newidle balance's idle-time estimate)
    pub avg_idle: u64,
    pub(crate) idle_stamp: Option<u64>,
    /// the cpuidle menu governor's state, and when the current idle period began
    pub(crate) menu: Menu,
    pub(crate) idle_since: u64,
    /// Some(state) while the CPU is idle
    pub idle_state: Option<usize>,
    /// the CPU is leaving an idle state until this time
    pub waking_until: Option<u64>,
    pub(crate) gen: u32,
    /// wakeups waiting for this CPU to leave its idle state: (task, fork)
    pub(crate) pending: Vec<(TaskId, bool)>,
    /// wakeups armed on this CPU: (time, task); the next one drives idle-state choice
    pub(crate) timers: SortedVec<(u64, TaskId)>,
    pub nr_switches: u64,
    /// invariant work executed on this CPU since the start (ns at capacity 1024, f_max)
    pub work_done: u64,
    /// start of the slice being traced
    pub(crate) slice_start: u64,
    /// sched_yield(): the task the next fair pick passes over (the skip buddy)
    pub(crate) yield_skip: Option<TaskId>,
}

impl Rq {
    pub fn nr_running(&self) -> u32 {
        self.cfs.nr_running + self.rt_queue.len() as u32
    }
    #[inline]
    pub(crate) fn pelt_now(&self) -> u64 {
        self.clock_pelt - self.lost_idle_time
    }
}

/// Read-only view of the scheduler state handed to policies (placement, balancing).
pub struct SchedView<'a> {
    pub now: u64,
    pub platform: &'a Platform,
    pub rqs: &'a [Rq],
    pub tasks: &'a [Task],
    pub knobs: &'a Knobs,
    /// rd->overutilized
    pub overutilized: bool,
    /// uclamp_is_used()
    pub uclamp_used: bool,
    /// EAS runs (sched_energy_enabled)
    pub eas: bool,
    /// the android-4.19 kernel profile
    pub legacy: bool,
    /// vendor.cpu_isolation: CPUs the core controller isolated (vendor.rs)
    pub isolated: u64,
    /// GTS: each task's tracked load (runnable, wall-clock; `util_avg` of 1024), empty
    /// unless a policy or hps reads it (policies/gts.rs)
    pub hmp_load: &'a [SchedAvg],
    /// each cluster's current OPP and frequency scale
    pub clusters: &'a [ClusterState],
    pub meter: &'a EnergyMeter,
    /// the big.LITTLE switcher's state on a switcher platform (switcher.rs)
    pub switcher: Option<&'a crate::switcher::Switcher>,
}

impl<'a> SchedView<'a> {
    pub fn nr_cpus(&self) -> usize {
        self.rqs.len()
    }
    /// The current frequency of `cpu`'s cluster.
    pub fn cpu_freq_khz(&self, cpu: usize) -> u64 {
        let ci = self.platform.cpu_cluster[cpu];
        self.platform.clusters[ci].opps[self.clusters[ci].opp].khz
    }
    pub fn capacity_orig(&self, cpu: usize) -> u64 {
        if self.platform.switcher {
            // paper 001: the switcher kernel's scheduler sees identical virtual CPUs
            return crate::platform::SCHED_CAPACITY_SCALE;
        }
        self.platform.capacity_orig(cpu)
    }
    /// idle_cpu(): nothing running, nothing queued, not already being woken.
    pub fn idle_cpu(&self, cpu: usize) -> bool {
        let rq = &self.rqs[cpu];
        rq.curr.is_none() && rq.nr_running() == 0 && rq.waking_until.is_none()
    }
    /// cpu_util_cfs(): max(util_avg, util_est), capped at capacity_orig.
    pub fn cpu_util_cfs(&self, cpu: usize) -> u64 {
        let c = &self.rqs[cpu].cfs;
        c.avg.util_avg.max(c.util_est).min(self.capacity_orig(cpu))
    }
    /// task_util_est(): max(util_avg, util_est ewma) of a task.
    pub fn task_util_est(&self, p: TaskId) -> u64 {
        let a = &self.tasks[p as usize].se.avg;
        a.util_avg.max(a.ewma())
    }
    /// capacity_of(): capacity_orig less the RT pressure (scale_rt_capacity without IRQ
    /// or DL), at least 1.
    pub fn capacity_of(&self, cpu: usize) -> u64 {
        self.capacity_orig(cpu)
            .saturating_sub(self.rqs[cpu].avg_rt.util_avg)
            .max(1)
    }
    /// cpu_overutilized(): the CPU's CFS util does not fit its capacity.
    pub fn cpu_overutilized(&self, cpu: usize) -> bool {
        if let Some(o) = crate::vendor::cpu_overutilized(self, cpu) {
            return o; // vendor.migration_margins
        }
        let [umin, umax] = self.rqs[cpu].uclamp.value;
        self.util_fits_cpu(self.cpu_util_cfs(cpu), umin, umax, cpu) == 0
    }
    /// util_fits_cpu() on this CPU: 1 fits, 0 not, -1 fits but uclamp_min is not met.
    pub fn util_fits_cpu(&self, util: u64, umin: u64, umax: u64, cpu: usize) -> i32 {
        crate::uclamp::util_fits_cpu(
            util,
            umin,
            umax,
            self.capacity_of(cpu),
            self.capacity_orig(cpu),
            self.uclamp_used,
        )
    }
    /// cpupri level of what runs on `cpu`: 0 idle, 1 fair, 1 + rt_priority for RT.
    pub fn rq_prio_level(&self, cpu: usize) -> u32 {
        let rq = &self.rqs[cpu];
        if let Some(level) = rq.rt_queue.highest_level() {
            return level;
        }
        if rq.nr_running() > 0 || rq.curr.is_some() {
            1
        } else {
            0
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct PolicyConfig {
    #[serde(default = "default_scheduler")]
    pub scheduler: String,
    #[serde(default = "default_governor")]
    pub governor: String,
    #[serde(default)]
    pub knobs: std::collections::BTreeMap<String, f64>,
    /// kernel profile: "mainline-6.12" (default) or "android-4.19"
    #[serde(default = "default_kernel")]
    pub kernel: String,
    /// cpuidle governor: "menu" (the kernel's default) or "oracle" (the exact next timer)
    #[serde(default = "default_idle_governor")]
    pub idle_governor: String,
    #[serde(default)]
    pub trace: bool,
    #[serde(default)]
    pub timeseries: bool,
}

pub(crate) fn default_scheduler() -> String {
    "cfs".into()
}
pub(crate) fn default_governor() -> String {
    "schedutil".into()
}
pub(crate) fn default_idle_governor() -> String {
    "menu".into()
}
pub(crate) fn default_kernel() -> String {
    "mainline-6.12".into()
}

/// Kernel profiles: where the phones of the studies (Android 4.14/4.19) differ from v6.12.
pub const KERNEL_PROFILES: &[(&str, &str)] = &[
    (
        "mainline-6.12",
        "v6.12: EM cost 10*P/perf with inefficient states skipped, feec without margin, single-word util_est, rate limit 1.5x latency",
    ),
    (
        "android-4.19",
        "v4.19/5.4 EAS: EM cost P*f_max/f with the 1.25 headroom inside, feec's 6% margin, util_est {enqueued, ewma} without fast-up, rate limit min(1000x latency, 10 ms)",
    ),
];

pub const IDLE_GOVERNORS: &[(&str, &str)] = &[
    (
        "menu",
        "the kernel's default: next timer corrected by past idles, capped by the typical interval",
    ),
    (
        "oracle",
        "the deepest state whose target residency fits the exact time to the next timer",
    ),
];

#[derive(Debug, Clone, Default)]
pub struct Counters {
    pub wakeups: u64,
    pub context_switches: u64,
    pub migrations: u64,
    pub freq_changes: u64,
    /// times rd->overutilized was set
    pub overutilized_set: u64,
}

/// A cluster's frequency state.
#[derive(Debug, Clone, Copy)]
pub struct ClusterState {
    pub opp: usize,
    /// arch_freq_scale of the cluster at its current OPP, set on every change
    pub freq_scale: u64,
    pub(crate) gen: u32,
    pub(crate) dirty: bool,
}

pub struct Sim {
    pub platform: Platform,
    pub knobs: Knobs,
    pub now: u64,
    pub events: EventQueue,
    pub tasks: Vec<Task>,
    pub rqs: Vec<Rq>,
    pub(crate) clusters: Vec<ClusterState>,
    pub(crate) governor: Box<dyn Governor>,
    /// the scheduler policy's ops table (policies/mod.rs)
    pub policy: Box<dyn SchedPolicy>,
    /// the policy's load balancer; None: the policy balances no other way than its own
    pub balancer: Option<Box<dyn LoadBalancer>>,
    pub meter: EnergyMeter,
    pub trace: Option<Trace>,
    pub timeseries: Option<TimeSeries>,
    pub counters: Counters,
    pub config: PolicyConfig,
    pub(crate) timers: Vec<Option<u64>>,
    pub(crate) tunables: CfsTunables,
    pub(crate) resched: Vec<bool>,
    pub(crate) any_resched: bool,
    pub(crate) next_blocked_update: u64,
    pub workload_duration_ns: Option<u64>,
    pub(crate) utils_buf: Vec<CpuUtil>,
    /// frequency each cluster is transitioning to (valid while a FreqCommit is pending)
    pub(crate) pending_khz: Vec<u64>,
    pub(crate) rt_seq: u64,
    pub(crate) nr_exited: usize,
    /// sampling governors: each CPU's busy time at its cluster's last sample, and when
    pub(crate) gov_busy_mark: Vec<u64>,
    pub(crate) gov_last_sample: Vec<u64>,
    pub(crate) gov_speed_mark: Vec<u128>,
    pub sync: SyncObjects,
    /// (time, task, mark) logged by `mark` events
    pub marks: Vec<(u64, u32, u32)>,
    pub(crate) nr_templates: usize,
    pub(crate) wake_buf: Vec<TaskId>,
    /// the energy lower bound's record: per window, per task, (work, memrun work, runtime
    /// ns) done in it; the cumulative values at the last window boundary
    pub lb_rows: Vec<(u32, u32, u64, u64, u64)>,
    pub lb_last: Vec<[u64; 3]>,
    /// end time of each closed window
    pub lb_ends: Vec<u64>,
    pub(crate) lb_next: u64,
    /// rd->overutilized (meaningful with EAS)
    pub overutilized: bool,
    /// uclamp_is_used(): some task sets a clamp
    pub uclamp_used: bool,
    /// the android-4.19 kernel profile
    pub legacy: bool,
    /// whether EAS runs, and if not, why (sched_is_eas_possible)
    pub eas_status: Option<std::result::Result<(), String>>,
    /// each task's HMP tracked load; empty unless the policy or hps reads it (policies/gts.rs)
    pub hmp_load: Vec<SchedAvg>,
    /// MediaTek hps (`hotplug.hps=1`)
    pub hotplug: Option<crate::hotplug::Hotplug>,
    /// vendor.cpu_isolation's core controller (vendor.rs)
    pub core_ctl: crate::vendor::CoreCtl,
    /// paper 001: switcher platforms (switcher.rs)
    pub sw: Option<crate::switcher::Switcher>,
}

/// a * b / c, truncated; u64 when the product fits (the common case), else u128.
#[inline]
pub(crate) fn mul_div(a: u64, b: u64, c: u64) -> u64 {
    match a.checked_mul(b) {
        Some(p) => p / c,
        None => (a as u128 * b as u128 / c as u128) as u64,
    }
}

/// ceil(a * b / c)
#[inline]
pub(crate) fn mul_div_ceil(a: u64, b: u64, c: u64) -> u64 {
    match a.checked_mul(b) {
        Some(p) => p.div_ceil(c),
        None => (a as u128 * b as u128).div_ceil(c as u128) as u64,
    }
}

/// A SchedView borrowing the state fields only, so a policy field can be borrowed
/// mutably beside it.
macro_rules! view {
    ($s:ident) => {
        SchedView {
            now: $s.now,
            platform: &$s.platform,
            rqs: &$s.rqs,
            tasks: &$s.tasks,
            knobs: &$s.knobs,
            overutilized: $s.overutilized,
            uclamp_used: $s.uclamp_used,
            eas: $s.eas_status == Some(Ok(())),
            legacy: $s.legacy,
            isolated: $s.core_ctl.isolated,
            hmp_load: &$s.hmp_load,
            clusters: &$s.clusters,
            meter: &$s.meter,
            switcher: $s.sw.as_ref(),
        }
    };
}

/// select_fallback_rq(): the first CPU the task may run on (the kernel takes the first
/// allowed active CPU of its node; one node here).
pub(crate) fn select_fallback_rq(t: &Task) -> usize {
    t.allowed.trailing_zeros() as usize
}

/// se->slice: the custom slice, clamped as sched_attr's (0.1 ms .. 100 ms), else the base slice.
#[inline]
pub(crate) fn base_slice(se: &SchedEntity, base: u64) -> u64 {
    if se.slice > 0 {
        se.slice.clamp(100_000, 100_000_000)
    } else {
        base
    }
}

/// A task in its initial state from its spec; `field` names it in errors.
pub(crate) fn make_task(id: TaskId, t: &TaskSpec, platform: &Platform, field: String) -> Result<Task> {
    let n = platform.nr_cpus();
    let allowed = cpus_mask(t.cpus.as_deref(), n, &field)?;
    let weight = nice_to_weight(t.nice);
    let perf = match &t.perf {
        Some(pf) => Some(Box::new(perf_model(pf, platform, &field)?)),
        None => None,
    };
    let dl = if t.policy == Policy::Deadline {
        let period = if t.dl_period_ns == 0 {
            t.dl_runtime_ns
        } else {
            t.dl_period_ns
        };
        DlEntity {
            dl_runtime: t.dl_runtime_ns,
            dl_period: period,
            dl_deadline: if t.dl_deadline_ns == 0 {
                period
            } else {
                t.dl_deadline_ns
            },
            runtime: 0,
            deadline: 0,
        }
    } else {
        DlEntity::default()
    };
    Ok(Task {
        id,
        name: t.name.clone(),
        policy: t.policy,
        nice: t.nice,
        rt_priority: t.rt_priority,
        allowed,
        state: if t.start {
            TaskState::Unstarted
        } else {
            TaskState::Template
        },
        cpu: allowed.trailing_zeros() as usize,
        se: SchedEntity {
            weight,
            wmult: weight_to_wmult(weight),
            slice: t.slice_ns.unwrap_or(0),
            ..Default::default()
        },
        spec: t.clone(),
        iter: 0,
        phase: 0,
        phase_iter: 0,
        ev: 0,
        cur: Cur::None,
        work_left: 0,
        runtime_end: 0,
        wake_due: None,
        queued_since: 0,
        rr_left_ns: 0,
        uclamp: match t.policy {
            Policy::Other => [t.util_min.unwrap_or(0) as u64, t.util_max.unwrap_or(1024) as u64],
            _ => [t.util_min.unwrap_or(1024) as u64, t.util_max.unwrap_or(1024) as u64],
        },
        stats: TaskStats {
            cpu_time_ns: vec![0; n],
            phases: vec![PhaseStats::default(); t.phases.len()],
            ..Default::default()
        },
        perf,
        cold_left: 0,
        last_ran: usize::MAX,
        dl,
        iowait_since: None,
        forks: 0,
        timer_wake: false,
    })
}

pub(crate) fn cpus_mask(cpus: Option<&[usize]>, n: usize, field: &str) -> Result<u64> {
    let all_mask = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
    let Some(list) = cpus else { return Ok(all_mask) };
    let mut m = 0u64;
    for &c in list {
        if c >= n {
            return Err(config(
                "workload",
                format!("{field}.cpus"),
                format!("CPU numbers below {n} (the platform's CPU count)"),
            ));
        }
        m |= 1 << c;
    }
    if m == 0 {
        return Err(config("workload", format!("{field}.cpus"), "a non-empty CPU list"));
    }
    Ok(m)
}

/// Resolve the performance model on the platform: at cluster c and frequency f, one unit
/// of work takes (1 - mem_frac) * F / (u_c * f) + mem_frac ns, F the biggest cluster's
/// f_max and u_c the speed per Hz relative to the biggest core.
pub(crate) fn perf_model(pf: &PerfSpec, platform: &Platform, field: &str) -> Result<PerfModel> {
    let fbig = platform
        .clusters
        .iter()
        .max_by_key(|c| c.capacity_orig)
        .map_or(1, |c| c.fmax_khz) as f64;
    if let Some(ipc) = &pf.ipc {
        if ipc.len() != platform.clusters.len() {
            return Err(config(
                "workload",
                format!("{field}.perf.ipc"),
                format!("one speed ratio per cluster ({})", platform.clusters.len()),
            ));
        }
    }
    let rate_q32 = platform
        .clusters
        .iter()
        .enumerate()
        .map(|(ci, c)| {
            let uarch = c.capacity_orig as f64 * fbig / (1024.0 * c.fmax_khz as f64);
            let u = match &pf.ipc {
                Some(v) => v[ci],
                None => uarch.powf(pf.ipc_exp),
            };
            c.opps
                .iter()
                .map(|o| {
                    let ns_per_work = (1.0 - pf.mem_frac) * fbig / (u * o.khz as f64) + pf.mem_frac;
                    ((Q32 as f64 / ns_per_work).round() as u64).max(1)
                })
                .collect()
        })
        .collect();
    Ok(PerfModel {
        rate_q32,
        cache_ns: pf.cache_ns,
        cold_q32: ((Q32 as f64) / (1.0 + pf.cache_slowdown)).round() as u64,
    })
}

/// Work done in `delta` ns at `rate` (Q32 work/ns), the first `cold` units at `rate * cold_q`.
pub(crate) fn work_in(delta: u64, rate: u64, cold: &mut u64, cold_q: u64) -> u64 {
    let mut d = delta;
    let mut done = 0;
    if *cold > 0 {
        let cold_rate = ((rate as u128 * cold_q as u128) >> 32).max(1);
        let w = ((d as u128 * cold_rate) >> 32) as u64;
        if w < *cold {
            *cold -= w;
            return w;
        }
        let t_cold = ((*cold as u128) << 32).div_ceil(cold_rate) as u64;
        done = *cold;
        *cold = 0;
        d = d.saturating_sub(t_cold);
    }
    done + ((d as u128 * rate as u128) >> 32) as u64
}

/// Time to run `work` at `rate`, the first `cold` units at `rate * cold_q` (ceiling).
pub(crate) fn time_for(work: u64, rate: u64, cold: u64, cold_q: u64) -> u64 {
    let c = cold.min(work);
    let mut t = 0u128;
    if c > 0 {
        let cold_rate = ((rate as u128 * cold_q as u128) >> 32).max(1);
        t += ((c as u128) << 32).div_ceil(cold_rate);
    }
    t += (((work - c) as u128) << 32).div_ceil(rate as u128);
    t.min(u64::MAX as u128 / 2) as u64
}

const NOHZ_BLOCKED_PERIOD_NS: u64 = 32_000_000; // nohz.next_blocked = now + 32 ms (LOAD_AVG_PERIOD)

impl Sim {
    pub fn new(platform: Platform, workload: WorkloadSpec, policy: PolicyConfig) -> Result<Sim> {
        Sim::with_policy(platform, workload, policy, |base| base)
    }

    /// As `new`, with the registry's policy for `policy.scheduler` handed to `wrap`, whose
    /// result runs instead: a policy defined outside the registry (a Python class) that
    /// keeps the base policy's behaviour for the hooks it does not define.
    pub fn with_policy(
        platform: Platform,
        workload: WorkloadSpec,
        policy: PolicyConfig,
        wrap: impl FnOnce(Box<dyn SchedPolicy>) -> Box<dyn SchedPolicy>,
    ) -> Result<Sim> {
        if !KERNEL_PROFILES.iter().any(|k| k.0 == policy.kernel) {
            return Err(Error::Unknown {
                field: "kernel".into(),
                kind: "kernel profile",
                name: policy.kernel.clone(),
                choices: KERNEL_PROFILES.iter().map(|k| k.0).collect::<Vec<_>>().join(", "),
            });
        }
        let legacy = policy.kernel == "android-4.19";
        let mut knobs = Knobs::default();
        knobs.set_legacy(legacy);
        for (k, v) in &policy.knobs {
            knobs.set(k, *v)?;
        }
        let info = crate::policies::lookup(&policy.scheduler)?;
        if !IDLE_GOVERNORS.iter().any(|g| g.0 == policy.idle_governor) {
            return Err(Error::Unknown {
                field: "idle_governor".into(),
                kind: "idle governor",
                name: policy.idle_governor.clone(),
                choices: IDLE_GOVERNORS.iter().map(|g| g.0).collect::<Vec<_>>().join(", "),
            });
        }
        crate::switcher::check(&platform, &policy)?;
        crate::policies::check(info, &platform, knobs.get(Knob::FairEevdf) > 0.0)?;
        let nclusters = platform.clusters.len();
        let sched_policy = (info.build)(&crate::policies::PolicyCtx {
            platform: &platform,
            governor: &policy.governor,
            knobs: &knobs,
            legacy,
            nr_tasks: workload.tasks.len(),
        });
        let sched_policy = wrap(sched_policy);
        let eas_status = sched_policy.energy_aware();
        let governor = make_governor(&policy.governor, nclusters)?;
        let n = platform.nr_cpus();
        let mut tasks = Vec::with_capacity(workload.tasks.len());
        for (i, t) in workload.tasks.iter().enumerate() {
            tasks.push(make_task(i as TaskId, t, &platform, format!("tasks[{i}]"))?);
        }
        let uclamp_used = workload.tasks.iter().any(|t| {
            t.util_min.is_some()
                || t.util_max.is_some()
                || t.phases.iter().flat_map(|p| &p.events).any(|e| {
                    matches!(
                        e,
                        Ev::Setattr(SetAttr { util_min: Some(_), .. }) | Ev::Setattr(SetAttr { util_max: Some(_), .. })
                    )
                })
        });
        let initial_opp: Vec<usize> = platform
            .clusters
            .iter()
            .map(|c| governor.initial_opp(c, &knobs))
            .collect();
        let meter = EnergyMeter::new(&platform, &initial_opp);
        let rqs = (0..n)
            .map(|cpu| Rq {
                cpu,
                curr: None,
                cfs: CfsRq::default(),
                rt_queue: RtRq::default(),
                clock: 0,
                clock_pelt: 0,
                lost_idle_time: 0,
                avg_rt: SchedAvg::default(),
                uclamp: UclampRq::default(),
                misfit_task_load: 0,
                avg_idle: 2 * knobs.derived.migration_cost_ns,
                idle_stamp: None,
                menu: Menu::default(),
                idle_since: 0,
                idle_state: Some(0),
                waking_until: None,
                gen: 0,
                pending: Vec::new(),
                timers: SortedVec::default(),
                nr_switches: 0,
                work_done: 0,
                slice_start: 0,
                yield_skip: None,
            })
            .collect();
        let tunables = CfsTunables::from_knobs(n, &knobs);
        let clusters = initial_opp
            .iter()
            .zip(&platform.clusters)
            .map(|(&opp, c)| ClusterState {
                opp,
                freq_scale: (c.opps[opp].khz << 10) / c.fmax_khz,
                gen: 0,
                dirty: false,
            })
            .collect::<Vec<_>>();
        let trace = if policy.trace {
            Some(Trace::new(&platform))
        } else {
            None
        };
        let timeseries = if policy.timeseries {
            Some(TimeSeries::default())
        } else {
            None
        };
        let mut sim = Sim {
            platform,
            knobs,
            now: 0,
            events: EventQueue::default(),
            tasks,
            rqs,
            clusters,
            governor,
            policy: sched_policy,
            balancer: None,
            meter,
            trace,
            timeseries,
            counters: Counters::default(),
            config: policy,
            timers: vec![None; workload.timers],
            tunables,
            resched: vec![false; n],
            any_resched: false,
            next_blocked_update: NOHZ_BLOCKED_PERIOD_NS,
            workload_duration_ns: workload.duration_ns,
            utils_buf: Vec::new(),
            pending_khz: vec![0; nclusters],
            rt_seq: 0,
            nr_exited: 0,
            gov_busy_mark: vec![0; n],
            gov_last_sample: vec![0; nclusters],
            gov_speed_mark: vec![0; n],
            overutilized: false,
            uclamp_used,
            sync: SyncObjects::new(workload.mutexes, workload.conds, &workload.sems, &workload.barriers),
            marks: Vec::new(),
            nr_templates: workload.tasks.iter().filter(|t| !t.start).count(),
            wake_buf: Vec::new(),
            lb_rows: Vec::new(),
            lb_last: Vec::new(),
            lb_ends: Vec::new(),
            lb_next: 0,
            legacy,
            eas_status,
            hmp_load: Vec::new(),
            hotplug: None,
            core_ctl: Default::default(),
            sw: None,
        };
        // hps counts heavy tasks by the HMP tracked load (hotplug.rs), as GTS places by it
        let hps = sim.knobs.get(Knob::HotplugHps) > 0.0;
        if sim.policy.needs_hmp_load() || hps {
            sim.hmp_load = vec![SchedAvg::default(); sim.tasks.len()];
        }
        if hps {
            let user = sim.tasks.iter().map(|t| t.allowed).collect();
            sim.hotplug = Some(crate::hotplug::Hotplug::new(&sim.platform, &sim.knobs, user));
        }
        for cpu in 0..n {
            sim.enter_idle(cpu);
        }
        sim.balancer = sim.policy.load_balancer(&sim.view());
        if let Some(tr) = sim.trace.as_mut() {
            for (ci, c) in sim.platform.clusters.iter().enumerate() {
                tr.freq(0, ci, c.opps[sim.clusters[ci].opp].khz);
            }
        }
        for t in 0..sim.tasks.len() {
            if sim.tasks[t].state == TaskState::Template {
                continue;
            }
            let delay = sim.tasks[t].spec.delay_ns;
            sim.events.push(delay, EventKind::Wakeup { task: t as TaskId });
        }
        sim.events.push(0, EventKind::Tick);
        if sim.platform.switcher {
            sim.switcher_start();
        } else if let Some(first) = sim.governor.first_sample_ns(&sim.knobs) {
            for ci in 0..nclusters {
                sim.events.push(first, EventKind::GovSample { cluster: ci as u32 });
            }
        }
        if sim.timeseries.is_some() {
            sim.events.push(0, EventKind::Sample);
        }
        Ok(sim)
    }

    pub(crate) fn view(&self) -> SchedView<'_> {
        view!(self)
    }

    /// The policies' view of the state (vendor.rs).
    pub fn sched_view(&self) -> SchedView<'_> {
        view!(self)
    }

    #[inline]
    pub(crate) fn khz(&self, cpu: usize) -> u64 {
        let ci = self.platform.cpu_cluster[cpu];
        self.platform.clusters[ci].opps[self.clusters[ci].opp].khz
    }

    /// arch_scale_freq_capacity(): (cur << 10) / f_max
    #[inline]
    pub(crate) fn freq_scale(&self, cpu: usize) -> u64 {
        self.clusters[self.platform.cpu_cluster[cpu]].freq_scale
    }

    // ------------------------------------------------------------------ clocks, PELT

    /// update_rq_clock() + update_rq_clock_pelt(): while something runs, clock_pelt
    /// advances by delta scaled by capacity and frequency (two truncating cap_scale steps,
    /// as the kernel); when idle it snaps to the task clock.
    pub(crate) fn update_rq_clock(&mut self, cpu: usize) {
        let now = self.now;
        let delta = now - self.rqs[cpu].clock;
        if delta == 0 {
            return;
        }
        let busy = self.rqs[cpu].curr.is_some();
        let cap = self.platform.capacity_orig(cpu);
        let fs = self.freq_scale(cpu);
        let rq = &mut self.rqs[cpu];
        rq.clock = now;
        if busy {
            let d = (delta * cap) >> 10;
            rq.clock_pelt += (d * fs) >> 10;
        } else {
            rq.clock_pelt = now;
        }
    }

    /// update_idle_rq_clock_pelt(): on idle entry, time a saturated CPU could not account
    /// (its util_sum at the max) is added to lost_idle_time so util does not creep up.
    pub(crate) fn update_idle_rq_clock_pelt(&mut self, cpu: usize) {
        let rq = &mut self.rqs[cpu];
        let divider = ((pelt::LOAD_AVG_MAX as u64 - 1024) << 10) - pelt::LOAD_AVG_MAX as u64;
        let util_sum = rq.cfs.avg.util_sum + rq.avg_rt.util_sum;
        if util_sum >= divider {
            rq.lost_idle_time += rq.clock - rq.clock_pelt;
        }
        rq.clock_pelt = rq.clock;
    }

    /// __update_load_avg_se(): with UTIL_EST, a recomputed util_avg clears UNCHANGED.
    pub(crate) fn update_se_avg(&mut self, cpu: usize, t: TaskId) {
        let rq = &self.rqs[cpu];
        let now = rq.pelt_now();
        let running = rq.cfs.curr == Some(t);
        let task = &mut self.tasks[t as usize];
        let on_rq = task.se.on_rq as u64;
        if task.se.avg.update(now, on_rq, on_rq, running, task.se.weight) {
            task.se.avg.util_est &= !UTIL_AVG_UNCHANGED;
            task.se.avg.util_est_enqueued &= !UTIL_AVG_UNCHANGED;
        }
    }

    /// update_load_avg(cfs_rq, se, flags): the entity (if any, and if attached), then the
    /// cfs_rq; attach a migrated/new entity. Marks the cluster for cpufreq when the root
    /// cfs_rq signal changed.
    pub(crate) fn update_load_avg(&mut self, cpu: usize, se: Option<TaskId>, attach: bool) {
        if let Some(t) = se {
            if self.tasks[t as usize].se.attached {
                self.update_se_avg(cpu, t);
            }
        }
        let rq = &mut self.rqs[cpu];
        let now = rq.pelt_now();
        let decayed = rq.cfs.avg.update(
            now,
            rq.cfs.load_weight,
            rq.cfs.nr_running as u64,
            rq.cfs.curr.is_some(),
            1,
        );
        if let Some(t) = se {
            let task = &mut self.tasks[t as usize];
            if attach && !task.se.attached {
                pelt::attach_entity_load_avg(&mut self.rqs[cpu].cfs.avg, &mut task.se.avg, task.se.weight);
                task.se.attached = true;
                self.mark_cpufreq(cpu);
                return;
            }
        }
        if decayed {
            self.mark_cpufreq(cpu);
        }
    }

    pub(crate) fn update_rt_avg(&mut self, cpu: usize) {
        let running = self.rqs[cpu]
            .curr
            .map(|t| self.tasks[t as usize].is_rt())
            .unwrap_or(false);
        let rq = &mut self.rqs[cpu];
        let now = rq.pelt_now();
        if rq.avg_rt.update(now, running as u64, running as u64, running, 1) {
            self.mark_cpufreq(cpu);
        }
    }

    #[inline]
    pub(crate) fn mark_cpufreq(&mut self, cpu: usize) {
        let ci = self.platform.cpu_cluster[cpu];
        self.clusters[ci].dirty = true;
    }

    // ------------------------------------------------------------------ execution

    /// update_curr(): account the time since exec_start to the running task: its invariant
    /// work, its vruntime, its statistics.
    pub(crate) fn update_curr(&mut self, cpu: usize) {
        let Some(t) = self.rqs[cpu].curr else { return };
        let now = self.now;
        let cap = self.platform.capacity_orig(cpu);
        let khz = self.khz(cpu);
        let fmax = self.platform.cluster_of(cpu).fmax_khz;
        let ci = self.platform.cpu_cluster[cpu];
        let opp = self.clusters[ci].opp;
        let task = &mut self.tasks[t as usize];
        let delta = now.saturating_sub(task.se.exec_start);
        if delta == 0 {
            return;
        }
        task.se.exec_start = now;
        task.se.sum_exec_runtime += delta;
        task.stats.cpu_time_ns[cpu] += delta;
        task.stats.phases[task.phase].run_ns += delta;
        let done = match (task.cur, &task.perf) {
            (Cur::Run, None) => mul_div(delta, cap * khz, 1024 * fmax),
            (Cur::Run, Some(pf)) => work_in(delta, pf.rate_q32[ci][opp], &mut task.cold_left, pf.cold_q32),
            (Cur::Memrun, _) => {
                let d = delta.min(task.work_left);
                task.stats.memrun_done += d;
                delta
            }
            (Cur::Runtime, _) => {
                task.stats.runtime_busy_ns += delta;
                0
            }
            _ => 0,
        };
        if done > 0 {
            let done = done.min(task.work_left);
            task.work_left -= done;
            task.stats.work_done += done;
            self.rqs[cpu].work_done += done;
        }
        if task.policy == Policy::Deadline {
            // update_curr_dl(): runtime is consumed scaled by frequency and capacity
            let scaled = mul_div(mul_div(delta, khz << 10, fmax), cap, 1 << 20);
            task.dl.runtime -= scaled as i64;
            if task.dl.runtime <= 0 {
                self.resched_cpu(cpu);
            }
            return;
        }
        if task.policy == Policy::Other {
            let vd = calc_delta_fair(delta, task.se.weight, task.se.wmult);
            task.se.vruntime += self.policy.calc_delta_fair(t, vd);
            let v = task.se.vruntime;
            if self.knobs.get(Knob::FairEevdf) > 0.0 && v >= task.se.deadline {
                // update_deadline(): a new slice; reschedule if anyone else is queued
                let slice = base_slice(&task.se, self.tunables.min_granularity);
                task.se.deadline = v + calc_delta_fair(slice, task.se.weight, task.se.wmult);
                task.se.protect = false;
                if self.rqs[cpu].cfs.nr_running > 1 {
                    self.resched_cpu(cpu);
                }
            }
            self.rqs[cpu].cfs.update_min_vruntime(Some(v));
        } else if task.policy == Policy::Rr {
            task.rr_left_ns = task.rr_left_ns.saturating_sub(delta);
        }
    }

    /// Arm the completion event of the running task's current event at the CPU's speed.
    pub(crate) fn arm_completion(&mut self, cpu: usize) {
        let rq = &mut self.rqs[cpu];
        rq.gen = rq.gen.wrapping_add(1);
        let gen = rq.gen;
        let Some(t) = rq.curr else { return };
        let task = &self.tasks[t as usize];
        let at = match task.cur {
            Cur::Run => match &task.perf {
                None => {
                    let cap = self.platform.capacity_orig(cpu);
                    let khz = self.khz(cpu);
                    let fmax = self.platform.cluster_of(cpu).fmax_khz;
                    self.now + mul_div_ceil(task.work_left, 1024 * fmax, cap * khz)
                }
                Some(pf) => {
                    let ci = self.platform.cpu_cluster[cpu];
                    let rate = pf.rate_q32[ci][self.clusters[ci].opp];
                    self.now + time_for(task.work_left, rate, task.cold_left, pf.cold_q32)
                }
            },
            Cur::Memrun => self.now + task.work_left,
            Cur::Runtime => task.runtime_end.max(self.now),
            Cur::None => self.now,
        };
        self.events.push(at, EventKind::Complete { cpu: cpu as u32, gen });
    }

    // ------------------------------------------------------------------ enqueue/dequeue

    pub(crate) fn enqueue_task(&mut self, cpu: usize, t: TaskId, wakeup: bool, initial: bool) {
        self.hmp_track(t, false);
        self.update_rq_clock(cpu);
        let task = &mut self.tasks[t as usize];
        task.cpu = cpu;
        task.state = TaskState::Runnable;
        task.queued_since = self.now;
        let (clamps, is_rt) = (task.uclamp, task.is_rt());
        if self.uclamp_used {
            self.rqs[cpu].uclamp.inc(clamps); // uclamp_rq_inc()
            self.mark_cpufreq(cpu);
        }
        if is_rt {
            self.update_rt_avg(cpu);
            self.rt_seq += 1;
            let task = &mut self.tasks[t as usize];
            let level = task.prio_level();
            task.rr_left_ns = self.knobs.derived.rr_timeslice_ns;
            // EDF among deadline tasks, FIFO within an RT priority
            let key = if task.policy == Policy::Deadline {
                task.dl.deadline
            } else {
                self.rt_seq
            };
            self.rqs[cpu].rt_queue.enqueue(t, level, key);
            self.mark_cpufreq(cpu); // RT runnable: schedutil goes to the top
            return;
        }
        self.update_curr(cpu);
        self.update_load_avg(cpu, Some(t), true);
        let ewma = self.tasks[t as usize].se.avg.ewma();
        // util_est_enqueue()
        self.rqs[cpu].cfs.util_est += ewma;
        let eevdf = self.eevdf();
        if eevdf {
            self.place_entity_eevdf(cpu, t, initial);
        }
        let rq = &mut self.rqs[cpu];
        let task = &mut self.tasks[t as usize];
        if !eevdf && (initial || wakeup) {
            rq.cfs.place_entity(&self.tunables, &mut task.se, initial);
        }
        rq.cfs.load_weight += task.se.weight;
        rq.cfs.nr_running += 1;
        task.se.on_rq = true;
        rq.cfs.timeline.insert((task.se.vruntime, t));
        self.mark_cpufreq(cpu);
        if !initial {
            self.check_overutilized(cpu);
        }
    }

    /// check_update_overutilized_status(): set rd->overutilized if this CPU is; it is
    /// cleared only by the load balancer's statistics pass.
    pub(crate) fn check_overutilized(&mut self, cpu: usize) {
        if self.eas_status == Some(Ok(())) && !self.overutilized && self.view().cpu_overutilized(cpu) {
            self.overutilized = true;
            self.counters.overutilized_set += 1;
        }
    }

    /// dequeue_task(): `sleep` = the task blocks (util_est is updated), else it migrates.
    pub(crate) fn dequeue_task(&mut self, cpu: usize, t: TaskId, sleep: bool) {
        self.hmp_track(t, true);
        self.update_rq_clock(cpu);
        if self.rqs[cpu].yield_skip == Some(t) {
            self.rqs[cpu].yield_skip = None;
        }
        if self.uclamp_used {
            let c = self.tasks[t as usize].uclamp;
            self.rqs[cpu].uclamp.dec(c); // uclamp_rq_dec()
        }
        if self.tasks[t as usize].is_rt() {
            self.update_curr(cpu);
            self.update_rt_avg(cpu);
            let rq = &mut self.rqs[cpu];
            rq.rt_queue.dequeue(t);
            if rq.curr == Some(t) {
                rq.curr = None;
            }
            self.mark_cpufreq(cpu);
            return;
        }
        self.update_curr(cpu);
        self.policy.dequeue_task(&view!(self), cpu, t, sleep);
        let cap = self.platform.capacity_orig(cpu);
        {
            let rq = &mut self.rqs[cpu];
            let task = &mut self.tasks[t as usize];
            // util_est_dequeue() then, for a sleep, util_est_update() before the PELT update
            rq.cfs.util_est = rq.cfs.util_est.saturating_sub(task.se.avg.ewma());
            if sleep {
                if self.legacy {
                    pelt::util_est_update_v4_19(&mut task.se.avg);
                } else {
                    pelt::util_est_update(&mut task.se.avg, cap);
                }
            }
        }
        self.update_load_avg(cpu, Some(t), false);
        if self.eevdf() {
            self.update_entity_lag(cpu, t);
            if !sleep {
                // PLACE_REL_DEADLINE: a migrating task keeps what is left of its slice
                let se = &mut self.tasks[t as usize].se;
                se.deadline = se.deadline.saturating_sub(se.vruntime);
                se.rel_deadline = true;
            }
        }
        let rq = &mut self.rqs[cpu];
        let task = &mut self.tasks[t as usize];
        if rq.cfs.curr == Some(t) {
            rq.cfs.curr = None;
            rq.curr = None;
        } else {
            rq.cfs.timeline.remove(&(task.se.vruntime, t));
        }
        rq.cfs.load_weight -= task.se.weight;
        rq.cfs.nr_running -= 1;
        task.se.on_rq = false;
        rq.cfs.update_min_vruntime(None);
        if !sleep {
            task.se.vruntime = task.se.vruntime.saturating_sub(rq.cfs.min_vruntime);
        }
        self.mark_cpufreq(cpu);
    }

    /// Move a sleeping or queued fair task's PELT and vruntime from `src` to `dst`'s frame
    /// (migrate_task_rq_fair / remove_entity_load_avg: sync to the source cfs_rq, subtract,
    /// attach on the next enqueue).
    pub(crate) fn detach_pelt_for_migration(&mut self, src: usize, t: TaskId) {
        let task = &mut self.tasks[t as usize];
        if task.is_rt() {
            return;
        }
        let src_idle = self.rqs[src].curr.is_none() && self.rqs[src].waking_until.is_none();
        if src_idle {
            self.update_rq_clock(src);
        }
        let task = &mut self.tasks[t as usize];
        let rq = &mut self.rqs[src];
        // sync_entity_load_avg(): decay the blocked task to the cfs_rq's last update. If the
        // source CPU is idle its signals are not being updated, so migrate_se_pelt_lag()
        // decays the task further, to the PELT time the CPU would have now (its clock_pelt
        // at idle entry plus the time idle since: here the clock less lost_idle_time). The
        // engine decays the idle cfs_rq's blocked load to that time too before subtracting,
        // so the task's share leaves no residue (the kernel subtracts the removed load at
        // the cfs_rq's next update, before decaying it, and the residue decays away).
        let mut lut = rq.cfs.avg.last_update_time;
        if src_idle {
            lut = lut.max(rq.pelt_now());
            let (w, nr) = (rq.cfs.load_weight, rq.cfs.nr_running as u64);
            rq.cfs.avg.update(lut, w, nr, false, 1);
        }
        let cfs = &mut rq.cfs;
        task.se.avg.update(lut, 0, 0, false, task.se.weight);
        pelt::detach_entity_load_avg(&mut cfs.avg, &task.se.avg, task.se.weight);
        task.se.avg.last_update_time = 0;
        task.se.attached = false;
    }

    // ------------------------------------------------------------------ schedule()

    pub(crate) fn resched_cpu(&mut self, cpu: usize) {
        self.resched[cpu] = true;
        self.any_resched = true;
    }

    pub(crate) fn pick_next(&self, cpu: usize) -> Option<TaskId> {
        let rq = &self.rqs[cpu];
        if let Some(t) = rq.rt_queue.pick() {
            return Some(t);
        }
        if self.eevdf() {
            return self.pick_eevdf(cpu, None);
        }
        let left = rq.cfs.leftmost().map(|(_, t)| t);
        if left.is_some() && left == rq.yield_skip {
            // the skip buddy: the yielding task lets the next one go first
            if let Some(&(_, second)) = rq.cfs.timeline.iter().nth(1) {
                return Some(second);
            }
        }
        left
    }

    /// __schedule(): put prev, pick next (RT before fair), switch; with nothing to run,
    /// newidle balance, then idle with the idle-state choice.
    pub(crate) fn schedule(&mut self, cpu: usize) {
        self.resched[cpu] = false;
        if self.rqs[cpu].waking_until.is_some() {
            return; // CpuReady will schedule once the CPU is out of its idle state
        }
        self.update_rq_clock(cpu);
        let mut prev = self.rqs[cpu].curr;
        if let Some(p) = prev {
            self.update_curr(cpu);
            let task = &self.tasks[p as usize];
            if task.policy == Policy::Deadline && task.dl.runtime <= 0 && task.state == TaskState::Running {
                self.dl_throttle(cpu, p);
                prev = None;
            }
        }
        if let Some(p) = prev {
            if self.tasks[p as usize].is_rt() {
                self.update_rt_avg(cpu);
            } else {
                // put_prev_entity(): back into the timeline
                self.update_load_avg(cpu, Some(p), false);
                let task = &self.tasks[p as usize];
                let key = (task.se.vruntime, p);
                let rq = &mut self.rqs[cpu];
                rq.cfs.timeline.insert(key);
                rq.cfs.curr = None;
            }
        }
        let mut next = self.pick_next(cpu);
        if next.is_none() {
            next = self.newidle_balance(cpu);
        }
        if next.is_some() && next == prev {
            if let Some(p) = prev {
                if !self.tasks[p as usize].is_rt() {
                    let key = (self.tasks[p as usize].se.vruntime, p);
                    let rq = &mut self.rqs[cpu];
                    rq.cfs.timeline.remove(&key);
                    rq.cfs.curr = Some(p);
                }
                // same task, same speed: its completion event still holds
            }
            return;
        }
        // switch out prev
        if let Some(p) = prev {
            self.trace_slice_end(cpu, p);
            self.policy.put_prev_task(p);
            let task = &mut self.tasks[p as usize];
            if task.state == TaskState::Running {
                task.state = TaskState::Runnable;
                task.queued_since = self.now;
            }
            self.rqs[cpu].curr = None;
        }
        let from_idle = self.rqs[cpu].idle_state.is_some();
        match next {
            Some(n) => self.set_next(cpu, n, from_idle),
            None if !from_idle => self.enter_idle(cpu),
            None => {}
        }
    }

    pub(crate) fn set_next(&mut self, cpu: usize, n: TaskId, from_idle: bool) {
        let now = self.now;
        if !self.tasks[n as usize].is_rt() {
            // set_next_entity(): out of the timeline, PELT update, curr
            let key = (self.tasks[n as usize].se.vruntime, n);
            self.rqs[cpu].cfs.timeline.remove(&key);
            self.update_load_avg(cpu, Some(n), false);
            self.rqs[cpu].cfs.curr = Some(n);
        } else {
            self.update_rt_avg(cpu);
        }
        if from_idle {
            let rq = &mut self.rqs[cpu];
            rq.menu.update(now - rq.idle_since);
            rq.idle_state = None;
            self.meter.set_cpu(&self.platform, cpu, now, CpuPowerState::Busy);
            self.trace_power(cpu);
        }
        let rq = &mut self.rqs[cpu];
        rq.curr = Some(n);
        rq.nr_switches += 1;
        self.rqs[cpu].misfit_task_load = KernelLb::update_misfit_status(&self.view(), cpu);
        let rq = &mut self.rqs[cpu];
        rq.slice_start = now;
        self.counters.context_switches += 1;
        let same_cluster = |a: usize| a != usize::MAX && self.platform.cpu_cluster[a] == self.platform.cpu_cluster[cpu];
        let task = &self.tasks[n as usize];
        let (last, in_cluster) = (task.last_ran, same_cluster(task.last_ran));
        if rq.yield_skip == Some(n) {
            rq.yield_skip = None;
        }
        let task = &mut self.tasks[n as usize];
        if last != cpu {
            if let Some(pf) = &task.perf {
                // a migration: the caches the task warmed are elsewhere (L1/L2 are per
                // CPU; a cluster shares its L2/L3, so half of the footprint is still warm)
                if last != usize::MAX && pf.cache_ns > 0 {
                    task.cold_left = if in_cluster { pf.cache_ns / 2 } else { pf.cache_ns };
                }
            }
            task.last_ran = cpu;
        }
        task.state = TaskState::Running;
        task.stats.wait_ns += now - task.queued_since;
        if let Some(due) = task.wake_due.take() {
            let lat = now - due;
            task.stats.wakeup_latency_ns.push(lat);
            if std::mem::take(&mut task.timer_wake) {
                let ps = &mut task.stats.phases[task.phase];
                ps.wakeups += 1;
                ps.wu_lat_sum_ns += lat;
                ps.wu_lat_max_ns = ps.wu_lat_max_ns.max(lat);
            }
        }
        task.se.exec_start = now;
        task.se.prev_sum_exec_runtime = task.se.sum_exec_runtime;
        self.policy.set_next_task(n);
        let task = &mut self.tasks[n as usize];
        task.se.protect = true; // RUN_TO_PARITY: keep it until its deadline is renewed
        if task.cur == Cur::None {
            // back from a sleep: its next event starts now
            self.advance_program(cpu, n);
        } else {
            self.arm_completion(cpu);
        }
    }

    pub(crate) fn enter_idle(&mut self, cpu: usize) {
        let now = self.now;
        self.rqs[cpu].misfit_task_load = 0; // update_misfit_status(NULL)
        self.update_idle_rq_clock_pelt(cpu);
        let next_timer = self.rqs[cpu].timers.first().map(|&(t, _)| t.saturating_sub(now));
        let cluster = &self.platform.clusters[self.platform.cpu_cluster[cpu]];
        let state = if self.hotplug.as_ref().is_some_and(|h| !h.is_online(cpu)) {
            cluster.idle_states.len() - 1 // hot-unplugged: powered down (hotplug.rs)
        } else if self.config.idle_governor == "menu" {
            self.rqs[cpu].menu.select(cluster, next_timer)
        } else {
            select_idle_state(cluster, next_timer)
        };
        let rq = &mut self.rqs[cpu];
        rq.idle_state = Some(state);
        rq.idle_since = now;
        rq.gen = rq.gen.wrapping_add(1);
        self.meter.set_cpu(&self.platform, cpu, now, CpuPowerState::Idle(state));
        self.trace_power(cpu);
    }

    /// A task was enqueued on an idle CPU: the CPU leaves its idle state, paying the
    /// state's exit latency (counted as busy power) before it can schedule.
    pub(crate) fn kick_idle_cpu(&mut self, cpu: usize) {
        let rq = &self.rqs[cpu];
        if rq.waking_until.is_some() || rq.curr.is_some() {
            return;
        }
        if rq.idle_state.is_none() {
            // between a block and the next pick: not in an idle state yet
            self.resched_cpu(cpu);
            return;
        }
        let lat = self.exit_latency_ns(cpu);
        if lat == 0 {
            self.resched_cpu(cpu);
            return;
        }
        let now = self.now;
        let rq = &mut self.rqs[cpu];
        rq.menu.update(now - rq.idle_since); // menu_reflect(): the idle period ends here
        rq.waking_until = Some(now + lat);
        rq.gen = rq.gen.wrapping_add(1);
        let gen = rq.gen;
        rq.idle_state = None;
        self.meter.set_cpu(&self.platform, cpu, now, CpuPowerState::Busy);
        self.trace_power(cpu);
        self.events
            .push(now + lat, EventKind::CpuReady { cpu: cpu as u32, gen });
    }

    /// check_preempt_curr(): RT beats fair and lower RT; fair uses wakeup_preempt_entity().
    pub(crate) fn check_preempt(&mut self, cpu: usize, p: TaskId) {
        let Some(c) = self.rqs[cpu].curr else {
            self.kick_idle_cpu(cpu);
            return;
        };
        let (pc, cc) = (&self.tasks[p as usize], &self.tasks[c as usize]);
        if pc.is_rt() || cc.is_rt() {
            let edf = pc.policy == Policy::Deadline && cc.policy == Policy::Deadline && pc.dl.deadline < cc.dl.deadline;
            if pc.prio_level() > cc.prio_level() || edf {
                self.resched_cpu(cpu);
            }
            return;
        }
        self.update_rq_clock(cpu);
        self.update_curr(cpu);
        if self.eevdf() {
            // check_preempt_wakeup_fair(): preempt if EEVDF would pick the woken task now
            if self.pick_eevdf(cpu, Some(c)) == Some(p) {
                self.resched_cpu(cpu);
            }
            return;
        }
        let cv = self.tasks[c as usize].se.vruntime;
        if self.rqs[cpu]
            .cfs
            .wakeup_preempt(&self.tunables, cv, &self.tasks[p as usize].se)
        {
            self.resched_cpu(cpu);
        }
    }

    // ------------------------------------------------------------------ balancing

    /// Carry out the kernel load balancer's actions: queued tasks move, a running one is
    /// pushed by the stopper (active balance) if it still runs where it was seen.
    pub(crate) fn apply_lb(&mut self, acts: Vec<LbAction>, preempt: bool) {
        for a in acts {
            match a {
                LbAction::Move(m) => {
                    let t = &self.tasks[m.task as usize];
                    if t.cpu == m.src && t.state == TaskState::Runnable {
                        self.migrate_queued(m, preempt);
                    }
                }
                LbAction::Active(m) => {
                    if self.rqs[m.src].curr == Some(m.task) {
                        self.migrate_running(m);
                    }
                }
            }
        }
    }

    /// sched_balance_newidle(): a CPU about to go idle pulls from a busier one.
    pub(crate) fn newidle_balance(&mut self, cpu: usize) -> Option<TaskId> {
        if self.core_ctl.isolated & (1u64 << cpu) != 0 {
            return None; // vendor.cpu_isolation: an isolated CPU pulls nothing
        }
        if self.hotplug.as_ref().is_some_and(|h| !h.is_online(cpu)) {
            return None;
        }
        let lb = self.balancer.as_mut()?;
        self.rqs[cpu].idle_stamp = Some(self.now); // sched_balance_newidle() entry
        let acts = lb.newidle(&view!(self), cpu);
        if acts.is_empty() {
            return None;
        }
        self.rqs[cpu].idle_stamp = None; // pulled a task: not idle after all
        self.apply_lb(acts, false);
        self.pick_next(cpu)
    }

    /// Move a queued (not running) task: detach from src, attach on dst.
    pub(crate) fn migrate_queued(&mut self, m: Migration, preempt: bool) {
        let Migration { task: t, src, dst } = m;
        debug_assert_ne!(self.rqs[src].curr, Some(t));
        self.policy.migrate_task_rq(&view!(self), t, src, dst);
        self.dequeue_task(src, t, false);
        self.detach_pelt_for_migration(src, t);
        let task = &mut self.tasks[t as usize];
        task.se.vruntime += self.rqs[dst].cfs.min_vruntime;
        task.stats.migrations += 1;
        self.counters.migrations += 1;
        // it was waiting already: keep the start of the wait (the kernel's sched_info
        // carries run_delay across a migration)
        let since = task.queued_since;
        self.enqueue_task(dst, t, false, false);
        self.tasks[t as usize].queued_since = since;
        if preempt {
            self.check_preempt(dst, t);
        }
    }

    /// Active migration of the task running on `src` (the stopper's work in
    /// active_load_balance_cpu_stop): take it off the CPU, move it, reschedule both.
    pub(crate) fn migrate_running(&mut self, m: Migration) {
        let Migration { task: t, src, dst } = m;
        debug_assert_eq!(self.rqs[src].curr, Some(t));
        self.update_rq_clock(src);
        self.update_curr(src);
        self.policy.migrate_task_rq(&view!(self), t, src, dst);
        self.trace_slice_end(src, t);
        self.dequeue_task(src, t, false);
        self.rqs[src].curr = None;
        self.detach_pelt_for_migration(src, t);
        let task = &mut self.tasks[t as usize];
        task.state = TaskState::Runnable;
        task.se.vruntime += self.rqs[dst].cfs.min_vruntime;
        task.stats.migrations += 1;
        self.counters.migrations += 1;
        self.enqueue_task(dst, t, false, false);
        self.check_preempt(dst, t);
        self.resched_cpu(src);
    }

    // ------------------------------------------------------------------ task programs

    /// Run the task's program from its current position until it needs the CPU (run,
    /// runtime, memrun), blocks (sleep, timer, a held lock, ...), gives the CPU up (yield,
    /// a class or affinity change) or ends. Called with the task running on `cpu`.
    pub(crate) fn advance_program(&mut self, cpu: usize, t: TaskId) {
        loop {
            let task = &mut self.tasks[t as usize];
            let spec = &task.spec;
            if task.ev >= spec.phases[task.phase].events.len() {
                task.ev = 0;
                task.phase_iter += 1;
                task.stats.phases[task.phase].loops += 1;
                let ploop = spec.phases[task.phase].loop_;
                if ploop >= 0 && task.phase_iter >= ploop {
                    task.phase_iter = 0;
                    task.phase += 1;
                    if task.phase >= spec.phases.len() {
                        task.phase = 0;
                        task.iter += 1;
                        if spec.loop_ >= 0 && task.iter >= spec.loop_ {
                            self.task_exit(cpu, t);
                            return;
                        }
                    }
                }
                continue;
            }
            let ev = spec.phases[task.phase].events[task.ev].clone();
            task.ev += 1;
            match ev {
                Ev::Run(w) | Ev::Memrun(w) => {
                    if w == 0 {
                        continue;
                    }
                    task.cur = if matches!(ev, Ev::Run(_)) {
                        Cur::Run
                    } else {
                        Cur::Memrun
                    };
                    task.work_left = w;
                    self.arm_completion(cpu);
                    return;
                }
                Ev::Runtime(ns) => {
                    if ns == 0 {
                        continue;
                    }
                    task.cur = Cur::Runtime;
                    task.runtime_end = self.now + ns;
                    self.arm_completion(cpu);
                    return;
                }
                Ev::Sleep(ns) => {
                    task.cur = Cur::None;
                    self.block(cpu, t, self.now + ns);
                    return;
                }
                Ev::SleepUntil(at) => {
                    task.cur = Cur::None;
                    if at > self.now {
                        self.block(cpu, t, at);
                        return;
                    }
                }
                Ev::Iowait(ns) => {
                    task.cur = Cur::None;
                    task.iowait_since = Some(self.now);
                    self.block(cpu, t, self.now + ns);
                    return;
                }
                Ev::Mark(m) => self.marks.push((self.now, t, m)),
                Ev::Timer(ts) => {
                    task.cur = Cur::None;
                    let now = self.now;
                    // rt-app: the first use counts from the thread's start (t_first)
                    let start = self.tasks[t as usize].spec.delay_ns;
                    let next = self.timers[ts.id].unwrap_or(start) + ts.period_ns;
                    self.timers[ts.id] = Some(next);
                    let task = &mut self.tasks[t as usize];
                    let slack = next as i128 - now as i128;
                    task.stats.activations += 1;
                    task.stats.slack_sum_ns += slack;
                    let ps = &mut task.stats.phases[task.phase];
                    ps.activations += 1;
                    ps.slack_sum_ns += slack;
                    ps.slack_min_ns = Some(ps.slack_min_ns.map_or(slack as i64, |m| m.min(slack as i64)));
                    if now < next {
                        task.timer_wake = true;
                        self.block(cpu, t, next);
                        return;
                    }
                    task.stats.missed_activations += 1;
                    if ts.mode == TimerMode::Relative {
                        self.timers[ts.id] = Some(now);
                    }
                }
                Ev::Lock(m) => {
                    if self.sync.lock(m, t) == Go::Block {
                        self.block_sync(cpu, t);
                        return;
                    }
                }
                Ev::Unlock(m) => {
                    let mut wake = std::mem::take(&mut self.wake_buf);
                    self.sync.unlock(m, t, &mut wake);
                    self.wake_sync(&mut wake);
                }
                Ev::Wait(c) => {
                    let mut wake = std::mem::take(&mut self.wake_buf);
                    self.sync.wait(c.cond, c.mutex, t, &mut wake);
                    self.wake_sync(&mut wake);
                    self.block_sync(cpu, t);
                    return;
                }
                Ev::Signal(c) | Ev::Broad(c) => {
                    let mut wake = std::mem::take(&mut self.wake_buf);
                    self.sync.signal(c, matches!(ev, Ev::Broad(_)), &mut wake);
                    self.wake_sync(&mut wake);
                }
                Ev::Sync(c) => {
                    // rt-app's sig_and_wait: signal, then wait with the mutex it holds
                    let mut wake = std::mem::take(&mut self.wake_buf);
                    self.sync.signal(c.cond, false, &mut wake);
                    self.sync.wait(c.cond, c.mutex, t, &mut wake);
                    self.wake_sync(&mut wake);
                    self.block_sync(cpu, t);
                    return;
                }
                Ev::Barrier(b) => {
                    let mut wake = std::mem::take(&mut self.wake_buf);
                    let go = self.sync.barrier(b, t, &mut wake);
                    self.wake_sync(&mut wake);
                    if go == Go::Block {
                        self.block_sync(cpu, t);
                        return;
                    }
                }
                Ev::SemPost(x) => {
                    let mut wake = std::mem::take(&mut self.wake_buf);
                    self.sync.sem_post(x, &mut wake);
                    self.wake_sync(&mut wake);
                }
                Ev::SemWait(x) => {
                    if self.sync.sem_wait(x, t) == Go::Block {
                        self.block_sync(cpu, t);
                        return;
                    }
                }
                Ev::Fork(k) => self.fork(k),
                Ev::Yield(_) => {
                    task.cur = Cur::None;
                    if self.sched_yield(cpu, t) {
                        return;
                    }
                }
                Ev::Setattr(a) => {
                    task.cur = Cur::None;
                    if self.setattr(cpu, t, &a) {
                        return;
                    }
                }
            }
        }
    }

    pub(crate) fn block(&mut self, cpu: usize, t: TaskId, until: u64) {
        self.dequeue_task(cpu, t, true);
        let task = &mut self.tasks[t as usize];
        task.state = TaskState::Sleeping;
        task.wake_due = Some(until);
        self.trace_slice_end(cpu, t);
        self.rqs[cpu].timers.insert((until, t));
        self.events.push(until, EventKind::Wakeup { task: t });
        self.resched_cpu(cpu);
    }

    /// Block on a synchronisation object: no timer, another task's operation wakes it.
    pub(crate) fn block_sync(&mut self, cpu: usize, t: TaskId) {
        self.dequeue_task(cpu, t, true);
        let task = &mut self.tasks[t as usize];
        task.cur = Cur::None;
        task.state = TaskState::Sleeping;
        task.wake_due = None;
        self.trace_slice_end(cpu, t);
        self.resched_cpu(cpu);
    }

    /// Wake the tasks a synchronisation operation released (wakeup latency counts from now).
    pub(crate) fn wake_sync(&mut self, wake: &mut Vec<TaskId>) {
        for &w in wake.iter() {
            if self.tasks[w as usize].state == TaskState::Sleeping {
                self.tasks[w as usize].wake_due = Some(self.now);
                self.wake_up(w);
            }
        }
        wake.clear();
        self.wake_buf = std::mem::take(wake);
    }

    /// select_task_rq() of core.c: the class's choice, then is_cpu_allowed(), falling back
    /// to select_fallback_rq() (a policy that answers prev_cpu after it left the task's
    /// mask: an affinity change, a CPU gone offline).
    pub(crate) fn select_task_rq(&mut self, t: TaskId, prev: usize, kind: WakeKind) -> usize {
        let cpu = self.policy.select_task_rq(&view!(self), t, prev, kind);
        let task = &self.tasks[t as usize];
        if task.allowed & (1 << cpu) != 0 {
            cpu
        } else {
            select_fallback_rq(task)
        }
    }

    /// `fork`: start a copy of template k now (wake_up_new_task).
    pub(crate) fn fork(&mut self, k: u32) {
        let tmpl = &mut self.tasks[k as usize];
        tmpl.forks += 1;
        let mut spec = tmpl.spec.clone();
        spec.name = format!("{}-{:04}", tmpl.name, tmpl.forks - 1);
        spec.start = true;
        spec.delay_ns = self.now;
        let id = self.tasks.len() as TaskId;
        let task = make_task(id, &spec, &self.platform, format!("tasks[{k}]")).expect("validated at load");
        self.tasks.push(task);
        self.wake_up(id);
    }

    /// sched_yield(): fair -> the next pick passes over the task once (CFS's skip buddy;
    /// EEVDF: its deadline moves one slice on), RT -> to the tail of its priority list.
    /// Returns true if the task gave up the CPU (its program resumes when it is picked).
    pub(crate) fn sched_yield(&mut self, cpu: usize, t: TaskId) -> bool {
        self.update_rq_clock(cpu);
        self.update_curr(cpu);
        let task = &self.tasks[t as usize];
        let rq = &self.rqs[cpu];
        if task.is_rt() {
            let level = task.prio_level();
            let others = rq.rt_queue.len() > 1 && rq.rt_queue.highest_level_excluding(t) == Some(level);
            if !others || task.policy == Policy::Deadline {
                return false;
            }
            self.rt_seq += 1;
            let seq = self.rt_seq;
            self.rqs[cpu].rt_queue.requeue_tail(t, level, seq);
        } else {
            if rq.cfs.nr_running < 2 {
                return false;
            }
            if self.eevdf() {
                let se = &mut self.tasks[t as usize].se;
                se.deadline += calc_delta_fair(base_slice(se, self.tunables.min_granularity), se.weight, se.wmult);
                se.protect = false;
            } else {
                self.rqs[cpu].yield_skip = Some(t);
            }
        }
        // the task stays current until schedule() runs; if picked again, the completion
        // armed now (nothing left to run) carries its program on
        self.resched_cpu(cpu);
        self.arm_completion(cpu);
        true
    }

    /// sched_setattr() on itself: a nice change reweights in place; a class, priority,
    /// clamp or affinity change takes the task off the CPU and queues it again with the
    /// new attributes (on another allowed CPU if it may no longer run here). Returns true
    /// if the task left the CPU.
    pub(crate) fn setattr(&mut self, cpu: usize, t: TaskId, a: &SetAttr) -> bool {
        let n = self.platform.nr_cpus();
        let task = &self.tasks[t as usize];
        let new_policy = a.policy.unwrap_or(task.policy);
        let mut allowed = match &a.cpus {
            Some(c) => cpus_mask(c.as_deref(), n, "setattr").unwrap_or(task.allowed),
            None => task.allowed,
        };
        if let (Some(hp), Some(_)) = (self.hotplug.as_mut(), &a.cpus) {
            // the request is kept; only online CPUs take effect (hotplug.rs)
            hp.user_allowed[t as usize] = allowed;
            allowed = hp.effective(allowed);
        }
        let clamps = |p: Policy| {
            let (dmin, dmax) = if p == Policy::Other { (0, 1024) } else { (1024, 1024) };
            [
                a.util_min
                    .map_or(if p != task.policy { dmin } else { task.uclamp[0] }, |v| v as u64),
                a.util_max
                    .map_or(if p != task.policy { dmax } else { task.uclamp[1] }, |v| v as u64),
            ]
        };
        let uclamp = clamps(new_policy);
        let prio = a.rt_priority.unwrap_or(task.rt_priority);
        let requeue = new_policy != task.policy
            || (new_policy != Policy::Other && prio != task.rt_priority)
            || uclamp != task.uclamp
            || allowed & (1 << cpu) == 0;
        let nice = a.nice.unwrap_or(task.nice);
        if !requeue {
            let task = &mut self.tasks[t as usize];
            task.allowed = allowed;
            if nice != task.nice && task.policy == Policy::Other {
                // reweight_entity() on the running task (its vruntime is kept)
                self.update_rq_clock(cpu);
                self.update_curr(cpu);
                let w = nice_to_weight(nice);
                let task = &mut self.tasks[t as usize];
                let rq = &mut self.rqs[cpu];
                rq.cfs.load_weight = rq.cfs.load_weight - task.se.weight + w;
                task.se.weight = w;
                task.se.wmult = weight_to_wmult(w);
            }
            self.tasks[t as usize].nice = nice;
            return false;
        }
        self.update_rq_clock(cpu);
        self.update_curr(cpu);
        self.trace_slice_end(cpu, t);
        let was_fair = !self.tasks[t as usize].is_rt();
        self.dequeue_task(cpu, t, false);
        self.rqs[cpu].curr = None;
        if was_fair {
            // switched_from_fair() / a migration: the task's load leaves this cfs_rq
            self.detach_pelt_for_migration(cpu, t);
        }
        let task = &mut self.tasks[t as usize];
        task.policy = new_policy;
        task.rt_priority = prio;
        task.nice = nice;
        task.uclamp = uclamp;
        task.allowed = allowed;
        let w = nice_to_weight(nice);
        task.se.weight = w;
        task.se.wmult = weight_to_wmult(w);
        task.state = TaskState::Runnable;
        if self.uclamp_used || a.util_min.is_some() || a.util_max.is_some() {
            self.uclamp_used = true;
        }
        let dst = if allowed & (1 << cpu) != 0 {
            cpu
        } else {
            // __set_cpus_allowed_ptr() moves it: select_task_rq() with prev_cpu outside
            // the new mask
            self.select_task_rq(t, cpu, WakeKind::Wakeup)
        };
        if dst != cpu {
            self.policy.migrate_task_rq(&view!(self), t, cpu, dst);
            let task = &mut self.tasks[t as usize];
            task.stats.migrations += 1;
            self.counters.migrations += 1;
        }
        let task = &mut self.tasks[t as usize];
        task.se.vruntime += self.rqs[dst].cfs.min_vruntime;
        self.enqueue_task(dst, t, false, false);
        self.check_preempt(dst, t);
        self.resched_cpu(cpu);
        true
    }

    /// The deadline task ran out of runtime: off the runqueue until the dl timer fires at
    /// the start of its next period (start_dl_timer()).
    pub(crate) fn dl_throttle(&mut self, cpu: usize, t: TaskId) {
        self.trace_slice_end(cpu, t);
        self.dequeue_task(cpu, t, false);
        self.rqs[cpu].curr = None;
        let task = &mut self.tasks[t as usize];
        task.state = TaskState::Throttled;
        task.stats.dl_throttled += 1;
        let dl = &task.dl;
        let at = (dl.deadline + dl.dl_period)
            .saturating_sub(dl.dl_deadline)
            .max(self.now);
        self.events.push(at, EventKind::Wakeup { task: t });
    }

    /// dl_task_timer() -> replenish_dl_entity(): postpone the deadline by periods until the
    /// runtime is positive again, and queue the task back on its CPU.
    pub(crate) fn dl_replenish(&mut self, t: TaskId) {
        let task = &mut self.tasks[t as usize];
        let dl = &mut task.dl;
        while dl.runtime <= 0 {
            dl.deadline += dl.dl_period;
            dl.runtime += dl.dl_runtime as i64;
        }
        if dl.deadline < self.now {
            dl.deadline = self.now + dl.dl_deadline;
            dl.runtime = dl.dl_runtime as i64;
        }
        if task.allowed & (1 << task.cpu) == 0 {
            // its CPU left the task's affinity while it was throttled (hotplug)
            task.cpu = select_fallback_rq(task);
        }
        let cpu = task.cpu;
        let rq = &self.rqs[cpu];
        if rq.waking_until.is_some() || (rq.curr.is_none() && rq.idle_state.is_some() && self.exit_latency_ns(cpu) > 0)
        {
            let task = &mut self.tasks[t as usize];
            task.state = TaskState::Waking;
            self.rqs[cpu].pending.push((t, false));
            self.kick_idle_cpu(cpu);
            return;
        }
        self.enqueue_task(cpu, t, false, false);
        self.check_preempt(cpu, t);
    }

    pub(crate) fn task_exit(&mut self, cpu: usize, t: TaskId) {
        self.dequeue_task(cpu, t, true);
        // task_dead_fair() -> remove_entity_load_avg(): a dead task leaves no blocked load
        self.detach_pelt_for_migration(cpu, t);
        self.trace_slice_end(cpu, t);
        self.tasks[t as usize].state = TaskState::Exited;
        self.nr_exited += 1;
        self.resched_cpu(cpu);
    }

    /// try_to_wake_up() / wake_up_new_task()
    pub(crate) fn wake_up(&mut self, t: TaskId) {
        if self.tasks[t as usize].state == TaskState::Throttled {
            self.dl_replenish(t);
            return;
        }
        let now = self.now;
        let task = &mut self.tasks[t as usize];
        if let Some(since) = task.iowait_since.take() {
            task.stats.iowait_ns += now - since;
        }
        if task.policy == Policy::Deadline && matches!(task.state, TaskState::Unstarted | TaskState::Sleeping) {
            // setup_new_dl_entity() / update_dl_entity(): a new period unless the old
            // deadline is still ahead and the remaining runtime fits the bandwidth
            let dl = &mut task.dl;
            let overflow = dl.deadline <= now
                || (dl.runtime.max(0) as u128) * (dl.dl_deadline as u128)
                    > ((dl.deadline - now) as u128) * (dl.dl_runtime as u128);
            if task.state == TaskState::Unstarted || overflow {
                dl.deadline = now + dl.dl_deadline;
                dl.runtime = dl.dl_runtime as i64;
            }
        }
        let task = &self.tasks[t as usize];
        let fork = task.state == TaskState::Unstarted;
        if !fork && task.state != TaskState::Sleeping {
            return;
        }
        let prev = task.cpu;
        let due = task.wake_due;
        if !fork {
            self.rqs[prev].timers.remove(&(due.unwrap_or(self.now), t));
        }
        let kind = if fork { WakeKind::Fork } else { WakeKind::Wakeup };
        if fork && self.hotplug.is_some() {
            self.hotplug_refresh_affinity(); // a new task: only online CPUs
        }
        if self.tasks[t as usize].policy == Policy::Other {
            let moves = self.policy.balance_wakeup(&view!(self), t);
            for m in moves {
                self.migrate_queued(m, true);
            }
        }
        let cpu = self.select_task_rq(t, prev, kind);
        if fork && !self.hmp_load.is_empty() {
            self.hmp_init_new(t);
        }
        self.counters.wakeups += 1;
        if fork {
            self.post_init_entity_util_avg(cpu, t);
        } else {
            self.tasks[t as usize].stats.nr_wakeups += 1;
            if cpu != prev {
                self.policy.migrate_task_rq(&view!(self), t, prev, cpu);
                self.detach_pelt_for_migration(prev, t);
                let task = &mut self.tasks[t as usize];
                task.se.vruntime =
                    task.se.vruntime.saturating_sub(self.rqs[prev].cfs.min_vruntime) + self.rqs[cpu].cfs.min_vruntime;
                task.stats.migrations += 1;
                self.counters.migrations += 1;
            }
        }
        if fork {
            self.tasks[t as usize].wake_due = Some(self.now);
        }
        // ttwu_do_activate(): the wakeup ends an idle period begun at newidle; fold it into
        // avg_idle (a 1/8 average, capped at 2 x max_idle_balance_cost = 2 x migration cost)
        if let Some(stamp) = self.rqs[cpu].idle_stamp.take() {
            let rq = &mut self.rqs[cpu];
            let sample = (self.now - stamp) as i64;
            let avg = rq.avg_idle as i64 + (sample - rq.avg_idle as i64) / 8;
            rq.avg_idle = (avg.max(0) as u64).min(2 * self.knobs.derived.migration_cost_ns);
        }
        // A CPU in an idle state handles the wakeup only once it is out of that state (the
        // timer interrupt or IPI waits for the exit latency), so the task is not runnable,
        // for PELT or anyone else, before then.
        let rq = &self.rqs[cpu];
        let exiting = rq.waking_until.is_some()
            || (rq.curr.is_none() && rq.idle_state.is_some() && self.exit_latency_ns(cpu) > 0);
        if exiting {
            let task = &mut self.tasks[t as usize];
            task.state = TaskState::Waking;
            task.cpu = cpu;
            self.rqs[cpu].pending.push((t, fork));
            self.kick_idle_cpu(cpu);
            return;
        }
        self.enqueue_task(cpu, t, !fork, fork);
        self.check_preempt(cpu, t);
    }

    /// Exit latency of the idle state `cpu` is really in (a cluster state it chose counts
    /// only if the whole cluster is in it).
    pub(crate) fn exit_latency_ns(&self, cpu: usize) -> u64 {
        let state = self.meter.cpus[cpu].effective_idle;
        self.platform.cluster_of(cpu).idle_states[state].exit_latency_ns
    }

    /// post_init_entity_util_avg(): a new task starts with half the spare capacity of its
    /// CPU, in proportion to its weight; its load starts at its weight.
    pub(crate) fn post_init_entity_util_avg(&mut self, cpu: usize, t: TaskId) {
        let cap_orig = self.platform.capacity_orig(cpu) as i64;
        let cfs = &self.rqs[cpu].cfs.avg;
        let task = &mut self.tasks[t as usize];
        let w = task.se.weight;
        let sa = &mut task.se.avg;
        *sa = SchedAvg::default();
        sa.load_avg = w;
        let cap = (cap_orig - cfs.util_avg as i64) / 2;
        if task.policy == Policy::Other && cap > 0 {
            sa.util_avg = if cfs.util_avg != 0 {
                (cfs.util_avg * w / (cfs.load_avg + 1)).min(cap as u64)
            } else {
                cap as u64
            };
        }
        sa.runnable_avg = sa.util_avg;
    }

    // ------------------------------------------------------------------ events

    pub(crate) fn on_complete(&mut self, cpu: usize) {
        let Some(t) = self.rqs[cpu].curr else { return };
        self.update_rq_clock(cpu);
        self.update_curr(cpu);
        let task = &mut self.tasks[t as usize];
        match task.cur {
            Cur::Run | Cur::Memrun => {
                if task.work_left > 0 {
                    // the CPU slowed down since the event was armed (or truncation of
                    // intermediate accounting left a few units): finish at today's speed
                    self.arm_completion(cpu);
                    return;
                }
                let spec_w = match &task.spec.phases[task.phase].events[task.ev - 1] {
                    Ev::Run(w) | Ev::Memrun(w) => *w,
                    _ => 0,
                };
                task.stats.work_completed += spec_w;
            }
            Cur::Runtime => {
                if self.now < task.runtime_end {
                    self.arm_completion(cpu);
                    return;
                }
            }
            Cur::None => {}
        }
        task.cur = Cur::None;
        self.advance_program(cpu, t);
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

    /// sched_tick() (scheduler_tick() before 6.10) for every busy CPU at one jiffy, then
    /// the periodic balance of each CPU whose interval has passed (SCHED_SOFTIRQ) and the
    /// NOHZ blocked-load decay of idle CPUs.
    pub(crate) fn sched_tick(&mut self) {
        crate::vendor::vendor_tick(self); // vendor (paper 003): margins count, core_ctl
        let now = self.now;
        let n = self.rqs.len();
        let tick_ns = self.knobs.derived.tick_ns;
        // nohz_balancer_kick(): a runqueue with two or more tasks, or on asymmetric systems a
        // misfit task, wakes the idle balancer
        if self.hotplug.as_ref().is_some_and(|h| now >= h.next_ns) {
            self.hps_decide();
        }
        let nohz_kick = self
            .rqs
            .iter()
            .any(|rq| rq.nr_running() >= 2 || rq.misfit_task_load > 0);
        for cpu in 0..n {
            if self.hotplug.as_ref().is_some_and(|h| !h.is_online(cpu)) {
                continue; // offline: no tick, no balancing
            }
            let busy = self.rqs[cpu].curr.is_some();
            if busy && !self.hmp_load.is_empty() {
                let t = self.rqs[cpu].curr.unwrap();
                self.hmp_track(t, true);
            }
            if busy {
                self.update_rq_clock(cpu);
                self.update_curr(cpu);
                let t = self.rqs[cpu].curr.unwrap();
                if self.tasks[t as usize].is_rt() {
                    self.update_rt_avg(cpu);
                    let task = &mut self.tasks[t as usize];
                    if task.policy == Policy::Rr && task.rr_left_ns == 0 {
                        // RR slice expired: to the tail of its priority list
                        task.rr_left_ns = self.knobs.derived.rr_timeslice_ns;
                        let lvl = task.prio_level();
                        self.rt_seq += 1;
                        let seq = self.rt_seq;
                        let rq = &mut self.rqs[cpu];
                        rq.rt_queue.requeue_tail(t, lvl, seq);
                        self.resched_cpu(cpu);
                    }
                } else {
                    self.update_load_avg(cpu, Some(t), false);
                    self.update_rt_avg(cpu);
                    self.check_overutilized(cpu);
                    self.rqs[cpu].misfit_task_load = KernelLb::update_misfit_status(&self.view(), cpu);
                    if !self.eevdf() && self.check_preempt_tick(cpu, t) {
                        self.resched_cpu(cpu);
                        self.policy.put_prev_task(t);
                    }
                    // the policy acts on the whole simulation: it is held apart meanwhile,
                    // so the core's calls into it during its tick reach a stand-in
                    let mut policy = std::mem::replace(&mut self.policy, Box::new(crate::policies::Detached));
                    policy.task_tick(self, cpu, t);
                    self.policy = policy;
                    if let Some(lb) = self.balancer.as_mut() {
                        if let Some(m) = lb.misfit(&view!(self), cpu) {
                            self.migrate_running(m);
                        }
                    }
                }
            }
            // A tickless idle CPU balances only when a busy CPU kicks the idle balancer
            // (nohz_balancer_kick: some rq has >= 2 tasks); with nothing to pull it stays
            // asleep.
            if !busy && self.core_ctl.isolated & (1u64 << cpu) != 0 {
                continue; // vendor.cpu_isolation: an isolated CPU does not balance
            }
            let Some(lb) = self.balancer.as_ref() else { continue };
            if (busy || nohz_kick) && lb.periodic_due(cpu, now) {
                // update_sd_lb_stats() at the root domain recomputes rd->overutilized
                if self.eas_status == Some(Ok(())) {
                    let v = self.view();
                    self.overutilized = (0..n).any(|c| v.cpu_overutilized(c));
                }
                let lb = self.balancer.as_mut().unwrap();
                let acts = lb.periodic(&view!(self), cpu, busy, tick_ns);
                self.apply_lb(acts, true);
            }
        }
        // the policy's own migrations (GTS: hmp_force_up_migration, hmp_offload_down)
        let migs = self.policy.balance(&view!(self));
        self.apply_policy_migrations(migs);
        if now >= self.lb_next {
            self.lb_record();
            self.lb_next = now + self.knobs.derived.lb_window_ns;
        }
        if now >= self.next_blocked_update {
            // NOHZ stats kick: idle CPUs decay their blocked load
            self.next_blocked_update = now + NOHZ_BLOCKED_PERIOD_NS;
            for cpu in 0..n {
                if self.rqs[cpu].curr.is_none() {
                    self.update_rq_clock(cpu);
                    self.update_load_avg(cpu, None, false);
                    self.update_rt_avg(cpu);
                }
            }
        }
        if let Some(tr) = self.trace.as_mut() {
            for cpu in 0..n {
                let c = &self.rqs[cpu].cfs;
                let u = c.avg.util_avg.max(c.util_est).min(self.platform.capacity_orig(cpu));
                tr.util(now, cpu, u);
            }
        }
        self.events.push(now + tick_ns, EventKind::Tick);
    }

    /// Close a lower-bound window at a tick (every running task's work is accounted up to
    /// now): the work, memrun work and runtime ns each task did since the last boundary.
    pub(crate) fn lb_record(&mut self) {
        if self.now == 0 {
            return;
        }
        let w = self.lb_ends.len() as u32;
        self.lb_last.resize(self.tasks.len(), [0; 3]);
        for (i, t) in self.tasks.iter().enumerate() {
            let s = &t.stats;
            let cur = [s.work_done - s.memrun_done, s.memrun_done, s.runtime_busy_ns];
            let last = &mut self.lb_last[i];
            if cur != *last {
                self.lb_rows
                    .push((w, i as u32, cur[0] - last[0], cur[1] - last[1], cur[2] - last[2]));
                *last = cur;
            }
        }
        self.lb_ends.push(self.now);
    }

    #[inline]
    pub(crate) fn eevdf(&self) -> bool {
        self.knobs.get(Knob::FairEevdf) > 0.0
    }

    /// The fair entities EEVDF weighs on `cpu`: the queued ones and, if it runs, curr:
    /// (task, vruntime − min_vruntime, weight).
    pub(crate) fn eevdf_entities(&self, cpu: usize, curr: Option<TaskId>) -> (Vec<(TaskId, i128, i128)>, i128, i128) {
        let cfs = &self.rqs[cpu].cfs;
        let base = cfs.min_vruntime as i128;
        let mut ents: Vec<(TaskId, i128, i128)> = cfs
            .timeline
            .iter()
            .map(|&(v, t)| (t, v as i128 - base, self.tasks[t as usize].se.weight as i128))
            .collect();
        if let Some(c) = curr {
            let se = &self.tasks[c as usize].se;
            if se.on_rq && !self.tasks[c as usize].is_rt() && !ents.iter().any(|e| e.0 == c) {
                ents.push((c, se.vruntime as i128 - base, se.weight as i128));
            }
        }
        let load: i128 = ents.iter().map(|e| e.2).sum();
        let sum: i128 = ents.iter().map(|e| e.1 * e.2).sum();
        (ents, sum, load)
    }

    /// avg_vruntime(): V = min_vruntime + Σ w (v − min_vruntime) / Σ w, floored; and Σ w.
    pub(crate) fn avg_vruntime(&self, cpu: usize) -> (i128, i128) {
        let (_, sum, load) = self.eevdf_entities(cpu, self.rqs[cpu].cfs.curr);
        let base = self.rqs[cpu].cfs.min_vruntime as i128;
        if load == 0 {
            return (base, 0);
        }
        (base + sum.div_euclid(load), load)
    }

    /// pick_eevdf(): among the eligible entities (v <= V, tested without division), the
    /// earliest deadline; a protected curr (RUN_TO_PARITY) keeps the CPU while eligible.
    pub(crate) fn pick_eevdf(&self, cpu: usize, curr: Option<TaskId>) -> Option<TaskId> {
        let (ents, sum, load) = self.eevdf_entities(cpu, curr);
        if ents.len() <= 1 {
            return ents.first().map(|e| e.0);
        }
        let eligible = |key: i128| key * load <= sum;
        let prev = curr.or(self.rqs[cpu].curr);
        if let Some(c) = prev {
            if let Some(e) = ents.iter().find(|e| e.0 == c) {
                if self.tasks[c as usize].se.protect && eligible(e.1) {
                    return Some(c);
                }
            }
        }
        ents.iter()
            .filter(|e| eligible(e.1))
            .min_by_key(|e| (self.tasks[e.0 as usize].se.deadline, e.1, e.0))
            .map(|e| e.0)
            .or_else(|| ents.iter().min_by_key(|e| (e.1, e.0)).map(|e| e.0))
    }

    /// place_entity() (PLACE_LAG, PLACE_DEADLINE_INITIAL, PLACE_REL_DEADLINE):
    /// v = V − vlag·(W + w)/W, and a deadline one slice (half for a new task, the rest of
    /// its slice for a migrated one) ahead.
    pub(crate) fn place_entity_eevdf(&mut self, cpu: usize, t: TaskId, initial: bool) {
        let (v_avg, load) = self.avg_vruntime(cpu);
        let se = &self.tasks[t as usize].se;
        let w = se.weight as i128;
        let lag = if load > 0 && se.vlag != 0 {
            se.vlag as i128 * (load + w) / load
        } else {
            0
        };
        let v = (v_avg - lag).max(0) as u64;
        let mut vslice = calc_delta_fair(base_slice(se, self.tunables.min_granularity), se.weight, se.wmult);
        if initial {
            vslice /= 2;
        }
        let se = &mut self.tasks[t as usize].se;
        if se.rel_deadline {
            vslice = se.deadline;
            se.rel_deadline = false;
        }
        se.vruntime = v;
        se.deadline = v + vslice;
        se.protect = false;
    }

    /// update_entity_lag(): vlag = V − v, clamped to ±(max(2 slices, a tick) in virtual time).
    pub(crate) fn update_entity_lag(&mut self, cpu: usize, t: TaskId) {
        let (v_avg, _) = self.avg_vruntime(cpu);
        let tick = self.knobs.derived.tick_ns;
        let se = &self.tasks[t as usize].se;
        let limit = calc_delta_fair(
            (2 * base_slice(se, self.tunables.min_granularity)).max(tick),
            se.weight,
            se.wmult,
        ) as i128;
        let lag = (v_avg - se.vruntime as i128).clamp(-limit, limit);
        self.tasks[t as usize].se.vlag = lag as i64;
    }

    /// check_preempt_tick(): the slice is used up, or curr is more than a slice ahead of
    /// the leftmost task once it has run at least the minimum granularity.
    pub(crate) fn check_preempt_tick(&self, cpu: usize, t: TaskId) -> bool {
        let rq = &self.rqs[cpu];
        let se = &self.tasks[t as usize].se;
        let ideal = self
            .policy
            .sched_slice(t, rq.cfs.sched_slice(&self.tunables, se.weight, true));
        let delta_exec = se.sum_exec_runtime - se.prev_sum_exec_runtime;
        if delta_exec > ideal {
            return true;
        }
        if delta_exec < self.tunables.min_granularity {
            return false;
        }
        match rq.cfs.leftmost() {
            Some((v, _)) => {
                let d = se.vruntime as i64 - v as i64;
                d > ideal as i64
            }
            None => false,
        }
    }

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

    /// Process one event (and the reschedules and cpufreq updates it causes). Returns
    /// false when the queue is empty.
    pub fn step(&mut self) -> bool {
        let Some(ev) = self.events.pop() else { return false };
        debug_assert!(ev.time() >= self.now);
        self.now = ev.time();
        match ev.kind {
            EventKind::Wakeup { task } => self.wake_up(task),
            EventKind::Complete { cpu, gen } => {
                if self.rqs[cpu as usize].gen == gen {
                    self.on_complete(cpu as usize)
                }
            }
            EventKind::CpuReady { cpu, gen } => {
                let rq = &mut self.rqs[cpu as usize];
                if rq.gen == gen && rq.waking_until.is_some() {
                    rq.waking_until = None;
                    let cpu = cpu as usize;
                    let pending = std::mem::take(&mut self.rqs[cpu].pending);
                    for &(t, fork) in &pending {
                        self.enqueue_task(cpu, t, !fork, fork);
                    }
                    self.rqs[cpu].pending = pending;
                    self.rqs[cpu].pending.clear();
                    self.schedule(cpu);
                }
            }
            EventKind::FreqCommit { cluster, gen } => {
                if self.clusters[cluster as usize].gen == gen {
                    let khz = self.pending_khz[cluster as usize];
                    self.on_freq_commit(cluster as usize, khz);
                }
            }
            EventKind::Tick => self.sched_tick(),
            EventKind::GovSample { cluster } if self.sw.is_some() => self.switcher_sample(cluster as usize),
            EventKind::GovSample { cluster } => self.governor_sample(cluster as usize),
            EventKind::Sample => {
                self.sample();
                let period = self.knobs.derived.timeseries_period_ns;
                self.events.push(self.now + period, EventKind::Sample);
            }
        }
        while self.any_resched {
            self.any_resched = false;
            for cpu in 0..self.resched.len() {
                if self.resched[cpu] {
                    self.schedule(cpu);
                }
            }
        }
        self.run_cpufreq();
        true
    }

    /// Run every event strictly before `t_ns`, then stop the clock at `t_ns`.
    pub fn run_until(&mut self, t_ns: u64) {
        while let Some(t) = self.events.peek_time() {
            if t >= t_ns {
                break;
            }
            self.step();
        }
        if t_ns > self.now {
            self.now = t_ns;
        }
        self.meter.sync(&self.platform, self.now);
    }

    /// Run until every task has ended (rt-app's `duration: -1`), or until `limit_ns` if
    /// that comes first; the clock stops at the last task's exit. Returns whether every
    /// task ended.
    pub fn run_until_exited(&mut self, limit_ns: u64) -> bool {
        while self.nr_exited + self.nr_templates < self.tasks.len() {
            match self.events.peek_time() {
                Some(t) if t < limit_ns => {
                    self.step();
                }
                _ => {
                    self.run_until(limit_ns);
                    return false;
                }
            }
        }
        self.meter.sync(&self.platform, self.now);
        true
    }

    /// Whether every task's program is finite (no loop of -1), so it can end.
    pub fn workload_is_finite(&self) -> bool {
        self.tasks
            .iter()
            .all(|t| t.spec.loop_ >= 0 && t.spec.phases.iter().all(|p| p.loop_ >= 0))
    }

    // ------------------------------------------------------------------ observation

    pub fn cpu_util_cfs(&self, cpu: usize) -> u64 {
        self.view().cpu_util_cfs(cpu)
    }

    pub fn cpu_freq_khz(&self, cpu: usize) -> u64 {
        self.khz(cpu)
    }

    /// CPU time of a task including the slice in progress (without mutating state, so
    /// stepping does not change results).
    pub fn task_cpu_time(&self, t: usize) -> Vec<u64> {
        let task = &self.tasks[t];
        let mut v = task.stats.cpu_time_ns.clone();
        if task.state == TaskState::Running {
            v[task.cpu] += self.now - task.se.exec_start;
        }
        v
    }

    pub fn set_knob(&mut self, name: &str, value: f64) -> Result<()> {
        self.knobs.set(name, value)?;
        self.tunables = CfsTunables::from_knobs(self.rqs.len(), &self.knobs);
        if let Some(lb) = self.balancer.as_mut() {
            lb.set_tunables(&self.knobs);
        }
        self.policy.knobs_changed(&self.knobs);
        Ok(())
    }

    pub fn balancer_name(&self) -> &'static str {
        self.balancer.as_ref().map_or("none", |lb| lb.name())
    }
    /// A policy counter by name (0 if the policy has none of that name).
    pub fn policy_counter(&self, name: &str) -> u64 {
        self.policy
            .counters()
            .into_iter()
            .find(|c| c.0 == name)
            .and_then(|c| c.1.as_u64())
            .unwrap_or(0)
    }
    /// The policy's own state, for a test or an inspection API:
    /// `sim.policy_state::<policies::hcs_td::HcsTdPolicy>()`.
    pub fn policy_state<T: 'static>(&self) -> Option<&T> {
        self.policy.as_any().downcast_ref()
    }
    pub fn placement_name(&self) -> &'static str {
        self.policy.placement()
    }
    pub fn governor_name(&self) -> &'static str {
        self.governor.name()
    }

    // ------------------------------------------------------------------ outputs

    pub(crate) fn sample(&mut self) {
        let now = self.now;
        for cpu in 0..self.rqs.len() {
            let util = self.cpu_util_cfs(cpu);
            let khz = self.khz(cpu);
            let idle = match self.rqs[cpu].idle_state {
                Some(s) => s as i32,
                None => -1,
            };
            let p = self.meter.cpu_power_uw(cpu);
            if let Some(ts) = self.timeseries.as_mut() {
                ts.push(now, cpu as u32, util, khz, idle, p);
            }
        }
    }

    pub(crate) fn trace_slice_end(&mut self, cpu: usize, t: TaskId) {
        if let Some(tr) = self.trace.as_mut() {
            let start = self.rqs[cpu].slice_start;
            if self.now > start {
                tr.slice(cpu, &self.tasks[t as usize].name, t, start, self.now);
            }
            self.rqs[cpu].slice_start = self.now;
        }
    }

    pub(crate) fn trace_power(&mut self, cpu: usize) {
        if let Some(tr) = self.trace.as_mut() {
            tr.power(self.now, cpu, self.meter.cpu_power_uw(cpu));
        }
    }

    /// Close the trace at the current time (slices in progress end here).
    pub fn finish_trace(&mut self) -> Option<String> {
        let now = self.now;
        let mut tr = self.trace.take()?;
        for cpu in 0..self.rqs.len() {
            if let Some(t) = self.rqs[cpu].curr {
                let start = self.rqs[cpu].slice_start;
                if now > start {
                    tr.slice(cpu, &self.tasks[t as usize].name, t, start, now);
                }
            }
        }
        Some(tr.finish())
    }
}

// ---------------------------------------------------------------------- issue 5: GTS, hps
// The engine's side of gts.rs and hotplug.rs: the HMP tracked load, the policy's own
// migrations at the tick, and CPUs going offline and online.
impl Sim {
    /// The HMP tracked load of `t` up to now; `on_rq`: the task was runnable (running or
    /// queued) since its last update. Wall-clock time: neither capacity nor frequency
    /// scale it (the big.LITTLE MP patches' load_avg_ratio).
    pub(crate) fn hmp_track(&mut self, t: TaskId, on_rq: bool) {
        if self.hmp_load.is_empty() {
            return;
        }
        if self.hmp_load.len() <= t as usize {
            self.hmp_load.resize(self.tasks.len(), SchedAvg::default());
        }
        let r = on_rq as u64;
        self.hmp_load[t as usize].update(self.now, r, r, on_rq, 1);
    }

    /// A new task's tracked load starts at the maximum (the HMP patches' forkboost).
    pub(crate) fn hmp_init_new(&mut self, t: TaskId) {
        if self.hmp_load.len() <= t as usize {
            self.hmp_load.resize(self.tasks.len(), SchedAvg::default());
        }
        let a = &mut self.hmp_load[t as usize];
        *a = SchedAvg::default();
        let div = a.pelt_divider() as u64;
        a.last_update_time = self.now;
        a.load_sum = div;
        a.runnable_sum = div << 10;
        a.util_sum = div << 10;
        a.load_avg = 1;
        a.runnable_avg = 1024;
        a.util_avg = 1024;
    }

    /// Carry out a policy's migrations (Placement::tick): a running task is pushed (the
    /// stopper), a queued one moved; stale ones (the task moved meanwhile) are dropped.
    pub(crate) fn apply_policy_migrations(&mut self, migs: Vec<Migration>) {
        for m in migs {
            let t = &self.tasks[m.task as usize];
            if t.allowed & (1u64 << m.dst) == 0 {
                continue;
            }
            if self.rqs[m.src].curr == Some(m.task) {
                self.migrate_running(m);
            } else if t.cpu == m.src && t.state == TaskState::Runnable {
                self.migrate_queued(m, true);
            }
        }
    }

    /// Whether `cpu` is online (always, without hotplug).
    pub fn cpu_online(&self, cpu: usize) -> bool {
        self.hotplug.as_ref().is_none_or(|h| h.is_online(cpu))
    }

    /// Every task's effective affinity: what it asked for, on online CPUs.
    pub(crate) fn hotplug_refresh_affinity(&mut self) {
        let n_cpus = self.rqs.len() as u32;
        let Some(hp) = self.hotplug.as_mut() else { return };
        for (i, task) in self.tasks.iter_mut().enumerate() {
            if hp.user_allowed.len() <= i {
                hp.user_allowed.push(task.allowed);
            }
            if hp.user_allowed[i] & hp.online == 0 {
                // select_fallback_rq(): no allowed CPU is online, so the kernel widens the
                // task's affinity for good (do_set_cpus_allowed to the possible mask); it
                // does not shrink back when the CPU returns
                hp.user_allowed[i] = u64::MAX >> (64 - n_cpus);
            }
            task.allowed = hp.effective(hp.user_allowed[i]);
        }
    }

    /// One hps decision (every hps.period_ms, at the tick).
    pub(crate) fn hps_decide(&mut self) {
        let now = self.now;
        let n = self.rqs.len();
        let busy: Vec<u64> = (0..n).map(|c| self.meter.busy_ns_at(c, now)).collect();
        let thr = self.knobs.get(Knob::GtsUpThreshold) as u64;
        let heavy = (0..self.tasks.len())
            .filter(|&t| {
                let task = &self.tasks[t];
                task.policy == Policy::Other
                    && matches!(task.state, TaskState::Runnable | TaskState::Running)
                    && self.hmp_load.get(t).is_some_and(|a| a.util_avg >= thr)
            })
            .count();
        let mut hp = self.hotplug.take().expect("hotplug");
        let rqs = &self.rqs;
        let act = hp.decide(&self.knobs, &busy, heavy, |c| {
            rqs[c].waking_until.is_none() && rqs[c].pending.is_empty()
        });
        hp.next_ns = now + hp.period_ns;
        self.hotplug = Some(hp);
        match act {
            crate::hotplug::HpsAction::None => {}
            crate::hotplug::HpsAction::Up(cpus) => {
                for c in cpus {
                    self.hotplug.as_mut().unwrap().set_online(c, true, now);
                }
                self.hotplug_refresh_affinity();
            }
            crate::hotplug::HpsAction::Down(cpus) => {
                for c in cpus {
                    self.cpu_down(c);
                }
            }
        }
    }

    /// cpu_down(): the CPU leaves every affinity, its tasks move to the first allowed
    /// online CPU (migrate_tasks() -> select_fallback_rq()), and it powers down.
    pub(crate) fn cpu_down(&mut self, cpu: usize) {
        let now = self.now;
        self.hotplug.as_mut().unwrap().set_online(cpu, false, now);
        self.hotplug_refresh_affinity();
        let rq = &self.rqs[cpu];
        let mut queued: Vec<TaskId> = rq.cfs.timeline.iter().map(|&(_, t)| t).collect();
        queued.extend(rq.rt_queue.iter().map(|k| k.2).filter(|&t| Some(t) != rq.curr));
        let curr = rq.curr;
        for t in queued {
            let dst = select_fallback_rq(&self.tasks[t as usize]);
            self.migrate_queued(Migration { task: t, src: cpu, dst }, true);
        }
        if let Some(t) = curr {
            let dst = select_fallback_rq(&self.tasks[t as usize]);
            self.migrate_running(Migration { task: t, src: cpu, dst });
        } else if self.rqs[cpu].idle_state.is_some() {
            // already idle: into the powered-down state now
            let deepest = self.platform.cluster_of(cpu).idle_states.len() - 1;
            self.rqs[cpu].idle_state = Some(deepest);
            self.meter
                .set_cpu(&self.platform, cpu, now, CpuPowerState::Idle(deepest));
            self.trace_power(cpu);
        } else {
            self.resched_cpu(cpu);
        }
    }
}
