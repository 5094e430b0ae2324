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
    /// A JSON document that does not have the resolved-spec shape. `field` is the path of
    /// the value serde stopped at (`clusters[0].opps[2].khz`), empty when the text is not
    /// JSON at all or the root is wrong; `got` the value it found, as JSON text, shortened.
    #[error("{doc}: {}{msg}{}", field_prefix(field), got_suffix(got))]
    Json {
        doc: &'static str,
        field: String,
        msg: String,
        got: Option<String>,
    },
    /// A run the engine stopped because its workload ran away: more tasks than a run may
    /// hold, or simulated time that no longer passes (limits.rs). `field` is the spec's
    /// path of the task, phase and event at fault; `got` what happened, in a few words.
    #[error("workload: {field}: expected {expected}, got {got}")]
    Runaway {
        field: String,
        expected: String,
        got: String,
    },
}

fn field_prefix(field: &str) -> String {
    if field.is_empty() {
        String::new()
    } else {
        format!("{field}: ")
    }
}

fn got_suffix(got: &Option<String>) -> String {
    got.as_ref().map_or_else(String::new, |g| format!(", got {g}"))
}

pub type Result<T> = std::result::Result<T, Error>;

pub(crate) fn config(doc: &'static str, field: impl Into<String>, expected: impl Into<String>) -> Error {
    Error::Config {
        doc,
        field: field.into(),
        expected: expected.into(),
    }
}

/// The longest value an error message shows whole: a spec may hold a 100-KB string, and
/// the message is one line on a terminal.
pub const SHOWN_CHARS: usize = 60;

/// `s` cut to `max` characters, "..." marking the cut.
pub fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(3)).collect();
    out.push_str("...");
    out
}

/// The resolved document `doc` read from the JSON `text`, or its error in the engine's
/// terms: a data error (a wrong type, a missing or unknown key, an unknown name) names the
/// field it is in, as the other spec errors do, and what was expected and found; a text that
/// is not JSON keeps serde's words and position. The field is the path serde_path_to_error
/// records as serde_json descends, the crate the serde ecosystem keeps for this.
pub(crate) fn from_json<T: serde::de::DeserializeOwned>(doc: &'static str, text: &str) -> Result<T> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value: T = serde_path_to_error::deserialize(&mut de).map_err(|e| json_error(doc, e))?;
    // trailing text after the document, as serde_json::from_str refuses it
    de.end().map_err(|e| not_json(doc, &e))?;
    Ok(value)
}

/// A text that is not JSON (or whose root is wrong): serde's words and position.
fn not_json(doc: &'static str, e: &serde_json::Error) -> Error {
    Error::Json {
        doc,
        field: String::new(),
        msg: shorten_quoted(&e.to_string()),
        got: None,
    }
}

fn json_error(doc: &'static str, e: serde_path_to_error::Error<serde_json::Error>) -> Error {
    let path = field_path(e.path());
    let e = e.into_inner();
    if e.classify() != serde_json::error::Category::Data || e.line() == 0 {
        return not_json(doc, &e);
    }
    let full = e.to_string();
    // serde's text without its " at line L column C": the field says where
    let bare = match full.rfind(" at line ") {
        Some(i) => &full[..i],
        None => full.as_str(),
    };
    let join = |key: &str| {
        if path.is_empty() {
            path_key(key)
        } else {
            format!("{path}.{}", path_key(key))
        }
    };
    let (field, msg, got) = if let Some(rest) = bare.strip_prefix("missing field `") {
        let key = rest.trim_end_matches('`');
        (join(key), "expected this key (it is required)".to_string(), None)
    } else if let Some((what, expected)) = split_unexpected(bare) {
        (
            path,
            format!("expected {}", plain_expected(expected)),
            Some(got_text(what)),
        )
    } else if let Some(rest) = bare.strip_prefix("unknown field `") {
        // refused as a key, before the path had a step for it
        let (key, expected) = rest
            .split_once("`, expected ")
            .unwrap_or((rest.trim_end_matches('`'), "a known key"));
        (join(key), format!("expected {}", shorten(expected, 200)), None)
    } else if let Some(rest) = bare.strip_prefix("duplicate field `") {
        // refused as a key too: the path ends at its object
        let key = rest.trim_end_matches('`');
        (join(key), "expected this key once".to_string(), None)
    } else if let Some(rest) = bare.strip_prefix("unknown variant `") {
        let (name, expected) = rest.split_once("`, expected ").unwrap_or((rest, "a known name"));
        (
            path,
            format!("expected {}", shorten(expected, 200)),
            Some(json_string(&shorten(name, SHOWN_CHARS))),
        )
    } else {
        (
            path,
            format!("expected a resolved {doc} spec ({})", shorten_quoted(bare)),
            None,
        )
    };
    if field.is_empty() {
        return not_json(doc, &e); // the root itself: no field to name
    }
    Error::Json { doc, field, msg, got }
}

/// "invalid type: X, expected Y" / "invalid value: X, expected Y" / "invalid length X,
/// expected Y" -> (X, Y).
fn split_unexpected(msg: &str) -> Option<(&str, &str)> {
    let rest = msg
        .strip_prefix("invalid type: ")
        .or_else(|| msg.strip_prefix("invalid value: "))
        .or_else(|| msg.strip_prefix("invalid length "))?;
    // X may hold ", expected " itself only inside a string: take the last one
    let i = rest.rfind(", expected ")?;
    Some((&rest[..i], &rest[i + ", expected ".len()..]))
}

/// serde's name of an expected Rust type in the words of a JSON document.
fn plain_expected(e: &str) -> String {
    match e {
        "u8" | "u16" | "u32" | "u64" | "usize" => format!("a non-negative integer ({e})"),
        "i8" | "i16" | "i32" | "i64" | "isize" => format!("an integer ({e})"),
        "f32" | "f64" => "a number".to_string(),
        "a sequence" => "an array".to_string(),
        "a map" => "an object".to_string(),
        e if e.starts_with("struct ") => "an object".to_string(),
        e => shorten(e, 200),
    }
}

/// serde's description of the value it found (`floating point `1e33``, `string "x"`,
/// `integer `-1``, `boolean `true``, `map`) as JSON text where it names one, shortened.
fn got_text(what: &str) -> String {
    let inner = |s: &str| s.trim_matches('`').to_string();
    if let Some(v) = what.strip_prefix("floating point ") {
        inner(v)
    } else if let Some(v) = what.strip_prefix("integer ") {
        inner(v)
    } else if let Some(v) = what.strip_prefix("boolean ") {
        inner(v)
    } else if let Some(v) = what.strip_prefix("string ") {
        // serde quotes with Rust's escapes, which agree with JSON's for what matters here
        let v = v.strip_prefix('"').and_then(|v| v.strip_suffix('"')).unwrap_or(v);
        json_string(&shorten(v, SHOWN_CHARS))
    } else {
        match what {
            "map" => "an object".into(),
            "sequence" => "an array".into(),
            "unit" | "null" => "null".into(),
            w => shorten(w, SHOWN_CHARS),
        }
    }
}

fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

/// Every run of more than SHOWN_CHARS characters between quotes or backticks cut short:
/// serde's syntax messages quote what they read.
fn shorten_quoted(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len().min(400));
    let mut quote: Option<char> = None;
    let mut run = String::new();
    for c in msg.chars() {
        match quote {
            None => {
                out.push(c);
                if c == '"' || c == '`' {
                    quote = Some(c);
                }
            }
            Some(q) if c == q => {
                out.push_str(&shorten(&run, SHOWN_CHARS));
                out.push(c);
                run.clear();
                quote = None;
            }
            Some(_) => run.push(c),
        }
    }
    out.push_str(&shorten(&run, SHOWN_CHARS));
    out
}

/// A key as a step of a field path: itself when it is a plain name, else JSON-quoted in
/// brackets; long keys shortened.
fn path_key(key: &str) -> String {
    let key = shorten(key, 40);
    if !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || "_-".contains(c)) {
        key
    } else {
        format!("[{}]", json_string(&key))
    }
}

/// A serde_path_to_error path in the engine's field form: `tasks[2].phases[0].events[1].run`,
/// keys that are not plain names JSON-quoted in brackets (path_key), "" at the root.
fn field_path(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;

    let mut out = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => out.push_str(&format!("[{index}]")),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                let step = path_key(key);
                if !out.is_empty() && !step.starts_with('[') {
                    out.push('.');
                }
                out.push_str(&step);
            }
            Segment::Unknown => out.push_str(if out.is_empty() { "?" } else { ".?" }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Opp {
        khz: u64,
    }
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Cluster {
        name: String,
        opps: Vec<Opp>,
    }
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Doc {
        clusters: Vec<Cluster>,
    }

    fn read(text: &str) -> Error {
        from_json::<Doc>("platform", text).unwrap_err()
    }

    #[test]
    fn a_wrong_type_names_its_field_and_the_value() {
        let text = r#"{"clusters": [{"name": "a", "opps": [{"khz": 1}]},
                       {"name": "b", "opps": [{"khz": 2}, {"khz": 1e33}]}]}"#;
        assert_eq!(
            read(text).to_string(),
            "platform: clusters[1].opps[1].khz: expected a non-negative integer (u64), got 1e+33"
        );
        let e = read(r#"{"clusters": "several"}"#);
        assert_eq!(e.to_string(), r#"platform: clusters: expected an array, got "several""#);
    }

    #[test]
    fn a_missing_key_is_named_inside_its_object() {
        let e = read(r#"{"clusters": [{"name": "a"}]}"#);
        assert_eq!(
            e.to_string(),
            "platform: clusters[0].opps: expected this key (it is required)"
        );
        let e = read("{}");
        assert_eq!(e.to_string(), "platform: clusters: expected this key (it is required)");
    }

    #[test]
    fn long_values_are_shortened() {
        let long = "x".repeat(100_000);
        let e = read(&format!(r#"{{"clusters": "{long}"}}"#));
        let text = e.to_string();
        assert!(text.len() < 200, "{text}");
        assert!(text.contains("xxx..."), "{text}");
        let e = read(&format!(r#"{{"clusters": [{{"name": "a", "opps": [], "{long}": 1]}}"#));
        assert!(e.to_string().len() < 300, "{e}");
    }

    #[test]
    fn text_that_is_not_json_keeps_serdes_position() {
        let e = read(r#"{"clusters": [}"#);
        assert!(matches!(&e, Error::Json { field, .. } if field.is_empty()));
        assert!(e.to_string().contains("line 1 column"), "{e}");
    }

    #[test]
    fn deep_nesting_stops_at_serdes_recursion_limit() {
        // a value read whole (the engine's `yield` takes any): serde_json's parser counts
        // the depth and stops at 128 levels instead of overflowing the stack
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct Any {
            v: serde_json::Value,
        }
        let text = format!(r#"{{"v": {}{}}}"#, "[".repeat(100_000), "]".repeat(100_000));
        let e = serde_json::from_str::<Any>(&text).unwrap_err();
        assert!(e.to_string().starts_with("recursion limit exceeded"), "{e}");
        // a key the engine skips is skipped without recursion: no depth to run out of
        let skipped = format!(
            r#"{{"clusters": [], "x": {}{}}}"#,
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        assert!(serde_json::from_str::<Doc>(&skipped).is_ok());
    }

    #[test]
    fn paths_quote_keys_that_are_not_plain_names() {
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct D {
            d: bool,
        }
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct C {
            c: (u8, u8, D),
        }
        let field = |e: Error| match e {
            Error::Json { field, .. } => field,
            e => panic!("{e}"),
        };
        let text = r#"{"a b": {"c": [1, 2, {"d": "tru"}]}}"#;
        let e = from_json::<std::collections::BTreeMap<String, C>>("doc", text).unwrap_err();
        assert_eq!(field(e), r#"["a b"].c[2].d"#);
        assert_eq!(field(from_json::<Vec<bool>>("doc", "[true, 2]").unwrap_err()), "[1]");
    }
}
