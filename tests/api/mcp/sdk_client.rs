//! M2 against the official TypeScript MCP SDK as the *client* (tests/mcp-peers/
//! m2-client.mjs: StreamableHTTPClientTransport with a bearer header), of an agent
//! holding the tools of the SDK as a server (tests/mcp-peers/server-rich.mjs, M1): the
//! tools keep the title, annotations and outputSchema their server listed; an image,
//! audio, resource and resource-link result reaches the client as those blocks; a
//! structured result passes the client's own outputSchema check, a cut one too (M3: the
//! schema served allows the size guard's envelope); and once the client
//! ends its session (`terminateSession`), a request naming it is 404.

use serde_json::{json, Value};

use crate::support::helpers::spawn_app;
use crate::support::sdk_peer::{run_client, SdkPeer};

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

fn tool<'a>(tools: &'a Value, name: &str) -> &'a Value {
    tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("{name} in {tools}"))
}

#[tokio::test]
async fn m2_the_sdk_client_sees_rich_tools_and_blocks_and_its_ended_session_is_404() {
    let Some(peer) = SdkPeer::start("server-rich.mjs").await else {
        return;
    };
    let app = spawn_app().await;
    let t = app.tenant("sdk-client").await;
    let (_, bindings, sync) =
        super::synced_mcp_provider(&app, &t, "rich", &peer.url(), "rich-secret", json!({})).await;
    assert_eq!(bindings.len(), 2, "{sync}");
    let (agent, token) = app.agent_and_token(&t, bindings, "u1").await;
    let url = format!("{}/v1/agents/{agent}/mcp", app.address);

    let Some(out) = run_client("m2-client.mjs", &[&url, &token, "snapshot"]).await else {
        return;
    };
    assert_eq!(out["protocolVersion"], "2025-11-25", "{out}");
    assert!(out["sessionId"].as_str().unwrap().starts_with("mcp_"));
    // what the upstream listed beyond name and schema is listed again
    let snapshot = tool(&out["tools"], "snapshot");
    assert_eq!(snapshot["title"], "Dashboard snapshot");
    assert_eq!(
        snapshot["annotations"],
        json!({"readOnlyHint": true, "openWorldHint": false, "title": "Snapshot (annotation)"})
    );
    let stats = tool(&out["tools"], "stats");
    // M3: the upstream's schema, or the size guard's cut (which carries `_resultId`)
    assert_eq!(stats["outputSchema"]["type"], "object");
    assert_eq!(
        stats["outputSchema"]["anyOf"][0]["required"],
        json!(["day", "visitors"])
    );
    assert_eq!(
        stats["outputSchema"]["anyOf"][1]["required"],
        json!(["_resultId"])
    );
    assert_eq!(stats["annotations"]["idempotentHint"], true);
    // the blocks, as blocks
    let content = out["call"]["content"].as_array().unwrap();
    let types: Vec<&str> = content
        .iter()
        .map(|b| b["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        ["text", "image", "audio", "resource", "resource_link"],
        "{out}"
    );
    assert_eq!(content[1]["data"], PNG);
    assert_eq!(content[1]["mimeType"], "image/png");
    assert_eq!(content[3]["resource"]["uri"], "file:///dash/data.csv");
    assert_eq!(content[4]["uri"], "file:///dash/full.csv");
    assert_ne!(out["call"]["isError"], true);
    // ended by the client: the same id is 404 afterwards
    assert_eq!(out["terminated"], true);
    assert_eq!(out["afterEnd"], 404, "{out}");

    // a structured result the client checks against the tool's outputSchema
    let Some(out) = run_client(
        "m2-client.mjs",
        &[&url, &token, "stats", r#"{"day":"tue"}"#],
    )
    .await
    else {
        return;
    };
    assert_eq!(
        out["call"]["structuredContent"],
        json!({"day": "tue", "visitors": 42}),
        "{out}"
    );
    assert_eq!(out["afterEnd"], 404);

    // M3: a result the size guard cuts is no longer what the upstream's schema allows
    // (`additionalProperties: false`); the client's own check passes it against the
    // schema served, and it is the cut envelope
    let Some(out) = run_client(
        "m2-client.mjs",
        &[&url, &token, "stats", r#"{"day":"year"}"#],
    )
    .await
    else {
        return;
    };
    let cut = &out["call"]["structuredContent"];
    assert_ne!(out["call"]["isError"], true, "{out}");
    assert!(cut["_resultId"].is_string(), "{out}");
    assert!(cut["hours"].as_array().unwrap().len() < 8760, "{out}");
}
