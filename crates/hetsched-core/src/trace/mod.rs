//! Outputs recorded during a run: a Chrome trace-event JSON that the Perfetto UI opens
//! (one track per CPU with task slices; counter tracks for each cluster's frequency and each
//! CPU's util and power), and a sampled per-CPU time series.

//! Outputs recorded during a run: a scheduler trace in one of three formats, and a sampled
//! per-CPU time series.
//!
//! The trace formats (`TraceFormat`):
//! - `perfetto`: Perfetto's protobuf trace (perfetto.rs), the kernel's ftrace events as
//!   Perfetto records them from a phone, so that its trace processor fills the `sched`,
//!   `thread_state`, `cpu_frequency` and `cpu_idle` tables; util and power as counter tracks.
//! - `ftrace`: the same events as `trace-cmd report` text (ftrace.rs), which `hetsched
//!   replay`, LISA and most kernel tooling read.
//! - `chrome`: the Chrome trace-event JSON (chrome.rs): per-CPU task slices and counters.
//!
//! The engine tells the trace what changed (a task put on a CPU, a wakeup, a migration, an
//! idle state entered, a frequency committed); `Trace` turns that into the kernel's events:
//! it remembers which task each CPU runs and which idle state it is in, so that a
//! sched_switch names the task it replaces and cpu_idle's exit follows its entry.

mod chrome;
mod ftrace;
mod perfetto;

use crate::core::*;
use crate::platform::Platform;
use crate::workload::Policy;
use serde::Deserialize;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceFormat {
    #[default]
    Chrome,
    Ftrace,
    Perfetto,
}

/// A task as the kernel's sched events name it: pid, comm (at most TASK_COMM_LEN - 1 = 15
/// bytes) and prio (the kernel's internal priority: 100..139 for a fair task, 120 at nice 0;
/// 0..98 for RT, 99 - rt_priority; -1 for SCHED_DEADLINE).
#[derive(Debug, Clone, Copy)]
pub struct TaskRef<'a> {
    pub pid: i32,
    pub comm: &'a str,
    pub prio: i32,
}

/// The pid of the first task in a trace (task i is pid FIRST_PID + i, result.json's pid +
/// 999): pid 0 is each CPU's idle task (swapper/N), and pids 1 and 2 are init and
/// kthreadd in every kernel, which trace readers (`hetsched replay`, LISA) treat as such.
/// Each task is a process of one thread.
pub const FIRST_PID: i32 = 1000;
const TASK_COMM_LEN: usize = 16;
/// cpu_idle's state on leaving an idle state: PWR_EVENT_EXIT, (u32)-1
pub const PWR_EVENT_EXIT: u32 = u32::MAX;

/// How a task left the CPU, as sched_switch's prev_state reports it (v6.12's
/// __trace_sched_switch_state(): the TASK_REPORT index bit, or TASK_REPORT_MAX when the
/// task was preempted while runnable).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrevState {
    /// TASK_RUNNING, left voluntarily (the idle task)
    Running,
    /// TASK_RUNNING, preempted: "R+"
    Preempted,
    /// TASK_INTERRUPTIBLE: "S"
    Sleeping,
    /// TASK_UNINTERRUPTIBLE (an I/O wait): "D"
    Uninterruptible,
    /// EXIT_ZOMBIE, the last switch of an exiting task: "Z"
    Zombie,
}

impl PrevState {
    /// The raw value the tracepoint records (Perfetto's prev_state field).
    pub fn raw(self) -> i64 {
        const TASK_REPORT_MAX: i64 = 0x100;
        match self {
            PrevState::Running => 0,
            PrevState::Preempted => TASK_REPORT_MAX,
            PrevState::Sleeping => 0x1,
            PrevState::Uninterruptible => 0x2,
            PrevState::Zombie => 0x20,
        }
    }

    /// The text TP_printk writes for it.
    pub fn letters(self) -> &'static str {
        match self {
            PrevState::Running => "R",
            PrevState::Preempted => "R+",
            PrevState::Sleeping => "S",
            PrevState::Uninterruptible => "D",
            PrevState::Zombie => "Z",
        }
    }
}

/// One trace format. `curr` is the task running on the event's CPU (the ftrace line's
/// `comm-pid` column). Every method but the two that hand out bytes is optional: a format
/// records the events it has a shape for.
pub(crate) trait TraceWriter: Send {
    fn slice(&mut self, _cpu: usize, _name: &str, _task: u32, _start: u64, _end: u64) {}
    fn cluster_frequency(&mut self, _now: u64, _cluster: usize, _khz: u64) {}
    fn cpu_frequency(&mut self, _now: u64, _cpu: usize, _curr: TaskRef, _khz: u64) {}
    fn cpu_idle(&mut self, _now: u64, _cpu: usize, _curr: TaskRef, _state: u32) {}
    fn util(&mut self, _now: u64, _cpu: usize, _util: u64) {}
    fn power(&mut self, _now: u64, _cpu: usize, _uw: u64) {}
    fn sched_switch(&mut self, _now: u64, _cpu: usize, _prev: TaskRef, _prev_state: PrevState, _next: TaskRef) {}
    fn sched_waking(&mut self, _now: u64, _cpu: usize, _curr: TaskRef, _p: TaskRef, _target_cpu: usize) {}
    fn sched_wakeup(&mut self, _now: u64, _cpu: usize, _curr: TaskRef, _p: TaskRef, _target_cpu: usize, _new: bool) {}
    fn sched_migrate_task(&mut self, _now: u64, _cpu: usize, _curr: TaskRef, _p: TaskRef, _orig: usize, _dest: usize) {}
    fn sched_process_exit(&mut self, _now: u64, _cpu: usize, _curr: TaskRef, _p: TaskRef) {}
    fn sched_process_fork(&mut self, _now: u64, _cpu: usize, _parent: TaskRef, _child: TaskRef) {}
    /// The bytes written since the last drain.
    fn drain(&mut self) -> Vec<u8>;
    /// The rest of the document; called once, at the end.
    fn finish(&mut self) -> Vec<u8>;
}

/// What the trace has said of each CPU so far.
struct TracedCpus {
    /// the task the last sched_switch put on each CPU (None: its idle task)
    running: Vec<Option<TaskId>>,
    /// the idle state the last cpu_idle entered on each CPU
    idle: Vec<Option<u32>>,
    idle_comms: Vec<String>,
}

pub struct Trace {
    writer: Box<dyn TraceWriter>,
    cpus: TracedCpus,
    /// last value written per counter track, so unchanged values are not repeated
    last_util: Vec<u64>,
    last_power: Vec<u64>,
}

impl Trace {
    pub fn new(p: &Platform, format: TraceFormat) -> Trace {
        let n = p.nr_cpus();
        let writer: Box<dyn TraceWriter> = match format {
            TraceFormat::Chrome => Box::new(chrome::ChromeJson::new(p)),
            TraceFormat::Ftrace => Box::new(ftrace::FtraceText::new(p)),
            TraceFormat::Perfetto => Box::new(perfetto::PerfettoProto::new(p)),
        };
        Trace {
            writer,
            cpus: TracedCpus {
                running: vec![None; n],
                idle: vec![None; n],
                idle_comms: (0..n).map(|cpu| format!("swapper/{cpu}")).collect(),
            },
            last_util: vec![u64::MAX; n],
            last_power: vec![u64::MAX; n],
        }
    }

    pub fn slice(&mut self, cpu: usize, name: &str, task: u32, start: u64, end: u64) {
        self.writer.slice(cpu, name, task, start, end);
    }

    pub fn util(&mut self, now: u64, cpu: usize, util: u64) {
        if self.last_util[cpu] != util {
            self.last_util[cpu] = util;
            self.writer.util(now, cpu, util);
        }
    }

    pub fn power(&mut self, now: u64, cpu: usize, uw: u64) {
        if self.last_power[cpu] != uw {
            self.last_power[cpu] = uw;
            self.writer.power(now, cpu, uw);
        }
    }

    /// The bytes written since the last drain, so that a long run's trace can go to disk as
    /// the run goes: the drains and then `finish` concatenate to the whole document.
    pub fn drain(&mut self) -> Vec<u8> {
        self.writer.drain()
    }

    pub fn finish(mut self) -> Vec<u8> {
        self.writer.finish()
    }
}

/// comm as the kernel keeps it: TASK_COMM_LEN - 1 bytes at most, cut on a character
/// boundary here (the kernel cuts bytes; a name is UTF-8 in a spec).
fn comm(name: &str) -> &str {
    if name.len() < TASK_COMM_LEN {
        return name;
    }
    let mut end = TASK_COMM_LEN - 1;
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    &name[..end]
}

fn task_ref(tasks: &[Task], t: TaskId) -> TaskRef<'_> {
    let task = &tasks[t as usize];
    let prio = match task.policy {
        Policy::Other => 120 + task.nice,
        Policy::Fifo | Policy::Rr => 99 - task.rt_priority as i32,
        Policy::Deadline => -1,
    };
    TaskRef {
        pid: FIRST_PID + t as i32,
        comm: comm(&task.name),
        prio,
    }
}

impl TracedCpus {
    fn idle_task(&self, cpu: usize) -> TaskRef<'_> {
        TaskRef {
            pid: 0,
            comm: &self.idle_comms[cpu],
            prio: 120,
        }
    }

    /// The task running on `cpu` as the trace last showed it.
    fn curr<'a>(&'a self, tasks: &'a [Task], cpu: usize) -> TaskRef<'a> {
        match self.running[cpu] {
            Some(t) => task_ref(tasks, t),
            None => self.idle_task(cpu),
        }
    }
}

/// prev_state of a task leaving its CPU, from what the engine made of it.
fn prev_state(task: &Task) -> PrevState {
    match task.state {
        TaskState::Sleeping if task.in_iowait => PrevState::Uninterruptible,
        TaskState::Sleeping => PrevState::Sleeping,
        TaskState::Exited => PrevState::Zombie,
        _ => PrevState::Preempted,
    }
}

/// Long format: one row per CPU per sample.
#[derive(Debug, Default, Clone)]
pub struct TimeSeries {
    pub t_ns: Vec<u64>,
    pub cpu: Vec<u32>,
    pub util: Vec<u64>,
    pub freq_khz: Vec<u64>,
    /// -1 = running, else the idle state index
    pub idle_state: Vec<i32>,
    pub power_uw: Vec<u64>,
}

impl TimeSeries {
    /// The rows sampled since the last drain (the series starts again empty).
    pub fn drain(&mut self) -> TimeSeries {
        std::mem::take(self)
    }

    pub fn push(&mut self, t: u64, cpu: u32, util: u64, khz: u64, idle: i32, p: u64) {
        self.t_ns.push(t);
        self.cpu.push(cpu);
        self.util.push(util);
        self.freq_khz.push(khz);
        self.idle_state.push(idle);
        self.power_uw.push(p);
    }
}

// ---------------------------------------------------------------------------------------
// the engine's side of the outputs

impl Sim {
    pub(crate) fn sample(&mut self) {
        let now = self.now;
        for cpu in 0..self.rqs.len() {
            let util = self.cpu_util_cfs(cpu);
            let khz = self.khz(cpu);
            let idle = match self.rqs[cpu].idle_state {
                Some(s) => s as i32,
                None => -1,
            };
            let p = self.meter.cpu_power_uw(cpu);
            if let Some(ts) = self.timeseries.as_mut() {
                ts.push(now, cpu as u32, util, khz, idle, p);
            }
        }
    }

    pub(crate) fn trace_slice_end(&mut self, cpu: usize, t: TaskId) {
        if let Some(tr) = self.trace.as_mut() {
            let start = self.rqs[cpu].slice_start;
            if self.now > start {
                tr.slice(cpu, &self.tasks[t as usize].name, t, start, self.now);
            }
            self.rqs[cpu].slice_start = self.now;
        }
    }

    pub(crate) fn trace_power(&mut self, cpu: usize) {
        if let Some(tr) = self.trace.as_mut() {
            tr.power(self.now, cpu, self.meter.cpu_power_uw(cpu));
        }
    }

    /// sched_switch: `next` (None: the idle task) takes `cpu` from the task the trace last
    /// put there. The engine calls it where the CPU picks (set_next, enter_idle), so a task
    /// that blocks and the task that follows it make one event, as in the kernel.
    pub(crate) fn trace_switch(&mut self, cpu: usize, next: Option<TaskId>) {
        let Some(tr) = self.trace.as_mut() else { return };
        if tr.cpus.running[cpu] == next {
            return;
        }
        let now = self.now;
        if let Some(n) = next {
            // still shown on the CPU it left at this instant, which has not picked yet (an
            // active migration, a wakeup elsewhere): it leaves there first
            if let Some(other) = tr.cpus.running.iter().position(|&r| r == Some(n)) {
                let (prev, idle) = (task_ref(&self.tasks, n), tr.cpus.idle_task(other));
                tr.writer.sched_switch(now, other, prev, PrevState::Preempted, idle);
                tr.cpus.running[other] = None;
            }
        }
        let state = match tr.cpus.running[cpu] {
            Some(p) => prev_state(&self.tasks[p as usize]),
            None => PrevState::Running,
        };
        let prev = tr.cpus.curr(&self.tasks, cpu);
        let next_ref = match next {
            Some(n) => task_ref(&self.tasks, n),
            None => tr.cpus.idle_task(cpu),
        };
        tr.writer.sched_switch(now, cpu, prev, state, next_ref);
        tr.cpus.running[cpu] = next;
    }

    /// cpu_idle on entering idle state `state` (leaving the one it was in first).
    pub(crate) fn trace_idle_enter(&mut self, cpu: usize, state: usize) {
        self.trace_idle_exit(cpu);
        let Some(tr) = self.trace.as_mut() else { return };
        let curr = tr.cpus.curr(&self.tasks, cpu);
        tr.writer.cpu_idle(self.now, cpu, curr, state as u32);
        tr.cpus.idle[cpu] = Some(state as u32);
    }

    /// cpu_idle(PWR_EVENT_EXIT): the CPU is out of its idle state, as cpuidle_enter_state()
    /// writes it when the state's enter() returns (after an exit latency, which the energy
    /// meter counts as busy from its start).
    pub(crate) fn trace_idle_exit(&mut self, cpu: usize) {
        let Some(tr) = self.trace.as_mut() else { return };
        if tr.cpus.idle[cpu].take().is_some() {
            let curr = tr.cpus.curr(&self.tasks, cpu);
            tr.writer.cpu_idle(self.now, cpu, curr, PWR_EVENT_EXIT);
        }
    }

    /// A frequency change of cluster `ci`: one counter for the cluster (chrome), and the
    /// cpu_frequency event the cpufreq core writes for each CPU of the policy.
    pub(crate) fn trace_frequency(&mut self, ci: usize, khz: u64) {
        let Some(tr) = self.trace.as_mut() else { return };
        tr.writer.cluster_frequency(self.now, ci, khz);
        for &cpu in &self.platform.clusters[ci].cpus {
            let curr = tr.cpus.curr(&self.tasks, cpu);
            tr.writer.cpu_frequency(self.now, cpu, curr, khz);
        }
    }

    /// The switcher moved `cpu` to another cluster: its frequency is that cluster's now.
    pub(crate) fn trace_cpu_frequency(&mut self, cpu: usize, khz: u64) {
        let Some(tr) = self.trace.as_mut() else { return };
        let curr = tr.cpus.curr(&self.tasks, cpu);
        tr.writer.cpu_frequency(self.now, cpu, curr, khz);
    }

    /// sched_waking, on the CPU running try_to_wake_up(); target_cpu is where `t` last ran.
    pub(crate) fn trace_waking(&mut self, on: usize, t: TaskId) {
        let Some(tr) = self.trace.as_mut() else { return };
        let (curr, p) = (tr.cpus.curr(&self.tasks, on), task_ref(&self.tasks, t));
        tr.writer
            .sched_waking(self.now, on, curr, p, self.tasks[t as usize].cpu);
    }

    /// sched_wakeup (sched_wakeup_new for a new task): `t` is runnable on `target`.
    pub(crate) fn trace_wakeup(&mut self, on: usize, t: TaskId, target: usize, new: bool) {
        let Some(tr) = self.trace.as_mut() else { return };
        let (curr, p) = (tr.cpus.curr(&self.tasks, on), task_ref(&self.tasks, t));
        tr.writer.sched_wakeup(self.now, on, curr, p, target, new);
    }

    /// sched_migrate_task (set_task_cpu() to another CPU), written on `on`.
    pub(crate) fn trace_migrate(&mut self, on: usize, t: TaskId, orig: usize, dest: usize) {
        let Some(tr) = self.trace.as_mut() else { return };
        let (curr, p) = (tr.cpus.curr(&self.tasks, on), task_ref(&self.tasks, t));
        tr.writer.sched_migrate_task(self.now, on, curr, p, orig, dest);
    }

    /// sched_process_fork, from kernel_clone() on the parent's CPU, before the child's
    /// wake_up_new_task().
    pub(crate) fn trace_fork(&mut self, parent: TaskId, child: TaskId) {
        let Some(tr) = self.trace.as_mut() else { return };
        let cpu = self.tasks[parent as usize].cpu;
        let (p, c) = (task_ref(&self.tasks, parent), task_ref(&self.tasks, child));
        tr.writer.sched_process_fork(self.now, cpu, p, c);
    }

    /// sched_process_exit, from do_exit() on the task's own CPU, before its last switch.
    pub(crate) fn trace_exit(&mut self, cpu: usize, t: TaskId) {
        let Some(tr) = self.trace.as_mut() else { return };
        let (curr, p) = (tr.cpus.curr(&self.tasks, cpu), task_ref(&self.tasks, t));
        tr.writer.sched_process_exit(self.now, cpu, curr, p);
    }

    /// Close the trace at the current time (slices in progress end here).
    pub fn finish_trace(&mut self) -> Option<Vec<u8>> {
        let now = self.now;
        let mut tr = self.trace.take()?;
        for cpu in 0..self.rqs.len() {
            if let Some(t) = self.rqs[cpu].curr {
                let start = self.rqs[cpu].slice_start;
                if now > start {
                    tr.slice(cpu, &self.tasks[t as usize].name, t, start, now);
                }
            }
        }
        Some(tr.finish())
    }
}
