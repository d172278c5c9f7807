//! The dataset cache (C1–C6), counted at the upstream: hits touch nothing upstream,
//! scopes never leak, labels and TTLs as specified, each deployment mode.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::support::helpers::{
    fresh_database, spawn_app, spawn_with_clock, test_settings, TestApp, ADMIN,
};
use crate::support::rig::Rig;
use crate::support::upstream_server::{self, Upstream};

const WALK: u32 = 3; // 237 contacts at 100 per page

async fn walk(app: &TestApp, rig: &Rig, token: &str, extra: Value) -> Value {
    let mut args = json!({"_all_pages": true});
    for (k, v) in extra.as_object().unwrap() {
        args[k] = v.clone();
    }
    let r = rig.call(app, token, "t", "list_contacts", args).await;
    r.ok(200)["result"].clone()
}

fn rfc(v: &Value) -> chrono::DateTime<chrono::FixedOffset> {
    chrono::DateTime::parse_from_rfc3339(v.as_str().unwrap()).unwrap()
}

#[tokio::test]
async fn org_credentials_share_across_the_org_and_hits_touch_nothing() {
    let app = spawn_app().await;
    let up = upstream_server::start().await;
    let rig = Rig::new(&app, &up, true).await;
    let u1 = rig.token(&app, "u1", json!({})).await;
    let u2 = rig.token(&app, "u2", json!({})).await;
    let first = walk(&app, &rig, &u1, json!({})).await;
    assert!(first.get("_cache").is_none());
    assert_eq!(up.count("/contacts"), WALK);

    let hit = walk(&app, &rig, &u2, json!({"_fields": ["id"]})).await;
    assert_eq!(
        up.count("/contacts"),
        WALK,
        "a hit touches nothing upstream"
    );
    assert_eq!(hit["_cache"]["hit"], true);
    assert_eq!(hit["_itemCount"], 237);
    assert_eq!(
        hit["items"][5],
        json!({"id": 5}),
        "another _fields is still a hit (C5)"
    );
    let ttl = rfc(&hit["_cache"]["expiresAt"]) - rfc(&hit["_cache"]["cachedAt"]);
    assert_eq!(ttl.num_hours(), 24, "org credentials: 24 h");
    assert!(hit["_note"].as_str().unwrap().contains("_refresh"));
    assert!(hit["_resultId"].is_string());

    // _refresh bypasses and replaces
    let fresh = walk(&app, &rig, &u2, json!({"_refresh": true})).await;
    assert!(fresh.get("_cache").is_none());
    assert_eq!(up.count("/contacts"), 2 * WALK);
    let again = walk(&app, &rig, &u1, json!({})).await;
    assert!(rfc(&again["_cache"]["cachedAt"]) >= rfc(&hit["_cache"]["cachedAt"]));
    assert_eq!(up.count("/contacts"), 2 * WALK);

    // another org with the very same upstream never hits
    let other = Rig::new(&app, &up, true).await;
    let ot = other.token(&app, "u1", json!({})).await;
    let miss = walk(&app, &other, &ot, json!({})).await;
    assert!(miss.get("_cache").is_none());
    assert_eq!(up.count("/contacts"), 3 * WALK);
}

#[tokio::test]
async fn user_credentials_are_private_unless_a_cache_scope_is_shared() {
    let app = spawn_app().await;
    let up = upstream_server::start().await;
    let rig = Rig::new(&app, &up, true).await;
    let creds = |secret: &str| json!({"credentials": {rig.provider.clone(): secret}});
    let a = rig.token(&app, "alice", creds("same-secret")).await;
    let b = rig.token(&app, "bob", creds("same-secret")).await;
    walk(&app, &rig, &a, json!({})).await;
    let r = walk(&app, &rig, &b, json!({})).await;
    assert!(r.get("_cache").is_none(), "two users never share entries");
    assert_eq!(up.count("/contacts"), 2 * WALK);
    let again = walk(&app, &rig, &a, json!({})).await;
    assert_eq!(again["_cache"]["hit"], true);
    let ttl = rfc(&again["_cache"]["expiresAt"]) - rfc(&again["_cache"]["cachedAt"]);
    assert_eq!(ttl.num_hours(), 1, "runtime credentials: 1 h");
    // an org-credential caller does not read a user's entry either
    let org_user = rig.token(&app, "carol", json!({})).await;
    assert!(walk(&app, &rig, &org_user, json!({}))
        .await
        .get("_cache")
        .is_none());
    assert_eq!(up.count("/contacts"), 3 * WALK);

    let mut s1 = creds("team-secret");
    s1["cache_scope"] = json!("acme");
    let t1 = rig.token(&app, "dave", s1.clone()).await;
    let t2 = rig.token(&app, "erin", s1).await;
    walk(&app, &rig, &t1, json!({})).await;
    assert_eq!(
        walk(&app, &rig, &t2, json!({})).await["_cache"]["hit"],
        true,
        "same cache_scope shares"
    );
    assert_eq!(up.count("/contacts"), 4 * WALK);
    // same scope, rotated credential: never reads the old data
    let mut s2 = creds("rotated-secret");
    s2["cache_scope"] = json!("acme");
    let t3 = rig.token(&app, "frank", s2).await;
    assert!(walk(&app, &rig, &t3, json!({}))
        .await
        .get("_cache")
        .is_none());
    assert_eq!(up.count("/contacts"), 5 * WALK);
}

#[tokio::test]
async fn ttl_is_the_readers_and_expires_with_the_clock() {
    let clock = Arc::new(loopgate::results::wall_clock::ManualClock::default());
    let app = spawn_with_clock(test_settings(fresh_database().await), clock.clone()).await;
    let up = upstream_server::start().await;
    let rig = Rig::new(&app, &up, true).await;
    let tool = &rig.tools["list_contacts"];
    app.patch(
        &format!("/v1/agents/{}/tools/{tool}", rig.agent),
        &rig.t.key,
        json!({"dataset_ttl_hours": 2}),
    )
    .await
    .ok(200);
    let u = rig.token(&app, "u1", json!({})).await;
    walk(&app, &rig, &u, json!({})).await;
    clock.advance(Duration::from_secs(3600));
    let hit = walk(&app, &rig, &u, json!({})).await;
    assert_eq!(hit["_cache"]["hit"], true);
    // served again, now from the replica's memory of the entry
    assert_eq!(walk(&app, &rig, &u, json!({})).await["_cache"]["hit"], true);
    assert_eq!(
        (rfc(&hit["_cache"]["expiresAt"]) - rfc(&hit["_cache"]["cachedAt"])).num_hours(),
        2
    );
    clock.advance(Duration::from_secs(2 * 3600));
    let miss = walk(&app, &rig, &u, json!({})).await;
    assert!(
        miss.get("_cache").is_none(),
        "older than the binding's TTL: a miss, also for the replica's memory"
    );
    assert_eq!(up.count("/contacts"), 2 * WALK);
}

async fn set_mode(app: &TestApp, rig: &Rig, mode: &str) {
    app.patch(
        &format!("/v1/orgs/{}/deployments/{}", rig.t.org, rig.t.deployment),
        ADMIN,
        json!({"cache": mode}),
    )
    .await
    .ok(200);
}

pub fn metric(text: &str, name: &str) -> u64 {
    text.lines()
        .find(|l| l.starts_with(name))
        .and_then(|l| l.split_whitespace().last())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

#[tokio::test]
async fn deployment_modes_and_experiments() {
    let app = spawn_app().await;
    let up = upstream_server::start().await;
    let rig = Rig::new(&app, &up, true).await;
    let u = rig.token(&app, "u1", json!({})).await;

    set_mode(&app, &rig, "off").await;
    walk(&app, &rig, &u, json!({})).await;
    walk(&app, &rig, &u, json!({})).await;
    assert_eq!(up.count("/contacts"), 2 * WALK, "off: never cached");

    set_mode(&app, &rig, "shadow").await;
    walk(&app, &rig, &u, json!({})).await;
    let r = walk(&app, &rig, &u, json!({})).await;
    assert!(r.get("_cache").is_none(), "shadow never serves");
    assert_eq!(up.count("/contacts"), 4 * WALK);
    let m = app.call(reqwest::Method::GET, "/metrics", None, None).await;
    assert!(
        metric(&m.text, "loopgate_cache_shadow_hits_total") >= 1,
        "shadow counts would-be hits"
    );

    set_mode(&app, &rig, "on").await;
    // shadow recorded the walk: now it is served
    assert_eq!(walk(&app, &rig, &u, json!({})).await["_cache"]["hit"], true);
    assert_eq!(up.count("/contacts"), 4 * WALK);

    // experiments neither read nor write
    let exp = app
        .post(
            &format!("/v1/agents/{}/threads/x/tool-calls", rig.agent),
            &u,
            json!({"name": "list_orders", "arguments": {"_all_pages": true}, "experiment": true}),
        )
        .await;
    assert!(exp.ok(200)["result"].get("_cache").is_none());
    let after = up.count("/orders");
    let r = rig
        .call(&app, &u, "x", "list_orders", json!({"_all_pages": true}))
        .await;
    assert!(
        r.ok(200)["result"].get("_cache").is_none(),
        "the experiment wrote nothing"
    );
    assert!(up.count("/orders") > after);
    let exp2 = app
        .post(
            &format!("/v1/agents/{}/threads/x/tool-calls", rig.agent),
            &u,
            json!({"name": "list_orders", "arguments": {"_all_pages": true}, "experiment": true}),
        )
        .await;
    assert!(
        exp2.ok(200)["result"].get("_cache").is_none(),
        "and reads nothing"
    );
}

#[tokio::test]
async fn identical_parallel_walks_are_coalesced_and_partial_fan_outs_not_cached() {
    let app = spawn_app().await;
    let up: Upstream = upstream_server::start().await;
    let rig = Rig::new(&app, &up, true).await;
    let u = rig.token(&app, "u1", json!({})).await;
    let calls = (0..5).map(|_| walk(&app, &rig, &u, json!({})));
    let results = futures_util::future::join_all(calls).await;
    assert_eq!(
        up.count("/contacts"),
        WALK,
        "five identical calls, one walk upstream"
    );
    assert!(results.iter().all(|r| r["_itemCount"] == 237));
    assert_eq!(
        results.iter().filter(|r| r.get("_cache").is_some()).count(),
        4
    );

    let fan = json!({"_for_each": {"key": "id", "values": [1, 9999]}});
    rig.call(&app, &u, "t", "get_contact", fan.clone())
        .await
        .ok(200);
    let r = rig.call(&app, &u, "t", "get_contact", fan).await;
    assert!(
        r.ok(200)["result"].get("_cache").is_none(),
        "per-value errors: not complete, not cached"
    );
    assert_eq!(up.count("/contacts/9999"), 2);
}

#[tokio::test]
async fn two_replicas_share_entries_and_coalesce_walks_through_redis() {
    let Some(_) = crate::support::services::require_redis_url() else {
        return; // this test needs the shared Redis that scripts/test starts
    };
    let db = fresh_database().await;
    let one = crate::support::helpers::spawn_with(test_settings(db.clone())).await;
    let two = crate::support::helpers::spawn_with(test_settings(db)).await;
    let up = upstream_server::start().await;
    let rig = Rig::new(&one, &up, true).await;
    // a walk slow enough (2 requests/s, 7 requests) that both replicas are asked during it
    rig.bind_limited(&one, &up.base, "slow_contacts", 2).await;
    let token = rig.token(&one, "u1", json!({})).await;
    let body = json!({"name": "slow_contacts", "arguments": {"_all_pages": true}});
    let path = format!("/v1/agents/{}/threads/r/tool-calls", rig.agent);
    let (a, b) = tokio::join!(
        one.post(&path, &token, body.clone()),
        two.post(&path, &token, body.clone())
    );
    assert_eq!(a.ok(200)["result"]["_itemCount"], 60);
    assert_eq!(b.ok(200)["result"]["_itemCount"], 60);
    assert_eq!(up.count("/limited"), 7, "two replicas, one walk upstream");
    // and a stored result made on one replica is readable from the other
    let rid = a.body["result"]["_resultId"].as_str().unwrap();
    let q = two
        .post(
            &path,
            &token,
            json!({"name": "queryToolResult", "arguments": {"resultId": rid, "limit": 1}}),
        )
        .await;
    assert_eq!(q.ok(200)["result"]["total"], 60);
}

/// G3 with C1: a walk the cache holds is stored once — its `_resultId` (and a hit's) point
/// at the entry — yet every such result reads back whole, also after a `_refresh` replaced
/// the entry it points at, and the response carries the engine's text as it is.
#[tokio::test]
async fn g3_results_of_cached_walks_read_back_after_a_refresh() {
    let app = spawn_app().await;
    let up = upstream_server::start().await;
    let rig = Rig::new(&app, &up, true).await;
    let t = rig.token(&app, "u1", json!({})).await;
    let query = |rid: &str| json!({"name": "queryToolResult", "arguments": {"resultId": rid, "offset": 230, "limit": 100}});
    let path = format!("/v1/agents/{}/threads/t/tool-calls", rig.agent);
    let first = walk(&app, &rig, &t, json!({"_fields": ["id"]})).await;
    let hit = walk(&app, &rig, &t, json!({"_fields": ["name"]})).await;
    assert_eq!(hit["_cache"]["hit"], true);
    let fresh = walk(&app, &rig, &t, json!({"_refresh": true})).await;
    assert!(fresh.get("_cache").is_none());
    assert_eq!(up.count("/contacts"), 2 * WALK);
    for r in [&first, &hit, &fresh] {
        let rid = r["_resultId"].as_str().unwrap();
        let q = app.post(&path, &t, query(rid)).await;
        let body = q.ok(200);
        assert_eq!(body["result"]["total"], 237, "{rid}: {body}");
        assert_eq!(
            body["result"]["items"][6]["id"], 236,
            "{rid}: the whole set, unprojected"
        );
    }
    assert_eq!(up.count("/contacts"), 2 * WALK, "read back without a walk");
}
