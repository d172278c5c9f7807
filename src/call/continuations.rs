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
    pub point: ResumePoint,
    /// Rows the stored result holds.
    pub rows: usize,
    pub errors: Vec<ForEachError>,
    pub expires_at: DateTime<Utc>,
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
pub fn arguments_for(given: &Value, c: &Continuation) -> Value {
    let own = walk_arguments(given);
    if own.as_object().is_some_and(|m| !m.is_empty()) {
        return given.clone();
    }
    let mut m = c.arguments.as_object().cloned().unwrap_or_default();
    if let Value::Object(g) = given {
        m.extend(g.iter().map(|(k, v)| (k.clone(), v.clone())));
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
            point: ResumePoint { pending: vec![] },
            rows: 0,
            errors: vec![],
            expires_at: Utc::now() + chrono::Duration::minutes(5),
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
