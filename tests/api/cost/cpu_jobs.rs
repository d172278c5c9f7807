//! CPU-bound work off the async workers (`walk::cpu_jobs`): the same calls — a walk with
//! `_filter` and `_fields` (R2), a cut result (G1, G3) read back with `queryToolResult`
//! (G4), a cache hit reshaped (C4, C5) — answer exactly the same whether every job runs
//! in place or every job runs on the blocking pool under an org cap of 1 and a replica
//! cap of 1. (That one org's parked job holds back its own next job but not another org's
//! is `walk::cpu_jobs`'s unit test.)

use reqwest::Method;
use serde_json::{json, Value};

use crate::support::helpers::{fresh_database, spawn_with, test_settings, TestApp};
use crate::support::rig::Rig;
use crate::support::upstream_server::{self, Upstream};

/// `res_…` ids and cache times differ between runs; everything else must not.
fn normalized(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !matches!(k.as_str(), "_resultId" | "cachedAt" | "expiresAt"))
                .map(|(k, v)| (k.clone(), normalized(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(normalized).collect()),
        Value::String(s) => Value::String(without_times(&without_result_ids(s))),
        other => other.clone(),
    }
}

/// `2026-12-01T03:42:59Z` → `<time>` (a cached walk's note says when it was made).
fn without_times(s: &str) -> String {
    let b = s.as_bytes();
    let shape = b"dddd-dd-ddTdd:dd:ddZ";
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        let fits = b.len() - i >= shape.len()
            && shape.iter().zip(&b[i..]).all(|(p, c)| match p {
                b'd' => c.is_ascii_digit(),
                p => p == c,
            });
        if fits {
            out.push_str("<time>");
            i += shape.len();
        } else {
            let ch = s[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

fn without_result_ids(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("res_") {
        out.push_str(&rest[..i]);
        out.push_str("res_*");
        let tail = &rest[i + 4..];
        let end = tail
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(tail.len());
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

async fn pool_jobs(app: &TestApp) -> f64 {
    let m = app.call(Method::GET, "/metrics", None, None).await;
    m.text
        .lines()
        .find_map(|l| l.strip_prefix("loopgate_cpu_jobs_total{mode=\"pool\"} "))
        .map(|v| v.parse().unwrap())
        .unwrap_or(0.0)
}

/// Every answer of the scripted calls, normalized.
async fn answers(app: &TestApp, up: &Upstream) -> Vec<Value> {
    let rig = Rig::new(app, up, true).await;
    let token = rig.token(app, "u1", json!({})).await;
    let walk = json!({"_all_pages": true, "_fields": ["id", "name", "tags"],
        "_filter": [{"field": "id", "op": "lt", "value": 150}]});
    let mut out = Vec::new();
    let call = |thread: &'static str, name: &'static str, args: Value| {
        let (rig, token) = (&rig, &token);
        async move {
            let r = rig.call(app, token, thread, name, args).await;
            r.ok(200)["result"].clone()
        }
    };
    out.push(call("t1", "list_contacts", walk.clone()).await);
    // C4, C5: a hit, reshaped with other `_fields`
    let hit = call(
        "t1",
        "list_contacts",
        json!({"_all_pages": true, "_fields": ["id"]}),
    )
    .await;
    assert_eq!(hit["_cache"]["hit"], true);
    out.push(hit);
    let cut = call("t2", "list_inboxes", json!({})).await;
    assert_eq!(cut["_truncated"], true, "3,219 inboxes are cut");
    let rid = cut["_resultId"].as_str().unwrap().to_string();
    out.push(cut);
    out.push(
        call(
            "t2",
            "queryToolResult",
            json!({"resultId": rid, "offset": 100, "limit": 50,
            "filter": [{"field": "id", "op": "gte", "value": 10}]}),
        )
        .await,
    );
    out.push(call("t3", "list_orders", json!({"_all_pages": true})).await);
    out.iter().map(normalized).collect()
}

#[tokio::test]
async fn results_are_identical_in_place_and_on_the_capped_blocking_pool() {
    let up = upstream_server::start().await;
    let mut inline = test_settings(fresh_database().await);
    inline.cpu_inline_bytes = usize::MAX;
    let inline = spawn_with(inline).await;
    let mut pooled = test_settings(fresh_database().await);
    pooled.cpu_inline_bytes = 0;
    pooled.cpu_jobs_per_org = 1;
    pooled.cpu_jobs = 1;
    let pooled = spawn_with(pooled).await;

    let a = answers(&inline, &up).await;
    let b = answers(&pooled, &up).await;
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x, y);
    }
    assert_eq!(pool_jobs(&inline).await, 0.0, "every job ran in place");
    // pages parsed, presentations, stored and cached sets, the hit, the query: all pooled
    assert!(pool_jobs(&pooled).await >= 10.0);
}
