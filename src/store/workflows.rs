//! Workflows: named step lists run against one agent's tools (W1).

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use sqlx::types::Json;
use sqlx::PgPool;
use utoipa::ToSchema;

use super::page::{self, Keyed, ListQuery};
use super::{ListPage, OrgId, PageRequest, StoreError};
use crate::crypto::new_id;

#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct Workflow {
    /// `wf_…`
    pub id: String,
    pub org_id: String,
    pub agent_id: String,
    pub name: String,
    #[schema(value_type = Vec<Object>)]
    pub steps: Json<Value>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl Keyed for Workflow {
    fn key(&self) -> (&DateTime<Utc>, &str) {
        (&self.created_at, &self.id)
    }
}

const COLUMNS: &str = "id, org_id, agent_id, name, steps, created_at, updated_at";

fn agent_error(e: sqlx::Error, agent_id: &str) -> StoreError {
    match StoreError::from(e) {
        StoreError::Invalid(_) => {
            StoreError::Invalid(format!("agent_id '{agent_id}' is not an agent of this org"))
        }
        other => other,
    }
}

pub async fn create(
    pool: &PgPool,
    org: &OrgId,
    name: &str,
    agent_id: &str,
    steps: &Value,
) -> Result<Workflow, StoreError> {
    sqlx::query_as!(
        Workflow,
        "INSERT INTO workflows (id, org_id, agent_id, name, steps) VALUES ($1, $2, $3, $4, $5) \
         RETURNING id, org_id, agent_id, name, steps, created_at, updated_at",
        new_id("wf"),
        org.as_str(),
        agent_id,
        name,
        steps,
    )
    .fetch_one(pool)
    .await
    .map_err(|e| agent_error(e, agent_id))
}

pub async fn get(pool: &PgPool, org: &OrgId, id: &str) -> Result<Workflow, StoreError> {
    Ok(sqlx::query_as!(
        Workflow,
        "SELECT id, org_id, agent_id, name, steps, created_at, updated_at FROM workflows WHERE org_id = $1 AND id = $2",
        org.as_str(),
        id,
    )
    .fetch_one(pool)
    .await?)
}

pub async fn list(
    pool: &PgPool,
    org: &OrgId,
    req: &PageRequest,
) -> Result<ListPage<Workflow>, StoreError> {
    let q = ListQuery {
        from: "workflows",
        columns: COLUMNS,
        filters: vec![("org_id", org.as_str())],
    };
    page::list(pool, q, req).await
}

pub async fn update(
    pool: &PgPool,
    org: &OrgId,
    id: &str,
    name: Option<&str>,
    steps: Option<&Value>,
) -> Result<Workflow, StoreError> {
    Ok(sqlx::query_as!(
        Workflow,
        "UPDATE workflows SET name = COALESCE($3, name), steps = COALESCE($4, steps), updated_at = now() \
         WHERE org_id = $1 AND id = $2 RETURNING id, org_id, agent_id, name, steps, created_at, updated_at",
        org.as_str(),
        id,
        name,
        steps,
    )
    .fetch_one(pool)
    .await?)
}

pub async fn delete(pool: &PgPool, org: &OrgId, id: &str) -> Result<(), StoreError> {
    let done = sqlx::query!(
        "DELETE FROM workflows WHERE org_id = $1 AND id = $2",
        org.as_str(),
        id,
    )
    .execute(pool)
    .await?;
    super::deleted(done)
}
