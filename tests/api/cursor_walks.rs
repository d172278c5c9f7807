//! P5 end to end: `_all_pages` through `POST /v1/agents/{id}/threads/{t}/tool-calls` on
//! upstreams paginated like real public APIs (see `cursor_servers`), on hostile ones,
//! and on loopgate's own list endpoints imported from its OpenAPI document. Every walk is
//! checked for the exact row set, no duplicates, an honest verdict, and no request (nor
//! credential) leaving the provider's origin.

use std::collections::{HashMap, HashSet};

use serde_json::{json, Value};

use crate::cursor_servers::{
    self, rid, CursorServers, CAPPED, CYCLE_TOTAL, HOSTILE_PAGE, ROWS, STICKY_MAX, STICKY_ROWS,
};
use crate::helpers::{fresh_database, spawn_app, spawn_with, test_settings, Res, TestApp};

const SECRET: &str = "sk_test_cursor_0123456789";

fn int(max: Option<u64>) -> Value {
    match max {
        Some(m) => json!({"type": "integer", "minimum": 1, "maximum": m}),
        None => json!({"type": "integer", "minimum": 1}),
    }
}

fn s() -> Value {
    json!({"type": "string"})
}

/// (name, method, path, input_schema): each names its pagination parameters as the real
/// API does.
fn tool_defs() -> Vec<(&'static str, &'static str, &'static str, Value)> {
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
struct CursorRig {
    servers: CursorServers,
    agent: String,
    token: String,
    tools: HashMap<String, String>,
}

impl CursorRig {
    async fn new(app: &TestApp) -> CursorRig {
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

    async fn call(&self, app: &TestApp, name: &str, args: Value) -> Res {
        assert!(self.tools.contains_key(name), "unknown tool {name}");
        app.post(
            &format!("/v1/agents/{}/threads/cursor-thread/tool-calls", self.agent),
            &self.token,
            json!({"name": name, "arguments": args}),
        )
        .await
    }

    /// `_all_pages` on `name`: the result envelope.
    async fn walk(&self, app: &TestApp, name: &str) -> Value {
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
    fn assert_stayed_home(&self) {
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
fn ids(res: &Value) -> Vec<String> {
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
fn assert_rows(res: &Value, expected: &[String], what: &str) {
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

fn all_rows() -> Vec<String> {
    (0..ROWS).map(rid).collect()
}

fn verdict(res: &Value) -> Value {
    json!({"_pagingComplete": res["_pagingComplete"], "_likelyMoreRows": res["_likelyMoreRows"],
           "_stoppedBy": res["_stoppedBy"], "_total": res["_total"], "_note": res["_note"], "_itemCount": res["_itemCount"]})
}

/// A complete walk: every row once, `end`, nothing more, and `_total` only when announced.
fn assert_complete(res: &Value, announced: Option<usize>, what: &str) {
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

fn query_of(hit: &cursor_servers::Hit) -> HashMap<String, String> {
    actix_web::web::Query::<HashMap<String, String>>::from_query(&hit.query)
        .map(|q| q.into_inner())
        .unwrap_or_default()
}

#[tokio::test]
async fn cursor_github_link_header_walk_is_complete() {
    let app = spawn_app().await;
    let rig = CursorRig::new(&app).await;
    let res = rig.walk(&app, "github_list_items").await;
    assert_complete(&res, None, "github");
    let hits = rig.servers.main.hits("/gh/items");
    assert_eq!(hits.len(), 2, "100 + 73 rows: {hits:?}");
    assert!(hits
        .iter()
        .all(|h| query_of(h).get("per_page").map(String::as_str) == Some("100")));
    rig.assert_stayed_home();
}

#[tokio::test]
async fn cursor_stripe_starting_after_walk_is_complete() {
    let app = spawn_app().await;
    let rig = CursorRig::new(&app).await;
    let res = rig.walk(&app, "stripe_list_customers").await;
    assert_complete(&res, None, "stripe");
    let hits = rig.servers.main.hits("/stripe/customers");
    assert_eq!(hits.len(), 2, "{hits:?}");
    assert_eq!(
        query_of(&hits[1]).get("starting_after").map(String::as_str),
        Some(rid(99).as_str()),
        "the cursor is the last row's id"
    );
    rig.assert_stayed_home();
}

#[tokio::test]
async fn cursor_google_page_token_walk_is_complete() {
    let app = spawn_app().await;
    let rig = CursorRig::new(&app).await;
    let res = rig.walk(&app, "drive_files_list").await;
    // asks for 1000, gets at most 100 per page: the short first page is not the end
    assert_complete(&res, None, "google");
    assert_eq!(rig.servers.main.count("/google/files"), 2);
    rig.assert_stayed_home();
}

#[tokio::test]
async fn cursor_slack_next_cursor_walk_is_complete() {
    let app = spawn_app().await;
    let rig = CursorRig::new(&app).await;
    let res = rig.walk(&app, "slack_users_list").await;
    assert_complete(&res, None, "slack");
    // 50 per page whatever the limit; the empty `next_cursor` ends it
    assert_eq!(rig.servers.main.count("/slack/users"), 4);
    rig.assert_stayed_home();
}

#[tokio::test]
async fn cursor_hubspot_paging_next_after_walk_is_complete() {
    let app = spawn_app().await;
    let rig = CursorRig::new(&app).await;
    let res = rig.walk(&app, "hubspot_contacts_list").await;
    assert_complete(&res, None, "hubspot");
    let hits = rig.servers.main.hits("/hubspot/contacts");
    assert_eq!(hits.len(), 2, "{hits:?}");
    assert_eq!(
        query_of(&hits[1]).get("after").map(String::as_str),
        Some("100")
    );
    rig.assert_stayed_home();
}

#[tokio::test]
async fn cursor_graph_odata_next_link_walk_is_complete() {
    let app = spawn_app().await;
    let rig = CursorRig::new(&app).await;
    let res = rig.walk(&app, "graph_list_users").await;
    assert_complete(&res, None, "graph");
    let hits = rig.servers.main.hits("/graph/users");
    assert_eq!(hits.len(), 2, "at most 100 per page: {hits:?}");
    for h in &hits {
        let q = query_of(h);
        assert!(
            q.contains_key("$top") && !q.contains_key("top"),
            "the page size goes out under its wire name `$top`: {h:?}"
        );
    }
    rig.assert_stayed_home();
}

#[tokio::test]
async fn cursor_notion_body_cursor_walk_is_complete() {
    let app = spawn_app().await;
    let rig = CursorRig::new(&app).await;
    let res = rig.walk(&app, "notion_query_database").await;
    assert_complete(&res, None, "notion");
    let hits = rig.servers.main.hits("/notion/query");
    assert_eq!(hits.len(), 2, "{hits:?}");
    let first = hits[0].body.clone().unwrap();
    assert_eq!(first["page_size"], 100);
    assert!(first.get("start_cursor").is_none_or(Value::is_null));
    assert_eq!(
        hits[1].body.as_ref().unwrap()["start_cursor"],
        "5eed0000-0000-4000-8000-000000000100"
    );
    for h in &hits {
        let b = h.body.as_ref().unwrap();
        assert!(
            !b.as_object().unwrap().keys().any(|k| k.starts_with('_')),
            "no reserved argument reaches the API: {b}"
        );
    }
    rig.assert_stayed_home();
}

#[tokio::test]
async fn cursor_jsonapi_relative_next_url_walk_is_complete() {
    let app = spawn_app().await;
    let rig = CursorRig::new(&app).await;
    let res = rig.walk(&app, "jsonapi_list_articles").await;
    assert_complete(&res, None, "jsonapi");
    // `page[size]` is not a P1 page-size name: the API's default of 20 rows per page
    // (or 40, if the engine learns the name); every page after the first comes through
    // the relative `links.next`
    let hits = rig.servers.main.hits("/jsonapi/articles");
    assert!(
        hits.len() == ROWS.div_ceil(20) || hits.len() == ROWS.div_ceil(40),
        "{hits:?}"
    );
    assert!(hits[1..].iter().all(|h| query_of(h)
        .get("page[after]")
        .is_some_and(|a| a.starts_with("art"))));
    rig.assert_stayed_home();
}

#[tokio::test]
async fn cursor_agentic_data_cursor_has_more_total_walk_is_exact() {
    let app = spawn_app().await;
    let rig = CursorRig::new(&app).await;
    let res = rig.walk(&app, "list_inboxes").await;
    assert_complete(&res, Some(ROWS), "agentic");
    let hits = rig.servers.main.hits("/agentic/inboxes");
    assert_eq!(hits.len(), 2, "{hits:?}");
    assert_eq!(
        query_of(&hits[0]).get("limit").map(String::as_str),
        Some("100")
    );
    assert_eq!(
        query_of(&hits[1]).get("cursor").map(String::as_str),
        Some("eyJvIjo100")
    );
    for h in &hits {
        assert!(
            !h.query.contains("_all_pages"),
            "reserved arguments never reach the API: {h:?}"
        );
    }
    rig.assert_stayed_home();
}

#[tokio::test]
async fn cursor_endless_cursor_with_the_same_rows_stops_as_a_loop() {
    let app = spawn_app().await;
    let rig = CursorRig::new(&app).await;
    let res = rig.walk(&app, "endless_list").await;
    let want: Vec<String> = (0..HOSTILE_PAGE).map(rid).collect();
    assert_rows(&res, &want, "endless");
    assert_eq!(res["_stoppedBy"], "loop", "{}", verdict(&res));
    assert_eq!(res["_pagingComplete"], false, "{}", verdict(&res));
    assert_eq!(
        res["_likelyMoreRows"],
        false,
        "the same ten rows every time: every distinct row was fetched: {}",
        verdict(&res)
    );
    let note = res["_note"].as_str().unwrap();
    assert!(
        note.contains("distinct row"),
        "the note says whether every distinct row seems fetched: {note}"
    );
    assert_eq!(
        rig.servers.main.count("/hostile/endless"),
        2,
        "the second identical page ends the walk"
    );
    rig.assert_stayed_home();
}

#[tokio::test]
async fn cursor_never_ending_new_rows_stop_at_the_page_bound() {
    let app = spawn_app().await;
    let rig = CursorRig::new(&app).await;
    let res = rig.walk(&app, "forever_list").await;
    let pages = rig.servers.main.count("/hostile/forever");
    assert_eq!(pages, 20, "20 pages per collection by default");
    let want: Vec<String> = (0..pages)
        .flat_map(|k| (0..HOSTILE_PAGE).map(move |j| format!("fv_{k:04}_{j}")))
        .collect();
    assert_rows(&res, &want, "forever");
    assert_eq!(res["_stoppedBy"], "pages", "{}", verdict(&res));
    assert_eq!(res["_pagingComplete"], false);
    assert_eq!(res["_likelyMoreRows"], true);
    assert!(res["_note"].as_str().unwrap().contains("partial"));
    rig.assert_stayed_home();
}

#[tokio::test]
async fn cursor_cycle_stops_as_a_loop_and_counts_what_is_missing() {
    let app = spawn_app().await;
    let rig = CursorRig::new(&app).await;
    let res = rig.walk(&app, "cycle_list").await;
    let want: Vec<String> = (0..3 * HOSTILE_PAGE).map(rid).collect();
    assert_rows(&res, &want, "cycle");
    assert_eq!(res["_stoppedBy"], "loop", "{}", verdict(&res));
    assert_eq!(res["_pagingComplete"], false);
    assert_eq!(res["_likelyMoreRows"], true, "30 of an announced 50");
    assert_eq!(res["_total"], CYCLE_TOTAL);
    let note = res["_note"].as_str().unwrap();
    assert!(
        note.contains(&CYCLE_TOTAL.to_string()) && note.contains("20"),
        "the note says how many are missing: {note}"
    );
    assert_eq!(
        rig.servers.main.count("/hostile/cycle"),
        3,
        "cursor A is not requested twice"
    );
    rig.assert_stayed_home();
}

#[tokio::test]
async fn cursor_next_url_to_another_origin_is_not_followed() {
    let app = spawn_app().await;
    let rig = CursorRig::new(&app).await;
    let res = rig.walk(&app, "offsite_list").await;
    let want: Vec<String> = (0..HOSTILE_PAGE).map(rid).collect();
    assert_rows(&res, &want, "offsite");
    assert_eq!(res["_stoppedBy"], "off_origin", "{}", verdict(&res));
    assert_eq!(res["_pagingComplete"], false);
    assert_eq!(res["_likelyMoreRows"], true);
    assert_eq!(rig.servers.main.count("/hostile/offsite"), 1);
    assert_eq!(
        rig.servers.elsewhere.count("/hostile/offsite"),
        0,
        "the other origin was never asked"
    );

    let res = rig.walk(&app, "scheme_list").await;
    assert_rows(&res, &want, "scheme change");
    assert_eq!(res["_stoppedBy"], "off_origin", "{}", verdict(&res));
    assert_eq!(res["_pagingComplete"], false);
    assert_eq!(res["_likelyMoreRows"], true);
    assert_eq!(rig.servers.main.count("/hostile/scheme"), 1);
    rig.assert_stayed_home();
}

#[tokio::test]
async fn cursor_last_page_repeated_forever_stops_without_duplicates() {
    let app = spawn_app().await;
    let rig = CursorRig::new(&app).await;
    let res = rig.walk(&app, "sticky_list").await;
    let want: Vec<String> = (0..STICKY_ROWS).map(rid).collect();
    assert_rows(&res, &want, "sticky");
    assert_eq!(res["_stoppedBy"], "loop", "{}", verdict(&res));
    assert_eq!(res["_pagingComplete"], false);
    assert_eq!(
        res["_likelyMoreRows"],
        false,
        "every distinct row was fetched: {}",
        verdict(&res)
    );
    let note = res["_note"].as_str().unwrap();
    assert!(note.contains("distinct row"), "{note}");
    assert_eq!(
        rig.servers.main.count("/hostile/sticky"),
        STICKY_ROWS / STICKY_MAX + 1,
        "one repeated page is enough to stop"
    );
    rig.assert_stayed_home();
}

#[tokio::test]
async fn cursor_silently_capped_page_size_is_walked_to_the_total() {
    let app = spawn_app().await;
    let rig = CursorRig::new(&app).await;
    let pages = ROWS.div_ceil(CAPPED);

    let res = rig.walk(&app, "capped_list").await;
    assert_complete(&res, Some(ROWS), "capped page numbers");
    let hits = rig.servers.main.hits("/hostile/capped");
    assert_eq!(hits.len(), pages);
    assert!(hits
        .iter()
        .all(|h| query_of(h).get("limit").map(String::as_str) == Some("100")));

    let res = rig.walk(&app, "capped_offset_list").await;
    assert_complete(&res, Some(ROWS), "capped offsets");
    let hits = rig.servers.main.hits("/hostile/capped_offset");
    assert_eq!(hits.len(), pages);
    let offsets: Vec<String> = hits
        .iter()
        .map(|h| query_of(h).get("offset").cloned().unwrap_or_default())
        .collect();
    let stepped: Vec<String> = (0..pages).map(|p| (p * CAPPED).to_string()).collect();
    assert_eq!(offsets, stepped, "the offset steps by rows received");
    rig.assert_stayed_home();
}

#[tokio::test]
async fn cursor_single_page_says_more_rows_exist() {
    let app = spawn_app().await;
    let rig = CursorRig::new(&app).await;

    let r = rig.call(&app, "list_inboxes", json!({"limit": 20})).await;
    let res = r.ok(200)["result"].clone();
    assert_eq!(res["data"].as_array().unwrap().len(), 20, "{res}");
    assert_eq!(res["has_more"], true, "the tool's own payload is kept");
    assert_eq!(res["_likelyMoreRows"], true, "{res}");
    assert_eq!(res["_total"], ROWS);
    let note = res["_note"].as_str().unwrap_or_default();
    assert!(note.contains("_all_pages"), "{note}");

    let r = rig
        .call(&app, "stripe_list_customers", json!({"limit": 10}))
        .await;
    let res = r.ok(200)["result"].clone();
    assert_eq!(res["data"].as_array().unwrap().len(), 10, "{res}");
    assert_eq!(res["_likelyMoreRows"], true, "{res}");
    assert!(res.get("_total").is_none_or(Value::is_null));
    let note = res["_note"].as_str().unwrap_or_default();
    assert!(note.contains("_all_pages"), "{note}");

    assert_eq!(rig.servers.main.count("/agentic/inboxes"), 1);
    assert_eq!(rig.servers.main.count("/stripe/customers"), 1);
    rig.assert_stayed_home();
}

/// Dogfood: loopgate's own OpenAPI document imported as a provider whose base URL is the
/// running app, with another org's studio key as the credential; its `GET /v1/tools` walked
/// through `_all_pages`.
#[tokio::test]
async fn cursor_dogfood_walks_loopgates_own_list_endpoint() {
    // the setup creates 250 tools in a burst: above the default per-org request rate
    let mut settings = test_settings(fresh_database().await);
    settings.org_requests_per_second = 100_000;
    let app = spawn_with(settings).await;

    // the org being listed: one provider and 250 tools
    const N: usize = 250;
    let listed_org = app.create_org("listed").await;
    let listed_key = app.create_key(&listed_org, &["studio"]).await;
    let lp = app
        .post(
            "/v1/providers",
            &listed_key,
            json!({"name": "inventory", "base_url": "https://api.example.com", "auth": {"type": "none"}}),
        )
        .await
        .ok(201)["id"]
        .as_str()
        .unwrap()
        .to_string();
    let mut created = Vec::with_capacity(N);
    for i in 0..N {
        let r = app
            .post(
                "/v1/tools",
                &listed_key,
                json!({"provider_id": lp, "name": format!("tool_{i:03}"), "description": "x", "method": "GET", "path": "/x", "input_schema": {"type": "object", "properties": {}}}),
            )
            .await;
        created.push(r.ok(201)["id"].as_str().unwrap().to_string());
    }
    let announced = app.get("/v1/tools?limit=1", &listed_key).await.ok(200)["total"].clone();
    assert_eq!(announced, N);

    // the org whose agent walks it
    let t = app.tenant("walker").await;
    let provider = app
        .post(
            "/v1/providers",
            &t.key,
            json!({"name": "loopgate", "base_url": app.address, "auth": {"type": "bearer"}, "credential": listed_key}),
        )
        .await
        .ok(201)["id"]
        .as_str()
        .unwrap()
        .to_string();
    let doc = std::fs::read(format!(
        "{}/openapi/openapi.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let imported = app
        .post_raw(
            &format!("/v1/providers/{provider}/openapi"),
            &t.key,
            "application/json",
            doc,
        )
        .await;
    let tools = imported.ok(201)["data"].as_array().unwrap().clone();
    let list_tools = tools
        .iter()
        .find(|t| t["method"] == "GET" && t["path"] == "/v1/tools")
        .unwrap_or_else(|| panic!("no GET /v1/tools among {}", imported.text));
    let name = list_tools["name"].as_str().unwrap().to_string();
    let tool_id = list_tools["id"].as_str().unwrap().to_string();
    let agent = app
        .post(
            "/v1/agents",
            &t.key,
            json!({"name": "dogfood", "deployment_id": t.deployment,
            "agentTools": [{"tool_id": tool_id, "provider_id": provider, "loop_responses": true}]}),
        )
        .await
        .ok(201)["id"]
        .as_str()
        .unwrap()
        .to_string();

    // `_all_pages` is offered on the imported list operation
    let steps = app
        .post(
            &format!("/v1/agents/{agent}/threads/df/steps"),
            &t.key,
            json!({}),
        )
        .await;
    let offered = steps.ok(200)["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == name.as_str())
        .cloned()
        .unwrap_or_else(|| panic!("{name} not offered: {}", steps.text));
    assert!(
        offered["input_schema"]["properties"]["_all_pages"].is_object(),
        "{offered}"
    );

    let r = app
        .post(
            &format!("/v1/agents/{agent}/threads/df/tool-calls"),
            &t.key,
            json!({"name": name, "arguments": {"_all_pages": true}}),
        )
        .await;
    let res = r.ok(200)["result"].clone();
    // 250 tools are more than fits the conversation: the rest is read back from the
    // stored walk through `queryToolResult`
    let mut got = ids(&res);
    if res["_truncated"] == true {
        let result_id = res["_resultId"].as_str().unwrap().to_string();
        loop {
            let q = app
                .post(
                    &format!("/v1/agents/{agent}/threads/df/tool-calls"),
                    &t.key,
                    json!({"name": "queryToolResult", "arguments": {"resultId": result_id, "offset": got.len(), "limit": 100}}),
                )
                .await;
            let page = q.ok(200)["result"].clone();
            got.extend(ids(&page));
            if page["has_more"] != true {
                assert_eq!(page["total"], N, "{page}");
                break;
            }
        }
    }
    let res_with_all = json!({"items": got.iter().map(|id| json!({"id": id})).collect::<Vec<_>>(), "_itemCount": res["_itemCount"]});
    assert_rows(&res_with_all, &created, "dogfood");
    assert_eq!(res["_itemCount"], N);
    assert_eq!(res["_pagingComplete"], true, "{}", verdict(&res));
    assert_eq!(res["_likelyMoreRows"], false);
    assert_eq!(res["_stoppedBy"], "end");
    assert_eq!(res["_total"], announced, "{}", verdict(&res));
}
