//! A bound on concurrent walks per org, for all replicas together, so one tenant cannot
//! exhaust memory or upstream budgets for everyone; past it, callers get `rate_limited`
//! with a retry hint. The process's semaphore is in front at the full bound; the shared
//! count is a leased Redis slot ([`crate::quota`]), so a crashed replica's slots come
//! back when their lease ends. With Redis unreachable, a second per-process semaphore
//! holds this replica to its share (the bound divided by the replica count).
//!
//! # Spare slots (no round trip for back-to-back walks)
//! A walk that ends keeps its Redis slot as a *spare* for [`SPARE_FOR`] (20 ms) — only
//! when the org held less than half its bound when the slot was taken, and only while the
//! slot's lease is younger than [`REUSE_WITHIN`] (so a walk on a reused slot still has at
//! least [`dataset_cache::walk_lease`] of its lease left, see [`slot_lease`]). This replica's
//! next walk of the org takes a spare instead of an `EVAL`; a spare nobody took is given
//! back (`ZREM`) when its 20 ms are up. Never more walks than the bound: a spare is
//! counted in Redis like a running walk. The price: while a spare lingers, another replica's walk of the same org can be refused
//! (`rate_limited`) if the org is then at its bound — for at most 20 ms per spare, and
//! spares are kept only from slots taken while the org held under half its bound (a
//! reused slot keeps that mark, for at most its 10 s). Per org this replica keeps at most
//! as many spares as walks it ended in the last 20 ms.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::crypto::random_token;
use crate::quota::{Decision, Shared};
use crate::results::dataset_cache;
use crate::store::OrgId;
use crate::walk::RuntimeError;

/// How long a shared slot is held at most, for walks bounded by `wall` (the configured
/// `limit_wall_seconds`, 1 s to 24 h): the lease of a walk ([`dataset_cache::walk_lease`], the one
/// owner of that margin) plus [`REUSE_WITHIN`], so a walk on a reused slot outlives it
/// too. A fixed lease shorter than the wall bound would let a long walk lose its slot.
pub fn slot_lease(wall: Duration) -> Duration {
    dataset_cache::walk_lease(wall) + REUSE_WITHIN
}

/// How long a freed slot waits for this replica's next walk before it is given back.
pub const SPARE_FOR: Duration = Duration::from_millis(20);
/// A slot leased longer ago than this is not reused (its lease must outlive a walk).
pub const REUSE_WITHIN: Duration = Duration::from_secs(10);

/// A Redis slot this replica freed and keeps a moment for its next walk.
struct Spare {
    member: String,
    leased: Instant,
}

type Spares = Arc<Mutex<Vec<Spare>>>;

fn lock(spares: &Spares) -> MutexGuard<'_, Vec<Spare>> {
    spares
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One org's semaphores in this process (the full bound, and this replica's share while
/// Redis is unreachable), and its spare Redis slots.
#[derive(Clone)]
struct OrgSlots {
    local: Arc<Semaphore>,
    fallback: Arc<Semaphore>,
    spares: Spares,
}

pub struct WalkSlots {
    per_org: Mutex<HashMap<String, OrgSlots>>,
    max: usize,
    shared: Option<Arc<Shared>>,
    /// How long a Redis slot is leased ([`slot_lease`]).
    lease: Duration,
}

/// A running walk's slot; given back (or kept as a spare) when dropped.
pub struct WalkSlot {
    _local: OwnedSemaphorePermit,
    _fallback: Option<OwnedSemaphorePermit>,
    shared: Option<Held>,
}

/// The Redis slot a walk holds.
struct Held {
    shared: Arc<Shared>,
    key: String,
    member: String,
    leased: Instant,
    /// Whether it may be kept as a spare (the org was under half its bound).
    spare: Option<Spares>,
}

impl Drop for WalkSlot {
    fn drop(&mut self) {
        let Some(held) = self.shared.take() else {
            return;
        };
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let Held {
            shared,
            key,
            member,
            leased,
            spare,
        } = held;
        let Some(spares) = spare.filter(|_| leased.elapsed() < REUSE_WITHIN) else {
            rt.spawn(async move { shared.release_slot(&key, &member).await });
            return;
        };
        lock(&spares).push(Spare {
            member: member.clone(),
            leased,
        });
        rt.spawn(async move {
            tokio::time::sleep(SPARE_FOR).await;
            let unused = {
                let mut list = lock(&spares);
                let at = list.iter().position(|s| s.member == member);
                at.map(|i| list.swap_remove(i)).is_some()
            };
            if unused {
                shared.release_slot(&key, &member).await;
            }
        });
    }
}

impl WalkSlots {
    /// Slots of this process alone.
    pub fn new(max: usize) -> Self {
        Self {
            per_org: Mutex::new(HashMap::new()),
            max: max.max(1),
            shared: None,
            lease: Duration::ZERO,
        }
    }

    /// Slots counted across every replica sharing `shared`'s Redis, for walks bounded by
    /// `wall` (their slots are leased for [`slot_lease`]).
    pub fn across_replicas(max: usize, shared: Arc<Shared>, wall: Duration) -> Self {
        Self {
            shared: Some(shared),
            lease: slot_lease(wall),
            ..Self::new(max)
        }
    }

    fn busy(&self) -> RuntimeError {
        RuntimeError::RateLimited {
            detail: format!(
                "this org already has {} tool calls running; retry when one finishes",
                self.max
            ),
            retry_after: Duration::from_secs(1),
        }
    }

    /// A slot for one running walk.
    pub async fn acquire(&self, org: &OrgId) -> Result<WalkSlot, RuntimeError> {
        let slots = {
            let mut map = self
                .per_org
                .lock()
                .map_err(|_| RuntimeError::Internal(anyhow::anyhow!("slot map poisoned")))?;
            let share = self
                .shared
                .as_ref()
                .map_or(self.max, |s| s.share(self.max as u32) as usize);
            map.entry(org.as_str().to_string())
                .or_insert_with(|| OrgSlots {
                    local: Arc::new(Semaphore::new(self.max)),
                    fallback: Arc::new(Semaphore::new(share)),
                    spares: Spares::default(),
                })
                .clone()
        };
        let local = slots.local.try_acquire_owned().map_err(|_| self.busy())?;
        let mut slot = WalkSlot {
            _local: local,
            _fallback: None,
            shared: None,
        };
        let Some(shared) = self.shared.as_ref().filter(|s| s.is_shared()) else {
            return Ok(slot);
        };
        let key = format!("lg:quota:org:{org}:walks");
        let reused = {
            // an old one stays listed: its own timer gives it back
            let mut list = lock(&slots.spares);
            let young = list.iter().rposition(|s| s.leased.elapsed() < REUSE_WITHIN);
            young.map(|i| list.swap_remove(i))
        };
        if let Some(Spare { member, leased }) = reused {
            slot.shared = Some(Held {
                shared: shared.clone(),
                key,
                member,
                leased,
                spare: Some(slots.spares.clone()),
            });
            return Ok(slot);
        }
        let member = random_token(16);
        let leased = Instant::now();
        match shared
            .acquire_slot(&key, &member, self.max as u32, self.lease)
            .await
        {
            (Decision::Allowed, held) => {
                let under_half = (held as usize) * 2 < self.max;
                slot.shared = Some(Held {
                    shared: shared.clone(),
                    key,
                    member,
                    leased,
                    spare: under_half.then(|| slots.spares.clone()),
                })
            }
            (Decision::Wait(_), _) => return Err(self.busy()),
            (Decision::Unavailable, _) => {
                slot._fallback = Some(
                    slots
                        .fallback
                        .try_acquire_owned()
                        .map_err(|_| self.busy())?,
                );
            }
        }
        Ok(slot)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::telemetry::metrics::Metrics;

    fn redis_slots(max: usize, wall: Duration) -> Option<(WalkSlots, crate::kv::Redis)> {
        let url = crate::testing::redis_url()?;
        let pool = crate::kv::connect(&url, crate::kv::TEST_BUDGET).unwrap();
        let shared = Shared::new(Some(pool.clone()), 1, Arc::new(Metrics::default()));
        let slots = WalkSlots::across_replicas(max, shared, wall);
        Some((slots, pool))
    }

    fn some_org() -> OrgId {
        OrgId::trusted(format!("org_{}", random_token(12)))
    }

    fn member(slot: &WalkSlot) -> String {
        slot.shared.as_ref().unwrap().member.clone()
    }

    /// A walk of the org right after another on this replica takes the slot that one left
    /// as a spare (the same Redis member: no `EVAL`), and a spare nobody takes goes back
    /// to Redis once its [`SPARE_FOR`] is up. Nothing here waits on the machine's speed:
    /// the spare is listed when the first slot is dropped and taken before this task
    /// yields, so its timer cannot have run.
    #[tokio::test]
    async fn a_walk_right_after_another_reuses_its_slot_then_it_is_given_back() {
        let Some((slots, mut conn)) = redis_slots(4, Duration::from_secs(60)) else {
            return;
        };
        let org = some_org();
        let first = slots.acquire(&org).await.unwrap();
        let taken = member(&first);
        drop(first);
        let second = slots.acquire(&org).await.unwrap();
        assert_eq!(member(&second), taken, "the spare slot is reused");
        drop(second);
        let key = format!("lg:quota:org:{org}:walks");
        let mut held: u64 = 1;
        for _ in 0..500 {
            held = redis::cmd("ZCARD")
                .arg(&key)
                .query_async(&mut conn)
                .await
                .unwrap();
            if held == 0 {
                break;
            }
            tokio::time::sleep(SPARE_FOR).await;
        }
        assert_eq!(held, 0, "the unused spare was given back");
    }

    /// A walk may run for the configured wall bound (up to 24 h): its Redis slot is leased
    /// at least that long, from that setting. A fixed 90 s lease let any walk past it lose
    /// its slot to another replica's, over the org's bound.
    #[tokio::test]
    async fn a_slot_is_leased_for_the_configured_wall_bound() {
        let wall = Duration::from_secs(3_600);
        let Some((slots, mut conn)) = redis_slots(2, wall) else {
            return;
        };
        let org = some_org();
        let _slot = slots.acquire(&org).await.unwrap();
        let key = format!("lg:quota:org:{org}:walks");
        let ends: Vec<(String, f64)> = redis::cmd("ZRANGE")
            .arg(&key)
            .arg(0)
            .arg(-1)
            .arg("WITHSCORES")
            .query_async(&mut conn)
            .await
            .unwrap();
        let (secs, micros): (u64, u64) = redis::cmd("TIME").query_async(&mut conn).await.unwrap();
        let now_us = (secs * 1_000_000 + micros) as f64;
        assert_eq!(ends.len(), 1, "{ends:?}");
        let left = Duration::from_micros((ends[0].1 - now_us) as u64);
        assert!(
            left > wall,
            "the slot is leased {left:?}, shorter than a walk may run ({wall:?})"
        );
        let _: () = redis::cmd("DEL")
            .arg(&key)
            .query_async(&mut conn)
            .await
            .unwrap();
    }
}
