//! Retention: a pass deletes tool calls, workflow runs (and their webhook deliveries),
//! idle threads, spent connect links, dead revocations and audit events past their age —
//! in every org alike, in batches smaller than the backlog — keeps everything recent, and
//! does nothing while another replica holds the advisory lock.

use std::time::Duration;

use serde_json::json;
use sqlx::PgPool;

use loopgate::app::retention::{prune_once, Policy};
use loopgate::store::retention::LOCK_KEY;
use loopgate::telemetry::metrics::Metrics;

use crate::support::helpers::{spawn_app, TestApp};
use crate::support::rig::Rig;
use crate::support::upstream_server;

const DAY: u64 = 24 * 3600;

fn policy(batch: u32) -> Policy {
    Policy {
        tool_calls: Duration::from_secs(30 * DAY),
        workflow_runs: Duration::from_secs(30 * DAY),
        threads_idle: Duration::from_secs(30 * DAY),
        links: Duration::from_secs(DAY),
        audit_events: Duration::from_secs(365 * DAY),
        interval: Duration::from_secs(600),
        batch,
    }
}

async fn exec(pool: &PgPool, sql: &str, binds: &[&str]) {
    let mut q = sqlx::query(sqlx::AssertSqlSafe(sql.to_string()));
    for b in binds {
        q = q.bind(*b);
    }
    q.execute(pool).await.expect(sql);
}

async fn count(pool: &PgPool, sql: &str, org: &str) -> i64 {
    sqlx::query_scalar(sqlx::AssertSqlSafe(sql.to_string()))
        .bind(org)
        .fetch_one(pool)
        .await
        .expect(sql)
}

/// Calls in threads `old` (3 calls), `fresh` (2) and `mixed` (2, one of which will be
/// aged), a workflow with an old and a recent run, three connect links and two
/// revocations; then ages what should go.
async fn seed(app: &TestApp, rig: &Rig, pool: &PgPool) {
    let token = rig.token(app, "u1", json!({})).await;
    for (thread, n) in [("old", 3), ("fresh", 2), ("mixed", 2)] {
        for _ in 0..n {
            rig.call(app, &token, thread, "list_contacts", json!({"page": 1}))
                .await
                .ok(200);
        }
    }
    // the records are written behind the answers (K1): all in before they are aged
    app.records_flushed().await;
    let org = rig.t.org.as_str();
    exec(pool, "INSERT INTO workflows (id, org_id, agent_id, name, steps) VALUES ('wf_' || $1, $1, $2, 'w', '[]')", &[org, &rig.agent]).await;
    exec(
        pool,
        "INSERT INTO workflow_runs (id, org_id, workflow_id, caller, input, created_at) VALUES \
         ('run_old_' || $1, $1, 'wf_' || $1, 'c', '{}', now() - interval '40 days'), \
         ('run_new_' || $1, $1, 'wf_' || $1, 'c', '{}', now() - interval '10 days')",
        &[org],
    )
    .await;
    let link = "INSERT INTO connect_links (token_hash, org_id, user_id, toolkit, provider_id, expires_at, used_at) \
         VALUES (sha256(convert_to($1 || $3, 'UTF8')), $1, 'u1', 'crm', $2, now() + $4::interval, $5::timestamptz)";
    let two_days_ago = chrono::Utc::now() - chrono::Duration::days(2);
    for (name, expires, used) in [
        ("expired-2d", "-2 days", None),
        ("expired-1h", "-1 hour", None),
        ("used-2d", "-2 days", Some(two_days_ago)),
        ("live", "15 minutes", None),
    ] {
        sqlx::query(link)
            .bind(org)
            .bind(&rig.provider)
            .bind(name)
            .bind(expires)
            .bind(used)
            .execute(pool)
            .await
            .expect("insert link");
    }
    exec(
        pool,
        "INSERT INTO runtime_token_revocations (org_id, token_id, expires_at) VALUES \
         ($1, 'rtk_dead', now() - interval '1 day'), ($1, 'rtk_live', now() + interval '1 hour')",
        &[org],
    )
    .await;
    // age: thread `old` idle 40 days with its calls; one call of `mixed` 40 days old
    exec(pool, "UPDATE threads SET last_used_at = now() - interval '40 days' WHERE org_id = $1 AND thread_key = 'old'", &[org]).await;
    exec(pool, "UPDATE tool_calls SET created_at = now() - interval '40 days' WHERE org_id = $1 AND thread_id = \
         (SELECT id FROM threads WHERE org_id = $1 AND thread_key = 'old')", &[org]).await;
    exec(pool, "UPDATE tool_calls SET created_at = now() - interval '40 days' WHERE id = \
         (SELECT c.id FROM tool_calls c JOIN threads t ON t.id = c.thread_id WHERE c.org_id = $1 AND t.thread_key = 'mixed' LIMIT 1)", &[org]).await;
}

/// What is left of one org: (tool calls, threads, runs, links, revocations).
async fn left(pool: &PgPool, org: &str) -> (i64, i64, i64, i64, i64) {
    (
        count(
            pool,
            "SELECT count(*) FROM tool_calls WHERE org_id = $1",
            org,
        )
        .await,
        count(pool, "SELECT count(*) FROM threads WHERE org_id = $1", org).await,
        count(
            pool,
            "SELECT count(*) FROM workflow_runs WHERE org_id = $1",
            org,
        )
        .await,
        count(
            pool,
            "SELECT count(*) FROM connect_links WHERE org_id = $1",
            org,
        )
        .await,
        count(
            pool,
            "SELECT count(*) FROM runtime_token_revocations WHERE org_id = $1",
            org,
        )
        .await,
    )
}

#[tokio::test]
async fn retention_prunes_old_rows_of_every_org_in_small_batches_and_keeps_recent_ones() {
    let app = spawn_app().await;
    let up = upstream_server::start().await;
    let a = Rig::new(&app, &up, true).await;
    let b = Rig::new(&app, &up, true).await;
    let pool = loopgate::store::connect(&app.database_url, 3)
        .await
        .unwrap();
    seed(&app, &a, &pool).await;
    seed(&app, &b, &pool).await;
    for org in [&a.t.org, &b.t.org] {
        assert_eq!(left(&pool, org).await, (7, 3, 2, 4, 2));
    }

    let metrics = Metrics::default();
    // a batch of 2 is smaller than the backlog of every table (4 old calls in 2 orgs …)
    let pruned = prune_once(&pool, &policy(2), &metrics)
        .await
        .unwrap()
        .expect("the lock was free");
    assert_eq!(pruned["tool_calls"], 8, "{pruned:?}");
    assert_eq!(pruned["threads"], 2, "{pruned:?}");
    assert_eq!(pruned["workflow_runs"], 2, "{pruned:?}");
    assert_eq!(pruned["connect_links"], 4, "{pruned:?}");
    assert_eq!(pruned["runtime_token_revocations"], 2, "{pruned:?}");
    for org in [&a.t.org, &b.t.org] {
        // kept: fresh's 2 calls + mixed's recent one; threads fresh and mixed; the recent
        // run; the links expired an hour ago and live; the live revocation
        assert_eq!(left(&pool, org).await, (3, 2, 1, 2, 1), "org {org}");
        let threads: Vec<String> = sqlx::query_scalar(
            "SELECT thread_key FROM threads WHERE org_id = $1 ORDER BY thread_key",
        )
        .bind(org)
        .fetch_all(&pool)
        .await
        .unwrap();
        assert_eq!(threads, ["fresh", "mixed"]);
    }
    let text = metrics.render();
    assert!(
        text.contains("loopgate_retention_pruned_rows_total{table=\"tool_calls\"} 8"),
        "{text}"
    );

    // a kept thread still works, and its records are still readable
    let token = a.token(&app, "u1", json!({})).await;
    a.call(&app, &token, "mixed", "list_contacts", json!({"page": 1}))
        .await
        .ok(200);

    // nothing older is left: a second pass deletes nothing
    let again = prune_once(&pool, &policy(1000), &metrics)
        .await
        .unwrap()
        .unwrap();
    assert!(again.values().all(|n| *n == 0), "{again:?}");
}

#[tokio::test]
async fn retention_pass_does_nothing_while_another_replica_holds_the_lock() {
    let app = spawn_app().await;
    let up = upstream_server::start().await;
    let a = Rig::new(&app, &up, true).await;
    let pool = loopgate::store::connect(&app.database_url, 3)
        .await
        .unwrap();
    seed(&app, &a, &pool).await;

    // another replica's pass in progress: its session holds the lock
    let mut other = pool.acquire().await.unwrap();
    let took: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock($1)")
        .bind(LOCK_KEY)
        .fetch_one(&mut *other)
        .await
        .unwrap();
    assert!(took);
    let metrics = Metrics::default();
    let skipped = prune_once(&pool, &policy(1000), &metrics).await.unwrap();
    assert!(skipped.is_none(), "{skipped:?}");
    assert_eq!(left(&pool, &a.t.org).await, (7, 3, 2, 4, 2));
    assert!(!metrics
        .render()
        .contains("loopgate_retention_pruned_rows_total{"));

    // released: the next pass runs, and releases the lock after itself
    let _: bool = sqlx::query_scalar("SELECT pg_advisory_unlock($1)")
        .bind(LOCK_KEY)
        .fetch_one(&mut *other)
        .await
        .unwrap();
    let done = prune_once(&pool, &policy(1000), &metrics).await.unwrap();
    assert_eq!(done.expect("the lock was free")["tool_calls"], 4);
    let free: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock($1)")
        .bind(LOCK_KEY)
        .fetch_one(&mut *other)
        .await
        .unwrap();
    assert!(free, "the pass released its lock");
}

/// Webhook deliveries go at the workflow runs' age, with their attempts; audit events at
/// theirs (a year here); MCP server sessions once unused past any lifetime; younger ones
/// stay (W7, M2, audit trail).
#[tokio::test]
async fn retention_prunes_old_deliveries_with_their_attempts_and_old_audit_events_w7() {
    let app = spawn_app().await;
    let up = upstream_server::start().await;
    let a = Rig::new(&app, &up, true).await;
    let pool = loopgate::store::connect(&app.database_url, 3)
        .await
        .unwrap();
    let org = a.t.org.as_str();
    exec(
        &pool,
        "INSERT INTO webhook_endpoints (id, org_id, url, events, secret) VALUES \
         ('whe_' || $1, $1, 'https://hooks.example.com/in', ARRAY['workflow_run.succeeded'], '\\x00')",
        &[org],
    )
    .await;
    exec(
        &pool,
        "INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event_type, run_id, payload, status, attempts, created_at) VALUES \
         ('dlv_old_' || $1, $1, 'whe_' || $1, 'workflow_run.succeeded', 'run_a', '{}', 'succeeded', 1, now() - interval '40 days'), \
         ('dlv_new_' || $1, $1, 'whe_' || $1, 'workflow_run.succeeded', 'run_b', '{}', 'succeeded', 1, now() - interval '10 days')",
        &[org],
    )
    .await;
    exec(
        &pool,
        "INSERT INTO webhook_attempts (delivery_id, attempt, status_code, duration_ms, created_at) VALUES \
         ('dlv_old_' || $1, 1, 204, 3, now() - interval '40 days'), \
         ('dlv_new_' || $1, 1, 204, 3, now() - interval '10 days')",
        &[org],
    )
    .await;
    exec(
        &pool,
        "INSERT INTO audit_events (id, org_id, actor_type, actor_id, action, resource_type, resource_id, changes, created_at) VALUES \
         ('aud_old_' || $1, $1, 'admin', 'admin', 'update', 'org', $1, '{}', now() - interval '400 days'), \
         ('aud_new_' || $1, $1, 'admin', 'admin', 'update', 'org', $1, '{}', now() - interval '300 days')",
        &[org],
    )
    .await;
    exec(
        &pool,
        "INSERT INTO mcp_sessions (id, org_id, agent_id, owner, protocol_version, last_seen_at) VALUES \
         ('mcs_old_' || $1, $1, $2, 'key:k', '2025-06-18', now() - interval '40 days'), \
         ('mcs_new_' || $1, $1, $2, 'key:k', '2025-06-18', now() - interval '20 days')",
        &[org, &a.agent],
    )
    .await;
    let audited = count(
        &pool,
        "SELECT count(*) FROM audit_events WHERE org_id = $1",
        org,
    )
    .await;

    let metrics = Metrics::default();
    let pruned = prune_once(&pool, &policy(1000), &metrics)
        .await
        .unwrap()
        .expect("the lock was free");
    assert_eq!(pruned["webhook_deliveries"], 1, "{pruned:?}");
    assert_eq!(pruned["audit_events"], 1, "{pruned:?}");
    // an MCP session unused past any lifetime goes; one unused for 20 days may still live
    assert_eq!(pruned["mcp_sessions"], 1, "{pruned:?}");
    let ids = |sql: &'static str| {
        let pool = pool.clone();
        async move {
            sqlx::query_scalar::<_, String>(sql)
                .bind(org)
                .fetch_all(&pool)
                .await
                .expect(sql)
        }
    };
    assert_eq!(
        ids("SELECT id FROM webhook_deliveries WHERE org_id = $1").await,
        [format!("dlv_new_{org}")]
    );
    assert_eq!(
        ids("SELECT a.delivery_id FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.org_id = $1").await,
        [format!("dlv_new_{org}")]
    );
    let orphans = count(
        &pool,
        "SELECT count(*) FROM webhook_attempts WHERE delivery_id = 'dlv_old_' || $1",
        org,
    )
    .await;
    assert_eq!(orphans, 0, "an old delivery's attempts go with it");
    assert_eq!(
        ids("SELECT id FROM mcp_sessions WHERE org_id = $1").await,
        [format!("mcs_new_{org}")]
    );
    let kept = ids(
        "SELECT id FROM audit_events WHERE org_id = $1 AND id IN ('aud_old_' || $1, 'aud_new_' || $1)",
    ).await;
    assert_eq!(kept, [format!("aud_new_{org}")]);
    assert_eq!(
        count(
            &pool,
            "SELECT count(*) FROM audit_events WHERE org_id = $1",
            org
        )
        .await,
        audited - 1,
        "the rig's own fresh events stay"
    );
}
