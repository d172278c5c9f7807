//! Issue 15: every bound and budget is a setting, and the size guard's budget (G1) is
//! also an agent's own (`token_budget`): the configured values, not the defaults, are what
//! a running service enforces.

use serde_json::json;

use crate::helpers::{fresh_database, spawn_with, test_settings};
use crate::rig::Rig;

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
    let up = crate::upstream_server::start().await;
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
