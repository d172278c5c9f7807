//! Tool calls against real in-test upstreams: complete walks by page, offset and body,
//! partial walks reported honestly, fan-out, credentials.

use std::collections::HashSet;

use serde_json::{json, Value};

use crate::support::helpers::spawn_app;
use crate::support::rig::Rig;
use crate::support::upstream_server::{self, CONTACTS, ORDERS};

fn ids(result: &Value, field: &str) -> Vec<String> {
    result["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r[field].to_string())
        .collect()
}

#[tokio::test]
async fn page_offset_and_body_walks_are_complete() {
    let (app, up, rig, token) = Rig::start(true).await;

    let r = rig
        .call(
            &app,
            &token,
            "t1",
            "list_contacts",
            json!({"_all_pages": true}),
        )
        .await;
    let res = r.ok(200)["result"].clone();
    assert_eq!(r.body["name"], "list_contacts");
    assert!(r.body["id"].as_str().unwrap().starts_with("call_"));
    assert_eq!(res["_itemCount"], CONTACTS);
    assert_eq!(res["_pagingComplete"], true, "{}", res["_note"]);
    assert_eq!(res["_likelyMoreRows"], false);
    assert_eq!(res["_stoppedBy"], "end");
    assert!(res["_resultId"].as_str().unwrap().len() > 20);
    let got = ids(&res, "id");
    assert_eq!(
        got.iter().collect::<HashSet<_>>().len(),
        CONTACTS,
        "no duplicates"
    );
    assert_eq!(
        up.count("/contacts"),
        3,
        "the engine asks for the declared maximum (100)"
    );
    assert!(up
        .stats
        .lock()
        .unwrap()
        .last_query
        .as_deref()
        .unwrap()
        .contains("per_page=100"));

    let r = rig
        .call(
            &app,
            &token,
            "t1",
            "list_orders",
            json!({"_all_pages": true}),
        )
        .await;
    let res = r.ok(200)["result"].clone();
    assert_eq!(res["_itemCount"], ORDERS);
    assert_eq!(res["_pagingComplete"], true);
    assert_eq!(
        ids(&res, "order_id").iter().collect::<HashSet<_>>().len(),
        ORDERS
    );

    let r = rig
        .call(
            &app,
            &token,
            "t1",
            "search_contacts",
            json!({"body": {"query": "all"}, "_all_pages": true}),
        )
        .await;
    let res = r.ok(200)["result"].clone();
    let expected = (0..CONTACTS).filter(|i| i % 3 == 0).count();
    assert_eq!(res["_itemCount"], expected, "{res}");
    assert_eq!(res["_pagingComplete"], true);

    // projection and filter on the walk (R2 then F)
    let r = rig
        .call(&app, &token, "t1", "list_contacts", json!({"_all_pages": true, "_fields": ["id", "company.name"],
              "_filter": [{"field": "tags", "op": "eq", "value": "vip"}, {"field": "id", "op": "lt", "value": 50}]}))
        .await;
    let res = r.ok(200)["result"].clone();
    assert_eq!(res["_itemCount"], 25);
    assert_eq!(
        res["items"][0],
        json!({"id": 0, "company": {"name": "Co 0"}})
    );
}

#[tokio::test]
async fn failing_pages_give_an_honest_partial_verdict_and_keep_rows() {
    let (app, up, rig, token) = Rig::start(true).await;
    let r = rig
        .call(
            &app,
            &token,
            "t",
            "flaky_contacts",
            json!({"_all_pages": true}),
        )
        .await;
    let res = r.ok(200)["result"].clone();
    // pages 1-3 succeed after one 503 each (retried); page 4 always fails
    assert_eq!(res["_itemCount"], 30, "{res}");
    assert_eq!(res["_pagingComplete"], false);
    assert_eq!(res["_likelyMoreRows"], true);
    assert_eq!(res["_stoppedBy"], "upstream_error");
    assert!(res["_note"].as_str().unwrap().len() > 10);
    assert!(up.count("/flaky") >= 7);
}

#[tokio::test]
async fn single_page_reports_more_and_plain_calls_keep_the_payload() {
    let (app, up, rig, token) = Rig::start(false).await;
    // looping off: the tool's own payload, untouched
    let r = rig
        .call(
            &app,
            &token,
            "t",
            "list_contacts",
            json!({"page": 2, "per_page": 5}),
        )
        .await;
    let res = r.ok(200)["result"].clone();
    assert_eq!(res["contacts"].as_array().unwrap().len(), 5);
    assert_eq!(res["contacts"][0]["id"], 5);
    // reserved arguments are refused when the binding does not loop, never sent upstream
    let before = up.count("/contacts");
    let r = rig
        .call(
            &app,
            &token,
            "t",
            "list_contacts",
            json!({"_all_pages": true}),
        )
        .await;
    r.problem(400, "invalid_arguments");
    assert_eq!(up.count("/contacts"), before);
}

#[tokio::test]
async fn fan_out_tags_rows_and_reports_per_value_errors() {
    let (app, up, rig, token) = Rig::start(true).await;
    let r = rig
        .call(
            &app,
            &token,
            "t",
            "get_contact",
            json!({"_for_each": {"key": "id", "values": [1, 2, 2, "3", 9999]}}),
        )
        .await;
    let res = r.ok(200)["result"].clone();
    assert_eq!(res["_itemCount"], 3, "{res}");
    let errs = res["_forEachErrors"].as_array().unwrap();
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0]["value"], 9999);
    assert_eq!(errs[0]["status"], 404);
    assert_eq!(up.count("/contacts/2"), 1, "values are de-duplicated");
    let r = rig
        .call(
            &app,
            &token,
            "t",
            "get_contact",
            json!({"_for_each": {"key": "nope", "values": [1]}}),
        )
        .await;
    r.problem(400, "invalid_for_each_key");
    assert!(r.body["detail"].as_str().unwrap().contains("id"));
    let r = rig
        .call(
            &app,
            &token,
            "t",
            "list_inboxes",
            json!({"_all_pages": true}),
        )
        .await;
    r.problem(400, "all_pages_unsupported");
    // path values are percent-encoded: no escaping to other paths
    let r = rig
        .call(
            &app,
            &token,
            "t",
            "get_contact",
            json!({"id": "../inboxes"}),
        )
        .await;
    assert!(
        r.status.as_u16() == 502 || r.status.as_u16() == 400,
        "{}",
        r.text
    );
    assert_eq!(up.count("/inboxes"), 0);
}

#[tokio::test]
async fn credentials_user_then_org_and_required() {
    let app = spawn_app().await;
    let up = upstream_server::start().await;
    let rig = Rig::new(&app, &up, false).await;
    let own = rig
        .token(
            &app,
            "u1",
            json!({"credentials": {rig.provider.clone(): "user-secret-1"}}),
        )
        .await;
    rig.call(&app, &own, "t", "list_contacts", json!({}))
        .await
        .ok(200);
    assert_eq!(
        up.stats.lock().unwrap().last_auth.as_deref(),
        Some("Bearer user-secret-1")
    );
    let plain = rig.token(&app, "u2", json!({})).await;
    rig.call(&app, &plain, "t", "list_contacts", json!({}))
        .await
        .ok(200);
    assert_eq!(
        up.stats.lock().unwrap().last_auth.as_deref(),
        Some("Bearer org-secret")
    );
    // an org key with scope runtime uses the org credential too
    rig.call(&app, &rig.t.key, "t", "list_contacts", json!({}))
        .await
        .ok(200);

    app.patch(
        &format!("/v1/providers/{}", rig.provider),
        &rig.t.key,
        json!({"user_credentials_required": true}),
    )
    .await
    .ok(200);
    let r = rig
        .call(&app, &plain, "t", "list_contacts", json!({}))
        .await;
    r.problem(409, "credential_required");
    assert!(!r.text.contains("org-secret"));
    rig.call(&app, &own, "t", "list_contacts", json!({}))
        .await
        .ok(200);
}
