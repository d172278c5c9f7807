//! D3, D4 in the runtime: `list_connections`, `connect_toolkit`, and the credential of
//! a connected-app tool call — the calling user's own connection of the toolkit
//! (never another user's), refreshed before its access token expires (a margin of a
//! third of its lifetime, at most 60 s) and once more when the upstream answers 401. A
//! refresh the server refuses for good (`invalid_grant`, `invalid_client`,
//! `unauthorized_client`: [`OAuthError::grant_is_dead`]) marks the connection broken and
//! the call answers `connect_required`; any other failure keeps it, and the call answers
//! `503 connection_unavailable` (or still uses a token that has not expired yet).
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
use crate::store::providers::{self, Provider};
use crate::store::OrgId;
use crate::upstream::oauth::{OAuthApp, OAuthError, Tokens};
use loopgate_engine::EngineError;

/// How long a connect link works.
pub const LINK_TTL_MINUTES: i64 = 15;
/// An access token closer than this to its expiry is refreshed before use (or a third of
/// its lifetime, when that is shorter).
const REFRESH_MARGIN_MAX_SECONDS: i64 = 60;
/// `Retry-After` of a `connection_unavailable` answer.
pub const CONNECTION_RETRY_AFTER_SECS: u64 = 30;

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

    /// The OAuth application of a connected-app provider: its configuration, its client
    /// secret, and what the issuer's metadata adds.
    pub(crate) async fn oauth_app(
        &self,
        provider: &Provider,
        client_secret: Option<SecretString>,
    ) -> Result<OAuthApp, OAuthError> {
        let Some(conn) = &provider.connection else {
            return Err(OAuthError::Config(
                "this app has no sign-in configured".into(),
            ));
        };
        self.oauth
            .resolve(conn, client_secret, self.redirect_url())
            .await
    }

    /// D3, D4: the calling user's connection of the tool's toolkit, as the call's credential.
    pub(crate) async fn connection_credential(
        &self,
        caller: &Caller,
        bound: &BoundTool,
    ) -> Result<Credential, RuntimeError> {
        self.connection_token(caller, bound, None).await
    }

    /// D4: the upstream answered 401 to the access token `rejected`: one refresh, even
    /// before the token's expiry (another call may have refreshed it meanwhile: then its
    /// new token). A connection that cannot be refreshed is broken: `connect_required`.
    pub(crate) async fn connection_after_401(
        &self,
        caller: &Caller,
        bound: &BoundTool,
        rejected: &str,
    ) -> Result<Credential, RuntimeError> {
        self.connection_token(caller, bound, Some(rejected)).await
    }

    /// D4: the retried call was refused (401) again: the connection is broken.
    pub(crate) async fn connection_refused(
        &self,
        caller: &Caller,
        bound: &BoundTool,
    ) -> Result<RuntimeError, RuntimeError> {
        let toolkit = toolkit_of(bound).unwrap_or_default();
        let org = caller.org();
        let user = caller.connection_user();
        if let Some(conn) =
            connections::secret(&self.pool, org, &user, toolkit, &bound.provider.id).await?
        {
            if let Some((lock, _)) =
                connections::lock_for_refresh(&self.pool, org, &conn.id).await?
            {
                tracing::info!(
                    toolkit,
                    "the upstream refused the refreshed connection (401); marked broken"
                );
                lock.broken().await?;
                crate::call::agent_memory::bump(self.kv(), org).await;
            }
        }
        Ok(connect_required(toolkit))
    }

    async fn connection_token(
        &self,
        caller: &Caller,
        bound: &BoundTool,
        rejected: Option<&str>,
    ) -> Result<Credential, RuntimeError> {
        let toolkit = toolkit_of(bound).unwrap_or_default();
        let org = caller.org();
        let user = caller.connection_user();
        // read with the agent in this call's statement, for this very toolkit; else now
        // (always now after a 401: the agent's copy is the token that was refused)
        let conn = match &bound.connection {
            Some(seen) if seen.toolkit == toolkit && rejected.is_none() => seen.row.clone(),
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
            if rejected.is_some() {
                // an API key has nothing to refresh
                return Err(self.connection_refused(caller, bound).await?);
            }
            return Ok(Credential::Connection(plain));
        }
        let tokens = read_tokens(&plain)?;
        if rejected.is_none() && !refresh_due(conn.expires_at, conn.token_lifetime_seconds) {
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
        let due = match rejected {
            Some(r) => tokens.access_token == r,
            None => refresh_due(conn.expires_at, conn.token_lifetime_seconds),
        };
        if !due {
            lock.release().await?;
            return Ok(Credential::Connection(SecretString::from(
                tokens.access_token,
            )));
        }
        let still_valid = rejected.is_none() && conn.expires_at.is_none_or(|t| t > Utc::now());
        let Some(rt) = &tokens.refresh_token else {
            if still_valid {
                lock.release().await?;
                return Ok(Credential::Connection(SecretString::from(
                    tokens.access_token,
                )));
            }
            tracing::warn!(toolkit, "the connection's access token expired and no refresh token was granted; marked broken");
            lock.broken().await?;
            crate::call::agent_memory::bump(self.kv(), org).await;
            return Err(connect_required(toolkit));
        };
        let refreshed = match self.oauth_app(&bound.provider, secret).await {
            Ok(app) => self.oauth.refresh(&app, rt).await,
            Err(e) => Err(e),
        };
        let new = match refreshed {
            Ok(new) => new,
            Err(e) if e.grant_is_dead() => {
                tracing::info!(toolkit, error = %e, "connection refresh refused; marked broken");
                lock.broken().await?;
                crate::call::agent_memory::bump(self.kv(), org).await;
                return Err(connect_required(toolkit));
            }
            Err(e) => {
                // transient (RFC 6749 §5.2 aside): the connection is kept, tried again later
                tracing::warn!(toolkit, error = %e, "connection refresh failed; the connection is kept");
                lock.release().await?;
                if still_valid {
                    return Ok(Credential::Connection(SecretString::from(
                        tokens.access_token,
                    )));
                }
                return Err(RuntimeError::ConnectionUnavailable(format!(
                    "the user's connection of the toolkit '{toolkit}' is kept, but its access could not \
                     be renewed just now (the app's sign-in server failed: {e}); retry this call in \
                     {CONNECTION_RETRY_AFTER_SECS} seconds — the user does not need to connect again"
                )));
            }
        };
        let sealed = self.cipher.encrypt(
            &serde_json::to_vec(&new).map_err(|e| RuntimeError::Internal(e.into()))?,
            &aad,
        );
        let (expires_at, lifetime) = token_expiry(&new);
        lock.refreshed(sealed, expires_at, lifetime).await?;
        crate::call::agent_memory::bump(self.kv(), org).await;
        Ok(Credential::Connection(SecretString::from(new.access_token)))
    }
}

/// When fresh tokens expire, and their lifetime in seconds.
pub(crate) fn token_expiry(t: &Tokens) -> (Option<chrono::DateTime<Utc>>, Option<i32>) {
    let lifetime = t.expires_in.and_then(|d| Duration::from_std(d).ok());
    (
        lifetime.map(|d| Utc::now() + d),
        lifetime.map(|d| d.num_seconds().clamp(0, i32::MAX as i64) as i32),
    )
}

fn read_tokens(plain: &SecretString) -> Result<Tokens, RuntimeError> {
    serde_json::from_str(plain.expose_secret()).map_err(|e| RuntimeError::Internal(e.into()))
}

/// How close to its expiry a token is refreshed: a third of its lifetime, at most 60 s
/// (a token living 20 s is refreshed in its last 6.7 s, not on every call).
fn refresh_margin(lifetime_seconds: Option<i32>) -> Duration {
    let max = Duration::seconds(REFRESH_MARGIN_MAX_SECONDS);
    match lifetime_seconds {
        Some(l) if l >= 0 => max.min(Duration::milliseconds(i64::from(l) * 1000 / 3)),
        _ => max,
    }
}

/// An access token within [`refresh_margin`] of its expiry.
fn refresh_due(expires_at: Option<chrono::DateTime<Utc>>, lifetime_seconds: Option<i32>) -> bool {
    expires_at.is_some_and(|t| t - Utc::now() < refresh_margin(lifetime_seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refresh_margin_is_a_third_of_the_lifetime_at_most_a_minute() {
        assert_eq!(refresh_margin(Some(20)), Duration::milliseconds(6666));
        assert_eq!(refresh_margin(Some(3600)), Duration::seconds(60));
        assert_eq!(refresh_margin(None), Duration::seconds(60));
        let now = Utc::now();
        // a 20 s token with 15 s left is used as it is; with 5 s left it is refreshed
        assert!(!refresh_due(Some(now + Duration::seconds(15)), Some(20)));
        assert!(refresh_due(Some(now + Duration::seconds(5)), Some(20)));
        // an hour-long token is refreshed in its last minute only
        assert!(!refresh_due(Some(now + Duration::seconds(90)), Some(3600)));
        assert!(refresh_due(Some(now + Duration::seconds(59)), Some(3600)));
        assert!(!refresh_due(None, Some(20)));
    }
}
