//! A tool's own arguments checked against its input schema before any request is made:
//! an argument the schema does not declare, one whose JSON type is not its declared type,
//! or a required one that is missing is an `invalid_arguments` error naming it and
//! listing the real ones (with their types), so the model corrects itself in one step
//! instead of reading "upstream could not be reached". Built once per tool (it is part of
//! [`crate::ToolAnalysis`]); reserved arguments are taken out before this runs and
//! keep their own rules (`plan`).
//!
//! What counts: the schema's top-level `properties` and `required`. A schema with no
//! `properties` declares nothing, so every argument is accepted (the request builder then
//! places them by its hand-defined rule). `null` is "not given": the request builder sends
//! nothing for it, so it never fails a type, but it does not satisfy `required`.
//! Nested objects (the `body`'s fields) are not checked here beyond their own type.
//!
//! Integers are integers: a whole number written as a float (`2e0`, `5.0`) for an
//! argument declared `integer` (and not also `number`) is rewritten as that integer
//! before the request is built ([`Signature::whole_numbers`]), so the upstream receives
//! `2`, never `2.0`. JSON numbers are read as IEEE doubles (RFC 8259 §6): one that reads
//! as a whole double inside the 64-bit integer range is that integer (`1e-400` reads as
//! `0`); a whole double outside that range (`1e300`) cannot be sent exactly and is
//! refused (`invalid_arguments`), like a fraction (`2.5`).

use serde_json::{Map, Value};

use crate::error::EngineError;

/// A JSON Schema primitive type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonType {
    String,
    Integer,
    Number,
    Boolean,
    Array,
    Object,
    Null,
}

impl JsonType {
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "string" => Self::String,
            "integer" => Self::Integer,
            "number" => Self::Number,
            "boolean" => Self::Boolean,
            "array" => Self::Array,
            "object" => Self::Object,
            "null" => Self::Null,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::Integer => "integer",
            Self::Number => "number",
            Self::Boolean => "boolean",
            Self::Array => "array",
            Self::Object => "object",
            Self::Null => "null",
        }
    }

    /// JSON Schema's reading: an integer is a number with no fractional part, and every
    /// integer is a number.
    fn admits(self, v: &Value) -> bool {
        match (self, v) {
            (Self::String, Value::String(_))
            | (Self::Number, Value::Number(_))
            | (Self::Boolean, Value::Bool(_))
            | (Self::Array, Value::Array(_))
            | (Self::Object, Value::Object(_))
            | (Self::Null, Value::Null) => true,
            (Self::Integer, Value::Number(n)) => {
                n.is_i64() || n.is_u64() || n.as_f64().and_then(exact_integer).is_some()
            }
            _ => false,
        }
    }
}

/// The integer a float is exactly: whole, finite and inside the `i64` range (every
/// whole double in that range is an exact `i64`). `None` otherwise.
pub fn exact_integer(f: f64) -> Option<i64> {
    // 2^63 as a double is exact; the range is [-2^63, 2^63)
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    (f.is_finite() && f.fract() == 0.0 && (-LIMIT..LIMIT).contains(&f)).then_some(f as i64)
}

/// One declared top-level argument.
#[derive(Debug, Clone, PartialEq)]
pub struct ArgSpec {
    pub name: String,
    /// Declared types; empty: any JSON value.
    pub types: Vec<JsonType>,
    pub required: bool,
}

/// The arguments a tool declares. `Default` (and a schema without `properties`) accepts
/// anything.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Signature {
    /// `None`: the schema declares no properties.
    pub args: Option<Vec<ArgSpec>>,
}

impl Signature {
    pub fn of(schema: &Value) -> Self {
        let Some(props) = schema
            .get("properties")
            .and_then(Value::as_object)
            .filter(|p| !p.is_empty())
        else {
            return Self::default();
        };
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let args = props
            .iter()
            .map(|(name, prop)| ArgSpec {
                name: name.clone(),
                types: declared_types(prop),
                required: required.contains(&name.as_str()),
            })
            .collect();
        Self { args: Some(args) }
    }

    /// Rewrites each whole-number float given for an argument declared `integer` (and not
    /// `number`) as that integer (`2e0` → `2`), so the request carries an integer. Run
    /// before [`Signature::check`], which refuses what cannot be rewritten exactly.
    pub fn whole_numbers(&self, args: &mut Map<String, Value>) {
        let Some(specs) = &self.args else {
            return;
        };
        for spec in specs {
            let integer_only =
                spec.types.contains(&JsonType::Integer) && !spec.types.contains(&JsonType::Number);
            if !integer_only {
                continue;
            }
            let Some(Value::Number(n)) = args.get_mut(&spec.name) else {
                continue;
            };
            if n.is_i64() || n.is_u64() {
                continue;
            }
            if let Some(i) = n.as_f64().and_then(exact_integer) {
                *n = i.into();
            }
        }
    }

    /// Checks the tool's own arguments (reserved ones already removed). `filled` names the
    /// arguments the engine supplies itself (a walk's paging parameters, a `_for_each`
    /// key), which need not be given even when required.
    pub fn check(&self, args: &Map<String, Value>, filled: &[&str]) -> Result<(), EngineError> {
        let Some(specs) = &self.args else {
            return Ok(());
        };
        let unknown: Vec<&str> = args
            .keys()
            .filter(|k| !specs.iter().any(|s| s.name == **k))
            .map(String::as_str)
            .collect();
        if !unknown.is_empty() {
            return Err(self.error(format!(
                "Unknown argument{} {}.",
                plural(unknown.len()),
                backticked(&unknown)
            )));
        }
        let mut wrong = Vec::new();
        for spec in specs {
            let Some(v) = args.get(&spec.name).filter(|v| !v.is_null()) else {
                continue;
            };
            if !spec.types.is_empty() && !spec.types.iter().any(|t| t.admits(v)) {
                wrong.push(format!(
                    "`{}` must be {}, not {} {}",
                    spec.name,
                    type_list(&spec.types),
                    kind_of(v),
                    sample(v)
                ));
            }
        }
        if !wrong.is_empty() {
            return Err(self.error(format!("Wrong argument type: {}.", wrong.join("; "))));
        }
        let missing: Vec<&str> = specs
            .iter()
            .filter(|s| s.required && !filled.contains(&s.name.as_str()))
            .filter(|s| args.get(&s.name).is_none_or(Value::is_null))
            .map(|s| s.name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(self.error(format!(
                "Missing required argument{} {}.",
                plural(missing.len()),
                backticked(&missing)
            )));
        }
        Ok(())
    }

    fn error(&self, what: String) -> EngineError {
        EngineError::invalid(format!(
            "{what} This tool's arguments are: {}. Call it again with these names and types only.",
            self.describe()
        ))
    }

    /// `name (type, required)` for every declared argument.
    fn describe(&self) -> String {
        let Some(specs) = &self.args else {
            return "(any)".into();
        };
        specs
            .iter()
            .map(|s| {
                let mut notes = Vec::new();
                if !s.types.is_empty() {
                    notes.push(type_list(&s.types));
                }
                if s.required {
                    notes.push("required".into());
                }
                if notes.is_empty() {
                    format!("`{}`", s.name)
                } else {
                    format!("`{}` ({})", s.name, notes.join(", "))
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// `type` as a string or a list; OpenAPI 3.0's `nullable: true` adds `null`. An unknown
/// type name makes the argument untyped rather than unusable.
fn declared_types(prop: &Value) -> Vec<JsonType> {
    let mut types: Vec<JsonType> = match prop.get("type") {
        Some(Value::String(s)) => JsonType::parse(s).into_iter().collect(),
        Some(Value::Array(a)) => {
            let names: Vec<&str> = a.iter().filter_map(Value::as_str).collect();
            let parsed: Vec<JsonType> = names.iter().filter_map(|n| JsonType::parse(n)).collect();
            if parsed.len() == names.len() {
                parsed
            } else {
                Vec::new()
            }
        }
        _ => Vec::new(),
    };
    if !types.is_empty() && prop.get("nullable").and_then(Value::as_bool) == Some(true) {
        types.push(JsonType::Null);
    }
    types
}

fn type_list(types: &[JsonType]) -> String {
    let names: Vec<&str> = types
        .iter()
        .filter(|t| **t != JsonType::Null)
        .map(|t| t.name())
        .collect();
    match names.as_slice() {
        [] => "null".into(),
        [one] => (*one).into(),
        many => format!("one of {}", many.join(" / ")),
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "a string",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(_) => "a number",
        Value::Bool(_) => "a boolean",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
        Value::Null => "null",
    }
}

/// The value as given, shortened: enough for the model to see what it sent.
fn sample(v: &Value) -> String {
    let text = match v {
        Value::Array(_) | Value::Object(_) => return String::new(),
        other => other.to_string(),
    };
    if text.chars().count() > 40 {
        format!("({}…)", text.chars().take(40).collect::<String>())
    } else {
        format!("({text})")
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// `` `a`, `b` `` — how argument names are listed in messages to the model.
pub fn backticked(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sig() -> Signature {
        Signature::of(
            &json!({"type": "object", "required": ["org"], "properties": {
                "org": {"type": "string"},
                "limit": {"type": "integer"},
                "ratio": {"type": "number"},
                "tags": {"type": ["array", "null"]},
                "since": {"type": "string", "nullable": true},
                "body": {"type": "object", "properties": {"x": {}}},
                "any": {}
            }}),
        )
    }

    fn check(args: Value, filled: &[&str]) -> Result<(), EngineError> {
        let Value::Object(m) = args else {
            panic!("object")
        };
        sig().check(&m, filled)
    }

    #[test]
    fn declared_arguments_of_the_right_type_pass() {
        let ok = check(
            json!({"org": "a", "limit": 5, "ratio": 1, "tags": null, "since": null,
                   "body": {"x": 1}, "any": [1]}),
            &[],
        );
        assert_eq!(ok, Ok(()));
        // 5.0 is an integer in JSON Schema
        assert_eq!(check(json!({"org": "a", "limit": 5.0}), &[]), Ok(()));
    }

    /// Integers are integers: a whole-number float for an `integer` argument is sent as
    /// the integer; one that is not an exact 64-bit integer is refused.
    #[test]
    fn whole_number_floats_become_integers() {
        let parse = |text: &str| -> Map<String, Value> {
            match serde_json::from_str(text) {
                Ok(Value::Object(m)) => m,
                _ => panic!("object"),
            }
        };
        let mut m = parse(r#"{"org": "a", "limit": 2e0, "ratio": 3e0, "any": 4.0}"#);
        sig().whole_numbers(&mut m);
        assert_eq!(
            serde_json::to_string(&m["limit"]).ok().as_deref(),
            Some("2")
        );
        // a `number` argument and an untyped one keep what was sent
        assert_eq!(
            serde_json::to_string(&m["ratio"]).ok().as_deref(),
            Some("3.0")
        );
        assert_eq!(
            serde_json::to_string(&m["any"]).ok().as_deref(),
            Some("4.0")
        );
        assert_eq!(sig().check(&m, &[]), Ok(()));
        // 1e-400 reads as the double 0 (below the smallest double): it is 0
        let mut m = parse(r#"{"org": "a", "limit": 1e-400}"#);
        sig().whole_numbers(&mut m);
        assert_eq!(
            serde_json::to_string(&m["limit"]).ok().as_deref(),
            Some("0")
        );
        let mut m = parse(r#"{"org": "a", "limit": -9.2233720368547758e18}"#);
        sig().whole_numbers(&mut m);
        assert_eq!(m["limit"], json!(i64::MIN));
        // not exactly an integer of 64 bits: refused, never sent as a float
        for text in [
            r#"{"org": "a", "limit": 1e300}"#,
            r#"{"org": "a", "limit": 9.3e18}"#,
        ] {
            let mut m = parse(text);
            sig().whole_numbers(&mut m);
            let e = sig().check(&m, &[]).err();
            assert!(
                e.is_some_and(|e| e.detail().contains("`limit` must be integer")),
                "{text}"
            );
        }
        assert_eq!(exact_integer(f64::NAN), None);
        assert_eq!(exact_integer(f64::INFINITY), None);
        assert_eq!(exact_integer(-0.0), Some(0));
        assert_eq!(exact_integer(2f64.powi(63)), None, "one past i64::MAX");
        assert_eq!(exact_integer(-(2f64.powi(63))), Some(i64::MIN));
    }

    #[test]
    fn an_unknown_argument_is_named_with_the_real_ones() {
        let e = check(json!({"org": "a", "colour": "red"}), &[]).err();
        let e = e.unwrap_or_else(|| panic!("expected an error"));
        assert_eq!(e.code(), "invalid_arguments");
        let d = e.detail();
        assert!(d.contains("Unknown argument `colour`"), "{d}");
        assert!(
            d.contains("`org` (string, required)") && d.contains("`limit` (integer)"),
            "{d}"
        );
    }

    #[test]
    fn a_wrong_type_is_named_with_what_was_sent() {
        let e = check(json!({"org": "a", "limit": "10", "ratio": true}), &[]).err();
        let d = e.map(|e| e.detail().to_owned()).unwrap_or_default();
        assert!(
            d.contains("`limit` must be integer, not a string (\"10\")"),
            "{d}"
        );
        assert!(d.contains("`ratio` must be number, not a boolean"), "{d}");
        let e = check(json!({"org": "a", "limit": 2.5}), &[]).err();
        assert!(e.is_some_and(|e| e.detail().contains("not a number (2.5)")));
        let e = check(json!({"org": 7}), &[]).err();
        assert!(e.is_some_and(|e| e.detail().contains("`org` must be string")));
    }

    #[test]
    fn a_missing_required_argument_is_named_unless_the_engine_fills_it() {
        let e = check(json!({"limit": 1}), &[]).err();
        assert!(e.is_some_and(|e| e.detail().contains("Missing required argument `org`")));
        let e = check(json!({"org": null}), &[]).err();
        assert!(e.is_some(), "null does not satisfy required");
        assert_eq!(check(json!({}), &["org"]), Ok(()));
    }

    #[test]
    fn a_schema_without_properties_accepts_anything() {
        let open = Signature::of(&json!({"type": "object"}));
        let Value::Object(m) = json!({"whatever": 1}) else {
            panic!("object")
        };
        assert_eq!(open.check(&m, &[]), Ok(()));
        assert_eq!(Signature::default().check(&m, &[]), Ok(()));
    }

    #[test]
    fn unknown_type_names_leave_an_argument_untyped() {
        let s = Signature::of(
            &json!({"properties": {"a": {"type": "file"}, "b": {"type": ["string", "date"]}}}),
        );
        let Value::Object(m) = json!({"a": 1, "b": 2}) else {
            panic!("object")
        };
        assert_eq!(s.check(&m, &[]), Ok(()));
    }
}
