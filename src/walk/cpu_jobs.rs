//! CPU-bound work proportional to a payload's size — parsing an upstream body, the
//! presentation of an outcome (`_filter`, `_fields`, the size guard), writing the stored
//! result, reading a cached or stored one back, `queryToolResult`. One owner:
//! every such job of the runtime goes through [`Cpu::run`].
//!
//! A job over at most `inline_bytes` runs in place (the pool's hand-off would cost more
//! than the job). A larger one runs on tokio's blocking pool, after taking a permit of its
//! org (at most `per_org` jobs of one org at once) and then one of the replica
//! (at most `global`), so one org's 24 MB payloads wait behind each other and never
//! occupy the async workers or every pool slot: other orgs' calls go on. Permits move into
//! the job, so a job whose caller went away still counts until it ends.
//!
//! `loopgate_cpu_jobs_total{mode}`, `loopgate_cpu_jobs_running` and
//! `loopgate_cpu_jobs_waiting` show it at work.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::store::OrgId;
use crate::telemetry::metrics::Metrics;

pub struct Cpu {
    per_org: usize,
    inline_bytes: usize,
    global: Arc<Semaphore>,
    orgs: Mutex<HashMap<String, Arc<Semaphore>>>,
    /// Jobs run in place / on the pool (counters).
    inline: AtomicU64,
    pooled: AtomicU64,
    /// Jobs waiting for a permit / running on the pool (gauges).
    waiting: AtomicU64,
    running: AtomicU64,
    metrics: Arc<Metrics>,
}

/// What [`Cpu`] has done and is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuStats {
    pub inline: u64,
    pub pooled: u64,
    pub waiting: u64,
    pub running: u64,
}

/// Decrements a gauge when dropped (a waiter whose caller went away included).
struct Count<'a>(&'a AtomicU64);

impl<'a> Count<'a> {
    fn up(g: &'a AtomicU64) -> Self {
        g.fetch_add(1, Ordering::Relaxed);
        Count(g)
    }
}

impl Drop for Count<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Cpu {
    pub fn new(
        per_org: usize,
        global: usize,
        inline_bytes: usize,
        metrics: Arc<Metrics>,
    ) -> Arc<Self> {
        Arc::new(Cpu {
            per_org: per_org.max(1),
            inline_bytes,
            global: Arc::new(Semaphore::new(global.max(1))),
            orgs: Mutex::default(),
            inline: AtomicU64::new(0),
            pooled: AtomicU64::new(0),
            waiting: AtomicU64::new(0),
            running: AtomicU64::new(0),
            metrics,
        })
    }

    pub fn stats(&self) -> CpuStats {
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        CpuStats {
            inline: g(&self.inline),
            pooled: g(&self.pooled),
            waiting: g(&self.waiting),
            running: g(&self.running),
        }
    }

    fn org_gate(&self, org: &OrgId) -> Arc<Semaphore> {
        let mut orgs = self
            .orgs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // forget idle orgs' gates now and then, so the map stays as small as the busy orgs
        if orgs.len() > 1024 {
            let full = self.per_org;
            orgs.retain(|_, s| Arc::strong_count(s) > 1 || s.available_permits() < full);
        }
        orgs.entry(org.as_str().to_owned())
            .or_insert_with(|| Arc::new(Semaphore::new(self.per_org)))
            .clone()
    }

    /// Runs `job`, whose work is proportional to `bytes`, for `org`: in place when small,
    /// else on the blocking pool within the org's and the replica's bounds. A panic in
    /// the job unwinds into the caller, as it would have in place.
    pub async fn run<T, F>(self: &Arc<Self>, org: &OrgId, bytes: usize, job: F) -> T
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        if bytes <= self.inline_bytes {
            self.inline.fetch_add(1, Ordering::Relaxed);
            self.metrics.cpu_jobs.inc(&[("mode", "inline")]);
            return job();
        }
        let permits = {
            let _waiting = Count::up(&self.waiting);
            // the semaphores are never closed, so both permits always come
            let org = self.org_gate(org).acquire_owned().await.ok();
            let all = self.global.clone().acquire_owned().await.ok();
            (org, all)
        };
        self.pooled.fetch_add(1, Ordering::Relaxed);
        self.metrics.cpu_jobs.inc(&[("mode", "pool")]);
        let me = self.clone();
        let done = tokio::task::spawn_blocking(move || {
            let _permits: (Option<OwnedSemaphorePermit>, Option<OwnedSemaphorePermit>) = permits;
            let _running = Count::up(&me.running);
            job()
        })
        .await;
        match done {
            Ok(v) => v,
            Err(e) => match e.try_into_panic() {
                Ok(panic) => std::panic::resume_unwind(panic),
                // only when the runtime itself shuts down
                Err(e) => panic!("a CPU job was cancelled: {e}"),
            },
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// Polls `cond` (yielding) until it holds; bounded, no timing asserted.
    async fn until(cond: impl Fn() -> bool) {
        for _ in 0..10_000 {
            if cond() {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
        panic!("condition never held");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_orgs_parked_job_holds_back_its_own_next_job_but_not_another_orgs() {
        let cpu = Cpu::new(1, 4, 0, Arc::default());
        let (a, b) = (OrgId::trusted("org_a"), OrgId::trusted("org_b"));
        let (release, parked) = mpsc::channel::<()>();
        let first = tokio::spawn({
            let (cpu, a) = (cpu.clone(), a.clone());
            async move {
                cpu.run(&a, 1, move || {
                    parked.recv().unwrap();
                    "a1"
                })
                .await
            }
        });
        until(|| cpu.stats().running == 1).await;
        let second = tokio::spawn({
            let (cpu, a) = (cpu.clone(), a.clone());
            async move { cpu.run(&a, 1, || "a2").await }
        });
        until(|| cpu.stats().waiting == 1).await;
        // org B is not held back by org A's cap
        assert_eq!(cpu.run(&b, 1, || "b1").await, "b1");
        assert!(
            !second.is_finished(),
            "org A's second job waits for its first"
        );
        assert_eq!(cpu.stats().waiting, 1);
        release.send(()).unwrap();
        assert_eq!(first.await.unwrap(), "a1");
        assert_eq!(second.await.unwrap(), "a2");
        let s = cpu.stats();
        assert_eq!((s.pooled, s.inline, s.waiting, s.running), (3, 0, 0, 0));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_replica_bound_holds_across_orgs_and_small_jobs_run_in_place() {
        let cpu = Cpu::new(2, 1, 100, Arc::default());
        let (a, b) = (OrgId::trusted("org_a"), OrgId::trusted("org_b"));
        let (release, parked) = mpsc::channel::<()>();
        let first = tokio::spawn({
            let (cpu, a) = (cpu.clone(), a.clone());
            async move { cpu.run(&a, 101, move || parked.recv().unwrap()).await }
        });
        until(|| cpu.stats().running == 1).await;
        let other = tokio::spawn({
            let (cpu, b) = (cpu.clone(), b.clone());
            async move { cpu.run(&b, 101, || 7).await }
        });
        until(|| cpu.stats().waiting == 1).await;
        // at or under the threshold: in place, past every bound
        assert_eq!(cpu.run(&b, 100, || 5).await, 5);
        assert!(!other.is_finished());
        release.send(()).unwrap();
        first.await.unwrap();
        assert_eq!(other.await.unwrap(), 7);
        assert_eq!(cpu.stats().inline, 1);
    }
}
