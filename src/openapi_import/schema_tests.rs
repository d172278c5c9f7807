//! Unit tests of schema inlining.

use serde_json::{json, Value};

use super::*;

fn inline(doc: &Value, schema: &Value, request: bool) -> Value {
    // The inliner borrows from the document; tests pass the schema separately,
    // so put it in a document of its own.
    let mut doc = doc.clone();
    doc["__test"] = schema.clone();
    let mut inliner = Inliner::new(&doc, NESTING_LEVELS[0], 5_000);
    inliner
        .inline(&doc["__test"], &Loc::ROOT.key("__test"), request)
        .unwrap()
}

#[test]
fn inlines_nested_refs() {
    let doc = json!({"components": {"schemas": {
        "Address": {"type": "object", "properties": {"city": {"type": "string"}}},
        "Shipping": {"type": "object", "properties": {"address": {"$ref": "#/components/schemas/Address"}}}
    }}});
    let out = inline(
        &doc,
        &json!({"$ref": "#/components/schemas/Shipping"}),
        false,
    );
    assert_eq!(
        out,
        json!({"type": "object", "properties": {"address": {"type": "object", "properties": {"city": {"type": "string"}}}}})
    );
}

#[test]
fn recursion_stops_with_a_stub() {
    let doc = json!({"components": {"schemas": {"Node": {
        "type": "object",
        "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}}
    }}}});
    let out = inline(&doc, &json!({"$ref": "#/components/schemas/Node"}), false);
    let level2 = &out["properties"]["children"]["items"];
    assert_eq!(level2["properties"]["name"], json!({"type": "string"}));
    let level3 = &level2["properties"]["children"]["items"];
    assert_eq!(
        level3,
        &json!({"type": "object", "description": "(recursive reference to 'Node'; not expanded further)"})
    );
}

#[test]
fn explosive_documents_stay_bounded() {
    // Every schema refers to the next one twice: 2^30 nodes if fully expanded.
    let mut schemas = serde_json::Map::new();
    for i in 0..30 {
        let next = format!("#/components/schemas/S{}", i + 1);
        schemas.insert(
            format!("S{i}"),
            json!({"type": "object", "properties": {"a": {"$ref": next}, "b": {"$ref": next}}}),
        );
    }
    schemas.insert("S30".into(), json!({"type": "string"}));
    let doc = json!({"components": {"schemas": schemas}});
    let out = inline(&doc, &json!({"$ref": "#/components/schemas/S0"}), false);
    let size = out.to_string().len();
    assert!(size < 2_000_000, "{size}");
    assert!(out.to_string().contains("not expanded: schema too large"));
}

#[test]
fn ref_siblings_merge() {
    let doc = json!({"components": {"schemas": {
        "Id": {"type": "string", "description": "An id.", "readOnly": true},
        "Obj": {"type": "object", "properties": {"a": {"type": "string"}}}
    }}});
    let described = inline(
        &doc,
        &json!({"$ref": "#/components/schemas/Id", "description": "The owner's id."}),
        false,
    );
    assert_eq!(
        described,
        json!({"type": "string", "description": "The owner's id.", "readOnly": true})
    );
    let added = inline(
        &doc,
        &json!({"$ref": "#/components/schemas/Id", "maxLength": 5}),
        false,
    );
    assert_eq!(added["maxLength"], 5);
    let conflicting = inline(
        &doc,
        &json!({"$ref": "#/components/schemas/Obj", "properties": {"b": {"type": "integer"}}, "title": "T"}),
        false,
    );
    assert_eq!(conflicting["title"], "T");
    assert_eq!(conflicting["allOf"][0]["properties"]["a"]["type"], "string");
    assert_eq!(
        conflicting["allOf"][1]["properties"]["b"]["type"],
        "integer"
    );
    let nullable = inline(
        &doc,
        &json!({"$ref": "#/components/schemas/Obj", "nullable": true}),
        false,
    );
    assert_eq!(nullable["type"], json!(["object", "null"]));
}

#[test]
fn translates_openapi_30_keywords() {
    let doc = json!({});
    let out = inline(
        &doc,
        &json!({
            "type": "integer", "nullable": true, "minimum": 1, "exclusiveMinimum": true,
            "maximum": 9, "exclusiveMaximum": false, "xml": {"name": "n"},
            "discriminator": {"propertyName": "kind"}
        }),
        false,
    );
    assert_eq!(
        out,
        json!({"type": ["integer", "null"], "exclusiveMinimum": 1, "maximum": 9})
    );
    let with_enum = inline(
        &doc,
        &json!({"type": "string", "enum": ["a"], "nullable": true}),
        false,
    );
    assert_eq!(with_enum["enum"], json!(["a", null]));
    let typed_31 = inline(&doc, &json!({"type": ["string", "null"]}), false);
    assert_eq!(typed_31, json!({"type": ["string", "null"]}));
}

#[test]
fn request_bodies_lose_read_only_properties() {
    let doc = json!({"components": {"schemas": {"Issue": {
        "type": "object",
        "required": ["id", "title"],
        "properties": {
            "id": {"type": "integer", "readOnly": true},
            "title": {"type": "string"},
            "owner": {"$ref": "#/components/schemas/Owner"}
        }
    }, "Owner": {"type": "object", "readOnly": true}}}});
    let schema = json!({"$ref": "#/components/schemas/Issue"});
    let out = inline(&doc, &schema, true);
    assert_eq!(out["required"], json!(["title"]));
    assert_eq!(
        out["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["title"]
    );
    let response = inline(&doc, &schema, false);
    assert_eq!(response["properties"].as_object().unwrap().len(), 3);
}

#[test]
fn errors_name_the_reference_and_place() {
    let doc = json!({"__test": {"properties": {"x": {"$ref": "#/components/schemas/Nope"}}}});
    let mut inliner = Inliner::new(&doc, NESTING_LEVELS[0], 5_000);
    let err = inliner
        .inline(&doc["__test"], &Loc::ROOT.key("__test"), false)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "__test.properties.x: $ref '#/components/schemas/Nope' does not resolve"
    );
}
