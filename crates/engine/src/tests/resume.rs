//! P10: walks stopped by a bound, resumed call after call from the point each left, until
//! the union is the whole set — page numbers, offsets, cursors, next URLs and fan-outs,
//! with bounds that cut between pages and inside one. Every test checks the union row by
//! row (ids, order, no duplicates) and every call's verdict.

use crate::tests::kit::*;
use crate::tests::walk::{ids, offset_api, offset_schema, page_api, page_schema};
use crate::walk::resume;
use crate::*;
use serde_json::{json, Value};

/// Runs `args` and then resumes until nothing is left (at most `max_calls` calls);
/// returns every call's outcome, each holding the union so far.
fn until_done(
    schema: &Value,
    args: Value,
    api: &FakeApi,
    clock: &FakeClock,
    limits: &Limits,
    max_calls: usize,
) -> Vec<Outcome> {
    let a = analyze(schema);
    let mut plan = parse_call(&a, schema, args, true, limits).unwrap_or_else(|e| panic!("{e}"));
    let mut calls: Vec<Outcome> = Vec::new();
    for _ in 0..max_calls {
        let o = block_on(run(&plan, &a, api, &NoProgress, clock, limits))
            .unwrap_or_else(|e| panic!("{e}"));
        let o = match calls.last() {
            Some(prev) => resume::grow(prev.to_stored_json(), o),
            None => o,
        };
        let next = o.resume.clone();
        plan.resume = next.map(|point| Resume {
            point,
            rows_before: o.items.len(),
            errors_before: o.for_each_errors.clone(),
        });
        calls.push(o);
        if plan.resume.is_none() {
            break;
        }
    }
    calls
}

fn stops(calls: &[Outcome]) -> Vec<Option<StopReason>> {
    calls.iter().map(|o| o.verdict.stopped_by).collect()
}

/// Every call before the last is an honest partial; the last is complete and whole.
fn honest(calls: &[Outcome], n: usize) {
    let (last, before) = calls.split_last().unwrap_or_else(|| panic!("no calls"));
    for o in before {
        assert!(
            !o.verdict.paging_complete && o.verdict.likely_more_rows,
            "{}",
            o.verdict.note
        );
        assert!(o.resume.is_some());
    }
    assert_eq!(
        ids(last),
        (0..n as u64).collect::<Vec<_>>(),
        "{}",
        last.verdict.note
    );
    assert!(last.verdict.paging_complete, "{}", last.verdict.note);
    assert_eq!(last.verdict.stopped_by, Some(StopReason::End));
    assert!(last.resume.is_none() && last.is_complete());
}

#[test]
fn p10_nine_thousand_rows_in_three_calls_by_page_number() {
    let clock = FakeClock::default();
    let api = page_api(&clock, 9_000, 150, |r, n| json!({"data": r, "total": n}));
    let calls = until_done(
        &page_schema(Some(150)),
        json!({"_all_pages": true}),
        &api,
        &clock,
        &Limits::default(),
        5,
    );
    assert_eq!(
        stops(&calls),
        [
            Some(StopReason::Pages),
            Some(StopReason::Pages),
            Some(StopReason::End)
        ]
    );
    assert_eq!(
        calls.iter().map(|o| o.items.len()).collect::<Vec<_>>(),
        [3_000, 6_000, 9_000]
    );
    assert!(
        calls[0].verdict.note.contains("3000 of the 9000"),
        "{}",
        calls[0].verdict.note
    );
    assert!(
        calls[1].verdict.note.contains("6000 of the 9000"),
        "{}",
        calls[1].verdict.note
    );
    honest(&calls, 9_000);
    assert_eq!(api.requests().len(), 60, "every page asked for once");
}

#[test]
fn p10_the_items_bound_cuts_inside_a_page_and_the_page_is_not_read_twice() {
    let clock = FakeClock::default();
    let api = offset_api(&clock, 620, 100, |r, _, _| json!({"items": r}));
    let limits = Limits {
        items: 250,
        ..Limits::default()
    };
    let calls = until_done(
        &offset_schema(),
        json!({"_all_pages": true}),
        &api,
        &clock,
        &limits,
        5,
    );
    assert_eq!(
        stops(&calls)[..2],
        [Some(StopReason::Items), Some(StopReason::Items)]
    );
    assert_eq!(
        calls[0].resume.as_ref().map(|p| p.pending[0].at.clone()),
        Some(Position::Offset(200))
    );
    assert_eq!(
        calls[0].resume.as_ref().map(|p| p.pending[0].skip),
        Some(50)
    );
    honest(&calls, 620);
    assert_eq!(calls.len(), 3);

    let api = page_api(&clock, 330, 100, |r, _| json!({"data": r}));
    let calls = until_done(
        &page_schema(Some(100)),
        json!({"_all_pages": true}),
        &api,
        &clock,
        &limits,
        5,
    );
    assert_eq!(
        calls[0]
            .resume
            .as_ref()
            .map(|p| (p.pending[0].at.clone(), p.pending[0].skip)),
        Some((Position::Page(3), 50))
    );
    honest(&calls, 330);
}

/// A cursor API (`pageToken` → `nextPageToken`) and a next-URL API over `n` rows, 40 a page.
fn cursor_api(clock: &FakeClock, n: usize, by_url: bool) -> FakeApi {
    FakeApi::new(clock, move |req, _| {
        let at = match (&req.next_url, req.args.get("pageToken")) {
            (Some(u), _) => u
                .rsplit('=')
                .next()
                .and_then(|v| v.parse().ok())
                .unwrap_or(0),
            (None, Some(Value::String(t))) => t.trim_start_matches('t').parse().unwrap_or(0),
            _ => 0,
        };
        let end = (at + 40).min(n);
        let mut body = json!({"files": rows(at..end)});
        if end < n {
            body[if by_url { "next" } else { "nextPageToken" }] = if by_url {
                json!(format!("https://api.example.com/files?at={end}"))
            } else {
                json!(format!("t{end}"))
            };
        }
        ok(body)
    })
}

#[test]
fn p10_cursor_and_next_url_walks_resume_where_they_stopped() {
    let s = json!({"type": "object", "properties": {"pageSize": {"type": "integer", "maximum": 40}, "pageToken": {"type": "string"}}});
    let limits = Limits {
        pages_per_collection: 3,
        ..Limits::default()
    };
    for by_url in [false, true] {
        let clock = FakeClock::default();
        let api = cursor_api(&clock, 500, by_url);
        let calls = until_done(&s, json!({"_all_pages": true}), &api, &clock, &limits, 10);
        let at = calls[0].resume.as_ref().map(|p| p.pending[0].at.clone());
        let want = if by_url {
            Position::Url("https://api.example.com/files?at=120".into())
        } else {
            Position::Cursor(json!("t120"))
        };
        assert_eq!(at, Some(want));
        assert_eq!(calls.len(), 5, "13 pages, 3 a call");
        honest(&calls, 500);
        assert_eq!(api.requests().len(), 13);
    }
}

#[test]
fn p10_a_fan_out_resumes_the_values_it_cut_and_the_ones_it_never_reached() {
    let clock = FakeClock::default();
    // 4 owners × 250 rows, 100 a page: 3 pages each, 12 requests in all
    let api = FakeApi::new(&clock, |req, _| {
        let owner = arg_u64(req, "owner_id").unwrap_or(0) as usize;
        let page = arg_u64(req, "page").unwrap_or(1).max(1) as usize;
        let start = ((page - 1) * 100).min(250);
        let rows: Vec<Value> = (start..(start + 100).min(250))
            .map(|i| json!({"id": owner * 1000 + i}))
            .collect();
        ok(json!({"data": rows}))
    });
    let limits = Limits {
        requests: 5,
        ..Limits::default()
    };
    let args =
        json!({"_all_pages": true, "_for_each": {"key": "owner_id", "values": [1, 2, 3, 4]}});
    let calls = until_done(&page_schema(Some(100)), args, &api, &clock, &limits, 5);
    let first = calls[0]
        .resume
        .clone()
        .unwrap_or_else(|| panic!("resumable"));
    assert_eq!(
        first
            .pending
            .iter()
            .map(|p| (p.value, p.at.clone()))
            .collect::<Vec<_>>(),
        [
            (1, Position::Page(3)),
            (2, Position::Start),
            (3, Position::Start)
        ]
    );
    assert_eq!(calls[0].verdict.stopped_by, Some(StopReason::Requests));
    let last = calls.last().unwrap_or_else(|| panic!("calls"));
    assert!(last.is_complete(), "{}", last.verdict.note);
    let want: Vec<u64> = (1..=4u64)
        .flat_map(|o| (0..250).map(move |i| o * 1000 + i))
        .collect();
    assert_eq!(ids(last), want);
    assert_eq!(api.requests().len(), 12, "no page fetched twice");
    assert_eq!(
        last.items[0].to_value()["owner_id"],
        json!(1),
        "rows still tagged (E1)"
    );
}

#[test]
fn p10_a_walk_that_ended_on_its_own_leaves_nothing_to_resume() {
    let clock = FakeClock::default();
    let api = page_api(&clock, 90, 100, |r, _| json!({"data": r}));
    let calls = until_done(
        &page_schema(Some(100)),
        json!({"_all_pages": true}),
        &api,
        &clock,
        &Limits::default(),
        3,
    );
    assert_eq!(calls.len(), 1);
    assert!(calls[0].resume.is_none());
    // a point that does not fit the tool is refused, never walked from the start
    let s = page_schema(Some(100));
    let a = analyze(&s);
    let mut plan = parse_call(
        &a,
        &s,
        json!({"_all_pages": true}),
        true,
        &Limits::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    plan.resume = Some(Resume {
        point: ResumePoint {
            pending: vec![Pending {
                at: Position::Cursor(json!("x")),
                ..Pending::fresh(0)
            }],
        },
        rows_before: 10,
        errors_before: Vec::new(),
    });
    let e = block_on(run(
        &plan,
        &a,
        &api,
        &NoProgress,
        &clock,
        &Limits::default(),
    ))
    .err();
    assert!(e.is_some_and(|e| e.detail().contains("_continue")));
}
