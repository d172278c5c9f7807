//! MCP over streamable HTTP, client side (M1). An MCP server registered as a
//! provider is reached through the same guarded [`UpstreamClient`] as an HTTP API: every JSON-RPC
//! message is one `POST` to the provider's endpoint with its credential, under the SSRF
//! guard, its rate limit, the timeout and the byte cap.
//!
//! Owns the handshake (`initialize`, then `notifications/initialized`), sessions
//! (`Mcp-Session-Id`, reused per endpoint and credential, kept in [`McpSessions`]; a
//! reused session the server no longer takes is replaced once, [`session_lost`]),
//! reading an answer sent as JSON or inside an SSE stream (relaying the tool's
//! `notifications/progress` as it comes),
//! `tools/list` paging (`nextCursor`, bounded) and turning a `tools/call` result into the
//! payload the engine reads ([`tool_payload`]). A tool that requires or allows tasks is
//! called as one (M3, [`task`]): created, polled, its result read, cancelled
//! when the call is. Never opens the optional GET stream: every answer loopgate needs
//! comes back on its own POST.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use loopgate_engine::UpstreamProgress;
use serde_json::{json, Map, Value};

use super::error::Redactor;
use super::mcp_progress::ProgressWatch;
use super::mcp_session::{end_later, Session};
pub use super::mcp_session::{McpSessions, SESSIONS_MAX};

pub mod task;
use super::{BodyWatch, CallError, ProviderLimiter, RawResponse, Request, Target, UpstreamClient};
use task::TaskSupport;

/// The protocol revision loopgate asks for; the server's answer decides. 2025-11-25 is
/// the first with tasks (M3), which a server offers only in a session of that revision.
pub const PROTOCOL_VERSION: &str = "2025-11-25";

/// M1, the one rule for a reused session: an answer of 4xx other than 401, 403 and 429
/// means the server no longer takes it (the spec says 404; the TypeScript SDK's example
/// server says 400 "No valid session ID provided"), so a new session is opened and the
/// request sent once more. 401/403 are the credential's, 429 the rate's: a new session
/// would not change them.
fn session_lost(e: &CallError) -> bool {
    matches!(e, CallError::Status { status, .. }
        if (400..500).contains(status) && !matches!(status, 401 | 403 | 429))
}

/// Relays the upstream tool's own progress (M1); the caller throttles it.
pub type OnProgress<'a> = &'a (dyn Fn(UpstreamProgress) + Sync);

/// One MCP server as this call reaches it: its target (endpoint in `base_url`, auth,
/// credential) and its provider's rate limiter.
pub struct McpClient<'a> {
    pub caller: &'a UpstreamClient,
    pub sessions: &'a McpSessions,
    pub target: &'a Target,
    pub rate: Option<&'a ProviderLimiter>,
}

fn left(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now())
}

impl McpClient<'_> {
    /// `tools/list`, every page (following `nextCursor`), at most `max_pages` pages:
    /// more is an error rather than a partial list (a re-sync removes what is missing).
    pub async fn list_tools(
        &self,
        max_pages: usize,
        timeout: Duration,
    ) -> Result<Vec<Value>, CallError> {
        let deadline = Instant::now() + timeout;
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = std::collections::HashSet::new();
        for _ in 0..max_pages {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let page = self.request("tools/list", params, deadline, None).await?;
            match page.get("tools") {
                Some(Value::Array(a)) => tools.extend(a.iter().cloned()),
                _ => {
                    return Err(CallError::Protocol(
                        "answered tools/list without a `tools` array".into(),
                    ))
                }
            }
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) if !next.is_empty() => {
                    if !seen.insert(next.to_string()) {
                        return Err(CallError::Protocol(format!(
                            "repeated the tools/list cursor {next:?}: the list never ends"
                        )));
                    }
                    cursor = Some(next.to_string());
                }
                _ => return Ok(tools),
            }
        }
        Err(CallError::Protocol(format!(
            "has more than {max_pages} pages of tools; nothing was imported"
        )))
    }

    /// `tools/call`, read as the payload the engine parses ([`tool_payload`]), redacted
    /// of the credential whatever its kind (a success as much as an `isError` text). A
    /// `progressToken` goes in `_meta`; the server's progress for it reaches `progress`
    /// as it streams in, before the result.
    ///
    /// M3: a tool whose `support` is required, or optional on a server that offers
    /// tasks for `tools/call`, is called as a task ([`task::Follow`]) in the session
    /// it was created in; the task is cancelled at its server when this future is
    /// dropped or `timeout` ends first.
    pub async fn call_tool(
        &self,
        name: &str,
        args: &Map<String, Value>,
        support: TaskSupport,
        timeout: Duration,
        progress: Option<OnProgress<'_>>,
    ) -> Result<ToolPayload, CallError> {
        let deadline = Instant::now() + timeout;
        let token = format!("loopgate-{}", self.sessions.request_id());
        let redactor = Redactor::new(self.target.credential.as_ref());
        let watch = progress.map(|on| ProgressWatch::new(&token, &redactor, on));
        let feed = |chunk: &[u8]| {
            if let Some(w) = &watch {
                w.chunk(chunk);
            }
        };
        let asked = AtomicBool::new(false);
        let params = |session: &Session| {
            let mut params =
                json!({"name": name, "arguments": args, "_meta": {"progressToken": token}});
            let as_task = support.as_task(session.tool_tasks)?;
            if as_task {
                params["task"] = json!({"ttl": task::ttl_ms(left(deadline))});
            }
            asked.store(as_task, Ordering::Relaxed);
            Ok(params)
        };
        let (session, mut result) = self
            .request_in(
                "tools/call",
                &params,
                deadline,
                watch.as_ref().map(|_| BodyWatch(&feed)),
            )
            .await?;
        // a server may answer a task-augmented call with its result all the same
        if asked.load(Ordering::Relaxed) && task::created(&result) {
            let followed = task::Follow {
                client: self,
                session: &session,
                deadline,
                redactor: &redactor,
                progress,
                watch: watch.as_ref().map(|_| BodyWatch(&feed)),
            };
            result = followed.run(&result).await?;
        }
        // The JSON-RPC body was redacted as bytes by the caller, but a payload is text
        // inside JSON (escaped once more, or `\u`-escaped) until it is read out here:
        // every kind is redacted again, as the engine will see it.
        Ok(match tool_payload(&result) {
            ToolPayload::Error(text) => ToolPayload::Error(redactor.clean(&text)),
            ToolPayload::Text(text) => ToolPayload::Text(redactor.clean(&text)),
            ToolPayload::Json(bytes) => ToolPayload::Json(redactor.clean_bytes(bytes)),
        })
    }

    /// One request in a session (opened or reused). A reused session the server no
    /// longer takes ([`session_lost`]) is replaced once and the request sent again, for
    /// calls and syncs alike; sessions dropped on the way are ended in the background.
    async fn request(
        &self,
        method: &str,
        params: Value,
        deadline: Instant,
        watch: Option<BodyWatch<'_>>,
    ) -> Result<Value, CallError> {
        let params = |_: &Session| Ok(params.clone());
        self.request_in(method, &params, deadline, watch)
            .await
            .map(|(_, v)| v)
    }

    /// [`Self::request`] with params made for the session it goes in (M3: whether a call
    /// is a task depends on what its server offered), answering that session too.
    async fn request_in(
        &self,
        method: &str,
        params: &(dyn Fn(&Session) -> Result<Value, CallError> + Sync),
        deadline: Instant,
        watch: Option<BodyWatch<'_>>,
    ) -> Result<(Session, Value), CallError> {
        let key = McpSessions::key(self.target);
        let (cached, ended) = self.sessions.checkout(&key);
        end_later(self.caller, ended);
        if let Some(session) = cached {
            match self
                .send(
                    Some(&session),
                    method,
                    Some(params(&session)?),
                    deadline,
                    watch,
                )
                .await
            {
                Err(e) if session.id.is_some() && session_lost(&e) => {
                    tracing::info!(error = %e, "the MCP server no longer takes its session: opening a new one");
                    self.sessions.forget(&key, &session);
                }
                other => return other.map(|(_, v)| (session, v)),
            }
        }
        let session = self.handshake(deadline).await?;
        end_later(
            self.caller,
            self.sessions.put(key, self.target, session.clone()),
        );
        let (_, v) = self
            .send(
                Some(&session),
                method,
                Some(params(&session)?),
                deadline,
                watch,
            )
            .await?;
        Ok((session, v))
    }

    /// M3: one request in `session` itself (a task lives in the session that created it:
    /// never replaced here), keeping that session from expiring while it is used.
    pub(super) async fn request_pinned(
        &self,
        session: &Session,
        method: &str,
        params: Value,
        deadline: Instant,
        watch: Option<BodyWatch<'_>>,
    ) -> Result<Value, CallError> {
        self.sessions.touch(&McpSessions::key(self.target), session);
        self.send(Some(session), method, Some(params), deadline, watch)
            .await
            .map(|(_, v)| v)
    }

    async fn handshake(&self, deadline: Instant) -> Result<Session, CallError> {
        let params = json!({
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "loopgate", "version": env!("CARGO_PKG_VERSION")},
        });
        let (raw, result) = self
            .send(None, "initialize", Some(params), deadline, None)
            .await?;
        let session = Session {
            id: header(&raw, "mcp-session-id").map(str::to_string),
            protocol: result
                .get("protocolVersion")
                .and_then(Value::as_str)
                .unwrap_or(PROTOCOL_VERSION)
                .to_string(),
            tool_tasks: result
                .pointer("/capabilities/tasks/requests/tools/call")
                .is_some_and(Value::is_object),
        };
        self.notify(&session, "notifications/initialized", deadline)
            .await?;
        Ok(session)
    }

    fn headers(session: Option<&Session>) -> Vec<(String, String)> {
        let mut headers = vec![(
            "accept".to_string(),
            "application/json, text/event-stream".to_string(),
        )];
        if let Some(s) = session {
            headers.extend(s.headers());
        }
        headers
    }

    async fn notify(
        &self,
        session: &Session,
        method: &str,
        deadline: Instant,
    ) -> Result<(), CallError> {
        let body = json!({"jsonrpc": "2.0", "method": method}).to_string();
        let headers = Self::headers(Some(session));
        let request = Request::Rpc {
            body: body.as_bytes(),
            headers: &headers,
        };
        self.caller
            .send(self.target, request, self.rate, left(deadline))
            .await
            .map(|_| ())
    }

    async fn send(
        &self,
        session: Option<&Session>,
        method: &str,
        params: Option<Value>,
        deadline: Instant,
        watch: Option<BodyWatch<'_>>,
    ) -> Result<(RawResponse, Value), CallError> {
        let rpc = Rpc {
            id: self.sessions.request_id(),
            method,
            params,
        };
        rpc.send(
            self.caller,
            self.target,
            self.rate,
            session,
            left(deadline),
            watch,
        )
        .await
    }
}

/// One JSON-RPC request: what every message loopgate sends an MCP server goes through
/// (M3: a task's cancel too, sent from where no [`McpClient`] lives any more).
pub(super) struct Rpc<'a> {
    pub id: u64,
    pub method: &'a str,
    pub params: Option<Value>,
}

impl Rpc<'_> {
    /// POSTs the request through the guarded `caller` (SSRF guard, credential, byte
    /// cap) and reads its answer, redacted of the credential.
    pub async fn send(
        self,
        caller: &UpstreamClient,
        target: &Target,
        rate: Option<&ProviderLimiter>,
        session: Option<&Session>,
        timeout: Duration,
        watch: Option<BodyWatch<'_>>,
    ) -> Result<(RawResponse, Value), CallError> {
        let mut msg = json!({"jsonrpc": "2.0", "id": self.id, "method": self.method});
        if let Some(p) = self.params {
            msg["params"] = p;
        }
        let body = msg.to_string();
        let headers = McpClient::headers(session);
        let request = match watch {
            Some(watch) => Request::RpcWatched {
                body: body.as_bytes(),
                headers: &headers,
                watch,
            },
            None => Request::Rpc {
                body: body.as_bytes(),
                headers: &headers,
            },
        };
        let raw = caller.send(target, request, rate, timeout).await?;
        let redactor = Redactor::new(target.credential.as_ref());
        let result = answer(&raw, self.id, self.method).map_err(|e| match e {
            CallError::Protocol(m) => CallError::Protocol(redactor.clean(&m)),
            other => other,
        })?;
        Ok((raw, result))
    }
}

fn header<'r>(raw: &'r RawResponse, name: &str) -> Option<&'r str> {
    raw.headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// The `data` of each event of an SSE body, parsed as JSON (others skipped).
fn sse_messages(body: &[u8]) -> Vec<Value> {
    let text = String::from_utf8_lossy(body).replace("\r\n", "\n");
    text.split("\n\n")
        .filter_map(|event| {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(|d| d.strip_prefix(' ').unwrap_or(d))
                .collect();
            serde_json::from_str(&data.join("\n")).ok()
        })
        .collect()
}

/// The result of request `id` in a POST's answer (JSON, a JSON batch, or SSE).
fn answer(raw: &RawResponse, id: u64, method: &str) -> Result<Value, CallError> {
    let sse = header(raw, "content-type").is_some_and(|c| c.starts_with("text/event-stream"));
    let messages = if sse {
        sse_messages(&raw.body)
    } else {
        match serde_json::from_slice::<Value>(&raw.body) {
            Ok(Value::Array(all)) => all,
            Ok(one) => vec![one],
            Err(e) => {
                return Err(CallError::Protocol(format!(
                    "answered {method} with a body that is not JSON-RPC ({e})"
                )))
            }
        }
    };
    let ours = |v: &Value| v.as_u64() == Some(id) || v.as_str() == Some(&id.to_string());
    for mut m in messages {
        if !m.get("id").is_some_and(ours) {
            continue;
        }
        if let Some(e) = m.get("error") {
            return Err(CallError::Protocol(format!(
                "refused {method}: {} (JSON-RPC error {})",
                e.get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("no message"),
                e.get("code").unwrap_or(&Value::Null)
            )));
        }
        if let Some(r) = m.get_mut("result") {
            return Ok(r.take());
        }
    }
    Err(CallError::Protocol(format!("sent no answer to {method}")))
}

/// An MCP tool's name on its server, kept as its loopgate tool's `path` (`/<name>`).
pub fn remote_name(path: &str) -> &str {
    path.strip_prefix('/').unwrap_or(path)
}

/// The `path` of the loopgate tool standing for the server's tool `name`.
pub fn tool_path(name: &str) -> String {
    format!("/{name}")
}

/// What a `tools/call` result means for the engine.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolPayload {
    /// JSON text: `structuredContent`, or text content that is JSON.
    Json(Vec<u8>),
    /// Text content that is not JSON.
    Text(String),
    /// `isError: true`: the tool's own error text, for the model to read.
    Error(String),
}

/// `structuredContent` when present; else text content parsed as JSON when it is JSON
/// (several JSON blocks become an array), else the text (blocks joined by newlines);
/// content with images or other blocks stays as `{content: [...]}`.
pub fn tool_payload(result: &Value) -> ToolPayload {
    let content: &[Value] = result
        .get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let texts: Vec<&str> = content
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect();
    let structured = result.get("structuredContent").filter(|v| !v.is_null());
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        let text = if texts.is_empty() {
            structured.map(Value::to_string).unwrap_or_default()
        } else {
            texts.join("\n")
        };
        return ToolPayload::Error(if text.trim().is_empty() {
            "the tool reported an error without a message".into()
        } else {
            text
        });
    }
    if let Some(s) = structured {
        return ToolPayload::Json(s.to_string().into_bytes());
    }
    if texts.len() != content.len() {
        return ToolPayload::Json(json!({ "content": content }).to_string().into_bytes());
    }
    let is_json = |t: &str| serde_json::from_str::<serde::de::IgnoredAny>(t).is_ok();
    match texts.as_slice() {
        [] => ToolPayload::Text(String::new()),
        [one] if is_json(one) => ToolPayload::Json(one.trim().as_bytes().to_vec()),
        many if many.iter().all(|t| is_json(t)) => {
            ToolPayload::Json(format!("[{}]", many.join(",")).into_bytes())
        }
        many => ToolPayload::Text(many.join("\n")),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn m1_structured_content_wins_then_json_text_then_text() {
        let r = json!({"content": [{"type": "text", "text": "ignored"}], "structuredContent": {"a": 1}});
        assert_eq!(tool_payload(&r), ToolPayload::Json(br#"{"a":1}"#.to_vec()));
        let r = json!({"content": [{"type": "text", "text": " [1, 2] "}]});
        assert_eq!(tool_payload(&r), ToolPayload::Json(b"[1, 2]".to_vec()));
        let r = json!({"content": [{"type": "text", "text": "{\"a\":1}"}, {"type": "text", "text": "2"}]});
        assert_eq!(
            tool_payload(&r),
            ToolPayload::Json(br#"[{"a":1},2]"#.to_vec())
        );
        let r = json!({"content": [{"type": "text", "text": "hello"}, {"type": "text", "text": "world"}]});
        assert_eq!(tool_payload(&r), ToolPayload::Text("hello\nworld".into()));
        let r = json!({"content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}]});
        assert!(matches!(tool_payload(&r), ToolPayload::Json(_)));
    }

    #[test]
    fn m1_is_error_is_the_tools_own_text() {
        let r = json!({"isError": true, "content": [{"type": "text", "text": "no such repo"}]});
        assert_eq!(tool_payload(&r), ToolPayload::Error("no such repo".into()));
        let r = json!({"isError": true, "content": []});
        assert!(matches!(tool_payload(&r), ToolPayload::Error(m) if !m.is_empty()));
    }

    #[test]
    fn m1_a_reused_session_is_lost_on_any_4xx_but_the_credentials_and_the_rates() {
        let status = |status| CallError::Status {
            status,
            retry_after: None,
            body_excerpt: String::new(),
            retryable: false,
        };
        for lost in [400, 404, 409, 410, 422] {
            assert!(session_lost(&status(lost)), "{lost}");
        }
        for kept in [401, 403, 429, 500, 502, 503] {
            assert!(!session_lost(&status(kept)), "{kept}");
        }
        assert!(!session_lost(&CallError::Protocol("x".into())));
    }

    #[test]
    fn answers_are_read_from_json_batches_and_sse() {
        let raw = |ct: &str, body: &str| RawResponse {
            status: 200,
            headers: vec![("content-type".into(), ct.into())],
            body: body.as_bytes().to_vec(),
        };
        let sse =
            "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n\
                   id: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"ok\":true}}\n\n";
        assert_eq!(
            answer(&raw("text/event-stream", sse), 7, "m").unwrap(),
            json!({"ok": true})
        );
        let batch =
            r#"[{"jsonrpc":"2.0","id":3,"result":1},{"jsonrpc":"2.0","id":"4","result":2}]"#;
        assert_eq!(
            answer(&raw("application/json", batch), 4, "m").unwrap(),
            json!(2)
        );
        let err = r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"bad"}}"#;
        assert!(
            matches!(answer(&raw("application/json", err), 5, "m"), Err(CallError::Protocol(m)) if m.contains("bad"))
        );
        assert!(answer(&raw("text/html", "<html>"), 5, "m").is_err());
        assert!(answer(&raw("application/json", "{}"), 5, "m").is_err());
    }
}
