//! M3, client side: upstream MCP tools that run as tasks (MCP 2025-11-25), against the
//! official TypeScript SDK's task API (tests/mcp-peers/server-tasks.mjs) and the MCP
//! reference server (`@modelcontextprotocol/server-everything`, its task-only
//! `simulate-research-query`). Sync imports task tools; a call creates the task, polls
//! `tasks/get` at the server's `pollInterval`, reads `tasks/result` and hands it to the
//! same conversion and size guard as a direct result; a failed task is the tool's own
//! failure; the task's progress reaches a streamed call; a call cut short by its time
//! budget, or whose future is dropped, cancels the task with `tasks/cancel`.

use std::time::Duration;

use serde_json::{json, Value};

use crate::support::helpers::{fresh_database, spawn_app, spawn_with, test_settings, Res, TestApp};
use crate::support::sdk_peer::SdkPeer;

const SCRIPT: &str = "server-tasks.mjs";
const EVERYTHING: &str = "server-everything.mjs";
const CREDENTIAL: &str = "sdk-task-secret";

struct Rig {
    app: TestApp,
    agent: String,
    token: String,
    sync: Value,
}

async fn rig(app: TestApp, url: &str) -> Rig {
    let t = app.tenant("sdk-tasks").await;
    let (_, bindings, sync) =
        super::synced_mcp_provider(&app, &t, "tasks", url, CREDENTIAL, json!({})).await;
    let (agent, token) = app.agent_and_token(&t, bindings, "u1").await;
    Rig {
        app,
        agent,
        token,
        sync,
    }
}

impl Rig {
    async fn call(&self, thread: &str, name: &str, args: Value) -> Res {
        self.app
            .post(
                &format!("/v1/agents/{}/threads/{thread}/tool-calls", self.agent),
                &self.token,
                json!({"name": name, "arguments": args}),
            )
            .await
    }
}

fn names(data: &Value) -> Vec<String> {
    let mut n: Vec<String> = data
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    n.sort();
    n
}

/// The log's entries of `method`.
fn of<'l>(log: &'l [Value], method: &str) -> Vec<&'l Value> {
    log.iter().filter(|e| e["method"] == method).collect()
}

/// Waits (up to 5 s) for the peer to have seen a `tasks/cancel`; answers its log.
async fn log_with_cancel(peer: &SdkPeer) -> Vec<Value> {
    for _ in 0..50 {
        let log = peer.log().await;
        if !of(&log, "tasks/cancel").is_empty() {
            return log;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    peer.log().await
}

#[tokio::test]
async fn m3_task_tools_are_imported_and_called_as_tasks_at_the_servers_interval() {
    let Some(peer) = SdkPeer::start(SCRIPT).await else {
        return;
    };
    let r = rig(spawn_app().await, &peer.url()).await;
    // no skip: the task-only tools are imported
    assert_eq!(
        names(&r.sync["data"]),
        ["export_rows", "failing_export", "needs_answer", "quick_sum"]
    );
    assert_eq!(r.sync["skipped"], json!([]), "{}", r.sync);

    // "required": created, polled, its result read — 3 stages of 400 ms
    let out = r.call("t1", "export_rows", json!({"rows": 3})).await;
    let rows = out.ok(200)["result"]["rows"].clone();
    assert_eq!(rows.as_array().map(Vec::len), Some(3), "{}", out.text);
    assert_eq!(rows[2]["name"], "row 3");

    let log = peer.log().await;
    let call = of(&log, "tools/call");
    assert_eq!(call.len(), 1, "{log:?}");
    assert!(call[0]["task"]["ttl"].as_u64().unwrap() > 0, "{log:?}");
    assert!(call[0]["progressToken"].is_string(), "{log:?}");
    let gets = of(&log, "tasks/get");
    let results = of(&log, "tasks/result");
    assert_eq!(results.len(), 1, "{log:?}");
    assert!(
        of(&log, "tasks/cancel").is_empty(),
        "an ended task is not cancelled: {log:?}"
    );
    let task = results[0]["taskId"].as_str().unwrap();
    assert!(gets.iter().all(|g| g["taskId"] == task), "{log:?}");
    // the server suggests 300 ms: polled no faster (a bound, with room for the clock);
    // about 1.2 s of work is a handful of looks, never a busy loop (bounded loosely: a
    // loaded machine stretches the stages)
    assert!(!gets.is_empty() && gets.len() <= 12, "{gets:?}");
    let times: Vec<i64> = std::iter::once(call[0])
        .chain(gets.iter().copied())
        .map(|e| e["at"].as_i64().unwrap())
        .collect();
    for w in times.windows(2) {
        assert!(
            w[1] - w[0] >= 250,
            "polled faster than the pollInterval: {times:?}"
        );
    }
    // every request in the session the task was created in, with the org's credential
    let session = &call[0]["session"];
    assert!(session.is_string());
    for e in gets.iter().chain(&results) {
        assert_eq!(&e["session"], session, "{log:?}");
    }
    assert!(
        log.iter()
            .all(|e| e["auth"] == format!("Bearer {CREDENTIAL}")),
        "{log:?}"
    );

    // "optional", on a server that offers tasks for tools/call: a task too
    let sum = r.call("t1", "quick_sum", json!({"a": 2, "b": 40})).await;
    assert_eq!(sum.ok(200)["result"], json!({"sum": 42}), "{}", sum.text);
    let log = peer.log().await;
    let sums: Vec<&Value> = of(&log, "tools/call").into_iter().skip(1).collect();
    assert!(sums[0]["task"].is_object(), "{log:?}");

    // a failed task: the tool's own failure, in its own words
    let failed = r.call("t1", "failing_export", json!({})).await;
    failed.problem(502, "upstream_failed");
    let detail = failed.body["detail"].as_str().unwrap();
    assert!(detail.contains("the export broke: disk full"), "{detail}");
}

#[tokio::test]
async fn m3_a_large_task_result_goes_through_the_size_guard() {
    let Some(peer) = SdkPeer::start(SCRIPT).await else {
        return;
    };
    let r = rig(spawn_app().await, &peer.url()).await;
    let out = r
        .call(
            "big",
            "export_rows",
            json!({"rows": 4000, "stages": 1, "stage_ms": 50}),
        )
        .await;
    let res = out.ok(200)["result"].clone();
    // G1: cut to the budget, the whole set kept under its id
    assert_eq!(
        res["_truncated"],
        true,
        "{}",
        &out.text[..out.text.len().min(400)]
    );
    assert_eq!(res["_itemsTotal"], 4000);
    let shown = res["rows"].as_array().unwrap().len();
    assert!(shown > 0 && shown < 4000, "{shown}");
    let rid = res["_resultId"].as_str().unwrap();
    let q = r
        .call(
            "big",
            "queryToolResult",
            json!({"resultId": rid, "filter": [{"field": "id", "op": "eq", "value": 4000}], "fields": ["name"]}),
        )
        .await;
    let qr = q.ok(200)["result"].clone();
    assert_eq!(qr["total"], 1, "{qr}");
    assert_eq!(qr["items"], json!([{"name": "row 4000"}]));
}

#[tokio::test]
async fn m3_a_tasks_progress_reaches_the_agents_stream() {
    let Some(peer) = SdkPeer::start(SCRIPT).await else {
        return;
    };
    let r = rig(spawn_app().await, &peer.url()).await;
    let res = r
        .app
        .client
        .post(format!(
            "{}/v1/agents/{}/threads/t2/tool-calls",
            r.app.address, r.agent
        ))
        .bearer_auth(&r.token)
        .header("accept", "text/event-stream")
        .json(&json!({"name": "export_rows", "arguments": {"stages": 4, "stage_ms": 500}}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let text = res.text().await.unwrap();
    let chunks: Vec<Value> = text
        .split("\n\n")
        .filter_map(|e| e.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str(d).ok())
        .collect();
    let relayed: Vec<&Value> = chunks
        .iter()
        .filter(|c| c["type"] == "data-tool-loop-progress")
        .filter_map(|c| c["data"].get("upstream"))
        .collect();
    // the task's statusMessage as it changes, seen while polling (about 2 s of stages,
    // so the stream's 750 ms throttle passes several); the progress notifications the
    // SDK queues come in one burst on tasks/result, of which the throttle passes one
    for u in &relayed {
        let m = u["message"].as_str().unwrap();
        assert!(m.starts_with("stage ") && m.ends_with(" of 4"), "{u}");
    }
    let distinct: std::collections::HashSet<&str> = relayed
        .iter()
        .filter_map(|u| u["message"].as_str())
        .collect();
    assert!(distinct.len() >= 2, "{relayed:?}");
    let out = chunks
        .iter()
        .find(|c| c["type"] == "tool-output-available")
        .unwrap_or_else(|| panic!("{chunks:?}"));
    assert_eq!(
        out["output"]["rows"].as_array().map(Vec::len),
        Some(3),
        "{out}"
    );
}

#[tokio::test]
async fn m3_a_call_out_of_time_cancels_its_upstream_task() {
    let Some(peer) = SdkPeer::start(SCRIPT).await else {
        return;
    };
    let mut settings = test_settings(fresh_database().await);
    settings.limit_wall_seconds = 1;
    let r = rig(spawn_with(settings).await, &peer.url()).await;
    // ten stages of 500 ms: far past the 1 s budget
    let out = r
        .call("t3", "export_rows", json!({"stages": 10, "stage_ms": 500}))
        .await;
    // the walk ends at its budget with nothing fetched
    out.problem(502, "upstream_failed");
    let log = log_with_cancel(&peer).await;
    let cancels = of(&log, "tasks/cancel");
    assert_eq!(cancels.len(), 1, "{log:?}");
    let gets = of(&log, "tasks/get");
    assert!(!gets.is_empty(), "{log:?}");
    assert_eq!(cancels[0]["taskId"], gets[0]["taskId"]);
    assert_eq!(cancels[0]["session"], gets[0]["session"]);
    assert!(of(&log, "tasks/result").is_empty(), "{log:?}");
}

#[tokio::test]
async fn m3_a_task_waiting_for_input_fails_clearly_and_is_cancelled() {
    let Some(peer) = SdkPeer::start(SCRIPT).await else {
        return;
    };
    let r = rig(spawn_app().await, &peer.url()).await;
    // loopgate offers no elicitation: it cannot answer, so it says so and lets go
    let out = r.call("t5", "needs_answer", json!({})).await;
    out.problem(502, "upstream_failed");
    let detail = out.body["detail"].as_str().unwrap();
    assert!(
        detail.contains("input_required") && detail.contains("which export: daily or weekly?"),
        "{detail}"
    );
    let log = log_with_cancel(&peer).await;
    let cancels = of(&log, "tasks/cancel");
    assert_eq!(cancels.len(), 1, "{log:?}");
    assert!(of(&log, "tasks/result").is_empty(), "{log:?}");
}

#[tokio::test]
async fn m3_dropping_the_call_cancels_its_upstream_task() {
    use loopgate::store::providers::{AuthType, ProviderAuth};
    use loopgate::upstream::mcp::task::TaskSupport;
    use loopgate::upstream::mcp::McpClient;
    use loopgate::upstream::{McpSessions, Target, UpstreamClient, UpstreamClientConfig};

    let Some(peer) = SdkPeer::start(SCRIPT).await else {
        return;
    };
    let caller = UpstreamClient::new(UpstreamClientConfig {
        allow_private: true,
        ..UpstreamClientConfig::default()
    });
    let sessions = McpSessions::default();
    let target = Target::new(
        &peer.url(),
        "POST",
        "/",
        &json!({}),
        ProviderAuth {
            kind: AuthType::Bearer,
            name: None,
        },
        Some(CREDENTIAL.to_string().into()),
    );
    let client = McpClient {
        caller: &caller,
        sessions: &sessions,
        target: &target,
        rate: None,
    };
    let args = json!({"stages": 20, "stage_ms": 500});
    // the future is dropped after 1 s, as a cancelled walk drops it: no error of its own
    let call = client.call_tool(
        "export_rows",
        args.as_object().unwrap(),
        TaskSupport::Required,
        Duration::from_secs(60),
        None,
    );
    assert!(tokio::time::timeout(Duration::from_secs(1), call)
        .await
        .is_err());
    let log = log_with_cancel(&peer).await;
    let cancels = of(&log, "tasks/cancel");
    assert_eq!(cancels.len(), 1, "{log:?}");
    let gets = of(&log, "tasks/get");
    assert_eq!(cancels[0]["taskId"], gets[0]["taskId"], "{log:?}");
    assert_eq!(cancels[0]["auth"], format!("Bearer {CREDENTIAL}"));
}

#[tokio::test]
async fn m3_the_reference_servers_research_query_runs_as_a_task() {
    let reference = "@modelcontextprotocol/server-everything";
    if !crate::support::sdk_peer::installed(reference, "the MCP reference server") {
        return;
    }
    let Some(peer) = SdkPeer::start(EVERYTHING).await else {
        return;
    };
    let r = rig(spawn_app().await, &peer.url()).await;
    let listed = names(&r.sync["data"]);
    assert!(
        listed.contains(&"simulate-research-query".to_string()),
        "{listed:?}"
    );
    assert!(
        !r.sync["skipped"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["name"] == "simulate-research-query"),
        "{}",
        r.sync
    );
    // four stages of 1 s, polled at its 1 s interval
    let out = r
        .call("t4", "simulate-research-query", json!({"topic": "tides"}))
        .await;
    let text = out.ok(200)["result"].to_string();
    assert!(text.contains("Research Report: tides"), "{text}");
    assert!(text.contains("Generating report"), "{text}");
}
