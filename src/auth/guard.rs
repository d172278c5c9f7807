//! Protection of authentication itself, one owner for it:
//! - failed attempts are throttled per source address (a burst, then one every
//!   [`FAILURE_PERIOD`]); past it every attempt from that address is a 429 with
//!   `Retry-After`, before any lookup;
//! - API key ids found unknown or revoked are remembered for [`NEGATIVE_TTL`], so a
//!   flood of garbage keys costs no database query (malformed keys never reach it: see
//!   `api_keys::key_id_of`);
//! - a runtime token's liveness (minting key not revoked, token not revoked) is checked
//!   on use and remembered for [`ALIVE_TTL`]; any revocation made through this process
//!   forgets every remembered token at once, other replicas within `ALIVE_TTL`.
//!
//! - the address is the TCP peer's, or behind configured `trusted_proxies` the client's
//!   from `X-Forwarded-For` ([`TrustedProxies`]).
//!
//! All state is in-process and bounded ([`MAX_ENTRIES`] per map, cleared when full).

use std::collections::HashMap;
use std::hash::Hash;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

use super::proxies::TrustedProxies;

/// Failed authentications allowed at once from one address.
pub const FAILURE_BURST: u32 = 30;
/// Then one more per period.
pub const FAILURE_PERIOD: Duration = Duration::from_secs(2);
pub const NEGATIVE_TTL: Duration = Duration::from_secs(60);
pub const ALIVE_TTL: Duration = Duration::from_secs(5);
pub const MAX_ENTRIES: usize = 10_000;

pub struct AuthGuard {
    failures: DefaultKeyedRateLimiter<IpAddr>,
    blocked: Mutex<HashMap<IpAddr, Instant>>,
    unknown_keys: Mutex<HashMap<String, Instant>>,
    alive_tokens: Mutex<HashMap<String, Instant>>,
    proxies: TrustedProxies,
}

impl Default for AuthGuard {
    fn default() -> Self {
        let burst = NonZeroU32::new(FAILURE_BURST).unwrap_or(NonZeroU32::MIN);
        let quota = Quota::with_period(FAILURE_PERIOD)
            .unwrap_or_else(|| Quota::per_second(NonZeroU32::MIN))
            .allow_burst(burst);
        Self {
            failures: RateLimiter::keyed(quota),
            blocked: Mutex::default(),
            unknown_keys: Mutex::default(),
            alive_tokens: Mutex::default(),
            proxies: TrustedProxies::default(),
        }
    }
}

/// Whether `key` was remembered less than `ttl` ago.
fn fresh<K: Eq + Hash>(map: &Mutex<HashMap<K, Instant>>, key: &K, ttl: Duration) -> bool {
    map.lock()
        .ok()
        .and_then(|m| m.get(key).map(|at| at.elapsed() < ttl))
        .unwrap_or(false)
}

fn remember<K: Eq + Hash>(map: &Mutex<HashMap<K, Instant>>, key: K, at: Instant) {
    if let Ok(mut m) = map.lock() {
        if m.len() >= MAX_ENTRIES {
            m.clear();
        }
        m.insert(key, at);
    }
}

impl AuthGuard {
    /// Behind these reverse proxies, the client address is read from `X-Forwarded-For`.
    pub fn behind(proxies: TrustedProxies) -> Self {
        Self {
            proxies,
            ..Self::default()
        }
    }

    /// The address failures are counted against: the peer, or behind a trusted proxy
    /// the client it forwarded for.
    pub fn source(&self, peer: Option<IpAddr>, forwarded_for: &[&str]) -> Option<IpAddr> {
        self.proxies.client(peer, forwarded_for)
    }

    /// `Err(wait)` while `ip` is over its allowance of failed attempts.
    pub fn admit(&self, ip: Option<IpAddr>) -> Result<(), Duration> {
        let Some(ip) = ip else { return Ok(()) };
        let until = self.blocked.lock().ok().and_then(|m| m.get(&ip).copied());
        match until {
            Some(t) if t > Instant::now() => Err(t - Instant::now()),
            _ => Ok(()),
        }
    }

    /// Counts one failed attempt from `ip`; past the allowance the address is refused
    /// until the limiter would admit it again.
    pub fn failed(&self, ip: Option<IpAddr>) {
        let Some(ip) = ip else { return };
        if let Err(not_until) = self.failures.check_key(&ip) {
            let wait = not_until.wait_time_from(DefaultClock::default().now());
            remember(&self.blocked, ip, Instant::now() + wait);
        }
    }

    /// An API key id recently found unknown or revoked.
    pub fn is_unknown_key(&self, id: &str) -> bool {
        fresh(&self.unknown_keys, &id.to_string(), NEGATIVE_TTL)
    }

    pub fn remember_unknown_key(&self, id: &str) {
        remember(&self.unknown_keys, id.to_string(), Instant::now());
    }

    /// A runtime token recently found alive.
    pub fn token_recently_alive(&self, token_id: &str) -> bool {
        fresh(&self.alive_tokens, &token_id.to_string(), ALIVE_TTL)
    }

    pub fn remember_alive(&self, token_id: &str) {
        remember(&self.alive_tokens, token_id.to_string(), Instant::now());
    }

    /// After a key or token revocation: every token is checked again on its next use.
    pub fn forget_alive_tokens(&self) {
        if let Ok(mut m) = self.alive_tokens.lock() {
            m.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_past_the_burst_block_the_address_only() {
        let g = AuthGuard::default();
        let a: IpAddr = [10, 0, 0, 1].into();
        let b: IpAddr = [10, 0, 0, 2].into();
        for _ in 0..FAILURE_BURST {
            assert!(g.admit(Some(a)).is_ok());
            g.failed(Some(a));
        }
        g.failed(Some(a));
        assert!(g.admit(Some(a)).is_err(), "past the burst");
        assert!(g.admit(Some(b)).is_ok(), "another address is unaffected");
        assert!(g.admit(None).is_ok());
    }

    #[test]
    fn negative_and_alive_caches() {
        let g = AuthGuard::default();
        assert!(!g.is_unknown_key("key_x"));
        g.remember_unknown_key("key_x");
        assert!(g.is_unknown_key("key_x"));
        g.remember_alive("rt_1");
        assert!(g.token_recently_alive("rt_1"));
        g.forget_alive_tokens();
        assert!(!g.token_recently_alive("rt_1"));
    }
}
