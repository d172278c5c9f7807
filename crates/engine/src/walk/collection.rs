//! One collection's walk (P2–P4, P7–P10, G7): its pages fetched one after another from
//! where it starts (or where a call before left it), each page's rows kept within the item
//! bound, and the page's signals (`has_more`, totals, next links and tokens, a repeated
//! page or cursor) deciding whether and where it goes on. A walk whose API linked a next
//! page ends at the first page that links none, unless something else says more. Every
//! way it ends is a named [`StopReason`] on the [`Collection`] it returns.

use super::{report, Ctx};
use crate::analysis::normalize;
use crate::analysis::signals::{self, Signals};
use crate::document::item::Item;
use crate::document::{Page, Slot};
use crate::error::EngineError;
use crate::outcome::verdict::Collection;
use crate::outcome::StopReason;
use crate::ports::{Clock, ProgressSink, Upstream, UpstreamRequest};
use crate::walk::ahead_guess::{self, last_position, Extent};
use crate::walk::paging::{
    end_of_numbered, get_arg, page_no, position, set_arg, start, starts_at_first_page, Start, Style,
};
use crate::walk::request::{fetch, Failed};
use crate::walk::resume::{self, Pending, Position};
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::time::Duration;

/// Cursor parameters that take the id of the last row when the API only says `has_more`
/// (Stripe's `starting_after`).
const LAST_ID_CURSORS: &[&str] = &["startingafter", "after", "pageafter", "afterid"];

/// One collection, from its start or from where a call before left it (P10). Returns
/// it, and — when a bound stopped it — where it would go on and how many rows of that page
/// it already kept.
pub(super) async fn collection<U: Upstream + Sync, P: ProgressSink, C: Clock>(
    ctx: &mut Ctx<'_, U, P, C>,
    value: Option<&Value>,
    from: &Pending,
) -> Result<(Collection, Option<(Position, usize)>), EngineError> {
    let (plan, analysis, limits) = (ctx.plan, ctx.analysis, ctx.limits);
    let owner = from.value;
    let Start {
        mut args,
        mut style,
        size,
        mut next_url,
    } = start(plan, analysis, limits, ctx.ahead.upstream(), value, from)?;
    let walking = !matches!(style, Style::Single);
    ctx.ahead.known(!walking);
    let from_start = starts_at_first_page(analysis, &plan.upstream_args);
    let mut col = Collection::new(value.cloned());
    let mut seen_cursors: HashSet<String> = HashSet::new();
    let mut seen_pages: HashSet<u64> = HashSet::new();
    let mut previous_page: Option<u64> = None;
    let mut col_slot: Option<Slot> = None;
    // P9: where the first page's last-page link points, and the step later pages were
    // expected at (set once they are)
    let mut last_at: Option<u64> = None;
    let mut guessed_step: Option<u64> = None;
    // a next link came with an earlier page: the API links its pages (P2, P5)
    let mut linked = false;
    // P10: rows of the first page already kept by the call before
    let mut skip = from.skip;
    col.rows = from.rows;
    col.total = from.total;
    loop {
        let req = UpstreamRequest {
            args: args.clone(),
            next_url: next_url.clone(),
            timeout: Duration::ZERO,
        };
        let resp = match fetch(
            &mut ctx.ahead,
            owner,
            ctx.clock,
            limits,
            &mut ctx.budget,
            req,
        )
        .await
        {
            Ok(r) => r,
            Err(f) => {
                col.stop = f.stop;
                col.likely_more = true;
                col.failure = Some(f);
                break;
            }
        };
        let status = resp.status;
        let mut page = ctx.ahead.upstream().parse_page(resp.body).await;
        let expected = if col.pages == 0 {
            ctx.slot.clone()
        } else {
            col_slot.clone()
        };
        if let Some(slot) = expected {
            if !page.conform(&slot) && col.pages > 0 {
                // G7: a later page that is not the collection the first page was (not
                // JSON, an HTML page sent with 200, another shape) is a failed page.
                col.stop = StopReason::UpstreamError;
                col.likely_more = true;
                col.failure = Some(Failed {
                    stop: StopReason::UpstreamError,
                    status: Some(status),
                    message: format!("{}, not the list the first page held", shape_of(&page)),
                });
                break;
            }
        }
        col.pages += 1;
        if col.pages == 1 {
            col_slot.clone_from(&page.slot);
            if ctx.slot.is_none() {
                ctx.slot.clone_from(&page.slot);
            }
        }
        // A response without an item array is a record: its fields are not paging signals
        // (an invoice's `total` is not a row count).
        let sig = if page.slot.is_some() {
            signals::read(&page.frame, &resp.headers)
        } else {
            Signals::default()
        };
        if col.pages == 1 {
            col.total = sig.total.or(col.total);
            let per_page = analysis.page_size.as_ref().zip(size);
            last_at = sig
                .last_url
                .as_deref()
                .and_then(|u| last_position(&style, per_page, u));
        }
        // P8: the API hands the next position back under the cursor parameter's own name
        // (Airtable's string `offset`); the value just sent, handed back, is an echo.
        let echo = analysis
            .cursor
            .as_ref()
            .filter(|_| page.slot.is_some())
            .and_then(|c| {
                signals::echoed(&page.frame, &c.name)
                    .filter(|t| get_arg(&args, c).and_then(Value::as_str) != Some(t))
            });
        if page.slot.is_none() && plan.uses_reserved && !page.frame.is_null() {
            // A single record (no list in it, or a text body) is one row of the envelope,
            // e.g. a `_for_each` over the ids of a get-one endpoint.
            page.items.push(Item::from_value(&page.frame));
        }
        let n = page.items.len();
        let fingerprint = fingerprint(&page.items);
        if n > 0 && walking && !seen_pages.insert(fingerprint) {
            // Some APIs answer every page past the end with the last page again.
            col.stop = StopReason::Loop;
            col.repeat_of_previous = previous_page == Some(fingerprint);
            col.likely_more = !col.repeat_of_previous;
            break;
        }
        previous_page = Some(fingerprint);
        let mut items = std::mem::take(&mut page.items);
        let page_last_id = items.last().and_then(last_id);
        let skipped = skip.min(items.len());
        items.drain(..skipped);
        skip = 0;
        if ctx.first.is_none() {
            ctx.first = Some(page);
        }
        let room = limits.items.saturating_sub(ctx.budget.items);
        let take = (n - skipped).min(room);
        let tag = plan.for_each.as_ref().zip(value);
        ctx.items
            .extend(items.into_iter().take(take).map(|i| match tag {
                Some((f, v)) => i.tagged(&f.key, v),
                None => i,
            }));
        ctx.budget.items += take;
        col.rows += take;
        report(ctx, col.pages, value);
        if take < n - skipped {
            col.stop = StopReason::Items;
            col.likely_more = true;
            // the page is asked for again, its first rows skipped
            skip = skipped + take;
            break;
        }
        let fetched = col.rows;
        let more = sig.says_more(fetched)
            || echo.is_some()
            || col.total.is_some_and(|t| (fetched as u64) < t);
        // P2, P5: an API that links its next page ends where a page links none, unless
        // something else says more (a flag, a token, a total not reached)
        let unlinked = linked && sig.next_url.is_none() && !more;
        linked |= sig.next_url.is_some();
        match &mut style {
            Style::Single => {
                // P7: "more rows" only when the API says so; a merely full page leaves
                // the set unproven (not complete) without claiming more.
                col.single = true;
                col.likely_more = more;
                // Only a call from the first page can prove it saw every row.
                col.known_end = from_start
                    && (sig.has_more == Some(false)
                        || col.total.is_some_and(|t| fetched as u64 >= t)
                        || size.is_some_and(|s| (n as u64) < s));
                col.stop = StopReason::End;
                break;
            }
            Style::Page(p, number) => {
                if unlinked || end_of_numbered(n, size, &sig, more, col.total, fetched) {
                    col.finish_end(more && n > 0 && sig.has_more != Some(false));
                    break;
                }
                *number += 1;
                set_arg(&mut args, &p.name, p.in_body, p.number(page_no(*number)));
            }
            Style::Offset(p, at) => {
                if unlinked || end_of_numbered(n, size, &sig, more, col.total, fetched) {
                    col.finish_end(more && n > 0 && sig.has_more != Some(false));
                    break;
                }
                // Step by rows received, not rows asked for: right even when the API
                // silently caps the page size.
                if guessed_step.is_some_and(|s| s != n as u64) {
                    // P9: the offsets guessed from the first page are not where this walk goes
                    ctx.ahead.drop_pages(owner);
                    guessed_step = None;
                }
                *at += n as u64;
                set_arg(&mut args, &p.name, p.in_body, p.number(*at));
            }
            Style::Cursor(p) => {
                // An explicit "no more", or an empty page nobody claims is followed by more,
                // ends the walk even if a cursor came along (some APIs always send one).
                if sig.has_more == Some(false) || (n == 0 && sig.has_more != Some(true)) {
                    col.finish_end(col.total.is_some_and(|t| (fetched as u64) < t));
                    break;
                }
                let next = if let Some(url) = &sig.next_url {
                    match ctx.ahead.upstream().follow(url) {
                        Some(abs) => Some((abs, true)),
                        None => {
                            col.stop = StopReason::OffOrigin;
                            col.likely_more = true;
                            col.off_origin_url = Some(url.clone());
                            break;
                        }
                    }
                } else if let Some(t) = &sig.next_token {
                    Some((t.clone(), false))
                } else if let Some(t) = echo.clone() {
                    Some((t, false))
                } else if sig.has_more == Some(true)
                    && LAST_ID_CURSORS.contains(&normalize(&p.name).as_str())
                {
                    page_last_id.clone().map(|id| (id, false))
                } else {
                    None
                };
                let Some((next, is_url)) = next else {
                    col.finish_end(
                        sig.has_more == Some(true)
                            || col.total.is_some_and(|t| (fetched as u64) < t),
                    );
                    break;
                };
                if !seen_cursors.insert(next.clone()) {
                    col.stop = StopReason::Loop;
                    col.likely_more = col.total.is_none_or(|t| (fetched as u64) < t);
                    break;
                }
                if is_url {
                    next_url = Some(next);
                } else {
                    next_url = None;
                    set_arg(&mut args, &p.name, p.in_body, Value::String(next));
                }
            }
        }
        if col.pages >= limits.pages_per_collection {
            col.stop = StopReason::Pages;
            col.likely_more = true;
            break;
        }
        if let Some(stop) = ctx.budget.exhausted(limits, ctx.clock) {
            col.stop = stop;
            col.likely_more = true;
            break;
        }
        if col.pages == 1 {
            let extent = Extent {
                total: col.total,
                last: last_at,
            };
            guessed_step = expect_pages(ctx, owner, &style, &args, n, col.rows, extent, col.pages);
        }
    }
    let cut = resume::resumable(col.stop).then(|| (position(&style, &next_url, &args), skip));
    Ok((col, cut))
}

/// P9: the later pages the first page's evidence ([`Extent`]) shows, expected of the
/// requests made ahead as far as the page bound and the item bound reach. Returns the step
/// when pages were expected.
#[allow(clippy::too_many_arguments)]
fn expect_pages<U: Upstream + Sync, P, C>(
    ctx: &mut Ctx<'_, U, P, C>,
    owner: usize,
    style: &Style,
    args: &Map<String, Value>,
    n: usize,
    fetched: usize,
    extent: Extent,
    pages: u32,
) -> Option<u64> {
    if !ctx.ahead.parallel() {
        return None;
    }
    let bounds = ahead_guess::Bounds {
        pages: u64::from(ctx.limits.pages_per_collection.saturating_sub(pages)),
        items: ctx.limits.items.saturating_sub(ctx.budget.items) as u64,
    };
    let (step, later) = ahead_guess::later_pages(style, args, n, fetched, &extent, bounds)?;
    ctx.ahead.known(true);
    for next in later {
        ctx.ahead.expect(owner, true, next, None);
    }
    Some(step)
}

/// Says what a page that broke the walk looked like, for the note.
fn shape_of(page: &Page) -> String {
    match &page.frame {
        _ if !page.json => {
            let text = page.frame.as_str().unwrap_or_default();
            let head: String = text.chars().take(60).collect();
            format!("the page was not JSON ({head:?})")
        }
        Value::Null => "the page was empty".to_owned(),
        Value::Object(m) => {
            let keys: Vec<&str> = m.keys().take(8).map(String::as_str).collect();
            format!("the page had another shape (keys {})", keys.join(", "))
        }
        other => format!("the page had another shape ({})", kind(other)),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Array(_) => "an array",
        Value::String(_) => "a string",
        Value::Number(_) => "a number",
        Value::Bool(_) => "a boolean",
        Value::Object(_) => "an object",
        Value::Null => "null",
    }
}

/// Identifies a page by its size and a sample of its rows (first, last and every 16th):
/// enough to recognise a page served twice, without hashing every byte of every page.
fn fingerprint(items: &[Item]) -> u64 {
    let mut h = DefaultHasher::new();
    items.len().hash(&mut h);
    items.iter().map(Item::len).sum::<usize>().hash(&mut h);
    for i in items.iter().step_by(16).chain(items.last()) {
        i.raw().hash(&mut h);
    }
    h.finish()
}

fn last_id(item: &Item) -> Option<String> {
    match item.view(&["id"]).get("id")? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}
