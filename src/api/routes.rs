//! The route table: every API route loopgate serves, in one list grouped by path. The
//! same list registers the routes and is exported as `ROUTES`, so a test can check that
//! the OpenAPI document describes exactly what is served (a route added here without its
//! `#[utoipa::path]`, or documented but not routed, fails `openapi_doc`). Each path
//! answers its other methods with `405` and `Allow`, and resolves a bearer token before
//! the handler's extractors run (`extract::identify_first`), so 401/403 come before any
//! body validation; refuses a path parameter or query value holding a control character
//! (`clean_ids`) next; after any request that may write (not GET/HEAD/OPTIONS), whatever its
//! status, it bumps the org's config epoch before the response goes out, but on the
//! routes that write nothing the agent statement reads (`config_epoch`, which owns that
//! rule). `/docs` (the Swagger UI service) and `/studio` (the console's page and assets, `console`)
//! are the only routes outside the table.

use actix_web::middleware::from_fn;
use actix_web::web;

use super::clean_ids::refuse_control_ids;
use super::config_epoch::bump_after_writes;
use super::error::ApiError;
use super::extract::identify_first;
use super::{
    agents, api_keys, audit, connect, connections, deployments, events, mcp, openapi_doc, ops,
    orgs, providers, runtime, runtime_tokens, schedules, tools, webhooks, workflow_runs, workflows,
};

macro_rules! route_table {
    ($($path:literal => { $($method:ident: $handler:path),+ $(,)? })*) => {
        /// `(method, path)` of every route, in actix path syntax (the same as OpenAPI's).
        pub const ROUTES: &[(&str, &str)] = &[$($((stringify!($method), $path),)+)*];

        /// Registers every route of the table.
        pub fn register(cfg: &mut web::ServiceConfig) {
            $(
                cfg.service(
                    web::resource($path)
                        $(.route(web::$method().to($handler)))+
                        .default_service(web::to(|| method_not_allowed($path)))
                        .wrap(from_fn(bump_after_writes))
                        .wrap(from_fn(refuse_control_ids))
                        .wrap(from_fn(identify_first)),
                );
            )*
        }
    };
}

async fn method_not_allowed(path: &'static str) -> Result<actix_web::HttpResponse, ApiError> {
    let allow = ROUTES
        .iter()
        .filter(|(_, p)| *p == path)
        .map(|(m, _)| m.to_ascii_uppercase())
        .collect::<Vec<_>>()
        .join(", ");
    Err(ApiError::MethodNotAllowed(allow))
}

route_table! {
    "/healthz" => { get: ops::healthz }
    "/readyz" => { get: ops::readyz }
    "/metrics" => { get: ops::metrics }
    "/openapi.json" => { get: openapi_doc::openapi_document }

    // the agent runtime's routes first: actix tries routes in this order, matching each
    // route with a path parameter by a regex, so a tool call runs one regex, not fifteen
    "/v1/agents/{agent_id}/threads/{thread_id}/tool-calls" => { post: runtime::tool_call }
    "/v1/agents/{agent_id}/threads/{thread_id}/steps" => { post: runtime::steps }
    "/v1/agents/{agent_id}/mcp" => { post: mcp::post, get: mcp::get, delete: mcp::delete }
    "/v1/tool-calls/{call_id}" => { get: runtime::get_tool_call }
    "/v1/tool-calls/{call_id}/events" => { get: events::tool_call }

    "/v1/orgs" => { post: orgs::create, get: orgs::list }
    "/v1/orgs/{org_id}" => { get: orgs::get, patch: orgs::update, delete: orgs::delete }
    "/v1/orgs/{org_id}/api-keys" => { post: api_keys::create, get: api_keys::list }
    "/v1/orgs/{org_id}/api-keys/{key_id}" => { get: api_keys::get, delete: api_keys::revoke }
    "/v1/orgs/{org_id}/deployments" => { post: deployments::create, get: deployments::list }
    "/v1/orgs/{org_id}/deployments/{deployment_id}" => {
        get: deployments::get, patch: deployments::update, delete: deployments::delete,
    }

    "/v1/providers" => { post: providers::create, get: providers::list }
    "/v1/providers/{provider_id}" => {
        get: providers::get, patch: providers::update, delete: providers::delete,
    }
    "/v1/providers/{provider_id}/openapi" => { post: tools::import_openapi }
    "/v1/providers/{provider_id}/sync" => { post: providers::sync }
    "/v1/tools" => { post: tools::create, get: tools::list }
    "/v1/tools/{tool_id}" => { get: tools::get, patch: tools::update, delete: tools::delete }
    "/v1/tools/{tool_id}/pagination" => { get: tools::pagination }
    "/v1/agents" => { post: agents::create, get: agents::list }
    "/v1/agents/{agent_id}" => { get: agents::get, patch: agents::update, delete: agents::delete }
    "/v1/agents/{agent_id}/placement" => { get: agents::placement }
    "/v1/agents/{agent_id}/tools" => { post: agents::add_binding }
    "/v1/agents/{agent_id}/tools/{tool_id}" => {
        get: agents::get_binding, patch: agents::update_binding, delete: agents::remove_binding,
    }
    "/v1/workflows" => { post: workflows::create, get: workflows::list }
    "/v1/workflows/{workflow_id}" => {
        get: workflows::get, patch: workflows::update, delete: workflows::delete,
    }
    "/v1/workflows/{workflow_id}/schedules" => { post: schedules::create, get: schedules::list }
    "/v1/schedules/{schedule_id}" => {
        get: schedules::get, patch: schedules::update, delete: schedules::delete,
    }
    "/v1/webhook-endpoints" => { post: webhooks::create, get: webhooks::list }
    "/v1/webhook-endpoints/{endpoint_id}" => {
        get: webhooks::get, patch: webhooks::update, delete: webhooks::delete,
    }
    "/v1/webhook-endpoints/{endpoint_id}/rotate-secret" => { post: webhooks::rotate_secret }
    "/v1/webhook-endpoints/{endpoint_id}/deliveries" => { get: webhooks::deliveries }

    "/v1/runtime-tokens" => { post: runtime_tokens::mint }
    "/v1/runtime-tokens/{token_id}" => { delete: runtime_tokens::revoke }
    "/v1/workflows/{workflow_id}/runs" => { post: workflow_runs::create, get: workflow_runs::list }
    "/v1/workflows/{workflow_id}/runs/{run_id}" => { get: workflow_runs::get }
    "/v1/workflows/{workflow_id}/runs/{run_id}/events" => { get: events::workflow_run }
    "/v1/audit-events" => { get: audit::list }
    "/v1/connections" => { get: connections::list }
    "/v1/connections/{connection_id}" => { delete: connections::delete }

    "/.well-known/oauth-protected-resource/v1/agents/{agent_id}/mcp" => {
        get: mcp::resource_metadata,
    }
    "/connect/callback" => { get: connect::callback }
    "/connect/{link}" => { get: connect::show, post: connect::submit }
}

#[cfg(test)]
mod tests {
    use super::ROUTES;

    /// A tool call (and a model step) is matched by the first route with a path parameter
    /// actix tries, so routing the hot path runs one regex; every route before it is
    /// static.
    #[test]
    fn the_runtime_routes_are_tried_before_every_other_route_with_parameters() {
        let first_dynamic = ROUTES.iter().position(|(_, p)| p.contains('{'));
        assert_eq!(
            first_dynamic.map(|i| ROUTES[i]),
            Some((
                "post",
                "/v1/agents/{agent_id}/threads/{thread_id}/tool-calls"
            ))
        );
        let steps = ROUTES.iter().position(|(_, p)| p.ends_with("/steps"));
        assert_eq!(steps, first_dynamic.map(|i| i + 1));
    }

    /// The routes that bump no config epoch are the runtime's, as routed.
    #[test]
    fn the_routes_without_an_epoch_bump_are_routed() {
        for p in crate::api::config_epoch::UNBUMPED_ROUTES {
            assert!(ROUTES.iter().any(|(_, r)| r == p), "{p} is not routed");
        }
    }
}
