//! A thread is resolved without a write per call. Its row is read with the agent (one
//! statement), `last_used_at` is written again only once it is older than the touch
//! interval (it feeds retention's idle pruning), and a thread deleted meanwhile
//! (retention) is created afresh by the next call on any replica. Two app instances share
//! one database and Redis, as replicas do; statements are counted on the wire
//! (`sql_count`).

use std::time::Duration;

use serde_json::json;
use sqlx::PgPool;

use loopgate::app::retention::{prune_once, Policy};
use loopgate::telemetry::metrics::Metrics;

use crate::support::helpers::{fresh_database, spawn_with, test_settings, TestApp};
use crate::support::rig::Rig;
use crate::support::sql_count::{self, SqlCounter};
use crate::support::upstream_server::{self, Upstream};

pub struct Replicas {
    pub counter: SqlCounter,
    pub a: TestApp,
    pub b: TestApp,
    pub up: Upstream,
    pub rig: Rig,
    pub token: String,
    pub pool: PgPool,
}

impl Replicas {
    /// Both replicas' background vector jobs done (D6), so a statement count starts clean.
    pub async fn settled(&self) {
        self.a.vectors_settled().await;
        self.b.vectors_settled().await;
    }
}

/// Two app instances on one database (through the statement counter) and one Redis.
pub async fn replicas() -> Replicas {
    replicas_with(test_settings(String::new()).agent_memory_seconds).await
}

/// [`replicas`] keeping agents in memory for `memory` seconds (`agent_memory_seconds`).
pub async fn replicas_with(memory: u64) -> Replicas {
    let database = fresh_database().await;
    let counter = sql_count::start(&database).await;
    let settings = || crate::cost::sql_per_call::with_memory(counter.url.clone(), memory);
    let a = spawn_with(settings()).await;
    let b = spawn_with(settings()).await;
    let up = upstream_server::start().await;
    let rig = Rig::new(&a, &up, false).await;
    let token = rig.token(&a, "u1", json!({})).await;
    let pool = loopgate::store::connect(&database, 2).await.unwrap();
    Replicas {
        counter,
        a,
        b,
        up,
        rig,
        token,
        pool,
    }
}

impl Replicas {
    /// A pass-through call in thread `thread` through `app`; its call id.
    pub async fn call(&self, app: &TestApp, thread: &str) -> String {
        let r = self
            .rig
            .call(app, &self.token, thread, "get_contact", json!({"id": 7}))
            .await;
        assert_eq!(r.ok(200)["result"]["name"], "Contact 7", "{}", r.text);
        r.body["id"].as_str().unwrap().to_string()
    }

    /// The ids of the org's threads with key `key`.
    async fn threads(&self, key: &str) -> Vec<String> {
        sqlx::query_scalar("SELECT id FROM threads WHERE org_id = $1 AND thread_key = $2")
            .bind(&self.rig.t.org)
            .bind(key)
            .fetch_all(&self.pool)
            .await
            .unwrap()
    }

    /// The thread a call was recorded in (once its record, written behind, is in).
    async fn thread_of(&self, call: &str) -> String {
        self.a.records_flushed().await;
        self.b.records_flushed().await;
        sqlx::query_scalar("SELECT thread_id FROM tool_calls WHERE org_id = $1 AND id = $2")
            .bind(&self.rig.t.org)
            .bind(call)
            .fetch_one(&self.pool)
            .await
            .unwrap()
    }

    /// The row's version (`xmin` changes with every write of it) and `last_used_at`.
    async fn row(&self, thread: &str) -> (String, chrono::DateTime<chrono::Utc>) {
        sqlx::query_as("SELECT xmin::text, last_used_at FROM threads WHERE id = $1")
            .bind(thread)
            .fetch_one(&self.pool)
            .await
            .unwrap()
    }

    async fn age(&self, thread: &str, interval: &str) {
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE threads SET last_used_at = now() - interval '{interval}' WHERE id = $1"
        )))
        .bind(thread)
        .execute(&self.pool)
        .await
        .unwrap();
    }
}

/// Statements that write the threads table.
fn thread_writes(sql: &[String]) -> usize {
    sql.iter()
        .filter(|s| s.contains("INSERT INTO threads") || s.contains("UPDATE threads"))
        .count()
}

#[tokio::test]
async fn one_thread_across_replicas_and_its_calls_do_not_write_its_row() {
    let r = replicas().await;
    let first = r.call(&r.a, "th").await;
    let second = r.call(&r.b, "th").await;
    let ids = r.threads("th").await;
    assert_eq!(ids.len(), 1, "one thread for (org, agent, caller, th)");
    assert_eq!(r.thread_of(&first).await, ids[0]);
    assert_eq!(
        r.thread_of(&second).await,
        ids[0],
        "same thread on replica B"
    );

    // many calls on both replicas, and a step: the row is read, never written
    let before = r.row(&ids[0]).await;
    r.settled().await;
    let from = r.counter.statements();
    for i in 0..6 {
        let app = if i % 2 == 0 { &r.a } else { &r.b };
        let call = r.call(app, "th").await;
        assert_eq!(r.thread_of(&call).await, ids[0]);
    }
    r.rig.steps(&r.b, &r.token, "th").await;
    r.settled().await;
    let sql = r.counter.sql_since(from);
    assert_eq!(thread_writes(&sql), 0, "{sql:#?}");
    assert_eq!(r.row(&ids[0]).await, before, "the thread's row was written");

    // another caller with the same key has a thread of its own
    let other = r.rig.token(&r.a, "u2", json!({})).await;
    r.rig
        .call(&r.b, &other, "th", "get_contact", json!({"id": 7}))
        .await
        .ok(200);
    assert_eq!(r.threads("th").await.len(), 2);
}

#[tokio::test]
async fn a_thread_not_used_for_a_while_is_touched_once_by_its_next_call() {
    let r = replicas().await;
    r.call(&r.a, "th").await;
    let id = r.threads("th").await.remove(0);
    // older than the touch interval (a minute at most): the next call writes it, once
    r.age(&id, "2 minutes").await;
    let (_, aged) = r.row(&id).await;
    r.settled().await;
    let from = r.counter.statements();
    r.call(&r.b, "th").await;
    r.settled().await;
    assert_eq!(thread_writes(&r.counter.sql_since(from)), 1);
    let (_, touched) = r.row(&id).await;
    assert!(
        touched > aged + chrono::Duration::seconds(60),
        "{aged} -> {touched}"
    );
    // and then it is fresh again: the calls after it do not write it
    r.settled().await;
    let from = r.counter.statements();
    r.call(&r.a, "th").await;
    r.call(&r.b, "th").await;
    r.settled().await;
    assert_eq!(thread_writes(&r.counter.sql_since(from)), 0);
    assert_eq!(r.threads("th").await, [id]);
}

#[tokio::test]
async fn a_thread_pruned_by_retention_is_created_afresh_by_the_next_call_on_any_replica() {
    let r = replicas_with(1).await;
    let old_call = r.call(&r.a, "th").await;
    r.call(&r.b, "th").await;
    let old = r.threads("th").await.remove(0);
    // idle past retention's idle time (30 days), on both replicas' watch
    r.age(&old, "40 days").await;
    let policy = Policy {
        tool_calls: Duration::from_secs(30 * 24 * 3600),
        workflow_runs: Duration::from_secs(30 * 24 * 3600),
        threads_idle: Duration::from_secs(30 * 24 * 3600),
        links: Duration::from_secs(24 * 3600),
        audit_events: Duration::from_secs(365 * 24 * 3600),
        interval: Duration::from_secs(600),
        batch: 100,
    };
    let pruned = prune_once(&r.pool, &policy, &Metrics::default())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(pruned["threads"], 1, "{pruned:?}");
    assert!(r.threads("th").await.is_empty());
    // the 40 idle days are a plain SQL write: a replica that remembers the thread sees it
    // once agent_memory_seconds passed (a thread really idle that long is fresh in no
    // replica's memory: call::agent_memory)
    tokio::time::sleep(Duration::from_millis(1100)).await;

    // both replicas served this thread a moment ago; the next call on either works
    let call_b = r.call(&r.b, "th").await;
    let fresh = r.threads("th").await;
    assert_eq!(fresh.len(), 1);
    assert_ne!(fresh[0], old, "a fresh thread, not the pruned one");
    assert_eq!(r.thread_of(&call_b).await, fresh[0]);
    let call_a = r.call(&r.a, "th").await;
    assert_eq!(r.thread_of(&call_a).await, fresh[0]);
    // the pruned thread's record went with it; the new ones are readable
    r.a.get(&format!("/v1/tool-calls/{old_call}"), &r.token)
        .await
        .problem(404, "not_found");
    r.b.get(&format!("/v1/tool-calls/{call_a}"), &r.token)
        .await
        .ok(200);
}
