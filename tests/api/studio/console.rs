//! The Studio console's server side: `/studio` and its files with their security
//! headers, and the two read-only endpoints it shows (how a tool pages, P13; the
//! placement preview, D2), tenant-isolated.

use serde_json::json;

use crate::support::helpers::spawn_app;

#[tokio::test]
async fn the_console_is_served_with_a_strict_csp_and_unknown_files_are_404() {
    let app = spawn_app().await;
    for path in [
        "/studio",
        "/studio/",
        "/studio/app/main.js",
        "/studio/vendor/preact.module.js",
        "/studio/style.css",
    ] {
        let r = app
            .client
            .get(format!("{}{path}", app.address))
            .send()
            .await
            .expect("get");
        assert_eq!(r.status(), 200, "{path}");
        let h = |n: &str| {
            r.headers()
                .get(n)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string()
        };
        let csp = h("content-security-policy");
        assert!(
            csp.contains("default-src 'none'") && csp.contains("frame-ancestors 'none'"),
            "{path}: {csp}"
        );
        assert!(!csp.contains("unsafe"), "{path}: {csp}");
        assert_eq!(h("x-frame-options"), "DENY");
        assert_eq!(h("x-content-type-options"), "nosniff");
        let ct = h("content-type");
        let body = r.text().await.expect("body");
        if path.ends_with(".js") {
            assert!(ct.starts_with("text/javascript"), "{path}: {ct}");
        } else if path.ends_with(".css") {
            assert!(ct.starts_with("text/css"), "{path}: {ct}");
        } else {
            assert!(ct.starts_with("text/html"), "{path}: {ct}");
            assert!(body.contains("/studio/app/main.js"));
            // offline: nothing is loaded from another origin
            assert!(
                !body.contains("http://") && !body.contains("https://"),
                "{body}"
            );
        }
    }
    let missing = app
        .client
        .get(format!("{}/studio/app/nope.js", app.address))
        .send()
        .await
        .expect("get");
    let missing = crate::support::helpers::Res::read(missing).await;
    missing.problem(404, "not_found");
    // GET only
    let post = app
        .client
        .post(format!("{}/studio", app.address))
        .send()
        .await
        .expect("post");
    assert_ne!(post.status(), 200);
}

#[tokio::test]
async fn p13_a_tools_pagination_is_summarised_and_follows_its_hint() {
    let app = spawn_app().await;
    let t = app.tenant("a").await;
    let tool = app.create_tool(&t.key, &t.provider, "list_contacts").await;
    let r = app
        .get(&format!("/v1/tools/{tool}/pagination"), &t.key)
        .await;
    let p = r.ok(200);
    assert_eq!(p["tool_id"], tool.as_str());
    assert_eq!(p["style"], "page");
    assert_eq!(p["source"], "detected");
    assert_eq!(p["confidence"], "high");
    assert_eq!(
        p["parameters"],
        json!({"size": "per_page", "page": "page", "offset": null, "cursor": null})
    );
    assert_eq!(p["hint"], json!(null));

    // the hint the Studio writes replaces detection
    let schema = json!({"type": "object", "properties": {"page": {"type": "integer"}, "per_page": {"type": "integer"}},
        "x-loopgate-pagination": {"disabled": true}});
    app.patch(
        &format!("/v1/tools/{tool}"),
        &t.key,
        json!({"input_schema": schema}),
    )
    .await
    .ok(200);
    let p = app
        .get(&format!("/v1/tools/{tool}/pagination"), &t.key)
        .await;
    let p = p.ok(200);
    assert_eq!(
        (
            p["style"].as_str(),
            p["source"].as_str(),
            p["confidence"].as_str()
        ),
        (Some("none"), Some("hint"), Some("declared"))
    );
    assert_eq!(p["hint"], json!({"disabled": true}));

    // another org's tool is a 404; a studio scope is needed
    let other = app.tenant("b").await;
    app.get(&format!("/v1/tools/{tool}/pagination"), &other.key)
        .await
        .problem(404, "not_found");
    let mint_only = app.create_key(&t.org, &["mint"]).await;
    app.get(&format!("/v1/tools/{tool}/pagination"), &mint_only)
        .await
        .problem(403, "forbidden");
}

#[tokio::test]
async fn d2_the_placement_preview_is_the_runtimes_placement() {
    let app = spawn_app().await;
    let t = app.tenant("a").await;
    let own = app.create_tool(&t.key, &t.provider, "own_list").await;
    let app_provider = app
        .post("/v1/providers", &t.key, json!({"name": "Chat", "kind": "app", "toolkit": "chat",
            "base_url": "https://chat.example.com", "auth": {"type": "bearer"}, "connection": {"type": "api_key"}}))
        .await
        .ok(201)["id"].as_str().expect("id").to_string();
    let mut kit = Vec::new();
    for name in ["chat_send", "chat_read", "chat_list"] {
        kit.push(app.create_tool(&t.key, &app_provider, name).await);
    }
    let bind = |id: &str, p: &str| json!({"tool_id": id, "provider_id": p});
    let mut bindings = vec![bind(&own, &t.provider)];
    bindings.extend(kit.iter().map(|k| bind(k, &app_provider)));
    // budget 3: the own tool takes 1, the 3-tool toolkit does not fit the 2 left
    let agent = app
        .post("/v1/agents", &t.key, json!({"name": "a", "deployment_id": t.deployment, "direct_tool_budget": 3, "agentTools": bindings}))
        .await
        .ok(201)["id"].as_str().expect("id").to_string();
    let names = |v: &serde_json::Value, k: &str| -> Vec<String> {
        v[k].as_array()
            .expect(k)
            .iter()
            .map(|t| t["name"].as_str().expect("name").to_string())
            .collect()
    };
    let p = app
        .get(&format!("/v1/agents/{agent}/placement"), &t.key)
        .await;
    let p = p.ok(200).clone();
    assert_eq!(p["budget"], 3);
    assert_eq!(names(&p, "direct"), ["own_list"]);
    assert_eq!(names(&p, "pooled"), ["chat_send", "chat_read", "chat_list"]);
    assert_eq!(p["pooled"][0]["toolkit"], "chat");

    // what the runtime offers agrees: the pooled tools wait behind search_tools
    let steps = app
        .post(
            &format!("/v1/agents/{agent}/threads/t1/steps"),
            &t.key,
            json!({}),
        )
        .await;
    let offered: Vec<String> = steps.ok(200)["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().expect("name").to_string())
        .collect();
    assert!(
        offered.contains(&"own_list".to_string()) && offered.contains(&"search_tools".to_string()),
        "{offered:?}"
    );
    assert!(!offered.contains(&"chat_send".to_string()), "{offered:?}");

    // a binding change moves the preview: budget 4 fits the toolkit whole
    app.patch(
        &format!("/v1/agents/{agent}"),
        &t.key,
        json!({"direct_tool_budget": 4}),
    )
    .await
    .ok(200);
    let p = app
        .get(&format!("/v1/agents/{agent}/placement"), &t.key)
        .await;
    assert_eq!(p.ok(200)["pooled"], json!([]));
    assert_eq!(names(&p.body, "direct").len(), 4);
    // discovery: true always pools, even with room
    app.patch(
        &format!("/v1/agents/{agent}/tools/{own}"),
        &t.key,
        json!({"discovery": true}),
    )
    .await
    .ok(200);
    let p = app
        .get(&format!("/v1/agents/{agent}/placement"), &t.key)
        .await;
    assert_eq!(names(p.ok(200), "pooled"), ["own_list"]);
    assert!(p.body["pooled"][0]["reason"]
        .as_str()
        .expect("reason")
        .contains("discovery: true"));

    // an agent with no bindings places nothing; another org's agent is a 404
    let empty = app
        .post(
            "/v1/agents",
            &t.key,
            json!({"name": "e", "deployment_id": t.deployment, "agentTools": []}),
        )
        .await
        .ok(201)["id"]
        .as_str()
        .expect("id")
        .to_string();
    let p = app
        .get(&format!("/v1/agents/{empty}/placement"), &t.key)
        .await;
    assert_eq!(
        (
            p.ok(200)["direct"].clone(),
            p.body["pooled"].clone(),
            p.body["budget"].clone()
        ),
        (json!([]), json!([]), json!(15))
    );
    let other = app.tenant("b").await;
    app.get(&format!("/v1/agents/{agent}/placement"), &other.key)
        .await
        .problem(404, "not_found");
}
