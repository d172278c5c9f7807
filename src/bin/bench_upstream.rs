//! A fast local upstream for `scripts/bench-load`: offset-paginated lists served from
//! rows rendered once at start, so the benchmark measures loopgate, not its upstream.
//!
//! `bench_upstream <port>` serves
//! - `GET /items?offset=&limit=` (limit ≤ 100): 1,000 small rows, `{"data": [...], "total": 1000}`;
//! - `GET /slow/items?offset=&limit=` (limit ≤ 10): 500 small rows, each page after 100 ms
//!   (a 50-page walk);
//! - `GET /big?offset=&limit=` (limit ≤ 100): 2,000 rows of ~12 KB (a 24 MB walk).
//! - `GET /hold?offset=&limit=` (limit 1): 1,000 small rows, each page after 15 s (calls that
//!   stay open: the 1,000 concurrent streams).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};

/// One list: its rows as JSON text, and the most rows a page may hold.
struct List {
    rows: Vec<String>,
    max_limit: usize,
    delay: Option<Duration>,
}

fn small_row(i: usize) -> String {
    let status = if i.is_multiple_of(3) {
        "open"
    } else {
        "closed"
    };
    serde_json::json!({
        "id": i,
        "name": format!("item {i}"),
        "status": status,
        "owner": {"id": i % 17, "email": format!("owner{}@example.com", i % 17)},
        "amount": (i * 37) % 1000,
        "tags": ["a", "b"],
    })
    .to_string()
}

fn big_row(i: usize) -> String {
    serde_json::json!({"id": i, "status": "open", "body": "x".repeat(12_000)}).to_string()
}

fn list(n: usize, max_limit: usize, delay: Option<Duration>, row: fn(usize) -> String) -> List {
    List {
        rows: (0..n).map(row).collect(),
        max_limit,
        delay,
    }
}

async fn page(list: web::Data<Arc<List>>, req: HttpRequest) -> HttpResponse {
    let q: HashMap<String, String> =
        web::Query::<HashMap<String, String>>::from_query(req.query_string())
            .map(|q| q.into_inner())
            .unwrap_or_default();
    let num = |k: &str, d: usize| q.get(k).and_then(|v| v.parse().ok()).unwrap_or(d);
    let offset = num("offset", 0).min(list.rows.len());
    let limit = num("limit", 20).clamp(1, list.max_limit);
    if let Some(d) = list.delay {
        tokio::time::sleep(d).await;
    }
    let end = (offset + limit).min(list.rows.len());
    let mut body = String::with_capacity(
        64 + list.rows[offset..end]
            .iter()
            .map(String::len)
            .sum::<usize>(),
    );
    body.push_str("{\"data\":[");
    for (k, r) in list.rows[offset..end].iter().enumerate() {
        if k > 0 {
            body.push(',');
        }
        body.push_str(r);
    }
    body.push_str(&format!("],\"total\":{}}}", list.rows.len()));
    HttpResponse::Ok()
        .content_type("application/json")
        .body(body)
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let port: u16 = std::env::args()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(18_080);
    let items = Arc::new(list(1_000, 100, None, small_row));
    let slow = Arc::new(list(500, 10, Some(Duration::from_millis(100)), small_row));
    let big = Arc::new(list(2_000, 100, None, big_row));
    // answers after 15 s: calls that stay open (the streams of `scripts/bench-load`)
    let hold = Arc::new(list(1_000, 1, Some(Duration::from_secs(15)), small_row));
    HttpServer::new(move || {
        App::new()
            .service(
                web::resource("/items")
                    .app_data(web::Data::new(items.clone()))
                    .route(web::get().to(page)),
            )
            .service(
                web::resource("/slow/items")
                    .app_data(web::Data::new(slow.clone()))
                    .route(web::get().to(page)),
            )
            .service(
                web::resource("/big")
                    .app_data(web::Data::new(big.clone()))
                    .route(web::get().to(page)),
            )
            .service(
                web::resource("/hold")
                    .app_data(web::Data::new(hold.clone()))
                    .route(web::get().to(page)),
            )
    })
    .bind(("127.0.0.1", port))?
    .run()
    .await
}
