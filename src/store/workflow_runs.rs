//! Workflow runs (W5, W6): written when a run starts and when it ends, listed
//! under their workflow and read back by id. `created_at` is the start, shown as `started_at`.
//!
//! Who reads a run: the caller that made it (`caller`: `user:<id>` or `key:<id>`). A
//! scheduled run (W6) is made by nobody: its `caller` is `user:<run_as>` (so that user's
//! runtime tokens read it) or `schedule:<id>`, and any org key of the org reads every
//! scheduled run. At most one run exists per `(schedule_id, scheduled_for)` (a unique
//! index); a running scheduled run holds a lease (`lease_until`) its replica renews, and
//! one whose lease ran out is closed as `interrupted` by [`close_expired`].

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use sqlx::types::Json;
use sqlx::{PgConnection, PgPool};
use utoipa::ToSchema;

use super::page::{self, Keyed, ListQuery};
use super::{ListPage, OrgId, PageRequest, StoreError};

#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct WorkflowRun {
    /// `run_…`
    pub id: String,
    pub workflow_id: String,
    /// `running`, `succeeded` or `failed`; for scheduled runs also `skipped` (a due time
    /// that fell while the previous run still went, `overlap: "skip"`) and `interrupted`
    /// (the replica running it stopped before it finished).
    pub status: String,
    /// `api` (`POST …/runs`) or `schedule`.
    pub trigger: String,
    /// The schedule that made the run (`trigger: "schedule"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schedule_id: Option<String>,
    /// The due time the run is for (not its start).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduled_for: Option<DateTime<Utc>>,
    /// The run input that `$.input` references read.
    #[schema(value_type = Object)]
    pub input: Json<Value>,
    pub experiment: bool,
    /// Step id → output (`_skipped` / `_error` for steps skipped or failed).
    #[schema(value_type = Object)]
    pub steps: Json<Value>,
    #[serde(rename = "started_at")]
    #[sqlx(rename = "created_at")]
    pub started_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
}

impl Keyed for WorkflowRun {
    fn key(&self) -> (&DateTime<Utc>, &str) {
        (&self.started_at, &self.id)
    }
}

const COLUMNS: &str = "id, workflow_id, status, trigger, schedule_id, scheduled_for, input, \
                       experiment, steps, created_at, finished_at";

pub struct NewRun<'a> {
    pub id: &'a str,
    pub workflow_id: &'a str,
    pub caller: &'a str,
    pub input: &'a Value,
    pub experiment: bool,
}

pub async fn start(pool: &PgPool, org: &OrgId, r: &NewRun<'_>) -> Result<WorkflowRun, StoreError> {
    Ok(sqlx::query_as!(
        WorkflowRun,
        "INSERT INTO workflow_runs (id, org_id, workflow_id, caller, input, experiment) \
         VALUES ($1, $2, $3, $4, $5, $6) \
         RETURNING id, workflow_id, status, trigger, schedule_id, scheduled_for, input, experiment, \
         steps, created_at AS started_at, finished_at",
        r.id,
        org.as_str(),
        r.workflow_id,
        r.caller,
        r.input,
        r.experiment,
    )
    .fetch_one(pool)
    .await?)
}

/// A run a schedule makes for one due time, inside the claim's transaction.
pub struct NewScheduledRun<'a> {
    pub id: &'a str,
    pub workflow_id: &'a str,
    pub schedule_id: &'a str,
    pub scheduled_for: DateTime<Utc>,
    pub caller: &'a str,
    pub input: &'a Value,
    /// `skipped` (recorded finished) or `running` (with a lease of `lease_seconds`).
    pub skipped: bool,
    pub lease_seconds: f64,
}

/// Records the run of a due time; `None` when that due time already has one (the
/// unique run key decided: nothing is run twice).
pub async fn insert_scheduled(
    conn: &mut PgConnection,
    org: &OrgId,
    r: &NewScheduledRun<'_>,
) -> Result<Option<WorkflowRun>, StoreError> {
    Ok(sqlx::query_as!(
        WorkflowRun,
        "INSERT INTO workflow_runs (id, org_id, workflow_id, caller, input, trigger, schedule_id, \
         scheduled_for, status, finished_at, lease_until) \
         VALUES ($1, $2, $3, $4, $5, 'schedule', $6, $7, \
         CASE WHEN $8 THEN 'skipped' ELSE 'running' END, CASE WHEN $8 THEN now() END, \
         CASE WHEN $8 THEN NULL ELSE now() + $9 * interval '1 second' END) \
         ON CONFLICT (schedule_id, scheduled_for) WHERE schedule_id IS NOT NULL DO NOTHING \
         RETURNING id, workflow_id, status, trigger, schedule_id, scheduled_for, input, experiment, \
         steps, created_at AS started_at, finished_at",
        r.id,
        org.as_str(),
        r.workflow_id,
        r.caller,
        r.input,
        r.schedule_id,
        r.scheduled_for,
        r.skipped,
        r.lease_seconds,
    )
    .fetch_optional(conn)
    .await?)
}

/// Whether a run of the schedule is still going (a live lease).
pub async fn schedule_running(
    conn: &mut PgConnection,
    org: &OrgId,
    schedule_id: &str,
) -> Result<bool, StoreError> {
    Ok(sqlx::query_scalar!(
        r#"SELECT EXISTS (SELECT 1 FROM workflow_runs WHERE org_id = $1 AND schedule_id = $2 AND status = 'running') AS "running!""#,
        org.as_str(),
        schedule_id,
    )
    .fetch_one(conn)
    .await?)
}

/// Extends the lease of a running run; `false` when it is no longer running here (it
/// was closed as interrupted meanwhile).
pub async fn renew_lease(
    pool: &PgPool,
    org: &OrgId,
    id: &str,
    lease_seconds: f64,
) -> Result<bool, StoreError> {
    let done = sqlx::query!(
        "UPDATE workflow_runs SET lease_until = now() + $3 * interval '1 second' \
         WHERE org_id = $1 AND id = $2 AND status = 'running'",
        org.as_str(),
        id,
        lease_seconds,
    )
    .execute(pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// A run closed by [`close_expired`], with its org.
pub struct Interrupted {
    pub org_id: String,
    pub run: WorkflowRun,
}

/// Closes as `interrupted` at most `limit` running runs whose lease ran out (their
/// replica died or lost Postgres): they are never run again.
pub async fn close_expired(
    conn: &mut PgConnection,
    limit: i64,
) -> Result<Vec<Interrupted>, StoreError> {
    let rows = sqlx::query!(
        "UPDATE workflow_runs SET status = 'interrupted', finished_at = now(), lease_until = NULL \
         WHERE id IN (SELECT id FROM workflow_runs WHERE status = 'running' AND lease_until < now() \
         ORDER BY lease_until LIMIT $1 FOR UPDATE SKIP LOCKED) \
         RETURNING org_id, id, workflow_id, status, trigger, schedule_id, scheduled_for, input, \
         experiment, steps, created_at, finished_at",
        limit,
    )
    .fetch_all(conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| Interrupted {
            org_id: r.org_id,
            run: WorkflowRun {
                id: r.id,
                workflow_id: r.workflow_id,
                status: r.status,
                trigger: r.trigger,
                schedule_id: r.schedule_id,
                scheduled_for: r.scheduled_for,
                input: Json(r.input),
                experiment: r.experiment,
                steps: Json(r.steps),
                started_at: r.created_at,
                finished_at: r.finished_at,
            },
        })
        .collect())
}

/// Records the end of a run with every step's output. A run already closed (as
/// `interrupted`, its lease lost) keeps that status: `NotFound`.
pub async fn finish(
    conn: &mut PgConnection,
    org: &OrgId,
    id: &str,
    succeeded: bool,
    steps: &Value,
) -> Result<WorkflowRun, StoreError> {
    Ok(sqlx::query_as!(
        WorkflowRun,
        "UPDATE workflow_runs SET status = $3, steps = $4, finished_at = now(), lease_until = NULL \
         WHERE org_id = $1 AND id = $2 AND status = 'running' \
         RETURNING id, workflow_id, status, trigger, schedule_id, scheduled_for, input, experiment, \
         steps, created_at AS started_at, finished_at",
        org.as_str(),
        id,
        if succeeded { "succeeded" } else { "failed" },
        steps,
    )
    .fetch_one(conn)
    .await?)
}

/// The run, if it belongs to this org and workflow and `caller` may read it: its own
/// run, or (for an org key, `key:…`) any scheduled run of the org.
pub async fn get(
    pool: &PgPool,
    org: &OrgId,
    caller: &str,
    workflow_id: &str,
    id: &str,
) -> Result<WorkflowRun, StoreError> {
    Ok(sqlx::query_as!(
        WorkflowRun,
        "SELECT id, workflow_id, status, trigger, schedule_id, scheduled_for, input, experiment, \
         steps, created_at AS started_at, finished_at \
         FROM workflow_runs WHERE org_id = $1 AND workflow_id = $3 AND id = $4 \
         AND (caller = $2 OR (starts_with($2, 'key:') AND trigger = 'schedule'))",
        org.as_str(),
        caller,
        workflow_id,
        id,
    )
    .fetch_one(pool)
    .await?)
}

/// The last run a schedule made (skipped ones included).
pub async fn last_of_schedule(
    pool: &PgPool,
    org: &OrgId,
    schedule_id: &str,
) -> Result<Option<WorkflowRun>, StoreError> {
    Ok(sqlx::query_as!(
        WorkflowRun,
        "SELECT id, workflow_id, status, trigger, schedule_id, scheduled_for, input, experiment, \
         steps, created_at AS started_at, finished_at \
         FROM workflow_runs WHERE org_id = $1 AND schedule_id = $2 \
         ORDER BY scheduled_for DESC LIMIT 1",
        org.as_str(),
        schedule_id,
    )
    .fetch_optional(pool)
    .await?)
}

/// The runs of one workflow `caller` may read (see [`get`]), newest first; only those of
/// `schedule_id` when given.
pub async fn list(
    pool: &PgPool,
    org: &OrgId,
    caller: &str,
    workflow_id: &str,
    schedule_id: Option<&str>,
    req: &PageRequest,
) -> Result<ListPage<WorkflowRun>, StoreError> {
    let mut filters = vec![("org_id", org.as_str()), ("workflow_id", workflow_id)];
    if let Some(s) = schedule_id {
        filters.push(("schedule_id", s));
    }
    let q = ListQuery {
        from: "workflow_runs",
        columns: COLUMNS,
        filters,
    };
    let any_of: &[(&'static str, &str)] = if caller.starts_with("key:") {
        &[("caller", caller), ("trigger", "schedule")]
    } else {
        &[("caller", caller)]
    };
    page::list_any(pool, q, any_of, req).await
}
