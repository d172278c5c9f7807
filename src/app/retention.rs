//! Retention: every replica runs [`spawn`]'s background task, but each pass
//! runs only on the replica that takes the Postgres advisory lock
//! (`pg_try_advisory_lock`, released when the pass ends); the others skip that pass.
//! A pass deletes, table by table, rows older than the configured ages, at most
//! `batch` rows per statement, looping until nothing older is left and yielding
//! between batches, so a large backlog never holds a lock on many rows or starves the
//! workers. Pruned rows are counted in `loopgate_retention_pruned_rows_total{table}`.
//!
//! Redis needs no pass: every key written there carries its own TTL.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use sqlx::PgPool;

use crate::config::settings::Settings;
use crate::store::retention::{self, Table};
use crate::store::StoreError;
use crate::telemetry::metrics::Metrics;

/// A revocation row outlives its token's expiry by this much (clock skew between
/// replicas), then it can never matter again.
const REVOCATION_MARGIN: Duration = Duration::from_secs(10 * 60);

const DAY: u64 = 24 * 3600;

/// An MCP server session unused this long is dead under any configuration: longer than
/// the longest idle lifetime `mcp_server_session_idle_seconds` allows (30 days).
const MCP_SESSION_AGE: Duration = Duration::from_secs(31 * DAY);

/// Ages and pacing of the passes.
#[derive(Debug, Clone)]
pub struct Policy {
    pub tool_calls: Duration,
    pub workflow_runs: Duration,
    pub threads_idle: Duration,
    /// How long after expiry (or use) a connect link is kept.
    pub links: Duration,
    pub audit_events: Duration,
    pub interval: Duration,
    pub batch: u32,
}

impl Policy {
    pub fn from_settings(s: &Settings) -> Self {
        Policy {
            tool_calls: Duration::from_secs(u64::from(s.retention_tool_calls_days) * DAY),
            workflow_runs: Duration::from_secs(u64::from(s.retention_workflow_runs_days) * DAY),
            threads_idle: Duration::from_secs(u64::from(s.retention_threads_idle_days) * DAY),
            links: Duration::from_secs(u64::from(s.retention_links_days) * DAY),
            audit_events: Duration::from_secs(u64::from(s.retention_audit_events_days) * DAY),
            interval: Duration::from_secs(s.retention_interval_seconds),
            batch: s.retention_batch,
        }
    }

    fn age(&self, table: Table) -> Duration {
        match table {
            Table::ToolCalls | Table::ToolCallBodies => self.tool_calls,
            Table::WorkflowRuns | Table::WebhookDeliveries => self.workflow_runs,
            Table::Threads => self.threads_idle,
            Table::ConnectLinks => self.links,
            Table::TokenRevocations => REVOCATION_MARGIN,
            // an expired copy is never read again
            Table::ResultCopies => Duration::ZERO,
            Table::AuditEvents => self.audit_events,
            Table::McpSessions => MCP_SESSION_AGE,
        }
    }
}

/// Rows deleted by one pass, by table name.
pub type Pruned = BTreeMap<&'static str, u64>;

/// One pass: `None` when another replica holds the lock (nothing was done here).
pub async fn prune_once(
    pool: &PgPool,
    policy: &Policy,
    metrics: &Metrics,
) -> Result<Option<Pruned>, StoreError> {
    let mut conn = pool.acquire().await?;
    if !retention::try_lock(&mut conn).await? {
        return Ok(None);
    }
    let pass = prune_locked(&mut conn, policy, metrics).await;
    if retention::unlock(&mut conn).await.is_err() {
        // never hand a connection that may still hold the lock back to the pool
        conn.close_on_drop();
    }
    pass.map(Some)
}

async fn prune_locked(
    conn: &mut sqlx::PgConnection,
    policy: &Policy,
    metrics: &Metrics,
) -> Result<Pruned, StoreError> {
    let limit = i64::from(policy.batch.max(1));
    let mut pruned = Pruned::new();
    for table in Table::ALL {
        let age = policy.age(table).as_secs_f64();
        let mut total = 0u64;
        loop {
            let n = retention::delete_batch(conn, table, age, limit).await?;
            total += n;
            if n > 0 {
                metrics
                    .retention_pruned
                    .add(&[("table", table.name())], n as f64);
            }
            if n < limit as u64 {
                break;
            }
            tokio::task::yield_now().await;
        }
        pruned.insert(table.name(), total);
    }
    Ok(pruned)
}

/// Runs a pass every `policy.interval` for as long as the process lives.
pub fn spawn(pool: PgPool, policy: Policy, metrics: Arc<Metrics>) -> tokio::task::JoinHandle<()> {
    // every table's series exists from the start (at 0), so rates and dashboards see it
    for table in Table::ALL {
        metrics
            .retention_pruned
            .add(&[("table", table.name())], 0.0);
    }
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(policy.interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // the first tick is immediate: start one interval after boot instead
        tick.tick().await;
        loop {
            tick.tick().await;
            match prune_once(&pool, &policy, &metrics).await {
                Ok(Some(pruned)) => tracing::info!(?pruned, "retention pass"),
                Ok(None) => tracing::debug!("retention pass skipped: another replica runs it"),
                Err(e) => tracing::warn!(error = %e, "retention pass failed"),
            }
        }
    })
}
