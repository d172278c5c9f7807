//! Admin: orgs.

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use utoipa::ToSchema;

use super::audit;
use super::error::{or_not_found, ApiError, Problem};
use super::extract::Admin;
use super::list::{ListParams, ListResponse};
use super::validate::name;
use crate::api::state::AppState;
use crate::store::audit_events::Actor;
use crate::store::orgs::{self, Org};
use crate::store::OrgId;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OrgInput {
    pub name: String,
}

/// Create an org.
///
/// Admin token only. An org owns every other object; create its API keys and deployments next.
/// Answers `201`.
#[utoipa::path(post, operation_id = "createOrg", path = "/v1/orgs", tag = "admin", request_body(content = OrgInput, example = json!({"name": "Acme"})),
    responses((status = 201, body = Org, example = json!({"id": "org_YZoKAaXfA24JkOlfALKMDP", "name": "Acme", "created_at": "2026-12-07T21:27:02.605569Z", "updated_at": "2026-12-07T21:27:02.605569Z"})), (status = 401, body = Problem), (status = 403, body = Problem), (status = 422, body = Problem)),
    security(("adminToken" = [])))]
pub async fn create(
    _: Admin,
    state: web::Data<AppState>,
    body: web::Json<OrgInput>,
) -> Result<HttpResponse, ApiError> {
    let org = orgs::create(&state.pool, name(&body.name)?).await?;
    let id = OrgId::trusted(&org.id);
    audit::created(&state, &id, Actor::admin(), ("org", &org.id), &org, &[]).await?;
    Ok(HttpResponse::Created().json(org))
}

/// List orgs.
///
/// Paginated, newest first: the first page reports `total`; when `has_more` is true,
/// pass the returned `cursor` back as `?cursor=` to get the next page, until `has_more` is false.
#[utoipa::path(get, operation_id = "listOrgs", path = "/v1/orgs", tag = "admin", params(ListParams),
    responses((status = 200, body = ListResponse<Org>, example = json!({"data": [{"id": "org_YZoKAaXfA24JkOlfALKMDP", "name": "Acme Inc.", "created_at": "2026-12-07T21:28:54.323097Z", "updated_at": "2026-12-07T21:28:54.341314Z"}], "has_more": false, "cursor": null, "total": 1})), (status = 401, body = Problem)), security(("adminToken" = [])))]
pub async fn list(
    _: Admin,
    state: web::Data<AppState>,
    q: web::Query<ListParams>,
) -> Result<HttpResponse, ApiError> {
    let page = orgs::list(&state.pool, &q.page()?).await?;
    Ok(HttpResponse::Ok().json(ListResponse::from(page)))
}

/// Get an org.
///
/// Admin token only.
#[utoipa::path(get, operation_id = "getOrg", path = "/v1/orgs/{org_id}", tag = "admin",
    responses((status = 200, body = Org, example = json!({"id": "org_YZoKAaXfA24JkOlfALKMDP", "name": "Acme", "created_at": "2026-12-07T21:27:02.605569Z", "updated_at": "2026-12-07T21:27:02.605569Z"})), (status = 404, body = Problem)), security(("adminToken" = [])))]
pub async fn get(
    _: Admin,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let org = orgs::get(&state.pool, &path)
        .await
        .map_err(or_not_found("org"))?;
    Ok(HttpResponse::Ok().json(org))
}

/// Rename an org.
///
/// Admin token only. Answers `200` with the org.
#[utoipa::path(patch, operation_id = "updateOrg", path = "/v1/orgs/{org_id}", tag = "admin", request_body(content = OrgInput, example = json!({"name": "Acme Inc."})),
    responses((status = 200, body = Org, example = json!({"id": "org_YZoKAaXfA24JkOlfALKMDP", "name": "Acme Inc.", "created_at": "2026-12-07T21:27:02.605569Z", "updated_at": "2026-12-07T21:27:02.610058Z"})), (status = 404, body = Problem)), security(("adminToken" = [])))]
pub async fn update(
    _: Admin,
    state: web::Data<AppState>,
    path: web::Path<String>,
    body: web::Json<OrgInput>,
) -> Result<HttpResponse, ApiError> {
    let before = orgs::get(&state.pool, &path)
        .await
        .map_err(or_not_found("org"))?;
    let org = orgs::rename(&state.pool, &path, name(&body.name)?)
        .await
        .map_err(or_not_found("org"))?;
    let id = OrgId::trusted(&org.id);
    audit::updated(
        &state,
        &id,
        Actor::admin(),
        ("org", &org.id),
        &before,
        &org,
        &[],
    )
    .await?;
    Ok(HttpResponse::Ok().json(org))
}

/// Delete an org and everything it owns.
///
/// Admin token only: its keys, deployments, providers, tools, agents, workflows and stored
/// results go with it. Answers `204`.
#[utoipa::path(delete, operation_id = "deleteOrg", path = "/v1/orgs/{org_id}", tag = "admin",
    responses((status = 204), (status = 404, body = Problem)), security(("adminToken" = [])))]
pub async fn delete(
    _: Admin,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    orgs::delete(&state.pool, &path)
        .await
        .map_err(or_not_found("org"))?;
    Ok(HttpResponse::NoContent().finish())
}
