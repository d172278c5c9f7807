//! Webhook endpoints and delivery (W7): the secret shown once and rotated with an
//! overlap, the SSRF rule on the URL, every finished run delivered and verified by the
//! Standard Webhooks reference library, `workflow_run.partial` for a capped walk, and an
//! endpoint that fails and then recovers getting every delivery once.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{fast_app, Receiver};
use crate::support::helpers::{fresh_database, spawn_with, test_settings, TestApp};
use crate::support::rig::Rig;

async fn endpoint(app: &TestApp, key: &str, body: Value) -> Value {
    app.post("/v1/webhook-endpoints", key, body)
        .await
        .ok(201)
        .clone()
}

async fn deliveries(app: &TestApp, key: &str, endpoint: &str) -> Vec<Value> {
    app.get(
        &format!("/v1/webhook-endpoints/{endpoint}/deliveries?limit=200"),
        key,
    )
    .await
    .ok(200)["data"]
        .as_array()
        .unwrap()
        .clone()
}

async fn run(app: &TestApp, key: &str, wf: &str) -> Value {
    app.post(&format!("/v1/workflows/{wf}/runs"), key, json!({}))
        .await
        .ok(201)
        .clone()
}

async fn wf(app: &TestApp, rig: &Rig, steps: Value) -> String {
    super::workflow(app, rig, steps).await
}

#[tokio::test]
async fn endpoints_keep_their_secret_hidden_and_refuse_private_urls_w7() {
    let app = fast_app(|s| s.automate_workers = false).await;
    let t = app.tenant("hooks").await;
    let e = endpoint(
        &app,
        &t.key,
        json!({"url": "http://127.0.0.1:9/hook", "description": "backend"}),
    )
    .await;
    let id = e["id"].as_str().unwrap();
    assert!(id.starts_with("whe_"));
    let secret = e["secret"].as_str().unwrap();
    assert!(secret.starts_with("whsec_") && secret.len() > 30, "{e}");
    assert_eq!(
        e["events"],
        json!([
            "workflow_run.succeeded",
            "workflow_run.partial",
            "workflow_run.failed"
        ])
    );
    // shown once: never again, in a read or a list
    let got = app
        .get(&format!("/v1/webhook-endpoints/{id}"), &t.key)
        .await;
    assert!(got.ok(200).get("secret").is_none(), "{}", got.text);
    let list = app.get("/v1/webhook-endpoints", &t.key).await;
    assert!(!list.text.contains(secret));
    assert_eq!(list.ok(200)["total"], 1);
    let patched = app
        .patch(
            &format!("/v1/webhook-endpoints/{id}"),
            &t.key,
            json!({"events": ["workflow_run.failed"]}),
        )
        .await;
    assert_eq!(patched.ok(200)["events"], json!(["workflow_run.failed"]));
    assert_eq!(patched.body["description"], "backend");
    let rotated = app
        .post(
            &format!("/v1/webhook-endpoints/{id}/rotate-secret"),
            &t.key,
            json!({}),
        )
        .await;
    let new = rotated.ok(200)["secret"].as_str().unwrap();
    assert!(new.starts_with("whsec_") && new != secret);
    for bad in [
        json!({"url": "ftp://example.com/x"}),
        json!({"url": "not a url"}),
        json!({"url": "https://user:pw@example.com/x"}),
        json!({"url": "https://example.com/x", "events": ["workflow_run.started"]}),
        json!({"url": "https://example.com/x", "events": []}),
    ] {
        app.post("/v1/webhook-endpoints", &t.key, bad)
            .await
            .problem(422, "validation_failed");
    }
    let other = app.tenant("other").await;
    for path in [
        format!("/v1/webhook-endpoints/{id}"),
        format!("/v1/webhook-endpoints/{id}/deliveries"),
    ] {
        app.get(&path, &other.key).await.problem(404, "not_found");
    }
    app.post(
        &format!("/v1/webhook-endpoints/{id}/rotate-secret"),
        &other.key,
        json!({}),
    )
    .await
    .problem(404, "not_found");
    app.delete(&format!("/v1/webhook-endpoints/{id}"), &other.key)
        .await
        .problem(404, "not_found");
    app.delete(&format!("/v1/webhook-endpoints/{id}"), &t.key)
        .await
        .ok(204);

    // the SSRF rule: without allow_private_upstreams, no private or local URL
    let mut s = test_settings(fresh_database().await);
    s.allow_private_upstreams = false;
    let strict = spawn_with(s).await;
    let t = strict.tenant("strict").await;
    for url in [
        "http://127.0.0.1:8080/hook",
        "http://localhost/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]/hook",
        "http://10.1.2.3/hook",
    ] {
        let r = strict
            .post("/v1/webhook-endpoints", &t.key, json!({"url": url}))
            .await;
        r.problem(422, "validation_failed");
    }
    strict
        .post(
            "/v1/webhook-endpoints",
            &t.key,
            json!({"url": "https://hooks.example.com/loopgate"}),
        )
        .await
        .ok(201);
}

#[tokio::test]
async fn every_finished_run_is_delivered_signed_and_a_capped_walk_is_partial_w7() {
    let Some(rx) = Receiver::start().await else {
        return;
    };
    // one page per walk: a walk over 237 contacts (100 a page) stops capped
    let app = fast_app(|s| s.limit_pages_per_collection = 1).await;
    let up = crate::support::upstream_server::start().await;
    let rig = Rig::new(&app, &up, false).await;
    let key = rig.t.key.clone();
    let e = endpoint(&app, &key, json!({"url": rx.url})).await;
    let (eid, secret) = (
        e["id"].as_str().unwrap().to_string(),
        e["secret"].as_str().unwrap().to_string(),
    );
    rx.secrets(&[&secret]);
    let capped = wf(&app, &rig, json!([{"id": "all", "type": "tool", "tool": "list_contacts", "input": {}, "loop": {"all_pages": true}}])).await;
    let whole = wf(
        &app,
        &rig,
        json!([{"id": "one", "type": "tool", "tool": "get_contact", "input": {"id": 3}}]),
    )
    .await;
    let failing = wf(&app, &rig, json!([{"id": "bad", "type": "tool", "tool": "get_contact", "input": {"id": {"ref": "$.input.missing"}}}])).await;
    let mut runs = Vec::new();
    for w in [&capped, &whole, &failing] {
        runs.push(run(&app, &key, w).await);
    }
    assert_eq!(runs[0]["status"], "succeeded");
    assert_eq!(
        runs[0]["steps"]["all"]["_loop"]["complete"], false,
        "{}",
        runs[0]
    );
    assert_eq!(runs[1]["status"], "succeeded");
    assert_eq!(runs[2]["status"], "failed", "{}", runs[2]);
    rx.wait_for("three deliveries", 15, |s| s.len() >= 3).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let seen = rx.seen();
    assert_eq!(seen.len(), 3, "each run delivered once: {seen:?}");
    let of = |run: &Value| {
        seen.iter()
            .find(|l| l["run_id"] == run["id"])
            .unwrap_or_else(|| panic!("no delivery of {run}"))
            .clone()
    };
    let expect = [
        "workflow_run.partial",
        "workflow_run.succeeded",
        "workflow_run.failed",
    ];
    for (r, ty) in runs.iter().zip(expect) {
        let l = of(r);
        assert_eq!(l["type"], ty, "{l}");
        assert_eq!(
            l["verified_by"],
            json!([0]),
            "the reference library verified it: {l}"
        );
        assert_eq!(l["status"], 204);
        assert_eq!(l["run_status"], r["status"]);
    }
    // the delivery records: one per run, succeeded at the first attempt, ids as sent
    let listed = deliveries(&app, &key, &eid).await;
    assert_eq!(listed.len(), 3);
    for d in &listed {
        assert_eq!(d["status"], "succeeded", "{d}");
        assert_eq!(d["attempts"], 1);
        assert_eq!(d["last_status_code"], 204);
        assert!(d.get("next_attempt_at").is_none());
        assert!(seen
            .iter()
            .any(|l| l["webhook_id"] == d["id"] && l["type"] == d["event_type"]));
    }
    // an endpoint subscribed to failures only gets the failed run
    let only_failed = endpoint(
        &app,
        &key,
        json!({"url": rx.url, "events": ["workflow_run.failed"]}),
    )
    .await;
    let only_id = only_failed["id"].as_str().unwrap();

    // rotation: for a day both secrets sign; the receiver checks each on its own
    let new = app
        .post(
            &format!("/v1/webhook-endpoints/{eid}/rotate-secret"),
            &key,
            json!({}),
        )
        .await
        .ok(200)["secret"]
        .as_str()
        .unwrap()
        .to_string();
    rx.secrets(&[&secret, &new, only_failed["secret"].as_str().unwrap()]);
    let after = run(&app, &key, &whole).await;
    let failed_again = run(&app, &key, &failing).await;
    rx.wait_for("the runs after the rotation", 15, |s| s.len() >= 6)
        .await;
    let seen = rx.seen();
    let l = seen.iter().find(|l| l["run_id"] == after["id"]).unwrap();
    assert_eq!(l["signatures"], 2, "{l}");
    assert_eq!(
        l["verified_by"],
        json!([0, 1]),
        "old and new secret both verify: {l}"
    );
    let to_failed_only: Vec<&Value> = seen
        .iter()
        .filter(|l| l["run_id"] == failed_again["id"])
        .collect();
    assert_eq!(
        to_failed_only.len(),
        2,
        "both endpoints get the failed run: {to_failed_only:?}"
    );
    assert!(to_failed_only
        .iter()
        .any(|l| l["verified_by"] == json!([2])));
    assert_eq!(
        deliveries(&app, &key, only_id).await.len(),
        1,
        "only the failed run"
    );
}

#[tokio::test]
async fn a_failing_endpoint_gets_every_delivery_once_and_never_holds_up_another_w7() {
    let Some(rx) = Receiver::start().await else {
        return;
    };
    let app = fast_app(|_| {}).await;
    let up = crate::support::upstream_server::start().await;
    let rig = Rig::new(&app, &up, false).await;
    let key = rig.t.key.clone();
    // a black hole: accepts connections and never answers (each attempt times out)
    let hole = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hole_url = format!("http://{}/hook", hole.local_addr().unwrap());
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((c, _)) = hole.accept().await {
            held.push(c);
        }
    });
    let e = endpoint(&app, &key, json!({"url": rx.url})).await;
    let eid = e["id"].as_str().unwrap().to_string();
    rx.secrets(&[e["secret"].as_str().unwrap()]);
    let stuck = endpoint(&app, &key, json!({"url": hole_url})).await;
    let stuck_id = stuck["id"].as_str().unwrap().to_string();
    let w = wf(
        &app,
        &rig,
        json!([{"id": "one", "type": "tool", "tool": "get_contact", "input": {"id": 1}}]),
    )
    .await;

    rx.failing(true);
    let mut ids = Vec::new();
    for _ in 0..3 {
        let started = Instant::now();
        ids.push(run(&app, &key, &w).await["id"].clone());
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "a run never waits for delivery"
        );
    }
    // every delivery refused at least twice (retried after 200 ms, then 400 ms)
    let tries = |s: &[Value], id: &Value| s.iter().filter(|l| &l["run_id"] == id).count();
    rx.wait_for("two refused attempts each", 15, |s| {
        ids.iter().all(|id| tries(s, id) >= 2)
    })
    .await;
    let pending = deliveries(&app, &key, &eid).await;
    assert_eq!(pending.len(), 3);
    for d in &pending {
        assert_eq!(d["status"], "pending", "being retried: {d}");
        assert!(d.get("next_attempt_at").is_some(), "{d}");
    }
    assert!(
        pending.iter().any(|d| d["last_status_code"] == 503),
        "{pending:?}"
    );
    rx.failing(false);
    let accepted = |s: &[Value], id: &Value| {
        s.iter()
            .filter(|l| &l["run_id"] == id && l["status"] == 204)
            .count()
    };
    rx.wait_for("every delivery accepted", 20, |s| {
        ids.iter().all(|id| accepted(s, id) >= 1)
    })
    .await;
    // a few more polls: nothing is sent again once accepted
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let seen = rx.seen();
    let listed = deliveries(&app, &key, &eid).await;
    for id in &ids {
        assert_eq!(accepted(&seen, id), 1, "accepted exactly once: {seen:?}");
        let d = listed.iter().find(|d| &d["run_id"] == id).unwrap();
        assert_eq!(d["status"], "succeeded", "{d}");
        assert_eq!(
            d["attempts"].as_u64().unwrap() as usize,
            tries(&seen, id),
            "each attempt recorded: {d}"
        );
        // every attempt of one delivery carries the same webhook-id (receivers dedupe on it)
        let ids_sent: std::collections::HashSet<&Value> = seen
            .iter()
            .filter(|l| &l["run_id"] == id)
            .map(|l| &l["webhook_id"])
            .collect();
        assert_eq!(ids_sent.len(), 1);
        assert!(seen
            .iter()
            .filter(|l| &l["run_id"] == id)
            .all(|l| l["verified_by"] == json!([0])));
    }
    // meanwhile the black hole's deliveries are still pending: never delivered, and they
    // held up neither the runs nor the other endpoint
    let stuck = deliveries(&app, &key, &stuck_id).await;
    assert_eq!(stuck.len(), 3);
    assert!(stuck.iter().all(|d| d["status"] == "pending"), "{stuck:?}");
}
