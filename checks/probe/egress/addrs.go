package egress

import "net/netip"

// embed says how a prefix embeds an IPv4 address that must be judged in its place.
type embed uint8

const (
	embedNone   embed = iota
	embedMapped       // ::ffff:a.b.c.d: the last 32 bits, judged with the guard's own loopback setting
	embedNAT64        // 64:ff9b::a.b.c.d: the last 32 bits, loopback never allowed
	embed6to4         // 2002:AABB:CCDD::/48: bits 16..47, loopback never allowed
)

// rule denies one prefix for one reason; for an embedding prefix the reason applies
// only when the embedded IPv4 address is denied.
type rule struct {
	prefix netip.Prefix
	reason string
	embed  embed
}

func deny(prefix, reason string) rule {
	return rule{prefix: netip.MustParsePrefix(prefix), reason: reason}
}

func denyEmbedded(prefix, reason string, e embed) rule {
	return rule{prefix: netip.MustParsePrefix(prefix), reason: reason, embed: e}
}

// deniedV4 is checked in order, first match wins, so specific entries (metadata,
// broadcast) precede the ranges that contain them. Sources: the IANA IPv4
// Special-Purpose Address Registry (RFC 6890) and the IANA IPv4 Multicast Address
// Space Registry, unless noted.
var deniedV4 = []rule{
	// Cloud metadata services, denied before their enclosing ranges for a precise reason.
	deny("169.254.169.254/32", reasonMetadata), // AWS/GCP/Azure/OCI/DigitalOcean instance metadata (in RFC 3927 link-local)
	deny("169.254.170.2/32", reasonMetadata),   // AWS ECS task metadata and credentials endpoint (link-local)
	deny("100.100.100.200/32", reasonMetadata), // Alibaba Cloud metadata (in RFC 6598 shared space)
	deny("168.63.129.16/32", reasonMetadata),   // Azure wireserver / host agent: public space, but a metadata service

	deny("0.0.0.0/8", reasonUnspecified),         // RFC 791 / RFC 1122 3.2.1.3: "this host on this network"; Linux connects 0.0.0.0 to localhost
	deny("10.0.0.0/8", reasonPrivate),            // RFC 1918 private-use
	deny("100.64.0.0/10", reasonCGNAT),           // RFC 6598 shared address space (carrier-grade NAT)
	deny("127.0.0.0/8", reasonLoopback),          // RFC 1122 3.2.1.3 loopback (allowed only with AllowLoopback)
	deny("169.254.0.0/16", reasonLinkLocal),      // RFC 3927 link-local
	deny("172.16.0.0/12", reasonPrivate),         // RFC 1918 private-use
	deny("192.0.0.0/24", reasonReserved),         // RFC 6890 IETF protocol assignments
	deny("192.0.2.0/24", reasonDocumentation),    // RFC 5737 TEST-NET-1
	deny("192.88.99.0/24", reasonReserved),       // RFC 3068 6to4 relay anycast, deprecated by RFC 7526
	deny("192.168.0.0/16", reasonPrivate),        // RFC 1918 private-use
	deny("198.18.0.0/15", reasonBenchmarking),    // RFC 2544 benchmarking
	deny("198.51.100.0/24", reasonDocumentation), // RFC 5737 TEST-NET-2
	deny("203.0.113.0/24", reasonDocumentation),  // RFC 5737 TEST-NET-3
	deny("224.0.0.0/4", reasonMulticast),         // RFC 5771 multicast
	deny("255.255.255.255/32", reasonBroadcast),  // RFC 919 / RFC 8190 limited broadcast
	deny("240.0.0.0/4", reasonReserved),          // RFC 1112 section 4 reserved for future use
}

// deniedV6 is checked in order, first match wins. Sources: the IANA IPv6
// Special-Purpose Address Registry (RFC 6890) and the IANA IPv6 Address Space
// Registry, unless noted.
var deniedV6 = []rule{
	deny("fd00:ec2::254/128", reasonMetadata), // AWS instance metadata over IPv6 (in RFC 4193 unique local)

	deny("::/128", reasonUnspecified),                        // RFC 4291 2.5.2 unspecified
	deny("::1/128", reasonLoopback),                          // RFC 4291 2.5.3 loopback (allowed only with AllowLoopback)
	denyEmbedded("::ffff:0:0/96", reasonMapped, embedMapped), // RFC 4291 2.5.5.2 IPv4-mapped: judged as the IPv4 address
	deny("::/96", reasonCompatible),                          // RFC 4291 2.5.5.1 IPv4-compatible, deprecated
	denyEmbedded("64:ff9b::/96", reasonNAT64, embedNAT64),    // RFC 6052 NAT64 well-known prefix: judged by the embedded IPv4
	deny("64:ff9b:1::/48", reasonReserved),                   // RFC 8215 local-use IPv4/IPv6 translation
	deny("100::/64", reasonReserved),                         // RFC 6666 discard-only
	deny("2001:db8::/32", reasonDocumentation),               // RFC 3849 documentation
	deny("2001::/23", reasonReserved),                        // RFC 2928 IETF protocol assignments, incl. Teredo 2001::/32 (RFC 4380) and ORCHIDv2 2001:20::/28 (RFC 7343)
	denyEmbedded("2002::/16", reason6to4, embed6to4),         // RFC 3056 6to4: judged by the embedded IPv4
	deny("3fff::/20", reasonDocumentation),                   // RFC 9637 documentation
	deny("fc00::/7", reasonPrivate),                          // RFC 4193 unique local
	deny("fe80::/10", reasonLinkLocal),                       // RFC 4291 2.5.6 link-local
	deny("fec0::/10", reasonReserved),                        // RFC 3879 site-local, deprecated
	deny("ff00::/8", reasonMulticast),                        // RFC 4291 2.7 multicast
}

// globalUnicast6 is the only IPv6 space IANA allocates for global unicast (IANA IPv6
// Address Space Registry, RFC 4291 2.4); everything outside it is denied as reserved.
var globalUnicast6 = netip.MustParsePrefix("2000::/3")

// classify returns the reason a is denied, or "" when a is allowed.
func classify(a netip.Addr, allowLoopback bool) string {
	switch {
	case !a.IsValid():
		return reasonInvalidAddr
	case a.Zone() != "":
		// Prefix.Contains never matches a zoned address; refuse before the tables.
		return reasonZone
	case a.Is4():
		return classify4(a, allowLoopback)
	default:
		return classify6(a, allowLoopback)
	}
}

func classify4(a netip.Addr, allowLoopback bool) string {
	for _, r := range deniedV4 {
		if r.prefix.Contains(a) {
			if r.reason == reasonLoopback && allowLoopback {
				return ""
			}
			return r.reason
		}
	}
	if !a.IsGlobalUnicast() {
		return reasonReserved
	}
	return ""
}

func classify6(a netip.Addr, allowLoopback bool) string {
	for _, r := range deniedV6 {
		if !r.prefix.Contains(a) {
			continue
		}
		b := a.As16()
		switch r.embed {
		case embedMapped:
			if classify4(netip.AddrFrom4([4]byte(b[12:16])), allowLoopback) != "" {
				return r.reason
			}
			return ""
		case embedNAT64:
			if classify4(netip.AddrFrom4([4]byte(b[12:16])), false) != "" {
				return r.reason
			}
			return ""
		case embed6to4:
			if classify4(netip.AddrFrom4([4]byte(b[2:6])), false) != "" {
				return r.reason
			}
			return ""
		}
		if r.reason == reasonLoopback && allowLoopback {
			return ""
		}
		return r.reason
	}
	if !globalUnicast6.Contains(a) || !a.IsGlobalUnicast() {
		return reasonReserved
	}
	return ""
}
