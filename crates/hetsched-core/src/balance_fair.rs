//! The kernel's load balancer, after kernel/sched/fair.c sched_balance_rq() and friends
//! (v6.12; linux-eas.md §7): scheduling domains with per-CPU balance intervals, group
//! statistics and classification, the busiest group and rq, the imbalance and its
//! migration type (load, util, task, misfit), detach_tasks() with can_migrate_task() and
//! task_hot(), nr_balance_failed, active balance, and newidle balance.
//!
//! Topology: an MC domain per cluster (groups: its CPUs) under one PKG domain spanning
//! every CPU (groups: the clusters), flagged SD_ASYM_CPUCAPACITY when capacities differ:
//! the classic big.LITTLE layout. (DynamIQ parts have one MC domain of all CPUs with
//! single-CPU groups; the two-level layout balances the same CPUs with the same rules,
//! one level at a time.)
//!
//! Differences: no asym packing, SMT or NUMA; no group `imbalanced` type (pinning is only
//! counted); balancing costs no simulated time, so v6.12's newidle cut-off (avg_idle below
//! the measured cost of balancing) never fires, while the android-4.19 profile keeps v4.19's
//! (avg_idle below sched_migration_cost_ns). `rd->overloaded` and `rd->overutilized` are
//! kept as the kernel keeps them: enqueue sets them, a root-domain pass's statistics set or
//! clear them. docs/mechanisms/sched_balance.md works the classification by hand.

pub use crate::balance::LbAction;
use crate::balance::{BalanceStats, LbStats, LoadBalancer, Migration, RdFlags};
use crate::core::{SchedView, TaskId};
use crate::features::Knobs;
use crate::workload::Policy;

#[derive(Debug, Clone)]
pub struct SchedDomain {
    pub name: &'static str,
    pub span: Vec<usize>,
    pub groups: Vec<Vec<usize>>,
    pub asym: bool,
    /// SD_SHARE_LLC: the domain's CPUs share the last-level cache
    pub share_llc: bool,
}

#[derive(Debug, Clone, Copy, Default)]
struct SdState {
    balance_interval_ms: u64,
    nr_balance_failed: u32,
    last_balance: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
enum GroupType {
    #[default]
    HasSpare = 0,
    FullyBusy = 1,
    MisfitTask = 2,
    Overloaded = 6,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MigrationType {
    Load,
    Util,
    Task,
    Misfit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdleType {
    NotIdle,
    Idle,
    NewlyIdle,
}

#[derive(Debug, Clone, Default)]
struct Sg<'a> {
    cpus: &'a [usize],
    load: u64,
    util: u64,
    runnable: u64,
    /// sum_nr_running: tasks of every class
    nr: u64,
    /// sum_h_nr_running: fair tasks only
    h_nr: u64,
    idle_cpus: u64,
    cap: u64,
    min_cap: u64,
    max_cap: u64,
    misfit_load: u64,
    avg_load: u64,
    group_type: GroupType,
}

/// sd_lb_stats: one domain's statistics in a sched_balance_rq() pass.
struct SdLbStats<'a> {
    /// the busiest of the other groups, by update_sd_pick_busiest()
    busiest: Option<Sg<'a>>,
    local: Sg<'a>,
    total_load: u64,
    total_capacity: u64,
    /// the domain's load per capacity (set by sched_balance_find_src_group())
    avg_load: u64,
    /// rd->overutilized as this pass leaves it
    overutilized: bool,
}

/// lb_env: the state of one sched_balance_rq() call, handed from step to step.
struct LbEnv<'a> {
    sd: &'a SchedDomain,
    dst_cpu: usize,
    idle: IdleType,
    /// idle != CPU_NOT_IDLE
    dst_idle: bool,
    /// the busiest runqueue's CPU, once sched_balance_find_src_rq() found it
    src_cpu: usize,
    /// what is left to move, in the unit of `migration_type`
    imbalance: i64,
    migration_type: MigrationType,
    /// this CPU's state at the domain (the kernel keeps it in the sched_domain)
    st: SdState,
    /// task_hot()'s window, sysctl_sched_migration_cost
    migration_cost_ns: u64,
    /// tasks examined (the domain's `attempts`)
    attempts: u64,
}

pub const IMBALANCE_PCT: u64 = 117;
pub const CACHE_NICE_TRIES: u32 = 1;
/// sysctl_sched_nr_migrate
pub const NR_MIGRATE: usize = 32;

pub struct KernelLb {
    pub domains: Vec<SchedDomain>,
    /// per CPU, per level (bottom-up): the domain index and its state
    levels: Vec<Vec<(usize, SdState)>>,
    pub migration_cost_ns: u64,
    pub busy_factor: u64,
    /// per domain name: (attempts, successes)
    pub stats: Vec<(&'static str, BalanceStats)>,
    /// rd->overutilized and rd->overloaded as the last statistics passes left them
    /// (update_sd_lb_stats), since the core last took them
    rd: RdFlags,
    /// CPUs the statistics passes examined since the core last took them (costs.rs)
    pass_cpus: u64,
}

fn capacity_greater(a: u64, b: u64) -> bool {
    a * 1024 > b * 1078
}

/// sibling_imbalance(): the tasks (of every class) that would even out the two groups'
/// runqueues per core (a CPU is a core here, no SMT): the difference when both groups
/// have as many cores, else the difference of the per-core counts scaled and rounded, at
/// least 2 when the local group is empty and the busiest has more than one. Only for an
/// idle destination.
fn sibling_imbalance(dst_idle: bool, busiest: &Sg<'_>, local: &Sg<'_>) -> i64 {
    if !dst_idle || busiest.nr == 0 {
        return 0;
    }
    let (ncores_busiest, ncores_local) = (busiest.cpus.len() as i64, local.cpus.len() as i64);
    let (nr_busiest, nr_local) = (busiest.nr as i64, local.nr as i64);
    if ncores_busiest == ncores_local {
        return (nr_busiest - nr_local).max(0);
    }
    let imbalance = (ncores_local * nr_busiest - ncores_busiest * nr_local).max(0);
    let imbalance = (2 * imbalance + ncores_local + ncores_busiest) / (ncores_local + ncores_busiest);
    if imbalance <= 1 && nr_local == 0 && nr_busiest > 1 {
        2
    } else {
        imbalance
    }
}

/// check_cpu_capacity(): the CPU's capacity_of() is noticeably (imbalance_pct) below its
/// capacity_orig, reduced by RT pressure.
fn check_cpu_capacity(v: &SchedView, cpu: usize) -> bool {
    v.capacity_of(cpu) * IMBALANCE_PCT < v.capacity_orig(cpu) * 100
}

impl KernelLb {
    pub fn new(v: &SchedView, migration_cost_ns: u64, busy_factor: u64) -> Self {
        let p = v.platform;
        let n = p.nr_cpus();
        let mut domains = Vec::new();
        let mut levels = vec![Vec::new(); n];
        for c in &p.clusters {
            if c.cpus.len() > 1 {
                let mut span = c.cpus.clone();
                span.sort_unstable();
                let d = domains.len();
                domains.push(SchedDomain {
                    name: "MC",
                    groups: span.iter().map(|&x| vec![x]).collect(),
                    span,
                    asym: false,
                    share_llc: true, // a cluster shares its L2 (or, on DynamIQ, the L3)
                });
                for &cpu in &c.cpus {
                    levels[cpu].push((d, SdState::default()));
                }
            }
        }
        if p.clusters.len() > 1 {
            let mut groups: Vec<Vec<usize>> = p
                .clusters
                .iter()
                .map(|c| {
                    let mut g = c.cpus.clone();
                    g.sort_unstable();
                    g
                })
                .collect();
            groups.sort();
            let caps = p.clusters.iter().map(|c| c.capacity_orig);
            let asym = caps.clone().min() != caps.max();
            let d = domains.len();
            domains.push(SchedDomain {
                name: "PKG",
                span: (0..n).collect(),
                groups,
                asym,
                share_llc: p.shared_llc,
            });
            for lv in levels.iter_mut() {
                lv.push((d, SdState::default()));
            }
        }
        for lv in levels.iter_mut() {
            for (d, st) in lv.iter_mut() {
                st.balance_interval_ms = domains[*d].span.len() as u64; // sd_init: W ms
            }
        }
        let stats = ["MC", "PKG"].iter().map(|&s| (s, BalanceStats::default())).collect();
        KernelLb {
            domains,
            levels,
            migration_cost_ns,
            busy_factor,
            stats,
            rd: RdFlags::default(),
            pass_cpus: 0,
        }
    }

    /// Stop balancing at the domain level `name` (GTS: the HMP patches clear
    /// SD_LOAD_BALANCE at the cluster-spanning level; policies/gts.rs).
    pub fn drop_level(&mut self, name: &str) {
        let doms = &self.domains;
        for lv in self.levels.iter_mut() {
            lv.retain(|(d, _)| doms[*d].name != name);
        }
    }

    fn stat(&mut self, name: &'static str) -> &mut BalanceStats {
        &mut self.stats.iter_mut().find(|s| s.0 == name).unwrap().1
    }

    /// rq->misfit_task_load as update_misfit_status() last set it.
    pub fn misfit_load(v: &SchedView, cpu: usize) -> u64 {
        v.rqs[cpu].misfit_task_load
    }

    /// update_misfit_status(): the running fair task's load if it does not fit its CPU and
    /// a bigger CPU exists that it is allowed on, else 0.
    pub fn update_misfit_status(v: &SchedView, cpu: usize) -> u64 {
        let Some(t) = v.rqs[cpu].curr else { return 0 };
        let task = &v.tasks[t as usize];
        if task.policy != Policy::Other {
            return 0;
        }
        // the kernel tests p->max_allowed_capacity first, a cached value; here the O(1)
        // part of it (no CPU is above SCHED_CAPACITY_SCALE) comes first, the fit test
        // next, and the scan of the allowed CPUs last
        let cap = v.capacity_orig(cpu);
        if cap >= crate::platform::SCHED_CAPACITY_SCALE {
            return 0;
        }
        let [umin, umax] = task.uclamp;
        let fits = crate::vendor::task_fits_cpu(v, t, cpu) // vendor.migration_margins
            .unwrap_or_else(|| v.util_fits_cpu(v.task_util_est(t), umin, umax, cpu) > 0);
        if fits {
            return 0;
        }
        let bigger = (0..v.nr_cpus()).any(|c| task.allowed & (1 << c) != 0 && v.capacity_orig(c) > cap);
        if !bigger {
            return 0;
        }
        task.se.avg.load_avg.max(1)
    }

    /// update_sg_lb_stats(): one group's load, utilization, runnable and task sums, its
    /// idle CPUs and capacities, its misfit load, then its group_classify() type and, for
    /// an overloaded group only, its avg_load. The capacities are capacity_of(), as
    /// update_cpu_capacity() stores them in sgc (min/max over the group's CPUs). The local
    /// group's misfit load stays 0: only a remote group's misfit task can be pulled.
    fn update_sg_lb_stats<'a>(v: &SchedView, cpus: &'a [usize], asym: bool, local: bool, dst_idle: bool) -> Sg<'a> {
        let mut g = Sg {
            cpus,
            min_cap: u64::MAX,
            ..Default::default()
        };
        for &c in cpus {
            let rq = &v.rqs[c];
            g.load += rq.cfs.avg.load_avg;
            g.util += v.cpu_util_cfs(c);
            g.runnable += rq.cfs.avg.runnable_avg;
            g.nr += rq.nr_running() as u64;
            g.h_nr += rq.cfs.nr_running as u64;
            let cap = v.capacity_of(c);
            g.cap += cap;
            g.min_cap = g.min_cap.min(cap);
            g.max_cap = g.max_cap.max(cap);
            if v.idle_cpu(c) {
                g.idle_cpus += 1;
                continue; // an idle CPU has no misfit task
            }
            if local {
                continue;
            }
            if asym {
                g.misfit_load = g.misfit_load.max(Self::misfit_load(v, c));
            } else if dst_idle && rq.cfs.nr_running == 1 && check_cpu_capacity(v, c) {
                // sched_reduced_capacity(): one fair task on a CPU whose capacity RT
                // pressure reduced
                g.misfit_load = g.misfit_load.max(rq.cfs.avg.load_avg);
            }
        }
        g.group_type = Self::group_classify(&g);
        if g.group_type == GroupType::Overloaded {
            g.avg_load = g.load * 1024 / g.cap.max(1); // computed for overloaded groups only
        }
        g
    }

    /// group_has_capacity(): fewer tasks than CPUs, or neither runnable nor util above
    /// the capacity by imbalance_pct.
    fn group_has_capacity(g: &Sg<'_>) -> bool {
        let w = g.cpus.len() as u64;
        if g.nr < w {
            return true;
        }
        if g.cap * IMBALANCE_PCT < g.runnable * 100 {
            return false;
        }
        g.cap * 100 > g.util * IMBALANCE_PCT
    }

    /// group_classify(): overloaded, misfit, fully busy or with spare capacity (no asym
    /// packing, no `imbalanced` type; see the module doc).
    fn group_classify(g: &Sg<'_>) -> GroupType {
        let w = g.cpus.len() as u64;
        let overloaded = g.nr > w && (g.cap * 100 < g.util * IMBALANCE_PCT || g.cap * IMBALANCE_PCT < g.runnable * 100);
        if overloaded {
            GroupType::Overloaded
        } else if g.misfit_load > 0 {
            GroupType::MisfitTask
        } else if !Self::group_has_capacity(g) {
            GroupType::FullyBusy
        } else {
            GroupType::HasSpare
        }
    }

    /// should_we_balance(): a newly idle CPU always balances; otherwise only the first
    /// idle CPU of the local group does, or its first CPU when none is idle, so that one
    /// CPU per group does the work.
    #[inline]
    fn should_we_balance(v: &SchedView, local_cpus: &[usize], dst: usize, idle: IdleType) -> bool {
        if idle == IdleType::NewlyIdle {
            return true;
        }
        let first = local_cpus
            .iter()
            .copied()
            .find(|&c| v.idle_cpu(c))
            .unwrap_or(local_cpus[0]);
        first == dst
    }

    /// sched_balance_rq() (load_balance() before v6.10) for `dst` at its domain level
    /// `li`: should_we_balance(), the busiest group and its imbalance, the busiest runqueue,
    /// detach_tasks(), and an active balance when nothing could be detached; then the
    /// domain's nr_balance_failed and balance_interval, and its attempts and successes.
    /// Returns the migrations, none when the domain was found balanced.
    fn sched_balance_rq(&mut self, v: &SchedView, dst: usize, li: usize, idle: IdleType) -> Vec<LbAction> {
        let (d, st) = self.levels[dst][li];
        let sd = &self.domains[d];
        let local_cpus: &[usize] = sd.groups.iter().find(|g| g.contains(&dst)).unwrap();
        if !Self::should_we_balance(v, local_cpus, dst, idle) {
            return Vec::new();
        }
        // update_sd_lb_stats() reads every CPU of the span: the pass's cost (costs.rs)
        self.pass_cpus += sd.span.len() as u64;
        let mut env = LbEnv {
            sd,
            dst_cpu: dst,
            idle,
            dst_idle: idle != IdleType::NotIdle,
            src_cpu: 0,
            imbalance: 0,
            migration_type: MigrationType::Load,
            st,
            migration_cost_ns: self.migration_cost_ns,
            attempts: 0,
        };
        let src = Self::sched_balance_find_src_group(v, &mut env, local_cpus, &mut self.rd)
            .and_then(|busiest| Self::sched_balance_find_src_rq(v, &env, &busiest));
        let Some(src) = src else {
            Self::out_balanced(&mut env);
            self.levels[dst][li].1 = env.st;
            return Vec::new();
        };
        env.src_cpu = src;
        let mut actions = Vec::new();
        Self::detach_tasks(v, &mut env, &mut actions);
        let span_w = sd.span.len() as u64;
        if actions.is_empty() {
            if idle != IdleType::NewlyIdle && env.migration_type != MigrationType::Misfit {
                env.st.nr_balance_failed += 1;
            }
            if Self::need_active_balance(v, &env) {
                let curr = v.rqs[src].curr.map(|t| &v.tasks[t as usize]);
                if curr.is_some_and(|c| c.allowed & (1u64 << dst) == 0) {
                    // out_one_pinned: the running task cannot come here; no reset, and the
                    // interval backs off except for newidle and misfit
                    if idle != IdleType::NewlyIdle
                        && env.migration_type != MigrationType::Misfit
                        && env.st.balance_interval_ms < 2 * span_w
                    {
                        env.st.balance_interval_ms *= 2;
                    }
                    self.levels[dst][li].1 = env.st;
                    let attempts = env.attempts;
                    self.stat(sd.name).attempts += attempts;
                    return actions;
                }
                if let Some(t) = Self::active_load_balance_cpu_stop(v, &env) {
                    env.attempts += 1;
                    actions.push(LbAction::Active(Migration { task: t, src, dst }));
                    env.st.nr_balance_failed = 0;
                }
            }
        } else {
            env.st.nr_balance_failed = 0;
        }
        // an imbalance was found and acted on: back to the minimum interval
        env.st.balance_interval_ms = span_w;
        self.levels[dst][li].1 = env.st;
        let attempts = env.attempts;
        let s = self.stat(sd.name);
        s.attempts += attempts;
        s.successes += actions.len() as u64;
        actions
    }

    /// The out_balanced exit of sched_balance_rq(): the domain is balanced, so
    /// nr_balance_failed resets and, except for a newly idle CPU, the balance interval
    /// doubles, up to twice the domain's weight in ms.
    #[inline]
    fn out_balanced(env: &mut LbEnv<'_>) {
        env.st.nr_balance_failed = 0;
        if env.idle != IdleType::NewlyIdle && env.st.balance_interval_ms < 2 * env.sd.span.len() as u64 {
            env.st.balance_interval_ms *= 2;
        }
    }

    /// sched_balance_find_src_group() (find_busiest_group() before v6.10): the domain's
    /// statistics, then whether it needs balancing. A group with a misfit task always
    /// does; otherwise not when EAS runs and the root domain is not overutilized, nor when
    /// the local group's type is above the busiest's, nor when both are overloaded and the
    /// local group's average load is not below the busiest's, the domain's, or within
    /// imbalance_pct of the busiest's, nor, the busiest not overloaded, when this CPU is
    /// busy or the idle CPUs are nearly even or the busiest has one fair task. Then
    /// calculate_imbalance(). Returns the busiest group, with `env.imbalance` and
    /// `env.migration_type` set, or None when the domain is balanced.
    fn sched_balance_find_src_group<'a>(
        v: &SchedView,
        env: &mut LbEnv<'a>,
        local_cpus: &'a [usize],
        rd: &mut RdFlags,
    ) -> Option<Sg<'a>> {
        let mut sds = Self::update_sd_lb_stats(v, env, local_cpus, rd);
        let busiest = sds.busiest.take()?;
        sds.avg_load = sds.total_load * 1024 / sds.total_capacity.max(1);
        let (bty, local) = (busiest.group_type, &sds.local);
        if bty != GroupType::MisfitTask {
            let eas_balanced = v.eas && !sds.overutilized;
            let not_needed = eas_balanced
                || local.group_type > bty
                || (local.group_type == GroupType::Overloaded
                    && (local.avg_load >= busiest.avg_load
                        || local.avg_load >= sds.avg_load
                        || 100 * busiest.avg_load <= IMBALANCE_PCT * local.avg_load))
                || (bty != GroupType::Overloaded
                    && (!env.dst_idle
                        || (busiest.cpus.len() > 1 && local.idle_cpus <= busiest.idle_cpus + 1)
                        || busiest.h_nr == 1));
            if not_needed {
                return None;
            }
        }
        Self::calculate_imbalance(env, &mut sds, &busiest);
        (env.imbalance > 0).then_some(busiest)
    }

    /// update_sd_lb_stats(): the local group's statistics, and with EAS the root domain's
    /// overutilized flag (a root pass sets or clears it, a lower level's can only set it)
    /// and at the root its overloaded flag; then each other group's statistics in the
    /// domain's order, keeping the busiest by update_sd_pick_busiest() and summing the
    /// domain's load and capacity.
    fn update_sd_lb_stats<'a>(
        v: &SchedView,
        env: &LbEnv<'a>,
        local_cpus: &'a [usize],
        rd: &mut RdFlags,
    ) -> SdLbStats<'a> {
        let (sd, dst) = (env.sd, env.dst_cpu);
        let local = Self::update_sg_lb_stats(v, local_cpus, sd.asym, true, env.dst_idle);
        let root = sd.span.len() == v.nr_cpus();
        let mut overutilized = rd.overutilized.unwrap_or(v.overutilized);
        if v.eas {
            let any = sd.span.iter().any(|&c| v.cpu_overutilized(c));
            if root {
                overutilized = any;
            } else {
                overutilized |= any;
            }
            rd.overutilized = Some(overutilized);
        }
        if root {
            // rd->overloaded: a runqueue with more than one task, or a misfit task
            let overloaded = sd
                .span
                .iter()
                .any(|&c| v.rqs[c].nr_running() > 1 || Self::misfit_load(v, c) > 0);
            rd.overloaded = Some(overloaded);
        }
        let dst_cap = v.capacity_of(dst);
        let (mut total_load, mut total_capacity) = (local.load, local.cap);
        let mut busiest: Option<Sg<'a>> = None;
        for g in sd.groups.iter().filter(|g| !g.contains(&dst)) {
            let sg = Self::update_sg_lb_stats(v, g, sd.asym, false, env.dst_idle);
            total_load += sg.load;
            total_capacity += sg.cap;
            if Self::update_sd_pick_busiest(sd, local.group_type, dst_cap, busiest.as_ref(), &sg) {
                busiest = Some(sg);
            }
        }
        SdLbStats {
            busiest,
            local,
            total_load,
            total_capacity,
            avg_load: 0,
            overutilized,
        }
    }

    /// update_sd_pick_busiest(): whether `sg` replaces `busiest`: a higher group type,
    /// or the same type and, by type, a higher average load (overloaded), a higher misfit
    /// load, a later group (fully busy: both average loads are 0), fewer idle CPUs or as
    /// many and more tasks (spare capacity). A group without fair tasks never does; under
    /// asymmetric capacities neither does a misfit group this CPU cannot help (not
    /// noticeably bigger, or the local group has no spare capacity) nor a group of
    /// noticeably bigger CPUs with at most one task each.
    #[inline]
    fn update_sd_pick_busiest(
        sd: &SchedDomain,
        local_type: GroupType,
        dst_cap: u64,
        busiest: Option<&Sg<'_>>,
        sg: &Sg<'_>,
    ) -> bool {
        let ty = sg.group_type;
        if sg.h_nr == 0 {
            return false; // no fair task to pull
        }
        if sd.asym
            && ty == GroupType::MisfitTask
            && !(capacity_greater(dst_cap, sg.max_cap) && local_type == GroupType::HasSpare)
        {
            return false; // a misfit this CPU cannot help
        }
        let better = match busiest {
            None => true,
            Some(b) => {
                ty > b.group_type
                    || (ty == b.group_type
                        && match ty {
                            GroupType::Overloaded => sg.avg_load > b.avg_load,
                            GroupType::MisfitTask => sg.misfit_load > b.misfit_load,
                            // avg_load is 0 for both: the later group is taken
                            GroupType::FullyBusy => sg.avg_load >= b.avg_load,
                            GroupType::HasSpare => {
                                sg.idle_cpus < b.idle_cpus || (sg.idle_cpus == b.idle_cpus && sg.nr > b.nr)
                            }
                        })
            }
        };
        // no big-to-little pull of a group with at most one task per CPU
        let veto = sd.asym && ty <= GroupType::FullyBusy && capacity_greater(sg.min_cap, dst_cap);
        better && !veto
    }

    /// calculate_imbalance(): the migration type and the amount to move. A misfit group:
    /// its task (or, without asymmetric capacities, the load of a fair task on a CPU
    /// whose capacity RT pressure reduced). A local group with spare capacity: its spare
    /// utilization from an overloaded group of another LLC, else half the tasks that even
    /// out single-CPU groups (sibling_imbalance()), else half the difference in idle CPUs.
    /// Otherwise load: the smaller of the busiest group's excess over the domain's average
    /// load and the local group's shortfall, scaled by their capacities; none when the
    /// local group is not below both.
    #[inline]
    fn calculate_imbalance(env: &mut LbEnv<'_>, sds: &mut SdLbStats<'_>, busiest: &Sg<'_>) {
        let (sd, dst_idle, local) = (env.sd, env.dst_idle, &mut sds.local);
        let (bty, b) = (busiest.group_type, busiest);
        let (migration_type, imbalance): (MigrationType, i64) = if bty == GroupType::MisfitTask {
            if sd.asym {
                (MigrationType::Misfit, 1)
            } else {
                // a fair task on a CPU with reduced capacity: move its load
                (MigrationType::Load, b.misfit_load as i64)
            }
        } else if local.group_type == GroupType::HasSpare {
            if bty > GroupType::FullyBusy && !sd.share_llc {
                // fill the local spare capacity from an overloaded group in another LLC
                let room = local.cap.max(local.util) - local.util;
                if room == 0 && dst_idle {
                    (MigrationType::Task, 1)
                } else {
                    (MigrationType::Util, room as i64)
                }
            } else if b.cpus.len() == 1 {
                // spread the tasks evenly (sibling_imbalance), halved: tasks to move
                (MigrationType::Task, sibling_imbalance(dst_idle, b, local) >> 1)
            } else {
                // even out the idle CPUs, halved
                (
                    MigrationType::Task,
                    (local.idle_cpus as i64 - b.idle_cpus as i64).max(0) >> 1,
                )
            }
        } else {
            if local.group_type < GroupType::Overloaded {
                // local becomes overloaded: its avg_load is needed now
                local.avg_load = local.load * 1024 / local.cap.max(1);
            }
            let sds_avg_load = sds.avg_load;
            if local.avg_load >= b.avg_load || local.avg_load >= sds_avg_load {
                (MigrationType::Load, 0)
            } else {
                let imb = (b.avg_load.saturating_sub(sds_avg_load) * b.cap)
                    .min((sds_avg_load - local.avg_load) * local.cap)
                    / 1024;
                (MigrationType::Load, imb as i64)
            }
        };
        env.migration_type = migration_type;
        env.imbalance = imbalance;
    }

    /// sched_balance_find_src_rq() (find_busiest_queue() before v6.10): of the busiest
    /// group's runqueues with fair tasks, the one with the most of what is to move: load
    /// per capacity, utilization (more than one task), fair tasks, or misfit load; on ties
    /// the first CPU. Under asymmetric capacities a runqueue with one task is skipped
    /// unless this CPU is noticeably bigger, and for load one whose single task's load
    /// exceeds the imbalance unless its capacity is reduced.
    fn sched_balance_find_src_rq(v: &SchedView, env: &LbEnv<'_>, busiest: &Sg<'_>) -> Option<usize> {
        let (sd, imbalance) = (env.sd, env.imbalance);
        let dst_cap = v.capacity_of(env.dst_cpu);
        let mut src: Option<usize> = None;
        let (mut busiest_load, mut busiest_cap, mut busiest_util, mut busiest_nr) = (0u64, 1u64, 0u64, 0u64);
        for &c in busiest.cpus {
            let rq = &v.rqs[c];
            let nr = rq.cfs.nr_running as u64;
            if nr == 0 {
                continue;
            }
            let cap = v.capacity_of(c);
            if sd.asym && !capacity_greater(dst_cap, cap) && nr == 1 {
                continue; // would end in an active balance towards a CPU no bigger
            }
            match env.migration_type {
                MigrationType::Load => {
                    let load = rq.cfs.avg.load_avg;
                    if nr == 1 && load as i64 > imbalance && !check_cpu_capacity(v, c) {
                        continue;
                    }
                    // the highest load per capacity, by cross-multiplication
                    if load * busiest_cap > busiest_load * cap {
                        (busiest_load, busiest_cap) = (load, cap);
                        src = Some(c);
                    }
                }
                MigrationType::Util => {
                    let util = v.cpu_util_cfs_boost(c);
                    if nr <= 1 {
                        continue;
                    }
                    if busiest_util < util {
                        busiest_util = util;
                        src = Some(c);
                    }
                }
                MigrationType::Task => {
                    if busiest_nr < nr {
                        busiest_nr = nr;
                        src = Some(c);
                    }
                }
                MigrationType::Misfit => {
                    let m = Self::misfit_load(v, c);
                    if m > busiest_load {
                        busiest_load = m;
                        src = Some(c);
                    }
                }
            }
        }
        src
    }

    /// detach_tasks(): from the source runqueue, if it has more than one task, its queued
    /// fair tasks least recently run first (at most sysctl_sched_nr_migrate) that
    /// can_migrate_task() allows and whose load or utilization, halved for each failed
    /// balance, fits the remaining imbalance (a task counts one; a misfit task must not
    /// fit the source CPU), until the imbalance is met; a newly idle CPU takes one task,
    /// and an idle one never empties the source. A delayed (sleeping) task stays where its
    /// timer is: see fair.md, Differences.
    fn detach_tasks(v: &SchedView, env: &mut LbEnv<'_>, actions: &mut Vec<LbAction>) {
        let (src, dst) = (env.src_cpu, env.dst_cpu);
        let mut src_nr = v.rqs[src].nr_running();
        let loop_max = if src_nr > 1 { NR_MIGRATE.min(src_nr as usize) } else { 0 };
        // the loop_max least recently run (the kernel walks that many from cfs_tasks' tail)
        let cands: Vec<TaskId> = v.rqs[src]
            .cfs
            .timeline
            .iter_by_last_run()
            .map(|&(_, t)| t)
            .filter(|&t| !v.tasks[t as usize].se.sched_delayed)
            .take(loop_max)
            .collect();
        for &t in &cands {
            if env.dst_idle && src_nr <= 1 {
                break; // never empty the source for an idle CPU
            }
            env.attempts += 1;
            if !Self::can_migrate_task(v, env, t) {
                continue;
            }
            let task = &v.tasks[t as usize];
            let nr_balance_failed = env.st.nr_balance_failed;
            match env.migration_type {
                MigrationType::Load => {
                    let l = task.se.avg.load_avg.max(1) as i64;
                    if (l >> nr_balance_failed) > env.imbalance {
                        continue;
                    }
                    env.imbalance -= l;
                }
                MigrationType::Util => {
                    let u = v.task_util_est(t) as i64;
                    if (u >> nr_balance_failed) > env.imbalance {
                        continue;
                    }
                    env.imbalance -= u;
                }
                MigrationType::Task => env.imbalance -= 1,
                MigrationType::Misfit => {
                    let [umin, umax] = task.uclamp;
                    if v.util_fits_cpu(v.task_util_est(t), umin, umax, src) > 0 {
                        continue;
                    }
                    env.imbalance = 0;
                }
            }
            actions.push(LbAction::Move(Migration { task: t, src, dst }));
            src_nr -= 1;
            if env.idle == IdleType::NewlyIdle || env.imbalance <= 0 {
                break;
            }
        }
    }

    /// can_migrate_task(): the task is allowed on the destination CPU and, by task_hot(),
    /// not cache hot (it ran less than migration_cost_ns ago) unless the domain has failed
    /// to balance more than cache_nice_tries times.
    #[inline]
    fn can_migrate_task(v: &SchedView, env: &LbEnv<'_>, t: TaskId) -> bool {
        let task = &v.tasks[t as usize];
        if task.allowed & (1u64 << env.dst_cpu) == 0 {
            return false;
        }
        let hot = v.now.saturating_sub(task.se.exec_start) < env.migration_cost_ns;
        !(hot && env.st.nr_balance_failed <= CACHE_NICE_TRIES)
    }

    /// need_active_balance(), from any idle type and to a busy CPU too: a misfit task; a
    /// task count that failed more than cache_nice_tries + 2 times; or an idle CPU facing
    /// one fair task on a CPU whose capacity RT pressure reduced below this CPU's.
    #[inline]
    fn need_active_balance(v: &SchedView, env: &LbEnv<'_>) -> bool {
        let (src, dst) = (env.src_cpu, env.dst_cpu);
        let reduced = env.dst_idle
            && v.rqs[src].cfs.nr_running == 1
            && check_cpu_capacity(v, src)
            && v.capacity_of(src) * IMBALANCE_PCT < v.capacity_of(dst) * 100;
        env.migration_type == MigrationType::Misfit
            || (env.migration_type == MigrationType::Task && env.st.nr_balance_failed > CACHE_NICE_TRIES + 2)
            || reduced
    }

    /// active_load_balance_cpu_stop(): the stopper preempts the source CPU's task, then
    /// detach_one_task() takes the least recently run fair task allowed on the destination,
    /// hot or not (the preempted one was picked last).
    fn active_load_balance_cpu_stop(v: &SchedView, env: &LbEnv<'_>) -> Option<TaskId> {
        let src_rq = &v.rqs[env.src_cpu];
        let mut fair = v.queued_fair_least_recent_first(env.src_cpu);
        fair.extend(src_rq.curr.filter(|&t| v.tasks[t as usize].policy == Policy::Other));
        fair.into_iter()
            .find(|&t| v.tasks[t as usize].allowed & (1u64 << env.dst_cpu) != 0)
    }

    /// sched_balance_domains() for one CPU at its tick: each domain bottom-up whose
    /// interval (× busy_factor when busy) has passed.
    pub fn periodic(&mut self, v: &SchedView, cpu: usize, busy: bool, tick_ns: u64) -> Vec<LbAction> {
        let mut out = Vec::new();
        for li in 0..self.levels[cpu].len() {
            let st = self.levels[cpu][li].1;
            let ivl = sd_balance_interval_ns(st.balance_interval_ms, busy, self.busy_factor, tick_ns, v.nr_cpus());
            if v.now < st.last_balance + ivl {
                continue;
            }
            let idle = if busy { IdleType::NotIdle } else { IdleType::Idle };
            let acts = self.sched_balance_rq(v, cpu, li, idle);
            self.levels[cpu][li].1.last_balance = v.now;
            let moved = !acts.is_empty();
            out.extend(acts);
            if moved {
                break; // the state changed: the next levels wait for the next tick
            }
        }
        out
    }

    /// sd->max_newidle_lb_cost of domain `d` for `cpu`: the modelled time of one pass, its
    /// span's CPUs at cost.balance_cpu_ns each, at the CPU's current speed.
    fn newidle_cost(&self, v: &SchedView, cpu: usize, d: usize) -> u64 {
        let per = v.knobs.get(crate::features::Knob::CostBalanceCpuNs) as u64;
        v.cost_ns(cpu, per * self.domains[d].span.len() as u64)
    }

    /// sched_balance_newidle(): bottom-up until a task is pulled, if some rq is overloaded.
    pub fn newidle(&mut self, v: &SchedView, cpu: usize) -> Vec<LbAction> {
        // rd->overloaded: set when a runqueue reached two tasks, cleared by a root pass
        let overloaded = v.overloaded;
        // the avg_idle cut-off: v6.12 skips when avg_idle < sd->max_newidle_lb_cost, the
        // cost of the lowest domain's past passes, here its modelled cost at this CPU's
        // current speed (costs.rs); v4.19 skipped when avg_idle < sysctl_sched_migration_cost
        let avg_idle = v.rqs[cpu].avg_idle;
        let short_idle = if v.legacy() {
            avg_idle < self.migration_cost_ns
        } else {
            self.levels[cpu]
                .first()
                .is_some_and(|l| avg_idle < self.newidle_cost(v, cpu, l.0))
        };
        if !overloaded || short_idle {
            return Vec::new();
        }
        // each level costs its pass; a level whose cost, added to the levels already
        // balanced, exceeds avg_idle ends the walk (curr_cost + sd->max_newidle_lb_cost)
        let mut curr_cost = 0;
        for li in 0..self.levels[cpu].len() {
            let sd_cost = self.newidle_cost(v, cpu, self.levels[cpu][li].0);
            if !v.legacy() && avg_idle < curr_cost + sd_cost {
                break;
            }
            curr_cost += sd_cost;
            // an active balance counts as a pull too (sched_balance_rq starts the
            // stopper from any idle type)
            let acts = self.sched_balance_rq(v, cpu, li, IdleType::NewlyIdle);
            if !acts.is_empty() {
                return acts;
            }
        }
        Vec::new()
    }
}

impl LoadBalancer for KernelLb {
    fn name(&self) -> &'static str {
        "sched_balance_rq"
    }

    fn periodic(&mut self, v: &SchedView, cpu: usize, busy: bool, tick_ns: u64) -> Vec<LbAction> {
        KernelLb::periodic(self, v, cpu, busy, tick_ns)
    }

    fn newidle(&mut self, v: &SchedView, cpu: usize) -> Vec<LbAction> {
        KernelLb::newidle(self, v, cpu)
    }

    fn nohz_balance_due(&self, v: &SchedView, cpu: usize, tick_ns: u64) -> bool {
        self.levels[cpu].iter().any(|&(_, st)| {
            v.now
                >= st.last_balance
                    + sd_balance_interval_ns(st.balance_interval_ms, false, self.busy_factor, tick_ns, v.nr_cpus())
        })
    }

    fn stats(&self) -> LbStats {
        LbStats {
            domains: Some(self.stats.clone()),
            ..Default::default()
        }
    }

    fn take_rd_flags(&mut self) -> RdFlags {
        std::mem::take(&mut self.rd)
    }

    fn set_tunables(&mut self, knobs: &Knobs) {
        self.migration_cost_ns = knobs.derived.migration_cost_ns;
        self.busy_factor = knobs.derived.busy_factor;
    }

    fn take_pass_cpus(&mut self) -> u64 {
        std::mem::take(&mut self.pass_cpus)
    }
}

/// get_sd_balance_interval(): a domain's balance interval in ns, `balance_interval_ms`
/// (× `busy_factor` when busy) in jiffies of `tick_ns`, rounded up as msecs_to_jiffies()
/// does; a busy CPU's is one jiffy shorter, so that the busy balancing periods of the
/// levels are not multiples of each other; at least one jiffy and at most
/// max_load_balance_interval, HZ·ncpu/10 jiffies.
pub fn sd_balance_interval_ns(
    balance_interval_ms: u64,
    busy: bool,
    busy_factor: u64,
    tick_ns: u64,
    ncpu: usize,
) -> u64 {
    let ms = balance_interval_ms * if busy { busy_factor } else { 1 };
    let jiffies = (ms * 1_000_000).div_ceil(tick_ns).saturating_sub(busy as u64);
    let max_jiffies = (1_000_000_000 / tick_ns * ncpu as u64 / 10).max(1);
    jiffies.clamp(1, max_jiffies) * tick_ns
}

#[cfg(test)]
mod interval_tests {
    use super::sd_balance_interval_ns;
    const MS: u64 = 1_000_000;

    #[test]
    fn the_busy_interval_is_one_jiffy_short() {
        // HZ=250 (4-ms jiffies), the 8-CPU level of an 8-CPU phone: balance_interval 8 ms
        // idle = 2 jiffies; busy 8 x 16 = 128 ms = 32 jiffies, less one = 124 ms
        assert_eq!(sd_balance_interval_ns(8, false, 16, 4 * MS, 8), 8 * MS);
        assert_eq!(sd_balance_interval_ns(8, true, 16, 4 * MS, 8), 124 * MS);
        // a 2-CPU level at HZ=1000: busy 2 x 16 = 32 jiffies, less one
        assert_eq!(sd_balance_interval_ns(2, true, 16, MS, 2), 31 * MS);
        // msecs_to_jiffies rounds up: 6 ms at HZ=250 is 2 jiffies (8 ms)
        assert_eq!(sd_balance_interval_ns(6, false, 16, 4 * MS, 8), 8 * MS);
        // busy_factor 1 and a 1-ms interval at HZ=1000: 1 jiffy less one, raised to 1
        assert_eq!(sd_balance_interval_ns(1, true, 1, MS, 4), MS);
        // at most HZ·ncpu/10 jiffies: 250 x 8 / 10 = 200 jiffies = 800 ms
        assert_eq!(sd_balance_interval_ns(100, true, 16, 4 * MS, 8), 800 * MS);
    }
}
