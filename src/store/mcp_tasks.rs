//! Tasks of the agents' MCP servers (M3): a `tools/call` answered as a task. The task row
//! names the call (`tool_calls`), and keeps what only a task has — its TTL, its last
//! progress, its cancel. Postgres is the only record: any replica answers for any task.
//! Every read is scoped to the org and the MCP session that created the task, so another
//! session's or org's task id is not found.

use chrono::{DateTime, Utc};
use sqlx::PgPool;

use super::{OrgId, StoreError};

/// Who may name a task: the org and the session it was created in.
#[derive(Debug, Clone, Copy)]
pub struct TaskKey<'a> {
    pub id: &'a str,
    pub org: &'a OrgId,
    pub session: &'a str,
}

/// A task as its reader sees it, with its call's state.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct TaskRow {
    pub id: String,
    pub call_id: String,
    pub ttl_ms: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub status_message: Option<String>,
    pub cancelled_at: Option<DateTime<Utc>>,
    /// The call record's `running`, `succeeded` or `failed`; `None` while its start record
    /// is not written yet (K1: it may wait for Postgres).
    pub call_status: Option<String>,
    pub finished_at: Option<DateTime<Utc>>,
}

/// A finished call's outcome, as text: its result (what entered the conversation), or
/// its problem document.
#[derive(Debug, Clone)]
pub struct Finished {
    pub status: String,
    pub result: Option<String>,
    pub error: Option<String>,
}

/// Records a task created for call `call_id`.
pub async fn create(
    pool: &PgPool,
    key: TaskKey<'_>,
    call_id: &str,
    ttl_ms: i64,
) -> Result<DateTime<Utc>, StoreError> {
    Ok(sqlx::query_scalar!(
        "INSERT INTO mcp_tasks (id, org_id, session_id, call_id, ttl_ms) \
         VALUES ($1, $2, $3, $4, $5) RETURNING created_at",
        key.id,
        key.org.as_str(),
        key.session,
        call_id,
        ttl_ms,
    )
    .fetch_one(pool)
    .await?)
}

/// The task, unless it is another org's or session's, or past its TTL.
pub async fn get(pool: &PgPool, key: TaskKey<'_>) -> Result<Option<TaskRow>, StoreError> {
    Ok(sqlx::query_as!(
        TaskRow,
        r#"SELECT t.id, t.call_id, t.ttl_ms, t.created_at, t.updated_at, t.status_message,
             t.cancelled_at,
             (SELECT c.status FROM tool_calls c WHERE c.org_id = t.org_id AND c.id = t.call_id)
               AS "call_status?",
             (SELECT c.finished_at FROM tool_calls c WHERE c.org_id = t.org_id AND c.id = t.call_id)
               AS "finished_at?"
           FROM mcp_tasks t
           WHERE t.id = $1 AND t.org_id = $2 AND t.session_id = $3
             AND t.created_at + make_interval(secs => t.ttl_ms / 1000.0) > now()"#,
        key.id,
        key.org.as_str(),
        key.session,
    )
    .fetch_optional(pool)
    .await?)
}

/// One page of the session's live tasks, after task id `after`, by id.
pub async fn list(
    pool: &PgPool,
    org: &OrgId,
    session: &str,
    after: &str,
    limit: i64,
) -> Result<Vec<TaskRow>, StoreError> {
    Ok(sqlx::query_as!(
        TaskRow,
        r#"SELECT t.id, t.call_id, t.ttl_ms, t.created_at, t.updated_at, t.status_message,
             t.cancelled_at,
             (SELECT c.status FROM tool_calls c WHERE c.org_id = t.org_id AND c.id = t.call_id)
               AS "call_status?",
             (SELECT c.finished_at FROM tool_calls c WHERE c.org_id = t.org_id AND c.id = t.call_id)
               AS "finished_at?"
           FROM mcp_tasks t
           WHERE t.session_id = $1 AND t.org_id = $2 AND t.id > $3
             AND t.created_at + make_interval(secs => t.ttl_ms / 1000.0) > now()
           ORDER BY t.id LIMIT $4"#,
        session,
        org.as_str(),
        after,
        limit,
    )
    .fetch_all(pool)
    .await?)
}

/// The outcome of the task's call once it finished (`None` while it runs).
pub async fn finished(
    pool: &PgPool,
    org: &OrgId,
    call_id: &str,
) -> Result<Option<Finished>, StoreError> {
    Ok(sqlx::query_as!(
        Finished,
        r#"SELECT c.status,
             COALESCE(c.result::text, array_to_string(b.parts, c.body_fill)) AS "result?",
             c.error::text AS "error?"
           FROM tool_calls c
           LEFT JOIN tool_call_bodies b ON b.org_id = c.org_id AND b.id = c.body_id
           WHERE c.org_id = $1 AND c.id = $2 AND c.status <> 'running'"#,
        org.as_str(),
        call_id,
    )
    .fetch_optional(pool)
    .await?)
}

/// Cancels the task while its call still runs; `false` when it was not running (its
/// call finished, it was cancelled already, or it is not this session's).
pub async fn cancel(pool: &PgPool, key: TaskKey<'_>) -> Result<bool, StoreError> {
    let done = sqlx::query!(
        "UPDATE mcp_tasks t SET cancelled_at = now(), updated_at = now() \
         FROM tool_calls c \
         WHERE t.id = $1 AND t.org_id = $2 AND t.session_id = $3 AND t.cancelled_at IS NULL \
           AND c.org_id = t.org_id AND c.id = t.call_id AND c.status = 'running'",
        key.id,
        key.org.as_str(),
        key.session,
    )
    .execute(pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Whether task `task_id` was cancelled (the walking replica's check, by primary key).
pub async fn is_cancelled(pool: &PgPool, org: &OrgId, task_id: &str) -> Result<bool, StoreError> {
    Ok(sqlx::query_scalar!(
        r#"SELECT EXISTS (SELECT 1 FROM mcp_tasks
             WHERE id = $1 AND org_id = $2 AND cancelled_at IS NOT NULL) AS "c!""#,
        task_id,
        org.as_str(),
    )
    .fetch_one(pool)
    .await?)
}

/// The walk's latest progress, as the task's `statusMessage`.
pub async fn progress(
    pool: &PgPool,
    org: &OrgId,
    task_id: &str,
    message: &str,
) -> Result<(), StoreError> {
    sqlx::query!(
        "UPDATE mcp_tasks SET status_message = $3, updated_at = now() \
         WHERE id = $1 AND org_id = $2 AND cancelled_at IS NULL",
        task_id,
        org.as_str(),
        message,
    )
    .execute(pool)
    .await?;
    Ok(())
}
