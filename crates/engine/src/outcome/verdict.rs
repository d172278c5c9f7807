//! P4: turning what each collection went through into one honest verdict — complete or
//! not, likely more rows or not, the first bound hit, and a note the model can repeat to
//! the user (a capped walk is partial; counts over it are not totals).

use crate::analysis::signals::Source;
use crate::analysis::ToolAnalysis;
use crate::limits::Limits;
use crate::outcome::{StopReason, Verdict};
use crate::plan::{CallPlan, ForEachError};
use serde_json::Value;

/// A request that produced no usable page.
#[derive(Debug, Clone, PartialEq)]
pub struct Failed {
    /// Which bound or error ended it.
    pub stop: StopReason,
    pub status: Option<u16>,
    pub message: String,
    /// The tool's own failure ([`crate::ports::UpstreamFailure::tool_error`]).
    pub tool_error: bool,
}

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
    /// P11: the walk could not establish which page number is the API's first page.
    pub first_page_unknown: bool,
    /// P12: the least sure evidence a next position the walk followed was read from.
    pub followed: Option<Source>,
    /// G7: the key the response schema documents as the total, when `total` was read
    /// there (the note names it when the rows disagree).
    pub total_key: Option<String>,
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
            first_page_unknown: false,
            followed: None,
            total_key: None,
        }
    }

    /// P12: the walk followed a next position read from `from`.
    pub fn weakest(&mut self, from: Option<Source>) {
        if let Some(f) = from {
            self.followed = Some(self.followed.map_or(f, |g| g.min(f)));
        }
    }

    /// The walk reached the end of what the API offers; `more_claimed` when the API
    /// still says there is more (an empty page with `has_more`, a total not reached).
    pub fn finish_end(&mut self, more_claimed: bool) {
        self.stop = StopReason::End;
        self.likely_more = more_claimed;
    }

    /// How this collection ended, as a row of the truth table.
    pub fn ending(&self, paginated: bool) -> Ending {
        let short = self.total.is_some_and(|t| (self.rows as u64) < t);
        match self.stop {
            StopReason::End if self.single => {
                if self.likely_more {
                    Ending::PageOfMore
                } else if !paginated {
                    Ending::Whole
                } else if self.known_end {
                    Ending::LastPage
                } else {
                    Ending::PageUnproven
                }
            }
            StopReason::End if self.first_page_unknown => Ending::FirstPageUnknown,
            StopReason::End if self.likely_more || short => Ending::EndedShort,
            StopReason::End => Ending::Walked,
            StopReason::Loop if self.likely_more => Ending::LoopOpen,
            StopReason::Loop => Ending::LoopSettled,
            StopReason::OffOrigin => Ending::OffOrigin,
            StopReason::UpstreamError => Ending::UpstreamError,
            bound => Ending::Bound(bound),
        }
    }
}

/// P4: every way a call can end — one row each of the truth table in [`Ending::verdict`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// One page of a tool that does not page, and nothing in it says there is more.
    Whole,
    /// One page that the response itself shows is the last (from the first page).
    LastPage,
    /// One page, and the API says there are more (P7).
    PageOfMore,
    /// One page of a paginated tool; nothing says whether it was the last.
    PageUnproven,
    /// A walk that fetched every page of every value.
    Walked,
    /// The API stopped giving rows while still announcing more (a total not reached,
    /// `has_more` on an empty page).
    EndedShort,
    /// P11: every page from where the walk started came, but which page number is the
    /// API's first could not be established, so a first page may be missing.
    FirstPageUnknown,
    /// Every value that could be used was fetched, but some `_for_each` values could not
    /// be used (E2) — their rows are unknown.
    ValuesRejected,
    /// A bound (`pages`, `requests`, `items`, `bytes`, `time`) left pages or values
    /// unfetched.
    Bound(StopReason),
    /// A page or cursor came back again, and every distinct row seems fetched.
    LoopSettled,
    /// A page or cursor came back again, and rows may be missing.
    LoopOpen,
    /// The next-page link left the provider's origin.
    OffOrigin,
    /// A request failed for good (rows before it kept).
    UpstreamError,
}

impl Ending {
    /// THE truth table: `(_stoppedBy, _pagingComplete, _likelyMoreRows)` for each ending.
    /// `_stoppedBy` is `end` only when nothing was left unfetched by loopgate; it is
    /// absent when one page was asked for on purpose and that page does not prove it was
    /// the last.
    pub fn verdict(self) -> (Option<StopReason>, bool, bool) {
        use StopReason as S;
        match self {
            Self::Whole | Self::LastPage | Self::Walked => (Some(S::End), true, false),
            Self::PageOfMore => (None, false, true),
            Self::PageUnproven => (None, false, false),
            Self::EndedShort | Self::ValuesRejected | Self::FirstPageUnknown => {
                (Some(S::End), false, true)
            }
            Self::Bound(b) => (Some(b), false, true),
            Self::LoopSettled => (Some(S::Loop), false, false),
            Self::LoopOpen => (Some(S::Loop), false, true),
            Self::OffOrigin => (Some(S::OffOrigin), false, true),
            Self::UpstreamError => (Some(S::UpstreamError), false, true),
        }
    }

    /// Ended by something other than the API running out of rows.
    fn is_stop(self) -> bool {
        matches!(
            self,
            Self::Bound(_)
                | Self::LoopSettled
                | Self::LoopOpen
                | Self::OffOrigin
                | Self::UpstreamError
        )
    }

    /// Among collections that all reached their end: the least certain one speaks.
    fn doubt(self) -> u8 {
        match self {
            Self::Whole | Self::LastPage | Self::Walked => 0,
            Self::PageUnproven => 1,
            Self::PageOfMore => 2,
            _ => 3,
        }
    }
}

/// How the whole call ended: the first stop, in the order it happened (a collection's,
/// then the bound that left `_for_each` values unfetched); else the least certain end.
pub fn overall(
    cols: &[Collection],
    halted: Option<StopReason>,
    rejected: bool,
    paginated: bool,
) -> Ending {
    let endings: Vec<Ending> = cols.iter().map(|c| c.ending(paginated)).collect();
    if let Some(e) = endings.iter().copied().find(|e| e.is_stop()) {
        return e;
    }
    if let Some(b) = halted {
        return Ending::Bound(b);
    }
    let settled = endings
        .into_iter()
        .max_by_key(|e| e.doubt())
        .unwrap_or(Ending::Walked);
    if rejected && settled.doubt() == 0 {
        Ending::ValuesRejected
    } else {
        settled
    }
}

/// `halted`: the bound that left `unfetched` values unfetched.
#[allow(clippy::too_many_arguments)]
pub fn combine(
    cols: &[Collection],
    unfetched: &[Value],
    halted: Option<StopReason>,
    errors: &[ForEachError],
    plan: &CallPlan,
    analysis: &ToolAnalysis,
    limits: &Limits,
    rows: usize,
) -> Verdict {
    let paginated = analysis.paginated();
    let fetched: Vec<&Collection> = cols.iter().filter(|c| c.pages > 0).collect();
    let ending = overall(cols, halted, !errors.is_empty(), paginated);
    let (stopped_by, paging_complete, likely_more_rows) = ending.verdict();
    let total = if !fetched.is_empty() && fetched.iter().all(|c| c.total.is_some()) {
        let sum: u64 = fetched.iter().filter_map(|c| c.total).sum();
        // A "total" below what we hold was a per-page count, not a total.
        (sum >= rows as u64 || fetched.iter().any(|c| c.single)).then_some(sum)
    } else {
        None
    };
    let mut note = headline(cols, ending, paginated, limits, rows, total);
    let first_page_unknown = cols.iter().any(|c| c.first_page_unknown);
    if first_page_unknown && ending != Ending::FirstPageUnknown {
        note.push_str(&format!(" {FIRST_PAGE_UNKNOWN}"));
    }
    // P12: how sure the walk is of the paging it followed, when it is not certain
    if let Some(f) = cols
        .iter()
        .filter_map(|c| c.followed)
        .min()
        .filter(|f| f.score() < 100)
    {
        note.push_str(&format!(
            " The next pages were found through {} (confidence {} of 100).",
            f.said(),
            f.score()
        ));
    }
    if let Some(t) = total.filter(|t| (rows as u64) < *t) {
        note.push_str(&format!(
            " Fetched {rows} of the {t} rows the API reported ({} missing).",
            t - rows as u64
        ));
    }
    // G7: a count the response schema documents as the total, checked against the rows
    if let Some(key) = documented_total_disagrees(&fetched, rows) {
        note.push_str(&key);
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
    if !unfetched.is_empty() && halted == Some(StopReason::Values) {
        note.push_str(&format!(
            " {} `_for_each` values are left for the next call.",
            unfetched.len()
        ));
    } else if !unfetched.is_empty() {
        let list: Vec<String> = unfetched.iter().take(10).map(Value::to_string).collect();
        note.push_str(&format!(
            " {} `_for_each` values were not fetched because the budget ran out: {}{}.",
            unfetched.len(),
            list.join(", "),
            if unfetched.len() > 10 { ", …" } else { "" }
        ));
    }
    if stopped_by == Some(StopReason::Values) {
        note.push_str(" Until every value is fetched the set is partial: no totals from it.");
    } else if !paging_complete && (stopped_by.is_some() || likely_more_rows) {
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
        first_page_unknown,
        values: None,
    }
}

/// G7: the sentence naming the documented total (`resultSizeEstimate`, `totalSize`) of a
/// single collection whose rows disagree with it, when one does.
fn documented_total_disagrees(fetched: &[&Collection], rows: usize) -> Option<String> {
    let [c] = fetched else {
        return None;
    };
    let key = c.total_key.as_ref()?;
    let t = c.total?;
    (t != rows as u64).then(|| format!(" The API's `{key}` said {t} rows; the walk holds {rows}."))
}

/// P11, said in every note of a walk whose first page could not be established.
const FIRST_PAGE_UNKNOWN: &str = "Which page number is the API's first page was not \
    established, so its first page may be missing.";

fn headline(
    cols: &[Collection],
    ending: Ending,
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
    let announced = match total {
        Some(t) if t > rows as u64 => format!("; the API reports {t} in all"),
        _ => String::new(),
    };
    match ending {
        Ending::PageOfMore if paginated => format!(
            "Only one page was fetched ({rows} rows{announced}) and the API says there are more. \
             This tool is paginated: call it again with `_all_pages: true` to get every page before counting or summarising."
        ),
        Ending::PageOfMore => format!(
            "This response holds {rows} rows{announced}, and the API says there are more, but this tool has no \
             parameter to ask for the next page."
        ),
        Ending::PageUnproven => format!(
            "Only one page was fetched ({rows} rows). This tool is paginated, so more rows may exist: \
             `_all_pages: true` fetches every page."
        ),
        Ending::Whole => format!("Complete result: {rows} rows."),
        Ending::LastPage => format!("This page holds every row: {rows} rows."),
        Ending::Walked => {
            let pages: u32 = cols.iter().map(|c| c.pages).sum();
            format!("Every page was fetched: {rows} rows from {pages} pages.")
        }
        Ending::EndedShort => format!(
            "The API stopped returning rows while still reporting more; {rows} rows were fetched."
        ),
        Ending::FirstPageUnknown => {
            format!(
                "The walk reached the API's last page ({rows} rows), but the API's answers did not \
                 agree on where its pages start. {FIRST_PAGE_UNKNOWN}"
            )
        }
        Ending::ValuesRejected => format!("Every usable `_for_each` value was fetched: {rows} rows."),
        Ending::Bound(b) => bound_note(b, limits, at_value(first_hit(b))),
        Ending::LoopSettled | Ending::LoopOpen => {
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
        Ending::OffOrigin => {
            let c = first_hit(StopReason::OffOrigin);
            let url = c.and_then(|c| c.off_origin_url.clone()).unwrap_or_default();
            format!(
                "The API's next-page link ({url}) points outside the provider, so it was not followed; more rows are likely."
            )
        }
        Ending::UpstreamError => {
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

fn bound_note(bound: StopReason, limits: &Limits, at_value: String) -> String {
    match bound {
        StopReason::Pages => format!(
            "Stopped at the limit of {} pages per collection{at_value}; more rows are likely.",
            limits.pages_per_collection,
        ),
        StopReason::Requests => format!(
            "Stopped at the limit of {} upstream requests for one call; more rows are likely.",
            limits.requests
        ),
        StopReason::Items => format!(
            "Stopped at the limit of {} rows; more rows are likely.",
            limits.items
        ),
        StopReason::Bytes => format!(
            "Stopped after {} MB of upstream data (the limit); more rows are likely.",
            limits.bytes / (1024 * 1024)
        ),
        StopReason::Values => format!(
            "Fetched the next referenced `_for_each` values ({} a call); `_forEachValues` counts those done and left.",
            limits.for_each_values
        ),
        StopReason::Cancelled => format!(
            "Stopped because the call was cancelled{at_value}; the rows fetched before are kept and more rows are likely."
        ),
        _ => format!(
            "Stopped at the time limit of {} s; more rows are likely.",
            limits.wall.as_secs()
        ),
    }
}
