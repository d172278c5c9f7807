//! Auth extractors: the permission a route needs is written in its argument's type.
//! `Admin` (admin token), `Studio` / `Mint` (org key with that scope), `Runtime`
//! (runtime token, or org key with scope `runtime`). Failures are problem+json:
//! 401 for a missing or bad token, 403 for a valid one without the permission.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use tracing::Instrument as _;

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::{http::header, web, FromRequest, HttpMessage, HttpRequest};
use secrecy::ExposeSecret;

use super::error::ApiError;
use crate::api::state::AppState;
use crate::auth::{Caller, KeyCaller};
use crate::crypto::ct_eq;
use crate::store::api_keys::{self, Scope};
use crate::store::token_revocations;
use crate::store::OrgId;

fn bearer(req: &HttpRequest) -> Result<String, ApiError> {
    let value = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| {
            ApiError::Unauthorized("missing `Authorization: Bearer <token>` header".into())
        })?;
    let token = value
        .strip_prefix("Bearer ")
        .or_else(|| value.strip_prefix("bearer "))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| {
            ApiError::Unauthorized("the Authorization header must be `Bearer <token>`".into())
        })?;
    Ok(token.to_string())
}

fn state(req: &HttpRequest) -> Result<web::Data<AppState>, ApiError> {
    req.app_data::<web::Data<AppState>>()
        .cloned()
        .ok_or_else(|| ApiError::Internal(anyhow::anyhow!("app state missing")))
}

fn is_admin(state: &AppState, token: &str) -> bool {
    ct_eq(
        token.as_bytes(),
        state.admin_token.expose_secret().as_bytes(),
    )
}

/// Who presented what, before the route's permission is checked.
#[derive(Clone)]
enum Presented {
    Admin,
    Key(KeyCaller),
    Runtime(crate::auth::RuntimeCaller),
}

/// Per-org limit on loopgate's own API: past it, 429 with `Retry-After`.
async fn throttle(state: &AppState, org: &OrgId) -> Result<(), ApiError> {
    state
        .org_limiter
        .check(org.as_str())
        .await
        .map_err(|wait| ApiError::RateLimited {
            detail: format!(
                "this org exceeded {} requests per second; retry after the indicated delay",
                state.org_limiter.per_second()
            ),
            retry_after_secs: wait.as_secs_f64().ceil().max(1.0) as u64,
        })
}

/// Identifies and throttles the caller, unless `identify_first` already did.
async fn authenticate(req: HttpRequest) -> Result<(web::Data<AppState>, Presented), ApiError> {
    if let Some(p) = req.extensions().get::<Presented>().cloned() {
        return Ok((state(&req)?, p));
    }
    let (state, presented) = identify(req).instrument(crate::stage!("auth")).await?;
    admit(&state, &presented)
        .instrument(crate::stage!("rate_limit"))
        .await?;
    Ok((state, presented))
}

async fn admit(state: &AppState, presented: &Presented) -> Result<(), ApiError> {
    match presented {
        Presented::Key(k) => throttle(state, &k.org).await,
        Presented::Runtime(r) => throttle(state, &r.org).await,
        Presented::Admin => Ok(()),
    }
}

/// Resolves the bearer token. A source address past its allowance of failed attempts is
/// refused first (429, no lookup); every failure is counted against it (`auth::guard`).
async fn identify(req: HttpRequest) -> Result<(web::Data<AppState>, Presented), ApiError> {
    let token = bearer(&req)?;
    let state = state(&req)?;
    let forwarded: Vec<&str> = req
        .headers()
        .get_all("x-forwarded-for")
        .filter_map(|v| v.to_str().ok())
        .collect();
    let ip = state
        .auth_guard
        .source(req.peer_addr().map(|a| a.ip()), &forwarded);
    if let Err(wait) = state.auth_guard.admit(ip) {
        return Err(ApiError::RateLimited {
            detail: "too many failed authentication attempts from this address; retry later".into(),
            retry_after_secs: wait.as_secs_f64().ceil().max(1.0) as u64,
        });
    }
    let presented = resolve(&state, &token).await;
    if matches!(presented, Err(ApiError::Unauthorized(_))) {
        state.auth_guard.failed(ip);
    }
    Ok((state, presented?))
}

async fn resolve(state: &AppState, token: &str) -> Result<Presented, ApiError> {
    if is_admin(state, token) {
        return Ok(Presented::Admin);
    }
    let refused = || ApiError::Unauthorized("the API key is unknown or revoked".into());
    if token.starts_with(api_keys::KEY_PREFIX) {
        // malformed keys and recently unknown ids cost no database query
        let id = api_keys::key_id_of(token).ok_or_else(refused)?;
        if state.auth_guard.is_unknown_key(&id) {
            return Err(refused());
        }
        let key = match api_keys::authenticate(&state.pool, token).await? {
            Ok(key) => key,
            Err(api_keys::Refusal::Unknown | api_keys::Refusal::Revoked) => {
                state.auth_guard.remember_unknown_key(&id);
                return Err(refused());
            }
            Err(_) => return Err(refused()),
        };
        return Ok(Presented::Key(KeyCaller {
            org: OrgId::trusted(key.org_id),
            key_id: key.id,
            scopes: key.scopes,
        }));
    }
    if token.matches('.').count() == 2 {
        let caller = state
            .tokens
            .verify(token)
            .map_err(|e| ApiError::Unauthorized(e.to_string()))?;
        if !state.auth_guard.token_recently_alive(&caller.token_id) {
            let alive = token_revocations::token_alive(
                &state.pool,
                &caller.org,
                &caller.minted_by,
                &caller.token_id,
            )
            .await?;
            if !alive {
                return Err(ApiError::Unauthorized(
                    "the runtime token was revoked (or the API key that minted it was)".into(),
                ));
            }
            state.auth_guard.remember_alive(&caller.token_id);
        }
        return Ok(Presented::Runtime(caller));
    }
    Err(ApiError::Unauthorized(
        "the bearer token is not recognised".into(),
    ))
}

/// Middleware on every route: resolves a presented bearer token and applies the org's
/// rate limit (the slow parts: a database lookup for keys, Redis for the limit) before
/// the handler runs, refusing an unknown token with 401 and a throttled org with 429. actix polls a handler's extractors together, so without this a body that fails
/// to parse would answer 400/422 before the auth extractor's lookup finished; with it the
/// auth extractor (the first argument of every handler) is ready at once and 401/403
/// always come first. Requests without an `Authorization` header pass untouched (the
/// extractors answer 401 on their own, and public routes need none).
pub async fn identify_first<B: MessageBody>(
    req: ServiceRequest,
    next: Next<B>,
) -> Result<ServiceResponse<EitherBody<B>>, actix_web::Error> {
    if req.path().starts_with("/v1/") && req.headers().contains_key(header::AUTHORIZATION) {
        let identified = identify(req.request().clone()).instrument(crate::stage!("auth"));
        let (state, presented) = match identified.await {
            Ok(found) => found,
            // an MCP endpoint's 401 names its protected-resource metadata (M2)
            Err(e @ ApiError::Unauthorized(_)) => {
                let mut res = actix_web::ResponseError::error_response(&e);
                crate::api::mcp_auth::challenge(req.request(), &mut res);
                return Ok(req.into_response(res).map_into_right_body());
            }
            Err(e) => return Err(e.into()),
        };
        admit(&state, &presented)
            .instrument(crate::stage!("rate_limit"))
            .await?;
        req.extensions_mut().insert(presented);
    }
    next.call(req)
        .await
        .map(ServiceResponse::map_into_left_body)
}

/// The org a request acted on, once its handler ran: the caller's (an org key or a
/// runtime token), or for the admin the path's `{org_id}`; `None` for a request without
/// a resolved bearer token, or the admin's on no org.
pub fn acted_on(req: &HttpRequest) -> Option<OrgId> {
    match req.extensions().get::<Presented>()? {
        Presented::Key(k) => Some(k.org.clone()),
        Presented::Runtime(r) => Some(r.org.clone()),
        Presented::Admin => req.match_info().get("org_id").map(OrgId::trusted),
    }
}

type Fut<T> = Pin<Box<dyn Future<Output = Result<T, ApiError>>>>;

/// Platform admin (the configured admin token).
pub struct Admin;

impl FromRequest for Admin {
    type Error = ApiError;
    type Future = Fut<Self>;
    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let req = req.clone();
        Box::pin(async move {
            match authenticate(req).await?.1 {
                Presented::Admin => Ok(Admin),
                _ => Err(ApiError::Forbidden(
                    "this endpoint needs the admin token".into(),
                )),
            }
        })
    }
}

/// The admin acting on the org named by the path's `{org_id}`: proving the admin token
/// and finding the org (404 when it does not exist) is the price of the handle.
pub struct AdminOrg(pub OrgId);

impl FromRequest for AdminOrg {
    type Error = ApiError;
    type Future = Fut<Self>;
    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let admin = Admin::from_request(req, payload);
        let org_id = req
            .match_info()
            .get("org_id")
            .unwrap_or_default()
            .to_string();
        let req = req.clone();
        Box::pin(async move {
            admin.await?;
            let state = state(&req)?;
            let org = crate::store::orgs::resolve(&state.pool, &org_id)
                .await
                .map_err(super::error::or_not_found("org"))?;
            Ok(AdminOrg(org))
        })
    }
}

/// Marker for the scope an `OrgKey` extractor demands.
pub trait RequiredScope {
    const SCOPE: Scope;
}
pub struct StudioScope;
impl RequiredScope for StudioScope {
    const SCOPE: Scope = Scope::Studio;
}
pub struct MintScope;
impl RequiredScope for MintScope {
    const SCOPE: Scope = Scope::Mint;
}

/// An org API key holding scope `S`.
pub struct OrgKey<S> {
    pub org: OrgId,
    pub key_id: String,
    /// Every scope the key holds (beyond `S`, which it certainly holds).
    pub scopes: Vec<Scope>,
    _scope: PhantomData<S>,
}

pub type Studio = OrgKey<StudioScope>;
pub type Mint = OrgKey<MintScope>;

impl<S: RequiredScope + 'static> FromRequest for OrgKey<S> {
    type Error = ApiError;
    type Future = Fut<Self>;
    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let req = req.clone();
        Box::pin(async move {
            let scope = S::SCOPE.as_str();
            match authenticate(req).await?.1 {
                Presented::Key(k) if k.scopes.contains(&S::SCOPE) => Ok(OrgKey {
                    org: k.org,
                    key_id: k.key_id,
                    scopes: k.scopes,
                    _scope: PhantomData,
                }),
                Presented::Key(_) => Err(ApiError::Forbidden(format!(
                    "this API key lacks scope `{scope}`"
                ))),
                Presented::Admin => Err(ApiError::Forbidden(format!(
                    "the admin token does not act inside an org: use an org API key with scope `{scope}`"
                ))),
                Presented::Runtime(_) => Err(ApiError::Forbidden(format!(
                    "a runtime token cannot call this endpoint: use an org API key with scope `{scope}`"
                ))),
            }
        })
    }
}

/// A runtime caller: a runtime token, or an org key with scope `runtime`.
pub struct RuntimeAccess(pub Caller);

impl FromRequest for RuntimeAccess {
    type Error = ApiError;
    type Future = Fut<Self>;
    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let req = req.clone();
        Box::pin(async move {
            match authenticate(req).await?.1 {
                Presented::Runtime(r) => Ok(RuntimeAccess(Caller::Runtime(r))),
                Presented::Key(k) if k.scopes.contains(&Scope::Runtime) => Ok(RuntimeAccess(Caller::Key(k))),
                Presented::Key(_) => Err(ApiError::Forbidden("this API key lacks scope `runtime`".into())),
                Presented::Admin => Err(ApiError::Forbidden(
                    "the admin token cannot run agents: use a runtime token or an org key with scope `runtime`"
                        .into(),
                )),
            }
        })
    }
}

/// A reader of workflow runs: a runtime caller ([`RuntimeAccess`]), or an org key with
/// scope `studio` (scheduled runs have no calling user: any key of the org reads them).
pub struct RunReader(pub Caller);

impl FromRequest for RunReader {
    type Error = ApiError;
    type Future = Fut<Self>;
    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let req = req.clone();
        Box::pin(async move {
            match authenticate(req).await?.1 {
                Presented::Runtime(r) => Ok(RunReader(Caller::Runtime(r))),
                Presented::Key(k)
                    if k.scopes.contains(&Scope::Runtime) || k.scopes.contains(&Scope::Studio) =>
                {
                    Ok(RunReader(Caller::Key(k)))
                }
                Presented::Key(_) => Err(ApiError::Forbidden(
                    "this API key lacks scope `runtime` (or `studio`)".into(),
                )),
                Presented::Admin => Err(ApiError::Forbidden(
                    "the admin token does not act inside an org: use an org key (scope `runtime` or `studio`) or a runtime token"
                        .into(),
                )),
            }
        })
    }
}
