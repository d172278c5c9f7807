//! A small key-value store with TTLs for what is ephemeral or shared between
//! replicas (stored results, thread marks, cached datasets): Redis when `REDIS_URL`
//! is set, an in-process map otherwise. Keys are built by callers and always start
//! with the org and thread (or org and scope) they belong to. Large values (written and
//! read in pieces) and the dataset cache's versioned entries: `kv/large.rs`.
//!
//! # Redis unreachable
//! Tool calls keep working: an operation Redis does not answer within its budget (the
//! `redis_timeout_ms` setting, [`Kv::budget`]) runs on this process's own map instead, and for [`RETRY_AFTER_FAILURE`] after a
//! failure Redis is not asked at all (no call waits on a dead server). What is written
//! meanwhile is kept on this replica, and only *stands in* while Redis does not answer:
//! the map is read only while Redis is unreachable (or not configured), and it is emptied
//! the moment Redis answers again (K2), so nothing this replica alone holds is served
//! once every replica can read Redis again. What must outlive the outage and be readable
//! from every replica — stored results and their tombstones — is also written to Postgres
//! by their owner ([`Kv::copies`], `results::stored_results`, K2); the dataset cache is
//! per process meanwhile, and a thread's marks (G5) made meanwhile are this replica's.
//! That is reported, never silent — [`Kv::degraded`] feeds `/readyz` detail, the
//! `_degraded` label of results made meanwhile (see [`DEGRADED_NOTE`]) and the
//! `loopgate_result_store_fallbacks_total` metric.
//!
//! The one exception: a value every replica must read alike (the org's config epoch,
//! `call::agent_memory`) is never taken from or written to the map while Redis is
//! configured — [`Kv::get_shared_and_many`], [`Kv::set_shared`], [`Kv::init_shared`]
//! report "unknown" instead, and the caller does without it; and writing it
//! ([`Kv::set_shared`]) asks Redis even within [`RETRY_AFTER_FAILURE`] of a failure.
//!
//! Every key is meant to live until its TTL: Redis must not evict (`maxmemory-policy
//! noeviction`, checked once at startup: `kv/eviction.rs`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::telemetry::metrics::Metrics;

mod connection;
pub mod eviction;
mod large;

pub use connection::{adopt_this_thread, this_thread_adopted, Redis};

/// Values longer than this are written in pieces ([`Kv::set_large`]).
pub const PIECE_BYTES: usize = 1 << 20;

/// The Redis budget of unit tests (the service's is the `redis_timeout_ms` setting).
#[cfg(test)]
pub(crate) const TEST_BUDGET: Duration = Duration::from_millis(500);
/// The stored results' TTL of unit tests (the service's is `result_ttl_seconds`).
#[cfg(test)]
pub(crate) const TEST_RESULT_TTL: Duration = Duration::from_secs(15 * 60);

/// After a failure, how long Redis is left alone before it is tried again.
pub const RETRY_AFTER_FAILURE: Duration = Duration::from_secs(2);

/// [`Redis`] for `url`, connecting on first use (so a process starts while Redis is down);
/// connecting and each reply are bounded by `budget` (`redis_timeout_ms`), so no command
/// waits longer. Commands are multiplexed (nothing is checked out or pinged per use), and
/// it reconnects by itself after Redis went away.
pub fn connect(url: &str, budget: Duration) -> anyhow::Result<Redis> {
    let config = redis::aio::ConnectionManagerConfig::new()
        .set_connection_timeout(Some(budget))
        .set_response_timeout(Some(budget))
        .set_number_of_retries(1)
        .set_max_delay(Duration::from_millis(100));
    Ok(Redis::new(redis::Client::open(url)?, config)?)
}

/// What a result made while Redis is unreachable says about itself.
pub const DEGRADED_NOTE: &str = "The shared result store (Redis) is unreachable: this result was \
     not read from or written to the shared dataset cache; its _resultId is kept in the \
     database instead, readable from every server.";

#[derive(Debug, thiserror::Error)]
#[error("the result store is unavailable")]
pub struct KvError(#[source] pub(crate) anyhow::Error);

/// What [`Kv::set_many_reading`] read, and whether Redis took its writes.
pub struct Read {
    pub heads: Vec<Option<Vec<u8>>>,
    pub many: Vec<Option<String>>,
    pub in_redis: bool,
}

#[derive(Clone)]
pub struct Kv {
    redis: Option<Redis>,
    local: Arc<Mutex<Memory>>,
    health: Arc<Health>,
    /// The longest one operation waits for Redis before using the in-process map.
    budget: Duration,
    /// How long a stored result (G3) and what is read with it live: `result_ttl_seconds`
    /// (see `results::stored_results`; carried here because every one of them is written
    /// here).
    result_ttl: Duration,
    /// K2: where stored results go too while Redis does not answer ([`Kv::copies`]).
    copies: Option<sqlx::PgPool>,
}

#[derive(Default)]
pub struct Memory {
    entries: HashMap<String, (Instant, String)>,
    writes: u64,
}

impl Memory {
    fn purge(&mut self) {
        let now = Instant::now();
        self.entries.retain(|_, (exp, _)| *exp > now);
    }

    fn live(&self, key: &str) -> Option<&String> {
        self.entries
            .get(key)
            .filter(|(exp, _)| *exp > Instant::now())
            .map(|(_, v)| v)
    }

    /// The first `len` bytes of a live value.
    fn head(&self, key: &str, len: usize) -> Option<Vec<u8>> {
        self.live(key)
            .map(|v| v.as_bytes()[..len.min(v.len())].to_vec())
    }

    fn set(&mut self, key: &str, value: String, ttl: Duration) {
        self.writes += 1;
        if self.writes.is_multiple_of(256) {
            self.purge();
        }
        self.entries
            .insert(key.to_string(), (Instant::now() + ttl, value));
    }
}

/// Whether Redis answered last time, and since when it has not.
#[derive(Default)]
struct Health {
    degraded: AtomicBool,
    /// Milliseconds (process clock) before which Redis is not tried again.
    skip_until_ms: AtomicU64,
    metrics: Option<Arc<Metrics>>,
}

fn now_ms() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_millis() as u64
}

fn ms(d: Duration) -> u64 {
    d.as_millis().max(1) as u64
}

impl Kv {
    /// `budget`: the longest one operation waits for Redis (`redis_timeout_ms`);
    /// `result_ttl`: how long stored results live (`result_ttl_seconds`).
    pub fn new(
        redis: Option<Redis>,
        metrics: Option<Arc<Metrics>>,
        budget: Duration,
        result_ttl: Duration,
    ) -> Self {
        Kv {
            redis,
            local: Arc::default(),
            health: Arc::new(Health {
                metrics,
                ..Health::default()
            }),
            budget,
            result_ttl,
            copies: None,
        }
    }

    /// K2: with Postgres (`pool`) to keep what must be readable from every replica while
    /// Redis does not answer (`store::result_copies`).
    pub fn with_copies(mut self, pool: sqlx::PgPool) -> Self {
        self.copies = Some(pool);
        self
    }

    /// K2: the Postgres pool of durable copies, when configured (with Redis).
    pub fn copies(&self) -> Option<&sqlx::PgPool> {
        self.copies.as_ref().filter(|_| self.redis.is_some())
    }

    /// Whether this process's map stands in for Redis now: Redis is not configured, or did
    /// not answer its last operation. Otherwise the map is not read (K2).
    pub fn standing_in(&self) -> bool {
        self.redis.is_none() || self.degraded()
    }

    /// How long a stored result lives (G3, `result_ttl_seconds`).
    pub fn result_ttl(&self) -> Duration {
        self.result_ttl
    }

    /// The longest one operation waits for Redis before using the in-process map.
    pub fn budget(&self) -> Duration {
        self.budget
    }

    /// Redis is configured but did not answer the last operation: writes stay on this
    /// replica and the dataset cache is per process until it does.
    pub fn degraded(&self) -> bool {
        self.health.degraded.load(Ordering::Relaxed)
    }

    /// Asks Redis now (for `/readyz`), whatever the last failure; `true` when it answers
    /// or is not configured. Updates [`Kv::degraded`].
    pub async fn probe(&self) -> bool {
        let Some(pool) = &self.redis else {
            return true;
        };
        let ping = async {
            let mut c = pool.clone();
            redis::cmd("PING").query_async::<String>(&mut c).await?;
            anyhow::Ok(())
        };
        let ok = matches!(tokio::time::timeout(self.budget, ping).await, Ok(Ok(())));
        self.answered(ok);
        ok
    }

    fn answered(&self, ok: bool) {
        let h = &self.health;
        if ok {
            h.skip_until_ms.store(0, Ordering::Relaxed);
            if h.degraded.swap(false, Ordering::Relaxed) {
                // K2: what this replica kept alone is dropped once Redis answers again
                if let Ok(mut m) = self.local.lock() {
                    m.entries.clear();
                }
                tracing::info!("Redis answers again: what was kept in this process is dropped");
            }
            return;
        }
        if !h.degraded.swap(true, Ordering::Relaxed) {
            tracing::warn!("Redis is unreachable: stored results and the dataset cache are kept in this process until it answers");
        }
        h.skip_until_ms
            .store(now_ms() + ms(RETRY_AFTER_FAILURE), Ordering::Relaxed);
        if let Some(m) = &h.metrics {
            Metrics::inc(&m.kv_fallbacks);
        }
    }

    /// Runs `op` on Redis within the budget: `None` when there is no Redis, it failed
    /// just now, or it does not answer (then the caller uses the in-process map).
    async fn redis<T: redis::FromRedisValue>(&self, op: Op<'_>) -> Option<T> {
        self.redis_asking(op, false).await
    }

    /// [`Kv::redis`]; with `even_after_failure`, Redis is asked within
    /// [`RETRY_AFTER_FAILURE`] of a failure too (for a write nothing can stand in for).
    async fn redis_asking<T: redis::FromRedisValue>(
        &self,
        op: Op<'_>,
        even_after_failure: bool,
    ) -> Option<T> {
        let pool = self.redis.as_ref()?;
        let skipping = now_ms() < self.health.skip_until_ms.load(Ordering::Relaxed);
        if skipping && !even_after_failure {
            if let Some(m) = &self.health.metrics {
                Metrics::inc(&m.kv_fallbacks);
            }
            return None;
        }
        let run = async {
            let mut c = pool.clone();
            let v = match op {
                Op::Cmd(cmd) => cmd.query_async::<T>(&mut c).await?,
                Op::Pipe(pipe) => pipe.query_async::<T>(&mut c).await?,
            };
            anyhow::Ok(v)
        };
        let out = match tokio::time::timeout(self.budget, run).await {
            Ok(Ok(v)) => Some(v),
            Ok(Err(e)) => {
                tracing::debug!(error = %e, "Redis operation failed");
                None
            }
            Err(_) => None,
        };
        self.answered(out.is_some());
        out
    }

    fn local(&self) -> Result<std::sync::MutexGuard<'_, Memory>, KvError> {
        self.local
            .lock()
            .map_err(|_| KvError(anyhow::anyhow!("poisoned")))
    }

    pub async fn set(&self, key: &str, value: &str, ttl: Duration) -> Result<(), KvError> {
        let mut cmd = redis::cmd("SET");
        cmd.arg(key).arg(value).arg("PX").arg(ms(ttl));
        match self.redis::<()>(Op::Cmd(&cmd)).await {
            Some(()) => {
                self.local()?.entries.remove(key);
            }
            None => self.local()?.set(key, value.to_string(), ttl),
        }
        Ok(())
    }

    /// Several [`Kv::set`]s in one round trip.
    pub async fn set_many(&self, items: &[(&str, &str, Duration)]) -> Result<(), KvError> {
        self.set_many_reading(&[], &[], items).await.map(drop)
    }

    /// [`Kv::set_many`] with, in the same round trip (one pipeline, the reads first), the
    /// first `len` bytes of each of `heads`' keys as [`Kv::get_head`] reads them (`None`
    /// when it does not exist) and the values of `many` (one `MGET`; read from Redis only:
    /// `None` when it did not answer); and whether Redis took the writes (else this
    /// process keeps them, and a head is read from it only while it stands in for Redis).
    pub async fn set_many_reading(
        &self,
        heads: &[(&str, usize)],
        many: &[&str],
        items: &[(&str, &str, Duration)],
    ) -> Result<Read, KvError> {
        let mut pipe = redis::pipe();
        for (key, len) in heads {
            pipe.cmd("GETRANGE")
                .arg(*key)
                .arg(0)
                .arg(len.saturating_sub(1));
        }
        if !many.is_empty() {
            pipe.cmd("MGET").arg(many);
        }
        for (key, value, ttl) in items {
            pipe.cmd("SET")
                .arg(*key)
                .arg(*value)
                .arg("PX")
                .arg(ms(*ttl))
                .ignore();
        }
        let answer = match heads.is_empty() && many.is_empty() {
            false => self.redis::<Vec<redis::Value>>(Op::Pipe(&pipe)).await,
            true => self.redis::<()>(Op::Pipe(&pipe)).await.map(|()| Vec::new()),
        };
        let mut m = self.local()?;
        for (key, value, ttl) in items {
            if answer.is_some() {
                m.entries.remove(*key);
            } else {
                m.set(key, value.to_string(), *ttl);
            }
        }
        // an empty reply: no such key in Redis (no value this store writes is empty)
        let stand_in = self.standing_in();
        // kept where every replica reads it: Redis, or this process when it is the only store
        let in_redis = answer.is_some() || self.redis.is_none();
        let mut replies = answer.unwrap_or_default().into_iter();
        let heads = heads
            .iter()
            .map(|(key, len)| {
                let reply = replies
                    .next()
                    .and_then(|v| redis::from_redis_value::<Vec<u8>>(v).ok());
                match reply.filter(|h| !h.is_empty()) {
                    Some(h) => Some(h),
                    None => stand_in.then(|| m.head(key, *len)).flatten(),
                }
            })
            .collect();
        let values = match replies.next() {
            Some(v) => redis::from_redis_value::<Vec<Option<String>>>(v).unwrap_or_default(),
            None => Vec::new(),
        };
        let many = (0..many.len())
            .map(|i| values.get(i).cloned().flatten())
            .collect();
        Ok(Read {
            heads,
            many,
            in_redis,
        })
    }

    pub async fn get(&self, key: &str) -> Result<Option<String>, KvError> {
        let mut cmd = redis::cmd("GET");
        cmd.arg(key);
        if let Some(Some(v)) = self.redis::<Option<String>>(Op::Cmd(&cmd)).await {
            return Ok(Some(v));
        }
        // Redis unreachable: maybe written here meanwhile
        if !self.standing_in() {
            return Ok(None);
        }
        Ok(self.local()?.live(key).cloned())
    }

    /// [`Kv::get`] of several keys in one round trip (`MGET`), in the order given.
    pub async fn get_many(&self, keys: &[&str]) -> Result<Vec<Option<String>>, KvError> {
        let mut cmd = redis::cmd("MGET");
        for key in keys {
            cmd.arg(*key);
        }
        let found = self
            .redis::<Vec<Option<String>>>(Op::Cmd(&cmd))
            .await
            .filter(|v| v.len() == keys.len())
            .unwrap_or_else(|| vec![None; keys.len()]);
        let stand_in = self.standing_in();
        let m = self.local()?;
        Ok(found
            .into_iter()
            .zip(keys)
            .map(|(v, key)| v.or_else(|| stand_in.then(|| m.live(key).cloned()).flatten()))
            .collect())
    }

    /// `shared` and `keys` in one round trip (`MGET`): `shared`'s value as every replica
    /// sees it — `None` when that is unknown, Redis being configured but not answering
    /// (this process's own map never stands in for it) — and the values of `keys` as
    /// [`Kv::get_many`] reads them.
    pub async fn get_shared_and_many(
        &self,
        shared: &str,
        keys: &[&str],
    ) -> Result<(Option<Option<String>>, Vec<Option<String>>), KvError> {
        let mut cmd = redis::cmd("MGET");
        cmd.arg(shared);
        for key in keys {
            cmd.arg(*key);
        }
        let answer = self
            .redis::<Vec<Option<String>>>(Op::Cmd(&cmd))
            .await
            .filter(|v| v.len() == keys.len() + 1);
        let stand_in = self.standing_in();
        let m = self.local()?;
        let (shared, found) = match answer {
            Some(mut v) => {
                let first = v.remove(0);
                (Some(first), v)
            }
            None if self.redis.is_none() => (Some(m.live(shared).cloned()), vec![None; keys.len()]),
            None => (None, vec![None; keys.len()]),
        };
        let values = found
            .into_iter()
            .zip(keys)
            .map(|(v, key)| v.or_else(|| stand_in.then(|| m.live(key).cloned()).flatten()))
            .collect();
        Ok((shared, values))
    }

    /// The first `len` bytes of a value (`GETRANGE`): a reply of `len` bytes however large
    /// the value is. `None` when the key does not exist. Bytes, not text: the cut may fall
    /// inside a character.
    pub async fn get_head(&self, key: &str, len: usize) -> Result<Option<Vec<u8>>, KvError> {
        let mut cmd = redis::cmd("GETRANGE");
        cmd.arg(key).arg(0).arg(len.saturating_sub(1));
        // an empty reply: no such key (no value this store writes is empty)
        if let Some(v) = self.redis::<Vec<u8>>(Op::Cmd(&cmd)).await {
            if !v.is_empty() {
                return Ok(Some(v));
            }
        }
        if !self.standing_in() {
            return Ok(None);
        }
        Ok(self.local()?.head(key, len))
    }

    pub async fn del(&self, key: &str) -> Result<(), KvError> {
        self.del_many(&[key]).await
    }

    /// [`Kv::del`] of several keys in one command (`DEL k1 k2 …`), one round trip.
    pub async fn del_many(&self, keys: &[&str]) -> Result<(), KvError> {
        let mut cmd = redis::cmd("DEL");
        for key in keys {
            cmd.arg(*key);
        }
        let _ = self.redis::<()>(Op::Cmd(&cmd)).await;
        let mut m = self.local()?;
        for key in keys {
            m.entries.remove(*key);
        }
        Ok(())
    }

    /// Sets `key` only if it does not exist; `true` when this call set it.
    pub async fn set_nx(&self, key: &str, value: &str, ttl: Duration) -> Result<bool, KvError> {
        let mut cmd = redis::cmd("SET");
        cmd.arg(key).arg(value).arg("NX").arg("PX").arg(ms(ttl));
        if let Some(reply) = self.redis::<redis::Value>(Op::Cmd(&cmd)).await {
            // `OK` when set, nil when the key already existed
            return Ok(matches!(reply, redis::Value::Okay)
                || matches!(&reply, redis::Value::SimpleString(s) if s == "OK"));
        }
        let mut m = self.local()?;
        if m.live(key).is_some() {
            return Ok(false);
        }
        m.set(key, value.to_string(), ttl);
        Ok(true)
    }

    /// [`Kv::set`] of a value every replica must read alike: `false` when Redis is
    /// configured and did not take it (then nothing is written, not even here — the value
    /// replicas read is Redis' own, [`Kv::get_shared_and_many`]). Redis is asked even
    /// within [`RETRY_AFTER_FAILURE`] of a failure: one slow command must not leave other
    /// replicas unaware of a write for that long (the org's config epoch bump,
    /// `call::agent_memory`).
    pub async fn set_shared(&self, key: &str, value: &str, ttl: Duration) -> Result<bool, KvError> {
        if self.redis.is_none() {
            self.local()?.set(key, value.to_string(), ttl);
            return Ok(true);
        }
        let mut cmd = redis::cmd("SET");
        cmd.arg(key).arg(value).arg("PX").arg(ms(ttl));
        Ok(self.redis_asking::<()>(Op::Cmd(&cmd), true).await.is_some())
    }

    /// Sets `key` to `value` unless it has a value, in one round trip; the value it has
    /// then (this one, or the one written first), as every replica reads it: `None` when
    /// Redis is configured and did not answer.
    pub async fn init_shared(
        &self,
        key: &str,
        value: &str,
        ttl: Duration,
    ) -> Result<Option<String>, KvError> {
        if self.redis.is_none() {
            let mut m = self.local()?;
            if let Some(v) = m.live(key) {
                return Ok(Some(v.clone()));
            }
            m.set(key, value.to_string(), ttl);
            return Ok(Some(value.to_string()));
        }
        let mut pipe = redis::pipe();
        pipe.cmd("SET")
            .arg(key)
            .arg(value)
            .arg("NX")
            .arg("PX")
            .arg(ms(ttl))
            .ignore()
            .cmd("GET")
            .arg(key);
        Ok(self
            .redis::<(Option<String>,)>(Op::Pipe(&pipe))
            .await
            .and_then(|(v,)| v))
    }

    /// Gives `key` a new TTL if it still holds `value` (its owner's token), in one round
    /// trip; `false` when it holds something else or nothing (the lease ran out and another
    /// took it, or it was released). With `ttl` zero, deletes it instead (on the same
    /// condition): a lease's owner gives it back without touching another's.
    pub async fn renew_if(&self, key: &str, value: &str, ttl: Duration) -> Result<bool, KvError> {
        const SCRIPT: &str = "if redis.call('GET', KEYS[1]) == ARGV[1] then \
            if ARGV[2] == '0' then return redis.call('DEL', KEYS[1]) end \
            return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end";
        let millis = if ttl.is_zero() { 0 } else { ms(ttl) };
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(SCRIPT).arg(1).arg(key).arg(value).arg(millis);
        if let Some(n) = self.redis::<i64>(Op::Cmd(&cmd)).await {
            // a key this replica kept while Redis was down is this one's too
            let mut m = self.local()?;
            if m.live(key).is_some_and(|v| v == value) && millis == 0 {
                m.entries.remove(key);
            }
            return Ok(n == 1);
        }
        let mut m = self.local()?;
        if m.live(key).is_none_or(|v| v != value) {
            return Ok(false);
        }
        if millis == 0 {
            m.entries.remove(key);
        } else {
            m.set(key, value.to_string(), ttl);
        }
        Ok(true)
    }

    /// Atomically increments a counter, setting its TTL; returns the new value.
    pub async fn incr(&self, key: &str, ttl: Duration) -> Result<i64, KvError> {
        let mut pipe = redis::pipe();
        pipe.atomic()
            .cmd("INCR")
            .arg(key)
            .cmd("PEXPIRE")
            .arg(key)
            .arg(ms(ttl));
        if let Some((n, _)) = self.redis::<(i64, i64)>(Op::Pipe(&pipe)).await {
            return Ok(n);
        }
        let mut m = self.local()?;
        let cur = m.live(key).and_then(|v| v.parse::<i64>().ok()).unwrap_or(0);
        m.set(key, (cur + 1).to_string(), ttl);
        Ok(cur + 1)
    }
}

/// One Redis round trip.
#[derive(Clone, Copy)]
enum Op<'a> {
    Cmd(&'a redis::Cmd),
    Pipe(&'a redis::Pipeline),
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// `key` as Redis itself holds it.
    async fn get(conn: &mut Redis, key: &str) -> Option<String> {
        redis::cmd("GET").arg(key).query_async(conn).await.unwrap()
    }

    /// Several keys go in one `DEL` (a stale hit's result, `results::stored_results::put`):
    /// none of them is left, in Redis or in this process's map (a key written while Redis
    /// was not answering, deleted while it still does not).
    #[tokio::test]
    async fn del_many_leaves_none_of_the_keys() {
        let Some(url) = crate::testing::redis_url() else {
            return;
        };
        let mut conn = connect(&url, TEST_BUDGET).unwrap();
        let kv = Kv::new(Some(conn.clone()), None, TEST_BUDGET, TEST_RESULT_TTL);
        let org = format!("lg:test_{}", crate::crypto::random_token(12));
        let keys = [0, 1, 2].map(|i| format!("{org}:t:res:{i}"));
        let ttl = Duration::from_secs(60);
        kv.set(&keys[0], "a", ttl).await.unwrap();
        kv.set(&keys[1], "b", ttl).await.unwrap();
        assert_eq!(get(&mut conn, &keys[1]).await.as_deref(), Some("b"));
        // written here while Redis did not answer: read here only meanwhile
        kv.answered(false);
        kv.local().unwrap().set(&keys[2], "c".to_owned(), ttl);
        assert_eq!(kv.get(&keys[2]).await.unwrap().as_deref(), Some("c"));
        kv.answered(true);
        kv.local().unwrap().set(&keys[2], "c".to_owned(), ttl);
        kv.answered(false);
        kv.del_many(&[&keys[0], &keys[1], &keys[2]]).await.unwrap();
        kv.answered(true);
        kv.del_many(&[&keys[0], &keys[1]]).await.unwrap();
        for key in &keys {
            assert_eq!(get(&mut conn, key).await, None, "{key}");
            assert_eq!(kv.get(key).await.unwrap(), None, "{key}");
        }
    }

    /// K2: this process's map stands in for Redis only while Redis does not answer, and
    /// is emptied the moment it answers again: nothing only this replica holds is served
    /// once every replica reads Redis again.
    #[tokio::test]
    async fn k2_the_map_stands_in_only_while_redis_does_not_answer() {
        let Some(url) = crate::testing::redis_url() else {
            return;
        };
        let conn = connect(&url, TEST_BUDGET).unwrap();
        let kv = Kv::new(Some(conn), None, TEST_BUDGET, TEST_RESULT_TTL);
        let key = format!("lg:test_{}:t:res:x", crate::crypto::random_token(12));
        let ttl = Duration::from_secs(60);
        kv.answered(false);
        // not taken by Redis (it is left alone after a failure): kept here, read here
        let shared = kv
            .set_many_reading(&[], &[], &[(&key, "v", ttl)])
            .await
            .unwrap()
            .in_redis;
        assert!(!shared);
        assert!(kv.standing_in());
        assert_eq!(kv.get(&key).await.unwrap().as_deref(), Some("v"));
        assert_eq!(kv.get_head(&key, 1).await.unwrap(), Some(b"v".to_vec()));
        // Redis answers: the map is not read, and is emptied
        assert!(kv.probe().await);
        assert!(!kv.standing_in());
        assert_eq!(kv.get(&key).await.unwrap(), None);
        assert_eq!(kv.get_many(&[&key]).await.unwrap(), vec![None]);
        assert_eq!(kv.get_head(&key, 1).await.unwrap(), None);
        assert!(kv.local().unwrap().live(&key).is_none(), "emptied");
        let shared = kv
            .set_many_reading(&[], &[], &[(&key, "w", ttl)])
            .await
            .unwrap()
            .in_redis;
        assert!(shared);
        kv.del(&key).await.unwrap();
    }

    /// A value every replica must read alike (the org's config epoch) is written even
    /// while this process leaves Redis alone after a failure: one slow command on the
    /// replica that took a write must not keep the others from learning of it.
    #[tokio::test]
    async fn a_shared_value_is_written_even_right_after_a_failure() {
        let Some(url) = crate::testing::redis_url() else {
            return;
        };
        let mut conn = connect(&url, TEST_BUDGET).unwrap();
        let kv = Kv::new(Some(conn.clone()), None, TEST_BUDGET, TEST_RESULT_TTL);
        let key = format!("lg:test_{}:cfg", crate::crypto::random_token(12));
        // as after a command that did not answer within the budget
        kv.answered(false);
        assert!(kv.degraded());
        let ttl = Duration::from_secs(60);
        assert!(kv.set_shared(&key, "e1", ttl).await.unwrap());
        assert_eq!(get(&mut conn, &key).await.as_deref(), Some("e1"));
        // other operations still leave it alone meanwhile (the map stands in)
        kv.answered(false);
        kv.set(&key, "local", ttl).await.unwrap();
        assert_eq!(get(&mut conn, &key).await.as_deref(), Some("e1"));
        let _: () = redis::cmd("DEL")
            .arg(&key)
            .query_async(&mut conn)
            .await
            .unwrap();
    }
}
