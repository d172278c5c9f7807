//! M3, served: an agent's `tools/call` answered as a task, against the official
//! TypeScript SDK as the client (tests/mcp-peers/m3-tasks-client.mjs), with two replicas
//! of loopgate on one Postgres and one Redis and an upstream whose pages are slow, so a
//! walk outlives the client's 1.5 s request timeout:
//!
//! - the server advertises `tasks` and lists the walking tool with `taskSupport:
//!   optional`; a plain call with that timeout gives up, the task is answered at once on
//!   replica A, polled there, and its result read on replica B — equal to the plain
//!   call's (and the SDK's own `callToolStream` follows one to its end the same way);
//! - a task cancelled on B mid-walk is `cancelled` on A, its result the pages fetched
//!   before (more than none, fewer than all, `_stoppedBy: "cancelled"`, not complete),
//!   and its walk stops asking the upstream; a second cancel is refused (-32602);
//! - another session's, another org's and a malformed task id are "not found" (-32602),
//!   never a 5xx.

use std::time::Duration;

use serde_json::{json, Value};

use crate::support::helpers::{fresh_database, spawn_with, test_settings, TestApp};
use crate::support::rig::Rig;
use crate::support::sdk_peer::{run_client, sdk_installed};
use crate::support::slow_upstream;

/// The result without what differs between two calls of the same walk (its `_resultId`).
fn comparable(result: &Value) -> Value {
    let mut r = result.clone();
    let id = r["structuredContent"]["_resultId"]
        .as_str()
        .map(str::to_string);
    if let Some(o) = r["structuredContent"].as_object_mut() {
        o.remove("_resultId");
    }
    if let (Some(id), Some(text)) = (id, r["content"][0]["text"].as_str()) {
        r["content"][0]["text"] = json!(text.replace(&id, "<id>"));
    }
    if let Some(o) = r.as_object_mut() {
        o.remove("_meta");
    }
    r
}

/// The rows of a walk's result (`structuredContent`).
fn rows(result: &Value) -> usize {
    let s = &result["structuredContent"];
    s.as_object()
        .and_then(|o| o.values().find_map(Value::as_array))
        .map_or(0, Vec::len)
}

/// One JSON-RPC request to `app`'s endpoint of `agent`, outside any SDK.
async fn rpc(
    app: &TestApp,
    agent: &str,
    token: &str,
    session: Option<&str>,
    body: Value,
) -> (u16, Option<String>, Value) {
    let mut req = app
        .client
        .post(format!("{}/v1/agents/{agent}/mcp", app.address))
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .json(&body);
    if let Some(s) = session {
        req = req.header("mcp-session-id", s);
    }
    let res = req.send().await.unwrap();
    let status = res.status().as_u16();
    let session = res
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_string());
    let text = res.text().await.unwrap();
    // a `tools/call` answers as an SSE stream: its last message is the response
    let last = text
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("data: "))
        .unwrap_or(&text);
    (
        status,
        session,
        serde_json::from_str(last).unwrap_or(json!(text)),
    )
}

async fn initialize(app: &TestApp, agent: &str, token: &str) -> String {
    let (status, session, body) = rpc(
        app,
        agent,
        token,
        None,
        json!({"jsonrpc": "2.0", "id": 1,
        "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["result"]["capabilities"]["tasks"]["requests"]["tools"]["call"],
        json!({})
    );
    session.unwrap()
}

#[tokio::test]
async fn m3_a_walk_is_served_as_a_task_followed_on_another_replica_and_cancelled_honestly() {
    if !sdk_installed() {
        return;
    }
    let database = fresh_database().await;
    let a = spawn_with(test_settings(database.clone())).await;
    let b = spawn_with(test_settings(database)).await;
    let slow = slow_upstream::start(Duration::from_millis(300), Duration::from_millis(300)).await;
    let rig = Rig::with_tools(&a, &slow.base, vec![slow_upstream::tool()], true).await;
    let token = rig.token(&a, "u1", json!({})).await;
    let url = |app: &TestApp| format!("{}/v1/agents/{}/mcp", app.address, rig.agent);
    let (ua, ub) = (url(&a), url(&b));

    // six pages (and the empty seventh) of 600 ms each, walked again every call
    // (`_refresh`: no cache hit)
    let walk = r#"{"_all_pages": true, "pages": 6, "delay_ms": 600, "_refresh": true}"#;
    let Some(out) = run_client(
        "m3-tasks-client.mjs",
        &[&ua, &ub, &token, "follow", "list_slow", walk],
    )
    .await
    else {
        return;
    };
    assert_eq!(
        out["capabilities"]["tasks"],
        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
        "{out}"
    );
    let tools = out["tools"].as_array().unwrap();
    let listed = tools.iter().find(|t| t["name"] == "list_slow").unwrap();
    assert_eq!(listed["execution"]["taskSupport"], "optional", "{listed}");
    // retrieval tools answer at once: never tasks
    for t in tools.iter().filter(|t| t["name"] != "list_slow") {
        assert!(t.get("execution").is_none(), "{t}");
    }
    // the plain call gave up at the client's timeout (-32001, the SDK's RequestTimeout)
    assert_eq!(out["plainShort"]["code"], -32001, "{out}");
    // the task was answered at once, within that same timeout
    let created = &out["created"];
    assert_eq!(created["status"], "working", "{out}");
    assert!(created["taskId"].as_str().unwrap().starts_with("task_"));
    assert_eq!(created["ttl"], 60_000);
    assert!(created["pollInterval"].as_u64().unwrap() > 0);
    assert!(out["polledA"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t["status"] == "working" && t["taskId"] == created["taskId"]));
    // read on replica B: what the plain call answered, with the related-task meta
    let on_b = &out["resultB"];
    assert_eq!(
        on_b["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        created["taskId"]
    );
    assert_ne!(on_b["isError"], true, "{out}");
    assert_eq!(rows(on_b), 60, "{on_b}");
    assert_eq!(on_b["structuredContent"]["_pagingComplete"], true, "{on_b}");
    assert_eq!(comparable(on_b), comparable(&out["plain"]), "{out}");
    assert_eq!(out["afterB"]["status"], "completed");
    // the SDK's own flow with 1.5 s requests: created, polled, its result
    let stream = out["stream"].as_array().unwrap();
    assert_eq!(stream[0]["type"], "taskCreated", "{out}");
    let last = stream.last().unwrap();
    assert_eq!(last["type"], "result", "{out}");
    assert_eq!(comparable(&last["result"]), comparable(&out["plain"]));
    // both tasks are the session's, listed on B
    let listed: Vec<&str> = out["listedB"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["taskId"].as_str().unwrap())
        .collect();
    assert_eq!(listed.len(), 2, "{out}");
    assert!(listed.contains(&created["taskId"].as_str().unwrap()));

    // cancelled mid-walk on B: 20 pages of a second each (the walk's page bound) take
    // five seconds or more, even four at a time (P9)
    slow.reset();
    let long = r#"{"_all_pages": true, "pages": 20, "delay_ms": 1000, "_refresh": true}"#;
    let Some(out) = run_client(
        "m3-tasks-client.mjs",
        &[&ua, &ub, &token, "cancel", "list_slow", long],
    )
    .await
    else {
        return;
    };
    // the walk's progress reached the task on the way
    assert!(
        out["progress"]["statusMessage"]
            .as_str()
            .unwrap_or_default()
            .contains("page"),
        "{out}"
    );
    assert_eq!(out["cancelB"]["status"], "cancelled", "{out}");
    assert_eq!(out["afterA"]["status"], "cancelled", "{out}");
    let partial = &out["resultA"];
    assert_ne!(partial["isError"], true, "{out}");
    let kept = rows(partial);
    assert!(kept > 0 && kept < 200, "{kept} rows: {partial}");
    assert_eq!(
        partial["structuredContent"]["_stoppedBy"], "cancelled",
        "{partial}"
    );
    assert_eq!(partial["structuredContent"]["_pagingComplete"], false);
    assert_eq!(partial["structuredContent"]["_likelyMoreRows"], true);
    assert!(partial["structuredContent"]["_note"]
        .as_str()
        .unwrap()
        .contains("cancelled"));
    // the call's record, named in the CreateTaskResult's `_meta`, holds the same partial
    let call = out["createdMeta"]["loopgate/callId"].as_str().unwrap();
    let r = b.get(&format!("/v1/tool-calls/{call}"), &token).await;
    let record = r.ok(200);
    assert_eq!(record["status"], "succeeded", "{record}");
    assert_eq!(record["result"], partial["structuredContent"]);
    assert_eq!(out["cancelAgain"]["code"], -32602, "{out}");
    assert_eq!(out["otherSession"]["code"], -32602, "{out}");
    // the walk stopped asking the upstream
    let asked = slow.counts.lock().unwrap().total;
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert_eq!(slow.counts.lock().unwrap().total, asked);
    assert!(asked < 20, "{asked} requests");

    // another org's caller, naming that task in its own session: not found
    let task = out["created"]["taskId"].as_str().unwrap().to_string();
    let other = Rig::with_tools(&a, &slow.base, vec![slow_upstream::tool()], true).await;
    let other_token = other.token(&a, "u1", json!({})).await;
    let session = initialize(&b, &other.agent, &other_token).await;
    let get = |id: &str| json!({"jsonrpc": "2.0", "id": 7, "method": "tasks/get", "params": {"taskId": id}});
    let (status, _, body) = rpc(&b, &other.agent, &other_token, Some(&session), get(&task)).await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (200, &json!(-32602)),
        "{body}"
    );
    // a malformed id, control characters and all: not found, never a 5xx
    let session = initialize(&a, &rig.agent, &token).await;
    for bad in [
        format!("{task}\u{0}"),
        "task_\u{1}\u{7f}".into(),
        "x".repeat(5000),
    ] {
        for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
            let (status, _, body) = rpc(
                &a,
                &rig.agent,
                &token,
                Some(&session),
                json!({"jsonrpc": "2.0", "id": 8,
                "method": method, "params": {"taskId": bad}}),
            )
            .await;
            assert_eq!(
                (status, &body["error"]["code"]),
                (200, &json!(-32602)),
                "{method}: {body}"
            );
        }
    }
    // a cursor loopgate never gave: -32602, as the spec names it
    let (_, _, body) = rpc(
        &a,
        &rig.agent,
        &token,
        Some(&session),
        json!({"jsonrpc": "2.0", "id": 10,
        "method": "tasks/list", "params": {"cursor": "page-2"}}),
    )
    .await;
    assert_eq!(body["error"]["code"], -32602, "{body}");
    // a task asked of a retrieval tool: the spec's -32601
    let (_, _, body) = rpc(&a, &rig.agent, &token, Some(&session), json!({"jsonrpc": "2.0", "id": 9,
        "method": "tools/call", "params": {"name": "queryToolResult", "arguments": {}, "task": {}}}))
    .await;
    assert_eq!(body["error"]["code"], -32601, "{body}");

    // a session of an older revision has no tasks: `task` is ignored (a plain result),
    // `tasks/*` are not served, and nothing is marked in `tools/list`
    let (_, old, body) = rpc(
        &a,
        &rig.agent,
        &token,
        None,
        json!({"jsonrpc": "2.0", "id": 1,
        "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}}),
    )
    .await;
    assert!(
        body["result"]["capabilities"].get("tasks").is_none(),
        "{body}"
    );
    let old = old.unwrap();
    let (_, _, body) = rpc(&a, &rig.agent, &token, Some(&old), json!({"jsonrpc": "2.0", "id": 2,
        "method": "tools/call", "params": {"name": "list_slow", "arguments": {"pages": 1, "delay_ms": 0},
        "task": {"ttl": 60000}}}))
    .await;
    assert_eq!(
        serde_json::from_str::<Vec<Value>>(body["result"]["content"][0]["text"].as_str().unwrap())
            .unwrap_or_else(|e| panic!("{e}: {body}"))
            .len(),
        10,
        "{body}"
    );
    assert!(body["result"].get("task").is_none());
    let (_, _, body) = rpc(&a, &rig.agent, &token, Some(&old), get(&task)).await;
    assert_eq!(body["error"]["code"], -32601, "{body}");
    let (_, _, body) = rpc(
        &a,
        &rig.agent,
        &token,
        Some(&old),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}),
    )
    .await;
    assert!(
        body["result"]["tools"][0].get("execution").is_none(),
        "{body}"
    );
}
