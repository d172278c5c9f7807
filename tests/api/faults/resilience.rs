//! A client that leaves mid-walk loses nothing; a bound on concurrent walks per org;
//! the in-process store when Redis is not configured.

use std::time::Duration;

use serde_json::{json, Value};

use crate::support::helpers::{fresh_database, spawn_with, test_settings};
use crate::support::rig::Rig;
use crate::support::upstream_server;

#[tokio::test]
async fn a_client_that_disconnects_mid_walk_loses_nothing_and_walks_are_bounded_per_org() {
    let mut s = test_settings(fresh_database().await);
    s.org_concurrent_walks = 1;
    let app = spawn_with(s).await;
    let up = upstream_server::start().await;
    let rig = Rig::new(&app, &up, true).await;
    rig.bind_limited(&app, &up.base, "slow_contacts", 2).await;
    let token = rig.token(&app, "u1", json!({})).await;

    let (call_id, body) = rig
        .stream_call(
            &app,
            &token,
            "d",
            "slow_contacts",
            json!({"_all_pages": true}),
        )
        .await;
    drop(body); // the client leaves mid-walk

    // while that walk runs, the org's single walk slot is taken
    let busy = rig
        .call(
            &app,
            &token,
            "other",
            "list_orders",
            json!({"_all_pages": true}),
        )
        .await;
    busy.problem(429, "rate_limited");
    assert!(busy.headers.get("retry-after").is_some());

    let mut record = Value::Null;
    // bounded, generously: the walk takes about 3 s, longer on a loaded machine
    for _ in 0..600 {
        let r = app.get(&format!("/v1/tool-calls/{call_id}"), &token).await;
        record = r.ok(200).clone();
        if record["status"] != "running" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(record["status"], "succeeded", "{record}");
    assert_eq!(record["result"]["_itemCount"], 60);
    assert_eq!(record["result"]["_pagingComplete"], true);
    assert_eq!(up.count("/limited"), 7, "the walk went on to the end");
    // and the slot is free again
    rig.call(&app, &token, "other", "list_orders", json!({}))
        .await
        .ok(200);
}

#[tokio::test]
async fn stored_results_without_redis_use_the_in_process_store() {
    let mut s = test_settings(fresh_database().await);
    s.redis_url = None;
    let app = spawn_with(s).await;
    let up = upstream_server::start().await;
    let rig = Rig::new(&app, &up, false).await;
    let token = rig.token(&app, "u1", json!({})).await;
    let r = rig
        .call(&app, &token, "th", "list_inboxes", json!({}))
        .await;
    let rid = r.ok(200)["result"]["_resultId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(rig.steps(&app, &token, "th").await["restricted"], true);
    let q = rig
        .call(
            &app,
            &token,
            "th",
            "queryToolResult",
            json!({"resultId": rid, "offset": 3200, "limit": 50}),
        )
        .await;
    let qr = q.ok(200)["result"].clone();
    assert_eq!(qr["items"].as_array().unwrap().len(), 19);
    assert_eq!(qr["total"], 3219);
    assert_eq!(qr["has_more"], false);
    assert_eq!(rig.steps(&app, &token, "th").await["restricted"], false);
    let ready = app.call(reqwest::Method::GET, "/readyz", None, None).await;
    assert_eq!(ready.ok(200)["status"], "ready");
}
