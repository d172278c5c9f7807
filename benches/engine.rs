//! Engine benchmarks:
//! (a) the transform on the reference payload — 3,219 inbox-like rows, ~794 KB of compact
//!     JSON, starting from the raw bytes an upstream delivers (`run` + `present_json`):
//!     the size guard alone, `_fields` + guard, and `_filter` + `_fields` + guard;
//! (b) a 65-page walk (50 rows a page, `{data, total}`) over an in-memory upstream.
//!
//! The payload is generated deterministically and written to
//! `target/engine-bench/reference.json`, so the same transform can be timed with jq:
//!
//! ```text
//! F=target/engine-bench/reference.json
//! time (for i in $(seq 50); do jq -c '.inboxes[:300]' $F >/dev/null; done)
//! time (for i in $(seq 50); do jq -c '[.inboxes[] | select(.display_name | contains("7"))
//!                                      | {inbox_id, email, labels}]' $F >/dev/null; done)
//! time (for i in $(seq 50); do jq -n 1 >/dev/null; done)     # jq's own start-up
//! ```

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use loopgate_engine::{
    analyze, parse_call, present, present_json, run, Clock, Limits, NoProgress, Upstream,
    UpstreamFailure, UpstreamRequest, UpstreamResponse,
};
use serde_json::{json, Value};
use std::future::Future;
use std::hint::black_box;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

const ROWS: usize = 3_219;

fn block_on<F: Future>(fut: F) -> F::Output {
    let mut fut = std::pin::pin!(fut);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

/// One inbox row; ~245 bytes of compact JSON.
fn inbox(i: usize) -> Value {
    let h = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    json!({
        "inbox_id": format!("inb_{:010x}{i:05}", h >> 24),
        "pod_id": format!("pod_{:06x}", h >> 40),
        "email": format!("t{i:05}{:04x}@agents.ex.com", h & 0xffff),
        "display_name": format!("Runner {i:05}"),
        "client_id": if i.is_multiple_of(3) { Value::Null } else { json!(format!("cli_{:06x}", h >> 44)) },
        "created_at": format!("2025-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", 1 + i % 12, 1 + i % 28, i % 24, i % 60, (i * 7) % 60, i % 1000),
        "updated_at": format!("2025-{:02}-{:02}T{:02}:{:02}:{:02}.000Z", 1 + (i + 3) % 12, 1 + (i + 5) % 28, (i + 1) % 24, (i + 2) % 60, (i * 3) % 60),
        "labels": if i.is_multiple_of(2) { json!(["task", "auto"]) } else { json!(["manual"]) },
    })
}

fn reference() -> Vec<u8> {
    let items: Vec<Value> = (0..ROWS).map(inbox).collect();
    let body = json!({"count": ROWS, "inboxes": items});
    let bytes = serde_json::to_vec(&body).unwrap_or_default();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/engine-bench");
    if std::fs::create_dir_all(&dir).is_ok() {
        let _ = std::fs::write(dir.join("reference.json"), &bytes);
    }
    bytes
}

struct Fixed(Vec<Vec<u8>>);

impl Upstream for Fixed {
    fn follow(&self, _: &str) -> Option<String> {
        None
    }

    fn call(
        &self,
        req: UpstreamRequest,
    ) -> impl Future<Output = Result<UpstreamResponse, UpstreamFailure>> + Send {
        // Page numbers, or cursors that are the next page's number.
        let page = req
            .args
            .get("page")
            .and_then(Value::as_u64)
            .or_else(|| req.args.get("cursor")?.as_str()?.parse().ok())
            .unwrap_or(1) as usize;
        let body = self
            .0
            .get(page - 1)
            .cloned()
            .unwrap_or_else(|| b"{\"data\":[]}".to_vec());
        std::future::ready(Ok(UpstreamResponse {
            status: 200,
            headers: Vec::new(),
            body,
        }))
    }
}

struct Still;

impl Clock for Still {
    fn now_ms(&self) -> u64 {
        0
    }
    fn sleep(&self, _: Duration) -> impl Future<Output = ()> + Send {
        std::future::ready(())
    }
}

fn cases_value_args() -> Value {
    json!({
        "_filter": [{"field": "display_name", "op": "contains", "value": "7"}],
        "_fields": ["inbox_id", "email", "labels"]
    })
}

fn transform(c: &mut Criterion) {
    let bytes = reference();
    let schema = json!({"type": "object", "properties": {"limit": {"type": "integer"}}});
    let analysis = analyze(&schema);
    let limits = Limits::default();
    let upstream = Fixed(vec![bytes.clone()]);
    let cases = [
        ("guard", json!({}), true),
        (
            "filter_fields_guard",
            json!({
                "_filter": [{"field": "display_name", "op": "contains", "value": "7"}],
                "_fields": ["inbox_id", "email", "labels"]
            }),
            true,
        ),
        (
            "fields_guard",
            json!({"_fields": ["inbox_id", "email"]}),
            true,
        ),
    ];
    let mut g = c.benchmark_group("reference_794KB");
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    for (name, args, looping) in cases {
        let plan = match parse_call(&analysis, &schema, args, looping, &limits) {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        };
        g.bench_function(BenchmarkId::from_parameter(name), |b| {
            b.iter(|| {
                let outcome = block_on(run(
                    &plan,
                    &analysis,
                    &upstream,
                    &NoProgress,
                    &Still,
                    &limits,
                ));
                let outcome = outcome.unwrap_or_else(|e| panic!("{e}"));
                black_box(present_json(
                    &outcome,
                    &plan,
                    "res_bench",
                    &limits,
                    &Default::default(),
                ))
            })
        });
    }
    // The same filter + projection, returning a serde_json::Value instead of text.
    let plan = match parse_call(&analysis, &schema, cases_value_args(), true, &limits) {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    };
    g.bench_function("filter_fields_guard_as_value", |b| {
        b.iter(|| {
            let outcome = block_on(run(
                &plan,
                &analysis,
                &upstream,
                &NoProgress,
                &Still,
                &limits,
            ));
            let outcome = outcome.unwrap_or_else(|e| panic!("{e}"));
            black_box(present(&outcome, &plan, "res_bench", &limits))
        })
    });
    g.bench_function("parse_serde_json_value", |b| {
        b.iter(|| black_box(serde_json::from_slice::<Value>(&bytes).map(|v| v.is_object())))
    });
    g.finish();
}

fn walk(c: &mut Criterion) {
    // 65 pages of 50 rows, like the 3,226-inbox account paged at 50.
    let pages: Vec<Vec<u8>> = (0..65)
        .map(|p| {
            let rows: Vec<Value> = (p * 50..(p * 50 + 50).min(3_226)).map(inbox).collect();
            serde_json::to_vec(&json!({"data": rows, "total": 3_226})).unwrap_or_default()
        })
        .collect();
    let total: usize = pages.iter().map(Vec::len).sum();
    let schema = json!({"type": "object", "properties": {
        "limit": {"type": "integer", "maximum": 50}, "page": {"type": "integer"}}});
    let analysis = analyze(&schema);
    let limits = Limits {
        pages_per_collection: 100,
        requests: 100,
        ..Limits::default()
    };
    let plan = match parse_call(
        &analysis,
        &schema,
        json!({"_all_pages": true, "_fields": ["inbox_id"]}),
        true,
        &limits,
    ) {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    };
    let upstream = Fixed(pages);
    let mut g = c.benchmark_group("walk_65_pages");
    g.throughput(Throughput::Bytes(total as u64));
    g.bench_function("run", |b| {
        b.iter(|| {
            let o = block_on(run(
                &plan,
                &analysis,
                &upstream,
                &NoProgress,
                &Still,
                &limits,
            ));
            let o = o.unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(o.items.len(), 3_226);
            black_box(o)
        })
    });
    // The same rows behind an agent-style cursor API: {data, cursor, has_more, total}.
    let cursor_pages: Vec<Vec<u8>> = (0..65)
        .map(|p| {
            let rows: Vec<Value> = (p * 50..(p * 50 + 50).min(3_226)).map(inbox).collect();
            let more = p < 64;
            let mut body = json!({"data": rows, "has_more": more,
                                  "cursor": if more { json!((p + 2).to_string()) } else { Value::Null }});
            if p == 0 {
                body["total"] = json!(3_226);
            }
            serde_json::to_vec(&body).unwrap_or_default()
        })
        .collect();
    let one_page = cursor_pages[1].clone();
    let cursor_schema = json!({"type": "object", "properties": {
        "limit": {"type": "integer", "maximum": 50}, "cursor": {"type": "string"}}});
    let cursor_analysis = analyze(&cursor_schema);
    let cursor_plan = match parse_call(
        &cursor_analysis,
        &cursor_schema,
        json!({"_all_pages": true}),
        true,
        &limits,
    ) {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    };
    let cursor_upstream = Fixed(cursor_pages);
    g.bench_function("cursor_run", |b| {
        b.iter(|| {
            let o = block_on(run(
                &cursor_plan,
                &cursor_analysis,
                &cursor_upstream,
                &NoProgress,
                &Still,
                &limits,
            ));
            let o = o.unwrap_or_else(|e| panic!("{e}"));
            assert!(o.items.len() == 3_226 && o.verdict.paging_complete);
            black_box(o)
        })
    });
    g.bench_function("parse_one_page", |b| {
        b.iter(|| {
            black_box(
                loopgate_engine::document::Page::parse(&one_page)
                    .items
                    .len(),
            )
        })
    });
    g.bench_function("run_and_present", |b| {
        b.iter(|| {
            let o = block_on(run(
                &plan,
                &analysis,
                &upstream,
                &NoProgress,
                &Still,
                &limits,
            ));
            let o = o.unwrap_or_else(|e| panic!("{e}"));
            black_box(present_json(
                &o,
                &plan,
                "res_bench",
                &limits,
                &Default::default(),
            ))
        })
    });
    g.finish();
}

criterion_group!(benches, transform, walk);
criterion_main!(benches);
