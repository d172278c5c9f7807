//! G7, P14, P15 end to end, against an in-test upstream shaped like three public APIs and
//! imported from its own OpenAPI document: a Gmail-style list that leaves empty lists (and
//! a zero count) out of its protobuf JSON, a page-numbered API whose schema says nothing of
//! its first page (1-based), and a Salesforce-style query that pages only through a
//! relative `nextRecordsUrl` in its responses. Rows are compared one by one; requests are
//! counted at the upstream.

use std::sync::{Arc, Mutex};

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use serde_json::{json, Value};

use crate::support::helpers::{spawn_app, TestApp};
use crate::support::rig::Rig;

type Seen = Arc<Mutex<Vec<String>>>;

fn q(req: &HttpRequest) -> std::collections::HashMap<String, String> {
    web::Query::<std::collections::HashMap<String, String>>::from_query(req.query_string())
        .map(|q| q.into_inner())
        .unwrap_or_default()
}

fn num(req: &HttpRequest, k: &str) -> Option<usize> {
    q(req).get(k).and_then(|v| v.parse().ok())
}

/// Messages matching `q`: `none` matches nothing, `some` 7, anything else 0.
fn matches(query: &str) -> usize {
    match query {
        "some" => 7,
        _ => 0,
    }
}

/// Gmail's `users.messages.list`: at most 3 a page, protobuf JSON (no empty `messages`,
/// no `nextPageToken` on the last page).
async fn gmail(seen: web::Data<Seen>, req: HttpRequest) -> HttpResponse {
    seen.lock()
        .unwrap()
        .push(format!("gmail?{}", req.query_string()));
    let n = matches(q(&req).get("q").map_or("", String::as_str));
    let at = q(&req)
        .get("pageToken")
        .and_then(|t| t.strip_prefix("tk")?.parse().ok())
        .unwrap_or(0usize)
        .min(n);
    let end = (at + num(&req, "maxResults").unwrap_or(3).min(3)).min(n);
    let mut body = json!({"resultSizeEstimate": n});
    if end > at {
        body["messages"] = (at..end)
            .map(|i| json!({"id": format!("m{i}"), "threadId": format!("t{i}")}))
            .collect();
    }
    if end < n {
        body["nextPageToken"] = json!(format!("tk{end}"));
    }
    HttpResponse::Ok().json(body)
}

/// A 1-based page-numbered list (`page` absent is page 1, page 0 is refused), 25 rows
/// per owner, at most 10 a page; its document says nothing of the first page.
async fn silent(seen: web::Data<Seen>, req: HttpRequest) -> HttpResponse {
    seen.lock()
        .unwrap()
        .push(format!("silent?{}", req.query_string()));
    let owner = num(&req, "owner").unwrap_or(0);
    let page = num(&req, "page").unwrap_or(1);
    if page == 0 {
        return HttpResponse::BadRequest().json(json!({"detail": "page must be >= 1"}));
    }
    let size = num(&req, "per_page").unwrap_or(10).min(10);
    let at = ((page - 1) * size).min(25);
    let rows: Vec<Value> = (at..(at + size).min(25))
        .map(|i| json!({"id": format!("o{owner}-{i}")}))
        .collect();
    HttpResponse::Ok().json(json!({"items": rows}))
}

const ACCOUNTS: usize = 10;

fn salesforce_page(at: usize) -> HttpResponse {
    let end = (at + 4).min(ACCOUNTS);
    let mut body = json!({"totalSize": ACCOUNTS, "done": end == ACCOUNTS,
        "records": (at..end).map(|i| json!({"Id": format!("001{i:03}")})).collect::<Vec<_>>()});
    if end < ACCOUNTS {
        body["nextRecordsUrl"] = json!(format!("/services/data/v59.0/query/01gD-{end}"));
    }
    HttpResponse::Ok().json(body)
}

/// Salesforce's query: no paging parameter, a relative `nextRecordsUrl` while not `done`.
async fn sf_query(seen: web::Data<Seen>, req: HttpRequest) -> HttpResponse {
    seen.lock()
        .unwrap()
        .push(format!("query?{}", req.query_string()));
    salesforce_page(0)
}

async fn sf_more(seen: web::Data<Seen>, path: web::Path<String>) -> HttpResponse {
    seen.lock().unwrap().push(format!("more/{path}"));
    let at = path
        .rsplit('-')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(ACCOUNTS);
    salesforce_page(at)
}

async fn start() -> (String, Seen) {
    let seen: Seen = Arc::new(Mutex::new(Vec::new()));
    let data = web::Data::new(seen.clone());
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let server = HttpServer::new(move || {
        App::new()
            .app_data(data.clone())
            .route("/gmail/v1/users/me/messages", web::get().to(gmail))
            .route("/silent/items", web::get().to(silent))
            .route("/services/data/v59.0/query", web::get().to(sf_query))
            .route(
                "/services/data/v59.0/query/{locator}",
                web::get().to(sf_more),
            )
    })
    .workers(1)
    .listen(listener)
    .unwrap()
    .run();
    tokio::spawn(server);
    (base, seen)
}

/// The upstream's own document: what an import reads.
fn document() -> Value {
    let q = |name: &str, ty: &str| json!({"name": name, "in": "query", "schema": {"type": ty}});
    let ok = |schema: Value| json!({"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}});
    json!({
        "openapi": "3.0.3",
        "info": {"title": "shapes", "version": "1"},
        "paths": {
            "/gmail/v1/users/me/messages": {"get": {
                "operationId": "gmail_list_messages",
                "parameters": [q("q", "string"), q("pageToken", "string"),
                    {"name": "maxResults", "in": "query", "schema": {"type": "integer", "maximum": 3}}],
                "responses": ok(json!({"$ref": "#/components/schemas/ListMessagesResponse"}))}},
            "/silent/items": {"get": {
                "operationId": "silent_list_items",
                "parameters": [q("owner", "integer"), q("page", "integer"),
                    {"name": "per_page", "in": "query", "schema": {"type": "integer", "maximum": 10}}],
                "responses": ok(json!({"type": "object", "properties": {
                    "items": {"type": "array", "items": {"type": "object"}}}}))}},
            "/services/data/v59.0/query": {"get": {
                "operationId": "salesforce_query",
                "parameters": [q("q", "string")],
                "responses": ok(json!({"type": "object", "properties": {
                    "totalSize": {"type": "integer"}, "done": {"type": "boolean"},
                    "nextRecordsUrl": {"type": "string"},
                    "records": {"type": "array", "items": {"type": "object"}}}}))}}
        },
        "components": {"schemas": {
            "ListMessagesResponse": {"type": "object", "properties": {
                "messages": {"type": "array", "items": {"$ref": "#/components/schemas/Message"}},
                "nextPageToken": {"type": "string"},
                "resultSizeEstimate": {"type": "integer", "format": "uint32"}}},
            "Message": {"type": "object", "properties": {
                "id": {"type": "string"}, "threadId": {"type": "string"}}}
        }}
    })
}

struct Imported {
    app: TestApp,
    key: String,
    agent: String,
    token: String,
    tools: Vec<Value>,
    seen: Seen,
}

async fn imported() -> Imported {
    let app = spawn_app().await;
    let (base, seen) = start().await;
    let t = app.tenant("shapes").await;
    let provider = app
        .post(
            "/v1/providers",
            &t.key,
            json!({"name": "shapes", "base_url": base, "auth": {"type": "none"}}),
        )
        .await
        .ok(201)["id"]
        .as_str()
        .unwrap()
        .to_string();
    let doc = serde_json::to_vec(&document()).unwrap();
    let path = format!("/v1/providers/{provider}/openapi");
    let r = app.post_raw(&path, &t.key, "application/json", doc).await;
    let tools = r.ok(201)["data"].as_array().unwrap().clone();
    let bindings: Vec<Value> = tools
        .iter()
        .map(|tool| json!({"tool_id": tool["id"], "provider_id": provider, "loop_responses": true}))
        .collect();
    let (agent, token) = app.agent_and_token(&t, bindings, "u1").await;
    Imported {
        app,
        key: t.key.clone(),
        agent,
        token,
        tools,
        seen,
    }
}

impl Imported {
    async fn result(&self, thread: &str, tool: &str, args: Value) -> Value {
        self.app
            .tool_call(&self.agent, &self.token, thread, tool, args)
            .await
            .ok(200)["result"]
            .clone()
    }

    fn tool_id(&self, name: &str) -> String {
        self.tools
            .iter()
            .find(|t| t["name"] == name)
            .and_then(|t| t["id"].as_str())
            .unwrap_or_else(|| panic!("no tool {name}: {:?}", self.tools))
            .to_owned()
    }

    /// Requests the upstream saw since `from`, whose line starts with `prefix`.
    fn requests(&self, from: usize, prefix: &str) -> Vec<String> {
        self.seen.lock().unwrap()[from..]
            .iter()
            .filter(|s| s.starts_with(prefix))
            .cloned()
            .collect()
    }

    fn seen_len(&self) -> usize {
        self.seen.lock().unwrap().len()
    }
}

fn ids(res: &Value, key: &str) -> Vec<String> {
    res["items"]
        .as_array()
        .unwrap_or_else(|| panic!("no items: {res}"))
        .iter()
        .map(|r| {
            r[key]
                .as_str()
                .map(String::from)
                .unwrap_or_else(|| r.to_string())
        })
        .collect()
}

#[tokio::test]
async fn g7_a_list_left_out_of_the_body_is_zero_rows() {
    let im = imported().await;
    let tool = "gmail_list_messages";
    // no match: the body is only `{"resultSizeEstimate": 0}`
    for args in [
        json!({"q": "none", "_fields": ["id"]}),
        json!({"q": "none", "_all_pages": true}),
    ] {
        let res = im.result("g1", tool, args.clone()).await;
        assert_eq!(res["_itemCount"], 0, "{args}: {res}");
        assert_eq!(res["items"], json!([]), "{args}: {res}");
        assert_eq!(res["_pagingComplete"], true, "{args}: {res}");
    }
    // 7 messages at 3 a page, the last page without a token
    let res = im
        .result("g2", tool, json!({"q": "some", "_all_pages": true}))
        .await;
    let want: Vec<String> = (0..7).map(|i| format!("m{i}")).collect();
    assert_eq!(ids(&res, "id"), want, "{res}");
    assert_eq!(res["_pagingComplete"], true, "{res}");
    assert_eq!(res["_total"], 7, "the documented count is the total: {res}");
    // a fan-out over a query with no match adds nothing, and is no error
    let res = im
        .result(
            "g3",
            tool,
            json!({"_all_pages": true, "_for_each": {"key": "q", "values": ["none", "some"]}}),
        )
        .await;
    assert_eq!(ids(&res, "id"), want, "{res}");
    assert!(res.get("_forEachErrors").is_none(), "{res}");
    assert_eq!(res["_pagingComplete"], true, "{res}");
}

#[tokio::test]
async fn p14_a_silent_api_costs_exactly_its_pages_after_its_first_walk() {
    let im = imported().await;
    let tool = "silent_list_items";
    let want = |owner: usize| -> Vec<String> { (0..25).map(|i| format!("o{owner}-{i}")).collect() };
    let before = im.seen_len();
    let res = im
        .result("s1", tool, json!({"owner": 1, "_all_pages": true}))
        .await;
    assert_eq!(ids(&res, "id"), want(1), "{res}");
    assert_eq!(res["_pagingComplete"], true, "{res}");
    assert_eq!(im.requests(before, "silent").len(), 4, "P11's probe, once");
    // any later walk of the tool starts where the first page is
    let before = im.seen_len();
    let res = im
        .result("s2", tool, json!({"owner": 2, "_all_pages": true}))
        .await;
    assert_eq!(ids(&res, "id"), want(2), "{res}");
    assert_eq!(res["_pagingComplete"], true, "{res}");
    let sent = im.requests(before, "silent");
    assert_eq!(sent.len(), 3, "exactly its pages: {sent:?}");
    // shown to people
    let p = im
        .app
        .get(
            &format!("/v1/tools/{}/pagination", im.tool_id(tool)),
            &im.key,
        )
        .await;
    let p = p.ok(200);
    assert_eq!(p["learned"]["pageBase"], 1, "{p}");
    assert!(p["learned_confirmed_at"].is_string(), "{p}");
    assert!(p["learned"]["evidence"][0].is_string(), "{p}");
}

/// E5, P14: 17 values × 3 pages of a silent API within the 60-request budget: the first
/// value pays the probe, the others start where it found the first page.
#[tokio::test]
async fn p14_a_fan_out_of_17_values_of_3_pages_is_complete_within_the_budget() {
    let im = imported().await;
    let before = im.seen_len();
    let owners: Vec<usize> = (1..=17).collect();
    let res = im
        .result(
            "f1",
            "silent_list_items",
            json!({"_all_pages": true, "_for_each": {"key": "owner", "values": owners}}),
        )
        .await;
    assert_eq!(res["_pagingComplete"], true, "{}", res["_note"]);
    assert_eq!(res["_itemCount"], 17 * 25);
    let sent = im.requests(before, "silent");
    assert_eq!(sent.len(), 4 + 16 * 3, "{sent:?}");
}

/// P15: Salesforce's query pages only through `nextRecordsUrl`, a path: imported, its
/// walk follows the links on the provider's origin, exactly.
#[tokio::test]
async fn p15_a_relative_next_records_url_is_walked_exactly() {
    let im = imported().await;
    let res = im
        .result(
            "q1",
            "salesforce_query",
            json!({"q": "SELECT Id FROM Account", "_all_pages": true}),
        )
        .await;
    let want: Vec<String> = (0..ACCOUNTS).map(|i| format!("001{i:03}")).collect();
    assert_eq!(ids(&res, "Id"), want, "{res}");
    assert_eq!(res["_pagingComplete"], true, "{res}");
}

/// P15: the same query as a hand-written tool (no response schema): the first call shows
/// a next link and says how to get the rest; the next `steps` offers `_all_pages`, and
/// the walk is exact.
#[tokio::test]
async fn p15_paging_seen_in_a_response_is_offered_from_the_next_steps_on() {
    let app = spawn_app().await;
    let (base, _seen) = start().await;
    let defs = vec![(
        "soql",
        "GET",
        "/services/data/v59.0/query",
        json!({"type": "object", "properties": {"q": {"type": "string"}}}),
    )];
    let rig = Rig::with_tools(&app, &base, defs, true).await;
    let token = rig.token(&app, "u1", json!({})).await;
    let offered = |steps: &Value| {
        steps["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "soql")
            .cloned()
            .unwrap_or_else(|| panic!("soql not offered: {steps}"))
    };
    let steps = rig.steps(&app, &token, "th").await;
    assert!(
        offered(&steps)["input_schema"]["properties"]
            .get("_all_pages")
            .is_none(),
        "nothing shows paging yet"
    );
    let r = rig
        .call(
            &app,
            &token,
            "th",
            "soql",
            json!({"q": "x", "_fields": ["Id"]}),
        )
        .await;
    let res = r.ok(200)["result"].clone();
    assert_eq!(res["_itemCount"], 4, "{res}");
    assert_eq!(res["_likelyMoreRows"], true, "{res}");
    assert!(
        res["_note"]
            .as_str()
            .unwrap()
            .contains("`_all_pages: true`"),
        "the call that saw it says how to get the rest: {res}"
    );
    let steps = rig.steps(&app, &token, "th2").await;
    assert!(
        offered(&steps)["input_schema"]["properties"]["_all_pages"].is_object(),
        "{steps}"
    );
    let r = rig
        .call(
            &app,
            &token,
            "th2",
            "soql",
            json!({"q": "x", "_all_pages": true}),
        )
        .await;
    let res = r.ok(200)["result"].clone();
    let want: Vec<String> = (0..ACCOUNTS).map(|i| format!("001{i:03}")).collect();
    assert_eq!(ids(&res, "Id"), want, "{res}");
    assert_eq!(res["_pagingComplete"], true, "{res}");
}
