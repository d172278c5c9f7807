//! D6: what search reads of an operation beyond its tool's name, description and input
//! schema, kept as `x-loopgate-doc` at the input schema's root ([`DOC_KEY`]): the
//! operation's summary, its tags, and its success response's top-level field names (an
//! array response's item fields; an envelope's item fields too). Bounded: at most
//! [`MAX_NODES`] schema nodes read per operation, the lists cut by `discovery::document`.

use serde_json::{Map, Value};

use super::responses;
use crate::discovery::document::{openapi_extras, MAX_FIELDS, MAX_TAGS};

/// Schema nodes one operation's response field names may cost.
const MAX_NODES: usize = 200;

/// The `x-loopgate-doc` value of operation `op` (`summary` as the tool's description
/// used it), or `None` when it has nothing to add.
pub(crate) fn extras(doc: &Value, op: &Map<String, Value>, summary: Option<&str>) -> Option<Value> {
    let tags: Vec<String> = op
        .get("tags")
        .and_then(Value::as_array)
        .map(|ts| {
            ts.iter()
                .take(MAX_TAGS)
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let fields = response_fields(doc, op);
    let out = openapi_extras(summary, &tags, &fields);
    (out.as_object().is_some_and(|m| !m.is_empty())).then_some(out)
}

/// The success response's top-level field names; for an array, its items'; for an
/// object holding an array of objects, the object's and then the items' (so an envelope
/// `{data: [{id, title}]}` says `data id title`).
fn response_fields(doc: &Value, op: &Map<String, Value>) -> Vec<String> {
    let Some(schema) = responses::success_schema(doc, op) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut budget = MAX_NODES;
    let mut arrays = Vec::new();
    if let Some(items) = array_items(doc, schema) {
        fields_of(doc, items, &mut out, &mut Vec::new(), &mut budget);
    } else {
        fields_of(doc, schema, &mut out, &mut arrays, &mut budget);
        for items in arrays.into_iter().take(2) {
            fields_of(doc, items, &mut out, &mut Vec::new(), &mut budget);
        }
    }
    out.dedup();
    out.truncate(MAX_FIELDS);
    out
}

fn array_items<'d>(doc: &'d Value, schema: &'d Value) -> Option<&'d Value> {
    let is_array = schema.get("type").and_then(Value::as_str) == Some("array");
    is_array
        .then(|| schema.get("items"))
        .flatten()
        .and_then(|i| responses::deref(doc, i))
}

/// Property names of an object schema (`allOf`/`anyOf`/`oneOf` merged), and the item
/// schemas of its array properties into `arrays`.
fn fields_of<'d>(
    doc: &'d Value,
    schema: &'d Value,
    out: &mut Vec<String>,
    arrays: &mut Vec<&'d Value>,
    budget: &mut usize,
) {
    if *budget == 0 || out.len() >= MAX_FIELDS {
        return;
    }
    *budget -= 1;
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(parts) = schema.get(key).and_then(Value::as_array) {
            for part in parts.iter().take(8) {
                if let Some(part) = responses::deref(doc, part) {
                    fields_of(doc, part, out, arrays, budget);
                }
            }
        }
    }
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, prop) in props {
        if out.len() >= MAX_FIELDS {
            return;
        }
        if !out.contains(name) {
            out.push(name.clone());
        }
        if let Some(items) = responses::deref(doc, prop).and_then(|p| array_items(doc, p)) {
            if items.get("properties").is_some() || items.get("allOf").is_some() {
                arrays.push(items);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic
mod tests {
    use super::*;
    use serde_json::json;

    fn op(schema: Value) -> (Value, Map<String, Value>) {
        let doc = json!({"components": {"schemas": {
            "Issue": {"type": "object", "properties": {"id": {}, "title": {}, "state": {}}}
        }}});
        let op = json!({"tags": ["issues", 7], "responses": {"200": {"content": {"application/json": {"schema": schema}}}}});
        (doc, op.as_object().unwrap().clone())
    }

    #[test]
    fn d6_the_response_says_its_fields() {
        let (doc, o) =
            op(json!({"type": "array", "items": {"$ref": "#/components/schemas/Issue"}}));
        let x = extras(&doc, &o, Some("List issues")).unwrap();
        assert_eq!(x["summary"], "List issues");
        assert_eq!(x["tags"], json!(["issues"]));
        assert_eq!(x["responseFields"], json!(["id", "title", "state"]));

        let (doc, o) = op(json!({"type": "object", "properties": {
            "total_count": {"type": "integer"},
            "items": {"type": "array", "items": {"$ref": "#/components/schemas/Issue"}}}}));
        let x = extras(&doc, &o, None).unwrap();
        assert!(x.get("summary").is_none());
        assert_eq!(
            x["responseFields"],
            json!(["total_count", "items", "id", "title", "state"])
        );
    }

    #[test]
    fn d6_an_operation_with_nothing_to_add_has_no_extras() {
        let doc = json!({});
        let o = json!({"responses": {"204": {"description": "gone"}}});
        assert_eq!(extras(&doc, o.as_object().unwrap(), Some("  ")), None);
    }
}
