//! The loop engine: everything between a model's tool call and what enters its
//! conversation, as a pure library (no HTTP, database, Redis or runtime types). It talks
//! to the world only through three traits the caller implements: [`Upstream`] (one API
//! request → raw response), [`ProgressSink`] and [`Clock`]. Behaviour ids (`G3`,
//! `P10`) are defined in `docs/behaviour.md`.
//!
//! # API
//! ```text
//! analyze(input_schema) -> ToolAnalysis                                   P1, P5
//! model_tool(name, description, input_schema, &analysis, looping) -> ModelTool   L2, L5
//! retrieval_tools() -> Vec<ModelTool>;  loop_guidance() -> &str           L4, A1
//! parse_call(&analysis, input_schema, args, looping, &limits) -> Result<CallPlan>  L3, E2, E3, P6
//!     (the tool's own arguments checked against `analysis.signature`: unknown, ill-typed,
//!     missing required → `invalid_arguments` before any request)
//!     CallPlan { upstream_args, fields, filter, all_pages, for_each, refresh,
//!                uses_reserved, looping, paginated, .. }
//!     CallPlan::cache_identity() -> Value                                  C1
//! references(&args, &analysis, &limits) -> Vec<(RefSite, ValueRef)>        E6
//!     ValueRef::values_in(stored_text, &limits) -> Vec<Value>  (the runtime reads the text)
//! parse_call_resolved(.., &Resolved) -> Result<CallPlan>   parse_call with the values read
//!     for each reference; a fan-out by reference walks `limits.for_each_values` values a
//!     call and leaves the rest to `_continue` (`_stoppedBy: values`, `_forEachValues`)
//! run(&plan, &analysis, &upstream, &progress, &clock, &limits).await -> Result<Outcome>
//!                                    P2–P5, P11, E1–E5, S1, P9 (`limits.concurrency`)
//!     Outcome { envelope, frame, slot, json, items, verdict, for_each_errors, requests,
//!               pages, bytes }
//!     Outcome::is_complete(), to_stored(), to_stored_json(), from_stored(v),
//!     from_stored_json(s), payload()                                       G3, C1, W2
//!     Outcome::store() -> StoredJson   the stored text, the rows moved into it
//! present_json(&outcome, &plan, result_id, &limits, &labels) -> PresentedJson {json, truncated, stored}
//!     the final result text, labels (`_continue`, `_cache`, `_degraded`) included
//! present(..) -> Presented {value, truncated, stored}   (same, unlabelled, parsed: tests)
//!                                                                          R2, F, G1–G3, P7
//! presenting_inputs(&plan, &labels, &limits, &mut bytes)   all `present_json` reads but the
//!     rows and the id, written exactly (the key of a kept presentation)
//! query_result(&stored, &args, &limits)                                    G4
//! query_result_json(String, Option<&Provenance>, &args, &limits)  (+ `aggregate`, Q1)
//!     Outcome::provenance() -> Provenance   stored beside a `_resultId` (Q1 `sound`)
//! fetch_result(stored_text, &args, &limits)                               G4
//! CacheLabel::{hit, value, note}   the one writer of `_cache`               C4
//! ```
//!
//! # What the runtime does around it
//! 1. `analyze` once per tool; `model_tool` for the schema the model sees.
//! 2. `parse_call`. Errors carry `error_code()` (code and status: [`ErrorCode`]), `detail()`.
//! 3. Cache lookup with `cache_identity()` (unless `plan.refresh`); on a hit use
//!    `Outcome::from_stored_json`, present it with `Labels { cache: Some(CacheLabel::hit(..)) }`.
//! 4. `run`; `store()` (built once, the rows moved into it) when `presented.stored`, under
//!    the id passed to `present_json`; cache it when `uses_reserved && is_complete()`. The text
//!    `present_json` returns is final: the runtime sends and records it as it is.
//! 5. `presented.truncated` marks the thread (G5).
//! 6. The `Upstream` builds a request from `args`, or, when `next_url` is set (cursor
//!    walks), requests exactly that URL with the credential applied as usual. It owns the
//!    next-page origin rule (`Upstream::follow`, asked before a link is followed) and the
//!    classification of failures (`UpstreamFailure`: transient or not, `Retry-After`);
//!    the engine only decides: retry within the budget, or end the collection. It should
//!    not wait longer than `UpstreamRequest::timeout`, and may be called again before an
//!    earlier call is done (P9).
//!
//! # Size rule (G1)
//! Tokens = compact JSON bytes / 3, rounded up (see [`present::size_guard`]); `present` leaves
//! [`present::size_guard::RUNTIME_HEADROOM`] bytes for what wraps the result (the response's `id`, `name`).

pub mod analysis;
pub mod document;
pub mod error;
pub mod error_code;
pub mod ids;
pub mod learned;
pub mod limits;
pub mod outcome;
pub mod plan;
pub mod ports;
pub mod present;
pub mod query;
pub mod resume;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod walk;

#[cfg(test)]
mod tests;

#[cfg(test)]
#[global_allocator]
static ALLOCATOR: testing::Counting = testing::Counting;

pub use analysis::{analyze, Param, ToolAnalysis};
pub use document::item::Item;
pub use document::Slot;
pub use error::EngineError;
pub use error_code::ErrorCode;
pub use learned::Learned;
pub use limits::Limits;
pub use outcome::{Outcome, Provenance, StopReason, StoredJson, ValueCount, Verdict};
pub use plan::model_tools::{loop_guidance, model_tool, retrieval_tools, ModelTool};
pub use plan::projection::Projection;
pub use plan::row_filter::{Clause, Op};
pub use plan::value_ref::{references, RefSite, Resolved, ValueRef};
pub use plan::{parse_call, parse_call_resolved, CallPlan, ForEach, ForEachError};
pub use ports::{
    progress_due, Clock, NoProgress, Progress, ProgressSink, Upstream, UpstreamFailure,
    UpstreamProgress, UpstreamRequest, UpstreamResponse,
};
pub use present::cache_label::CacheLabel;
pub use present::inputs::presenting_inputs;
pub use present::template::PresentedTemplate;
pub use present::{present, present_json, Labels, Presented, PresentedJson};
pub use query::retrieval::{fetch_result, query_result, query_result_json};
pub use resume::{Pending, Position, Resume, ResumePoint};
pub use walk::run;
