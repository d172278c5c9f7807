//! G7, G2: APIs that leave an empty list out of the body (protobuf-style JSON, Gmail's
//! `{"resultSizeEstimate": 0}`), generated: by cursor, page number or offset, with or
//! without the item array's path documented by the imported response schema, with a
//! documented count or none, at 0, 1 and k×size rows, walked alone and as `_for_each`
//! values. Rows are exactly the API's, never one holding the envelope.

use crate::analysis::signals::{ITEMS_HINT, RESPONSE_HINT};
use crate::tests::kit::*;
use crate::*;
use proptest::prelude::*;
use serde_json::{json, Map, Value};

#[derive(Debug, Clone, Copy)]
enum Style {
    Cursor,
    Page,
    Offset,
}

#[derive(Debug, Clone)]
struct Api {
    style: Style,
    key: &'static str,
    documented: bool,
    total_key: Option<&'static str>,
    size: usize,
    /// The API hands out a next token on a full last page (an empty page ends it).
    lazy_end: bool,
    /// The API leaves a zero count out too.
    omit_zero: bool,
}

fn api_strategy() -> impl Strategy<Value = Api> {
    (
        prop_oneof![Just(Style::Cursor), Just(Style::Page), Just(Style::Offset)],
        prop_oneof![Just("experiments"), Just("messages"), Just("data")],
        any::<bool>(),
        prop_oneof![
            Just(None),
            Just(Some("resultSizeEstimate")),
            Just(Some("totalSize"))
        ],
        1usize..8,
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(style, key, documented, total_key, size, lazy_end, omit_zero)| Api {
                style,
                key,
                documented,
                total_key,
                size,
                lazy_end,
                omit_zero,
            },
        )
}

/// 0, 1 or k × size rows.
fn count(size: usize) -> impl Strategy<Value = usize> {
    prop_oneof![
        Just(0usize),
        Just(1usize),
        (1usize..5).prop_map(move |k| k * size)
    ]
}

fn schema(api: &Api) -> Value {
    let size = json!({"type": "integer", "maximum": api.size});
    let mut props = match api.style {
        Style::Cursor => json!({"page_token": {"type": "string"}, "max_results": size}),
        Style::Page => json!({"per_page": size, "page": {"type": "integer", "minimum": 1}}),
        Style::Offset => json!({"limit": size, "offset": {"type": "integer"}}),
    };
    props["owner_id"] = json!({"type": "integer"});
    let mut s = json!({"type": "object", "properties": props});
    if api.documented {
        s[ITEMS_HINT] = json!([api.key]);
        let mut keys = Map::new();
        if let Some(t) = api.total_key {
            keys.insert("total".into(), json!([t]));
        }
        if matches!(api.style, Style::Cursor) {
            keys.insert("next".into(), json!(["nextPageToken"]));
        }
        if !keys.is_empty() {
            s[RESPONSE_HINT] = Value::Object(keys);
        }
    }
    s
}

/// The fake API over `counts[owner]` rows per owner: ids `owner * 1000 + i`.
fn fake(api: &Api, counts: Vec<usize>, clock: &FakeClock) -> FakeApi {
    let api = api.clone();
    FakeApi::new(clock, move |req, _| {
        let owner = arg_u64(req, "owner_id").unwrap_or(0) as usize;
        let n = counts.get(owner).copied().unwrap_or(0);
        let (at, size) = match api.style {
            Style::Cursor => {
                let at = arg_str(req, "page_token")
                    .and_then(|t| t.strip_prefix('o').and_then(|n| n.parse().ok()))
                    .unwrap_or(0);
                (at, arg_u64(req, "max_results").unwrap_or(10) as usize)
            }
            Style::Page => {
                let size = arg_u64(req, "per_page").unwrap_or(10) as usize;
                let page = arg_u64(req, "page").unwrap_or(1).max(1) as usize;
                ((page - 1) * size, size)
            }
            Style::Offset => (
                arg_u64(req, "offset").unwrap_or(0) as usize,
                arg_u64(req, "limit").unwrap_or(10) as usize,
            ),
        };
        let at = at.min(n);
        let end = (at + size).min(n);
        let mut body = Map::new();
        if end > at {
            let rows: Vec<Value> = (at..end)
                .map(|i| json!({"id": owner * 1000 + i, "name": format!("row {i}")}))
                .collect();
            body.insert(api.key.into(), Value::Array(rows));
        }
        if let Some(t) = api.total_key {
            if n > 0 || !api.omit_zero {
                body.insert(t.into(), json!(n));
            }
        }
        if matches!(api.style, Style::Cursor) {
            let more = end < n || (api.lazy_end && end > at && end - at == size);
            if more {
                body.insert("nextPageToken".into(), json!(format!("o{end}")));
            }
        }
        ok(Value::Object(body))
    })
}

fn run_call(api: &Api, counts: Vec<usize>, args: Value) -> (Outcome, usize) {
    let clock = FakeClock::default();
    let upstream = fake(api, counts, &clock);
    let s = schema(api);
    let a = analyze(&s);
    let limits = Limits::default();
    let plan = parse_call(&a, &s, args, true, &limits).unwrap_or_else(|e| panic!("{e}"));
    let o = block_on(run(&plan, &a, &upstream, &NoProgress, &clock, &limits))
        .unwrap_or_else(|e| panic!("{e}"));
    let requests = upstream.requests().len();
    (o, requests)
}

fn ids(o: &Outcome) -> Vec<u64> {
    row_ids(o)
}

proptest! {
    #![proptest_config(prop_config(192))]

    /// G7: a walk of every page gives exactly the rows, complete; a documented count that
    /// agrees is the total, and no page leaving its list out is a row.
    #[test]
    fn g7_a_walk_over_omitted_empty_lists_is_exact((api, n) in api_strategy().prop_flat_map(|a| {
        let size = a.size;
        (Just(a), count(size))
    })) {
        let (o, _) = run_call(&api, vec![n], json!({"_all_pages": true}));
        prop_assert_eq!(ids(&o), (0..n as u64).collect::<Vec<_>>(), "{:?} n={}", api, n);
        prop_assert!(o.verdict.paging_complete, "{:?} n={} {}", api, n, o.verdict.note);
        prop_assert!(!o.verdict.likely_more_rows, "{:?} n={} {}", api, n, o.verdict.note);
        // a count the response schema documents is the total
        if api.documented && api.total_key.is_some() && (n > 0 || !api.omit_zero) {
            prop_assert_eq!(o.verdict.total, Some(n as u64));
        }
    }

    /// G7, E1: every `_for_each` value is its own rows; a value whose list was left out
    /// contributes nothing, is no error and no row of its envelope.
    #[test]
    fn g7_a_fan_out_over_omitted_empty_lists_is_exact(
        (api, counts) in api_strategy().prop_flat_map(|a| {
            let size = a.size;
            (Just(a), prop::collection::vec(count(size), 1..4))
        }),
        all_pages in any::<bool>(),
    ) {
        let values: Vec<usize> = (0..counts.len()).collect();
        let args = json!({"_all_pages": all_pages, "_for_each": {"key": "owner_id", "values": values}});
        let (o, _) = run_call(&api, counts.clone(), args);
        let got: Vec<u64> = ids(&o);
        prop_assert!(!got.contains(&u64::MAX), "an envelope became a row: {:?} {:?}", api, counts);
        // one page of a value without `_all_pages`: the API's default of 10 rows
        let per_value = |n: usize| if all_pages { n } else { n.min(10) };
        let want: Vec<u64> = counts
            .iter()
            .enumerate()
            .flat_map(|(v, n)| (0..per_value(*n) as u64).map(move |i| v as u64 * 1000 + i))
            .collect();
        prop_assert_eq!(got, want, "{:?} {:?}", api, counts);
        if all_pages {
            prop_assert!(o.verdict.paging_complete, "{:?} {:?} {}", api, counts, o.verdict.note);
        }
        prop_assert!(o.for_each_errors.is_empty(), "{:?}", o.for_each_errors);
    }
}

/// G7: Gmail's `users.messages.list` with no match answers only `{"resultSizeEstimate":
/// 0}`: zero rows, complete — whether the schema documents `messages` or not.
#[test]
fn g7_gmail_no_match_is_zero_rows() {
    for documented in [true, false] {
        let api = Api {
            style: Style::Cursor,
            key: "messages",
            documented,
            total_key: Some("resultSizeEstimate"),
            size: 5,
            lazy_end: false,
            omit_zero: false,
        };
        for args in [json!({"_all_pages": true}), json!({"_fields": ["id"]})] {
            let (o, requests) = run_call(&api, vec![0], args.clone());
            assert!(o.items.is_empty(), "{documented} {args}: {:?}", ids(&o));
            assert_eq!(requests, 1);
            assert_eq!(o.verdict.total, documented.then_some(0));
        }
    }
}

/// G7: a documented count that disagrees with the rows is named in the note.
#[test]
fn g7_a_documented_count_that_disagrees_is_named() {
    let clock = FakeClock::default();
    let upstream = FakeApi::new(&clock, |_, _| {
        ok(json!({"records": [{"id": 1}, {"id": 2}], "totalSize": 5, "done": true}))
    });
    let mut s = json!({"type": "object", "properties": {}});
    s[ITEMS_HINT] = json!(["records"]);
    s[RESPONSE_HINT] = json!({"total": ["totalSize"]});
    let a = analyze(&s);
    let limits = Limits::default();
    let plan = parse_call(&a, &s, json!({"_fields": ["id"]}), true, &limits)
        .unwrap_or_else(|e| panic!("{e}"));
    let o = block_on(run(&plan, &a, &upstream, &NoProgress, &clock, &limits))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(o.verdict.total, Some(5));
    assert!(
        o.verdict.note.contains("`totalSize` said 5 rows"),
        "{}",
        o.verdict.note
    );
}

/// G7: a record (an `id` beside its fields) is still one row of a fan-out (E1).
#[test]
fn g7_a_record_is_still_one_row() {
    let clock = FakeClock::default();
    let upstream = FakeApi::new(&clock, |req, _| {
        ok(json!({"id": arg_u64(req, "owner_id"), "total": 3}))
    });
    let s = json!({"type": "object", "properties": {"owner_id": {"type": "integer"}}});
    let a = analyze(&s);
    let limits = Limits::default();
    let plan = parse_call(
        &a,
        &s,
        json!({"_for_each": {"key": "owner_id", "values": [4, 5]}}),
        true,
        &limits,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let o = block_on(run(&plan, &a, &upstream, &NoProgress, &clock, &limits))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ids(&o), [4, 5]);
}
