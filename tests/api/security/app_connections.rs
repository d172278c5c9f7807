//! D4: a connected-app call reads the caller's connection of its toolkit with the agent,
//! in one statement, still sealed, and opens it only to send it: no connection query of
//! its own, and a reconnect or a removal on one replica is what the very next call on
//! another sees. Another user of the same agent never gets it. (The OAuth refresh path is
//! unchanged: `studio/connections.rs`.)

use serde_json::json;

use crate::studio::connections::{browser, html, setup, submit, Setup};
use crate::support::helpers::{fresh_database, spawn_with, test_settings, TestApp};
use crate::support::{oauth_server, sql_count};

/// The holder of `token` connects the `chat` toolkit with API key `key` through `app`.
async fn connect(app: &TestApp, s: &Setup, token: &str, key: &str) {
    let url = s
        .call(app, token, "connect_toolkit", json!({"toolkit": "chat"}))
        .await
        .ok(200)["result"]["url"]
        .as_str()
        .unwrap()
        .to_string();
    let (status, page) = html(submit(&browser(), &url, &[("api_key", key)]).await).await;
    assert_eq!(status, 200, "{page}");
}

#[tokio::test]
async fn d4_an_app_call_reads_its_connection_with_the_agent_and_sees_a_reconnect_anywhere() {
    let counter = sql_count::start(&fresh_database().await).await;
    let settings = || {
        let mut s = test_settings(counter.url.clone());
        s.org_requests_per_second = 10_000;
        s
    };
    let (a, b) = (spawn_with(settings()).await, spawn_with(settings()).await);
    let auth = oauth_server::start().await;
    let s = setup(
        &a,
        "chat",
        &auth.base,
        json!({"type": "api_key", "instructions": "Settings → API keys"}),
    )
    .await;
    let last_auth = || auth.state.lock().unwrap().api_auth.last().cloned();
    let u1 = s.token(&a, "u1").await;
    connect(&a, &s, &u1, "sk-one").await;
    let mail = |app, token| s.call(app, token, "list_mail", json!({}));
    mail(&b, &u1).await.ok(200);
    assert_eq!(last_auth().as_deref(), Some("Bearer sk-one"));

    a.vectors_settled().await;
    b.vectors_settled().await;
    let from = counter.statements();
    let r = mail(&b, &u1).await;
    assert_eq!(r.ok(200)["result"]["data"][0]["id"], 1, "{}", r.text);
    b.records_flushed().await;
    let sql = counter.sql_since(from);
    assert!(
        !sql.iter().any(|q| q.contains("FROM connections")),
        "the connection came with the agent: {sql:#?}"
    );
    // the agent (with its thread, credentials and connection), the call's record, its outcome
    assert!(sql.len() <= 3, "{} statements: {sql:#?}", sql.len());

    // reconnected with another key on A: B's very next call sends it
    connect(&a, &s, &u1, "sk-two").await;
    mail(&b, &u1).await.ok(200);
    assert_eq!(last_auth().as_deref(), Some("Bearer sk-two"));

    // another user of the same agent is not connected, whatever u1 holds
    let u2 = s.token(&a, "u2").await;
    let sent = auth.state.lock().unwrap().api_auth.len();
    mail(&b, &u2).await.problem(409, "connect_required");
    assert_eq!(auth.state.lock().unwrap().api_auth.len(), sent);

    // removed on A: B's next call of u1 answers connect_required and sends nothing
    let listed = a.get("/v1/connections?user_id=u1", &s.t.key).await;
    let id = listed.ok(200)["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    a.delete(&format!("/v1/connections/{id}"), &s.t.key)
        .await
        .ok(204);
    mail(&b, &u1).await.problem(409, "connect_required");
    assert_eq!(auth.state.lock().unwrap().api_auth.len(), sent);
}
