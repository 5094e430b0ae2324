//! The structures the scheduler's files share, as kernel/sched/sched.h has them: the task
//! (its scheduling entity, class, affinity, clamps and statistics), the per-CPU runqueue,
//! the read-only view hooks are given (`SchedView`), and the run's policy configuration.
//! The simulation that owns them and sequences the mechanisms is core.rs.

use std::collections::BTreeMap;

use crate::deadline::DlEntity;
use crate::energy::EnergyMeter;
use crate::fair::{CfsRq, SchedEntity};
use crate::features::Knobs;
use crate::idle::Menu;
use crate::pelt::SchedAvg;
use crate::platform::Platform;
use crate::rt::RtRq;
use crate::sorted_vec::SortedVec;
use crate::uclamp::UclampRq;
use crate::workload::rtapp::{PerfModel, PhaseStats};
use crate::workload::Policy;
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

/// A task's wakeup latencies (ns), kept as the number of wakeups at each latency: the
/// result's nearest-rank percentiles, mean and maximum come out exactly as from the list of
/// every sample, while the memory follows the distinct latencies, which grow far slower
/// than the wakeups (an hour of `game` on gs101: 2.3 million wakeups, 6 440 distinct
/// latencies), where the list grew by 8 bytes a wakeup. A tree, not a sorted vector: where
/// nearly every latency is new (hackbench: 135 000 distinct per task after 150 s), an
/// insertion into a vector moved half of it, and took most of the run's time.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WakeupLatencies {
    /// latency -> wakeups
    counts: BTreeMap<u64, u64>,
    len: u64,
    last: Option<u64>,
}

impl WakeupLatencies {
    #[inline]
    pub fn push(&mut self, ns: u64) {
        *self.counts.entry(ns).or_insert(0) += 1;
        self.len += 1;
        self.last = Some(ns);
    }

    /// The number of wakeups.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The latest wakeup's latency.
    pub fn last(&self) -> Option<u64> {
        self.last
    }

    pub fn max(&self) -> Option<u64> {
        self.counts.last_key_value().map(|(&v, _)| v)
    }

    pub fn sum(&self) -> u64 {
        self.counts.iter().map(|(&v, &n)| v * n).sum()
    }

    /// The wakeups of latency `ns`.
    pub fn count_of(&self, ns: u64) -> u64 {
        self.counts.get(&ns).copied().unwrap_or(0)
    }

    /// (latency, wakeups), by increasing latency.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.counts.iter().map(|(&v, &n)| (v, n))
    }

    /// The distinct latencies held.
    pub fn distinct(&self) -> usize {
        self.counts.len()
    }
}

#[derive(Debug, Clone, Default)]
pub struct TaskStats {
    pub cpu_time_ns: Vec<u64>,
    pub wait_ns: u64,
    pub migrations: u64,
    pub nr_wakeups: u64,
    pub wakeup_latency_ns: WakeupLatencies,
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
    /// the index of its spec in the workload: its own id, or the template's for a forked copy
    pub spec_index: TaskId,
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
    /// the work the current run or memrun event asked for (its size when it completes)
    pub(crate) work_armed: u64,
    pub(crate) runtime_end: u64,
    /// while it runs: the instant up to which its progress is accounted (its work, the
    /// kernel's work queued before it, its CPU time); `se.exec_start` is the kernel's own
    /// mark, moved only where the kernel calls update_curr()
    pub(crate) progress_at: u64,
    /// when the current wakeup was due (timer expiry), for wakeup latency
    pub(crate) wake_due: Option<u64>,
    /// when the task last became runnable without running (for wait time)
    pub(crate) queued_since: u64,
    pub(crate) rr_left_ns: u64,
    /// effective uclamp [min, max]: the request, or under pixel-5.10 the request held
    /// within the task's vendor group (pixel_sched.rs)
    pub uclamp: [u64; 2],
    /// the uclamp request (p->uclamp_req), the class default where none was given, and
    /// whether uclamp.min was set by the task (uclamp_se.user_defined)
    pub(crate) uclamp_req: [u64; 2],
    pub(crate) uclamp_min_user: bool,
    pub stats: TaskStats,
    pub(crate) perf: Option<Box<PerfModel>>,
    /// work still to run with a cold cache, and the CPU the task last ran on
    pub(crate) cold_left: u64,
    pub(crate) last_ran: usize,
    pub dl: DlEntity,
    pub(crate) iowait_since: Option<u64>,
    /// p->in_iowait: blocked in io_schedule() and not yet back on a CPU; its wakeup
    /// enqueue passes SCHED_CPUFREQ_IOWAIT
    pub(crate) in_iowait: bool,
    /// copies forked from this template so far
    pub(crate) forks: u32,
    /// the pending wakeup is a timer event's (rt-app logs wu_lat for those only)
    pub(crate) timer_wake: bool,
    /// p->misfit (msm-4.14 WALT): the task did not fit its CPU when it was last enqueued
    /// there or last ticked running there; core_ctl's big-task count reads it
    /// (extensions/core_ctl.rs)
    pub(crate) misfit: bool,
    /// queued on a synchronisation object (deadlock.rs counts these)
    pub(crate) sync_blocked: bool,
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
    /// cpu_bw_dl(): the deadline bandwidth running on the CPU, in capacity units: the fair
    /// server's runtime / period while it is started (its running_bw, added by
    /// dl_server_start() and taken off at dl_server_stop(), whose zero-lag time has
    /// passed when the server's runtime was not used, the usual case)
    pub dl_bw: u64,
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
    /// sleeping tasks whose timer, armed on this CPU, expired while it was in an idle
    /// state: try_to_wake_up() runs for them here once the CPU is out of it
    pub(crate) expired_timers: Vec<TaskId>,
    /// wakeups armed on this CPU: (time, task); the next one drives idle-state choice
    pub(crate) timers: SortedVec<(u64, TaskId)>,
    pub nr_switches: u64,
    /// tick_nohz's idle_calls: idle entries whose governor let the tick stop
    pub(crate) idle_calls: u64,
    /// tick_nohz's tick_stopped: the idle CPU's tick is off (until it leaves the idle loop
    /// for a task); while it runs, the CPU is woken at each jiffy
    pub(crate) tick_stopped: bool,
    /// the CPU is leaving its idle state for the tick (tick_nohz_idle_got_tick())
    pub(crate) idle_tick_wakeup: bool,
    /// nohz_flags(cpu) & NOHZ_BALANCE_KICK: kick_ilb() chose this CPU as the idle load
    /// balancer and its IPI has not been handled yet (the balance runs once it is out of
    /// its idle state)
    pub(crate) nohz_idle_balance: bool,
    /// invariant work executed on this CPU since the start (ns at capacity 1024, f_max)
    pub work_done: u64,
    /// start of the slice being traced
    pub(crate) slice_start: u64,
    /// sched_yield(): the task the next fair pick passes over (the skip buddy)
    pub(crate) yield_skip: Option<TaskId>,
    /// the kernel's own work queued on this CPU (costs.rs), invariant units: it runs before
    /// the current task's
    pub overhead_left: u64,
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
    /// rd->overloaded
    pub overloaded: bool,
    /// uclamp_is_used()
    pub uclamp_used: bool,
    /// EAS runs (sched_energy_enabled)
    pub eas: bool,
    /// the kernel profile (`legacy()`: the Android kernels' forms)
    pub profile: KernelProfile,
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
    /// the wakeup being placed: the CPU running try_to_wake_up() and its wake flags
    pub wake: WakeCtx,
    /// the msm-4.14 profile: WALT and schedtune
    pub walt: Option<&'a crate::walt::Walt>,
    pub stune: Option<&'a crate::schedtune::SchedTune>,
    /// the pixel-5.10 profile's vendor groups (pixel_sched.rs)
    pub pixel: Option<&'a crate::pixel_sched::VendorGroups>,
}

/// What select_task_rq_fair() knows of the wakeup besides the task: smp_processor_id(),
/// the CPU running try_to_wake_up(), and WF_SYNC. A task-to-task wakeup (a mutex unlock,
/// a condition signal, a barrier, a semaphore post) runs on the waker's CPU; a timer
/// wakeup on the CPU that armed the timer, in interrupt context. `this_cpu` is None where
/// the engine does not model the waking CPU (an I/O completion's interrupt, a task's
/// start, an affinity change): select_task_rq_fair() then takes prev_cpu as this CPU.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WakeCtx {
    pub this_cpu: Option<usize>,
    /// WF_SYNC: the waker is about to sleep (a pipe or socket write's sync wakeup)
    pub sync: bool,
}

impl<'a> SchedView<'a> {
    /// The Android kernels' forms (KernelProfile::android_forms: android-4.19, msm-4.14
    /// and pixel-5.10).
    #[inline]
    pub fn legacy(&self) -> bool {
        self.profile.android_forms()
    }

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
            // Kim et al.'s switcher kernel: its scheduler sees identical virtual CPUs
            return crate::platform::SCHED_CAPACITY_SCALE;
        }
        self.platform.capacity_orig(cpu)
    }
    /// idle_cpu(): nothing running, nothing queued, not already being woken.
    pub fn idle_cpu(&self, cpu: usize) -> bool {
        let rq = &self.rqs[cpu];
        // a CPU leaving its idle state for a wakeup has one pending (rq->ttwu_pending); one
        // leaving it for the tick or the idle balancer's IPI alone is still idle
        rq.curr.is_none()
            && rq.nr_running() == 0
            && (rq.waking_until.is_none() || ((rq.idle_tick_wakeup || rq.nohz_idle_balance) && rq.pending.is_empty()))
    }
    /// cpu_util_cfs(): max(util_avg, util_est), capped at capacity_orig.
    pub fn cpu_util_cfs(&self, cpu: usize) -> u64 {
        if let Some(w) = self.walt {
            // msm-4.14's cpu_util(): the queued tasks' WALT demands
            return w.cpu_util(cpu).min(self.capacity_orig(cpu));
        }
        let c = &self.rqs[cpu].cfs;
        c.avg.util_avg.max(c.util_est).min(self.capacity_orig(cpu))
    }
    /// cpu_util_cfs_boost(): cpu_util_cfs() with the runnable boost, max(util_avg,
    /// runnable_avg, util_est), capped at capacity_orig. The boost came with v6.5; the
    /// android-4.19 profile reads plain cpu_util_cfs().
    pub fn cpu_util_cfs_boost(&self, cpu: usize) -> u64 {
        if self.legacy() || self.walt.is_some() {
            return self.cpu_util_cfs(cpu);
        }
        let c = &self.rqs[cpu].cfs;
        c.avg
            .util_avg
            .max(c.avg.runnable_avg)
            .max(c.util_est)
            .min(self.capacity_orig(cpu))
    }
    /// task_util_est(): max(util_avg, util_est ewma) of a task.
    pub fn task_util_est(&self, p: TaskId) -> u64 {
        if self.stune.is_some() {
            // msm-4.14 (with WALT or without) fits tasks by boosted_task_util()
            // (task_fits_capacity)
            return self.boosted_task_util(p);
        }
        let a = &self.tasks[p as usize].se.avg;
        a.util_avg.max(a.ewma())
    }
    /// boosted_task_util() (msm-4.14): the task's util plus its schedtune margin; the util
    /// is WALT's demand, or PELT's max(util_avg, util_est ewma) in the tree built without
    /// WALT. 0 outside msm-4.14 (no schedtune).
    pub fn boosted_task_util(&self, p: TaskId) -> u64 {
        let u = match (self.walt, self.stune) {
            (Some(w), _) => w.task_util(p),
            (None, Some(_)) => {
                let a = &self.tasks[p as usize].se.avg;
                a.util_avg.max(a.ewma())
            }
            (None, None) => return 0,
        };
        let b = self.stune.map_or(0, |st| st.task_boost(p as usize));
        crate::schedtune::boosted_util(u, b)
    }

    /// cpus_share_cache(): the two CPUs share their last-level cache. A DynamIQ SoC's L3 is
    /// in the DSU, shared by every CPU (`platform.shared_llc`); a classic big.LITTLE SoC has
    /// one L2 per cluster and no cache above it, so the LLC domain is the cluster's.
    pub fn cpus_share_cache(&self, a: usize, b: usize) -> bool {
        a == b || self.platform.shared_llc || self.platform.cpu_cluster[a] == self.platform.cpu_cluster[b]
    }
    /// per_cpu(sd_llc_size): the CPUs sharing `cpu`'s last-level cache.
    pub fn llc_size(&self, cpu: usize) -> u32 {
        if self.platform.shared_llc {
            return self.nr_cpus() as u32;
        }
        let ci = self.platform.cpu_cluster[cpu];
        self.platform.cpu_cluster.iter().filter(|&&c| c == ci).count() as u32
    }
    /// sync_entity_load_avg(): a sleeping task's PELT signals decayed, with no
    /// contribution, to its cfs_rq's last update (the CPU it slept on). The kernel writes
    /// the result back into p->se.avg; the engine decays a copy, and the enqueue that
    /// follows decays the task to the same point from where it was, so the two agree.
    pub fn sync_entity_load_avg(&self, p: TaskId) -> SchedAvg {
        let t = &self.tasks[p as usize];
        let mut avg = t.se.avg.clone();
        let lut = self.rqs[t.cpu].cfs.avg.last_update_time;
        if t.se.attached && lut > avg.last_update_time {
            avg.update(lut, 0, 0, false, t.se.weight);
        }
        avg
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
        let fits = self.util_fits_cpu(self.cpu_util_cfs(cpu), umin, umax, cpu);
        if self.pixel.is_some() {
            // rvh_cpu_overutilized_pixel_mod(): the module's util_fits_cpu() is false where
            // uclamp_min cannot be met
            return fits != 1;
        }
        fits == 0
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
    /// The fair tasks queued on `cpu` (not the running one, not sched_delayed), least
    /// recently run first: the order detach_tasks() walks rq->cfs_tasks from its tail in.
    pub fn queued_fair_least_recent_first(&self, cpu: usize) -> Vec<TaskId> {
        let mut fair: Vec<TaskId> = self.rqs[cpu]
            .cfs
            .timeline
            .iter()
            .map(|&(_, t)| t)
            .filter(|&t| !self.tasks[t as usize].se.sched_delayed)
            .collect();
        fair.sort_by_key(|&t| (self.tasks[t as usize].se.exec_start, t));
        fair
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
    /// the trace's format: "chrome" (default), "ftrace" or "perfetto"
    #[serde(default)]
    pub trace_format: crate::trace::TraceFormat,
    #[serde(default)]
    pub timeseries: bool,
    /// the energy lower bound: "stream" (default), "record" (the per-window work table,
    /// for the LP reference), "off"
    #[serde(default)]
    pub lower_bound: crate::lower_bound::LowerBoundMode,
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

/// The kernel profiles (`--set kernel=`): where the phones of the studies (Android
/// 4.14/4.19) differ from v6.12.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelProfile {
    Mainline612,
    Android419,
    Msm414,
    Pixel510,
}

impl KernelProfile {
    pub const ALL: [KernelProfile; 4] = [
        KernelProfile::Mainline612,
        KernelProfile::Android419,
        KernelProfile::Msm414,
        KernelProfile::Pixel510,
    ];

    /// The name `--set kernel=` takes.
    pub fn name(self) -> &'static str {
        match self {
            KernelProfile::Mainline612 => "mainline-6.12",
            KernelProfile::Android419 => "android-4.19",
            KernelProfile::Msm414 => "msm-4.14",
            KernelProfile::Pixel510 => "pixel-5.10",
        }
    }

    /// The release its sources were read in (result.json's `kernel_release`).
    pub fn release(self) -> &'static str {
        match self {
            // the third audit compared the engine with Debian's linux 6.12.8 source; later
            // 6.12.y stable releases took more (menu lost its I/O-wait terms in one of August 2025)
            KernelProfile::Mainline612 => "6.12.8",
            KernelProfile::Android419 => "4.19 (Android common android-4.19, EAS as of 5.4)",
            KernelProfile::Msm414 => "4.14 (Qualcomm msm-4.14 of the Snapdragon 855 phones)",
            KernelProfile::Pixel510 => "5.10 (android13-5.10 GKI with Google's gs101 vendor scheduler module, as the Pixel 6 and 6a run Android 13)",
        }
    }

    /// What it changes.
    pub fn about(self) -> &'static str {
        match self {
            KernelProfile::Mainline612 => "v6.12: EM cost 10*P/perf with inefficient states skipped, feec without margin, single-word util_est, rate limit 1.5x latency",
            KernelProfile::Android419 => "v4.19/5.4 EAS: EM cost P*f_max/f with the 1.25 headroom inside, feec's 6% margin, util_est {enqueued, ewma} without fast-up, rate limit min(1000x latency, 10 ms)",
            KernelProfile::Msm414 => "Qualcomm's Android 4.14 kernel of the Snapdragon 855 phones: find_energy_efficient_cpu() with find_best_target() on every wakeup and fork, on WALT's signals (20 ms windows) instead of PELT, schedtune boost groups instead of uclamp, schedutil with hispeed_freq and predicted load, core_ctl; on a known SoC the device's init-script values (walt.rs)",
            KernelProfile::Pixel510 => "Pixel 6/6a (gs101) on Android 13: the 5.10 GKI (CFS, PELT with an invariant clock, util_est with fast-up, uclamp) with Google's vendor hooks (pixel_sched.rs): a sync wakeup to the waker's CPU, an idle prev_cpu in WFI kept, else the vendor find_energy_efficient_cpu() by vendor group (prefer_idle, importance, spare capacity, idle exit latency); sched_pixel's up/down rate limits; on gs101 the device's init-script values",
        }
    }

    /// The profile `name` names, or the one-line error that lists the choices.
    pub fn from_name(name: &str) -> crate::error::Result<KernelProfile> {
        KernelProfile::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| crate::error::Error::Unknown {
                field: "kernel".into(),
                kind: "kernel profile",
                name: name.into(),
                choices: KernelProfile::ALL.map(|k| k.name()).join(", "),
            })
    }

    /// The Android kernels' forms of PELT, util_est, the Energy Model, feec and the cpufreq
    /// rate limit (android-4.19's): the 4.14 and 4.19 Android kernels share them; 5.10
    /// shares them but for PELT's clock (`pelt_4_19`) and util_est's fast-up.
    pub fn android_forms(self) -> bool {
        self != KernelProfile::Mainline612
    }

    /// Qualcomm's msm-4.14: WALT, schedtune, its schedutil, core_ctl, find_best_target().
    pub fn msm(self) -> bool {
        self == KernelProfile::Msm414
    }

    /// The Pixel's 5.10 kernel: Google's vendor scheduler hooks (pixel_sched.rs).
    pub fn pixel(self) -> bool {
        self == KernelProfile::Pixel510
    }

    /// PELT as 4.19 has it: contributions scaled by frequency and capacity as they accrue
    /// (no invariant clock_pelt, so no lost idle time), util_est sampled at the end of the
    /// dequeue. 5.1 brought the invariant clock; 5.10 keeps 4.19's util_est order.
    pub fn pelt_4_19(self) -> bool {
        matches!(self, KernelProfile::Android419 | KernelProfile::Msm414)
    }
}

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
    /// RT tasks moved by push_rt_task()
    pub rt_pushes: u64,
    /// pull_rt_task() calls that had overloaded CPUs push (RT_PUSH_IPI)
    pub rt_pull_requests: u64,
    /// the scheduler's own work charged (costs.rs), invariant units, by kind
    pub cost_work: u64,
    pub cost_context_switch: u64,
    pub cost_migration: u64,
    pub cost_placement: u64,
    pub cost_balance: u64,
    /// ticks taken by an idle CPU whose governor kept the tick (each one an idle exit)
    pub idle_ticks: u64,
    /// kick_ilb() IPIs sent: a tickless idle CPU woken to balance for the idle CPUs
    pub nohz_balance_kicks: u64,
    /// sleeps DELAY_DEQUEUE left queued (sched_delayed)
    pub delayed_dequeues: u64,
    /// wakeups that found their task still queued as delayed (ttwu_runnable)
    pub delayed_requeues: u64,
    /// curr protections cancelled by a shorter-slice waker (PREEMPT_SHORT)
    pub preempt_short: u64,
}

/// A cluster's frequency state.
#[derive(Debug, Clone, Copy)]
pub struct ClusterState {
    pub opp: usize,
    /// arch_freq_scale of the cluster at its current OPP, set on every change
    pub freq_scale: u64,
    pub(crate) gen: u32,
}
