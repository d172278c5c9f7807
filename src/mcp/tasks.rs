//! M3, served: an agent's `tools/call` answered as a task (MCP 2025-11-25) when the
//! client asks for one (`params.task`), in a session negotiated at 2025-11-25.
//!
//! - The call runs as a live tool call ([`Recording::Live`]): its `running` record is
//!   written before the task is answered, and the walk runs spawned on the replica that
//!   took the request. The task (`task_…`, random) is a row of `mcp_tasks` naming the
//!   call, scoped to the org and the MCP session that created it: another session's or
//!   org's task id is "not found" (-32602, as the spec names it), like an expired one.
//! - `tasks/get` reads the task and its call's record, so any replica answers: `working`
//!   (its `statusMessage` the walk's last progress, written at most every
//!   [`WATCH_EVERY`]), `completed`, `failed` (the call's error, or a result with
//!   `isError`), or `cancelled` (once cancelled, whatever the call did after).
//! - `tasks/result` waits (woken by the call's event log, bounded) until the record is
//!   terminal, then returns exactly what the `tools/call` would have: the same
//!   `CallToolResult` built from the recorded result (size guard, `_resultId`,
//!   `structuredContent`), or the same JSON-RPC error, with the related-task `_meta`.
//! - `tasks/cancel` of a running task records the cancel in Postgres (and answers
//!   `cancelled`); the walking replica's watcher — woken by a pub/sub message, else at
//!   its next check — sets the call's [`CallCancel`], and the walk stops as at a bound
//!   (`_stoppedBy: "cancelled"`) with the pages it fetched: an honest partial, recorded as
//!   the call's result and read with `tasks/result`, or with `GET /v1/tool-calls/{id}`
//!   (the `CreateTaskResult`'s `_meta` names the call, [`CALL_ID`]). A task already
//!   terminal is refused with -32602, as the spec says.
//! - `tasks/list` pages the session's live tasks by id ([`LIST_PAGE`] a page).
//!
//! Discovery and retrieval tools answer at once and are never tasks (their
//! `execution.taskSupport` is left out, i.e. forbidden: -32601 when asked); every tool
//! of the agent's own is `optional`.

use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::watch;

use crate::auth::Caller;
use crate::call::accepted_call::{CallStart, Recording, ToolCallInput};
use crate::call::event_log;
use crate::call::retrieval_tools::{FETCH_TOOL, QUERY_TOOL};
use crate::call::{ResultJson, Runtime, RuntimeError};
use crate::crypto::random_token;
use crate::discovery::meta::{CONNECT_TOOLKIT, LIST_CONNECTIONS, LOAD_TOOL, SEARCH_TOOLS};
use crate::mcp::rpc::{call_result, error, response};
use crate::mcp::rpc::{INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND};
use crate::store::mcp_tasks::{self, TaskKey, TaskRow};
use crate::store::OrgId;
use crate::walk::cancel::{self, CallCancel};
use loopgate_engine::{Progress, ProgressSink};

/// The revision that has tasks (and every later one).
pub const TASKS_VERSION: &str = "2025-11-25";
const TASK_PREFIX: &str = "task_";
const TASK_RANDOM: usize = 32;
/// The `pollInterval` suggested to clients, in milliseconds.
pub const POLL_INTERVAL_MS: u64 = 1_000;
/// A task's TTL when the client asks for none, and the bounds of one it asks for.
const DEFAULT_TTL_MS: i64 = 3_600_000;
const MIN_TTL_MS: i64 = 10_000;
const MAX_TTL_MS: i64 = 86_400_000;
/// Tasks per `tasks/list` page.
pub const LIST_PAGE: i64 = 50;
/// How often the walking replica looks for a cancel it was not woken for (a lost
/// pub/sub message), and writes the walk's latest progress.
pub const WATCH_EVERY: Duration = Duration::from_secs(2);
/// How long `tasks/result` waits for a running task at most: past the walk's own
/// wall-clock bound by this much, it answers -32603 and the client asks again.
const RESULT_WAIT_SLACK: Duration = Duration::from_secs(60);
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
/// The `_meta` key of a `CreateTaskResult` naming the task's tool call, whose record
/// `GET /v1/tool-calls/{id}` reads (the same caller, any replica).
pub const CALL_ID: &str = "loopgate/callId";

/// Whether a session negotiated at `version` has tasks.
pub fn in_version(version: &str) -> bool {
    version >= TASKS_VERSION
}

/// The server capability (`tasks`) of a session that has tasks.
pub fn capability() -> Value {
    json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}})
}

/// Discovery and retrieval tools: answered at once, never as tasks.
pub fn never_a_task(name: &str) -> bool {
    [
        QUERY_TOOL,
        FETCH_TOOL,
        SEARCH_TOOLS,
        LOAD_TOOL,
        LIST_CONNECTIONS,
        CONNECT_TOOLKIT,
    ]
    .contains(&name)
}

/// Whether `id` has the shape of a task id loopgate issues (anything else is not found
/// before any store is asked: no control character reaches Postgres).
pub fn valid_task_id(id: &str) -> bool {
    id.strip_prefix(TASK_PREFIX)
        .is_some_and(|r| r.len() == TASK_RANDOM && r.bytes().all(|b| b.is_ascii_alphanumeric()))
}

/// The TTL granted for the client's ask (milliseconds).
fn granted_ttl(asked: Option<&Value>) -> i64 {
    asked
        .and_then(Value::as_f64)
        .filter(|t| t.is_finite())
        .map_or(DEFAULT_TTL_MS, |t| (t as i64).clamp(MIN_TTL_MS, MAX_TTL_MS))
}

/// A task accepted: the call to run (spawned by the API layer) for `task_id`.
#[derive(Debug)]
pub struct TaskRun {
    pub task_id: String,
    pub start: CallStart,
}

/// Who asks about tasks: the runtime, the caller and its session (tasks are the
/// session's own).
#[derive(Clone, Copy)]
pub struct Asker<'a> {
    pub rt: &'a Runtime,
    pub caller: &'a Caller,
    pub agent_id: &'a str,
    pub session: &'a str,
}

impl Asker<'_> {
    fn key<'k>(&'k self, id: &'k str) -> TaskKey<'k> {
        TaskKey {
            id,
            org: self.caller.org(),
            session: self.session,
        }
    }
}

/// A runtime failure before a task exists, as the JSON-RPC error answering the request.
fn start_error(id: &Value, e: &RuntimeError) -> Value {
    match e.code_status() {
        (_, 500) => error(
            id,
            INTERNAL_ERROR,
            "internal error: the call could not be run",
        ),
        (code, s) if (400..500).contains(&s) => error(id, INVALID_PARAMS, &format!("{code}: {e}")),
        (code, _) => error(id, INTERNAL_ERROR, &format!("{code}: {e}")),
    }
}

/// Accepts `call` as a task: checks the tool, starts the call as a live call (its
/// `running` record written) and records the task. The message answers the request at
/// once; the run, when there is one, is to be spawned with [`run`].
pub async fn create(
    a: Asker<'_>,
    id: Value,
    call: ToolCallInput,
    task: &Value,
) -> Result<(Value, Option<TaskRun>), RuntimeError> {
    let loaded = match a.rt.agent_in_thread(a.caller, a.agent_id, a.session).await {
        Ok(l) => l,
        Err(e) => return Ok((start_error(&id, &e), None)),
    };
    if loaded.agent.tool(&call.name).is_none() {
        let offered = match a
            .rt
            .peek_loaded(&loaded.agent, &loaded.thread, loaded.marks.clone())
            .await
        {
            Ok(step) => step.tools.iter().any(|t| t.name == call.name),
            Err(e) => return Ok((start_error(&id, &e), None)),
        };
        let message = match offered && never_a_task(&call.name) {
            // the spec's answer to a task asked of a tool whose taskSupport is forbidden
            true => error(
                &id,
                METHOD_NOT_FOUND,
                &format!(
                    "{} answers at once and is not run as a task: call it without `task`",
                    call.name
                ),
            ),
            false => error(&id, INVALID_PARAMS, &format!("unknown tool {}", call.name)),
        };
        return Ok((message, None));
    }
    let start = match a
        .rt
        .start_loaded(a.caller, loaded, call, Recording::Live)
        .await
    {
        Ok(s) => s,
        Err(e) => return Ok((start_error(&id, &e), None)),
    };
    let task_id = format!("{TASK_PREFIX}{}", random_token(TASK_RANDOM));
    let ttl = granted_ttl(task.get("ttl"));
    // the call is running from here on: it runs to its record whatever happens next
    let run = TaskRun {
        task_id: task_id.clone(),
        start,
    };
    let message = match mcp_tasks::create(a.rt.pool(), a.key(&task_id), &run.start.id, ttl).await {
        Ok(created) => {
            let row = TaskRow {
                id: task_id,
                call_id: run.start.id.clone(),
                ttl_ms: ttl,
                created_at: created,
                updated_at: created,
                status_message: None,
                cancelled_at: None,
                call_status: Some("running".into()),
                finished_at: None,
            };
            let meta = json!({CALL_ID: run.start.id});
            response(&id, json!({"task": task_json(&row), "_meta": meta}))
        }
        Err(e) => {
            tracing::error!(error = %e, call = %run.start.id, "could not record the MCP task");
            error(
                &id,
                INTERNAL_ERROR,
                "internal error: the task could not be recorded",
            )
        }
    };
    Ok((message, Some(run)))
}

/// Runs a task's call to its record, watching for its cancel and writing its progress.
pub async fn run(rt: &Runtime, caller: &Caller, run: TaskRun) {
    let cancel = CallCancel::new();
    let (tx, rx) = watch::channel(None::<String>);
    let sink = TaskProgress { tx };
    let exec = cancel::scope(cancel.clone(), rt.execute(caller, &run.start, &sink));
    let watching = watch_task(rt, caller.org(), &run, &cancel, rx);
    tokio::select! {
        biased;
        _ = exec => {}
        () = watching => {}
    }
}

/// The key whose notifications wake the walking replica's watcher for a cancel.
fn cancel_key(org: &OrgId, call_id: &str) -> String {
    format!("{}:cancel", event_log::key(org, call_id))
}

/// Sets `cancel` once the task is cancelled (woken by [`cancel_key`], else every
/// [`WATCH_EVERY`]), writing the walk's latest progress meanwhile; never returns.
async fn watch_task(
    rt: &Runtime,
    org: &OrgId,
    run: &TaskRun,
    cancel: &CallCancel,
    mut progress: watch::Receiver<Option<String>>,
) {
    // subscribed before the first look, so a cancel between the two is not missed
    let mut woken = rt
        .events()
        .subscribe(&cancel_key(org, &run.start.id))
        .await
        .ok();
    loop {
        match mcp_tasks::is_cancelled(rt.pool(), org, &run.task_id).await {
            Ok(true) => {
                cancel.cancel();
                return std::future::pending().await;
            }
            Ok(false) => {}
            Err(e) => tracing::debug!(error = %e, "could not look for the task's cancel"),
        }
        if progress.has_changed().unwrap_or(false) {
            let latest = progress.borrow_and_update().clone();
            if let Some(m) = latest {
                if let Err(e) = mcp_tasks::progress(rt.pool(), org, &run.task_id, &m).await {
                    tracing::debug!(error = %e, "could not write the task's progress");
                }
            }
        }
        match &mut woken {
            Some(sub) => sub.wait(WATCH_EVERY).await,
            None => tokio::time::sleep(WATCH_EVERY).await,
        }
    }
}

/// The walk's progress, kept as the task's latest `statusMessage` (written by the
/// watcher, at most every [`WATCH_EVERY`]).
struct TaskProgress {
    tx: watch::Sender<Option<String>>,
}

impl ProgressSink for TaskProgress {
    fn progress(&self, p: &Progress) {
        let mut message = format!(
            "page {} of at most {}, {} items, {} of at most {} requests",
            p.page, p.pages_max, p.items, p.requests, p.requests_max
        );
        if let Some(v) = &p.value {
            message.push_str(&format!(", fetching {v}"));
        }
        self.tx.send_replace(Some(message));
    }
}

fn rfc3339(t: chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// The task's status: `cancelled` once cancelled, else its call's.
fn status(row: &TaskRow) -> &'static str {
    if row.cancelled_at.is_some() {
        return "cancelled";
    }
    match row.call_status.as_deref() {
        Some("succeeded") => "completed",
        Some("failed") => "failed",
        _ => "working",
    }
}

fn terminal(row: &TaskRow) -> bool {
    status(row) != "working"
}

/// The spec's `Task`.
fn task_json(row: &TaskRow) -> Value {
    let status = status(row);
    let updated = match row.finished_at {
        Some(f) if f > row.updated_at => f,
        _ => row.updated_at,
    };
    let mut t = json!({
        "taskId": row.id, "status": status, "createdAt": rfc3339(row.created_at),
        "lastUpdatedAt": rfc3339(updated), "ttl": row.ttl_ms, "pollInterval": POLL_INTERVAL_MS,
    });
    let message = match status {
        "cancelled" => Some("The task was cancelled by request; the pages fetched before are kept: read them with tasks/result".to_string()),
        "failed" => Some("The tool call failed: tasks/result holds its error".to_string()),
        "working" => row.status_message.clone(),
        _ => None,
    };
    if let Some(m) = message {
        t["statusMessage"] = json!(m);
    }
    t
}

fn not_found(id: &Value) -> Value {
    error(
        id,
        INVALID_PARAMS,
        "Failed to retrieve task: Task not found (or expired)",
    )
}

fn task_id_of(params: &Value) -> Option<&str> {
    params
        .get("taskId")
        .and_then(Value::as_str)
        .filter(|t| valid_task_id(t))
}

/// The task `params.taskId` names, if it is this session's and live.
async fn find(a: Asker<'_>, params: &Value) -> Result<Option<TaskRow>, RuntimeError> {
    let Some(task_id) = task_id_of(params) else {
        return Ok(None);
    };
    Ok(mcp_tasks::get(a.rt.pool(), a.key(task_id)).await?)
}

/// `tasks/get`.
pub async fn get(a: Asker<'_>, id: &Value, params: &Value) -> Result<Value, RuntimeError> {
    Ok(match find(a, params).await? {
        Some(row) => response(id, task_json(&row)),
        None => not_found(id),
    })
}

/// `tasks/list`: the session's live tasks, [`LIST_PAGE`] a page.
pub async fn list(a: Asker<'_>, id: &Value, params: &Value) -> Result<Value, RuntimeError> {
    let after = match params.get("cursor") {
        None | Some(Value::Null) => "",
        Some(Value::String(c)) if valid_task_id(c) => c.as_str(),
        Some(_) => {
            return Ok(error(
                id,
                INVALID_PARAMS,
                "invalid cursor: pass the nextCursor of the previous page",
            ))
        }
    };
    let mut rows =
        mcp_tasks::list(a.rt.pool(), a.caller.org(), a.session, after, LIST_PAGE + 1).await?;
    let more = rows.len() as i64 > LIST_PAGE;
    rows.truncate(LIST_PAGE as usize);
    let mut result = json!({"tasks": rows.iter().map(task_json).collect::<Vec<_>>()});
    if let (true, Some(last)) = (more, rows.last()) {
        result["nextCursor"] = json!(last.id);
    }
    Ok(response(id, result))
}

/// `tasks/cancel`: a running task is cancelled (recorded where every replica sees it,
/// then the walking replica woken); a terminal one is refused (-32602).
pub async fn cancel(a: Asker<'_>, id: &Value, params: &Value) -> Result<Value, RuntimeError> {
    let Some(row) = find(a, params).await? else {
        return Ok(not_found(id));
    };
    let refused = |row: &TaskRow| {
        error(
            id,
            INVALID_PARAMS,
            &format!("Cannot cancel task: it is already {}", status(row)),
        )
    };
    if terminal(&row) {
        return Ok(refused(&row));
    }
    let cancelled = mcp_tasks::cancel(a.rt.pool(), a.key(&row.id)).await?;
    let now = mcp_tasks::get(a.rt.pool(), a.key(&row.id)).await?;
    let Some(now) = now else {
        return Ok(not_found(id));
    };
    if !cancelled {
        // its call ended (or another cancel won) between the look and the write
        return Ok(refused(&now));
    }
    let key = cancel_key(a.caller.org(), &row.call_id);
    if let Err(e) = a.rt.events().notify(&key).await {
        // the watcher finds the cancel at its next look
        tracing::debug!(error = %e, "could not wake the task's walk");
    }
    Ok(response(id, task_json(&now)))
}

/// `tasks/result`: waits until the task is terminal, then answers exactly what its
/// `tools/call` would have, with the related-task `_meta`.
pub async fn result(a: Asker<'_>, id: &Value, params: &Value) -> Result<Value, RuntimeError> {
    let Some(row) = find(a, params).await? else {
        return Ok(not_found(id));
    };
    let org = a.caller.org();
    let log = event_log::key(org, &row.call_id);
    // subscribed before the first look: the call's end wakes it (`execute` notifies)
    let mut woken = a.rt.events().subscribe(&log).await.ok();
    let limit = a.rt.walker().limits().wall + RESULT_WAIT_SLACK;
    let until = tokio::time::Instant::now() + limit;
    let finished = loop {
        if let Some(f) = mcp_tasks::finished(a.rt.pool(), org, &row.call_id).await? {
            break f;
        }
        let left = until.saturating_duration_since(tokio::time::Instant::now());
        if left.is_zero() {
            return Ok(error(
                id,
                INTERNAL_ERROR,
                &format!(
                    "the task is still working after {} s: call tasks/result again",
                    limit.as_secs()
                ),
            ));
        }
        let step = left.min(WATCH_EVERY);
        match &mut woken {
            Some(sub) => sub.wait(step).await,
            None => tokio::time::sleep(step).await,
        }
    };
    let meta = json!({RELATED_TASK: {"taskId": row.id}});
    let mut result = match (finished.result, finished.error) {
        (Some(text), _) if finished.status == "succeeded" => {
            call_result(&ResultJson::from_engine(text))
        }
        (_, error_text) => {
            let problem: Value = error_text
                .and_then(|t| serde_json::from_str(&t).ok())
                .unwrap_or(Value::Null);
            if problem["status"].as_u64() == Some(500) {
                return Ok(error(
                    id,
                    INTERNAL_ERROR,
                    "internal error: the call could not be run",
                ));
            }
            let text = format!(
                "{}: {}",
                problem["code"].as_str().unwrap_or("internal"),
                problem["detail"].as_str().unwrap_or("the call failed")
            );
            json!({"content": [{"type": "text", "text": text}], "isError": true})
        }
    };
    result["_meta"] = meta;
    Ok(response(id, result))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn row(call_status: Option<&str>, cancelled: bool) -> TaskRow {
        let at = chrono::Utc::now();
        TaskRow {
            id: format!("{TASK_PREFIX}{}", random_token(TASK_RANDOM)),
            call_id: "call_x".into(),
            ttl_ms: 60_000,
            created_at: at,
            updated_at: at,
            status_message: Some("page 2 of at most 20".into()),
            cancelled_at: cancelled.then_some(at),
            call_status: call_status.map(str::to_string),
            finished_at: None,
        }
    }

    /// M3: a task's status is its call's, and `cancelled` once cancelled whatever the
    /// call did after; a working task carries the walk's progress.
    #[test]
    fn m3_task_status_follows_the_call_and_a_cancel_sticks() {
        assert_eq!(task_json(&row(Some("running"), false))["status"], "working");
        assert_eq!(
            task_json(&row(Some("running"), false))["statusMessage"],
            "page 2 of at most 20"
        );
        assert_eq!(task_json(&row(None, false))["status"], "working");
        assert_eq!(
            task_json(&row(Some("succeeded"), false))["status"],
            "completed"
        );
        assert_eq!(task_json(&row(Some("failed"), false))["status"], "failed");
        for s in ["running", "succeeded", "failed"] {
            assert_eq!(task_json(&row(Some(s), true))["status"], "cancelled");
        }
        let t = task_json(&row(Some("running"), false));
        assert_eq!(t["ttl"], 60_000);
        assert_eq!(t["pollInterval"], POLL_INTERVAL_MS);
        assert!(t["createdAt"].as_str().unwrap().ends_with('Z'));
        assert!(t["lastUpdatedAt"].is_string());
    }

    #[test]
    fn m3_task_ids_have_one_shape_and_ttls_are_bounded() {
        let id = format!("{TASK_PREFIX}{}", random_token(TASK_RANDOM));
        assert!(valid_task_id(&id));
        assert!(!valid_task_id("task_short"));
        assert!(!valid_task_id(&format!("{id}\u{0}")));
        assert!(!valid_task_id(&id.replace("task_", "call_")));
        assert_eq!(granted_ttl(None), DEFAULT_TTL_MS);
        assert_eq!(granted_ttl(Some(&json!(1))), MIN_TTL_MS);
        assert_eq!(granted_ttl(Some(&json!(1e18))), MAX_TTL_MS);
        assert_eq!(granted_ttl(Some(&json!(60_000))), 60_000);
        assert_eq!(granted_ttl(Some(&json!("soon"))), DEFAULT_TTL_MS);
        assert!(in_version("2025-11-25") && !in_version("2025-06-18"));
        assert!(never_a_task(QUERY_TOOL) && !never_a_task("list_contacts"));
    }
}
