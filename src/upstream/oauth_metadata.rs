//! D4: an authorization server's metadata (RFC 8414
//! `/.well-known/oauth-authorization-server`, else OpenID Connect Discovery
//! `/.well-known/openid-configuration`), fetched through the same guarded client as the
//! token requests, accepted only when its `issuer` is the configured one, and kept
//! `oauth_metadata_ttl_seconds` per issuer in this replica. [`OAuthHttp::resolve`] turns a
//! provider's `connection` into the [`OAuthApp`] a flow uses: explicit endpoints win,
//! the others come from the metadata.

use std::sync::Arc;

use secrecy::SecretString;

use super::oauth::{OAuthApp, OAuthError, OAuthHttp, TokenAuthMethod};
pub use super::oauth_cache::Metadata;
use crate::store::providers::Connection;

const MAX_METADATA: usize = 256 * 1024;

fn same_issuer(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

/// The two well-known addresses of `issuer`'s metadata, RFC 8414's first.
pub fn well_known(issuer: &str) -> Result<[String; 2], OAuthError> {
    let u = url::Url::parse(issuer)
        .map_err(|e| OAuthError::Config(format!("the issuer is not a URL: {e}")))?;
    let path = u.path().trim_end_matches('/');
    let origin = u.origin().ascii_serialization();
    Ok([
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}{path}/.well-known/openid-configuration"),
    ])
}

impl OAuthHttp {
    /// The issuer's metadata: from this replica's cache, else fetched.
    pub async fn metadata(&self, issuer: &str) -> Result<Arc<Metadata>, OAuthError> {
        if let Some(m) = self.metadata.get(issuer) {
            return Ok(m);
        }
        let mut last = None;
        for url in well_known(issuer)? {
            match self.fetch_metadata(&url).await {
                Ok(m) if same_issuer(&m.issuer, issuer) => {
                    let m = Arc::new(m);
                    self.metadata.put(issuer, m.clone());
                    return Ok(m);
                }
                Ok(m) => {
                    // never another server's endpoints (RFC 8414 §3.3)
                    return Err(OAuthError::Config(format!(
                        "the metadata at {url} names the issuer '{}', not the configured '{issuer}'",
                        m.issuer.chars().take(200).collect::<String>()
                    )));
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| OAuthError::Config("no metadata".into())))
    }

    async fn fetch_metadata(&self, url: &str) -> Result<Metadata, OAuthError> {
        let req = oauth2::http::Request::builder()
            .method("GET")
            .uri(url)
            .header("accept", "application/json")
            .body(Vec::new())
            .map_err(|e| OAuthError::Config(e.to_string()))?;
        let res = self
            .call(req)
            .await
            .map_err(|e| OAuthError::Transport(format!("metadata at {url}: {e}")))?;
        if !res.status().is_success() {
            return Err(OAuthError::Transport(format!(
                "metadata at {url}: the server answered {}",
                res.status().as_u16()
            )));
        }
        if res.body().len() > MAX_METADATA {
            return Err(OAuthError::Transport(format!(
                "metadata at {url} is too large"
            )));
        }
        serde_json::from_slice(res.body()).map_err(|e| {
            OAuthError::Transport(format!("metadata at {url} is not valid metadata: {e}"))
        })
    }

    /// The OAuth application of a provider's `connection`: its explicit endpoints and
    /// method, the rest from the issuer's metadata.
    pub async fn resolve(
        &self,
        connection: &Connection,
        client_secret: Option<SecretString>,
        redirect_url: String,
    ) -> Result<OAuthApp, OAuthError> {
        let Connection::Oauth2 {
            issuer,
            authorize_url,
            token_url,
            revocation_url,
            client_id,
            scopes,
            token_endpoint_auth_method,
            authorization_params,
            ..
        } = connection
        else {
            return Err(OAuthError::Config(
                "this app has no OAuth sign-in configured".into(),
            ));
        };
        let explicit = authorize_url.is_some() && token_url.is_some();
        let meta = match issuer {
            Some(i) => match self.metadata(i).await {
                Ok(m) => Some(m),
                // explicit endpoints still work when the metadata cannot be had
                Err(e) if explicit => {
                    tracing::warn!(issuer = %i, error = %e, "OAuth metadata unavailable; using the configured endpoints");
                    None
                }
                Err(e) => return Err(e),
            },
            None => None,
        };
        let m = meta.as_deref();
        let missing = |what: &str| {
            OAuthError::Config(format!(
                "the authorization server's metadata has no {what}: configure it explicitly"
            ))
        };
        let authorize_url = authorize_url
            .clone()
            .or_else(|| m.and_then(|m| m.authorization_endpoint.clone()))
            .ok_or_else(|| missing("authorization_endpoint"))?;
        let token_url = token_url
            .clone()
            .or_else(|| m.and_then(|m| m.token_endpoint.clone()))
            .ok_or_else(|| missing("token_endpoint"))?;
        let auth_method = match (token_endpoint_auth_method, &client_secret) {
            (Some(method), _) => *method,
            (None, None) => TokenAuthMethod::None,
            (None, Some(_)) => {
                choose_method(m.and_then(|m| m.token_endpoint_auth_methods_supported.as_deref()))
            }
        };
        Ok(OAuthApp {
            issuer: issuer.clone().or_else(|| m.map(|m| m.issuer.clone())),
            authorize_url,
            token_url,
            revocation_url: revocation_url
                .clone()
                .or_else(|| m.and_then(|m| m.revocation_endpoint.clone())),
            client_id: client_id.clone(),
            client_secret,
            auth_method,
            scopes: scopes.clone(),
            extra_params: authorization_params
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            redirect_url,
            iss_required: m.is_some_and(|m| m.authorization_response_iss_parameter_supported),
        })
    }
}

/// A confidential client's method from the server's list: `client_secret_basic` when
/// listed (or when there is no list: RFC 8414's default), else `client_secret_post`.
pub fn choose_method(supported: Option<&[String]>) -> TokenAuthMethod {
    match supported {
        Some(list)
            if !list.iter().any(|m| m == "client_secret_basic")
                && list.iter().any(|m| m == "client_secret_post") =>
        {
            TokenAuthMethod::ClientSecretPost
        }
        _ => TokenAuthMethod::ClientSecretBasic,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn well_known_addresses_follow_rfc_8414_then_openid() {
        assert_eq!(
            well_known("https://id.example.com").unwrap(),
            [
                "https://id.example.com/.well-known/oauth-authorization-server",
                "https://id.example.com/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            well_known("https://id.example.com/tenant/1/").unwrap(),
            [
                "https://id.example.com/.well-known/oauth-authorization-server/tenant/1",
                "https://id.example.com/tenant/1/.well-known/openid-configuration"
            ]
        );
    }

    #[test]
    fn basic_is_preferred_when_listed_else_post() {
        let l = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(choose_method(None), TokenAuthMethod::ClientSecretBasic);
        assert_eq!(
            choose_method(Some(&l(&["client_secret_post", "client_secret_basic"]))),
            TokenAuthMethod::ClientSecretBasic
        );
        assert_eq!(
            choose_method(Some(&l(&["client_secret_post", "none"]))),
            TokenAuthMethod::ClientSecretPost
        );
    }

    #[test]
    fn only_a_dead_grant_or_client_breaks_a_connection() {
        let rejected = |code: &str| OAuthError::Rejected {
            code: code.into(),
            detail: code.into(),
        };
        for dead in ["invalid_grant", "invalid_client", "unauthorized_client"] {
            assert!(rejected(dead).grant_is_dead(), "{dead}");
        }
        for passing in ["temporarily_unavailable", "server_error", "invalid_request"] {
            assert!(!rejected(passing).grant_is_dead(), "{passing}");
        }
        assert!(!OAuthError::Transport("timeout".into()).grant_is_dead());
        assert!(!OAuthError::Refused("not OAuth JSON".into()).grant_is_dead());
    }
}
