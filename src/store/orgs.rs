//! Orgs: the tenants. Only admins reach these functions.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::PgPool;
use utoipa::ToSchema;

use super::page::{self, Keyed, ListQuery};
use super::{ListPage, OrgId, PageRequest, StoreError};
use crate::crypto::new_id;

#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct Org {
    /// `org_…`
    pub id: String,
    pub name: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl Keyed for Org {
    fn key(&self) -> (&DateTime<Utc>, &str) {
        (&self.created_at, &self.id)
    }
}

const COLUMNS: &str = "id, name, created_at, updated_at";

pub async fn create(pool: &PgPool, name: &str) -> Result<Org, StoreError> {
    Ok(sqlx::query_as!(
        Org,
        "INSERT INTO orgs (id, name) VALUES ($1, $2) RETURNING id, name, created_at, updated_at",
        new_id("org"),
        name,
    )
    .fetch_one(pool)
    .await?)
}

pub async fn get(pool: &PgPool, id: &str) -> Result<Org, StoreError> {
    Ok(sqlx::query_as!(
        Org,
        "SELECT id, name, created_at, updated_at FROM orgs WHERE id = $1",
        id,
    )
    .fetch_one(pool)
    .await?)
}

/// Admin lookup: the org exists, so its id may be used as a tenant.
pub async fn resolve(pool: &PgPool, id: &str) -> Result<OrgId, StoreError> {
    get(pool, id).await.map(|o| OrgId::trusted(o.id))
}

pub async fn list(pool: &PgPool, req: &PageRequest) -> Result<ListPage<Org>, StoreError> {
    let q = ListQuery {
        from: "orgs",
        columns: COLUMNS,
        filters: vec![],
    };
    page::list(pool, q, req).await
}

pub async fn rename(pool: &PgPool, id: &str, name: &str) -> Result<Org, StoreError> {
    Ok(sqlx::query_as!(
        Org,
        "UPDATE orgs SET name = $2, updated_at = now() WHERE id = $1 \
         RETURNING id, name, created_at, updated_at",
        id,
        name,
    )
    .fetch_one(pool)
    .await?)
}

/// Deletes the org and, by cascade, everything it owns.
pub async fn delete(pool: &PgPool, id: &str) -> Result<(), StoreError> {
    let done = sqlx::query!("DELETE FROM orgs WHERE id = $1", id)
        .execute(pool)
        .await?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}
