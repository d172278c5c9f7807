//! Admin: an org's API keys (secret shown once; listed without secrets; revoked).

use actix_web::{web, HttpResponse};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::audit::{self, Acting};
use super::error::{or_not_found, ApiError, Problem};
use super::extract::AdminOrg;
use super::list::{ListParams, ListResponse};
use super::validate::name;
use crate::api::state::AppState;
use crate::store::api_keys::{self, ApiKey, Scope};

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ApiKeyInput {
    pub name: String,
    /// Any of `studio`, `mint`, `runtime`.
    pub scopes: Vec<Scope>,
}

/// The created key with its secret, returned only this once.
#[derive(Debug, Serialize, ToSchema)]
pub struct CreatedApiKey {
    #[serde(flatten)]
    pub api_key: ApiKey,
    /// The bearer secret; store it now, it cannot be read again.
    pub key: String,
}

/// Create an API key for an org.
///
/// Admin token only. The secret (`key`, `lgk_…`) is in this answer and never again; `scopes`
/// name what it may do (`studio` configuration, `mint` runtime tokens and connections,
/// `runtime` tool calls). Answers `201`.
#[utoipa::path(post, operation_id = "createApiKey", path = "/v1/orgs/{org_id}/api-keys", tag = "admin", params(("org_id" = String, Path, description = "The org")), request_body(content = ApiKeyInput, example = json!({"name": "backend", "scopes": ["studio", "mint", "runtime"]})),
    responses((status = 201, body = CreatedApiKey, example = json!({"id": "key_yhR1tyfzsmkM9JNsUzUkoU", "org_id": "org_YZoKAaXfA24JkOlfALKMDP", "name": "backend", "scopes": ["mint", "runtime", "studio"], "created_at": "2026-12-07T21:27:02.612473Z", "revoked_at": null, "last_used_at": null, "key": "lgk_yhR1tyfzsmkM9JNsUzUkoU_shown-once-never-again-example"})), (status = 404, body = Problem), (status = 422, body = Problem)),
    security(("adminToken" = [])))]
pub async fn create(
    admin: AdminOrg,
    state: web::Data<AppState>,
    body: web::Json<ApiKeyInput>,
) -> Result<HttpResponse, ApiError> {
    if body.scopes.is_empty() {
        return Err(ApiError::invalid(
            "scopes must name at least one of studio, mint, runtime",
        ));
    }
    let mut scopes = body.scopes.clone();
    scopes.sort_by_key(|s| s.as_str());
    scopes.dedup();
    let org = &admin.0;
    let (api_key, key) = api_keys::create(&state.pool, org, name(&body.name)?, &scopes).await?;
    // the key as listed: its secret is shown once to the caller, never to the trail
    audit::created(
        &state,
        org,
        admin.actor(),
        ("api_key", &api_key.id),
        &api_key,
        &[],
    )
    .await?;
    Ok(HttpResponse::Created().json(CreatedApiKey { api_key, key }))
}

/// List an org's API keys (never their secrets).
///
/// Paginated, newest first: the first page reports `total`; when `has_more` is true,
/// pass the returned `cursor` back as `?cursor=` to get the next page, until `has_more` is false.
#[utoipa::path(get, operation_id = "listApiKeys", path = "/v1/orgs/{org_id}/api-keys", tag = "admin", params(("org_id" = String, Path, description = "The org"), ListParams),
    responses((status = 200, body = ListResponse<ApiKey>, example = json!({"data": [{"id": "key_yhR1tyfzsmkM9JNsUzUkoU", "org_id": "org_YZoKAaXfA24JkOlfALKMDP", "name": "backend", "scopes": ["mint", "runtime", "studio"], "created_at": "2026-12-07T21:28:54.345137Z", "revoked_at": null, "last_used_at": "2026-12-07T21:28:54.386471Z"}], "has_more": false, "cursor": null, "total": 1})), (status = 404, body = Problem)), security(("adminToken" = [])))]
pub async fn list(
    AdminOrg(org): AdminOrg,
    state: web::Data<AppState>,
    q: web::Query<ListParams>,
) -> Result<HttpResponse, ApiError> {
    let page = api_keys::list(&state.pool, &org, &q.page()?).await?;
    Ok(HttpResponse::Ok().json(ListResponse::from(page)))
}

/// Get one API key (without its secret).
///
/// Admin token only. The key's name, scopes, creation and revocation times; its secret is never
/// shown again.
#[utoipa::path(get, operation_id = "getApiKey", path = "/v1/orgs/{org_id}/api-keys/{key_id}", tag = "admin",
    responses((status = 200, body = ApiKey, example = json!({"id": "key_yhR1tyfzsmkM9JNsUzUkoU", "org_id": "org_YZoKAaXfA24JkOlfALKMDP", "name": "backend", "scopes": ["mint", "runtime", "studio"], "created_at": "2026-12-07T21:27:02.612473Z", "revoked_at": null, "last_used_at": null})), (status = 404, body = Problem)), security(("adminToken" = [])))]
pub async fn get(
    AdminOrg(org): AdminOrg,
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (_, key_id) = path.into_inner();
    let key = api_keys::get(&state.pool, &org, &key_id)
        .await
        .map_err(or_not_found("API key"))?;
    Ok(HttpResponse::Ok().json(key))
}

/// Revoke an API key; it stops working at once. Returns the revoked key.
///
/// Admin token only. Runtime tokens it minted stop working too.
#[utoipa::path(delete, operation_id = "revokeApiKey", path = "/v1/orgs/{org_id}/api-keys/{key_id}", tag = "admin",
    responses((status = 200, body = ApiKey, example = json!({"id": "key_yhR1tyfzsmkM9JNsUzUkoU", "org_id": "org_YZoKAaXfA24JkOlfALKMDP", "name": "backend", "scopes": ["mint", "runtime", "studio"], "created_at": "2026-12-07T21:28:54.345137Z", "revoked_at": "2026-12-07T21:28:54.814905Z", "last_used_at": "2026-12-07T21:28:54.386471Z"})), (status = 404, body = Problem)), security(("adminToken" = [])))]
pub async fn revoke(
    admin: AdminOrg,
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (_, key_id) = path.into_inner();
    let org = &admin.0;
    let before = api_keys::get(&state.pool, org, &key_id)
        .await
        .map_err(or_not_found("API key"))?;
    let key = api_keys::revoke(&state.pool, org, &key_id)
        .await
        .map_err(or_not_found("API key"))?;
    audit::deleted(
        &state,
        org,
        admin.actor(),
        ("api_key", &key.id),
        Some(&before),
    )
    .await?;
    // the tokens it minted die with it
    state.auth_guard.forget_alive_tokens();
    Ok(HttpResponse::Ok().json(key))
}
