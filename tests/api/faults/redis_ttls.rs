//! Retention in Redis: after a varied run — walks cached with org and with user
//! credentials (C2, C3), a cut result read back (G3–G5), a bounded walk resumed with
//! `_continue` (P10), a rate-limited provider and the org quotas, the event log of a
//! streamed call — every key in a Redis of the test's own has a TTL, and no key outlives
//! its longest reader: stored results and thread marks 15 min, a user's cached data 1 h,
//! the org's 24 h, its config epoch 1 h (longer than any replica's memory of an agent);
//! markers that outlive them (to say "expired") hold no data.

use std::time::Duration;

use deadpool_redis::redis;
use serde_json::{json, Value};

use crate::support::helpers::{fresh_database, scan_keys, spawn_with, test_settings};
use crate::support::rig::{tool_defs, Rig};
use crate::support::services;
use crate::support::upstream_server;

const MIN: u64 = 60;
const HOUR: u64 = 3600;

/// What a key may hold and for how long at most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Family {
    Quota,
    /// The org's config epoch (`call::agent_memory`): read by memory entries of at most
    /// `agent_memory_seconds` (≤ 300 s).
    Config,
    OrgCache,
    UserCache,
    Events,
    /// Stored results and the thread's marks, continuations: data read within 15 min.
    ThreadData,
    /// Outlives the data to say "expired" / "already used": no data in it.
    Marker,
    /// When the store's data began (K5: a result made before it was lost): a time, no
    /// tenant data.
    StoreBorn,
}

impl Family {
    fn bound(self) -> Duration {
        Duration::from_secs(match self {
            Family::Quota | Family::Config => HOUR,
            Family::OrgCache => 24 * HOUR,
            Family::UserCache => HOUR,
            Family::Events | Family::ThreadData => 15 * MIN,
            Family::Marker => 24 * HOUR + 15 * MIN,
            Family::StoreBorn => 366 * 24 * HOUR,
        })
    }
}

/// The family of `key`, knowing which org used org credentials and which a user's.
fn family(key: &str, org_creds: &str, user_creds: &str) -> Family {
    let parts: Vec<&str> = key.split(':').collect();
    match parts.as_slice() {
        ["lg", "quota", ..] => Family::Quota,
        ["lg", "store", "born"] => Family::StoreBorn,
        ["lg", _, "cfg"] => Family::Config,
        ["lg", org, "cache", _] if *org == org_creds => Family::OrgCache,
        ["lg", org, "cache", _] if *org == user_creds => Family::UserCache,
        ["lg", _, "events", _] => Family::Events,
        ["lg", _, thr, kind, ..] if thr.starts_with("thr_") => match (*kind, &parts[4..]) {
            ("res" | "prov" | "holds" | "pending" | "restricted", _) | ("cont", [_]) => {
                Family::ThreadData
            }
            ("seen" | "step", _) | ("cont", [_, "claimed" | "gone"]) => Family::Marker,
            _ => panic!("unclassified thread key {key}: add it to this audit"),
        },
        _ => panic!("unclassified key {key}: add it to this audit with its reader TTL"),
    }
}

#[tokio::test]
async fn every_redis_key_has_a_ttl_no_longer_than_its_longest_reader() {
    let Some(redis_server) = services::require_redis_server().await else {
        return;
    };
    let mut settings = test_settings(fresh_database().await);
    settings.redis_url = Some(redis_server.url().into());
    let app = spawn_with(settings).await;
    let up = upstream_server::start().await;

    // org A: the org's credential; a tool paged 10 at a time so a walk hits 20 pages (P3)
    let mut defs = tool_defs();
    defs.push((
        "list_small_pages",
        "GET",
        "/contacts",
        json!({"type": "object", "properties": {"page": {"type": "integer", "minimum": 1},
            "per_page": {"type": "integer", "minimum": 1, "maximum": 10}}}),
    ));
    let a = Rig::with_tools(&app, &up.base, defs, true).await;
    a.bind_limited(&app, &up.base, "limited_walk", 50).await;
    let token = a.token(&app, "u1", json!({})).await;
    let walk = json!({"_all_pages": true});
    a.call(&app, &token, "t1", "list_contacts", walk.clone())
        .await
        .ok(200);
    let hit = a
        .call(&app, &token, "t1", "list_contacts", walk.clone())
        .await;
    assert_eq!(hit.ok(200)["result"]["_cache"]["hit"], true, "{}", hit.text);
    let cut = a.call(&app, &token, "t2", "list_inboxes", json!({})).await;
    let rid = cut.ok(200)["result"]["_resultId"]
        .as_str()
        .unwrap()
        .to_string();
    a.steps(&app, &token, "t2").await;
    a.call(
        &app,
        &token,
        "t2",
        "queryToolResult",
        json!({"resultId": rid, "limit": 5}),
    )
    .await
    .ok(200);
    let first = a
        .call(&app, &token, "t3", "list_small_pages", walk.clone())
        .await;
    let cont = first.ok(200)["result"]["_continue"]
        .as_str()
        .unwrap_or_else(|| panic!("a 24-page walk stops at 20 pages: {}", first.text))
        .to_string();
    a.call(
        &app,
        &token,
        "t3",
        "list_small_pages",
        json!({"_continue": cont}),
    )
    .await
    .ok(200);
    a.call(&app, &token, "t4", "limited_walk", walk.clone())
        .await
        .ok(200);
    // only a streamed call keeps an event log (a JSON call's id is learnt at its end)
    let (_, body) = a
        .stream_call(&app, &token, "t5", "list_contacts", json!({}))
        .await;
    futures_util::StreamExt::for_each(body, |_| async {}).await;

    // org B: a user's own credential (cached 1 h for that user only)
    let b = Rig::new(&app, &up, true).await;
    let user = b
        .token(
            &app,
            "alice",
            json!({"credentials": {b.provider.clone(): "alice-secret"}}),
        )
        .await;
    b.call(&app, &user, "t1", "list_contacts", walk)
        .await
        .ok(200);

    let mut conn = redis::Client::open(redis_server.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let keys: Vec<String> = scan_keys(&mut conn).await;
    let mut seen = std::collections::BTreeSet::new();
    for key in &keys {
        let fam = family(key, &a.t.org, &b.t.org);
        seen.insert(fam);
        let pttl: i64 = redis::cmd("PTTL")
            .arg(key)
            .query_async(&mut conn)
            .await
            .unwrap();
        if pttl == -2 {
            continue; // expired meanwhile
        }
        assert!(pttl > 0, "{key} has no TTL ({pttl})");
        let ttl = Duration::from_millis(pttl as u64);
        assert!(
            ttl <= fam.bound(),
            "{key} ({fam:?}) lives {ttl:?}, more than {:?}",
            fam.bound()
        );
        if fam == Family::Marker {
            let v: Value = redis::cmd("GET")
                .arg(key)
                .query_async::<Option<String>>(&mut conn)
                .await
                .unwrap()
                .map(Value::String)
                .unwrap_or(Value::Null);
            let text = v.as_str().unwrap_or_default();
            assert!(
                text.len() <= 64 && !text.contains(['{', '[', '"']),
                "marker {key} holds data: {text}"
            );
        }
    }
    use Family::*;
    // quota keys live milliseconds (a rate key) or are deleted on release (a walk slot):
    // checked when a SCAN meets one, not required
    for fam in [OrgCache, UserCache, Events, ThreadData, Marker] {
        assert!(
            seen.contains(&fam),
            "the run wrote no {fam:?} key: {keys:?}"
        );
    }
}

/// `result_ttl_seconds`: stored results, the thread's marks and a call's event log live
/// the configured time, not the default 15 minutes.
#[tokio::test]
async fn g3_stored_results_live_the_configured_ttl() {
    let Some(redis_server) = services::require_redis_server().await else {
        return;
    };
    let mut settings = test_settings(fresh_database().await);
    settings.redis_url = Some(redis_server.url().into());
    settings.result_ttl_seconds = 120;
    let app = spawn_with(settings).await;
    let up = upstream_server::start().await;
    let a = Rig::with_tools(&app, &up.base, tool_defs(), true).await;
    let token = a.token(&app, "u1", json!({})).await;
    let cut = a.call(&app, &token, "t1", "list_inboxes", json!({})).await;
    assert!(
        cut.ok(200)["result"]["_resultId"].is_string(),
        "{}",
        cut.text
    );
    let (_, body) = a
        .stream_call(&app, &token, "t2", "list_contacts", json!({}))
        .await;
    futures_util::StreamExt::for_each(body, |_| async {}).await;

    let mut conn = redis::Client::open(redis_server.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let mut seen = std::collections::BTreeSet::new();
    let keys: Vec<String> = scan_keys(&mut conn).await;
    for key in keys {
        let fam = family(&key, &a.t.org, "");
        if !matches!(fam, Family::ThreadData | Family::Events) {
            continue;
        }
        let pttl: i64 = redis::cmd("PTTL")
            .arg(&key)
            .query_async(&mut conn)
            .await
            .unwrap();
        assert!(
            (1..=120_000).contains(&pttl),
            "{key} ({fam:?}) has PTTL {pttl} ms, configured 120 s"
        );
        seen.insert(fam);
    }
    assert_eq!(seen.len(), 2, "a stored result and an event log: {seen:?}");
}
