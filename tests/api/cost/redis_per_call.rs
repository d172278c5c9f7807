//! Redis commands per tool call, counted (never timed) from `INFO commandstats` of a
//! Redis of the test's own, over 32 concurrent warm calls on one thread (the load
//! benchmark's shape): a pass-through call, and a cache hit of a walk. Commands a script
//! runs (`TIME`, `GET`, `SET` inside an `EVAL`) are counted too, as `INFO` counts them.
//! The org's rate is leased per replica (src/quota/lease.rs): the 32 calls share a few
//! `EVAL`s instead of one each. Print the table with `-- --nocapture`.

use std::collections::BTreeMap;

use futures_util::future::{join_all, LocalBoxFuture};
use serde_json::{json, Value};

use crate::support::helpers::{fresh_database, spawn_with, test_settings};
use crate::support::rig::Rig;
use crate::support::services;
use crate::support::upstream_server;

const CALLS: u64 = 32;

pub async fn commandstats(conn: &mut redis::aio::MultiplexedConnection) -> BTreeMap<String, u64> {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(conn)
        .await
        .unwrap();
    info.lines()
        .filter_map(|l| {
            let (name, rest) = l.strip_prefix("cmdstat_")?.split_once(':')?;
            let calls = rest
                .strip_prefix("calls=")?
                .split(',')
                .next()?
                .parse()
                .ok()?;
            Some((name.to_uppercase(), calls))
        })
        .collect()
}

/// Commands per call of `CALLS` concurrent calls of `name` with `args` (after one warm call).
async fn per_call<'a>(
    conn: &mut redis::aio::MultiplexedConnection,
    run: impl Fn() -> LocalBoxFuture<'a, Value>,
) -> (BTreeMap<String, f64>, Vec<Value>) {
    run().await;
    let before = commandstats(conn).await;
    let results = join_all((0..CALLS).map(|_| run())).await;
    let after = commandstats(conn).await;
    for r in &results {
        assert!(r.get("_error").is_none(), "{r}");
    }
    let per = after
        .into_iter()
        .filter(|(name, _)| name != "INFO")
        .filter_map(|(name, n)| {
            let d = n - before.get(&name).copied().unwrap_or(0);
            (d > 0).then(|| (name, d as f64 / CALLS as f64))
        })
        .collect();
    (per, results)
}

fn total(m: &BTreeMap<String, f64>) -> f64 {
    m.values().sum()
}

#[tokio::test]
async fn redis_commands_per_call() {
    let Some(redis) = services::require_redis_server().await else {
        return;
    };
    let mut s = test_settings(fresh_database().await);
    s.redis_url = Some(redis.url().into());
    s.org_requests_per_second = 1_000_000;
    s.org_concurrent_walks = 256;
    let app = spawn_with(s).await;
    let up = upstream_server::start().await;
    let rig = Rig::new(&app, &up, true).await;
    let token = rig.token(&app, "u1", json!({})).await;
    let mut conn = redis::Client::open(redis.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let call = |name: &'static str, args: Value| {
        let (app, rig, token) = (&app, &rig, &token);
        move || -> LocalBoxFuture<'_, Value> {
            let args = args.clone();
            Box::pin(async move {
                let r = rig.call(app, token, "th", name, args).await;
                r.ok(200)["result"].clone()
            })
        }
    };
    let (pass, _) = per_call(&mut conn, call("get_contact", json!({"id": 7}))).await;
    let hit_args = json!({"_all_pages": true, "_fields": ["id", "name"],
                          "_filter": [{"field": "id", "op": "lt", "value": 50}]});
    let (hit, hits) = per_call(&mut conn, call("list_contacts", hit_args)).await;
    for h in &hits {
        assert_eq!(h["_cache"]["hit"], true, "{h}");
    }
    let n = |m: &BTreeMap<String, f64>, c: &str| m.get(c).copied().unwrap_or(0.0);
    let steps =
        || -> LocalBoxFuture<'_, Value> { Box::pin(async { rig.steps(&app, &token, "th").await }) };
    let (step, _) = per_call(&mut conn, steps).await;
    eprintln!(
        "Redis commands per call ({CALLS} concurrent calls on one thread):\n\
         pass-through: {:.2} {pass:?}\ncache hit:    {:.2} {hit:?}\nsteps:        {:.2} {step:?}",
        total(&pass),
        total(&hit),
        total(&step)
    );
    // G5: an unrestricted thread's marks are one MGET (no DEL, no GET each)
    assert_eq!(n(&step, "MGET"), 1.0, "{step:?}");
    assert_eq!(n(&step, "DEL"), 0.0, "{step:?}");
    assert_eq!(n(&pass, "MGET"), 1.0, "{pass:?}");
    // the org's rate is leased, so the concurrent calls share its EVALs (one each without
    // leases); the other EVAL of a pass-through call is its walk slot (the one running
    // ZREMRANGEBYSCORE), unless it reused a spare slot
    let rate_evals = n(&pass, "EVAL") - n(&pass, "ZREMRANGEBYSCORE");
    assert!(
        rate_evals < 1.0,
        "{rate_evals} rate EVALs per pass-through call"
    );
    let rate_evals = n(&hit, "EVAL") - n(&hit, "ZREMRANGEBYSCORE");
    assert!(rate_evals < 1.0, "{rate_evals} rate EVALs per cache hit");
    assert!(total(&hit) > 0.0, "the counter sees the app's commands");
}
