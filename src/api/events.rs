//! `GET /v1/tool-calls/{call_id}/events` and `GET /v1/workflows/{workflow_id}/runs/{run_id}/events`:
//! a call's or run's UI-message stream from any replica — live while it runs (relayed
//! through Redis), at once when it has finished — for the same caller only. A client
//! reconnecting with `Last-Event-ID` gets what came after it, while it is buffered.

use actix_web::{web, HttpRequest, HttpResponse};
use bytes::Bytes;
use tokio::sync::mpsc;

use super::error::{or_not_found, ApiError, Problem};
use super::extract::RuntimeAccess;
use super::sse::{event, streaming, UiMessageStream, DONE};
use crate::api::state::AppState;
use crate::call::event_feed::{follow, Event, Finished};
use crate::call::event_log;
use crate::call::event_replay;
use crate::call::RuntimeError;
use crate::store::{workflow_runs, workflows};

fn last_event_id(req: &HttpRequest) -> Option<String> {
    req.headers()
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty() && v.len() <= 64)
        .map(str::to_string)
}

/// Follows `key` in a spawned task and streams what it finds as SSE.
fn stream<F, Fut>(
    state: web::Data<AppState>,
    key: String,
    last: Option<String>,
    record: F,
) -> HttpResponse
where
    F: Fn() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Result<Option<Finished>, RuntimeError>> + Send,
{
    let (tx, mut rx) = mpsc::channel::<Event>(64);
    actix_web::rt::spawn(async move {
        let rt = &state.runtime;
        if let Err(e) = follow(rt.events(), rt.walker().drain(), &key, last, record, tx).await {
            tracing::warn!(error = %e, "following events failed");
        }
    });
    let body = futures_util::stream::poll_fn(move |cx| {
        rx.poll_recv(cx).map(|o| {
            o.map(|e| {
                let text = match e {
                    Event::Chunk(id, chunk) => event(id.as_deref(), &chunk),
                    Event::Done => DONE.to_string(),
                };
                Ok::<Bytes, actix_web::Error>(Bytes::from(text))
            })
        })
    });
    streaming(body)
}

/// Follow a tool call's UI-message stream (same caller, any replica).
///
/// While the call runs: its chunks so far (from after `Last-Event-ID` when sent), then
/// live ones — progress at most once per 750 ms — until `finish` and `[DONE]`. Once it has
/// finished: its outcome at once (`tool-output-available` or `tool-output-error`). Each
/// buffered chunk carries an SSE `id` to reconnect with.
#[utoipa::path(get, path = "/v1/tool-calls/{call_id}/events", tag = "runtime",
    params(("Last-Event-ID" = Option<String>, Header, description = "resume after this event")),
    responses((status = 200, description = "The UI-message stream", body = UiMessageStream, content_type = "text/event-stream"), (status = 404, body = Problem)),
    security(("runtimeToken" = []), ("orgKey" = ["runtime"])))]
pub async fn tool_call(
    RuntimeAccess(caller): RuntimeAccess,
    state: web::Data<AppState>,
    path: web::Path<String>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let id = path.into_inner();
    let (org, owner) = (caller.org().clone(), caller.thread_owner());
    let records = state.runtime.records().clone();
    let rec = records
        .read(&state.pool, &org, &owner, &id)
        .await
        .map_err(or_not_found("tool call"))?;
    // a token limited to one agent does not follow the user's calls on another
    if !caller.allows_agent(&rec.agent_id) {
        return Err(ApiError::not_found("tool call"));
    }
    let key = event_log::key(&org, &id);
    let pool = state.pool.clone();
    Ok(stream(state, key, last_event_id(&req), move || {
        let (pool, org, owner, id) = (pool.clone(), org.clone(), owner.clone(), id.clone());
        let records = records.clone();
        async move { event_replay::call(&pool, &records, &org, &owner, &id).await }
    }))
}

/// Follow a workflow run's UI-message stream (same caller, any replica).
///
/// As for tool calls: what the run has streamed so far and then live chunks until
/// `finish` and `[DONE]`, or at once the recorded step outputs when it has finished.
#[utoipa::path(get, path = "/v1/workflows/{workflow_id}/runs/{run_id}/events", tag = "runtime",
    params(("Last-Event-ID" = Option<String>, Header, description = "resume after this event")),
    responses((status = 200, description = "The UI-message stream", body = UiMessageStream, content_type = "text/event-stream"), (status = 404, body = Problem)),
    security(("runtimeToken" = []), ("orgKey" = ["runtime"])))]
pub async fn workflow_run(
    RuntimeAccess(caller): RuntimeAccess,
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let (wf, id) = path.into_inner();
    let (org, owner) = (caller.org().clone(), caller.thread_owner());
    let workflow = workflows::get(&state.pool, &org, &wf)
        .await
        .map_err(or_not_found("workflow run"))?;
    if !caller.allows_agent(&workflow.agent_id) {
        return Err(ApiError::not_found("workflow run"));
    }
    workflow_runs::get(&state.pool, &org, &owner, &wf, &id)
        .await
        .map_err(or_not_found("workflow run"))?;
    let key = event_log::key(&org, &id);
    let pool = state.pool.clone();
    Ok(stream(state, key, last_event_id(&req), move || {
        let (pool, org, owner, wf, id) = (
            pool.clone(),
            org.clone(),
            owner.clone(),
            wf.clone(),
            id.clone(),
        );
        async move { event_replay::run(&pool, &org, &owner, &wf, &id).await }
    }))
}
