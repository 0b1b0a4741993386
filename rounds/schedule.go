package rounds

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"strconv"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/checks"
	hist "github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/store"
)

// Schedule sets when rounds are due. The zero value of a field means its default;
// Validate checks a schedule against the bounds below.
type Schedule struct {
	// Cadence is the time between reads of an unclaimed entry, the same for every kind
	// (seed 000 reads every 3 hours): a remote's round (handshake and tools/list), a
	// package's newest version, a repository's MCP bundle manifest. Default
	// DefaultCadence (3 h); MinCadence to MaxCadence.
	Cadence time.Duration
	// ClaimedCadence is the time between reads of a claimed entry; default
	// DefaultClaimedCadence (15 min, as seed 001's claimed servers), or Cadence when
	// that is shorter (claimed entries are read at least as often); MinCadence to
	// Cadence.
	ClaimedCadence time.Duration
	// FirstSpread spreads the first round of new entries over [0, FirstSpread);
	// default 15 min (or the cadence, when shorter); at most MaxFirstSpread.
	FirstSpread time.Duration
	// StatusInterval is the time between status checks; default 24 h.
	StatusInterval time.Duration
	// History is the history's rules, whose confirmation delays
	// (history.Rules.Confirmation: 1 min, 2 h when a tool list became empty) set when a
	// confirmation re-fetch runs. Give the history.Processor the same rules.
	History hist.Rules
	// MaxBackoff caps the wait after rate-limited rounds; default 48 h.
	MaxBackoff time.Duration
}

// Defaults and bounds of a Schedule's cadences.
const (
	DefaultCadence        = 3 * time.Hour
	DefaultClaimedCadence = 15 * time.Minute
	// MinCadence keeps a cadence above the confirmation delay (a minute) with its
	// jitter: a cadence read no sooner than the confirming read would make every read
	// a confirmation, and -10 % of a one-minute cadence is 54 s.
	MinCadence = 2 * time.Minute
	// MaxCadence is a week: the supply checks' own interval, and seed 003's longest.
	MaxCadence = 7 * 24 * time.Hour
	// MaxFirstSpread is a day: a new entry is read on its first day.
	MaxFirstSpread = 24 * time.Hour
)

func (s Schedule) withDefaults() Schedule {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&s.Cadence, DefaultCadence)
	def(&s.ClaimedCadence, min(DefaultClaimedCadence, s.Cadence))
	def(&s.FirstSpread, 15*time.Minute)
	def(&s.StatusInterval, 24*time.Hour)
	def(&s.MaxBackoff, 48*time.Hour)
	return s
}

// Validate checks the schedule's settings: no negative duration, the cadence and the
// claimed cadence from MinCadence to MaxCadence, the claimed cadence no longer than the
// cadence (claimed entries are read at least as often), the first spread at most
// MaxFirstSpread. Zero values stand for their defaults and are checked as such.
func (s Schedule) Validate() error {
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"cadence", s.Cadence}, {"claimed cadence", s.ClaimedCadence}, {"first spread", s.FirstSpread},
		{"status interval", s.StatusInterval}, {"maximum backoff", s.MaxBackoff}} {
		if f.d < 0 {
			return fmt.Errorf("the %s is %s; it must not be negative", f.name, f.d)
		}
	}
	d := s.withDefaults()
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"cadence", d.Cadence}, {"claimed cadence", d.ClaimedCadence}} {
		if f.d < MinCadence || f.d > MaxCadence {
			return fmt.Errorf("the %s is %s; it must be from %s to %s", f.name, f.d, MinCadence, MaxCadence)
		}
	}
	if d.ClaimedCadence > d.Cadence {
		return fmt.Errorf("the claimed cadence (%s) is longer than the cadence (%s); claimed entries are read at least as often", d.ClaimedCadence, d.Cadence)
	}
	if d.FirstSpread > MaxFirstSpread {
		return fmt.Errorf("the first spread is %s; it must be at most %s", d.FirstSpread, MaxFirstSpread)
	}
	return nil
}

// CadenceOf returns the cadence of an entry.
func (s Schedule) CadenceOf(e store.Entry) time.Duration {
	s = s.withDefaults()
	switch {
	case e.Cadence > 0:
		return e.Cadence
	case e.Claimed:
		return s.ClaimedCadence
	}
	return s.Cadence
}

// ClaimedDue returns the due-time change an entry's claimed state flipping makes
// (package claims calls it with the entry as it is now): when its cadence round is
// due later than one cadence of the entry from now (CadenceOf, jittered as every
// cadence is), it moves there. So a newly claimed entry is read on the claimed cadence
// from now on; a newly unclaimed one keeps its next round, at most a claimed cadence
// away, after which its own cadence applies. An entry with no cadence due time
// (unlisted) gets none.
func (s Schedule) ClaimedDue(e store.Entry, due []store.Due, now time.Time) []store.DueUpdate {
	for _, d := range due {
		if d.Reason != store.ReasonCadence {
			continue
		}
		if next := s.nextCadence(e, now, now); next.Before(d.At) {
			return []store.DueUpdate{{Reason: store.ReasonCadence, At: next}}
		}
	}
	return nil
}

// spread returns a value in [0, span) derived from the entry (its kind and locator, known
// before the entry has an id), the time and a salt, so
// that the same job computes the same jitter when retried and entries spread evenly.
func spread(e store.Entry, at time.Time, salt string, span time.Duration) time.Duration {
	if span <= 0 {
		return 0
	}
	h := fnv.New64a()
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(at.UnixMilli()))
	h.Write(b[:])
	h.Write([]byte(salt))
	h.Write([]byte{0})
	h.Write([]byte(e.Kind))
	h.Write([]byte{0})
	h.Write([]byte(e.Locator))
	return time.Duration(h.Sum64() % uint64(span))
}

// FirstDue returns the first due times of a new entry created at now (its ID may still
// be 0). A remote entry: a cadence round spread over FirstSpread, a status check spread
// over the second half of the first day, and the supply checks after the first round.
// A package or repository entry, which has no probe rounds: the supply checks spread
// over FirstSpread (their first read of the package's version or the bundle manifest is
// the history's baseline), then a cheap read of the version or the manifest on the
// cadence, and a daily status check of its version and README.
func (s Schedule) FirstDue(e store.Entry, now time.Time) []store.Due {
	s = s.withDefaults()
	first := min(s.FirstSpread, s.CadenceOf(e))
	status := store.Due{EntryID: e.ID, Reason: store.ReasonStatus, At: now.Add(s.StatusInterval/2 + spread(e, now, "status", s.StatusInterval/2)).Truncate(time.Millisecond)}
	if e.Kind != store.KindRemote {
		firstSupply := now.Add(spread(e, now, "first", first)).Truncate(time.Millisecond)
		return []store.Due{
			{EntryID: e.ID, Reason: store.ReasonSupply, At: firstSupply},
			status,
			{EntryID: e.ID, Reason: store.ReasonCadence, At: s.nextCadence(e, firstSupply, now)},
		}
	}
	return []store.Due{
		{EntryID: e.ID, Reason: store.ReasonCadence, At: now.Add(spread(e, now, "first", first)).Truncate(time.Millisecond)},
		status,
		// The supply checks read the tools of the first round.
		{EntryID: e.ID, Reason: store.ReasonSupply, At: now.Add(first + 10*time.Minute + spread(e, now, "supply", time.Hour)).Truncate(time.Millisecond)},
	}
}

// nextCadence returns the cadence due time after one at `from`, jittered by up to ±10 %,
// and not before now: a round that ran late is rescheduled from now.
func (s Schedule) nextCadence(e store.Entry, from, now time.Time) time.Time {
	s = s.withDefaults()
	c := s.CadenceOf(e)
	j := spread(e, from, "cadence", c/5+1) - c/10
	next := from.Add(c + j)
	if next.Before(now) {
		next = now.Add(c + j)
	}
	return next.Truncate(time.Millisecond)
}

// nextStatus returns the status due time after one at `from`, on the same time of day,
// skipping days that are already over.
func (s Schedule) nextStatus(from, now time.Time) time.Time {
	next := from.Add(s.StatusInterval)
	for !next.After(now) {
		next = next.Add(s.StatusInterval)
	}
	return next.Truncate(time.Millisecond)
}

// history is what the schedule needs to know about an entry's previous rounds.
type history struct {
	// prev is the newest earlier round that had fingerprints (nil when none).
	prev *store.RoundSummary
	// rateLimited counts the consecutive rate-limited rounds just before this one.
	rateLimited int
}

// emptySurface is the surface fingerprint of an empty tool list.
var emptySurface = attest.Digest([]byte("[]"))

// DueUpdates returns the due-time changes a finished round makes: the next due time for
// its reason, a confirmation when it differs from the previous round, and backoff after
// rate limiting.
func (s Schedule) dueUpdates(e store.Entry, due store.Due, obs *checks.Observation, fp *attest.Fingerprints, h history, now time.Time) []store.DueUpdate {
	s = s.withDefaults()
	var ups []store.DueUpdate
	if due.Reason == store.ReasonManual {
		// A maintainer's "Re-check now" is one round: its due time goes with it, or
		// every look for due rounds would find it again.
		ups = append(ups, store.DueUpdate{Reason: store.ReasonManual})
	}
	if rateLimited(obs) {
		backoff := time.Hour << min(h.rateLimited, 10)
		backoff = min(max(backoff, obs.RetryAfter), s.MaxBackoff)
		at := now.Add(backoff + spread(e, due.At, "backoff", backoff/10+1)).Truncate(time.Millisecond)
		ups = append(ups, store.DueUpdate{Reason: store.ReasonCadence, At: at})
		switch due.Reason {
		case store.ReasonConfirm:
			ups = append(ups, store.DueUpdate{Reason: store.ReasonConfirm, At: at.Add(time.Minute)})
		case store.ReasonStatus:
			ups = append(ups, store.DueUpdate{Reason: store.ReasonStatus, At: s.nextStatus(due.At, now)})
		}
		return ups
	}
	switch due.Reason {
	case store.ReasonCadence, store.ReasonManual:
		ups = append(ups, store.DueUpdate{Reason: store.ReasonCadence, At: s.nextCadence(e, due.At, now)})
	case store.ReasonStatus:
		ups = append(ups, store.DueUpdate{Reason: store.ReasonStatus, At: s.nextStatus(due.At, now)})
	case store.ReasonConfirm:
		ups = append(ups, store.DueUpdate{Reason: store.ReasonConfirm})
	}
	if due.Reason != store.ReasonConfirm && differs(obs, fp, h.prev) {
		delay, empty := s.History.Confirmation()
		if fp.Surface == emptySurface {
			delay = empty
		}
		at := now.Add(delay + spread(e, due.At, "confirm", 30*time.Second)).Truncate(time.Millisecond)
		ups = append(ups, store.DueUpdate{Reason: store.ReasonConfirm, At: at})
	}
	return ups
}

// differs reports whether a round with fingerprints differs from the previous round that
// had them, in its surface, instructions or server-reported version.
func differs(obs *checks.Observation, fp *attest.Fingerprints, prev *store.RoundSummary) bool {
	if fp == nil || prev == nil || prev.Fingerprints == nil {
		return false
	}
	return fp.Surface != prev.Fingerprints.Surface ||
		fp.Instructions != prev.Fingerprints.Instructions ||
		(obs.Handshake.ServerVersion != "" && prev.ServerVersion != "" && obs.Handshake.ServerVersion != prev.ServerVersion)
}

func rateLimited(obs *checks.Observation) bool {
	return obs.Reach.Failure == checks.ReachRateLimited || obs.Stop == checks.StopRateLimited
}

// UptimeClass classifies a round for uptime: answered when any HTTP answer came (a
// 401 challenge included), no answer when the name did not resolve, the connection or
// TLS handshake failed, no complete response came within the budget, or the handshake
// got HTTP 5xx, and inconclusive when Probity could not tell: rate limited, or refused
// by its own egress guard.
func UptimeClass(obs *checks.Observation) store.UptimeClass {
	switch obs.Reach.Failure {
	case checks.ReachOK:
		if obs.Stop == checks.StopRateLimited {
			return store.UptimeInconclusive
		}
		return store.UptimeAnswered
	case checks.ReachDNS, checks.ReachConnect, checks.ReachTimeout, checks.ReachTLS, checks.ReachHTTP5xx:
		return store.UptimeNoAnswer
	}
	return store.UptimeInconclusive
}

// unsignedReason says in a word why a round the checks did not sign was not signed.
func unsignedReason(obs *checks.Observation) string {
	switch {
	case obs.Reach.Failure == checks.ReachBlocked:
		return "blocked"
	case !obs.Handshake.Completed() && !obs.Handshake.Unauthorized:
		return "no_handshake"
	}
	return "no_tools"
}

// RoundID returns the statement's roundId for an entry's round at a due time: a letter
// for the reason (c cadence, f confirm, d daily status; a manual round uses its run's
// id), the due time to the millisecond, and the entry id, e.g. c20261130T064512345Z-e42.
func RoundID(due store.Due, runID string) string {
	suffix := "-e" + strconv.FormatInt(due.EntryID, 10)
	if due.Reason == store.ReasonManual && runID != "" {
		return runID + suffix
	}
	prefix := map[store.DueReason]string{store.ReasonCadence: "c", store.ReasonConfirm: "f", store.ReasonStatus: "d", store.ReasonManual: "r"}[due.Reason]
	return prefix + stamp(due.At) + suffix
}

// stamp formats a time as 20261130T064512345Z (no characters roundId forbids).
func stamp(t time.Time) string {
	t = t.UTC()
	return t.Format("20060102T150405") + strconv.Itoa(1000 + t.Nanosecond()/1e6)[1:] + "Z"
}
