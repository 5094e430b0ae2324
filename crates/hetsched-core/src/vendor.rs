//! Arm's vendor changes to EAS (its OSPM 2020 talk "Mobile scheduler changes": what
//! phone kernels add to mainline EAS), each a knob on the `eas` scheduler, off by default,
//! counted in `result.json` (`counters.vendor`) each time it fires. With every knob off
//! nothing here runs and `eas` is mainline's. docs/schedulers.md names every decision.
//!
//! * `vendor.cpu_isolation`: a core controller after QCOM's core_ctl, an extension that
//!   combines with the policy (extensions/core_ctl.rs); the placement here avoids the CPUs
//!   it isolated.
//! * `vendor.migration_margins`: sched_upmigrate / sched_downmigrate with hysteresis
//!   (msm-4.14's task_fits_capacity): a CPU at least as big as the task's prev_cpu fits
//!   below upmigrate % of its capacity, a smaller one below downmigrate %; overutilized and
//!   misfit use the upmigrate %.
//! * `vendor.task_packing`: when feec picks an idle CPU, an active CPU that is no bigger,
//!   where the task fits and whose domain's Energy Model state (the OPP schedutil would
//!   ask for) does not rise with the task, is taken instead.
//! * `vendor.prev_cpu_fastpath`: prev_cpu idle and the task fits it: prev_cpu, no energies.
//! * `vendor.rt_placement`: RT wakeups search the lowest cpupri mask (no uclamp fitness)
//!   ordered by CPU utilisation, then idle state (shallowest first), then capacity.

use crate::core::{SchedView, TaskId};
use crate::energy_model::{map_util_perf, EnergyModel, FeecInput};
use crate::features::Knob;
use crate::workload::Policy;

/// The vendor knobs as read at one decision.
#[derive(Debug, Clone, Copy, Default)]
pub struct VendorKnobs {
    pub isolation: bool,
    pub margins: bool,
    pub packing: bool,
    pub fastpath: bool,
    pub rt: bool,
    pub up_pct: u64,
    pub down_pct: u64,
}

impl VendorKnobs {
    pub fn read(v: &SchedView) -> VendorKnobs {
        let k = v.knobs;
        let on = |x: Knob| k.get(x) > 0.0;
        VendorKnobs {
            isolation: on(Knob::VendorCpuIsolation),
            margins: on(Knob::VendorMigrationMargins),
            packing: on(Knob::VendorTaskPacking),
            fastpath: on(Knob::VendorPrevCpuFastpath),
            rt: on(Knob::VendorRtPlacement),
            up_pct: k.get(Knob::VendorSchedUpmigrate).round() as u64,
            down_pct: k.get(Knob::VendorSchedDownmigrate).round() as u64,
        }
    }

    pub fn any(&self) -> bool {
        self.isolation || self.margins || self.packing || self.fastpath || self.rt
    }
}

/// How often each vendor change fired.
#[derive(Debug, Clone, Copy, Default)]
pub struct VendorCounters {
    pub migration_margins: u64,
    pub task_packing: u64,
    pub prev_cpu_fastpath: u64,
    pub rt_placement: u64,
    /// isolated CPUs a placement avoided (the search had to leave an isolated CPU)
    pub isolation_redirects: u64,
}

/// Per-CPU fit percentage with hysteresis relative to prev_cpu (the task's current CPU).
pub fn fit_pct(v: &SchedView, prev: usize, vk: &VendorKnobs, out: &mut Vec<u64>) {
    out.clear();
    let pcap = v.capacity_orig(prev);
    for c in 0..v.nr_cpus() {
        out.push(if v.capacity_orig(c) < pcap {
            vk.down_pct
        } else {
            vk.up_pct
        });
    }
}

/// cpu_overutilized() with vendor.migration_margins: the CPU's util reaches upmigrate % of
/// its capacity. None when the knob is off (or EAS does not run).
pub fn cpu_overutilized(v: &SchedView, cpu: usize) -> Option<bool> {
    if !v.eas || v.knobs.get(Knob::VendorMigrationMargins) <= 0.0 {
        return None;
    }
    let pct = v.knobs.get(Knob::VendorSchedUpmigrate).round() as u64;
    Some(v.cpu_util_cfs(cpu) * 100 >= v.capacity_of(cpu) * pct)
}

/// The misfit test of update_misfit_status() with vendor.migration_margins: the running
/// task fits its CPU below upmigrate %. None when the knob is off.
pub fn task_fits_cpu(v: &SchedView, p: TaskId, cpu: usize) -> Option<bool> {
    if !v.eas || v.knobs.get(Knob::VendorMigrationMargins) <= 0.0 {
        return None;
    }
    let pct = v.knobs.get(Knob::VendorSchedUpmigrate).round() as u64;
    Some(v.task_util_est(p) * 100 < v.capacity_of(cpu) * pct)
}

/// Does the task fit `c` (with its util added), by the margins or the kernel's test.
fn fits(v: &SchedView, inp: &FeecInput, vk: &VendorKnobs, p: TaskId, c: usize) -> bool {
    let u = inp.cpu_util(c, Some(c), false);
    // msm-4.14: at least the boosted_task_util() (find_best_target's new_util; 0 elsewhere)
    let u = u.max(inp.task_min_util);
    if vk.margins {
        let pct = if v.capacity_orig(c) < v.capacity_orig(inp.prev_cpu) {
            vk.down_pct
        } else {
            vk.up_pct
        };
        return u * 100 < v.capacity_of(c) * pct;
    }
    let [umin, umax] = v.tasks[p as usize].uclamp;
    v.util_fits_cpu(u, umin, umax, c) > 0
}

/// vendor.prev_cpu_fastpath: prev_cpu is idle, allowed, not isolated, and the task fits it.
pub fn prev_cpu_fastpath(v: &SchedView, inp: &FeecInput, vk: &VendorKnobs, p: TaskId) -> bool {
    let prev = inp.prev_cpu;
    inp.allowed & (1u64 << prev) != 0 && v.idle_cpu(prev) && fits(v, inp, vk, p, prev)
}

/// The index of the Energy Model state a pd needs for `max_util` (with the 1.25 headroom):
/// the lowest efficient state whose performance covers it.
fn pd_state(em: &EnergyModel, pd: usize, max_util: u64) -> usize {
    let d = &em.pds[pd];
    let m = max_util.min(d.capacity_orig);
    d.states
        .iter()
        .position(|s| !s.inefficient && s.performance >= m)
        .unwrap_or(d.states.len() - 1)
}

/// The pd's max util with the headroom, with the task on `dst` (None: not in this pd).
fn pd_max_util(em: &EnergyModel, inp: &FeecInput, pd: usize, dst: Option<usize>) -> u64 {
    let d = &em.pds[pd];
    d.cpus
        .iter()
        .map(|&c| {
            if inp.rt_runnable[c] {
                return d.capacity_orig;
            }
            let u = (inp.cpu_util(c, dst, true) + inp.util_rt[c]).min(inp.capacity_orig[c]);
            map_util_perf(u)
        })
        .max()
        .unwrap_or(0)
}

/// vendor.task_packing: feec chose the idle CPU `target`; an active CPU no bigger than it,
/// allowed, where the task fits and whose domain stays at its EM state, smallest capacity
/// first, then the most spare capacity, then the lowest number.
pub fn task_packing(
    em: &EnergyModel,
    v: &SchedView,
    inp: &FeecInput,
    vk: &VendorKnobs,
    p: TaskId,
    target: usize,
) -> Option<usize> {
    let tcap = v.capacity_orig(target);
    (0..v.nr_cpus())
        .filter(|&c| {
            c != target
                && inp.allowed & (1u64 << c) != 0
                && !v.idle_cpu(c)
                && v.rqs[c].rt_queue.is_empty()
                && v.capacity_orig(c) <= tcap
                && fits(v, inp, vk, p, c)
        })
        .filter(|&c| {
            let pd = em.cpu_pd[c];
            // the task leaves prev_cpu: its pd's util without the task, as feec's base
            let without = pd_max_util(em, inp, pd, None);
            let with = pd_max_util(em, inp, pd, Some(c));
            pd_state(em, pd, with) <= pd_state(em, pd, without)
        })
        .min_by_key(|&c| {
            let spare = v.capacity_of(c).saturating_sub(inp.cpu_util(c, Some(c), false));
            (v.capacity_orig(c), std::cmp::Reverse(spare), c)
        })
}

/// vendor.rt_placement: select_task_rq_rt with the vendor's lowest mask. As in msm-4.14,
/// the search runs on every RT wakeup under EAS (not only when prev_cpu is taken): the
/// lowest cpupri level below the task's among its allowed, non-isolated CPUs, no capacity
/// fitness; ordered by utilisation (cfs + rt), idle state (a running CPU, then shallower
/// states), capacity, prev_cpu first, CPU number.
pub fn select_task_rq_rt(v: &SchedView, p: TaskId, prev: usize, isolated: u64) -> usize {
    let t = &v.tasks[p as usize];
    let level = t.prio_level();
    let ok = |c: usize| t.allowed & (1u64 << c) != 0 && isolated & (1u64 << c) == 0;
    for lvl in 0..level {
        let best = (0..v.nr_cpus())
            .filter(|&c| ok(c) && v.rqs[c].rt_queue.highest_level().unwrap_or(0) == lvl)
            .min_by_key(|&c| {
                let rq = &v.rqs[c];
                // msm-4.14: WALT's cpu_util() holds the RT tasks' demand already
                let util = if v.walt.is_some() {
                    v.cpu_util_cfs(c)
                } else {
                    v.cpu_util_cfs(c) + rq.avg_rt.util_avg
                };
                let idle = match rq.idle_state {
                    Some(s) if rq.curr.is_none() => s as i64,
                    _ => -1,
                };
                (util, idle, v.capacity_orig(c), c != prev, c)
            });
        if let Some(c) = best {
            return c;
        }
    }
    // nothing runs below the task's priority: stay (select_task_rq_rt keeps prev_cpu)
    if ok(prev) {
        prev
    } else {
        crate::rt::select_task_rq_rt(v, p, prev)
    }
}

/// An isolated CPU chosen by a path that does not know isolation: the non-isolated allowed
/// idle CPU with the most spare capacity, else the one with the fewest runnable tasks
/// (the baseline's rule); the CPU itself if the task may run nowhere else.
pub fn avoid_isolated(v: &SchedView, p: TaskId, cpu: usize, isolated: u64) -> usize {
    if isolated & (1u64 << cpu) == 0 {
        return cpu;
    }
    let allowed = v.tasks[p as usize].allowed & !isolated;
    let ok = |c: usize| allowed & (1u64 << c) != 0;
    let idle = (0..v.nr_cpus())
        .filter(|&c| ok(c) && v.idle_cpu(c))
        .max_by_key(|&c| (v.capacity_of(c).saturating_sub(v.cpu_util_cfs(c)), std::cmp::Reverse(c)));
    idle.or_else(|| {
        (0..v.nr_cpus())
            .filter(|&c| ok(c))
            .min_by_key(|&c| (v.rqs[c].nr_running(), v.rqs[c].cfs.avg.load_avg, c))
    })
    .unwrap_or(cpu)
}

/// Whether vendor.rt_placement handles this task (FIFO/RR; DEADLINE keeps mainline).
pub fn is_rt(v: &SchedView, p: TaskId) -> bool {
    matches!(v.tasks[p as usize].policy, Policy::Fifo | Policy::Rr)
}
