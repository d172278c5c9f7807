//! Exact page multiples and opaque offsets end to end (G7, P4, P8): tool calls against
//! in-test upstreams shaped like public APIs — a bookings API whose collections may be
//! empty or an exact multiple of the page size, Airtable's opaque string `offset`, a
//! Twilio-style relative `next_page_uri` on a tool with no paging parameter — compared
//! row by row.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use serde_json::{json, Value};

use crate::support::helpers::{spawn_app, TestApp};
use crate::support::rig::Rig;

/// Bookings per property: 160 (8 full pages of 20), none, 7; properties 100–149 hold 45.
fn bookings_of(property: usize) -> usize {
    match property {
        1 => 160,
        2 => 0,
        3 => 7,
        100..=149 => 45,
        _ => 0,
    }
}

const AIRTABLE_ROWS: usize = 45;

type Seen = Arc<Mutex<Vec<String>>>;

fn q(req: &HttpRequest) -> std::collections::HashMap<String, String> {
    web::Query::<std::collections::HashMap<String, String>>::from_query(req.query_string())
        .map(|q| q.into_inner())
        .unwrap_or_default()
}

fn num(req: &HttpRequest, k: &str, default: usize) -> usize {
    q(req)
        .get(k)
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `GET /bookings?property_id&limit&offset` → `{"bookings": [...]}`, nothing else.
async fn bookings(seen: web::Data<Seen>, req: HttpRequest) -> HttpResponse {
    seen.lock().unwrap().push(req.query_string().to_owned());
    let p = num(&req, "property_id", 0);
    let (limit, at) = (num(&req, "limit", 20).min(20), num(&req, "offset", 0));
    let n = bookings_of(p);
    let rows: Vec<Value> = (at.min(n)..(at + limit).min(n))
        .map(|i| json!({"id": format!("bk-{p}-{i}"), "nights": i % 5 + 1}))
        .collect();
    HttpResponse::Ok().json(json!({"bookings": rows}))
}

/// Airtable: `pageSize` (≤ 20) and an opaque `offset` it hands out only while rows remain;
/// anything else as `offset` is refused.
async fn airtable(seen: web::Data<Seen>, req: HttpRequest) -> HttpResponse {
    seen.lock().unwrap().push(req.query_string().to_owned());
    let at = match q(&req).get("offset") {
        None => 0,
        Some(o) => match o
            .strip_prefix("itr")
            .and_then(|r| r.split('/').next()?.parse().ok())
        {
            Some(at) => at,
            None => {
                return HttpResponse::UnprocessableEntity()
                    .json(json!({"error": {"type": "INVALID_OFFSET_VALUE"}}))
            }
        },
    };
    let end = (at + num(&req, "pageSize", 20).min(20)).min(AIRTABLE_ROWS);
    let rows: Vec<Value> = (at..end)
        .map(|i| json!({"id": format!("rec{i:03}"), "fields": {"Name": format!("row {i}")}}))
        .collect();
    let mut body = json!({"records": rows});
    if end < AIRTABLE_ROWS {
        body["offset"] = json!(format!("itr{end}/rec{end:03}"));
    }
    HttpResponse::Ok().json(body)
}

/// Twilio-like: 50 messages and a relative `next_page_uri`, whatever is asked.
async fn twilio() -> HttpResponse {
    let rows: Vec<Value> = (0..50).map(|i| json!({"sid": format!("SM{i}")})).collect();
    HttpResponse::Ok().json(json!({
        "messages": rows, "page": 0, "page_size": 50,
        "next_page_uri": "/2010-04-01/Accounts/AC1/Messages.json?Page=1&PageSize=50&PageToken=PASM49"
    }))
}

async fn start() -> (String, Seen) {
    let seen: Seen = Arc::new(Mutex::new(Vec::new()));
    let data = web::Data::new(seen.clone());
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let server = HttpServer::new(move || {
        App::new()
            .app_data(data.clone())
            .route("/bookings", web::get().to(bookings))
            .route("/airtable/records", web::get().to(airtable))
            .route("/twilio/messages", web::get().to(twilio))
    })
    .workers(1)
    .listen(listener)
    .unwrap()
    .run();
    tokio::spawn(server);
    (base, seen)
}

struct Apis {
    app: TestApp,
    rig: Rig,
    token: String,
    seen: Seen,
}

async fn apis() -> Apis {
    let app = spawn_app().await;
    let (base, seen) = start().await;
    let defs = vec![
        (
            "list_bookings",
            "GET",
            "/bookings",
            json!({"type": "object", "properties": {"property_id": {"type": "integer"},
                "limit": {"type": "integer", "maximum": 20}, "offset": {"type": "integer"}}}),
        ),
        (
            "airtable_list_records",
            "GET",
            "/airtable/records",
            json!({"type": "object", "properties": {"pageSize": {"type": "integer", "maximum": 20},
                "offset": {"type": "string"}, "view": {"type": "string"}}}),
        ),
        (
            "twilio_list_messages",
            "GET",
            "/twilio/messages",
            json!({"type": "object", "properties": {"To": {"type": "string"}}}),
        ),
    ];
    let rig = Rig::with_tools(&app, &base, defs, true).await;
    let token = rig.token(&app, "u1", json!({})).await;
    Apis {
        app,
        rig,
        token,
        seen,
    }
}

impl Apis {
    async fn result(&self, thread: &str, name: &str, args: Value) -> Value {
        let r = self
            .rig
            .call(&self.app, &self.token, thread, name, args)
            .await;
        r.ok(200)["result"].clone()
    }
}

fn ids(res: &Value) -> Vec<String> {
    res["items"]
        .as_array()
        .unwrap_or_else(|| panic!("no items: {res}"))
        .iter()
        .map(|r| {
            r["id"]
                .as_str()
                .map(String::from)
                .unwrap_or_else(|| r.to_string())
        })
        .collect()
}

fn verdict(res: &Value) -> (Value, Value, Value) {
    (
        res["_stoppedBy"].clone(),
        res["_pagingComplete"].clone(),
        res["_likelyMoreRows"].clone(),
    )
}

#[tokio::test]
async fn exact_g7_empty_collections_and_exact_multiples_add_no_row() {
    let a = apis().await;
    // A property with no bookings: zero rows, and `id` is not "unmatched".
    let res = a
        .result(
            "t1",
            "list_bookings",
            json!({"property_id": 2, "_fields": ["id"]}),
        )
        .await;
    assert_eq!(res["_itemCount"], 0, "{res}");
    assert_eq!(res["items"], json!([]));
    assert!(res.get("_unmatchedFields").is_none(), "{res}");
    // 160 rows at 20 a page: the ninth, empty page adds nothing.
    let res = a
        .result(
            "t1",
            "list_bookings",
            json!({"property_id": 1, "_all_pages": true}),
        )
        .await;
    let want: Vec<String> = (0..160).map(|i| format!("bk-1-{i}")).collect();
    assert_eq!(ids(&res), want);
    assert_eq!(res["_itemCount"], 160);
    assert_eq!(verdict(&res), (json!("end"), json!(true), json!(false)));
    // A fan-out over a full, an empty and a short property.
    let res = a
        .result(
            "t1",
            "list_bookings",
            json!({"_all_pages": true, "_for_each": {"key": "property_id", "values": [1, 2, 3]}}),
        )
        .await;
    let got = ids(&res);
    assert_eq!(got.len(), 167, "{:?}", &got[150..]);
    assert_eq!(got.iter().collect::<HashSet<_>>().len(), 167);
    assert!(
        res.get("_forEachErrors").is_none_or(Value::is_null),
        "{res}"
    );
    assert_eq!(verdict(&res), (json!("end"), json!(true), json!(false)));
    // Read back from the stored result: the same rows, no phantom.
    let stored = a
        .result(
            "t1",
            "queryToolResult",
            json!({"resultId": res["_resultId"], "filter": [{"field": "id", "op": "eq", "value": "bk-2-0"}]}),
        )
        .await;
    assert_eq!(stored["total"], 0, "{stored}");
}

#[tokio::test]
async fn exact_p4_fifty_values_of_three_pages_stop_at_the_request_budget() {
    let a = apis().await;
    let values: Vec<usize> = (100..150).collect();
    let res = a
        .result(
            "t1",
            "list_bookings",
            json!({"_all_pages": true, "_for_each": {"key": "property_id", "values": values}}),
        )
        .await;
    assert_eq!(a.seen.lock().unwrap().len(), 60);
    assert_eq!(res["_itemCount"], 20 * 45);
    assert_eq!(
        verdict(&res),
        (json!("requests"), json!(false), json!(true))
    );
    let note = res["_note"].as_str().unwrap();
    assert!(
        note.contains("30 `_for_each` values were not fetched"),
        "{note}"
    );
}

#[tokio::test]
async fn exact_p8_airtable_string_offset_is_sent_back_as_handed_out() {
    let a = apis().await;
    let res = a
        .result("t1", "airtable_list_records", json!({"_all_pages": true}))
        .await;
    let want: Vec<String> = (0..AIRTABLE_ROWS).map(|i| format!("rec{i:03}")).collect();
    assert_eq!(ids(&res), want, "{res}");
    assert_eq!(verdict(&res), (json!("end"), json!(true), json!(false)));
    let seen = a.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(
        !seen[0].contains("offset"),
        "the first page sends no offset: {seen:?}"
    );
    assert!(seen[1].contains("offset=itr20%2Frec020"), "{seen:?}");
}

#[tokio::test]
async fn exact_p8_a_relative_next_uri_under_any_key_is_never_complete() {
    let a = apis().await;
    let res = a
        .result("t1", "twilio_list_messages", json!({"_fields": ["sid"]}))
        .await;
    assert_eq!(res["_itemCount"], 50);
    assert_eq!(res["_pagingComplete"], false, "{res}");
    assert_eq!(res["_likelyMoreRows"], true, "{res}");
    assert!(
        !res["_note"].as_str().unwrap().contains("Complete result"),
        "{res}"
    );
}
