//! An org's requests per second on loopgate's own API, for all replicas together: the
//! process's keyed governor in front at the full rate, then the shared GCRA; with Redis
//! unreachable, a per-process governor at the rate divided by the replica count.

use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

use super::{Decision, Shared};

pub struct OrgRequests {
    per_second: u32,
    local: DefaultKeyedRateLimiter<String>,
    fallback: DefaultKeyedRateLimiter<String>,
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
            shared,
        }
    }

    pub fn per_second(&self) -> u32 {
        self.per_second
    }

    /// `Err(wait)` when the org is over its rate (nothing was taken then).
    pub async fn check(&self, org: &str) -> Result<(), Duration> {
        let wait = |l: &DefaultKeyedRateLimiter<String>| {
            l.check_key(&org.to_string())
                .map_err(|not_until| not_until.wait_time_from(DefaultClock::default().now()))
        };
        wait(&self.local)?;
        let key = format!("lg:quota:org:{org}:requests");
        match self
            .shared
            .rate(&key, f64::from(self.per_second), self.per_second)
            .await
        {
            Decision::Allowed => Ok(()),
            Decision::Wait(d) => Err(d),
            Decision::Unavailable => wait(&self.fallback),
        }
    }
}
