//! Ids holding control characters (NUL and the rest) are refused with a `4xx` problem
//! naming the id, never a `5xx` (Postgres refuses U+0000 in `text`; such an id used to
//! answer `503`). Swept over every operation of the OpenAPI document that takes a path
//! id (so a new route is covered without editing this file), every control character
//! spread across them, each at the start, middle or end of a real id of the caller's own
//! org; over query values; and over the tool arguments that are ids (`resultId` of both
//! retrieval tools, `_continue`, the tool's name).

use reqwest::Method;
use serde_json::json;

use super::auth_matrix::{app_on, method, World};
use crate::studio::openapi_doc::{accepts, document, operations};
use crate::support::helpers::{Res, ADMIN};

/// Every control character: U+0000–U+001F, U+007F (DEL) and U+0080–U+009F.
fn controls() -> Vec<char> {
    (0u32..0x20)
        .chain(0x7f..0xa0)
        .filter_map(char::from_u32)
        .collect()
}

/// `c` percent-encoded as its UTF-8 bytes, for a path or a query.
fn encoded(c: char) -> String {
    let mut buf = [0u8; 4];
    c.encode_utf8(&mut buf)
        .bytes()
        .map(|b| format!("%{b:02X}"))
        .collect()
}

/// `id` with `c` put in at the start, the middle or the end (by `n`).
fn spoiled(id: &str, c: char, n: usize) -> String {
    let at = match n % 3 {
        0 => 0,
        1 => id.len() / 2,
        _ => id.len(),
    };
    let at = (0..=at)
        .rev()
        .find(|i| id.is_char_boundary(*i))
        .unwrap_or(0);
    format!("{}{}{}", &id[..at], encoded(c), &id[at..])
}

/// A refusal as it must be: 400 problem+json `validation_failed` naming `name`.
fn refused(r: &Res, name: &str, who: &str) {
    assert_eq!(r.status.as_u16(), 400, "{who}: {}", r.text);
    r.problem(400, "validation_failed");
    let detail = r.body["detail"].as_str().unwrap_or_default();
    assert!(detail.contains(&format!("`{name}`")), "{who}: {detail}");
    assert!(detail.contains("control characters"), "{who}: {detail}");
}

#[tokio::test]
async fn ids_with_control_characters_are_a_400_on_every_route() {
    let db = crate::support::helpers::fresh_database().await;
    let app = app_on(&db).await;
    let mut world = World::build(&app).await;
    let key = world.rig.t.key.clone();
    // the admin's ids too, and a connect link (any: a spoiled one is refused before lookup)
    let org = world.rig.t.org.clone();
    let made = app
        .post(
            &format!("/v1/orgs/{org}/api-keys"),
            ADMIN,
            json!({"name": "k", "scopes": ["studio"]}),
        )
        .await;
    let key_id = made.ok(201)["id"].as_str().unwrap().to_string();
    world.ids.insert("key_id", key_id);
    world
        .ids
        .insert("deployment_id", world.rig.t.deployment.clone());
    world.ids.insert("link", "lnk_probe".to_string());
    let all = controls();
    let (mut probes, mut seen) = (0, std::collections::BTreeSet::new());
    for (k, (m, path, op)) in operations(&document()).into_iter().enumerate() {
        let params: Vec<&str> = path
            .split('/')
            .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
            .collect();
        if params.is_empty() {
            continue;
        }
        let security = op["security"].as_array().cloned().unwrap_or_default();
        let cred = if security.is_empty() {
            None
        } else if accepts(&security, "adminToken", None) {
            Some(ADMIN.to_string())
        } else if accepts(&security, "runtimeToken", None) {
            Some(world.token.clone())
        } else {
            Some(key.clone())
        };
        let body = world.body(&m, &path, &op);
        // NUL on every route; the other characters spread over the routes, all covered
        let chars = all
            .iter()
            .copied()
            .enumerate()
            .filter(|(i, c)| *c == '\0' || (i + k) % 9 == 0)
            .map(|(_, c)| c);
        for (n, c) in chars.enumerate() {
            for name in &params {
                let good = world.url(&path);
                let id = world.ids.get(name).cloned().unwrap_or_default();
                let url = good.replacen(
                    &format!("/{id}"),
                    &format!("/{}", spoiled(&id, c, n)),
                    // the id's own segment: the first occurrence is the parameter's
                    1,
                );
                assert_ne!(url, good, "{path}: {name} not replaced");
                let who = format!("{m} {path} with U+{:04X} in {name}", c as u32);
                let r = app
                    .call(method(&m), &url, cred.as_deref(), body.as_ref())
                    .await;
                refused(&r, name, &who);
                probes += 1;
                seen.insert(c);
            }
        }
    }
    assert_eq!(seen.len(), all.len(), "every control character was sent");
    assert!(probes > 100, "only {probes} probes");

    // without credentials a /v1/ route still answers 401 first
    let r = app
        .call(
            Method::GET,
            &format!("/v1/agents/{}%00", world.ids["agent_id"]),
            None,
            None,
        )
        .await;
    r.problem(401, "unauthorized");

    // query values: a filter and a cursor
    for q in ["user_id=u1%00", "cursor=%1Bx", "limit=5&agent_id=a%C2%85"] {
        let r = app.get(&format!("/v1/connections?{q}"), &key).await;
        assert_eq!(r.status.as_u16(), 400, "{q}: {}", r.text);
        r.problem(400, "validation_failed");
    }

    // A's objects survived every probe
    for p in [
        "/v1/agents/{agent_id}",
        "/v1/tools/{tool_id}",
        "/v1/workflows/{workflow_id}",
        "/v1/agents/{agent_id}/tools/{tool_id}",
    ] {
        app.get(&world.url(p), &key).await.ok(200);
    }
}

/// The tool arguments that are ids: 400 `invalid_arguments` naming the argument, for
/// every control character; the id without it still works.
#[tokio::test]
async fn id_arguments_with_control_characters_are_invalid_arguments() {
    let db = crate::support::helpers::fresh_database().await;
    let app = app_on(&db).await;
    let world = World::build(&app).await;
    let (rig, token) = (&world.rig, &world.token);
    let walked = rig
        .call(&app, token, "th-a", "list_inboxes", json!({}))
        .await;
    assert_eq!(walked.status.as_u16(), 200, "{}", walked.text);
    for (n, c) in controls().into_iter().enumerate() {
        let bad = format!("res_{c}");
        for tool in ["queryToolResult", "fetchToolResult"] {
            let r = rig
                .call(&app, token, "th-a", tool, json!({"resultId": bad}))
                .await;
            let who = format!("{tool} with U+{:04X}", c as u32);
            assert_eq!(r.status.as_u16(), 400, "{who}: {}", r.text);
            r.problem(400, "invalid_arguments");
            assert!(r.text.contains("`resultId`"), "{who}: {}", r.text);
        }
        let args = json!({"_continue": format!("cont_{c}x")});
        let r = rig.call(&app, token, "th-a", "list_inboxes", args).await;
        r.problem(400, "invalid_arguments");
        assert!(r.text.contains("`_continue`"), "{}", r.text);
        let name = match n % 2 {
            0 => format!("list_inboxes{c}"),
            _ => format!("{c}list_inboxes"),
        };
        let r = rig.call(&app, token, "th-a", &name, json!({})).await;
        r.problem(400, "invalid_arguments");
        assert!(r.text.contains("`name`"), "{}", r.text);
    }
    // a thread id over the path is the route sweep's; the same thread still answers
    rig.call(&app, token, "th-a", "list_inboxes", json!({}))
        .await
        .ok(200);
}
