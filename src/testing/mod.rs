//! The one rule for a unit test whose Redis or Postgres is missing (the same as `tests/api`'s
//! `support::services`). `scripts/test` always provides Redis (`REDIS_URL`), so a
//! missing one means a broken run, never a reason to pass: the test fails and says so.
//! Only with `LOOPGATE_TEST_ALLOW_MISSING_SERVICES=1` (a machine without Redis, on
//! purpose) does it go without: it skips, or runs on the in-process store where that is
//! what it does without Redis, printing why.

/// Set to `1` to let tests go without a missing service, printing why.
pub(crate) const ALLOW_MISSING: &str = "LOOPGATE_TEST_ALLOW_MISSING_SERVICES";

/// The test Redis (`REDIS_URL`); `None` only with the opt-out.
pub(crate) fn redis_url() -> Option<String> {
    match std::env::var("REDIS_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            missing("REDIS_URL (the test Redis)");
            None
        }
    }
}

/// A service `what` names is missing: fails the test unless the opt-out is set, then
/// prints why the test goes without it.
pub(crate) fn missing(what: &str) {
    let allowed = std::env::var(ALLOW_MISSING).is_ok_and(|v| v == "1");
    assert!(
        allowed,
        "{what} is not set: run the tests with scripts/test, which provides it, or set \
         {ALLOW_MISSING}=1 to let tests go without it"
    );
    eprintln!("without {what}: not set ({ALLOW_MISSING}=1)");
}
