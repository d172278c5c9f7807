//! P10: resumable walks. A walk stopped by a bound (`pages`, `requests`, `items`,
//! `bytes`, `time`) or cancelled mid-walk (`cancelled`, M3) says exactly where each unfinished collection would have gone on — the
//! next page number, offset, cursor or next URL, and how many rows of that page it already
//! kept — and which `_for_each` values it never reached. A later call started from that
//! point fetches only what is missing, under a fresh budget, so the two calls' rows are
//! the set one unbounded walk would have returned: nothing twice, nothing skipped.
//!
//! The point is plain data; keeping it (and binding it to a caller, a tool and its
//! arguments) is the runtime's job. A walk that ended any other way (`end`, `loop`,
//! `off_origin`, `upstream_error`) has nothing to resume.

use crate::outcome::{Outcome, StopReason};

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
            | StopReason::Cancelled
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resume::{Pending, Position, ResumePoint};
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
