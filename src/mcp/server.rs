//! Every agent served as an MCP server over streamable HTTP (M2), with no HTTP
//! types: the API layer authenticates, checks `Origin`, reads the body and writes what
//! [`answer`] and [`run_call`] produce.
//!
//! - One MCP session is one thread. The session id (`mcp_…`, random, issued by
//!   `initialize`) *is* the thread key, so any replica serves any session with nothing kept
//!   in memory, and a thread stays the caller's own: another caller presenting the same id
//!   reaches a thread of their own, never this one.
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
//!   and detail, as the REST API's `tool-output-error`; only internal failures are
//!   JSON-RPC errors.

use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::auth::Caller;
use crate::call::accepted_call::{Recording, ToolCallInput};
use crate::call::steps::StepView;
use crate::call::{ResultJson, Runtime, RuntimeError};
use crate::crypto::random_token;
use loopgate_engine::{Progress, ProgressSink};

/// Supported protocol revisions, newest first.
pub const PROTOCOL_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
const SESSION_PREFIX: &str = "mcp_";
const SESSION_RANDOM: usize = 32;
/// JSON-RPC error codes.
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
const INTERNAL_ERROR: i64 = -32603;

#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// Not a message this endpoint can take (HTTP 400).
    #[error("{0}")]
    BadRequest(String),
    /// A session id loopgate never issued (HTTP 404: the client starts a new session).
    #[error("unknown MCP session: send initialize to start one")]
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
}

#[derive(Debug, Clone)]
pub struct CallRequest {
    pub id: Value,
    pub name: String,
    pub arguments: Value,
    pub progress_token: Option<Value>,
}

pub fn classify(body: &[u8]) -> Result<Incoming, McpError> {
    let msg: Value = serde_json::from_slice(body)
        .map_err(|e| McpError::BadRequest(format!("the body is not JSON: {e}")))?;
    if msg.is_array() {
        return Err(McpError::BadRequest(
            "JSON-RPC batches are not supported: send one message per request".into(),
        ));
    }
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

/// Whether `id` has the shape of a session id loopgate issues.
pub fn valid_session(id: &str) -> bool {
    id.strip_prefix(SESSION_PREFIX)
        .is_some_and(|r| r.len() == SESSION_RANDOM && r.bytes().all(|b| b.is_ascii_alphanumeric()))
}

/// Whether a `MCP-Protocol-Version` header names a supported revision.
pub fn supported_version(v: &str) -> bool {
    PROTOCOL_VERSIONS.contains(&v)
}

fn response(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

fn tools_of(step: &StepView) -> Value {
    let tools: Vec<Value> = step
        .tools
        .iter()
        .map(|t| json!({"name": t.name, "description": t.description, "inputSchema": t.input_schema}))
        .collect();
    json!({ "tools": tools })
}

/// The answer to one request of `session` (`None` before `initialize`).
pub async fn answer(
    rt: &Runtime,
    caller: &Caller,
    agent_id: &str,
    session: Option<&str>,
    id: Value,
    method: &str,
    params: Value,
) -> Result<Answer, McpError> {
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
        let result = json!({
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": true}},
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
    let session = match (method, session) {
        ("tools/list" | "tools/call", None) => {
            return Err(McpError::BadRequest(
                "missing Mcp-Session-Id header: send initialize first".into(),
            ))
        }
        (_, s) => s.unwrap_or_default(),
    };
    match method {
        "tools/list" => {
            let step = rt.steps(caller, agent_id, session).await?;
            json(response(&id, tools_of(&step)))
        }
        "tools/call" => {
            let Some(name) = params.get("name").and_then(Value::as_str) else {
                return json(error(&id, INVALID_PARAMS, "tools/call needs params.name"));
            };
            Ok(Answer::Call(CallRequest {
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
            }))
        }
        other => json(error(
            &id,
            METHOD_NOT_FOUND,
            &format!("method {other} is not served: this server offers tools only"),
        )),
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

/// A tool call's result as MCP content: the JSON text, and the object itself as
/// `structuredContent` when it is one.
fn call_result(result: &ResultJson) -> Value {
    let value = result.to_value();
    let mut r = json!({"content": [{"type": "text", "text": result.as_str()}], "isError": false});
    if value.is_object() {
        r["structuredContent"] = value;
    }
    r
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn m2_messages_are_classified() {
        let req = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
        assert!(
            matches!(classify(req).unwrap(), Incoming::Request { method, .. } if method == "tools/list")
        );
        let note = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert!(matches!(classify(note).unwrap(), Incoming::Other));
        let resp = br#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
        assert!(matches!(classify(resp).unwrap(), Incoming::Other));
        assert!(classify(b"[]").is_err());
        assert!(classify(b"{\"id\":1,\"method\":\"x\"}").is_err());
        assert!(classify(b"nope").is_err());
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
