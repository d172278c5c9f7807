//! Property tests for the engine's invariants.
use crate::plan::row_filter;
use crate::present::size_guard;
use crate::tests::kit::*;
use crate::*;
use proptest::prelude::*;
use serde_json::{json, Value};

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        1 => Just(Value::Null),
        1 => any::<bool>().prop_map(Value::from),
        2 => ordered(),
    ]
}

/// A leaf an ordering (`gt`, `lte`, …) compares with: a number or a string.
fn ordered() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i32>().prop_map(Value::from),
        "[a-zé\"\\\\ ]{0,12}".prop_map(Value::from),
    ]
}

fn item() -> impl Strategy<Value = Value> {
    let v = leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-d]", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    });
    prop::collection::btree_map("[a-e]", v, 0..5)
        .prop_map(|m| Value::Object(m.into_iter().collect()))
}

/// `(by_offset, max, cap)` of a paged API: the schema's largest page size `max` and the
/// size the API really serves at most, `cap`. Page numbering over a capped page size is
/// only well-defined when the API honours the size it is asked for, so a page-numbered
/// API has `cap >= max` (drawn so, rather than rejected: ~25% of the cases were).
fn paging() -> impl Strategy<Value = (bool, u64, usize)> {
    (any::<bool>(), 1u64..300).prop_flat_map(|(by_offset, max)| {
        let caps = if by_offset {
            1usize..300
        } else {
            max as usize..300
        };
        (Just(by_offset), Just(max), caps)
    })
}

/// An op index into the filter test's op list and a value it accepts: the orderings
/// (`gt`, `gte`, `lt`, `lte`) compare with a number or a string only (drawn so, rather
/// than rejected: ~22% of the cases were).
fn clause_op() -> impl Strategy<Value = (usize, Value)> {
    (0usize..9).prop_flat_map(|op| {
        let value = if (2..6).contains(&op) {
            ordered().boxed()
        } else {
            leaf().boxed()
        };
        (Just(op), value)
    })
}

/// A `_resultId` tail of `n` characters that JSON writes as they are.
fn id_of(n: usize) -> impl Strategy<Value = String> {
    prop::string::string_regex(&format!("[A-Za-z0-9_-]{{{n}}}")).unwrap_or_else(|e| panic!("{e}"))
}

/// One call with `args` on a tool whose single page is `{"data": items}`.
fn walked(
    items: &[Value],
    budget: usize,
    args: Value,
    looping: bool,
) -> (Outcome, CallPlan, Limits) {
    let body = json!({"data": items});
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, move |_, _| ok(body.clone()));
    let schema = json!({});
    let a = analyze(&schema);
    let limits = Limits {
        token_budget: budget,
        ..Limits::default()
    };
    let plan = parse_call(&a, &schema, args, looping, &limits).unwrap_or_else(|e| panic!("{e}"));
    let o = block_on(run(&plan, &a, &api, &NoProgress, &clock, &limits))
        .unwrap_or_else(|e| panic!("{e}"));
    (o, plan, limits)
}

fn presented(items: &[Value], budget: usize) -> (Value, Value) {
    let (o, plan, limits) = walked(items, budget, json!({}), false);
    (present(&o, &plan, "r", &limits).value, json!(items))
}

proptest! {
    #![proptest_config(prop_config(96))]

    #[test]
    fn guard_never_splits_an_item_nor_exceeds_the_budget(items in prop::collection::vec(item(), 0..60), budget in 150usize..2_000) {
        let (v, all) = presented(&items, budget);
        prop_assert!(size_guard::json_len(&v) <= size_guard::byte_budget(budget));
        if let Some(shown) = v.get("data").and_then(Value::as_array) {
            // A prefix of whole items, each identical to its original.
            prop_assert_eq!(&shown[..], all.as_array().map(|a| &a[..shown.len()]).unwrap_or_default());
        } else {
            prop_assert!(v.get("text").is_some());
        }
    }

    #[test]
    fn a_walk_never_duplicates_or_drops_rows(n in 0usize..1_500, (by_offset, max, cap) in paging(), announce in any::<bool>()) {
        let clock = FakeClock::default();
        let api = FakeApi::new(&clock, move |req, _| {
            let size = (arg_u64(req, "limit").unwrap_or(10) as usize).min(cap);
            let start = match arg_u64(req, "offset") {
                Some(o) => o as usize,
                None => (arg_u64(req, "page").unwrap_or(1) as usize - 1) * size,
            }.min(n);
            let end = (start + size).min(n);
            let mut body = json!({"data": rows(start..end), "has_more": end < n});
            if announce { body["total"] = json!(n); }
            ok(body)
        });
        let schema = if by_offset {
            json!({"properties": {"limit": {"type": "integer", "maximum": max}, "offset": {"type": "integer"}}})
        } else {
            json!({"properties": {"limit": {"type": "integer", "maximum": max}, "page": {"type": "integer"}}})
        };
        let a = analyze(&schema);
        let limits = Limits { pages_per_collection: 10_000, requests: 10_000, ..Limits::default() };
        let plan = parse_call(&a, &schema, json!({"_all_pages": true}), true, &limits).unwrap_or_else(|e| panic!("{e}"));
        let o = block_on(run(&plan, &a, &api, &NoProgress, &clock, &limits)).unwrap_or_else(|e| panic!("{e}"));
        let ids: Vec<u64> = o.items.iter().filter_map(|i| i.to_value()["id"].as_u64()).collect();
        prop_assert_eq!(ids, (0..n as u64).collect::<Vec<_>>());
        prop_assert!(o.verdict.paging_complete);
    }

    #[test]
    fn projection_never_invents_values(it in item(), paths in prop::collection::vec("[a-e](\\.[a-d]){0,2}", 1..4)) {
        let p = Projection::parse(&json!(paths), "_fields", &Limits::default()).unwrap_or_else(|e| panic!("{e}"));
        let out = p.apply(&it);
        for path in p.paths() {
            for got in path.resolve(&out) {
                let orig = path.resolve(&it);
                prop_assert!(got.is_null() || orig.contains(&got), "{} invented {}", path, got);
            }
        }
        let keys: Vec<&String> = out.as_object().map(|m| m.keys().collect()).unwrap_or_default();
        prop_assert!(keys.iter().all(|k| p.paths().iter().any(|x| x.head() == k.as_str())));
    }

    #[test]
    fn filter_keeps_exactly_rows_satisfying_every_clause(
        rows in prop::collection::vec((0i64..20, prop::option::of(0i64..20), "[ab]{1,2}"), 0..40),
        clauses in prop::collection::vec((0usize..3, 0usize..6, 0i64..20), 1..3),
    ) {
        let ops = ["eq", "neq", "gt", "lte", "in", "exists"];
        let fields = ["n", "m", "s"];
        let items: Vec<Value> = rows.iter().map(|(n, m, s)| {
            let mut v = json!({"n": n, "s": s});
            if let Some(m) = m { v["m"] = json!(m); }
            v
        }).collect();
        let filter: Vec<Value> = clauses.iter().map(|(f, o, x)| {
            let value = match ops[*o] { "in" => json!([x, x + 1]), "exists" => json!(x % 2 == 0), _ => json!(x) };
            json!({"field": fields[*f], "op": ops[*o], "value": value})
        }).collect();
        // An independent oracle over the generated shape.
        let oracle = |row: &(i64, Option<i64>, String)| clauses.iter().all(|(f, o, x)| {
            let val: Option<i64> = match *f { 0 => Some(row.0), 1 => row.1, _ => None };
            match (ops[*o], *f) {
                ("exists", _) => (if *f == 1 { row.1.is_some() } else { true }) == (x % 2 == 0),
                // A word never equals or orders against a number.
                (op, 2) => op == "neq",
                ("eq", _) => val == Some(*x),
                ("neq", _) => val != Some(*x),
                ("gt", _) => val.is_some_and(|v| v > *x),
                ("lte", _) => val.is_some_and(|v| v <= *x),
                ("in", _) => val.is_some_and(|v| v == *x || v == x + 1),
                _ => unreachable!(),
            }
        });
        let stored = json!({"data": items});
        let r = query_result(&stored, &json!({"filter": filter, "limit": 1000}), &Limits::default()).unwrap_or_else(|e| panic!("{e}"));
        let got: Vec<Value> = r["items"].as_array().cloned().unwrap_or_default();
        let want: Vec<Value> = rows.iter().zip(&items).filter(|(r, _)| oracle(r)).map(|(_, i)| i.clone()).collect();
        prop_assert_eq!(got, want);
    }
}

proptest! {
    #![proptest_config(prop_config(128))]

    /// The raw-text projection (the hot path) agrees with the tree projection.
    #[test]
    fn raw_projection_matches_tree_projection(it in item(), paths in prop::collection::vec("[a-e](\\.[a-d]){0,2}", 1..4), pretty in any::<bool>()) {
        let p = Projection::parse(&json!(paths), "_fields", &Limits::default()).unwrap_or_else(|e| panic!("{e}"));
        let text = if pretty { serde_json::to_string_pretty(&it) } else { serde_json::to_string(&it) }.unwrap_or_default();
        let mut out = String::new();
        p.write_raw(&text, &mut out);
        let parsed: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
        prop_assert_eq!(parsed, p.apply(&it));
    }

    /// The raw-text filter (the hot path) agrees with the tree filter, for every op.
    #[test]
    fn raw_filter_matches_tree_filter(it in item(), field in "[a-e](\\.[a-d]){0,1}", (op, value) in clause_op()) {
        let ops = ["eq", "neq", "gt", "gte", "lt", "lte", "contains", "in", "exists"];
        let value = match ops[op] { "in" => json!([value]), "exists" => json!(value.is_null()), _ => value };
        let clauses = row_filter::parse_filter(&json!([{"field": field, "op": ops[op], "value": value}]), "_filter", &Limits::default())
            .unwrap_or_else(|e| panic!("{e}"));
        let text = serde_json::to_string(&it).unwrap_or_default();
        prop_assert_eq!(clauses[0].matches_raw(&text), clauses[0].matches(&it));
    }

    /// A well-behaved cursor API: every row once, in order, whatever the page sizes.
    #[test]
    fn a_cursor_walk_never_duplicates_or_drops_rows(n in 0usize..800, cap in 1usize..120, total_on_first in any::<bool>()) {
        let clock = FakeClock::default();
        let api = FakeApi::new(&clock, move |req, _| {
            let at = req.args.get("cursor").and_then(Value::as_str).and_then(|c| c.parse::<usize>().ok()).unwrap_or(0);
            let end = (at + cap).min(n);
            let mut body = json!({"data": rows(at..end), "has_more": end < n, "cursor": if end < n { json!(end.to_string()) } else { Value::Null }});
            if total_on_first && at == 0 { body["total"] = json!(n); }
            ok(body)
        });
        let schema = json!({"properties": {"limit": {"type": "integer"}, "cursor": {"type": "string"}}});
        let a = analyze(&schema);
        let limits = Limits { pages_per_collection: 10_000, requests: 10_000, ..Limits::default() };
        let plan = parse_call(&a, &schema, json!({"_all_pages": true}), true, &limits).unwrap_or_else(|e| panic!("{e}"));
        let o = block_on(run(&plan, &a, &api, &NoProgress, &clock, &limits)).unwrap_or_else(|e| panic!("{e}"));
        let ids: Vec<u64> = o.items.iter().filter_map(|i| i.to_value()["id"].as_u64()).collect();
        prop_assert_eq!(ids, (0..n as u64).collect::<Vec<_>>());
        prop_assert!(o.verdict.paging_complete, "{}", o.verdict.note);
    }
}

proptest! {
    #![proptest_config(prop_config(64))]

    /// The envelope (reserved arguments) obeys the same guard: within budget, rows whole
    /// and in order.
    #[test]
    fn envelope_guard_never_splits_nor_exceeds(items in prop::collection::vec(item(), 0..60), budget in 150usize..2_000, project in any::<bool>()) {
        let args = if project { json!({"_fields": ["a", "b.c"]}) } else { json!({"_refresh": true}) };
        let (o, plan, limits) = walked(&items, budget, args, true);
        let p = present_json(&o, &plan, "res_p", &limits, &Default::default());
        prop_assert!(p.json.len() <= size_guard::byte_budget(budget));
        let v: Value = serde_json::from_str(&p.json).unwrap_or_default();
        let shown = v["items"].as_array().cloned().unwrap_or_default();
        let expected: Vec<Value> = items.iter().take(shown.len()).map(|i| match &plan.fields {
            Some(f) => f.apply(i),
            None => i.clone(),
        }).collect();
        prop_assert_eq!(shown.len(), v["_itemsShown"].as_u64().map_or(items.len(), |n| n as usize));
        prop_assert_eq!(shown, expected);
        prop_assert_eq!(v["_itemCount"].as_u64(), Some(items.len() as u64));
    }
}

proptest! {
    #![proptest_config(prop_config(96))]

    /// A presentation memoized with its `_resultId` as a hole, filled with
    /// another id of the same length, is exactly what presenting afresh with that id
    /// writes — cut or not, envelope or the tool's own shape, filtered, projected, labelled.
    #[test]
    fn a_presentation_under_another_id_is_the_same_text_but_the_id(
        items in prop::collection::vec(item(), 0..60),
        budget in 150usize..2_000,
        reserved in any::<bool>(),
        project in any::<bool>(),
        filter in any::<bool>(),
        labelled in any::<bool>(),
        ids in (4usize..40).prop_flat_map(|n| (id_of(n), id_of(n))),
    ) {
        let mut args = json!({});
        if reserved { args["_refresh"] = json!(true); }
        if project { args["_fields"] = json!(["a", "b.c"]); }
        if filter { args["_filter"] = json!([{"field": "a", "op": "exists", "value": true}]); }
        let (o, plan, limits) = walked(&items, budget, args, true);
        let labels = Labels {
            cache: labelled.then(|| CacheLabel::Hit { cached_at: "2026-01-01T00:00:00Z".into(), expires_at: "2026-01-02T00:00:00Z".into() }),
            degraded: labelled.then(|| "degraded".to_owned()),
            continue_token: None,
        };
        let (first, second) = (format!("res_{}", ids.0), format!("res_{}", ids.1));
        let made = present_json(&o, &plan, &first, &limits, &labels);
        let template = PresentedTemplate::new(&made, &first).unwrap_or_else(|| panic!("a plain id"));
        prop_assert_eq!(template.fill(&first), Some(made.clone()));
        prop_assert_eq!(template.fill(&second), Some(present_json(&o, &plan, &second, &limits, &labels)));
    }
}
