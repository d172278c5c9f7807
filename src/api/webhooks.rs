//! Automate: webhook endpoints and their deliveries (W7). The signing secret is made
//! here, shown once, and stored sealed to the endpoint id; a rotation keeps the previous
//! secret signing for [`ROTATION_OVERLAP`]. The URL is checked when written (absolute
//! http(s), and what the SSRF guard can refuse without resolving); every attempt goes
//! through the guard again (`automate::delivery`).

use std::net::IpAddr;

use actix_web::{web, HttpResponse};
use chrono::{DateTime, Utc};
use secrecy::ExposeSecret;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::audit::{self, Acting};
use super::error::{or_not_found, ApiError, Problem};
use super::extract::Studio;
use super::list::{ListParams, ListResponse};
use crate::api::state::AppState;
use crate::automate::signature;
use crate::crypto::new_id;
use crate::store::webhooks::{self, Delivery, Endpoint};
use crate::workflow::announce::EVENTS;

/// How long the previous secret keeps signing after a rotation.
pub const ROTATION_OVERLAP: std::time::Duration = std::time::Duration::from_secs(24 * 3600);
/// Every finished run is queued once per subscribed endpoint, so an org's endpoints are
/// bounded before a run's queuing work is.
pub const MAX_ENDPOINTS_PER_ORG: i64 = 50;

/// `POST /v1/webhook-endpoints` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EndpointInput {
    /// Where finished runs are POSTed (http or https).
    pub url: String,
    /// Any of `workflow_run.succeeded`, `workflow_run.partial`, `workflow_run.failed`;
    /// default: all three.
    pub events: Option<Vec<String>>,
    pub description: Option<String>,
}

/// `PATCH /v1/webhook-endpoints/{id}` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EndpointPatch {
    pub url: Option<String>,
    pub events: Option<Vec<String>>,
    pub description: Option<String>,
}

/// An endpoint as returned; `secret` only when it was just made.
#[derive(Debug, Serialize, ToSchema)]
pub struct EndpointView {
    /// `whe_…`
    pub id: String,
    pub url: String,
    pub events: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The signing secret (`whsec_…`), shown once, at creation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// `POST /v1/webhook-endpoints/{id}/rotate-secret` answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct RotatedSecret {
    /// The new signing secret, shown once; the previous one also signs for 24 hours.
    pub secret: String,
}

impl EndpointView {
    fn of(e: Endpoint, secret: Option<String>) -> Self {
        EndpointView {
            id: e.id,
            url: e.url,
            events: e.events,
            description: e.description,
            secret,
            created_at: e.created_at,
        }
    }
}

fn check_url(state: &AppState, raw: &str) -> Result<String, ApiError> {
    let url = url::Url::parse(raw.trim())
        .map_err(|e| ApiError::invalid(format!("url is not an absolute URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(ApiError::invalid("url must use http or https"));
    }
    let Some(host) = url.host_str() else {
        return Err(ApiError::invalid("url must name a host"));
    };
    if !url.username().is_empty() || url.password().is_some() || url.fragment().is_some() {
        return Err(ApiError::invalid(
            "url must not embed credentials or a fragment",
        ));
    }
    if raw.len() > 2048 {
        return Err(ApiError::invalid("url must be at most 2048 characters"));
    }
    if !state.settings.allow_private_upstreams {
        let ip = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .ok();
        let blocked = ip.and_then(crate::upstream::blocked_ip);
        if crate::upstream::blocked_name(host) || blocked.is_some() {
            return Err(ApiError::invalid(format!(
                "url host '{host}' is not a public address: deliveries go only to public hosts"
            )));
        }
    }
    Ok(url.to_string())
}

fn check_events(events: Option<Vec<String>>) -> Result<Vec<String>, ApiError> {
    let Some(events) = events else {
        return Ok(EVENTS.iter().map(|e| e.to_string()).collect());
    };
    if events.is_empty() || events.len() > EVENTS.len() {
        return Err(ApiError::invalid(format!(
            "events must list 1 to 3 of {}",
            EVENTS.join(", ")
        )));
    }
    let mut out: Vec<String> = Vec::new();
    for e in events {
        if !EVENTS.contains(&e.as_str()) {
            return Err(ApiError::invalid(format!(
                "event '{e}' is not one of {}",
                EVENTS.join(", ")
            )));
        }
        if !out.contains(&e) {
            out.push(e);
        }
    }
    Ok(out)
}

fn check_description(d: Option<&str>) -> Result<(), ApiError> {
    if d.is_some_and(|d| d.chars().count() > 1000) {
        return Err(ApiError::invalid(
            "description must be at most 1000 characters",
        ));
    }
    Ok(())
}

/// Create a webhook endpoint.
///
/// Every finished workflow run of the org (scheduled or not) whose event the endpoint
/// subscribes to is POSTed to it per Standard Webhooks: headers `webhook-id`,
/// `webhook-timestamp`, `webhook-signature` (`v1,<base64 HMAC-SHA256 of
/// "id.timestamp.body">` with the secret), body `{type, timestamp, data: <the run>}`. Any
/// 2xx is success; otherwise it is retried with doubling back-off for at least 24 hours.
/// The signing secret is in this answer only.
#[utoipa::path(post, operation_id = "createWebhookEndpoint", path = "/v1/webhook-endpoints", tag = "studio",
    request_body(content = EndpointInput, example = json!({"url": "https://hooks.example.com/loopgate/webhook", "events": ["workflow_run.succeeded", "workflow_run.partial", "workflow_run.failed"], "description": "Nightly report"})),
    responses((status = 201, body = EndpointView, example = json!({"id": "whe_3U1VpduByp7xw4kBaOiAY7", "url": "https://hooks.example.com/loopgate/webhook", "events": ["workflow_run.succeeded", "workflow_run.partial", "workflow_run.failed"], "description": "Nightly report", "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "created_at": "2026-12-07T21:27:02.769780Z"})), (status = 409, description = "The org already has its most webhook endpoints (`conflict`): delete one first", body = Problem), (status = 422, body = Problem)), security(("orgKey" = ["studio"])))]
pub async fn create(
    key: Studio,
    state: web::Data<AppState>,
    body: web::Json<EndpointInput>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let url = check_url(&state, &body.url)?;
    let events = check_events(body.events)?;
    check_description(body.description.as_deref())?;
    if webhooks::count_endpoints(&state.pool, &key.org).await? >= MAX_ENDPOINTS_PER_ORG {
        return Err(ApiError::Conflict(format!(
            "an org has at most {MAX_ENDPOINTS_PER_ORG} webhook endpoints; delete one first"
        )));
    }
    let id = new_id("whe");
    let secret = signature::new_secret();
    let sealed = state
        .cipher
        .encrypt(secret.expose_secret().as_bytes(), id.as_bytes());
    let e = webhooks::create_endpoint(
        &state.pool,
        &key.org,
        &id,
        &url,
        &events,
        body.description.as_deref(),
        &sealed,
    )
    .await?;
    let shown = EndpointView::of(e, None);
    let resource = ("webhook_endpoint", shown.id.as_str());
    audit::created(
        &state,
        &key.org,
        key.actor(),
        resource,
        &shown,
        &[("secret", false)],
    )
    .await?;
    Ok(HttpResponse::Created().json(EndpointView {
        secret: Some(secret.expose_secret().to_string()),
        ..shown
    }))
}

/// List webhook endpoints.
///
/// Paginated, newest first: the first page reports `total`; when `has_more` is true,
/// pass the returned `cursor` back as `?cursor=` to get the next page, until `has_more` is false.
#[utoipa::path(get, operation_id = "listWebhookEndpoints", path = "/v1/webhook-endpoints", tag = "studio", params(ListParams),
    responses((status = 200, body = ListResponse<EndpointView>, example = json!({"data": [{"id": "whe_3U1VpduByp7xw4kBaOiAY7", "url": "https://hooks.example.com/loopgate/webhook", "events": ["workflow_run.succeeded", "workflow_run.partial", "workflow_run.failed"], "description": "Nightly report of open items", "created_at": "2026-12-07T21:28:54.538736Z"}], "has_more": false, "cursor": null, "total": 1}))), security(("orgKey" = ["studio"])))]
pub async fn list(
    key: Studio,
    state: web::Data<AppState>,
    q: web::Query<ListParams>,
) -> Result<HttpResponse, ApiError> {
    let page = webhooks::list_endpoints(&state.pool, &key.org, &q.page()?).await?;
    Ok(HttpResponse::Ok().json(ListResponse::from(page.map(|e| EndpointView::of(e, None)))))
}

/// Get a webhook endpoint (without its secret).
///
/// Its URL, events and description; the signing secret is shown only when created or rotated.
#[utoipa::path(get, operation_id = "getWebhookEndpoint", path = "/v1/webhook-endpoints/{endpoint_id}", tag = "studio",
    responses((status = 200, body = EndpointView, example = json!({"id": "whe_3U1VpduByp7xw4kBaOiAY7", "url": "https://hooks.example.com/loopgate/webhook", "events": ["workflow_run.succeeded", "workflow_run.partial", "workflow_run.failed"], "description": "Nightly report", "created_at": "2026-12-07T21:28:54.538736Z"})), (status = 404, body = Problem)), security(("orgKey" = ["studio"])))]
pub async fn get(
    key: Studio,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let e = webhooks::get_endpoint(&state.pool, &key.org, &path)
        .await
        .map_err(or_not_found("webhook endpoint"))?;
    Ok(HttpResponse::Ok().json(EndpointView::of(e, None)))
}

/// Change a webhook endpoint's URL, events or description.
///
/// Absent fields stay as they are. Answers `200`.
#[utoipa::path(patch, operation_id = "updateWebhookEndpoint", path = "/v1/webhook-endpoints/{endpoint_id}", tag = "studio",
    request_body(content = EndpointPatch, example = json!({"description": "Nightly report of open items"})),
    responses((status = 200, body = EndpointView, example = json!({"id": "whe_3U1VpduByp7xw4kBaOiAY7", "url": "https://hooks.example.com/loopgate/webhook", "events": ["workflow_run.succeeded", "workflow_run.partial", "workflow_run.failed"], "description": "Nightly report of open items", "created_at": "2026-12-07T21:28:54.538736Z"})), (status = 404, body = Problem), (status = 422, body = Problem)),
    security(("orgKey" = ["studio"])))]
pub async fn update(
    key: Studio,
    state: web::Data<AppState>,
    path: web::Path<String>,
    body: web::Json<EndpointPatch>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let url = body
        .url
        .as_deref()
        .map(|u| check_url(&state, u))
        .transpose()?;
    let events = match body.events {
        Some(e) => Some(check_events(Some(e))?),
        None => None,
    };
    check_description(body.description.as_deref())?;
    let before = webhooks::get_endpoint(&state.pool, &key.org, &path)
        .await
        .map_err(or_not_found("webhook endpoint"))?;
    let before = EndpointView::of(before, None);
    let e = webhooks::update_endpoint(
        &state.pool,
        &key.org,
        &path,
        url.as_deref(),
        events.as_deref(),
        body.description.as_deref(),
    )
    .await
    .map_err(or_not_found("webhook endpoint"))?;
    let after = EndpointView::of(e, None);
    let resource = ("webhook_endpoint", after.id.as_str());
    audit::updated(
        &state,
        &key.org,
        key.actor(),
        resource,
        &before,
        &after,
        &[],
    )
    .await?;
    Ok(HttpResponse::Ok().json(after))
}

/// Delete a webhook endpoint and its deliveries.
///
/// Answers `204`.
#[utoipa::path(delete, operation_id = "deleteWebhookEndpoint", path = "/v1/webhook-endpoints/{endpoint_id}", tag = "studio",
    responses((status = 204), (status = 404, body = Problem)), security(("orgKey" = ["studio"])))]
pub async fn delete(
    key: Studio,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let before = webhooks::get_endpoint(&state.pool, &key.org, &path)
        .await
        .map_err(or_not_found("webhook endpoint"))?;
    let before = EndpointView::of(before, None);
    webhooks::delete_endpoint(&state.pool, &key.org, &before.id)
        .await
        .map_err(or_not_found("webhook endpoint"))?;
    let resource = ("webhook_endpoint", before.id.as_str());
    audit::deleted(&state, &key.org, key.actor(), resource, Some(&before)).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Rotate an endpoint's signing secret.
///
/// Answers the new secret, once. For the next 24 hours every delivery is signed with
/// both (two space-separated `v1,` signatures), so the receiver can switch without
/// losing a message.
#[utoipa::path(post, operation_id = "rotateWebhookSecret", path = "/v1/webhook-endpoints/{endpoint_id}/rotate-secret", tag = "studio",
    responses((status = 200, body = RotatedSecret, example = json!({"secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"})), (status = 404, body = Problem)), security(("orgKey" = ["studio"])))]
pub async fn rotate_secret(
    key: Studio,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let e = webhooks::get_endpoint(&state.pool, &key.org, &path)
        .await
        .map_err(or_not_found("webhook endpoint"))?;
    let secret = signature::new_secret();
    let sealed = state
        .cipher
        .encrypt(secret.expose_secret().as_bytes(), e.id.as_bytes());
    webhooks::rotate_secret(
        &state.pool,
        &key.org,
        &e.id,
        &sealed,
        ROTATION_OVERLAP.as_secs_f64(),
    )
    .await
    .map_err(or_not_found("webhook endpoint"))?;
    let shown = EndpointView::of(e, None);
    let resource = ("webhook_endpoint", shown.id.as_str());
    audit::updated(
        &state,
        &key.org,
        key.actor(),
        resource,
        &shown,
        &shown,
        &[("secret", true)],
    )
    .await?;
    Ok(HttpResponse::Ok().json(RotatedSecret {
        secret: secret.expose_secret().to_string(),
    }))
}

/// List an endpoint's deliveries, newest first.
///
/// One per finished run and event: `status` `pending` (being retried: `next_attempt_at`),
/// `succeeded` or `failed`, with the number of `attempts` and the last answer's status.
/// Paginated, newest first: the first page reports `total`; when `has_more` is true,
/// pass the returned `cursor` back as `?cursor=` to get the next page, until `has_more` is false.
#[utoipa::path(get, operation_id = "listWebhookDeliveries", path = "/v1/webhook-endpoints/{endpoint_id}/deliveries", tag = "studio", params(ListParams),
    responses((status = 200, body = ListResponse<Delivery>, example = json!({"data": [{"id": "msg_c50513ecad30014be87138477a100736", "event_type": "workflow_run.succeeded", "run_id": "run_sxxaFVkFEpH7QGb5cWhsO5", "status": "pending", "attempts": 0, "next_attempt_at": "2026-12-07T21:28:54.559236Z", "created_at": "2026-12-07T21:28:54.559236Z"}], "has_more": false, "cursor": null, "total": 1})), (status = 404, body = Problem)), security(("orgKey" = ["studio"])))]
pub async fn deliveries(
    key: Studio,
    state: web::Data<AppState>,
    path: web::Path<String>,
    q: web::Query<ListParams>,
) -> Result<HttpResponse, ApiError> {
    let e = webhooks::get_endpoint(&state.pool, &key.org, &path)
        .await
        .map_err(or_not_found("webhook endpoint"))?;
    let page = webhooks::list_deliveries(&state.pool, &key.org, &e.id, &q.page()?).await?;
    Ok(HttpResponse::Ok().json(ListResponse::from(page)))
}
