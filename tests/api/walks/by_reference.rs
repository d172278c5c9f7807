//! E6 end to end: 2,000 customers listed into a cut result, then each customer's bookings
//! fetched by reference — `_for_each.values` as `{"fromResult", "path"}` — continued with
//! `_continue` 50 values a call into one `_resultId`, compared row by row with what the
//! upstream holds; G5 satisfied by handing the cut result on; foreign, other-org, expired
//! and malformed references refused with their codes; a scalar argument by reference; and
//! a workflow step fanning out over an earlier step's rows past 50 values.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use deadpool_redis::redis;
use serde_json::{json, Value};

use crate::support::helpers::{fresh_database, scan_keys, spawn_with, test_settings, Res, TestApp};
use crate::support::services;

const CUSTOMERS: usize = 2_000;

fn customer_id(i: usize) -> String {
    format!("cus_{i:04}")
}

/// The upstream's bookings of one customer: one or two, by the customer's number.
fn bookings_of(cid: &str) -> Vec<Value> {
    let n: usize = cid.trim_start_matches("cus_").parse().unwrap_or(0);
    (0..1 + n % 2)
        .map(|k| json!({"id": format!("bk_{n:04}_{k}"), "customer_id": cid, "nights": 1 + (n + k) % 7}))
        .collect()
}

fn query(req: &HttpRequest) -> std::collections::HashMap<String, String> {
    web::Query::<std::collections::HashMap<String, String>>::from_query(req.query_string())
        .map(|q| q.into_inner())
        .unwrap_or_default()
}

/// `GET /customers?page=&per_page=` (at most 500 a page), announcing its total.
async fn customers(req: HttpRequest) -> HttpResponse {
    let q = query(&req);
    let num = |k: &str, d: usize| q.get(k).and_then(|v| v.parse().ok()).unwrap_or(d);
    let per = num("per_page", 50).min(500);
    let page = num("page", 1).max(1);
    let start = ((page - 1) * per).min(CUSTOMERS);
    let rows: Vec<Value> = (start..(start + per).min(CUSTOMERS))
        .map(|i| json!({"id": customer_id(i), "name": format!("Customer {i}"), "vip": i % 10 == 0}))
        .collect();
    HttpResponse::Ok().json(json!({"customers": rows, "total": CUSTOMERS}))
}

/// `GET /bookings?customer_id=`: that customer's bookings.
async fn bookings(hits: web::Data<Arc<AtomicU32>>, req: HttpRequest) -> HttpResponse {
    hits.fetch_add(1, Ordering::SeqCst);
    let cid = query(&req).get("customer_id").cloned().unwrap_or_default();
    HttpResponse::Ok().json(json!({"bookings": bookings_of(&cid)}))
}

struct Hotel {
    app: TestApp,
    hits: Arc<AtomicU32>,
    base: String,
    key: String,
    deployment: String,
    agent: String,
    token: String,
}

impl Hotel {
    async fn start() -> Hotel {
        let hits = Arc::new(AtomicU32::new(0));
        let data = web::Data::new(hits.clone());
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        let server = HttpServer::new(move || {
            App::new()
                .app_data(data.clone())
                .route("/customers", web::get().to(customers))
                .route("/bookings", web::get().to(bookings))
        })
        .listen(listener)
        .unwrap()
        .workers(2)
        .run();
        tokio::spawn(server);
        let app = spawn_with(test_settings(fresh_database().await)).await;
        let mut h = Hotel {
            app,
            hits,
            base,
            key: String::new(),
            deployment: String::new(),
            agent: String::new(),
            token: String::new(),
        };
        (h.key, h.deployment, h.agent, h.token) = h.tenant("hotel").await;
        h
    }

    /// An org with the two tools bound (looping on) to an agent, and a runtime token.
    async fn tenant(&self, name: &str) -> (String, String, String, String) {
        let t = self.app.tenant(name).await;
        let provider = self
            .app
            .post(
                "/v1/providers",
                &t.key,
                json!({"name": "hotel", "base_url": self.base, "auth": {"type": "none"}}),
            )
            .await
            .ok(201)["id"]
            .as_str()
            .unwrap()
            .to_string();
        let tool = |name: &str, path: &str, props: Value| {
            json!({"provider_id": provider, "name": name, "description": format!("List {name}"),
                "method": "GET", "path": path, "input_schema": {"type": "object", "properties": props}})
        };
        let list = tool(
            "list_customers",
            "/customers",
            json!({"page": {"type": "integer", "minimum": 1}, "per_page": {"type": "integer", "maximum": 500}}),
        );
        let each = tool(
            "list_bookings",
            "/bookings",
            json!({"customer_id": {"type": "string"}}),
        );
        let mut bindings = Vec::new();
        for def in [list, each] {
            let id = self.app.post("/v1/tools", &t.key, def).await.ok(201)["id"]
                .as_str()
                .unwrap()
                .to_string();
            bindings.push(json!({"tool_id": id, "provider_id": provider, "loop_responses": true}));
        }
        let (agent, token) = self.app.agent_and_token(&t, bindings, "u1").await;
        (t.key, t.deployment, agent, token)
    }

    async fn call_as(
        &self,
        agent: &str,
        token: &str,
        thread: &str,
        name: &str,
        args: Value,
    ) -> Res {
        self.app.tool_call(agent, token, thread, name, args).await
    }

    async fn call(&self, thread: &str, name: &str, args: Value) -> Res {
        self.call_as(&self.agent, &self.token, thread, name, args)
            .await
    }

    async fn steps(&self, thread: &str) -> Value {
        self.app
            .post(
                &format!("/v1/agents/{}/threads/{thread}/steps", self.agent),
                &self.token,
                json!({}),
            )
            .await
            .ok(200)
            .clone()
    }

    /// The 2,000 customers, walked into one cut result; its `_resultId`.
    async fn customers(&self, thread: &str) -> String {
        let r = self
            .call(thread, "list_customers", json!({"_all_pages": true}))
            .await
            .ok(200)["result"]
            .clone();
        assert_eq!(
            (&r["_itemCount"], &r["_pagingComplete"], &r["_truncated"]),
            (&json!(CUSTOMERS), &json!(true), &json!(true)),
            "{}",
            r["_note"]
        );
        // G3: the cut result's note says it can be passed by reference
        assert!(
            text(&r["_note"]).contains("\"fromResult\""),
            "{}",
            r["_note"]
        );
        text(&r["_resultId"]).to_string()
    }
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

/// E6, P10, G5, Q2: a 2,000-row cut result fanned out by reference over 40 calls, exact.
#[tokio::test]
async fn e6_a_2000_row_cut_result_fans_out_by_reference_across_calls() {
    let h = Hotel::start().await;
    let rid = h.customers("t").await;
    // G5: the cut result restricts the thread to the retrieval tools...
    assert_eq!(h.steps("t").await["restricted"], true);
    let by_ref = json!({"fromResult": rid, "path": "id"});
    // ... unless the call hands that very result on: reading it by reference counts
    let first = h
        .call(
            "t",
            "list_bookings",
            json!({"_for_each": {"key": "customer_id", "values": by_ref}, "_fields": ["id", "customer_id"]}),
        )
        .await;
    let r = first.ok(200)["result"].clone();
    assert_eq!(
        h.steps("t").await["restricted"],
        false,
        "the result was read"
    );
    assert_eq!(
        (
            &r["_stoppedBy"],
            &r["_pagingComplete"],
            &r["_forEachValues"]
        ),
        (
            &json!("values"),
            &json!(false),
            &json!({"total": CUSTOMERS, "done": 50, "left": CUSTOMERS - 50})
        ),
        "{}",
        r["_note"]
    );
    assert!(
        text(&r["_note"]).contains("1950 `_for_each` values are left"),
        "{}",
        r["_note"]
    );
    assert_eq!(h.hits.load(Ordering::SeqCst), 50, "50 values a call");
    // the rows wait in the stored result until the last value: counted, not shown
    let so_far: usize = (0..50).map(|i| bookings_of(&customer_id(i)).len()).sum();
    assert_eq!(
        (&r["_itemCount"], &r["_itemsShown"], &r["items"]),
        (&json!(so_far), &json!(0), &json!([]))
    );
    assert_eq!(
        r["_truncated"],
        Value::Null,
        "nothing was cut: G5 stays clear"
    );
    let bid = text(&r["_resultId"]).to_string();
    // Q2: the union so far is a partial set, and says why
    let partial = h
        .call(
            "t",
            "queryToolResult",
            json!({"resultId": bid, "aggregate": {"count": true}}),
        )
        .await
        .ok(200)["result"]
        .clone();
    assert_eq!(
        (&partial["aggregates"]["count"], &partial["sound"]),
        (&json!(so_far), &json!(false))
    );
    assert!(
        text(&partial["note"]).contains("`_for_each` values were fetched so far"),
        "{}",
        partial["note"]
    );
    let mut cont = text(&r["_continue"]).to_string();
    let mut calls = 1;
    let mut last = r;
    // P10: `_continue` alone, value by value, into the same `_resultId`
    while !cont.is_empty() {
        last = h
            .call("t", "list_bookings", json!({"_continue": cont}))
            .await
            .ok(200)["result"]
            .clone();
        calls += 1;
        assert_eq!(text(&last["_resultId"]), bid);
        let done = last["_forEachValues"]["done"].as_u64().unwrap() as usize;
        assert_eq!(done, (50 * calls).min(CUSTOMERS), "{}", last["_note"]);
        assert_eq!(
            last["_forEachValues"]["left"].as_u64().unwrap() as usize,
            CUSTOMERS - done
        );
        cont = text(&last["_continue"]).to_string();
        assert!(calls <= 40, "at most 2000 / 50 calls");
    }
    assert_eq!(calls, 40);
    let want: Vec<Value> = (0..CUSTOMERS)
        .flat_map(|i| bookings_of(&customer_id(i)))
        .collect();
    assert_eq!(
        (
            &last["_pagingComplete"],
            &last["_stoppedBy"],
            &last["_itemCount"]
        ),
        (&json!(true), &json!("end"), &json!(want.len())),
        "{}",
        last["_note"]
    );
    assert_eq!(
        h.hits.load(Ordering::SeqCst) as usize,
        CUSTOMERS,
        "each customer fetched once"
    );
    // the union, row by row against the upstream's own data, in order
    let mut got: Vec<Value> = Vec::new();
    loop {
        let page = h
            .call(
                "t",
                "queryToolResult",
                json!({"resultId": bid, "offset": got.len(), "limit": 1000}),
            )
            .await
            .ok(200)["result"]
            .clone();
        let rows = page["items"].as_array().unwrap().clone();
        assert!(!rows.is_empty() || page["has_more"] == false);
        got.extend(rows);
        if page["has_more"] == false {
            break;
        }
    }
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g, w, "every stored row is the upstream's own");
    }
    let sound = h
        .call(
            "t",
            "queryToolResult",
            json!({"resultId": bid, "aggregate": {"count": true}}),
        )
        .await
        .ok(200)["result"]
        .clone();
    assert_eq!(
        (&sound["aggregates"]["count"], &sound["sound"]),
        (&json!(want.len()), &json!(true))
    );
}

/// G6 through E6: only the thread's own, live result can be referenced; a bad path or
/// filter is a 400 that says what to fix, and none of them reaches the API.
#[tokio::test]
async fn e6_foreign_expired_and_malformed_references_are_refused() {
    let h = Hotel::start().await;
    let rid = h.customers("t").await;
    let fan = |values: Value| json!({"_for_each": {"key": "customer_id", "values": values}});
    // another thread of the same caller
    h.call(
        "other",
        "list_bookings",
        fan(json!({"fromResult": rid, "path": "id"})),
    )
    .await
    .problem(404, "result_not_found");
    // another org, holding the same tools
    let (_, _, agent_b, token_b) = h.tenant("elsewhere").await;
    h.call_as(
        &agent_b,
        &token_b,
        "t",
        "list_bookings",
        fan(json!({"fromResult": rid, "path": "id"})),
    )
    .await
    .problem(404, "result_not_found");
    // malformed references
    for (bad, needle) in [
        (json!({"fromResult": rid, "path": "ident"}), "id, name, vip"),
        (
            json!({"fromResult": rid, "path": "customers[*].id"}),
            "dot-path",
        ),
        (
            json!({"fromResult": rid, "path": "id", "filter": {"field": "vip", "op": "like", "value": 1}}),
            "op",
        ),
        (
            json!({"fromResult": rid, "path": "id", "filter": {"field": "name", "op": "eq", "value": "nobody"}}),
            "kept none of the 2000 rows",
        ),
        (json!({"fromResult": rid}), "`path` is missing"),
    ] {
        let r = h.call("t", "list_bookings", fan(bad.clone())).await;
        r.problem(400, "invalid_arguments");
        assert!(
            text(&r.body["detail"]).contains(needle),
            "{bad}: {}",
            r.text
        );
    }
    // a scalar argument takes exactly one value
    let many = h
        .call(
            "t",
            "list_bookings",
            json!({"customer_id": {"fromResult": rid, "path": "id"}}),
        )
        .await;
    many.problem(400, "invalid_arguments");
    assert!(
        text(&many.body["detail"]).contains("takes one value"),
        "{}",
        many.text
    );
    assert_eq!(
        h.hits.load(Ordering::SeqCst),
        0,
        "no refused call reached the API"
    );
    let one = h
        .call(
            "t",
            "list_bookings",
            json!({"customer_id": {"fromResult": rid, "path": "id",
                "filter": {"field": "id", "op": "eq", "value": "cus_0007"}}}),
        )
        .await
        .ok(200)["result"]
        .clone();
    assert_eq!(one["bookings"], json!(bookings_of("cus_0007")));
    assert_eq!(h.hits.load(Ordering::SeqCst), 1);
    // a filtered fan-out under the per-call bound completes in one call
    let vip = h
        .call(
            "t",
            "list_bookings",
            json!({"_for_each": {"key": "customer_id", "values": {"fromResult": rid, "path": "id",
                "filter": [{"field": "vip", "op": "eq", "value": true}, {"field": "id", "op": "lt", "value": "cus_0400"}]}}}),
        )
        .await
        .ok(200)["result"]
        .clone();
    assert_eq!(
        (&vip["_pagingComplete"], &vip["_forEachValues"]),
        (&json!(true), &json!({"total": 40, "done": 40, "left": 0})),
        "{}",
        vip["_note"]
    );
    assert!(vip.get("_continue").is_none());

    // expired: the stored text is gone and its marker says it was there (as when Redis
    // lets the key's TTL run out)
    let Some(url) = services::shared_redis_url() else {
        return;
    };
    let mut conn = redis::Client::open(url)
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let keys: Vec<String> = scan_keys(&mut conn).await;
    let gone: Vec<&String> = keys
        .iter()
        .filter(|k| k.ends_with(&format!(":res:{rid}")))
        .collect();
    assert_eq!(gone.len(), 1, "{gone:?}");
    let _: () = redis::cmd("DEL")
        .arg(gone[0])
        .query_async(&mut conn)
        .await
        .unwrap();
    h.call(
        "t",
        "list_bookings",
        fan(json!({"fromResult": rid, "path": "id"})),
    )
    .await
    .problem(410, "result_expired");
    assert_eq!(h.hits.load(Ordering::SeqCst), 41);
}

/// E6 in a workflow: `for_each.values` names an earlier step; its 200 VIP rows are
/// fanned out within the step, past the 50 values of one call.
#[tokio::test]
async fn e6_a_workflow_step_fans_out_over_an_earlier_steps_rows() {
    let h = Hotel::start().await;
    let wf = h
        .app
        .post(
            "/v1/workflows",
            &h.key,
            json!({"name": "vip bookings", "agent_id": h.agent, "steps": [
                {"id": "list", "type": "tool", "tool": "list_customers", "input": {},
                 "loop": {"all_pages": true}},
                {"id": "each", "type": "tool", "tool": "list_bookings", "input": {},
                 "loop": {"for_each": {"key": "customer_id", "values": {"fromResult": "list", "path": "id",
                     "filter": {"field": "vip", "op": "eq", "value": true}}}}}
            ]}),
        )
        .await
        .ok(201)["id"]
        .as_str()
        .unwrap()
        .to_string();
    let run = h
        .app
        .post(&format!("/v1/workflows/{wf}/runs"), &h.token, json!({}))
        .await
        .ok(201)
        .clone();
    assert_eq!(run["status"], "succeeded", "{run}");
    let each = &run["steps"]["each"];
    let want: Vec<Value> = (0..CUSTOMERS)
        .filter(|i| i % 10 == 0)
        .flat_map(|i| bookings_of(&customer_id(i)))
        .collect();
    assert_eq!(each["_loop"]["complete"], true, "{}", each["_loop"]);
    assert_eq!(each["bookings"], json!(want));
    assert_eq!(h.hits.load(Ordering::SeqCst), 200, "each VIP once");
    let _ = &h.deployment;
}

/// G1's rule: a token is three bytes of compact JSON, rounded up.
fn tokens(bytes: usize) -> usize {
    bytes.div_ceil(3)
}

/// What an agent sends and reads.
#[derive(Default)]
struct Tally {
    calls: usize,
    sent: usize,
    read: usize,
}

impl Tally {
    async fn call(&mut self, h: &Hotel, thread: &str, name: &str, args: Value) -> Value {
        self.calls += 1;
        self.sent += tokens(args.to_string().len());
        let r = h.call(thread, name, args).await;
        let result = r.ok(200)["result"].clone();
        self.read += tokens(result.to_string().len());
        result
    }

    /// Reads the rows of a stored result from `from` on with queryToolResult, 1,000 a
    /// call; the rows read, counting the `from` already shown.
    async fn read_from(
        &mut self,
        h: &Hotel,
        thread: &str,
        rid: &str,
        fields: Value,
        from: usize,
    ) -> usize {
        let mut rows = from;
        loop {
            let page = self
                .call(
                    h,
                    thread,
                    "queryToolResult",
                    json!({"resultId": rid, "fields": fields, "offset": rows, "limit": 1000}),
                )
                .await;
            rows += page["items"].as_array().map_or(0, Vec::len);
            if page["has_more"] != true {
                return rows;
            }
        }
    }
}

/// E6 measured (docs/performance.md): the tokens an agent sends and reads, and the calls
/// it makes, to fetch the bookings of 2,000 customers by copying the ids versus by
/// reference. `cargo test --test api e6_measure -- --ignored --nocapture`
#[tokio::test]
#[ignore = "a measurement: prints the figures of docs/performance.md"]
async fn e6_measure_copying_versus_reference() {
    let h = Hotel::start().await;
    let fields = json!(["id", "customer_id"]);
    // by copying: read the ids back, then send them 50 a call
    let rid = h.customers("copy").await;
    let mut copy = Tally::default();
    let mut ids: Vec<Value> = Vec::new();
    while ids.len() < CUSTOMERS {
        let page = copy
            .call(
                &h,
                "copy",
                "queryToolResult",
                json!({"resultId": rid, "fields": ["id"], "offset": ids.len(), "limit": 1000}),
            )
            .await;
        ids.extend(
            page["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["id"].clone()),
        );
    }
    let (id_calls, id_sent, id_read) = (copy.calls, copy.sent, copy.read);
    let mut rows = 0;
    for chunk in ids.chunks(50) {
        let r = copy
            .call(
                &h,
                "copy",
                "list_bookings",
                json!({"_for_each": {"key": "customer_id", "values": chunk}, "_fields": fields}),
            )
            .await;
        rows += r["items"].as_array().map_or(0, Vec::len);
        assert_eq!(r["_truncated"], Value::Null, "each call's rows shown whole");
    }
    // by reference: one call, continued, then the one stored result read
    let rid = h.customers("ref").await;
    let mut by_ref = Tally::default();
    let mut r = by_ref
        .call(
            &h,
            "ref",
            "list_bookings",
            json!({"_for_each": {"key": "customer_id", "values": {"fromResult": rid, "path": "id"}},
                   "_fields": fields}),
        )
        .await;
    while let Some(c) = r["_continue"].as_str().map(str::to_owned) {
        r = by_ref
            .call(&h, "ref", "list_bookings", json!({"_continue": c}))
            .await;
    }
    let (fan_calls, fan_sent, fan_read) = (by_ref.calls, by_ref.sent, by_ref.read);
    let bid = text(&r["_resultId"]).to_string();
    // the last call shows the union cut to the budget: the rest is read from there on
    let shown = r["_itemsShown"].as_u64().map_or(rows, |n| n as usize);
    let read_back = by_ref.read_from(&h, "ref", &bid, fields, shown).await;
    assert_eq!(read_back, rows, "the same rows either way");
    println!("E6 measure: {CUSTOMERS} customers, {rows} booking rows, tokens = ceil(bytes / 3)");
    println!("| | calls | tokens sent | tokens read |");
    println!("|---|---|---|---|");
    println!("| copying: read the ids back | {id_calls} | {id_sent} | {id_read} |");
    println!(
        "| copying: 50 ids a call | {} | {} | {} |",
        copy.calls - id_calls,
        copy.sent - id_sent,
        copy.read - id_read
    );
    println!(
        "| copying: total | {} | {} | {} |",
        copy.calls, copy.sent, copy.read
    );
    println!("| by reference: fan-out with `_continue` | {fan_calls} | {fan_sent} | {fan_read} |");
    println!(
        "| by reference: the rows read back | {} | {} | {} |",
        by_ref.calls - fan_calls,
        by_ref.sent - fan_sent,
        by_ref.read - fan_read
    );
    println!(
        "| by reference: total | {} | {} | {} |",
        by_ref.calls, by_ref.sent, by_ref.read
    );
}
