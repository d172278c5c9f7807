//! The auth matrix, generated from the OpenAPI document (which
//! `studio::openapi_doc::document_and_route_table_agree` holds equal to the route table),
//! so a new route is covered without editing this file:
//! - every operation with a path id, called with org A's real ids by another org's
//!   credential that the operation accepts → `404 not_found` (never 403, never the
//!   object), and A's objects survive every probe;
//! - every list operation called by another org never shows one of A's ids;
//! - every operation a runtime token may call, with a broken JWT (`alg: none`, another
//!   algorithm, a wrong key, audience or issuer, expired, not yet valid, a tampered
//!   payload, revoked, minted by a deleted key) → `401 unauthorized`.
//!
//! The other half — each too-narrow scope gets 403 — is
//! `studio::openapi_doc::declared_security_is_enforced`, over the same document.

use std::collections::HashMap;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use reqwest::Method;
use serde_json::{json, Value};

use crate::studio::openapi_doc::{accepts, document, operations};
use crate::support::helpers::{spawn_with, test_settings, TestApp, ADMIN};
use crate::support::rig::Rig;

/// Operations whose answer does not depend on the id at all, so another org's id is
/// answered exactly like an id that does not exist (checked) rather than with 404.
const ID_BLIND: &[(&str, &str, &str)] = &[(
    "delete",
    "/v1/runtime-tokens/{token_id}",
    "tokens are not stored: revoking any id is an idempotent 204 within the caller's org, \
         touching nothing of another org's (A's token still works, checked)",
)];

const SIGNING_KEY: &[u8] = b"test-signing-key-that-is-long-enough-0123";

/// Org A: one object behind every kind of path id, by the id's parameter name.
pub(crate) struct World {
    pub(crate) rig: Rig,
    pub(crate) token: String,
    pub(crate) ids: HashMap<&'static str, String>,
}

pub(crate) async fn app_on(db: &str) -> TestApp {
    let mut s = test_settings(db.to_string());
    s.org_requests_per_second = 100_000;
    spawn_with(s).await
}

fn id(v: &Value) -> String {
    v["id"].as_str().unwrap().to_string()
}

impl World {
    pub(crate) async fn build(app: &TestApp) -> World {
        let up = crate::support::upstream_server::start().await;
        let rig = Rig::new(app, &up, false).await;
        let key = rig.t.key.clone();
        // a connected app the user connects with an API key, for a connection id
        let kit = crate::runtime::discovery::app_provider(
            app,
            &key,
            "chat",
            &up.base,
            json!({"type": "api_key"}),
        )
        .await;
        let kit_tool = id(app
            .post("/v1/tools", &key, json!({"provider_id": kit, "name": "list_chats",
                "method": "GET", "path": "/inboxes", "input_schema": {"type": "object", "properties": {}}}))
            .await
            .ok(201));
        app.post(
            &format!("/v1/agents/{}/tools", rig.agent),
            &key,
            json!({"tool_id": kit_tool, "provider_id": kit}),
        )
        .await
        .ok(201);
        let minted = app
            .post(
                "/v1/runtime-tokens",
                &key,
                json!({"user_id": "u1", "agent_id": rig.agent}),
            )
            .await;
        let token = minted.ok(201)["token"].as_str().unwrap().to_string();
        let token_id = id(minted.ok(201));
        let link = rig
            .call(
                app,
                &token,
                "th-a",
                "connect_toolkit",
                json!({"toolkit": "chat"}),
            )
            .await;
        let url = link.ok(200)["result"]["url"].as_str().unwrap().to_string();
        let done = app
            .client
            .post(&url)
            .header("content-type", "application/x-www-form-urlencoded")
            .body("api_key=sk-a-123456")
            .send()
            .await
            .unwrap();
        assert_eq!(done.status().as_u16(), 200);
        let listed = app.get("/v1/connections?user_id=u1", &key).await;
        let connection = id(&listed.ok(200)["data"][0]);

        let call = id(rig
            .call(app, &token, "th-a", "list_inboxes", json!({}))
            .await
            .ok(200));
        let workflow = id(app
            .post(
                "/v1/workflows",
                &key,
                json!({"name": "w", "agent_id": rig.agent,
                "steps": [{"id": "s", "type": "tool", "tool": "list_inboxes"}]}),
            )
            .await
            .ok(201));
        let run = id(app
            .post(&format!("/v1/workflows/{workflow}/runs"), &token, json!({}))
            .await
            .ok(201));
        let schedule = id(app
            .post(
                &format!("/v1/workflows/{workflow}/schedules"),
                &key,
                json!({"cron": "0 7 * * 1-5", "timezone": "Europe/Paris"}),
            )
            .await
            .ok(201));
        let endpoint = id(app
            .post(
                "/v1/webhook-endpoints",
                &key,
                json!({"url": "https://hooks.example.com/a"}),
            )
            .await
            .ok(201));
        let ids = HashMap::from([
            ("schedule_id", schedule),
            ("endpoint_id", endpoint),
            ("agent_id", rig.agent.clone()),
            ("tool_id", rig.tools["list_inboxes"].clone()),
            ("provider_id", rig.provider.clone()),
            ("thread_id", "th-a".to_string()),
            ("call_id", call),
            ("workflow_id", workflow),
            ("run_id", run),
            ("connection_id", connection),
            ("token_id", token_id),
            ("org_id", rig.t.org.clone()),
        ]);
        World { rig, token, ids }
    }

    /// The path with every `{param}` replaced by A's object.
    pub(crate) fn url(&self, path: &str) -> String {
        path.split('/')
            .map(
                |seg| match seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                    Some(name) => self
                        .ids
                        .get(name)
                        .unwrap_or_else(|| {
                            panic!("{path}: no object for {{{name}}}: add one to World")
                        })
                        .clone(),
                    None => seg.to_string(),
                },
            )
            .collect::<Vec<_>>()
            .join("/")
    }

    /// The path with every `{param}` replaced by an id that does not exist.
    fn missing(&self, path: &str) -> String {
        let url = self.url(path);
        self.ids
            .values()
            .fold(url, |u, id| u.replace(id.as_str(), &format!("{id}x")))
    }

    /// A body that would succeed for A's own credential, so a refusal is about whose
    /// object it is (`{}` for an operation not listed).
    pub(crate) fn body(&self, method: &str, path: &str, op: &Value) -> Option<Value> {
        op.get("requestBody")?;
        Some(match (method, path) {
            ("post", "/v1/agents/{agent_id}/tools") => {
                json!({"tool_id": self.ids["tool_id"], "provider_id": self.ids["provider_id"]})
            }
            ("patch", "/v1/agents/{agent_id}/tools/{tool_id}") => json!({"loop_responses": true}),
            ("patch", "/v1/schedules/{schedule_id}") => json!({"paused": true}),
            ("patch", "/v1/webhook-endpoints/{endpoint_id}") => json!({"description": "stolen"}),
            ("post", "/v1/workflows/{workflow_id}/schedules") => json!({"cron": "0 7 * * *"}),
            ("patch", _) => json!({"name": "stolen"}),
            ("post", "/v1/agents/{agent_id}/threads/{thread_id}/tool-calls") => {
                json!({"name": "list_inboxes", "arguments": {}})
            }
            ("post", "/v1/providers/{provider_id}/openapi") => {
                json!({"openapi": "3.0.0", "info": {"title": "x", "version": "1"}, "paths": {}})
            }
            ("post", "/v1/agents/{agent_id}/mcp") => {
                json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "probe", "version": "1"}}})
            }
            _ => json!({}),
        })
    }

    /// Every id of A's that another org must never see.
    fn secrets(&self) -> Vec<&String> {
        self.ids
            .iter()
            .filter(|(k, _)| **k != "thread_id")
            .map(|(_, v)| v)
            .collect()
    }
}

pub(crate) fn method(m: &str) -> Method {
    Method::from_bytes(m.to_uppercase().as_bytes()).unwrap()
}

/// Another org's credentials, each with whether an operation's security accepts it.
async fn intruders(app: &TestApp) -> Vec<(&'static str, Option<&'static str>, String)> {
    let b = app.tenant("b").await;
    let token = app
        .post("/v1/runtime-tokens", &b.key, json!({"user_id": "u1"}))
        .await
        .ok(201)["token"]
        .as_str()
        .unwrap()
        .to_string();
    let mut out = Vec::new();
    for scope in ["studio", "mint", "runtime"] {
        out.push(("orgKey", Some(scope), b.key.clone()));
    }
    out.push(("runtimeToken", None, token));
    out
}

#[tokio::test]
async fn another_orgs_credential_finds_nothing_on_any_route() {
    let db = crate::support::helpers::fresh_database().await;
    let app = app_on(&db).await;
    let world = World::build(&app).await;
    let intruders = intruders(&app).await;
    let mut probed = 0;
    for (m, path, op) in operations(&document()) {
        let security = op["security"].as_array().cloned().unwrap_or_default();
        let with_id = path.contains('{');
        for (scheme, role, cred) in &intruders {
            if !accepts(&security, scheme, *role) {
                continue; // a refused credential is 403: openapi_doc covers it
            }
            let who = format!("{m} {path} with another org's {scheme} {role:?}");
            if with_id {
                let body = world.body(&m, &path, &op);
                let r = app
                    .call(method(&m), &world.url(&path), Some(cred), body.as_ref())
                    .await;
                if ID_BLIND
                    .iter()
                    .any(|(bm, bp, _)| (*bm, *bp) == (m.as_str(), path.as_str()))
                {
                    // the same answer as for an id that does not exist: it tells nothing
                    let missing = app
                        .call(method(&m), &world.missing(&path), Some(cred), body.as_ref())
                        .await;
                    assert_eq!(r.status, missing.status, "{who}: {}", r.text);
                    assert_eq!(r.body["code"], missing.body["code"], "{who}: {}", r.text);
                    continue;
                }
                assert_eq!(r.status.as_u16(), 404, "{who}: {}", r.text);
                r.problem(404, "not_found");
            } else if m == "get" {
                let r = app.call(Method::GET, &path, Some(cred), None).await;
                assert!(r.status.is_success(), "{who}: {}", r.text);
                for secret in world.secrets() {
                    assert!(!r.text.contains(secret.as_str()), "{who} shows {secret}");
                }
            } else {
                continue;
            }
            probed += 1;
        }
    }
    assert!(probed > 30, "only {probed} probes");

    // A's objects and token survived every probe.
    let key = &world.rig.t.key;
    for p in [
        "/v1/agents/{agent_id}",
        "/v1/tools/{tool_id}",
        "/v1/providers/{provider_id}",
        "/v1/workflows/{workflow_id}",
        "/v1/agents/{agent_id}/tools/{tool_id}",
    ] {
        app.get(&world.url(p), key).await.ok(200);
    }
    let listed = app.get("/v1/connections?user_id=u1", key).await;
    assert_eq!(listed.ok(200)["data"].as_array().unwrap().len(), 1);
    app.get(&world.url("/v1/tool-calls/{call_id}"), &world.token)
        .await
        .ok(200);
}

/// A's token's claims, re-signed with `alg` and `key` after `edit`.
fn forge(
    token: &str,
    alg: jsonwebtoken::Algorithm,
    key: &[u8],
    edit: impl Fn(&mut Value),
) -> String {
    let payload = token.split('.').nth(1).unwrap();
    let mut claims: Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
    edit(&mut claims);
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(alg),
        &claims,
        &jsonwebtoken::EncodingKey::from_secret(key).unwrap(),
    )
    .unwrap()
}

#[tokio::test]
async fn every_runtime_route_refuses_every_broken_token() {
    use jsonwebtoken::Algorithm::{HS256, HS384};
    let db = crate::support::helpers::fresh_database().await;
    let app = app_on(&db).await;
    let world = World::build(&app).await;
    let (org, key, agent) = (&world.rig.t.org, &world.rig.t.key, &world.rig.agent);
    let good = &world.token;
    let now = chrono::Utc::now().timestamp();
    let steps = format!("/v1/agents/{agent}/threads/th-a/steps");
    // the forging is right: the same claims re-signed with our key are accepted
    let resigned = forge(good, HS256, SIGNING_KEY, |_| {});
    app.post(&steps, &resigned, json!({})).await.ok(200);

    let payload = good.split('.').nth(1).unwrap();
    let none_header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#);
    let mut tampered: Vec<String> = good.split('.').map(String::from).collect();
    let mut claims: Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
    claims["sub"] = json!("someone-else");
    tampered[1] = URL_SAFE_NO_PAD.encode(claims.to_string());

    // (token, its id) of user u1 on A's agent, minted with `by`
    let mint = |by: String| {
        let app = &app;
        async move {
            let r = app
                .post(
                    "/v1/runtime-tokens",
                    &by,
                    json!({"user_id": "u1", "agent_id": agent}),
                )
                .await;
            (
                r.ok(201)["token"].as_str().unwrap().to_string(),
                id(r.ok(201)),
            )
        }
    };
    let (revoked, revoked_id) = mint(key.clone()).await;
    app.delete(&format!("/v1/runtime-tokens/{revoked_id}"), key)
        .await;
    let doomed = app
        .post(
            &format!("/v1/orgs/{org}/api-keys"),
            ADMIN,
            json!({"name": "doomed", "scopes": ["mint"]}),
        )
        .await;
    let (orphan, _) = mint(doomed.ok(201)["key"].as_str().unwrap().to_string()).await;
    app.delete(
        &format!("/v1/orgs/{org}/api-keys/{}", id(doomed.ok(201))),
        ADMIN,
    )
    .await;

    let broken: Vec<(&str, String)> = vec![
        ("alg none", format!("{none_header}.{payload}.")),
        (
            "HS384 with the right key",
            forge(good, HS384, SIGNING_KEY, |_| {}),
        ),
        (
            "a wrong key",
            forge(
                good,
                HS256,
                b"another-key-that-is-long-enough-98765",
                |_| {},
            ),
        ),
        (
            "a wrong audience",
            forge(good, HS256, SIGNING_KEY, |c| c["aud"] = json!("elsewhere")),
        ),
        (
            "a wrong issuer",
            forge(good, HS256, SIGNING_KEY, |c| c["iss"] = json!("evil")),
        ),
        (
            "expired",
            forge(good, HS256, SIGNING_KEY, |c| c["exp"] = json!(now - 120)),
        ),
        (
            "not yet valid",
            forge(good, HS256, SIGNING_KEY, |c| c["nbf"] = json!(now + 600)),
        ),
        ("a tampered payload", tampered.join(".")),
        ("revoked", revoked),
        ("minted by a deleted key", orphan),
    ];
    let runtime_ops: Vec<(String, String, Value)> = operations(&document())
        .into_iter()
        .filter(|(_, _, op)| {
            accepts(
                op["security"].as_array().map_or(&[][..], |v| v),
                "runtimeToken",
                None,
            )
        })
        .collect();
    assert!(runtime_ops.len() >= 8, "{}", runtime_ops.len());
    for (what, token) in &broken {
        // a fresh replica per kind: the failed-auth throttle (30 per address) is per process
        let app = app_on(&db).await;
        for (m, path, op) in &runtime_ops {
            let body = world.body(m, path, op);
            let r = app
                .call(method(m), &world.url(path), Some(token), body.as_ref())
                .await;
            assert_eq!(r.status.as_u16(), 401, "{m} {path} with {what}: {}", r.text);
            r.problem(401, "unauthorized");
        }
    }
}
