//! Studio: providers (upstream APIs) and OpenAPI import into tools.

use actix_web::{web, HttpResponse};
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use utoipa::ToSchema;

use super::error::{or_not_found, ApiError, Problem};
use super::extract::Studio;
use super::list::{ListParams, ListResponse};
use super::toolkits::{self, ConnectionInput};
use super::validate::{base_url, double_option, endpoint_url, name};
use crate::api::state::AppState;
use crate::crypto::new_id;
use crate::mcp::sync::SyncReport;
use crate::store::connections;
use crate::store::providers::{
    self, AuthType, CredentialBinding, CredentialChange, Provider, ProviderAuth, ProviderFields,
    RateLimit,
};
use crate::store::tools::ToolKind;

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProviderInput {
    pub name: String,
    /// `api` (an HTTP API, the default), `mcp` (an MCP server over streamable HTTP) or
    /// `app` (a connected-app toolkit). Fixed once created; the provider's tools get it.
    #[serde(default)]
    pub kind: ToolKind,
    /// The API's base URL (kinds `api` and `app`).
    pub base_url: Option<String>,
    /// The MCP server's streamable HTTP endpoint (kind `mcp`).
    pub url: Option<String>,
    pub auth: ProviderAuth,
    /// The org-level secret; encrypted at rest, never returned.
    #[schema(value_type = Option<String>)]
    pub credential: Option<SecretString>,
    #[serde(default)]
    pub user_credentials_required: bool,
    pub rate_limit: Option<RateLimit>,
    /// P9: requests one walk keeps in flight at once against this provider, 1 to 32
    /// (default 4); the rate limit still spaces them. 1 walks one page at a time.
    pub concurrency: Option<u32>,
    /// Kind `app`: the toolkit its tools belong to, `[A-Za-z0-9_-]{1,64}`, unique in the org.
    pub toolkit: Option<String>,
    /// Kind `app`: how end users connect the toolkit.
    pub connection: Option<ConnectionInput>,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProviderPatch {
    pub name: Option<String>,
    /// Accepted only when it equals the provider's kind, which never changes.
    pub kind: Option<ToolKind>,
    pub base_url: Option<String>,
    /// A new MCP endpoint (kind `mcp`).
    pub url: Option<String>,
    pub auth: Option<ProviderAuth>,
    /// A new secret, or `null` to remove the stored one.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    pub credential: Option<Option<SecretString>>,
    pub user_credentials_required: Option<bool>,
    /// New limits, or `null` to remove them.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<RateLimit>)]
    pub rate_limit: Option<Option<RateLimit>>,
    /// A new concurrency bound (1 to 32), or `null` for the default.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<u32>)]
    pub concurrency: Option<Option<u32>>,
    /// Kind `app`: a new toolkit name.
    pub toolkit: Option<String>,
    /// Kind `app`: a new connection configuration (the client secret is kept unless given).
    pub connection: Option<ConnectionInput>,
}

/// The provider's address for its kind: an MCP server's `url` (or `base_url`, the same
/// thing), an API's `base_url`.
fn address(
    kind: ToolKind,
    base: Option<String>,
    url: Option<String>,
) -> Result<Option<String>, ApiError> {
    match kind {
        ToolKind::Mcp => {
            if let (Some(b), Some(u)) = (&base, &url) {
                if b != u {
                    return Err(ApiError::invalid(
                        "an MCP provider has one address: give `url` (its streamable HTTP endpoint) only",
                    ));
                }
            }
            url.or(base).map(|u| endpoint_url(&u)).transpose()
        }
        ToolKind::Api | ToolKind::App => {
            if url.is_some() {
                return Err(ApiError::invalid(
                    "`url` is the endpoint of an MCP server (kind mcp); an API provider takes `base_url`",
                ));
            }
            base.map(|b| base_url(&b)).transpose()
        }
    }
}

fn required_address(kind: ToolKind, a: Option<String>) -> Result<String, ApiError> {
    a.ok_or_else(|| {
        ApiError::invalid(match kind {
            ToolKind::Mcp => {
                "url is required for kind mcp: the MCP server's streamable HTTP endpoint"
            }
            _ => "base_url is required: the API's absolute http(s) base URL",
        })
    })
}

fn check(f: ProviderFields) -> Result<ProviderFields, ApiError> {
    let name_ok = name(&f.name)?.to_string();
    let auth = match f.auth.kind {
        AuthType::Header | AuthType::Query => {
            let n = f.auth.name.as_deref().map(str::trim).unwrap_or("");
            if n.is_empty() || n.len() > 100 || !n.bytes().all(|b| b.is_ascii_graphic()) {
                return Err(ApiError::invalid(
                    "auth.name is required for auth type header or query: the header or query parameter that carries the credential",
                ));
            }
            ProviderAuth {
                kind: f.auth.kind,
                name: Some(n.to_string()),
            }
        }
        _ => ProviderAuth {
            kind: f.auth.kind,
            name: None,
        },
    };
    if let Some(r) = &f.rate_limit {
        if !(r.requests_per_second > 0.0 && r.requests_per_second <= 10_000.0)
            || r.burst == 0
            || r.burst > 10_000
        {
            return Err(ApiError::invalid(
                "rate_limit.requests_per_second must be in (0, 10000] and rate_limit.burst in [1, 10000]",
            ));
        }
    }
    if f.concurrency
        .is_some_and(|c| !(1..=MAX_CONCURRENCY).contains(&c))
    {
        return Err(ApiError::invalid(format!(
            "concurrency must be in [1, {MAX_CONCURRENCY}]"
        )));
    }
    Ok(ProviderFields {
        name: name_ok,
        auth,
        ..f
    })
}

/// P9: the most requests one walk may keep in flight against a provider.
const MAX_CONCURRENCY: u32 = 32;

fn seal(state: &AppState, provider_id: &str, secret: &SecretString) -> Result<Vec<u8>, ApiError> {
    let s = secret.expose_secret();
    if s.is_empty() || s.len() > 8192 {
        return Err(ApiError::invalid("credential must be 1 to 8192 bytes"));
    }
    Ok(state.cipher.encrypt(s.as_bytes(), provider_id.as_bytes()))
}

/// Create a provider: an HTTP API (`base_url`) or, with `kind: "mcp"`, an MCP server
/// (`url`, its streamable HTTP endpoint).
#[utoipa::path(post, operation_id = "createProvider", path = "/v1/providers", tag = "studio", request_body = ProviderInput,
    responses((status = 201, body = Provider), (status = 422, body = Problem)), security(("orgKey" = ["studio"])))]
pub async fn create(
    key: Studio,
    state: web::Data<AppState>,
    body: web::Json<ProviderInput>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let addr = address(body.kind, body.base_url, body.url)?;
    let fields = check(ProviderFields {
        name: body.name,
        kind: body.kind,
        base_url: required_address(body.kind, addr)?,
        auth: body.auth,
        user_credentials_required: body.user_credentials_required,
        rate_limit: body.rate_limit,
        concurrency: body.concurrency,
    })?;
    let id = new_id("prv");
    let sealed = body
        .credential
        .as_ref()
        .map(|c| seal(&state, &id, c))
        .transpose()?;
    let p = providers::create(&state.pool, &key.org, &id, &fields, sealed).await?;
    let p = match toolkits::apply(&state, &key.org, p, body.toolkit, body.connection).await {
        Ok(p) => p,
        Err(e) => {
            // all or nothing: a toolkit that cannot be stored leaves no provider behind
            providers::delete(&state.pool, &key.org, &id).await?;
            return Err(e);
        }
    };
    Ok(HttpResponse::Created().json(p))
}

/// List providers.
///
/// Paginated, newest first: the first page reports `total`; when `has_more` is true,
/// pass the returned `cursor` back as `?cursor=` to get the next page, until `has_more` is false.
#[utoipa::path(get, operation_id = "listProviders", path = "/v1/providers", tag = "studio", params(ListParams),
    responses((status = 200, body = ListResponse<Provider>)), security(("orgKey" = ["studio"])))]
pub async fn list(
    key: Studio,
    state: web::Data<AppState>,
    q: web::Query<ListParams>,
) -> Result<HttpResponse, ApiError> {
    let page = providers::list(&state.pool, &key.org, &q.page()?).await?;
    Ok(HttpResponse::Ok().json(ListResponse::from(page)))
}

/// Get a provider (its credential is never returned).
#[utoipa::path(get, operation_id = "getProvider", path = "/v1/providers/{provider_id}", tag = "studio",
    responses((status = 200, body = Provider), (status = 404, body = Problem)), security(("orgKey" = ["studio"])))]
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
#[utoipa::path(patch, operation_id = "updateProvider", path = "/v1/providers/{provider_id}", tag = "studio", request_body = ProviderPatch,
    responses((status = 200, body = Provider), (status = 404, body = Problem),
        (status = 409, description = "`credential_required`: the origin or auth placement changed without the credential", body = Problem),
        (status = 422, body = Problem)),
    security(("orgKey" = ["studio"])))]
pub async fn update(
    key: Studio,
    state: web::Data<AppState>,
    path: web::Path<String>,
    body: web::Json<ProviderPatch>,
) -> Result<HttpResponse, ApiError> {
    let cur = providers::get(&state.pool, &key.org, &path)
        .await
        .map_err(or_not_found("provider"))?;
    let body = body.into_inner();
    if body.kind.is_some_and(|k| k != cur.kind) {
        return Err(ApiError::invalid(
            "a provider's kind cannot change: create a new provider of the other kind",
        ));
    }
    let addr = address(cur.kind, body.base_url, body.url)?;
    let fields = check(ProviderFields {
        name: body.name.unwrap_or_else(|| cur.name.clone()),
        kind: cur.kind,
        base_url: addr.unwrap_or_else(|| cur.base_url.clone()),
        auth: body.auth.unwrap_or_else(|| cur.auth.clone()),
        user_credentials_required: body
            .user_credentials_required
            .unwrap_or(cur.user_credentials_required),
        rate_limit: body.rate_limit.unwrap_or_else(|| cur.rate_limit.clone()),
        concurrency: body.concurrency.unwrap_or(cur.concurrency),
    })?;
    toolkits::check_binding(&cur, &fields.base_url, body.connection.as_ref())?;
    // Re-entering the client secret does not cover users' refresh tokens: they would go
    // to the new token endpoint on their next refresh, so with connections it cannot move.
    if toolkits::token_origin_moves(&cur, body.connection.as_ref())
        && connections::any_oauth(&state.pool, &key.org, &cur.id).await?
    {
        return Err(ApiError::Conflict(
            "users have OAuth connections made through this provider: their refresh tokens \
             belong to its token endpoint, so connection.token_url cannot move to another \
             origin (nor be set after another connection type). Create a new provider for \
             the new authorization server, or delete those connections first"
                .into(),
        ));
    }
    let change = match &body.credential {
        None if cur.has_credential && !same_binding(&cur, &fields) => {
            return Err(ApiError::CredentialRequired(
                "changing the address (base_url or url) to another origin, or the auth type or name, sends the stored \
                 credential somewhere new: send `credential` again in the same request (or \
                 `\"credential\": null` to remove it)"
                    .into(),
            ))
        }
        None => CredentialChange::Keep,
        Some(None) => CredentialChange::Clear,
        Some(Some(c)) => CredentialChange::Set(seal(&state, &cur.id, c)?),
    };
    let p = providers::update(&state.pool, &key.org, &cur.id, &fields, change)
        .await
        .map_err(or_not_found("provider"))?;
    let p = toolkits::apply(&state, &key.org, p, body.toolkit, body.connection).await?;
    Ok(HttpResponse::Ok().json(p))
}

/// A stored credential is bound to where it goes ([`CredentialBinding`]): a studio key
/// cannot redirect the org's secret to itself.
fn same_binding(cur: &Provider, next: &ProviderFields) -> bool {
    CredentialBinding::allows(
        cur.credential_binding().as_ref(),
        CredentialBinding::of(&next.base_url, &next.auth).as_ref(),
    )
}

/// Delete a provider and its tools.
#[utoipa::path(delete, operation_id = "deleteProvider", path = "/v1/providers/{provider_id}", tag = "studio",
    responses((status = 204), (status = 404, body = Problem)), security(("orgKey" = ["studio"])))]
pub async fn delete(
    key: Studio,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    providers::delete(&state.pool, &key.org, &path)
        .await
        .map_err(or_not_found("provider"))?;
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
    Ok(HttpResponse::Ok().json(report))
}
