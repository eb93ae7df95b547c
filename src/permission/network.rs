//! Which network addresses agents may reach. `/fetch` and `/web` connect
//! only to public addresses unless the policy's `[network] allow_hosts`
//! names the host: loopback, private, link-local (cloud metadata lives at
//! 169.254.169.254), carrier-grade NAT, multicast, unspecified and reserved
//! ranges are refused, for IPv4, IPv6 and IPv4 inside IPv6 alike. The check
//! runs on every address a name resolves to and on every redirect.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Host names that are never public whatever they resolve to.
const PRIVATE_NAMES: &[&str] = &[
    "localhost",
    "localhost.localdomain",
    "ip6-localhost",
    "ip6-loopback",
    "metadata",
    "metadata.google.internal",
    "instance-data",
];

fn v4_reason(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        _ if ip.is_loopback() => "a loopback address",
        _ if ip.is_unspecified() || a == 0 => "an unspecified address",
        _ if ip.is_private() => "a private address",
        _ if ip.is_link_local() => "a link-local address (where cloud metadata services live)",
        (100, 64..=127, _) => "a carrier-grade NAT address",
        (192, 0, 0) => "an IETF protocol address",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "a documentation address",
        (198, 18..=19, _) => "a benchmarking address",
        _ if ip.is_multicast() => "a multicast address",
        _ if ip.is_broadcast() || a >= 240 => "a reserved address",
        _ => return None,
    })
}

fn v6_reason(ip: Ipv6Addr) -> Option<&'static str> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return v4_reason(v4);
    }
    let segments = ip.segments();
    Some(match segments {
        _ if ip.is_loopback() => "a loopback address",
        _ if ip.is_unspecified() => "an unspecified address",
        [0x64, 0xff9b, ..] => {
            // NAT64: the IPv4 address is in the last 32 bits.
            let [.., hi, lo] = segments;
            let v4 = Ipv4Addr::from(((hi as u32) << 16) | lo as u32);
            return v4_reason(v4);
        }
        [0, 0, 0, 0, 0, 0, _, _] => "an IPv4-compatible address",
        [s, ..] if s & 0xfe00 == 0xfc00 => "a private (unique local) address",
        [s, ..] if s & 0xffc0 == 0xfe80 => "a link-local address",
        [s, ..] if s & 0xff00 == 0xff00 => "a multicast address",
        [0x2001, 0x0db8, ..] => "a documentation address",
        _ => return None,
    })
}

/// Why `ip` is not a public address agents may reach, or `None` when it is.
pub fn non_public(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => v4_reason(v4),
        IpAddr::V6(v6) => v6_reason(v6),
    }
}

/// Why the host of a URL is not public by its name or literal address
/// alone (before any lookup), or `None`.
pub fn non_public_host(host: &str) -> Option<&'static str> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return non_public(ip);
    }
    let lower = bare.trim_end_matches('.').to_ascii_lowercase();
    if PRIVATE_NAMES.contains(&lower.as_str())
        || lower.ends_with(".localhost")
        || lower.ends_with(".internal")
        || lower.ends_with(".local")
    {
        return Some("a name for this machine or its private network");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(s: &str) -> bool {
        non_public(s.parse().unwrap()).is_some()
    }

    #[test]
    fn private_ranges_are_refused() {
        for ip in [
            "127.0.0.1",
            "127.8.9.10",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.100.100.200",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "::1",
            "::",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::7f00:1",
            "fd00:ec2::254",
            "fe80::1",
            "ff02::1",
        ] {
            assert!(refused(ip), "{ip}");
        }
        for ip in ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111"] {
            assert!(!refused(ip), "{ip}");
        }
    }

    #[test]
    fn private_names_are_refused() {
        assert!(non_public_host("localhost").is_some());
        assert!(non_public_host("LOCALHOST.").is_some());
        assert!(non_public_host("metadata.google.internal").is_some());
        assert!(non_public_host("[::1]").is_some());
        assert!(non_public_host("example.com").is_none());
    }
}
