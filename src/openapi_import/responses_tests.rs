//! P12: the paging evidence an import reads from each operation's success response, on
//! documents shaped like the ones frameworks generate (fastapi-pagination, DRF, Spring
//! Data REST, JSON:API, HAL, json-server's `Link` header), and the hint an operation
//! carries, kept as written.

use serde_json::{json, Value};

use super::import;

/// One `GET /items` operation with `parameters` and a 200 response of `schema` (under
/// `components.schemas.Page` so the `$ref` is followed), plus `extra` on the operation.
fn doc(parameters: Value, schema: Value, extra: Value) -> Vec<u8> {
    let mut op = json!({
        "operationId": "list_items",
        "parameters": parameters,
        "responses": {"200": {"description": "ok", "content": {"application/json": {
            "schema": {"$ref": "#/components/schemas/Page"}}}}}
    });
    if let (Value::Object(o), Value::Object(e)) = (&mut op, extra) {
        o.extend(e);
    }
    serde_json::to_vec(&json!({
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {"/items": {"get": op}},
        "components": {"schemas": {"Page": schema, "Item": {"type": "object"}}}
    }))
    .unwrap()
}

fn evidence(parameters: Value, schema: Value) -> Value {
    let tools = import(&doc(parameters, schema, json!({}))).unwrap();
    tools[0].input_schema["x-loopgate-response"].clone()
}

fn q(name: &str, ty: &str) -> Value {
    json!({"name": name, "in": "query", "schema": {"type": ty}})
}

#[test]
fn p12_fastapi_pagination_cursor_page_names_next_page() {
    // as fastapi-pagination 0.12 generates it (3.1: nullable as anyOf)
    let page = json!({"type": "object", "title": "CursorPage[Item]", "properties": {
        "items": {"type": "array", "items": {"$ref": "#/components/schemas/Item"}},
        "total": {"anyOf": [{"type": "integer"}, {"type": "null"}], "description": "Total items"},
        "current_page": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "current_page_backwards": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "previous_page": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "next_page": {"anyOf": [{"type": "string"}, {"type": "null"}],
            "description": "Cursor to refetch the next page"}
    }, "required": ["items"]});
    let e = evidence(json!([q("cursor", "string"), q("size", "integer")]), page);
    assert_eq!(e, json!({"next": ["next_page"], "total": ["total"]}));
}

#[test]
fn p12_drf_next_is_a_link_and_count_the_total() {
    let page = json!({"type": "object", "properties": {
        "count": {"type": "integer", "example": 123},
        "next": {"type": "string", "nullable": true, "format": "uri"},
        "previous": {"type": "string", "nullable": true, "format": "uri"},
        "results": {"type": "array", "items": {"$ref": "#/components/schemas/Item"}}
    }});
    let e = evidence(json!([q("page", "integer")]), page);
    assert_eq!(
        e,
        json!({"next": ["next"], "total": ["count"], "nextIsLink": true})
    );
}

#[test]
fn p12_spring_hal_and_jsonapi_documents() {
    let spring = json!({"type": "object", "properties": {
        "_embedded": {"type": "object", "properties": {"items": {"type": "array"}}},
        "_links": {"type": "object", "properties": {
            "next": {"type": "object", "properties": {"href": {"type": "string"}}}}},
        "page": {"type": "object", "properties": {
            "size": {"type": "integer"}, "totalElements": {"type": "integer", "format": "int64"},
            "totalPages": {"type": "integer"}, "number": {"type": "integer"}}}
    }});
    let e = evidence(json!([q("page", "integer"), q("size", "integer")]), spring);
    assert_eq!(
        e,
        json!({"next": ["_links", "next", "href"], "total": ["page", "totalElements"], "nextIsLink": true})
    );
    let jsonapi = json!({"allOf": [{"type": "object", "properties": {
        "data": {"type": "array"},
        "meta": {"type": "object", "properties": {"total": {"type": "integer"}}},
        "links": {"type": "object", "properties": {
            "next": {"type": ["string", "null"]}, "last": {"type": "string"}}}
    }}]});
    let e = evidence(json!([q("page[number]", "integer")]), jsonapi);
    assert_eq!(
        e,
        json!({"next": ["links", "next"], "total": ["meta", "total"], "nextIsLink": true})
    );
}

#[test]
fn p12_a_declared_link_header_and_a_has_more_flag() {
    let mut d: Value = serde_json::from_slice(&doc(
        json!([]),
        json!({"type": "object", "properties": {
            "data": {"type": "array"}, "has_more": {"type": "boolean"}}}),
        json!({}),
    ))
    .unwrap();
    d["paths"]["/items"]["get"]["responses"]["200"]["headers"] =
        json!({"Link": {"schema": {"type": "string"}}});
    let tools = import(&serde_json::to_vec(&d).unwrap()).unwrap();
    assert_eq!(
        tools[0].input_schema["x-loopgate-response"],
        json!({"hasMore": ["has_more"], "nextIsLink": true})
    );
}

#[test]
fn p12_nothing_said_is_no_evidence() {
    let plain = json!({"type": "array", "items": {"$ref": "#/components/schemas/Item"}});
    let tools = import(&doc(json!([]), plain, json!({}))).unwrap();
    assert!(tools[0].input_schema.get("x-loopgate-response").is_none());
    // a record's `total` that is not a number, a `next` that is an integer: no evidence
    let odd = json!({"type": "object", "properties": {
        "total": {"type": "string"}, "next": {"type": "integer"}}});
    let tools = import(&doc(json!([]), odd, json!({}))).unwrap();
    assert!(tools[0].input_schema.get("x-loopgate-response").is_none());
}

#[test]
fn p12_an_operations_pagination_hint_is_kept() {
    let hint = json!({"size": "_limit", "page": "_page", "first": 1});
    let tools = import(&doc(
        json!([q("_page", "integer"), q("_limit", "integer")]),
        json!({"type": "array"}),
        json!({"x-loopgate-pagination": hint}),
    ))
    .unwrap();
    let s = &tools[0].input_schema;
    assert_eq!(s["x-loopgate-pagination"], hint);
    // the importer renamed the parameters; the hint in the API's names still holds
    assert_eq!(s["properties"]["page"]["x-loopgate-name"], "_page");
    assert_eq!(loopgate_engine::analysis::hint_problem(s), None);
    assert!(loopgate_engine::analyze(s).page_walkable());
}

fn items_of(schema: Value) -> Value {
    let tools = import(&doc(json!([]), schema, json!({}))).unwrap();
    tools[0].input_schema["x-loopgate-items"].clone()
}

#[test]
fn g7_gmail_list_keeps_its_items_path_and_documented_count() {
    // users.messages.list: protobuf JSON, the list and a zero count left out when empty
    let page = json!({"type": "object", "properties": {
        "messages": {"type": "array", "items": {"$ref": "#/components/schemas/Item"}},
        "nextPageToken": {"type": "string"},
        "resultSizeEstimate": {"type": "integer", "format": "uint32"}}});
    assert_eq!(items_of(page.clone()), json!(["messages"]));
    assert_eq!(
        evidence(json!([q("pageToken", "string")]), page),
        json!({"next": ["nextPageToken"], "total": ["resultSizeEstimate"]})
    );
    let table = json!({"type": "object", "properties": {
        "rows": {"type": "array", "items": {"type": "object"}},
        "filtered_table_rows_count": {"type": "integer"}}});
    assert_eq!(
        evidence(json!([]), table),
        json!({"total": ["filtered_table_rows_count"]})
    );
}

#[test]
fn p15_salesforce_query_is_a_link_walk_with_its_records_path() {
    let page = json!({"type": "object", "properties": {
        "totalSize": {"type": "integer"}, "done": {"type": "boolean"},
        "nextRecordsUrl": {"type": "string"},
        "records": {"type": "array", "items": {"type": "object"}}}});
    assert_eq!(items_of(page.clone()), json!(["records"]));
    assert_eq!(
        evidence(json!([q("q", "string")]), page),
        json!({"next": ["nextRecordsUrl"], "total": ["totalSize"], "nextIsLink": true})
    );
}

#[test]
fn g7_items_path_one_level_down_and_never_for_a_record() {
    let nested = json!({"type": "object", "properties": {
        "result": {"type": "object", "properties": {
            "experiments": {"type": "array", "items": {"type": "object"}}}},
        "status": {"type": "string"}}});
    assert_eq!(items_of(nested), json!(["result", "experiments"]));
    // a record's own list is no item array: `{id, tags}` with no tags is still the record
    let record = json!({"type": "object", "properties": {
        "id": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "object"}}}});
    assert_eq!(items_of(record), Value::Null);
    // two lists of records, neither an envelope key: no guess
    let two = json!({"type": "object", "properties": {
        "owners": {"type": "array", "items": {"type": "object"}},
        "pets": {"type": "array", "items": {"type": "object"}}}});
    assert_eq!(items_of(two), Value::Null);
    let top = json!({"type": "array", "items": {"type": "object"}});
    assert_eq!(items_of(top), Value::Null);
}
