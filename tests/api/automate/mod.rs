//! Schedules and webhook delivery (W6, W7): CRUD and validation, the scheduler's
//! `catch_up` and `overlap`, scheduled runs' credentials and listing, signed deliveries
//! verified by the Standard Webhooks reference library (PyPI `standardwebhooks`, in
//! `.data/webhooks-venv`, made by `scripts/setup-webhooks`), and three replicas killed
//! and restarted under a schedule.

mod audit_and_caps;
mod deliveries;
mod replicas;
mod schedules;

use std::io::BufRead as _;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::{web, App, HttpResponse, HttpServer};
use serde_json::{json, Value};

use crate::support::helpers::{fresh_database, spawn_with, test_settings, TestApp};
use crate::support::rig::Rig;

/// The receiver: a Python process verifying deliveries with `standardwebhooks`.
pub struct Receiver {
    pub url: String,
    dir: tempdir::Dir,
    lines: Arc<Mutex<Vec<Value>>>,
    child: Child,
}

mod tempdir {
    /// A directory removed when dropped.
    pub struct Dir(pub std::path::PathBuf);
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Receiver {
    /// Starts it (the venv made by `scripts/setup-webhooks`; a missing one fails the
    /// test unless missing services are allowed: then `None`).
    pub async fn start() -> Option<Receiver> {
        let root = env!("CARGO_MANIFEST_DIR");
        let data = std::env::var("LOOPGATE_DATA_DIR").unwrap_or_else(|_| format!("{root}/.data"));
        let python = format!("{data}/webhooks-venv/bin/python");
        if !std::path::Path::new(&python).exists() {
            crate::support::services::missing(
                "the standardwebhooks venv (.data/webhooks-venv, made by scripts/setup-webhooks)",
                "skipped",
            );
            return None;
        }
        let dir = std::env::temp_dir().join(format!(
            "lg-receiver-{}",
            loopgate::crypto::random_token(10)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("secrets"), "").unwrap();
        let port = crate::support::helpers::unused_port();
        let mut child = Command::new(python)
            .arg(format!("{root}/tests/api/automate/receiver.py"))
            .arg(port.to_string())
            .arg(&dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the webhook receiver");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let out = child.stdout.take().unwrap();
        let sink = lines.clone();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if let Ok(v) = serde_json::from_str::<Value>(&line) {
                    sink.lock().unwrap().push(v);
                }
            }
        });
        let deadline = Instant::now() + Duration::from_secs(15);
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            assert!(Instant::now() < deadline, "the receiver did not start");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Some(Receiver {
            url: format!("http://127.0.0.1:{port}/hook"),
            dir: tempdir::Dir(dir),
            lines,
            child,
        })
    }

    pub fn secrets(&self, secrets: &[&str]) {
        std::fs::write(self.dir.0.join("secrets"), secrets.join("\n")).unwrap();
    }

    pub fn failing(&self, on: bool) {
        let f = self.dir.0.join("fail");
        if on {
            std::fs::write(f, "").unwrap();
        } else {
            let _ = std::fs::remove_file(f);
        }
    }

    /// Every request received so far, one JSON object each.
    pub fn seen(&self) -> Vec<Value> {
        self.lines.lock().unwrap().clone()
    }

    /// Waits until `done(seen)` holds.
    pub async fn wait_for(&self, what: &str, secs: u64, done: impl Fn(&[Value]) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            if done(&self.seen()) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}: {:?}",
                self.seen()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// An upstream whose `/slow` answers one page after `delay` ms.
pub struct Slow {
    pub base: String,
}

pub async fn slow_upstream(delay_ms: u64) -> Slow {
    let delay = Arc::new(AtomicU64::new(delay_ms));
    let requests = Arc::new(AtomicU64::new(0));
    let (d, r) = (delay.clone(), requests.clone());
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = HttpServer::new(move || {
        let (d, r) = (d.clone(), r.clone());
        App::new().route(
            "/slow",
            web::get().to(move || {
                let (d, r) = (d.clone(), r.clone());
                async move {
                    r.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(d.load(Ordering::SeqCst))).await;
                    HttpResponse::Ok().json(json!({"items": [{"id": 1}, {"id": 2}]}))
                }
            }),
        )
    })
    .workers(2)
    .listen(listener)
    .unwrap()
    .run();
    tokio::spawn(server);
    Slow {
        base: format!("http://127.0.0.1:{port}"),
    }
}

/// Settings for an in-process app that schedules fast: any interval down to 1 s, ticks
/// every 100 ms, short leases and grace, retries from 200 ms.
pub fn fast_settings(db: String) -> loopgate::config::settings::Settings {
    let mut s = test_settings(db);
    s.automate_workers = true;
    s.schedule_min_interval_seconds = 1;
    s.schedule_tick_ms = 100;
    s.schedule_lease_seconds = 2;
    s.schedule_grace_seconds = 1;
    s.webhook_retry_base_ms = 200;
    s.webhook_poll_ms = 100;
    s.webhook_timeout_ms = 2000;
    s
}

/// A fresh database and an app on it with [`fast_settings`] changed by `tweak`.
pub async fn fast_app(tweak: impl FnOnce(&mut loopgate::config::settings::Settings)) -> TestApp {
    crate::support::helpers::init_logs();
    let mut s = fast_settings(fresh_database().await);
    tweak(&mut s);
    spawn_with(s).await
}

/// A rig whose only tool is `slow` (GET `/slow` of `base`).
pub async fn slow_rig(app: &TestApp, base: &str) -> Rig {
    Rig::with_tools(
        app,
        base,
        vec![(
            "slow",
            "GET",
            "/slow",
            json!({"type": "object", "properties": {}}),
        )],
        false,
    )
    .await
}

pub async fn workflow(app: &TestApp, rig: &Rig, steps: Value) -> String {
    app.post(
        "/v1/workflows",
        &rig.t.key,
        json!({"name": "wf", "agent_id": rig.agent, "steps": steps}),
    )
    .await
    .ok(201)["id"]
        .as_str()
        .unwrap()
        .to_string()
}

pub async fn schedule(app: &TestApp, key: &str, wf: &str, body: Value) -> Value {
    app.post(&format!("/v1/workflows/{wf}/schedules"), key, body)
        .await
        .ok(201)
        .clone()
}

/// Every run of the schedule (all pages), oldest due time first.
pub async fn runs_of(app: &TestApp, key: &str, wf: &str, schedule: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut cursor = String::new();
    loop {
        let r = app
            .get(
                &format!(
                    "/v1/workflows/{wf}/runs?schedule_id={schedule}&limit=200&cursor={cursor}"
                ),
                key,
            )
            .await;
        let body = r.ok(200).clone();
        out.extend(body["data"].as_array().unwrap().iter().cloned());
        match body["cursor"].as_str() {
            Some(c) if body["has_more"] == true => cursor = c.to_string(),
            _ => break,
        }
    }
    out.sort_by_key(|r| r["scheduled_for"].as_str().unwrap_or("").to_string());
    out
}

/// Waits until `done(runs)` holds for the schedule's runs; the runs then.
pub async fn wait_runs(
    app: &TestApp,
    key: &str,
    wf: &str,
    schedule: &str,
    secs: u64,
    done: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let runs = runs_of(app, key, wf, schedule).await;
        if done(&runs) {
            return runs;
        }
        assert!(Instant::now() < deadline, "timed out; runs: {runs:#?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

pub fn ts(v: &Value) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339(v.as_str().unwrap_or_else(|| panic!("not a time: {v}")))
        .unwrap()
        .with_timezone(&chrono::Utc)
}
