//! The shared core of running one bound tool: credential, dataset cache (lookup,
//! coalescing across tasks and replicas, write of complete walks) and the walk itself.
//! Tool calls present its outcome for a conversation; workflow steps shape it as W2.

use std::time::Duration;

use chrono::{DateTime, Utc};
use secrecy::ExposeSecret;

use super::adapter::{HttpUpstream, SystemClock};
use super::call::{cache_scope, Credential};
use super::{cache, BoundTool, Runtime, RuntimeError};
use crate::auth::Caller;
use crate::engine::{self, CallPlan, Outcome, ProgressSink};
use crate::metrics::Metrics;
use crate::store::deployments::CacheMode;

/// How one run may use the dataset cache.
#[derive(Debug, Clone, Copy)]
pub struct CacheUse {
    /// The deployment's mode (C6), or `Off` where the caller opts out (W4).
    pub mode: CacheMode,
    /// Experiment runs never read from or write to the cache.
    pub experiment: bool,
    /// Replaces the binding's TTL (a workflow step's `cache.ttl_minutes`).
    pub ttl: Option<Duration>,
}

/// What a run of a bound tool produced.
pub struct Fetched {
    pub outcome: Outcome,
    /// Served from the cache: when it was cached and when it expires for this reader.
    pub hit: Option<(DateTime<Utc>, DateTime<Utc>)>,
    /// A complete walk that was too large to be cached.
    pub too_large: bool,
    /// The cache entry that holds this outcome (served from it, or just written).
    pub held: Option<cache::Held>,
    /// The outcome's stored text when the walk already wrote it (for the cache), so it
    /// is built once; the outcome's rows read from it.
    pub stored: Option<engine::StoredJson>,
}

impl Runtime {
    /// Runs `plan` against the bound tool's upstream with the caller's credential,
    /// reading and writing the dataset cache as `cache` allows.
    pub(crate) async fn fetch<P: ProgressSink + Sync>(
        &self,
        caller: &Caller,
        bound: &BoundTool,
        plan: &CallPlan,
        cache: CacheUse,
        progress: &P,
    ) -> Result<Fetched, RuntimeError> {
        let mode = cache.mode;
        let credential = self.credential(caller, bound).await?;
        let (scope, binding_ttl) =
            cache_scope(caller, &credential, bound.binding.dataset_ttl_hours);
        let ttl = cache.ttl.unwrap_or(binding_ttl);
        // C1, C6: only walks (reserved arguments), never experiments, never with cache off
        let key = (plan.uses_reserved && !cache.experiment && mode != CacheMode::Off).then(|| {
            cache::key(
                caller.org(),
                &bound.tool.id,
                &plan.cache_identity(),
                &scope,
                &self.fingerprint_key,
                credential.secret().map(|s| s.expose_secret()),
            )
        });
        let lock = match (&key, mode) {
            (Some(k), CacheMode::On) => Some(self.coalescer.lock_for(k)),
            _ => None,
        };
        let _coalesced = match &lock {
            Some(l) => Some(l.lock().await),
            None => None,
        };
        let ttl_chrono = chrono::Duration::from_std(ttl).unwrap_or_default();
        let fresh = |e: &cache::Entry| self.clock.now() - e.cached_at < ttl_chrono;
        let hit = |entry: cache::Entry, key: &str| {
            let held = entry.held(key);
            async move {
                let expires = entry.cached_at + ttl_chrono;
                let cached_at = entry.cached_at;
                let outcome = self
                    .cpu
                    .run(caller.org(), entry.stored.len(), move || {
                        let mut outcome = Outcome::from_stored_json(&entry.stored);
                        if let Some(shape) = &entry.shape {
                            outcome.restore_shape(shape);
                        }
                        outcome
                    })
                    .await;
                Fetched {
                    outcome,
                    hit: Some((cached_at, expires)),
                    too_large: false,
                    held: Some(held),
                    stored: None,
                }
            }
        };
        if let (Some(k), false) = (&key, plan.refresh) {
            if let Some(entry) = cache::read(&self.kv, k).await?.filter(|e| fresh(e)) {
                if mode == CacheMode::On {
                    Metrics::inc(&self.metrics.cache_hits);
                    return Ok(hit(entry, k).await);
                }
                Metrics::inc(&self.metrics.cache_shadow_hits);
            }
            Metrics::inc(&self.metrics.cache_misses);
        }
        // another replica walking the same key: wait for its entry rather than walk twice
        let mut claimed = false;
        if let (Some(k), CacheMode::On) = (&key, mode) {
            let lease = cache::walk_lease(self.limits.wall);
            claimed = cache::claim(&self.kv, k, lease).await?;
            if !claimed && !plan.refresh {
                if let Some(entry) = cache::await_peer(&self.kv, k, lease)
                    .await?
                    .filter(|e| fresh(e))
                {
                    Metrics::inc(&self.metrics.cache_hits);
                    return Ok(hit(entry, k).await);
                }
            }
        }
        let walked = self
            .walk_and_cache(
                caller,
                bound,
                plan,
                credential,
                key.as_deref(),
                ttl,
                progress,
            )
            .await;
        if let (true, Some(k)) = (claimed, &key) {
            cache::release(&self.kv, k).await?;
        }
        walked
    }

    /// Walks upstream and caches a complete walk under `key`.
    #[allow(clippy::too_many_arguments)]
    async fn walk_and_cache<P: ProgressSink + Sync>(
        &self,
        caller: &Caller,
        bound: &BoundTool,
        plan: &CallPlan,
        credential: Credential,
        key: Option<&str>,
        ttl: Duration,
        progress: &P,
    ) -> Result<Fetched, RuntimeError> {
        let _slot = self.walks.acquire(caller.org()).await?;
        let upstream = HttpUpstream::new(self, caller.org(), bound, credential);
        // P9: the provider's own concurrency bound, where it has one
        let provider_limits;
        let limits = match bound.provider.concurrency {
            Some(c) => {
                provider_limits = engine::Limits {
                    concurrency: c as usize,
                    ..self.limits.clone()
                };
                &provider_limits
            }
            None => &self.limits,
        };
        let outcome = engine::run(
            plan,
            &bound.analysis,
            &upstream,
            progress,
            &SystemClock { drain: &self.drain },
            limits,
        )
        .await?;
        self.metrics.observe_walk(
            outcome.pages,
            outcome.requests,
            outcome.items.len(),
            outcome.verdict.stopped_by.map(|s| s.as_str()),
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
                let head = cache::Head {
                    cached_at,
                    expires_at: cached_at + chrono::Duration::from_std(ttl).unwrap_or_default(),
                    shape: Some(outcome.shape()),
                };
                too_large = !cache::write(&self.kv, k, &head, &stored, ttl).await?;
                held = (!too_large).then(|| head.held(k));
                stored_text = Some(stored);
            }
        }
        Ok(Fetched {
            outcome,
            hit: None,
            too_large,
            held,
            stored: stored_text,
        })
    }
}

/// What a job over `outcome` is proportional to: its rows' text (or the raw bytes fetched).
pub(crate) fn outcome_bytes(outcome: &Outcome) -> usize {
    let rows: usize = outcome.items.iter().map(|i| i.len()).sum();
    rows.max(outcome.bytes)
}
