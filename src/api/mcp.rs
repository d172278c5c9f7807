//! `/v1/agents/{agent_id}/mcp`: the agent as an MCP server over streamable HTTP
//! (M2). Same bearer tokens as the runtime API (401 without one); a request
//! whose `Origin` is not this server's own is refused (403), as the transport's security
//! rules ask. The protocol itself lives in `mcp::server`; this file maps HTTP onto it.

use actix_web::{web, HttpRequest, HttpResponse};
use bytes::Bytes;
use serde_json::Value;
use tokio::sync::mpsc;

use super::error::{or_not_found, ApiError, Problem};
use super::extract::RuntimeAccess;
use crate::api::state::AppState;
use crate::auth::Caller;
use crate::mcp::server::{self, Answer, Incoming, McpError};
use crate::store::agents;

const SESSION_HEADER: &str = "mcp-session-id";

impl From<McpError> for ApiError {
    fn from(e: McpError) -> Self {
        match e {
            McpError::BadRequest(d) => ApiError::malformed(d),
            McpError::UnknownSession => ApiError::not_found("MCP session"),
            McpError::Runtime(r) => r.into(),
        }
    }
}

fn header<'r>(req: &'r HttpRequest, name: &str) -> Option<&'r str> {
    req.headers().get(name).and_then(|v| v.to_str().ok())
}

/// DNS-rebinding guard: a browser page of another origin may not drive the agent.
fn check_origin(req: &HttpRequest) -> Result<(), ApiError> {
    let Some(origin) = header(req, "origin") else {
        return Ok(());
    };
    let host = req.connection_info().host().to_ascii_lowercase();
    let same = url::Url::parse(origin).ok().is_some_and(|u| {
        let h = u.host_str().unwrap_or("").to_ascii_lowercase();
        match u.port() {
            Some(p) => format!("{h}:{p}") == host,
            None => h == host,
        }
    });
    if same {
        Ok(())
    } else {
        Err(ApiError::Forbidden(format!(
            "requests from origin {origin} are not accepted by this MCP endpoint"
        )))
    }
}

/// The session of the request, checked: absent, or one loopgate issued.
fn session(req: &HttpRequest) -> Result<Option<String>, ApiError> {
    if let Some(v) = header(req, "mcp-protocol-version") {
        if !server::supported_version(v) {
            return Err(ApiError::malformed(format!(
                "MCP-Protocol-Version {v} is not supported; supported: {}",
                server::PROTOCOL_VERSIONS.join(", ")
            )));
        }
    }
    match header(req, SESSION_HEADER) {
        None => Ok(None),
        Some(s) if server::valid_session(s) => Ok(Some(s.to_string())),
        Some(_) => Err(McpError::UnknownSession.into()),
    }
}

/// Another org's agent (or one a runtime token is not limited to) is not found, even
/// where the answer would not depend on the agent: no route tells another org anything
/// but 404 about an id, so ids cannot be probed.
async fn own_agent(state: &AppState, caller: &Caller, agent: &str) -> Result<(), ApiError> {
    if !caller.allows_agent(agent) {
        return Err(ApiError::not_found("agent"));
    }
    agents::get(&state.pool, caller.org(), agent)
        .await
        .map_err(or_not_found("agent"))?;
    Ok(())
}

fn wants_sse(req: &HttpRequest) -> bool {
    header(req, "accept").is_some_and(|a| a.contains("text/event-stream"))
}

/// Send one JSON-RPC message to the agent's MCP server.
///
/// `initialize` opens a session (one thread) and returns its `Mcp-Session-Id`; later
/// requests carry it. `tools/list` is the thread's `steps` answer; `tools/call` answers
/// as an SSE stream (progress and `tools/list_changed` notifications, then the result)
/// when the client accepts one, else as JSON. Notifications and responses get `202`.
#[utoipa::path(post, path = "/v1/agents/{agent_id}/mcp", tag = "runtime",
    request_body(content = Object, description = "A JSON-RPC 2.0 message (MCP, streamable HTTP)"),
    responses((status = 200, description = "A JSON-RPC response, as JSON or an SSE stream"),
              (status = 202, description = "A notification or response was accepted"),
              (status = 400, body = Problem), (status = 401, body = Problem), (status = 403, body = Problem),
              (status = 404, body = Problem)),
    security(("runtimeToken" = []), ("orgKey" = ["runtime"])))]
pub async fn post(
    RuntimeAccess(caller): RuntimeAccess,
    state: web::Data<AppState>,
    path: web::Path<String>,
    req: HttpRequest,
    body: Bytes,
) -> Result<HttpResponse, ApiError> {
    check_origin(&req)?;
    let agent = path.into_inner();
    let session = session(&req)?;
    let (id, method, params) = match server::classify(&body)? {
        Incoming::Other => return Ok(HttpResponse::Accepted().finish()),
        Incoming::Request { id, method, params } => (id, method, params),
    };
    let answer = server::answer(
        &state.runtime,
        &caller,
        &agent,
        session.as_deref(),
        id,
        &method,
        params,
    )
    .await?;
    let call = match answer {
        Answer::Json { message, session } => {
            let mut res = HttpResponse::Ok();
            if let Some(s) = session {
                res.insert_header((SESSION_HEADER, s));
            }
            return Ok(res.json(message));
        }
        Answer::Call(call) => call,
    };
    let session = session.unwrap_or_default();
    let (tx, mut rx) = mpsc::channel::<Value>(256);
    // spawned so that a client that leaves does not cancel the walk
    actix_web::rt::spawn(async move {
        server::run_call(&state.runtime, &caller, &agent, &session, call, tx).await;
    });
    if !wants_sse(&req) {
        let mut last = None;
        while let Some(m) = rx.recv().await {
            last = Some(m);
        }
        let last = last.ok_or_else(|| {
            ApiError::Internal(anyhow::anyhow!("tool call ended without an answer"))
        })?;
        return Ok(HttpResponse::Ok().json(last));
    }
    let body = futures_util::stream::poll_fn(move |cx| {
        rx.poll_recv(cx).map(|o| {
            o.map(|m| {
                Ok::<Bytes, actix_web::Error>(Bytes::from(format!("event: message\ndata: {m}\n\n")))
            })
        })
    });
    Ok(HttpResponse::Ok()
        .insert_header(("content-type", "text/event-stream"))
        .insert_header(("cache-control", "no-cache"))
        .insert_header(("x-accel-buffering", "no"))
        .streaming(body))
}

/// The server-to-client stream of streamable HTTP: not offered (`405`); every message
/// loopgate sends answers a POST.
#[utoipa::path(get, path = "/v1/agents/{agent_id}/mcp", tag = "runtime",
    responses((status = 405, body = Problem), (status = 401, body = Problem), (status = 403, body = Problem),
              (status = 404, description = "Not an agent of the caller's org", body = Problem)),
    security(("runtimeToken" = []), ("orgKey" = ["runtime"])))]
pub async fn get(
    RuntimeAccess(caller): RuntimeAccess,
    state: web::Data<AppState>,
    path: web::Path<String>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    check_origin(&req)?;
    own_agent(&state, &caller, &path).await?;
    Err(ApiError::MethodNotAllowed("POST, DELETE".into()))
}

/// End an MCP session. Its thread (stored results, loaded tools) stays until it expires.
#[utoipa::path(delete, path = "/v1/agents/{agent_id}/mcp", tag = "runtime",
    responses((status = 204), (status = 400, body = Problem), (status = 401, body = Problem),
              (status = 403, body = Problem), (status = 404, body = Problem)),
    security(("runtimeToken" = []), ("orgKey" = ["runtime"])))]
pub async fn delete(
    RuntimeAccess(caller): RuntimeAccess,
    state: web::Data<AppState>,
    path: web::Path<String>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    check_origin(&req)?;
    own_agent(&state, &caller, &path).await?;
    match session(&req)? {
        Some(_) => Ok(HttpResponse::NoContent().finish()),
        None => Err(ApiError::malformed(
            "DELETE needs the Mcp-Session-Id header",
        )),
    }
}
