//! Tenant isolation: another org's objects are 404 on every endpoint, never 403,
//! and references to them in bodies are refused exactly like ids that do not exist.

use reqwest::Method;
use serde_json::{json, Value};

use crate::support::helpers::{spawn_app, ADMIN};

#[tokio::test]
async fn another_orgs_objects_are_not_found_everywhere() {
    let app = spawn_app().await;
    let a = app.tenant("a").await;
    let b = app.tenant("b").await;
    let tool = app.create_tool(&a.key, &a.provider, "list_contacts").await;
    let agent = app
        .post("/v1/agents", &a.key, json!({"name": "x", "deployment_id": a.deployment, "agentTools": [{"tool_id": tool, "provider_id": a.provider}]}))
        .await
        .ok(201)["id"]
        .as_str()
        .unwrap()
        .to_string();
    let wf = app
        .post("/v1/workflows", &a.key, json!({"name": "w", "agent_id": agent, "steps": [{"id": "s", "type": "tool", "tool": "list_contacts"}]}))
        .await
        .ok(201)["id"]
        .as_str()
        .unwrap()
        .to_string();

    let p = a.provider.as_str();
    let probes: Vec<(Method, String, Option<Value>)> = vec![
        (Method::GET, format!("/v1/providers/{p}"), None),
        (
            Method::PATCH,
            format!("/v1/providers/{p}"),
            Some(json!({"name": "stolen"})),
        ),
        (Method::DELETE, format!("/v1/providers/{p}"), None),
        (Method::GET, format!("/v1/tools/{tool}"), None),
        (
            Method::PATCH,
            format!("/v1/tools/{tool}"),
            Some(json!({"name": "stolen"})),
        ),
        (Method::DELETE, format!("/v1/tools/{tool}"), None),
        (Method::GET, format!("/v1/agents/{agent}"), None),
        (
            Method::PATCH,
            format!("/v1/agents/{agent}"),
            Some(json!({"name": "stolen"})),
        ),
        (Method::DELETE, format!("/v1/agents/{agent}"), None),
        (
            Method::POST,
            format!("/v1/agents/{agent}/tools"),
            Some(json!({"tool_id": tool, "provider_id": p})),
        ),
        (
            Method::GET,
            format!("/v1/agents/{agent}/tools/{tool}"),
            None,
        ),
        (
            Method::PATCH,
            format!("/v1/agents/{agent}/tools/{tool}"),
            Some(json!({"loop_responses": true})),
        ),
        (
            Method::DELETE,
            format!("/v1/agents/{agent}/tools/{tool}"),
            None,
        ),
        (Method::GET, format!("/v1/workflows/{wf}"), None),
        (
            Method::PATCH,
            format!("/v1/workflows/{wf}"),
            Some(json!({"name": "stolen"})),
        ),
        (Method::DELETE, format!("/v1/workflows/{wf}"), None),
    ];
    for (method, path, body) in &probes {
        let r = app
            .call(method.clone(), path, Some(&b.key), body.as_ref())
            .await;
        assert_eq!(
            r.status.as_u16(),
            404,
            "{method} {path} answered {}",
            r.text
        );
        r.problem(404, "not_found");
    }
    let r = app
        .post_raw(
            &format!("/v1/providers/{p}/openapi"),
            &b.key,
            "application/json",
            br#"{"openapi":"3.0.0","info":{"title":"x","version":"1"},"paths":{}}"#.to_vec(),
        )
        .await;
    r.problem(404, "not_found");

    // lists never show the other org's rows
    for path in ["/v1/providers", "/v1/tools", "/v1/agents", "/v1/workflows"] {
        let r = app.get(path, &b.key).await;
        assert!(!r.text.contains(&a.org), "{path} leaked org a");
        assert!(!r.text.contains(&agent) && !r.text.contains(&tool) && !r.text.contains(&wf));
    }

    // references in bodies: refused exactly like an id that does not exist
    let foreign = app
        .post("/v1/tools", &b.key, json!({"provider_id": p, "name": "t", "method": "GET", "path": "/t", "input_schema": {}}))
        .await;
    foreign.problem(422, "validation_failed");
    let missing = app
        .post("/v1/tools", &b.key, json!({"provider_id": "prv_doesnotexist", "name": "t", "method": "GET", "path": "/t", "input_schema": {}}))
        .await;
    assert_eq!(
        foreign.body["detail"].as_str().unwrap().replace(p, "X"),
        missing.body["detail"]
            .as_str()
            .unwrap()
            .replace("prv_doesnotexist", "X")
    );
    app.post(
        "/v1/agents",
        &b.key,
        json!({"name": "x", "deployment_id": a.deployment, "agentTools": []}),
    )
    .await
    .problem(422, "validation_failed");
    app.post("/v1/agents", &b.key, json!({"name": "x", "deployment_id": b.deployment, "agentTools": [{"tool_id": tool, "provider_id": p}]}))
        .await
        .problem(422, "validation_failed");
    app.post(
        "/v1/runtime-tokens",
        &b.key,
        json!({"user_id": "u", "agent_id": agent}),
    )
    .await
    .problem(422, "validation_failed");
    app.post(
        "/v1/runtime-tokens",
        &b.key,
        json!({"user_id": "u", "credentials": {p: "x"}}),
    )
    .await
    .problem(422, "validation_failed");

    // admin paths keyed by org: an org key is not the admin
    app.get(&format!("/v1/orgs/{}/api-keys", a.org), &b.key)
        .await
        .problem(403, "forbidden");
    // runtime surface: another org's agent and calls are not found
    app.post(
        &format!("/v1/agents/{agent}/threads/t/steps"),
        &b.key,
        json!({}),
    )
    .await
    .problem(404, "not_found");
    let r = app
        .post(
            &format!("/v1/agents/{agent}/threads/t/tool-calls"),
            &b.key,
            json!({"name": "list_contacts", "arguments": {}}),
        )
        .await;
    r.problem(404, "not_found");
    let b_token = app
        .post("/v1/runtime-tokens", &b.key, json!({"user_id": "u"}))
        .await
        .ok(201)["token"]
        .as_str()
        .unwrap()
        .to_string();
    app.post(
        &format!("/v1/agents/{agent}/threads/t/steps"),
        &b_token,
        json!({}),
    )
    .await
    .problem(404, "not_found");
    let call = app
        .post(
            &format!("/v1/agents/{agent}/threads/t/tool-calls"),
            &a.key,
            json!({"name": "queryToolResult", "arguments": {"resultId": "res_x"}}),
        )
        .await;
    call.problem(404, "result_not_found");
    // a's objects survived every probe
    app.get(&format!("/v1/agents/{agent}"), &a.key)
        .await
        .ok(200);
    let t = app.get(&format!("/v1/tools/{tool}"), &a.key).await;
    assert_eq!(t.ok(200)["name"], "list_contacts");
    app.get(&format!("/v1/workflows/{wf}"), &a.key)
        .await
        .ok(200);
    app.get(&format!("/v1/agents/{agent}/tools/{tool}"), &a.key)
        .await
        .ok(200);
    let _ = ADMIN;
}
