//! Real descriptions import with the defaults — a generated document
//! the size of GitHub's own (13 MB, 1,223 operations) — under a size limit of their own
//! (`openapi_import_max_bytes`, apart from `request_max_bytes`); every 413 is problem+json
//! naming the limit and its setting. P12: a pagination hint naming no parameter is a 422
//! naming the real ones; an imported operation's response schema becomes paging evidence.

use serde_json::{json, Value};

use crate::support::helpers::{fresh_database, spawn_app, spawn_with, test_settings};

/// A GitHub-sized description: `ops` list operations, each with a long description and a
/// response schema, as GitHub's own document spells them out operation by operation.
fn big_document(ops: usize) -> Vec<u8> {
    let words = "Lists the things of the repository, with their labels, assignees and \
                 milestones; pull requests are things too. "
        .repeat(84);
    let mut paths = serde_json::Map::new();
    for i in 0..ops {
        let props: serde_json::Map<String, Value> = (0..24)
            .map(|f| {
                (
                    format!("field_{f}"),
                    json!({"type": "string", "description": format!("Field {f} of thing {i}, as the API returns it.")}),
                )
            })
            .collect();
        paths.insert(
            format!("/repos/{{owner}}/{{repo}}/things_{i}"),
            json!({"get": {
                "operationId": format!("things/list-{i}"),
                "summary": format!("List things {i}"),
                "description": words,
                "parameters": [
                    {"name": "owner", "in": "path", "required": true, "schema": {"type": "string"}},
                    {"name": "repo", "in": "path", "required": true, "schema": {"type": "string"}},
                    {"name": "per_page", "in": "query", "schema": {"type": "integer", "default": 30, "maximum": 100}},
                    {"name": "page", "in": "query", "schema": {"type": "integer", "default": 1}}
                ],
                "responses": {"200": {
                    "description": "Response",
                    "headers": {"Link": {"schema": {"type": "string"}}},
                    "content": {"application/json": {"schema": {
                        "type": "array", "items": {"type": "object", "properties": props}}}}
                }}
            }}),
        );
    }
    serde_json::to_vec(&json!({
        "openapi": "3.0.3",
        "info": {"title": "GitHub-sized", "version": "1"},
        "paths": paths
    }))
    .expect("document")
}

/// The GitHub-sized document imports with the default settings, every operation a tool
/// (bounded in time: one import, a few seconds).
#[tokio::test]
async fn a_github_sized_description_imports_with_the_defaults() {
    let app = spawn_app().await;
    let t = app.tenant("big").await;
    let doc = big_document(1_223);
    assert!(doc.len() >= 13_000_000, "{} bytes", doc.len());
    let path = format!("/v1/providers/{}/openapi", t.provider);
    let r = app.post_raw(&path, &t.key, "application/json", doc).await;
    let tools = r.ok(201)["data"].as_array().cloned().unwrap_or_default();
    assert_eq!(tools.len(), 1_223);
    let first = &tools[0];
    assert_eq!(first["name"], "things_list-0");
    // the declared `Link` header is paging evidence on the tool (P12)
    assert_eq!(
        first["input_schema"]["x-loopgate-response"],
        json!({"nextIsLink": true})
    );
}

/// Over `openapi_import_max_bytes` an import is 413 problem+json naming the limit and the
/// setting; a JSON body over `request_max_bytes` likewise names its own.
#[tokio::test]
async fn every_413_is_a_problem_naming_the_limit_and_its_setting() {
    let mut settings = test_settings(fresh_database().await);
    settings.openapi_import_max_bytes = 64 * 1024;
    settings.request_max_bytes = 64 * 1024;
    let app = spawn_with(settings).await;
    let t = app.tenant("caps").await;
    let path = format!("/v1/providers/{}/openapi", t.provider);
    let r = app
        .post_raw(&path, &t.key, "application/yaml", vec![b'#'; 70 * 1024])
        .await;
    r.problem(413, "payload_too_large");
    let detail = r.body["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("65536 bytes"), "{detail}");
    assert!(detail.contains("openapi_import_max_bytes"), "{detail}");
    assert!(
        detail.contains("LOOPGATE_OPENAPI_IMPORT_MAX_BYTES"),
        "{detail}"
    );
    let name = json!({"name": "a".repeat(70 * 1024), "base_url": "https://api.example.com"});
    let r = app.post("/v1/providers", &t.key, name).await;
    r.problem(413, "payload_too_large");
    assert!(r.text.contains("request_max_bytes"), "{}", r.text);
    // under the caps the bodies are read
    let r = app
        .post_raw(&path, &t.key, "application/yaml", b"# nothing\n".to_vec())
        .await;
    r.problem(422, "validation_failed");
}

/// P12: a hint naming no parameter is refused, naming the parameters there are (in the
/// tool's names and the API's); one in the API's own names is kept and walks.
#[tokio::test]
async fn a_pagination_hint_must_name_real_parameters() {
    let app = spawn_app().await;
    let t = app.tenant("hint").await;
    let schema = |hint: Value| {
        json!({"type": "object", "properties": {
            "page": {"type": "integer", "x-loopgate-in": "query", "x-loopgate-name": "_page"},
            "limit": {"type": "integer", "x-loopgate-in": "query", "x-loopgate-name": "_limit"}
        }, "x-loopgate-pagination": hint})
    };
    let tool = |hint: Value| {
        json!({"provider_id": t.provider, "name": "posts", "method": "GET", "path": "/posts",
            "input_schema": schema(hint)})
    };
    let r = app
        .post(
            "/v1/tools",
            &t.key,
            tool(json!({"size": "per_page", "page": "_page"})),
        )
        .await;
    r.problem(422, "validation_failed");
    let detail = r.body["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("'per_page'"), "{detail}");
    assert!(detail.contains("limit (the API's _limit)"), "{detail}");
    let r = app
        .post(
            "/v1/tools",
            &t.key,
            tool(json!({"size": "_limit", "page": "_page"})),
        )
        .await;
    r.ok(201);
    // at import, an operation's hint is checked the same way
    let doc = json!({"openapi": "3.0.3", "info": {"title": "t", "version": "1"},
        "paths": {"/posts": {"get": {"operationId": "posts",
            "x-loopgate-pagination": {"size": "_limit", "page": "_pag"},
            "parameters": [{"name": "_page", "in": "query", "schema": {"type": "integer"}},
                           {"name": "_limit", "in": "query", "schema": {"type": "integer"}}],
            "responses": {"200": {"description": "ok"}}}}}});
    let path = format!("/v1/providers/{}/openapi", t.provider);
    let r = app
        .post_raw(
            &path,
            &t.key,
            "application/json",
            doc.to_string().into_bytes(),
        )
        .await;
    r.problem(422, "validation_failed");
    assert!(r.text.contains("'_pag'"), "{}", r.text);
}

/// A tool stored with a hint a later rule refuses (written here with plain SQL, as an
/// older release would have kept it) can still be patched; writing its schema again
/// judges the hint.
#[tokio::test]
async fn a_stored_hint_a_newer_rule_refuses_does_not_block_other_changes() {
    use sqlx::Connection as _;
    let app = spawn_app().await;
    let t = app.tenant("old-hint").await;
    let id = app.create_tool(&t.key, &t.provider, "old_posts").await;
    let stale = json!({"type": "object", "properties": {"page": {"type": "integer"}},
        "x-loopgate-pagination": {"size": "per_page", "page": "page"}});
    let mut db = sqlx::PgConnection::connect(&app.database_url)
        .await
        .unwrap();
    sqlx::query("UPDATE tools SET input_schema = $1 WHERE id = $2")
        .bind(&stale)
        .bind(&id)
        .execute(&mut db)
        .await
        .unwrap();
    let r = app
        .patch(
            &format!("/v1/tools/{id}"),
            &t.key,
            json!({"description": "Posts, newest first."}),
        )
        .await;
    assert_eq!(r.ok(200)["description"], "Posts, newest first.");
    let r = app
        .patch(
            &format!("/v1/tools/{id}"),
            &t.key,
            json!({"input_schema": stale}),
        )
        .await;
    r.problem(422, "validation_failed");
    assert!(r.text.contains("'per_page'"), "{}", r.text);
}

/// An import whose sender stalls loses its turn: its own request is a 400 naming the
/// stall, and another org's import, queued behind it, is then served.
#[tokio::test]
async fn a_stalled_import_gives_up_its_turn() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let app = spawn_app().await;
    let slow = app.tenant("slow").await;
    let other = app.tenant("other").await;
    let addr = app.address.trim_start_matches("http://").to_string();
    let mut conn = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "POST /v1/providers/{}/openapi HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/yaml\r\nContent-Length: 100000\r\n\r\nopenapi: 3.0.0\n",
        slow.provider, slow.key
    );
    conn.write_all(head.as_bytes()).await.unwrap();
    // the stalled import holds the turn by now; the other waits for it
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let doc = json!({"openapi": "3.0.0", "info": {"title": "t", "version": "1"},
        "paths": {"/things": {"get": {"operationId": "list_things", "responses": {"200": {"description": "ok"}}}}}});
    let path = format!("/v1/providers/{}/openapi", other.provider);
    let queued = app.post_raw(
        &path,
        &other.key,
        "application/json",
        serde_json::to_vec(&doc).unwrap(),
    );
    let mut answer = Vec::new();
    let (served, _) = tokio::join!(queued, conn.read_to_end(&mut answer));
    served.ok(201);
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("stalled"), "{answer}");
}
