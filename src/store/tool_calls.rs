//! Tool-call records, read back by the same caller (`GET /v1/tool-calls/{id}`), so a
//! disconnect loses nothing. A streamed call is written when it starts (`running`, its id
//! is in the stream's first chunks and may be followed) and updated when it ends; a call
//! whose id nobody learns before it ends is written once, finished ([`record`]).

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use sqlx::types::Json;
use sqlx::PgPool;
use utoipa::ToSchema;

use super::{OrgId, StoreError};

#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct ToolCallRecord {
    /// `call_…`
    pub id: String,
    pub agent_id: String,
    pub name: String,
    /// `running`, `succeeded` or `failed`.
    pub status: String,
    /// What entered the conversation (any JSON), once succeeded.
    #[schema(value_type = Option<Value>)]
    pub result: Option<Json<Value>>,
    /// The problem document, once failed.
    #[schema(value_type = Option<Object>)]
    pub error: Option<Json<Value>>,
    pub created_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
}

pub struct NewCall<'a> {
    pub id: &'a str,
    pub agent_id: &'a str,
    pub thread_id: &'a str,
    pub caller: &'a str,
    pub name: &'a str,
    pub arguments: &'a Value,
}

/// Records a call as running (`created_at` now).
pub async fn start(pool: &PgPool, org: &OrgId, c: &NewCall<'_>) -> Result<(), StoreError> {
    insert(pool, org, c, ("running", None, None), None).await
}

/// Records a call that is over in one statement: the finished row, `created_at` its start.
pub async fn record(
    pool: &PgPool,
    org: &OrgId,
    c: &NewCall<'_>,
    started_at: DateTime<Utc>,
    outcome: Result<&str, &Value>,
) -> Result<(), StoreError> {
    insert(
        pool,
        org,
        c,
        columns(outcome),
        Some((started_at, Utc::now())),
    )
    .await
}

/// One row: its status, result and error, and when it started and finished (`None`: a
/// running call, started now).
async fn insert(
    pool: &PgPool,
    org: &OrgId,
    c: &NewCall<'_>,
    (status, result, error): Columns<'_>,
    times: Option<(DateTime<Utc>, DateTime<Utc>)>,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO tool_calls (id, org_id, agent_id, thread_id, caller, name, arguments, status, \
         result, error, created_at, finished_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, COALESCE($11, now()), $12)",
    )
    .bind(c.id)
    .bind(org.as_str())
    .bind(c.agent_id)
    .bind(c.thread_id)
    .bind(c.caller)
    .bind(c.name)
    .bind(Json(c.arguments))
    .bind(status)
    .bind(result)
    .bind(error)
    .bind(times.map(|t| t.0))
    .bind(times.map(|t| t.1))
    .execute(pool)
    .await?;
    Ok(())
}

type Columns<'a> = (&'static str, Option<&'a str>, Option<Json<&'a Value>>);

/// The `status`, `result` and `error` columns of an outcome.
fn columns<'a>(outcome: Result<&'a str, &'a Value>) -> Columns<'a> {
    match outcome {
        Ok(r) => ("succeeded", Some(r), None),
        Err(e) => ("failed", None, Some(Json(e))),
    }
}

/// Records the end of a call: `Ok(result JSON text)`, bound as it is, or `Err(problem)`.
pub async fn finish(
    pool: &PgPool,
    org: &OrgId,
    id: &str,
    outcome: Result<&str, &Value>,
) -> Result<(), StoreError> {
    let (status, result, error) = columns(outcome);
    sqlx::query(
        "UPDATE tool_calls SET status = $3, result = $4::jsonb, error = $5, finished_at = now() \
         WHERE org_id = $1 AND id = $2",
    )
    .bind(org.as_str())
    .bind(id)
    .bind(status)
    .bind(result)
    .bind(error)
    .execute(pool)
    .await?;
    Ok(())
}

/// The call, if it belongs to this org and caller.
pub async fn get(
    pool: &PgPool,
    org: &OrgId,
    caller: &str,
    id: &str,
) -> Result<ToolCallRecord, StoreError> {
    Ok(sqlx::query_as(
        "SELECT id, agent_id, name, status, result, error, created_at, finished_at FROM tool_calls \
         WHERE org_id = $1 AND caller = $2 AND id = $3",
    )
    .bind(org.as_str())
    .bind(caller)
    .bind(id)
    .fetch_one(pool)
    .await?)
}

/// The arguments the call was made with (same org and caller as [`get`]).
pub async fn arguments(
    pool: &PgPool,
    org: &OrgId,
    caller: &str,
    id: &str,
) -> Result<Value, StoreError> {
    let (args,): (Json<Value>,) = sqlx::query_as(
        "SELECT arguments FROM tool_calls WHERE org_id = $1 AND caller = $2 AND id = $3",
    )
    .bind(org.as_str())
    .bind(caller)
    .bind(id)
    .fetch_one(pool)
    .await?;
    Ok(args.0)
}
