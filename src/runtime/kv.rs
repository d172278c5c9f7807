//! A small key-value store with TTLs for what is ephemeral or shared between
//! replicas (stored results, thread marks, cached datasets): Redis when `REDIS_URL`
//! is set, an in-process map otherwise. Keys are built by callers and always start
//! with the org and thread (or org and scope) they belong to.
//!
//! # Redis unreachable
//! Tool calls keep working: an operation Redis does not answer within [`REDIS_BUDGET`]
//! runs on this process's own map instead, and for [`RETRY_AFTER_FAILURE`] after a
//! failure Redis is not asked at all (no call waits on a dead server). What is written
//! meanwhile is kept on this replica only: its stored results are readable here, the
//! dataset cache is per process. That is reported, never silent — [`Kv::degraded`] feeds
//! `/readyz` detail, the `_degraded` label of results made meanwhile (see
//! [`DEGRADED_NOTE`]) and the `loopgate_result_store_fallbacks_total` metric. Once Redis
//! answers again it is used again; a key missing there is still looked up in the map
//! (until it expires), and writing or deleting a key in Redis drops the map's copy, so
//! nothing written during the outage is lost or served stale.
//!
//! The one exception: a value every replica must read alike (the org's config epoch,
//! `runtime::agent_memory`) is never taken from or written to the map while Redis is
//! configured — [`Kv::get_shared_and_many`], [`Kv::set_shared`], [`Kv::init_shared`]
//! report "unknown" instead, and the caller does without it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::metrics::Metrics;

/// Values longer than this are written in pieces ([`Kv::set_large`]).
pub const PIECE_BYTES: usize = 1 << 20;

/// The longest one operation waits for Redis before using the in-process map.
pub const REDIS_BUDGET: Duration = Duration::from_millis(500);
/// After a failure, how long Redis is left alone before it is tried again.
pub const RETRY_AFTER_FAILURE: Duration = Duration::from_secs(2);

/// The one Redis connection of the process, shared by every task (commands are
/// multiplexed on it, nothing is checked out or pinged per use); it reconnects by itself
/// after Redis went away. Cheap to clone.
pub type Redis = redis::aio::ConnectionManager;

/// [`Redis`] for `url`, connecting on first use (so a process starts while Redis is down);
/// connecting and each reply are bounded by [`REDIS_BUDGET`], so no command waits longer.
pub fn connect(url: &str) -> anyhow::Result<Redis> {
    let config = redis::aio::ConnectionManagerConfig::new()
        .set_connection_timeout(Some(REDIS_BUDGET))
        .set_response_timeout(Some(REDIS_BUDGET))
        .set_number_of_retries(1)
        .set_max_delay(Duration::from_millis(100));
    Ok(Redis::new_lazy_with_config(
        redis::Client::open(url)?,
        config,
    )?)
}

/// What a result made while Redis is unreachable says about itself.
pub const DEGRADED_NOTE: &str = "The shared result store (Redis) is unreachable: this result was \
     not read from or written to the shared dataset cache, and its _resultId is kept on this \
     server only, so a retrieval routed to another server may not find it.";

#[derive(Debug, thiserror::Error)]
#[error("the result store is unavailable")]
pub struct KvError(#[source] pub(crate) anyhow::Error);

#[derive(Clone)]
pub struct Kv {
    redis: Option<Redis>,
    local: Arc<Mutex<Memory>>,
    health: Arc<Health>,
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
    pub fn new(redis: Option<Redis>, metrics: Option<Arc<Metrics>>) -> Self {
        Kv {
            redis,
            local: Arc::default(),
            health: Arc::new(Health {
                metrics,
                ..Health::default()
            }),
        }
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
        let ok = matches!(tokio::time::timeout(REDIS_BUDGET, ping).await, Ok(Ok(())));
        self.answered(ok);
        ok
    }

    fn answered(&self, ok: bool) {
        let h = &self.health;
        if ok {
            h.degraded.store(false, Ordering::Relaxed);
            h.skip_until_ms.store(0, Ordering::Relaxed);
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
        let pool = self.redis.as_ref()?;
        if now_ms() < self.health.skip_until_ms.load(Ordering::Relaxed) {
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
        let out = match tokio::time::timeout(REDIS_BUDGET, run).await {
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

    /// Writes `parts`, one after the other, as the value of `key` in Redis: `SET` of the
    /// first piece with its TTL, then `APPEND`s, each piece at most [`PIECE_BYTES`] and
    /// never concatenated, so the Redis client holds no more than a piece's copy (its
    /// command and the packed command) at a time. `false` when Redis did not take all of
    /// it; then no half value stays there.
    async fn set_in_pieces(&self, key: &str, parts: &[&str], ttl: Duration) -> bool {
        let mut pieces = parts.iter().flat_map(|p| p.as_bytes().chunks(PIECE_BYTES));
        let mut cmd = redis::cmd("SET");
        cmd.arg(key)
            .arg(pieces.next().unwrap_or_default())
            .arg("PX")
            .arg(ms(ttl));
        let mut stored = self.redis::<()>(Op::Cmd(&cmd)).await.is_some();
        for piece in pieces {
            if !stored {
                break;
            }
            let mut cmd = redis::cmd("APPEND");
            cmd.arg(key).arg(piece);
            stored = self.redis::<i64>(Op::Cmd(&cmd)).await.is_some();
        }
        if !stored && self.redis.is_some() {
            let mut cmd = redis::cmd("DEL");
            cmd.arg(key);
            let _ = self.redis::<()>(Op::Cmd(&cmd)).await;
        }
        stored
    }

    /// Writes `parts` in pieces under a key of their own beside `key`, so no reader of
    /// `key` sees half a value; that key's name once Redis took all of it.
    async fn stage(&self, key: &str, parts: &[&str], ttl: Duration) -> Option<String> {
        let staged = format!("{key}:writing:{}", crate::crypto::random_token(8));
        self.set_in_pieces(&staged, parts, ttl)
            .await
            .then_some(staged)
    }

    /// [`Kv::set`] of a large value in pieces ([`PIECE_BYTES`]), so the Redis client never
    /// holds more than a piece's copy of it. Written aside, then renamed into place: a
    /// reader of `key` (a result a resumed walk grows, P10) sees the old value or the
    /// whole new one.
    pub async fn set_large(&self, key: &str, value: &str, ttl: Duration) -> Result<(), KvError> {
        if let Some(staged) = self.stage(key, &[value], ttl).await {
            let mut pipe = redis::pipe();
            pipe.atomic()
                .cmd("RENAME")
                .arg(&staged)
                .arg(key)
                .ignore()
                .cmd("PEXPIRE")
                .arg(key)
                .arg(ms(ttl))
                .ignore();
            if self.redis::<()>(Op::Pipe(&pipe)).await.is_some() {
                self.local()?.entries.remove(key);
                return Ok(());
            }
            self.del(&staged).await?;
        }
        // Redis did not take it: no older value stays there, the whole one is kept here
        self.del(key).await?;
        self.local()?.set(key, value.to_string(), ttl);
        Ok(())
    }

    /// [`Kv::set`] of a value given in `parts` (written one after the other, in pieces,
    /// never concatenated when large) whose first line is a version (digits), keeping the
    /// value it replaces readable under `<key>#<its version>` for at most `retire` (never
    /// longer than it had left): readers that hold the old version's pointer still find
    /// it. Atomic in Redis: a large value is written under a key of its own first, then a
    /// script retires the old value and renames the new one into place, so a reader sees
    /// the old value or the whole new one.
    pub async fn set_versioned(
        &self,
        key: &str,
        parts: &[&str],
        ttl: Duration,
        retire: Duration,
    ) -> Result<(), KvError> {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let published = if len <= PIECE_BYTES {
            let mut cmd = redis::cmd("EVAL");
            cmd.arg(RETIRE_AND_PUT)
                .arg(1)
                .arg(key)
                .arg(ms(ttl))
                .arg(ms(retire))
                .arg(parts.concat());
            self.redis::<i64>(Op::Cmd(&cmd)).await.is_some()
        } else if let Some(staged) = self.stage(key, parts, ttl).await {
            let mut cmd = redis::cmd("EVAL");
            cmd.arg(RETIRE_AND_PUT)
                .arg(2)
                .arg(key)
                .arg(&staged)
                .arg(ms(ttl))
                .arg(ms(retire));
            let renamed = self.redis::<i64>(Op::Cmd(&cmd)).await.is_some();
            if !renamed {
                self.del(&staged).await?;
            }
            renamed
        } else {
            false
        };
        if published {
            self.local()?.entries.remove(key);
            return Ok(());
        }
        let mut m = self.local()?;
        if let Some((expires, old)) = m.entries.remove(key) {
            if let Some((version, _)) = old.split_once('\n') {
                let left = expires.saturating_duration_since(Instant::now());
                let old_key = format!("{key}#{version}");
                m.set(&old_key, old, left.min(retire));
            }
        }
        m.set(key, parts.concat(), ttl);
        Ok(())
    }

    /// Several [`Kv::set`]s in one round trip.
    pub async fn set_many(&self, items: &[(&str, &str, Duration)]) -> Result<(), KvError> {
        self.set_many_reading(None, items).await.map(drop)
    }

    /// [`Kv::set_many`] with, in the same round trip (one pipeline, `GETRANGE` first), the
    /// first `len` bytes of `head`'s key as [`Kv::get_head`] reads them (`None` when it
    /// does not exist).
    pub async fn set_many_reading(
        &self,
        head: Option<(&str, usize)>,
        items: &[(&str, &str, Duration)],
    ) -> Result<Option<Vec<u8>>, KvError> {
        let mut pipe = redis::pipe();
        if let Some((key, len)) = head {
            pipe.cmd("GETRANGE")
                .arg(key)
                .arg(0)
                .arg(len.saturating_sub(1));
        }
        for (key, value, ttl) in items {
            pipe.cmd("SET")
                .arg(*key)
                .arg(*value)
                .arg("PX")
                .arg(ms(*ttl))
                .ignore();
        }
        let answer = match head {
            Some(_) => self.redis::<(Vec<u8>,)>(Op::Pipe(&pipe)).await.map(|h| h.0),
            None => self.redis::<()>(Op::Pipe(&pipe)).await.map(|()| Vec::new()),
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
        Ok(
            head.and_then(|(key, len)| match answer.filter(|h| !h.is_empty()) {
                Some(h) => Some(h),
                None => m.head(key, len),
            }),
        )
    }

    pub async fn get(&self, key: &str) -> Result<Option<String>, KvError> {
        let mut cmd = redis::cmd("GET");
        cmd.arg(key);
        if let Some(Some(v)) = self.redis::<Option<String>>(Op::Cmd(&cmd)).await {
            return Ok(Some(v));
        }
        // not in Redis (or Redis unreachable): maybe written here while it was down
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
        let m = self.local()?;
        Ok(found
            .into_iter()
            .zip(keys)
            .map(|(v, key)| v.or_else(|| m.live(key).cloned()))
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
            .map(|(v, key)| v.or_else(|| m.live(key).cloned()))
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
        Ok(self.local()?.head(key, len))
    }

    /// [`Kv::get`] of a value that may be large (a stored result): a large one is read in
    /// pieces ([`PIECE_BYTES`]) from a copy taken atomically (so a value replaced meanwhile
    /// is read whole, old or new), because the Redis client's buffers grow to the largest
    /// reply and keep that size for the life of the connection. A small one is read in
    /// one round trip, as by `GET`.
    pub async fn get_large(&self, key: &str) -> Result<Option<String>, KvError> {
        let copy = format!("{key}:reading:{}", crate::crypto::random_token(8));
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(GET_OR_COPY)
            .arg(2)
            .arg(key)
            .arg(&copy)
            .arg(PIECE_BYTES)
            .arg(ms(REDIS_BUDGET * 120));
        let len = match self.redis::<redis::Value>(Op::Cmd(&cmd)).await {
            Some(redis::Value::BulkString(v)) => {
                return String::from_utf8(v)
                    .map(Some)
                    .map_err(|e| KvError(e.into()));
            }
            Some(redis::Value::Int(len)) => len as usize,
            // not in Redis (or Redis unreachable): maybe written here while it was down
            _ => return Ok(self.local()?.live(key).cloned()),
        };
        let mut bytes = Vec::with_capacity(len);
        while bytes.len() < len {
            let mut cmd = redis::cmd("GETRANGE");
            let end = (bytes.len() + PIECE_BYTES).min(len) - 1;
            cmd.arg(&copy).arg(bytes.len()).arg(end);
            match self.redis::<Vec<u8>>(Op::Cmd(&cmd)).await {
                Some(piece) if !piece.is_empty() => bytes.extend_from_slice(&piece),
                _ => break,
            }
        }
        self.del(&copy).await?;
        if bytes.len() < len {
            return Err(KvError(anyhow::anyhow!(
                "a stored value went away while it was read"
            )));
        }
        String::from_utf8(bytes)
            .map(Some)
            .map_err(|e| KvError(e.into()))
    }

    pub async fn del(&self, key: &str) -> Result<(), KvError> {
        let mut cmd = redis::cmd("DEL");
        cmd.arg(key);
        let _ = self.redis::<()>(Op::Cmd(&cmd)).await;
        self.local()?.entries.remove(key);
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
    /// replicas read is Redis' own, [`Kv::get_shared_and_many`]).
    pub async fn set_shared(&self, key: &str, value: &str, ttl: Duration) -> Result<bool, KvError> {
        if self.redis.is_none() {
            self.local()?.set(key, value.to_string(), ttl);
            return Ok(true);
        }
        let mut cmd = redis::cmd("SET");
        cmd.arg(key).arg(value).arg("PX").arg(ms(ttl));
        Ok(self.redis::<()>(Op::Cmd(&cmd)).await.is_some())
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

/// [`Kv::set_versioned`] in Redis: KEYS[1] the key; ARGV = ttl ms, retire ms, then the
/// value — or KEYS[2], the key the value was written under, renamed into place.
const RETIRE_AND_PUT: &str = r#"
local version = string.match(redis.call('GETRANGE', KEYS[1], 0, 24), '^(%d+)\n')
if version then
  local old = KEYS[1] .. '#' .. version
  local keep = tonumber(ARGV[2])
  local left = redis.call('PTTL', KEYS[1])
  if left > 0 and left < keep then keep = left end
  redis.call('RENAME', KEYS[1], old)
  redis.call('PEXPIRE', old, keep)
end
if KEYS[2] then
  redis.call('RENAME', KEYS[2], KEYS[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
else
  redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[1])
end
return 1
"#;

/// [`Kv::get_large`] in Redis: KEYS[1] the key, KEYS[2] where to copy it; ARGV = the
/// largest value returned as it is, the copy's TTL ms. The value (nil when absent), or
/// its length once copied.
const GET_OR_COPY: &str = r#"
local len = redis.call('STRLEN', KEYS[1])
if len <= tonumber(ARGV[1]) then
  return redis.call('GET', KEYS[1])
end
redis.call('COPY', KEYS[1], KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return len
"#;

/// One Redis round trip.
#[derive(Clone, Copy)]
enum Op<'a> {
    Cmd(&'a redis::Cmd),
    Pipe(&'a redis::Pipeline),
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// P10, G4: a large value rewritten (a result a resumed walk grows) is never read half
    /// written: every read while its pieces go in sees the old value or the whole new one.
    #[tokio::test]
    async fn g4_a_large_value_is_replaced_whole() {
        let kv = Kv::new(
            std::env::var("REDIS_URL")
                .ok()
                .and_then(|u| connect(&u).ok()),
            None,
        );
        let key = format!("lg:org_test:t:res:{}", crate::crypto::random_token(12));
        let ttl = Duration::from_secs(60);
        let old = "o".repeat(PIECE_BYTES + 1);
        let new = "n".repeat(4 * PIECE_BYTES + 1);
        kv.set_large(&key, &old, ttl).await.unwrap();
        let done = Cell::new(false);
        let write = async {
            kv.set_large(&key, &new, ttl).await.unwrap();
            done.set(true);
        };
        let read = async {
            let mut reads = 0;
            while !done.get() {
                let v = kv.get(&key).await.unwrap().unwrap_or_default();
                assert!(v == old || v == new, "read {} bytes", v.len());
                reads += 1;
            }
            reads
        };
        let ((), reads) = tokio::join!(write, read);
        assert!(reads > 0);
        assert!(kv.get(&key).await.unwrap() == Some(new));
    }

    /// G4: a large stored result is read whole while it is replaced, and reading it leaves
    /// the Redis client's buffers no larger than a few pieces (a plain `GET` of N bytes
    /// keeps about N in the connection for good).
    #[tokio::test]
    async fn g4_a_large_value_is_read_in_pieces_whole() {
        let Some(url) = std::env::var("REDIS_URL").ok() else {
            return; // the in-process store holds no client buffers
        };
        let kv = Kv::new(connect(&url).ok(), None);
        let key = format!("lg:org_test:t:res:{}", crate::crypto::random_token(12));
        let ttl = Duration::from_secs(60);
        let (old, new) = ("o".repeat(7 * PIECE_BYTES + 3), "n".repeat(5 * PIECE_BYTES));
        kv.set_large(&key, &old, ttl).await.unwrap(); // (connected, and no large reply read)
        let mark = crate::testalloc::Mark::now();
        let got = kv.get_large(&key).await.unwrap().unwrap();
        let used = mark.usage();
        assert!(got == old);
        let bound = old.len() as isize + 4 * PIECE_BYTES as isize;
        assert!(used.peak <= bound && used.kept <= bound, "{used:?}");
        drop(got);
        let write = kv.set_large(&key, &new, ttl);
        let read = kv.get_large(&key);
        let (w, r) = tokio::join!(write, read);
        w.unwrap();
        let r = r.unwrap().unwrap();
        assert!(r == old || r == new, "read {} bytes", r.len());
        assert_eq!(kv.get_large("lg:org_test:t:res:none").await.unwrap(), None);
        assert_eq!(
            kv.get_large(&key).await.unwrap().map(|v| v.len()),
            Some(new.len())
        );
    }
}
