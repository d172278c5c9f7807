//! Sessions of the agents' MCP servers (M2), issued at `initialize`. Postgres is the
//! only record, so every replica serves every session and an ended one is refused
//! everywhere from the next request on: each request reads (and touches) its row, one
//! primary-key statement, with no cache in front of it.

use sqlx::PgPool;

use super::{OrgId, StoreError};

/// Who a session belongs to: another org, agent or caller never reaches it.
#[derive(Debug, Clone, Copy)]
pub struct SessionKey<'a> {
    pub id: &'a str,
    pub org: &'a OrgId,
    pub agent_id: &'a str,
    pub owner: &'a str,
}

/// Records a session issued at `initialize`.
pub async fn open(
    pool: &PgPool,
    key: SessionKey<'_>,
    protocol_version: &str,
) -> Result<(), StoreError> {
    sqlx::query!(
        "INSERT INTO mcp_sessions (id, org_id, agent_id, owner, protocol_version) \
         VALUES ($1, $2, $3, $4, $5)",
        key.id,
        key.org.as_str(),
        key.agent_id,
        key.owner,
        protocol_version,
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// The negotiated protocol version of a live session (not ended, used within
/// `idle_seconds`), which now counts as used; `None` for any other id.
pub async fn touch(
    pool: &PgPool,
    key: SessionKey<'_>,
    idle_seconds: u64,
) -> Result<Option<String>, StoreError> {
    Ok(sqlx::query_scalar!(
        "UPDATE mcp_sessions SET last_seen_at = now() \
         WHERE id = $1 AND org_id = $2 AND agent_id = $3 AND owner = $4 AND ended_at IS NULL \
           AND last_seen_at > now() - make_interval(secs => $5) \
         RETURNING protocol_version",
        key.id,
        key.org.as_str(),
        key.agent_id,
        key.owner,
        idle_seconds as f64,
    )
    .fetch_optional(pool)
    .await?)
}

/// Ends a live session; `false` when there was none to end.
pub async fn end(
    pool: &PgPool,
    key: SessionKey<'_>,
    idle_seconds: u64,
) -> Result<bool, StoreError> {
    let ended = sqlx::query!(
        "UPDATE mcp_sessions SET ended_at = now() \
         WHERE id = $1 AND org_id = $2 AND agent_id = $3 AND owner = $4 AND ended_at IS NULL \
           AND last_seen_at > now() - make_interval(secs => $5)",
        key.id,
        key.org.as_str(),
        key.agent_id,
        key.owner,
        idle_seconds as f64,
    )
    .execute(pool)
    .await?;
    Ok(ended.rows_affected() == 1)
}
