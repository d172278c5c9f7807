//! The runtime tokens this replica verified, so a token presented again is not
//! decoded, checked and its credentials opened on every call: the verified caller, kept
//! by the SHA-256 of the token's exact text until its `exp` (with the leeway `verify`
//! allows; [`TokenService::verify`](super::tokens::TokenService::verify) owns that rule and
//! checks it on every call, remembered or not). Only a token that verified is kept, so a
//! changed token — another text, another digest — is verified afresh. What the memory
//! never replaces: the liveness check (token or minting key revoked, `auth::guard`), which
//! runs after it on every call as before. Credentials stay `SecretString`s, wiped when an
//! entry goes.
//!
//! Bounded in entries: two generations of at most half the bound each; when the current
//! one is full it becomes the previous one and the previous one goes (a token used since is
//! moved to the current one), so a call costs a lookup or two and dropping a generation is
//! paid once per half of the bound.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use super::RuntimeCaller;

/// SHA-256 of a token's exact text.
pub type TokenDigest = [u8; 32];

/// What the memory says about a token (matched at once, never stored: no need to box).
#[allow(clippy::large_enum_variant)]
pub enum Remembered {
    /// Verified before and not expired at the instant asked.
    Valid(RuntimeCaller),
    /// Verified before, expired now (and forgotten).
    Expired,
    Unknown,
}

pub struct VerifiedTokens {
    half: usize,
    generations: Mutex<Generations>,
}

#[derive(Default)]
struct Generations {
    current: HashMap<TokenDigest, Verified>,
    previous: HashMap<TokenDigest, Verified>,
}

struct Verified {
    caller: RuntimeCaller,
    /// The token's `exp`, seconds since the epoch.
    exp: u64,
}

impl VerifiedTokens {
    /// Holds at most `bound` tokens (at least 2).
    pub fn new(bound: usize) -> Self {
        Self {
            half: (bound / 2).max(1),
            generations: Mutex::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Generations> {
        self.generations.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The caller verified from the token of `digest`, unless `expired(exp)` says it
    /// expired.
    pub fn get(&self, digest: &TokenDigest, expired: impl Fn(u64) -> bool) -> Remembered {
        let mut g = self.lock();
        if let Some(v) = g.current.get(digest) {
            if expired(v.exp) {
                g.current.remove(digest);
                return Remembered::Expired;
            }
            return Remembered::Valid(v.caller.clone());
        }
        let Some(v) = g.previous.remove(digest) else {
            return Remembered::Unknown;
        };
        if expired(v.exp) {
            return Remembered::Expired;
        }
        let caller = v.caller.clone();
        let dropped = self.insert(&mut g, *digest, v);
        drop(g);
        drop(dropped);
        Remembered::Valid(caller)
    }

    /// Remembers `caller`, verified from the token of `digest` expiring at `exp`.
    pub fn keep(&self, digest: TokenDigest, caller: &RuntimeCaller, exp: u64) {
        let v = Verified {
            caller: caller.clone(),
            exp,
        };
        let mut g = self.lock();
        let dropped = self.insert(&mut g, digest, v);
        drop(g);
        // a generation's credentials are wiped outside the lock
        drop(dropped);
    }

    /// Inserts into the current generation, first turning it into the previous one when
    /// full; returns the generation that goes, for the caller to drop after unlocking.
    fn insert(
        &self,
        g: &mut Generations,
        digest: TokenDigest,
        v: Verified,
    ) -> HashMap<TokenDigest, Verified> {
        let mut dropped = HashMap::new();
        if g.current.len() >= self.half && !g.current.contains_key(&digest) {
            dropped = std::mem::replace(&mut g.previous, std::mem::take(&mut g.current));
        }
        g.current.insert(digest, v);
        dropped
    }

    /// Tokens held now.
    pub fn len(&self) -> usize {
        let g = self.lock();
        g.current.len() + g.previous.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::OrgId;

    fn caller(user: &str) -> RuntimeCaller {
        RuntimeCaller {
            org: OrgId::trusted("org_a"),
            user_id: user.into(),
            agent_id: None,
            cache_scope: None,
            credentials: HashMap::new(),
            token_id: format!("rt_{user}"),
            minted_by: "key_a".into(),
            expires_at: chrono::DateTime::UNIX_EPOCH,
        }
    }

    fn digest(i: usize) -> TokenDigest {
        crate::crypto::sha256(format!("token {i}").as_bytes())
    }

    fn user(r: Remembered) -> Option<String> {
        match r {
            Remembered::Valid(c) => Some(c.user_id),
            Remembered::Expired | Remembered::Unknown => None,
        }
    }

    #[test]
    fn stays_within_its_bound_under_many_distinct_tokens() {
        let m = VerifiedTokens::new(8);
        let never = |_| false;
        for i in 0..1_000 {
            m.keep(digest(i), &caller(&i.to_string()), 100);
            assert!(m.len() <= 8, "{} after {i}", m.len());
            // the newest is always there
            assert_eq!(user(m.get(&digest(i), never)), Some(i.to_string()));
        }
        assert_eq!(user(m.get(&digest(0), never)), None, "the oldest went");
        // a token in use is kept while others come and go
        for i in 1_000..1_100 {
            m.keep(digest(i), &caller("x"), 100);
            assert!(m.get(&digest(999), never).is_valid(), "after {i}");
            assert!(m.len() <= 8);
        }
    }

    #[test]
    fn an_expired_token_is_refused_and_forgotten() {
        let m = VerifiedTokens::new(8);
        m.keep(digest(1), &caller("a"), 100);
        assert!(m.get(&digest(1), |exp| exp < 100).is_valid());
        assert!(matches!(
            m.get(&digest(1), |exp| exp < 101),
            Remembered::Expired
        ));
        assert!(matches!(m.get(&digest(1), |_| false), Remembered::Unknown));
        assert!(m.is_empty());
    }

    impl Remembered {
        fn is_valid(&self) -> bool {
            matches!(self, Remembered::Valid(_))
        }
    }
}
