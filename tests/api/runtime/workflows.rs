//! Workflow runs (W1–W5) against the in-test upstream: refs, `if`, loops,
//! W2 outputs, failures, the W4 cache rule, tenancy and the streamed form.

use serde_json::{json, Value};

use crate::support::helpers::{spawn_app, TestApp};
use crate::support::rig::Rig;
use crate::support::upstream_server::{self, Upstream};

async fn workflow(app: &TestApp, rig: &Rig, steps: Value) -> String {
    app.post(
        "/v1/workflows",
        &rig.t.key,
        json!({"name": "wf", "agent_id": rig.agent, "steps": steps}),
    )
    .await
    .ok(201)["id"]
        .as_str()
        .unwrap()
        .to_string()
}

async fn run(app: &TestApp, token: &str, wf: &str, body: Value) -> Value {
    app.post(&format!("/v1/workflows/{wf}/runs"), token, body)
        .await
        .ok(201)
        .clone()
}

fn fetch_step() -> Value {
    json!({"id": "fetch", "type": "tool", "tool": "list_contacts", "input": {},
           "loop": {"all_pages": true, "fields": ["id"],
                    "filter": [{"field": "company.size", "op": "lt", "value": 5}]}})
}

fn fan_out_requests(up: &Upstream) -> u32 {
    (0..5).map(|i| up.count(&format!("/contacts/{i}"))).sum()
}

#[tokio::test]
async fn two_steps_walk_then_fan_out_and_the_run_is_stored() {
    let app = spawn_app().await;
    let up = upstream_server::start().await;
    // bindings do not loop: a step that declares `loop` loops anyway
    let rig = Rig::new(&app, &up, false).await;
    let token = rig.token(&app, "u1", json!({})).await;
    let wf = workflow(
        &app,
        &rig,
        json!([fetch_step(),
            {"id": "details", "type": "tool", "tool": "get_contact", "input": {},
             "if": {"ref": "$.steps.fetch._loop.complete", "op": "eq", "value": true},
             "loop": {"for_each": {"key": "id", "values": {"ref": "$.steps.fetch.contacts[*].id"}},
                      "fields": ["id", "name"]}}]),
    )
    .await;
    let r = run(&app, &token, &wf, json!({})).await;
    assert_eq!(r["status"], "succeeded", "{r}");
    assert_eq!(r["workflow_id"], wf.as_str());
    assert!(r["id"].as_str().unwrap().starts_with("run_"));
    assert!(r["started_at"].is_string() && r["finished_at"].is_string());
    let fetch = &r["steps"]["fetch"];
    // the tool's own shape, the filtered, projected rows in place
    assert_eq!(
        fetch["contacts"],
        json!([{"id": 0}, {"id": 1}, {"id": 2}, {"id": 3}, {"id": 4}])
    );
    assert_eq!(fetch["_loop"]["complete"], true);
    assert_eq!(fetch["_loop"]["requests"], 3);
    assert_eq!(fetch["_loop"]["itemCount"], 5);
    assert_eq!(fetch["_loop"]["stoppedBy"], "end");
    assert!(fetch["_loop"]["note"].is_string());
    assert!(fetch.get("_resultId").is_none());
    let details = &r["steps"]["details"];
    assert_eq!(details["_loop"]["itemCount"], 5, "{details}");
    assert_eq!(details["_loop"]["requests"], 5);
    assert_eq!(details["_loop"]["complete"], true);
    assert_eq!(
        details["items"][3],
        json!({"id": 3, "name": "Contact 3"}),
        "{details}"
    );
    assert_eq!(fan_out_requests(&up), 5);

    let id = r["id"].as_str().unwrap();
    let back = app
        .get(&format!("/v1/workflows/{wf}/runs/{id}"), &token)
        .await;
    assert_eq!(back.ok(200)["steps"], r["steps"]);
    assert_eq!(back.body["status"], "succeeded");
    let list = app.get(&format!("/v1/workflows/{wf}/runs"), &token).await;
    let list = list.ok(200);
    assert_eq!(list["total"], 1);
    assert_eq!(list["has_more"], false);
    assert_eq!(list["data"][0]["id"], id);
    // runs are the caller's: another user of the org does not see them
    let other = rig.token(&app, "u2", json!({})).await;
    let list = app.get(&format!("/v1/workflows/{wf}/runs"), &other).await;
    assert_eq!(list.ok(200)["total"], 0);
    app.get(&format!("/v1/workflows/{wf}/runs/{id}"), &other)
        .await
        .problem(404, "not_found");
}

#[tokio::test]
async fn skipped_and_failing_steps() {
    let app = spawn_app().await;
    let up = upstream_server::start().await;
    let rig = Rig::new(&app, &up, true).await;
    let wf = workflow(
        &app,
        &rig,
        json!([
            {"id": "maybe", "type": "tool", "tool": "list_inboxes", "input": {},
             "if": {"ref": "$.input.go", "op": "eq", "value": true}},
            {"id": "one", "type": "tool", "tool": "get_contact", "input": {"id": {"ref": "$.input.id"}}},
            {"id": "missing", "type": "tool", "tool": "get_contact", "input": {"id": 9999}},
            {"id": "never", "type": "tool", "tool": "list_inboxes", "input": {}}
        ]),
    )
    .await;
    let r = run(
        &app,
        &rig.t.key,
        &wf,
        json!({"input": {"go": false, "id": 7}}),
    )
    .await;
    assert_eq!(r["status"], "failed", "{r}");
    assert_eq!(r["steps"]["maybe"]["_skipped"], true);
    assert!(r["steps"]["maybe"]["reason"].is_string());
    assert_eq!(up.count("/inboxes"), 0);
    assert_eq!(r["steps"]["one"]["name"], "Contact 7");
    // W2: every step carries `_loop`, a plain one too (one record, nothing left)
    let one = &r["steps"]["one"]["_loop"];
    assert_eq!(
        (&one["complete"], &one["requests"], &one["stoppedBy"]),
        (&json!(true), &json!(1), &json!("end")),
        "{one}"
    );
    let err = &r["steps"]["missing"]["_error"];
    assert_eq!(err["code"], "upstream_failed", "{err}");
    assert!(err["detail"].as_str().unwrap().contains("missing"));
    assert!(r["steps"].get("never").is_none());
    let id = r["id"].as_str().unwrap();
    let back = app
        .get(&format!("/v1/workflows/{wf}/runs/{id}"), &rig.t.key)
        .await;
    assert_eq!(back.ok(200)["status"], "failed");
}

#[tokio::test]
async fn an_argument_ref_with_several_matches_is_a_step_error() {
    let app = spawn_app().await;
    let up = upstream_server::start().await;
    let rig = Rig::new(&app, &up, false).await;
    let wf = workflow(
        &app,
        &rig,
        json!([fetch_step(),
            {"id": "pick", "type": "tool", "tool": "get_contact",
             "input": {"id": {"ref": "$.steps.fetch.contacts[*].id"}}}]),
    )
    .await;
    let r = run(&app, &rig.t.key, &wf, json!({})).await;
    assert_eq!(r["status"], "failed");
    let err = &r["steps"]["pick"]["_error"];
    assert_eq!(err["code"], "invalid_reference");
    let detail = err["detail"].as_str().unwrap();
    assert!(
        detail.contains("step 'pick'") && detail.contains("$.steps.fetch.contacts[*].id"),
        "{detail}"
    );
    assert_eq!(fan_out_requests(&up), 0);
}

#[tokio::test]
async fn cache_is_off_unless_the_step_sets_a_ttl() {
    let app = spawn_app().await;
    let up = upstream_server::start().await;
    let rig = Rig::new(&app, &up, true).await;
    let walk = |cache: Value| {
        json!([{"id": "all", "type": "tool", "tool": "list_contacts", "input": {},
                "loop": {"all_pages": true, "cache": cache}}])
    };
    let plain = workflow(&app, &rig, walk(Value::Null)).await;
    run(&app, &rig.t.key, &plain, json!({})).await;
    run(&app, &rig.t.key, &plain, json!({})).await;
    assert_eq!(up.count("/contacts"), 6, "two runs, two walks");

    let cached = workflow(&app, &rig, walk(json!({"ttl_minutes": 10}))).await;
    let first = run(&app, &rig.t.key, &cached, json!({})).await;
    assert_eq!(up.count("/contacts"), 9);
    assert!(first["steps"]["all"].get("_cache").is_none());
    let second = run(&app, &rig.t.key, &cached, json!({})).await;
    assert_eq!(up.count("/contacts"), 9, "served from the cache");
    let out = &second["steps"]["all"];
    assert_eq!(out["_cache"]["hit"], true, "{out}");
    assert_eq!(out["_loop"]["itemCount"], 237);
    assert_eq!(out["_loop"]["requests"], 0);
    // W2: a hit keeps the tool's own shape
    assert_eq!(out["contacts"].as_array().unwrap().len(), 237);
    assert!(out.get("items").is_none(), "{out}");
    assert_eq!(out["_loop"]["complete"], true);
    // experiments never touch the cache
    run(&app, &rig.t.key, &cached, json!({"experiment": true})).await;
    assert_eq!(up.count("/contacts"), 12);
}

#[tokio::test]
async fn another_orgs_key_gets_not_found() {
    let app = spawn_app().await;
    let up = upstream_server::start().await;
    let rig = Rig::new(&app, &up, true).await;
    let wf = workflow(&app, &rig, json!([fetch_step()])).await;
    let r = run(&app, &rig.t.key, &wf, json!({})).await;
    let other = app.tenant("other").await;
    app.post(&format!("/v1/workflows/{wf}/runs"), &other.key, json!({}))
        .await
        .problem(404, "not_found");
    app.get(&format!("/v1/workflows/{wf}/runs"), &other.key)
        .await
        .problem(404, "not_found");
    app.get(
        &format!("/v1/workflows/{wf}/runs/{}", r["id"].as_str().unwrap()),
        &other.key,
    )
    .await
    .problem(404, "not_found");
    assert_eq!(up.count("/contacts"), 3);
}

#[tokio::test]
async fn a_run_streams_the_ui_message_protocol() {
    let app = spawn_app().await;
    let up = upstream_server::start().await;
    let rig = Rig::new(&app, &up, true).await;
    let wf = workflow(
        &app,
        &rig,
        json!([fetch_step(),
            {"id": "pick", "type": "tool", "tool": "get_contact", "input": {"id": {"ref": "$.steps.fetch.contacts[0].id"}}},
            {"id": "bad", "type": "tool", "tool": "get_contact", "input": {"id": 9999}}]),
    )
    .await;
    let res = app
        .client
        .post(format!("{}/v1/workflows/{wf}/runs", app.address))
        .bearer_auth(&rig.t.key)
        .header("accept", "text/event-stream")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(res.headers()["content-type"], "text/event-stream");
    assert_eq!(res.headers()["x-vercel-ai-ui-message-stream"], "v1");
    let text = res.text().await.unwrap();
    let events: Vec<&str> = text.split("\n\n").filter(|e| !e.is_empty()).collect();
    assert_eq!(*events.last().unwrap(), "data: [DONE]");
    let chunks: Vec<Value> = events[..events.len() - 1]
        .iter()
        .map(|e| serde_json::from_str(&e["data: ".len()..]).unwrap())
        .collect();
    let types: Vec<&str> = chunks
        .iter()
        .map(|c| c["type"].as_str().unwrap())
        .filter(|t| *t != "data-tool-loop-progress")
        .collect();
    let step = [
        "start-step",
        "tool-input-available",
        "tool-output-available",
        "finish-step",
    ];
    let failed = [
        "start-step",
        "tool-input-available",
        "tool-output-error",
        "finish-step",
    ];
    let mut want = vec!["start"];
    want.extend(step);
    want.extend(step);
    want.extend(failed);
    want.push("finish");
    assert_eq!(types, want, "{text}");
    let inputs: Vec<&Value> = chunks
        .iter()
        .filter(|c| c["type"] == "tool-input-available")
        .collect();
    let run_id = inputs[0]["toolCallId"]
        .as_str()
        .unwrap()
        .strip_suffix(":fetch")
        .unwrap();
    assert!(run_id.starts_with("run_"));
    assert_eq!(inputs[1]["toolCallId"], format!("{run_id}:pick"));
    assert_eq!(inputs[1]["toolName"], "get_contact");
    assert_eq!(inputs[1]["input"], json!({"id": 0}));
    let err = chunks
        .iter()
        .find(|c| c["type"] == "tool-output-error")
        .unwrap();
    assert!(err["errorText"]
        .as_str()
        .unwrap()
        .starts_with("upstream_failed"));
    // progress chunks, if any, belong to a step
    for p in chunks
        .iter()
        .filter(|c| c["type"] == "data-tool-loop-progress")
    {
        assert!(p["id"].as_str().unwrap().starts_with(run_id));
    }
    let stored = app
        .get(&format!("/v1/workflows/{wf}/runs/{run_id}"), &rig.t.key)
        .await;
    assert_eq!(stored.ok(200)["status"], "failed");
    assert_eq!(stored.body["steps"]["pick"]["id"], 0);
}

#[tokio::test]
async fn w2_a_cached_step_keeps_its_shape_so_refs_match_on_the_second_run() {
    let app = spawn_app().await;
    let up = upstream_server::start().await;
    let rig = Rig::new(&app, &up, true).await;
    let mut fetch = fetch_step();
    fetch["loop"]["cache"] = json!({"ttl_minutes": 10});
    let wf = workflow(
        &app,
        &rig,
        json!([fetch,
            {"id": "details", "type": "tool", "tool": "get_contact", "input": {},
             "loop": {"for_each": {"key": "id", "values": {"ref": "$.steps.fetch.contacts[*].id"}}}},
            {"id": "first", "type": "tool", "tool": "get_contact",
             "input": {"id": {"ref": "$.steps.fetch.contacts[0].id"}}}]),
    )
    .await;
    let first = run(&app, &rig.t.key, &wf, json!({})).await;
    assert_eq!(first["status"], "succeeded", "{first}");
    let second = run(&app, &rig.t.key, &wf, json!({})).await;
    assert_eq!(second["status"], "succeeded", "{second}");
    assert_eq!(
        up.count("/contacts"),
        3,
        "the second walk came from the cache"
    );
    let (a, b) = (&first["steps"], &second["steps"]);
    assert_eq!(b["fetch"]["_cache"]["hit"], true, "{b}");
    assert_eq!(b["fetch"]["contacts"], a["fetch"]["contacts"]);
    assert_eq!(b["details"]["_loop"]["itemCount"], 5, "{b}");
    assert_eq!(b["details"]["items"], a["details"]["items"]);
    assert_eq!(b["first"]["id"], 0);
    assert_eq!(
        fan_out_requests(&up),
        12,
        "5 + 1 fan-out requests on each run"
    );
    // every step output carries `_loop`, whether it loops or not
    for out in [&b["fetch"], &b["details"], &b["first"]] {
        assert!(out["_loop"]["complete"].is_boolean(), "{out}");
    }
}
