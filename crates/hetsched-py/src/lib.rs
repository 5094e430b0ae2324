//! The PyO3 module `hetsched._engine`: thin. Specs cross as JSON text, results come back
//! as JSON text or plain lists. Engine errors become `EngineInputError` (a ValueError),
//! and a Rust panic is caught here and raised as `EnginePanic` with its message: no panic
//! crosses the FFI boundary. A scheduler policy written in Python is policy.rs.

mod policy;

use hetsched_core::energy_model::{map_util_perf, EnergyModel, FeecInput};
use hetsched_core::{features::KNOBS, Error, Platform, Sim};
use policy::{PolicyAbort, PyPolicySpec};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

create_exception!(_engine, EngineInputError, PyValueError);
create_exception!(_engine, EnginePanic, PyRuntimeError);

fn to_py(e: Error) -> PyErr {
    EngineInputError::new_err(e.to_string())
}

/// What unwound out of the engine: a Python policy's PolicyError (policy.rs), or a panic.
fn unwound(p: Box<dyn Any + Send>) -> PyErr {
    match p.downcast::<PolicyAbort>() {
        Ok(abort) => abort.0,
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            EnginePanic::new_err(format!("engine panic: {msg}"))
        }
    }
}

fn guard<T>(f: impl FnOnce() -> T) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f)).map_err(unwound)
}

#[pyclass(module = "hetsched._engine", unsendable)]
struct Engine {
    sim: Sim,
    /// A Python policy's hook failed mid-event: the state is half-updated, so the engine
    /// refuses to go on and raises that error again
    stopped: Option<PyErr>,
}

impl Engine {
    fn check_running(&self, py: Python<'_>) -> PyResult<()> {
        match &self.stopped {
            Some(e) => Err(e.clone_ref(py)),
            None => Ok(()),
        }
    }

    /// The result of running the simulation: a Python policy's failure stops it for good.
    fn settle<T>(&mut self, py: Python<'_>, r: std::thread::Result<T>) -> PyResult<T> {
        r.map_err(|p| {
            let stopped = p.is::<PolicyAbort>();
            let e = unwound(p);
            if stopped {
                self.stopped = Some(e.clone_ref(py));
            }
            e
        })
    }
}

#[pymethods]
impl Engine {
    /// `policy`: a `hetsched.Policy` instance that runs on top of the policy JSON's
    /// scheduler (its base); its views hand out `perf_domains` and `energy_model`.
    #[new]
    #[pyo3(signature = (platform_json, workload_json, policy_json, policy=None, perf_domains=None, energy_model=None))]
    fn new(
        py: Python<'_>,
        platform_json: &str,
        workload_json: &str,
        policy_json: &str,
        policy: Option<Bound<'_, PyAny>>,
        perf_domains: Option<Py<PyAny>>,
        energy_model: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        let spec = match policy {
            Some(p) => Some(PyPolicySpec::new(
                py,
                &p,
                perf_domains.unwrap_or_else(|| py.None()),
                energy_model.unwrap_or_else(|| py.None()),
            )?),
            None => None,
        };
        let sim = guard(|| match spec {
            Some(spec) => {
                hetsched_core::build_with_policy(platform_json, workload_json, policy_json, |base| spec.wrap(base))
            }
            None => hetsched_core::build(platform_json, workload_json, policy_json),
        })?
        .map_err(to_py)?;
        Ok(Engine { sim, stopped: None })
    }

    /// Run every event before t_ns (absolute simulated time in ns).
    fn run_until(&mut self, py: Python<'_>, t_ns: u64) -> PyResult<()> {
        self.check_running(py)?;
        let sim = &mut self.sim;
        let r = py.allow_threads(|| catch_unwind(AssertUnwindSafe(|| sim.run_until(t_ns))));
        self.settle(py, r)
    }

    /// Run until every task has ended, or until limit_ns; True if all ended.
    fn run_until_exited(&mut self, py: Python<'_>, limit_ns: u64) -> PyResult<bool> {
        self.check_running(py)?;
        let sim = &mut self.sim;
        let r = py.allow_threads(|| catch_unwind(AssertUnwindSafe(|| sim.run_until_exited(limit_ns))));
        self.settle(py, r)
    }

    #[getter]
    fn workload_is_finite(&self) -> bool {
        self.sim.workload_is_finite()
    }

    #[getter]
    fn now_ns(&self) -> u64 {
        self.sim.now
    }

    #[getter]
    fn workload_duration_ns(&self) -> Option<u64> {
        self.sim.workload_duration_ns
    }

    fn set_knob(&mut self, name: &str, value: f64) -> PyResult<()> {
        self.sim.set_knob(name, value).map_err(to_py)
    }

    fn knob_values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in self.sim.knobs.iter() {
            d.set_item(k, v)?;
        }
        Ok(d)
    }

    /// Per-CPU state now: util (cpu_util_cfs), util_avg, util_est, freq_khz,
    /// idle_state (-1 running/waking), nr_running, capacity_orig, busy_ns (time not idle
    /// since the start, for busy-fraction loads); plus counters.
    fn observe<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.check_running(py)?;
        let s = &self.sim;
        let d = PyDict::new(py);
        let n = s.rqs.len();
        let cpus: Vec<Bound<'py, PyDict>> = (0..n)
            .map(|cpu| {
                let c = PyDict::new(py);
                let rq = &s.rqs[cpu];
                let _ = c.set_item("cpu", cpu);
                let _ = c.set_item("cluster", &s.platform.cluster_of(cpu).name);
                let _ = c.set_item("capacity_orig", s.platform.capacity_orig(cpu));
                let _ = c.set_item("util", s.cpu_util_cfs(cpu));
                let _ = c.set_item("util_avg", rq.cfs.avg.util_avg);
                let _ = c.set_item("util_est", rq.cfs.util_est);
                let _ = c.set_item("rt_util_avg", rq.avg_rt.util_avg);
                let _ = c.set_item("freq_khz", s.cpu_freq_khz(cpu));
                let _ = c.set_item("idle_state", rq.idle_state.map(|x| x as i64).unwrap_or(-1));
                let _ = c.set_item("nr_running", rq.nr_running());
                let _ = c.set_item("energy_j", s.meter.cpus[cpu].energy_fj as f64 * 1e-15);
                let _ = c.set_item("busy_ns", s.meter.busy_ns_at(cpu, s.now));
                c
            })
            .collect();
        d.set_item("now_ns", s.now)?;
        d.set_item("cpus", cpus)?;
        let c = &s.counters;
        let counters = PyDict::new(py);
        counters.set_item("events", s.events.popped)?;
        counters.set_item("wakeups", c.wakeups)?;
        counters.set_item("context_switches", c.context_switches)?;
        counters.set_item("migrations", c.migrations)?;
        counters.set_item("freq_changes", c.freq_changes)?;
        let lb = s.balancer.as_ref().map(|b| b.stats()).unwrap_or_default();
        let total = lb.totals();
        counters.set_item("balance_attempts", total.attempts)?;
        counters.set_item("balance_successes", total.successes)?;
        for (name, st) in lb.domains.iter().flatten() {
            counters.set_item(format!("balance_attempts_{name}"), st.attempts)?;
            counters.set_item(format!("balance_successes_{name}"), st.successes)?;
        }
        d.set_item("counters", counters)?;
        d.set_item("energy_j", s.meter.total_fj() as f64 * 1e-15)?;
        Ok(d)
    }

    /// The engine's part of result.json, as JSON text.
    fn result_json(&self, py: Python<'_>) -> PyResult<String> {
        self.check_running(py)?;
        guard(|| self.sim.result().to_string())
    }

    /// The Chrome trace-event JSON (only with policy.trace); ends the trace.
    fn take_trace(&mut self, py: Python<'_>) -> PyResult<Option<String>> {
        self.check_running(py)?;
        guard(|| self.sim.finish_trace())
    }

    /// Columns of the sampled time series (only with policy.timeseries).
    fn timeseries<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        self.check_running(py)?;
        let Some(ts) = &self.sim.timeseries else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item("t_ns", ts.t_ns.clone())?;
        d.set_item("cpu", ts.cpu.clone())?;
        d.set_item("util", ts.util.clone())?;
        d.set_item("freq_khz", ts.freq_khz.clone())?;
        d.set_item("idle_state", ts.idle_state.clone())?;
        d.set_item("power_uw", ts.power_uw.clone())?;
        Ok(Some(d))
    }
}

/// The Energy Model of a platform or of plain tables, with the kernel's energy estimate
/// and EAS's choice for what-if questions (hetsched.EnergyModel wraps it).
#[pyclass(module = "hetsched._engine", name = "EnergyModel")]
struct PyEnergyModel {
    em: EnergyModel,
}

fn headroom_fn(headroom: f64) -> impl Fn(u64) -> u64 {
    move |u: u64| {
        if headroom == 1.25 {
            map_util_perf(u)
        } else {
            (u as f64 * headroom) as u64
        }
    }
}

#[pymethods]
impl PyEnergyModel {
    #[staticmethod]
    fn from_platform_json(platform_json: &str) -> PyResult<Self> {
        let p = Platform::from_json(platform_json).map_err(to_py)?;
        Ok(PyEnergyModel {
            em: EnergyModel::from_platform(&p),
        })
    }

    /// domains: [(cpus, [(capacity, power_uw), ...]), ...]
    #[staticmethod]
    fn from_table(domains: Vec<(Vec<usize>, Vec<(u64, u64)>)>) -> PyResult<Self> {
        Ok(PyEnergyModel {
            em: EnergyModel::from_table(&domains).map_err(to_py)?,
        })
    }

    #[getter]
    fn nr_cpus(&self) -> usize {
        self.em.cpu_pd.len()
    }

    /// Switch to the v4.19/5.4 formulation (the android-4.19 kernel profile).
    fn set_legacy(&mut self) {
        self.em.set_legacy();
    }

    /// Perf domains in rd->pd order: (cpus, capacity, [(khz, performance, power_uw, cost,
    /// inefficient), ...]).
    fn domains(&self) -> Vec<(Vec<usize>, u64, Vec<(u64, u64, u64, u64, bool)>)> {
        self.em
            .pds
            .iter()
            .map(|pd| {
                let st = pd
                    .states
                    .iter()
                    .map(|s| (s.khz, s.performance, s.power_uw, s.cost, s.inefficient))
                    .collect();
                (pd.cpus.clone(), pd.capacity_orig, st)
            })
            .collect()
    }

    /// (total, [energy per pd in rd->pd order]) for these CPU utils.
    fn compute_energy(&self, cpu_utils: Vec<u64>, headroom: f64) -> PyResult<(u64, Vec<u64>)> {
        if cpu_utils.len() != self.em.cpu_pd.len() {
            return Err(EngineInputError::new_err(format!(
                "cpu_utils: expected {} values (one per CPU), got {}",
                self.em.cpu_pd.len(),
                cpu_utils.len()
            )));
        }
        Ok(self.em.compute_energy(&cpu_utils, headroom_fn(headroom)))
    }

    /// feec for a task of util `task_util` last run on `prev_cpu`, `cpu_utils` being the
    /// CPUs' utils without it: (cpu, [(candidate, energy of the whole system with the task
    /// there)]).
    fn find_energy_efficient_cpu(
        &self,
        cpu_utils: Vec<u64>,
        task_util: u64,
        prev_cpu: usize,
        headroom: f64,
    ) -> PyResult<(usize, Vec<(usize, u64)>)> {
        let n = self.em.cpu_pd.len();
        let capacities: Vec<u64> = (0..n).map(|c| self.em.pds[self.em.cpu_pd[c]].capacity_orig).collect();
        if cpu_utils.len() != n || prev_cpu >= n {
            return Err(EngineInputError::new_err(format!(
                "cpu_utils: expected {n} values and prev_cpu below {n}"
            )));
        }
        let util_avg: Vec<u64> = cpu_utils
            .iter()
            .enumerate()
            .map(|(c, &u)| u + if c == prev_cpu { task_util } else { 0 })
            .collect();
        let inp = FeecInput {
            runnable_avg: util_avg.clone(),
            util_avg,
            util_est: vec![0; n],
            util_rt: vec![0; n],
            rt_runnable: vec![false; n],
            capacity: capacities.clone(),
            capacity_orig: capacities,
            task_util,
            task_ewma: task_util,
            task_queued: false,
            prev_cpu,
            allowed: if n == 64 { u64::MAX } else { (1u64 << n) - 1 },
            uclamp_used: false,
            p_uclamp: [0, 1024],
            rq_uclamp: vec![[0, 1024]; n],
            rq_uclamp_idle: vec![true; n],
            headroom_permyriad: (headroom * 10_000.0).round() as u64,
        };
        let r = self.em.find_energy_efficient_cpu(&inp);
        let base = self.em.energy_without_task(&inp);
        Ok((r.cpu, r.candidates.into_iter().map(|(c, d)| (c, base + d)).collect()))
    }
}

/// The knob table: name, default, min, max, unit, source, description.
#[pyfunction]
fn knobs<'py>(py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
    KNOBS
        .iter()
        .map(|k| {
            let d = PyDict::new(py);
            d.set_item("name", k.name)?;
            d.set_item("default", k.default)?;
            d.set_item("min", k.min)?;
            d.set_item("max", k.max)?;
            d.set_item("unit", k.unit)?;
            d.set_item("source", k.source)?;
            d.set_item("description", k.description)?;
            Ok(d)
        })
        .collect()
}

#[pyfunction]
fn schedulers() -> Vec<(&'static str, &'static str)> {
    // the controller-driven ones (learning-eas) are listed by the Python package with
    // their controller
    hetsched_core::policies::REGISTRY
        .iter()
        .filter(|p| p.controller.is_none())
        .map(|p| (p.name, p.summary))
        .collect()
}

#[pyfunction]
fn governors() -> Vec<(&'static str, &'static str)> {
    hetsched_core::cpufreq::GOVERNORS.to_vec()
}

#[pyfunction]
fn idle_governors() -> Vec<(&'static str, &'static str)> {
    hetsched_core::sim::IDLE_GOVERNORS.to_vec()
}

#[pyfunction]
fn kernel_profiles() -> Vec<(&'static str, &'static str)> {
    hetsched_core::sim::KERNEL_PROFILES.to_vec()
}

/// Deliberately panic inside the engine (tests check it surfaces as EnginePanic).
#[pyfunction]
fn _panic_for_test() -> PyResult<()> {
    guard(|| panic!("test panic"))
}

#[pymodule]
fn _engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Engine>()?;
    m.add_class::<PyEnergyModel>()?;
    m.add_class::<policy::PySchedView>()?;
    m.add("WF_FORK", policy::WF_FORK)?;
    m.add("WF_TTWU", policy::WF_TTWU)?;
    m.add("POLICY_HOOKS", policy::HOOKS.to_vec())?;
    m.add_function(wrap_pyfunction!(knobs, m)?)?;
    m.add_function(wrap_pyfunction!(schedulers, m)?)?;
    m.add_function(wrap_pyfunction!(governors, m)?)?;
    m.add_function(wrap_pyfunction!(idle_governors, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_profiles, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    m.add("EngineInputError", m.py().get_type::<EngineInputError>())?;
    m.add("EnginePanic", m.py().get_type::<EnginePanic>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
