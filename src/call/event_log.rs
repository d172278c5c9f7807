//! The event log of running tool calls and workflow runs, so a client attached to any
//! replica can follow them (`GET …/events`) and reconnect with `Last-Event-ID`.
//!
//! With Redis: one capped stream per call (`XADD … MAXLEN ~`, at most [`MAX_EVENTS`]
//! entries, expiring as long after the last one as a stored result lives), and a pub/sub notification per
//! entry so followers wake at once; a follower subscribes first and then reads the
//! stream, so nothing falls between the two. Entry ids are the stream's ids. Without
//! Redis: the same in process (ids are sequence numbers), for a single replica.
//! Keys start with the org; who may read a call is checked against Postgres first.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use tokio::sync::broadcast;

use crate::kv::KvError;
use crate::store::OrgId;

/// Entries kept per call or run (progress is throttled, so a walk writes a few dozen).
pub const MAX_EVENTS: usize = 2_000;
/// The event log; its entries stay readable for `ttl` after the last one: as long as the
/// call's stored result (`result_ttl_seconds`).
#[derive(Clone)]
pub struct EventLog {
    store: Store,
    ttl: Duration,
}

#[derive(Clone)]
enum Store {
    Redis {
        pool: crate::kv::Redis,
        client: redis::Client,
    },
    Memory(Arc<Mutex<HashMap<String, Buffer>>>),
}

pub struct Buffer {
    entries: VecDeque<(u64, String)>,
    next: u64,
    touched: Instant,
    notify: broadcast::Sender<()>,
}

/// Wakes a follower when an entry was added (or after a timeout, whichever first).
pub enum Subscription {
    Redis(redis::aio::PubSub),
    Memory(broadcast::Receiver<()>),
}

impl Subscription {
    pub async fn wait(&mut self, limit: Duration) {
        let _ = tokio::time::timeout(limit, async {
            match self {
                Subscription::Redis(p) => {
                    p.on_message().next().await;
                }
                Subscription::Memory(rx) => {
                    let _ = rx.recv().await;
                }
            }
        })
        .await;
    }
}

/// The log key of a call or run of an org.
pub fn key(org: &OrgId, id: &str) -> String {
    format!("lg:{org}:events:{id}")
}

fn err(e: impl Into<anyhow::Error>) -> KvError {
    KvError(e.into())
}

fn channel(key: &str) -> String {
    format!("{key}:notify")
}

impl EventLog {
    /// `ttl`: how long after its last entry a call's events stay readable.
    pub fn new(redis: Option<(crate::kv::Redis, redis::Client)>, ttl: Duration) -> Self {
        let store = match redis {
            Some((pool, client)) => Store::Redis { pool, client },
            None => Store::Memory(Arc::default()),
        };
        EventLog { store, ttl }
    }

    /// Appends entries in order, in one round trip, and wakes the followers once.
    pub async fn append_all(&self, key: &str, entries: &[String]) -> Result<(), KvError> {
        match &self.store {
            Store::Redis { pool, .. } => {
                let mut c = pool.clone();
                let mut pipe = redis::pipe();
                for entry in entries {
                    pipe.cmd("XADD")
                        .arg(key)
                        .arg("MAXLEN")
                        .arg("~")
                        .arg(MAX_EVENTS)
                        .arg("*")
                        .arg("c")
                        .arg(entry)
                        .ignore();
                }
                pipe.cmd("PEXPIRE")
                    .arg(key)
                    .arg(self.ttl.as_millis() as u64)
                    .ignore()
                    .cmd("PUBLISH")
                    .arg(channel(key))
                    .arg("1")
                    .ignore();
                pipe.query_async::<()>(&mut c).await.map_err(err)?;
                Ok(())
            }
            Store::Memory(m) => {
                let mut map = m.lock().map_err(|_| err(anyhow::anyhow!("poisoned")))?;
                map.retain(|_, b| b.touched.elapsed() < self.ttl);
                let b = map.entry(key.to_string()).or_insert_with(|| Buffer {
                    entries: VecDeque::new(),
                    next: 1,
                    touched: Instant::now(),
                    notify: broadcast::channel(16).0,
                });
                for entry in entries {
                    b.entries.push_back((b.next, entry.clone()));
                    b.next += 1;
                    if b.entries.len() > MAX_EVENTS {
                        b.entries.pop_front();
                    }
                }
                b.touched = Instant::now();
                let _ = b.notify.send(());
                Ok(())
            }
        }
    }

    /// Wakes the followers of `key` without adding an entry (what they wait for is
    /// elsewhere: a finished call's record).
    pub async fn notify(&self, key: &str) -> Result<(), KvError> {
        match &self.store {
            Store::Redis { pool, .. } => {
                let mut c = pool.clone();
                redis::cmd("PUBLISH")
                    .arg(channel(key))
                    .arg("1")
                    .query_async::<()>(&mut c)
                    .await
                    .map_err(err)
            }
            Store::Memory(m) => {
                let map = m.lock().map_err(|_| err(anyhow::anyhow!("poisoned")))?;
                if let Some(b) = map.get(key) {
                    let _ = b.notify.send(());
                }
                Ok(())
            }
        }
    }

    /// Entries after `after` (all of them when `None`), oldest first, at most `MAX_EVENTS`.
    pub async fn read_after(
        &self,
        key: &str,
        after: Option<&str>,
    ) -> Result<Vec<(String, String)>, KvError> {
        match &self.store {
            Store::Redis { pool, .. } => {
                let mut c = pool.clone();
                let from = match after {
                    Some(id) if valid_stream_id(id) => format!("({id}"),
                    _ => "-".to_string(),
                };
                let rows: Vec<(String, Vec<(String, String)>)> = redis::cmd("XRANGE")
                    .arg(key)
                    .arg(from)
                    .arg("+")
                    .arg("COUNT")
                    .arg(MAX_EVENTS)
                    .query_async(&mut c)
                    .await
                    .map_err(err)?;
                Ok(rows
                    .into_iter()
                    .filter_map(|(id, fields)| {
                        fields
                            .into_iter()
                            .find(|(k, _)| k == "c")
                            .map(|(_, v)| (id, v))
                    })
                    .collect())
            }
            Store::Memory(m) => {
                let map = m.lock().map_err(|_| err(anyhow::anyhow!("poisoned")))?;
                let after: u64 = after.and_then(|a| a.parse().ok()).unwrap_or(0);
                Ok(map
                    .get(key)
                    .map(|b| {
                        b.entries
                            .iter()
                            .filter(|(id, _)| *id > after)
                            .map(|(id, e)| (id.to_string(), e.clone()))
                            .collect()
                    })
                    .unwrap_or_default())
            }
        }
    }

    /// Starts listening for new entries of `key` (before reading what is there).
    pub async fn subscribe(&self, key: &str) -> Result<Subscription, KvError> {
        match &self.store {
            Store::Redis { client, .. } => {
                let mut p = client.get_async_pubsub().await.map_err(err)?;
                p.subscribe(channel(key)).await.map_err(err)?;
                Ok(Subscription::Redis(p))
            }
            Store::Memory(m) => {
                let mut map = m.lock().map_err(|_| err(anyhow::anyhow!("poisoned")))?;
                let b = map.entry(key.to_string()).or_insert_with(|| Buffer {
                    entries: VecDeque::new(),
                    next: 1,
                    touched: Instant::now(),
                    notify: broadcast::channel(16).0,
                });
                Ok(Subscription::Memory(b.notify.subscribe()))
            }
        }
    }
}

/// `<ms>-<seq>`: anything else (a client's stray `Last-Event-ID`) reads from the start.
fn valid_stream_id(id: &str) -> bool {
    let mut parts = id.splitn(2, '-');
    let ms = parts.next().unwrap_or("");
    let seq = parts.next().unwrap_or("0");
    !ms.is_empty()
        && ms.bytes().all(|b| b.is_ascii_digit())
        && !seq.is_empty()
        && seq.bytes().all(|b| b.is_ascii_digit())
        && id.len() <= 41
}
