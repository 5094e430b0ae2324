//! The resolved workload (docs/engine-interface.md): tasks as rt-app programs of phases
//! and events, in engine units. Work is invariant: ns of execution on a capacity-1024 CPU
//! at its f_max, as rt-app's calibrated `run` is.

pub mod rtapp;

use crate::error::{config, from_json, Result};
use crate::limits::{MAX_EVENT_NS, MAX_SYNC_OBJECTS, MAX_TASKS};
use serde::Deserialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    Other,
    Fifo,
    Rr,
    /// SCHED_DEADLINE (CBS + EDF, rt.rs describes the simplifications)
    Deadline,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TimerMode {
    Relative,
    Absolute,
}

#[derive(Debug, Clone, Copy, Deserialize)]
pub struct TimerSpec {
    pub id: usize,
    pub period_ns: u64,
    #[serde(default = "relative")]
    pub mode: TimerMode,
}

fn relative() -> TimerMode {
    TimerMode::Relative
}

#[derive(Debug, Clone, Copy, Deserialize)]
pub struct CondRef {
    pub cond: u32,
    pub mutex: u32,
}

/// sched_setattr() on itself, from an rt-app phase property: only the given keys change.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetAttr {
    #[serde(default)]
    pub policy: Option<Policy>,
    #[serde(default)]
    pub nice: Option<i32>,
    #[serde(default)]
    pub rt_priority: Option<u32>,
    /// Some(None) = every CPU again
    #[serde(default, deserialize_with = "some_opt")]
    pub cpus: Option<Option<Vec<usize>>>,
    #[serde(default)]
    pub util_min: Option<u32>,
    #[serde(default)]
    pub util_max: Option<u32>,
}

fn some_opt<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<Option<Vec<usize>>>, D::Error> {
    Ok(Some(Option::<Vec<usize>>::deserialize(d)?))
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ev {
    Run(u64),
    Runtime(u64),
    Sleep(u64),
    Timer(TimerSpec),
    Lock(u32),
    Unlock(u32),
    Wait(CondRef),
    Signal(u32),
    Broad(u32),
    Sync(CondRef),
    Barrier(u32),
    SemPost(u32),
    /// a post whose wakeup carries WF_SYNC: the poster is about to sleep, as binder's
    /// two-way transactions and replies say with wake_up_interruptible_sync()
    SemPostSync(u32),
    SemWait(u32),
    Yield(Option<serde_json::Value>),
    Fork(u32),
    Memrun(u64),
    Iowait(u64),
    Mark(u32),
    SleepUntil(u64),
    Setattr(SetAttr),
}

/// The task performance model (docs/engine-interface.md): how fast its work runs on each
/// core type and frequency, and after a migration.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerfSpec {
    #[serde(default = "one_f")]
    pub ipc_exp: f64,
    #[serde(default)]
    pub ipc: Option<Vec<f64>>,
    #[serde(default)]
    pub mem_frac: f64,
    #[serde(default)]
    pub cache_ns: u64,
    #[serde(default)]
    pub cache_slowdown: f64,
}

fn one_f() -> f64 {
    1.0
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, Deserialize)]
pub struct PhaseSpec {
    #[serde(default = "one", rename = "loop")]
    pub loop_: i64,
    pub events: Vec<Ev>,
}

fn one() -> i64 {
    1
}

#[derive(Debug, Clone, Deserialize)]
pub struct TaskSpec {
    pub name: String,
    #[serde(default = "other")]
    pub policy: Policy,
    #[serde(default)]
    pub nice: i32,
    #[serde(default)]
    pub rt_priority: u32,
    #[serde(default)]
    pub cpus: Option<Vec<usize>>,
    #[serde(default)]
    pub util_min: Option<u32>,
    #[serde(default)]
    pub util_max: Option<u32>,
    #[serde(default)]
    pub delay_ns: u64,
    #[serde(default = "forever", rename = "loop")]
    pub loop_: i64,
    pub phases: Vec<PhaseSpec>,
    /// false: a template, started only by `fork`
    #[serde(default = "yes")]
    pub start: bool,
    #[serde(default)]
    pub perf: Option<PerfSpec>,
    /// the custom slice (EEVDF): sched_attr.sched_runtime of a SCHED_OTHER task
    #[serde(default)]
    pub slice_ns: Option<u64>,
    #[serde(default)]
    pub dl_runtime_ns: u64,
    #[serde(default)]
    pub dl_period_ns: u64,
    #[serde(default)]
    pub dl_deadline_ns: u64,
    /// the schedtune boost group (/dev/stune/<group>) the task runs in under the msm-4.14
    /// profile: foreground, background, top-app or rt; none is the root group
    #[serde(default)]
    pub stune: Option<String>,
    /// a service that runs beside the workload and does not keep a run going: a run until
    /// every task has ended ends when the others have (a phone's system threads beside the
    /// app under test); its forks are daemons too
    #[serde(default)]
    pub daemon: bool,
}

fn other() -> Policy {
    Policy::Other
}
fn forever() -> i64 {
    -1
}

#[derive(Debug, Clone, Deserialize)]
pub struct WorkloadSpec {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub duration_ns: Option<u64>,
    #[serde(default)]
    pub timers: usize,
    #[serde(default)]
    pub mutexes: usize,
    #[serde(default)]
    pub conds: usize,
    #[serde(default)]
    pub sems: Vec<u64>,
    #[serde(default)]
    pub barriers: Vec<u32>,
    #[serde(default)]
    pub marks: Vec<String>,
    pub tasks: Vec<TaskSpec>,
}

impl WorkloadSpec {
    pub fn from_json(text: &str) -> Result<WorkloadSpec> {
        // straight from the text (serde_json's recursion limit guards the depth), so that
        // an error has a position, hence a field
        let spec: WorkloadSpec = from_json("workload", text)?;
        spec.validate()?;
        Ok(spec)
    }

    pub fn validate(&self) -> Result<()> {
        self.validate_objects()?;
        for (ti, t) in self.tasks.iter().enumerate() {
            self.validate_task(ti, t)?;
        }
        Ok(())
    }

    /// The workload-wide counts: tasks, the sync objects the engine allocates up front,
    /// and barriers.
    fn validate_objects(&self) -> Result<()> {
        if self.tasks.is_empty() {
            return Err(config("workload", "tasks", "at least one task"));
        }
        if self.tasks.len() > MAX_TASKS {
            return Err(config(
                "workload",
                "tasks",
                format!(
                    "at most {MAX_TASKS} tasks ({}), got {}",
                    crate::limits::MAX_TASKS_WHY,
                    self.tasks.len()
                ),
            ));
        }
        for (name, n) in [
            ("timers", self.timers),
            ("mutexes", self.mutexes),
            ("conds", self.conds),
        ] {
            if n > MAX_SYNC_OBJECTS {
                return Err(config(
                    "workload",
                    name,
                    format!("at most {MAX_SYNC_OBJECTS} (the engine allocates them at once), got {n}"),
                ));
            }
        }
        if self.tasks.iter().all(|t| !t.start) {
            return Err(config(
                "workload",
                "tasks",
                "at least one task that starts (start: true)",
            ));
        }
        if let Some(i) = self.barriers.iter().position(|&n| n == 0) {
            return Err(config(
                "workload",
                format!("barriers[{i}]"),
                "at least one task meeting there",
            ));
        }
        Ok(())
    }

    /// One task, in the order its errors are reported: scheduling attributes, the rt-app
    /// program (phases, then each event), SCHED_DEADLINE parameters, the performance model,
    /// uclamp.
    fn validate_task(&self, ti: usize, t: &TaskSpec) -> Result<()> {
        let f = |s: &str| format!("tasks[{ti}].{s}");
        if !(-20..=19).contains(&t.nice) {
            return Err(config("workload", f("nice"), "a nice value in -20..19"));
        }
        if matches!(t.policy, Policy::Fifo | Policy::Rr) && !(1..=99).contains(&t.rt_priority) {
            return Err(config("workload", f("rt_priority"), "an RT priority in 1..99"));
        }
        if t.phases.is_empty() || t.phases.iter().all(|p| p.events.is_empty()) {
            return Err(config("workload", f("phases"), "at least one event"));
        }
        if t.loop_ == 0 || t.loop_ < -1 {
            return Err(config("workload", f("loop"), "-1 (forever) or a positive count"));
        }
        for (pi, p) in t.phases.iter().enumerate() {
            if p.loop_ == 0 || p.loop_ < -1 {
                return Err(config(
                    "workload",
                    f(&format!("phases[{pi}].loop")),
                    "-1 (forever) or a positive count",
                ));
            }
            for (ei, e) in p.events.iter().enumerate() {
                self.validate_event(&|s: &str| f(&format!("phases[{pi}].events[{ei}]{s}")), e)?;
            }
        }
        if t.policy == Policy::Deadline {
            validate_dl_params(t, &f)?;
        }
        if let Some(pf) = &t.perf {
            validate_perf(pf, &f)?;
        }
        for v in [t.util_min, t.util_max].into_iter().flatten() {
            if v > 1024 {
                return Err(config("workload", f("util_min/util_max"), "a clamp in 0..1024"));
            }
        }
        Ok(())
    }

    /// One event: the sync object, task or mark it names exists, a setattr is one the
    /// engine accepts, and its length (and a timer's id and period) are in range. `at`
    /// gives the event's field path with a suffix appended.
    fn validate_event(&self, at: &dyn Fn(&str) -> String, e: &Ev) -> Result<()> {
        let field = || at("");
        let check = |id: u32, n: usize, what: &str| -> Result<()> {
            if (id as usize) < n {
                Ok(())
            } else {
                Err(config(
                    "workload",
                    field(),
                    format!("a {what} id below {n} (the workload's {what} count)"),
                ))
            }
        };
        match e {
            Ev::Lock(m) | Ev::Unlock(m) => check(*m, self.mutexes, "mutex")?,
            Ev::Wait(c) | Ev::Sync(c) => {
                check(c.cond, self.conds, "cond")?;
                check(c.mutex, self.mutexes, "mutex")?;
            }
            Ev::Signal(c) | Ev::Broad(c) => check(*c, self.conds, "cond")?,
            Ev::Barrier(b) => check(*b, self.barriers.len(), "barrier")?,
            Ev::SemPost(s) | Ev::SemPostSync(s) | Ev::SemWait(s) => check(*s, self.sems.len(), "semaphore")?,
            Ev::Fork(k) => check(*k, self.tasks.len(), "task")?,
            Ev::Mark(m) => check(*m, self.marks.len(), "mark")?,
            Ev::Setattr(a) => validate_setattr(a, &field)?,
            _ => {}
        }
        let length = match e {
            Ev::Run(ns) | Ev::Runtime(ns) | Ev::Sleep(ns) | Ev::Memrun(ns) | Ev::Iowait(ns) => *ns,
            Ev::Timer(ts) => ts.period_ns,
            _ => 0,
        };
        if length > MAX_EVENT_NS {
            return Err(config(
                "workload",
                field(),
                format!("an event of at most {MAX_EVENT_NS} ns (some 52 days), got {length} ns"),
            ));
        }
        if let Ev::Timer(ts) = e {
            if ts.id >= self.timers {
                return Err(config(
                    "workload",
                    at(".timer.id"),
                    format!("an id below timers = {}", self.timers),
                ));
            }
            if ts.period_ns == 0 {
                return Err(config("workload", at(".timer.period_ns"), "a positive period"));
            }
        }
        Ok(())
    }
}

/// A sched_setattr() event: the same ranges as the task's own attributes, and no switch to
/// SCHED_DEADLINE, whose parameters only the task itself carries.
fn validate_setattr(a: &SetAttr, field: &dyn Fn() -> String) -> Result<()> {
    if let Some(n) = a.nice {
        if !(-20..=19).contains(&n) {
            return Err(config("workload", field(), "a nice value in -20..19"));
        }
    }
    if let Some(p) = a.rt_priority {
        if !(1..=99).contains(&p) {
            return Err(config("workload", field(), "an RT priority in 1..99"));
        }
    }
    if a.policy == Some(Policy::Deadline) {
        return Err(config(
            "workload",
            field(),
            "a policy other than deadline (set it on the task)",
        ));
    }
    for v in [a.util_min, a.util_max].into_iter().flatten() {
        if v > 1024 {
            return Err(config("workload", field(), "a clamp in 0..1024"));
        }
    }
    Ok(())
}

/// A deadline task's runtime, deadline and period, the unset ones defaulted as the engine
/// will (period = runtime, deadline = period).
fn validate_dl_params(t: &TaskSpec, f: &dyn Fn(&str) -> String) -> Result<()> {
    if t.dl_runtime_ns == 0 {
        return Err(config(
            "workload",
            f("dl_runtime_ns"),
            "a positive runtime for a deadline task",
        ));
    }
    let period = if t.dl_period_ns == 0 {
        t.dl_runtime_ns
    } else {
        t.dl_period_ns
    };
    let deadline = if t.dl_deadline_ns == 0 {
        period
    } else {
        t.dl_deadline_ns
    };
    if !(t.dl_runtime_ns <= deadline && deadline <= period) {
        return Err(config(
            "workload",
            f("dl_runtime_ns"),
            "runtime <= deadline <= period (sched_setattr's rule)",
        ));
    }
    Ok(())
}

/// The performance model's parameters, each finite and within the range the model is
/// defined on.
fn validate_perf(pf: &PerfSpec, f: &dyn Fn(&str) -> String) -> Result<()> {
    let bad = |k: &str, what: &str| config("workload", f(&format!("perf.{k}")), what.to_string());
    if !(pf.ipc_exp.is_finite() && (0.0..=2.0).contains(&pf.ipc_exp)) {
        return Err(bad("ipc_exp", "an exponent in 0..2"));
    }
    if !(pf.mem_frac.is_finite() && (0.0..=1.0).contains(&pf.mem_frac)) {
        return Err(bad("mem_frac", "a fraction in 0..1"));
    }
    if !(pf.cache_slowdown.is_finite() && (0.0..=10.0).contains(&pf.cache_slowdown)) {
        return Err(bad("cache_slowdown", "a slowdown in 0..10"));
    }
    if let Some(ipc) = &pf.ipc {
        if ipc.iter().any(|x| !(x.is_finite() && *x > 0.0 && *x <= 4.0)) {
            return Err(bad("ipc", "speed ratios in (0, 4]"));
        }
    }
    Ok(())
}
