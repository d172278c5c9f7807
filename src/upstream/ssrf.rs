//! Server-side request forgery guard. Unless the admin configuration allows private
//! targets, loopgate refuses to connect to any address that is not globally routable
//! (see [`blocked_ip`] for the table) and to the names `localhost` (and `*.localhost`),
//! `metadata.google.internal`, `metadata.goog` and `metadata`.
//!
//! Names are checked by [`GuardedResolver`], the HTTP client's only resolver: it looks
//! the name up once and hands the connector only the addresses that passed, so the
//! address connected to is the address checked (a second, rebound lookup never
//! happens). The client never uses a proxy (a proxy would resolve names itself). A URL
//! whose host is an IP literal skips the resolver, so [`check_url`] checks literals
//! (and the scheme: `http` and `https` only) before every request, redirects included.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::{Host, Url};

use super::CallError;

/// The error the resolver returns; found again in the HTTP client's error chain.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct BlockedError(pub(crate) String);

/// `(network, prefix length, what it is)`: IPv4 ranges that are not globally routable.
const V4_BLOCKED: &[(u32, u8, &str)] = &[
    (0x0000_0000, 8, "\"this\" network"),
    (0x0A00_0000, 8, "private"),
    (0x6440_0000, 10, "carrier-grade NAT"),
    (0x7F00_0000, 8, "loopback"),
    (0xA9FE_0000, 16, "link-local (cloud metadata)"),
    (0xAC10_0000, 12, "private"),
    (0xC000_0000, 24, "IETF protocol assignments"),
    (0xC000_0200, 24, "documentation"),
    (0xC058_6300, 24, "6to4 relay"),
    (0xC0A8_0000, 16, "private"),
    (0xC612_0000, 15, "benchmarking"),
    (0xC633_6400, 24, "documentation"),
    (0xCB00_7100, 24, "documentation"),
    (0xE000_0000, 4, "multicast"),
    (0xF000_0000, 4, "reserved or broadcast"),
];

/// `(network, prefix length, what it is)`: IPv6 ranges refused outright. Ranges that
/// embed an IPv4 address (mapped, translated, NAT64, 6to4) are judged by that address.
const V6_BLOCKED: &[(u128, u8, &str)] = &[
    (0, 96, "IPv4-compatible, unspecified or loopback"),
    (0x0064_ff9b_0001 << 80, 48, "local-use NAT64"),
    (0x0100 << 112, 64, "discard-only"),
    (0x2001 << 112, 23, "IETF protocol assignments"),
    (0x2001_0db8 << 96, 32, "documentation"),
    (0x3fff << 112, 20, "documentation"),
    (0xfc00 << 112, 7, "unique local (private)"),
    (0xfe80 << 112, 10, "link-local"),
    (0xfec0 << 112, 10, "site-local"),
    (0xff00 << 112, 8, "multicast"),
];

/// Why `ip` may not be connected to, or `None` when it is globally routable.
pub fn blocked_ip(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => blocked_v4(v4),
        IpAddr::V6(v6) => blocked_v6(v6),
    }
}

fn blocked_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let bits = u32::from(ip);
    V4_BLOCKED
        .iter()
        .find(|(net, len, _)| bits >> (32 - u32::from(*len)) == net >> (32 - u32::from(*len)))
        .map(|(_, _, what)| *what)
}

fn blocked_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let bits = u128::from(ip);
    let embedded_v4 = |offset: u32| Ipv4Addr::from((bits >> offset) as u32);
    let within = |net: u128, len: u32| bits >> (128 - len) == net >> (128 - len);
    // IPv4-mapped ::ffff:0:0/96, IPv4-translated ::ffff:0:0:0/96, NAT64 64:ff9b::/96.
    if within(0xffff << 32, 96) || within(0xffff << 48, 96) || within(0x0064_ff9b << 96, 96) {
        return blocked_v4(embedded_v4(0));
    }
    // 6to4 2002::/16 carries the IPv4 address in bits 16..48.
    if within(0x2002 << 112, 16) {
        return blocked_v4(embedded_v4(80));
    }
    V6_BLOCKED
        .iter()
        .find(|(net, len, _)| within(*net, u32::from(*len)))
        .map(|(_, _, what)| *what)
}

/// Host names refused whatever they resolve to.
pub fn blocked_name(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    host == "localhost"
        || host.ends_with(".localhost")
        || matches!(
            host.as_str(),
            "metadata" | "metadata.google.internal" | "metadata.goog"
        )
}

/// Checks what can be checked without resolving: the scheme, an IP-literal host,
/// a refused name.
pub(crate) fn check_url(url: &Url, allow_private: bool) -> Result<(), CallError> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(CallError::Blocked(format!(
            "only http and https URLs can be called, not {}:",
            url.scheme()
        )));
    }
    if allow_private {
        return Ok(());
    }
    let (what, ip) = match url.host() {
        None => return Err(CallError::Blocked("the URL has no host".into())),
        Some(Host::Domain(_)) => return Ok(()),
        Some(Host::Ipv4(v4)) => (v4.to_string(), IpAddr::V4(v4)),
        Some(Host::Ipv6(v6)) => (v6.to_string(), IpAddr::V6(v6)),
    };
    match blocked_ip(ip) {
        Some(reason) => Err(CallError::Blocked(format!(
            "{what} is a {reason} address; loopgate does not call non-public addresses"
        ))),
        None => Ok(()),
    }
}

/// The one way loopgate builds an HTTP client that reaches the outside (tool calls, MCP
/// servers, OAuth token endpoints): [`GuardedResolver`] as its only resolver, no proxy,
/// no redirects followed by the client. Callers add their timeouts and check every URL
/// with [`check_url`] before sending it.
pub(crate) fn guarded_client(allow_private: bool) -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .dns_resolver(std::sync::Arc::new(GuardedResolver { allow_private }))
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
}

/// The resolver's refusal, when it is somewhere in a client error's source chain.
pub(crate) fn blocked_cause<'a>(err: &'a (dyn std::error::Error + 'static)) -> Option<&'a str> {
    let mut source = Some(err);
    while let Some(e) = source {
        if let Some(blocked) = e.downcast_ref::<BlockedError>() {
            return Some(&blocked.0);
        }
        source = e.source();
    }
    None
}

/// The HTTP client's resolver: one lookup, non-public addresses removed.
pub(crate) struct GuardedResolver {
    pub(crate) allow_private: bool,
}

impl GuardedResolver {
    pub(crate) async fn lookup(
        host: String,
        allow_private: bool,
    ) -> Result<Vec<SocketAddr>, BlockedOrIo> {
        if !allow_private && blocked_name(&host) {
            return Err(BlockedOrIo::Blocked(BlockedError(format!(
                "{host} is a local or metadata host name; loopgate does not call it"
            ))));
        }
        let found: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0))
            .await
            .map_err(BlockedOrIo::Io)?
            .collect();
        if allow_private {
            return Ok(found);
        }
        let public: Vec<SocketAddr> = found
            .iter()
            .copied()
            .filter(|addr| blocked_ip(addr.ip()).is_none())
            .collect();
        match (public.is_empty(), found.first()) {
            (true, Some(first)) => {
                // The address stays in the operator's log: telling the caller which private
                // address a name resolved to would map the internal network for it.
                tracing::info!(%host, address = %first.ip(), "refused a non-public upstream address");
                Err(BlockedOrIo::Blocked(BlockedError(format!(
                    "{host} resolves to a non-public address; loopgate does not call non-public addresses"
                ))))
            }
            _ => Ok(public),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum BlockedOrIo {
    #[error(transparent)]
    Blocked(BlockedError),
    #[error(transparent)]
    Io(std::io::Error),
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_string();
        let allow_private = self.allow_private;
        Box::pin(async move {
            match Self::lookup(host, allow_private).await {
                Ok(addrs) => Ok(Box::new(addrs.into_iter()) as Addrs),
                Err(BlockedOrIo::Blocked(e)) => Err(Box::new(e) as _),
                Err(BlockedOrIo::Io(e)) => Err(Box::new(e) as _),
            }
        })
    }
}
