//! Against the real Redis of `scripts/test` (`REDIS_URL`), required (`crate::testing`).

use std::sync::Arc;
use std::time::Duration;

use super::lease::{RateLease, LEASE_MIN_AGE};
use super::{Decision, Grant, Shared};
use crate::telemetry::metrics::Metrics;

fn shared_at(url: &str, replicas: u32) -> Arc<Shared> {
    let pool = crate::kv::connect(url, crate::kv::TEST_BUDGET).unwrap();
    Shared::new(Some(pool), replicas, Arc::new(Metrics::default()))
}

fn redis() -> Option<Arc<Shared>> {
    crate::testing::redis_url().map(|u| shared_at(&u, 3))
}

fn unique(kind: &str) -> String {
    format!("lg:test:{kind}:{}", crate::crypto::random_token(12))
}

/// An emission interval of 100 s: no permit comes back while a test runs, so what Redis
/// grants and refuses does not depend on how fast the machine runs the test.
const SLOW: f64 = 0.01;
const SLOW_INTERVAL: Duration = Duration::from_secs(100);

#[tokio::test]
async fn gcra_allows_the_burst_then_says_how_long_to_wait() {
    let Some(q) = redis() else { return };
    let key = unique("gcra");
    // one per 100 s with a burst of 2: two now, the third in about 100 s
    assert_eq!(q.lease(&key, SLOW, 2, 1).await, Grant::Granted(1));
    assert_eq!(q.lease(&key, SLOW, 2, 1).await, Grant::Granted(1));
    let Grant::Denied(d) = q.lease(&key, SLOW, 2, 1).await else {
        panic!("third request should wait")
    };
    assert!(d > Duration::ZERO && d <= SLOW_INTERVAL, "{d:?}");
    // a denied check took nothing: still denied, never a longer wait than the interval
    let Grant::Denied(again) = q.lease(&key, SLOW, 2, 1).await else {
        panic!("still denied")
    };
    assert!(again <= SLOW_INTERVAL, "{again:?}");
    assert!(!q.degraded());
}

#[tokio::test]
async fn two_replicas_share_one_rate() {
    let (Some(a), Some(b)) = (redis(), redis()) else {
        return;
    };
    let key = unique("gcra");
    assert_eq!(a.lease(&key, SLOW, 1, 1).await, Grant::Granted(1));
    assert!(matches!(b.lease(&key, SLOW, 1, 1).await, Grant::Denied(_)));
}

#[tokio::test]
async fn slots_are_counted_across_replicas_and_released() {
    let (Some(a), Some(b)) = (redis(), redis()) else {
        return;
    };
    let key = unique("slots");
    let lease = Duration::from_secs(30);
    assert_eq!(
        a.acquire_slot(&key, "c1", 2, lease).await,
        (Decision::Allowed, 1)
    );
    assert_eq!(
        b.acquire_slot(&key, "c2", 2, lease).await,
        (Decision::Allowed, 2),
        "held then: both"
    );
    assert!(matches!(
        a.acquire_slot(&key, "c3", 2, lease).await,
        (Decision::Wait(_), _)
    ));
    b.release_slot(&key, "c2").await;
    assert_eq!(
        a.acquire_slot(&key, "c3", 2, lease).await,
        (Decision::Allowed, 2)
    );
}

#[tokio::test]
async fn an_expired_lease_frees_its_slot() {
    let Some(q) = redis() else { return };
    let key = unique("slots");
    assert_eq!(
        q.acquire_slot(&key, "gone", 1, Duration::from_millis(50))
            .await
            .0,
        Decision::Allowed
    );
    tokio::time::sleep(Duration::from_millis(80)).await;
    assert_eq!(
        q.acquire_slot(&key, "next", 1, Duration::from_secs(5))
            .await
            .0,
        Decision::Allowed
    );
}

#[tokio::test]
async fn unreachable_redis_falls_back_and_says_so() {
    // a port nothing listens on
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let q = shared_at(&format!("redis://127.0.0.1:{port}"), 4);
    assert_eq!(q.lease("k", 5.0, 1, 1).await, Grant::Unavailable);
    assert!(q.degraded());
    assert!(q
        .metrics()
        .render()
        .contains("loopgate_quota_fallbacks_total 1"));
    assert_eq!(q.share(10), 2);
    assert_eq!(q.share(2), 1);
    assert_eq!(
        q.acquire_slot("s", "m", 1, Duration::from_secs(1)).await.0,
        Decision::Unavailable
    );
}

#[tokio::test]
async fn without_redis_there_is_nothing_to_share() {
    let q = Shared::new(None, 3, Arc::new(Metrics::default()));
    assert!(!q.is_shared());
    assert_eq!(q.lease("k", 1.0, 1, 1).await, Grant::Granted(1));
    assert_eq!(q.lease("k", 1.0, 1, 1).await, Grant::Granted(1));
}

#[tokio::test]
async fn a_lease_grants_what_conforms_now_never_more_than_the_burst() {
    let Some(q) = redis() else { return };
    let key = unique("gcra");
    // one per 100 s, burst 5: 8 wanted, 5 conform now
    assert_eq!(q.lease(&key, SLOW, 5, 8).await, Grant::Granted(5));
    assert!(matches!(q.lease(&key, SLOW, 5, 1).await, Grant::Denied(_)));
    let key = unique("gcra");
    assert_eq!(q.lease(&key, SLOW, 5, 3).await, Grant::Granted(3));
    assert_eq!(q.lease(&key, SLOW, 5, 3).await, Grant::Granted(2));
    let Grant::Denied(d) = q.lease(&key, SLOW, 5, 3).await else {
        panic!("the burst is spent")
    };
    assert!(d <= SLOW_INTERVAL, "{d:?}");
}

#[tokio::test]
async fn a_burst_one_limit_leases_one_permit_per_request() {
    let Some(q) = redis() else { return };
    let lease = RateLease::new(unique("gcra"), 1000.0, 1);
    assert_eq!(lease.bounds(), (1, LEASE_MIN_AGE));
    let mut allowed = 0;
    while allowed < 5 {
        match lease.take(&q).await {
            Decision::Allowed => allowed += 1,
            Decision::Wait(d) => tokio::time::sleep(d).await,
            Decision::Unavailable => panic!("Redis is up"),
        }
    }
    assert!(lease.asked() >= 5, "every permit was asked for");
}

#[tokio::test]
async fn an_old_lease_is_dropped_and_an_idle_replica_holds_nothing() {
    let Some(q) = redis() else { return };
    // 100/s, burst 50: a lease lives 10 ms — of the lease's own clock, which stands still
    // until the test moves it
    let (lease, time) = RateLease::driven(unique("gcra"), 100.0, 50);
    assert_eq!(lease.bounds(), (50, LEASE_MIN_AGE));
    for _ in 0..20 {
        assert_eq!(lease.take(&q).await, Decision::Allowed);
    }
    // leases of 1, 2, 4, 8 and 16 permits (each at most twice the last one)
    assert_eq!(
        lease.asked(),
        5,
        "back-to-back requests share leases: {} asks",
        lease.asked()
    );
    let now = {
        let mut t = time.lock().unwrap();
        *t += Duration::from_millis(30);
        *t
    };
    assert!(lease.is_idle(now));
    let before = lease.asked();
    assert_eq!(lease.take(&q).await, Decision::Allowed);
    assert_eq!(lease.asked(), before + 1, "an old lease is not spent");
}

/// 720 requests (three replicas, four tasks each, 60 requests per task) through leases of
/// one quota: how many were admitted and refused, how often Redis was asked, and the
/// module header's bound on what may be admitted in the time they took.
struct Run {
    allowed: u64,
    refused: u64,
    asked: u64,
    bound: u64,
    elapsed: f64,
}

async fn three_replicas_lease(rate: f64, burst: u32) -> Run {
    let key = unique("gcra");
    let replicas: Vec<(Arc<Shared>, Arc<RateLease>)> = (0..3)
        .map(|_| {
            (
                redis().unwrap(),
                Arc::new(RateLease::new(key.clone(), rate, burst)),
            )
        })
        .collect();
    let (cap, age) = replicas[0].1.bounds();
    let started = std::time::Instant::now();
    let mut tasks = Vec::new();
    for (shared, lease) in &replicas {
        for _ in 0..4 {
            let (shared, lease) = (shared.clone(), lease.clone());
            tasks.push(tokio::spawn(async move {
                let (mut allowed, mut refused) = (0u64, 0u64);
                for _ in 0..60 {
                    match lease.take(&shared).await {
                        Decision::Allowed => allowed += 1,
                        Decision::Wait(d) => {
                            refused += 1;
                            tokio::time::sleep(d.min(Duration::from_millis(5))).await;
                        }
                        Decision::Unavailable => panic!("Redis is up"),
                    }
                }
                (allowed, refused)
            }));
        }
    }
    let (mut allowed, mut refused) = (0, 0);
    for t in tasks {
        let (a, r) = t.await.unwrap();
        allowed += a;
        refused += r;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let slack = (3 * (u64::from(cap) - 1)).min((rate * age.as_secs_f64()).floor() as u64);
    let bound = u64::from(burst) + (rate * elapsed).ceil() as u64 + slack;
    let asked: u64 = replicas.iter().map(|(_, l)| l.asked()).sum();
    eprintln!(
        "{rate}/s: {allowed} admitted, {refused} refused, {asked} asks in {elapsed:.3} s (bound {bound})"
    );
    assert_eq!(allowed + refused, 720, "every request is decided");
    Run {
        allowed,
        refused,
        asked,
        bound,
        elapsed,
    }
}

/// The module header's bound: N replicas leasing one quota admit at most
/// `burst + rate × elapsed + min(N × (L − 1), ⌊rate × A⌋)` in the time they took, however
/// long that was (leases age and permits come back while they run).
#[tokio::test]
async fn three_replicas_leasing_one_rate_stay_within_the_bound() {
    let Some(_) = redis() else { return };
    let run = three_replicas_lease(400.0, 40).await;
    assert!(
        run.allowed <= run.bound,
        "{} admitted in {:.3} s, bound {}",
        run.allowed,
        run.elapsed,
        run.bound
    );
}

/// At one permit per 100 s no permit comes back while they run, so what the bound
/// allows (burst + 1 + 1) is far below the 720 requests whatever the machine's speed:
/// the rest are refused, and a refusal is remembered, so Redis is asked far less often
/// than once per request.
#[tokio::test]
async fn three_replicas_over_a_spent_quota_refuse_without_asking_each_time() {
    let Some(_) = redis() else { return };
    let run = three_replicas_lease(SLOW, 40).await;
    assert!(run.allowed <= run.bound, "{} > {}", run.allowed, run.bound);
    assert!(run.bound < 720, "bound {}", run.bound);
    assert!(run.refused > 0);
    assert!(
        run.asked < run.allowed + run.refused,
        "{} asks for {} permits and {} refusals",
        run.asked,
        run.allowed,
        run.refused
    );
}
