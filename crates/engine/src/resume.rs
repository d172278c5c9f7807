//! P10, E4: the data a resumed walk starts from — where each unfinished collection goes
//! on ([`Position`], [`Pending`]), everything a walk left ([`ResumePoint`]), what a
//! resumed call is given ([`Resume`]) and a `_for_each` value's failure ([`ForEachError`]).
//! Plain data shared by the plan, the walk, the outcome and the presentation, below all
//! of them (it uses none of them): keeping a point and binding it to a caller, a tool and
//! its arguments is the runtime's job; how a walk reaches or resumes one is
//! [`crate::walk::resume`]'s.

use serde::{Deserialize, Serialize};
use serde_json::Value;

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

/// E4: one entry of `_forEachErrors`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForEachError {
    pub value: Value,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub status: Option<u16>,
    pub error: String,
}
