//! The simulation and its core, after kernel/sched/core.c (v6.12): building a run, enqueue
//! and dequeue, `schedule()`, `try_to_wake_up()`, the tick driver and the event loop. The
//! classes and mechanisms keep their own files, as the kernel's do (fair.rs, rt.rs,
//! deadline.rs, idle.rs, cpufreq/, pelt.rs, balance.rs); the scheduler policy is an ops
//! table (policies/), and the task's userspace program is workload/rtapp.rs. The shared
//! structures (task, runqueue, the policies' view) are sched.rs.
//!
//! Time is integer ns. A running task progresses at capacity_orig/1024 * f/f_max of
//! invariant work per ns; its completion is an event recomputed whenever its speed or its
//! CPU changes (stale ones are dropped by generation).
//!
//! Differences: the context switch, a migration, the wakeup placement and balancing cost CPU
//! time as modelled (costs.rs), IPIs none beyond the idle exit; a wakeup onto a CPU in an
//! idle state is queued once the CPU is out of it; select_fallback_rq() takes the lowest
//! allowed CPU (one node); no HRTICK.
//! docs/mechanisms/core.md.

use crate::balance::LoadBalancer;
use crate::balance_fair::KernelLb;
use crate::cpufreq::{make_governor, CpuUtil, Governor};
use crate::energy::{CpuPowerState, EnergyMeter};
use crate::error::{Error, Result};
use crate::event::{EventKind, EventQueue};
use crate::fair::{CfsRq, CfsTunables, Detach};
use crate::features::{Knob, Knobs};
use crate::idle::Menu;
use crate::limits::NO_PROGRESS_STEPS;
use crate::lower_bound::LowerBound;
use crate::pelt::SchedAvg;
use crate::platform::Platform;
use crate::policies::{SchedPolicy, WakeKind};
use crate::rt::RtRq;
pub use crate::sched::*;
use crate::sorted_vec::SortedVec;
use crate::sync::SyncObjects;
use crate::trace::{TimeSeries, Trace};
use crate::uclamp::UclampRq;
use crate::workload::rtapp::make_task;
use crate::workload::{Ev, Policy, SetAttr, WorkloadSpec};

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
    /// cpufreq_update_util() calls that reached a util-driven governor
    #[cfg(test)]
    pub(crate) cpufreq_hook_calls: u64,
    /// frequency each cluster is transitioning to (valid while a FreqCommit is pending)
    pub(crate) pending_khz: Vec<u64>,
    pub(crate) rt_seq: u64,
    /// per CPU: the RT or deadline task (and its cpupri level) that left the CPU while
    /// running, for balance_rt() at the next schedule()
    pub(crate) rt_left: Vec<Option<(TaskId, u32)>>,
    /// RT bandwidth per CPU and the period timer's next expiry (android-4.19, rt.rs)
    pub(crate) rt_bw: Vec<crate::rt::RtBandwidth>,
    pub(crate) rt_period_at: Option<u64>,
    /// each CPU's fair server (deadline.rs)
    pub fair_server: Vec<crate::deadline::FairServer>,
    /// started tasks, daemons aside (TaskSpec::daemon), that have not exited: what a run
    /// until every task ends waits for
    pub(crate) nr_to_exit: usize,
    /// tasks started or to start (templates aside) that have not exited, and how many of
    /// them, and of those that are not daemons, are queued on a synchronisation object
    /// (deadlock.rs)
    pub(crate) nr_alive: usize,
    pub(crate) nr_sync_blocked: usize,
    pub(crate) nr_sync_blocked_workers: usize,
    /// inside `run_until_exited`: tasks blocked for good then stop the run (deadlock.rs)
    pub(crate) until_exit: bool,
    /// the deadlock that stopped the run (deadlock.rs); nothing runs once it is set
    pub deadlock: Option<Box<crate::deadlock::Deadlock>>,
    /// sampling governors: each CPU's busy time at its cluster's last sample, and when
    pub(crate) gov_busy_mark: Vec<u64>,
    pub(crate) gov_last_sample: Vec<u64>,
    pub(crate) gov_speed_mark: Vec<u128>,
    pub sync: SyncObjects,
    /// (time, task, mark) logged by `mark` events
    pub marks: Vec<(u64, u32, u32)>,
    pub(crate) wake_buf: Vec<TaskId>,
    /// the energy lower bound, window by window (lower_bound.rs)
    pub lb: LowerBound,
    /// rd->overutilized (meaningful with EAS)
    pub overutilized: bool,
    /// rd->overloaded: some runqueue held two tasks (or a misfit) since the last root-domain
    /// balance pass; newidle balance runs only while it is set
    pub overloaded: bool,
    /// uclamp_is_used(): some task sets a clamp
    pub uclamp_used: bool,
    /// the fair class runs as EEVDF (fair.eevdf resolved against the profile and the policy)
    pub fair_eevdf: bool,
    /// whether EAS runs, and if not, why (sched_is_eas_possible)
    pub eas_status: Option<std::result::Result<(), String>>,
    /// each task's HMP tracked load; empty unless the policy or hps reads it (policies/gts.rs)
    pub hmp_load: Vec<SchedAvg>,
    /// MediaTek hps (`hotplug.hps=1`)
    pub hotplug: Option<crate::extensions::hotplug::Hotplug>,
    /// CPUs the core controller isolated (msm's cpu_isolated_mask; extensions/core_ctl.rs):
    /// they take no placements and do not balance
    pub cpu_isolated: u64,
    /// the extensions this run installed (extensions/mod.rs), in tick order
    pub extensions: Vec<Box<dyn crate::extensions::Extension>>,
    /// switcher platforms (switcher.rs; the big.LITTLE switcher study, Kim et al.)
    pub sw: Option<crate::switcher::Switcher>,
    /// the CPU whose running task is waking others (a wakeup's placement cost is its)
    pub(crate) waker_cpu: Option<usize>,
    /// the msm-4.14 profile: WALT (walt.rs) and schedtune (schedtune.rs)
    pub walt: Option<Box<crate::walt::Walt>>,
    /// core_ctl's runqueue averages per CPU (sched_avg.c); empty when core_ctl cannot act
    pub(crate) nr_avg: Vec<crate::extensions::core_ctl::NrAvg>,
    /// rq->rt_avg per CPU (rt.rs); empty unless msm-4.14 is built without WALT, whose
    /// schedutil reads it
    pub(crate) rt_avg: Vec<crate::rt::RtAvg>,
    pub stune: Option<Box<crate::schedtune::SchedTune>>,
    /// the pixel-5.10 profile: the vendor groups of Google's scheduler module (pixel_sched.rs)
    pub(crate) vendor_groups: Option<Box<crate::pixel_sched::VendorGroups>>,
    /// the kernel profile the run follows
    pub(crate) profile: KernelProfile,
    /// the wakeup select_task_rq() is placing (try_to_wake_up's CPU and flags)
    pub(crate) wake_ctx: crate::sched::WakeCtx,
    /// events handled and program events run since simulated time last moved (limits.rs)
    pub(crate) steps_at_now: u64,
    /// the task whose program ran last, named when time stops passing
    pub(crate) last_program: TaskId,
    /// the limit that stopped the run (limits.rs); nothing runs once it is set
    pub(crate) stop: Option<Box<Error>>,
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
        // past u64, the time of work at an OPP far too slow for it: held at half of u64's
        // range, like time_for, so that adding it to the clock cannot wrap
        None => (a as u128 * b as u128).div_ceil(c as u128).min(u64::MAX as u128 / 2) as u64,
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
            overloaded: $s.overloaded,
            uclamp_used: $s.uclamp_used,
            eas: $s.eas_status == Some(Ok(())),
            profile: $s.profile,
            isolated: $s.cpu_isolated,
            hmp_load: &$s.hmp_load,
            clusters: &$s.clusters,
            meter: &$s.meter,
            switcher: $s.sw.as_ref(),
            wake: $s.wake_ctx,
            walt: $s.walt.as_deref(),
            stune: $s.stune.as_deref(),
            pixel: $s.vendor_groups.as_deref(),
        }
    };
}
pub(crate) use view;

/// select_fallback_rq(): the first CPU the task may run on (the kernel takes the first
/// allowed active CPU of its node; one node here).
pub(crate) fn select_fallback_rq(t: &Task) -> usize {
    t.allowed.trailing_zeros() as usize
}

/// The knobs as the device boots, and WALT's tunables when the kernel is built with it.
/// No one kernel function: the profile's defaults, what the device's init scripts write
/// on the kernel they ran on, then the policy's knobs, with the checks the kernel makes
/// on these writes: CONFIG_SCHED_WALT exists only in the msm-4.14 tree,
/// sched_rt_global_validate() (kernel/sched/rt.c) refuses an RT runtime longer than its
/// period, and sched_fair_server_write() (kernel/sched/debug.c) a fair server's.
fn boot_knobs(
    platform: &Platform,
    policy: &PolicyConfig,
    profile: KernelProfile,
) -> Result<(Knobs, Option<crate::walt::WaltTunables>)> {
    let msm = profile.msm();
    let mut knobs = Knobs::default();
    knobs.set_legacy(profile.android_forms());
    // what the device's init scripts write at boot, on the kernel they ran on
    if let Some(init) = platform.device_init.as_ref().filter(|d| d.kernel == profile.name()) {
        for (k, v) in &init.knobs {
            knobs.set(k, *v)?;
        }
    }
    for (k, v) in &policy.knobs {
        knobs.set(k, *v)?;
    }
    // sched_walt selects how the msm-4.14 tree was built; no other profile has WALT to
    // leave out, and a build option is either set or not
    let sched_walt = knobs.get(Knob::SchedWalt);
    if (sched_walt != 0.0 && sched_walt != 1.0) || (sched_walt == 0.0 && !msm) {
        return Err(crate::error::config(
            "policy",
            "knobs.sched_walt",
            format!("1, or 0 under kernel=msm-4.14 (its build without WALT), got {sched_walt}"),
        ));
    }
    // CONFIG_SCHED_WALT: WALT's signals, and core_ctl, which comes with them
    let walt_tun = if msm && sched_walt == 1.0 {
        Some(crate::walt::tunables(&knobs)?)
    } else {
        None
    };
    // sched_rt_global_validate() refuses an RT runtime longer than the period
    let rt_runtime = knobs.get(Knob::SchedRtRuntimeUs);
    if rt_runtime > knobs.get(Knob::SchedRtPeriodUs) {
        return Err(crate::error::config(
            "policy",
            "knobs.sched_rt_runtime_us",
            format!(
                "-1 or at most sched_rt_period_us ({}), got {rt_runtime}",
                knobs.get(Knob::SchedRtPeriodUs)
            ),
        ));
    }
    // sched_fair_server_write() refuses a runtime longer than the period
    if knobs.get(Knob::FairServerRuntimeUs) > knobs.get(Knob::FairServerPeriodUs) {
        return Err(crate::error::config(
            "policy",
            "knobs.fair_server.runtime_us",
            format!(
                "at most fair_server.period_us ({}), got {}",
                knobs.get(Knob::FairServerPeriodUs),
                knobs.get(Knob::FairServerRuntimeUs)
            ),
        ));
    }
    Ok((knobs, walt_tun))
}

/// The scheduler policy from the registry (policies/mod.rs), handed to `wrap`, and
/// whether the fair class runs as EEVDF. No kernel counterpart: a kernel has its classes
/// built in. The idle governor's name, the switcher's conditions and the policy's own
/// conditions on the platform are checked first.
fn select_policy(
    platform: &Platform,
    policy: &PolicyConfig,
    knobs: &Knobs,
    legacy: bool,
    nr_tasks: usize,
    wrap: impl FnOnce(Box<dyn SchedPolicy>) -> Box<dyn SchedPolicy>,
) -> Result<(Box<dyn SchedPolicy>, bool)> {
    let info = crate::policies::lookup(&policy.scheduler)?;
    if !IDLE_GOVERNORS.iter().any(|g| g.0 == policy.idle_governor) {
        return Err(Error::Unknown {
            field: "idle_governor".into(),
            kind: "idle governor",
            name: policy.idle_governor.clone(),
            choices: IDLE_GOVERNORS.iter().map(|g| g.0).collect::<Vec<_>>().join(", "),
        });
    }
    crate::switcher::check(platform, policy)?;
    let fair_eevdf = crate::policies::fair_variant(info, knobs.get(Knob::FairEevdf), legacy);
    crate::policies::check(info, platform, fair_eevdf)?;
    let sched_policy = (info.build)(&crate::policies::PolicyCtx {
        platform,
        governor: &policy.governor,
        knobs,
        legacy,
        nr_tasks,
    });
    Ok((wrap(sched_policy), fair_eevdf))
}

/// sched_fork() for each task of the workload (kernel/sched/core.c): the task from its
/// spec (workload/rtapp.rs make_task), then its clamps. An RT task that asks for no
/// uclamp_min gets sysctl_sched_uclamp_util_min_rt_default
/// (__uclamp_sync_util_min_rt_default()); msm-4.14 has no uclamp (schedtune boosts
/// instead), so no clamp applies there; on pixel-5.10 the vendor groups restrict each
/// task's clamps, and are returned.
fn fork_tasks(
    workload: &WorkloadSpec,
    platform: &Platform,
    knobs: &Knobs,
    profile: KernelProfile,
) -> Result<(Vec<Task>, Option<Box<crate::pixel_sched::VendorGroups>>)> {
    let mut tasks = Vec::with_capacity(workload.tasks.len());
    for (i, t) in workload.tasks.iter().enumerate() {
        tasks.push(make_task(i as TaskId, t, platform, format!("tasks[{i}]"))?);
    }
    // __uclamp_sync_util_min_rt_default(): an RT task that asks for no uclamp_min gets
    // sysctl_sched_uclamp_util_min_rt_default (make_task gave it the kernel's 1024)
    for (t, spec) in tasks.iter_mut().zip(&workload.tasks) {
        if matches!(t.policy, Policy::Fifo | Policy::Rr) && spec.util_min.is_none() {
            t.uclamp[0] = knobs.derived.uclamp_min_rt_default;
            t.uclamp_req[0] = t.uclamp[0];
        }
    }
    // 4.14 has no uclamp (schedtune boosts instead): the clamps a workload asks for
    // are not applied under msm-4.14
    if profile.msm() {
        for t in tasks.iter_mut() {
            t.uclamp = [0, 1024];
            t.uclamp_req = t.uclamp;
        }
    }
    let vendor_groups = if profile.pixel() {
        let vg = crate::pixel_sched::VendorGroups::new(crate::schedtune::task_groups(workload)?, knobs);
        for t in tasks.iter_mut() {
            t.uclamp = vg.restrict_task(t);
        }
        Some(Box::new(vg))
    } else {
        None
    };
    Ok((tasks, vendor_groups))
}

/// Whether the sched_uclamp_used static key is on from the start (kernel/sched/core.c):
/// the kernel enables it at the first clamp written, by a task (sched_setattr()) or by
/// the RT default's sysctl (sysctl_sched_uclamp_handler()). The Pixel's init scripts
/// write vendor group clamps and the RT default at boot; msm-4.14 has no uclamp.
fn uclamp_used(workload: &WorkloadSpec, knobs: &Knobs, profile: KernelProfile) -> bool {
    // writing the sysctl enables sched_uclamp_used (sysctl_sched_uclamp_handler)
    let rt_default_written = knobs.derived.uclamp_min_rt_default != 1024;
    profile.pixel()
        || (!profile.msm()
            && (rt_default_written
                || workload.tasks.iter().any(|t| {
                    t.util_min.is_some()
                        || t.util_max.is_some()
                        || t.phases.iter().flat_map(|p| &p.events).any(|e| {
                            matches!(
                                e,
                                Ev::Setattr(SetAttr { util_min: Some(_), .. })
                                    | Ev::Setattr(SetAttr { util_max: Some(_), .. })
                            )
                        })
                })))
}

/// sched_init()'s per-CPU part (kernel/sched/core.c): an empty runqueue for `cpu`, its
/// avg_idle at twice sysctl_sched_migration_cost as the kernel starts it, the CPU in its
/// shallowest idle state.
fn sched_init_rq(cpu: usize, knobs: &Knobs) -> Rq {
    Rq {
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
        dl_bw: 0,
        avg_idle: 2 * knobs.derived.migration_cost_ns,
        idle_stamp: None,
        menu: Menu::default(),
        idle_since: 0,
        idle_state: Some(0),
        waking_until: None,
        gen: 0,
        pending: Vec::new(),
        expired_timers: Vec::new(),
        timers: SortedVec::default(),
        nr_switches: 0,
        idle_calls: 0,
        tick_stopped: false,
        idle_tick_wakeup: false,
        nohz_idle_balance: false,
        work_done: 0,
        slice_start: 0,
        yield_skip: None,
        overhead_left: 0,
    }
}

/// Events between two polls of a stoppable run (`Sim::run_until_polled`): a caller's Ctrl-C
/// waits for at most this many (0.1 ms of hackbench at 10 M events a second, 1.4 ms of the
/// balanced core assignment study's tick-bound runs at 0.7 M).
pub const POLL_EVERY_EVENTS: u32 = 1024;
pub(crate) const NOHZ_BLOCKED_PERIOD_NS: u64 = 32_000_000; // nohz.next_blocked = now + 32 ms (LOAD_AVG_PERIOD)

impl Sim {
    /// The Android kernels' forms (KernelProfile::android_forms: android-4.19, msm-4.14
    /// and pixel-5.10).
    #[inline]
    pub(crate) fn legacy(&self) -> bool {
        self.profile.android_forms()
    }

    pub fn new(platform: Platform, workload: WorkloadSpec, policy: PolicyConfig) -> Result<Sim> {
        Sim::with_policy(platform, workload, policy, |base| base)
    }

    /// As `new`, with the registry's policy for `policy.scheduler` handed to `wrap`, whose
    /// result runs instead: a policy defined outside the registry (a Python class) that
    /// keeps the base policy's behaviour for the hooks it does not define.
    ///
    /// A run boots as the kernel does, in order: the knobs (`boot_knobs`), the policy
    /// (`select_policy`) and the cpufreq governor, the tasks (`fork_tasks`), each CPU's
    /// runqueue (`sched_init_rq`, sched_init()), the vendor modules (`init_extensions`),
    /// then the CPUs go idle and the domains are built (`sched_init_smp`) and the first
    /// events are queued (`queue_first_events`). Invalid input fails in that order.
    pub fn with_policy(
        platform: Platform,
        workload: WorkloadSpec,
        policy: PolicyConfig,
        wrap: impl FnOnce(Box<dyn SchedPolicy>) -> Box<dyn SchedPolicy>,
    ) -> Result<Sim> {
        let profile = KernelProfile::from_name(&policy.kernel)?;
        let msm = profile.msm();
        let legacy = profile.android_forms();
        let (knobs, walt_tun) = boot_knobs(&platform, &policy, profile)?;
        // CONFIG_SCHED_WALT: WALT's signals, and core_ctl, which comes with them
        let walt_built = walt_tun.is_some();
        let (sched_policy, fair_eevdf) = select_policy(&platform, &policy, &knobs, legacy, workload.tasks.len(), wrap)?;
        let eas_status = sched_policy.energy_aware();
        let mut governor = make_governor(&policy.governor, &platform, legacy)?;
        if msm {
            governor.set_msm(walt_built);
        }
        if profile.pixel() {
            governor.set_sched_pixel();
        }
        let n = platform.nr_cpus();
        let nclusters = platform.clusters.len();
        let (tasks, vendor_groups) = fork_tasks(&workload, &platform, &knobs, profile)?;
        let uclamp_used = uclamp_used(&workload, &knobs, profile);
        let stune = if msm {
            let mut st = crate::schedtune::SchedTune::new(n, crate::schedtune::task_groups(&workload)?);
            st.read_knobs(&knobs)?;
            Some(Box::new(st))
        } else {
            None
        };
        let walt = walt_tun.map(|tun| Box::new(crate::walt::Walt::new(&platform, workload.tasks.len(), tun)));
        // msm-4.14 without WALT builds no core_ctl: nothing reads vendor.cpu_isolation
        let core_ctl_can_act = walt_built || (!msm && knobs.get(Knob::VendorCpuIsolation) > 0.0);
        let initial_opp: Vec<usize> = platform
            .clusters
            .iter()
            .map(|c| governor.initial_opp(c, &knobs))
            .collect();
        let meter = EnergyMeter::new(&platform, &initial_opp);
        let rqs = (0..n).map(|cpu| sched_init_rq(cpu, &knobs)).collect();
        let tunables = CfsTunables::from_knobs(n, &knobs);
        let clusters = initial_opp
            .iter()
            .zip(&platform.clusters)
            .map(|(&opp, c)| ClusterState {
                opp,
                freq_scale: (c.opps[opp].khz << 10) / c.fmax_khz,
                gen: 0,
            })
            .collect::<Vec<_>>();
        let lb = LowerBound::new(
            policy.lower_bound,
            &platform,
            workload.tasks.iter().map(|t| t.perf.as_ref()),
        );
        let trace = policy.trace.then(|| Trace::new(&platform, policy.trace_format));
        let timeseries = policy.timeseries.then(TimeSeries::default);
        let rt_bw = crate::rt::RtBandwidth {
            rt_runtime: knobs.derived.rt_runtime_ns,
            ..Default::default()
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
            #[cfg(test)]
            cpufreq_hook_calls: 0,
            pending_khz: vec![0; nclusters],
            rt_seq: 0,
            rt_left: vec![None; n],
            rt_bw: vec![rt_bw; n],
            rt_period_at: None,
            fair_server: vec![crate::deadline::FairServer::default(); n],
            nr_to_exit: workload.tasks.iter().filter(|t| t.start && !t.daemon).count(),
            nr_alive: workload.tasks.iter().filter(|t| t.start).count(),
            nr_sync_blocked: 0,
            nr_sync_blocked_workers: 0,
            until_exit: false,
            deadlock: None,
            gov_busy_mark: vec![0; n],
            gov_last_sample: vec![0; nclusters],
            gov_speed_mark: vec![0; n],
            overutilized: false,
            overloaded: false,
            uclamp_used,
            sync: SyncObjects::new(workload.mutexes, workload.conds, &workload.sems, &workload.barriers),
            marks: Vec::new(),
            wake_buf: Vec::new(),
            lb,
            fair_eevdf,
            eas_status,
            hmp_load: Vec::new(),
            hotplug: None,
            cpu_isolated: 0,
            extensions: Vec::new(),
            sw: None,
            waker_cpu: None,
            wake_ctx: Default::default(),
            steps_at_now: 0,
            last_program: 0,
            stop: None,
            walt,
            stune,
            vendor_groups,
            profile,
            nr_avg: if core_ctl_can_act {
                vec![Default::default(); n]
            } else {
                Vec::new()
            },
            rt_avg: if msm && !walt_built {
                vec![Default::default(); n]
            } else {
                Vec::new()
            },
        };
        sim.init_extensions();
        sim.sched_init_smp();
        sim.queue_first_events();
        Ok(sim)
    }

    /// The vendor modules' init, which the kernel runs after the scheduler's: the HMP
    /// tracked load for a policy that places by it or for hps, the hps hotplug driver
    /// (extensions/hotplug.rs), and the extensions the knobs enable (extensions/mod.rs).
    fn init_extensions(&mut self) {
        // hps counts heavy tasks by the HMP tracked load (hotplug.rs), as GTS places by it
        let hps = self.knobs.get(Knob::HotplugHps) > 0.0;
        if self.policy.needs_hmp_load() || hps {
            self.hmp_load = vec![SchedAvg::default(); self.tasks.len()];
        }
        if hps {
            let user = self.tasks.iter().map(|t| t.allowed).collect();
            self.hotplug = Some(crate::extensions::hotplug::Hotplug::new(
                &self.platform,
                &self.knobs,
                user,
            ));
        }
        self.extensions = crate::extensions::REGISTRY
            .iter()
            .filter(|x| (x.enabled)(&self.knobs))
            .map(|x| (x.build)(&self.knobs))
            .collect();
    }

    /// After sched_init_smp() (kernel/sched/core.c): every CPU runs its idle task, the
    /// policy's load balancer builds its scheduling domains (sched_init_domains()), and the
    /// trace records each cluster's starting frequency.
    fn sched_init_smp(&mut self) {
        for cpu in 0..self.platform.nr_cpus() {
            self.enter_idle(cpu);
        }
        self.balancer = self.policy.load_balancer(&self.view());
        for ci in 0..self.platform.clusters.len() {
            let khz = self.platform.clusters[ci].opps[self.clusters[ci].opp].khz;
            self.trace_frequency(ci, khz);
        }
    }

    /// The run's first events, in this order (their sequence numbers order ties): each
    /// task's first wakeup at its delay (wake_up_new_task(); templates wait for a fork),
    /// the first tick, the switcher's start or the governor's first samples, and the
    /// first time-series sample.
    fn queue_first_events(&mut self) {
        for t in 0..self.tasks.len() {
            if self.tasks[t].state == TaskState::Template {
                continue;
            }
            let delay = self.tasks[t].spec.delay_ns;
            self.events.push(delay, EventKind::Wakeup { task: t as TaskId });
        }
        self.events.push(0, EventKind::Tick);
        if self.platform.switcher {
            self.switcher_start();
        } else if let Some(first) = self.governor.first_sample_ns(&self.knobs) {
            for ci in 0..self.platform.clusters.len() {
                self.events.push(first, EventKind::GovSample { cluster: ci as u32 });
            }
        }
        if self.timeseries.is_some() {
            self.events.push(0, EventKind::Sample);
        }
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
    /// as the kernel); when idle it snaps to the task clock. The android-4.19 profile has
    /// no clock_pelt (5.1): PELT runs on the task clock and scales each contribution
    /// (pelt.rs), so clock_pelt follows the clock.
    pub(crate) fn update_rq_clock(&mut self, cpu: usize) {
        let now = self.now;
        let delta = now - self.rqs[cpu].clock;
        if delta == 0 {
            return;
        }
        // 4.19 scales each contribution instead (pelt_scale())
        let busy = self.rqs[cpu].curr.is_some() && !self.profile.pelt_4_19();
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

    // ------------------------------------------------------------------ execution

    // ------------------------------------------------------------------ enqueue/dequeue

    pub(crate) fn enqueue_task(&mut self, cpu: usize, t: TaskId, wakeup: bool, initial: bool) {
        self.hmp_track(t, false);
        self.update_rq_clock(cpu);
        let task = &mut self.tasks[t as usize];
        task.cpu = cpu;
        task.state = TaskState::Runnable;
        task.queued_since = self.now;
        let (clamps, is_rt) = (task.uclamp, task.is_rt());
        // uclamp_rq_inc(): after the class's enqueue in v6.12 (so its cpufreq hooks see the
        // old clamps), before it in 4.19
        if self.uclamp_used && self.legacy() {
            self.rqs[cpu].uclamp.inc(clamps);
        }
        self.walt_enqueue(cpu, t); // inc_rq_walt_stats() of either class
        self.schedtune_enqueue_task(cpu, t); // without WALT, schedtune counts it itself
        if is_rt {
            self.enqueue_task_rt(cpu, t);
        } else {
            self.core_ctl_set_misfit(cpu, t); // enqueue_task_fair(): p->misfit first
            self.enqueue_task_fair(cpu, t, wakeup, initial);
        }
        if self.uclamp_used && !self.legacy() {
            self.rqs[cpu].uclamp.inc(clamps);
        }
        if self.rqs[cpu].nr_running() >= 2 {
            self.overloaded = true; // add_nr_running(): set_rd_overloaded()
        }
        self.core_ctl_nr_update(cpu);
    }

    /// enqueue_task(ENQUEUE_DELAYED): the delayed task is runnable again on the runqueue it
    /// never left.
    pub(crate) fn requeue_delayed(&mut self, cpu: usize, t: TaskId) {
        self.hmp_track(t, false);
        self.update_rq_clock(cpu);
        let task = &mut self.tasks[t as usize];
        task.state = TaskState::Runnable;
        task.queued_since = self.now;
        let clamps = task.uclamp;
        if self.uclamp_used && self.legacy() {
            self.rqs[cpu].uclamp.inc(clamps);
        }
        self.requeue_delayed_entity(cpu, t);
        if self.uclamp_used && !self.legacy() {
            self.rqs[cpu].uclamp.inc(clamps);
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
        self.walt_dequeue(t);
        self.schedtune_dequeue_task(t);
        if self.tasks[t as usize].is_rt() {
            self.dequeue_task_rt(cpu, t);
        } else {
            self.dequeue_task_fair(cpu, t, sleep);
        }
        self.core_ctl_nr_update(cpu);
    }

    // ------------------------------------------------------------------ schedule()

    pub(crate) fn resched_cpu(&mut self, cpu: usize) {
        self.resched[cpu] = true;
        self.any_resched = true;
    }

    pub(crate) fn pick_next(&self, cpu: usize) -> Option<TaskId> {
        let rq = &self.rqs[cpu];
        // a throttled RT runqueue's tasks are not picked (deadline tasks, above every RT
        // priority, come first in the queue and are not throttled)
        let rt_pick = rq
            .rt_queue
            .pick()
            .filter(|&t| !self.rt_bw[cpu].throttled || self.tasks[t as usize].policy == Policy::Deadline);
        if let Some(t) = rt_pick {
            // a runnable fair server outranks RT; among deadline entities, EDF
            let server_first = self.fair_server_runnable(cpu) && {
                let task = &self.tasks[t as usize];
                task.policy != Policy::Deadline || task.dl.deadline > self.fair_server[cpu].deadline
            };
            if !server_first {
                return Some(t);
            }
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

    /// pick_task_fair()'s retry: a delayed task that pick_next_entity() meets is dequeued
    /// for good (it was asleep all along) and the pick starts over.
    fn pick_next_undelayed(&mut self, cpu: usize) -> Option<TaskId> {
        loop {
            let next = self.pick_next(cpu);
            match next {
                Some(n) if self.tasks[n as usize].se.sched_delayed => self.finish_delayed_dequeue(cpu, n),
                _ => return next,
            }
        }
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
                let (key, w, deadline, ran) = (
                    (task.se.vruntime, p),
                    task.se.weight,
                    task.se.deadline,
                    task.se.exec_start,
                );
                let rq = &mut self.rqs[cpu];
                rq.cfs.timeline.insert(key, w, deadline, ran);
                rq.cfs.curr = None;
            }
        }
        // put_prev_task_balance(): the RT class's balance (pull) before the pick
        self.balance_rt(cpu);
        let mut next = self.pick_next_undelayed(cpu);
        if next.is_none() {
            next = self.newidle_balance(cpu);
        }
        // WALT's view of the switch: rq->curr is still the task that blocked or was
        // preempted (walt.rs keeps it) until the context switch
        self.walt_schedule(cpu, next);
        if next.is_some() && next == prev {
            if let Some(p) = prev {
                if !self.tasks[p as usize].is_rt() {
                    let se = &self.tasks[p as usize].se;
                    let (key, w, deadline, ran) = ((se.vruntime, p), se.weight, se.deadline, se.exec_start);
                    let rq = &mut self.rqs[cpu];
                    rq.cfs.timeline.remove(&key, w, deadline, ran);
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
            Some(n) => {
                self.set_next(cpu, n, from_idle);
                // set_next_task_rt() queues push_rt_tasks as a balance callback, run as
                // __schedule() ends
                if matches!(self.tasks[n as usize].policy, Policy::Fifo | Policy::Rr) && self.has_pushable_tasks(cpu) {
                    self.push_rt_tasks(cpu);
                }
            }
            None if !from_idle => self.enter_idle(cpu),
            None => {}
        }
    }

    pub(crate) fn set_next(&mut self, cpu: usize, n: TaskId, from_idle: bool) {
        let now = self.now;
        if !self.tasks[n as usize].is_rt() {
            // set_next_entity(): out of the timeline, PELT update, curr
            let se = &self.tasks[n as usize].se;
            let (key, w, deadline, ran) = ((se.vruntime, n), se.weight, se.deadline, se.exec_start);
            self.rqs[cpu].cfs.timeline.remove(&key, w, deadline, ran);
            self.update_load_avg(cpu, Some(n), false);
            self.rqs[cpu].cfs.curr = Some(n);
        } else {
            self.update_rt_avg(cpu);
        }
        // put_prev_task_idle() (the CPU may have left its idle state before: an exit latency)
        self.dl_server_update_idle_time(cpu, true);
        // tick_nohz_idle_exit(): leaving the idle loop for a task restarts a stopped tick
        self.rqs[cpu].tick_stopped = false;
        if from_idle {
            self.menu_reflect(cpu, 0);
            self.trace_idle_exit(cpu);
            let rq = &mut self.rqs[cpu];
            rq.idle_state = None;
            self.meter.set_cpu(&self.platform, cpu, now, CpuPowerState::Busy);
            self.trace_power(cpu);
        }
        self.trace_switch(cpu, Some(n));
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
        // costs.rs: the switch itself, and a migrated task's attach on this CPU
        let v = self.view();
        let switch = v.context_switch_work(cpu);
        let migration = if last != cpu && last != usize::MAX {
            self.knobs.get(Knob::CostMigrationNs) as u64
        } else {
            0
        };
        self.counters.cost_context_switch += switch;
        self.counters.cost_migration += migration;
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
        task.in_iowait = false; // back on a CPU: io_schedule_finish()
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
        task.progress_at = now;
        task.se.prev_sum_exec_runtime = task.se.sum_exec_runtime;
        // queued once the task's clock starts: the switch runs on it, before its work
        self.charge_cost(cpu, switch + migration, false);
        self.policy.set_next_task(n);
        let task = &mut self.tasks[n as usize];
        task.se.protect = true; // RUN_TO_PARITY: keep it until its deadline is renewed
        if task.cur == Cur::None {
            if self.rqs[cpu].overhead_left > 0 {
                // its program goes on once the switch (and the kernel's other queued
                // work) has run: a completion with no event of its own
                self.arm_completion(cpu);
            } else {
                // back from a sleep: its next event starts now
                self.advance_program(cpu, n);
            }
        } else {
            self.arm_completion(cpu);
        }
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
        self.check_preempt_wakeup_fair(cpu, p, c);
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

    pub(crate) fn task_exit(&mut self, cpu: usize, t: TaskId) {
        self.walt_exit(cpu, t); // sched_exit()
                                // TASK_DEAD first: a special state, which dequeue_task_fair() never delays
        self.tasks[t as usize].state = TaskState::Exited;
        self.dequeue_task(cpu, t, true);
        // task_dead_fair() -> remove_entity_load_avg(): a dead task leaves no blocked load
        self.detach_pelt_for_migration(cpu, t, Detach::Removed);
        self.trace_slice_end(cpu, t);
        self.trace_exit(cpu, t);
        if !self.tasks[t as usize].spec.daemon {
            self.nr_to_exit -= 1;
        }
        self.nr_alive -= 1;
        self.policy.task_dead(t);
        self.resched_cpu(cpu);
        // the tasks left may be blocked for good now (a consumer whose producer ended)
        self.check_blocked();
    }

    /// A Wakeup event: a sleeping task's timer expires (hrtimer_wakeup()), or a task starts,
    /// a throttled deadline task is replenished or an I/O wait completes (these go straight
    /// to wake_up()).
    ///
    /// The sleep timer is on the CPU the task slept on: hrtimer_start_range_ns() queues a
    /// non-pinned timer on get_nohz_timer_target(), which keeps it on the arming CPU because
    /// that CPU is busy (it is running the task going to sleep). The expiry interrupt is
    /// taken there, so try_to_wake_up() and select_task_rq() run on that CPU. An arming CPU
    /// in an idle state first leaves it (its exit latency, a menu update, busy power) and
    /// runs the wakeup once out; if the task is then placed on another idle CPU, that CPU is
    /// woken in turn (the wakelist IPI of ttwu_queue_cond(), or resched_curr()'s) and pays
    /// its own exit latency: the two exits add up in the task's wakeup latency.
    pub(crate) fn timer_expired(&mut self, t: TaskId) {
        let now = self.now;
        let task = &self.tasks[t as usize];
        let armed_on = task.cpu;
        // an I/O wait ends with the device's interrupt, not a timer of the task's CPU
        let armed = task.state == TaskState::Sleeping
            && task.iowait_since.is_none()
            && task.wake_due == Some(now)
            && self.rqs[armed_on].timers.contains(&(now, t))
            && self.hotplug.as_ref().is_none_or(|h| h.is_online(armed_on))
            && self.cpu_isolated & (1u64 << armed_on) == 0; // isolation migrates timers
        if !armed {
            self.wake_up(t);
            return;
        }
        if self.in_idle_state(armed_on) {
            self.rqs[armed_on].timers.remove(&(now, t));
            self.rqs[armed_on].expired_timers.push(t);
            self.kick_idle_cpu(armed_on);
            return;
        }
        let was_idle = self.rqs[armed_on].curr.is_none() && self.rqs[armed_on].idle_state.is_some();
        self.try_to_wake_up(t, Some(armed_on), false);
        // an idle state with no exit latency: the CPU is out at once and, given nothing to
        // run, goes back to idle with a new idle-state choice
        let rq = &self.rqs[armed_on];
        if was_idle && rq.idle_state.is_some() && rq.nr_running() == 0 && rq.pending.is_empty() {
            self.menu_reflect(armed_on, 0);
            self.enter_idle(armed_on);
        }
    }

    /// try_to_wake_up() / wake_up_new_task() where the waking CPU is not modelled (a
    /// task's start, an I/O completion, a deadline replenishment)
    pub(crate) fn wake_up(&mut self, t: TaskId) {
        self.try_to_wake_up(t, None, false);
    }

    /// try_to_wake_up() run on `this_cpu` (the waker's CPU, or the CPU taking the timer
    /// interrupt) with WF_SYNC if `sync`; wake_up_new_task() for a task not started.
    pub(crate) fn try_to_wake_up(&mut self, t: TaskId, this_cpu: Option<usize>, sync: bool) {
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
            self.update_dl_entity(t);
        }
        let task = &self.tasks[t as usize];
        let fork = task.state == TaskState::Unstarted;
        if !fork && task.state != TaskState::Sleeping {
            return;
        }
        if task.sync_blocked {
            self.sync_unblocked(t);
        }
        let task = &self.tasks[t as usize];
        let prev = task.cpu;
        let due = task.wake_due;
        if !fork {
            self.rqs[prev].timers.remove(&(due.unwrap_or(self.now), t));
            self.trace_waking(this_cpu.unwrap_or(prev), t);
        }
        if !fork && self.tasks[t as usize].se.sched_delayed && self.tasks[t as usize].allowed & (1u64 << prev) == 0 {
            // its CPU went offline while it slept queued (the balancers leave delayed tasks
            // in place; the kernel's hotplug migrates them): the dequeue completes here and
            // the wakeup takes the ordinary path
            self.update_rq_clock(prev);
            self.finish_delayed_dequeue(prev, t);
        }
        if !fork && self.tasks[t as usize].se.sched_delayed {
            self.ttwu_runnable(t, prev, this_cpu);
            return;
        }
        let kind = if fork { WakeKind::Fork } else { WakeKind::Wakeup };
        if !fork {
            self.walt_wake(t, prev);
        }
        if fork && self.hotplug.is_some() {
            self.hotplug_refresh_affinity(); // a new task: only online CPUs
        }
        if self.tasks[t as usize].policy == Policy::Other {
            let moves = self.policy.balance_wakeup(&view!(self), t);
            for m in moves {
                self.migrate_queued(m, true);
            }
        }
        self.wake_ctx = crate::sched::WakeCtx { this_cpu, sync };
        let cpu = self.select_task_rq(t, prev, kind);
        self.wake_ctx = Default::default();
        self.charge_placement(cpu);
        if fork && !self.hmp_load.is_empty() {
            self.hmp_init_new(t);
        }
        self.counters.wakeups += 1;
        if fork {
            self.walt_new_task(t);
            self.post_init_entity_util_avg(cpu, t);
        } else {
            self.tasks[t as usize].stats.nr_wakeups += 1;
            if cpu != prev {
                self.set_task_cpu(t, prev, cpu, this_cpu);
            }
        }
        if fork {
            self.tasks[t as usize].wake_due = Some(self.now);
        }
        self.ttwu_queue(t, cpu, fork, this_cpu);
    }

    /// ttwu_runnable(): the task is still queued (DELAY_DEQUEUE), so there is no
    /// select_task_rq(): it is requeued where it is and may preempt.
    #[inline]
    fn ttwu_runnable(&mut self, t: TaskId, prev: usize, this_cpu: Option<usize>) {
        self.counters.wakeups += 1;
        self.counters.delayed_requeues += 1;
        self.tasks[t as usize].stats.nr_wakeups += 1;
        self.requeue_delayed(prev, t);
        self.trace_wakeup(this_cpu.unwrap_or(prev), t, prev, false);
        self.check_preempt(prev, t);
    }

    /// set_task_cpu() for a waking task that select_task_rq() moved from `prev` to `cpu`:
    /// the class's migrate_task_rq() (WALT's and the policy's, then the fair class's
    /// removal of its PELT contribution from `prev`), its vruntime carried over relative
    /// to the two runqueues' min_vruntime, and the migration counted.
    #[inline]
    fn set_task_cpu(&mut self, t: TaskId, prev: usize, cpu: usize, this_cpu: Option<usize>) {
        self.trace_migrate(this_cpu.unwrap_or(prev), t, prev, cpu);
        self.walt_migrate(t, prev, cpu);
        self.policy.migrate_task_rq(&view!(self), t, prev, cpu);
        self.detach_pelt_for_migration(prev, t, Detach::Removed);
        let task = &mut self.tasks[t as usize];
        task.se.vruntime =
            task.se.vruntime.saturating_sub(self.rqs[prev].cfs.min_vruntime) + self.rqs[cpu].cfs.min_vruntime;
        task.stats.migrations += 1;
        self.counters.migrations += 1;
    }

    /// ttwu_queue() onto `cpu`. First the avg_idle fold of ttwu_do_activate(), done here at
    /// the wakeup. A CPU in an idle state handles the wakeup only once it is out of that
    /// state (the timer interrupt or IPI waits for the exit latency), so the task is not
    /// runnable, for PELT or anyone else, before then: it waits on the CPU's pending list
    /// (the wake list of ttwu_queue_wakelist()) and the CPU is kicked; otherwise
    /// ttwu_do_activate() now.
    #[inline]
    fn ttwu_queue(&mut self, t: TaskId, cpu: usize, fork: bool, this_cpu: Option<usize>) {
        // the wakeup ends an idle period begun at newidle; fold it into avg_idle (a 1/8
        // average, capped at 2 x max_idle_balance_cost = 2 x migration cost)
        if let Some(stamp) = self.rqs[cpu].idle_stamp.take() {
            let rq = &mut self.rqs[cpu];
            let sample = (self.now - stamp) as i64;
            let avg = rq.avg_idle as i64 + (sample - rq.avg_idle as i64) / 8;
            rq.avg_idle = (avg.max(0) as u64).min(2 * self.knobs.derived.migration_cost_ns);
        }
        let rq = &self.rqs[cpu];
        let exiting = rq.waking_until.is_some()
            || (rq.curr.is_none() && rq.idle_state.is_some() && self.wake_latency_ns(cpu) > 0);
        if exiting {
            let task = &mut self.tasks[t as usize];
            task.state = TaskState::Waking;
            task.cpu = cpu;
            self.rqs[cpu].pending.push((t, fork));
            self.kick_idle_cpu(cpu);
            return;
        }
        self.ttwu_do_activate(t, cpu, fork, this_cpu);
    }

    /// ttwu_do_activate(): activate_task() (a fork enqueues as a new task, a wakeup with
    /// ENQUEUE_WAKEUP), wakeup_preempt() against the running task, and the RT class's
    /// task_woken() (push the task if it cannot preempt).
    #[inline]
    fn ttwu_do_activate(&mut self, t: TaskId, cpu: usize, fork: bool, this_cpu: Option<usize>) {
        self.enqueue_task(cpu, t, !fork, fork);
        self.trace_wakeup(this_cpu.unwrap_or(cpu), t, cpu, fork);
        self.check_preempt(cpu, t);
        self.task_woken_rt(cpu, t);
    }

    // ------------------------------------------------------------------ events

    /// The jiffy's tick: the extensions' tick, then for each CPU sched_tick() and, for a
    /// busy one, sched_balance_trigger() (`sched_tick_cpu`); nohz_balancer_kick() when a
    /// runqueue had two or more tasks or a misfit task as the tick began; the policy's own
    /// migrations; the lower bound's window; the NOHZ blocked-load decay of idle CPUs
    /// (`update_nohz_stats`); the utilization trace; the next tick.
    pub(crate) fn sched_tick(&mut self) {
        let mut extensions = std::mem::take(&mut self.extensions);
        for e in extensions.iter_mut() {
            e.tick(self);
        }
        self.extensions = extensions;
        let now = self.now;
        let n = self.rqs.len();
        let tick_ns = self.knobs.derived.tick_ns;
        // nohz_balancer_kick(): a runqueue with two or more tasks, or on asymmetric systems a
        // misfit task, wakes the idle balancer
        let nohz_kick = self
            .rqs
            .iter()
            .any(|rq| rq.nr_running() >= 2 || rq.misfit_task_load > 0);
        for cpu in 0..n {
            self.sched_tick_cpu(cpu, now, tick_ns);
        }
        if nohz_kick {
            self.nohz_balancer_kick();
        }
        // the policy's own migrations (GTS: hmp_force_up_migration, hmp_offload_down)
        let migs = self.policy.balance(&view!(self));
        self.apply_policy_migrations(migs);
        if now >= self.lb.next {
            self.lb_record();
            self.lb.next = now + self.knobs.derived.lb_window_ns;
        }
        if now >= self.next_blocked_update {
            self.update_nohz_stats(now);
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

    /// sched_tick() (scheduler_tick() before 6.10) on one CPU: none when it is offline; an
    /// idle CPU whose tick still runs takes the idle tick (idle.rs); a busy one updates
    /// its clock and the running task's runtime and calls its class's task_tick(), then
    /// sched_balance_trigger(): its periodic balance (SCHED_SOFTIRQ) when the balancer's
    /// interval has passed. A tickless idle CPU does neither: the idle load balancer
    /// balances on its behalf once it is out of its idle state.
    #[inline]
    fn sched_tick_cpu(&mut self, cpu: usize, now: u64, tick_ns: u64) {
        if self.hotplug.as_ref().is_some_and(|h| !h.is_online(cpu)) {
            return; // offline: no tick, no balancing
        }
        let busy = self.rqs[cpu].curr.is_some();
        if !busy {
            let rq = &self.rqs[cpu];
            // an idle CPU whose tick runs (menu kept it) takes this tick; one that entered
            // idle at this very instant took it while still busy
            if !rq.tick_stopped && rq.idle_state.is_some() && rq.waking_until.is_none() && rq.idle_since < now {
                self.idle_tick(cpu);
                return;
            }
            if !rq.tick_stopped {
                return; // between a block and the next pick, or leaving an idle state
            }
        }
        if busy && !self.hmp_load.is_empty() {
            let t = self.rqs[cpu].curr.unwrap();
            self.hmp_track(t, true);
        }
        if busy {
            self.update_rq_clock(cpu);
            self.update_curr(cpu);
            self.walt_update_curr(cpu, crate::walt::RavgEvent::TaskUpdate);
            let t = self.rqs[cpu].curr.unwrap();
            if self.tasks[t as usize].is_rt() {
                self.task_tick_rt(cpu, t);
            } else {
                self.task_tick_fair(cpu, t);
            }
        }
        // A tickless idle CPU does not balance at this tick: the idle load balancer
        // kicked by sched_tick() does it on its behalf once out of its idle state. An idle
        // CPU whose tick runs balanced itself above (idle_tick).
        if busy {
            self.sched_balance_trigger(cpu, now, tick_ns);
        }
    }

    /// sched_balance_trigger() (trigger_load_balance() before 6.10) for a busy CPU: the
    /// periodic balance when the balancer says its interval has passed, charged as a
    /// balance pass, then the root domain's flags and the migrations.
    #[inline]
    fn sched_balance_trigger(&mut self, cpu: usize, now: u64, tick_ns: u64) {
        let Some(lb) = self.balancer.as_ref() else { return };
        if lb.periodic_due(cpu, now) {
            let lb = self.balancer.as_mut().unwrap();
            let acts = lb.periodic(&view!(self), cpu, true, tick_ns);
            self.charge_balance_pass(cpu, true);
            self.update_rd_flags();
            self.apply_lb(acts, true);
        }
    }

    /// The NOHZ stats kick (_nohz_idle_balance() with NOHZ_STATS_KICK, every
    /// LOAD_AVG_PERIOD ms): each idle CPU decays its blocked load, as
    /// update_nohz_stats() has sched_balance_update_blocked_averages()
    /// (update_blocked_averages() before 6.10) do, with one cpufreq call if anything
    /// decayed.
    fn update_nohz_stats(&mut self, now: u64) {
        self.next_blocked_update = now + NOHZ_BLOCKED_PERIOD_NS;
        for cpu in 0..self.rqs.len() {
            if self.rqs[cpu].curr.is_none() {
                self.update_rq_clock(cpu);
                let others = self.update_rt_avg_decayed(cpu, false);
                let fair = self.update_load_avg_nohook(cpu, None, false);
                if others || fair {
                    self.cpufreq_update_util(cpu, 0);
                }
            }
        }
    }

    /// Process one event (and the reschedules and cpufreq updates it causes). Returns
    /// false when the queue is empty or a limit stopped the run (`stopped()`).
    pub fn step(&mut self) -> bool {
        let Some(ev) = self.events.pop() else { return false };
        self.handle_event(ev)
    }

    /// `step` for an event already popped.
    fn handle_event(&mut self, ev: crate::event::Event) -> bool {
        debug_assert!(ev.time() >= self.now);
        if ev.time() != self.now {
            self.now = ev.time();
            self.steps_at_now = 0;
        }
        self.steps_at_now += 1;
        if self.steps_at_now > NO_PROGRESS_STEPS {
            self.stop_no_progress(self.last_program);
            return false;
        }
        match ev.kind {
            EventKind::Wakeup { task } => self.timer_expired(task),
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
                    self.trace_idle_exit(cpu);
                    let pending = std::mem::take(&mut self.rqs[cpu].pending);
                    let woken_for_tasks = !pending.is_empty();
                    for &(t, fork) in &pending {
                        self.enqueue_task(cpu, t, !fork, fork);
                        self.trace_wakeup(cpu, t, cpu, fork);
                    }
                    self.rqs[cpu].pending = pending;
                    self.rqs[cpu].pending.clear();
                    // then the timer interrupt: try_to_wake_up() for each timer that expired
                    // here while the CPU was in its idle state
                    let expired = std::mem::take(&mut self.rqs[cpu].expired_timers);
                    for &t in &expired {
                        self.try_to_wake_up(t, Some(cpu), false);
                    }
                    // then the idle balancer's SCHED_SOFTIRQ, unless the CPU has work of its
                    // own by now (nohz_csd_func() finds it not idle_cpu(); the balance would
                    // abort on need_resched())
                    let ilb = std::mem::take(&mut self.rqs[cpu].nohz_idle_balance);
                    if ilb && !woken_for_tasks && self.rqs[cpu].nr_running() == 0 {
                        self.nohz_idle_balance(cpu);
                    }
                    let nothing_to_run = self.rqs[cpu].nr_running() == 0;
                    let timers_only = !expired.is_empty() && nothing_to_run;
                    let ilb_only = ilb && expired.is_empty() && !woken_for_tasks && nothing_to_run;
                    let tick_only = expired.is_empty() && !woken_for_tasks && self.rqs[cpu].idle_tick_wakeup;
                    self.rqs[cpu].idle_tick_wakeup = false;
                    self.rqs[cpu].expired_timers = expired;
                    self.rqs[cpu].expired_timers.clear();
                    if tick_only {
                        self.idle_tick_handled(cpu);
                    } else if timers_only || ilb_only {
                        // every task went elsewhere, or the idle balance pulled nothing
                        // here: nothing set need_resched, so the idle loop goes straight
                        // back to cpuidle (no schedule(), no newidle balance)
                        self.resched[cpu] = false;
                        self.enter_idle(cpu);
                    } else {
                        self.schedule(cpu);
                    }
                }
            }
            EventKind::FreqCommit { cluster, gen } => {
                if self.clusters[cluster as usize].gen == gen {
                    let khz = self.pending_khz[cluster as usize];
                    self.on_freq_commit(cluster as usize, khz);
                }
            }
            EventKind::Tick => self.sched_tick(),
            EventKind::FairServer { cpu } => self.fair_server_timer(cpu as usize),
            EventKind::RtPeriod => self.rt_period_timer(),
            EventKind::GovSample { cluster } if self.sw.is_some() => self.switcher_sample(cluster as usize),
            EventKind::GovSample { cluster } => self.governor_sample(cluster as usize),
            EventKind::Sample => {
                self.sample();
                let period = self.knobs.derived.timeseries_period_ns;
                self.events.push(self.now + period, EventKind::Sample);
            }
        }
        self.run_deferred();
        self.stop.is_none() && self.deadlock.is_none()
    }

    /// What the event left to do at this instant: WALT's rollover irq_work and the
    /// reschedules, until neither is pending. A schedule() that crosses a window boundary
    /// queues the irq_work, which in the kernel runs as soon as the rq lock is released
    /// (a self-IPI), not at whatever the next event happens to be.
    #[inline]
    fn run_deferred(&mut self) {
        // most events leave nothing: test that here, in the caller, without a call
        if self.any_resched || self.walt.as_ref().is_some_and(|w| w.irq_work.is_some()) {
            self.run_deferred_work();
        }
    }

    #[inline(never)]
    fn run_deferred_work(&mut self) {
        loop {
            if self.walt.as_ref().is_some_and(|w| w.irq_work.is_some()) {
                self.walt_irq_work();
            }
            if !self.any_resched {
                return;
            }
            while self.any_resched {
                self.any_resched = false;
                for cpu in 0..self.resched.len() {
                    if self.resched[cpu] {
                        self.schedule(cpu);
                    }
                }
            }
        }
    }

    /// Run every event strictly before `t_ns`, then stop the clock at `t_ns`. A run a
    /// limit stopped (`stopped()`) or a deadlock stopped (`deadlock`) stays where it
    /// stopped.
    pub fn run_until(&mut self, t_ns: u64) {
        self.run_until_polled(t_ns, || true);
    }

    /// `run_until`, asking `poll` after every [`POLL_EVERY_EVENTS`] events whether to go
    /// on (a caller's Ctrl-C). `false` stops the run between two events, the clock where
    /// the last one left it: a later call goes on as if the run had never stopped. Returns
    /// false if `poll` stopped it.
    pub fn run_until_polled(&mut self, t_ns: u64, mut poll: impl FnMut() -> bool) -> bool {
        if self.stop.is_some() || self.deadlock.is_some() {
            return true;
        }
        // what a caller's change between runs asked for (a knob, an affinity) happens now,
        // not at the next event
        self.run_deferred();
        let mut since_poll = 0u32;
        while let Some(ev) = self.events.pop_before(t_ns) {
            if !self.handle_event(ev) {
                // a limit stopped the run, or a deadlock: the result is the run's up to it
                self.meter.sync(&self.platform, self.now);
                return true;
            }
            if !self.go_on(&mut since_poll, &mut poll) {
                return false;
            }
        }
        if t_ns > self.now {
            self.now = t_ns;
            self.steps_at_now = 0;
        }
        self.meter.sync(&self.platform, self.now);
        true
    }

    /// Run until every task has ended (rt-app's `duration: -1`), or until `limit_ns` if
    /// that comes first; the clock stops at the last task's exit. Returns whether every
    /// task ended.
    pub fn run_until_exited(&mut self, limit_ns: u64) -> bool {
        self.run_until_exited_polled(limit_ns, || true).unwrap_or(false)
    }

    /// `run_until_exited` with `run_until_polled`'s `poll`: None if `poll` stopped it.
    /// Tasks blocked for good stop it too (deadlock.rs), as a run that could never end.
    pub fn run_until_exited_polled(&mut self, limit_ns: u64, poll: impl FnMut() -> bool) -> Option<bool> {
        self.until_exit = true;
        // blocked for good since a run of a given duration left them so
        self.check_blocked();
        let ended = self.run_until_exited_inner(limit_ns, poll);
        self.until_exit = false;
        ended
    }

    fn run_until_exited_inner(&mut self, limit_ns: u64, mut poll: impl FnMut() -> bool) -> Option<bool> {
        if self.stop.is_some() || self.deadlock.is_some() {
            return Some(false);
        }
        self.run_deferred();
        let mut since_poll = 0u32;
        while self.nr_to_exit > 0 {
            match self.events.pop_before(limit_ns) {
                Some(ev) => {
                    if !self.handle_event(ev) {
                        // a limit stopped the run, or a deadlock
                        self.meter.sync(&self.platform, self.now);
                        return Some(false);
                    }
                    if !self.go_on(&mut since_poll, &mut poll) {
                        return None;
                    }
                }
                _ => {
                    return self.run_until_polled(limit_ns, poll).then_some(false);
                }
            }
        }
        self.meter.sync(&self.platform, self.now);
        Some(true)
    }

    /// After one more event of a polled run: false if `poll`, asked every
    /// [`POLL_EVERY_EVENTS`] events, says stop. A result read then is the run's up to the
    /// clock, energy included.
    #[inline]
    fn go_on(&mut self, since_poll: &mut u32, poll: &mut impl FnMut() -> bool) -> bool {
        *since_poll += 1;
        if *since_poll < POLL_EVERY_EVENTS {
            return true;
        }
        *since_poll = 0;
        if poll() {
            return true;
        }
        self.meter.sync(&self.platform, self.now);
        false
    }

    /// Whether the run can end with its tasks: at least one task is not a daemon, and every
    /// such task's program is finite (no loop of -1).
    pub fn workload_is_finite(&self) -> bool {
        let mut workers = self.tasks.iter().filter(|t| !t.spec.daemon).peekable();
        workers.peek().is_some() && workers.all(|t| t.spec.loop_ >= 0 && t.spec.phases.iter().all(|p| p.loop_ >= 0))
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
            v[task.cpu] += self.now - task.progress_at;
        }
        v
    }

    pub fn set_knob(&mut self, name: &str, value: f64) -> Result<()> {
        if name == "fair.eevdf" && value != self.knobs.get(Knob::FairEevdf) {
            // the entities' vruntime, deadline and delayed state belong to one form
            return Err(crate::error::config(
                "policy",
                "knobs.fair.eevdf",
                "set when the simulation is built, not while it runs".to_string(),
            ));
        }
        if name == "sched_walt" && value != self.knobs.get(Knob::SchedWalt) {
            // a kernel build option: WALT's state exists from boot or not at all
            return Err(crate::error::config(
                "policy",
                "knobs.sched_walt",
                "set when the simulation is built, not while it runs".to_string(),
            ));
        }
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutils::{costs_off, run_sleep_mix, two_cluster_platform};
    use serde_json::json;

    fn busy_sim() -> Sim {
        let pol: crate::PolicyConfig = costs_off(
            serde_json::from_value(json!({"scheduler": "eas", "governor": "schedutil", "idle_governor": "menu"}))
                .unwrap(),
        );
        Sim::new(
            two_cluster_platform(),
            run_sleep_mix(5, 300_000, 70_000, 900_000, 110_000),
            pol,
        )
        .unwrap()
    }

    /// A poll that says stop ends the call between two events, short of the end; calling
    /// again goes on, and the run is the one never stopped, to the byte.
    #[test]
    fn a_polled_run_stopped_and_resumed_is_the_run_never_stopped() {
        let end = 2_000_000_000;
        let mut whole = busy_sim();
        whole.run_until(end);
        let mut cut = busy_sim();
        let (mut polls, mut stops) = (0u32, 0u32);
        while !cut.run_until_polled(end, || {
            polls += 1;
            polls % 2 != 0
        }) {
            stops += 1;
            assert!(cut.now < end);
            // read while stopped, the energy meter accounts for every CPU up to the clock
            for cpu in 0..cut.platform.nr_cpus() {
                let (busy, idle) = cut.meter.residency_ns_all_cores(cpu);
                assert_eq!(busy + idle, cut.now, "cpu {cpu}");
            }
        }
        assert!(stops >= 2, "{stops} stops in {polls} polls");
        assert_eq!(cut.now, end);
        assert_eq!(cut.events.popped, whole.events.popped);
        assert_eq!(cut.result_json(), whole.result_json());
    }

    /// Only a wakeup's enqueue checks rd->overutilized: v6.12's enqueue_task_fair() takes
    /// any enqueue without ENQUEUE_WAKEUP as "task_new" (a fork, the balancer's
    /// attach_task(), an affinity move) and leaves the flag to the next wakeup or tick.
    /// A hog pinned to little CPU 0 (capacity 512) passes 80 % of it after about 43 ms;
    /// with the flag cleared by hand at 100 ms, a sleeping task enqueued there as a
    /// migration leaves it clear, and a task woken there sets it.
    #[test]
    fn only_a_wakeup_enqueue_sets_overutilized() {
        let pinned = |name: &str, events: serde_json::Value| json!({"name": name, "cpus": [0], "loop": 1, "phases": [{"loop": 1, "events": events}]});
        let tasks = vec![
            pinned("hog", json!([{"run": 1_000_000_000u64}])),
            pinned("moved", json!([{"sleep": 10_000_000_000u64}])),
            pinned("woken", json!([{"sleep": 10_000_000_000u64}])),
        ];
        let w = json!({"name": "t", "duration_ns": null, "timers": 0, "tasks": tasks});
        let pol: crate::PolicyConfig =
            costs_off(serde_json::from_value(json!({"scheduler": "eas", "governor": "schedutil"})).unwrap());
        let mut sim = Sim::new(
            two_cluster_platform(),
            crate::workload::WorkloadSpec::from_json(&w.to_string()).unwrap(),
            pol,
        )
        .unwrap();
        sim.run_until(100_000_000);
        assert!(sim.view().cpu_overutilized(0) && sim.overutilized);
        sim.overutilized = false;
        assert_eq!(sim.tasks[1].state, TaskState::Sleeping);
        sim.enqueue_task(0, 1, false, false);
        assert!(!sim.overutilized, "an enqueue without ENQUEUE_WAKEUP leaves the flag");
        sim.try_to_wake_up(2, Some(0), false);
        assert!(sim.overutilized, "a wakeup's enqueue on an overutilized CPU sets it");
    }
}
