//! K1, records that survive their replica (`call::record_journal`): a call written once is
//! answered before its record reaches Postgres (journaled first, written behind), so:
//! - a replica killed with SIGKILL while Postgres is stopped loses none of the calls it
//!   answered: the next replica on its journal directory writes them, and every answered
//!   id reads back with its outcome;
//! - a journal replayed over what Postgres already has changes nothing (a `running` start
//!   never flips a finished call back), a start without its end is closed
//!   `call_interrupted`, and a torn last line (the kill cut it) is never replayed;
//! - a record written behind its answer is read at once on another replica.
//!
//! The request path of such a call sends no SQL for its record, counted on the wire:
//! `cost::sql_per_call::a_warm_call_is_answered_before_its_record_is_written`.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use loopgate::call::call_records::Records;
use loopgate::call::record_journal::Journal;
use loopgate::store::tool_calls::{NewCall, Outcome, Write};
use loopgate::store::OrgId;

use crate::faults::replicas::binary;
use crate::support::helpers::{spawn_app, spawn_with, test_settings, TestApp};
use crate::support::rig::{tool_defs, Rig};
use crate::support::{services, upstream_server};

fn journal_dir() -> PathBuf {
    std::env::temp_dir().join(format!(
        "loopgate-k1-journal-{}",
        loopgate::crypto::random_token(10).to_lowercase()
    ))
}

/// Reads `id` on `app` until it is there (at most `within`).
async fn read_back(app: &TestApp, token: &str, id: &str, within: Duration) -> Value {
    let deadline = Instant::now() + within;
    loop {
        let r = app.get(&format!("/v1/tool-calls/{id}"), token).await;
        if r.status == 200 {
            return r.body;
        }
        assert!(
            Instant::now() < deadline,
            "{id} unreadable: {} {}",
            r.status,
            r.text
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn k1_calls_answered_while_postgres_is_stopped_survive_a_sigkill_of_their_replica() {
    let Some(pg) = services::require_postgres_bins().await else {
        return;
    };
    if services::require_redis_url().is_none() {
        return;
    }
    let dir = journal_dir();
    let env = [
        ("LOOPGATE_RECORD_JOURNAL_DIR", dir.display().to_string()),
        // the agent is remembered: a warm call needs nothing from Postgres
        ("LOOPGATE_AGENT_MEMORY_SECONDS", "300".to_string()),
        ("RUST_LOG", "warn".to_string()),
    ];
    let a = binary(&pg.url(), &env, Stdio::null()).await;
    let up = upstream_server::start().await;
    let mut defs = tool_defs();
    defs.retain(|d| d.0 == "get_contact");
    let rig = Rig::with_tools(&a.app, &up.base, defs, false).await;
    let token = rig.token(&a.app, "u1", json!({})).await;
    rig.call(&a.app, &token, "th", "get_contact", json!({"id": 1}))
        .await
        .ok(200);
    // that first record is written behind its answer (and may wait `LINGER` for company):
    // Postgres stops once it is in
    let journaled = || async {
        let m = a
            .app
            .call(reqwest::Method::GET, "/metrics", None, None)
            .await
            .text;
        m.lines().find_map(|l| {
            l.strip_prefix("loopgate_tool_call_record_journal_rows ")?
                .trim()
                .parse::<f64>()
                .ok()
        })
    };
    for _ in 0..100 {
        if journaled().await == Some(0.0) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        journaled().await,
        Some(0.0),
        "the first record is committed"
    );

    pg.stop().await;
    let mut answered = Vec::new();
    for i in 2..22 {
        let t = Instant::now();
        let r = rig
            .call(&a.app, &token, "th", "get_contact", json!({"id": i}))
            .await;
        let body = r.ok(200).clone();
        // answered without waiting for Postgres (no connect timeout on the way)
        assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
        assert_eq!(body["result"]["name"], format!("Contact {i}"), "{}", r.text);
        answered.push((body["id"].as_str().unwrap().to_string(), i));
    }
    let segments = std::fs::read_dir(&dir).unwrap().count();
    assert!(segments >= 1, "the journal is on disk");
    // none of them reached Postgres: all 20 are journaled, and shown
    let m = a
        .app
        .call(reqwest::Method::GET, "/metrics", None, None)
        .await
        .text;
    let gauge = |name: &str| {
        m.lines()
            .find_map(|l| l.strip_prefix(name)?.trim().parse::<f64>().ok())
            .unwrap_or_else(|| panic!("{name}: {m}"))
    };
    assert_eq!(gauge("loopgate_tool_call_record_journal_rows "), 20.0);
    assert!(gauge("loopgate_tool_call_record_journal_bytes ") > 0.0);
    // SIGKILL (`Child::kill`), Postgres still stopped
    drop(a);
    pg.start_again().await;

    // the next replica on the journal's directory (the restarted one) writes them all
    let b = binary(&pg.url(), &env, Stdio::null()).await;
    for (id, i) in &answered {
        let record = read_back(&b.app, &token, id, Duration::from_secs(15)).await;
        assert_eq!(record["status"], "succeeded", "{record}");
        assert_eq!(record["result"]["name"], format!("Contact {i}"), "{record}");
    }
    // and the dead replica's segments are gone once replayed and written
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left: Vec<u64> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok()?.metadata().ok().map(|m| m.len()))
            .filter(|len| *len > 0)
            .collect();
        if left.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "segments left: {left:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    drop(b);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The org, agent and thread of a recorded call, and its caller.
async fn owner(pool: &sqlx::PgPool, id: &str) -> (OrgId, NewCall) {
    let (org, agent, thread, caller): (String, String, String, String) =
        sqlx::query_as("SELECT org_id, agent_id, thread_id, caller FROM tool_calls WHERE id = $1")
            .bind(id)
            .fetch_one(pool)
            .await
            .unwrap();
    (
        OrgId::trusted(org),
        NewCall {
            id: id.into(),
            agent_id: agent,
            thread_id: thread,
            caller,
            name: "get_contact".into(),
            arguments: "{}".into(),
        },
    )
}

type Row = (
    String,
    Option<Value>,
    Option<Value>,
    chrono::DateTime<chrono::Utc>,
);

async fn row(pool: &sqlx::PgPool, id: &str) -> Option<Row> {
    sqlx::query_as("SELECT status, result::jsonb, error, finished_at FROM tool_calls WHERE id = $1")
        .bind(id)
        .fetch_optional(pool)
        .await
        .unwrap()
}

#[tokio::test]
async fn k1_a_replayed_journal_changes_nothing_postgres_has_and_skips_a_torn_line() {
    let (app, _up, rig, token) = Rig::start(false).await;
    let r = rig
        .call(&app, &token, "th", "get_contact", json!({"id": 7}))
        .await;
    let done = r.ok(200)["id"].as_str().unwrap().to_string();
    app.records_flushed().await;
    let pool = sqlx::PgPool::connect(&app.database_url).await.unwrap();
    let before = row(&pool, &done).await.unwrap();
    let (org, base) = owner(&pool, &done).await;
    let call = |id: &str| NewCall {
        id: id.into(),
        ..base.clone()
    };
    let now = chrono::Utc::now();
    let once = |id: &str, text: &str| Write::Once {
        org: org.clone(),
        call: call(id),
        outcome: Outcome::Succeeded(text.into()),
        started_at: now,
        finished_at: now,
    };
    let new_id = |_| loopgate::crypto::new_id("call");
    let [fresh, lone, ended, torn]: [String; 4] = std::array::from_fn(new_id);

    // the journal of a replica that died: what Postgres has, and what it has not
    let dir = journal_dir();
    let dead = Journal::open(Some(&dir), "rep_dead", 1 << 20, 100).unwrap();
    for w in [
        // written already: a start and a different end must change nothing
        Write::Start {
            org: org.clone(),
            call: call(&done),
            at: now,
        },
        once(&done, "{\"changed\":true}"),
        once(&fresh, "{\"fresh\":1}"),
        // a streamed call whose replica died before its end
        Write::Start {
            org: org.clone(),
            call: call(&lone),
            at: now,
        },
        // a streamed call that ended: its start and end replayed together
        Write::Start {
            org: org.clone(),
            call: call(&ended),
            at: now,
        },
        Write::Finish {
            org: org.clone(),
            id: ended.clone(),
            outcome: Outcome::Succeeded("{\"ended\":2}".into()),
            at: now,
        },
        once(&torn, "{\"torn\":3}"),
    ] {
        dead.append(&w).unwrap();
    }
    drop(dead);
    // the kill cut the last line
    let seg = dir.join("rep_dead-0.seg");
    let text = std::fs::read(&seg).unwrap();
    std::fs::write(&seg, &text[..text.len() - 9]).unwrap();

    let writer = sqlx::PgPool::connect(&app.database_url).await.unwrap();
    let records = Records::spawn_with(writer, Default::default(), Some(&dir)).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while row(&pool, &fresh).await.is_none() {
        assert!(Instant::now() < deadline, "the journal was not replayed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    records.flush().await;
    assert_eq!(
        row(&pool, &done).await.unwrap(),
        before,
        "changed by a replay"
    );
    assert_eq!(
        row(&pool, &fresh).await.unwrap().1,
        Some(json!({"fresh": 1}))
    );
    let l = row(&pool, &lone).await.unwrap();
    assert_eq!(l.0, "failed");
    assert_eq!(l.2.unwrap()["code"], "call_interrupted");
    let e = row(&pool, &ended).await.unwrap();
    assert_eq!(
        (e.0.as_str(), e.1),
        ("succeeded", Some(json!({"ended": 2})))
    );
    assert!(row(&pool, &torn).await.is_none(), "half a line replayed");
    assert!(!seg.exists(), "a replayed segment is deleted");
    // replayed again (as a second replica would, had it taken it too): nothing changes
    let again = Journal::open(Some(&dir), "rep_again", 1 << 20, 100).unwrap();
    again.append(&once(&fresh, "{\"fresh\":2}")).unwrap();
    drop(again);
    let deadline = Instant::now() + Duration::from_secs(12);
    while dir.join("rep_again-0.seg").exists() {
        assert!(Instant::now() < deadline, "not replayed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    records.flush().await;
    assert_eq!(
        row(&pool, &fresh).await.unwrap().1,
        Some(json!({"fresh": 1}))
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn k1_a_record_written_behind_its_answer_is_read_at_once_on_another_replica() {
    let a = spawn_app().await;
    let b = spawn_with(test_settings(a.database_url.clone())).await;
    let up = upstream_server::start().await;
    let rig = Rig::new(&a, &up, false).await;
    let token = rig.token(&a, "u1", json!({})).await;
    for i in 0..10 {
        let r = rig
            .call(&a, &token, "th", "get_contact", json!({"id": i}))
            .await;
        let body = r.ok(200).clone();
        let id = body["id"].as_str().unwrap();
        // no wait in between: B finds it in Postgres (or waits for A's commit)
        let got = b.get(&format!("/v1/tool-calls/{id}"), &token).await;
        assert_eq!(got.ok(200)["result"], body["result"], "{}", got.text);
        // and A reads it too, from memory or from Postgres
        let mine = a.get(&format!("/v1/tool-calls/{id}"), &token).await;
        assert_eq!(mine.ok(200)["status"], "succeeded");
    }
    // an id nobody answered is still a 404, after the bounded wait
    let t = Instant::now();
    let missing = loopgate::crypto::new_id("call");
    b.get(&format!("/v1/tool-calls/{missing}"), &token)
        .await
        .problem(404, "not_found");
    let waited = t.elapsed();
    assert!(waited < Duration::from_secs(2), "{waited:?}");
}
