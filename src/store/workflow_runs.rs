//! Workflow runs (W5): written when a run starts and when it ends, listed
//! under their workflow and read back by id. `created_at` is the start, shown as `started_at`.

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use sqlx::types::Json;
use sqlx::PgPool;
use utoipa::ToSchema;

use super::page::{self, Keyed, ListQuery};
use super::{ListPage, OrgId, PageRequest, StoreError};

#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct WorkflowRun {
    /// `run_…`
    pub id: String,
    pub workflow_id: String,
    /// `running`, `succeeded` or `failed`.
    pub status: String,
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

const COLUMNS: &str = "id, workflow_id, status, input, experiment, steps, created_at, finished_at";

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
         RETURNING id, workflow_id, status, input, experiment, steps, created_at AS started_at, finished_at",
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

/// Records the end of a run with every step's output.
pub async fn finish(
    pool: &PgPool,
    org: &OrgId,
    id: &str,
    succeeded: bool,
    steps: &Value,
) -> Result<WorkflowRun, StoreError> {
    Ok(sqlx::query_as!(
        WorkflowRun,
        "UPDATE workflow_runs SET status = $3, steps = $4, finished_at = now() \
         WHERE org_id = $1 AND id = $2 \
         RETURNING id, workflow_id, status, input, experiment, steps, created_at AS started_at, finished_at",
        org.as_str(),
        id,
        if succeeded { "succeeded" } else { "failed" },
        steps,
    )
    .fetch_one(pool)
    .await?)
}

/// The run, if it belongs to this org, workflow and caller.
pub async fn get(
    pool: &PgPool,
    org: &OrgId,
    caller: &str,
    workflow_id: &str,
    id: &str,
) -> Result<WorkflowRun, StoreError> {
    Ok(sqlx::query_as!(
        WorkflowRun,
        "SELECT id, workflow_id, status, input, experiment, steps, created_at AS started_at, finished_at \
         FROM workflow_runs WHERE org_id = $1 AND caller = $2 AND workflow_id = $3 AND id = $4",
        org.as_str(),
        caller,
        workflow_id,
        id,
    )
    .fetch_one(pool)
    .await?)
}

/// The caller's runs of one workflow, newest first.
pub async fn list(
    pool: &PgPool,
    org: &OrgId,
    caller: &str,
    workflow_id: &str,
    req: &PageRequest,
) -> Result<ListPage<WorkflowRun>, StoreError> {
    let q = ListQuery {
        from: "workflow_runs",
        columns: COLUMNS,
        filters: vec![
            ("org_id", org.as_str()),
            ("caller", caller),
            ("workflow_id", workflow_id),
        ],
    };
    page::list(pool, q, req).await
}
