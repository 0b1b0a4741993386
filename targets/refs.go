package targets

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode"

	"github.com/probity-dev/probity/locator"
)

// ref is a parsed reference: what a Target is made of besides where it was read.
type ref struct {
	kind, locator, name string
}

// parseRef parses one reference of a text list (already trimmed, not empty).
func parseRef(s string) (ref, error) {
	switch {
	case hasPrefixFold(s, "npm:"):
		return npmRef(s[len("npm:"):])
	case hasPrefixFold(s, "pypi:"):
		return pypiRef(s[len("pypi:"):])
	case hasPrefixFold(s, "pip:"):
		return pypiRef(s[len("pip:"):])
	case hasPrefixFold(s, "github:"):
		return githubRef(strings.TrimSuffix(s[len("github:"):], "/"))
	case hasPrefixFold(s, "pkg:"):
		return purlRef(s[len("pkg:"):])
	case hasPrefixFold(s, "https://"), hasPrefixFold(s, "http://"):
		return urlRef(s)
	}
	if i := strings.Index(s, "://"); i > 0 && i <= 16 {
		return ref{}, fmt.Errorf("%w: scheme %q is not http or https", errBadURL, s[:i])
	}
	return ref{}, errNotReference
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// purlRef parses a package URL after "pkg:": pkg:npm/…, pkg:pypi/…, pkg:github/o/r.
func purlRef(s string) (ref, error) {
	s = strings.TrimLeft(s, "/")
	if strings.ContainsAny(s, "?#") {
		return ref{}, errors.New("package URL qualifiers (?…) and subpaths (#…) are not supported")
	}
	typ, rest, ok := strings.Cut(s, "/")
	if !ok {
		return ref{}, errors.New("not a package URL: want pkg:TYPE/NAME")
	}
	// Unescape each path segment: pkg:npm/%40scope/name is @scope/name.
	segs := strings.Split(rest, "/")
	for i, seg := range segs {
		u, err := url.PathUnescape(seg)
		if err != nil {
			return ref{}, fmt.Errorf("%w: bad percent-encoding in package URL", errBadName)
		}
		segs[i] = u
	}
	name := strings.Join(segs, "/")
	switch strings.ToLower(typ) {
	case "npm":
		return npmRef(name)
	case "pypi":
		// A purl puts the version after '@'; npmRef and pypiRef take their own syntax.
		if n, v, ok := strings.Cut(name, "@"); ok {
			if v == "" {
				return ref{}, fmt.Errorf("%w: empty version after '@'", errBadName)
			}
			name = n
		}
		return pypiRef(name)
	case "github":
		if n, v, ok := strings.Cut(name, "@"); ok {
			if v == "" {
				return ref{}, fmt.Errorf("%w: empty version after '@'", errBadRepo)
			}
			name = n
		}
		return githubRef(name)
	}
	return ref{}, fmt.Errorf("package URL type %q is not supported; use pkg:npm, pkg:pypi or pkg:github", clip(typ, 20))
}

// npmMaxName is npm's limit on the length of a package name.
const npmMaxName = 214

// npmRef parses an npm package name, @scope/name or name, with an optional @version,
// which is dropped.
func npmRef(s string) (ref, error) {
	name, err := npmName(s)
	if err != nil {
		return ref{}, err
	}
	return ref{kind: kindNPM, locator: npmLocator(name), name: name}, nil
}

// npmName validates an npm package name by npm's rules for new packages
// (validate-npm-package-name) and returns it without a version.
func npmName(s string) (string, error) {
	// The version starts at the first '@' after the name's own leading '@'.
	if i := strings.IndexByte(s[min(len(s), 1):], '@'); i >= 0 {
		if s[i+2:] == "" {
			return "", fmt.Errorf("%w: empty version after '@'", errBadName)
		}
		s = s[:i+1]
	}
	if s == "" {
		return "", fmt.Errorf("%w: empty npm package name", errBadName)
	}
	if len(s) > npmMaxName {
		return "", fmt.Errorf("%w: an npm package name has at most %d characters", errBadName, npmMaxName)
	}
	if s[0] == '.' || s[0] == '_' {
		return "", fmt.Errorf("%w: an npm package name cannot start with '.' or '_'", errBadName)
	}
	parts := []string{s}
	if s[0] == '@' {
		scope, pkg, ok := strings.Cut(s[1:], "/")
		if !ok || scope == "" || pkg == "" {
			return "", fmt.Errorf("%w: a scoped npm package name is @SCOPE/NAME", errBadName)
		}
		parts = []string{scope, pkg}
	}
	for _, part := range parts {
		if part == "." || part == ".." {
			return "", fmt.Errorf("%w: %q is not an npm package name", errBadName, s)
		}
		for i := 0; i < len(part); i++ {
			switch c := part[i]; {
			case 'A' <= c && c <= 'Z':
				return "", fmt.Errorf("%w: npm package names are lower case", errBadName)
			case c == '/':
				return "", fmt.Errorf("%w: an npm package name has one '/', after its @scope", errBadName)
			case !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_'):
				return "", fmt.Errorf("%w: npm package names cannot hold %s", errBadName, quoteByte(c))
			}
		}
	}
	if s == "node_modules" || s == "favicon.ico" {
		return "", fmt.Errorf("%w: %q is a reserved npm name", errBadName, s)
	}
	return s, nil
}

func npmLocator(name string) string {
	if scoped, ok := strings.CutPrefix(name, "@"); ok {
		return "pkg:npm/%40" + scoped
	}
	return "pkg:npm/" + name
}

// pypiMaxName bounds a PyPI project name. PEP 508 sets no limit; this one keeps
// locators and slugs sane and is far above any real name.
const pypiMaxName = 214

// pypiRef parses a PyPI project name with an optional ==version, which is dropped.
func pypiRef(s string) (ref, error) {
	if n, v, ok := strings.Cut(s, "=="); ok {
		if v == "" {
			return ref{}, fmt.Errorf("%w: empty version after '=='", errBadName)
		}
		s = n
	}
	name, err := pypiName(s)
	if err != nil {
		return ref{}, err
	}
	return ref{kind: kindPyPI, locator: "pkg:pypi/" + locator.PEP503(name), name: name}, nil
}

// pypiName validates a PEP 508 project name:
// ^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$, case-insensitive.
func pypiName(s string) (string, error) {
	if s == "" {
		return "", fmt.Errorf("%w: empty PyPI project name", errBadName)
	}
	if len(s) > pypiMaxName {
		return "", fmt.Errorf("%w: a PyPI project name this long (over %d characters) is not accepted", errBadName, pypiMaxName)
	}
	alnum := func(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' }
	for i := 0; i < len(s); i++ {
		c := s[i]
		if alnum(c) || (c == '-' || c == '.' || c == '_') && i > 0 && i < len(s)-1 {
			continue
		}
		if strings.ContainsAny(s, "<>=!~[];@ ") {
			return "", fmt.Errorf("%w: a PyPI reference is NAME or NAME==VERSION", errBadName)
		}
		return "", fmt.Errorf("%w: a PyPI project name (PEP 508) has letters, digits and inner '-', '_' or '.', not %s", errBadName, quoteByte(c))
	}
	return s, nil
}

// githubReserved are first path segments of github.com that are not owners.
var githubReserved = map[string]bool{
	"about": true, "apps": true, "collections": true, "enterprise": true, "explore": true,
	"features": true, "login": true, "marketplace": true, "new": true, "notifications": true,
	"orgs": true, "organizations": true, "pricing": true, "search": true, "settings": true,
	"sponsors": true, "topics": true, "trending": true,
}

// githubRef parses OWNER/REPO, REPO with an optional .git suffix.
func githubRef(s string) (ref, error) {
	owner, repo, ok := strings.Cut(s, "/")
	if !ok || owner == "" || repo == "" {
		return ref{}, fmt.Errorf("%w: want OWNER/REPO", errBadRepo)
	}
	if strings.Contains(repo, "/") {
		return ref{}, fmt.Errorf("%w: want OWNER/REPO, without more path", errBadRepo)
	}
	return githubRepo(owner, repo)
}

// githubRepo validates an owner and repository name. GitHub owners have letters, digits
// and hyphens (at most 39, no leading hyphen); repositories letters, digits, '-', '_'
// and '.' (at most 100). Both are case-insensitive, so the locator is lower case.
func githubRepo(owner, repo string) (ref, error) {
	if len(repo) > len(".git") && strings.EqualFold(repo[len(repo)-4:], ".git") {
		repo = repo[:len(repo)-4]
	}
	if len(owner) > 39 || owner[0] == '-' || githubReserved[strings.ToLower(owner)] {
		return ref{}, fmt.Errorf("%w: %q is not a GitHub owner", errBadRepo, clip(owner, 40))
	}
	for i := 0; i < len(owner); i++ {
		if c := owner[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
			return ref{}, fmt.Errorf("%w: a GitHub owner has letters, digits and '-', not %s", errBadRepo, quoteByte(c))
		}
	}
	if repo == "" || len(repo) > 100 || repo == "." || repo == ".." {
		return ref{}, fmt.Errorf("%w: %q is not a GitHub repository name", errBadRepo, clip(repo, 40))
	}
	for i := 0; i < len(repo); i++ {
		if c := repo[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return ref{}, fmt.Errorf("%w: a GitHub repository name has letters, digits, '-', '_' and '.', not %s", errBadRepo, quoteByte(c))
		}
	}
	return ref{
		kind:    kindGitHub,
		locator: "https://github.com/" + strings.ToLower(owner) + "/" + strings.ToLower(repo),
		name:    owner + "/" + repo,
	}, nil
}

// urlRef parses an http(s) URL: a GitHub repository, an npm or PyPI package page, or a
// remote endpoint.
func urlRef(s string) (ref, error) {
	u, err := parseURL(s)
	if err != nil {
		return ref{}, err
	}
	switch strings.TrimSuffix(strings.ToLower(u.Hostname()), ".") {
	case "github.com", "www.github.com":
		return githubURL(u)
	case "npmjs.com", "www.npmjs.com":
		return npmURL(u)
	case "pypi.org", "www.pypi.org":
		return pypiURL(u)
	}
	return remoteURL(u, s)
}

// parseURL parses an absolute http(s) URL and refuses one with user information.
func parseURL(s string) (*url.URL, error) {
	if strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return nil, fmt.Errorf("%w: a URL holds no white space or control characters", errBadURL)
	}
	u, err := url.Parse(s)
	if err != nil {
		// url.Error repeats the whole URL, which may hold a credential; keep its reason.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if strings.ContainsAny(s, "{}") {
			return nil, errTemplated
		}
		return nil, fmt.Errorf("%w: %v", errBadURL, err)
	}
	if u.Scheme = strings.ToLower(u.Scheme); u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%w: scheme %q is not http or https", errBadURL, clip(u.Scheme, 16))
	}
	if u.User != nil {
		return nil, fmt.Errorf("%w in its user information (user@ or user:password@); Probity never sends credentials", errCredential)
	}
	if u.Opaque != "" || u.Host == "" || u.Hostname() == "" {
		return nil, fmt.Errorf("%w: no host", errBadURL)
	}
	return u, nil
}

// pathSegments returns the non-empty segments of u's path.
func pathSegments(u *url.URL) []string {
	return strings.FieldsFunc(u.Path, func(r rune) bool { return r == '/' })
}

// githubURL reads https://github.com/OWNER/REPO[.git][/…]; query and fragment (#readme)
// are ignored.
func githubURL(u *url.URL) (ref, error) {
	segs := pathSegments(u)
	if len(segs) < 2 {
		return ref{}, fmt.Errorf("%w: a GitHub URL names a repository: https://github.com/OWNER/REPO", errBadRepo)
	}
	return githubRepo(segs[0], segs[1])
}

// npmURL reads https://www.npmjs.com/package/NAME or …/package/@SCOPE/NAME, optionally
// followed by /v/VERSION.
func npmURL(u *url.URL) (ref, error) {
	bad := fmt.Errorf("%w: an npm package page is https://www.npmjs.com/package/NAME", errBadName)
	segs := pathSegments(u)
	if len(segs) < 2 || segs[0] != "package" {
		return ref{}, bad
	}
	name, rest := segs[1], segs[2:]
	if strings.HasPrefix(name, "@") {
		if len(rest) == 0 {
			return ref{}, bad
		}
		name, rest = name+"/"+rest[0], rest[1:]
	}
	if len(rest) != 0 && (len(rest) != 2 || rest[0] != "v") {
		return ref{}, bad
	}
	if strings.Contains(name[1:], "@") {
		return ref{}, bad
	}
	return npmRef(name)
}

// pypiURL reads https://pypi.org/project/NAME/, optionally followed by VERSION/.
func pypiURL(u *url.URL) (ref, error) {
	segs := pathSegments(u)
	if len(segs) < 2 || len(segs) > 3 || segs[0] != "project" {
		return ref{}, fmt.Errorf("%w: a PyPI project page is https://pypi.org/project/NAME/", errBadName)
	}
	return pypiRef(segs[1])
}

// remoteURL reads the URL of a remote endpoint; raw is how it was written.
func remoteURL(u *url.URL, raw string) (ref, error) {
	switch {
	case strings.ContainsAny(raw, "{}"):
		return ref{}, errTemplated
	case strings.Contains(raw, "#"):
		return ref{}, errFragment
	}
	if name := credentialParam(u.RawQuery); name != "" {
		return ref{}, fmt.Errorf("%w in its query (parameter %q); Probity never sends credentials", errCredential, clip(name, 40))
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return ref{}, fmt.Errorf("%w: port %q is out of range", errBadURL, clip(port, 10))
		}
	}
	host, err := asciiHost(u.Hostname())
	if err != nil {
		return ref{}, fmt.Errorf("%w: %v", errBadURL, err)
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port := u.Port(); port != "" {
		host += ":" + port
	}
	u.Host = host
	loc, err := locator.NormalizeURL(u.String())
	if err != nil {
		return ref{}, fmt.Errorf("%w: %v", errBadURL, err)
	}
	n, err := url.Parse(loc)
	if err != nil {
		return ref{}, fmt.Errorf("%w: %v", errBadURL, err)
	}
	return ref{kind: kindRemote, locator: loc, name: n.Host + strings.TrimSuffix(n.EscapedPath(), "/")}, nil
}

// credentialParam returns the name of the first query parameter whose name says it
// holds a credential, or "".
func credentialParam(rawQuery string) string {
	for rawQuery != "" {
		var param string
		param, rawQuery, _ = strings.Cut(rawQuery, "&")
		for _, p := range strings.Split(param, ";") {
			name, _, _ := strings.Cut(p, "=")
			if n, err := url.QueryUnescape(name); err == nil {
				name = n
			}
			if isCredentialName(name) {
				return name
			}
		}
	}
	return ""
}

// credentialWords are words of a parameter name that mark a credential.
var credentialWords = map[string]bool{
	"key": true, "apikey": true, "token": true, "secret": true, "password": true,
	"passwd": true, "pwd": true, "auth": true, "authorization": true, "credential": true,
	"credentials": true, "sig": true, "signature": true, "jwt": true, "bearer": true,
}

// credentialSuffixes end words that mark a credential: accesstoken, clientsecret.
var credentialSuffixes = []string{"token", "secret", "password", "apikey", "accesskey", "secretkey", "privatekey"}

// isCredentialName reports whether a query parameter name looks like a credential. The
// name is split into words at non-alphanumeric characters and at lower-to-upper case
// changes (api_key, X-Api-Key, apiKey → key); a word matches when it is one of
// credentialWords or ends with one of credentialSuffixes.
func isCredentialName(name string) bool {
	var words []string
	start := -1
	flush := func(end int) {
		if start >= 0 {
			words = append(words, strings.ToLower(name[start:end]))
			start = -1
		}
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		lower, upper, digit := 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9'
		switch {
		case !lower && !upper && !digit:
			flush(i)
		case upper && i > 0 && 'a' <= name[i-1] && name[i-1] <= 'z':
			flush(i)
			start = i
		case start < 0:
			start = i
		}
	}
	flush(len(name))
	for _, w := range words {
		if credentialWords[w] {
			return true
		}
		for _, suf := range credentialSuffixes {
			if strings.HasSuffix(w, suf) {
				return true
			}
		}
	}
	return false
}

// redact replaces, anywhere in s, the user information of URLs and the values of query
// parameters named like credentials with REDACTED, so that a LineError never repeats a
// credential.
func redact(s string) string {
	stop := func(c byte) bool {
		return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '"' || c == '\'' || c == '<' || c == '>' || c == '\\'
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		b.WriteByte(c)
		switch {
		case c == '/' && i >= 2 && s[i-2:i+1] == "://":
			// User information ends at the last '@' of the authority.
			end := i + 1
			for end < len(s) && !stop(s[end]) && !strings.ContainsRune("/?#", rune(s[end])) {
				end++
			}
			if at := strings.LastIndexByte(s[i+1:end], '@'); at >= 0 {
				b.WriteString("REDACTED")
				i += at // the loop writes the '@' next
			}
		case c == '?' || c == '&' || c == ';':
			end := i + 1
			for end < len(s) && !stop(s[end]) && !strings.ContainsRune("=&;#?/", rune(s[end])) {
				end++
			}
			if end == len(s) || s[end] != '=' {
				continue
			}
			name := s[i+1 : end]
			if n, err := url.QueryUnescape(name); err == nil {
				name = n
			}
			if !isCredentialName(name) {
				continue
			}
			b.WriteString(s[i+1 : end+1])
			b.WriteString("REDACTED")
			i = end + 1
			for i < len(s) && !stop(s[i]) && !strings.ContainsRune("&;#", rune(s[i])) {
				i++
			}
			i-- // the loop writes s[i+1] next
		}
	}
	return b.String()
}

// clip cuts s to n bytes for an error message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// quoteByte names a byte for an error message.
func quoteByte(c byte) string {
	if c < 0x80 {
		return strconv.QuoteRune(rune(c))
	}
	return "non-ASCII characters"
}
