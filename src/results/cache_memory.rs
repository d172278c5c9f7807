//! The dataset cache's memory in this replica: entries already read from Redis
//! and decoded ([`Decoded`]: rows shared, never copied, between the calls they serve), and
//! the results presented from them ([`Presentation`]: the template and, sharing its text,
//! the body the hits' records reference), so a cache hit neither moves nor parses the
//! entry, and its record does not copy the text.
//!
//! Never stale across replicas: every hit still asks Redis which version of the entry is
//! current (one `GETRANGE` of its first line), and is answered only from exactly that
//! version. A tool call's hit asks it in the round trip that stores its result
//! (`stored_results::put`: the `GETRANGE` pipelined with the `SET`s, the result pointing at
//! the version this memory holds, [`CacheMemory::latest_entry`]); when Redis names another
//! version, what was stored under the new `_resultId` — which nobody has been given — is
//! deleted unread and the call is served again, Redis asked first
//! (`dataset_cache::current_version`), as a workflow step's hit always is. A `_refresh` or
//! a replacement made on any replica, and an entry that expired or was dropped in Redis,
//! are seen on the very next hit. The reader's TTL (C3) is checked on the entry's
//! `cached_at` as for an entry read from Redis, and things are kept under the cache key
//! itself (org, credential scope, tool, credential fingerprint: C2) plus the version, so
//! the memory adds no way to reach another scope's rows. A version is the entry's
//! `cached_at` in milliseconds: two walks of one key cached within the same millisecond (on
//! two replicas) would share one, and a replica could serve the other's rows — complete
//! walks of the same data, by the same credential, made at the same instant.
//!
//! Bounded in bytes (`cache_memory_bytes`; 0 turns it off): each thing kept is weighed
//! (an entry: its text and row index; a presentation: its text) and the least recently
//! used go first; one larger than the whole budget is not kept.
//! `loopgate_cache_memory_total{kind,outcome}` (`outcome="stale"`: a hit served again
//! because Redis named another version), `loopgate_cache_memory_bytes` and
//! `loopgate_cache_memory_entries` show it at work.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use crate::crypto::sha256;
use crate::results::dataset_cache::{Decoded, Held};
use crate::store::tool_calls::Body;
use crate::telemetry::metrics::Metrics;
use loopgate_engine::{CallPlan, Labels, Limits, PresentedTemplate};

/// What is kept for one key.
#[derive(Clone)]
pub enum MemoryItem {
    Entry(Arc<Decoded>),
    Presented(Arc<Presentation>),
}

/// A presented result kept for the hits that follow: the template they are filled from,
/// and the same parts as the body their records reference (its digest taken once, here).
pub struct Presentation {
    pub template: PresentedTemplate,
    pub body: Arc<Body>,
}

#[derive(Clone, Copy)]
enum Kind {
    Entry,
    Presented,
}

/// A map of at most `budget` bytes (as weighed by the caller), least recently used out
/// first, each value under a version: a lookup for another version is a miss and drops
/// what was kept.
pub struct Bounded<V> {
    budget: usize,
    map: HashMap<String, MemoryEntry<V>>,
    /// Last use → key, oldest first.
    order: BTreeMap<u64, String>,
    tick: u64,
    bytes: usize,
}

struct MemoryEntry<V> {
    version: i64,
    value: V,
    bytes: usize,
    used: u64,
}

impl<V: Clone> Bounded<V> {
    pub fn new(budget: usize) -> Self {
        Self {
            budget,
            map: HashMap::new(),
            order: BTreeMap::new(),
            tick: 0,
            bytes: 0,
        }
    }

    /// The value kept under `key` for exactly `version`.
    pub fn get(&mut self, key: &str, version: i64) -> Option<V> {
        let slot = self.map.get_mut(key)?;
        if slot.version != version {
            self.remove(key);
            return None;
        }
        Some(self.touch(key)?.1)
    }

    /// The value kept under `key`, whatever its version, with that version.
    pub fn latest(&mut self, key: &str) -> Option<(i64, V)> {
        self.touch(key)
    }

    /// Marks `key` used now.
    fn touch(&mut self, key: &str) -> Option<(i64, V)> {
        let slot = self.map.get_mut(key)?;
        self.order.remove(&slot.used);
        self.tick += 1;
        slot.used = self.tick;
        self.order.insert(self.tick, key.to_owned());
        Some((slot.version, slot.value.clone()))
    }

    /// Keeps `value` (weighing `bytes`) under `key` and `version`, in place of what was
    /// kept there, evicting the least recently used beyond the budget. Returns how many
    /// were evicted; nothing is kept when `bytes` alone exceed the budget.
    pub fn put(&mut self, key: &str, version: i64, value: V, bytes: usize) -> usize {
        self.remove(key);
        if bytes > self.budget {
            return 0;
        }
        let mut evicted = 0;
        while self.bytes + bytes > self.budget {
            let Some((_, oldest)) = self.order.pop_first() else {
                break;
            };
            if let Some(s) = self.map.remove(&oldest) {
                self.bytes -= s.bytes;
                evicted += 1;
            }
        }
        self.tick += 1;
        self.order.insert(self.tick, key.to_owned());
        self.map.insert(
            key.to_owned(),
            MemoryEntry {
                version,
                value,
                bytes,
                used: self.tick,
            },
        );
        self.bytes += bytes;
        evicted
    }

    pub fn remove(&mut self, key: &str) {
        if let Some(s) = self.map.remove(key) {
            self.order.remove(&s.used);
            self.bytes -= s.bytes;
        }
    }

    /// (bytes, entries) kept.
    pub fn usage(&self) -> (usize, usize) {
        (self.bytes, self.map.len())
    }
}

/// This replica's memory of the dataset cache.
pub struct CacheMemory {
    kept: Mutex<Bounded<MemoryItem>>,
    enabled: bool,
    metrics: Arc<Metrics>,
}

/// Bytes a kept thing costs beyond its text (map slots, key, order index).
const OVERHEAD: usize = 256;

impl CacheMemory {
    pub fn new(budget: usize, metrics: Arc<Metrics>) -> Self {
        Self {
            kept: Mutex::new(Bounded::new(budget)),
            enabled: budget > 0,
            metrics,
        }
    }

    /// `false` with a budget of 0: every hit reads the whole entry from Redis.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Bounded<MemoryItem>> {
        self.kept.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn get(&self, key: &str, version: i64, kind: Kind) -> Option<MemoryItem> {
        if !self.enabled {
            return None;
        }
        let found = self.lock().get(key, version);
        let c = &self.metrics.cache_memory;
        let counter = match (kind, found.is_some()) {
            (Kind::Entry, true) => &c.entry_hits,
            (Kind::Entry, false) => &c.entry_misses,
            (Kind::Presented, true) => &c.presented_hits,
            (Kind::Presented, false) => &c.presented_misses,
        };
        Metrics::inc(counter);
        found
    }

    fn put(&self, key: &str, version: i64, kept: MemoryItem, bytes: usize) {
        if !self.enabled {
            return;
        }
        let evicted = self
            .lock()
            .put(key, version, kept, bytes + key.len() + OVERHEAD);
        Metrics::add(&self.metrics.cache_memory.evicted, evicted as u64);
    }

    /// The decoded entry of cache key `key` at `version`.
    pub fn entry(&self, key: &str, version: i64) -> Option<Arc<Decoded>> {
        match self.get(key, version, Kind::Entry)? {
            MemoryItem::Entry(d) => Some(d),
            MemoryItem::Presented(_) => None,
        }
    }

    /// The decoded entry of cache key `key` this replica holds, whatever its version: a
    /// hit served from it before Redis names the current version must have it confirmed
    /// before it is answered (`stored_results::put`), and is counted a hit
    /// ([`CacheMemory::confirmed`]) when it is, [`CacheMemory::stale`] when it is not.
    pub fn latest_entry(&self, key: &str) -> Option<Arc<Decoded>> {
        if !self.enabled {
            return None;
        }
        let Some((_, MemoryItem::Entry(d))) = self.lock().latest(key) else {
            return None;
        };
        Some(d)
    }

    /// An entry [`CacheMemory::latest_entry`] gave was the current version in Redis.
    pub fn confirmed(&self) {
        Metrics::inc(&self.metrics.cache_memory.entry_hits);
    }

    /// An entry [`CacheMemory::latest_entry`] gave was not the current version in Redis.
    pub fn stale(&self) {
        Metrics::inc(&self.metrics.cache_memory.entry_stale);
    }

    pub fn keep_entry(&self, key: &str, decoded: Arc<Decoded>) {
        let bytes = decoded.bytes;
        self.put(key, decoded.version(), MemoryItem::Entry(decoded), bytes);
    }

    /// Cache key `key` has no entry in Redis any more: what was kept for it goes.
    pub fn forget(&self, key: &str) {
        if self.enabled {
            self.lock().remove(key);
        }
    }

    /// Where a presentation of the entry `held` points at is kept: the cache key with
    /// everything presenting depends on besides the rows and the `_resultId` — the plan
    /// (`_filter`, `_fields`, …), the limits (the guard's budget) and the labels (`_cache`
    /// with the reader's `expiresAt`, `_degraded`), written exactly
    /// ([`loopgate_engine::presenting_inputs`]) and hashed (SHA-256, 128 bits kept: inputs that
    /// differ never meet by chance, nor by a model's choice of arguments). Used with the
    /// entry's version.
    pub fn presenting_key(
        held: &Held,
        plan: &CallPlan,
        labels: &Labels,
        limits: &Limits,
    ) -> String {
        let mut how = Vec::with_capacity(512);
        loopgate_engine::presenting_inputs(plan, labels, limits, &mut how);
        let mut key = String::with_capacity(held.key.len() + 33);
        key.push_str(&held.key);
        key.push(' ');
        key.push_str(&hex::encode(&sha256(&how)[..16]));
        key
    }

    /// A presentation of entry `version`, kept under [`CacheMemory::presenting_key`].
    pub fn presented(&self, presenting: &str, version: i64) -> Option<Arc<Presentation>> {
        match self.get(presenting, version, Kind::Presented)? {
            MemoryItem::Presented(p) => Some(p),
            MemoryItem::Entry(_) => None,
        }
    }

    /// Keeps template `t` (when there is room) and returns it with its body.
    pub fn keep_presented(
        &self,
        presenting: &str,
        version: i64,
        t: PresentedTemplate,
    ) -> Arc<Presentation> {
        let bytes = t.bytes();
        let body = Arc::new(Body::new(t.parts().clone()));
        let p = Arc::new(Presentation { template: t, body });
        self.put(presenting, version, MemoryItem::Presented(p.clone()), bytes);
        p
    }

    /// (bytes, things) kept now.
    pub fn usage(&self) -> (usize, usize) {
        self.lock().usage()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stays_within_its_bytes_evicting_the_least_recently_used() {
        let mut m = Bounded::new(100);
        assert_eq!(m.put("a", 1, 'a', 40), 0);
        assert_eq!(m.put("b", 1, 'b', 40), 0);
        assert_eq!(m.get("a", 1), Some('a'), "a is now the most recent");
        assert_eq!(m.put("c", 1, 'c', 40), 1, "b goes, not a");
        assert_eq!(m.get("b", 1), None);
        assert_eq!((m.get("a", 1), m.get("c", 1)), (Some('a'), Some('c')));
        assert_eq!(m.usage(), (80, 2));
        // larger than the whole budget: not kept, nothing evicted for it
        assert_eq!(m.put("huge", 1, 'h', 101), 0);
        assert_eq!((m.get("huge", 1), m.usage()), (None, (80, 2)));
        // replacing a key's value re-weighs it
        m.put("a", 2, 'A', 10);
        assert_eq!(m.usage(), (50, 2));
        for i in 0..1000 {
            m.put(&format!("k{i}"), 1, 'k', 7);
            assert!(m.usage().0 <= 100);
        }
        assert_eq!(m.usage(), (98, 14));
        assert_eq!(m.order.len(), m.map.len());
    }

    #[test]
    fn presenting_keys_part_by_entry_and_by_how_it_is_presented() {
        let schema = serde_json::json!({});
        let plan = |args| {
            loopgate_engine::parse_call(
                &loopgate_engine::analyze(&schema),
                &schema,
                args,
                true,
                &Limits::default(),
            )
            .unwrap_or_else(|e| panic!("{e}"))
        };
        let held = |key: &str| Held {
            key: key.into(),
            cached_at: chrono::DateTime::UNIX_EPOCH,
            expires_at: chrono::DateTime::UNIX_EPOCH,
        };
        let (fields, labels) = (serde_json::json!({"_fields": ["id"]}), Labels::default());
        let key = |h: &str, args: &serde_json::Value, limits: &Limits| {
            CacheMemory::presenting_key(&held(h), &plan(args.clone()), &labels, limits)
        };
        let limits = Limits::default();
        let k = key("lg:c:1", &fields, &limits);
        assert!(
            k.starts_with("lg:c:1 ") && k.len() == "lg:c:1 ".len() + 32,
            "{k}"
        );
        assert_eq!(
            k,
            key("lg:c:1", &fields, &limits),
            "the same call, the same key"
        );
        assert_ne!(k, key("lg:c:2", &fields, &limits), "another entry");
        let name = serde_json::json!({"_fields": ["name"]});
        assert_ne!(k, key("lg:c:1", &name, &limits), "another projection");
        let budget = Limits {
            token_budget: limits.token_budget + 1,
            ..Limits::default()
        };
        assert_ne!(k, key("lg:c:1", &fields, &budget), "another budget");
    }

    #[test]
    fn another_version_is_a_miss_and_drops_the_old_one() {
        let mut m = Bounded::new(100);
        m.put("k", 5, "v5", 10);
        assert_eq!(
            m.get("k", 6),
            None,
            "Redis holds version 6: v5 is never served"
        );
        assert_eq!(m.get("k", 5), None, "and it is gone");
        assert_eq!(m.usage(), (0, 0));
        m.put("k", 7, "v7", 10);
        assert_eq!(m.latest("k"), Some((7, "v7")), "whatever its version");
        assert_eq!(m.latest("other"), None);
    }
}
