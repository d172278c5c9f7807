//! A cache hit's record references its presented text, stored once per org
//! (`tool_call_bodies`), instead of carrying a copy. Reading the record gives back
//! exactly the text the caller received, on any replica, through `/events` and for a
//! streamed hit (its `running` row finished with a reference); N hits of one presentation
//! store one body and N records; retention removes a body once no record references it
//! and it is old, never one in use. The writer (`call::call_records`) carries a body with a
//! record unless it wrote it lately, and a batch refused for one row still writes every
//! other record's body (`call_records::group_commit`).

use std::time::Duration;

use serde_json::{json, value::RawValue, Value};
use sqlx::PgPool;

use loopgate::app::retention::{prune_once, Policy};
use loopgate::telemetry::metrics::Metrics;

use crate::cache::memory::{rig, rows_server, walk_args};
use crate::runtime::call_records::{events, types};
use crate::support::helpers::{fresh_database, spawn_with, test_settings, TestApp};
use crate::support::rig::Rig;

/// A call's answer: its call id, its result as a tree and as the exact text sent.
struct Answer {
    id: String,
    result: Value,
    raw: String,
}

async fn call(app: &TestApp, rig: &Rig, token: &str, args: Value) -> Answer {
    let r = rig.call(app, token, "t", "list_rows", args).await;
    let body = r.ok(200).clone();
    #[derive(serde::Deserialize)]
    struct Raw<'a> {
        #[serde(borrow)]
        result: &'a RawValue,
    }
    let raw: Raw = serde_json::from_str(&r.text).unwrap();
    // its record is written behind the answer (K1): in Postgres before the test reads it
    app.records_flushed().await;
    Answer {
        id: body["id"].as_str().unwrap().to_string(),
        result: body["result"].clone(),
        raw: raw.result.get().to_string(),
    }
}

async fn count(pool: &PgPool, sql: &str, org: &str) -> i64 {
    sqlx::query_scalar(sqlx::AssertSqlSafe(sql.to_string()))
        .bind(org)
        .fetch_one(pool)
        .await
        .expect(sql)
}

/// The org's stored bodies.
async fn bodies(pool: &PgPool, org: &str) -> i64 {
    count(
        pool,
        "SELECT count(*) FROM tool_call_bodies WHERE org_id = $1",
        org,
    )
    .await
}

/// The record's result text as Postgres rebuilds it from its body (`None`: stored inline).
async fn rebuilt(pool: &PgPool, call_id: &str) -> Option<String> {
    sqlx::query_scalar(
        "SELECT array_to_string(b.parts, c.body_fill) FROM tool_calls c \
         JOIN tool_call_bodies b ON b.org_id = c.org_id AND b.id = c.body_id WHERE c.id = $1",
    )
    .bind(call_id)
    .fetch_optional(pool)
    .await
    .unwrap()
}

#[tokio::test]
async fn a_hits_record_references_one_body_and_reads_back_exactly_what_was_answered() {
    let db = fresh_database().await;
    let one = spawn_with(test_settings(db.clone())).await;
    let two = spawn_with(test_settings(db.clone())).await;
    let up = rows_server().await;
    let rig = rig(&one, &up).await;
    let token = rig.token(&one, "u1", json!({})).await;
    let pool = PgPool::connect(&db).await.unwrap();
    let org = rig.t.org.as_str();

    // the walk itself is no hit: its record keeps its text inline
    let walk = call(&one, &rig, &token, walk_args()).await;
    assert!(walk.result.get("_cache").is_none());
    assert_eq!(rebuilt(&pool, &walk.id).await, None);

    // hits on both replicas: the first on each presents afresh, the rest fill a template
    let mut hits = Vec::new();
    for app in [&one, &one, &one, &two, &two] {
        let hit = call(app, &rig, &token, walk_args()).await;
        assert_eq!(hit.result["_cache"]["hit"], true);
        hits.push(hit);
    }
    for hit in &hits {
        // byte for byte what the caller received, rebuilt from the one body
        assert_eq!(rebuilt(&pool, &hit.id).await.as_deref(), Some(&*hit.raw));
        for app in [&one, &two] {
            let rec = app.get(&format!("/v1/tool-calls/{}", hit.id), &token).await;
            let rec = rec.ok(200);
            assert_eq!(rec["status"], "succeeded");
            assert_eq!(rec["result"], hit.result, "{}", hit.id);
        }
    }
    assert_eq!(
        bodies(&pool, org).await,
        1,
        "5 hits of one presentation, on two replicas: one body"
    );
    assert_eq!(
        count(
            &pool,
            "SELECT count(*) FROM tool_calls WHERE org_id = $1 AND body_id IS NOT NULL AND result IS NULL",
            org
        )
        .await,
        5,
        "one reference per hit, no copy of the text"
    );

    // its replay on the other replica tells the same result
    let chunks = events(&two, &token, &hits[0].id).await;
    assert_eq!(types(&chunks)[3], "tool-output-available", "{chunks:?}");
    assert_eq!(chunks[3]["output"], hits[0].result);

    // a streamed hit: its `running` row is finished with a reference to the same body
    let (id, stream) = rig
        .stream_call(&two, &token, "t", "list_rows", walk_args())
        .await;
    use futures_util::StreamExt;
    let rest: Vec<_> = stream.collect().await;
    let text: String = rest
        .into_iter()
        .map(|c| String::from_utf8_lossy(&c.unwrap()).into_owned())
        .collect();
    let output: Value = text
        .split("\n\n")
        .filter_map(|e| e.lines().find_map(|l| l.strip_prefix("data: ")))
        .filter_map(|d| serde_json::from_str::<Value>(d).ok())
        .find(|c| c["type"] == "tool-output-available")
        .expect("the output chunk")["output"]
        .clone();
    assert_eq!(output["_cache"]["hit"], true);
    let rec = one.get(&format!("/v1/tool-calls/{id}"), &token).await;
    assert_eq!(rec.ok(200)["result"], output);
    assert!(rebuilt(&pool, &id).await.is_some(), "a reference");

    // another `_fields` of the same entry is another presentation: a second body
    let mut other = walk_args();
    other["_fields"] = json!(["id", "owner.email"]);
    for _ in 0..2 {
        let hit = call(&one, &rig, &token, other.clone()).await;
        assert_eq!(hit.result["_cache"]["hit"], true);
        assert!(hit.result["items"][0].get("gen").is_none());
        assert_eq!(rebuilt(&pool, &hit.id).await.as_deref(), Some(&*hit.raw));
    }
    assert_eq!(bodies(&pool, org).await, 2);
}

/// A body's text is `array_to_string(parts, fill)`: empty parts (the id at either end, or
/// twice in a row) stay, exactly as a template fills.
#[tokio::test]
async fn a_body_joins_its_parts_as_a_template_fills_them() {
    let pool = PgPool::connect(&fresh_database().await).await.unwrap();
    let presented = "res_abc{\"_resultId\":\"res_abc\",\"n\":\"res_abcres_abc\"}res_abc";
    let template = loopgate_engine::PresentedTemplate::new(
        &loopgate_engine::PresentedJson {
            json: presented.into(),
            truncated: false,
            stored: false,
        },
        "res_abc",
    )
    .unwrap();
    let parts: Vec<String> = template.parts().to_vec();
    assert!(
        parts.iter().filter(|p| p.is_empty()).count() >= 3,
        "{parts:?}"
    );
    let joined: String = sqlx::query_scalar("SELECT array_to_string($1::text[], $2)")
        .bind(&parts)
        .bind("res_xyz")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(joined, template.fill("res_xyz").unwrap().json);
}

fn policy() -> Policy {
    Policy {
        tool_calls: Duration::from_secs(30 * 24 * 3600),
        workflow_runs: Duration::from_secs(30 * 24 * 3600),
        threads_idle: Duration::from_secs(30 * 24 * 3600),
        links: Duration::from_secs(24 * 3600),
        audit_events: Duration::from_secs(365 * 24 * 3600),
        interval: Duration::from_secs(600),
        batch: 1,
    }
}

#[tokio::test]
async fn retention_removes_an_old_body_no_record_references_and_keeps_the_rest() {
    let db = fresh_database().await;
    let app = spawn_with(test_settings(db.clone())).await;
    let up = rows_server().await;
    let rig = rig(&app, &up).await;
    let token = rig.token(&app, "u1", json!({})).await;
    let pool = PgPool::connect(&db).await.unwrap();
    let org = rig.t.org.as_str();
    call(&app, &rig, &token, walk_args()).await;
    let kept = call(&app, &rig, &token, walk_args()).await;
    let mut other = walk_args();
    other["_fields"] = json!(["id"]);
    let gone = call(&app, &rig, &token, other).await;
    let body_of = |id: String| {
        let pool = pool.clone();
        async move {
            sqlx::query_scalar::<_, String>("SELECT body_id FROM tool_calls WHERE id = $1")
                .bind(id)
                .fetch_one(&pool)
                .await
                .unwrap()
        }
    };
    let (kept_body, gone_body) = (
        body_of(kept.id.clone()).await,
        body_of(gone.id.clone()).await,
    );
    assert_ne!(kept_body, gone_body);
    // both bodies old; `gone`'s record old too (it goes first, then nothing references
    // its body); `kept`'s record recent; and a recent body nobody references yet
    sqlx::query(
        "UPDATE tool_call_bodies SET created_at = now() - interval '40 days' WHERE org_id = $1",
    )
    .bind(org)
    .execute(&pool)
    .await
    .unwrap();
    sqlx::query("UPDATE tool_calls SET created_at = now() - interval '40 days' WHERE id = $1")
        .bind(&gone.id)
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query("INSERT INTO tool_call_bodies (org_id, id, parts) VALUES ($1, 'fresh', '{x}')")
        .bind(org)
        .execute(&pool)
        .await
        .unwrap();

    let metrics = Metrics::default();
    let pruned = prune_once(&pool, &policy(), &metrics)
        .await
        .unwrap()
        .expect("the lock was free");
    assert_eq!(pruned["tool_calls"], 1, "{pruned:?}");
    assert_eq!(pruned["tool_call_bodies"], 1, "{pruned:?}");
    let left: Vec<String> =
        sqlx::query_scalar("SELECT id FROM tool_call_bodies WHERE org_id = $1 ORDER BY id")
            .bind(org)
            .fetch_all(&pool)
            .await
            .unwrap();
    let mut want = vec![kept_body, "fresh".to_string()];
    want.sort();
    assert_eq!(left, want);
    // the kept record still reads its text
    let rec = app
        .get(&format!("/v1/tool-calls/{}", kept.id), &token)
        .await;
    assert_eq!(rec.ok(200)["result"], kept.result);
    assert!(metrics
        .render()
        .contains("loopgate_retention_pruned_rows_total{table=\"tool_call_bodies\"} 1"));
}
