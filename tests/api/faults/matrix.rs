//! The fault matrix (P3, G7): every way an upstream misbehaves, once on a single call and
//! once in the middle of a walk. For each: a named stop reason, the rows already fetched
//! kept and stored (read back with queryToolResult), an error the model can act on, and a
//! service that is still serving afterwards.

use serde_json::{json, Value};

use crate::support::fault_server::{self, FaultServer, PER_PAGE};
use crate::support::helpers::{fresh_database, spawn_with, test_settings, TestApp};
use crate::support::rig::Rig;

/// The page a walk fails on: pages 1 and 2 come (20 rows), page 3 faults.
const FAIL_AT: usize = 3;
const KEPT: usize = (FAIL_AT - 1) * PER_PAGE;

struct Faulty {
    app: TestApp,
    up: FaultServer,
    rig: Rig,
    token: String,
}

/// An app with small upstream bounds (1.5 s per request, 1 MiB per body) and a looping
/// tool `list_rows` over the fault server.
async fn faulty() -> Faulty {
    let mut s = test_settings(fresh_database().await);
    s.upstream_timeout_ms = 1_500;
    s.upstream_max_body_bytes = 1024 * 1024;
    let app = spawn_with(s).await;
    let up = fault_server::start().await;
    let schema = json!({"type": "object", "required": ["fault", "fail_at"], "properties": {
        "fault": {"type": "string"}, "fail_at": {"type": "integer"},
        "page": {"type": "integer", "minimum": 1}, "per_page": {"type": "integer", "maximum": PER_PAGE}}});
    let defs = vec![("list_rows", "GET", "/f/{fault}/{fail_at}", schema)];
    let rig = Rig::with_tools(&app, &up.base, defs, true).await;
    let token = rig.token(&app, "u1", json!({})).await;
    Faulty {
        app,
        up,
        rig,
        token,
    }
}

impl Faulty {
    async fn call(&self, thread: &str, name: &str, args: Value) -> crate::support::helpers::Res {
        self.rig
            .call(&self.app, &self.token, thread, name, args)
            .await
    }
}

/// What one fault must look like.
struct Expect {
    /// Words the single call's problem detail must contain, for the model to act on;
    /// `None`: the single call answers 200 with what the API sent (no item array: E1).
    detail: Option<&'static [&'static str]>,
    /// Requests of the failing page: 1 + P3 retries for a transient fault.
    attempts: u32,
    /// Acceptable `_stoppedBy` of the walk (a timeout may use up the clock first).
    stops: &'static [&'static str],
}

const TRANSIENT: u32 = 4;

async fn matrix(fault: &str, expect: Expect) {
    let f = faulty().await;

    // a single call whose only page faults
    let single = f
        .call("single", "list_rows", json!({"fault": fault, "fail_at": 1}))
        .await;
    match expect.detail {
        Some(words) => {
            single.problem(502, "upstream_failed");
            let detail = single.body["detail"].as_str().unwrap();
            for w in words {
                assert!(detail.contains(w), "{fault}: detail lacks {w:?}: {detail}");
            }
            assert!(!detail.contains("org-secret"), "{detail}");
        }
        None => {
            let r = single.ok(200);
            assert!(!r["result"].is_null(), "{fault}: {r}");
        }
    }
    assert_eq!(
        f.up.hits(fault, 1, 1),
        expect.attempts,
        "{fault}: single call attempts"
    );

    // a walk whose third page faults: the first two pages are kept and stored
    let walk = f
        .call(
            "walk",
            "list_rows",
            json!({"fault": fault, "fail_at": FAIL_AT, "_all_pages": true}),
        )
        .await;
    let r = walk.ok(200)["result"].clone();
    let stop = r["_stoppedBy"].as_str().unwrap_or_default();
    assert!(
        expect.stops.contains(&stop),
        "{fault}: stopped by {stop:?}: {r}"
    );
    assert_eq!(r["_itemCount"], KEPT, "{fault}: {r}");
    assert_eq!(r["_pagingComplete"], false, "{fault}: {r}");
    assert_eq!(r["_likelyMoreRows"], true, "{fault}: {r}");
    let note = r["_note"].as_str().unwrap_or_default();
    assert!(!note.is_empty(), "{fault}: a note says what happened: {r}");
    let ids: Vec<u64> = r["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_u64().unwrap())
        .collect();
    assert_eq!(
        ids,
        (0..KEPT as u64).collect::<Vec<_>>(),
        "{fault}: no row of the failed page"
    );
    assert_eq!(
        f.up.hits(fault, FAIL_AT, FAIL_AT),
        expect.attempts,
        "{fault}: attempts at the failing page"
    );
    assert_eq!(
        f.up.hits(fault, FAIL_AT, FAIL_AT + 1),
        0,
        "{fault}: the walk went past a failed page"
    );

    // the kept rows are stored and readable without calling upstream again
    let rid = r["_resultId"].as_str().expect("a partial walk is stored");
    let before = f.up.hits.lock().unwrap().values().sum::<u32>();
    let q = f
        .call(
            "walk",
            "queryToolResult",
            json!({"resultId": rid, "filter": [{"field": "id", "op": "gte", "value": 15}]}),
        )
        .await;
    let q = q.ok(200)["result"].clone();
    assert_eq!(q["total"], 5, "{fault}: {q}");
    assert_eq!(q["items"][0]["id"], 15, "{fault}: {q}");
    assert_eq!(f.up.hits.lock().unwrap().values().sum::<u32>(), before);

    // nothing broke: the next good call works
    let ok = f
        .call("after", "list_rows", json!({"fault": fault, "fail_at": 99}))
        .await;
    assert_eq!(
        ok.ok(200)["result"]["data"].as_array().unwrap().len(),
        PER_PAGE
    );
}

const UPSTREAM_ERROR: &[&str] = &["upstream_error"];
const TIMED_OUT: &[&str] = &["upstream_error", "time"];

/// One test per fault: `name, fault, detail words (or None), attempts, stops`.
macro_rules! fault {
    ($(#[$m:meta])* $name:ident, $fault:literal, $detail:expr, $attempts:expr, $stops:expr) => {
        $(#[$m])*
        #[tokio::test]
        async fn $name() {
            let detail: Option<&'static [&'static str]> = $detail;
            matrix($fault, Expect { detail, attempts: $attempts, stops: $stops }).await;
        }
    };
}

fault!(
    fault_429_without_retry_after_is_retried_then_named,
    "429",
    Some(&["429", "slow down"]),
    TRANSIENT,
    UPSTREAM_ERROR
);
fault!(
    fault_429_with_retry_after_is_honoured_then_named,
    "429-retry-after",
    Some(&["429", "slow down"]),
    TRANSIENT,
    UPSTREAM_ERROR
);
fault!(
    fault_429_with_a_retry_after_past_the_time_limit_gives_up_at_once_and_says_when,
    "429-retry-after-long",
    Some(&["429", "quota used up", "3600"]),
    1,
    UPSTREAM_ERROR
);
fault!(
    fault_500_is_retried_then_named,
    "500",
    Some(&["500", "database on fire"]),
    TRANSIENT,
    UPSTREAM_ERROR
);
fault!(
    fault_502_is_retried_then_named,
    "502",
    Some(&["502", "Bad Gateway"]),
    TRANSIENT,
    UPSTREAM_ERROR
);
fault!(
    fault_503_is_retried_then_named,
    "503",
    Some(&["503", "maintenance"]),
    TRANSIENT,
    UPSTREAM_ERROR
);
fault!(
    fault_504_is_retried_then_named,
    "504",
    Some(&["504", "upstream timed out"]),
    TRANSIENT,
    UPSTREAM_ERROR
);
fault!(
    fault_an_upstream_that_never_answers_times_out,
    "hang",
    Some(&["in time"]),
    TRANSIENT,
    TIMED_OUT
);
fault!(
    fault_a_connection_reset_mid_body_is_retried_then_named,
    "reset",
    Some(&["connection"]),
    TRANSIENT,
    UPSTREAM_ERROR
);
fault!(
    fault_malformed_json_mid_walk_is_a_failed_page_not_a_row,
    "bad-json",
    None,
    1,
    UPSTREAM_ERROR
);
fault!(
    fault_an_html_error_page_with_200_mid_walk_is_a_failed_page_not_a_row,
    "html-200",
    None,
    1,
    UPSTREAM_ERROR
);
fault!(
    fault_an_endless_body_is_cut_at_the_byte_cap,
    "endless",
    Some(&["larger than 1048576 bytes"]),
    1,
    UPSTREAM_ERROR
);
fault!(
    fault_a_slow_drip_times_out,
    "drip",
    Some(&["in time"]),
    TRANSIENT,
    TIMED_OUT
);
fault!(
    fault_a_body_over_the_byte_cap_is_refused,
    "too-big",
    Some(&["larger than 1048576 bytes"]),
    1,
    UPSTREAM_ERROR
);
fault!(
    fault_a_redirect_loop_is_cut_after_the_redirect_limit,
    "redirect-loop",
    Some(&["redirects"]),
    6,
    UPSTREAM_ERROR
);
