//! The one boundary between the engine's failures and Python's exceptions.
//!
//! Every binding entry point returns [`EngineResult`]; its error, [`PyEngineError`], is
//! turned into a Python exception in exactly one place, `From<PyEngineError> for PyErr`.
//! The exceptions raised are the classes of `hetsched.errors` themselves (not look-alikes
//! defined here), so `except hetsched.errors.InputError` catches an engine input error
//! directly and the CLI's single `except HetschedError` prints it on one line:
//!
//! | engine failure                           | Python exception                                  |
//! |------------------------------------------|---------------------------------------------------|
//! | `Error::Config { doc, field, expected }` | `InputError(source=doc, field, expected)`         |
//! | `Error::Unknown { field, name, choices }`| `UnknownNameError("policy", field, name, choices)`|
//! | `Error::Json { doc, field, msg, got }`   | `InputError(source=doc, field, expected, got)`    |
//! | `Error::Json` with no field (not JSON)   | `InputError(source=doc, field="json", ...)`       |
//! | `Error::Runaway { field, expected, got }`| `InputError("workload", field, expected, got)`    |
//! | a Rust panic (caught by [`catch_panic`]) | `EngineError("engine panic at FILE:LINE: ...")`   |
//! | a call on an engine that panicked before | `EngineError(...)`                                |
//!
//! Errors Python itself raised while the binding built its answer pass through unchanged.

use hetsched_core::Error;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyModule, PyType};
use std::any::Any;
use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe, PanicHookInfo};
use std::sync::Once;

/// Everything a binding entry point can fail with, before it becomes a Python exception.
#[derive(Debug)]
pub enum PyEngineError {
    /// The engine refused an input (a spec, a knob value, a name).
    Engine(Error),
    /// The engine panicked.
    Panic(Panic),
    /// A call on an engine whose simulation panicked in an earlier call (that panic's
    /// text): its state may be half-updated, so nothing more is run on it or read from it.
    Poisoned(String),
    /// Python raised while the binding built its answer (a dict, a list): passed on as is.
    Python(PyErr),
}

pub type EngineResult<T> = Result<T, PyEngineError>;

/// A panic caught by [`catch_panic`]: its message (on one line) and where, when known.
/// Plain Rust, apart from PyEngineError, so that it can be made and tested without Python.
#[derive(Debug, Clone, PartialEq)]
pub struct Panic {
    pub message: String,
    pub location: Option<String>,
}

impl std::fmt::Display for Panic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.location {
            Some(at) => write!(f, "engine panic at {at}: {}", self.message),
            None => write!(f, "engine panic: {}", self.message),
        }
    }
}

impl From<Panic> for PyEngineError {
    fn from(p: Panic) -> Self {
        PyEngineError::Panic(p)
    }
}

impl From<Error> for PyEngineError {
    fn from(e: Error) -> Self {
        PyEngineError::Engine(e)
    }
}

impl From<PyErr> for PyEngineError {
    fn from(e: PyErr) -> Self {
        PyEngineError::Python(e)
    }
}

/// The module all the exception classes come from.
const ERRORS_MODULE: &str = "hetsched.errors";

static INPUT_ERROR: GILOnceCell<Py<PyType>> = GILOnceCell::new();
static UNKNOWN_NAME_ERROR: GILOnceCell<Py<PyType>> = GILOnceCell::new();
static ENGINE_ERROR: GILOnceCell<Py<PyType>> = GILOnceCell::new();

/// Adds the exception classes the binding raises to the `_engine` module, importing
/// them once; a `hetsched.errors` without them fails the import of `_engine` at once
/// rather than at the first error.
pub fn add_exception_classes(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("InputError", INPUT_ERROR.import(py, ERRORS_MODULE, "InputError")?)?;
    m.add(
        "UnknownNameError",
        UNKNOWN_NAME_ERROR.import(py, ERRORS_MODULE, "UnknownNameError")?,
    )?;
    m.add("EngineError", ENGINE_ERROR.import(py, ERRORS_MODULE, "EngineError")?)?;
    Ok(())
}

/// The source named by an unknown-name error: every name the engine looks up
/// (scheduler, governor, idle governor, kernel profile, knob) is a field of the policy
/// document (`Engine(platform_json, workload_json, policy_json)`).
const UNKNOWN_SOURCE: &str = "policy";

impl From<PyEngineError> for PyErr {
    fn from(e: PyEngineError) -> PyErr {
        if let PyEngineError::Python(err) = e {
            return err;
        }
        Python::with_gil(|py| match exception(py, &e) {
            Ok(exc) => PyErr::from_value(exc),
            // hetsched.errors was importable when _engine was imported (see
            // add_exception_classes), so this is a broken installation: still one line
            // with the engine's own message, and the reason beside it.
            Err(why) => PyRuntimeError::new_err(format!(
                "{} (and {ERRORS_MODULE} could not raise it: {why})",
                e.message()
            )),
        })
    }
}

/// The `hetsched.errors` exception instance for `e`.
fn exception<'py>(py: Python<'py>, e: &PyEngineError) -> PyResult<Bound<'py, PyAny>> {
    let input_error = || INPUT_ERROR.import(py, ERRORS_MODULE, "InputError");
    match e {
        PyEngineError::Engine(Error::Config { doc, field, expected }) => {
            input_error()?.call1((*doc, field.as_str(), one_line(expected)))
        }
        PyEngineError::Engine(Error::Unknown {
            field, name, choices, ..
        }) => {
            // the engine joins its registry's names with ", " (no name holds one)
            let choices: Vec<&str> = choices.split(", ").filter(|c| !c.is_empty()).collect();
            UNKNOWN_NAME_ERROR
                .import(py, ERRORS_MODULE, "UnknownNameError")?
                .call1((UNKNOWN_SOURCE, field.as_str(), name.as_str(), choices))
        }
        PyEngineError::Engine(Error::Json { doc, field, msg, .. }) if field.is_empty() => {
            // text that is not JSON: serde says what is wrong and where (line, column)
            input_error()?.call1((*doc, "json", format!("a resolved {doc} spec ({})", one_line(msg))))
        }
        PyEngineError::Engine(Error::Json { doc, field, msg, got }) => {
            let expected = msg.strip_prefix("expected ").unwrap_or(msg);
            let got = got.as_deref().map(|g| json_value(py, g)).transpose()?;
            input_error()?.call1((*doc, field.as_str(), one_line(expected), got))
        }
        PyEngineError::Engine(Error::Runaway { field, expected, got }) => {
            input_error()?.call1(("workload", field.as_str(), one_line(expected), got.as_str()))
        }
        PyEngineError::Panic(_) | PyEngineError::Poisoned(_) => ENGINE_ERROR
            .import(py, ERRORS_MODULE, "EngineError")?
            .call1((e.message(),)),
        PyEngineError::Python(err) => Ok(err.value(py).clone().into_any()),
    }
}

/// A value serde quoted (JSON text: a number, a string, true/false, or a few words) as
/// the Python value the user wrote, so that InputError shows it as Python shows values.
fn json_value<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    Ok(match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Number(n)) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into_pyobject(py)?.into_any(),
            (None, Some(u)) => u.into_pyobject(py)?.into_any(),
            _ => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Ok(serde_json::Value::String(s)) => s.into_pyobject(py)?.into_any(),
        Ok(serde_json::Value::Bool(b)) => pyo3::types::PyBool::new(py, b).to_owned().into_any(),
        _ => text.into_pyobject(py)?.into_any(),
    })
}

impl PyEngineError {
    /// The one-line text of the error, as the engine words it.
    pub fn message(&self) -> String {
        match self {
            PyEngineError::Engine(e) => one_line(&e.to_string()),
            PyEngineError::Panic(p) => p.to_string(),
            PyEngineError::Poisoned(panic) => poisoned_text(panic),
            PyEngineError::Python(e) => e.to_string(),
        }
    }
}

fn poisoned_text(panic: &str) -> String {
    format!("this simulation cannot go on: the engine panicked in an earlier call ({panic}); build a new one")
}

/// The text on one line: the CLI prints an error as a single line, and a panic message
/// (an `assert_eq!`'s left/right) or a serde message may span several.
fn one_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

thread_local! {
    /// How many `catch_panic` calls are running on this thread.
    static GUARDED: Cell<usize> = const { Cell::new(0) };
    /// Where the last caught panic happened ("FILE:LINE:COL"), set by the panic hook.
    static LOCATION: RefCell<Option<String>> = const { RefCell::new(None) };
}

static HOOK: Once = Once::new();

/// Installs (once) a panic hook that, for a panic `catch_unwind` is about to catch,
/// records its location for the exception's message instead of printing the default
/// "thread panicked at" lines: the exception already says it, and the CLI's report is
/// one line. RUST_BACKTRACE still prints the backtrace; a panic outside `catch_panic`
/// is printed as always. The hook belongs to this extension's own Rust runtime, so
/// other Rust extensions in the process are unaffected.
fn install_hook() {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info: &PanicHookInfo<'_>| {
            if GUARDED.with(Cell::get) == 0 {
                return previous(info);
            }
            let at = info
                .location()
                .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
            LOCATION.with(|cell| *cell.borrow_mut() = at);
            if std::env::var_os("RUST_BACKTRACE").is_some_and(|v| v != "0") {
                previous(info);
            }
        }));
    });
}

/// Runs `f`, turning a panic into a [`Panic`] with its message and location,
/// so that no panic unwinds into Python (which would raise PyO3's PanicException, a
/// BaseException that `except Exception` and the CLI do not catch).
pub fn catch_panic<T>(f: impl FnOnce() -> T) -> Result<T, Panic> {
    install_hook();
    LOCATION.with(|cell| cell.borrow_mut().take());
    GUARDED.with(|g| g.set(g.get() + 1));
    let r = catch_unwind(AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(g.get() - 1));
    r.map_err(|payload| Panic {
        message: one_line(&panic_message(payload.as_ref())),
        location: LOCATION.with(|cell| cell.borrow_mut().take()),
    })
}

/// The text of a panic's payload (`panic!` with a format gives a String, with a literal
/// a &str; anything else has no text to show).
fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else {
        "(a panic without a message)".into()
    }
}

// These tests stay clear of anything that calls into Python (PyErr, the conversion): the
// extension is linked without libpython, so a test binary that reached it would not link.
// The Python side of the boundary is tested in tests/test_errors.py.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_is_caught_with_its_message_and_location() {
        let p = catch_panic(|| -> u32 { panic!("rq {} has no curr", 3) }).unwrap_err();
        assert_eq!(p.message, "rq 3 has no curr");
        let at = p.location.clone().expect("the hook records where");
        assert!(at.contains("error.rs:"), "{at}");
        assert_eq!(p.to_string(), format!("engine panic at {at}: rq 3 has no curr"));
        let p = Panic {
            message: "boom".into(),
            location: None,
        };
        assert_eq!(p.to_string(), "engine panic: boom");
    }

    #[test]
    fn a_multi_line_panic_gives_one_line() {
        let p = catch_panic(|| assert_eq!(1 + 1, 3)).unwrap_err();
        assert!(!p.message.contains('\n'), "{}", p.message);
        assert!(p.message.contains("left: 2; right: 3"), "{}", p.message);
    }

    #[test]
    fn a_panic_without_text_still_says_so() {
        let p = catch_panic(|| std::panic::panic_any(7_u8)).unwrap_err();
        assert_eq!(p.message, "(a panic without a message)");
    }

    #[test]
    fn no_panic_passes_the_value_through_and_nesting_keeps_the_count() {
        assert_eq!(catch_panic(|| catch_panic(|| 5).unwrap() + 1), Ok(6));
        assert_eq!(GUARDED.with(Cell::get), 0);
        let _ = catch_panic(|| panic!("x")).unwrap_err();
        assert_eq!(GUARDED.with(Cell::get), 0);
    }

    #[test]
    fn texts_stay_on_one_line() {
        assert_eq!(
            one_line("missing field `tasks`\n  at line 1 column 2\n"),
            "missing field `tasks`; at line 1 column 2"
        );
        assert!(poisoned_text("engine panic: boom").contains("(engine panic: boom)"));
    }
}
