//! M2: an agent served as an MCP server, driven by a real MCP client (rmcp). The agent
//! holds the tools of a real MCP server (M1), so both directions run in one test: its
//! `tools/list` equals the `steps` answer, a walk streams progress notifications, a cut
//! result restricts the tool list (G5) and says so with `tools/list_changed`, and only the
//! agent's own org with runtime credentials gets in.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, NumberOrString, ProgressNotificationParam,
    ProgressToken, RequestMetaObject,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{json, Map, Value};

use crate::mcp::providers::mcp_rig;

#[derive(Clone, Default)]
pub(crate) struct Recorder {
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    list_changed: Arc<AtomicUsize>,
}

impl ClientHandler for Recorder {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params);
    }
    async fn on_tool_list_changed(&self, _: NotificationContext<RoleClient>) {
        self.list_changed.fetch_add(1, Ordering::SeqCst);
    }
}

pub(crate) type Client = RunningService<RoleClient, Recorder>;

pub(crate) async fn connect(
    url: &str,
    token: Option<&str>,
    rec: Recorder,
) -> Result<Client, String> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    if let Some(t) = token {
        config = config.auth_header(t.to_string());
    }
    let transport = StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
    rec.serve(transport).await.map_err(|e| e.to_string())
}

pub(crate) async fn call(
    client: &Client,
    name: &str,
    args: Value,
    progress: Option<&str>,
) -> CallToolResult {
    let mut params = CallToolRequestParams::new(name.to_string())
        .with_arguments(args.as_object().cloned().unwrap_or_else(Map::new));
    if let Some(p) = progress {
        params.meta = Some(RequestMetaObject::with_progress_token(ProgressToken(
            NumberOrString::String(p.to_string().into()),
        )));
    }
    client.call_tool(params).await.expect("tools/call")
}

async fn tool_names(client: &Client) -> Vec<String> {
    let mut names: Vec<String> = client
        .list_all_tools()
        .await
        .expect("tools/list")
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn m2_agent_as_mcp_server_lists_steps_walks_with_progress_and_restricts() {
    let r = mcp_rig().await;
    let url = format!("{}/v1/agents/{}/mcp", r.app.address, r.agent);
    let rec = Recorder::default();
    let client = connect(&url, Some(&r.token), rec.clone())
        .await
        .expect("initialize");

    // A1: the step's system messages are the server's instructions
    let steps = r
        .app
        .post(
            &format!("/v1/agents/{}/threads/rest/steps", r.agent),
            &r.token,
            json!({}),
        )
        .await
        .ok(200)
        .clone();
    let instructions = client
        .peer_info()
        .and_then(|i| i.instructions.clone())
        .unwrap_or_default();
    for s in steps["system"].as_array().unwrap() {
        assert!(instructions.contains(s.as_str().unwrap()), "{instructions}");
    }
    // tools/list is the steps answer: names, descriptions and schemas
    let listed = client.list_all_tools().await.unwrap();
    let rest = steps["tools"].as_array().unwrap();
    assert_eq!(listed.len(), rest.len());
    for t in rest {
        let m = listed
            .iter()
            .find(|l| l.name == t["name"].as_str().unwrap())
            .expect("listed");
        assert_eq!(m.description.as_deref(), t["description"].as_str());
        assert_eq!(Value::Object((*m.input_schema).clone()), t["input_schema"]);
    }
    assert!(listed.iter().any(|t| t.name == "queryToolResult"));

    // every page of the MCP tool, through loopgate's MCP server, with progress (S1)
    let walk = call(
        &client,
        "slow_contacts",
        json!({"_all_pages": true}),
        Some("walk-1"),
    )
    .await;
    assert_ne!(walk.is_error, Some(true), "{walk:?}");
    let env = walk.structured_content.clone().expect("structured content");
    assert_eq!(env["_itemCount"], 45);
    assert_eq!(env["_pagingComplete"], true);
    let progress = rec.progress.lock().unwrap().clone();
    assert!(!progress.is_empty(), "no progress notification");
    // the token the client sent with the call (rmcp may number its own), echoed on each
    let token = &progress[0].progress_token;
    assert!(
        progress.iter().all(|p| &p.progress_token == token
            && p.message.as_deref().is_some_and(|m| m.contains("items"))),
        "{progress:?}"
    );

    // G5 over MCP: a cut result changes the list to the retrieval tools and says so
    let before = rec.list_changed.load(Ordering::SeqCst);
    let cut = call(&client, "report", json!({}), None).await;
    let cut = cut.structured_content.expect("structured");
    assert_eq!(cut["_truncated"], true);
    assert!(
        rec.list_changed.load(Ordering::SeqCst) > before,
        "tools/list_changed after the cut"
    );
    assert_eq!(
        tool_names(&client).await,
        ["fetchToolResult", "queryToolResult"]
    );
    let refused = call(&client, "greet", json!({"who": "Ada"}), None).await;
    assert_eq!(refused.is_error, Some(true));
    assert!(
        format!("{refused:?}").contains("retrieval_required"),
        "{refused:?}"
    );
    let changed = rec.list_changed.load(Ordering::SeqCst);
    let q = call(
        &client,
        "queryToolResult",
        json!({"resultId": cut["_resultId"], "filter": [{"field": "region", "op": "eq", "value": "north"}], "limit": 2}),
        None,
    )
    .await;
    assert_eq!(q.structured_content.expect("structured")["total"], 2000);
    assert!(
        rec.list_changed.load(Ordering::SeqCst) > changed,
        "the restriction ended"
    );
    assert!(tool_names(&client).await.contains(&"greet".to_string()));
    let hello = call(&client, "greet", json!({"who": "Ada"}), None).await;
    assert!(format!("{hello:?}").contains("Hello, Ada!"), "{hello:?}");
    // isError upstream stays a readable tool error downstream
    let broken = call(&client, "broken", json!({}), None).await;
    assert_eq!(broken.is_error, Some(true));
    assert!(format!("{broken:?}").contains("the archive is offline"));
    client.cancel().await.ok();
}

#[tokio::test]
async fn m2_only_the_agents_org_with_runtime_credentials_gets_in() {
    let r = mcp_rig().await;
    let url = format!("{}/v1/agents/{}/mcp", r.app.address, r.agent);
    assert!(
        connect(&url, None, Recorder::default()).await.is_err(),
        "no token"
    );
    let raw = r
        .app
        .client
        .post(&url)
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}))
        .send()
        .await
        .unwrap();
    assert_eq!(raw.status(), 401);
    let foreign = r
        .app
        .client
        .post(&url)
        .bearer_auth(&r.token)
        .header("origin", "https://evil.example.com")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), 403, "a foreign Origin is refused");

    // another org's key with scope runtime does not reach this agent; a studio key is refused
    let other = r.app.tenant("other").await;
    assert!(connect(&url, Some(&other.key), Recorder::default())
        .await
        .is_err());
    let studio = r.app.create_key(&r.t.org, &["studio"]).await;
    assert!(connect(&url, Some(&studio), Recorder::default())
        .await
        .is_err());
    // the org's own runtime key does
    let runtime_key = r.app.create_key(&r.t.org, &["runtime"]).await;
    let ok = connect(&url, Some(&runtime_key), Recorder::default())
        .await
        .expect("own org");
    assert!(!tool_names(&ok).await.is_empty());
    ok.cancel().await.ok();
}

/// D1 over MCP: a pooled tool is not listed until `load_tool`, which changes the list
/// (`tools/list_changed`); then it is listed and called.
#[tokio::test]
async fn m2_a_pooled_tool_is_loaded_then_called() {
    let r = mcp_rig().await;
    let greet = r.sync["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "greet")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    r.app
        .patch(
            &format!("/v1/agents/{}/tools/{greet}", r.agent),
            &r.t.key,
            json!({"discovery": true}),
        )
        .await
        .ok(200);
    let url = format!("{}/v1/agents/{}/mcp", r.app.address, r.agent);
    let rec = Recorder::default();
    let client = connect(&url, Some(&r.token), rec.clone())
        .await
        .expect("initialize");
    let names = tool_names(&client).await;
    assert!(!names.contains(&"greet".to_string()), "{names:?}");
    assert!(
        names.contains(&"load_tool".to_string()) && names.contains(&"search_tools".to_string())
    );
    let refused = call(&client, "greet", json!({"who": "Ada"}), None).await;
    assert_eq!(refused.is_error, Some(true));
    assert!(
        format!("{refused:?}").contains("tool_not_loaded"),
        "{refused:?}"
    );

    let before = rec.list_changed.load(Ordering::SeqCst);
    let loaded = call(&client, "load_tool", json!({"toolName": "greet"}), None).await;
    assert_ne!(loaded.is_error, Some(true), "{loaded:?}");
    assert!(
        rec.list_changed.load(Ordering::SeqCst) > before,
        "load_tool changes the list"
    );
    assert!(tool_names(&client).await.contains(&"greet".to_string()));
    let hello = call(&client, "greet", json!({"who": "Ada"}), None).await;
    assert!(format!("{hello:?}").contains("Hello, Ada!"), "{hello:?}");
    client.cancel().await.ok();
}

/// M2: over MCP, an unknown or wrong-typed argument is a tool error naming it and the
/// real arguments (`invalid_arguments`), and the MCP server upstream is never called.
#[tokio::test]
async fn m2_an_unknown_argument_is_invalid_arguments_before_any_request() {
    let r = mcp_rig().await;
    let url = format!("{}/v1/agents/{}/mcp", r.app.address, r.agent);
    let client = connect(&url, Some(&r.token), Recorder::default())
        .await
        .expect("initialize");
    let before = r.up.calls.lock().unwrap().len();
    let unknown = call(&client, "greet", json!({"whom": "Ada"}), None).await;
    assert_eq!(unknown.is_error, Some(true));
    let text = format!("{unknown:?}");
    assert!(
        text.contains("invalid_arguments") && text.contains("`whom`") && text.contains("`who`"),
        "{text}"
    );
    let typed = call(&client, "greet", json!({"who": 42}), None).await;
    assert_eq!(typed.is_error, Some(true));
    assert!(
        format!("{typed:?}").contains("`who` must be string"),
        "{typed:?}"
    );
    assert_eq!(
        r.up.calls.lock().unwrap().len(),
        before,
        "no tools/call upstream"
    );
    let hello = call(&client, "greet", json!({"who": "Ada"}), None).await;
    assert!(format!("{hello:?}").contains("Hello, Ada!"), "{hello:?}");
    client.cancel().await.ok();
}
