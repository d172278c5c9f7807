//! Q1: `queryToolResult` with `aggregate` over stored results made by real calls —
//! sound over a complete walk, flagged partial over one page, and over a plain payload
//! cut by the guard (its provenance is kept beside it).

use serde_json::{json, Value};

use crate::support::rig::Rig;
use crate::support::upstream_server::{CONTACTS, INBOXES};

async fn aggregate(
    app: &crate::support::helpers::TestApp,
    rig: &Rig,
    token: &str,
    rid: &str,
    spec: Value,
) -> Value {
    rig.call(
        app,
        token,
        "q1",
        "queryToolResult",
        json!({"resultId": rid, "aggregate": spec}),
    )
    .await
    .ok(200)["result"]
        .clone()
}

#[tokio::test]
async fn q1_aggregates_over_a_complete_walk_are_sound() {
    let (app, _up, rig, token) = Rig::start(true).await;
    let walk = rig
        .call(
            &app,
            &token,
            "q1",
            "list_contacts",
            json!({"_all_pages": true, "_fields": ["id"]}),
        )
        .await
        .ok(200)["result"]
        .clone();
    assert_eq!(walk["_pagingComplete"], true);
    let rid = walk["_resultId"].as_str().unwrap();

    // the stored set is unprojected: fields that were not shown can be aggregated
    let r = aggregate(
        &app,
        &rig,
        &token,
        rid,
        json!({"count": true, "sum": ["company.size"], "max": ["id"], "group_by": "company.name"}),
    )
    .await;
    assert_eq!(r["sound"], true, "{r}");
    let n = CONTACTS as u64;
    assert_eq!(
        r["aggregates"],
        json!({"count": n, "sum": {"company.size": n * (n - 1) / 2}, "max": {"id": n - 1}})
    );
    assert_eq!(r["groupCount"], 7);
    let groups = r["groups"].as_array().unwrap();
    assert_eq!(groups[0]["count"], 34);
    assert_eq!(
        groups
            .iter()
            .map(|g| g["count"].as_u64().unwrap())
            .sum::<u64>(),
        n
    );
    assert!(r["note"].as_str().unwrap().starts_with("Sound"));

    // group_by an array path: a row counts in each of its groups; filter runs first
    let r = rig
        .call(
            &app,
            &token,
            "q1",
            "queryToolResult",
            json!({"resultId": rid,
            "filter": [{"field": "id", "op": "lt", "value": 10}],
            "aggregate": {"count": true, "group_by": "tags"}}),
        )
        .await
        .ok(200)["result"]
        .clone();
    assert_eq!(r["aggregates"]["count"], 10);
    assert_eq!(
        r["groups"],
        json!([{"key": "cold", "count": 5}, {"key": "lead", "count": 5}, {"key": "vip", "count": 5}])
    );
    assert!(r["note"]
        .as_str()
        .unwrap()
        .contains("several `tags` values"));

    // misuse is a clear 400
    rig.call(
        &app,
        &token,
        "q1",
        "queryToolResult",
        json!({"resultId": rid, "aggregate": {"median": ["id"]}}),
    )
    .await
    .problem(400, "invalid_arguments");
}

#[tokio::test]
async fn q1_one_page_is_not_sound_and_says_so() {
    let (app, _up, rig, token) = Rig::start(true).await;
    let page = rig
        .call(
            &app,
            &token,
            "q1",
            "list_contacts",
            json!({"_fields": ["id"]}),
        )
        .await
        .ok(200)["result"]
        .clone();
    let rows = page["_itemCount"].as_u64().unwrap();
    assert!(rows > 0 && rows < CONTACTS as u64);
    let rid = page["_resultId"].as_str().unwrap();
    let r = aggregate(
        &app,
        &rig,
        &token,
        rid,
        json!({"count": true, "sum": ["company.size"]}),
    )
    .await;
    assert_eq!(r["sound"], false, "{r}");
    assert_eq!(r["aggregates"]["count"], rows);
    assert_eq!(
        r["aggregates"]["sum"]["company.size"],
        rows * (rows - 1) / 2
    );
    let note = r["note"].as_str().unwrap();
    assert!(
        note.starts_with("Not sound") && note.contains("never as totals"),
        "{note}"
    );
}

#[tokio::test]
async fn q1_a_plain_result_cut_by_the_guard_remembers_it_was_whole() {
    let (app, _up, rig, token) = Rig::start(false).await;
    let cut = rig
        .call(&app, &token, "q1", "list_inboxes", json!({}))
        .await
        .ok(200)["result"]
        .clone();
    assert_eq!(cut["_truncated"], true);
    let rid = cut["_resultId"].as_str().unwrap();
    let r = aggregate(
        &app,
        &rig,
        &token,
        rid,
        json!({"count": true, "min": ["created_at"], "group_by": "pod_id"}),
    )
    .await;
    assert_eq!(r["sound"], true, "{r}");
    assert_eq!(
        r["aggregates"],
        json!({"count": INBOXES, "min": {"created_at": "2026-10-01T12:00:00Z"}})
    );
    assert_eq!(
        r["groups"],
        json!([{"key": "pod_default", "count": INBOXES, "min": {"created_at": "2026-10-01T12:00:00Z"}}])
    );
}
