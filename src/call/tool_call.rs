//! One tool call in a thread, from its acceptance to its record: retrieval tools read
//! stored results ([`crate::call::retrieval_tools`], G4, G6); any other tool is checked against the
//! restriction (G5), parsed by the engine (L3), run against its upstream ([`crate::walk::run_tool`],
//! with the credential [`crate::call::credential_choice`] picks), presented and its full result
//! stored under a `_resultId` ([`crate::call::present_result`]: R2, F, G1, G3). A `_continue` is redeemed
//! here and the resumed walk grown (P10); references to stored results in the arguments
//! are read before the engine parses them ([`crate::call::value_refs`], E6).

use serde_json::Value;
use tracing::Instrument as _;

use std::sync::Arc;

use crate::auth::Caller;
use crate::call::accepted_call::{CallStart, Recording, ToolCallInput};
use crate::call::continuations;
use crate::call::event_feed::{Feed, Tee};
use crate::call::event_log;
use crate::call::offered_tools;
use crate::call::present_result::Kept;
use crate::call::retrieval_tools::{FETCH_TOOL, QUERY_TOOL};
use crate::call::ui_stream;
use crate::call::value_refs;
use crate::call::{BoundTool, ResultJson, Runtime, RuntimeError, ThreadKey};
use crate::crypto::new_id;
use crate::discovery::meta::{CONNECT_TOOLKIT, LIST_CONNECTIONS, LOAD_TOOL, SEARCH_TOOLS};
use crate::results::stored_results;
use crate::store::deployments::CacheMode;
use crate::store::tool_calls;
use crate::store::tools::ToolKind;
use crate::telemetry::metrics::Metrics;
use crate::walk::run_tool::CacheUse;
use loopgate_engine::ProgressSink;

/// The record of a call: who made it, in which thread, with what.
fn new_call(
    caller: &Caller,
    id: &str,
    agent_id: &str,
    thread: &ThreadKey,
    input: &ToolCallInput,
) -> tool_calls::NewCall {
    tool_calls::NewCall {
        id: id.to_owned(),
        agent_id: agent_id.to_owned(),
        thread_id: thread.thread_id.clone(),
        caller: caller.thread_owner(),
        name: input.name.clone(),
        arguments: input.arguments.to_string(),
    }
}

/// The kind of tool `name` is for `agent` (the `kind` label of the calls metric).
fn kind_of(agent: &crate::call::AgentView, name: &str) -> &'static str {
    match agent
        .tools
        .iter()
        .find(|t| t.tool.name == name)
        .map(|t| t.tool.kind)
    {
        Some(ToolKind::Api) => "api",
        Some(ToolKind::Mcp) => "mcp",
        Some(ToolKind::App) => "app",
        None if name == QUERY_TOOL || name == FETCH_TOOL => "retrieval",
        None => "discovery",
    }
}

impl Runtime {
    /// Checks the caller and agent, resolves the thread and, for a [`Recording::Live`]
    /// call, records it as running.
    pub async fn start_call(
        &self,
        caller: &Caller,
        agent_id: &str,
        thread_key: &str,
        input: ToolCallInput,
        recording: Recording,
    ) -> Result<CallStart, RuntimeError> {
        // a streamed call's `running` row is written now and names its thread: read first
        let loading = async {
            match recording {
                Recording::Once => {
                    self.agent_in_thread_unchecked(caller, agent_id, thread_key)
                        .await
                }
                Recording::Live => self.agent_in_thread(caller, agent_id, thread_key).await,
            }
        };
        let loaded = loading.instrument(crate::stage!("agent_load")).await?;
        self.start_loaded(caller, loaded, input, recording).await
    }

    /// [`Runtime::start_call`] with the agent and thread already loaded for this request
    /// ([`Runtime::agent_in_thread`]): the call runs with exactly that agent.
    pub async fn start_loaded(
        &self,
        caller: &Caller,
        loaded: crate::call::threads::InThread,
        input: ToolCallInput,
        recording: Recording,
    ) -> Result<CallStart, RuntimeError> {
        // the arguments that name what loopgate keeps hold no control character (NUL
        // reaches Postgres as an error): refused here, for every way a call comes in
        loopgate_engine::ids::check_id("name", &input.name)
            .and_then(|()| loopgate_engine::ids::check_id_arguments(&input.arguments))
            .map_err(|bad| {
                RuntimeError::Engine(loopgate_engine::EngineError::InvalidArguments {
                    detail: bad.to_string(),
                })
            })?;
        let crate::call::threads::InThread {
            agent,
            thread,
            marks,
            unchecked,
            thread_key,
        } = loaded;
        let in_flight = Arc::new(self.walker.drain().enter().ok_or(RuntimeError::Draining)?);
        let started_at = chrono::Utc::now();
        let id = new_id("call");
        if recording == Recording::Live {
            let call = new_call(caller, &id, &agent.id, &thread, &input);
            let org = caller.org().clone();
            self.records
                .write(tool_calls::Write::Start {
                    org,
                    call,
                    at: started_at,
                })
                .await?;
        }
        Ok(CallStart {
            id,
            recording,
            started_at,
            thread,
            agent_id: agent.id.clone(),
            input,
            agent,
            marks,
            unchecked,
            thread_key,
            in_flight,
        })
    }

    /// Runs the call to its end and records the outcome (also when nobody listens any more).
    #[tracing::instrument(name = "tool_call", skip_all, fields(loopgate.call_id = %start.id, loopgate.org = %caller.org(), loopgate.agent = %start.agent_id, loopgate.tool = %start.input.name))]
    pub async fn execute<P: ProgressSink + Sync>(
        &self,
        caller: &Caller,
        start: &CallStart,
        progress: &P,
    ) -> Result<ResultJson, RuntimeError> {
        Metrics::inc(&self.metrics().tool_calls);
        let log_key = event_log::key(caller.org(), &start.id);
        let live = start.recording == Recording::Live;
        let feed = live.then(|| Feed::open(&self.events, log_key.clone()));
        if let Some(feed) = &feed {
            for c in ui_stream::call_opening(&start.id, &start.input.name, &start.input.arguments) {
                feed.push(c);
            }
        }
        let tee = Tee {
            feed: feed.as_ref(),
            call_id: &start.id,
            inner: progress,
        };
        let (kind, outcome, confirmed) = self
            .dispatch(caller, start, &tee)
            .instrument(crate::stage!("dispatch"))
            .await;
        // the record names the thread and agent the call ran with (confirmed, when the
        // replica's memory of them was not)
        let ran = confirmed.as_ref().unwrap_or(start);
        let label = match &outcome {
            Ok(_) => "succeeded",
            Err(e) => e.code_status().0,
        };
        self.metrics()
            .tool_calls_by
            .inc(&[("outcome", label), ("kind", kind)]);
        // every live chunk is in the log before the record says the call finished: a
        // follower that reads the record first and the log after misses none of them
        if let Some(feed) = feed {
            feed.close().await;
        }
        let recorded = match &outcome {
            Ok(v) => {
                tracing::info!("tool call succeeded");
                v.recorded()
            }
            Err(e) => {
                let (code, status) = e.code_status();
                tracing::info!(code, status, "tool call failed");
                let problem =
                    serde_json::json!({"code": code, "status": status, "detail": e.to_string()});
                tool_calls::Outcome::Failed(problem.to_string())
            }
        };
        let org = caller.org().clone();
        let write = match live {
            true => tool_calls::Write::Finish {
                org,
                id: start.id.clone(),
                outcome: recorded,
                at: chrono::Utc::now(),
            },
            false => tool_calls::Write::Once {
                org,
                call: new_call(caller, &ran.id, &ran.agent.id, &ran.thread, &ran.input),
                outcome: recorded,
                started_at: start.started_at,
                finished_at: chrono::Utc::now(),
            },
        };
        // a call written once is answered without waiting for Postgres: its record is
        // journaled and written behind the answer (K1, no SQL on the request path); a
        // streamed call's end waits for its commit, so a follower that reads the record
        // finished finds every chunk in the log
        let records = &self.records;
        let record = async move {
            match live {
                true => records.write(write).await,
                false => records.write_behind(write).await,
            }
        }
        .instrument(tracing::info_span!("record_write"))
        .instrument(crate::stage!("record_write"))
        .await;
        // K1: a record Postgres cannot take now is journaled and written once it answers
        // (`call_records`), so the call's id stays readable, on any replica, also after
        // this one dies. One that cannot be kept (the journal full) is never answered as a
        // 200 whose id nobody can read: a call written once answers 503 instead. A running
        // call's followers then take its closing chunks from the log.
        if let Err(e) = record {
            tracing::error!(error = %e, call = %start.id, "could not record the tool call outcome");
            if !live {
                return match e {
                    crate::store::StoreError::Unavailable(_) => Err(e.into()),
                    // its thread was deleted meanwhile: its records went with it
                    _ => outcome,
                };
            }
            let closing = match &outcome {
                Ok(v) => ui_stream::call_closing_text(&start.id, Ok(v)),
                Err(e) => ui_stream::call_closing_text(&start.id, Err(&ui_stream::error_text(e))),
            };
            if let Err(e) = self.events.append_all(&log_key, &closing).await {
                tracing::debug!(error = %e, "could not log the call's closing chunks");
            }
        }
        // The outcome is kept once, in the call's record: followers take the closing chunks
        // from there (`event_replay::call`) once woken.
        if live {
            if let Err(e) = self.events.notify(&log_key).await {
                tracing::debug!(error = %e, "could not wake the call's followers");
            }
        }
        outcome
    }

    /// The call's outcome, and the kind of tool it was (the `kind` label of its metric). A
    /// call whose agent and thread were remembered without a round trip
    /// ([`CallStart::unchecked`]) is served from memory when it can be
    /// (`call::memory_hit`), else confirmed first and run as any other; then the thread
    /// and agent it ran with are the confirmed ones, returned for its record.
    async fn dispatch<P: ProgressSink + Sync>(
        &self,
        caller: &Caller,
        start: &CallStart,
        progress: &P,
    ) -> (
        &'static str,
        Result<ResultJson, RuntimeError>,
        Option<CallStart>,
    ) {
        let Some(epoch) = &start.unchecked else {
            let (kind, out) = self.dispatch_checked(caller, start, progress).await;
            return (kind, out, None);
        };
        let served = self.served_from_memory(caller, start, epoch);
        if let Some(served) = served.instrument(crate::stage!("memory_hit")).await {
            Metrics::inc(&self.metrics().agent_memory_hits);
            return (kind_of(&start.agent, &start.input.name), Ok(served), None);
        }
        let confirmed = self.confirmed(caller, start);
        match confirmed.instrument(crate::stage!("agent_load")).await {
            Ok(checked) => {
                let (kind, out) = self.dispatch_checked(caller, &checked, progress).await;
                (kind, out, Some(checked))
            }
            Err(e) => (kind_of(&start.agent, &start.input.name), Err(e), None),
        }
    }

    /// [`Runtime::dispatch`] once the agent, thread and marks were read for this call.
    async fn dispatch_checked<P: ProgressSink + Sync>(
        &self,
        caller: &Caller,
        start: &CallStart,
        progress: &P,
    ) -> (&'static str, Result<ResultJson, RuntimeError>) {
        let args = &start.input.arguments;
        if let QUERY_TOOL | FETCH_TOOL = start.input.name.as_str() {
            let out = self
                .retrieve(&start.thread, &start.input.name, args, &start.agent)
                .await;
            return ("retrieval", out.map(ResultJson::from));
        }
        let agent = start.agent.clone();
        let name = start.input.name.as_str();
        let index = agent.tools.iter().position(|t| t.tool.name == name);
        let kind = kind_of(&agent, name);
        let out = async {
            let offer = self.offer(&agent, &start.thread).await?;
            let meta_offered = index.is_none()
                && match name {
                    SEARCH_TOOLS | LOAD_TOOL => offer.any_pooled(),
                    LIST_CONNECTIONS | CONNECT_TOOLKIT => !agent.toolkits().is_empty(),
                    _ => false,
                };
            if index.is_none() && !meta_offered {
                return Err(RuntimeError::UnknownTool(
                    offered_tools::unknown_tool_detail(&agent, name),
                ));
            }
            let marks = match &start.marks {
                Some(m) => m.clone(),
                None => stored_results::thread_marks(self.kv(), &start.thread).await?,
            };
            // E6: a call that hands every unread cut result on by reference reads them (G5)
            let handed_on = || {
                let Some(i) = index else {
                    return false;
                };
                let ids = value_refs::referenced_ids(
                    args,
                    &agent.tools[i].analysis,
                    self.walker.limits(),
                );
                marks.pending.iter().all(|p| ids.contains(p))
            };
            if marks.restricted && !handed_on() {
                let pending = marks.pending;
                return Err(RuntimeError::RetrievalRequired(format!(
                    "an earlier result was cut and has not been read: call {QUERY_TOOL} or {FETCH_TOOL} with \
                     resultId {} before calling other tools",
                    pending.join(", ")
                )));
            }
            let Some(i) = index else {
                let out = match name {
                    SEARCH_TOOLS => self.search_tools(&agent, &start.thread, &offer, args).await,
                    LIST_CONNECTIONS => self.list_connections(caller, &agent).await,
                    CONNECT_TOOLKIT => self.connect_toolkit(caller, &agent, args).await,
                    _ => self.load_tool(&agent, &start.thread, args).await,
                };
                return out.map(ResultJson::from);
            };
            // D1: a pooled tool is called only once loaded in this thread
            if !offer.offered(&agent, i) {
                return Err(RuntimeError::ToolNotLoaded(format!(
                    "the tool '{name}' is not loaded yet: call {LOAD_TOOL} with {{\"toolName\": \"{name}\"}} first, \
                     then call {name} again"
                )));
            }
            self.run_tool(caller, start, &agent.tools[i], agent.cache_mode, progress)
                .await
        };
        (kind, out.await)
    }

    async fn run_tool<P: ProgressSink + Sync>(
        &self,
        caller: &Caller,
        start: &CallStart,
        bound: &BoundTool,
        mode: CacheMode,
        progress: &P,
    ) -> Result<ResultJson, RuntimeError> {
        // P10: a `_continue` is redeemed (and claimed) before anything is fetched
        let token = match start.input.arguments.get("_continue") {
            Some(Value::String(t)) if bound.binding.loop_responses => t.trim().to_owned(),
            _ => {
                return self
                    .walk_tool(caller, start, bound, mode, progress, None)
                    .await
            }
        };
        let cont = continuations::redeem(
            self.kv(),
            &start.thread,
            &token,
            &bound.tool.id,
            self.walker.clock().now(),
            crate::results::dataset_cache::walk_lease(self.walker.limits().wall),
        )
        .await?;
        let out = self
            .walk_tool(caller, start, bound, mode, progress, Some(&cont))
            .await;
        match &out {
            Ok(_) => continuations::spend(self.kv(), &start.thread, &token).await?,
            Err(_) => continuations::release(self.kv(), &start.thread, &token).await?,
        }
        out
    }

    async fn walk_tool<P: ProgressSink + Sync>(
        &self,
        caller: &Caller,
        start: &CallStart,
        bound: &BoundTool,
        mode: CacheMode,
        progress: &P,
        cont: Option<&continuations::Continuation>,
    ) -> Result<ResultJson, RuntimeError> {
        let args = match cont {
            Some(c) => continuations::arguments_for(&start.input.arguments, c),
            None => start.input.arguments.clone(),
        };
        // E6: references to stored results are read here (G6, G5); the engine gets values
        let read = self
            .read_references(
                &start.thread,
                bound,
                &args,
                self.walker.limits(),
                cont.and_then(|c| c.read.as_ref()),
            )
            .await?;
        let mut plan = loopgate_engine::parse_call_resolved(
            &bound.analysis,
            &bound.tool.input_schema.0,
            args.clone(),
            bound.binding.loop_responses,
            self.walker.limits(),
            &read.values,
        )?;
        let mut prior = None;
        if let Some(c) = cont {
            continuations::check_same_walk(&plan.cache_identity(), c)?;
            prior = Some(stored_results::load(self.kv(), &start.thread, &c.result_id).await?);
            plan.resume = Some(loopgate_engine::Resume {
                point: c.point.clone(),
                rows_before: c.rows,
                errors_before: c.errors.clone(),
            });
        }
        let mut cache = CacheUse {
            // a resumed walk is a part of a set: never read from or written to the cache
            mode: if cont.is_some() { CacheMode::Off } else { mode },
            experiment: start.input.experiment,
            ttl: None,
            confirm_later: cont.is_none(),
        };
        loop {
            let fetched = self
                .fetch_credentialed(caller, bound, &plan, cache, progress)
                .await?;
            // C4: a hit is presented like a walk (another `_fields`/`_filter` still applies) and labelled
            let label = match (fetched.hit, fetched.too_large) {
                (Some((at, expires)), _) => Some(loopgate_engine::CacheLabel::hit(at, expires)),
                (None, true) => Some(loopgate_engine::CacheLabel::TooLarge {
                    max_bytes: self.walker.cache_max_entry_bytes(),
                }),
                (None, false) => None,
            };
            let unconfirmed = fetched.unconfirmed;
            let (outcome, held, stored) = match prior.take() {
                Some(before) => {
                    let size =
                        before.len() + crate::walk::run_tool::outcome_bytes(&fetched.outcome);
                    let next = fetched.outcome;
                    let grown = self
                        .walker
                        .cpu()
                        .run(caller.org(), size, move || {
                            loopgate_engine::walk::resume::grow(before, Arc::unwrap_or_clone(next))
                        })
                        .await;
                    (Arc::new(grown), None, None)
                }
                None => (fetched.outcome, fetched.held, fetched.stored),
            };
            let kept = Kept {
                result_id: cont.map(|c| c.result_id.clone()),
                tool_id: &bound.tool.id,
                arguments: &args,
                held,
                stored,
                cache: label,
                unconfirmed,
                read: &read,
                unchecked: None,
            };
            if let Some(presented) = self.keep(caller, start, &plan, outcome, kept).await? {
                if unconfirmed {
                    Metrics::inc(&self.metrics().cache_hits);
                    self.walker.cache_memory().confirmed();
                }
                return Ok(presented);
            }
            // the version this replica's memory held is not current any more: served as
            // today, Redis asked first
            self.walker.cache_memory().stale();
            cache.confirm_later = false;
        }
    }
}
