//! The PyO3 module `hetsched._engine`: thin. Specs cross as JSON text, results come back
//! as JSON text or plain lists. Every entry point that runs engine code does so inside
//! `catch_panic`, so no panic crosses the FFI boundary, and returns `EngineResult`, whose
//! error becomes one of `hetsched.errors`' exceptions in one place (error.rs). A
//! scheduler policy written in Python is policy.rs.

mod error;
mod policy;

use error::{catch_panic, EngineResult, PyEngineError};
use hetsched_core::energy_model::{map_util_perf, EnergyModel, FeecInput};
use hetsched_core::trace::TimeSeries;
use hetsched_core::{features::KNOBS, Error, Platform, Sim};
use policy::{catch_policy_abort, PyPolicySpec};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

#[pyclass(module = "hetsched._engine", unsendable)]
struct Engine {
    sim: Sim,
    /// The text of the panic that interrupted a call that changes the simulation: its
    /// state may then be half-updated, so every later call refuses to run on it.
    poisoned: Option<String>,
    /// A Python policy's hook failed mid-event (its PolicyError), or a limit stopped the
    /// run (limits.rs: its InputError): the state is half-updated as well, and every later
    /// call raises that error again.
    stopped: Option<PyErr>,
}

/// A run's poll (`Sim::run_until_polled`): whether a signal's handler raised, such as
/// Ctrl-C's KeyboardInterrupt or the CLI's Interrupted. The engine keeps the main thread
/// for as long as a call runs and Python runs a handler only when asked, so a call of many
/// simulated seconds would otherwise hold Ctrl-C back until it ends. The handler's
/// exception stops the run between two events, and the call raises it; the simulation is
/// whole and a later call goes on.
///
/// Taking the GIL back is about a microsecond, so every 50 ms costs nothing and bounds
/// Ctrl-C's wait at 50 ms plus 1,024 events. While another Python thread computes, though,
/// it takes up to the interpreter's switch interval (5 ms): the next poll then waits 100
/// times as long as this one did (at most a second), which keeps the polls' share of the
/// run near 1 %. Off Python's main thread check_signals() does nothing (handlers run on the
/// main thread only), and the same bound holds. (Asking which thread this is would run
/// Python code, and with it the very handler whose exception the poll must not lose.)
struct SignalPoll {
    last: std::time::Instant,
    every: std::time::Duration,
    raised: Option<PyErr>,
}

impl SignalPoll {
    const EVERY: std::time::Duration = std::time::Duration::from_millis(50);
    const AT_MOST_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

    fn new() -> Self {
        SignalPoll {
            last: std::time::Instant::now(),
            every: Self::EVERY,
            raised: None,
        }
    }

    fn go_on(&mut self) -> bool {
        if self.last.elapsed() < self.every {
            return true;
        }
        let asked = std::time::Instant::now();
        let checked = Python::with_gil(|py| py.check_signals());
        self.last = std::time::Instant::now();
        self.every = (self.last - asked)
            .saturating_mul(100)
            .clamp(Self::EVERY, Self::AT_MOST_EVERY);
        match checked {
            Ok(()) => true,
            Err(e) => {
                self.raised = Some(e);
                false
            }
        }
    }

    fn raised(self) -> EngineResult<()> {
        match self.raised {
            Some(e) => Err(PyEngineError::Python(e)),
            None => Ok(()),
        }
    }
}

impl Engine {
    /// The simulation, unless a panic or a failed Python hook has left it unusable.
    fn sim(&self) -> EngineResult<&Sim> {
        if let Some(e) = &self.stopped {
            return Err(PyEngineError::Python(Python::with_gil(|py| e.clone_ref(py))));
        }
        match &self.poisoned {
            Some(panic) => Err(PyEngineError::Poisoned(panic.clone())),
            None => Ok(&self.sim),
        }
    }

    /// Runs `f` on the simulation, which it may change; a panic in it poisons the engine,
    /// a Python policy's failure stops it.
    fn change<T: Send>(&mut self, py: Python<'_>, f: impl FnOnce(&mut Sim) -> T + Send) -> EngineResult<T> {
        self.sim()?;
        let sim = &mut self.sim;
        // the GIL is released while the engine runs (other Python threads go on); errors
        // become Python exceptions only after it is taken back
        let r = py.allow_threads(|| catch_panic(|| catch_policy_abort(|| f(sim))));
        match r {
            Err(panic) => {
                self.poisoned = Some(panic.to_string());
                Err(panic.into())
            }
            Ok(Err(abort)) => {
                self.stopped = Some(abort.kept);
                Err(PyEngineError::Python(abort.raised))
            }
            Ok(Ok(v)) => Ok(v),
        }
    }

    /// The limit that stopped the run, if one did, as its InputError (kept: every later
    /// call raises it again).
    fn limits(&mut self, py: Python<'_>) -> EngineResult<()> {
        let Some(e) = self.sim.stopped() else { return Ok(()) };
        let err = PyErr::from(PyEngineError::Engine(e.clone()));
        self.stopped = Some(err.clone_ref(py));
        Err(PyEngineError::Python(err))
    }
}

#[pymethods]
impl Engine {
    /// `policy`: a `hetsched.Policy` written in Python, as `hetsched.policy.engine_args`
    /// hands it over (its name, label and hooks), that runs on top of the policy JSON's
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
    ) -> EngineResult<Self> {
        let spec = match policy {
            Some(p) => Some(PyPolicySpec::new(
                py,
                &p,
                perf_domains.unwrap_or_else(|| py.None()),
                energy_model.unwrap_or_else(|| py.None()),
            )?),
            None => None,
        };
        let sim = catch_panic(|| match spec {
            Some(spec) => {
                hetsched_core::build_with_policy(platform_json, workload_json, policy_json, |base| spec.wrap(base))
            }
            None => hetsched_core::build(platform_json, workload_json, policy_json),
        })??;
        Ok(Engine {
            sim,
            poisoned: None,
            stopped: None,
        })
    }

    /// Run every event before t_ns (absolute simulated time in ns).
    fn run_until(&mut self, py: Python<'_>, t_ns: u64) -> EngineResult<()> {
        let mut poll = SignalPoll::new();
        self.change(py, |sim| sim.run_until_polled(t_ns, || poll.go_on()))?;
        poll.raised()?;
        self.limits(py)
    }

    /// Run until every task has ended, or until limit_ns; True if all ended.
    fn run_until_exited(&mut self, py: Python<'_>, limit_ns: u64) -> EngineResult<bool> {
        let mut poll = SignalPoll::new();
        let ended = self.change(py, |sim| sim.run_until_exited_polled(limit_ns, || poll.go_on()))?;
        poll.raised()?;
        self.limits(py)?;
        Ok(ended.unwrap_or(false))
    }

    /// The marks made since the `start`-th, in order: (time ns, task index, mark index).
    fn marks_since(&self, start: usize) -> EngineResult<Vec<(u64, u32, u32)>> {
        let marks = &self.sim()?.marks;
        Ok(marks.get(start..).map_or_else(Vec::new, <[_]>::to_vec))
    }

    /// The names of the tasks from the `start`-th on (forks are added as they happen).
    fn task_names(&self, start: usize) -> EngineResult<Vec<String>> {
        let tasks = &self.sim()?.tasks;
        Ok(tasks
            .get(start..)
            .map_or_else(Vec::new, |ts| ts.iter().map(|t| t.name.clone()).collect()))
    }

    #[getter]
    fn workload_is_finite(&self) -> bool {
        self.sim.workload_is_finite()
    }

    /// Whether a deadlock stopped the run (the result's `deadlock` says which).
    #[getter]
    fn deadlocked(&self) -> bool {
        self.sim.deadlock.is_some()
    }

    #[getter]
    fn now_ns(&self) -> u64 {
        self.sim.now
    }

    #[getter]
    fn workload_duration_ns(&self) -> Option<u64> {
        self.sim.workload_duration_ns
    }

    fn set_knob(&mut self, py: Python<'_>, name: &str, value: f64) -> EngineResult<()> {
        Ok(self.change(py, |sim| sim.set_knob(name, value))??)
    }

    fn knob_values<'py>(&self, py: Python<'py>) -> EngineResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in self.sim()?.knobs.iter() {
            d.set_item(k, v)?;
        }
        Ok(d)
    }

    /// Per-CPU state now: util (cpu_util_cfs), util_avg, util_est, freq_khz,
    /// idle_state (-1 running/waking), nr_running, capacity_orig, busy_ns (time not idle
    /// since the start, for busy-fraction loads); plus counters.
    fn observe<'py>(&self, py: Python<'py>) -> EngineResult<Bound<'py, PyDict>> {
        let s = self.sim()?;
        catch_panic(|| observe(py, s))?.map_err(PyEngineError::from)
    }

    /// The engine's part of result.json, as JSON text.
    fn result_json(&self) -> EngineResult<String> {
        let sim = self.sim()?;
        // a Python policy's counters hook runs here: its failure is its PolicyError
        catch_panic(|| catch_policy_abort(|| sim.result_json()))?.map_err(|abort| PyEngineError::Python(abort.raised))
    }

    /// The trace's bytes (only with policy.trace: Chrome JSON, ftrace text or a Perfetto
    /// protobuf, policy.trace_format); ends the trace.
    fn take_trace<'py>(&mut self, py: Python<'py>) -> EngineResult<Option<Bound<'py, PyBytes>>> {
        let bytes = self.change(py, |sim| sim.finish_trace())?;
        Ok(bytes.map(|b| PyBytes::new(py, &b)))
    }

    /// The trace's bytes written since the last drain (only with policy.trace): a caller
    /// that writes them out as the run goes keeps memory flat; `take_trace` then gives the
    /// rest.
    fn drain_trace<'py>(&mut self, py: Python<'py>) -> EngineResult<Option<Bound<'py, PyBytes>>> {
        let bytes = self.change(py, |sim| sim.trace.as_mut().map(|tr| tr.drain()))?;
        Ok(bytes.map(|b| PyBytes::new(py, &b)))
    }

    /// The time series' rows since the last drain, as columns (only with policy.timeseries);
    /// the engine keeps none of them afterwards.
    fn drain_timeseries<'py>(&mut self, py: Python<'py>) -> EngineResult<Option<Bound<'py, PyDict>>> {
        let drained = self.change(py, |sim| sim.timeseries.as_mut().map(|ts| ts.drain()))?;
        match drained {
            Some(ts) => Ok(Some(timeseries_dict(py, &ts)?)),
            None => Ok(None),
        }
    }

    /// Columns of the sampled time series (only with policy.timeseries).
    fn timeseries<'py>(&self, py: Python<'py>) -> EngineResult<Option<Bound<'py, PyDict>>> {
        let Some(ts) = &self.sim()?.timeseries else {
            return Ok(None);
        };
        Ok(Some(timeseries_dict(py, ts)?))
    }

    /// Panics inside the engine the way an engine bug would, while it runs the simulation:
    /// the tests check that this arrives as hetsched.errors.EngineError and poisons the
    /// engine. Only in builds with the `test-panic` feature, never in a release.
    #[cfg(feature = "test-panic")]
    fn _panic_for_test(&mut self, py: Python<'_>, message: String) -> EngineResult<()> {
        self.change(py, move |_sim| panic!("{message}"))
    }
}

/// The time series' columns, straight from the engine's vectors without a copy of each
/// first (they grow with the run).
fn timeseries_dict<'py>(py: Python<'py>, ts: &TimeSeries) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("t_ns", &ts.t_ns)?;
    d.set_item("cpu", &ts.cpu)?;
    d.set_item("util", &ts.util)?;
    d.set_item("freq_khz", &ts.freq_khz)?;
    d.set_item("idle_state", &ts.idle_state)?;
    d.set_item("power_uw", &ts.power_uw)?;
    Ok(d)
}

/// observe()'s dictionary (apart, so that all of it runs inside catch_panic).
// A learning controller observes the engine hundreds of times a simulated second (Learning
// EAS's quick reproduction 415,000 times): the keys are interned once, not built each call.
fn observe<'py>(py: Python<'py>, s: &Sim) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let n = s.rqs.len();
    let cpus: Vec<Bound<'py, PyDict>> = (0..n)
        .map(|cpu| {
            let c = PyDict::new(py);
            let rq = &s.rqs[cpu];
            let _ = c.set_item(intern!(py, "cpu"), cpu);
            let _ = c.set_item(intern!(py, "cluster"), &s.platform.cluster_of(cpu).name);
            let _ = c.set_item(intern!(py, "capacity_orig"), s.platform.capacity_orig(cpu));
            let _ = c.set_item(intern!(py, "util"), s.cpu_util_cfs(cpu));
            let _ = c.set_item(intern!(py, "util_avg"), rq.cfs.avg.util_avg);
            let _ = c.set_item(intern!(py, "util_est"), rq.cfs.util_est);
            let _ = c.set_item(intern!(py, "rt_util_avg"), rq.avg_rt.util_avg);
            let _ = c.set_item(intern!(py, "freq_khz"), s.cpu_freq_khz(cpu));
            let _ = c.set_item(intern!(py, "idle_state"), rq.idle_state.map(|x| x as i64).unwrap_or(-1));
            let _ = c.set_item(intern!(py, "nr_running"), rq.nr_running());
            let _ = c.set_item(intern!(py, "energy_j"), s.meter.cpus[cpu].energy_fj as f64 * 1e-15);
            let _ = c.set_item(intern!(py, "busy_ns"), s.meter.busy_ns_at(cpu, s.now));
            c
        })
        .collect();
    d.set_item(intern!(py, "now_ns"), s.now)?;
    d.set_item(intern!(py, "cpus"), cpus)?;
    let c = &s.counters;
    let counters = PyDict::new(py);
    counters.set_item(intern!(py, "events"), s.events.popped)?;
    counters.set_item(intern!(py, "wakeups"), c.wakeups)?;
    counters.set_item(intern!(py, "context_switches"), c.context_switches)?;
    counters.set_item(intern!(py, "migrations"), c.migrations)?;
    counters.set_item(intern!(py, "freq_changes"), c.freq_changes)?;
    let lb = s.balancer.as_ref().map(|b| b.stats()).unwrap_or_default();
    let total = lb.totals();
    counters.set_item(intern!(py, "balance_attempts"), total.attempts)?;
    counters.set_item(intern!(py, "balance_successes"), total.successes)?;
    for (name, st) in lb.domains.iter().flatten() {
        counters.set_item(format!("balance_attempts_{name}"), st.attempts)?;
        counters.set_item(format!("balance_successes_{name}"), st.successes)?;
    }
    d.set_item(intern!(py, "counters"), counters)?;
    d.set_item(intern!(py, "energy_j"), s.meter.total_fj() as f64 * 1e-15)?;
    Ok(d)
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
    fn from_platform_json(platform_json: &str) -> EngineResult<Self> {
        let em = catch_panic(|| Platform::from_json(platform_json).map(|p| EnergyModel::from_platform(&p)))??;
        Ok(PyEnergyModel { em })
    }

    /// domains: [(cpus, [(capacity, power_uw), ...]), ...]
    #[staticmethod]
    fn from_table(domains: Vec<(Vec<usize>, Vec<(u64, u64)>)>) -> EngineResult<Self> {
        let em = catch_panic(|| EnergyModel::from_table(&domains))??;
        Ok(PyEnergyModel { em })
    }

    #[getter]
    fn nr_cpus(&self) -> usize {
        self.em.cpu_pd.len()
    }

    /// Switch to the v4.19/5.4 formulation (the android-4.19 kernel profile).
    fn set_legacy(&mut self) -> EngineResult<()> {
        Ok(catch_panic(|| self.em.set_legacy())?)
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
    fn compute_energy(&self, cpu_utils: Vec<u64>, headroom: f64) -> EngineResult<(u64, Vec<u64>)> {
        if cpu_utils.len() != self.em.cpu_pd.len() {
            return Err(energy_model_input(
                "cpu_utils",
                format!("{} values (one per CPU), got {}", self.em.cpu_pd.len(), cpu_utils.len()),
            ));
        }
        Ok(catch_panic(|| {
            self.em.compute_energy(&cpu_utils, headroom_fn(headroom))
        })?)
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
    ) -> EngineResult<(usize, Vec<(usize, u64)>)> {
        let n = self.em.cpu_pd.len();
        if cpu_utils.len() != n {
            return Err(energy_model_input(
                "cpu_utils",
                format!("{n} values (one per CPU), got {}", cpu_utils.len()),
            ));
        }
        if prev_cpu >= n {
            return Err(energy_model_input(
                "prev_cpu",
                format!("a CPU number below {n}, got {prev_cpu}"),
            ));
        }
        Ok(catch_panic(|| {
            feec(&self.em, cpu_utils, task_util, prev_cpu, headroom)
        })?)
    }
}

/// An argument of the EnergyModel API that does not fit the model, worded and raised as
/// the engine's own input errors are.
fn energy_model_input(field: &str, expected: String) -> PyEngineError {
    Error::Config {
        doc: "energy model",
        field: field.into(),
        expected,
    }
    .into()
}

/// find_energy_efficient_cpu()'s answer, `cpu_utils` and `prev_cpu` already checked.
fn feec(
    em: &EnergyModel,
    cpu_utils: Vec<u64>,
    task_util: u64,
    prev_cpu: usize,
    headroom: f64,
) -> (usize, Vec<(usize, u64)>) {
    let n = em.cpu_pd.len();
    let capacities: Vec<u64> = (0..n).map(|c| em.pds[em.cpu_pd[c]].capacity_orig).collect();
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
        dl_bw: Vec::new(), // the what-if API's CPUs run no deadline bandwidth
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
        walt: false,
        task_min_util: 0,
    };
    let r = em.find_energy_efficient_cpu(&inp);
    let base = em.energy_without_task(&inp);
    (r.cpu, r.candidates.into_iter().map(|(c, d)| (c, base + d)).collect())
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

/// Every registered policy (the engine's registry, policies/mod.rs): name, summary,
/// source, knobs, the userspace controller if any, and requirements.
#[pyfunction]
fn policies(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    hetsched_core::policies::REGISTRY
        .iter()
        .map(|p| {
            let d = PyDict::new(py);
            d.set_item("name", p.name)?;
            d.set_item("summary", p.summary)?;
            d.set_item("source", p.source)?;
            d.set_item("knobs", p.knobs.to_vec())?;
            d.set_item("differences", p.differences)?;
            d.set_item("status", p.status)?;
            d.set_item("controller", p.controller)?;
            d.set_item("switcher_platform", p.requires.switcher_platform)?;
            d.set_item(
                "fair",
                p.requires.fair.map(|(v, why)| {
                    let v = match v {
                        hetsched_core::policies::FairVariant::Cfs => "cfs",
                        hetsched_core::policies::FairVariant::Eevdf => "eevdf",
                    };
                    (v, why)
                }),
            )?;
            Ok(d)
        })
        .collect()
}

#[pyfunction]
fn governors() -> Vec<(&'static str, &'static str)> {
    hetsched_core::cpufreq::GOVERNORS.to_vec()
}

#[pyfunction]
fn idle_governors() -> Vec<(&'static str, &'static str)> {
    hetsched_core::core::IDLE_GOVERNORS.to_vec()
}

/// (name, release, what it changes) of each kernel profile
#[pyfunction]
fn kernel_profiles() -> Vec<(&'static str, &'static str, &'static str)> {
    hetsched_core::core::KernelProfile::ALL
        .iter()
        .map(|k| (k.name(), k.release(), k.about()))
        .collect()
}

/// The bare event loop of the speed benchmarks (hetsched_core::event::bare_event_loop):
/// wall seconds for `events` pops from a queue of `queue_len`, the GIL released.
#[pyfunction]
fn bare_event_loop(py: Python<'_>, events: u64, queue_len: usize) -> f64 {
    py.allow_threads(|| {
        let t = std::time::Instant::now();
        std::hint::black_box(hetsched_core::event::bare_event_loop(events, queue_len));
        t.elapsed().as_secs_f64()
    })
}

#[pymodule]
fn _engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Engine>()?;
    m.add_class::<PyEnergyModel>()?;
    m.add_class::<policy::PySchedView>()?;
    m.add("WF_FORK", policy::WF_FORK)?;
    m.add("WF_TTWU", policy::WF_TTWU)?;
    m.add("POLICY_HOOKS", policy::HOOKS.to_vec())?;
    m.add("MAX_HOOK_ITEMS", policy::MAX_HOOK_ITEMS)?;
    m.add("ENGINE_HOOKS", hetsched_core::policies::HOOKS.to_vec())?;
    m.add_function(wrap_pyfunction!(knobs, m)?)?;
    m.add_function(wrap_pyfunction!(schedulers, m)?)?;
    m.add_function(wrap_pyfunction!(policies, m)?)?;
    m.add_function(wrap_pyfunction!(governors, m)?)?;
    m.add_function(wrap_pyfunction!(idle_governors, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_profiles, m)?)?;
    m.add_function(wrap_pyfunction!(bare_event_loop, m)?)?;
    // the classes every engine error is raised as (hetsched.errors'), for callers of
    // this module and to fail its import early if they are missing
    error::add_exception_classes(m)?;
    // a replay takes the switch the engine charges off each recorded burst
    m.add(
        "DEFAULT_CONTEXT_SWITCH_NS",
        hetsched_core::costs::DEFAULT_CONTEXT_SWITCH_NS,
    )?;
    // the engine's limits (hetsched_core::limits), for loaders that check a workload first
    m.add("MAX_TASKS", hetsched_core::limits::MAX_TASKS)?;
    m.add("NO_PROGRESS_STEPS", hetsched_core::limits::NO_PROGRESS_STEPS)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // build.rs: built with -Cprofile-use (scripts/build-pgo.sh)
    m.add("PROFILE_GUIDED", env!("HETSCHED_PROFILE_GUIDED") == "1")?;
    Ok(())
}
