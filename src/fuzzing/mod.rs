//! Fuzz harnesses for the parsers of untrusted input: one function per target, taking
//! raw bytes and panicking only on a bug. The libFuzzer binaries (`fuzz/targets/*.rs`,
//! built by `scripts/fuzz` with the `fuzzing` feature) call them, and the unit tests
//! below replay the committed corpus (`fuzz/corpus/<target>/`) and every crash turned
//! regression (`fuzz/regressions/<target>/`) on each test run, so what fuzzing found
//! stays fixed.
//!
//! Targets: the OpenAPI importer (JSON and YAML), the reserved-argument parser with a
//! whole presented call (`_fields`, `_filter`, `_for_each`, `_all_pages` over one
//! upstream page: the item-array finder, projection, filtering, the size guard and the
//! verdict), stored-result queries, the item-array finder alone, workflow refs and
//! conditions, and the runtime-token parser.

use std::collections::HashMap;
use std::future::Future;
use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};
use serde_json::{json, Value};

use crate::auth::tokens::{MintRequest, TokenService};
use crate::auth::UserCredential;
use crate::crypto::Cipher;
use crate::store::OrgId;
use crate::workflow::refs;
use loopgate_engine::document::Page;
use loopgate_engine::{
    self, Clock, Limits, NoProgress, Upstream, UpstreamFailure, UpstreamRequest, UpstreamResponse,
};

/// A harness: raw bytes in, a panic only on a bug.
pub type Harness = fn(&[u8]);

/// Every target, by the name its corpus folder and binary carry.
pub const TARGETS: &[(&str, Harness)] = &[
    ("openapi_json", openapi),
    ("openapi_yaml", openapi),
    ("tool_call", tool_call),
    ("stored_query", stored_query),
    ("item_array", item_array),
    ("workflow_refs", workflow_refs),
    ("token", token),
];

/// `POST /v1/providers/{id}/openapi`: any document, JSON or YAML.
pub fn openapi(data: &[u8]) {
    if let Ok(tools) = crate::openapi_import::import(data) {
        for t in &tools {
            // what was imported is a tool the engine can analyse
            let _ = loopgate_engine::analyze(&t.input_schema);
        }
    }
}

/// Splits `data` at its first newline: (first line, rest).
fn split_line(data: &[u8]) -> (&[u8], &[u8]) {
    match data.iter().position(|b| *b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[]),
    }
}

fn small_limits() -> Limits {
    Limits {
        pages_per_collection: 3,
        requests: 6,
        token_budget: 200,
        ..Limits::default()
    }
}

/// A paginated tool with every kind of parameter the parser treats differently.
fn schema() -> Value {
    json!({"type": "object", "properties": {
        "id": {"type": "integer"}, "q": {"type": "string"}, "flag": {"type": "boolean"},
        "page": {"type": "integer"}, "per_page": {"type": "integer", "maximum": 50},
        "cursor": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}},
        "body": {"type": "object", "properties": {"offset": {"type": "integer"}, "limit": {"type": "integer"}}}
    }})
}

/// An upstream that answers every request with the same page.
struct OnePage(Vec<u8>);

impl Upstream for OnePage {
    fn follow(&self, _: &str) -> Option<String> {
        None
    }

    fn call(
        &self,
        _: UpstreamRequest,
    ) -> impl Future<Output = Result<UpstreamResponse, UpstreamFailure>> + Send {
        let body = self.0.clone();
        async move {
            Ok(UpstreamResponse {
                status: 200,
                headers: Vec::new(),
                body,
            })
        }
    }
}

struct NoClock;

impl Clock for NoClock {
    fn now_ms(&self) -> u64 {
        0
    }
    async fn sleep(&self, _: Duration) {}
}

/// A tool call: the first line is the model's arguments (reserved ones included), the
/// rest the upstream's answer to every page. Parsed, walked, presented, stored and
/// read back with queryToolResult and fetchToolResult.
pub fn tool_call(data: &[u8]) {
    let (args, body) = split_line(data);
    let Ok(args) = serde_json::from_slice::<Value>(args) else {
        return;
    };
    let schema = schema();
    let analysis = loopgate_engine::analyze(&schema);
    let limits = small_limits();
    let Ok(plan) = loopgate_engine::parse_call(&analysis, &schema, args, true, &limits) else {
        return;
    };
    let upstream = OnePage(body.to_vec());
    let run = loopgate_engine::run(&plan, &analysis, &upstream, &NoProgress, &NoClock, &limits);
    // every future above is ready at once: no executor needed
    let Some(Ok(outcome)) = futures_util::FutureExt::now_or_never(run) else {
        return;
    };
    let presented =
        loopgate_engine::present_json(&outcome, &plan, "res_fuzz", &limits, &Default::default());
    assert!(
        serde_json::from_str::<Value>(&presented.json).is_ok(),
        "a presented result is JSON: {}",
        presented.json
    );
    let stored = outcome.to_stored_json();
    let again = loopgate_engine::Outcome::from_stored_json(&stored);
    assert_eq!(
        again.items.len(),
        outcome.items.len(),
        "stored rows survive"
    );
    let prov = outcome.provenance();
    let _ = loopgate_engine::query_result_json(
        stored.clone(),
        Some(&prov),
        &json!({"resultId": "res_fuzz"}),
        &limits,
    );
    let _ = loopgate_engine::fetch_result(&stored, &json!({"offset": 0, "length": 100}), &limits);
}

/// queryToolResult: the first line is its arguments (`fields`, `filter`, `offset`,
/// `limit`, `aggregate`), the rest a stored result.
pub fn stored_query(data: &[u8]) {
    let (args, stored) = split_line(data);
    let Ok(args) = serde_json::from_slice::<Value>(args) else {
        return;
    };
    let Ok(stored) = std::str::from_utf8(stored) else {
        return;
    };
    let limits = small_limits();
    if let Ok(v) = loopgate_engine::query_result_json(stored.to_owned(), None, &args, &limits) {
        assert!(v.is_object(), "{v}");
    }
    let _ = loopgate_engine::fetch_result(stored, &args, &limits);
}

/// G2: the item array of any body, and the page rebuilt around its rows.
pub fn item_array(data: &[u8]) {
    let page = Page::parse(data);
    let n = page.items.len();
    let rebuilt = Page::assemble_json(&page.frame, page.slot.as_ref(), &page.items);
    if page.slot.is_some() {
        let again = Page::parse(rebuilt.as_bytes());
        assert_eq!(
            again.items.len(),
            n,
            "rebuilt page keeps its rows: {rebuilt}"
        );
    }
}

/// W1/W2: the first line is a JSONPath (or an `if` condition object), the rest the run
/// document.
pub fn workflow_refs(data: &[u8]) {
    let (path, doc) = split_line(data);
    let Ok(path) = std::str::from_utf8(path) else {
        return;
    };
    let doc = serde_json::from_slice::<Value>(doc).unwrap_or(Value::Null);
    let _ = refs::matches("fuzz", path, &doc);
    let _ = refs::single("fuzz", path, &doc);
    let r = json!({"ref": path});
    let _ = refs::resolve("fuzz", &json!({"a": [r.clone(), {"b": r.clone()}]}), &doc);
    let _ = refs::values("fuzz", &r, &doc);
    if let Ok(cond) = serde_json::from_str::<Value>(path) {
        let _ = refs::condition("fuzz", &cond, &doc);
    }
}

const SIGNING_KEY: &[u8] = b"fuzzing-signing-key-0123456789abcdef";

fn tokens() -> Option<TokenService> {
    TokenService::new(
        SIGNING_KEY,
        Cipher::new(&[7u8; 32]),
        "loopgate",
        "loopgate-runtime",
    )
    .ok()
}

/// Runtime tokens. First byte: `0` the rest is a bearer token as presented; `1` the rest
/// is a claims document signed with the right key (what a leaked key could forge: the
/// claims parser must still refuse nonsense); otherwise a mint request whose round trip
/// must give back exactly what was minted.
pub fn token(data: &[u8]) {
    let Some(service) = tokens() else {
        return;
    };
    let Some((mode, rest)) = data.split_first() else {
        return;
    };
    match mode {
        0 => {
            let _ = service.verify(&String::from_utf8_lossy(rest));
        }
        1 => {
            let Ok(claims) = serde_json::from_slice::<Value>(rest) else {
                return;
            };
            let Ok(key) = jsonwebtoken::EncodingKey::from_secret(SIGNING_KEY) else {
                return;
            };
            if let Ok(signed) =
                jsonwebtoken::encode(&jsonwebtoken::Header::default(), &claims, &key)
            {
                let _ = service.verify(&signed);
            }
        }
        _ => mint_round_trip(&service, rest),
    }
}

fn mint_round_trip(service: &TokenService, rest: &[u8]) {
    let text = String::from_utf8_lossy(rest);
    let mut parts = text.split('\u{1f}');
    let user = parts.next().unwrap_or_default().to_string();
    let agent = parts.next().map(str::to_string);
    let scope = parts.next().map(str::to_string);
    let credentials: HashMap<String, UserCredential> = parts
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            let secret = SecretString::from(v.to_string());
            let binding = None;
            (k.to_string(), UserCredential { secret, binding })
        })
        .collect();
    let org = OrgId::trusted("org_fuzz");
    let req = MintRequest {
        org: &org,
        minted_by: "key_fuzz",
        user_id: &user,
        agent_id: agent.as_deref(),
        cache_scope: scope.as_deref(),
        credentials: &credentials,
        ttl_seconds: 60,
    };
    let Ok((token, _, _)) = service.mint(&req) else {
        return;
    };
    let caller = service
        .verify(&token)
        .unwrap_or_else(|e| panic!("a fresh token verifies: {e}"));
    assert_eq!(caller.org, org);
    assert_eq!(caller.minted_by, "key_fuzz");
    assert_eq!(caller.user_id, user);
    assert_eq!(caller.agent_id, agent);
    assert_eq!(caller.cache_scope, scope);
    assert_eq!(caller.credentials.len(), credentials.len());
    for (k, v) in &credentials {
        let got = caller
            .credentials
            .get(k)
            .map(|s| s.secret.expose_secret().to_string());
        assert_eq!(
            got.as_deref(),
            Some(v.secret.expose_secret()),
            "credential {k}"
        );
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::TARGETS;

    /// Replays every committed corpus input and regression through its target.
    #[test]
    fn corpus_and_regressions_replay_without_a_panic() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
        let mut replayed = 0;
        for (name, run) in TARGETS {
            for kind in ["corpus", "regressions"] {
                let Ok(dir) = std::fs::read_dir(root.join(kind).join(name)) else {
                    continue;
                };
                for entry in dir {
                    let path = entry.unwrap().path();
                    let data = std::fs::read(&path).unwrap();
                    let ok = std::panic::catch_unwind(|| run(&data));
                    assert!(ok.is_ok(), "{name}: {} panics", path.display());
                    replayed += 1;
                }
            }
        }
        assert!(
            replayed >= TARGETS.len(),
            "the corpus is committed ({replayed} inputs)"
        );
    }
}
