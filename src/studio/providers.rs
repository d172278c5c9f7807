//! Studio operations on providers (upstream APIs, MCP servers, connected apps), with no
//! HTTP types: the rules a provider's fields follow, and the rules that keep secrets bound
//! to where they go — a stored credential follows its provider only to the same origin and
//! auth placement (else it must be sent again), and users' OAuth refresh tokens keep the
//! token endpoint that issued them.

use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use sqlx::PgPool;
use utoipa::ToSchema;

use super::toolkits::{self, ConnectionInput};
use super::validate::{base_url, double_option, endpoint_url, name};
use super::StudioError;
use crate::crypto::{new_id, Cipher};
use crate::store::connections;
use crate::store::providers::{
    self, AuthType, CredentialBinding, CredentialChange, Provider, ProviderAuth, ProviderFields,
    RateLimit,
};
use crate::store::tools::ToolKind;
use crate::store::OrgId;

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProviderInput {
    pub name: String,
    /// `api` (an HTTP API, the default), `mcp` (an MCP server over streamable HTTP) or
    /// `app` (a connected-app toolkit). Fixed once created; the provider's tools get it.
    #[serde(default)]
    pub kind: ToolKind,
    /// The API's base URL (kinds `api` and `app`).
    pub base_url: Option<String>,
    /// The MCP server's streamable HTTP endpoint (kind `mcp`).
    pub url: Option<String>,
    pub auth: ProviderAuth,
    /// The org-level secret; encrypted at rest, never returned.
    #[schema(value_type = Option<String>)]
    pub credential: Option<SecretString>,
    #[serde(default)]
    pub user_credentials_required: bool,
    pub rate_limit: Option<RateLimit>,
    /// P9: requests one walk keeps in flight at once against this provider, 1 to 32
    /// (default 4); the rate limit still spaces them. 1 walks one page at a time.
    #[schema(minimum = 1, maximum = 32)]
    pub concurrency: Option<u32>,
    /// Send the call's W3C trace context (`traceparent`, `tracestate`) with upstream
    /// requests, so the API's own traces join the call's (default false).
    #[serde(default)]
    pub propagate_trace_context: bool,
    /// Kind `app`: the toolkit its tools belong to, `[A-Za-z0-9_-]{1,64}`, unique in the org.
    pub toolkit: Option<String>,
    /// Kind `app`: how end users connect the toolkit.
    pub connection: Option<ConnectionInput>,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProviderPatch {
    pub name: Option<String>,
    /// Accepted only when it equals the provider's kind, which never changes.
    pub kind: Option<ToolKind>,
    pub base_url: Option<String>,
    /// A new MCP endpoint (kind `mcp`).
    pub url: Option<String>,
    pub auth: Option<ProviderAuth>,
    /// A new secret, or `null` to remove the stored one.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    pub credential: Option<Option<SecretString>>,
    pub user_credentials_required: Option<bool>,
    /// New limits, or `null` to remove them.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<RateLimit>)]
    pub rate_limit: Option<Option<RateLimit>>,
    /// A new concurrency bound (1 to 32), or `null` for the default.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<u32>, minimum = 1, maximum = 32)]
    pub concurrency: Option<Option<u32>>,
    /// Whether upstream requests carry the call's W3C trace context.
    pub propagate_trace_context: Option<bool>,
    /// Kind `app`: a new toolkit name.
    pub toolkit: Option<String>,
    /// Kind `app`: a new connection configuration (the client secret is kept unless given).
    pub connection: Option<ConnectionInput>,
}

/// The provider's address for its kind: an MCP server's `url` (or `base_url`, the same
/// thing), an API's `base_url`.
fn address(
    kind: ToolKind,
    base: Option<String>,
    url: Option<String>,
) -> Result<Option<String>, StudioError> {
    match kind {
        ToolKind::Mcp => {
            if let (Some(b), Some(u)) = (&base, &url) {
                if b != u {
                    return Err(StudioError::Invalid(
                        "an MCP provider has one address: give `url` (its streamable HTTP endpoint) only".into(),
                    ));
                }
            }
            url.or(base).map(|u| endpoint_url(&u)).transpose()
        }
        ToolKind::Api | ToolKind::App => {
            if url.is_some() {
                return Err(StudioError::Invalid(
                    "`url` is the endpoint of an MCP server (kind mcp); an API provider takes `base_url`".into(),
                ));
            }
            base.map(|b| base_url(&b)).transpose()
        }
    }
}

fn required_address(kind: ToolKind, a: Option<String>) -> Result<String, StudioError> {
    a.ok_or_else(|| {
        StudioError::Invalid(
            match kind {
                ToolKind::Mcp => {
                    "url is required for kind mcp: the MCP server's streamable HTTP endpoint"
                }
                _ => "base_url is required: the API's absolute http(s) base URL",
            }
            .into(),
        )
    })
}

fn check(f: ProviderFields) -> Result<ProviderFields, StudioError> {
    let name_ok = name(&f.name)?.to_string();
    let auth = match f.auth.kind {
        AuthType::Header | AuthType::Query => {
            let n = f.auth.name.as_deref().map(str::trim).unwrap_or("");
            if n.is_empty() || n.len() > 100 || !n.bytes().all(|b| b.is_ascii_graphic()) {
                return Err(StudioError::Invalid(
                    "auth.name is required for auth type header or query: the header or query parameter that carries the credential".into(),
                ));
            }
            ProviderAuth {
                kind: f.auth.kind,
                name: Some(n.to_string()),
            }
        }
        _ => ProviderAuth {
            kind: f.auth.kind,
            name: None,
        },
    };
    if let Some(r) = &f.rate_limit {
        if !(r.requests_per_second > 0.0 && r.requests_per_second <= 10_000.0)
            || r.burst == 0
            || r.burst > 10_000
        {
            return Err(StudioError::Invalid(
                "rate_limit.requests_per_second must be in (0, 10000] and rate_limit.burst in [1, 10000]".into(),
            ));
        }
    }
    if f.concurrency
        .is_some_and(|c| !(1..=MAX_CONCURRENCY).contains(&c))
    {
        return Err(StudioError::Invalid(format!(
            "concurrency must be in [1, {MAX_CONCURRENCY}]"
        )));
    }
    Ok(ProviderFields {
        name: name_ok,
        auth,
        ..f
    })
}

/// P9: the most requests one walk may keep in flight against a provider.
const MAX_CONCURRENCY: u32 = 32;

/// A provider's org credential, sealed to the provider's id (it opens on that row only).
fn seal(cipher: &Cipher, provider_id: &str, secret: &SecretString) -> Result<Vec<u8>, StudioError> {
    let s = secret.expose_secret();
    if s.is_empty() || s.len() > 8192 {
        return Err(StudioError::Invalid(
            "credential must be 1 to 8192 bytes".into(),
        ));
    }
    Ok(cipher.encrypt(s.as_bytes(), provider_id.as_bytes()))
}

/// Creates a provider: an HTTP API (`base_url`) or, with `kind: "mcp"`, an MCP server
/// (`url`), and for kind `app` its toolkit and connection — all or nothing.
pub async fn create(
    pool: &PgPool,
    cipher: &Cipher,
    org: &OrgId,
    body: ProviderInput,
) -> Result<Provider, StudioError> {
    let addr = address(body.kind, body.base_url, body.url)?;
    let fields = check(ProviderFields {
        name: body.name,
        kind: body.kind,
        base_url: required_address(body.kind, addr)?,
        auth: body.auth,
        user_credentials_required: body.user_credentials_required,
        rate_limit: body.rate_limit,
        concurrency: body.concurrency,
        propagate_trace_context: body.propagate_trace_context,
    })?;
    let id = new_id("prv");
    let sealed = body
        .credential
        .as_ref()
        .map(|c| seal(cipher, &id, c))
        .transpose()?;
    let p = providers::create(pool, org, &id, &fields, sealed).await?;
    let p = match toolkits::apply(pool, cipher, org, p, body.toolkit, body.connection).await {
        Ok(p) => p,
        Err(e) => {
            // all or nothing: a toolkit that cannot be stored leaves no provider behind
            providers::delete(pool, org, &id).await?;
            return Err(e);
        }
    };
    Ok(p)
}

/// Updates a provider; absent fields stay as they are. Refused: a change of kind; an
/// address on another origin, or another auth placement, without the credential again;
/// an app provider's move to another origin; a token endpoint on another origin while
/// users hold OAuth connections through it.
pub async fn update(
    pool: &PgPool,
    cipher: &Cipher,
    org: &OrgId,
    id: &str,
    body: ProviderPatch,
) -> Result<Provider, StudioError> {
    let cur = providers::get(pool, org, id)
        .await
        .map_err(StudioError::not_found("provider"))?;
    if body.kind.is_some_and(|k| k != cur.kind) {
        return Err(StudioError::Invalid(
            "a provider's kind cannot change: create a new provider of the other kind".into(),
        ));
    }
    let addr = address(cur.kind, body.base_url, body.url)?;
    let fields = check(ProviderFields {
        name: body.name.unwrap_or_else(|| cur.name.clone()),
        kind: cur.kind,
        base_url: addr.unwrap_or_else(|| cur.base_url.clone()),
        auth: body.auth.unwrap_or_else(|| cur.auth.clone()),
        user_credentials_required: body
            .user_credentials_required
            .unwrap_or(cur.user_credentials_required),
        rate_limit: body.rate_limit.unwrap_or_else(|| cur.rate_limit.clone()),
        concurrency: body.concurrency.unwrap_or(cur.concurrency),
        propagate_trace_context: body
            .propagate_trace_context
            .unwrap_or(cur.propagate_trace_context),
    })?;
    toolkits::check_binding(&cur, &fields.base_url, body.connection.as_ref())?;
    // Re-entering the client secret does not cover users' refresh tokens: they would go
    // to the new token endpoint on their next refresh, so with connections it cannot move.
    if toolkits::token_origin_moves(&cur, body.connection.as_ref())
        && connections::any_oauth(pool, org, &cur.id).await?
    {
        return Err(StudioError::Conflict(
            "users have OAuth connections made through this provider: their refresh tokens \
             belong to its token endpoint, so connection.token_url cannot move to another \
             origin (nor be set after another connection type). Create a new provider for \
             the new authorization server, or delete those connections first"
                .into(),
        ));
    }
    let change = match &body.credential {
        None if cur.has_credential && !same_binding(&cur, &fields) => {
            return Err(StudioError::CredentialRequired(
                "changing the address (base_url or url) to another origin, or the auth type or name, sends the stored \
                 credential somewhere new: send `credential` again in the same request (or \
                 `\"credential\": null` to remove it)"
                    .into(),
            ))
        }
        None => CredentialChange::Keep,
        Some(None) => CredentialChange::Clear,
        Some(Some(c)) => CredentialChange::Set(seal(cipher, &cur.id, c)?),
    };
    let p = providers::update(pool, org, &cur.id, &fields, change)
        .await
        .map_err(StudioError::not_found("provider"))?;
    toolkits::apply(pool, cipher, org, p, body.toolkit, body.connection).await
}

/// A stored credential is bound to where it goes ([`CredentialBinding`]): a studio key
/// cannot redirect the org's secret to itself.
fn same_binding(cur: &Provider, next: &ProviderFields) -> bool {
    CredentialBinding::allows(
        cur.credential_binding().as_ref(),
        CredentialBinding::of(&next.base_url, &next.auth).as_ref(),
    )
}
