//! Result shapes (G3, P4), G1–G3, F, R2 through `present`.
use crate::present::size_guard;
use crate::tests::kit::*;
use crate::*;
use serde_json::{json, Value};

fn outcome_of(schema: &Value, args: Value, body: Value, looping: bool) -> (Outcome, CallPlan) {
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, move |_, _| ok(body.clone()));
    let a = analyze(schema);
    let limits = Limits::default();
    let plan = parse_call(&a, schema, args, looping, &limits).unwrap_or_else(|e| panic!("{e}"));
    let o = block_on(run(&plan, &a, &api, &NoProgress, &clock, &limits))
        .unwrap_or_else(|e| panic!("{e}"));
    (o, plan)
}

fn no_params() -> Value {
    json!({"type": "object", "properties": {"q": {"type": "string"}}})
}

fn inboxes(n: usize) -> Vec<Value> {
    (0..n).map(|i| json!({"inbox_id": format!("inb_{i:05}"), "email": format!("agent{i}@example.com"), "labels": ["a", "b"]})).collect()
}

fn small() -> Limits {
    Limits {
        token_budget: 2_000,
        ..Limits::default()
    }
}

#[test]
fn g1_g3_top_level_array_is_cut_at_item_boundary_and_wrapped() {
    let (o, plan) = outcome_of(&no_params(), json!({}), json!(inboxes(500)), false);
    let p = present(&o, &plan, "res_9", &small());
    assert!(p.truncated && p.stored);
    let v = &p.value;
    let shown = v["items"].as_array().cloned().unwrap_or_default();
    assert!(!shown.is_empty() && shown.len() < 500);
    assert_eq!(shown, inboxes(shown.len()), "whole items, in order");
    assert_eq!(
        (v["_truncated"].clone(), v["_resultId"].clone()),
        (json!(true), json!("res_9"))
    );
    assert_eq!(
        (v["_itemsShown"].clone(), v["_itemsTotal"].clone()),
        (json!(shown.len()), json!(500))
    );
    assert!(v["_note"]
        .as_str()
        .is_some_and(|n| n.contains("queryToolResult") && n.contains("res_9")));
    assert!(size_guard::json_len(v) <= size_guard::byte_budget(2_000));
}

#[test]
fn g1_envelope_payload_keeps_its_shape() {
    let body = json!({"meta": {"page": 1}, "data": inboxes(500)});
    let (o, plan) = outcome_of(&no_params(), json!({}), body, false);
    let p = present(&o, &plan, "r", &small());
    assert_eq!(p.value["meta"], json!({"page": 1}));
    assert!(p.value["data"].as_array().is_some_and(|d| d.len() < 500));
    assert!(p.value.get("items").is_none());
}

#[test]
fn g3_small_plain_results_are_returned_untouched() {
    let body = json!([{"id": 1}, {"id": 2}]);
    let (o, plan) = outcome_of(&no_params(), json!({}), body.clone(), false);
    let p = present(&o, &plan, "r", &Limits::default());
    assert_eq!(p.value, body);
    assert!(!p.truncated && !p.stored);
}

#[test]
fn g2_no_array_is_cut_as_text() {
    let body = json!({"report": "x".repeat(20_000), "id": 3});
    let (o, plan) = outcome_of(&no_params(), json!({}), body.clone(), false);
    let p = present(&o, &plan, "r7", &small());
    let v = &p.value;
    assert!(p.truncated && p.stored);
    let text = v["text"].as_str().unwrap_or_default();
    let full = o.to_stored_json();
    assert!(!text.is_empty() && full.starts_with(text));
    assert_eq!(v["_totalChars"], json!(full.chars().count()));
    assert!(v["_note"]
        .as_str()
        .is_some_and(|n| n.contains("fetchToolResult")));
    assert!(size_guard::json_len(v) <= size_guard::byte_budget(2_000));
    // The next slice continues exactly where the preview stopped.
    let next = fetch_result(
        &full,
        &json!({"offset": text.chars().count(), "length": 10}),
        &small(),
    )
    .unwrap_or_default();
    assert_eq!(
        next["text"].as_str(),
        Some(&full[text.len()..text.len() + 10])
    );
}

#[test]
fn envelope_shape_and_r2_filter_before_fields() {
    let body = json!({"data": [
        {"id": 1, "status": "open", "customer": {"name": "Ann", "tier": "gold"}},
        {"id": 2, "status": "closed", "customer": {"name": "Bob", "tier": "gold"}},
        {"id": 3, "status": "open", "customer": {"name": "Cy", "tier": "silver"}}
    ]});
    let args = json!({"_fields": ["id", "customer.name"], "_filter": [{"field": "customer.tier", "op": "eq", "value": "gold"}, {"field": "status", "op": "eq", "value": "open"}]});
    let (o, plan) = outcome_of(&no_params(), args, body, true);
    let p = present(&o, &plan, "res_e", &Limits::default());
    let v = &p.value;
    assert_eq!(v["items"], json!([{"id": 1, "customer": {"name": "Ann"}}]));
    assert_eq!(v["_itemCount"], json!(1));
    assert_eq!(
        (v["_pagingComplete"].clone(), v["_likelyMoreRows"].clone()),
        (json!(true), json!(false))
    );
    assert_eq!(v["_stoppedBy"], json!("end"));
    assert_eq!(v["_resultId"], json!("res_e"));
    assert!(v.get("_truncated").is_none() && v.get("_unmatchedFields").is_none());
    assert!(p.stored && !p.truncated);
    let keys: Vec<&String> = v
        .as_object()
        .map(|m| m.keys().collect())
        .unwrap_or_default();
    assert_eq!(keys[0], "items");
    // F3: the stored set is the unprojected, unfiltered walk.
    let stored = o.to_stored();
    assert_eq!(stored["items"].as_array().map(Vec::len), Some(3));
    assert_eq!(stored["items"][1]["customer"]["tier"], json!("gold"));
}

#[test]
fn f2_f4_fields_always_apply_and_unmatched_paths_are_explained() {
    let body = json!({"items": [{"id": 1, "name": "a", "created": "x"}, {"id": 2, "name": "b"}]});
    let (o, plan) = outcome_of(
        &no_params(),
        json!({"_fields": ["id", "title"]}),
        body,
        true,
    );
    let v = present(&o, &plan, "r", &Limits::default()).value;
    assert_eq!(
        v["items"],
        json!([{"id": 1, "title": null}, {"id": 2, "title": null}])
    );
    assert_eq!(v["_unmatchedFields"]["paths"], json!(["title"]));
    assert_eq!(
        v["_unmatchedFields"]["topLevelKeys"],
        json!(["id", "name", "created"])
    );
    assert_eq!(
        v["_unmatchedFields"]["sampleItem"],
        json!({"id": 1, "name": "a", "created": "x"})
    );
}

#[test]
fn g1_envelope_cut_reports_shown_and_total() {
    let (o, plan) = outcome_of(
        &no_params(),
        json!({"_fields": ["inbox_id", "email"]}),
        json!({"data": inboxes(800)}),
        true,
    );
    let p = present(&o, &plan, "res_c", &small());
    let v = &p.value;
    assert!(p.truncated);
    let shown = v["items"].as_array().map_or(0, Vec::len);
    assert_eq!(
        (
            v["_itemCount"].clone(),
            v["_itemsShown"].clone(),
            v["_truncated"].clone()
        ),
        (json!(800), json!(shown), json!(true))
    );
    assert!(size_guard::json_len(v) <= size_guard::byte_budget(2_000));
    assert!(v["_note"]
        .as_str()
        .is_some_and(|n| n.contains(&format!("\"offset\": {shown}"))));
}

#[test]
fn g6_query_result_reads_back_the_stored_set() {
    let (o, _) = outcome_of(
        &no_params(),
        json!({"_fields": ["inbox_id"]}),
        json!({"data": inboxes(30)}),
        true,
    );
    let stored = o.to_stored_json();
    let r = query_result_json(stored.clone(), None, &json!({"resultId": "x", "filter": [{"field": "email", "op": "contains", "value": "agent2"}], "fields": ["inbox_id"]}), &Limits::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r["total"], json!(11), "agent2 and agent20..29");
    assert_eq!(r["items"][0], json!({"inbox_id": "inb_00002"}));
}

#[test]
fn non_json_bodies_are_text() {
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |_, _| {
        Ok(UpstreamResponse {
            status: 200,
            headers: vec![],
            body: "plain words ".repeat(3000).into_bytes(),
        })
    });
    let schema = no_params();
    let a = analyze(&schema);
    let plan =
        parse_call(&a, &schema, json!({}), false, &small()).unwrap_or_else(|e| panic!("{e}"));
    let o = block_on(run(&plan, &a, &api, &NoProgress, &clock, &small()))
        .unwrap_or_else(|e| panic!("{e}"));
    let p = present(&o, &plan, "t", &small());
    assert!(p.value["text"]
        .as_str()
        .is_some_and(|t| t.starts_with("plain words plain")));
    let r = fetch_result(
        &o.to_stored_json(),
        &json!({"offset": 6, "length": 5}),
        &small(),
    )
    .unwrap_or_default();
    assert_eq!(r["text"], json!("words"));
}

#[test]
fn g1_even_a_crowded_envelope_fits_the_budget() {
    // Forty failing values with long messages, a sample row and a cut: still within budget.
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |req, _| {
        match req.args.get("q").and_then(Value::as_str) {
            Some("ok") => ok(json!({"data": inboxes(400)})),
            _ => status(500, &"e".repeat(2_000)),
        }
    });
    let schema = no_params();
    let a = analyze(&schema);
    let limits = Limits {
        token_budget: 1_000,
        retries: 0,
        ..Limits::default()
    };
    let mut values: Vec<Value> = (0..40).map(|i| json!(format!("bad{i}"))).collect();
    values.push(json!("ok"));
    let args =
        json!({"_for_each": {"key": "q", "values": values}, "_fields": ["inbox_id", "nope"]});
    let plan = parse_call(&a, &schema, args, true, &limits).unwrap_or_else(|e| panic!("{e}"));
    let o = block_on(run(&plan, &a, &api, &NoProgress, &clock, &limits))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(o.for_each_errors.len(), 40);
    let p = present_json(&o, &plan, "res_x", &limits, &Default::default());
    assert!(
        p.json.len() <= size_guard::byte_budget(1_000),
        "{} bytes",
        p.json.len()
    );
    let v: Value = serde_json::from_str(&p.json).unwrap_or_default();
    assert_eq!(v["_resultId"], json!("res_x"));
    assert!(p.truncated && p.stored);
}

#[test]
fn g1_a_single_item_too_large_to_show_points_at_fetch_tool_result() {
    let huge = json!({"id": 1, "body": "x".repeat(20_000)});
    // the tool's own frame, and the walk's envelope
    for (args, body, looping) in [
        (json!({}), json!({"data": [huge.clone()], "page": 1}), false),
        (
            json!({"_fields": ["id", "body"]}),
            json!({"data": [huge.clone()]}),
            true,
        ),
    ] {
        let (o, plan) = outcome_of(&no_params(), args, body, looping);
        let p = present(&o, &plan, "res_1", &small());
        assert!(p.truncated, "{}", p.value);
        let note = p.value["_note"].as_str().unwrap_or_default();
        assert!(
            note.contains("fetchToolResult") && note.contains("res_1"),
            "{}",
            p.value
        );
        assert!(size_guard::json_len(&p.value) <= size_guard::byte_budget(2_000));
    }
}
