//! Workflows that run on their own (W6, W7): schedules' due times ([`cron`]), the
//! scheduler every replica runs ([`scheduler`]), and the delivery of finished runs to
//! webhook endpoints ([`delivery`], signed per Standard Webhooks: [`signature`]).
//!
//! Every decision that must hold across replicas is Postgres': a due time is claimed
//! with its schedule row (`FOR UPDATE SKIP LOCKED`) and recorded under a unique run key;
//! a delivery attempt is claimed the same way. No timer in one process decides who runs.

pub mod cron;
pub mod delivery;
pub mod scheduler;
pub mod signature;

use crate::call::Runtime;

/// What the background workers hold: the replica's `Runtime` (the API's state).
pub trait HasRuntime: Send + Sync + 'static {
    fn runtime(&self) -> &Runtime;
}
