//! An operation's parameters: references followed, path-level and
//! operation-level lists merged, the ones we must not import dropped, and each
//! turned into the schema of one top-level argument.

use serde_json::{Map, Value};

use super::error::{ImportError, Loc};
use super::refs;
use super::schema::Inliner;

/// Header parameters that are never imported, compared case-insensitively.
/// `Authorization`, `Cookie` and `Host` carry credentials or routing that belong
/// to the provider's configuration, never to a model's arguments; OpenAPI itself
/// says `Accept` and `Content-Type` header parameters are to be ignored (the
/// media types say what they are).
const DROPPED_HEADERS: &[&str] = &["authorization", "cookie", "host", "accept", "content-type"];

/// Where a parameter goes in the HTTP request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum In {
    Path,
    Query,
    Header,
}

impl In {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            In::Path => "path",
            In::Query => "query",
            In::Header => "header",
        }
    }
}

/// One parameter, ready to become an argument.
#[derive(Debug)]
pub(crate) struct Param {
    /// The name in the HTTP request.
    pub(crate) name: String,
    pub(crate) location: In,
    pub(crate) required: bool,
    /// The argument's schema, with `x-loopgate-in` (and style hints) already in.
    pub(crate) schema: Value,
}

/// A declared parameter before merging; cookies are still here, to be dropped.
struct Declared {
    name: String,
    location: Option<In>,
    required: bool,
    schema: Value,
}

impl Declared {
    fn same_slot(&self, other: &Declared) -> bool {
        self.location == other.location
            && match self.location {
                // Header names are case-insensitive.
                Some(In::Header) => self.name.eq_ignore_ascii_case(&other.name),
                _ => self.name == other.name,
            }
    }
}

/// The operation's parameters: path parameters in the order of the path
/// template, then query, then header parameters, each in document order.
pub(crate) fn collect<'d>(
    doc: &'d Value,
    inliner: &mut Inliner<'d>,
    path: &str,
    path_level: (Option<&'d Value>, &Loc<'_>),
    op_level: (Option<&'d Value>, &Loc<'_>),
) -> Result<Vec<Param>, ImportError> {
    let mut merged: Vec<Declared> = Vec::new();
    for (list, at) in [path_level, op_level] {
        for declared in declared_list(doc, inliner, list, at)? {
            match merged.iter_mut().find(|m| m.same_slot(&declared)) {
                // Operation-level wins over path-level (and a later duplicate over an
                // earlier one, which a valid document does not have).
                Some(slot) => *slot = declared,
                None => merged.push(declared),
            }
        }
    }

    let template = template_names(path);
    let mut out = Vec::new();
    for name in &template {
        let declared = merged
            .iter()
            .position(|d| d.location == Some(In::Path) && d.name == *name)
            .map(|i| merged.remove(i));
        // A placeholder the document forgot to declare still has to be filled in.
        let schema = declared.map_or_else(|| serde_json::json!({"type": "string"}), |d| d.schema);
        out.push(Param {
            name: name.clone(),
            location: In::Path,
            required: true,
            schema,
        });
    }
    for location in [In::Query, In::Header] {
        for d in merged.iter().filter(|d| d.location == Some(location)) {
            if location == In::Header
                && DROPPED_HEADERS
                    .iter()
                    .any(|h| d.name.eq_ignore_ascii_case(h))
            {
                continue;
            }
            out.push(Param {
                name: d.name.clone(),
                location,
                required: d.required,
                schema: d.schema.clone(),
            });
        }
    }
    // Left in `merged`: cookie parameters (see `declared`) and path parameters the
    // template does not mention, which could not be sent anywhere.
    Ok(out)
}

/// The `{name}` placeholders of a path template, in order, without duplicates.
pub(crate) fn template_names(path: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut rest = path;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else { break };
        let name = &after[..close];
        if !name.is_empty() && !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
        rest = &after[close + 1..];
    }
    names
}

fn declared_list<'d>(
    doc: &'d Value,
    inliner: &mut Inliner<'d>,
    list: Option<&'d Value>,
    at: &Loc<'_>,
) -> Result<Vec<Declared>, ImportError> {
    let Some(list) = list else {
        return Ok(Vec::new());
    };
    let Value::Array(items) = list else {
        return Err(ImportError::invalid(at, "`parameters` must be a list"));
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        out.push(declared(doc, inliner, item, &at.index(i))?);
    }
    Ok(out)
}

fn declared<'d>(
    doc: &'d Value,
    inliner: &mut Inliner<'d>,
    item: &'d Value,
    at: &Loc<'_>,
) -> Result<Declared, ImportError> {
    let (def, via) = refs::follow(doc, item, at)?;
    let via = via
        .map(|r| format!(" (via $ref '{r}')"))
        .unwrap_or_default();
    let Value::Object(def) = def else {
        return Err(ImportError::invalid(
            at,
            format!("a parameter must be an object{via}"),
        ));
    };
    let name = match def.get("name") {
        Some(Value::String(name)) if !name.is_empty() => name.clone(),
        _ => {
            return Err(ImportError::invalid(
                at,
                format!("parameter has no `name`{via}"),
            ))
        }
    };
    let location = match def.get("in").and_then(Value::as_str) {
        Some("path") => Some(In::Path),
        Some("query") => Some(In::Query),
        Some("header") => Some(In::Header),
        // Cookie parameters are dropped: loopgate keeps no cookie jar, a cookie is
        // session state (usually a credential) that a model must not forge, and
        // a tool's `input_schema` (path, query and header parameters, a JSON body:
        // `Tool` in `openapi/openapi.json`) has no place for one.
        Some("cookie") => None,
        Some(other) => {
            return Err(ImportError::invalid(
                at,
                format!("parameter '{name}' has unsupported `in: {other}`{via}; expected path, query, header or cookie"),
            ))
        }
        None => {
            return Err(ImportError::invalid(
                at,
                format!("parameter '{name}' has no `in`{via}"),
            ))
        }
    };
    let required = location == Some(In::Path) || def.get("required") == Some(&Value::Bool(true));
    let schema = match location {
        Some(location) => argument_schema(inliner, def, item, location, at)?,
        None => Value::Null,
    };
    Ok(Declared {
        name,
        location,
        required,
        schema,
    })
}

/// The argument schema of a parameter: its `schema` (or the schema of its first
/// `content` entry), the parameter's description and deprecation copied in, and
/// where it goes in the request.
fn argument_schema<'d>(
    inliner: &mut Inliner<'d>,
    def: &'d Map<String, Value>,
    reference: &Value,
    location: In,
    at: &Loc<'_>,
) -> Result<Value, ImportError> {
    let mut content_type = None;
    let schema = if let Some(schema) = def.get("schema") {
        inliner.inline(schema, &at.key("schema"), false)?
    } else if let Some((media, entry)) = def
        .get("content")
        .and_then(Value::as_object)
        .and_then(|c| c.iter().next())
    {
        content_type = Some(media.clone());
        match entry.get("schema") {
            Some(schema) => {
                inliner.inline(schema, &at.key("content").key(media).key("schema"), false)?
            }
            None => Value::Object(Map::new()),
        }
    } else {
        serde_json::json!({"type": "string"})
    };
    let mut out = match schema {
        Value::Object(map) => map,
        // A boolean schema (`true`) accepts anything.
        _ => Map::new(),
    };
    // A 3.1 Reference Object may override the description of what it points at.
    let description = reference
        .get("description")
        .filter(|_| refs::ref_of(reference).is_some())
        .or_else(|| def.get("description"));
    if let Some(Value::String(text)) = description {
        if !text.trim().is_empty() {
            out.insert("description".into(), Value::String(text.trim().to_string()));
        }
    }
    if def.get("deprecated") == Some(&Value::Bool(true)) {
        out.insert("deprecated".into(), Value::Bool(true));
    }
    if let Some(example) = def.get("example") {
        if !out.contains_key("example") && !out.contains_key("examples") {
            out.insert("examples".into(), Value::Array(vec![example.clone()]));
        }
    }
    out.insert("x-loopgate-in".into(), location.as_str().into());
    for (key, ext) in [
        ("style", "x-loopgate-style"),
        ("explode", "x-loopgate-explode"),
    ] {
        if let Some(value) = def.get(key) {
            out.insert(ext.into(), value.clone());
        }
    }
    if let Some(media) = content_type {
        out.insert("x-loopgate-content-type".into(), Value::String(media));
    }
    Ok(Value::Object(out))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic
#[path = "params_tests.rs"]
mod tests;
