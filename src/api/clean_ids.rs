//! Every path parameter and query value of a routed request is checked for control
//! characters (`loopgate_engine::ids`) before its handler runs: one holding NUL or any
//! other is `400 validation_failed` naming the parameter, so no such id reaches a store
//! (Postgres refuses U+0000 in `text`, which used to surface as `503`). The route's own
//! `401` still comes first: a `/v1/` request without credentials gets it, with the MCP
//! endpoint's challenge where it applies (`mcp_auth`). The tool-call arguments that are
//! ids are checked by the runtime with the same rule (`call::tool_call`).

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header;
use actix_web::middleware::Next;
use actix_web::ResponseError;

use super::error::ApiError;
use loopgate_engine::ids::{check_id, BadId};

/// The first path parameter or query value (its name, or `query` for a key) holding a
/// control character.
fn first_bad(req: &ServiceRequest) -> Option<BadId> {
    req.match_info()
        .iter()
        .find_map(|(name, value)| check_id(name, value).err())
        .or_else(|| {
            url::form_urlencoded::parse(req.query_string().as_bytes()).find_map(|(k, v)| {
                check_id("query parameter", &k)
                    .and_then(|()| check_id(&k, &v))
                    .err()
            })
        })
}

/// Middleware on every route of the table: refuses an id with a control character.
pub async fn refuse_control_ids<B: MessageBody>(
    req: ServiceRequest,
    next: Next<B>,
) -> Result<ServiceResponse<EitherBody<B>>, actix_web::Error> {
    let Some(bad) = first_bad(&req) else {
        return next
            .call(req)
            .await
            .map(ServiceResponse::map_into_left_body);
    };
    let err =
        if req.path().starts_with("/v1/") && !req.headers().contains_key(header::AUTHORIZATION) {
            ApiError::Unauthorized("missing `Authorization: Bearer <token>` header".into())
        } else {
            ApiError::malformed(bad.to_string())
        };
    let mut res = err.error_response();
    super::mcp_auth::challenge(req.request(), &mut res);
    Ok(req.into_response(res).map_into_right_body())
}
