//! `spawn_app()` and a small client for the tests.

use std::sync::OnceLock;

use base64::Engine as _;
use loopgate::app::startup::Application;
use loopgate::config::settings::Settings;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use sqlx::{Connection, Executor, PgConnection};

pub const ADMIN: &str = "test-admin-token-0123456789";

fn base_url() -> String {
    std::env::var("LOOPGATE_TEST_DATABASE_URL")
        .or_else(|_| std::env::var("DATABASE_URL"))
        .unwrap_or_else(|_| {
            panic!("set LOOPGATE_TEST_DATABASE_URL (run the tests with scripts/test)")
        })
}

pub fn init_logs() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        if std::env::var("TEST_LOG").is_ok() {
            let _ = loopgate::telemetry::init();
        }
    });
}

/// A free TCP port on 127.0.0.1 for a server the test starts as a process of its own (a
/// replica binary, a Redis or Postgres of the test's own), which cannot be handed a
/// listener bound to port 0. A port the kernel handed out for `bind(0)` is free again
/// once dropped: another test's `bind(0)` or outgoing connection could take it before the
/// server binds it, or while a test has its server stopped, and the test would then talk
/// to someone else's server or fail to start its own. So the port is taken outside the
/// kernel's ephemeral range (`ip_local_port_range`), where neither ever lands, and each
/// call in this process gets another one (from a random start, checked free by binding
/// it: another test binary may be doing the same). A machine whose ephemeral range leaves
/// no room gets the kernel's pick, as before.
pub fn unused_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    static RANGE: OnceLock<(u32, u32)> = OnceLock::new();
    let &(from, span) = RANGE.get_or_init(|| {
        let (low, high) = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
            .ok()
            .and_then(|t| {
                let mut n = t.split_whitespace().map(|w| w.parse::<u32>().ok());
                Some((n.next()??, n.next()??))
            })
            .unwrap_or((32768, 60999));
        // the larger of the gaps below and above the ephemeral range
        let (below, above) = (low.saturating_sub(1024), 65535u32.saturating_sub(high));
        let (from, span) = if below >= above {
            (1024, below)
        } else {
            (high + 1, above)
        };
        if span >= 100 {
            NEXT.store(rand::random_range(0..span), Ordering::Relaxed);
        }
        (from, span)
    });
    if span < 100 {
        // no room outside the ephemeral range (a machine configured so): the kernel's pick
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        return l.local_addr().unwrap().port();
    }
    for _ in 0..span {
        let port = (from + NEXT.fetch_add(1, Ordering::Relaxed) % span) as u16;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free port in {from}..{}", from + span)
}

/// A fresh, empty database for one test.
pub async fn fresh_database() -> String {
    let base = base_url();
    let name = format!(
        "loopgate_test_{}",
        loopgate::crypto::random_token(12).to_lowercase()
    );
    let mut conn = PgConnection::connect(&base)
        .await
        .expect("connect to test Postgres");
    conn.execute(sqlx::AssertSqlSafe(format!(r#"CREATE DATABASE "{name}""#)))
        .await
        .expect("create test database");
    let (prefix, _) = base.rsplit_once('/').expect("database url has a path");
    format!("{prefix}/{name}")
}

pub fn test_settings(database_url: String) -> Settings {
    let mut s = Settings::load().expect("settings");
    s.bind = "127.0.0.1:0".into();
    s.database_url = Some(database_url.into());
    s.redis_url = crate::support::services::shared_redis_url().map(Into::into);
    s.admin_token = Some(ADMIN.to_string().into());
    s.credential_key = Some(
        base64::engine::general_purpose::STANDARD
            .encode([42u8; 32])
            .into(),
    );
    s.token_signing_key = Some(
        "test-signing-key-that-is-long-enough-0123"
            .to_string()
            .into(),
    );
    s.allow_private_upstreams = true;
    s.database_max_connections = 5;
    // one worker per CPU in every app of a test process is thousands of threads on a
    // many-core machine running as many tests at once
    s.http_workers = 2;
    // no background polling in tests that count statements; the schedule tests turn it on
    s.automate_workers = false;
    // K1: each app's record journal of its own (apps of one test process are replicas of
    // different databases: none may replay another's)
    s.record_journal_dir = std::env::temp_dir()
        .join("loopgate-test-records")
        .join(loopgate::crypto::new_id("j"))
        .display()
        .to_string();
    s
}

pub struct TestApp {
    pub address: String,
    pub client: reqwest::Client,
    pub database_url: String,
    /// The app's writer of tool-call records, when it runs in this process.
    pub records: Option<loopgate::call::call_records::Records>,
}

pub async fn spawn_app() -> TestApp {
    init_logs();
    let database_url = fresh_database().await;
    spawn_with(test_settings(database_url.clone())).await
}

pub async fn spawn_with(settings: Settings) -> TestApp {
    spawn_with_clock(
        settings,
        std::sync::Arc::new(loopgate::results::wall_clock::SystemWallClock),
    )
    .await
}

pub async fn spawn_with_clock(
    settings: Settings,
    clock: std::sync::Arc<dyn loopgate::results::wall_clock::WallClock>,
) -> TestApp {
    let database_url = {
        use secrecy::ExposeSecret;
        settings
            .database_url
            .as_ref()
            .map(|s| s.expose_secret().to_string())
            .unwrap_or_default()
    };
    let app = Application::build_with_clock(settings, clock)
        .await
        .expect("build app");
    let address = format!("http://127.0.0.1:{}", app.port());
    let records = Some(app.state().runtime.records().clone());
    tokio::spawn(app.run_until_stopped());
    TestApp {
        address,
        client: reqwest::Client::new(),
        database_url,
        records,
    }
}

/// A response read whole: status, headers, JSON body (or `Value::Null`).
pub struct Res {
    pub status: StatusCode,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
    pub text: String,
}

impl Res {
    /// `res` read whole.
    pub async fn read(res: reqwest::Response) -> Res {
        let status = res.status();
        let headers = res.headers().clone();
        let text = res.text().await.unwrap_or_default();
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        Res {
            status,
            headers,
            body,
            text,
        }
    }

    /// Asserts a problem+json body with this status and code.
    pub fn problem(&self, status: u16, code: &str) -> &Self {
        assert_eq!(
            self.status.as_u16(),
            status,
            "unexpected status, body: {}",
            self.text
        );
        let ct = self
            .headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        assert_eq!(ct, "application/problem+json", "body: {}", self.text);
        assert_eq!(self.body["code"], code, "body: {}", self.text);
        assert_eq!(self.body["status"], status);
        assert!(self.body["detail"].as_str().is_some_and(|d| !d.is_empty()));
        assert!(self.body["type"].as_str().is_some() && self.body["title"].as_str().is_some());
        self
    }
    pub fn ok(&self, status: u16) -> &Value {
        assert_eq!(
            self.status.as_u16(),
            status,
            "unexpected status, body: {}",
            self.text
        );
        &self.body
    }
}

impl TestApp {
    /// Waits until this app's background vector job has no tool waiting (D6: tools written
    /// in a test's setup are embedded behind it), so a window that counts the statements of
    /// one call does not also count that job's. Returns at once without the model.
    /// Waits until every tool-call record this (in-process) app queued is in Postgres: a
    /// call written once is answered before its record (K1), so a window that counts a
    /// call's statements ends here.
    pub async fn records_flushed(&self) {
        self.records
            .as_ref()
            .expect("records_flushed needs an app in this process")
            .flush()
            .await;
    }

    pub async fn vectors_settled(&self) {
        // and no record of an earlier call is still written behind its answer (K1)
        if let Some(records) = &self.records {
            records.flush().await;
        }
        for _ in 0..600 {
            let m = self.call(Method::GET, "/metrics", None, None).await;
            let waiting = m.text.lines().find_map(|l| {
                l.strip_prefix("loopgate_tool_vectors_waiting ")?
                    .trim()
                    .parse::<f64>()
                    .ok()
            });
            if waiting.is_none_or(|w| w == 0.0) {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        panic!("tool vectors still waiting after 60 s");
    }

    pub async fn call(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> Res {
        let mut req = self
            .client
            .request(method, format!("{}{}", self.address, path));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        if let Some(b) = body {
            req = req.json(b);
        }
        Res::read(req.send().await.expect("request")).await
    }
    pub async fn get(&self, path: &str, token: &str) -> Res {
        self.call(Method::GET, path, Some(token), None).await
    }
    pub async fn post(&self, path: &str, token: &str, body: Value) -> Res {
        self.call(Method::POST, path, Some(token), Some(&body))
            .await
    }
    pub async fn patch(&self, path: &str, token: &str, body: Value) -> Res {
        self.call(Method::PATCH, path, Some(token), Some(&body))
            .await
    }
    pub async fn delete(&self, path: &str, token: &str) -> Res {
        self.call(Method::DELETE, path, Some(token), None).await
    }
    pub async fn post_raw(
        &self,
        path: &str,
        token: &str,
        content_type: &str,
        body: Vec<u8>,
    ) -> Res {
        let res = self
            .client
            .post(format!("{}{}", self.address, path))
            .bearer_auth(token)
            .header("content-type", content_type)
            .body(body)
            .send()
            .await
            .expect("request");
        Res::read(res).await
    }

    /// `POST /v1/agents/{agent}/threads/{thread}/tool-calls {name, arguments}`.
    pub async fn tool_call(
        &self,
        agent: &str,
        token: &str,
        thread: &str,
        name: &str,
        args: Value,
    ) -> Res {
        self.post(
            &format!("/v1/agents/{agent}/threads/{thread}/tool-calls"),
            token,
            json!({"name": name, "arguments": args}),
        )
        .await
    }

    pub async fn create_org(&self, name: &str) -> String {
        let r = self.post("/v1/orgs", ADMIN, json!({"name": name})).await;
        r.ok(201)["id"].as_str().expect("org id").to_string()
    }

    pub async fn create_key(&self, org: &str, scopes: &[&str]) -> String {
        let r = self
            .post(
                &format!("/v1/orgs/{org}/api-keys"),
                ADMIN,
                json!({"name": "k", "scopes": scopes}),
            )
            .await;
        r.ok(201)["key"].as_str().expect("key").to_string()
    }

    pub async fn create_deployment(&self, org: &str, cache: &str) -> String {
        let r = self
            .post(
                &format!("/v1/orgs/{org}/deployments"),
                ADMIN,
                json!({"name": format!("dep-{cache}"), "cache": cache}),
            )
            .await;
        r.ok(201)["id"].as_str().expect("deployment id").to_string()
    }

    /// An org with a studio+mint+runtime key, a deployment, and one provider.
    pub async fn tenant(&self, name: &str) -> Tenant {
        let org = self.create_org(name).await;
        let key = self.create_key(&org, &["studio", "mint", "runtime"]).await;
        let deployment = self.create_deployment(&org, "on").await;
        let p = self
            .post(
                "/v1/providers",
                &key,
                json!({"name": "crm", "base_url": "https://api.example.com/v2", "auth": {"type": "bearer"}, "credential": "org-secret-value"}),
            )
            .await;
        let provider = p.ok(201)["id"].as_str().expect("provider id").to_string();
        Tenant {
            org,
            key,
            deployment,
            provider,
        }
    }

    /// An agent of the tenant holding `bindings`, and a runtime token of `user` for it.
    pub async fn agent_and_token(
        &self,
        t: &Tenant,
        bindings: Vec<Value>,
        user: &str,
    ) -> (String, String) {
        let agent = self
            .post("/v1/agents", &t.key, json!({"name": "agent", "deployment_id": t.deployment, "instructions": "Answer from the data.", "agentTools": bindings}))
            .await
            .ok(201)["id"]
            .as_str()
            .expect("agent id")
            .to_string();
        let token = self
            .post(
                "/v1/runtime-tokens",
                &t.key,
                json!({"user_id": user, "agent_id": agent}),
            )
            .await
            .ok(201)["token"]
            .as_str()
            .expect("token")
            .to_string();
        (agent, token)
    }

    pub async fn create_tool(&self, key: &str, provider: &str, name: &str) -> String {
        let r = self
            .post(
                "/v1/tools",
                key,
                json!({
                    "provider_id": provider, "name": name, "description": "List contacts",
                    "method": "GET", "path": "/contacts",
                    "input_schema": {"type": "object", "properties": {"page": {"type": "integer", "minimum": 1}, "per_page": {"type": "integer", "maximum": 100}}}
                }),
            )
            .await;
        r.ok(201)["id"].as_str().expect("tool id").to_string()
    }
}

pub struct Tenant {
    pub org: String,
    pub key: String,
    pub deployment: String,
    pub provider: String,
}

/// Every key in a Redis, by SCAN (for tests that audit what was written there).
pub async fn scan_keys<K: deadpool_redis::redis::FromRedisValue>(
    conn: &mut impl deadpool_redis::redis::aio::ConnectionLike,
) -> Vec<K> {
    let mut keys = Vec::new();
    let mut cursor = 0u64;
    loop {
        let (next, batch): (u64, Vec<K>) = deadpool_redis::redis::cmd("SCAN")
            .arg(cursor)
            .arg("COUNT")
            .arg(1000)
            .query_async(conn)
            .await
            .unwrap();
        keys.extend(batch);
        if next == 0 {
            return keys;
        }
        cursor = next;
    }
}
