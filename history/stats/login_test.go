package stats

import (
	"strings"
	"testing"
)

// fixtureLogins are the login facts of the fixture's latest rounds (fixture() sets
// them); an entry without one has a round stored before login facts were recorded.
// Entries 33 (older than 7 days) and 43 (after the cut-off) are outside the Dataset.
var fixtureLogins = map[int64]LoginFacts{
	30: {}, 36: {}, 45: {}, 46: {}, // no 401
	31: {LoginAtToolsCall, ChallengeWithMetadata, MetadataConsistent},     // signed full
	41: {LoginAtToolsCall, ChallengeWithoutMetadata, MetadataConsistent},  // signed full
	42: {LoginAtToolsCall, ChallengeNone, "challenge_without_header"},     // another category
	34: {LoginAtHandshake, ChallengeWithMetadata, MetadataConsistent},     // signed auth_required
	35: {LoginAtToolsList, ChallengeWithMetadata, MetadataScopes},         // signed auth_required
	47: {LoginAtHandshake, ChallengeWithMetadata, MetadataHTTPError},      // signed auth_required
	37: {LoginAtHandshake, ChallengeWithoutMetadata, "no_metadata"},       // unsigned, no_tools
	38: {LoginAtHandshake, ChallengeNone, "challenge_without_header"},     // unsigned, blocked
	39: {LoginAtHandshake, ChallengeUnparseable, "challenge_unparseable"}, // unsigned, no reason
	40: {LoginAtOther, ChallengeWithMetadata, "resource_mismatch"},        // signed full
	33: {LoginAtHandshake, ChallengeWithMetadata, MetadataConsistent},     // too old
	43: {LoginAtHandshake, ChallengeWithMetadata, MetadataConsistent},     // after the cut-off
}

// withFixtureLogins sets fixtureLogins on the servers' latest rounds.
func withFixtureLogins(servers []Server) {
	for i := range servers {
		if f, ok := fixtureLogins[servers[i].ID]; ok && servers[i].Latest != nil {
			servers[i].Latest.Login = &f
		}
	}
}

// expectedLogin is the login table of the fixture, counted by hand from fixtureLogins:
// entry 32 (no facts) is not recorded; 10 entries answered 401.
func expectedLogin() Login {
	return Login{
		NotRecorded: 1, Unauthorized: 10,
		AtHandshakeOrToolsList: p(6, 10), SignedAuthRequired: 3, UnsignedNoTools: 1, Blocked: 1, OtherOutcome: 1,
		OnlyToolsCall: p(3, 10), OnlyToolsCallSignedFull: 2,
		OtherRequest:  p(1, 10),
		WithChallenge: 7, WithMetadataURL: p(5, 7), MetadataConsistent: 2, ScopeContradiction: 1, MetadataHTTPError: 1,
		MetadataOther:      []ReasonCount{{Reason: "resource_mismatch", Count: 1}},
		WithoutMetadataURL: p(2, 7), Unparseable: 1, WithoutChallenge: 2,
	}
}

func TestLoginMarkdown(t *testing.T) {
	md := Compute(fixture(), fixOpts).Markdown()
	for _, want := range []string{
		"\n### Login: where the 401 came\n",
		"1 latest round stored before Probity recorded these facts (migration 0005) is not counted.",
		"| Answered one of our requests with HTTP 401 | 10 |  |\n",
		"| – at the handshake or tools/list | 6 | 60.0% |\n",
		"| –– signed, auth required coverage | 3 |  |\n",
		"| –– another outcome | 1 |  |\n",
		"| – only to the call of a nonexistent tool (tools listed without credentials) | 3 | 30.0% |\n",
		"| – only to another request | 1 | 10.0% |\n",
		"| 401 with a WWW-Authenticate challenge | 7 | 70.0% |\n",
		"| – with an RFC 9728 metadata URL | 5 | 71.4% |\n",
		"| –– another verdict: resource_mismatch | 1 |  |\n",
		"| – without a metadata URL | 2 | 28.6% |\n",
		"| 401 with a WWW-Authenticate header that did not parse | 1 | 10.0% |\n",
		"| 401 without a challenge | 2 | 20.0% |\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
	// No 401 at all: shares of a zero total show as "–", rows that only appear when
	// counted are left out, and a fully recorded dataset has no not-recorded sentence.
	empty := Compute([]Server{{ID: 1, Latest: &Latest{At: fixNow, Category: SignedFull, Login: &LoginFacts{}}}}, fixOpts)
	md = empty.Markdown()
	for _, want := range []string{"| – at the handshake or tools/list | 0 | – |\n", "| 401 without a challenge | 0 | – |\n"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown of no 401 lacks %q", want)
		}
	}
	for _, unwanted := range []string{"only to another request", "did not parse", "another outcome", "not counted."} {
		if strings.Contains(md, unwanted) {
			t.Errorf("Markdown of no 401 has %q", unwanted)
		}
	}
}

func TestPathLabel(t *testing.T) {
	code := func(s string) string { return "`" + s + "`" }
	id := func(s string) string { return s }
	if got := PathLabel(PathRow{Method: MethodDiscover, Proposed: "2026-07-28"}, code, id); got != "`server/discover`, proposing 2026-07-28" {
		t.Errorf("PathLabel = %q", got)
	}
	if got := PathLabel(PathRow{}, code, id); got != NotRecordedPath {
		t.Errorf("PathLabel of a path not recorded = %q", got)
	}
}

// TestHandshakePathNotRecorded: a latest round that answered a version but was stored
// before the handshake method was recorded is counted on a path of its own, labelled as
// such, after the known paths, and counts answers only (there is no proposed version to
// compare with); a round stored before login facts is only "not recorded".
func TestHandshakePathNotRecorded(t *testing.T) {
	old := &Latest{At: fixNow, Category: SignedFull, ProtocolVersion: "2025-06-18"}
	cur := &Latest{At: fixNow, Category: SignedFull, ProtocolVersion: "2025-11-25", HandshakeMethod: MethodInitialize,
		ProposedVersion: "2025-11-25", Login: &LoginFacts{}}
	r := Compute([]Server{{ID: 1, Latest: old}, {ID: 2, Latest: cur}}, fixOpts)
	want := []PathRow{
		{Method: MethodInitialize, Proposed: "2025-11-25", Answered: 1, Same: 1},
		{Answered: 1}, // no proposed version to compare 2025-06-18 with
	}
	if len(r.HandshakePaths.Paths) != 2 || r.HandshakePaths.Paths[0] != want[0] || r.HandshakePaths.Paths[1] != want[1] {
		t.Errorf("paths = %+v, want %+v", r.HandshakePaths.Paths, want)
	}
	if r.Login.NotRecorded != 1 || r.Login.Unauthorized != 0 {
		t.Errorf("login = %+v, want 1 not recorded", r.Login)
	}
	if md := r.Markdown(); !strings.Contains(md, "| "+NotRecordedPath+" | 1 | 0 | 0 | 0 | 0 |\n") {
		t.Errorf("Markdown lacks the path not recorded")
	}
}
