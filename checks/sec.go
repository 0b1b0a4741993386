package checks

import (
	"net/url"
	"strings"
)

// checkRedirects relies on Redirects and Reach.FirstStatus. Besides the probe's
// CrossHost and Downgrade flags it compares the hops' From and To URLs itself, so a
// redirect the probe did not flag is still judged. A hop counts as same-host when the
// host names are equal ignoring case, whatever the port. VERIFIED same_host needs every
// hop to stay on the host, be answered over https and end: in order of precedence,
//   - a downgrade from https to http, or a target the egress guard refuses, is FAILED
//     (Probity refused to follow; a client that follows leaks to it);
//   - a hop back to a URL of its own chain (Loop) is FAILED redirect_loop: following it
//     never ends, determinately;
//   - a hop to another host is OBSERVED_RISK cross_host;
//   - a redirect answered over plain http (its From is http://) is OBSERVED_RISK
//     plain_http_hop: anyone on the path can rewrite its Location, so "same host" is
//     what the network said, not what the server said;
//   - a chain refused at the hop limit (LimitReached) without any of the above is
//     UNVERIFIED hop_limit: where it ends was never seen.
func checkRedirects(in *input) Result {
	o := in.obs
	hops := len(o.Redirects)
	if hops == 0 {
		if o.Reach.FirstStatus <= 0 {
			return unverified("not_reached", nil)
		}
		return verified("no_redirect", nil)
	}
	var downgrade, blocked, cross, loops, plain, limit []Evidence
	for i, r := range o.Redirects {
		from, ferr := url.Parse(r.From)
		to, terr := url.Parse(r.To)
		ev := Evidence{Field: "redirects[" + itoa(i) + "]", Sample: escape(r.To, MaxSampleLen)}
		isDowngrade := r.Downgrade || (ferr == nil && terr == nil &&
			strings.EqualFold(from.Scheme, "https") && strings.EqualFold(to.Scheme, "http"))
		isCross := r.CrossHost || (ferr == nil && terr == nil && to.Host != "" &&
			!strings.EqualFold(from.Hostname(), to.Hostname()))
		switch {
		case isDowngrade:
			ev.Note = "a redirect from https to plain http, refused"
			downgrade = append(downgrade, ev)
		case r.Blocked:
			ev.Note = "a redirect to an address that is not public, refused"
			blocked = append(blocked, ev)
		case r.Loop:
			ev.Note = "a redirect back to a URL of its own chain"
			loops = append(loops, ev)
		case isCross:
			ev.Note = "a redirect to another host"
			cross = append(cross, ev)
		}
		if ferr != nil || !strings.EqualFold(from.Scheme, "https") {
			plain = append(plain, Evidence{Field: ev.Field, Sample: ev.Sample, Note: "a redirect answered over plain http"})
		}
		if r.LimitReached {
			limit = append(limit, Evidence{Field: ev.Field, Sample: ev.Sample, Note: "refused: the chain reached the hop limit"})
		}
	}
	p := params("hops", hops)
	switch {
	case len(downgrade) > 0:
		return failed("downgrade_refused", p, capEvidence(downgrade)...)
	case len(blocked) > 0:
		return failed("blocked_target", p, capEvidence(blocked)...)
	case len(loops) > 0:
		return failed("redirect_loop", p, capEvidence(loops)...)
	case len(cross) > 0:
		return observedRisk("cross_host", p, capEvidence(cross)...)
	case len(plain) > 0:
		return observedRisk("plain_http_hop", params("hops", hops, "plainHops", len(plain)), capEvidence(plain)...)
	case len(limit) > 0:
		return unverified("hop_limit", p, capEvidence(limit)...)
	}
	return verified("same_host", p)
}

// checkAuthMetadata relies on Auth and URL. The probe is expected to set
// MetadataFetched when an HTTP response to the metadata request arrived (MetadataStatus
// holds its status), MetadataError when the metadata could not be fetched or, with
// status 200, did not parse as a JSON object, and MetadataURL to the resource_metadata
// URL of a challenge or else the well-known URL it tried. The order of judgement:
// challenge present and parseable; metadata located, fetched, valid; resource names this
// endpoint (see resourceMatches); authorization servers present and https; every scope the
// Bearer challenge asks for is in scopes_supported when that is listed.
func checkAuthMetadata(in *input) Result {
	o := in.obs
	a := o.Auth
	if !a.Challenged {
		return unverified("no_challenge", nil)
	}
	var ev []Evidence
	if a.MetadataError != "" {
		ev = append(ev, Evidence{Field: "metadata", Sample: escape(a.MetadataError, MaxSampleLen), Note: "the metadata error"})
	}
	if len(a.Challenges) == 0 {
		if a.ChallengeError != "" {
			return observedRisk("challenge_unparseable", nil, Evidence{Field: "WWW-Authenticate", Sample: escape(a.ChallengeError, MaxSampleLen), Note: "the parse error"})
		}
		return observedRisk("challenge_without_header", nil)
	}
	fromChallenge := false
	var scopes []string
	for _, c := range a.Challenges {
		if challengeParam(c, "resource_metadata") != "" {
			fromChallenge = true
		}
		if strings.EqualFold(c.Scheme, "bearer") {
			scopes = append(scopes, strings.Fields(challengeParam(c, "scope"))...)
		}
	}
	if !a.MetadataFetched {
		if a.MetadataURL == "" {
			return observedRisk("no_metadata", nil)
		}
		return unverified("metadata_not_fetched", nil, ev...)
	}
	if a.MetadataStatus != 200 {
		if !fromChallenge && a.MetadataStatus == 404 {
			return observedRisk("no_metadata", nil)
		}
		return failed("metadata_unreachable", params("status", a.MetadataStatus), ev...)
	}
	if a.MetadataError != "" || a.Resource == "" {
		return failed("metadata_invalid", nil, ev...)
	}
	if !resourceMatches(a.Resource, o.URL) {
		return failed("resource_mismatch", nil, Evidence{Field: "resource", Sample: escape(a.Resource, MaxSampleLen), Note: "the metadata's resource"})
	}
	if len(a.AuthorizationServers) == 0 {
		return failed("no_authorization_server", nil)
	}
	var notHTTPS []Evidence
	for i, s := range a.AuthorizationServers {
		u, err := url.Parse(s)
		if err != nil || !strings.EqualFold(u.Scheme, "https") || u.Host == "" {
			notHTTPS = append(notHTTPS, Evidence{Field: "authorization_servers[" + itoa(i) + "]", Sample: escape(s, MaxSampleLen), Note: "not an https URL"})
		}
	}
	if len(notHTTPS) > 0 {
		return failed("authorization_server_not_https", params("servers", len(notHTTPS)), notHTTPS...)
	}
	if len(a.ScopesSupported) > 0 {
		supported := make(map[string]bool, len(a.ScopesSupported))
		for _, s := range a.ScopesSupported {
			supported[s] = true
		}
		var missing []Evidence
		seen := map[string]bool{}
		for _, s := range scopes {
			if !supported[s] && !seen[s] {
				seen[s] = true
				missing = append(missing, Evidence{Field: "scope", Sample: escape(s, MaxSampleLen), Note: "asked for by the challenge, not in scopes_supported"})
			}
		}
		if len(missing) > 0 {
			return failed("scope_contradiction", params("scopes", len(missing)), missing...)
		}
	}
	return verified("metadata_consistent", params("authorizationServers", len(a.AuthorizationServers)))
}

// challengeParam returns a challenge parameter, its name compared without case.
func challengeParam(c Challenge, name string) string {
	if v, ok := c.Params[name]; ok {
		return v
	}
	for k, v := range c.Params {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// resourceMatches reports whether the metadata's resource identifies this endpoint: the
// same origin (scheme, host and port) and a path equal to the endpoint's or a prefix of
// it at a segment boundary (https://host and https://host/mcp both identify
// https://host/mcp). RFC 9728 §3.3 asks for the exact request URL when the metadata came
// through a challenge; the MCP authorization spec accepts the origin as the server's
// canonical URI and draft-ietf rfc9728bis relaxes §3.3 to this same-origin path-prefix
// rule, so only a resource that names something else is a determinate mismatch. URLs are
// compared after lowercasing scheme and host, dropping the default port and a trailing
// slash.
func resourceMatches(resource, endpoint string) bool {
	r, e := parseResource(resource), parseResource(endpoint)
	if r == nil || e == nil || r.origin != e.origin {
		return false
	}
	if r.path == e.path && r.query == e.query {
		return true
	}
	return r.query == "" && (r.path == "" || strings.HasPrefix(e.path, r.path+"/"))
}

type resourceID struct{ origin, path, query string }

func parseResource(s string) *resourceID {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" || u.Fragment != "" || u.User != nil {
		return nil
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return &resourceID{origin: scheme + "://" + host, path: strings.TrimSuffix(u.EscapedPath(), "/"), query: u.RawQuery}
}

func itoa(i int) string { return formatParam(i) }
