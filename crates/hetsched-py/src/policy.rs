//! A scheduler policy written in Python: a `hetsched.Policy` subclass on top of a
//! registered policy, its base (python/hetsched/policy.py, docs/python-policies.md).
//!
//! [`PyPolicy`] is the ops table the core calls. Which hooks cross into Python is decided
//! once, when the policy is built: a supported hook crosses only if the class overrides
//! `hetsched.Policy`'s own; every other hook, and every hook the class does not define,
//! is the base's, so a class that defines nothing runs exactly as its base.
//!
//! Which hooks a class defines is decided in Python (`hetsched.policy.engine_args`, which
//! looks them up as Python calls a method, past any metaclass), and handed over as bound
//! methods; this side never looks an attribute of the class up.
//!
//! The engine runs with the GIL released (`Engine::run_until`); a hook takes it again for
//! its call. Python sees the engine's state through a [`PySchedView`] that points at the
//! core's `SchedView` for the duration of that one call, in the thread that makes it, and
//! refuses access afterwards or from another thread.
//!
//! A hook that raises, or returns what the engine cannot use, stops the run: its
//! `hetsched.errors.PolicyError` unwinds out of the core as a [`PolicyAbort`] (with
//! `resume_unwind`, which runs no panic hook) to the Engine method that ran the
//! simulation, which raises it and refuses to go on (lib.rs). What a hook returns is read
//! [`MAX_HOOK_ITEMS`] items at most, so an endless iterator ends too.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

use hetsched_core::balance::{LoadBalancer, Migration};
use hetsched_core::features::Knobs;
use hetsched_core::policies::{SchedPolicy, WakeKind};
use hetsched_core::workload::Policy as SchedClass;
use hetsched_core::{SchedView, Sim, TaskId, TaskState};
use pyo3::exceptions::{
    PyException, PyGeneratorExit, PyIndexError, PyKeyboardInterrupt, PyRuntimeError, PySystemExit, PyTypeError,
};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyTuple};
use pyo3::IntoPyObjectExt;

/// wake_flags of `select_task_rq()` (kernel/sched/sched.h, v6.12): a new task
/// (`wake_up_new_task`), a wakeup (`try_to_wake_up`).
pub const WF_FORK: u64 = 0x04;
pub const WF_TTWU: u64 = 0x08;

/// The hooks a Python policy may define, in the order policy.py documents them.
pub const HOOKS: [&str; 4] = ["select_task_rq", "task_tick", "balance", "counters"];

/// The most items one hook call's return value is read for: migrations (`task_tick`,
/// `balance`) or counters. The tasks one run may hold (limits.rs, the kernel's pid_max):
/// more migrations than that cannot be one move per task, and a tick moves a task once
/// at most. It stops an endless iterator (`itertools.repeat`, whose C loop would never
/// let Python's signal handlers run) within milliseconds, before it fills the memory.
pub const MAX_HOOK_ITEMS: usize = hetsched_core::limits::MAX_TASKS;

/// The unwind payload of a failed or interrupted hook: what to raise once the core is
/// left, and what every later call on the simulation raises. They are the same
/// PolicyError, except for an interruption (Ctrl-C's KeyboardInterrupt, the CLI's
/// Interrupted), raised as itself; later calls then raise a PolicyError saying the run
/// was interrupted mid-event.
pub struct PolicyAbort {
    pub raised: PyErr,
    pub kept: PyErr,
}

/// Why what a hook returned cannot be used.
enum Fault {
    /// the value is not what the hook must return: the reason, after "returned"
    Refused(String),
    /// reading it ran the policy's code, which raised (a generator of migrations)
    Raised(PyErr),
}

impl From<String> for Fault {
    fn from(why: String) -> Self {
        Fault::Refused(why)
    }
}

/// `&'static str`s made at run time (the trait hands out `&'static str` names): each
/// distinct name is leaked once for the life of the process, however many simulations use it.
fn intern(s: String) -> &'static str {
    static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&known) = names.get(s.as_str()) {
        return known;
    }
    let leaked: &'static str = Box::leak(s.into_boxed_str());
    names.insert(leaked);
    leaked
}

/// What every view of one simulation shares: made once, not per call.
struct ViewShared {
    /// the policy's name, for the view's messages
    policy: String,
    /// `hetsched.policy.PerfDomain`s, in `rd->pd` order
    perf_domains: Py<PyAny>,
    /// the simulation's `hetsched.EnergyModel` (its kernel profile's)
    energy_model: Py<PyAny>,
}

/// The engine's state as a hook sees it: `hetsched._engine.SchedView`. Valid only during
/// the hook call it was handed to, and only in the thread that makes the call; the
/// methods follow the kernel's helpers of the same names (sched.rs `SchedView`).
///
/// Not `unsendable`: PyO3 would then answer a use from another thread with a panic (a
/// PanicException and a Rust backtrace on stderr) before any method runs. The object may
/// travel; each member checks the thread itself and raises a RuntimeError.
#[pyclass(module = "hetsched._engine", name = "SchedView")]
pub struct PySchedView {
    /// the core's view, non-null only while the hook runs ([`PyPolicy::call`] clears it)
    view: AtomicPtr<SchedView<'static>>,
    /// the thread the hook runs in, the only one that may read the view
    thread: ThreadId,
    hook: &'static str,
    shared: Arc<ViewShared>,
}

impl PySchedView {
    /// The core's view, if this is the hook's thread and its call has not returned.
    fn current(&self) -> PyResult<&SchedView<'_>> {
        if std::thread::current().id() != self.thread {
            return Err(PyRuntimeError::new_err(format!(
                "policy '{}': this SchedView was handed to {} in another thread; a view is usable \
                 only in the thread of its hook call, during the call (pass numbers to other threads)",
                self.shared.policy, self.hook
            )));
        }
        let p = self.view.load(Ordering::Acquire);
        if p.is_null() {
            return Err(PyRuntimeError::new_err(format!(
                "policy '{}': this SchedView was handed to {} and that call has returned; a view \
                 is valid only during its hook call (read what you need during the call)",
                self.shared.policy, self.hook
            )));
        }
        // SAFETY: the pointer is non-null only while the hook call it was made for runs:
        // PyPolicy::call sets it from a `&SchedView` it holds for the whole call and clears
        // it before returning. Meanwhile the core waits for the hook, so the state the
        // SchedView borrows stays alive and unchanged; Python cannot re-enter the Engine
        // (its run holds the Engine object's borrow), and only the hook's own thread gets
        // here (checked above), which runs either the hook or the core, never both.
        Ok(unsafe { &*p })
    }

    fn with<R>(&self, f: impl FnOnce(&SchedView<'_>) -> PyResult<R>) -> PyResult<R> {
        f(self.current()?)
    }
}

fn cpu_index(v: &SchedView, cpu: i64) -> PyResult<usize> {
    let n = v.nr_cpus();
    if cpu < 0 || cpu as u64 >= n as u64 {
        return Err(PyIndexError::new_err(format!(
            "cpu {cpu}: {} has CPUs 0-{}",
            v.platform.name,
            n - 1
        )));
    }
    Ok(cpu as usize)
}

fn task_index(v: &SchedView, task: i64) -> PyResult<TaskId> {
    let n = v.tasks.len();
    if task < 0 || task as u64 >= n as u64 {
        return Err(PyIndexError::new_err(format!(
            "task {task}: this run has tasks 0-{}",
            n.saturating_sub(1)
        )));
    }
    Ok(task as TaskId)
}

/// The CPUs of an affinity mask, in order.
fn cpus_of(mask: u64, nr_cpus: usize) -> Vec<usize> {
    (0..nr_cpus).filter(|&c| mask & (1u64 << c) != 0).collect()
}

#[pymethods]
impl PySchedView {
    /// Number of CPUs.
    #[getter]
    fn nr_cpus(&self) -> PyResult<usize> {
        self.with(|v| Ok(v.nr_cpus()))
    }

    /// Number of tasks of the run (task ids are 0..nr_tasks-1).
    #[getter]
    fn nr_tasks(&self) -> PyResult<usize> {
        self.with(|v| Ok(v.tasks.len()))
    }

    /// Simulated time, ns.
    #[getter]
    fn now_ns(&self) -> PyResult<u64> {
        self.with(|v| Ok(v.now))
    }

    /// rd->overutilized: some CPU's CFS util does not fit its capacity (EAS stands aside).
    #[getter]
    fn overutilized(&self) -> PyResult<bool> {
        self.with(|v| Ok(v.overutilized))
    }

    /// arch_scale_cpu_capacity(): the CPU's capacity at its highest OPP (0..1024).
    fn capacity_orig(&self, cpu: i64) -> PyResult<u64> {
        self.with(|v| Ok(v.capacity_orig(cpu_index(v, cpu)?)))
    }

    /// capacity_of(): capacity_orig less the RT pressure.
    fn capacity_of(&self, cpu: i64) -> PyResult<u64> {
        self.with(|v| Ok(v.capacity_of(cpu_index(v, cpu)?)))
    }

    /// idle_cpu(): nothing running, nothing queued, not being woken.
    fn idle_cpu(&self, cpu: i64) -> PyResult<bool> {
        self.with(|v| Ok(v.idle_cpu(cpu_index(v, cpu)?)))
    }

    /// cpu_util_cfs(): max(util_avg, util_est) of the CPU's CFS runqueue, capped at capacity_orig.
    fn cpu_util(&self, cpu: i64) -> PyResult<u64> {
        self.with(|v| Ok(v.cpu_util_cfs(cpu_index(v, cpu)?)))
    }

    /// cpu_overutilized(): the CPU's CFS util does not fit its capacity.
    fn cpu_overutilized(&self, cpu: i64) -> PyResult<bool> {
        self.with(|v| Ok(v.cpu_overutilized(cpu_index(v, cpu)?)))
    }

    /// The current frequency of the CPU's cluster, kHz.
    fn cpu_freq_khz(&self, cpu: i64) -> PyResult<u64> {
        self.with(|v| Ok(v.cpu_freq_khz(cpu_index(v, cpu)?)))
    }

    /// rq->nr_running: fair and RT tasks on the CPU's runqueue.
    fn nr_running(&self, cpu: i64) -> PyResult<u32> {
        self.with(|v| Ok(v.rqs[cpu_index(v, cpu)?].nr_running()))
    }

    /// task_util_est(): max(util_avg, util_est) of the task.
    fn task_util(&self, task: i64) -> PyResult<u64> {
        self.with(|v| Ok(v.task_util_est(task_index(v, task)?)))
    }

    /// The CPUs the task may run on (its affinity, p->cpus_ptr), ascending.
    fn cpus_allowed(&self, task: i64) -> PyResult<Vec<usize>> {
        self.with(|v| {
            let t = task_index(v, task)?;
            Ok(cpus_of(v.tasks[t as usize].allowed, v.nr_cpus()))
        })
    }

    /// task_cpu(): the CPU the task is on, or last ran on.
    fn task_cpu(&self, task: i64) -> PyResult<usize> {
        self.with(|v| Ok(v.tasks[task_index(v, task)? as usize].cpu))
    }

    /// cpu_curr(): the task running on the CPU, None if it runs none.
    fn cpu_curr(&self, cpu: i64) -> PyResult<Option<TaskId>> {
        self.with(|v| Ok(v.rqs[cpu_index(v, cpu)?].curr))
    }

    /// task_on_rq_queued(): the task is running or waiting on a runqueue (a migration can
    /// move only such a task).
    fn task_on_rq(&self, task: i64) -> PyResult<bool> {
        self.with(|v| {
            let t = &v.tasks[task_index(v, task)? as usize];
            Ok(matches!(t.state, TaskState::Runnable | TaskState::Running))
        })
    }

    /// The task's scheduling policy, as the workload names it: "other" (fair), "fifo",
    /// "rr" or "deadline".
    fn task_policy(&self, task: i64) -> PyResult<&'static str> {
        self.with(|v| {
            Ok(match v.tasks[task_index(v, task)? as usize].policy {
                SchedClass::Other => "other",
                SchedClass::Fifo => "fifo",
                SchedClass::Rr => "rr",
                SchedClass::Deadline => "deadline",
            })
        })
    }

    /// The task's name (p->comm).
    fn task_name(&self, task: i64) -> PyResult<String> {
        self.with(|v| Ok(v.tasks[task_index(v, task)? as usize].name.clone()))
    }

    /// The perf domains in rd->pd order (`hetsched.policy.PerfDomain`: cpus, capacity, states).
    #[getter]
    fn perf_domains(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.with(|_| Ok(self.shared.perf_domains.clone_ref(py)))
    }

    /// The simulation's Energy Model (`hetsched.EnergyModel`), for what-if estimates.
    #[getter]
    fn energy_model(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.with(|_| Ok(self.shared.energy_model.clone_ref(py)))
    }

    fn __repr__(&self) -> String {
        if std::thread::current().id() != self.thread {
            return format!("<SchedView of {} (another thread's)>", self.hook);
        }
        match self.current() {
            Ok(v) => format!("<SchedView of {} at {} ns, {} CPUs>", self.hook, v.now, v.nr_cpus()),
            Err(_) => format!("<SchedView of {} (expired)>", self.hook),
        }
    }
}

/// A Python policy before its simulation exists: the hooks it overrides and what its
/// views share. `wrap` puts it on the base policy `Sim::with_policy` builds.
pub struct PyPolicySpec {
    name: String,
    /// where the class is defined (`FILE.py:CLASS`), for its errors
    label: String,
    select_task_rq: Option<Py<PyAny>>,
    task_tick: Option<Py<PyAny>>,
    balance: Option<Py<PyAny>>,
    counters: Option<Py<PyAny>>,
    shared: Arc<ViewShared>,
    error_type: Py<PyAny>,
}

impl PyPolicySpec {
    /// `policy` is what `hetsched.policy.engine_args` hands over: a dict of the policy's
    /// `name`, its `label` (`FILE.py:CLASS`) and `hooks`, the bound method of each hook
    /// its class defines. A hook not among them costs nothing per call: it is the base's.
    pub fn new(
        py: Python<'_>,
        policy: &Bound<'_, PyAny>,
        perf_domains: Py<PyAny>,
        energy_model: Py<PyAny>,
    ) -> PyResult<Self> {
        let policy = policy.downcast::<PyDict>().map_err(|_| {
            PyTypeError::new_err("policy: expected hetsched.policy.engine_args()'s dict (name, label, hooks)")
        })?;
        let item = |key: &str| -> PyResult<Bound<'_, PyAny>> {
            policy
                .get_item(key)?
                .ok_or_else(|| PyTypeError::new_err(format!("policy: no '{key}' (hetsched.policy.engine_args())")))
        };
        let name: String = item("name")?.extract()?;
        let label: String = item("label")?.extract()?;
        let hooks = item("hooks")?;
        let hooks = hooks
            .downcast::<PyDict>()
            .map_err(|_| PyTypeError::new_err("policy: hooks: expected a dict of hook name: bound method"))?;
        for key in hooks.keys() {
            let key: String = key.extract()?;
            if !HOOKS.contains(&key.as_str()) {
                return Err(PyTypeError::new_err(format!(
                    "policy: hooks: {key} is not a hook a Python policy may define ({})",
                    HOOKS.join(", ")
                )));
            }
        }
        let hook = |h: &str| -> PyResult<Option<Py<PyAny>>> { Ok(hooks.get_item(h)?.map(Bound::unbind)) };
        Ok(PyPolicySpec {
            select_task_rq: hook(HOOKS[0])?,
            task_tick: hook(HOOKS[1])?,
            balance: hook(HOOKS[2])?,
            counters: hook(HOOKS[3])?,
            shared: Arc::new(ViewShared {
                policy: name.clone(),
                perf_domains,
                energy_model,
            }),
            name,
            label,
            error_type: py.import("hetsched.errors")?.getattr("PolicyError")?.unbind(),
        })
    }

    /// The policy on top of `base`, the registry's policy for the run's scheduler.
    pub fn wrap(self, base: Box<dyn SchedPolicy>) -> Box<dyn SchedPolicy> {
        Box::new(PyPolicy {
            base,
            spec: self,
            pending: Vec::new(),
        })
    }
}

/// The ops table of a Python policy: its hooks where it defines them, its base's elsewhere.
pub struct PyPolicy {
    base: Box<dyn SchedPolicy>,
    spec: PyPolicySpec,
    /// the migrations `task_tick` returned this tick, carried out with the tick's `balance`
    /// (the core holds the policy apart while `task_tick` runs, so it cannot move tasks then)
    pending: Vec<Migration>,
}

impl PyPolicy {
    /// One call of Python hook `f`: take the GIL, hand it a view of `v` (if any) and `ints`,
    /// and read what it returned with `parse` (an Err is the reason the value is refused).
    /// A hook that raised, or a refused value, stops the run: its PolicyError unwinds to
    /// the Engine method that ran the simulation.
    fn call<R>(
        &self,
        hook: &'static str,
        f: &Py<PyAny>,
        v: Option<&SchedView>,
        ints: &[u64],
        parse: impl FnOnce(&Bound<'_, PyAny>) -> Result<R, Fault>,
    ) -> R {
        let out = Python::with_gil(|py| -> Result<R, PolicyAbort> { self.call_with_gil(py, hook, f, v, ints, parse) });
        match out {
            Ok(r) => r,
            Err(abort) => std::panic::resume_unwind(Box::new(abort)),
        }
    }

    /// [`Self::call`] with the GIL held: what the hook returned, parsed, or why the run stops.
    fn call_with_gil<R>(
        &self,
        py: Python<'_>,
        hook: &'static str,
        f: &Py<PyAny>,
        v: Option<&SchedView>,
        ints: &[u64],
        parse: impl FnOnce(&Bound<'_, PyAny>) -> Result<R, Fault>,
    ) -> Result<R, PolicyAbort> {
        // making the arguments fails only without memory: a PolicyError all the same
        let failed = |e: PyErr| self.error(py, hook, None, Some(e));
        let view = match v {
            Some(v) => Some(
                Bound::new(
                    py,
                    PySchedView {
                        // the lifetime is erased here and enforced by clearing the pointer below
                        view: AtomicPtr::new(std::ptr::from_ref(v).cast::<SchedView<'static>>().cast_mut()),
                        thread: std::thread::current().id(),
                        hook,
                        shared: self.spec.shared.clone(),
                    },
                )
                .map_err(failed)?,
            ),
            None => None,
        };
        let mut args = Vec::with_capacity(1 + ints.len());
        if let Some(view) = &view {
            args.push(view.clone().into_any());
        }
        for &i in ints {
            args.push(i.into_bound_py_any(py).map_err(failed)?);
        }
        let ret = PyTuple::new(py, args).and_then(|args| f.bind(py).call1(args));
        if let Some(view) = &view {
            // the view must not outlive the call: it points at the core's state
            view.borrow().view.store(std::ptr::null_mut(), Ordering::Release);
        }
        let ret = ret.map_err(|e| self.error(py, hook, None, Some(e)))?;
        parse(&ret).map_err(|fault| match fault {
            Fault::Refused(why) => self.error(py, hook, Some(why), None),
            Fault::Raised(e) => self.error(py, hook, None, Some(e)),
        })
    }

    /// `hetsched.errors.PolicyError(policy, hook, why, raised, label)`: a refused return
    /// value (`why`) or the exception the hook raised (its cause), SystemExit included (a
    /// policy has no business ending the process). An interruption (KeyboardInterrupt, the
    /// CLI's Interrupted: a BaseException that is neither an Exception, SystemExit nor
    /// GeneratorExit) stops the run as itself, and the simulation keeps a PolicyError
    /// saying so for every later call.
    fn error(&self, py: Python<'_>, hook: &'static str, why: Option<String>, raised: Option<PyErr>) -> PolicyAbort {
        let policy_error = |why: Option<String>, cause: Option<PyObject>| -> PyErr {
            match self.spec.error_type.bind(py).call1((
                self.spec.name.as_str(),
                hook,
                why,
                cause,
                self.spec.label.as_str(),
            )) {
                Ok(exc) => PyErr::from_value(exc),
                Err(e) => e,
            }
        };
        let err = match raised {
            Some(e) if is_interruption(py, &e) => {
                let what = e
                    .get_type(py)
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_else(|_| "an interruption".into());
                let kept = policy_error(
                    Some(format!(
                        "was interrupted ({what}) in the middle of an event; this simulation cannot go on \
                         (its state is half-updated): build a new one"
                    )),
                    None,
                );
                return PolicyAbort { raised: e, kept };
            }
            Some(e) => policy_error(None, Some(e.into_value(py).into_any())),
            None => policy_error(why, None),
        };
        PolicyAbort {
            kept: err.clone_ref(py),
            raised: err,
        }
    }
}

/// Whether what a hook raised is an interruption of the run rather than the policy's own
/// failure: the CLI's `Interrupted` (its signal handlers raise it), or a KeyboardInterrupt
/// unless the CLI's SIGINT handler is installed (then Ctrl-C would have raised
/// Interrupted). A KeyboardInterrupt raised under the CLI's handler, and any other
/// BaseException that is not an Exception, SystemExit or GeneratorExit, came from the
/// policy's code.
fn is_interruption(py: Python<'_>, e: &PyErr) -> bool {
    if e.is_instance_of::<PyException>(py)
        || e.is_instance_of::<PySystemExit>(py)
        || e.is_instance_of::<PyGeneratorExit>(py)
    {
        return false;
    }
    let value = e.value(py);
    let interrupted = py
        .import("hetsched.runner")
        .and_then(|m| m.getattr("Interrupted"))
        .and_then(|cls| value.is_instance(&cls))
        .unwrap_or(false);
    if interrupted {
        return true;
    }
    if e.is_instance_of::<PyKeyboardInterrupt>(py) {
        // under the CLI, SIGINT raises Interrupted (runner._on_signal): a KeyboardInterrupt
        // then came from the hook's own code; elsewhere it is Ctrl-C's
        let cli_handles_sigint = || -> PyResult<bool> {
            let sig = py.import("signal")?;
            let handler = sig.getattr("getsignal")?.call1((sig.getattr("SIGINT")?,))?;
            Ok(handler.is(&py.import("hetsched.runner")?.getattr("_on_signal")?))
        };
        return !cli_handles_sigint().unwrap_or(false);
    }
    false
}

/// A short repr of a value a hook returned, for an error message.
fn shown(x: &Bound<'_, PyAny>) -> String {
    let r = x
        .repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "<unprintable>".into());
    let ty = x.get_type().name().map(|n| n.to_string()).unwrap_or_default();
    let r = if r.chars().count() > 60 {
        format!("{}...", r.chars().take(57).collect::<String>())
    } else {
        r
    };
    format!("{r} ({ty})")
}

/// `x` as a CPU task `p` may be placed on, or why not (what follows "returned").
fn cpu_for(v: &SchedView, p: TaskId, x: &Bound<'_, PyAny>) -> Result<usize, String> {
    let task = &v.tasks[p as usize];
    let allowed = cpus_of(task.allowed, v.nr_cpus());
    let cpu = match x.extract::<i64>() {
        Ok(c) if !x.is_instance_of::<PyBool>() => c,
        _ => {
            return Err(format!(
                "{} for task {p} ({}), not a CPU number; its allowed CPUs are {allowed:?}",
                shown(x),
                task.name
            ))
        }
    };
    if cpu < 0 || cpu as u64 >= v.nr_cpus() as u64 {
        return Err(format!(
            "CPU {cpu} for task {p} ({}), not a CPU of {} (0-{}); its allowed CPUs are {allowed:?}",
            task.name,
            v.platform.name,
            v.nr_cpus() - 1
        ));
    }
    if task.allowed & (1u64 << cpu) == 0 {
        return Err(format!(
            "CPU {cpu} for task {p} ({}), outside its allowed CPUs {allowed:?}",
            task.name
        ));
    }
    Ok(cpu as usize)
}

/// What `task_tick` or `balance` returned: None, or an iterable of `(task, cpu)` tuples,
/// each a fair task to move to an allowed CPU. A move to the task's own CPU is dropped.
fn migrations(v: &SchedView, ret: &Bound<'_, PyAny>) -> Result<Vec<Migration>, Fault> {
    let mut out = Vec::new();
    if ret.is_none() {
        return Ok(out);
    }
    let expected = || format!("returned {}, expected None or (task, cpu) tuples", shown(ret));
    let too_many = |what: String| {
        Fault::Refused(format!(
            "returned {what}; at most {MAX_HOOK_ITEMS} are taken, the tasks a run may hold (a tick moves \
             each task once at most)"
        ))
    };
    // a list or tuple says its length without running the policy's code
    let len = match (ret.downcast::<PyList>(), ret.downcast::<PyTuple>()) {
        (Ok(l), _) => Some(l.len()),
        (_, Ok(t)) => Some(t.len()),
        _ => None,
    };
    if let Some(n) = len.filter(|&n| n > MAX_HOOK_ITEMS) {
        return Err(too_many(format!("{n} migrations")));
    }
    let items = ret.try_iter().map_err(|_| expected())?;
    for (i, item) in items.enumerate() {
        if i == MAX_HOOK_ITEMS {
            return Err(too_many(format!(
                "an iterator of more than {MAX_HOOK_ITEMS} migrations (an endless one?)"
            )));
        }
        let item = item.map_err(Fault::Raised)?;
        let Ok(pair) = item.downcast::<PyTuple>() else {
            return Err(expected().into());
        };
        if pair.len() != 2 {
            return Err(expected().into());
        }
        let (t, cpu) = (
            pair.get_item(0).map_err(Fault::Raised)?,
            pair.get_item(1).map_err(Fault::Raised)?,
        );
        let n = v.tasks.len();
        let p = match t.extract::<i64>() {
            Ok(p) if !t.is_instance_of::<PyBool>() && p >= 0 && (p as u64) < n as u64 => p as TaskId,
            _ => {
                return Err(Fault::Refused(format!(
                    "returned the migration {}: {} is not a task of this run (0-{})",
                    shown(&item),
                    shown(&t),
                    n.saturating_sub(1)
                )))
            }
        };
        let task = &v.tasks[p as usize];
        if task.policy != SchedClass::Other {
            return Err(Fault::Refused(format!(
                "returned the migration {}: task {p} ({}) is not a fair task; a policy moves fair tasks only",
                shown(&item),
                task.name
            )));
        }
        let dst = cpu_for(v, p, &cpu).map_err(|why| format!("returned the migration {}: {why}", shown(&item)))?;
        if dst != task.cpu {
            out.push(Migration {
                task: p,
                src: task.cpu,
                dst,
            });
        }
    }
    Ok(out)
}

/// What `counters` returned: a dict of name -> number (bool, int or finite float), none of
/// whose names the engine or the base policy already reports.
fn counters(ret: &Bound<'_, PyAny>, taken: &[String]) -> Result<Vec<(String, serde_json::Value)>, Fault> {
    let Ok(d) = ret.downcast::<PyDict>() else {
        return Err(Fault::Refused(format!(
            "returned {}, expected a dict of name: number",
            shown(ret)
        )));
    };
    if d.len() > MAX_HOOK_ITEMS {
        return Err(Fault::Refused(format!(
            "returned {} counters, more than {MAX_HOOK_ITEMS}",
            d.len()
        )));
    }
    let mut out = Vec::with_capacity(d.len());
    for (k, x) in d.iter() {
        let Ok(name) = k.extract::<String>() else {
            return Err(Fault::Refused(format!(
                "returned a counter named {}, expected a str",
                shown(&k)
            )));
        };
        if taken.contains(&name) {
            return Err(Fault::Refused(format!(
                "returned the counter '{name}', which the base policy already reports in \
                 result.json's counters.policy; name it differently"
            )));
        }
        let value = if x.is_instance_of::<PyBool>() {
            serde_json::Value::Bool(x.is_truthy().map_err(Fault::Raised)?)
        } else if x.is_instance_of::<PyInt>() {
            match (x.extract::<i64>(), x.extract::<u64>()) {
                (Ok(i), _) => i.into(),
                (_, Ok(u)) => u.into(),
                _ => {
                    return Err(Fault::Refused(format!(
                        "returned the counter '{name}' = {}, too large for JSON",
                        shown(&x)
                    )))
                }
            }
        } else if x.is_instance_of::<PyFloat>() {
            let f: f64 = x.extract().map_err(Fault::Raised)?;
            if !f.is_finite() {
                return Err(Fault::Refused(format!(
                    "returned the counter '{name}' = {f}, expected a finite number"
                )));
            }
            f.into()
        } else {
            return Err(Fault::Refused(format!(
                "returned the counter '{name}' = {}, expected a number",
                shown(&x)
            )));
        };
        out.push((name, value));
    }
    Ok(out)
}

impl SchedPolicy for PyPolicy {
    fn placement(&self) -> &'static str {
        if self.spec.select_task_rq.is_none() {
            return self.base.placement();
        }
        intern(format!("{} (Python), else {}", self.spec.name, self.base.placement()))
    }

    fn energy_aware(&self) -> Option<std::result::Result<(), String>> {
        self.base.energy_aware()
    }

    fn load_balancer(&self, v: &SchedView) -> Option<Box<dyn LoadBalancer>> {
        self.base.load_balancer(v)
    }

    fn needs_hmp_load(&self) -> bool {
        self.base.needs_hmp_load()
    }

    /// Python places fair tasks (the fair class's `select_task_rq_fair`); RT and deadline
    /// tasks are their classes', so the base's. A hook that returns None leaves the
    /// wakeup to the base too.
    fn select_task_rq(&mut self, v: &SchedView, p: TaskId, prev_cpu: usize, wake: WakeKind) -> usize {
        let choice = match &self.spec.select_task_rq {
            Some(f) if v.tasks[p as usize].policy == SchedClass::Other => {
                let flags = match wake {
                    WakeKind::Fork => WF_FORK,
                    WakeKind::Wakeup => WF_TTWU,
                };
                self.call(
                    "select_task_rq",
                    f,
                    Some(v),
                    &[p as u64, prev_cpu as u64, flags],
                    |ret| {
                        if ret.is_none() {
                            Ok(None)
                        } else {
                            cpu_for(v, p, ret)
                                .map(Some)
                                .map_err(|why| format!("returned {why}").into())
                        }
                    },
                )
            }
            _ => None,
        };
        match choice {
            Some(cpu) => cpu,
            None => self.base.select_task_rq(v, p, prev_cpu, wake),
        }
    }

    fn balance_wakeup(&mut self, v: &SchedView, p: TaskId) -> Vec<Migration> {
        self.base.balance_wakeup(v, p)
    }

    fn migrate_task_rq(&mut self, v: &SchedView, p: TaskId, src: usize, dst: usize) {
        self.base.migrate_task_rq(v, p, src, dst)
    }

    fn dequeue_task(&mut self, v: &SchedView, cpu: usize, p: TaskId, sleep: bool) {
        self.base.dequeue_task(v, cpu, p, sleep)
    }

    fn set_next_task(&mut self, p: TaskId) {
        self.base.set_next_task(p)
    }

    fn put_prev_task(&mut self, p: TaskId) {
        self.base.put_prev_task(p)
    }

    #[inline]
    fn calc_delta_fair(&self, p: TaskId, vdelta: u64) -> u64 {
        self.base.calc_delta_fair(p, vdelta)
    }

    #[inline]
    fn sched_slice(&self, p: TaskId, slice: u64) -> u64 {
        self.base.sched_slice(p, slice)
    }

    /// The base's tick work first (hcs-td's and hcs-balance's policies live there, and a
    /// Python tick adds to it rather than switching it off), then Python's, whose
    /// migrations wait for this tick's `balance`.
    fn task_tick(&mut self, s: &mut Sim, cpu: usize, curr: TaskId) {
        self.base.task_tick(s, cpu, curr);
        if let Some(f) = &self.spec.task_tick {
            let v = s.sched_view();
            let migs = self.call("task_tick", f, Some(&v), &[cpu as u64, curr as u64], |ret| {
                migrations(&v, ret)
            });
            self.pending.extend(migs);
        }
    }

    /// The base's migrations, then those of this tick's Python `task_tick`s, then those
    /// of Python's `balance`; the core drops any gone stale meanwhile.
    fn balance(&mut self, v: &SchedView) -> Vec<Migration> {
        let mut migs = self.base.balance(v);
        migs.append(&mut self.pending);
        if let Some(f) = &self.spec.balance {
            migs.extend(self.call("balance", f, Some(v), &[], |ret| migrations(v, ret)));
        }
        migs
    }

    fn task_dead(&mut self, p: TaskId) {
        self.base.task_dead(p)
    }

    fn take_placement_steps(&mut self) -> u64 {
        self.base.take_placement_steps()
    }

    fn counters(&self) -> Vec<(&'static str, serde_json::Value)> {
        self.base.counters()
    }

    /// The base's sections, then Python's counters beside the base policy's in
    /// `counters.policy` (here rather than in `counters()`, so that a name the base already
    /// reports is refused instead of overwriting it).
    fn result(&self, v: &SchedView, out: &mut serde_json::Value) {
        self.base.result(v, out);
        let Some(f) = &self.spec.counters else { return };
        let taken: Vec<String> = out["counters"]["policy"]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        let values = self.call("counters", f, None, &[], |ret| counters(ret, &taken));
        if let Some(m) = out["counters"]["policy"].as_object_mut() {
            m.extend(values);
        }
    }

    fn knobs_changed(&mut self, knobs: &Knobs) {
        self.base.knobs_changed(knobs)
    }

    /// The base's state: what `Sim::policy_state` inspects is the registered policy.
    fn as_any(&self) -> &dyn std::any::Any {
        self.base.as_any()
    }
}

/// Runs `f`, catching the unwind a failed Python hook starts ([`PolicyAbort`]); any other
/// panic goes on unwinding (to `catch_panic`, which reports it with where it happened).
pub fn catch_policy_abort<T>(f: impl FnOnce() -> T) -> Result<T, PolicyAbort> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(v) => Ok(v),
        Err(payload) => match payload.downcast::<PolicyAbort>() {
            Ok(abort) => Err(*abort),
            Err(other) => std::panic::resume_unwind(other),
        },
    }
}
