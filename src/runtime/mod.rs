//! The runtime: what an agent runtime asks of loopgate — the tools of the next model
//! step, and the execution of one tool call in a thread — with no HTTP types. It wires
//! the pure engine to the world: the agent's bindings (Postgres), stored results and
//! thread marks (`Kv`), upstream calls (rate limited, SSRF-guarded), progress.

pub mod adapter;
pub mod agent_memory;
pub mod bound;
pub mod cache;
pub mod cache_memory;
pub mod call;
pub mod clock;
pub mod compiled;
pub mod connect;
pub mod connections;
pub mod cpu;
pub mod credential_choice;
pub mod discovery;
pub mod drain;
pub mod error;
pub mod events;
pub mod feed;
pub mod fetch;
pub mod keep;
pub mod kv;
pub mod records;
pub mod refresh_gate;
pub mod replay;
pub mod result_json;
pub mod results;
pub mod resume;
pub mod retrieval;
pub mod slots;
pub mod steps;
pub mod stream;
pub mod thread;

use std::collections::HashMap;
use std::sync::Arc;

use sqlx::PgPool;

use crate::auth::Caller;
use crate::crypto::Cipher;
use crate::metrics::Metrics;
use crate::store::agent_load::{SeenThread, ThreadLookup, VersionedBinding};
use crate::store::agents::Binding;
use crate::store::deployments::CacheMode;
use crate::store::providers::Provider;
use crate::store::tools::Tool;
use crate::store::{self, OrgId, StoreError};
use crate::upstream::{Caller as HttpCaller, McpSessions, RateLimits};
use loopgate_engine::{Limits, ToolAnalysis};

pub use error::RuntimeError;
pub use kv::Kv;
pub use result_json::ResultJson;
pub use results::ThreadKey;

pub struct Runtime {
    pub pool: PgPool,
    pub kv: Kv,
    pub cipher: Cipher,
    pub http: HttpCaller,
    /// Open sessions with MCP servers (M1), reused by every call of this process.
    pub mcp_sessions: McpSessions,
    pub rate_limits: RateLimits,
    pub walks: slots::WalkSlots,
    pub limits: Limits,
    pub metrics: Arc<Metrics>,
    /// Dataset cache: identical walks in this process run once.
    pub coalescer: cache::Coalescer,
    /// Keys credential fingerprints in cache keys (derived from the credential key).
    pub fingerprint_key: [u8; 32],
    pub clock: Arc<dyn clock::WallClock>,
    /// D1: directly offered tools when the agent sets no budget of its own.
    pub direct_tool_budget: usize,
    /// D1: search indexes of agents' pools.
    pub search_indexes: discovery::IndexCache,
    /// D4: this service's public base URL (connect links, the OAuth redirect).
    pub public_url: String,
    /// D4: token requests to authorization servers.
    pub oauth: crate::upstream::oauth::OAuthHttp,
    /// Chunks of running calls and runs, readable from every replica.
    pub events: events::EventLog,
    /// Graceful shutdown: refuses new work, cuts walks at the end of the grace period.
    pub drain: Arc<drain::Drain>,
    /// Compiled tools and providers of this replica, by version.
    pub compiled: compiled::CompiledTools,
    /// One OAuth refresh per connection at a time in this replica (waited for in process).
    pub refresh_gates: refresh_gate::RefreshGates,
    /// Work proportional to a payload's size: off the async workers, capped per org.
    pub cpu: Arc<cpu::Cpu>,
    /// This replica's writer of tool-call records (group commit).
    pub records: records::Records,
    /// A thread's `last_used_at` is written again only once it is this old
    /// ([`thread::touch_interval`]: well below retention's idle time).
    pub thread_touch: std::time::Duration,
    /// Dataset cache entries (and results presented from them) this replica has decoded.
    pub cache_memory: cache_memory::CacheMemory,
    /// The largest dataset cache entry written (`cache_max_entry_bytes`).
    pub cache_max_entry_bytes: usize,
    /// Agents and threads this replica remembers while the org's config is unchanged.
    pub agent_memory: agent_memory::AgentMemory,
}

/// A tool as bound to an agent, with what the engine learned from its schema (shared with
/// the replica's [`compiled::CompiledTools`]).
#[derive(Debug)]
pub struct BoundTool {
    pub binding: Binding,
    pub tool: Arc<Tool>,
    pub provider: Arc<Provider>,
    pub analysis: Arc<ToolAnalysis>,
    /// Where each argument goes in the upstream request (compiled with the provider).
    pub template: Arc<crate::upstream::Template>,
    /// The provider's org credential as this call read it, sealed until it is sent.
    pub org_credential: Option<crate::crypto::Sealed>,
    /// A connected-app tool's connection of the caller as this call read it with the agent
    /// (sealed); `None` where connections were not read (the call reads its own).
    pub connection: Option<crate::store::agent_load::SeenConnection>,
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
            true => agent_memory::read_epoch(&self.kv, org).await.ok().flatten(),
            false => None,
        };
        if let Some(view) = epoch
            .as_ref()
            .and_then(|e| self.agent_memory.agent(org, agent_id, e))
        {
            Metrics::inc(&self.metrics.agent_memory_hits);
            return Ok(view);
        }
        let read_at = std::time::Instant::now();
        let view = Arc::new(self.load_agent(caller, agent_id, None, None).await?.0);
        if let Some(epoch) = epoch {
            self.agent_memory.keep_agent(org, epoch, &view, read_at);
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
        Metrics::inc(&self.metrics.agent_loads);
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
            Some(t) if t != self.limits.token_budget => std::borrow::Cow::Owned(Limits {
                token_budget: t,
                ..self.limits.clone()
            }),
            _ => std::borrow::Cow::Borrowed(&self.limits),
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
            tools.push(BoundTool {
                binding: b.binding,
                tool: compiled.tool.clone(),
                analysis: compiled.analysis.clone(),
                template: compiled.template.clone(),
                provider,
                org_credential: b.org_credential,
                connection: b.connection,
            });
        }
        Ok(tools)
    }
}
