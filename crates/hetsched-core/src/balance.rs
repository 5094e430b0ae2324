//! Load balancing behind one interface, [`LoadBalancer`]: the periodic pass (per CPU, at
//! its balance interval), the newidle pass (a CPU about to go idle) and, for a balancer
//! without the kernel's misfit machinery, a misfit push at the tick. A policy names its
//! balancer (`SchedPolicy::load_balancer`). This module holds the interface, the baseline's
//! pull balancer (the engine's own, simpler than the kernel's), and the carrying out of every
//! balancer's and policy's migrations as kernel/sched/fair.c (v6.12) does them:
//! detach_task()/attach_task() for a queued task, the stopper's
//! active_load_balance_cpu_stop() for a running one, sched_balance_newidle()'s entry. The
//! kernel's `sched_balance_rq`, which `cfs`, `eas` and the policies built on them use, is
//! balance_fair.rs; docs/mechanisms/sched_balance.md describes both.

use crate::core::*;
use crate::core::{SchedView, TaskId};
use crate::fair::Detach;
use crate::features::{Knob, Knobs};
use crate::workload::Policy;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Migration {
    pub task: TaskId,
    pub src: usize,
    pub dst: usize,
}

/// An action of a balancer: move a queued task, or push a running one (active balance,
/// the stopper's work).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LbAction {
    Move(Migration),
    Active(Migration),
}

#[derive(Debug, Clone, Copy, Default)]
pub struct BalanceStats {
    /// tasks examined for migration (can_migrate_task calls)
    pub attempts: u64,
    /// tasks moved
    pub successes: u64,
}

/// rd->overutilized and rd->overloaded, each if a statistics pass set it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RdFlags {
    pub overutilized: Option<bool>,
    pub overloaded: Option<bool>,
}

/// What a balancer did, for result.json.
#[derive(Debug, Clone, Default)]
pub struct LbStats {
    pub periodic: BalanceStats,
    pub newidle: BalanceStats,
    pub misfit: BalanceStats,
    /// per scheduling domain, for a balancer that has them
    pub domains: Option<Vec<(&'static str, BalanceStats)>>,
}

impl LbStats {
    /// attempts and successes of every kind
    pub fn totals(&self) -> BalanceStats {
        let mut t = BalanceStats::default();
        let doms = self.domains.iter().flatten().map(|d| &d.1);
        for s in [&self.periodic, &self.newidle, &self.misfit].into_iter().chain(doms) {
            t.attempts += s.attempts;
            t.successes += s.successes;
        }
        t
    }
}

pub trait LoadBalancer: Send {
    fn name(&self) -> &'static str;
    /// Whether `cpu`'s periodic balance is due at `now` (a balancer that keeps its own
    /// per-domain intervals answers always, and decides in `periodic`).
    fn periodic_due(&self, _cpu: usize, _now: u64) -> bool {
        true
    }
    /// The periodic balance of `cpu` at its tick; `busy`: it runs a task.
    fn periodic(&mut self, v: &SchedView, cpu: usize, busy: bool, tick_ns: u64) -> Vec<LbAction>;
    /// `cpu` has nothing to run: what it pulls (queued tasks only).
    fn newidle(&mut self, v: &SchedView, cpu: usize) -> Vec<LbAction>;
    /// At the tick of `src`, whose running fair task does not fit it: where to move it (an
    /// active migration), for a balancer without the kernel's misfit balancing.
    fn misfit(&mut self, _v: &SchedView, _src: usize) -> Option<Migration> {
        None
    }
    fn stats(&self) -> LbStats;
    /// The root domain's flags as the balancer's statistics passes left them, for those a
    /// pass computed since the last call (the kernel updates them in update_sd_lb_stats).
    fn take_rd_flags(&mut self) -> RdFlags {
        RdFlags::default()
    }
    /// The knobs changed during the run.
    fn set_tunables(&mut self, knobs: &Knobs);
    /// The CPUs the passes since the last call examined (each domain's span, summed), for
    /// their cost (costs.rs); 0 for a balancer whose passes are not costed.
    fn take_pass_cpus(&mut self) -> u64 {
        0
    }
}

/// Baseline pull balancer: the busiest CPU is the one with the most runnable fair tasks;
/// it is pulled from when it has at least 2 and at least 2 more than dst (1 more if dst is
/// idle). The candidate is the queued (not running) fair task that ran least recently,
/// allowed on dst and not cache hot (`task_hot`: it ran within sched_migration_cost_ns),
/// one task per pass. On asymmetric CPUs it does not pull a task down to a smaller CPU
/// that it would not fit (util_fits_cpu), so the balancer never creates a misfit; and a
/// running task that does not fit its CPU is moved, at its CPU's tick, to the idle CPU of
/// the largest capacity that is noticeably bigger (capacity_greater), the effect of the
/// kernel's misfit active balance without its group machinery.
/// Its periodic pass runs at the domain interval of one flat domain (its weight in ms, ×
/// busy_factor while busy).
pub struct SimplePull {
    pub migration_cost_ns: u64,
    /// per CPU: when its next periodic balance is due
    next_balance: Vec<u64>,
    stats: LbStats,
}

impl SimplePull {
    pub fn new(v: &SchedView) -> Self {
        SimplePull {
            migration_cost_ns: v.knobs.get(Knob::SchedMigrationCostNs) as u64,
            next_balance: vec![0; v.nr_cpus()],
            stats: LbStats::default(),
        }
    }

    fn pull(&self, v: &SchedView, dst: usize, idle: bool, stats: &mut BalanceStats) -> Option<Migration> {
        let nr_dst = v.rqs[dst].cfs.nr_running;
        let need = if idle { 1 } else { 2 };
        let busiest = (0..v.nr_cpus())
            .filter(|&c| c != dst)
            .map(|c| (v.rqs[c].cfs.nr_running, std::cmp::Reverse(c)))
            .filter(|&(n, _)| n >= 2 && n >= nr_dst + need)
            .max()?;
        let src = busiest.1 .0;
        let rq = &v.rqs[src];
        // least recently run first, like detach_tasks() walking cfs_tasks from the tail
        let mut cands: Vec<TaskId> = rq
            .cfs
            .timeline
            .iter()
            .map(|&(_, t)| t)
            .filter(|&t| !v.tasks[t as usize].se.sched_delayed)
            .collect();
        cands.sort_by_key(|&t| (v.tasks[t as usize].se.exec_start, t));
        for t in cands {
            let task = &v.tasks[t as usize];
            if task.policy != Policy::Other {
                continue;
            }
            stats.attempts += 1;
            if task.allowed & (1u64 << dst) == 0 {
                continue;
            }
            let (cap_dst, cap_src) = (v.capacity_orig(dst), v.capacity_orig(src));
            let [umin, umax] = task.uclamp;
            if cap_dst < cap_src && v.util_fits_cpu(v.task_util_est(t), umin, umax, dst) <= 0 {
                continue;
            }
            let hot = v.now.saturating_sub(task.se.exec_start) < self.migration_cost_ns;
            if hot {
                continue;
            }
            stats.successes += 1;
            return Some(Migration { task: t, src, dst });
        }
        None
    }

    fn push_misfit(v: &SchedView, src: usize, stats: &mut BalanceStats) -> Option<Migration> {
        let t = v.rqs[src].curr?;
        let task = &v.tasks[t as usize];
        let cap_src = v.capacity_orig(src);
        // task_fits_cpu(): util_fits_cpu() with the task's clamps
        let [umin, umax] = task.uclamp;
        if task.policy != Policy::Other || v.util_fits_cpu(v.task_util_est(t), umin, umax, src) > 0 {
            return None;
        }
        stats.attempts += 1;
        let dst = (0..v.nr_cpus())
            .filter(|&c| task.allowed & (1u64 << c) != 0 && v.idle_cpu(c))
            .filter(|&c| capacity_greater(v.capacity_orig(c), cap_src))
            .max_by_key(|&c| (v.capacity_orig(c), std::cmp::Reverse(c)))?;
        stats.successes += 1;
        Some(Migration { task: t, src, dst })
    }
}

impl LoadBalancer for SimplePull {
    fn name(&self) -> &'static str {
        "simple-pull"
    }

    fn periodic_due(&self, cpu: usize, now: u64) -> bool {
        now >= self.next_balance[cpu]
    }

    fn periodic(&mut self, v: &SchedView, cpu: usize, busy: bool, tick_ns: u64) -> Vec<LbAction> {
        let mut stats = self.stats.periodic;
        let m = self.pull(v, cpu, v.idle_cpu(cpu), &mut stats);
        self.stats.periodic = stats;
        // sd->balance_interval = the domain's weight in ms
        let balance_ms = v.nr_cpus() as u64;
        let ivl = balance_ms * if busy { v.knobs.derived.busy_factor } else { 1 } * 1_000_000;
        self.next_balance[cpu] = v.now + ivl.max(tick_ns);
        m.map(LbAction::Move).into_iter().collect()
    }

    fn newidle(&mut self, v: &SchedView, cpu: usize) -> Vec<LbAction> {
        let mut stats = self.stats.newidle;
        let m = self.pull(v, cpu, true, &mut stats);
        self.stats.newidle = stats;
        m.map(LbAction::Move).into_iter().collect()
    }

    fn misfit(&mut self, v: &SchedView, src: usize) -> Option<Migration> {
        let mut stats = self.stats.misfit;
        let m = Self::push_misfit(v, src, &mut stats);
        self.stats.misfit = stats;
        m
    }

    fn stats(&self) -> LbStats {
        self.stats.clone()
    }

    fn set_tunables(&mut self, knobs: &Knobs) {
        self.migration_cost_ns = knobs.get(Knob::SchedMigrationCostNs) as u64;
    }
}

/// capacity_greater(): a is more than ~5% bigger than b.
#[inline]
pub fn capacity_greater(a: u64, b: u64) -> bool {
    a * 1024 > b * 1078
}

// ---------------------------------------------------------------------------------------
// carrying out a balancer's and a policy's migrations (detach_task/attach_task, the stopper's active migration)

impl Sim {
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
                    let t = &self.tasks[m.task as usize];
                    if self.rqs[m.src].curr == Some(m.task) {
                        self.migrate_running(m);
                    } else if t.cpu == m.src && t.state == TaskState::Runnable {
                        self.migrate_queued(m, true);
                    }
                }
            }
        }
    }

    /// rd->overutilized and rd->overloaded as the balancer's statistics pass left them
    /// (update_sd_lb_stats(): the root domain's pass sets or clears both, a lower level's
    /// only sets overutilized); enqueue and the tick only set them
    /// (check_update_overutilized_status, add_nr_running).
    pub(crate) fn update_rd_flags(&mut self) {
        let flags = self.balancer.as_mut().map(|lb| lb.take_rd_flags()).unwrap_or_default();
        if let Some(o) = flags.overutilized {
            if o && !self.overutilized {
                self.counters.overutilized_set += 1;
            }
            self.overutilized = o;
        }
        if let Some(o) = flags.overloaded {
            self.overloaded = o;
        }
    }

    /// sched_balance_newidle(): a CPU about to go idle pulls from a busier one.
    pub(crate) fn newidle_balance(&mut self, cpu: usize) -> Option<TaskId> {
        if self.cpu_isolated & (1u64 << cpu) != 0 {
            return None; // vendor.cpu_isolation: an isolated CPU pulls nothing
        }
        if self.hotplug.as_ref().is_some_and(|h| !h.is_online(cpu)) {
            return None;
        }
        let lb = self.balancer.as_mut()?;
        self.rqs[cpu].idle_stamp = Some(self.now); // sched_balance_newidle() entry
        let acts = lb.newidle(&view!(self), cpu);
        self.charge_balance_pass(cpu, false);
        self.update_rd_flags();
        if acts.is_empty() {
            return None;
        }
        self.rqs[cpu].idle_stamp = None; // pulled a task: not idle after all
        self.apply_lb(acts, false);
        self.pick_next(cpu)
    }

    /// A balance pass's cost on the balancing CPU (costs.rs): cost.balance_cpu_ns for
    /// each CPU of each domain span it examined. `rearm`: outside schedule().
    pub(crate) fn charge_balance_pass(&mut self, cpu: usize, rearm: bool) {
        let Some(lb) = self.balancer.as_mut() else { return };
        let work = lb.take_pass_cpus() * self.knobs.get(Knob::CostBalanceCpuNs) as u64;
        self.counters.cost_balance += work;
        self.charge_cost(cpu, work, rearm);
    }

    /// Move a queued (not running) task: detach from src, attach on dst.
    pub(crate) fn migrate_queued(&mut self, m: Migration, preempt: bool) {
        let Migration { task: t, src, dst } = m;
        debug_assert_ne!(self.rqs[src].curr, Some(t));
        if self.tasks[t as usize].se.sched_delayed {
            return; // a delayed task is asleep; it stays with its timer (fair.md, Differences)
        }
        self.trace_migrate(src, t, src, dst);
        self.walt_migrate(t, src, dst);
        self.policy.migrate_task_rq(&view!(self), t, src, dst);
        self.dequeue_task(src, t, false);
        self.detach_pelt_for_migration(src, t, Detach::Queued);
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
        self.trace_migrate(src, t, src, dst);
        self.walt_migrate(t, src, dst);
        self.policy.migrate_task_rq(&view!(self), t, src, dst);
        self.trace_slice_end(src, t);
        self.dequeue_task(src, t, false);
        self.rqs[src].curr = None;
        self.detach_pelt_for_migration(src, t, Detach::Queued);
        let task = &mut self.tasks[t as usize];
        task.state = TaskState::Runnable;
        task.se.vruntime += self.rqs[dst].cfs.min_vruntime;
        task.stats.migrations += 1;
        self.counters.migrations += 1;
        self.enqueue_task(dst, t, false, false);
        self.check_preempt(dst, t);
        self.resched_cpu(src);
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
}
