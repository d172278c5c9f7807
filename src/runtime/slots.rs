//! A bound on concurrent tool calls per org, so one tenant cannot exhaust memory or
//! upstream budgets for everyone; past it, callers get `rate_limited` with a retry hint.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::RuntimeError;
use crate::store::OrgId;

pub struct WalkSlots {
    per_org: Mutex<HashMap<String, Arc<Semaphore>>>,
    max: usize,
}

impl WalkSlots {
    pub fn new(max: usize) -> Self {
        Self {
            per_org: Mutex::new(HashMap::new()),
            max: max.max(1),
        }
    }

    /// A slot for one running call; released when the permit drops.
    pub fn acquire(&self, org: &OrgId) -> Result<OwnedSemaphorePermit, RuntimeError> {
        let sem = {
            let mut map = self
                .per_org
                .lock()
                .map_err(|_| RuntimeError::Internal(anyhow::anyhow!("slot map poisoned")))?;
            map.entry(org.as_str().to_string())
                .or_insert_with(|| Arc::new(Semaphore::new(self.max)))
                .clone()
        };
        sem.try_acquire_owned()
            .map_err(|_| RuntimeError::RateLimited {
                detail: format!(
                    "this org already has {} tool calls running; retry when one finishes",
                    self.max
                ),
                retry_after: Duration::from_secs(1),
            })
    }
}
