//! Deployments: an org's environments, each with its dataset cache mode (C6).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use utoipa::ToSchema;

use super::page::{self, Keyed, ListQuery};
use super::{ListPage, OrgId, PageRequest, StoreError};
use crate::crypto::new_id;

/// `off`: never cache; `shadow`: record walks, never serve them; `on`: serve hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, sqlx::Type)]
#[serde(rename_all = "lowercase")]
#[sqlx(type_name = "TEXT", rename_all = "lowercase")]
pub enum CacheMode {
    Off,
    Shadow,
    On,
}

#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct Deployment {
    /// `dep_…`
    pub id: String,
    pub org_id: String,
    pub name: String,
    pub cache: CacheMode,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl Keyed for Deployment {
    fn key(&self) -> (&DateTime<Utc>, &str) {
        (&self.created_at, &self.id)
    }
}

macro_rules! columns {
    () => {
        "id, org_id, name, cache, created_at, updated_at"
    };
}
const COLUMNS: &str = columns!();

pub async fn create(
    pool: &PgPool,
    org: &OrgId,
    name: &str,
    cache: CacheMode,
) -> Result<Deployment, StoreError> {
    Ok(sqlx::query_as(
        "INSERT INTO deployments (id, org_id, name, cache) VALUES ($1, $2, $3, $4) \
         RETURNING id, org_id, name, cache, created_at, updated_at",
    )
    .bind(new_id("dep"))
    .bind(org.as_str())
    .bind(name)
    .bind(cache)
    .fetch_one(pool)
    .await?)
}

pub async fn get(pool: &PgPool, org: &OrgId, id: &str) -> Result<Deployment, StoreError> {
    Ok(sqlx::query_as(
        "SELECT id, org_id, name, cache, created_at, updated_at FROM deployments \
         WHERE org_id = $1 AND id = $2",
    )
    .bind(org.as_str())
    .bind(id)
    .fetch_one(pool)
    .await?)
}

pub async fn list(
    pool: &PgPool,
    org: &OrgId,
    req: &PageRequest,
) -> Result<ListPage<Deployment>, StoreError> {
    let q = ListQuery {
        from: "deployments",
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
    cache: Option<CacheMode>,
) -> Result<Deployment, StoreError> {
    Ok(sqlx::query_as(
        "UPDATE deployments SET name = COALESCE($3, name), cache = COALESCE($4, cache), \
         updated_at = now() WHERE org_id = $1 AND id = $2 \
         RETURNING id, org_id, name, cache, created_at, updated_at",
    )
    .bind(org.as_str())
    .bind(id)
    .bind(name)
    .bind(cache)
    .fetch_one(pool)
    .await?)
}

pub async fn delete(pool: &PgPool, org: &OrgId, id: &str) -> Result<(), StoreError> {
    let sql = "DELETE FROM deployments WHERE org_id = $1 AND id = $2";
    super::delete_owned(pool, sql, org, id)
        .await
        .map_err(|e| match e {
            // the agents' foreign key refuses the delete
            StoreError::Invalid(_) => StoreError::Conflict(
                "the deployment still has agents: move or delete them first".into(),
            ),
            other => other,
        })
}
