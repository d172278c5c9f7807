//! Presenting a tool call's outcome for the conversation (R2, F, G1: `_fields`,
//! `_filter`, the guard, the labels) and keeping its full payload under a `_resultId`
//! (G3): as its own text or as a pointer to the dataset cache entry holding it, with a
//! `_continue` saved when the walk can be resumed (P10). A hit presented before from the
//! same entry version is spliced from the replica's template (`cache_memory`) instead of
//! presented afresh, and its result carries that template's body, so its record
//! references the text instead of copying it (`store::tool_calls::Filled`). A hit served
//! from the replica's memory before Redis named the entry's current version has it
//! confirmed in the round trip that stores its result (`stored_results::put`), and is not
//! answered when Redis names another one.

use std::sync::Arc;

use tracing::Instrument as _;

use serde_json::Value;

use crate::auth::Caller;
use crate::call::accepted_call::CallStart;
use crate::call::continuations;
use crate::call::{ResultJson, Runtime, RuntimeError};
use crate::results::cache_memory::CacheMemory;
use crate::results::dataset_cache;
use crate::results::stored_results;
use crate::telemetry::metrics::Metrics;

/// Where [`Runtime::keep`] stores a result, and what a `_continue` of it is bound to.
pub(super) struct Kept<'a> {
    /// The result a resumed walk grows; `None`: a fresh `_resultId`.
    pub(super) result_id: Option<String>,
    pub(super) tool_id: &'a str,
    pub(super) arguments: &'a Value,
    /// The cache entry that already holds the outcome: the result points at it.
    pub(super) held: Option<dataset_cache::Held>,
    /// The outcome's stored text, when it was already written.
    pub(super) stored: Option<loopgate_engine::StoredJson>,
    /// C4: how the cache served or kept the walk.
    pub(super) cache: Option<loopgate_engine::CacheLabel>,
    /// `held` is a version of the entry Redis has not confirmed yet (`Fetched::unconfirmed`).
    pub(super) unconfirmed: bool,
    /// E6: what the call's references read, kept with a `_continue`.
    pub(super) read: &'a crate::call::value_refs::ReadValues,
    /// What a call served from memory has not read yet (`call::memory_hit`): checked in
    /// the round trip that stores the result, like `unconfirmed`.
    pub(super) unchecked: Option<&'a stored_results::Unchecked<'a>>,
}

impl Runtime {
    /// Presents an outcome — the final result text, labels included — and keeps its full
    /// payload under its `_resultId` (G3): a fresh one, or the one a resumed walk grows
    /// (P10), as its own text or as a pointer to the cache entry holding it. A walk that
    /// can be resumed leaves a `_continue`. A hit's result filled from (or first making) a
    /// template carries the template's body, so its record references the text. `None`
    /// when the entry version a hit was served from unconfirmed ([`Kept::unconfirmed`]) is
    /// not the current one: nothing is kept and nothing may be answered.
    #[tracing::instrument(name = "size_guard", skip_all, fields(loopgate.truncated = tracing::field::Empty))]
    pub(super) async fn keep(
        &self,
        caller: &Caller,
        start: &CallStart,
        plan: &loopgate_engine::CallPlan,
        outcome: Arc<loopgate_engine::Outcome>,
        kept: Kept<'_>,
    ) -> Result<Option<ResultJson>, RuntimeError> {
        let result_id = kept.result_id.unwrap_or_else(|| {
            stored_results::new_result_id(chrono::Utc::now().timestamp_millis())
        });
        let mut labels = loopgate_engine::Labels {
            cache: kept.cache,
            // Redis unreachable: the cache was per process and the _resultId lives here only
            degraded: self
                .kv()
                .degraded()
                .then(|| crate::kv::DEGRADED_NOTE.to_owned()),
            continue_token: None,
        };
        // P10: an envelope is always stored, so its `_continue` can be saved before it is written
        if let (true, Some(point)) = (outcome.envelope, &outcome.resume) {
            let c = continuations::Continuation {
                result_id: result_id.clone(),
                tool_id: kept.tool_id.to_owned(),
                identity: plan.cache_identity(),
                arguments: continuations::walk_arguments(kept.arguments),
                shaping: continuations::shaping_of(kept.arguments),
                point: point.clone(),
                rows: outcome.items.len(),
                errors: outcome.for_each_errors.clone(),
                expires_at: self.walker.clock().now()
                    + chrono::Duration::from_std(self.kv().result_ttl()).unwrap_or_default(),
                read: (!kept.read.written.is_empty()).then(|| kept.read.clone()),
            };
            labels.continue_token = Some(continuations::save(self.kv(), &start.thread, &c).await?);
        }
        let unconfirmed = kept.held.as_ref().filter(|_| kept.unconfirmed);
        // K2: while Redis does not answer, a result keeps its own text (the entry is this
        // replica's alone, so no other replica could follow a pointer to it)
        let held = kept.held.as_ref().filter(|h| {
            !self.kv().degraded() && h.outlives(self.walker.clock().now(), self.kv().result_ttl())
        });
        let (prebuilt, needs_text) = (kept.stored, held.is_none());
        let limits = self.limits_for(&start.agent).into_owned();
        // a hit presented before from the same entry version, the same way, is the same text
        // but for its `_resultId` (loopgate_engine::PresentedTemplate): spliced, not presented afresh
        let presenting = match (&labels.cache, &held) {
            (Some(loopgate_engine::CacheLabel::Hit { .. }), Some(h))
                if self.walker.cache_memory().enabled() =>
            {
                let key = CacheMemory::presenting_key(h, plan, &labels, &limits);
                Some((key, h.version()))
            }
            _ => None,
        };
        // the hit's record references the presentation's body instead of copying its text
        let mut body = None;
        let memo = presenting
            .as_ref()
            .and_then(|(key, version)| self.walker.cache_memory().presented(key, *version))
            .and_then(|p| {
                let filled = p.template.fill(&result_id)?;
                body = Some(p.body.clone());
                Some(filled)
            });
        let presenting_span = crate::stage!("present");
        let presenting_entered = presenting_span.clone();
        let (presented, stored, provenance) = async {
            match memo {
                Some(presented) => (presented, None, outcome.provenance()),
                None => {
                    // presenting (`_filter`, `_fields`, the guard) and writing the stored set are
                    // proportional to the rows: off the async workers when large
                    let size = crate::walk::run_tool::outcome_bytes(&outcome);
                    let (plan_copy, rid) = (plan.clone(), result_id.clone());
                    let done = self
                        .walker
                        .cpu()
                        .run(caller.org(), size, move || {
                            let presented = loopgate_engine::present_json(
                                &outcome, &plan_copy, &rid, &limits, &labels,
                            );
                            let mut outcome = outcome;
                            // the rows move into the stored text (or already did): never held
                            // twice — unless they are shared with the replica's cache memory
                            let stored = (presented.stored && needs_text).then(|| {
                                prebuilt.unwrap_or_else(|| match Arc::get_mut(&mut outcome) {
                                    Some(o) => o.store(),
                                    None => Arc::new(outcome.to_stored_json()),
                                })
                            });
                            (presented, stored, outcome.provenance())
                        })
                        .await;
                    if let Some((key, version)) = &presenting {
                        if let Some(t) =
                            loopgate_engine::PresentedTemplate::new(&done.0, &result_id)
                        {
                            body = Some(
                                self.walker
                                    .cache_memory()
                                    .keep_presented(key, *version, t)
                                    .body
                                    .clone(),
                            );
                        }
                    }
                    done
                }
            }
        }
        .instrument(presenting_entered)
        .await;
        drop(presenting_span);
        let storing = crate::stage!("result_store");
        if presented.stored {
            let body = match held {
                Some(h) => stored_results::Body::Cached(h),
                None => stored_results::Body::Text(stored.as_deref().map_or("", String::as_str)),
            };
            let put = stored_results::put(
                self.kv(),
                &start.thread,
                &result_id,
                body,
                &provenance,
                presented.truncated,
                unconfirmed,
                kept.unchecked,
            );
            if !put.instrument(storing).await? {
                return Ok(None);
            }
            if held.is_none() {
                let bytes = stored.as_deref().map_or(0, |s| s.len());
                Metrics::add(&self.metrics().stored_result_bytes, bytes as u64);
            }
        } else if !stored_results::confirm(self.kv(), &start.thread, unconfirmed, kept.unchecked)
            .instrument(storing)
            .await?
        {
            return Ok(None);
        }
        tracing::Span::current().record("loopgate.truncated", presented.truncated);
        if presented.truncated {
            Metrics::inc(&self.metrics().guard_cuts);
        }
        Ok(Some(match body {
            Some(body) => ResultJson::filled(presented.json, body, result_id),
            None => ResultJson::from_engine(presented.json),
        }))
    }
}
