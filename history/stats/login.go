package stats

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// LoginFacts is what a round saw of a login challenge (HTTP 401), as the store records
// it per round.
type LoginFacts struct {
	// Unauthorized is where the probe was first answered 401: LoginAtHandshake,
	// LoginAtToolsList, LoginAtToolsCall, LoginAtOther, or "" for no 401.
	Unauthorized string `json:"unauthorized,omitempty"`
	// Challenge is what the 401s' WWW-Authenticate headers held: ChallengeWithMetadata,
	// ChallengeWithoutMetadata, ChallengeUnparseable or ChallengeNone; "" without a 401.
	Challenge string `json:"challenge,omitempty"`
	// Metadata is the auth_metadata check's reason key; "" without a 401.
	Metadata string `json:"metadata,omitempty"`
}

// The places a 401 can come first (LoginFacts.Unauthorized).
const (
	LoginAtHandshake = "handshake"
	LoginAtToolsList = "tools_list"
	LoginAtToolsCall = "tools_call" // only the call of the nonexistent tool
	LoginAtOther     = "other"
)

// What the 401s' challenges held (LoginFacts.Challenge).
const (
	ChallengeWithMetadata    = "with_metadata" // a challenge names an RFC 9728 resource_metadata URL
	ChallengeWithoutMetadata = "without_metadata"
	ChallengeUnparseable     = "unparseable"
	ChallengeNone            = "none" // a 401 without a WWW-Authenticate header
)

// The auth_metadata outcomes the login table names (LoginFacts.Metadata).
const (
	MetadataConsistent = "metadata_consistent"
	MetadataScopes     = "scope_contradiction"
	MetadataHTTPError  = "metadata_unreachable"
)

// ReasonCount is a reason key and how many entries had it.
type ReasonCount struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

// Login is seed 003's login table over the Dataset entries whose latest round records
// login facts: the entries that answered one of Probity's requests with HTTP 401, by
// where the first 401 came, and those 401s' challenges and RFC 9728 metadata.
type Login struct {
	// NotRecorded are Dataset entries whose latest round predates the login facts (stored
	// before migration 0005): counted nowhere else in this table.
	NotRecorded int `json:"notRecorded"`
	// Unauthorized answered at least one request with 401.
	Unauthorized int `json:"unauthorized"`

	// AtHandshakeOrToolsList asked for a login at the handshake or at tools/list (of
	// Unauthorized), by the category of the round.
	AtHandshakeOrToolsList Part `json:"atHandshakeOrToolsList"`
	SignedAuthRequired     int  `json:"signedAuthRequired"`
	UnsignedNoTools        int  `json:"unsignedNoTools"`
	Blocked                int  `json:"blocked"`
	OtherOutcome           int  `json:"otherOutcome"`
	// OnlyToolsCall listed their tools without credentials and answered 401 only to the
	// call of the nonexistent tool (of Unauthorized); OnlyToolsCallSignedFull of them
	// were signed with full coverage.
	OnlyToolsCall           Part `json:"onlyToolsCall"`
	OnlyToolsCallSignedFull int  `json:"onlyToolsCallSignedFull"`
	// OtherRequest answered 401 only to another request (of Unauthorized).
	OtherRequest Part `json:"otherRequest"`

	// WithChallenge are the 401s with a parseable WWW-Authenticate challenge.
	WithChallenge int `json:"withChallenge"`
	// WithMetadataURL point to an RFC 9728 metadata document (of WithChallenge), and the
	// auth_metadata check's verdict on it: consistent with the challenge, scopes that
	// contradict it, an HTTP error, or another outcome (by reason key, most frequent
	// first).
	WithMetadataURL    Part          `json:"withMetadataURL"`
	MetadataConsistent int           `json:"metadataConsistent"`
	ScopeContradiction int           `json:"scopeContradiction"`
	MetadataHTTPError  int           `json:"metadataHTTPError"`
	MetadataOther      []ReasonCount `json:"metadataOther"`
	// WithoutMetadataURL give no metadata URL (of WithChallenge).
	WithoutMetadataURL Part `json:"withoutMetadataURL"`
	// Unparseable had WWW-Authenticate headers that did not parse; WithoutChallenge none.
	Unparseable      int `json:"unparseable"`
	WithoutChallenge int `json:"withoutChallenge"`
}

// loginTally counts the login table over the Dataset entries' latest rounds.
type loginTally struct {
	t     Login
	other map[string]int
}

// add counts one Dataset entry's latest round.
func (lt *loginTally) add(l *Latest) {
	f := l.Login
	if f == nil {
		lt.t.NotRecorded++
		return
	}
	if f.Unauthorized == "" {
		return
	}
	t := &lt.t
	t.Unauthorized++
	switch f.Unauthorized {
	case LoginAtHandshake, LoginAtToolsList:
		t.AtHandshakeOrToolsList.Count++
		switch {
		case l.Category == SignedAuthRequired:
			t.SignedAuthRequired++
		case l.Category == Unsigned && l.UnsignedReason == NoTools:
			t.UnsignedNoTools++
		case l.Category == Unsigned && l.UnsignedReason == Blocked:
			t.Blocked++
		default:
			t.OtherOutcome++
		}
	case LoginAtToolsCall:
		t.OnlyToolsCall.Count++
		if l.Category == SignedFull {
			t.OnlyToolsCallSignedFull++
		}
	default:
		t.OtherRequest.Count++
	}
	switch f.Challenge {
	case ChallengeWithMetadata:
		t.WithChallenge++
		t.WithMetadataURL.Count++
		switch f.Metadata {
		case MetadataConsistent:
			t.MetadataConsistent++
		case MetadataScopes:
			t.ScopeContradiction++
		case MetadataHTTPError:
			t.MetadataHTTPError++
		default:
			if lt.other == nil {
				lt.other = map[string]int{}
			}
			lt.other[f.Metadata]++
		}
	case ChallengeWithoutMetadata:
		t.WithChallenge++
		t.WithoutMetadataURL.Count++
	case ChallengeUnparseable:
		t.Unparseable++
	default:
		t.WithoutChallenge++
	}
}

// report returns the table with its shares.
func (lt *loginTally) report() Login {
	t := lt.t
	for _, p := range []*Part{&t.AtHandshakeOrToolsList, &t.OnlyToolsCall, &t.OtherRequest} {
		*p = part(p.Count, t.Unauthorized)
	}
	t.WithMetadataURL = part(t.WithMetadataURL.Count, t.WithChallenge)
	t.WithoutMetadataURL = part(t.WithoutMetadataURL.Count, t.WithChallenge)
	t.MetadataOther = make([]ReasonCount, 0, len(lt.other))
	for k, n := range lt.other {
		t.MetadataOther = append(t.MetadataOther, ReasonCount{Reason: k, Count: n})
	}
	slices.SortFunc(t.MetadataOther, func(a, b ReasonCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Reason, b.Reason))
	})
	return t
}

// TableRow is one row of a table that Markdown and the web page lay out alike: a label,
// a count and, when Shared, the count's share of Of. A row of Level n > 0 breaks down
// the nearest row above it of a lower level.
type TableRow struct {
	Label  string
	Count  int
	Shared bool
	Of     int // the share's total
	Level  int
}

// Cells formats the row's label, count and share (one decimal, "–" of a zero total; ""
// for a row without a share), a label of level n prefixed with n dashes and a space.
func (r TableRow) Cells() [3]string {
	label := r.Label
	if r.Level > 0 {
		label = strings.Repeat("–", r.Level) + " " + label
	}
	share := ""
	if r.Shared {
		share = Percent(r.Count, r.Of, 1)
	}
	return [3]string{label, Count(r.Count), share}
}

// row returns a row without a share; rowOf one with the share of total.
func row(level int, label string, n int) TableRow {
	return TableRow{Label: label, Count: n, Level: level}
}

func rowOf(level int, label string, n, total int) TableRow {
	return TableRow{Label: label, Count: n, Shared: true, Of: total, Level: level}
}

// The login tables' titles and head, shared by Markdown and the web page.
const (
	LoginWhereTitle      = "Login: where the 401 came"
	LoginChallengesTitle = "Login: challenges and metadata"
)

// LoginHead is the head of both login tables.
var LoginHead = []string{"Latest round", "Entries", "Share"}

// WhereRows are the rows of the first login table: the entries that answered a request
// with 401, by where the first 401 came and then by the round's outcome.
func (t Login) WhereRows() []TableRow {
	rows := []TableRow{
		row(0, "Answered one of our requests with HTTP 401", t.Unauthorized),
		rowOf(1, "at the handshake or tools/list", t.AtHandshakeOrToolsList.Count, t.Unauthorized),
		row(2, "signed, auth required coverage", t.SignedAuthRequired),
		row(2, "not signed: no tool list to fingerprint", t.UnsignedNoTools),
		row(2, "not signed: blocked by the egress guard", t.Blocked),
	}
	if t.OtherOutcome > 0 {
		rows = append(rows, row(2, "another outcome", t.OtherOutcome))
	}
	rows = append(rows,
		rowOf(1, "only to the call of a nonexistent tool (tools listed without credentials)", t.OnlyToolsCall.Count, t.Unauthorized),
		row(2, "signed, full coverage", t.OnlyToolsCallSignedFull))
	if t.OtherRequest.Count > 0 {
		rows = append(rows, rowOf(1, "only to another request", t.OtherRequest.Count, t.Unauthorized))
	}
	return rows
}

// ChallengeRows are the rows of the second login table: the 401s' challenges and the
// auth_metadata check's verdict on the RFC 9728 metadata they point to. The label of
// another verdict holds its reason key, which callers escape for their format.
func (t Login) ChallengeRows() []TableRow {
	rows := []TableRow{
		rowOf(0, "401 with a WWW-Authenticate challenge", t.WithChallenge, t.Unauthorized),
		rowOf(1, "with an RFC 9728 metadata URL", t.WithMetadataURL.Count, t.WithChallenge),
		row(2, "metadata consistent with the challenge", t.MetadataConsistent),
		row(2, "scopes contradict the challenge", t.ScopeContradiction),
		row(2, "metadata answered an HTTP error", t.MetadataHTTPError),
	}
	for _, o := range t.MetadataOther {
		rows = append(rows, row(2, "another verdict: "+o.Reason, o.Count))
	}
	rows = append(rows, rowOf(1, "without a metadata URL", t.WithoutMetadataURL.Count, t.WithChallenge))
	if t.Unparseable > 0 {
		rows = append(rows, rowOf(0, "401 with a WWW-Authenticate header that did not parse", t.Unparseable, t.Unauthorized))
	}
	return append(rows, rowOf(0, "401 without a challenge", t.WithoutChallenge, t.Unauthorized))
}

// LoginNote says which entries the login tables count.
func (t Login) LoginNote() string {
	s := "Entries whose latest round (within 7 days) answered one of Probity's requests with HTTP 401, by where the first 401 came. A share is of the row one level up: of the 401s, or of the challenges."
	if t.NotRecorded > 0 {
		verb := "are"
		if t.NotRecorded == 1 {
			verb = "is"
		}
		s += fmt.Sprintf(" %s stored before Probity recorded these facts (migration 0005) %s not counted.",
			Plural(t.NotRecorded, "latest round", "latest rounds"), verb)
	}
	return s
}

// LoginChallengesNote says what the second login table counts.
const LoginChallengesNote = "The WWW-Authenticate challenges of those 401s, and the auth_metadata check's verdict on the RFC 9728 metadata a challenge points to (fetched once per round)."

// loginMarkdown renders the two login tables.
func (t Login) loginMarkdown(b *strings.Builder) {
	fmt.Fprintf(b, "\n### %s\n\n%s\n\n", LoginWhereTitle, t.LoginNote())
	table := func(rows []TableRow) {
		fmt.Fprintf(b, "| %s |\n|---|---|---|\n", strings.Join(LoginHead, " | "))
		for _, r := range rows {
			c := r.Cells()
			fmt.Fprintf(b, "| %s | %s | %s |\n", cell(c[0]), c[1], c[2])
		}
	}
	table(t.WhereRows())
	fmt.Fprintf(b, "\n### %s\n\n%s\n\n", LoginChallengesTitle, LoginChallengesNote)
	table(t.ChallengeRows())
}
