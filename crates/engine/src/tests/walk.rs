//! Walk behaviour (P2, P4, P7, L3) against in-memory APIs: page sizes, where a walk ends,
//! what a single page says about the rest, reserved arguments, body parameters. The
//! bounds and failures are in `bounds.rs`; the in-memory page and offset APIs and the
//! `walk` helper here are shared by the other engine tests.

use crate::tests::kit::*;
use crate::*;
use serde_json::{json, Value};

/// A 1-based page-number tool that says so (`minimum: 1`), as the tests of bounds,
/// fan-out and resumption assume; what a schema that says nothing costs (P11's request
/// without the page parameter) is [`silent_page_schema`]'s, tested here and in
/// `tests::first_page`/`tests::evidence`.
pub(crate) fn page_schema(max: Option<u64>) -> Value {
    let mut s = silent_page_schema(max);
    s["properties"]["page"]["minimum"] = json!(1);
    s
}

/// [`page_schema`] without a word on the first page.
pub(crate) fn silent_page_schema(max: Option<u64>) -> Value {
    let mut size = json!({"type": "integer"});
    if let Some(m) = max {
        size["maximum"] = json!(m);
    }
    json!({"type": "object", "properties": {
        "per_page": size, "page": {"type": "integer"}, "status": {"type": "string"},
        "owner_id": {"type": "integer"}
    }})
}

pub(crate) fn offset_schema() -> Value {
    json!({"type": "object", "properties": {"limit": {"type": "integer", "maximum": 100}, "offset": {"type": "integer"}}})
}

/// A page-number API over `n` rows that never returns more than `cap` per page.
pub(crate) fn page_api(
    clock: &FakeClock,
    n: usize,
    cap: usize,
    envelope: impl Fn(Vec<Value>, usize) -> Value + Send + Sync + 'static,
) -> FakeApi {
    FakeApi::new(clock, move |req, _| {
        let size = (arg_u64(req, "per_page").unwrap_or(10) as usize).min(cap);
        let page = arg_u64(req, "page").unwrap_or(1).max(1) as usize;
        let start = ((page - 1) * size).min(n);
        ok(envelope(rows(start..(start + size).min(n)), n))
    })
}

pub(crate) fn offset_api(
    clock: &FakeClock,
    n: usize,
    cap: usize,
    envelope: impl Fn(Vec<Value>, usize, usize) -> Value + Send + Sync + 'static,
) -> FakeApi {
    FakeApi::new(clock, move |req, _| {
        let size = (arg_u64(req, "limit").unwrap_or(10) as usize).min(cap);
        let at = (arg_u64(req, "offset").unwrap_or(0) as usize).min(n);
        let end = (at + size).min(n);
        ok(envelope(rows(at..end), n, end))
    })
}

pub(crate) fn walk(
    schema: &Value,
    args: Value,
    api: &FakeApi,
    clock: &FakeClock,
    limits: &Limits,
) -> Result<Outcome, EngineError> {
    let a = analyze(schema);
    let plan = parse_call(&a, schema, args, true, limits)?;
    block_on(run(&plan, &a, api, &NoProgress, clock, limits))
}

/// [`walk`] of every page (`_all_pages`) of a page-numbered list whose schema allows at
/// most `per_page_max` rows a page.
pub(crate) fn walk_all_pages(
    per_page_max: Option<u64>,
    api: &FakeApi,
    clock: &FakeClock,
    limits: &Limits,
) -> Result<Outcome, EngineError> {
    walk(
        &page_schema(per_page_max),
        json!({"_all_pages": true}),
        api,
        clock,
        limits,
    )
}

pub(crate) fn ids(o: &Outcome) -> Vec<u64> {
    o.items
        .iter()
        .filter_map(|i| i.to_value()["id"].as_u64())
        .collect()
}

#[test]
fn p2_page_walk_asks_schema_maximum_and_stops_at_short_page() {
    let clock = FakeClock::default();
    let api = page_api(&clock, 250, 1000, |r, _| json!({"data": r}));
    let o = walk_all_pages(Some(100), &api, &clock, &Limits::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ids(&o), (0..250).collect::<Vec<_>>());
    let reqs = api.requests();
    assert_eq!(reqs.len(), 3);
    assert!(reqs.iter().all(|r| r.args["per_page"] == json!(100)));
    assert_eq!(
        reqs.iter()
            .map(|r| r.args["page"].clone())
            .collect::<Vec<_>>(),
        [json!(1), json!(2), json!(3)]
    );
    assert!(o.verdict.paging_complete && !o.verdict.likely_more_rows);
    assert_eq!(o.verdict.stopped_by, Some(StopReason::End));
    assert!(o.verdict.note.contains("Every page"), "{}", o.verdict.note);
    // P11: a schema that says nothing of the first page costs one request, the API's own
    // first page (no `page`), whose rows page 1 repeats: the same rows, the same verdict
    let clock = FakeClock::default();
    let api = page_api(&clock, 250, 1000, |r, _| json!({"data": r}));
    let o = walk(
        &silent_page_schema(Some(100)),
        json!({"_all_pages": true}),
        &api,
        &clock,
        &Limits::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ids(&o), (0..250).collect::<Vec<_>>());
    let pages: Vec<Value> = api
        .requests()
        .iter()
        .map(|r| r.args.get("page").cloned().unwrap_or(Value::Null))
        .collect();
    assert_eq!(pages, [Value::Null, json!(1), json!(2), json!(3)]);
    assert!(o.verdict.paging_complete && !o.verdict.likely_more_rows);
    assert_eq!(o.verdict.stopped_by, Some(StopReason::End));
}

#[test]
fn p2_default_page_size_is_100_and_empty_page_ends() {
    let clock = FakeClock::default();
    let api = page_api(&clock, 200, 1000, |r, _| json!({"items": r}));
    let o =
        walk_all_pages(None, &api, &clock, &Limits::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(o.items.len(), 200);
    assert_eq!(api.requests().len(), 3, "two full pages and an empty one");
    assert_eq!(api.requests()[0].args["per_page"], json!(100));
    assert!(o.verdict.paging_complete);
}

#[test]
fn p2_has_more_false_ends_a_full_page_and_total_reached_ends() {
    let clock = FakeClock::default();
    let api = page_api(
        &clock,
        200,
        1000,
        |r, n| json!({"data": r, "has_more": false, "total": n}),
    );
    let o = walk_all_pages(None, &api, &clock, &Limits::default());
    assert_eq!(api.requests().len(), 1);
    assert!(o.is_ok_and(|o| o.items.len() == 100
        && !o.verdict.paging_complete
        && o.verdict.total == Some(200)));
    let clock = FakeClock::default();
    let api = page_api(&clock, 200, 1000, |r, n| json!({"data": r, "total": n}));
    let o =
        walk_all_pages(None, &api, &clock, &Limits::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (api.requests().len(), o.items.len(), o.verdict.total),
        (2, 200, Some(200))
    );
    assert!(o.verdict.paging_complete);
}

#[test]
fn p2_short_page_is_not_the_end_when_the_api_says_more() {
    // The API silently caps pages at 30 rows but announces a total.
    let clock = FakeClock::default();
    let api = offset_api(&clock, 95, 30, |r, n, _| json!({"results": r, "count": n}));
    let o = walk(
        &offset_schema(),
        json!({"_all_pages": true}),
        &api,
        &clock,
        &Limits::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ids(&o), (0..95).collect::<Vec<_>>());
    let offsets: Vec<Value> = api
        .requests()
        .iter()
        .map(|r| r.args["offset"].clone())
        .collect();
    assert_eq!(
        offsets,
        [json!(0), json!(30), json!(60), json!(90)],
        "offset steps by rows received"
    );
    assert!(o.verdict.paging_complete);
    // Same API with has_more instead of a total.
    let clock = FakeClock::default();
    let api = offset_api(
        &clock,
        95,
        30,
        |r, n, end| json!({"data": r, "has_more": end < n}),
    );
    let o = walk(
        &offset_schema(),
        json!({"_all_pages": true}),
        &api,
        &clock,
        &Limits::default(),
    );
    assert_eq!(o.map(|o| o.items.len()).ok(), Some(95));
}

#[test]
fn l3_reserved_arguments_never_reach_upstream() {
    let clock = FakeClock::default();
    let api = page_api(&clock, 30, 1000, |r, _| json!({"data": r}));
    let args = json!({"status": "open", "_fields": ["id"], "_filter": [{"field": "id", "op": "gt", "value": 3}],
                      "_all_pages": true, "_refresh": true, "_for_each": {"key": "owner_id", "values": [1, 2]}});
    walk(&page_schema(None), args, &api, &clock, &Limits::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let reqs = api.requests();
    assert!(!reqs.is_empty());
    for r in reqs {
        assert!(r.args.keys().all(|k| !k.starts_with('_')), "{:?}", r.args);
        assert_eq!(r.args["status"], json!("open"));
    }
}

#[test]
fn p7_single_page_reports_that_the_api_has_more() {
    let clock = FakeClock::default();
    let api = page_api(
        &clock,
        500,
        1000,
        |r, n| json!({"data": r, "has_more": true, "total": n}),
    );
    let schema = page_schema(None);
    let a = analyze(&schema);
    let limits = Limits::default();
    let plan = parse_call(&a, &schema, json!({"per_page": 20}), true, &limits)
        .unwrap_or_else(|e| panic!("{e}"));
    let o = block_on(run(&plan, &a, &api, &NoProgress, &clock, &limits))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(o.verdict.likely_more_rows && !o.verdict.paging_complete);
    assert_eq!(o.verdict.stopped_by, None);
    let p = present(&o, &plan, "res_1", &limits);
    assert_eq!(p.value["_likelyMoreRows"], json!(true));
    assert_eq!(p.value["_total"], json!(500));
    assert!(p.value["_note"]
        .as_str()
        .is_some_and(|n| n.contains("_all_pages: true") && n.contains("500")));
    assert_eq!(
        p.value["data"].as_array().map(Vec::len),
        Some(20),
        "the tool's own shape"
    );
    assert!(!p.stored && !p.truncated);
    // Looping off: the payload is the tool's own, untouched.
    let plan = parse_call(&a, &schema, json!({"per_page": 20}), false, &limits)
        .unwrap_or_else(|e| panic!("{e}"));
    let o = block_on(run(&plan, &a, &api, &NoProgress, &clock, &limits))
        .unwrap_or_else(|e| panic!("{e}"));
    let p = present(&o, &plan, "res_2", &limits);
    assert!(p.value.get("_likelyMoreRows").is_none());
}

#[test]
fn p4_single_page_of_a_paginated_tool_is_not_called_complete() {
    let clock = FakeClock::default();
    let api = page_api(&clock, 500, 1000, |r, _| json!({"data": r}));
    let o = walk(
        &page_schema(None),
        json!({"_fields": ["id"]}),
        &api,
        &clock,
        &Limits::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(!o.verdict.paging_complete);
    assert!(o.verdict.note.contains("_all_pages"), "{}", o.verdict.note);
    // A tool without pagination returns a complete set.
    let schema = json!({"type": "object", "properties": {"q": {"type": "string"}}});
    let api = FakeApi::new(&clock, |_, _| ok(json!([{"id": 1}])));
    let o = walk(
        &schema,
        json!({"_fields": ["id"]}),
        &api,
        &clock,
        &Limits::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(o.verdict.paging_complete && o.is_complete());
}

#[test]
fn body_parameters_are_walked_in_the_body() {
    let schema = json!({"type": "object", "properties": {"body": {"type": "object", "properties": {
        "pageSize": {"type": "integer", "maximum": 40}, "pageNumber": {"type": "integer", "minimum": 0}}}}});
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |req, _| {
        let b = &req.args["body"];
        let (size, page) = (
            b["pageSize"].as_u64().unwrap_or(0) as usize,
            b["pageNumber"].as_u64().unwrap_or(0) as usize,
        );
        let start = (page * size).min(90);
        ok(json!({"records": rows(start..(start + size).min(90))}))
    });
    let o = walk(
        &schema,
        json!({"_all_pages": true}),
        &api,
        &clock,
        &Limits::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ids(&o), (0..90).collect::<Vec<_>>());
    assert_eq!(
        api.requests()[0].args,
        json!({"body": {"pageSize": 40, "pageNumber": 0}})
            .as_object()
            .cloned()
            .unwrap_or_default()
    );
}

#[test]
fn p7_a_full_page_without_signals_is_unproven_not_more() {
    let clock = FakeClock::default();
    let api = page_api(&clock, 500, 1000, |r, _| json!({"data": r}));
    let schema = page_schema(None);
    let a = analyze(&schema);
    let limits = Limits::default();
    let plan = parse_call(&a, &schema, json!({"per_page": 20}), true, &limits)
        .unwrap_or_else(|e| panic!("{e}"));
    let o = block_on(run(&plan, &a, &api, &NoProgress, &clock, &limits))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!o.verdict.paging_complete && !o.verdict.likely_more_rows);
    assert!(o.verdict.note.contains("may exist"), "{}", o.verdict.note);
    let p = present(&o, &plan, "r", &limits);
    assert!(
        p.value.get("_likelyMoreRows").is_none(),
        "P7 speaks only when the API reports more"
    );
    // A short page proves the end.
    let plan = parse_call(
        &a,
        &schema,
        json!({"per_page": 20, "page": 25}),
        true,
        &limits,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let o = block_on(run(&plan, &a, &api, &NoProgress, &clock, &limits))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(o.items.len(), 20);
    let plan = parse_call(
        &a,
        &schema,
        json!({"per_page": 30, "page": 17, "_fields": ["id"]}),
        true,
        &limits,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let o = block_on(run(&plan, &a, &api, &NoProgress, &clock, &limits))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(o.items.len(), 20);
    assert!(
        !o.verdict.paging_complete,
        "the last page alone is not every row: {}",
        o.verdict.note
    );
    // A first page shorter than asked for is the whole set.
    let clock = FakeClock::default();
    let api = page_api(&clock, 12, 1000, |r, _| json!({"data": r}));
    let args = json!({"per_page": 30, "page": 1, "_fields": ["id"]});
    let plan = parse_call(&a, &schema, args, true, &limits).unwrap_or_else(|e| panic!("{e}"));
    let o = block_on(run(&plan, &a, &api, &NoProgress, &clock, &limits))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(o.items.len(), 12);
    assert!(
        o.verdict.paging_complete && o.is_complete(),
        "{}",
        o.verdict.note
    );
    assert!(
        o.verdict.note.contains("holds every row"),
        "{}",
        o.verdict.note
    );
}
