package stats

import (
	"errors"
	"fmt"
	"time"
)

// Server is one entry's history as the statistics need it.
type Server struct {
	ID int64 `json:"id"`
	// Claimed entries are read more often than every 12 h: excluded from the toolset
	// and drift tables (seed 001/003).
	Claimed bool `json:"claimed"`
	// Paginated is set when a tool list that came in more than one page was ever read:
	// excluded from the toolset and drift tables.
	Paginated bool `json:"paginated"`
	// Reads are the successful reads (a complete tool list), oldest first. Compute
	// sorts a copy when they are not.
	Reads []Read `json:"reads"`
	// Latest is the newest round (any outcome) at or before the cut-off; nil when none.
	Latest *Latest `json:"latest"`
	// Days are the uptime days, oldest first, one per UTC day.
	Days []Day `json:"days"`
	// Changes are when the entry's recorded changes that Series counts were recorded:
	// the visible ones that are not baselines (confirmed changes), in any order.
	Changes []time.Time `json:"changes,omitempty"`
	// Probes are the UTC days with a round at or before the cut-off (AddProbe builds
	// them), for Series.
	Probes []ProbeDay `json:"probes,omitempty"`
}

// Read is one successful read of an entry's tool list.
type Read struct {
	At time.Time `json:"at"`
	// Toolset is the names fingerprint: equal toolsets ⇔ equal sorted name lists.
	Toolset string `json:"toolset"`
	// Names are the sorted tool names (a name may repeat when the server listed it twice).
	Names []string `json:"names"`
	// Surface is the digest the drift tables compare: the seeds' digest over each
	// tool's name, description and input schema (package doc, What drift compares);
	// "" for reads stored before surface digests existed.
	Surface string `json:"surface"`
	// Change describes the difference to the previous read when Surface differs from
	// it; nil for the first read or an unchanged surface.
	Change *Change `json:"change,omitempty"`
}

// Change classifies the difference between a read's surface and the previous read's.
type Change struct {
	ToolsAdded             bool `json:"toolsAdded"`
	ToolsRemoved           bool `json:"toolsRemoved"`
	SchemaChangedNamesSame bool `json:"schemaChangedNamesSame"`
	DescriptionOnly        bool `json:"descriptionOnly"`
	// Breaking: a tool gone, a parameter removed, a parameter's type changed or a
	// parameter newly required.
	Breaking bool `json:"breaking"`
	// Tools are the change's per-tool counts (seed 003's tallies).
	Tools ToolCounts `json:"tools"`
}

// The categories of a round (Latest.Category).
const (
	SignedFull         = "signed_full"
	SignedAuthRequired = "signed_auth_required"
	Unsigned           = "unsigned"
)

// The reasons of an unsigned round (Latest.UnsignedReason).
const (
	NoHandshake = "no_handshake"
	NoTools     = "no_tools"
	Blocked     = "blocked"
)

// The handshake methods (Latest.HandshakeMethod).
const (
	MethodDiscover   = "server/discover"
	MethodInitialize = "initialize"
)

// The statuses of an uptime day (Day.Status).
const (
	Online     = "online"
	Offline    = "offline"
	NotCounted = "not_counted"
)

// Latest is what the statistics need of an entry's newest round.
type Latest struct {
	At time.Time `json:"at"`
	// Category is SignedFull, SignedAuthRequired or Unsigned.
	Category string `json:"category"`
	// UnsignedReason is NoHandshake, NoTools or Blocked for unsigned rounds.
	UnsignedReason string `json:"unsignedReason,omitempty"`
	// ProtocolVersion is the version the server answered with; "" when the handshake
	// did not complete.
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	// HandshakeMethod is MethodDiscover or MethodInitialize.
	HandshakeMethod string `json:"handshakeMethod,omitempty"`
	// ProposedVersion is the version Probity proposed on that path.
	ProposedVersion string `json:"proposedVersion,omitempty"`
	// AuthRequired is set when the handshake or tools/list answered HTTP 401.
	AuthRequired bool `json:"authRequired"`
	// Login is what the round saw of a login challenge; nil for a round stored before
	// it was recorded.
	Login *LoginFacts `json:"login,omitempty"`
}

// Day is one UTC day of an entry's uptime.
type Day struct {
	Day    string `json:"day"`    // YYYY-MM-DD
	Status string `json:"status"` // Online, Offline or NotCounted
}

// DefaultKnownVersions are the protocol versions the version table lists by name.
var DefaultKnownVersions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

// OtherVersion labels the protocol versions outside Options.KnownVersions.
const OtherVersion = "other"

// DefaultMinUptimeDays is the number of counted days an entry needs in the uptime table.
const DefaultMinUptimeDays = 7

// Options are the parameters of Compute. Only Now is required.
type Options struct {
	// Now is the cut-off ("截止"); every window ends here.
	Now time.Time
	// UptimeFrom and UptimeTo are the inclusive UTC days (YYYY-MM-DD) of the uptime
	// window; an empty one defaults to the 29 full days before Now's day.
	UptimeFrom, UptimeTo string
	// MinUptimeDays is the number of counted days an entry needs in the uptime table;
	// 0 means DefaultMinUptimeDays.
	MinUptimeDays int
	// KnownVersions are the protocol versions listed by name; nil means
	// DefaultKnownVersions.
	KnownVersions []string
}

// Validate refuses options that would make the report meaningless: a zero Now, an
// uptime day that is not a YYYY-MM-DD date, an uptime window that ends before it starts,
// a negative MinUptimeDays, or an empty or "other" known version. Compute itself
// accepts any options and never panics; callers that take options from users should
// call Validate first.
func (o Options) Validate() error {
	if o.Now.IsZero() {
		return errors.New("stats: the cut-off (Now) is not set")
	}
	o = o.withDefaults()
	for _, d := range []string{o.UptimeFrom, o.UptimeTo} {
		if !isDate(d) {
			return fmt.Errorf("stats: uptime day %q is not a YYYY-MM-DD date", d)
		}
	}
	if o.UptimeFrom > o.UptimeTo {
		return fmt.Errorf("stats: uptime window %s to %s ends before it starts", o.UptimeFrom, o.UptimeTo)
	}
	if o.MinUptimeDays < 0 {
		return fmt.Errorf("stats: MinUptimeDays %d is negative", o.MinUptimeDays)
	}
	for _, v := range o.KnownVersions {
		if v == "" || v == OtherVersion {
			return fmt.Errorf("stats: known protocol version %q is not a version", v)
		}
	}
	return nil
}

// withDefaults fills in the defaults documented on Options.
func (o Options) withDefaults() Options {
	o.Now = o.Now.UTC()
	day := time.Date(o.Now.Year(), o.Now.Month(), o.Now.Day(), 0, 0, 0, 0, time.UTC)
	if o.UptimeFrom == "" {
		o.UptimeFrom = day.AddDate(0, 0, -29).Format(dateLayout)
	}
	if o.UptimeTo == "" {
		o.UptimeTo = day.AddDate(0, 0, -1).Format(dateLayout)
	}
	if o.MinUptimeDays == 0 {
		o.MinUptimeDays = DefaultMinUptimeDays
	}
	if o.KnownVersions == nil {
		o.KnownVersions = DefaultKnownVersions
	}
	return o
}

const dateLayout = "2006-01-02"

// isDate reports whether s is a valid YYYY-MM-DD date (proleptic Gregorian, year 0000
// to 9999).
func isDate(s string) bool {
	if len(s) != len(dateLayout) || s[4] != '-' || s[7] != '-' {
		return false
	}
	n := func(i, j int) int {
		v := 0
		for ; i < j; i++ {
			if s[i] < '0' || s[i] > '9' {
				return -1
			}
			v = v*10 + int(s[i]-'0')
		}
		return v
	}
	year, month, day := n(0, 4), n(5, 7), n(8, 10)
	if year < 0 || month < 1 || month > 12 || day < 1 {
		return false
	}
	last := [...]int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[month-1]
	if month == 2 && year%4 == 0 && (year%100 != 0 || year%400 == 0) {
		last = 29
	}
	return day <= last
}
