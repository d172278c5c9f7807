//! The credential on the wire (`Authorization: Bearer`, a named header, or a named query
//! parameter), resolved once per call, and the argument headers as a header map.

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, AUTHORIZATION};
use secrecy::ExposeSecret;
use url::Url;

use super::{CallError, Target};
use crate::store::providers::AuthType;

/// What the credential looks like on the wire, resolved once per call.
pub(crate) enum WireCredential {
    None,
    Header(HeaderName, HeaderValue),
    Query(String, String),
}

/// Removes every `name=…` pair from the query, leaving the others byte for byte (a
/// next-page cursor must come back exactly as the API wrote it).
pub(crate) fn strip_query(url: &mut Url, name: &str) {
    let Some(query) = url.query() else { return };
    let kept: Vec<&str> = query
        .split('&')
        .filter(|pair| {
            let key = pair.split('=').next().unwrap_or("");
            let decoded: String = url::form_urlencoded::parse(key.as_bytes())
                .map(|(k, _)| k.into_owned())
                .collect();
            decoded != name
        })
        .collect();
    if kept.len() == query.split('&').count() {
        return;
    }
    let kept = kept.join("&");
    url.set_query(if kept.is_empty() { None } else { Some(&kept) });
}

pub(crate) fn credential(target: &Target) -> Result<WireCredential, CallError> {
    let Some(secret) = &target.credential else {
        return Ok(WireCredential::None);
    };
    let secret = secret.expose_secret();
    let name = || {
        target
            .auth
            .name
            .as_deref()
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .ok_or_else(|| CallError::Misconfigured("the provider's auth needs a `name`".into()))
    };
    let bad_value =
        || CallError::Misconfigured("the credential is not a valid header value".into());
    Ok(match target.auth.kind {
        AuthType::None => WireCredential::None,
        AuthType::Bearer => {
            let mut value =
                HeaderValue::from_str(&format!("Bearer {secret}")).map_err(|_| bad_value())?;
            value.set_sensitive(true);
            WireCredential::Header(AUTHORIZATION, value)
        }
        AuthType::Header => {
            let header = HeaderName::from_bytes(name()?.as_bytes()).map_err(|_| {
                CallError::Misconfigured("the provider's auth header name is invalid".into())
            })?;
            let mut value = HeaderValue::from_str(secret).map_err(|_| bad_value())?;
            value.set_sensitive(true);
            WireCredential::Header(header, value)
        }
        AuthType::Query => WireCredential::Query(name()?.to_string(), secret.to_string()),
    })
}

pub(crate) fn header_map(pairs: &[(String, String)]) -> Result<HeaderMap, CallError> {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        let header = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| CallError::Misconfigured(format!("invalid header name {name:?}")))?;
        let value = HeaderValue::from_str(value).map_err(|_| {
            CallError::InvalidArguments(format!(
                "the value of header `{name}` is not valid in a header"
            ))
        })?;
        map.append(header, value);
    }
    Ok(map)
}
