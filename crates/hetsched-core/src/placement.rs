//! Wakeup and fork placement, behind one interface (`select_task_rq` of the kernel's
//! sched_class). The kernel-faithful EAS path (find_energy_efficient_cpu, select_idle_sibling,
//! cpupri fitness) is a later policy; this module holds the interface and the baseline.

use crate::energy_model::{EnergyModel, FeecInput};
use crate::sim::{SchedView, TaskId};
use crate::workload::Policy;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WakeKind {
    /// wake_up_new_task (SD_BALANCE_FORK)
    Fork,
    /// try_to_wake_up (WF_TTWU)
    Wakeup,
}

pub trait Placement: Send {
    fn name(&self) -> &'static str;
    /// Returns the CPU the task is enqueued on; must be in the task's affinity.
    fn select_task_rq(&mut self, v: &SchedView, p: TaskId, prev_cpu: usize, kind: WakeKind) -> usize;
    /// Statistics for result.json's counters.
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
    /// At every tick, migrations the policy makes itself (GTS's up/down migration of
    /// running and queued tasks, gts.rs); the engine carries them out.
    fn tick(&mut self, _v: &SchedView) -> Vec<crate::balance::Migration> {
        Vec::new()
    }
}

/// The baseline of issue 2 for fair tasks (RT tasks take the kernel's select_task_rq_rt):
/// prev_cpu if it is idle and the task fits it
/// (`fits_capacity(task_util_est, capacity_orig)`, the 80% margin that asymmetric kernels
/// apply in select_idle_sibling; a new task has no prev_cpu and skips this step), else the
/// idle CPU
/// with the most spare capacity (capacity_orig - cpu_util_cfs), else the CPU with the
/// fewest runnable tasks and then the lowest cfs load_avg. For an RT task, prev_cpu unless
/// it runs an RT task of equal or higher priority, else the CPU running the lowest
/// priority (idle < fair < lower RT), a cpupri search without capacity fitness. Ties go
/// to the lowest CPU number.
pub struct Baseline;

impl Placement for Baseline {
    fn name(&self) -> &'static str {
        "baseline"
    }

    fn select_task_rq(&mut self, v: &SchedView, p: TaskId, prev_cpu: usize, kind: WakeKind) -> usize {
        let task = &v.tasks[p as usize];
        let allowed = task.allowed;
        let ok = |c: usize| allowed & (1u64 << c) != 0;
        if task.policy != Policy::Other {
            return crate::rt::select_task_rq_rt(v, p, prev_cpu);
        }
        let fits = |c: usize| fits_capacity(v.task_util_est(p), v.capacity_orig(c));
        if kind == WakeKind::Wakeup && ok(prev_cpu) && v.idle_cpu(prev_cpu) && fits(prev_cpu) {
            return prev_cpu;
        }
        let idle_best = (0..v.nr_cpus()).filter(|&c| ok(c) && v.idle_cpu(c)).max_by_key(|&c| {
            (
                v.capacity_orig(c).saturating_sub(v.cpu_util_cfs(c)),
                std::cmp::Reverse(c),
            )
        });
        if let Some(c) = idle_best {
            return c;
        }
        (0..v.nr_cpus())
            .filter(|&c| ok(c))
            .min_by_key(|&c| (v.rqs[c].nr_running(), v.rqs[c].cfs.avg.load_avg, c))
            .unwrap_or(prev_cpu)
    }
}

/// The kernel's select_task_rq_fair() without EAS (v6.12), for the `cfs` and `eas`
/// schedulers. A woken task's waker is the CPU its timer fires on, its prev_cpu, so
/// wake_affine does not apply and the target is prev_cpu; `select_idle_sibling` then
/// takes the target or the task's recent_used_cpu if idle and the task fits it
/// (asym_fits_cpu), else on asymmetric systems `select_idle_capacity`: from the target,
/// wrapping, the first idle CPU the task fits, else the idle CPU that fits best and is
/// biggest, else the target. On symmetric systems the first idle CPU from the target. New
/// tasks take the baseline's idle-CPU choice (the kernel's slow path,
/// sched_balance_find_dst_cpu, looks for the idlest group and CPU; this is its effect on
/// a flat topology) and RT tasks `select_task_rq_rt`.
#[derive(Default)]
pub struct SelectIdleSibling {
    /// p->recent_used_cpu, per task
    recent_used_cpu: Vec<usize>,
}

impl SelectIdleSibling {
    fn asym(v: &SchedView) -> bool {
        let caps = v.platform.clusters.iter().map(|c| c.capacity_orig);
        caps.clone().min() != caps.max()
    }

    /// select_idle_capacity(): the kernel's -1 is None.
    fn select_idle_capacity(v: &SchedView, p: TaskId, target: usize) -> Option<usize> {
        let n = v.nr_cpus();
        let allowed = v.tasks[p as usize].allowed;
        let task_util = v.task_util_est(p);
        let [umin, umax] = v.tasks[p as usize].uclamp;
        let (mut best_cpu, mut best_fits, mut best_cap) = (None, 0i32, 0u64);
        for k in 0..n {
            let cpu = (target + k) % n;
            if allowed & (1u64 << cpu) == 0 || !v.idle_cpu(cpu) {
                continue;
            }
            let mut cap = v.capacity_of(cpu);
            let fits = v.util_fits_cpu(task_util, umin, umax, cpu);
            if fits > 0 {
                return Some(cpu);
            }
            if fits < 0 {
                cap = v.capacity_orig(cpu); // get_actual_cpu_capacity()
            }
            if fits < best_fits || (fits == best_fits && cap > best_cap) {
                (best_cpu, best_fits, best_cap) = (Some(cpu), fits, cap);
            }
        }
        best_cpu
    }

    /// select_idle_sibling(p, prev, target) with target = prev.
    pub fn select_idle_sibling(&mut self, v: &SchedView, p: TaskId, prev: usize) -> usize {
        let n = v.nr_cpus();
        let allowed = v.tasks[p as usize].allowed;
        let ok = |c: usize| allowed & (1u64 << c) != 0;
        if self.recent_used_cpu.len() < v.tasks.len() {
            self.recent_used_cpu.resize(v.tasks.len(), usize::MAX);
        }
        let target = prev;
        let asym = Self::asym(v);
        let task_util = v.task_util_est(p);
        let [umin, umax] = v.tasks[p as usize].uclamp;
        // asym_fits_cpu()
        let fits = |c: usize| !asym || v.util_fits_cpu(task_util, umin, umax, c) > 0;
        if ok(target) && v.idle_cpu(target) && fits(target) {
            return target;
        }
        let recent = std::mem::replace(&mut self.recent_used_cpu[p as usize], prev);
        if recent < n && recent != prev && ok(recent) && v.idle_cpu(recent) && fits(recent) {
            return recent;
        }
        let fallback = if ok(target) {
            target
        } else {
            allowed.trailing_zeros() as usize
        };
        if asym {
            return Self::select_idle_capacity(v, p, target).unwrap_or(fallback);
        }
        (0..n)
            .map(|k| (target + k) % n)
            .find(|&c| ok(c) && v.idle_cpu(c))
            .unwrap_or(fallback)
    }
}

impl Placement for SelectIdleSibling {
    fn name(&self) -> &'static str {
        "select_task_rq_fair"
    }

    fn select_task_rq(&mut self, v: &SchedView, p: TaskId, prev_cpu: usize, kind: WakeKind) -> usize {
        if v.tasks[p as usize].policy != Policy::Other || kind == WakeKind::Fork {
            return Baseline.select_task_rq(v, p, prev_cpu, kind);
        }
        self.select_idle_sibling(v, p, prev_cpu)
    }
}

/// Paper 001's legacy CFS on the switcher's virtual CPUs (§II-A: "CFS uses the loads on
/// the virtual CPUs for assigning and moving tasks"): a new task goes to the CPU of the
/// least load (eq. 1, the queued weights; ties to the lowest number), as the v3.4
/// find_idlest_cpu() does with weighted_cpuload(); a waking task to select_idle_sibling().
#[derive(Default)]
pub struct SwitcherLegacy {
    sis: SelectIdleSibling,
}

impl Placement for SwitcherLegacy {
    fn name(&self) -> &'static str {
        "switcher-legacy"
    }

    fn select_task_rq(&mut self, v: &SchedView, p: TaskId, prev_cpu: usize, kind: WakeKind) -> usize {
        let task = &v.tasks[p as usize];
        if task.policy != Policy::Other {
            return crate::rt::select_task_rq_rt(v, p, prev_cpu);
        }
        if kind == WakeKind::Fork {
            let allowed = task.allowed;
            return (0..v.nr_cpus())
                .filter(|&c| allowed & (1u64 << c) != 0)
                .min_by_key(|&c| (v.rqs[c].cfs.load_weight, c))
                .unwrap_or(prev_cpu);
        }
        self.sis.select_idle_sibling(v, p, prev_cpu)
    }
}

/// fits_capacity(): util must stay below ~80% of the capacity (util * 1280 < cap * 1024).
#[inline]
pub fn fits_capacity(util: u64, capacity: u64) -> bool {
    util * 1280 < capacity * 1024
}

/// EAS on the wakeup path (select_task_rq_fair, v6.12): while the root domain is not
/// overutilized, a waking fair task goes where find_energy_efficient_cpu() says; otherwise,
/// and for new tasks and RT tasks, the baseline's capacity-aware idle search decides
/// (the kernel's select_idle_sibling/select_idle_capacity is a later refinement).
pub struct Eas {
    em: EnergyModel,
    inp: FeecInput,
    fallback: SelectIdleSibling,
    pub feec_calls: u64,
    pub feec_moves: u64,
    /// vendor knobs (paper 003, vendor.rs): how often each fired
    pub vendor: crate::vendor::VendorCounters,
}

impl Eas {
    pub fn new(em: EnergyModel) -> Self {
        Eas {
            em,
            inp: FeecInput::default(),
            fallback: SelectIdleSibling::default(),
            feec_calls: 0,
            feec_moves: 0,
            vendor: Default::default(),
        }
    }

    // --- vendor (paper 003) hook: the eas wakeup path with the vendor knobs (vendor.rs) ---
    fn select_vendor(
        &mut self,
        v: &SchedView,
        p: TaskId,
        prev_cpu: usize,
        kind: WakeKind,
        vk: &crate::vendor::VendorKnobs,
    ) -> usize {
        use crate::vendor;
        let iso = if vk.isolation { v.isolated } else { 0 };
        if vk.rt && vendor::is_rt(v, p) {
            self.vendor.rt_placement += 1;
            return vendor::select_task_rq_rt(v, p, prev_cpu, iso);
        }
        let cpu = if kind == WakeKind::Wakeup && v.tasks[p as usize].policy == Policy::Other && !v.overutilized {
            self.fill(v, p, prev_cpu);
            if iso != 0 && self.inp.allowed & !iso != 0 {
                self.inp.allowed &= !iso;
            }
            if vk.fastpath && vendor::prev_cpu_fastpath(v, &self.inp, vk, p) {
                self.vendor.prev_cpu_fastpath += 1;
                return prev_cpu;
            }
            let mut r = self.em.find_energy_efficient_cpu(&self.inp);
            if vk.margins {
                let mut pct = std::mem::take(&mut self.em.fit_pct);
                vendor::fit_pct(v, prev_cpu, vk, &mut pct);
                self.em.fit_pct = pct;
                let with_margins = self.em.find_energy_efficient_cpu(&self.inp);
                self.em.fit_pct.clear();
                if with_margins.cpu != r.cpu {
                    self.vendor.migration_margins += 1;
                }
                r = with_margins;
            }
            self.feec_calls += 1;
            if r.cpu != prev_cpu {
                self.feec_moves += 1;
            }
            let mut cpu = r.cpu;
            if vk.packing && v.idle_cpu(cpu) {
                if let Some(c) = vendor::task_packing(&self.em, v, &self.inp, vk, p, cpu) {
                    self.vendor.task_packing += 1;
                    cpu = c;
                }
            }
            cpu
        } else {
            self.fallback.select_task_rq(v, p, prev_cpu, kind)
        };
        let out = vendor::avoid_isolated(v, p, cpu, iso);
        if out != cpu {
            self.vendor.isolation_redirects += 1;
        }
        out
    }
    // --- end vendor hook ---

    fn fill(&mut self, v: &SchedView, p: TaskId, prev: usize) {
        let n = v.nr_cpus();
        let inp = &mut self.inp;
        inp.util_avg.clear();
        inp.runnable_avg.clear();
        inp.util_est.clear();
        inp.util_rt.clear();
        inp.rt_runnable.clear();
        inp.capacity_orig.clear();
        inp.capacity.clear();
        for c in 0..n {
            let rq = &v.rqs[c];
            inp.util_avg.push(rq.cfs.avg.util_avg);
            inp.runnable_avg.push(rq.cfs.avg.runnable_avg);
            inp.util_est.push(rq.cfs.util_est);
            inp.util_rt.push(rq.avg_rt.util_avg);
            inp.rt_runnable.push(!rq.rt_queue.is_empty());
            inp.capacity_orig.push(v.capacity_orig(c));
            inp.capacity.push(v.capacity_of(c));
        }
        inp.rq_uclamp.clear();
        inp.rq_uclamp_idle.clear();
        for c in 0..n {
            inp.rq_uclamp.push(v.rqs[c].uclamp.value);
            inp.rq_uclamp_idle.push(v.rqs[c].uclamp.idle);
        }
        let t = &v.tasks[p as usize];
        inp.uclamp_used = v.uclamp_used;
        inp.p_uclamp = if v.uclamp_used { t.uclamp } else { [0, 1024] };
        inp.task_util = t.se.avg.util_avg;
        inp.task_ewma = t.se.avg.ewma();
        inp.task_queued = false;
        inp.prev_cpu = prev;
        inp.allowed = t.allowed;
    }
}

impl Placement for Eas {
    fn name(&self) -> &'static str {
        "eas"
    }

    fn select_task_rq(&mut self, v: &SchedView, p: TaskId, prev_cpu: usize, kind: WakeKind) -> usize {
        let vk = crate::vendor::VendorKnobs::read(v);
        if vk.any() {
            return self.select_vendor(v, p, prev_cpu, kind, &vk); // vendor (paper 003)
        }
        if kind == WakeKind::Wakeup && v.tasks[p as usize].policy == Policy::Other && !v.overutilized {
            self.fill(v, p, prev_cpu);
            let r = self.em.find_energy_efficient_cpu(&self.inp);
            self.feec_calls += 1;
            if r.cpu != prev_cpu {
                self.feec_moves += 1;
            }
            return r.cpu;
        }
        self.fallback.select_task_rq(v, p, prev_cpu, kind)
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let vc = &self.vendor;
        vec![
            ("feec_calls", self.feec_calls),
            ("feec_moves", self.feec_moves),
            ("vendor.migration_margins", vc.migration_margins),
            ("vendor.task_packing", vc.task_packing),
            ("vendor.prev_cpu_fastpath", vc.prev_cpu_fastpath),
            ("vendor.rt_placement", vc.rt_placement),
            ("vendor.isolation_redirects", vc.isolation_redirects),
        ]
    }
}

/// The placement of a scheduler, and for `eas` whether EAS can run on this platform and
/// governor (sched_is_eas_possible: asymmetric CPU capacities and schedutil everywhere;
/// otherwise the kernel runs without it, and so does the engine, saying why).
pub fn make_placement(
    scheduler: &str,
    platform: &crate::platform::Platform,
    governor: &str,
    legacy: bool,
) -> (Box<dyn Placement>, Option<std::result::Result<(), String>>) {
    match scheduler {
        "baseline" => return (Box::new(Baseline), None),
        "cfs" => return (Box::new(SelectIdleSibling::default()), None),
        "gts" => return (Box::new(crate::gts::Gts::new(platform)), None),
        // issue 5: placement and balancing as cfs; the slice / the neighbour pull are in sim
        "fa-cfs" | "hcs-balance" | "hcs-td" => return (Box::new(SelectIdleSibling::default()), None),
        // paper 001 (switcher.rs): legacy is CFS on the virtual CPUs; util-aware places
        // fair tasks itself (Fig. 3, in sim.rs's wakeup hook) and RT tasks as cfs does
        "legacy" | "util-aware" => return (Box::new(SwitcherLegacy::default()), None),
        _ => {}
    }
    let mut em = EnergyModel::from_platform(platform);
    if legacy {
        em.set_legacy();
    }
    let fallback = || -> Box<dyn Placement> { Box::new(SelectIdleSibling::default()) };
    if !em.asymmetric() {
        return (
            fallback(),
            Some(Err(
                "no asymmetric CPU capacities (no SD_ASYM_CPUCAPACITY domain)".into()
            )),
        );
    }
    if governor != "schedutil" {
        return (
            fallback(),
            Some(Err(format!("the governor is {governor}, EAS needs schedutil"))),
        );
    }
    (Box::new(Eas::new(em)), Some(Ok(())))
}

pub const SCHEDULERS: &[(&str, &str)] = &[
    (
        "cfs",
        "the kernel without EAS: select_task_rq_fair (select_idle_sibling / select_idle_capacity), CFS and RT classes, sched_balance_rq",
    ),
    (
        "eas",
        "cfs plus Energy Aware Scheduling on wakeup: find_energy_efficient_cpu (v6.12) while the root domain is not overutilized",
    ),
    (
        "gts",
        "Global Task Scheduling (ARM/Linaro big.LITTLE MP, HMP): tracked-load up/down migration between clusters at 700/256 of 1024 at wakeup, fork and tick; sched_balance_rq inside each cluster",
    ),
    (
        "baseline",
        "issue 2's simple placement (prev if idle and the task fits, else the idle CPU with most spare capacity, else least loaded) and pull balancer with misfit migration",
    ),
    // --- issue 5 ---
    (
        "fa-cfs",
        "cfs with FA-CFS (paper 002): on a migration between CPUs at different frequencies the next slice is S' = (f_src/f_dst) S, its vruntime charged with the weight scaled alike",
    ),
    (
        "hcs-balance",
        "cfs plus paper 004's balanced core assignment: at every tick each CPU pulls from the next CPU (the last wraps to the first) the queued tasks whose last timeslice ran there (knob hcs_balance_enabled)",
    ),
    // --- issue 6 ---
    (
        "hcs-td",
        "cfs plus paper 004 §5's self-tuning scheduler: per CPU a benefit function of (NCP, cache affinity, miss rate) learned by TD(0); every hcs_td.interval_ms the queued task migration with the largest margin in eq. 4 is taken",
    ),
    (
        "legacy",
        "paper 001's baseline on a switcher platform (NAME:switcher): cfs's placement and balancing on the virtual CPUs, blind to the backing core",
    ),
    (
        "util-aware",
        "paper 001's Fig. 3 on a switcher platform: at each enqueue level loads while busiest > 1.25 x idlest, then place by expected utilisation (util_aware.estimator a|b); no periodic or newidle balancing",
    ),
];
