//! The resolved workload (docs/engine-interface.md): tasks as rt-app programs of phases
//! and events, in engine units. Work is invariant: ns of execution on a capacity-1024 CPU
//! at its f_max, as rt-app's calibrated `run` is.

use crate::error::{config, Error, Result};
use serde::Deserialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    Other,
    Fifo,
    Rr,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TimerMode {
    Relative,
    Absolute,
}

#[derive(Debug, Clone, Deserialize)]
pub struct TimerSpec {
    pub id: usize,
    pub period_ns: u64,
    #[serde(default = "relative")]
    pub mode: TimerMode,
}

fn relative() -> TimerMode {
    TimerMode::Relative
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ev {
    Run(u64),
    Runtime(u64),
    Sleep(u64),
    Timer(TimerSpec),
}

#[derive(Debug, Clone, Deserialize)]
pub struct PhaseSpec {
    #[serde(default = "one")]
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
    pub tasks: Vec<TaskSpec>,
}

impl WorkloadSpec {
    pub fn from_json(text: &str) -> Result<WorkloadSpec> {
        // `loop` is a Rust keyword: phases spell it `loop` in JSON.
        let fixed: serde_json::Value = serde_json::from_str(text).map_err(|e| Error::Json {
            doc: "workload",
            msg: e.to_string(),
        })?;
        let fixed = rename_phase_loops(fixed);
        let spec: WorkloadSpec = serde_json::from_value(fixed).map_err(|e| Error::Json {
            doc: "workload",
            msg: e.to_string(),
        })?;
        spec.validate()?;
        Ok(spec)
    }

    pub fn validate(&self) -> Result<()> {
        if self.tasks.is_empty() {
            return Err(config("workload", "tasks", "at least one task"));
        }
        for (ti, t) in self.tasks.iter().enumerate() {
            let f = |s: &str| format!("tasks[{ti}].{s}");
            if !(-20..=19).contains(&t.nice) {
                return Err(config("workload", f("nice"), "a nice value in -20..19"));
            }
            if t.policy != Policy::Other && !(1..=99).contains(&t.rt_priority) {
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
                for e in &p.events {
                    if let Ev::Timer(ts) = e {
                        if ts.id >= self.timers {
                            return Err(config(
                                "workload",
                                f(&format!("phases[{pi}].timer.id")),
                                format!("an id below timers = {}", self.timers),
                            ));
                        }
                        if ts.period_ns == 0 {
                            return Err(config(
                                "workload",
                                f(&format!("phases[{pi}].timer.period_ns")),
                                "a positive period",
                            ));
                        }
                    }
                }
            }
            for v in [t.util_min, t.util_max].into_iter().flatten() {
                if v > 1024 {
                    return Err(config("workload", f("util_min/util_max"), "a clamp in 0..1024"));
                }
            }
        }
        Ok(())
    }
}

fn rename_phase_loops(mut v: serde_json::Value) -> serde_json::Value {
    if let Some(tasks) = v.get_mut("tasks").and_then(|t| t.as_array_mut()) {
        for t in tasks {
            if let Some(phases) = t.get_mut("phases").and_then(|p| p.as_array_mut()) {
                for p in phases {
                    if let Some(obj) = p.as_object_mut() {
                        if let Some(l) = obj.remove("loop") {
                            obj.insert("loop_".into(), l);
                        }
                    }
                }
            }
        }
    }
    v
}
