//! M3: the cancellation of one running call (an MCP `tasks/cancel`), as the walk sees it.
//!
//! The owner of a cancel is `mcp::tasks`: it records it in Postgres, where every replica
//! sees it, and wakes the walking replica. There, the call's [`CallCancel`] is set, and
//! the walk observes it through the engine's `Clock::cancelled` (it stops as at a bound,
//! `_stoppedBy: "cancelled"`, keeping what it fetched) while the request in flight is
//! abandoned (its future dropped; an MCP upstream is sent `tasks/cancel` by its client).
//!
//! The flag travels with the call's future as a task-local ([`scope`]), read once where
//! the walk's ports are built ([`current`]): a call that is never cancelled — every call
//! but a task's — carries none and pays nothing.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::sync::Notify;

/// One call's cancel: set once, observed by its walk.
#[derive(Default, Debug)]
pub struct CallCancel {
    set: AtomicBool,
    on_set: Notify,
}

impl CallCancel {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Cancels the call: its walk stops at its next step, its waits end now.
    pub fn cancel(&self) {
        self.set.store(true, Ordering::Release);
        self.on_set.notify_waiters();
    }

    pub fn is_cancelled(&self) -> bool {
        self.set.load(Ordering::Acquire)
    }

    /// Resolves once [`CallCancel::cancel`] was called (at once if it already was).
    pub async fn cancelled(&self) {
        loop {
            let notified = self.on_set.notified();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }
}

tokio::task_local! {
    static CURRENT: Arc<CallCancel>;
}

/// Runs `fut` (a call's execution) with `cancel` as its cancel.
pub async fn scope<F: Future>(cancel: Arc<CallCancel>, fut: F) -> F::Output {
    CURRENT.scope(cancel, fut).await
}

/// The cancel of the call running in this task, if it can be cancelled.
pub fn current() -> Option<Arc<CallCancel>> {
    CURRENT.try_with(Arc::clone).ok()
}

/// Resolves when `cancel` is set; never without one.
pub async fn signal(cancel: Option<&CallCancel>) {
    match cancel {
        Some(c) => c.cancelled().await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn m3_a_call_sees_its_own_cancel_only() {
        assert!(current().is_none(), "outside a scope: nothing to cancel");
        let c = CallCancel::new();
        let seen = scope(c.clone(), async { current() }).await.unwrap();
        assert!(Arc::ptr_eq(&seen, &c));
        let waiter = tokio::spawn({
            let c = c.clone();
            async move { c.cancelled().await }
        });
        assert!(!seen.is_cancelled());
        c.cancel();
        waiter.await.unwrap();
        assert!(seen.is_cancelled());
        // set before the wait: resolves at once
        signal(Some(&c)).await;
    }
}
