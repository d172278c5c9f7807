//! The stream read by the `ai` npm package's own client (parseJsonEventStream +
//! readUIMessageStream, in tests/sse-client): every chunk validates against the SDK's
//! schema, the tool part ends `output-available`, and progress comes at most once per
//! 750 ms of walk time (S1).

use serde_json::{json, Value};

use crate::support::helpers::spawn_app;
use crate::support::rig::Rig;
use crate::support::upstream_server;

async fn read_with_ai_client(url: &str, token: &str, body: &Value) -> Value {
    let dir = format!("{}/tests/sse-client", env!("CARGO_MANIFEST_DIR"));
    assert!(
        std::path::Path::new(&format!("{dir}/node_modules/ai")).exists(),
        "run `npm ci` in tests/sse-client (scripts/test does it)"
    );
    let out = tokio::process::Command::new("node")
        .current_dir(&dir)
        .arg("read.mjs")
        .arg(url)
        .arg(token)
        .arg(body.to_string())
        .output()
        .await
        .expect("node runs");
    assert!(
        out.status.success(),
        "node failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("client output is JSON")
}

#[tokio::test]
async fn the_ai_sdk_client_reads_the_stream() {
    let app = spawn_app().await;
    let up = upstream_server::start().await;
    let rig = Rig::new(&app, &up, true).await;
    // a provider slow enough (2 requests/s, so a 7-request walk takes 3 s) for several progress chunks
    rig.bind_limited(&app, &up.base, "slow_contacts", 2).await;
    let token = rig.token(&app, "u1", json!({})).await;
    let url = format!(
        "{}/v1/agents/{}/threads/ai/tool-calls",
        app.address, rig.agent
    );
    let out = read_with_ai_client(
        &url,
        &token,
        &json!({"name": "slow_contacts", "arguments": {"_all_pages": true}}),
    )
    .await;

    assert_eq!(out["status"], 200);
    assert_eq!(out["headers"]["x-vercel-ai-ui-message-stream"], "v1");
    let chunks = out["chunks"].as_array().unwrap();
    let progress: Vec<&Value> = chunks
        .iter()
        .filter(|c| c["type"] == "data-tool-loop-progress")
        .collect();
    assert!(
        progress.len() >= 2,
        "a 3 s walk reports progress: {chunks:?}"
    );
    let call_id = chunks
        .iter()
        .find(|c| c["type"] == "tool-input-available")
        .unwrap()["toolCallId"]
        .clone();
    for w in progress.windows(2) {
        assert_eq!(w[0]["id"], call_id);
        let gap = w[1]["data"]["elapsedMs"].as_i64().unwrap()
            - w[0]["data"]["elapsedMs"].as_i64().unwrap();
        assert!(gap >= 750, "progress chunks {gap} ms apart: {progress:?}");
    }
    // the SDK assembled one assistant message with the tool part's output
    let parts = out["message"]["parts"].as_array().unwrap();
    let tool_part = parts
        .iter()
        .find(|p| p["type"] == "tool-slow_contacts")
        .expect("tool part");
    assert_eq!(tool_part["state"], "output-available");
    assert_eq!(tool_part["output"]["_itemCount"], 60);
    assert_eq!(tool_part["output"]["_pagingComplete"], true);
    // the data parts carry the same id, so the client kept one live progress line
    let data_parts: Vec<&Value> = parts
        .iter()
        .filter(|p| p["type"] == "data-tool-loop-progress")
        .collect();
    assert_eq!(data_parts.len(), 1, "{parts:?}");
}
