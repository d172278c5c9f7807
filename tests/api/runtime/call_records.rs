//! A tool call's record. A call whose id nobody learns before it ends (a JSON answer, an
//! MCP `tools/call`) is written once, finished, with no event log; a streamed call is
//! `running` while it runs and followed live (S1). Records are written in batches per
//! replica: concurrent calls of several orgs and threads each get their own outcome,
//! readable by their own caller only, on any replica.

use std::time::Duration;

use serde_json::{json, Value};

use crate::support::helpers::{spawn_with, test_settings, TestApp};
use crate::support::rig::Rig;
use crate::support::upstream_server::{self, CONTACTS};

/// Settings that let 64 calls of one org run at once.
fn roomy(database_url: String) -> loopgate::config::settings::Settings {
    let mut s = test_settings(database_url);
    s.org_concurrent_walks = 64;
    s.org_requests_per_second = 1000;
    s
}

/// A second app instance on the same database and Redis.
async fn replica_of(app: &TestApp) -> TestApp {
    spawn_with(roomy(app.database_url.clone())).await
}

/// Whether the call has an event log in Redis (`None` without Redis, which only
/// `services`' opt-out allows).
async fn has_event_log(org: &str, call_id: &str) -> Option<bool> {
    use deadpool_redis::redis;
    let url = crate::support::services::require_redis_url()?;
    let mut conn = redis::Client::open(url)
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let n: i64 = redis::cmd("EXISTS")
        .arg(format!("lg:{org}:events:{call_id}"))
        .query_async(&mut conn)
        .await
        .unwrap();
    Some(n == 1)
}

/// The whole `GET …/events` stream of a finished call, as its chunks (`[DONE]` last).
pub(crate) async fn events(app: &TestApp, token: &str, call_id: &str) -> Vec<Value> {
    let res = app
        .client
        .get(format!("{}/v1/tool-calls/{call_id}/events", app.address))
        .bearer_auth(token)
        .send();
    // the call is over: its outcome comes at once (the timeout only guards against a hang)
    let text = tokio::time::timeout(Duration::from_secs(30), async {
        res.await.unwrap().text().await.unwrap()
    })
    .await
    .expect("a finished call's events end");
    text.split("\n\n")
        .filter_map(|e| e.lines().find_map(|l| l.strip_prefix("data: ")))
        .map(|d| serde_json::from_str(d).unwrap_or(Value::String(d.to_string())))
        .collect()
}

pub(crate) fn types(chunks: &[Value]) -> Vec<&str> {
    chunks
        .iter()
        .map(|c| c["type"].as_str().or(c.as_str()).unwrap_or("?"))
        .collect()
}

#[tokio::test]
async fn a_json_call_is_recorded_once_finished_and_replayed_at_once_on_another_replica() {
    let (app, _up, rig, token) = Rig::start(false).await;
    let other = replica_of(&app).await;
    let r = rig
        .call(&app, &token, "th", "get_contact", json!({"id": 7}))
        .await;
    let id = r.ok(200)["id"].as_str().unwrap().to_string();

    // right after the answer, on another replica: the finished record, nothing running
    let rec = other.get(&format!("/v1/tool-calls/{id}"), &token).await;
    let rec = rec.ok(200);
    assert_eq!(rec["status"], "succeeded", "{rec}");
    assert_eq!(rec["result"], r.body["result"]);
    assert_eq!(rec["name"], "get_contact");
    let (created, finished) = (
        rec["created_at"].as_str().unwrap(),
        rec["finished_at"].as_str().unwrap(),
    );
    let at = |s: &str| chrono::DateTime::parse_from_rfc3339(s).unwrap();
    assert!(at(created) <= at(finished), "{rec}");
    // nobody could follow it: it wrote no event log
    assert_ne!(has_event_log(&rig.t.org, &id).await, Some(true));

    // and /events on the other replica tells it whole from the record, at once
    let chunks = events(&other, &token, &id).await;
    assert_eq!(
        types(&chunks),
        [
            "start",
            "start-step",
            "tool-input-available",
            "tool-output-available",
            "finish-step",
            "finish",
            "[DONE]"
        ]
    );
    assert_eq!(chunks[2]["input"], json!({"id": 7}));
    assert_eq!(chunks[3]["output"], r.body["result"]);

    // a failed JSON call is recorded once too, with its problem
    let failed = rig
        .call(
            &app,
            &token,
            "th",
            "get_contact",
            json!({"id": 7, "nope": 1}),
        )
        .await;
    failed.problem(400, "invalid_arguments");
    // its id is not in a problem answer: the record is found through the database, once
    // written (behind the answer, K1)
    app.records_flushed().await;
    let pool = sqlx::PgPool::connect(&app.database_url).await.unwrap();
    let rows: Vec<(String, String, Value)> = sqlx::query_as(
        "SELECT id, status, error FROM tool_calls WHERE org_id = $1 AND status <> 'succeeded'",
    )
    .bind(&rig.t.org)
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].1, "failed");
    assert_eq!(rows[0].2["code"], "invalid_arguments");
    let chunks = events(&other, &token, &rows[0].0).await;
    assert_eq!(chunks[3]["type"], "tool-output-error", "{chunks:?}");
    assert!(chunks[3]["errorText"]
        .as_str()
        .unwrap()
        .starts_with("invalid_arguments: "));
}

#[tokio::test]
async fn s1_a_streamed_call_is_running_while_it_runs_and_followed_live_on_another_replica() {
    let (app, up, rig, token) = Rig::start(true).await;
    // 7 requests at 1 a second: the walk runs for 6 s at least
    rig.bind_limited(&app, &up.base, "slow_contacts", 1).await;
    let other = replica_of(&app).await;
    let (id, _body) = rig
        .stream_call(
            &app,
            &token,
            "th",
            "slow_contacts",
            json!({"_all_pages": true}),
        )
        .await;
    let rec = other.get(&format!("/v1/tool-calls/{id}"), &token).await;
    assert_eq!(rec.ok(200)["status"], "running", "{}", rec.text);
    assert!(rec.body["finished_at"].is_null());
    assert!(has_event_log(&rig.t.org, &id).await.unwrap_or(true));
    // followed from the other replica to its end: the live chunks, then the outcome
    let chunks = events(&other, &token, &id).await;
    let kinds = types(&chunks);
    assert_eq!(kinds[..3], ["start", "start-step", "tool-input-available"]);
    assert_eq!(
        kinds[kinds.len() - 4..],
        ["tool-output-available", "finish-step", "finish", "[DONE]"]
    );
    let output = &chunks[kinds.len() - 4]["output"];
    assert_eq!(output["_itemCount"], 60);
    let rec = other.get(&format!("/v1/tool-calls/{id}"), &token).await;
    assert_eq!(rec.ok(200)["status"], "succeeded");
    assert_eq!(&rec.body["result"], output);
}

#[tokio::test]
async fn m2_an_mcp_call_is_recorded_once_finished_without_an_event_log() {
    let r = crate::mcp::providers::mcp_rig().await;
    let url = format!("{}/v1/agents/{}/mcp", r.app.address, r.agent);
    let client = crate::mcp::server::connect(&url, Some(&r.token), Default::default())
        .await
        .expect("initialize");
    let walk = crate::mcp::server::call(
        &client,
        "slow_contacts",
        json!({"_all_pages": true}),
        Some("p1"),
    )
    .await;
    assert_ne!(walk.is_error, Some(true), "{walk:?}");
    r.app.records_flushed().await;
    let pool = sqlx::PgPool::connect(&r.app.database_url).await.unwrap();
    let rows: Vec<(String, String, Value, bool)> = sqlx::query_as(
        "SELECT id, status, result, created_at <= finished_at FROM tool_calls WHERE org_id = $1",
    )
    .bind(&r.t.org)
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    let (id, status, result, ordered) = &rows[0];
    assert_eq!(status, "succeeded");
    assert!(ordered);
    assert_eq!(Some(result), walk.structured_content.as_ref());
    assert_ne!(has_event_log(&r.t.org, id).await, Some(true));
    let _ = client.cancel().await;
}

/// 64 calls at once, from two orgs and several threads and callers, through two replicas:
/// each record holds its own call's arguments and outcome (successes and failures mixed in
/// the same batches), and only its own caller reads it.
#[tokio::test]
async fn concurrent_calls_of_several_orgs_each_get_their_own_record() {
    let app = spawn_with(roomy(crate::support::helpers::fresh_database().await)).await;
    let other = replica_of(&app).await;
    let up = upstream_server::start().await;
    let a = Rig::new(&app, &up, false).await;
    let b = Rig::new(&app, &up, false).await;
    let mut callers = Vec::new();
    for (rig, user) in [(&a, "u1"), (&a, "u2"), (&b, "u1"), (&b, "u3")] {
        callers.push((rig, rig.token(&app, user, json!({})).await));
    }
    let calls = (0..64usize).map(|i| {
        let (rig, token) = &callers[i % callers.len()];
        let target = if i % 2 == 0 { &app } else { &other };
        // every fifth contact does not exist: a failed call (502) in the same batches
        let id = if i % 5 == 0 { CONTACTS + i } else { i };
        async move {
            let thread = format!("th{}", i % 3);
            let r = rig
                .call(target, token, &thread, "get_contact", json!({"id": id}))
                .await;
            (i, id, r)
        }
    });
    let done = futures_util::future::join_all(calls).await;
    // the records are written behind the answers (K1): read through SQL once in
    app.records_flushed().await;
    other.records_flushed().await;
    let pool = sqlx::PgPool::connect(&app.database_url).await.unwrap();
    for (i, id, r) in done {
        let (rig, token) = &callers[i % callers.len()];
        let reader = if i % 2 == 0 { &other } else { &app };
        if id >= CONTACTS {
            r.problem(502, "upstream_failed");
            let (status, args): (String, Value) = sqlx::query_as(
                "SELECT status, arguments FROM tool_calls WHERE org_id = $1 AND arguments = $2",
            )
            .bind(&rig.t.org)
            .bind(sqlx::types::Json(json!({"id": id})))
            .fetch_one(&pool)
            .await
            .unwrap();
            assert_eq!((status.as_str(), args), ("failed", json!({"id": id})));
            continue;
        }
        let call_id = r.ok(200)["id"].as_str().unwrap().to_string();
        assert_eq!(r.body["result"]["name"], format!("Contact {id}"));
        let rec = reader
            .get(&format!("/v1/tool-calls/{call_id}"), token)
            .await;
        let rec = rec.ok(200);
        assert_eq!(rec["status"], "succeeded", "call {i}: {rec}");
        assert_eq!(rec["result"], r.body["result"], "call {i}");
        assert_eq!(rec["agent_id"], rig.agent.as_str());
        let (org, thread_key): (String, String) = sqlx::query_as(
            "SELECT c.org_id, t.thread_key FROM tool_calls c JOIN threads t \
             ON t.org_id = c.org_id AND t.id = c.thread_id WHERE c.id = $1",
        )
        .bind(&call_id)
        .fetch_one(&pool)
        .await
        .unwrap();
        assert_eq!(
            (org, thread_key),
            (rig.t.org.clone(), format!("th{}", i % 3))
        );
        // another caller (of either org) does not read it
        let (_, stranger) = &callers[(i + 1) % callers.len()];
        reader
            .get(&format!("/v1/tool-calls/{call_id}"), stranger)
            .await
            .problem(404, "not_found");
    }
    let total: i64 = sqlx::query_scalar("SELECT count(*) FROM tool_calls")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(total, 64, "one record per call");
}

mod group_commit;
