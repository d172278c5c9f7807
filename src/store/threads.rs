//! Threads: (org, agent, caller, thread key). Two callers using the same key get two
//! threads; the runtime scopes stored results and restrictions by the thread id.

use sqlx::PgPool;

use super::{OrgId, StoreError};
use crate::crypto::new_id;

/// Returns the thread's id, creating the thread on first use; marks it used now (an idle
/// thread is pruned by retention, `crate::app::retention`). Called only when the thread is new
/// or was not used recently (`crate::call::threads`).
pub async fn get_or_create(
    pool: &PgPool,
    org: &OrgId,
    agent_id: &str,
    caller: &str,
    thread_key: &str,
) -> Result<String, StoreError> {
    let id = sqlx::query_scalar!(
        "INSERT INTO threads (id, org_id, agent_id, caller, thread_key) VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT (org_id, agent_id, caller, thread_key) DO UPDATE SET last_used_at = now() \
         RETURNING id",
        new_id("thr"),
        org.as_str(),
        agent_id,
        caller,
        thread_key,
    )
    .fetch_one(pool)
    .await?;
    Ok(id)
}
