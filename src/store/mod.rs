//! Postgres system of record. Every function that touches tenant data takes the
//! `OrgId` first and filters on it; another org's row is simply not found.
//! Every static query is checked at compile time (sqlx `query!`, `query_as!`,
//! `query_scalar!`) against the schema the migrations make, through the offline data in
//! `.sqlx/` (so a build needs no database: `.cargo/config.toml` sets `SQLX_OFFLINE`).
//! `scripts/sqlx-prepare` regenerates that data; the `query_data` tests fail while it
//! disagrees with the sources or the migrations. Only the lists' shared keyset
//! pagination ([`page::list`]) builds its SQL at run time.

pub mod agent_load;
pub mod agents;
pub mod api_keys;
pub mod audit_changes;
pub mod audit_events;
pub mod connections;
pub mod deployments;
pub mod error;
pub mod loaded_tools;
pub mod mcp_sessions;
pub mod mcp_tasks;
pub mod orgs;
pub mod page;
pub mod providers;
#[cfg(test)]
mod query_data;
pub mod result_copies;
pub mod retention;
pub mod schedules;
pub mod threads;
pub mod token_revocations;
pub mod tool_calls;
pub mod tool_mcp_meta;
pub mod tool_paging;
pub mod tool_vectors;
pub mod tools;
pub mod webhooks;
pub mod workflow_runs;
pub mod workflows;

pub use error::StoreError;
pub use page::{ListPage, PageRequest};

use serde::Serialize;
use sqlx::postgres::{PgPoolOptions, PgQueryResult};
use sqlx::PgPool;

/// An org id that was proven by authentication or by an admin lookup; store
/// functions take it first so no query forgets the tenant.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct OrgId(String);

impl OrgId {
    /// Only the auth layer and admin handlers (after checking the org exists) call this.
    pub fn trusted(id: impl Into<String>) -> Self {
        Self(id.into())
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for OrgId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What a `DELETE … WHERE org_id = $1 AND id = $2` did: no row deleted is `NotFound`.
pub(crate) fn deleted(done: PgQueryResult) -> Result<(), StoreError> {
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

pub async fn connect(url: &str, max_connections: u32) -> Result<PgPool, sqlx::Error> {
    PgPoolOptions::new()
        .max_connections(max_connections)
        .acquire_timeout(std::time::Duration::from_secs(5))
        .connect(url)
        .await
}

pub async fn migrate(pool: &PgPool) -> Result<(), sqlx::migrate::MigrateError> {
    sqlx::migrate!("./migrations").run(pool).await
}
