//! The served OpenAPI document matches the committed one, describes every
//! operation, and `/docs` works without the internet.

use reqwest::Method;
use serde_json::{json, Value};

use crate::support::helpers::spawn_app;

#[tokio::test]
async fn committed_openapi_matches_the_code() {
    let served = loopgate::api::openapi_doc::openapi_json();
    let path = format!("{}/openapi/openapi.json", env!("CARGO_MANIFEST_DIR"));
    if std::env::var("LOOPGATE_BLESS").is_ok() {
        std::fs::write(&path, format!("{served}\n")).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        committed.trim_end(),
        served.trim_end(),
        "openapi/openapi.json drifted: regenerate with `cargo run --bin loopgate -- openapi > openapi/openapi.json`"
    );
}

#[tokio::test]
async fn served_document_and_docs_page() {
    let app = spawn_app().await;
    let r = app.call(Method::GET, "/openapi.json", None, None).await;
    let doc: Value = r.ok(200).clone();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
    let paths = doc["paths"].as_object().unwrap();
    for p in [
        "/v1/orgs",
        "/v1/providers/{provider_id}/openapi",
        "/v1/agents/{agent_id}/tools/{tool_id}",
        "/v1/runtime-tokens",
    ] {
        assert!(paths.contains_key(p), "{p} missing");
    }
    // every list operation explains the protocol to a model reading it
    for (p, item) in paths {
        if let Some(get) = item.get("get") {
            if get["parameters"]
                .as_array()
                .is_some_and(|ps| ps.iter().any(|x| x["name"] == "cursor"))
            {
                let text = format!(
                    "{} {}",
                    get["summary"].as_str().unwrap_or(""),
                    get["description"].as_str().unwrap_or("")
                );
                assert!(
                    text.contains("has_more") && text.contains("cursor") && text.contains("total"),
                    "{p}: {text}"
                );
            }
        }
    }
    let docs = app
        .client
        .get(format!("{}/docs/", app.address))
        .send()
        .await
        .unwrap();
    assert_eq!(docs.status().as_u16(), 200);
    let html = docs.text().await.unwrap();
    assert!(html.contains("swagger") || html.contains("Swagger"));
    assert!(
        !html.contains("https://cdn") && !html.contains("unpkg.com"),
        "docs must work offline"
    );
}

pub fn document() -> Value {
    serde_json::from_str(&loopgate::api::openapi_doc::openapi_json()).unwrap()
}

const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "patch", "head", "options", "trace",
];

/// `(method, path, operation)` of every operation of the document.
pub fn operations(doc: &Value) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for m in METHODS {
            if let Some(op) = item.get(m) {
                out.push((m.to_string(), path.clone(), op.clone()));
            }
        }
    }
    out
}

/// A route added to the table without its `#[utoipa::path]` (or registered in `ApiDoc`),
/// or an operation documented but not served, fails here.
#[test]
fn document_and_route_table_agree() {
    use std::collections::BTreeSet;
    let doc = document();
    let documented: BTreeSet<(String, String)> = operations(&doc)
        .into_iter()
        .map(|(m, p, _)| (m, p))
        .collect();
    let routed: BTreeSet<(String, String)> = loopgate::api::routes::ROUTES
        .iter()
        .map(|(m, p)| (m.to_string(), p.to_string()))
        .collect();
    let undocumented: Vec<_> = routed.difference(&documented).collect();
    let unrouted: Vec<_> = documented.difference(&routed).collect();
    assert!(
        undocumented.is_empty(),
        "routes missing from the OpenAPI document (add #[utoipa::path] and list them in ApiDoc): {undocumented:?}"
    );
    assert!(
        unrouted.is_empty(),
        "documented operations that are not routed: {unrouted:?}"
    );
}

/// What `contract::Contract` promises of every operation, checked on the result: unique
/// camelCase ids, described responses, errors as problem+json, security on every `/v1`
/// operation with the error statuses that follow from it, streams declared.
#[test]
fn every_operation_follows_the_contract() {
    let doc = document();
    let components = &doc["components"];
    let schemes: Vec<&String> = components["securitySchemes"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(schemes, ["adminToken", "orgKey", "runtimeToken"]);
    let mut ids = std::collections::HashSet::new();
    for (method, path, op) in operations(&doc) {
        let at = format!("{method} {path}");
        let id = op["operationId"].as_str().unwrap_or_default();
        assert!(
            loopgate::api::contract::is_camel(id),
            "{at}: operationId {id:?} is not camelCase"
        );
        assert!(ids.insert(id.to_string()), "{at}: operationId {id} repeats");
        assert!(
            op["summary"].as_str().is_some_and(|s| !s.is_empty()),
            "{at}: no summary (a `///` line on the handler)"
        );

        let security = op["security"].as_array().cloned().unwrap_or_default();
        if path.starts_with("/v1/") {
            assert!(!security.is_empty(), "{at}: declares no security");
        }
        for req in &security {
            for (scheme, roles) in req.as_object().unwrap() {
                let roles: Vec<&str> = roles
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| r.as_str().unwrap())
                    .collect();
                match scheme.as_str() {
                    "orgKey" => assert!(
                        matches!(roles.as_slice(), ["studio"] | ["mint"] | ["runtime"]),
                        "{at}: orgKey needs exactly one scope, got {roles:?}"
                    ),
                    "adminToken" | "runtimeToken" => assert!(roles.is_empty(), "{at}"),
                    other => panic!("{at}: unknown security scheme {other}"),
                }
            }
        }

        let responses = op["responses"].as_object().unwrap();
        let mut required: Vec<&str> = Vec::new();
        if !security.is_empty() {
            required.extend(["401", "403"]);
        }
        if path.contains('{') {
            required.push("404");
        }
        if op.get("requestBody").is_some() {
            required.extend(["400", "422"]);
        }
        for status in required {
            assert!(
                responses.contains_key(status),
                "{at}: {status} not declared"
            );
        }
        for (status, response) in responses {
            // a shared response is resolved from components/responses
            let response = match response["$ref"].as_str() {
                Some(r) => &components["responses"][r.rsplit('/').next().unwrap()],
                None => response,
            };
            assert!(
                response["description"]
                    .as_str()
                    .is_some_and(|d| !d.is_empty()),
                "{at} {status}: no description"
            );
            let content = response["content"].as_object();
            if status.as_str() >= "400" {
                let content = content.unwrap_or_else(|| panic!("{at} {status}: no body"));
                let types: Vec<&String> = content.keys().collect();
                // the one exception: the MCP endpoint's 400 may also be a JSON-RPC error
                // (streamable HTTP lets its body be one), declared beside the problem
                if at == "post /v1/agents/{agent_id}/mcp" && status == "400" {
                    assert_eq!(
                        types,
                        ["application/problem+json", "application/json"],
                        "{at} {status}"
                    );
                } else {
                    assert_eq!(types, ["application/problem+json"], "{at} {status}");
                }
                assert_eq!(
                    content["application/problem+json"]["schema"]["$ref"],
                    "#/components/schemas/Problem",
                    "{at} {status}"
                );
            }
            if status == "429" || status == "503" {
                assert!(
                    response["headers"].get("Retry-After").is_some(),
                    "{at} {status}"
                );
            }
        }
        // an operation that says it streams declares the stream
        let text = format!("{} {}", op["summary"], op["description"]);
        if text.contains("text/event-stream") {
            let streams = responses.iter().any(|(s, r)| {
                s.starts_with('2') && r["content"].get("text/event-stream").is_some()
            });
            assert!(
                streams,
                "{at}: mentions text/event-stream but declares none"
            );
        }
    }
}

/// The tool-call `result` is any JSON, not an object only.
#[test]
fn tool_call_result_is_any_json() {
    let doc = document();
    let result = &doc["components"]["schemas"]["ToolCallResponse"]["properties"]["result"];
    assert!(result.is_object(), "{result}");
    assert!(
        result.get("type").is_none(),
        "result must accept any JSON: {result}"
    );
}

/// Whether an operation's declared `security` accepts `scheme` (with `role`, the org
/// key's scope, when given).
pub fn accepts(security: &[Value], scheme: &str, role: Option<&str>) -> bool {
    security.iter().any(|req| {
        req.get(scheme).is_some_and(|roles| match role {
            Some(r) => roles.as_array().unwrap().iter().any(|x| x == r),
            None => true,
        })
    })
}

/// The security each operation declares is what the server enforces: called with every
/// kind of credential, an accepted one never gets 401/403 and any other gets 403; with
/// none, 401.
#[tokio::test]
async fn declared_security_is_enforced() {
    let mut settings =
        crate::support::helpers::test_settings(crate::support::helpers::fresh_database().await);
    settings.org_requests_per_second = 100_000;
    let app = crate::support::helpers::spawn_with(settings).await;
    let org = app.create_org("sec").await;
    let mut creds: Vec<(&str, Option<&str>, String)> = vec![(
        "adminToken",
        None,
        crate::support::helpers::ADMIN.to_string(),
    )];
    for scope in ["studio", "mint", "runtime"] {
        creds.push(("orgKey", Some(scope), app.create_key(&org, &[scope]).await));
    }
    let mint = creds[2].2.clone();
    let rt = app
        .post("/v1/runtime-tokens", &mint, json!({"user_id": "u-1"}))
        .await;
    creds.push((
        "runtimeToken",
        None,
        rt.ok(201)["token"].as_str().unwrap().into(),
    ));

    for (method, path, op) in operations(&document()) {
        let Some(security) = op["security"].as_array() else {
            continue;
        };
        let accepts = |scheme: &str, role: Option<&str>| accepts(security, scheme, role);
        let url = path
            .split('/')
            .map(|s| if s.starts_with('{') { "nope" } else { s })
            .collect::<Vec<_>>()
            .join("/");
        let m = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
        let body = op.get("requestBody").map(|_| json!({}));
        let none = app.call(m.clone(), &url, None, body.as_ref()).await;
        none.problem(401, "unauthorized");
        for (scheme, role, token) in &creds {
            let r = app.call(m.clone(), &url, Some(token), body.as_ref()).await;
            let who = format!("{method} {path} with {scheme} {role:?}");
            if accepts(scheme, *role) {
                assert!(
                    ![401, 403].contains(&r.status.as_u16()),
                    "{who}: refused although declared: {}",
                    r.text
                );
            } else {
                assert_eq!(r.status.as_u16(), 403, "{who}: {}", r.text);
            }
        }
    }
}
