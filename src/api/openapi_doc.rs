//! The OpenAPI document, generated from the handlers' annotations and completed by the
//! `contract::Contract` pass (security schemes, operation ids, error responses).

use actix_web::HttpResponse;
use utoipa::OpenApi;

use super::contract::Contract;

use super::{
    agents, api_keys, audit, connect, connections, deployments, error, events, mcp, ops, orgs,
    providers, runtime, runtime_tokens, schedules, sse, tools, webhooks, workflow_runs, workflows,
};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "loopgate",
        description = "Executes AI agents' tool calls against business APIs: every response passes a size guard, \
and bindings that opt in walk every page, fan out, project and filter inside one call with an honest verdict. \
Errors are RFC 9457 `application/problem+json` with a stable `code`. Every list is cursor-paginated, newest first: \
`?limit=` (1-200, default 50) and `?cursor=`; responses are `{data, has_more, cursor, total}` with `total` \
on the first page only; pass `cursor` back until `has_more` is false. Authenticate with \
`Authorization: Bearer <token>`: the admin token, an org API key with the scope an operation names, or a runtime token."
    ),
    modifiers(&Contract),
    paths(
        ops::healthz, ops::readyz, ops::metrics, openapi_document,
        orgs::create, orgs::list, orgs::get, orgs::update, orgs::delete,
        api_keys::create, api_keys::list, api_keys::get, api_keys::revoke,
        deployments::create, deployments::list, deployments::get, deployments::update, deployments::delete,
        providers::create, providers::list, providers::get, providers::update, providers::delete, providers::sync,
        tools::import_openapi, tools::create, tools::list, tools::get, tools::update, tools::delete, tools::pagination,
        agents::create, agents::list, agents::get, agents::update, agents::delete,
        agents::add_binding, agents::get_binding, agents::update_binding, agents::remove_binding, agents::placement,
        workflows::create, workflows::list, workflows::get, workflows::update, workflows::delete,
        schedules::create, schedules::list, schedules::get, schedules::update, schedules::delete,
        webhooks::create, webhooks::list, webhooks::get, webhooks::update, webhooks::delete,
        webhooks::rotate_secret, webhooks::deliveries,
        runtime_tokens::mint, runtime_tokens::revoke, runtime::steps, runtime::tool_call, runtime::get_tool_call, mcp::post, mcp::get, mcp::delete, mcp::resource_metadata,
        workflow_runs::create, workflow_runs::list, workflow_runs::get,
        connections::list, connections::delete, connect::show, connect::submit, connect::callback,
        events::tool_call, events::workflow_run, audit::list,
    ),
    components(schemas(error::Problem, sse::UiMessageStream)),
    tags(
        (name = "admin", description = "Platform admins: orgs, API keys, deployments (admin token)"),
        (name = "studio", description = "Configuration: providers, tools, agents, workflows (org key, scope `studio`)"),
        (name = "runtime", description = "Runtime tokens (scope `mint`) and agent runtimes (runtime token, or org key with scope `runtime`)"),
        (name = "connect", description = "End users connecting a connected-app toolkit through a single-use link (the link is the credential)"),
        (name = "operations", description = "Health, readiness, metrics, this document"),
    )
)]
pub struct ApiDoc;

/// The document with every rule of `contract` applied.
pub fn openapi() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
}

/// The document as served at `/openapi.json` and committed as `openapi/openapi.json`.
pub fn openapi_json() -> String {
    openapi().to_pretty_json().unwrap_or_default()
}

/// This OpenAPI document (3.1), as committed in `openapi/openapi.json`.
///
/// Public. The same bytes as the file committed in the repository; the client packages are
/// generated from it.
#[utoipa::path(get, path = "/openapi.json", operation_id = "getOpenapiDocument", tag = "operations",
    responses((status = 200, description = "The OpenAPI 3.1 document", body = Object)))]
pub async fn openapi_document() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/json")
        .body(openapi_json())
}
