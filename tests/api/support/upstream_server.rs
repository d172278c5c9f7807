//! In-test upstream APIs that paginate the way real ones do: by page number, by
//! offset, inside a JSON request body; one huge unpaginated list; a flaky endpoint;
//! and one that enforces its own rate limit and counts violations.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use serde_json::{json, Value};

#[derive(Default)]
pub struct Stats {
    pub requests: HashMap<String, u32>,
    pub last_auth: Option<String>,
    pub last_query: Option<String>,
    pub rate_violations: u32,
    pub rate_window: Vec<Instant>,
    pub flaky_seen: HashMap<String, u32>,
    /// When each `/limited` request arrived (all of them).
    pub limited_log: Vec<Instant>,
}

pub struct Upstream {
    pub base: String,
    pub stats: Arc<Mutex<Stats>>,
}

impl Upstream {
    pub fn count(&self, path: &str) -> u32 {
        self.stats
            .lock()
            .unwrap()
            .requests
            .get(path)
            .copied()
            .unwrap_or(0)
    }
    pub fn total(&self) -> u32 {
        self.stats.lock().unwrap().requests.values().sum()
    }
}

type S = web::Data<Arc<Mutex<Stats>>>;

fn seen(s: &S, req: &HttpRequest) {
    let mut st = s.lock().unwrap();
    *st.requests.entry(req.path().to_string()).or_default() += 1;
    st.last_auth = req
        .headers()
        .get("authorization")
        .or_else(|| req.headers().get("x-api-key"))
        .and_then(|v| v.to_str().ok())
        .map(String::from);
    st.last_query = Some(req.query_string().to_string());
}

pub fn contact(i: usize) -> Value {
    json!({"id": i, "name": format!("Contact {i}"), "email": format!("c{i}@example.com"),
           "company": {"name": format!("Co {}", i % 7), "size": i % 500}, "tags": if i.is_multiple_of(2) { json!(["vip"]) } else { json!(["lead", "cold"]) }})
}

pub fn inbox(i: usize) -> Value {
    json!({
        "inbox_id": format!("inb_{i:06}_a1HjMJs44WShWc3CpEeI"),
        "email": format!("agent-task-{i}@inbox.example.com"),
        "display_name": format!("Task inbox number {i} for the automated pipeline"),
        "created_at": "2026-10-01T12:00:00Z", "updated_at": "2026-10-02T08:30:00Z",
        "client_id": format!("cli_{:08x}", i * 2654435761usize % 4294967291),
        "pod_id": "pod_default", "labels": ["task", "auto"]
    })
}

fn q(req: &HttpRequest) -> HashMap<String, String> {
    web::Query::<HashMap<String, String>>::from_query(req.query_string())
        .map(|q| q.into_inner())
        .unwrap_or_default()
}

fn num(m: &HashMap<String, String>, k: &str, d: usize) -> usize {
    m.get(k).and_then(|v| v.parse().ok()).unwrap_or(d)
}

pub const CONTACTS: usize = 237;
pub const ORDERS: usize = 412;
pub const INBOXES: usize = 3219;

/// `GET /contacts?page=&per_page=` (max 100): `{"contacts": [...]}`.
async fn contacts(s: S, req: HttpRequest) -> HttpResponse {
    seen(&s, &req);
    let m = q(&req);
    let per = num(&m, "per_page", 30).min(100);
    let page = num(&m, "page", 1).max(1);
    let rows: Vec<Value> = ((page - 1) * per..(page * per).min(CONTACTS))
        .map(contact)
        .collect();
    HttpResponse::Ok().json(json!({"contacts": rows}))
}

/// `GET /orders?offset=&limit=` (max 50, silently capped): a top-level array.
async fn orders(s: S, req: HttpRequest) -> HttpResponse {
    seen(&s, &req);
    let m = q(&req);
    let limit = num(&m, "limit", 20).min(50);
    let offset = num(&m, "offset", 0);
    let rows: Vec<Value> = (offset..(offset + limit).min(ORDERS))
        .map(|i| json!({"order_id": format!("o{i}"), "lines": [{"sku": format!("sku-{}", i % 13), "qty": 1 + i % 3}], "total": i * 10}))
        .collect();
    HttpResponse::Ok().json(rows)
}

/// `POST /search` with `{"query", "page", "pageSize"}`: `{"results": [...]}`.
async fn search(s: S, req: HttpRequest, body: web::Json<Value>) -> HttpResponse {
    seen(&s, &req);
    let page = body["page"].as_u64().unwrap_or(1).max(1) as usize;
    let size = body["pageSize"].as_u64().unwrap_or(10).min(25) as usize;
    let all: Vec<usize> = (0..CONTACTS).filter(|i| i % 3 == 0).collect();
    let rows: Vec<Value> = all
        .iter()
        .skip((page - 1) * size)
        .take(size)
        .map(|&i| contact(i))
        .collect();
    HttpResponse::Ok().json(json!({"results": rows, "query": body["query"]}))
}

/// `GET /inboxes`: 3,219 inboxes, about 794 KB, no pagination at all.
async fn inboxes(s: S, req: HttpRequest) -> HttpResponse {
    seen(&s, &req);
    let rows: Vec<Value> = (0..INBOXES).map(inbox).collect();
    HttpResponse::Ok().json(json!({"inboxes": rows}))
}

/// `GET /flaky?page=&per_page=`: each page fails once with 503, then works; page 4 always 500s.
async fn flaky(s: S, req: HttpRequest) -> HttpResponse {
    seen(&s, &req);
    let m = q(&req);
    let page = num(&m, "page", 1);
    let per = num(&m, "per_page", 10).min(10);
    if page == 4 {
        return HttpResponse::InternalServerError().json(json!({"error": "database on fire"}));
    }
    let first = {
        let mut st = s.lock().unwrap();
        let n = st.flaky_seen.entry(page.to_string()).or_default();
        *n += 1;
        *n == 1
    };
    if first {
        return HttpResponse::ServiceUnavailable()
            .insert_header(("retry-after", "0"))
            .finish();
    }
    let rows: Vec<Value> = ((page - 1) * per..page * per).map(contact).collect();
    HttpResponse::Ok().json(rows)
}

/// `GET /limited?page=&per_page=`: allows 5 requests per rolling second; more is a
/// violation (counted) and a 429.
async fn limited(s: S, req: HttpRequest) -> HttpResponse {
    seen(&s, &req);
    let now = Instant::now();
    {
        let mut st = s.lock().unwrap();
        st.limited_log.push(now);
        st.rate_window
            .retain(|t| now.duration_since(*t).as_millis() < 1000);
        if st.rate_window.len() >= 5 {
            st.rate_violations += 1;
            return HttpResponse::TooManyRequests()
                .insert_header(("retry-after", "1"))
                .finish();
        }
        st.rate_window.push(now);
    }
    let m = q(&req);
    let page = num(&m, "page", 1).max(1);
    let per = num(&m, "per_page", 10).min(10);
    let rows: Vec<Value> = ((page - 1) * per..(page * per).min(60))
        .map(contact)
        .collect();
    HttpResponse::Ok().json(rows)
}

/// `GET /contacts/{id}`: one contact, for fan-out.
async fn one(s: S, req: HttpRequest, id: web::Path<String>) -> HttpResponse {
    seen(&s, &req);
    match id.parse::<usize>() {
        Ok(i) if i < CONTACTS => HttpResponse::Ok().json(contact(i)),
        _ => HttpResponse::NotFound().json(json!({"error": "no such contact", "id": id.as_str()})),
    }
}

pub async fn start() -> Upstream {
    let stats = Arc::new(Mutex::new(Stats::default()));
    let data = web::Data::new(stats.clone());
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = HttpServer::new(move || {
        App::new()
            .app_data(data.clone())
            .route("/contacts", web::get().to(contacts))
            .route("/contacts/{id}", web::get().to(one))
            .route("/orders", web::get().to(orders))
            .route("/search", web::post().to(search))
            .route("/inboxes", web::get().to(inboxes))
            .route("/flaky", web::get().to(flaky))
            .route("/limited", web::get().to(limited))
    })
    .workers(1)
    .listen(listener)
    .unwrap()
    .run();
    tokio::spawn(server);
    Upstream {
        base: format!("http://127.0.0.1:{port}"),
        stats,
    }
}
