//! P7, P12: the number of pages an API says it has (`total_pages`, Litestar's
//! ClassicPagination; `totalPages`, Spring; `last_page`, Laravel) read against the place of
//! the page it came with. A single page with pages after it says more rows exist; a walk
//! goes on past a short page the count reaches beyond, is not complete when it ends before
//! the count, and follows the rows — not the count — when the count is lower than the set.

use crate::analysis::signals::{self, PageAt, Signals};
use crate::tests::kit::*;
use crate::*;
use serde_json::{json, Value};

fn call(
    s: &Value,
    args: Value,
    f: impl Fn(&UpstreamRequest, usize) -> Result<UpstreamResponse, UpstreamFailure>
        + Send
        + Sync
        + 'static,
) -> (Outcome, FakeApi) {
    let clock = FakeClock::default();
    let fake = FakeApi::new(&clock, f);
    let a = analyze(s);
    let limits = Limits::default();
    let plan = parse_call(&a, s, args, true, &limits).unwrap_or_else(|e| panic!("{e}"));
    let o = block_on(run(&plan, &a, &fake, &NoProgress, &clock, &limits))
        .unwrap_or_else(|e| panic!("{e}"));
    (o, fake)
}

fn triple(o: &Outcome) -> (Option<StopReason>, bool, bool) {
    let v = &o.verdict;
    (v.stopped_by, v.paging_complete, v.likely_more_rows)
}

const COMPLETE: (Option<StopReason>, bool, bool) = (Some(StopReason::End), true, false);
/// The walk reached the API's end while the API still counted pages beyond it.
const ENDED_SHORT: (Option<StopReason>, bool, bool) = (Some(StopReason::End), false, true);

/// Litestar's ClassicPagination, as its generated document describes it.
fn litestar_schema() -> Value {
    json!({"type": "object", "properties": {
        "current_page": {"type": "integer", "minimum": 1, "default": 1},
        "page_size": {"type": "integer", "minimum": 1, "maximum": 100, "default": 100}
    }})
}

/// Litestar's ClassicPagination over `n` rows: `{"items", "page_size", "current_page",
/// "total_pages"}`, its count `claimed(n, size)`; past the last page an empty page.
fn litestar(
    n: usize,
    claimed: impl Fn(usize, usize) -> u64 + Send + Sync + 'static,
) -> impl Fn(&UpstreamRequest, usize) -> Result<UpstreamResponse, UpstreamFailure> {
    move |req, _| {
        let size = arg_u64(req, "page_size").unwrap_or(100) as usize;
        let page = arg_u64(req, "current_page").unwrap_or(1).max(1);
        let start = ((page - 1) as usize * size).min(n);
        ok(json!({
            "items": rows(start..(start + size).min(n)),
            "page_size": size,
            "current_page": page,
            "total_pages": claimed(n, size),
        }))
    }
}

fn honest(n: usize, size: usize) -> u64 {
    n.div_ceil(size) as u64
}

/// Spring Data's `Page`, 0-based: `{"content", "number", "size", "totalPages"}` (no
/// total of rows, so only the page count says how far it reaches).
fn spring(
    n: usize,
    claimed: u64,
) -> impl Fn(&UpstreamRequest, usize) -> Result<UpstreamResponse, UpstreamFailure> {
    move |req, _| {
        let size = arg_u64(req, "size").unwrap_or(20) as usize;
        let page = arg_u64(req, "page").unwrap_or(0);
        let start = (page as usize * size).min(n);
        ok(json!({
            "content": rows(start..(start + size).min(n)),
            "number": page,
            "size": size,
            "totalPages": claimed,
        }))
    }
}

fn spring_schema(size: u64) -> Value {
    json!({"type": "object", "properties": {
        "size": {"type": "integer", "maximum": size},
        "page": {"type": "integer", "minimum": 0, "description": "Zero-based page index (0..N)"}
    }})
}

/// P7, P12: Litestar's first page of 300 rows, asked for without a
/// page, says `current_page: 1`, `total_pages: 3` — more rows exist.
#[test]
fn p7_a_single_page_before_the_last_counted_page_says_more_rows() {
    let (o, fake) = call(&litestar_schema(), json!({}), litestar(300, honest));
    assert_eq!(fake.requests().len(), 1);
    assert_eq!(o.items.len(), 100);
    assert_eq!(triple(&o), (None, false, true), "{}", o.verdict.note);
    assert!(o.verdict.note.contains("the API says there are more"));
    // the last counted page says nothing of the kind (and the count never proves the end)
    for (n, page) in [(300, 3), (100, 1), (30, 1)] {
        let (o, _) = call(
            &litestar_schema(),
            json!({"current_page": page}),
            litestar(n, honest),
        );
        assert!(!o.verdict.likely_more_rows, "{n} rows, page {page}");
        if o.items.len() == 100 {
            assert!(!o.verdict.paging_complete, "a count never proves the end");
        }
    }
    // an agent's page before the last: the schema says pages start at 1
    let (o, _) = call(
        &litestar_schema(),
        json!({"current_page": 2}),
        litestar(300, honest),
    );
    assert!(o.verdict.likely_more_rows);
}

/// P7 with a 0-based API: page 1 of 3 (`number: 1`, `totalPages: 3`) has one page after
/// it, page 2 none; without the base, the count only decides when it is unambiguous.
#[test]
fn p7_a_zero_based_page_count_is_read_with_the_base() {
    let more = |schema: &Value, page: u64, claimed: u64| {
        let (o, _) = call(
            schema,
            json!({"page": page, "size": 20}),
            spring(60, claimed),
        );
        o.verdict.likely_more_rows
    };
    let firm = spring_schema(20);
    assert!(more(&firm, 0, 3));
    assert!(more(&firm, 1, 3), "page index 1 is the second of three");
    assert!(!more(&firm, 2, 3), "page index 2 is the last of three");
    // a schema that says nothing of the base: index 1 of 3 is before the last either way,
    // page 2 of 3 is the last (0-based) or not (1-based): no claim
    let silent = json!({"type": "object", "properties": {
        "size": {"type": "integer", "maximum": 20}, "page": {"type": "integer"}
    }});
    assert!(more(&silent, 1, 3));
    assert!(!more(&silent, 2, 3));
    assert!(!more(&silent, 3, 3));
    // no page sent: the API's own first page, the first of two
    let (o, _) = call(&firm, json!({"size": 20}), spring(40, 2));
    assert!(o.verdict.likely_more_rows);
    let (o, _) = call(&firm, json!({"size": 20}), spring(20, 1));
    assert!(!o.verdict.likely_more_rows);
}

/// P12: `_all_pages` over a 1-based count at 0, 1, a page, k pages and k pages + 1 rows:
/// every row once, complete, and never more than one request past the counted pages (a
/// full last page is confirmed by the next one: the count alone never ends a walk).
#[test]
fn p12_a_one_based_page_count_walk_is_exact_at_every_size() {
    for n in [0, 1, 99, 100, 300, 301] {
        let (o, fake) = call(
            &litestar_schema(),
            json!({"_all_pages": true}),
            litestar(n, honest),
        );
        assert_eq!(row_ids(&o), (0..n as u64).collect::<Vec<_>>(), "{n} rows");
        assert_eq!(triple(&o), COMPLETE, "{n} rows: {}", o.verdict.note);
        let pages = n.div_ceil(100);
        let sent = fake.requests().len();
        assert!(
            sent <= pages + 1 && sent >= pages.max(1),
            "{n} rows: {sent} requests"
        );
    }
}

/// P11 with P12: a 0-based API whose count is `totalPages`: its last page is index
/// `totalPages − 1`, every row comes once, and the walk is complete.
#[test]
fn p12_a_zero_based_page_count_walk_is_exact_at_every_size() {
    for n in [0, 1, 20, 60, 61] {
        let (o, fake) = call(
            &spring_schema(20),
            json!({"_all_pages": true}),
            spring(n, n.div_ceil(20) as u64),
        );
        assert_eq!(row_ids(&o), (0..n as u64).collect::<Vec<_>>(), "{n} rows");
        assert_eq!(triple(&o), COMPLETE, "{n} rows: {}", o.verdict.note);
        let last = n.div_ceil(20) as u64;
        let sent: Vec<u64> = fake
            .requests()
            .iter()
            .filter_map(|r| arg_u64(r, "page"))
            .collect();
        assert!(sent.contains(&0), "{n} rows: page 0 asked for: {sent:?}");
        assert!(
            sent.iter().all(|p| *p <= last),
            "{n} rows: nothing past index {last}: {sent:?}"
        );
    }
}

/// P2 with P12: a short page the count reaches beyond is not the end (an API that filters
/// rows after paging): the walk asks for the next page and gets its rows.
#[test]
fn p12_a_short_page_before_the_last_counted_page_is_not_the_end() {
    let (o, fake) = call(&litestar_schema(), json!({"_all_pages": true}), |req, _| {
        let page = arg_u64(req, "current_page").unwrap_or(1);
        let items = match page {
            1 => rows(0..100),
            2 => rows(100..160),
            3 => rows(200..300),
            _ => vec![],
        };
        ok(json!({"items": items, "page_size": 100, "current_page": page, "total_pages": 3}))
    });
    assert!(row_ids(&o).contains(&299), "page 3 was fetched");
    assert_eq!(o.items.len(), 260);
    assert_eq!(triple(&o), COMPLETE, "{}", o.verdict.note);
    assert!(fake.requests().len() <= 4);
}

/// P12: a walk that reaches the API's end before the pages it counts is not complete.
#[test]
fn p12_an_end_before_the_counted_pages_is_not_complete() {
    // 300 rows, but 5 pages claimed
    let (o, _) = call(
        &litestar_schema(),
        json!({"_all_pages": true}),
        litestar(300, |_, _| 5),
    );
    assert_eq!(o.items.len(), 300);
    assert_eq!(triple(&o), ENDED_SHORT, "{}", o.verdict.note);
    // 250 rows: the short page 3 is the end, but 5 pages were claimed
    let (o, _) = call(
        &litestar_schema(),
        json!({"_all_pages": true}),
        litestar(250, |_, _| 5),
    );
    assert_eq!(o.items.len(), 250);
    assert!(!o.verdict.paging_complete, "{}", o.verdict.note);
}

/// P12: a count lower than the set never drops rows: the walk goes past the counted pages
/// while they come full, sequentially or with requests started ahead (P9), and ends where
/// the rows do.
#[test]
fn p12_a_page_count_lower_than_the_set_drops_no_rows() {
    for concurrency in [1, 4] {
        for n in [300, 301, 550] {
            let clock = FakeClock::default();
            let fake = FakeApi::new(&clock, litestar(n, |_, _| 2));
            let s = litestar_schema();
            let a = analyze(&s);
            let limits = Limits {
                concurrency,
                ..Limits::default()
            };
            let plan = parse_call(&a, &s, json!({"_all_pages": true}), true, &limits)
                .unwrap_or_else(|e| panic!("{e}"));
            let o = block_on(run(&plan, &a, &fake, &NoProgress, &clock, &limits))
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(
                row_ids(&o),
                (0..n as u64).collect::<Vec<_>>(),
                "{n} rows, concurrency {concurrency}"
            );
            assert_eq!(triple(&o), COMPLETE, "{}", o.verdict.note);
        }
    }
    // 0-based, a count of one page for three, and a next link the walk follows
    let (o, _) = call(&spring_schema(20), json!({"_all_pages": true}), |req, _| {
        let page = arg_u64(req, "page").unwrap_or(0);
        let start = (page as usize * 20).min(50);
        let next = (start + 20 < 50).then(|| format!("/x?page={}&size=20", page + 1));
        ok(
            json!({"content": rows(start..(start + 20).min(50)), "number": page,
            "totalPages": 1, "links": {"next": next}}),
        )
    });
    assert_eq!(row_ids(&o), (0..50).collect::<Vec<_>>());
    assert_eq!(triple(&o), COMPLETE, "{}", o.verdict.note);
}

/// P12: the keys a page count is read under, and its reading against a page's place.
#[test]
fn p12_page_counts_are_read_and_weighed() {
    let count = |v: Value| signals::read(&v, &[]).total_pages;
    assert_eq!(count(json!({"total_pages": 3})), Some(3));
    assert_eq!(count(json!({"totalPages": "7"})), Some(7));
    assert_eq!(
        count(json!({"page": {"number": 0, "totalPages": 7}})),
        Some(7)
    );
    assert_eq!(count(json!({"page_count": 4})), Some(4));
    assert_eq!(count(json!({"meta": {"last_page": 4}})), Some(4), "Laravel");
    assert_eq!(count(json!({"meta": {"pages": 5}})), Some(5));
    assert_eq!(count(json!({"pages": 5})), None, "only in paging metadata");
    assert_eq!(count(json!({"meta": {"pages": [1, 2]}})), None);
    assert_eq!(
        count(json!({"last_page": true})),
        None,
        "a flag is no count"
    );
    assert_eq!(
        count(json!({"last_page": 9, "total_pages": 10})),
        Some(10),
        "an explicit count wins over a last page number"
    );
    // Flask-smorest's header
    let h = vec![(
        "X-Pagination".to_owned(),
        r#"{"total": 300, "total_pages": 30, "first_page": 1, "last_page": 30, "page": 1}"#
            .to_owned(),
    )];
    assert_eq!(signals::read(&json!({}), &h).total_pages, Some(30));

    let s = Signals {
        total_pages: Some(3),
        ..Signals::default()
    };
    let at = |nth: Option<u64>, number: Option<i64>, base: Option<i64>| {
        s.pages_remain(PageAt { nth, number, base })
    };
    assert_eq!(at(Some(1), None, None), Some(true));
    assert_eq!(at(Some(3), None, None), Some(false));
    assert_eq!(at(None, Some(2), Some(1)), Some(true));
    assert_eq!(at(None, Some(2), Some(0)), Some(false));
    assert_eq!(
        at(None, Some(1), None),
        Some(true),
        "before the last either way"
    );
    assert_eq!(at(None, Some(2), None), None, "the last if 0-based only");
    assert_eq!(at(None, Some(3), None), Some(false));
    assert_eq!(at(None, None, None), None);
    assert_eq!(Signals::default().pages_remain(PageAt::default()), None);
    let none = Signals {
        total_pages: Some(0),
        ..Signals::default()
    };
    assert_eq!(
        none.pages_remain(PageAt {
            nth: Some(1),
            ..PageAt::default()
        }),
        Some(false),
        "an empty set counts no pages"
    );
}
