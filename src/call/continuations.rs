//! P10: `_continue` tokens. A walk stopped by a bound leaves a continuation — the stored
//! result it grows, the tool, the walk's identity (upstream arguments and fan-out values),
//! the engine's resume point — kept server-side under a random token in the thread's
//! key space. So a token is opaque and tamper-proof (there is nothing in it to alter), and
//! bound to the org, the caller and the thread (another thread's key space does not hold
//! it). It is valid as long as its stored result, and used once: redeeming it claims it,
//! so two calls can never append the same rows twice.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::time::Duration;

use crate::crypto::random_token;
use crate::kv::{Kv, KvError};
use crate::results::stored_results::{ResultError, ThreadKey};
use loopgate_engine::plan::ForEachError;
use loopgate_engine::{EngineError, ResumePoint};

/// How long a token is remembered after it expired or was used, to say so precisely
/// (by markers holding no data: the continuation itself, with the caller's arguments,
/// lives only as long as its stored result).
const REMEMBER: Duration = Duration::from_secs(24 * 3600);

/// What a `_continue` stands for.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Continuation {
    pub result_id: String,
    pub tool_id: String,
    /// `CallPlan::cache_identity()` of the walk: a resumed call must be the same walk.
    pub identity: Value,
    /// The call's own arguments and walk arguments (not `_fields`/`_filter`/`_refresh`/
    /// `_continue`), so a call that passes only `_continue` resumes the same walk.
    pub arguments: Value,
    /// P10: the call's `_fields` and `_filter`, carried to a resuming call that does not
    /// set its own, so a resumed walk is shaped like the call it continues.
    #[serde(default)]
    pub shaping: serde_json::Map<String, Value>,
    pub point: ResumePoint,
    /// Rows the stored result holds.
    pub rows: usize,
    pub errors: Vec<ForEachError>,
    pub expires_at: DateTime<Utc>,
    /// E6: the values the call's references to stored results read; a resumed call walks
    /// these, even when the result they came from has expired since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<crate::call::value_refs::ReadValues>,
}

fn key(t: &ThreadKey, token: &str) -> String {
    format!("lg:{}:{}:cont:{token}", t.org, t.thread_id)
}

/// Outlives the continuation to tell an expired token from a foreign one; holds the
/// result id only.
fn gone(key: &str) -> String {
    format!("{key}:gone")
}

fn invalid(detail: impl Into<String>) -> crate::call::RuntimeError {
    EngineError::invalid(detail).into()
}

/// Keeps a continuation; returns its token.
pub async fn save(kv: &Kv, t: &ThreadKey, c: &Continuation) -> Result<String, KvError> {
    let token = format!("cont_{}", random_token(32));
    let json = serde_json::to_string(c).unwrap_or_default();
    let key = key(t, &token);
    kv.set(&key, &json, kv.result_ttl()).await?;
    kv.set(&gone(&key), &c.result_id, kv.result_ttl() + REMEMBER)
        .await?;
    Ok(token)
}

/// Redeems a token for this thread and tool at `now`, claiming it for `claim` (the lease of
/// a walk, `dataset_cache::walk_lease`: it outlives the walk it resumes, so no second call redeems
/// it meanwhile); the claim is given
/// back with [`release`] when the resumed walk fails.
pub async fn redeem(
    kv: &Kv,
    t: &ThreadKey,
    token: &str,
    tool_id: &str,
    now: DateTime<Utc>,
    claim: Duration,
) -> Result<Continuation, crate::call::RuntimeError> {
    let Some(text) = kv.get(&key(t, token)).await? else {
        if let Some(result_id) = kv.get(&gone(&key(t, token))).await? {
            return Err(ResultError::expired(kv, result_id).into());
        }
        return Err(invalid(
            "`_continue` is not a continuation of this conversation: pass back, unchanged, the `_continue` \
             of the latest result of this tool here, or call the tool without it to start a fresh walk.",
        ));
    };
    let c: Continuation = serde_json::from_str(&text)
        .map_err(|e| crate::call::RuntimeError::Internal(anyhow::anyhow!("continuation: {e}")))?;
    if c.tool_id != tool_id {
        return Err(invalid(
            "`_continue` belongs to another tool: pass it to the tool whose result returned it.",
        ));
    }
    if now >= c.expires_at {
        return Err(ResultError::expired(kv, c.result_id).into());
    }
    if !kv
        .set_nx(&format!("{}:claimed", key(t, token)), "1", claim)
        .await?
    {
        return Err(invalid(
            "this `_continue` was already used: pass the `_continue` of the latest result instead \
             (a result without `_continue` is complete or cannot be resumed).",
        ));
    }
    Ok(c)
}

/// The walk resumed from `token` finished: the token can never be used again.
pub async fn spend(kv: &Kv, t: &ThreadKey, token: &str) -> Result<(), KvError> {
    kv.set(&format!("{}:claimed", key(t, token)), "1", REMEMBER)
        .await
}

/// The walk resumed from `token` failed: the token may be used again.
pub async fn release(kv: &Kv, t: &ThreadKey, token: &str) -> Result<(), KvError> {
    kv.del(&format!("{}:claimed", key(t, token))).await
}

/// Arguments that only shape what is shown (or redeem a token): not part of the walk.
const SHAPE_ARGS: [&str; 4] = ["_fields", "_filter", "_refresh", "_continue"];

/// The arguments a resuming call inherits unless it sets its own.
const CARRIED: [&str; 2] = ["_fields", "_filter"];

/// P10: the `_fields` and `_filter` of a call, kept with its continuation.
pub fn shaping_of(given: &Value) -> serde_json::Map<String, Value> {
    CARRIED
        .iter()
        .filter_map(|k| Some(((*k).to_owned(), given.get(*k)?.clone())))
        .collect()
}

/// The walk's own arguments of a call: without the shaping ones.
pub fn walk_arguments(given: &Value) -> Value {
    let mut m = given.as_object().cloned().unwrap_or_default();
    for k in SHAPE_ARGS {
        m.remove(k);
    }
    Value::Object(m)
}

/// A call that passes only `_continue` (and shaping arguments) resumes with the walk
/// arguments of the call it continues; any other call is taken as given, and must then
/// be the same walk.
///
/// Either way the call keeps the first call's `_fields` and `_filter` unless it sets its
/// own (P10).
pub fn arguments_for(given: &Value, c: &Continuation) -> Value {
    let own = walk_arguments(given);
    let mut m = if own.as_object().is_some_and(|m| !m.is_empty()) {
        given.as_object().cloned().unwrap_or_default()
    } else {
        let mut m = c.arguments.as_object().cloned().unwrap_or_default();
        if let Value::Object(g) = given {
            m.extend(g.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        m
    };
    for (k, v) in &c.shaping {
        if !m.contains_key(k) {
            m.insert(k.clone(), v.clone());
        }
    }
    Value::Object(m)
}

/// Refuses a resumed call that is not the same walk.
pub fn check_same_walk(
    identity: &Value,
    c: &Continuation,
) -> Result<(), crate::call::RuntimeError> {
    if *identity == c.identity {
        return Ok(());
    }
    Err(invalid(format!(
        "`_continue` continues a call with other arguments: call the tool again with exactly {} plus `_continue` \
         (or with `_continue` alone), or without `_continue` to start a fresh walk.",
        c.arguments
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kv::{connect, TEST_BUDGET, TEST_RESULT_TTL};

    fn cont(arguments: Value, first_call: &Value) -> Continuation {
        Continuation {
            result_id: "res_1".into(),
            tool_id: "tool_1".into(),
            identity: Value::Null,
            arguments,
            shaping: shaping_of(first_call),
            point: ResumePoint { pending: vec![] },
            rows: 0,
            errors: vec![],
            expires_at: Utc::now(),
            read: None,
        }
    }

    /// P10: a resuming call keeps the first call's `_fields` and `_filter` unless it sets
    /// its own, whether it passes `_continue` alone or with the walk's arguments.
    #[test]
    fn p10_continue_carries_the_first_calls_fields_and_filter() {
        use serde_json::json;
        let first = json!({"state": "open", "_all_pages": true, "_fields": ["id"],
            "_filter": {"status": "done"}, "_refresh": true});
        let c = cont(walk_arguments(&first), &first);
        assert_eq!(
            c.shaping.keys().collect::<Vec<_>>(),
            ["_fields", "_filter"],
            "only the shaping that carries over"
        );
        let alone = arguments_for(&json!({"_continue": "cont_x"}), &c);
        assert_eq!(alone["_fields"], json!(["id"]));
        assert_eq!(alone["_filter"], json!({"status": "done"}));
        assert_eq!(alone["state"], "open");
        assert!(alone.get("_refresh").is_none());
        let with_args = arguments_for(
            &json!({"state": "open", "_all_pages": true, "_continue": "cont_x"}),
            &c,
        );
        assert_eq!(with_args["_fields"], json!(["id"]));
        let own = arguments_for(&json!({"_continue": "cont_x", "_fields": ["name"]}), &c);
        assert_eq!(
            own["_fields"],
            json!(["name"]),
            "the resuming call's own wins"
        );
        assert_eq!(own["_filter"], json!({"status": "done"}));
        let none = cont(walk_arguments(&json!({"a": 1})), &json!({"a": 1}));
        let plain = arguments_for(&json!({"_continue": "cont_x"}), &none);
        assert!(plain.get("_fields").is_none() && plain.get("_filter").is_none());
    }

    /// P10: a redeemed token stays claimed as long as the walk it resumes may run (the
    /// configured `limit_wall_seconds` plus margin), not a fixed 90 s: a second call
    /// meanwhile is refused rather than appending the same rows twice.
    #[tokio::test]
    async fn p10_a_claim_outlives_the_configured_walk() {
        let Some(url) = crate::testing::redis_url() else {
            return;
        };
        let redis = connect(&url, TEST_BUDGET).unwrap();
        let kv = Kv::new(Some(redis.clone()), None, TEST_BUDGET, TEST_RESULT_TTL);
        let t = ThreadKey {
            org: crate::store::OrgId::trusted(format!("org_test_{}", random_token(8))),
            thread_id: "thr_claim".into(),
        };
        let c = Continuation {
            result_id: "res_1".into(),
            tool_id: "tool_1".into(),
            identity: Value::Null,
            arguments: Value::Null,
            shaping: Default::default(),
            point: ResumePoint { pending: vec![] },
            rows: 0,
            errors: vec![],
            expires_at: Utc::now() + chrono::Duration::minutes(5),
            read: None,
        };
        let token = save(&kv, &t, &c).await.unwrap();
        let claim = crate::results::dataset_cache::walk_lease(Duration::from_secs(600));
        redeem(&kv, &t, &token, "tool_1", Utc::now(), claim)
            .await
            .unwrap();
        let mut conn = redis.clone();
        let pttl: i64 = redis::cmd("PTTL")
            .arg(format!("{}:claimed", key(&t, &token)))
            .query_async(&mut conn)
            .await
            .unwrap();
        assert!(pttl > 600_000, "claimed for {pttl} ms");
        assert!(redeem(&kv, &t, &token, "tool_1", Utc::now(), claim)
            .await
            .is_err());
    }
}
