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

const COLUMNS: &str = "id, org_id, name, cache, created_at, updated_at";

pub async fn create(
    pool: &PgPool,
    org: &OrgId,
    name: &str,
    cache: CacheMode,
) -> Result<Deployment, StoreError> {
    // `cache` is TEXT to Postgres: the macro's check knows only `&str` for it
    Ok(sqlx::query_as!(
        Deployment,
        r#"INSERT INTO deployments (id, org_id, name, cache) VALUES ($1, $2, $3, $4)
           RETURNING id, org_id, name, cache AS "cache: CacheMode", created_at, updated_at"#,
        new_id("dep"),
        org.as_str(),
        name,
        cache as _,
    )
    .fetch_one(pool)
    .await?)
}

pub async fn get(pool: &PgPool, org: &OrgId, id: &str) -> Result<Deployment, StoreError> {
    Ok(sqlx::query_as!(
        Deployment,
        r#"SELECT id, org_id, name, cache AS "cache: CacheMode", created_at, updated_at
           FROM deployments WHERE org_id = $1 AND id = $2"#,
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
    Ok(sqlx::query_as!(
        Deployment,
        r#"UPDATE deployments SET name = COALESCE($3, name), cache = COALESCE($4, cache),
             updated_at = now() WHERE org_id = $1 AND id = $2
           RETURNING id, org_id, name, cache AS "cache: CacheMode", created_at, updated_at"#,
        org.as_str(),
        id,
        name,
        cache as _,
    )
    .fetch_one(pool)
    .await?)
}

pub async fn delete(pool: &PgPool, org: &OrgId, id: &str) -> Result<(), StoreError> {
    sqlx::query!(
        "DELETE FROM deployments WHERE org_id = $1 AND id = $2",
        org.as_str(),
        id,
    )
    .execute(pool)
    .await
    .map_err(StoreError::from)
    .and_then(super::deleted)
    .map_err(|e| match e {
        // the agents' foreign key refuses the delete
        StoreError::Invalid(_) => StoreError::Conflict(
            "the deployment still has agents: move or delete them first".into(),
        ),
        other => other,
    })
}
