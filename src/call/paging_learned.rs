//! P14: what a walk learned about its tool's paging, kept with the tool. The engine hands
//! back what the tool's walks know after each call (`Outcome::learned`); when its facts
//! differ from what the call was given (read with the agent), they are written — or
//! dropped, when a response contradicted all of them — and the org's config epoch is
//! bumped, so every replica's next call reads them. What is still true is confirmed at
//! most every [`CONFIRM_EVERY`], so a tool's walks cost no statement of their own.
//! A failure to keep it is logged: the next walk learns it again.

use chrono::{DateTime, Utc};

use crate::call::{BoundTool, Runtime};
use crate::store::{tool_paging, OrgId};
use loopgate_engine::Outcome;

/// How stale `confirmed_at` may get before a walk that found the same facts writes it.
const CONFIRM_EVERY: chrono::Duration = chrono::Duration::hours(1);

impl Runtime {
    /// Keeps what the walk behind `outcome` learned (an outcome served from the cache
    /// learned nothing: never passed here).
    pub(crate) async fn keep_learned(&self, org: &OrgId, bound: &BoundTool, outcome: &Outcome) {
        let given = bound.analysis.learned.facts();
        let now = outcome.learned.facts();
        let tool = &bound.tool.id;
        let written = if now == given {
            if now.is_empty() || !stale(bound.paging_confirmed, Utc::now()) {
                return;
            }
            tool_paging::confirm(&self.pool, org, tool)
                .await
                .map(|()| false)
        } else if now.is_empty() {
            tool_paging::forget(&self.pool, org, tool)
                .await
                .map(|()| true)
        } else {
            let v = serde_json::to_value(&outcome.learned).unwrap_or_default();
            tool_paging::put(&self.pool, org, tool, &v)
                .await
                .map(|()| true)
        };
        match written {
            Ok(true) => crate::call::agent_memory::bump(self.kv(), org).await,
            Ok(false) => {}
            Err(e) => {
                tracing::warn!(%org, tool = %tool, error = %e, "could not keep what the walk learned of the tool's paging")
            }
        }
    }
}

fn stale(confirmed: Option<DateTime<Utc>>, now: DateTime<Utc>) -> bool {
    confirmed.is_none_or(|at| now - at > CONFIRM_EVERY)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p14_what_is_still_true_is_confirmed_at_most_hourly() {
        let now = Utc::now();
        assert!(stale(None, now));
        assert!(!stale(Some(now - chrono::Duration::minutes(5)), now));
        assert!(stale(Some(now - chrono::Duration::hours(2)), now));
    }
}
