//! Request building from schemas and arguments: placement, styles, encoding, refusals.

use serde_json::{json, Map, Value};

use super::build::{build, placeholders, Built};
use super::encode::{encode_component, form_body};
use super::CallError;

fn args(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

fn built(template: &str, schema: Value, a: Value) -> Built {
    build("https://api.example.com/v2/", template, &schema, &args(a)).unwrap()
}

fn invalid(template: &str, schema: Value, a: Value) -> String {
    match build("https://api.example.com", template, &schema, &args(a)) {
        Err(CallError::InvalidArguments(m)) => m,
        other => panic!("expected InvalidArguments, got {other:?}"),
    }
}

#[test]
fn imported_parameters_go_where_x_loopgate_in_says() {
    let schema = json!({"type": "object", "properties": {
        "owner": {"type": "string", "x-loopgate-in": "path"},
        "top": {"type": "integer", "x-loopgate-in": "query", "x-loopgate-name": "$top"},
        "state": {"type": "array", "x-loopgate-in": "query"},
        "ids": {"type": "array", "x-loopgate-in": "query", "x-loopgate-style": "form", "x-loopgate-explode": false},
        "expand": {"type": "array", "x-loopgate-in": "query", "x-loopgate-style": "deepObject", "x-loopgate-explode": true},
        "created": {"type": "object", "x-loopgate-in": "query", "x-loopgate-style": "deepObject"},
        "color": {"type": "object", "x-loopgate-in": "query",
                  "properties": {"R": {"type": "integer"}, "G": {"type": "integer"}, "B": {"type": "integer"}}},
        "where": {"type": "object", "x-loopgate-in": "query", "x-loopgate-content-type": "application/json"},
        "active": {"type": "boolean", "x-loopgate-in": "query"},
        "x_trace": {"type": "string", "x-loopgate-in": "header", "x-loopgate-name": "X-Trace"},
        "session": {"type": "string", "x-loopgate-in": "cookie"},
        "body": {"type": "object", "x-loopgate-in": "body", "x-loopgate-content-type": "application/json"}
    }, "required": ["owner"]});
    let b = built(
        "/repos/{owner}/issues",
        schema,
        json!({
            "owner": "octo cat", "top": 5, "state": ["open", "closed"], "ids": [1, 2],
            "expand": ["customer", "invoice"], "created": {"gte": 10, "lt": 20},
            "color": {"R": 100, "G": 200}, "where": {"a": [1]}, "active": true,
            "x_trace": "t-1", "session": "dropped", "body": {"title": "hi", "n": 1.5}
        }),
    );
    assert_eq!(b.url.path(), "/v2/repos/octo%20cat/issues");
    let pairs: Vec<(String, String)> = b.url.query_pairs().into_owned().collect();
    let expect: Vec<(&str, &str)> = vec![
        ("$top", "5"),
        ("state", "open"),
        ("state", "closed"),
        ("ids", "1,2"),
        ("expand[]", "customer"),
        ("expand[]", "invoice"),
        ("created[gte]", "10"),
        ("created[lt]", "20"),
        ("R", "100"),
        ("G", "200"),
        ("where", r#"{"a":[1]}"#),
        ("active", "true"),
    ];
    let expect: Vec<(String, String)> = expect
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    assert_eq!(pairs, expect);
    assert_eq!(b.headers, vec![("X-Trace".to_string(), "t-1".to_string())]);
    let body = b.body.unwrap();
    assert_eq!(body.content_type, "application/json");
    assert_eq!(
        serde_json::from_slice::<Value>(&body.bytes).unwrap(),
        json!({"title": "hi", "n": 1.5})
    );
}

#[test]
fn hand_defined_tools_use_the_default_rule() {
    // No x-loopgate-in: placeholder → path, `body` → JSON body, the rest → query,
    // even on POST; an object without a style is JSON text.
    let schema = json!({"type": "object", "properties": {
        "id": {"type": "string"}, "dry_run": {"type": "boolean"},
        "filter": {"type": "object"}, "tags": {"type": "array"}, "body": {"type": "object"}
    }});
    let b = built(
        "/items/{id}",
        schema,
        json!({"id": "42", "dry_run": false, "filter": {"a": 1}, "tags": ["x", "y"], "body": {"k": "v"}}),
    );
    assert_eq!(b.url.path(), "/v2/items/42");
    assert_eq!(
        b.url.query(),
        Some("dry_run=false&filter=%7B%22a%22%3A1%7D&tags=x&tags=y")
    );
    assert_eq!(b.body.unwrap().bytes, br#"{"k":"v"}"#);
}

#[test]
fn schema_without_properties_sends_every_argument() {
    let b = built(
        "/search/{q}",
        json!({"type": "object"}),
        json!({"q": "a/b", "page": 2, "body": [1]}),
    );
    assert_eq!(b.url.path(), "/v2/search/a%2Fb");
    assert_eq!(b.url.query(), Some("page=2"));
    assert_eq!(b.body.unwrap().bytes, b"[1]");
}

#[test]
fn unknown_arguments_are_refused_with_the_real_ones() {
    let schema = json!({"properties": {"id": {"type": "string"}, "limit": {"type": "integer"}}});
    let m = invalid("/x/{id}", schema, json!({"id": "1", "lmit": 5}));
    assert_eq!(
        m,
        "unknown argument `lmit`; this tool's arguments are: `id`, `limit`"
    );
}

#[test]
fn missing_path_parameters_are_named() {
    let schema = json!({"properties": {
        "owner": {"x-loopgate-in": "path"},
        "repo_name": {"x-loopgate-in": "path", "x-loopgate-name": "repo-name"}
    }});
    let m = invalid(
        "/repos/{owner}/{repo-name}",
        schema.clone(),
        json!({"owner": null}),
    );
    assert_eq!(m, "missing required path parameters `owner`, `repo_name`");
    let b = build(
        "https://h.example",
        "/repos/{owner}/{repo-name}",
        &schema,
        &args(json!({"owner": "o", "repo_name": "r"})),
    )
    .unwrap();
    assert_eq!(b.url.path(), "/repos/o/r");
}

#[test]
fn path_values_cannot_escape_their_segment() {
    let schema = json!({"properties": {"id": {"x-loopgate-in": "path"}}});
    let b = built(
        "/users/{id}/profile",
        schema.clone(),
        json!({"id": "../admin/x?y=1#z%2F"}),
    );
    assert_eq!(
        b.url.path(),
        "/v2/users/..%2Fadmin%2Fx%3Fy%3D1%23z%252F/profile"
    );
    assert_eq!(b.url.query(), None);
    assert_eq!(b.url.fragment(), None);
    for dots in ["..", "."] {
        let m = invalid("/users/{id}/profile", schema.clone(), json!({"id": dots}));
        assert!(m.contains("`..`"), "{dots}: {m}");
    }
    // Percent-encoded dots are encoded again, so `%2e%2e` is a harmless `%252e%252e`.
    let m = build(
        "https://h.example",
        "/u/{id}",
        &schema,
        &args(json!({"id": "%2e%2e"})),
    )
    .unwrap();
    assert_eq!(m.url.path(), "/u/%252e%252e");
    assert_eq!(encode_component("a b/é"), "a%20b%2F%C3%A9");
}

#[test]
fn headers_refuse_line_breaks_and_skip_reserved_names() {
    let schema = json!({"properties": {
        "h": {"x-loopgate-in": "header", "x-loopgate-name": "X-H"},
        "host": {"x-loopgate-in": "header", "x-loopgate-name": "Host"}
    }});
    let m = invalid("/", schema.clone(), json!({"h": "a\r\nX-Evil: 1"}));
    assert!(m.contains("line breaks"), "{m}");
    let b = built("/", schema, json!({"h": ["a", 1], "host": "evil.example"}));
    assert_eq!(b.headers, vec![("X-H".to_string(), "a,1".to_string())]);
}

#[test]
fn form_bodies_use_brackets() {
    let schema = json!({"properties": {"body": {
        "x-loopgate-in": "body", "x-loopgate-content-type": "application/x-www-form-urlencoded"
    }}});
    let b = built(
        "/v1/customers",
        schema.clone(),
        json!({"body": {"email": "a@b.c", "metadata": {"k": "v w"}, "expand": ["x", "y"],
                        "items": [{"price": "p_1", "qty": 2}], "skip": null, "live": true}}),
    );
    let body = b.body.unwrap();
    assert_eq!(body.content_type, "application/x-www-form-urlencoded");
    assert_eq!(
        String::from_utf8(body.bytes).unwrap(),
        "email=a%40b.c&metadata%5Bk%5D=v+w&expand%5B%5D=x&expand%5B%5D=y\
         &items%5B0%5D%5Bprice%5D=p_1&items%5B0%5D%5Bqty%5D=2&live=true"
    );
    let m = invalid("/", schema, json!({"body": [1, 2]}));
    assert!(m.contains("form body"), "{m}");
    assert_eq!(form_body(&Map::new()), b"");
}

#[test]
fn other_media_types() {
    let text = json!({"properties": {"body": {"x-loopgate-in": "body", "x-loopgate-content-type": "text/plain"}}});
    let b = built("/", text, json!({"body": "raw text"}));
    assert_eq!(b.body.as_ref().unwrap().bytes, b"raw text");
    assert_eq!(b.body.unwrap().content_type, "text/plain");
    let multipart = json!({"properties": {"body": {"x-loopgate-in": "body", "x-loopgate-content-type": "multipart/form-data"}}});
    assert!(invalid("/", multipart, json!({"body": {}})).contains("cannot send"));
}

#[test]
fn base_url_query_is_kept_and_templates_parse() {
    let b = build(
        "https://h.example/api?v=1",
        "/x",
        &json!({"properties": {"q": {"x-loopgate-in": "query"}}}),
        &args(json!({"q": "a&b"})),
    )
    .unwrap();
    assert_eq!(b.url.as_str(), "https://h.example/api/x?v=1&q=a%26b");
    assert_eq!(placeholders("/a/{b}/{c}.json"), vec!["b", "c"]);
    let fixed = build(
        "https://h.example/api?v=1",
        "/search/{kind}?type=repo&sort=",
        &json!({"properties": {"kind": {}, "q": {}}}),
        &args(json!({"kind": "a?b", "q": "x"})),
    )
    .unwrap();
    assert_eq!(
        fixed.url.as_str(),
        "https://h.example/api/search/a%3Fb?v=1&type=repo&sort=&q=x"
    );
}

#[test]
fn object_values_spread_only_into_declared_properties() {
    // A declared query object spreads into its own properties only: never into a pair
    // the tool does not declare (another parameter, a paging bound, a credential name).
    let schema = json!({"type": "object", "properties": {
        "color": {"type": "object", "x-loopgate-in": "query",
                  "properties": {"R": {"type": "integer"}}},
        "q": {"type": "string", "x-loopgate-in": "query"},
        "free": {"type": "object", "x-loopgate-in": "query"}
    }});
    let m = invalid(
        "/x",
        schema.clone(),
        json!({"color": {"R": 1, "api_key": "x"}}),
    );
    assert!(m.contains("`api_key`") && m.contains("`R`"), "{m}");
    let m = invalid("/x", schema.clone(), json!({"q": {"limit": 1000}}));
    assert!(m.contains("`q`"), "{m}");
    let m = invalid("/x", schema.clone(), json!({"free": {"per_page": 1000}}));
    assert!(m.contains("`free`"), "{m}");
    let b = built("/x", schema, json!({"color": {"R": 1}, "q": "a"}));
    assert_eq!(b.url.query(), Some("R=1&q=a"));
}
