//! The framework as the oracle (G7, P1–P12): import the framework's own generated
//! document unmodified, walk each row set with `_all_pages` (resuming with `_continue`
//! while the walk offers one), read the union back from the stored result, and compare
//! it row by row with what the framework's database holds.
//!
//! Two kinds of failure, both reported per set with what loopgate did:
//! - **wrong**: the verdict says complete (`_pagingComplete: true`) but the rows differ
//!   from the database's (a row missing, doubled, reordered or altered). Never allowed.
//! - **unfinished**: the walk ends partial. Honest, but each set here is within what a
//!   walk and its resumptions can fetch, so a partial end means loopgate could not
//!   follow this framework's pagination.

use serde_json::{json, Value};

use crate::frameworks::server::{Framework, Server, PAGE, SETS};
use crate::support::helpers::{spawn_app, Res, TestApp};

/// How many calls one set's walk may take: the first and its `_continue`s. The largest
/// set needs two (P3: 20 pages a call); more than this is a walk that does not advance.
const MAX_CALLS: usize = 5;

/// A tenant with the framework's document imported into a provider on its server, one
/// agent holding every imported tool with looping on, and a runtime token.
pub struct Imported {
    pub app: TestApp,
    pub agent: String,
    pub token: String,
    pub tools: Vec<Value>,
}

/// Imports `server`'s own document through `POST /v1/providers/{id}/openapi`.
pub async fn import(server: &Server) -> Imported {
    let app = spawn_app().await;
    let t = app.tenant("frameworks").await;
    let provider = app
        .post(
            "/v1/providers",
            &t.key,
            json!({"name": server.dir, "base_url": server.base, "auth": {"type": "none"}}),
        )
        .await
        .ok(201)["id"]
        .as_str()
        .unwrap()
        .to_string();
    let doc = server.document().await;
    let imported = app
        .post_raw(
            &format!("/v1/providers/{provider}/openapi"),
            &t.key,
            "application/json",
            doc,
        )
        .await;
    let tools = imported.ok(201)["data"].as_array().unwrap().clone();
    let bindings: Vec<Value> = tools
        .iter()
        .map(|tool| json!({"tool_id": tool["id"], "provider_id": provider, "loop_responses": true}))
        .collect();
    let (agent, token) = app.agent_and_token(&t, bindings, "u1").await;
    Imported {
        app,
        agent,
        token,
        tools,
    }
}

impl Imported {
    async fn call(&self, thread: &str, tool: &str, args: Value) -> Res {
        self.app
            .tool_call(&self.agent, &self.token, thread, tool, args)
            .await
    }

    /// Every row of a stored result, read with `queryToolResult` page by page.
    async fn stored_rows(&self, thread: &str, result_id: &str) -> Result<Vec<Value>, String> {
        let mut rows = Vec::new();
        for _ in 0..100 {
            let r = self
                .call(
                    thread,
                    "queryToolResult",
                    json!({"resultId": result_id, "offset": rows.len(), "limit": 1000}),
                )
                .await;
            if r.status != 200 {
                return Err(format!("queryToolResult: {} {}", r.status, r.text));
            }
            let page = &r.body["result"];
            let items = page["items"].as_array().cloned().unwrap_or_default();
            let total = page["total"].as_u64().unwrap_or(0) as usize;
            rows.extend(items.iter().cloned());
            if rows.len() >= total {
                return Ok(rows);
            }
            if items.is_empty() {
                return Err(format!("queryToolResult stalled at {}: {page}", rows.len()));
            }
        }
        Err("queryToolResult: more than 100 pages".into())
    }
}

/// What one set's walk did, for the report.
struct Walk {
    calls: Vec<String>,
    complete: bool,
    rows: Vec<Value>,
    first_complete: bool,
}

fn verdict_line(r: &Value) -> String {
    format!(
        "_itemCount {} _pagingComplete {} _likelyMoreRows {} _stoppedBy {} _total {} _continue {} note {:?}",
        r["_itemCount"],
        r["_pagingComplete"],
        r["_likelyMoreRows"],
        r["_stoppedBy"],
        r["_total"],
        if r.get("_continue").is_some_and(|c| !c.is_null()) { "yes" } else { "no" },
        r["_note"].as_str().unwrap_or_default()
    )
}

/// Walks `set` through `tool`: the first call, then `_continue` while one is offered.
async fn walk(im: &Imported, tool: &str, set: &str) -> Result<Walk, String> {
    let thread = format!("walk-{set}");
    let mut calls = Vec::new();
    let mut args = json!({"dataset": set, "_all_pages": true});
    let mut first_complete = None;
    let mut result_id: Option<String> = None;
    for _ in 0..MAX_CALLS {
        let r = im.call(&thread, tool, args.clone()).await;
        if r.status != 200 {
            calls.push(format!("{} {}", r.status, r.text));
            return Err(format!("a call failed: {}", calls.join(" | ")));
        }
        let res = r.body["result"].clone();
        calls.push(verdict_line(&res));
        let complete = res["_pagingComplete"] == json!(true);
        first_complete.get_or_insert(complete);
        if let Some(id) = res["_resultId"].as_str() {
            match &result_id {
                Some(before) if before != id => {
                    return Err(format!(
                        "a resumed walk changed its _resultId ({before} → {id}): {}",
                        calls.join(" | ")
                    ))
                }
                _ => result_id = Some(id.to_string()),
            }
        }
        match res["_continue"].as_str() {
            Some(c) if !complete => {
                args = json!({"dataset": set, "_all_pages": true, "_continue": c});
            }
            _ => {
                let rows = match &result_id {
                    Some(id) => im.stored_rows(&thread, id).await?,
                    None if res["_truncated"] != json!(true) => {
                        res["items"].as_array().cloned().unwrap_or_default()
                    }
                    None => return Err(format!("a cut result with no _resultId: {res:.400}")),
                };
                return Ok(Walk {
                    calls,
                    complete,
                    rows,
                    first_complete: first_complete.unwrap_or(complete),
                });
            }
        }
    }
    Err(format!(
        "still offering `_continue` after {MAX_CALLS} calls: {}",
        calls.join(" | ")
    ))
}

/// The requests a walk sent, for a report: `?query` each, at most 30 shown.
fn requests_line(requests: &[String]) -> String {
    let shown: Vec<String> = requests.iter().take(30).map(|q| format!("?{q}")).collect();
    let more = requests.len().saturating_sub(30);
    format!(
        "{} request(s): {}{}",
        requests.len(),
        shown.join(" "),
        if more > 0 {
            format!(" … and {more} more")
        } else {
            String::new()
        }
    )
}

/// Where two row lists first differ, in a line.
fn first_difference(got: &[Value], want: &[Value]) -> String {
    let at = got.iter().zip(want).position(|(g, w)| g != w);
    match at {
        Some(i) => format!("row {i}: got {} want {}", got[i], want[i]),
        None if got.len() > want.len() => format!("extra row {}: {}", want.len(), got[want.len()]),
        None => format!("missing from row {}: {}", got.len(), want[got.len()]),
    }
}

/// P7: one call without `_all_pages` on the three-page set may not look like all of it:
/// its result says more rows are likely. `None` when it does.
async fn single_page_says_more(im: &Imported, tool: &str) -> Option<String> {
    let r = im
        .call(
            "single",
            tool,
            json!({"dataset": "pages", "_fields": ["id"]}),
        )
        .await;
    if r.status != 200 {
        return Some(format!("single page of pages: {} {}", r.status, r.text));
    }
    let res = &r.body["result"];
    let shown = res["_itemCount"].as_u64().unwrap_or(0);
    (res["_likelyMoreRows"] != json!(true) && shown < 3 * PAGE as u64).then(|| {
        format!(
            "single page of pages (300 rows): SILENT — one call without `_all_pages` showed {shown} rows and did not say more are likely (P7): {}",
            verdict_line(res)
        )
    })
}

/// Walks every set of [`SETS`] through the imported tool `tool` of `fw` and compares each
/// with the database; fails listing every set that went wrong or did not finish.
pub async fn check(fw: &'static Framework, tool: &str) {
    let Some(server) = fw.server().await else {
        return;
    };
    let im = import(server).await;
    let names: Vec<&str> = im.tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(
        names.contains(&tool),
        "{}: the import made no tool {tool}: {names:?}",
        fw.dir
    );
    let template = im
        .tools
        .iter()
        .find(|t| t["name"] == tool)
        .and_then(|t| t["path"].as_str())
        .unwrap()
        .to_string();
    let mut failures = Vec::new();
    for (set, n) in SETS {
        let want = server.truth(set).await;
        assert_eq!(
            want.len(),
            n,
            "the {set} set holds {n} rows in the database"
        );
        let walked = walk(&im, tool, set).await;
        let requests = server.requests(&template.replace("{dataset}", set)).await;
        let sent = requests_line(&requests);
        let w = match walked {
            Ok(w) => w,
            Err(e) => {
                failures.push(format!("{set} ({n} rows): {e}; {sent}"));
                continue;
            }
        };
        let exact = w.rows == want;
        eprintln!(
            "{} {tool} {set}: {} of {n} rows, exact {exact}, complete {}, {} call(s), {sent}",
            fw.dir,
            w.rows.len(),
            w.complete,
            w.calls.len()
        );
        let calls = format!("{}; {sent}", w.calls.join(" | "));
        let mut seen = std::collections::HashSet::new();
        if let Some(again) = requests.iter().find(|q| !seen.insert(q.as_str())) {
            failures.push(format!(
                "{set} ({n} rows): REPEATED — the same request was sent twice (?{again}); calls: {calls}"
            ));
        }
        if w.complete && !exact {
            failures.push(format!(
                "{set} ({n} rows): WRONG — complete verdict but {} rows, not the database's {n} ({}); calls: {calls}",
                w.rows.len(),
                first_difference(&w.rows, &want)
            ));
        } else if !w.complete {
            failures.push(format!(
                "{set} ({n} rows): UNFINISHED — partial after {} call(s) with {} rows{}; calls: {calls}",
                w.calls.len(),
                w.rows.len(),
                if exact { ", though every row came" } else { "" }
            ));
        } else if n > 20 * PAGE && w.first_complete {
            failures.push(format!(
                "{set} ({n} rows): one call walked more than 20 pages (P3): {calls}"
            ));
        }
    }
    if let Some(f) = single_page_says_more(&im, tool).await {
        failures.push(f);
    }
    assert!(
        failures.is_empty(),
        "{} {tool}: {} of {} sets failed:\n{}\n(the app's log:\n{})",
        fw.dir,
        failures.len(),
        SETS.len(),
        failures.join("\n"),
        server.log_text()
    );
}
