//! Tests of documents the import must refuse, and of document-wide naming and limits.

use serde_json::{json, Value};

use super::{import, ImportError, MAX_OPERATIONS};

const BROKEN_REF: &str = include_str!("../../tests/fixtures/openapi/broken_ref.yaml");
const REMOTE_REF: &str = include_str!("../../tests/fixtures/openapi/remote_ref.json");
const INVALID: &str = include_str!("../../tests/fixtures/openapi/invalid.yaml");
const SWAGGER2: &str = include_str!("../../tests/fixtures/openapi/swagger2.json");

#[test]
fn broken_documents_fail_whole_with_a_precise_message() {
    let err = import(BROKEN_REF.as_bytes()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "paths./users/{id}.get.parameters[1]: $ref '#/components/parameters/Missing' does not resolve"
    );
    assert_eq!(err.location(), Some("paths./users/{id}.get.parameters[1]"));

    let err = import(REMOTE_REF.as_bytes()).unwrap_err();
    assert!(
        matches!(&err, ImportError::RemoteRef { reference, .. } if reference == "https://schemas.example.com/order.json#/Order")
    );
    assert!(err
        .to_string()
        .starts_with("paths./orders.post.requestBody.content.application/json.schema: $ref 'https://schemas.example.com/order.json#/Order' points outside this document"));

    let err = import(INVALID.as_bytes()).unwrap_err();
    assert!(matches!(err, ImportError::Syntax { format: "YAML", .. }));
    assert!(err.to_string().contains("line 11"), "{err}");

    let err = import(SWAGGER2.as_bytes()).unwrap_err();
    assert!(matches!(err, ImportError::UnsupportedVersion(_)));
    assert!(err.to_string().contains("Swagger 2.0"));
}

#[test]
fn other_document_level_errors() {
    let no_ops = br#"{"openapi": "3.0.0", "paths": {"/a": {"summary": "nothing"}}}"#;
    assert_eq!(
        import(no_ops).unwrap_err().to_string(),
        "paths: the document has no operations to import"
    );
    let relative = br#"{"openapi": "3.0.0", "paths": {"a": {"get": {}}}}"#;
    assert_eq!(
        import(relative).unwrap_err().to_string(),
        "paths.a: a path must start with '/'"
    );
    let cycle = br##"{"openapi": "3.1.0", "paths": {"/a": {"get": {"parameters": [{"$ref": "#/components/parameters/A"}]}}},
        "components": {"parameters": {"A": {"$ref": "#/components/parameters/B"}, "B": {"$ref": "#/components/parameters/A"}}}}"##;
    let err = import(cycle).unwrap_err();
    assert!(matches!(err, ImportError::RefCycle { .. }), "{err}");
    assert!(err.to_string().starts_with("paths./a.get.parameters[0]: "));
}

#[test]
fn duplicate_operation_ids_get_suffixes() {
    let doc = br#"
openapi: 3.0.0
paths:
  /a:
    get: {operationId: list}
    post: {operationId: list}
  /b:
    get: {operationId: list}
    put: {operationId: load_tool}
"#;
    let names: Vec<String> = import(doc).unwrap().into_iter().map(|t| t.name).collect();
    assert_eq!(names, ["list", "list_2", "list_3", "load_tool_2"]);
}

#[test]
fn too_many_operations_is_refused() {
    let paths: serde_json::Map<String, Value> = (0..=MAX_OPERATIONS)
        .map(|i| (format!("/p{i}"), json!({"get": {}})))
        .collect();
    let doc = json!({"openapi": "3.0.0", "paths": paths});
    let err = import(doc.to_string().as_bytes()).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("paths: the document has 5001 operations; at most 5000"),
        "{err}"
    );
}

fn count_nodes(value: &Value) -> usize {
    match value {
        Value::Object(map) => 1 + map.values().map(count_nodes).sum::<usize>(),
        Value::Array(items) => 1 + items.iter().map(count_nodes).sum::<usize>(),
        _ => 1,
    }
}

#[test]
fn schema_graphs_built_to_explode_are_cut_evenly() {
    // Each schema refers to the next one four times: 4^20 nodes if fully expanded.
    let mut schemas = serde_json::Map::new();
    for i in 0..20 {
        let next = json!({"$ref": format!("#/components/schemas/S{}", i + 1)});
        schemas.insert(
            format!("S{i}"),
            json!({"type": "object", "properties": {"a": next, "b": next, "c": next, "d": next, "name": {"type": "string"}}}),
        );
    }
    schemas.insert("S20".into(), json!({"type": "string"}));
    let body =
        json!({"content": {"application/json": {"schema": {"$ref": "#/components/schemas/S0"}}}});
    let doc = json!({
        "openapi": "3.0.0",
        "paths": {"/a": {"post": {"requestBody": body}}, "/b": {"put": {"requestBody": body}}},
        "components": {"schemas": schemas}
    });
    let tools = import(doc.to_string().as_bytes()).unwrap();
    assert_eq!(tools.len(), 2);
    for tool in &tools {
        let body = &tool.input_schema["properties"]["body"];
        // Bounded, and cut at one depth on every branch: the last property of the
        // first schema is expanded as deep as the first one.
        assert!(count_nodes(body) < 3_000, "{}", count_nodes(body));
        let depth = |mut s: &Value, key: &str| {
            let mut n = 0;
            while let Some(next) = s.get("properties").and_then(|p| p.get(key)) {
                s = next;
                n += 1;
            }
            n
        };
        assert!(depth(body, "a") >= 3);
        assert_eq!(depth(body, "a"), depth(body, "d"));
        assert!(body.to_string().contains("('S"));
        assert!(body.to_string().contains("not expanded: schema too large"));
    }
}
