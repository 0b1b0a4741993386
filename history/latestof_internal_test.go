package history

import (
	"testing"
	"time"

	"github.com/probity-dev/probity/history/stats"
	"github.com/probity-dev/probity/store"
)

// TestLatestOfHandshakeLogin: latestOf carries a round's handshake path and login facts,
// and reads AuthRequired from where the first 401 came when the round records it, from
// the auth_required coverage when it does not (a round stored before migration 0005).
func TestLatestOfHandshakeLogin(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name  string
		r     store.RoundSummary
		login *stats.LoginFacts
		auth  bool
	}{
		{"401 at the handshake, unsigned", store.RoundSummary{UnsignedReason: "no_tools",
			Login: &store.Login{Unauthorized: store.LoginAtHandshake, Challenge: store.ChallengeNone, Metadata: "challenge_without_header"}},
			&stats.LoginFacts{Unauthorized: stats.LoginAtHandshake, Challenge: stats.ChallengeNone, Metadata: "challenge_without_header"}, true},
		{"401 at tools/list", store.RoundSummary{Coverage: "auth_required", Signed: true, HandshakeMethod: "initialize", ProposedVersion: "2025-11-25", ProtocolVersion: "2025-11-25",
			Login: &store.Login{Unauthorized: store.LoginAtToolsList, Challenge: store.ChallengeWithMetadata, Metadata: "metadata_consistent"}},
			&stats.LoginFacts{Unauthorized: stats.LoginAtToolsList, Challenge: stats.ChallengeWithMetadata, Metadata: "metadata_consistent"}, true},
		{"401 only to tools/call", store.RoundSummary{Coverage: "full", Signed: true, HandshakeMethod: "server/discover", ProposedVersion: "2026-07-28", ProtocolVersion: "2026-07-28",
			Login: &store.Login{Unauthorized: store.LoginAtToolsCall, Challenge: store.ChallengeWithMetadata, Metadata: "metadata_consistent"}},
			&stats.LoginFacts{Unauthorized: stats.LoginAtToolsCall, Challenge: stats.ChallengeWithMetadata, Metadata: "metadata_consistent"}, false},
		{"no 401", store.RoundSummary{Coverage: "full", Signed: true, Login: &store.Login{}}, &stats.LoginFacts{}, false},
		{"stored before 0005, auth_required", store.RoundSummary{Coverage: "auth_required", Signed: true}, nil, true},
		{"stored before 0005, full", store.RoundSummary{Coverage: "full", Signed: true, ProtocolVersion: "2025-06-18"}, nil, false},
	} {
		c.r.StartedAt = at
		l := latestOf(&c.r, nil)
		if l.HandshakeMethod != c.r.HandshakeMethod || l.ProposedVersion != c.r.ProposedVersion || l.AuthRequired != c.auth ||
			(l.Login == nil) != (c.login == nil) || (l.Login != nil && *l.Login != *c.login) {
			t.Errorf("%s: latestOf = %+v (login %+v), want method %q, proposed %q, login %+v, auth required %v",
				c.name, l, l.Login, c.r.HandshakeMethod, c.r.ProposedVersion, c.login, c.auth)
		}
	}
}
