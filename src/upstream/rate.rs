//! Per-provider rate limits (governor, GCRA): one limiter per provider id for the whole
//! process, so every call and every walk together stay within the provider's
//! `requests_per_second` with its `burst`. Each HTTP request (each redirect hop too)
//! waits for a permit first.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};

use crate::store::providers::RateLimit;

/// One provider's limiter.
pub struct ProviderLimiter {
    limiter: DefaultDirectRateLimiter,
    limit: RateLimit,
}

impl ProviderLimiter {
    /// `None` for a rate that is not a positive, finite number.
    pub fn new(limit: &RateLimit) -> Option<Self> {
        let rps = limit.requests_per_second;
        if !(rps.is_finite() && rps > 0.0) {
            return None;
        }
        let period = Duration::try_from_secs_f64(1.0 / rps).ok()?;
        let burst = NonZeroU32::new(limit.burst.max(1))?;
        let quota = Quota::with_period(period)?.allow_burst(burst);
        Some(ProviderLimiter {
            limiter: RateLimiter::direct(quota),
            limit: limit.clone(),
        })
    }

    /// Waits until one request may be sent (and takes the permit).
    pub async fn until_ready(&self) {
        self.limiter.until_ready().await;
    }

    pub fn limit(&self) -> &RateLimit {
        &self.limit
    }
}

/// The process's limiters, by provider id.
#[derive(Default)]
pub struct RateLimits {
    by_provider: Mutex<HashMap<String, Arc<ProviderLimiter>>>,
}

impl RateLimits {
    pub fn new() -> Self {
        Self::default()
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
        let fresh = Arc::new(ProviderLimiter::new(limit)?);
        map.insert(provider_id.to_string(), fresh.clone());
        Some(fresh)
    }
}
