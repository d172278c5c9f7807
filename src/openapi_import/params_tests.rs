//! Unit tests of parameter handling, through small documents.

use serde_json::{json, Value};

use super::template_names;
use crate::openapi_import::{import, ImportError, ImportedTool};

fn one_tool(path: &str, item: Value) -> ImportedTool {
    let doc =
        json!({"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": {path: item}});
    let mut tools = import(doc.to_string().as_bytes()).unwrap();
    assert_eq!(tools.len(), 1);
    tools.remove(0)
}

fn import_err(path: &str, item: Value) -> ImportError {
    let doc = json!({"openapi": "3.1.0", "paths": {path: item}});
    import(doc.to_string().as_bytes()).unwrap_err()
}

fn keys(schema: &Value) -> Vec<&str> {
    schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect()
}

#[test]
fn template_placeholders() {
    assert_eq!(
        template_names("/a/{x}/b/{y-z}.{fmt}/{x}"),
        ["x", "y-z", "fmt"]
    );
    assert!(template_names("/a/{unclosed").is_empty());
}

#[test]
fn operation_parameters_override_path_level_ones() {
    let tool = one_tool(
        "/items/{id}",
        json!({
            "parameters": [
                {"name": "id", "in": "path", "required": true, "schema": {"type": "string"}},
                {"name": "x-trace", "in": "header", "schema": {"type": "string"}, "description": "path level"},
                {"name": "limit", "in": "query", "schema": {"type": "integer"}}
            ],
            "get": {"parameters": [
                {"name": "X-Trace", "in": "header", "required": true, "schema": {"type": "string"}, "description": "op level"},
                {"name": "id", "in": "path", "required": true, "schema": {"type": "integer"}}
            ], "responses": {}}
        }),
    );
    let schema = &tool.input_schema;
    assert_eq!(keys(schema), ["id", "limit", "X-Trace"]);
    assert_eq!(schema["properties"]["id"]["type"], "integer");
    assert_eq!(schema["properties"]["X-Trace"]["description"], "op level");
    assert_eq!(schema["required"], json!(["id", "X-Trace"]));
}

#[test]
fn same_name_in_path_and_query_keeps_the_path_one() {
    let tool = one_tool(
        "/orgs/{org}",
        json!({"post": {
            "parameters": [
                {"name": "org", "in": "query", "schema": {"type": "boolean"}},
                {"name": "org", "in": "path", "required": true, "schema": {"type": "string"}},
                {"name": "body", "in": "query", "schema": {"type": "string"}},
                {"name": "org", "in": "header", "schema": {"type": "string"}}
            ],
            "requestBody": {"content": {"application/json": {"schema": {"type": "object"}}}},
            "responses": {}
        }}),
    );
    let props = &tool.input_schema["properties"];
    assert_eq!(
        keys(&tool.input_schema),
        ["org", "query_org", "query_body", "header_org", "body"]
    );
    assert_eq!(props["org"]["x-loopgate-in"], "path");
    assert!(props["org"].get("x-loopgate-name").is_none());
    assert_eq!(props["query_org"]["x-loopgate-in"], "query");
    assert_eq!(props["query_org"]["x-loopgate-name"], "org");
    assert_eq!(props["query_body"]["x-loopgate-name"], "body");
    assert_eq!(props["header_org"]["x-loopgate-name"], "org");
    assert_eq!(props["body"]["x-loopgate-in"], "body");
}

#[test]
fn credentials_cookies_and_content_negotiation_are_dropped() {
    let tool = one_tool(
        "/me",
        json!({"get": {"parameters": [
            {"name": "AUTHORIZATION", "in": "header", "schema": {"type": "string"}},
            {"name": "cookie", "in": "header", "schema": {"type": "string"}},
            {"name": "Host", "in": "header", "schema": {"type": "string"}},
            {"name": "Accept", "in": "header", "schema": {"type": "string"}},
            {"name": "Content-Type", "in": "header", "schema": {"type": "string"}},
            {"name": "session", "in": "cookie", "required": true, "schema": {"type": "string"}},
            {"name": "X-Request-Id", "in": "header", "schema": {"type": "string"}}
        ], "responses": {}}}),
    );
    assert_eq!(keys(&tool.input_schema), ["X-Request-Id"]);
    assert_eq!(tool.input_schema["required"], json!([]));
}

#[test]
fn undeclared_placeholders_are_required_strings_and_stray_path_params_go() {
    let tool = one_tool(
        "/a/{x}/b/{y}",
        json!({"delete": {"parameters": [
            {"name": "x", "in": "path", "required": true, "schema": {"type": "integer"}},
            {"name": "stray", "in": "path", "required": true, "schema": {"type": "string"}}
        ], "responses": {}}}),
    );
    assert_eq!(keys(&tool.input_schema), ["x", "y"]);
    assert_eq!(tool.input_schema["properties"]["y"]["type"], "string");
    assert_eq!(tool.input_schema["required"], json!(["x", "y"]));
    assert_eq!(tool.name, "delete_a_x_b_y");
}

#[test]
fn parameter_without_schema_or_with_content() {
    let tool = one_tool(
        "/s",
        json!({"get": {"parameters": [
            {"name": "q", "in": "query", "required": true, "deprecated": true},
            {"name": "filter", "in": "query", "content": {"application/json": {"schema": {"type": "object", "properties": {"a": {"type": "string"}}}}}}
        ], "responses": {}}}),
    );
    let props = &tool.input_schema["properties"];
    assert_eq!(
        props["q"],
        json!({"type": "string", "deprecated": true, "x-loopgate-in": "query"})
    );
    assert_eq!(
        props["filter"]["x-loopgate-content-type"],
        "application/json"
    );
    assert_eq!(props["filter"]["properties"]["a"]["type"], "string");
}

#[test]
fn malformed_parameters_are_errors_with_their_place() {
    let err = import_err("/x", json!({"get": {"parameters": [{"in": "query"}]}}));
    assert_eq!(
        err.to_string(),
        "paths./x.get.parameters[0]: parameter has no `name`"
    );
    let err = import_err(
        "/x",
        json!({"get": {"parameters": [{"name": "a", "in": "query"}, {"name": "f", "in": "formData"}]}}),
    );
    assert_eq!(
        err.to_string(),
        "paths./x.get.parameters[1]: parameter 'f' has unsupported `in: formData`; expected path, query, header or cookie"
    );
    let err = import_err("/x", json!({"parameters": {"name": "a"}, "get": {}}));
    assert_eq!(
        err.to_string(),
        "paths./x.parameters: `parameters` must be a list"
    );
    assert_eq!(err.location(), Some("paths./x.parameters"));
}
