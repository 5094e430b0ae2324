//! schedtune, the Android boost controller of the 4.14 kernels (kernel/sched/tune.c of the
//! Android common kernel, as msm-4.14 carries it): tasks sit in boost groups (the cgroup
//! directories Android's init creates under /dev/stune: the root, foreground, background,
//! top-app and rt), each with a `schedtune.boost` percentage and a
//! `schedtune.prefer_idle` flag. A boost raises a signal by that share of its headroom to
//! SCHED_CAPACITY_SCALE (signal-proportional compensation, schedtune_margin()); a task's
//! placement reads boosted_task_util() and a CPU's frequency boosted_cpu_util(), the CPU
//! taking the largest boost among the groups with a task queued there (the root group
//! always counts) or, for a group an RT task was queued in, for SCHEDTUNE_BOOST_HOLD_NS
//! after that enqueue, and never below 0. It is part of the `msm-4.14` kernel profile only
//! (mainline replaced it with uclamp in v5.3).
//!
//! Differences: the groups are fixed (no nesting); `sched_boost_no_override` and
//! `colocate` are not modelled. docs/mechanisms/walt.md.

use crate::error::{Error, Result};

/// The boost groups, as Android's init.rc creates them; index 0 is the root.
pub const GROUPS: [&str; 5] = ["root", "foreground", "background", "top-app", "rt"];

/// tune.c: a group an RT task was enqueued in keeps boosting its CPU this long after the
/// enqueue ("We hold schedtune boost in effect for at least this long", 50 ms)
pub const SCHEDTUNE_BOOST_HOLD_NS: u64 = 50_000_000;

/// The group a workload names (`stune` of a task), None if unknown.
pub fn group_index(name: &str) -> Option<usize> {
    GROUPS.iter().position(|g| *g == name)
}

/// schedtune_margin(): the boost's share of the headroom above `signal` (boost >= 0), or
/// of the signal itself (a negative boost), in capacity units.
pub fn schedtune_margin(signal: u64, boost: i64) -> i64 {
    if boost >= 0 {
        let headroom = 1024i64 - signal as i64;
        headroom * boost / 100
    } else {
        -((signal as i64) * (-boost) / 100)
    }
}

/// A signal raised by its schedtune margin (boosted_task_util(), boosted_cpu_util()),
/// never below 0; a zero boost leaves it as it is.
pub fn boosted_util(signal: u64, boost: i64) -> u64 {
    if boost == 0 {
        return signal;
    }
    (signal as i64 + schedtune_margin(signal, boost)).max(0) as u64
}

#[derive(Debug, Clone)]
pub struct SchedTune {
    /// schedtune.boost per group (-100..100)
    pub boost: [i64; GROUPS.len()],
    /// schedtune.prefer_idle per group
    pub prefer_idle: [bool; GROUPS.len()],
    /// each task's group
    pub task_group: Vec<usize>,
    /// per CPU, the queued tasks of each group (schedtune_enqueue_task / dequeue)
    cpu_tasks: Vec<[u32; GROUPS.len()]>,
    /// per CPU, each group's boost hold timestamp: the last enqueue of an RT task in it
    /// (schedtune_update_timestamp(); SCHEDTUNE_BOOST_HOLD_ALL is off). None where no RT
    /// task was ever queued: the kernel's 0, long past once the phone has run 50 ms
    group_ts: Vec<[Option<u64>; GROUPS.len()]>,
    /// without WALT, the CPU each task is counted on (WALT's task state keeps it otherwise)
    queued_on: Vec<Option<usize>>,
}

impl SchedTune {
    pub fn new(nr_cpus: usize, task_group: Vec<usize>) -> SchedTune {
        SchedTune {
            boost: [0; GROUPS.len()],
            prefer_idle: [false; GROUPS.len()],
            task_group,
            cpu_tasks: vec![[0; GROUPS.len()]; nr_cpus],
            group_ts: vec![[None; GROUPS.len()]; nr_cpus],
            queued_on: Vec::new(),
        }
    }

    /// Reads the schedtune.<group>.boost and .prefer_idle knobs.
    pub fn read_knobs(&mut self, knobs: &crate::features::Knobs) -> Result<()> {
        for (g, name) in GROUPS.iter().enumerate() {
            let b = knobs.get_named(&format!("schedtune.{name}.boost")).unwrap_or(0.0);
            self.boost[g] = b as i64;
            self.prefer_idle[g] = knobs.get_named(&format!("schedtune.{name}.prefer_idle")).unwrap_or(0.0) > 0.0;
        }
        Ok(())
    }

    /// schedtune_tasks_update() on an enqueue at `now`: the group's count, and its boost
    /// hold timestamp if the task is an RT one (`rt`).
    pub fn enqueue(&mut self, t: usize, cpu: usize, rt: bool, now: u64) {
        let g = self.task_group[t];
        self.cpu_tasks[cpu][g] += 1;
        if rt {
            self.group_ts[cpu][g] = Some(now);
        }
    }

    pub fn dequeue(&mut self, t: usize, cpu: usize) {
        let g = self.task_group[t];
        self.cpu_tasks[cpu][g] = self.cpu_tasks[cpu][g].saturating_sub(1);
    }

    /// schedtune_enqueue_task() as the fair and RT classes call it when WALT is not built:
    /// once per enqueue, whatever path brought the task (a task already counted elsewhere
    /// is moved).
    pub fn enqueue_task(&mut self, t: usize, cpu: usize, rt: bool, now: u64) {
        if self.queued_on.len() <= t {
            self.queued_on.resize(t + 1, None);
        }
        if let Some(old) = self.queued_on[t].replace(cpu) {
            self.dequeue(t, old);
        }
        self.enqueue(t, cpu, rt, now);
    }

    /// schedtune_dequeue_task() without WALT.
    pub fn dequeue_task(&mut self, t: usize) {
        if let Some(cpu) = self.queued_on.get_mut(t).and_then(|q| q.take()) {
            self.dequeue(t, cpu);
        }
    }

    /// schedtune_cpu_boost() at `now`: the root group's boost, raised to that of any
    /// group active on the CPU (a task queued there, or an RT task's enqueue there within
    /// SCHEDTUNE_BOOST_HOLD_NS), and at least 0 (schedtune_cpu_update()'s boost_max). The
    /// kernel caches boost_max and recomputes it when a group's first task is enqueued or
    /// the hold of the group that set it has run out; a group becomes active only by an
    /// enqueue, so the value read is this one.
    pub fn cpu_boost(&self, cpu: usize, now: u64) -> i64 {
        let mut b = self.boost[0];
        for g in 1..GROUPS.len() {
            let held = self.group_ts[cpu][g].is_some_and(|ts| now.saturating_sub(ts) <= SCHEDTUNE_BOOST_HOLD_NS);
            if self.cpu_tasks[cpu][g] > 0 || held {
                b = b.max(self.boost[g]);
            }
        }
        b.max(0)
    }

    /// schedtune_task_boost()
    pub fn task_boost(&self, t: usize) -> i64 {
        self.boost[self.task_group[t]]
    }

    /// schedtune_prefer_idle()
    pub fn prefer_idle(&self, t: usize) -> bool {
        self.prefer_idle[self.task_group[t]]
    }
}

/// find_best_target()'s case A for a prefer_idle task (Android 4.14 fair.c, as msm-4.14
/// keeps it): the CPUs are visited from the smallest cluster up (from the biggest for a
/// boosted task, start_cpu()); among those the task fits (max(cpu_util + task_util,
/// boosted_task_util) within capacity_orig, by the migration margin when it is on), the
/// first idle CPU of the smallest capacity (the biggest when boosted), a shallower idle
/// state winning a tie (sched_cstate_aware); with no idle CPU, the busy CPU left with the
/// most spare capacity whose current capacity holds the task. feec then returns it without
/// comparing energies. None when no CPU fits (the energy path decides).
///
/// The utils are WALT's or, in the tree built without WALT, PELT's: the CPU's
/// cpu_util_without() the waking task (its blocked util still sits on its prev_cpu) and the
/// task's util decayed over its sleep.
pub fn prefer_idle_target(v: &crate::core::SchedView, p: crate::sched::TaskId, isolated: u64) -> Option<usize> {
    let st = v.stune?;
    let boosted = st.task_boost(p as usize) > 0;
    let (task_util, min_util) = match v.walt {
        Some(w) => (w.task_util(p), v.boosted_task_util(p)),
        None => {
            let a = v.sync_entity_load_avg(p);
            let u = a.util_avg.max(a.ewma());
            (u, boosted_util(u, st.task_boost(p as usize)))
        }
    };
    let prev = v.tasks[p as usize].cpu;
    let wake_util = |c: usize| match v.walt {
        Some(w) => w.cpu_util(c),
        None => cpu_util_without(v, c, p, prev),
    };
    let allowed = v.tasks[p as usize].allowed & !isolated;
    let mut order: Vec<usize> = (0..v.nr_cpus()).filter(|&c| allowed & (1u64 << c) != 0).collect();
    // start_cpu(): the min-capacity CPU's group first, or the max-capacity one's if boosted
    order.sort_by_key(|&c| {
        let cap = v.capacity_orig(c) as i64;
        (if boosted { -cap } else { cap }, c)
    });
    let margin = v.knobs.get(crate::features::Knob::VendorMigrationMargins) > 0.0;
    let up_pct = v.knobs.get(crate::features::Knob::VendorSchedUpmigrate).round() as u64;
    let (mut best_idle, mut target_cap, mut best_cstate) = (None, None::<u64>, usize::MAX);
    let (mut target, mut target_spare) = (None, 0u64);
    for c in order {
        let cap = v.capacity_orig(c);
        let new_util = (wake_util(c) + task_util).max(min_util);
        let fits = if margin {
            new_util * 100 < cap * up_pct
        } else {
            new_util <= cap
        };
        if !fits {
            continue;
        }
        if v.idle_cpu(c) {
            let idx = v.rqs[c].idle_state.unwrap_or(0);
            if let Some(tc) = target_cap {
                if (boosted && cap < tc) || (!boosted && cap > tc) {
                    continue;
                }
                if cap == tc && best_cstate <= idx {
                    continue;
                }
            }
            target_cap = Some(cap);
            best_cstate = idx;
            best_idle = Some(c);
            continue;
        }
        if best_idle.is_some() {
            continue;
        }
        // capacity_curr_of(): capacity at the current frequency
        let ci = v.platform.cpu_cluster[c];
        let curr = cap * v.cpu_freq_khz(c) / v.platform.clusters[ci].fmax_khz;
        if curr > new_util && cap - new_util > target_spare {
            target_spare = cap - new_util;
            target = Some(c);
        }
    }
    best_idle.or(target)
}

impl crate::core::Sim {
    /// schedtune_enqueue_task() from the fair or RT enqueue of the tree built without WALT
    /// (sched_walt=0); with WALT, walt_enqueue() counts the task beside its WALT stats.
    pub(crate) fn schedtune_enqueue_task(&mut self, cpu: usize, t: crate::sched::TaskId) {
        if self.walt.is_some() {
            return;
        }
        let rt = self.tasks[t as usize].is_rt();
        if let Some(st) = self.stune.as_mut() {
            st.enqueue_task(t as usize, cpu, rt, self.now);
        }
    }

    /// schedtune_dequeue_task() of the tree built without WALT.
    pub(crate) fn schedtune_dequeue_task(&mut self, t: crate::sched::TaskId) {
        if self.walt.is_some() {
            return;
        }
        if let Some(st) = self.stune.as_mut() {
            st.dequeue_task(t as usize);
        }
    }
}

/// cpu_util_without() (Android 4.14 fair.c) for a waking task: on its prev_cpu, the CFS
/// util_avg less the task's (synced) util_avg; util_est needs no correction, a sleeping
/// task having left it at dequeue.
pub(crate) fn cpu_util_without(v: &crate::core::SchedView, cpu: usize, p: crate::sched::TaskId, prev: usize) -> u64 {
    let c = &v.rqs[cpu].cfs;
    let mut util = c.avg.util_avg;
    if cpu == prev && v.tasks[p as usize].se.attached {
        util = util.saturating_sub(v.sync_entity_load_avg(p).util_avg);
    }
    util.max(c.util_est).min(v.capacity_orig(cpu))
}

/// The group of each task of a workload (`stune`), an error naming the task if unknown.
pub fn task_groups(spec: &crate::workload::WorkloadSpec) -> Result<Vec<usize>> {
    spec.tasks
        .iter()
        .enumerate()
        .map(|(i, t)| match &t.stune {
            None => Ok(0),
            Some(name) => group_index(name).ok_or_else(|| Error::Unknown {
                field: format!("tasks[{i}].stune"),
                kind: "schedtune group",
                name: name.clone(),
                choices: GROUPS.join(", "),
            }),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn margin_is_the_boosts_share_of_the_headroom() {
        // top-app boost 10 (Pixel 4's init.hardware.rc) on a task of util 200:
        // (1024 - 200) * 10 / 100 = 82
        assert_eq!(schedtune_margin(200, 10), 82);
        assert_eq!(schedtune_margin(1024, 10), 0);
        assert_eq!(schedtune_margin(0, 100), 1024);
        // a negative boost takes its share of the signal: -(300 * 20 / 100)
        assert_eq!(schedtune_margin(300, -20), -60);
    }

    #[test]
    fn cpu_boost_is_the_largest_among_groups_with_queued_tasks() {
        let mut st = SchedTune::new(2, vec![3, 1, 0]);
        st.boost = [0, 5, 0, 10, 0];
        assert_eq!(st.cpu_boost(0, 0), 0);
        st.enqueue(1, 0, false, 0); // foreground
        assert_eq!(st.cpu_boost(0, 0), 5);
        st.enqueue(0, 0, false, 0); // top-app
        assert_eq!(st.cpu_boost(0, 0), 10);
        st.dequeue(0, 0);
        assert_eq!(st.cpu_boost(0, 0), 5);
        assert_eq!(st.cpu_boost(1, 0), 0);
    }

    /// tune.c's boost hold: a group an RT task was enqueued in keeps boosting its CPU for
    /// 50 ms after the enqueue, queued or not; a fair task's group only while queued; and
    /// the CPU's boost is never below 0.
    #[test]
    fn an_rt_tasks_boost_is_held_50_ms_after_its_enqueue() {
        let ms = 1_000_000;
        let mut st = SchedTune::new(1, vec![4, 3]);
        st.boost = [0, 0, 0, 10, 20];
        st.enqueue(0, 0, true, 100 * ms); // an RT task in the rt group
        st.dequeue(0, 0);
        assert_eq!(st.cpu_boost(0, 101 * ms), 20, "held after its dequeue");
        assert_eq!(st.cpu_boost(0, 150 * ms), 20, "now - ts = 50 ms is not past the hold");
        assert_eq!(st.cpu_boost(0, 150 * ms + 1), 0, "past the hold");
        st.enqueue(1, 0, false, 200 * ms); // a fair task in top-app: no hold
        st.dequeue(1, 0);
        assert_eq!(st.cpu_boost(0, 200 * ms), 0);
        st.boost = [-10, 0, 0, 0, 0];
        assert_eq!(st.cpu_boost(0, 300 * ms), 0, "boost_max is at least 0");
    }
}
