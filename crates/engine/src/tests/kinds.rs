//! G7, P2–P5, E1–E5 as properties: generated paginated APIs of every supported kind, with
//! row counts around the page size (0, 1, size − 1, size, k × size, k × size + 1) and
//! fan-out values that have no rows. The merged set must be exactly the upstream's
//! (ids, order within a value, no duplicates) and the verdict honest.

use crate::tests::cursor::walk_all;
use crate::tests::kit::*;
use crate::*;
use proptest::prelude::*;
use serde_json::{json, Value};
use std::collections::HashSet;

const ORIGIN: &str = "https://api.example.com";

#[derive(Debug, Clone, Copy)]
enum Kind {
    /// `per_page` + `page` (1-based); the rows under a key on no list.
    PageNumber,
    /// `limit` + `offset`, rows under `data`.
    Offset,
    /// `cursor` + `next_cursor` / `has_more` in the body.
    CursorToken,
    /// A next URL in the body (absolute, on the provider).
    NextLink,
    /// Parameters in the JSON body, Google's `nextPageToken`.
    BodyCursor,
    /// A top-level array with an RFC 8288 `Link: rel="next"` header.
    LinkHeader,
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        Just(Kind::PageNumber),
        Just(Kind::Offset),
        Just(Kind::CursorToken),
        Just(Kind::NextLink),
        Just(Kind::BodyCursor),
        Just(Kind::LinkHeader),
    ]
}

/// A row count of one of the interesting shapes for a page size.
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

fn schema(kind: Kind, size: usize) -> Value {
    let max = json!({"type": "integer", "maximum": size});
    let owner = json!({"type": "integer"});
    let props = match kind {
        Kind::PageNumber => {
            json!({"per_page": max, "page": {"type": "integer"}, "owner_id": owner})
        }
        Kind::Offset => json!({"limit": max, "offset": {"type": "integer"}, "owner_id": owner}),
        Kind::CursorToken | Kind::NextLink => {
            json!({"limit": max, "cursor": {"type": "string"}, "owner_id": owner})
        }
        Kind::BodyCursor => json!({"owner_id": owner, "body": {"type": "object", "properties": {
            "pageSize": max, "pageToken": {"type": "string"}
        }}}),
        Kind::LinkHeader => {
            json!({"per_page": max, "after": {"type": "string"}, "owner_id": owner})
        }
    };
    json!({"type": "object", "properties": props})
}

/// The rows of value `v`: ids `v * 10_000 + i`.
fn upstream_rows(v: u64, n: usize) -> Vec<Value> {
    (0..n as u64)
        .map(|i| json!({"id": v * 10_000 + i, "v": v}))
        .collect()
}

/// One fake API over `counts[v]` rows per owner value, paging the way `kind` does.
fn api(clock: &FakeClock, kind: Kind, counts: Vec<usize>) -> FakeApi {
    FakeApi::new(clock, move |req, _| {
        let from_url = |k: &str| req.next_url.as_deref().and_then(|u| query(u, k));
        let v = from_url("owner_id")
            .and_then(|s| s.parse().ok())
            .or_else(|| arg_u64(req, "owner_id"))
            .unwrap_or(0);
        let n = counts.get(v as usize).copied().unwrap_or(0);
        let size_arg = ["per_page", "limit", "pageSize"]
            .iter()
            .find_map(|k| {
                from_url(k)
                    .and_then(|s| s.parse().ok())
                    .or_else(|| arg_u64(req, k))
            })
            .unwrap_or(10) as usize;
        let token = |k: &str| from_url(k).or_else(|| arg_str(req, k));
        let at = match kind {
            Kind::PageNumber => (arg_u64(req, "page").unwrap_or(1).max(1) as usize - 1) * size_arg,
            Kind::Offset => arg_u64(req, "offset").unwrap_or(0) as usize,
            Kind::CursorToken | Kind::NextLink => token("cursor").map_or(0, |c| dec(&c)),
            Kind::BodyCursor => token("pageToken").map_or(0, |c| dec(&c)),
            Kind::LinkHeader => token("after").map_or(0, |c| dec(&c)),
        }
        .min(n);
        let end = (at + size_arg).min(n);
        let rows = upstream_rows(v, n)[at..end].to_vec();
        let more = end < n;
        let next_url = format!(
            "{ORIGIN}/v1/x?owner_id={v}&limit={size_arg}&cursor={}",
            enc(end)
        );
        match kind {
            Kind::PageNumber => ok(json!({"bookings": rows, "owner": v})),
            Kind::Offset => ok(json!({"data": rows, "total": n})),
            Kind::CursorToken => ok(json!({
                "data": rows, "has_more": more, "next_cursor": if more { json!(enc(end)) } else { Value::Null }
            })),
            Kind::NextLink => ok(json!({
                "results": rows, "next": if more { json!(next_url) } else { Value::Null }
            })),
            Kind::BodyCursor => {
                let mut b = json!({"items": rows});
                if more {
                    b["nextPageToken"] = json!(enc(end));
                }
                ok(b)
            }
            Kind::LinkHeader => {
                let link = if more {
                    format!(
                        "<{ORIGIN}/v1/x?owner_id={v}&per_page={size_arg}&after={}>; rel=\"next\"",
                        enc(end)
                    )
                } else {
                    format!("<{ORIGIN}/v1/x?owner_id={v}>; rel=\"first\"")
                };
                with_header(json!(rows), "Link", link)
            }
        }
    })
}

fn enc(at: usize) -> String {
    format!("c{}", at * 3 + 1)
}

fn dec(c: &str) -> usize {
    c.trim_start_matches('c')
        .parse::<usize>()
        .map_or(usize::MAX, |n| n.saturating_sub(1) / 3)
}

proptest! {
    #![proptest_config(prop_config(160))]

    /// Every row of every value, once, in order; the verdict says complete.
    #[test]
    fn g7_p5_every_kind_merges_exactly_the_upstream_set(
        kind in kind(),
        size in 2usize..12,
        k in 2usize..4,
        shapes in prop::collection::vec(any::<u8>(), 1..5),
    ) {
        let counts: Vec<usize> = shapes.iter().map(|s| count(*s, k, size)).collect();
        let clock = FakeClock::default();
        let api = api(&clock, kind, counts.clone());
        let values: Vec<usize> = (0..counts.len()).collect();
        let extra = if counts.len() == 1 {
            json!({})
        } else {
            json!({"_for_each": {"key": "owner_id", "values": values}})
        };
        let o = walk_all(&schema(kind, size), extra, &api, &clock, &Limits::default());
        let want: Vec<u64> = counts
            .iter()
            .enumerate()
            .flat_map(|(v, n)| upstream_rows(v as u64, *n))
            .filter_map(|r| r["id"].as_u64())
            .collect();
        prop_assert_eq!(row_ids(&o), want, "{:?} {:?}: {}", kind, counts, o.verdict.note);
        prop_assert_eq!(
            (o.verdict.stopped_by, o.verdict.paging_complete, o.verdict.likely_more_rows),
            (Some(StopReason::End), true, false),
            "{:?} {:?}: {}", kind, counts, o.verdict.note
        );
        prop_assert!(o.for_each_errors.is_empty());
    }

    /// Under a page bound: no duplicates, each value's rows a prefix of its upstream rows,
    /// and "complete" only when the merged set is the whole set.
    #[test]
    fn p3_p4_a_bounded_walk_is_a_prefix_and_says_so(
        kind in kind(),
        size in 2usize..8,
        k in 2usize..5,
        shapes in prop::collection::vec(any::<u8>(), 1..4),
        pages in 1u32..4,
        requests in 1u32..12,
    ) {
        let counts: Vec<usize> = shapes.iter().map(|s| count(*s, k, size)).collect();
        let clock = FakeClock::default();
        let api = api(&clock, kind, counts.clone());
        let values: Vec<usize> = (0..counts.len()).collect();
        let limits = Limits { pages_per_collection: pages, requests, ..Limits::default() };
        let extra = json!({"_for_each": {"key": "owner_id", "values": values}});
        let o = walk_all(&schema(kind, size), extra, &api, &clock, &limits);
        let got = row_ids(&o);
        let distinct: HashSet<u64> = got.iter().copied().collect();
        prop_assert_eq!(distinct.len(), got.len(), "no row twice");
        for (v, n) in counts.iter().enumerate() {
            let mine: Vec<u64> = got.iter().copied().filter(|id| id / 10_000 == v as u64).collect();
            let all: Vec<u64> = upstream_rows(v as u64, *n).iter().filter_map(|r| r["id"].as_u64()).collect();
            prop_assert_eq!(&mine[..], &all[..mine.len()], "value {} is a prefix", v);
        }
        let total: usize = counts.iter().sum();
        if o.verdict.paging_complete {
            prop_assert_eq!(got.len(), total, "complete means every row: {}", o.verdict.note);
            prop_assert_eq!(o.verdict.stopped_by, Some(StopReason::End));
        } else {
            prop_assert!(o.verdict.stopped_by != Some(StopReason::End), "{}", o.verdict.note);
            prop_assert!(o.verdict.likely_more_rows, "{}", o.verdict.note);
        }
        if got.len() < total {
            prop_assert!(!o.verdict.paging_complete, "{}", o.verdict.note);
        }
    }
}
