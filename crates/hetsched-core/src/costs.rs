//! The scheduler's own costs: the context switch, a migration's direct work, the wakeup
//! placement (find_energy_efficient_cpu or a prev_cpu fast path) and a load-balance pass.
//! The kernel does this work on some CPU, in its time: the switch in __schedule() on the
//! CPU switching, the placement in try_to_wake_up() on the waking CPU, the attach of a
//! migrated task on the destination (a balancer pulls; a remote wakeup is enqueued through
//! the destination's wake list), a balance pass on the balancing CPU.
//!
//! Each cost is invariant work (ns on a capacity-1024 CPU at f_max, the unit of `run`),
//! so it takes longer on a smaller core and at a lower frequency: the figures are times
//! measured on one core at one frequency, that is a number of that core's cycles, and the
//! capacity is the kernel's own measure of how much a cycle does on each core. The work
//! is queued on the runqueue (`Rq::overhead_left`) and executed before the running
//! task's own: the task's clock runs (the kernel accounts the switch to the tasks
//! either side of it), so it is busy time for PELT, schedutil and the energy meter.
//!
//! docs/mechanisms/costs.md.

use crate::core::*;
use crate::features::Knob;

/// cost.context_switch_ns when the platform has no measured figure: 2000 ns on the
/// capacity-1024 CPU at f_max (features.rs names the measurement)
pub const DEFAULT_CONTEXT_SWITCH_NS: u64 = 2000;

/// The step count of find_energy_efficient_cpu() on a platform, after the count in commit
/// 5b77261c5510 ("sched/topology: Remove the EM_MAX_COMPLEXITY limit"): for each
/// performance domain its CPUs are visited four times (the spare-capacity scan, the busy
/// time, the max util without the task and with it on the pd's best CPU) and its OPPs
/// twice (the two energy estimates); prev_cpu's pd is estimated once more (its CPUs and
/// OPPs).
pub fn feec_steps(pd_cpus: &[u64], pd_opps: &[u64], prev_pd: usize) -> u64 {
    let per_pd: u64 = pd_cpus.iter().zip(pd_opps).map(|(c, o)| 4 * c + 2 * o).sum();
    per_pd + pd_cpus[prev_pd] + pd_opps[prev_pd]
}

impl SchedView<'_> {
    /// Time the invariant `work` takes on `cpu` at its current frequency (ceiling).
    pub fn cost_ns(&self, cpu: usize, work: u64) -> u64 {
        if work == 0 {
            return 0;
        }
        let ci = self.platform.cpu_cluster[cpu];
        let c = &self.platform.clusters[ci];
        let khz = c.opps[self.clusters[ci].opp].khz;
        mul_div_ceil(work, 1024 * c.fmax_khz, c.capacity_orig * khz)
    }

    /// The invariant work of one context switch on `cpu`: the knob if set, else the
    /// cluster's measured figure (ns on that cluster at f_max, converted to work by its
    /// capacity), else the published default.
    pub fn context_switch_work(&self, cpu: usize) -> u64 {
        let k = self.knobs.get(Knob::CostContextSwitchNs);
        if k >= 0.0 {
            return k as u64;
        }
        match self.platform.cluster_of(cpu).context_switch_ns {
            Some(ns) => ns * self.platform.capacity_orig(cpu) / 1024,
            None => DEFAULT_CONTEXT_SWITCH_NS,
        }
    }
}

impl Sim {
    /// Queue `work` of the kernel's on `cpu`. `rearm`: the CPU's running task is between
    /// events (not inside schedule() or its own program), so its completion moves now.
    pub(crate) fn charge_cost(&mut self, cpu: usize, work: u64, rearm: bool) {
        if work == 0 {
            return;
        }
        if self.rqs[cpu].curr.is_some() {
            // the time so far was the task's (or earlier overhead's), not this work's
            self.account_progress(cpu);
        }
        self.rqs[cpu].overhead_left += work;
        self.counters.cost_work += work;
        if rearm {
            if let Some(t) = self.rqs[cpu].curr {
                if matches!(self.tasks[t as usize].cur, Cur::Run | Cur::Memrun) {
                    self.arm_completion(cpu);
                }
            }
        }
    }

    /// The wakeup placement's cost: the policy's feec steps (or fast-path step) for the
    /// last select_task_rq, on the waking CPU if a task runs there, else on the target
    /// (a timer or an interrupt woke the task on an idle CPU: that CPU wakes to run it).
    pub(crate) fn charge_placement(&mut self, target: usize) {
        let steps = self.policy.take_placement_steps();
        let per = self.knobs.get(Knob::CostFeecStepNs) as u64;
        if steps == 0 || per == 0 {
            return;
        }
        let (cpu, rearm) = match self.waker_cpu {
            Some(c) if self.rqs[c].curr.is_some() => (c, false),
            _ => (target, true),
        };
        self.counters.cost_placement += steps * per;
        self.charge_cost(cpu, steps * per, rearm);
    }

    /// Split `delta` ns of `cpu`'s running time: the queued kernel work first, the rest
    /// is the task's. Returns the task's share.
    pub(crate) fn run_overhead(&mut self, cpu: usize, delta: u64) -> u64 {
        let left = self.rqs[cpu].overhead_left;
        if left == 0 {
            return delta;
        }
        let v = self.view();
        let need = v.cost_ns(cpu, left);
        if delta >= need {
            self.rqs[cpu].overhead_left = 0;
            return delta - need;
        }
        let ci = self.platform.cpu_cluster[cpu];
        let c = &self.platform.clusters[ci];
        let done = mul_div(
            delta,
            c.capacity_orig * c.opps[self.clusters[ci].opp].khz,
            1024 * c.fmax_khz,
        );
        self.rqs[cpu].overhead_left = left - done.min(left - 1);
        0
    }
}
