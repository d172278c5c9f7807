//! A tool's own arguments are checked against its input schema before any request: an
//! unknown argument, a wrong JSON type or a missing required argument is
//! `400 invalid_arguments` naming it and listing the real ones — never a 502 "upstream
//! could not be reached" — on a single call, on a looping call (L3: reserved arguments
//! keep their own rules) and in a workflow step (W2 `_error`). The MCP server path is in
//! `mcp/server.rs`.

use serde_json::{json, Value};

use crate::support::rig::Rig;

fn detail(body: &Value) -> String {
    body["detail"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn an_unknown_argument_is_a_400_naming_it_and_the_real_ones_before_any_request() {
    let (app, up, rig, token) = Rig::start(false).await;
    let r = rig
        .call(
            &app,
            &token,
            "th",
            "list_contacts",
            json!({"colour": "red"}),
        )
        .await;
    r.problem(400, "invalid_arguments");
    let d = detail(&r.body);
    assert!(d.contains("`colour`"), "{d}");
    assert!(
        d.contains("`page` (integer)") && d.contains("`per_page` (integer)"),
        "{d}"
    );
    // a wrong JSON type, and a missing required argument
    let r = rig
        .call(&app, &token, "th", "get_contact", json!({"id": "seven"}))
        .await;
    r.problem(400, "invalid_arguments");
    assert!(
        detail(&r.body).contains("`id` must be integer, not a string (\"seven\")"),
        "{}",
        r.text
    );
    let r = rig.call(&app, &token, "th", "get_contact", json!({})).await;
    r.problem(400, "invalid_arguments");
    assert!(detail(&r.body).contains("Missing required argument `id`"));
    assert_eq!(up.total(), 0, "nothing reached the upstream");
    // the same tool with right arguments works, and null is "not given"
    rig.call(&app, &token, "th", "get_contact", json!({"id": 7}))
        .await
        .ok(200);
    rig.call(
        &app,
        &token,
        "th",
        "list_contacts",
        json!({"page": null, "per_page": 5}),
    )
    .await
    .ok(200);
}

#[tokio::test]
async fn l3_reserved_arguments_keep_their_rules_and_the_tools_own_are_checked_too() {
    let (app, up, rig, token) = Rig::start(true).await;
    // E2: a fan-out fills the required key, so it is not "missing"
    let r = rig
        .call(
            &app,
            &token,
            "th",
            "get_contact",
            json!({"_for_each": {"key": "id", "values": [1, 2]}}),
        )
        .await;
    assert_eq!(r.ok(200)["result"]["_itemCount"], 2, "{}", r.text);
    let before = up.total();
    // P1: a walk with a wrong-typed page size is refused before its first page
    let r = rig
        .call(
            &app,
            &token,
            "th",
            "list_contacts",
            json!({"_all_pages": true, "per_page": "many"}),
        )
        .await;
    r.problem(400, "invalid_arguments");
    assert!(detail(&r.body).contains("`per_page` must be integer"));
    let r = rig
        .call(
            &app,
            &token,
            "th",
            "list_contacts",
            json!({"_all_pages": true, "_fields": ["id"], "pageSize": 10}),
        )
        .await;
    r.problem(400, "invalid_arguments");
    assert!(detail(&r.body).contains("Unknown argument `pageSize`"));
    // a reserved argument's own rule still answers first
    rig.call(
        &app,
        &token,
        "th",
        "list_contacts",
        json!({"_all_pages": 3, "colour": "red"}),
    )
    .await
    .problem(400, "invalid_arguments");
    assert_eq!(up.total(), before, "nothing reached the upstream");
}

#[tokio::test]
async fn w2_a_step_with_an_unknown_argument_fails_with_invalid_arguments() {
    let (app, up, rig, _token) = Rig::start(true).await;
    let wf = app
        .post(
            "/v1/workflows",
            &rig.t.key,
            json!({"name": "wf", "agent_id": rig.agent, "steps": [
                {"id": "one", "type": "tool", "tool": "get_contact", "input": {"id": 3, "expand": true}}
            ]}),
        )
        .await
        .ok(201)["id"]
        .as_str()
        .unwrap()
        .to_string();
    let run = app
        .post(&format!("/v1/workflows/{wf}/runs"), &rig.t.key, json!({}))
        .await
        .ok(201)
        .clone();
    assert_eq!(run["status"], "failed", "{run}");
    let err = &run["steps"]["one"]["_error"];
    assert_eq!(err["code"], "invalid_arguments", "{err}");
    let d = detail(err);
    assert!(
        d.contains("`expand`") && d.contains("`id` (integer, required)"),
        "{d}"
    );
    assert_eq!(up.total(), 0);
}
