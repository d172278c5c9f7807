//! Customer backends: their users' connections of connected-app toolkits
//! (D4), listed without secrets and removable (org key, scope `mint`).

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use utoipa::IntoParams;

use super::audit::{self, Acting};
use super::error::{ApiError, Problem};
use super::extract::Mint;
use super::list::{ListParams, ListResponse};
use crate::api::state::AppState;
use crate::store::connections::{self, Connection};

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ConnectionFilter {
    /// Only this end user's connections (the `user_id` runtime tokens are minted for).
    pub user_id: Option<String>,
}

/// List end users' connections (never a secret).
///
/// Paginated, newest first: the first page reports `total`; when `has_more` is true,
/// pass the returned `cursor` back as `?cursor=` to get the next page, until `has_more` is false.
#[utoipa::path(get, operation_id = "listConnections", path = "/v1/connections", tag = "runtime",
    params(ListParams, ConnectionFilter),
    responses((status = 200, body = ListResponse<Connection>, example = json!({"data": [], "has_more": false, "cursor": null, "total": 0}))), security(("orgKey" = ["mint"])))]
pub async fn list(
    key: Mint,
    state: web::Data<AppState>,
    q: web::Query<ListParams>,
    f: web::Query<ConnectionFilter>,
) -> Result<HttpResponse, ApiError> {
    let page = connections::list(&state.pool, &key.org, f.user_id.as_deref(), &q.page()?).await?;
    Ok(HttpResponse::Ok().json(ListResponse::from(page)))
}

/// Remove a connection: the user's calls of that toolkit answer `connect_required` again.
///
/// An OAuth connection's token is first revoked at the authorization server (RFC 7009)
/// when it has a revocation endpoint; the connection is removed even when that fails.
/// `Loopgate-Token-Revocation` says what happened: `revoked`, `unsupported` (no
/// endpoint) or `failed` (absent for an API-key connection).
#[utoipa::path(delete, operation_id = "deleteConnection", path = "/v1/connections/{connection_id}", tag = "runtime",
    responses((status = 204, headers(("Loopgate-Token-Revocation" = String, description = "`revoked`, `unsupported` or `failed` (OAuth connections)"))),
              (status = 404, body = Problem)), security(("orgKey" = ["mint"])))]
pub async fn delete(
    key: Mint,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let revocation = state.runtime.delete_connection(&key.org, &path).await?;
    audit::deleted::<()>(&state, &key.org, key.actor(), ("connection", &path), None).await?;
    let mut res = HttpResponse::NoContent();
    if let Some(r) = revocation {
        res.insert_header(("Loopgate-Token-Revocation", r.as_str()));
    }
    Ok(res.finish())
}
