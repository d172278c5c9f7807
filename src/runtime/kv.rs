//! A small key-value store with TTLs for what is ephemeral or shared between
//! replicas (stored results, thread marks, cached datasets): Redis when `REDIS_URL`
//! is set, an in-process map otherwise. Keys are built by callers and always start
//! with the org and thread (or org and scope) they belong to.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use deadpool_redis::redis;

#[derive(Debug, thiserror::Error)]
#[error("the result store is unavailable")]
pub struct KvError(#[source] anyhow::Error);

#[derive(Clone)]
pub enum Kv {
    Redis(deadpool_redis::Pool),
    Memory(Arc<Mutex<Memory>>),
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
}

fn redis_err(e: impl Into<anyhow::Error>) -> KvError {
    KvError(e.into())
}

impl Kv {
    pub fn new(redis: Option<deadpool_redis::Pool>) -> Self {
        match redis {
            Some(p) => Kv::Redis(p),
            None => Kv::Memory(Arc::new(Mutex::new(Memory::default()))),
        }
    }

    pub async fn set(&self, key: &str, value: &str, ttl: Duration) -> Result<(), KvError> {
        match self {
            Kv::Redis(pool) => {
                let mut c = pool.get().await.map_err(redis_err)?;
                let ms = ttl.as_millis().max(1) as u64;
                redis::cmd("SET")
                    .arg(key)
                    .arg(value)
                    .arg("PX")
                    .arg(ms)
                    .query_async::<()>(&mut c)
                    .await
                    .map_err(redis_err)
            }
            Kv::Memory(m) => {
                let mut m = m.lock().map_err(|_| KvError(anyhow::anyhow!("poisoned")))?;
                m.writes += 1;
                if m.writes % 256 == 0 {
                    m.purge();
                }
                m.entries
                    .insert(key.to_string(), (Instant::now() + ttl, value.to_string()));
                Ok(())
            }
        }
    }

    pub async fn get(&self, key: &str) -> Result<Option<String>, KvError> {
        match self {
            Kv::Redis(pool) => {
                let mut c = pool.get().await.map_err(redis_err)?;
                redis::cmd("GET")
                    .arg(key)
                    .query_async(&mut c)
                    .await
                    .map_err(redis_err)
            }
            Kv::Memory(m) => {
                let m = m.lock().map_err(|_| KvError(anyhow::anyhow!("poisoned")))?;
                Ok(m.entries
                    .get(key)
                    .filter(|(exp, _)| *exp > Instant::now())
                    .map(|(_, v)| v.clone()))
            }
        }
    }

    pub async fn del(&self, key: &str) -> Result<(), KvError> {
        match self {
            Kv::Redis(pool) => {
                let mut c = pool.get().await.map_err(redis_err)?;
                redis::cmd("DEL")
                    .arg(key)
                    .query_async::<()>(&mut c)
                    .await
                    .map_err(redis_err)
            }
            Kv::Memory(m) => {
                let mut m = m.lock().map_err(|_| KvError(anyhow::anyhow!("poisoned")))?;
                m.entries.remove(key);
                Ok(())
            }
        }
    }

    /// Sets `key` only if it does not exist; `true` when this call set it.
    pub async fn set_nx(&self, key: &str, value: &str, ttl: Duration) -> Result<bool, KvError> {
        match self {
            Kv::Redis(pool) => {
                let mut c = pool.get().await.map_err(redis_err)?;
                let reply: redis::Value = redis::cmd("SET")
                    .arg(key)
                    .arg(value)
                    .arg("NX")
                    .arg("PX")
                    .arg(ttl.as_millis().max(1) as u64)
                    .query_async(&mut c)
                    .await
                    .map_err(redis_err)?;
                // `OK` when set, nil when the key already existed
                Ok(matches!(reply, redis::Value::Okay)
                    || matches!(&reply, redis::Value::SimpleString(s) if s == "OK"))
            }
            Kv::Memory(m) => {
                let mut m = m.lock().map_err(|_| KvError(anyhow::anyhow!("poisoned")))?;
                let now = Instant::now();
                if m.entries.get(key).is_some_and(|(exp, _)| *exp > now) {
                    return Ok(false);
                }
                m.entries
                    .insert(key.to_string(), (now + ttl, value.to_string()));
                Ok(true)
            }
        }
    }

    /// Atomically increments a counter, setting its TTL; returns the new value.
    pub async fn incr(&self, key: &str, ttl: Duration) -> Result<i64, KvError> {
        match self {
            Kv::Redis(pool) => {
                let mut c = pool.get().await.map_err(redis_err)?;
                let (n, _): (i64, i64) = redis::pipe()
                    .atomic()
                    .cmd("INCR")
                    .arg(key)
                    .cmd("PEXPIRE")
                    .arg(key)
                    .arg(ttl.as_millis().max(1) as u64)
                    .query_async(&mut c)
                    .await
                    .map_err(redis_err)?;
                Ok(n)
            }
            Kv::Memory(m) => {
                let mut m = m.lock().map_err(|_| KvError(anyhow::anyhow!("poisoned")))?;
                let now = Instant::now();
                let cur = m
                    .entries
                    .get(key)
                    .filter(|(exp, _)| *exp > now)
                    .and_then(|(_, v)| v.parse::<i64>().ok())
                    .unwrap_or(0);
                m.entries
                    .insert(key.to_string(), (now + ttl, (cur + 1).to_string()));
                Ok(cur + 1)
            }
        }
    }
}
