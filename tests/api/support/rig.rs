//! A tenant wired to the in-test upstream: provider, tools, an agent, tokens.

use std::collections::HashMap;

use serde_json::{json, Value};

use crate::support::helpers::{Tenant, TestApp};
use crate::support::upstream_server::Upstream;

pub struct Rig {
    pub t: Tenant,
    pub provider: String,
    pub agent: String,
    pub tools: HashMap<String, String>,
}

/// An integer of at least 1: page numbers of the rig's 1-based upstream say so (P11),
/// sizes say their maximum too.
fn int(max: Option<u64>) -> Value {
    match max {
        Some(m) => json!({"type": "integer", "minimum": 1, "maximum": m}),
        None => json!({"type": "integer", "minimum": 1}),
    }
}

/// (name, method, path, input_schema)
pub fn tool_defs() -> Vec<(&'static str, &'static str, &'static str, Value)> {
    vec![
        (
            "list_contacts",
            "GET",
            "/contacts",
            json!({"type": "object", "properties": {"page": int(None), "per_page": int(Some(100))}}),
        ),
        (
            "list_orders",
            "GET",
            "/orders",
            json!({"type": "object", "properties": {"offset": {"type": "integer"}, "limit": int(Some(50))}}),
        ),
        (
            "search_contacts",
            "POST",
            "/search",
            json!({"type": "object", "properties": {"body": {"type": "object", "properties": {
            "query": {"type": "string"}, "page": int(None), "pageSize": int(Some(25))}}}}),
        ),
        (
            "list_inboxes",
            "GET",
            "/inboxes",
            json!({"type": "object", "properties": {}}),
        ),
        (
            "flaky_contacts",
            "GET",
            "/flaky",
            json!({"type": "object", "properties": {"page": int(None), "per_page": int(Some(10))}}),
        ),
        (
            "get_contact",
            "GET",
            "/contacts/{id}",
            json!({"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}),
        ),
    ]
}

impl Rig {
    /// A fresh app, an in-test upstream, a rig on it, and a runtime token of user `u1`.
    pub async fn start(looping: bool) -> (TestApp, Upstream, Rig, String) {
        let app = crate::support::helpers::spawn_app().await;
        let up = crate::support::upstream_server::start().await;
        let rig = Rig::new(&app, &up, looping).await;
        let token = rig.token(&app, "u1", json!({})).await;
        (app, up, rig, token)
    }

    /// Provider with an org credential; every tool bound with `loop_responses: looping`.
    pub async fn new(app: &TestApp, up: &Upstream, looping: bool) -> Rig {
        Self::with_tools(app, &up.base, tool_defs(), looping).await
    }

    /// [`Rig::new`] over any upstream at `base` with these tools
    /// `(name, method, path, input_schema)`.
    pub async fn with_tools(
        app: &TestApp,
        base: &str,
        defs: Vec<(&str, &str, &str, Value)>,
        looping: bool,
    ) -> Rig {
        let t = app.tenant("rig").await;
        let provider = app
            .post(
                "/v1/providers",
                &t.key,
                json!({"name": "crm", "base_url": base, "auth": {"type": "bearer"}, "credential": "org-secret"}),
            )
            .await
            .ok(201)["id"]
            .as_str()
            .unwrap()
            .to_string();
        let mut tools = HashMap::new();
        let mut bindings = Vec::new();
        for (name, method, path, schema) in defs {
            let r = app
                .post(
                    "/v1/tools",
                    &t.key,
                    json!({"provider_id": provider, "name": name, "description": format!("{name} of the CRM"), "method": method, "path": path, "input_schema": schema}),
                )
                .await;
            let id = r.ok(201)["id"].as_str().unwrap().to_string();
            bindings
                .push(json!({"tool_id": id, "provider_id": provider, "loop_responses": looping}));
            tools.insert(name.to_string(), id);
        }
        let agent = app
            .post("/v1/agents", &t.key, json!({"name": "crm agent", "deployment_id": t.deployment, "instructions": "Use the CRM.", "agentTools": bindings}))
            .await
            .ok(201)["id"]
            .as_str()
            .unwrap()
            .to_string();
        Rig {
            t,
            provider,
            agent,
            tools,
        }
    }

    pub async fn token(&self, app: &TestApp, user: &str, extra: Value) -> String {
        let mut body = json!({"user_id": user, "agent_id": self.agent});
        if let Value::Object(m) = extra {
            for (k, v) in m {
                body[k] = v;
            }
        }
        app.post("/v1/runtime-tokens", &self.t.key, body)
            .await
            .ok(201)["token"]
            .as_str()
            .unwrap()
            .to_string()
    }

    pub async fn call(
        &self,
        app: &TestApp,
        token: &str,
        thread: &str,
        name: &str,
        args: Value,
    ) -> crate::support::helpers::Res {
        app.tool_call(&self.agent, token, thread, name, args).await
    }

    /// Starts a streamed call and reads it up to its `tool-input-available` chunk: the
    /// call's id, and the rest of the stream (drop it to leave mid-walk).
    pub async fn stream_call(
        &self,
        app: &TestApp,
        token: &str,
        thread: &str,
        name: &str,
        args: Value,
    ) -> (
        String,
        impl futures_util::Stream<Item = reqwest::Result<bytes::Bytes>>,
    ) {
        use futures_util::StreamExt;
        let res = app
            .client
            .post(format!(
                "{}/v1/agents/{}/threads/{thread}/tool-calls",
                app.address, self.agent
            ))
            .bearer_auth(token)
            .header("accept", "text/event-stream")
            .json(&json!({"name": name, "arguments": args}))
            .send()
            .await
            .unwrap();
        let mut body = res.bytes_stream();
        let mut seen = String::new();
        loop {
            let chunk = body.next().await.expect("stream open").unwrap();
            seen.push_str(&String::from_utf8_lossy(&chunk));
            if let Some(line) = seen
                .split("\n\n")
                .find(|e| e.contains("tool-input-available"))
            {
                let v: Value = serde_json::from_str(&line["data: ".len()..]).unwrap();
                return (v["toolCallId"].as_str().unwrap().to_string(), body);
            }
        }
    }

    pub async fn steps(&self, app: &TestApp, token: &str, thread: &str) -> Value {
        app.post(
            &format!("/v1/agents/{}/threads/{thread}/steps", self.agent),
            token,
            json!({}),
        )
        .await
        .ok(200)
        .clone()
    }

    /// Binds a looping tool `name` over `/limited` (60 rows, 10 a page, 7 requests a walk)
    /// on a provider of its own limited to `rps` requests per second, burst 1.
    pub async fn bind_limited(&self, app: &TestApp, base: &str, name: &str, rps: u32) {
        let provider = app
            .post(
                "/v1/providers",
                &self.t.key,
                json!({"name": name, "base_url": base, "auth": {"type": "none"},
                       "rate_limit": {"requests_per_second": rps, "burst": 1}}),
            )
            .await
            .ok(201)["id"]
            .as_str()
            .unwrap()
            .to_string();
        let tool = app
            .post(
                "/v1/tools",
                &self.t.key,
                json!({"provider_id": provider, "name": name, "method": "GET", "path": "/limited",
                       "input_schema": {"type": "object", "properties": {"page": int(None), "per_page": int(Some(10))}}}),
            )
            .await
            .ok(201)["id"]
            .as_str()
            .unwrap()
            .to_string();
        app.post(
            &format!("/v1/agents/{}/tools", self.agent),
            &self.t.key,
            json!({"tool_id": tool, "provider_id": provider, "loop_responses": true}),
        )
        .await
        .ok(201);
    }
}
