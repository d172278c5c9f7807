//! The size guard, stored results, retrieval tools and the step restriction (G1–G6),
//! threads per caller, and reading a call back.

use serde_json::{json, Value};

use crate::support::rig::Rig;
use crate::support::upstream_server::INBOXES;

fn tool_names(step: &Value) -> Vec<String> {
    step["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn oversized_list_is_cut_stored_and_restricts_the_next_step() {
    let (app, _up, rig, token) = Rig::start(false).await;

    let s = rig.steps(&app, &token, "th").await;
    assert_eq!(s["restricted"], false);
    let names = tool_names(&s);
    assert!(names.contains(&"list_inboxes".to_string()));
    assert!(
        !names.contains(&"queryToolResult".to_string()),
        "no looping binding, no stored result yet"
    );
    assert!(s["system"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m == "Use the CRM."));

    let r = rig
        .call(&app, &token, "th", "list_inboxes", json!({}))
        .await;
    let res = r.ok(200)["result"].clone();
    assert_eq!(res["_truncated"], true);
    let shown = res["_itemsShown"].as_u64().unwrap() as usize;
    assert_eq!(res["_itemsTotal"], INBOXES);
    assert!(shown > 0 && shown < INBOXES);
    assert_eq!(
        res["inboxes"].as_array().unwrap().len(),
        shown,
        "shape kept, array shortened"
    );
    assert!(
        r.text.len() < 25_000 * 4,
        "fits the budget: {} bytes",
        r.text.len()
    );
    let rid = res["_resultId"].as_str().unwrap().to_string();

    // G5: the next step offers only retrieval tools; other tools are refused
    let s = rig.steps(&app, &token, "th").await;
    assert_eq!(s["restricted"], true);
    assert_eq!(tool_names(&s), ["queryToolResult", "fetchToolResult"]);
    let refused = rig
        .call(&app, &token, "th", "list_contacts", json!({}))
        .await;
    refused.problem(409, "retrieval_required");
    assert!(refused.body["detail"].as_str().unwrap().contains(&rid));

    // G4: query the full stored set, filter before paging
    let q = rig
        .call(&app, &token, "th", "queryToolResult", json!({"resultId": rid, "filter": [{"field": "email", "op": "contains", "value": "task-3218@"}], "fields": ["inbox_id"]}))
        .await;
    let qr = q.ok(200)["result"].clone();
    assert_eq!(qr["total"], 1);
    assert_eq!(
        qr["items"],
        json!([{"inbox_id": "inb_003218_a1HjMJs44WShWc3CpEeI"}])
    );
    assert_eq!(qr["has_more"], false);

    // read: the restriction lifts, and retrieval tools stay offered while a result is held
    let s = rig.steps(&app, &token, "th").await;
    assert_eq!(s["restricted"], false);
    let names = tool_names(&s);
    assert!(
        names.contains(&"list_contacts".to_string())
            && names.contains(&"queryToolResult".to_string())
    );
    rig.call(&app, &token, "th", "list_contacts", json!({}))
        .await
        .ok(200);

    // fetchToolResult: character slices of the stored payload
    let f = rig
        .call(
            &app,
            &token,
            "th",
            "fetchToolResult",
            json!({"resultId": rid, "offset": 0, "length": 100}),
        )
        .await;
    let fr = f.ok(200)["result"].clone();
    assert_eq!(fr["text"].as_str().unwrap().chars().count(), 100);
    assert_eq!(fr["has_more"], true);
    assert!(fr["totalChars"].as_u64().unwrap() > 700_000);

    // G6 and thread scoping: another user with the same thread id has another thread
    let other = rig.token(&app, "u2", json!({})).await;
    let s2 = rig.steps(&app, &other, "th").await;
    assert_eq!(s2["restricted"], false);
    rig.call(
        &app,
        &other,
        "th",
        "queryToolResult",
        json!({"resultId": rid}),
    )
    .await
    .problem(404, "result_not_found");
    rig.call(
        &app,
        &token,
        "th",
        "queryToolResult",
        json!({"resultId": "res_doesnotexist"}),
    )
    .await
    .problem(404, "result_not_found");
    // another thread of the same user does not see it either
    rig.call(
        &app,
        &token,
        "elsewhere",
        "queryToolResult",
        json!({"resultId": rid}),
    )
    .await
    .problem(404, "result_not_found");
}

#[tokio::test]
async fn looping_agents_get_guidance_and_reserved_arguments() {
    let (app, _up, rig, token) = Rig::start(true).await;
    let s = rig.steps(&app, &token, "th").await;
    assert_eq!(
        s["system"].as_array().unwrap().len(),
        2,
        "guidance + instructions"
    );
    let tools = s["tools"].as_array().unwrap();
    let find = |n: &str| tools.iter().find(|t| t["name"] == n).unwrap().clone();
    let lc = find("list_contacts");
    let props = lc["input_schema"]["properties"].as_object().unwrap();
    for k in ["_fields", "_all_pages", "_for_each", "_refresh"] {
        assert!(props.contains_key(k), "{k} missing");
    }
    assert!(
        !props.contains_key("_filter"),
        "_filter is honoured but not advertised"
    );
    assert!(lc["description"]
        .as_str()
        .unwrap()
        .to_lowercase()
        .contains("paginated"));
    let inbox = find("list_inboxes");
    assert!(!inbox["input_schema"]["properties"]
        .as_object()
        .unwrap()
        .contains_key("_all_pages"));
    assert!(tools.iter().any(|t| t["name"] == "queryToolResult"));

    // a token limited to this agent cannot use another; unknown agents are 404
    app.post("/v1/agents/agt_nope/threads/x/steps", &token, json!({}))
        .await
        .problem(403, "forbidden");
    app.post("/v1/agents/agt_nope/threads/x/steps", &rig.t.key, json!({}))
        .await
        .problem(404, "not_found");
    let r = rig
        .call(&app, &token, "th", "no_such_tool", json!({}))
        .await;
    r.problem(400, "invalid_arguments");
    assert!(r.body["detail"].as_str().unwrap().contains("list_contacts"));
}

#[tokio::test]
async fn a_call_can_be_read_back_by_its_caller_only() {
    let (app, _up, rig, token) = Rig::start(true).await;
    let r = rig
        .call(
            &app,
            &token,
            "th",
            "list_orders",
            json!({"_all_pages": true}),
        )
        .await;
    let id = r.ok(200)["id"].as_str().unwrap().to_string();
    let back = app.get(&format!("/v1/tool-calls/{id}"), &token).await;
    let rec = back.ok(200);
    assert_eq!(rec["status"], "succeeded");
    assert_eq!(rec["result"], r.body["result"]);
    let other = rig.token(&app, "u2", json!({})).await;
    app.get(&format!("/v1/tool-calls/{id}"), &other)
        .await
        .problem(404, "not_found");
    let failed = rig
        .call(
            &app,
            &token,
            "th",
            "queryToolResult",
            json!({"resultId": "res_x"}),
        )
        .await;
    let fid = failed.problem(404, "result_not_found");
    let _ = fid;
}
