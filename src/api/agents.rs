//! Studio: agents and their tool bindings.

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use utoipa::ToSchema;

use super::audit::{self, Acting};
use super::error::{or_not_found, ApiError, Problem};
use super::extract::Studio;
use super::list::{ListParams, ListResponse};
use super::validate::{double_option, name};
use crate::api::state::AppState;
use crate::store::agents::{
    self, Agent, AgentFields, AgentPatch as StorePatch, Binding, BindingPatch,
};
use crate::studio::placement::PlacementPreview;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentInput {
    pub name: String,
    pub deployment_id: String,
    /// System instructions handed to the model with every step.
    #[serde(default)]
    pub instructions: String,
    /// Tools offered directly (0–1000) before connected-app toolkits go behind
    /// `search_tools` / `load_tool`; unset: the service-wide setting (15 by default).
    #[schema(minimum = 0, maximum = 1000)]
    pub direct_tool_budget: Option<i32>,
    /// The size guard's conversation budget for this agent's results, in tokens
    /// (1000–1000000); unset: the service-wide setting (25,000 by default).
    #[schema(minimum = 1000, maximum = 1000000)]
    pub token_budget: Option<i32>,
    #[serde(rename = "agentTools", default)]
    pub agent_tools: Vec<Binding>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentPatch {
    pub name: Option<String>,
    pub deployment_id: Option<String>,
    pub instructions: Option<String>,
    /// A new budget of directly offered tools, or `null` for the service-wide setting.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<i32>, minimum = 0, maximum = 1000)]
    pub direct_tool_budget: Option<Option<i32>>,
    /// A new size-guard budget in tokens, or `null` for the service-wide setting.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<i32>, minimum = 1000, maximum = 1000000)]
    pub token_budget: Option<Option<i32>>,
    /// Replaces every binding when present.
    #[serde(rename = "agentTools")]
    pub agent_tools: Option<Vec<Binding>>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BindingInput {
    pub loop_responses: Option<bool>,
    /// Hours, 1–8760, or `null` for the default TTL.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<i32>, minimum = 1, maximum = 8760)]
    pub dataset_ttl_hours: Option<Option<i32>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<bool>)]
    pub discovery: Option<Option<bool>>,
}

/// A binding's id in the audit trail: its path below `/v1/agents`.
fn binding_id(agent_id: &str, tool_id: &str) -> String {
    format!("{agent_id}/{tool_id}")
}

const MAX_INSTRUCTIONS: usize = 32 * 1024;

fn check_budget(b: Option<i32>) -> Result<Option<i32>, ApiError> {
    if b.is_some_and(|b| !(0..=1000).contains(&b)) {
        return Err(ApiError::invalid(
            "direct_tool_budget must be between 0 and 1000",
        ));
    }
    Ok(b)
}

fn check_token_budget(b: Option<i32>) -> Result<Option<i32>, ApiError> {
    let (min, max) = crate::config::bounds::AGENT_TOKEN_BUDGET;
    if b.is_some_and(|b| !(min..=max).contains(&b)) {
        return Err(ApiError::invalid(format!(
            "token_budget must be between {min} and {max}"
        )));
    }
    Ok(b)
}

fn check_instructions(i: &str) -> Result<&str, ApiError> {
    if i.len() > MAX_INSTRUCTIONS {
        return Err(ApiError::invalid("instructions must be at most 32 KiB"));
    }
    Ok(i)
}

/// Create an agent with its tool bindings.
///
/// An agent belongs to a deployment of your org and holds its tools through bindings
/// (`agentTools`); a binding's `loop_responses` turns the loop engine on for that tool (walk
/// every page, fan out, project, filter). Answers `201` with the agent and its bindings.
#[utoipa::path(post, operation_id = "createAgent", path = "/v1/agents", tag = "studio", request_body(content = AgentInput, example = json!({"name": "support", "deployment_id": "dep_KgUmD6SzErRjjMJSWXUl42", "instructions": "Answer from the order system; never guess totals.", "agentTools": [{"tool_id": "tool_8AX6vJoP57gfk79lJdG8Va", "provider_id": "prv_FaPIgNHB5YCkPSXiTW2KWu", "loop_responses": true}]})),
    responses((status = 201, body = Agent, example = json!({"id": "agt_4XltK5PpzapDRd5AyrzcEm", "org_id": "org_YZoKAaXfA24JkOlfALKMDP", "deployment_id": "dep_KgUmD6SzErRjjMJSWXUl42", "name": "support", "instructions": "Answer from the order system; never guess totals.", "direct_tool_budget": null, "token_budget": null, "agentTools": [{"tool_id": "tool_8AX6vJoP57gfk79lJdG8Va", "provider_id": "prv_FaPIgNHB5YCkPSXiTW2KWu", "loop_responses": true, "dataset_ttl_hours": null, "discovery": null}], "created_at": "2026-12-07T21:27:02.717726Z", "updated_at": "2026-12-07T21:27:02.717726Z"})), (status = 422, body = Problem)), security(("orgKey" = ["studio"])))]
pub async fn create(
    key: Studio,
    state: web::Data<AppState>,
    body: web::Json<AgentInput>,
) -> Result<HttpResponse, ApiError> {
    let f = AgentFields {
        name: name(&body.name)?,
        deployment_id: &body.deployment_id,
        instructions: check_instructions(&body.instructions)?,
        direct_tool_budget: check_budget(body.direct_tool_budget)?,
        token_budget: check_token_budget(body.token_budget)?,
    };
    let agent = agents::create(&state.pool, &key.org, &f, &body.agent_tools).await?;
    audit::created(
        &state,
        &key.org,
        key.actor(),
        ("agent", &agent.id),
        &agent,
        &[],
    )
    .await?;
    Ok(HttpResponse::Created().json(agent))
}

/// List agents.
///
/// Paginated, newest first: the first page reports `total`; when `has_more` is true,
/// pass the returned `cursor` back as `?cursor=` to get the next page, until `has_more` is false.
#[utoipa::path(get, operation_id = "listAgents", path = "/v1/agents", tag = "studio", params(ListParams),
    responses((status = 200, body = ListResponse<Agent>, example = json!({"data": [{"id": "agt_4XltK5PpzapDRd5AyrzcEm", "org_id": "org_YZoKAaXfA24JkOlfALKMDP", "deployment_id": "dep_KgUmD6SzErRjjMJSWXUl42", "name": "support", "instructions": "Answer from the order system; count with queryToolResult, never by hand.", "direct_tool_budget": null, "token_budget": null, "agentTools": [{"tool_id": "tool_8AX6vJoP57gfk79lJdG8Va", "provider_id": "prv_FaPIgNHB5YCkPSXiTW2KWu", "loop_responses": true, "dataset_ttl_hours": 6, "discovery": null}, {"tool_id": "tool_J2T54ZJes5fsDocmWMmviT", "provider_id": "prv_FaPIgNHB5YCkPSXiTW2KWu", "loop_responses": false, "dataset_ttl_hours": null, "discovery": null}], "created_at": "2026-12-07T21:28:54.462653Z", "updated_at": "2026-12-07T21:28:54.666088Z"}], "has_more": false, "cursor": null, "total": 1}))), security(("orgKey" = ["studio"])))]
pub async fn list(
    key: Studio,
    state: web::Data<AppState>,
    q: web::Query<ListParams>,
) -> Result<HttpResponse, ApiError> {
    let page = agents::list(&state.pool, &key.org, &q.page()?).await?;
    Ok(HttpResponse::Ok().json(ListResponse::from(page)))
}

/// Get an agent with its bindings.
///
/// The agent, its instructions and each binding with its loop settings.
#[utoipa::path(get, operation_id = "getAgent", path = "/v1/agents/{agent_id}", tag = "studio",
    responses((status = 200, body = Agent, example = json!({"id": "agt_4XltK5PpzapDRd5AyrzcEm", "org_id": "org_YZoKAaXfA24JkOlfALKMDP", "deployment_id": "dep_KgUmD6SzErRjjMJSWXUl42", "name": "support", "instructions": "Answer from the order system; never guess totals.", "direct_tool_budget": null, "token_budget": null, "agentTools": [{"tool_id": "tool_8AX6vJoP57gfk79lJdG8Va", "provider_id": "prv_FaPIgNHB5YCkPSXiTW2KWu", "loop_responses": true, "dataset_ttl_hours": null, "discovery": null}], "created_at": "2026-12-07T21:27:02.717726Z", "updated_at": "2026-12-07T21:27:02.717726Z"})), (status = 404, body = Problem)), security(("orgKey" = ["studio"])))]
pub async fn get(
    key: Studio,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let a = agents::get(&state.pool, &key.org, &path)
        .await
        .map_err(or_not_found("agent"))?;
    Ok(HttpResponse::Ok().json(a))
}

/// Update an agent; `agentTools`, when present, replaces every binding.
///
/// Absent fields stay as they are. Answers `200` with the agent as it now is.
#[utoipa::path(patch, operation_id = "updateAgent", path = "/v1/agents/{agent_id}", tag = "studio", request_body(content = AgentPatch, example = json!({"instructions": "Answer from the order system; count with queryToolResult, never by hand."})),
    responses((status = 200, body = Agent, example = json!({"id": "agt_4XltK5PpzapDRd5AyrzcEm", "org_id": "org_YZoKAaXfA24JkOlfALKMDP", "deployment_id": "dep_KgUmD6SzErRjjMJSWXUl42", "name": "support", "instructions": "Answer from the order system; count with queryToolResult, never by hand.", "direct_tool_budget": null, "token_budget": null, "agentTools": [{"tool_id": "tool_8AX6vJoP57gfk79lJdG8Va", "provider_id": "prv_FaPIgNHB5YCkPSXiTW2KWu", "loop_responses": true, "dataset_ttl_hours": 6, "discovery": null}, {"tool_id": "tool_J2T54ZJes5fsDocmWMmviT", "provider_id": "prv_FaPIgNHB5YCkPSXiTW2KWu", "loop_responses": false, "dataset_ttl_hours": null, "discovery": null}], "created_at": "2026-12-07T21:28:54.462653Z", "updated_at": "2026-12-07T21:28:54.666088Z"})), (status = 404, body = Problem), (status = 422, body = Problem)),
    security(("orgKey" = ["studio"])))]
pub async fn update(
    key: Studio,
    state: web::Data<AppState>,
    path: web::Path<String>,
    body: web::Json<AgentPatch>,
) -> Result<HttpResponse, ApiError> {
    let p = StorePatch {
        name: body.name.as_deref().map(name).transpose()?,
        deployment_id: body.deployment_id.as_deref(),
        instructions: body
            .instructions
            .as_deref()
            .map(check_instructions)
            .transpose()?,
        direct_tool_budget: body.direct_tool_budget.map(check_budget).transpose()?,
        token_budget: body.token_budget.map(check_token_budget).transpose()?,
        agent_tools: body.agent_tools.as_deref(),
    };
    let before = agents::get(&state.pool, &key.org, &path)
        .await
        .map_err(or_not_found("agent"))?;
    let a = agents::update(&state.pool, &key.org, &path, &p)
        .await
        .map_err(or_not_found("agent"))?;
    audit::updated(
        &state,
        &key.org,
        key.actor(),
        ("agent", &a.id),
        &before,
        &a,
        &[],
    )
    .await?;
    Ok(HttpResponse::Ok().json(a))
}

/// Delete an agent.
///
/// Its bindings go with it; threads and stored results expire on their own. Answers `204`.
#[utoipa::path(delete, operation_id = "deleteAgent", path = "/v1/agents/{agent_id}", tag = "studio",
    responses((status = 204), (status = 404, body = Problem)), security(("orgKey" = ["studio"])))]
pub async fn delete(
    key: Studio,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let before = agents::get(&state.pool, &key.org, &path)
        .await
        .map_err(or_not_found("agent"))?;
    agents::delete(&state.pool, &key.org, &path)
        .await
        .map_err(or_not_found("agent"))?;
    audit::deleted(
        &state,
        &key.org,
        key.actor(),
        ("agent", &before.id),
        Some(&before),
    )
    .await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Preview which of the agent's tools are offered directly and which are pooled (D2).
///
/// The same placement a new thread gets (before any `load_tool`): the org's own tools and
/// `discovery: false` bindings direct, `discovery: true` pooled, then connected-app
/// toolkits direct whole, smallest first, while they fit the budget.
#[utoipa::path(get, operation_id = "getAgentPlacement", path = "/v1/agents/{agent_id}/placement", tag = "studio",
    params(("agent_id" = String, Path, description = "The agent")),
    responses((status = 200, body = PlacementPreview, example = json!({"agent_id": "agt_4XltK5PpzapDRd5AyrzcEm", "budget": 15, "direct": [{"tool_id": "tool_8AX6vJoP57gfk79lJdG8Va", "name": "list_items", "toolkit": null, "reason": "the org's own tool: always direct"}], "pooled": []})), (status = 404, body = Problem)), security(("orgKey" = ["studio"])))]
pub async fn placement(
    key: Studio,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let budget = state.settings.direct_tool_budget as usize;
    let p = crate::studio::placement::preview(&state.pool, &key.org, &path, budget).await?;
    Ok(HttpResponse::Ok().json(p))
}

/// Bind one more tool to an agent.
///
/// Answers `201` with the binding; binding a tool twice is `409 conflict`.
#[utoipa::path(post, operation_id = "addAgentTool", path = "/v1/agents/{agent_id}/tools", tag = "studio", request_body(content = Binding, example = json!({"tool_id": "tool_J2T54ZJes5fsDocmWMmviT", "provider_id": "prv_FaPIgNHB5YCkPSXiTW2KWu", "loop_responses": false})),
    responses((status = 201, body = Binding, example = json!({"tool_id": "tool_J2T54ZJes5fsDocmWMmviT", "provider_id": "prv_FaPIgNHB5YCkPSXiTW2KWu", "loop_responses": false, "dataset_ttl_hours": null, "discovery": null})), (status = 404, body = Problem), (status = 409, body = Problem), (status = 422, body = Problem)),
    security(("orgKey" = ["studio"])))]
pub async fn add_binding(
    key: Studio,
    state: web::Data<AppState>,
    path: web::Path<String>,
    body: web::Json<Binding>,
) -> Result<HttpResponse, ApiError> {
    let b = agents::add_binding(&state.pool, &key.org, &path, &body)
        .await
        .map_err(or_not_found("agent"))?;
    let id = binding_id(&path, &b.tool_id);
    audit::created(&state, &key.org, key.actor(), ("binding", &id), &b, &[]).await?;
    Ok(HttpResponse::Created().json(b))
}

/// Get one binding.
///
/// The binding's loop settings (`loop_responses`, `dataset_ttl_hours`, `discovery`) for one
/// tool of the agent.
#[utoipa::path(get, operation_id = "getAgentTool", path = "/v1/agents/{agent_id}/tools/{tool_id}", tag = "studio",
    responses((status = 200, body = Binding, example = json!({"tool_id": "tool_8AX6vJoP57gfk79lJdG8Va", "provider_id": "prv_FaPIgNHB5YCkPSXiTW2KWu", "loop_responses": true, "dataset_ttl_hours": null, "discovery": null})), (status = 404, body = Problem)), security(("orgKey" = ["studio"])))]
pub async fn get_binding(
    key: Studio,
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (agent, tool) = path.into_inner();
    let b = agents::get_binding(&state.pool, &key.org, &agent, &tool)
        .await
        .map_err(or_not_found("binding"))?;
    Ok(HttpResponse::Ok().json(b))
}

/// Change one binding (the Studio's "Allow response looping for this tool").
///
/// Absent fields stay as they are. Answers `200` with the binding.
#[utoipa::path(patch, operation_id = "updateAgentTool", path = "/v1/agents/{agent_id}/tools/{tool_id}", tag = "studio", request_body(content = BindingInput, example = json!({"loop_responses": true, "dataset_ttl_hours": 6})),
    responses((status = 200, body = Binding, example = json!({"tool_id": "tool_8AX6vJoP57gfk79lJdG8Va", "provider_id": "prv_FaPIgNHB5YCkPSXiTW2KWu", "loop_responses": true, "dataset_ttl_hours": 6, "discovery": null})), (status = 404, body = Problem), (status = 422, body = Problem)),
    security(("orgKey" = ["studio"])))]
pub async fn update_binding(
    key: Studio,
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
    body: web::Json<BindingInput>,
) -> Result<HttpResponse, ApiError> {
    let (agent, tool) = path.into_inner();
    if let Some(Some(h)) = body.dataset_ttl_hours {
        if !(1..=8760).contains(&h) {
            return Err(ApiError::invalid(
                "dataset_ttl_hours must be between 1 and 8760, or null",
            ));
        }
    }
    let p = BindingPatch {
        loop_responses: body.loop_responses,
        dataset_ttl_hours: body.dataset_ttl_hours,
        discovery: body.discovery,
    };
    let before = agents::get_binding(&state.pool, &key.org, &agent, &tool)
        .await
        .map_err(or_not_found("binding"))?;
    let b = agents::update_binding(&state.pool, &key.org, &agent, &tool, &p)
        .await
        .map_err(or_not_found("binding"))?;
    let id = binding_id(&agent, &tool);
    audit::updated(
        &state,
        &key.org,
        key.actor(),
        ("binding", &id),
        &before,
        &b,
        &[],
    )
    .await?;
    Ok(HttpResponse::Ok().json(b))
}

/// Unbind a tool from an agent.
///
/// The tool itself stays. Answers `204`.
#[utoipa::path(delete, operation_id = "removeAgentTool", path = "/v1/agents/{agent_id}/tools/{tool_id}", tag = "studio",
    responses((status = 204), (status = 404, body = Problem)), security(("orgKey" = ["studio"])))]
pub async fn remove_binding(
    key: Studio,
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (agent, tool) = path.into_inner();
    let before = agents::get_binding(&state.pool, &key.org, &agent, &tool)
        .await
        .map_err(or_not_found("binding"))?;
    agents::remove_binding(&state.pool, &key.org, &agent, &tool)
        .await
        .map_err(or_not_found("binding"))?;
    let id = binding_id(&agent, &tool);
    audit::deleted(
        &state,
        &key.org,
        key.actor(),
        ("binding", &id),
        Some(&before),
    )
    .await?;
    Ok(HttpResponse::NoContent().finish())
}
