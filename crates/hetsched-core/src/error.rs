//! The engine's one error type. Every variant names the field and what was expected, so
//! the Python edge (`hetsched-py/src/lib.rs`) can raise one clear line without a traceback.

use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum Error {
    /// A resolved spec (platform, workload or policy) that the engine cannot use.
    #[error("{doc}: {field}: expected {expected}")]
    Config {
        doc: &'static str,
        field: String,
        expected: String,
    },
    /// A name that is not registered (scheduler, governor, knob).
    #[error("{field}: unknown {kind} '{name}', expected one of: {choices}")]
    Unknown {
        field: String,
        kind: &'static str,
        name: String,
        choices: String,
    },
    /// A JSON document that does not have the resolved-spec shape.
    #[error("{doc}: {msg}")]
    Json { doc: &'static str, msg: String },
}

pub type Result<T> = std::result::Result<T, Error>;

pub(crate) fn config(doc: &'static str, field: impl Into<String>, expected: impl Into<String>) -> Error {
    Error::Config {
        doc,
        field: field.into(),
        expected: expected.into(),
    }
}
