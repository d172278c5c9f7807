//! The shared core of running one bound tool: credential, dataset cache (lookup,
//! coalescing across tasks and replicas, write of complete walks) and the walk itself.
//! Tool calls present its outcome for a conversation; workflow steps shape it as W2.

use std::sync::Arc;

use std::time::Duration;
use tracing::Instrument as _;

use chrono::{DateTime, Utc};
use secrecy::ExposeSecret;

use crate::auth::Caller;
use crate::results::dataset_cache;
use crate::store::deployments::CacheMode;
use crate::store::OrgId;
use crate::telemetry::metrics::Metrics;
use crate::walk::credential::{cache_scope, Credential};
use crate::walk::engine_ports::{HttpUpstream, SystemClock};
use crate::walk::progress_relay::Relay;
use crate::walk::{BoundTool, RuntimeError, Walker};
use loopgate_engine::{CallPlan, Outcome, ProgressSink};

/// The least wall-clock time a walk is given after waiting for another (K3): enough for
/// a first page, so the caller gets an honest partial answer rather than none.
const MIN_WALL_LEFT: Duration = Duration::from_secs(1);

/// How one run may use the dataset cache.
#[derive(Debug, Clone, Copy)]
pub struct CacheUse {
    /// The deployment's mode (C6), or `Off` where the caller opts out (W4).
    pub mode: CacheMode,
    /// Experiment runs never read from or write to the cache.
    pub experiment: bool,
    /// Replaces the binding's TTL (a workflow step's `cache.ttl_minutes`).
    pub ttl: Option<Duration>,
    /// A hit may be served from this replica's memory before Redis names the current
    /// version: the caller asks it in the round trip that stores the result
    /// ([`Fetched::unconfirmed`]), and fetches again without this when it is not.
    pub confirm_later: bool,
}

/// What a run of a bound tool produced.
pub struct Fetched {
    /// Shared with this replica's memory of the cache entry on a hit (never copied).
    pub outcome: Arc<Outcome>,
    /// Served from the cache: when it was cached and when it expires for this reader.
    pub hit: Option<(DateTime<Utc>, DateTime<Utc>)>,
    /// A complete walk that was too large to be cached.
    pub too_large: bool,
    /// The cache entry that holds this outcome (served from it, or just written).
    pub held: Option<dataset_cache::Held>,
    /// The outcome's stored text when the walk already wrote it (for the cache), so it
    /// is built once; the outcome's rows read from it.
    pub stored: Option<loopgate_engine::StoredJson>,
    /// A hit from this replica's memory whose version (`held`'s) Redis has not confirmed
    /// yet ([`CacheUse::confirm_later`]): not counted as a hit until it is.
    pub unconfirmed: bool,
}

impl Walker {
    /// Runs `plan` against the bound tool's upstream with the caller's credential,
    /// reading and writing the dataset cache as `cache` allows.
    pub(crate) async fn fetch<P: ProgressSink + Sync>(
        &self,
        caller: &Caller,
        bound: &BoundTool,
        plan: &CallPlan,
        credential: Credential,
        cache: CacheUse,
        progress: &P,
    ) -> Result<Fetched, RuntimeError> {
        let mode = cache.mode;
        let (key, ttl) = self.cache_key(caller, bound, plan, &credential, cache);
        let ttl_chrono = chrono::Duration::from_std(ttl).unwrap_or_default();
        // C3: the reader's TTL decides, whether the entry came from Redis or this replica's memory
        let fresh = |d: &dataset_cache::Decoded| self.clock.now() - d.cached_at < ttl_chrono;
        let hit = |d: Arc<dataset_cache::Decoded>, key: &str| Fetched {
            outcome: d.outcome.clone(),
            hit: Some((d.cached_at, d.cached_at + ttl_chrono)),
            too_large: false,
            held: Some(d.held(key)),
            stored: None,
            unconfirmed: false,
        };
        let lookup = key.as_deref().filter(|_| !plan.refresh);
        // a hit takes no lock: only calls that would walk wait for one another
        if let Some(f) = self.memory_hit_of(key.as_deref(), plan, cache, ttl) {
            return Ok(f);
        }
        if let Some(k) = lookup {
            let found = self
                .cached(caller.org(), k)
                .instrument(crate::stage!("cache_lookup"))
                .await?;
            if let Some(d) = found.filter(|d| fresh(d)) {
                if mode == CacheMode::On {
                    Metrics::inc(&self.metrics.cache_hits);
                    return Ok(hit(d, k));
                }
                Metrics::inc(&self.metrics.cache_shadow_hits);
            }
        }
        // C1: identical walks in this process run once; whoever waited for another's walk
        // looks again before walking. K4: only calls that can use that walk's result wait
        // for it — a `_refresh` never takes the lock (it would not read what it waited
        // for), and a waiter that finds no entry (that walk ended partial, or failed) gives
        // the lock back at once and walks beside the others rather than behind them.
        let lock = match (lookup, mode) {
            (Some(k), CacheMode::On) => Some(self.coalescer.lock_for(k)),
            _ => None,
        };
        let started = tokio::time::Instant::now();
        let (mut coalesced, mut waited) = (None, false);
        if let Some(l) = &lock {
            match l.clone().try_lock_owned() {
                Ok(g) => coalesced = Some(g),
                Err(_) => {
                    waited = true;
                    // K3: a draining replica does not wait past its cut
                    tokio::select! {
                        g = l.clone().lock_owned() => drop(g),
                        () = self.drain.cut_signal() => {}
                    }
                    if let Some(k) = lookup {
                        if let Some(d) = self.cached(caller.org(), k).await?.filter(|d| fresh(d)) {
                            Metrics::inc(&self.metrics.cache_hits);
                            return Ok(hit(d, k));
                        }
                    }
                }
            }
        }
        if lookup.is_some() {
            Metrics::inc(&self.metrics.cache_misses);
        }
        // another replica walking the same key: wait for its entry rather than walk twice
        // (K3: its claim is short and renewed, so a dead replica's is gone within seconds,
        // and the wait ends within this call's own wall-clock bound or at the drain's cut).
        // K4: a call waits once at most — one that waited here already walks now
        let mut claim = None;
        if let (Some(k), CacheMode::On) = (&key, mode) {
            claim = dataset_cache::claim(&self.kv, k).await?;
            if claim.is_none() && !plan.refresh && !waited {
                let wait = self.limits.wall.saturating_sub(started.elapsed());
                let cut = self.drain.cut_signal();
                if let Some(entry) = dataset_cache::await_peer(&self.kv, k, wait, cut).await? {
                    let d = self.decode(caller.org(), k, entry).await;
                    if fresh(&d) {
                        Metrics::inc(&self.metrics.cache_hits);
                        return Ok(hit(d, k));
                    }
                }
            }
        }
        // a walk after a wait has what is left of the call's wall-clock bound (K3)
        let wall = self.limits.wall.saturating_sub(started.elapsed());
        let walked = self
            .walk_and_cache(
                caller,
                bound,
                plan,
                credential,
                key.as_deref(),
                ttl,
                wall.max(MIN_WALL_LEFT),
                progress,
            )
            .instrument(crate::stage!("upstream_walk"))
            .await;
        drop(coalesced);
        if let Some(c) = claim {
            c.release(&self.kv).await?;
        }
        walked
    }

    /// The call's dataset cache key (none when the call may not use the cache, C1, C6),
    /// and the TTL its reader judges freshness by (C3).
    fn cache_key(
        &self,
        caller: &Caller,
        bound: &BoundTool,
        plan: &CallPlan,
        credential: &Credential,
        cache: CacheUse,
    ) -> (Option<String>, Duration) {
        let (scope, binding_ttl) = cache_scope(caller, credential, bound.binding.dataset_ttl_hours);
        let ttl = cache.ttl.unwrap_or(binding_ttl);
        // C1, C6: only walks (reserved arguments), never experiments, never with cache off
        let key =
            (plan.uses_reserved && !cache.experiment && cache.mode != CacheMode::Off).then(|| {
                dataset_cache::key(
                    caller.org(),
                    &bound.tool.id,
                    &plan.cache_identity(),
                    &scope,
                    &self.fingerprint_key,
                    credential.secret().map(|s| s.expose_secret()),
                )
            });
        (key, ttl)
    }

    /// A fresh hit from this replica's memory whose version Redis has not confirmed
    /// ([`CacheUse::confirm_later`]): found without any I/O, or `None`.
    pub(crate) fn memory_hit(
        &self,
        caller: &Caller,
        bound: &BoundTool,
        plan: &CallPlan,
        credential: &Credential,
        cache: CacheUse,
    ) -> Option<Fetched> {
        let (key, ttl) = self.cache_key(caller, bound, plan, credential, cache);
        self.memory_hit_of(key.as_deref(), plan, cache, ttl)
    }

    fn memory_hit_of(
        &self,
        key: Option<&str>,
        plan: &CallPlan,
        cache: CacheUse,
        ttl: Duration,
    ) -> Option<Fetched> {
        let k = key.filter(|_| !plan.refresh)?;
        if cache.mode != CacheMode::On || !cache.confirm_later {
            return None;
        }
        let ttl = chrono::Duration::from_std(ttl).unwrap_or_default();
        let d = self
            .cache_memory
            .latest_entry(k)
            .filter(|d| self.clock.now() - d.cached_at < ttl)?;
        Some(Fetched {
            outcome: d.outcome.clone(),
            hit: Some((d.cached_at, d.cached_at + ttl)),
            too_large: false,
            held: Some(d.held(k)),
            stored: None,
            unconfirmed: true,
        })
    }

    /// The current entry of cache key `key`, decoded: from this replica's memory when
    /// Redis says the version it holds is still current (a few bytes moved), else read
    /// whole, parsed off the async workers, and kept. Hits arriving together for a version
    /// new to this replica wait for one read of it rather than each read and parse it (a
    /// large entry is then held once, not once per waiting call).
    #[tracing::instrument(name = "cache_lookup", skip_all, fields(loopgate.cache_hit = tracing::field::Empty))]
    async fn cached(
        &self,
        org: &OrgId,
        key: &str,
    ) -> Result<Option<Arc<dataset_cache::Decoded>>, RuntimeError> {
        let found = self.read_cached(org, key).await;
        if let Ok(f) = &found {
            tracing::Span::current().record("loopgate.cache_hit", f.is_some());
        }
        found
    }

    async fn read_cached(
        &self,
        org: &OrgId,
        key: &str,
    ) -> Result<Option<Arc<dataset_cache::Decoded>>, RuntimeError> {
        let mut gate = None;
        if self.cache_memory.enabled() {
            let Some(version) = dataset_cache::current_version(&self.kv, key).await? else {
                self.cache_memory.forget(key);
                return Ok(None);
            };
            if let Some(d) = self.cache_memory.entry(key, version) {
                return Ok(Some(d));
            }
            gate = Some((self.coalescer.lock_for(&format!("{key} read")), version));
        }
        let _reading = match &gate {
            Some((g, version)) => match g.try_lock() {
                // a read that ended since this call looked is as good as one waited for
                Ok(reading) => match self.cache_memory.entry(key, *version) {
                    Some(d) => return Ok(Some(d)),
                    None => Some(reading),
                },
                Err(_) => {
                    // another call is reading it: wait, then take what it kept (or read too,
                    // if it could not be kept)
                    drop(g.lock().await);
                    if let Some(v) = dataset_cache::current_version(&self.kv, key).await? {
                        if let Some(d) = self.cache_memory.entry(key, v) {
                            return Ok(Some(d));
                        }
                    }
                    None
                }
            },
            None => None,
        };
        Ok(match dataset_cache::read(&self.kv, key).await? {
            Some(entry) => Some(self.decode(org, key, entry).await),
            None => None,
        })
    }

    /// Parses `entry` (work proportional to it, as `walk::cpu_jobs` decides) and keeps it
    /// in this replica's memory.
    async fn decode(
        &self,
        org: &OrgId,
        key: &str,
        entry: dataset_cache::Entry,
    ) -> Arc<dataset_cache::Decoded> {
        let size = entry.stored.len();
        let d = Arc::new(self.cpu.run(org, size, move || entry.decode_rows()).await);
        self.cache_memory.keep_entry(key, d.clone());
        d
    }

    /// Walks upstream and caches a complete walk under `key`.
    #[allow(clippy::too_many_arguments)]
    #[tracing::instrument(name = "walk", skip_all, fields(loopgate.provider = %bound.provider.id, loopgate.tool = %bound.tool.name,
        loopgate.pages = tracing::field::Empty, loopgate.requests = tracing::field::Empty,
        loopgate.items = tracing::field::Empty, loopgate.stopped_by = tracing::field::Empty))]
    async fn walk_and_cache<P: ProgressSink + Sync>(
        &self,
        caller: &Caller,
        bound: &BoundTool,
        plan: &CallPlan,
        credential: Credential,
        key: Option<&str>,
        ttl: Duration,
        wall: Duration,
        progress: &P,
    ) -> Result<Fetched, RuntimeError> {
        let _slot = self.slots.acquire(caller.org()).await?;
        // M1: an MCP tool's own progress joins the walk's, under the same throttle
        let relay = Relay::new(progress, &self.limits);
        let upstream = HttpUpstream::new(self, caller.org(), bound, credential).relaying(&relay);
        // P9: the provider's own concurrency bound, where it has one; K3: what is left of
        // the wall-clock bound after a wait for another walk
        let own_limits;
        let limits = match (bound.provider.concurrency, wall < self.limits.wall) {
            (None, false) => &self.limits,
            (concurrency, _) => {
                own_limits = loopgate_engine::Limits {
                    concurrency: concurrency.map_or(self.limits.concurrency, |c| c as usize),
                    wall: wall.min(self.limits.wall),
                    ..self.limits.clone()
                };
                &own_limits
            }
        };
        let started = std::time::Instant::now();
        let outcome = loopgate_engine::run(
            plan,
            &bound.analysis,
            &upstream,
            &relay,
            &SystemClock {
                drain: &self.drain,
                cancel: crate::walk::cancel::current(),
            },
            limits,
        )
        .await?;
        self.metrics.observe_walk(
            outcome.pages,
            outcome.requests,
            outcome.items.len(),
            outcome.verdict.stopped_by.map(|s| s.as_str()),
        );
        let span = tracing::Span::current();
        span.record("loopgate.pages", outcome.pages);
        span.record("loopgate.requests", outcome.requests);
        span.record("loopgate.items", outcome.items.len());
        if let Some(s) = outcome.verdict.stopped_by {
            span.record("loopgate.stopped_by", s.as_str());
        }
        self.metrics.observe_walk_outcome(
            &bound.provider.id,
            outcome.verdict.stopped_by.map(|s| s.as_str()),
            started.elapsed(),
        );
        let (mut too_large, mut held, mut stored_text) = (false, None, None);
        let mut outcome = outcome;
        if let Some(k) = key {
            if outcome.is_complete() {
                let size = outcome_bytes(&outcome);
                // the rows move into the stored text: one copy of them from here on
                let (back, stored) = self
                    .cpu
                    .run(caller.org(), size, move || {
                        let stored = outcome.store();
                        (outcome, stored)
                    })
                    .await;
                outcome = back;
                let cached_at = self.clock.now();
                let head = dataset_cache::Head {
                    cached_at,
                    expires_at: cached_at + chrono::Duration::from_std(ttl).unwrap_or_default(),
                    shape: Some(outcome.shape()),
                };
                let max = self.cache_max_entry_bytes;
                let written = dataset_cache::write(&self.kv, k, &head, &stored, ttl, max).await?;
                too_large = written == dataset_cache::Written::TooLarge;
                // K2: a result points only at an entry every replica reads
                held = (written == dataset_cache::Written::Shared).then(|| head.held(k));
                stored_text = Some(stored);
            }
        }
        Ok(Fetched {
            outcome: Arc::new(outcome),
            hit: None,
            too_large,
            held,
            stored: stored_text,
            unconfirmed: false,
        })
    }
}

/// What a job over `outcome` is proportional to: its rows' text (or the raw bytes fetched).
pub(crate) fn outcome_bytes(outcome: &Outcome) -> usize {
    let rows: usize = outcome.items.iter().map(|i| i.len()).sum();
    rows.max(outcome.bytes)
}
