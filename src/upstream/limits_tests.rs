//! The caller's limits against in-test servers: byte cap, timeouts, statuses with
//! `Retry-After`, and rate limits shared across calls.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Map};

use super::http_tests::{caller, get, target};
use super::testserver::{serve, Body, Reply};
use super::{CallError, RateLimits, Request, UpstreamClient, UpstreamClientConfig};
use crate::store::providers::{AuthType, RateLimit};

#[tokio::test]
async fn bodies_past_the_cap_are_abandoned_while_streaming() {
    let server = serve(|s| Reply {
        status: 200,
        headers: Vec::new(),
        body: if s.target == "/endless" {
            Body::Endless
        } else {
            Body::Declared(1 << 40)
        },
        delay: Duration::ZERO,
    })
    .await;
    let c = UpstreamClient::new(UpstreamClientConfig {
        allow_private: true,
        max_body_bytes: 1 << 20,
        timeout: Duration::from_secs(10),
        ..UpstreamClientConfig::default()
    });
    for path in ["/endless", "/declared"] {
        let err = c
            .call(
                &get(&server.url(), path, AuthType::None, None),
                &Map::new(),
                None,
            )
            .await
            .unwrap_err();
        assert_eq!(err, CallError::TooLarge { limit: 1 << 20 }, "{path}");
        assert!(!err.transient());
    }
    // Exactly at the cap is fine.
    let exact = serve(|_| Reply::new(200, vec![b'y'; 1 << 20])).await;
    let res = c
        .call(
            &get(&exact.url(), "/", AuthType::None, None),
            &Map::new(),
            None,
        )
        .await
        .unwrap();
    assert_eq!(res.body.len(), 1 << 20);
}

#[tokio::test]
async fn slow_upstreams_time_out() {
    let server = serve(|_| Reply {
        delay: Duration::from_secs(5),
        ..Reply::new(200, "late")
    })
    .await;
    let c = UpstreamClient::new(UpstreamClientConfig {
        allow_private: true,
        timeout: Duration::from_millis(300),
        ..UpstreamClientConfig::default()
    });
    let err = c
        .call(
            &get(&server.url(), "/", AuthType::None, None),
            &Map::new(),
            None,
        )
        .await
        .unwrap_err();
    assert_eq!(err, CallError::Timeout { retryable: true });
    let post = target(&server.url(), "POST", "/", json!({}), AuthType::None, None);
    let err = c.call(&post, &Map::new(), None).await.unwrap_err();
    assert_eq!(
        err,
        CallError::Timeout { retryable: false },
        "a POST may have been processed"
    );
    // A shorter per-request deadline wins over the configured one.
    let err = caller()
        .send(
            &get(&server.url(), "/", AuthType::None, None),
            Request::Args(&Map::new()),
            None,
            Duration::from_millis(200),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, CallError::Timeout { .. }));
}

#[tokio::test]
async fn statuses_carry_retry_after_and_transience() {
    let server = serve(|s| match s.target.as_str() {
        "/429" => Reply::new(429, "slow down").header("retry-after", "7"),
        "/503" => {
            Reply::new(503, "maintenance").header("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")
        }
        "/404" => Reply::new(404, r#"{"error":"no such user"}"#),
        _ => Reply::new(500, "boom"),
    })
    .await;
    let c = caller();
    let call = |method: &'static str, path: &'static str| {
        let t = target(&server.url(), method, path, json!({}), AuthType::None, None);
        let c = &c;
        async move { c.call(&t, &Map::new(), None).await.unwrap_err() }
    };
    let e = call("GET", "/429").await;
    assert_eq!(e.status(), Some(429));
    assert_eq!(e.retry_after(), Some(Duration::from_secs(7)));
    assert!(e.transient());
    assert!(
        call("POST", "/429").await.transient(),
        "a refused POST may be retried"
    );
    let e = call("GET", "/503").await;
    assert_eq!(e.retry_after(), Some(Duration::ZERO), "a past date");
    assert!(e.transient());
    assert!(!call("POST", "/503").await.transient());
    assert!(call("DELETE", "/500").await.transient());
    let e = call("GET", "/404").await;
    assert!(!e.transient());
    assert_eq!(e.retry_after(), None);
    assert_eq!(
        e.to_string(),
        r#"the upstream answered 404: {"error":"no such user"}"#
    );
}

#[test]
fn retry_after_dates() {
    let now = chrono::DateTime::parse_from_rfc3339("2015-10-21T07:27:00Z")
        .unwrap()
        .to_utc();
    let parse = |v: &str| super::response::retry_after(v, now);
    assert_eq!(
        parse("Wed, 21 Oct 2015 07:28:00 GMT"),
        Some(Duration::from_secs(60))
    );
    assert_eq!(parse(" 0 "), Some(Duration::ZERO));
    assert_eq!(parse("soon"), None);
    assert_eq!(parse("-5"), None);
}

#[tokio::test]
async fn rate_limits_space_requests_across_callers() {
    let count = Arc::new(AtomicUsize::new(0));
    let counter = count.clone();
    let server = serve(move |_| {
        counter.fetch_add(1, Ordering::SeqCst);
        Reply::new(200, "{}")
    })
    .await;
    let limits = RateLimits::new();
    let limit = RateLimit {
        requests_per_second: 5.0,
        burst: 1,
    };
    let limiter = limits.for_provider("prv_1", Some(&limit)).unwrap();
    let c = Arc::new(caller());
    let t = Arc::new(get(&server.url(), "/", AuthType::None, None));
    let mut tasks = Vec::new();
    for _ in 0..12 {
        let (c, t) = (c.clone(), t.clone());
        // Each task asks the registry again, as separate tool calls would.
        let limiter = limits.for_provider("prv_1", Some(&limit)).unwrap();
        tasks.push(tokio::spawn(async move {
            c.call(&t, &Map::new(), Some(&limiter)).await
        }));
    }
    for task in tasks {
        task.await.unwrap().unwrap();
    }
    drop(limiter);
    let mut times: Vec<_> = server.seen().iter().map(|s| s.at).collect();
    times.sort();
    assert_eq!(times.len(), 12);
    assert_eq!(count.load(Ordering::SeqCst), 12);
    // Any 1 s window: at most 5 (rate) + 1 (burst) requests, with one of slack for
    // arrival jitter already counted in the burst term.
    let most = (0..times.len())
        .map(|i| {
            times[i..]
                .iter()
                .take_while(|t| t.duration_since(times[i]) < Duration::from_secs(1))
                .count()
        })
        .max()
        .unwrap();
    assert!(most <= 6, "{most} requests within one second");
}

#[test]
fn rate_limiters_are_shared_and_recreated_on_change() {
    let limits = RateLimits::new();
    let a = RateLimit {
        requests_per_second: 2.0,
        burst: 3,
    };
    let first = limits.for_provider("p", Some(&a)).unwrap();
    let again = limits.for_provider("p", Some(&a)).unwrap();
    assert!(Arc::ptr_eq(&first, &again));
    let b = RateLimit {
        requests_per_second: 4.0,
        burst: 3,
    };
    let changed = limits.for_provider("p", Some(&b)).unwrap();
    assert!(!Arc::ptr_eq(&first, &changed));
    assert_eq!(changed.limit(), &b);
    assert!(limits.for_provider("p", None).is_none());
    assert!(limits
        .for_provider(
            "q",
            Some(&RateLimit {
                requests_per_second: 0.0,
                burst: 1
            })
        )
        .is_none());
    let other = limits.for_provider("r", Some(&a)).unwrap();
    assert!(!Arc::ptr_eq(&first, &other));
}
