//! Round trips to Redis and SQL statements on one call's path, per kind of call, counted
//! on the wire (never timed) by the `redis_count` and `sql_count` proxies: one warm call at
//! a time, the quietest of [`TRIES`] (a replica's heartbeat, on a timer of its own, can
//! fall into one). The bounds are issue 37's: a cache hit served from the replica's
//! memory makes one pipelined round trip, a pass-through call at most two, and neither
//! sends a statement but its record.
//!
//! Counted apart: the org's API rate lease (`quota::lease`, the GCRA script). One call at
//! a time renews it on every call (a lease is sized by recent demand, and one call at a
//! time spends its one permit at once); calls that arrive together share one `EVAL`
//! (`redis_per_call` bounds that under 32 concurrent calls). `--nocapture` prints the
//! table docs/performance.md keeps ("Cost per call").

use serde_json::{json, Value};

use crate::support::helpers::{fresh_database, spawn_with, test_settings, TestApp};
use crate::support::redis_count::{self, RedisCounter, Traffic};
use crate::support::rig::Rig;
use crate::support::sql_count::{self, SqlCounter};
use crate::support::upstream_server;

const TRIES: usize = 5;

/// One kind of call's quietest traffic: Redis, and the SQL it sent.
struct Cost {
    redis: Traffic,
    sql: Vec<String>,
}

/// The quietest of [`TRIES`] runs of `run` (fewest Redis round trips, then statements).
async fn quietest<F, Fut>(redis: &RedisCounter, sql: &SqlCounter, run: F) -> Cost
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Value>,
{
    let mut best: Option<Cost> = None;
    for _ in 0..TRIES {
        let (r0, s0) = (redis.snapshot(), sql.statements());
        let out = run().await;
        assert!(out.get("_error").is_none(), "{out}");
        let cost = Cost {
            redis: redis.since(&r0),
            sql: sql.sql_since(s0),
        };
        let trips = |c: &Cost| (own_trips(&c.redis), c.redis.round_trips, c.sql.len());
        let better = best.as_ref().is_none_or(|b| trips(&cost) < trips(b));
        if better {
            best = Some(cost);
        }
    }
    best.unwrap()
}

/// A call's own round trips: all but those carrying only the org's API rate lease.
fn own_trips(t: &Traffic) -> usize {
    t.trips_besides_script("rate")
}

/// Statements that are not the call's record (the only statement a call may send; since
/// K1 it is written behind the answer by the replica's writer).
fn besides_the_record(sql: &[String]) -> Vec<&String> {
    sql.iter()
        .filter(|s| !s.contains("tool_calls") && !s.contains("tool_call_bodies"))
        .collect()
}

async fn app_with_counters() -> (TestApp, RedisCounter, SqlCounter) {
    let sql = sql_count::start(&fresh_database().await).await;
    let redis = redis_count::start().await;
    let mut s = test_settings(sql.url.clone());
    s.redis_url = Some(redis.url.clone().into());
    s.agent_memory_seconds = 300;
    s.org_requests_per_second = 1_000_000;
    (spawn_with(s).await, redis, sql)
}

#[tokio::test]
async fn round_trips_and_statements_per_kind_of_call() {
    let (app, redis, sql) = app_with_counters().await;
    let up = upstream_server::start().await;
    let rig = Rig::new(&app, &up, true).await;
    let token = rig.token(&app, "u1", json!({})).await;
    let call = |thread: &'static str, name: &'static str, args: Value| {
        let (app, rig, token) = (&app, &rig, &token);
        move || {
            let args = args.clone();
            async move {
                let r = rig.call(app, token, thread, name, args).await;
                r.ok(200)["result"].clone()
            }
        }
    };
    let pass = call("th", "get_contact", json!({"id": 7}));
    let hit_args = json!({"_all_pages": true, "_fields": ["id", "name"],
                          "_filter": [{"field": "id", "op": "lt", "value": 50}]});
    let hit = call("th", "list_contacts", hit_args.clone());
    // warm: the agent and thread remembered, the entry written and held in memory
    for _ in 0..3 {
        pass().await;
        hit().await;
    }
    assert_eq!(hit().await["_cache"]["hit"], true);
    app.vectors_settled().await;
    let walk = call(
        "th",
        "list_contacts",
        json!({"_all_pages": true, "_refresh": true, "_fields": ["id"]}),
    );
    let whole = walk().await;
    let rid = whole["_resultId"].as_str().unwrap().to_string();
    let query = {
        let rid = rid.clone();
        move || {
            let args =
                json!({"resultId": rid, "filter": [{"field": "id", "op": "lt", "value": 5}]});
            call("th", "queryToolResult", args)()
        }
    };
    let steps = || async { rig.steps(&app, &token, "th").await };

    let kinds: Vec<(&str, Cost)> = vec![
        (
            "pass-through (one page, 1 row)",
            quietest(&redis, &sql, &pass).await,
        ),
        ("cache hit from memory", quietest(&redis, &sql, &hit).await),
        (
            "walk of every page (`_refresh`)",
            quietest(&redis, &sql, &walk).await,
        ),
        ("stored-result query", quietest(&redis, &sql, &query).await),
        ("steps", quietest(&redis, &sql, steps).await),
    ];
    eprintln!("| call | Redis round trips (with the rate lease) | Redis commands | Redis bytes sent / received | SQL statements |\n|---|---|---|---|---|");
    for (kind, c) in &kinds {
        eprintln!(
            "| {kind} | {} ({}) | {} ({}) | {} / {} | {} ({}) |",
            own_trips(&c.redis),
            c.redis.round_trips,
            c.redis.commands.len(),
            c.redis.commands.join(" "),
            c.redis.sent,
            c.redis.received,
            c.sql.len(),
            c.sql
                .iter()
                .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    let cost = |k: &str| &kinds.iter().find(|(n, _)| n.starts_with(k)).unwrap().1;
    let (p, h) = (cost("pass-through"), cost("cache hit"));
    assert!(
        h.redis.round_trips > 0,
        "the counter sees the app's commands"
    );
    // issue 37: a hit from memory is one pipelined round trip; a pass-through two at most
    assert_eq!(own_trips(&h.redis), 1, "{:?}", h.redis);
    assert!(own_trips(&p.redis) <= 2, "{:?}", p.redis);
    // and neither sends a statement but its record
    assert!(besides_the_record(&h.sql).is_empty(), "{:#?}", h.sql);
    assert!(besides_the_record(&p.sql).is_empty(), "{:#?}", p.sql);
}

/// A hit from memory whose assumptions no longer hold is not answered from them: the org's
/// config changed (an agent edited through the API bumps its epoch) or the thread became
/// restricted (G5) since the replica remembered them. The call is then confirmed and run
/// checked, with the round trip it made before (`call::memory_hit`).
#[tokio::test]
async fn a_hit_from_memory_is_confirmed_when_the_config_changed() {
    let (app, redis, _sql) = app_with_counters().await;
    let up = upstream_server::start().await;
    let rig = Rig::new(&app, &up, true).await;
    let token = rig.token(&app, "u1", json!({})).await;
    let args = json!({"_all_pages": true, "_fields": ["id"]});
    for _ in 0..3 {
        rig.call(&app, &token, "th", "list_contacts", args.clone())
            .await
            .ok(200);
    }
    // the agent's instructions change: its org's config epoch is bumped
    app.patch(
        &format!("/v1/agents/{}", rig.agent),
        &rig.t.key,
        json!({"instructions": "changed"}),
    )
    .await
    .ok(200);
    let before = redis.snapshot();
    let r = rig
        .call(&app, &token, "th", "list_contacts", args.clone())
        .await;
    let traffic = redis.since(&before);
    assert_eq!(r.ok(200)["result"]["_cache"]["hit"], true);
    // the optimistic pipeline found another epoch: the call read it (MGET) and ran again
    assert!(own_trips(&traffic) >= 2, "{traffic:?}");
    assert!(
        traffic.commands.contains(&"MGET".to_string()),
        "{traffic:?}"
    );
    // what the first pipeline wrote under its unanswered `_resultId` was taken back
    assert!(traffic.commands.contains(&"DEL".to_string()), "{traffic:?}");
    // warm again at the new epoch: one round trip
    rig.call(&app, &token, "th", "list_contacts", args.clone())
        .await
        .ok(200);
    let before = redis.snapshot();
    rig.call(&app, &token, "th", "list_contacts", args.clone())
        .await
        .ok(200);
    assert_eq!(own_trips(&redis.since(&before)), 1);
    // G5: a result cut in this thread, then a step handed out restricted: the same hit is
    // refused, as the checked path refuses it
    let cut = rig
        .call(&app, &token, "th", "list_inboxes", json!({}))
        .await;
    assert_eq!(cut.ok(200)["result"]["_truncated"], true);
    assert_eq!(rig.steps(&app, &token, "th").await["restricted"], true);
    rig.call(&app, &token, "th", "list_contacts", args)
        .await
        .problem(409, "retrieval_required");
}
