//! MCP both ways: an MCP server as a provider (M1) and an agent served as an MCP server
//! (M2), its calls answered as tasks when the client asks (M3).

pub mod lifecycle;
pub mod providers;
pub mod sdk_client;
pub mod sdk_server;
pub mod sdk_tasks;
pub mod served_tasks;
pub mod server;

use serde_json::{json, Value};

use crate::support::helpers::{Tenant, TestApp};

/// Creates an MCP provider at `url` (bearer `credential`), syncs it, and returns its id
/// with a binding per synced tool (`binding` adds fields to each, e.g. `loop_responses`)
/// and the sync report.
pub async fn synced_mcp_provider(
    app: &TestApp,
    t: &Tenant,
    name: &str,
    url: &str,
    credential: &str,
    binding: Value,
) -> (String, Vec<Value>, Value) {
    let provider = app
        .post(
            "/v1/providers",
            &t.key,
            json!({"kind": "mcp", "name": name, "url": url, "auth": {"type": "bearer"}, "credential": credential}),
        )
        .await
        .ok(201)["id"]
        .as_str()
        .unwrap()
        .to_string();
    let sync = app
        .post(&format!("/v1/providers/{provider}/sync"), &t.key, json!({}))
        .await
        .ok(200)
        .clone();
    let bindings = sync["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| {
            let mut b = json!({"tool_id": tool["id"], "provider_id": provider});
            for (k, v) in binding.as_object().into_iter().flatten() {
                b[k] = v.clone();
            }
            b
        })
        .collect();
    (provider, bindings, sync)
}
