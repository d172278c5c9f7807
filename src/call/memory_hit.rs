//! A tool call served from this replica's memory in one Redis round trip. When the
//! replica remembers the agent and the thread at one config epoch
//! ([`crate::call::threads::InThread::unchecked`]) and holds the call's dataset cache
//! entry, the call is presented from memory and everything it assumed is confirmed in the
//! pipeline that stores its result: the entry's version (C1), the org's config epoch
//! (`call::agent_memory`) and that the thread is not restricted (G5)
//! (`stored_results::put`). When any of them does not hold, what was written is taken
//! back, nothing is answered from it, and the call is confirmed and run as any other
//! ([`Runtime::confirmed`]): the answer is the one the checked path would have given.
//!
//! Only calls that touch nothing but memory before that pipeline take this path: a bound
//! API or MCP tool (a connected app's credential may need a refresh), of an agent with no
//! pooled tools (which tools a thread loaded is read from Postgres, D1), with reserved
//! arguments (C1: only walks are cached), no `_continue` (P10) and no reference to a
//! stored result (E6). Anything else is confirmed first, with the round trip the call
//! made before this path existed.

use crate::auth::Caller;
use crate::call::accepted_call::CallStart;
use crate::call::agent_memory::{self, Epoch};
use crate::call::present_result::Kept;
use crate::call::value_refs::{self, ReadValues};
use crate::call::{ResultJson, Runtime, RuntimeError};
use crate::discovery::placement::Place;
use crate::results::stored_results::Unchecked;
use crate::store::deployments::CacheMode;
use crate::store::tools::ToolKind;
use crate::telemetry::metrics::Metrics;
use crate::walk::run_tool::CacheUse;

impl Runtime {
    /// The call's result served from this replica's memory, its assumptions confirmed in
    /// the round trip that stores it; `None`: the call is to be confirmed and run as any
    /// other (nothing was answered or kept).
    pub(super) async fn served_from_memory(
        &self,
        caller: &Caller,
        start: &CallStart,
        epoch: &Epoch,
    ) -> Option<ResultJson> {
        let args = &start.input.arguments;
        // C1: only a walk (reserved arguments) can be a hit; P10: a `_continue` is redeemed
        let reserved = args
            .as_object()
            .is_some_and(|o| o.keys().any(|k| k.starts_with('_')));
        if !reserved || args.get("_continue").is_some() || start.input.experiment {
            return None;
        }
        let agent = &start.agent;
        if agent.cache_mode != CacheMode::On {
            return None;
        }
        let bound = agent
            .tools
            .iter()
            .find(|t| t.tool.name == start.input.name)?;
        if bound.tool.kind == ToolKind::App || agent.placement().contains(&Place::Pooled) {
            return None;
        }
        let limits = self.walker.limits();
        if !value_refs::referenced_ids(args, &bound.analysis, limits).is_empty() {
            return None;
        }
        let read = ReadValues::default();
        let plan = loopgate_engine::parse_call_resolved(
            &bound.analysis,
            &bound.tool.input_schema.0,
            args.clone(),
            bound.binding.loop_responses,
            limits,
            &read.values,
        )
        .ok()?;
        let credential = self.credential(caller, bound).await.ok()?;
        let cache = CacheUse {
            mode: CacheMode::On,
            experiment: false,
            ttl: None,
            confirm_later: true,
        };
        let fetched = self
            .walker
            .memory_hit(caller, bound, &plan, &credential, cache)?;
        let (at, expires) = fetched.hit?;
        let epoch_key = agent_memory::epoch_key(caller.org());
        let unchecked = Unchecked {
            epoch_key: &epoch_key,
            epoch,
        };
        let kept = Kept {
            result_id: None,
            tool_id: &bound.tool.id,
            arguments: args,
            held: fetched.held,
            stored: None,
            cache: Some(loopgate_engine::CacheLabel::hit(at, expires)),
            unconfirmed: true,
            read: &read,
            unchecked: Some(&unchecked),
        };
        match self.keep(caller, start, &plan, fetched.outcome, kept).await {
            Ok(Some(presented)) => {
                Metrics::inc(&self.metrics().cache_hits);
                self.walker.cache_memory().confirmed();
                Some(presented)
            }
            Ok(None) => None,
            Err(e) => {
                tracing::debug!(error = %e, "a hit from memory could not be kept; the call runs checked");
                None
            }
        }
    }

    /// `start` with its agent, thread and G5 marks read for this call (the round trip
    /// [`Runtime::agent_in_thread`] makes; the agent loaded again when its org's config
    /// changed since it was remembered).
    pub(super) async fn confirmed(
        &self,
        caller: &Caller,
        start: &CallStart,
    ) -> Result<CallStart, RuntimeError> {
        let loaded = self
            .agent_in_thread(caller, &start.agent_id, &start.thread_key)
            .await?;
        Ok(CallStart {
            id: start.id.clone(),
            recording: start.recording,
            started_at: start.started_at,
            thread: loaded.thread,
            agent_id: start.agent_id.clone(),
            input: start.input.clone(),
            agent: loaded.agent,
            marks: loaded.marks,
            unchecked: None,
            thread_key: loaded.thread_key,
            in_flight: start.in_flight.clone(),
        })
    }
}
