//! Issue 15: the agent and its compiled tools load once per call, so the SQL statements of
//! a pass-through tool call do not grow with the number of tools bound to the agent.
//! Counted (not timed) on the wire by `sql_count`.

use serde_json::json;

use crate::helpers::{fresh_database, spawn_with, test_settings};
use crate::rig::{tool_defs, Rig};
use crate::sql_count;

/// Statements (their SQL) of one warm pass-through call (`get_contact`) on an agent with
/// `tools` bound tools, the first call of its thread excluded (compiling, the thread's
/// creation).
async fn statements_per_call(tools: usize) -> Vec<String> {
    let counter = sql_count::start(&fresh_database().await).await;
    let app = spawn_with(test_settings(counter.url.clone())).await;
    let up = crate::upstream_server::start().await;
    let mut defs = tool_defs();
    defs.retain(|d| d.0 == "get_contact");
    for i in 1..tools {
        let name: &'static str = Box::leak(format!("filler_{i}").into_boxed_str());
        defs.push((
            name,
            "GET",
            "/contacts/{id}",
            json!({"type": "object", "properties": {"id": {"type": "integer"}}}),
        ));
    }
    let rig = Rig::with_tools(&app, &up.base, defs, false).await;
    let token = rig.token(&app, "u1", json!({})).await;
    let call = || rig.call(&app, &token, "th", "get_contact", json!({"id": 7}));
    call().await.ok(200);
    let before = counter.statements();
    let r = call().await;
    assert_eq!(r.ok(200)["result"]["name"], "Contact 7");
    counter.sql_since(before)
}

#[tokio::test]
async fn statements_per_pass_through_call_do_not_grow_with_bound_tools() {
    let sql = statements_per_call(2).await;
    let (two, many) = (sql.len(), statements_per_call(33).await.len());
    eprintln!("SQL statements per pass-through call: 2 tools {two}, 33 tools {many}: {sql:#?}");
    assert!(two > 0, "the counter sees the app's statements");
    // the thread is read with the agent and not written while it is fresh
    assert!(
        !sql.iter()
            .any(|s| s.contains("INSERT INTO threads") || s.contains("UPDATE threads")),
        "{sql:#?}"
    );
    // and the org credential comes with the agent, sealed
    assert!(
        !sql.iter()
            .any(|s| s.starts_with("SELECT credential_ciphertext")),
        "{sql:#?}"
    );
    // the agent (with its thread and the sealed credential), the call's record, its outcome
    assert!(two <= 3, "{two} statements: {sql:#?}");
    assert_eq!(many, two, "2 tools: {two} statements, 33 tools: {many}");
}

/// A compiled tool is rebuilt when its tool changes: a PATCH of the input schema is seen by
/// the very next call (the version is read with the agent on every call).
#[tokio::test]
async fn a_changed_tool_is_recompiled_on_the_next_call() {
    let (app, up, rig, token) = Rig::start(false).await;
    let call = |args| rig.call(&app, &token, "th", "get_contact", args);
    call(json!({"id": 7})).await.ok(200);
    call(json!({"id": 7, "expand": "all"}))
        .await
        .problem(400, "invalid_arguments");
    let patched = app
        .patch(
            &format!("/v1/tools/{}", rig.tools["get_contact"]),
            &rig.t.key,
            json!({"input_schema": {"type": "object", "required": ["id"], "properties": {
                "id": {"type": "integer"}, "expand": {"type": "string"}}}}),
        )
        .await;
    patched.ok(200);
    let r = call(json!({"id": 7, "expand": "all"})).await;
    assert_eq!(r.ok(200)["result"]["name"], "Contact 7", "{}", r.text);
    assert!(up.total() >= 2);
}

/// A compiled tool is rebuilt when its provider changes: its request template carries the
/// provider's base URL, so a PATCHed `base_url` is where the next call goes.
#[tokio::test]
async fn a_changed_provider_recompiles_its_tools() {
    let (app, up, rig, token) = Rig::start(false).await;
    let other = crate::upstream_server::start().await;
    let call = || rig.call(&app, &token, "th", "get_contact", json!({"id": 7}));
    call().await.ok(200);
    assert_eq!(
        (up.count("/contacts/7"), other.count("/contacts/7")),
        (1, 0)
    );
    app.patch(
        &format!("/v1/providers/{}", rig.provider),
        &rig.t.key,
        json!({"base_url": other.base, "credential": "org-secret"}),
    )
    .await
    .ok(200);
    call().await.ok(200);
    assert_eq!(
        (up.count("/contacts/7"), other.count("/contacts/7")),
        (1, 1)
    );
}
