//! P9: the same generated upstream walked one request at a time and with requests started
//! ahead gives the same outcome — rows, verdict (`_stoppedBy`, note), `_forEachErrors`,
//! request/page/byte counts and the resume point — whatever the page style, row count,
//! budget, lying total or last-page link, or failing page; and the requests really sent
//! never exceed the request budget (P3), whatever the API does.
use crate::tests::kit::*;
use crate::*;
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
    /// `None`: no last-page link; `Some((d, body))`: a link to the page holding row
    /// rows + d − 1 (a lie unless d = 0), in the body when `body`, else a `Link` header.
    last: Option<(i64, bool)>,
    fault: Option<(u64, usize, Fault)>,
}

fn schema(style: Style) -> Value {
    let paging = match style {
        // a 1-based API that says so (P11's check of a silent schema is not P9's topic)
        Style::Page => json!({"type": "integer", "minimum": 1}),
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
    let mut headers = Vec::new();
    if let Some((d, in_body)) = api.last {
        let last_row = (api.rows as i64 + d - 1).max(0) as usize;
        let url = match api.style {
            Style::Page => format!("/items?page={}&limit={size}", last_row / size.max(1) + 1),
            Style::Offset => format!(
                "/items?offset={}&limit={size}",
                last_row / size.max(1) * size
            ),
            Style::Cursor => "/items?cursor=c0".to_owned(),
        };
        match in_body {
            true => body["links"] = json!({"last": url}),
            false => headers.push((
                "Link".to_owned(),
                format!("<https://api.example.com{url}>; rel=\"last\""),
            )),
        }
    }
    let mut resp = ok(body)?;
    resp.headers = headers;
    Ok(resp)
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

/// An API that tells the truth: totals and last-page links exact, and no page other than
/// it should be except transient failures that pass when retried — which they do only
/// when the walk has the time to retry: under a short time limit (`wall_ms` below the
/// generous 60 s) a busy page may fail for good like a page that is down, and requests
/// sent ahead of it were spent for nothing, as with a lie.
fn truthful(api: &Api, wall_ms: u64) -> bool {
    api.total.is_none_or(|d| d == 0)
        && api.last.is_none_or(|(d, _)| d == 0)
        && api
            .fault
            .is_none_or(|(_, _, f)| matches!(f, Fault::Busy) && wall_ms >= 60_000)
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
    #![proptest_config(prop_config(256))]

    #[test]
    fn p9_parallel_walk_equals_sequential_walk(
        style in style(),
        rows in rows(),
        total in prop::option::of(prop_oneof![Just(0i64), -15i64..25]),
        last in prop::option::of((prop_oneof![Just(0i64), -15i64..25], any::<bool>())),
        fault in prop::option::of((1u64..3, 1usize..8, fault())),
        values in 1usize..4,
        requests in 1u32..40,
        pages in 1u32..12,
        items in prop_oneof![Just(5_000usize), 1usize..120],
        bytes in prop_oneof![Just(24usize << 20), 200usize..3_000],
        wall_ms in prop_oneof![Just(60_000u64), 400u64..3_000],
        concurrency in 2usize..7,
    ) {
        let api = Api { style, rows, total, last, fault };
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
        // P3: the requests really sent stay within the budget, whatever the API does
        prop_assert!(par_sent.len() <= requests as usize, "{} > {}", par_sent.len(), requests);
        prop_assert!(seq_sent.len() <= requests as usize);
        if truthful(&api, wall_ms) || !cut_short(&seq, &par) {
            prop_assert_eq!(&seq, &par);
            // every request of the sequential walk was made by the parallel one
            for r in &seq_sent {
                prop_assert!(par_sent.iter().any(|p| p.args == r.args && p.next_url == r.next_url));
            }
        } else {
            // An API that misled the guesses (or a page that failed for good), and the
            // budget spent on what was sent ahead for them (or of the failed page): the
            // walk stopped at the request bound before the sequential one,
            // with the same rows up to there and a verdict that says the set is partial.
            let (seq, par) = (seq.as_ref().unwrap(), par.as_ref().unwrap());
            prop_assert!(par.verdict.stopped_by.is_some());
            prop_assert!(!par.verdict.paging_complete);
            prop_assert!(par.items.len() <= seq.items.len());
            prop_assert_eq!(&par.items[..], &seq.items[..par.items.len()]);
            prop_assert!(par.requests < seq.requests);
            prop_assert!(par.resume.is_some(), "a walk cut by a bound can be resumed (P10)");
        }
    }
}

/// Whether the parallel walk made fewer requests of its own than the sequential one (the
/// budget refused it one): the one way an API that misleads the guesses can change the
/// outcome.
fn cut_short(seq: &Result<Outcome, EngineError>, par: &Result<Outcome, EngineError>) -> bool {
    match (seq, par) {
        (Ok(s), Ok(p)) => p.requests < s.requests,
        _ => false,
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
        last: None,
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

/// Both walks of `api` with `limits` (the parallel one as given, the sequential one with
/// concurrency 1): outcomes and requests sent.
#[allow(clippy::type_complexity)]
fn both(
    api: &Api,
    limits: &Limits,
) -> (
    (Result<Outcome, EngineError>, Vec<UpstreamRequest>),
    (Result<Outcome, EngineError>, Vec<UpstreamRequest>),
) {
    let args = json!({"_all_pages": true});
    let sequential = Limits {
        concurrency: 1,
        ..limits.clone()
    };
    (walk(api, &args, limits), walk(api, &args, &sequential))
}

/// P9: a last-page link is evidence of random access like a total, and trusted no further:
/// an honest one lets later pages go ahead with nothing wasted; one that lies (page 9 of 3,
/// as a `Link` header or in the body) costs requests sent ahead — within the budget (P3) —
/// and nothing else: rows and verdict are the sequential walk's, complete and exact.
#[test]
fn p9_a_last_page_link_sends_pages_ahead_and_a_lying_one_changes_no_verdict() {
    let limits = Limits {
        requests: 12,
        ..Limits::default()
    };
    for (lie, in_body) in [(0, false), (0, true), (60, false), (60, true)] {
        let api = Api {
            style: Style::Page,
            rows: 3 * SIZE - 4,
            total: None,
            last: Some((lie, in_body)),
            fault: None,
        };
        let ((par, par_sent), (seq, seq_sent)) = both(&api, &limits);
        assert_eq!(par, seq, "lie {lie}, in body {in_body}");
        let par = par.unwrap_or_else(|e| panic!("{e}"));
        assert!(par.verdict.paging_complete, "{}", par.verdict.note);
        assert_eq!(par.items.len(), 3 * SIZE - 4);
        assert_eq!(seq_sent.len(), 3);
        match lie {
            0 => assert_eq!(par_sent.len(), 3, "an honest link wastes nothing"),
            _ => assert!(
                (4..=12).contains(&par_sent.len()),
                "pages went ahead on the link's word, within the budget: {}",
                par_sent.len()
            ),
        }
    }
}

/// P3, P9: requests started ahead are reserved against the budget before they are sent, so
/// a retry of the page the walk is on never lets the requests sent pass it: a 40-page walk
/// with a budget of 20 and a page that fails twice before it answers sends at most 20, and
/// its outcome is the sequential walk's (which the retries stop earlier).
#[test]
fn p9_retries_never_push_the_requests_sent_past_the_budget() {
    for page in [2, 5, 12, 17] {
        let api = Api {
            style: Style::Offset,
            rows: 40 * SIZE,
            total: Some(0),
            last: None,
            fault: Some((1, page, Fault::Busy)),
        };
        let limits = Limits {
            requests: 20,
            pages_per_collection: 60,
            ..Limits::default()
        };
        let ((par, par_sent), (seq, seq_sent)) = both(&api, &limits);
        assert_eq!(par, seq, "busy page {page}");
        assert_eq!(seq_sent.len(), 20);
        assert!(
            par_sent.len() <= 20,
            "{} sent for a budget of 20",
            par_sent.len()
        );
        let par = par.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(par.verdict.stopped_by, Some(StopReason::Requests));
    }
}
