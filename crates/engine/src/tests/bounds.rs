//! Bounds and failures (P3) against in-memory APIs: every bound (pages, items,
//! requests, bytes, time) stops the walk by its name with the rows fetched kept, transient
//! failures are retried within the budget, and a failed page or call is named as such.

use crate::tests::kit::*;
use crate::tests::walk::{ids, page_api, page_schema, walk, walk_all_pages};
use crate::*;
use serde_json::json;
use std::time::Duration;

#[test]
fn p3_pages_bound_is_named() {
    let clock = FakeClock::default();
    let api = page_api(&clock, 10_000, 1000, |r, _| json!({"data": r}));
    let o = walk_all_pages(Some(100), &api, &clock, &Limits::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((o.items.len(), api.requests().len()), (2000, 20));
    assert_eq!(o.verdict.stopped_by, Some(StopReason::Pages));
    assert!(!o.verdict.paging_complete && o.verdict.likely_more_rows);
    assert!(
        o.verdict.note.contains("20 pages") && o.verdict.note.contains("partial"),
        "{}",
        o.verdict.note
    );
}

#[test]
fn p3_items_stop_at_exactly_the_limit() {
    let clock = FakeClock::default();
    let api = page_api(&clock, 10_000, 1000, |r, _| json!({"data": r}));
    let limits = Limits {
        items: 250,
        ..Limits::default()
    };
    let o = walk_all_pages(Some(100), &api, &clock, &limits).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ids(&o), (0..250).collect::<Vec<_>>());
    assert_eq!(o.verdict.stopped_by, Some(StopReason::Items));
    // A limit landing exactly on a page boundary stops before asking for more.
    let clock = FakeClock::default();
    let api = page_api(&clock, 10_000, 1000, |r, _| json!({"data": r}));
    let limits = Limits {
        items: 200,
        ..Limits::default()
    };
    let o = walk_all_pages(Some(100), &api, &clock, &limits);
    assert_eq!(api.requests().len(), 2);
    assert!(
        o.is_ok_and(|o| o.items.len() == 200 && o.verdict.stopped_by == Some(StopReason::Items))
    );
}

#[test]
fn p3_requests_bytes_and_time_bounds() {
    let clock = FakeClock::default();
    let api = page_api(&clock, 10_000, 1000, |r, _| json!({"data": r}));
    let o = walk(
        &page_schema(Some(10)),
        json!({"_all_pages": true}),
        &api,
        &clock,
        &Limits {
            requests: 5,
            ..Limits::default()
        },
    );
    assert!(
        o.is_ok_and(|o| o.verdict.stopped_by == Some(StopReason::Requests) && o.items.len() == 50)
    );
    assert_eq!(api.requests().len(), 5);

    let clock = FakeClock::default();
    let api = page_api(&clock, 10_000, 1000, |r, _| json!({"data": r}));
    let o = walk(
        &page_schema(Some(100)),
        json!({"_all_pages": true}),
        &api,
        &clock,
        &Limits {
            bytes: 5_000,
            ..Limits::default()
        },
    );
    assert!(o.is_ok_and(|o| o.verdict.stopped_by == Some(StopReason::Bytes) && o.bytes >= 5_000));
    assert_eq!(api.requests().len(), 2);

    let clock = FakeClock::default();
    let mut api = page_api(&clock, 10_000, 1000, |r, _| json!({"data": r}));
    api.latency_ms = 7_000;
    let o = walk_all_pages(Some(100), &api, &clock, &Limits::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(o.verdict.stopped_by, Some(StopReason::Time));
    assert_eq!(api.requests().len(), 9, "the 9th request ends past 60 s");
    assert!(api
        .requests()
        .iter()
        .all(|r| r.timeout <= Duration::from_secs(60)));
}

#[test]
fn p3_transient_failures_are_retried_honouring_retry_after() {
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |req, n| match n {
        0 => Err(UpstreamFailure {
            transient: true,
            status: Some(429),
            retry_after: Some(Duration::from_secs(2)),
            message: "slow down".into(),
            tool_error: false,
        }),
        1 => status(503, "busy"),
        _ => ok(json!({"data": rows(0..3), "page": arg_u64(req, "page")})),
    });
    let o = walk_all_pages(Some(100), &api, &clock, &Limits::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((o.items.len(), o.requests), (3, 3));
    assert!(
        clock.0.load(std::sync::atomic::Ordering::SeqCst) >= 2_000 + 500,
        "waited for Retry-After then backed off"
    );
    assert!(o.verdict.paging_complete);
}

#[test]
fn p3_a_failing_page_keeps_earlier_rows() {
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |req, _| match arg_u64(req, "page") {
        Some(3) => status(400, "{\"error\": \"bad page\"}"),
        p => {
            let start = (p.unwrap_or(1) as usize - 1) * 10;
            ok(json!({"data": rows(start..start + 10)}))
        }
    });
    let o = walk_all_pages(Some(10), &api, &clock, &Limits::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ids(&o), (0..20).collect::<Vec<_>>());
    assert_eq!(o.verdict.stopped_by, Some(StopReason::UpstreamError));
    assert!(!o.verdict.paging_complete);
    assert!(
        o.verdict.note.contains("HTTP 400") && o.verdict.note.contains("bad page"),
        "{}",
        o.verdict.note
    );

    // Retries run out on a page that keeps failing transiently.
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |req, _| match arg_u64(req, "page") {
        Some(1) => ok(json!({"data": rows(0..10)})),
        _ => status(502, "bad gateway"),
    });
    let o = walk_all_pages(Some(10), &api, &clock, &Limits::default());
    assert_eq!(api.requests().len(), 1 + 4, "one try and three retries");
    assert!(o.is_ok_and(
        |o| o.items.len() == 10 && o.verdict.stopped_by == Some(StopReason::UpstreamError)
    ));
}

#[test]
fn plain_call_failure_is_an_upstream_error() {
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |_, _| {
        status(404, "{\"message\": \"no such project\"}")
    });
    let e = walk(
        &page_schema(None),
        json!({"status": "x"}),
        &api,
        &clock,
        &Limits::default(),
    )
    .err();
    let e = e.unwrap_or_else(|| panic!("expected failure"));
    assert_eq!(
        (e.code(), e.error_code().status()),
        ("upstream_failed", 502)
    );
    assert!(matches!(
        e,
        EngineError::Upstream {
            status: Some(404),
            ..
        }
    ));
    assert!(e.detail().contains("no such project"));
}

/// M1: a tool that ran and reported its own failure (an MCP `isError`) is described as
/// that, never as an API that could not be reached; it is not retried.
#[test]
fn a_tools_own_failure_is_described_as_the_tools() {
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |_, _| {
        Err(UpstreamFailure {
            transient: false,
            status: None,
            retry_after: None,
            message: "the archive is offline".into(),
            tool_error: true,
        })
    });
    let e = walk(
        &page_schema(None),
        json!({"status": "x"}),
        &api,
        &clock,
        &Limits::default(),
    )
    .err()
    .unwrap_or_else(|| panic!("expected failure"));
    assert_eq!(e.code(), "upstream_failed");
    assert_eq!(
        e.detail(),
        "The tool reported an error: the archive is offline"
    );
    assert_eq!(api.requests().len(), 1);
}

/// P3: a request that fails because the wall clock ran out (a timeout at the limit, or a
/// replica's shutdown cutting the walk) is the time bound, not an upstream error: the
/// rows already fetched are kept and the verdict names `time`.
#[test]
fn a_request_cut_by_the_wall_clock_ends_the_walk_by_time() {
    let clock = FakeClock::default();
    let c = clock.clone();
    let api = FakeApi::new(&clock, move |req, n| {
        if n == 2 {
            c.advance(61_000);
            return Err(UpstreamFailure {
                transient: true,
                status: None,
                retry_after: None,
                message: "timed out".into(),
                tool_error: false,
            });
        }
        let page = arg_u64(req, "page").unwrap_or(1) as usize;
        ok(json!({"data": rows((page - 1) * 100..page * 100)}))
    });
    let o = walk_all_pages(Some(100), &api, &clock, &Limits::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(o.verdict.stopped_by, Some(StopReason::Time));
    assert!(!o.verdict.paging_complete);
    assert_eq!(o.items.len(), 200, "the two pages fetched are kept");
    assert_eq!(api.requests().len(), 3, "no retry past the time limit");
}

/// A clock whose call is cancelled once `flag` is set (M3).
struct CancelledClock {
    clock: FakeClock,
    flag: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Clock for CancelledClock {
    fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }
    fn sleep(&self, d: Duration) -> impl std::future::Future<Output = ()> + Send {
        self.clock.sleep(d)
    }
    fn cancelled(&self) -> bool {
        self.flag.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// M3: a call cancelled mid-walk stops as at a bound, named `cancelled`, with the rows of
/// the pages fetched before kept (an honest partial) and a point to resume from (P10).
#[test]
fn m3_a_cancelled_walk_keeps_the_pages_fetched() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let clock = FakeClock::default();
    let flag = std::sync::Arc::new(AtomicBool::new(false));
    let set = flag.clone();
    // the third request is answered, and the call is cancelled as it is
    let api = FakeApi::new(&clock, move |req, i| {
        if i == 2 {
            set.store(true, Ordering::SeqCst);
        }
        let page = arg_u64(req, "page").unwrap_or(1).max(1) as usize;
        let start = (page - 1) * 100;
        ok(json!({"data": rows(start..(start + 100).min(10_000))}))
    });
    let schema = page_schema(Some(100));
    let a = analyze(&schema);
    let limits = Limits {
        concurrency: 1,
        ..Limits::default()
    };
    let plan = parse_call(&a, &schema, json!({"_all_pages": true}), true, &limits)
        .unwrap_or_else(|e| panic!("{e}"));
    let cancelling = CancelledClock { clock, flag };
    let o = block_on(run(&plan, &a, &api, &NoProgress, &cancelling, &limits))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(o.verdict.stopped_by, Some(StopReason::Cancelled));
    assert_eq!(ids(&o), (0..300).collect::<Vec<_>>());
    assert_eq!(api.requests().len(), 3, "no request after the cancel");
    assert!(!o.verdict.paging_complete && o.verdict.likely_more_rows);
    assert!(o.verdict.note.contains("cancelled"), "{}", o.verdict.note);
    assert!(o.resume.is_some(), "a cancelled walk can be resumed (P10)");
    assert_eq!(StopReason::Cancelled.as_str(), "cancelled");
}

/// M3: a call cancelled before its first page came fails saying so (nothing to keep),
/// not as an API that could not be reached.
#[test]
fn m3_a_call_cancelled_before_any_page_says_so() {
    let clock = FakeClock::default();
    let api = page_api(&clock, 10_000, 100, |r, _| json!({"data": r}));
    let schema = page_schema(Some(100));
    let a = analyze(&schema);
    let limits = Limits::default();
    let plan = parse_call(&a, &schema, json!({"_all_pages": true}), true, &limits)
        .unwrap_or_else(|e| panic!("{e}"));
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let cancelled = CancelledClock { clock, flag };
    match block_on(run(&plan, &a, &api, &NoProgress, &cancelled, &limits)) {
        Err(EngineError::Upstream {
            status: None,
            detail,
        }) => {
            assert!(detail.contains("cancelled"), "{detail}")
        }
        other => panic!("{other:?}"),
    }
    assert!(api.requests().is_empty(), "nothing asked after the cancel");
}
