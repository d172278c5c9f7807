//! The dataset cache of complete walks (C1–C6). Entries are keyed by the tool, the
//! walk's identity (upstream arguments and fan-out values, not `_fields`/`_filter`/
//! `_refresh`), the credential scope inside the org, and a keyed fingerprint of the
//! credential, so no scope reads another's entries and a rotated credential never reads
//! old data. The entry is the unprojected, unfiltered stored outcome. Identical walks in
//! one process wait on a per-key lock, so N parallel calls make one upstream walk.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::kv::{Kv, KvError};
use crate::crypto::sha256;
use crate::store::OrgId;

/// Entries larger than this are not cached (the result says so).
pub const MAX_ENTRY_BYTES: usize = 8 * 1024 * 1024;
pub const ORG_TTL: Duration = Duration::from_secs(24 * 3600);
pub const USER_TTL: Duration = Duration::from_secs(3600);

/// Whose credential fetched the data: the cache never crosses this line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    Org,
    User(String),
    Shared(String),
}

impl Scope {
    fn label(&self) -> String {
        match self {
            Scope::Org => "org".into(),
            Scope::User(u) => format!("user:{u}"),
            Scope::Shared(s) => format!("scope:{s}"),
        }
    }
}

#[derive(Serialize, Deserialize)]
pub struct Entry {
    pub cached_at: DateTime<Utc>,
    pub stored: String,
    /// The tool's own payload shape (`Outcome::shape`), so a workflow step served from
    /// the cache keeps it (W2); absent in entries written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<serde_json::Value>,
}

/// The cache key of one walk.
pub fn key(
    org: &OrgId,
    tool_id: &str,
    identity: &serde_json::Value,
    scope: &Scope,
    fingerprint_key: &[u8; 32],
    credential: Option<&str>,
) -> String {
    let mut fp_input = Vec::new();
    fp_input.extend_from_slice(fingerprint_key);
    fp_input.extend_from_slice(credential.unwrap_or("").as_bytes());
    let fingerprint = hex::encode(&sha256(&fp_input)[..16]);
    let material =
        json!({"tool": tool_id, "walk": identity, "scope": scope.label(), "cred": fingerprint});
    let digest = hex::encode(sha256(material.to_string().as_bytes()));
    format!("lg:{org}:cache:{digest}")
}

pub async fn read(kv: &Kv, key: &str) -> Result<Option<Entry>, KvError> {
    Ok(kv
        .get(key)
        .await?
        .and_then(|s| serde_json::from_str(&s).ok()))
}

/// Writes an entry to live exactly `ttl` (the writing binding's TTL, C3): a user's data
/// is never kept longer than the TTL it was fetched under. `false` when it is too large.
pub async fn write(kv: &Kv, key: &str, entry: &Entry, ttl: Duration) -> Result<bool, KvError> {
    let text = serde_json::to_string(entry).unwrap_or_default();
    if text.len() > MAX_ENTRY_BYTES {
        return Ok(false);
    }
    kv.set(key, &text, ttl).await?;
    Ok(true)
}

/// How long one replica may hold the walk of a key before others walk anyway: the
/// configured wall-clock bound of a walk (`limit_wall_seconds`) plus this margin.
const LEASE_MARGIN: Duration = Duration::from_secs(15);

/// The lease of a walk bounded by `wall`.
pub fn walk_lease(wall: Duration) -> Duration {
    wall + LEASE_MARGIN
}

/// Claims the walk of `key` across replicas for `lease`; `false` when another replica is
/// walking it.
pub async fn claim(kv: &Kv, key: &str, lease: Duration) -> Result<bool, KvError> {
    kv.set_nx(&format!("{key}:walking"), "1", lease).await
}

pub async fn release(kv: &Kv, key: &str) -> Result<(), KvError> {
    kv.del(&format!("{key}:walking")).await
}

/// Waits for another replica's walk of `key`: its entry, or `None` once the claim is gone
/// (that walk was not cacheable, or failed) or the lease ran out.
pub async fn await_peer(kv: &Kv, key: &str, lease: Duration) -> Result<Option<Entry>, KvError> {
    let deadline = tokio::time::Instant::now() + lease;
    while tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if let Some(e) = read(kv, key).await? {
            return Ok(Some(e));
        }
        if kv.get(&format!("{key}:walking")).await?.is_none() {
            return Ok(None);
        }
    }
    Ok(None)
}

/// Per-key locks so identical walks in this process run once.
#[derive(Default)]
pub struct Coalescer {
    locks: Mutex<HashMap<String, Weak<tokio::sync::Mutex<()>>>>,
}

impl Coalescer {
    pub fn lock_for(&self, key: &str) -> Arc<tokio::sync::Mutex<()>> {
        let Ok(mut map) = self.locks.lock() else {
            return Arc::new(tokio::sync::Mutex::new(()));
        };
        map.retain(|_, w| w.strong_count() > 0);
        if let Some(l) = map.get(key).and_then(Weak::upgrade) {
            return l;
        }
        let l = Arc::new(tokio::sync::Mutex::new(()));
        map.insert(key.to_string(), Arc::downgrade(&l));
        l
    }
}
