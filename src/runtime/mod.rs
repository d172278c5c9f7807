//! The runtime: what an agent runtime asks of loopgate — the tools of the next model
//! step, and the execution of one tool call in a thread — with no HTTP types. It wires
//! the pure engine to the world: the agent's bindings (Postgres), stored results and
//! thread marks (`Kv`), upstream calls (rate limited, SSRF-guarded), progress.

pub mod adapter;
pub mod bound;
pub mod cache;
pub mod call;
pub mod clock;
pub mod connect;
pub mod connections;
pub mod discovery;
pub mod drain;
pub mod error;
pub mod events;
pub mod feed;
pub mod fetch;
pub mod kv;
pub mod replay;
pub mod results;
pub mod resume;
pub mod slots;
pub mod steps;
pub mod stream;

use std::sync::Arc;

use sqlx::PgPool;

use crate::auth::Caller;
use crate::crypto::Cipher;
use crate::engine::{self, Limits, ToolAnalysis};
use crate::metrics::Metrics;
use crate::store::agents::Binding;
use crate::store::deployments::CacheMode;
use crate::store::providers::Provider;
use crate::store::tools::Tool;
use crate::store::{self, OrgId, StoreError};
use crate::upstream::{Caller as HttpCaller, McpSessions, RateLimits};

pub use error::RuntimeError;
pub use kv::Kv;
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
}

/// A tool as bound to an agent, with what the engine learned from its schema.
pub struct BoundTool {
    pub binding: Binding,
    pub tool: Tool,
    pub provider: Provider,
    pub analysis: ToolAnalysis,
}

/// An agent as the runtime needs it.
pub struct AgentView {
    pub id: String,
    /// The cache mode of the agent's deployment (C6).
    pub cache_mode: CacheMode,
    pub instructions: String,
    pub tools: Vec<BoundTool>,
    /// D1: tools offered directly before connected-app toolkits are pooled.
    pub budget: usize,
}

impl AgentView {
    pub fn looping(&self) -> bool {
        self.tools.iter().any(|t| t.binding.loop_responses)
    }
    pub fn tool(&self, name: &str) -> Option<&BoundTool> {
        self.tools.iter().find(|t| t.tool.name == name)
    }
}

impl Runtime {
    /// Loads the agent for this caller: another org's agent is not found, and a token
    /// limited to one agent cannot use another.
    pub async fn agent(&self, caller: &Caller, agent_id: &str) -> Result<AgentView, RuntimeError> {
        if !caller.allows_agent(agent_id) {
            return Err(RuntimeError::Forbidden(
                "this runtime token is limited to another agent".into(),
            ));
        }
        let org = caller.org();
        let agent = store::agents::get(&self.pool, org, agent_id)
            .await
            .map_err(|e| match e {
                StoreError::NotFound => RuntimeError::NotFound("agent"),
                other => other.into(),
            })?;
        let deployment = store::deployments::get(&self.pool, org, &agent.deployment_id).await?;
        let mut tools = Vec::with_capacity(agent.agent_tools.len());
        for binding in agent.agent_tools {
            let tool = store::tools::get(&self.pool, org, &binding.tool_id).await?;
            let provider = store::providers::get(&self.pool, org, &binding.provider_id).await?;
            let analysis = engine::analyze(&tool.input_schema.0);
            tools.push(BoundTool {
                binding,
                tool,
                provider,
                analysis,
            });
        }
        Ok(AgentView {
            id: agent.id,
            cache_mode: deployment.cache,
            instructions: agent.instructions,
            tools,
            budget: agent
                .direct_tool_budget
                .map_or(self.direct_tool_budget, |b| b.max(0) as usize),
        })
    }

    /// The thread of (org, agent, caller, thread key), created on first use.
    pub async fn thread(
        &self,
        caller: &Caller,
        agent_id: &str,
        thread_key: &str,
    ) -> Result<ThreadKey, RuntimeError> {
        if thread_key.is_empty() || thread_key.len() > 200 {
            return Err(RuntimeError::UnknownTool(
                "thread_id must be 1 to 200 characters".into(),
            ));
        }
        let org: &OrgId = caller.org();
        let id = store::threads::get_or_create(
            &self.pool,
            org,
            agent_id,
            &caller.thread_owner(),
            thread_key,
        )
        .await?;
        Ok(ThreadKey {
            org: org.clone(),
            thread_id: id,
        })
    }
}
