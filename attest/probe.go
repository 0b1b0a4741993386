package attest

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The probe schema's bounds on values a server reports or a round measures.
const (
	// MaxShortText is the schema's bound on serverInfo strings, in characters.
	MaxShortText = 256
	// MaxMillis is the schema's bound on timings.
	MaxMillis = 600000
)

// NewProbeStatement builds the statement of a signed round of a remote endpoint from its
// predicate, by the rules of this package's doc ("Statement and predicate"): the subject
// name is target.url; its sha256 digest is the surface fingerprint's hex for coverage
// full, AuthRequiredDigest of the URL for auth_required. Check it (Check) before signing.
func NewProbeStatement(p *ProbePredicate) (*Statement, error) {
	if p == nil {
		return nil, fmt.Errorf("attest: probe statement: no predicate")
	}
	if p.Target.Kind != "remote" {
		return nil, fmt.Errorf("attest: probe statement: target kind %q; rounds are of remote endpoints", p.Target.Kind)
	}
	var digest string
	switch p.Coverage {
	case CoverageFull:
		if p.Fingerprints == nil {
			return nil, fmt.Errorf("attest: probe statement: no fingerprints for a full round")
		}
		digest = strings.TrimPrefix(p.Fingerprints.Surface, "sha256:")
	case CoverageAuthRequired:
		digest = AuthRequiredDigest(p.Target.URL)
	default:
		return nil, fmt.Errorf("attest: probe statement: coverage %q is not signed", p.Coverage)
	}
	return &Statement{
		Type:          StatementType,
		Subject:       []Subject{{Name: p.Target.URL, Digest: DigestSet{"sha256": digest}}},
		PredicateType: ProbePredicateType,
		Predicate:     p,
	}, nil
}

// NewTimings returns phase durations clamped to the schema's 0–MaxMillis.
func NewTimings(handshakeMs, toolsListMs, totalMs int64) Timings {
	return Timings{HandshakeMs: clampMillis(handshakeMs), ToolsListMs: clampMillis(toolsListMs), TotalMs: clampMillis(totalMs)}
}

func clampMillis(ms int64) int64 { return max(0, min(ms, MaxMillis)) }

// NewServerInfo makes the name and version a server reported fit the schema's shortText:
// valid UTF-8 (invalid bytes replaced), no control characters, NFC (as it will be
// signed), at most MaxShortText characters. It returns nil when both are empty.
func NewServerInfo(name, version string) *ServerInfo {
	name, version = shortText(name), shortText(version)
	if name == "" && version == "" {
		return nil
	}
	return &ServerInfo{Name: name, Version: version}
}

func shortText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
	full := []rune(norm.NFC.String(s))
	if len(full) <= MaxShortText {
		return string(full)
	}
	// A cut can leave a prefix whose NFC form is longer; cut shorter until it fits.
	for k := MaxShortText; k > 0; k-- {
		if out := norm.NFC.String(string(full[:k])); utf8.RuneCountInString(out) <= MaxShortText {
			return out
		}
	}
	return ""
}
