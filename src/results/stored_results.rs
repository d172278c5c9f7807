//! Stored results (G3, G4, G6) and the thread's retrieval restriction (G5), kept in
//! the `Kv` under keys scoped to the org and the thread: a `_resultId` from another
//! thread or org is simply not found. Beside each result its provenance (Q1: was the
//! walk complete) is kept for the same time. A result whose walk the dataset cache holds
//! is a pointer to that entry (`@<pointer>`, see [`dataset_cache::Held`]): its rows are stored
//! once. Stored JSON text never starts with `@`.
//!
//! K2, Redis out of reach: a result Redis did not take is also written to Postgres
//! (`store::result_copies`: its text — never a pointer, the cache entry being this
//! replica's alone meanwhile — its provenance and its tombstone), and reading a result
//! Redis does not hold looks there before saying it does not exist, so a `_resultId` is
//! readable from every replica during the outage and after it. A result that cannot be
//! read says why: expired (past its TTL), lost (its cache entry went before it expired,
//! `result_lost`), or unreadable now (the result store does not answer: 503).

use std::collections::BTreeMap;
use std::time::Duration;

use crate::kv::{self, Kv, KvError};
use crate::results::dataset_cache::{self, Held};
use crate::store::{result_copies, OrgId};
use loopgate_engine::Provenance;

/// How long we remember that a result existed, to say "expired" rather than "not found".
const TOMBSTONE_TTL: Duration = Duration::from_secs(24 * 3600);

/// K5: when the result store's data began (unix ms), written at startup and again when a
/// lookup finds it gone ([`mark_store_born`]): a store that restarted without its data
/// has a newer one.
const STORE_BORN: &str = "lg:store:born";
/// How long that mark lives (renewed only by being written again once gone).
const STORE_BORN_TTL: Duration = Duration::from_secs(365 * 24 * 3600);
/// Hex digits of the creation time a `_resultId` carries.
const MADE_DIGITS: usize = 11;

/// A fresh `_resultId`, made at `now_ms` (unix ms): the time, then 32 random characters
/// (unguessable, and all of one length, as presented templates need). The time lets a
/// result the store lost be told from one that never existed (K5).
pub fn new_result_id(now_ms: i64) -> String {
    format!(
        "res_{:0width$x}{}",
        now_ms.max(0),
        crate::crypto::random_token(32),
        width = MADE_DIGITS
    )
}

/// K5: notes when the store's data began, unless it is noted: at startup, and when a
/// lookup finds the note gone (the store restarted without its data).
pub async fn mark_store_born(kv: &Kv) -> Result<(), KvError> {
    kv.init_shared(STORE_BORN, &now_ms().to_string(), STORE_BORN_TTL)
        .await
        .map(drop)
}

/// When a result of id `id` was made (unix ms), if it says.
fn made_at(id: &str) -> Option<i64> {
    let rest = id.strip_prefix("res_")?;
    let digits = rest.get(..MADE_DIGITS)?;
    if rest.len() != MADE_DIGITS + 32 {
        return None;
    }
    i64::from_str_radix(digits, 16).ok()
}

/// The thread a result belongs to.
#[derive(Debug, Clone)]
pub struct ThreadKey {
    pub org: OrgId,
    pub thread_id: String,
}

impl ThreadKey {
    fn key(&self, kind: &str, id: &str) -> String {
        format!("lg:{}:{}:{kind}:{id}", self.org, self.thread_id)
    }
}

/// How long results are kept, as the model reads it ("15 minutes", "90 seconds").
#[derive(Debug, Clone, Copy)]
pub struct KeptFor(pub Duration);

impl std::fmt::Display for KeptFor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.0.as_secs();
        match (s % 60, s / 60) {
            (0, 1) => write!(f, "1 minute"),
            (0, m) => write!(f, "{m} minutes"),
            _ => write!(f, "{s} seconds"),
        }
    }
}

impl ResultError {
    /// `id` expired, given how long `kv` keeps results.
    pub fn expired(kv: &Kv, id: impl Into<String>) -> Self {
        ResultError::Expired(id.into(), KeptFor(kv.result_ttl()))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ResultError {
    #[error("result '{0}' has expired (results are kept for {1}): call the tool again")]
    Expired(String, KeptFor),
    #[error("no result '{0}' exists in this conversation: use a _resultId returned by an earlier tool call here")]
    NotFound(String),
    /// K5: the cache entry it points at went before the result expired (the result store
    /// restarted without it, or dropped it).
    #[error("result '{0}' was lost by the result store before it expired (the store restarted or dropped it): call the tool again")]
    Lost(String),
    /// K2: Redis does not answer and no copy of the result is at hand.
    #[error("result '{0}' cannot be read right now: the shared result store is unreachable; retry in a few seconds")]
    Unreachable(String),
    #[error(transparent)]
    Store(#[from] KvError),
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// Cut results the agent has not read yet: id → expiry (unix ms).
type Pending = BTreeMap<String, i64>;

async fn pending_map(kv: &Kv, t: &ThreadKey) -> Result<Pending, KvError> {
    Ok(live_pending(kv.get(&t.key("pending", "")).await?))
}

/// The unexpired entries of a stored pending map.
fn live_pending(raw: Option<String>) -> Pending {
    let mut map: Pending = raw
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_default();
    let now = now_ms();
    map.retain(|_, exp| *exp > now);
    map
}

async fn save_pending(kv: &Kv, t: &ThreadKey, map: &Pending) -> Result<(), KvError> {
    if map.is_empty() {
        return kv
            .del_many(&[&t.key("pending", ""), &t.key("restricted", "")])
            .await;
    }
    let json = serde_json::to_string(map).unwrap_or_default();
    kv.set(&t.key("pending", ""), &json, kv.result_ttl()).await
}

/// What a result keeps: its stored text, or the cache entry that holds it.
pub enum Body<'a> {
    Text(&'a str),
    Cached(&'a Held),
}

/// Keeps a result aside; a `truncated` one marks the thread until it is read.
///
/// `unconfirmed`: the cache entry version the result was served from when Redis has not
/// said yet that it is the current one (a hit from this replica's memory): it is asked in
/// the same round trip as the writes. `false` when it is not current (a `_refresh`, a
/// replacement or an expiry elsewhere): then nothing written stays under `id` — nobody
/// was given it yet, and what was written is never read — and no G5 mark is set (only
/// `holds`, the hint that retrieval tools are worth offering, which the result served in
/// its place sets again).
///
/// `unchecked`: the org's config epoch and the thread's G5 marks this call has not read
/// yet (a call served from this replica's memory, `call::memory_hit`): they are read in
/// the same round trip, and what was written is taken back the same way when the epoch
/// is not the one the call assumed or the thread is marked restricted.
#[allow(clippy::too_many_arguments)]
pub async fn put(
    kv: &Kv,
    t: &ThreadKey,
    id: &str,
    body: Body<'_>,
    provenance: &Provenance,
    truncated: bool,
    unconfirmed: Option<&Held>,
    unchecked: Option<&Unchecked<'_>>,
) -> Result<bool, KvError> {
    let prov = serde_json::to_string(provenance).unwrap_or_default();
    let pointer;
    let body = match body {
        Body::Text(text) => text,
        Body::Cached(held) => {
            pointer = format!("@{}", held.pointer());
            &pointer
        }
    };
    let (prov_key, res_key) = (t.key("prov", id), t.key("res", id));
    let (seen_key, holds_key) = (t.key("seen", id), t.key("holds", ""));
    let mut shared = true;
    if body.len() > kv::PIECE_BYTES {
        shared = kv.set_large(&res_key, body, kv.result_ttl()).await?;
    }
    let small =
        (body.len() <= kv::PIECE_BYTES).then_some((res_key.as_str(), body, kv.result_ttl()));
    let items: Vec<(&str, &str, Duration)> = [
        (prov_key.as_str(), prov.as_str(), kv.result_ttl()),
        (seen_key.as_str(), "1", TOMBSTONE_TTL),
        (holds_key.as_str(), "1", kv.result_ttl()),
    ]
    .into_iter()
    .chain(small)
    .collect();
    let restricted = t.key("restricted", "");
    let (heads, many) = probes(unconfirmed, unchecked, &restricted);
    let read = kv.set_many_reading(&heads, &many, &items).await?;
    let small_shared = read.in_redis;
    if !still_current(&read, unconfirmed, unchecked) {
        kv.del_many(&[&res_key, &prov_key, &seen_key]).await?;
        return Ok(false);
    }
    if !(shared && small_shared) {
        copy(kv, t, body, [&res_key, &prov_key, &seen_key], &prov).await?;
    }
    if truncated {
        let mut map = pending_map(kv, t).await?;
        map.insert(
            id.to_string(),
            now_ms() + kv.result_ttl().as_millis() as i64,
        );
        save_pending(kv, t, &map).await?;
    }
    Ok(true)
}

/// What a call served from this replica's memory assumed without reading it
/// ([`put`], [`confirm`]): the org's config epoch its agent and thread were remembered at,
/// and that its thread is not restricted (G5).
pub struct Unchecked<'a> {
    /// The key of the org's config epoch (`call::agent_memory::epoch_key`).
    pub epoch_key: &'a str,
    pub epoch: &'a str,
}

/// What a [`put`] (or [`confirm`]) reads: the head of the entry (its version), and in one
/// `MGET` the epoch and the thread's restriction mark, as far as they are unconfirmed.
fn probes<'a>(
    unconfirmed: Option<&'a Held>,
    unchecked: Option<&'a Unchecked<'a>>,
    restricted: &'a str,
) -> (Vec<(&'a str, usize)>, Vec<&'a str>) {
    let heads = unconfirmed
        .map(|h| dataset_cache::version_probe(&h.key))
        .into_iter()
        .collect();
    let many = match unchecked {
        Some(u) => vec![u.epoch_key, restricted],
        None => Vec::new(),
    };
    (heads, many)
}

/// Whether what [`probes`] read says the call's assumptions still hold. Unchecked
/// assumptions hold only as Redis answered them: no replica's own map stands in for the
/// epoch every replica shares.
fn still_current(
    read: &kv::Read,
    unconfirmed: Option<&Held>,
    unchecked: Option<&Unchecked<'_>>,
) -> bool {
    if let Some(held) = unconfirmed {
        let head = read.heads.first().and_then(Option::as_deref);
        if dataset_cache::version_in(head) != Some(held.version()) {
            return false;
        }
    }
    if let Some(u) = unchecked {
        let epoch = read.many.first().and_then(Option::as_deref);
        let restricted = read.many.get(1).and_then(Option::as_ref);
        return read.in_redis && epoch == Some(u.epoch) && restricted.is_none();
    }
    true
}

/// [`put`]'s checks alone, for a result that is not kept (one round trip, nothing
/// written): whether `unconfirmed` is the current version and `unchecked` still holds.
pub async fn confirm(
    kv: &Kv,
    t: &ThreadKey,
    unconfirmed: Option<&Held>,
    unchecked: Option<&Unchecked<'_>>,
) -> Result<bool, KvError> {
    if unconfirmed.is_none() && unchecked.is_none() {
        return Ok(true);
    }
    let restricted = t.key("restricted", "");
    let (heads, many) = probes(unconfirmed, unchecked, &restricted);
    let read = kv.set_many_reading(&heads, &many, &[]).await?;
    Ok(still_current(&read, unconfirmed, unchecked))
}

/// K2: a result Redis did not take, written to Postgres (when configured) so every
/// replica reads it: its text (a pointer followed here: the entry is this replica's alone),
/// provenance and tombstone.
async fn copy(
    kv: &Kv,
    t: &ThreadKey,
    body: &str,
    [res_key, prov_key, seen_key]: [&str; 3],
    prov: &str,
) -> Result<(), KvError> {
    let Some(pool) = kv.copies() else {
        return Ok(());
    };
    let followed;
    let text = match body.strip_prefix('@') {
        Some(pointer) => {
            followed = dataset_cache::follow(kv, pointer).await?.ok_or_else(|| {
                KvError(anyhow::anyhow!(
                    "the cache entry of a result went while it was kept"
                ))
            })?;
            followed.as_str()
        }
        None => body,
    };
    let items = [
        (res_key, text, kv.result_ttl()),
        (prov_key, prov, kv.result_ttl()),
        (seen_key, "1", TOMBSTONE_TTL),
    ];
    result_copies::put(pool, &t.org, &items)
        .await
        .map_err(|e| KvError(anyhow::Error::new(e).context("could not copy a result to Postgres")))
}

/// K2: the copy of `key` kept in Postgres (when configured).
async fn copied(kv: &Kv, t: &ThreadKey, key: &str) -> Result<Option<String>, KvError> {
    let Some(pool) = kv.copies() else {
        return Ok(None);
    };
    result_copies::get(pool, &t.org, key)
        .await
        .map_err(|e| KvError(anyhow::Error::new(e).context("could not read a result's copy")))
}

/// The stored payload (JSON text), or why it cannot be read.
pub async fn load(kv: &Kv, t: &ThreadKey, id: &str) -> Result<String, ResultError> {
    let res_key = t.key("res", id);
    if let Some(v) = kv.get_large(&res_key).await? {
        let Some(pointer) = v.strip_prefix('@') else {
            return Ok(v);
        };
        // a result points only at an entry that outlives it (`Held::outlives`), and a
        // replaced one stays readable as long (`dataset_cache::retired_ttl`): an entry gone
        // while the result lives was lost (K5); one this replica kept meanwhile was copied
        if let Some(text) = dataset_cache::follow(kv, pointer).await? {
            return Ok(text);
        }
        return match copied(kv, t, &res_key).await? {
            Some(text) => Ok(text),
            None => Err(ResultError::Lost(id.to_string())),
        };
    }
    // K2: made while Redis was out of reach (by any replica)
    if let Some(text) = copied(kv, t, &res_key).await? {
        return Ok(text);
    }
    let seen_key = t.key("seen", id);
    if kv.get(&seen_key).await?.is_some() || copied(kv, t, &seen_key).await?.is_some() {
        return Err(ResultError::expired(kv, id));
    }
    if kv.degraded() {
        return Err(ResultError::Unreachable(id.to_string()));
    }
    // K5: made before the store's data began, and not past its TTL: the store lost it
    if let Some(made) = made_at(id) {
        let now = now_ms();
        if made + kv.result_ttl().as_millis() as i64 <= now {
            return Err(ResultError::expired(kv, id));
        }
        match kv.get(STORE_BORN).await? {
            // the store's data began after this result was made
            Some(born) if born.parse::<i64>().is_ok_and(|b| b > made) => {
                return Err(ResultError::Lost(id.to_string()));
            }
            Some(_) => {}
            // gone with the store's data: from now on it says when the data began
            None => mark_store_born(kv).await?,
        }
    }
    Err(ResultError::NotFound(id.to_string()))
}

/// Q1: how complete the stored result's walk was (`None` for results stored before
/// provenance was kept).
pub async fn provenance(kv: &Kv, t: &ThreadKey, id: &str) -> Result<Option<Provenance>, KvError> {
    let key = t.key("prov", id);
    let text = match kv.get(&key).await? {
        Some(text) => Some(text),
        None => copied(kv, t, &key).await?,
    };
    Ok(text.and_then(|s| serde_json::from_str(&s).ok()))
}

/// The agent read this result: it no longer holds the thread back.
pub async fn mark_read(kv: &Kv, t: &ThreadKey, id: &str) -> Result<(), KvError> {
    let mut map = pending_map(kv, t).await?;
    if map.remove(id).is_some() || map.is_empty() {
        save_pending(kv, t, &map).await?;
    }
    Ok(())
}

/// What a thread's marks say, read in one round trip ([`thread_marks`]).
#[derive(Debug, Clone)]
pub struct Marks {
    /// G5: cut results still unread (expired ones no longer count).
    pub pending: Vec<String>,
    /// A restricted step was handed out and some cut result is still unread: other tools
    /// are refused.
    pub restricted: bool,
    /// The thread holds a readable stored result (then retrieval tools are offered).
    pub holds: bool,
}

/// The thread's G5 marks in one round trip (`MGET`): for an unrestricted thread that is
/// the whole cost of the restriction check. An expired mark also lifts the restriction
/// (one more command, only then).
pub async fn thread_marks(kv: &Kv, t: &ThreadKey) -> Result<Marks, KvError> {
    let keys = mark_keys(t);
    let got = kv.get_many(&[&keys[0], &keys[1], &keys[2]]).await?;
    marks_of(kv, &keys, got).await
}

/// [`thread_marks`] with the value of `shared` read in the same round trip, as
/// [`Kv::get_shared_and_many`] reads it (the org's config epoch,
/// [`crate::call::agent_memory`]).
pub async fn thread_marks_with(
    kv: &Kv,
    t: &ThreadKey,
    shared: &str,
) -> Result<(Option<Option<String>>, Marks), KvError> {
    let keys = mark_keys(t);
    let (shared, got) = kv
        .get_shared_and_many(shared, &[&keys[0], &keys[1], &keys[2]])
        .await?;
    Ok((shared, marks_of(kv, &keys, got).await?))
}

/// The keys of the marks: restricted, pending, holds.
fn mark_keys(t: &ThreadKey) -> [String; 3] {
    [
        t.key("restricted", ""),
        t.key("pending", ""),
        t.key("holds", ""),
    ]
}

async fn marks_of(kv: &Kv, keys: &[String; 3], got: Vec<Option<String>>) -> Result<Marks, KvError> {
    let mut got = got.into_iter();
    let (restricted, pending, holds) = (got.next().flatten(), got.next().flatten(), got.next());
    let pending: Vec<String> = live_pending(pending).into_keys().collect();
    if restricted.is_some() && pending.is_empty() {
        kv.del(&keys[0]).await?;
    }
    Ok(Marks {
        restricted: restricted.is_some() && !pending.is_empty(),
        pending,
        holds: holds.flatten().is_some(),
    })
}

/// Records that a restricted step was handed out: from now on other tools are refused.
pub async fn set_restricted(kv: &Kv, t: &ThreadKey) -> Result<(), KvError> {
    kv.set(&t.key("restricted", ""), "1", kv.result_ttl()).await
}

/// The next model step's number in this thread.
pub async fn next_step(kv: &Kv, t: &ThreadKey) -> Result<i64, KvError> {
    kv.incr(&t.key("step", ""), TOMBSTONE_TTL).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k5_a_result_id_carries_when_it_was_made() {
        let at = 1_764_000_000_123;
        let (a, b) = (new_result_id(at), new_result_id(at));
        assert_ne!(a, b, "unguessable");
        assert_eq!(a.len(), b.len(), "one length, for presented templates");
        assert_eq!(made_at(&a), Some(at));
        assert_eq!(made_at("res_1"), None);
        assert_eq!(made_at(&format!("res_{}", "z".repeat(43))), None);
        assert_eq!(made_at(&format!("{a}x")), None);
    }
}
