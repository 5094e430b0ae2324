//! WALT, window-assisted load tracking, as Qualcomm's msm-4.14 kernel/sched/walt.c has it
//! (the SM8150 / Snapdragon 855 generation; read from an SM8150 msm-4.14 tree,
//! 0wnerDied/Neptune_kernel_sm8150_oneplus kernel/sched/walt.c). It is the load tracker of
//! the `msm-4.14` kernel profile; PELT still runs beside it (the kernel keeps both), but
//! placement, EAS and schedutil read WALT.
//!
//! Time is cut into windows of `sched_ravg_window` (20 ms) aligned for every CPU. A task's
//! busy time in a window (running, and runnable-waiting: SCHED_ACCOUNT_WAIT_TIME is 1) is
//! scaled to the biggest CPU at its top frequency (scale_exec_time) and pushed into a
//! history of `sched_ravg_hist_size` windows when the window closes; its demand is, under
//! the default policy WINDOW_STATS_MAX_RECENT_AVG, the larger of the last window and the
//! history's average (update_history). A CPU's busy time (running only:
//! SCHED_FREQ_ACCOUNT_WAIT_TIME is 0; and time idle with a task blocked in I/O there,
//! sched_io_is_busy) is summed per window in curr_runnable_sum, which becomes
//! prev_runnable_sum at the rollover; schedutil reads the previous window's sum, so the
//! frequency follows what the CPU did in the last full window. A task migrating to another
//! frequency domain carries its curr and prev window contributions with it
//! (inter_cluster_migration_fixup). `cumulative_runnable_avg_scaled`, the sum of the
//! demands of the tasks queued on a CPU, is `cpu_util()` for placement.
//!
//! The predicted demand (pred_demand) follows the busy buckets of get_pred_busy(); the CPU's
//! sum of its queued tasks' predictions is the `pl` schedutil may read.
//!
//! Differences: no cycle counter (the kernel's fallback path: the current frequency scales
//! each segment, and every frequency change first accounts the segment at the old one, as
//! cpufreq_notifier_trans does); no IRQ time; the efficiency of a cluster is its
//! capacity_orig per MHz (the device tree's efficiency ratio); no related thread groups
//! (colocation, frequency aggregation), no early detection and no big-task rotation.
//! docs/mechanisms/walt.md.

use crate::core::Sim;
use crate::sched::TaskId;
use std::collections::BTreeMap;

/// RAVG_HIST_SIZE_MAX
pub const RAVG_HIST_SIZE_MAX: usize = 5;
/// NUM_BUSY_BUCKETS (walt.h)
pub const NUM_BUSY_BUCKETS: usize = 10;
/// SCHED_NEW_TASK_WINDOWS: a task is new until it has been active in this many windows
pub const SCHED_NEW_TASK_WINDOWS: u32 = 5;
/// NUM_LOAD_INDICES: top-task buckets per window
pub const NUM_LOAD_INDICES: u64 = 1000;

pub const WINDOW_STATS_RECENT: u32 = 0;
pub const WINDOW_STATS_MAX: u32 = 1;
pub const WINDOW_STATS_MAX_RECENT_AVG: u32 = 2;
pub const WINDOW_STATS_AVG: u32 = 3;

/// The events of update_task_ravg()
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RavgEvent {
    PutPrevTask,
    PickNextTask,
    TaskWake,
    TaskMigrate,
    TaskUpdate,
}

/// Who an update is for: a task, or a CPU's idle task (which has no demand of its own, but
/// whose updates roll the CPU's window and account I/O-wait busy time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Who {
    Task(TaskId),
    Idle(usize),
}

#[derive(Debug, Clone)]
pub struct WaltTunables {
    /// sched_ravg_window (ns)
    pub window: u64,
    /// sched_ravg_hist_size
    pub hist_size: usize,
    /// sched_window_stats_policy
    pub stats_policy: u32,
    /// sysctl_sched_init_task_load_pct
    pub init_task_load_pct: u64,
    /// sched_predl
    pub predl: bool,
    /// sched_io_is_busy
    pub io_is_busy: bool,
    /// sysctl_sched_freq_reporting_policy (0: max of CPU load and top task)
    pub freq_reporting_policy: u32,
}

/// struct ravg: a task's window statistics.
#[derive(Debug, Clone, Default)]
pub struct Ravg {
    pub mark_start: u64,
    pub started: bool,
    /// busy time in the current window (for demand), scaled
    pub sum: u64,
    pub sum_history: [u64; RAVG_HIST_SIZE_MAX],
    pub demand: u64,
    pub demand_scaled: u64,
    pub coloc_demand: u64,
    pub pred_demand: u64,
    pub pred_demand_scaled: u64,
    /// contribution to the CPUs' busy time in the current and previous windows
    pub curr_window: u64,
    pub prev_window: u64,
    pub curr_window_cpu: Vec<u64>,
    pub prev_window_cpu: Vec<u64>,
    pub active_windows: u32,
    pub busy_buckets: [u8; NUM_BUSY_BUCKETS],
    /// sched_exit() marked it: no more demand or window accounting
    pub exiting: bool,
    /// counted in this CPU's cumulative_runnable_avg (enqueued)
    pub queued_on: Option<usize>,
}

/// The per-CPU WALT state of struct rq.
#[derive(Debug, Clone, Default)]
pub struct WaltRq {
    pub window_start: u64,
    pub curr_runnable_sum: u64,
    pub prev_runnable_sum: u64,
    pub nt_curr_runnable_sum: u64,
    pub nt_prev_runnable_sum: u64,
    /// walt_stats: the demands and predicted demands of the queued tasks
    pub cumulative_runnable_avg_scaled: u64,
    pub pred_demands_sum_scaled: u64,
    /// the idle task's mark_start
    pub idle_mark_start: u64,
    /// top tasks: busy-time bucket -> number of tasks, for the current and previous table
    pub top_tasks: [BTreeMap<u64, u32>; 2],
    pub curr_table: usize,
    /// rq->curr as WALT sees it: the task last switched to (None: the idle task). A task
    /// that blocks stays curr until the switch, as in the kernel's __schedule().
    pub curr: Option<TaskId>,
    /// a task moved to or from this CPU across frequency domains since the last report
    pub notif_pending: bool,
    /// the flags of this CPU's last cpufreq report carried SCHED_CPUFREQ_INTERCLUSTER_MIG
    /// (sg_cpu->flags, which sugov_walt_adjust() reads for this CPU)
    pub reported_migration: bool,
    /// load subtractions of inter-cluster migrations, by window start (NUM_TRACKED_WINDOWS 2)
    pub load_subs: [(u64, u64, u64); 2],
    /// rq->old_busy_time / old_estimated_time: the busy time and prediction schedutil
    /// last saw (do_pl_notif)
    pub old_busy_time: u64,
    pub old_estimated_time: u64,
}

/// What schedutil reads of a CPU under WALT (struct sched_walt_cpu_load).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WaltCpuLoad {
    /// cpu_util_freq_walt(): the previous window's busy time (or the top task), in capacity
    /// units, capped at capacity_orig
    pub util: u64,
    /// nl: the new tasks' share of it
    pub nl: u64,
    /// pl: the queued tasks' predicted demands
    pub pl: u64,
    /// the CPU's window start (walt_load->ws)
    pub ws: u64,
    /// the CPU's last report was an inter-cluster migration's (its sg_cpu->flags)
    pub migration: bool,
}

#[derive(Debug, Clone, Default)]
pub struct WaltCounters {
    /// windows rolled over (walt_irq_work for a rollover)
    pub windows: u64,
    /// inter-cluster migration fixups (a task's windows carried to the new domain)
    pub inter_cluster_fixups: u64,
    /// cpufreq_update_util() calls the per-window filter dropped
    pub freq_updates_filtered: u64,
    /// cpufreq_update_util() calls that reached schedutil
    pub freq_updates: u64,
}

#[derive(Debug, Clone)]
pub struct Walt {
    pub tun: WaltTunables,
    pub tasks: Vec<Ravg>,
    pub rqs: Vec<WaltRq>,
    /// per CPU: capacity_orig per MHz relative to the most efficient cluster, x1024
    /// (cluster->exec_scale_factor)
    exec_scale: Vec<u64>,
    /// per CPU: the frequency domain (cluster index)
    cluster_of: Vec<usize>,
    max_possible_freq: u64,
    /// walt_irq_work_lastq_ws: the window the last rollover work was queued for
    irq_ws: u64,
    /// a rollover (or an inter-cluster migration's) irq work is pending
    pub(crate) irq_work: Option<bool>,
    pub counters: WaltCounters,
    nr_cpus: usize,
}

impl Walt {
    pub fn new(platform: &crate::platform::Platform, nr_tasks: usize, tun: WaltTunables) -> Walt {
        let n = platform.nr_cpus();
        // efficiency: capacity per kHz of f_max; exec_scale_factor = DIV_ROUND_UP(eff * 1024, max_eff)
        let eff: Vec<u128> = (0..n)
            .map(|c| {
                let ci = platform.cpu_cluster[c];
                (platform.capacity_orig(c) as u128) * 1_000_000_000 / platform.clusters[ci].fmax_khz.max(1) as u128
            })
            .collect();
        let max_eff = eff.iter().copied().max().unwrap_or(1).max(1);
        let exec_scale = eff.iter().map(|&e| (e * 1024).div_ceil(max_eff) as u64).collect();
        let max_possible_freq = platform.clusters.iter().map(|c| c.fmax_khz).max().unwrap_or(1);
        let ravg = Ravg {
            curr_window_cpu: vec![0; n],
            prev_window_cpu: vec![0; n],
            ..Default::default()
        };
        Walt {
            tasks: vec![ravg; nr_tasks],
            rqs: vec![WaltRq::default(); n],
            exec_scale,
            cluster_of: platform.cpu_cluster.clone(),
            max_possible_freq,
            irq_ws: 0,
            irq_work: None,
            counters: WaltCounters::default(),
            nr_cpus: n,
            tun,
        }
    }

    /// scale_demand(): busy time to capacity units (window >> 10 is 1)
    #[inline]
    pub fn scale_demand(&self, d: u64) -> u64 {
        d / (self.tun.window >> 10)
    }

    /// scale_exec_time(): wall time at `khz` on `cpu` as time on the most efficient CPU at
    /// the highest frequency: ceil(delta · f / f_max_possible), then · exec_scale_factor / 1024.
    #[inline]
    pub fn scale_exec_time(&self, delta: u64, cpu: usize, khz: u64) -> u64 {
        let d = (delta as u128 * khz as u128).div_ceil(self.max_possible_freq as u128) as u64;
        (d * self.exec_scale[cpu]) >> 10
    }

    /// max_task_load(): the window
    #[inline]
    fn max_task_load(&self) -> u64 {
        self.tun.window
    }

    fn is_new_task(&self, t: TaskId) -> bool {
        self.tasks[t as usize].active_windows < SCHED_NEW_TASK_WINDOWS
    }

    /// init_new_task_load(): a new task's demand and history are
    /// sysctl_sched_init_task_load_pct of the window.
    pub fn init_new_task_load(&mut self, t: TaskId) {
        let init = self.tun.init_task_load_pct * self.tun.window / 100;
        let init_scaled = self.scale_demand(init);
        let n = self.nr_cpus;
        let r = &mut self.tasks[t as usize];
        *r = Ravg {
            curr_window_cpu: vec![0; n],
            prev_window_cpu: vec![0; n],
            ..Default::default()
        };
        r.demand = init;
        r.demand_scaled = init_scaled;
        r.coloc_demand = init;
        r.sum_history = [init; RAVG_HIST_SIZE_MAX];
    }

    /// task_util() under WALT: the demand in capacity units
    #[inline]
    pub fn task_util(&self, t: TaskId) -> u64 {
        self.tasks[t as usize].demand_scaled
    }

    /// cpu_util() under WALT: the queued tasks' demands (capped by the caller)
    #[inline]
    pub fn cpu_util(&self, cpu: usize) -> u64 {
        self.rqs[cpu].cumulative_runnable_avg_scaled
    }

    /// update_window_start(): whole windows since the last one; returns the old start.
    fn update_window_start(&mut self, cpu: usize, wallclock: u64) -> u64 {
        let w = self.tun.window;
        let rq = &mut self.rqs[cpu];
        let old = rq.window_start;
        let delta = wallclock.saturating_sub(rq.window_start);
        if delta >= w {
            rq.window_start += delta / w * w;
        }
        old
    }

    fn load_to_index(&self, load: u64) -> u64 {
        (load / (self.tun.window / NUM_LOAD_INDICES)).min(NUM_LOAD_INDICES - 1)
    }

    /// top_task_load(): the previous window's biggest task on the CPU, at its bucket's top.
    fn top_task_load(&self, cpu: usize) -> u64 {
        let rq = &self.rqs[cpu];
        let prev = &rq.top_tasks[1 - rq.curr_table];
        let granule = self.tun.window / NUM_LOAD_INDICES;
        match prev.keys().next_back() {
            None => 0,
            Some(&0) => granule,
            Some(&i) if i == NUM_LOAD_INDICES - 1 => self.tun.window,
            Some(&i) => (i + 1) * granule,
        }
    }

    fn table_add(table: &mut BTreeMap<u64, u32>, idx: u64, n: i32) {
        let e = table.entry(idx).or_insert(0);
        *e = (*e as i32 + n).max(0) as u32;
        if *e == 0 {
            table.remove(&idx);
        }
    }

    /// update_top_tasks(): move the task's entry in the CPU's tables to its new bucket.
    fn update_top_tasks(&mut self, t: TaskId, cpu: usize, old_curr_window: u64, new_window: bool, full_window: bool) {
        let (curr_window, prev_window) = {
            let r = &self.tasks[t as usize];
            (r.curr_window, r.prev_window)
        };
        if old_curr_window == curr_window && !new_window {
            return;
        }
        let old_index = self.load_to_index(old_curr_window);
        let new_index = self.load_to_index(curr_window);
        let rq = &mut self.rqs[cpu];
        let (curr, prev) = (rq.curr_table, 1 - rq.curr_table);
        if !new_window {
            if old_curr_window != 0 {
                Self::table_add(&mut rq.top_tasks[curr], old_index, -1);
            }
            if curr_window != 0 {
                Self::table_add(&mut rq.top_tasks[curr], new_index, 1);
            }
            return;
        }
        // the task's windows rolled: its old current entry is now its previous window's
        let update_index = (prev_window / (self.tun.window / NUM_LOAD_INDICES)).min(NUM_LOAD_INDICES - 1);
        if full_window {
            if prev_window != 0 {
                Self::table_add(&mut rq.top_tasks[prev], update_index, 1);
            }
        } else {
            if old_curr_window != 0 {
                Self::table_add(&mut rq.top_tasks[prev], old_index, -1);
            }
            if prev_window != 0 {
                Self::table_add(&mut rq.top_tasks[prev], update_index, 1);
            }
        }
        if curr_window != 0 {
            Self::table_add(&mut rq.top_tasks[curr], new_index, 1);
        }
    }

    /// rollover_top_tasks()
    fn rollover_top_tasks(&mut self, cpu: usize, full_window: bool) {
        let rq = &mut self.rqs[cpu];
        let (curr, prev) = (rq.curr_table, 1 - rq.curr_table);
        rq.top_tasks[prev].clear();
        if full_window {
            rq.top_tasks[curr].clear();
        }
        rq.curr_table = prev;
    }

    /// rollover_task_window()
    fn rollover_task_window(&mut self, t: TaskId, full_window: bool) {
        let r = &mut self.tasks[t as usize];
        let curr = if full_window { 0 } else { r.curr_window };
        r.prev_window = curr;
        r.curr_window = 0;
        for i in 0..r.curr_window_cpu.len() {
            r.prev_window_cpu[i] = if full_window { 0 } else { r.curr_window_cpu[i] };
            r.curr_window_cpu[i] = 0;
        }
    }

    /// rollover_cpu_window()
    fn rollover_cpu_window(&mut self, cpu: usize, full_window: bool) {
        let rq = &mut self.rqs[cpu];
        let (curr, nt) = if full_window {
            (0, 0)
        } else {
            (rq.curr_runnable_sum, rq.nt_curr_runnable_sum)
        };
        rq.prev_runnable_sum = curr;
        rq.nt_prev_runnable_sum = nt;
        rq.curr_runnable_sum = 0;
        rq.nt_curr_runnable_sum = 0;
    }

    /// account_busy_for_cpu_time()
    fn busy_for_cpu_time(who: Who, is_curr: bool, io_busy: bool, event: RavgEvent) -> bool {
        match who {
            Who::Idle(_) => event != RavgEvent::PickNextTask && io_busy,
            Who::Task(_) => match event {
                RavgEvent::TaskWake => false,
                RavgEvent::PutPrevTask => true,
                // SCHED_FREQ_ACCOUNT_WAIT_TIME = 0: waiting is not CPU busy time
                RavgEvent::TaskUpdate => is_curr,
                RavgEvent::TaskMigrate | RavgEvent::PickNextTask => false,
            },
        }
    }

    /// account_busy_for_task_demand()
    fn busy_for_task_demand(
        &self,
        t: TaskId,
        is_curr: bool,
        queued: bool,
        cpu_idle_before: bool,
        event: RavgEvent,
    ) -> bool {
        if self.tasks[t as usize].exiting {
            return false;
        }
        match event {
            RavgEvent::TaskWake => false,
            // the idle exit is not accounted to the first task picked on an idle CPU
            RavgEvent::PickNextTask if cpu_idle_before => false,
            // SCHED_ACCOUNT_WAIT_TIME = 1: runnable waiting counts in the demand
            RavgEvent::TaskUpdate => is_curr || queued,
            _ => true,
        }
    }

    /// bucket_increase()
    fn bucket_increase(buckets: &mut [u8; NUM_BUSY_BUCKETS], idx: usize) {
        const INC_STEP: u8 = 8;
        const DEC_STEP: u8 = 2;
        const CONSISTENT_THRES: u8 = 16;
        const INC_STEP_BIG: u8 = 16;
        for (i, b) in buckets.iter_mut().enumerate() {
            if i != idx {
                *b = b.saturating_sub(DEC_STEP);
            } else {
                let step = if *b >= CONSISTENT_THRES { INC_STEP_BIG } else { INC_STEP };
                *b = b.saturating_add(step);
            }
        }
    }

    /// busy_to_bucket(): the lowest two buckets are one
    fn busy_to_bucket(&self, runtime: u64) -> usize {
        let b = ((runtime * NUM_BUSY_BUCKETS as u64) / self.max_task_load()).min(NUM_BUSY_BUCKETS as u64 - 1) as usize;
        b.max(1)
    }

    /// get_pred_busy(): the latest history entry in the first non-empty bucket at or above
    /// `start`, else that bucket's middle; never below `runtime`.
    fn get_pred_busy(&self, t: TaskId, start: usize, runtime: u64) -> u64 {
        if self.is_new_task(t) {
            return runtime;
        }
        let r = &self.tasks[t as usize];
        let Some(first) = (start..NUM_BUSY_BUCKETS).find(|&i| r.busy_buckets[i] != 0) else {
            return runtime;
        };
        let mtl = self.max_task_load();
        let (dmin, final_) = if first < 2 {
            (0, 1)
        } else {
            (first as u64 * mtl / NUM_BUSY_BUCKETS as u64, first)
        };
        let dmax = (final_ as u64 + 1) * mtl / NUM_BUSY_BUCKETS as u64;
        let mut ret = runtime;
        if let Some(&h) = r.sum_history[..self.tun.hist_size]
            .iter()
            .find(|&&h| h >= dmin && h < dmax)
        {
            ret = h;
        }
        if ret < dmin {
            ret = (dmin + dmax) / 2;
        }
        ret.max(runtime)
    }

    /// A queued task's demand changed: fix the CPU's sums (fixup_walt_sched_stats_common).
    fn fixup_sched_stats(&mut self, t: TaskId, demand_scaled: u64, pred_scaled: u64) {
        let r = &self.tasks[t as usize];
        if let Some(cpu) = r.queued_on {
            let (old_d, old_p) = (r.demand_scaled, r.pred_demand_scaled);
            let rq = &mut self.rqs[cpu];
            rq.cumulative_runnable_avg_scaled =
                (rq.cumulative_runnable_avg_scaled + demand_scaled).saturating_sub(old_d);
            rq.pred_demands_sum_scaled = (rq.pred_demands_sum_scaled + pred_scaled).saturating_sub(old_p);
        }
    }

    /// update_history(): push `samples` windows of `runtime` and recompute the demand.
    fn update_history(&mut self, t: TaskId, runtime: u64, samples: u64) {
        if runtime == 0 || samples == 0 || self.tasks[t as usize].exiting {
            return;
        }
        let hs = self.tun.hist_size;
        let r = &mut self.tasks[t as usize];
        let hist = &mut r.sum_history;
        let samples = samples.min(hs as u64) as usize;
        for w in (samples..hs).rev() {
            hist[w] = hist[w - samples];
        }
        for h in hist.iter_mut().take(samples) {
            *h = runtime;
        }
        let sum: u64 = hist[..hs].iter().sum();
        let max = hist[..hs].iter().copied().max().unwrap_or(0);
        r.sum = 0;
        // predict_and_update_buckets() runs once the new window is in the history, so
        // get_pred_busy()'s search of it finds this window's runtime first
        let pred_demand = if self.tun.predl {
            let bidx = self.busy_to_bucket(runtime);
            let p = self.get_pred_busy(t, bidx, runtime);
            Self::bucket_increase(&mut self.tasks[t as usize].busy_buckets, bidx);
            p
        } else {
            0
        };
        let avg = sum / hs as u64;
        let demand = match self.tun.stats_policy {
            WINDOW_STATS_RECENT => runtime,
            WINDOW_STATS_MAX => max,
            WINDOW_STATS_AVG => avg,
            _ => avg.max(runtime),
        };
        let (ds, ps) = (self.scale_demand(demand), self.scale_demand(pred_demand));
        self.fixup_sched_stats(t, ds, ps);
        let r = &mut self.tasks[t as usize];
        r.demand = demand;
        r.demand_scaled = ds;
        r.coloc_demand = avg;
        r.pred_demand = pred_demand;
        r.pred_demand_scaled = ps;
    }

    /// add_to_task_demand()
    fn add_to_task_demand(&mut self, t: TaskId, cpu: usize, khz: u64, delta: u64) -> u64 {
        let d = self.scale_exec_time(delta, cpu, khz);
        let w = self.tun.window;
        let r = &mut self.tasks[t as usize];
        r.sum = (r.sum + d).min(w);
        d
    }

    /// update_task_demand()
    #[allow(clippy::too_many_arguments)]
    fn update_task_demand(&mut self, t: TaskId, cpu: usize, khz: u64, busy: bool, wallclock: u64) {
        let mark_start = self.tasks[t as usize].mark_start;
        let window_start = self.rqs[cpu].window_start;
        let w = self.tun.window;
        let new_window = mark_start < window_start;
        if !busy {
            if new_window {
                let sum = self.tasks[t as usize].sum;
                self.update_history(t, sum, 1);
            }
            return;
        }
        if !new_window {
            self.add_to_task_demand(t, cpu, khz, wallclock - mark_start);
            return;
        }
        let nr_full = (window_start - mark_start) / w;
        let ws = window_start - nr_full * w;
        self.add_to_task_demand(t, cpu, khz, ws - mark_start);
        let sum = self.tasks[t as usize].sum;
        self.update_history(t, sum, 1);
        if nr_full > 0 {
            let scaled = self.scale_exec_time(w, cpu, khz);
            self.update_history(t, scaled, nr_full);
        }
        self.add_to_task_demand(t, cpu, khz, wallclock - window_start);
    }

    /// update_cpu_busy_time()
    #[allow(clippy::too_many_arguments)]
    fn update_cpu_busy_time(&mut self, who: Who, cpu: usize, khz: u64, is_curr: bool, busy: bool, wallclock: u64) {
        let mark_start = match who {
            Who::Task(t) => self.tasks[t as usize].mark_start,
            Who::Idle(c) => self.rqs[c].idle_mark_start,
        };
        let window_start = self.rqs[cpu].window_start;
        let w = self.tun.window;
        let new_window = mark_start < window_start;
        let full_window = new_window && window_start - mark_start >= w;
        let task = match who {
            Who::Task(t) => Some(t),
            Who::Idle(_) => None,
        };
        let exiting = task.is_some_and(|t| self.tasks[t as usize].exiting);
        let old_curr_window = task.map_or(0, |t| self.tasks[t as usize].curr_window);
        if let Some(t) = task {
            if new_window && self.tasks[t as usize].active_windows < u16::MAX as u32 {
                self.tasks[t as usize].active_windows += 1;
            }
        }
        let new_task = task.is_some_and(|t| self.is_new_task(t));
        if let Some(t) = task {
            if !exiting && new_window {
                self.rollover_task_window(t, full_window);
            }
        }
        if is_curr && new_window {
            self.rollover_cpu_window(cpu, full_window);
            self.rollover_top_tasks(cpu, full_window);
        }
        if busy {
            let track = task.filter(|_| !exiting);
            if !new_window {
                let d = self.scale_exec_time(wallclock - mark_start, cpu, khz);
                let rq = &mut self.rqs[cpu];
                rq.curr_runnable_sum += d;
                if new_task {
                    rq.nt_curr_runnable_sum += d;
                }
                if let Some(t) = track {
                    let r = &mut self.tasks[t as usize];
                    r.curr_window += d;
                    r.curr_window_cpu[cpu] += d;
                }
            } else {
                // the part before the window start goes to the previous window (a whole
                // window if one or more passed), the rest to the current one
                let (prev_d, whole) = if full_window {
                    (self.scale_exec_time(w, cpu, khz), true)
                } else {
                    (self.scale_exec_time(window_start - mark_start, cpu, khz), false)
                };
                if let Some(t) = track {
                    let r = &mut self.tasks[t as usize];
                    if whole {
                        r.prev_window = prev_d;
                        r.prev_window_cpu[cpu] = prev_d;
                    } else {
                        r.prev_window += prev_d;
                        r.prev_window_cpu[cpu] += prev_d;
                    }
                }
                let curr_d = self.scale_exec_time(wallclock - window_start, cpu, khz);
                let rq = &mut self.rqs[cpu];
                rq.prev_runnable_sum += prev_d;
                rq.curr_runnable_sum += curr_d;
                if new_task {
                    rq.nt_prev_runnable_sum += prev_d;
                    rq.nt_curr_runnable_sum += curr_d;
                }
                if let Some(t) = track {
                    let r = &mut self.tasks[t as usize];
                    r.curr_window = curr_d;
                    r.curr_window_cpu[cpu] = curr_d;
                }
            }
        }
        if let Some(t) = task.filter(|_| !exiting) {
            self.update_top_tasks(t, cpu, old_curr_window, new_window, full_window);
        }
    }

    /// update_task_pred_demand(): a task whose current window already exceeds its
    /// prediction raises it now (PUT_PREV_TASK and TASK_UPDATE only).
    fn update_task_pred_demand(&mut self, t: TaskId, is_curr: bool, queued: bool, event: RavgEvent) {
        if !self.tun.predl || self.tasks[t as usize].exiting {
            return;
        }
        if event != RavgEvent::PutPrevTask && event != RavgEvent::TaskUpdate {
            return;
        }
        if event == RavgEvent::TaskUpdate && !is_curr && !queued {
            return;
        }
        let r = &self.tasks[t as usize];
        let new = if r.pred_demand >= r.curr_window {
            r.pred_demand
        } else {
            self.get_pred_busy(t, self.busy_to_bucket(r.curr_window), r.curr_window)
        };
        if r.pred_demand >= new {
            return;
        }
        let ns = self.scale_demand(new);
        let ds = r.demand_scaled;
        self.fixup_sched_stats(t, ds, ns);
        let r = &mut self.tasks[t as usize];
        r.pred_demand = new;
        r.pred_demand_scaled = ns;
    }

    /// inc_rq_walt_stats(): the task is enqueued on `cpu`.
    pub fn inc_stats(&mut self, t: TaskId, cpu: usize) {
        let r = &mut self.tasks[t as usize];
        if r.queued_on.is_some() {
            return;
        }
        r.queued_on = Some(cpu);
        let (d, p) = (r.demand_scaled, r.pred_demand_scaled);
        let rq = &mut self.rqs[cpu];
        rq.cumulative_runnable_avg_scaled += d;
        rq.pred_demands_sum_scaled += p;
    }

    /// dec_rq_walt_stats(): the task leaves its runqueue.
    pub fn dec_stats(&mut self, t: TaskId) {
        let r = &mut self.tasks[t as usize];
        let Some(cpu) = r.queued_on.take() else { return };
        let (d, p) = (r.demand_scaled, r.pred_demand_scaled);
        let rq = &mut self.rqs[cpu];
        rq.cumulative_runnable_avg_scaled = rq.cumulative_runnable_avg_scaled.saturating_sub(d);
        rq.pred_demands_sum_scaled = rq.pred_demands_sum_scaled.saturating_sub(p);
    }

    /// inter_cluster_migration_fixup() and migrate_top_tasks() of fixup_busy_time(): the
    /// task's window contributions follow it to another frequency domain; inside one
    /// domain they stay where they were earned (the domain's frequency reads them all).
    pub fn migration_fixup(&mut self, t: TaskId, src: usize, dst: usize) {
        let new_task = self.is_new_task(t);
        let (cw, pw) = {
            let r = &self.tasks[t as usize];
            (r.curr_window, r.prev_window)
        };
        // migrate_top_tasks()
        {
            let gran = self.tun.window / NUM_LOAD_INDICES;
            let idx = |l: u64| (l / gran).min(NUM_LOAD_INDICES - 1);
            if cw != 0 {
                let (s, d) = (self.rqs[src].curr_table, self.rqs[dst].curr_table);
                Self::table_add(&mut self.rqs[src].top_tasks[s], idx(cw), -1);
                Self::table_add(&mut self.rqs[dst].top_tasks[d], idx(cw), 1);
            }
            if pw != 0 {
                let (s, d) = (1 - self.rqs[src].curr_table, 1 - self.rqs[dst].curr_table);
                Self::table_add(&mut self.rqs[src].top_tasks[s], idx(pw), -1);
                Self::table_add(&mut self.rqs[dst].top_tasks[d], idx(pw), 1);
            }
        }
        if self.cluster_of[src] == self.cluster_of[dst] {
            return;
        }
        self.counters.inter_cluster_fixups += 1;
        self.rqs[src].notif_pending = true;
        self.rqs[dst].notif_pending = true;
        let (src_c, src_p) = {
            let r = &mut self.tasks[t as usize];
            r.curr_window_cpu[dst] = cw;
            r.prev_window_cpu[dst] = pw;
            let v = (r.curr_window_cpu[src], r.prev_window_cpu[src]);
            r.curr_window_cpu[src] = 0;
            r.prev_window_cpu[src] = 0;
            v
        };
        {
            let d = &mut self.rqs[dst];
            d.curr_runnable_sum += cw;
            d.prev_runnable_sum += pw;
            if new_task {
                d.nt_curr_runnable_sum += cw;
                d.nt_prev_runnable_sum += pw;
            }
        }
        {
            let s = &mut self.rqs[src];
            s.curr_runnable_sum = s.curr_runnable_sum.saturating_sub(src_c);
            s.prev_runnable_sum = s.prev_runnable_sum.saturating_sub(src_p);
            if new_task {
                s.nt_curr_runnable_sum = s.nt_curr_runnable_sum.saturating_sub(src_c);
                s.nt_prev_runnable_sum = s.nt_prev_runnable_sum.saturating_sub(src_p);
            }
        }
        // update_cluster_load_subtractions(): what the task earned on the src cluster's
        // other CPUs leaves their sums at the next irq work
        let ws = self.rqs[src].window_start;
        let prev_ws = ws.saturating_sub(self.tun.window);
        let cl = self.cluster_of[src];
        for i in 0..self.nr_cpus {
            if i == src || self.cluster_of[i] != cl {
                continue;
            }
            let (c, p) = {
                let r = &mut self.tasks[t as usize];
                let v = (r.curr_window_cpu[i], r.prev_window_cpu[i]);
                r.curr_window_cpu[i] = 0;
                r.prev_window_cpu[i] = 0;
                v
            };
            if c != 0 {
                Self::add_subtraction(&mut self.rqs[i], ws, c, if new_task { c } else { 0 });
            }
            if p != 0 {
                Self::add_subtraction(&mut self.rqs[i], prev_ws, p, if new_task { p } else { 0 });
            }
        }
        self.irq_work.get_or_insert(true);
    }

    /// get_subtraction_index() + update_rq_load_subtractions()
    fn add_subtraction(rq: &mut WaltRq, ws: u64, subs: u64, new_subs: u64) {
        let i = match rq.load_subs.iter().position(|e| e.0 == ws) {
            Some(i) => i,
            None => {
                let i = if rq.load_subs[0].0 <= rq.load_subs[1].0 { 0 } else { 1 };
                rq.load_subs[i] = (ws, 0, 0);
                i
            }
        };
        rq.load_subs[i].1 += subs;
        rq.load_subs[i].2 += new_subs;
    }

    /// account_load_subtractions()
    pub fn account_load_subtractions(&mut self, cpu: usize) {
        let w = self.tun.window;
        let rq = &mut self.rqs[cpu];
        let ws = rq.window_start;
        let prev_ws = ws.wrapping_sub(w);
        for i in 0..2 {
            let (e_ws, subs, new_subs) = rq.load_subs[i];
            if subs != 0 || new_subs != 0 {
                if e_ws == ws {
                    rq.curr_runnable_sum = rq.curr_runnable_sum.saturating_sub(subs);
                    rq.nt_curr_runnable_sum = rq.nt_curr_runnable_sum.saturating_sub(new_subs);
                } else if e_ws == prev_ws {
                    rq.prev_runnable_sum = rq.prev_runnable_sum.saturating_sub(subs);
                    rq.nt_prev_runnable_sum = rq.nt_prev_runnable_sum.saturating_sub(new_subs);
                }
            }
            rq.load_subs[i].1 = 0;
            rq.load_subs[i].2 = 0;
        }
    }

    /// freq_policy_load() scaled as cpu_util_freq_walt() returns it, with nl and pl
    /// (sched_load_boost 0).
    pub fn cpu_load(&self, cpu: usize, capacity_orig: u64) -> WaltCpuLoad {
        let rq = &self.rqs[cpu];
        let mut load = rq.prev_runnable_sum;
        if self.tun.freq_reporting_policy == 0 {
            load = load.max(self.top_task_load(cpu));
        } else if self.tun.freq_reporting_policy == 1 {
            load = self.top_task_load(cpu);
        }
        let div = self.tun.window >> 10;
        WaltCpuLoad {
            util: (load / div).min(capacity_orig),
            nl: rq.nt_prev_runnable_sum / div,
            pl: rq.pred_demands_sum_scaled,
            ws: rq.window_start,
            migration: rq.reported_migration,
        }
    }
}

/// MIN_SCHED_RAVG_WINDOW: 20 ms, or six ticks of 3333333 ns when HZ is 300 (the tick
/// interval rounds down there).
pub fn min_sched_ravg_window(tick_hz: f64) -> u64 {
    if tick_hz == 300.0 {
        3_333_333 * 6
    } else {
        20_000_000
    }
}

/// The WALT tunables from the knobs; a window outside [MIN, MAX]_SCHED_RAVG_WINDOW is an
/// error (set_sched_ravg_window() refuses it).
pub fn tunables(knobs: &crate::features::Knobs) -> crate::error::Result<WaltTunables> {
    use crate::features::Knob;
    let min = min_sched_ravg_window(knobs.get(Knob::TickHz));
    let w = knobs.get(Knob::SchedRavgWindow) as u64;
    if w != 0 && !(min..=1_000_000_000).contains(&w) {
        return Err(crate::error::config(
            "policy",
            "knobs.sched_ravg_window",
            format!("0 (the default) or a window of {min} to 1000000000 ns, got {w}"),
        ));
    }
    Ok(WaltTunables {
        window: if w == 0 { min } else { w },
        hist_size: knobs.get(Knob::SchedRavgHistSize) as usize,
        stats_policy: knobs.get(Knob::SchedWindowStatsPolicy) as u32,
        init_task_load_pct: knobs.get(Knob::SchedInitTaskLoadPct) as u64,
        predl: knobs.get(Knob::SchedPredl) > 0.0,
        io_is_busy: knobs.get(Knob::SchedIoIsBusy) > 0.0,
        freq_reporting_policy: knobs.get(Knob::SchedFreqReportingPolicy) as u32,
    })
}

impl Sim {
    #[inline]
    pub(crate) fn walt_on(&self) -> bool {
        self.walt.is_some()
    }

    /// A CPU's idle state counts as busy while a task blocked in I/O waits there
    /// (cpu_is_waiting_on_io(): rq->nr_iowait, with sched_io_is_busy).
    fn walt_io_busy(&self, cpu: usize) -> bool {
        self.walt.as_ref().is_some_and(|w| w.tun.io_is_busy) && self.nr_iowait_cpu(cpu) > 0
    }

    /// update_task_ravg(p, rq, event, now)
    pub(crate) fn walt_update(&mut self, who: Who, cpu: usize, event: RavgEvent) {
        if self.walt.is_none() {
            return;
        }
        let now = self.now;
        let khz = self.khz(cpu);
        let wcurr = self.walt.as_ref().unwrap().rqs[cpu].curr;
        let is_curr = match who {
            Who::Task(t) => wcurr == Some(t),
            Who::Idle(_) => wcurr.is_none(),
        };
        let queued = match who {
            Who::Task(t) => self.walt.as_ref().unwrap().tasks[t as usize].queued_on.is_some(),
            Who::Idle(_) => false,
        };
        let cpu_idle_before = wcurr.is_none();
        let io_busy = matches!(who, Who::Idle(_)) && self.walt_io_busy(cpu);
        let w = self.walt.as_mut().unwrap();
        let mark_start = match who {
            Who::Task(t) => w.tasks[t as usize].mark_start,
            Who::Idle(c) => w.rqs[c].idle_mark_start,
        };
        let started = match who {
            Who::Task(t) => w.tasks[t as usize].started,
            Who::Idle(_) => true,
        };
        if started && mark_start == now {
            return;
        }
        let old_ws = w.update_window_start(cpu, now);
        if started {
            if let Who::Task(t) = who {
                let busy = w.busy_for_task_demand(t, is_curr, queued, cpu_idle_before, event);
                w.update_task_demand(t, cpu, khz, busy, now);
            }
            let busy = Walt::busy_for_cpu_time(who, is_curr, io_busy, event);
            w.update_cpu_busy_time(who, cpu, khz, is_curr, busy, now);
            if let Who::Task(t) = who {
                w.update_task_pred_demand(t, is_curr, queued, event);
            }
        }
        match who {
            Who::Task(t) => {
                w.tasks[t as usize].mark_start = now;
                w.tasks[t as usize].started = true;
            }
            Who::Idle(c) => w.rqs[c].idle_mark_start = now,
        }
        // run_walt_irq_work(): the first CPU into a new window queues the rollover work
        let ws = w.rqs[cpu].window_start;
        if old_ws != ws && ws > w.irq_ws {
            w.irq_ws = ws;
            w.irq_work = Some(false);
        }
    }

    /// update_task_ravg() for what runs on `cpu` (rq->curr: a task or the idle task).
    pub(crate) fn walt_update_curr(&mut self, cpu: usize, event: RavgEvent) {
        let Some(w) = self.walt.as_ref() else { return };
        let who = match w.rqs[cpu].curr {
            Some(t) => Who::Task(t),
            None => Who::Idle(cpu),
        };
        self.walt_update(who, cpu, event);
    }

    /// __schedule()'s WALT updates: the same task again is one TASK_UPDATE; a switch is
    /// PUT_PREV_TASK of rq->curr and PICK_NEXT_TASK of the next one at the same instant,
    /// and the next becomes rq->curr.
    pub(crate) fn walt_schedule(&mut self, cpu: usize, next: Option<TaskId>) {
        let Some(w) = self.walt.as_ref() else { return };
        if w.rqs[cpu].curr == next {
            self.walt_update_curr(cpu, RavgEvent::TaskUpdate);
            return;
        }
        self.walt_update_curr(cpu, RavgEvent::PutPrevTask);
        self.walt_update(next.map_or(Who::Idle(cpu), Who::Task), cpu, RavgEvent::PickNextTask);
        self.walt.as_mut().unwrap().rqs[cpu].curr = next;
    }

    /// walt_try_to_wake_up(): the waking task's sleep ends on the CPU it slept on.
    pub(crate) fn walt_wake(&mut self, t: TaskId, prev: usize) {
        if self.walt.is_none() {
            return;
        }
        self.walt_update_curr(prev, RavgEvent::TaskUpdate);
        self.walt_update(Who::Task(t), prev, RavgEvent::TaskWake);
    }

    /// fixup_busy_time() from set_task_cpu(): both CPUs' current tasks and the task are
    /// brought up to now on their CPUs, then its window contributions move.
    pub(crate) fn walt_migrate(&mut self, t: TaskId, src: usize, dst: usize) {
        if self.walt.is_none() || src == dst {
            return;
        }
        self.walt_update_curr(src, RavgEvent::TaskUpdate);
        self.walt_update_curr(dst, RavgEvent::TaskUpdate);
        self.walt_update(Who::Task(t), src, RavgEvent::TaskMigrate);
        self.walt.as_mut().unwrap().migration_fixup(t, src, dst);
    }

    /// A task forked from template `k` at run time: WALT's and schedtune's per-task state
    /// grow with it, the child in its parent's boost group (cgroups are inherited).
    pub(crate) fn walt_fork(&mut self, k: TaskId, child: TaskId) {
        if let Some(w) = self.walt.as_mut() {
            let n = w.nr_cpus;
            while w.tasks.len() <= child as usize {
                w.tasks.push(Ravg {
                    curr_window_cpu: vec![0; n],
                    prev_window_cpu: vec![0; n],
                    ..Default::default()
                });
            }
        }
        if let Some(st) = self.stune.as_mut() {
            let g = st.task_group[k as usize];
            while st.task_group.len() <= child as usize {
                st.task_group.push(g);
            }
        }
    }

    /// wake_up_new_task(): init_new_task_load() and mark_task_starting().
    pub(crate) fn walt_new_task(&mut self, t: TaskId) {
        let now = self.now;
        if let Some(w) = self.walt.as_mut() {
            w.init_new_task_load(t);
            let r = &mut w.tasks[t as usize];
            r.mark_start = now;
            r.started = true;
        }
    }

    /// sched_exit(): the task's windows are no longer its own (its CPU busy time stays).
    pub(crate) fn walt_exit(&mut self, cpu: usize, t: TaskId) {
        if self.walt.is_none() {
            return;
        }
        self.walt_update_curr(cpu, RavgEvent::TaskUpdate);
        self.walt_dequeue(t);
        let w = self.walt.as_mut().unwrap();
        let r = &mut w.tasks[t as usize];
        r.exiting = true;
        r.curr_window = 0;
        r.prev_window = 0;
    }

    /// inc_rq_walt_stats() and schedtune_enqueue_task()
    pub(crate) fn walt_enqueue(&mut self, cpu: usize, t: TaskId) {
        if let Some(w) = self.walt.as_mut() {
            if !w.tasks[t as usize].exiting && w.tasks[t as usize].queued_on.is_none() {
                w.inc_stats(t, cpu);
                if let Some(st) = self.stune.as_mut() {
                    st.enqueue(t as usize, cpu, self.tasks[t as usize].is_rt(), self.now);
                }
            }
        }
    }

    /// dec_rq_walt_stats() and schedtune_dequeue_task()
    pub(crate) fn walt_dequeue(&mut self, t: TaskId) {
        if let Some(w) = self.walt.as_mut() {
            if let Some(cpu) = w.tasks[t as usize].queued_on {
                w.dec_stats(t);
                if let Some(st) = self.stune.as_mut() {
                    st.dequeue(t as usize, cpu);
                }
            }
        }
    }

    /// schedtune_cpu_margin(): the boost of the CPU's groups applied to `util`.
    pub(crate) fn schedtune_cpu_margin(&self, cpu: usize, util: u64) -> i64 {
        let Some(st) = self.stune.as_ref() else { return 0 };
        let b = st.cpu_boost(cpu, self.now);
        if b == 0 {
            return 0;
        }
        crate::schedtune::schedtune_margin(util, b)
    }

    /// walt_irq_work(): after a window rollover (or an inter-cluster migration) every CPU's
    /// current task is brought up to now, the pending load subtractions applied, and
    /// cpufreq is told, cluster by cluster (the SCHED_CPUFREQ_CONTINUE calls record, the
    /// last one evaluates). A rollover also runs core_ctl's evaluation.
    pub(crate) fn walt_irq_work(&mut self) {
        let Some(is_migration) = self.walt.as_mut().and_then(|w| w.irq_work.take()) else {
            return;
        };
        let n = self.rqs.len();
        for cpu in 0..n {
            self.walt_update_curr(cpu, RavgEvent::TaskUpdate);
            self.walt.as_mut().unwrap().account_load_subtractions(cpu);
        }
        if !is_migration {
            self.walt.as_mut().unwrap().counters.windows += 1;
        }
        // core_ctl_check() of a rollover comes after cpufreq's reports (below)
        // the same work queued again by the updates just made is this one
        if let Some(w) = self.walt.as_mut() {
            w.irq_work = None;
        }
        for ci in 0..self.platform.clusters.len() {
            let Some(&last) = self.platform.clusters[ci].cpus.last() else {
                continue;
            };
            // each CPU reports with its own flags: a migration's report marks the CPUs the
            // task left and joined (notif_pending), the others report without the mark
            let mut flag = crate::cpufreq::SCHED_CPUFREQ_WALT;
            let w = self.walt.as_mut().unwrap();
            for &c in &self.platform.clusters[ci].cpus {
                let mig = is_migration && std::mem::take(&mut w.rqs[c].notif_pending);
                w.rqs[c].reported_migration = mig;
                if mig {
                    flag |= crate::cpufreq::SCHED_CPUFREQ_INTERCLUSTER_MIG;
                }
            }
            self.cpufreq_update_util(last, flag);
        }
        if !is_migration {
            let mut extensions = std::mem::take(&mut self.extensions);
            for e in extensions.iter_mut() {
                e.window_rollover(self);
            }
            self.extensions = extensions;
        }
    }

    /// msm-4.14's cpufreq_update_util() under WALT passes only WALT's own reports
    /// (SCHED_CPUFREQ_WALT: the rollover and migration work); the scheduler's other calls
    /// (enqueue, PELT decay, RT) are dropped. Returns false when the call is dropped.
    pub(crate) fn walt_cpufreq_filter(&mut self, _cpu: usize, flags: u32) -> bool {
        let Some(w) = self.walt.as_mut() else { return true };
        if flags & crate::cpufreq::SCHED_CPUFREQ_WALT == 0 {
            w.counters.freq_updates_filtered += 1;
            return false;
        }
        w.counters.freq_updates += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use crate::testutils::{costs_off, run_sleep_mix, two_cluster_platform};
    use crate::{PolicyConfig, Sim};
    use serde_json::json;

    /// A window rollover noticed inside schedule() (after the event's own irq_work check)
    /// queues the rollover work; it runs at that same instant, as the kernel's self-IPI
    /// does, so that no later event (whichever comes next) decides when it runs.
    #[test]
    fn rollover_work_never_waits_for_the_next_event() {
        let pol: PolicyConfig = costs_off(
            serde_json::from_value(json!({"scheduler": "cfs", "governor": "schedutil",
                "idle_governor": "menu", "kernel": "msm-4.14"}))
            .unwrap(),
        );
        let mut sim = Sim::new(
            two_cluster_platform(),
            run_sleep_mix(6, 700_000, 130_000, 1_900_000, 310_000),
            pol,
        )
        .unwrap();
        let mut rollovers = 0;
        while sim.now < 2_000_000_000 && sim.step() {
            let w = sim.walt.as_ref().unwrap();
            assert!(w.irq_work.is_none(), "rollover work left pending at {} ns", sim.now);
            rollovers = w.counters.windows;
        }
        // 2 s of 20 ms windows
        assert!(rollovers >= 99, "{rollovers} rollovers");
    }

    /// update_history() pushes the new window before predict_and_update_buckets(), so
    /// get_pred_busy()'s search of the history finds that window's runtime first.
    #[test]
    fn the_prediction_searches_the_history_with_the_new_window_in_it() {
        let knobs = crate::features::Knobs::default();
        let tun = super::tunables(&knobs).unwrap();
        assert_eq!((tun.window, tun.hist_size), (20_000_000, 5));
        let mut w = super::Walt::new(&two_cluster_platform(), 1, tun);
        let ms = 1_000_000;
        let r = &mut w.tasks[0];
        r.active_windows = super::SCHED_NEW_TASK_WINDOWS; // no longer a new task
        r.sum_history = [15 * ms / 2; super::RAVG_HIST_SIZE_MAX]; // five windows of 7.5 ms
        r.busy_buckets[3] = 8; // 10 buckets of 2 ms: bucket 3 holds 6-8 ms
        w.update_history(0, 13 * ms / 2, 1);
        // a window of 6.5 ms, bucket 3: the first history entry in [6, 8) ms is the new
        // window's own 6.5 ms (from the old history alone it would be 7.5 ms)
        assert_eq!(w.tasks[0].sum_history[0], 13 * ms / 2);
        assert_eq!(w.tasks[0].pred_demand, 13 * ms / 2);
    }
}
