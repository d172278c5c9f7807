//! The replica's writer (`call::call_records`) driven directly, against real Postgres
//! through the statement-counting proxy: writes queued together go in one statement,
//! and each waiter gets its own write's result.

use std::sync::Arc;

use chrono::Utc;
use loopgate::call::call_records::Records;
use loopgate::store::tool_calls::{Body, Filled, NewCall, Outcome, Write};
use loopgate::store::OrgId;
use serde_json::{json, Value};

use crate::support::helpers::{fresh_database, spawn_with, test_settings};
use crate::support::rig::Rig;
use crate::support::sql_count;

/// Two orgs with a thread each (made by a real call); their (org, agent, thread id).
async fn two_orgs(app: &crate::support::helpers::TestApp) -> Vec<(OrgId, String, String)> {
    let up = crate::support::upstream_server::start().await;
    let pool = sqlx::PgPool::connect(&app.database_url).await.unwrap();
    let mut out = Vec::new();
    for _ in 0..2 {
        let rig = Rig::new(app, &up, false).await;
        let token = rig.token(app, "u1", json!({})).await;
        rig.call(app, &token, "th", "get_contact", json!({"id": 1}))
            .await
            .ok(200);
        let thread: String = sqlx::query_scalar("SELECT id FROM threads WHERE org_id = $1")
            .bind(&rig.t.org)
            .fetch_one(&pool)
            .await
            .unwrap();
        out.push((OrgId::trusted(rig.t.org.clone()), rig.agent.clone(), thread));
    }
    out
}

type Row = (String, String, String, Option<Value>, Option<Value>);

fn call(id: &str, agent: &str, thread: &str) -> NewCall {
    NewCall {
        id: id.into(),
        agent_id: agent.into(),
        thread_id: thread.into(),
        caller: "user:u1".into(),
        name: "get_contact".into(),
        arguments: json!({"n": id}).to_string(),
    }
}

fn once(org: &OrgId, c: NewCall, result: String) -> Write {
    Write::Once {
        org: org.clone(),
        call: c,
        outcome: Outcome::Succeeded(result),
        started_at: Utc::now(),
        finished_at: Utc::now(),
    }
}

/// A call written once whose result is `body`'s parts joined by `fill`.
fn filled(org: &OrgId, c: NewCall, body: &Arc<Body>, fill: &str) -> Write {
    Write::Once {
        org: org.clone(),
        call: c,
        outcome: Outcome::Filled(Filled {
            body: body.clone(),
            fill: fill.into(),
            with_body: false,
        }),
        started_at: Utc::now(),
        finished_at: Utc::now(),
    }
}

/// Each record of a batch refused for one row still gets its body (the refused one
/// carried it too); a body written lately is not written again by the same writer
/// (its `created_at` stays), while another replica's writer writes it (refreshed).
#[tokio::test]
async fn a_body_goes_with_every_record_that_needs_it_and_not_again_while_fresh() {
    let app = crate::support::helpers::spawn_app().await;
    let orgs = two_orgs(&app).await;
    let pool = sqlx::PgPool::connect(&app.database_url).await.unwrap();
    let records = Records::spawn(pool.clone(), Default::default());
    let (a, b) = (&orgs[0], &orgs[1]);
    let parts: Vec<String> =
        r#"{"_resultId":"ID","n":[1,2]}"#.split("ID").map(str::to_owned).collect();
    let body = Arc::new(Body::new(parts.into()));
    // the first reference is refused (its thread is gone): the batch is written again
    // one write at a time
    let writes = vec![
        filled(&a.0, call("call_gone", &a.1, "thr_gone"), &body, "res_0"),
        filled(&a.0, call("call-f1", &a.1, &a.2), &body, "res_1"),
        filled(&a.0, call("call-f2", &a.1, &a.2), &body, "res_2"),
        filled(&b.0, call("call-f3", &b.1, &b.2), &body, "res_3"),
    ];
    let results =
        futures_util::future::join_all(writes.into_iter().map(|w| records.write(w))).await;
    for (i, r) in results.iter().enumerate() {
        assert_eq!(r.is_err(), i == 0, "write {i}: {r:?}");
    }
    let texts = || async {
        sqlx::query_as::<_, (String, String)>(
            "SELECT c.id, array_to_string(b.parts, c.body_fill) FROM tool_calls c \
             JOIN tool_call_bodies b ON b.org_id = c.org_id AND b.id = c.body_id \
             WHERE c.id LIKE 'call-f%' ORDER BY c.id",
        )
        .fetch_all(&pool)
        .await
        .unwrap()
    };
    let want = |n: usize| {
        (1..=n)
            .map(|i| {
                (
                    format!("call-f{i}"),
                    format!(r#"{{"_resultId":"res_{i}","n":[1,2]}}"#),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(texts().await, want(3));
    let bodies: Vec<String> =
        sqlx::query_scalar("SELECT org_id FROM tool_call_bodies WHERE id = $1 ORDER BY org_id")
            .bind(body.id())
            .fetch_all(&pool)
            .await
            .unwrap();
    let mut both = vec![a.0.to_string(), b.0.to_string()];
    both.sort();
    assert_eq!(bodies, both, "one body per org");

    let aged = || async {
        sqlx::query_scalar::<_, bool>(
            "SELECT created_at < now() - interval '1 day' FROM tool_call_bodies \
             WHERE org_id = $1 AND id = $2",
        )
        .bind(a.0.as_str())
        .bind(body.id())
        .fetch_one(&pool)
        .await
        .unwrap()
    };
    sqlx::query("UPDATE tool_call_bodies SET created_at = now() - interval '2 days'")
        .execute(&pool)
        .await
        .unwrap();
    records
        .write(filled(&a.0, call("call-f4", &a.1, &a.2), &body, "res_4"))
        .await
        .unwrap();
    assert!(aged().await, "written lately by this writer: not again");
    let replica = Records::spawn(pool.clone(), Default::default());
    replica
        .write(filled(&a.0, call("call-f5", &a.1, &a.2), &body, "res_5"))
        .await
        .unwrap();
    assert!(
        !aged().await,
        "another writer writes it: created_at refreshed"
    );
    assert_eq!(texts().await, want(5));
}

#[tokio::test]
async fn writes_queued_together_go_in_one_statement_each_with_its_own_row() {
    let counter = sql_count::start(&fresh_database().await).await;
    let app = spawn_with(test_settings(counter.url.clone())).await;
    let orgs = two_orgs(&app).await;
    let pool = sqlx::PgPool::connect(&counter.url).await.unwrap();
    let metrics = std::sync::Arc::new(loopgate::telemetry::metrics::Metrics::default());
    let records = Records::spawn(pool.clone(), metrics.clone());
    // 32 streamed calls started, then, queued together: their 32 ends, 16 new starts
    // and 16 calls written once, over both orgs
    let starts = (0..32).map(|i| {
        let (org, agent, thread) = &orgs[i % 2];
        records.write(Write::Start {
            org: org.clone(),
            call: call(&format!("rec_s{i}"), agent, thread),
            at: chrono::Utc::now(),
        })
    });
    for r in futures_util::future::join_all(starts).await {
        r.unwrap();
    }
    app.vectors_settled().await;
    let before = counter.statements();
    let mut writes = Vec::new();
    for i in 0..64usize {
        let (org, agent, thread) = &orgs[i % 2];
        writes.push(match i % 4 {
            0 => Write::Finish {
                org: org.clone(),
                id: format!("rec_s{}", i / 4 * 2 + i % 2),
                outcome: Outcome::Succeeded(json!({"ended": i}).to_string()),
                at: chrono::Utc::now(),
            },
            1 => Write::Finish {
                org: org.clone(),
                id: format!("rec_s{}", i / 4 * 2 + i % 2),
                outcome: Outcome::Failed(json!({"code": "x", "n": i}).to_string()),
                at: chrono::Utc::now(),
            },
            2 => Write::Start {
                org: org.clone(),
                call: call(&format!("rec_n{i}"), agent, thread),
                at: chrono::Utc::now(),
            },
            _ => once(
                org,
                call(&format!("rec_o{i}"), agent, thread),
                json!({"once": i}).to_string(),
            ),
        });
    }
    let results =
        futures_util::future::join_all(writes.into_iter().map(|w| records.write(w))).await;
    assert!(results.iter().all(Result::is_ok), "{results:?}");
    let sql = counter.sql_since(before);
    assert_eq!(sql.len(), 1, "one statement for 64 queued writes: {sql:#?}");
    let text = metrics.render();
    let counted = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim().parse::<f64>().unwrap())
    };
    assert_eq!(
        counted("loopgate_tool_call_record_writes_total "),
        Some(96.0),
        "{text}"
    );
    let statements = counted("loopgate_tool_call_record_statements_total ").unwrap();
    assert!(statements <= 33.0, "{text}");

    let rows: Vec<Row> = sqlx::query_as(
        "SELECT id, org_id, status, result, error FROM tool_calls WHERE id LIKE 'rec_%'",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    let row = |id: &str| {
        rows.iter()
            .find(|r| r.0 == id)
            .unwrap_or_else(|| panic!("{id}: {rows:?}"))
    };
    for i in 0..64usize {
        let org = orgs[i % 2].0.as_str();
        match i % 4 {
            0 => {
                let r = row(&format!("rec_s{}", i / 4 * 2 + i % 2));
                assert_eq!((r.1.as_str(), r.2.as_str()), (org, "succeeded"));
                assert_eq!(r.3, Some(json!({"ended": i})));
            }
            1 => {
                let r = row(&format!("rec_s{}", i / 4 * 2 + i % 2));
                assert_eq!((r.1.as_str(), r.2.as_str()), (org, "failed"));
                assert_eq!(r.4, Some(json!({"code": "x", "n": i})));
            }
            2 => assert_eq!(row(&format!("rec_n{i}")).2, "running"),
            _ => {
                let r = row(&format!("rec_o{i}"));
                assert_eq!((r.1.as_str(), r.2.as_str()), (org, "succeeded"));
                assert_eq!(r.3, Some(json!({"once": i})));
            }
        }
    }
}

#[tokio::test]
async fn a_bad_row_fails_its_own_write_only_and_a_finish_never_crosses_orgs() {
    let app = crate::support::helpers::spawn_app().await;
    let orgs = two_orgs(&app).await;
    let pool = sqlx::PgPool::connect(&app.database_url).await.unwrap();
    let records = Records::spawn(pool.clone(), Default::default());
    let (a, b) = (&orgs[0], &orgs[1]);
    records
        .write(Write::Start {
            org: b.0.clone(),
            call: call("call_b_running", &b.1, &b.2),
            at: chrono::Utc::now(),
        })
        .await
        .unwrap();
    let mut writes: Vec<Write> = (0..6)
        .map(|i| once(&a.0, call(&format!("call-a{i}"), &a.1, &a.2), "1".into()))
        .collect();
    // a thread that does not exist (pruned meanwhile, say): this write alone fails
    writes.insert(
        3,
        once(&a.0, call("call_orphan", &a.1, "thr_gone"), "1".into()),
    );
    // org A ending org B's call: matches nothing
    writes.push(Write::Finish {
        org: a.0.clone(),
        id: "call_b_running".into(),
        outcome: Outcome::Succeeded("2".into()),
        at: chrono::Utc::now(),
    });
    let results =
        futures_util::future::join_all(writes.into_iter().map(|w| records.write(w))).await;
    for (i, r) in results.iter().enumerate() {
        assert_eq!(r.is_err(), i == 3, "write {i}: {r:?}");
    }
    let ids: Vec<String> = sqlx::query_scalar(
        "SELECT id FROM tool_calls WHERE org_id = $1 AND id LIKE 'call-a%' ORDER BY id",
    )
    .bind(a.0.as_str())
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(
        ids,
        (0..6).map(|i| format!("call-a{i}")).collect::<Vec<_>>()
    );
    let status: String =
        sqlx::query_scalar("SELECT status FROM tool_calls WHERE id = 'call_b_running'")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(status, "running", "org A cannot end org B's call");
    // and flush returns once everything queued before it is written
    let pending = records.write(once(&b.0, call("call_b_last", &b.1, &b.2), "3".into()));
    let (w, ()) = tokio::join!(pending, records.flush());
    w.unwrap();
}

/// The writer's own connection plans its statement generically (call_records.rs header:
/// a custom plan per batch size cost more than the write), and batches of any size
/// written through it land whole.
#[tokio::test]
async fn the_writer_plans_generically_on_its_own_connection_and_writes_every_batch_size() {
    let app = crate::support::helpers::spawn_app().await;
    let orgs = two_orgs(&app).await;
    let writer_pool = Records::pool(&app.database_url).await.unwrap();
    let mode: String = sqlx::query_scalar("SHOW plan_cache_mode")
        .fetch_one(&writer_pool)
        .await
        .unwrap();
    assert_eq!(mode, "force_generic_plan");
    let pool = sqlx::PgPool::connect(&app.database_url).await.unwrap();
    let default_mode: String = sqlx::query_scalar("SHOW plan_cache_mode")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(
        default_mode, "auto",
        "other connections keep Postgres' default"
    );
    let records = Records::spawn(writer_pool, Default::default());
    let a = &orgs[0];
    // ids no real call has: a real one is `call_` and a random token, which may start with any letter
    let mut n = 0;
    // past the five executions after which Postgres settles on a plan, in sizes that
    // change the statement's arrays each time
    for size in [1usize, 3, 17, 2, 9, 1, 30, 4] {
        let writes = (0..size).map(|_| {
            n += 1;
            once(
                &a.0,
                call(&format!("call-g{n}"), &a.1, &a.2),
                format!("{n}"),
            )
        });
        let writes: Vec<_> = writes.collect();
        for r in futures_util::future::join_all(writes.into_iter().map(|w| records.write(w))).await
        {
            r.unwrap();
        }
    }
    let (count, sum): (i64, i64) = sqlx::query_as(
        "SELECT count(*), sum((result::text)::bigint)::bigint FROM tool_calls WHERE id LIKE 'call-g%'",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(count, n as i64);
    assert_eq!(sum, (n * (n + 1) / 2) as i64);
}
