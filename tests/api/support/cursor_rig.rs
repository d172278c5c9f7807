//! Shared set-up and assertions of the P5 end-to-end tests (`walks::cursors`,
//! `walks::hostile_cursors`): a tenant whose agent holds one looping tool per upstream
//! style of `cursor_servers`, and checks of the exact row set and the verdict.

use std::collections::{HashMap, HashSet};

use serde_json::{json, Value};

use crate::support::cursor_servers::{self, rid, CursorServers, ROWS, STICKY_MAX};
use crate::support::helpers::{Res, TestApp};

pub(crate) const SECRET: &str = "sk_test_cursor_0123456789";

pub(crate) fn int(max: Option<u64>) -> Value {
    match max {
        Some(m) => json!({"type": "integer", "minimum": 1, "maximum": m}),
        None => json!({"type": "integer", "minimum": 1}),
    }
}

pub(crate) fn s() -> Value {
    json!({"type": "string"})
}

/// (name, method, path, input_schema): each names its pagination parameters as the real
/// API does.
pub(crate) fn tool_defs() -> Vec<(&'static str, &'static str, &'static str, Value)> {
    vec![
        (
            "github_list_items",
            "GET",
            "/gh/items",
            json!({"type": "object", "properties": {"per_page": {"type": "integer", "maximum": 100, "default": 30}, "page": {"type": "integer", "default": 1}, "state": s()}}),
        ),
        (
            "stripe_list_customers",
            "GET",
            "/stripe/customers",
            json!({"type": "object", "properties": {"limit": int(Some(100)), "starting_after": s(), "ending_before": s(), "email": s()}}),
        ),
        (
            "drive_files_list",
            "GET",
            "/google/files",
            json!({"type": "object", "properties": {"pageSize": int(Some(1000)), "pageToken": s(), "q": s(), "orderBy": s()}}),
        ),
        (
            "slack_users_list",
            "GET",
            "/slack/users",
            json!({"type": "object", "properties": {"limit": int(Some(1000)), "cursor": s(), "team_id": s()}}),
        ),
        (
            "hubspot_contacts_list",
            "GET",
            "/hubspot/contacts",
            json!({"type": "object", "properties": {"limit": int(Some(100)), "after": s(), "properties": {"type": "array", "items": s()}, "archived": {"type": "boolean"}}}),
        ),
        (
            // As the OpenAPI importer turns Graph's `GET /users`: OData `$` parameters
            // become safe keys that keep their wire names in `x-loopgate-name`.
            "graph_list_users",
            "GET",
            "/graph/users",
            json!({"type": "object", "properties": {
                "top": {"type": "integer", "minimum": 1, "maximum": 999, "x-loopgate-in": "query", "x-loopgate-name": "$top"},
                "skip": {"type": "integer", "minimum": 0, "x-loopgate-in": "query", "x-loopgate-name": "$skip"},
                "search": {"type": "string", "x-loopgate-in": "query", "x-loopgate-name": "$search"},
                "filter": {"type": "string", "x-loopgate-in": "query", "x-loopgate-name": "$filter"},
                "count": {"type": "boolean", "x-loopgate-in": "query", "x-loopgate-name": "$count"},
                "select": {"type": "array", "items": s(), "x-loopgate-in": "query", "x-loopgate-name": "$select", "x-loopgate-explode": false}
            }}),
        ),
        (
            "notion_query_database",
            "POST",
            "/notion/query",
            json!({"type": "object", "properties": {"body": {"type": "object", "properties": {
                "start_cursor": s(), "page_size": int(Some(100)), "filter": {"type": "object"}, "sorts": {"type": "array"}}}}}),
        ),
        (
            "jsonapi_list_articles",
            "GET",
            "/jsonapi/articles",
            json!({"type": "object", "properties": {"page[size]": int(Some(40)), "page[after]": s()}}),
        ),
        (
            "list_inboxes",
            "GET",
            "/agentic/inboxes",
            json!({"type": "object", "properties": {"limit": int(Some(100)), "cursor": s()}}),
        ),
        (
            "endless_list",
            "GET",
            "/hostile/endless",
            json!({"type": "object", "properties": {"limit": int(Some(100)), "cursor": s()}}),
        ),
        (
            "forever_list",
            "GET",
            "/hostile/forever",
            json!({"type": "object", "properties": {"limit": int(Some(100)), "cursor": s()}}),
        ),
        (
            "cycle_list",
            "GET",
            "/hostile/cycle",
            json!({"type": "object", "properties": {"limit": int(Some(100)), "cursor": s()}}),
        ),
        (
            "offsite_list",
            "GET",
            "/hostile/offsite",
            json!({"type": "object", "properties": {"limit": int(Some(100)), "cursor": s()}}),
        ),
        (
            "scheme_list",
            "GET",
            "/hostile/scheme",
            json!({"type": "object", "properties": {"limit": int(Some(100)), "cursor": s()}}),
        ),
        (
            "sticky_list",
            "GET",
            "/hostile/sticky",
            json!({"type": "object", "properties": {"page": int(None), "per_page": int(Some(STICKY_MAX as u64))}}),
        ),
        (
            "capped_list",
            "GET",
            "/hostile/capped",
            json!({"type": "object", "properties": {"page": int(None), "limit": int(Some(100))}}),
        ),
        (
            "capped_offset_list",
            "GET",
            "/hostile/capped_offset",
            json!({"type": "object", "properties": {"offset": {"type": "integer", "minimum": 0}, "limit": int(Some(100))}}),
        ),
    ]
}

/// A tenant whose provider is the cursor server (bearer credential), every tool above
/// bound to one agent with `loop_responses: true`, and a runtime token.
pub(crate) struct CursorRig {
    pub(crate) servers: CursorServers,
    pub(crate) agent: String,
    pub(crate) token: String,
    pub(crate) tools: HashMap<String, String>,
}

impl CursorRig {
    pub(crate) async fn new(app: &TestApp) -> CursorRig {
        let servers = cursor_servers::start().await;
        let t = app.tenant("cursors").await;
        let provider = app
            .post(
                "/v1/providers",
                &t.key,
                json!({"name": "paginated", "base_url": servers.main.base, "auth": {"type": "bearer"}, "credential": SECRET}),
            )
            .await
            .ok(201)["id"]
            .as_str()
            .unwrap()
            .to_string();
        let mut tools = HashMap::new();
        let mut bindings = Vec::new();
        for (name, method, path, schema) in tool_defs() {
            let r = app
                .post(
                    "/v1/tools",
                    &t.key,
                    json!({"provider_id": provider, "name": name, "description": format!("{name} (paginated)"), "method": method, "path": path, "input_schema": schema}),
                )
                .await;
            let id = r.ok(201)["id"].as_str().unwrap().to_string();
            bindings.push(json!({"tool_id": id, "provider_id": provider, "loop_responses": true}));
            tools.insert(name.to_string(), id);
        }
        let agent = app
            .post("/v1/agents", &t.key, json!({"name": "pager", "deployment_id": t.deployment, "instructions": "Read every page.", "agentTools": bindings}))
            .await
            .ok(201)["id"]
            .as_str()
            .unwrap()
            .to_string();
        let token = app
            .post(
                "/v1/runtime-tokens",
                &t.key,
                json!({"user_id": "walker", "agent_id": agent}),
            )
            .await
            .ok(201)["token"]
            .as_str()
            .unwrap()
            .to_string();
        CursorRig {
            servers,
            agent,
            token,
            tools,
        }
    }

    pub(crate) async fn call(&self, app: &TestApp, name: &str, args: Value) -> Res {
        assert!(self.tools.contains_key(name), "unknown tool {name}");
        app.post(
            &format!("/v1/agents/{}/threads/cursor-thread/tool-calls", self.agent),
            &self.token,
            json!({"name": name, "arguments": args}),
        )
        .await
    }

    /// `_all_pages` on `name`: the result envelope.
    pub(crate) async fn walk(&self, app: &TestApp, name: &str) -> Value {
        let r = self.call(app, name, json!({"_all_pages": true})).await;
        let res = r.ok(200)["result"].clone();
        assert_eq!(r.body["name"], name);
        assert!(
            res["items"].is_array(),
            "{name}: a walk returns the envelope: {res}"
        );
        res
    }

    /// Every request reached the provider's own server with the provider's credential,
    /// and nothing reached the other origin.
    pub(crate) fn assert_stayed_home(&self) {
        let hits = self.servers.main.all_hits();
        assert!(!hits.is_empty());
        for h in &hits {
            assert_eq!(
                h.auth.as_deref(),
                Some(format!("Bearer {SECRET}").as_str()),
                "credential on {} ?{}",
                h.path,
                h.query
            );
        }
        assert!(
            self.servers.elsewhere.all_hits().is_empty(),
            "a request left the provider's origin: {:?}",
            self.servers.elsewhere.all_hits()
        );
    }
}

/// The `id` of every row, in order.
pub(crate) fn ids(res: &Value) -> Vec<String> {
    res["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["id"]
                .as_str()
                .map(String::from)
                .unwrap_or_else(|| r["id"].to_string())
        })
        .collect()
}

/// Exactly the rows `expected`, each once.
pub(crate) fn assert_rows(res: &Value, expected: &[String], what: &str) {
    let got = ids(res);
    let distinct: HashSet<&String> = got.iter().collect();
    assert_eq!(
        distinct.len(),
        got.len(),
        "{what}: duplicate rows in {got:?}"
    );
    let want: HashSet<&String> = expected.iter().collect();
    let missing: Vec<&&String> = want.difference(&distinct).collect();
    let extra: Vec<&&String> = distinct.difference(&want).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{what}: {} rows, missing {missing:?}, unexpected {extra:?}; verdict: {}",
        got.len(),
        verdict(res)
    );
    assert_eq!(res["_itemCount"], expected.len(), "{what}");
}

pub(crate) fn all_rows() -> Vec<String> {
    (0..ROWS).map(rid).collect()
}

pub(crate) fn verdict(res: &Value) -> Value {
    json!({"_pagingComplete": res["_pagingComplete"], "_likelyMoreRows": res["_likelyMoreRows"],
           "_stoppedBy": res["_stoppedBy"], "_total": res["_total"], "_note": res["_note"], "_itemCount": res["_itemCount"]})
}

/// A complete walk: every row once, `end`, nothing more, and `_total` only when announced.
pub(crate) fn assert_complete(res: &Value, announced: Option<usize>, what: &str) {
    assert_rows(res, &all_rows(), what);
    assert_eq!(res["_pagingComplete"], true, "{what}: {}", verdict(res));
    assert_eq!(res["_likelyMoreRows"], false, "{what}: {}", verdict(res));
    assert_eq!(res["_stoppedBy"], "end", "{what}: {}", verdict(res));
    match announced {
        Some(t) => assert_eq!(res["_total"], t, "{what}: {}", verdict(res)),
        None => assert!(
            res.get("_total").is_none_or(Value::is_null),
            "{what}: the API announced no total: {}",
            verdict(res)
        ),
    }
    assert!(
        res["_note"].as_str().is_some_and(|n| !n.is_empty()),
        "{what}"
    );
}

pub(crate) fn query_of(hit: &cursor_servers::Hit) -> HashMap<String, String> {
    actix_web::web::Query::<HashMap<String, String>>::from_query(&hit.query)
        .map(|q| q.into_inner())
        .unwrap_or_default()
}
