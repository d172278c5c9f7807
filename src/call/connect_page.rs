//! D4: what the connect page does, with no HTTP types. A link (its token is the
//! credential; only its hash is stored) opens a page for one (org, user, toolkit);
//! submitting it either stores an API key or starts OAuth (PKCE verifier sealed on the
//! link, `state` hashed), and the callback finishes that flow once.

use chrono::Utc;
use secrecy::{ExposeSecret, SecretString};

use crate::call::app_connections::{secret_aad, token_expiry};
use crate::call::Runtime;
use crate::crypto::{new_id, sha256};
use crate::store::connections::{self, Link, NewConnection};
use crate::store::providers::{self, Connection, Provider};
use crate::store::{OrgId, StoreError};
use crate::upstream::oauth;

/// Why the connect page cannot go on; shown to the end user.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("This link is not valid: it has expired or has already been used. Ask the assistant for a new one.")]
    LinkInvalid,
    #[error("{0}")]
    Invalid(String),
    #[error("The app did not accept the connection: {0}")]
    Refused(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("internal error")]
    Internal(#[source] anyhow::Error),
}

/// What an OAuth connection keeps beside its sealed tokens.
struct OAuthSaved {
    lifetime: Option<i32>,
    refreshable: bool,
}

/// What the page shows.
pub struct ConnectPageView {
    pub toolkit: String,
    pub form: Form,
}

pub enum Form {
    /// A button that starts the OAuth sign-in.
    OAuth,
    /// A field for the API key, with the provider's instructions.
    ApiKey { instructions: Option<String> },
}

/// What submitting the page did.
pub enum Submitted {
    /// Send the browser to the authorization server.
    Redirect(String),
    /// The toolkit is connected.
    Connected(String),
}

fn link_hash(token: &str) -> [u8; 32] {
    sha256(token.as_bytes())
}

fn verifier_aad(hash: &[u8]) -> Vec<u8> {
    [b"connect-link:".as_slice(), hash].concat()
}

impl Runtime {
    /// The provider's OAuth application, with its client secret (its endpoints possibly
    /// discovered).
    async fn oauth_of(
        &self,
        org: &OrgId,
        provider: &Provider,
    ) -> Result<oauth::OAuthApp, ConnectError> {
        if !matches!(provider.connection, Some(Connection::Oauth2 { .. })) {
            return Err(ConnectError::Invalid(
                "This app has no sign-in configured.".into(),
            ));
        }
        let secret = self
            .client_secret(org, &provider.id)
            .await
            .map_err(|e| ConnectError::Internal(anyhow::anyhow!("{e}")))?;
        self.oauth_app(provider, secret)
            .await
            .map_err(|e| ConnectError::Refused(e.to_string()))
    }

    async fn link(&self, token: &str) -> Result<(Link, Provider), ConnectError> {
        if token.len() > 200 {
            return Err(ConnectError::LinkInvalid);
        }
        let link = connections::open_link(&self.pool, &link_hash(token))
            .await?
            .ok_or(ConnectError::LinkInvalid)?;
        let org = OrgId::trusted(link.org_id.clone());
        let provider = providers::get(&self.pool, &org, &link.provider_id)
            .await
            .map_err(|_| ConnectError::LinkInvalid)?;
        Ok((link, provider))
    }

    /// `GET /connect/{link}`.
    pub async fn connect_page(&self, token: &str) -> Result<ConnectPageView, ConnectError> {
        let (link, provider) = self.link(token).await?;
        let form = match provider.connection {
            Some(Connection::ApiKey { instructions }) => Form::ApiKey { instructions },
            _ => Form::OAuth,
        };
        Ok(ConnectPageView {
            toolkit: link.toolkit,
            form,
        })
    }

    /// `POST /connect/{link}`: stores the API key, or starts the OAuth flow.
    pub async fn connect_submit(
        &self,
        token: &str,
        api_key: Option<SecretString>,
    ) -> Result<Submitted, ConnectError> {
        let (link, provider) = self.link(token).await?;
        let org = OrgId::trusted(link.org_id.clone());
        let hash = link_hash(token);
        if let Some(Connection::ApiKey { .. }) = provider.connection {
            let key = api_key
                .map(|k| k.expose_secret().trim().to_string())
                .filter(|k| !k.is_empty() && k.len() <= 8192)
                .ok_or_else(|| {
                    ConnectError::Invalid("Paste the API key (at most 8192 characters).".into())
                })?;
            if !connections::consume_link(&self.pool, &hash, None, None).await? {
                return Err(ConnectError::LinkInvalid);
            }
            let aad = secret_aad(&org, &link.user_id, &link.toolkit);
            let sealed = self.cipher.encrypt(key.as_bytes(), &aad);
            self.save_connection(&org, &link, "api_key", sealed, None, None)
                .await?;
            return Ok(Submitted::Connected(link.toolkit));
        }
        let app = self.oauth_of(&org, &provider).await?;
        let started = oauth::start(&app).map_err(|e| ConnectError::Refused(e.to_string()))?;
        let sealed_verifier = self
            .cipher
            .encrypt(started.verifier.as_bytes(), &verifier_aad(&hash));
        let state_hash = sha256(started.state.as_bytes());
        if !connections::consume_link(&self.pool, &hash, Some(&state_hash), Some(sealed_verifier))
            .await?
        {
            return Err(ConnectError::LinkInvalid);
        }
        Ok(Submitted::Redirect(started.url))
    }

    /// `GET /connect/callback?code&state&iss`: checks `iss` (RFC 9207), exchanges the
    /// code (with the PKCE verifier) and stores the tokens for the link's user and toolkit.
    pub async fn connect_callback(
        &self,
        state: &str,
        code: Option<&str>,
        error: Option<&str>,
        iss: Option<&str>,
    ) -> Result<String, ConnectError> {
        let link = connections::take_state(&self.pool, &sha256(state.as_bytes()))
            .await?
            .ok_or(ConnectError::LinkInvalid)?;
        if let Some(e) = error {
            return Err(ConnectError::Refused(e.chars().take(200).collect()));
        }
        let code =
            code.ok_or_else(|| ConnectError::Refused("no authorization code came back".into()))?;
        let org = OrgId::trusted(link.org_id.clone());
        let provider = providers::get(&self.pool, &org, &link.provider_id).await?;
        let verifier = link
            .verifier_ciphertext
            .as_deref()
            .and_then(|v| self.cipher.decrypt(v, &verifier_aad(&link.token_hash)).ok())
            .ok_or(ConnectError::LinkInvalid)?;
        let app = self.oauth_of(&org, &provider).await?;
        // the answer must come from the issuer the flow was started with (mix-up attacks)
        app.check_iss(iss)
            .map_err(|e| ConnectError::Refused(e.to_string()))?;
        let tokens = self
            .oauth
            .exchange(&app, code, &String::from_utf8_lossy(&verifier))
            .await
            .map_err(|e| ConnectError::Refused(e.to_string()))?;
        let (expires_at, lifetime) = token_expiry(&tokens);
        let refreshable = tokens.refresh_token.is_some();
        if !refreshable {
            tracing::warn!(
                toolkit = %link.toolkit,
                provider = %link.provider_id,
                "the authorization server granted no refresh token: the connection stops working when its \
                 access token expires (ask for offline access in connection.authorization_params, \
                 e.g. prompt=consent or access_type=offline)"
            );
        }
        let aad = secret_aad(&org, &link.user_id, &link.toolkit);
        let plain = serde_json::to_vec(&tokens).map_err(|e| ConnectError::Internal(e.into()))?;
        let sealed = self.cipher.encrypt(&plain, &aad);
        let oauth = OAuthSaved {
            lifetime,
            refreshable,
        };
        self.save_connection(&org, &link, "oauth2", sealed, expires_at, Some(oauth))
            .await?;
        Ok(link.toolkit)
    }

    async fn save_connection(
        &self,
        org: &OrgId,
        link: &Link,
        kind: &str,
        sealed: Vec<u8>,
        expires_at: Option<chrono::DateTime<Utc>>,
        oauth: Option<OAuthSaved>,
    ) -> Result<(), ConnectError> {
        connections::upsert(
            &self.pool,
            org,
            NewConnection {
                id: &new_id("con"),
                user_id: &link.user_id,
                toolkit: &link.toolkit,
                provider_id: &link.provider_id,
                kind,
                secret_ciphertext: sealed,
                expires_at,
                token_lifetime_seconds: oauth.as_ref().and_then(|o| o.lifetime),
                refresh_token_held: oauth.map(|o| o.refreshable),
            },
        )
        .await?;
        // no API request carries this write: memory is told here (agent_memory)
        crate::call::agent_memory::bump(self.kv(), org).await;
        Ok(())
    }
}
