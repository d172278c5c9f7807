//! The agent and its compiled tools load once per call, so the SQL statements of a
//! pass-through tool call do not grow with the number of tools bound to the agent; and a
//! replica that remembers the agent and thread (`call::agent_memory`) reads neither: a
//! warm call's only statement is its record. Counted (not timed) on the wire by
//! `sql_count`; memory is on for long enough (`agent_memory_seconds`) that a warm call
//! finds it, or off to count the statement path.

use serde_json::json;

use loopgate::config::settings::Settings;

use crate::support::helpers::{fresh_database, spawn_with, test_settings};
use crate::support::rig::{tool_defs, Rig};
use crate::support::sql_count;

/// Test settings with the agent kept per replica for `seconds` (0: off).
pub fn with_memory(url: String, seconds: u64) -> Settings {
    let mut s = test_settings(url);
    s.agent_memory_seconds = seconds;
    s
}

/// Statements (their SQL) of one warm pass-through call (`get_contact`) on an agent with
/// `tools` bound tools, the first call of its thread excluded (compiling, the thread's
/// creation), with the agent kept per replica for `memory` seconds (0: off).
async fn statements_per_call(tools: usize, memory: u64) -> Vec<String> {
    let counter = sql_count::start(&fresh_database().await).await;
    let app = spawn_with(with_memory(counter.url.clone(), memory)).await;
    let up = crate::support::upstream_server::start().await;
    let mut defs = tool_defs();
    defs.retain(|d| d.0 == "get_contact");
    for i in 1..tools {
        let name: &'static str = Box::leak(format!("filler_{i}").into_boxed_str());
        defs.push((
            name,
            "GET",
            "/contacts/{id}",
            json!({"type": "object", "properties": {"id": {"type": "integer"}}}),
        ));
    }
    let rig = Rig::with_tools(&app, &up.base, defs, false).await;
    let token = rig.token(&app, "u1", json!({})).await;
    let call = || rig.call(&app, &token, "th", "get_contact", json!({"id": 7}));
    call().await.ok(200);
    app.vectors_settled().await;
    let before = counter.statements();
    let r = call().await;
    assert_eq!(r.ok(200)["result"]["name"], "Contact 7");
    // the record is written behind the answer (K1): counted once it is in
    app.records_flushed().await;
    counter.sql_since(before)
}

#[tokio::test]
async fn statements_per_pass_through_call_do_not_grow_with_bound_tools() {
    // the statement path: memory off
    let sql = statements_per_call(2, 0).await;
    let (two, many) = (sql.len(), statements_per_call(33, 0).await.len());
    eprintln!("SQL statements per pass-through call: 2 tools {two}, 33 tools {many}: {sql:#?}");
    assert!(two > 0, "the counter sees the app's statements");
    // the thread is read with the agent and not written while it is fresh
    assert!(
        !sql.iter()
            .any(|s| s.contains("INSERT INTO threads") || s.contains("UPDATE threads")),
        "{sql:#?}"
    );
    // and the org credential comes with the agent, sealed
    assert!(
        !sql.iter()
            .any(|s| s.starts_with("SELECT credential_ciphertext")),
        "{sql:#?}"
    );
    // a JSON call's id is first seen in its answer: its record is written once, finished
    let records: Vec<&String> = sql.iter().filter(|s| s.contains("tool_calls")).collect();
    assert_eq!(records.len(), 1, "{sql:#?}");
    assert!(records[0].contains("INSERT INTO tool_calls"), "{sql:#?}");
    // the agent (with its thread and the sealed credential), the call's record
    assert!(two <= 2, "{two} statements: {sql:#?}");
    assert_eq!(many, two, "2 tools: {two} statements, 33 tools: {many}");
}

/// With the agent and thread remembered (and the org's config unchanged), a warm call
/// reads neither: its one statement is its record (2 with the agent read), whatever the
/// number of tools.
#[tokio::test]
async fn a_warm_call_reads_no_agent_when_the_replica_remembers_it() {
    for tools in [2, 33] {
        let sql = statements_per_call(tools, 300).await;
        eprintln!("SQL statements per warm call, {tools} tools: {sql:#?}");
        assert!(!sql.iter().any(|s| s.contains("FROM agents a")), "{sql:#?}");
        assert_eq!(sql.len(), 1, "{tools} tools: {sql:#?}");
        assert!(sql[0].contains("INSERT INTO tool_calls"), "{sql:#?}");
    }
}

/// K1 / issue 37: a call written once is answered before its record is written (no SQL on
/// its request path): with the agent remembered, a warm pass-through call sends no
/// statement at all before its answer, and is answered while its record cannot be
/// written (the table locked by another session); the replica reads it back meanwhile
/// from memory, and the record is written, once, when the lock goes.
#[tokio::test]
async fn a_warm_call_is_answered_before_its_record_is_written() {
    let db = fresh_database().await;
    let counter = sql_count::start(&db).await;
    let app = spawn_with(with_memory(counter.url.clone(), 300)).await;
    let up = crate::support::upstream_server::start().await;
    let mut defs = tool_defs();
    defs.retain(|d| d.0 == "get_contact");
    let rig = Rig::with_tools(&app, &up.base, defs, false).await;
    let token = rig.token(&app, "u1", json!({})).await;
    let call = || rig.call(&app, &token, "th", "get_contact", json!({"id": 7}));
    call().await.ok(200);
    app.vectors_settled().await;

    // another session (not counted: straight to Postgres) holds the table
    let direct = sqlx::PgPool::connect(&db).await.unwrap();
    let mut lock = direct.begin().await.unwrap();
    sqlx::query("LOCK TABLE tool_calls IN EXCLUSIVE MODE")
        .execute(&mut *lock)
        .await
        .unwrap();
    let before = counter.statements();
    let r = tokio::time::timeout(std::time::Duration::from_secs(5), call())
        .await
        .expect("answered while its record cannot be written");
    let body = r.ok(200).clone();
    assert_eq!(body["result"]["name"], "Contact 7");
    let sent = counter.sql_since(before);
    // the record's statement may be on its way (and waits for the lock): nothing else
    let others: Vec<&String> = sent
        .iter()
        .filter(|s| !s.contains("INSERT INTO tool_calls"))
        .collect();
    assert!(others.is_empty(), "SQL on the request path: {sent:#?}");
    // this replica reads it meanwhile, without Postgres
    let id = body["id"].as_str().unwrap();
    let read = tokio::time::timeout(
        std::time::Duration::from_secs(2),
        app.get(&format!("/v1/tool-calls/{id}"), &token),
    )
    .await
    .expect("read from memory");
    assert_eq!(read.ok(200)["result"], body["result"]);
    let in_postgres = |pool: sqlx::PgPool| async move {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM tool_calls WHERE id = $1")
            .bind(id)
            .fetch_one(&pool)
            .await
            .unwrap()
    };
    lock.rollback().await.unwrap();
    app.records_flushed().await;
    assert_eq!(in_postgres(direct.clone()).await, 1);
    let sql = counter.sql_since(before);
    let records = sql.iter().filter(|s| s.contains("tool_calls")).count();
    assert_eq!(records, 1, "the record, once: {sql:#?}");
    // the memory read sent none
    assert_eq!(sql.len(), 1, "{sql:#?}");
}

/// A compiled tool is rebuilt when its tool changes: a PATCH of the input schema is seen by
/// the very next call (the version is read with the agent on every call).
#[tokio::test]
async fn a_changed_tool_is_recompiled_on_the_next_call() {
    let (app, up, rig, token) = Rig::start(false).await;
    let call = |args| rig.call(&app, &token, "th", "get_contact", args);
    call(json!({"id": 7})).await.ok(200);
    call(json!({"id": 7, "expand": "all"}))
        .await
        .problem(400, "invalid_arguments");
    let patched = app
        .patch(
            &format!("/v1/tools/{}", rig.tools["get_contact"]),
            &rig.t.key,
            json!({"input_schema": {"type": "object", "required": ["id"], "properties": {
                "id": {"type": "integer"}, "expand": {"type": "string"}}}}),
        )
        .await;
    patched.ok(200);
    let r = call(json!({"id": 7, "expand": "all"})).await;
    assert_eq!(r.ok(200)["result"]["name"], "Contact 7", "{}", r.text);
    assert!(up.total() >= 2);
}

/// A compiled tool is rebuilt when its provider changes: its request template carries the
/// provider's base URL, so a PATCHed `base_url` is where the next call goes.
#[tokio::test]
async fn a_changed_provider_recompiles_its_tools() {
    let (app, up, rig, token) = Rig::start(false).await;
    let other = crate::support::upstream_server::start().await;
    let call = || rig.call(&app, &token, "th", "get_contact", json!({"id": 7}));
    call().await.ok(200);
    assert_eq!(
        (up.count("/contacts/7"), other.count("/contacts/7")),
        (1, 0)
    );
    app.patch(
        &format!("/v1/providers/{}", rig.provider),
        &rig.t.key,
        json!({"base_url": other.base, "credential": "org-secret"}),
    )
    .await
    .ok(200);
    call().await.ok(200);
    assert_eq!(
        (up.count("/contacts/7"), other.count("/contacts/7")),
        (1, 1)
    );
}

/// Posts one JSON-RPC request to the agent's MCP endpoint (M2) as a plain JSON client (no
/// SSE); returns the response and the session id it issued, if any.
async fn mcp_post(
    app: &crate::support::helpers::TestApp,
    agent: &str,
    token: &str,
    session: Option<&str>,
    message: serde_json::Value,
) -> (serde_json::Value, Option<String>) {
    let mut req = app
        .client
        .post(format!("{}/v1/agents/{agent}/mcp", app.address))
        .bearer_auth(token)
        .header("accept", "application/json")
        .json(&message);
    if let Some(s) = session {
        req = req.header("mcp-session-id", s);
    }
    let res = req.send().await.expect("mcp request");
    assert_eq!(res.status().as_u16(), 200);
    let session = res
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    (res.json().await.expect("JSON-RPC response"), session)
}

/// M2: an MCP `tools/call` loads the agent once per request — the step before the call,
/// the call and the step after it share one load (with the thread, one statement) — so it
/// costs no more statements than the same call over REST; with the agent remembered by
/// the replica, none.
#[tokio::test]
async fn an_mcp_tools_call_loads_the_agent_once() {
    mcp_call_loads(0, 1).await;
    mcp_call_loads(300, 0).await;
}

/// The statements of a warm MCP `tools/call` with the agent kept `memory` seconds: `loads`
/// agent statements, and the call's record.
async fn mcp_call_loads(memory: u64, loads: usize) {
    let counter = sql_count::start(&fresh_database().await).await;
    let app = spawn_with(with_memory(counter.url.clone(), memory)).await;
    let up = crate::support::upstream_server::start().await;
    let rig = Rig::new(&app, &up, false).await;
    let token = rig.token(&app, "u1", json!({})).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "sql-count", "version": "1"}}});
    let (_, session) = mcp_post(&app, &rig.agent, &token, None, init).await;
    let session = session.expect("initialize issues a session");
    let call = |id: u32| {
        let message = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "get_contact", "arguments": {"id": 7}}});
        mcp_post(&app, &rig.agent, &token, Some(&session), message)
    };
    call(2).await;
    app.vectors_settled().await;
    let before = counter.statements();
    let (answer, _) = call(3).await;
    app.records_flushed().await;
    let sql = counter.sql_since(before);
    eprintln!("SQL statements per MCP tools/call: {}: {sql:#?}", sql.len());
    assert_eq!(
        answer["result"]["structuredContent"]["name"], "Contact 7",
        "{answer}"
    );
    let read = sql.iter().filter(|s| s.contains("FROM agents a")).count();
    assert_eq!(read, loads, "the agent is loaded {loads} times: {sql:#?}");
    // the agent (with its thread and the sealed credential) unless remembered, the record
    assert!(sql.len() <= 2 + loads, "{} statements: {sql:#?}", sql.len());
    assert_eq!(up.count("/contacts/7"), 2);
}
