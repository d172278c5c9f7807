//! Bytes to a JSON value, and the OpenAPI version gate.
//!
//! JSON when the first non-space byte is `{`, YAML otherwise (YAML 1.2 via
//! `serde_yaml`, which also bounds alias expansion and nesting depth, so a hostile
//! document cannot blow up memory or the stack while parsing).

use serde_json::Value;

use super::error::ImportError;

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
            Err(json) => serde_yaml::from_slice(bytes).map_err(|_| ImportError::Syntax {
                format: "JSON",
                message: json.to_string(),
            })?,
        }
    } else {
        serde_yaml::from_slice(bytes).map_err(|e| ImportError::Syntax {
            format: "YAML",
            message: e.to_string(),
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
}
