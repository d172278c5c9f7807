//! Postgres system of record. Every function that touches tenant data takes the
//! `OrgId` first and filters on it; another org's row is simply not found.
//! Queries are checked at runtime (sqlx `query_as`) rather than at compile time so the
//! crate builds without a database; every one of them is exercised by `tests/`.

pub mod agent_load;
pub mod agents;
pub mod api_keys;
pub mod connections;
pub mod deployments;
pub mod error;
pub mod loaded_tools;
pub mod orgs;
pub mod page;
pub mod providers;
pub mod retention;
pub mod threads;
pub mod token_revocations;
pub mod tool_calls;
pub mod tools;
pub mod workflow_runs;
pub mod workflows;

pub use error::StoreError;
pub use page::{ListPage, PageRequest};

use serde::Serialize;
use sqlx::postgres::PgPoolOptions;
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

/// Runs a static `DELETE … WHERE org_id = $1 AND id = $2`; no row deleted is `NotFound`.
pub(crate) async fn delete_owned(
    pool: &PgPool,
    sql: &'static str,
    org: &OrgId,
    id: &str,
) -> Result<(), StoreError> {
    let done = sqlx::query(sql)
        .bind(org.as_str())
        .bind(id)
        .execute(pool)
        .await?;
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
