//! Schedules (W6) on one in-process app: the API's shapes and rules, `overlap`,
//! `catch_up`, and whose credentials a scheduled run uses and who reads it.

use std::time::Duration;

use chrono::{Datelike, Timelike, Utc};
use serde_json::{json, Value};

use super::{
    fast_app, fast_settings, runs_of, schedule, slow_rig, slow_upstream, ts, wait_runs, workflow,
};
use crate::support::helpers::{fresh_database, spawn_with};

fn slow_step() -> Value {
    json!([{"id": "fetch", "type": "tool", "tool": "slow", "input": {}}])
}

#[tokio::test]
async fn schedules_are_written_read_paused_and_checked_w6() {
    let app = fast_app(|s| {
        s.automate_workers = false;
        s.schedule_min_interval_seconds = 60;
    })
    .await;
    let up = slow_upstream(0).await;
    let rig = slow_rig(&app, &up.base).await;
    let key = rig.t.key.clone();
    let wf = workflow(&app, &rig, slow_step()).await;
    let path = format!("/v1/workflows/{wf}/schedules");

    let s = schedule(
        &app,
        &key,
        &wf,
        json!({"cron": "0 7 * * 1-5", "timezone": "Europe/Paris", "input": {"report": "daily"}}),
    )
    .await;
    let id = s["id"].as_str().unwrap().to_string();
    assert!(id.starts_with("sch_"), "{s}");
    assert_eq!(s["workflow_id"], wf.as_str());
    assert_eq!(s["overlap"], "skip");
    assert_eq!(s["catch_up"], "latest");
    assert_eq!(s["paused"], false);
    assert_eq!(s["run_as"], Value::Null);
    assert_eq!(s["input"], json!({"report": "daily"}));
    assert!(s.get("last_run").is_none(), "no run yet: {s}");
    // next_runs: three weekday mornings at 07:00 Paris time, in order, after now
    let tz: chrono_tz::Tz = "Europe/Paris".parse().unwrap();
    let next: Vec<_> = s["next_runs"].as_array().unwrap().iter().map(ts).collect();
    assert_eq!(next.len(), 3);
    assert!(next[0] > Utc::now());
    assert!(next.windows(2).all(|w| w[0] < w[1]));
    for t in &next {
        let local = t.with_timezone(&tz);
        assert_eq!(
            (local.hour(), local.minute(), local.second()),
            (7, 0, 0),
            "{t}"
        );
        assert!(
            local.weekday().number_from_monday() <= 5,
            "{t} is a weekday"
        );
    }

    // bad input: each a 422 with the stable code
    for bad in [
        json!({"cron": "*/10 * * * * *"}), // every 10 s: under schedule_min_interval_seconds
        json!({"cron": "0 7 * *"}),        // 4 fields
        json!({"cron": "0 7 * * 1-5", "timezone": "Mars/Olympus"}),
        json!({"cron": "0 61 * * *"}),
        json!({"cron": "0 7 * * *", "input": [1]}),
        json!({"cron": "0 7 * * *", "run_as": {"user_id": "key:abc"}}),
        json!({"cron": "0 7 * * *", "run_as": {"user_id": ""}}),
    ] {
        app.post(&path, &key, bad.clone())
            .await
            .problem(422, "validation_failed");
    }
    // exactly at the floor is allowed
    let every_minute = schedule(&app, &key, &wf, json!({"cron": "* * * * *"})).await;
    let gap = ts(&every_minute["next_runs"][1]) - ts(&every_minute["next_runs"][0]);
    assert_eq!(gap, chrono::Duration::seconds(60));
    let r = app
        .post(
            &path,
            &key,
            json!({"cron": "0 7 * * *", "overlap": "sometimes"}),
        )
        .await;
    assert!(matches!(r.status.as_u16(), 400 | 422), "{}", r.text);
    assert_eq!(r.body["code"], "validation_failed");

    // read, list, patch, pause and resume
    let got = app.get(&format!("/v1/schedules/{id}"), &key).await;
    assert_eq!(got.ok(200)["next_runs"], s["next_runs"]);
    let list = app.get(&path, &key).await;
    assert_eq!(list.ok(200)["total"], 2);
    let paused = app
        .patch(
            &format!("/v1/schedules/{id}"),
            &key,
            json!({"paused": true}),
        )
        .await;
    assert_eq!(paused.ok(200)["paused"], true);
    assert_eq!(
        paused.body["next_runs"],
        json!([]),
        "a paused schedule has no next runs"
    );
    let resumed = app
        .patch(
            &format!("/v1/schedules/{id}"),
            &key,
            json!({"paused": false, "cron": "30 18 * * *", "timezone": "UTC", "overlap": "allow", "run_as": {"user_id": "u7"}}),
        )
        .await;
    let resumed = resumed.ok(200);
    assert_eq!(resumed["cron"], "30 18 * * *");
    assert_eq!(resumed["overlap"], "allow");
    assert_eq!(resumed["run_as"], json!({"user_id": "u7"}));
    for t in resumed["next_runs"].as_array().unwrap().iter().map(ts) {
        assert_eq!((t.hour(), t.minute()), (18, 30));
    }
    let cleared = app
        .patch(
            &format!("/v1/schedules/{id}"),
            &key,
            json!({"run_as": null}),
        )
        .await;
    assert_eq!(cleared.ok(200)["run_as"], Value::Null);
    assert_eq!(
        cleared.body["cron"], "30 18 * * *",
        "a patch keeps what it does not name"
    );
    app.patch(
        &format!("/v1/schedules/{id}"),
        &key,
        json!({"cron": "* * * * * *"}),
    )
    .await
    .problem(422, "validation_failed");

    // another org sees nothing; a key without `studio` may not write
    let other = app.tenant("other").await;
    app.get(&format!("/v1/schedules/{id}"), &other.key)
        .await
        .problem(404, "not_found");
    app.patch(
        &format!("/v1/schedules/{id}"),
        &other.key,
        json!({"paused": true}),
    )
    .await
    .problem(404, "not_found");
    app.delete(&format!("/v1/schedules/{id}"), &other.key)
        .await
        .problem(404, "not_found");
    app.post(&path, &other.key, json!({"cron": "0 7 * * *"}))
        .await
        .problem(404, "not_found");
    let runtime_only = app.create_key(&rig.t.org, &["runtime"]).await;
    app.post(&path, &runtime_only, json!({"cron": "0 7 * * *"}))
        .await
        .problem(403, "forbidden");

    app.delete(&format!("/v1/schedules/{id}"), &key)
        .await
        .ok(204);
    app.get(&format!("/v1/schedules/{id}"), &key)
        .await
        .problem(404, "not_found");
}

/// Non-skipped runs as (started, finished) intervals.
fn intervals(runs: &[Value]) -> Vec<(chrono::DateTime<Utc>, chrono::DateTime<Utc>)> {
    runs.iter()
        .filter(|r| r["status"] != "skipped")
        .map(|r| (ts(&r["started_at"]), ts(&r["finished_at"])))
        .collect()
}

#[tokio::test]
async fn overlap_skip_records_skipped_runs_and_allow_runs_beside_w6() {
    let app = fast_app(|_| {}).await;
    // each run takes 2.5 s; the schedules fire every second
    let up = slow_upstream(2500).await;
    let rig = slow_rig(&app, &up.base).await;
    let key = rig.t.key.clone();
    let wf = workflow(&app, &rig, slow_step()).await;
    let skip = schedule(
        &app,
        &key,
        &wf,
        json!({"cron": "* * * * * *", "overlap": "skip"}),
    )
    .await;
    let allow = schedule(
        &app,
        &key,
        &wf,
        json!({"cron": "* * * * * *", "overlap": "allow"}),
    )
    .await;
    let (skip, allow) = (skip["id"].as_str().unwrap(), allow["id"].as_str().unwrap());
    wait_runs(&app, &key, &wf, skip, 20, |r| r.len() >= 6).await;
    for s in [skip, allow] {
        app.patch(&format!("/v1/schedules/{s}"), &key, json!({"paused": true}))
            .await
            .ok(200);
    }
    let settled = |r: &[Value]| r.iter().all(|r| r["status"] != "running");
    let skip_runs = wait_runs(&app, &key, &wf, skip, 10, settled).await;
    let allow_runs = wait_runs(&app, &key, &wf, allow, 10, settled).await;

    for runs in [&skip_runs, &allow_runs] {
        // one run per due time, every second, none missing
        let due: Vec<_> = runs.iter().map(|r| ts(&r["scheduled_for"])).collect();
        assert!(
            due.windows(2)
                .all(|w| w[1] - w[0] == chrono::Duration::seconds(1)),
            "{due:?}"
        );
        for r in runs.iter() {
            assert_eq!(r["trigger"], "schedule");
            assert!(
                ["succeeded", "skipped"].contains(&r["status"].as_str().unwrap()),
                "{r}"
            );
            // the due time, not the start
            assert!(ts(&r["started_at"]) >= ts(&r["scheduled_for"]));
        }
    }
    let skipped: Vec<&Value> = skip_runs
        .iter()
        .filter(|r| r["status"] == "skipped")
        .collect();
    assert!(!skipped.is_empty(), "{skip_runs:#?}");
    let ran = intervals(&skip_runs);
    // skip: runs never overlap (a run's start is its claim's transaction time, which may
    // precede by a moment the commit that ended the run before), and each skipped due
    // time fell while one was going
    let slack = chrono::Duration::milliseconds(250);
    assert!(ran.windows(2).all(|w| w[0].1 <= w[1].0 + slack), "{ran:?}");
    for s in &skipped {
        let at = ts(&s["scheduled_for"]);
        assert!(
            ran.iter()
                .any(|(a, b)| *a <= at + chrono::Duration::milliseconds(300) && at <= *b),
            "skipped {at} while nothing ran: {ran:?}"
        );
        assert!(s["steps"] == json!({}), "a skipped run ran nothing: {s}");
    }
    // allow: none skipped, and runs went side by side
    assert!(
        allow_runs.iter().all(|r| r["status"] == "succeeded"),
        "{allow_runs:#?}"
    );
    let side = intervals(&allow_runs);
    assert!(side.windows(2).any(|w| w[1].0 < w[0].1), "{side:?}");
    // the schedule shows its last run
    let shown = app.get(&format!("/v1/schedules/{skip}"), &key).await;
    let last = skip_runs.last().unwrap();
    assert_eq!(shown.ok(200)["last_run"]["id"], last["id"]);
    assert_eq!(
        shown.body["last_run"]["scheduled_for"],
        last["scheduled_for"]
    );
}

#[tokio::test]
async fn catch_up_latest_runs_one_missed_due_time_and_none_runs_none_w6() {
    let db = fresh_database().await;
    // first no replica schedules (an outage), then one does
    let mut quiet = fast_settings(db.clone());
    quiet.automate_workers = false;
    let app = spawn_with(quiet).await;
    let up = slow_upstream(0).await;
    let rig = slow_rig(&app, &up.base).await;
    let key = rig.t.key.clone();
    let wf = workflow(&app, &rig, slow_step()).await;
    let cron = json!("*/5 * * * * *");
    let latest = schedule(&app, &key, &wf, json!({"cron": cron, "catch_up": "latest"})).await;
    let none = schedule(&app, &key, &wf, json!({"cron": cron, "catch_up": "none"})).await;
    let (latest, none) = (latest["id"].as_str().unwrap(), none["id"].as_str().unwrap());
    // wait until at least one due time was missed and the last one is 1.5 s old (more
    // than the 1 s grace): 1.5 s past a multiple of 5 s, at least 5.5 s from now
    let created = Utc::now();
    let back = loop {
        let now = Utc::now();
        let into = (now.second() % 5) as i64 * 1000 + (now.timestamp_subsec_millis() as i64);
        if now - created >= chrono::Duration::milliseconds(5500) && (1500..1800).contains(&into) {
            break now;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let missed =
        chrono::DateTime::from_timestamp(back.timestamp() - back.timestamp() % 5, 0).unwrap();
    let _scheduler = spawn_with(fast_settings(db)).await;
    let next = missed + chrono::Duration::seconds(5);
    let has_next = |r: &[Value]| {
        r.iter()
            .any(|r| ts(&r["scheduled_for"]) == next && r["status"] != "running")
    };
    let latest_runs = wait_runs(&app, &key, &wf, latest, 10, has_next).await;
    let none_runs = wait_runs(&app, &key, &wf, none, 10, has_next).await;
    let due = |runs: &[Value]| {
        runs.iter()
            .map(|r| ts(&r["scheduled_for"]))
            .collect::<Vec<_>>()
    };
    // latest: the one latest missed due time ran (late), then the next on time
    assert_eq!(due(&latest_runs), vec![missed, next], "{latest_runs:#?}");
    assert!(ts(&latest_runs[0]["started_at"]) >= back);
    // none: missed ones are not run at all
    assert_eq!(due(&none_runs), vec![next], "{none_runs:#?}");
    assert!(latest_runs
        .iter()
        .chain(&none_runs)
        .all(|r| r["status"] == "succeeded"));
}

#[tokio::test]
async fn a_scheduled_run_uses_run_as_or_the_org_and_is_read_as_listed_w6() {
    let app = fast_app(|_| {}).await;
    let up = slow_upstream(0).await;
    let rig = slow_rig(&app, &up.base).await;
    let key = rig.t.key.clone();
    // a connected-app tool beside the API tool: `u1` never connected it
    let toolkit = crate::runtime::discovery::app_provider(
        &app,
        &key,
        "mail",
        &up.base,
        json!({"type": "api_key", "instructions": "Settings → API keys"}),
    )
    .await;
    let mail = app
        .post(
            "/v1/tools",
            &key,
            json!({"provider_id": toolkit, "name": "mail_list", "description": "Mail", "method": "GET",
                   "path": "/slow", "input_schema": {"type": "object", "properties": {}}}),
        )
        .await
        .ok(201)["id"]
        .as_str()
        .unwrap()
        .to_string();
    app.post(
        &format!("/v1/agents/{}/tools", rig.agent),
        &key,
        json!({"tool_id": mail, "provider_id": toolkit}),
    )
    .await
    .ok(201);
    let org_wf = workflow(&app, &rig, slow_step()).await;
    let mail_wf = workflow(
        &app,
        &rig,
        json!([{"id": "inbox", "type": "tool", "tool": "mail_list", "input": {}}]),
    )
    .await;
    let as_org = schedule(&app, &key, &org_wf, json!({"cron": "* * * * * *"})).await;
    let as_user = schedule(
        &app,
        &key,
        &mail_wf,
        json!({"cron": "* * * * * *", "run_as": {"user_id": "u1"}, "input": {"who": "u1"}}),
    )
    .await;
    let (as_org, as_user) = (
        as_org["id"].as_str().unwrap(),
        as_user["id"].as_str().unwrap(),
    );
    let finished = |r: &[Value]| r.iter().any(|r| r["status"] != "running");
    let org_runs = wait_runs(&app, &key, &org_wf, as_org, 10, finished).await;
    let user_runs = wait_runs(&app, &key, &mail_wf, as_user, 10, finished).await;
    for s in [as_org, as_user] {
        app.patch(&format!("/v1/schedules/{s}"), &key, json!({"paused": true}))
            .await
            .ok(200);
    }
    // the org's credentials: the API tool answered
    let ok = org_runs.iter().find(|r| r["status"] != "running").unwrap();
    assert_eq!(ok["status"], "succeeded", "{ok}");
    assert_eq!(ok["steps"]["fetch"]["_loop"]["complete"], true);
    assert_eq!(ok["schedule_id"], as_org);
    // u1's connections: none for the toolkit, so the run failed saying so
    let failed = user_runs.iter().find(|r| r["status"] != "running").unwrap();
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(
        failed["steps"]["inbox"]["_error"]["code"], "connect_required",
        "{failed}"
    );
    assert_eq!(failed["input"], json!({"who": "u1"}));

    // who reads them: any key of the org (studio or runtime scope), u1's token for the
    // runs made as u1, nobody else
    let studio_only = app.create_key(&rig.t.org, &["studio"]).await;
    // acting as an end user takes a key that could act as one anyway (scope `mint`)
    app.post(
        &format!("/v1/workflows/{mail_wf}/schedules"),
        &studio_only,
        json!({"cron": "0 7 * * *", "run_as": {"user_id": "u2"}}),
    )
    .await
    .problem(403, "forbidden");
    let run_path =
        |wf: &str, r: &Value| format!("/v1/workflows/{wf}/runs/{}", r["id"].as_str().unwrap());
    app.get(&run_path(&org_wf, ok), &studio_only).await.ok(200);
    app.get(&run_path(&mail_wf, failed), &studio_only)
        .await
        .ok(200);
    let u1 = rig.token(&app, "u1", json!({})).await;
    let u2 = rig.token(&app, "u2", json!({})).await;
    app.get(&run_path(&mail_wf, failed), &u1).await.ok(200);
    app.get(&run_path(&org_wf, ok), &u1)
        .await
        .problem(404, "not_found");
    app.get(&run_path(&mail_wf, failed), &u2)
        .await
        .problem(404, "not_found");
    let listed = |body: &Value| body["data"].as_array().unwrap().len();
    let u1_list = app.get(&format!("/v1/workflows/{mail_wf}/runs"), &u1).await;
    assert!(listed(u1_list.ok(200)) >= 1);
    let u2_list = app.get(&format!("/v1/workflows/{mail_wf}/runs"), &u2).await;
    assert_eq!(listed(u2_list.ok(200)), 0);
    // the filter keeps one schedule's runs; another org's key sees none of them
    let all = runs_of(&app, &studio_only, &org_wf, as_org).await;
    assert!(all.iter().all(|r| r["schedule_id"] == as_org));
    let other = app.tenant("other").await;
    app.get(
        &format!("/v1/workflows/{org_wf}/runs?schedule_id={as_org}"),
        &other.key,
    )
    .await
    .problem(404, "not_found");
}
