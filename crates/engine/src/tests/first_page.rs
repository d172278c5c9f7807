//! P11 (the first page is the API's first page) and the `Link` end of P2/P5, against
//! in-memory page-numbered APIs that start at 0 or at 1 and say more or less about where
//! they are: echoed page numbers, totals, next links (body or `Link` header), previous and
//! first links, Spring's `first`/`last` flags, and what they do with a page below their
//! first (serve the first page for it, answer empty, refuse it).

use crate::tests::kit::*;
use crate::*;
use proptest::prelude::*;
use serde_json::{json, Value};
use std::collections::HashSet;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Next {
    None,
    Body,
    Header,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Below {
    /// The first page again, under the number asked for (GitHub serves page 1 for 0).
    Alias,
    Empty,
    /// 400.
    Refuse,
}

/// A page-numbered API over `n` rows whose first page is `base`.
#[derive(Debug, Clone, Copy)]
struct Api {
    base: u64,
    n: usize,
    /// The page number in the body (`page`).
    echo: bool,
    total: bool,
    next: Next,
    /// Previous- and first-page links on every page after the first.
    links: bool,
    /// Spring's `first` and `last`.
    flags: bool,
    below: Below,
}

const ORIGIN: &str = "https://api.example.com";

fn serve(api: &Api, req: &UpstreamRequest) -> Result<UpstreamResponse, UpstreamFailure> {
    let size = arg_u64(req, "per_page").unwrap_or(10) as usize;
    let asked = arg_u64(req, "page");
    let page = match asked {
        None => api.base,
        Some(p) if p < api.base => match api.below {
            Below::Alias => api.base,
            Below::Empty => {
                let mut body = json!({"items": []});
                if api.echo {
                    body["page"] = json!(p);
                }
                return ok(body);
            }
            Below::Refuse => return status(400, "page must be at least 1"),
        },
        Some(p) => p,
    };
    let i = (page - api.base) as usize;
    let start = (i * size).min(api.n);
    let end = (start + size).min(api.n);
    let mut body = json!({"items": rows(start..end)});
    if api.echo {
        body["page"] = json!(page);
    }
    if api.total {
        body["total"] = json!(api.n);
    }
    if api.flags {
        body["first"] = json!(i == 0);
        body["last"] = json!(end >= api.n);
    }
    let url = |p: u64| format!("{ORIGIN}/v1/items?page={p}&per_page={size}");
    let mut rels: Vec<(&str, String)> = Vec::new();
    if end < api.n && api.next != Next::None {
        rels.push(("next", url(page + 1)));
    }
    if api.links && i > 0 {
        rels.push(("prev", url(page - 1)));
        rels.push(("first", url(api.base)));
    }
    if rels.is_empty() {
        return ok(body);
    }
    if api.next == Next::Header {
        let header: Vec<String> = rels
            .iter()
            .map(|(rel, u)| format!("<{u}>; rel=\"{rel}\""))
            .collect();
        return with_header(body, "Link", header.join(", "));
    }
    body["links"] = rels
        .iter()
        .map(|(rel, u)| (rel.to_string(), json!(u)))
        .collect();
    ok(body)
}

/// What the schema says about the `page` parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Said {
    Nothing,
    /// `minimum` of the base (0: weak, 1: firm).
    Minimum,
    /// `minimum: 0` whatever the base (a sloppy schema).
    MinimumZero,
    Default,
    Description,
    /// A `default` and a description that disagree.
    Conflict,
}

fn schema(said: Said, base: u64, size: usize) -> Value {
    let words = |b: u64| {
        if b == 0 {
            "Zero-based page index (0..N)"
        } else {
            "Page number, starting at 1"
        }
    };
    let page = match said {
        Said::Nothing => json!({"type": "integer"}),
        Said::Minimum => json!({"type": "integer", "minimum": base}),
        Said::MinimumZero => json!({"type": "integer", "minimum": 0}),
        Said::Default => json!({"type": "integer", "default": base}),
        Said::Description => json!({"type": "integer", "description": words(base)}),
        Said::Conflict => {
            json!({"type": "integer", "default": 1 - base, "description": words(base)})
        }
    };
    json!({"type": "object", "properties": {
        "per_page": {"type": "integer", "maximum": size}, "page": page
    }})
}

fn walk(api: Api, s: &Value, limits: &Limits) -> (Outcome, FakeApi) {
    let clock = FakeClock::default();
    let fake = FakeApi::new(&clock, move |req, _| serve(&api, req));
    let a = analyze(s);
    let plan = parse_call(&a, s, json!({"_all_pages": true}), true, limits)
        .unwrap_or_else(|e| panic!("{e}"));
    let o = block_on(run(&plan, &a, &fake, &NoProgress, &clock, limits))
        .unwrap_or_else(|e| panic!("{e}"));
    (o, fake)
}

fn triple(o: &Outcome) -> (Option<StopReason>, bool, bool) {
    let v = &o.verdict;
    (v.stopped_by, v.paging_complete, v.likely_more_rows)
}

fn every_row(o: &Outcome, n: usize) {
    assert_eq!(
        row_ids(o),
        (0..n as u64).collect::<Vec<_>>(),
        "{}",
        o.verdict.note
    );
    assert_eq!(
        triple(o),
        (Some(StopReason::End), true, false),
        "{}",
        o.verdict.note
    );
}

fn pages_sent(fake: &FakeApi) -> Vec<Option<u64>> {
    fake.requests().iter().map(|r| arg_u64(r, "page")).collect()
}

fn api(base: u64, n: usize) -> Api {
    Api {
        base,
        n,
        echo: false,
        total: false,
        next: Next::None,
        links: false,
        flags: false,
        below: Below::Alias,
    }
}

/// Twilio-like: page 1 of a 0-based API (asked for first on a schema's false `default:
/// 1`) names a previous and a first page; page 1 is kept while page 0 is fetched, so no
/// page is asked for twice.
#[test]
fn p11_a_previous_link_on_page_1_walks_from_page_0_without_asking_twice() {
    let a = Api {
        links: true,
        next: Next::Body,
        echo: true,
        ..api(0, 250)
    };
    let (o, fake) = walk(a, &schema(Said::Default, 1, 100), &Limits::default());
    every_row(&o, 250);
    let mut sent = pages_sent(&fake);
    sent.sort_unstable();
    assert_eq!(sent, [Some(0), Some(1), Some(2)]);
    assert_eq!(o.requests, 3);
}

/// Spring Data without `minimum`: `first: false` on page 1.
#[test]
fn p11_spring_first_false_on_page_1_walks_from_page_0() {
    let a = Api {
        flags: true,
        total: true,
        ..api(0, 230)
    };
    let (o, _) = walk(a, &schema(Said::Nothing, 0, 100), &Limits::default());
    every_row(&o, 230);
}

/// HAL: `_links.first.href` and `_links.prev.href`, the page under `page.number`.
#[test]
fn p11_hal_first_links_name_page_0() {
    let clock = FakeClock::default();
    let fake = FakeApi::new(&clock, |req, _| {
        let size = arg_u64(req, "size").unwrap_or(20) as usize;
        let page = arg_u64(req, "page").unwrap_or(0) as usize;
        let (start, end) = ((page * size).min(95), ((page + 1) * size).min(95));
        let mut links = json!({"self": {"href": format!("/v1/things?page={page}&size={size}")}});
        if page > 0 {
            links["first"] = json!({"href": format!("/v1/things?page=0&size={size}")});
            links["prev"] = json!({"href": format!("/v1/things?page={}&size={size}", page - 1)});
        }
        ok(
            json!({"_embedded": {"things": rows(start..end)}, "_links": links,
                  "page": {"size": size, "number": page}}),
        )
    });
    let s = json!({"type": "object", "properties": {
        "size": {"type": "integer", "maximum": 20}, "page": {"type": "integer"}}});
    let o = crate::tests::cursor::walk_all(&s, json!({}), &fake, &clock, &Limits::default());
    every_row(&o, 95);
}

/// A schema that says nothing: the API's own first page is asked for first (the page
/// parameter left out, never a page 0 a 1-based API may not have). A short or empty one
/// is the whole set; a full one is compared with page 1 by its rows.
#[test]
fn p11_a_silent_schema_asks_for_the_api_s_own_first_page() {
    for base in [0u64, 1] {
        for n in [0usize, 1, 7, 10] {
            let (o, fake) = walk(
                api(base, n),
                &schema(Said::Nothing, base, 10),
                &Limits::default(),
            );
            every_row(&o, n);
            let want: &[Option<u64>] = match (base, n) {
                // page 1 of a 0-based API is another page (empty here)
                (0, 10) => &[None, Some(1)],
                // a 1-based API's page 1 repeats the first rows: dropped, page 2 is asked
                (_, 10) => &[None, Some(1), Some(2)],
                _ => &[None],
            };
            assert_eq!(pages_sent(&fake), want, "base {base}, n={n}");
        }
    }
}

/// A weak `minimum: 0` on a 0-based API whose page 1 comes back empty still checks the
/// API's own first page (an empty first page at a weak guess).
#[test]
fn p11_an_empty_first_page_at_a_weak_guess_is_checked() {
    let (o, fake) = walk(
        Api {
            below: Below::Empty,
            ..api(1, 0)
        },
        &schema(Said::MinimumZero, 1, 10),
        &Limits::default(),
    );
    every_row(&o, 0);
    assert_eq!(pages_sent(&fake), [Some(0), None]);
}

/// A sloppy `minimum: 0` on a 1-based API: page 0 is served as page 1 (recognised by its
/// rows, not a loop), answered empty, or refused — every row comes once, in order.
#[test]
fn p11_page_0_of_a_one_based_api_is_recognised_by_its_rows_or_its_answer() {
    for below in [Below::Alias, Below::Empty, Below::Refuse] {
        for n in [0usize, 5, 10, 25, 30] {
            let a = Api { below, ..api(1, n) };
            let (o, fake) = walk(a, &schema(Said::MinimumZero, 1, 10), &Limits::default());
            every_row(&o, n);
            assert_eq!(pages_sent(&fake)[0], Some(0), "{below:?} n={n}");
            assert!(
                o.requests as usize <= n / 10 + 3,
                "{below:?} n={n}: {}",
                o.requests
            );
        }
    }
}

/// The schema's description decides where a walk starts when the API says nothing.
#[test]
fn p11_a_description_saying_zero_based_starts_at_page_0() {
    let (o, fake) = walk(
        api(0, 25),
        &schema(Said::Description, 0, 10),
        &Limits::default(),
    );
    every_row(&o, 25);
    assert_eq!(pages_sent(&fake), [Some(0), Some(1), Some(2)]);
}

/// What the API says beats what its schema says: a `default: 1` on a 0-based API whose
/// page 1 links a first page 0.
#[test]
fn p11_the_api_s_first_link_beats_the_schema_default() {
    let a = Api {
        links: true,
        next: Next::Header,
        ..api(0, 40)
    };
    let mut s = schema(Said::Default, 1, 10);
    s["properties"]["page"]["minimum"] = json!(1);
    let (o, fake) = walk(a, &s, &Limits::default());
    every_row(&o, 40);
    assert_eq!(pages_sent(&fake)[..2], [Some(1), Some(0)]);
}

/// A schema that contradicts itself: the first request leaves `page` out; an echo or a
/// next link settles the base at no extra cost, else page 1's rows (and then page 0's)
/// are compared with the first page's.
#[test]
fn p11_a_conflicting_schema_asks_without_the_page_and_the_answers_decide() {
    for base in [0u64, 1] {
        for (echo, next) in [(true, Next::None), (false, Next::Body), (false, Next::None)] {
            let a = Api {
                echo,
                next,
                ..api(base, 25)
            };
            let (o, fake) = walk(a, &schema(Said::Conflict, base, 10), &Limits::default());
            every_row(&o, 25);
            let sent = pages_sent(&fake);
            assert_eq!(sent[0], None, "the first request leaves the page out");
            let want = match (echo || next != Next::None, base) {
                (true, b) => vec![None, Some(b + 1), Some(b + 2)],
                (false, 1) => vec![None, Some(1), Some(2), Some(3)],
                (false, _) => vec![None, Some(1), Some(0), Some(2)],
            };
            assert_eq!(sent, want, "base {base}, echo {echo}, next {next:?}");
        }
    }
}

/// An API whose answers do not agree (rows moved between requests, page 0 refused): the
/// base is not established, and the verdict says so — never complete.
#[test]
fn p11_a_first_page_that_cannot_be_established_is_never_called_complete() {
    let clock = FakeClock::default();
    // 1-based, refusing page 0, and every answer a little different (a field counting the
    // requests), as the rows of a live feed can be
    let fake = FakeApi::new(&clock, |req, call| match arg_u64(req, "page") {
        Some(0) => status(400, "page must be at least 1"),
        p => {
            let start = (p.unwrap_or(1) as usize - 1) * 10;
            let ids: Vec<Value> = (start..(start + 10).min(25))
                .map(|i| json!({"id": i, "seen": call}))
                .collect();
            ok(json!({"items": ids}))
        }
    });
    let s = schema(Said::Conflict, 1, 10);
    let a = analyze(&s);
    let limits = Limits::default();
    let plan = parse_call(&a, &s, json!({"_all_pages": true}), true, &limits)
        .unwrap_or_else(|e| panic!("{e}"));
    let o = block_on(run(&plan, &a, &fake, &NoProgress, &clock, &limits))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        triple(&o),
        (Some(StopReason::End), false, true),
        "{}",
        o.verdict.note
    );
    assert!(o.verdict.first_page_unknown);
    assert!(
        o.verdict.note.contains("first page may be missing"),
        "{}",
        o.verdict.note
    );
    let gap = o.provenance().gap().unwrap_or_default();
    assert!(gap.contains("first page could not be established"), "{gap}");
}

/// A bound that stops the checks leaves a resume point that knows the base is not
/// established, so the union of the calls is never called complete on that word.
#[test]
fn p11_a_walk_cut_while_checking_its_first_page_resumes_unsure() {
    let limits = Limits {
        requests: 2,
        ..Limits::default()
    };
    let (o, _) = walk(api(0, 25), &schema(Said::Conflict, 0, 10), &limits);
    assert_eq!(triple(&o), (Some(StopReason::Requests), false, true));
    assert!(o.verdict.note.contains("first page"), "{}", o.verdict.note);
    let pending = o.resume.map(|r| r.pending).unwrap_or_default();
    assert_eq!(pending.len(), 1);
    assert!(pending[0].first_page_unknown);
}

fn said() -> impl Strategy<Value = Said> {
    prop_oneof![
        Just(Said::Nothing),
        Just(Said::Minimum),
        Just(Said::MinimumZero),
        Just(Said::Default),
        Just(Said::Description),
        Just(Said::Conflict),
    ]
}

fn next() -> impl Strategy<Value = Next> {
    prop_oneof![Just(Next::None), Just(Next::Body), Just(Next::Header)]
}

fn below() -> impl Strategy<Value = Below> {
    prop_oneof![Just(Below::Alias), Just(Below::Empty), Just(Below::Refuse)]
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

    /// Generated page-numbered APIs, 0- or 1-based, saying more or less about where they
    /// are, under schemas saying more or less (never a false firm word): the walk returns
    /// every row once, in order, complete — at most one request more than a walk told the
    /// base by a `default` — even where nothing in the schema or the answers places the
    /// pages (the request without the page parameter does).
    #[test]
    fn p11_every_page_numbered_api_is_walked_from_its_first_page(
        base in 0u64..2,
        said in said(),
        echo in any::<bool>(),
        total in any::<bool>(),
        next in next(),
        links in any::<bool>(),
        flags in any::<bool>(),
        below in below(),
        size in 2usize..8,
        k in 2usize..4,
        shape in any::<u8>(),
    ) {
        let n = count(shape, k, size);
        let a = Api { base, n, echo, total, next, links, flags, below };
        let (o, fake) = walk(a, &schema(said, base, size), &Limits::default());
        let got = row_ids(&o);
        let distinct: HashSet<u64> = got.iter().copied().collect();
        prop_assert_eq!(distinct.len(), got.len(), "no row twice: {}", o.verdict.note);
        prop_assert!(got.iter().all(|id| (*id as usize) < n));
        let all = got == (0..n as u64).collect::<Vec<_>>();
        // P11: no corner left — a 0-based API that nothing places is found by the request
        // without the page parameter
        prop_assert!(all, "{:?} {:?}: {:?} {}", a, said, pages_sent(&fake), o.verdict.note);
        prop_assert_eq!(
            triple(&o), (Some(StopReason::End), true, false),
            "{:?} {:?}: {}", a, said, o.verdict.note
        );
        let (told, _) = walk(a, &schema(Said::Default, base, size), &Limits::default());
        prop_assert!(
            o.requests <= told.requests + 1,
            "{:?} {:?}: {} requests, {} when told: {:?}", a, said, o.requests, told.requests, pages_sent(&fake)
        );
    }

    /// The same APIs under page and request bounds: never a row twice, and "complete" only
    /// with every row.
    #[test]
    fn p11_a_bounded_walk_never_claims_a_first_page_it_did_not_establish(
        base in 0u64..2,
        said in said(),
        echo in any::<bool>(),
        total in any::<bool>(),
        next in next(),
        links in any::<bool>(),
        flags in any::<bool>(),
        below in below(),
        size in 2usize..6,
        k in 2usize..4,
        shape in any::<u8>(),
        pages in 1u32..4,
        requests in 1u32..6,
    ) {
        let n = count(shape, k, size);
        let a = Api { base, n, echo, total, next, links, flags, below };
        let limits = Limits { pages_per_collection: pages, requests, ..Limits::default() };
        let s = schema(said, base, size);
        let clock = FakeClock::default();
        let fake = FakeApi::new(&clock, move |req, _| serve(&a, req));
        let an = analyze(&s);
        let plan = parse_call(&an, &s, json!({"_all_pages": true}), true, &limits)
            .unwrap_or_else(|e| panic!("{e}"));
        let Ok(o) = block_on(run(&plan, &an, &fake, &NoProgress, &clock, &limits)) else {
            // nothing came before the bound (the request budget spent on the checks)
            prop_assert!(requests <= 2);
            return Ok(());
        };
        let got = row_ids(&o);
        let distinct: HashSet<u64> = got.iter().copied().collect();
        prop_assert_eq!(distinct.len(), got.len(), "no row twice: {}", o.verdict.note);
        if o.verdict.paging_complete {
            prop_assert_eq!(got, (0..n as u64).collect::<Vec<_>>(), "{}", o.verdict.note);
        }
    }
}
