//! Tools loaded with `load_tool` (D1), per thread: in Postgres so that a
//! restart or another replica offers the same tools; gone with the thread.

use sqlx::PgPool;

use super::{OrgId, StoreError};

/// Names of the tools loaded in the thread.
pub async fn list(pool: &PgPool, org: &OrgId, thread_id: &str) -> Result<Vec<String>, StoreError> {
    Ok(sqlx::query_scalar!(
        "SELECT tool_name FROM thread_loaded_tools WHERE org_id = $1 AND thread_id = $2 ORDER BY loaded_at, tool_name",
        org.as_str(),
        thread_id,
    )
    .fetch_all(pool)
    .await?)
}

/// Marks `names` loaded in the thread (loading twice is harmless).
pub async fn add(
    pool: &PgPool,
    org: &OrgId,
    thread_id: &str,
    names: &[String],
) -> Result<(), StoreError> {
    sqlx::query!(
        "INSERT INTO thread_loaded_tools (org_id, thread_id, tool_name) \
         SELECT $1, $2, unnest($3::TEXT[]) ON CONFLICT DO NOTHING",
        org.as_str(),
        thread_id,
        names,
    )
    .execute(pool)
    .await?;
    Ok(())
}
