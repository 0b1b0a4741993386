package stats

import "time"

// Report holds every table of seeds 001 and 003. It encodes to JSON as it is.
type Report struct {
	// Now is the cut-off the report was computed for (UTC).
	Now time.Time `json:"now"`

	// Seed 001: how often toolsets change.
	Scope            Scope            `json:"scope"`
	Summary          Summary          `json:"summary"`
	FirstDays        []FirstDays      `json:"firstDays"`
	ChangesPerServer ChangesPerServer `json:"changesPerServer"`
	ChangeTypes      ChangeTypes      `json:"changeTypes"`
	ByToolCount      []ToolCountRow   `json:"byToolCount"`
	Intervals        Intervals        `json:"intervals"`
	NamesVsSurface   NamesVsSurface   `json:"namesVsSurface"`
	DailyChanges     DailyChanges     `json:"dailyChanges"`

	// Seed 003: the monthly report.
	Dataset          Dataset          `json:"dataset"`
	Drift            []DriftWindow    `json:"drift"`
	DriftActivity    DriftActivity    `json:"driftActivity"`
	ToolChanges      ToolChanges      `json:"toolChanges"`
	ProtocolVersions ProtocolVersions `json:"protocolVersions"`
	HandshakePaths   HandshakePaths   `json:"handshakePaths"`
	Login            Login            `json:"login"`
	Uptime           Uptime           `json:"uptime"`

	// Series are the charts of the statistics page (series.go).
	Series Series `json:"series"`
}

// Part is a count and its share of the total it is part of (0 when that total is 0).
type Part struct {
	Count int     `json:"count"`
	Share float64 `json:"share"`
}

// Scope is the population of the toolset tables.
type Scope struct {
	WithReads         int `json:"withReads"`         // servers with at least one read
	ExcludedClaimed   int `json:"excludedClaimed"`   // of those, claimed
	ExcludedPaginated int `json:"excludedPaginated"` // of those, paginated and not claimed
	Eligible          int `json:"eligible"`          // WithReads minus the excluded
	ReadTwice         int `json:"readTwice"`         // eligible servers with at least two reads
}

// Summary is the first toolset table.
type Summary struct {
	ReadTwice            int     `json:"readTwice"`
	Changed              Part    `json:"changed"` // servers with at least one change, of ReadTwice
	Changes              int     `json:"changes"`
	NamesAdded           int     `json:"namesAdded"`
	NamesRemoved         int     `json:"namesRemoved"`
	SingleNameChanges    int     `json:"singleNameChanges"`
	MedianNamesPerChange float64 `json:"medianNamesPerChange"`
	EndedMore            int     `json:"endedMore"`  // changed servers, last read has more tools than the first
	EndedFewer           int     `json:"endedFewer"` // … fewer
	EndedSame            int     `json:"endedSame"`  // … as many
	ReturnsToEarlier     int     `json:"returnsToEarlier"`
	MedianObservedDays   float64 `json:"medianObservedDays"` // observation window, servers read twice
	MaxObservedDays      float64 `json:"maxObservedDays"`
}

// FirstDays is one row of "changed within the first N days".
type FirstDays struct {
	Days    int  `json:"days"`
	Servers int  `json:"servers"` // observed at least Days days
	Changed Part `json:"changed"` // of Servers, with a change within the first Days days
}

// ChangesPerServer is the histogram of changes per server read at least twice.
type ChangesPerServer struct {
	Servers     int `json:"servers"`
	Zero        int `json:"zero"`
	One         int `json:"one"`
	Two         int `json:"two"`
	ThreeToFive int `json:"threeToFive"`
	SixToTen    int `json:"sixToTen"`
	OverTen     int `json:"overTen"`
	// Frequent are the servers with three or more changes (of Servers), FrequentChanges
	// their changes (of all changes).
	Frequent        Part `json:"frequent"`
	FrequentChanges Part `json:"frequentChanges"`
	MaxChanges      int  `json:"maxChanges"`
	// ObservedDays is the sum of the observation windows; DaysPerChange is
	// ObservedDays divided by the number of changes (0 without changes).
	ObservedDays  float64 `json:"observedDays"`
	DaysPerChange float64 `json:"daysPerChange"`
}

// ChangeTypes classifies the changes by the names on each side (shares of Changes).
type ChangeTypes struct {
	Changes        int  `json:"changes"`
	OnlyAdded      Part `json:"onlyAdded"`
	OnlyRemoved    Part `json:"onlyRemoved"`
	Both           Part `json:"both"`
	DuplicatesOnly Part `json:"duplicatesOnly"` // no name on only one side: a repeated name came or went
	WithRemoved    Part `json:"withRemoved"`    // OnlyRemoved + Both
}

// ToolCountRow is one row of the table by tool count at the first read, over servers
// observed at least 14 days.
type ToolCountRow struct {
	MinTools int  `json:"minTools"`
	MaxTools int  `json:"maxTools"` // 0: no upper bound
	Servers  int  `json:"servers"`
	Changed  Part `json:"changed"` // changed within the first 14 days, of Servers
}

// Intervals are the times between adjacent changes of servers with two or more changes.
type Intervals struct {
	Servers            int     `json:"servers"`
	Intervals          int     `json:"intervals"`
	MedianHours        float64 `json:"medianHours"`
	LowerQuartileHours float64 `json:"lowerQuartileHours"`
	UpperQuartileHours float64 `json:"upperQuartileHours"`
	Within12h          Part    `json:"within12h"` // intervals of at most 12 h, of Intervals
}

// ServerChanges counts servers and their changes.
type ServerChanges struct {
	Servers int `json:"servers"`
	Changes int `json:"changes"`
}

// NamesVsSurface compares name changes with description and schema changes, over
// adjacent reads that both carry a surface digest.
type NamesVsSurface struct {
	NamesChanged      ServerChanges `json:"namesChanged"`
	NamesNeverChanged ServerChanges `json:"namesNeverChanged"` // names never changed, surface did
	SurfaceOnly       ServerChanges `json:"surfaceOnly"`       // same names, other surface, any server
}

// Dataset is the seed 003 dataset table.
type Dataset struct {
	Endpoints          int  `json:"endpoints"`       // every entry given
	WithRecentRound    int  `json:"withRecentRound"` // Latest within 7 days before Now
	SignedFull         Part `json:"signedFull"`
	SignedAuthRequired Part `json:"signedAuthRequired"`
	Unsigned           Part `json:"unsigned"`
	OtherCategory      Part `json:"otherCategory"`
	// The unsigned rounds by reason.
	NoHandshake int `json:"noHandshake"`
	NoTools     int `json:"noTools"`
	Blocked     int `json:"blocked"`
	OtherReason int `json:"otherReason"`
}

// DriftWindow is one row of the drift table. The three middle columns are exclusive.
type DriftWindow struct {
	Days                   int       `json:"days"`
	From                   time.Time `json:"from"` // exclusive
	To                     time.Time `json:"to"`   // inclusive: Now
	Servers                int       `json:"servers"`
	AnyChange              Part      `json:"anyChange"`
	ToolsAddedOrRemoved    Part      `json:"toolsAddedOrRemoved"`
	SchemaChangedNamesSame Part      `json:"schemaChangedNamesSame"`
	DescriptionOnly        Part      `json:"descriptionOnly"`
	Breaking               Part      `json:"breaking"`
}

// DriftActivity counts the changed lists of every server read in the last 30 days.
type DriftActivity struct {
	Days           int       `json:"days"`
	From           time.Time `json:"from"`
	To             time.Time `json:"to"`
	ServersRead    int       `json:"serversRead"`
	ServersChanged int       `json:"serversChanged"`
	ChangedLists   int       `json:"changedLists"`
	// ServersOverTen have more than 10 changed lists; OverTenLists are theirs (of
	// ChangedLists).
	ServersOverTen   int  `json:"serversOverTen"`
	OverTenLists     Part `json:"overTenLists"`
	ReturnsToEarlier int  `json:"returnsToEarlier"`
}

// VersionCount is a protocol version and how many servers answered with it.
type VersionCount struct {
	Version string `json:"version"`
	Part
}

// ProtocolVersions is the protocol version table.
type ProtocolVersions struct {
	Known    []string       `json:"known"`
	Servers  int            `json:"servers"`  // completed the handshake
	Versions []VersionCount `json:"versions"` // shares of Servers; OtherVersion last
	// NoVersion are the other Dataset entries, by cause.
	NoVersion    int `json:"noVersion"`
	Blocked      int `json:"blocked"`
	AuthRequired int `json:"authRequired"`
	NoHandshake  int `json:"noHandshake"`
	Other        int `json:"other"`
}

// PathRow counts the answers on one handshake path.
type PathRow struct {
	Method       string `json:"method"`
	Proposed     string `json:"proposed"`
	Answered     int    `json:"answered"`
	Same         int    `json:"same"`
	Older        int    `json:"older"`
	Newer        int    `json:"newer"`
	Unrecognized int    `json:"unrecognized"`
}

// HandshakePaths is the table by handshake path.
type HandshakePaths struct {
	Paths []PathRow `json:"paths"`
	Total PathRow   `json:"total"`
	// MostCommonOlder is the older version answered most often ("" when none), with
	// its count; ties go to the newer version.
	MostCommonOlder      string `json:"mostCommonOlder"`
	MostCommonOlderCount int    `json:"mostCommonOlderCount"`
}

// The uptime groups (UptimeRow.Group).
const (
	GroupOther = "other"
	GroupAll   = "all"
)

// UptimeRow is one group of the uptime table.
type UptimeRow struct {
	// Group is SignedFull, SignedAuthRequired, Unsigned, GroupOther (another category,
	// only when there is one) or GroupAll.
	Group     string `json:"group"`
	Servers   int    `json:"servers"`
	Pct100    Part   `json:"pct100"` // of Servers
	Pct95To99 int    `json:"pct95To99"`
	Pct80To94 int    `json:"pct80To94"`
	Pct50To79 int    `json:"pct50To79"`
	Below50   int    `json:"below50"`
}

// Uptime is the uptime table.
type Uptime struct {
	From    string `json:"from"`
	To      string `json:"to"`
	MinDays int    `json:"minDays"`
	// TooFewDays are the Dataset entries with fewer than MinDays counted days.
	TooFewDays int         `json:"tooFewDays"`
	Groups     []UptimeRow `json:"groups"`
}
