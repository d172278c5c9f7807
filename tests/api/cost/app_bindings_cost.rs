//! D5: a warm `steps` of an agent with hundreds of connected-app bindings reads no row per
//! binding: the replica remembers the agent with the caller's connections
//! (`call::agent_memory`, kept per connection user), so the step's statements are the
//! same few whether the agent binds 30 app tools or 300. Counted on the wire by
//! `sql_count`. A measurement (ignored) times warm steps with 3,000 app bindings.

use serde_json::json;

use crate::cost::sql_per_call::with_memory;
use crate::runtime::discovery::app_provider;
use crate::support::helpers::{fresh_database, spawn_with, TestApp};
use crate::support::sql_count::{self, SqlCounter};

/// An app (through a statement counter) with an agent bound to `tools` tools of one
/// connected-app toolkit, memory on for `memory` seconds: (app, counter, key, agent).
async fn big_agent(tools: usize, memory: u64) -> (TestApp, SqlCounter, String, String) {
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
    (app, counter, t.key, agent)
}

/// The statements of a warm `steps` (the thread's first step excluded) of [`big_agent`].
async fn statements_per_step(tools: usize, memory: u64) -> Vec<String> {
    let (app, counter, key, agent) = big_agent(tools, memory).await;
    let url = format!("/v1/agents/{agent}/threads/th/steps");
    let step = || app.post(&url, &key, json!({}));
    step().await.ok(200);
    app.vectors_settled().await;
    let before = counter.statements();
    let r = step().await;
    let names: Vec<&str> = r.ok(200)["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"connect_toolkit"), "{names:?}");
    // the org key's own checks (the caller here) are not the agent's
    let mut sql = counter.sql_since(before);
    sql.retain(|s| !s.contains("api_keys"));
    sql
}

#[tokio::test]
async fn d5_a_warm_step_reads_no_row_per_app_binding() {
    // the statement path (memory off) reads the agent with every binding's connection
    let cold = statements_per_step(300, 0).await;
    assert!(
        cold.iter().any(|s| s.contains("FROM agents a")),
        "the counter sees the agent statement: {cold:#?}"
    );
    let few = statements_per_step(30, 300).await;
    let many = statements_per_step(300, 300).await;
    eprintln!("warm steps, 30 app bindings: {few:#?}\n300 app bindings: {many:#?}");
    for sql in [&few, &many] {
        assert!(!sql.iter().any(|s| s.contains("FROM agents a")), "{sql:#?}");
        assert!(
            !sql.iter().any(|s| s.contains("connections")),
            "no connection read: {sql:#?}"
        );
    }
    // what is left is per thread (the tools it loaded), not per binding
    assert!(many.len() <= 1, "{many:#?}");
    assert_eq!(many, few, "30 bindings: {few:#?}, 300: {many:#?}");
}

/// Measurement: warm `steps` latency (one client, the test profile) of an agent with
/// 3,000 app bindings, memory on. `cargo test --test api warm_steps_latency -- --ignored
/// --nocapture`.
#[tokio::test]
#[ignore = "a measurement: run by hand"]
async fn warm_steps_latency_with_3000_app_bindings() {
    let (app, _counter, key, agent) = big_agent(3000, 300).await;
    let url = format!("/v1/agents/{agent}/threads/th/steps");
    app.post(&url, &key, json!({})).await.ok(200);
    let mut ms = Vec::new();
    for _ in 0..100 {
        let t = std::time::Instant::now();
        app.post(&url, &key, json!({})).await.ok(200);
        ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    ms.sort_by(f64::total_cmp);
    eprintln!(
        "warm steps, 3,000 app bindings: p50 {:.2} ms, p95 {:.2} ms",
        ms[ms.len() / 2],
        ms[ms.len() * 95 / 100]
    );
    assert!(ms[ms.len() / 2] > 0.0);
}
