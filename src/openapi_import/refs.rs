//! Local `$ref` handling: JSON Pointer lookup, following reference chains, and a
//! whole-document check that every `$ref` is local and resolves.
//!
//! Only references starting with `#` are followed, as JSON Pointers (RFC 6901:
//! `~1` is `/`, `~0` is `~`; percent-escapes of the URI fragment are decoded when
//! the raw token does not match). Anything else is an error naming the reference;
//! nothing is ever fetched. The whole-document check runs before the import so a
//! broken reference fails the import even where no tool would have used it (a
//! response schema, an unused component): a document is either sound or rejected.

use serde_json::Value;

use super::error::{ImportError, Loc};
use super::json_pointer::pointer_tokens;

/// Reference chains longer than this are treated as cycles.
const MAX_CHAIN: usize = 32;

/// Looks a local reference up in the document.
pub(crate) fn lookup<'d>(doc: &'d Value, reference: &str) -> Option<&'d Value> {
    let mut cur = doc;
    for token in pointer_tokens(reference)? {
        cur = step(cur, &token).or_else(|| {
            let decoded = percent_decode(&token)?;
            step(cur, &decoded)
        })?;
    }
    Some(cur)
}

fn step<'d>(value: &'d Value, token: &str) -> Option<&'d Value> {
    match value {
        Value::Object(map) => map.get(token),
        Value::Array(items) => items.get(token.parse::<usize>().ok()?),
        _ => None,
    }
}

fn percent_decode(token: &str) -> Option<String> {
    if !token.contains('%') {
        return None;
    }
    let bytes = token.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = token.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The `$ref` string of a Reference Object, if `value` is one.
pub(crate) fn ref_of(value: &Value) -> Option<&str> {
    value.get("$ref").and_then(Value::as_str)
}

/// Follows a chain of references (a parameter pointing at a component that is itself
/// a reference, …) to the first value that is not a reference. Returns that value and
/// the first reference followed, if any (for messages).
pub(crate) fn follow<'d>(
    doc: &'d Value,
    value: &'d Value,
    at: &Loc<'_>,
) -> Result<(&'d Value, Option<&'d str>), ImportError> {
    let first = ref_of(value);
    let mut cur = value;
    let mut seen: Vec<&str> = Vec::new();
    while let Some(reference) = ref_of(cur) {
        if seen.contains(&reference) || seen.len() >= MAX_CHAIN {
            return Err(ImportError::RefCycle {
                at: at.to_string(),
                reference: reference.to_string(),
            });
        }
        seen.push(reference);
        cur = resolve(doc, reference, at)?;
    }
    Ok((cur, first))
}

/// One hop: a remote reference or a missing target is an error at `at`.
pub(crate) fn resolve<'d>(
    doc: &'d Value,
    reference: &str,
    at: &Loc<'_>,
) -> Result<&'d Value, ImportError> {
    if !reference.starts_with('#') {
        return Err(ImportError::RemoteRef {
            at: at.to_string(),
            reference: reference.to_string(),
        });
    }
    lookup(doc, reference).ok_or_else(|| ImportError::DanglingRef {
        at: at.to_string(),
        reference: reference.to_string(),
    })
}

/// Keys whose values are literal data (examples, defaults, enumerations) or vendor
/// extensions: a `{"$ref": …}` in there is not a reference.
fn is_literal_data(key: &str) -> bool {
    matches!(key, "example" | "examples" | "default" | "enum" | "const") || key.starts_with("x-")
}

/// Checks every `$ref` in the document: local, and resolving.
pub(crate) fn check_all(doc: &Value) -> Result<(), ImportError> {
    check(doc, doc, &Loc::ROOT)
}

fn check(doc: &Value, value: &Value, at: &Loc<'_>) -> Result<(), ImportError> {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(reference)) = map.get("$ref") {
                resolve(doc, reference, at)?;
            }
            for (key, child) in map {
                if !is_literal_data(key) {
                    check(doc, child, &at.key(key))?;
                }
            }
            Ok(())
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                check(doc, child, &at.index(i))?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pointers_unescape_and_decode() {
        let doc = json!({
            "paths": {"/users/{id}": {"get": {"ok": 1}}},
            "components": {"schemas": {"a~b": {"x": 1}, "with space": {"y": 2}}},
            "list": [10, 20]
        });
        assert_eq!(
            lookup(&doc, "#/paths/~1users~1{id}/get/ok"),
            Some(&json!(1))
        );
        assert_eq!(
            lookup(&doc, "#/components/schemas/a~0b"),
            Some(&json!({"x": 1}))
        );
        assert_eq!(
            lookup(&doc, "#/components/schemas/with%20space/y"),
            Some(&json!(2))
        );
        assert_eq!(lookup(&doc, "#/list/1"), Some(&json!(20)));
        assert_eq!(lookup(&doc, "#"), Some(&doc));
        assert_eq!(lookup(&doc, "#/list/2"), None);
        assert_eq!(lookup(&doc, "other.yaml#/x"), None);
    }

    #[test]
    fn follows_chains_and_detects_cycles() {
        let doc = json!({"components": {"parameters": {
            "A": {"$ref": "#/components/parameters/B"},
            "B": {"name": "b", "in": "query"},
            "C": {"$ref": "#/components/parameters/D"},
            "D": {"$ref": "#/components/parameters/C"}
        }}});
        let start = json!({"$ref": "#/components/parameters/A"});
        let (target, first) = follow(&doc, &start, &Loc::ROOT).unwrap();
        assert_eq!(target["name"], "b");
        assert_eq!(first, Some("#/components/parameters/A"));
        let looping = json!({"$ref": "#/components/parameters/C"});
        let err = follow(&doc, &looping, &Loc::ROOT).unwrap_err();
        assert!(matches!(err, ImportError::RefCycle { .. }), "{err}");
    }

    #[test]
    fn check_all_reports_remote_and_dangling_refs_with_location() {
        let doc = json!({"paths": {"/a": {"get": {"responses": {"200": {
            "content": {"application/json": {"schema": {"$ref": "https://x.test/s.json"}}}
        }}}}}});
        let err = check_all(&doc).unwrap_err();
        assert_eq!(
            err.to_string(),
            "paths./a.get.responses.200.content.application/json.schema: $ref 'https://x.test/s.json' points outside this document; only local '#/…' references are supported and nothing is fetched"
        );
        let doc = json!({"components": {"schemas": {"A": {"properties": {
            "b": {"$ref": "#/components/schemas/B"}
        }}}}});
        let err = check_all(&doc).unwrap_err();
        assert_eq!(
            err.to_string(),
            "components.schemas.A.properties.b: $ref '#/components/schemas/B' does not resolve"
        );
        let literal = json!({"components": {"examples": {"E": {"value": {"$ref": "nope"}}}}});
        assert!(check_all(&literal).is_ok());
    }
}
