//! Against the real Redis of `scripts/test` (`REDIS_URL`); skipped without one.

use std::sync::Arc;
use std::time::Duration;

use super::{Decision, Shared};
use crate::metrics::Metrics;

fn shared_at(url: &str, replicas: u32) -> Arc<Shared> {
    let pool = crate::runtime::kv::connect(url).unwrap();
    Shared::new(Some(pool), replicas, Arc::new(Metrics::default()))
}

fn redis() -> Option<Arc<Shared>> {
    std::env::var("REDIS_URL").ok().map(|u| shared_at(&u, 3))
}

fn unique(kind: &str) -> String {
    format!("lg:test:{kind}:{}", crate::crypto::random_token(12))
}

#[tokio::test]
async fn gcra_allows_the_burst_then_says_how_long_to_wait() {
    let Some(q) = redis() else { return };
    let key = unique("gcra");
    // 10/s with a burst of 2: two now, the third in about 100 ms
    assert_eq!(q.rate(&key, 10.0, 2).await, Decision::Allowed);
    assert_eq!(q.rate(&key, 10.0, 2).await, Decision::Allowed);
    let Decision::Wait(d) = q.rate(&key, 10.0, 2).await else {
        panic!("third request should wait")
    };
    assert!(
        d > Duration::ZERO && d <= Duration::from_millis(100),
        "{d:?}"
    );
    // a denied check took nothing: still denied, never a longer wait than the interval
    let Decision::Wait(again) = q.rate(&key, 10.0, 2).await else {
        panic!("still denied")
    };
    assert!(again <= Duration::from_millis(100));
    assert!(!q.degraded());
}

#[tokio::test]
async fn two_replicas_share_one_rate() {
    let (Some(a), Some(b)) = (redis(), redis()) else {
        return;
    };
    let key = unique("gcra");
    assert_eq!(a.rate(&key, 1.0, 1).await, Decision::Allowed);
    assert!(matches!(b.rate(&key, 1.0, 1).await, Decision::Wait(_)));
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
        Decision::Allowed
    );
    assert_eq!(
        b.acquire_slot(&key, "c2", 2, lease).await,
        Decision::Allowed
    );
    assert!(matches!(
        a.acquire_slot(&key, "c3", 2, lease).await,
        Decision::Wait(_)
    ));
    b.release_slot(&key, "c2").await;
    assert_eq!(
        a.acquire_slot(&key, "c3", 2, lease).await,
        Decision::Allowed
    );
}

#[tokio::test]
async fn an_expired_lease_frees_its_slot() {
    let Some(q) = redis() else { return };
    let key = unique("slots");
    assert_eq!(
        q.acquire_slot(&key, "gone", 1, Duration::from_millis(50))
            .await,
        Decision::Allowed
    );
    tokio::time::sleep(Duration::from_millis(80)).await;
    assert_eq!(
        q.acquire_slot(&key, "next", 1, Duration::from_secs(5))
            .await,
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
    assert_eq!(q.rate("k", 5.0, 1).await, Decision::Unavailable);
    assert!(q.degraded());
    assert!(q
        .metrics()
        .render()
        .contains("loopgate_quota_fallbacks_total 1"));
    assert_eq!(q.share(10), 2);
    assert_eq!(q.share(2), 1);
    assert_eq!(
        q.acquire_slot("s", "m", 1, Duration::from_secs(1)).await,
        Decision::Unavailable
    );
}

#[tokio::test]
async fn without_redis_there_is_nothing_to_share() {
    let q = Shared::new(None, 3, Arc::new(Metrics::default()));
    assert!(!q.is_shared());
    assert_eq!(q.rate("k", 1.0, 1).await, Decision::Allowed);
    assert_eq!(q.rate("k", 1.0, 1).await, Decision::Allowed);
}
