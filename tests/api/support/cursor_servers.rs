//! In-test upstreams that paginate the way real public APIs do — GitHub (RFC 8288 `Link`
//! header), Stripe (`starting_after` + `has_more`), Google (`pageToken` /
//! `nextPageToken`), Slack (`response_metadata.next_cursor`, `""` at the end), HubSpot
//! (`paging.next.after`), Microsoft Graph (`$top` + `@odata.nextLink`), Notion
//! (`start_cursor` / `next_cursor` / `has_more` in a POST body), JSON:API (`links.next`,
//! a relative URL), an API written for agents (`{data, cursor, has_more, total}`) — and
//! hostile ones: a cursor that never ends, a cursor cycle, next URLs to another origin, a
//! last page served again for any page past the end, a silently capped page size.
//!
//! One actix-web server (port 0, one worker) holds every endpoint over one shared dataset
//! of [`ROWS`] rows with unique ids, and records every request it gets (path, query,
//! `Authorization`). A second instance of the same app on another port (another origin)
//! is the target of the off-origin next links: its request log must stay empty.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use serde_json::{json, Value};

/// Rows in the shared dataset.
pub const ROWS: usize = 173;
/// Rows of the "last page repeated forever" API: a multiple of its page size, so its
/// last real page is full and a walk cannot stop at a short page.
pub const STICKY_ROWS: usize = 150;
pub const STICKY_MAX: usize = 25;
/// What the silently capping APIs really return per page, whatever is asked.
pub const CAPPED: usize = 20;
/// What the cycle API announces as its total (it only ever serves 30 distinct rows).
pub const CYCLE_TOTAL: usize = 50;
/// Rows per page of the endless, cycle and off-origin APIs.
pub const HOSTILE_PAGE: usize = 10;

/// Row `i` of the shared dataset; every API serves these (ids `row_0000`…`row_0172`).
pub fn row(i: usize) -> Value {
    json!({"id": rid(i), "n": i, "name": format!("Row {i}"), "email": format!("row{i}@example.com")})
}

pub fn rid(i: usize) -> String {
    format!("row_{i:04}")
}

/// One request as the upstream saw it.
#[derive(Debug, Clone)]
pub struct Hit {
    pub path: String,
    pub query: String,
    pub auth: Option<String>,
    pub body: Option<Value>,
}

#[derive(Default)]
pub struct Stats {
    pub hits: Vec<Hit>,
    pub endless_calls: usize,
}

struct State {
    /// `http://127.0.0.1:PORT` of this server, for absolute next links.
    base: String,
    /// Another origin: where the hostile next links point.
    elsewhere: String,
    stats: Arc<Mutex<Stats>>,
}

type S = web::Data<State>;

pub struct Server {
    pub base: String,
    pub stats: Arc<Mutex<Stats>>,
}

impl Server {
    pub fn count(&self, path: &str) -> usize {
        self.stats
            .lock()
            .unwrap()
            .hits
            .iter()
            .filter(|h| h.path == path)
            .count()
    }
    pub fn hits(&self, path: &str) -> Vec<Hit> {
        self.stats
            .lock()
            .unwrap()
            .hits
            .iter()
            .filter(|h| h.path == path)
            .cloned()
            .collect()
    }
    pub fn all_hits(&self) -> Vec<Hit> {
        self.stats.lock().unwrap().hits.clone()
    }
}

/// The provider's server and another origin serving the same app.
pub struct CursorServers {
    pub main: Server,
    pub elsewhere: Server,
}

fn seen(s: &S, req: &HttpRequest, body: Option<Value>) {
    let mut st = s.stats.lock().unwrap();
    st.hits.push(Hit {
        path: req.path().to_string(),
        query: req.query_string().to_string(),
        auth: req
            .headers()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .map(String::from),
        body,
    });
}

fn q(req: &HttpRequest) -> HashMap<String, String> {
    web::Query::<HashMap<String, String>>::from_query(req.query_string())
        .map(|q| q.into_inner())
        .unwrap_or_default()
}

/// A numeric query parameter; present but not a number is the client's error.
fn num(m: &HashMap<String, String>, k: &str, default: usize) -> Result<usize, Box<HttpResponse>> {
    match m.get(k) {
        None => Ok(default),
        Some(v) => v.parse().map_err(|_| {
            Box::new(
                HttpResponse::BadRequest()
                    .json(json!({"error": format!("{k} must be an integer, got {v:?}")})),
            )
        }),
    }
}

/// Opaque token `prefix + offset`; anything else is an invalid token (400), as real APIs do.
fn decode(token: Option<&String>, prefix: &str) -> Result<usize, Box<HttpResponse>> {
    match token {
        None => Ok(0),
        Some(t) => t
            .strip_prefix(prefix)
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| {
                Box::new(
                    HttpResponse::BadRequest()
                        .json(json!({"error": "invalid page token", "token": t})),
                )
            }),
    }
}

fn rows(from: usize, to: usize) -> Vec<Value> {
    (from..to.min(ROWS)).map(row).collect()
}

macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(resp) => return *resp,
        }
    };
}

/// GitHub: `GET /gh/items?per_page=&page=` (default 30, max 100), a top-level array and
/// `Link: <…?page=2&per_page=30>; rel="next", <…>; rel="last"`.
async fn github(s: S, req: HttpRequest) -> HttpResponse {
    seen(&s, &req, None);
    let m = q(&req);
    let per = tri!(num(&m, "per_page", 30)).clamp(1, 100);
    let page = tri!(num(&m, "page", 1)).max(1);
    let last = ROWS.div_ceil(per);
    let link = |p: usize, rel: &str| {
        format!(
            "<{}/gh/items?page={p}&per_page={per}>; rel=\"{rel}\"",
            s.base
        )
    };
    let mut links = Vec::new();
    if page > 1 {
        links.push(link(page - 1, "prev"));
    }
    if page < last {
        links.push(link(page + 1, "next"));
        links.push(link(last, "last"));
    }
    if page > 1 {
        links.push(link(1, "first"));
    }
    let body: Vec<Value> = rows((page - 1) * per, page * per);
    let mut resp = HttpResponse::Ok();
    if !links.is_empty() {
        resp.insert_header(("link", links.join(", ")));
    }
    resp.json(body)
}

/// Stripe: `GET /stripe/customers?limit=&starting_after=` (default 10, max 100) →
/// `{"object": "list", "url", "data", "has_more"}`; the cursor is the last row's id.
async fn stripe(s: S, req: HttpRequest) -> HttpResponse {
    seen(&s, &req, None);
    let m = q(&req);
    let limit = tri!(num(&m, "limit", 10));
    if !(1..=100).contains(&limit) {
        return HttpResponse::BadRequest().json(json!({"error": {"type": "invalid_request_error", "param": "limit", "message": "limit must be between 1 and 100"}}));
    }
    let from = match m.get("starting_after") {
        None => 0,
        Some(id) => match (0..ROWS).find(|&i| rid(i) == *id) {
            Some(i) => i + 1,
            None => {
                return HttpResponse::BadRequest().json(json!({"error": {"type": "invalid_request_error", "code": "resource_missing", "param": "starting_after", "message": format!("No such customer: '{id}'")}}))
            }
        },
    };
    let data = rows(from, from + limit);
    let has_more = from + limit < ROWS;
    HttpResponse::Ok()
        .json(json!({"object": "list", "url": "/v1/customers", "data": data, "has_more": has_more}))
}

/// Google Drive: `GET /google/files?pageSize=&pageToken=` (max 1000 declared, but at most
/// 100 are returned, as Drive does) → `{"kind", "files", "nextPageToken"?}`.
async fn google(s: S, req: HttpRequest) -> HttpResponse {
    seen(&s, &req, None);
    let m = q(&req);
    let size = tri!(num(&m, "pageSize", 100)).clamp(1, 100);
    let from = tri!(decode(m.get("pageToken"), "AHWqTU"));
    let mut body = json!({"kind": "drive#fileList", "incompleteSearch": false, "files": rows(from, from + size)});
    if from + size < ROWS {
        body["nextPageToken"] = json!(format!("AHWqTU{}", from + size));
    }
    HttpResponse::Ok().json(body)
}

/// Slack: `GET /slack/users?limit=&cursor=` (at most 50 returned whatever the limit) →
/// `{"ok": true, "members", "response_metadata": {"next_cursor"}}`, `""` at the end.
async fn slack(s: S, req: HttpRequest) -> HttpResponse {
    seen(&s, &req, None);
    let m = q(&req);
    let limit = tri!(num(&m, "limit", 100)).clamp(1, 50);
    let from = match m.get("cursor").filter(|c| !c.is_empty()) {
        None => 0,
        Some(c) => match c.strip_prefix("dXNlcjpV").and_then(|n| n.parse().ok()) {
            Some(n) => n,
            None => {
                return HttpResponse::Ok().json(json!({"ok": false, "error": "invalid_cursor"}))
            }
        },
    };
    let next = if from + limit < ROWS {
        format!("dXNlcjpV{}", from + limit)
    } else {
        String::new()
    };
    HttpResponse::Ok().json(json!({"ok": true, "members": rows(from, from + limit), "cache_ts": 1_700_000_000, "response_metadata": {"next_cursor": next}}))
}

/// HubSpot CRM v3: `GET /hubspot/contacts?limit=&after=` (max 100) →
/// `{"results", "paging": {"next": {"after", "link"}}}`, no `paging` at the end.
async fn hubspot(s: S, req: HttpRequest) -> HttpResponse {
    seen(&s, &req, None);
    let m = q(&req);
    let limit = tri!(num(&m, "limit", 10));
    if !(1..=100).contains(&limit) {
        return HttpResponse::BadRequest().json(json!({"status": "error", "category": "VALIDATION_ERROR", "message": "limit must be 1-100"}));
    }
    let from = tri!(num(&m, "after", 0));
    let mut body = json!({"results": rows(from, from + limit)});
    if from + limit < ROWS {
        let after = (from + limit).to_string();
        body["paging"] = json!({"next": {"after": after, "link": format!("{}/hubspot/contacts?limit={limit}&after={after}", s.base)}});
    }
    HttpResponse::Ok().json(body)
}

/// Microsoft Graph: `GET /graph/users?$top=&$skiptoken=` (at most 100 returned) →
/// `{"@odata.context", "value", "@odata.nextLink"?}`; the next link carries `$top` and an
/// opaque `$skiptoken`. `$skip` is honoured too (offset).
async fn graph(s: S, req: HttpRequest) -> HttpResponse {
    seen(&s, &req, None);
    let m = q(&req);
    let top = tri!(num(&m, "$top", 100));
    if !(1..=999).contains(&top) {
        return HttpResponse::BadRequest().json(json!({"error": {"code": "Request_UnsupportedQuery", "message": "Invalid page size specified."}}));
    }
    let size = top.min(100);
    let from = match m.get("$skiptoken") {
        Some(_) => tri!(decode(m.get("$skiptoken"), "RFNwdAIAAQAAAB")),
        None => tri!(num(&m, "$skip", 0)),
    };
    let mut body = json!({"@odata.context": format!("{}/graph/$metadata#users", s.base), "value": rows(from, from + size)});
    if from + size < ROWS {
        body["@odata.nextLink"] = json!(format!(
            "{}/graph/users?$top={top}&$skiptoken=RFNwdAIAAQAAAB{}",
            s.base,
            from + size
        ));
    }
    HttpResponse::Ok().json(body)
}

/// Notion: `POST /notion/query` with `{"start_cursor"?, "page_size"}` (max 100) →
/// `{"object": "list", "results", "next_cursor": …|null, "has_more"}`.
async fn notion(s: S, req: HttpRequest, body: web::Json<Value>) -> HttpResponse {
    seen(&s, &req, Some(body.0.clone()));
    let size = body["page_size"].as_u64().unwrap_or(100) as usize;
    if !(1..=100).contains(&size) {
        return HttpResponse::BadRequest().json(json!({"object": "error", "code": "validation_error", "message": "body.page_size should be ≤ 100"}));
    }
    let from = match body.get("start_cursor").and_then(Value::as_str) {
        None => 0,
        Some(c) => match c
            .strip_prefix("5eed0000-0000-4000-8000-")
            .and_then(|n| n.parse().ok())
        {
            Some(n) => n,
            None => return HttpResponse::BadRequest().json(json!({"object": "error", "code": "validation_error", "message": "start_cursor is invalid"})),
        },
    };
    let more = from + size < ROWS;
    let next = more.then(|| format!("5eed0000-0000-4000-8000-{:012}", from + size));
    HttpResponse::Ok().json(json!({"object": "list", "results": rows(from, from + size), "next_cursor": next, "has_more": more, "type": "page_or_database", "page_or_database": {}}))
}

/// JSON:API: `GET /jsonapi/articles?page[size]=&page[after]=` →
/// `{"data", "links": {"self", "next"?}}` with a relative next URL.
async fn jsonapi(s: S, req: HttpRequest) -> HttpResponse {
    seen(&s, &req, None);
    let m = q(&req);
    let size = tri!(num(&m, "page[size]", 20)).clamp(1, 40);
    let from = tri!(decode(m.get("page[after]"), "art"));
    let mut links = json!({"self": format!("/jsonapi/articles?{}", req.query_string())});
    if from + size < ROWS {
        links["next"] = json!(format!(
            "/jsonapi/articles?page%5Bsize%5D={size}&page%5Bafter%5D=art{}",
            from + size
        ));
    }
    HttpResponse::Ok().json(
        json!({"data": rows(from, from + size), "links": links, "meta": {"page": {"size": size}}}),
    )
}

/// Written for agents: `GET /agentic/inboxes?limit=&cursor=` (max 100) →
/// `{"data", "cursor": …|null, "has_more", "total"}`, `total` on the first page only.
async fn agentic(s: S, req: HttpRequest) -> HttpResponse {
    seen(&s, &req, None);
    let m = q(&req);
    let limit = tri!(num(&m, "limit", 20)).clamp(1, 100);
    let first = !m.contains_key("cursor");
    let from = tri!(decode(m.get("cursor"), "eyJvIjo"));
    let more = from + limit < ROWS;
    let mut body = json!({"data": rows(from, from + limit), "cursor": more.then(|| format!("eyJvIjo{}", from + limit)), "has_more": more});
    if first {
        body["total"] = json!(ROWS);
    }
    HttpResponse::Ok().json(body)
}

/// Hostile: a fresh cursor on every answer, always with the same ten rows.
async fn endless(s: S, req: HttpRequest) -> HttpResponse {
    seen(&s, &req, None);
    let n = {
        let mut st = s.stats.lock().unwrap();
        st.endless_calls += 1;
        st.endless_calls
    };
    HttpResponse::Ok().json(
        json!({"data": rows(0, HOSTILE_PAGE), "next_cursor": format!("e{n}"), "has_more": true}),
    )
}

/// Hostile: a fresh cursor and ten new rows every time, forever.
async fn forever(s: S, req: HttpRequest) -> HttpResponse {
    seen(&s, &req, None);
    let m = q(&req);
    let k = tri!(decode(m.get("cursor"), "f"));
    let data: Vec<Value> = (0..HOSTILE_PAGE)
        .map(|j| json!({"id": format!("fv_{k:04}_{j}"), "n": k * HOSTILE_PAGE + j}))
        .collect();
    HttpResponse::Ok()
        .json(json!({"data": data, "next_cursor": format!("f{}", k + 1), "has_more": true}))
}

/// Hostile: cursors cycle A → B → A; 30 distinct rows but an announced total of 50.
async fn cycle(s: S, req: HttpRequest) -> HttpResponse {
    seen(&s, &req, None);
    let m = q(&req);
    let (from, next) = match m.get("cursor").map(String::as_str) {
        None => (0, "A"),
        Some("A") => (10, "B"),
        Some("B") => (20, "A"),
        Some(other) => {
            return HttpResponse::BadRequest()
                .json(json!({"error": "invalid cursor", "cursor": other}))
        }
    };
    let mut body =
        json!({"data": rows(from, from + HOSTILE_PAGE), "next_cursor": next, "has_more": true});
    if from == 0 {
        body["total"] = json!(CYCLE_TOTAL);
    }
    HttpResponse::Ok().json(body)
}

/// Hostile: the next URL is on another origin (another port), which serves the same app.
async fn offsite(s: S, req: HttpRequest) -> HttpResponse {
    seen(&s, &req, None);
    let m = q(&req);
    let from = tri!(decode(m.get("cursor"), "o"));
    HttpResponse::Ok().json(
        json!({"items": rows(from, from + HOSTILE_PAGE), "has_more": true,
        "next": format!("{}/hostile/offsite?cursor=o{}", s.elsewhere, from + HOSTILE_PAGE)}),
    )
}

/// Hostile: the next URL keeps host and port but switches scheme (https).
async fn scheme(s: S, req: HttpRequest) -> HttpResponse {
    seen(&s, &req, None);
    let m = q(&req);
    let from = tri!(decode(m.get("cursor"), "o"));
    let https = s.base.replacen("http://", "https://", 1);
    HttpResponse::Ok().json(json!({"items": rows(from, from + HOSTILE_PAGE),
        "links": {"next": format!("{https}/hostile/scheme?cursor=o{}", from + HOSTILE_PAGE)}}))
}

/// Hostile: `GET /hostile/sticky?page=&per_page=` (max 25) over 150 rows; any page past
/// the end answers with the last page again.
async fn sticky(s: S, req: HttpRequest) -> HttpResponse {
    seen(&s, &req, None);
    let m = q(&req);
    let per = tri!(num(&m, "per_page", 10)).clamp(1, STICKY_MAX);
    let last = STICKY_ROWS.div_ceil(per);
    let page = tri!(num(&m, "page", 1)).clamp(1, last);
    let data: Vec<Value> = ((page - 1) * per..(page * per).min(STICKY_ROWS))
        .map(row)
        .collect();
    HttpResponse::Ok().json(data)
}

/// Hostile: `GET /hostile/capped?page=&limit=` returns 20 rows whatever the limit, but
/// says `has_more` and the total.
async fn capped(s: S, req: HttpRequest) -> HttpResponse {
    seen(&s, &req, None);
    let m = q(&req);
    let page = tri!(num(&m, "page", 1)).max(1);
    let from = (page - 1) * CAPPED;
    HttpResponse::Ok().json(
        json!({"data": rows(from, from + CAPPED), "has_more": from + CAPPED < ROWS, "total": ROWS}),
    )
}

/// Hostile: `GET /hostile/capped_offset?offset=&limit=` returns 20 rows whatever the
/// limit, and only a `total_count` says there is more.
async fn capped_offset(s: S, req: HttpRequest) -> HttpResponse {
    seen(&s, &req, None);
    let m = q(&req);
    let from = tri!(num(&m, "offset", 0));
    HttpResponse::Ok().json(json!({"items": rows(from, from + CAPPED), "total_count": ROWS}))
}

fn serve(host: &str, elsewhere: String) -> Server {
    let stats = Arc::new(Mutex::new(Stats::default()));
    let listener = std::net::TcpListener::bind((host, 0)).unwrap();
    let base = format!("http://{host}:{}", listener.local_addr().unwrap().port());
    let data = web::Data::new(State {
        base: base.clone(),
        elsewhere,
        stats: stats.clone(),
    });
    let server = HttpServer::new(move || {
        App::new()
            .app_data(data.clone())
            .route("/gh/items", web::get().to(github))
            .route("/stripe/customers", web::get().to(stripe))
            .route("/google/files", web::get().to(google))
            .route("/slack/users", web::get().to(slack))
            .route("/hubspot/contacts", web::get().to(hubspot))
            .route("/graph/users", web::get().to(graph))
            .route("/notion/query", web::post().to(notion))
            .route("/jsonapi/articles", web::get().to(jsonapi))
            .route("/agentic/inboxes", web::get().to(agentic))
            .route("/hostile/endless", web::get().to(endless))
            .route("/hostile/forever", web::get().to(forever))
            .route("/hostile/cycle", web::get().to(cycle))
            .route("/hostile/offsite", web::get().to(offsite))
            .route("/hostile/scheme", web::get().to(scheme))
            .route("/hostile/sticky", web::get().to(sticky))
            .route("/hostile/capped", web::get().to(capped))
            .route("/hostile/capped_offset", web::get().to(capped_offset))
    })
    .workers(1)
    .listen(listener)
    .unwrap()
    .run();
    tokio::spawn(server);
    Server { base, stats }
}

/// Starts the other origin first (so the provider's server can point at it), then the
/// provider's server.
pub async fn start() -> CursorServers {
    let elsewhere = serve("127.0.0.1", String::new());
    let main = serve("127.0.0.1", elsewhere.base.clone());
    CursorServers { main, elsewhere }
}
