//! Bytes to a JSON value, and the OpenAPI version gate.
//!
//! JSON when the first non-space byte is `{`, YAML otherwise (YAML 1.2 core booleans, via
//! `serde-saphyr` with explicit budgets: alias replay, anchors, nesting depth, nodes and
//! scalar bytes are all bounded, so a hostile document — an alias bomb — is refused
//! before it can grow memory; the request body itself is capped by the API layer).

use serde_json::Value;

use super::error::ImportError;

/// Upper bounds on what one YAML document may make the parser do. A real OpenAPI
/// document (GitHub's: ~8 MB of JSON) stays well inside; an alias bomb expands past
/// `max_total_replayed_events` within a few kilobytes of input and is refused.
fn yaml_options() -> serde_saphyr::Options {
    serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_depth: 64,
            max_nodes: 2_000_000,
            max_events: 4_000_000,
            max_aliases: 10_000,
            max_anchors: 10_000,
            max_total_scalar_bytes: 32 * 1024 * 1024,
        },
        alias_limits: serde_saphyr::alias_limits! {
            max_total_replayed_events: 200_000,
            max_replay_stack_depth: 16,
        },
        strict_booleans: true,
    }
}

fn from_yaml(bytes: &[u8]) -> Result<Value, String> {
    serde_saphyr::from_slice_with_options(bytes, yaml_options()).map_err(|e| e.to_string())
}

/// Which OpenAPI line the document belongs to; 3.1 schemas are JSON Schema 2020-12.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Version {
    V30,
    V31,
}

pub(crate) fn parse(document: &[u8]) -> Result<Value, ImportError> {
    let bytes = document.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(document);
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    let value: Value = if first == Some(&b'{') {
        // A YAML flow mapping (`{openapi: 3.1.0, …}`) starts with `{` too; the JSON
        // error is the one to report, since that is what such a document usually is.
        match serde_json::from_slice(bytes) {
            Ok(value) => value,
            Err(json) => from_yaml(bytes).map_err(|_| ImportError::Syntax {
                format: "JSON",
                message: json.to_string(),
            })?,
        }
    } else {
        from_yaml(bytes).map_err(|message| ImportError::Syntax {
            format: "YAML",
            message,
        })?
    };
    if !value.is_object() {
        return Err(ImportError::Syntax {
            format: if first == Some(&b'{') { "JSON" } else { "YAML" },
            message: "the document must be a mapping with an `openapi` field".into(),
        });
    }
    Ok(value)
}

pub(crate) fn version(doc: &Value) -> Result<Version, ImportError> {
    if let Some(swagger) = doc.get("swagger") {
        return Err(ImportError::UnsupportedVersion(format!(
            "Swagger {} documents are not supported; convert the document to OpenAPI 3.0 or 3.1 first",
            scalar_text(swagger)
        )));
    }
    let Some(raw) = doc.get("openapi") else {
        return Err(ImportError::UnsupportedVersion(
            "the document has no `openapi` field; an OpenAPI 3.0.x or 3.1.x document is expected"
                .into(),
        ));
    };
    // `openapi: 3.1` unquoted in YAML is a number; accept it for what it obviously means.
    let text = scalar_text(raw);
    let mut parts = text.split('.');
    match (parts.next(), parts.next()) {
        (Some("3"), Some("0")) => Ok(Version::V30),
        (Some("3"), Some("1")) => Ok(Version::V31),
        _ => Err(ImportError::UnsupportedVersion(format!(
            "openapi version '{text}' is not supported; OpenAPI 3.0.x and 3.1.x are"
        ))),
    }
}

fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Number(n) if n.as_f64() == Some(3.0) => "3.0".into(),
        other => other.to_string(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic
mod tests {
    use super::*;

    #[test]
    fn detects_json_and_yaml() {
        let json = parse(b"  {\"openapi\": \"3.0.3\"}").unwrap();
        assert_eq!(version(&json).unwrap(), Version::V30);
        let yaml = parse(b"openapi: 3.1.0\npaths: {}\n").unwrap();
        assert_eq!(version(&yaml).unwrap(), Version::V31);
        let bom = parse(b"\xEF\xBB\xBFopenapi: '3.0.0'\n").unwrap();
        assert_eq!(version(&bom).unwrap(), Version::V30);
        let flow = parse(b"{openapi: 3.0.1, paths: {}}").unwrap();
        assert_eq!(version(&flow).unwrap(), Version::V30);
        let unquoted = parse(b"openapi: 3.1\n").unwrap();
        assert_eq!(version(&unquoted).unwrap(), Version::V31);
    }

    #[test]
    fn rejects_bad_syntax_and_versions() {
        let err = parse(b"{\"openapi\": ").unwrap_err();
        assert!(
            err.to_string().starts_with("document is not valid JSON"),
            "{err}"
        );
        let err = parse(b"openapi: 3.0.0\npaths: [a,\n").unwrap_err();
        assert!(
            err.to_string().starts_with("document is not valid YAML"),
            "{err}"
        );
        assert!(parse(b"").is_err());
        assert!(parse(b"- a\n- b\n").is_err());

        let swagger = parse(b"swagger: '2.0'\n").unwrap();
        let err = version(&swagger).unwrap_err().to_string();
        assert!(err.contains("Swagger 2.0"), "{err}");
        let none = parse(b"info: {}\n").unwrap();
        assert!(version(&none)
            .unwrap_err()
            .to_string()
            .contains("no `openapi`"));
        let newer = parse(b"openapi: 4.0.0\n").unwrap();
        assert!(version(&newer).unwrap_err().to_string().contains("'4.0.0'"));
    }

    /// A "billion laughs" document of a few hundred bytes, each level nine
    /// aliases of the one before (9^9 ≈ 387 million nodes if expanded), is refused by the
    /// alias budget instead of growing the process.
    #[test]
    fn nested_alias_bomb_is_refused() {
        let mut doc = String::from("openapi: 3.0.0\na0: &a0 [\"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\"]\n");
        for i in 1..10 {
            let p = i - 1;
            doc.push_str(&format!(
                "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
            ));
        }
        doc.push_str("paths: {}\n");
        assert!(doc.len() < 1024);
        let err = parse(doc.as_bytes()).unwrap_err().to_string();
        assert!(err.starts_with("document is not valid YAML"), "{err}");
        // a modest, legitimate use of anchors still parses
        let ok = parse(b"openapi: 3.0.0\nx: &p {type: string}\ny: *p\nz: *p\n").unwrap();
        assert_eq!(ok["z"]["type"], "string");
    }
}
