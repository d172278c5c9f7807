//! `POST /v1/providers/{id}/openapi` on real-world-shaped documents, and all-or-nothing
//! on broken ones.

use crate::support::helpers::spawn_app;

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!(
        "{}/tests/fixtures/openapi/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("fixture")
}

#[tokio::test]
async fn imports_github_stripe_and_graph_shaped_specs() {
    let app = spawn_app().await;
    let t = app.tenant("a").await;
    let path = format!("/v1/providers/{}/openapi", t.provider);

    let gh = app
        .post_raw(&path, &t.key, "application/yaml", fixture("github.yaml"))
        .await;
    let tools = gh.ok(201)["data"].as_array().unwrap().clone();
    assert_eq!(tools.len(), 10);
    let list = tools
        .iter()
        .find(|t| t["name"] == "issues_list-for-repo")
        .expect("issues list");
    assert_eq!(list["method"], "GET");
    assert_eq!(list["path"], "/repos/{owner}/{repo}/issues");
    assert_eq!(list["provider_id"], t.provider.as_str());
    let props = list["input_schema"]["properties"].as_object().unwrap();
    assert!(
        props.contains_key("owner") && props.contains_key("per_page") && props.contains_key("page")
    );
    assert!(!props
        .keys()
        .any(|k| k.eq_ignore_ascii_case("authorization")));
    let create = tools.iter().find(|t| t["name"] == "issues_create").unwrap();
    assert_eq!(
        create["input_schema"]["properties"]["body"]["x-loopgate-in"],
        "body"
    );

    let st = app
        .post_raw(&path, &t.key, "application/json", fixture("stripe.json"))
        .await;
    let tools = st.ok(201)["data"].as_array().unwrap().clone();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"GetCustomers") && names.contains(&"PostCustomers"));
    let gc = tools.iter().find(|t| t["name"] == "GetCustomers").unwrap();
    assert!(gc["input_schema"]["properties"]["starting_after"].is_object());

    let gr = app
        .post_raw(&path, &t.key, "application/yaml", fixture("graph.yaml"))
        .await;
    let tools = gr.ok(201)["data"].as_array().unwrap().clone();
    let lu = tools
        .iter()
        .find(|t| t["name"] == "users_user_ListUser")
        .unwrap();
    assert_eq!(
        lu["input_schema"]["properties"]["top"]["x-loopgate-name"],
        "$top"
    );

    // all of them are stored and listed
    let listed = app
        .get(
            &format!("/v1/tools?provider_id={}&limit=200", t.provider),
            &t.key,
        )
        .await;
    assert_eq!(listed.ok(200)["total"], 10 + names.len() + tools.len());

    // importing the same document again collides on names: nothing half-imported
    let again = app
        .post_raw(&path, &t.key, "application/yaml", fixture("github.yaml"))
        .await;
    again.problem(409, "conflict");
    let after = app
        .get(&format!("/v1/tools?provider_id={}", t.provider), &t.key)
        .await;
    assert_eq!(after.ok(200)["total"], listed.body["total"]);
}

#[tokio::test]
async fn broken_documents_are_refused_with_a_pointer_and_nothing_imported() {
    let app = spawn_app().await;
    let t = app.tenant("a").await;
    let path = format!("/v1/providers/{}/openapi", t.provider);
    let cases = [
        ("broken_ref.yaml", "does not resolve"),
        ("remote_ref.json", "$ref"),
        ("invalid.yaml", ""),
        ("swagger2.json", ""),
    ];
    for (name, needle) in cases {
        let r = app
            .post_raw(&path, &t.key, "application/yaml", fixture(name))
            .await;
        r.problem(422, "validation_failed");
        let detail = r.body["detail"].as_str().unwrap();
        assert!(detail.contains(needle), "{name}: {detail}");
    }
    let broken = app
        .post_raw(
            &path,
            &t.key,
            "application/yaml",
            fixture("broken_ref.yaml"),
        )
        .await;
    assert!(
        broken.body["detail"].as_str().unwrap().contains("paths."),
        "points at the place"
    );
    app.post_raw(&path, &t.key, "application/yaml", Vec::new())
        .await
        .problem(400, "validation_failed");
    let listed = app.get("/v1/tools", &t.key).await;
    assert_eq!(listed.ok(200)["total"], 0);
}
