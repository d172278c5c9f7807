//! Value serialization for each place an argument can go: a path segment (percent-encoded
//! whole, so `/`, `?`, `#`, `%` cannot escape it), query pairs in the OpenAPI styles
//! (`form` with or without explode, `spaceDelimited`, `pipeDelimited`, `deepObject`, or
//! JSON text), header values, and `application/x-www-form-urlencoded` bodies with
//! Stripe-style brackets (`metadata[k]=v`, `expand[]=a`, `items[0][price]=p`).

use serde_json::{Map, Value};

/// How one query parameter is serialized.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum QueryStyle {
    /// OpenAPI `form` (the query default): explode repeats an array's key
    /// (`a=1&a=2`) and spreads an object's properties (`k=v&k2=v2`); without explode,
    /// `a=1,2` and `a=k,v,k2,v2`.
    Form {
        explode: bool,
    },
    SpaceDelimited,
    PipeDelimited,
    /// `a[k]=v`, `a[]=x`: Stripe's and Rails' brackets.
    DeepObject,
    /// The whole value as JSON text: a parameter declared with a JSON `content`, or an
    /// object argument of a hand-defined tool.
    Json,
}

/// Percent-encodes everything but RFC 3986 unreserved characters (`A-Z a-z 0-9 - . _ ~`).
pub(crate) fn encode_component(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The text of a JSON scalar (`true`, `3.5`, a string as is); `None` for null,
/// arrays and objects.
pub(crate) fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

/// A scalar's text, or a nested value's JSON text.
fn text_or_json(value: &Value) -> String {
    scalar_text(value).unwrap_or_else(|| value.to_string())
}

/// `simple` style (path and header parameters): scalars as text, arrays comma-joined,
/// objects `k,v,k2,v2` (or `k=v,k2=v2` with explode). Each piece goes through `piece`.
pub(crate) fn simple(value: &Value, explode: bool, piece: &dyn Fn(&str) -> String) -> String {
    match value {
        Value::Array(items) => items
            .iter()
            .map(|v| piece(&text_or_json(v)))
            .collect::<Vec<_>>()
            .join(","),
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| {
                let (k, v) = (piece(k), piece(&text_or_json(v)));
                if explode {
                    format!("{k}={v}")
                } else {
                    format!("{k},{v}")
                }
            })
            .collect::<Vec<_>>()
            .join(","),
        other => piece(&text_or_json(other)),
    }
}

/// The query pairs for one parameter (none for null).
pub(crate) fn query_pairs(name: &str, value: &Value, style: QueryStyle) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if value.is_null() {
        return out;
    }
    if style == QueryStyle::Json {
        out.push((name.to_string(), text_or_json(value)));
        return out;
    }
    if style == QueryStyle::DeepObject {
        brackets(name, value, &mut out);
        return out;
    }
    let delimiter = match style {
        QueryStyle::SpaceDelimited => Some(" "),
        QueryStyle::PipeDelimited => Some("|"),
        QueryStyle::Form { explode: false } => Some(","),
        _ => None,
    };
    match (value, delimiter) {
        (Value::Array(items), None) => {
            for item in items.iter().filter(|v| !v.is_null()) {
                out.push((name.to_string(), text_or_json(item)));
            }
        }
        (Value::Object(map), None) => {
            for (k, v) in map.iter().filter(|(_, v)| !v.is_null()) {
                out.push((k.clone(), text_or_json(v)));
            }
        }
        (Value::Array(items), Some(sep)) => {
            let joined: Vec<String> = items.iter().map(text_or_json).collect();
            out.push((name.to_string(), joined.join(sep)));
        }
        (Value::Object(map), Some(sep)) => {
            let joined: Vec<String> = map
                .iter()
                .flat_map(|(k, v)| [k.clone(), text_or_json(v)])
                .collect();
            out.push((name.to_string(), joined.join(sep)));
        }
        (scalar, _) => out.push((name.to_string(), text_or_json(scalar))),
    }
    out
}

/// Flattens a value under `prefix` with brackets: objects `prefix[k]`, arrays of
/// scalars `prefix[]`, other arrays `prefix[i]`; nulls and empty containers send nothing.
pub(crate) fn brackets(prefix: &str, value: &Value, out: &mut Vec<(String, String)>) {
    match value {
        Value::Null => {}
        Value::Object(map) => {
            for (k, v) in map {
                brackets(&format!("{prefix}[{k}]"), v, out);
            }
        }
        Value::Array(items) => {
            let flat = items
                .iter()
                .all(|v| scalar_text(v).is_some() || v.is_null());
            for (i, item) in items.iter().enumerate() {
                if flat {
                    brackets(&format!("{prefix}[]"), item, out);
                } else {
                    brackets(&format!("{prefix}[{i}]"), item, out);
                }
            }
        }
        scalar => out.push((prefix.to_string(), text_or_json(scalar))),
    }
}

/// An `application/x-www-form-urlencoded` body from a JSON object.
pub(crate) fn form_body(map: &Map<String, Value>) -> Vec<u8> {
    let mut pairs = Vec::new();
    for (k, v) in map {
        brackets(k, v, &mut pairs);
    }
    let mut serializer = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in &pairs {
        serializer.append_pair(k, v);
    }
    serializer.finish().into_bytes()
}
