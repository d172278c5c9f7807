//! M1: an MCP server (a real rmcp server) as a provider. Sync imports every page of its
//! `tools/list`; a re-sync adds, updates and removes and says so; its tools are called
//! through the same runtime as API tools: the org credential, `_all_pages` over a tool
//! that pages by cursor (P5), the size guard and `queryToolResult` (G1, G3, G4), and an
//! `isError` result as an error the model reads.

use serde_json::{json, Value};

use crate::support::helpers::{spawn_app, Tenant, TestApp};
use crate::support::mcp_upstream::{McpUpstream, CONTACTS};

pub struct McpRig {
    pub app: TestApp,
    pub t: Tenant,
    pub up: McpUpstream,
    pub provider: String,
    pub agent: String,
    pub token: String,
    pub sync: Value,
}

/// An app, a tenant, the MCP server registered and synced, an agent holding every
/// imported tool (`loop_responses: true`) and a runtime token of user `u1` for it.
pub async fn mcp_rig() -> McpRig {
    let app = spawn_app().await;
    let up = McpUpstream::default();
    let url = up.start().await;
    let t = app.tenant("mcp").await;
    let (provider, bindings, sync) = super::synced_mcp_provider(
        &app,
        &t,
        "docs",
        &url,
        "mcp-org-secret",
        json!({"loop_responses": true}),
    )
    .await;
    let (agent, token) = app.agent_and_token(&t, bindings, "u1").await;
    McpRig {
        app,
        t,
        up,
        provider,
        agent,
        token,
        sync,
    }
}

impl McpRig {
    pub async fn call(
        &self,
        thread: &str,
        name: &str,
        args: Value,
    ) -> crate::support::helpers::Res {
        self.app
            .post(
                &format!("/v1/agents/{}/threads/{thread}/tool-calls", self.agent),
                &self.token,
                json!({"name": name, "arguments": args}),
            )
            .await
    }
}

fn names(v: &Value) -> Vec<String> {
    let mut n: Vec<String> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            x.as_str()
                .map(str::to_string)
                .unwrap_or_else(|| x["name"].as_str().unwrap().to_string())
        })
        .collect();
    n.sort();
    n
}

#[tokio::test]
async fn m1_sync_imports_every_page_and_a_resync_says_what_changed() {
    let r = mcp_rig().await;
    // six tools over three tools/list pages
    assert_eq!(
        names(&r.sync["data"]),
        [
            "broken",
            "docs_search",
            "greet",
            "list_contacts",
            "report",
            "slow_contacts"
        ]
    );
    assert_eq!(names(&r.sync["added"]).len(), 6);
    let contacts = r.sync["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "list_contacts")
        .unwrap()
        .clone();
    assert_eq!(contacts["kind"], "mcp");
    assert_eq!(
        contacts["input_schema"]["properties"]["limit"]["maximum"],
        20
    );
    r.up.assert_auth("Bearer mcp-org-secret");

    let path = format!("/v1/providers/{}/sync", r.provider);
    let again = r.app.post(&path, &r.t.key, json!({})).await;
    assert_eq!(again.ok(200)["unchanged"], 6);
    assert!(again.body["added"].as_array().unwrap().is_empty());

    // the server lists one more tool, a hand-made tool is not on the server, and an
    // imported tool was edited: the sync adds, removes and restores (same id)
    r.up.extra.lock().unwrap().push("archive");
    r.app
        .post(
            "/v1/tools",
            &r.t.key,
            json!({"provider_id": r.provider, "name": "gone", "method": "POST", "path": "/gone", "input_schema": {"type": "object"}}),
        )
        .await
        .ok(201);
    r.app
        .patch(
            &format!("/v1/tools/{}", contacts["id"].as_str().unwrap()),
            &r.t.key,
            json!({"description": "edited"}),
        )
        .await
        .ok(200);
    let changed = r.app.post(&path, &r.t.key, json!({})).await;
    let c = changed.ok(200);
    assert_eq!(names(&c["added"]), ["archive"]);
    assert_eq!(names(&c["removed"]), ["gone"]);
    assert_eq!(names(&c["updated"]), ["list_contacts"]);
    assert_eq!(c["unchanged"], 5);
    let kept = c["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "list_contacts")
        .unwrap();
    assert_eq!(
        kept["id"], contacts["id"],
        "an update keeps the tool (and its bindings)"
    );
    assert_eq!(kept["description"], "List contacts, a page at a time");
    let agent = r
        .app
        .get(&format!("/v1/agents/{}", r.agent), &r.t.key)
        .await;
    assert!(agent.text.contains(contacts["id"].as_str().unwrap()));

    // only MCP providers sync
    r.app
        .post(
            &format!("/v1/providers/{}/sync", r.t.provider),
            &r.t.key,
            json!({}),
        )
        .await
        .problem(422, "validation_failed");
}

#[tokio::test]
async fn m1_mcp_tools_walk_get_cut_and_fail_like_api_tools() {
    let r = mcp_rig().await;
    let steps = r
        .app
        .post(
            &format!("/v1/agents/{}/threads/t1/steps", r.agent),
            &r.token,
            json!({}),
        )
        .await
        .ok(200)
        .clone();
    let list = steps["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "list_contacts")
        .unwrap();
    assert!(
        list["input_schema"]["properties"]
            .get("_all_pages")
            .is_some(),
        "P5: a cursor parameter offers _all_pages: {list}"
    );

    // P5: every page of the MCP tool, walked by the cursor it hands back
    let walk = r
        .call("t1", "list_contacts", json!({"_all_pages": true}))
        .await;
    let w = walk.ok(200)["result"].clone();
    assert_eq!(w["_itemCount"], CONTACTS, "{w}");
    assert_eq!(w["_pagingComplete"], true);
    let ids: Vec<u64> = w["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, (0..CONTACTS as u64).collect::<Vec<_>>());
    let calls = r.up.calls.lock().unwrap().clone();
    let pages: Vec<&Value> = calls
        .iter()
        .filter(|(n, _)| n == "list_contacts")
        .map(|(_, a)| a)
        .collect();
    assert_eq!(pages.len(), 3, "20 + 20 + 5 rows: {pages:?}");
    assert_eq!(pages[0]["limit"], 20, "P2: the declared maximum page size");
    assert_eq!(pages[1]["cursor"], "c-20");
    assert!(
        pages.iter().all(|a| a.get("_all_pages").is_none()),
        "L3: reserved arguments never reach the server"
    );

    // G1, G3, G4: 800 KB of JSON text is cut at an item boundary and read back
    let report = r.call("t1", "report", json!({})).await;
    let cut = report.ok(200)["result"].clone();
    assert!(report.text.len() < 200_000, "{} bytes", report.text.len());
    assert_eq!(cut["_truncated"], true);
    assert_eq!(cut["title"], "Yearly report");
    assert_eq!(cut["_itemsTotal"], 4000);
    let rid = cut["_resultId"].as_str().unwrap().to_string();
    let q = r
        .call(
            "t1",
            "queryToolResult",
            json!({"resultId": rid, "filter": [{"field": "region", "op": "eq", "value": "south"}], "limit": 3, "fields": ["id"]}),
        )
        .await;
    let q = q.ok(200)["result"].clone();
    assert_eq!(q["total"], 2000, "{q}");
    assert_eq!(q["items"], json!([{"id": 1}, {"id": 3}, {"id": 5}]));

    // plain text content is text
    let hello = r.call("t1", "greet", json!({"who": "Ada"})).await;
    assert!(
        hello.ok(200)["result"].to_string().contains("Hello, Ada!"),
        "{}",
        hello.text
    );

    // isError: an error the model can read, never an internal error
    let broken = r.call("t1", "broken", json!({})).await;
    broken.problem(502, "upstream_failed");
    assert!(
        broken.body["detail"]
            .as_str()
            .unwrap()
            .contains("the archive is offline until Monday"),
        "{}",
        broken.text
    );

    // a dotted MCP name is called by its name on the server
    r.call("t1", "docs_search", json!({"q": "x"})).await.ok(200);
    assert!(r
        .up
        .calls
        .lock()
        .unwrap()
        .iter()
        .any(|(n, a)| n == "docs.search" && a["q"] == "x"));
    r.up.assert_auth("Bearer mcp-org-secret");
}
