//! Which network addresses agents may reach. `/fetch` and `/web` connect
//! only to public addresses unless the policy's `[network] allow_hosts`
//! names the host: loopback, private, link-local (cloud metadata lives at
//! 169.254.169.254), carrier-grade NAT, multicast, unspecified and reserved
//! ranges are refused, for IPv4, IPv6 and IPv4 inside IPv6 alike. The
//! ranges are those of IANA's IPv4 and IPv6 special-purpose address
//! registries that are not globally reachable; an IPv4 address carried
//! inside IPv6 (mapped, translated, 6to4, NAT64) is judged as itself, and
//! a Teredo address (which hides its IPv4 client) is refused. The check
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
        (192, 31, 196) | (192, 175, 48) => "an AS112 address",
        (192, 52, 193) => "an AMT address",
        (192, 88, 99) => "a 6to4 relay address",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "a documentation address",
        (198, 18..=19, _) => "a benchmarking address",
        _ if ip.is_multicast() => "a multicast address",
        _ if ip.is_broadcast() || a >= 240 => "a reserved address",
        _ => return None,
    })
}

/// The IPv4 address made of two 16-bit segments.
fn v4_of(hi: u16, lo: u16) -> Ipv4Addr {
    Ipv4Addr::from(((hi as u32) << 16) | lo as u32)
}

fn v6_reason(ip: Ipv6Addr) -> Option<&'static str> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return v4_reason(v4);
    }
    let segments = ip.segments();
    let [s0, s1, s2, ..] = segments;
    let [.., hi, lo] = segments;
    Some(match segments {
        _ if ip.is_loopback() => "a loopback address",
        _ if ip.is_unspecified() => "an unspecified address",
        // NAT64 (64:ff9b::/96) and IPv4-translated (::ffff:0:0:0/96): the
        // IPv4 address is in the last 32 bits.
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] | [0, 0, 0, 0, 0xffff, 0, _, _] => {
            return v4_reason(v4_of(hi, lo));
        }
        // 6to4 (2002::/16): the IPv4 address follows the prefix.
        [0x2002, ..] => return v4_reason(v4_of(s1, s2)),
        [0x64, 0xff9b, 1, ..] => "a local-use NAT64 address",
        [0, 0, 0, 0, 0, 0, _, _] => "an IPv4-compatible address",
        [0x100, 0, 0, 0, ..] => "a discard-only address",
        [0x2001, 0, ..] => "a Teredo tunnel address (its IPv4 client is hidden)",
        [0x2001, 0x2, 0, ..] => "a benchmarking address",
        [0x2001, s, ..] if s & 0xfff0 == 0x10 || s & 0xfff0 == 0x20 => "an ORCHID address",
        [0x2001, 0x0db8, ..] => "a documentation address",
        _ if s0 & 0xfff0 == 0x3ff0 => "a documentation address",
        [0x5f00, ..] => "a segment-routing address",
        _ if s0 & 0xfe00 == 0xfc00 => "a private (unique local) address",
        _ if s0 & 0xffc0 == 0xfe80 => "a link-local address",
        _ if s0 & 0xffc0 == 0xfec0 => "a site-local address",
        _ if s0 & 0xff00 == 0xff00 => "a multicast address",
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

    /// Issue 28: IPv4 inside IPv6 in every form the registries define, and
    /// the IANA special-purpose ranges.
    #[test]
    fn every_special_purpose_form_is_refused() {
        for ip in [
            // IPv4-translated (::ffff:0:0:0/96) and 6to4 (2002::/16) of
            // loopback and private addresses.
            "::ffff:0:127.0.0.1",
            "::ffff:0:7f00:1",
            "::ffff:0:10.0.0.1",
            "2002:7f00:1::",
            "2002:a00:1::1",
            "2002:c0a8:101::",
            "2002:a9fe:a9fe::",
            // NAT64, local-use NAT64, discard, Teredo, ORCHID, benchmarking,
            // documentation, SRv6, site-local.
            "64:ff9b::a00:1",
            "64:ff9b:1::1",
            "100::1",
            "2001::1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "2001:2::1",
            "2001:10::1",
            "2001:20::1",
            "3fff::1",
            "5f00::1",
            "fec0::1",
            // IPv4: AS112, AMT, the 6to4 relay anycast, direct delegation.
            "192.31.196.1",
            "192.52.193.1",
            "192.88.99.1",
            "192.175.48.1",
        ] {
            assert!(refused(ip), "{ip}");
        }
        for ip in ["2002:5db8:d822::1", "2a00:1450:4001:80b::200e", "8.8.8.8"] {
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
