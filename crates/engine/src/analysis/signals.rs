//! What a response says about the rows it did not return: `has_more`, next-page tokens and
//! URLs (body or RFC 8288 `Link` header) and announced totals. Used to keep walking past a
//! short page (P2), to follow cursors (P5), and to warn about unread pages (P7). A
//! last-page link (`rel="last"`, or one in the body) is read too, only as P9's evidence of
//! random access: like a total, it never decides where a walk ends. Links to the first and
//! the previous page, `first`/`has_previous` flags and an echoed page number are P11's
//! evidence of where a page-numbered API starts ([`page_echo`], [`url_number`]).

use crate::analysis::normalize;
use serde_json::{Map, Value};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Signals {
    /// An explicit `has_more`-style flag.
    pub has_more: Option<bool>,
    /// A non-empty next-page token (not a URL).
    pub next_token: Option<String>,
    /// A next-page URL, absolute or relative, from the body or the `Link` header.
    pub next_url: Option<String>,
    /// A total row count the API announced.
    pub total: Option<u64>,
    /// P12: how many pages the API says it has (`total_pages`, `totalPages`, `page_count`,
    /// a numeric `last_page`, `pages` inside paging metadata). Read with the page's place
    /// among them ([`Signals::pages_remain`]); like a last-page link it never ends a walk.
    pub total_pages: Option<u64>,
    /// A last-page URL (`Link: <…>; rel="last"`, or under a last-page key in the body).
    pub last_url: Option<String>,
    /// P11: a first-page URL (`rel="first"`, `links.first`, `first_page_url`, …).
    pub first_url: Option<String>,
    /// P11: a previous-page URL (`rel="prev"`, `links.prev`, `previous_page_uri`, …).
    pub prev_url: Option<String>,
    /// P11: whether this page says it is the first one (Spring's `first`, or the opposite
    /// of a `has_previous`-style flag).
    pub is_first: Option<bool>,
    /// P12: where the next position (`next_url`, else `next_token`) was read, and so how
    /// sure the walk is that it is one.
    pub next_from: Option<Source>,
    /// G7: the key the response schema documents as the total (`resultSizeEstimate`,
    /// `totalSize`), when `total` was read there: the note names it when the rows disagree.
    pub total_key: Option<String>,
}

/// P12: where a piece of paging evidence was found, from the surest to the least sure —
/// the decision is scored like dlt's paginator detection (a `Link` header or a key the
/// operation's own response schema names is certain, a key on loopgate's lists likely, a
/// key recognised only by its shape a guess).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Source {
    /// A key recognised only by its shape (`next…` holding a string).
    Shape,
    /// A key on the lists below (`nextPageToken`, `next_cursor`, `links.next`, …).
    Listed,
    /// The key the operation's response schema describes (`x-loopgate-response`).
    Schema,
    /// An RFC 8288 `Link` header.
    Header,
}

impl Source {
    /// The score of a decision made on this evidence, out of 100.
    pub fn score(self) -> u8 {
        match self {
            Self::Header | Self::Schema => 100,
            Self::Listed => 80,
            Self::Shape => 50,
        }
    }

    /// How the verdict says it.
    pub fn said(self) -> &'static str {
        match self {
            Self::Header => "the `Link` header",
            Self::Schema => "the key the API's response schema describes",
            Self::Listed => "a key commonly used for it",
            Self::Shape => "a key recognised only by its name",
        }
    }
}

/// The schema extension the OpenAPI importer writes at the root of an imported tool's
/// input schema: where the operation's response schema puts the next cursor or link, the
/// has-more flag and the total, each as a list of keys from the response's root
/// (`{"next": ["next_page"], "total": ["page", "totalElements"]}`).
pub const RESPONSE_HINT: &str = "x-loopgate-response";

/// G7, G2: the schema extension the OpenAPI importer writes beside [`RESPONSE_HINT`]: the
/// keys from the response's root to the item array its schema documents
/// (`["messages"]`), so a body that leaves an empty list out is zero rows there.
pub const ITEMS_HINT: &str = "x-loopgate-items";

/// P12: [`RESPONSE_HINT`] read.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ResponseKeys {
    pub next: Option<Vec<String>>,
    pub has_more: Option<Vec<String>>,
    pub total: Option<Vec<String>>,
    /// The next position is a link (a URL under `next`, or a `Link` header declared on
    /// the response): the walk needs no paging parameter to follow it.
    pub next_is_link: bool,
    /// G7: where the item array lives ([`ITEMS_HINT`]).
    pub items: Option<Vec<String>>,
}

impl ResponseKeys {
    /// The response keys an input schema carries (none when it has no [`RESPONSE_HINT`]).
    pub fn of(input_schema: &Value) -> Self {
        let items = input_schema
            .get(ITEMS_HINT)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .take(2)
                    .collect::<Vec<_>>()
            })
            .filter(|p| !p.is_empty());
        let Some(hint) = input_schema.get(RESPONSE_HINT) else {
            return Self {
                items,
                ..Self::default()
            };
        };
        let path = |k: &str| {
            let keys: Vec<String> = hint
                .get(k)?
                .as_array()?
                .iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .take(8)
                .collect();
            (!keys.is_empty()).then_some(keys)
        };
        Self {
            next: path("next"),
            has_more: path("hasMore"),
            total: path("total"),
            next_is_link: hint.get("nextIsLink").and_then(Value::as_bool) == Some(true),
            items,
        }
    }

    /// Whether the response schema says the API links or hands out its next page.
    pub fn names_next(&self) -> bool {
        self.next.is_some()
    }
}

fn at_path<'a>(frame: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(frame, |v, k| v.get(k))
}

impl Signals {
    /// Whether the API says rows remain after `fetched` rows.
    pub fn says_more(&self, fetched: usize) -> bool {
        self.has_more == Some(true)
            || self.next_token.is_some()
            || self.next_url.is_some()
            || self.total.is_some_and(|t| (fetched as u64) < t)
    }
}

/// P12: where a page stands among the pages an API counts ([`Signals::total_pages`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PageAt {
    /// Its place, 1 for the first page, when the walk knows it (it counted its pages from
    /// the API's own first one).
    pub nth: Option<u64>,
    /// Its page number in the API's numbering (echoed, or the one sent).
    pub number: Option<i64>,
    /// The API's first page number (P11), when known.
    pub base: Option<i64>,
}

impl Signals {
    /// P12: whether pages remain after the page at `at`, by the API's page count:
    /// `Some(true)` when its count reaches past this page, `Some(false)` when this page is
    /// the last (or past it), `None` when the count or the page's place is unknown — a
    /// page number whose base is not known is past the last page of a 0-based API and
    /// before the last of a 1-based one only when it is one less than the count.
    pub fn pages_remain(&self, at: PageAt) -> Option<bool> {
        let count = self.total_pages?;
        let nth = at.nth.or_else(|| {
            let k = at.number?.checked_sub(at.base?)?.checked_add(1)?;
            u64::try_from(k).ok()
        });
        if let Some(k) = nth {
            return Some(k < count);
        }
        let n = u64::try_from(at.number?).ok()?;
        // 0-based: the place is n + 1; 1-based: n
        if n.saturating_add(1) < count {
            Some(true)
        } else if n >= count {
            Some(false)
        } else {
            None
        }
    }
}

// Every key is compared in its normalised form (P8: case, `_`, `-`, `.`, `@`, `$` and
// brackets do not matter), so `has_more`, `hasMore` and `Has-More` are one name.

/// Objects that commonly hold paging metadata, searched one level down.
const CONTAINERS: &[&str] = &[
    "meta",
    "metadata",
    "pagination",
    "paging",
    "pageinfo",
    "responsemetadata",
    "links",
    "page",
    "cursor",
    "cursors",
    "hits",
    "next",
    "info",
    "pager",
    "pageable",
];
const HAS_MORE: &[&str] = &[
    "hasmore",
    "hasnext",
    "hasnextpage",
    "hasmoreitems",
    "hasmorepages",
    "hasmoreresults",
    "more",
    "moreresults",
    "moreavailable",
    "morerecords",
];
/// P12: page counts, surest first. A numeric `last_page` (Laravel, Flask-smorest) is the
/// last page's number: the count of a 1-based API, one less than the count of a 0-based
/// one, so read as a count it only ever claims fewer pages than there are.
const PAGE_COUNTS: &[&str] = &[
    "totalpages",
    "totalpagecount",
    "pagecount",
    "numpages",
    "numberofpages",
    "lastpage",
];
/// Read as a page count only inside paging metadata (`meta.pages`): at the top level it is
/// often a list.
const NESTED_PAGE_COUNTS: &[&str] = &["pages"];
/// Flags saying the opposite: this page is the last one (Spring's `last`).
/// Salesforce's `done` says the same of a query's records.
const IS_LAST: &[&str] = &["last", "islast", "islastpage", "lastpage", "done"];
/// P11: flags saying this page is the first one (Spring's `first`) …
const IS_FIRST: &[&str] = &["first", "isfirst", "isfirstpage", "firstpage"];
/// … or that a page comes before it.
const HAS_PREVIOUS: &[&str] = &["hasprevious", "hasprev", "haspreviouspage", "hasprevpage"];
/// P11: keys of a first-page URL (JSON:API `links.first`, Laravel `first_page_url`, Twilio
/// `first_page_uri`, HAL `_links.first.href`); a boolean `first` is Spring's flag instead.
const FIRST_URLS: &[&str] = &[
    "first",
    "firstpageurl",
    "firstpageuri",
    "firstlink",
    "firsturl",
    "firstpage",
];
/// P11: keys of a previous-page URL (DRF `previous`, Twilio `previous_page_uri`, …).
const PREV_URLS: &[&str] = &[
    "prev",
    "previous",
    "prevpageurl",
    "prevpageuri",
    "previouspageurl",
    "previouspageuri",
    "prevlink",
    "previouslink",
    "prevurl",
    "previousurl",
    "prevpage",
    "previouspage",
];
const TOTALS: &[&str] = &[
    "total",
    "totalcount",
    "totalresults",
    "totalitems",
    "totalsize",
    "totalrecords",
    "totalelements",
    "totalhits",
    "totalrows",
    "odatacount",
    "count",
];
/// Token keys in order of preference: an explicit "next" beats a bare `cursor`, which
/// some APIs use to echo the current position.
const TOKENS: &[&str] = &[
    "nextpagetoken",
    "nextcursor",
    "nexttoken",
    "nextmarker",
    "nextkey",
    "nextpagecursor",
    "aftercursor",
    "continuationtoken",
    "continuation",
    "scrollid",
    "endcursor",
    "after",
    "cursor",
    "next",
];
/// Keys that are only a token inside paging metadata: at the top level they are often
/// the request echoed back.
const NESTED_ONLY_TOKENS: &[&str] = &["after", "next", "endcursor"];
/// Keys of a last-page URL in the body (JSON:API `links.last`, Laravel `last_page_url`, HAL
/// `_links.last.href`). A boolean `last` is Spring's flag ([`IS_LAST`]) instead.
const LAST_URLS: &[&str] = &["last", "lastpageurl", "lastpageuri", "lastlink", "lasturl"];
const URLS: &[&str] = &[
    "odatanextlink",
    "nextlink",
    "nextpageurl",
    "nextpageuri",
    "nexturl",
    "nexturi",
    "nextpage",
    "next",
    "href",
];

/// Reads signals from a page's frame (the payload without its rows) and headers.
pub fn read(frame: &Value, headers: &[(String, String)]) -> Signals {
    read_with(frame, headers, &ResponseKeys::default())
}

/// P12: [`read`], with the keys the operation's response schema describes read first.
pub fn read_with(frame: &Value, headers: &[(String, String)], keys: &ResponseKeys) -> Signals {
    let mut found = Found::default();
    if let Value::Object(top) = frame {
        scan(top, 0, &mut found);
    }
    // P12: paging metadata as a JSON object in a header (Flask-smorest's `X-Pagination:
    // {"total": 300, "next_page": 2, …}`), read as the body's metadata is
    for (_, v) in headers.iter().filter(|(k, v)| {
        let k = k.to_ascii_lowercase();
        (k.ends_with("-pagination") || k == "pagination") && v.trim_start().starts_with('{')
    }) {
        if let Ok(Value::Object(meta)) = serde_json::from_str::<Value>(v) {
            scan(&meta, 1, &mut found);
        }
    }
    let links = || {
        headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case("link"))
    };
    let link = links().find_map(|(_, v)| link_rel(v, "next"));
    let last_link = links().find_map(|(_, v)| link_rel(v, "last"));
    let first_link = links().find_map(|(_, v)| link_rel(v, "first"));
    let prev_link =
        links().find_map(|(_, v)| link_rel(v, "prev").or_else(|| link_rel(v, "previous")));
    let pick_ranked = |c: &[(usize, String)]| c.iter().min_by_key(|(rank, _)| *rank).cloned();
    let mut next_from = None;
    let mut next_url = match link {
        Some(l) => {
            next_from = Some(Source::Header);
            Some(l)
        }
        None => pick_ranked(&found.urls).map(|(rank, u)| {
            next_from = Some(source_of(rank));
            u
        }),
    };
    let mut next_token = pick_ranked(&found.tokens).map(|(rank, t)| {
        if next_from.is_none() {
            next_from = Some(source_of(rank));
        }
        t
    });
    let total_pages = found.total_pages.map(|(_, n)| n);
    let mut has_more = found.has_more;
    let mut total = found.total.or_else(|| header_total(headers));
    // P12: the keys the response schema describes win over every list
    if let Some(v) = keys.next.as_deref().and_then(|p| at_path(frame, p)) {
        let v = v.get("href").unwrap_or(v);
        // a `Link` header's next link stays first
        let from_header = next_from == Some(Source::Header);
        let empty = v.is_null() || v.as_str() == Some("");
        match v.as_str().filter(|s| !s.is_empty()) {
            Some(s) if looks_like_url(s) && !from_header => {
                next_url = Some(s.to_owned());
                next_from = Some(Source::Schema);
            }
            Some(s) if looks_like_url(s) => {}
            Some(s) => {
                next_token = Some(s.to_owned());
                if next_url.is_none() {
                    next_from = Some(Source::Schema);
                }
            }
            // the described key says there is no next page: a list's guess is not one
            // either (a `Link` header still is)
            None if empty && next_from.is_some_and(|f| f < Source::Schema) => {
                next_url = None;
                next_token = None;
                next_from = None;
            }
            None => {}
        }
    }
    if let Some(b) = keys
        .has_more
        .as_deref()
        .and_then(|p| at_path(frame, p))
        .and_then(as_flag)
    {
        has_more = Some(b);
    }
    let mut total_key = None;
    if let Some((p, n)) = keys
        .total
        .as_deref()
        .and_then(|p| Some((p, as_count(at_path(frame, p)?)?)))
    {
        total = Some(n);
        total_key = p.last().cloned();
    }
    Signals {
        has_more,
        next_token,
        next_url,
        total,
        total_pages,
        last_url: last_link.or(found.last_url),
        first_url: first_link.or(found.first_url),
        prev_url: prev_link.or(found.prev_url),
        is_first: found.is_first,
        next_from,
        total_key,
    }
}

/// Ranks at or past this are keys recognised only by their shape.
const SHAPE_RANK: usize = 1_000;

fn source_of(rank: usize) -> Source {
    if rank >= SHAPE_RANK {
        Source::Shape
    } else {
        Source::Listed
    }
}

/// P12: a total in the headers — `X-Total-Count` (json-server), `X-Total` (GitLab),
/// `Content-Range: items 0-24/319` (RFC 9110; `*/319` too, an unknown `/*` is none). A
/// JSON `X-Pagination` header is read with the body's metadata instead ([`read_with`]).
pub fn header_total(headers: &[(String, String)]) -> Option<u64> {
    let get = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim())
    };
    let number = |v: &str| v.parse::<u64>().ok();
    get("x-total-count")
        .and_then(number)
        .or_else(|| get("x-total").and_then(number))
        .or_else(|| {
            let range = get("content-range")?;
            let (_, total) = range.rsplit_once('/')?;
            number(total.trim())
        })
}

#[derive(Default)]
struct Found {
    has_more: Option<bool>,
    total: Option<u64>,
    /// The page count, with its rank in [`PAGE_COUNTS`].
    total_pages: Option<(usize, u64)>,
    tokens: Vec<(usize, String)>,
    urls: Vec<(usize, String)>,
    last_url: Option<String>,
    first_url: Option<String>,
    prev_url: Option<String>,
    is_first: Option<bool>,
}

fn scan(obj: &Map<String, Value>, depth: usize, f: &mut Found) {
    for (key, v) in obj {
        let k = normalize(key);
        let k = k.as_str();
        if HAS_MORE.contains(&k) {
            if let Some(b) = as_flag(v) {
                f.has_more.get_or_insert(b);
            }
        }
        if IS_LAST.contains(&k) {
            if let Some(b) = as_flag(v) {
                f.has_more.get_or_insert(!b);
            }
        }
        if let Some(rank) = TOTALS.iter().position(|t| *t == k) {
            // `count` only counts at the top level or under meta-like keys, and only as a
            // fallback: many APIs use it for the rows on this page.
            if let Some(n) = as_count(v) {
                if rank + 1 < TOTALS.len() || f.total.is_none() {
                    f.total = Some(n);
                }
            }
        }
        let count_rank = PAGE_COUNTS.iter().position(|t| *t == k).or_else(|| {
            (depth > 0 && NESTED_PAGE_COUNTS.contains(&k)).then_some(PAGE_COUNTS.len())
        });
        if let Some(rank) = count_rank {
            if let Some(n) = v.as_u64().or_else(|| v.as_str()?.parse().ok()) {
                if f.total_pages.is_none_or(|(r, _)| rank < r) {
                    f.total_pages = Some((rank, n));
                }
            }
        }
        if let Some(rank) = TOKENS.iter().position(|t| *t == k) {
            if depth > 0 || !NESTED_ONLY_TOKENS.contains(&k) {
                if let Some(s) = v.as_str().filter(|s| !s.is_empty()) {
                    if looks_like_url(s) {
                        f.urls.push((rank + 100, s.to_owned()));
                    } else {
                        f.tokens.push((rank + depth * 100, s.to_owned()));
                    }
                }
            }
        }
        if IS_FIRST.contains(&k) {
            if let Some(b) = as_flag(v) {
                f.is_first.get_or_insert(b);
            }
        }
        if HAS_PREVIOUS.contains(&k) {
            if let Some(b) = as_flag(v) {
                f.is_first.get_or_insert(!b);
            }
        }
        if FIRST_URLS.contains(&k) && f.first_url.is_none() {
            f.first_url = url_at(v);
        }
        if PREV_URLS.contains(&k) && f.prev_url.is_none() {
            f.prev_url = url_at(v);
        }
        if LAST_URLS.contains(&k) && f.last_url.is_none() {
            // a URL, or HAL's `{"href": …}`
            let url = v.as_str().or_else(|| v.get("href").and_then(Value::as_str));
            f.last_url = url.filter(|s| looks_like_url(s)).map(str::to_owned);
        }
        let url_rank = URLS.iter().position(|t| *t == k).or_else(|| {
            // P8: a next link under a key on no list (`nextPageUri`, `next_results_url`).
            (k.starts_with("next") || k.ends_with("next")).then_some(URLS.len() + 50)
        });
        if let Some(rank) = url_rank {
            if let Some(s) = v.as_str().filter(|s| looks_like_url(s)) {
                let shape = if rank >= URLS.len() { SHAPE_RANK } else { 0 };
                f.urls.push((rank + depth * 100 + shape, s.to_owned()));
            }
        }
        // P12: a string that is no URL under a next-page key on no list (fastapi-pagination's
        // `next_page`) is a token, recognised by its shape
        if !TOKENS.contains(&k) && next_shaped(k) {
            if let Some(s) = v.as_str().filter(|s| !s.is_empty() && !looks_like_url(s)) {
                f.tokens.push((SHAPE_RANK + depth * 100, s.to_owned()));
            }
        }
        if depth < 2 && CONTAINERS.contains(&k) {
            if let Value::Object(inner) = v {
                scan(inner, depth + 1, f);
            }
        }
    }
}

/// P12: a key that reads as "the next page's position": `next` followed by a word for a
/// position (`next_page`, `nextPageKey`, `next_start_id`).
fn next_shaped(k: &str) -> bool {
    const WORDS: &[&str] = &[
        "page",
        "cursor",
        "token",
        "marker",
        "key",
        "offset",
        "start",
        "id",
        "continuation",
    ];
    k.strip_prefix("next")
        .is_some_and(|rest| WORDS.iter().any(|w| rest.contains(w)))
}

/// P8: a non-empty string or a whole number under the parameter `name` (normalised), at
/// the top level or in paging metadata — an API handing back the next position under the
/// name it is sent with.
pub fn echoed(frame: &Value, name: &str) -> Option<String> {
    let want = normalize(name);
    let Value::Object(top) = frame else {
        return None;
    };
    // a string, or a whole number (Litestar's integer `cursor`: the last id sent)
    let text = |v: &Value| match v {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) if n.is_u64() || n.is_i64() => Some(n.to_string()),
        _ => None,
    };
    let here = |m: &Map<String, Value>| {
        m.iter()
            .filter(|(k, _)| normalize(k) == want)
            .find_map(|(_, v)| text(v))
    };
    here(top).or_else(|| {
        top.iter()
            .filter(|(k, _)| CONTAINERS.contains(&normalize(k).as_str()))
            .find_map(|(_, v)| v.as_object().and_then(here))
    })
}

/// A URL under a key: the string itself, or HAL's `{"href": …}`.
fn url_at(v: &Value) -> Option<String> {
    let url = v.as_str().or_else(|| v.get("href").and_then(Value::as_str));
    url.filter(|s| looks_like_url(s)).map(str::to_owned)
}

/// Keys that echo the number of the page a response holds (Twilio's `page`, Spring's
/// `number`, Laravel's `current_page`), besides the page parameter's own name.
const PAGE_ECHOES: &[&str] = &[
    "page",
    "pagenumber",
    "pageindex",
    "currentpage",
    "pagenum",
    "pageno",
    "number",
];
/// Read only inside paging metadata (HAL's `page.number`, `meta.current`).
const NESTED_PAGE_ECHOES: &[&str] = &["current", "index"];

/// P11: the page number a response says it holds — under the page parameter's own name
/// `param` or a key on [`PAGE_ECHOES`], at the top level or one level down in paging
/// metadata (`{"page": {"number": 0}}`). Only a whole number counts.
pub fn page_echo(frame: &Value, param: &str) -> Option<i64> {
    let own = normalize(param);
    let Value::Object(top) = frame else {
        return None;
    };
    let number = |v: &Value| match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
            s.parse().ok()
        }
        _ => None,
    };
    let find = |m: &Map<String, Value>, nested: bool| {
        let keys = std::iter::once(own.as_str())
            .chain(PAGE_ECHOES.iter().copied())
            .chain(NESTED_PAGE_ECHOES.iter().copied().filter(|_| nested));
        keys.into_iter().find_map(|want| {
            m.iter()
                .find(|(k, _)| normalize(k) == want)
                .and_then(|(_, v)| number(v))
        })
    };
    find(top, false).or_else(|| {
        top.iter()
            .filter(|(k, _)| CONTAINERS.contains(&normalize(k).as_str()))
            .find_map(|(_, v)| v.as_object().and_then(|m| find(m, true)))
    })
}

/// P11: the whole number a URL (absolute or relative) carries under query parameter
/// `name`: the page a next, previous or first link names.
pub fn url_number(url: &str, name: &str) -> Option<i64> {
    let base = url::Url::parse("https://page.invalid/").ok()?;
    let parsed = base.join(url).ok()?;
    let found = parsed
        .query_pairs()
        .find(|(k, _)| k == name)
        .and_then(|(_, v)| v.parse::<i64>().ok());
    found
}

fn as_flag(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::String(s) if s == "true" || s == "false" => Some(s == "true"),
        _ => None,
    }
}

fn as_count(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.parse().ok(),
        // Elasticsearch: `"total": {"value": 10000, "relation": "eq"}`.
        Value::Object(m)
            if m.get("relation")
                .and_then(Value::as_str)
                .is_none_or(|r| r == "eq") =>
        {
            m.get("value").and_then(Value::as_u64)
        }
        _ => None,
    }
}

fn looks_like_url(s: &str) -> bool {
    s.starts_with("http://")
        || s.starts_with("https://")
        || (s.starts_with('/') && !s.starts_with("//"))
}

/// RFC 8288: the target of relation `rel` in `<https://…?page=2>; rel="next", <…>; rel="last"`.
fn link_rel(header: &str, rel: &str) -> Option<String> {
    let mut rest = header;
    while let Some(open) = rest.find('<') {
        let close = rest[open..].find('>')? + open;
        let url = &rest[open + 1..close];
        let after = &rest[close + 1..];
        let params_end = after.find('<').unwrap_or(after.len());
        let params = &after[..params_end];
        let is_rel = params.split(';').any(|p| {
            let p = p.trim().trim_end_matches(',').trim();
            p.strip_prefix("rel=").is_some_and(|r| {
                r.trim_matches('"')
                    .split_whitespace()
                    .any(|r| r.eq_ignore_ascii_case(rel))
            })
        });
        if is_rel && !url.is_empty() {
            return Some(url.to_owned());
        }
        rest = &after[params_end..];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sig(v: Value) -> Signals {
        read(&v, &[])
    }

    #[test]
    fn has_more_cursor_total() {
        let s = sig(json!({"data": [], "cursor": "c2", "has_more": true, "total": 3226}));
        assert_eq!(
            (s.has_more, s.next_token.as_deref(), s.total),
            (Some(true), Some("c2"), Some(3226))
        );
        assert!(s.says_more(10));
        let end = sig(json!({"data": [], "cursor": null, "has_more": false}));
        assert!(!end.says_more(0));
    }

    #[test]
    fn nested_tokens_and_urls() {
        assert_eq!(
            sig(json!({"paging": {"next": {"after": "A1", "link": "x"}}}))
                .next_token
                .as_deref(),
            Some("A1")
        );
        assert_eq!(
            sig(json!({"response_metadata": {"next_cursor": "dXNl"}}))
                .next_token
                .as_deref(),
            Some("dXNl")
        );
        assert_eq!(
            sig(json!({"response_metadata": {"next_cursor": ""}})).next_token,
            None,
            "Slack's end"
        );
        assert_eq!(
            sig(json!({"meta": {"next_cursor": "m"}}))
                .next_token
                .as_deref(),
            Some("m")
        );
        assert_eq!(
            sig(json!({"nextPageToken": "g"})).next_token.as_deref(),
            Some("g")
        );
        let graph = sig(json!({"@odata.nextLink": "https://graph/x?$skiptoken=1"}));
        assert_eq!(
            graph.next_url.as_deref(),
            Some("https://graph/x?$skiptoken=1")
        );
        assert_eq!(
            sig(json!({"links": {"next": "/v1/x?page=3"}}))
                .next_url
                .as_deref(),
            Some("/v1/x?page=3")
        );
        assert_eq!(
            sig(json!({"next": "https://a/b?cursor=2"}))
                .next_url
                .as_deref(),
            Some("https://a/b?cursor=2")
        );
        assert_eq!(
            sig(json!({"cursor": "cur", "next_cursor": "nxt"}))
                .next_token
                .as_deref(),
            Some("nxt")
        );
        assert_eq!(sig(json!({"after": "echo"})).next_token, None);
    }

    #[test]
    fn p8_names_are_read_as_people_write_them() {
        assert_eq!(sig(json!({"Has-More": true})).has_more, Some(true));
        assert_eq!(sig(json!({"HAS_NEXT_PAGE": "true"})).has_more, Some(true));
        assert_eq!(sig(json!({"last": false})).has_more, Some(true), "Spring");
        assert_eq!(sig(json!({"isLastPage": true})).has_more, Some(false));
        assert_eq!(sig(json!({"totalElements": 120})).total, Some(120));
        assert_eq!(sig(json!({"Total_Count": 7})).total, Some(7));
        assert_eq!(
            sig(json!({"pageInfo": {"EndCursor": "e1", "hasNextPage": true}}))
                .next_token
                .as_deref(),
            Some("e1")
        );
        // A relative next link under a key on no list (Twilio's `next_page_uri`, others).
        for key in [
            "next_page_uri",
            "nextPageUri",
            "next_results_url",
            "links_next",
        ] {
            assert_eq!(
                sig(json!({key: "/v1/things?page=2"})).next_url.as_deref(),
                Some("/v1/things?page=2"),
                "{key}"
            );
        }
        assert_eq!(sig(json!({"next_page_uri": null})).next_url, None);
        assert_eq!(sig(json!({"nextAction": "retry"})).next_url, None);
    }

    #[test]
    fn totals() {
        assert_eq!(sig(json!({"total_count": 5})).total, Some(5));
        assert_eq!(sig(json!({"totalCount": 5, "count": 2})).total, Some(5));
        assert_eq!(sig(json!({"count": 2})).total, Some(2));
        assert_eq!(sig(json!({"@odata.count": 9})).total, Some(9));
        assert_eq!(
            sig(json!({"hits": {"total": {"value": 10, "relation": "eq"}}})).total,
            Some(10)
        );
        assert_eq!(
            sig(json!({"hits": {"total": {"value": 10000, "relation": "gte"}}})).total,
            None
        );
    }

    #[test]
    fn link_header() {
        let h = vec![("Link".to_owned(), r#"<https://api.github.com/x?page=2>; rel="next", <https://api.github.com/x?page=9>; rel="last""#.to_owned())];
        assert_eq!(
            read(&json!([]), &h).next_url.as_deref(),
            Some("https://api.github.com/x?page=2")
        );
        let last = vec![(
            "link".to_owned(),
            r#"<https://a/x?page=1>; rel="prev", <https://a/x?page=1>; rel="first""#.to_owned(),
        )];
        assert_eq!(read(&json!([]), &last).next_url, None);
    }

    #[test]
    fn p9_last_page_links_are_read_and_never_taken_for_next() {
        let h = vec![("Link".to_owned(), r#"<https://api.github.com/x?page=2>; rel="next", <https://api.github.com/x?page=9>; rel="last""#.to_owned())];
        let s = read(&json!([]), &h);
        assert_eq!(
            s.last_url.as_deref(),
            Some("https://api.github.com/x?page=9")
        );
        assert_eq!(
            s.next_url.as_deref(),
            Some("https://api.github.com/x?page=2")
        );
        let body = |v| read(&v, &[]);
        let jsonapi = body(json!({"data": [], "links": {"last": "/x?page[number]=7"}}));
        assert_eq!(jsonapi.last_url.as_deref(), Some("/x?page[number]=7"));
        assert_eq!(jsonapi.next_url, None);
        let hal = body(json!({"_links": {"last": {"href": "/x?offset=90"}}}));
        assert_eq!(hal.last_url.as_deref(), Some("/x?offset=90"));
        assert_eq!(hal.next_url, None, "a last link is not a next link");
        let laravel = body(json!({"last_page": 4, "last_page_url": "https://a/x?page=4"}));
        assert_eq!(laravel.last_url.as_deref(), Some("https://a/x?page=4"));
        // Spring's flag is no link
        let spring = body(json!({"last": false}));
        assert_eq!((spring.last_url, spring.has_more), (None, Some(true)));
    }

    #[test]
    fn p11_first_and_previous_pages_and_echoed_numbers_are_read() {
        let body = |v| read(&v, &[]);
        // Twilio
        let t = body(
            json!({"messages": [], "page": 1, "first_page_uri": "/x?Page=0&PageSize=50",
            "previous_page_uri": "/x?Page=0&PageSize=50", "next_page_uri": null}),
        );
        assert_eq!(t.first_url.as_deref(), Some("/x?Page=0&PageSize=50"));
        assert_eq!(t.prev_url.as_deref(), Some("/x?Page=0&PageSize=50"));
        assert_eq!(
            t.first_url.as_deref().and_then(|u| url_number(u, "Page")),
            Some(0)
        );
        // Spring Data, HAL, JSON:API, DRF
        let spring = body(json!({"content": [], "first": false, "number": 1}));
        assert_eq!((spring.is_first, spring.first_url), (Some(false), None));
        let hal = body(
            json!({"_embedded": {"items": []}, "page": {"number": 0, "size": 20},
            "_links": {"first": {"href": "https://a/x?page=0&size=20"}, "prev": null}}),
        );
        assert_eq!(hal.first_url.as_deref(), Some("https://a/x?page=0&size=20"));
        assert_eq!(hal.prev_url, None);
        let jsonapi = body(
            json!({"data": [], "links": {"first": "/x?page[number]=1", "prev": "/x?page[number]=1"}}),
        );
        assert_eq!(
            jsonapi
                .prev_url
                .as_deref()
                .and_then(|u| url_number(u, "page[number]")),
            Some(1)
        );
        assert_eq!(
            body(json!({"results": [], "previous": null})).prev_url,
            None
        );
        assert_eq!(
            body(json!({"data": [], "meta": {"hasPreviousPage": true}})).is_first,
            Some(false)
        );
        // a Link header
        let h = vec![("Link".to_owned(), r#"<https://a/x?page=2>; rel="next", <https://a/x?page=0>; rel="prev", <https://a/x?page=0>; rel="first""#.to_owned())];
        let s = read(&json!([]), &h);
        assert_eq!(s.prev_url.as_deref(), Some("https://a/x?page=0"));
        assert_eq!(s.first_url.as_deref(), Some("https://a/x?page=0"));
        // echoed page numbers
        assert_eq!(
            page_echo(&json!({"page": 0, "page_size": 50}), "Page"),
            Some(0)
        );
        assert_eq!(
            page_echo(&json!({"number": 3, "size": 20}), "page"),
            Some(3)
        );
        assert_eq!(
            page_echo(&json!({"page": {"number": 0, "size": 20}}), "page"),
            Some(0)
        );
        assert_eq!(
            page_echo(&json!({"meta": {"current_page": "2"}}), "page"),
            Some(2)
        );
        assert_eq!(
            page_echo(&json!({"pageable": {"pageNumber": 4}}), "page"),
            Some(4)
        );
        assert_eq!(
            page_echo(&json!({"pg": 7}), "pg"),
            Some(7),
            "the parameter's own name"
        );
        assert_eq!(
            page_echo(&json!({"current": 7}), "page"),
            None,
            "only in paging metadata"
        );
        assert_eq!(page_echo(&json!({"page": "next"}), "page"), None);
        assert_eq!(
            url_number("https://a/x?page=3&per_page=100", "page"),
            Some(3)
        );
        assert_eq!(url_number("/x?cursor=3", "page"), None);
    }
}
