//! Schedules (W6): a workflow's cron, zone, input and policies, and `next_due_at`, the
//! earliest due time not yet handled. [`claim_due`] locks due rows `FOR UPDATE SKIP
//! LOCKED` inside the caller's transaction, so one replica handles a due time and the
//! others pass over it; the caller records the run and moves `next_due_at` on
//! ([`advance`]) before it commits.

use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::types::Json;
use sqlx::{PgConnection, PgPool};

use super::page::{self, Keyed, ListQuery};
use super::{ListPage, OrgId, PageRequest, StoreError};

/// Serialized only for the audit trail: the due time moves on by itself and the org is
/// the trail's own.
#[derive(Debug, Clone, sqlx::FromRow, serde::Serialize)]
pub struct Schedule {
    /// `sch_…`
    pub id: String,
    #[serde(skip)]
    pub org_id: String,
    pub workflow_id: String,
    pub cron: String,
    pub timezone: String,
    pub input: Json<Value>,
    pub run_as_user: Option<String>,
    /// `skip` or `allow`.
    pub overlap: String,
    /// `none` or `latest`.
    pub catch_up: String,
    pub paused: bool,
    #[serde(skip)]
    pub next_due_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl Keyed for Schedule {
    fn key(&self) -> (&DateTime<Utc>, &str) {
        (&self.created_at, &self.id)
    }
}

const COLUMNS: &str = "id, org_id, workflow_id, cron, timezone, input, run_as_user, overlap, \
                       catch_up, paused, next_due_at, created_at, updated_at";

/// The fields a schedule is written with (a patch: the current values merged with it).
pub struct Fields<'a> {
    pub cron: &'a str,
    pub timezone: &'a str,
    pub input: &'a Value,
    pub run_as_user: Option<&'a str>,
    pub overlap: &'a str,
    pub catch_up: &'a str,
    pub paused: bool,
    pub next_due_at: Option<DateTime<Utc>>,
}

pub async fn create(
    pool: &PgPool,
    org: &OrgId,
    id: &str,
    workflow_id: &str,
    f: &Fields<'_>,
) -> Result<Schedule, StoreError> {
    Ok(sqlx::query_as!(
        Schedule,
        "INSERT INTO schedules (id, org_id, workflow_id, cron, timezone, input, run_as_user, overlap, \
         catch_up, paused, next_due_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) \
         RETURNING id, org_id, workflow_id, cron, timezone, input, run_as_user, overlap, catch_up, \
         paused, next_due_at, created_at, updated_at",
        id,
        org.as_str(),
        workflow_id,
        f.cron,
        f.timezone,
        f.input,
        f.run_as_user,
        f.overlap,
        f.catch_up,
        f.paused,
        f.next_due_at,
    )
    .fetch_one(pool)
    .await?)
}

/// How many schedules the org holds (all workflows).
pub async fn count(pool: &PgPool, org: &OrgId) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar!(
        r#"SELECT count(*) AS "n!" FROM schedules WHERE org_id = $1"#,
        org.as_str()
    )
    .fetch_one(pool)
    .await?)
}

pub async fn get(pool: &PgPool, org: &OrgId, id: &str) -> Result<Schedule, StoreError> {
    Ok(sqlx::query_as!(
        Schedule,
        "SELECT id, org_id, workflow_id, cron, timezone, input, run_as_user, overlap, catch_up, \
         paused, next_due_at, created_at, updated_at FROM schedules WHERE org_id = $1 AND id = $2",
        org.as_str(),
        id,
    )
    .fetch_one(pool)
    .await?)
}

/// The schedules of one workflow, newest first.
pub async fn list(
    pool: &PgPool,
    org: &OrgId,
    workflow_id: &str,
    req: &PageRequest,
) -> Result<ListPage<Schedule>, StoreError> {
    let q = ListQuery {
        from: "schedules",
        columns: COLUMNS,
        filters: vec![("org_id", org.as_str()), ("workflow_id", workflow_id)],
    };
    page::list(pool, q, req).await
}

/// Replaces every field (the handler merged the patch with the current row).
pub async fn update(
    pool: &PgPool,
    org: &OrgId,
    id: &str,
    f: &Fields<'_>,
) -> Result<Schedule, StoreError> {
    Ok(sqlx::query_as!(
        Schedule,
        "UPDATE schedules SET cron = $3, timezone = $4, input = $5, run_as_user = $6, overlap = $7, \
         catch_up = $8, paused = $9, next_due_at = $10, updated_at = now() \
         WHERE org_id = $1 AND id = $2 \
         RETURNING id, org_id, workflow_id, cron, timezone, input, run_as_user, overlap, catch_up, \
         paused, next_due_at, created_at, updated_at",
        org.as_str(),
        id,
        f.cron,
        f.timezone,
        f.input,
        f.run_as_user,
        f.overlap,
        f.catch_up,
        f.paused,
        f.next_due_at,
    )
    .fetch_one(pool)
    .await?)
}

pub async fn delete(pool: &PgPool, org: &OrgId, id: &str) -> Result<(), StoreError> {
    let done = sqlx::query!(
        "DELETE FROM schedules WHERE org_id = $1 AND id = $2",
        org.as_str(),
        id,
    )
    .execute(pool)
    .await?;
    super::deleted(done)
}

/// Locks up to `limit` unpaused schedules whose `next_due_at` has passed (any org: the
/// scheduler serves every tenant), skipping rows another replica holds.
pub async fn claim_due(conn: &mut PgConnection, limit: i64) -> Result<Vec<Schedule>, StoreError> {
    Ok(sqlx::query_as!(
        Schedule,
        "SELECT id, org_id, workflow_id, cron, timezone, input, run_as_user, overlap, catch_up, \
         paused, next_due_at, created_at, updated_at FROM schedules \
         WHERE NOT paused AND next_due_at <= now() ORDER BY next_due_at LIMIT $1 \
         FOR UPDATE SKIP LOCKED",
        limit,
    )
    .fetch_all(conn)
    .await?)
}

/// Moves a claimed schedule's `next_due_at` on (`None`: it never fires again).
pub async fn advance(
    conn: &mut PgConnection,
    id: &str,
    next_due_at: Option<DateTime<Utc>>,
) -> Result<(), StoreError> {
    sqlx::query!(
        "UPDATE schedules SET next_due_at = $2 WHERE id = $1",
        id,
        next_due_at,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Postgres' clock: every replica judges due times by the same one.
pub async fn db_now(conn: &mut PgConnection) -> Result<DateTime<Utc>, StoreError> {
    Ok(sqlx::query_scalar!(r#"SELECT now() AS "now!""#)
        .fetch_one(conn)
        .await?)
}
