//! P5 end to end: `_all_pages` through `POST /v1/agents/{id}/threads/{t}/tool-calls` on
//! upstreams paginated like real public APIs (see `cursor_servers`), single pages that
//! say more exists (P7), and loopgate's own list endpoint imported from its OpenAPI
//! document. Every walk is checked for the exact row set, no duplicates, an honest
//! verdict, and no request (nor credential) leaving the provider's origin.

use serde_json::{json, Value};

use crate::support::cursor_rig::*;
use crate::support::cursor_servers::{rid, ROWS};
use crate::support::helpers::{fresh_database, spawn_app, spawn_with, test_settings};

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
