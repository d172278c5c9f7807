//! P10: resumable walks. A walk stopped by a bound (`pages`, `requests`, `items`,
//! `bytes`, `time`) says exactly where each unfinished collection would have gone on — the
//! next page number, offset, cursor or next URL, and how many rows of that page it already
//! kept — and which `_for_each` values it never reached. A later call started from that
//! point fetches only what is missing, under a fresh budget, so the two calls' rows are
//! the set one unbounded walk would have returned: nothing twice, nothing skipped.
//!
//! The point is plain data; keeping it (and binding it to a caller, a tool and its
//! arguments) is the runtime's job. A walk that ended any other way (`end`, `loop`,
//! `off_origin`, `upstream_error`) has nothing to resume.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::outcome::{Outcome, StopReason};
use crate::plan::ForEachError;

/// Where a collection's next request starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "at")]
pub enum Position {
    /// From the collection's first page (a value never reached, or cut on its first page).
    Start,
    /// The page number to request.
    Page(i64),
    /// The offset to request.
    Offset(u64),
    /// The cursor value to send, as it was sent.
    Cursor(Value),
    /// The next-page URL to request (already checked to be on the provider's origin).
    Url(String),
}

/// One collection still to fetch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pending {
    /// Index of the `_for_each` value in the call's values (0 without a fan-out).
    pub value: usize,
    pub at: Position,
    /// Rows at the start of the page at `at` that were already kept (the `items` bound can
    /// cut inside a page).
    #[serde(default)]
    pub skip: usize,
    /// Rows this collection gave so far (an announced total is compared with them).
    #[serde(default)]
    pub rows: usize,
    /// The total the collection's API announced, when it did.
    #[serde(default)]
    pub total: Option<u64>,
    /// P11: the collection's first page could not be established (the union is then
    /// never complete).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub first_page_unknown: bool,
}

impl Pending {
    /// A value the walk never reached.
    pub fn fresh(value: usize) -> Self {
        Self {
            value,
            at: Position::Start,
            skip: 0,
            rows: 0,
            total: None,
            first_page_unknown: false,
        }
    }
}

/// Everything a walk left unfetched, in the order it would have fetched it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResumePoint {
    pub pending: Vec<Pending>,
}

/// What a resumed call starts from; the runtime sets it on the plan (`CallPlan::resume`).
#[derive(Debug, Clone, PartialEq)]
pub struct Resume {
    pub point: ResumePoint,
    /// Rows the stored result already holds: verdicts count the union.
    pub rows_before: usize,
    /// `_forEachErrors` of the calls before: values that failed stay failed (and the union
    /// incomplete) unless the caller starts a fresh walk.
    pub errors_before: Vec<ForEachError>,
}

/// The stored result grown by a resumed call: the rows it held, then the new ones. The
/// verdict, errors and resume point are the resumed call's, which judged the union.
pub fn grow(prior_stored_json: String, next: Outcome) -> Outcome {
    let mut items = Outcome::from_stored_text(prior_stored_json).items;
    items.extend(next.items);
    Outcome { items, ..next }
}

/// The bounds a walk can be resumed after.
pub fn resumable(stop: StopReason) -> bool {
    matches!(
        stop,
        StopReason::Pages
            | StopReason::Requests
            | StopReason::Items
            | StopReason::Bytes
            | StopReason::Time
            | StopReason::Values
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn p10_points_round_trip_as_plain_data() {
        let p = ResumePoint {
            pending: vec![
                Pending {
                    value: 2,
                    at: Position::Cursor(json!("c9")),
                    skip: 7,
                    rows: 300,
                    total: Some(900),
                    first_page_unknown: false,
                },
                Pending::fresh(3),
            ],
        };
        let v = serde_json::to_value(&p).unwrap_or_default();
        assert_eq!(v["pending"][0]["at"], json!({"kind": "cursor", "at": "c9"}));
        assert_eq!(v["pending"][1]["at"], json!({"kind": "start"}));
        let back: ResumePoint = serde_json::from_value(v).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, p);
        assert!(resumable(StopReason::Items) && !resumable(StopReason::Loop));
        assert!(!resumable(StopReason::End) && !resumable(StopReason::UpstreamError));
    }
}
