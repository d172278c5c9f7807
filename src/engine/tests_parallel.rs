//! P9: the same generated upstream walked one request at a time and with requests started
//! ahead gives the same outcome — rows, verdict (`_stoppedBy`, note), `_forEachErrors`,
//! request/page/byte counts and the resume point — whatever the page style, row count,
//! budget, lying total or failing page.
use crate::engine::testkit::*;
use crate::engine::*;
use proptest::prelude::*;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const SIZE: usize = 10;

#[derive(Debug, Clone, Copy)]
enum Style {
    Page,
    Offset,
    Cursor,
}

/// What one page of one value does instead of answering normally.
#[derive(Debug, Clone, Copy)]
enum Fault {
    /// 400: fails the page at once.
    Refused,
    /// 503 twice, then the page (retried with backoff).
    Busy,
    /// 502 every time (retries run out).
    Down,
    /// An HTML page sent with 200 (G7).
    Html,
    /// An empty page before the data ends.
    Empty,
    /// Half a page.
    Short,
}

#[derive(Debug, Clone)]
struct Api {
    style: Style,
    rows: usize,
    /// `None`: no total; `Some(d)`: total announced as rows + d (a lie unless d = 0).
    total: Option<i64>,
    fault: Option<(u64, usize, Fault)>,
}

fn schema(style: Style) -> Value {
    let paging = match style {
        Style::Page => json!({"type": "integer"}),
        Style::Offset => json!({"type": "integer"}),
        Style::Cursor => json!({"type": "string"}),
    };
    let name = match style {
        Style::Page => "page",
        Style::Offset => "offset",
        Style::Cursor => "cursor",
    };
    let mut props = Map::new();
    props.insert("limit".into(), json!({"type": "integer", "maximum": SIZE}));
    props.insert(name.into(), paging);
    props.insert("owner_id".into(), json!({"type": "integer"}));
    json!({"type": "object", "properties": props})
}

/// Answers from the request alone (never from the call order), so both walks see the
/// same API; a fault that passes after some attempts counts attempts per request.
fn serve(
    api: &Api,
    attempts: &Mutex<HashMap<String, u32>>,
    req: &UpstreamRequest,
) -> Result<UpstreamResponse, UpstreamFailure> {
    let owner = arg_u64(req, "owner_id").unwrap_or(1);
    let size = arg_u64(req, "limit").unwrap_or(SIZE as u64) as usize;
    let start = match api.style {
        Style::Page => (arg_u64(req, "page").unwrap_or(1).max(1) as usize - 1) * size,
        Style::Offset => arg_u64(req, "offset").unwrap_or(0) as usize,
        Style::Cursor => arg_str(req, "cursor")
            .and_then(|c| c.strip_prefix('c')?.parse().ok())
            .unwrap_or(0),
    };
    let index = start / size.max(1) + 1;
    let mut end = (start + size).min(api.rows);
    let start = start.min(api.rows);
    if let Some((o, page, fault)) = api.fault {
        if o == owner && page == index {
            let key = serde_json::to_string(&req.args).unwrap_or_default();
            let n = {
                let mut a = attempts.lock().unwrap_or_else(|e| e.into_inner());
                let n = a.entry(key).or_insert(0);
                *n += 1;
                *n
            };
            match fault {
                Fault::Refused => return status(400, "bad page"),
                Fault::Busy if n <= 2 => return status(503, "busy"),
                Fault::Busy => {}
                Fault::Down => return status(502, "down"),
                Fault::Html => {
                    return Ok(UpstreamResponse {
                        status: 200,
                        headers: Vec::new(),
                        body: b"<html>oops</html>".to_vec(),
                    })
                }
                Fault::Empty => end = start,
                Fault::Short => end = start + (end - start) / 2,
            }
        }
    }
    let data: Vec<Value> = (start..end)
        .map(|i| json!({"id": owner * 100_000 + i as u64}))
        .collect();
    let mut body = json!({"data": data});
    if let Some(d) = api.total {
        body["total"] = json!((api.rows as i64 + d).max(0));
    }
    if matches!(api.style, Style::Cursor) && end < api.rows {
        body["next_cursor"] = json!(format!("c{end}"));
    }
    ok(body)
}

fn walk(
    api: &Api,
    args: &Value,
    limits: &Limits,
) -> (Result<Outcome, EngineError>, Vec<UpstreamRequest>) {
    let clock = FakeClock::default();
    let attempts = Arc::new(Mutex::new(HashMap::new()));
    let gen = api.clone();
    let fake = FakeApi::new(&clock, move |req, _| serve(&gen, &attempts, req));
    let s = schema(api.style);
    let a = analyze(&s);
    let out = parse_call(&a, &s, args.clone(), true, limits)
        .and_then(|plan| block_on(run(&plan, &a, &fake, &NoProgress, &clock, limits)));
    (out, fake.requests())
}

fn style() -> impl Strategy<Value = Style> {
    prop_oneof![Just(Style::Page), Just(Style::Offset), Just(Style::Cursor)]
}

fn fault() -> impl Strategy<Value = Fault> {
    prop_oneof![
        Just(Fault::Refused),
        Just(Fault::Busy),
        Just(Fault::Down),
        Just(Fault::Html),
        Just(Fault::Empty),
        Just(Fault::Short),
    ]
}

/// 0, 1, n−1, n, k·n, k·n+1 rows for a page size n.
fn rows() -> impl Strategy<Value = usize> {
    (0usize..6, 2usize..7).prop_map(|(shape, k)| match shape {
        0 => 0,
        1 => 1,
        2 => SIZE - 1,
        3 => SIZE,
        4 => k * SIZE,
        _ => k * SIZE + 1,
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn p9_parallel_walk_equals_sequential_walk(
        style in style(),
        rows in rows(),
        total in prop::option::of(prop_oneof![Just(0i64), -15i64..25]),
        fault in prop::option::of((1u64..3, 1usize..8, fault())),
        values in 1usize..4,
        requests in 1u32..40,
        pages in 1u32..12,
        items in prop_oneof![Just(5_000usize), 1usize..120],
        bytes in prop_oneof![Just(24usize << 20), 200usize..3_000],
        wall_ms in prop_oneof![Just(60_000u64), 400u64..3_000],
        concurrency in 2usize..7,
    ) {
        let api = Api { style, rows, total, fault };
        let mut args = json!({"_all_pages": true});
        if values > 1 {
            args["_for_each"] = json!({"key": "owner_id", "values": (1..=values as u64).collect::<Vec<_>>()});
        }
        let sequential = Limits {
            requests,
            pages_per_collection: pages,
            items,
            bytes,
            wall: Duration::from_millis(wall_ms),
            concurrency: 1,
            ..Limits::default()
        };
        let parallel = Limits { concurrency, ..sequential.clone() };
        let (seq, seq_sent) = walk(&api, &args, &sequential);
        let (par, par_sent) = walk(&api, &args, &parallel);
        prop_assert_eq!(&seq, &par);
        // every request of the sequential walk was made by the parallel one
        for r in &seq_sent {
            prop_assert!(par_sent.iter().any(|p| p.args == r.args && p.next_url == r.next_url));
        }
        // an honest API and no bound but the request budget: nothing started ahead is
        // wasted, so the requests really sent stay within the budget
        let honest = fault.is_none() && total.is_none_or(|d| d == 0);
        let by_requests = seq.as_ref().ok().and_then(|o| o.verdict.stopped_by)
            .is_none_or(|s| s == StopReason::Requests || s == StopReason::End || s == StopReason::Pages);
        if honest && by_requests {
            prop_assert!(par_sent.len() <= requests as usize, "{} > {}", par_sent.len(), requests);
        }
    }
}

/// P9: a 50-page offset walk with a total starts later pages before it takes the first
/// ones: the requests go out in walk order, and the result is the sequential walk's.
#[test]
fn p9_pages_are_requested_ahead_in_walk_order() {
    let api = Api {
        style: Style::Offset,
        rows: 50 * SIZE,
        total: Some(0),
        fault: None,
    };
    let limits = Limits {
        pages_per_collection: 60,
        ..Limits::default()
    };
    let (par, sent) = walk(&api, &json!({"_all_pages": true}), &limits);
    let (seq, _) = walk(
        &api,
        &json!({"_all_pages": true}),
        &Limits {
            concurrency: 1,
            ..limits.clone()
        },
    );
    let par = par.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(Ok(&par), seq.as_ref());
    assert!(par.verdict.paging_complete, "{}", par.verdict.note);
    assert_eq!(par.items.len(), 50 * SIZE);
    let offsets: Vec<u64> = sent.iter().filter_map(|r| arg_u64(r, "offset")).collect();
    let want: Vec<u64> = (0..50).map(|k| k * SIZE as u64).collect();
    assert_eq!(offsets, want, "each page once, in order");
}
