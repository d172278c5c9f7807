//! Three replicas of the real `loopgate` binary on loopback, sharing one Postgres and one
//! Redis, against an in-test upstream that counts requests: they act as one service.
//! A provider's rate limit holds for the three together (P9: "never above the provider's
//! rate limit (across all replicas)"), a stored result (G3) and a cached walk (C1) made
//! through one are read through another, a walk on one is followed live from another
//! (S1, `GET /v1/tool-calls/{id}/events`, `Last-Event-ID`), and SIGTERM on the replica
//! running a walk ends it with an honest partial verdict (P3 `_stoppedBy: "time"`) that
//! every replica serves.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{json, Value};

use crate::support::helpers::{fresh_database, TestApp, ADMIN};
use crate::support::rig::Rig;
use crate::support::upstream_server::{self, Upstream};

/// One replica process; killed when dropped.
pub struct Replica {
    pub app: TestApp,
    child: Child,
}

impl Replica {
    /// The process id of the replica's binary.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn replica(db: &str, grace_secs: u64) -> Replica {
    let verbose = std::env::var("TEST_LOG").is_ok();
    let env = [
        ("LOOPGATE_REPLICAS", "3".to_string()),
        ("LOOPGATE_SHUTDOWN_GRACE_SECONDS", grace_secs.to_string()),
        (
            "RUST_LOG",
            if verbose { "info" } else { "warn" }.to_string(),
        ),
    ];
    let log = if verbose {
        Stdio::inherit()
    } else {
        Stdio::null()
    };
    binary(db, &env, log).await
}

/// The real `loopgate` binary serving `db` (migrated at start) with the shared Redis,
/// the test configuration plus `env`, its stderr (the logs) going to `log`; returned
/// once `/readyz` says ready.
pub async fn binary(db: &str, env: &[(&str, String)], log: Stdio) -> Replica {
    let port = crate::support::helpers::unused_port();
    let redis = std::env::var("REDIS_URL").expect("this test needs the Redis scripts/test starts");
    let child = Command::new(env!("CARGO_BIN_EXE_loopgate"))
        .arg("serve")
        .env("LOOPGATE_CONFIG", "/nonexistent/loopgate.toml")
        .env("LOOPGATE_BIND", format!("127.0.0.1:{port}"))
        .env("DATABASE_URL", db)
        .env("REDIS_URL", redis)
        .env("LOOPGATE_ADMIN_TOKEN", ADMIN)
        .env(
            "LOOPGATE_CREDENTIAL_KEY",
            base64::engine::general_purpose::STANDARD.encode([42u8; 32]),
        )
        .env(
            "LOOPGATE_TOKEN_SIGNING_KEY",
            "test-signing-key-that-is-long-enough-0123",
        )
        .env("LOOPGATE_ALLOW_PRIVATE_UPSTREAMS", "true")
        .env("LOOPGATE_DATABASE_MAX_CONNECTIONS", "5")
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("start the loopgate binary");
    let app = TestApp {
        address: format!("http://127.0.0.1:{port}"),
        client: reqwest::Client::new(),
        database_url: db.to_string(),
        records: None,
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(r) = app
            .client
            .get(format!("{}/readyz", app.address))
            .send()
            .await
        {
            if r.status() == 200 {
                break;
            }
        }
        assert!(
            Instant::now() < deadline,
            "replica on port {port} did not become ready"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Replica { app, child }
}

/// Three replicas on one fresh database (the first one migrates it).
async fn cluster(grace_secs: u64) -> [Replica; 3] {
    let db = fresh_database().await;
    let a = replica(&db, grace_secs).await;
    let (b, c) = tokio::join!(replica(&db, grace_secs), replica(&db, grace_secs));
    [a, b, c]
}

/// The most requests the upstream saw within any 1-second window.
fn busiest_second(up: &Upstream) -> usize {
    let log = up.stats.lock().unwrap().limited_log.clone();
    (0..log.len())
        .map(|i| {
            log[i..]
                .iter()
                .take_while(|t| t.duration_since(log[i]) < Duration::from_secs(1))
                .count()
        })
        .max()
        .unwrap_or(0)
}

/// An SSE response read event by event: `(id, chunk)`, `[DONE]` as `Value::Null`.
struct Events {
    res: reqwest::Response,
    buf: String,
}

impl Events {
    async fn open(
        app: &TestApp,
        path: &str,
        token: &str,
        last: Option<&str>,
        body: Option<Value>,
    ) -> Self {
        let url = format!("{}{}", app.address, path);
        let mut req = match &body {
            Some(b) => app.client.post(url).json(b),
            None => app.client.get(url),
        }
        .bearer_auth(token)
        .header("accept", "text/event-stream");
        if let Some(id) = last {
            req = req.header("last-event-id", id);
        }
        let res = req.send().await.unwrap();
        assert_eq!(res.status(), 200);
        assert_eq!(res.headers()["content-type"], "text/event-stream");
        Self {
            res,
            buf: String::new(),
        }
    }

    async fn next(&mut self) -> Option<(Option<String>, Value)> {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let raw: String = self.buf.drain(..end + 2).collect();
                let mut id = None;
                let mut data = None;
                for line in raw.lines() {
                    if let Some(v) = line.strip_prefix("id: ") {
                        id = Some(v.to_string());
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        data = Some(if v == "[DONE]" {
                            Value::Null
                        } else {
                            serde_json::from_str(v).unwrap()
                        });
                    }
                }
                return Some((id, data.unwrap()));
            }
            let chunk = tokio::time::timeout(Duration::from_secs(30), self.res.chunk())
                .await
                .expect("events stalled")
                .ok()??;
            self.buf.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    }

    /// Everything until `[DONE]` (or the end of the stream).
    async fn rest(&mut self) -> Vec<(Option<String>, Value)> {
        let mut out = Vec::new();
        while let Some(e) = self.next().await {
            let done = e.1.is_null();
            out.push(e);
            if done {
                break;
            }
        }
        out
    }
}

fn kind(v: &Value) -> &str {
    v["type"].as_str().unwrap_or("")
}

#[tokio::test]
async fn three_replicas_act_as_one_service() {
    let [r0, r1, r2] = cluster(10).await;
    let up = upstream_server::start().await;
    let rig = Rig::new(&r0.app, &up, true).await;
    // P9/quotas: 4 requests/s (burst 1) for the three replicas together; the upstream
    // answers 429 past 5 in any second. A burst-1 limit is leased one permit at a time, so
    // the lease bound (src/quota/lease.rs) adds nothing to burst + rate × 1 s = 5
    rig.bind_limited(&r0.app, &up.base, "slow_contacts", 4)
        .await;
    let token = rig.token(&r0.app, "u1", json!({})).await;
    let path = format!("/v1/agents/{}/threads/t1/tool-calls", rig.agent);
    // experiments: three independent walks (no cache, no coalescing), one per replica
    let walk =
        json!({"name": "slow_contacts", "arguments": {"_all_pages": true}, "experiment": true});
    let (a, b, c) = tokio::join!(
        r0.app.post(&path, &token, walk.clone()),
        r1.app.post(&path, &token, walk.clone()),
        r2.app.post(&path, &token, walk.clone())
    );
    for r in [&a, &b, &c] {
        let result = &r.ok(200)["result"];
        assert_eq!(result["_itemCount"], 60, "{result}");
        assert_eq!(result["_pagingComplete"], true);
    }
    assert_eq!(up.count("/limited"), 21, "three walks of 7 requests");
    assert_eq!(
        up.stats.lock().unwrap().rate_violations,
        0,
        "the provider never answered 429"
    );
    let busiest = busiest_second(&up);
    assert!(
        busiest <= 5,
        "{busiest} requests within one second: the limit is 4/s, burst 1"
    );

    // G3: a result stored through replica 0 is read through replica 1
    let rid = a.body["result"]["_resultId"].as_str().unwrap();
    let q = r1
        .app
        .post(
            &path,
            &token,
            json!({"name": "queryToolResult", "arguments": {"resultId": rid, "limit": 2}}),
        )
        .await;
    assert_eq!(q.ok(200)["result"]["total"], 60);

    // C1: a walk cached through replica 1 is a hit through replica 2, upstream untouched
    let cached = json!({"name": "slow_contacts", "arguments": {"_all_pages": true}});
    let first = r1.app.post(&path, &token, cached.clone()).await;
    assert_eq!(first.ok(200)["result"]["_pagingComplete"], true);
    let before = up.count("/limited");
    let hit = r2.app.post(&path, &token, cached).await;
    assert_eq!(hit.ok(200)["result"]["_cache"]["hit"], true, "{}", hit.text);
    assert_eq!(hit.body["result"]["_itemCount"], 60);
    assert_eq!(up.count("/limited"), before);

    // S1: a walk streamed by replica 0 is followed from replica 1 while it runs
    rig.bind_limited(&r0.app, &up.base, "slower_contacts", 2)
        .await;
    let body =
        json!({"name": "slower_contacts", "arguments": {"_all_pages": true}, "experiment": true});
    let mut own = Events::open(&r0.app, &path, &token, None, Some(body)).await;
    let mut call_id = String::new();
    while let Some((_, c)) = own.next().await {
        if kind(&c) == "tool-input-available" {
            call_id = c["toolCallId"].as_str().unwrap().to_string();
            break;
        }
    }
    let events = format!("/v1/tool-calls/{call_id}/events");
    let mut follower = Events::open(&r1.app, &events, &token, None, None).await;
    let followed = follower.rest().await;
    let own_rest = own.rest().await;
    let kinds: Vec<&str> = followed.iter().map(|(_, c)| kind(c)).collect();
    assert_eq!(
        &kinds[..3],
        ["start", "start-step", "tool-input-available"],
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&"data-tool-loop-progress"),
        "live progress relayed: {kinds:?}"
    );
    assert_eq!(
        &kinds[kinds.len() - 4..],
        ["tool-output-available", "finish-step", "finish", ""]
    );
    let output = |events: &[(Option<String>, Value)]| {
        events
            .iter()
            .find(|(_, c)| kind(c) == "tool-output-available")
            .unwrap()
            .1["output"]
            .clone()
    };
    assert_eq!(output(&followed)["_itemCount"], 60);
    assert_eq!(
        output(&followed),
        output(&own_rest),
        "the follower saw the caller's outcome"
    );
    // every buffered chunk has an id; reconnecting after the first progress misses nothing after it
    let (progress_id, _) = followed
        .iter()
        .find(|(_, c)| kind(c) == "data-tool-loop-progress")
        .unwrap();
    let progress_id = progress_id.clone().expect("buffered chunks carry an id");
    let at = followed
        .iter()
        .position(|(id, _)| id.as_deref() == Some(&progress_id))
        .unwrap();
    let mut again = Events::open(&r2.app, &events, &token, Some(&progress_id), None).await;
    let resumed = again.rest().await;
    let want: Vec<&Value> = followed[at + 1..].iter().map(|(_, c)| c).collect();
    let got: Vec<&Value> = resumed.iter().map(|(_, c)| c).collect();
    assert_eq!(got, want, "Last-Event-ID resumes right after that event");
    // another caller cannot follow it
    let other = rig.token(&r0.app, "u2", json!({})).await;
    r2.app.get(&events, &other).await.problem(404, "not_found");
    // the outcome is also there at once from a replica that never ran it
    let r = r2
        .app
        .get(&format!("/v1/tool-calls/{call_id}"), &token)
        .await;
    assert_eq!(r.ok(200)["status"], "succeeded");
}

#[tokio::test]
async fn sigterm_mid_walk_records_an_honest_partial_outcome_every_replica_serves() {
    let [mut r0, r1, _r2] = cluster(2).await;
    let up = upstream_server::start().await;
    let rig = Rig::new(&r0.app, &up, true).await;
    // 1 request/s: 7 pages take about 6 s, longer than the 2 s grace period
    rig.bind_limited(&r0.app, &up.base, "slow_contacts", 1)
        .await;
    let token = rig.token(&r0.app, "u1", json!({})).await;
    let path = format!("/v1/agents/{}/threads/t1/tool-calls", rig.agent);
    let body =
        json!({"name": "slow_contacts", "arguments": {"_all_pages": true}, "experiment": true});
    let mut own = Events::open(&r0.app, &path, &token, None, Some(body)).await;
    let mut call_id = String::new();
    while let Some((_, c)) = own.next().await {
        match kind(&c) {
            "tool-input-available" => call_id = c["toolCallId"].as_str().unwrap().to_string(),
            // the walk is under way (a page has come): stop the replica
            "data-tool-loop-progress" => break,
            _ => {}
        }
    }
    let status = Command::new("kill")
        .arg("-TERM")
        .arg(r0.child.id().to_string())
        .status()
        .unwrap();
    assert!(status.success());
    // draining: unready, and new calls go elsewhere (503 + Retry-After)
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let r = r0
            .app
            .client
            .get(format!("{}/readyz", r0.app.address))
            .send()
            .await
            .unwrap();
        if r.status() == 503 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "/readyz stayed ready after SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let refused = r0
        .app
        .post(
            &path,
            &token,
            json!({"name": "slow_contacts", "arguments": {}}),
        )
        .await;
    refused.problem(503, "unavailable");
    assert!(refused.headers.contains_key("retry-after"));
    // the caller's own stream ends with the partial outcome
    let rest = own.rest().await;
    let out = rest
        .iter()
        .find(|(_, c)| kind(c) == "tool-output-available")
        .expect("an outcome")
        .1["output"]
        .clone();
    assert_eq!(out["_stoppedBy"], "time", "{out}");
    assert_eq!(out["_pagingComplete"], false);
    let n = out["_itemCount"].as_u64().unwrap();
    assert!(
        (10..60).contains(&n),
        "rows fetched before the cut are kept: {n}"
    );
    // the replica exits on its own once the call is recorded
    let deadline = Instant::now() + Duration::from_secs(15);
    let exit = loop {
        if let Some(s) = r0.child.try_wait().unwrap() {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "the replica did not exit after its grace period"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(exit.success(), "{exit:?}");
    // another replica serves the recorded outcome, and the stored rows behind it
    let rec = r1
        .app
        .get(&format!("/v1/tool-calls/{call_id}"), &token)
        .await;
    let rec = rec.ok(200);
    assert_eq!(rec["status"], "succeeded");
    assert_eq!(rec["result"]["_stoppedBy"], "time");
    assert_eq!(rec["result"]["_itemCount"], n);
    let rid = rec["result"]["_resultId"].as_str().unwrap();
    let q = r1
        .app
        .post(
            &path,
            &token,
            json!({"name": "queryToolResult", "arguments": {"resultId": rid, "limit": 1}}),
        )
        .await;
    assert_eq!(q.ok(200)["result"]["total"], n);
    let mut follow = Events::open(
        &r1.app,
        &format!("/v1/tool-calls/{call_id}/events"),
        &token,
        None,
        None,
    )
    .await;
    let replay = follow.rest().await;
    let told = replay
        .iter()
        .find(|(_, c)| kind(c) == "tool-output-available")
        .unwrap();
    assert_eq!(told.1["output"]["_stoppedBy"], "time");
}
