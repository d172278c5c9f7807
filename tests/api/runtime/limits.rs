//! Streaming, rate limits (upstream and loopgate's own), and the SSRF guard.

use serde_json::{json, Value};

use crate::support::helpers::{fresh_database, spawn_app, spawn_with, test_settings};
use crate::support::rig::Rig;
use crate::support::upstream_server;

#[tokio::test]
async fn tool_call_streams_the_ui_message_protocol() {
    let (app, _up, rig, token) = Rig::start(true).await;
    let res = app
        .client
        .post(format!(
            "{}/v1/agents/{}/threads/s/tool-calls",
            app.address, rig.agent
        ))
        .bearer_auth(&token)
        .header("accept", "text/event-stream")
        .json(
            &json!({"name": "list_contacts", "arguments": {"_all_pages": true, "_fields": ["id"]}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
    let h = res.headers().clone();
    assert_eq!(h["content-type"], "text/event-stream");
    assert_eq!(h["x-vercel-ai-ui-message-stream"], "v1");
    assert_eq!(h["cache-control"], "no-cache");
    assert_eq!(h["x-accel-buffering"], "no");
    let text = res.text().await.unwrap();
    let events: Vec<&str> = text.split("\n\n").filter(|e| !e.is_empty()).collect();
    assert!(events.iter().all(|e| e.starts_with("data: ")), "{text}");
    assert_eq!(*events.last().unwrap(), "data: [DONE]");
    let chunks: Vec<Value> = events[..events.len() - 1]
        .iter()
        .map(|e| serde_json::from_str(&e["data: ".len()..]).unwrap())
        .collect();
    let types: Vec<&str> = chunks.iter().map(|c| c["type"].as_str().unwrap()).collect();
    assert_eq!(&types[..3], ["start", "start-step", "tool-input-available"]);
    assert_eq!(
        &types[types.len() - 3..],
        ["tool-output-available", "finish-step", "finish"]
    );
    assert!(types[3..types.len() - 3]
        .iter()
        .all(|t| *t == "data-tool-loop-progress"));
    let call_id = chunks[2]["toolCallId"].as_str().unwrap();
    assert_eq!(chunks[2]["toolName"], "list_contacts");
    let out = &chunks[chunks.len() - 3];
    assert_eq!(out["toolCallId"], call_id);
    assert_eq!(out["output"]["_itemCount"], 237);
    assert_eq!(chunks[chunks.len() - 1]["finishReason"], "stop");
    for p in &chunks[3..chunks.len() - 3] {
        assert_eq!(p["id"], call_id);
        for k in [
            "page",
            "pagesMax",
            "items",
            "requests",
            "requestsMax",
            "elapsedMs",
        ] {
            assert!(p["data"].get(k).is_some(), "progress lacks {k}");
        }
    }

    // an error is a tool-output-error carrying the code
    let res = app
        .client
        .post(format!(
            "{}/v1/agents/{}/threads/s/tool-calls",
            app.address, rig.agent
        ))
        .bearer_auth(&token)
        .header("accept", "text/event-stream")
        .json(&json!({"name": "list_inboxes", "arguments": {"_all_pages": true}}))
        .send()
        .await
        .unwrap();
    let text = res.text().await.unwrap();
    assert!(text.contains(r#""type":"tool-output-error""#), "{text}");
    assert!(text.contains("all_pages_unsupported"));
    assert!(text.ends_with("data: [DONE]\n\n"));
}

#[tokio::test]
async fn provider_rate_limit_is_never_exceeded() {
    let app = spawn_app().await;
    let up = upstream_server::start().await;
    let rig = Rig::new(&app, &up, true).await;
    rig.bind_limited(&app, &up.base, "limited_contacts", 4)
        .await;
    let token = rig.token(&app, "u1", json!({})).await;
    // two walks at once share the provider's budget (experiments: no cache coalesces them)
    let path_a = format!("/v1/agents/{}/threads/a/tool-calls", rig.agent);
    let path_b = format!("/v1/agents/{}/threads/b/tool-calls", rig.agent);
    let body =
        json!({"name": "limited_contacts", "arguments": {"_all_pages": true}, "experiment": true});
    let (a, b) = tokio::join!(
        app.post(&path_a, &token, body.clone()),
        app.post(&path_b, &token, body.clone())
    );
    for r in [a, b] {
        let res = r.ok(200)["result"].clone();
        assert_eq!(res["_itemCount"], 60, "{res}");
        assert_eq!(res["_pagingComplete"], true);
    }
    assert_eq!(
        up.stats.lock().unwrap().rate_violations,
        0,
        "the upstream saw its limit exceeded"
    );
    assert_eq!(up.count("/limited"), 14);
}

#[tokio::test]
async fn org_api_rate_limit_answers_429_with_retry_after() {
    let mut s = test_settings(fresh_database().await);
    s.org_requests_per_second = 2;
    let app = spawn_with(s).await;
    let t = app.tenant("a").await;
    let mut limited = None;
    for _ in 0..12 {
        let r = app.get("/v1/providers", &t.key).await;
        if r.status.as_u16() == 429 {
            limited = Some(r);
            break;
        }
    }
    let r = limited.expect("no 429 after 12 quick requests at 2/s");
    r.problem(429, "rate_limited");
    let after: u64 = r.headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!(after >= 1);
}

#[tokio::test]
async fn ssrf_guard_refuses_private_upstreams() {
    let mut s = test_settings(fresh_database().await);
    s.allow_private_upstreams = false;
    let app = spawn_with(s).await;
    let up = upstream_server::start().await;
    let rig = Rig::new(&app, &up, false).await;
    let token = rig.token(&app, "u1", json!({})).await;
    let r = rig
        .call(&app, &token, "t", "list_contacts", json!({}))
        .await;
    r.problem(502, "upstream_failed");
    assert_eq!(up.total(), 0, "nothing reached the loopback upstream");
    for base in [
        "http://169.254.169.254",
        "http://localhost:9",
        "http://10.0.0.1",
        "http://[::1]:80",
    ] {
        app.patch(
            &format!("/v1/providers/{}", rig.provider),
            &rig.t.key,
            // another origin: the credential is re-entered with it (it is bound to its
            // origin)
            json!({"base_url": base, "credential": "org-secret"}),
        )
        .await
        .ok(200);
        let r = rig
            .call(&app, &token, "t", "list_contacts", json!({}))
            .await;
        r.problem(502, "upstream_failed");
        assert!(!r.text.contains("org-secret"));
    }
}
