//! Redis must keep every key loopgate writes until its TTL: its `maxmemory-policy` must
//! be `noeviction`. Every key carries a TTL (`docs/operations.md`, "Redis"), so the
//! `volatile-*` policies may evict any of them just as the `allkeys-*` ones do, and an
//! evicted key is read as one that never existed: a stored result or a `_continue` is
//! gone before its 15 minutes, a thread's G5 restriction lifts before the cut result
//! was read, a provider's or org's rate and an org's concurrent walks restart from
//! nothing and admit more than their bound across replicas, a followed call loses its
//! buffered events. With `noeviction` a Redis at `maxmemory` refuses writes instead:
//! those fall back to the replica's own memory, reported like an outage (`_degraded`,
//! `/readyz` detail, metrics), never silent. The org's config epoch (`lg:{org}:cfg`) is
//! safe either way: it is a random token, so one evicted and set anew matches no
//! replica's memory (a reload, not a stale agent).
//!
//! At startup [`check`] reads the policy once (`CONFIG GET maxmemory*`) and warns when it
//! evicts (or is a name this build does not know); a Redis that refuses `CONFIG` (managed
//! services often do) gets an info line.

use std::time::Duration;

use super::Redis;

/// What a `maxmemory-policy` does to keys that all carry a TTL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eviction {
    /// `noeviction`: at `maxmemory` writes are refused, nothing is removed early.
    Never,
    /// `volatile-*` and `allkeys-*`: keys may go before their TTL.
    Evicts,
    /// A name this build does not know: not `noeviction`, so possibly evicting.
    Unknown,
}

impl Eviction {
    /// Classifies a policy name as Redis reports it (case and surrounding spaces aside).
    pub fn of(policy: &str) -> Eviction {
        let policy = policy.trim().to_ascii_lowercase();
        if policy == "noeviction" {
            Eviction::Never
        } else if policy.starts_with("volatile-") || policy.starts_with("allkeys-") {
            Eviction::Evicts
        } else {
            Eviction::Unknown
        }
    }
}

/// The memory settings Redis runs with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryPolicy {
    /// `maxmemory-policy`.
    pub policy: String,
    /// `maxmemory` in bytes (0: no limit set, nothing is evicted until one is).
    pub maxmemory: u64,
}

/// Reads `maxmemory-policy` and `maxmemory` in one command (`CONFIG GET maxmemory*`, a
/// pattern every Redis version takes).
pub async fn read(redis: &Redis) -> anyhow::Result<MemoryPolicy> {
    let mut c = redis.clone();
    let got: std::collections::HashMap<String, String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("maxmemory*")
        .query_async(&mut c)
        .await?;
    let policy = got
        .get("maxmemory-policy")
        .cloned()
        .ok_or_else(|| anyhow::anyhow!("CONFIG GET returned no maxmemory-policy"))?;
    let maxmemory = got
        .get("maxmemory")
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    Ok(MemoryPolicy { policy, maxmemory })
}

/// Reads the policy once, within `budget` (`redis_timeout_ms`), and logs what it means
/// ([`report`]). Never fails: a Redis that refuses `CONFIG` or does not answer is logged
/// and the process starts as usual.
///
/// It asks on a connection of its own, dropped once read: the shared connection is opened
/// by the first call that needs it, on a server worker. Opened here, at startup, its I/O
/// task would live on the main runtime for good, and every Redis reply would cross
/// threads to reach the worker waiting for it (`scripts/bench-load`: cache hits at one
/// connection 0.52 → 0.72 ms p50, 8,100 → 7,000 calls/s at 32).
pub async fn check(url: &str, budget: Duration) -> Option<Eviction> {
    let own = async {
        let redis = super::connect(url, budget)?;
        read(&redis).await
    };
    let read = match tokio::time::timeout(budget, own).await {
        Ok(read) => read,
        Err(_) => Err(anyhow::anyhow!("Redis did not answer within {budget:?}")),
    };
    report(read)
}

/// Logs what a [`read`] found: a warning naming the policy when it evicts (or is unknown),
/// an info line when it could not be read (CONFIG disabled, as on many managed Redis),
/// debug for `noeviction`. The classification when it was read.
pub fn report(read: anyhow::Result<MemoryPolicy>) -> Option<Eviction> {
    let read = match read {
        Ok(r) => r,
        Err(e) => {
            tracing::info!(error = %e, "could not read Redis' maxmemory-policy (CONFIG may be disabled, as on managed Redis): loopgate needs maxmemory-policy noeviction, check it where Redis is configured (docs/operations.md, Redis)");
            return None;
        }
    };
    let eviction = Eviction::of(&read.policy);
    let (policy, maxmemory) = (read.policy.as_str(), read.maxmemory);
    match eviction {
        Eviction::Never => tracing::debug!(policy, maxmemory, "Redis maxmemory-policy"),
        Eviction::Evicts => tracing::warn!(policy, maxmemory, "Redis maxmemory-policy is {policy}: once Redis reaches maxmemory it evicts loopgate's keys before their TTL (all carry one), so stored results and _continue tokens expire early, G5 restrictions lift early and quotas admit more than their bound; set maxmemory-policy noeviction (docs/operations.md, Redis)"),
        Eviction::Unknown => tracing::warn!(policy, maxmemory, "Redis maxmemory-policy is {policy}, a policy loopgate does not know: it needs noeviction, or keys may go before their TTL (docs/operations.md, Redis)"),
    }
    Some(eviction)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_noeviction_keeps_keys_until_their_ttl() {
        assert_eq!(Eviction::of("noeviction"), Eviction::Never);
        assert_eq!(Eviction::of(" NoEviction\n"), Eviction::Never);
        for policy in [
            "volatile-lru",
            "volatile-lfu",
            "volatile-random",
            "volatile-ttl",
            "allkeys-lru",
            "allkeys-lfu",
            "allkeys-random",
            "ALLKEYS-LRU",
        ] {
            assert_eq!(Eviction::of(policy), Eviction::Evicts, "{policy}");
        }
        for policy in ["", "none", "lru", "noevictions", "volatile"] {
            assert_eq!(Eviction::of(policy), Eviction::Unknown, "{policy:?}");
        }
    }
}
