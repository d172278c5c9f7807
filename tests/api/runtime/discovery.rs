//! D1, D2: a 60-tool mail-like toolkit, a 3-tool chat-like one and an
//! 8-tool calendar-like one beside the org's own API tools; placement in `steps`,
//! overrides both ways, `search_tools`, `load_tool` per thread, `tool_not_loaded`.

use serde_json::{json, Value};

use crate::support::helpers::{Tenant, TestApp};

pub struct Kits {
    pub t: Tenant,
    pub agent: String,
    /// tool name → (tool id, provider id)
    pub ids: std::collections::HashMap<String, (String, String)>,
}

/// An app whose per-org request limit leaves room for creating 75 tools at once.
pub async fn spawn() -> TestApp {
    let mut s =
        crate::support::helpers::test_settings(crate::support::helpers::fresh_database().await);
    s.org_requests_per_second = 10_000;
    crate::support::helpers::spawn_with(s).await
}

fn fixture(name: &str) -> Value {
    let path = format!(
        "{}/tests/fixtures/toolkits/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A connected-app provider for `toolkit` on `base`.
pub async fn app_provider(
    app: &TestApp,
    key: &str,
    toolkit: &str,
    base: &str,
    connection: Value,
) -> String {
    app.post(
        "/v1/providers",
        key,
        json!({"name": toolkit, "kind": "app", "base_url": base, "auth": {"type": "bearer"},
               "toolkit": toolkit, "connection": connection}),
    )
    .await
    .ok(201)["id"]
        .as_str()
        .unwrap()
        .to_string()
}

impl Kits {
    /// The tenant's 4 own API tools plus the three toolkits (api-key connections), all
    /// bound to one agent with default discovery.
    pub async fn new(app: &TestApp, base: &str) -> Kits {
        let t = app.tenant("kits").await;
        let mut ids = std::collections::HashMap::new();
        for name in ["own_a", "own_b", "own_c", "own_d"] {
            let id = app.create_tool(&t.key, &t.provider, name).await;
            ids.insert(name.to_string(), (id, t.provider.clone()));
        }
        for kit in ["mail", "chat", "calendar"] {
            let f = fixture(kit);
            let p = app_provider(
                app,
                &t.key,
                kit,
                base,
                json!({"type": "api_key", "instructions": "Settings → API keys"}),
            )
            .await;
            for tool in f["tools"].as_array().unwrap() {
                let mut body = tool.clone();
                body["provider_id"] = json!(p);
                let r = app.post("/v1/tools", &t.key, body).await;
                let created = r.ok(201);
                assert_eq!(created["kind"], "app");
                assert_eq!(created["toolkit"], kit);
                ids.insert(
                    tool["name"].as_str().unwrap().to_string(),
                    (created["id"].as_str().unwrap().to_string(), p.clone()),
                );
            }
        }
        let bindings: Vec<Value> = ids
            .values()
            .map(|(tool, provider)| json!({"tool_id": tool, "provider_id": provider}))
            .collect();
        let agent = app
            .post(
                "/v1/agents",
                &t.key,
                json!({"name": "assistant", "deployment_id": t.deployment, "agentTools": bindings}),
            )
            .await
            .ok(201)["id"]
            .as_str()
            .unwrap()
            .to_string();
        Kits { t, agent, ids }
    }

    pub async fn steps(&self, app: &TestApp, token: &str, thread: &str) -> Vec<String> {
        let r = app
            .post(
                &format!("/v1/agents/{}/threads/{thread}/steps", self.agent),
                token,
                json!({}),
            )
            .await;
        r.ok(200)["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    }

    pub async fn call(
        &self,
        app: &TestApp,
        token: &str,
        thread: &str,
        name: &str,
        args: Value,
    ) -> crate::support::helpers::Res {
        app.tool_call(&self.agent, token, thread, name, args).await
    }

    pub async fn bind(&self, app: &TestApp, tool: &str, patch: Value) {
        let (id, _) = &self.ids[tool];
        app.patch(
            &format!("/v1/agents/{}/tools/{id}", self.agent),
            &self.t.key,
            patch,
        )
        .await
        .ok(200);
    }
}

fn count_in(names: &[String], kit: &str) -> usize {
    let f = fixture(kit);
    f["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| names.iter().any(|n| n == t["name"].as_str().unwrap()))
        .count()
}

#[tokio::test]
async fn d2_placement_small_toolkits_direct_beside_a_pooled_60_tool_one() {
    let app = spawn().await;
    let kits = Kits::new(&app, "https://mail.example.com").await;
    let key = kits.t.key.clone();
    let names = kits.steps(&app, &key, "t1").await;
    // 4 own + chat 3 + calendar 8 = 15: exactly the budget; mail (60) is pooled
    for own in ["own_a", "own_b", "own_c", "own_d"] {
        assert!(names.contains(&own.to_string()), "{names:?}");
    }
    assert_eq!(count_in(&names, "chat"), 3);
    assert_eq!(count_in(&names, "calendar"), 8);
    assert_eq!(count_in(&names, "mail"), 0);
    assert!(names.contains(&"search_tools".into()) && names.contains(&"load_tool".into()));
    // D2: `discovery: false` puts one mail tool direct and counts it, so calendar (8)
    // no longer fits what is left (15 - 5 - 3 = 7) and is pooled, chat (3) stays direct
    kits.bind(&app, "users_messages_send", json!({"discovery": false}))
        .await;
    let names = kits.steps(&app, &key, "t1").await;
    assert_eq!(count_in(&names, "mail"), 1);
    assert!(names.contains(&"users_messages_send".into()));
    assert_eq!(count_in(&names, "chat"), 3);
    assert_eq!(count_in(&names, "calendar"), 0);
    // `discovery: true` pools one chat tool and even an own API tool
    kits.bind(&app, "chatPostMessage", json!({"discovery": true}))
        .await;
    kits.bind(&app, "own_a", json!({"discovery": true})).await;
    let names = kits.steps(&app, &key, "t1").await;
    assert_eq!(count_in(&names, "chat"), 2);
    assert!(!names.contains(&"own_a".into()) && !names.contains(&"chatPostMessage".into()));
    // the pooled own tool is searchable like any other
    let r = kits
        .call(
            &app,
            &key,
            "t1",
            "search_tools",
            json!({"query": "post a message to a channel", "limit": 3}),
        )
        .await;
    assert!(
        r.ok(200)["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "chatPostMessage"),
        "{}",
        r.text
    );
    // a budget large enough for everything: nothing pooled, no meta-tools (D2)
    kits.bind(&app, "chatPostMessage", json!({"discovery": null}))
        .await;
    kits.bind(&app, "own_a", json!({"discovery": null})).await;
    app.patch(
        &format!("/v1/agents/{}", kits.agent),
        &key,
        json!({"direct_tool_budget": 100}),
    )
    .await
    .ok(200);
    let names = kits.steps(&app, &key, "t1").await;
    // 75 bound tools and the two connection tools (D3)
    assert_eq!(names.len(), 77, "{names:?}");
    assert!(
        names.contains(&"list_connections".into()) && names.contains(&"connect_toolkit".into())
    );
    assert!(!names.contains(&"search_tools".into()));
    let r = kits
        .call(
            &app,
            &key,
            "t1",
            "search_tools",
            json!({"query": "anything"}),
        )
        .await;
    r.problem(400, "invalid_arguments");
}

#[tokio::test]
async fn d1_search_then_load_and_loaded_is_per_thread() {
    let app = spawn().await;
    let kits = Kits::new(&app, "https://mail.example.com").await;
    let key = kits.t.key.clone();
    let r = kits
        .call(
            &app,
            &key,
            "a",
            "search_tools",
            json!({"query": "put the newsletter in the bin"}),
        )
        .await;
    let found = r.ok(200)["result"]["tools"].as_array().unwrap().clone();
    // the default limit (D6: eight, chosen from recall@k against what the agent reads)
    assert!(found.len() <= 8 && !found.is_empty());
    let top3: Vec<&str> = found
        .iter()
        .take(3)
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(top3.contains(&"users_messages_trash"), "{top3:?}");
    assert!(found
        .iter()
        .all(|t| t["toolkit"] == "mail" && t["description"].as_str().unwrap().len() <= 203));
    // a pooled tool that was not loaded: 409 telling the model to call load_tool
    let r = kits
        .call(&app, &key, "a", "users_messages_trash", json!({"id": "m1"}))
        .await;
    r.problem(409, "tool_not_loaded");
    assert!(r.body["detail"].as_str().unwrap().contains("load_tool"));
    let r = kits
        .call(
            &app,
            &key,
            "a",
            "load_tool",
            json!({"toolNames": ["users_messages_trash", "users_labels_list"]}),
        )
        .await;
    assert_eq!(
        r.ok(200)["result"]["loaded"],
        json!(["users_messages_trash", "users_labels_list"])
    );
    let names = kits.steps(&app, &key, "a").await;
    assert!(
        names.contains(&"users_messages_trash".into())
            && names.contains(&"users_labels_list".into())
    );
    assert_eq!(count_in(&names, "mail"), 2);
    let r = kits
        .call(&app, &key, "a", "users_messages_trash", json!({"id": "m1"}))
        .await;
    assert_ne!(r.body["code"], "tool_not_loaded", "{}", r.text);
    // loaded once is loaded for the rest of this thread only
    let names = kits.steps(&app, &key, "b").await;
    assert_eq!(count_in(&names, "mail"), 0);
    kits.call(&app, &key, "b", "users_messages_trash", json!({"id": "m1"}))
        .await
        .problem(409, "tool_not_loaded");
    // an already loaded tool is not offered by search again
    let r = kits
        .call(
            &app,
            &key,
            "a",
            "search_tools",
            json!({"query": "trash a message", "limit": 25}),
        )
        .await;
    assert!(r.ok(200)["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t["name"] != "users_messages_trash"));
}

#[tokio::test]
async fn d1_unknown_names_list_close_matches() {
    let app = spawn().await;
    let kits = Kits::new(&app, "https://mail.example.com").await;
    let key = kits.t.key.clone();
    let r = kits
        .call(
            &app,
            &key,
            "a",
            "load_tool",
            json!({"toolName": "users_message_trash"}),
        )
        .await;
    r.problem(400, "invalid_arguments");
    assert!(
        r.body["detail"]
            .as_str()
            .unwrap()
            .contains("users_messages_trash"),
        "{}",
        r.text
    );
    let r = kits
        .call(&app, &key, "a", "users_messages_trsh", json!({}))
        .await;
    r.problem(400, "invalid_arguments");
    assert!(
        r.body["detail"]
            .as_str()
            .unwrap()
            .contains("did you mean: users_messages_trash"),
        "{}",
        r.text
    );
    kits.call(&app, &key, "a", "load_tool", json!({}))
        .await
        .problem(400, "invalid_arguments");
    kits.call(
        &app,
        &key,
        "a",
        "search_tools",
        json!({"query": "x", "limit": 500}),
    )
    .await
    .problem(400, "invalid_arguments");
}

/// D5: with the model loaded, `search_tools` ranks by meaning and words (the hybrid
/// path: the query embedded, the pool's vectors built once), answering as D1 specifies.
/// Which tool comes first is the quality test's concern (`call::search_quality_tests`):
/// "the text at the bottom of my emails" still misses the signature tool.
#[tokio::test]
async fn d5_search_finds_a_tool_by_meaning() {
    let app = spawn().await;
    let ready = app.call(reqwest::Method::GET, "/readyz", None, None).await;
    let detail = ready.ok(200)["detail"].to_string();
    if detail.contains("search: lexical only") {
        crate::support::services::missing("the embedding model (scripts/setup-model)", "skipped");
        return;
    }
    let kits = Kits::new(&app, "https://mail.example.com").await;
    let key = kits.t.key.clone();
    let r = kits
        .call(
            &app,
            &key,
            "a",
            "search_tools",
            json!({"query": "change the text at the bottom of my emails", "limit": 3}),
        )
        .await;
    let found: Vec<String> = r.ok(200)["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert!(!found.is_empty() && found.len() <= 3, "{found:?}");
    assert!(found.iter().all(|n| n.starts_with("users_")), "{found:?}");
    let m = app.call(reqwest::Method::GET, "/metrics", None, None).await;
    assert!(m.text.contains("loopgate_search_semantic 1"), "{}", m.text);
    assert!(
        m.text
            .contains("loopgate_search_queries_total{mode=\"hybrid\"} 1"),
        "{}",
        m.text
    );
}

/// D5: without the model search is lexical, and says so (`/readyz` detail, the gauge),
/// never a failed call.
#[tokio::test]
async fn d5_without_the_model_search_is_lexical_and_says_so() {
    let mut s =
        crate::support::helpers::test_settings(crate::support::helpers::fresh_database().await);
    s.org_requests_per_second = 10_000;
    s.embedding_model_dir = "/nonexistent/loopgate-model".into();
    let app = crate::support::helpers::spawn_with(s).await;
    let ready = app.call(reqwest::Method::GET, "/readyz", None, None).await;
    let body = ready.ok(200);
    assert_eq!(body["status"], "degraded", "{body}");
    assert!(
        body["detail"].to_string().contains("search: lexical only"),
        "{body}"
    );
    let kits = Kits::new(&app, "https://mail.example.com").await;
    let key = kits.t.key.clone();
    let r = kits
        .call(
            &app,
            &key,
            "a",
            "search_tools",
            json!({"query": "trash a message"}),
        )
        .await;
    let found = r.ok(200)["result"]["tools"].as_array().unwrap().clone();
    assert_eq!(found[0]["name"], "users_messages_trash", "{found:?}");
    let m = app.call(reqwest::Method::GET, "/metrics", None, None).await;
    assert!(m.text.contains("loopgate_search_semantic 0"), "{}", m.text);
    assert!(
        m.text
            .contains("loopgate_search_queries_total{mode=\"lexical\"} 1"),
        "{}",
        m.text
    );
    // D6: `toolkit` keeps the search to one toolkit; an unknown one names the others
    let r = kits
        .call(
            &app,
            &key,
            "a",
            "search_tools",
            json!({"query": "delete", "toolkit": "MAIL"}),
        )
        .await;
    let found = r.ok(200)["result"]["tools"].as_array().unwrap().clone();
    assert!(!found.is_empty());
    assert!(found.iter().all(|t| t["toolkit"] == "mail"), "{found:?}");
    let r = kits
        .call(
            &app,
            &key,
            "a",
            "search_tools",
            json!({"query": "delete", "toolkit": "fax"}),
        )
        .await;
    let p = r.problem(400, "invalid_arguments");
    let detail = p.body["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("fax") && detail.contains("mail"),
        "{detail}"
    );
}

/// The value of an unlabelled counter in a `/metrics` text (0 when absent).
fn counter(metrics: &str, name: &str) -> u64 {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
        .unwrap_or(0)
}

/// Polls `/metrics` until no tool of `app` waits for its vector (D6); the computed count.
async fn vectors_ready(app: &TestApp) -> u64 {
    for _ in 0..600 {
        let m = app.call(reqwest::Method::GET, "/metrics", None, None).await;
        let waiting = m
            .text
            .lines()
            .find_map(|l| {
                l.strip_prefix("loopgate_tool_vectors_waiting ")?
                    .trim()
                    .parse::<f64>()
                    .ok()
            })
            .expect("the waiting gauge");
        if waiting == 0.0 {
            return counter(&m.text, "loopgate_tool_vectors_computed_total");
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("tool vectors still waiting after 60 s");
}

/// D5, D6: a tool's vector is computed when the tool is written, in the background,
/// and kept with the tool. A search never computes one: a replica whose pool has tools
/// without vectors answers at once, ranking those by words, says so, and asks for them;
/// once they are made the note is gone and the ranking is the first replica's. Deleting
/// a tool deletes its vector.
#[tokio::test]
async fn d6_tool_vectors_are_made_when_tools_are_written_never_on_a_search() {
    let first = spawn().await;
    let ready = first
        .call(reqwest::Method::GET, "/readyz", None, None)
        .await;
    if ready.ok(200)["detail"]
        .to_string()
        .contains("search: lexical only")
    {
        crate::support::services::missing("the embedding model (scripts/setup-model)", "skipped");
        return;
    }
    let kits = Kits::new(&first, "https://mail.example.com").await;
    let key = kits.t.key.clone();
    let computed = vectors_ready(&first).await;
    assert!(
        computed >= 71,
        "the three toolkits and the own tools: {computed}"
    );
    let db = sqlx::PgPool::connect(&first.database_url).await.unwrap();
    let rows = |db: sqlx::PgPool| async move {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM tool_vectors")
            .fetch_one(&db)
            .await
            .unwrap() as u64
    };
    assert_eq!(
        rows(db.clone()).await,
        computed,
        "one row per vector computed"
    );

    let search = json!({"query": "move an email to the bin", "limit": 3});
    let found = |r: crate::support::helpers::Res| -> (Vec<String>, Value) {
        let body = r.ok(200);
        let names = body["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect();
        (names, body["result"]["note"].clone())
    };
    let (on_first, note) = found(
        kits.call(&first, &key, "a", "search_tools", search.clone())
            .await,
    );
    assert_eq!(note, Value::Null, "every vector was ready");
    let m = first
        .call(reqwest::Method::GET, "/metrics", None, None)
        .await;
    assert_eq!(
        counter(&m.text, "loopgate_tool_vectors_computed_total"),
        computed,
        "the search computed none"
    );

    // a replica with nothing in memory, the stored vectors gone: it answers at once
    sqlx::query("DELETE FROM tool_vectors")
        .execute(&db)
        .await
        .unwrap();
    let mut s = crate::support::helpers::test_settings(first.database_url.clone());
    s.org_requests_per_second = 10_000;
    let second = crate::support::helpers::spawn_with(s).await;
    let (partial, note) = found(
        kits.call(&second, &key, "b", "search_tools", search.clone())
            .await,
    );
    assert!(!partial.is_empty());
    let note = note.as_str().unwrap_or_default().to_string();
    assert!(note.contains("ranked by their words only"), "{note:?}");
    let remade = vectors_ready(&second).await;
    assert!(
        remade >= 60,
        "the pooled mail toolkit's, asked for by the search: {remade}"
    );
    let (on_second, note) = found(kits.call(&second, &key, "c", "search_tools", search).await);
    assert_eq!(note, Value::Null);
    assert_eq!(on_first, on_second, "the same vectors rank the same");

    let (trash, _) = kits.ids["users_messages_trash"].clone();
    first
        .delete(&format!("/v1/tools/{trash}"), &key)
        .await
        .ok(204);
    assert_eq!(rows(db.clone()).await, remade - 1, "gone with its tool");
}
