//! D5: a warm `steps` of an agent with hundreds of connected-app bindings reads no row per
//! binding: the replica remembers the agent with the caller's connections
//! (`call::agent_memory`, kept per connection user), so the step's statements are the
//! same few whether the agent binds 3 app tools or 300. Counted on the wire by
//! `sql_count`.

use serde_json::json;

use crate::cost::sql_per_call::with_memory;
use crate::runtime::discovery::app_provider;
use crate::support::helpers::{fresh_database, spawn_with};
use crate::support::sql_count;

/// The statements of a warm `steps` (the thread's first step excluded) on an agent bound
/// to `tools` tools of one connected-app toolkit, memory on for `memory` seconds.
async fn statements_per_step(tools: usize, memory: u64) -> Vec<String> {
    let counter = sql_count::start(&fresh_database().await).await;
    let mut s = with_memory(counter.url.clone(), memory);
    s.org_requests_per_second = 10_000;
    let app = spawn_with(s).await;
    let t = app.tenant("apps").await;
    let p = app_provider(
        &app,
        &t.key,
        "mail",
        "https://mail.example.com",
        json!({"type": "api_key", "instructions": "Settings → API keys"}),
    )
    .await;
    let mut bindings = Vec::new();
    for i in 0..tools {
        let r = app
            .post(
                "/v1/tools",
                &t.key,
                json!({"provider_id": p, "name": format!("mail_tool_{i}"),
                       "description": format!("Mail operation number {i} on the user's mailbox."),
                       "method": "GET", "path": format!("/op/{i}"),
                       "input_schema": {"type": "object", "properties": {}}}),
            )
            .await;
        let id = r.ok(201)["id"].as_str().unwrap().to_string();
        bindings.push(json!({"tool_id": id, "provider_id": p}));
    }
    let agent = app
        .post(
            "/v1/agents",
            &t.key,
            json!({"name": "big", "deployment_id": t.deployment, "agentTools": bindings}),
        )
        .await
        .ok(201)["id"]
        .as_str()
        .unwrap()
        .to_string();
    let step = || {
        app.post(
            &format!("/v1/agents/{agent}/threads/th/steps"),
            &t.key,
            json!({}),
        )
    };
    step().await.ok(200);
    let before = counter.statements();
    let r = step().await;
    let names: Vec<&str> = r.ok(200)["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"connect_toolkit"), "{names:?}");
    counter.sql_since(before)
}

#[tokio::test]
async fn d5_a_warm_step_reads_no_row_per_app_binding() {
    // the statement path (memory off) reads the agent with every binding's connection
    let cold = statements_per_step(300, 0).await;
    assert!(
        cold.iter().any(|s| s.contains("FROM agents a")),
        "the counter sees the agent statement: {cold:#?}"
    );
    let few = statements_per_step(3, 300).await;
    let many = statements_per_step(300, 300).await;
    eprintln!("warm steps, 3 app bindings: {few:#?}\n300 app bindings: {many:#?}");
    for sql in [&few, &many] {
        assert!(!sql.iter().any(|s| s.contains("FROM agents a")), "{sql:#?}");
        assert!(
            !sql.iter().any(|s| s.contains("connections")),
            "no connection read: {sql:#?}"
        );
    }
    // what is left is per thread (the tools it loaded), not per binding
    assert!(many.len() <= 1, "{many:#?}");
    assert_eq!(many, few, "3 bindings: {few:#?}, 300: {many:#?}");
}
