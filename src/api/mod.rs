//! HTTP layer: thin handlers (extract → one store/runtime call → map), auth
//! extractors, problem+json errors, the OpenAPI document and `/docs`.

pub mod agents;
pub mod api_keys;
pub mod deployments;
pub mod doc;
pub mod error;
pub mod extract;
pub mod list;
pub mod ops;
pub mod orgs;
pub mod providers;
pub mod runtime;
pub mod runtime_tokens;
pub mod sse;
pub mod tools;
pub mod validate;
pub mod workflow_runs;
pub mod workflow_sse;
pub mod workflows;

use actix_web::{web, HttpRequest, HttpResponse};
use utoipa::OpenApi;
use utoipa_swagger_ui::SwaggerUi;

use error::ApiError;

const MAX_JSON_BYTES: usize = 4 * 1024 * 1024;

fn json_error(err: actix_web::error::JsonPayloadError, _: &HttpRequest) -> actix_web::Error {
    use actix_web::error::JsonPayloadError as E;
    let e = match &err {
        E::ContentType => {
            ApiError::malformed("send the body as JSON with `Content-Type: application/json`")
        }
        E::Overflow { .. } | E::OverflowKnownLength { .. } => {
            ApiError::malformed(format!("the body is larger than {MAX_JSON_BYTES} bytes"))
        }
        E::Deserialize(d) if d.is_data() => {
            ApiError::invalid(format!("the body does not fit this endpoint: {d}"))
        }
        other => ApiError::malformed(format!("the body is not valid JSON: {other}")),
    };
    e.into()
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

async fn openapi_json() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/json")
        .body(doc::openapi_json())
}

/// Registers every route; used by the server and by tests alike.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.app_data(
        web::JsonConfig::default()
            .limit(MAX_JSON_BYTES)
            .error_handler(json_error),
    )
    .app_data(web::QueryConfig::default().error_handler(query_error))
    .app_data(web::PathConfig::default().error_handler(path_error))
    .app_data(web::PayloadConfig::default().limit(MAX_JSON_BYTES))
    .route("/healthz", web::get().to(ops::healthz))
    .route("/readyz", web::get().to(ops::readyz))
    .route("/metrics", web::get().to(ops::metrics))
    .route("/openapi.json", web::get().to(openapi_json))
    .service(SwaggerUi::new("/docs/{_:.*}").url("/docs/openapi.json", doc::ApiDoc::openapi()))
    .route(
        "/docs",
        web::get().to(|| async {
            HttpResponse::Found()
                .insert_header(("Location", "/docs/"))
                .finish()
        }),
    )
    .service(
        web::scope("/v1")
            .route("/orgs", web::post().to(orgs::create))
            .route("/orgs", web::get().to(orgs::list))
            .route("/orgs/{org_id}", web::get().to(orgs::get))
            .route("/orgs/{org_id}", web::patch().to(orgs::update))
            .route("/orgs/{org_id}", web::delete().to(orgs::delete))
            .route("/orgs/{org_id}/api-keys", web::post().to(api_keys::create))
            .route("/orgs/{org_id}/api-keys", web::get().to(api_keys::list))
            .route(
                "/orgs/{org_id}/api-keys/{key_id}",
                web::get().to(api_keys::get),
            )
            .route(
                "/orgs/{org_id}/api-keys/{key_id}",
                web::delete().to(api_keys::revoke),
            )
            .route(
                "/orgs/{org_id}/deployments",
                web::post().to(deployments::create),
            )
            .route(
                "/orgs/{org_id}/deployments",
                web::get().to(deployments::list),
            )
            .route(
                "/orgs/{org_id}/deployments/{deployment_id}",
                web::get().to(deployments::get),
            )
            .route(
                "/orgs/{org_id}/deployments/{deployment_id}",
                web::patch().to(deployments::update),
            )
            .route(
                "/orgs/{org_id}/deployments/{deployment_id}",
                web::delete().to(deployments::delete),
            )
            .route("/providers", web::post().to(providers::create))
            .route("/providers", web::get().to(providers::list))
            .route("/providers/{provider_id}", web::get().to(providers::get))
            .route(
                "/providers/{provider_id}",
                web::patch().to(providers::update),
            )
            .route(
                "/providers/{provider_id}",
                web::delete().to(providers::delete),
            )
            .route(
                "/providers/{provider_id}/openapi",
                web::post().to(tools::import_openapi),
            )
            .route("/tools", web::post().to(tools::create))
            .route("/tools", web::get().to(tools::list))
            .route("/tools/{tool_id}", web::get().to(tools::get))
            .route("/tools/{tool_id}", web::patch().to(tools::update))
            .route("/tools/{tool_id}", web::delete().to(tools::delete))
            .route("/agents", web::post().to(agents::create))
            .route("/agents", web::get().to(agents::list))
            .route("/agents/{agent_id}", web::get().to(agents::get))
            .route("/agents/{agent_id}", web::patch().to(agents::update))
            .route("/agents/{agent_id}", web::delete().to(agents::delete))
            .route(
                "/agents/{agent_id}/tools",
                web::post().to(agents::add_binding),
            )
            .route(
                "/agents/{agent_id}/tools/{tool_id}",
                web::get().to(agents::get_binding),
            )
            .route(
                "/agents/{agent_id}/tools/{tool_id}",
                web::patch().to(agents::update_binding),
            )
            .route(
                "/agents/{agent_id}/tools/{tool_id}",
                web::delete().to(agents::remove_binding),
            )
            .route("/workflows", web::post().to(workflows::create))
            .route("/workflows", web::get().to(workflows::list))
            .route("/workflows/{workflow_id}", web::get().to(workflows::get))
            .route(
                "/workflows/{workflow_id}",
                web::patch().to(workflows::update),
            )
            .route(
                "/workflows/{workflow_id}",
                web::delete().to(workflows::delete),
            )
            .route(
                "/workflows/{workflow_id}/runs",
                web::post().to(workflow_runs::create),
            )
            .route(
                "/workflows/{workflow_id}/runs",
                web::get().to(workflow_runs::list),
            )
            .route(
                "/workflows/{workflow_id}/runs/{run_id}",
                web::get().to(workflow_runs::get),
            )
            .route("/runtime-tokens", web::post().to(runtime_tokens::mint))
            .route(
                "/agents/{agent_id}/threads/{thread_id}/steps",
                web::post().to(runtime::steps),
            )
            .route(
                "/agents/{agent_id}/threads/{thread_id}/tool-calls",
                web::post().to(runtime::tool_call),
            )
            .route(
                "/tool-calls/{call_id}",
                web::get().to(runtime::get_tool_call),
            ),
    )
    .default_service(web::to(not_found));
}
