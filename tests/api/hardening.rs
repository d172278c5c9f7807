//! issue 10: no request can hold a worker with work proportional to an unbounded list.
//! Every list in the arguments is counted before it is parsed and refused with
//! `argument_limit_exceeded` naming the bound (no timing is asserted: a refusal by count
//! is what makes the call cheap).

use serde_json::{json, Value};

use crate::rig::Rig;

fn refused_by_count(r: &crate::helpers::Res, needle: &str) {
    r.problem(400, "argument_limit_exceeded");
    let detail = r.body["detail"].as_str().unwrap_or("");
    assert!(detail.contains(needle), "{detail}");
}

#[tokio::test]
async fn argument_lists_are_bounded_before_any_work() {
    let (app, up, rig, token) = Rig::start(true).await;
    // F: 40,000 `_fields` paths (a ~300 KB body) — refused by count.
    let many: Vec<String> = (0..40_000).map(|i| format!("field_{i}")).collect();
    let r = rig
        .call(&app, &token, "t", "list_contacts", json!({"_fields": many}))
        .await;
    refused_by_count(&r, "40000 paths");
    // the same as one comma-separated string
    let r = rig
        .call(
            &app,
            &token,
            "t",
            "list_contacts",
            json!({"_fields": many.join(",")}),
        )
        .await;
    refused_by_count(&r, "40000 paths");
    // E2: 40,000 `_for_each` values — counted raw, before de-duplication.
    let values: Vec<Value> = (0..40_000).map(|i| json!(i)).collect();
    let r = rig
        .call(
            &app,
            &token,
            "t",
            "get_contact",
            json!({"_for_each": {"key": "id", "values": values}}),
        )
        .await;
    refused_by_count(&r, "40000 values");
    // R1: 10,000 clauses, and an `in` with 50,000 values.
    let clauses: Vec<Value> = (0..10_000)
        .map(|i| json!({"field": "id", "op": "neq", "value": i}))
        .collect();
    let r = rig
        .call(
            &app,
            &token,
            "t",
            "list_contacts",
            json!({"_filter": clauses}),
        )
        .await;
    refused_by_count(&r, "10000 clauses");
    let set: Vec<Value> = (0..50_000).map(|i| json!(i)).collect();
    let r = rig
        .call(
            &app,
            &token,
            "t",
            "list_contacts",
            json!({"_filter": [{"field": "id", "op": "in", "value": set}]}),
        )
        .await;
    refused_by_count(&r, "50000 values");
    // a path of 10,000 segments
    let deep = vec!["a"; 10_000].join(".");
    let r = rig
        .call(
            &app,
            &token,
            "t",
            "list_contacts",
            json!({"_fields": [deep]}),
        )
        .await;
    refused_by_count(&r, "bytes");
    assert_eq!(up.count("/contacts"), 0, "nothing reached the upstream");

    // G4: queryToolResult's lists are bounded the same way
    let walked = rig
        .call(
            &app,
            &token,
            "t",
            "list_contacts",
            json!({"_all_pages": true}),
        )
        .await;
    let id = walked.ok(200)["result"]["_resultId"]
        .as_str()
        .unwrap()
        .to_string();
    let r = rig
        .call(
            &app,
            &token,
            "t",
            "queryToolResult",
            json!({"resultId": id, "fields": many}),
        )
        .await;
    refused_by_count(&r, "40000 paths");
    let r = rig
        .call(
            &app,
            &token,
            "t",
            "queryToolResult",
            json!({"resultId": id, "filter": clauses}),
        )
        .await;
    refused_by_count(&r, "10000 clauses");
    // within the bounds everything still works
    let r = rig
        .call(
            &app,
            &token,
            "t",
            "queryToolResult",
            json!({"resultId": id, "fields": ["id"], "limit": 2}),
        )
        .await;
    assert_eq!(r.ok(200)["result"]["items"], json!([{"id": 0}, {"id": 1}]));
}

#[tokio::test]
async fn workflow_steps_are_bounded() {
    let (app, _up, rig, _token) = Rig::start(true).await;
    let steps: Vec<Value> = (0..5_000)
        .map(|i| json!({"id": format!("s{i}"), "type": "tool", "tool": "list_contacts", "input": {}}))
        .collect();
    let r = app
        .post(
            "/v1/workflows",
            &rig.t.key,
            json!({"name": "flood", "agent_id": rig.agent, "steps": steps}),
        )
        .await;
    r.problem(400, "validation_failed");
    assert!(r.body["detail"].as_str().unwrap().contains("at most 50"));
}
