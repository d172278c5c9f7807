//! P9: what a walk's first page shows about the pages still to come — an announced total,
//! a link to the last page or a page count (P12) — and the requests of those pages, guessed in advance so
//! that they can start ahead ([`crate::walk::ahead`]). Evidence for requesting ahead only, never
//! for where a walk ends: the walk decides that from the pages themselves, so a total or a
//! link that lies costs requests sent ahead, never rows or the verdict.

use serde_json::{Map, Value};

use crate::analysis::Param;
use crate::walk::paging::{page_no, set_arg, Style};

/// What the first page says about how far the collection reaches.
pub(crate) struct Extent {
    /// The announced total.
    pub total: Option<u64>,
    /// The page number or offset of the last page, from a last-page link.
    pub last: Option<u64>,
    /// P12: the pages after this one the API's page count leaves (`total_pages`).
    pub pages_left: Option<u64>,
}

/// How far guesses may reach whatever the evidence says.
pub(crate) struct Bounds {
    /// Pages the collection may still fetch (P3).
    pub pages: u64,
    /// Rows the call may still merge (P3).
    pub items: u64,
}

/// The arguments of the pages after the first one (whose `n` rows made `fetched` so far),
/// for a page-number or offset walk with evidence of how far it reaches: page number + k,
/// or offset + k × n (the walk steps by rows received). As far as the total or the last
/// page (the nearer) and `bounds` reach; with the step, or `None` when nothing can be
/// guessed.
pub(crate) fn later_pages(
    style: &Style,
    args: &Map<String, Value>,
    n: usize,
    fetched: usize,
    extent: &Extent,
    bounds: Bounds,
) -> Option<(u64, Vec<Map<String, Value>>)> {
    if n == 0 || !matches!(style, Style::Page(..) | Style::Offset(..)) {
        return None;
    }
    let step = n as u64;
    let by_total = extent
        .total
        .map(|t| t.saturating_sub(fetched as u64).div_ceil(step));
    // the pages from the next one up to the last one, both included
    let by_last = extent.last.and_then(|last| match style {
        Style::Page(_, number) => Some((last + 1).saturating_sub(page_no(*number))),
        Style::Offset(_, at) => Some(if last >= *at {
            (last - at) / step + 1
        } else {
            0
        }),
        Style::Single | Style::Cursor(_) | Style::Link => None,
    });
    let by_evidence = by_total
        .into_iter()
        .chain(by_last)
        .chain(extent.pages_left)
        .min()?;
    let count = by_evidence
        .min(bounds.pages)
        .min(bounds.items.div_ceil(step));
    let mut later = Vec::new();
    for k in 0..count {
        let mut next = args.clone();
        match style {
            Style::Page(p, number) => {
                let at = page_no(number.saturating_add(i64::try_from(k).unwrap_or(i64::MAX)));
                set_arg(&mut next, &p.name, p.in_body, p.number(at));
            }
            Style::Offset(p, at) => {
                set_arg(&mut next, &p.name, p.in_body, p.number(at + k * step));
            }
            Style::Single | Style::Cursor(_) | Style::Link => return None,
        }
        later.push(next);
    }
    Some((step, later))
}

/// The page number or offset a last-page link names, in the walk's own units: under the
/// walk's own query parameter, and for a page number with the page size this walk asks for
/// (`per_page`: the size parameter and its value), else its pages are not this walk's;
/// names as the API spells them (P12).
/// `None` when it names no such position (or the parameter goes in the body). The link is
/// only read, never followed.
pub(crate) fn last_position(
    style: &Style,
    per_page: Option<(&Param, u64)>,
    url: &str,
) -> Option<u64> {
    let (p, numbered) = match style {
        Style::Page(p, _) if !p.in_body => (p, true),
        Style::Offset(p, _) if !p.in_body => (p, false),
        _ => return None,
    };
    let base = url::Url::parse("https://last.invalid/").ok()?;
    let parsed = base.join(url).ok()?;
    // P12: under the API's own name of the parameter (`_page`), else the tool's
    let query = |p: &Param| {
        let at = |name: &str| {
            parsed
                .query_pairs()
                .find(|(k, _)| k == name)
                .and_then(|(_, v)| v.parse::<u64>().ok())
        };
        at(p.wire()).or_else(|| at(&p.name))
    };
    if numbered {
        let (size_param, size) = per_page?;
        if query(size_param) != Some(size) {
            return None;
        }
    }
    query(p)
}
