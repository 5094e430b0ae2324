//! The wakeup path of msm-4.14 (Qualcomm's Android 4.14 `kernel/sched/fair.c`, as the
//! Snapdragon 855 trees carry it: OnePlusOSS/android_kernel_oneplus_sm8150,
//! 0wnerDied/Neptune_kernel_sm8150_oneplus; read for this model and described in our own
//! words, the OEM additions left out).
//!
//! With `energy_aware()` on, select_task_rq_fair() hands every fair wakeup and every fork to
//! find_energy_efficient_cpu() and returns what it says: the root domain's overutilized
//! flag does not send the task to the CFS path, as it does in mainline. That function:
//!
//! 1. a sync wakeup (`sysctl_sched_sync_hint_enable`, 1) goes to the waker's CPU if the
//!    task may run there and fits it at its maximum (bias_to_this_cpu());
//! 2. otherwise find_best_target() (sched_feat FIND_BEST_TARGET, on in these trees) names a
//!    target and a backup CPU, visiting the clusters from start_cpu()'s (the smallest the
//!    task fits, or the middle/biggest one for a boosted task) and taking, per the kernel's
//!    cases: for a prefer_idle task the idle CPU of the smallest capacity (the biggest when
//!    boosted) in the shallowest state, else the busy CPU with the most spare capacity that
//!    holds it at its current frequency, else the least utilised; for the others the busy
//!    CPU of the smallest capacity with the most spare capacity (not for a new task, which is
//!    TASK_RUNNING there), or the idle CPU of the smallest capacity in the shallowest state
//!    when packing is not allowed (is_packing_eligible()); an idle prev_cpu in idle state 0
//!    or 1 of start_cpu()'s capacity is taken at once, with no energy (the prev_cpu fast
//!    path);
//! 3. the target is taken without comparing energies when the task is boosted, when
//!    prev_cpu would be overutilized with the task (`__cpu_overutilized()`, the upmigrate
//!    margin on capacity_orig), when the task does not fit prev_cpu at its maximum
//!    (task_fits_max()), or when prev_cpu is isolated; a prefer_idle task takes an idle
//!    target at once;
//! 4. otherwise select_energy_cpu_idx() estimates the energy with the task on prev_cpu, on
//!    the target and on the backup, and moves the task to the candidate with the lowest
//!    energy unless its difference from prev_cpu's is within 1/64 of prev_cpu's (the dead
//!    zone; FBT_STRICT_ORDER off: the lower of target and backup wins).
//!
//! The fits use `sched_capacity_margin_up/down` = 1024 · 100 / `sched_upmigrate` and
//! `sched_downmigrate` (%), per CPU, as the sysctl handler sets them; on msm-4.14 they are
//! always in force.
//!
//! Differences: the energy of a candidate is the engine's Energy Model (android-4.19's
//! cost, energy_model.rs) over the perf domains holding a candidate, where 4.14 sums its
//! sched-group energy model (capacity states and idle-state power per group); WALT's
//! cumulative window demand (`cpu_util_cum()`, the tie-breaks and is_packing_eligible())
//! is the CPU's WALT load here; related thread groups (colocation), sched_boost, the
//! many-wakeup fast path, IRQ load and reserved CPUs are not modelled; WF_SYNC (step 1)
//! comes only from a workload's sem_post_sync (binder's calls, hackbench's messages).

use crate::core::SchedView;
use crate::features::Knob;
use crate::sched::TaskId;

/// How the msm-4.14 path placed each task (`counters.find_best_target`).
#[derive(Debug, Clone, Default)]
pub struct FbtCounters {
    pub calls: u64,
    pub sync_wakeups: u64,
    pub prev_fastpath: u64,
    /// find_best_target() found nothing: prev_cpu
    pub no_target: u64,
    /// a prefer_idle task on the idle CPU case A found (schedtune's prefer_idle placements)
    pub prefer_idle: u64,
    /// the target without an energy comparison (boosted, prev overutilized, not fitting
    /// prev or isolated)
    pub target_taken: u64,
    pub energy_compared: u64,
    /// energy comparisons that left prev_cpu
    pub energy_moves: u64,
}

impl FbtCounters {
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "calls": self.calls,
            "sync_wakeups": self.sync_wakeups,
            "prev_cpu_fastpath": self.prev_fastpath,
            "no_target": self.no_target,
            "prefer_idle_idle_cpu": self.prefer_idle,
            "target_without_energy": self.target_taken,
            "energy_compared": self.energy_compared,
            "energy_moves": self.energy_moves,
        })
    }
}

/// 1024 · 100 / pct: sched_capacity_margin_{up,down} from sched_{up,down}migrate.
fn capacity_margin(pct: f64) -> u64 {
    102_400 / (pct.round() as u64).max(1)
}

/// What the path reads of the task being placed.
struct Task {
    p: TaskId,
    /// task_cpu(p): prev_cpu for a wakeup, the parent's CPU for a fork
    prev: usize,
    /// task_util_est(): WALT's demand, or max(util_avg, util_est) synced to the sleep
    util_est: u64,
    /// WALT's demand (task_util()), 0 without WALT
    walt_util: u64,
    /// boosted_task_util(): util_est plus the schedtune margin
    min_util: u64,
    boosted: bool,
    prefer_idle: bool,
    /// a new task: wake_up_new_task() sets TASK_RUNNING before placing it
    running: bool,
    margin_up: u64,
    margin_down: u64,
}

impl Task {
    fn read(v: &SchedView, p: TaskId, prev: usize, fork: bool) -> Task {
        let st = v.stune.expect("the msm-4.14 path runs with schedtune");
        let boost = st.task_boost(p as usize);
        let (util_est, walt_util) = match v.walt {
            Some(w) => (w.task_util(p), w.task_util(p)),
            None => {
                let a = v.sync_entity_load_avg(p);
                (a.util_avg.max(a.ewma()), 0)
            }
        };
        Task {
            p,
            prev,
            util_est,
            walt_util,
            min_util: crate::schedtune::boosted_util(util_est, boost),
            boosted: boost > 0,
            prefer_idle: st.prefer_idle(p as usize),
            running: fork,
            margin_up: capacity_margin(v.knobs.get(Knob::VendorSchedUpmigrate)),
            margin_down: capacity_margin(v.knobs.get(Knob::VendorSchedDownmigrate)),
        }
    }
}

/// The CPUs of the smallest, middle and biggest capacity (rd->min/mid/max_cap_orig_cpu):
/// the first CPU of each; `mid` only with three capacities or more. With the smallest and
/// biggest capacity_orig (rd->max_cpu_capacity), which task_fits_max() reads.
struct RootCaps {
    min_cpu: usize,
    mid_cpu: Option<usize>,
    max_cpu: usize,
    min_cap: u64,
    max_cap: u64,
}

impl RootCaps {
    fn read(v: &SchedView) -> RootCaps {
        let n = v.nr_cpus();
        let min_cpu = (0..n).min_by_key(|&c| (v.capacity_orig(c), c)).unwrap_or(0);
        let max_cpu = (0..n)
            .min_by_key(|&c| (std::cmp::Reverse(v.capacity_orig(c)), c))
            .unwrap_or(0);
        let (min_cap, max_cap) = (v.capacity_orig(min_cpu), v.capacity_orig(max_cpu));
        let mid_cpu = (0..n).find(|&c| v.capacity_orig(c) > min_cap && v.capacity_orig(c) < max_cap);
        RootCaps {
            min_cpu,
            mid_cpu,
            max_cpu,
            min_cap,
            max_cap,
        }
    }
}

/// cpu_util(): WALT's load or max(util_avg, util_est), at most capacity_orig.
fn cpu_util(v: &SchedView, cpu: usize) -> u64 {
    v.cpu_util_cfs(cpu)
}

/// cpu_util_without(): under WALT a waking task is in no CPU's load, so the CPU's own;
/// on PELT its prev_cpu's util less the task's.
fn cpu_util_without(v: &SchedView, t: &Task, cpu: usize) -> u64 {
    if v.walt.is_some() {
        return cpu_util(v, cpu);
    }
    crate::schedtune::cpu_util_without(v, cpu, t.p, t.prev)
}

/// capacity_curr_of(): capacity_orig at the cluster's current frequency.
fn capacity_curr_of(v: &SchedView, cpu: usize) -> u64 {
    let ci = v.platform.cpu_cluster[cpu];
    v.capacity_orig(cpu) * v.cpu_freq_khz(cpu) / v.platform.clusters[ci].fmax_khz
}

/// task_fits_capacity() on capacity_orig inside task_fits_max(): a CPU of the biggest
/// capacity holds anything; on one of the smallest a task of a boosted schedtune group
/// never fits; otherwise capacity · 1024 > boosted_task_util · margin, the margin being
/// task_cpu()'s down margin toward a smaller CPU and its up margin otherwise.
fn fits_max(
    v: &SchedView,
    rc: &RootCaps,
    min_util: u64,
    boosted: bool,
    task_cpu: usize,
    cpu: usize,
    margins: (u64, u64),
) -> bool {
    let cap = v.capacity_orig(cpu);
    if cap >= rc.max_cap {
        return true;
    }
    if cap == rc.min_cap && boosted {
        return false;
    }
    let margin = if v.capacity_orig(task_cpu) > cap {
        margins.1
    } else {
        margins.0
    };
    cap * 1024 > min_util * margin
}

fn task_fits_max(v: &SchedView, rc: &RootCaps, t: &Task, cpu: usize) -> bool {
    fits_max(v, rc, t.min_util, t.boosted, t.prev, cpu, (t.margin_up, t.margin_down))
}

/// task_fits_max(p, cpu) for a task where it is (core_ctl's misfit flag, set at enqueue
/// and at the tick): boosted_task_util() under schedtune, the task's util otherwise.
pub(crate) fn task_fits_max_here(v: &SchedView, p: TaskId, cpu: usize) -> bool {
    let boosted = v.stune.is_some_and(|st| st.task_boost(p as usize) > 0);
    let margins = (
        capacity_margin(v.knobs.get(Knob::VendorSchedUpmigrate)),
        capacity_margin(v.knobs.get(Knob::VendorSchedDownmigrate)),
    );
    fits_max(
        v,
        &RootCaps::read(v),
        v.task_util_est(p),
        boosted,
        v.tasks[p as usize].cpu,
        cpu,
        margins,
    )
}

/// __cpu_overutilized(cpu, delta): capacity_orig · 1024 < (cpu_util + delta) · margin_up.
fn cpu_overutilized_with(v: &SchedView, t: &Task, cpu: usize, delta: u64) -> bool {
    v.capacity_orig(cpu) * 1024 < (cpu_util(v, cpu) + delta) * t.margin_up
}

/// start_cpu(): a boosted task starts on the middle capacity if it fits there at its
/// maximum, else on the biggest; another on the smallest it fits, middle, then biggest.
fn start_cpu(v: &SchedView, rc: &RootCaps, t: &Task) -> usize {
    if t.boosted {
        return match rc.mid_cpu {
            Some(m) if task_fits_max(v, rc, t, m) => m,
            _ => rc.max_cpu,
        };
    }
    if task_fits_max(v, rc, t, rc.min_cpu) {
        return rc.min_cpu;
    }
    match rc.mid_cpu {
        Some(m) if task_fits_max(v, rc, t, m) => m,
        _ => rc.max_cpu,
    }
}

/// idle_get_state_idx(): the cpuidle state of an idle CPU, -1 while it is idle but in none.
/// msm's lpm-levels driver registers a CPU's own levels (WFI, rail power collapse) as its
/// cpuidle states and picks the cluster's modes inside them, so a CPU whose cluster is in a
/// cluster state is, for this index, in its deepest CPU-level state.
fn idle_idx(v: &SchedView, cpu: usize) -> i64 {
    let Some(s) = v.rqs[cpu].idle_state else { return -1 };
    let states = &v.platform.clusters[v.platform.cpu_cluster[cpu]].idle_states;
    let cpu_levels = states
        .iter()
        .filter(|st| st.level == crate::platform::IdleLevel::Cpu)
        .count();
    s.min(cpu_levels.saturating_sub(1)) as i64
}

/// find_best_target()'s answer: (target, backup); both None send the task to prev_cpu.
struct Fbt {
    target: Option<usize>,
    backup: Option<usize>,
    prev_fastpath: bool,
}

fn find_best_target(v: &SchedView, rc: &RootCaps, t: &Task, isolated: u64) -> Fbt {
    let prev = t.prev;
    let start = start_cpu(v, rc, t);
    let start_cap = v.capacity_orig(start);
    let is_iso = |c: usize| isolated & (1u64 << c) != 0;
    // the prev_cpu fast path: idle in a shallow state, of start_cpu()'s capacity
    if v.capacity_orig(prev) == start_cap && !is_iso(prev) && v.idle_cpu(prev) && idle_idx(v, prev) <= 1 {
        return Fbt {
            target: None,
            backup: None,
            prev_fastpath: true,
        };
    }
    // the highest energy domain's groups (the clusters), from start_cpu()'s round
    let nc = v.platform.clusters.len();
    let first = v.platform.cpu_cluster[start];
    let order: Vec<usize> = (0..nc).map(|k| (first + k) % nc).collect();
    let mut scan = Scan::new(t);
    let allowed = v.tasks[t.p as usize].allowed;
    for (k, &ci) in order.iter().enumerate() {
        let cl = &v.platform.clusters[ci];
        for &i in &cl.cpus {
            if allowed & (1u64 << i) == 0 || is_iso(i) {
                continue;
            }
            scan.visit_cpu(v, t, i, start_cap);
        }
        let next = &v.platform.clusters[order[(k + 1) % nc]];
        let next_higher = v.capacity_orig(cl.cpus[0]) < v.capacity_orig(next.cpus[0]);
        if scan.stops_after_group(t, next_higher) {
            break;
        }
    }
    scan.choose(v, t, is_iso(prev))
}

/// find_best_target()'s locals that outlive one CPU of the scan: the best candidate of
/// each of the kernel's cases so far, and the fallbacks.
struct Scan {
    /// minimised, or maximised for a boosted prefer_idle task (from 0 then)
    target_capacity: u64,
    best_idle_cstate: i64,
    best_idle_cpu: Option<usize>,
    best_idle_cuml: u64,
    target_max_spare: u64,
    target_cpu: Option<usize>,
    min_wake_util: u64,
    best_active_util: u64,
    best_active_cuml: u64,
    best_active_cpu: Option<usize>,
    most_spare_wake: i64,
    most_spare_cpu: Option<usize>,
    /// case C's candidates, which is_packing_eligible() reads
    active_cpus: u32,
    /// the first CPU the task may run on, for a task whose prev_cpu is isolated
    isolated_candidate: Option<usize>,
}

/// A CPU the task fits, as the scan sees it with the task on it.
struct Cand {
    cpu: usize,
    cap: u64,
    wake_util: u64,
    new_util: u64,
    new_util_cuml: u64,
    spare: u64,
    idle: bool,
    /// the idle state's index, i64::MAX for a busy CPU
    idx: i64,
}

impl Scan {
    fn new(t: &Task) -> Scan {
        Scan {
            target_capacity: if t.prefer_idle && t.boosted { 0 } else { u64::MAX },
            best_idle_cstate: i64::MAX,
            best_idle_cpu: None,
            best_idle_cuml: u64::MAX,
            target_max_spare: 0,
            target_cpu: None,
            min_wake_util: u64::MAX,
            best_active_util: u64::MAX,
            best_active_cuml: u64::MAX,
            best_active_cpu: None,
            most_spare_wake: 0,
            most_spare_cpu: None,
            active_cpus: 0,
            isolated_candidate: None,
        }
    }

    /// The loop body for one allowed, unisolated CPU: the most-spare fallback counts every
    /// such CPU, the cases only those that hold the task at capacity_orig.
    fn visit_cpu(&mut self, v: &SchedView, t: &Task, i: usize, start_cap: u64) {
        self.isolated_candidate.get_or_insert(i);
        let cap = v.capacity_orig(i);
        let wake_util = cpu_util_without(v, t, i);
        let spare_wake = cap as i64 - wake_util as i64;
        if spare_wake > self.most_spare_wake {
            (self.most_spare_wake, self.most_spare_cpu) = (spare_wake, Some(i));
        }
        // WALT's cumulative window demand is not modelled: the CPU's load stands for it
        let new_util_cuml = wake_util + t.min_util;
        let new_util = (wake_util + t.util_est).max(t.min_util);
        if new_util > cap {
            return;
        }
        let idle = v.idle_cpu(i);
        let c = Cand {
            cpu: i,
            cap,
            wake_util,
            new_util,
            new_util_cuml,
            spare: cap - new_util,
            idle,
            idx: if idle { idle_idx(v, i) } else { i64::MAX },
        };
        if t.prefer_idle {
            self.case_a_latency_sensitive(v, t, &c);
            return;
        }
        if c.cap < start_cap {
            return;
        }
        if c.idle {
            self.case_b_idle_cpu(t.prev, &c);
            return;
        }
        if t.running {
            return; // only idle CPUs for a task that is running (a new one)
        }
        self.case_c_active_cpu(&c);
    }

    /// Case A, a prefer_idle task: an idle CPU of the smallest capacity (biggest when
    /// boosted), the shallowest state first (A.1); failing any, the busy CPU that holds
    /// the task at its current frequency with the most spare capacity (A.2); failing that,
    /// the least utilised (A.3), for latency over energy.
    fn case_a_latency_sensitive(&mut self, v: &SchedView, t: &Task, c: &Cand) {
        if c.idle {
            if (t.boosted && c.cap < self.target_capacity) || (!t.boosted && c.cap > self.target_capacity) {
                return;
            }
            if c.cap == self.target_capacity && self.best_idle_cstate <= c.idx {
                return;
            }
            (self.target_capacity, self.best_idle_cstate, self.best_idle_cpu) = (c.cap, c.idx, Some(c.cpu));
            return;
        }
        if self.best_idle_cpu.is_some() {
            return;
        }
        if capacity_curr_of(v, c.cpu) > c.new_util && c.spare > self.target_max_spare {
            (self.target_max_spare, self.target_cpu) = (c.spare, Some(c.cpu));
            return;
        }
        if self.target_cpu.is_some() {
            return;
        }
        if c.wake_util > self.min_wake_util || c.new_util > self.best_active_util {
            return;
        }
        if c.new_util == self.best_active_util && c.new_util_cuml > self.best_active_cuml {
            return;
        }
        (
            self.min_wake_util,
            self.best_active_util,
            self.best_active_cuml,
            self.best_active_cpu,
        ) = (c.wake_util, c.new_util, c.new_util_cuml, Some(c.cpu));
    }

    /// Case B, another task on an idle CPU: the smallest capacity, the shallowest state
    /// first (a deep small CPU over a shallow big one), on a tie of states prev_cpu, then
    /// the least cumulative demand; the backup to case C's packing.
    fn case_b_idle_cpu(&mut self, prev: usize, c: &Cand) {
        if c.cap >= self.target_capacity && self.best_idle_cstate < c.idx {
            return;
        }
        if self.best_idle_cstate == c.idx
            && (self.best_idle_cpu == Some(prev) || (c.cpu != prev && c.new_util_cuml > self.best_idle_cuml))
        {
            return;
        }
        (
            self.target_capacity,
            self.best_idle_cstate,
            self.best_idle_cuml,
            self.best_idle_cpu,
        ) = (c.cap, c.idx, c.new_util_cuml, Some(c.cpu));
    }

    /// Case C, another task on a busy CPU: pack on the smallest capacity, spread within it
    /// to the most spare capacity so that the CPUs run at a low OPP.
    fn case_c_active_cpu(&mut self, c: &Cand) {
        self.active_cpus += 1;
        if c.cap >= self.target_capacity && c.spare < self.target_max_spare {
            return;
        }
        (self.target_max_spare, self.target_capacity, self.target_cpu) = (c.spare, c.cap, Some(c.cpu));
    }

    /// After a group (cluster): an unboosted task other than prefer_idle stops after the
    /// first group that gave it a candidate; a prefer_idle task with an idle CPU, or a
    /// boosted one with any candidate, goes on only toward higher capacity (boosted) or
    /// lower (not).
    fn stops_after_group(&self, t: &Task, next_higher: bool) -> bool {
        if !t.prefer_idle && !t.boosted && (self.target_cpu.is_some() || self.best_idle_cpu.is_some()) {
            return true;
        }
        if (t.prefer_idle && self.best_idle_cpu.is_some())
            || (t.boosted && (self.best_idle_cpu.is_some() || self.target_cpu.is_some()))
        {
            return t.boosted != next_higher;
        }
        false
    }

    /// The policy after the scan: a prefer_idle task takes its idle CPU, then its busy
    /// ones; another takes its busy CPU with the idle one as backup (the idle one instead
    /// when packing is not allowed); the CPU with the most spare capacity when none; the
    /// caller compares energies against prev_cpu, so neither may be prev_cpu.
    fn choose(mut self, v: &SchedView, t: &Task, prev_isolated: bool) -> Fbt {
        let prev = t.prev;
        let prefer_idle = t.prefer_idle;
        if self.best_idle_cpu.is_some()
            && !packing_eligible(v, t, self.target_cpu, self.active_cpus, self.best_idle_cstate)
        {
            self.target_cpu = self.best_idle_cpu.take();
        }
        if prefer_idle && self.best_idle_cpu.is_some() {
            return Fbt {
                target: self.best_idle_cpu,
                backup: None,
                prev_fastpath: false,
            };
        }
        let mut target_cpu = self.target_cpu;
        let mut backup = None;
        let second = if prefer_idle {
            self.best_active_cpu
        } else {
            self.best_idle_cpu
        };
        if target_cpu.is_none() {
            target_cpu = second;
        } else {
            backup = second;
        }
        if target_cpu.is_none() {
            if let Some(m) = self.most_spare_cpu {
                // an active migration uses an idle CPU only
                if !(t.running && !v.idle_cpu(m)) {
                    target_cpu = Some(m);
                }
            }
        }
        if backup == target_cpu || backup == Some(prev) {
            backup = None;
        }
        if target_cpu == Some(prev) {
            target_cpu = backup.take();
        }
        if target_cpu.is_none() && prev_isolated {
            target_cpu = self.isolated_candidate;
        }
        Fbt {
            target: target_cpu,
            backup,
            prev_fastpath: false,
        }
    }
}

/// is_packing_eligible(): a boosted task spreads; with one active candidate the task packs
/// there only if that CPU, with it and the upmigrate margin, stays within its current
/// capacity; an idle CPU in no idle state is taken rather than packing.
fn packing_eligible(v: &SchedView, t: &Task, target: Option<usize>, active_cpus: u32, best_idle_cstate: i64) -> bool {
    if t.boosted || best_idle_cstate == -1 {
        return false;
    }
    if active_cpus != 1 {
        return true;
    }
    let Some(c) = target else { return true };
    let estimated = (cpu_util(v, c) + t.util_est) * t.margin_up / 1024;
    estimated <= capacity_curr_of(v, c)
}

/// find_energy_efficient_cpu() of msm-4.14 for a fair wakeup or fork: the CPU, and the
/// number of candidates whose energy was estimated (0: none). `energies` gives the energy
/// with the task on each candidate, over the pds holding one of the mask's CPUs
/// (EnergyModel::energy_with_task_on).
pub fn find_energy_efficient_cpu(
    v: &SchedView,
    p: TaskId,
    prev: usize,
    fork: bool,
    energies: impl FnOnce(&[usize], u64) -> Vec<u64>,
    counters: &mut FbtCounters,
) -> (usize, u32) {
    counters.calls += 1;
    let t = Task::read(v, p, prev, fork);
    let rc = RootCaps::read(v);
    let allowed = v.tasks[p as usize].allowed;
    if let Some(this) = v.wake.this_cpu.filter(|_| v.wake.sync) {
        // bias_to_this_cpu(): allowed there and fitting it at its maximum
        if allowed & (1u64 << this) != 0 && task_fits_max(v, &rc, &t, this) {
            counters.sync_wakeups += 1;
            return (this, 0);
        }
    }
    if (allowed & ((1u64 << v.nr_cpus()) - 1)).count_ones() < 2 {
        return (prev, 0);
    }
    let fbt = find_best_target(v, &rc, &t, v.isolated);
    if fbt.prev_fastpath {
        counters.prev_fastpath += 1;
        return (prev, 0);
    }
    let Some(target) = fbt.target else {
        counters.no_target += 1;
        return (prev, 0);
    };
    let prev_iso = v.isolated & (1u64 << prev) != 0;
    // WALT counts a waking task in no CPU's load: prev_cpu's test adds it
    let delta = if fork { 0 } else { t.walt_util };
    if t.prefer_idle && v.idle_cpu(target) {
        counters.prefer_idle += 1;
        return (target, 0);
    }
    if t.boosted || cpu_overutilized_with(v, &t, prev, delta) || !task_fits_max(v, &rc, &t, prev) || prev_iso {
        counters.target_taken += 1;
        return (target, 0);
    }
    // select_energy_cpu_idx(): prev, target and backup over the groups holding them
    counters.energy_compared += 1;
    let mut cands = vec![prev, target];
    cands.extend(fbt.backup);
    let mask = cands.iter().fold(0u64, |m, &c| m | 1u64 << c);
    let energies = energies(&cands, mask);
    let margin = (energies[0] >> 6) as i64;
    let (mut best, mut best_delta) = (0usize, 0i64);
    for (k, &e) in energies.iter().enumerate().skip(1) {
        let mut d = e as i64 - energies[0] as i64;
        if d.abs() < margin {
            d = 0;
        }
        if d < best_delta {
            (best, best_delta) = (k, d);
        }
    }
    if best != 0 {
        counters.energy_moves += 1;
    }
    (cands[best], cands.len() as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policies::WakeKind;
    use serde_json::json;

    #[test]
    fn capacity_margins_from_the_migrate_percentages() {
        // the sysctl handler: 1024 * 100 / 95 and / 85, integer division (the kernel's
        // defaults before any write are 1078 and 1205, "~5 %" and "~15 %")
        assert_eq!(capacity_margin(95.0), 1077);
        assert_eq!(capacity_margin(85.0), 1204);
    }

    /// test-4-3-1 (little 0-3 capacity 256 at 400/800 MHz, 30/80 mW; mid 4-6 768; big 7
    /// 1024) under msm-4.14 with WALT: task 0 ("P", in `group`) asleep with WALT demand
    /// `demand` on `prev`; CPU c in `busy` runs a filler task with WALT load `busy[c]`; the
    /// others are idle in WFI (state 0, as a run starts). Returns eas's choice for P's
    /// wakeup and its counters.
    fn place(
        demand: u64,
        prev: usize,
        busy: &[(usize, u64)],
        group: &str,
        knobs: serde_json::Value,
    ) -> (usize, serde_json::Value) {
        let mut s = crate::testutils::waking_task_on_three_clusters("msm-4.14", group, prev, knobs);
        let walt = s.walt.as_mut().unwrap();
        walt.tasks[0].demand_scaled = demand;
        for &(c, load) in busy {
            walt.rqs[c].cumulative_runnable_avg_scaled = load;
        }
        for &(c, _) in busy {
            s.rqs[c].curr = Some(1 + c as TaskId);
        }
        // the root domain overutilized: mainline would take the CFS path, msm-4.14 does not
        s.overutilized = true;
        let mut pol = crate::testutils::eas_policy(&s);
        let cpu = pol.select_task_rq(&s.sched_view(), 0, prev, WakeKind::Wakeup);
        let counters = pol
            .counters()
            .into_iter()
            .find(|(k, _)| *k == "find_best_target")
            .map(|(_, v)| v)
            .unwrap();
        (cpu, counters)
    }

    #[test]
    fn the_target_is_compulsory_when_prev_cpu_would_be_overutilized() {
        // P (demand 100) on little CPU 1 (load 150); CPU 0 busy at 50, CPUs 2-3 idle.
        // start_cpu(): P fits little at its maximum (256 * 1024 > 100 * 1077), CPU 0.
        // Case C: CPU 0 new_util 150, spare 106 -> target; CPU 1 spare 6 < 106. Case B:
        // CPU 2, then CPU 3 (same state, same load: the later one) -> best idle; two
        // active CPUs, so packing is allowed: target 0, backup 3. prev_cpu with P:
        // 256 * 1024 = 262144 < (150 + 100) * 1077 = 269250, overutilized: CPU 0 without
        // comparing energies, though the root domain is overutilized
        let (cpu, c) = place(100, 1, &[(0, 50), (1, 150)], "root", json!({}));
        assert_eq!(cpu, 0, "{c}");
        assert_eq!(c["target_without_energy"], 1, "{c}");
    }

    #[test]
    fn the_energy_comparison_takes_the_idle_backup_at_a_lower_opp() {
        // as above with prev_cpu's load 100: (100 + 100) * 1077 = 215400 < 262144, not
        // overutilized, so prev (1), target (0) and backup (3) are compared on the little
        // pd (cost = P * f_max / f: 60 000 at 400 MHz, 80 000 at 800 MHz; state = the
        // lowest covering 1.25 * 800 MHz * max_util / 256):
        //   on 1: utils 50/200/0/0, max 200 -> 781 MHz -> 800: 80 000 * 250 / 256 = 78 125
        //   on 0: 150/100/0/0, max 150 -> 586 MHz -> 800: 78 125 (no saving)
        //   on 3: 50/100/0/100, max 100 -> 391 MHz -> 400: 60 000 * 250 / 256 = 58 593
        // the dead zone is 78 125 >> 6 = 1 220; CPU 3 saves 19 532
        let (cpu, c) = place(100, 1, &[(0, 50), (1, 100)], "root", json!({}));
        assert_eq!(cpu, 3, "{c}");
        assert_eq!(
            (c["energy_compared"].as_u64(), c["energy_moves"].as_u64()),
            (Some(1), Some(1)),
            "{c}"
        );
    }

    #[test]
    fn an_idle_prev_cpu_of_start_cpus_capacity_is_taken_at_once() {
        // prev_cpu 2 is idle (in WFI, state 0 <= 1) and little, start_cpu()'s capacity
        let (cpu, c) = place(100, 2, &[(0, 50), (1, 100)], "root", json!({}));
        assert_eq!(cpu, 2, "{c}");
        assert_eq!(c["prev_cpu_fastpath"], 1, "{c}");
    }

    #[test]
    fn prefer_idle_takes_the_smallest_idle_cpu_or_climbs_when_boosted() {
        // every CPU idle in WFI (state 0, where a run starts): a prefer_idle task whose
        // prev_cpu (mid CPU 5) is not of start_cpu()'s capacity (little) takes the first
        // little CPU (case A: equal states keep the first, and the scan stops before the
        // bigger mid cluster)
        let k = json!({"schedtune.top-app.prefer_idle": 1.0});
        let (cpu, _) = place(100, 5, &[], "top-app", k);
        assert_eq!(cpu, 0);
        // boosted: start_cpu() is the middle capacity (P's boosted util, 100 + 924 / 10 =
        // 192, fits it), so an idle mid prev_cpu is taken by the fast path...
        let k = json!({"schedtune.top-app.prefer_idle": 1.0, "schedtune.top-app.boost": 10.0});
        let (cpu, c) = place(100, 5, &[], "top-app", k.clone());
        assert_eq!((cpu, c["prev_cpu_fastpath"].as_u64()), (5, Some(1)), "{c}");
        // ...and from little CPU 0 case A keeps mid CPU 4, climbs to the bigger idle CPU 7
        // and stops before little
        let (cpu, c) = place(100, 0, &[], "top-app", k);
        assert_eq!(cpu, 7, "{c}");
    }
}
