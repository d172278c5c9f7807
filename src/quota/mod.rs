//! Quotas shared by every replica: a provider's `rate_limit`, an org's requests per
//! second and its concurrent walks hold for all replicas together, not per process.
//!
//! # Contract
//! - Rates are leased: one `EVAL` of a small GCRA script ([`Shared::lease`]) takes a few
//!   permits at once (never more than the burst allows), and the replica spends them
//!   without another round trip until they are spent or one emission interval (at least
//!   10 ms) old; the exact bound on what that can over-admit across N replicas is in
//!   [`lease`] (`+0` for burst 1, at most `+1` in any window for rates up to 100/s). A
//!   concurrency slot ([`Shared::acquire_slot`]) is one `EVAL`; a replica may hand a slot
//!   it just freed to its next walk instead (`walk::walk_slots`). Each script is
//!   atomic across replicas and runs on Redis' own clock (`TIME`), so replicas' clock
//!   skew does not matter.
//! - The in-process limiters (governor, semaphores) stay in front at the full configured
//!   value: a replica never sends more than the quota even alone, and a burst is refused
//!   locally before it costs a round trip.
//! - Redis unreachable (or slower than [`REDIS_BUDGET`]): the decision is
//!   [`Decision::Unavailable`] and callers fall back to their per-process limiter at the
//!   configured value divided by the replica count ([`Shared::share`]), so N replicas
//!   together still stay within the quota. The fallback is reported: `/readyz` detail
//!   ([`Shared::degraded`]) and the `loopgate_quota_fallbacks_total` metric.
//! - Without `REDIS_URL` (one machine) there is nothing to share: local limiters only.
//!
//! Never: a Redis failure never fails a request by itself, and a denied rate check
//! consumes nothing.

pub mod lease;
pub mod org;
mod scripts;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::kv::Redis;

use crate::telemetry::metrics::Metrics;

/// The longest a quota decision waits for Redis before falling back (fixed: a request
/// waits on it before any work; the connection's own reply timeout, `redis_timeout_ms`,
/// cuts it shorter when that is less).
pub const REDIS_BUDGET: Duration = Duration::from_millis(250);

/// What Redis decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Go ahead (the permit or slot is taken).
    Allowed,
    /// Not before this long (nothing was taken).
    Wait(Duration),
    /// Redis could not decide: use the per-process fallback.
    Unavailable,
}

/// What one lease request got from Redis ([`Shared::lease`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grant {
    /// This many permits (at least one), counted against the quota now.
    Granted(u32),
    /// None before this long (nothing was taken).
    Denied(Duration),
    /// Redis could not decide: use the per-process fallback.
    Unavailable,
}

/// The replicas' common quota state, or `None` inside when there is no Redis.
pub struct Shared {
    redis: Option<Redis>,
    replicas: u32,
    degraded: AtomicBool,
    metrics: Arc<Metrics>,
}

impl Shared {
    pub fn new(redis: Option<Redis>, replicas: u32, metrics: Arc<Metrics>) -> Arc<Self> {
        Arc::new(Self {
            redis,
            replicas: replicas.max(1),
            degraded: AtomicBool::new(false),
            metrics,
        })
    }

    /// Whether quotas are shared through Redis at all (`REDIS_URL` set).
    pub fn is_shared(&self) -> bool {
        self.redis.is_some()
    }

    /// The configured replica count (fallback limits are divided by it).
    pub fn replicas(&self) -> u32 {
        self.replicas
    }

    /// This replica's share of a quota while Redis is unreachable (at least 1).
    pub fn share(&self, quota: u32) -> u32 {
        (quota / self.replicas).max(1)
    }

    /// The same for a rate (requests per second).
    pub fn share_rate(&self, rps: f64) -> f64 {
        rps / f64::from(self.replicas)
    }

    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Whether the last quota decision had to fall back to per-process limits.
    pub fn degraded(&self) -> bool {
        self.degraded.load(Ordering::Relaxed)
    }

    fn record(&self, down: bool) {
        self.degraded.store(down, Ordering::Relaxed);
        if down {
            Metrics::inc(&self.metrics.quota_fallbacks);
        }
    }

    /// GCRA: up to `want` permits at once against `rps` with `burst` under `key` (all
    /// replicas together); as many as the quota has now, at least one, else none and how
    /// long until one. [`lease::RateLease`] is what spends them.
    pub async fn lease(&self, key: &str, rps: f64, burst: u32, want: u32) -> Grant {
        let Some(pool) = &self.redis else {
            return Grant::Granted(want.max(1));
        };
        if !(rps.is_finite() && rps > 0.0) {
            return Grant::Granted(want.max(1));
        }
        let interval_us = (1e6 / rps).ceil().max(1.0) as u64;
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(scripts::GCRA)
            .arg(1)
            .arg(key)
            .arg(interval_us)
            .arg(burst.max(1))
            .arg(want.max(1));
        let reply: Option<i64> = run(pool, &cmd).await;
        let grant = match reply {
            None => Grant::Unavailable,
            Some(n) if n > 0 => Grant::Granted(u32::try_from(n).unwrap_or(u32::MAX)),
            Some(us) => Grant::Denied(Duration::from_micros(us.unsigned_abs().max(1))),
        };
        self.record(grant == Grant::Unavailable);
        grant
    }

    /// Takes one of `max` slots under `key` for `member`, leased for `lease` (a crashed
    /// replica's slots come back when their lease runs out); `Allowed` says how many slots
    /// were held then, this one included.
    pub async fn acquire_slot(
        &self,
        key: &str,
        member: &str,
        max: u32,
        lease: Duration,
    ) -> (Decision, u32) {
        let Some(pool) = &self.redis else {
            return (Decision::Allowed, 1);
        };
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(scripts::SLOT)
            .arg(1)
            .arg(key)
            .arg(member)
            .arg(max)
            .arg(lease.as_micros() as u64);
        let reply: Option<i64> = run(pool, &cmd).await;
        self.record(reply.is_none());
        match reply {
            None => (Decision::Unavailable, 0),
            Some(n) if n > 0 => (Decision::Allowed, u32::try_from(n).unwrap_or(u32::MAX)),
            Some(_) => (Decision::Wait(Duration::from_secs(1)), max),
        }
    }

    /// Gives a slot back (best effort: the lease frees it anyway).
    pub async fn release_slot(&self, key: &str, member: &str) {
        if let Some(pool) = &self.redis {
            let mut cmd = redis::cmd("ZREM");
            cmd.arg(key).arg(member);
            let _: Option<i64> = run(pool, &cmd).await;
        }
    }
}

/// One command within [`REDIS_BUDGET`]; `None` when Redis did not answer in time.
async fn run<T: redis::FromRedisValue>(pool: &Redis, cmd: &redis::Cmd) -> Option<T> {
    let work = async {
        let mut conn = pool.clone();
        cmd.query_async::<T>(&mut conn).await.ok()
    };
    tokio::time::timeout(REDIS_BUDGET, work)
        .await
        .ok()
        .flatten()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
