//! P11 and P12 against in-memory APIs: a page-numbered API under a schema that says nothing
//! about its first page (0- or 1-based, no position hints in its answers); totals in
//! headers; next tokens under keys only the response schema describes, or no list names
//! (fastapi-pagination's `CursorPage.next_page`); hints and links in the API's own names
//! (`_page`, `_limit`); a tool with no paging parameter whose API links its next page.

use crate::analysis::signals::{self, header_total, ResponseKeys, RESPONSE_HINT};
use crate::analysis::{hint_problem, PAGINATION_HINT};
use crate::tests::kit::*;
use crate::*;
use proptest::prelude::*;
use serde_json::{json, Value};
use std::collections::HashSet;

fn walk_with(
    s: &Value,
    args: Value,
    limits: &Limits,
    f: impl Fn(&UpstreamRequest, usize) -> Result<UpstreamResponse, UpstreamFailure>
        + Send
        + Sync
        + 'static,
) -> (Outcome, FakeApi) {
    let clock = FakeClock::default();
    let fake = FakeApi::new(&clock, f);
    let a = analyze(s);
    let plan = parse_call(&a, s, args, true, limits).unwrap_or_else(|e| panic!("{e}"));
    let o = block_on(run(&plan, &a, &fake, &NoProgress, &clock, limits))
        .unwrap_or_else(|e| panic!("{e}"));
    (o, fake)
}

fn all_pages(
    s: &Value,
    f: impl Fn(&UpstreamRequest, usize) -> Result<UpstreamResponse, UpstreamFailure>
        + Send
        + Sync
        + 'static,
) -> (Outcome, FakeApi) {
    walk_with(s, json!({"_all_pages": true}), &Limits::default(), f)
}

fn triple(o: &Outcome) -> (Option<StopReason>, bool, bool) {
    let v = &o.verdict;
    (v.stopped_by, v.paging_complete, v.likely_more_rows)
}

const COMPLETE: (Option<StopReason>, bool, bool) = (Some(StopReason::End), true, false);

/// A bare page-numbered API over `n` rows whose first page is `base`: nothing in its
/// answers says where it is (no echo, link, flag or total). Left out, the page is the
/// first.
fn silent(
    base: u64,
    n: usize,
) -> impl Fn(&UpstreamRequest, usize) -> Result<UpstreamResponse, UpstreamFailure> {
    move |req, _| {
        let size = arg_u64(req, "per_page").unwrap_or(10) as usize;
        let page = arg_u64(req, "page").unwrap_or(base).max(base);
        let start = ((page - base) as usize * size).min(n);
        ok(json!({"items": rows(start..(start + size).min(n))}))
    }
}

fn silent_schema(size: u64) -> Value {
    json!({"type": "object", "properties": {
        "per_page": {"type": "integer", "maximum": size}, "page": {"type": "integer"}
    }})
}

fn pages_sent(fake: &FakeApi) -> Vec<Option<u64>> {
    fake.requests().iter().map(|r| arg_u64(r, "page")).collect()
}

/// P11: the corner left open before — a 0-based API whose schema and answers say nothing
/// — is walked from page 0: the first request leaves the page out, page 1 differs from
/// it, so the first page was page 0. No extra request over a walk told the base.
#[test]
fn p11_a_silent_zero_based_api_is_walked_from_page_0() {
    let (o, fake) = all_pages(&silent_schema(100), silent(0, 250));
    assert_eq!(
        row_ids(&o),
        (0..250).collect::<Vec<_>>(),
        "{}",
        o.verdict.note
    );
    assert_eq!(triple(&o), COMPLETE, "{}", o.verdict.note);
    assert_eq!(pages_sent(&fake), [None, Some(1), Some(2)]);
}

/// P11: a silent 1-based API: page 1 repeats the rows of the request without the page
/// (recognised by its rows), so it is dropped and the walk goes on at page 2 — one
/// request more than a walk told the base, never a row twice.
#[test]
fn p11_a_silent_one_based_api_costs_one_request_more() {
    let (o, fake) = all_pages(&silent_schema(100), silent(1, 250));
    assert_eq!(
        row_ids(&o),
        (0..250).collect::<Vec<_>>(),
        "{}",
        o.verdict.note
    );
    assert_eq!(triple(&o), COMPLETE, "{}", o.verdict.note);
    assert_eq!(pages_sent(&fake), [None, Some(1), Some(2), Some(3)]);
}

/// P11 edge cases: 0 rows, 1 row, exactly one page, exactly k pages — both bases.
#[test]
fn p11_silent_apis_at_the_edges() {
    for base in [0, 1] {
        for n in [0usize, 1, 99, 100, 200, 201] {
            let (o, fake) = all_pages(&silent_schema(100), silent(base, n));
            assert_eq!(
                row_ids(&o),
                (0..n as u64).collect::<Vec<_>>(),
                "base {base}, {n} rows: {:?} {}",
                pages_sent(&fake),
                o.verdict.note
            );
            assert_eq!(
                triple(&o),
                COMPLETE,
                "base {base}, {n} rows: {}",
                o.verdict.note
            );
            // a short or empty first page is the whole set: one request
            if n < 100 {
                assert_eq!(o.requests, 1, "base {base}, {n} rows");
            }
        }
    }
}

/// P11: an API that ignores the page parameter (every request answers the same rows) is
/// caught by its rows, never merged twice nor called complete.
#[test]
fn p11_an_api_that_ignores_the_page_is_a_loop() {
    let (o, _) = all_pages(&silent_schema(10), |_, _| ok(json!({"items": rows(0..10)})));
    assert_eq!(row_ids(&o), (0..10).collect::<Vec<_>>());
    assert_eq!(
        o.verdict.stopped_by,
        Some(StopReason::Loop),
        "{}",
        o.verdict.note
    );
    assert!(!o.verdict.paging_complete);
}

/// P12: `X-Total-Count` (json-server), `X-Total` (GitLab) and `Content-Range` are totals.
#[test]
fn p12_totals_in_headers_are_read() {
    let h = |k: &str, v: &str| vec![(k.to_owned(), v.to_owned())];
    assert_eq!(header_total(&h("X-Total-Count", "319")), Some(319));
    assert_eq!(header_total(&h("x-total", " 7 ")), Some(7));
    assert_eq!(
        header_total(&h("Content-Range", "items 0-24/319")),
        Some(319)
    );
    assert_eq!(header_total(&h("Content-Range", "0-24/*")), None);
    assert_eq!(header_total(&h("Content-Range", "*/12")), Some(12));
    assert_eq!(header_total(&h("X-Total-Count", "many")), None);
    assert_eq!(header_total(&[]), None);
    let s = signals::read(&json!([]), &h("X-Total-Count", "5"));
    assert_eq!(s.total, Some(5));
    let body_wins = signals::read(&json!({"total": 9}), &h("X-Total-Count", "5"));
    assert_eq!(body_wins.total, Some(9));
}

/// P12: Flask-smorest's `X-Pagination` header, a JSON object, is paging metadata: its
/// total counts, so one page of a longer set says more rows exist (P7).
#[test]
fn p12_a_json_pagination_header_is_read_as_metadata() {
    let h = vec![(
        "X-Pagination".to_owned(),
        r#"{"total": 300, "total_pages": 30, "first_page": 1, "last_page": 30, "page": 1, "next_page": 2}"#
            .to_owned(),
    )];
    let s = signals::read(&json!([]), &h);
    assert_eq!(s.total, Some(300));
    assert!(s.says_more(10));
    let s = signals::read(
        &json!([]),
        &[("X-Pagination".to_owned(), "not json".to_owned())],
    );
    assert_eq!(s.total, None);
}

/// Litestar's `CursorPagination`: an integer `cursor` parameter, and the next position
/// handed back as a number under the same name. It is sent back (as a number), and the
/// walk ends where the API's rows do.
#[test]
fn p12_an_integer_cursor_handed_back_under_its_own_name() {
    let s = json!({"type": "object", "properties": {
        "cursor": {"type": "integer"},
        "results_per_page": {"type": "integer", "minimum": 1, "maximum": 100, "default": 100}
    }});
    let n = 301;
    let (o, fake) = all_pages(&s, move |req, _| {
        let size = arg_u64(req, "results_per_page").unwrap_or(100) as usize;
        let after = req
            .args
            .get("cursor")
            .and_then(Value::as_u64)
            .map(|c| c as usize + 1);
        let start = after.unwrap_or(0).min(n);
        let end = (start + size).min(n);
        let cursor = if end > start {
            json!(end - 1)
        } else {
            Value::Null
        };
        ok(json!({"items": rows(start..end), "results_per_page": size, "cursor": cursor}))
    });
    assert_eq!(
        row_ids(&o),
        (0..n as u64).collect::<Vec<_>>(),
        "{}",
        o.verdict.note
    );
    assert_eq!(triple(&o), COMPLETE, "{}", o.verdict.note);
    let sent: Vec<Option<Value>> = fake
        .requests()
        .iter()
        .map(|r| r.args.get("cursor").cloned())
        .collect();
    assert_eq!(sent[1], Some(json!(99)), "a number, as declared");
    assert!(fake
        .requests()
        .iter()
        .all(|r| r.args["results_per_page"] == json!(100)));
}

/// P12: a walk capped by a bound on an API whose only total is a header says how many
/// rows are missing, as it would with a total in the body.
#[test]
fn p12_a_capped_walk_names_what_a_header_total_says_is_missing() {
    let s = json!({"type": "object", "properties": {
        "_limit": {"type": "integer", "maximum": 10}, "_page": {"type": "integer", "minimum": 1}
    }});
    let limits = Limits {
        pages_per_collection: 3,
        ..Limits::default()
    };
    let (o, _) = walk_with(&s, json!({"_all_pages": true}), &limits, |req, _| {
        let page = arg_u64(req, "_page").unwrap_or(1).max(1) as usize;
        let start = ((page - 1) * 10).min(95);
        with_header(
            json!(rows(start..(start + 10).min(95))),
            "X-Total-Count",
            "95".to_owned(),
        )
    });
    assert_eq!(o.items.len(), 30);
    assert_eq!(o.verdict.total, Some(95));
    assert_eq!(o.verdict.stopped_by, Some(StopReason::Pages));
    assert!(
        o.verdict.note.contains("Fetched 30 of the 95"),
        "{}",
        o.verdict.note
    );
}

/// fastapi-pagination's `CursorPage`: the next cursor under `next_page`, percent-encoded,
/// `null` on the last page; `cursor` and `size` parameters.
fn cursor_page(
    n: usize,
) -> impl Fn(&UpstreamRequest, usize) -> Result<UpstreamResponse, UpstreamFailure> {
    move |req, _| {
        let size = arg_u64(req, "size").unwrap_or(50) as usize;
        let at = arg_str(req, "cursor")
            .and_then(|c| {
                c.strip_prefix("Pmk6")
                    .and_then(|r| r.strip_suffix("%3D%3D"))
                    .map(str::to_owned)
            })
            .and_then(|c| c.parse::<usize>().ok())
            .unwrap_or(0);
        let end = (at + size).min(n);
        let next = (end < n).then(|| format!("Pmk6{end}%3D%3D"));
        ok(
            json!({"items": rows(at..end), "total": null, "current_page": "Pmk6MA%3D%3D",
            "current_page_backwards": null, "previous_page": null, "next_page": next}),
        )
    }
}

fn cursor_page_schema(described: bool) -> Value {
    let mut s = json!({"type": "object", "properties": {
        "cursor": {"type": "string"}, "size": {"type": "integer", "maximum": 100}
    }});
    if described {
        s[RESPONSE_HINT] = json!({"next": ["next_page"], "total": ["total"]});
    }
    s
}

/// P12: the token under `next_page` is sent back — surely when the response schema
/// describes the key, and as a guess (said in the note) when only its name suggests it.
#[test]
fn p12_a_next_token_under_next_page_is_followed() {
    for described in [true, false] {
        let (o, fake) = all_pages(&cursor_page_schema(described), cursor_page(1234));
        assert_eq!(
            row_ids(&o),
            (0..1234).collect::<Vec<_>>(),
            "{}",
            o.verdict.note
        );
        assert_eq!(triple(&o), COMPLETE, "{}", o.verdict.note);
        assert_eq!(o.requests, 13);
        let sent: Vec<Option<String>> = fake
            .requests()
            .iter()
            .map(|r| arg_str(r, "cursor"))
            .collect();
        assert_eq!(
            sent[1].as_deref(),
            Some("Pmk6100%3D%3D"),
            "the token as handed out"
        );
        assert_eq!(
            o.verdict.note.contains("recognised only by its name"),
            !described,
            "{}",
            o.verdict.note
        );
    }
}

/// An API whose next token sits under a key no list names and no shape suggests.
fn odd_key(
    n: usize,
    key: &'static str,
) -> impl Fn(&UpstreamRequest, usize) -> Result<UpstreamResponse, UpstreamFailure> {
    move |req, _| {
        let at = arg_str(req, "cursor")
            .and_then(|c| c.strip_prefix('k').and_then(|r| r.parse::<usize>().ok()))
            .unwrap_or(0);
        let end = (at + 10).min(n);
        let mut body = json!({"data": rows(at..end), "meta": {}});
        if end < n {
            body["meta"][key] = json!(format!("k{end}"));
        }
        ok(body)
    }
}

/// P12: a token under a key only the response schema describes is followed; without the
/// schema's word nothing marks it as a token, and the walk ends after the first page.
#[test]
fn p12_a_token_only_the_response_schema_describes() {
    let mut s = json!({"type": "object", "properties": {"cursor": {"type": "string"}}});
    let (o, _) = all_pages(&s, odd_key(35, "resume_from"));
    assert_eq!(
        o.items.len(),
        10,
        "no list names the key and no shape suggests it"
    );
    s[RESPONSE_HINT] = json!({"next": ["meta", "resume_from"]});
    let (o, _) = all_pages(&s, odd_key(35, "resume_from"));
    assert_eq!(
        row_ids(&o),
        (0..35).collect::<Vec<_>>(),
        "{}",
        o.verdict.note
    );
    assert_eq!(triple(&o), COMPLETE, "{}", o.verdict.note);
    assert!(
        !o.verdict.note.contains("confidence"),
        "sure: {}",
        o.verdict.note
    );
}

/// P12: the response schema's key wins over a list's guess: a null there is the end even
/// when a listed key holds a string (an echoed cursor, say).
#[test]
fn p12_the_described_key_wins_over_the_lists() {
    let keys = ResponseKeys {
        next: Some(vec!["next_page".into()]),
        ..ResponseKeys::default()
    };
    let frame = json!({"cursor": "current", "next_page": null});
    assert!(
        signals::read(&frame, &[]).next_token.is_some(),
        "the list's guess"
    );
    let s = signals::read_with(&frame, &[], &keys);
    assert_eq!((s.next_token, s.next_url), (None, None));
    let hal = ResponseKeys {
        next: Some(vec!["_links".into(), "next".into(), "href".into()]),
        ..ResponseKeys::default()
    };
    let s = signals::read_with(
        &json!({"_links": {"next": {"href": "/x?page=2"}}}),
        &[],
        &hal,
    );
    assert_eq!(s.next_url.as_deref(), Some("/x?page=2"));
    assert_eq!(s.next_from, Some(signals::Source::Schema));
}

/// P12: hints name the API's own parameters or the tool's arguments; a name that is
/// neither is refused, naming the parameters there are.
#[test]
fn p12_hints_in_the_apis_own_names() {
    let mut s = json!({"type": "object", "properties": {
        "page": {"type": "integer", "x-loopgate-name": "_page"},
        "limit": {"type": "integer", "x-loopgate-name": "_limit"},
        "q": {"type": "string"}
    }});
    for hint in [
        json!({"size": "_limit", "page": "_page"}),
        json!({"size": "limit", "page": "page"}),
        json!({"size": "_limit", "page": "page", "first": 1}),
    ] {
        s[PAGINATION_HINT] = hint.clone();
        assert_eq!(hint_problem(&s), None, "{hint}");
        let a = analyze(&s);
        assert!(a.page_walkable(), "{hint}");
        assert_eq!(a.page_number.as_ref().map(|p| p.wire()), Some("_page"));
    }
    s[PAGINATION_HINT] = json!({"size": "per_page", "page": "_page"});
    let problem = hint_problem(&s).unwrap_or_default();
    assert!(problem.contains("'per_page'"), "{problem}");
    assert!(problem.contains("limit (the API's _limit)"), "{problem}");
    assert!(!analyze(&s).page_walkable());
    for bad in [
        json!("page"),
        json!({"pages": "page"}),
        json!({"size": 3, "page": "page"}),
        json!({"size": "limit"}),
        json!({"size": "limit", "page": "page", "first": 5}),
    ] {
        s[PAGINATION_HINT] = bad.clone();
        assert!(hint_problem(&s).is_some(), "{bad}");
    }
    s[PAGINATION_HINT] = json!({"disabled": true});
    assert_eq!(hint_problem(&s), None);
}

/// json-server: `_page`/`_limit` renamed by the importer, a `Link` header whose `next`
/// and `last` carry the API's names, `X-Total-Count`. The walk reads them all.
#[test]
fn p12_links_in_the_apis_own_names() {
    let s = json!({"type": "object", "properties": {
        "page": {"type": "integer", "x-loopgate-name": "_page"},
        "limit": {"type": "integer", "maximum": 10, "x-loopgate-name": "_limit"}
    }});
    let n = 47;
    let (o, fake) = all_pages(&s, move |req, _| {
        let page = arg_u64(req, "page").unwrap_or(1).max(1) as usize;
        let start = ((page - 1) * 10).min(n);
        let end = (start + 10).min(n);
        let last = n.div_ceil(10);
        let url = |p: usize| format!("https://api.example.com/posts?_page={p}&_limit=10");
        let mut link = format!("<{}>; rel=\"first\", <{}>; rel=\"last\"", url(1), url(last));
        if end < n {
            link.push_str(&format!(", <{}>; rel=\"next\"", url(page + 1)));
        }
        if page > 1 {
            link.push_str(&format!(", <{}>; rel=\"prev\"", url(page - 1)));
        }
        Ok(UpstreamResponse {
            status: 200,
            headers: vec![
                ("Link".to_owned(), link),
                ("X-Total-Count".to_owned(), n.to_string()),
            ],
            body: serde_json::to_vec(&rows(start..end)).unwrap_or_default(),
        })
    });
    assert_eq!(
        row_ids(&o),
        (0..n as u64).collect::<Vec<_>>(),
        "{}",
        o.verdict.note
    );
    assert_eq!(triple(&o), COMPLETE, "{}", o.verdict.note);
    assert_eq!(o.verdict.total, Some(n as u64));
    // the first answer's first link (`_page=1`) settles the base: no page asked twice
    let sent: Vec<Option<u64>> = fake.requests().iter().map(|r| arg_u64(r, "page")).collect();
    let distinct: HashSet<_> = sent.iter().flatten().collect();
    assert_eq!(distinct.len(), sent.iter().flatten().count(), "{sent:?}");
    assert_eq!(o.requests, 5, "{sent:?}");
}

/// P12: a tool with no paging parameter whose response schema says
/// the API links its next page is offered `_all_pages`, and the walk follows the links.
#[test]
fn p12_a_tool_without_paging_parameters_follows_next_links() {
    let mut s = json!({"type": "object", "properties": {"q": {"type": "string"}}});
    assert!(!analyze(&s).paginated());
    s[RESPONSE_HINT] = json!({"next": ["next"], "nextIsLink": true});
    let a = analyze(&s);
    assert!(a.paginated() && a.link_walkable());
    let n = 64;
    let (o, fake) = all_pages(&s, move |req, _| {
        let at = req
            .next_url
            .as_deref()
            .and_then(|u| query(u, "after"))
            .and_then(|a| a.parse::<usize>().ok())
            .unwrap_or(0);
        let end = (at + 25).min(n);
        let next = (end < n).then(|| format!("https://api.example.com/things?after={end}"));
        ok(json!({"results": rows(at..end), "next": next}))
    });
    assert_eq!(
        row_ids(&o),
        (0..n as u64).collect::<Vec<_>>(),
        "{}",
        o.verdict.note
    );
    assert_eq!(triple(&o), COMPLETE, "{}", o.verdict.note);
    assert_eq!(fake.requests().len(), 3);
    assert!(fake.requests().iter().all(|r| r.args.get("q").is_none()));
}

/// An API generated for the property tests below.
#[derive(Debug, Clone)]
struct Gen {
    n: usize,
    /// Page-numbered (0- or 1-based) or cursor-paged.
    base: Option<u64>,
    /// The key the next cursor sits under (cursor APIs), described only by the schema.
    key: String,
    /// The total goes in a header (`X-Total-Count` or `Content-Range`), or nowhere.
    header_total: Option<bool>,
}

fn serve(g: &Gen, req: &UpstreamRequest) -> Result<UpstreamResponse, UpstreamFailure> {
    let size = arg_u64(req, "size").unwrap_or(10) as usize;
    let (start, next) = match g.base {
        Some(base) => {
            let page = arg_u64(req, "page").unwrap_or(base).max(base);
            (((page - base) as usize * size).min(g.n), None)
        }
        None => {
            let at = arg_str(req, "cursor")
                .and_then(|c| c.strip_prefix("t~").and_then(|r| r.parse::<usize>().ok()))
                .unwrap_or(0);
            (at.min(g.n), Some(()))
        }
    };
    let end = (start + size).min(g.n);
    let mut body = json!({"records": rows(start..end)});
    if next.is_some() && end < g.n {
        body[g.key.as_str()] = json!(format!("t~{end}"));
    }
    let headers = match g.header_total {
        Some(true) => vec![("X-Total-Count".to_owned(), g.n.to_string())],
        Some(false) => vec![(
            "Content-Range".to_owned(),
            format!("records {start}-{}/{}", end.max(1) - 1, g.n),
        )],
        None => vec![],
    };
    Ok(UpstreamResponse {
        status: 200,
        headers,
        body: serde_json::to_vec(&body).unwrap_or_default(),
    })
}

fn gen_schema(g: &Gen, size: usize) -> Value {
    let mut props = json!({"size": {"type": "integer", "maximum": size}});
    match g.base {
        Some(_) => props["page"] = json!({"type": "integer"}),
        None => props["cursor"] = json!({"type": "string"}),
    }
    let mut s = json!({"type": "object", "properties": props});
    if g.base.is_none() {
        s[RESPONSE_HINT] = json!({"next": [g.key]});
    }
    s
}

/// A row count around the page size: 0, 1, size − 1, size, k × size, k × size + 1.
fn count(shape: u8, k: usize, size: usize) -> usize {
    match shape % 6 {
        0 => 0,
        1 => 1,
        2 => size - 1,
        3 => size,
        4 => k * size,
        _ => k * size + 1,
    }
}

proptest! {
    #![proptest_config(prop_config(256))]

    /// Generated APIs — 0- and 1-based pages saying nothing of their position, cursors
    /// under arbitrary keys described only by the response schema, totals in headers or
    /// nowhere — each walked exactly (every row once, in order, complete), or, under
    /// bounds, honestly partial: never a row twice, "complete" only with every row, and a
    /// header total naming what is missing.
    #[test]
    fn p11_p12_generated_apis_are_walked_exactly_or_honestly_partial(
        paged in any::<bool>(),
        base in 0u64..2,
        key in "[a-z][a-z_]{0,11}",
        header_total in prop_oneof![Just(None), Just(Some(true)), Just(Some(false))],
        size in 2usize..8,
        k in 2usize..4,
        shape in any::<u8>(),
        pages in 1u32..6,
    ) {
        prop_assume!(key != "records");
        let n = count(shape, k, size);
        let g = Gen { n, base: paged.then_some(base), key, header_total };
        let s = gen_schema(&g, size);
        let g2 = g.clone();
        let (o, fake) = all_pages(&s, move |req, _| serve(&g2, req));
        let all: Vec<u64> = (0..n as u64).collect();
        prop_assert_eq!(row_ids(&o), all.clone(), "{:?}: {:?} {}", g, fake.requests().len(), o.verdict.note);
        prop_assert_eq!(triple(&o), COMPLETE, "{:?}: {}", g, o.verdict.note);
        // bounded: honest
        let limits = Limits { pages_per_collection: pages, ..Limits::default() };
        let g3 = g.clone();
        let (o, _) = walk_with(&s, json!({"_all_pages": true}), &limits, move |req, _| serve(&g3, req));
        let got = row_ids(&o);
        let distinct: HashSet<u64> = got.iter().copied().collect();
        prop_assert_eq!(distinct.len(), got.len(), "no row twice: {}", o.verdict.note);
        if o.verdict.paging_complete {
            prop_assert_eq!(got, all, "{:?}: {}", g, o.verdict.note);
        } else if g.header_total.is_some() && o.items.len() < n {
            prop_assert_eq!(o.verdict.total, Some(n as u64), "{}", o.verdict.note);
            let missing = format!("Fetched {} of the {n} rows", o.items.len());
            prop_assert!(o.verdict.note.contains(&missing), "{}", o.verdict.note);
        }
    }
}
