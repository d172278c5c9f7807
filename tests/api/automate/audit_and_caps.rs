//! Schedule and webhook-endpoint writes reach the audit trail (with the signing secret
//! only as `"[secret]"`), and an org's endpoints and schedules are bounded.

use serde_json::{json, Value};

use super::{fast_app, slow_rig, slow_upstream, workflow};
use crate::support::helpers::TestApp;
use crate::support::rig::Rig;

async fn trail(app: &TestApp, key: &str, resource_id: &str) -> Vec<Value> {
    let r = app
        .get(&format!("/v1/audit-events?resource_id={resource_id}"), key)
        .await;
    r.ok(200)["data"].as_array().unwrap().clone()
}

fn actions(events: &[Value]) -> Vec<String> {
    let mut a: Vec<String> = events
        .iter()
        .map(|e| e["action"].as_str().unwrap().to_string())
        .collect();
    a.sort();
    a
}

#[tokio::test]
async fn endpoint_writes_are_audited_and_the_secret_never_is_w7() {
    let app = fast_app(|s| s.automate_workers = false).await;
    let t = app.tenant("trail").await;
    let made = app
        .post(
            "/v1/webhook-endpoints",
            &t.key,
            json!({"url": "https://hooks.example.com/in", "description": "backend"}),
        )
        .await;
    let secret = made.ok(201)["secret"].as_str().unwrap().to_string();
    let id = made.ok(201)["id"].as_str().unwrap().to_string();
    app.patch(
        &format!("/v1/webhook-endpoints/{id}"),
        &t.key,
        json!({"events": ["workflow_run.failed"]}),
    )
    .await
    .ok(200);
    let rotated = app
        .post(
            &format!("/v1/webhook-endpoints/{id}/rotate-secret"),
            &t.key,
            json!({}),
        )
        .await;
    let new_secret = rotated.ok(200)["secret"].as_str().unwrap().to_string();
    app.delete(&format!("/v1/webhook-endpoints/{id}"), &t.key)
        .await
        .ok(204);

    let events = trail(&app, &t.key, &id).await;
    assert_eq!(
        actions(&events),
        ["create", "delete", "update", "update"],
        "{events:?}"
    );
    let text = serde_json::to_string(&events).unwrap();
    assert!(!text.contains(&secret) && !text.contains(&new_secret));
    assert!(events
        .iter()
        .all(|e| e["resource"]["type"] == "webhook_endpoint"));
    let rotation = events
        .iter()
        .find(|e| e["action"] == "update" && e["changes"].get("secret").is_some())
        .expect("the rotation is recorded");
    assert_eq!(rotation["changes"]["secret"]["after"], "[secret]");
    let patch = events
        .iter()
        .find(|e| e["action"] == "update" && e["changes"].get("events").is_some())
        .expect("the patch is recorded");
    assert_eq!(
        patch["changes"]["events"]["after"],
        json!(["workflow_run.failed"])
    );
}

/// An app without automation workers, its upstream (kept alive by the caller), a rig and
/// a one-step workflow to schedule.
async fn one_step_workflow() -> (TestApp, impl Sized, Rig, String) {
    let app = fast_app(|s| s.automate_workers = false).await;
    let up = slow_upstream(0).await;
    let rig = slow_rig(&app, &up.base).await;
    let wf = workflow(
        &app,
        &rig,
        json!([{"id": "a", "type": "tool", "tool": "slow", "input": {}}]),
    )
    .await;
    (app, up, rig, wf)
}

#[tokio::test]
async fn schedule_writes_are_audited_w6() {
    let (app, _up, rig, wf) = one_step_workflow().await;
    let key = &rig.t.key;
    let made = app
        .post(
            &format!("/v1/workflows/{wf}/schedules"),
            key,
            json!({"cron": "0 9 * * *", "timezone": "Europe/Paris"}),
        )
        .await;
    let id = made.ok(201)["id"].as_str().unwrap().to_string();
    app.patch(&format!("/v1/schedules/{id}"), key, json!({"paused": true}))
        .await
        .ok(200);
    // the same again changes nothing, and records nothing
    app.patch(&format!("/v1/schedules/{id}"), key, json!({"paused": true}))
        .await
        .ok(200);
    app.delete(&format!("/v1/schedules/{id}"), key)
        .await
        .ok(204);
    let events = trail(&app, key, &id).await;
    assert_eq!(
        actions(&events),
        ["create", "delete", "update"],
        "{events:?}"
    );
    let created = events.iter().find(|e| e["action"] == "create").unwrap();
    assert_eq!(created["resource"]["type"], "schedule");
    assert_eq!(created["changes"]["cron"]["after"], "0 9 * * *");
    assert_eq!(created["changes"]["workflow_id"]["after"], wf.as_str());
    let paused = events.iter().find(|e| e["action"] == "update").unwrap();
    assert_eq!(paused["changes"]["paused"]["before"], false);
    assert_eq!(paused["changes"]["paused"]["after"], true);
}

#[tokio::test]
async fn an_orgs_endpoints_are_bounded_w7() {
    let app = fast_app(|s| s.automate_workers = false).await;
    let t = app.tenant("many").await;
    let max = loopgate::api::webhooks::MAX_ENDPOINTS_PER_ORG;
    for i in 0..max {
        app.post(
            "/v1/webhook-endpoints",
            &t.key,
            json!({"url": format!("https://hooks.example.com/{i}")}),
        )
        .await
        .ok(201);
    }
    let over = app
        .post(
            "/v1/webhook-endpoints",
            &t.key,
            json!({"url": "https://hooks.example.com/one-more"}),
        )
        .await;
    over.problem(409, "conflict");
    assert!(over.text.contains(&max.to_string()), "{}", over.text);
    // another org is not held back by this one's endpoints
    let other = app.tenant("other").await;
    app.post(
        "/v1/webhook-endpoints",
        &other.key,
        json!({"url": "https://hooks.example.com/other"}),
    )
    .await
    .ok(201);
}

#[tokio::test]
async fn an_orgs_schedules_are_bounded_w6() {
    let (app, _up, rig, wf) = one_step_workflow().await;
    let key = &rig.t.key;
    let max = loopgate::api::schedules::MAX_SCHEDULES_PER_ORG;
    let path = format!("/v1/workflows/{wf}/schedules");
    // the last one made through the API; the others written straight to the table
    let pool = loopgate::store::connect(&app.database_url, 1)
        .await
        .unwrap();
    sqlx::query(
        "INSERT INTO schedules (id, org_id, workflow_id, cron, timezone, input, overlap, catch_up, paused) \
         SELECT 'sch_seeded_' || n, $1, $2, '0 9 * * *', 'UTC', '{}', 'skip', 'latest', true \
         FROM generate_series(1, $3) AS n",
    )
    .bind(rig.t.org.as_str())
    .bind(wf.as_str())
    .bind(max - 1)
    .execute(&pool)
    .await
    .unwrap();
    app.post(&path, key, json!({"cron": "0 10 * * *"}))
        .await
        .ok(201);
    let over = app.post(&path, key, json!({"cron": "0 11 * * *"})).await;
    over.problem(409, "conflict");
    assert!(over.text.contains(&max.to_string()), "{}", over.text);
    // deleting one makes room again
    app.delete("/v1/schedules/sch_seeded_1", key).await.ok(204);
    app.post(&path, key, json!({"cron": "0 11 * * *"}))
        .await
        .ok(201);
}
