//! The one rule for a test whose service is missing. `scripts/test` always provides
//! Postgres and Redis, and the machine's `redis-server` and PostgreSQL binaries for the
//! tests that run instances of their own, so a missing one means a broken run, never a
//! reason to pass: the test fails and says what is missing. Only with
//! `LOOPGATE_TEST_ALLOW_MISSING_SERVICES=1` (a machine without them, on purpose) does a
//! test that needs one skip instead, printing why, and a test that runs on the
//! in-process store without Redis runs so. (A test database is needed by every test:
//! without one `helpers` fails whatever this says.)

use crate::support::temp_services::{TempPostgres, TempRedis};

/// Set to `1` to let tests skip (printing why) when a service is missing.
pub const ALLOW_MISSING: &str = "LOOPGATE_TEST_ALLOW_MISSING_SERVICES";

/// Whether this run said missing services are allowed.
pub fn missing_allowed() -> bool {
    std::env::var(ALLOW_MISSING).is_ok_and(|v| v == "1")
}

/// Fails the test because `what` is missing — or, with the opt-out, prints that it goes
/// on without it (`instead`, e.g. "skipped") and returns.
pub fn missing(what: &str, instead: &str) {
    assert!(
        missing_allowed(),
        "{what}: run the tests with scripts/test, which provides it, or set \
         {ALLOW_MISSING}=1 to let tests go without it"
    );
    eprintln!("{instead}: {what} ({ALLOW_MISSING}=1)");
}

fn redis_url_or(instead: &str) -> Option<String> {
    match std::env::var("REDIS_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            missing("REDIS_URL is not set (the shared test Redis)", instead);
            None
        }
    }
}

/// The shared Redis of `scripts/test` (`REDIS_URL`) for a test that needs it; `None`
/// (the test returns, skipped) only with the opt-out.
pub fn require_redis_url() -> Option<String> {
    redis_url_or("skipped")
}

/// The shared Redis for every app a test spawns (`helpers::test_settings`); `None`
/// (the in-process store) only with the opt-out.
pub fn shared_redis_url() -> Option<String> {
    redis_url_or("on the in-process store")
}

/// A Redis of the test's own (`redis-server` on PATH); `None` (skipped) only with the
/// opt-out.
pub async fn require_redis_server() -> Option<TempRedis> {
    let redis = TempRedis::start().await;
    if redis.is_none() {
        missing(
            "redis-server is not installed (a Redis of the test's own)",
            "skipped",
        );
    }
    redis
}

/// A Postgres of the test's own (the binaries under /usr/lib/postgresql); `None`
/// (skipped) only with the opt-out.
pub async fn require_postgres_bins() -> Option<TempPostgres> {
    let pg = TempPostgres::start().await;
    if pg.is_none() {
        missing(
            "no PostgreSQL binaries under /usr/lib/postgresql (a Postgres of the test's own)",
            "skipped",
        );
    }
    pg
}
