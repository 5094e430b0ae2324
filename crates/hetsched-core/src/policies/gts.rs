//! Global Task Scheduling (GTS), the big.LITTLE MP ("HMP") patch set of ARM and Linaro
//! (Linux 3.x, on the phones of 2013-2016), the `gts` scheduler; docs/schedulers.md.
//!
//! * **Tracked load.** Every task carries a load-tracked average of the time it is
//!   *runnable* (running or waiting), in wall-clock time, not scaled by capacity or
//!   frequency: 1024 = runnable all the time (the patches' `se->avg.load_avg_ratio`). The
//!   engine keeps it beside PELT (`Sim::hmp_load`, kept when a policy asks for it, the same geometric series, y^32 = 1/2,
//!   1024 µs periods) and hands it to this module through `SchedView::hmp_load`. A new task
//!   starts at 1024 (the patches' "initialise new task load to maximum").
//! * **HMP domains.** The clusters, slowest first (clusters of equal capacity form one
//!   domain). Up migration goes to the next faster domain, down migration to the next
//!   slower one (skipping a domain none of whose CPUs the task may use, e.g. all offline).
//! * **Up migration** (`hmp_up_migration`): a fair task not in the fastest domain whose
//!   load is at least `gts.up_threshold` (700), whose last up migration is at least
//!   `gts.next_up_delay_us` ago (4096 x 1024 ns), when an allowed CPU of the faster domain
//!   is idle: it goes to that CPU. Checked at wakeup, at fork (forkboost: every new task
//!   starts in the fastest domain), and at every tick for the running and queued tasks of
//!   every CPU (`hmp_force_up_migration`; an idle faster CPU pulling the heaviest eligible
//!   task is the same move, `hmp_idle_pull`).
//! * **Down migration** (`hmp_down_migration`): a fair task not in the slowest domain whose
//!   load is below `gts.down_threshold` (256), whose last down migration is at least
//!   `gts.next_down_delay_us` ago: at wakeup it goes to the least loaded allowed CPU of
//!   the slower domain; at the tick, a running one is offloaded to an idle slower CPU when
//!   its CPU has other tasks waiting (`hmp_offload_down`).
//! * **Hysteresis:** a task between the two thresholds stays in its domain; an up move
//!   clears the down delay and starts the up delay, and the reverse.
//! * **Otherwise** a waking task stays in its previous domain: its previous CPU if idle,
//!   else the first idle CPU of the domain from it, else its previous CPU
//!   (select_idle_sibling within the cluster, the LLC). Balancing runs the kernel's
//!   sched_balance_rq inside each cluster only (the patches clear SD_LOAD_BALANCE at the
//!   CPU level: only the HMP migrations cross clusters). RT tasks take select_task_rq_rt.
//!
//! Not modelled: the priority filter (`hmp_up_prio`, off by default), small-task packing,
//! frequency-invariant load scaling (CONFIG_HMP_FREQUENCY_INVARIANT_SCALE, off by default).

use super::{PolicyInfo, Requires, SchedPolicy, WakeKind};
use crate::balance::{LoadBalancer, Migration};
use crate::balance_fair::KernelLb;
use crate::core::{SchedView, TaskId};
use crate::features::Knob;
use crate::workload::Policy;

pub static INFO: PolicyInfo = PolicyInfo {
    name: "gts",
    summary: "Global Task Scheduling (ARM/Linaro big.LITTLE MP, HMP): tracked-load up/down migration between clusters at 700/256 of 1024 at wakeup, fork and tick; sched_balance_rq inside each cluster",
    source: "ARM/Linaro big.LITTLE MP patch set (Linux 3.x): hmp_up_migration, hmp_down_migration, hmp_force_up_migration, hmp_offload_down",
    knobs: &["gts."],
    requires: Requires::NONE,
    differences: "The tracked load is the patches' runnable-time average in wall-clock time (no frequency-invariant scaling, CONFIG_HMP_FREQUENCY_INVARIANT_SCALE off by default). Not modelled: the priority filter (hmp_up_prio), small-task packing. Balancing inside clusters is v6.12's sched_balance_rq with the cluster-spanning level dropped, not the 3.x balancer.",
    status: "docs/schedulers.md (its GTS section) has the measurements; combine with `--set hotplug=hps` for the MediaTek phones of the era.",
    controller: None,
    build: |ctx| Box::new(Gts::new(ctx.platform)),
};

pub struct Gts {
    /// HMP domains, slowest first: the CPUs of each
    domains: Vec<Vec<usize>>,
    /// each CPU's domain index
    dom_of: Vec<usize>,
    /// per task: hmp_last_up_migration / hmp_last_down_migration (ns; None = never)
    last_up: Vec<Option<u64>>,
    last_down: Vec<Option<u64>>,
    pub up_migrations: u64,
    pub down_migrations: u64,
    pub fork_boosts: u64,
}

impl Gts {
    pub fn new(platform: &crate::platform::Platform) -> Self {
        let mut caps: Vec<u64> = platform.clusters.iter().map(|c| c.capacity_orig).collect();
        caps.sort_unstable();
        caps.dedup();
        let mut domains = vec![Vec::new(); caps.len()];
        let mut dom_of = vec![0; platform.nr_cpus()];
        for c in &platform.clusters {
            let d = caps.iter().position(|&x| x == c.capacity_orig).unwrap();
            domains[d].extend_from_slice(&c.cpus);
            for &cpu in &c.cpus {
                dom_of[cpu] = d;
            }
        }
        for d in domains.iter_mut() {
            d.sort_unstable();
        }
        Gts {
            domains,
            dom_of,
            last_up: Vec::new(),
            last_down: Vec::new(),
            up_migrations: 0,
            down_migrations: 0,
            fork_boosts: 0,
        }
    }

    pub fn domain_of(&self, cpu: usize) -> usize {
        self.dom_of[cpu]
    }

    fn grow(&mut self, n: usize) {
        if self.last_up.len() < n {
            self.last_up.resize(n, None);
            self.last_down.resize(n, None);
        }
    }

    fn delay_ns(v: &SchedView, k: Knob) -> u64 {
        (v.knobs.get(k) * 1000.0) as u64
    }

    fn settled(last: Option<u64>, now: u64, delay: u64) -> bool {
        last.is_none_or(|t| now.saturating_sub(t) >= delay)
    }

    /// hmp_domain_min_load(): an allowed idle CPU of domain `d` (lowest number), excluding
    /// those in `taken`.
    fn idle_in(&self, v: &SchedView, p: TaskId, d: usize, taken: u64) -> Option<usize> {
        let allowed = v.tasks[p as usize].allowed & !taken;
        self.domains[d]
            .iter()
            .copied()
            .find(|&c| allowed & (1u64 << c) != 0 && v.idle_cpu(c))
    }

    /// hmp_select_slower_cpu(): the least loaded allowed CPU of domain `d` (fewest
    /// runnable tasks, then lowest utilisation, then lowest number).
    fn least_loaded_in(&self, v: &SchedView, p: TaskId, d: usize) -> Option<usize> {
        let allowed = v.tasks[p as usize].allowed;
        self.domains[d]
            .iter()
            .copied()
            .filter(|&c| allowed & (1u64 << c) != 0)
            .min_by_key(|&c| (v.rqs[c].nr_running(), v.cpu_util_cfs(c), c))
    }

    /// hmp_faster_domain() / hmp_slower_domain(): the next domain up (`up`) or down with a
    /// CPU the task may run on (a domain whose CPUs are all offline is skipped).
    fn next_domain(&self, v: &SchedView, p: TaskId, d: usize, up: bool) -> Option<usize> {
        let allowed = v.tasks[p as usize].allowed;
        let has = |x: usize| self.domains[x].iter().any(|&c| allowed & (1u64 << c) != 0);
        if up {
            (d + 1..self.domains.len()).find(|&x| has(x))
        } else {
            (0..d).rev().find(|&x| has(x))
        }
    }

    fn load(v: &SchedView, p: TaskId) -> u64 {
        v.hmp_load.get(p as usize).map_or(0, |a| a.util_avg)
    }

    /// hmp_up_migration(): where the task would go up, if it should.
    fn up_target(&self, v: &SchedView, p: TaskId, cpu: usize, taken: u64) -> Option<usize> {
        if v.tasks[p as usize].policy != Policy::Other {
            return None;
        }
        let d = self.next_domain(v, p, self.dom_of[cpu], true)?;
        if Self::load(v, p) < v.knobs.get(Knob::GtsUpThreshold) as u64 {
            return None;
        }
        if !Self::settled(
            self.last_up[p as usize],
            v.now,
            Self::delay_ns(v, Knob::GtsNextUpDelayUs),
        ) {
            return None;
        }
        self.idle_in(v, p, d, taken)
    }

    /// hmp_down_migration(): the domain the task should go down to, if it should.
    fn down_domain(&self, v: &SchedView, p: TaskId, cpu: usize) -> Option<usize> {
        let go = v.tasks[p as usize].policy == Policy::Other
            && Self::load(v, p) < v.knobs.get(Knob::GtsDownThreshold) as u64
            && Self::settled(
                self.last_down[p as usize],
                v.now,
                Self::delay_ns(v, Knob::GtsNextDownDelayUs),
            );
        if !go {
            return None;
        }
        self.next_domain(v, p, self.dom_of[cpu], false)
    }

    fn went_up(&mut self, p: TaskId, now: u64) {
        self.last_up[p as usize] = Some(now);
        self.last_down[p as usize] = None;
        self.up_migrations += 1;
    }

    fn went_down(&mut self, p: TaskId, now: u64) {
        self.last_down[p as usize] = Some(now);
        self.last_up[p as usize] = None;
        self.down_migrations += 1;
    }

    /// select_idle_sibling() inside prev's cluster: prev if idle, else the first idle
    /// allowed CPU of the domain from prev on, else prev (or, if prev is not allowed, the
    /// least loaded allowed CPU of the domain, else of any domain).
    fn in_domain(&self, v: &SchedView, p: TaskId, prev: usize) -> usize {
        let allowed = v.tasks[p as usize].allowed;
        let ok = |c: usize| allowed & (1u64 << c) != 0;
        if ok(prev) && v.idle_cpu(prev) {
            return prev;
        }
        let dom = &self.domains[self.dom_of[prev]];
        let start = dom.iter().position(|&c| c == prev).unwrap_or(0);
        for k in 0..dom.len() {
            let c = dom[(start + k) % dom.len()];
            if ok(c) && v.idle_cpu(c) {
                return c;
            }
        }
        if ok(prev) {
            return prev;
        }
        self.least_loaded_in(v, p, self.dom_of[prev])
            .or_else(|| (0..self.domains.len()).find_map(|d| self.least_loaded_in(v, p, d)))
            .unwrap_or(allowed.trailing_zeros() as usize)
    }
}

impl SchedPolicy for Gts {
    fn placement(&self) -> &'static str {
        "gts"
    }

    /// The kernel's balancer inside each cluster: the HMP patches clear SD_LOAD_BALANCE at
    /// the CPU (cluster-spanning) level.
    fn load_balancer(&self, v: &SchedView) -> Option<Box<dyn LoadBalancer>> {
        let mut lb = KernelLb::new(v, v.knobs.derived.migration_cost_ns, v.knobs.derived.busy_factor);
        lb.drop_level("PKG");
        Some(Box::new(lb))
    }

    fn needs_hmp_load(&self) -> bool {
        true
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn select_task_rq(&mut self, v: &SchedView, p: TaskId, prev_cpu: usize, kind: WakeKind) -> usize {
        self.grow(v.tasks.len());
        let task = &v.tasks[p as usize];
        if task.policy != Policy::Other {
            return crate::rt::select_task_rq_rt(v, p, prev_cpu);
        }
        let fastest = self.domains.len() - 1;
        if kind == WakeKind::Fork {
            // forkboost: a new task starts in the fastest domain (its load starts at 1024)
            let c = self
                .idle_in(v, p, fastest, 0)
                .or_else(|| self.least_loaded_in(v, p, fastest));
            if let Some(c) = c {
                self.fork_boosts += 1;
                self.last_up[p as usize] = Some(v.now); // hmp_next_up_delay()
                self.last_down[p as usize] = None;
                return c;
            }
            return self.in_domain(v, p, prev_cpu);
        }
        if let Some(c) = self.up_target(v, p, prev_cpu, 0) {
            self.went_up(p, v.now);
            return c;
        }
        if let Some(d) = self.down_domain(v, p, prev_cpu) {
            if let Some(c) = self.idle_in(v, p, d, 0).or_else(|| self.least_loaded_in(v, p, d)) {
                self.went_down(p, v.now);
                return c;
            }
        }
        self.in_domain(v, p, prev_cpu)
    }

    /// hmp_force_up_migration() / hmp_idle_pull() / hmp_offload_down() at the tick.
    fn balance(&mut self, v: &SchedView) -> Vec<Migration> {
        self.grow(v.tasks.len());
        let mut out = Vec::new();
        let mut taken = 0u64; // destination CPUs already used in this pass
        for cpu in 0..v.nr_cpus() {
            let rq = &v.rqs[cpu];
            let Some(curr) = rq.curr else { continue };
            // the heaviest fair task of the CPU that may go up: running or queued
            let mut cands: Vec<TaskId> = Vec::with_capacity(1 + rq.cfs.timeline.len());
            if v.tasks[curr as usize].policy == Policy::Other {
                cands.push(curr);
            }
            cands.extend(rq.cfs.timeline.iter().map(|&(_, t)| t));
            cands.sort_by_key(|&t| (std::cmp::Reverse(Self::load(v, t)), t));
            let mut moved = false;
            for t in cands {
                if let Some(dst) = self.up_target(v, t, cpu, taken) {
                    taken |= 1u64 << dst;
                    self.went_up(t, v.now);
                    out.push(Migration { task: t, src: cpu, dst });
                    moved = true;
                    break;
                }
            }
            if moved || rq.cfs.nr_running < 2 || v.tasks[curr as usize].policy != Policy::Other {
                continue;
            }
            // offload: a light running task leaves a crowded faster CPU for an idle slower one
            if let Some(d) = self.down_domain(v, curr, cpu) {
                if let Some(dst) = self.idle_in(v, curr, d, taken) {
                    taken |= 1u64 << dst;
                    self.went_down(curr, v.now);
                    out.push(Migration {
                        task: curr,
                        src: cpu,
                        dst,
                    });
                }
            }
        }
        out
    }

    fn counters(&self) -> Vec<(&'static str, serde_json::Value)> {
        vec![
            ("hmp_up_migrations", self.up_migrations.into()),
            ("hmp_down_migrations", self.down_migrations.into()),
            ("hmp_fork_boosts", self.fork_boosts.into()),
        ]
    }
}
