// Package locator holds the canonical spellings by which Probity identifies what it
// watches: the URL of a remote MCP endpoint (NormalizeURL) and the name of a PyPI
// project (PEP503). Each rule lives here once; the prober, the target parser and the
// supply-chain sources import it. The package does no I/O and imports nothing outside
// the standard library, so a parser can use it without pulling in an MCP client or the
// egress guard.
package locator

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// maxScheme bounds how much of a refused scheme an error quotes.
const maxScheme = 16

// NormalizeURL returns the canonical spelling of an endpoint URL: scheme and host in
// lower case, default port dropped, an empty path as "/", no fragment. It refuses
// anything but http and https, user information, and a missing host.
func NormalizeURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", fmt.Errorf("invalid URL: %v", err)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "http" && u.Scheme != "https" {
		scheme := u.Scheme
		if len(scheme) > maxScheme {
			scheme = scheme[:maxScheme] + fmt.Sprintf("… (%d bytes)", len(scheme))
		}
		return "", fmt.Errorf("invalid URL: scheme %q is not http or https", scheme)
	}
	if u.User != nil {
		return "", errors.New("invalid URL: user information is not allowed")
	}
	if u.Host == "" {
		return "", errors.New("invalid URL: no host")
	}
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	u.Host = host
	if port != "" {
		u.Host += ":" + port
	}
	if u.Path == "" {
		u.Path = "/"
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String(), nil
}

// PEP503 returns the normalized form of a PyPI project name, the name under which
// PyPI's JSON API, its Simple API and its integrity API know the project: every run of
// '-', '_' and '.' becomes one '-', and the result is lower case. It is the rule of
// PEP 503 and of the packaging specifications' "Name normalization",
//
//	re.sub(r"[-_.]+", "-", name).lower()
//
// applied as written: a leading or trailing run of separators becomes one '-' too, as
// in packaging.utils.canonicalize_name, which PyPI (Warehouse) uses. A valid PEP 508
// name neither starts nor ends with a separator, so for names PyPI accepts this only
// matters when the input is not a name, such as a distribution's file name
// ("Foo_Bar-1.0.tar.gz" is "foo-bar-1-0-tar-gz"). Letters are lowered with
// strings.ToLower, which is Python's str.lower for the ASCII names PEP 508 allows.
func PEP503(name string) string {
	var b strings.Builder
	b.Grow(len(name))
	sep := false
	for i := 0; i < len(name); i++ { // the separators are ASCII: never inside a UTF-8 sequence
		c := name[i]
		if c == '-' || c == '_' || c == '.' {
			if !sep {
				b.WriteByte('-')
			}
			sep = true
			continue
		}
		sep = false
		b.WriteByte(c)
	}
	return strings.ToLower(b.String())
}
