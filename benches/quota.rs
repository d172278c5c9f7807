//! What a shared quota adds to each upstream request: one permit from a
//! provider limiter that is process-local (governor only) versus shared across replicas
//! (governor in front, then the replica's lease of the shared GCRA: one `EVAL` per lease of
//! up to 64 permits, `quota::lease`), at a rate high enough that no request ever waits, so
//! the figure is the limiter's own cost. Needs `REDIS_URL`
//! (run through `scripts/services.sh`):
//!
//! ```text
//! . scripts/services.sh && cargo bench --bench quota
//! ```

#![allow(clippy::expect_used)]

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use loopgate::quota::Shared;
use loopgate::store::providers::RateLimit;
use loopgate::telemetry::metrics::Metrics;
use loopgate::upstream::ProviderLimiter;

fn limiter(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let limit = RateLimit {
        requests_per_second: 1e9,
        burst: 1_000_000,
    };
    let local = ProviderLimiter::new(&limit).expect("valid limit");
    c.bench_function("provider permit: process-local governor", |b| {
        b.iter(|| rt.block_on(local.until_ready()))
    });
    let Ok(url) = std::env::var("REDIS_URL") else {
        eprintln!("REDIS_URL is not set: the shared limiter is not measured");
        return;
    };
    let _runtime = rt.enter();
    let pool = loopgate::kv::connect(&url, std::time::Duration::from_millis(500))
        .expect("redis connection");
    let shared = Shared::new(Some(pool), 3, Arc::new(Metrics::default()));
    let id = format!("bench_{}", std::process::id());
    let across = ProviderLimiter::across_replicas(&limit, &id, &shared).expect("valid limit");
    c.bench_function(
        "provider permit: shared across replicas (governor + Redis GCRA)",
        |b| b.iter(|| rt.block_on(across.until_ready())),
    );
    assert!(
        !shared.degraded(),
        "Redis did not answer: the figure would be the fallback's"
    );
}

criterion_group!(benches, limiter);
criterion_main!(benches);
