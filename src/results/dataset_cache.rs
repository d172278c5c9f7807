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

use crate::crypto::sha256;
use crate::kv::{Kv, KvError};
use crate::store::OrgId;
use loopgate_engine::Outcome;

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

/// What an entry says about itself beside its stored text: written as its header line.
#[derive(Serialize, Deserialize)]
pub struct Head {
    pub cached_at: DateTime<Utc>,
    /// When the store drops it (the writer's TTL).
    pub expires_at: DateTime<Utc>,
    /// As [`Entry::shape`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<serde_json::Value>,
}

impl Head {
    /// The entry's version line and header line; the stored text follows them as it is
    /// (compact JSON never holds a raw newline).
    fn lines(&self) -> String {
        let header = serde_json::to_string(self).unwrap_or_default();
        format!("{}\n{header}\n", self.cached_at.timestamp_millis())
    }

    /// Where the entry written with this head lives, for a `_resultId` to point at.
    pub fn held(&self, key: &str) -> Held {
        Held {
            key: key.to_owned(),
            cached_at: self.cached_at,
            expires_at: self.expires_at,
        }
    }
}

impl Entry {
    /// `None` for anything else (an entry of an older layout is a miss).
    fn decode(mut text: String) -> Option<Entry> {
        let (version, rest) = text.split_once('\n')?;
        let end = version.len() + 1 + rest.find('\n')?;
        let header: Head = serde_json::from_str(&text[version.len() + 1..end]).ok()?;
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

    /// The stored outcome parsed once, shaped as the walk that filled the entry (W2):
    /// work proportional to the entry, for `walk::cpu_jobs`.
    pub fn decode_rows(self) -> Decoded {
        let text_bytes = self.stored.len();
        let mut outcome = Outcome::from_stored_text(self.stored);
        let shape_bytes = match &self.shape {
            Some(shape) => {
                outcome.restore_shape(shape);
                // the frame, as a tree, costs a few times its text
                4 * shape.to_string().len()
            }
            None => 0,
        };
        let bytes = text_bytes
            + outcome.items.len() * std::mem::size_of::<loopgate_engine::Item>()
            + shape_bytes;
        Decoded {
            cached_at: self.cached_at,
            expires_at: self.expires_at,
            outcome: Arc::new(outcome),
            bytes,
        }
    }
}

/// An entry read and parsed: what a hit serves, shared by the calls it serves (and kept
/// in this replica's `CacheMemory`).
pub struct Decoded {
    pub cached_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub outcome: Arc<Outcome>,
    /// About what it holds in memory: its text, its row index, its frame.
    pub bytes: usize,
}

impl Decoded {
    /// The entry's version (its first line): when it was cached, in ms.
    pub fn version(&self) -> i64 {
        self.cached_at.timestamp_millis()
    }

    pub fn held(&self, key: &str) -> Held {
        Held {
            key: key.to_owned(),
            cached_at: self.cached_at,
            expires_at: self.expires_at,
        }
    }
}

/// Bytes read to learn an entry's version: its first line (at most 20 digits, `\n`).
const VERSION_HEAD: usize = 24;

/// Which version of the entry under `key` is current, in one round trip that moves only
/// the entry's first line (never the entry): `None` when there is none (expired, dropped,
/// never written, or of an older layout).
pub async fn current_version(kv: &Kv, key: &str) -> Result<Option<i64>, KvError> {
    Ok(version_in(kv.get_head(key, VERSION_HEAD).await?.as_deref()))
}

/// What to read of the entry under `key` to learn its current version in a round trip
/// made for something else ([`Kv::set_many_reading`]): read it with [`version_in`].
pub fn version_probe(key: &str) -> (&str, usize) {
    (key, VERSION_HEAD)
}

/// The version of the entry whose first bytes are `head` (as [`current_version`]).
pub fn version_in(head: Option<&[u8]>) -> Option<i64> {
    head.and_then(version_of)
}

/// The version line at the start of an entry's text.
fn version_of(head: &[u8]) -> Option<i64> {
    let end = head.iter().position(|b| *b == b'\n')?;
    let digits = &head[..end];
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// A cache entry a stored result can point at rather than copy.
#[derive(Debug, Clone)]
pub struct Held {
    pub key: String,
    pub cached_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

impl Held {
    /// The version of the entry held (its first line).
    pub fn version(&self) -> i64 {
        self.cached_at.timestamp_millis()
    }

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

/// Where [`write`] put an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// Where every replica reads it: a result may point at it.
    Shared,
    /// In this process only (Redis did not answer): K2, no result points at it.
    Here,
    /// Larger than `cache_max_entry_bytes`: nothing was written.
    TooLarge,
}

/// Writes an entry — `head`'s lines, then `stored` as it is, never concatenated (the store
/// takes them in pieces) — to live exactly `ttl` (the writing binding's TTL, C3): a
/// user's data is never kept longer than the TTL it was fetched under. Nothing is written
/// when it is larger than `max_bytes` (`cache_max_entry_bytes`).
pub async fn write(
    kv: &Kv,
    key: &str,
    head: &Head,
    stored: &str,
    ttl: Duration,
    max_bytes: usize,
) -> Result<Written, KvError> {
    let lines = head.lines();
    if lines.len() + stored.len() > max_bytes {
        return Ok(Written::TooLarge);
    }
    let shared = kv
        .set_versioned(key, &[&lines, stored], ttl, retired_ttl(kv))
        .await?;
    Ok(if shared {
        Written::Shared
    } else {
        Written::Here
    })
}

/// How long a replaced entry stays readable for the results that point at it: as long as
/// those results live (`result_ttl_seconds`).
pub fn retired_ttl(kv: &Kv) -> Duration {
    kv.result_ttl()
}

/// How long one replica may hold the walk of a key before others walk anyway: the
/// configured wall-clock bound of a walk (`limit_wall_seconds`) plus this margin. The
/// walk slots' lease (`walk::walk_slots`) is built on it.
const LEASE_MARGIN: Duration = Duration::from_secs(15);

/// The lease of a walk bounded by `wall`.
pub fn walk_lease(wall: Duration) -> Duration {
    wall + LEASE_MARGIN
}

/// K3: the claim of a walk lives this long unless its owner renews it, so the claim of a
/// replica that died is gone within this, whatever the walk's own bound.
pub const CLAIM_LEASE: Duration = Duration::from_secs(4);
/// K3: how often a running walk renews its claim.
pub const CLAIM_RENEW: Duration = Duration::from_millis(1000);
const _: () = assert!(
    CLAIM_RENEW.as_millis() * 3 <= CLAIM_LEASE.as_millis(),
    "a claim survives two missed renewals"
);

/// A claim of one walk across replicas (K3): renewed every [`CLAIM_RENEW`] while it
/// lives; give it back with [`Claim::release`] (dropped, it stops being renewed and is gone
/// within [`CLAIM_LEASE`]).
pub struct Claim {
    key: String,
    token: String,
    renewal: tokio::task::JoinHandle<()>,
}

impl Drop for Claim {
    fn drop(&mut self) {
        self.renewal.abort();
    }
}

impl Claim {
    /// Gives the claim back (only if it is still this one's).
    pub async fn release(self, kv: &Kv) -> Result<(), KvError> {
        self.renewal.abort();
        kv.renew_if(&self.key, &self.token, Duration::ZERO)
            .await
            .map(drop)
    }
}

fn claim_key(key: &str) -> String {
    format!("{key}:walking")
}

/// Claims the walk of `key` across replicas; `None` when another replica is walking it.
/// The claim is renewed while it is held (K3).
pub async fn claim(kv: &Kv, key: &str) -> Result<Option<Claim>, KvError> {
    let (key, token) = (claim_key(key), crate::crypto::random_token(16));
    if !kv.set_nx(&key, &token, CLAIM_LEASE).await? {
        return Ok(None);
    }
    let renewal = tokio::spawn({
        let (kv, key, token) = (kv.clone(), key.clone(), token.clone());
        async move {
            let mut tick = tokio::time::interval(CLAIM_RENEW);
            tick.tick().await;
            loop {
                tick.tick().await;
                match kv.renew_if(&key, &token, CLAIM_LEASE).await {
                    // a Redis that did not answer this time may next tick, within the lease
                    Ok(true) | Err(_) => {}
                    // lost (taken over after a long stall): the walk goes on unclaimed
                    Ok(false) => return,
                }
            }
        }
    });
    Ok(Some(Claim {
        key,
        token,
        renewal,
    }))
}

/// Waits for another replica's walk of `key`: its entry, or `None` once the claim is gone
/// (that walk was not cacheable, or failed, or its replica died: K3, within
/// [`CLAIM_LEASE`]), after `wait` (the caller's own bound), or once `cut` resolves (the
/// drain cuts what it would outlive).
pub async fn await_peer(
    kv: &Kv,
    key: &str,
    wait: Duration,
    cut: impl std::future::Future<Output = ()>,
) -> Result<Option<Entry>, KvError> {
    let deadline = tokio::time::Instant::now() + wait;
    let claimed = claim_key(key);
    tokio::pin!(cut);
    while tokio::time::Instant::now() < deadline {
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(100)) => {}
            () = &mut cut => return Ok(None),
        }
        if let Some(e) = read(kv, key).await? {
            return Ok(Some(e));
        }
        if kv.get(&claimed).await?.is_none() {
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
    use crate::kv::{TEST_BUDGET, TEST_RESULT_TTL};

    /// The test Redis (`REDIS_URL`), or the in-process store where `crate::testing` allows.
    fn test_kv() -> Kv {
        Kv::new(
            crate::testing::redis_url().and_then(|u| crate::kv::connect(&u, TEST_BUDGET).ok()),
            None,
            TEST_BUDGET,
            TEST_RESULT_TTL,
        )
    }

    fn head(at: DateTime<Utc>, shape: Option<serde_json::Value>) -> Head {
        Head {
            cached_at: at,
            expires_at: at + chrono::Duration::hours(1),
            shape,
        }
    }

    #[test]
    fn c1_entry_is_a_header_line_then_the_stored_text() {
        let at = Utc::now();
        let h = head(at, Some(json!({"slot": "root"})));
        let stored = r#"{"items":[{"t":"a\nb"}],"_itemCount":1}"#;
        let text = format!("{}{stored}", h.lines());
        let back = Entry::decode(text).unwrap();
        assert_eq!(
            (back.cached_at, back.stored.as_str(), &back.shape),
            (at, stored, &h.shape)
        );
        assert_eq!(
            version_of(h.lines().as_bytes()),
            Some(at.timestamp_millis())
        );
        assert_eq!(version_of(b"12a\n"), None);
        assert_eq!(version_of(b"123"), None, "no whole first line");
        // an entry of the older layout (JSON holding the stored text as a string) is a miss
        assert!(Entry::decode(json!({"cached_at": at, "stored": "{}"}).to_string()).is_none());
        let held = back.held("k");
        assert!(held.outlives(at, Duration::from_secs(900)));
        assert!(!held.outlives(at, Duration::from_secs(7200)));
        assert!(held.pointer().ends_with(" k"));
    }

    /// Writing an entry, or a stored result, holds no copy of it: the store takes the
    /// header and the stored text in pieces, so what a write holds beyond what it leaves
    /// stored is a few pieces, whatever the entry's size.
    #[tokio::test]
    async fn c1_writing_an_entry_holds_a_few_pieces_not_a_copy() {
        use crate::kv::PIECE_BYTES;
        let kv = test_kv();
        let stored = format!(r#"{{"items":["{}"]}}"#, "x".repeat(7 << 20));
        let key = format!("lg:org_test:cache:{}", crate::crypto::random_token(12));
        // a piece is held up to four times at once: the command, its packed form, the
        // connection's buffer (and the piece itself is a slice of the text)
        let bound = 5 * PIECE_BYTES as isize;
        let mark = loopgate_engine::testing::Mark::now();
        let h = head(Utc::now(), None);
        assert_eq!(
            write(&kv, &key, &h, &stored, Duration::from_secs(60), 8 << 20)
                .await
                .unwrap(),
            Written::Shared
        );
        let used = mark.usage();
        assert!(used.peak - used.kept.max(0) <= bound, "{used:?}");
        let mark = loopgate_engine::testing::Mark::now();
        let res = format!("{key}:res");
        kv.set_large(&res, &stored, Duration::from_secs(60))
            .await
            .unwrap();
        let used = mark.usage();
        assert!(used.peak - used.kept.max(0) <= bound, "{used:?}");
        assert!(read(&kv, &key).await.unwrap().unwrap().stored == stored);
        assert!(kv.get(&res).await.unwrap().unwrap() == stored);
    }

    /// K3: a claim lives while its owner renews it, and goes within its short lease once
    /// the owner is gone (dropped: as a replica that died); a waiter learns it then, and a
    /// cut ends a wait at once.
    #[tokio::test]
    async fn k3_a_claim_lives_while_renewed_and_goes_soon_after_its_owner() {
        let kv = test_kv();
        let base = format!("lg:org_test:cache:{}", crate::crypto::random_token(12));
        let (held, dead) = (format!("{base}a"), format!("{base}b"));
        let mine = claim(&kv, &held).await.unwrap().unwrap();
        assert!(claim(&kv, &held).await.unwrap().is_none(), "taken");
        let gone = claim(&kv, &dead).await.unwrap().unwrap();
        drop(gone);
        let t = tokio::time::Instant::now();
        let waited = await_peer(&kv, &dead, Duration::from_secs(30), std::future::pending()).await;
        assert!(waited.unwrap().is_none());
        assert!(
            t.elapsed() <= CLAIM_LEASE + Duration::from_millis(500),
            "{:?}",
            t.elapsed()
        );
        // renewed past its lease while its owner lives
        tokio::time::sleep(CLAIM_LEASE.saturating_sub(t.elapsed()) + CLAIM_RENEW).await;
        assert!(claim(&kv, &held).await.unwrap().is_none(), "still held");
        // a cut ends the wait at once
        let t = tokio::time::Instant::now();
        let cut = await_peer(&kv, &held, Duration::from_secs(30), async {}).await;
        assert!(cut.unwrap().is_none());
        assert!(t.elapsed() < Duration::from_secs(1));
        // given back: free at once, and only the owner's claim is given back
        let again_key = format!("{base}c");
        let other = claim(&kv, &again_key).await.unwrap().unwrap();
        mine.release(&kv).await.unwrap();
        assert!(
            claim(&kv, &held).await.unwrap().is_some(),
            "free after release"
        );
        other.release(&kv).await.unwrap();
    }

    /// G3: a result pointing at an entry still reads it after a `_refresh` replaced it —
    /// small entries (one script) and large ones (written in pieces, then renamed into
    /// place) alike.
    #[tokio::test]
    async fn g3_a_replaced_entry_stays_readable_by_its_pointer() {
        let kv = test_kv();
        let big = format!("\"{}\"", "x".repeat(crate::kv::PIECE_BYTES + 10));
        for filler in ["1", big.as_str()] {
            let key = format!("lg:org_test:cache:{}", crate::crypto::random_token(12));
            let at = Utc::now();
            let write_at = |at: DateTime<Utc>, rows: String| {
                let (kv, key) = (&kv, &key);
                async move {
                    let h = head(at, None);
                    let written = write(kv, key, &h, &rows, Duration::from_secs(60), 8 << 20);
                    assert_eq!(written.await.unwrap(), Written::Shared);
                    (h.held(key).pointer(), rows)
                }
            };
            let (first, first_rows) = write_at(at, format!("{{\"items\":[{filler}]}}")).await;
            let at2 = at + chrono::Duration::seconds(5);
            let (newer, newer_rows) = write_at(at2, format!("{{\"items\":[{filler},2]}}")).await;
            let now = read(&kv, &key).await.unwrap().unwrap();
            assert_eq!((now.cached_at, now.stored.len()), (at2, newer_rows.len()));
            // the current version, from the entry's first line alone (a hit's check
            // reads a few bytes, not the entry)
            let version = current_version(&kv, &key).await.unwrap();
            assert_eq!(version, Some(at2.timestamp_millis()));
            let none = current_version(&kv, &format!("{key}:none")).await.unwrap();
            assert_eq!(none, None);
            assert!(now.stored == newer_rows);
            assert!(follow(&kv, &first).await.unwrap() == Some(first_rows));
            assert!(follow(&kv, &newer).await.unwrap() == Some(newer_rows));
            assert_eq!(follow(&kv, &format!("1 {key}")).await.unwrap(), None);
        }
    }
}
