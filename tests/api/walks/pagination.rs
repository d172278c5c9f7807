//! The list protocol: newest first, `total` on the first page only, and a keyset
//! cursor that never skips or repeats a row while rows are being inserted.

use std::collections::HashSet;

use serde_json::json;

use crate::support::helpers::{spawn_app, ADMIN};

#[tokio::test]
async fn walk_while_inserting_never_skips_or_repeats() {
    let app = spawn_app().await;
    let t = app.tenant("a").await;
    // rows created in one transaction share a timestamp: the id breaks the tie
    let spec = json!({
        "openapi": "3.0.3", "info": {"title": "bulk", "version": "1"},
        "paths": (0..40).map(|i| (format!("/r{i}"), json!({"get": {"operationId": format!("op_{i:02}"), "responses": {"200": {"description": "ok"}}}}))).collect::<serde_json::Map<_, _>>()
    });
    let r = app
        .post_raw(
            &format!("/v1/providers/{}/openapi", t.provider),
            &t.key,
            "application/json",
            serde_json::to_vec(&spec).unwrap(),
        )
        .await;
    assert_eq!(r.ok(201)["data"].as_array().unwrap().len(), 40);
    let mut before: Vec<String> = Vec::new();
    for i in 0..25 {
        before.push(
            app.create_tool(&t.key, &t.provider, &format!("t{i:02}"))
                .await,
        );
    }

    let mut seen: Vec<String> = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let path = match &cursor {
            None => "/v1/tools?limit=7".to_string(),
            Some(c) => format!("/v1/tools?limit=7&cursor={c}"),
        };
        let page = app.get(&path, &t.key).await;
        let body = page.ok(200).clone();
        if pages == 0 {
            assert_eq!(body["total"], 65);
        } else {
            assert!(body.get("total").is_none(), "total only on the first page");
        }
        pages += 1;
        for row in body["data"].as_array().unwrap() {
            seen.push(row["id"].as_str().unwrap().to_string());
        }
        // concurrent inserts between pages (they are newer, so they sort before the walk)
        app.create_tool(&t.key, &t.provider, &format!("late{pages:02}"))
            .await;
        if !body["has_more"].as_bool().unwrap() {
            assert!(body["cursor"].is_null());
            break;
        }
        cursor = Some(body["cursor"].as_str().unwrap().to_string());
        assert!(pages < 50, "walk does not end");
    }
    let unique: HashSet<&String> = seen.iter().collect();
    assert_eq!(unique.len(), seen.len(), "a row was repeated");
    assert_eq!(seen.len(), 65, "rows present at the start were skipped");
    for id in &before {
        assert!(unique.contains(id));
    }
    // newest first: the first row is the last tool created before the walk
    assert_eq!(seen[0], before[24]);
}

#[tokio::test]
async fn limits_and_bad_cursors() {
    let app = spawn_app().await;
    for i in 0..3 {
        app.create_org(&format!("o{i}")).await;
    }
    let r = app.get("/v1/orgs?limit=2", ADMIN).await;
    assert_eq!(r.ok(200)["data"].as_array().unwrap().len(), 2);
    assert_eq!(r.body["has_more"], true);
    assert_eq!(r.body["total"], 3);
    let c = r.body["cursor"].as_str().unwrap();
    let r2 = app
        .get(&format!("/v1/orgs?limit=2&cursor={c}"), ADMIN)
        .await;
    assert_eq!(r2.ok(200)["data"].as_array().unwrap().len(), 1);
    assert_eq!(r2.body["has_more"], false);
    assert!(r2.body["cursor"].is_null());
    app.get("/v1/orgs?limit=0", ADMIN)
        .await
        .problem(422, "validation_failed");
    app.get("/v1/orgs?limit=201", ADMIN)
        .await
        .problem(422, "validation_failed");
    app.get("/v1/orgs?cursor=bm9wZQ", ADMIN)
        .await
        .problem(422, "validation_failed");
}
