//! Bad input and bad credentials get problem+json with a stable code.

use reqwest::Method;
use serde_json::json;

use crate::support::helpers::{spawn_app, ADMIN};

#[tokio::test]
async fn malformed_bodies_and_unknown_routes() {
    let app = spawn_app().await;
    let r = app
        .post_raw("/v1/orgs", ADMIN, "application/json", b"{not json".to_vec())
        .await;
    r.problem(400, "validation_failed");
    let r = app
        .post_raw("/v1/orgs", ADMIN, "text/plain", b"name=x".to_vec())
        .await;
    r.problem(400, "validation_failed");
    assert!(r.body["detail"]
        .as_str()
        .unwrap()
        .contains("application/json"));
    app.post("/v1/orgs", ADMIN, json!({"name": 7}))
        .await
        .problem(422, "validation_failed");
    let r = app
        .post("/v1/orgs", ADMIN, json!({"name": "a", "colour": "red"}))
        .await;
    r.problem(422, "validation_failed");
    assert!(r.body["detail"].as_str().unwrap().contains("colour"));
    app.get("/v1/nothing-here", ADMIN)
        .await
        .problem(404, "not_found");
    app.get("/v1/orgs?limit=abc", ADMIN)
        .await
        .problem(400, "validation_failed");
}

#[tokio::test]
async fn unauthenticated_and_forbidden_are_problems() {
    let app = spawn_app().await;
    let r = app.call(Method::GET, "/v1/orgs", None, None).await;
    r.problem(401, "unauthorized");
    assert_eq!(r.headers.get("www-authenticate").unwrap(), "Bearer");
    app.get("/v1/orgs", "wrong-token")
        .await
        .problem(401, "unauthorized");
    app.get("/v1/orgs", "a.b.c")
        .await
        .problem(401, "unauthorized");
    app.get("/v1/orgs", "lgk_nope_nope")
        .await
        .problem(401, "unauthorized");
    // admin token on a studio endpoint: authenticated but not allowed
    app.get("/v1/providers", ADMIN)
        .await
        .problem(403, "forbidden");
}

/// Found by schemathesis: Postgres cannot store U+0000, which JSON allows; such text is a
/// 422 naming the rule, not a 500.
#[tokio::test]
async fn nul_characters_are_a_validation_error() {
    let app = spawn_app().await;
    let r = app
        .post("/v1/orgs", ADMIN, serde_json::json!({"name": "a\u{0}b"}))
        .await;
    r.problem(422, "validation_failed");
    assert!(r.body["detail"].as_str().unwrap().contains("NUL"));
}

/// A form endpoint sent without a form content type answers problem+json 400, like the
/// JSON endpoints (schemathesis found a bare 415 text answer).
#[tokio::test]
async fn a_form_without_its_content_type_is_a_problem() {
    let app = spawn_app().await;
    let r = app.call(Method::POST, "/connect/nope", None, None).await;
    r.problem(400, "validation_failed");
}
