//! Tools: one upstream operation each (method, path template, input schema), owned
//! by a provider of the same org.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::types::Json;
use sqlx::{PgPool, Postgres, Transaction};
use utoipa::ToSchema;

use super::page::{self, Keyed, ListQuery};
use super::{ListPage, OrgId, PageRequest, StoreError};
use crate::crypto::new_id;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, sqlx::Type, Default,
)]
#[serde(rename_all = "lowercase")]
#[sqlx(type_name = "TEXT", rename_all = "lowercase")]
pub enum ToolKind {
    #[default]
    Api,
    Mcp,
    App,
}

#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct Tool {
    /// `tool_…`
    pub id: String,
    pub provider_id: String,
    pub name: String,
    pub description: String,
    pub method: String,
    pub path: String,
    /// JSON Schema object: path/query/header parameters at the top level, a JSON body under `body`.
    #[schema(value_type = Object)]
    pub input_schema: Json<Value>,
    pub kind: ToolKind,
    pub toolkit: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl Keyed for Tool {
    fn key(&self) -> (&DateTime<Utc>, &str) {
        (&self.created_at, &self.id)
    }
}

/// The columns of [`Tool`], for the list. The static queries spell them out, with the
/// type of `kind` (TEXT holding a [`ToolKind`]); a parameter taking it is passed `as _`
/// (the macro's check knows only `&str` for TEXT).
const COLUMNS: &str = "id, provider_id, name, description, method, path, input_schema, kind, \
     toolkit, created_at, updated_at";

/// A tool's full, validated definition as written.
#[derive(Debug, Clone)]
pub struct ToolFields {
    pub provider_id: String,
    pub name: String,
    pub description: String,
    pub method: String,
    pub path: String,
    pub input_schema: Value,
    pub kind: ToolKind,
    pub toolkit: Option<String>,
}

async fn insert(
    tx: &mut Transaction<'_, Postgres>,
    org: &OrgId,
    f: &ToolFields,
) -> Result<Tool, StoreError> {
    Ok(sqlx::query_as!(
        Tool,
        r#"INSERT INTO tools (id, org_id, provider_id, name, description, method, path,
             input_schema, kind, toolkit) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
           RETURNING id, provider_id, name, description, method, path, input_schema,
             kind AS "kind: ToolKind", toolkit, created_at, updated_at"#,
        new_id("tool"),
        org.as_str(),
        &f.provider_id,
        &f.name,
        &f.description,
        &f.method,
        &f.path,
        &f.input_schema,
        f.kind as _,
        f.toolkit.as_deref(),
    )
    .fetch_one(&mut **tx)
    .await?)
}

pub async fn create(pool: &PgPool, org: &OrgId, f: &ToolFields) -> Result<Tool, StoreError> {
    create_many(pool, org, std::slice::from_ref(f))
        .await?
        .pop()
        .ok_or(StoreError::NotFound)
}

/// Inserts every tool or none (an OpenAPI import is all or nothing).
pub async fn create_many(
    pool: &PgPool,
    org: &OrgId,
    all: &[ToolFields],
) -> Result<Vec<Tool>, StoreError> {
    let mut tx = pool.begin().await?;
    let mut out = Vec::with_capacity(all.len());
    for f in all {
        out.push(insert(&mut tx, org, f).await?);
    }
    tx.commit().await?;
    Ok(out)
}

pub async fn get(pool: &PgPool, org: &OrgId, id: &str) -> Result<Tool, StoreError> {
    Ok(sqlx::query_as!(
        Tool,
        r#"SELECT id, provider_id, name, description, method, path, input_schema,
             kind AS "kind: ToolKind", toolkit, created_at, updated_at
           FROM tools WHERE org_id = $1 AND id = $2"#,
        org.as_str(),
        id,
    )
    .fetch_one(pool)
    .await?)
}

/// The org's tools among `ids` (in no particular order; an id of another org is absent).
pub async fn get_many(pool: &PgPool, org: &OrgId, ids: &[String]) -> Result<Vec<Tool>, StoreError> {
    Ok(sqlx::query_as!(
        Tool,
        r#"SELECT id, provider_id, name, description, method, path, input_schema,
             kind AS "kind: ToolKind", toolkit, created_at, updated_at
           FROM tools WHERE org_id = $1 AND id = ANY($2)"#,
        org.as_str(),
        ids,
    )
    .fetch_all(pool)
    .await?)
}

pub async fn list(
    pool: &PgPool,
    org: &OrgId,
    provider_id: Option<&str>,
    req: &PageRequest,
) -> Result<ListPage<Tool>, StoreError> {
    let mut filters = vec![("org_id", org.as_str())];
    if let Some(p) = provider_id {
        filters.push(("provider_id", p));
    }
    let q = ListQuery {
        from: "tools",
        columns: COLUMNS,
        filters,
    };
    page::list(pool, q, req).await
}

pub async fn update(
    pool: &PgPool,
    org: &OrgId,
    id: &str,
    f: &ToolFields,
) -> Result<Tool, StoreError> {
    update_in(pool, org, id, f).await
}

async fn update_in<'e, E: sqlx::PgExecutor<'e>>(
    ex: E,
    org: &OrgId,
    id: &str,
    f: &ToolFields,
) -> Result<Tool, StoreError> {
    Ok(sqlx::query_as!(
        Tool,
        r#"UPDATE tools SET name = $3, description = $4, method = $5, path = $6,
             input_schema = $7, kind = $8, toolkit = $9, updated_at = now()
           WHERE org_id = $1 AND id = $2
           RETURNING id, provider_id, name, description, method, path, input_schema,
             kind AS "kind: ToolKind", toolkit, created_at, updated_at"#,
        org.as_str(),
        id,
        &f.name,
        &f.description,
        &f.method,
        &f.path,
        &f.input_schema,
        f.kind as _,
        f.toolkit.as_deref(),
    )
    .fetch_one(ex)
    .await?)
}

pub async fn delete(pool: &PgPool, org: &OrgId, id: &str) -> Result<(), StoreError> {
    let done = sqlx::query!(
        "DELETE FROM tools WHERE org_id = $1 AND id = $2",
        org.as_str(),
        id,
    )
    .execute(pool)
    .await?;
    super::deleted(done)
}

/// What a sync changed, by tool name.
#[derive(Debug, Default, Clone, Serialize, ToSchema)]
pub struct SyncChanges {
    pub added: Vec<String>,
    pub updated: Vec<String>,
    pub removed: Vec<String>,
    pub unchanged: usize,
}

impl SyncChanges {
    /// Whether the sync added, updated or removed any tool.
    pub fn changed(&self) -> bool {
        !(self.added.is_empty() && self.updated.is_empty() && self.removed.is_empty())
    }
}

/// Makes the provider's tools exactly `wanted`, matched on `path` (an MCP tool's name on
/// its server): new ones are added, changed ones updated in place (their id and agent
/// bindings kept), the others removed (with their bindings). All or nothing.
pub async fn sync_provider(
    pool: &PgPool,
    org: &OrgId,
    provider_id: &str,
    wanted: &[ToolFields],
) -> Result<(Vec<Tool>, SyncChanges), StoreError> {
    let mut tx = pool.begin().await?;
    let current = sqlx::query_as!(
        Tool,
        r#"SELECT id, provider_id, name, description, method, path, input_schema,
             kind AS "kind: ToolKind", toolkit, created_at, updated_at
           FROM tools WHERE org_id = $1 AND provider_id = $2 ORDER BY created_at, id FOR UPDATE"#,
        org.as_str(),
        provider_id,
    )
    .fetch_all(&mut *tx)
    .await?;
    let mut changes = SyncChanges::default();
    for t in &current {
        if !wanted.iter().any(|w| w.path == t.path) {
            sqlx::query!(
                "DELETE FROM tools WHERE org_id = $1 AND id = $2",
                org.as_str(),
                &t.id,
            )
            .execute(&mut *tx)
            .await?;
            changes.removed.push(t.name.clone());
        }
    }
    let mut out = Vec::with_capacity(wanted.len());
    for w in wanted {
        match current.iter().find(|t| t.path == w.path) {
            Some(t)
                if t.name == w.name
                    && t.description == w.description
                    && t.method == w.method
                    && t.input_schema.0 == w.input_schema
                    && t.kind == w.kind
                    && t.toolkit == w.toolkit =>
            {
                changes.unchanged += 1;
                out.push(t.clone());
            }
            Some(t) => {
                let row = update_in(&mut *tx, org, &t.id, w).await?;
                changes.updated.push(row.name.clone());
                out.push(row);
            }
            None => {
                let row = insert(&mut tx, org, w).await?;
                changes.added.push(row.name.clone());
                out.push(row);
            }
        }
    }
    tx.commit().await?;
    Ok((out, changes))
}
