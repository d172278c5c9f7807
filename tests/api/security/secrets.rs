//! The secrets test: one realistic run of the real binary (logging at DEBUG) using every
//! kind of secret — org provider credentials (a bearer, an API key in the query, a
//! `Basic` header), a runtime token's own per-user credential, a connected app's OAuth
//! tokens, an MCP server's bearer, the runtime token itself and the org key — against
//! upstreams that echo the credential they got in successful bodies, next links, response
//! headers and error bodies. Then no secret (raw, URL-encoded, JSON-escaped; for `Basic`
//! also its base64 and the decoded `user:password`) may appear in the logs, in any
//! response we returned (bodies and headers, errors included), in any text of any row of
//! any table (generated from the catalog, so a new table is covered), in any Redis key or
//! value, or in the OpenAPI document.

mod haystacks;

use std::process::Stdio;

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use base64::Engine as _;
use reqwest::redirect::Policy;
use serde_json::{json, Value};

use crate::support::helpers::{fresh_database, TestApp, ADMIN};
use crate::support::mcp_upstream::McpUpstream;
use crate::support::oauth_server::{self, CLIENT_ID, CLIENT_SECRET};
use haystacks::{database_text, redis_text, Haystacks};

/// What the echo API saw: every header and query form a credential could take.
fn seen(req: &HttpRequest) -> Value {
    let header = |name: &str| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string()
    };
    let auth = header("authorization");
    let basic = auth
        .strip_prefix("Basic ")
        .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
        .map(|d| String::from_utf8_lossy(&d).into_owned());
    let query: Vec<(String, String)> = url::form_urlencoded::parse(req.query_string().as_bytes())
        .into_owned()
        .collect();
    json!({"auth": auth, "key": header("x-api-key"), "query": req.query_string(),
           "decoded": query, "basic": basic})
}

/// `GET /items?page=`: three pages of one row each, every row, the next link and a
/// response header echoing the credential. `GET /fail`: a 401 echoing it.
async fn echo(req: HttpRequest) -> HttpResponse {
    let seen = seen(&req);
    let text = seen.to_string();
    if req.path() == "/fail" {
        return HttpResponse::Unauthorized()
            .insert_header(("x-echo", text.clone()))
            .json(json!({"error": format!("invalid credential: {text}"), "seen": seen}));
    }
    let page: u32 = url::form_urlencoded::parse(req.query_string().as_bytes())
        .find(|(k, _)| k == "page")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(1);
    let info = req.connection_info().clone();
    let mut next = url::Url::parse(&format!("http://{}/items", info.host())).unwrap();
    next.query_pairs_mut()
        .append_pair("page", &(page + 1).to_string())
        .append_pair("echo", &text);
    let next = (page < 3).then(|| next.to_string());
    // written the way Go's encoder does: `<`, `>`, `&` as `\u00XX` inside strings
    let body = json!({"data": [{"id": page, "seen": seen}], "next": next})
        .to_string()
        .replace('&', "\\u0026")
        .replace('<', "\\u003c")
        .replace('>', "\\u003e");
    HttpResponse::Ok()
        .insert_header(("x-echo", text.clone()))
        .content_type("application/json")
        .body(body)
}

async fn start_echo() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = HttpServer::new(|| App::new().default_service(web::to(echo)))
        .workers(1)
        .listen(listener)
        .unwrap()
        .run();
    tokio::spawn(server);
    format!("http://127.0.0.1:{port}")
}

/// The connect link walked as a browser would: the page, its form, the authorization
/// server, the callback.
pub async fn connect(app: &TestApp, link: &str) {
    let b = reqwest::Client::builder()
        .redirect(Policy::none())
        .build()
        .unwrap();
    let page = b
        .get(link)
        .header("accept", "text/html")
        .send()
        .await
        .unwrap();
    assert_eq!(page.status().as_u16(), 200);
    let go = b
        .post(link)
        .header("accept", "text/html")
        .header("content-type", "application/x-www-form-urlencoded")
        .body("x=")
        .send()
        .await
        .unwrap();
    assert_eq!(go.status().as_u16(), 303);
    let authorize = go.headers()["location"].to_str().unwrap().to_string();
    let back = b.get(&authorize).send().await.unwrap();
    let callback = back.headers()["location"].to_str().unwrap().to_string();
    assert!(callback.starts_with(&format!("{}/connect/callback?", app.address)));
    let done = b
        .get(&callback)
        .header("accept", "text/html")
        .send()
        .await
        .unwrap();
    assert_eq!(
        done.status().as_u16(),
        200,
        "{}",
        done.text().await.unwrap()
    );
}

async fn create(app: &TestApp, key: &str, path: &str, body: Value) -> String {
    app.post(path, key, body).await.ok(201)["id"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn no_secret_reaches_logs_responses_storage_cache_or_the_document() {
    let Some(redis_url) = crate::support::services::require_redis_url() else {
        return; // the binary needs the Redis scripts/test starts
    };
    let r = loopgate::crypto::random_token(12);
    let s_bearer = format!("org-bearer-{r}");
    let s_query = format!("org/query+key={r}&x");
    let s_user = format!("user-own-{r}");
    let basic_pair = format!("alice-{r}:pw/{r}+x");
    let s_basic = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(&basic_pair)
    );
    // a quote: escaped once more inside a JSON text payload, past the byte-level redaction
    let s_mcp = format!("mcp-bearer-{r}\"q");

    let db = fresh_database().await;
    let log_path = std::env::temp_dir().join(format!("loopgate-secrets-{r}.log"));
    let log = std::fs::File::create(&log_path).unwrap();
    let node = crate::faults::replicas::binary(
        &db,
        &[
            ("RUST_LOG", "debug".to_string()),
            ("LOOPGATE_ORG_REQUESTS_PER_SECOND", "10000".to_string()),
        ],
        Stdio::from(log),
    )
    .await;
    let app = &node.app;
    let mut hay = Haystacks::default();

    // The tenant: its key is returned once, by its own creation.
    let org = app
        .post("/v1/orgs", ADMIN, json!({"name": "secrets"}))
        .await
        .ok(201)["id"]
        .as_str()
        .unwrap()
        .to_string();
    let made = app
        .post(
            &format!("/v1/orgs/{org}/api-keys"),
            ADMIN,
            json!({"name": "k", "scopes": ["studio", "mint", "runtime"]}),
        )
        .await;
    let key = made.ok(201)["key"].as_str().unwrap().to_string();
    hay.response_allowing("POST api-keys", &made, &["org key"]);
    let deployment = create(
        app,
        ADMIN,
        &format!("/v1/orgs/{org}/deployments"),
        json!({"name": "d", "cache": "on"}),
    )
    .await;

    // Four HTTP providers on the echo API, one per way a credential travels.
    let echo_base = start_echo().await;
    let providers = [
        (
            "bearer",
            json!({"type": "bearer"}),
            Some(s_bearer.clone()),
            false,
        ),
        (
            "query",
            json!({"type": "query", "name": "api_key"}),
            Some(s_query.clone()),
            false,
        ),
        (
            "basic",
            json!({"type": "header", "name": "Authorization"}),
            Some(s_basic.clone()),
            false,
        ),
        (
            "user",
            json!({"type": "header", "name": "X-Api-Key"}),
            None,
            true,
        ),
    ];
    let page = json!({"type": "integer"});
    let per_page = json!({"type": "integer", "maximum": 10});
    let mut bindings = Vec::new();
    let mut user_provider = String::new();
    for (name, auth, credential, user_only) in &providers {
        let mut body = json!({"name": name, "base_url": echo_base, "auth": auth,
                              "user_credentials_required": user_only});
        if let Some(c) = credential {
            body["credential"] = json!(c);
        }
        let res = app.post("/v1/providers", &key, body).await;
        hay.response(&format!("POST provider {name}"), &res);
        let provider = res.ok(201)["id"].as_str().unwrap().to_string();
        if *user_only {
            user_provider = provider.clone();
        }
        for (tool, path) in [("items", "/items"), ("fail", "/fail")] {
            let schema = if tool == "items" {
                json!({"type": "object", "properties": {"page": page, "per_page": per_page}})
            } else {
                json!({"type": "object", "properties": {}})
            };
            let id = create(
                app,
                &key,
                "/v1/tools",
                json!({"provider_id": provider,
                "name": format!("{name}_{tool}"), "description": format!("{tool} of {name}"),
                "method": "GET", "path": path, "input_schema": schema}),
            )
            .await;
            bindings.push(json!({"tool_id": id, "provider_id": provider, "loop_responses": true}));
        }
    }

    // An MCP server with the bearer, echoing it from extra tools.
    let mcp = McpUpstream::default();
    mcp.extra.lock().unwrap().extend([
        "echo_structured",
        "echo_json_text",
        "echo_text",
        "echo_error",
    ]);
    let mcp_url = mcp.start().await;
    let res = app
        .post(
            "/v1/providers",
            &key,
            json!({"kind": "mcp", "name": "docs", "url": mcp_url, "auth": {"type": "bearer"}, "credential": s_mcp}),
        )
        .await;
    hay.response("POST mcp provider", &res);
    let mcp_provider = res.ok(201)["id"].as_str().unwrap().to_string();
    let sync = app
        .post(
            &format!("/v1/providers/{mcp_provider}/sync"),
            &key,
            json!({}),
        )
        .await;
    hay.response("sync", &sync);
    for t in sync.ok(200)["data"].as_array().unwrap() {
        if t["name"].as_str().unwrap().starts_with("echo") {
            bindings.push(
                json!({"tool_id": t["id"], "provider_id": mcp_provider, "loop_responses": true}),
            );
        }
    }

    // A connected app (OAuth) whose API echoes the connection's bearer.
    let auth = oauth_server::start().await;
    auth.state.lock().unwrap().token_prefix = format!("{r}-");
    let app_provider = crate::runtime::discovery::app_provider(
        app,
        &key,
        "mail",
        &auth.base,
        json!({"type": "oauth2", "authorize_url": format!("{}/authorize", auth.base),
               "token_url": format!("{}/token", auth.base), "client_id": CLIENT_ID,
               "client_secret": CLIENT_SECRET, "scopes": ["mail.read"]}),
    )
    .await;
    let mail = create(
        app,
        &key,
        "/v1/tools",
        json!({"provider_id": app_provider,
        "name": "list_mail", "description": "List my mail", "method": "GET",
        "path": "/me/messages", "input_schema": {"type": "object", "properties": {}}}),
    )
    .await;
    bindings.push(json!({"tool_id": mail, "provider_id": app_provider}));

    let agent = create(
        app,
        &key,
        "/v1/agents",
        json!({"name": "a", "deployment_id": deployment,
        "instructions": "Use the tools.", "agentTools": bindings}),
    )
    .await;
    let minted = app
        .post(
            "/v1/runtime-tokens",
            &key,
            json!({"user_id": "u1", "agent_id": agent, "credentials": {user_provider.clone(): s_user}}),
        )
        .await;
    let token = minted.ok(201)["token"].as_str().unwrap().to_string();
    hay.response_allowing("POST runtime-tokens", &minted, &["runtime token"]);

    // The run: every tool, walked, single page and failing; the org key calls too.
    let mut calls = Vec::new();
    let mut call = |name: String, args: Value, caller: String| {
        calls.push((name, args, caller));
    };
    for (p, ..) in &providers {
        call(
            format!("{p}_items"),
            json!({"_all_pages": true}),
            token.clone(),
        );
        call(format!("{p}_items"), json!({}), token.clone());
        call(format!("{p}_fail"), json!({}), token.clone());
    }
    call(
        "bearer_items".into(),
        json!({"_all_pages": true}),
        key.clone(),
    );
    for t in [
        "echo_structured",
        "echo_json_text",
        "echo_text",
        "echo_error",
    ] {
        call(t.into(), json!({}), token.clone());
    }
    let mut redacted = 0;
    for (i, (name, args, caller)) in calls.into_iter().enumerate() {
        let res = app
            .tool_call(&agent, &caller, &format!("t{i}"), &name, args.clone())
            .await;
        hay.response(&format!("tool call {name} {args}"), &res);
        redacted += res.text.matches("[redacted]").count();
        if let Some(id) = res.body["id"].as_str() {
            let read = app.get(&format!("/v1/tool-calls/{id}"), &caller).await;
            hay.response(&format!("GET tool call {name}"), &read);
            // the call's event stream, replayed whole (the call is over; the timeout only
            // guards against a hang)
            let events = app
                .client
                .get(format!("{}/v1/tool-calls/{id}/events", app.address))
                .bearer_auth(&caller)
                .send();
            let events = tokio::time::timeout(std::time::Duration::from_secs(60), async {
                events.await.unwrap().text().await.unwrap()
            })
            .await
            .expect("a finished call's events end");
            assert!(events.contains("data:"), "{events}");
            hay.add(format!("events of {name}"), events);
        }
    }
    // a workflow run walking two of them: its stored outcome and its answers
    let steps = json!([
        {"id": "q", "type": "tool", "tool": "query_items", "input": {}, "loop": {"all_pages": true}},
        {"id": "u", "type": "tool", "tool": "user_items", "input": {}},
    ]);
    let wf = create(
        app,
        &key,
        "/v1/workflows",
        json!({"name": "wf", "agent_id": agent, "steps": steps}),
    )
    .await;
    let run = app
        .post(&format!("/v1/workflows/{wf}/runs"), &token, json!({}))
        .await;
    hay.response("workflow run", &run);
    redacted += run.text.matches("[redacted]").count();
    let read = app
        .get(
            &format!(
                "/v1/workflows/{wf}/runs/{}",
                run.ok(201)["id"].as_str().unwrap()
            ),
            &token,
        )
        .await;
    hay.response("GET workflow run", &read);
    let link = app
        .tool_call(
            &agent,
            &token,
            "mail",
            "connect_toolkit",
            json!({"toolkit": "mail"}),
        )
        .await;
    let url = link.ok(200)["result"]["url"].as_str().unwrap().to_string();
    connect(app, &url).await;
    let res = app
        .tool_call(&agent, &token, "mail", "list_mail", json!({}))
        .await;
    hay.response("tool call list_mail", &res);
    assert_eq!(res.status.as_u16(), 200, "{}", res.text);
    redacted += res.text.matches("[redacted]").count();
    let listed = app.get("/v1/connections?user_id=u1", &key).await;
    hay.response("GET connections", &listed);
    for path in ["/openapi.json", "/metrics"] {
        let res = app.call(reqwest::Method::GET, path, None, None).await;
        hay.response(path, &res);
    }
    let doc = app
        .call(reqwest::Method::GET, "/openapi.json", None, None)
        .await;
    assert!(doc.text.len() > 10_000);

    // The upstreams did get every secret, and echoed it back: the run tested something.
    let (issued, api_auth) = {
        let st = auth.state.lock().unwrap();
        (st.issued, st.api_auth.clone())
    };
    assert!(
        issued >= 1 && api_auth.contains(&format!("Bearer at-{r}-{issued}")),
        "the app API got the connection token: {api_auth:?}"
    );
    mcp.assert_auth(&format!("Bearer {s_mcp}"));

    drop(node);
    let logs = std::fs::read_to_string(&log_path).unwrap();
    let _ = std::fs::remove_file(&log_path);
    assert!(
        logs.contains("DEBUG"),
        "the binary logged at debug level: {}",
        &logs[..logs.len().min(500)]
    );
    hay.add("the logs", logs);
    for (table, text) in database_text(&db).await {
        hay.add(format!("table {table}"), text);
    }
    // The Redis is shared with tests running alongside: this org's keys and every key
    // that belongs to no org (other orgs' data may hold the shared test constants).
    let redis = redis_text(&redis_url).await;
    assert!(
        redis.iter().any(|(k, _)| k.contains(org.as_str())),
        "no key of this org in Redis"
    );
    for (k, v) in redis {
        if k.contains(org.as_str()) || !k.contains("org_") {
            hay.add(format!("redis {k}"), format!("{k}\n{v}"));
        }
    }

    let secrets: Vec<(&'static str, String)> = vec![
        ("org bearer credential", s_bearer),
        ("org query credential", s_query),
        ("org basic credential", s_basic.clone()),
        (
            "org basic credential, base64",
            s_basic.trim_start_matches("Basic ").to_string(),
        ),
        ("org basic credential, user:password", basic_pair.clone()),
        (
            "org basic credential, password",
            basic_pair.split_once(':').unwrap().1.to_string(),
        ),
        ("user credential", s_user),
        ("MCP credential", s_mcp),
    ];
    let mut secrets = secrets;
    for n in 1..=issued {
        secrets.push(("connection access token", format!("at-{r}-{n}")));
        secrets.push(("connection refresh token", format!("rt-{r}-{n}")));
    }
    secrets.extend([
        ("OAuth client secret", CLIENT_SECRET.to_string()),
        ("runtime token", token),
        ("org key", key),
        ("admin token", ADMIN.to_string()),
    ]);
    let leaks = hay.leaks(&secrets);
    assert!(
        leaks.is_empty(),
        "{} leaks:\n{}",
        leaks.len(),
        leaks.join("\n\n")
    );
    // …and the echoes came back, redacted: the run tested something.
    assert!(redacted >= 10, "echoes were redacted only {redacted} times");
}
