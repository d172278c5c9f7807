//! A tool as an agent binds it, ready to walk: the binding, the tool and its provider as
//! compiled by this replica, and the credentials read with the agent.

use std::sync::Arc;

use crate::store::agents::Binding;
use crate::store::providers::Provider;
use crate::store::tools::Tool;
use loopgate_engine::ToolAnalysis;

/// A tool as bound to an agent, with what the engine learned from its schema (shared with
/// the replica's `call::compiled_tools::CompiledTools`).
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
    /// P14: when a walk last confirmed what `analysis.learned` holds (read with the agent).
    pub paging_confirmed: Option<chrono::DateTime<chrono::Utc>>,
}
