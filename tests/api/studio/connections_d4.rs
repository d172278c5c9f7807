//! D4 against the authorization server started in the test: a provider configured with
//! its issuer alone (endpoints discovered), an `iss` from another issuer refused, refresh
//! failures classified (a transient one keeps the connection, `invalid_grant` breaks
//! it), an upstream 401 answered by one refresh and one retry, the margin scaled to the
//! token's lifetime, and revocation when a connection is deleted.

use serde_json::{json, Value};

use super::connections::{browser, html, setup, submit, Setup};
use crate::support::helpers::TestApp;
use crate::support::oauth_server::{self, AuthServer, CLIENT_ID, CLIENT_SECRET};

/// The user's connect link walked as a browser would; the callback's page.
async fn connect(app: &TestApp, s: &Setup, token: &str) -> (u16, String) {
    let link = s
        .call(app, token, "connect_toolkit", json!({"toolkit": "mail"}))
        .await;
    let url = link.ok(200)["result"]["url"].as_str().unwrap().to_string();
    let b = browser();
    let go = submit(&b, &url, &[("x", "")]).await;
    assert_eq!(go.status().as_u16(), 303);
    let authorize = go.headers()["location"].to_str().unwrap().to_string();
    let back = b.get(&authorize).send().await.unwrap();
    assert_eq!(back.status().as_u16(), 302, "{authorize}");
    let callback = back.headers()["location"].to_str().unwrap().to_string();
    html(
        b.get(&callback)
            .header("accept", "text/html")
            .send()
            .await
            .unwrap(),
    )
    .await
}

fn issuer_only(auth: &AuthServer) -> Value {
    json!({"type": "oauth2", "issuer": auth.base, "client_id": CLIENT_ID,
           "client_secret": CLIENT_SECRET, "scopes": ["mail.read"]})
}

async fn connected(app: &TestApp, s: &Setup, token: &str) -> bool {
    s.call(app, token, "list_connections", json!({}))
        .await
        .ok(200)["result"]["connections"][0]["connected"]
        .as_bool()
        .unwrap()
}

#[tokio::test]
async fn d4_issuer_alone_is_discovered_and_a_foreign_iss_is_refused() {
    let app = crate::runtime::discovery::spawn().await;
    let auth = oauth_server::start().await;
    let s = setup(&app, "mail", &auth.base, issuer_only(&auth)).await;
    let u1 = s.token(&app, "u1").await;
    // the server says it sends `iss`; an answer from another issuer connects nobody
    auth.state.lock().unwrap().iss = Some("https://evil.example".into());
    let (status, page) = connect(&app, &s, &u1).await;
    assert_eq!(status, 422, "{page}");
    assert!(
        page.contains("evil.example") && page.contains("RFC 9207"),
        "{page}"
    );
    assert!(!connected(&app, &s, &u1).await);
    s.call(&app, &u1, "list_mail", json!({}))
        .await
        .problem(409, "connect_required");
    // the server advertises `iss` but the answer has none: refused too
    auth.state.lock().unwrap().iss = None;
    {
        // the cached metadata still says it sends `iss`
        let (status, page) = connect(&app, &s, &u1).await;
        assert_eq!(status, 422, "{page}");
        assert!(page.contains("carried none"), "{page}");
    }
    // its own issuer: connected, with the endpoints from the metadata, read once
    auth.state.lock().unwrap().iss = Some(auth.base.clone());
    let (status, page) = connect(&app, &s, &u1).await;
    assert_eq!(status, 200, "{page}");
    assert!(connected(&app, &s, &u1).await);
    assert_eq!(auth.state.lock().unwrap().metadata_reads, 1, "cached");
    let list = app.get("/v1/connections?user_id=u1", &s.t.key).await;
    assert_eq!(
        list.ok(200)["data"][0]["refresh"],
        "available",
        "{}",
        list.text
    );

    // metadata naming another issuer is never used
    let other = oauth_server::start().await;
    other.state.lock().unwrap().metadata_issuer = Some("https://elsewhere.example".into());
    let s2 = setup(&app, "mail", &other.base, issuer_only(&other)).await;
    let u = s2.token(&app, "u1").await;
    let link = s2
        .call(&app, &u, "connect_toolkit", json!({"toolkit": "mail"}))
        .await;
    let url = link.ok(200)["result"]["url"].as_str().unwrap().to_string();
    let (status, page) = html(submit(&browser(), &url, &[("x", "")]).await).await;
    assert_eq!(status, 422, "{page}");
    assert!(page.contains("elsewhere.example"), "{page}");
}

#[tokio::test]
async fn d4_a_transient_refresh_failure_keeps_the_connection_invalid_grant_breaks_it() {
    let app = crate::runtime::discovery::spawn().await;
    let auth = oauth_server::start().await;
    let s = setup(&app, "mail", &auth.base, issuer_only(&auth)).await;
    let u1 = s.token(&app, "u1").await;
    assert_eq!(connect(&app, &s, &u1).await.0, 200);
    // tokens issued for 0 s: every call is due for a refresh
    for (status, code) in [(503, "temporarily_unavailable"), (500, "server_error")] {
        auth.state.lock().unwrap().refresh_error = Some((status, code));
        let r = s.call(&app, &u1, "list_mail", json!({})).await;
        r.problem(503, "connection_unavailable");
        assert_eq!(r.headers["retry-after"], "30");
        assert!(
            r.body["detail"]
                .as_str()
                .unwrap()
                .contains("does not need to connect again"),
            "{}",
            r.text
        );
        assert!(
            connected(&app, &s, &u1).await,
            "{code} keeps the connection"
        );
    }
    // the server is back: the same connection works
    auth.state.lock().unwrap().refresh_error = None;
    let r = s.call(&app, &u1, "list_mail", json!({})).await;
    assert_eq!(r.ok(200)["result"]["data"][0]["id"], 1, "{}", r.text);
    // the grant is dead: the user connects again
    auth.state.lock().unwrap().refresh_error = Some((400, "invalid_grant"));
    s.call(&app, &u1, "list_mail", json!({}))
        .await
        .problem(409, "connect_required");
    assert!(!connected(&app, &s, &u1).await);
}

#[tokio::test]
async fn d4_an_upstream_401_refreshes_once_and_retries_then_connect_required() {
    let app = crate::runtime::discovery::spawn().await;
    let auth = oauth_server::start().await;
    // an hour-long token: never due for a refresh in this test
    auth.state.lock().unwrap().expires_in = 3600;
    let s = setup(&app, "mail", &auth.base, issuer_only(&auth)).await;
    let u1 = s.token(&app, "u1").await;
    assert_eq!(connect(&app, &s, &u1).await.0, 200);
    let r = s.call(&app, &u1, "list_mail", json!({})).await;
    r.ok(200);
    assert_eq!(auth.state.lock().unwrap().refreshes, 0);
    // the API stops taking the token long before its expiry: refreshed and retried
    auth.state.lock().unwrap().api_refuse = vec!["Bearer at-1".into()];
    let r = s.call(&app, &u1, "list_mail", json!({})).await;
    assert_eq!(r.ok(200)["result"]["data"][0]["id"], 1, "{}", r.text);
    {
        let st = auth.state.lock().unwrap();
        assert_eq!(st.refreshes, 1);
        assert_eq!(
            st.api_auth[st.api_auth.len() - 2..],
            ["Bearer at-1", "Bearer at-2"]
        );
    }
    // refused again after the refresh: one refresh, one retry, then connect_required
    auth.state.lock().unwrap().api_refuse = vec!["Bearer at-2".into(), "Bearer at-3".into()];
    s.call(&app, &u1, "list_mail", json!({}))
        .await
        .problem(409, "connect_required");
    assert_eq!(
        auth.state.lock().unwrap().refreshes,
        2,
        "one refresh per call"
    );
    assert!(!connected(&app, &s, &u1).await);
}

#[tokio::test]
async fn d4_margin_scales_with_lifetime_and_delete_revokes() {
    let app = crate::runtime::discovery::spawn().await;
    let auth = oauth_server::start().await;
    // 3 s tokens: refreshed in their last second, not on every call (60 s margin)
    auth.state.lock().unwrap().expires_in = 3;
    let s = setup(&app, "mail", &auth.base, issuer_only(&auth)).await;
    let u1 = s.token(&app, "u1").await;
    assert_eq!(connect(&app, &s, &u1).await.0, 200);
    for _ in 0..3 {
        s.call(&app, &u1, "list_mail", json!({})).await.ok(200);
    }
    assert_eq!(
        auth.state.lock().unwrap().refreshes,
        0,
        "a fresh 3 s token is used"
    );
    tokio::time::sleep(std::time::Duration::from_millis(2300)).await;
    s.call(&app, &u1, "list_mail", json!({})).await.ok(200);
    assert_eq!(
        auth.state.lock().unwrap().refreshes,
        1,
        "refreshed in its last third"
    );
    assert_eq!(
        auth.state.lock().unwrap().api_auth.last().unwrap(),
        "Bearer at-2"
    );
    // DELETE revokes the refresh token at the discovered revocation endpoint
    let list = app.get("/v1/connections?user_id=u1", &s.t.key).await;
    let id = list.ok(200)["data"][0]["id"].as_str().unwrap().to_string();
    let del = app.delete(&format!("/v1/connections/{id}"), &s.t.key).await;
    assert_eq!(del.status.as_u16(), 204);
    assert_eq!(del.headers["loopgate-token-revocation"], "revoked");
    assert_eq!(
        auth.state.lock().unwrap().revoked_tokens,
        ["refresh_token:rt-2"]
    );
    s.call(&app, &u1, "list_mail", json!({}))
        .await
        .problem(409, "connect_required");
}
