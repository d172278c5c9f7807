//! The agent kept per replica (`call::agent_memory`). Two app instances on one
//! Postgres (statements counted on the wire) and one Redis: replica B remembers the agent
//! and thread (a warm call reads neither), and every change made through replica A's API
//! is what B's very next call uses; a change written with plain SQL is seen once
//! `agent_memory_seconds` passed. A warm call reads the org's config epoch in the same
//! `MGET` as the thread's marks.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::cost::redis_per_call::commandstats;
use crate::cost::sql_per_call::with_memory;
use crate::runtime::threads::{replicas_with, Replicas};
use crate::support::helpers::{fresh_database, spawn_with, ADMIN};
use crate::support::rig::Rig;
use crate::support::services;
use crate::support::upstream_server;

/// Has Redis log every command with its arguments (`SLOWLOG`, no threshold), from now on.
async fn log_every_command(conn: &mut redis::aio::MultiplexedConnection) {
    for (name, value) in [
        ("slowlog-log-slower-than", "0"),
        ("slowlog-max-len", "1024"),
    ] {
        redis::cmd("CONFIG")
            .arg("SET")
            .arg(name)
            .arg(value)
            .query_async::<()>(conn)
            .await
            .unwrap();
    }
    redis::cmd("SLOWLOG")
        .arg("RESET")
        .query_async::<()>(conn)
        .await
        .unwrap();
}

/// The commands logged since [`log_every_command`] (a script's own commands are inside
/// its `EVAL`), oldest first, each as its name and arguments; stops the logging.
async fn logged_commands(conn: &mut redis::aio::MultiplexedConnection) -> Vec<Vec<String>> {
    let log: redis::Value = redis::cmd("SLOWLOG")
        .arg("GET")
        .arg(1024)
        .query_async(conn)
        .await
        .unwrap();
    redis::cmd("CONFIG")
        .arg("SET")
        .arg("slowlog-log-slower-than")
        .arg("10000")
        .query_async::<()>(conn)
        .await
        .unwrap();
    let text = |v: &redis::Value| match v {
        redis::Value::BulkString(b) => String::from_utf8_lossy(b).to_string(),
        redis::Value::SimpleString(s) => s.clone(),
        other => format!("{other:?}"),
    };
    let redis::Value::Array(entries) = log else {
        panic!("SLOWLOG GET: {log:?}");
    };
    let mut commands: Vec<Vec<String>> = entries
        .iter()
        .filter_map(|e| match e {
            redis::Value::Array(fields) => match fields.get(3) {
                Some(redis::Value::Array(args)) => Some(args.iter().map(text).collect()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    commands.reverse();
    commands.retain(|c: &Vec<String>| {
        !c.is_empty() && !matches!(c[0].to_uppercase().as_str(), "SLOWLOG" | "CONFIG" | "INFO")
    });
    for c in &mut commands {
        c[0] = c[0].to_uppercase();
    }
    commands
}

fn agent_reads(sql: &[String]) -> usize {
    sql.iter().filter(|s| s.contains("FROM agents a")).count()
}

/// B calls twice in thread `th`: the second call reads no agent (B remembers it).
async fn warm(r: &Replicas) {
    r.call(&r.b, "th").await;
    r.settled().await;
    let from = r.counter.statements();
    r.call(&r.b, "th").await;
    r.settled().await;
    let sql = r.counter.sql_since(from);
    assert_eq!(agent_reads(&sql), 0, "B remembers the agent: {sql:#?}");
}

#[tokio::test]
async fn every_change_through_one_replicas_api_is_used_by_the_next_call_on_another() {
    let r = replicas_with(300).await;
    let key = &r.rig.t.key;
    let tool = &r.rig.tools["get_contact"];
    let b_call = |args: serde_json::Value| r.rig.call(&r.b, &r.token, "th", "get_contact", args);

    // a tool PATCH (its schema)
    warm(&r).await;
    let expand = json!({"id": 7, "expand": "all"});
    b_call(expand.clone())
        .await
        .problem(400, "invalid_arguments");
    r.a.patch(
        &format!("/v1/tools/{tool}"),
        key,
        json!({"input_schema": {"type": "object", "required": ["id"], "properties": {
            "id": {"type": "integer"}, "expand": {"type": "string"}}}}),
    )
    .await
    .ok(200);
    let res = b_call(expand).await;
    assert_eq!(res.ok(200)["result"]["name"], "Contact 7", "{}", res.text);

    // a provider PATCH of base_url
    warm(&r).await;
    let other = upstream_server::start().await;
    r.a.patch(
        &format!("/v1/providers/{}", r.rig.provider),
        key,
        json!({"base_url": other.base, "credential": "org-secret"}),
    )
    .await
    .ok(200);
    r.call(&r.b, "th").await;
    assert_eq!(other.count("/contacts/7"), 1, "B called the new base URL");

    // the org credential rotated, then removed
    let last_auth = || other.stats.lock().unwrap().last_auth.clone();
    warm(&r).await;
    assert_eq!(last_auth().as_deref(), Some("Bearer org-secret"));
    let provider = format!("/v1/providers/{}", r.rig.provider);
    r.a.patch(&provider, key, json!({"credential": "rotated-secret"}))
        .await
        .ok(200);
    r.call(&r.b, "th").await;
    assert_eq!(last_auth().as_deref(), Some("Bearer rotated-secret"));
    warm(&r).await;
    r.a.patch(&provider, key, json!({"credential": null}))
        .await
        .ok(200);
    r.call(&r.b, "th").await;
    assert_eq!(last_auth(), None);

    // the binding removed, then added again
    warm(&r).await;
    let binding = format!("/v1/agents/{}/tools/{tool}", r.rig.agent);
    r.a.delete(&binding, key).await.ok(204);
    b_call(json!({"id": 7}))
        .await
        .problem(400, "invalid_arguments");
    r.a.post(
        &format!("/v1/agents/{}/tools", r.rig.agent),
        key,
        json!({"tool_id": tool, "provider_id": r.rig.provider}),
    )
    .await
    .ok(201);
    warm(&r).await;

    // the deployment's cache mode (admin route, on the org of its path)
    let looping = Rig::new(&r.a, &r.up, true).await;
    let u = looping.token(&r.a, "u1", json!({})).await;
    let walk = || async {
        let args = json!({"_all_pages": true});
        let res = looping.call(&r.b, &u, "w", "list_contacts", args).await;
        res.ok(200)["result"].clone()
    };
    walk().await;
    assert_eq!(walk().await["_cache"]["hit"], true, "mode on: a hit");
    r.a.patch(
        &format!(
            "/v1/orgs/{}/deployments/{}",
            looping.t.org, looping.t.deployment
        ),
        ADMIN,
        json!({"cache": "off"}),
    )
    .await
    .ok(200);
    assert!(walk().await.get("_cache").is_none(), "mode off: no hit");

    // the agent deleted
    warm(&r).await;
    r.a.delete(&format!("/v1/agents/{}", r.rig.agent), key)
        .await
        .ok(204);
    b_call(json!({"id": 7})).await.problem(404, "not_found");
}

/// A write made outside the API (an operator's SQL) bumps no epoch: it is seen once the
/// replica's memory of the agent is older than `agent_memory_seconds` (1 s here).
#[tokio::test]
async fn a_change_written_with_plain_sql_is_seen_once_the_max_age_passed() {
    let r = replicas_with(1).await;
    r.call(&r.b, "th").await;
    sqlx::query("DELETE FROM agent_tools WHERE org_id = $1 AND agent_id = $2")
        .bind(&r.rig.t.org)
        .bind(&r.rig.agent)
        .execute(&r.pool)
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let res = r
            .rig
            .call(&r.b, &r.token, "th", "get_contact", json!({"id": 7}))
            .await;
        if res.status.as_u16() == 400 {
            res.problem(400, "invalid_arguments");
            break;
        }
        assert_eq!(res.status.as_u16(), 200, "{}", res.text);
        assert!(Instant::now() < deadline, "the SQL write was never seen");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A warm call reads the org's config epoch and the thread's marks in one `MGET`, and no
/// agent; a write through the API bumps the epoch before it answers.
#[tokio::test]
async fn a_warm_call_reads_the_epoch_with_the_marks_in_one_round_trip() {
    let Some(redis) = services::require_redis_server().await else {
        return;
    };
    let counter = crate::support::sql_count::start(&fresh_database().await).await;
    let mut s = with_memory(counter.url.clone(), 300);
    s.redis_url = Some(redis.url().into());
    let app = spawn_with(s).await;
    let up = upstream_server::start().await;
    let rig = Rig::new(&app, &up, false).await;
    let token = rig.token(&app, "u1", json!({})).await;
    let mut conn = redis::Client::open(redis.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let epoch_key = format!("lg:{}:cfg", rig.t.org);
    let epoch = |conn: &mut redis::aio::MultiplexedConnection| {
        let mut conn = conn.clone();
        let key = epoch_key.clone();
        async move {
            redis::cmd("GET")
                .arg(key)
                .query_async::<Option<String>>(&mut conn)
                .await
                .unwrap()
        }
    };
    let bumped = epoch(&mut conn).await;
    assert!(bumped.is_some(), "the rig's API writes bumped the epoch");
    let call = || rig.call(&app, &token, "th", "get_contact", json!({"id": 7}));
    call().await.ok(200);
    let before = commandstats(&mut conn).await;
    app.vectors_settled().await;
    let from = counter.statements();
    log_every_command(&mut conn).await;
    call().await.ok(200);
    let sent = logged_commands(&mut conn).await;
    let after = commandstats(&mut conn).await;
    app.records_flushed().await;
    let sql = counter.sql_since(from);
    let n = |c: &str| after.get(c).copied().unwrap_or(0) - before.get(c).copied().unwrap_or(0);
    assert_eq!(agent_reads(&sql), 0, "{sql:#?}");
    assert_eq!(sql.len(), 1, "the record only: {sql:#?}");
    assert_eq!(n("MGET"), 1, "epoch and marks in one MGET: {after:?}");
    // the epoch is the MGET's first key, and no other command names it
    let mget: Vec<&Vec<String>> = sent.iter().filter(|c| c[0] == "MGET").collect();
    assert_eq!(mget.len(), 1, "{sent:?}");
    assert_eq!(mget[0][1], epoch_key, "{sent:?}");
    assert_eq!(mget[0].len(), 5, "the epoch and three marks: {sent:?}");
    let named = sent.iter().filter(|c| c.contains(&epoch_key)).count();
    assert_eq!(named, 1, "{sent:?}");
    let m = app.call(reqwest::Method::GET, "/metrics", None, None).await;
    let hits = crate::cache::dataset::metric(&m.text, "loopgate_agent_memory_hits_total");
    assert!(hits >= 1, "{}", m.text);
    // the first call (the thread's creation) read the agent; the warm one did not
    assert_eq!(
        crate::cache::dataset::metric(&m.text, "loopgate_agent_loads_total"),
        1
    );

    // a write through the API: the epoch is bumped by the time it answers
    app.patch(
        &format!("/v1/tools/{}", rig.tools["get_contact"]),
        &rig.t.key,
        json!({"description": "a contact"}),
    )
    .await
    .ok(200);
    assert_ne!(epoch(&mut conn).await, bumped);
    // reads, the runtime's own routes and minting a runtime token bump nothing
    let now = epoch(&mut conn).await;
    app.get(
        &format!("/v1/tools/{}", rig.tools["get_contact"]),
        &rig.t.key,
    )
    .await
    .ok(200);
    call().await.ok(200);
    rig.steps(&app, &token, "th").await;
    let minted = rig.token(&app, "u2", json!({})).await;
    rig.call(&app, &minted, "th", "get_contact", json!({"id": 7}))
        .await
        .ok(200);
    assert_eq!(epoch(&mut conn).await, now);
}
