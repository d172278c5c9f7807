//! OpenTelemetry's HTTP semantic conventions (O1), the parts that need care: `url.full`,
//! `url.path` and `url.query` with what could be a credential redacted, and `error.type`.
//! A redacted value is the literal `REDACTED`, as the convention writes it: user and
//! password in the URL, the query values of the credential parameter a provider's auth
//! places and of every parameter whose name says it carries a secret (the convention's
//! `AWSAccessKeyId`, `Signature`, `sig`, `X-Goog-Signature`, and tokens, keys, passwords,
//! OAuth codes), and a path parameter that is itself a credential (`{link}`).
//! The fragment never leaves the client and is dropped.

use url::Url;

pub const REDACTED: &str = "REDACTED";

/// Query parameter names whose values are secrets, compared case-insensitively after
/// dropping `-` and `_` (`X-Goog-Signature` → `xgoogsignature`).
const SECRET_PARAMS: &[&str] = &[
    "awsaccesskeyid",
    "signature",
    "sig",
    "xgoogsignature",
    "xamzsignature",
    "xamzcredential",
    "xamzsecuritytoken",
    "token",
    "accesstoken",
    "refreshtoken",
    "idtoken",
    "apikey",
    "key",
    "secret",
    "clientsecret",
    "password",
    "passwd",
    "auth",
    "authorization",
    "code",
];

/// Path parameters (by their name in the route) that are credentials themselves.
const SECRET_PATH_PARAMS: &[&str] = &["link"];

fn secret_name(name: &str, credential: Option<&str>) -> bool {
    if credential.is_some_and(|c| c.eq_ignore_ascii_case(name)) {
        return true;
    }
    let folded: String = name
        .chars()
        .filter(|c| !matches!(c, '-' | '_'))
        .flat_map(char::to_lowercase)
        .collect();
    SECRET_PARAMS.contains(&folded.as_str())
}

/// A query string with the value of every secret parameter replaced by `REDACTED`, the
/// rest kept as written (encoded as it was sent).
pub fn redacted_query(query: &str, credential: Option<&str>) -> String {
    query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((k, _)) => {
                let name = url::form_urlencoded::parse(k.as_bytes())
                    .next()
                    .map(|(n, _)| n.into_owned())
                    .unwrap_or_default();
                match secret_name(&name, credential) {
                    true => format!("{k}={REDACTED}"),
                    false => pair.to_string(),
                }
            }
            None => pair.to_string(),
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// `url.full` of a client request: `url` without its fragment, user and password as
/// `REDACTED`, secret query values `REDACTED` (`credential`: the provider's own query
/// parameter, when its auth goes in the query).
pub fn redacted_url(url: &Url, credential: Option<&str>) -> String {
    let mut u = url.clone();
    u.set_fragment(None);
    if !u.username().is_empty() || u.password().is_some() {
        let _ = u.set_username(REDACTED);
        let _ = u.set_password(Some(REDACTED));
    }
    if let Some(q) = u.query().map(str::to_owned) {
        u.set_query(Some(&redacted_query(&q, credential)));
    }
    u.to_string()
}

/// `url.path` of a server request: `path` with each segment that the route's `pattern`
/// names a secret parameter (`/connect/{link}`) replaced by `REDACTED`.
pub fn redacted_path(path: &str, pattern: &str) -> String {
    let (segs, pats): (Vec<&str>, Vec<&str>) =
        (path.split('/').collect(), pattern.split('/').collect());
    if segs.len() != pats.len() {
        return path.to_string();
    }
    segs.iter()
        .zip(&pats)
        .map(|(s, p)| {
            let param = p.strip_prefix('{').and_then(|p| p.strip_suffix('}'));
            match param.is_some_and(|n| SECRET_PATH_PARAMS.contains(&n)) {
                true => REDACTED,
                false => s,
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// `server.address` and `server.port` from a `Host` (or `:authority`) value.
pub fn host_and_port(host: &str, default_port: u16) -> (String, u16) {
    let host = host.trim();
    // [::1]:8080, [::1], example.com:8080, example.com
    let (name, port) = match host.rsplit_once(':') {
        Some((h, p)) if !p.contains(']') && p.chars().all(|c| c.is_ascii_digit()) => {
            (h, p.parse().unwrap_or(default_port))
        }
        _ => (host, default_port),
    };
    (
        name.trim_start_matches('[')
            .trim_end_matches(']')
            .to_string(),
        port,
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// O1: credentials in a URL never reach a span.
    #[test]
    fn o1_url_full_redacts_userinfo_and_secret_query_values() {
        let u = Url::parse(
            "https://me:pw@api.example.com:8443/v2/items?page=2&api_key=sk-1&X-Goog-Signature=s&q=a%20b#frag",
        )
        .unwrap();
        assert_eq!(
            redacted_url(&u, None),
            "https://REDACTED:REDACTED@api.example.com:8443/v2/items?page=2&api_key=REDACTED&X-Goog-Signature=REDACTED&q=a%20b"
        );
        // the provider's own credential parameter, whatever its name
        let u = Url::parse("https://api.example.com/x?hapikey=abc&limit=5").unwrap();
        assert_eq!(
            redacted_url(&u, Some("hapikey")),
            "https://api.example.com/x?hapikey=REDACTED&limit=5"
        );
        assert_eq!(
            redacted_url(&Url::parse("http://h/p").unwrap(), None),
            "http://h/p"
        );
    }

    #[test]
    fn o1_server_paths_and_hosts() {
        assert_eq!(
            redacted_path("/connect/lnk_secret", "/connect/{link}"),
            "/connect/REDACTED"
        );
        assert_eq!(
            redacted_path("/v1/agents/ag_1/mcp", "/v1/agents/{agent_id}/mcp"),
            "/v1/agents/ag_1/mcp"
        );
        assert_eq!(
            redacted_query("code=abc&state=s&x=1", None),
            "code=REDACTED&state=s&x=1"
        );
        assert_eq!(
            host_and_port("example.com:8080", 80),
            ("example.com".into(), 8080)
        );
        assert_eq!(
            host_and_port("example.com", 443),
            ("example.com".into(), 443)
        );
        assert_eq!(host_and_port("[::1]:9", 80), ("::1".into(), 9));
        assert_eq!(host_and_port("[::1]", 80), ("::1".into(), 80));
    }
}
