//! Dependency faults: Postgres or Redis stopped under a running app, then started again,
//! each an instance of the test's own.
//! - Postgres down: every API that needs it answers 503 problem+json with `Retry-After`,
//!   `/readyz` is unready, and the same process serves again once it is back.
//! - Redis down: tool calls keep working, fetched fresh (G3, G5 and C1 held in process),
//!   the degradation reported in the result (`_degraded`), `/readyz` detail and metrics;
//!   back to normal once Redis answers.

use std::time::Duration;

use reqwest::Method;
use serde_json::{json, Value};

use crate::support::helpers::{fresh_database, spawn_with, test_settings, Res, TestApp};
use crate::support::rig::Rig;
use crate::support::services;
use crate::support::upstream_server::{self, CONTACTS};

async fn readyz(app: &TestApp) -> Res {
    app.call(Method::GET, "/readyz", None, None).await
}

/// Polls `/readyz` until `done` holds (bounded; the dependency is starting up).
async fn wait_ready(app: &TestApp, done: impl Fn(&Res) -> bool) -> Res {
    for _ in 0..120 {
        let r = readyz(app).await;
        if done(&r) {
            return r;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    panic!("/readyz never got there");
}

fn retry_after(r: &Res) -> u64 {
    r.headers
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no Retry-After: {}", r.text))
}

#[tokio::test]
async fn postgres_down_answers_503_with_retry_after_and_recovers_without_restart() {
    let Some(pg) = services::require_postgres_bins().await else {
        return;
    };
    let app = spawn_with(test_settings(pg.url())).await;
    let up = upstream_server::start().await;
    let rig = Rig::new(&app, &up, true).await;
    let token = rig.token(&app, "u1", json!({})).await;
    rig.call(&app, &token, "t", "list_contacts", json!({}))
        .await
        .ok(200);
    // its record is written behind the answer (K1): in Postgres before it stops, so the
    // outage starts with nothing waiting
    app.records_flushed().await;

    pg.stop().await;
    // an org key (checked against the database) on a Studio route
    let r = app.get("/v1/agents", &rig.t.key).await;
    r.problem(503, "unavailable");
    assert!(retry_after(&r) >= 1);
    // a runtime token (verified without the database) on a tool call
    let r = rig
        .call(&app, &token, "t", "list_contacts", json!({}))
        .await;
    r.problem(503, "unavailable");
    assert!(retry_after(&r) >= 1);
    assert!(!r.text.contains("postgres://"), "{}", r.text);
    let r = readyz(&app).await;
    r.problem(503, "unavailable");
    assert!(r.body["detail"].as_str().unwrap().contains("postgres"));
    assert!(retry_after(&r) >= 1);

    pg.start_again().await;
    let r = wait_ready(&app, |r| r.status.as_u16() == 200).await;
    assert_eq!(r.body["status"], "ready", "{}", r.text);
    app.get("/v1/agents", &rig.t.key).await.ok(200);
    let r = rig
        .call(
            &app,
            &token,
            "t",
            "list_contacts",
            json!({"_all_pages": true}),
        )
        .await;
    assert_eq!(r.ok(200)["result"]["_itemCount"], CONTACTS);
}

async fn walk(rig: &Rig, app: &TestApp, token: &str, thread: &str) -> Value {
    let r = rig
        .call(
            app,
            token,
            thread,
            "list_contacts",
            json!({"_all_pages": true}),
        )
        .await;
    let v = r.ok(200)["result"].clone();
    assert_eq!(v["_itemCount"], CONTACTS, "{v}");
    assert_eq!(v["_pagingComplete"], true, "{v}");
    v
}

fn metric(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("no metric {name}"))
}

#[tokio::test]
async fn redis_down_keeps_tool_calls_working_degraded_and_reported_then_recovers() {
    let Some(mut redis) = services::require_redis_server().await else {
        return;
    };
    let mut s = test_settings(fresh_database().await);
    s.redis_url = Some(redis.url().into());
    let app = spawn_with(s).await;
    let up = upstream_server::start().await;
    let rig = Rig::new(&app, &up, true).await;
    let token = rig.token(&app, "u1", json!({})).await;
    assert_eq!(readyz(&app).await.ok(200)["status"], "ready");
    let healthy = walk(&rig, &app, &token, "a").await;
    assert!(healthy.get("_degraded").is_none(), "{healthy}");
    // C1: the same walk again is a hit from Redis
    assert_eq!(walk(&rig, &app, &token, "a").await["_cache"]["hit"], true);

    redis.stop().await;
    // the cached entry cannot be read: walked fresh, and says why
    let before = up.count("/contacts");
    let r = walk(&rig, &app, &token, "b").await;
    assert!(up.count("/contacts") > before, "fetched from upstream");
    assert!(r.get("_cache").is_none(), "not a hit: {r}");
    let note = r["_degraded"]
        .as_str()
        .expect("the result says it is degraded");
    assert!(note.contains("Redis"), "{note}");
    // G3: its stored result is readable on this replica
    let rid = r["_resultId"].as_str().unwrap();
    let q = rig
        .call(
            &app,
            &token,
            "b",
            "queryToolResult",
            json!({"resultId": rid, "filter": [{"field": "id", "op": "lt", "value": 10}]}),
        )
        .await;
    assert_eq!(q.ok(200)["result"]["total"], 10);
    // G5: a cut result still restricts its thread
    let cut = rig
        .call(&app, &token, "g5", "list_inboxes", json!({}))
        .await;
    assert_eq!(cut.ok(200)["result"]["_truncated"], true);
    assert_eq!(rig.steps(&app, &token, "g5").await["restricted"], true);
    rig.call(&app, &token, "g5", "list_contacts", json!({}))
        .await
        .problem(409, "retrieval_required");
    // reported: readiness detail (still ready: calls work) and metrics
    let ready = readyz(&app).await;
    let ready = ready.ok(200);
    assert_eq!(ready["status"], "degraded", "{ready}");
    assert!(ready["detail"].to_string().contains("redis"), "{ready}");
    let m = app.call(Method::GET, "/metrics", None, None).await;
    assert_eq!(metric(&m.text, "loopgate_result_store_degraded"), 1.0);
    assert!(metric(&m.text, "loopgate_result_store_fallbacks_total") > 0.0);

    redis.start_again().await;
    // authenticated calls let the quotas see Redis again too
    let mut back = false;
    for _ in 0..120 {
        rig.steps(&app, &token, "c").await;
        let r = readyz(&app).await;
        if r.body["status"] == "ready" {
            assert!(r.body.get("detail").is_none(), "{}", r.text);
            back = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(back, "/readyz never said ready again");
    let r = walk(&rig, &app, &token, "c").await;
    assert!(r.get("_degraded").is_none(), "{r}");
    let m = app.call(Method::GET, "/metrics", None, None).await;
    assert_eq!(metric(&m.text, "loopgate_result_store_degraded"), 0.0);
}
