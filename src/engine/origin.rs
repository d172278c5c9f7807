//! P5 safety: a next-page URL announced by an API is followed only when it stays on the
//! provider's own scheme, host and port. Relative URLs are resolved against the origin.

/// `scheme://host[:port]`, lower-cased, default ports dropped. None when `url` is not an
/// absolute http(s) URL or carries credentials (`user@host`), which is never followed.
pub fn origin_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = rest[..end].to_ascii_lowercase();
    if authority.is_empty() || authority.contains('@') || authority.contains('\\') {
        return None;
    }
    let default = if scheme == "https" { ":443" } else { ":80" };
    let host = authority.strip_suffix(default).unwrap_or(&authority);
    Some(format!("{scheme}://{host}"))
}

/// The absolute URL to request for `next`, or None when it would leave `origin`.
pub fn follow(next: &str, origin: Option<&str>) -> Option<String> {
    let origin = origin.and_then(origin_of)?;
    if next.starts_with('/') && !next.starts_with("//") {
        return Some(format!("{origin}{next}"));
    }
    (origin_of(next)? == origin).then(|| next.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p5_same_origin_only() {
        let o = Some("https://api.example.com/v2");
        assert_eq!(
            follow("https://api.example.com/v2/x?page=2", o).as_deref(),
            Some("https://api.example.com/v2/x?page=2")
        );
        assert_eq!(
            follow("https://API.example.com:443/x", o).as_deref(),
            Some("https://API.example.com:443/x")
        );
        assert_eq!(
            follow("/v2/x?cursor=a", o).as_deref(),
            Some("https://api.example.com/v2/x?cursor=a")
        );
        assert_eq!(follow("https://evil.example.net/x", o), None);
        assert_eq!(
            follow("http://api.example.com/x", o),
            None,
            "scheme downgrade"
        );
        assert_eq!(follow("https://api.example.com:8443/x", o), None);
        assert_eq!(follow("https://api.example.com@evil.net/x", o), None);
        assert_eq!(follow("//evil.net/x", o), None);
        assert_eq!(follow("https://api.example.com/x", None), None);
    }
}
