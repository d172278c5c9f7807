//! P14, P15: what walks learned about one tool's paging, kept with the tool by the runtime
//! (any replica reads it) and handed back to every later walk in
//! [`crate::ToolAnalysis::learned`]. A walk starts from it, confirms it or drops what a
//! response contradicted, and returns what it knows in [`crate::Outcome::learned`]; the
//! runtime stores that when it differs. Within one call, every `_for_each` value's walk
//! starts from what the values before it established, so a fan-out pays a probe at most
//! once.
//!
//! Plain data: nothing here reads a response.

use serde::{Deserialize, Serialize};

/// Facts a walk established about a tool's paging, each with the sentence that says why.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Learned {
    /// P11: the API's first page number, established by evidence or by the probe (the
    /// first page asked for without the page parameter and compared).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_base: Option<i64>,
    /// The most rows the API gives per page whatever size it is asked for (it answered
    /// fewer than asked while saying more rows remained): later walks ask for this many,
    /// so a page of that size is a full page, not the last one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_cap: Option<u64>,
    /// Where the next position was read (`the Link header`, `the key the API's response
    /// schema describes`, …), as the verdict says it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_at: Option<String>,
    /// The key the total was read at, when the response schema documents one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_at: Option<String>,
    /// P15: a response of this tool linked its next page on the provider's origin (no
    /// paging parameter needed): the tool is offered `_all_pages` and walked by its links.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub response_paging: bool,
    /// One sentence per fact, for a person (`GET /v1/tools/{id}/pagination`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<String>,
}

impl Learned {
    /// Nothing learned.
    pub fn is_empty(&self) -> bool {
        self.page_base.is_none()
            && self.size_cap.is_none()
            && self.next_at.is_none()
            && self.total_at.is_none()
            && !self.response_paging
    }

    /// The facts without their sentences: what decides whether the stored copy changed.
    pub fn facts(&self) -> Learned {
        Learned {
            evidence: Vec::new(),
            ..self.clone()
        }
    }

    /// The sentences, written again from the facts.
    pub fn explained(mut self) -> Self {
        let mut e = Vec::new();
        if let Some(b) = self.page_base {
            e.push(format!(
                "Page numbers start at {b}: a walk established it, so later walks start there without asking twice."
            ));
        }
        if let Some(c) = self.size_cap {
            e.push(format!(
                "The API gives at most {c} rows a page whatever size it is asked for: walks ask for {c}."
            ));
        }
        if let Some(n) = &self.next_at {
            e.push(format!("The next page is found through {n}."));
        }
        if let Some(t) = &self.total_at {
            e.push(format!("The total is the response's `{t}`."));
        }
        if self.response_paging {
            e.push(
                "Its responses link the next page on the provider's origin: `_all_pages` follows the links."
                    .to_owned(),
            );
        }
        self.evidence = e;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p14_learned_facts_round_trip_as_plain_data() {
        let l = Learned {
            page_base: Some(1),
            size_cap: Some(35),
            response_paging: true,
            ..Learned::default()
        }
        .explained();
        let v = serde_json::to_value(&l).unwrap_or_default();
        assert_eq!(v["pageBase"], 1);
        assert_eq!(v["sizeCap"], 35);
        assert_eq!(v["evidence"].as_array().map(Vec::len), Some(3));
        let back: Learned = serde_json::from_value(v).unwrap_or_default();
        assert_eq!(back, l);
        assert!(Learned::default().is_empty() && !l.is_empty());
    }
}
