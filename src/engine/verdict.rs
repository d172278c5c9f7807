//! P4: turning what each collection went through into one honest verdict — complete or
//! not, likely more rows or not, the first bound hit, and a note the model can repeat to
//! the user (a capped walk is partial; counts over it are not totals).

use crate::engine::analysis::ToolAnalysis;
use crate::engine::fetch::Failed;
use crate::engine::limits::Limits;
use crate::engine::outcome::{StopReason, Verdict};
use crate::engine::plan::{CallPlan, ForEachError};
use serde_json::Value;

/// How one collection (one `_for_each` value, or the whole call) ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Collection {
    pub value: Option<Value>,
    pub pages: u32,
    pub rows: usize,
    pub stop: StopReason,
    pub likely_more: bool,
    pub total: Option<u64>,
    pub failure: Option<Failed>,
    /// One page fetched on purpose (no `_all_pages`).
    pub single: bool,
    /// For a single page: the response itself shows it was the last one.
    pub known_end: bool,
    /// For a loop: the repeated page was the one just before (the API is stuck at its end).
    pub repeat_of_previous: bool,
    pub off_origin_url: Option<String>,
}

impl Collection {
    pub fn new(value: Option<Value>) -> Self {
        Self {
            value,
            pages: 0,
            rows: 0,
            stop: StopReason::End,
            likely_more: false,
            total: None,
            failure: None,
            single: false,
            known_end: false,
            repeat_of_previous: false,
            off_origin_url: None,
        }
    }

    /// The walk reached the end of what the API offers; `more_claimed` when the API
    /// still says there is more (an empty page with `has_more`, a total not reached).
    pub fn finish_end(&mut self, more_claimed: bool) {
        self.stop = StopReason::End;
        self.likely_more = more_claimed;
    }

    fn complete(&self, paginated: bool) -> bool {
        match self.stop {
            StopReason::End if self.single => !paginated || (self.known_end && !self.likely_more),
            StopReason::End => {
                !self.likely_more && self.total.is_none_or(|t| self.rows as u64 >= t)
            }
            _ => false,
        }
    }
}

pub fn combine(
    cols: &[Collection],
    unfetched: &[Value],
    errors: &[ForEachError],
    plan: &CallPlan,
    analysis: &ToolAnalysis,
    limits: &Limits,
    rows: usize,
) -> Verdict {
    let paginated = analysis.paginated();
    let fetched: Vec<&Collection> = cols.iter().filter(|c| c.pages > 0).collect();
    let complete_cols = fetched.iter().all(|c| c.complete(paginated));
    let paging_complete = complete_cols && unfetched.is_empty() && errors.is_empty();
    let likely_more_rows =
        fetched.iter().any(|c| c.likely_more) || !unfetched.is_empty() || !errors.is_empty();
    let first_stop = cols.iter().map(|c| c.stop).find(|s| *s != StopReason::End);
    let mut stopped_by = Some(first_stop.unwrap_or(StopReason::End));
    if !plan.all_pages && first_stop.is_none() && !complete_cols {
        // One page was asked for; there was no walk to stop.
        stopped_by = None;
    }
    let total = if !fetched.is_empty() && fetched.iter().all(|c| c.total.is_some()) {
        let sum: u64 = fetched.iter().filter_map(|c| c.total).sum();
        // A "total" below what we hold was a per-page count, not a total.
        (sum >= rows as u64 || fetched.iter().any(|c| c.single)).then_some(sum)
    } else {
        None
    };
    let mut note = headline(
        cols,
        stopped_by,
        complete_cols,
        paginated,
        limits,
        rows,
        total,
    );
    if let Some(t) = total.filter(|t| (rows as u64) < *t) {
        note.push_str(&format!(
            " Fetched {rows} of the {t} rows the API reported ({} missing).",
            t - rows as u64
        ));
    }
    if !errors.is_empty() {
        let n = plan
            .for_each
            .as_ref()
            .map_or(0, |f| f.values.len() + f.rejected.len());
        note.push_str(&format!(
            " {} of {n} `_for_each` values failed; see `_forEachErrors`.",
            errors.len()
        ));
    }
    if !unfetched.is_empty() {
        let list: Vec<String> = unfetched.iter().take(10).map(Value::to_string).collect();
        note.push_str(&format!(
            " {} `_for_each` values were not fetched because the budget ran out: {}{}.",
            unfetched.len(),
            list.join(", "),
            if unfetched.len() > 10 { ", …" } else { "" }
        ));
    }
    if !paging_complete && (stopped_by.is_some() || likely_more_rows) {
        note.push_str(
            " Report this as a partial set: counts, sums and averages over it are not totals. \
             To get a complete set, narrow the request with the API's own filters (or fewer `_for_each` values).",
        );
    }
    Verdict {
        paging_complete,
        likely_more_rows,
        stopped_by,
        note: note.trim().to_owned(),
        total,
    }
}

fn headline(
    cols: &[Collection],
    stopped_by: Option<StopReason>,
    complete: bool,
    paginated: bool,
    limits: &Limits,
    rows: usize,
    total: Option<u64>,
) -> String {
    let first_hit = |s: StopReason| cols.iter().find(|c| c.stop == s);
    let at_value = |c: Option<&Collection>| match c.and_then(|c| c.value.as_ref()) {
        Some(v) => format!(" (while fetching {v})"),
        None => String::new(),
    };
    match stopped_by {
        None => {
            let announced = match total {
                Some(t) if t > rows as u64 => format!("; the API reports {t} in all"),
                _ => String::new(),
            };
            let more = cols.iter().any(|c| c.likely_more);
            if more {
                format!(
                    "Only one page was fetched ({rows} rows{announced}) and the API says there are more. \
                     This tool is paginated: call it again with `_all_pages: true` to get every page before counting or summarising."
                )
            } else {
                format!(
                    "Only one page was fetched ({rows} rows). This tool is paginated, so more rows may exist: \
                     `_all_pages: true` fetches every page."
                )
            }
        }
        Some(StopReason::End) if complete && cols.iter().all(|c| c.single) && !paginated => {
            format!("Complete result: {rows} rows.")
        }
        Some(StopReason::End) if complete && cols.iter().all(|c| c.single) => {
            format!("This page holds every row: {rows} rows.")
        }
        Some(StopReason::End) if complete => {
            let pages: u32 = cols.iter().map(|c| c.pages).sum();
            format!("Every page was fetched: {rows} rows from {pages} pages.")
        }
        Some(StopReason::End) => format!(
            "The API stopped returning rows while still reporting more; {rows} rows were fetched."
        ),
        Some(StopReason::Pages) => format!(
            "Stopped at the limit of {} pages per collection{}; more rows are likely.",
            limits.pages_per_collection,
            at_value(first_hit(StopReason::Pages))
        ),
        Some(StopReason::Requests) => format!(
            "Stopped at the limit of {} upstream requests for one call; more rows are likely.",
            limits.requests
        ),
        Some(StopReason::Items) => format!(
            "Stopped at the limit of {} rows; more rows are likely.",
            limits.items
        ),
        Some(StopReason::Bytes) => format!(
            "Stopped after {} MB of upstream data (the limit); more rows are likely.",
            limits.bytes / (1024 * 1024)
        ),
        Some(StopReason::Time) => format!(
            "Stopped at the time limit of {} s; more rows are likely.",
            limits.wall.as_secs()
        ),
        Some(StopReason::Loop) => {
            let c = first_hit(StopReason::Loop);
            let all = match (total, c.is_some_and(|c| c.repeat_of_previous)) {
                (Some(t), _) if rows as u64 >= t => "every row the API reported was fetched",
                (Some(_), _) => "some rows were not fetched",
                (None, true) => "every distinct row seems to have been fetched",
                (None, false) => "some rows may not have been fetched",
            };
            format!(
                "The API returned a page or cursor it had already returned{}, so the walk stopped without repeating rows; {all}.",
                at_value(c)
            )
        }
        Some(StopReason::OffOrigin) => {
            let c = first_hit(StopReason::OffOrigin);
            let url = c.and_then(|c| c.off_origin_url.clone()).unwrap_or_default();
            format!(
                "The API's next-page link ({url}) points outside the provider, so it was not followed; more rows are likely."
            )
        }
        Some(StopReason::UpstreamError) => {
            let c = first_hit(StopReason::UpstreamError);
            let why = c
                .and_then(|c| c.failure.as_ref())
                .map(|f| match f.status {
                    Some(s) => format!("HTTP {s}: {}", f.message),
                    None => f.message.clone(),
                })
                .unwrap_or_default();
            match c {
                Some(c) if c.pages == 0 => format!(
                    "The request for {} failed ({why}), so its rows are missing; the rows of the other values are here.",
                    c.value.as_ref().map_or_else(|| "this call".to_owned(), Value::to_string)
                ),
                _ => format!(
                    "A page request failed{} ({why}); the rows fetched before it are kept but the set is incomplete.",
                    at_value(c)
                ),
            }
        }
    }
}
