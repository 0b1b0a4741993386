package claims

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/probity-dev/probity/checks/probe/egress"
	"github.com/probity-dev/probity/checks/supply"
)

// maxTXT bounds the TXT records of a name that are read.
const maxTXT = 50

// prove looks for the proof of a token (its hash) by method on the part target, and
// returns what was found where, in one line. A proof not found is a *NotProven.
func (s *Service) prove(ctx context.Context, method, target string, hash []byte) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	switch method {
	case MethodWellKnown:
		return s.proveWellKnown(ctx, target, hash)
	case MethodDNS:
		return s.proveDNS(ctx, target, hash)
	case MethodNPM:
		return s.provePackage(ctx, method, target, hash)
	case MethodPyPI:
		return s.provePackage(ctx, method, target, hash)
	case MethodRepoFile:
		return s.proveRepoFile(ctx, target, hash)
	case MethodGitHubPermission:
		return "", gone("%s", errWithdrawn)
	}
	return "", fmt.Errorf("claims: unknown method %q", method)
}

// get fetches u through the guard, at most MaxBody bytes, and returns the status and
// body. A failure to connect or read is unanswered.
func (s *Service) get(ctx context.Context, u string, header http.Header) (int, []byte, error) {
	pu, err := url.Parse(u)
	if err != nil {
		return 0, nil, notProven("%s is not a URL", clip(u))
	}
	if err := s.guard.CheckURL(pu); err != nil {
		return 0, nil, notProven("Probity may not connect to %s: %v", clip(u), err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, nil, notProven("%s is not a URL", clip(u))
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("User-Agent", supply.DefaultUserAgent)
	resp, err := s.http.Do(req)
	if errors.Is(err, errCrossOrigin) {
		// The origin answered, with a redirect the proof may not follow.
		return 0, nil, notProven("%s redirects to another origin; the proof must be served on the endpoint's own origin", clip(u))
	}
	if errors.Is(err, egress.ErrBlocked) {
		// The name resolved to, or a redirect led to, an address Probity may not reach:
		// an answer, not a failure to answer.
		return 0, nil, notProven("Probity may not connect to %s: %s", clip(u), fetchError(err))
	}
	if err != nil {
		return 0, nil, unanswered("%s did not answer: %s", clip(u), fetchError(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, s.cfg.MaxBody+1))
	if err != nil {
		return 0, nil, unanswered("%s: the answer could not be read: %s", clip(u), fetchError(err))
	}
	if int64(len(body)) > s.cfg.MaxBody {
		return 0, nil, notProven("%s answered more than %d KiB; the proof must be smaller", clip(u), s.cfg.MaxBody>>10)
	}
	if throttledAnswer(resp) {
		return 0, nil, throttled("%s answered HTTP %d and asks Probity to wait", clip(u), resp.StatusCode)
	}
	return resp.StatusCode, body, nil
}

// errCrossOrigin is a redirect to another origin, which no proof follows.
var errCrossOrigin = errors.New("a redirect to another origin")

// maxRedirects bounds the redirects a proof follows.
const maxRedirects = 3

// sameOriginRedirect is the fetches' CheckRedirect: at most maxRedirects hops, each on
// the first request's origin (scheme, host and port; so never from https to http),
// and each allowed by the egress guard. A proof on an origin is the origin's own: a
// redirect elsewhere would let whoever controls the other origin prove this one.
func (s *Service) sameOriginRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	if origin(req.URL) != origin(via[0].URL) {
		return errCrossOrigin
	}
	return s.guard.CheckRedirect(req, via)
}

// origin is a URL's scheme, host and port (the scheme's default port spelled out).
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// throttledAnswer reports whether an answer asks the caller to wait rather than says
// anything about the proof: a 429, any answer with Retry-After, a 401 or 403 with a
// rate limit spent (X-RateLimit-Remaining: 0, as GitHub's API answers then).
func throttledAnswer(resp *http.Response) bool {
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		return true
	case resp.StatusCode >= 300 && resp.Header.Get("Retry-After") != "":
		return true
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return resp.Header.Get("X-RateLimit-Remaining") == "0"
	}
	return false
}

// statusError says what an answer other than 200 means for a proof: a 404 or 410
// says the proof is gone; a 5xx, a 408, a 401 or a 403 is no answer (a server
// failing, or refusing Probity, says nothing about the proof); another status is an
// answer that is not the proof.
func statusError(u string, status int) error {
	switch {
	case status == http.StatusNotFound || status == http.StatusGone:
		return gone("%s answered HTTP %d, not 200 with the token", clip(u), status)
	case status >= 500 || status == http.StatusRequestTimeout || status == http.StatusUnauthorized || status == http.StatusForbidden:
		return unanswered("%s answered HTTP %d", clip(u), status)
	}
	return notProven("%s answered HTTP %d, not 200 with the token", clip(u), status)
}

func (s *Service) proveWellKnown(ctx context.Context, target string, hash []byte) (string, error) {
	t, err := url.Parse(target)
	if err != nil || t.Host == "" {
		return "", notProven("the endpoint %s has no origin", clip(target))
	}
	if t.Scheme != "https" {
		// Over plain http anyone on the path could serve the token: an http endpoint
		// is proven by DNS TXT.
		return "", notProven("the endpoint %s is not https; a file is a proof over https only (use a DNS TXT record)", clip(target))
	}
	u := t.Scheme + "://" + t.Host + WellKnownPath
	status, body, err := s.get(ctx, u, nil)
	if err != nil {
		return "", err
	}
	if status != http.StatusOK {
		return "", statusError(u, status)
	}
	if !holds(string(body), hash) {
		return "", gone("%s answered, but without this token", u)
	}
	return "the token at " + u, nil
}

func (s *Service) proveDNS(ctx context.Context, target string, hash []byte) (string, error) {
	t, err := url.Parse(target)
	if err != nil || !hostName(t.Hostname()) {
		return "", notProven("the endpoint %s has no DNS name", clip(target))
	}
	name := txtName(t.Hostname())
	where := strings.TrimSuffix(name, ".")
	r := net.DefaultResolver
	if s.cfg.DNSServer != "" {
		server := s.cfg.DNSServer
		r = &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, server)
		}}
	}
	txts, err := r.LookupTXT(ctx, name)
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		// NXDOMAIN or no TXT record: the name's servers answered that there is none.
		return "", gone("there is no TXT record at %s", where)
	case err != nil:
		// SERVFAIL, a timeout, a refused query: no answer.
		return "", unanswered("the TXT records of %s could not be read: %s", where, fetchError(err))
	}
	for i, txt := range txts {
		if i == maxTXT {
			break
		}
		if holds(txt, hash) {
			return "the token in a TXT record at " + where, nil
		}
	}
	return "", gone("the TXT records at %s (%d) do not hold this token", where, len(txts))
}

// txtName is the name of the TXT record for a host, fully qualified (a final dot), so
// that the resolver asks exactly this name and never appends a search domain.
func txtName(host string) string {
	return DNSPrefix + strings.ToLower(strings.TrimSuffix(host, ".")) + "."
}

func (s *Service) provePackage(ctx context.Context, method, target string, hash []byte) (string, error) {
	var f supply.PackageFacts
	var name, where string
	switch method {
	case MethodNPM:
		n, ok := npmName(target)
		if !ok {
			return "", notProven("%s is not an npm package", clip(target))
		}
		name, where = n, "the README of "+n
		f = s.npm.Package(ctx, n).Facts
	default:
		n, ok := pypiName(target)
		if !ok {
			return "", notProven("%s is not a PyPI project", clip(target))
		}
		name, where = n, "the description of "+n
		f = s.pypi.Project(ctx, n).Facts
	}
	switch f.Source.Outcome {
	case supply.SourceOK:
	case supply.SourceNoData:
		return "", gone("%s: %s", name, clip(f.Source.Error))
	default:
		return "", unanswered("%s could not be read: %s", name, clip(f.Source.Error))
	}
	if !holds(f.README, hash) {
		return "", gone("%s %s does not hold this token", where, clip(f.Latest))
	}
	return fmt.Sprintf("the token in %s %s", where, clip(f.Latest)), nil
}

func (s *Service) proveRepoFile(ctx context.Context, target string, hash []byte) (string, error) {
	owner, repo, ok := supply.ParseGitHubURL(target)
	if !ok {
		return "", notProven("%s is not a GitHub repository", clip(target))
	}
	// Without ?ref= the contents API reads the default branch. The read goes through
	// the supply client's throttle of GitHub (its quota is the site's).
	u := s.cfg.GitHubAPIURL + "/repos/" + url.PathEscape(owner) + "/" + url.PathEscape(repo) + "/contents/" + RepoFilePath
	status, body, err := s.github.File(ctx, owner, repo, RepoFilePath)
	switch {
	case supply.Throttled(err):
		return "", throttled("GitHub's quota is spent for now; %s was not read", RepoFilePath)
	case err != nil:
		return "", unanswered("GitHub did not answer for %s/%s: %s", owner, repo, fetchError(err))
	}
	where := RepoFilePath + " on the default branch of " + owner + "/" + repo
	if status == http.StatusNotFound {
		return "", gone("there is no %s", where)
	}
	if status != http.StatusOK {
		return "", statusError(u, status)
	}
	if !holds(string(body), hash) {
		return "", gone("%s does not hold this token", where)
	}
	return "the token in " + where, nil
}

// npmName returns the package name of a pkg:npm locator (pkg:npm/%40scope/name).
func npmName(locator string) (string, bool) {
	rest, ok := strings.CutPrefix(locator, "pkg:npm/")
	if !ok || rest == "" {
		return "", false
	}
	name, err := url.PathUnescape(rest)
	if err != nil || name == "" || len(name) > 214 || strings.ContainsAny(name, " ?#\\") {
		return "", false
	}
	return name, true
}

// pypiName returns the project name of a pkg:pypi locator.
func pypiName(locator string) (string, bool) {
	name, ok := strings.CutPrefix(locator, "pkg:pypi/")
	if !ok || name == "" || len(name) > 214 || strings.ContainsAny(name, " /?#\\%") {
		return "", false
	}
	return name, true
}

// hostName reports whether h is a DNS name (not an IP address): labels of letters,
// digits and hyphens, with a dot.
func hostName(h string) bool {
	if _, err := netip.ParseAddr(h); err == nil || len(h) > 253 || !strings.Contains(h, ".") && h != "localhost" {
		return false
	}
	for _, label := range strings.Split(strings.TrimSuffix(h, "."), ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// fetchError names a failure in a few words, without echoing more server text.
func fetchError(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		return "timed out"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	}
	return clip(err.Error())
}

// clip bounds text quoted from elsewhere to 200 bytes of valid UTF-8 on one line.
func clip(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "?"))
	if len(s) <= 200 {
		return s
	}
	n := 200
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
