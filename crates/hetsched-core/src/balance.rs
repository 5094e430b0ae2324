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
    /// Whether idle `cpu`'s rq->next_balance has passed: some domain of it is due a
    /// CPU_IDLE balance (what nohz.next_balance, their minimum, tells a busy CPU's kick).
    fn nohz_balance_due(&self, v: &SchedView, cpu: usize, _tick_ns: u64) -> bool {
        self.periodic_due(cpu, v.now)
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
        // least recently run first, like detach_tasks() walking cfs_tasks from the tail
        for t in v.queued_fair_least_recent_first(src) {
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

    /// Whether `cpu` is in nohz.idle_cpus_mask and idle_cpu(): its tick stopped in the idle
    /// loop (nohz_balance_enter_idle()), and it is online and not isolated (on_null_domain()
    /// CPUs, and msm-4.14's isolated ones, are left out of the idle balance).
    pub(crate) fn nohz_idle_cpu(&self, cpu: usize) -> bool {
        self.rqs[cpu].tick_stopped
            && self.cpu_isolated & (1u64 << cpu) == 0
            && !self.hotplug.as_ref().is_some_and(|h| !h.is_online(cpu))
            && self.view().idle_cpu(cpu)
    }

    /// find_new_ilb(): the first CPU of nohz.idle_cpus_mask (every CPU is housekeeping for
    /// HK_TYPE_MISC on a phone) that is idle_cpu(); the kicking CPU is busy, so not in it.
    pub(crate) fn find_new_ilb(&self) -> Option<usize> {
        (0..self.rqs.len()).find(|&cpu| self.nohz_idle_cpu(cpu))
    }

    /// nohz_balancer_kick() -> kick_ilb() at the tick of a busy CPU that wants the idle CPUs
    /// balanced: only once the earliest of their next_balance has passed (nohz.next_balance),
    /// the chosen CPU gets the IPI and leaves its idle state to run the SCHED_SOFTIRQ
    /// (`nohz_idle_balance`) for all of them. An IPI to a CPU already kicked and not yet
    /// out of its state adds nothing (its NOHZ_BALANCE_KICK is still set).
    pub(crate) fn nohz_balancer_kick(&mut self) {
        let Some(lb) = self.balancer.as_ref() else { return };
        let tick_ns = self.knobs.derived.tick_ns;
        let v = self.view();
        let due = (0..self.rqs.len()).any(|cpu| self.nohz_idle_cpu(cpu) && lb.nohz_balance_due(&v, cpu, tick_ns));
        if !due {
            return;
        }
        let Some(ilb) = self.find_new_ilb() else { return };
        if self.rqs[ilb].nohz_idle_balance {
            return;
        }
        self.counters.nohz_balance_kicks += 1;
        self.rqs[ilb].nohz_idle_balance = true;
        if self.rqs[ilb].waking_until.is_some() {
            return; // already leaving its idle state: CpuReady runs the softirq
        }
        if self.wake_latency_ns(ilb) > 0 {
            self.kick_idle_cpu(ilb);
            return;
        }
        // out of a state without exit latency at once: the softirq runs now, and the idle
        // loop asks the governor again unless it pulled work
        self.menu_reflect(ilb, 0);
        self.rqs[ilb].nohz_idle_balance = false;
        self.nohz_idle_balance(ilb);
        if self.rqs[ilb].nr_running() == 0 {
            self.resched[ilb] = false;
            self.enter_idle(ilb);
        }
    }

    /// _nohz_idle_balance() with NOHZ_BALANCE_KICK on the idle load balancer `ilb`, out of
    /// its idle state: the periodic balance, as CPU_IDLE, of every CPU of
    /// nohz.idle_cpus_mask whose next_balance has passed, starting after `ilb` and ending
    /// with itself so that the others get the first chance to pull. Each pass's modelled
    /// cost stays queued on the CPU balanced for, as when each balanced in place: charged
    /// to `ilb`, an idle CPU's queued work, it would all delay the next task `ilb` runs
    /// rather than keep `ilb` out of idle now (sched_balance.md, Differences).
    pub(crate) fn nohz_idle_balance(&mut self, ilb: usize) {
        let n = self.rqs.len();
        let tick_ns = self.knobs.derived.tick_ns;
        for i in 1..=n {
            let cpu = (ilb + i) % n;
            if !self.nohz_idle_cpu(cpu) {
                continue;
            }
            let Some(lb) = self.balancer.as_mut() else { return };
            if !lb.periodic_due(cpu, self.now) {
                continue;
            }
            let acts = lb.periodic(&view!(self), cpu, false, tick_ns);
            self.charge_balance_pass(cpu, true);
            self.update_rd_flags();
            self.apply_lb(acts, true);
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

#[cfg(test)]
mod tests {
    use crate::core::Sim;

    /// two_cluster_platform (little 0,1: WFI 1 µs and cluster-sleep 500 µs exit; big 2,3:
    /// WFI 1 µs), cfs with its kernel balancer, every cluster at its highest OPP, no
    /// scheduler costs, sched_migration_cost_ns 0 (no task is cache hot). Two endless tasks
    /// forked on CPU 3 and then allowed on 2 and 3; CPUs 0-2 idle with the tick stopped,
    /// the little ones both in cluster-sleep, the big one in WFI.
    fn kicked_sim() -> Sim {
        let tasks: Vec<_> = ["a", "b"]
            .iter()
            .map(|n| serde_json::json!({"name": n, "cpus": [3], "loop": -1, "phases": [{"events": [{"run": 1_000_000_000u64}]}]}))
            .collect();
        let w = serde_json::json!({"name": "kick", "duration_ns": null, "timers": 0, "tasks": tasks});
        let mut pol: crate::PolicyConfig = crate::testutils::costs_off(
            serde_json::from_value(serde_json::json!({"scheduler": "cfs", "governor": "performance"})).unwrap(),
        );
        pol.knobs.insert("sched_migration_cost_ns".into(), 0.0);
        let p = crate::testutils::two_cluster_platform();
        let mut sim = Sim::new(p, crate::WorkloadSpec::from_json(&w.to_string()).unwrap(), pol).unwrap();
        // menu: a typical 45 ms idle and no timer -> the deepest state that fits, tick off
        for cpu in 0..3 {
            sim.rqs[cpu].menu.intervals = [45_000; 8];
            sim.enter_idle(cpu);
        }
        assert_eq!(sim.rqs[0].idle_state, Some(1));
        assert_eq!(sim.rqs[1].idle_state, Some(1));
        assert_eq!(sim.rqs[2].idle_state, Some(0));
        assert!((0..3).all(|c| sim.rqs[c].tick_stopped));
        sim.run_until(1); // both forks land on CPU 3
        for t in sim.tasks.iter_mut() {
            t.allowed = 0b1100;
        }
        sim
    }

    #[test]
    fn the_idle_balance_kick_wakes_the_first_tickless_cpu_which_balances_for_all() {
        // At the tick at 4 ms CPU 3 runs one task and queues the other: nohz_balancer_kick()
        // -> kick_ilb(). nohz.idle_cpus_mask = {0, 1, 2}, all due (never balanced);
        // find_new_ilb() takes CPU 0. It leaves cluster-sleep (both little CPUs are in it):
        // 500 µs at busy power, so the softirq runs at 4.5 ms. _nohz_idle_balance() goes
        // 1, 2, (3 is busy), 0: CPU 1 may not take either task; CPU 2 pulls the queued one
        // (its MC domain {2, 3}: CPU 3 has two, CPU 2 none) and, in WFI, takes 1 µs to run
        // it; CPU 0 then finds one task each on 2 and 3 and goes back to cpuidle.
        let mut sim = kicked_sim();
        sim.run_until(4_000_000);
        assert_eq!(sim.counters.nohz_balance_kicks, 0);
        sim.run_until(4_000_001);
        assert_eq!(sim.counters.nohz_balance_kicks, 1);
        assert_eq!(sim.rqs[0].waking_until, Some(4_500_000));
        assert!(sim.rqs[1].idle_state.is_some() && sim.rqs[2].idle_state.is_some());
        sim.run_until(4_500_000);
        // nothing has moved while the balancer leaves its idle state
        assert!(sim.tasks.iter().all(|t| t.cpu == 3));
        sim.meter.sync(&sim.platform, 4_500_000);
        // CPU 0: cluster-sleep (0 mW) to 4 ms, then 500 µs at 1 GHz, 300 mW: 150 µJ
        assert_eq!(sim.meter.cpus[0].busy_ns, 500_000);
        assert_eq!(sim.meter.cpus[0].energy_fj, 150_000_000_000);
        assert_eq!(sim.meter.cpus[1].busy_ns, 0);
        sim.run_until(4_500_001);
        assert_eq!(sim.tasks.iter().filter(|t| t.cpu == 2).count(), 1);
        assert_eq!(sim.rqs[2].waking_until, Some(4_501_000));
        assert_eq!(sim.rqs[0].curr, None);
        assert!(sim.rqs[0].idle_state.is_some() && sim.rqs[0].tick_stopped);
        assert!(!sim.rqs[0].nohz_idle_balance);
        assert!(sim.rqs[1].idle_state.is_some());
        sim.run_until(4_501_001);
        assert!(sim.rqs[2].curr.is_some() && sim.rqs[3].curr.is_some());
        // one task per big CPU: the next tick (8 ms) has no runqueue with two to kick for
        sim.run_until(8_000_001);
        assert_eq!(sim.counters.nohz_balance_kicks, 1);
    }
}
