//! Customer backends: mint runtime tokens for their end users.

use std::collections::HashMap;

use actix_web::{web, HttpResponse};
use chrono::{DateTime, Utc};
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::error::{ApiError, Problem};
use super::extract::Mint;
use crate::api::state::AppState;
use crate::auth::tokens::{MintRequest, DEFAULT_TTL_SECONDS, MAX_TTL_SECONDS};
use crate::auth::UserCredential;
use crate::store::{agents, providers, token_revocations};

/// The most providers one token carries credentials for.
const MAX_CREDENTIALS: usize = 100;

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RuntimeTokenInput {
    /// Your end user's id; threads and per-user credentials are scoped by it.
    pub user_id: String,
    /// Limit the token to one agent.
    pub agent_id: Option<String>,
    /// The user's own secrets by provider id (at most 100); sealed inside the token, never
    /// readable from it, and bound to the provider's origin and auth placement as they are
    /// now: should either change, the secret is not sent (`409 credential_required`).
    #[serde(default)]
    #[schema(value_type = HashMap<String, String>)]
    pub credentials: HashMap<String, SecretString>,
    /// Share cached datasets across every user minted with the same scope (inside the org).
    pub cache_scope: Option<String>,
    /// Lifetime, 60–86400 seconds (default 3600).
    #[schema(minimum = 60, maximum = 86400)]
    pub ttl_seconds: Option<i64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RuntimeToken {
    pub token: String,
    /// The token's id (`rt_…`): `DELETE /v1/runtime-tokens/{id}` revokes it.
    pub id: String,
    pub expires_at: DateTime<Utc>,
}

fn check_label(field: &str, v: &str) -> Result<(), ApiError> {
    if v.is_empty() || v.len() > 200 || v.chars().any(char::is_control) {
        return Err(ApiError::invalid(format!(
            "{field} must be 1 to 200 printable characters"
        )));
    }
    Ok(())
}

/// Mint a runtime token for one of your users.
///
/// For the backend that serves your users (org key with scope `mint`): the token (a JWT,
/// `token`) names `user_id`, expires after `ttl_seconds`, and is what an agent runtime sends as
/// `Authorization: Bearer` for that user's tool calls. Answers `201`.
#[utoipa::path(post, operation_id = "createRuntimeToken", path = "/v1/runtime-tokens", tag = "runtime", request_body(content = RuntimeTokenInput, example = json!({"user_id": "user-42", "ttl_seconds": 3600})),
    responses((status = 201, body = RuntimeToken, example = json!({"token": "eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyLTQyIn0.example-signature", "id": "rt_yQu4p04razMr2Yz6SRfK9P", "expires_at": "2026-12-07T22:27:02Z"})), (status = 403, body = Problem), (status = 422, body = Problem)),
    security(("orgKey" = ["mint"])))]
pub async fn mint(
    key: Mint,
    state: web::Data<AppState>,
    body: web::Json<RuntimeTokenInput>,
) -> Result<HttpResponse, ApiError> {
    check_label("user_id", &body.user_id)?;
    // `key:<id>` names an org key's own connections and threads; no user may take it
    if body.user_id.starts_with("key:") {
        return Err(ApiError::invalid("user_id may not start with 'key:'"));
    }
    if let Some(cs) = &body.cache_scope {
        check_label("cache_scope", cs)?;
    }
    let ttl = body.ttl_seconds.unwrap_or(DEFAULT_TTL_SECONDS);
    if !(60..=MAX_TTL_SECONDS).contains(&ttl) {
        return Err(ApiError::invalid(format!(
            "ttl_seconds must be between 60 and {MAX_TTL_SECONDS}"
        )));
    }
    if let Some(agent) = &body.agent_id {
        agents::get(&state.pool, &key.org, agent)
            .await
            .map_err(|_| {
                ApiError::invalid(format!("agent_id '{agent}' is not an agent of this org"))
            })?;
    }
    if body.credentials.len() > MAX_CREDENTIALS {
        return Err(ApiError::invalid(format!(
            "credentials: at most {MAX_CREDENTIALS} providers"
        )));
    }
    if body
        .credentials
        .values()
        .any(|s| s.expose_secret().is_empty() || s.expose_secret().len() > 8192)
    {
        return Err(ApiError::invalid("each credential must be 1 to 8192 bytes"));
    }
    let ids: Vec<String> = body.credentials.keys().cloned().collect();
    let mut bindings = providers::credential_bindings(&state.pool, &key.org, &ids).await?;
    let mut credentials = HashMap::with_capacity(ids.len());
    for (id, secret) in &body.credentials {
        let Some(binding) = bindings.remove(id) else {
            return Err(ApiError::invalid(format!(
                "credentials: '{id}' is not a provider of this org"
            )));
        };
        let secret = secret.clone();
        credentials.insert(id.clone(), UserCredential { secret, binding });
    }
    let (token, id, expires_at) = state
        .tokens
        .mint(&MintRequest {
            org: &key.org,
            minted_by: &key.key_id,
            user_id: &body.user_id,
            agent_id: body.agent_id.as_deref(),
            cache_scope: body.cache_scope.as_deref(),
            credentials: &credentials,
            ttl_seconds: ttl,
        })
        .map_err(|e| ApiError::Internal(e.into()))?;
    Ok(HttpResponse::Created().json(RuntimeToken {
        token,
        id,
        expires_at,
    }))
}

/// Revoke a runtime token of your org by its id: it stops working at once on this
/// replica and within seconds on the others. Revoking the API key that minted a token
/// revokes the token too.
///
/// Answers `204`; an unknown id is `404`.
#[utoipa::path(delete, operation_id = "revokeRuntimeToken", path = "/v1/runtime-tokens/{token_id}", tag = "runtime",
    params(("token_id" = String, Path, description = "The token's id (`rt_…`), returned when it was minted")),
    responses((status = 204, description = "Revoked (idempotent)"), (status = 404, body = Problem), (status = 422, body = Problem)),
    security(("orgKey" = ["mint"])))]
pub async fn revoke(
    key: Mint,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = path.into_inner();
    if !id.starts_with("rt_")
        || id.len() > 64
        || !id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    {
        return Err(ApiError::invalid(
            "token_id must be a runtime token id (`rt_…`)",
        ));
    }
    let until = Utc::now() + chrono::Duration::seconds(MAX_TTL_SECONDS);
    token_revocations::revoke(&state.pool, &key.org, &id, until).await?;
    state.auth_guard.forget_alive_tokens();
    Ok(HttpResponse::NoContent().finish())
}
