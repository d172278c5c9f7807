//! issue 10: runtime tokens are revocable (directly, or by revoking the key that minted
//! them), a token limited to one agent reads nothing of another agent, and failed
//! authentication is throttled per source address.

use serde_json::{json, Value};

use crate::helpers::ADMIN;
use crate::rig::Rig;

#[tokio::test]
async fn runtime_tokens_die_with_their_minting_key_or_their_own_revocation() {
    let (app, _up, rig, _token) = Rig::start(false).await;
    let minter = app.create_key(&rig.t.org, &["mint"]).await;
    let mint = |key: String| {
        let body = json!({"user_id": "u1", "agent_id": rig.agent});
        let app = &app;
        async move {
            app.post("/v1/runtime-tokens", &key, body)
                .await
                .ok(201)
                .clone()
        }
    };
    let steps = format!("/v1/agents/{}/threads/t/steps", rig.agent);
    let a = mint(minter.clone()).await;
    let b = mint(minter.clone()).await;
    let token_a = a["token"].as_str().unwrap();
    app.post(&steps, token_a, json!({})).await.ok(200);
    // explicit revocation by id: that token only
    let id = a["id"].as_str().unwrap();
    assert!(id.starts_with("rt_"));
    let r = app
        .delete(&format!("/v1/runtime-tokens/{id}"), &minter)
        .await;
    assert_eq!(r.status.as_u16(), 204, "{}", r.text);
    app.post(&steps, token_a, json!({}))
        .await
        .problem(401, "unauthorized");
    let token_b = b["token"].as_str().unwrap();
    app.post(&steps, token_b, json!({})).await.ok(200);
    // revoking the minting key revokes every token it minted
    let key_id: Value = app
        .get(&format!("/v1/orgs/{}/api-keys", rig.t.org), ADMIN)
        .await
        .ok(200)["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["scopes"] == json!(["mint"]))
        .unwrap()["id"]
        .clone();
    let key_id = key_id.as_str().unwrap();
    app.delete(&format!("/v1/orgs/{}/api-keys/{key_id}", rig.t.org), ADMIN)
        .await
        .ok(200);
    let r = app.post(&steps, token_b, json!({})).await;
    r.problem(401, "unauthorized");
    assert!(r.body["detail"].as_str().unwrap().contains("revoked"));
}

#[tokio::test]
async fn a_token_limited_to_one_agent_reads_nothing_of_another() {
    let (app, _up, rig, _token) = Rig::start(false).await;
    let bindings = json!([{"tool_id": rig.tools["list_contacts"], "provider_id": rig.provider}]);
    let other = app
        .post(
            "/v1/agents",
            &rig.t.key,
            json!({"name": "other", "deployment_id": rig.t.deployment,
            "instructions": "x", "agentTools": bindings}),
        )
        .await
        .ok(201)["id"]
        .as_str()
        .unwrap()
        .to_string();
    // the same user, unlimited, calls a tool on the other agent
    let free = rig.token(&app, "u1", json!({"agent_id": null})).await;
    let r = app
        .post(
            &format!("/v1/agents/{other}/threads/t/tool-calls"),
            &free,
            json!({"name": "list_contacts", "arguments": {}}),
        )
        .await;
    let call = r.ok(200)["id"].as_str().unwrap().to_string();
    let at = format!("/v1/tool-calls/{call}");
    app.get(&at, &free).await.ok(200);
    // a token of the same user limited to the first agent cannot read it
    let limited = rig.token(&app, "u1", json!({})).await;
    app.get(&at, &limited).await.problem(404, "not_found");
    // nor follow its events (issue 13's events endpoint, any replica)
    app.get(&format!("{at}/events"), &limited)
        .await
        .problem(404, "not_found");
    app.get(&format!("{at}/events"), &free).await.ok(200);
}

#[tokio::test]
async fn a_user_id_cannot_take_an_org_keys_connection_owner() {
    let (app, _up, rig, _token) = Rig::start(false).await;
    // `key:<id>` owns an org key's connections (D4); no runtime user may be minted as it
    app.post(
        "/v1/runtime-tokens",
        &rig.t.key,
        json!({"user_id": "key:key_0000", "ttl_seconds": 600}),
    )
    .await
    .problem(422, "validation_failed");
}

#[tokio::test]
async fn failed_authentication_is_throttled_per_address() {
    let app = crate::helpers::spawn_app().await;
    let t = app.tenant("a").await;
    let mut statuses = Vec::new();
    for i in 0..40 {
        let garbage = format!("lgk_{i:0>22}_{}", "x".repeat(40));
        statuses.push(app.get("/v1/providers", &garbage).await.status.as_u16());
    }
    assert_eq!(statuses[0], 401);
    assert_eq!(*statuses.last().unwrap(), 429, "{statuses:?}");
    // while throttled even a good key from that address waits (no lookup at all)
    let r = app.get("/v1/providers", &t.key).await;
    r.problem(429, "rate_limited");
    assert!(r.headers.get("retry-after").is_some());
}

/// `GET /v1/providers` with `token`, as forwarded for `client`: the status.
async fn forwarded(app: &crate::helpers::TestApp, token: &str, client: &str) -> u16 {
    app.client
        .get(format!("{}/v1/providers", app.address))
        .bearer_auth(token)
        .header("x-forwarded-for", client)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// Issue 10: behind a configured trusted proxy the failure throttle counts the client
/// `X-Forwarded-For` names, so one client behind the proxy cannot lock out the others;
/// without `trusted_proxies` the header is ignored, so a client cannot escape the
/// throttle by naming a fresh address on every attempt.
#[tokio::test]
async fn the_throttle_reads_forwarded_for_only_behind_a_trusted_proxy() {
    let garbage = |i: usize| format!("lgk_{i:0>22}_{}", "x".repeat(40));
    let app = crate::helpers::spawn_app().await;
    let mut statuses = Vec::new();
    for i in 0..40 {
        statuses.push(forwarded(&app, &garbage(i), &format!("198.51.100.{i}")).await);
    }
    assert_eq!(*statuses.last().unwrap(), 429, "{statuses:?}");

    let mut settings = crate::helpers::test_settings(crate::helpers::fresh_database().await);
    settings.trusted_proxies = Some("127.0.0.0/8, ::1".into());
    let app = crate::helpers::spawn_with(settings).await;
    let t = app.tenant("a").await;
    let mut statuses = Vec::new();
    for i in 0..40 {
        statuses.push(forwarded(&app, &garbage(i), "203.0.113.7").await);
    }
    assert_eq!(statuses[0], 401);
    assert_eq!(*statuses.last().unwrap(), 429, "{statuses:?}");
    assert_eq!(forwarded(&app, &t.key, "203.0.113.7").await, 429);
    // another client behind the same proxy is not affected
    assert_eq!(forwarded(&app, &t.key, "203.0.113.8").await, 200);
    // a client's forged entry left of what the proxy appended changes nothing
    assert_eq!(
        forwarded(&app, &t.key, "203.0.113.8, 203.0.113.7").await,
        429
    );
}
