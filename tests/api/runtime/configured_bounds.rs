//! Every bound and budget is a setting, and the size guard's budget (G1) is also an
//! agent's own (`token_budget`): the configured values, not the defaults, are what a
//! running service enforces.

use serde_json::json;

use crate::support::helpers::{fresh_database, spawn_with, test_settings};
use crate::support::rig::Rig;

#[tokio::test]
async fn g1_an_agents_token_budget_is_its_size_guard() {
    let (app, _up, rig, token) = Rig::start(false).await;
    let page = json!({"page": 1, "per_page": 100});
    let call = |thread: &'static str| rig.call(&app, &token, thread, "list_contacts", page.clone());
    let r = call("a").await;
    assert!(
        r.ok(200)["result"].get("_truncated").is_none(),
        "100 contacts fit 25,000 tokens"
    );
    let path = format!("/v1/agents/{}", rig.agent);
    let patched = app
        .patch(&path, &rig.t.key, json!({"token_budget": 1000}))
        .await;
    assert_eq!(patched.ok(200)["token_budget"], 1000);
    let r = call("b").await;
    let cut = &r.ok(200)["result"];
    assert_eq!(cut["_truncated"], true, "{cut}");
    assert!(r.text.len() < 1000 * 3 + 1000, "{} bytes", r.text.len());
    // back to the service-wide budget
    app.patch(&path, &rig.t.key, json!({"token_budget": null}))
        .await
        .ok(200);
    assert_eq!(
        app.get(&path, &rig.t.key).await.ok(200)["token_budget"],
        json!(null)
    );
    assert!(call("c").await.ok(200)["result"]
        .get("_truncated")
        .is_none());
    // out of range is refused, naming the field
    let bad = app
        .patch(&path, &rig.t.key, json!({"token_budget": 10}))
        .await;
    bad.problem(422, "validation_failed");
    assert!(bad.body["detail"]
        .as_str()
        .unwrap()
        .contains("token_budget"));
}

#[tokio::test]
async fn p3_configured_bounds_are_the_ones_enforced() {
    let mut s = test_settings(fresh_database().await);
    s.limit_pages_per_collection = 2;
    s.limit_workflow_steps = 1;
    let app = spawn_with(s).await;
    let up = crate::support::upstream_server::start().await;
    let rig = Rig::new(&app, &up, true).await;
    let token = rig.token(&app, "u1", json!({})).await;
    let r = rig
        .call(
            &app,
            &token,
            "th",
            "list_contacts",
            json!({"_all_pages": true, "_fields": ["id"]}),
        )
        .await;
    let env = &r.ok(200)["result"];
    assert_eq!(env["_stoppedBy"], "pages", "{env}");
    assert_eq!(env["_itemCount"], 200, "two pages of 100");
    let steps = json!([
        {"id": "a", "type": "tool", "tool": "list_inboxes", "input": {}},
        {"id": "b", "type": "tool", "tool": "list_inboxes", "input": {}}
    ]);
    let wf = app
        .post(
            "/v1/workflows",
            &rig.t.key,
            json!({"name": "wf", "agent_id": rig.agent, "steps": steps}),
        )
        .await;
    wf.problem(400, "validation_failed");
    assert!(wf.body["detail"].as_str().unwrap().contains("at most 1"));
}

/// `cache_max_entry_bytes`: a walk whose stored set is larger is answered but not cached
/// (its result says so, the next call walks again); a smaller one still is.
#[tokio::test]
async fn c1_a_walk_above_the_configured_entry_size_is_answered_not_cached() {
    let mut s = test_settings(fresh_database().await);
    s.cache_max_entry_bytes = 64 << 10;
    let app = spawn_with(s).await;
    let up = crate::support::upstream_server::start().await;
    let rig = Rig::new(&app, &up, true).await;
    let token = rig.token(&app, "u1", json!({})).await;
    let walk = json!({"_all_pages": true});
    // 3,219 inboxes, about 794 KB, in one page (a reserved argument makes it cacheable)
    let inboxes = json!({"_fields": ["inbox_id"]});
    for thread in ["a", "b"] {
        let r = rig
            .call(&app, &token, thread, "list_inboxes", inboxes.clone())
            .await;
        let env = &r.ok(200)["result"];
        assert_eq!(env["_cache"]["stored"], false, "{env}");
        let reason = env["_cache"]["reason"].as_str().unwrap_or_default();
        assert!(reason.contains("65536 bytes"), "{reason}");
    }
    assert_eq!(up.count("/inboxes"), 2, "nothing was cached: walked twice");
    // 237 contacts fit: the second walk is a hit
    for thread in ["c", "d"] {
        rig.call(&app, &token, thread, "list_contacts", walk.clone())
            .await
            .ok(200);
    }
    let hit = rig
        .call(&app, &token, "e", "list_contacts", walk.clone())
        .await;
    assert_eq!(hit.ok(200)["result"]["_cache"]["hit"], true, "{}", hit.text);
}

/// The operational bounds are read at startup: one out of range stops it with a line
/// naming the setting; in range, a service with its own Redis budget serves from Redis.
#[tokio::test]
async fn operational_bounds_are_validated_at_startup_and_carried() {
    let bad = [
        ("LOOPGATE_REDIS_TIMEOUT_MS", {
            let mut s = test_settings(fresh_database().await);
            s.redis_timeout_ms = 5;
            s
        }),
        ("LOOPGATE_CACHE_MAX_ENTRY_BYTES", {
            let mut s = test_settings(fresh_database().await);
            s.cache_max_entry_bytes = 1024;
            s
        }),
    ];
    for (name, s) in bad {
        let e = loopgate::app::startup::Application::build(s)
            .await
            .err()
            .map(|e| format!("{e:#}"))
            .unwrap_or_default();
        assert!(e.contains(name), "{name}: {e}");
    }
    let Some(redis) = crate::support::services::require_redis_server().await else {
        return;
    };
    let mut s = test_settings(fresh_database().await);
    s.redis_url = Some(redis.url().into());
    s.redis_timeout_ms = 5_000;
    let app = spawn_with(s).await;
    let up = crate::support::upstream_server::start().await;
    let rig = Rig::new(&app, &up, true).await;
    let token = rig.token(&app, "u1", json!({})).await;
    let walk = json!({"_all_pages": true});
    for thread in ["a", "b"] {
        rig.call(&app, &token, thread, "list_contacts", walk.clone())
            .await
            .ok(200);
    }
    assert_eq!(up.count("/contacts"), 3, "the second walk was a hit");
    let ready = app.call(reqwest::Method::GET, "/readyz", None, None).await;
    assert_eq!(ready.ok(200)["status"], "ready", "{}", ready.text);
}
