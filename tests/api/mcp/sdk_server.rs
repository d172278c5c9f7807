//! M1 against the official TypeScript MCP SDK as the upstream server, in its documented
//! stateful pattern (tests/mcp-peers/server-stateful.mjs), which answers a session it does
//! not know with 400 "No valid session ID provided": sync and call; a restart of the
//! server (a new process, every session gone) costs the next call and sync nothing; a
//! tool's own progress reaches the agent's stream; a task-only tool is imported (M3,
//! called in sdk_tasks.rs); an `isError` result is described as the tool's own failure; an idle session
//! is ended with `DELETE`, and so is every open session at shutdown.

use serde_json::{json, Value};

use crate::support::helpers::{fresh_database, spawn_app, spawn_with, test_settings, TestApp};
use crate::support::sdk_peer::SdkPeer;

const SCRIPT: &str = "server-stateful.mjs";
const CREDENTIAL: &str = "sdk-org-secret";

struct SdkRig {
    app: TestApp,
    key: String,
    provider: String,
    agent: String,
    token: String,
    sync: Value,
}

/// The SDK server registered as a provider and synced, and an agent holding its tools.
async fn rig(app: TestApp, peer: &SdkPeer) -> SdkRig {
    let t = app.tenant("sdk").await;
    let (provider, bindings, sync) =
        super::synced_mcp_provider(&app, &t, "sdk", &peer.url(), CREDENTIAL, json!({})).await;
    let (agent, token) = app.agent_and_token(&t, bindings, "u1").await;
    SdkRig {
        key: t.key.clone(),
        app,
        provider,
        agent,
        token,
        sync,
    }
}

impl SdkRig {
    async fn call(&self, name: &str, args: Value) -> crate::support::helpers::Res {
        self.app
            .post(
                &format!("/v1/agents/{}/threads/t1/tool-calls", self.agent),
                &self.token,
                json!({"name": name, "arguments": args}),
            )
            .await
    }

    async fn sync(&self) -> crate::support::helpers::Res {
        self.app
            .post(
                &format!("/v1/providers/{}/sync", self.provider),
                &self.key,
                json!({}),
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

#[tokio::test]
async fn m1_the_sdk_server_syncs_calls_and_outlives_its_restart() {
    let Some(mut peer) = SdkPeer::start(SCRIPT).await else {
        return;
    };
    let r = rig(spawn_app().await, &peer).await;

    // M3: the task-only tool is imported too (sdk_tasks.rs calls such tools)
    assert_eq!(
        names(&r.sync["data"]),
        ["batch_export", "broken", "list_items", "slow_job"]
    );
    assert_eq!(r.sync["skipped"], json!([]), "{}", r.sync);
    // this server does not offer tasks for tools/call: asking for one is not allowed,
    // so the call fails saying why, and nothing is sent
    let task_only = r.call("batch_export", json!({})).await;
    task_only.problem(502, "upstream_failed");
    let detail = task_only.body["detail"].as_str().unwrap();
    assert!(detail.contains("does not offer tasks"), "{detail}");

    let items = r.call("list_items", json!({"prefix": "ap"})).await;
    let out = items.ok(200)["result"].clone();
    assert_eq!(
        out["items"],
        json!([{"id": 1, "name": "apple"}, {"id": 2, "name": "apricot"}]),
        "{out}"
    );

    // isError: the tool's own failure, in its own words
    let broken = r.call("broken", json!({})).await;
    broken.problem(502, "upstream_failed");
    let detail = broken.body["detail"].as_str().unwrap();
    assert!(
        detail.contains("The tool reported an error: the archive is offline until Monday"),
        "{detail}"
    );
    assert!(!detail.contains("could not be reached"), "{detail}");

    let before = peer.log().await;
    assert!(
        before
            .iter()
            .filter(|e| e["method"] == "tools/call")
            .all(|e| e["progressToken"].is_string()),
        "every tools/call carries a progressToken: {before:?}"
    );

    // a new process: the session loopgate holds is unknown there (400), so it is
    // replaced once and the request sent again — for a call and for a sync
    peer.restart().await;
    let again = r.call("list_items", json!({"prefix": "b"})).await;
    assert_eq!(
        again.ok(200)["result"]["items"],
        json!([{"id": 1, "name": "banana"}])
    );
    let after = peer.log().await;
    let methods: Vec<(&str, bool)> = after
        .iter()
        .map(|e| (e["method"].as_str().unwrap_or(""), e["session"].is_string()))
        .collect();
    assert_eq!(
        &methods[..4],
        [
            ("tools/call", true),
            ("initialize", false),
            ("notifications/initialized", true),
            ("tools/call", true),
        ],
        "{after:?}"
    );
    assert_ne!(after[0]["session"], after[2]["session"]);

    peer.restart().await;
    let resync = r.sync().await;
    assert_eq!(resync.ok(200)["unchanged"], 4, "{}", resync.text);
    let log = peer.log().await;
    assert_eq!(log[0]["method"], "tools/list");
    assert_eq!(log[1]["method"], "initialize");

    let all: Vec<Value> = before.into_iter().chain(after).chain(log).collect();
    assert!(
        all.iter()
            .all(|e| e["auth"] == format!("Bearer {CREDENTIAL}")),
        "{all:?}"
    );
}

/// The SSE chunks of a streamed tool call, read to its end.
async fn stream_call(r: &SdkRig, name: &str) -> Vec<Value> {
    let res = r
        .app
        .client
        .post(format!(
            "{}/v1/agents/{}/threads/t2/tool-calls",
            r.app.address, r.agent
        ))
        .bearer_auth(&r.token)
        .header("accept", "text/event-stream")
        .json(&json!({"name": name, "arguments": {}}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let text = res.text().await.unwrap();
    text.split("\n\n")
        .filter_map(|e| e.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str(d).ok())
        .collect()
}

#[tokio::test]
async fn m1_an_sdk_tools_progress_reaches_the_agents_stream() {
    let Some(peer) = SdkPeer::start(SCRIPT).await else {
        return;
    };
    let r = rig(spawn_app().await, &peer).await;
    // slow_job reports 8 steps over about 2.4 s; the stream's throttle passes some
    let chunks = stream_call(&r, "slow_job").await;
    let progress: Vec<&Value> = chunks
        .iter()
        .filter(|c| c["type"] == "data-tool-loop-progress")
        .collect();
    let relayed: Vec<&Value> = progress
        .iter()
        .filter_map(|c| c["data"].get("upstream"))
        .collect();
    assert!(!relayed.is_empty(), "{chunks:?}");
    for u in &relayed {
        assert_eq!(u["total"], 8.0);
        assert!(u["message"].as_str().unwrap().starts_with("step "), "{u}");
        let n = u["progress"].as_f64().unwrap();
        assert!((1.0..=8.0).contains(&n), "{u}");
    }
    let out = chunks
        .iter()
        .find(|c| c["type"] == "tool-output-available")
        .unwrap_or_else(|| panic!("{chunks:?}"));
    assert_eq!(out["output"]["done"], true, "{out}");
}

#[tokio::test]
async fn m1_an_idle_sdk_session_is_ended_with_delete() {
    let Some(peer) = SdkPeer::start(SCRIPT).await else {
        return;
    };
    let mut settings = test_settings(fresh_database().await);
    settings.mcp_session_idle_seconds = 1;
    let r = rig(spawn_with(settings).await, &peer).await;
    let first = peer.log().await;
    let old = first
        .iter()
        .find_map(|e| e["session"].as_str().map(str::to_string))
        .unwrap();

    // past the idle time, the next use opens a new session and ends the old one
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    r.sync().await.ok(200);
    let mut ended = false;
    for _ in 0..50 {
        let log = peer.log().await;
        if log
            .iter()
            .any(|e| e["http"] == "DELETE" && e["session"] == old.as_str())
        {
            ended = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(ended, "{:?}", peer.log().await);
    let log = peer.log().await;
    assert!(
        log.iter().any(|e| e["method"] == "tools/list"
            && e["session"].is_string()
            && e["session"] != old.as_str()),
        "{log:?}"
    );
}

#[tokio::test]
async fn m1_shutdown_ends_every_open_sdk_session() {
    use loopgate::store::providers::{AuthType, ProviderAuth};
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
    let auth = ProviderAuth {
        kind: AuthType::Bearer,
        name: None,
    };
    // two credentials: two sessions with the same server
    for user in ["alice", "bob"] {
        let target = Target::new(
            &peer.url(),
            "POST",
            "/",
            &json!({}),
            auth.clone(),
            Some(format!("key-{user}").into()),
        );
        let client = McpClient {
            caller: &caller,
            sessions: &sessions,
            target: &target,
            rate: None,
        };
        let tools = client
            .list_tools(5, std::time::Duration::from_secs(10))
            .await
            .unwrap();
        assert_eq!(tools.len(), 4);
    }
    assert_eq!(sessions.len(), 2);
    sessions
        .end_all(&caller, std::time::Duration::from_secs(5))
        .await;
    assert!(sessions.is_empty());
    let log = peer.log().await;
    let opened: std::collections::HashSet<&str> = log
        .iter()
        .filter(|e| e["method"] == "tools/list")
        .filter_map(|e| e["session"].as_str())
        .collect();
    let ended: std::collections::HashSet<&str> = log
        .iter()
        .filter(|e| e["http"] == "DELETE")
        .filter_map(|e| e["session"].as_str())
        .collect();
    assert_eq!(opened.len(), 2, "{log:?}");
    assert_eq!(opened, ended, "{log:?}");
}
