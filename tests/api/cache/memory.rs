//! The dataset cache's memory in each replica (`results::cache_memory`). A hit served
//! from memory is never stale (C1, C4: a `_refresh` on another replica is seen by the
//! next hit; an entry gone from Redis is never served), never crosses a scope (C2), stays
//! within its bytes, and moves a few bytes from Redis instead of the entry.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use serde_json::{json, Value};

use crate::cache::dataset::metric;
use crate::support::helpers::{fresh_database, spawn_with, test_settings, TestApp};
use crate::support::redis_count;
use crate::support::rig::Rig;

/// An upstream of 300 rows whose every row carries the current `gen` (set by the test), so
/// a result shows which walk it came from; counts its requests.
pub(crate) struct Rows {
    base: String,
    gen: Arc<AtomicU64>,
    requests: Arc<AtomicU64>,
}

const ROWS: usize = 300;

pub(crate) async fn rows_server() -> Rows {
    rows_server_with(40).await
}

/// [`rows_server`] with each row's `note` `note` characters long.
async fn rows_server_with(note: usize) -> Rows {
    let (gen, requests) = (Arc::new(AtomicU64::new(1)), Arc::new(AtomicU64::new(0)));
    let state = web::Data::new((gen.clone(), requests.clone()));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = HttpServer::new(move || {
        App::new().app_data(state.clone()).route(
            "/rows",
            web::get().to(
                move |req: HttpRequest, s: web::Data<(Arc<AtomicU64>, Arc<AtomicU64>)>| async move {
                    s.1.fetch_add(1, Ordering::SeqCst);
                    let q = web::Query::<std::collections::HashMap<String, usize>>::from_query(
                        req.query_string(),
                    )
                    .map(|q| q.into_inner())
                    .unwrap_or_default();
                    let offset = q.get("offset").copied().unwrap_or(0).min(ROWS);
                    let limit = q.get("limit").copied().unwrap_or(100).min(100);
                    let g = s.0.load(Ordering::SeqCst);
                    let data: Vec<Value> = (offset..(offset + limit).min(ROWS))
                        .map(|i| json!({"id": i, "gen": g, "status": if i % 3 == 0 { "open" } else { "closed" },
                                        "owner": {"email": format!("o{i}@example.com")}, "note": "x".repeat(note)}))
                        .collect();
                    HttpResponse::Ok().json(json!({"data": data, "total": ROWS}))
                },
            ),
        )
    })
    .workers(1)
    .listen(listener)
    .unwrap()
    .run();
    tokio::spawn(server);
    Rows {
        base: format!("http://127.0.0.1:{port}"),
        gen,
        requests,
    }
}

pub(crate) async fn rig(app: &TestApp, up: &Rows) -> Rig {
    let schema = json!({"type": "object", "properties": {"offset": {"type": "integer"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100}}});
    Rig::with_tools(
        app,
        &up.base,
        vec![("list_rows", "GET", "/rows", schema)],
        true,
    )
    .await
}

/// The bench's kind of hit: every page, filtered and projected.
pub(crate) fn walk_args() -> Value {
    json!({"_all_pages": true, "_filter": [{"field": "status", "op": "eq", "value": "open"}],
           "_fields": ["id", "gen", "owner.email"]})
}

async fn call(app: &TestApp, rig: &Rig, token: &str, args: Value) -> Value {
    let r = rig.call(app, token, "t", "list_rows", args).await;
    r.ok(200)["result"].clone()
}

/// Every row's `gen` (one value when the result came from one walk).
fn gens(result: &Value) -> Vec<u64> {
    let mut g: Vec<u64> = result["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["gen"].as_u64().unwrap())
        .collect();
    g.dedup();
    g
}

async fn metrics(app: &TestApp) -> String {
    app.call(reqwest::Method::GET, "/metrics", None, None)
        .await
        .text
}

/// Two replicas of one service (one database, the test Redis), the rows upstream, its rig
/// and a token of user `u1`.
async fn two_replicas() -> (TestApp, TestApp, Rows, Rig, String) {
    let db = fresh_database().await;
    let one = spawn_with(test_settings(db.clone())).await;
    let two = spawn_with(test_settings(db)).await;
    let up = rows_server().await;
    let rig = rig(&one, &up).await;
    let token = rig.token(&one, "u1", json!({})).await;
    (one, two, up, rig, token)
}

const ENTRY_HITS: &str = r#"loopgate_cache_memory_total{kind="entry",outcome="hit"}"#;
const PRESENTED_HITS: &str = r#"loopgate_cache_memory_total{kind="presented",outcome="hit"}"#;

/// C1/C4 across replicas: replica one serves hits from its memory (decoded entry and
/// presented text); a `_refresh` on replica two replaces the entry, and one's very next
/// hit serves the refreshed rows, not what it kept.
#[tokio::test]
async fn c4_a_hit_from_memory_serves_the_rows_a_refresh_on_another_replica_wrote() {
    let (one, two, up, rig, token) = two_replicas().await;
    let first = call(&one, &rig, &token, walk_args()).await;
    assert!(first.get("_cache").is_none());
    let walked = up.requests.load(Ordering::SeqCst);
    let mut last = Value::Null;
    for _ in 0..3 {
        let hit = call(&one, &rig, &token, walk_args()).await;
        assert_eq!(hit["_cache"]["hit"], true);
        assert_eq!((gens(&hit), &hit["_itemCount"]), (vec![1], &json!(100)));
        assert_ne!(hit["_resultId"], first["_resultId"]);
        assert_ne!(hit["_resultId"], last["_resultId"]);
        last = hit;
    }
    let m = metrics(&one).await;
    assert!(metric(&m, ENTRY_HITS) >= 2, "{m}");
    assert!(metric(&m, PRESENTED_HITS) >= 1, "{m}");
    let bytes = metric(&m, "loopgate_cache_memory_bytes ");
    assert!(bytes > 0 && bytes <= 64 << 20, "{bytes}");

    up.gen.store(2, Ordering::SeqCst);
    let mut refresh = walk_args();
    refresh["_refresh"] = json!(true);
    let fresh = call(&two, &rig, &token, refresh).await;
    assert_eq!(gens(&fresh), vec![2]);
    let after_refresh = up.requests.load(Ordering::SeqCst);
    assert!(after_refresh > walked);

    let hit = call(&one, &rig, &token, walk_args()).await;
    assert_eq!(hit["_cache"]["hit"], true);
    assert_eq!(gens(&hit), vec![2], "the refreshed rows, not the kept ones");
    // another presentation of the refreshed entry too
    let other = call(
        &one,
        &rig,
        &token,
        json!({"_all_pages": true, "_fields": ["gen"]}),
    )
    .await;
    assert_eq!(
        (gens(&other), &other["_itemCount"]),
        (vec![2], &json!(ROWS))
    );
    assert_eq!(up.requests.load(Ordering::SeqCst), after_refresh);
    // every _resultId of a hit reads back the whole set it was served from, and one
    // presented from memory before the refresh still reads its own walk (G3)
    assert_eq!(
        first_row(&one, &rig, &token, &hit).await,
        (json!(ROWS), json!(2))
    );
    assert_eq!(
        first_row(&two, &rig, &token, &last).await,
        (json!(ROWS), json!(1))
    );
}

const ENTRY_STALE: &str = r#"loopgate_cache_memory_total{kind="entry",outcome="stale"}"#;

/// A hit from memory stores its result pointing at the version memory holds, and asks
/// Redis which version is current in that same round trip. When a `_refresh` on another
/// replica replaced it, that pointer (to a version nobody was served) is gone before the
/// call answers — no result of the thread stays under an id no call returned — and the
/// call answers the refreshed rows, with a `_resultId` that reads them.
#[tokio::test]
async fn c4_a_result_pointing_at_a_replaced_version_is_never_readable() {
    let (one, two, up, rig, token) = two_replicas().await;
    let mut returned = vec![call(&one, &rig, &token, walk_args()).await];
    let hit = call(&one, &rig, &token, walk_args()).await;
    assert_eq!((&hit["_cache"]["hit"], gens(&hit)), (&json!(true), vec![1]));
    returned.push(hit);
    up.gen.store(2, Ordering::SeqCst);
    let mut refresh = walk_args();
    refresh["_refresh"] = json!(true);
    returned.push(call(&two, &rig, &token, refresh).await);
    assert_eq!(metric(&metrics(&one).await, ENTRY_STALE), 0);
    let hits = metric(&metrics(&one).await, ENTRY_HITS);

    // one's memory holds version 1; Redis holds version 2
    let hit = call(&one, &rig, &token, walk_args()).await;
    assert_eq!((&hit["_cache"]["hit"], gens(&hit)), (&json!(true), vec![2]));
    assert_eq!(
        metric(&metrics(&one).await, ENTRY_STALE),
        1,
        "served unconfirmed, found replaced"
    );
    assert_eq!(
        metric(&metrics(&one).await, ENTRY_HITS),
        hits,
        "a replaced entry is no hit of the memory"
    );
    // now one's memory holds version 2: a hit from it, confirmed, counts
    let again = call(&one, &rig, &token, walk_args()).await;
    assert_eq!(gens(&again), vec![2]);
    assert_eq!(metric(&metrics(&one).await, ENTRY_HITS), hits + 1);
    returned.push(again);
    assert_eq!(
        first_row(&two, &rig, &token, &hit).await,
        (json!(ROWS), json!(2))
    );
    returned.push(hit);
    let ids: Vec<&str> = returned
        .iter()
        .map(|r| r["_resultId"].as_str().unwrap())
        .collect();
    let Some(url) = crate::support::services::require_redis_url() else {
        return;
    };
    let client = redis::Client::open(url).unwrap();
    let mut redis = client.get_multiplexed_async_connection().await.unwrap();
    let keys: Vec<String> = crate::support::helpers::scan_keys(&mut redis).await;
    let mut stored = 0;
    for key in keys
        .iter()
        .filter(|k| k.starts_with(&format!("lg:{}:", rig.t.org)))
    {
        for kind in [":res:", ":prov:", ":seen:"] {
            if let Some((_, id)) = key.split_once(kind) {
                assert!(ids.contains(&id), "{key} is no result a call returned");
                stored += 1;
            }
        }
    }
    assert_eq!(stored, 3 * ids.len(), "{keys:?}");
}

/// `queryToolResult` of `result`'s `_resultId`: the stored total and the first row's `gen`.
async fn first_row(app: &TestApp, rig: &Rig, token: &str, result: &Value) -> (Value, Value) {
    let rid = result["_resultId"].as_str().unwrap();
    let args = json!({"resultId": rid, "limit": 1});
    let q = rig.call(app, token, "t", "queryToolResult", args).await;
    let r = &q.ok(200)["result"];
    (r["total"].clone(), r["items"][0]["gen"].clone())
}

/// The cache key of the walk cached in `org` (the current entry, not a retired version).
async fn entry_key(redis: &mut redis::aio::MultiplexedConnection, org: &str) -> String {
    let keys: Vec<String> = crate::support::helpers::scan_keys(redis).await;
    let mine: Vec<String> = keys
        .into_iter()
        .filter(|k| {
            k.starts_with(&format!("lg:{org}:cache:"))
                && !k.contains('#')
                && !k.ends_with(":walking")
        })
        .collect();
    assert_eq!(mine.len(), 1, "{mine:?}");
    mine[0].clone()
}

/// An entry that expired (or was dropped) in Redis is never served from memory: the next
/// call walks again.
#[tokio::test]
async fn c3_an_entry_gone_from_redis_is_never_served_from_memory() {
    let app = spawn_with(test_settings(fresh_database().await)).await;
    let up = rows_server().await;
    let rig = rig(&app, &up).await;
    let token = rig.token(&app, "u1", json!({})).await;
    call(&app, &rig, &token, walk_args()).await;
    for _ in 0..2 {
        assert_eq!(
            call(&app, &rig, &token, walk_args()).await["_cache"]["hit"],
            true
        );
    }
    assert!(metric(&metrics(&app).await, ENTRY_HITS) >= 1);
    let walked = up.requests.load(Ordering::SeqCst);
    let Some(url) = crate::support::services::require_redis_url() else {
        return;
    };
    let client = redis::Client::open(url).unwrap();
    let mut redis = client.get_multiplexed_async_connection().await.unwrap();
    let key = entry_key(&mut redis, &rig.t.org).await;
    // the writer's TTL runs out in Redis
    let _: i64 = redis::cmd("PEXPIRE")
        .arg(&key)
        .arg(1)
        .query_async(&mut redis)
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    up.gen.store(2, Ordering::SeqCst);
    let after = call(&app, &rig, &token, walk_args()).await;
    assert!(after.get("_cache").is_none(), "expired: a miss, {after}");
    assert_eq!(gens(&after), vec![2]);
    assert!(up.requests.load(Ordering::SeqCst) > walked);
}

/// C2: what one scope's hits keep in memory is never another's: a user with their own
/// credential, another user with the same one, another org on the same upstream.
#[tokio::test]
async fn c2_another_scope_never_reads_what_a_replica_kept_in_memory() {
    let app = spawn_with(test_settings(fresh_database().await)).await;
    let up = rows_server().await;
    let rig = rig(&app, &up).await;
    let creds = json!({"credentials": {rig.provider.clone(): "same-secret"}});
    let alice = rig.token(&app, "alice", creds.clone()).await;
    let bob = rig.token(&app, "bob", creds).await;
    call(&app, &rig, &alice, walk_args()).await;
    for _ in 0..2 {
        assert_eq!(
            call(&app, &rig, &alice, walk_args()).await["_cache"]["hit"],
            true
        );
    }
    assert!(metric(&metrics(&app).await, ENTRY_HITS) >= 1);
    up.gen.store(2, Ordering::SeqCst);
    let before = up.requests.load(Ordering::SeqCst);
    let b = call(&app, &rig, &bob, walk_args()).await;
    assert!(b.get("_cache").is_none(), "bob's own walk: {b}");
    assert_eq!(gens(&b), vec![2]);
    let walked = up.requests.load(Ordering::SeqCst);
    assert!(walked > before);
    let other = self::rig(&app, &up).await;
    let stranger = other.token(&app, "alice", json!({})).await;
    let o = call(&app, &other, &stranger, walk_args()).await;
    assert!(o.get("_cache").is_none(), "another org: {o}");
    assert!(up.requests.load(Ordering::SeqCst) > walked);
    // alice still gets her own (first) walk
    assert_eq!(gens(&call(&app, &rig, &alice, walk_args()).await), vec![1]);
}

/// Item 4: what one cache hit asks of Redis, with the memory and without it (the entry
/// read whole on every hit). Counted on the wire; `--nocapture` prints the numbers.
#[tokio::test]
async fn a_hit_from_memory_moves_a_few_bytes_from_redis_not_the_entry() {
    let mut per_hit = Vec::new();
    for memory in [0usize, 64 << 20] {
        let counter = redis_count::start().await;
        let mut settings = test_settings(fresh_database().await);
        settings.redis_url = Some(counter.url.clone().into());
        settings.cache_memory_bytes = memory;
        let app = spawn_with(settings).await;
        let up = rows_server().await;
        let rig = rig(&app, &up).await;
        let token = rig.token(&app, "u1", json!({})).await;
        for _ in 0..3 {
            call(&app, &rig, &token, walk_args()).await;
        }
        // the quietest of three hits: a background command (a rate lease renewed) may
        // fall into one of them
        let mut quietest: Option<redis_count::Traffic> = None;
        for _ in 0..3 {
            let before = counter.snapshot();
            let hit = call(&app, &rig, &token, walk_args()).await;
            let traffic = counter.since(&before);
            assert_eq!(hit["_cache"]["hit"], true);
            if quietest
                .as_ref()
                .is_none_or(|q| traffic.commands.len() < q.commands.len())
            {
                quietest = Some(traffic);
            }
        }
        let traffic = quietest.unwrap();
        eprintln!(
            "cache_memory_bytes={memory}: one hit, {} Redis commands {:?} in {} round trips, {} bytes sent, {} bytes received",
            traffic.commands.len(),
            traffic.commands,
            traffic.round_trips,
            traffic.sent,
            traffic.received
        );
        per_hit.push(traffic);
    }
    let (whole, kept) = (&per_hit[0], &per_hit[1]);
    assert!(whole.commands.contains(&"GET".to_string()));
    assert!(!whole.commands.contains(&"GETRANGE".to_string()));
    assert!(kept.commands.contains(&"GETRANGE".to_string()));
    // the hit's own commands (a loaded machine renews the rate lease, an `EVAL`, in every
    // call)
    let own = |t: &redis_count::Traffic| t.commands.iter().filter(|c| *c != "EVAL").count();
    assert!(own(kept) <= own(whole), "{kept:?} {whole:?}");
    // the version is asked in the round trip that stores the result (one pipeline): 2
    // round trips instead of 3
    assert_eq!(kept.trip_of("GETRANGE"), kept.trip_of("SET"), "{kept:?}");
    assert_ne!(whole.trip_of("GET"), whole.trip_of("SET"), "{whole:?}");
    assert!(
        kept.trips_without("EVAL") < whole.trips_without("EVAL"),
        "{kept:?} {whole:?}"
    );
    // the entry (300 rows of ~110 bytes) is not moved
    assert!(
        kept.received * 4 < whole.received,
        "with memory {} bytes, without {}",
        kept.received,
        whole.received
    );
}

/// Hits arriving together on a replica that has not read the entry's current version wait
/// for one read of it: the entry crosses the wire once, not once per call.
#[tokio::test]
async fn c1_concurrent_hits_of_a_version_new_to_a_replica_read_it_once() {
    let db = fresh_database().await;
    let one = spawn_with(test_settings(db.clone())).await;
    let counter = redis_count::start().await;
    let mut settings = test_settings(db);
    settings.redis_url = Some(counter.url.clone().into());
    let two = spawn_with(settings).await;
    // rows of 4 KB: reading and parsing the 1.2 MB entry takes long enough for the other
    // calls to arrive meanwhile
    let up = rows_server_with(4000).await;
    let rig = rig(&one, &up).await;
    let token = rig.token(&one, "u1", json!({})).await;
    // the entry is written by replica one, and read whole once by a hit of replica one
    call(&one, &rig, &token, json!({"_all_pages": true})).await;
    let before = counter.snapshot();
    let hits = (0..8).map(|i| {
        let (rig, token, two) = (&rig, &token, &two);
        async move {
            let thread = format!("t{i}");
            let r = rig
                .call(two, token, &thread, "list_rows", walk_args())
                .await;
            r.ok(200)["result"].clone()
        }
    });
    let results = futures_util::future::join_all(hits).await;
    let traffic = counter.since(&before);
    assert!(results
        .iter()
        .all(|r| r["_cache"]["hit"] == true && gens(r) == [1]));
    // the 1.2 MB entry crosses the wire once (every other reply is small)
    assert!(
        traffic.received < 2_000_000,
        "{} bytes received: {:?}",
        traffic.received,
        traffic.commands
    );
}
