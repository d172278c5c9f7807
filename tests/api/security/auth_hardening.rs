//! Runtime tokens are revocable (directly, or by revoking the key that minted them), a
//! token limited to one agent reads nothing of another agent, and failed authentication
//! is throttled per source address.

use std::future::Future;

use loopgate::auth::guard::FAILURE_BURST;
use serde_json::{json, Value};

use crate::support::helpers::{Res, ADMIN};
use crate::support::rig::Rig;

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
    // nor follow its events (`…/events`, which any replica serves)
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

/// A key of the right shape that no org has, another one for each `i` (each is looked up).
fn garbage(i: usize) -> String {
    format!("lgk_{i:0>22}_{}", "x".repeat(40))
}

/// Sends failing keys through `send` (key number `next` on) until one is refused 429, the
/// address throttled, and returns the statuses: the whole burst is answered 401 first.
async fn until_throttled<F: Future<Output = u16>>(
    send: &impl Fn(String) -> F,
    next: &mut usize,
) -> Vec<u16> {
    let mut statuses: Vec<u16> = Vec::new();
    while statuses.last() != Some(&429) {
        assert!(statuses.len() < 200, "never throttled: {statuses:?}");
        statuses.push(send(garbage(*next)).await);
        *next += 1;
    }
    assert!(
        statuses.len() > FAILURE_BURST as usize
            && statuses[..FAILURE_BURST as usize].iter().all(|s| *s == 401),
        "{statuses:?}"
    );
    statuses
}

/// `good` (a valid key from the address `send` sends from), sent right after the address
/// was throttled, is refused before any lookup: its answer, a 429. The throttle lasts what
/// was left of `guard::FAILURE_PERIOD` (2 s) when it began, so a slow machine may send `good` after it
/// ended; that shows as the next failing key being looked up again (401), never refused
/// (a good key let through while throttled would leave it refused): the address is then
/// throttled again and `good` sent again.
async fn refused_while_throttled<F: Future<Output = u16>, G: Future<Output = Res>>(
    send: &impl Fn(String) -> F,
    good: impl Fn() -> G,
    next: &mut usize,
) -> Res {
    for _ in 0..5 {
        let r = good().await;
        if r.status != 200 {
            return r;
        }
        assert_eq!(
            send(garbage(*next)).await,
            401,
            "a good key was let through while the address was throttled"
        );
        *next += 1;
        until_throttled(send, next).await;
    }
    panic!("a good key was never refused while the address was throttled")
}

#[tokio::test]
async fn failed_authentication_is_throttled_per_address() {
    let app = crate::support::helpers::spawn_app().await;
    let t = app.tenant("a").await;
    let send = |key: String| {
        let app = &app;
        async move { app.get("/v1/providers", &key).await.status.as_u16() }
    };
    let mut next = 0;
    until_throttled(&send, &mut next).await;
    // while throttled even a good key from that address waits (no lookup at all)
    let r = refused_while_throttled(&send, || app.get("/v1/providers", &t.key), &mut next).await;
    r.problem(429, "rate_limited");
    assert!(r.headers.get("retry-after").is_some());
}

/// `GET /v1/providers` with `token`, as forwarded for `client`.
async fn forwarded(app: &crate::support::helpers::TestApp, token: &str, client: &str) -> Res {
    let res = app
        .client
        .get(format!("{}/v1/providers", app.address))
        .bearer_auth(token)
        .header("x-forwarded-for", client)
        .send()
        .await
        .unwrap();
    Res::read(res).await
}

/// Behind a configured trusted proxy the failure throttle counts the client
/// `X-Forwarded-For` names, so one client behind the proxy cannot lock out the others;
/// without `trusted_proxies` the header is ignored, so a client cannot escape the
/// throttle by naming a fresh address on every attempt.
#[tokio::test]
async fn the_throttle_reads_forwarded_for_only_behind_a_trusted_proxy() {
    let app = crate::support::helpers::spawn_app().await;
    let named = std::cell::Cell::new(0);
    let fresh_address = |key: String| {
        let (app, i) = (&app, named.replace(named.get() + 1));
        async move {
            let client = format!("198.51.100.{}", i % 250);
            forwarded(app, &key, &client).await.status.as_u16()
        }
    };
    until_throttled(&fresh_address, &mut 0).await;

    let mut settings =
        crate::support::helpers::test_settings(crate::support::helpers::fresh_database().await);
    settings.trusted_proxies = Some("127.0.0.0/8, ::1".into());
    let app = crate::support::helpers::spawn_with(settings).await;
    let t = app.tenant("a").await;
    let send = |key: String| {
        let app = &app;
        async move { forwarded(app, &key, "203.0.113.7").await.status.as_u16() }
    };
    let mut next = 0;
    until_throttled(&send, &mut next).await;
    let good = || forwarded(&app, &t.key, "203.0.113.7");
    assert_eq!(
        refused_while_throttled(&send, good, &mut next).await.status,
        429
    );
    // another client behind the same proxy is not affected
    assert_eq!(forwarded(&app, &t.key, "203.0.113.8").await.status, 200);
    // a client's forged entry left of what the proxy appended changes nothing
    let forged = || forwarded(&app, &t.key, "203.0.113.8, 203.0.113.7");
    assert_eq!(
        refused_while_throttled(&send, forged, &mut next)
            .await
            .status,
        429
    );
}
