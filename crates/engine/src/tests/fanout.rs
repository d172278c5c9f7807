//! Fan-out (E1–E5) and live progress (S1) against in-memory APIs.

use crate::tests::kit::*;
use crate::tests::walk::{page_api, page_schema, walk};
use crate::*;
use serde_json::{json, Value};

#[test]
fn e1_e4_fan_out_tags_rows_and_reports_failures() {
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |req, _| match arg_u64(req, "owner_id") {
        Some(2) => status(404, "owner 2 not found"),
        Some(o) => {
            ok(json!({"data": [{"id": o * 10}, {"id": o * 10 + 1, "owner_id": "api's own"}]}))
        }
        None => status(400, "missing"),
    });
    let args = json!({"_for_each": {"key": "owner_id", "values": ["1", 2, 3, 3, "x"]}});
    let o = walk(&page_schema(None), args, &api, &clock, &Limits::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let rows: Vec<Value> = o.items.iter().map(Item::to_value).collect();
    assert_eq!(
        rows,
        [
            json!({"id": 10, "owner_id": 1}),
            json!({"id": 11, "owner_id": "api's own"}),
            json!({"id": 30, "owner_id": 3}),
            json!({"id": 31, "owner_id": "api's own"})
        ]
    );
    assert_eq!(api.requests().len(), 3, "deduplicated after coercion");
    let errs: Vec<(Value, Option<u16>)> = o
        .for_each_errors
        .iter()
        .map(|e| (e.value.clone(), e.status))
        .collect();
    assert_eq!(errs, [(json!("x"), None), (json!(2), Some(404))]);
    assert!(o.for_each_errors[1].error.contains("owner 2 not found"));
    assert!(!o.is_complete());
    assert!(o.verdict.note.contains("2 of 4"), "{}", o.verdict.note);
    assert!(
        o.verdict.note.contains("request for 2 failed"),
        "{}",
        o.verdict.note
    );
}

#[test]
fn e4_every_value_failing_fails_the_call() {
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |_, _| status(403, "forbidden"));
    let e = walk(
        &page_schema(None),
        json!({"_for_each": {"key": "owner_id", "values": [1, 2]}}),
        &api,
        &clock,
        &Limits::default(),
    );
    let e = e.err().unwrap_or_else(|| panic!("expected failure"));
    assert_eq!(e.code(), "upstream_failed");
    assert!(
        e.detail()
            .contains("1 → the upstream answered 403: forbidden")
            && e.detail()
                .contains("2 → the upstream answered 403: forbidden"),
        "{}",
        e.detail()
    );
}

#[test]
fn e5_fan_out_and_all_pages_share_one_budget() {
    let clock = FakeClock::default();
    let api = page_api(&clock, 25, 1000, |r, _| json!({"data": r}));
    let args =
        json!({"_all_pages": true, "_for_each": {"key": "owner_id", "values": [1, 2, 3, 4]}});
    let limits = Limits {
        requests: 7,
        ..Limits::default()
    };
    let o =
        walk(&page_schema(Some(10)), args, &api, &clock, &limits).unwrap_or_else(|e| panic!("{e}"));
    // Each owner has 3 pages: owners 1 and 2 complete (6 requests), owner 3 gets one page.
    assert_eq!(api.requests().len(), 7);
    assert_eq!(o.items.len(), 25 + 25 + 10);
    assert_eq!(o.verdict.stopped_by, Some(StopReason::Requests));
    assert!(
        o.for_each_errors.is_empty(),
        "a bound is not a failed value: {:?}",
        o.for_each_errors
    );
    assert!(
        o.verdict
            .note
            .contains("1 `_for_each` values were not fetched")
            && o.verdict.note.contains('4'),
        "{}",
        o.verdict.note
    );
    let owners: Vec<u64> = o
        .items
        .iter()
        .filter_map(|i| i.to_value()["owner_id"].as_u64())
        .collect();
    assert_eq!(owners.iter().filter(|o| **o == 3).count(), 10);
    // The pages bound is per collection: every owner gets its own 2 pages.
    let clock = FakeClock::default();
    let api = page_api(&clock, 1000, 1000, |r, _| json!({"data": r}));
    let args = json!({"_all_pages": true, "_for_each": {"key": "owner_id", "values": [1, 2]}});
    let limits = Limits {
        pages_per_collection: 2,
        ..Limits::default()
    };
    let o = walk(&page_schema(Some(10)), args, &api, &clock, &limits);
    assert!(o.is_ok_and(|o| o.items.len() == 40 && o.verdict.stopped_by == Some(StopReason::Pages)));
}

#[test]
fn s1_progress_is_throttled_and_names_the_value() {
    let clock = FakeClock::default();
    let mut api = page_api(&clock, 1_000, 1000, |r, _| json!({"data": r}));
    api.latency_ms = 300;
    let schema = page_schema(Some(50));
    let a = analyze(&schema);
    let limits = Limits::default();
    let plan = parse_call(
        &a,
        &schema,
        json!({"_all_pages": true, "_for_each": {"key": "owner_id", "values": [7, 8]}}),
        true,
        &limits,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let log = ProgressLog::default();
    let o = block_on(run(&plan, &a, &api, &log, &clock, &limits)).unwrap_or_else(|e| panic!("{e}"));
    let reports = log.all();
    let elapsed = 300 * u64::from(o.requests);
    assert!(!reports.is_empty());
    assert!(
        reports.len() as u64 <= elapsed / 750,
        "{} reports in {elapsed} ms",
        reports.len()
    );
    for w in reports.windows(2) {
        assert!(w[1].elapsed_ms - w[0].elapsed_ms >= 750);
    }
    let last = reports
        .last()
        .cloned()
        .unwrap_or_else(|| panic!("no report"));
    assert_eq!((last.pages_max, last.requests_max), (20, 60));
    assert_eq!(last.value, Some(json!(8)));
    let wire = serde_json::to_value(&last).unwrap_or_default();
    for k in [
        "page",
        "pagesMax",
        "items",
        "requests",
        "requestsMax",
        "elapsedMs",
        "value",
    ] {
        assert!(wire.get(k).is_some(), "{k}");
    }
}

#[test]
fn e1_fan_out_over_a_get_one_endpoint_gives_one_row_per_value() {
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |req, _| match arg_u64(req, "owner_id") {
        Some(404) => status(404, "no such owner"),
        Some(o) => ok(json!({"id": o, "name": format!("owner {o}")})),
        None => status(400, "missing"),
    });
    let args =
        json!({"_for_each": {"key": "owner_id", "values": [1, 2, 404]}, "_fields": ["name"]});
    let o = walk(&page_schema(None), args, &api, &clock, &Limits::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let rows: Vec<Value> = o.items.iter().map(Item::to_value).collect();
    assert_eq!(
        rows,
        [
            json!({"id": 1, "name": "owner 1", "owner_id": 1}),
            json!({"id": 2, "name": "owner 2", "owner_id": 2})
        ]
    );
    assert_eq!(o.for_each_errors.len(), 1);
    // A text body is one (string) row rather than nothing.
    let api = FakeApi::new(&clock, |_, _| {
        Ok(UpstreamResponse {
            status: 200,
            headers: vec![],
            body: b"plain text".to_vec(),
        })
    });
    let o = walk(
        &page_schema(None),
        json!({"_fields": ["x"]}),
        &api,
        &clock,
        &Limits::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        o.items.iter().map(Item::to_value).collect::<Vec<_>>(),
        [json!("plain text")]
    );
}
