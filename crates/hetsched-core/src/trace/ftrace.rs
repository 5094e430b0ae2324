//! The kernel's sched and power events as `trace-cmd report` prints them: a `version = 6`
//! and `cpus=N` header, then one line per event,
//! `COMM-PID [CPU] SECONDS: EVENT: FIELDS`, where COMM-PID is the task running on that CPU
//! and FIELDS is the event's TP_printk text in v6.12 (include/trace/events/sched.h and
//! power.h). Timestamps are printed to the nanosecond (`trace-cmd report -t`), so that a
//! replay of the file sees the simulated times exactly; the flags column (irqs-off,
//! need-resched, preempt depth) is left out, as `trace-cmd report` leaves it out without
//! `-l`. LISA reads the text as it reads a `trace-cmd report` of a phone
//! (`lisa.trace.Trace("trace.txt")`).

use super::{PrevState, TaskRef, TraceWriter};
use crate::platform::Platform;
use std::fmt::Write;

pub(super) struct FtraceText {
    buf: String,
}

/// A timestamp in seconds with nanosecond digits.
struct Seconds(u64);

impl std::fmt::Display for Seconds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{:09}", self.0 / 1_000_000_000, self.0 % 1_000_000_000)
    }
}

impl FtraceText {
    pub(super) fn new(p: &Platform) -> FtraceText {
        let mut buf = String::with_capacity(1 << 20);
        let _ = write!(buf, "version = 6\ncpus={}\n", p.nr_cpus());
        FtraceText { buf }
    }

    /// The line's head: the running task (`<idle>` for pid 0, as trace-cmd names it), the
    /// CPU and the time, then the event's name (one space after it, where trace-cmd pads
    /// the name to a column: readers split on the colon).
    fn head(&mut self, now: u64, cpu: usize, curr: TaskRef, event: &str) {
        let comm = if curr.pid == 0 { "<idle>" } else { curr.comm };
        let _ = write!(
            self.buf,
            "{comm:>16}-{:<5} [{cpu:03}] {}: {event}: ",
            curr.pid,
            Seconds(now)
        );
    }

    fn task_event(&mut self, now: u64, cpu: usize, curr: TaskRef, event: &str, p: TaskRef, target_cpu: usize) {
        self.head(now, cpu, curr, event);
        let _ = writeln!(
            self.buf,
            "comm={} pid={} prio={} target_cpu={target_cpu:03}",
            p.comm, p.pid, p.prio
        );
    }
}

impl TraceWriter for FtraceText {
    fn cpu_frequency(&mut self, now: u64, cpu: usize, curr: TaskRef, khz: u64) {
        self.head(now, cpu, curr, "cpu_frequency");
        let _ = writeln!(self.buf, "state={khz} cpu_id={cpu}");
    }

    fn cpu_idle(&mut self, now: u64, cpu: usize, curr: TaskRef, state: u32) {
        self.head(now, cpu, curr, "cpu_idle");
        let _ = writeln!(self.buf, "state={state} cpu_id={cpu}");
    }

    fn sched_switch(&mut self, now: u64, cpu: usize, prev: TaskRef, prev_state: PrevState, next: TaskRef) {
        self.head(now, cpu, prev, "sched_switch");
        let _ = writeln!(
            self.buf,
            "prev_comm={} prev_pid={} prev_prio={} prev_state={} ==> next_comm={} next_pid={} next_prio={}",
            prev.comm,
            prev.pid,
            prev.prio,
            prev_state.letters(),
            next.comm,
            next.pid,
            next.prio
        );
    }

    fn sched_waking(&mut self, now: u64, cpu: usize, curr: TaskRef, p: TaskRef, target_cpu: usize) {
        self.task_event(now, cpu, curr, "sched_waking", p, target_cpu);
    }

    fn sched_wakeup(&mut self, now: u64, cpu: usize, curr: TaskRef, p: TaskRef, target_cpu: usize, new: bool) {
        let event = if new { "sched_wakeup_new" } else { "sched_wakeup" };
        self.task_event(now, cpu, curr, event, p, target_cpu);
    }

    fn sched_migrate_task(&mut self, now: u64, cpu: usize, curr: TaskRef, p: TaskRef, orig: usize, dest: usize) {
        self.head(now, cpu, curr, "sched_migrate_task");
        let _ = writeln!(
            self.buf,
            "comm={} pid={} prio={} orig_cpu={orig} dest_cpu={dest}",
            p.comm, p.pid, p.prio
        );
    }

    fn sched_process_exit(&mut self, now: u64, cpu: usize, curr: TaskRef, p: TaskRef) {
        self.head(now, cpu, curr, "sched_process_exit");
        let _ = writeln!(self.buf, "comm={} pid={} prio={}", p.comm, p.pid, p.prio);
    }

    fn sched_process_fork(&mut self, now: u64, cpu: usize, parent: TaskRef, child: TaskRef) {
        self.head(now, cpu, parent, "sched_process_fork");
        let _ = writeln!(
            self.buf,
            "comm={} pid={} child_comm={} child_pid={}",
            parent.comm, parent.pid, child.comm, child.pid
        );
    }

    fn drain(&mut self) -> Vec<u8> {
        std::mem::replace(&mut self.buf, String::with_capacity(1 << 20)).into_bytes()
    }

    fn finish(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.buf).into_bytes()
    }
}
