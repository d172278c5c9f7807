//! Agent runtimes: the next step's tools, tool calls (JSON or a streamed
//! UI-message stream), and reading a call's outcome back.

use std::pin::Pin;
use std::task::{Context, Poll};

use actix_web::body::{BodySize, MessageBody};
use actix_web::http::header;
use actix_web::web::Bytes;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::error::{ApiError, Problem};
use super::extract::RuntimeAccess;
use super::sse::{self, UiMessageStream};
use crate::api::state::AppState;
use crate::call::accepted_call::{Recording, ToolCallInput};
use crate::call::steps::StepView;
use crate::call::{ResultJson, RuntimeError};
use crate::store::tool_calls::ToolCallRecord;
use crate::store::StoreError;

impl From<RuntimeError> for ApiError {
    fn from(e: RuntimeError) -> Self {
        let code = e.error_code();
        match e {
            RuntimeError::NotFound(what) => ApiError::not_found(what),
            RuntimeError::Forbidden(d) => ApiError::Forbidden(d),
            RuntimeError::RateLimited {
                detail,
                retry_after,
            } => ApiError::RateLimited {
                detail,
                retry_after_secs: retry_after.as_secs().max(1),
            },
            RuntimeError::Draining => ApiError::Unavailable {
                detail: e.to_string(),
                retry_after_secs: 1,
            },
            RuntimeError::Kv(_)
            | RuntimeError::Result(crate::results::stored_results::ResultError::Store(_)) => {
                ApiError::Unavailable {
                    detail: "the result store is unavailable; retry shortly".into(),
                    retry_after_secs: 2,
                }
            }
            RuntimeError::Result(crate::results::stored_results::ResultError::Unreachable(_)) => {
                ApiError::Unavailable {
                    detail: e.to_string(),
                    retry_after_secs: 2,
                }
            }
            RuntimeError::Store(StoreError::NotFound) => ApiError::not_found("object"),
            RuntimeError::Store(s) => s.into(),
            RuntimeError::Internal(e) => ApiError::Internal(e),
            other => ApiError::Tool {
                code,
                detail: other.to_string(),
            },
        }
    }
}

// The schema of the body `tool_call_body` writes.
/// A tool call's answer: `result` is what enters the conversation.
#[derive(Debug, Serialize, ToSchema)]
pub struct ToolCallResponse {
    pub id: String,
    pub name: String,
    /// What enters the conversation: the tool's own payload (any JSON), possibly cut by
    /// the size guard, or the looping envelope `{items, _itemCount, _pagingComplete, …}`.
    pub result: Value,
}

/// A [`ToolCallResponse`] body with the result's text put in as the engine wrote it: sent
/// as three pieces — the head, the result's own text (moved, not copied: a hit's is tens
/// of KB), the closing brace — with its length known.
fn tool_call_body(id: &str, name: &str, result: ResultJson) -> ToolCallBody {
    let (id, name) = (Value::from(id), Value::from(name));
    let head = format!("{{\"id\":{id},\"name\":{name},\"result\":");
    ToolCallBody(vec![
        Bytes::from_static(b"}"),
        Bytes::from(result.into_string()),
        Bytes::from(head),
    ])
}

/// What [`tool_call_body`] makes: its pieces, last first.
struct ToolCallBody(Vec<Bytes>);

impl MessageBody for ToolCallBody {
    type Error = std::convert::Infallible;

    fn size(&self) -> BodySize {
        BodySize::Sized(self.0.iter().map(|b| b.len() as u64).sum())
    }

    fn poll_next(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Bytes, Self::Error>>> {
        Poll::Ready(self.get_mut().0.pop().map(Ok))
    }
}

/// The tools, system messages and restriction of the thread's next model step.
///
/// Call it before each model step: `system` carries the loop guidance and the agent's
/// instructions, `tools` the tools the model may call now (with the reserved arguments of
/// looping bindings), and `restricted` says a cut result must be read first (only the retrieval
/// tools are offered then).
#[utoipa::path(post, operation_id = "createStep", path = "/v1/agents/{agent_id}/threads/{thread_id}/steps", tag = "runtime",
    responses((status = 200, body = StepView, example = json!({"step": 1, "system": ["Some of your tools can fetch large collections for you. Rules for using them well:\n1. Narrow first: use the tool's own filter and search parameters before …", "Answer from the order system; never guess totals."], "tools": [{"name": "list_items", "description": "List items, newest first; filter by status. This tool is paginated: one call returns one page unless you pass `_all_pages: true`, which fetches every page at …", "input_schema": {"type": "object", "properties": {"page": {"type": "integer", "minimum": 1}, "status": {"enum": ["open", "closed"], "type": "string"}, "per_page": {"type": "integer", "maximum": 5}, "_fields": {"type": "array", "items": {"type": "string"}, "description": "Keep only these dot-paths of every row, e.g. [\"id\", \"customer.name\", \"lines.sku\"] (a path continues through lists). Applied every time it is given; the full rows stay stored under `_resultId`."}, "_all_pages": {"type": "boolean", "description": "true: fetch every page inside this one call and return all rows merged, with `_pagingComplete` saying whether the set is whole. Use it before counting, ranking or summarising."}, "_for_each": {"type": "object", "description": "Run this tool once per value of one of its parameters and merge the rows; each row gets a field named after the parameter holding the value it came from. At most 50 distinct values.", "properties": {"key": {"type": "string", "enum": ["page", "status", "per_page"], "description": "The parameter to vary."}, "values": {"description": "The values to use, one call each: a list, or a reference to a stored result.", "anyOf": [{"type": "array", "items": {}, "maxItems": 50}, {"type": "object", "properties": {"fromResult": {"type": "string", "description": "The `_resultId` of a result earlier in this conversation."}, "path": {"type": "string", "description": "The dot-path of the field of each row, e.g. \"id\" or \"customer.id\"."}, "filter": {"description": "Optional clauses {field, op, value} picking the rows, as queryToolResult's `filter`."}}, "required": ["fromResult", "path"]}]}}, "required": ["key", "values"]}, "_continue": {"type": "string", "description": "The `_continue` of an earlier result of this tool that stopped at a limit: fetches the rest and adds it to that same `_resultId`. Pass it with the same arguments, or alone."}, "_refresh": {"type": "boolean", "description": "true: ignore any cached copy of this exact call and fetch fresh data."}}}}], "restricted": false})), (status = 404, body = Problem)), security(("runtimeToken" = []), ("orgKey" = ["runtime"])))]
pub async fn steps(
    RuntimeAccess(caller): RuntimeAccess,
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (agent, thread) = path.into_inner();
    let view = state.runtime.steps(&caller, &agent, &thread).await?;
    Ok(HttpResponse::Ok().json(view))
}

fn wants_stream(req: &HttpRequest) -> bool {
    req.headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("text/event-stream"))
}

/// Execute a tool call in a thread.
///
/// With `Accept: text/event-stream` the call streams the AI SDK UI-message stream (v1):
/// start, start-step, tool-input-available, data-tool-loop-progress (at most one per
/// 750 ms), tool-output-available or tool-output-error, finish-step, finish, [DONE].
/// The call runs to its end even if the client leaves; read it back with GET /v1/tool-calls/{id}.
///
/// Values by reference (E6): `_for_each.values` (or any array or scalar argument) may be
/// `{"fromResult": "res_…", "path": "id", "filter": {…}}`, read server-side from the thread's
/// own stored result, so an agent never copies ids out of one result into the next call.
/// A fan-out by reference walks 50 values a call; when values are left the envelope says
/// `_stoppedBy: "values"`, counts them in `_forEachValues: {total, done, left}` and carries
/// a `_continue` that walks the next ones into the same `_resultId`.
#[utoipa::path(post, operation_id = "createToolCall", path = "/v1/agents/{agent_id}/threads/{thread_id}/tool-calls", tag = "runtime",
    request_body(content = ToolCallInput, example = json!({"name": "list_items", "arguments": {"_all_pages": true, "_fields": ["id", "status"], "_filter": [{"field": "status", "op": "eq", "value": "open"}]}})),
    responses(
        (status = 200, description = "The call's outcome as JSON, or with `Accept: text/event-stream` its UI-message stream",
            content((ToolCallResponse = "application/json", example = json!({"id": "call_VnzrElf0QzY1eHk6clNdwj", "name": "list_items", "result": {"items": [{"id": 2, "status": "open"}, {"id": 3, "status": "open"}, {"id": 5, "status": "open"}, {"id": 6, "status": "open"}, {"id": 8, "status": "open"}, {"id": 9, "status": "open"}, {"id": 11, "status": "open"}, {"id": 12, "status": "open"}], "_itemCount": 8, "_pagingComplete": true, "_likelyMoreRows": false, "_total": 12, "_stoppedBy": "end", "_note": "Every page was fetched: 12 rows from 3 pages. `_filter` kept 8 of 12 fetched rows.", "_resultId": "res_1a252672b68tGa0W63LsrtDxizQuI5J6E4CU68nSZzG"}})), (UiMessageStream = "text/event-stream"))),
        (status = 400, description = "The arguments do not fit the tool (`invalid_arguments`, `invalid_for_each_key`, `all_pages_unsupported`); `detail` is written for the model", body = Problem),
        (status = 404, description = "No such agent, or a `_resultId` (read, or referenced with `fromResult`) that is not this thread's (`not_found`, `result_not_found`)", body = Problem),
        (status = 409, description = "The thread must first read its cut results (`retrieval_required`), load the tool (`tool_not_loaded`), or the user must connect or bring a credential (`connect_required`, `credential_required`)", body = Problem),
        (status = 410, description = "The stored result expired (`result_expired`), or the result store lost it before it expired (`result_lost`)", body = Problem),
        (status = 502, description = "The upstream API failed (`upstream_failed`), with what was learned from it and nothing of the credential", body = Problem),
        (status = 503, description = "The user's connection is kept but its token could not be renewed just now (`connection_unavailable`): retry after `Retry-After`", body = Problem)),
    security(("runtimeToken" = []), ("orgKey" = ["runtime"])))]
pub async fn tool_call(
    RuntimeAccess(caller): RuntimeAccess,
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
    req: HttpRequest,
    body: web::Json<ToolCallInput>,
) -> Result<HttpResponse, ApiError> {
    let (agent, thread) = path.into_inner();
    // a JSON call's id is first seen in its answer: it is recorded once, when it ends
    let recording = match wants_stream(&req) {
        true => Recording::Live,
        false => Recording::Once,
    };
    let start = state
        .runtime
        .start_call(&caller, &agent, &thread, body.into_inner(), recording)
        .await?;
    if recording == Recording::Live {
        return Ok(sse::stream_call(state, caller, start));
    }
    let (tx, rx) = tokio::sync::oneshot::channel();
    let (id, name) = (start.id.clone(), start.input.name.clone());
    // Spawned so that a client that disconnects does not cancel the walk.
    // the walk stays in the request's trace (its span is the parent)
    let task = async move {
        let out = state
            .runtime
            .execute(&caller, &start, &loopgate_engine::NoProgress)
            .await;
        let _ = tx.send(out);
    };
    actix_web::rt::spawn(tracing::Instrument::in_current_span(task));
    let result = rx.await.map_err(|_| {
        ApiError::Internal(anyhow::anyhow!("tool call task ended without an outcome"))
    })??;
    Ok(HttpResponse::Ok()
        .content_type("application/json")
        .body(tool_call_body(&id, &name, result)))
}

/// Read a tool call's outcome (same caller), e.g. after a disconnect mid-walk.
///
/// The call's record: `status` (`running`, `succeeded`, `failed`), and once it ended the
/// `result` as the model saw it or the problem (`error`) it ended with. Only the caller that
/// made the call may read it (another caller gets `404`).
#[utoipa::path(get, operation_id = "getToolCall", path = "/v1/tool-calls/{call_id}", tag = "runtime",
    responses((status = 200, body = ToolCallRecord, example = json!({"id": "call_VnzrElf0QzY1eHk6clNdwj", "agent_id": "agt_4XltK5PpzapDRd5AyrzcEm", "name": "list_items", "status": "succeeded", "result": {"items": [{"id": 2, "status": "open"}, {"id": 3, "status": "open"}, {"id": 5, "status": "open"}, {"id": 6, "status": "open"}, {"id": 8, "status": "open"}, {"id": 9, "status": "open"}, {"id": 11, "status": "open"}, {"id": 12, "status": "open"}], "_itemCount": 8, "_pagingComplete": true, "_likelyMoreRows": false, "_total": 12, "_stoppedBy": "end", "_note": "Every page was fetched: 12 rows from 3 pages. `_filter` kept 8 of 12 fetched rows.", "_resultId": "res_1a252672b68tGa0W63LsrtDxizQuI5J6E4CU68nSZzG"}, "error": null, "created_at": "2026-12-07T21:27:02.752278Z", "finished_at": "2026-12-07T21:27:02.760643Z"})), (status = 404, body = Problem)), security(("runtimeToken" = []), ("orgKey" = ["runtime"])))]
pub async fn get_tool_call(
    RuntimeAccess(caller): RuntimeAccess,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    // K1: also a call this replica answered whose record is written behind the answer,
    // and one another replica is committing (`call_records::Records::read`)
    let rec = state
        .runtime
        .records()
        .read(&state.pool, caller.org(), &caller.thread_owner(), &path)
        .await
        .map_err(super::error::or_not_found("tool call"))?;
    // a token limited to one agent does not read the user's calls on another
    if !caller.allows_agent(&rec.agent_id) {
        return Err(ApiError::not_found("tool call"));
    }
    Ok(HttpResponse::Ok().json(rec))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[actix_web::test]
    async fn the_body_is_a_tool_call_response() {
        let result =
            ResultJson::from(serde_json::json!({"items": [{"a": "\u{e9}\""}], "_note": "n"}));
        let body = tool_call_body("call_\"x", "list", result.clone());
        let size = body.size();
        let body = actix_web::body::to_bytes(body).await.unwrap();
        assert_eq!(size, BodySize::Sized(body.len() as u64));
        let body = std::str::from_utf8(&body).unwrap();
        let parsed: Value = serde_json::from_str(body).unwrap_or_default();
        let expected = ToolCallResponse {
            id: "call_\"x".into(),
            name: "list".into(),
            result: result.to_value(),
        };
        assert_eq!(parsed, serde_json::to_value(&expected).unwrap_or_default());
        assert!(body.ends_with(&format!("{}}}", result.as_str())));
    }
}
