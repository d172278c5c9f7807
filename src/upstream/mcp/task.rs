//! M3, client side: an upstream MCP tool called as a task (MCP 2025-11-25, "Tasks").
//! A tool listed with `execution.taskSupport` `"required"` — or `"optional"` on a server
//! that offers tasks for `tools/call` — is called with `task: {ttl}`; the server answers
//! at once with the task (`CreateTaskResult`), which is polled with `tasks/get` at the
//! server's `pollInterval` (bounded, [`POLL_MIN`]..[`POLL_MAX`], and never past the
//! call's wall-clock deadline) until it ends; then `tasks/result` is read, as a
//! `tools/call` result. Optional tools go as tasks too: no HTTP request is held open for
//! the whole of a long call.
//!
//! Every message is sent in the session that created the task (a task lives there),
//! through the same guarded request path as any other ([`super::Rpc`]). Progress:
//! each new `statusMessage` seen while polling is relayed, and so is every
//! `notifications/progress` for the call's token on the `tasks/result` stream (where the
//! TypeScript SDK delivers a task's queued messages).
//!
//! Cancellation: until the task has ended, a [`CancelOnDrop`] guard is held; when the
//! call's future is dropped (the walk was cancelled or cut) or the call gives up (its
//! wall-clock deadline, a status loopgate cannot serve), the guard sends `tasks/cancel`
//! for it in the background, best effort. That drop is the one cancellation interface.

use std::time::{Duration, Instant};

use loopgate_engine::UpstreamProgress;
use serde_json::{json, Value};

use super::{McpClient, OnProgress, Rpc};
use crate::upstream::error::Redactor;
use crate::upstream::mcp_progress::relayed_message;
use crate::upstream::mcp_session::Session;
use crate::upstream::{BodyWatch, CallError, Target, UpstreamClient};

/// Where sync keeps what the server said of a tool's tasks, at its input schema's root
/// (`x-loopgate-*` keys are never shown to a model nor sent upstream): `{"taskSupport":
/// "required" | "optional"}`. The call reads it with the tool, no query of its own.
pub const SCHEMA_KEY: &str = "x-loopgate-mcp";

/// The shortest wait between two `tasks/get`, whatever the server asks for.
pub const POLL_MIN: Duration = Duration::from_millis(200);
/// The longest wait between two `tasks/get`, whatever the server asks for.
pub const POLL_MAX: Duration = Duration::from_secs(5);
/// The wait when the server suggests none.
pub const POLL_DEFAULT: Duration = Duration::from_secs(1);
/// How long past the call's own deadline the task is asked to be kept (`ttl`).
const TTL_MARGIN: Duration = Duration::from_secs(60);
/// How long one `tasks/cancel` may take: a courtesy, never a wait.
const CANCEL_TIMEOUT: Duration = Duration::from_secs(5);
/// Longest task id followed.
const TASK_ID_MAX: usize = 256;

/// Whether a tool runs as a task (`execution.taskSupport`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TaskSupport {
    /// Never (the spec's default).
    #[default]
    Forbidden,
    /// When the caller asks: loopgate does, when the server offers tasks for `tools/call`.
    Optional,
    /// Only as a task.
    Required,
}

impl TaskSupport {
    /// As a `tools/list` entry declares it.
    pub fn of_listed(tool: &Value) -> Self {
        Self::parse(tool.pointer("/execution/taskSupport"))
    }

    /// As sync kept it in a tool's input schema ([`SCHEMA_KEY`]).
    pub fn of_schema(schema: &Value) -> Self {
        Self::parse(schema.get(SCHEMA_KEY).and_then(|m| m.get("taskSupport")))
    }

    fn parse(v: Option<&Value>) -> Self {
        match v.and_then(Value::as_str) {
            Some("required") => TaskSupport::Required,
            Some("optional") => TaskSupport::Optional,
            _ => TaskSupport::Forbidden,
        }
    }

    /// What sync keeps at [`SCHEMA_KEY`]; `None` for a tool that never runs as a task.
    pub fn schema_entry(self) -> Option<Value> {
        match self {
            TaskSupport::Forbidden => None,
            TaskSupport::Optional => Some(json!({"taskSupport": "optional"})),
            TaskSupport::Required => Some(json!({"taskSupport": "required"})),
        }
    }

    /// Whether a call goes as a task, given whether the session's server offers tasks
    /// for `tools/call` (without that offer the spec forbids asking for one).
    pub(super) fn as_task(self, offered: bool) -> Result<bool, CallError> {
        match (self, offered) {
            (TaskSupport::Forbidden, _) => Ok(false),
            (TaskSupport::Optional, offered) => Ok(offered),
            (TaskSupport::Required, true) => Ok(true),
            (TaskSupport::Required, false) => Err(CallError::Protocol(
                "lists the tool as task-only (execution.taskSupport \"required\") but does not offer tasks for tools/call".into(),
            )),
        }
    }
}

/// The `ttl` asked for a task: the call's time left and a margin, in milliseconds.
pub(super) fn ttl_ms(left: Duration) -> u64 {
    u64::try_from((left + TTL_MARGIN).as_millis()).unwrap_or(u64::MAX)
}

/// Whether a `tools/call` answer is a `CreateTaskResult` (a task, not yet the result).
pub(super) fn created(result: &Value) -> bool {
    result.pointer("/task/taskId").is_some_and(Value::is_string)
}

/// The wait before the next `tasks/get`: the task's `pollInterval` (milliseconds),
/// within [`POLL_MIN`]..[`POLL_MAX`].
pub fn poll_interval(task: &Value) -> Duration {
    task.get("pollInterval")
        .and_then(Value::as_f64)
        .filter(|ms| ms.is_finite() && *ms >= 0.0)
        .map(|ms| Duration::from_millis(ms.min(u64::MAX as f64) as u64).clamp(POLL_MIN, POLL_MAX))
        .unwrap_or(POLL_DEFAULT)
}

fn left(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now())
}

/// A task being followed to its result.
pub(super) struct Follow<'c, 'a> {
    pub client: &'c McpClient<'a>,
    pub session: &'c Session,
    pub deadline: Instant,
    pub redactor: &'c Redactor,
    pub progress: Option<OnProgress<'c>>,
    /// Sees the `tasks/result` stream (the call's progress token's notifications).
    pub watch: Option<BodyWatch<'c>>,
}

impl Follow<'_, '_> {
    /// From the `CreateTaskResult` to the task's `CallToolResult` (an `isError` one for
    /// a failed task).
    pub async fn run(&self, created: &Value) -> Result<Value, CallError> {
        let id = created
            .pointer("/task/taskId")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty() && id.len() <= TASK_ID_MAX)
            .ok_or_else(|| {
                CallError::Protocol(format!(
                    "answered tools/call with a task without a taskId of 1 to {TASK_ID_MAX} characters"
                ))
            })?;
        let mut guard = CancelOnDrop::new(self.client, self.session, id);
        let mut task = created.get("task").cloned().unwrap_or(Value::Null);
        let mut last_message: Option<String> = None;
        let mut reports = 0u32;
        let failed = loop {
            let message = task.get("statusMessage").and_then(Value::as_str);
            if let (Some(m), Some(on)) = (message, self.progress) {
                if last_message.as_deref() != Some(m) {
                    last_message = Some(m.to_string());
                    reports += 1;
                    on(UpstreamProgress {
                        progress: f64::from(reports),
                        total: None,
                        message: Some(relayed_message(m, self.redactor)),
                    });
                }
            }
            let said = message
                .map(|m| format!(": {}", relayed_message(m, self.redactor)))
                .unwrap_or_default();
            match task.get("status").and_then(Value::as_str).unwrap_or("") {
                "completed" => break false,
                "failed" => break true,
                "cancelled" => {
                    guard.disarm();
                    return Err(CallError::Protocol(format!(
                        "cancelled task {id} before it finished{said}"
                    )));
                }
                "input_required" => {
                    return Err(CallError::Protocol(format!(
                        "asked for input to go on with task {id} (status input_required{said}), \
                         which loopgate cannot give; the task was cancelled"
                    )))
                }
                "working" => {}
                other => {
                    return Err(CallError::Protocol(format!(
                        "reported task {id} in the unknown status {other:?}; the task was cancelled"
                    )))
                }
            }
            let wait = poll_interval(&task).min(left(self.deadline));
            if wait.is_zero() {
                return Err(CallError::Timeout { retryable: false });
            }
            tokio::time::sleep(wait).await;
            if left(self.deadline).is_zero() {
                return Err(CallError::Timeout { retryable: false });
            }
            task = self
                .client
                .request_pinned(
                    self.session,
                    "tasks/get",
                    json!({"taskId": id}),
                    self.deadline,
                    None,
                )
                .await
                .map_err(|e| following(e, id))?;
        };
        // an ended task cannot be cancelled any more
        guard.disarm();
        let result = self
            .client
            .request_pinned(
                self.session,
                "tasks/result",
                json!({"taskId": id}),
                self.deadline,
                self.watch,
            )
            .await
            .map_err(|e| following(e, id))?;
        if failed && result.get("isError").and_then(Value::as_bool) != Some(true) {
            let said = task
                .get("statusMessage")
                .and_then(Value::as_str)
                .unwrap_or("no reason given");
            return Ok(json!({"isError": true, "content": [
                {"type": "text", "text": format!("the task failed: {said}")}
            ]}));
        }
        Ok(result)
    }
}

/// The server's refusal, said to be about the task (an unknown or expired one, most
/// often: its `Task not found`).
fn following(e: CallError, id: &str) -> CallError {
    match e {
        CallError::Protocol(m) => CallError::Protocol(format!(
            "{m}, following task {id} (a task expires after its ttl and lives in its session only)"
        )),
        other => other,
    }
}

/// Sends `tasks/cancel` for a task not yet ended when dropped (module docs).
struct CancelOnDrop {
    cancel: Option<Cancel>,
}

struct Cancel {
    caller: UpstreamClient,
    target: Target,
    session: Session,
    request_id: u64,
    task: String,
}

impl CancelOnDrop {
    fn new(client: &McpClient<'_>, session: &Session, task: &str) -> Self {
        CancelOnDrop {
            cancel: Some(Cancel {
                caller: client.caller.clone(),
                target: client.target.clone(),
                session: session.clone(),
                request_id: client.sessions.request_id(),
                task: task.to_string(),
            }),
        }
    }

    fn disarm(&mut self) {
        self.cancel = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(cancel) = self.cancel.take() else {
            return;
        };
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => {
                rt.spawn(cancel.send());
            }
            Err(_) => tracing::debug!(task = %cancel.task, "no runtime left to cancel an MCP task"),
        }
    }
}

impl Cancel {
    /// `tasks/cancel` in the task's session, through the guarded caller (not the rate
    /// limit: like ending a session, a courtesy that frees the server's work).
    async fn send(self) {
        let rpc = Rpc {
            id: self.request_id,
            method: "tasks/cancel",
            params: Some(json!({"taskId": self.task})),
        };
        let sent = rpc
            .send(
                &self.caller,
                &self.target,
                None,
                Some(&self.session),
                CANCEL_TIMEOUT,
                None,
            )
            .await;
        match sent {
            Ok(_) => tracing::info!(task = %self.task, "an upstream MCP task was cancelled"),
            Err(e) => {
                tracing::debug!(task = %self.task, error = %e, "an upstream MCP task could not be cancelled")
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn m3_task_support_is_read_from_the_listing_and_kept_in_the_schema() {
        for (listed, support) in [
            (
                json!({"execution": {"taskSupport": "required"}}),
                TaskSupport::Required,
            ),
            (
                json!({"execution": {"taskSupport": "optional"}}),
                TaskSupport::Optional,
            ),
            (
                json!({"execution": {"taskSupport": "forbidden"}}),
                TaskSupport::Forbidden,
            ),
            (
                json!({"execution": {"taskSupport": 3}}),
                TaskSupport::Forbidden,
            ),
            (json!({}), TaskSupport::Forbidden),
        ] {
            assert_eq!(TaskSupport::of_listed(&listed), support, "{listed}");
            let schema = match support.schema_entry() {
                Some(e) => json!({"type": "object", SCHEMA_KEY: e}),
                None => json!({"type": "object"}),
            };
            assert_eq!(TaskSupport::of_schema(&schema), support);
        }
    }

    #[test]
    fn m3_a_call_is_a_task_when_required_or_optional_and_offered() {
        assert!(!TaskSupport::Forbidden.as_task(true).unwrap());
        assert!(TaskSupport::Optional.as_task(true).unwrap());
        assert!(!TaskSupport::Optional.as_task(false).unwrap());
        assert!(TaskSupport::Required.as_task(true).unwrap());
        // the spec forbids asking a server for a task it does not offer
        assert!(
            matches!(TaskSupport::Required.as_task(false), Err(CallError::Protocol(m)) if m.contains("required"))
        );
    }

    #[test]
    fn m3_the_poll_interval_is_the_servers_within_bounds() {
        assert_eq!(
            poll_interval(&json!({"pollInterval": 1500})),
            Duration::from_millis(1500)
        );
        assert_eq!(poll_interval(&json!({"pollInterval": 0})), POLL_MIN);
        assert_eq!(poll_interval(&json!({"pollInterval": 3.6e6})), POLL_MAX);
        assert_eq!(poll_interval(&json!({"pollInterval": -5})), POLL_DEFAULT);
        assert_eq!(poll_interval(&json!({})), POLL_DEFAULT);
        assert_eq!(ttl_ms(Duration::from_secs(30)), 90_000);
    }

    #[test]
    fn m3_a_create_task_result_is_told_from_a_tool_result() {
        assert!(created(
            &json!({"task": {"taskId": "t1", "status": "working"}})
        ));
        assert!(!created(&json!({"content": [], "task": "no"})));
        assert!(!created(
            &json!({"structuredContent": {"task": {"taskId": 1}}})
        ));
    }
}
