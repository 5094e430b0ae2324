//! The wakeup path of the Pixel 6 and 6a (gs101) on Android 13: the 5.10 GKI's
//! select_task_rq_fair() first calls the vendor hook of Google's scheduler module
//! (`drivers/soc/google/vh/kernel/sched/fair.c`, rvh_select_task_rq_fair_pixel_mod(), as the
//! android13 raviole tree carries it: CodeLinaro-mirror/la_kernel_google-modules_raviole-device;
//! read for this model and described in our own words), and returns the CPU it names.
//!
//! The hook, for every fair placement:
//! 1. a sync wakeup (WF_SYNC) goes to the waker's CPU when the waker runs alone there and
//!    the task fits it (task_fits_capacity());
//! 2. an idle prev_cpu whose idle state exits within C1_EXIT_LATENCY (1 µs: WFI), and which
//!    the task fits, keeps the task;
//! 3. a wakeup (not a fork) takes the module's find_energy_efficient_cpu():
//!    - a *prefer_idle* task (its vendor group's prefer_idle, nice 0 or better, uclamp.max
//!      1024) takes, per perf domain, the idle CPU in the shallowest idle state; with no
//!      idle CPU anywhere, the least *important* CPU (the sum of the rq's uclamp min and
//!      max below the task's own), else the CPU of most spare capacity the task fits;
//!    - another task takes, per perf domain, the busy CPU of most spare capacity whose
//!      current capacity holds it with the 1.25 margin (packing), else the CPU of most
//!      spare capacity that holds it, a shallower idle state winning a tie;
//!    - the candidates are taken in the module's order (idle and fitting, idle, unimportant
//!      and fitting, unimportant, packing, spare capacity); with more than one, the lowest
//!      energy wins, a shallower idle state then prev_cpu or the waking CPU breaking ties;
//!      with none, the CPU of most spare capacity among those whose util fits.
//!
//! When the hook names no CPU (a fork, or no CPU fits) the GKI's own path runs (5.10:
//! record_wakee(), find_energy_efficient_cpu() unless overutilized, else the CFS path).
//!
//! A task's vendor group is its workload group (`stune`: root, foreground, background,
//! top-app, rt, named sys, fg, bg, ta, rt by the module); the groups' prefer_idle and
//! uclamp requests are `vendor_sched.<group>.*` knobs, which gs101's device init sets as
//! init.gs101.rc writes them on Android 13. A task's effective clamps are its request
//! restricted to its group's (uclamp_tg_restrict_pixel_mod()), +1 on a user-set uclamp.min
//! at or below the group's, and at most 968 for a task of nice above 0 (the bucket just
//! below the top with the GKI's 20 uclamp buckets).
//!
//! Differences: binder's prefer_idle and uclamp inheritance, ADPF (prefer_fit), the group
//! throttles and their group_overutilized() test (1024 by default), preferred_idle_mask
//! (all CPUs by default), the Pixel Energy Model's wakeup energy of a CPU leaving a deep
//! idle state and the vendor idle balancer are not modelled; the rq's clamps aggregate in
//! the engine's 5 buckets, not the GKI's 20.

use crate::core::SchedView;
use crate::sched::TaskId;
use crate::workload::Policy;

/// The module's names of the workload groups (schedtune::GROUPS: root, foreground,
/// background, top-app, rt), as /proc/vendor_sched names them.
pub const GROUP_NAMES: [&str; 5] = ["sys", "fg", "bg", "ta", "rt"];

/// C1_EXIT_LATENCY (sched_priv.h), in µs: the exit latency of WFI.
const C1_EXIT_LATENCY_US: u64 = 1;
/// DEFAULT_IMPRATANCE_THRESHOLD: a CPU running unclamped tasks (uclamp min 0 + max 1024).
const DEFAULT_IMPORTANCE_THRESHOLD: u64 = 1024;
/// DEF_UTIL_THRESHOLD: sched_capacity_margin, 1.25 in 1/1024.
const CAPACITY_MARGIN: u64 = 1280;
/// UCLAMP_BUCKET_DELTA · (UCLAMP_BUCKETS − 1) − 1 with the GKI's 20 buckets: 51 · 19 − 1.
const LOW_PRIO_UCLAMP_MAX: u64 = 968;

/// The vendor groups' properties and each workload task's group.
#[derive(Debug, Clone)]
pub struct VendorGroups {
    pub prefer_idle: [bool; 5],
    /// uc_req[UCLAMP_MIN], uc_req[UCLAMP_MAX] of each group
    pub uclamp: [[u64; 2]; 5],
    task_group: Vec<usize>,
}

impl VendorGroups {
    /// The groups of `task_group` (workload task index -> group), their properties from the
    /// `vendor_sched.<group>.*` knobs.
    pub fn new(task_group: Vec<usize>, knobs: &crate::features::Knobs) -> VendorGroups {
        let get = |g: &str, what: &str| knobs.get_named(&format!("vendor_sched.{g}.{what}")).unwrap_or(0.0);
        let mut vg = VendorGroups {
            prefer_idle: [false; 5],
            uclamp: [[0, 1024]; 5],
            task_group,
        };
        for (i, g) in GROUP_NAMES.iter().enumerate() {
            vg.prefer_idle[i] = get(g, "prefer_idle") > 0.0;
            vg.uclamp[i] = [get(g, "uclamp_min") as u64, get(g, "uclamp_max") as u64];
        }
        vg
    }

    /// The group of workload task `spec_index` (a forked task is in its template's:
    /// vh_dup_task_struct_pixel_mod() copies the parent's).
    pub fn group(&self, spec_index: usize) -> usize {
        self.task_group.get(spec_index).copied().unwrap_or(0)
    }

    /// uclamp_tg_restrict_pixel_mod(): the request `req` of a task of group `g` held within
    /// the group's clamps; a user-set uclamp.min at or below the group's gains 1 (it then
    /// counts as more important than the group's other tasks); a task of nice above 0 has
    /// at most LOW_PRIO_UCLAMP_MAX.
    pub fn restrict(&self, g: usize, req: [u64; 2], user_min: bool, low_prio: bool) -> [u64; 2] {
        let [lo, hi] = self.uclamp[g];
        let clamp = |v: u64| v.max(lo).min(hi);
        let mut min = clamp(req[0]);
        if user_min && req[0] <= lo && min < 1024 {
            min += 1;
        }
        let mut max = clamp(req[1]);
        if low_prio {
            max = max.min(LOW_PRIO_UCLAMP_MAX);
        }
        [min, max]
    }
}

impl VendorGroups {
    /// A task's effective clamps from its request (restrict()).
    pub fn restrict_task(&self, t: &crate::sched::Task) -> [u64; 2] {
        let low_prio = t.policy == Policy::Other && t.nice > 0;
        self.restrict(
            self.group(t.spec_index as usize),
            t.uclamp_req,
            t.uclamp_min_user,
            low_prio,
        )
    }
}

/// How the hook placed each fair task (`counters.pixel_sched`).
#[derive(Debug, Clone, Default)]
pub struct PixelCounters {
    pub calls: u64,
    pub sync_wakeups: u64,
    pub prev_idle: u64,
    /// the module's find_energy_efficient_cpu() ran
    pub feec: u64,
    pub idle: u64,
    pub unimportant: u64,
    pub packing: u64,
    pub spare_capacity: u64,
    pub energy_compared: u64,
    /// the hook named no CPU: the GKI's own path placed the task
    pub gki_path: u64,
}

impl PixelCounters {
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "calls": self.calls,
            "sync_wakeups": self.sync_wakeups,
            "prev_cpu_idle": self.prev_idle,
            "feec": self.feec,
            "idle_cpu": self.idle,
            "unimportant_cpu": self.unimportant,
            "packing_cpu": self.packing,
            "spare_capacity_cpu": self.spare_capacity,
            "energy_compared": self.energy_compared,
            "gki_path": self.gki_path,
        })
    }
}

/// The CPUs that start the middle and biggest capacities (MID_CAPACITY_CPU,
/// MAX_CAPACITY_CPU: gs101's 4 and 6); HIGH_CAPACITY_CPU is the middle one's.
struct Caps {
    mid: usize,
    max: usize,
}

impl Caps {
    fn read(v: &SchedView) -> Caps {
        let n = v.nr_cpus();
        let min_cap = (0..n).map(|c| v.capacity_orig(c)).min().unwrap_or(0);
        let max_cap = (0..n).map(|c| v.capacity_orig(c)).max().unwrap_or(0);
        let max = (0..n).find(|&c| v.capacity_orig(c) == max_cap).unwrap_or(0);
        let mid = (0..n).find(|&c| v.capacity_orig(c) > min_cap).unwrap_or(max);
        Caps { mid, max }
    }
}

/// What the hook reads of the task being placed.
struct Task {
    p: TaskId,
    /// task_util(p) and task_util_est(p), the task's PELT synced to its sleep (the GKI's
    /// select_task_rq_fair() calls sync_entity_load_avg() before the hook)
    util: u64,
    util_est: u64,
    /// _task_util_est(): the util_est ewma alone
    ewma: u64,
    uclamp: [u64; 2],
    prefer_idle: bool,
    /// (p->prio <= DEFAULT_PRIO ? uclamp_min : 0) + uclamp_max
    importance: u64,
    allowed: u64,
}

impl Task {
    fn read(v: &SchedView, vg: &VendorGroups, p: TaskId) -> Task {
        let t = &v.tasks[p as usize];
        let avg = v.sync_entity_load_avg(p);
        let uclamp = t.uclamp;
        let default_prio_or_better = t.nice <= 0;
        let prefer_idle =
            vg.prefer_idle[vg.group(t.spec_index as usize)] && default_prio_or_better && uclamp[1] == 1024;
        Task {
            p,
            util: avg.util_avg,
            util_est: avg.util_avg.max(avg.ewma()),
            ewma: avg.ewma(),
            uclamp,
            prefer_idle,
            importance: if default_prio_or_better { uclamp[0] } else { 0 } + uclamp[1],
            allowed: t.allowed,
        }
    }
}

/// cpu_is_idle(): idle and not being woken (no SCHED_IDLE tasks in the engine).
fn cpu_is_idle(v: &SchedView, cpu: usize) -> bool {
    v.idle_cpu(cpu)
}

/// idle_get_state()->exit_latency of an idle CPU in µs (cpuidle's, entry + exit), None
/// while it is in no state.
fn exit_latency_us(v: &SchedView, cpu: usize) -> Option<u64> {
    let s = v.rqs[cpu].idle_state?;
    let states = &v.platform.clusters[v.platform.cpu_cluster[cpu]].idle_states;
    states.get(s).map(|st| st.exit_latency_ns / 1000)
}

/// cpu_util(): max(util_avg, util_est) of the rq, at most capacity_of().
fn cpu_util(v: &SchedView, cpu: usize) -> u64 {
    let c = &v.rqs[cpu].cfs;
    c.avg.util_avg.max(c.util_est).min(v.capacity_of(cpu))
}

/// cpu_util_without(): the rq's util less the task's where it last ran (a waking task is
/// in no util_est sum), at most `max`.
fn cpu_util_without(v: &SchedView, t: &Task, cpu: usize, max: u64) -> u64 {
    let task = &v.tasks[t.p as usize];
    if cpu != task.cpu || !task.se.attached {
        return cpu_util(v, cpu).min(max);
    }
    let c = &v.rqs[cpu].cfs;
    c.avg.util_avg.saturating_sub(t.util).max(c.util_est).min(max)
}

/// cpu_util_next(cpu, p, cpu): the rq's util with the task on it.
fn cpu_util_with(v: &SchedView, t: &Task, cpu: usize) -> u64 {
    let task = &v.tasks[t.p as usize];
    let c = &v.rqs[cpu].cfs;
    let util = if task.cpu == cpu && task.se.attached {
        c.avg.util_avg
    } else {
        c.avg.util_avg + t.util
    };
    util.max(c.util_est + t.ewma).min(v.capacity_of(cpu))
}

/// capacity_curr_of(): capacity_orig at the cluster's current frequency.
fn capacity_curr_of(v: &SchedView, cpu: usize) -> u64 {
    v.capacity_orig(cpu) * v.clusters[v.platform.cpu_cluster[cpu]].freq_scale >> 10
}

/// task_fits_capacity(p, cpu, sync_boost): a CPU of the biggest capacity holds anything;
/// a sync wakeup from a CPU of the middle capacity or above does not fit the smallest;
/// otherwise util_fits_cpu() of the task's util_est under its clamps.
fn task_fits_capacity(v: &SchedView, caps: &Caps, t: &Task, cpu: usize, sync_boost: bool) -> bool {
    if cpu >= caps.max {
        return true;
    }
    if sync_boost && cpu < caps.mid {
        return false;
    }
    fits(v, t.util_est, t.uclamp[0], t.uclamp[1], cpu)
}

/// The module's util_fits_cpu() (sched_priv.h): a bool, false where the util fits but a
/// uclamp.min above the CPU's capacity cannot be met (the engine's -1).
fn fits(v: &SchedView, util: u64, umin: u64, umax: u64, cpu: usize) -> bool {
    v.util_fits_cpu(util, umin, umax, cpu) == 1
}

/// rvh_select_task_rq_fair_pixel_mod(): the CPU for fair task `p`, or None for the GKI's
/// own path. `energy(cpu)` is compute_energy() with the task on `cpu`, over every perf
/// domain. Also returns how many energies it estimated (the placement's cost).
pub fn select_task_rq_fair(
    v: &SchedView,
    vg: &VendorGroups,
    p: TaskId,
    prev: usize,
    wakeup: bool,
    energy: impl FnMut(usize) -> u64,
    counters: &mut PixelCounters,
) -> (Option<usize>, u32) {
    debug_assert_eq!(v.tasks[p as usize].policy, Policy::Other);
    counters.calls += 1;
    let t = Task::read(v, vg, p);
    let caps = Caps::read(v);
    let this_cpu = v.wake.this_cpu.unwrap_or(prev);
    let sync = v.wake.sync;
    if sync
        && v.rqs[this_cpu].nr_running() == 1
        && t.allowed & (1u64 << this_cpu) != 0
        && task_fits_capacity(v, &caps, &t, this_cpu, false)
    {
        counters.sync_wakeups += 1;
        return (Some(this_cpu), 0);
    }
    let sync_boost = sync && this_cpu >= caps.mid;
    if v.isolated & (1u64 << prev) == 0
        && t.allowed & (1u64 << prev) != 0
        && cpu_is_idle(v, prev)
        && task_fits_capacity(v, &caps, &t, prev, sync_boost)
        && exit_latency_us(v, prev).is_some_and(|l| l <= C1_EXIT_LATENCY_US)
    {
        counters.prev_idle += 1;
        return (Some(prev), 0);
    }
    if !wakeup {
        counters.gki_path += 1;
        return (None, 0);
    }
    counters.feec += 1;
    let (cpu, estimated) = find_energy_efficient_cpu(v, &caps, &t, prev, this_cpu, sync_boost, energy, counters);
    if cpu.is_none() {
        counters.gki_path += 1;
    }
    (cpu, estimated)
}

/// A perf domain's picks (the module's pd_* locals).
struct PdPick {
    best_idle: Option<(usize, u64)>,
    unimportant: Option<(usize, u64, u64)>,
    least_importance: u64,
    packing: Option<(usize, u64)>,
    max_spare: Option<(usize, u64, u64)>,
    task_fits: bool,
}

impl PdPick {
    fn new() -> PdPick {
        PdPick {
            best_idle: None,
            unimportant: None,
            least_importance: 1024 << 2,
            packing: None,
            max_spare: None,
            task_fits: false,
        }
    }
}

/// What the search reads of one CPU.
struct CpuSample {
    i: usize,
    is_idle: bool,
    importance: u64,
    spare_cap: u64,
    task_fits: bool,
    exit_lat: u64,
    util_fits: bool,
}

/// The search's state across perf domains: the candidate masks, the backup and the flags
/// that, once set in one domain, hold for the domains after it.
#[derive(Default)]
struct Search {
    idle_fit: Vec<usize>,
    idle_unfit: Vec<usize>,
    unimportant_fit: Vec<usize>,
    unimportant_unfit: Vec<usize>,
    packing: Vec<usize>,
    max_spare_cap: Vec<usize>,
    target_max_spare_cap: u64,
    most_spare_cap_cpu: Option<usize>,
    idle_target_found: bool,
    importance_target_found: bool,
}

impl Search {
    /// A CPU for a prefer_idle task: the shallowest idle CPU of the domain; before any idle
    /// CPU is found anywhere, the least important CPU, else the backup of most spare
    /// capacity (a tie clearing the others when the task's util_est is odd).
    fn prefer_idle_cpu(&mut self, pick: &mut PdPick, c: &CpuSample, t: &Task, prev: usize, this_cpu: usize) {
        let i = c.i;
        if c.is_idle {
            // an even waking CPU keeps the first of a tie, an odd one the last, and prev_cpu
            // wins one
            match pick.best_idle {
                Some((_, lat)) if c.exit_lat > lat => {}
                Some((b, lat)) if c.exit_lat == lat => {
                    if i == prev || (b != prev && this_cpu % 2 == 1) {
                        pick.best_idle = Some((i, lat));
                    }
                }
                _ => pick.best_idle = Some((i, c.exit_lat)),
            }
            self.idle_target_found = true;
        }
        if self.idle_target_found {
            return;
        }
        if t.importance > c.importance {
            match pick.unimportant {
                Some((_, imp, spare)) if c.importance == imp => {
                    if c.spare_cap >= spare {
                        pick.unimportant = Some((i, imp, c.spare_cap));
                        self.importance_target_found = true;
                    }
                }
                _ if c.importance < pick.least_importance => {
                    pick.least_importance = c.importance;
                    pick.unimportant = Some((i, c.importance, c.spare_cap));
                    self.importance_target_found = true;
                }
                _ => {}
            }
        }
        if self.importance_target_found || !c.util_fits {
            return;
        }
        if c.spare_cap > self.target_max_spare_cap {
            self.target_max_spare_cap = c.spare_cap;
            self.max_spare_cap.clear();
            self.max_spare_cap.push(i);
        } else if c.spare_cap == self.target_max_spare_cap {
            if t.util_est % 2 == 1 {
                self.max_spare_cap.clear();
            }
            self.max_spare_cap.push(i);
        }
    }

    /// A CPU for another task: the busy CPU that packs it (vendor_sched_npi_packing, on:
    /// unimportant, its current capacity holding it with the task by the 1.25 margin), else
    /// the CPU of most spare capacity, a shallower idle state winning a tie.
    #[allow(clippy::too_many_arguments)]
    fn other_cpu(&mut self, pick: &mut PdPick, c: &CpuSample, v: &SchedView, t: &Task, prev: usize, this_cpu: usize) {
        let i = c.i;
        if !c.util_fits {
            return;
        }
        if c.spare_cap >= self.target_max_spare_cap {
            self.target_max_spare_cap = c.spare_cap;
            self.most_spare_cap_cpu = Some(i);
        }
        if !c.task_fits || c.spare_cap < t.util_est {
            return;
        }
        if !c.is_idle
            && c.importance <= DEFAULT_IMPORTANCE_THRESHOLD
            && c.spare_cap > pick.packing.map_or(0, |p| p.1)
            && capacity_curr_of(v, i) >= (cpu_util_with(v, t, i) + v.rqs[i].avg_rt.util_avg) * CAPACITY_MARGIN >> 10
        {
            pick.packing = Some((i, c.spare_cap));
        }
        if pick.packing.is_some() {
            return;
        }
        match pick.max_spare {
            Some((_, spare, _)) if c.spare_cap < spare => {}
            Some((b, spare, lat)) if c.spare_cap == spare => {
                if c.exit_lat < lat {
                    pick.max_spare = Some((i, spare, c.exit_lat));
                } else if c.exit_lat == lat && (i == prev || (b != prev && this_cpu % 2 == 1)) {
                    pick.max_spare = Some((i, spare, lat));
                }
            }
            _ => pick.max_spare = Some((i, c.spare_cap, c.exit_lat)),
        }
    }

    /// The domain's picks into the masks: its idle and unimportant CPUs as fitting or not
    /// (by the task's fit to the domain), its packing and spare-capacity CPUs.
    fn close_domain(&mut self, pick: PdPick) {
        if let Some((c, _)) = pick.best_idle {
            if pick.task_fits {
                self.idle_fit.push(c);
            } else {
                self.idle_unfit.push(c);
            }
        }
        if let Some((c, _, _)) = pick.unimportant {
            if pick.task_fits {
                self.unimportant_fit.push(c);
            } else {
                self.unimportant_unfit.push(c);
            }
        }
        if let Some((c, _)) = pick.packing {
            self.packing.push(c);
        }
        if let Some((c, _, _)) = pick.max_spare {
            self.max_spare_cap.push(c);
        }
    }
}

/// The module's find_energy_efficient_cpu() (5.10 form, described at the top).
#[allow(clippy::too_many_arguments)]
fn find_energy_efficient_cpu(
    v: &SchedView,
    caps: &Caps,
    t: &Task,
    prev: usize,
    this_cpu: usize,
    sync_boost: bool,
    energy: impl FnMut(usize) -> u64,
    counters: &mut PixelCounters,
) -> (Option<usize>, u32) {
    let n = v.nr_cpus();
    let mut search = Search::default();
    // rd->pd lists the perf domains in the reverse of their creation (build_perf_domains()
    // prepends each): the biggest CPUs' first
    for pd in v.platform.clusters.iter().rev() {
        let mut pick = PdPick::new();
        // per domain: a CPU whose clamps are idle keeps the values the CPU before it set
        let (mut util_min, mut util_max) = (t.uclamp[0], t.uclamp[1]);
        for &i in &pd.cpus {
            if i >= n || t.allowed & (1u64 << i) == 0 || v.isolated & (1u64 << i) != 0 {
                continue;
            }
            let capacity = v.capacity_of(i);
            let is_idle = cpu_is_idle(v, i);
            let rq_uclamp = v.rqs[i].uclamp.value;
            if v.uclamp_used && !v.rqs[i].uclamp.idle {
                util_min = t.uclamp[0].max(rq_uclamp[0]);
                util_max = t.uclamp[1].max(rq_uclamp[1]);
            }
            let c = CpuSample {
                i,
                is_idle,
                importance: rq_uclamp[0] + rq_uclamp[1],
                spare_cap: capacity - cpu_util_without(v, t, i, capacity),
                task_fits: task_fits_capacity(v, caps, t, i, sync_boost),
                exit_lat: if is_idle { exit_latency_us(v, i).unwrap_or(0) } else { 0 },
                util_fits: fits(v, cpu_util(v, i), util_min, util_max, i),
            };
            pick.task_fits = c.task_fits;
            if t.prefer_idle {
                search.prefer_idle_cpu(&mut pick, &c, t, prev, this_cpu);
            } else {
                search.other_cpu(&mut pick, &c, v, t, prev, this_cpu);
            }
        }
        search.close_domain(pick);
    }
    let Search {
        idle_fit,
        idle_unfit,
        unimportant_fit,
        unimportant_unfit,
        packing,
        max_spare_cap,
        most_spare_cap_cpu,
        ..
    } = search;
    // the search order; an unfit choice takes the biggest CPU (cpumask_last()); candidates
    // are a cpumask, visited in CPU order
    let (mut candidates, kind): (Vec<usize>, &mut u64) = if !idle_fit.is_empty() {
        (idle_fit, &mut counters.idle)
    } else if let Some(&c) = idle_unfit.iter().max() {
        (vec![c], &mut counters.idle)
    } else if !unimportant_fit.is_empty() {
        (unimportant_fit, &mut counters.unimportant)
    } else if let Some(&c) = unimportant_unfit.iter().max() {
        (vec![c], &mut counters.unimportant)
    } else if !packing.is_empty() {
        (packing, &mut counters.packing)
    } else {
        (max_spare_cap, &mut counters.spare_capacity)
    };
    candidates.sort_unstable();
    candidates.dedup();
    match candidates.len() {
        0 => return (most_spare_cap_cpu, 0),
        1 => {
            *kind += 1;
            return (Some(candidates[0]), 0);
        }
        _ => *kind += 1,
    }
    counters.energy_compared += 1;
    (
        lowest_energy(v, &candidates, prev, this_cpu, energy),
        candidates.len() as u32,
    )
}

/// The energy comparison over the candidates (visited in CPU order): the lowest
/// compute_energy(); at equal energy the shallower idle state, then prev_cpu, then the
/// waking CPU.
fn lowest_energy(
    v: &SchedView,
    candidates: &[usize],
    prev: usize,
    this_cpu: usize,
    mut energy: impl FnMut(usize) -> u64,
) -> Option<usize> {
    let mut best: Option<(usize, u64, u64)> = None;
    for &i in candidates {
        let lat = if cpu_is_idle(v, i) {
            exit_latency_us(v, i).unwrap_or(0)
        } else {
            0
        };
        let e = energy(i);
        best = match best {
            None => Some((i, e, lat)),
            Some((_, be, _)) if e < be => Some((i, e, lat)),
            Some((c, be, bl)) if e == be => {
                if lat < bl || (lat == bl && (i == prev || (c != prev && i == this_cpu))) {
                    Some((i, e, lat))
                } else {
                    Some((c, be, bl))
                }
            }
            keep => keep,
        };
    }
    best.map(|b| b.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policies::WakeKind;
    use crate::sched::WakeCtx;
    use crate::Sim;
    use serde_json::json;

    /// test-4-3-1 (little 0-3 capacity 256, WFI 1 µs and cluster-sleep 300 µs; mid 4-6
    /// 768; big 7 1024) under pixel-5.10: task 0 ("P", in `group`, util_avg `util`) asleep,
    /// last on CPU `prev`; each (cpu, util) of `busy` runs a filler with that rq util; the
    /// others idle in WFI unless `deep` names them (cluster-sleep). Every cluster at f_max.
    fn sim(
        group: &str,
        util: u64,
        prev: usize,
        busy: &[(usize, u64)],
        deep: &[usize],
        knobs: serde_json::Value,
    ) -> Sim {
        let mut s = crate::testutils::waking_task_on_three_clusters("pixel-5.10", group, prev, knobs);
        s.tasks[0].se.avg.util_avg = util;
        for c in 0..8 {
            s.rqs[c].idle_state = Some(0);
        }
        for &(c, u) in busy {
            s.rqs[c].curr = Some(1 + c as TaskId);
            s.rqs[c].cfs.avg.util_avg = u;
            s.rqs[c].idle_state = None;
        }
        for &c in deep {
            s.rqs[c].idle_state = Some(1);
        }
        for cl in s.clusters.iter_mut() {
            cl.freq_scale = 1024;
        }
        s
    }

    /// The hook's answer for P's wakeup, with `energy` standing for compute_energy().
    fn place(s: &Sim, energy: impl FnMut(usize) -> u64) -> (Option<usize>, PixelCounters) {
        let v = s.sched_view();
        let mut c = PixelCounters::default();
        let prev = s.tasks[0].cpu;
        let (cpu, _) = select_task_rq_fair(&v, v.pixel.unwrap(), 0, prev, true, energy, &mut c);
        (cpu, c)
    }

    fn no_energy(_: usize) -> u64 {
        panic!("no energy comparison expected")
    }

    #[test]
    fn restrict_holds_the_request_within_the_group() {
        let knobs = json!({"vendor_sched.ta.uclamp_min": 1, "vendor_sched.bg.uclamp_max": 512});
        let s = sim("top-app", 10, 0, &[], &[], knobs);
        let vg = s.vendor_groups.as_deref().unwrap();
        // top-app (3): floor 1; a request of 0 set by nobody -> 1; one of 62 stays 62
        assert_eq!(vg.restrict(3, [0, 1024], false, false), [1, 1024]);
        assert_eq!(vg.restrict(3, [62, 1024], true, false), [62, 1024]);
        // a user's 1, at the group's floor, gains 1 (more important than its group)
        assert_eq!(vg.restrict(3, [1, 1024], true, false), [2, 1024]);
        // background (2): ceiling 512; nice above 0 caps uclamp.max at 51 * 19 - 1 = 968
        assert_eq!(vg.restrict(2, [0, 1024], false, false), [0, 512]);
        assert_eq!(vg.restrict(0, [0, 1024], false, true), [0, 968]);
        // the task's own: P in top-app, no request -> [1, 1024]
        assert_eq!(s.tasks[0].uclamp, [1, 1024]);
    }

    #[test]
    fn an_idle_prev_cpu_in_wfi_keeps_the_task_one_in_a_deep_state_does_not() {
        // P (util 50, root group: not prefer_idle) last on little CPU 1, idle in WFI:
        // exit 1 µs <= C1_EXIT_LATENCY, 50 fits 256 (50 * 1280 < 256 * 1024) -> CPU 1
        let s = sim("root", 50, 1, &[(0, 100)], &[], json!({}));
        let (cpu, c) = place(&s, no_energy);
        assert_eq!((cpu, c.prev_idle), (Some(1), 1));
        // in cluster-sleep (300 µs) it goes to the search: little's CPU of most spare
        // capacity that is busy and holds P (packing) is CPU 0 (256 >= (100 + 50) * 1.25);
        // mid and big are idle (no packing there, their CPUs of most spare capacity 4 and
        // 7): packing {0} alone -> CPU 0 without energies
        let s = sim("root", 50, 1, &[(0, 100)], &[1, 2, 3], json!({}));
        let (cpu, c) = place(&s, no_energy);
        assert_eq!((cpu, c.prev_idle, c.packing), (Some(0), 0, 1));
    }

    #[test]
    fn prefer_idle_takes_the_shallowest_idle_cpu_of_each_cluster_then_the_lowest_energy() {
        // P top-app, prefer_idle. prev CPU 0 busy; little: 1 in cluster-sleep (300 µs), 2 in
        // WFI, 3 busy; mid: 4 in WFI, 5-6 busy; big 7 busy. Per cluster the shallowest idle
        // CPU: 2 and 4; P fits both -> two candidates, the lower energy wins.
        let knobs = json!({"vendor_sched.ta.prefer_idle": 1});
        let busy = [(0, 100), (3, 100), (5, 300), (6, 300), (7, 300)];
        let s = sim("top-app", 50, 0, &busy, &[1], knobs.clone());
        let (cpu, c) = place(&s, |c| if c == 2 { 90 } else { 100 });
        assert_eq!((cpu, c.idle, c.energy_compared), (Some(2), 1, 1));
        let (cpu, _) = place(&s, |c| if c == 4 { 90 } else { 100 });
        assert_eq!(cpu, Some(4));
        // equal energies and exit latencies: neither is prev_cpu (0) or the waking CPU
        // (prev, no waker) -> the first stays
        let (cpu, _) = place(&s, |_| 100);
        assert_eq!(cpu, Some(2));
        // a nice-5 task is not prefer_idle (p->prio above DEFAULT_PRIO): it takes a busy CPU
        // that packs it, one per cluster: little 0 (spare 156 >= 50; 256 >= 150 * 1.25; 3
        // is no roomier), mid 5 (768 >= 437.5), big 7 (1024 >= 437.5); energies c -> 0
        let mut s = sim("top-app", 50, 0, &busy, &[1], knobs);
        s.tasks[0].nice = 5;
        let (cpu, c) = place(&s, |c| c as u64);
        assert_eq!((cpu, c.packing, c.energy_compared), (Some(0), 1, 1));
    }

    #[test]
    fn packing_anywhere_beats_spare_capacity_and_energies_decide_between_packing_cpus() {
        // P root, util 50, prev 0. Little 0 busy 100, mid 4 busy 300, big 7 busy 900.
        // Packing: 0 (256 >= 187.5), 4 (768 >= 437.5), not 7 (1024 < 1187.5) -> {0, 4}
        let busy = [(0, 100), (4, 300), (7, 900)];
        let s = sim("root", 50, 0, &busy, &[], json!({}));
        let (cpu, c) = place(&s, |c| if c == 4 { 400 } else { 500 });
        assert_eq!((cpu, c.packing, c.energy_compared), (Some(4), 1, 1));
        // little at half speed: its current capacity 128 < 187.5, so no packing there; mid's
        // CPU 4 is the only packing CPU and is taken without energies
        let mut s = sim("root", 50, 0, &busy, &[], json!({}));
        s.clusters[0].freq_scale = 512;
        let (cpu, c) = place(&s, no_energy);
        assert_eq!((cpu, c.packing, c.energy_compared), (Some(4), 1, 0));
    }

    #[test]
    fn a_sync_wakeup_goes_to_the_waker_running_alone() {
        // the waker runs alone on mid CPU 5 (nr_running 1, rq util 600) and P (50) fits
        // 768: CPU 5, whatever the CPU's own util
        let mut s = sim("root", 50, 1, &[(5, 600)], &[1], json!({}));
        s.rqs[5].cfs.nr_running = 1;
        s.wake_ctx = WakeCtx {
            this_cpu: Some(5),
            sync: true,
        };
        let (cpu, c) = place(&s, no_energy);
        assert_eq!((cpu, c.sync_wakeups), (Some(5), 1));
        // without WF_SYNC prev (1) is in cluster-sleep and the search decides. No packing:
        // CPU 5 would need (600 + 50) * 1.25 = 812 > 768. Most spare capacity per cluster,
        // an odd waking CPU (5) taking the later of a tie in the same state: little 3 (0, 2,
        // 3 in WFI; 1 deeper), mid 6 (4 and 6 idle), big 7; energies c -> CPU 3
        s.wake_ctx = WakeCtx {
            this_cpu: Some(5),
            sync: false,
        };
        let (cpu, c) = place(&s, |c| c as u64);
        assert_eq!(
            (cpu, c.sync_wakeups, c.spare_capacity, c.energy_compared),
            (Some(3), 0, 1, 1)
        );
    }

    #[test]
    fn eas_under_pixel_5_10_counts_the_hook_and_falls_back_on_a_fork() {
        let s = sim("root", 50, 1, &[(0, 100)], &[], json!({}));
        let mut pol = crate::testutils::eas_policy(&s);
        assert_eq!(pol.select_task_rq(&s.sched_view(), 0, 1, WakeKind::Wakeup), 1);
        // a fork: the prev check fails on a busy parent CPU (0), then the GKI's own path
        pol.select_task_rq(&s.sched_view(), 0, 0, WakeKind::Fork);
        let c = pol.counters().into_iter().find(|(k, _)| *k == "pixel_sched").unwrap().1;
        assert_eq!(
            (c["calls"].as_u64(), c["prev_cpu_idle"].as_u64(), c["gki_path"].as_u64()),
            (Some(2), Some(1), Some(1))
        );
    }
}
