//! E6: values by reference, read for one tool call. The engine finds the references in a
//! call's arguments (`loopgate_engine::references`); this module reads each one's stored
//! result from the thread's own store — so another thread's or org's id is
//! `result_not_found` and an expired one `result_expired` (G6), never someone else's rows —
//! takes the values out of it on the CPU pool, and counts the read for G5: a cut result
//! handed on by reference has been used, not answered from a preview. The engine then
//! receives plain values (`parse_call_resolved`).
//!
//! A call resumed with `_continue` (P10) reuses the values its first call read, kept with
//! the continuation, so a fan-out over thousands of values goes on even when the result
//! it read them from has expired meanwhile.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::call::{BoundTool, Runtime, RuntimeError, ThreadKey};
use crate::results::stored_results;
use loopgate_engine::{Limits, RefSite, Resolved, ToolAnalysis};

/// What a call's references read: the references as written, and their values. Kept with
/// a `_continue`, so the resumed call walks the same values.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReadValues {
    pub written: Vec<(RefSite, Value)>,
    pub values: Resolved,
}

/// The `_resultId`s a call's arguments refer to (none when they are malformed: the call
/// is refused with the reason when it is parsed).
pub fn referenced_ids(args: &Value, analysis: &ToolAnalysis, limits: &Limits) -> Vec<String> {
    loopgate_engine::references(args, analysis, limits)
        .map(|refs| refs.into_iter().map(|(_, r)| r.result_id).collect())
        .unwrap_or_default()
}

impl Runtime {
    /// Reads the values every reference in `args` stands for; `kept` is what the call
    /// being continued read (reused when the references are the same ones).
    pub(super) async fn read_references(
        &self,
        thread: &ThreadKey,
        bound: &BoundTool,
        args: &Value,
        limits: &Limits,
        kept: Option<&ReadValues>,
    ) -> Result<ReadValues, RuntimeError> {
        let refs = loopgate_engine::references(args, &bound.analysis, limits)?;
        if refs.is_empty() {
            return Ok(ReadValues::default());
        }
        let written: Vec<(RefSite, Value)> = refs
            .iter()
            .map(|(site, r)| (site.clone(), r.raw.clone()))
            .collect();
        if let Some(k) = kept.filter(|k| k.written == written) {
            return Ok(k.clone());
        }
        let mut values = Resolved::default();
        for (site, r) in refs {
            let id = r.result_id.clone();
            let stored = stored_results::load(self.kv(), thread, &id).await?;
            let limits = limits.clone();
            let read = self
                .walker
                .cpu()
                .run(&thread.org, stored.len(), move || {
                    r.values_in(stored, &limits)
                })
                .await?;
            // G5: handing a result on by reference is reading it
            stored_results::mark_read(self.kv(), thread, &id).await?;
            values.values.push((site, read));
        }
        Ok(ReadValues { written, values })
    }
}
