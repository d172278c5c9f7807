//! D2 as the Studio previews it: which of an agent's bound tools the model is offered
//! directly and which wait in the pool behind `search_tools`, under the agent's budget
//! (its own `direct_tool_budget`, else the service's). The placement itself is
//! [`discovery::place`], the same function the runtime uses, so the preview cannot
//! disagree with what a thread is offered (before any `load_tool`).

use std::collections::HashMap;

use serde::Serialize;
use sqlx::PgPool;
use utoipa::ToSchema;

use crate::discovery::{self, Candidate, Place};
use crate::store::{agents, providers, tools, OrgId};

use super::StudioError;

/// One bound tool in the preview.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PlacedTool {
    pub tool_id: String,
    pub name: String,
    /// The connected-app toolkit (D2); absent for the org's own API and MCP tools.
    pub toolkit: Option<String>,
    /// Why it is where it is, in a few words.
    pub reason: String,
}

/// `GET /v1/agents/{agent_id}/placement`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PlacementPreview {
    pub agent_id: String,
    /// Directly offered tools before toolkits are pooled (D1).
    pub budget: usize,
    /// Offered to the model directly, in binding order.
    pub direct: Vec<PlacedTool>,
    /// Behind `search_tools` / `load_tool`, in binding order.
    pub pooled: Vec<PlacedTool>,
}

fn reason(place: Place, discovery: Option<bool>, toolkit: Option<&str>) -> String {
    match (place, discovery, toolkit) {
        (_, Some(false), _) => "always direct (discovery: false)".into(),
        (_, Some(true), _) => "always pooled (discovery: true)".into(),
        (Place::Direct, None, None) => "the org's own tool: always direct".into(),
        (Place::Direct, None, Some(kit)) => format!("toolkit {kit} fits the budget"),
        (Place::Pooled, None, Some(kit)) => format!("toolkit {kit} does not fit the budget"),
        (Place::Pooled, None, None) => "pooled".into(),
    }
}

/// The placement of `agent_id`'s bindings (another org's agent is not found).
pub async fn preview(
    pool: &PgPool,
    org: &OrgId,
    agent_id: &str,
    default_budget: usize,
) -> Result<PlacementPreview, StudioError> {
    let agent = agents::get(pool, org, agent_id)
        .await
        .map_err(StudioError::not_found("agent"))?;
    let tool_ids: Vec<String> = agent
        .agent_tools
        .iter()
        .map(|b| b.tool_id.clone())
        .collect();
    let tools: HashMap<String, tools::Tool> = tools::get_many(pool, org, &tool_ids)
        .await?
        .into_iter()
        .map(|t| (t.id.clone(), t))
        .collect();
    let provider_ids: Vec<String> = tools.values().map(|t| t.provider_id.clone()).collect();
    let providers: HashMap<String, providers::Provider> =
        providers::get_many(pool, org, &provider_ids)
            .await?
            .into_iter()
            .map(|p| (p.id.clone(), p))
            .collect();
    // bindings whose tool is gone are not offered at all, so they are not placed
    let bound: Vec<(&agents::Binding, &tools::Tool, Option<&str>)> = agent
        .agent_tools
        .iter()
        .filter_map(|b| {
            let t = tools.get(&b.tool_id)?;
            let p = providers.get(&t.provider_id)?;
            let kit = discovery::toolkit_of_tool(
                t.kind,
                t.toolkit.as_deref(),
                p.toolkit.as_deref(),
                &p.name,
            );
            Some((b, t, kit))
        })
        .collect();
    let candidates: Vec<Candidate<'_>> = bound
        .iter()
        .map(|(b, _, kit)| Candidate {
            toolkit: *kit,
            discovery: b.discovery,
        })
        .collect();
    let budget = agent
        .direct_tool_budget
        .map_or(default_budget, |b| b.max(0) as usize);
    let places = discovery::place(&candidates, budget);
    let (mut direct, mut pooled) = (Vec::new(), Vec::new());
    for ((b, t, kit), place) in bound.iter().zip(places) {
        let item = PlacedTool {
            tool_id: t.id.clone(),
            name: t.name.clone(),
            toolkit: kit.map(str::to_owned),
            reason: reason(place, b.discovery, *kit),
        };
        match place {
            Place::Direct => direct.push(item),
            Place::Pooled => pooled.push(item),
        }
    }
    Ok(PlacementPreview {
        agent_id: agent.id,
        budget,
        direct,
        pooled,
    })
}
