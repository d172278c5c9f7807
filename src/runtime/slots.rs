//! A bound on concurrent walks per org, for all replicas together, so one tenant cannot
//! exhaust memory or upstream budgets for everyone; past it, callers get `rate_limited`
//! with a retry hint. The process's semaphore is in front at the full bound; the shared
//! count is a leased Redis slot ([`crate::quota`]), so a crashed replica's slots come
//! back when their lease ends. With Redis unreachable, a second per-process semaphore
//! holds this replica to its share (the bound divided by the replica count).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::RuntimeError;
use crate::crypto::random_token;
use crate::quota::{Decision, Shared};
use crate::store::OrgId;

/// How long a shared slot is held at most: the engine's wall-clock bound plus margin.
pub const SLOT_LEASE: Duration = Duration::from_secs(90);

/// One org's semaphores in this process: the full bound, and this replica's share.
type OrgSlots = (Arc<Semaphore>, Arc<Semaphore>);

pub struct WalkSlots {
    /// Per org: (the full bound, this replica's fallback share).
    per_org: Mutex<HashMap<String, OrgSlots>>,
    max: usize,
    shared: Option<Arc<Shared>>,
}

/// A running walk's slot; given back when dropped.
pub struct Slot {
    _local: OwnedSemaphorePermit,
    _fallback: Option<OwnedSemaphorePermit>,
    shared: Option<(Arc<Shared>, String, String)>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let (Some((shared, key, member)), Ok(rt)) =
            (self.shared.take(), tokio::runtime::Handle::try_current())
        {
            rt.spawn(async move { shared.release_slot(&key, &member).await });
        }
    }
}

impl WalkSlots {
    /// Slots of this process alone.
    pub fn new(max: usize) -> Self {
        Self {
            per_org: Mutex::new(HashMap::new()),
            max: max.max(1),
            shared: None,
        }
    }

    /// Slots counted across every replica sharing `shared`'s Redis.
    pub fn across_replicas(max: usize, shared: Arc<Shared>) -> Self {
        Self {
            shared: Some(shared),
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
    pub async fn acquire(&self, org: &OrgId) -> Result<Slot, RuntimeError> {
        let (local, fallback) = {
            let mut map = self
                .per_org
                .lock()
                .map_err(|_| RuntimeError::Internal(anyhow::anyhow!("slot map poisoned")))?;
            let share = self
                .shared
                .as_ref()
                .map_or(self.max, |s| s.share(self.max as u32) as usize);
            map.entry(org.as_str().to_string())
                .or_insert_with(|| {
                    (
                        Arc::new(Semaphore::new(self.max)),
                        Arc::new(Semaphore::new(share)),
                    )
                })
                .clone()
        };
        let local = local.try_acquire_owned().map_err(|_| self.busy())?;
        let mut slot = Slot {
            _local: local,
            _fallback: None,
            shared: None,
        };
        let Some(shared) = self.shared.as_ref().filter(|s| s.is_shared()) else {
            return Ok(slot);
        };
        let key = format!("lg:quota:org:{org}:walks");
        let member = random_token(16);
        match shared
            .acquire_slot(&key, &member, self.max as u32, SLOT_LEASE)
            .await
        {
            Decision::Allowed => slot.shared = Some((shared.clone(), key, member)),
            Decision::Wait(_) => return Err(self.busy()),
            Decision::Unavailable => {
                slot._fallback = Some(fallback.try_acquire_owned().map_err(|_| self.busy())?);
            }
        }
        Ok(slot)
    }
}
