//! The scheduler's system calls as a task's program makes them, after
//! kernel/sched/syscalls.c (v6.12): `sched_yield()` and `sched_setattr()` on itself, and
//! `fork` (wake_up_new_task of a copy of a template task).
//!
//! Differences: a clamp change requeues the running task (the kernel updates it in place);
//! CFS's skip buddy is honoured unconditionally; deadline parameters are set at creation only.
//! docs/mechanisms/syscalls.md.
use crate::core::*;
use crate::fair::base_slice;
use crate::fair::{calc_delta_fair, nice_to_weight, weight_to_wmult};
use crate::limits::MAX_TASKS;
use crate::policies::WakeKind;
use crate::workload::rtapp::{cpus_mask, make_task};
use crate::workload::{Policy, SetAttr};

impl Sim {
    /// `fork` by task `parent`: start a copy of template k now (wake_up_new_task). False
    /// when the run already holds MAX_TASKS tasks: the run stops (limits.rs), as the
    /// kernel's fork() fails at pid_max.
    pub(crate) fn fork(&mut self, parent: TaskId, k: u32) -> bool {
        if self.tasks.len() >= MAX_TASKS {
            self.stop_fork(parent, k);
            return false;
        }
        let tmpl = &mut self.tasks[k as usize];
        tmpl.forks += 1;
        let mut spec = tmpl.spec.clone();
        spec.name = format!("{}-{:04}", tmpl.name, tmpl.forks - 1);
        spec.start = true;
        spec.delay_ns = self.now;
        let id = self.tasks.len() as TaskId;
        let mut task = make_task(id, &spec, &self.platform, format!("tasks[{k}]")).expect("validated at load");
        task.spec_index = k;
        if self.walt.is_some() {
            task.uclamp = [0, 1024]; // msm-4.14: no uclamp
            task.uclamp_req = task.uclamp;
        }
        if let Some(vg) = self.vendor_groups.as_deref() {
            task.uclamp = vg.restrict_task(&task);
        }
        if !spec.daemon {
            self.nr_to_exit += 1;
        }
        self.nr_alive += 1;
        self.tasks.push(task);
        self.trace_fork(parent, id);
        self.walt_fork(k, id);
        self.wake_up(id);
        true
    }

    /// sched_yield(): fair -> the next pick passes over the task once (CFS's skip buddy;
    /// EEVDF: its deadline moves one slice on), RT -> to the tail of its priority list.
    /// Returns true if the task gave up the CPU (its program resumes when it is picked).
    pub(crate) fn sched_yield(&mut self, cpu: usize, t: TaskId) -> bool {
        self.update_rq_clock(cpu);
        self.update_curr(cpu);
        let task = &self.tasks[t as usize];
        let rq = &self.rqs[cpu];
        if task.is_rt() {
            let level = task.prio_level();
            let others = rq.rt_queue.len() > 1 && rq.rt_queue.highest_level_excluding(t) == Some(level);
            if !others || task.policy == Policy::Deadline {
                return false;
            }
            self.rt_seq += 1;
            let seq = self.rt_seq;
            self.rqs[cpu].rt_queue.requeue_tail(t, level, seq);
        } else {
            if rq.cfs.nr_running < 2 {
                return false;
            }
            if self.eevdf() {
                let se = &mut self.tasks[t as usize].se;
                se.deadline += calc_delta_fair(base_slice(se, self.tunables.min_granularity), se.weight, se.wmult);
                se.protect = false;
            } else {
                self.rqs[cpu].yield_skip = Some(t);
            }
        }
        // the task stays current until schedule() runs; if picked again, the completion
        // armed now (nothing left to run) carries its program on
        self.resched_cpu(cpu);
        self.arm_completion(cpu);
        true
    }

    /// sched_setattr() on itself: a nice change reweights in place; a class, priority,
    /// clamp or affinity change takes the task off the CPU and queues it again with the
    /// new attributes (on another allowed CPU if it may no longer run here). Returns true
    /// if the task left the CPU.
    pub(crate) fn setattr(&mut self, cpu: usize, t: TaskId, a: &SetAttr) -> bool {
        let n = self.platform.nr_cpus();
        let task = &self.tasks[t as usize];
        let new_policy = a.policy.unwrap_or(task.policy);
        let mut allowed = match &a.cpus {
            Some(c) => cpus_mask(c.as_deref(), n, "setattr").unwrap_or(task.allowed),
            None => task.allowed,
        };
        if let (Some(hp), Some(_)) = (self.hotplug.as_mut(), &a.cpus) {
            if allowed & hp.online == 0 {
                // __set_cpus_allowed_ptr() refuses a mask without an active CPU (-EINVAL):
                // the affinity stays as it was
                allowed = task.allowed;
            } else {
                // the request is kept; only online CPUs take effect (hotplug.rs)
                hp.user_allowed[t as usize] = allowed;
                allowed = hp.effective(allowed);
            }
        }
        let clamps = |p: Policy| {
            let (dmin, dmax) = match p {
                Policy::Other => (0, 1024),
                Policy::Fifo | Policy::Rr => (self.knobs.derived.uclamp_min_rt_default, 1024),
                _ => (1024, 1024),
            };
            [
                a.util_min
                    .map_or(if p != task.policy { dmin } else { task.uclamp_req[0] }, |v| v as u64),
                a.util_max
                    .map_or(if p != task.policy { dmax } else { task.uclamp_req[1] }, |v| v as u64),
            ]
        };
        let uclamp_req = clamps(new_policy);
        let min_user = a.util_min.is_some() || (new_policy == task.policy && task.uclamp_min_user);
        let nice = a.nice.unwrap_or(task.nice);
        // under pixel-5.10 the request is held within the task's vendor group
        let uclamp = match self.vendor_groups.as_deref() {
            Some(vg) => {
                let g = vg.group(task.spec_index as usize);
                vg.restrict(g, uclamp_req, min_user, new_policy == Policy::Other && nice > 0)
            }
            None => uclamp_req,
        };
        let prio = a.rt_priority.unwrap_or(task.rt_priority);
        let requeue = new_policy != task.policy
            || (new_policy != Policy::Other && prio != task.rt_priority)
            || uclamp != task.uclamp
            || allowed & (1 << cpu) == 0;
        if !requeue {
            let task = &mut self.tasks[t as usize];
            task.allowed = allowed;
            task.uclamp_req = uclamp_req;
            task.uclamp_min_user = min_user;
            if nice != task.nice && task.policy == Policy::Other {
                // reweight_entity() on the running task (its vruntime is kept)
                self.update_rq_clock(cpu);
                self.update_curr(cpu);
                let w = nice_to_weight(nice);
                let task = &mut self.tasks[t as usize];
                let rq = &mut self.rqs[cpu];
                rq.cfs.load_weight = rq.cfs.load_weight - task.se.weight + w;
                let key = (task.se.vruntime, t);
                let (deadline, ran) = (task.se.deadline, task.se.exec_start);
                if rq.cfs.timeline.remove(&key, task.se.weight, deadline, ran) {
                    rq.cfs.timeline.insert(key, w, deadline, ran);
                }
                task.se.weight = w;
                task.se.wmult = weight_to_wmult(w);
            }
            self.tasks[t as usize].nice = nice;
            return false;
        }
        self.update_rq_clock(cpu);
        self.update_curr(cpu);
        self.trace_slice_end(cpu, t);
        let was_fair = !self.tasks[t as usize].is_rt();
        self.dequeue_task(cpu, t, false);
        self.rqs[cpu].curr = None;
        if was_fair {
            // switched_from_fair() / a migration: the task's load leaves this cfs_rq
            self.detach_pelt_for_migration(cpu, t, crate::fair::Detach::Queued);
        }
        let task = &mut self.tasks[t as usize];
        task.policy = new_policy;
        task.rt_priority = prio;
        task.nice = nice;
        task.uclamp = uclamp;
        task.uclamp_req = uclamp_req;
        task.uclamp_min_user = min_user;
        task.allowed = allowed;
        let w = nice_to_weight(nice);
        task.se.weight = w;
        task.se.wmult = weight_to_wmult(w);
        task.state = TaskState::Runnable;
        if self.uclamp_used || a.util_min.is_some() || a.util_max.is_some() {
            self.uclamp_used = true;
        }
        let dst = if allowed & (1 << cpu) != 0 {
            cpu
        } else {
            // __set_cpus_allowed_ptr() moves it: select_task_rq() with prev_cpu outside
            // the new mask
            self.select_task_rq(t, cpu, WakeKind::Wakeup)
        };
        if dst != cpu {
            self.trace_migrate(cpu, t, cpu, dst);
            self.walt_migrate(t, cpu, dst);
            self.policy.migrate_task_rq(&view!(self), t, cpu, dst);
            let task = &mut self.tasks[t as usize];
            task.stats.migrations += 1;
            self.counters.migrations += 1;
        }
        let task = &mut self.tasks[t as usize];
        task.se.vruntime += self.rqs[dst].cfs.min_vruntime;
        self.enqueue_task(dst, t, false, false);
        self.check_preempt(dst, t);
        self.resched_cpu(cpu);
        true
    }
}
