//! Minting runtime tokens: scope, bounds, sealed credentials.

use base64::Engine as _;
use serde_json::{json, Value};

use crate::support::helpers::spawn_app;

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

/// A user's own credential in a runtime token is bound to the provider's origin and auth
/// placement as they were at minting, like the org credential: once either moves, the
/// token's credential is not sent anywhere (409 credential_required), and a token minted
/// afterwards is bound to the new place.
#[tokio::test]
async fn a_users_credential_is_not_sent_after_the_provider_moves() {
    let (app, up, rig, _) = crate::support::rig::Rig::start(false).await;
    let user = |secret: &str| json!({"credentials": {rig.provider.clone(): secret}});
    let token = rig.token(&app, "u1", user("user-secret-u1")).await;
    rig.call(&app, &token, "th1", "list_inboxes", json!({}))
        .await
        .ok(200);
    let last_auth =
        |u: &crate::support::upstream_server::Upstream| u.stats.lock().unwrap().last_auth.clone();
    assert_eq!(last_auth(&up).as_deref(), Some("Bearer user-secret-u1"));

    // Another origin (the org credential re-entered, as a move requires).
    let other = crate::support::upstream_server::start().await;
    let provider = format!("/v1/providers/{}", rig.provider);
    app.patch(
        &provider,
        &rig.t.key,
        json!({"base_url": other.base, "credential": "org-secret-2"}),
    )
    .await
    .ok(200);
    let r = rig
        .call(&app, &token, "th2", "list_inboxes", json!({}))
        .await;
    r.problem(409, "credential_required");
    assert!(r.text.contains("mint a new token"), "{}", r.text);
    assert!(!r.text.contains("user-secret-u1"));
    assert_eq!(
        other.total(),
        0,
        "the user's secret never reaches the new origin"
    );

    let fresh = rig.token(&app, "u1", user("user-secret-u1")).await;
    rig.call(&app, &fresh, "th3", "list_inboxes", json!({}))
        .await
        .ok(200);
    assert_eq!(last_auth(&other).as_deref(), Some("Bearer user-secret-u1"));

    // Same origin, another auth placement (a header): the fresh token's bearer stops too.
    let before = other.total();
    app.patch(
        &provider,
        &rig.t.key,
        json!({"auth": {"type": "header", "name": "X-Api-Key"}, "credential": "org-secret-3"}),
    )
    .await
    .ok(200);
    rig.call(&app, &fresh, "th4", "list_inboxes", json!({}))
        .await
        .problem(409, "credential_required");
    assert_eq!(other.total(), before);
    // A path change on the same origin keeps the binding.
    app.patch(
        &provider,
        &rig.t.key,
        json!({"base_url": format!("{}/", other.base)}),
    )
    .await
    .ok(200);
    let header = rig.token(&app, "u1", user("user-secret-h")).await;
    rig.call(&app, &header, "th5", "list_inboxes", json!({}))
        .await
        .ok(200);
    assert_eq!(last_auth(&other).as_deref(), Some("user-secret-h"));
}
