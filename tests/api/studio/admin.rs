//! Admin surface: orgs, API keys with scopes, deployments.

use serde_json::json;

use crate::support::helpers::{spawn_app, ADMIN};

#[tokio::test]
async fn org_lifecycle() {
    let app = spawn_app().await;
    let r = app
        .post("/v1/orgs", ADMIN, json!({"name": "  Acme  "}))
        .await;
    let org = r.ok(201).clone();
    assert!(org["id"].as_str().unwrap().starts_with("org_"));
    assert_eq!(org["name"], "Acme");
    let id = org["id"].as_str().unwrap();

    let got = app.get(&format!("/v1/orgs/{id}"), ADMIN).await;
    assert_eq!(got.ok(200)["name"], "Acme");
    let renamed = app
        .patch(
            &format!("/v1/orgs/{id}"),
            ADMIN,
            json!({"name": "Acme Ltd"}),
        )
        .await;
    assert_eq!(renamed.ok(200)["name"], "Acme Ltd");
    let list = app.get("/v1/orgs", ADMIN).await;
    assert_eq!(list.ok(200)["total"], 1);
    assert_eq!(list.body["data"][0]["id"], id);

    app.delete(&format!("/v1/orgs/{id}"), ADMIN).await.ok(204);
    app.get(&format!("/v1/orgs/{id}"), ADMIN)
        .await
        .problem(404, "not_found");
    app.post("/v1/orgs", ADMIN, json!({"name": ""}))
        .await
        .problem(422, "validation_failed");
}

#[tokio::test]
async fn api_keys_have_scopes_are_listed_without_secrets_and_can_be_revoked() {
    let app = spawn_app().await;
    let org = app.create_org("a").await;
    let created = app
        .post(
            &format!("/v1/orgs/{org}/api-keys"),
            ADMIN,
            json!({"name": "studio", "scopes": ["studio"]}),
        )
        .await;
    let created = created.ok(201).clone();
    let secret = created["key"].as_str().unwrap().to_string();
    assert!(secret.starts_with("lgk_"));
    let key_id = created["id"].as_str().unwrap();

    let list = app.get(&format!("/v1/orgs/{org}/api-keys"), ADMIN).await;
    assert_eq!(list.ok(200)["data"].as_array().unwrap().len(), 1);
    assert!(!list.text.contains(&secret[12..]), "secret leaked in list");
    assert!(list.body["data"][0].get("key").is_none());
    assert_eq!(list.body["data"][0]["scopes"], json!(["studio"]));

    // scope studio works on studio, not on mint
    app.get("/v1/providers", &secret).await.ok(200);
    app.post("/v1/runtime-tokens", &secret, json!({"user_id": "u"}))
        .await
        .problem(403, "forbidden");
    // an org key is not the admin
    app.get("/v1/orgs", &secret).await.problem(403, "forbidden");

    let revoked = app
        .delete(&format!("/v1/orgs/{org}/api-keys/{key_id}"), ADMIN)
        .await;
    assert!(revoked.ok(200)["revoked_at"].is_string());
    app.get("/v1/providers", &secret)
        .await
        .problem(401, "unauthorized");

    // a tampered secret with a real id is refused
    let mut tampered = secret.clone();
    tampered.pop();
    tampered.push('x');
    app.get("/v1/providers", &tampered)
        .await
        .problem(401, "unauthorized");

    app.post(
        &format!("/v1/orgs/{org}/api-keys"),
        ADMIN,
        json!({"name": "x", "scopes": ["root"]}),
    )
    .await
    .problem(422, "validation_failed");
    app.post(
        &format!("/v1/orgs/{org}/api-keys"),
        ADMIN,
        json!({"name": "x", "scopes": []}),
    )
    .await
    .problem(422, "validation_failed");
    app.post(
        "/v1/orgs/org_missing/api-keys",
        ADMIN,
        json!({"name": "x", "scopes": ["studio"]}),
    )
    .await
    .problem(404, "not_found");
}

#[tokio::test]
async fn deployments_switch_cache_mode() {
    let app = spawn_app().await;
    let org = app.create_org("a").await;
    let r = app
        .post(
            &format!("/v1/orgs/{org}/deployments"),
            ADMIN,
            json!({"name": "prod", "cache": "shadow"}),
        )
        .await;
    let dep = r.ok(201)["id"].as_str().unwrap().to_string();
    assert_eq!(r.body["cache"], "shadow");
    let p = app
        .patch(
            &format!("/v1/orgs/{org}/deployments/{dep}"),
            ADMIN,
            json!({"cache": "off"}),
        )
        .await;
    assert_eq!(p.ok(200)["cache"], "off");
    assert_eq!(p.body["name"], "prod");
    app.patch(
        &format!("/v1/orgs/{org}/deployments/{dep}"),
        ADMIN,
        json!({"cache": "sometimes"}),
    )
    .await
    .problem(422, "validation_failed");
    // same name twice is a conflict
    app.post(
        &format!("/v1/orgs/{org}/deployments"),
        ADMIN,
        json!({"name": "prod"}),
    )
    .await
    .problem(409, "conflict");
    let list = app.get(&format!("/v1/orgs/{org}/deployments"), ADMIN).await;
    assert_eq!(list.ok(200)["total"], 1);
    app.delete(&format!("/v1/orgs/{org}/deployments/{dep}"), ADMIN)
        .await
        .ok(204);
    app.get(&format!("/v1/orgs/{org}/deployments/{dep}"), ADMIN)
        .await
        .problem(404, "not_found");
}

#[tokio::test]
async fn health_ready_metrics() {
    let app = spawn_app().await;
    let h = app.call(reqwest::Method::GET, "/healthz", None, None).await;
    assert_eq!(h.ok(200)["status"], "ok");
    let r = app.call(reqwest::Method::GET, "/readyz", None, None).await;
    assert_eq!(r.ok(200)["status"], "ready");
    let m = app.call(reqwest::Method::GET, "/metrics", None, None).await;
    assert_eq!(m.status.as_u16(), 200);
    assert!(m.text.contains("# TYPE loopgate_http_responses counter"));
    assert!(m
        .text
        .contains("loopgate_http_responses_total{class=\"2xx\"}"));
}
