//! OAuth 2.0 for connected apps (D4) with the `oauth2` crate: the
//! authorization code flow with PKCE (S256) and `state`, the code exchange and refresh,
//! over the same guarded HTTP client as every upstream request (`ssrf::guarded_client`:
//! the resolver that hands the connector only checked addresses, so a name rebound to
//! a private address between check and connect is never reached; no proxy, no
//! redirects followed; bounded body, timeout). A refusal names the host, never the
//! address it resolved to.
//! Tokens and secrets never reach a log line or an error message.

use std::time::Duration;

use oauth2::basic::BasicClient;
use oauth2::{
    AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, PkceCodeChallenge,
    PkceCodeVerifier, RedirectUrl, RefreshToken, Scope, TokenResponse, TokenUrl,
};
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};

use super::ssrf;

/// Where the provider's OAuth endpoints are and who we are to it.
pub struct OAuthApp {
    pub authorize_url: String,
    pub token_url: String,
    pub client_id: String,
    pub client_secret: Option<SecretString>,
    pub scopes: Vec<String>,
    /// loopgate's `/connect/callback`.
    pub redirect_url: String,
}

/// Tokens as stored (sealed) for a connection.
#[derive(Serialize, Deserialize)]
pub struct Tokens {
    pub access_token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// Seconds the access token lives, as the server said.
    #[serde(skip)]
    pub expires_in: Option<Duration>,
}

#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    #[error("the OAuth configuration is invalid: {0}")]
    Config(String),
    #[error("the authorization server refused: {0}")]
    Refused(String),
    #[error("the authorization server could not be reached: {0}")]
    Transport(String),
}

/// The start of a flow: where to send the user, and what to keep until the callback.
pub struct Started {
    pub url: String,
    pub state: String,
    pub verifier: String,
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct HttpError(String);

const MAX_TOKEN_RESPONSE: usize = 64 * 1024;

/// The HTTP client the token requests go through.
#[derive(Clone)]
pub struct OAuthHttp {
    /// `Err` when the client could not be built: every request then fails with it
    /// (never through an unguarded client).
    client: Result<reqwest::Client, String>,
    allow_private: bool,
}

impl OAuthHttp {
    pub fn new(allow_private: bool) -> Self {
        let client = ssrf::guarded_client(allow_private)
            .timeout(Duration::from_secs(15))
            .build()
            .map_err(|e| format!("HTTP client: {e}"));
        if let Err(e) = &client {
            tracing::error!(error = %e, "the OAuth HTTP client could not be built");
        }
        Self {
            client,
            allow_private,
        }
    }

    async fn call(&self, req: oauth2::HttpRequest) -> Result<oauth2::HttpResponse, HttpError> {
        let client = self.client.as_ref().map_err(|e| HttpError(e.clone()))?;
        let url = url::Url::parse(&req.uri().to_string()).map_err(|e| HttpError(e.to_string()))?;
        ssrf::check_url(&url, self.allow_private)
            .map_err(|e| HttpError(format!("the token endpoint is not allowed: {e}")))?;
        let req = reqwest::Request::try_from(req).map_err(|e| HttpError(e.to_string()))?;
        let mut res = client.execute(req).await.map_err(|e| {
            HttpError(match ssrf::blocked_cause(&e) {
                Some(blocked) => format!("the token endpoint is not allowed: {blocked}"),
                None => format!("request failed: {}", e.without_url()),
            })
        })?;
        let mut out = oauth2::http::Response::builder().status(res.status().as_u16());
        for (k, v) in res.headers() {
            out = out.header(k.as_str(), v.as_bytes());
        }
        let mut body = Vec::new();
        while let Some(chunk) = res.chunk().await.map_err(|e| HttpError(e.to_string()))? {
            if body.len() + chunk.len() > MAX_TOKEN_RESPONSE {
                return Err(HttpError("the token response is too large".into()));
            }
            body.extend_from_slice(&chunk);
        }
        out.body(body).map_err(|e| HttpError(e.to_string()))
    }
}

fn config(e: impl std::fmt::Display) -> OAuthError {
    OAuthError::Config(e.to_string())
}

fn from_request<RE, T>(e: oauth2::RequestTokenError<RE, T>) -> OAuthError
where
    RE: std::error::Error + 'static,
    T: oauth2::ErrorResponse + 'static,
{
    match e {
        oauth2::RequestTokenError::ServerResponse(r) => OAuthError::Refused(r.to_string()),
        oauth2::RequestTokenError::Request(r) => OAuthError::Transport(r.to_string()),
        oauth2::RequestTokenError::Parse(_, _) => {
            OAuthError::Refused("the token response is not valid OAuth 2.0 JSON".into())
        }
        oauth2::RequestTokenError::Other(o) => OAuthError::Refused(o),
    }
}

fn tokens(t: &oauth2::basic::BasicTokenResponse, previous_refresh: Option<&str>) -> Tokens {
    Tokens {
        access_token: t.access_token().secret().clone(),
        // a server may keep the refresh token and not send it again
        refresh_token: t
            .refresh_token()
            .map(|r| r.secret().clone())
            .or(previous_refresh.map(str::to_string)),
        expires_in: t.expires_in(),
    }
}

macro_rules! client {
    ($app:expr) => {{
        let mut c = BasicClient::new(ClientId::new($app.client_id.to_string()))
            .set_auth_uri(AuthUrl::new($app.authorize_url.to_string()).map_err(config)?)
            .set_token_uri(TokenUrl::new($app.token_url.to_string()).map_err(config)?)
            .set_redirect_uri(RedirectUrl::new($app.redirect_url.to_string()).map_err(config)?);
        if let Some(s) = &$app.client_secret {
            c = c.set_client_secret(ClientSecret::new(s.expose_secret().to_string()));
        }
        c
    }};
}

/// The authorization URL (PKCE S256, a random `state`) and what the callback needs.
pub fn start(app: &OAuthApp) -> Result<Started, OAuthError> {
    let client = client!(app);
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let (url, state) = client
        .authorize_url(CsrfToken::new_random)
        .add_scopes(app.scopes.iter().map(|s| Scope::new(s.clone())))
        .set_pkce_challenge(challenge)
        .url();
    Ok(Started {
        url: url.to_string(),
        state: state.secret().clone(),
        verifier: verifier.secret().clone(),
    })
}

impl OAuthHttp {
    /// Exchanges the authorization code (with the PKCE verifier) for tokens.
    pub async fn exchange(
        &self,
        app: &OAuthApp,
        code: &str,
        verifier: &str,
    ) -> Result<Tokens, OAuthError> {
        let client = client!(app);
        let http = |r: oauth2::HttpRequest| self.call(r);
        let t = client
            .exchange_code(AuthorizationCode::new(code.to_string()))
            .set_pkce_verifier(PkceCodeVerifier::new(verifier.to_string()))
            .request_async(&http)
            .await
            .map_err(from_request)?;
        Ok(tokens(&t, None))
    }

    /// New tokens from the refresh token.
    pub async fn refresh(&self, app: &OAuthApp, refresh_token: &str) -> Result<Tokens, OAuthError> {
        let client = client!(app);
        let http = |r: oauth2::HttpRequest| self.call(r);
        let rt = RefreshToken::new(refresh_token.to_string());
        let t = client
            .exchange_refresh_token(&rt)
            .request_async(&http)
            .await
            .map_err(from_request)?;
        Ok(tokens(&t, Some(refresh_token)))
    }
}
