//! Whose address a request comes from, for the failed-authentication throttle
//! (`auth::guard`). The TCP peer, unless the peer is one of the configured
//! `trusted_proxies`: then `X-Forwarded-For` is read from the right, skipping trusted
//! proxies, and the first address that is not one is the client. Without
//! `trusted_proxies` the header is ignored, so a client cannot pick its own address.

use std::net::IpAddr;

/// Addresses and networks (`10.0.0.0/8`, `fd00::/8`, `192.0.2.7`) of the reverse
/// proxies in front of loopgate.
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies(Vec<(IpAddr, u8)>);

/// `X-Forwarded-For` entries read at most (a longer chain is cut from the left).
const MAX_HOPS: usize = 32;

impl TrustedProxies {
    /// A comma-separated list; empty means none.
    pub fn parse(list: &str) -> Result<Self, String> {
        let mut nets = Vec::new();
        for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (addr, len) = match item.split_once('/') {
                Some((a, l)) => (a, Some(l)),
                None => (item, None),
            };
            let ip: IpAddr = addr
                .parse()
                .map_err(|_| format!("trusted_proxies: {item:?} is not an address or network"))?;
            let max = if ip.is_ipv4() { 32 } else { 128 };
            let len =
                match len {
                    None => max,
                    Some(l) => l.parse::<u8>().ok().filter(|l| *l <= max).ok_or_else(|| {
                        format!("trusted_proxies: {item:?} has a bad prefix length")
                    })?,
                };
            nets.push((ip, len));
        }
        Ok(TrustedProxies(nets))
    }

    pub fn trusts(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        self.0.iter().any(|(net, len)| within(ip, *net, *len))
    }

    /// The client's address: `peer`, or when `peer` is trusted, the rightmost
    /// `X-Forwarded-For` address (of all such headers, in order) that is not trusted.
    pub fn client(&self, peer: Option<IpAddr>, forwarded_for: &[&str]) -> Option<IpAddr> {
        let peer = peer?;
        if !self.trusts(peer) {
            return Some(peer);
        }
        let hops: Vec<&str> = forwarded_for
            .iter()
            .flat_map(|h| h.split(','))
            .map(str::trim)
            .collect();
        let mut client = peer;
        for hop in hops.iter().rev().take(MAX_HOPS) {
            let Ok(ip) = hop.parse::<IpAddr>() else {
                break; // garbage (or a port, or `unknown`): stop at the last good hop
            };
            client = canonical(ip);
            if !self.trusts(client) {
                break;
            }
        }
        Some(client)
    }
}

/// An IPv4-mapped IPv6 address as the IPv4 address it is.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .map(IpAddr::V4)
            .unwrap_or(IpAddr::V6(v6)),
        v4 => v4,
    }
}

fn within(ip: IpAddr, net: IpAddr, len: u8) -> bool {
    match (ip, net) {
        (IpAddr::V4(a), IpAddr::V4(n)) => {
            let shift = 32 - u32::from(len);
            len == 0 || u32::from(a) >> shift == u32::from(n) >> shift
        }
        (IpAddr::V6(a), IpAddr::V6(n)) => {
            let shift = 128 - u32::from(len);
            len == 0 || u128::from(a) >> shift == u128::from(n) >> shift
        }
        _ => false,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn parses_addresses_and_networks() {
        let t = TrustedProxies::parse(" 10.0.0.0/8, 192.0.2.7 ,fd00::/8").unwrap();
        assert!(t.trusts(ip("10.1.2.3")) && t.trusts(ip("192.0.2.7")) && t.trusts(ip("fd00::1")));
        assert!(t.trusts(ip("::ffff:10.9.9.9")), "IPv4-mapped");
        assert!(!t.trusts(ip("192.0.2.8")) && !t.trusts(ip("11.0.0.1")));
        assert!(TrustedProxies::parse("").unwrap().0.is_empty());
        for bad in ["10.0.0.0/33", "nope", "10.0.0.1/x", "::1/129"] {
            assert!(TrustedProxies::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn forwarded_for_is_read_only_behind_a_trusted_peer() {
        let none = TrustedProxies::default();
        let lb = TrustedProxies::parse("10.0.0.0/8").unwrap();
        let peer = Some(ip("10.0.0.5"));
        let xff = ["198.51.100.9, 10.0.0.7"];
        // no trusted proxies: the header is the client's to forge, so it is ignored
        assert_eq!(none.client(peer, &xff), peer);
        assert_eq!(lb.client(peer, &xff), Some(ip("198.51.100.9")));
        // a client's own forged entries sit left of the first untrusted hop
        assert_eq!(
            lb.client(peer, &["1.2.3.4", "198.51.100.9"]),
            Some(ip("198.51.100.9"))
        );
        // an untrusted peer is the client whatever it says
        let direct = Some(ip("203.0.113.1"));
        assert_eq!(lb.client(direct, &xff), direct);
        // no header, or garbage: the last good hop
        assert_eq!(lb.client(peer, &[]), peer);
        assert_eq!(lb.client(peer, &["unknown"]), peer);
        assert_eq!(lb.client(None, &xff), None);
    }
}
