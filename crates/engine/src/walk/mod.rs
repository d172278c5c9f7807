//! P2–P5, E1–E5, S1: the walk. One collection per `_for_each` value (or one collection),
//! each fetched page by page (page number, offset or cursor), under one shared budget.
//! Every way a walk can end has a name, and the verdict says whether the rows are all of
//! them.
//!
//! This module owns the call: which values are walked (P10: only what a resumed call left),
//! the first requests started ahead for later values (P9), when the shared budget halts the
//! values still to come, how a value's failure becomes a `_for_each` error, and the
//! [`Outcome`] with its verdict and resume point. The submodule `collection` owns one
//! collection's page loop.

pub(crate) mod ahead;
pub(crate) mod ahead_guess;
pub(crate) mod first_page;
pub(crate) mod paging;
pub mod request;
pub mod resume;

mod collection;

use crate::analysis::ToolAnalysis;
use crate::document::item::Item;
use crate::document::{Page, Slot};
use crate::error::EngineError;
use crate::learned::Learned;
use crate::limits::Limits;
use crate::outcome::verdict::{self, Collection};
use crate::outcome::{Outcome, StopReason, ValueCount};
use crate::plan::{CallPlan, ForEachError};
use crate::ports::{progress_due, Clock, Progress, ProgressSink, Upstream};
use crate::resume::{Pending, ResumePoint};
use crate::walk::ahead::Ahead;
use crate::walk::paging::{stale, start};
use crate::walk::request::{Budget, Failed};
use collection::collection;
use serde_json::Value;

/// What one call's collections share: the plan, the budget, the rows kept so far, and the
/// first page (whose frame the outcome keeps).
struct Ctx<'a, U, P, C> {
    plan: &'a CallPlan,
    analysis: &'a ToolAnalysis,
    /// Every request goes through here (P9: some are started ahead).
    ahead: Ahead<'a, U>,
    progress: &'a P,
    clock: &'a C,
    limits: &'a Limits,
    budget: Budget,
    last_progress: u64,
    items: Vec<Item>,
    first: Option<Page>,
    /// Where the first page with an item array had it: later pages and values are read
    /// the same way (G7).
    slot: Option<Slot>,
    /// P14: what the tool's walks know of its paging, grown by each value's walk.
    learned: Learned,
}

/// Runs a call: every collection, every page when asked, within `limits`.
pub async fn run<U: Upstream + Sync, P: ProgressSink, C: Clock>(
    plan: &CallPlan,
    analysis: &ToolAnalysis,
    upstream: &U,
    progress: &P,
    clock: &C,
    limits: &Limits,
) -> Result<Outcome, EngineError> {
    let started = clock.now_ms();
    let mut ctx = Ctx {
        plan,
        analysis,
        // a later value's walk takes one request, or with `_all_pages` up to the page bound
        ahead: Ahead::new(
            upstream,
            limits,
            if plan.all_pages {
                limits.pages_per_collection
            } else {
                1
            },
        ),
        progress,
        clock,
        limits,
        budget: Budget::new(started),
        last_progress: started,
        items: Vec::new(),
        first: None,
        slot: None,
        learned: analysis.learned.clone(),
    };
    // P10: a resumed call walks only what the call before left, from where it stopped
    let work: Vec<Pending> = match &plan.resume {
        Some(r) => r.point.pending.clone(),
        None => (0..plan.for_each.as_ref().map_or(1, |f| f.values.len()))
            .map(Pending::fresh)
            .collect(),
    };
    let mut values: Vec<(Option<Value>, Pending)> = Vec::with_capacity(work.len());
    for p in work {
        let value = match &plan.for_each {
            Some(f) => Some(f.values.get(p.value).cloned().ok_or_else(stale)?),
            None => None,
        };
        values.push((value, p));
    }
    let mut errors: Vec<ForEachError> = match &plan.resume {
        Some(r) => r.errors_before.clone(),
        None => plan
            .for_each
            .iter()
            .flat_map(|f| f.rejected.clone())
            .collect(),
    };
    if values.is_empty() {
        return Err(EngineError::invalid(format!(
            "No `_for_each` value could be used: {}",
            describe(&errors)
        )));
    }
    // E6: a fan-out by reference walks its per-call share; the rest wait for `_continue`
    let share = plan.for_each.as_ref().and_then(|f| f.per_call);
    let deferred = match share {
        Some(n) if values.len() > n => values.split_off(n),
        _ => Vec::new(),
    };
    let mut cols: Vec<Collection> = Vec::new();
    let mut unfetched: Vec<Value> = Vec::new();
    let mut halted: Option<StopReason> = None;
    // P10: what is left for a resumed call, in walk order
    let mut left: Vec<Pending> = Vec::new();
    // P9, E5: the first request of every later value may start while earlier ones walk —
    // once the first request is known (P14: not while a value still asks where the pages
    // start: the later values start where it found them, and pay no probe of their own)
    let mut ahead_started = !ctx.ahead.parallel();
    let later: Vec<(Option<Value>, Pending)> = values.iter().skip(1).cloned().collect();
    for (i, (value, pending)) in values.into_iter().enumerate() {
        if !ahead_started {
            let probes = start(
                plan,
                analysis,
                &ctx.learned,
                limits,
                upstream,
                value.as_ref(),
                &pending,
            )
            .is_ok_and(|s| s.first.probes());
            if !probes || i > 0 {
                ahead_started = true;
                for (value, pending) in later.iter().skip(i) {
                    if let Ok(s) = start(
                        plan,
                        analysis,
                        &ctx.learned,
                        limits,
                        upstream,
                        value.as_ref(),
                        pending,
                    ) {
                        ctx.ahead.expect(pending.value, false, s.args, s.next_url);
                    }
                }
            }
        }
        if let Some(stop) = halted.or_else(|| ctx.budget.exhausted(limits, clock)) {
            halted = Some(stop);
            unfetched.extend(value);
            left.push(pending);
            continue;
        }
        let walked = collection(&mut ctx, value.as_ref(), &pending).await;
        ctx.ahead.forget(pending.value);
        let (col, cut) = walked?;
        if let Some(f) = &col.failure {
            if col.pages == 0 && f.stop != StopReason::UpstreamError {
                // Refused by the budget before anything came: not a failure of the value.
                halted = Some(f.stop);
                unfetched.extend(value);
                left.push(pending);
                continue;
            }
        }
        left.extend(cut.map(|(at, skip, first_page_unknown)| Pending {
            value: pending.value,
            at,
            skip,
            rows: col.rows,
            total: col.total,
            first_page_unknown,
        }));
        // A budget that ran out mid-walk is a bound (named in the verdict), not an error.
        if let Some(f) = col
            .failure
            .as_ref()
            .filter(|f| f.stop == StopReason::UpstreamError)
        {
            // the tool's own failure says so, as the single-call detail does
            let message = if f.tool_error {
                format!("the tool reported an error: {}", f.message)
            } else {
                f.message.clone()
            };
            let error = if col.pages == 0 {
                message
            } else {
                format!(
                    "page {} failed: {message}; the rows of earlier pages are kept",
                    col.pages + 1,
                )
            };
            if let Some(v) = &value {
                errors.push(ForEachError {
                    value: v.clone(),
                    status: f.status,
                    error,
                });
            }
        }
        if matches!(
            col.stop,
            StopReason::Requests
                | StopReason::Bytes
                | StopReason::Items
                | StopReason::Time
                | StopReason::Cancelled
        ) {
            halted = Some(col.stop);
        }
        cols.push(col);
    }
    if !deferred.is_empty() {
        halted = halted.or(Some(StopReason::Values));
        for (value, pending) in deferred {
            unfetched.extend(value);
            left.push(pending);
        }
    }
    let fetched_any = cols.iter().any(|c| c.pages > 0);
    if !fetched_any && halted == Some(StopReason::Cancelled) {
        // M3: nothing came before the cancel; said as it is, not as an unreachable API
        return Err(EngineError::Upstream {
            status: None,
            detail: "The call was cancelled before any page was fetched.".to_owned(),
        });
    }
    if !fetched_any {
        let status = cols
            .iter()
            .find_map(|c| c.failure.as_ref().and_then(|f| f.status));
        let detail = match &plan.for_each {
            None => cols
                .iter()
                .find_map(|c| c.failure.as_ref())
                .map(upstream_detail)
                .unwrap_or_else(|| "The upstream API could not be reached.".to_owned()),
            Some(_) => format!("Every `_for_each` value failed: {}", describe(&errors)),
        };
        return Err(EngineError::Upstream { status, detail });
    }
    // P15: a response that linked its next page makes the tool walkable from now on; the
    // call that saw it says how to get the rest
    let now_walkable;
    let judged = if ctx.learned.response_paging && !analysis.learned.response_paging {
        now_walkable = analysis.with_learned(ctx.learned.clone());
        &now_walkable
    } else {
        analysis
    };
    let mut verdict = verdict::combine(
        &cols,
        &unfetched,
        halted.filter(|_| !unfetched.is_empty()),
        &errors,
        plan,
        judged,
        limits,
        ctx.items.len() + plan.resume.as_ref().map_or(0, |r| r.rows_before),
    );
    if let Some(f) = plan.for_each.as_ref().filter(|f| f.per_call.is_some()) {
        let total = f.values.len() + f.rejected.len();
        let mut open: Vec<usize> = left.iter().map(|p| p.value).collect();
        open.sort_unstable();
        open.dedup();
        verdict.values = Some(ValueCount {
            total,
            done: total.saturating_sub(open.len()),
            left: open.len(),
        });
    }
    let first = ctx.first.take().unwrap_or_else(|| Page::parse(b""));
    Ok(Outcome {
        envelope: plan.uses_reserved,
        frame: first.frame,
        slot: first.slot,
        json: first.json,
        items: ctx.items,
        verdict,
        for_each_errors: errors,
        requests: ctx.budget.requests,
        pages: cols.iter().map(|c| c.pages).sum(),
        bytes: ctx.budget.bytes,
        resume: (!left.is_empty()).then_some(ResumePoint { pending: left }),
        learned: ctx.learned.explained(),
    })
}

fn upstream_detail(f: &Failed) -> String {
    if f.tool_error {
        return format!("The tool reported an error: {}", f.message);
    }
    match f.status {
        Some(s) => format!("The upstream API answered HTTP {s}: {}", f.message),
        None => format!("The upstream API could not be reached: {}", f.message),
    }
}

fn describe(errors: &[ForEachError]) -> String {
    let shown: Vec<String> = errors
        .iter()
        .take(5)
        .map(|e| format!("{} → {}", e.value, e.error))
        .collect();
    let more = errors.len().saturating_sub(5);
    if more > 0 {
        format!("{}; and {more} more.", shown.join("; "))
    } else {
        format!("{}.", shown.join("; "))
    }
}

/// S1: at most one report per `progress_interval`.
fn report<U, P: ProgressSink, C: Clock>(
    ctx: &mut Ctx<'_, U, P, C>,
    page: u32,
    value: Option<&Value>,
) {
    let now = ctx.clock.now_ms();
    if !progress_due(ctx.last_progress, now, ctx.limits.progress_interval) {
        return;
    }
    ctx.last_progress = now;
    ctx.progress.progress(&Progress {
        page,
        pages_max: ctx.limits.pages_per_collection,
        items: ctx.budget.items,
        requests: ctx.budget.requests,
        requests_max: ctx.limits.requests,
        elapsed_ms: now.saturating_sub(ctx.budget.start_ms),
        value: value.cloned(),
        upstream: None,
    });
}
