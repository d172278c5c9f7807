//! json-server 0.17 (npm, used as a module by `tests/frameworks/json_server/app.mjs`):
//! `_page` (from 1) and `_limit` with an `X-Total-Count` header and a `Link` header whose
//! first/prev/next/last carry the API's own `_page`/`_limit` names, and `_start`/`_limit`
//! slices with `X-Total-Count`. Its document is hand-written and silent (plain integers,
//! no minimum, default or description; no headers declared), so the walk learns the base
//! from the answers (P11) and the totals and links from the headers (P12).

use serde_json::{json, Value};

use crate::frameworks::oracle::{check, import};
use crate::frameworks::server::{Framework, Server, PAGE, SETS};

static JSON_SERVER: Framework = Framework::node("json_server", "/openapi.json");

/// The `_page` numbers the requests on `path` asked for (a request without one: none).
async fn pages_asked(server: &Server, path: &str) -> Vec<u64> {
    server
        .requests(path)
        .await
        .iter()
        .flat_map(|q| {
            q.split('&')
                .filter_map(|kv| kv.strip_prefix("_page="))
                .map(|n| n.parse::<u64>().unwrap())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// P3, P12: the first call on the set a call cannot walk stops at its page bound, and
/// says how many rows there are from `X-Total-Count` alone.
async fn capped_walk_reports_header_total(server: &Server, tool: &str) {
    let im = import(server).await;
    let (set, n) = SETS[SETS.len() - 1];
    let r = im
        .app
        .tool_call(
            &im.agent,
            &im.token,
            "capped",
            tool,
            json!({"dataset": set, "_all_pages": true, "_fields": ["id"]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let res = &r.body["result"];
    let verdict = format!(
        "_stoppedBy {} _pagingComplete {} _likelyMoreRows {} _total {} _itemCount {} note {}",
        res["_stoppedBy"],
        res["_pagingComplete"],
        res["_likelyMoreRows"],
        res["_total"],
        res["_itemCount"],
        res["_note"]
    );
    assert_eq!(res["_stoppedBy"], json!("pages"), "{tool} {set}: {verdict}");
    assert_eq!(
        res["_pagingComplete"],
        json!(false),
        "{tool} {set}: {verdict}"
    );
    assert_eq!(
        res["_likelyMoreRows"],
        json!(true),
        "{tool} {set}: {verdict}"
    );
    assert_eq!(
        res["_total"],
        Value::from(n),
        "{tool} {set}: the total is X-Total-Count's: {verdict}"
    );
    assert_eq!(
        res["_itemCount"],
        Value::from(20 * PAGE),
        "{tool} {set}: {verdict}"
    );
}

#[tokio::test]
async fn json_server_page_and_link_walk_exactly_its_database() {
    check(&JSON_SERVER, "listSetPages").await;
    let Some(server) = JSON_SERVER.server().await else {
        return;
    };
    // P12: the walks ended where `Link` had no rel="next": a set of exactly one or three
    // pages asked for no page past its last (the single-page call check() makes on the
    // three-page set sends no `_page` here, it is a plain call)
    for (set, last) in [("page", 1), ("pages", 3)] {
        let asked = pages_asked(server, &format!("/sets/{set}")).await;
        assert!(
            asked.iter().all(|p| *p <= last),
            "{set}: a page past the last ({last}) was asked for: {asked:?} — requests {:?}",
            server.requests(&format!("/sets/{set}")).await
        );
    }
    capped_walk_reports_header_total(server, "listSetPages").await;
}

#[tokio::test]
async fn json_server_start_limit_slices_walk_exactly_its_database() {
    check(&JSON_SERVER, "listSetSlices").await;
    let Some(server) = JSON_SERVER.server().await else {
        return;
    };
    capped_walk_reports_header_total(server, "listSetSlices").await;
}
