//! loopgate's own CPU per cache hit that is not the engine's: the key a hit's
//! presentation is kept under (`CacheMemory::presenting_key`, for `scripts/bench-load`'s
//! hit: a 1,000-row walk with `_filter` and `_fields`) and the runtime token's check
//! (`TokenService::verify`: a token as `POST /v1/runtime-tokens` mints it, without and
//! with a sealed user credential; the first time on a replica, and remembered). Needs no
//! services:
//!
//! ```text
//! cargo bench --bench per_call -- --warm-up-time 1 --measurement-time 3
//! ```

#![allow(clippy::expect_used)]

use std::collections::HashMap;
use std::hint::black_box;

use chrono::{TimeZone, Utc};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use loopgate::auth::tokens::{MintRequest, TokenService};
use loopgate::auth::UserCredential;
use loopgate::crypto::{sha256, Cipher};
use loopgate::results::cache_memory::CacheMemory;
use loopgate::results::dataset_cache::Held;
use loopgate::store::OrgId;
use loopgate_engine::{analyze, parse_call, CacheLabel, Labels, Limits};
use secrecy::SecretString;
use serde_json::json;

fn presenting_key(c: &mut Criterion) {
    let schema = json!({"type": "object", "properties": {
        "status": {"type": "string"},
        "per_page": {"type": "integer", "maximum": 100},
        "page": {"type": "integer"}
    }});
    let args = json!({"_all_pages": true,
        "_filter": [{"field": "status", "op": "eq", "value": "open"}],
        "_fields": ["id", "name", "owner.email"]});
    let limits = Limits::default();
    let plan = parse_call(&analyze(&schema), &schema, args, true, &limits).expect("a valid call");
    let at = |s| Utc.timestamp_opt(s, 0).single().expect("a time");
    let held = Held {
        key: "lg:{org_bench}:c:tool_items:scope:fp0123456789abcdef".into(),
        cached_at: at(1_764_590_000),
        expires_at: at(1_764_593_600),
    };
    let labels = Labels {
        continue_token: None,
        cache: Some(CacheLabel::hit(held.cached_at, held.expires_at)),
        degraded: None,
    };
    c.bench_function("presenting key: 1,000-row walk, _filter + _fields", |b| {
        b.iter(|| CacheMemory::presenting_key(black_box(&held), &plan, &labels, &limits))
    });
    // the key as it was computed before (main 5ea35f6), side by side on the same machine
    c.bench_function("presenting key, before: Debug text + SHA-256", |b| {
        b.iter(|| {
            let held = black_box(&held);
            let how = format!("{plan:?}\n{labels:?}\n{limits:?}");
            format!(
                "{} {}",
                held.key,
                hex::encode(&sha256(how.as_bytes())[..16])
            )
        })
    });
}

fn service() -> TokenService {
    TokenService::new(
        &[7u8; 32],
        Cipher::new(&[3u8; 32]),
        "loopgate",
        "loopgate-runtime",
    )
    .expect("a token service")
}

fn token_verify(c: &mut Criterion) {
    let tokens = service();
    let org = OrgId::trusted("org_bench");
    let mint = |credentials: &HashMap<String, UserCredential>| {
        tokens
            .mint(&MintRequest {
                org: &org,
                minted_by: "key_bench",
                user_id: "bench",
                agent_id: Some("agt_bench"),
                cache_scope: None,
                credentials,
                ttl_seconds: 3600,
            })
            .expect("a token")
            .0
    };
    let plain = mint(&HashMap::new());
    let one = HashMap::from([(
        "prv_bench".to_owned(),
        UserCredential {
            secret: SecretString::from("user-secret-0123456789"),
            binding: None,
        },
    )]);
    let sealed = mint(&one);
    for (name, token) in [
        ("no credentials", &plain),
        ("one sealed credential", &sealed),
    ] {
        // a token this replica has not verified yet: checked in full (and remembered)
        c.bench_function(&format!("runtime token verify, first: {name}"), |b| {
            b.iter_batched_ref(
                service,
                |fresh| fresh.verify(black_box(token)).expect("valid"),
                BatchSize::SmallInput,
            )
        });
        tokens.verify(token).expect("valid");
        c.bench_function(&format!("runtime token verify, remembered: {name}"), |b| {
            b.iter(|| tokens.verify(black_box(token)).expect("valid"))
        });
    }
}

criterion_group!(benches, presenting_key, token_verify);
criterion_main!(benches);
