//! M2 to the letter, over raw streamable HTTP: a session issued at `initialize` is
//! recorded and served by every replica until it is ended (`DELETE`, then 404 for every
//! method), idle past its TTL, or named by another caller (404, as an id never issued);
//! batches in a 2025-03-26 session and nowhere else; an unknown tool is -32602; a 401
//! names the endpoint's protected-resource metadata (RFC 9728), which is served; a token
//! of another agent is 403 on POST, GET and DELETE alike.

use reqwest::Method;
use serde_json::{json, Value};
use sqlx::PgPool;

use crate::mcp::providers::{mcp_rig, McpRig};
use crate::support::helpers::{spawn_with, test_settings, Res, TestApp};

/// One MCP message (or batch) to `url`, answered as JSON.
async fn rpc(
    app: &TestApp,
    method: Method,
    url: &str,
    token: Option<&str>,
    session: Option<&str>,
    body: Option<Value>,
) -> Res {
    let mut req = app
        .client
        .request(method, url)
        .header("accept", "application/json");
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    if let Some(s) = session {
        req = req.header("mcp-session-id", s);
    }
    if let Some(b) = body {
        req = req.json(&b);
    }
    Res::read(req.send().await.expect("request")).await
}

fn request(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

async fn initialize(app: &TestApp, url: &str, token: &str, version: &str) -> String {
    let res = rpc(
        app,
        Method::POST,
        url,
        Some(token),
        None,
        Some(request(
            0,
            "initialize",
            json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        )),
    )
    .await;
    assert_eq!(res.ok(200)["result"]["protocolVersion"], version);
    res.headers["mcp-session-id"].to_str().unwrap().to_string()
}

fn url_of(r: &McpRig, app: &TestApp) -> String {
    format!("{}/v1/agents/{}/mcp", app.address, r.agent)
}

async fn list(app: &TestApp, url: &str, token: &str, session: &str) -> Res {
    rpc(
        app,
        Method::POST,
        url,
        Some(token),
        Some(session),
        Some(request(1, "tools/list", json!({}))),
    )
    .await
}

#[tokio::test]
async fn m2_a_session_lives_on_every_replica_until_deleted_or_idle() {
    let r = mcp_rig().await;
    let url = url_of(&r, &r.app);
    let s = initialize(&r.app, &url, &r.token, "2025-06-18").await;
    assert!(
        list(&r.app, &url, &r.token, &s).await.ok(200)["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty())
    );

    // another replica on the same database serves it
    let other = spawn_with(test_settings(r.app.database_url.clone())).await;
    let other_url = url_of(&r, &other);
    list(&other, &other_url, &r.token, &s).await.ok(200);

    // an id never issued, one of another shape, another user's and another org's: 404
    let never = format!("mcp_{}", "A1b2".repeat(8));
    list(&r.app, &url, &r.token, &never)
        .await
        .problem(404, "not_found");
    list(&r.app, &url, &r.token, "mcp_nope")
        .await
        .problem(404, "not_found");
    let u2 = r
        .app
        .post(
            "/v1/runtime-tokens",
            &r.t.key,
            json!({"user_id": "u2", "agent_id": r.agent}),
        )
        .await
        .ok(201)["token"]
        .as_str()
        .unwrap()
        .to_string();
    list(&r.app, &url, &u2, &s).await.problem(404, "not_found");
    let foreign = r.app.tenant("other").await;
    list(&r.app, &url, &foreign.key, &s)
        .await
        .problem(404, "not_found");
    list(&r.app, &url, &r.token, &s).await.ok(200);

    // ended on one replica: 404 on both, for every method, and a second DELETE too
    let ended = rpc(
        &other,
        Method::DELETE,
        &other_url,
        Some(&r.token),
        Some(&s),
        None,
    )
    .await;
    assert_eq!(ended.status, 204, "{}", ended.text);
    list(&r.app, &url, &r.token, &s)
        .await
        .problem(404, "not_found");
    list(&other, &other_url, &r.token, &s)
        .await
        .problem(404, "not_found");
    let call = request(
        2,
        "tools/call",
        json!({"name": "greet", "arguments": {"who": "Ada"}}),
    );
    for body in [
        call,
        request(3, "ping", json!({})),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ] {
        rpc(
            &r.app,
            Method::POST,
            &url,
            Some(&r.token),
            Some(&s),
            Some(body.clone()),
        )
        .await
        .problem(404, "not_found");
    }
    rpc(&r.app, Method::GET, &url, Some(&r.token), Some(&s), None)
        .await
        .problem(404, "not_found");
    rpc(&r.app, Method::DELETE, &url, Some(&r.token), Some(&s), None)
        .await
        .problem(404, "not_found");
    // a live session's GET is the stream that is not offered
    let live = initialize(&r.app, &url, &r.token, "2025-11-25").await;
    rpc(&r.app, Method::GET, &url, Some(&r.token), Some(&live), None)
        .await
        .problem(405, "method_not_allowed");

    // the record: who, which version, when it ended
    let pool = PgPool::connect(&r.app.database_url).await.unwrap();
    let (owner, version, ended): (String, String, bool) = sqlx::query_as(
        "SELECT owner, protocol_version, ended_at IS NOT NULL FROM mcp_sessions WHERE id = $1",
    )
    .bind(&s)
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(
        (owner.as_str(), version.as_str(), ended),
        ("user:u1", "2025-06-18", true)
    );

    // idle past mcp_server_session_idle_seconds (a day by default): 404
    sqlx::query(
        "UPDATE mcp_sessions SET last_seen_at = now() - interval '86401 seconds' WHERE id = $1",
    )
    .bind(&live)
    .execute(&pool)
    .await
    .unwrap();
    list(&r.app, &url, &r.token, &live)
        .await
        .problem(404, "not_found");
    // and a new initialize starts afresh
    let fresh = initialize(&r.app, &url, &r.token, "2025-06-18").await;
    assert_ne!(fresh, s);
    list(&r.app, &url, &r.token, &fresh).await.ok(200);
}

#[tokio::test]
async fn m2_batches_only_in_a_2025_03_26_session_and_unknown_tools_are_32602() {
    let r = mcp_rig().await;
    let url = url_of(&r, &r.app);
    let old = initialize(&r.app, &url, &r.token, "2025-03-26").await;
    let batch = json!([
        request(1, "ping", json!({})),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        request(2, "tools/list", json!({})),
        request(3, "tools/call", json!({"name": "greet", "arguments": {"who": "Ada"}})),
        {"id": 4},
    ]);
    let res = rpc(
        &r.app,
        Method::POST,
        &url,
        Some(&r.token),
        Some(&old),
        Some(batch),
    )
    .await;
    let answers = res.ok(200).as_array().expect("an array").clone();
    assert_eq!(answers.len(), 4, "{answers:?}");
    assert_eq!(answers[0], json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    assert_eq!(answers[1]["id"], 2);
    assert!(answers[1]["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["name"] == "greet"));
    assert_eq!(answers[2]["id"], 3);
    assert!(
        answers[2]["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Hello, Ada!"),
        "{answers:?}"
    );
    assert_eq!(answers[3]["error"]["code"], -32600);
    // notifications only: accepted, nothing to answer
    let notes = json!([{"jsonrpc": "2.0", "method": "notifications/initialized"}]);
    let res = rpc(
        &r.app,
        Method::POST,
        &url,
        Some(&r.token),
        Some(&old),
        Some(notes),
    )
    .await;
    assert_eq!(res.status, 202, "{}", res.text);

    // 2025-06-18 removed batches; no session, no batch either
    let new = initialize(&r.app, &url, &r.token, "2025-06-18").await;
    let one = json!([request(1, "ping", json!({}))]);
    for session in [Some(new.as_str()), None] {
        let res = rpc(
            &r.app,
            Method::POST,
            &url,
            Some(&r.token),
            session,
            Some(one.clone()),
        )
        .await;
        assert_eq!(res.status, 400, "{}", res.text);
        assert_eq!(res.body["jsonrpc"], "2.0");
        assert_eq!(res.body["error"]["code"], -32600, "{}", res.text);
    }

    // a tool the agent does not have: JSON-RPC -32602, not a result
    let unknown = rpc(
        &r.app,
        Method::POST,
        &url,
        Some(&r.token),
        Some(&new),
        Some(request(
            5,
            "tools/call",
            json!({"name": "no_such_tool", "arguments": {}}),
        )),
    )
    .await;
    let body = unknown.ok(200);
    assert!(body.get("result").is_none(), "{body}");
    assert_eq!(body["error"]["code"], -32602, "{body}");
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("no_such_tool"));
    // a tool it has, with a wrong argument, stays a tool error the model reads
    let wrong = rpc(
        &r.app,
        Method::POST,
        &url,
        Some(&r.token),
        Some(&new),
        Some(request(
            6,
            "tools/call",
            json!({"name": "greet", "arguments": {"whom": "Ada"}}),
        )),
    )
    .await;
    assert_eq!(wrong.ok(200)["result"]["isError"], true, "{}", wrong.text);
}

#[tokio::test]
async fn m2_a_401_names_the_resource_metadata_and_a_foreign_agents_token_is_403() {
    let r = mcp_rig().await;
    let url = url_of(&r, &r.app);
    let init = request(
        0,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    let wanted = format!(
        "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource/v1/agents/{}/mcp\"",
        r.app.address, r.agent
    );
    // no token (the extractor), a bad one (the middleware): the same challenge, every method
    for token in [None, Some("lg_not_a_token")] {
        for method in [Method::POST, Method::GET, Method::DELETE] {
            let body = (method == Method::POST).then(|| init.clone());
            let res = rpc(&r.app, method.clone(), &url, token, None, body).await;
            res.problem(401, "unauthorized");
            assert_eq!(
                res.headers["www-authenticate"].to_str().unwrap(),
                wanted,
                "{method} {token:?}"
            );
        }
    }
    // other routes keep the plain challenge
    let plain = r.app.get("/v1/agents", "lg_not_a_token").await;
    assert_eq!(plain.headers["www-authenticate"], "Bearer");

    // the document the challenge names, without credentials
    let doc_url = wanted
        .trim_start_matches("Bearer resource_metadata=\"")
        .trim_end_matches('"');
    let doc = Res::read(r.app.client.get(doc_url).send().await.unwrap()).await;
    let doc = doc.ok(200);
    assert_eq!(doc["resource"], url);
    assert_eq!(doc["bearer_methods_supported"], json!(["header"]));
    assert!(doc.get("authorization_servers").is_none(), "{doc}");

    // a runtime token of another agent of the org: 403 on POST, GET and DELETE
    let (_, elsewhere) = r.app.agent_and_token(&r.t, vec![], "u1").await;
    let s = initialize(&r.app, &url, &r.token, "2025-06-18").await;
    for (method, body) in [
        (Method::POST, Some(init.clone())),
        (Method::POST, Some(request(1, "tools/list", json!({})))),
        (Method::GET, None),
        (Method::DELETE, None),
    ] {
        let res = rpc(
            &r.app,
            method.clone(),
            &url,
            Some(&elsewhere),
            Some(&s),
            body,
        )
        .await;
        res.problem(403, "forbidden");
    }
    // the session it named is untouched
    list(&r.app, &url, &r.token, &s).await.ok(200);
}

/// M2: a request of a session that names another `MCP-Protocol-Version` than the one it
/// negotiated is 400; naming the session's own, or none, is served.
#[tokio::test]
async fn m2_the_protocol_version_header_must_be_the_sessions() {
    let r = mcp_rig().await;
    let url = url_of(&r, &r.app);
    let s = initialize(&r.app, &url, &r.token, "2025-06-18").await;
    let send = |version: Option<&'static str>| {
        let mut req = r
            .app
            .client
            .post(&url)
            .header("accept", "application/json")
            .bearer_auth(&r.token)
            .header("mcp-session-id", &s)
            .json(&request(1, "tools/list", json!({})));
        if let Some(v) = version {
            req = req.header("mcp-protocol-version", v);
        }
        async move { Res::read(req.send().await.expect("request")).await }
    };
    for other in ["2025-03-26", "2025-11-25", "2024-11-05"] {
        let res = send(Some(other)).await;
        res.problem(400, "validation_failed");
        let detail = res.body["detail"].as_str().unwrap_or_default();
        assert!(
            detail.contains(other) && detail.contains("2025-06-18"),
            "{detail}"
        );
    }
    // a version no revision has is refused as before, naming the supported ones
    send(Some("1999-01-01"))
        .await
        .problem(400, "validation_failed");
    for same in [Some("2025-06-18"), None] {
        let res = send(same).await;
        assert!(res.ok(200)["result"]["tools"].is_array(), "{}", res.text);
    }
}
