//! Studio: the connected-app side of a provider of kind `app` — its `toolkit` and how
//! end users connect it (`connection`), D3–D4. The OAuth client secret is
//! sealed to the provider id and never returned.

use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use utoipa::ToSchema;

use super::error::ApiError;
use super::validate::absolute_url;
use crate::api::state::AppState;
use crate::store::providers::{self, origin, Connection, Provider};
use crate::store::tools::ToolKind;
use crate::store::OrgId;

/// How end users connect a toolkit, as written by the Studio.
#[derive(Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ConnectionInput {
    /// OAuth 2.0 authorization code with PKCE and `state`.
    Oauth2 {
        authorize_url: String,
        token_url: String,
        client_id: String,
        /// Encrypted at rest, never returned.
        #[schema(value_type = Option<String>)]
        client_secret: Option<SecretString>,
        #[serde(default)]
        scopes: Vec<String>,
    },
    /// A form where the user pastes an API key; `instructions` say where to find one.
    ApiKey { instructions: Option<String> },
}

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
) -> Result<(), ApiError> {
    if cur.kind != ToolKind::App {
        return Ok(());
    }
    if origin(&cur.base_url) != origin(next_base_url) {
        return Err(ApiError::Conflict(
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
        return Err(ApiError::CredentialRequired(
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
    let Some(ConnectionInput::Oauth2 { token_url, .. }) = connection else {
        return false;
    };
    match &cur.connection {
        Some(Connection::Oauth2 { token_url: old, .. }) => {
            origin(old).is_none() || origin(old) != origin(token_url)
        }
        _ => true,
    }
}

/// Checks `toolkit` / `connection` against the provider's kind and stores them; a
/// provider that is not kind `app` takes neither.
pub async fn apply(
    state: &AppState,
    org: &OrgId,
    provider: Provider,
    toolkit: Option<String>,
    connection: Option<ConnectionInput>,
) -> Result<Provider, ApiError> {
    if provider.kind != ToolKind::App {
        if toolkit.is_some() || connection.is_some() {
            return Err(ApiError::invalid(
                "`toolkit` and `connection` belong to providers of kind app (connected-app toolkits)",
            ));
        }
        return Ok(provider);
    }
    if toolkit.is_none() && connection.is_none() && provider.toolkit.is_some() {
        return Ok(provider);
    }
    let toolkit = toolkit.or(provider.toolkit.clone()).ok_or_else(|| {
        ApiError::invalid("a provider of kind app needs `toolkit`: the name end users and models know it by, [A-Za-z0-9_-]{1,64}")
    })?;
    if !valid_toolkit(&toolkit) {
        return Err(ApiError::invalid("toolkit must match [A-Za-z0-9_-]{1,64}"));
    }
    let (conn, secret) = match connection {
        None => match provider.connection.clone() {
            Some(c) => (c, None),
            None => return Err(ApiError::invalid(
                "a provider of kind app needs `connection`: {type: \"oauth2\", authorize_url, token_url, client_id, client_secret, scopes} or {type: \"api_key\", instructions}",
            )),
        },
        Some(ConnectionInput::Oauth2 { authorize_url, token_url, client_id, client_secret, scopes }) => {
            if client_id.trim().is_empty() || client_id.len() > 500 || scopes.len() > 50 {
                return Err(ApiError::invalid("connection.client_id must be 1 to 500 characters, with at most 50 scopes"));
            }
            let sealed = match &client_secret {
                Some(s) if !s.expose_secret().is_empty() && s.expose_secret().len() <= 4096 => {
                    Some(state.cipher.encrypt(s.expose_secret().as_bytes(), provider.id.as_bytes()))
                }
                Some(_) => return Err(ApiError::invalid("connection.client_secret must be 1 to 4096 bytes")),
                None => None,
            };
            let has_client_secret = sealed.is_some()
                || matches!(provider.connection, Some(Connection::Oauth2 { has_client_secret: true, .. }));
            let conn = Connection::Oauth2 {
                authorize_url: absolute_url("connection.authorize_url", &authorize_url)?,
                token_url: absolute_url("connection.token_url", &token_url)?,
                client_id: client_id.trim().to_string(),
                scopes,
                has_client_secret,
            };
            (conn, sealed)
        }
        Some(ConnectionInput::ApiKey { instructions }) => {
            if instructions.as_ref().is_some_and(|i| i.len() > 4096) {
                return Err(ApiError::invalid("connection.instructions must be at most 4096 bytes"));
            }
            (Connection::ApiKey { instructions }, None)
        }
    };
    Ok(providers::set_app(&state.pool, org, &provider.id, &toolkit, &conn, secret).await?)
}
