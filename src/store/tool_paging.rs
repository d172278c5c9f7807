//! P14: what walks learned about a tool's paging, one row per tool (the engine's
//! `Learned` as JSON), with when a walk last confirmed it; a tool's deletion takes it
//! along. Read with the agent ([`super::agent_load`]) for calls, and here for the Studio.

use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::PgPool;

use super::{OrgId, StoreError};

/// A tool's learned paging as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredPaging {
    pub learned: Value,
    pub confirmed_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// The learned paging of tool `tool_id`, when a walk kept any.
pub async fn get(
    pool: &PgPool,
    org: &OrgId,
    tool_id: &str,
) -> Result<Option<StoredPaging>, StoreError> {
    Ok(sqlx::query_as!(
        StoredPaging,
        "SELECT learned, confirmed_at, updated_at FROM tool_paging \
         WHERE org_id = $1 AND tool_id = $2",
        org.as_str(),
        tool_id,
    )
    .fetch_optional(pool)
    .await?)
}

/// Keeps `learned` for tool `tool_id` (confirmed now); a tool deleted meanwhile is
/// skipped.
pub async fn put(
    pool: &PgPool,
    org: &OrgId,
    tool_id: &str,
    learned: &Value,
) -> Result<(), StoreError> {
    sqlx::query!(
        "INSERT INTO tool_paging (org_id, tool_id, learned) \
         SELECT $1, t.id, $3 FROM tools t WHERE t.org_id = $1 AND t.id = $2 \
         ON CONFLICT (org_id, tool_id) DO UPDATE \
         SET learned = EXCLUDED.learned, confirmed_at = now(), updated_at = now()",
        org.as_str(),
        tool_id,
        learned,
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// A walk found what is kept still true.
pub async fn confirm(pool: &PgPool, org: &OrgId, tool_id: &str) -> Result<(), StoreError> {
    sqlx::query!(
        "UPDATE tool_paging SET confirmed_at = now() WHERE org_id = $1 AND tool_id = $2",
        org.as_str(),
        tool_id,
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// Drops what was kept (a response contradicted all of it).
pub async fn forget(pool: &PgPool, org: &OrgId, tool_id: &str) -> Result<(), StoreError> {
    sqlx::query!(
        "DELETE FROM tool_paging WHERE org_id = $1 AND tool_id = $2",
        org.as_str(),
        tool_id,
    )
    .execute(pool)
    .await?;
    Ok(())
}
