//! The one owner of the org's config epoch bump on the API
//! ([`crate::call::agent_memory`]): after a request that may have written something
//! (any method but GET, HEAD and OPTIONS) on any route but those that write nothing the
//! agent statement reads ([`UNBUMPED_ROUTES`]: tool calls, steps, MCP, workflow runs,
//! runtime tokens — the runtime's own, run or minted far more often than configuration
//! changes), the epoch of the org the request acted on is bumped before the response goes
//! out, so every replica's next call reads what the request changed. Whatever the status: a handler
//! that wrote and then failed (a write followed by an error on the way out) must not leave
//! replicas using what they remember, and a refused write costs only a bump and one
//! reload per replica. The org is the caller's (an org key or runtime token), or for the
//! admin's routes the path's `{org_id}`; the admin's `POST /v1/orgs` acts on no existing
//! org, and a request refused before its handler (401, 429) bumps nothing.

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::Method;
use actix_web::middleware::Next;
use actix_web::web;

use super::extract::acted_on;
use crate::api::state::AppState;

/// The routes (their path patterns) that write nothing the agent statement
/// (`store::agent_load`) reads — agents, bindings, tools, providers, deployments,
/// connections, threads — and so bump nothing: a tool call, step or MCP request writes its
/// record and Redis state (a thread it creates is in no replica's memory; a connection it
/// refreshes bumps on its own), a workflow run its run, minting or revoking a runtime
/// token a revocation at most.
pub const UNBUMPED_ROUTES: &[&str] = &[
    "/v1/agents/{agent_id}/threads/{thread_id}/tool-calls",
    "/v1/agents/{agent_id}/threads/{thread_id}/steps",
    "/v1/agents/{agent_id}/mcp",
    "/v1/workflows/{workflow_id}/runs",
    "/v1/runtime-tokens",
    "/v1/runtime-tokens/{token_id}",
];

/// Middleware on every route (see the module header).
pub async fn bump_after_writes(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let reads = matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS);
    if reads
        || req
            .match_pattern()
            .is_some_and(|p| UNBUMPED_ROUTES.contains(&p.as_str()))
    {
        return next.call(req).await;
    }
    let res = next.call(req).await?;
    let org = acted_on(res.request());
    let state = res.request().app_data::<web::Data<AppState>>().cloned();
    if let (Some(org), Some(state)) = (org, state) {
        crate::call::agent_memory::bump(state.runtime.kv(), &org).await;
    }
    Ok(res)
}
