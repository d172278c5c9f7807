//! The audit trail (`GET /v1/audit-events`): a binding switch and a credential rotation
//! recorded with their actor and changed fields and no secret, admin writes as the admin,
//! filters by resource and actor, keyset pages, and another org's trail out of reach.

use std::collections::HashSet;

use serde_json::{json, Value};

use crate::support::helpers::{spawn_app, TestApp, ADMIN};

async fn events(app: &TestApp, key: &str, query: &str) -> Value {
    app.get(&format!("/v1/audit-events?{query}"), key)
        .await
        .ok(200)
        .clone()
}

async fn key_id(app: &TestApp, org: &str) -> String {
    let keys = app.get(&format!("/v1/orgs/{org}/api-keys"), ADMIN).await;
    keys.ok(200)["data"][0]["id"]
        .as_str()
        .expect("key id")
        .to_string()
}

#[tokio::test]
async fn a_binding_switch_and_a_credential_rotation_are_audited_without_secrets() {
    let app = spawn_app().await;
    let t = app.tenant("a").await;
    let actor = key_id(&app, &t.org).await;
    let tool = app.create_tool(&t.key, &t.provider, "list_contacts").await;
    let (agent, _) = app
        .agent_and_token(
            &t,
            vec![json!({"tool_id": tool, "provider_id": t.provider, "loop_responses": true})],
            "u1",
        )
        .await;
    app.patch(
        &format!("/v1/agents/{agent}/tools/{tool}"),
        &t.key,
        json!({"loop_responses": false}),
    )
    .await
    .ok(200);
    // the same switch again changes nothing, and records nothing
    app.patch(
        &format!("/v1/agents/{agent}/tools/{tool}"),
        &t.key,
        json!({"loop_responses": false}),
    )
    .await
    .ok(200);
    app.patch(
        &format!("/v1/providers/{}", t.provider),
        &t.key,
        json!({"credential": "rotated-secret-value-9f2"}),
    )
    .await
    .ok(200);

    let binding = events(&app, &t.key, &format!("resource_id={agent}/{tool}")).await;
    assert_eq!(binding["total"], 1, "{binding}");
    let e = &binding["data"][0];
    assert_eq!(e["action"], "update");
    assert_eq!(e["actor"], json!({"type": "api_key", "id": actor}));
    assert_eq!(
        e["resource"],
        json!({"type": "binding", "id": format!("{agent}/{tool}")})
    );
    assert_eq!(
        e["changes"],
        json!({"loop_responses": {"before": true, "after": false}})
    );
    assert!(e["id"].as_str().is_some_and(|id| id.starts_with("aud_")));
    assert!(e["created_at"].as_str().is_some());

    let provider = events(&app, &t.key, &format!("resource_id={}", t.provider)).await;
    let actions: Vec<&str> = provider["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|e| e["action"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(actions, ["update", "create"], "newest first: {provider}");
    let rotation = &provider["data"][0]["changes"];
    assert_eq!(
        rotation,
        &json!({"credential": {"before": "[secret]", "after": "[secret]"}})
    );
    let created = &provider["data"][1]["changes"];
    assert_eq!(
        created["credential"],
        json!({"before": null, "after": "[secret]"})
    );
    assert_eq!(
        created["base_url"]["after"],
        json!("https://api.example.com/v2")
    );

    // nowhere in the whole trail: neither credential, nor the API key's secret
    let all = events(&app, &t.key, "limit=200").await.to_string();
    for secret in [
        "org-secret-value",
        "rotated-secret-value-9f2",
        t.key.as_str(),
    ] {
        assert!(
            !all.contains(secret),
            "a secret leaked into the trail: {all}"
        );
    }
}

#[tokio::test]
async fn admin_writes_name_the_admin_and_filters_and_pages_hold() {
    let app = spawn_app().await;
    let t = app.tenant("a").await;
    let actor = key_id(&app, &t.org).await;
    app.patch(
        &format!("/v1/orgs/{}/deployments/{}", t.org, t.deployment),
        ADMIN,
        json!({"cache": "shadow"}),
    )
    .await
    .ok(200);
    let by_admin = events(&app, &t.key, "actor_id=admin").await;
    let data = by_admin["data"].as_array().expect("data");
    // the org, its key and its deployment created, then the cache switch
    assert_eq!(by_admin["total"], 4, "{by_admin}");
    assert!(data
        .iter()
        .all(|e| e["actor"] == json!({"type": "admin", "id": "admin"})));
    assert_eq!(data[0]["resource"]["id"], t.deployment.as_str());
    assert_eq!(
        data[0]["changes"],
        json!({"cache": {"before": "on", "after": "shadow"}})
    );
    let key_created = data
        .iter()
        .find(|e| e["resource"]["type"] == "api_key")
        .expect("the key's creation");
    assert_eq!(key_created["resource"]["id"], actor.as_str());
    assert!(key_created["changes"].get("key").is_none(), "{key_created}");

    let by_key = events(&app, &t.key, &format!("actor_id={actor}")).await;
    assert_eq!(by_key["total"], 1, "the provider's creation: {by_key}");

    // every event once, newest first, pages of 2
    let mut seen = HashSet::new();
    let mut cursor = String::new();
    let mut pages = 0;
    let mut last_at = String::from("9999");
    loop {
        let page = events(&app, &t.key, &format!("limit=2&cursor={cursor}")).await;
        pages += 1;
        for e in page["data"].as_array().expect("data") {
            let at = e["created_at"].as_str().expect("created_at").to_string();
            assert!(at <= last_at, "not newest first");
            last_at = at;
            assert!(seen.insert(e["id"].to_string()), "repeated {e}");
        }
        if page["has_more"] != true {
            break;
        }
        cursor = page["cursor"].as_str().expect("cursor").to_string();
    }
    assert_eq!(seen.len(), 5);
    assert_eq!(pages, 3);

    app.get("/v1/audit-events?limit=0", &t.key)
        .await
        .problem(422, "validation_failed");
}

#[tokio::test]
async fn another_orgs_trail_is_out_of_reach() {
    let app = spawn_app().await;
    let a = app.tenant("a").await;
    let b = app.tenant("b").await;
    let mine = events(&app, &b.key, &format!("resource_id={}", a.provider)).await;
    assert_eq!(mine["total"], 0, "{mine}");
    let all = events(&app, &b.key, "").await;
    assert!(!all.to_string().contains(&a.provider));
    // a key without scope studio cannot read the trail
    let mint = app.create_key(&a.org, &["mint"]).await;
    app.get("/v1/audit-events", &mint)
        .await
        .problem(403, "forbidden");
}
