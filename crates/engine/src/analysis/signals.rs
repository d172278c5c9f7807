//! What a response says about the rows it did not return: `has_more`, next-page tokens and
//! URLs (body or RFC 8288 `Link` header) and announced totals. Used to keep walking past a
//! short page (P2), to follow cursors (P5), and to warn about unread pages (P7). A
//! last-page link (`rel="last"`, or one in the body) is read too, only as P9's evidence of
//! random access: like a total, it never decides where a walk ends.

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
    /// A last-page URL (`Link: <…>; rel="last"`, or under a last-page key in the body).
    pub last_url: Option<String>,
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
/// Flags saying the opposite: this page is the last one (Spring's `last`).
const IS_LAST: &[&str] = &["last", "islast", "islastpage", "lastpage"];
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
    let mut found = Found::default();
    if let Value::Object(top) = frame {
        scan(top, 0, &mut found);
    }
    let links = || {
        headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case("link"))
    };
    let link = links().find_map(|(_, v)| link_rel(v, "next"));
    let last_link = links().find_map(|(_, v)| link_rel(v, "last"));
    let pick = |c: &[(usize, String)]| {
        c.iter()
            .min_by_key(|(rank, _)| *rank)
            .map(|(_, s)| s.clone())
    };
    Signals {
        has_more: found.has_more,
        next_token: pick(&found.tokens),
        next_url: link.or_else(|| pick(&found.urls)),
        total: found.total,
        last_url: last_link.or(found.last_url),
    }
}

#[derive(Default)]
struct Found {
    has_more: Option<bool>,
    total: Option<u64>,
    tokens: Vec<(usize, String)>,
    urls: Vec<(usize, String)>,
    last_url: Option<String>,
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
                f.urls.push((rank + depth * 100, s.to_owned()));
            }
        }
        if depth < 2 && CONTAINERS.contains(&k) {
            if let Value::Object(inner) = v {
                scan(inner, depth + 1, f);
            }
        }
    }
}

/// P8: a non-empty string under the parameter `name` (normalised), at the top level or in
/// paging metadata — an API handing back the next position under the name it is sent
/// with.
pub fn echoed(frame: &Value, name: &str) -> Option<String> {
    let want = normalize(name);
    let Value::Object(top) = frame else {
        return None;
    };
    let here = |m: &Map<String, Value>| {
        m.iter()
            .find(|(k, v)| normalize(k) == want && v.as_str().is_some_and(|s| !s.is_empty()))
            .and_then(|(_, v)| v.as_str().map(str::to_owned))
    };
    here(top).or_else(|| {
        top.iter()
            .filter(|(k, _)| CONTAINERS.contains(&normalize(k).as_str()))
            .find_map(|(_, v)| v.as_object().and_then(here))
    })
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
}
