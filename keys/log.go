package keys

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"unicode"

	"golang.org/x/mod/sumdb/note"
)

// LogOrigin returns the origin of the transparency log of issuer: the issuer URL without
// its scheme, query and fragment, keeping host[:port] and path, with "/log" appended
// ("https://probity.dev" -> "probity.dev/log", "https://example.com:8443/probity/" ->
// "example.com:8443/probity/log"); the host is lower-cased. translog.OriginFor applies the
// same rule; the log's signer (signing.LoadLogSigner) carries the origin the key document
// lists, which is the one to use.
func LogOrigin(issuer string) (string, error) {
	rest := issuer
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	u, err := url.Parse("//" + rest)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("issuer %q does not give a log origin (want a URL with a host, e.g. https://probity.dev)", issuer)
	}
	origin := strings.TrimRight(strings.ToLower(u.Host)+u.EscapedPath(), "/") + "/log"
	if checkOrigin(origin) != "" {
		return "", fmt.Errorf("issuer %q does not give a log origin (want a URL with a host, e.g. https://probity.dev)", issuer)
	}
	return origin, nil
}

// checkOrigin returns what is wrong with a log origin, or "": it is a C2SP signed-note
// key name (no white space, no "+"), printable ASCII, 1 to MaxOriginLen bytes.
func checkOrigin(s string) string {
	switch {
	case s == "":
		return "is empty"
	case len(s) > MaxOriginLen:
		return fmt.Sprintf("is %d bytes long; at most %d are allowed", len(s), MaxOriginLen)
	case strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r >= 0x7f || unicode.IsSpace(r) }):
		return "must be printable ASCII without spaces"
	case strings.Contains(s, "+"):
		return `must not contain "+"`
	}
	return ""
}

// Verifier returns the signed-note verifier of the log's checkpoints.
func (l *Log) Verifier() (note.Verifier, error) {
	if err := l.validate(); err != nil {
		return nil, err
	}
	return note.NewVerifier(l.Key)
}

// validate checks the log member: a valid origin, and a key that is a C2SP signed-note
// Ed25519 verifier key named exactly origin, in its one canonical spelling.
func (l *Log) validate() error {
	if msg := checkOrigin(l.Origin); msg != "" {
		return docErr("log.origin", "%s", msg)
	}
	v, err := note.NewVerifier(l.Key)
	if err != nil {
		return docErr("log.key", "is not a signed-note verifier key: %v", err)
	}
	if v.Name() != l.Origin {
		return docErr("log.key", "is named %q, not the log's origin %q", clipName(v.Name()), l.Origin)
	}
	// name+hash+base64: the hash is eight lower-case hex digits, the key 0x01 (Ed25519)
	// and 32 bytes in canonical standard base64.
	parts := strings.SplitN(l.Key, "+", 3)
	key, err := base64.StdEncoding.Strict().DecodeString(parts[2])
	switch {
	case err != nil || base64.StdEncoding.EncodeToString(key) != parts[2]:
		return docErr("log.key", "key is not canonical standard base64")
	case len(key) != 33 || key[0] != 0x01:
		return docErr("log.key", "is not an Ed25519 key")
	case strings.ToLower(parts[1]) != parts[1]:
		return docErr("log.key", "key hash is not lower-case hex")
	}
	return nil
}

func clipName(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// decodeLog decodes the log member: null, or an object with exactly origin and key.
func decodeLog(data json.RawMessage) (*Log, error) {
	if jsonKind(data) == "null" {
		return nil, nil
	}
	members, err := decodeObject(data, []string{"origin", "key"})
	if err != nil {
		return nil, docErr("log", "must be null or an object with origin and key: %v", err)
	}
	l := new(Log)
	if err := decodeString(members["origin"], &l.Origin); err != nil {
		return nil, docErr("log.origin", "%v", err)
	}
	if err := decodeString(members["key"], &l.Key); err != nil {
		return nil, docErr("log.key", "%v", err)
	}
	return l, nil
}
