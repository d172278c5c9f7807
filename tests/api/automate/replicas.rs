//! Three replicas of the real binary under a schedule firing every second, killed
//! (SIGKILL) and restarted one after another: every due time has exactly one run; a run
//! whose replica died mid-run is closed as `interrupted`, never run again; and every
//! finished run is delivered once, verified by the Standard Webhooks reference library.

use std::collections::{HashMap, HashSet};
use std::process::Stdio;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use super::{runs_of, schedule, slow_rig, slow_upstream, ts, workflow, Receiver};
use crate::faults::replicas::{binary, Replica};
use crate::support::helpers::{fresh_database, TestApp};

async fn replica(db: &str) -> Replica {
    let env = [
        ("LOOPGATE_REPLICAS", "3"),
        ("LOOPGATE_SHUTDOWN_GRACE_SECONDS", "1"),
        ("LOOPGATE_SCHEDULE_MIN_INTERVAL_SECONDS", "1"),
        ("LOOPGATE_SCHEDULE_TICK_MS", "200"),
        ("LOOPGATE_SCHEDULE_LEASE_SECONDS", "2"),
        ("LOOPGATE_SCHEDULE_GRACE_SECONDS", "2"),
        ("LOOPGATE_WEBHOOK_RETRY_BASE_MS", "200"),
        ("LOOPGATE_WEBHOOK_POLL_MS", "200"),
        ("LOOPGATE_WEBHOOK_TIMEOUT_MS", "1000"),
    ]
    .map(|(k, v)| (k, v.to_string()));
    let log = if std::env::var("TEST_LOG").is_ok() {
        Stdio::inherit()
    } else {
        Stdio::null()
    };
    binary(db, &env, log).await
}

fn second(t: DateTime<Utc>) -> i64 {
    t.timestamp()
}

#[tokio::test]
async fn replicas_killed_and_restarted_run_every_due_time_exactly_once_w6_w7() {
    let Some(rx) = Receiver::start().await else {
        return;
    };
    let db = fresh_database().await;
    let r0 = replica(&db).await;
    let (r1, r2) = tokio::join!(replica(&db), replica(&db));
    let up = slow_upstream(700).await;
    let rig = slow_rig(&r0.app, &up.base).await;
    let key = rig.t.key.clone();
    let e = r0
        .app
        .post("/v1/webhook-endpoints", &key, json!({"url": rx.url}))
        .await
        .ok(201)
        .clone();
    rx.secrets(&[e["secret"].as_str().unwrap()]);
    let wf = workflow(
        &r0.app,
        &rig,
        json!([{"id": "fetch", "type": "tool", "tool": "slow", "input": {}}]),
    )
    .await;
    let s = schedule(&r0.app, &key, &wf, json!({"cron": "* * * * * *"})).await;
    let sid = s["id"].as_str().unwrap().to_string();
    let started = Utc::now();

    // each replica in turn killed and restarted, the two others running on
    let mut replicas = [Some(r0), Some(r1), Some(r2)];
    for slot in replicas.iter_mut() {
        tokio::time::sleep(Duration::from_millis(2500)).await;
        drop(slot.take());
        tokio::time::sleep(Duration::from_millis(1500)).await;
        *slot = Some(replica(&db).await);
    }
    tokio::time::sleep(Duration::from_millis(2000)).await;

    // then all but one, and that one killed while it runs a run: nobody is left to
    // finish it, and a fresh replica must not run it again
    drop(replicas[0].take());
    drop(replicas[1].take());
    let last = replicas[2].take().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let victim = loop {
        let runs = runs_of(&last.app, &key, &wf, &sid).await;
        if let Some(r) = runs.iter().find(|r| r["status"] == "running") {
            break r.clone();
        }
        assert!(Instant::now() < deadline, "no run seen running");
        tokio::time::sleep(Duration::from_millis(30)).await;
    };
    drop(last);
    let outage = Utc::now();
    let fresh = replica(&db).await;
    let app: &TestApp = &fresh.app;
    let deadline = Instant::now() + Duration::from_secs(15);
    let closed = loop {
        let runs = runs_of(app, &key, &wf, &sid).await;
        let v = runs
            .iter()
            .find(|r| r["id"] == victim["id"])
            .unwrap()
            .clone();
        if v["status"] != "running" {
            break v;
        }
        assert!(
            Instant::now() < deadline,
            "the orphaned run was never closed: {v}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    app.patch(
        &format!("/v1/schedules/{sid}"),
        &key,
        json!({"paused": true}),
    )
    .await
    .ok(200);
    let deadline = Instant::now() + Duration::from_secs(10);
    let runs = loop {
        let runs = runs_of(app, &key, &wf, &sid).await;
        if runs.iter().all(|r| r["status"] != "running") {
            break runs;
        }
        assert!(Instant::now() < deadline, "runs still going: {runs:#?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };

    // the orphan: interrupted, not run twice
    assert_eq!(closed["status"], "interrupted", "{closed}");
    let mut per_due: HashMap<i64, Vec<&Value>> = HashMap::new();
    for r in &runs {
        per_due
            .entry(second(ts(&r["scheduled_for"])))
            .or_default()
            .push(r);
        assert!(
            ["succeeded", "interrupted", "skipped"].contains(&r["status"].as_str().unwrap()),
            "{r}"
        );
        assert_eq!(r["trigger"], "schedule");
    }
    assert!(
        per_due.values().all(|v| v.len() == 1),
        "a due time ran twice: {per_due:#?}"
    );
    // while at least one replica lived, every second had its run
    let first = second(started) + 1;
    let until = second(outage) - 1;
    let missing: Vec<i64> = (first..until)
        .filter(|s| !per_due.contains_key(s))
        .collect();
    assert!(
        missing.is_empty(),
        "due times without a run: {missing:?}; runs: {runs:#?}"
    );
    assert!(
        until - first >= 12,
        "the schedule ran for {} s",
        until - first
    );

    // deliveries: every finished run that ran (succeeded or interrupted) once, verified
    let delivered: Vec<&Value> = runs.iter().filter(|r| r["status"] != "skipped").collect();
    rx.wait_for("every run delivered", 30, |seen| {
        let ok: HashSet<&Value> = seen
            .iter()
            .filter(|l| l["status"] == 204)
            .map(|l| &l["run_id"])
            .collect();
        delivered.iter().all(|r| ok.contains(&r["id"]))
    })
    .await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    let seen = rx.seen();
    for r in &delivered {
        let got: Vec<&Value> = seen.iter().filter(|l| l["run_id"] == r["id"]).collect();
        assert_eq!(got.len(), 1, "delivered once: {got:?}");
        assert_eq!(got[0]["verified_by"], json!([0]));
        let ty = if r["status"] == "succeeded" {
            "workflow_run.succeeded"
        } else {
            "workflow_run.failed"
        };
        assert_eq!(got[0]["type"], ty, "{r}");
    }
    assert!(
        !seen.iter().any(|l| runs
            .iter()
            .any(|r| r["status"] == "skipped" && r["id"] == l["run_id"])),
        "a skipped run is not delivered"
    );
}
