//! Per-provider rate limits (GCRA): one limiter per provider id for the whole process, in
//! front, and — with Redis — one shared GCRA per provider across every replica
//! ([`crate::quota`]), so every call and every walk of every replica together stay within
//! the provider's `requests_per_second` with its `burst` (leased a few permits at a time,
//! never more than the burst: see [`crate::quota::lease`] for the exact bound; a burst-1
//! provider is asked once per request). Each HTTP request (each redirect hop too) waits
//! for a permit first. With Redis unreachable, the permit comes from a
//! per-process limiter at the rate divided by the configured replica count.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};

use crate::quota::lease::RateLease;
use crate::quota::{Decision, Shared};
use crate::store::providers::RateLimit;

/// One provider's limiter.
pub struct ProviderLimiter {
    local: DefaultDirectRateLimiter,
    limit: RateLimit,
    /// The shared GCRA (this replica's lease of it) and its fallback share of the rate.
    shared: Option<(Arc<Shared>, RateLease, DefaultDirectRateLimiter)>,
}

fn governor(rps: f64, burst: u32) -> Option<DefaultDirectRateLimiter> {
    if !(rps.is_finite() && rps > 0.0) {
        return None;
    }
    let period = Duration::try_from_secs_f64(1.0 / rps).ok()?;
    let burst = NonZeroU32::new(burst.max(1))?;
    let quota = Quota::with_period(period)?.allow_burst(burst);
    Some(RateLimiter::direct(quota))
}

impl ProviderLimiter {
    /// `None` for a rate that is not a positive, finite number. Process-local only.
    pub fn new(limit: &RateLimit) -> Option<Self> {
        Some(ProviderLimiter {
            local: governor(limit.requests_per_second, limit.burst)?,
            limit: limit.clone(),
            shared: None,
        })
    }

    /// Shared by every replica through `shared` under the provider's id.
    pub fn across_replicas(
        limit: &RateLimit,
        provider_id: &str,
        shared: &Arc<Shared>,
    ) -> Option<Self> {
        let mut me = Self::new(limit)?;
        if shared.is_shared() {
            let fallback = governor(
                shared.share_rate(limit.requests_per_second),
                shared.share(limit.burst),
            )?;
            let lease = RateLease::new(
                format!("lg:quota:provider:{provider_id}"),
                limit.requests_per_second,
                limit.burst,
            );
            me.shared = Some((shared.clone(), lease, fallback));
        }
        Some(me)
    }

    /// Waits until one request may be sent (and takes the permit).
    pub async fn until_ready(&self) {
        self.local.until_ready().await;
        let Some((shared, lease, fallback)) = &self.shared else {
            return;
        };
        loop {
            match lease.take(shared).await {
                Decision::Allowed => return,
                Decision::Wait(d) => {
                    shared.metrics().observe_rate_wait(d);
                    tokio::time::sleep(d).await;
                }
                Decision::Unavailable => {
                    fallback.until_ready().await;
                    return;
                }
            }
        }
    }

    pub fn limit(&self) -> &RateLimit {
        &self.limit
    }
}

/// The process's limiters, by provider id.
#[derive(Default)]
pub struct RateLimits {
    by_provider: Mutex<HashMap<String, Arc<ProviderLimiter>>>,
    shared: Option<Arc<Shared>>,
}

impl RateLimits {
    /// Limits of this process alone.
    pub fn new() -> Self {
        Self::default()
    }

    /// Limits every replica sharing `shared`'s Redis holds together.
    pub fn across_replicas(shared: Arc<Shared>) -> Self {
        Self {
            by_provider: Mutex::default(),
            shared: Some(shared),
        }
    }

    /// The provider's limiter, created on first use and recreated (empty) when the
    /// configured rate changes; `None` (and the old one forgotten) when it has none.
    pub fn for_provider(
        &self,
        provider_id: &str,
        limit: Option<&RateLimit>,
    ) -> Option<Arc<ProviderLimiter>> {
        let mut map = self
            .by_provider
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(limit) = limit else {
            map.remove(provider_id);
            return None;
        };
        if let Some(current) = map.get(provider_id) {
            if current.limit() == limit {
                return Some(current.clone());
            }
        }
        let fresh = Arc::new(match &self.shared {
            Some(s) => ProviderLimiter::across_replicas(limit, provider_id, s)?,
            None => ProviderLimiter::new(limit)?,
        });
        map.insert(provider_id.to_string(), fresh.clone());
        Some(fresh)
    }
}
