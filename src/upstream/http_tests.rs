//! The caller against in-test HTTP servers (`allow_private: true`): the request on the
//! wire, credential placement, redirects, byte cap, timeout, statuses, redaction and
//! rate limits.

use std::time::Duration;

use secrecy::SecretString;
use serde_json::{json, Map, Value};

use super::testserver::{serve, Reply, Seen};
use super::{CallError, Request, Target, UpstreamClient, UpstreamClientConfig};
use crate::store::providers::{AuthType, ProviderAuth};

pub(super) const SECRET: &str = "sk_live_S3cr3t+/=x";

pub(super) fn caller() -> UpstreamClient {
    UpstreamClient::new(UpstreamClientConfig {
        allow_private: true,
        timeout: Duration::from_secs(10),
        ..UpstreamClientConfig::default()
    })
}

pub(super) fn target(
    base: &str,
    method: &str,
    path: &str,
    schema: Value,
    kind: AuthType,
    name: Option<&str>,
) -> Target {
    Target::new(
        base,
        method,
        path,
        &schema,
        ProviderAuth {
            kind,
            name: name.map(str::to_string),
        },
        Some(SecretString::from(SECRET)),
    )
}

pub(super) fn get(base: &str, path: &str, kind: AuthType, name: Option<&str>) -> Target {
    target(base, "GET", path, json!({"type": "object"}), kind, name)
}

pub(super) fn args(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

pub(super) fn ok(_: &Seen) -> Reply {
    Reply::new(200, r#"{"ok":true}"#).header("content-type", "application/json")
}

#[tokio::test]
async fn builds_the_request_from_the_arguments() {
    let server = serve(ok).await;
    let schema = json!({"type": "object", "properties": {
        "org": {"type": "string", "x-loopgate-in": "path"},
        "limit": {"type": "integer", "x-loopgate-in": "query"},
        "tag": {"type": "array", "x-loopgate-in": "query"},
        "trace": {"type": "string", "x-loopgate-in": "header", "x-loopgate-name": "X-Trace"},
        "body": {"type": "object", "x-loopgate-in": "body", "x-loopgate-content-type": "application/json"}
    }});
    let t = target(
        &format!("{}/api", server.url()),
        "post",
        "/orgs/{org}/items",
        schema,
        AuthType::None,
        None,
    );
    let res = caller()
        .call(&t, &args(json!({"org": "acme", "limit": 10, "tag": ["a", "b"], "trace": "t1", "body": {"name": "x"}})), None)
        .await
        .unwrap();
    assert_eq!(res.status, 200);
    assert_eq!(res.body, br#"{"ok":true}"#);
    assert!(res
        .headers
        .contains(&("content-type".to_string(), "application/json".to_string())));
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].method, "POST");
    assert_eq!(seen[0].target, "/api/orgs/acme/items?limit=10&tag=a&tag=b");
    assert_eq!(seen[0].header("x-trace"), Some("t1"));
    assert_eq!(seen[0].header("content-type"), Some("application/json"));
    assert_eq!(seen[0].header("authorization"), None);
    assert_eq!(seen[0].body, br#"{"name":"x"}"#);
}

#[tokio::test]
async fn places_the_credential_for_each_auth_type() {
    let server = serve(ok).await;
    let c = caller();
    let base = server.url();
    for t in [
        get(&base, "/bearer", AuthType::Bearer, None),
        get(&base, "/header", AuthType::Header, Some("X-Api-Key")),
        get(&base, "/query", AuthType::Query, Some("api_key")),
        get(&base, "/none", AuthType::None, None),
    ] {
        c.call(&t, &Map::new(), None).await.unwrap();
    }
    let seen = server.seen();
    let by_path = |p: &str| {
        seen.iter()
            .find(|s| s.target.starts_with(p))
            .unwrap()
            .clone()
    };
    let bearer = by_path("/bearer");
    assert_eq!(
        bearer.header("authorization"),
        Some(format!("Bearer {SECRET}").as_str())
    );
    let header = by_path("/header");
    assert_eq!(header.header("x-api-key"), Some(SECRET));
    assert_eq!(header.header("authorization"), None);
    let query = by_path("/query");
    assert_eq!(query.target, "/query?api_key=sk_live_S3cr3t%2B%2F%3Dx");
    assert_eq!(query.header("authorization"), None);
    let none = by_path("/none");
    assert_eq!(none.target, "/none");
    assert!(none.headers.iter().all(|(_, v)| !v.contains(SECRET)));
}

#[tokio::test]
async fn the_credential_header_wins_over_an_argument() {
    let server = serve(ok).await;
    let schema =
        json!({"properties": {"key": {"x-loopgate-in": "header", "x-loopgate-name": "X-Api-Key"}}});
    let t = target(
        &server.url(),
        "GET",
        "/",
        schema,
        AuthType::Header,
        Some("x-api-key"),
    );
    caller()
        .call(&t, &args(json!({"key": "model-chosen"})), None)
        .await
        .unwrap();
    let seen = server.seen();
    let values: Vec<&str> = seen[0]
        .headers
        .iter()
        .filter(|(k, _)| k == "x-api-key")
        .map(|(_, v)| v.as_str())
        .collect();
    assert_eq!(values, vec![SECRET]);
}

#[tokio::test]
async fn path_traversal_stays_in_one_segment() {
    let server = serve(ok).await;
    let schema = json!({"properties": {"id": {"x-loopgate-in": "path"}}});
    let t = target(
        &server.url(),
        "GET",
        "/users/{id}",
        schema,
        AuthType::None,
        None,
    );
    caller()
        .call(&t, &args(json!({"id": "../../admin?x=1#f"})), None)
        .await
        .unwrap();
    assert_eq!(
        server.seen()[0].target,
        "/users/..%2F..%2Fadmin%3Fx%3D1%23f"
    );
    let err = caller()
        .call(&t, &args(json!({"id": ".."})), None)
        .await
        .unwrap_err();
    assert!(matches!(err, CallError::InvalidArguments(_)), "{err:?}");
    assert_eq!(server.seen().len(), 1);
}

#[tokio::test]
async fn redirects_keep_the_credential_on_the_origin_only() {
    let other = serve(ok).await;
    let other_url = other.url();
    let server = serve(move |s| match s.target.split('?').next().unwrap() {
        "/same" => Reply::new(302, "").header("location", "/final"),
        "/cross" => Reply::new(307, "").header(
            "location",
            &format!("{other_url}/land?api_key=echoed&keep=1"),
        ),
        "/post" => Reply::new(303, "").header("location", "/after"),
        _ => ok(s),
    })
    .await;
    let c = caller();
    let base = server.url();
    c.call(
        &get(&base, "/same", AuthType::Bearer, None),
        &Map::new(),
        None,
    )
    .await
    .unwrap();
    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[1].target, "/final");
    assert_eq!(
        seen[1].header("authorization"),
        Some(format!("Bearer {SECRET}").as_str())
    );

    c.call(
        &get(&base, "/cross", AuthType::Bearer, None),
        &Map::new(),
        None,
    )
    .await
    .unwrap();
    c.call(
        &get(&base, "/cross", AuthType::Query, Some("api_key")),
        &Map::new(),
        None,
    )
    .await
    .unwrap();
    let landed = other.seen();
    assert_eq!(landed.len(), 2);
    // The bearer call keeps the (unrelated) `api_key` the redirect named; the query
    // credential call has its credential parameter stripped.
    assert_eq!(landed[0].target, "/land?api_key=echoed&keep=1");
    assert_eq!(landed[1].target, "/land?keep=1");
    for s in &landed {
        assert_eq!(s.header("authorization"), None);
        assert!(s.headers.iter().all(|(_, v)| !v.contains(SECRET)));
    }

    let post = target(
        &base,
        "POST",
        "/post",
        json!({"type": "object"}),
        AuthType::None,
        None,
    );
    c.call(&post, &args(json!({"body": {"a": 1}})), None)
        .await
        .unwrap();
    let after = server
        .seen()
        .into_iter()
        .find(|s| s.target == "/after")
        .unwrap();
    assert_eq!(after.method, "GET");
    assert!(after.body.is_empty());
    assert_eq!(after.header("content-type"), None);
}

#[tokio::test]
async fn every_redirect_hop_is_checked_and_counted() {
    let server = serve(|s| match s.target.as_str() {
        "/file" => Reply::new(302, "").header("location", "file:///etc/passwd"),
        _ => Reply::new(302, "").header("location", "/loop"),
    })
    .await;
    let c = caller();
    let err = c
        .call(
            &get(&server.url(), "/file", AuthType::None, None),
            &Map::new(),
            None,
        )
        .await
        .unwrap_err();
    assert!(matches!(err, CallError::Blocked(_)), "{err:?}");
    let err = c
        .call(
            &get(&server.url(), "/loop", AuthType::None, None),
            &Map::new(),
            None,
        )
        .await
        .unwrap_err();
    assert_eq!(err, CallError::TooManyRedirects { limit: 5 });
    assert_eq!(server.seen().len(), 1 + 6);
}

#[tokio::test]
async fn next_urls_stay_on_the_origin_with_the_credential() {
    let server = serve(ok).await;
    let other = serve(ok).await;
    let t = get(&server.url(), "/items", AuthType::Query, Some("api_key"));
    let c = caller();
    c.call_url(
        &t,
        &format!("{}/items?cursor=abc&api_key=old", server.url()),
        None,
    )
    .await
    .unwrap();
    c.call_url(&t, "/items?cursor=def", None).await.unwrap();
    let seen = server.seen();
    assert_eq!(
        seen[0].target,
        "/items?cursor=abc&api_key=sk_live_S3cr3t%2B%2F%3Dx"
    );
    assert_eq!(
        seen[1].target,
        "/items?cursor=def&api_key=sk_live_S3cr3t%2B%2F%3Dx"
    );
    let err = c
        .call_url(&t, &format!("{}/items?cursor=x", other.url()), None)
        .await
        .unwrap_err();
    assert!(matches!(err, CallError::OffOrigin { .. }), "{err:?}");
    assert!(other.seen().is_empty());
    // Same host, other scheme: another origin.
    let https = server.url().replace("http://", "https://");
    let err = c.call_url(&t, &https, None).await.unwrap_err();
    assert!(matches!(err, CallError::OffOrigin { .. }), "{err:?}");
    let err = c
        .send(
            &t,
            Request::NextUrl("http://[::1"),
            None,
            Duration::from_secs(1),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, CallError::InvalidArguments(_)), "{err:?}");
}

#[tokio::test]
async fn an_echoed_credential_is_redacted() {
    let server = serve(|s| {
        Reply::new(
            401,
            format!(
                "bad token in {} / {}",
                s.header("authorization").unwrap_or(""),
                s.target
            ),
        )
    })
    .await;
    let c = caller();
    for t in [
        get(&server.url(), "/a", AuthType::Bearer, None),
        get(&server.url(), "/b", AuthType::Query, Some("key")),
    ] {
        let err = c.call(&t, &Map::new(), None).await.unwrap_err();
        let CallError::Status { body_excerpt, .. } = &err else {
            panic!("{err:?}")
        };
        assert!(!body_excerpt.contains(SECRET), "{body_excerpt}");
        assert!(!body_excerpt.contains("S3cr3t"), "{body_excerpt}");
        assert!(body_excerpt.contains("[redacted]"), "{body_excerpt}");
        assert!(!err.to_string().contains("S3cr3t"));
        assert!(!format!("{err:?}").contains("S3cr3t"));
    }
    assert!(!format!("{:?}", get("http://x", "/", AuthType::Bearer, None)).contains("S3cr3t"));
}

/// Redaction holds on success too: an API echoing the credential in a successful body
/// or a next link (here a query credential, as many APIs do) never hands it to the
/// engine, so it reaches no result, stored result or cache entry.
#[tokio::test]
async fn a_credential_echoed_in_a_successful_response_is_redacted() {
    let server = serve(|s| {
        Reply::new(
            200,
            format!(
                r#"{{"echo": "{}", "next": "https://x.example{}"}}"#,
                s.target, s.target
            ),
        )
        .header("link", &format!("<{}>; rel=\"next\"", s.target))
    })
    .await;
    let t = get(&server.url(), "/b", AuthType::Query, Some("key"));
    let r = caller().call(&t, &Map::new(), None).await.unwrap();
    let body = String::from_utf8(r.body.clone()).unwrap();
    assert!(
        !body.contains("S3cr3t") && body.contains("[redacted]"),
        "{body}"
    );
    assert!(
        serde_json::from_str::<serde_json::Value>(&body).is_ok(),
        "still JSON: {body}"
    );
    assert!(
        r.headers.iter().all(|(_, v)| !v.contains("S3cr3t")),
        "{:?}",
        r.headers
    );
}

#[tokio::test]
async fn connection_failures_are_transient_and_clean() {
    // A port nothing listens on.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let t = get(
        &format!("http://127.0.0.1:{port}"),
        "/",
        AuthType::Query,
        Some("key"),
    );
    let err = caller().call(&t, &Map::new(), None).await.unwrap_err();
    let CallError::Connect { message, retryable } = &err else {
        panic!("{err:?}")
    };
    assert!(*retryable, "nothing was sent");
    assert!(!message.contains("S3cr3t"), "{message}");
}

#[test]
fn stripping_the_credential_keeps_the_rest_of_the_query_byte_for_byte() {
    let mut url =
        url::Url::parse("https://h.example/x?cursor=a%2Bb+c&api_key=1&flag&api%5Fkey=2").unwrap();
    super::credential::strip_query(&mut url, "api_key");
    assert_eq!(url.query(), Some("cursor=a%2Bb+c&flag"));
    let mut only = url::Url::parse("https://h.example/x?api_key=1").unwrap();
    super::credential::strip_query(&mut only, "api_key");
    assert_eq!(only.as_str(), "https://h.example/x");
}

/// P5: the one next-page origin rule, as the walk asks it before following a link (moved
/// here from the engine's former copy): same scheme, host and port only; relative links
/// resolved against `base_url`; credentials in the authority never followed.
#[test]
fn p5_next_page_url_stays_on_the_providers_origin() {
    let base = "https://api.example.com/v2";
    let follow = |next: &str| super::next_page_url(base, next).ok().map(String::from);
    assert_eq!(
        follow("https://api.example.com/v2/x?page=2").as_deref(),
        Some("https://api.example.com/v2/x?page=2")
    );
    assert_eq!(
        follow("https://API.example.com:443/x").as_deref(),
        Some("https://api.example.com/x"),
        "case and default port do not change the origin"
    );
    assert_eq!(
        follow("/v2/x?cursor=a").as_deref(),
        Some("https://api.example.com/v2/x?cursor=a")
    );
    assert_eq!(follow("https://evil.example.net/x"), None);
    assert_eq!(follow("http://api.example.com/x"), None, "scheme downgrade");
    assert_eq!(follow("https://api.example.com:8443/x"), None);
    assert_eq!(follow("https://api.example.com@evil.net/x"), None);
    assert_eq!(follow("https://user:pw@api.example.com/x"), None);
    assert_eq!(follow("//evil.net/x"), None);
    assert!(super::next_page_url("not a url", "/x").is_err());
}

/// The one classification of an error status: 429 always retryable, 5xx/408/425 only for
/// an idempotent method, `Retry-After` kept for 429 and 503.
#[test]
fn error_statuses_are_classified_once() {
    let c =
        |status, idempotent| CallError::from_status(status, Some("7"), String::new(), idempotent);
    assert!(c(429, false).transient());
    assert!(c(503, true).transient() && !c(503, false).transient());
    assert!(!c(404, true).transient() && !c(400, true).transient());
    assert_eq!(c(429, true).retry_after(), Some(Duration::from_secs(7)));
    assert_eq!(c(503, true).retry_after(), Some(Duration::from_secs(7)));
    assert_eq!(c(500, true).retry_after(), None);
    assert_eq!(c(502, true).status(), Some(502));
}
