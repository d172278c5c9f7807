//! Minting runtime tokens: scope, bounds, sealed credentials.

use base64::Engine as _;
use serde_json::{json, Value};

use crate::helpers::spawn_app;

fn claims(token: &str) -> Value {
    let payload = token.split('.').nth(1).unwrap();
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .unwrap();
    serde_json::from_slice(&raw).unwrap()
}

#[tokio::test]
async fn mint_runtime_tokens() {
    let app = spawn_app().await;
    let t = app.tenant("a").await;
    let studio_only = app.create_key(&t.org, &["studio"]).await;
    app.post("/v1/runtime-tokens", &studio_only, json!({"user_id": "u1"}))
        .await
        .problem(403, "forbidden");

    let r = app
        .post(
            "/v1/runtime-tokens",
            &t.key,
            json!({"user_id": "u1", "credentials": {t.provider.clone(): "user-own-secret-xyz"}, "cache_scope": "acme-team"}),
        )
        .await;
    let body = r.ok(201).clone();
    let token = body["token"].as_str().unwrap();
    assert!(!r.text.contains("user-own-secret-xyz"));
    let c = claims(token);
    assert_eq!(c["sub"], "u1");
    assert_eq!(c["org"], t.org.as_str());
    assert_eq!(c["cs"], "acme-team");
    assert_eq!(c["iss"], "loopgate");
    assert_eq!(c["aud"], "loopgate-runtime");
    let ttl = c["exp"].as_i64().unwrap() - c["iat"].as_i64().unwrap();
    assert_eq!(ttl, 3600, "default lifetime is one hour");
    assert!(
        !c.to_string().contains("user-own-secret-xyz"),
        "credentials are sealed"
    );
    let expires =
        chrono::DateTime::parse_from_rfc3339(body["expires_at"].as_str().unwrap()).unwrap();
    assert_eq!(expires.timestamp(), c["exp"].as_i64().unwrap());

    let long = app
        .post(
            "/v1/runtime-tokens",
            &t.key,
            json!({"user_id": "u1", "ttl_seconds": 86400}),
        )
        .await;
    let c = claims(long.ok(201)["token"].as_str().unwrap());
    assert_eq!(
        c["exp"].as_i64().unwrap() - c["iat"].as_i64().unwrap(),
        86400
    );
    app.post(
        "/v1/runtime-tokens",
        &t.key,
        json!({"user_id": "u1", "ttl_seconds": 86401}),
    )
    .await
    .problem(422, "validation_failed");
    app.post("/v1/runtime-tokens", &t.key, json!({"user_id": ""}))
        .await
        .problem(422, "validation_failed");

    // a runtime token is not a studio credential
    app.get("/v1/providers", token)
        .await
        .problem(403, "forbidden");
    // a forged token (payload edited, signature kept) is refused
    let mut parts: Vec<String> = token.split('.').map(String::from).collect();
    let mut forged = claims(token);
    forged["sub"] = json!("admin");
    parts[1] = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(forged.to_string());
    app.get("/v1/providers", &parts.join("."))
        .await
        .problem(401, "unauthorized");
}
