//! MediaTek's Hot Plug Strategy (hps), `--set hotplug=hps` (= `hotplug.hps=1`): every
//! `hps.period_ms` (40 ms) it measures each online CPU's load (busy % of the period, not
//! scaled by frequency or capacity), sums them, and keeps online only as many CPUs as that
//! sum needs; docs/schedulers.md.
//!
//! The decision (after hps_algo_hmp() of mt_hotplug_strategy_algo.c), one action per period:
//! 1. **base:** as many big CPUs as there are heavy tasks (tracked load at or above
//!    `gts.up_threshold`, the HMP scheduler's count the algorithm reads) are kept online;
//! 2. **up:** if the load sum over the last `hps.up_times` periods exceeds
//!    `hps.up_threshold` % x periods x online CPUs, one more CPU goes online, a LITTLE one
//!    while any is offline, else a big one;
//! 3. **down:** over the last `hps.down_times` periods, while the sum is below
//!    `hps.down_threshold` % x periods x (online - 1), one CPU fewer is needed; the
//!    surplus goes offline, big CPUs first (highest number first) down to the base, then
//!    LITTLE ones; the first CPU of the slowest cluster (CPU 0) never goes offline.
//!
//! After an action the load histories start again. "LITTLE" is the slowest cluster, "big"
//! every other one, onlined slowest cluster first. Not modelled: rush boost and the
//! task-level-parallelism input, input boost, thermal and low-battery limits, and the
//! time cpu_up/cpu_down take (a hotplug here is instantaneous).
//!
//! An offline CPU runs nothing: it leaves every task's effective affinity (a task allowed
//! only on offline CPUs may run on any online one, as select_fallback_rq() breaks
//! affinity), its queued and running tasks move away when it goes down, it takes no part
//! in balancing, and it sits in its cluster's deepest idle state (a hot-unplugged core is
//! powered down like the deepest CPU-level state; when its whole idle domain is down or
//! idle, the cluster-level state applies), drawing that state's power.

use super::{Extension, ExtensionInfo};
use crate::balance::Migration;
use crate::core::*;
use crate::energy::CpuPowerState;
use crate::features::{Knob, Knobs};
use crate::platform::Platform;
use crate::workload::Policy;
use serde_json::json;

#[derive(Debug, Clone)]
pub struct Hotplug {
    pub online: u64,
    /// every task's affinity as the workload (or setattr) asked for it
    pub user_allowed: Vec<u64>,
    pub period_ns: u64,
    pub next_ns: u64,
    /// each CPU's busy ns at the previous decision
    busy_mark: Vec<u64>,
    up_hist: Vec<u64>,
    down_hist: Vec<u64>,
    /// CPUs in onlining order: slowest cluster first, then by number
    little: Vec<usize>,
    big: Vec<usize>,
    pub cpu_up: u64,
    pub cpu_down: u64,
    pub online_ns: Vec<u64>,
    online_since: Vec<Option<u64>>,
    /// the load sum of the last decision, for observation
    pub last_loads: u64,
}

/// What the decision asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HpsAction {
    None,
    Up(Vec<usize>),
    Down(Vec<usize>),
}

impl Hotplug {
    pub fn new(p: &Platform, knobs: &Knobs, user_allowed: Vec<u64>) -> Self {
        let n = p.nr_cpus();
        let min_cap = p.clusters.iter().map(|c| c.capacity_orig).min().unwrap_or(0);
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&c| (p.capacity_orig(c), c));
        let (little, big): (Vec<usize>, Vec<usize>) = order.into_iter().partition(|&c| p.capacity_orig(c) == min_cap);
        let tick = knobs.derived.tick_ns.max(1);
        let period_ns = (((knobs.get(Knob::HpsPeriodMs) * 1e6) as u64).div_ceil(tick)).max(1) * tick;
        Hotplug {
            online: if n >= 64 { u64::MAX } else { (1u64 << n) - 1 },
            user_allowed,
            period_ns,
            next_ns: period_ns,
            busy_mark: vec![0; n],
            up_hist: Vec::new(),
            down_hist: Vec::new(),
            little,
            big,
            cpu_up: 0,
            cpu_down: 0,
            online_ns: vec![0; n],
            online_since: vec![Some(0); n],
            last_loads: 0,
        }
    }

    #[inline]
    pub fn is_online(&self, cpu: usize) -> bool {
        self.online & (1u64 << cpu) != 0
    }

    /// The effective affinity of a task whose requested one is `user`.
    pub fn effective(&self, user: u64) -> u64 {
        let m = user & self.online;
        if m != 0 {
            m
        } else {
            self.online
        }
    }

    pub fn set_online(&mut self, cpu: usize, on: bool, now: u64) {
        if on {
            self.online |= 1u64 << cpu;
            self.online_since[cpu] = Some(now);
            self.cpu_up += 1;
        } else {
            self.online &= !(1u64 << cpu);
            if let Some(s) = self.online_since[cpu].take() {
                self.online_ns[cpu] += now - s;
            }
            self.cpu_down += 1;
        }
    }

    /// Online time of each CPU up to `now`.
    pub fn online_ns_at(&self, now: u64) -> Vec<u64> {
        (0..self.online_ns.len())
            .map(|c| self.online_ns[c] + self.online_since[c].map_or(0, |s| now - s))
            .collect()
    }

    fn push(hist: &mut Vec<u64>, v: u64, times: usize) {
        hist.push(v);
        if hist.len() > times {
            hist.remove(0);
        }
    }

    /// One decision. `busy_ns[c]`: CPU c's busy time up to now; `heavy`: tasks at or above
    /// the HMP up threshold. `can_down(c)`: c may go offline now (not mid-wakeup).
    pub fn decide(
        &mut self,
        knobs: &Knobs,
        busy_ns: &[u64],
        heavy: usize,
        can_down: impl Fn(usize) -> bool,
    ) -> HpsAction {
        let period = self.period_ns;
        let mut loads = 0u64;
        for (c, &b) in busy_ns.iter().enumerate() {
            let d = b - self.busy_mark[c];
            self.busy_mark[c] = b;
            if self.is_online(c) {
                loads += (d * 100 / period).min(100);
            }
        }
        self.last_loads = loads;
        let on = |v: &[usize]| v.iter().filter(|&&c| self.is_online(c)).count();
        let (little_on, big_on) = (on(&self.little), on(&self.big));
        let online = (little_on + big_on) as u64;
        let big_base = heavy.min(self.big.len());
        let online_mask = self.online;
        let offline_in = |v: &[usize]| {
            v.iter()
                .copied()
                .filter(|&c| online_mask & (1u64 << c) == 0)
                .collect::<Vec<_>>()
        };
        // 1. base: big CPUs for the heavy tasks
        if big_on < big_base {
            let up: Vec<usize> = offline_in(&self.big).into_iter().take(big_base - big_on).collect();
            return self.acted(HpsAction::Up(up));
        }
        // 2. up
        let up_times = knobs.get(Knob::HpsUpTimes) as usize;
        let up_thr = knobs.get(Knob::HpsUpThreshold) as u64;
        if (online as usize) < busy_ns.len() {
            Self::push(&mut self.up_hist, loads, up_times);
            if self.up_hist.len() >= up_times && self.up_hist.iter().sum::<u64>() > up_thr * up_times as u64 * online {
                let next = offline_in(&self.little).into_iter().chain(offline_in(&self.big)).next();
                if let Some(c) = next {
                    return self.acted(HpsAction::Up(vec![c]));
                }
            }
        }
        // 3. down
        let down_times = knobs.get(Knob::HpsDownTimes) as usize;
        let down_thr = knobs.get(Knob::HpsDownThreshold) as u64;
        if online > 1 {
            Self::push(&mut self.down_hist, loads, down_times);
            if self.down_hist.len() >= down_times {
                let sum: u64 = self.down_hist.iter().sum();
                let mut need = online;
                while need > 1 && sum < down_thr * down_times as u64 * (need - 1) {
                    need -= 1;
                }
                let mut surplus = (online - need) as usize;
                let mut down = Vec::new();
                if surplus > 0 && big_on > big_base {
                    let bigs: Vec<usize> = self
                        .big
                        .iter()
                        .rev()
                        .copied()
                        .filter(|&c| self.is_online(c) && can_down(c))
                        .collect();
                    for c in bigs.into_iter().take((big_on - big_base).min(surplus)) {
                        down.push(c);
                    }
                    surplus = 0; // one cluster per decision, as hps_algo_hmp
                }
                if surplus > 0 {
                    // never the first LITTLE CPU
                    let lits: Vec<usize> = self.little[1..]
                        .iter()
                        .rev()
                        .copied()
                        .filter(|&c| self.is_online(c) && can_down(c))
                        .collect();
                    down.extend(lits.into_iter().take(surplus));
                }
                if !down.is_empty() {
                    return self.acted(HpsAction::Down(down));
                }
            }
        }
        HpsAction::None
    }

    fn acted(&mut self, a: HpsAction) -> HpsAction {
        if !matches!(&a, HpsAction::Up(v) | HpsAction::Down(v) if v.is_empty()) {
            self.up_hist.clear();
            self.down_hist.clear();
        }
        a
    }
}

// ---------------------------------------------------------------------------------------
// hps as an extension: the decision every period, and its result

pub static INFO: ExtensionInfo = ExtensionInfo {
    name: "hps",
    summary: "MediaTek's hot plug strategy: every hps.period_ms keep online only the CPUs the load needs; offline CPUs run nothing and sit powered down",
    source: "mt_hotplug_strategy_algo.c hps_algo_hmp() (MediaTek, Linux 3.18/4.4 era)",
    knobs: &["hotplug.hps", "hps."],
    enabled: |k| k.get(Knob::HotplugHps) > 0.0,
    build: |_| Box::new(Hps),
};

/// The hps decision; the online mask it changes is the core's (`Sim::hotplug`).
pub struct Hps;

impl Extension for Hps {
    fn name(&self) -> &'static str {
        "hps"
    }

    fn tick(&mut self, s: &mut Sim) {
        if s.hotplug.as_ref().is_some_and(|h| s.now >= h.next_ns) {
            s.hps_decide();
        }
    }

    /// Each CPU's `online_s` and the `hotplug` section.
    fn result(&self, s: &Sim, r: &mut serde_json::Value) {
        const NS: f64 = 1e9;
        let Some(hp) = &s.hotplug else { return };
        let online = hp.online_ns_at(s.now);
        if let Some(cpus) = r["cpus"].as_array_mut() {
            for (c, v) in cpus.iter_mut().enumerate() {
                v["online_s"] = json!(online[c] as f64 / NS);
            }
        }
        r["hotplug"] = json!({
            "policy": "hps",
            "period_ms": hp.period_ns as f64 / 1e6,
            "cpu_up": hp.cpu_up,
            "cpu_down": hp.cpu_down,
            "online_cpus_end": hp.online.count_ones(),
            "online_s": online.iter().map(|&x| x as f64 / NS).collect::<Vec<_>>(),
            "mean_online_cpus": if s.now > 0 { online.iter().sum::<u64>() as f64 / s.now as f64 } else { 0.0 },
            "offline_power": "deepest idle state of the cluster",
        });
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

// ---------------------------------------------------------------------------------------
// the engine's side: CPUs going offline and online

impl Sim {
    /// Whether `cpu` is online (always, without hotplug).
    pub fn cpu_online(&self, cpu: usize) -> bool {
        self.hotplug.as_ref().is_none_or(|h| h.is_online(cpu))
    }

    /// Every task's effective affinity: what it asked for, on online CPUs.
    pub(crate) fn hotplug_refresh_affinity(&mut self) {
        let n_cpus = self.rqs.len() as u32;
        let Some(hp) = self.hotplug.as_mut() else { return };
        for (i, task) in self.tasks.iter_mut().enumerate() {
            if hp.user_allowed.len() <= i {
                hp.user_allowed.push(task.allowed);
            }
            if hp.user_allowed[i] & hp.online == 0 {
                // select_fallback_rq(): no allowed CPU is online, so the kernel widens the
                // task's affinity for good (do_set_cpus_allowed to the possible mask); it
                // does not shrink back when the CPU returns
                hp.user_allowed[i] = u64::MAX >> (64 - n_cpus);
            }
            task.allowed = hp.effective(hp.user_allowed[i]);
        }
    }

    /// One hps decision (every hps.period_ms, at the tick).
    pub(crate) fn hps_decide(&mut self) {
        let now = self.now;
        let n = self.rqs.len();
        let busy: Vec<u64> = (0..n).map(|c| self.meter.busy_ns_at(c, now)).collect();
        let thr = self.knobs.get(Knob::GtsUpThreshold) as u64;
        let heavy = (0..self.tasks.len())
            .filter(|&t| {
                let task = &self.tasks[t];
                task.policy == Policy::Other
                    && matches!(task.state, TaskState::Runnable | TaskState::Running)
                    && self.hmp_load.get(t).is_some_and(|a| a.util_avg >= thr)
            })
            .count();
        let mut hp = self.hotplug.take().expect("hotplug");
        let rqs = &self.rqs;
        let act = hp.decide(&self.knobs, &busy, heavy, |c| {
            rqs[c].waking_until.is_none() && rqs[c].pending.is_empty()
        });
        hp.next_ns = now + hp.period_ns;
        self.hotplug = Some(hp);
        match act {
            crate::extensions::hotplug::HpsAction::None => {}
            crate::extensions::hotplug::HpsAction::Up(cpus) => {
                for c in cpus {
                    self.hotplug.as_mut().unwrap().set_online(c, true, now);
                }
                self.hotplug_refresh_affinity();
            }
            crate::extensions::hotplug::HpsAction::Down(cpus) => {
                for c in cpus {
                    self.cpu_down(c);
                }
            }
        }
    }

    /// cpu_down(): the CPU leaves every affinity, its tasks move to the first allowed
    /// online CPU (migrate_tasks() -> select_fallback_rq()), and it powers down.
    pub(crate) fn cpu_down(&mut self, cpu: usize) {
        let now = self.now;
        self.hotplug.as_mut().unwrap().set_online(cpu, false, now);
        self.hotplug_refresh_affinity();
        let rq = &self.rqs[cpu];
        let mut queued: Vec<TaskId> = rq.cfs.timeline.iter().map(|&(_, t)| t).collect();
        queued.extend(rq.rt_queue.iter().map(|k| k.2).filter(|&t| Some(t) != rq.curr));
        let curr = rq.curr;
        for t in queued {
            if self.tasks[t as usize].se.sched_delayed {
                // asleep on the runqueue (DELAY_DEQUEUE): its dequeue completes here rather
                // than travelling with it (fair.md, Differences)
                self.update_rq_clock(cpu);
                self.finish_delayed_dequeue(cpu, t);
                continue;
            }
            let dst = select_fallback_rq(&self.tasks[t as usize]);
            self.migrate_queued(Migration { task: t, src: cpu, dst }, true);
        }
        if let Some(t) = curr {
            let dst = select_fallback_rq(&self.tasks[t as usize]);
            self.migrate_running(Migration { task: t, src: cpu, dst });
        } else if self.rqs[cpu].idle_state.is_some() {
            // already idle: into the powered-down state now
            let deepest = self.platform.cluster_of(cpu).idle_states.len() - 1;
            self.rqs[cpu].idle_state = Some(deepest);
            self.meter
                .set_cpu(&self.platform, cpu, now, CpuPowerState::Idle(deepest));
            self.trace_power(cpu);
        } else {
            self.resched_cpu(cpu);
        }
    }
}
