//! The runtime: what an agent runtime asks of loopgate — the tools of the next model
//! step, and the execution of one tool call in a thread — with no HTTP types. It wires
//! the pure engine to the world: the agent's bindings (Postgres), stored results and
//! thread marks (`Kv`), upstream calls (rate limited, SSRF-guarded), progress.

pub mod accepted_call;
pub mod agent_memory;
pub mod app_connections;
pub mod arguments_schema;
pub mod call_records;
pub mod compiled_tools;
pub mod connect_page;
pub mod connection_retry;
pub mod connection_revoke;
pub mod continuations;
pub mod credential_choice;
pub mod event_feed;
pub mod event_log;
pub mod event_replay;
pub mod memory_hit;
pub mod offered_tools;
pub mod paging_learned;
pub mod present_result;
pub mod query_vectors;
pub mod record_journal;
pub mod refresh_gates;
pub mod retrieval_tools;
pub mod search_docs;
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests may panic
mod search_eval;
#[cfg(test)]
mod search_quality_tests;
pub mod steps;
pub mod threads;
pub mod tool_call;
pub mod tool_vectors;
pub mod ui_stream;
pub mod value_refs;
pub mod vector_jobs;
pub mod workflow_tool;

use std::collections::HashMap;
use std::sync::Arc;

use sqlx::PgPool;

use crate::auth::Caller;
use crate::crypto::Cipher;
use crate::store::agent_load::{SeenThread, ThreadLookup, VersionedBinding};
use crate::store::deployments::CacheMode;
use crate::store::providers::Provider;
use crate::store::{self, OrgId, StoreError};
use crate::telemetry::metrics::Metrics;
use loopgate_engine::Limits;

use crate::kv::Kv;
pub use crate::results::{ResultJson, ThreadKey};
use crate::walk::Walker;
pub use crate::walk::{BoundTool, RuntimeError};

/// The tool-call service: what an agent runtime asks of loopgate (the next step's tools,
/// one tool call in a thread), built from a few owned parts. The walk's own parts are the
/// [`Walker`]'s; the rest is the agents, threads, connections and the call's history.
pub struct Runtime {
    pool: PgPool,
    cipher: Cipher,
    walker: Walker,
    /// D1: directly offered tools when the agent sets no budget of its own.
    direct_tool_budget: usize,
    /// D1: search indexes of agents' pools.
    search_indexes: offered_tools::IndexCache,
    /// D4: this service's public base URL (connect links, the OAuth redirect).
    public_url: String,
    /// D4: token requests to authorization servers.
    oauth: crate::upstream::oauth::OAuthHttp,
    /// Chunks of running calls and runs, readable from every replica.
    events: event_log::EventLog,
    /// Compiled tools and providers of this replica, by version.
    compiled: compiled_tools::CompiledTools,
    /// One OAuth refresh per connection at a time in this replica (waited for in process).
    refresh_gates: refresh_gates::RefreshGates,
    /// This replica's writer of tool-call records (group commit).
    records: call_records::Records,
    /// A thread's `last_used_at` is written again only once it is this old
    /// ([`threads::touch_interval`]: well below retention's idle time).
    thread_touch: std::time::Duration,
    /// Agents and threads this replica remembers while the org's config is unchanged.
    agent_memory: agent_memory::AgentMemory,
}

/// The parts a [`Runtime`] is built from (see its fields).
pub struct RuntimeParts {
    pub pool: PgPool,
    pub cipher: Cipher,
    pub walker: Walker,
    pub direct_tool_budget: usize,
    pub search_indexes: offered_tools::IndexCache,
    pub public_url: String,
    pub oauth: crate::upstream::oauth::OAuthHttp,
    pub events: event_log::EventLog,
    pub compiled: compiled_tools::CompiledTools,
    pub refresh_gates: refresh_gates::RefreshGates,
    pub records: call_records::Records,
    pub thread_touch: std::time::Duration,
    pub agent_memory: agent_memory::AgentMemory,
}

impl Runtime {
    pub fn new(p: RuntimeParts) -> Self {
        Runtime {
            pool: p.pool,
            cipher: p.cipher,
            walker: p.walker,
            direct_tool_budget: p.direct_tool_budget,
            search_indexes: p.search_indexes,
            public_url: p.public_url,
            oauth: p.oauth,
            events: p.events,
            compiled: p.compiled,
            refresh_gates: p.refresh_gates,
            records: p.records,
            thread_touch: p.thread_touch,
            agent_memory: p.agent_memory,
        }
    }

    /// What runs walks: upstream callers, dataset cache, CPU pool, drain.
    pub fn walker(&self) -> &Walker {
        &self.walker
    }
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }
    /// This service's public base URL, without a trailing `/`.
    pub fn public_url(&self) -> &str {
        &self.public_url
    }
    pub fn kv(&self) -> &Kv {
        self.walker.kv()
    }
    pub fn events(&self) -> &event_log::EventLog {
        &self.events
    }
    pub fn records(&self) -> &call_records::Records {
        &self.records
    }
    pub fn refresh_gates(&self) -> &refresh_gates::RefreshGates {
        &self.refresh_gates
    }
    fn metrics(&self) -> &Arc<Metrics> {
        self.walker.metrics()
    }
}

/// An agent as the runtime needs it.
#[derive(Debug)]
pub struct AgentView {
    pub id: String,
    /// The cache mode of the agent's deployment (C6).
    pub cache_mode: CacheMode,
    pub instructions: String,
    pub tools: Vec<BoundTool>,
    /// D1: tools offered directly before connected-app toolkits are pooled.
    pub budget: usize,
    /// G1: the agent's own size-guard budget in tokens, when it sets one.
    pub token_budget: Option<usize>,
}

impl AgentView {
    pub fn looping(&self) -> bool {
        self.tools.iter().any(|t| t.binding.loop_responses)
    }
    pub fn tool(&self, name: &str) -> Option<&BoundTool> {
        self.tools.iter().find(|t| t.tool.name == name)
    }
}

/// A token limited to one agent cannot use another (checked before memory or the store is
/// asked).
fn may_use(caller: &Caller, agent_id: &str) -> Result<(), RuntimeError> {
    match caller.allows_agent(agent_id) {
        true => Ok(()),
        false => Err(RuntimeError::Forbidden(
            "this runtime token is limited to another agent".into(),
        )),
    }
}

impl Runtime {
    /// Loads the agent for this caller: another org's agent is not found, and a token
    /// limited to one agent cannot use another. Taken from this replica's memory while
    /// the org's config epoch is unchanged ([`agent_memory`]).
    pub async fn agent(
        &self,
        caller: &Caller,
        agent_id: &str,
    ) -> Result<Arc<AgentView>, RuntimeError> {
        may_use(caller, agent_id)?;
        let org = caller.org();
        let epoch = match self.agent_memory.on() {
            true => agent_memory::read_epoch(self.kv(), org)
                .await
                .ok()
                .flatten(),
            false => None,
        };
        if let Some(view) = epoch
            .as_ref()
            .and_then(|e| self.agent_memory.agent(org, agent_id, None, e))
        {
            Metrics::inc(&self.metrics().agent_memory_hits);
            return Ok(view);
        }
        let read_at = std::time::Instant::now();
        let view = Arc::new(self.load_agent(caller, agent_id, None, None).await?.0);
        if let Some(epoch) = epoch {
            // loaded without connections: an agent with app bindings is not kept
            self.agent_memory
                .keep_agent(org, epoch, &view, read_at, None);
        }
        Ok(view)
    }

    /// [`Runtime::agent`], with the `thread` and the connections of `connections_of`
    /// looked up in the same statement.
    async fn load_agent(
        &self,
        caller: &Caller,
        agent_id: &str,
        thread: Option<ThreadLookup<'_>>,
        connections_of: Option<&str>,
    ) -> Result<(AgentView, Option<SeenThread>), RuntimeError> {
        may_use(caller, agent_id)?;
        let org = caller.org();
        Metrics::inc(&self.metrics().agent_loads);
        let agent = store::agent_load::load(&self.pool, org, agent_id, thread, connections_of)
            .await
            .map_err(|e| match e {
                StoreError::NotFound => RuntimeError::NotFound("agent"),
                other => other.into(),
            })?;
        let tools = self.compile(org, agent.bindings).await?;
        let view = AgentView {
            id: agent.id,
            cache_mode: agent.cache,
            instructions: agent.instructions,
            tools,
            budget: agent
                .direct_tool_budget
                .map_or(self.direct_tool_budget, |b| b.max(0) as usize),
            token_budget: agent.token_budget.map(|b| b.max(0) as usize),
        };
        Ok((view, agent.thread))
    }

    /// The engine's bounds for a call of this agent: the service's, with the agent's own
    /// size-guard budget when it sets one (G1).
    pub fn limits_for(&self, agent: &AgentView) -> std::borrow::Cow<'_, Limits> {
        match agent.token_budget {
            Some(t) if t != self.walker.limits().token_budget => std::borrow::Cow::Owned(Limits {
                token_budget: t,
                ..self.walker.limits().clone()
            }),
            _ => std::borrow::Cow::Borrowed(self.walker.limits()),
        }
    }

    /// The bound tools, from the replica's compiled tools where their versions match; the
    /// others are read (two statements at most, whatever their number) and compiled.
    async fn compile(
        &self,
        org: &OrgId,
        bindings: Vec<VersionedBinding>,
    ) -> Result<Vec<BoundTool>, RuntimeError> {
        let cache = &self.compiled;
        let o = org.as_str();
        let mut stale_providers: Vec<String> = bindings
            .iter()
            .filter(|b| {
                cache
                    .provider(o, &b.binding.provider_id, b.provider_version)
                    .is_none()
            })
            .map(|b| b.binding.provider_id.clone())
            .collect();
        stale_providers.sort();
        stale_providers.dedup();
        // what this call read and compiled is kept here too: the replica's cache may be
        // cleared (it is bounded) between filling it and reading it back
        let mut fresh_providers: HashMap<String, Arc<Provider>> = HashMap::new();
        if !stale_providers.is_empty() {
            for provider in store::providers::get_many(&self.pool, org, &stale_providers).await? {
                let id = provider.id.clone();
                fresh_providers.insert(id, cache.put_provider(o, provider));
            }
        }
        // a tool is compiled against its provider: either one changing recompiles it
        let version = |b: &VersionedBinding| (b.tool_version, b.provider_version);
        let stale_tools: Vec<String> = bindings
            .iter()
            .filter(|b| cache.tool(o, &b.binding.tool_id, version(b)).is_none())
            .map(|b| b.binding.tool_id.clone())
            .collect();
        let mut fresh_tools = HashMap::new();
        if !stale_tools.is_empty() {
            for tool in store::tools::get_many(&self.pool, org, &stale_tools).await? {
                let provider = fresh_providers
                    .get(&tool.provider_id)
                    .cloned()
                    .or_else(|| cache.latest_provider(o, &tool.provider_id))
                    .ok_or(RuntimeError::NotFound("provider"))?;
                let id = tool.id.clone();
                fresh_tools.insert(id, cache.put_tool(o, tool, &provider));
            }
        }
        let mut tools = Vec::with_capacity(bindings.len());
        for b in bindings {
            // a write between the two reads leaves a newer version: use what was read
            let compiled = fresh_tools
                .get(&b.binding.tool_id)
                .cloned()
                .or_else(|| cache.tool(o, &b.binding.tool_id, version(&b)))
                .or_else(|| cache.latest_tool(o, &b.binding.tool_id))
                .ok_or(RuntimeError::NotFound("tool"))?;
            let provider = fresh_providers
                .get(&b.binding.provider_id)
                .cloned()
                .or_else(|| cache.provider(o, &b.binding.provider_id, b.provider_version))
                .or_else(|| cache.latest_provider(o, &b.binding.provider_id))
                .ok_or(RuntimeError::NotFound("provider"))?;
            // P14: what the tool's walks learned joins what its schema says
            let learned = b
                .paging
                .as_ref()
                .and_then(|(v, _)| {
                    serde_json::from_value::<loopgate_engine::Learned>(v.clone()).ok()
                })
                .filter(|l| !l.is_empty());
            let analysis = match learned {
                Some(l) => Arc::new(compiled.analysis.with_learned(l)),
                None => compiled.analysis.clone(),
            };
            tools.push(BoundTool {
                binding: b.binding,
                tool: compiled.tool.clone(),
                analysis,
                paging_confirmed: b.paging.map(|(_, at)| at),
                template: compiled.template.clone(),
                provider,
                org_credential: b.org_credential,
                connection: b.connection,
            });
        }
        Ok(tools)
    }
}
