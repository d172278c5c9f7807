//! Providers: credentials encrypted at rest, never returned; validation.

use serde_json::json;
use sqlx::{Connection, PgConnection};

use crate::helpers::spawn_app;

#[tokio::test]
async fn credential_is_encrypted_and_never_returned() {
    let app = spawn_app().await;
    let t = app.tenant("a").await;
    let secret = "sk_live_SUPER_SECRET_123";
    let r = app
        .post(
            "/v1/providers",
            &t.key,
            json!({"name": "billing", "base_url": "https://billing.example.com/", "auth": {"type": "header", "name": "X-Api-Key"},
                   "credential": secret, "user_credentials_required": true, "rate_limit": {"requests_per_second": 5, "burst": 10}}),
        )
        .await;
    let p = r.ok(201).clone();
    assert!(!r.text.contains(secret));
    assert_eq!(p["has_credential"], true);
    assert_eq!(p["base_url"], "https://billing.example.com");
    assert_eq!(p["auth"], json!({"type": "header", "name": "X-Api-Key"}));
    assert_eq!(p["user_credentials_required"], true);
    assert_eq!(
        p["rate_limit"],
        json!({"requests_per_second": 5.0, "burst": 10})
    );
    let id = p["id"].as_str().unwrap();

    let got = app.get(&format!("/v1/providers/{id}"), &t.key).await;
    assert!(!got.text.contains(secret));
    let list = app.get("/v1/providers", &t.key).await;
    assert!(!list.text.contains(secret));

    // at rest: ciphertext only
    let mut db = PgConnection::connect(&app.database_url).await.unwrap();
    let (raw,): (Vec<u8>,) =
        sqlx::query_as("SELECT credential_ciphertext FROM providers WHERE id = $1")
            .bind(id)
            .fetch_one(&mut db)
            .await
            .unwrap();
    assert!(!raw.windows(secret.len()).any(|w| w == secret.as_bytes()));
    assert!(raw.len() >= secret.len() + 28);

    // clearing and rate limit removal via explicit nulls
    let p = app
        .patch(
            &format!("/v1/providers/{id}"),
            &t.key,
            json!({"credential": null, "rate_limit": null}),
        )
        .await;
    assert_eq!(p.ok(200)["has_credential"], false);
    assert!(p.body["rate_limit"].is_null());
    assert_eq!(p.body["name"], "billing");
    let p = app
        .patch(
            &format!("/v1/providers/{id}"),
            &t.key,
            json!({"credential": "new"}),
        )
        .await;
    assert_eq!(p.ok(200)["has_credential"], true);
}

#[tokio::test]
async fn provider_validation() {
    let app = spawn_app().await;
    let t = app.tenant("a").await;
    let bad = [
        json!({"name": "x", "base_url": "ftp://x.example.com", "auth": {"type": "none"}}),
        json!({"name": "x", "base_url": "not a url", "auth": {"type": "none"}}),
        json!({"name": "x", "base_url": "https://user:pw@x.example.com", "auth": {"type": "none"}}),
        json!({"name": "x", "base_url": "https://x.example.com", "auth": {"type": "header"}}),
        json!({"name": "x", "base_url": "https://x.example.com", "auth": {"type": "magic"}}),
        json!({"name": "x", "base_url": "https://x.example.com", "auth": {"type": "none"}, "rate_limit": {"requests_per_second": 0, "burst": 1}}),
    ];
    for body in bad {
        let r = app.post("/v1/providers", &t.key, body.clone()).await;
        r.problem(422, "validation_failed");
    }
    let list = app.get("/v1/providers", &t.key).await;
    assert_eq!(
        list.ok(200)["total"],
        1,
        "only the tenant's own provider exists"
    );
    app.delete(&format!("/v1/providers/{}", t.provider), &t.key)
        .await
        .ok(204);
    app.get(&format!("/v1/providers/{}", t.provider), &t.key)
        .await
        .problem(404, "not_found");
}
