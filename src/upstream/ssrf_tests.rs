//! The address classifier, literal and scheme checks, the resolver's name refusals, and
//! end-to-end refusals through the caller with `allow_private: false`.

use std::net::IpAddr;

use serde_json::{json, Map};

use super::ssrf::{blocked_ip, blocked_name, check_url, BlockedOrIo, GuardedResolver};
use super::testserver::{serve, Reply};
use super::{CallError, Target, UpstreamClient, UpstreamClientConfig};
use crate::store::providers::{AuthType, ProviderAuth};

#[test]
fn classification_table() {
    let blocked = [
        "0.0.0.0",
        "127.0.0.1",
        "127.255.0.9",
        "10.0.0.1",
        "172.16.0.1",
        "172.31.255.255",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "100.127.255.254",
        "192.0.0.8",
        "192.0.2.1",
        "198.18.0.1",
        "198.51.100.7",
        "203.0.113.9",
        "224.0.0.1",
        "239.255.255.250",
        "240.0.0.1",
        "255.255.255.255",
        "::",
        "::1",
        "::ffff:127.0.0.1",
        "::ffff:10.1.2.3",
        "::ffff:169.254.169.254",
        "::ffff:0:a00:1",
        "64:ff9b::a9fe:a9fe",
        "2002:7f00:1::",
        "::127.0.0.1",
        "fc00::1",
        "fd12:3456::1",
        "fe80::1",
        "fec0::1",
        "ff02::1",
        "2001:db8::1",
        "2001::1",
        "100::1",
        "fd00:ec2::254",
    ];
    for ip in blocked {
        let parsed: IpAddr = ip.parse().unwrap();
        assert!(blocked_ip(parsed).is_some(), "{ip} should be blocked");
    }
    let public = [
        "8.8.8.8",
        "1.1.1.1",
        "93.184.216.34",
        "172.15.255.255",
        "172.32.0.1",
        "100.63.255.255",
        "100.128.0.1",
        "169.253.0.1",
        "192.169.0.1",
        "11.0.0.1",
        "2606:4700:4700::1111",
        "2a00:1450:4001:81b::200e",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808",
        "2002:808:808::1",
    ];
    for ip in public {
        let parsed: IpAddr = ip.parse().unwrap();
        assert_eq!(blocked_ip(parsed), None, "{ip} should be allowed");
    }
    assert_eq!(
        blocked_ip("169.254.169.254".parse().unwrap()),
        Some("link-local (cloud metadata)")
    );
}

#[test]
fn names() {
    for name in [
        "localhost",
        "LOCALHOST.",
        "api.localhost",
        "metadata.google.internal",
        "metadata",
    ] {
        assert!(blocked_name(name), "{name}");
    }
    for name in [
        "api.example.com",
        "localhost.example.com",
        "metadata.example.com",
    ] {
        assert!(!blocked_name(name), "{name}");
    }
}

#[test]
fn literals_and_schemes_are_checked_before_sending() {
    let check = |u: &str, allow: bool| check_url(&url::Url::parse(u).unwrap(), allow);
    for u in [
        "http://127.0.0.1/",
        "http://[::1]:8080/",
        "http://10.0.0.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::ffff:169.254.169.254]/",
        "http://2130706433/",
        "http://0x7f.1/",
        "https://0/",
    ] {
        assert!(matches!(check(u, false), Err(CallError::Blocked(_))), "{u}");
        assert!(check(u, true).is_ok(), "{u} with allow_private");
    }
    for u in ["file:///etc/passwd", "ftp://example.com/", "gopher://x/"] {
        assert!(matches!(check(u, true), Err(CallError::Blocked(_))), "{u}");
    }
    assert!(check("https://api.example.com/", false).is_ok());
    assert!(check("http://8.8.8.8/", false).is_ok());
}

#[tokio::test]
async fn the_resolver_refuses_local_names_and_filters_addresses() {
    let refused = GuardedResolver::lookup("localhost".into(), false).await;
    assert!(matches!(refused, Err(BlockedOrIo::Blocked(_))));
    // A literal through the resolver (hyper never does this, but the filter must hold).
    let refused = GuardedResolver::lookup("127.0.0.1".into(), false).await;
    match refused {
        Err(BlockedOrIo::Blocked(e)) => assert!(e.0.contains("127.0.0.1"), "{}", e.0),
        other => panic!("{other:?}"),
    }
    // A name resolving to a private address: refused without saying which address.
    match GuardedResolver::lookup("127.1".into(), false).await {
        Err(BlockedOrIo::Blocked(e)) => {
            assert!(
                !e.0.contains("127.0.0.1") && e.0.contains("non-public"),
                "{}",
                e.0
            )
        }
        other => panic!("{other:?}"),
    }
    let allowed = GuardedResolver::lookup("localhost".into(), true)
        .await
        .unwrap();
    assert!(allowed.iter().any(|a| a.ip().is_loopback()));
}

fn target(base: &str) -> Target {
    Target::new(
        base,
        "GET",
        "/x",
        &json!({"type": "object"}),
        ProviderAuth {
            kind: AuthType::Bearer,
            name: None,
        },
        Some("secret-token-123".to_string().into()),
    )
}

#[tokio::test]
async fn private_targets_are_refused_end_to_end() {
    let server = serve(|_| Reply::new(200, "reached")).await;
    let port = server.addr.port();
    let caller = UpstreamClient::new(UpstreamClientConfig::default());
    for base in [
        format!("http://127.0.0.1:{port}"),
        format!("http://localhost:{port}"),
        format!("http://[::1]:{port}"),
        "http://10.0.0.1".to_string(),
        "http://169.254.169.254".to_string(),
        "http://metadata.google.internal".to_string(),
    ] {
        let err = caller
            .call(&target(&base), &Map::new(), None)
            .await
            .unwrap_err();
        assert!(matches!(err, CallError::Blocked(_)), "{base}: {err:?}");
        assert!(!err.transient());
        assert!(!err.to_string().contains("secret-token-123"));
    }
    assert!(
        server.seen().is_empty(),
        "nothing may reach a refused target"
    );
}

#[test]
fn a_redirect_hop_to_a_private_address_is_refused() {
    // No public test server exists to redirect from; every hop goes through
    // `check_url` (see `http_tests::every_redirect_hop_is_checked` for the loop).
    let hop = url::Url::parse("https://api.example.com/a")
        .unwrap()
        .join("http://169.254.169.254/latest/meta-data/")
        .unwrap();
    assert!(matches!(check_url(&hop, false), Err(CallError::Blocked(_))));
}

/// One SSRF owner: OAuth token and refresh requests go through the guarded client, so a
/// private literal, a local name and a name resolving to a private address are refused
/// before anything is sent, and the refusal never names the address a name resolved to.
#[tokio::test]
async fn oauth_token_requests_go_through_the_guarded_resolver() {
    use super::oauth::{OAuthApp, OAuthError, OAuthHttp};
    let server = serve(|_| {
        Reply::new(200, r#"{"access_token":"at-1","token_type":"bearer"}"#)
            .header("content-type", "application/json")
    })
    .await;
    let port = server.addr.port();
    let app = |host: &str| {
        OAuthApp::explicit(
            format!("http://{host}:{port}/authorize"),
            format!("http://{host}:{port}/token"),
            "client-1".into(),
            Some("client-secret-xyz".to_string().into()),
            "https://loopgate.example/connect/callback".into(),
        )
    };
    // This machine's own name, when it resolves to loopback (as in /etc/hosts here):
    // a plain name that only the resolver can judge.
    let mut own_name = std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty() && !blocked_name(h));
    if let Some(name) = own_name.clone() {
        let loopback = tokio::net::lookup_host((name.as_str(), 0))
            .await
            .is_ok_and(|mut a| a.all(|a| a.ip().is_loopback()));
        own_name = own_name.filter(|_| loopback);
    }
    let mut hosts = vec!["127.0.0.1".to_string(), "localhost".to_string()];
    hosts.extend(own_name.clone());
    let guarded = OAuthHttp::new(false);
    for host in &hosts {
        let err = match guarded.refresh(&app(host), "rt-secret-1").await {
            Err(OAuthError::Transport(m)) => m,
            Err(other) => panic!("{host}: {other:?}"),
            Ok(_) => panic!("{host}: a private token endpoint was called"),
        };
        assert!(err.contains("not allowed"), "{host}: {err}");
        assert!(!err.contains("rt-secret-1") && !err.contains("client-secret-xyz"));
        if host != "127.0.0.1" {
            assert!(!err.contains("127.0.0.1"), "{host}: {err}");
        }
    }
    assert!(
        server.seen().is_empty(),
        "nothing reaches a refused endpoint"
    );
    // Allowed private targets (tests, on-premise): the same client reaches it.
    let open = OAuthHttp::new(true);
    let t = open
        .refresh(&app("127.0.0.1"), "rt-secret-1")
        .await
        .unwrap();
    assert_eq!(t.access_token, "at-1");
    assert_eq!(server.seen().len(), 1);
}
