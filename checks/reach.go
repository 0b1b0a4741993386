package checks

import (
	"net/url"
	"strings"
	"time"
)

// checkReachability relies on Reach.Failure, Reach.FirstStatus, Reach.Detail (evidence
// only) and RetryAfter.
func checkReachability(in *input) Result {
	o := in.obs
	var ev []Evidence
	if o.Reach.Detail != "" {
		ev = []Evidence{{Field: "reach", Sample: escape(o.Reach.Detail, MaxSampleLen), Note: "the probe's diagnostic"}}
	}
	switch o.Reach.Failure {
	case ReachOK:
		if o.Reach.FirstStatus <= 0 {
			return unverified("no_response", nil, ev...)
		}
		return verified("answered", params("status", o.Reach.FirstStatus), ev...)
	case ReachDNS:
		return failed("dns_failure", nil, ev...)
	case ReachConnect:
		return failed("connect_failure", nil, ev...)
	case ReachTimeout:
		return failed("timeout", nil, ev...)
	case ReachTLS:
		return failed("tls_handshake_failed", nil, ev...)
	case ReachHTTP5xx:
		return failed("http_5xx", params("status", o.Reach.FirstStatus), ev...)
	case ReachBlocked:
		return unverified("blocked_by_egress_guard", nil, ev...)
	case ReachRateLimited:
		secs := int64(0)
		if o.RetryAfter > 0 {
			secs = int64((o.RetryAfter + time.Second - 1) / time.Second)
		}
		return unverified("rate_limited", params("retryAfterS", secs), ev...)
	}
	return unverified("unrecognized_failure", nil, ev...)
}

// checkLatency relies on Handshake.Completed(), Tools.Attempted, Tools.Unauthorized and
// Timings.HandshakeMs/ToolsListMs.
func checkLatency(in *input) Result {
	o := in.obs
	if !o.Handshake.Completed() {
		return unverified("not_measured", nil)
	}
	hs := max(o.Timings.HandshakeMs, 0)
	if !listAttempted(o.Tools) || o.Tools.Unauthorized {
		return verified("handshake_only", params("handshakeMs", hs))
	}
	return verified("measured", params("handshakeMs", hs, "toolsListMs", max(o.Timings.ToolsListMs, 0)))
}

// expirySoon is the window in which a valid certificate is an observed risk.
const expirySoon = 14

// checkTLS relies on URL (its scheme), TLS and StartedAt. Expiry is judged against
// StartedAt, before chain and host name, because an expired certificate also fails chain
// verification and "expired" is the more precise reason.
func checkTLS(in *input) Result {
	o := in.obs
	if u, err := url.Parse(o.URL); err == nil && strings.EqualFold(u.Scheme, "http") {
		return failed("plain_http", nil)
	}
	t := o.TLS
	if t == nil {
		return unverified("no_tls_connection", nil)
	}
	var ev []Evidence
	if t.Error != "" {
		ev = []Evidence{{Field: "tls", Sample: escape(t.Error, MaxSampleLen), Note: "the certificate verification error"}}
	}
	known := !t.NotAfter.IsZero() && !o.StartedAt.IsZero()
	if known && !t.NotAfter.After(o.StartedAt) {
		return failed("expired", params("daysAgo", int64(o.StartedAt.Sub(t.NotAfter)/(24*time.Hour))), ev...)
	}
	if !t.ChainVerified {
		return failed("chain_untrusted", nil, ev...)
	}
	if !t.HostnameVerified {
		return failed("hostname_mismatch", nil, ev...)
	}
	if !known {
		return unverified("expiry_unknown", nil, ev...)
	}
	days := int64(t.NotAfter.Sub(o.StartedAt) / (24 * time.Hour))
	if days < expirySoon {
		return observedRisk("expires_soon", params("daysLeft", days), ev...)
	}
	return verified("valid", params("daysLeft", days, "version", tlsVersionToken(t.Version)), ev...)
}

// tlsVersionToken returns the TLS version if it is one of the known spellings
// ("TLS1.0" … "TLS1.3"), else "unknown".
func tlsVersionToken(v string) string {
	switch v {
	case "TLS1.0", "TLS1.1", "TLS1.2", "TLS1.3":
		return v
	}
	return "unknown"
}
