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

/// The error of `serde_json` reading the resolved document `doc` from `text`, in the
/// engine's terms: a data error (a wrong type, a missing or unknown key, an unknown name)
/// names the field it is in, as the other spec errors do, and what was expected and
/// found; a text that is not JSON keeps serde's words and position.
pub(crate) fn json_error(doc: &'static str, text: &str, e: serde_json::Error) -> Error {
    let full = e.to_string();
    if e.classify() != serde_json::error::Category::Data || e.line() == 0 {
        return Error::Json {
            doc,
            field: String::new(),
            msg: shorten_quoted(&full),
            got: None,
        };
    }
    // serde's text without its " at line L column C": the field says where
    let bare = match full.rfind(" at line ") {
        Some(i) => &full[..i],
        None => full.as_str(),
    };
    let path = json_path_at(text, e.line(), e.column());
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
        // the position is just after the key: the path already ends with it
        let expected = rest.split_once("`, expected ").map_or("a known key", |(_, e)| e);
        (path, format!("expected {}", shorten(expected, 200)), None)
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
        // the root itself: no field to name
        return Error::Json {
            doc,
            field: String::new(),
            msg: shorten_quoted(&full),
            got: None,
        };
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

/// The field path (`tasks[2].phases[0].events[1].run`) of the value that ends at
/// `line`:`column` of the JSON `text` (serde_json's 1-based position, just past what it
/// read). The text up to there is walked once, keeping the open objects' current keys and
/// the open arrays' indices; "" at the root.
pub fn json_path_at(text: &str, line: usize, column: usize) -> String {
    let bytes = text.as_bytes();
    let mut offset = 0usize;
    for _ in 1..line {
        match bytes[offset..].iter().position(|&b| b == b'\n') {
            Some(i) => offset += i + 1,
            None => break,
        }
    }
    let end = (offset + column).min(bytes.len());
    enum Frame {
        Obj { key: Option<String>, expect_key: bool },
        Arr(usize),
    }
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    while i < end {
        match bytes[i] {
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                if let Some(Frame::Obj { key, expect_key }) = stack.last_mut() {
                    if *expect_key {
                        let raw = &text[start..i.min(bytes.len())];
                        *key = Some(serde_json::from_str(&format!("\"{raw}\"")).unwrap_or_else(|_| raw.to_string()));
                        *expect_key = false;
                    }
                }
            }
            b'{' => stack.push(Frame::Obj {
                key: None,
                expect_key: true,
            }),
            b'[' => stack.push(Frame::Arr(0)),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => match stack.last_mut() {
                Some(Frame::Arr(n)) => *n += 1,
                Some(Frame::Obj { key, expect_key }) => {
                    *key = None;
                    *expect_key = true;
                }
                None => {}
            },
            _ => {}
        }
        i += 1;
    }
    let mut path = String::new();
    for f in &stack {
        match f {
            Frame::Obj { key: Some(k), .. } => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(&path_key(k));
            }
            Frame::Obj { key: None, .. } => break,
            Frame::Arr(n) => path.push_str(&format!("[{n}]")),
        }
    }
    path
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
        let e = serde_json::from_str::<Doc>(text).unwrap_err();
        json_error("platform", text, e)
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
        let text = r#"{"a b": {"c": [1, 2, {"d": tru"#;
        assert_eq!(json_path_at(text, 1, text.len()), r#"["a b"].c[2].d"#);
        assert_eq!(json_path_at("[1, 2", 1, 5), "[1]");
    }
}
