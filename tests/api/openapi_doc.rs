//! The served OpenAPI document matches the committed one, describes every
//! operation, and `/docs` works without the internet.

use reqwest::Method;
use serde_json::Value;

use crate::helpers::spawn_app;

#[tokio::test]
async fn committed_openapi_matches_the_code() {
    let served = loopgate::api::doc::openapi_json();
    let path = format!("{}/openapi/openapi.json", env!("CARGO_MANIFEST_DIR"));
    if std::env::var("LOOPGATE_BLESS").is_ok() {
        std::fs::write(&path, format!("{served}\n")).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        committed.trim_end(),
        served.trim_end(),
        "openapi/openapi.json drifted: regenerate with `cargo run -- openapi > openapi/openapi.json`"
    );
}

#[tokio::test]
async fn served_document_and_docs_page() {
    let app = spawn_app().await;
    let r = app.call(Method::GET, "/openapi.json", None, None).await;
    let doc: Value = r.ok(200).clone();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
    let paths = doc["paths"].as_object().unwrap();
    for p in [
        "/v1/orgs",
        "/v1/providers/{provider_id}/openapi",
        "/v1/agents/{agent_id}/tools/{tool_id}",
        "/v1/runtime-tokens",
    ] {
        assert!(paths.contains_key(p), "{p} missing");
    }
    // every list operation explains the protocol to a model reading it
    for (p, item) in paths {
        if let Some(get) = item.get("get") {
            if get["parameters"]
                .as_array()
                .is_some_and(|ps| ps.iter().any(|x| x["name"] == "cursor"))
            {
                let text = format!(
                    "{} {}",
                    get["summary"].as_str().unwrap_or(""),
                    get["description"].as_str().unwrap_or("")
                );
                assert!(
                    text.contains("has_more") && text.contains("cursor") && text.contains("total"),
                    "{p}: {text}"
                );
            }
        }
    }
    let docs = app
        .client
        .get(format!("{}/docs/", app.address))
        .send()
        .await
        .unwrap();
    assert_eq!(docs.status().as_u16(), 200);
    let html = docs.text().await.unwrap();
    assert!(html.contains("swagger") || html.contains("Swagger"));
    assert!(
        !html.contains("https://cdn") && !html.contains("unpkg.com"),
        "docs must work offline"
    );
}
