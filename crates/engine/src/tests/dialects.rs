//! P8: page dialects read from names, types and the first response, walked against
//! in-memory APIs shaped like public ones.

use crate::tests::cursor::{every_row, walk_all};
use crate::tests::kit::*;
use crate::*;
use serde_json::{json, Value};

const N: usize = 230;

fn schema(props: Value) -> Value {
    json!({"type": "object", "properties": props})
}

fn complete(o: &Outcome) {
    every_row(o, N);
}

/// One page on purpose (`_fields` only).
fn single(s: &Value, args: Value, api: &FakeApi, clock: &FakeClock) -> Outcome {
    let a = analyze(s);
    let d = Limits::default();
    let plan = parse_call(&a, s, args, true, &d).unwrap_or_else(|e| panic!("{e}"));
    block_on(run(&plan, &a, api, &NoProgress, clock, &d)).unwrap_or_else(|e| panic!("{e}"))
}

/// Airtable: `pageSize` and a string `offset` the API hands out only while more remain.
#[test]
fn p8_a_string_offset_is_an_opaque_cursor_sent_back_as_given() {
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |req, _| {
        let at = match req.args.get("offset") {
            None => 0,
            Some(Value::String(s)) => match s.strip_prefix("itr") {
                Some(n) => n
                    .split('/')
                    .next()
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(N),
                None => return status(422, "INVALID_OFFSET_VALUE"),
            },
            Some(_) => return status(422, "INVALID_OFFSET_VALUE: not a string"),
        };
        let size = arg_u64(req, "pageSize").unwrap_or(100) as usize;
        let end = (at + size).min(N);
        let mut body = json!({"records": rows(at..end)});
        if end < N {
            body["offset"] = json!(format!("itr{end}/rec{end}"));
        }
        ok(body)
    });
    let s = schema(json!({
        "pageSize": {"type": "integer", "maximum": 100}, "offset": {"type": "string"}
    }));
    let o = walk_all(&s, json!({}), &api, &clock, &Limits::default());
    complete(&o);
    let sent: Vec<Option<Value>> = api
        .requests()
        .iter()
        .map(|r| r.args.get("offset").cloned())
        .collect();
    assert_eq!(
        sent,
        [
            None,
            Some(json!("itr100/rec100")),
            Some(json!("itr200/rec200"))
        ]
    );
    // One page alone says there is more.
    let one = single(&s, json!({"_fields": ["id"]}), &api, &clock);
    assert!(!one.verdict.paging_complete && one.verdict.likely_more_rows);
}

/// Zendesk / JSON:API: `page[size]` and `page[after]`, `meta.has_more` and
/// `meta.after_cursor`, `links.next`.
#[test]
fn p8_json_api_brackets_are_walked() {
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |req, _| {
        let at = req
            .next_url
            .as_deref()
            .and_then(|u| query(u, "page[after]"))
            .or_else(|| arg_str(req, "page[after]"))
            .map_or(0, |c| c.trim_start_matches('c').parse().unwrap_or(N));
        let size = req
            .next_url
            .as_deref()
            .and_then(|u| query(u, "page[size]"))
            .and_then(|v| v.parse().ok())
            .or_else(|| arg_u64(req, "page[size]").map(|v| v as usize))
            .unwrap_or(25);
        let end = (at + size).min(N);
        let more = end < N;
        ok(json!({
            "tickets": rows(at..end),
            "meta": {"has_more": more, "after_cursor": if more { json!(format!("c{end}")) } else { Value::Null }},
            "links": {"next": if more { json!(format!("https://api.example.com/api/v2/tickets?page[after]=c{end}&page[size]={size}")) } else { Value::Null }}
        }))
    });
    let s = schema(json!({
        "page[size]": {"type": "integer", "maximum": 100}, "page[after]": {"type": "string"}
    }));
    complete(&walk_all(&s, json!({}), &api, &clock, &Limits::default()));
}

/// Twilio: `PageSize`, `Page`, `PageToken`, and a relative `next_page_uri`.
#[test]
fn p8_capitalised_names_and_a_relative_next_uri() {
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |req, _| {
        let size = arg_u64(req, "PageSize").unwrap_or(50) as usize;
        let page = match req.next_url.as_deref() {
            Some(u) => query(u, "Page").and_then(|p| p.parse().ok()).unwrap_or(99),
            None => arg_u64(req, "Page").unwrap_or(0) as usize,
        };
        let at = (page * size).min(N);
        let end = (at + size).min(N);
        let next = (end < N).then(|| {
            format!(
                "/2010-04-01/Accounts/AC1/Messages.json?PageSize={size}&Page={}&PageToken=PA{end}",
                page + 1
            )
        });
        ok(
            json!({"messages": rows(at..end), "page": page, "page_size": size, "next_page_uri": next}),
        )
    });
    let s = schema(json!({
        "PageSize": {"type": "integer", "maximum": 50}, "Page": {"type": "integer", "minimum": 0},
        "PageToken": {"type": "string"}
    }));
    complete(&walk_all(&s, json!({}), &api, &clock, &Limits::default()));
}

/// Spring Data: `page`, `size`, `content`, `last`, `totalElements`.
#[test]
fn p8_spring_pages_read_last_and_total_elements() {
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |req, _| {
        let size = arg_u64(req, "size").unwrap_or(20) as usize;
        let page = arg_u64(req, "page").unwrap_or(0) as usize;
        let at = (page * size).min(N);
        let end = (at + size).min(N);
        ok(
            json!({"content": rows(at..end), "last": end >= N, "totalElements": N, "number": page, "size": size}),
        )
    });
    let s = schema(json!({
        "page": {"type": "integer", "minimum": 0}, "size": {"type": "integer", "maximum": 100}
    }));
    complete(&walk_all(&s, json!({}), &api, &clock, &Limits::default()));
    // A single full page is not the last, whatever its size says.
    let one = single(&s, json!({"size": 100, "_fields": ["id"]}), &api, &clock);
    assert_eq!(one.verdict.total, Some(N as u64));
    assert!(!one.verdict.paging_complete && one.verdict.likely_more_rows);
}

/// The schema hint names parameters detection would not find.
#[test]
fn p8_hinted_parameters_are_walked() {
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |req, _| {
        let n = arg_u64(req, "n").unwrap_or(10) as usize;
        let at = arg_u64(req, "skipRows").unwrap_or(0) as usize;
        ok(json!({"rows": rows(at.min(N)..(at + n).min(N))}))
    });
    let mut s =
        schema(json!({"n": {"type": "integer", "maximum": 40}, "skipRows": {"type": "integer"}}));
    assert!(!analyze(&s).paginated());
    s["x-loopgate-pagination"] = json!({"size": "n", "offset": "skipRows"});
    complete(&walk_all(&s, json!({}), &api, &clock, &Limits::default()));
}
