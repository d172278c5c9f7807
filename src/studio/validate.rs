//! Input rules of Studio objects, shared by the Studio operations and handlers; messages
//! name the field and the rule.

use super::StudioError;

/// For PATCH bodies: distinguishes an absent field (`None`) from an explicit `null`
/// (`Some(None)`), so a nullable field can be cleared.
pub fn double_option<'de, T, D>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    T: serde::Deserialize<'de>,
    D: serde::Deserializer<'de>,
{
    <Option<T> as serde::Deserialize>::deserialize(d).map(Some)
}

/// A display name: trimmed, 1–200 characters.
pub fn name(raw: &str) -> Result<&str, StudioError> {
    let n = raw.trim();
    if n.is_empty() || n.chars().count() > 200 {
        return Err(StudioError::Invalid(
            "name must be 1 to 200 characters".into(),
        ));
    }
    Ok(n)
}

/// An upstream base URL: absolute http(s), no credentials, query or fragment.
pub fn base_url(raw: &str) -> Result<String, StudioError> {
    let url = http_url("base_url", raw)?;
    Ok(url.as_str().trim_end_matches('/').to_string())
}

/// An MCP server's streamable HTTP endpoint: the same rules as `base_url`, path kept as given.
pub fn endpoint_url(raw: &str) -> Result<String, StudioError> {
    Ok(http_url("url", raw)?.to_string())
}

/// An absolute http(s) URL named `field` (e.g. an OAuth authorization or token endpoint).
pub fn absolute_url(field: &str, raw: &str) -> Result<String, StudioError> {
    Ok(http_url(field, raw)?.to_string())
}

fn http_url(field: &str, raw: &str) -> Result<url::Url, StudioError> {
    let url = url::Url::parse(raw.trim())
        .map_err(|e| StudioError::Invalid(format!("{field} is not an absolute URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(StudioError::Invalid(format!(
            "{field} must use http or https"
        )));
    }
    if url.host_str().is_none() {
        return Err(StudioError::Invalid(format!("{field} must name a host")));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(StudioError::Invalid(format!(
            "{field} must not embed credentials: set `credential` and `auth` instead"
        )));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(StudioError::Invalid(format!(
            "{field} must not have a query or fragment"
        )));
    }
    Ok(url)
}
