//! One collection's walk (P2–P4, P7–P11, G7): its pages fetched one after another from
//! where it starts (or where a call before left it), each page's rows kept within the item
//! bound, and the page's signals (`has_more`, totals, next links and tokens, a repeated
//! page or cursor) deciding whether and where it goes on. A page-numbered walk's first
//! answers are judged by [`crate::walk::first_page`] before they are merged (P11). A walk
//! whose API linked a next page ends at the first page that links none, unless something
//! else says more. Every way it ends is a named [`StopReason`] on the [`Collection`] it
//! returns.

use super::{report, Ctx};
use crate::analysis::first_page::{schema_base, Strength};
use crate::analysis::signals::{self, PageAt, Signals, Source};
use crate::analysis::{normalize, ToolAnalysis};
use crate::document::item::Item;
use crate::document::{Page, Slot};
use crate::error::EngineError;
use crate::outcome::verdict::Collection;
use crate::outcome::StopReason;
use crate::ports::{Clock, ProgressSink, Upstream, UpstreamRequest};
use crate::resume::{Pending, Position};
use crate::walk::ahead_guess::{self, last_position, Extent};
use crate::walk::first_page::{Answer, Step};
use crate::walk::paging::{
    end_of_numbered, get_arg, page_no, position, remove_arg, set_arg, start, starts_at_first_page,
    Start, Style,
};
use crate::walk::request::{fetch, Failed};
use crate::walk::resume;
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::time::Duration;

/// Cursor parameters that take the id of the last row when the API only says `has_more`
/// (Stripe's `starting_after`).
const LAST_ID_CURSORS: &[&str] = &["startingafter", "after", "pageafter", "afterid"];

/// One collection, from its start or from where a call before left it (P10). Returns
/// it, and — when a bound stopped it — where it would go on, how many rows of that page
/// it already kept, and whether a walk from there is unsure of the first page (P11).
pub(super) async fn collection<U: Upstream + Sync, P: ProgressSink, C: Clock>(
    ctx: &mut Ctx<'_, U, P, C>,
    value: Option<&Value>,
    from: &Pending,
) -> Result<(Collection, Option<(Position, usize, bool)>), EngineError> {
    let (plan, analysis, limits) = (ctx.plan, ctx.analysis, ctx.limits);
    let owner = from.value;
    let Start {
        mut args,
        mut style,
        size,
        mut next_url,
        mut first,
    } = start(
        plan,
        analysis,
        &ctx.learned,
        limits,
        ctx.ahead.upstream(),
        value,
        from,
    )?;
    let walking = !matches!(style, Style::Single);
    ctx.ahead.known(!walking);
    let from_start = starts_at_first_page(analysis, &plan.upstream_args);
    // P12: the walk counts its pages from the API's own first one (no page, offset or
    // cursor of the agent's, not resumed mid-way), so it knows each page's place among the
    // pages the API counts
    let counted = from.at == Position::Start
        && from_start
        && analysis
            .page_number
            .as_ref()
            .is_none_or(|p| get_arg(&plan.upstream_args, p).is_none());
    let mut col = Collection::new(value.cloned());
    let mut seen_cursors: HashSet<String> = HashSet::new();
    let mut seen_pages: HashSet<u64> = HashSet::new();
    let mut previous_page: Option<u64> = None;
    let mut col_slot: Option<Slot> = None;
    // P9: where the first page's last-page link points, the step later pages were
    // expected at (set once they are), and whether they were looked for
    let mut last_at: Option<u64> = None;
    let mut guessed_step: Option<u64> = None;
    let mut looked_ahead = false;
    // P11: answers kept aside while an earlier page is asked for
    let mut held: Vec<Held> = Vec::new();
    // a next link came with an earlier page: the API links its pages (P2, P5)
    let mut linked = false;
    // P14: a page shorter than asked that the API said was not its last: the size the API
    // caps silently, once the next page confirms it
    let mut short_of_more: Option<u64> = None;
    // P10: rows of the first page already kept by the call before
    let mut skip = from.skip;
    col.rows = from.rows;
    col.total = from.total;
    loop {
        let sent = sent_page(&style, &args);
        let kept = held
            .iter()
            .position(|h| next_url.is_none() && h.args == args);
        let (status, headers, mut page, replayed) = if let Some(i) = kept {
            let h = held.swap_remove(i);
            (h.status, h.headers, h.page, true)
        } else {
            let req = UpstreamRequest {
                args: args.clone(),
                next_url: next_url.clone(),
                timeout: Duration::ZERO,
                page: col.pages.saturating_add(1),
                attempt: 1,
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
                    // P11: a page refused is evidence of where the pages start
                    if let Some(to) = first.refused(&f, sent) {
                        ctx.ahead.known(false);
                        go_to(&mut style, &mut args, to);
                        continue;
                    }
                    if col.pages == 0 {
                        // P11: a bound cut the check of an empty first page; the empty
                        // page stands for the collection so far (it adds no rows), and a
                        // resumed walk starts again
                        if let Some(i) = held.iter().position(|h| h.page.items.is_empty()) {
                            let h = held.swap_remove(i);
                            col.pages = 1;
                            col_slot.clone_from(&h.page.slot);
                            if ctx.slot.is_none() {
                                ctx.slot.clone_from(&h.page.slot);
                            }
                            if ctx.first.is_none() {
                                ctx.first = Some(h.page);
                            }
                        }
                    }
                    col.stop = f.stop;
                    col.likely_more = true;
                    col.failure = Some(f);
                    break;
                }
            };
            let page = ctx.ahead.upstream().parse_page(resp.body).await;
            (resp.status, resp.headers, page, false)
        };
        // G7: rows are where the response schema documents them, and a body that leaves
        // its list out (or is a list's envelope without it) is an empty page, never a row
        if let Some(path) = &analysis.response.items {
            page.documented(path);
        }
        let first_envelope = ctx
            .first
            .as_ref()
            .filter(|f| matches!(f.slot, Some(Slot::Key(_))))
            .and_then(|f| Some((&f.frame, f.slot.as_ref()?)));
        let bare = page.slot.is_none() && page.bare(first_envelope);
        let expected = if col.pages == 0 {
            ctx.slot.clone()
        } else {
            col_slot.clone()
        };
        if let (true, Some(Slot::Key(path))) = (bare, &expected) {
            // the envelope without its list, read where the collection's rows were
            page.documented(path);
        }
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
                    tool_error: false,
                });
                break;
            }
        }
        // A response without an item array is a record: its fields are not paging signals
        // (an invoice's `total` is not a row count).
        let sig = if page.slot.is_some() || bare {
            signals::read_with(&page.frame, &headers, &analysis.response)
        } else {
            Signals::default()
        };
        if !replayed && page.slot.is_none() && !bare && plan.uses_reserved && !page.frame.is_null()
        {
            // A single record (no list in it, or a text body) is one row of the envelope,
            // e.g. a `_for_each` over the ids of a get-one endpoint.
            page.items.push(Item::from_value(&page.frame));
        }
        let n = page.items.len();
        let fingerprint = fingerprint(&page.items);
        // P11: whether this answer is a page of the walk, and which
        let step = match &style {
            Style::Page(p, _) => {
                let answer = Answer {
                    sent,
                    rows: n,
                    fingerprint,
                    sig: &sig,
                    frame: &page.frame,
                };
                Some(first.judge(&answer, p))
            }
            _ => None,
        };
        if let Some(step) = step {
            match step {
                Step::Take(None) => {}
                Step::Take(Some(at)) => {
                    if let Style::Page(_, number) = &mut style {
                        *number = at;
                    }
                }
                Step::Skip(to) => {
                    ctx.ahead.known(false);
                    go_to(&mut style, &mut args, to);
                    continue;
                }
                Step::Hold(_) | Step::HoldBare => {
                    ctx.ahead.known(false);
                    held.push(Held {
                        args: args.clone(),
                        status,
                        headers,
                        page,
                    });
                    match step {
                        Step::Hold(to) => go_to(&mut style, &mut args, to),
                        _ => {
                            if let Style::Page(p, _) = &style {
                                remove_arg(&mut args, p);
                            }
                        }
                    }
                    continue;
                }
            }
        }
        col.pages += 1;
        if col.pages == 1 {
            col_slot.clone_from(&page.slot);
            if ctx.slot.is_none() {
                ctx.slot.clone_from(&page.slot);
            }
        }
        if col.pages == 1 {
            col.total = sig.total.or(col.total);
            if sig.total.is_some() {
                col.total_key.clone_from(&sig.total_key);
            }
            let per_page = analysis.page_size.as_ref().zip(size);
            last_at = sig
                .last_url
                .as_deref()
                .and_then(|u| last_position(&style, per_page, u));
        }
        // P12: the API's page count against this page's place: pages it counts past this
        // one are "more" (P7, P2), an end before them is no complete walk; it never ends a
        // walk by itself (a count lower than the set would drop rows silently)
        let at = page_at(
            analysis,
            &style,
            &args,
            &page.frame,
            counted.then_some(col.pages),
        );
        let pages_more = sig.pages_remain(at) == Some(true);
        let pages_left = at
            .nth
            .zip(sig.total_pages)
            .map(|(k, t)| t.saturating_sub(k));
        // P8: the API hands the next position back under the cursor parameter's own name
        // (Airtable's string `offset`); the value just sent, handed back, is an echo.
        let echo = analysis
            .cursor
            .as_ref()
            .filter(|_| page.slot.is_some())
            .and_then(|c| {
                signals::echoed(&page.frame, c.wire()).filter(|t| {
                    let sent = get_arg(&args, c).map(|v| match v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    });
                    sent.as_deref() != Some(t)
                })
            });
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
        let seen = Seen {
            walking,
            style: &style,
            size,
            n,
            fetched: col.rows,
        };
        learn_page(ctx, &seen, &sig, &mut short_of_more);
        let fetched = col.rows;
        let more = sig.says_more(fetched)
            || echo.is_some()
            || col.total.is_some_and(|t| (fetched as u64) < t)
            || pages_more;
        // P2, P5: an API that links its next page ends where a page links none, unless
        // something else says more (a flag, a token, a total not reached)
        let unlinked = linked && sig.next_url.is_none() && !more;
        linked |= sig.next_url.is_some();
        let link_only = matches!(style, Style::Link);
        match &mut style {
            Style::Single => {
                // P15: a next link on the provider's origin, on a tool with no way to page
                // in its schema: walkable by its links from now on
                if !analysis.paginated()
                    && sig
                        .next_url
                        .as_deref()
                        .is_some_and(|u| ctx.ahead.upstream().follow(u).is_some())
                {
                    ctx.learned.response_paging = true;
                    ctx.learned.next_at = sig.next_from.map(|f| f.said().to_owned());
                }
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
                    col.finish_end((more && n > 0 && sig.has_more != Some(false)) || pages_more);
                    break;
                }
                *number += 1;
                set_arg(&mut args, &p.name, p.in_body, p.number(page_no(*number)));
            }
            Style::Offset(p, at) => {
                if unlinked || end_of_numbered(n, size, &sig, more, col.total, fetched) {
                    col.finish_end((more && n > 0 && sig.has_more != Some(false)) || pages_more);
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
            Style::Cursor(_) | Style::Link => {
                // P12: a walk by next links alone has no cursor parameter
                let p = analysis.cursor.as_ref().filter(|_| !link_only);
                // An explicit "no more", or an empty page nobody claims is followed by more,
                // ends the walk even if a cursor came along (some APIs always send one).
                if sig.has_more == Some(false) || (n == 0 && sig.has_more != Some(true)) {
                    col.finish_end(col.total.is_some_and(|t| (fetched as u64) < t) || pages_more);
                    break;
                }
                let next = if let Some(url) = &sig.next_url {
                    match ctx.ahead.upstream().follow(url) {
                        Some(abs) => {
                            col.weakest(sig.next_from);
                            Some((abs, true))
                        }
                        None => {
                            col.stop = StopReason::OffOrigin;
                            col.likely_more = true;
                            col.off_origin_url = Some(url.clone());
                            break;
                        }
                    }
                } else if let (Some(t), Some(_)) = (&sig.next_token, p) {
                    col.weakest(sig.next_from);
                    Some((t.clone(), false))
                } else if let Some(t) = echo.clone() {
                    col.weakest(Some(Source::Listed));
                    Some((t, false))
                } else if sig.has_more == Some(true)
                    && p.is_some_and(|p| {
                        LAST_ID_CURSORS.contains(&normalize(p.wire()).as_str())
                            || LAST_ID_CURSORS.contains(&normalize(&p.name).as_str())
                    })
                {
                    col.weakest(Some(Source::Listed));
                    page_last_id.clone().map(|id| (id, false))
                } else {
                    None
                };
                let Some((next, is_url)) = next else {
                    col.finish_end(
                        sig.has_more == Some(true)
                            || col.total.is_some_and(|t| (fetched as u64) < t)
                            || pages_more,
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
                } else if let Some(p) = p {
                    next_url = None;
                    // a cursor declared numeric (Litestar's) is sent back as a number
                    let numeric = matches!(p.ty.as_deref(), Some("integer" | "number"));
                    let value = match next.parse::<u64>() {
                        Ok(n) if numeric => p.number(n),
                        _ => Value::String(next),
                    };
                    set_arg(&mut args, &p.name, p.in_body, value);
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
        if !looked_ahead && !first.settling() {
            // once the first page came (P11: and the walk knows it was the first)
            looked_ahead = true;
            let extent = Extent {
                total: col.total,
                last: last_at,
                pages_left,
            };
            let at = Here {
                style: &style,
                args: &args,
                n,
                fetched: col.rows,
                pages: col.pages,
            };
            guessed_step = expect_pages(ctx, owner, &at, extent, &held);
        }
    }
    // P14: where the pages start, as this walk established it (or dropped, when its
    // answers contradicted what was known)
    if let Some(b) = first.established() {
        ctx.learned.page_base = Some(b);
    } else if first.contradicted() {
        ctx.learned.page_base = None;
    }
    col.first_page_unknown = from.first_page_unknown || first.unknown(col.stop);
    let unsure = from.first_page_unknown || first.unsure_resumed(col.stop);
    let (at, skip) = match first.resume_from() {
        Some(at) => (at, first.resume_skip(skip)),
        None => (position(&style, &next_url, &args), skip),
    };
    let cut = resume::resumable(col.stop).then_some((at, skip, unsure));
    Ok((col, cut))
}

/// P14: what one merged page of a walk tells about the tool's paging — a size the API caps
/// silently (a page shorter than asked, not the last: confirmed by rows on the next page;
/// dropped when a page gives more), and where the next position and the total live.
fn learn_page<U, P, C>(
    ctx: &mut Ctx<'_, U, P, C>,
    seen: &Seen<'_>,
    sig: &Signals,
    short_of_more: &mut Option<u64>,
) {
    let Seen {
        walking,
        style,
        size,
        n,
        fetched,
    } = *seen;
    if !walking {
        return;
    }
    let n = n as u64;
    if ctx.learned.size_cap.is_some_and(|c| n > c) {
        ctx.learned.size_cap = None;
    }
    if let Some(cap) = short_of_more.take() {
        if n > 0 && n <= cap {
            ctx.learned.size_cap = Some(cap);
        }
    }
    let numbered = matches!(style, Style::Page(..) | Style::Offset(..));
    if numbered && n > 0 && size.is_some_and(|s| n < s) && sig.says_more(fetched) {
        *short_of_more = Some(n);
    }
    if let Some(f) = sig.next_from {
        ctx.learned.next_at = Some(f.said().to_owned());
    }
    if sig.total.is_some() {
        ctx.learned.total_at.clone_from(&sig.total_key);
    }
}

/// One merged page, as [`learn_page`] reads it: whether the call walks, how it pages, the
/// size asked for, the page's rows and the rows so far.
#[derive(Clone, Copy)]
struct Seen<'a> {
    walking: bool,
    style: &'a Style,
    size: Option<u64>,
    n: usize,
    fetched: usize,
}

/// Where a walk is after a page: how it pages, its next request, that page's rows, the
/// rows and pages so far.
struct Here<'a> {
    style: &'a Style,
    args: &'a Map<String, Value>,
    n: usize,
    fetched: usize,
    pages: u32,
}

/// P9: the later pages the first page's evidence ([`Extent`]) shows, expected of the
/// requests made ahead as far as the page bound and the item bound reach (P11: never a
/// page `held` already). Returns the step when pages were expected.
fn expect_pages<U: Upstream + Sync, P, C>(
    ctx: &mut Ctx<'_, U, P, C>,
    owner: usize,
    at: &Here<'_>,
    extent: Extent,
    held: &[Held],
) -> Option<u64> {
    if !ctx.ahead.parallel() {
        return None;
    }
    let bounds = ahead_guess::Bounds {
        pages: u64::from(ctx.limits.pages_per_collection.saturating_sub(at.pages)),
        items: ctx.limits.items.saturating_sub(ctx.budget.items) as u64,
    };
    let (step, later) =
        ahead_guess::later_pages(at.style, at.args, at.n, at.fetched, &extent, bounds)?;
    ctx.ahead.known(true);
    for next in later
        .into_iter()
        .filter(|a| !held.iter().any(|h| h.args == *a))
    {
        ctx.ahead.expect(owner, true, next, None);
    }
    Some(step)
}

/// P11: an answer kept aside while an earlier page is asked for, used when the walk asks
/// for its page (counted once, as the request it was).
struct Held {
    args: Map<String, Value>,
    status: u16,
    headers: Vec<(String, String)>,
    page: Page,
}

/// P12: the place of the page just merged among the pages the API counts: `nth` when the
/// walk counted its pages from the API's first one, else its number (echoed, or the one
/// sent) and the first page number the schema states firmly.
fn page_at(
    analysis: &ToolAnalysis,
    style: &Style,
    args: &Map<String, Value>,
    frame: &Value,
    nth: Option<u32>,
) -> PageAt {
    let param = analysis.page_number.as_ref();
    let echo = signals::page_echo(frame, param.map_or("page", |p| p.wire())).or_else(|| {
        param
            .filter(|p| p.api_name.is_some())
            .and_then(|p| signals::page_echo(frame, &p.name))
    });
    let sent = match style {
        Style::Page(_, number) => Some(*number),
        _ => param.and_then(|p| match get_arg(args, p)? {
            Value::Number(n) => n.as_i64(),
            Value::String(s) => s.parse().ok(),
            _ => None,
        }),
    };
    PageAt {
        nth: nth.map(u64::from),
        number: echo.or(sent),
        base: param
            .map(schema_base)
            .filter(|b| b.strength == Strength::Firm)
            .map(|b| b.page),
    }
}

/// P11: the page number a page-number walk's next request sends (`None`: it leaves the
/// parameter out).
fn sent_page(style: &Style, args: &Map<String, Value>) -> Option<i64> {
    match style {
        Style::Page(p, _) => get_arg(args, p).and_then(|v| match v {
            Value::Number(n) => n.as_i64(),
            Value::String(s) => s.parse().ok(),
            _ => None,
        }),
        _ => None,
    }
}

/// P11: the walk asks for page `to` next.
fn go_to(style: &mut Style, args: &mut Map<String, Value>, to: i64) {
    if let Style::Page(p, number) = style {
        *number = to;
        set_arg(args, &p.name, p.in_body, p.number(page_no(to)));
    }
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
