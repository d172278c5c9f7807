//! One operation to one tool: its parameters and request body assembled into the
//! tool's `input_schema`, its name and description chosen.

use serde_json::{json, Map, Value};

use super::error::{ImportError, Loc};
use super::naming::{self, UniqueNames};
use super::params::{self, Param};
use super::refs;
use super::schema::{Inliner, NESTING_LEVELS};
use super::ImportedTool;

/// Where one operation sits in the document.
pub(crate) struct Site<'d, 'l> {
    pub(crate) path: &'d str,
    pub(crate) method: &'d str,
    pub(crate) item: &'d Map<String, Value>,
    pub(crate) item_loc: &'l Loc<'l>,
}

/// One tool from one operation. `budget` is the number of schema nodes its
/// `input_schema` may take before references are cut (see [`super::schema`]).
pub(crate) fn build<'d>(
    doc: &'d Value,
    site: &Site<'d, '_>,
    operation: &'d Value,
    budget: usize,
    tool_names: &mut UniqueNames,
) -> Result<ImportedTool, ImportError> {
    let at = site.item_loc.key(site.method);
    let Value::Object(op) = operation else {
        return Err(ImportError::invalid(&at, "an operation must be an object"));
    };
    let mut inputs = (Vec::new(), None);
    let mut reached = usize::MAX;
    for &max_nesting in NESTING_LEVELS {
        if max_nesting >= reached {
            continue;
        }
        let mut inliner = Inliner::new(doc, max_nesting, budget);
        inputs = inputs_of(doc, &mut inliner, site, op, &at)?;
        if !inliner.exceeded() {
            break;
        }
        reached = inliner.deepest();
    }
    let (params, body) = inputs;
    let method = site.method.to_ascii_uppercase();
    // The path item's summary/description describe all its operations; use them
    // only when the operation says nothing about itself.
    let own = ["summary", "description"].iter().any(|k| {
        op.get(*k)
            .and_then(Value::as_str)
            .is_some_and(|t| !t.trim().is_empty())
    });
    let source = if own { op } else { site.item };
    let text = |key: &str| source.get(key).and_then(Value::as_str);
    let deprecated = op.get("deprecated") == Some(&Value::Bool(true));
    let operation_id = op.get("operationId").and_then(Value::as_str);
    let base = naming::base_tool_name(operation_id, &method, site.path);
    Ok(ImportedTool {
        name: tool_names.claim(&base),
        description: naming::description(
            text("summary"),
            text("description"),
            &method,
            site.path,
            deprecated,
        ),
        method,
        path: site.path.to_string(),
        input_schema: with_search_doc(
            with_evidence(input_schema(params, body), doc, op),
            doc,
            op,
            text("summary"),
        ),
    })
}

/// P12: the operation's own paging evidence on the tool — its `x-loopgate-pagination`
/// hint as written, and what its success response schema says (`x-loopgate-response`).
fn with_evidence(mut schema: Value, doc: &Value, op: &Map<String, Value>) -> Value {
    if let Value::Object(root) = &mut schema {
        if let Some(hint) = op.get(loopgate_engine::analysis::PAGINATION_HINT) {
            root.insert(
                loopgate_engine::analysis::PAGINATION_HINT.into(),
                hint.clone(),
            );
        }
        if let Some(found) = super::responses::evidence(doc, op) {
            root.insert(
                loopgate_engine::analysis::signals::RESPONSE_HINT.into(),
                found,
            );
        }
        // G7: where the rows live, so a body that leaves an empty list out is zero rows
        if let Some(path) = super::responses::items_path(doc, op) {
            root.insert(
                loopgate_engine::analysis::signals::ITEMS_HINT.into(),
                json!(path),
            );
        }
    }
    schema
}

/// D6: what search reads of the operation besides the tool (summary, tags, response
/// fields), as `x-loopgate-doc`.
fn with_search_doc(
    mut schema: Value,
    doc: &Value,
    op: &Map<String, Value>,
    summary: Option<&str>,
) -> Value {
    if let (Value::Object(root), Some(extras)) =
        (&mut schema, super::search_doc::extras(doc, op, summary))
    {
        root.insert(crate::discovery::DOC_KEY.into(), extras);
    }
    schema
}

/// The operation's parameters and request body, schemas inlined by `inliner`.
fn inputs_of<'d>(
    doc: &'d Value,
    inliner: &mut Inliner<'d>,
    site: &Site<'d, '_>,
    op: &'d Map<String, Value>,
    at: &Loc<'_>,
) -> Result<(Vec<Param>, Option<Body>), ImportError> {
    let params = params::collect(
        doc,
        inliner,
        site.path,
        (
            site.item.get("parameters"),
            &site.item_loc.key("parameters"),
        ),
        (op.get("parameters"), &at.key("parameters")),
    )?;
    let body = match op.get("requestBody") {
        Some(raw) => request_body(doc, inliner, raw, &at.key("requestBody"))?,
        None => None,
    };
    Ok((params, body))
}

/// A chosen request body: its argument schema and whether it is required.
struct Body {
    schema: Value,
    required: bool,
}

fn input_schema(params: Vec<Param>, body: Option<Body>) -> Value {
    let mut keys = UniqueNames::new();
    if body.is_some() {
        keys.claim("body");
    }
    let mut properties = Map::new();
    let mut required = Vec::new();
    for param in params {
        let location = param.location.as_str();
        let base = naming::property_name(&param.name).unwrap_or_else(|| location.to_string());
        // First come, first served; path parameters come first, so they keep their
        // names and a query/header parameter of the same name becomes `query_<name>`.
        let key = if keys.is_taken(&base) {
            let prefixed = naming::property_name(&format!("{location}_{base}"))
                .unwrap_or_else(|| location.to_string());
            keys.claim(&prefixed)
        } else {
            keys.claim(&base)
        };
        let mut schema = param.schema;
        if key != param.name {
            if let Value::Object(map) = &mut schema {
                map.insert("x-loopgate-name".into(), Value::String(param.name));
            }
        }
        if param.required {
            required.push(Value::String(key.clone()));
        }
        properties.insert(key, schema);
    }
    if let Some(body) = body {
        if body.required {
            required.push(Value::String("body".into()));
        }
        properties.insert("body".into(), body.schema);
    }
    json!({"type": "object", "properties": properties, "required": required})
}

fn is_json(media_type: &str) -> bool {
    let essence = media_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    essence == "application/json" || essence.ends_with("+json")
}

fn request_body<'d>(
    doc: &'d Value,
    inliner: &mut Inliner<'d>,
    raw: &'d Value,
    at: &Loc<'_>,
) -> Result<Option<Body>, ImportError> {
    let (def, _) = refs::follow(doc, raw, at)?;
    let Value::Object(def) = def else {
        return Err(ImportError::invalid(at, "a request body must be an object"));
    };
    let Some(Value::Object(content)) = def.get("content") else {
        return Ok(None);
    };
    let chosen = content
        .iter()
        .find(|(media, _)| is_json(media))
        .or_else(|| {
            content
                .iter()
                .find(|(_, entry)| entry.get("schema").is_some())
        })
        .or_else(|| content.iter().next());
    let Some((media, entry)) = chosen else {
        return Ok(None);
    };
    let mut schema = match entry.get("schema") {
        Some(schema) => {
            inliner.inline(schema, &at.key("content").key(media).key("schema"), true)?
        }
        None if is_json(media) => json!({}),
        None => json!({"type": "string"}),
    };
    if accepts_nothing(&schema) {
        // e.g. a GET that declares an empty form body; an argument for it is noise.
        return Ok(None);
    }
    let Value::Object(map) = &mut schema else {
        // A boolean schema: `true` takes anything.
        return Ok(Some(Body {
            schema: json!({"x-loopgate-in": "body", "x-loopgate-content-type": media}),
            required: def.get("required") == Some(&Value::Bool(true)),
        }));
    };
    let description = raw
        .get("description")
        .filter(|_| refs::ref_of(raw).is_some())
        .or_else(|| def.get("description"))
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|d| !d.is_empty());
    match description {
        Some(text) => {
            map.insert("description".into(), text.into());
        }
        None if !map.contains_key("description") => {
            map.insert(
                "description".into(),
                format!("The request body ({media}).").into(),
            );
        }
        None => {}
    }
    map.insert("x-loopgate-in".into(), "body".into());
    map.insert("x-loopgate-content-type".into(), media.as_str().into());
    Ok(Some(Body {
        schema,
        required: def.get("required") == Some(&Value::Bool(true)),
    }))
}

/// An object schema with no properties that forbids additional ones.
fn accepts_nothing(schema: &Value) -> bool {
    let no_properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .is_none_or(Map::is_empty);
    schema.get("additionalProperties") == Some(&Value::Bool(false))
        && no_properties
        && ["allOf", "anyOf", "oneOf", "patternProperties"]
            .iter()
            .all(|k| schema.get(k).is_none())
}
