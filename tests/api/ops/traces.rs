//! Traces and JSON logs through the real binary, configured only by the standard
//! variables: a 3-page walk whose second page fails once (503, retried) is one trace,
//! under the caller's `traceparent`, received by the test's OTLP receiver
//! (`otlp_receiver`) as a tree — the HTTP request, the tool call, the cache lookup, the
//! walk with its four upstream requests (page, attempt, status, bytes), the size guard and
//! the record write — with no secret in any attribute; and every JSON log line of the call
//! carries its call id, org, agent, tool and trace and span ids (P3 retry). O1: the
//! request's span and the upstream requests' are decoded against OpenTelemetry's HTTP
//! conventions (kinds, the required attributes and their types, `url.full` with the
//! credential redacted, `http.request.resend_count` on the retry), and every attribute of
//! loopgate's own is under `loopgate.*`.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use base64::Engine as _;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

use super::otlp_receiver::{self, Received};
use crate::support::helpers::{fresh_database, TestApp, ADMIN};
use crate::support::rig::Rig;

const PER_PAGE: usize = 10;
const ROWS: usize = 25;
const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT: &str = "00f067aa0ba902b7";
const HTTP_SPAN: &str = "POST /v1/agents/{agent_id}/threads/{thread_id}/tool-calls";

type Seen = Arc<Mutex<(HashMap<usize, u32>, Vec<String>)>>;

/// `GET /items?page=&per_page=`: 25 rows, 10 a page; page 2 answers 503 the first time.
/// Each request's `traceparent` is kept.
async fn items(seen: web::Data<Seen>, req: HttpRequest) -> HttpResponse {
    let q: HashMap<String, String> = url::form_urlencoded::parse(req.query_string().as_bytes())
        .into_owned()
        .collect();
    let page: usize = q.get("page").and_then(|p| p.parse().ok()).unwrap_or(1);
    let per: usize = q
        .get("per_page")
        .and_then(|p| p.parse().ok())
        .unwrap_or(PER_PAGE)
        .min(PER_PAGE);
    let n = {
        let mut s = seen.lock().unwrap();
        let tp = req
            .headers()
            .get("traceparent")
            .and_then(|v| v.to_str().ok());
        s.1.push(tp.unwrap_or_default().to_string());
        let n = s.0.entry(page).or_default();
        *n += 1;
        *n
    };
    if page == 2 && n == 1 {
        return HttpResponse::ServiceUnavailable()
            .insert_header(("retry-after", "0"))
            .finish();
    }
    let rows: Vec<Value> = ((page - 1) * per..(page * per).min(ROWS))
        .map(|i| json!({"id": i, "name": format!("item {i}")}))
        .collect();
    HttpResponse::Ok().json(json!({"items": rows}))
}

async fn upstream() -> (String, Seen) {
    let kept: Seen = Arc::default();
    let seen = web::Data::new(kept.clone());
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = HttpServer::new(move || {
        App::new()
            .app_data(seen.clone())
            .route("/items", web::get().to(items))
    })
    .workers(1)
    .listen(listener)
    .unwrap()
    .run();
    tokio::spawn(server);
    (format!("http://127.0.0.1:{port}"), kept)
}

/// The binary, configured by environment only, its stderr lines collected.
async fn serve(otlp: &str) -> (tokio::process::Child, TestApp, Arc<Mutex<Vec<String>>>) {
    let env = [
        ("DATABASE_URL", fresh_database().await),
        ("LOOPGATE_ADMIN_TOKEN", ADMIN.to_string()),
        (
            "LOOPGATE_CREDENTIAL_KEY",
            base64::engine::general_purpose::STANDARD.encode([9u8; 32]),
        ),
        ("LOOPGATE_TOKEN_SIGNING_KEY", "s".repeat(40)),
        ("LOOPGATE_BIND", "127.0.0.1:0".to_string()),
        ("LOOPGATE_ALLOW_PRIVATE_UPSTREAMS", "true".to_string()),
        ("LOOPGATE_LOG_FORMAT", "json".to_string()),
        ("RUST_LOG", "info".to_string()),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", otlp.to_string()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf".to_string()),
        ("OTEL_SERVICE_NAME", "loopgate-under-test".to_string()),
        // export batches quickly, so the test waits milliseconds, not the 5 s default
        ("OTEL_BSP_SCHEDULE_DELAY", "100".to_string()),
    ];
    let mut child = Command::new(env!("CARGO_BIN_EXE_loopgate"))
        .arg("serve")
        .current_dir(std::env::temp_dir())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut port = None;
    while let Some(line) = lines.next_line().await.unwrap() {
        log.lock().unwrap().push(line.clone());
        let v: Value = serde_json::from_str(&line)
            .unwrap_or_else(|_| panic!("a log line that is not JSON: {line}"));
        if v["message"] == "loopgate listening" {
            port = v["port"].as_u64();
            break;
        }
    }
    let port = port.expect("the service logged its port");
    let kept = log.clone();
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            kept.lock().unwrap().push(line);
        }
    });
    let app = TestApp {
        address: format!("http://127.0.0.1:{port}"),
        client: reqwest::Client::new(),
        database_url: String::new(),
        records: None,
    };
    (child, app, log)
}

fn named<'a>(spans: &'a [Received], name: &str) -> Vec<&'a Received> {
    spans.iter().filter(|s| s.name == name).collect()
}

/// OTLP `SpanKind`s.
const SERVER: i32 = 2;
const CLIENT: i32 = 3;

/// The upstream requests: client spans.
fn clients(spans: &[Received]) -> Vec<&Received> {
    spans.iter().filter(|s| s.kind == CLIENT).collect()
}

/// Attributes an HTTP span may carry besides loopgate's own (`loopgate.*`): the HTTP
/// conventions' and those the tracing bridge adds to every span (code location, thread,
/// busy and idle time).
const CONVENTIONS: &[&str] = &[
    "http.request.method",
    "http.route",
    "http.response.status_code",
    "http.request.resend_count",
    "url.full",
    "url.path",
    "url.query",
    "url.scheme",
    "url.template",
    "server.address",
    "server.port",
    "network.protocol.version",
    "user_agent.original",
    "error.type",
];

fn own_attributes_are_namespaced(s: &Received) {
    for (k, _) in &s.attributes {
        let bridge = k.starts_with("code.")
            || k.starts_with("thread.")
            || matches!(k.as_str(), "busy_ns" | "idle_ns" | "target" | "level");
        assert!(
            k.starts_with("loopgate.") || CONVENTIONS.contains(&k.as_str()) || bridge,
            "{}: attribute {k} is neither a convention's nor under loopgate.*",
            s.name
        );
    }
}

/// O1: a server span as the HTTP conventions require it.
fn http_server_span(s: &Received, method: &str, route: &str, status: i64) {
    assert_eq!(s.kind, SERVER, "{s:?}");
    assert_eq!(s.name, format!("{method} {route}"));
    assert_eq!(s.attr("http.request.method"), Some(method));
    assert_eq!(s.attr("http.route"), Some(route));
    assert_eq!(s.attr("url.scheme"), Some("http"));
    assert!(
        s.attr("url.path").is_some_and(|p| p.starts_with('/')),
        "{s:?}"
    );
    assert_eq!(s.attr("server.address"), Some("127.0.0.1"));
    assert!(s.int("server.port").is_some_and(|p| p > 0), "{s:?}");
    assert_eq!(s.int("http.response.status_code"), Some(status), "{s:?}");
    assert_eq!(s.attr("error.type").is_some(), status >= 500, "{s:?}");
    own_attributes_are_namespaced(s);
}

/// O1: a client span as the HTTP conventions require it.
fn http_client_span(s: &Received, base: &str, template: &str) {
    assert_eq!(s.kind, CLIENT, "{s:?}");
    assert_eq!(s.name, format!("GET {template}"));
    assert_eq!(s.attr("http.request.method"), Some("GET"));
    assert_eq!(s.attr("url.template"), Some(template));
    let full = s.attr("url.full").unwrap_or_default();
    assert!(full.starts_with(&format!("{base}{template}?")), "{full}");
    let port: i64 = base.rsplit(':').next().unwrap().parse().unwrap();
    assert_eq!(s.attr("server.address"), Some("127.0.0.1"));
    assert_eq!(s.int("server.port"), Some(port), "{s:?}");
    let status = s.int("http.response.status_code").expect("a status");
    assert_eq!(s.attr("error.type").is_some(), status >= 400, "{s:?}");
    if let Some(e) = s.attr("error.type") {
        assert_eq!(e, status.to_string());
    }
    let attempt: i64 = s.attr("loopgate.attempt").unwrap().parse().unwrap();
    match attempt {
        1 => assert_eq!(s.attr("http.request.resend_count"), None, "{s:?}"),
        n => assert_eq!(s.int("http.request.resend_count"), Some(n - 1), "{s:?}"),
    }
    own_attributes_are_namespaced(s);
}

/// Whether `span` lies under `ancestor` (by parent links among `spans`).
fn under(spans: &[Received], span: &Received, ancestor: &Received) -> bool {
    let by_id: HashMap<&str, &Received> = spans.iter().map(|s| (s.span_id.as_str(), s)).collect();
    let mut at = span;
    for _ in 0..64 {
        if at.parent_span_id == ancestor.span_id {
            return true;
        }
        match by_id.get(at.parent_span_id.as_str()) {
            Some(p) => at = p,
            None => return false,
        }
    }
    false
}

#[tokio::test]
async fn a_three_page_walk_with_a_retry_is_one_trace_and_its_log_lines_carry_its_ids() {
    let receiver = otlp_receiver::start().await;
    let (base, seen) = upstream().await;
    let (mut child, app, log) = serve(&receiver.endpoint).await;
    let schema = json!({"type": "object", "properties": {
        "page": {"type": "integer", "minimum": 1}, "per_page": {"type": "integer", "minimum": 1, "maximum": PER_PAGE}}});
    let rig = Rig::with_tools(
        &app,
        &base,
        vec![("list_items", "GET", "/items", schema)],
        true,
    )
    .await;
    // by default a provider is sent no trace context
    let first = rig.token(&app, "u0", json!({})).await;
    rig.call(&app, &first, "t0", "list_items", json!({"page": 1}))
        .await
        .ok(200);
    assert_eq!(seen.lock().unwrap().1, [""], "a traceparent sent unasked");
    // the provider asks for the trace context on its requests
    app.patch(
        &format!("/v1/providers/{}", rig.provider),
        &rig.t.key,
        json!({"propagate_trace_context": true}),
    )
    .await
    .ok(200);
    let token = rig.token(&app, "u1", json!({})).await;
    let res = app
        .client
        .post(format!(
            "{}/v1/agents/{}/threads/t1/tool-calls",
            app.address, rig.agent
        ))
        .bearer_auth(&token)
        .header("traceparent", format!("00-{TRACE}-{PARENT}-01"))
        .header("tracestate", "vendor=opaque")
        .json(&json!({"name": "list_items", "arguments": {"_all_pages": true}}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["result"]["_itemCount"], ROWS, "{body}");
    assert_eq!(body["result"]["_stoppedBy"], "end", "{body}");
    let call_id = body["id"].as_str().unwrap().to_string();

    let spans = receiver
        .until(|s| {
            let mine: Vec<&Received> = s.iter().filter(|x| x.trace_id == TRACE).collect();
            [HTTP_SPAN, "tool_call", "walk", "size_guard", "record_write"]
                .iter()
                .all(|n| mine.iter().any(|x| x.name == *n))
                && mine.iter().filter(|x| x.kind == CLIENT).count() >= 4
        })
        .await;
    let trace: Vec<Received> = spans.into_iter().filter(|s| s.trace_id == TRACE).collect();
    let names: Vec<&str> = trace.iter().map(|s| s.name.as_str()).collect();

    // the HTTP request continues the caller's trace
    // named as OpenTelemetry's HTTP conventions say: method and route
    let http = named(&trace, HTTP_SPAN);
    assert_eq!(http.len(), 1, "{names:?}");
    let http = http[0];
    assert_eq!(http.parent_span_id, PARENT);
    assert_eq!(http.service, "loopgate-under-test");
    http_server_span(
        http,
        "POST",
        "/v1/agents/{agent_id}/threads/{thread_id}/tool-calls",
        200,
    );
    assert_eq!(
        http.attr("url.path"),
        Some(format!("/v1/agents/{}/threads/t1/tool-calls", rig.agent).as_str())
    );

    let call = named(&trace, "tool_call");
    assert_eq!(call.len(), 1, "{names:?}");
    let call = call[0];
    assert!(
        under(&trace, call, http),
        "the tool call is not under the request"
    );
    assert_eq!(call.attr("loopgate.call_id"), Some(call_id.as_str()));
    assert_eq!(call.attr("loopgate.tool"), Some("list_items"));
    assert_eq!(call.attr("loopgate.org"), Some(rig.t.org.as_str()));
    assert_eq!(call.attr("loopgate.agent"), Some(rig.agent.as_str()));

    let lookup = named(&trace, "cache_lookup");
    assert_eq!(lookup.len(), 1, "one lookup, a miss: {names:?}");
    assert!(under(&trace, lookup[0], call));
    assert_eq!(lookup[0].attr("loopgate.cache_hit"), Some("false"));

    let walk = named(&trace, "walk");
    assert_eq!(walk.len(), 1, "{names:?}");
    let walk = walk[0];
    assert!(under(&trace, walk, call));
    assert_eq!(walk.attr("loopgate.pages"), Some("3"));
    assert_eq!(walk.attr("loopgate.requests"), Some("4"));
    assert_eq!(walk.attr("loopgate.items"), Some("25"));
    assert_eq!(walk.attr("loopgate.stopped_by"), Some("end"));

    let mut requests: Vec<(String, String, String)> = clients(&trace)
        .into_iter()
        .map(|r| {
            assert_eq!(
                r.parent_span_id, walk.span_id,
                "an upstream request not in the walk"
            );
            http_client_span(r, &base, "/items");
            assert_eq!(r.attr("loopgate.provider"), Some(rig.provider.as_str()));
            if r.attr("http.response.status_code") == Some("200") {
                let bytes: usize = r.attr("loopgate.bytes").unwrap().parse().unwrap();
                assert!(bytes > 20, "{r:?}");
            }
            let a = |k| r.attr(k).unwrap_or("-").to_string();
            (
                a("loopgate.page"),
                a("loopgate.attempt"),
                a("http.response.status_code"),
            )
        })
        .collect();
    requests.sort();
    let want = [
        ("1", "1", "200"),
        ("2", "1", "503"),
        ("2", "2", "200"),
        ("3", "1", "200"),
    ];
    let want: Vec<(String, String, String)> = want
        .iter()
        .map(|(p, a, s)| (p.to_string(), a.to_string(), s.to_string()))
        .collect();
    assert_eq!(requests, want);

    // each upstream request carried its own span as the parent, in the caller's trace
    let sent = seen.lock().unwrap().1[1..].to_vec();
    assert_eq!(sent.len(), 4, "{sent:?}");
    let request_ids: Vec<&str> = clients(&trace).iter().map(|r| r.span_id.as_str()).collect();
    for tp in &sent {
        let parts: Vec<&str> = tp.split('-').collect();
        assert_eq!(parts.len(), 4, "{tp}");
        assert_eq!(parts[1], TRACE, "{tp}");
        assert!(
            request_ids.contains(&parts[2]),
            "{tp} names no upstream request span"
        );
    }

    for name in ["size_guard", "record_write"] {
        let s = named(&trace, name);
        assert_eq!(s.len(), 1, "{name}: {names:?}");
        assert!(under(&trace, s[0], call), "{name} not under the tool call");
    }
    // O1: a credential sent in the query is `REDACTED` in `url.full`
    app.patch(
        &format!("/v1/providers/{}", rig.provider),
        &rig.t.key,
        json!({"auth": {"type": "query", "name": "api_key"}, "credential": "org-secret-in-query"}),
    )
    .await
    .ok(200);
    let queried = rig.token(&app, "u2", json!({})).await;
    rig.call(&app, &queried, "t2", "list_items", json!({"page": 3}))
        .await
        .ok(200);
    let spans = receiver
        .until(|s| {
            clients(s)
                .iter()
                .any(|c| c.attr("url.full").is_some_and(|u| u.contains("api_key=")))
        })
        .await;
    let with_key: Vec<&Received> = clients(&spans)
        .into_iter()
        .filter(|c| c.attr("url.full").is_some_and(|u| u.contains("api_key=")))
        .collect();
    assert_eq!(with_key.len(), 1, "{spans:?}");
    http_client_span(with_key[0], &base, "/items");
    let full = with_key[0].attr("url.full").unwrap();
    assert!(full.contains("api_key=REDACTED"), "{full}");
    assert!(full.contains("page=3"), "{full}");

    // nothing secret in any attribute of any span
    for s in receiver.spans() {
        for (k, v) in &s.attributes {
            assert!(
                !v.contains("org-secret") && !v.contains(&token) && !v.contains(ADMIN),
                "a secret in {}.{k}: {v}",
                s.name
            );
        }
    }

    // the log pipeline's view of the call: its lines, each with the call's ids
    let lines: Vec<Value> = log
        .lock()
        .unwrap()
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("not JSON: {l}")))
        .collect();
    let of_call: Vec<&Value> = lines
        .iter()
        .filter(|l| l["call_id"] == call_id.as_str())
        .collect();
    assert!(
        of_call
            .iter()
            .any(|l| l["message"] == "tool call succeeded"),
        "{of_call:?}"
    );
    for l in &of_call {
        assert_eq!(l["org"], rig.t.org.as_str(), "{l}");
        assert_eq!(l["agent"], rig.agent.as_str(), "{l}");
        assert_eq!(l["tool"], "list_items", "{l}");
        assert_eq!(l["trace_id"], TRACE, "{l}");
        let span = l["span_id"].as_str().unwrap_or_default();
        assert!(span.len() == 16 && span != PARENT, "{l}");
        assert!(l["level"].is_string() && l["timestamp"].is_string(), "{l}");
    }
    let text = log.lock().unwrap().join("\n");
    assert!(!text.contains("org-secret") && !text.contains(&token));
    child.kill().await.unwrap();
}
