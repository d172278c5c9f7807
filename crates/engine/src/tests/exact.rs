//! G7 (rows at the root) and the P4 truth table, row by row, against in-memory APIs.

use crate::outcome::verdict::Ending;
use crate::tests::kit::*;
use crate::tests::walk::{page_api, page_schema, walk};
use crate::*;
use serde_json::{json, Value};

fn ok_walk(schema: &Value, args: Value, api: &FakeApi, limits: &Limits) -> Outcome {
    walk(schema, args, api, &api.clock, limits).unwrap_or_else(|e| panic!("{e}"))
}

fn triple(o: &Outcome) -> (Option<StopReason>, bool, bool) {
    let v = &o.verdict;
    (v.stopped_by, v.paging_complete, v.likely_more_rows)
}

fn shown(o: &Outcome, args: Value) -> Value {
    let schema = page_schema(None);
    let a = analyze(&schema);
    let plan =
        parse_call(&a, &schema, args, true, &Limits::default()).unwrap_or_else(|e| panic!("{e}"));
    present(o, &plan, "r", &Limits::default()).value
}

#[test]
fn g7_an_empty_item_array_is_zero_rows_in_a_single_call() {
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |_, _| ok(json!({"bookings": []})));
    let args = json!({"_fields": ["id"]});
    let o = ok_walk(&page_schema(None), args.clone(), &api, &Limits::default());
    assert!(o.items.is_empty());
    let v = shown(&o, args);
    assert_eq!(v["items"], json!([]));
    assert_eq!(v["_itemCount"], json!(0));
    assert!(
        v.get("_unmatchedFields").is_none(),
        "F4: zero rows match nothing wrongly: {v}"
    );
    // Stored and read back (result store, cache): still zero rows.
    let back = Outcome::from_stored_json(&o.to_stored_json());
    assert!(back.items.is_empty());
    let plain = ok_walk(&page_schema(None), json!({}), &api, &Limits::default());
    let back = Outcome::from_stored_json(&plain.to_stored_json());
    assert!(back.items.is_empty() && back.slot.is_some());
    assert_eq!(back.payload(), json!({"bookings": []}));
}

#[test]
fn g7_a_record_without_an_item_array_is_one_row() {
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |req, _| {
        ok(json!({"id": arg_u64(req, "owner_id"), "tags": [], "total": 250}))
    });
    let o = ok_walk(
        &page_schema(None),
        json!({"_for_each": {"key": "owner_id", "values": [1, 2]}}),
        &api,
        &Limits::default(),
    );
    assert_eq!(row_ids(&o), [1, 2]);
    // A record's own `total` is not a row count.
    assert_eq!(o.verdict.total, None);
}

/// 160 rows at 20 a page under a key on no list: the ninth page is `{"bookings": []}`.
#[test]
fn g7_an_empty_last_page_at_an_exact_multiple_adds_nothing() {
    for n in [0usize, 20, 160] {
        let clock = FakeClock::default();
        let api = page_api(&clock, n, 1000, |r, _| json!({"bookings": r}));
        let o = ok_walk(
            &page_schema(Some(20)),
            json!({"_all_pages": true}),
            &api,
            &Limits::default(),
        );
        assert_eq!(row_ids(&o), (0..n as u64).collect::<Vec<_>>(), "n={n}");
        assert_eq!(triple(&o), (Some(StopReason::End), true, false), "n={n}");
    }
}

#[test]
fn g7_an_empty_fan_out_value_contributes_nothing_and_is_no_error() {
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |req, _| match arg_u64(req, "owner_id") {
        Some(o) if o % 2 == 0 => ok(json!({"property_id": o, "bookings": []})),
        Some(o) => ok(json!({"property_id": o, "bookings": [{"id": o}]})),
        None => status(400, "no owner"),
    });
    for values in [json!([2, 1, 4, 3]), json!([1, 2, 3, 4])] {
        let o = ok_walk(
            &page_schema(Some(20)),
            json!({"_all_pages": true, "_for_each": {"key": "owner_id", "values": values}}),
            &api,
            &Limits::default(),
        );
        let mut got = row_ids(&o);
        got.sort_unstable();
        assert_eq!(got, [1, 3]);
        assert!(o.for_each_errors.is_empty());
        assert_eq!(triple(&o), (Some(StopReason::End), true, false));
    }
}

#[test]
fn g7_a_later_page_that_is_not_the_collection_is_a_failed_page() {
    let bad: [(&str, &[u8]); 4] = [
        ("html", b"<html><body>Service busy</body></html>"),
        ("malformed", b"{\"data\": [{\"id\": 1},"),
        ("other shape", b"{\"error\": \"session expired\"}"),
        ("empty", b""),
    ];
    for (what, body) in bad {
        let clock = FakeClock::default();
        let api = FakeApi::new(&clock, move |req, _| match arg_u64(req, "page") {
            Some(1) | None => ok(json!({"data": rows(0..10)})),
            _ => Ok(UpstreamResponse {
                status: 200,
                headers: Vec::new(),
                body: body.to_vec(),
            }),
        });
        let o = ok_walk(
            &page_schema(Some(10)),
            json!({"_all_pages": true}),
            &api,
            &Limits::default(),
        );
        assert_eq!(
            row_ids(&o),
            (0..10).collect::<Vec<_>>(),
            "{what}: rows so far kept"
        );
        assert_eq!(
            triple(&o),
            (Some(StopReason::UpstreamError), false, true),
            "{what}"
        );
        assert!(
            o.verdict.note.contains("not the list"),
            "{what}: {}",
            o.verdict.note
        );
    }
}

#[test]
fn p4_the_truth_table() {
    use StopReason as S;
    let table = [
        (Ending::Whole, (Some(S::End), true, false)),
        (Ending::LastPage, (Some(S::End), true, false)),
        (Ending::PageOfMore, (None, false, true)),
        (Ending::PageUnproven, (None, false, false)),
        (Ending::Walked, (Some(S::End), true, false)),
        (Ending::EndedShort, (Some(S::End), false, true)),
        (Ending::ValuesRejected, (Some(S::End), false, true)),
        (Ending::Bound(S::Pages), (Some(S::Pages), false, true)),
        (Ending::Bound(S::Requests), (Some(S::Requests), false, true)),
        (Ending::Bound(S::Items), (Some(S::Items), false, true)),
        (Ending::Bound(S::Bytes), (Some(S::Bytes), false, true)),
        (Ending::Bound(S::Time), (Some(S::Time), false, true)),
        (Ending::LoopSettled, (Some(S::Loop), false, false)),
        (Ending::LoopOpen, (Some(S::Loop), false, true)),
        (Ending::OffOrigin, (Some(S::OffOrigin), false, true)),
        (Ending::UpstreamError, (Some(S::UpstreamError), false, true)),
    ];
    for (ending, want) in table {
        assert_eq!(ending.verdict(), want, "{ending:?}");
        // `end` only when nothing was left unfetched by a bound.
        let (stop, complete, _) = ending.verdict();
        assert!(!complete || stop == Some(S::End), "{ending:?}");
    }
}

/// Every row of the table, reached through a real walk.
#[test]
fn p4_every_row_of_the_table_through_a_walk() {
    use StopReason as S;
    let d = Limits::default();
    let clock = FakeClock::default();
    let plain = json!({"type": "object", "properties": {"q": {"type": "string"}}});
    let data = |r: Vec<Value>, _| json!({"data": r});

    // Whole: a tool that does not page.
    let api = FakeApi::new(&clock, |_, _| ok(json!({"data": rows(0..3)})));
    let o = ok_walk(&plain, json!({"_fields": ["id"]}), &api, &d);
    assert_eq!(triple(&o), (Some(S::End), true, false));
    assert!(
        o.verdict.note.starts_with("Complete result"),
        "{}",
        o.verdict.note
    );

    // PageOfMore on a tool that does not page: a next link under a key on no list.
    let api = FakeApi::new(&clock, |_, _| {
        ok(json!({"data": rows(0..50), "nextPageUri": "/v1/things?page=2"}))
    });
    let o = ok_walk(&plain, json!({"_fields": ["id"]}), &api, &d);
    assert_eq!(triple(&o), (None, false, true), "{}", o.verdict.note);

    // LastPage, PageOfMore, PageUnproven: one page of a paginated tool.
    let api = page_api(&clock, 5, 1000, data);
    let o = ok_walk(
        &page_schema(Some(10)),
        json!({"per_page": 10, "_fields": ["id"]}),
        &api,
        &d,
    );
    assert_eq!(triple(&o), (Some(S::End), true, false));
    let api = page_api(&clock, 50, 1000, |r, n| json!({"data": r, "total": n}));
    let o = ok_walk(
        &page_schema(Some(10)),
        json!({"per_page": 10, "_fields": ["id"]}),
        &api,
        &d,
    );
    assert_eq!(triple(&o), (None, false, true));
    let api = page_api(&clock, 50, 1000, data);
    let o = ok_walk(
        &page_schema(Some(10)),
        json!({"per_page": 10, "_fields": ["id"]}),
        &api,
        &d,
    );
    assert_eq!(triple(&o), (None, false, false));

    // Walked and EndedShort.
    let all = json!({"_all_pages": true});
    let api = page_api(&clock, 25, 1000, data);
    let o = ok_walk(&page_schema(Some(10)), all.clone(), &api, &d);
    assert_eq!(triple(&o), (Some(S::End), true, false));
    let api = page_api(&clock, 25, 1000, |r, _| json!({"data": r, "total": 40}));
    let o = ok_walk(&page_schema(Some(10)), all.clone(), &api, &d);
    assert_eq!(triple(&o), (Some(S::End), false, true));

    // ValuesRejected: a value that cannot be an integer.
    let api = page_api(&clock, 5, 1000, data);
    let fe = json!({"_all_pages": true, "_for_each": {"key": "owner_id", "values": [1, "x"]}});
    let o = ok_walk(&page_schema(Some(10)), fe, &api, &d);
    assert_eq!(triple(&o), (Some(S::End), false, true));

    // Bounds: pages, items, bytes, time; requests in its own test below.
    let api = page_api(&clock, 10_000, 1000, data);
    let bounds = [
        (S::Pages, d.clone()),
        (
            S::Items,
            Limits {
                items: 150,
                ..d.clone()
            },
        ),
        (
            S::Bytes,
            Limits {
                bytes: 2_000,
                ..d.clone()
            },
        ),
    ];
    for (bound, limits) in bounds {
        let o = ok_walk(&page_schema(Some(100)), all.clone(), &api, &limits);
        assert_eq!(triple(&o), (Some(bound), false, true), "{bound:?}");
    }
    let slow_clock = FakeClock::default();
    let mut slow = page_api(&slow_clock, 10_000, 1000, data);
    slow.latency_ms = 20_000;
    let o = ok_walk(&page_schema(Some(100)), all.clone(), &slow, &d);
    assert_eq!(triple(&o), (Some(S::Time), false, true));

    // LoopSettled (the last page served again) and LoopOpen (an earlier page again).
    let api = FakeApi::new(&clock, |req, _| {
        let p = arg_u64(req, "page").unwrap_or(1).min(3);
        ok(json!({"data": rows((p as usize - 1) * 10..p as usize * 10), "has_more": true}))
    });
    let o = ok_walk(&page_schema(Some(10)), all.clone(), &api, &d);
    assert_eq!(triple(&o), (Some(S::Loop), false, false));
    let api = FakeApi::new(&clock, |req, _| {
        let p = arg_u64(req, "page").unwrap_or(1) % 2;
        ok(json!({"data": rows(p as usize * 10..p as usize * 10 + 10), "has_more": true}))
    });
    let o = ok_walk(&page_schema(Some(10)), all.clone(), &api, &d);
    assert_eq!(triple(&o), (Some(S::Loop), false, true));

    // OffOrigin and UpstreamError.
    let cursor = json!({"properties": {"cursor": {"type": "string"}}});
    let api = FakeApi::new(&clock, |_, _| {
        ok(json!({"data": rows(0..10), "next": "https://elsewhere.example/x?cursor=2"}))
    });
    let o = ok_walk(&cursor, all.clone(), &api, &d);
    assert_eq!(triple(&o), (Some(S::OffOrigin), false, true));
    let api = FakeApi::new(&clock, |req, _| match arg_u64(req, "page") {
        Some(1) | None => ok(json!({"data": rows(0..10)})),
        _ => status(400, "bad page"),
    });
    let o = ok_walk(&page_schema(Some(10)), all, &api, &d);
    assert_eq!(triple(&o), (Some(S::UpstreamError), false, true));
}

/// 50 `_for_each` values × 3 pages against the 60-request budget: 20 values are walked,
/// 30 are left, and the verdict names the bound — never `end`.
#[test]
fn p3_e5_values_left_by_the_request_budget_say_requests() {
    let clock = FakeClock::default();
    let api = page_api(&clock, 25, 1000, |r, _| json!({"data": r}));
    let values: Vec<u64> = (1..=50).collect();
    let o = ok_walk(
        &page_schema(Some(10)),
        json!({"_all_pages": true, "_for_each": {"key": "owner_id", "values": values}}),
        &api,
        &Limits::default(),
    );
    assert_eq!(api.requests().len(), 60);
    assert_eq!(o.items.len(), 20 * 25);
    assert_eq!(triple(&o), (Some(StopReason::Requests), false, true));
    assert!(
        o.verdict.note.contains("60 upstream requests")
            && o.verdict
                .note
                .contains("30 `_for_each` values were not fetched"),
        "{}",
        o.verdict.note
    );
}
