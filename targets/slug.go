package targets

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strings"
)

// maxSlug is the longest slug base; a longer one is cut to slugCut bytes and gets a
// dash and slugHash hex digits of the locator's SHA-256 appended.
const (
	maxSlug  = 80
	slugHash = 8
	slugCut  = maxSlug - 1 - slugHash
)

// Slug returns the slug base for a kind and locator: lower case, [a-z0-9-], at most 80
// characters, never empty, with no leading, trailing or double dashes. It depends on
// nothing but its arguments, so it is stable.
//
//	remote  https://mcp.example.com/v1/mcp          mcp-example-com-v1-mcp
//	        https://www.example.com:8443/mcp        example-com-8443-mcp
//	npm     pkg:npm/%40modelcontextprotocol/server-filesystem
//	                                                npm-modelcontextprotocol-server-filesystem
//	pypi    pkg:pypi/mcp-server-git                 pypi-mcp-server-git
//	github  https://github.com/acme/weather-mcp     gh-acme-weather-mcp
//
// A remote slug is the host without "www.", the port and the path segments; the query
// is left out. Every character other than a letter or digit separates words. A slug
// longer than 80 characters is cut to 71 and gets "-" and 8 hex digits of the SHA-256 of
// the locator appended, so distinct long locators keep distinct slugs; an empty one
// becomes "entry-" and those 8 digits.
func Slug(kind, locator string) string {
	var s string
	switch kind {
	case kindRemote:
		if u, err := url.Parse(locator); err == nil && u.Host != "" {
			s = strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.") + "-" + u.Port() + "-" + u.Path
		} else {
			s = locator
		}
	case kindNPM:
		name := strings.TrimPrefix(locator, "pkg:npm/")
		if n, err := url.PathUnescape(name); err == nil {
			name = n
		}
		s = "npm-" + name
	case kindPyPI:
		s = "pypi-" + strings.TrimPrefix(locator, "pkg:pypi/")
	case kindGitHub:
		s = "gh-" + strings.TrimPrefix(locator, "https://github.com/")
	default:
		s = kind + "-" + locator
	}
	s = slugWords(s)
	switch {
	case s == "":
		return "entry-" + locatorHash(locator)
	case len(s) > maxSlug:
		return strings.TrimRight(s[:slugCut], "-") + "-" + locatorHash(locator)
	}
	return s
}

// slugWords lower-cases ASCII letters, keeps digits and turns every other run of bytes
// into one dash, with none at either end. It stops once the result is long enough to
// be cut, so a huge locator costs no more than a short one.
func slugWords(s string) string {
	b := make([]byte, 0, min(len(s), maxSlug+1))
	dash := false
	for i := 0; i < len(s) && len(b) <= maxSlug; i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		default:
			dash = true
			continue
		}
		if dash && len(b) > 0 {
			b = append(b, '-')
		}
		dash = false
		b = append(b, c)
	}
	return string(b)
}

func locatorHash(locator string) string {
	sum := sha256.Sum256([]byte(locator))
	return hex.EncodeToString(sum[:])[:slugHash]
}
