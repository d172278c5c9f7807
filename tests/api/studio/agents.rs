//! Tools, agents with `agentTools`, binding PATCH, deletes and their effects.

use serde_json::json;

use crate::support::helpers::spawn_app;

#[tokio::test]
async fn tool_crud_and_validation() {
    let app = spawn_app().await;
    let t = app.tenant("a").await;
    let tool = app.create_tool(&t.key, &t.provider, "list_contacts").await;
    let got = app.get(&format!("/v1/tools/{tool}"), &t.key).await;
    let body = got.ok(200);
    for field in [
        "id",
        "provider_id",
        "name",
        "description",
        "method",
        "path",
        "input_schema",
        "kind",
        "toolkit",
    ] {
        assert!(body.get(field).is_some(), "missing {field}");
    }
    assert_eq!(body["kind"], "api");
    let p = app
        .patch(
            &format!("/v1/tools/{tool}"),
            &t.key,
            json!({"description": "All contacts", "method": "post"}),
        )
        .await;
    assert_eq!(p.ok(200)["method"], "POST");
    assert_eq!(p.body["description"], "All contacts");

    let base = json!({"provider_id": t.provider, "name": "x", "method": "GET", "path": "/x", "input_schema": {"type": "object"}});
    for (field, value) in [
        ("name", json!("has space")),
        ("method", json!("FETCH")),
        ("path", json!("https://evil.example.com/x")),
        ("input_schema", json!({"type": "array"})),
        ("path", json!("/items/{id}")),
        ("provider_id", json!("prv_missing")),
    ] {
        let mut b = base.clone();
        b[field] = value;
        let r = app.post("/v1/tools", &t.key, b).await;
        r.problem(422, "validation_failed");
    }
    app.post("/v1/tools", &t.key, json!({"provider_id": t.provider, "name": "list_contacts", "method": "GET", "path": "/c", "input_schema": {}}))
        .await
        .problem(409, "conflict");
}

#[tokio::test]
async fn agents_with_bindings() {
    let app = spawn_app().await;
    let t = app.tenant("a").await;
    let tool = app.create_tool(&t.key, &t.provider, "list_contacts").await;
    let other_provider = app
        .post(
            "/v1/providers",
            &t.key,
            json!({"name": "p2", "base_url": "https://p2.example.com", "auth": {"type": "none"}}),
        )
        .await
        .ok(201)["id"]
        .as_str()
        .unwrap()
        .to_string();

    // provider_id must be the tool's own provider
    let r = app
        .post(
            "/v1/agents",
            &t.key,
            json!({"name": "a", "deployment_id": t.deployment, "agentTools": [{"tool_id": tool, "provider_id": other_provider}]}),
        )
        .await;
    r.problem(422, "validation_failed");
    assert!(r.body["detail"].as_str().unwrap().contains(&t.provider));
    app.post(
        "/v1/agents",
        &t.key,
        json!({"name": "a", "deployment_id": "dep_nope", "agentTools": []}),
    )
    .await
    .problem(422, "validation_failed");

    let r = app
        .post(
            "/v1/agents",
            &t.key,
            json!({"name": "Support", "deployment_id": t.deployment, "instructions": "Be brief.",
                   "agentTools": [{"tool_id": tool, "provider_id": t.provider, "loop_responses": true, "dataset_ttl_hours": 6}]}),
        )
        .await;
    let agent = r.ok(201).clone();
    let id = agent["id"].as_str().unwrap();
    assert!(id.starts_with("agt_"));
    assert_eq!(agent["instructions"], "Be brief.");
    assert_eq!(
        agent["agentTools"],
        json!([{"tool_id": tool, "provider_id": t.provider, "loop_responses": true, "dataset_ttl_hours": 6, "discovery": null}])
    );

    // the Studio's toggle
    let b = app
        .patch(
            &format!("/v1/agents/{id}/tools/{tool}"),
            &t.key,
            json!({"loop_responses": false, "dataset_ttl_hours": null}),
        )
        .await;
    assert_eq!(b.ok(200)["loop_responses"], false);
    assert!(b.body["dataset_ttl_hours"].is_null());
    app.patch(
        &format!("/v1/agents/{id}/tools/{tool}"),
        &t.key,
        json!({"dataset_ttl_hours": 0}),
    )
    .await
    .problem(422, "validation_failed");
    let got = app.get(&format!("/v1/agents/{id}"), &t.key).await;
    assert_eq!(got.ok(200)["agentTools"][0]["loop_responses"], false);

    // binding twice is a conflict; unbinding, rebinding
    app.post(
        &format!("/v1/agents/{id}/tools"),
        &t.key,
        json!({"tool_id": tool, "provider_id": t.provider}),
    )
    .await
    .problem(409, "conflict");
    app.delete(&format!("/v1/agents/{id}/tools/{tool}"), &t.key)
        .await
        .ok(204);
    app.post(
        &format!("/v1/agents/{id}/tools"),
        &t.key,
        json!({"tool_id": tool, "provider_id": t.provider, "loop_responses": true}),
    )
    .await
    .ok(201);

    // PATCH the agent: instructions, and agentTools replaced wholesale
    let p = app
        .patch(
            &format!("/v1/agents/{id}"),
            &t.key,
            json!({"instructions": "Be thorough.", "agentTools": []}),
        )
        .await;
    assert_eq!(p.ok(200)["instructions"], "Be thorough.");
    assert_eq!(p.body["agentTools"], json!([]));
    assert_eq!(p.body["name"], "Support");

    // a deployment in use cannot be deleted; deleting the agent frees it
    app.delete(
        &format!("/v1/orgs/{}/deployments/{}", t.org, t.deployment),
        crate::support::helpers::ADMIN,
    )
    .await
    .problem(409, "conflict");
    app.delete(&format!("/v1/agents/{id}"), &t.key)
        .await
        .ok(204);
    app.get(&format!("/v1/agents/{id}"), &t.key)
        .await
        .problem(404, "not_found");
}

#[tokio::test]
async fn deleting_a_tool_removes_its_bindings_and_workflows_check_steps() {
    let app = spawn_app().await;
    let t = app.tenant("a").await;
    let tool = app.create_tool(&t.key, &t.provider, "list_contacts").await;
    let agent = app
        .post("/v1/agents", &t.key, json!({"name": "a", "deployment_id": t.deployment, "agentTools": [{"tool_id": tool, "provider_id": t.provider}]}))
        .await
        .ok(201)["id"]
        .as_str()
        .unwrap()
        .to_string();
    let steps = json!([{"id": "fetch", "type": "tool", "tool": "list_contacts", "input": {}, "loop": {"all_pages": true}}]);
    let wf = app
        .post(
            "/v1/workflows",
            &t.key,
            json!({"name": "nightly", "agent_id": agent, "steps": steps}),
        )
        .await;
    let wf_id = wf.ok(201)["id"].as_str().unwrap().to_string();
    assert_eq!(wf.body["steps"], steps);
    app.post("/v1/workflows", &t.key, json!({"name": "bad", "agent_id": agent, "steps": [{"id": "x", "type": "tool", "tool": "nope"}]}))
        .await
        .problem(422, "validation_failed");
    app.patch(
        &format!("/v1/workflows/{wf_id}"),
        &t.key,
        json!({"name": "hourly"}),
    )
    .await
    .ok(200);
    assert_eq!(app.get("/v1/workflows", &t.key).await.ok(200)["total"], 1);

    app.delete(&format!("/v1/tools/{tool}"), &t.key)
        .await
        .ok(204);
    let got = app.get(&format!("/v1/agents/{agent}"), &t.key).await;
    assert_eq!(got.ok(200)["agentTools"], json!([]));
    app.delete(&format!("/v1/workflows/{wf_id}"), &t.key)
        .await
        .ok(204);
}

#[tokio::test]
async fn workflow_loop_and_if_shapes_are_checked_when_written() {
    let app = spawn_app().await;
    let t = app.tenant("a").await;
    let tool = app.create_tool(&t.key, &t.provider, "list_contacts").await;
    let agent = app
        .post("/v1/agents", &t.key, json!({"name": "a", "deployment_id": t.deployment, "agentTools": [{"tool_id": tool, "provider_id": t.provider}]}))
        .await
        .ok(201)["id"]
        .as_str()
        .unwrap()
        .to_string();
    let bad_steps = [
        json!([{"id": "s", "type": "tool", "tool": "list_contacts", "loop": {"all_pagez": true}}]),
        json!([{"id": "s", "type": "tool", "tool": "list_contacts", "loop": {"for_each": {"values": [1]}}}]),
        json!([{"id": "s", "type": "tool", "tool": "list_contacts", "loop": {"cache": {"ttl_minutes": 0}}}]),
        json!([{"id": "s", "type": "tool", "tool": "list_contacts", "if": {"ref": "$.input.x", "op": "like"}}]),
    ];
    for steps in bad_steps {
        let r = app
            .post(
                "/v1/workflows",
                &t.key,
                json!({"name": "w", "agent_id": agent, "steps": steps}),
            )
            .await;
        r.problem(422, "validation_failed");
        assert!(r.body["detail"].as_str().unwrap().contains("steps[0]"));
    }
    let good = json!([{"id": "s", "type": "tool", "tool": "list_contacts",
        "loop": {"all_pages": true, "cache": {"ttl_minutes": 5}}, "if": {"ref": "$.input.go", "op": "eq", "value": true}}]);
    app.post(
        "/v1/workflows",
        &t.key,
        json!({"name": "w", "agent_id": agent, "steps": good}),
    )
    .await
    .ok(201);
}
