//! The connected-app side of a provider of kind `app` — its `toolkit` and how
//! end users connect it (`connection`), D3–D4. The OAuth client secret is
//! sealed to the provider id and never returned.

use std::collections::BTreeMap;

use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use utoipa::ToSchema;

use sqlx::PgPool;

use super::validate::absolute_url;
use super::StudioError;
use crate::crypto::Cipher;
use crate::store::providers::{self, origin, Connection, Provider, TokenAuthMethod};
use crate::store::tools::ToolKind;
use crate::store::OrgId;

/// How end users connect a toolkit, as written by the Studio.
#[derive(Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ConnectionInput {
    /// OAuth 2.0 authorization code with PKCE and `state`: `issuer` alone (its endpoints
    /// discovered from its metadata), or `authorize_url` and `token_url`, or both.
    Oauth2 {
        #[serde(default)]
        issuer: Option<String>,
        #[serde(default)]
        authorize_url: Option<String>,
        #[serde(default)]
        token_url: Option<String>,
        #[serde(default)]
        revocation_url: Option<String>,
        client_id: String,
        /// Encrypted at rest, never returned.
        #[schema(value_type = Option<String>)]
        client_secret: Option<SecretString>,
        #[serde(default)]
        scopes: Vec<String>,
        #[serde(default)]
        token_endpoint_auth_method: Option<TokenAuthMethod>,
        /// Extra authorization request parameters; the flow's own are refused.
        #[serde(default)]
        #[schema(value_type = AuthorizationParams)]
        authorization_params: BTreeMap<String, String>,
    },
    /// A form where the user pastes an API key; `instructions` say where to find one.
    ApiKey { instructions: Option<String> },
}

/// Extra authorization request parameters by name (at most 20, names of 1 to 100
/// characters, values of at most 1000). The schema of `authorization_params`, named so
/// that client generators make one model of it.
#[derive(ToSchema)]
#[allow(dead_code)] // a schema only: the field is read as a map
pub struct AuthorizationParams(BTreeMap<String, String>);

fn valid_toolkit(t: &str) -> bool {
    !t.is_empty()
        && t.len() <= 64
        && t.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Before anything is written: secrets of a connected app stay bound to where they go.
/// The stored OAuth client secret goes to `token_url`, so moving that to another origin
/// needs the secret again; end users' connection tokens go to `base_url`, which they
/// connected for, so an app provider's base URL cannot move to another origin at all
/// (and their refresh tokens go to `token_url`: see [`token_origin_moves`]).
pub fn check_binding(
    cur: &Provider,
    next_base_url: &str,
    connection: Option<&ConnectionInput>,
) -> Result<(), StudioError> {
    if cur.kind != ToolKind::App {
        return Ok(());
    }
    if origin(&cur.base_url) != origin(next_base_url) {
        return Err(StudioError::Conflict(
            "an app provider's base_url cannot move to another origin: its users' connections \
             were made for this one. Create a new provider for the new origin"
                .into(),
        ));
    }
    let keeps_secret = matches!(
        (&cur.connection, connection),
        (
            Some(Connection::Oauth2 {
                has_client_secret: true,
                ..
            }),
            Some(ConnectionInput::Oauth2 {
                client_secret: None,
                ..
            }),
        )
    );
    if keeps_secret && token_origin_moves(cur, connection) {
        return Err(StudioError::CredentialRequired(
            "moving connection.token_url to another origin sends the stored OAuth client \
             secret somewhere new: send connection.client_secret again in the same request"
                .into(),
        ));
    }
    Ok(())
}

/// Whether `connection` sends OAuth requests to another token endpoint origin than the
/// provider's (a provider that is not OAuth yet included): users' refresh tokens, issued
/// by the old endpoint, would be presented to the new one on their next refresh.
pub fn token_origin_moves(cur: &Provider, connection: Option<&ConnectionInput>) -> bool {
    let Some(ConnectionInput::Oauth2 {
        token_url, issuer, ..
    }) = connection
    else {
        return false;
    };
    let next = token_url.as_deref().or(issuer.as_deref()).and_then(origin);
    match cur.connection.as_ref().and_then(Connection::token_origin) {
        Some(old) => next.is_none() || next.as_deref() != Some(old.as_str()),
        None => true,
    }
}

/// Parameters of the authorization request loopgate sets itself: never configurable.
const RESERVED_PARAMS: &[&str] = &[
    "client_id",
    "redirect_uri",
    "state",
    "code_challenge",
    "code_challenge_method",
    "response_type",
    "scope",
    "client_secret",
    "code_verifier",
];

/// `authorization_params` and an `authorize_url`'s own query: at most 20 parameters,
/// none of the flow's own.
fn check_params(
    authorize_url: Option<&str>,
    params: &BTreeMap<String, String>,
) -> Result<(), StudioError> {
    let in_url: Vec<String> = authorize_url
        .and_then(|u| url::Url::parse(u).ok())
        .map(|u| u.query_pairs().map(|(k, _)| k.into_owned()).collect())
        .unwrap_or_default();
    if params.len() > 20
        || params
            .iter()
            .any(|(k, v)| k.is_empty() || k.len() > 100 || v.len() > 1000)
    {
        return Err(StudioError::Invalid(
            "connection.authorization_params: at most 20, names of 1 to 100 characters, values of at most 1000".into(),
        ));
    }
    for k in params.keys().chain(in_url.iter()) {
        if RESERVED_PARAMS.contains(&k.to_ascii_lowercase().as_str()) {
            return Err(StudioError::Invalid(format!(
                "the authorization parameter `{k}` is set by loopgate itself and cannot be configured \
                 (reserved: {})",
                RESERVED_PARAMS.join(", ")
            )));
        }
    }
    Ok(())
}

/// An absolute http(s) URL that may carry a query (an authorization endpoint's own).
fn url_with_query(field: &str, raw: &str) -> Result<String, StudioError> {
    let mut u = url::Url::parse(raw.trim())
        .map_err(|e| StudioError::Invalid(format!("{field} is not an absolute URL: {e}")))?;
    let query = u.query().map(str::to_string);
    u.set_query(None);
    let mut checked = url::Url::parse(&absolute_url(field, u.as_str())?)
        .map_err(|e| StudioError::Invalid(format!("{field}: {e}")))?;
    checked.set_query(query.as_deref());
    Ok(checked.to_string())
}

fn optional_url(field: &str, raw: Option<String>) -> Result<Option<String>, StudioError> {
    raw.map(|u| absolute_url(field, &u)).transpose()
}

/// Checks `toolkit` / `connection` against the provider's kind and stores them; a
/// provider that is not kind `app` takes neither.
pub async fn apply(
    pool: &PgPool,
    cipher: &Cipher,
    org: &OrgId,
    provider: Provider,
    toolkit: Option<String>,
    connection: Option<ConnectionInput>,
) -> Result<Provider, StudioError> {
    if provider.kind != ToolKind::App {
        if toolkit.is_some() || connection.is_some() {
            return Err(StudioError::Invalid(
                "`toolkit` and `connection` belong to providers of kind app (connected-app toolkits)".into(),
            ));
        }
        return Ok(provider);
    }
    if toolkit.is_none() && connection.is_none() && provider.toolkit.is_some() {
        return Ok(provider);
    }
    let toolkit = toolkit.or(provider.toolkit.clone()).ok_or_else(|| {
        StudioError::Invalid("a provider of kind app needs `toolkit`: the name end users and models know it by, [A-Za-z0-9_-]{1,64}".into())
    })?;
    if !valid_toolkit(&toolkit) {
        return Err(StudioError::Invalid(
            "toolkit must match [A-Za-z0-9_-]{1,64}".into(),
        ));
    }
    let (conn, secret) = match connection {
        None => match provider.connection.clone() {
            Some(c) => (c, None),
            None => return Err(StudioError::Invalid(
                "a provider of kind app needs `connection`: {type: \"oauth2\", issuer | authorize_url + token_url, client_id, client_secret, scopes} or {type: \"api_key\", instructions}".into(),
            )),
        },
        Some(ConnectionInput::Oauth2 {
            issuer,
            authorize_url,
            token_url,
            revocation_url,
            client_id,
            client_secret,
            scopes,
            token_endpoint_auth_method,
            authorization_params,
        }) => {
            if client_id.trim().is_empty() || client_id.len() > 500 || scopes.len() > 50 {
                return Err(StudioError::Invalid("connection.client_id must be 1 to 500 characters, with at most 50 scopes".into()));
            }
            if issuer.is_none() && (authorize_url.is_none() || token_url.is_none()) {
                return Err(StudioError::Invalid(
                    "connection needs `issuer` (its endpoints are discovered from the server's metadata) \
                     or both `authorize_url` and `token_url`".into(),
                ));
            }
            let authorize_url = authorize_url
                .map(|u| url_with_query("connection.authorize_url", &u))
                .transpose()?;
            check_params(authorize_url.as_deref(), &authorization_params)?;
            // an issuer identifier has no query or fragment (RFC 8414 §2)
            let issuer = optional_url("connection.issuer", issuer)?
                .map(|i| i.trim_end_matches('/').to_string());
            let token_url = optional_url("connection.token_url", token_url)?;
            let revocation_url = optional_url("connection.revocation_url", revocation_url)?;
            let sealed = match &client_secret {
                Some(s) if !s.expose_secret().is_empty() && s.expose_secret().len() <= 4096 => {
                    Some(cipher.encrypt(s.expose_secret().as_bytes(), provider.id.as_bytes()))
                }
                Some(_) => return Err(StudioError::Invalid("connection.client_secret must be 1 to 4096 bytes".into())),
                None => None,
            };
            let has_client_secret = sealed.is_some()
                || matches!(provider.connection, Some(Connection::Oauth2 { has_client_secret: true, .. }));
            if token_endpoint_auth_method.is_some_and(|m| m != TokenAuthMethod::None) && !has_client_secret {
                return Err(StudioError::Invalid(
                    "connection.token_endpoint_auth_method client_secret_basic or client_secret_post needs `client_secret`".into(),
                ));
            }
            let conn = Connection::Oauth2 {
                issuer,
                authorize_url,
                token_url,
                revocation_url,
                client_id: client_id.trim().to_string(),
                scopes,
                token_endpoint_auth_method,
                authorization_params,
                has_client_secret,
            };
            (conn, sealed)
        }
        Some(ConnectionInput::ApiKey { instructions }) => {
            if instructions.as_ref().is_some_and(|i| i.len() > 4096) {
                return Err(StudioError::Invalid("connection.instructions must be at most 4096 bytes".into()));
            }
            (Connection::ApiKey { instructions }, None)
        }
    };
    Ok(providers::set_app(pool, org, &provider.id, &toolkit, &conn, secret).await?)
}
