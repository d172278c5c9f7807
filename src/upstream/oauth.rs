//! OAuth 2.0 for connected apps (D4) with the `oauth2` crate: the
//! authorization code flow with PKCE (S256) and `state`, the code exchange and refresh,
//! over the same guarded HTTP client as every upstream request (`ssrf::guarded_client`:
//! the resolver that hands the connector only checked addresses, so a name rebound to
//! a private address between check and connect is never reached; no proxy, no
//! redirects followed; bounded body, timeout). A refusal names the host, never the
//! address it resolved to.
//! Tokens and secrets never reach a log line or an error message. The endpoints may come
//! from the server's metadata ([`super::oauth_metadata`]); the client authenticates as
//! its configuration or that metadata says (`client_secret_basic`, `client_secret_post`,
//! or `none` for a public client); a refresh failure says whether the grant is dead
//! ([`OAuthError::grant_is_dead`], RFC 6749 §5.2); a token is revoked with RFC 7009.

use std::time::Duration;

use oauth2::basic::BasicClient;
use oauth2::{
    AuthType, AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, PkceCodeChallenge,
    PkceCodeVerifier, RedirectUrl, RefreshToken, Scope, TokenResponse, TokenUrl,
};
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};

use super::oauth_cache::MetadataCache;
use super::ssrf;
pub use crate::store::providers::TokenAuthMethod;

/// Where the provider's OAuth endpoints are and who we are to it.
pub struct OAuthApp {
    /// The issuer identifier: an `iss` on the callback must equal it (RFC 9207).
    pub issuer: Option<String>,
    pub authorize_url: String,
    pub token_url: String,
    /// Where a token is revoked (RFC 7009), when the server has such an endpoint.
    pub revocation_url: Option<String>,
    pub client_id: String,
    pub client_secret: Option<SecretString>,
    pub auth_method: TokenAuthMethod,
    pub scopes: Vec<String>,
    /// Extra authorization request parameters (`prompt`, `access_type`, `resource`, …).
    pub extra_params: Vec<(String, String)>,
    /// loopgate's `/connect/callback`.
    pub redirect_url: String,
    /// The server's metadata says it sends `iss` on its responses: one without it is refused.
    pub iss_required: bool,
}

impl OAuthApp {
    /// An app with explicit endpoints, `client_secret_basic` when it has a secret (else
    /// `none`), no issuer and no extra parameters.
    pub fn explicit(
        authorize_url: String,
        token_url: String,
        client_id: String,
        client_secret: Option<SecretString>,
        redirect_url: String,
    ) -> Self {
        let auth_method = match client_secret {
            Some(_) => TokenAuthMethod::ClientSecretBasic,
            None => TokenAuthMethod::None,
        };
        Self {
            issuer: None,
            authorize_url,
            token_url,
            revocation_url: None,
            client_id,
            client_secret,
            auth_method,
            scopes: Vec::new(),
            extra_params: Vec::new(),
            redirect_url,
            iss_required: false,
        }
    }

    /// RFC 9207: the callback's `iss` equals the issuer (a trailing `/` aside); absent,
    /// it is accepted only when the server does not advertise sending it.
    pub fn check_iss(&self, iss: Option<&str>) -> Result<(), OAuthError> {
        let same = |a: &str, b: &str| a.trim_end_matches('/') == b.trim_end_matches('/');
        match (iss, &self.issuer) {
            (Some(got), Some(want)) if !same(got, want) => Err(OAuthError::Config(format!(
                "the sign-in answer came from the issuer '{}', not from '{want}' (RFC 9207 `iss`): \
                 it was not accepted",
                got.chars().take(200).collect::<String>()
            ))),
            (None, _) if self.iss_required => Err(OAuthError::Config(
                "the authorization server advertises the `iss` response parameter (RFC 9207) but \
                 its answer carried none: it was not accepted"
                    .into(),
            )),
            _ => Ok(()),
        }
    }
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
    /// The server answered with an OAuth error response (RFC 6749 §5.2): its `error` code.
    #[error("the authorization server refused: {detail}")]
    Rejected { code: String, detail: String },
    #[error("the authorization server refused: {0}")]
    Refused(String),
    #[error("the authorization server could not be reached: {0}")]
    Transport(String),
}

impl OAuthError {
    /// RFC 6749 §5.2: the grant or the client is no longer accepted (`invalid_grant`,
    /// `invalid_client`, `unauthorized_client`), so the connection is dead and the user
    /// connects again. Anything else — a 5xx, `temporarily_unavailable`, an answer that is
    /// not OAuth JSON, the network — may pass: the connection is kept.
    pub fn grant_is_dead(&self) -> bool {
        matches!(self, OAuthError::Rejected { code, .. }
            if matches!(code.as_str(), "invalid_grant" | "invalid_client" | "unauthorized_client"))
    }
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
    pub(super) metadata: std::sync::Arc<MetadataCache>,
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
            metadata: Default::default(),
        }
    }

    /// How long discovered metadata is kept (`oauth_metadata_ttl_seconds`).
    pub fn with_metadata_ttl(mut self, ttl: Duration) -> Self {
        self.metadata = std::sync::Arc::new(MetadataCache::new(ttl));
        self
    }

    pub(super) async fn call(
        &self,
        req: oauth2::HttpRequest,
    ) -> Result<oauth2::HttpResponse, HttpError> {
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

fn from_request<RE>(
    e: oauth2::RequestTokenError<RE, oauth2::basic::BasicErrorResponse>,
) -> OAuthError
where
    RE: std::error::Error + 'static,
{
    match e {
        oauth2::RequestTokenError::ServerResponse(r) => OAuthError::Rejected {
            code: r.error().as_ref().to_string(),
            detail: r.to_string(),
        },
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
        match (&$app.client_secret, $app.auth_method) {
            (Some(s), TokenAuthMethod::ClientSecretBasic) => {
                c = c.set_client_secret(ClientSecret::new(s.expose_secret().to_string()));
            }
            (Some(s), TokenAuthMethod::ClientSecretPost) => {
                c = c
                    .set_client_secret(ClientSecret::new(s.expose_secret().to_string()))
                    .set_auth_type(AuthType::RequestBody);
            }
            // a public client: `client_id` in the body, no secret (PKCE is always sent)
            _ => c = c.set_auth_type(AuthType::RequestBody),
        }
        c
    }};
}

/// The authorization URL (PKCE S256, a random `state`) and what the callback needs.
pub fn start(app: &OAuthApp) -> Result<Started, OAuthError> {
    let client = client!(app);
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let mut req = client
        .authorize_url(CsrfToken::new_random)
        .add_scopes(app.scopes.iter().map(|s| Scope::new(s.clone())))
        .set_pkce_challenge(challenge);
    // after the authorization URL's own query, which is kept
    for (k, v) in &app.extra_params {
        req = req.add_extra_param(k.as_str(), v.as_str());
    }
    let (url, state) = req.url();
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

/// What revoking a connection's token at the server did (RFC 7009).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Revocation {
    Revoked,
    /// The server has no revocation endpoint (none configured or discovered), or it is
    /// on another origin than the token endpoint.
    Unsupported,
    Failed,
}

impl Revocation {
    pub fn as_str(self) -> &'static str {
        match self {
            Revocation::Revoked => "revoked",
            Revocation::Unsupported => "unsupported",
            Revocation::Failed => "failed",
        }
    }
}

impl OAuthHttp {
    /// RFC 7009: revokes `token` (a refresh token when `hint` says so, which also ends
    /// the grant's access tokens at most servers), authenticated as at the token endpoint.
    pub async fn revoke(
        &self,
        app: &OAuthApp,
        token: &str,
        hint: &str,
    ) -> Result<Revocation, OAuthError> {
        let Some(url) = &app.revocation_url else {
            return Ok(Revocation::Unsupported);
        };
        // the client secret and the user's tokens go only to the origin that issues
        // tokens (the rule `studio::toolkits::token_origin_moves` keeps for the token
        // endpoint): a revocation endpoint elsewhere, configured or discovered, is not
        // called, and the token is left to expire
        let origin = crate::store::providers::origin;
        if origin(url).is_none() || origin(url) != origin(&app.token_url) {
            tracing::warn!(
                "the revocation endpoint is not on the token endpoint's origin: not called"
            );
            return Ok(Revocation::Unsupported);
        }
        let mut form = url::form_urlencoded::Serializer::new(String::new());
        form.append_pair("token", token)
            .append_pair("token_type_hint", hint);
        let mut req = oauth2::http::Request::builder()
            .method("POST")
            .uri(url.as_str())
            .header("content-type", "application/x-www-form-urlencoded")
            .header("accept", "application/json");
        match (&app.client_secret, app.auth_method) {
            (Some(s), TokenAuthMethod::ClientSecretBasic) => {
                use base64::Engine as _;
                let enc = |v: &str| {
                    url::form_urlencoded::byte_serialize(v.as_bytes()).collect::<String>()
                };
                let pair = format!("{}:{}", enc(&app.client_id), enc(s.expose_secret()));
                req = req.header(
                    "authorization",
                    format!(
                        "Basic {}",
                        base64::engine::general_purpose::STANDARD.encode(pair)
                    ),
                );
            }
            (Some(s), TokenAuthMethod::ClientSecretPost) => {
                form.append_pair("client_id", &app.client_id)
                    .append_pair("client_secret", s.expose_secret());
            }
            _ => {
                form.append_pair("client_id", &app.client_id);
            }
        }
        let req = req
            .body(form.finish().into_bytes())
            .map_err(|e| OAuthError::Config(e.to_string()))?;
        let res = self
            .call(req)
            .await
            .map_err(|e| OAuthError::Transport(e.to_string()))?;
        // RFC 7009 §2.2: 200 whether or not the token was valid
        if res.status().is_success() {
            Ok(Revocation::Revoked)
        } else {
            Err(OAuthError::Refused(format!(
                "the revocation endpoint answered {}",
                res.status().as_u16()
            )))
        }
    }
}

#[cfg(test)]
mod revoke_tests {
    use super::*;

    fn app(revocation: &str) -> OAuthApp {
        let mut a = OAuthApp::explicit(
            "https://idp.example.com/authorize".into(),
            "https://idp.example.com/token".into(),
            "client".into(),
            Some(SecretString::from("s3cret")),
            "https://loopgate.example.com/connect/callback".into(),
        );
        a.revocation_url = Some(revocation.into());
        a
    }

    /// D4: a revocation endpoint on another origin never receives the client secret or a
    /// token (the answer comes before any request: nothing listens on these hosts).
    #[tokio::test]
    async fn d4_a_revocation_endpoint_on_another_origin_is_not_called() {
        let http = OAuthHttp::new(false);
        for url in [
            "https://attacker.example.net/revoke",
            "http://idp.example.com/revoke",
            "https://idp.example.com:8443/revoke",
            "not a url",
        ] {
            let r = http.revoke(&app(url), "rt", "refresh_token").await;
            assert_eq!(r.ok(), Some(Revocation::Unsupported), "{url}");
        }
    }
}
