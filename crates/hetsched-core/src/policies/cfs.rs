//! The `cfs` policy: the kernel's `select_task_rq_fair()` without EAS (v6.12,
//! kernel/sched/fair.c) with the kernel's load balancer, `sched_balance_rq`
//! (balance_fair.rs). Policies that add to CFS (fa-cfs, hcs-balance, hcs-td) place as it
//! does, through [`SelectIdleSibling`].

use super::baseline::select_task_rq_baseline;
use super::{PolicyInfo, Requires, SchedPolicy, WakeKind};
use crate::core::{SchedView, TaskId};
use crate::workload::Policy;

pub static INFO: PolicyInfo = PolicyInfo {
    name: "cfs",
    summary: "the kernel without EAS: select_task_rq_fair (select_idle_sibling / select_idle_capacity), CFS and RT classes, sched_balance_rq",
    source: "Linux v6.12 kernel/sched/fair.c: select_task_rq_fair, select_idle_sibling, select_idle_capacity; sched_balance_rq",
    knobs: &["sched_latency_ns", "sched_min_granularity_ns", "sched_wakeup_granularity_ns", "sched_migration_cost_ns", "balance.busy_factor", "fair.eevdf", "fair.delay_dequeue", "fair.preempt_short"],
    requires: Requires::NONE,
    differences: "WF_SYNC is set only where a workload posts with sem_post_sync (binder's calls, hackbench's pipes and sockets); the engine's other task-to-task wakeups are futex operations, which pass none. select_idle_cpu scans the whole LLC (no SIS_UTIL scan limit); no per-CPU kthreads, SCHED_IDLE or cluster (CLS) domains. New tasks take the idle CPU with the most spare capacity (the effect of sched_balance_find_dst_cpu on a flat topology). One flat cfs_rq per CPU (no task groups). The fair class is the kernel profile's (mainline-6.12: EEVDF with DELAY_DEQUEUE and PREEMPT_SHORT; android-4.19: CFS as v6.5 has it) unless `fair.eevdf` is 0 or 1; delayed tasks are not migrated by the balancer. The load balancer has no SMT, NUMA or asym packing (balance_fair.rs names the rest).",
    status: "The default scheduler. Its mechanisms are documented with worked examples in docs/mechanisms/.",
    controller: None,
    build: |_| Box::new(Cfs::default()),
};

/// imbalance_pct of the MC and PKG domains (sd_init(), kernel/sched/topology.c: 117 for
/// every level that is neither SMT nor NUMA). wake_affine_weight() biases prev_cpu by half
/// of the excess (WA_BIAS): 100 + 17 / 2 = 108.
const SD_IMBALANCE_PCT: u64 = 117;

/// A task's (or a CPU's idle task's) wakee_flips bookkeeping (struct task_struct).
#[derive(Debug, Clone, Copy, Default)]
struct Wakee {
    last_wakee: Option<TaskId>,
    wakee_flips: u32,
    /// wakee_flip_decay_ts, in jiffies
    decay_ts: u64,
}

/// How often the wakeup path's affine logic decided (result.json `counters`).
#[derive(Debug, Clone, Copy, Default)]
pub struct WakeAffineCounters {
    /// wake_wide() said the waker and wakee are in a 1:many relation (no affine wakeup)
    pub wake_wide: u64,
    /// wake_affine() chose the waking CPU over prev_cpu (sd->ttwu_move_affine)
    pub wake_affine: u64,
}

/// The kernel's select_task_rq_fair() without EAS (v6.12), for the `cfs` and `eas`
/// schedulers and those built on `cfs`.
///
/// A wakeup (WF_TTWU) first records the wakee on the waker (`current` of the CPU running
/// try_to_wake_up(): the waking task, the task a timer interrupt interrupted, or that
/// CPU's idle task), then, unless wake_wide() sees a 1:many relation, walks the waking
/// CPU's domains to the first that spans prev_cpu (every MC and PKG domain has
/// SD_WAKE_AFFINE) and lets wake_affine() choose between the waking CPU and prev_cpu as
/// the target. select_idle_sibling() then takes the target, prev_cpu or the task's
/// recent_used_cpu if idle, sharing the target's cache and fitting the task
/// (asym_fits_cpu, on the task's util synced to now), else on asymmetric systems
/// `select_idle_capacity` over every CPU (sd_asym_cpucapacity spans them all), else the
/// first idle CPU of the target's LLC. New tasks take the baseline's idle-CPU choice (the
/// kernel's slow path, sched_balance_find_dst_cpu, looks for the idlest group and CPU; this
/// is its effect on a flat topology) and RT tasks `select_task_rq_rt`.
#[derive(Default)]
pub struct SelectIdleSibling {
    /// p->recent_used_cpu, per task
    recent_used_cpu: Vec<usize>,
    /// wakee_flips of each task
    wakee: Vec<Wakee>,
    /// wakee_flips of each CPU's idle task (the waker of a timer taken on an idle CPU)
    idle_wakee: Vec<Wakee>,
    pub counters: WakeAffineCounters,
}

impl SelectIdleSibling {
    fn asym(v: &SchedView) -> bool {
        let caps = v.platform.clusters.iter().map(|c| c.capacity_orig);
        caps.clone().min() != caps.max()
    }

    /// select_idle_capacity(): the kernel's -1 is None.
    fn select_idle_capacity(v: &SchedView, p: TaskId, task_util: u64, target: usize) -> Option<usize> {
        let n = v.nr_cpus();
        let allowed = v.tasks[p as usize].allowed;
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

    fn grow(&mut self, v: &SchedView) {
        if self.recent_used_cpu.len() < v.tasks.len() {
            self.recent_used_cpu.resize(v.tasks.len(), usize::MAX);
            self.wakee.resize(v.tasks.len(), Wakee::default());
        }
        if self.idle_wakee.len() < v.nr_cpus() {
            self.idle_wakee.resize(v.nr_cpus(), Wakee::default());
        }
    }

    /// The CPU running try_to_wake_up(): the waker's, the timer interrupt's, or prev_cpu
    /// where the engine does not model it.
    fn this_cpu(v: &SchedView, prev: usize) -> usize {
        v.wake.this_cpu.unwrap_or(prev)
    }

    fn current(&mut self, v: &SchedView, this_cpu: usize) -> &mut Wakee {
        match v.rqs[this_cpu].curr {
            Some(c) => &mut self.wakee[c as usize],
            None => &mut self.idle_wakee[this_cpu],
        }
    }

    /// record_wakee(): the waker's flips halve once a second (HZ jiffies after the last
    /// decay) and count one more each time it wakes a different task than last time.
    pub fn record_wakee(&mut self, v: &SchedView, p: TaskId, prev: usize) {
        self.grow(v);
        let tick = v.knobs.derived.tick_ns.max(1);
        let (jiffies, hz) = (v.now / tick, 1_000_000_000 / tick);
        let cur = self.current(v, Self::this_cpu(v, prev));
        if jiffies > cur.decay_ts + hz {
            cur.wakee_flips >>= 1;
            cur.decay_ts = jiffies;
        }
        if cur.last_wakee != Some(p) {
            cur.last_wakee = Some(p);
            cur.wakee_flips += 1;
        }
    }

    /// wake_wide(): the waker and the wakee switch partners often enough, against the LLC's
    /// size, that one of them serves many others: spread rather than pull to the waker.
    pub fn wake_wide(&mut self, v: &SchedView, p: TaskId, prev: usize) -> bool {
        self.grow(v);
        let this_cpu = Self::this_cpu(v, prev);
        let factor = v.llc_size(this_cpu);
        let mut master = self.current(v, this_cpu).wakee_flips;
        let mut slave = self.wakee[p as usize].wakee_flips;
        if master < slave {
            std::mem::swap(&mut master, &mut slave);
        }
        !(slave < factor || master < slave * factor)
    }

    /// task_h_load() of a task on `cpu`'s root cfs_rq: its load_avg scaled by the
    /// cfs_rq's h_load (the root's load_avg) over the cfs_rq's load_avg + 1.
    fn task_h_load(v: &SchedView, cpu: usize, load_avg: u64) -> u64 {
        let cfs_load = v.rqs[cpu].cfs.avg.load_avg;
        crate::core::mul_div(load_avg, cfs_load, cfs_load + 1)
    }

    /// wake_affine_idle() (WA_IDLE); None is the kernel's nr_cpumask_bits.
    fn wake_affine_idle(v: &SchedView, this_cpu: usize, prev: usize, sync: bool) -> Option<usize> {
        // an idle waking CPU sharing the cache: prev_cpu if it is idle too (no migration
        // cost), else the waking CPU
        if v.idle_cpu(this_cpu) && v.cpus_share_cache(this_cpu, prev) {
            return Some(if v.idle_cpu(prev) { prev } else { this_cpu });
        }
        // a sync waker is about to sleep: its CPU will be free if it runs only the waker
        if sync && v.rqs[this_cpu].nr_running() == 1 {
            return Some(this_cpu);
        }
        if v.idle_cpu(prev) {
            return Some(prev);
        }
        None
    }

    /// wake_affine_weight() (WA_WEIGHT, WA_BIAS): the waking CPU if its load with the task,
    /// against prev_cpu's without it (each scaled by the other's capacity, prev_cpu's by
    /// the 108 % bias), is lower.
    fn wake_affine_weight(v: &SchedView, p: TaskId, this_cpu: usize, prev: usize, sync: bool) -> Option<usize> {
        let mut this_eff_load = v.rqs[this_cpu].cfs.avg.load_avg as i64;
        if sync {
            if let Some(c) = v.rqs[this_cpu].curr {
                let current_load = Self::task_h_load(v, this_cpu, v.tasks[c as usize].se.avg.load_avg) as i64;
                if current_load > this_eff_load {
                    return Some(this_cpu);
                }
                this_eff_load -= current_load;
            }
        }
        let t = &v.tasks[p as usize];
        let task_load = Self::task_h_load(v, t.cpu, t.se.avg.load_avg) as i64;
        this_eff_load += task_load;
        this_eff_load *= 100;
        this_eff_load *= v.capacity_of(prev) as i64;
        let mut prev_eff_load = v.rqs[prev].cfs.avg.load_avg as i64;
        prev_eff_load -= task_load;
        prev_eff_load *= (100 + (SD_IMBALANCE_PCT - 100) / 2) as i64;
        prev_eff_load *= v.capacity_of(this_cpu) as i64;
        if sync {
            prev_eff_load += 1;
        }
        (this_eff_load < prev_eff_load).then_some(this_cpu)
    }

    /// wake_affine(): the waking CPU if WA_IDLE or WA_WEIGHT choose it, else prev_cpu.
    pub fn wake_affine(&mut self, v: &SchedView, p: TaskId, this_cpu: usize, prev: usize, sync: bool) -> usize {
        let target = Self::wake_affine_idle(v, this_cpu, prev, sync)
            .or_else(|| Self::wake_affine_weight(v, p, this_cpu, prev, sync));
        if target != Some(this_cpu) {
            return prev;
        }
        self.counters.wake_affine += 1;
        this_cpu
    }

    /// select_idle_sibling(p, prev, target).
    pub fn select_idle_sibling(&mut self, v: &SchedView, p: TaskId, prev: usize, target: usize) -> usize {
        self.grow(v);
        let n = v.nr_cpus();
        let allowed = v.tasks[p as usize].allowed;
        let ok = |c: usize| allowed & (1u64 << c) != 0;
        let asym = Self::asym(v);
        // on asymmetric systems the fit tests read the task's util decayed over its sleep
        let task_util = if asym {
            let a = v.sync_entity_load_avg(p);
            a.util_avg.max(a.ewma())
        } else {
            v.task_util_est(p)
        };
        let [umin, umax] = v.tasks[p as usize].uclamp;
        // asym_fits_cpu()
        let fits = |c: usize| !asym || v.util_fits_cpu(task_util, umin, umax, c) > 0;
        if ok(target) && v.idle_cpu(target) && fits(target) {
            return target;
        }
        // an idle prev_cpu sharing the target's cache: no reason to go further
        if prev != target && v.cpus_share_cache(prev, target) && ok(prev) && v.idle_cpu(prev) && fits(prev) {
            return prev;
        }
        let recent = std::mem::replace(&mut self.recent_used_cpu[p as usize], prev);
        if recent < n
            && recent != prev
            && recent != target
            && v.cpus_share_cache(recent, target)
            && v.idle_cpu(recent)
            && ok(recent)
            && fits(recent)
        {
            return recent;
        }
        let fallback = if ok(target) {
            target
        } else {
            allowed.trailing_zeros() as usize
        };
        if asym {
            return Self::select_idle_capacity(v, p, task_util, target).unwrap_or(fallback);
        }
        // select_idle_cpu() over the target's LLC, from the CPU after the target
        (1..=n)
            .map(|k| (target + k) % n)
            .find(|&c| v.cpus_share_cache(c, target) && ok(c) && v.idle_cpu(c))
            .unwrap_or(fallback)
    }

    /// select_task_rq_fair()'s wakeup path after record_wakee() and, with EAS, after
    /// find_energy_efficient_cpu() declined: wake_wide(), the affine domain walk,
    /// select_idle_sibling().
    pub fn select_wakeup_after_record(&mut self, v: &SchedView, p: TaskId, prev: usize) -> usize {
        let this_cpu = Self::this_cpu(v, prev);
        let wide = self.wake_wide(v, p, prev);
        if wide {
            self.counters.wake_wide += 1;
        }
        let allowed = v.tasks[p as usize].allowed;
        let want_affine = !wide && allowed & (1u64 << this_cpu) != 0;
        // The first of the waking CPU's domains spanning prev_cpu has SD_WAKE_AFFINE (MC
        // or PKG, both 117 %). Without want_affine the walk stops at once: no domain has
        // SD_BALANCE_WAKE, so the fast path runs with prev_cpu as the target.
        let mut new_cpu = prev;
        if want_affine && this_cpu != prev {
            new_cpu = self.wake_affine(v, p, this_cpu, prev, v.wake.sync);
        }
        self.select_idle_sibling(v, p, prev, new_cpu)
    }
}

impl SelectIdleSibling {
    /// select_task_rq_fair() without EAS: new tasks and RT tasks as the baseline (see
    /// above), woken fair tasks the affine wakeup path and select_idle_sibling().
    pub fn select_task_rq(&mut self, v: &SchedView, p: TaskId, prev_cpu: usize, kind: WakeKind) -> usize {
        if v.tasks[p as usize].policy != Policy::Other || kind == WakeKind::Fork {
            return select_task_rq_baseline(v, p, prev_cpu, kind);
        }
        self.record_wakee(v, p, prev_cpu);
        self.select_wakeup_after_record(v, p, prev_cpu)
    }

    pub fn counters(&self) -> Vec<(&'static str, serde_json::Value)> {
        vec![
            ("wake_wide", self.counters.wake_wide.into()),
            ("wake_affine", self.counters.wake_affine.into()),
        ]
    }
}

/// The `cfs` policy: the kernel's fair class as it is, placement and balancing.
#[derive(Default)]
pub struct Cfs {
    pub sis: SelectIdleSibling,
}

impl SchedPolicy for Cfs {
    fn placement(&self) -> &'static str {
        "select_task_rq_fair"
    }

    fn select_task_rq(&mut self, v: &SchedView, p: TaskId, prev_cpu: usize, kind: WakeKind) -> usize {
        self.sis.select_task_rq(v, p, prev_cpu, kind)
    }

    fn counters(&self) -> Vec<(&'static str, serde_json::Value)> {
        self.sis.counters()
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
