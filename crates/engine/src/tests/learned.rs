//! P14, P15: paging learned once per tool — a silent API's first page number, a page size
//! the API caps silently, paging seen only in responses — used by the next walk, by every
//! `_for_each` value of the same call, and dropped when a response contradicts it.

use crate::tests::kit::*;
use crate::tests::walk::{page_api, silent_page_schema};
use crate::*;
use serde_json::{json, Value};

/// One call of the tool (`schema`, with what its walks learned) against `api`.
fn call(schema: &Value, learned: &Learned, args: Value, api: &FakeApi) -> Outcome {
    let a = analyze(schema).with_learned(learned.clone());
    let limits = Limits::default();
    let plan = parse_call(&a, schema, args, true, &limits).unwrap_or_else(|e| panic!("{e}"));
    block_on(run(&plan, &a, api, &NoProgress, &api.clock, &limits))
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A 0-based page-number API over `n` rows (`?page=0` is the first page; no parameter
/// is page 0 too).
fn zero_based(clock: &FakeClock, n: usize) -> FakeApi {
    FakeApi::new(clock, move |req, _| {
        let size = arg_u64(req, "per_page").unwrap_or(10) as usize;
        let page = arg_u64(req, "page").unwrap_or(0) as usize;
        let start = (page * size).min(n);
        ok(json!({"items": rows(start..(start + size).min(n))}))
    })
}

#[test]
fn p14_a_silent_one_based_api_costs_exactly_its_pages_after_its_first_walk() {
    let schema = silent_page_schema(Some(10));
    let clock = FakeClock::default();
    let api = page_api(&clock, 25, 1000, |r, _| json!({"items": r}));
    let first = call(
        &schema,
        &Learned::default(),
        json!({"_all_pages": true}),
        &api,
    );
    assert_eq!(row_ids(&first), (0..25).collect::<Vec<_>>());
    assert_eq!(api.requests().len(), 4, "P11's probe: one request more");
    assert_eq!(first.learned.page_base, Some(1));
    assert!(!first.learned.evidence.is_empty());
    let api = page_api(&clock, 25, 1000, |r, _| json!({"items": r}));
    let second = call(&schema, &first.learned, json!({"_all_pages": true}), &api);
    assert_eq!(row_ids(&second), (0..25).collect::<Vec<_>>());
    assert!(second.verdict.paging_complete, "{}", second.verdict.note);
    assert_eq!(api.requests().len(), 3, "exactly its pages");
    assert_eq!(second.learned.facts(), first.learned.facts(), "confirmed");
}

#[test]
fn p14_a_silent_zero_based_api_is_learned_too() {
    let schema = silent_page_schema(Some(10));
    let clock = FakeClock::default();
    let api = zero_based(&clock, 25);
    let first = call(
        &schema,
        &Learned::default(),
        json!({"_all_pages": true}),
        &api,
    );
    assert_eq!(row_ids(&first), (0..25).collect::<Vec<_>>());
    assert_eq!(first.learned.page_base, Some(0));
    let api = zero_based(&clock, 25);
    let second = call(&schema, &first.learned, json!({"_all_pages": true}), &api);
    assert_eq!(row_ids(&second), (0..25).collect::<Vec<_>>());
    assert!(second.verdict.paging_complete, "{}", second.verdict.note);
    assert_eq!(api.requests().len(), 3);
}

/// E5, P14: 17 values × 3 pages of a silent 1-based API within the 60-request budget:
/// the first value pays the probe, the others start where it found the first page.
#[test]
fn p14_a_fan_out_pays_the_probe_once() {
    let schema = silent_page_schema(Some(10));
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |req, _| {
        let owner = arg_u64(req, "owner_id").unwrap_or(0) as usize;
        let size = arg_u64(req, "per_page").unwrap_or(10) as usize;
        let page = arg_u64(req, "page").unwrap_or(1).max(1) as usize;
        let start = ((page - 1) * size).min(25);
        let r: Vec<Value> = (start..(start + size).min(25))
            .map(|i| json!({"id": owner * 100 + i}))
            .collect();
        ok(json!({"items": r}))
    });
    let values: Vec<u64> = (1..=17).collect();
    let o = call(
        &schema,
        &Learned::default(),
        json!({"_all_pages": true, "_for_each": {"key": "owner_id", "values": values}}),
        &api,
    );
    assert!(o.verdict.paging_complete, "{}", o.verdict.note);
    assert_eq!(o.items.len(), 17 * 25);
    assert_eq!(o.requests, 4 + 16 * 3, "{}", o.verdict.note);
    assert_eq!(
        api.requests().len(),
        4 + 16 * 3,
        "nothing sent ahead is wasted"
    );
    assert_eq!(o.learned.page_base, Some(1));
}

/// P14: asked for 100, the API gives 35 while its total says more: the next walk asks
/// for 35, so a page of 35 is a full page.
#[test]
fn p14_a_silently_capped_size_is_asked_for_as_given() {
    let schema = json!({"type": "object", "properties": {
        "per_page": {"type": "integer", "maximum": 100},
        "page": {"type": "integer", "minimum": 1}}});
    let clock = FakeClock::default();
    let api = page_api(&clock, 100, 35, |r, n| json!({"items": r, "total": n}));
    let first = call(
        &schema,
        &Learned::default(),
        json!({"_all_pages": true}),
        &api,
    );
    assert_eq!(row_ids(&first), (0..100).collect::<Vec<_>>());
    assert_eq!(first.learned.size_cap, Some(35));
    // the same API without its total: only the learned size says a page of 35 is full
    let api = page_api(&clock, 100, 35, |r, _| json!({"items": r}));
    let second = call(&schema, &first.learned, json!({"_all_pages": true}), &api);
    assert_eq!(row_ids(&second), (0..100).collect::<Vec<_>>());
    assert!(second.verdict.paging_complete, "{}", second.verdict.note);
    let sizes: Vec<Option<u64>> = api
        .requests()
        .iter()
        .map(|r| arg_u64(r, "per_page"))
        .collect();
    assert_eq!(sizes, [Some(35); 3]);
}

/// P14: what a response contradicts is dropped: pages learned to start at 1, the API now
/// links page 0 as the previous page of page 1.
#[test]
fn p14_a_contradicted_base_is_replaced() {
    let schema = silent_page_schema(Some(10));
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |req, _| {
        let page = arg_u64(req, "page").unwrap_or(0) as usize;
        let start = (page * 10).min(25);
        let mut body = json!({"items": rows(start..(start + 10).min(25))});
        if page > 0 {
            body["links"] = json!({"prev": format!("/items?page={}", page - 1)});
        }
        ok(body)
    });
    let learned = Learned {
        page_base: Some(1),
        ..Learned::default()
    };
    let o = call(&schema, &learned, json!({"_all_pages": true}), &api);
    assert_eq!(row_ids(&o), (0..25).collect::<Vec<_>>());
    assert_eq!(o.learned.page_base, Some(0));
}

/// P15: a tool with no paging parameter whose response links its next page (Salesforce's
/// relative `nextRecordsUrl`) is walkable from then on, and the call that saw it says how.
#[test]
fn p15_paging_seen_in_a_response_is_offered_and_walked() {
    let schema = json!({"type": "object", "properties": {"q": {"type": "string"}}});
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |req, _| {
        let at: usize = req
            .next_url
            .as_deref()
            .and_then(|u| u.rsplit('-').next()?.parse().ok())
            .unwrap_or(0);
        let end = (at + 4).min(10);
        let mut body = json!({"totalSize": 10, "done": end == 10,
            "records": rows(at..end)});
        if end < 10 {
            body["nextRecordsUrl"] = json!(format!("/services/data/v59.0/query/01gD-{end}"));
        }
        ok(body)
    });
    assert!(!analyze(&schema).paginated());
    let first = call(
        &schema,
        &Learned::default(),
        json!({"_fields": ["id"]}),
        &api,
    );
    assert_eq!(row_ids(&first), [0, 1, 2, 3]);
    assert!(first.learned.response_paging);
    assert!(
        first.verdict.note.contains("`_all_pages: true`"),
        "{}",
        first.verdict.note
    );
    let a = analyze(&schema).with_learned(first.learned.clone());
    let tool = model_tool("q", "Query", &schema, &a, true);
    assert!(
        tool.input_schema["properties"].get("_all_pages").is_some(),
        "{}",
        tool.input_schema
    );
    let all = call(&schema, &first.learned, json!({"_all_pages": true}), &api);
    assert_eq!(row_ids(&all), (0..10).collect::<Vec<_>>());
    assert!(all.verdict.paging_complete, "{}", all.verdict.note);
    let followed: Vec<Option<String>> = api.requests().into_iter().map(|r| r.next_url).collect();
    assert_eq!(
        followed[2].as_deref(),
        Some("https://api.example.com/services/data/v59.0/query/01gD-4"),
        "a relative link resolves against the provider's origin"
    );
}
