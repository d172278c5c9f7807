//! Retention: deletes rows past their age, in bounded batches, under a
//! Postgres advisory lock so one replica prunes at a time.
//!
//! This is the one store module whose statements are not scoped to an org: pruning is
//! a maintenance pass applying the same age policy to every tenant. It reads no tenant
//! data and returns only counts. Each statement deletes at most `limit` rows, chosen by
//! an index range scan, and re-checks the age on the row it deletes, so a row touched
//! meanwhile (a thread used again) is kept.
//!
//! Stored bodies (`tool_call_bodies`, a cache hit's text referenced by its records) go
//! once older than the records' age and referenced by no record. This cannot race a
//! record writer: a writer that inserts a record referencing a body without writing the
//! body itself wrote (upserted) that body less than an hour before, by Postgres' clock
//! (`call::call_records::BODY_REWRITE`), so the body's `created_at` is younger than any
//! record age (at least a day: `Settings` validation) and the age test fails — and a
//! writer that upserts the body while it is being deleted either waits for the delete and
//! inserts it afresh, or locks it first, and then the delete re-checks the refreshed
//! `created_at` on the row it would delete and keeps it.

use sqlx::PgConnection;

use super::StoreError;

/// The advisory lock taken for a pass (any fixed 64-bit value unique to this purpose).
pub const LOCK_KEY: i64 = 0x6c67_7265_7465_6e74; // "lgretent"

/// What grows per call and is pruned by age.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    /// Tool-call records, their stored outcome included, by `created_at`.
    ToolCalls,
    /// Stored bodies no record references any more, by `created_at` (with the records' age).
    ToolCallBodies,
    /// Workflow runs, by `created_at` (their start).
    WorkflowRuns,
    /// Webhook deliveries (their attempts go with them), by `created_at`, with the runs' age.
    WebhookDeliveries,
    /// Threads idle since `last_used_at`; their tool calls and tool-load state go with
    /// them (ON DELETE CASCADE).
    Threads,
    /// Connect links, once expired or used.
    ConnectLinks,
    /// Revocations of runtime tokens that expired anyway.
    TokenRevocations,
    /// Durable copies of stored results made while Redis was out of reach (K2), once
    /// expired.
    ResultCopies,
    /// Audit events, by `created_at` (the write).
    AuditEvents,
    /// Sessions of the agents' MCP servers (M2), by `last_seen_at`, once unused for
    /// longer than any session can live (ended or expired: answered 404 either way).
    McpSessions,
}

impl Table {
    /// In pruning order: calls before the threads that hold them, bodies after both.
    pub const ALL: [Table; 10] = [
        Table::ToolCalls,
        Table::WorkflowRuns,
        Table::WebhookDeliveries,
        Table::Threads,
        Table::ToolCallBodies,
        Table::ConnectLinks,
        Table::TokenRevocations,
        Table::ResultCopies,
        Table::AuditEvents,
        Table::McpSessions,
    ];

    /// The metric label and log name.
    pub fn name(self) -> &'static str {
        match self {
            Table::ToolCalls => "tool_calls",
            Table::ToolCallBodies => "tool_call_bodies",
            Table::WorkflowRuns => "workflow_runs",
            Table::WebhookDeliveries => "webhook_deliveries",
            Table::Threads => "threads",
            Table::ConnectLinks => "connect_links",
            Table::TokenRevocations => "runtime_token_revocations",
            Table::ResultCopies => "result_copies",
            Table::AuditEvents => "audit_events",
            Table::McpSessions => "mcp_sessions",
        }
    }
}

/// Deletes at most `limit` rows of `table` older than `age_seconds`; the count deleted
/// (fewer than `limit`: nothing older is left).
pub async fn delete_batch(
    conn: &mut PgConnection,
    table: Table,
    age_seconds: f64,
    limit: i64,
) -> Result<u64, StoreError> {
    // `$1`: age in seconds (rows older than `now() - $1` go); `$2`: batch size
    let query = match table {
        Table::ToolCalls => sqlx::query!(
            "DELETE FROM tool_calls WHERE id IN (SELECT id FROM tool_calls \
             WHERE created_at < now() - $1 * interval '1 second' LIMIT $2) \
             AND created_at < now() - $1 * interval '1 second'",
            age_seconds,
            limit,
        ),
        Table::ToolCallBodies => sqlx::query!(
            "DELETE FROM tool_call_bodies WHERE (org_id, id) IN (SELECT b.org_id, b.id \
             FROM tool_call_bodies b WHERE b.created_at < now() - $1 * interval '1 second' \
             AND NOT EXISTS (SELECT 1 FROM tool_calls c WHERE c.org_id = b.org_id AND c.body_id = b.id) \
             LIMIT $2) \
             AND created_at < now() - $1 * interval '1 second'",
            age_seconds,
            limit,
        ),
        Table::WorkflowRuns => sqlx::query!(
            "DELETE FROM workflow_runs WHERE id IN (SELECT id FROM workflow_runs \
             WHERE created_at < now() - $1 * interval '1 second' LIMIT $2) \
             AND created_at < now() - $1 * interval '1 second'",
            age_seconds,
            limit,
        ),
        Table::WebhookDeliveries => sqlx::query!(
            "DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries \
             WHERE created_at < now() - $1 * interval '1 second' LIMIT $2) \
             AND created_at < now() - $1 * interval '1 second'",
            age_seconds,
            limit,
        ),
        Table::Threads => sqlx::query!(
            "DELETE FROM threads WHERE id IN (SELECT id FROM threads \
             WHERE last_used_at < now() - $1 * interval '1 second' LIMIT $2) \
             AND last_used_at < now() - $1 * interval '1 second'",
            age_seconds,
            limit,
        ),
        Table::ConnectLinks => sqlx::query!(
            "DELETE FROM connect_links WHERE token_hash IN ( \
             (SELECT token_hash FROM connect_links WHERE expires_at < now() - $1 * interval '1 second' LIMIT $2) \
             UNION (SELECT token_hash FROM connect_links WHERE used_at < now() - $1 * interval '1 second' LIMIT $2)) \
             AND (expires_at < now() - $1 * interval '1 second' OR used_at < now() - $1 * interval '1 second')",
            age_seconds,
            limit,
        ),
        Table::TokenRevocations => sqlx::query!(
            "DELETE FROM runtime_token_revocations WHERE (org_id, token_id) IN \
             (SELECT org_id, token_id FROM runtime_token_revocations \
             WHERE expires_at < now() - $1 * interval '1 second' LIMIT $2) \
             AND expires_at < now() - $1 * interval '1 second'",
            age_seconds,
            limit,
        ),
        Table::ResultCopies => sqlx::query!(
            "DELETE FROM result_copies WHERE (org_id, key) IN (SELECT org_id, key \
             FROM result_copies WHERE expires_at < now() - $1 * interval '1 second' LIMIT $2) \
             AND expires_at < now() - $1 * interval '1 second'",
            age_seconds,
             limit,
         ),
        Table::AuditEvents => sqlx::query!(
            "DELETE FROM audit_events WHERE id IN (SELECT id FROM audit_events \
             WHERE created_at < now() - $1 * interval '1 second' LIMIT $2) \
             AND created_at < now() - $1 * interval '1 second'",
            age_seconds,
            limit,
        ),
        Table::McpSessions => sqlx::query!(
            "DELETE FROM mcp_sessions WHERE id IN (SELECT id FROM mcp_sessions \
             WHERE last_seen_at < now() - $1 * interval '1 second' LIMIT $2) \
             AND last_seen_at < now() - $1 * interval '1 second'",
            age_seconds,
            limit,
        ),
    };
    Ok(query.execute(conn).await?.rows_affected())
}

/// Takes the pass's session lock on this connection if no other session holds it.
pub async fn try_lock(conn: &mut PgConnection) -> Result<bool, StoreError> {
    Ok(
        sqlx::query_scalar!(r#"SELECT pg_try_advisory_lock($1) AS "locked!""#, LOCK_KEY)
            .fetch_one(conn)
            .await?,
    )
}

/// Releases the lock taken by [`try_lock`] on the same connection.
pub async fn unlock(conn: &mut PgConnection) -> Result<(), StoreError> {
    let _: bool = sqlx::query_scalar!(r#"SELECT pg_advisory_unlock($1) AS "unlocked!""#, LOCK_KEY)
        .fetch_one(conn)
        .await?;
    Ok(())
}
