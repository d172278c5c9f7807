//! Admin: an org's deployments and their cache mode (off / shadow / on).

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use utoipa::ToSchema;

use super::audit::{self, Acting};
use super::error::{or_not_found, ApiError, Problem};
use super::extract::AdminOrg;
use super::list::{ListParams, ListResponse};
use super::validate::name;
use crate::api::state::AppState;
use crate::store::deployments::{self, CacheMode, Deployment};

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DeploymentInput {
    pub name: String,
    /// Default `on`.
    pub cache: Option<CacheMode>,
}

// Read from a JSON object only: serde alone would also read it from an array of its two
// fields (`[null, null]`, a patch that changes nothing), which the schema does not allow.
// (`deny_unknown_fields` is enforced by `Fields`; here it is for the schema.)
#[derive(Debug, Deserialize, ToSchema)]
#[serde(
    try_from = "serde_json::Map<String, serde_json::Value>",
    deny_unknown_fields
)]
pub struct DeploymentPatch {
    pub name: Option<String>,
    pub cache: Option<CacheMode>,
}

impl TryFrom<serde_json::Map<String, serde_json::Value>> for DeploymentPatch {
    type Error = serde_json::Error;

    fn try_from(body: serde_json::Map<String, serde_json::Value>) -> Result<Self, Self::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Fields {
            name: Option<String>,
            cache: Option<CacheMode>,
        }
        let f: Fields = serde_json::from_value(serde_json::Value::Object(body))?;
        Ok(Self {
            name: f.name,
            cache: f.cache,
        })
    }
}

/// Create a deployment.
///
/// Admin token only. A deployment groups agents and sets their dataset cache mode (`off`,
/// `shadow`, `on`, LOOP_ENGINE C6). Answers `201`.
#[utoipa::path(post, operation_id = "createDeployment", path = "/v1/orgs/{org_id}/deployments", tag = "admin", params(("org_id" = String, Path, description = "The org")), request_body(content = DeploymentInput, example = json!({"name": "production", "cache": "on"})),
    responses((status = 201, body = Deployment, example = json!({"id": "dep_KgUmD6SzErRjjMJSWXUl42", "org_id": "org_YZoKAaXfA24JkOlfALKMDP", "name": "production", "cache": "on", "created_at": "2026-12-07T21:27:02.616909Z", "updated_at": "2026-12-07T21:27:02.616909Z"})), (status = 404, body = Problem), (status = 409, body = Problem)),
    security(("adminToken" = [])))]
pub async fn create(
    admin: AdminOrg,
    state: web::Data<AppState>,
    body: web::Json<DeploymentInput>,
) -> Result<HttpResponse, ApiError> {
    let org = &admin.0;
    let cache = body.cache.unwrap_or(CacheMode::On);
    let dep = deployments::create(&state.pool, org, name(&body.name)?, cache).await?;
    audit::created(
        &state,
        org,
        admin.actor(),
        ("deployment", &dep.id),
        &dep,
        &[],
    )
    .await?;
    Ok(HttpResponse::Created().json(dep))
}

/// List an org's deployments.
///
/// Paginated, newest first: the first page reports `total`; when `has_more` is true,
/// pass the returned `cursor` back as `?cursor=` to get the next page, until `has_more` is false.
#[utoipa::path(get, operation_id = "listDeployments", path = "/v1/orgs/{org_id}/deployments", tag = "admin", params(("org_id" = String, Path, description = "The org"), ListParams),
    responses((status = 200, body = ListResponse<Deployment>, example = json!({"data": [{"id": "dep_KgUmD6SzErRjjMJSWXUl42", "org_id": "org_YZoKAaXfA24JkOlfALKMDP", "name": "production", "cache": "shadow", "created_at": "2026-12-07T21:28:54.377532Z", "updated_at": "2026-12-07T21:28:54.382769Z"}], "has_more": false, "cursor": null, "total": 1})), (status = 404, body = Problem)), security(("adminToken" = [])))]
pub async fn list(
    AdminOrg(org): AdminOrg,
    state: web::Data<AppState>,
    q: web::Query<ListParams>,
) -> Result<HttpResponse, ApiError> {
    let page = deployments::list(&state.pool, &org, &q.page()?).await?;
    Ok(HttpResponse::Ok().json(ListResponse::from(page)))
}

/// Get a deployment.
///
/// Admin token only.
#[utoipa::path(get, operation_id = "getDeployment", path = "/v1/orgs/{org_id}/deployments/{deployment_id}", tag = "admin",
    responses((status = 200, body = Deployment, example = json!({"id": "dep_KgUmD6SzErRjjMJSWXUl42", "org_id": "org_YZoKAaXfA24JkOlfALKMDP", "name": "production", "cache": "shadow", "created_at": "2026-12-07T21:28:54.377532Z", "updated_at": "2026-12-07T21:28:54.382769Z"})), (status = 404, body = Problem)), security(("adminToken" = [])))]
pub async fn get(
    AdminOrg(org): AdminOrg,
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (_, id) = path.into_inner();
    let dep = deployments::get(&state.pool, &org, &id)
        .await
        .map_err(or_not_found("deployment"))?;
    Ok(HttpResponse::Ok().json(dep))
}

/// Rename a deployment or switch its cache mode.
///
/// Admin token only. Absent fields stay as they are. Answers `200`.
#[utoipa::path(patch, operation_id = "updateDeployment", path = "/v1/orgs/{org_id}/deployments/{deployment_id}", tag = "admin", request_body(content = DeploymentPatch, example = json!({"cache": "shadow"})),
    responses((status = 200, body = Deployment, example = json!({"id": "dep_KgUmD6SzErRjjMJSWXUl42", "org_id": "org_YZoKAaXfA24JkOlfALKMDP", "name": "production", "cache": "shadow", "created_at": "2026-12-07T21:27:02.616909Z", "updated_at": "2026-12-07T21:27:02.646072Z"})), (status = 404, body = Problem), (status = 409, body = Problem)), security(("adminToken" = [])))]
pub async fn update(
    admin: AdminOrg,
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
    body: web::Json<DeploymentPatch>,
) -> Result<HttpResponse, ApiError> {
    let (_, id) = path.into_inner();
    let org = &admin.0;
    let new_name = body.name.as_deref().map(name).transpose()?;
    let before = deployments::get(&state.pool, org, &id)
        .await
        .map_err(or_not_found("deployment"))?;
    let dep = deployments::update(&state.pool, org, &id, new_name, body.cache)
        .await
        .map_err(or_not_found("deployment"))?;
    audit::updated(
        &state,
        org,
        admin.actor(),
        ("deployment", &dep.id),
        &before,
        &dep,
        &[],
    )
    .await?;
    Ok(HttpResponse::Ok().json(dep))
}

/// Delete a deployment (refused with 409 while agents use it).
///
/// Admin token only. Answers `204`.
#[utoipa::path(delete, operation_id = "deleteDeployment", path = "/v1/orgs/{org_id}/deployments/{deployment_id}", tag = "admin",
    responses((status = 204), (status = 404, body = Problem), (status = 409, body = Problem)), security(("adminToken" = [])))]
pub async fn delete(
    admin: AdminOrg,
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (_, id) = path.into_inner();
    let org = &admin.0;
    let before = deployments::get(&state.pool, org, &id)
        .await
        .map_err(or_not_found("deployment"))?;
    deployments::delete(&state.pool, org, &id)
        .await
        .map_err(or_not_found("deployment"))?;
    audit::deleted(
        &state,
        org,
        admin.actor(),
        ("deployment", &before.id),
        Some(&before),
    )
    .await?;
    Ok(HttpResponse::NoContent().finish())
}

#[cfg(test)]
mod tests {
    use super::DeploymentPatch;

    #[test]
    fn a_patch_is_an_object_of_known_fields() {
        let ok: DeploymentPatch = serde_json::from_str(r#"{"cache": "shadow"}"#).unwrap();
        assert!(ok.name.is_none() && ok.cache.is_some());
        assert!(serde_json::from_str::<DeploymentPatch>("{}").is_ok());
        for bad in [
            "[null, null]",
            r#"["x", "on"]"#,
            r#"{"colour": "red"}"#,
            r#"{"cache": "sometimes"}"#,
        ] {
            assert!(
                serde_json::from_str::<DeploymentPatch>(bad).is_err(),
                "{bad}"
            );
        }
    }
}
