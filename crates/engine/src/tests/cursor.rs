//! P5: cursor walks against in-memory APIs paginating like real public ones, and against
//! hostile ones. Every test checks the exact row set, that no row comes twice, and the
//! verdict.

use crate::tests::kit::*;
use crate::*;
use serde_json::{json, Value};

const N: usize = 237;

fn schema(props: Value) -> Value {
    json!({"type": "object", "properties": props})
}

/// Runs `_all_pages` (plus `extra` arguments) with the provider at `api.base_url`.
pub(crate) fn walk_all(
    schema: &Value,
    extra: Value,
    api: &FakeApi,
    clock: &FakeClock,
    limits: &Limits,
) -> Outcome {
    let a = analyze(schema);
    let mut args = json!({"_all_pages": true});
    if let (Some(m), Value::Object(e)) = (args.as_object_mut(), extra) {
        m.extend(e);
    }
    let plan = parse_call(&a, schema, args, true, limits).unwrap_or_else(|e| panic!("{e}"));
    block_on(run(&plan, &a, api, &NoProgress, clock, limits)).unwrap_or_else(|e| panic!("{e}"))
}

fn ids(o: &Outcome) -> Vec<u64> {
    o.items
        .iter()
        .filter_map(|i| i.to_value()["id"].as_u64())
        .collect()
}

fn all_rows(o: &Outcome) {
    every_row(o, N);
}

/// Rows 0..n in order, and a verdict saying so.
pub(crate) fn every_row(o: &Outcome, n: usize) {
    assert_eq!(
        ids(o),
        (0..n as u64).collect::<Vec<_>>(),
        "{}",
        o.verdict.note
    );
    assert!(o.verdict.paging_complete, "{}", o.verdict.note);
    assert_eq!(o.verdict.stopped_by, Some(StopReason::End));
}

/// Opaque cursors: the offset, disguised.
fn enc(at: usize) -> String {
    format!("k{:x}q", at * 7 + 3)
}

fn dec(c: &str) -> usize {
    usize::from_str_radix(c.trim_start_matches('k').trim_end_matches('q'), 16)
        .map_or(usize::MAX, |v| (v - 3) / 7)
}

#[test]
fn p5_github_link_header_with_page_numbers() {
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |req, _| {
        let (size, page) = (
            arg_u64(req, "per_page").unwrap_or(30) as usize,
            arg_u64(req, "page").unwrap_or(1) as usize,
        );
        let start = ((page - 1) * size).min(N);
        let end = (start + size).min(N);
        let link = if end < N {
            format!("<https://api.example.com/repos/o/r/issues?per_page={size}&page={}>; rel=\"next\", <https://api.example.com/repos/o/r/issues?page=9>; rel=\"last\"", page + 1)
        } else {
            String::new()
        };
        with_header(json!(rows(start..end)), "Link", link)
    });
    let s = schema(
        json!({"per_page": {"type": "integer", "maximum": 100}, "page": {"type": "integer"}}),
    );
    all_rows(&walk_all(&s, json!({}), &api, &clock, &Limits::default()));
    assert_eq!(api.requests().len(), 3);
}

#[test]
fn p5_github_link_header_cursor_urls_are_followed() {
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |req, _| {
        let at = req
            .next_url
            .as_deref()
            .and_then(|u| query(u, "after"))
            .map_or(0, |c| dec(&c));
        let end = (at + 50).min(N);
        let link = if end < N {
            format!(
                "<https://api.example.com/orgs/o/members?after={}>; rel=\"next\"",
                enc(end)
            )
        } else {
            String::new()
        };
        with_header(json!(rows(at..end)), "link", link)
    });
    let s = schema(json!({"per_page": {"type": "integer"}, "after": {"type": "string"}}));
    let o = walk_all(&s, json!({}), &api, &clock, &Limits::default());
    all_rows(&o);
    let reqs = api.requests();
    assert_eq!(reqs[0].next_url, None);
    assert_eq!(
        reqs[1].next_url.as_deref(),
        Some(format!("https://api.example.com/orgs/o/members?after={}", enc(50)).as_str())
    );
}

#[test]
fn p5_stripe_starting_after_last_id() {
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |req, _| {
        let size = arg_u64(req, "limit").unwrap_or(10) as usize;
        let at = arg_u64(req, "starting_after").map_or(0, |id| id as usize + 1);
        let end = (at + size).min(N);
        ok(
            json!({"object": "list", "url": "/v1/customers", "has_more": end < N, "data": rows(at..end)}),
        )
    });
    let s = schema(
        json!({"limit": {"type": "integer", "maximum": 100}, "starting_after": {"type": "string"}}),
    );
    all_rows(&walk_all(&s, json!({}), &api, &clock, &Limits::default()));
    let reqs = api.requests();
    assert_eq!(reqs.len(), 3);
    assert_eq!(reqs[1].args["starting_after"], json!("99"));
    assert!(reqs.iter().all(|r| r.args["limit"] == json!(100)));
}

#[test]
fn p5_google_page_token() {
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |req, _| {
        let at = arg_str(req, "pageToken").map_or(0, |c| dec(&c));
        let end = (at + 40).min(N);
        let mut body = json!({"kind": "drive#fileList", "files": rows(at..end)});
        if end < N {
            body["nextPageToken"] = json!(enc(end));
        }
        ok(body)
    });
    let s = schema(
        json!({"pageSize": {"type": "integer", "maximum": 40}, "pageToken": {"type": "string"}, "q": {"type": "string"}}),
    );
    all_rows(&walk_all(
        &s,
        json!({"q": "trashed=false"}),
        &api,
        &clock,
        &Limits::default(),
    ));
    assert!(api
        .requests()
        .iter()
        .all(|r| r.args["q"] == json!("trashed=false")));
}

#[test]
fn p5_slack_empty_next_cursor_ends() {
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |req, _| {
        let at = arg_str(req, "cursor").map_or(0, |c| dec(&c));
        let end = (at + 100).min(N);
        let next = if end < N { enc(end) } else { String::new() };
        ok(
            json!({"ok": true, "members": rows(at..end), "cache_ts": 1, "response_metadata": {"next_cursor": next}}),
        )
    });
    let s = schema(json!({"limit": {"type": "integer"}, "cursor": {"type": "string"}}));
    all_rows(&walk_all(&s, json!({}), &api, &clock, &Limits::default()));
    assert_eq!(api.requests().len(), 3);
}

#[test]
fn p5_hubspot_paging_next_after() {
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |req, _| {
        let at = arg_str(req, "after").map_or(0, |c| dec(&c));
        let end = (at + 100).min(N);
        let mut body = json!({"results": rows(at..end)});
        if end < N {
            body["paging"] = json!({"next": {"after": enc(end), "link": format!("https://api.example.com/crm/v3/objects/contacts?after={}", enc(end))}});
        }
        ok(body)
    });
    let s =
        schema(json!({"limit": {"type": "integer", "maximum": 100}, "after": {"type": "string"}}));
    all_rows(&walk_all(&s, json!({}), &api, &clock, &Limits::default()));
}

#[test]
fn p5_graph_odata_next_link() {
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |req, _| {
        let at = req
            .next_url
            .as_deref()
            .and_then(|u| query(u, "$skiptoken"))
            .map_or(0, |c| dec(&c));
        let end = (at + 100).min(N);
        let mut body = json!({"@odata.context": "https://api.example.com/$metadata#users", "value": rows(at..end)});
        if end < N {
            body["@odata.nextLink"] = json!(format!(
                "https://api.example.com/v1.0/users?$top=100&$skiptoken={}",
                enc(end)
            ));
        }
        ok(body)
    });
    let s = schema(json!({"$top": {"type": "integer"}, "$skiptoken": {"type": "string"}}));
    all_rows(&walk_all(&s, json!({}), &api, &clock, &Limits::default()));
}

#[test]
fn p5_notion_body_start_cursor() {
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |req, _| {
        let at = arg_str(req, "start_cursor").map_or(0, |c| dec(&c));
        let size = arg_u64(req, "page_size").unwrap_or(10) as usize;
        let end = (at + size).min(N);
        ok(
            json!({"object": "list", "results": rows(at..end), "next_cursor": if end < N { json!(enc(end)) } else { Value::Null }, "has_more": end < N}),
        )
    });
    let s = schema(
        json!({"database_id": {"type": "string"}, "body": {"type": "object", "properties": {
        "start_cursor": {"type": "string"}, "page_size": {"type": "integer", "maximum": 100}, "filter": {"type": "object"}}}}),
    );
    let o = walk_all(
        &s,
        json!({"database_id": "db1"}),
        &api,
        &clock,
        &Limits::default(),
    );
    all_rows(&o);
    let second = &api.requests()[1].args;
    assert_eq!(second["body"]["start_cursor"], json!(enc(100)));
    assert_eq!(second["body"]["page_size"], json!(100));
    assert!(second.get("start_cursor").is_none());
}

#[test]
fn p5_agent_style_data_cursor_has_more_total() {
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |req, _| {
        let at = arg_str(req, "cursor").map_or(0, |c| dec(&c));
        let end = (at + 50).min(N);
        let mut body = json!({"data": rows(at..end), "has_more": end < N, "cursor": if end < N { json!(enc(end)) } else { Value::Null }});
        if at == 0 {
            body["total"] = json!(N);
        }
        ok(body)
    });
    let s =
        schema(json!({"limit": {"type": "integer", "maximum": 50}, "cursor": {"type": "string"}}));
    let o = walk_all(&s, json!({}), &api, &clock, &Limits::default());
    all_rows(&o);
    assert_eq!(o.verdict.total, Some(N as u64));
}

#[test]
fn p5_fewer_rows_than_announced_is_never_complete() {
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |req, _| {
        let at = arg_str(req, "cursor").map_or(0, |c| dec(&c));
        let end = (at + 50).min(N);
        // Announces 3,226 but only ever has N rows.
        ok(
            json!({"data": rows(at..end), "has_more": end < N, "cursor": if end < N { json!(enc(end)) } else { Value::Null }, "total": 3226}),
        )
    });
    let s = schema(json!({"limit": {"type": "integer"}, "cursor": {"type": "string"}}));
    let o = walk_all(&s, json!({}), &api, &clock, &Limits::default());
    assert_eq!(ids(&o), (0..N as u64).collect::<Vec<_>>());
    assert!(!o.verdict.paging_complete && o.verdict.likely_more_rows);
    assert_eq!(o.verdict.total, Some(3226));
    assert!(
        o.verdict
            .note
            .contains(&format!("Fetched {N} of the 3226 rows")),
        "{}",
        o.verdict.note
    );
}

#[test]
fn p5_hostile_endless_cursor_hits_the_page_bound() {
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |req, _| {
        let at = arg_str(req, "cursor").map_or(0, |c| dec(&c));
        ok(json!({"data": rows(at..at + 10), "cursor": enc(at + 10), "has_more": true}))
    });
    let s = schema(json!({"cursor": {"type": "string"}}));
    let o = walk_all(&s, json!({}), &api, &clock, &Limits::default());
    assert_eq!(ids(&o), (0..200).collect::<Vec<_>>());
    assert_eq!(o.verdict.stopped_by, Some(StopReason::Pages));
    assert!(!o.verdict.paging_complete && o.verdict.likely_more_rows);
}

#[test]
fn p5_hostile_new_cursor_same_page_is_a_loop() {
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |_, n| {
        ok(json!({"data": rows(0..10), "next_cursor": format!("fresh-{n}")}))
    });
    let s = schema(json!({"cursor": {"type": "string"}}));
    let o = walk_all(&s, json!({}), &api, &clock, &Limits::default());
    assert_eq!(ids(&o), (0..10).collect::<Vec<_>>(), "no row twice");
    assert_eq!(o.verdict.stopped_by, Some(StopReason::Loop));
    assert!(!o.verdict.paging_complete);
    assert!(
        o.verdict
            .note
            .contains("every distinct row seems to have been fetched"),
        "{}",
        o.verdict.note
    );
    assert_eq!(api.requests().len(), 2);
}

#[test]
fn p5_hostile_cursor_cycle() {
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |req, _| {
        let (at, next) = match arg_str(req, "cursor").as_deref() {
            None => (0, "A"),
            Some("A") => (10, "B"),
            Some("B") => (20, "A"),
            Some(_) => (90, "Z"),
        };
        ok(json!({"data": rows(at..at + 10), "next_cursor": next, "total": 100}))
    });
    let s = schema(json!({"limit": {"type": "integer"}, "cursor": {"type": "string"}}));
    let o = walk_all(&s, json!({}), &api, &clock, &Limits::default());
    assert_eq!(ids(&o), (0..30).collect::<Vec<_>>());
    assert_eq!(o.verdict.stopped_by, Some(StopReason::Loop));
    assert!(!o.verdict.paging_complete && o.verdict.likely_more_rows);
    assert!(
        o.verdict.note.contains("some rows were not fetched")
            && o.verdict.note.contains("Fetched 30 of the 100"),
        "{}",
        o.verdict.note
    );
    assert_eq!(api.requests().len(), 3);
}

#[test]
fn p5_hostile_next_url_to_another_host_is_not_followed() {
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |_, _| {
        ok(
            json!({"value": rows(0..10), "@odata.nextLink": "https://collector.evil.example/steal?page=2"}),
        )
    });
    let s = schema(json!({"$top": {"type": "integer"}, "$skiptoken": {"type": "string"}}));
    let o = walk_all(&s, json!({}), &api, &clock, &Limits::default());
    assert_eq!(ids(&o), (0..10).collect::<Vec<_>>());
    assert_eq!(o.verdict.stopped_by, Some(StopReason::OffOrigin));
    assert!(o.verdict.note.contains("collector.evil.example"));
    let reqs = api.requests();
    assert_eq!(reqs.len(), 1);
    assert!(reqs.iter().all(|r| r.next_url.is_none()));
    // A relative next link stays on the provider.
    let api = FakeApi::new(&clock, |req, _| match req.next_url.as_deref() {
        None => ok(json!({"data": rows(0..10), "links": {"next": "/v1/items?cursor=x"}})),
        Some(u) => {
            assert_eq!(u, "https://api.example.com/v1/items?cursor=x");
            ok(json!({"data": rows(10..15), "links": {"next": null}}))
        }
    });
    let s = schema(json!({"cursor": {"type": "string"}}));
    let o = walk_all(&s, json!({}), &api, &clock, &Limits::default());
    assert_eq!(ids(&o), (0..15).collect::<Vec<_>>());
    assert!(o.verdict.paging_complete);
}

#[test]
fn p5_hostile_last_page_repeated_forever() {
    // Exactly 200 rows in pages of 100; any page past the end answers page 2 again.
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |req, _| {
        let page = arg_u64(req, "page").unwrap_or(1).min(2) as usize;
        ok(json!({"items": rows((page - 1) * 100..page * 100)}))
    });
    let s = schema(
        json!({"per_page": {"type": "integer", "maximum": 100}, "page": {"type": "integer"}}),
    );
    let o = walk_all(&s, json!({}), &api, &clock, &Limits::default());
    assert_eq!(ids(&o), (0..200).collect::<Vec<_>>());
    assert_eq!(o.verdict.stopped_by, Some(StopReason::Loop));
    assert!(!o.verdict.paging_complete);
    assert!(!o.verdict.likely_more_rows);
    assert!(
        o.verdict
            .note
            .contains("every distinct row seems to have been fetched"),
        "{}",
        o.verdict.note
    );
}

#[test]
fn p5_hostile_silently_capped_page_size_with_has_more() {
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |req, _| {
        let at = arg_str(req, "cursor").map_or(0, |c| dec(&c));
        let end = (at + 7).min(N); // asked for 100, gets 7
        ok(json!({"data": rows(at..end), "cursor": enc(end), "has_more": end < N}))
    });
    let s = schema(json!({"limit": {"type": "integer"}, "cursor": {"type": "string"}}));
    let limits = Limits {
        pages_per_collection: 100,
        ..Limits::default()
    };
    let o = walk_all(&s, json!({}), &api, &clock, &limits);
    all_rows(&o);
}

#[test]
fn p5_has_more_without_a_way_forward_is_reported() {
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |_, _| {
        ok(json!({"data": rows(0..10), "has_more": true}))
    });
    let s = schema(json!({"cursor": {"type": "string"}}));
    let o = walk_all(&s, json!({}), &api, &clock, &Limits::default());
    assert!(!o.verdict.paging_complete && o.verdict.likely_more_rows);
    assert!(
        o.verdict.note.contains("still reporting more"),
        "{}",
        o.verdict.note
    );
}

#[test]
fn p7_single_page_of_a_cursor_api_points_to_all_pages() {
    let clock = FakeClock::default();
    let api = FakeApi::new(&clock, |_, _| {
        ok(json!({"data": rows(0..50), "cursor": "c1", "has_more": true, "total": 3226}))
    });
    let s = schema(json!({"limit": {"type": "integer"}, "cursor": {"type": "string"}}));
    let a = analyze(&s);
    let limits = Limits::default();
    let plan = parse_call(&a, &s, json!({}), true, &limits).unwrap_or_else(|e| panic!("{e}"));
    let o = block_on(run(&plan, &a, &api, &NoProgress, &clock, &limits))
        .unwrap_or_else(|e| panic!("{e}"));
    let v = present(&o, &plan, "r", &limits).value;
    assert_eq!(
        (v["_likelyMoreRows"].clone(), v["_total"].clone()),
        (json!(true), json!(3226))
    );
    assert!(v["_note"]
        .as_str()
        .is_some_and(|n| n.contains("_all_pages: true")));
    let m = model_tool("list_inboxes", "List inboxes", &s, &a, true);
    assert!(m.input_schema["properties"].get("_all_pages").is_some());
}
