//! P2/P5: a walk that follows an API's next links ends where they end. A numbered walk
//! (page or offset) whose API linked a next page stops at the first page linking none —
//! also at an exact multiple of the page size, where no short page says so — unless the
//! API says more in another way (a `has_more` flag, a total not reached).

use crate::tests::cursor::walk_all;
use crate::tests::kit::*;
use crate::*;
use serde_json::{json, Value};

const ORIGIN: &str = "https://api.example.com";

/// Rows 0..n in order, and a verdict saying every page came.
fn every_row(o: &Outcome, n: usize) {
    assert_eq!(
        row_ids(o),
        (0..n as u64).collect::<Vec<_>>(),
        "{}",
        o.verdict.note
    );
    let v = &o.verdict;
    assert_eq!(
        (v.stopped_by, v.paging_complete, v.likely_more_rows),
        (Some(StopReason::End), true, false),
        "{}",
        v.note
    );
}

/// GitHub: page numbers and a `Link` header whose last page has no `rel="next"`. An exact
/// multiple of the page size takes exactly as many requests as it has pages.
#[test]
fn p5_a_link_walk_of_an_exact_multiple_sends_exactly_pages_many_requests() {
    for (rows, last) in [(200usize, true), (300, false), (100, true), (100, false)] {
        let clock = FakeClock::default();
        let fake = FakeApi::new(&clock, move |req, _| {
            let size = arg_u64(req, "per_page").unwrap_or(30) as usize;
            let page = arg_u64(req, "page").unwrap_or(1) as usize;
            let start = ((page - 1) * size).min(rows);
            let end = (start + size).min(rows);
            let url = |p: usize| format!("<{ORIGIN}/repos/o/r/issues?per_page={size}&page={p}>");
            let mut rels = Vec::new();
            if end < rows {
                rels.push(format!("{}; rel=\"next\"", url(page + 1)));
                if last {
                    rels.push(format!("{}; rel=\"last\"", url(rows.div_ceil(size))));
                }
            }
            if page > 1 {
                rels.push(format!("{}; rel=\"prev\"", url(page - 1)));
                rels.push(format!("{}; rel=\"first\"", url(1)));
            }
            if rels.is_empty() {
                return ok(json!(rows_of(start, end)));
            }
            with_header(json!(rows_of(start, end)), "Link", rels.join(", "))
        });
        // as GitHub's own description declares them (`page` defaults to 1)
        let s = json!({"type": "object", "properties": {
            "per_page": {"type": "integer", "maximum": 100}, "page": {"type": "integer", "default": 1}}});
        let o = walk_all(&s, json!({}), &fake, &clock, &Limits::default());
        every_row(&o, rows);
        // one page alone carries no link at all: nothing says it is the last
        let pages = if rows == 100 { 2 } else { rows / 100 };
        assert_eq!(
            fake.requests().len(),
            pages,
            "{rows} rows, last link {last}"
        );
    }
}

fn rows_of(start: usize, end: usize) -> Vec<Value> {
    rows(start..end)
}

/// A page without a next link does not end a walk the API says goes on in another way:
/// a `has_more` flag or a total not reached.
#[test]
fn p5_a_page_without_a_next_link_goes_on_when_the_api_says_more() {
    for by_total in [false, true] {
        let clock = FakeClock::default();
        // next links on the first page only; 35 rows in pages of 10
        let fake = FakeApi::new(&clock, move |req, _| {
            let page = arg_u64(req, "page").unwrap_or(1) as usize;
            let (start, end) = (((page - 1) * 10).min(35), (page * 10).min(35));
            let mut body = json!({"items": rows(start..end)});
            if page == 1 {
                body["links"] = json!({"next": format!("{ORIGIN}/v1/x?page=2")});
            }
            if by_total {
                body["total"] = json!(35);
            } else {
                body["has_more"] = json!(end < 35);
            }
            ok(body)
        });
        let s = json!({"type": "object", "properties": {
            "per_page": {"type": "integer", "maximum": 10}, "page": {"type": "integer", "minimum": 1}}});
        let o = walk_all(&s, json!({}), &fake, &clock, &Limits::default());
        every_row(&o, 35);
    }
}

/// An offset walk that follows `Link` headers stops where `rel="next"` stops.
#[test]
fn p5_an_offset_link_walk_ends_where_the_next_link_ends() {
    let clock = FakeClock::default();
    let fake = FakeApi::new(&clock, |req, _| {
        let at = arg_u64(req, "offset").unwrap_or(0) as usize;
        let end = (at + 50).min(150);
        let link = if end < 150 {
            format!("<{ORIGIN}/v1/x?offset={end}&limit=50>; rel=\"next\"")
        } else {
            format!("<{ORIGIN}/v1/x?offset=0&limit=50>; rel=\"first\"")
        };
        with_header(json!(rows(at..end)), "Link", link)
    });
    let s = json!({"type": "object", "properties": {
        "limit": {"type": "integer", "maximum": 50}, "offset": {"type": "integer"}}});
    let o = walk_all(&s, json!({}), &fake, &clock, &Limits::default());
    every_row(&o, 150);
    assert_eq!(fake.requests().len(), 3);
}
