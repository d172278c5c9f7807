//! Studio: providers (upstream APIs) and OpenAPI import into tools.

use actix_web::{web, HttpResponse};

use super::audit::{self, Acting};
use super::error::{or_not_found, ApiError, Problem};
use super::extract::Studio;
use super::list::{ListParams, ListResponse};
use crate::api::state::AppState;
use crate::mcp::sync::SyncReport;
use crate::store::providers::{self, Provider};
use crate::store::tools::ToolKind;
use crate::studio;
use crate::studio::providers::{ProviderInput, ProviderPatch};
use crate::studio::toolkits::ConnectionInput;

/// Whether a write carries an OAuth client secret (kept out of the provider as shown).
fn sets_client_secret(c: Option<&ConnectionInput>) -> bool {
    matches!(
        c,
        Some(ConnectionInput::Oauth2 {
            client_secret: Some(_),
            ..
        })
    )
}

/// Create a provider: an HTTP API (`base_url`) or, with `kind: "mcp"`, an MCP server
/// (`url`, its streamable HTTP endpoint).
///
/// The credential (`credential`, or `connection` for per-user credentials) is stored encrypted
/// and never returned. `rate_limit_rps`, `rate_limit_burst` and `concurrency` bound how walks
/// call it. Answers `201`; an MCP server's tools are listed with `POST
/// /v1/providers/{provider_id}/sync`.
#[utoipa::path(post, operation_id = "createProvider", path = "/v1/providers", tag = "studio", request_body(content = ProviderInput, example = json!({"name": "Orders API", "base_url": "https://api.example.com", "auth": {"type": "bearer"}, "credential": "example-api-token", "rate_limit": {"requests_per_second": 10, "burst": 20}, "concurrency": 4})),
    responses((status = 201, body = Provider, example = json!({"id": "prv_FaPIgNHB5YCkPSXiTW2KWu", "org_id": "org_YZoKAaXfA24JkOlfALKMDP", "name": "Orders API", "kind": "api", "base_url": "https://api.example.com", "auth": {"type": "bearer"}, "has_credential": true, "user_credentials_required": false, "rate_limit": {"requests_per_second": 10.0, "burst": 20}, "concurrency": 4, "propagate_trace_context": false, "created_at": "2026-12-07T21:27:02.650682Z", "updated_at": "2026-12-07T21:27:02.650682Z"})), (status = 422, body = Problem)), security(("orgKey" = ["studio"])))]
pub async fn create(
    key: Studio,
    state: web::Data<AppState>,
    body: web::Json<ProviderInput>,
) -> Result<HttpResponse, ApiError> {
    let mut secrets = Vec::new();
    if body.credential.is_some() {
        secrets.push(("credential", false));
    }
    if sets_client_secret(body.connection.as_ref()) {
        secrets.push(("client_secret", false));
    }
    let p =
        studio::providers::create(&state.pool, &state.cipher, &key.org, body.into_inner()).await?;
    audit::created(
        &state,
        &key.org,
        key.actor(),
        ("provider", &p.id),
        &p,
        &secrets,
    )
    .await?;
    Ok(HttpResponse::Created().json(p))
}

/// List providers.
///
/// Paginated, newest first: the first page reports `total`; when `has_more` is true,
/// pass the returned `cursor` back as `?cursor=` to get the next page, until `has_more` is false.
#[utoipa::path(get, operation_id = "listProviders", path = "/v1/providers", tag = "studio", params(ListParams),
    responses((status = 200, body = ListResponse<Provider>, example = json!({"data": [{"id": "prv_FaPIgNHB5YCkPSXiTW2KWu", "org_id": "org_YZoKAaXfA24JkOlfALKMDP", "name": "Orders API", "kind": "api", "base_url": "https://api.example.com", "auth": {"type": "bearer"}, "has_credential": true, "user_credentials_required": false, "rate_limit": {"requests_per_second": 10.0, "burst": 20}, "concurrency": 8, "propagate_trace_context": false, "created_at": "2026-12-07T21:27:02.650682Z", "updated_at": "2026-12-07T21:27:02.663748Z"}], "has_more": false, "cursor": null, "total": 1}))), security(("orgKey" = ["studio"])))]
pub async fn list(
    key: Studio,
    state: web::Data<AppState>,
    q: web::Query<ListParams>,
) -> Result<HttpResponse, ApiError> {
    let page = providers::list(&state.pool, &key.org, &q.page()?).await?;
    Ok(HttpResponse::Ok().json(ListResponse::from(page)))
}

/// Get a provider (its credential is never returned).
///
/// Whether a credential is set is shown; the credential itself is never returned.
#[utoipa::path(get, operation_id = "getProvider", path = "/v1/providers/{provider_id}", tag = "studio",
    responses((status = 200, body = Provider, example = json!({"id": "prv_FaPIgNHB5YCkPSXiTW2KWu", "org_id": "org_YZoKAaXfA24JkOlfALKMDP", "name": "Orders API", "kind": "api", "base_url": "https://api.example.com", "auth": {"type": "bearer"}, "has_credential": true, "user_credentials_required": false, "rate_limit": {"requests_per_second": 10.0, "burst": 20}, "concurrency": 4, "propagate_trace_context": false, "created_at": "2026-12-07T21:27:02.650682Z", "updated_at": "2026-12-07T21:27:02.650682Z"})), (status = 404, body = Problem)), security(("orgKey" = ["studio"])))]
pub async fn get(
    key: Studio,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let p = providers::get(&state.pool, &key.org, &path)
        .await
        .map_err(or_not_found("provider"))?;
    Ok(HttpResponse::Ok().json(p))
}

/// Update a provider; absent fields stay as they are.
///
/// A new `credential` replaces the stored one; cached walks fetched with the old one are never
/// read again (LOOP_ENGINE C2). Answers `200`.
#[utoipa::path(patch, operation_id = "updateProvider", path = "/v1/providers/{provider_id}", tag = "studio", request_body(content = ProviderPatch, example = json!({"concurrency": 8})),
    responses((status = 200, body = Provider, example = json!({"id": "prv_FaPIgNHB5YCkPSXiTW2KWu", "org_id": "org_YZoKAaXfA24JkOlfALKMDP", "name": "Orders API", "kind": "api", "base_url": "https://api.example.com", "auth": {"type": "bearer"}, "has_credential": true, "user_credentials_required": false, "rate_limit": {"requests_per_second": 10.0, "burst": 20}, "concurrency": 8, "propagate_trace_context": false, "created_at": "2026-12-07T21:27:02.650682Z", "updated_at": "2026-12-07T21:27:02.663748Z"})), (status = 404, body = Problem),
        (status = 409, description = "`credential_required`: the origin or auth placement changed without the credential", body = Problem),
        (status = 422, body = Problem)),
    security(("orgKey" = ["studio"])))]
pub async fn update(
    key: Studio,
    state: web::Data<AppState>,
    path: web::Path<String>,
    body: web::Json<ProviderPatch>,
) -> Result<HttpResponse, ApiError> {
    let before = providers::get(&state.pool, &key.org, &path)
        .await
        .map_err(or_not_found("provider"))?;
    let mut secrets = Vec::new();
    if let Some(Some(_)) = body.credential {
        // a rotation: the provider as shown says only `has_credential`
        secrets.push(("credential", before.has_credential));
    }
    if sets_client_secret(body.connection.as_ref()) {
        secrets.push(("client_secret", before.connection.is_some()));
    }
    let p = studio::providers::update(
        &state.pool,
        &state.cipher,
        &key.org,
        &path,
        body.into_inner(),
    )
    .await?;
    audit::updated(
        &state,
        &key.org,
        key.actor(),
        ("provider", &p.id),
        &before,
        &p,
        &secrets,
    )
    .await?;
    Ok(HttpResponse::Ok().json(p))
}

/// Delete a provider and its tools.
///
/// Its tools and their agent bindings go with it. Answers `204`.
#[utoipa::path(delete, operation_id = "deleteProvider", path = "/v1/providers/{provider_id}", tag = "studio",
    responses((status = 204), (status = 404, body = Problem)), security(("orgKey" = ["studio"])))]
pub async fn delete(
    key: Studio,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let before = providers::get(&state.pool, &key.org, &path)
        .await
        .map_err(or_not_found("provider"))?;
    providers::delete(&state.pool, &key.org, &path)
        .await
        .map_err(or_not_found("provider"))?;
    audit::deleted(
        &state,
        &key.org,
        key.actor(),
        ("provider", &before.id),
        Some(&before),
    )
    .await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Sync an MCP provider's tools (M1).
///
/// Lists the MCP server's tools (`tools/list`, every page) with the org's credential and
/// makes them the provider's tools of kind `mcp`: new ones are added, changed ones updated
/// in place (agent bindings kept), the ones the server no longer lists removed. The answer
/// holds the provider's tools and what changed (`added`, `updated`, `removed` by name,
/// `unchanged`, and `skipped` tools with the reason).
#[utoipa::path(post, path = "/v1/providers/{provider_id}/sync", tag = "studio",
    responses((status = 200, body = SyncReport), (status = 404, body = Problem), (status = 422, body = Problem),
              (status = 502, body = Problem)),
    security(("orgKey" = ["studio"])))]
pub async fn sync(
    key: Studio,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let provider = providers::get(&state.pool, &key.org, &path)
        .await
        .map_err(or_not_found("provider"))?;
    if provider.kind != ToolKind::Mcp {
        return Err(ApiError::invalid(
            "only an MCP provider (kind mcp) can be synced; an API provider's tools come from an OpenAPI import or POST /v1/tools",
        ));
    }
    let report = crate::mcp::sync::sync(&state.runtime, &key.org, &provider).await?;
    // the sync's own account of what it changed in the provider's tools
    let tools = serde_json::json!({ "tools": &report.changes });
    let w = audit::Write {
        org: &key.org,
        actor: key.actor(),
        resource: "provider",
        id: &provider.id,
        action: crate::store::audit_events::Action::Update,
    };
    if report.changes.changed() {
        audit::record(&state, w, None::<&()>, Some(&tools), &[]).await?;
    }
    Ok(HttpResponse::Ok().json(report))
}
