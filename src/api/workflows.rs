//! Studio: workflow definitions (W1). Steps are checked against the
//! agent's bound tools when written.

use std::collections::HashSet;

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::audit::{self, Acting};
use super::error::{or_not_found, ApiError, Problem};
use super::extract::Studio;
use super::list::{ListParams, ListResponse};
use super::validate::name;
use crate::api::state::AppState;
use crate::store::workflows::{self, Workflow};
use crate::store::{agents, tools, OrgId};

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkflowInput {
    pub name: String,
    pub agent_id: String,
    /// `[{id, type: "tool", tool, input, loop?, if?}]`
    #[schema(value_type = Vec<Object>)]
    pub steps: Value,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkflowPatch {
    pub name: Option<String>,
    #[schema(value_type = Option<Vec<Object>>)]
    pub steps: Option<Value>,
}

/// Checks the step list's shape and that each step names a tool bound to the agent.
async fn check_steps(
    state: &AppState,
    org: &OrgId,
    agent_id: &str,
    steps: &Value,
) -> Result<(), ApiError> {
    // checked before any per-step work
    let max = state.settings.limit_workflow_steps;
    if let Some(n) = steps.as_array().map(Vec::len).filter(|n| *n > max) {
        return Err(ApiError::malformed(format!(
            "steps has {n} entries; at most {max} are allowed in one workflow"
        )));
    }
    let agent = agents::get(&state.pool, org, agent_id).await.map_err(|_| {
        ApiError::invalid(format!("agent_id '{agent_id}' is not an agent of this org"))
    })?;
    let mut bound = HashSet::new();
    for b in &agent.agent_tools {
        if let Ok(t) = tools::get(&state.pool, org, &b.tool_id).await {
            bound.insert(t.name);
        }
    }
    let Some(list) = steps.as_array() else {
        return Err(ApiError::invalid("steps must be an array"));
    };
    let mut ids = HashSet::new();
    for (i, s) in list.iter().enumerate() {
        let id = s
            .get("id")
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty());
        let Some(id) = id else {
            return Err(ApiError::invalid(format!(
                "steps[{i}].id must be a non-empty string"
            )));
        };
        if !ids.insert(id) {
            return Err(ApiError::invalid(format!(
                "steps[{i}].id '{id}' is used twice"
            )));
        }
        if s.get("type").and_then(Value::as_str) != Some("tool") {
            return Err(ApiError::invalid(format!(
                "steps[{i}].type must be \"tool\""
            )));
        }
        let tool = s.get("tool").and_then(Value::as_str).unwrap_or("");
        if !bound.contains(tool) {
            return Err(ApiError::invalid(format!(
                "steps[{i}].tool '{tool}' is not a tool bound to agent '{agent_id}'"
            )));
        }
        if s.get("input").is_some_and(|v| !v.is_object()) {
            return Err(ApiError::invalid(format!(
                "steps[{i}].input must be an object"
            )));
        }
        check_loop_and_if(i, s)?;
        check_values_by_reference(i, s, &ids)?;
    }
    Ok(())
}

/// E6 in a workflow: `loop.for_each.values` as `{"fromResult": "<step id>", "path",
/// "filter"?}` names a step before this one (`ids` holds the ids so far, this step's too).
fn check_values_by_reference(i: usize, step: &Value, ids: &HashSet<&str>) -> Result<(), ApiError> {
    let Some(v) = step
        .pointer("/loop/for_each/values")
        .filter(|v| loopgate_engine::plan::value_ref::is_reference(v))
    else {
        return Ok(());
    };
    let site = loopgate_engine::RefSite::ForEach;
    let r = loopgate_engine::ValueRef::parse(v, &site, &loopgate_engine::Limits::default())
        .map_err(|e| ApiError::invalid(format!("steps[{i}].loop.for_each: {}", e.detail())))?;
    let own = step.get("id").and_then(Value::as_str);
    if own == Some(r.result_id.as_str()) || !ids.contains(r.result_id.as_str()) {
        return Err(ApiError::invalid(format!(
            "steps[{i}].loop.for_each.values.fromResult '{}' must be the id of an earlier step \
             (a workflow reads the rows of its own steps; it has no _resultId)",
            r.result_id
        )));
    }
    Ok(())
}

const LOOP_KEYS: [&str; 5] = ["all_pages", "fields", "for_each", "filter", "cache"];
const IF_OPS: [&str; 9] = [
    "eq", "neq", "gt", "gte", "lt", "lte", "contains", "in", "exists",
];

/// W1/W2 shapes: `loop` names only known capabilities; `if` is `{ref, op, value?}`.
fn check_loop_and_if(i: usize, step: &Value) -> Result<(), ApiError> {
    if let Some(l) = step.get("loop") {
        let Some(obj) = l.as_object() else {
            return Err(ApiError::invalid(format!(
                "steps[{i}].loop must be an object"
            )));
        };
        if let Some(k) = obj.keys().find(|k| !LOOP_KEYS.contains(&k.as_str())) {
            return Err(ApiError::invalid(format!(
                "steps[{i}].loop.{k} is not a loop capability; use {}",
                LOOP_KEYS.join(", ")
            )));
        }
        if let Some(fe) = obj.get("for_each") {
            if !fe.get("key").is_some_and(Value::is_string) || fe.get("values").is_none() {
                return Err(ApiError::invalid(format!(
                    "steps[{i}].loop.for_each must be {{key, values}} (values: a list, {{\"ref\": <JSONPath>}} or {{\"fromResult\": <step id>, \"path\": <field of each row>}})"
                )));
            }
        }
        let cache = obj.get("cache").filter(|c| !c.is_null());
        if let Some(ttl) = cache.map(|c| c.get("ttl_minutes")) {
            if ttl.and_then(Value::as_u64).is_none_or(|m| m == 0) {
                return Err(ApiError::invalid(format!(
                    "steps[{i}].loop.cache must be {{\"ttl_minutes\": <positive integer>}} or null"
                )));
            }
        }
    }
    if let Some(cond) = step.get("if") {
        let has_ref = cond.get("ref").is_some_and(Value::is_string);
        let op_ok = cond
            .get("op")
            .and_then(Value::as_str)
            .is_some_and(|o| IF_OPS.contains(&o));
        if !has_ref || !op_ok {
            return Err(ApiError::invalid(format!(
                "steps[{i}].if must be {{ref: <JSONPath>, op: one of {}, value}}",
                IF_OPS.join(" ")
            )));
        }
    }
    Ok(())
}

/// Create a workflow.
///
/// A workflow is `{name, agent_id, steps}`: tool-call steps of one agent run in order, each
/// able to use the reserved arguments and read earlier steps' outputs and the run's `input`
/// (LOOP_ENGINE W1-W3). Answers `201`.
#[utoipa::path(post, operation_id = "createWorkflow", path = "/v1/workflows", tag = "studio", request_body(content = WorkflowInput, example = json!({"name": "open items", "agent_id": "agt_4XltK5PpzapDRd5AyrzcEm", "steps": [{"id": "all", "type": "tool", "tool": "list_items", "input": {"status": {"ref": "$.input.status"}}, "loop": {"all_pages": true, "fields": ["id", "status"]}}]})),
    responses((status = 201, body = Workflow, example = json!({"id": "wf_rg7j9PlGoSheTglV8fcZWE", "org_id": "org_YZoKAaXfA24JkOlfALKMDP", "agent_id": "agt_4XltK5PpzapDRd5AyrzcEm", "name": "open items", "steps": [{"id": "all", "loop": {"fields": ["id", "status"], "all_pages": true}, "tool": "list_items", "type": "tool", "input": {"status": {"ref": "$.input.status"}}}], "created_at": "2026-12-07T21:27:02.778902Z", "updated_at": "2026-12-07T21:27:02.778902Z"})), (status = 422, body = Problem)), security(("orgKey" = ["studio"])))]
pub async fn create(
    key: Studio,
    state: web::Data<AppState>,
    body: web::Json<WorkflowInput>,
) -> Result<HttpResponse, ApiError> {
    check_steps(&state, &key.org, &body.agent_id, &body.steps).await?;
    let wf = workflows::create(
        &state.pool,
        &key.org,
        name(&body.name)?,
        &body.agent_id,
        &body.steps,
    )
    .await?;
    audit::created(
        &state,
        &key.org,
        key.actor(),
        ("workflow", &wf.id),
        &wf,
        &[],
    )
    .await?;
    Ok(HttpResponse::Created().json(wf))
}

/// List workflows.
///
/// Paginated, newest first: the first page reports `total`; when `has_more` is true,
/// pass the returned `cursor` back as `?cursor=` to get the next page, until `has_more` is false.
#[utoipa::path(get, operation_id = "listWorkflows", path = "/v1/workflows", tag = "studio", params(ListParams),
    responses((status = 200, body = ListResponse<Workflow>, example = json!({"data": [{"id": "wf_rg7j9PlGoSheTglV8fcZWE", "org_id": "org_YZoKAaXfA24JkOlfALKMDP", "agent_id": "agt_4XltK5PpzapDRd5AyrzcEm", "name": "open items, every page", "steps": [{"id": "all", "loop": {"fields": ["id", "status"], "all_pages": true}, "tool": "list_items", "type": "tool", "input": {"status": {"ref": "$.input.status"}}}], "created_at": "2026-12-07T21:28:54.544691Z", "updated_at": "2026-12-07T21:28:54.707917Z"}], "has_more": false, "cursor": null, "total": 1}))), security(("orgKey" = ["studio"])))]
pub async fn list(
    key: Studio,
    state: web::Data<AppState>,
    q: web::Query<ListParams>,
) -> Result<HttpResponse, ApiError> {
    let page = workflows::list(&state.pool, &key.org, &q.page()?).await?;
    Ok(HttpResponse::Ok().json(ListResponse::from(page)))
}

/// Get a workflow.
///
/// Its steps as stored.
#[utoipa::path(get, operation_id = "getWorkflow", path = "/v1/workflows/{workflow_id}", tag = "studio",
    responses((status = 200, body = Workflow, example = json!({"id": "wf_rg7j9PlGoSheTglV8fcZWE", "org_id": "org_YZoKAaXfA24JkOlfALKMDP", "agent_id": "agt_4XltK5PpzapDRd5AyrzcEm", "name": "open items", "steps": [{"id": "all", "loop": {"fields": ["id", "status"], "all_pages": true}, "tool": "list_items", "type": "tool", "input": {"status": {"ref": "$.input.status"}}}], "created_at": "2026-12-07T21:28:54.544691Z", "updated_at": "2026-12-07T21:28:54.544691Z"})), (status = 404, body = Problem)), security(("orgKey" = ["studio"])))]
pub async fn get(
    key: Studio,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let wf = workflows::get(&state.pool, &key.org, &path)
        .await
        .map_err(or_not_found("workflow"))?;
    Ok(HttpResponse::Ok().json(wf))
}

/// Rename a workflow or replace its steps.
///
/// `steps`, when present, replaces every step. Answers `200`.
#[utoipa::path(patch, operation_id = "updateWorkflow", path = "/v1/workflows/{workflow_id}", tag = "studio", request_body(content = WorkflowPatch, example = json!({"name": "open items, every page"})),
    responses((status = 200, body = Workflow, example = json!({"id": "wf_rg7j9PlGoSheTglV8fcZWE", "org_id": "org_YZoKAaXfA24JkOlfALKMDP", "agent_id": "agt_4XltK5PpzapDRd5AyrzcEm", "name": "open items, every page", "steps": [{"id": "all", "loop": {"fields": ["id", "status"], "all_pages": true}, "tool": "list_items", "type": "tool", "input": {"status": {"ref": "$.input.status"}}}], "created_at": "2026-12-07T21:28:54.544691Z", "updated_at": "2026-12-07T21:28:54.707917Z"})), (status = 404, body = Problem), (status = 422, body = Problem)),
    security(("orgKey" = ["studio"])))]
pub async fn update(
    key: Studio,
    state: web::Data<AppState>,
    path: web::Path<String>,
    body: web::Json<WorkflowPatch>,
) -> Result<HttpResponse, ApiError> {
    let cur = workflows::get(&state.pool, &key.org, &path)
        .await
        .map_err(or_not_found("workflow"))?;
    if let Some(steps) = &body.steps {
        check_steps(&state, &key.org, &cur.agent_id, steps).await?;
    }
    let new_name = body.name.as_deref().map(name).transpose()?;
    let wf = workflows::update(
        &state.pool,
        &key.org,
        &cur.id,
        new_name,
        body.steps.as_ref(),
    )
    .await
    .map_err(or_not_found("workflow"))?;
    audit::updated(
        &state,
        &key.org,
        key.actor(),
        ("workflow", &wf.id),
        &cur,
        &wf,
        &[],
    )
    .await?;
    Ok(HttpResponse::Ok().json(wf))
}

/// Delete a workflow.
///
/// Its schedules go with it. Answers `204`.
#[utoipa::path(delete, operation_id = "deleteWorkflow", path = "/v1/workflows/{workflow_id}", tag = "studio",
    responses((status = 204), (status = 404, body = Problem)), security(("orgKey" = ["studio"])))]
pub async fn delete(
    key: Studio,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let before = workflows::get(&state.pool, &key.org, &path)
        .await
        .map_err(or_not_found("workflow"))?;
    workflows::delete(&state.pool, &key.org, &path)
        .await
        .map_err(or_not_found("workflow"))?;
    audit::deleted(
        &state,
        &key.org,
        key.actor(),
        ("workflow", &before.id),
        Some(&before),
    )
    .await?;
    Ok(HttpResponse::NoContent().finish())
}
