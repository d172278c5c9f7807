//! The dataset cache of complete walks (C1–C6). Entries are keyed by the tool, the
//! walk's identity (upstream arguments and fan-out values, not `_fields`/`_filter`/
//! `_refresh`), the credential scope inside the org, and a keyed fingerprint of the
//! credential, so no scope reads another's entries and a rotated credential never reads
//! old data. The entry is the unprojected, unfiltered stored outcome. Identical walks in
//! one process wait on a per-key lock, so N parallel calls make one upstream walk.
//!
//! An entry is stored as a line with its version (`cached_at` in ms), a line of header
//! (`cached_at`, `expires_at`, the payload's shape) and then the stored outcome's JSON
//! text as it is: a hit parses the rows once, never a JSON string holding JSON. A
//! `_resultId` made from a walk the cache holds points at its entry version ([`Held`])
//! instead of keeping a second copy; an entry replaced (`_refresh`, or stale for its
//! reader) stays readable under `<key>#<version>` for the life of a stored result (G3).

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

pub struct Entry {
    pub cached_at: DateTime<Utc>,
    /// When the store drops it (the writer's TTL).
    pub expires_at: DateTime<Utc>,
    /// The stored outcome's JSON text (`Outcome::to_stored_json`).
    pub stored: String,
    /// The tool's own payload shape (`Outcome::shape`), so a workflow step served from
    /// the cache keeps it (W2).
    pub shape: Option<serde_json::Value>,
}

/// The entry's first line.
#[derive(Serialize, Deserialize)]
struct Header {
    cached_at: DateTime<Utc>,
    expires_at: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    shape: Option<serde_json::Value>,
}

impl Entry {
    /// Version line, header line, stored text (compact JSON never holds a raw newline).
    fn encode(&self) -> String {
        let header = Header {
            cached_at: self.cached_at,
            expires_at: self.expires_at,
            shape: self.shape.clone(),
        };
        let header = serde_json::to_string(&header).unwrap_or_default();
        let version = self.cached_at.timestamp_millis().to_string();
        let mut text = String::with_capacity(version.len() + header.len() + 2 + self.stored.len());
        text.push_str(&version);
        text.push('\n');
        text.push_str(&header);
        text.push('\n');
        text.push_str(&self.stored);
        text
    }

    /// `None` for anything else (an entry of an older layout is a miss).
    fn decode(mut text: String) -> Option<Entry> {
        let (version, rest) = text.split_once('\n')?;
        let end = version.len() + 1 + rest.find('\n')?;
        let header: Header = serde_json::from_str(&text[version.len() + 1..end]).ok()?;
        text.replace_range(..=end, "");
        Some(Entry {
            cached_at: header.cached_at,
            expires_at: header.expires_at,
            stored: text,
            shape: header.shape,
        })
    }

    /// Where this entry lives, for a `_resultId` to point at.
    pub fn held(&self, key: &str) -> Held {
        Held {
            key: key.to_owned(),
            cached_at: self.cached_at,
            expires_at: self.expires_at,
        }
    }
}

/// A cache entry a stored result can point at rather than copy.
#[derive(Debug, Clone)]
pub struct Held {
    pub key: String,
    pub cached_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

impl Held {
    /// Lives at least `ttl` from `now` (else the result keeps its own copy).
    pub fn outlives(&self, now: DateTime<Utc>, ttl: Duration) -> bool {
        chrono::Duration::from_std(ttl).is_ok_and(|t| self.expires_at - now >= t)
    }

    /// The pointer's text: `<version> <key>`.
    pub fn pointer(&self) -> String {
        format!("{} {}", self.cached_at.timestamp_millis(), self.key)
    }
}

/// What a pointer made by [`Held::pointer`] points at: the stored text of that version
/// (the current entry, or the one it replaced), or `None` once it is gone.
pub async fn follow(kv: &Kv, pointer: &str) -> Result<Option<String>, KvError> {
    let Some((version, key)) = pointer.split_once(' ') else {
        return Ok(None);
    };
    let is_it = |e: &Entry| e.cached_at.timestamp_millis().to_string() == version;
    if let Some(e) = read(kv, key).await?.filter(is_it) {
        return Ok(Some(e.stored));
    }
    Ok(read(kv, &format!("{key}#{version}"))
        .await?
        .filter(is_it)
        .map(|e| e.stored))
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
    Ok(kv.get(key).await?.and_then(Entry::decode))
}

/// Writes an entry to live exactly `ttl` (the writing binding's TTL, C3): a user's data
/// is never kept longer than the TTL it was fetched under. `false` when it is too large.
pub async fn write(kv: &Kv, key: &str, entry: &Entry, ttl: Duration) -> Result<bool, KvError> {
    if entry.stored.len() > MAX_ENTRY_BYTES {
        return Ok(false);
    }
    let text = entry.encode();
    if text.len() > MAX_ENTRY_BYTES {
        return Ok(false);
    }
    kv.set_versioned(key, &text, ttl, RETIRED_TTL).await?;
    Ok(true)
}

/// How long a replaced entry stays readable for the results that point at it.
pub const RETIRED_TTL: Duration = super::results::RESULT_TTL;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c1_entry_is_a_header_line_then_the_stored_text() {
        let at = Utc::now();
        let e = Entry {
            cached_at: at,
            expires_at: at + chrono::Duration::hours(1),
            stored: r#"{"items":[{"t":"a\nb"}],"_itemCount":1}"#.into(),
            shape: Some(json!({"slot": "root"})),
        };
        let text = e.encode();
        assert!(
            text.ends_with(&e.stored),
            "the stored text is kept as it is: {text}"
        );
        let back = Entry::decode(text).unwrap();
        assert_eq!(
            (back.cached_at, &back.stored, &back.shape),
            (at, &e.stored, &e.shape)
        );
        // an entry of the older layout (JSON holding the stored text as a string) is a miss
        assert!(Entry::decode(json!({"cached_at": at, "stored": "{}"}).to_string()).is_none());
        let held = e.held("k");
        assert!(held.outlives(at, Duration::from_secs(900)));
        assert!(!held.outlives(at, Duration::from_secs(7200)));
        assert!(held.pointer().ends_with(" k"));
    }

    /// G3: a result pointing at an entry still reads it after a `_refresh` replaced it.
    #[tokio::test]
    async fn g3_a_replaced_entry_stays_readable_by_its_pointer() {
        let kv = Kv::new(
            std::env::var("REDIS_URL")
                .ok()
                .and_then(|u| crate::runtime::kv::connect(&u).ok()),
            None,
        );
        let key = format!("lg:org_test:cache:{}", crate::crypto::random_token(12));
        let at = Utc::now();
        let entry = |at: DateTime<Utc>, rows: &str| Entry {
            cached_at: at,
            expires_at: at + chrono::Duration::hours(1),
            stored: format!(r#"{{"items":{rows}}}"#),
            shape: None,
        };
        let first = entry(at, "[1]");
        assert!(write(&kv, &key, &first, Duration::from_secs(60))
            .await
            .unwrap());
        let pointer = first.held(&key).pointer();
        let newer = entry(at + chrono::Duration::seconds(5), "[2]");
        assert!(write(&kv, &key, &newer, Duration::from_secs(60))
            .await
            .unwrap());
        assert_eq!(read(&kv, &key).await.unwrap().unwrap().stored, newer.stored);
        assert_eq!(
            follow(&kv, &pointer).await.unwrap(),
            Some(first.stored.clone())
        );
        assert_eq!(
            follow(&kv, &newer.held(&key).pointer()).await.unwrap(),
            Some(newer.stored.clone())
        );
        assert_eq!(follow(&kv, &format!("1 {key}")).await.unwrap(), None);
    }
}
