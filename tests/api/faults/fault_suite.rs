//! The fault suite (K1–K5): two replicas of the real binary on a Postgres and a Redis of
//! the test's own, under a mixed concurrent load — pass-through calls, walks (cache
//! hits), `_refresh` walks, streamed walks, retrieval — while faults come one at a time:
//! Redis killed and started again (empty), Postgres stopped and started, a replica
//! SIGKILLed mid-walk, a replica SIGTERMed mid-walk (each replaced by a fresh one).
//!
//! What it asserts, afterwards, from every live replica:
//! - no lost record (K1): every call answered 200 has a record readable by its id, none
//!   left `running`; the streamed calls the SIGKILL cut are closed as `call_interrupted`;
//! - no unreadable `_resultId` (K2): every result handed out reads back from every
//!   replica; only one made before the Redis restart, and not during the outage, may
//!   answer `410 result_lost` (K5: that Redis keeps nothing) — never `404`, never
//!   "expired", never a 5xx;
//! - no wait past the bounds (K3): no call took longer than the wall-clock bound plus a
//!   margin, and the walk of a key the killed replica had claimed is done within seconds;
//! - no wrong verdict: a walk that says complete has every row, one with fewer says so.
//!
//! It prints a report: requests and answers by status per fault, recovery times, and the
//! replicas' RSS and descriptors, Postgres' connections and Redis' clients before and
//! after. Bounded: about a minute (the faults are seconds each).

use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use deadpool_redis::redis;
use futures_util::{StreamExt, TryStreamExt};
use serde_json::{json, Value};

use crate::faults::replicas::{binary, Replica};
use crate::support::helpers::TestApp;
use crate::support::rig::Rig;
use crate::support::services;
use crate::support::slow_upstream;

const PHASES: [&str; 5] = [
    "baseline",
    "redis killed 3 s",
    "postgres stopped 3 s",
    "replica SIGKILL mid-walk",
    "replica SIGTERM mid-walk",
];
/// The replicas' wall-clock bound of a walk (`limit_wall_seconds`).
const WALL: Duration = Duration::from_secs(10);
/// What a call may take beyond it: the drain's grace, a Redis budget, a slow machine.
const MARGIN: Duration = Duration::from_secs(5);
const WORKERS: usize = 6;

/// A result handed out: where, when, and what it said about itself.
struct Made {
    id: String,
    thread: String,
    /// Made before Redis was started again (empty), and not during the outage.
    before_restart: bool,
    degraded: bool,
    items: Value,
}

#[derive(Default)]
struct Log {
    /// Per phase: answers by status (`conn` when the connection failed, `cut` for a
    /// stream that ended without its outcome, `error:<code>` for one whose outcome was an
    /// error).
    answers: Vec<BTreeMap<String, usize>>,
    /// Call ids answered 200 (or whose stream carried the outcome, an output or an error).
    calls: Vec<String>,
    results: Vec<Made>,
    /// Streamed calls cut before their outcome (their replica died).
    cut: Vec<String>,
    wrong_verdicts: Vec<String>,
    slowest: Duration,
}

struct Load {
    live: Mutex<Vec<String>>,
    client: reqwest::Client,
    phase: AtomicUsize,
    /// Redis was started again (empty).
    redis_restarted: AtomicBool,
    stop: AtomicBool,
    log: Mutex<Log>,
    agent: String,
    token: String,
}

impl Load {
    fn count(&self, what: &str) {
        let phase = self.phase.load(Ordering::SeqCst);
        let mut log = self.log.lock().unwrap();
        *log.answers[phase].entry(what.to_string()).or_default() += 1;
    }

    fn pick(&self, n: usize) -> String {
        let live = self.live.lock().unwrap();
        live[n % live.len()].clone()
    }
}

/// A walk result's verdict against the rows it has: `pages` pages of 10 exist.
fn check_verdict(load: &Load, args: &Value, result: &Value) {
    let Some(pages) = args["pages"].as_u64() else {
        return;
    };
    if args.get("_all_pages").is_none() {
        return;
    }
    let want = pages * 10;
    let items = result["_itemCount"].as_u64();
    let complete = result["_pagingComplete"].as_bool();
    let wrong = match (complete, items) {
        (Some(true), Some(n)) => n != want,
        (Some(false), Some(n)) => n == want && result.get("_stoppedBy").is_none(),
        _ => true,
    };
    if wrong {
        load.log
            .lock()
            .unwrap()
            .wrong_verdicts
            .push(result.to_string());
    }
}

/// One JSON tool call; its status (or `conn`) and body.
async fn json_call(
    load: &Load,
    base: &str,
    thread: &str,
    name: &str,
    args: &Value,
) -> (String, Value) {
    let res = load
        .client
        .post(format!(
            "{base}/v1/agents/{}/threads/{thread}/tool-calls",
            load.agent
        ))
        .bearer_auth(&load.token)
        .json(&json!({"name": name, "arguments": args}))
        .timeout(WALL + MARGIN + Duration::from_secs(10))
        .send()
        .await;
    match res {
        Ok(r) => {
            let status = r.status().as_u16().to_string();
            let body = r.json::<Value>().await.unwrap_or(Value::Null);
            (status, body)
        }
        Err(_) => ("conn".into(), Value::Null),
    }
}

/// A streamed call read to its end: the call id (from its first chunks), the outcome
/// chunk's output (`None` when the stream ended without it) and a status: `200` for an
/// output, `error:<code>` for an error outcome (the call ended, failed: its record is
/// read back like any other), `cut` for a stream that ended with no outcome at all.
async fn stream_call(
    client: &reqwest::Client,
    base: &str,
    agent: &str,
    token: &str,
    thread: &str,
    args: &Value,
    progressed: Option<tokio::sync::oneshot::Sender<()>>,
) -> (Option<String>, Option<Value>, String) {
    let res = client
        .post(format!(
            "{base}/v1/agents/{agent}/threads/{thread}/tool-calls"
        ))
        .bearer_auth(token)
        .header("accept", "text/event-stream")
        .json(&json!({"name": "list_slow", "arguments": args}))
        .timeout(WALL + MARGIN + Duration::from_secs(10))
        .send()
        .await;
    let res = match res {
        Ok(r) if r.status() == 200 => r,
        Ok(r) => return (None, None, r.status().as_u16().to_string()),
        Err(_) => return (None, None, "conn".into()),
    };
    let mut body = res.bytes_stream().map_err(std::io::Error::other);
    let (mut buf, mut id, mut out, mut failed) = (String::new(), None, None, None);
    let mut progressed = progressed;
    while let Some(Ok(chunk)) = body.next().await {
        buf.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buf.find("\n\n") {
            let event: String = buf.drain(..end + 2).collect();
            let Some(data) = event.lines().find_map(|l| l.strip_prefix("data: ")) else {
                continue;
            };
            let Ok(v) = serde_json::from_str::<Value>(data) else {
                continue;
            };
            match v["type"].as_str() {
                Some("tool-input-available") => id = v["toolCallId"].as_str().map(str::to_owned),
                Some("tool-output-available") => out = Some(v["output"].clone()),
                // "<code>: <detail>" (call::ui_stream::error_text)
                Some("tool-output-error") => {
                    let text = v["errorText"].as_str().unwrap_or("");
                    failed = Some(text.split(':').next().unwrap_or("").to_owned());
                }
                Some("data-tool-loop-progress") => {
                    if let Some(tx) = progressed.take() {
                        let _ = tx.send(());
                    }
                }
                _ => {}
            }
        }
    }
    let status = match (&out, failed) {
        (Some(_), _) => "200".to_owned(),
        (None, Some(code)) => format!("error:{code}"),
        (None, None) => "cut".to_owned(),
    };
    (id, out, status)
}

/// What one worker does until the load stops: a mix of calls on the live replicas in turn.
async fn worker(w: usize, load: Arc<Load>) {
    let mut last: Option<(String, String)> = None;
    let mut n = 0usize;
    while !load.stop.load(Ordering::SeqCst) {
        let base = load.pick(w + n);
        let thread = format!("w{w}-{}", n % 3);
        let started = Instant::now();
        let op = (w + n) % 5;
        let args = match op {
            0 => json!({"page": 1}),
            1 => json!({"_all_pages": true, "pages": 4}),
            2 => json!({"_all_pages": true, "pages": 4, "_refresh": true}),
            _ => json!({"_all_pages": true, "pages": 6, "_refresh": true}),
        };
        let restarted = load.redis_restarted.load(Ordering::SeqCst);
        let (status, result, id) = match (op, &last) {
            (4, Some((rid, rthread))) => {
                let q = json!({"resultId": rid, "limit": 1});
                let (s, b) = json_call(&load, &base, rthread, "queryToolResult", &q).await;
                (s, Value::Null, b["id"].as_str().map(str::to_owned))
            }
            (3, _) => {
                let (id, out, s) = stream_call(
                    &load.client,
                    &base,
                    &load.agent,
                    &load.token,
                    &thread,
                    &args,
                    None,
                )
                .await;
                if let Some(id) = &id {
                    let mut log = load.log.lock().unwrap();
                    if s == "cut" {
                        log.cut.push(id.clone());
                    } else if s.starts_with("error:") {
                        // answered with a call id: its record must be readable (K1)
                        log.calls.push(id.clone());
                    }
                }
                (s, out.unwrap_or(Value::Null), id)
            }
            _ => {
                let (s, b) = json_call(&load, &base, &thread, "list_slow", &args).await;
                (s, b["result"].clone(), b["id"].as_str().map(str::to_owned))
            }
        };
        let took = started.elapsed();
        load.count(&status);
        {
            let mut log = load.log.lock().unwrap();
            log.slowest = log.slowest.max(took);
            if status == "200" {
                if let Some(id) = &id {
                    log.calls.push(id.clone());
                }
            }
        }
        if status == "200" && result.is_object() {
            check_verdict(&load, &args, &result);
            if let Some(rid) = result["_resultId"].as_str() {
                let degraded = result.get("_degraded").is_some();
                load.log.lock().unwrap().results.push(Made {
                    id: rid.to_string(),
                    thread: thread.clone(),
                    before_restart: !restarted && !degraded,
                    degraded,
                    items: result["_itemCount"].clone(),
                });
                last = Some((rid.to_string(), thread.clone()));
            }
        }
        n += 1;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// RSS (kB) and open descriptors of a process.
fn resources(pid: u32) -> (u64, usize) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let rss = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0);
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count());
    (rss, fds)
}

async fn postgres_connections(url: &str) -> i64 {
    let Ok(pool) = sqlx::PgPool::connect(url).await else {
        return -1;
    };
    let n: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'",
    )
    .fetch_one(&pool)
    .await
    .unwrap_or(-1);
    pool.close().await;
    n - 1
}

async fn redis_clients(url: &str) -> i64 {
    let Ok(client) = redis::Client::open(url) else {
        return -1;
    };
    let Ok(mut c) = client.get_multiplexed_async_connection().await else {
        return -1;
    };
    let info: String = redis::cmd("INFO")
        .arg("clients")
        .query_async(&mut c)
        .await
        .unwrap_or_default();
    info.lines()
        .find_map(|l| l.strip_prefix("connected_clients:"))
        .and_then(|v| v.trim().parse::<i64>().ok())
        .map_or(-1, |n| n - 1)
}

/// How long until every one of `bases` says ready (`/readyz` 200, status `ready`).
async fn until_ready(client: &reqwest::Client, bases: &[String]) -> Duration {
    let started = Instant::now();
    for base in bases {
        loop {
            let r = client.get(format!("{base}/readyz")).send().await;
            if let Ok(r) = r {
                if r.status() == 200 {
                    let v: Value = r.json().await.unwrap_or(Value::Null);
                    if v["status"] == "ready" {
                        break;
                    }
                }
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "{base} never ready again"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    started.elapsed()
}

fn kill(pid: u32, signal: &str) {
    let ok = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "kill -{signal} {pid}");
}

#[tokio::test]
async fn k1_k5_nothing_lost_under_faults_and_load() {
    let Some(pg) = services::require_postgres_bins().await else {
        return;
    };
    let Some(mut redis_server) = services::require_redis_server().await else {
        return;
    };
    let suite = Instant::now();
    let db = pg.url();
    let env = vec![
        ("REDIS_URL", redis_server.url()),
        ("LOOPGATE_REPLICAS", "2".to_string()),
        ("LOOPGATE_SHUTDOWN_GRACE_SECONDS", "4".to_string()),
        ("LOOPGATE_LIMIT_WALL_SECONDS", WALL.as_secs().to_string()),
        // the killed replica's walk slots last their lease (K3 covers its claims, not its
        // slots): room enough that they never refuse the load
        ("LOOPGATE_ORG_CONCURRENT_WALKS", "64".to_string()),
        // reading every id back from every replica is far above an org's usual rate
        ("LOOPGATE_ORG_REQUESTS_PER_SECOND", "100000".to_string()),
        ("RUST_LOG", "error".to_string()),
    ];
    let start = |env: Vec<(&'static str, String)>, db: String| async move {
        binary(&db, &env, Stdio::null()).await
    };
    let a = start(env.clone(), db.clone()).await;
    let b = start(env.clone(), db.clone()).await;
    let slow = slow_upstream::start(Duration::from_millis(30), Duration::from_millis(30)).await;
    let rig = Rig::with_tools(&a.app, &slow.base, vec![slow_upstream::tool()], true).await;
    let token = rig.token(&a.app, "u1", json!({})).await;
    let client = reqwest::Client::new();
    let load = Arc::new(Load {
        live: Mutex::new(vec![a.app.address.clone(), b.app.address.clone()]),
        client: client.clone(),
        phase: AtomicUsize::new(0),
        redis_restarted: AtomicBool::new(false),
        stop: AtomicBool::new(false),
        log: Mutex::new(Log {
            answers: vec![BTreeMap::new(); PHASES.len()],
            ..Log::default()
        }),
        agent: rig.agent.clone(),
        token: token.clone(),
    });
    let workers: Vec<_> = (0..WORKERS)
        .map(|w| tokio::spawn(worker(w, load.clone())))
        .collect();
    let mut recovery: Vec<(String, Duration)> = Vec::new();

    // baseline
    tokio::time::sleep(Duration::from_secs(2)).await;
    let before = (
        [resources(a.pid()), resources(b.pid())],
        postgres_connections(&db).await,
        redis_clients(&redis_server.url()).await,
    );

    // Redis killed, then started again empty
    load.phase.store(1, Ordering::SeqCst);
    redis_server.stop().await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    redis_server.start_again().await;
    load.redis_restarted.store(true, Ordering::SeqCst);
    let live = load.live.lock().unwrap().clone();
    recovery.push(("redis".into(), until_ready(&client, &live).await));
    tokio::time::sleep(Duration::from_secs(1)).await;

    // Postgres stopped (as a crash would), then started again
    load.phase.store(2, Ordering::SeqCst);
    pg.stop().await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    pg.start_again().await;
    recovery.push(("postgres".into(), until_ready(&client, &live).await));
    tokio::time::sleep(Duration::from_secs(1)).await;

    // a replica SIGKILLed mid-walk: its streamed walk is cut, its claim on the key goes
    // within seconds (K3), and the call is closed as interrupted (K1)
    load.phase.store(3, Ordering::SeqCst);
    let claimed = json!({"_all_pages": true, "pages": 5, "delay_ms": 400});
    let (tx, progressed) = tokio::sync::oneshot::channel();
    let doomed = tokio::spawn({
        let (client, base, agent, token) = (
            client.clone(),
            b.app.address.clone(),
            rig.agent.clone(),
            token.clone(),
        );
        let args = claimed.clone();
        async move { stream_call(&client, &base, &agent, &token, "doomed", &args, Some(tx)).await }
    });
    let _ = tokio::time::timeout(Duration::from_secs(10), progressed).await;
    load.live.lock().unwrap().retain(|x| *x != b.app.address);
    kill(b.pid(), "KILL");
    let killed_at = Instant::now();
    drop(b);
    let (doomed_id, doomed_out, _) = doomed.await.unwrap();
    assert!(doomed_out.is_none(), "the stream was cut");
    let doomed_id = doomed_id.expect("the cut stream's call id");
    // the same walk on the survivor: not held by the dead replica's claim for its lease
    let (status, body) =
        json_call(&load, &a.app.address, "after-kill", "list_slow", &claimed).await;
    let claim_wait = killed_at.elapsed();
    assert_eq!(status, "200", "{body}");
    // (before K3 the claim held it for the walk's whole lease: the bound plus 15 s)
    assert!(
        claim_wait < WALL,
        "the dead replica's claim held the walk for {claim_wait:?}"
    );
    let b2 = start(env.clone(), db.clone()).await;
    recovery.push(("replica (SIGKILL)".into(), killed_at.elapsed()));
    load.live.lock().unwrap().push(b2.app.address.clone());

    // a replica SIGTERMed mid-walk: it drains, its walk ends honestly, it is replaced
    load.phase.store(4, Ordering::SeqCst);
    let long = json!({"_all_pages": true, "pages": 20, "delay_ms": 900, "_refresh": true});
    let (tx, progressed) = tokio::sync::oneshot::channel();
    let draining = tokio::spawn({
        let (client, base, agent, token) = (
            client.clone(),
            a.app.address.clone(),
            rig.agent.clone(),
            token.clone(),
        );
        async move { stream_call(&client, &base, &agent, &token, "drained", &long, Some(tx)).await }
    });
    let _ = tokio::time::timeout(Duration::from_secs(10), progressed).await;
    let termed_at = Instant::now();
    kill(a.pid(), "TERM");
    tokio::time::sleep(Duration::from_millis(300)).await;
    load.live.lock().unwrap().retain(|x| *x != a.app.address);
    let (drained_id, drained_out, _) = draining.await.unwrap();
    let drained_out = drained_out.expect("a drained walk ends with its outcome");
    assert!(
        drained_out["_pagingComplete"] == true || drained_out["_stoppedBy"] == "time",
        "{drained_out}"
    );
    let drained_id = drained_id.expect("the drained call's id");
    let a2 = start(env.clone(), db.clone()).await;
    recovery.push(("replica (SIGTERM)".into(), termed_at.elapsed()));
    load.live.lock().unwrap().push(a2.app.address.clone());
    tokio::time::sleep(Duration::from_secs(1)).await;
    drop(a);

    load.stop.store(true, Ordering::SeqCst);
    for w in workers {
        w.await.unwrap();
    }
    let after = (
        [resources(a2.pid()), resources(b2.pid())],
        postgres_connections(&db).await,
        redis_clients(&redis_server.url()).await,
    );

    // read everything back from every live replica
    let replicas: Vec<&Replica> = vec![&a2, &b2];
    let log = std::mem::take(&mut *load.log.lock().unwrap());
    let mut calls = log.calls.clone();
    calls.push(drained_id.clone());
    let mut missing = Vec::new();
    for r in &replicas {
        let got: Vec<(String, Value, u16)> = futures_util::stream::iter(calls.iter().cloned())
            .map(|id| record(&r.app, &token, id))
            .buffer_unordered(16)
            .collect()
            .await;
        for (id, v, status) in got {
            if status != 200 || v["status"] == "running" {
                missing.push(format!("{id} on {}: {status} {v}", r.app.address));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "{} records lost: {:?}",
        missing.len(),
        &missing[..missing.len().min(5)]
    );

    // K1: the calls the SIGKILL cut are closed as interrupted, by a live replica
    let mut cut = log.cut.clone();
    cut.push(doomed_id.clone());
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut open: Vec<String> = cut.clone();
    while !open.is_empty() {
        let mut still = Vec::new();
        for id in open {
            let (_, v, status) = record(&a2.app, &token, id.clone()).await;
            if status != 200 || v["status"] == "running" {
                still.push(id);
            } else if v["status"] == "failed" {
                assert_eq!(v["error"]["code"], "call_interrupted", "{v}");
            }
        }
        open = still;
        if open.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "calls left running: {open:?}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }

    // K2: every result readable from every replica (K5: lost only if made before the
    // restart of a Redis that keeps nothing, and then said so)
    let mut unreadable = Vec::new();
    let mut lost = 0;
    for r in &replicas {
        let got: Vec<(usize, u16, Value)> =
            futures_util::stream::iter(log.results.iter().enumerate())
                .map(|(i, m)| {
                    let app = &r.app;
                    let (agent, token) = (&rig.agent, &token);
                    async move {
                        let q = json!({"resultId": m.id, "limit": 1});
                        let res = app
                            .tool_call(agent, token, &m.thread, "queryToolResult", q)
                            .await;
                        (i, res.status.as_u16(), res.body)
                    }
                })
                .buffer_unordered(16)
                .collect()
                .await;
        for (i, status, body) in got {
            let m = &log.results[i];
            match status {
                200 => {
                    let total = &body["result"]["total"];
                    if m.items.is_u64() && *total != m.items {
                        unreadable.push(format!("{}: {total} rows, made with {}", m.id, m.items));
                    }
                }
                410 if m.before_restart && body["code"] == "result_lost" => lost += 1,
                _ => unreadable.push(format!(
                    "{} (degraded {}, before restart {}) on {}: {status} {body}",
                    m.id, m.degraded, m.before_restart, r.app.address
                )),
            }
        }
    }
    assert!(
        unreadable.is_empty(),
        "{} unreadable results: {:?}",
        unreadable.len(),
        &unreadable[..unreadable.len().min(5)]
    );
    assert!(
        log.wrong_verdicts.is_empty(),
        "wrong verdicts: {:?}",
        log.wrong_verdicts
    );
    assert!(
        log.slowest <= WALL + MARGIN,
        "a call took {:?}, past the {WALL:?} bound",
        log.slowest
    );

    // the report
    println!("fault suite report ({:?} in all)", suite.elapsed());
    for (phase, answers) in PHASES.iter().zip(&log.answers) {
        let total: usize = answers.values().sum();
        println!("  {phase:<28} {total:>5} requests  {answers:?}");
    }
    for (what, took) in &recovery {
        println!("  recovery after {what:<20} {took:?}");
    }
    println!(
        "  records read back: {} x {} replicas; cut streams closed as interrupted: {}",
        calls.len(),
        replicas.len(),
        cut.len()
    );
    println!(
        "  results read back: {} x {} replicas ({} made degraded, {lost} reads answered result_lost)",
        log.results.len(),
        replicas.len(),
        log.results.iter().filter(|m| m.degraded).count()
    );
    println!(
        "  slowest call {:?}; walk of the dead replica's key done {claim_wait:?} after the kill",
        log.slowest
    );
    println!(
        "  before: replicas (RSS kB, fds) {:?}, postgres connections {}, redis clients {}",
        before.0, before.1, before.2
    );
    println!(
        "  after:  replicas (RSS kB, fds) {:?}, postgres connections {}, redis clients {}",
        after.0, after.1, after.2
    );
    assert!(suite.elapsed() < Duration::from_secs(120), "bounded");
}

/// `GET /v1/tool-calls/{id}`: the id, the body, the status.
async fn record(app: &TestApp, token: &str, id: String) -> (String, Value, u16) {
    let r = app.get(&format!("/v1/tool-calls/{id}"), token).await;
    (id, r.body, r.status.as_u16())
}
