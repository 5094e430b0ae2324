//! The RT class's runqueue, after kernel/sched/rt.c (v6.12): SCHED_FIFO and SCHED_RR
//! tasks by priority, FIFO within a priority; the running RT task stays queued (as in the
//! kernel's rt_prio_array), an RR task whose slice ran out goes to the tail of its list
//! (`requeue_task_rt`). Wakeup placement is `select_task_rq_rt` with the cpupri search
//! and, on asymmetric systems, capacity fitness (an RT task's default uclamp_min is
//! sched_util_clamp_min_rt_default: 1024 in mainline, 0 on phones). After placement, RT
//! tasks are pushed and pulled between CPUs (`push_rt_task`, `pull_rt_task` with
//! RT_PUSH_IPI). RT load reaches schedutil through `rq->avg_rt` (pelt.rs) and the runnable
//! test (`effective_cpu_util`).
//!
//! SCHED_DEADLINE tasks share this queue at a level above every RT priority (cpupri's
//! CPUPRI_HIGHER), ordered among themselves by absolute deadline (EDF); their CBS runtime
//! is consumed scaled by frequency and capacity (update_curr_dl), enforced at the tick
//! (HRTICK_DL is off by default), and replenished at the next period by the dl timer.
//! Simplified: placement is cpupri's (cpudl's latest-deadline search is not modelled),
//! no GRUB reclaiming, no admission control, schedutil sees a DL task like an RT one (max
//! frequency) rather than its running bandwidth.
//!
//! v6.12 does not throttle RT runqueues (without RT_GROUP_SCHED); the fair server
//! (deadline.rs) runs starved fair tasks instead. The android-4.19 profile throttles as
//! v4.19 did (RT bandwidth control): each CPU's RT runqueue may run `sched_rt_runtime_us`
//! per `sched_rt_period_us`, borrowing unused runtime from the other CPUs under
//! RT_RUNTIME_SHARE, and is throttled (its RT tasks not picked) until the period timer
//! has paid back what it used.
//!
//! docs/mechanisms/rt.md works placement, push, pull and the fair server by hand.

use crate::core::*;
use crate::core::{SchedView, TaskId};
use crate::sorted_vec::SortedVec;
use crate::workload::Policy;

/// One CPU's RT bandwidth (v4.19 struct rt_rq's rt_time, rt_runtime, rt_throttled).
#[derive(Debug, Clone, Copy, Default)]
pub struct RtBandwidth {
    /// RT running time charged in this period
    pub rt_time: u64,
    /// the runtime this CPU may use per period, borrowed runtime included (u64::MAX: no limit)
    pub rt_runtime: u64,
    pub throttled: bool,
}

/// Key: (-(1 + rt_priority), sequence, task): the highest priority first, then FIFO.
pub type RtKey = (i64, u64, u32);

#[derive(Debug, Clone, Default)]
pub struct RtRq {
    queue: SortedVec<RtKey>,
    /// lib/cpumask.c's per-CPU `distribute_cpu_mask_prev`: where this CPU's last
    /// cpumask_any_and_distribute() pick was, so the next one starts after it
    distribute_prev: std::cell::Cell<usize>,
}

impl RtRq {
    /// enqueue_task_rt(): at the tail of its priority's list (`seq` increases).
    pub fn enqueue(&mut self, t: u32, prio_level: u32, seq: u64) {
        self.queue.insert((-(prio_level as i64), seq, t));
    }

    pub fn dequeue(&mut self, t: u32) {
        self.queue.retain(|&(_, _, x)| x != t);
    }

    /// requeue_task_rt(): to the tail of its priority's list.
    pub fn requeue_tail(&mut self, t: u32, prio_level: u32, seq: u64) {
        self.dequeue(t);
        self.enqueue(t, prio_level, seq);
    }

    /// pick_next_rt_entity(): the first task of the highest non-empty priority.
    pub fn pick(&self) -> Option<u32> {
        self.queue.first().map(|&(_, _, t)| t)
    }

    /// The highest queued level among tasks other than `t`.
    pub fn highest_level_excluding(&self, t: u32) -> Option<u32> {
        self.queue
            .iter()
            .find(|&&(_, _, x)| x != t)
            .map(|&(neg, _, _)| (-neg) as u32)
    }

    /// The cpupri level of the highest queued priority (1 + rt_priority), if any.
    pub fn highest_level(&self) -> Option<u32> {
        self.queue.first().map(|&(neg, _, _)| (-neg) as u32)
    }

    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    pub fn first(&self) -> Option<&RtKey> {
        self.queue.first()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, RtKey> {
        self.queue.iter()
    }
}

/// The cpupri level of what a CPU runs: 0 for CFS or idle (CPUPRI_NORMAL), else 1 +
/// the highest queued RT priority.
pub(crate) fn cpupri_level(v: &SchedView, cpu: usize) -> u32 {
    v.rqs[cpu].rt_queue.highest_level().unwrap_or(0)
}

/// rt_task_fits_capacity(): on asymmetric systems only, capacity_orig >= min(uclamp_min,
/// uclamp_max) of the task's current clamps; an RT task that asks for no uclamp_min has
/// sched_util_clamp_min_rt_default (1024 in mainline: only the biggest CPUs fit; 0 on
/// phones: every CPU fits).
pub fn rt_task_fits_capacity(v: &SchedView, p: TaskId, cpu: usize) -> bool {
    let caps = v.platform.clusters.iter().map(|c| c.capacity_orig);
    let asym = caps.clone().min() != caps.max();
    if !asym {
        return true;
    }
    let [umin, umax] = v.tasks[p as usize].uclamp;
    v.capacity_orig(cpu) >= umin.min(umax)
}

/// cpumask_any_and_distribute() called on `this_cpu`: the first CPU of `mask` after the
/// one this CPU picked last (wrapping), remembered for its next call.
fn any_distribute(v: &SchedView, this_cpu: usize, mask: u64) -> Option<usize> {
    if mask == 0 {
        return None;
    }
    let cursor = &v.rqs[this_cpu].rt_queue.distribute_prev;
    let n = v.nr_cpus();
    let start = cursor.get() + 1;
    let next = (0..n).map(|k| (start + k) % n).find(|&c| mask & (1u64 << c) != 0)?;
    cursor.set(next);
    Some(next)
}

/// cpupri_find_fitness() + find_lowest_rq(): the CPUs of the lowest cpupri level below
/// p's, among p's allowed CPUs, keeping those p fits (and, if none fits anywhere, without
/// fitness). From that mask: prev_cpu if it is there; else, walking prev_cpu's sched
/// domains up (its cluster's, then all CPUs; one domain of every CPU where they share
/// the LLC), `this_cpu` (the CPU doing the wakeup or the push) if the domain holds it and
/// it is in the mask, else a CPU of the mask in that domain spread by
/// cpumask_any_and_distribute(); past the domains, this_cpu, then any CPU of the mask.
pub(crate) fn find_lowest_rq(v: &SchedView, p: TaskId, prev: usize, this_cpu: usize) -> Option<usize> {
    let t = &v.tasks[p as usize];
    let level = t.prio_level();
    let mut lowest = 0u64;
    'search: for with_fitness in [true, false] {
        for lvl in 0..level {
            lowest = (0..v.nr_cpus())
                .filter(|&c| t.allowed & (1u64 << c) != 0 && cpupri_level(v, c) == lvl)
                .filter(|&c| !with_fitness || rt_task_fits_capacity(v, p, c))
                .fold(0u64, |m, c| m | 1u64 << c);
            if lowest != 0 {
                break 'search;
            }
        }
    }
    if lowest == 0 {
        return None;
    }
    if lowest & (1u64 << prev) != 0 {
        return Some(prev);
    }
    let this = (lowest & (1u64 << this_cpu) != 0).then_some(this_cpu);
    let all = (1u64 << v.nr_cpus()) - 1;
    let cluster = v.platform.clusters[v.platform.cpu_cluster[prev]]
        .cpus
        .iter()
        .fold(0u64, |m, &c| m | 1u64 << c);
    let domains: &[u64] = if v.platform.shared_llc || cluster == all {
        &[all]
    } else {
        &[cluster, all]
    };
    for &span in domains {
        if let Some(c) = this.filter(|&c| span & (1u64 << c) != 0) {
            return Some(c);
        }
        if let Some(c) = any_distribute(v, this_cpu, lowest & span) {
            return Some(c);
        }
    }
    this.or_else(|| any_distribute(v, this_cpu, lowest))
}

/// select_task_rq_rt() (wakeup and fork): stay on prev_cpu unless it runs an RT task of
/// equal or higher priority that cannot move, or p does not fit it; then move to the
/// lowest-priority CPU found, if p outranks what runs there (and, when the search was
/// only for capacity, if p fits it).
pub fn select_task_rq_rt(v: &SchedView, p: TaskId, prev: usize) -> usize {
    let t = &v.tasks[p as usize];
    let curr_blocks = v.rqs[prev].curr.is_some_and(|c| {
        let ct = &v.tasks[c as usize];
        ct.is_rt() && (ct.allowed.count_ones() == 1 || ct.prio_level() >= t.prio_level())
    });
    let fits_prev = rt_task_fits_capacity(v, p, prev);
    let prev_ok = t.allowed & (1u64 << prev) != 0;
    if !(curr_blocks || !fits_prev || !prev_ok) {
        return prev;
    }
    match find_lowest_rq(v, p, prev, v.wake.this_cpu.unwrap_or(prev)) {
        Some(target) => {
            if !curr_blocks && prev_ok && !rt_task_fits_capacity(v, p, target) {
                return prev; // searched only for capacity, and found none better
            }
            if t.prio_level() > cpupri_level(v, target) || !prev_ok {
                target
            } else {
                prev
            }
        }
        None if prev_ok => prev,
        None => t.allowed.trailing_zeros() as usize,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priority_then_fifo_and_rr_rotation() {
        let mut rq = RtRq::default();
        rq.enqueue(1, 11, 1); // rt_priority 10
        rq.enqueue(2, 51, 2); // rt_priority 50
        rq.enqueue(3, 51, 3);
        assert_eq!(rq.pick(), Some(2));
        assert_eq!(rq.highest_level(), Some(51));
        rq.requeue_tail(2, 51, 4); // RR slice expired
        assert_eq!(rq.pick(), Some(3));
        rq.dequeue(3);
        rq.dequeue(2);
        assert_eq!(rq.pick(), Some(1));
        assert_eq!(rq.len(), 1);
    }

    /// test-2x2 (little 0-1, big 2-3, an L2 per cluster) with every CPU fitting RT tasks
    /// (uclamp.min_rt_default 0): task 0 is SCHED_FIFO (rt_priority 10) with prev_cpu 2;
    /// CPUs in `busy` hold a lower RT task, the others are idle (cpupri's lowest level,
    /// which they share with CPUs running fair tasks): the lowest mask.
    fn lowest(busy: &[usize], this_cpu: usize, calls: usize) -> Vec<Option<usize>> {
        use crate::testutils::{costs_off, two_cluster_platform};
        use serde_json::json;
        let mut tasks = vec![json!({"name": "R", "policy": "fifo", "rt_priority": 10,
            "phases": [{"events": [{"run": 1_000_000}]}]})];
        tasks.extend((0..4).map(|c| json!({"name": format!("f{c}"), "phases": [{"events": [{"run": 1_000_000}]}]})));
        let w = json!({"name": "lowest", "duration_ns": null, "tasks": tasks});
        let pol: crate::PolicyConfig = costs_off(
            serde_json::from_value(json!({"scheduler": "cfs", "governor": "performance",
                "knobs": {"uclamp.min_rt_default": 0.0}}))
            .unwrap(),
        );
        let mut s = crate::Sim::new(
            two_cluster_platform(),
            crate::WorkloadSpec::from_json(&w.to_string()).unwrap(),
            pol,
        )
        .unwrap();
        for &c in busy {
            // a queued SCHED_FIFO task of rt_priority 5 (cpupri level 6, below R's 11)
            s.rqs[c].rt_queue.enqueue(1 + c as u32, 6, c as u64);
        }
        let v = s.sched_view();
        (0..calls).map(|_| find_lowest_rq(&v, 0, 2, this_cpu)).collect()
    }

    #[test]
    fn find_lowest_rq_stays_in_prev_cpus_domain_before_the_waker_and_spreads() {
        // lowest mask {0, 3}, prev_cpu 2 not in it; the waker on CPU 0 is in the mask but not
        // in prev_cpu's cluster domain {2, 3}, where the spread pick is CPU 3
        assert_eq!(lowest(&[1, 2], 0, 1), vec![Some(3)]);
        // lowest mask {0, 1}: nothing of it in {2, 3}; in the domain of all CPUs the waker's
        // CPU 1 is in the mask and is taken
        assert_eq!(lowest(&[2, 3], 1, 1), vec![Some(1)]);
        // a push from busy CPU 3 (not in the mask): spread over {0, 1} from CPU 3's cursor,
        // which starts at 0 and skips it the first time: 1, then 0, then 1
        assert_eq!(lowest(&[2, 3], 3, 3), vec![Some(1), Some(0), Some(1)]);
    }
}

/// sched_avg_period() of 4.14: half of sysctl_sched_time_avg (1000 ms).
pub const SCHED_AVG_PERIOD_NS: u64 = 500_000_000;

/// A runqueue's rq->rt_avg and rq->age_stamp (4.14), with the time of its last update.
#[derive(Debug, Clone, Copy, Default)]
pub struct RtAvg {
    /// RT runtime in ns, each ns weighted by the frequency scale (1024 at f_max)
    pub rt_avg: u64,
    pub age_stamp: u64,
    pub last: u64,
}

impl RtAvg {
    /// sched_avg_update(): rt_avg halves for each whole period past age_stamp.
    pub fn sched_avg_update(&mut self, clock: u64) {
        while clock - self.age_stamp > SCHED_AVG_PERIOD_NS {
            if self.rt_avg == 0 {
                // nothing left to halve: age_stamp lands where the loop would leave it
                let periods = (clock - self.age_stamp - 1) / SCHED_AVG_PERIOD_NS;
                self.age_stamp += periods * SCHED_AVG_PERIOD_NS;
                break;
            }
            self.age_stamp += SCHED_AVG_PERIOD_NS;
            self.rt_avg /= 2;
        }
    }

    /// sugov_get_util()'s RT share (msm-4.14 on PELT): rt_avg over the averaging span
    /// (period + the time since age_stamp), in units of `max_cap`.
    pub fn rt_util(&mut self, clock: u64, max_cap: u64) -> u64 {
        self.sched_avg_update(clock);
        let span = SCHED_AVG_PERIOD_NS + clock.saturating_sub(self.age_stamp);
        (self.rt_avg / span * max_cap) >> 10
    }
}

// ---------------------------------------------------------------------------------------
// the RT class on the runqueues (rt.c)

impl Sim {
    pub(crate) fn update_rt_avg(&mut self, cpu: usize) {
        let running = self.rqs[cpu]
            .curr
            .map(|t| self.tasks[t as usize].is_rt())
            .unwrap_or(false);
        self.update_rt_avg_decayed(cpu, running);
    }

    /// update_rt_rq_load_avg(): whether a PELT period passed. It does not call cpufreq
    /// itself; an idle CPU's blocked-load update does when RT or fair signals decayed.
    pub(crate) fn update_rt_avg_decayed(&mut self, cpu: usize, running: bool) -> bool {
        if !self.rt_avg.is_empty() {
            self.sched_rt_avg_update(cpu, running);
        }
        let scale = self.pelt_scale(cpu);
        let rq = &mut self.rqs[cpu];
        let now = rq.pelt_now();
        rq.avg_rt
            .update_scaled(now, running as u64, running as u64, running, 1, scale)
    }

    /// sched_rt_avg_update() from update_curr_rt() (4.14): the RT time since the last
    /// update, scaled by the frequency (arch_scale_freq_capacity), into rq->rt_avg, which
    /// sched_avg_update() halves every sched_avg_period(). Kept only for msm-4.14 built
    /// without WALT, whose schedutil adds this average to the CPU's util.
    pub(crate) fn sched_rt_avg_update(&mut self, cpu: usize, running: bool) {
        let (now, fs) = (self.now, self.freq_scale(cpu));
        let a = &mut self.rt_avg[cpu];
        if running {
            a.rt_avg += (now - a.last) * fs;
        }
        a.last = now;
        a.sched_avg_update(now);
    }

    /// enqueue_task_rt(): into the priority list (EDF among deadline tasks).
    pub(crate) fn enqueue_task_rt(&mut self, cpu: usize, t: TaskId) {
        self.update_rt_avg(cpu);
        self.rt_seq += 1;
        let task = &mut self.tasks[t as usize];
        let level = task.prio_level();
        task.rr_left_ns = self.knobs.derived.rr_timeslice_ns;
        // EDF among deadline tasks, FIFO within an RT priority
        let key = if task.policy == Policy::Deadline {
            task.dl.deadline
        } else {
            self.rt_seq
        };
        self.rqs[cpu].rt_queue.enqueue(t, level, key);
        if self.tasks[t as usize].policy != Policy::Deadline {
            self.start_rt_bandwidth(); // inc_rt_group()
        }
        // enqueue_top_rt_rq() kicks cpufreq: RT runnable, schedutil goes to the top
        self.cpufreq_update_util(cpu, 0);
    }

    /// dequeue_task_rt()
    pub(crate) fn dequeue_task_rt(&mut self, cpu: usize, t: TaskId) {
        self.update_curr(cpu);
        self.update_rt_avg(cpu);
        let level = self.tasks[t as usize].prio_level();
        let rq = &mut self.rqs[cpu];
        rq.rt_queue.dequeue(t);
        if rq.curr == Some(t) {
            rq.curr = None;
            self.rt_left[cpu] = Some((t, level)); // for balance_rt() at the next schedule
        }
        // dequeue_rt_entity() ends in enqueue_top_rt_rq(), which kicks cpufreq
        self.cpufreq_update_util(cpu, 0);
    }

    /// RT bandwidth control runs (the android-4.19 profile with a finite runtime).
    pub(crate) fn rt_bandwidth_enabled(&self) -> bool {
        self.legacy() && self.knobs.derived.rt_runtime_ns != u64::MAX
    }

    /// update_curr_rt()'s bandwidth part: charge `delta` of RT running time, and throttle
    /// the runqueue (reschedule) once it used more than its runtime.
    pub(crate) fn account_rt_bandwidth(&mut self, cpu: usize, delta: u64) {
        if !self.rt_bandwidth_enabled() {
            return;
        }
        self.rt_bw[cpu].rt_time += delta;
        if self.sched_rt_runtime_exceeded(cpu) {
            self.resched_cpu(cpu);
        }
    }

    /// sched_rt_runtime_exceeded(): with RT_RUNTIME_SHARE, a CPU over its runtime first
    /// borrows (balance_runtime); still over, it is throttled.
    fn sched_rt_runtime_exceeded(&mut self, cpu: usize) -> bool {
        let period = self.knobs.derived.rt_period_ns;
        if self.rt_bw[cpu].throttled {
            return true;
        }
        if self.rt_bw[cpu].rt_runtime >= period {
            return false;
        }
        if self.knobs.get(crate::features::Knob::RtRuntimeShare) > 0.0
            && self.rt_bw[cpu].rt_time > self.rt_bw[cpu].rt_runtime
        {
            self.do_balance_runtime(cpu);
        }
        let bw = &mut self.rt_bw[cpu];
        if bw.rt_runtime != u64::MAX && bw.rt_time > bw.rt_runtime {
            bw.throttled = true;
            return true;
        }
        false
    }

    /// do_balance_runtime(): take from each other CPU 1/nr_cpus of its unused runtime, until
    /// this one has a whole period.
    fn do_balance_runtime(&mut self, cpu: usize) {
        let period = self.knobs.derived.rt_period_ns;
        let weight = self.rqs.len() as u64;
        for i in 0..self.rqs.len() {
            if i == cpu || self.rt_bw[i].rt_runtime == u64::MAX {
                continue;
            }
            let unused = self.rt_bw[i].rt_runtime.saturating_sub(self.rt_bw[i].rt_time);
            if unused == 0 {
                continue;
            }
            let mut diff = unused / weight;
            if self.rt_bw[cpu].rt_runtime + diff > period {
                diff = period - self.rt_bw[cpu].rt_runtime;
            }
            self.rt_bw[i].rt_runtime -= diff;
            self.rt_bw[cpu].rt_runtime += diff;
            if self.rt_bw[cpu].rt_runtime == period {
                break;
            }
        }
    }

    /// start_rt_bandwidth(): an RT task enqueued while the period timer sleeps starts it,
    /// firing at once (hrtimer_forward_now by 0).
    pub(crate) fn start_rt_bandwidth(&mut self) {
        if self.rt_bandwidth_enabled() && self.rt_period_at.is_none() {
            self.rt_period_at = Some(self.now);
            self.events.push(self.now, crate::event::EventKind::RtPeriod);
        }
    }

    /// sched_rt_period_timer() / do_sched_rt_period_timer(): each period every CPU pays back
    /// one runtime's worth of its RT time, and a throttled runqueue that is under its
    /// runtime again is unthrottled (its tasks may preempt). The timer stops when no CPU
    /// has RT time or RT tasks.
    pub(crate) fn rt_period_timer(&mut self) {
        if self.rt_period_at != Some(self.now) {
            return;
        }
        let mut idle = true;
        for cpu in 0..self.rqs.len() {
            let rt_running = self.rqs[cpu]
                .rt_queue
                .iter()
                .any(|k| self.tasks[k.2 as usize].policy != Policy::Deadline);
            let bw = &mut self.rt_bw[cpu];
            if bw.rt_time == 0 && !rt_running {
                continue;
            }
            if bw.rt_time > 0 {
                bw.rt_time -= bw.rt_time.min(bw.rt_runtime);
                let unthrottle = bw.throttled && bw.rt_time < bw.rt_runtime;
                if unthrottle {
                    bw.throttled = false;
                }
                if bw.rt_time > 0 || rt_running {
                    idle = false;
                }
                if unthrottle && rt_running {
                    self.resched_cpu(cpu);
                }
            } else {
                idle = false;
            }
        }
        self.rt_period_at = if idle {
            None
        } else {
            let at = self.now + self.knobs.derived.rt_period_ns;
            self.events.push(at, crate::event::EventKind::RtPeriod);
            Some(at)
        };
    }

    /// task_tick_rt(): RT PELT, and an RR task whose slice ran out goes to the tail of its
    /// priority list.
    pub(crate) fn task_tick_rt(&mut self, cpu: usize, t: TaskId) {
        self.update_rt_avg(cpu);
        let task = &mut self.tasks[t as usize];
        if task.policy == Policy::Rr && task.rr_left_ns == 0 {
            // RR slice expired: to the tail of its priority list
            task.rr_left_ns = self.knobs.derived.rr_timeslice_ns;
            let lvl = task.prio_level();
            self.rt_seq += 1;
            let seq = self.rt_seq;
            let rq = &mut self.rqs[cpu];
            rq.rt_queue.requeue_tail(t, lvl, seq);
            self.resched_cpu(cpu);
        }
    }
}

// ---------------------------------------------------------------------------------------
// RT balancing: push and pull (rt.c, CONFIG_SMP)
//
// A queued RT task that does not run is pushable when it may run on more than one CPU
// (enqueue_pushable_task); a CPU with a pushable task is RT-overloaded (rt_set_overload,
// its bit in rd->rto_mask). Both are derived from the runqueue when read, which is what the
// kernel's bookkeeping keeps them equal to. Deadline tasks are not pushed here (push_dl_task
// is deadline.c's, not modelled).

impl Sim {
    /// has_pushable_tasks()
    pub(crate) fn has_pushable_tasks(&self, cpu: usize) -> bool {
        self.pick_next_pushable_task(cpu).is_some()
    }

    /// pick_next_pushable_task(): the highest-priority queued RT task other than the running
    /// one that may move (nr_cpus_allowed > 1), first in FIFO order among equals.
    pub(crate) fn pick_next_pushable_task(&self, cpu: usize) -> Option<TaskId> {
        let rq = &self.rqs[cpu];
        rq.rt_queue.iter().map(|&(_, _, t)| t).find(|&t| {
            let task = &self.tasks[t as usize];
            Some(t) != rq.curr && matches!(task.policy, Policy::Fifo | Policy::Rr) && task.allowed.count_ones() > 1
        })
    }

    /// push_rt_task(): move the highest pushable task of `cpu` to the CPU of the lowest cpupri
    /// level below its own (find_lowest_rq, with capacity fitness); true if it moved. If that
    /// task outranks what runs on `cpu`, the CPU is rescheduled instead (it will run it).
    pub(crate) fn push_rt_task(&mut self, cpu: usize) -> bool {
        let Some(p) = self.pick_next_pushable_task(cpu) else {
            return false;
        };
        let level = self.tasks[p as usize].prio_level();
        let curr_level = self.rqs[cpu].curr.map_or(0, |c| self.tasks[c as usize].prio_level());
        if level > curr_level {
            self.resched_cpu(cpu);
            return false;
        }
        let v = self.view();
        // find_lock_lowest_rq(): the target must still be of a lower priority than p
        // (a CPU the vendor core controller isolated takes no placements)
        let Some(target) = find_lowest_rq(&v, p, cpu, cpu)
            .filter(|&c| c != cpu && cpupri_level(&v, c) < level && v.isolated & (1u64 << c) == 0)
        else {
            return false;
        };
        // move_queued_task_locked() + resched_curr(lowest_rq)
        self.migrate_queued(
            crate::balance::Migration {
                task: p,
                src: cpu,
                dst: target,
            },
            true,
        );
        self.counters.rt_pushes += 1;
        true
    }

    /// push_rt_tasks(): push until nothing more moves.
    pub(crate) fn push_rt_tasks(&mut self, cpu: usize) {
        while self.push_rt_task(cpu) {}
    }

    /// pull_rt_task() with RT_PUSH_IPI (on by default): rather than taking tasks itself, the
    /// CPU whose priority fell has every RT-overloaded CPU push, one after the other in
    /// rto_mask order (tell_cpu_to_push, rto_next_cpu, rto_push_irq_work_func). A pushed
    /// task goes to the lowest-priority CPU it fits, which need not be the one that asked.
    /// The IPIs take no simulated time. Nothing happens when no CPU is overloaded or when
    /// the only overloaded CPU is this one.
    pub(crate) fn pull_rt_task(&mut self, this_cpu: usize) {
        let rto: Vec<usize> = (0..self.rqs.len()).filter(|&c| self.has_pushable_tasks(c)).collect();
        if rto.is_empty() || rto == [this_cpu] {
            return;
        }
        self.counters.rt_pull_requests += 1;
        for cpu in rto {
            if self.has_pushable_tasks(cpu) {
                self.push_rt_tasks(cpu);
            }
        }
    }

    /// task_woken_rt(): after a wakeup that did not preempt, push if the woken task waits
    /// behind an RT or deadline task that outranks or equals it, or cannot move.
    pub(crate) fn task_woken_rt(&mut self, cpu: usize, p: TaskId) {
        let task = &self.tasks[p as usize];
        if !matches!(task.policy, Policy::Fifo | Policy::Rr) || task.allowed.count_ones() < 2 {
            return;
        }
        let Some(c) = self.rqs[cpu].curr else { return };
        if c == p || self.resched[cpu] {
            return;
        }
        let ct = &self.tasks[c as usize];
        if ct.is_rt()
            && (ct.allowed.count_ones() < 2 || ct.prio_level() >= task.prio_level())
            && self.has_pushable_tasks(cpu)
        {
            self.push_rt_tasks(cpu);
        }
    }

    /// balance_rt() before the pick: an RT (or deadline) task that left the CPU while
    /// running, when what is left here is of a lower priority (need_pull_rt_task), makes the
    /// CPU pull.
    pub(crate) fn balance_rt(&mut self, cpu: usize) {
        let Some((prev, prev_level)) = self.rt_left[cpu].take() else {
            return;
        };
        if self.rqs[cpu].rt_queue.iter().any(|&(_, _, t)| t == prev) {
            return; // requeued (a priority change): still on this rt_rq
        }
        let highest = self.rqs[cpu]
            .rt_queue
            .iter()
            .find(|&&(_, _, t)| self.tasks[t as usize].policy != Policy::Deadline)
            .map_or(0, |&(neg, _, _)| (-neg) as u32);
        if highest < prev_level {
            self.pull_rt_task(cpu);
        }
    }
}
