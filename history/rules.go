// Package history keeps each entry's change history by the rules of seed 000 and
// DESIGN.md ("History rules"): what counts as a change (package history/diff), when a
// difference is confirmed, how often changes may be recorded, and how each recorded
// change is numbered, summarized, badged and signed.
//
// # Rules
//
// Rules.Apply is a pure function of an entry's State and one Read, so that every rule
// is tested with a fake clock:
//
//   - The first successful read is the baseline: "observation started", with its tool
//     count. Nothing before it counts as a change. An entry whose history watches only
//     a package's version (npm, PyPI; no tool list) gets its baseline from the first
//     version read: "observation started at version X" (ApplyPackageVersion).
//   - A read that failed, was aborted, or returned only part of the list (anything but a
//     complete, fingerprinted tool list) is no data: it never removes tools and leaves
//     the state as it is.
//   - A read that differs from the recorded state (Rules.Same says whether two reads
//     differ once dates are masked) becomes the pending candidate. The difference is
//     recorded only when a later read at least ConfirmAfter (one minute) after the
//     candidate agrees with it; a list that becomes empty needs EmptyConfirmAfter (two
//     hours). A read that agrees with the recorded state again drops the candidate; one
//     that differs from both replaces it.
//   - At most MaxToolChanges (3) tool changes are recorded per entry in any 24 hours: a
//     fourth confirmed difference waits, still pending, until the first of the three is
//     24 hours old, and is recorded by the first agreeing read after that.
//   - Versions count only in the form of version numbers (1.3.0, v2.0.0-beta.1; see
//     IsVersion). A server-reported version is recorded after two agreeing reads at least
//     a minute apart; a package version (npm, PyPI) at once (ApplyPackageVersion), on
//     the entry's cadence and not held until a weekly run. At most one version change is
//     recorded in 24 hours (a later one waits, pending); a version equal to one recorded
//     within the last week is not recorded again (the state follows it silently). The
//     first version seen is the version baseline and is not a version change: a package
//     entry records it as its baseline event ("observation started at version X",
//     signed as a version change with no before side), an entry with a tool list
//     follows it silently.
//
// The confirmation delays (ConfirmAfter, EmptyConfirmAfter) are owned here: the
// schedule (rounds.Schedule) reads them through Rules.Confirmation, so that the
// confirming read never comes before the rules would take it.
//   - Operator edits are recorded as they are made (OperatorEdit), outside these limits.
//
// # Stored documents
//
// The history writes two JSON documents the store keeps as bytes: a change's details
// (ChangeDetails, one shape for every kind of change) and an entry's State. Each has its
// Encode and Decode here (documents.go), and every reader (the pages, the feeds) decodes
// through them, strictly (package internal/document).
package history

import (
	"regexp"
	"slices"
	"time"
)

// Read is one round as the history sees it.
type Read struct {
	// ID is the round's id in the store (store.RoundSummary.ID). A stored State keeps
	// it under its first name, ObservationID, so that states stored before the rename
	// still decode.
	ID      int64 `json:"ObservationID"`
	RoundID string
	// PayloadDigest is "sha256:" + hex of the round's signed payload ("" unsigned).
	PayloadDigest string
	At            time.Time
	// OK says the round read a complete, fingerprinted tool list (a signed full round).
	OK           bool
	Surface      string // surface fingerprint (when OK)
	Instructions string // instructions fingerprint (when OK)
	ToolCount    int
	// Version is the server-reported version, "" when the handshake gave none.
	Version string
}

// VersionSeen is a version recorded (or followed) at a time.
type VersionSeen struct {
	Version string    `json:"version"`
	At      time.Time `json:"at"`
}

// State is an entry's history state between reads. It is stored as JSON (EncodeState,
// DecodeState).
type State struct {
	// Recorded is the tool state last recorded (the baseline or the after side of the
	// newest tools change); nil before the baseline.
	Recorded *Read `json:"recorded,omitempty"`
	// Pending is the first read of an unconfirmed difference.
	Pending *Read `json:"pending,omitempty"`
	// ToolChanges are the times of tool changes recorded in the last 24 hours.
	ToolChanges []time.Time `json:"toolChanges,omitempty"`
	// ManifestReadAt is when an MCP bundle manifest's tools were last read, by a signed
	// supply run (RecordManifest) or by a cheap read on the entry's cadence that found
	// the recorded tools (ManifestRead): when the entry's tools were last fetched. Zero
	// for an entry without a manifest read.
	ManifestReadAt time.Time `json:"manifestReadAt,omitzero"`

	Version        string    `json:"version,omitempty"`
	PendingVersion string    `json:"pendingVersion,omitempty"`
	PendingSince   time.Time `json:"pendingSince,omitzero"`
	// LastVersionChange is when the newest version change was recorded.
	LastVersionChange time.Time `json:"lastVersionChange,omitzero"`
	// Versions are the versions recorded or followed in the last week.
	Versions []VersionSeen `json:"versions,omitempty"`

	// NextNumber is the number the next change gets (1 for the first).
	NextNumber int64 `json:"nextNumber"`
}

// Event kinds.
const (
	EventBaseline = "baseline" // observation started: the first tool list, or a package's first version
	EventTools    = "tools"
	EventVersion  = "version"
)

// Event is a change Apply decided to record.
type Event struct {
	Kind   string
	Number int64
	At     time.Time
	// Before and After are the reads compared (Before nil for the baseline; both nil for
	// a package's version baseline).
	Before, After *Read
	// VersionBefore and VersionAfter are set for version changes; VersionAfter alone
	// for a package's version baseline.
	VersionBefore, VersionAfter string
}

// Default confirmation delays of Rules (seed 000: "mindestens eine Minute später"; a
// list that becomes empty "im Abstand von mindestens zwei Stunden").
const (
	DefaultConfirmAfter      = time.Minute
	DefaultEmptyConfirmAfter = 2 * time.Hour
)

// Rules holds the limits of the rules above. The zero value of a field means its
// default; a ConfirmAfter below a minute is taken as a minute.
type Rules struct {
	ConfirmAfter      time.Duration // default DefaultConfirmAfter (1 min), at least 1 min
	EmptyConfirmAfter time.Duration // default DefaultEmptyConfirmAfter (2 h)
	MaxToolChanges    int           // per 24 h; default 3
	// Same reports whether two OK reads show the same tools and instructions once
	// dates are masked; nil compares fingerprints only.
	Same func(a, b *Read) (bool, error)
}

func (p Rules) withDefaults() Rules {
	p.ConfirmAfter = max(p.ConfirmAfter, DefaultConfirmAfter)
	if p.EmptyConfirmAfter <= 0 {
		p.EmptyConfirmAfter = DefaultEmptyConfirmAfter
	}
	if p.MaxToolChanges <= 0 {
		p.MaxToolChanges = 3
	}
	if p.Same == nil {
		p.Same = func(a, b *Read) (bool, error) {
			return a.Surface == b.Surface && a.Instructions == b.Instructions, nil
		}
	}
	return p
}

// Confirmation returns how long after the first read of a difference the confirming
// read must come for the rules to take it: after for a difference, emptyAfter for a tool
// list that became empty. The schedule plans its confirmation reads by these.
func (p Rules) Confirmation() (after, emptyAfter time.Duration) {
	p = p.withDefaults()
	return p.ConfirmAfter, p.EmptyConfirmAfter
}

const (
	day  = 24 * time.Hour
	week = 7 * day
)

var versionPattern = regexp.MustCompile(`^v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)

// IsVersion reports whether v is a version number in the sense of the rules: semantic
// versioning 2.0.0, optionally with a leading v (1.3.0, v2.0.0-beta.1, 1.0.0+build.5),
// at most 64 characters.
func IsVersion(v string) bool {
	return len(v) <= 64 && versionPattern.MatchString(v)
}

// Apply takes one read into the state and returns the new state and the changes to
// record, numbered from st.NextNumber. It does not modify st.
func (p Rules) Apply(st State, r Read) (State, []Event, error) {
	p = p.withDefaults()
	st = st.clone()
	if st.NextNumber < 1 {
		st.NextNumber = 1
	}
	var events []Event
	if r.OK {
		ev, err := p.applyTools(&st, r)
		if err != nil {
			return State{}, nil, err
		}
		events = append(events, ev...)
	}
	if IsVersion(r.Version) {
		events = append(events, applyVersion(&st, r.Version, r.At, p.ConfirmAfter)...)
	}
	return st, events, nil
}

// ApplyPackageVersion records a package's newest published version (npm, PyPI), which
// needs no second read. The first version of an entry that has no baseline yet (no tool
// list read, no version seen) is its baseline: an EventBaseline with VersionAfter set,
// "observation started at version X". Later versions follow the version rules.
func (p Rules) ApplyPackageVersion(st State, version string, at time.Time) (State, []Event) {
	st = st.clone()
	if st.NextNumber < 1 {
		st.NextNumber = 1
	}
	if !IsVersion(version) {
		return st, nil
	}
	if st.Recorded == nil && st.Version == "" {
		applyVersion(&st, version, at, 0) // the version baseline: no version change
		return st, []Event{{Kind: EventBaseline, Number: st.number(), At: at, VersionAfter: version}}
	}
	return st, applyVersion(&st, version, at, 0)
}

func (st *State) number() int64 {
	n := st.NextNumber
	st.NextNumber++
	return n
}

func (p Rules) applyTools(st *State, r Read) ([]Event, error) {
	read := r
	if st.Recorded == nil {
		st.Recorded, st.Pending = &read, nil
		return []Event{{Kind: EventBaseline, Number: st.number(), At: r.At, After: &read}}, nil
	}
	same, err := p.Same(st.Recorded, &read)
	if err != nil {
		return nil, err
	}
	if same {
		st.Pending = nil
		return nil, nil
	}
	if st.Pending != nil {
		agree, err := p.Same(st.Pending, &read)
		if err != nil {
			return nil, err
		}
		if agree {
			wait := p.ConfirmAfter
			if read.ToolCount == 0 {
				wait = p.EmptyConfirmAfter
			}
			if r.At.Sub(st.Pending.At) < wait {
				return nil, nil // too soon: keep the first read as the candidate
			}
			st.ToolChanges = slices.DeleteFunc(st.ToolChanges, func(t time.Time) bool { return !t.After(r.At.Add(-day)) })
			if len(st.ToolChanges) >= p.MaxToolChanges {
				return nil, nil // over the limit: wait, still pending
			}
			before := st.Recorded
			st.Recorded, st.Pending = &read, nil
			st.ToolChanges = append(st.ToolChanges, r.At)
			return []Event{{Kind: EventTools, Number: st.number(), At: r.At, Before: before, After: &read}}, nil
		}
	}
	st.Pending = &read
	return nil, nil
}

// applyVersion takes a version read at `at` into the state; confirm is the minimum time
// between the two agreeing reads (0: none needed).
func applyVersion(st *State, v string, at time.Time, confirm time.Duration) []Event {
	st.Versions = slices.DeleteFunc(st.Versions, func(s VersionSeen) bool { return !s.At.After(at.Add(-week)) })
	switch {
	case st.Version == "":
		st.Version = v
		st.Versions = append(st.Versions, VersionSeen{v, at})
		st.PendingVersion = ""
		return nil
	case v == st.Version:
		st.PendingVersion = ""
		return nil
	}
	if confirm > 0 {
		if st.PendingVersion != v {
			st.PendingVersion, st.PendingSince = v, at
			return nil
		}
		if at.Sub(st.PendingSince) < confirm {
			return nil
		}
	}
	if slices.ContainsFunc(st.Versions, func(s VersionSeen) bool { return s.Version == v }) {
		// Back to a version recorded within the week: follow it, record nothing.
		st.Version, st.PendingVersion = v, ""
		st.Versions = append(st.Versions, VersionSeen{v, at})
		return nil
	}
	if !st.LastVersionChange.IsZero() && at.Sub(st.LastVersionChange) < day {
		if st.PendingVersion != v {
			st.PendingVersion, st.PendingSince = v, at
		}
		return nil // one version change per 24 h: wait, still pending
	}
	before := st.Version
	st.Version, st.PendingVersion, st.LastVersionChange = v, "", at
	st.Versions = append(st.Versions, VersionSeen{v, at})
	return []Event{{Kind: EventVersion, Number: st.number(), At: at, VersionBefore: before, VersionAfter: v}}
}

func (st State) clone() State {
	c := st
	if st.Recorded != nil {
		r := *st.Recorded
		c.Recorded = &r
	}
	if st.Pending != nil {
		r := *st.Pending
		c.Pending = &r
	}
	c.ToolChanges = slices.Clone(st.ToolChanges)
	c.Versions = slices.Clone(st.Versions)
	return c
}
