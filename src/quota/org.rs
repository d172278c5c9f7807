//! An org's requests per second on loopgate's own API, for all replicas together: the
//! process's keyed governor in front at the full rate, then the org's lease of the shared
//! GCRA ([`RateLease`], burst = the rate: most calls spend a leased permit without a Redis
//! round trip); with Redis unreachable, a per-process governor at the rate divided by the
//! replica count. At most [`TRACKED`] orgs' leases are kept before idle ones are dropped
//! (an idle lease holds nothing, so dropping it changes no decision).

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

use super::lease::RateLease;
use super::{Decision, Shared};

/// Orgs whose lease is kept before idle ones are pruned.
pub const TRACKED: usize = 10_000;

pub struct OrgRequests {
    per_second: u32,
    local: DefaultKeyedRateLimiter<String>,
    fallback: DefaultKeyedRateLimiter<String>,
    leases: Mutex<HashMap<String, Arc<RateLease>>>,
    shared: Arc<Shared>,
}

fn keyed(per_second: u32) -> DefaultKeyedRateLimiter<String> {
    RateLimiter::keyed(Quota::per_second(
        NonZeroU32::new(per_second).unwrap_or(NonZeroU32::MIN),
    ))
}

impl OrgRequests {
    pub fn new(per_second: u32, shared: Arc<Shared>) -> Self {
        Self {
            per_second,
            local: keyed(per_second),
            fallback: keyed(shared.share(per_second)),
            leases: Mutex::default(),
            shared,
        }
    }

    pub fn per_second(&self) -> u32 {
        self.per_second
    }

    fn lease(&self, org: &str) -> Arc<RateLease> {
        let mut map = self
            .leases
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(l) = map.get(org) {
            return l.clone();
        }
        if map.len() >= TRACKED {
            let now = Instant::now();
            map.retain(|_, l| Arc::strong_count(l) > 1 || !l.is_idle(now));
        }
        let rate = f64::from(self.per_second);
        let lease = Arc::new(RateLease::new(
            format!("lg:quota:org:{org}:requests"),
            rate,
            self.per_second,
        ));
        map.insert(org.to_string(), lease.clone());
        lease
    }

    /// `Err(wait)` when the org is over its rate (nothing was taken then).
    pub async fn check(&self, org: &str) -> Result<(), Duration> {
        let wait = |l: &DefaultKeyedRateLimiter<String>| {
            l.check_key(&org.to_string())
                .map_err(|not_until| not_until.wait_time_from(DefaultClock::default().now()))
        };
        wait(&self.local)?;
        if !self.shared.is_shared() {
            return Ok(());
        }
        match self.lease(org).take(&self.shared).await {
            Decision::Allowed => Ok(()),
            Decision::Wait(d) => Err(d),
            Decision::Unavailable => wait(&self.fallback),
        }
    }
}
