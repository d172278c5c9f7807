//! P10 end to end: a 9,000-row ledger API walked in three calls through `_continue`, the
//! union read back row by row (and counted with Q1 `aggregate`), and every misuse of a
//! `_continue` refused with a clear problem.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use serde_json::{json, Value};

use crate::support::helpers::{fresh_database, spawn_with_clock, test_settings, Res, TestApp};

const ROWS: u64 = 9_000;

/// `GET /ledger?page=&per_page=` (at most 150 a page), announcing its total.
async fn ledger(hits: web::Data<Arc<AtomicU32>>, req: HttpRequest) -> HttpResponse {
    hits.fetch_add(1, Ordering::SeqCst);
    let q = web::Query::<std::collections::HashMap<String, String>>::from_query(req.query_string())
        .map(|q| q.into_inner())
        .unwrap_or_default();
    let num = |k: &str, d: u64| q.get(k).and_then(|v| v.parse().ok()).unwrap_or(d);
    let per = num("per_page", 50).min(150);
    let page = num("page", 1).max(1);
    let start = ((page - 1) * per).min(ROWS);
    let rows: Vec<Value> = (start..(start + per).min(ROWS))
        .map(|i| json!({"id": i, "amount": i % 100, "memo": format!("entry {i}")}))
        .collect();
    HttpResponse::Ok().json(json!({"entries": rows, "total": ROWS}))
}

struct Ledger {
    app: TestApp,
    clock: Arc<loopgate::results::wall_clock::ManualClock>,
    hits: Arc<AtomicU32>,
    agent: String,
    token: String,
}

impl Ledger {
    async fn start() -> Ledger {
        let hits = Arc::new(AtomicU32::new(0));
        let data = web::Data::new(hits.clone());
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        let server = HttpServer::new(move || {
            App::new()
                .app_data(data.clone())
                .route("/ledger", web::get().to(ledger))
        })
        .listen(listener)
        .unwrap()
        .workers(1)
        .run();
        tokio::spawn(server);
        let clock = Arc::new(loopgate::results::wall_clock::ManualClock::default());
        let app = spawn_with_clock(test_settings(fresh_database().await), clock.clone()).await;
        let t = app.tenant("ledger").await;
        let provider = app
            .post(
                "/v1/providers",
                &t.key,
                json!({"name": "ledger", "base_url": base, "auth": {"type": "none"}}),
            )
            .await
            .ok(201)["id"]
            .as_str()
            .unwrap()
            .to_string();
        let tool = app
            .post("/v1/tools", &t.key, json!({"provider_id": provider, "name": "list_entries", "method": "GET", "path": "/ledger",
                "input_schema": {"type": "object", "properties": {
                    "page": {"type": "integer"}, "per_page": {"type": "integer", "maximum": 150}, "memo": {"type": "string"}}}}))
            .await
            .ok(201)["id"]
            .as_str()
            .unwrap()
            .to_string();
        let agent = app
            .post("/v1/agents", &t.key, json!({"name": "books", "deployment_id": t.deployment,
                "agentTools": [{"tool_id": tool, "provider_id": provider, "loop_responses": true}]}))
            .await
            .ok(201)["id"]
            .as_str()
            .unwrap()
            .to_string();
        let token = app
            .post(
                "/v1/runtime-tokens",
                &t.key,
                json!({"user_id": "u1", "agent_id": agent}),
            )
            .await
            .ok(201)["token"]
            .as_str()
            .unwrap()
            .to_string();
        Ledger {
            app,
            clock,
            hits,
            agent,
            token,
        }
    }

    async fn call(&self, thread: &str, name: &str, args: Value) -> Res {
        self.app
            .post(
                &format!("/v1/agents/{}/threads/{thread}/tool-calls", self.agent),
                &self.token,
                json!({"name": name, "arguments": args}),
            )
            .await
    }

    /// Q1 over the stored result (which also reads a cut result, lifting G5).
    async fn count(&self, thread: &str, rid: &str) -> Value {
        self.call(
            thread,
            "queryToolResult",
            json!({"resultId": rid, "aggregate": {"count": true}}),
        )
        .await
        .ok(200)["result"]
            .clone()
    }
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

#[tokio::test]
async fn p10_a_9000_row_walk_finishes_in_three_calls_into_one_result() {
    let l = Ledger::start().await;
    let first = l
        .call(
            "t",
            "list_entries",
            json!({"_all_pages": true, "_fields": ["id"]}),
        )
        .await;
    let r1 = first.ok(200)["result"].clone();
    assert_eq!(
        (
            &r1["_itemCount"],
            &r1["_pagingComplete"],
            &r1["_likelyMoreRows"],
            &r1["_stoppedBy"],
            &r1["_total"]
        ),
        (
            &json!(3000),
            &json!(false),
            &json!(true),
            &json!("pages"),
            &json!(ROWS)
        ),
        "{}",
        r1["_note"]
    );
    assert!(
        text(&r1["_note"]).contains("`_continue`"),
        "{}",
        r1["_note"]
    );
    let rid = text(&r1["_resultId"]).to_string();
    let c1 = text(&r1["_continue"]).to_string();
    assert!(c1.starts_with("cont_") && c1.len() > 30, "{r1:.300}");
    let partial = l.count("t", &rid).await;
    assert_eq!(
        (&partial["aggregates"]["count"], &partial["sound"]),
        (&json!(3000), &json!(false))
    );

    // the same arguments plus `_continue`: the same result grows
    let r2 = l
        .call(
            "t",
            "list_entries",
            json!({"_all_pages": true, "_fields": ["id"], "_continue": c1}),
        )
        .await
        .ok(200)["result"]
        .clone();
    assert_eq!(text(&r2["_resultId"]), rid);
    assert_eq!(
        (&r2["_itemCount"], &r2["_pagingComplete"], &r2["_stoppedBy"]),
        (&json!(6000), &json!(false), &json!("pages"))
    );
    assert!(
        text(&r2["_note"]).contains("6000 of the 9000"),
        "{}",
        r2["_note"]
    );
    let c2 = text(&r2["_continue"]).to_string();
    assert_ne!(c2, c1);
    assert_eq!(l.count("t", &rid).await["aggregates"]["count"], 6000);

    // `_continue` alone resumes the same walk
    let r3 = l
        .call("t", "list_entries", json!({"_continue": c2}))
        .await
        .ok(200)["result"]
        .clone();
    assert_eq!(text(&r3["_resultId"]), rid);
    assert_eq!(
        (
            &r3["_itemCount"],
            &r3["_pagingComplete"],
            &r3["_likelyMoreRows"],
            &r3["_stoppedBy"]
        ),
        (&json!(ROWS), &json!(true), &json!(false), &json!("end")),
        "{}",
        r3["_note"]
    );
    assert!(r3.get("_continue").is_none());
    let whole = l.count("t", &rid).await;
    assert_eq!(
        (&whole["aggregates"]["count"], &whole["sound"]),
        (&json!(ROWS), &json!(true))
    );
    // the third call named no `_fields`: the rows it shows keep the first call's
    // projection (the stored result keeps whole rows; `_fields` shapes what is shown)
    let shown = r3
        .as_object()
        .unwrap()
        .values()
        .find_map(|v| {
            v.as_array()
                .filter(|a| a.first().is_some_and(|x| x.get("id").is_some()))
        })
        .expect("the resumed call shows rows");
    for row in shown {
        let keys: Vec<&String> = row.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            ["id"],
            "a resumed row is projected as the walk began: {row}"
        );
    }
    // every page fetched once, and page 1 once more: the first call's first request
    // leaves the page number out, as the schema says nothing of the first page (P11)
    assert_eq!(l.hits.load(Ordering::SeqCst), 61, "every page fetched once");

    // the union, row by row: every id once, in order
    let mut ids: Vec<u64> = Vec::new();
    while (ids.len() as u64) < ROWS {
        let page = l
            .call(
                "t",
                "queryToolResult",
                json!({"resultId": rid, "fields": ["id"], "offset": ids.len(), "limit": 2000}),
            )
            .await
            .ok(200)["result"]
            .clone();
        let got: Vec<u64> = page["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_u64().unwrap())
            .collect();
        assert!(!got.is_empty());
        ids.extend(got);
    }
    assert_eq!(ids, (0..ROWS).collect::<Vec<_>>());
}

#[tokio::test]
async fn p10_misused_continue_is_a_clear_problem() {
    let l = Ledger::start().await;
    let r = l
        .call(
            "t",
            "list_entries",
            json!({"_all_pages": true, "_fields": ["id"]}),
        )
        .await
        .ok(200)["result"]
        .clone();
    let c = text(&r["_continue"]).to_string();
    let rid = text(&r["_resultId"]).to_string();
    l.count("t", &rid).await;

    let tampered = l
        .call("t", "list_entries", json!({"_continue": format!("{c}x")}))
        .await;
    tampered.problem(400, "invalid_arguments");
    assert!(text(&tampered.body["detail"]).contains("`_continue`"));
    // another thread (or caller, or org) does not hold it
    l.call("other", "list_entries", json!({"_continue": c}))
        .await
        .problem(400, "invalid_arguments");
    // other arguments are another walk
    let other = l
        .call(
            "t",
            "list_entries",
            json!({"_all_pages": true, "memo": "x", "_continue": c}),
        )
        .await;
    other.problem(400, "invalid_arguments");
    assert!(
        text(&other.body["detail"]).contains("other arguments"),
        "{}",
        other.text
    );
    assert!(l
        .call("t", "list_entries", json!({"_continue": 7}))
        .await
        .status
        .is_client_error());
    // the first call's 20 pages and its request without the page number (P11)
    assert_eq!(
        l.hits.load(Ordering::SeqCst),
        21,
        "no misuse reached the API"
    );

    // used once: the next call has its own `_continue`, the old one is spent
    let next = l
        .call("t", "list_entries", json!({"_continue": c}))
        .await
        .ok(200)["result"]
        .clone();
    assert_eq!(next["_itemCount"], 6000);
    l.count("t", &rid).await;
    let again = l.call("t", "list_entries", json!({"_continue": c})).await;
    again.problem(400, "invalid_arguments");
    assert!(text(&again.body["detail"]).contains("already used"));

    // valid as long as its stored result
    l.clock.advance(Duration::from_secs(16 * 60));
    let late = l
        .call(
            "t",
            "list_entries",
            json!({"_continue": text(&next["_continue"])}),
        )
        .await;
    late.problem(410, "result_expired");
    // two calls of 20 pages, and the first call's request without the page number (P11)
    assert_eq!(l.hits.load(Ordering::SeqCst), 41);
}
