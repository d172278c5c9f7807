//! `/v1/agents/{agent_id}/mcp`: the agent as an MCP server over streamable HTTP
//! (M2). Same bearer tokens as the runtime API (401 without one, naming the endpoint's
//! RFC 9728 metadata, served at `/.well-known/oauth-protected-resource/...`); a token of
//! another agent is 403 whatever the method; a request whose `Origin` is not this
//! server's own is refused (403), as the transport's security rules ask. The protocol
//! itself lives in `mcp::server` (and `mcp::tasks`, M3); this file maps HTTP onto it and
//! spawns the calls, tasks' included, so that a client that leaves never stops one.

use actix_web::{web, HttpRequest, HttpResponse};
use bytes::Bytes;
use serde_json::Value;
use tokio::sync::mpsc;

use super::error::{or_not_found, ApiError, Problem};
use super::extract::RuntimeAccess;
use super::mcp_auth::challenge;
use crate::api::state::AppState;
use crate::auth::Caller;
use crate::mcp::server::{self, Answer, BatchAnswer, Body, Incoming, McpError};
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

/// The `MCP-Protocol-Version` header, when present, names a supported revision.
fn check_version(req: &HttpRequest) -> Result<(), ApiError> {
    if let Some(v) = header(req, "mcp-protocol-version") {
        if !server::supported_version(v) {
            return Err(ApiError::malformed(format!(
                "MCP-Protocol-Version {v} is not supported; supported: {}",
                server::PROTOCOL_VERSIONS.join(", ")
            )));
        }
    }
    Ok(())
}

/// A request in a session names the version that session negotiated, when it names one
/// (streamable HTTP: every request after `initialize` carries `MCP-Protocol-Version`; one
/// without it is taken as the session's own): another is `400`.
fn same_version(session: &server::Session, named: &str) -> Result<(), ApiError> {
    match named == session.version {
        true => Ok(()),
        false => Err(ApiError::malformed(format!(
            "MCP-Protocol-Version {named} is not this session's: it negotiated {}",
            session.version
        ))),
    }
}

/// The caller of an MCP request, or the response refusing it: 401 (with the metadata
/// challenge) without valid credentials, 403 for a runtime token limited to another agent
/// — the same on POST, GET and DELETE.
fn gate(
    req: &HttpRequest,
    agent: &str,
    access: Result<RuntimeAccess, ApiError>,
) -> Result<Caller, Box<HttpResponse>> {
    use actix_web::ResponseError;
    let refuse = |e: ApiError| {
        let mut res = e.error_response();
        challenge(req, &mut res);
        Box::new(res)
    };
    let RuntimeAccess(caller) = access.map_err(refuse)?;
    if !caller.allows_agent(agent) {
        return Err(refuse(ApiError::Forbidden(
            "this runtime token is limited to another agent".into(),
        )));
    }
    check_origin(req).map_err(refuse)?;
    check_version(req).map_err(refuse)?;
    Ok(caller)
}

fn ctx<'a>(state: &'a AppState, caller: &'a Caller, agent: &'a str) -> server::Ctx<'a> {
    server::Ctx {
        rt: &state.runtime,
        caller,
        agent_id: agent,
        idle_seconds: state.settings.mcp_server_session_idle_seconds,
    }
}

/// Another org's agent is not found, even where the answer would not depend on the
/// agent: no route tells another org anything but 404 about an id, so ids cannot be
/// probed.
async fn own_agent(state: &AppState, caller: &Caller, agent: &str) -> Result<(), ApiError> {
    agents::get(&state.pool, caller.org(), agent)
        .await
        .map_err(or_not_found("agent"))?;
    Ok(())
}

fn wants_sse(req: &HttpRequest) -> bool {
    header(req, "accept").is_some_and(|a| a.contains("text/event-stream"))
}

/// Send one JSON-RPC message (or, in a 2025-03-26 session, a batch) to the agent's MCP
/// server.
///
/// `initialize` opens a session (one thread) and returns its `Mcp-Session-Id`; later
/// requests carry it, and one that names a session never issued, ended or expired is
/// `404`. `tools/list` is the thread's `steps` answer; `tools/call` answers as an SSE
/// stream (progress and `tools/list_changed` notifications, then the result) when the
/// client accepts one, else as JSON. In a `2025-11-25` session a `tools/call` with `task`
/// is answered at once with a `CreateTaskResult`, and `tasks/get`, `tasks/result`,
/// `tasks/list` and `tasks/cancel` follow the task from any replica (M3). Notifications
/// and responses get `202`.
#[utoipa::path(post, path = "/v1/agents/{agent_id}/mcp", tag = "runtime",
    request_body(content = Object, description = "A JSON-RPC 2.0 message, or a batch of them in a 2025-03-26 session (MCP, streamable HTTP)", example = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "example-client", "version": "1.0.0"}}})),
    responses((status = 200, description = "A JSON-RPC response (or a batch's responses), as JSON or an SSE stream",
                  content((Object = "application/json", example = json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-06-18", "capabilities": {"tools": {"listChanged": true}}, "serverInfo": {"name": "loopgate", "version": "0.1.0"}, "instructions": "Some of your tools can fetch large collections for you. Rules for using them well:\n1. Narrow first: use the tool's own filter and search parameters before …"}})), (String = "text/event-stream"))),
              (status = 202, description = "A notification or response was accepted"),
              (status = 400, description = "A malformed request or a batch of more than 32 messages (problem+json), or a batch in a session whose MCP version has no batches (a JSON-RPC error, -32600, as streamable HTTP allows)",
                  content((Problem = "application/problem+json"), (serde_json::Value = "application/json"))),
              (status = 401, body = Problem), (status = 403, body = Problem),
              (status = 404, description = "Not an agent of the caller's org, or an unknown, ended or expired session", body = Problem)),
    security(("runtimeToken" = []), ("orgKey" = ["runtime"])))]
pub async fn post(
    access: Result<RuntimeAccess, ApiError>,
    state: web::Data<AppState>,
    path: web::Path<String>,
    req: HttpRequest,
    body: Bytes,
) -> Result<HttpResponse, ApiError> {
    let agent = path.into_inner();
    let caller = match gate(&req, &agent, access) {
        Ok(c) => c,
        Err(refused) => return Ok(*refused),
    };
    let body = server::classify(&body)?;
    let session = match header(&req, SESSION_HEADER) {
        Some(id) if !server::is_initialize(&body) => {
            Some(server::resume(ctx(&state, &caller, &agent), id).await?)
        }
        _ => None,
    };
    if let (Some(s), Some(v)) = (&session, header(&req, "mcp-protocol-version")) {
        same_version(s, v)?;
    }
    if session.is_none() {
        // a resumed session proves its org and agent; anything else is answered only
        // for an agent of the caller's org (another org's agent is 404, like a missing one)
        own_agent(&state, &caller, &agent).await?;
    }
    let (id, method, params) = match body {
        Body::Batch(items) => return batch(state, caller, agent, session, items).await,
        Body::One(Incoming::Request { id, method, params }) => (id, method, params),
        Body::One(_) => return Ok(HttpResponse::Accepted().finish()),
    };
    let answer = server::answer(
        ctx(&state, &caller, &agent),
        session.as_ref(),
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
        Answer::Task { message, run } => {
            // M3: answered at once; the call runs spawned, followed from any replica
            if let Some(run) = run {
                actix_web::rt::spawn(async move {
                    crate::mcp::tasks::run(&state.runtime, &caller, run).await;
                });
            }
            return Ok(HttpResponse::Ok().json(message));
        }
    };
    let session = session.map(|s| s.id).unwrap_or_default();
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

/// A batch, answered as one JSON array (spawned: a client that leaves does not cancel
/// its calls).
async fn batch(
    state: web::Data<AppState>,
    caller: Caller,
    agent: String,
    session: Option<server::Session>,
    items: Vec<Incoming>,
) -> Result<HttpResponse, ApiError> {
    let answered = actix_web::rt::spawn(async move {
        server::answer_batch(ctx(&state, &caller, &agent), session.as_ref(), items).await
    })
    .await
    .map_err(|e| ApiError::Internal(anyhow::anyhow!("the batch did not finish: {e}")))?;
    Ok(match answered {
        BatchAnswer::Responses(all) => HttpResponse::Ok().json(all),
        BatchAnswer::Accepted => HttpResponse::Accepted().finish(),
        BatchAnswer::Refused(error) => HttpResponse::BadRequest().json(error),
    })
}

/// The server-to-client stream of streamable HTTP: not offered (`405`); every message
/// loopgate sends answers a POST. A session named that is not live is `404`.
///
/// Streamable HTTP lets a client open a server-to-client stream with GET; loopgate answers
/// every message in the response to the POST that carried it, so this is `405`.
#[utoipa::path(get, path = "/v1/agents/{agent_id}/mcp", tag = "runtime",
    responses((status = 405, body = Problem), (status = 401, body = Problem), (status = 403, body = Problem),
              (status = 404, description = "Not an agent of the caller's org, or an unknown, ended or expired session", body = Problem)),
    security(("runtimeToken" = []), ("orgKey" = ["runtime"])))]
pub async fn get(
    access: Result<RuntimeAccess, ApiError>,
    state: web::Data<AppState>,
    path: web::Path<String>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let caller = match gate(&req, &path, access) {
        Ok(c) => c,
        Err(refused) => return Ok(*refused),
    };
    own_agent(&state, &caller, &path).await?;
    if let Some(id) = header(&req, SESSION_HEADER) {
        server::resume(ctx(&state, &caller, &path), id).await?;
    }
    Err(ApiError::MethodNotAllowed("POST, DELETE".into()))
}

/// End an MCP session: every later request naming it is `404`. Its thread (stored
/// results, loaded tools) stays until it expires.
///
/// Name the session with the `Mcp-Session-Id` header (a DELETE without it is `400`). Answers
/// `204`.
#[utoipa::path(delete, path = "/v1/agents/{agent_id}/mcp", tag = "runtime",
    responses((status = 204), (status = 400, body = Problem), (status = 401, body = Problem),
              (status = 403, body = Problem),
              (status = 404, description = "Not an agent of the caller's org, or an unknown, ended or expired session", body = Problem)),
    security(("runtimeToken" = []), ("orgKey" = ["runtime"])))]
pub async fn delete(
    access: Result<RuntimeAccess, ApiError>,
    state: web::Data<AppState>,
    path: web::Path<String>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let caller = match gate(&req, &path, access) {
        Ok(c) => c,
        Err(refused) => return Ok(*refused),
    };
    own_agent(&state, &caller, &path).await?;
    let Some(id) = header(&req, SESSION_HEADER) else {
        return Err(ApiError::malformed(
            "DELETE needs the Mcp-Session-Id header",
        ));
    };
    server::end(ctx(&state, &caller, &path), id).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// The protected-resource metadata (RFC 9728) of an agent's MCP endpoint: the resource
/// and how a token is presented (the `Authorization` header). loopgate issues its tokens
/// itself (runtime tokens, org keys), so no authorization server is named.
///
/// Public (no token): an MCP client reads it after a `401` from `POST
/// /v1/agents/{agent_id}/mcp` to learn that a bearer token goes in the `Authorization` header.
#[utoipa::path(get, path = "/.well-known/oauth-protected-resource/v1/agents/{agent_id}/mcp",
    operation_id = "getAgentMcpResourceMetadata", tag = "runtime",
    responses((status = 200, description = "RFC 9728 protected-resource metadata", body = Object, example = json!({"resource": "https://loopgate.example.com/v1/agents/agt_4XltK5PpzapDRd5AyrzcEm/mcp", "bearer_methods_supported": ["header"], "resource_name": "loopgate agent MCP server"}))))]
pub async fn resource_metadata(
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> HttpResponse {
    let public = state.runtime.public_url();
    HttpResponse::Ok().json(serde_json::json!({
        "resource": format!("{public}/v1/agents/{}/mcp", path.as_str()),
        "bearer_methods_supported": ["header"],
        "resource_name": "loopgate agent MCP server",
    }))
}
