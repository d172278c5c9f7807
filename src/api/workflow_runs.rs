//! Workflow runs (W5): start one (JSON, or the UI-message stream), list the
//! runs of a workflow and read one back. Runs are made with runtime credentials (an org
//! key with scope `runtime`, or a runtime token) exactly as tool calls are, and read back
//! by the same caller only: a run's outputs were fetched with that caller's credentials.

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::error::{or_not_found, ApiError, Problem};
use super::extract::{RunReader, RuntimeAccess};
use super::list::{ListParams, ListResponse};
use super::sse::UiMessageStream;
use super::workflow_sse;
use crate::api::state::AppState;
use crate::store::workflow_runs::{self, WorkflowRun};
use crate::store::workflows;
use crate::workflow::{self, Silent};

/// `POST /v1/workflows/{workflow_id}/runs` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RunInput {
    /// The run input, read by refs as `$.input…`.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub input: Option<Value>,
    /// Experiment runs never read from or write to the dataset cache.
    #[serde(default)]
    pub experiment: bool,
}

fn wants_stream(req: &HttpRequest) -> bool {
    req.headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("text/event-stream"))
}

/// Run a workflow.
///
/// Runs the steps in order with the caller's credentials; a failing step fails the run
/// (its output is `{"_error": {code, detail}}`) and later steps do not run; a step whose
/// `if` does not hold is `{"_skipped": true, reason}`. Step errors are in the run, which is
/// still `201` with `status: "failed"`. With `Accept: text/event-stream` the run streams
/// the AI SDK UI-message stream (v1): start, then per step start-step,
/// tool-input-available (toolCallId `<run id>:<step id>`), data-tool-loop-progress (at
/// most one per 750 ms), tool-output-available or tool-output-error, finish-step; then
/// finish and [DONE]. The run is recorded even if the client leaves.
#[utoipa::path(post, operation_id = "createWorkflowRun", path = "/v1/workflows/{workflow_id}/runs", tag = "runtime",
    request_body(content = RunInput, example = json!({"input": {"status": "open"}})),
    responses(
        (status = 201, description = "The run, recorded (`status` says whether every step succeeded)", body = WorkflowRun, example = json!({"id": "run_sxxaFVkFEpH7QGb5cWhsO5", "workflow_id": "wf_rg7j9PlGoSheTglV8fcZWE", "status": "succeeded", "trigger": "api", "input": {"status": "open"}, "experiment": false, "steps": {"all": {"_loop": {"note": "Every page was fetched: 12 rows from 3 pages.", "complete": true, "requests": 3, "itemCount": 12, "stoppedBy": "end"}, "items": [{"id": 1, "status": "closed"}, {"id": 2, "status": "open"}, {"id": 3, "status": "open"}, {"id": 4, "status": "closed"}, {"id": 5, "status": "open"}, {"id": 6, "status": "open"}, {"id": 7, "status": "closed"}, {"id": 8, "status": "open"}, {"id": 9, "status": "open"}, {"id": 10, "status": "closed"}, {"id": 11, "status": "open"}, {"id": 12, "status": "open"}], "total": 12}}, "started_at": "2026-12-07T21:27:02.783722Z", "finished_at": "2026-12-07T21:27:02.788542Z"})),
        (status = 200, description = "With `Accept: text/event-stream`: the run's UI-message stream", body = UiMessageStream, content_type = "text/event-stream"),
        (status = 403, body = Problem), (status = 404, body = Problem)),
    security(("runtimeToken" = []), ("orgKey" = ["runtime"])))]
pub async fn create(
    RuntimeAccess(caller): RuntimeAccess,
    state: web::Data<AppState>,
    path: web::Path<String>,
    req: HttpRequest,
    body: web::Json<RunInput>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let input = body
        .input
        .unwrap_or_else(|| Value::Object(Default::default()));
    let start = workflow::start(&state.runtime, &caller, &path, input, body.experiment).await?;
    if wants_stream(&req) {
        return Ok(workflow_sse::stream_run(state, caller, start));
    }
    let (tx, rx) = tokio::sync::oneshot::channel();
    // Spawned so that a client that disconnects does not cancel the run.
    actix_web::rt::spawn(async move {
        let out = workflow::execute(&state.runtime, &caller, &start, &Silent).await;
        let _ = tx.send(out);
    });
    let run = rx.await.map_err(|_| {
        ApiError::Internal(anyhow::anyhow!(
            "workflow run task ended without an outcome"
        ))
    })??;
    Ok(HttpResponse::Created().json(run))
}

/// `GET /v1/workflows/{workflow_id}/runs` filter.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RunFilter {
    /// Only the runs this schedule made (`sch_…`).
    pub schedule_id: Option<String>,
}

/// List the caller's runs of a workflow.
///
/// Paginated, newest first: the first page reports `total`; when `has_more` is true,
/// pass the returned `cursor` back as `?cursor=` to get the next page, until `has_more` is false.
/// Listed: the runs made by the same caller (runtime token user, or org key); the
/// scheduled runs (`trigger: "schedule"`) of the org for an org key (scope `runtime` or
/// `studio`), and those run as the token's user for a runtime token. `?schedule_id=`
/// keeps only one schedule's runs (one per due time, `scheduled_for`).
#[utoipa::path(get, operation_id = "listWorkflowRuns", path = "/v1/workflows/{workflow_id}/runs", tag = "runtime", params(ListParams, RunFilter),
    responses((status = 200, body = ListResponse<WorkflowRun>, example = json!({"data": [{"id": "run_sxxaFVkFEpH7QGb5cWhsO5", "workflow_id": "wf_rg7j9PlGoSheTglV8fcZWE", "status": "succeeded", "trigger": "api", "input": {"status": "open"}, "experiment": false, "steps": {"all": {"_loop": {"note": "Every page was fetched: 12 rows from 3 pages.", "complete": true, "requests": 3, "itemCount": 12, "stoppedBy": "end"}, "items": [{"id": 1, "status": "closed"}, {"id": 2, "status": "open"}, {"id": 3, "status": "open"}, {"id": 4, "status": "closed"}, {"id": 5, "status": "open"}, {"id": 6, "status": "open"}, {"id": 7, "status": "closed"}, {"id": 8, "status": "open"}, {"id": 9, "status": "open"}, {"id": 10, "status": "closed"}, {"id": 11, "status": "open"}, {"id": 12, "status": "open"}], "total": 12}}, "started_at": "2026-12-07T21:28:54.550796Z", "finished_at": "2026-12-07T21:28:54.559236Z"}], "has_more": false, "cursor": null, "total": 1})), (status = 404, body = Problem)), security(("runtimeToken" = []), ("orgKey" = ["runtime"]), ("orgKey" = ["studio"])))]
pub async fn list(
    RunReader(caller): RunReader,
    state: web::Data<AppState>,
    path: web::Path<String>,
    q: web::Query<ListParams>,
    filter: web::Query<RunFilter>,
) -> Result<HttpResponse, ApiError> {
    let org = caller.org();
    let wf = workflows::get(&state.pool, org, &path)
        .await
        .map_err(or_not_found("workflow"))?;
    // a token limited to one agent does not see the runs of another agent's workflows
    if !caller.allows_agent(&wf.agent_id) {
        return Err(ApiError::not_found("workflow"));
    }
    let page = workflow_runs::list(
        &state.pool,
        org,
        &caller.thread_owner(),
        &wf.id,
        filter.schedule_id.as_deref(),
        &q.page()?,
    )
    .await?;
    Ok(HttpResponse::Ok().json(ListResponse::from(page)))
}

/// Read a workflow run (same caller, or a scheduled run as listed), e.g. after a disconnect mid-run.
///
/// The run's status, each step's output (`steps`) and its timing; the end of a run is also
/// delivered to the org's webhook endpoints (`workflow_run.succeeded`, `workflow_run.partial`,
/// `workflow_run.failed`), signed as Standard Webhooks.
#[utoipa::path(get, operation_id = "getWorkflowRun", path = "/v1/workflows/{workflow_id}/runs/{run_id}", tag = "runtime",
    responses((status = 200, body = WorkflowRun, example = json!({"id": "run_sxxaFVkFEpH7QGb5cWhsO5", "workflow_id": "wf_rg7j9PlGoSheTglV8fcZWE", "status": "succeeded", "trigger": "api", "input": {"status": "open"}, "experiment": false, "steps": {"all": {"_loop": {"note": "Every page was fetched: 12 rows from 3 pages.", "complete": true, "requests": 3, "itemCount": 12, "stoppedBy": "end"}, "items": [{"id": 1, "status": "closed"}, {"id": 2, "status": "open"}, {"id": 3, "status": "open"}, {"id": 4, "status": "closed"}, {"id": 5, "status": "open"}, {"id": 6, "status": "open"}, {"id": 7, "status": "closed"}, {"id": 8, "status": "open"}, {"id": 9, "status": "open"}, {"id": 10, "status": "closed"}, {"id": 11, "status": "open"}, {"id": 12, "status": "open"}], "total": 12}}, "started_at": "2026-12-07T21:27:02.783722Z", "finished_at": "2026-12-07T21:27:02.788542Z"})), (status = 404, body = Problem)), security(("runtimeToken" = []), ("orgKey" = ["runtime"]), ("orgKey" = ["studio"])))]
pub async fn get(
    RunReader(caller): RunReader,
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (wf, id) = path.into_inner();
    let workflow = workflows::get(&state.pool, caller.org(), &wf)
        .await
        .map_err(or_not_found("workflow run"))?;
    if !caller.allows_agent(&workflow.agent_id) {
        return Err(ApiError::not_found("workflow run"));
    }
    let run = workflow_runs::get(&state.pool, caller.org(), &caller.thread_owner(), &wf, &id)
        .await
        .map_err(or_not_found("workflow run"))?;
    Ok(HttpResponse::Ok().json(run))
}
