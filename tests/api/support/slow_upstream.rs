//! An in-test upstream whose pages take time, so walks are still running when a test
//! injects a fault or starts identical calls beside them (K3, K4), and that counts how
//! many requests of each page were in flight at once.
//!
//! `GET /slow?page=N&per_page=10&pages=P&delay_ms=D`: P pages (default 5) of 10 rows
//! each, every request answered after `delay` (or D ms); page 1 after `first_delay` (so
//! the first pages of calls started together overlap for certain) unless D is given.
//! Rows are `{"id": i, "page": N}`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use serde_json::json;

#[derive(Default)]
pub struct Counts {
    /// Requests of each page in flight now.
    in_flight: HashMap<usize, usize>,
    /// The most requests of each page that were in flight at once.
    pub max_in_flight: HashMap<usize, usize>,
    /// Requests seen, all pages.
    pub total: usize,
}

pub struct Slow {
    pub base: String,
    pub counts: Arc<Mutex<Counts>>,
}

impl Slow {
    /// The most requests of page `page` that were in flight at once.
    pub fn max_in_flight(&self, page: usize) -> usize {
        let c = self.counts.lock().unwrap();
        c.max_in_flight.get(&page).copied().unwrap_or(0)
    }

    /// Forgets what was counted.
    pub fn reset(&self) {
        let mut c = self.counts.lock().unwrap();
        c.max_in_flight.clear();
        c.total = 0;
    }
}

struct Conf {
    counts: Arc<Mutex<Counts>>,
    delay: Duration,
    first_delay: Duration,
}

/// Decrements the page's in-flight count when the request ends (answered or dropped).
struct Flight(Arc<Mutex<Counts>>, usize);

impl Drop for Flight {
    fn drop(&mut self) {
        let mut c = self.0.lock().unwrap();
        if let Some(n) = c.in_flight.get_mut(&self.1) {
            *n = n.saturating_sub(1);
        }
    }
}

async fn slow(conf: web::Data<Conf>, req: HttpRequest) -> HttpResponse {
    let q = web::Query::<HashMap<String, String>>::from_query(req.query_string())
        .map(|q| q.into_inner())
        .unwrap_or_default();
    let num = |k: &str, d: usize| q.get(k).and_then(|v| v.parse().ok()).unwrap_or(d);
    let page = num("page", 1).max(1);
    let per = num("per_page", 10).clamp(1, 10);
    let pages = num("pages", 5);
    let _flight = {
        let mut c = conf.counts.lock().unwrap();
        c.total += 1;
        let n = c.in_flight.entry(page).or_default();
        *n += 1;
        let now = *n;
        let max = c.max_in_flight.entry(page).or_default();
        *max = (*max).max(now);
        Flight(conf.counts.clone(), page)
    };
    let wait = match q.get("delay_ms").and_then(|v| v.parse().ok()) {
        Some(ms) => Duration::from_millis(ms),
        None if page == 1 => conf.first_delay,
        None => conf.delay,
    };
    tokio::time::sleep(wait).await;
    let rows: Vec<_> = if page <= pages {
        ((page - 1) * per..page * per)
            .map(|i| json!({"id": i, "page": page}))
            .collect()
    } else {
        Vec::new()
    };
    HttpResponse::Ok().json(rows)
}

/// Starts the server: pages after `delay`, page 1 after `first_delay`.
pub async fn start(delay: Duration, first_delay: Duration) -> Slow {
    let counts = Arc::new(Mutex::new(Counts::default()));
    let data = web::Data::new(Conf {
        counts: counts.clone(),
        delay,
        first_delay,
    });
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = HttpServer::new(move || {
        App::new()
            .app_data(data.clone())
            .route("/slow", web::get().to(slow))
    })
    .workers(2)
    .listen(listener)
    .unwrap()
    .run();
    tokio::spawn(server);
    Slow {
        base: format!("http://127.0.0.1:{port}"),
        counts,
    }
}

/// The tool over `/slow`: `page`, `per_page` (at most 10) and `pages` (how many exist).
pub fn tool() -> (&'static str, &'static str, &'static str, serde_json::Value) {
    (
        "list_slow",
        "GET",
        "/slow",
        json!({"type": "object", "properties": {
            "page": {"type": "integer"},
            "per_page": {"type": "integer", "minimum": 1, "maximum": 10},
            "pages": {"type": "integer"},
            "delay_ms": {"type": "integer"}
        }}),
    )
}
