//! P9: walks faster than sequential where the API allows it. An in-test upstream that
//! pages by offset and announces a total (random access) records how many requests it
//! had in flight at once and when each arrived: never more in flight than the walk's
//! concurrency bound, never more in any one-second window than the provider's rate limit
//! allows — counted, never timed — and the rows are every row, in order. Each test sets
//! the upstream's speed and the provider's limit so that the bound it checks is the one
//! that binds (an unbounded walk would break it).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use serde_json::{json, Value};

use crate::support::helpers::spawn_app;
use crate::support::rig::Rig;

const ROWS: usize = 200;
/// The engine's default concurrency bound (`Limits::concurrency`).
const BOUND: usize = 4;
/// The offset walk's provider limit: low enough that the walk, unlimited (4 pages at a
/// time, 100 ms each: 40 a second), would put several times more requests in one second
/// than it allows — the rate assertion can fail.
const RPS: u32 = 5;
const BURST: u32 = 2;
/// The most arrivals any one-second window may see under that limit: the burst, a
/// second's worth of the rate, and one for arrival jitter at the window's edge.
const BUSIEST: usize = (RPS + BURST + 1) as usize;

#[derive(Default)]
struct Seen {
    /// How long each answer takes.
    latency: Duration,
    /// The arrival (1 for the first) that is answered only once another request is in
    /// flight too (waiting 30 s at most): that requests go ahead together is then seen
    /// whatever the machine's pace, not only when they overlap within `latency`.
    meet_at: Option<usize>,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    arrivals: Mutex<Vec<Instant>>,
}

impl Seen {
    /// Counts a request in, after the latency (and for the `meet_at` arrival, once
    /// another one is in flight).
    async fn enter(&self) {
        let arrival = {
            let mut arrivals = self.arrivals.lock().unwrap();
            arrivals.push(Instant::now());
            arrivals.len()
        };
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_in_flight.fetch_max(now, Ordering::SeqCst);
        if self.meet_at == Some(arrival) {
            for _ in 0..3000 {
                if self.in_flight.load(Ordering::SeqCst) >= 2 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
        tokio::time::sleep(self.latency).await;
    }
    fn leave(&self) {
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
    /// The most requests that arrived within any one second.
    fn busiest_second(&self) -> usize {
        let a = self.arrivals.lock().unwrap();
        a.iter()
            .map(|t| {
                a.iter()
                    .filter(|u| **u >= *t && u.duration_since(*t) < Duration::from_secs(1))
                    .count()
            })
            .max()
            .unwrap_or(0)
    }
}

type S = web::Data<Arc<Seen>>;

fn num(req: &HttpRequest, name: &str) -> Option<usize> {
    web::Query::<std::collections::HashMap<String, String>>::from_query(req.query_string())
        .ok()?
        .get(name)?
        .parse()
        .ok()
}

/// The page `offset`/`limit` (at most 10) asks for of `rows` rows, served after the
/// upstream's latency and counted in flight.
async fn page(s: &Seen, req: &HttpRequest, rows: usize) -> Vec<Value> {
    s.enter().await;
    let at = num(req, "offset").unwrap_or(0).min(rows);
    let end = (at + num(req, "limit").unwrap_or(10).min(10)).min(rows);
    s.leave();
    (at..end).map(|i| json!({"id": i})).collect()
}

/// `GET /items?offset=&limit=`: 200 rows, at most 10 a page, with `total`.
async fn items(s: S, req: HttpRequest) -> HttpResponse {
    let data = page(&s, &req, ROWS).await;
    HttpResponse::Ok().json(json!({"data": data, "total": ROWS}))
}

/// Rows of `/linked`: 20 pages of 10, the last one short.
const LINKED_ROWS: usize = 195;

/// `GET /linked?offset=&limit=`: like `/items` but with no total, only an RFC 8288 link to
/// the last page (P9: evidence of random access too).
async fn linked(s: S, req: HttpRequest) -> HttpResponse {
    let data = page(&s, &req, LINKED_ROWS).await;
    HttpResponse::Ok()
        .insert_header((
            "Link",
            r#"</linked?offset=190&limit=10>; rel="last", </linked?offset=0&limit=10>; rel="first""#,
        ))
        .json(json!({ "data": data }))
}

/// `GET /items/{id}`: one row, for fan-out.
async fn one(s: S, id: web::Path<usize>) -> HttpResponse {
    s.enter().await;
    s.leave();
    HttpResponse::Ok().json(json!({"id": *id, "name": format!("item {id}")}))
}

async fn upstream(latency: Duration, meet_at: Option<usize>) -> (String, Arc<Seen>) {
    let seen = Arc::new(Seen {
        latency,
        meet_at,
        ..Seen::default()
    });
    let data = web::Data::new(seen.clone());
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = HttpServer::new(move || {
        App::new()
            .app_data(data.clone())
            .route("/items", web::get().to(items))
            .route("/items/{id}", web::get().to(one))
            .route("/linked", web::get().to(linked))
    })
    .workers(2)
    .listen(listener)
    .unwrap()
    .run();
    tokio::spawn(server);
    (format!("http://127.0.0.1:{port}"), seen)
}

/// The ids of a walk's rows, in order.
fn ids(res: &Value) -> Vec<u64> {
    res["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_u64().unwrap())
        .collect()
}

async fn rig(app: &crate::support::helpers::TestApp, base: &str, rps: u32, burst: u32) -> Rig {
    let defs = vec![
        (
            "list_items",
            "GET",
            "/items",
            json!({"type": "object", "properties": {
                "offset": {"type": "integer"}, "limit": {"type": "integer", "maximum": 10}}}),
        ),
        (
            "list_linked",
            "GET",
            "/linked",
            json!({"type": "object", "properties": {
                "offset": {"type": "integer"}, "limit": {"type": "integer", "maximum": 10}}}),
        ),
        (
            "get_item",
            "GET",
            "/items/{id}",
            json!({"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}),
        ),
    ];
    let rig = Rig::with_tools(app, base, defs, true).await;
    app.patch(
        &format!("/v1/providers/{}", rig.provider),
        &rig.t.key,
        json!({"rate_limit": {"requests_per_second": rps, "burst": burst}}),
    )
    .await
    .ok(200);
    rig
}

/// P9: a 20-page offset walk (the page bound) with a total runs pages concurrently within the bound and
/// the rate limit, and its rows and verdict are a complete walk's.
#[tokio::test]
async fn p9_offset_walk_is_concurrent_within_bound_and_rate_limit() {
    let app = spawn_app().await;
    let (base, seen) = upstream(Duration::from_millis(100), None).await;
    let rig = rig(&app, &base, RPS, BURST).await;
    let token = rig.token(&app, "u1", json!({})).await;
    let r = rig
        .call(&app, &token, "t", "list_items", json!({"_all_pages": true}))
        .await;
    let res = r.ok(200)["result"].clone();
    assert_eq!(res["_pagingComplete"], true, "{}", res["_note"]);
    assert_eq!(res["_stoppedBy"], "end");
    let ids = ids(&res);
    assert_eq!(
        ids,
        (0..ROWS as u64).collect::<Vec<_>>(),
        "every row once, in order"
    );
    let arrivals = seen.arrivals.lock().unwrap().len();
    assert_eq!(arrivals, ROWS / 10, "each page once, nothing wasted");
    let max = seen.max_in_flight.load(Ordering::SeqCst);
    assert!(max <= BOUND, "{max} requests in flight, bound {BOUND}");
    let busiest = seen.busiest_second();
    assert!(
        busiest <= BUSIEST,
        "{busiest} requests in one second, limit {RPS}/s burst {BURST}"
    );
}

/// P9: a last-page link (`Link: <…?offset=190>; rel="last"`) shows random access as a total
/// does: with no total announced, the pages up to it run concurrently within the bound,
/// each once, and the rows and verdict are a complete walk's (the walk still ends on its
/// short last page, not on the link's word).
#[tokio::test]
async fn p9_a_last_page_link_lets_pages_run_concurrently() {
    let app = spawn_app().await;
    // the first page comes alone (it holds the link); the next waits for company
    let (base, seen) = upstream(Duration::from_millis(100), Some(2)).await;
    let rig = rig(&app, &base, 100, BOUND as u32).await;
    let token = rig.token(&app, "u1", json!({})).await;
    let r = rig
        .call(
            &app,
            &token,
            "t",
            "list_linked",
            json!({"_all_pages": true}),
        )
        .await;
    let res = r.ok(200)["result"].clone();
    assert_eq!(res["_pagingComplete"], true, "{}", res["_note"]);
    let ids = ids(&res);
    assert_eq!(ids, (0..LINKED_ROWS as u64).collect::<Vec<_>>());
    let arrivals = seen.arrivals.lock().unwrap().len();
    assert_eq!(arrivals, LINKED_ROWS.div_ceil(10), "each page once");
    let max = seen.max_in_flight.load(Ordering::SeqCst);
    assert!(
        (2..=BOUND).contains(&max),
        "{max} in flight: the pages went ahead, within the bound {BOUND}"
    );
}

/// P9, E5: `_for_each` values are fetched concurrently too, merged in value order.
#[tokio::test]
async fn p9_fan_out_values_are_concurrent_and_merged_in_order() {
    let app = spawn_app().await;
    // a rate that never binds and answers slow enough that, unbounded, all 24 values
    // would be in flight together: the concurrency bound is what holds them
    let (base, seen) = upstream(Duration::from_millis(400), Some(1)).await;
    let rig = rig(&app, &base, 1000, 100).await;
    let token = rig.token(&app, "u1", json!({})).await;
    let values: Vec<u64> = (0..24).rev().collect();
    let r = rig
        .call(
            &app,
            &token,
            "t",
            "get_item",
            json!({"_for_each": {"key": "id", "values": values}}),
        )
        .await;
    let res = r.ok(200)["result"].clone();
    assert_eq!(res["_pagingComplete"], true, "{}", res["_note"]);
    let got = ids(&res);
    assert_eq!(got, values, "rows in the order of the values");
    assert_eq!(seen.arrivals.lock().unwrap().len(), values.len());
    let max = seen.max_in_flight.load(Ordering::SeqCst);
    assert!((2..=BOUND).contains(&max), "{max} in flight, bound {BOUND}");
}

/// P9: the provider's own `concurrency` bounds a walk (1: one page at a time), is read
/// back, can be reset to the default with `null`, and is refused outside 1–32.
#[tokio::test]
async fn p9_provider_concurrency_bounds_the_walk() {
    let app = spawn_app().await;
    // nothing else holds the walk back: without the bound, pages would overlap
    let (base, seen) = upstream(Duration::from_millis(60), None).await;
    let rig = rig(&app, &base, 1000, 100).await;
    let path = format!("/v1/providers/{}", rig.provider);
    for bad in [0, 33] {
        app.patch(&path, &rig.t.key, json!({"concurrency": bad}))
            .await
            .problem(422, "validation_failed");
    }
    let r = app
        .patch(&path, &rig.t.key, json!({"concurrency": 1}))
        .await;
    assert_eq!(r.ok(200)["concurrency"], 1);
    let token = rig.token(&app, "u1", json!({})).await;
    let r = rig
        .call(&app, &token, "t", "list_items", json!({"_all_pages": true}))
        .await;
    let res = r.ok(200)["result"].clone();
    assert_eq!(res["_itemCount"], ROWS, "{}", res["_note"]);
    assert_eq!(
        seen.max_in_flight.load(Ordering::SeqCst),
        1,
        "one page at a time"
    );
    let r = app
        .patch(&path, &rig.t.key, json!({"concurrency": null}))
        .await;
    assert!(
        r.ok(200).get("concurrency").is_none(),
        "back to the default"
    );
}
