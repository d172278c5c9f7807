//! D3, D4: connecting toolkits as a browser would — OAuth 2.0 against an
//! authorization server started in the test (code, PKCE verifier checked by it,
//! refresh before expiry, a revoked refresh token → connect_required) and the API-key
//! form — and another user's connection never used.

use reqwest::redirect::Policy;
use serde_json::{json, Value};

use crate::support::helpers::{Tenant, TestApp};
use crate::support::oauth_server::{self, CLIENT_ID, CLIENT_SECRET};

pub(crate) struct Setup {
    pub t: Tenant,
    pub agent: String,
    /// The app provider.
    provider: String,
}

/// One app provider (`toolkit`) with a `list_mail` tool, next to one own API tool.
pub(crate) async fn setup(app: &TestApp, toolkit: &str, base: &str, connection: Value) -> Setup {
    let t = app.tenant("conn").await;
    let own = app.create_tool(&t.key, &t.provider, "own_list").await;
    let p = crate::runtime::discovery::app_provider(app, &t.key, toolkit, base, connection).await;
    // the provider as read back never shows the client secret
    let shown = app.get(&format!("/v1/providers/{p}"), &t.key).await;
    assert!(!shown.text.contains(CLIENT_SECRET), "{}", shown.text);
    let tool = app
        .post("/v1/tools", &t.key, json!({"provider_id": p, "name": "list_mail", "description": "List my mail",
            "method": "GET", "path": "/me/messages", "input_schema": {"type": "object", "properties": {}}}))
        .await
        .ok(201)["id"]
        .as_str()
        .unwrap()
        .to_string();
    let agent = app
        .post(
            "/v1/agents",
            &t.key,
            json!({"name": "a", "deployment_id": t.deployment, "agentTools": [
            {"tool_id": own, "provider_id": t.provider}, {"tool_id": tool, "provider_id": p}]}),
        )
        .await
        .ok(201)["id"]
        .as_str()
        .unwrap()
        .to_string();
    Setup {
        t,
        agent,
        provider: p,
    }
}

impl Setup {
    pub async fn token(&self, app: &TestApp, user: &str) -> String {
        app.post(
            "/v1/runtime-tokens",
            &self.t.key,
            json!({"user_id": user, "agent_id": self.agent}),
        )
        .await
        .ok(201)["token"]
            .as_str()
            .unwrap()
            .to_string()
    }
    pub async fn call(
        &self,
        app: &TestApp,
        token: &str,
        name: &str,
        args: Value,
    ) -> crate::support::helpers::Res {
        app.tool_call(&self.agent, token, "t1", name, args).await
    }
    async fn connected(&self, app: &TestApp, token: &str) -> Value {
        self.call(app, token, "list_connections", json!({}))
            .await
            .ok(200)["result"]["connections"]
            .clone()
    }
}

/// Submits a form the way a browser does (urlencoded, accepting HTML).
pub(crate) async fn submit(
    b: &reqwest::Client,
    url: &str,
    fields: &[(&str, &str)],
) -> reqwest::Response {
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(fields)
        .finish();
    b.post(url)
        .header("accept", "text/html")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .unwrap()
}

pub(crate) fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(Policy::none())
        .build()
        .unwrap()
}

pub(crate) async fn html(res: reqwest::Response) -> (u16, String) {
    let status = res.status().as_u16();
    let ct = res
        .headers()
        .get("content-type")
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    let body = res.text().await.unwrap();
    assert!(ct.starts_with("text/html"), "{ct}: {body}");
    (status, body)
}

/// Plain HTML: no script, no external asset.
fn plain(page: &str) {
    assert!(!page.to_lowercase().contains("<script"), "{page}");
    assert!(
        !page.contains("src=\"http") && !page.contains("href=\"http"),
        "{page}"
    );
    assert!(!page.contains("<link"), "{page}");
}

#[tokio::test]
async fn d4_oauth_flow_pkce_refresh_and_a_revoked_refresh_token() {
    let app = crate::runtime::discovery::spawn().await;
    let auth = oauth_server::start().await;
    let s = setup(&app, "mail", &auth.base, json!({"type": "oauth2",
        "authorize_url": format!("{}/authorize", auth.base), "token_url": format!("{}/token", auth.base),
        "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET, "scopes": ["mail.read"]})).await;
    let u1 = s.token(&app, "u1").await;
    let u2 = s.token(&app, "u2").await;
    // D3: the connection tools are offered; calling before connecting → connect_required
    let steps = app
        .post(
            &format!("/v1/agents/{}/threads/t1/steps", s.agent),
            &u1,
            json!({}),
        )
        .await;
    let names: Vec<&str> = steps.ok(200)["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"list_connections") && names.contains(&"connect_toolkit"),
        "{names:?}"
    );
    assert!(!names.contains(&"search_tools"), "nothing is pooled");
    assert_eq!(
        s.connected(&app, &u1).await,
        json!([{"toolkit": "mail", "connected": false}])
    );
    let r = s.call(&app, &u1, "list_mail", json!({})).await;
    r.problem(409, "connect_required");
    assert!(
        r.body["detail"]
            .as_str()
            .unwrap()
            .contains("connect_toolkit")
            && r.body["detail"].as_str().unwrap().contains("mail")
    );

    // the single-use link, walked as a browser would
    let link = s
        .call(&app, &u1, "connect_toolkit", json!({"toolkit": "mail"}))
        .await;
    let url = link.ok(200)["result"]["url"].as_str().unwrap().to_string();
    assert!(link.body["result"]["expires_at"].as_str().is_some());
    let b = browser();
    let (status, page) = html(
        b.get(&url)
            .header("accept", "text/html")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200);
    plain(&page);
    let path = url.trim_start_matches(&app.address).to_string();
    assert!(
        page.contains(&format!("<form method=\"post\" action=\"{path}\"")),
        "{page}"
    );
    let go = submit(&b, &url, &[("x", "")]).await;
    assert_eq!(go.status().as_u16(), 303);
    let authorize = go.headers()["location"].to_str().unwrap().to_string();
    assert!(
        authorize.starts_with(&format!("{}/authorize?", auth.base))
            && authorize.contains("code_challenge="),
        "{authorize}"
    );
    let back = b.get(&authorize).send().await.unwrap();
    assert_eq!(back.status().as_u16(), 302);
    let callback = back.headers()["location"].to_str().unwrap().to_string();
    assert!(callback.starts_with(&format!("{}/connect/callback?", app.address)));
    let (status, done) = html(
        b.get(&callback)
            .header("accept", "text/html")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{done}");
    assert!(done.contains("mail is connected"));
    plain(&done);
    assert_eq!(
        auth.state.lock().unwrap().pkce_checked,
        1,
        "the server checked the PKCE verifier"
    );
    // the link and the callback work once
    let again = app.client.get(&url).send().await.unwrap();
    assert_eq!(again.status().as_u16(), 404);
    assert_eq!(
        b.get(&callback).send().await.unwrap().status().as_u16(),
        404
    );

    // D4: connected; the token (issued for 0 s) is refreshed before use
    assert_eq!(
        s.connected(&app, &u1).await,
        json!([{"toolkit": "mail", "connected": true}])
    );
    let r = s.call(&app, &u1, "list_mail", json!({})).await;
    // the API saw the refreshed token (an echoed credential is redacted in results)
    assert_eq!(r.ok(200)["result"]["data"][0]["id"], 1, "{}", r.text);
    assert_eq!(
        auth.state.lock().unwrap().api_auth.last().unwrap(),
        "Bearer at-2"
    );
    assert_eq!(auth.state.lock().unwrap().refreshes, 1);
    // another user's connection is never used
    s.call(&app, &u2, "list_mail", json!({}))
        .await
        .problem(409, "connect_required");
    assert_eq!(
        s.connected(&app, &u2).await,
        json!([{"toolkit": "mail", "connected": false}])
    );
    assert!(auth
        .state
        .lock()
        .unwrap()
        .api_auth
        .iter()
        .all(|a| a == "Bearer at-2"));

    // a revoked refresh token: the refresh fails, the connection is broken
    auth.state.lock().unwrap().revoked = true;
    s.call(&app, &u1, "list_mail", json!({}))
        .await
        .problem(409, "connect_required");
    assert_eq!(
        s.connected(&app, &u1).await,
        json!([{"toolkit": "mail", "connected": false}])
    );

    // the customer backend lists (no secret) and removes it
    let list = app.get("/v1/connections?user_id=u1", &s.t.key).await;
    let data = list.ok(200)["data"].as_array().unwrap().clone();
    assert_eq!(data.len(), 1);
    assert_eq!(data[0]["toolkit"], "mail");
    assert!(
        !list.text.contains("at-") && !list.text.contains("rt-"),
        "{}",
        list.text
    );
    assert_eq!(
        app.get("/v1/connections?user_id=u2", &s.t.key)
            .await
            .ok(200)["data"],
        json!([])
    );
    let id = data[0]["id"].as_str().unwrap();
    assert_eq!(
        app.delete(&format!("/v1/connections/{id}"), &s.t.key)
            .await
            .status
            .as_u16(),
        204
    );
    app.delete(&format!("/v1/connections/{id}"), &s.t.key)
        .await
        .problem(404, "not_found");
    // another org cannot see it
    let other = app.tenant("other").await;
    assert_eq!(
        app.get("/v1/connections", &other.key).await.ok(200)["data"],
        json!([])
    );
}

#[tokio::test]
async fn d4_api_key_form_as_a_browser_submits_it() {
    let app = crate::runtime::discovery::spawn().await;
    let auth = oauth_server::start().await;
    let s = setup(
        &app,
        "chat",
        &auth.base,
        json!({"type": "api_key", "instructions": "Find it under Settings → API <keys>"}),
    )
    .await;
    let u1 = s.token(&app, "u1").await;
    let u2 = s.token(&app, "u2").await;
    let url = s
        .call(&app, &u1, "connect_toolkit", json!({"toolkit": "chat"}))
        .await
        .ok(200)["result"]["url"]
        .as_str()
        .unwrap()
        .to_string();
    let b = browser();
    let (status, page) = html(
        b.get(&url)
            .header("accept", "text/html")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200);
    plain(&page);
    assert!(
        page.contains("name=\"api_key\"") && page.contains("API &lt;keys&gt;"),
        "{page}"
    );
    let (status, done) = html(submit(&b, &url, &[("api_key", "sk-test-123")]).await).await;
    assert_eq!(status, 200, "{done}");
    assert!(done.contains("chat is connected"));
    let r = s.call(&app, &u1, "list_mail", json!({})).await;
    assert_eq!(r.ok(200)["result"]["data"][0]["id"], 1, "{}", r.text);
    assert_eq!(
        auth.state.lock().unwrap().api_auth.last().unwrap(),
        "Bearer sk-test-123"
    );
    s.call(&app, &u2, "list_mail", json!({}))
        .await
        .problem(409, "connect_required");
    // single use
    let (status, _) = html(submit(&b, &url, &[("api_key", "sk-other")]).await).await;
    assert_eq!(status, 404);
    let r = s.call(&app, &u1, "list_mail", json!({})).await;
    assert_eq!(r.ok(200)["result"]["data"][0]["id"], 1, "{}", r.text);
    assert_eq!(
        auth.state.lock().unwrap().api_auth.last().unwrap(),
        "Bearer sk-test-123"
    );
    s.call(&app, &u1, "connect_toolkit", json!({"toolkit": "nope"}))
        .await
        .problem(400, "invalid_arguments");
}

/// Connected apps' secrets are bound to where they were entered, like org credentials:
/// the OAuth client secret stays with its token endpoint's origin, and users' connection
/// tokens with the base URL they connected for.
#[tokio::test]
async fn app_provider_secrets_stay_where_they_were_entered() {
    let app = crate::runtime::discovery::spawn().await;
    let t = app.tenant("bind").await;
    let oauth = |token_url: &str, secret: Option<&str>| {
        let mut c = json!({"type": "oauth2", "authorize_url": "https://idp.example/authorize",
            "token_url": token_url, "client_id": CLIENT_ID});
        if let Some(s) = secret {
            c["client_secret"] = json!(s);
        }
        c
    };
    let p = crate::runtime::discovery::app_provider(
        &app,
        &t.key,
        "mail",
        "https://mail.example",
        oauth("https://idp.example/token", Some(CLIENT_SECRET)),
    )
    .await;
    let at = format!("/v1/providers/{p}");
    // the token endpoint moves to a server of the caller's choosing: secret required
    app.patch(
        &at,
        &t.key,
        json!({"connection": oauth("https://evil.example/token", None)}),
    )
    .await
    .problem(409, "credential_required");
    // same origin, another path: allowed without the secret
    app.patch(
        &at,
        &t.key,
        json!({"connection": oauth("https://idp.example/oauth/token", None)}),
    )
    .await
    .ok(200);
    // re-entering the secret with the move is allowed
    app.patch(
        &at,
        &t.key,
        json!({"connection": oauth("https://idp2.example/token", Some("new-secret"))}),
    )
    .await
    .ok(200);
    // users' connection tokens go to base_url: it cannot move to another origin
    app.patch(&at, &t.key, json!({"base_url": "https://evil.example"}))
        .await
        .problem(409, "conflict");
    app.patch(&at, &t.key, json!({"base_url": "https://mail.example/v2"}))
        .await
        .ok(200);
}

/// D4: calls due for a refresh at the same moment, with a server that rotates
/// refresh tokens (each works once), refresh one after the other on the connection's
/// row lock: every call succeeds and the connection is not marked broken (without the
/// lock, the second refresh presented the spent token and broke the connection).
#[tokio::test]
async fn d4_concurrent_refreshes_of_one_connection_do_not_break_it() {
    let app = crate::runtime::discovery::spawn().await;
    let auth = oauth_server::start().await;
    let s = setup(&app, "mail", &auth.base, json!({"type": "oauth2",
        "authorize_url": format!("{}/authorize", auth.base), "token_url": format!("{}/token", auth.base),
        "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET})).await;
    let u1 = s.token(&app, "u1").await;
    let link = s
        .call(&app, &u1, "connect_toolkit", json!({"toolkit": "mail"}))
        .await;
    crate::security::secrets::connect(&app, link.ok(200)["result"]["url"].as_str().unwrap()).await;
    // the server's tokens live 30 s, inside the refresh margin: every call refreshes
    let calls = (0..6).map(|_| s.call(&app, &u1, "list_mail", json!({})));
    for r in futures_util::future::join_all(calls).await {
        assert_eq!(r.ok(200)["result"]["data"][0]["id"], 1, "{}", r.text);
    }
    let (refreshes, issued, last) = {
        let st = auth.state.lock().unwrap();
        (st.refreshes, st.issued, st.api_auth.last().cloned())
    };
    assert_eq!(
        refreshes, 6,
        "one refresh per call, none with a spent token"
    );
    assert_eq!(last, Some(format!("Bearer at-{issued}")));
    assert_eq!(
        s.connected(&app, &u1).await,
        json!([{"toolkit": "mail", "connected": true}])
    );
}

/// Users' refresh tokens belong to the token endpoint that issued them. Once a
/// user has connected, `connection.token_url` cannot move to another origin — not even
/// with the client secret re-entered (before: 200, and the next refresh sent the user's
/// refresh token to the new server), nor by way of an API-key connection and back — and
/// the next refresh still goes to the original server.
#[tokio::test]
async fn d4_token_url_cannot_move_under_connected_users() {
    let app = crate::runtime::discovery::spawn().await;
    let auth = oauth_server::start().await;
    let oauth = |token_url: String| {
        json!({"type": "oauth2", "authorize_url": format!("{}/authorize", auth.base),
            "token_url": token_url, "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET})
    };
    let s = setup(
        &app,
        "mail",
        &auth.base,
        oauth(format!("{}/token", auth.base)),
    )
    .await;
    let at = format!("/v1/providers/{}", s.provider);
    let u1 = s.token(&app, "u1").await;
    let link = s
        .call(&app, &u1, "connect_toolkit", json!({"toolkit": "mail"}))
        .await;
    crate::security::secrets::connect(&app, link.ok(200)["result"]["url"].as_str().unwrap()).await;
    let evil = "https://evil.example/token".to_string();
    app.patch(&at, &s.t.key, json!({"connection": oauth(evil.clone())}))
        .await
        .problem(409, "conflict");
    // same origin, another path: still allowed
    app.patch(
        &at,
        &s.t.key,
        json!({"connection": oauth(format!("{}/token", auth.base))}),
    )
    .await
    .ok(200);
    // the server's tokens live 30 s, inside the refresh margin: the call refreshes there
    let r = s.call(&app, &u1, "list_mail", json!({})).await;
    assert_eq!(r.ok(200)["result"]["data"][0]["id"], 1, "{}", r.text);
    assert_eq!(auth.state.lock().unwrap().refreshes, 1);
    // nor by way of an API-key connection and back: the issuer is no longer known
    app.patch(
        &at,
        &s.t.key,
        json!({"connection": {"type": "api_key", "instructions": "paste it"}}),
    )
    .await
    .ok(200);
    app.patch(&at, &s.t.key, json!({"connection": oauth(evil)}))
        .await
        .problem(409, "conflict");
}

/// D4, in the shared process (a slow endpoint must not exhaust the replica's pool): calls
/// of one user due for a refresh while the token endpoint is slow wait in the replica,
/// not each in a database transaction: with the endpoint held, no session of the database
/// waits for the connection's row lock (before: every other call did, each holding one of
/// the replica's pool connections until its turn).
#[tokio::test]
async fn d4_refresh_waiters_hold_no_database_session() {
    let app = crate::runtime::discovery::spawn().await;
    let auth = oauth_server::start().await;
    let s = setup(&app, "mail", &auth.base, json!({"type": "oauth2",
        "authorize_url": format!("{}/authorize", auth.base), "token_url": format!("{}/token", auth.base),
        "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET})).await;
    let u1 = s.token(&app, "u1").await;
    let link = s
        .call(&app, &u1, "connect_toolkit", json!({"toolkit": "mail"}))
        .await;
    crate::security::secrets::connect(&app, link.ok(200)["result"]["url"].as_str().unwrap()).await;
    let db = sqlx::PgPool::connect(&app.database_url).await.unwrap();
    let lock_waiters = || async {
        sqlx::query_scalar::<_, i64>(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
             AND wait_event_type = 'Lock'",
        )
        .fetch_one(&db)
        .await
        .unwrap()
    };
    let gate_waiters = || async {
        let m = app.call(reqwest::Method::GET, "/metrics", None, None).await;
        m.text
            .lines()
            .find_map(|l| l.strip_prefix("loopgate_connection_refreshes_waiting "))
            .map_or(0, |v| v.parse::<f64>().unwrap() as i64)
    };
    let held = auth.hold.gate.write().await;
    let calls =
        futures_util::future::join_all((0..4).map(|_| s.call(&app, &u1, "list_mail", json!({}))));
    let watch = async {
        // one refresh at the token endpoint, and the three other calls waiting somewhere
        let mut waiting = (0, 0);
        for _ in 0..1200 {
            waiting = (lock_waiters().await, gate_waiters().await);
            // settled: the three in the replica's gate, or (before) at the row lock
            if auth.hold.arrived() == 1 && (waiting.1 == 3 || waiting.0 >= 3) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        drop(held);
        waiting
    };
    let (responses, (in_db, in_replica)) = tokio::join!(calls, watch);
    assert_eq!(
        (in_db, in_replica),
        (0, 3),
        "waiting for the row lock in the database / in the replica"
    );
    for r in responses {
        assert_eq!(r.ok(200)["result"]["data"][0]["id"], 1, "{}", r.text);
    }
    assert_eq!(auth.state.lock().unwrap().refreshes, 4);
}
