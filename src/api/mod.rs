//! HTTP layer: thin handlers (extract → one store/runtime call → map), auth
//! extractors, problem+json errors, the OpenAPI document and `/docs`.

pub mod agents;
pub mod api_keys;
pub mod audit;
pub mod config_epoch;
pub mod connect;
pub mod connections;
pub mod contract;
pub mod deployments;
pub mod error;
pub mod events;
pub mod extract;
pub mod list;
pub mod mcp;
pub mod openapi_doc;
pub mod ops;
pub mod orgs;
pub mod providers;
pub mod routes;
pub mod runtime;
pub mod runtime_tokens;
pub mod sse;
pub mod state;
pub mod tools;
pub mod validate;
pub mod workflow_runs;
pub mod workflow_sse;
pub mod workflows;

use actix_web::{web, HttpRequest, HttpResponse};
use utoipa_swagger_ui::SwaggerUi;

use error::ApiError;

fn json_error(err: actix_web::error::JsonPayloadError, max_bytes: usize) -> actix_web::Error {
    use actix_web::error::JsonPayloadError as E;
    let e = match &err {
        E::ContentType => {
            ApiError::malformed("send the body as JSON with `Content-Type: application/json`")
        }
        E::Overflow { .. } | E::OverflowKnownLength { .. } => {
            ApiError::malformed(format!("the body is larger than {max_bytes} bytes"))
        }
        E::Deserialize(d) if d.is_data() => {
            ApiError::invalid(format!("the body does not fit this endpoint: {d}"))
        }
        other => ApiError::malformed(format!("the body is not valid JSON: {other}")),
    };
    e.into()
}

fn form_error(err: actix_web::error::UrlencodedError, _: &HttpRequest) -> actix_web::Error {
    use actix_web::error::UrlencodedError as E;
    match err {
        E::ContentType => ApiError::malformed(
            "send the form as `Content-Type: application/x-www-form-urlencoded`",
        ),
        other => ApiError::malformed(format!("the form is not valid: {other}")),
    }
    .into()
}

fn query_error(err: actix_web::error::QueryPayloadError, _: &HttpRequest) -> actix_web::Error {
    ApiError::malformed(format!("invalid query parameters: {err}")).into()
}

fn path_error(err: actix_web::error::PathError, _: &HttpRequest) -> actix_web::Error {
    ApiError::malformed(format!("invalid path: {err}")).into()
}

async fn not_found() -> Result<HttpResponse, ApiError> {
    Err(ApiError::NotFound(
        "no such endpoint: see /docs for the API reference".into(),
    ))
}

/// Registers every route, with request bodies (JSON, forms, raw) capped at `max_body`
/// bytes (`request_max_bytes`).
pub fn configure(cfg: &mut web::ServiceConfig, max_body: usize) {
    cfg.app_data(
        web::JsonConfig::default()
            .limit(max_body)
            .error_handler(move |e, _| json_error(e, max_body)),
    )
    .app_data(
        web::FormConfig::default()
            .limit(max_body)
            .error_handler(form_error),
    )
    .app_data(web::QueryConfig::default().error_handler(query_error))
    .app_data(web::PathConfig::default().error_handler(path_error))
    .app_data(web::PayloadConfig::default().limit(max_body))
    .configure(routes::register)
    .service(SwaggerUi::new("/docs/{_:.*}").url("/docs/openapi.json", openapi_doc::openapi()))
    .route(
        "/docs",
        web::get().to(|| async {
            HttpResponse::Found()
                .insert_header(("Location", "/docs/"))
                .finish()
        }),
    )
    .default_service(web::to(not_found));
}
