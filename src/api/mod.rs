//! HTTP layer: thin handlers (extract → one store/runtime call → map), auth
//! extractors, problem+json errors, the OpenAPI document, `/docs` and the Studio
//! console (`/studio`).

pub mod agents;
pub mod api_keys;
pub mod audit;
pub mod clean_ids;
pub mod config_epoch;
pub mod connect;
pub mod connections;
pub mod console;
pub mod contract;
pub mod deployments;
pub mod error;
pub mod events;
pub mod extract;
pub mod list;
pub mod mcp;
pub mod mcp_auth;
pub mod openapi_doc;
pub mod ops;
pub mod orgs;
pub mod providers;
pub mod routes;
pub mod runtime;
pub mod runtime_tokens;
pub mod schedules;
pub mod sse;
pub mod state;
pub mod tools;
pub mod validate;
pub mod webhooks;
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
            ApiError::too_large(max_bytes, "request_max_bytes")
        }
        E::Deserialize(d) if d.is_data() => {
            ApiError::invalid(format!("the body does not fit this endpoint: {d}"))
        }
        other => ApiError::malformed(format!("the body is not valid JSON: {other}")),
    };
    e.into()
}

fn form_error(err: actix_web::error::UrlencodedError, max_bytes: usize) -> actix_web::Error {
    use actix_web::error::UrlencodedError as E;
    match err {
        E::ContentType => ApiError::malformed(
            "send the form as `Content-Type: application/x-www-form-urlencoded`",
        ),
        E::Overflow { .. } => ApiError::too_large(max_bytes, "request_max_bytes"),
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

/// The API's own body cap (`request_max_bytes`), for [`problem_413`].
#[derive(Clone, Copy)]
pub struct BodyCap(pub usize);

/// Every 413 is problem+json naming the limit and its setting: a 413 that was not written
/// by [`ApiError`] (actix's own payload limits on raw bodies answer `text/plain`) is
/// rewritten here. Wrapped around the whole app by `app::startup`.
pub fn problem_413<B: actix_web::body::MessageBody + 'static>(
    res: actix_web::dev::ServiceResponse<B>,
) -> actix_web::Result<actix_web::middleware::ErrorHandlerResponse<B>> {
    use actix_web::middleware::ErrorHandlerResponse;
    let ours = res
        .headers()
        .get(actix_web::http::header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/problem+json"));
    if ours {
        return Ok(ErrorHandlerResponse::Response(res.map_into_left_body()));
    }
    let cap = res
        .request()
        .app_data::<web::Data<BodyCap>>()
        .map_or(0, |c| c.0);
    let (req, _) = res.into_parts();
    let problem =
        actix_web::ResponseError::error_response(&ApiError::too_large(cap, "request_max_bytes"));
    let res = actix_web::dev::ServiceResponse::new(req, problem).map_into_right_body();
    Ok(ErrorHandlerResponse::Response(res))
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
            .error_handler(move |e, _| form_error(e, max_body)),
    )
    .app_data(web::QueryConfig::default().error_handler(query_error))
    .app_data(web::PathConfig::default().error_handler(path_error))
    .app_data(web::PayloadConfig::default().limit(max_body))
    .app_data(web::Data::new(BodyCap(max_body)))
    .configure(routes::register)
    .configure(console::register)
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic
mod tests {
    use actix_web::http::StatusCode;
    use actix_web::middleware::ErrorHandlers;
    use actix_web::{test, web, App, HttpResponse};

    /// A 413 actix writes itself (a raw body over `PayloadConfig`'s limit answers
    /// `text/plain` "payload reached size limit") becomes problem+json naming the limit
    /// and its setting; one of ours passes unchanged.
    #[actix_web::test]
    async fn every_413_is_problem_json_naming_the_limit() {
        let app = test::init_service(
            App::new()
                .wrap(
                    ErrorHandlers::new().handler(StatusCode::PAYLOAD_TOO_LARGE, super::problem_413),
                )
                .app_data(web::Data::new(super::BodyCap(1024)))
                .app_data(web::PayloadConfig::default().limit(1024))
                .route(
                    "/raw",
                    web::post().to(|b: web::Bytes| async move { HttpResponse::Ok().body(b) }),
                )
                .route(
                    "/ours",
                    web::post().to(|| async {
                        Err::<HttpResponse, _>(super::ApiError::too_large(7, "some_cap"))
                    }),
                ),
        )
        .await;
        let req = test::TestRequest::post()
            .uri("/raw")
            .set_payload(vec![b'x'; 2048])
            .to_request();
        let res = test::call_service(&app, req).await;
        assert_eq!(res.status(), StatusCode::PAYLOAD_TOO_LARGE);
        assert_eq!(
            res.headers().get("content-type").unwrap(),
            "application/problem+json"
        );
        let body: serde_json::Value = test::read_body_json(res).await;
        assert_eq!(body["code"], "payload_too_large");
        let detail = body["detail"].as_str().unwrap();
        assert!(
            detail.contains("1024 bytes") && detail.contains("request_max_bytes"),
            "{detail}"
        );
        let small = test::TestRequest::post()
            .uri("/raw")
            .set_payload(vec![b'x'; 10])
            .to_request();
        assert_eq!(
            test::call_service(&app, small).await.status(),
            StatusCode::OK
        );
        let ours = test::TestRequest::post().uri("/ours").to_request();
        let body: serde_json::Value =
            test::read_body_json(test::call_service(&app, ours).await).await;
        assert!(
            body["detail"].as_str().unwrap().contains("some_cap"),
            "{body}"
        );
    }
}
