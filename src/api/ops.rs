//! Operations endpoints: liveness, readiness (Postgres and Redis), Prometheus metrics.

use actix_web::{web, HttpResponse};
use serde::Serialize;
use utoipa::ToSchema;

use super::error::ApiError;
use crate::state::AppState;

#[derive(Serialize, ToSchema)]
pub struct Health {
    pub status: &'static str,
}

/// The process is up.
#[utoipa::path(get, path = "/healthz", tag = "operations", responses((status = 200, body = Health)))]
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(Health { status: "ok" })
}

/// Postgres (and Redis, when configured) answer.
#[utoipa::path(get, path = "/readyz", tag = "operations",
    responses((status = 200, body = Health), (status = 503, body = super::error::Problem)))]
pub async fn readyz(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let unavailable = |what: &str| ApiError::Unavailable {
        detail: format!("{what} is not reachable"),
        retry_after_secs: 5,
    };
    sqlx::query("SELECT 1")
        .execute(&state.pool)
        .await
        .map_err(|_| unavailable("postgres"))?;
    if let Some(redis) = &state.redis {
        let mut conn = redis.get().await.map_err(|_| unavailable("redis"))?;
        let _: String = deadpool_redis::redis::cmd("PING")
            .query_async(&mut conn)
            .await
            .map_err(|_| unavailable("redis"))?;
    }
    Ok(HttpResponse::Ok().json(Health { status: "ready" }))
}

/// Prometheus text exposition.
#[utoipa::path(get, path = "/metrics", tag = "operations", responses((status = 200, body = String, content_type = "text/plain")))]
pub async fn metrics(state: web::Data<AppState>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4")
        .body(state.metrics.render())
}
