//! Providers: credentials encrypted at rest, never returned; validation.

use serde_json::json;
use sqlx::{Connection, PgConnection};

use crate::support::helpers::spawn_app;

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

/// A provider is an API (the default), an MCP server (`url`) or an app toolkit; the kind
/// is returned and never changes.
#[tokio::test]
async fn provider_kind_and_mcp_url() {
    let app = spawn_app().await;
    let t = app.tenant("a").await;
    let api = app
        .get(&format!("/v1/providers/{}", t.provider), &t.key)
        .await;
    assert_eq!(api.ok(200)["kind"], "api");
    assert!(api.body.get("url").is_none(), "an API has no MCP url");

    let r = app
        .post(
            "/v1/providers",
            &t.key,
            json!({"kind": "mcp", "name": "docs", "url": "https://mcp.example.com/mcp/", "auth": {"type": "bearer"}, "credential": "tok"}),
        )
        .await;
    let p = r.ok(201).clone();
    assert_eq!(p["kind"], "mcp");
    assert_eq!(
        p["url"], "https://mcp.example.com/mcp/",
        "the endpoint path is kept as given"
    );
    assert_eq!(p["base_url"], p["url"]);
    let id = p["id"].as_str().unwrap();
    let got = app.get(&format!("/v1/providers/{id}"), &t.key).await;
    assert_eq!(got.ok(200)["url"], "https://mcp.example.com/mcp/");
    assert_eq!(got.body["kind"], "mcp");

    let moved = app
        .patch(
            &format!("/v1/providers/{id}"),
            &t.key,
            // another origin: the credential is re-entered with it (it is bound to its
            // origin)
            json!({"url": "https://mcp2.example.com/v1/mcp", "credential": "tok"}),
        )
        .await;
    assert_eq!(moved.ok(200)["url"], "https://mcp2.example.com/v1/mcp");
    app.patch(
        &format!("/v1/providers/{id}"),
        &t.key,
        json!({"kind": "api"}),
    )
    .await
    .problem(422, "validation_failed");
    app.patch(
        &format!("/v1/providers/{id}"),
        &t.key,
        json!({"kind": "mcp", "name": "docs2"}),
    )
    .await
    .ok(200);

    let bad = [
        json!({"kind": "mcp", "name": "x", "auth": {"type": "none"}}),
        json!({"kind": "mcp", "name": "x", "url": "ftp://x.example.com", "auth": {"type": "none"}}),
        json!({"kind": "mcp", "name": "x", "url": "https://a.example.com", "base_url": "https://b.example.com", "auth": {"type": "none"}}),
        json!({"name": "x", "url": "https://a.example.com", "auth": {"type": "none"}}),
        json!({"name": "x", "auth": {"type": "none"}}),
        json!({"kind": "robot", "name": "x", "base_url": "https://a.example.com", "auth": {"type": "none"}}),
    ];
    for body in bad {
        let r = app.post("/v1/providers", &t.key, body.clone()).await;
        assert!(
            matches!(r.status.as_u16(), 400 | 422),
            "{body} was accepted: {}",
            r.text
        );
    }

    // a tool defined by hand under an MCP provider is an MCP tool unless it says otherwise
    let tool = app
        .post(
            "/v1/tools",
            &t.key,
            json!({"provider_id": id, "name": "search", "method": "POST", "path": "/search",
                   "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}}}),
        )
        .await;
    assert_eq!(tool.ok(201)["kind"], "mcp");
}

/// The org credential is bound to the provider's origin and auth placement; a
/// PATCH moving either without re-entering the secret is refused, so a studio key cannot
/// point the provider at its own server and receive the org's secret.
#[tokio::test]
async fn credential_is_bound_to_origin_and_auth_placement() {
    let app = spawn_app().await;
    let t = app.tenant("a").await;
    let p = app
        .post(
            "/v1/providers",
            &t.key,
            json!({"name": "crm", "base_url": "https://crm.example.com/v1", "auth": {"type": "bearer"},
                   "credential": "sk_bound_secret"}),
        )
        .await;
    let id = p.ok(201)["id"].as_str().unwrap().to_string();
    let at = format!("/v1/providers/{id}");
    for moved in [
        json!({"base_url": "https://attacker.example.net/v1"}),
        json!({"base_url": "http://crm.example.com/v1"}),
        json!({"base_url": "https://crm.example.com:8443/v1"}),
        json!({"auth": {"type": "query", "name": "token"}}),
        json!({"auth": {"type": "header", "name": "X-Key"}}),
    ] {
        let r = app.patch(&at, &t.key, moved.clone()).await;
        r.problem(409, "credential_required");
        assert!(!r.text.contains("sk_bound_secret"));
    }
    let still = app.get(&at, &t.key).await;
    assert_eq!(still.ok(200)["base_url"], "https://crm.example.com/v1");
    assert_eq!(still.body["auth"], json!({"type": "bearer"}));
    // a new path on the same origin keeps the credential
    let r = app
        .patch(
            &at,
            &t.key,
            json!({"base_url": "https://crm.example.com/v2"}),
        )
        .await;
    assert_eq!(r.ok(200)["has_credential"], true);
    // moving with the secret re-entered, or removed, is allowed
    let r = app
        .patch(
            &at,
            &t.key,
            json!({"base_url": "https://other.example.org", "credential": "sk_new"}),
        )
        .await;
    assert_eq!(r.ok(200)["has_credential"], true);
    let r = app
        .patch(
            &at,
            &t.key,
            json!({"auth": {"type": "header", "name": "X-Key"}, "credential": null}),
        )
        .await;
    assert_eq!(r.ok(200)["has_credential"], false);
    // without a stored credential there is nothing to protect
    let r = app
        .patch(
            &at,
            &t.key,
            json!({"base_url": "https://third.example.org"}),
        )
        .await;
    r.ok(200);
}
