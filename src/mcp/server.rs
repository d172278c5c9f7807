//! Every agent served as an MCP server over streamable HTTP (M2), with no HTTP
//! types: the API layer authenticates, checks `Origin`, reads the body and writes what
//! [`answer`] and [`run_call`] produce.
//!
//! - One MCP session is one thread. The session id (`mcp_…`, random, issued by
//!   `initialize`) *is* the thread key. Each session is recorded in Postgres
//!   ([`crate::store::mcp_sessions`]) with its org, agent, caller and negotiated
//!   version: any replica serves it, and an id never issued, ended (`DELETE`), idle past
//!   its TTL or opened by another caller is unknown (404) — the client starts anew.
//! - Batches (a JSON array) are answered in a session negotiated at 2025-03-26, the one
//!   revision that has them, and refused with a JSON-RPC error otherwise.
//! - `initialize`: the protocol version the client asks for when supported (else the
//!   newest supported), capability `tools.listChanged`, and the step's system messages (A1
//!   guidance, the agent's instructions) as `instructions`.
//! - `tools/list` is the thread's `steps` answer (it counts as the model's next step, so a
//!   cut result restricts the thread from then on, G5); `tools/call` runs the call through
//!   the runtime, streaming `notifications/progress` for the client's `progressToken`
//!   and `notifications/tools/list_changed` when the step's tools differ after the call.
//!   The agent is loaded once per request (with its thread, one statement): the step
//!   before, the call and the step after all use it, and only the thread's state is read
//!   again; an agent changed meanwhile is what the next request sees.
//! - A tool call's error is a result with `isError: true` whose text is the problem's code
//!   and detail, as the REST API's `tool-output-error`; a tool the agent does not have
//!   at all is the JSON-RPC error -32602, and internal failures are JSON-RPC errors.
//! - M3: in a `2025-11-25` session, `initialize` advertises `tasks` and a `tools/call`
//!   with `task` is answered at once as a task ([`tasks`]), followed with `tasks/*`.
//! - A result made of an MCP server's content blocks (images, audio, resources, links:
//!   what M1 keeps as `{content: [...]}`) is served as those blocks.

use std::collections::HashMap;

use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::auth::Caller;
use crate::call::accepted_call::{Recording, ToolCallInput};
use crate::call::steps::StepView;
use crate::call::{Runtime, RuntimeError};
use crate::crypto::random_token;
use crate::mcp::rpc::{call_result, error, response};
use crate::mcp::rpc::{INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND};
use crate::mcp::tasks;
use crate::store::mcp_sessions::{self, SessionKey};
use crate::store::tool_mcp_meta;
use loopgate_engine::{Progress, ProgressSink};

/// Supported protocol revisions, newest first.
pub const PROTOCOL_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
const SESSION_PREFIX: &str = "mcp_";
const SESSION_RANDOM: usize = 32;
/// The one revision whose sessions take JSON-RPC batches (2025-06-18 removed them).
pub const BATCH_VERSION: &str = "2025-03-26";

#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// Not a message this endpoint can take (HTTP 400).
    #[error("{0}")]
    BadRequest(String),
    /// A session id loopgate never issued, or one ended or expired (HTTP 404: the client
    /// starts a new session).
    #[error("unknown MCP session (never issued, ended or expired): send initialize to start one")]
    UnknownSession,
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
}

/// A JSON-RPC message from the client.
#[derive(Debug)]
pub enum Incoming {
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    /// A notification or a response: nothing to answer (HTTP 202).
    Other,
    /// A batch element that is no JSON-RPC message (answered with -32600 in its place).
    Invalid(String),
}

/// A POST body: one message or a batch of them.
#[derive(Debug)]
pub enum Body {
    One(Incoming),
    Batch(Vec<Incoming>),
}

/// Who serves a request: the runtime, the caller and the agent the path names.
#[derive(Clone, Copy)]
pub struct Ctx<'a> {
    pub rt: &'a Runtime,
    pub caller: &'a Caller,
    pub agent_id: &'a str,
    /// `mcp_server_session_idle_seconds`.
    pub idle_seconds: u64,
}

impl Ctx<'_> {
    fn key<'k>(&'k self, id: &'k str, owner: &'k str) -> SessionKey<'k> {
        SessionKey {
            id,
            org: self.caller.org(),
            agent_id: self.agent_id,
            owner,
        }
    }
}

/// A live session: its id and the protocol version negotiated at `initialize`.
#[derive(Debug, Clone)]
pub struct Session {
    pub id: String,
    pub version: String,
}

/// The live session `id` names for this caller and agent (and it counts as used now).
pub async fn resume(ctx: Ctx<'_>, id: &str) -> Result<Session, McpError> {
    if !valid_session(id) {
        return Err(McpError::UnknownSession);
    }
    let owner = ctx.caller.thread_owner();
    match mcp_sessions::touch(ctx.rt.pool(), ctx.key(id, &owner), ctx.idle_seconds)
        .await
        .map_err(RuntimeError::from)?
    {
        Some(version) => Ok(Session {
            id: id.to_string(),
            version,
        }),
        None => Err(McpError::UnknownSession),
    }
}

/// Ends the live session `id`; every later request naming it is unknown (404).
pub async fn end(ctx: Ctx<'_>, id: &str) -> Result<(), McpError> {
    if !valid_session(id) {
        return Err(McpError::UnknownSession);
    }
    let owner = ctx.caller.thread_owner();
    match mcp_sessions::end(ctx.rt.pool(), ctx.key(id, &owner), ctx.idle_seconds)
        .await
        .map_err(RuntimeError::from)?
    {
        true => Ok(()),
        false => Err(McpError::UnknownSession),
    }
}

/// What to send back for one request.
#[derive(Debug)]
pub enum Answer {
    /// A JSON-RPC response, and the session id a new session was given.
    Json {
        message: Value,
        session: Option<String>,
    },
    /// A `tools/call` to run with [`run_call`], streamed.
    Call(CallRequest),
    /// M3: a `tools/call` answered as a task: the `CreateTaskResult` (or the error) to
    /// send at once, and the call to spawn with [`tasks::run`] when it was started.
    Task {
        message: Value,
        run: Option<tasks::TaskRun>,
    },
}

#[derive(Debug, Clone)]
pub struct CallRequest {
    pub id: Value,
    pub name: String,
    pub arguments: Value,
    pub progress_token: Option<Value>,
}

/// The most messages one batch may hold: its calls run one after the other in one
/// request, so its cost is bounded before any of it is read.
pub const MAX_BATCH: usize = 32;

pub fn classify(body: &[u8]) -> Result<Body, McpError> {
    let msg: Value = serde_json::from_slice(body)
        .map_err(|e| McpError::BadRequest(format!("the body is not JSON: {e}")))?;
    match msg {
        Value::Array(items) if items.is_empty() => {
            Err(McpError::BadRequest("an empty JSON-RPC batch".into()))
        }
        Value::Array(items) if items.len() > MAX_BATCH => Err(McpError::BadRequest(format!(
            "a JSON-RPC batch holds at most {MAX_BATCH} messages (this one {}): send the rest in another",
            items.len()
        ))),
        Value::Array(items) => Ok(Body::Batch(
            items
                .into_iter()
                .map(|m| classify_one(m).unwrap_or_else(|e| Incoming::Invalid(e.to_string())))
                .collect(),
        )),
        msg => classify_one(msg).map(Body::One),
    }
}

fn classify_one(msg: Value) -> Result<Incoming, McpError> {
    if msg.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(McpError::BadRequest("not a JSON-RPC 2.0 message".into()));
    }
    match (msg.get("id"), msg.get("method").and_then(Value::as_str)) {
        (Some(id), Some(method)) if !id.is_null() => Ok(Incoming::Request {
            id: id.clone(),
            method: method.to_string(),
            params: msg.get("params").cloned().unwrap_or(Value::Null),
        }),
        _ => Ok(Incoming::Other),
    }
}

/// Whether the body is an `initialize` request (which opens a session, whatever
/// session header came with it).
pub fn is_initialize(body: &Body) -> bool {
    matches!(body, Body::One(Incoming::Request { method, .. }) if method == "initialize")
}

/// Whether `id` has the shape of a session id loopgate issues.
pub fn valid_session(id: &str) -> bool {
    id.strip_prefix(SESSION_PREFIX)
        .is_some_and(|r| r.len() == SESSION_RANDOM && r.bytes().all(|b| b.is_ascii_alphanumeric()))
}

/// Whether a `MCP-Protocol-Version` header names a supported revision.
pub fn supported_version(v: &str) -> bool {
    PROTOCOL_VERSIONS.contains(&v)
}

fn tools_of(step: &StepView) -> Value {
    let tools: Vec<Value> = step
        .tools
        .iter()
        .map(|t| json!({"name": t.name, "description": t.description, "inputSchema": t.input_schema}))
        .collect();
    json!({ "tools": tools })
}

/// The tools of a step with what their MCP servers said of them beyond name, description
/// and schema (`title`, `annotations`, `outputSchema`, kept at sync).
fn tools_with_meta(step: &StepView, meta: &HashMap<String, Value>) -> Value {
    let mut listed = tools_of(step);
    if let Some(tools) = listed["tools"].as_array_mut() {
        for t in tools.iter_mut() {
            let extra = t["name"].as_str().and_then(|n| meta.get(n));
            if let (Some(Value::Object(extra)), Some(o)) = (extra, t.as_object_mut()) {
                for (k, v) in extra {
                    o.insert(k.clone(), v.clone());
                }
                let looping = o.get("inputSchema").is_some_and(takes_reserved_arguments);
                match o
                    .remove("outputSchema")
                    .and_then(|s| served_output_schema(s, looping))
                {
                    Some(schema) => o.insert("outputSchema".into(), schema),
                    None => None,
                };
            }
        }
    }
    listed
}

/// M3: every tool of the agent's own may be called as a task (`optional`); discovery and
/// retrieval tools answer at once and are left unmarked (forbidden).
fn mark_task_support(listed: &mut Value) {
    if let Some(tools) = listed["tools"].as_array_mut() {
        for t in tools.iter_mut() {
            let name = t["name"].as_str().unwrap_or_default();
            if !tasks::never_a_task(name) {
                t["execution"] = json!({"taskSupport": "optional"});
            }
        }
    }
}

/// Whether a tool's listed input schema offers loopgate's reserved arguments (`_fields`,
/// `_all_pages`, …: its binding loops, L2).
fn takes_reserved_arguments(schema: &Value) -> bool {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| p.keys().any(|k| k.starts_with('_')))
}

/// M3: the `outputSchema` served for an upstream tool's, so that every
/// `structuredContent` sent for the tool validates against it. A tool that loops can
/// answer in shapes no schema of the upstream's describes (`_fields` projects rows away,
/// a walk's envelope, `_filter`): left out. Any other is reshaped only by the size guard,
/// whose cut always carries `_resultId` (G1, G2): the upstream's schema, or that.
///
/// What is about the whole document (`$schema`, `$id`, `$defs`, `definitions`) moves to
/// the served schema's root, so a `$ref` to `#/$defs/…` still resolves.
fn served_output_schema(upstream: Value, looping: bool) -> Option<Value> {
    let Value::Object(mut upstream) = upstream else {
        return None;
    };
    if looping {
        return None;
    }
    let mut root = serde_json::Map::new();
    for key in ["$schema", "$id", "$defs", "definitions"] {
        if let Some(v) = upstream.remove(key) {
            root.insert(key.into(), v);
        }
    }
    root.insert("type".into(), json!("object"));
    root.insert("anyOf".into(), json!([
            upstream,
            {
                "type": "object",
                "description": "A result cut by loopgate's size guard: read the rest with queryToolResult or fetchToolResult",
                "required": ["_resultId"],
                "properties": {"_resultId": {"type": "string"}, "_note": {"type": "string"}},
            },
        ]));
    Some(Value::Object(root))
}

/// The answer to one request of `session` (`None` before `initialize`).
pub async fn answer(
    ctx: Ctx<'_>,
    session: Option<&Session>,
    id: Value,
    method: &str,
    params: Value,
) -> Result<Answer, McpError> {
    let Ctx {
        rt,
        caller,
        agent_id,
        ..
    } = ctx;
    let json = |message| {
        Ok(Answer::Json {
            message,
            session: None,
        })
    };
    if method == "initialize" {
        let asked = params.get("protocolVersion").and_then(Value::as_str);
        let version = asked
            .filter(|v| supported_version(v))
            .unwrap_or(PROTOCOL_VERSIONS[0]);
        let session = format!("{SESSION_PREFIX}{}", random_token(SESSION_RANDOM));
        let step = rt.peek_steps(caller, agent_id, &session).await?;
        let owner = caller.thread_owner();
        mcp_sessions::open(rt.pool(), ctx.key(&session, &owner), version)
            .await
            .map_err(RuntimeError::from)?;
        let mut capabilities = json!({"tools": {"listChanged": true}});
        if tasks::in_version(version) {
            capabilities["tasks"] = tasks::capability();
        }
        let result = json!({
            "protocolVersion": version,
            "capabilities": capabilities,
            "serverInfo": {"name": "loopgate", "version": env!("CARGO_PKG_VERSION")},
            "instructions": step.system.join("\n\n"),
        });
        return Ok(Answer::Json {
            message: response(&id, result),
            session: Some(session),
        });
    }
    if method == "ping" {
        return json(response(&id, json!({})));
    }
    let with_tasks = session.is_some_and(|s| tasks::in_version(&s.version));
    let session = match (method, session) {
        (m, None) if matches!(m, "tools/list" | "tools/call") || m.starts_with("tasks/") => {
            return Err(McpError::BadRequest(
                "missing Mcp-Session-Id header: send initialize first".into(),
            ))
        }
        (_, s) => s.map(|s| s.id.as_str()).unwrap_or_default(),
    };
    let asker = tasks::Asker {
        rt,
        caller,
        agent_id,
        session,
    };
    match method {
        "tools/list" => {
            let step = rt.steps(caller, agent_id, session).await?;
            let meta = tool_mcp_meta::of_agent(rt.pool(), caller.org(), agent_id)
                .await
                .map_err(RuntimeError::from)?;
            let mut listed = tools_with_meta(&step, &meta);
            if with_tasks {
                mark_task_support(&mut listed);
            }
            json(response(&id, listed))
        }
        "tools/call" => {
            let Some(name) = params.get("name").and_then(Value::as_str) else {
                return json(error(&id, INVALID_PARAMS, "tools/call needs params.name"));
            };
            let call = CallRequest {
                id,
                name: name.to_string(),
                arguments: params
                    .get("arguments")
                    .cloned()
                    .filter(|a| !a.is_null())
                    .unwrap_or_else(|| json!({})),
                progress_token: params
                    .pointer("/_meta/progressToken")
                    .filter(|t| t.is_string() || t.is_number())
                    .cloned(),
            };
            // M3: asked as a task, in a session that has tasks (else `task` is ignored,
            // as the spec says of a receiver that does not declare the capability)
            match params.get("task").filter(|t| t.is_object() && with_tasks) {
                Some(task) => {
                    let input = ToolCallInput {
                        name: call.name,
                        arguments: call.arguments,
                        experiment: false,
                    };
                    let (message, run) = tasks::create(asker, call.id, input, task).await?;
                    Ok(Answer::Task { message, run })
                }
                None => Ok(Answer::Call(call)),
            }
        }
        "tasks/get" | "tasks/result" | "tasks/list" | "tasks/cancel" if with_tasks => {
            let message = match method {
                "tasks/get" => tasks::get(asker, &id, &params).await?,
                "tasks/result" => tasks::result(asker, &id, &params).await?,
                "tasks/list" => tasks::list(asker, &id, &params).await?,
                _ => tasks::cancel(asker, &id, &params).await?,
            };
            json(message)
        }
        other => json(error(
            &id,
            METHOD_NOT_FOUND,
            &format!("method {other} is not served: this server offers tools only"),
        )),
    }
}

/// What to send back for a batch.
#[derive(Debug)]
pub enum BatchAnswer {
    /// The responses, in the order of the batch's requests.
    Responses(Vec<Value>),
    /// Notifications and responses only: nothing to answer (HTTP 202).
    Accepted,
    /// The session's revision has no batches: one JSON-RPC error (HTTP 400).
    Refused(Value),
}

/// Answers a batch of `session`, one message after the other; a `tools/call` in it is
/// answered by its result alone (its notifications are not sent).
pub async fn answer_batch(
    ctx: Ctx<'_>,
    session: Option<&Session>,
    items: Vec<Incoming>,
) -> BatchAnswer {
    let version = session.map(|s| s.version.as_str());
    if version != Some(BATCH_VERSION) {
        let why = match version {
            Some(v) => format!(
                "JSON-RPC batches are not part of MCP {v}, the version of this session: send one message per request"
            ),
            None => "a JSON-RPC batch needs a session (initialize may not be batched): send initialize on its own first".into(),
        };
        return BatchAnswer::Refused(error(&Value::Null, INVALID_REQUEST, &why));
    }
    let mut out = Vec::new();
    for item in items {
        let (id, method, params) = match item {
            Incoming::Other => continue,
            Incoming::Invalid(why) => {
                out.push(error(&Value::Null, INVALID_REQUEST, &why));
                continue;
            }
            Incoming::Request { id, method, params } => (id, method, params),
        };
        if method == "initialize" {
            out.push(error(
                &id,
                INVALID_REQUEST,
                "initialize may not be part of a batch",
            ));
            continue;
        }
        let message = match answer(ctx, session, id.clone(), &method, params).await {
            Ok(Answer::Json { message, .. }) => message,
            // tasks are not part of a batch's revision; one is run here to its end
            Ok(Answer::Task { message, run }) => {
                if let Some(run) = run {
                    tasks::run(ctx.rt, ctx.caller, run).await;
                }
                message
            }
            Ok(Answer::Call(mut call)) => {
                // notifications are not sent from a batch: none is made (a walk's
                // reports would fill the channel read only after the call)
                call.progress_token = None;
                let (tx, mut rx) = mpsc::channel::<Value>(256);
                let s = session.map(|s| s.id.as_str()).unwrap_or_default();
                run_call(ctx.rt, ctx.caller, ctx.agent_id, s, call, tx).await;
                let mut last = None;
                while let Some(m) = rx.recv().await {
                    last = Some(m);
                }
                last.unwrap_or_else(|| {
                    error(&id, INTERNAL_ERROR, "the call ended without an answer")
                })
            }
            Err(e) => rpc_error(&id, &e),
        };
        out.push(message);
    }
    match out.is_empty() {
        true => BatchAnswer::Accepted,
        false => BatchAnswer::Responses(out),
    }
}

/// A failure of one batched request as its JSON-RPC error.
fn rpc_error(id: &Value, e: &McpError) -> Value {
    match e {
        McpError::BadRequest(d) => error(id, INVALID_REQUEST, d),
        McpError::UnknownSession => error(id, INVALID_REQUEST, &e.to_string()),
        McpError::Runtime(r) if r.code_status().1 == 500 => {
            error(id, INTERNAL_ERROR, "internal error")
        }
        McpError::Runtime(r) => error(id, INTERNAL_ERROR, &format!("{}: {r}", r.code_status().0)),
    }
}

/// Walk progress as `notifications/progress` for the client's token. The engine already
/// throttles reports (S1); `progress` is the request count, which only grows.
struct ProgressNotifier {
    tx: mpsc::Sender<Value>,
    token: Value,
}

impl ProgressSink for ProgressNotifier {
    fn progress(&self, p: &Progress) {
        let mut message = format!(
            "page {} of at most {}, {} items, {} of at most {} requests",
            p.page, p.pages_max, p.items, p.requests, p.requests_max
        );
        if let Some(v) = &p.value {
            message.push_str(&format!(", fetching {v}"));
        }
        let n = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
            "progressToken": self.token, "progress": p.requests, "total": p.requests_max,
            "message": message}});
        // a slow or gone client never holds the walk back
        let _ = self.tx.try_send(n);
    }
}

/// Runs a `tools/call` in the session's thread, sending its notifications and then its
/// response to `out`. Runs to its end even when nobody reads `out` any more.
pub async fn run_call(
    rt: &Runtime,
    caller: &Caller,
    agent_id: &str,
    session: &str,
    call: CallRequest,
    out: mpsc::Sender<Value>,
) {
    // the agent is loaded once for the whole request: the call runs with it, and the
    // tools before and after it are this agent's in the thread's state of that moment
    let loaded = rt.agent_in_thread(caller, agent_id, session).await;
    let before = match &loaded {
        Ok(l) => rt
            .peek_loaded(&l.agent, &l.thread, l.marks.clone())
            .await
            .ok(),
        Err(_) => None,
    };
    // a name neither the agent's nor offered in the step (a retrieval or discovery tool)
    let unknown = match (&loaded, &before) {
        (Ok(l), Some(b)) => {
            l.agent.tool(&call.name).is_none() && !b.tools.iter().any(|t| t.name == call.name)
        }
        _ => false,
    };
    let name = call.name.clone();
    let input = ToolCallInput {
        name: call.name,
        arguments: call.arguments,
        experiment: false,
    };
    // the call's id is never sent to an MCP client: it is recorded once, when it ends
    let started = match loaded {
        Ok(loaded) => {
            rt.start_loaded(caller, loaded, input, Recording::Once)
                .await
        }
        Err(e) => Err(e),
    };
    let (outcome, after) = match started {
        Ok(start) => {
            let outcome = match &call.progress_token {
                Some(token) => {
                    let sink = ProgressNotifier {
                        tx: out.clone(),
                        token: token.clone(),
                    };
                    rt.execute(caller, &start, &sink).await
                }
                None => {
                    rt.execute(caller, &start, &loopgate_engine::NoProgress)
                        .await
                }
            };
            let after = rt.peek_loaded(&start.agent, &start.thread, None).await.ok();
            (outcome, after)
        }
        Err(e) => (Err(e), None),
    };
    let changed = match (&before, &after) {
        (Some(b), Some(a)) => tools_of(b) != tools_of(a),
        _ => false,
    };
    if changed {
        let n = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
        let _ = out.send(n).await;
    }
    let message = match outcome {
        Ok(result) => response(&call.id, call_result(&result)),
        Err(RuntimeError::UnknownTool(detail)) if unknown => error(
            &call.id,
            INVALID_PARAMS,
            &format!("unknown tool {name}: {detail}"),
        ),
        Err(e) if matches!(e.code_status().1, 500) => error(
            &call.id,
            INTERNAL_ERROR,
            "internal error: the call could not be run",
        ),
        Err(e) => response(
            &call.id,
            json!({"content": [{"type": "text", "text": format!("{}: {e}", e.code_status().0)}], "isError": true}),
        ),
    };
    let _ = out.send(message).await;
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    /// M3: an upstream's schema is served with the size guard's cut beside it, its
    /// document-wide keys at the root; a looping tool's is left out.
    #[test]
    fn m3_the_output_schema_served_allows_the_cut_or_is_left_out() {
        let upstream = json!({"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$defs": {"day": {"type": "string"}}, "type": "object",
            "properties": {"day": {"$ref": "#/$defs/day"}}, "additionalProperties": false});
        assert_eq!(served_output_schema(upstream.clone(), true), None);
        assert_eq!(served_output_schema(json!(true), false), None);
        let served = served_output_schema(upstream, false).unwrap();
        assert_eq!(served["$defs"]["day"]["type"], "string");
        assert_eq!(
            served["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
        assert_eq!(served["type"], "object");
        assert_eq!(
            served["anyOf"][0]["properties"]["day"]["$ref"],
            "#/$defs/day"
        );
        assert!(served["anyOf"][0].get("$defs").is_none());
        assert_eq!(served["anyOf"][1]["required"], json!(["_resultId"]));
        assert!(takes_reserved_arguments(
            &json!({"properties": {"_fields": {}}})
        ));
        assert!(!takes_reserved_arguments(
            &json!({"properties": {"day": {}}})
        ));
    }

    #[test]
    fn m2_messages_are_classified() {
        let req = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
        assert!(
            matches!(classify(req).unwrap(), Body::One(Incoming::Request { method, .. }) if method == "tools/list")
        );
        let note = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert!(matches!(
            classify(note).unwrap(),
            Body::One(Incoming::Other)
        ));
        let resp = br#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
        assert!(matches!(
            classify(resp).unwrap(),
            Body::One(Incoming::Other)
        ));
        assert!(classify(b"{\"id\":1,\"method\":\"x\"}").is_err());
        assert!(classify(b"nope").is_err());
    }

    #[test]
    fn m2_content_blocks_pass_through_as_blocks() {
        let img = json!({"content": [{"type": "text", "text": "a chart"},
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            {"type": "resource_link", "uri": "file:///a.csv", "name": "a.csv"}]});
        let r = call_result(&img.clone().into());
        assert_eq!(r["content"], img["content"]);
        assert!(r.get("structuredContent").is_none());
        // text only, other keys, or an unknown block type: JSON text as before
        for v in [
            json!({"content": [{"type": "text", "text": "x"}]}),
            json!({"content": [{"type": "image", "data": "AA=="}], "_truncated": true}),
            json!({"content": [{"type": "video", "data": "AA=="}]}),
        ] {
            let r = call_result(&v.clone().into());
            assert_eq!(r["content"][0]["type"], "text", "{v}");
            assert_eq!(r["structuredContent"], v);
        }
    }

    #[test]
    fn m2_batches_are_classified_element_by_element() {
        let b = br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},{"id":2}]"#;
        let Body::Batch(items) = classify(b).unwrap() else {
            panic!("a batch")
        };
        assert!(matches!(items[0], Incoming::Request { .. }));
        assert!(matches!(items[1], Incoming::Other));
        assert!(matches!(items[2], Incoming::Invalid(_)));
        assert!(classify(b"[]").is_err());
    }

    #[test]
    fn m2_a_batch_is_bounded_before_it_is_read() {
        let batch = |n: usize| {
            let one = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
            format!("[{}]", vec![one; n].join(","))
        };
        assert!(matches!(
            classify(batch(MAX_BATCH).as_bytes()),
            Ok(Body::Batch(items)) if items.len() == MAX_BATCH
        ));
        let Err(McpError::BadRequest(why)) = classify(batch(MAX_BATCH + 1).as_bytes()) else {
            panic!("one more than the bound is refused")
        };
        assert!(why.contains(&MAX_BATCH.to_string()), "{why}");
    }

    #[test]
    fn m2_session_ids_have_one_shape() {
        let id = format!("{SESSION_PREFIX}{}", random_token(SESSION_RANDOM));
        assert!(valid_session(&id), "{id}");
        assert!(!valid_session("mcp_short"));
        assert!(!valid_session(&id.replace("mcp_", "xyz_")));
    }

    #[test]
    fn m2_results_carry_text_and_structured_content() {
        let r = call_result(&json!({"items": [1]}).into());
        assert_eq!(r["structuredContent"], json!({"items": [1]}));
        assert_eq!(r["content"][0]["text"], "{\"items\":[1]}");
        assert!(call_result(&json!([1, 2]).into())
            .get("structuredContent")
            .is_none());
    }
}
