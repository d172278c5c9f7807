//! Redis must not evict loopgate's keys before their TTL (docs/operations.md, "Redis";
//! `kv::eviction`): at startup its `maxmemory-policy` is read once, as Redis
//! reports it, and an evicting one is told apart from `noeviction`; a Redis that refuses
//! `CONFIG` (managed ones often do) keeps nobody from starting and is no outage. Each
//! test runs a Redis of its own.

use std::sync::{Arc, Mutex};

use loopgate::kv::eviction::{self, Eviction, MemoryPolicy};
use reqwest::Method;

use crate::support::helpers::{fresh_database, spawn_with, test_settings};
use crate::support::services;

/// The log lines written on this thread (a `#[tokio::test]` runs its tasks on one).
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<u8>>>);

impl Logs {
    /// Takes what was written since the last take.
    fn take(&self) -> String {
        String::from_utf8(std::mem::take(&mut *self.0.lock().unwrap())).unwrap()
    }
}

impl std::io::Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Logs {
    type Writer = Logs;
    fn make_writer(&'a self) -> Logs {
        self.clone()
    }
}

/// A connection without the client's default timeouts: nothing here depends on timing
/// (the app's own read at startup is bounded, and logs either way).
async fn unhurried(url: &str) -> loopgate::kv::Redis {
    let config = redis::aio::ConnectionManagerConfig::new()
        .set_connection_timeout(None)
        .set_response_timeout(None);
    loopgate::kv::Redis::new(redis::Client::open(url).unwrap(), config).unwrap()
}

#[tokio::test]
async fn the_eviction_policy_is_read_and_a_refused_config_is_tolerated() {
    let Some(redis) = services::require_redis_server().await else {
        return;
    };
    let logs = Logs::default();
    let _logging = tracing::subscriber::set_default(
        tracing_subscriber::fmt()
            .with_writer(logs.clone())
            .with_ansi(false)
            .with_max_level(tracing::Level::INFO)
            .finish(),
    );
    let conn = unhurried(&redis.url()).await;
    // redis-server's own default
    let read = eviction::read(&conn).await.unwrap();
    assert_eq!(read.policy, "noeviction");
    assert_eq!(eviction::report(Ok(read)), Some(Eviction::Never));
    assert_eq!(logs.take(), "", "noeviction is nothing to warn about");

    let mut admin = conn.clone();
    let () = redis::pipe()
        .cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory-policy")
        .arg("volatile-lru")
        .ignore()
        .cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg("104857600")
        .ignore()
        .query_async(&mut admin)
        .await
        .unwrap();
    let read = eviction::read(&conn).await.unwrap();
    let expected = MemoryPolicy {
        policy: "volatile-lru".into(),
        maxmemory: 104_857_600,
    };
    assert_eq!(read, expected);
    assert_eq!(eviction::report(Ok(read)), Some(Eviction::Evicts));
    let warned = logs.take();
    assert!(
        warned.contains("WARN") && warned.contains("maxmemory-policy is volatile-lru"),
        "{warned}"
    );

    // a user that may run anything but CONFIG, as on a managed Redis
    let () = redis::cmd("ACL")
        .arg("SETUSER")
        .arg("app")
        .arg("on")
        .arg(">app-password-1")
        .arg("~*")
        .arg("&*")
        .arg("+@all")
        .arg("-config")
        .query_async(&mut admin)
        .await
        .unwrap();
    let url = format!("redis://app:app-password-1@127.0.0.1:{}", redis.port);
    let limited = unhurried(&url).await;
    let refused = eviction::read(&limited).await;
    assert!(
        refused
            .as_ref()
            .is_err_and(|e| e.to_string().contains("no permissions")),
        "{refused:?}"
    );
    assert_eq!(eviction::report(refused), None);
    let told = logs.take();
    assert!(
        told.contains("INFO") && told.contains("could not read Redis' maxmemory-policy"),
        "{told}"
    );
    let mut s = test_settings(fresh_database().await);
    s.redis_url = Some(url.into());
    let app = spawn_with(s).await;
    // it started: the line at startup says so, and it serves
    let started = logs.take();
    assert!(
        started.contains("could not read Redis' maxmemory-policy"),
        "{started}"
    );
    app.call(Method::GET, "/readyz", None, None).await.ok(200);
}
