//! Graceful shutdown of one replica. On SIGTERM the replica starts draining: `/readyz`
//! turns unready and new tool calls and workflow runs are refused (503 + `Retry-After`,
//! so the client retries on another replica), while calls already running go on. Calls
//! still running near the end of the grace period are cut: the walk's clock jumps past
//! its wall-clock bound and pending upstream requests are abandoned, so the engine ends
//! the walk with what it fetched and an honest `_stoppedBy: "time"` verdict, which is
//! stored and recorded like any outcome (readable from every replica).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;

#[derive(Default)]
pub struct Drain {
    draining: AtomicBool,
    cut: AtomicBool,
    on_cut: Notify,
    in_flight: AtomicUsize,
    on_idle: Notify,
}

/// One accepted call or run; the replica waits for it while draining.
pub struct InFlight(Arc<Drain>);

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.on_idle.notify_waiters();
        }
    }
}

impl std::fmt::Debug for InFlight {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InFlight")
    }
}

impl Drain {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Accepts one more call or run; `None` once draining.
    pub fn enter(self: &Arc<Self>) -> Option<InFlight> {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        let guard = InFlight(self.clone());
        if self.is_draining() {
            return None; // the guard's drop undoes the count
        }
        Some(guard)
    }

    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Acquire)
    }

    /// Stops accepting work (readiness off, new calls refused).
    pub fn begin(&self) {
        self.draining.store(true, Ordering::Release);
    }

    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Acquire)
    }

    /// Ends running walks now, with what they fetched (`_stoppedBy: "time"`).
    pub fn cut(&self) {
        self.cut.store(true, Ordering::Release);
        self.on_cut.notify_waiters();
    }

    pub fn is_cut(&self) -> bool {
        self.cut.load(Ordering::Acquire)
    }

    /// Resolves once [`Drain::cut`] was called (at once if it already was).
    pub async fn cut_signal(&self) {
        loop {
            let notified = self.on_cut.notified();
            if self.is_cut() {
                return;
            }
            notified.await;
        }
    }

    /// Waits until nothing is in flight, at most `limit`; `true` when idle.
    pub async fn wait_idle(&self, limit: Duration) -> bool {
        let wait = async {
            loop {
                let notified = self.on_idle.notified();
                if self.in_flight() == 0 {
                    return;
                }
                notified.await;
            }
        };
        tokio::time::timeout(limit, wait).await.is_ok()
    }

    /// The whole shutdown: drain, wait up to `grace` minus `cut_margin` for running work,
    /// cut what still runs, then wait out the rest of the grace period for it to record.
    pub async fn shut_down(&self, grace: Duration, cut_margin: Duration) {
        self.begin();
        tracing::info!(in_flight = self.in_flight(), ?grace, "draining");
        let margin = cut_margin.min(grace / 2);
        if !self.wait_idle(grace - margin).await {
            tracing::warn!(
                in_flight = self.in_flight(),
                "grace period ending: cutting running walks"
            );
            self.cut();
            if !self.wait_idle(margin).await {
                tracing::error!(
                    in_flight = self.in_flight(),
                    "calls still running at the end of the grace period"
                );
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn draining_refuses_new_work_and_waits_for_running_work() {
        let d = Drain::new();
        let running = d.enter().unwrap();
        d.begin();
        assert!(d.enter().is_none(), "no new work while draining");
        assert_eq!(d.in_flight(), 1);
        assert!(!d.wait_idle(Duration::from_millis(10)).await);
        drop(running);
        assert!(d.wait_idle(Duration::from_millis(10)).await);
    }

    #[tokio::test]
    async fn work_still_running_near_the_end_of_the_grace_period_is_cut() {
        let d = Drain::new();
        let running = d.enter().unwrap();
        let d2 = d.clone();
        // a "walk" that runs until it is cut
        let walk = tokio::spawn(async move {
            d2.cut_signal().await;
            drop(running);
        });
        d.shut_down(Duration::from_millis(200), Duration::from_millis(100))
            .await;
        assert!(d.is_cut());
        walk.await.unwrap();
        assert_eq!(d.in_flight(), 0);
    }
}
