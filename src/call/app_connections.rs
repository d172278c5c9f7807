//! D3, D4 in the runtime: `list_connections`, `connect_toolkit`, and the credential of
//! a connected-app tool call — the calling user's own connection of the toolkit
//! (never another user's), refreshed before its access token expires; a refresh that
//! fails marks the connection broken and the call answers `connect_required`.
//!
//! A tool call reads the connection with its agent, in the agent's one statement
//! ([`crate::store::agent_load`], still sealed); it is opened here only to be sent, and a
//! refresh still re-reads the row under its lock. A workflow run, whose agent serves many
//! steps over time, reads it when each step needs it, so a reconnect or refresh between
//! steps is seen.

use chrono::{Duration, Utc};
use secrecy::{ExposeSecret, SecretString};
use serde_json::{json, Value};

use crate::auth::Caller;
use crate::call::credential_choice::Credential;
use crate::call::offered_tools::toolkit_of;
use crate::call::{AgentView, BoundTool, Runtime, RuntimeError};
use crate::crypto::{random_token, sha256};
use crate::discovery::meta::CONNECT_TOOLKIT;
use crate::store::connections;
use crate::store::providers::{self, Connection, Provider};
use crate::store::OrgId;
use crate::upstream::oauth::{OAuthApp, Tokens};
use loopgate_engine::EngineError;

/// How long a connect link works.
pub const LINK_TTL_MINUTES: i64 = 15;
/// An access token closer than this to its expiry is refreshed before use.
const REFRESH_MARGIN_SECONDS: i64 = 60;

/// The AEAD associated data of a connection's secret: it decrypts only on its own row.
pub fn secret_aad(org: &OrgId, user: &str, toolkit: &str) -> Vec<u8> {
    format!("connection:{org}:{user}:{toolkit}").into_bytes()
}

fn connect_required(toolkit: &str) -> RuntimeError {
    RuntimeError::ConnectRequired(format!(
        "the user has not connected the toolkit '{toolkit}' (or its connection stopped working): call \
         {CONNECT_TOOLKIT} with {{\"toolkit\": \"{toolkit}\"}}, give the user the link to open, and call \
         this tool again once they say they are done"
    ))
}

/// The OAuth application of a connected-app provider.
pub(crate) fn oauth_app(
    provider: &Provider,
    client_secret: Option<SecretString>,
    redirect_url: String,
) -> Option<OAuthApp> {
    match &provider.connection {
        Some(Connection::Oauth2 {
            authorize_url,
            token_url,
            client_id,
            scopes,
            ..
        }) => Some(OAuthApp {
            authorize_url: authorize_url.clone(),
            token_url: token_url.clone(),
            client_id: client_id.clone(),
            client_secret,
            scopes: scopes.clone(),
            redirect_url,
        }),
        _ => None,
    }
}

impl Runtime {
    /// `/connect/callback`, where the authorization server sends the user back.
    pub fn redirect_url(&self) -> String {
        format!("{}/connect/callback", self.public_url)
    }

    /// Decrypts a sealed secret bound to `aad`.
    pub(crate) fn unseal(&self, sealed: &[u8], aad: &[u8]) -> Result<SecretString, RuntimeError> {
        let plain = self
            .cipher
            .decrypt(sealed, aad)
            .map_err(|e| RuntimeError::Internal(e.into()))?;
        Ok(SecretString::from(
            String::from_utf8_lossy(&plain).into_owned(),
        ))
    }

    /// The OAuth client secret of a provider, decrypted.
    pub(crate) async fn client_secret(
        &self,
        org: &OrgId,
        provider_id: &str,
    ) -> Result<Option<SecretString>, RuntimeError> {
        providers::connection_secret(&self.pool, org, provider_id)
            .await?
            .map(|sealed| self.unseal(&sealed, provider_id.as_bytes()))
            .transpose()
    }

    /// `list_connections` → `{connections: [{toolkit, connected}]}` for the agent's toolkits.
    pub(crate) async fn list_connections(
        &self,
        caller: &Caller,
        agent: &AgentView,
    ) -> Result<Value, RuntimeError> {
        let connected =
            connections::connected_toolkits(&self.pool, caller.org(), &caller.connection_user())
                .await?;
        let list: Vec<Value> = agent
            .toolkits()
            .into_iter()
            .map(|t| json!({"toolkit": t, "connected": connected.iter().any(|c| c == t)}))
            .collect();
        Ok(json!({ "connections": list }))
    }

    /// `connect_toolkit {toolkit}` → `{url, expires_at}`: a single-use link, valid 15 minutes.
    pub(crate) async fn connect_toolkit(
        &self,
        caller: &Caller,
        agent: &AgentView,
        args: &Value,
    ) -> Result<Value, RuntimeError> {
        let kits = agent.toolkits();
        let wanted = args.get("toolkit").and_then(Value::as_str).unwrap_or("");
        let Some(bound) = agent.tools.iter().find(|b| toolkit_of(b) == Some(wanted)) else {
            return Err(RuntimeError::Engine(EngineError::InvalidArguments {
                detail: format!(
                    "{CONNECT_TOOLKIT} needs `toolkit`, one of: {}",
                    kits.join(", ")
                ),
            }));
        };
        let token = random_token(43);
        let expires_at = Utc::now() + Duration::minutes(LINK_TTL_MINUTES);
        connections::create_link(
            &self.pool,
            caller.org(),
            &sha256(token.as_bytes()),
            &caller.connection_user(),
            wanted,
            &bound.provider.id,
            expires_at,
        )
        .await?;
        Ok(json!({
            "url": format!("{}/connect/{token}", self.public_url),
            "expires_at": expires_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        }))
    }

    /// D3, D4: the calling user's connection of the tool's toolkit, as the call's credential.
    pub(crate) async fn connection_credential(
        &self,
        caller: &Caller,
        bound: &BoundTool,
    ) -> Result<Credential, RuntimeError> {
        let toolkit = toolkit_of(bound).unwrap_or_default();
        let org = caller.org();
        let user = caller.connection_user();
        // read with the agent in this call's statement, for this very toolkit; else now
        let conn = match &bound.connection {
            Some(seen) if seen.toolkit == toolkit => seen.row.clone(),
            _ => connections::secret(&self.pool, org, &user, toolkit, &bound.provider.id).await?,
        };
        let Some(conn) = conn else {
            return Err(connect_required(toolkit));
        };
        if conn.broken {
            return Err(connect_required(toolkit));
        }
        let aad = secret_aad(org, &user, toolkit);
        let plain = self.unseal(&conn.secret_ciphertext.0, &aad)?;
        if conn.kind == "api_key" {
            return Ok(Credential::Connection(plain));
        }
        let tokens = read_tokens(&plain)?;
        if !refresh_due(conn.expires_at) {
            return Ok(Credential::Connection(SecretString::from(
                tokens.access_token,
            )));
        }
        // Read before the row is held: the holder needs no second pool connection.
        let secret = self.client_secret(org, &bound.provider.id).await?;
        // Waiters for this connection wait here, not each in a transaction of their own.
        let _turn = self.refresh_gates.enter(&conn.id).await;
        // One refresh at a time per connection: after waiting for the row, another call
        // may have refreshed it already (a rotated refresh token works only once).
        let Some((lock, conn)) = connections::lock_for_refresh(&self.pool, org, &conn.id).await?
        else {
            return Err(connect_required(toolkit));
        };
        if conn.broken {
            lock.release().await?;
            return Err(connect_required(toolkit));
        }
        let tokens = read_tokens(&self.unseal(&conn.secret_ciphertext.0, &aad)?)?;
        if !refresh_due(conn.expires_at) {
            lock.release().await?;
            return Ok(Credential::Connection(SecretString::from(
                tokens.access_token,
            )));
        }
        // refresh before expiry; any failure breaks the connection (the user reconnects)
        let refreshed = match (
            oauth_app(&bound.provider, secret, self.redirect_url()),
            &tokens.refresh_token,
        ) {
            (Some(app), Some(rt)) => self.oauth.refresh(&app, rt).await.ok(),
            _ => None,
        };
        let Some(new) = refreshed else {
            tracing::info!(toolkit, "connection refresh failed; marked broken");
            lock.broken().await?;
            crate::call::agent_memory::bump(self.kv(), org).await;
            return Err(connect_required(toolkit));
        };
        let sealed = self.cipher.encrypt(
            &serde_json::to_vec(&new).map_err(|e| RuntimeError::Internal(e.into()))?,
            &aad,
        );
        let expires_at = new
            .expires_in
            .and_then(|d| Duration::from_std(d).ok())
            .map(|d| Utc::now() + d);
        lock.refreshed(sealed, expires_at).await?;
        crate::call::agent_memory::bump(self.kv(), org).await;
        Ok(Credential::Connection(SecretString::from(new.access_token)))
    }
}

fn read_tokens(plain: &SecretString) -> Result<Tokens, RuntimeError> {
    serde_json::from_str(plain.expose_secret()).map_err(|e| RuntimeError::Internal(e.into()))
}

/// An access token closer than [`REFRESH_MARGIN_SECONDS`] to its expiry.
fn refresh_due(expires_at: Option<chrono::DateTime<Utc>>) -> bool {
    expires_at.is_some_and(|t| t - Utc::now() < Duration::seconds(REFRESH_MARGIN_SECONDS))
}
