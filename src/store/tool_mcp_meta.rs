//! What an MCP tool's server said of it beyond name, description and input schema
//! (`title`, `annotations`, `outputSchema`): kept at sync (M1) in `tools.mcp_meta`, and
//! served again in an agent's MCP `tools/list` (M2).

use std::collections::HashMap;

use serde_json::Value;
use sqlx::PgPool;

use super::{OrgId, StoreError};

/// Sets the provider's tools' metadata from `by_path` (tool path → metadata object, `{}`
/// for none); answers the names of the tools whose metadata changed.
pub async fn set(
    pool: &PgPool,
    org: &OrgId,
    provider_id: &str,
    by_path: &Value,
) -> Result<Vec<String>, StoreError> {
    Ok(sqlx::query_scalar!(
        "UPDATE tools t SET mcp_meta = NULLIF(m.value, '{}'::jsonb), updated_at = now() \
         FROM jsonb_each($3::jsonb) m \
         WHERE t.org_id = $1 AND t.provider_id = $2 AND t.kind = 'mcp' AND t.path = m.key \
           AND t.mcp_meta IS DISTINCT FROM NULLIF(m.value, '{}'::jsonb) \
         RETURNING t.name",
        org.as_str(),
        provider_id,
        by_path,
    )
    .fetch_all(pool)
    .await?)
}

/// The metadata of the agent's MCP tools that have some, by tool name.
pub async fn of_agent(
    pool: &PgPool,
    org: &OrgId,
    agent_id: &str,
) -> Result<HashMap<String, Value>, StoreError> {
    let rows = sqlx::query!(
        r#"SELECT t.name, t.mcp_meta AS "mcp_meta!" FROM agent_tools b
           JOIN tools t ON t.org_id = b.org_id AND t.id = b.tool_id
           WHERE b.org_id = $1 AND b.agent_id = $2 AND t.mcp_meta IS NOT NULL"#,
        org.as_str(),
        agent_id,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(|r| (r.name, r.mcp_meta)).collect())
}
