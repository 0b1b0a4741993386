package store

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/probity-dev/probity/attest"
)

// This file holds what both backends share: the input rules they apply before opening a
// transaction, so that a bad input is refused the same way, with nothing written, on
// either; and the bookkeeping rules of uptime days and free slugs.

var (
	slugBasePattern      = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,79}$`)
	fingerprintPattern   = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	payloadDigestPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

var (
	entryKinds    = []string{KindRemote, KindNPM, KindPyPI, KindGitHub}
	reasons       = []Reason{ReasonCadence, ReasonConfirm, ReasonStatus, ReasonManual}
	uptimeClasses = []UptimeClass{UptimeAnswered, UptimeNoAnswer, UptimeInconclusive}
)

// checkReason refuses a reason that is not one of the four.
func checkReason(r Reason) error {
	if !slices.Contains(reasons, r) {
		return fmt.Errorf("due reason %q is not one of %v", r, reasons)
	}
	return nil
}

// checkNewEntry refuses an entry AddEntry cannot add.
func checkNewEntry(e NewEntry) error {
	if !slices.Contains(entryKinds, e.Kind) {
		return fmt.Errorf("entry kind %q is not one of %v", e.Kind, entryKinds)
	}
	if e.Locator == "" {
		return errors.New("entry has no locator")
	}
	if !slugBasePattern.MatchString(e.SlugBase) {
		return fmt.Errorf("slug %q does not match %s", e.SlugBase, slugBasePattern)
	}
	if e.Cadence < 0 {
		return fmt.Errorf("cadence %s is negative", e.Cadence)
	}
	for _, d := range e.Due {
		if err := checkReason(d.Reason); err != nil {
			return err
		}
		if d.At.IsZero() {
			return fmt.Errorf("due time for %s is zero", d.Reason)
		}
	}
	return nil
}

// checkRound refuses a round SaveRound cannot store consistently: one whose parts
// contradict each other (an envelope without coverage, fingerprints without the surface
// document they are the digest of) or that lacks what identifies it.
func checkRound(r *Round) error {
	if r == nil {
		return errors.New("no round")
	}
	switch {
	case r.DueAt.IsZero():
		return errors.New("round has no due time")
	case r.StartedAt.IsZero() || r.FinishedAt.IsZero():
		return errors.New("round has no start or finish time")
	case r.RoundID == "":
		return errors.New("round has no round id")
	}
	if err := checkReason(r.Reason); err != nil {
		return err
	}
	if !slices.Contains(uptimeClasses, r.Uptime) {
		return fmt.Errorf("uptime class %q is not one of %v", r.Uptime, uptimeClasses)
	}
	if r.HTTPStatus < 0 || r.HTTPStatus > 999 || r.ToolCount < 0 || r.Pages < 0 || r.RetryAfter < 0 {
		return errors.New("round has a negative count or duration, or an HTTP status outside 0-999")
	}

	if (r.Fingerprints == nil) != (r.Surface == nil) {
		return errors.New("round has fingerprints without a surface document or the reverse")
	}
	if fp := r.Fingerprints; fp != nil {
		for _, d := range []string{fp.Surface, fp.Toolset, fp.Schema, fp.Instructions} {
			if !fingerprintPattern.MatchString(d) {
				return fmt.Errorf("fingerprint %q is not sha256: and 64 lowercase hex digits", d)
			}
		}
		if attest.Digest(r.Surface) != fp.Surface {
			return errors.New("surface document does not have the round's surface fingerprint")
		}
	}

	if r.Envelope == nil {
		if r.Coverage != "" || r.KeyID != "" || r.PayloadDigest != "" {
			return errors.New("unsigned round has a coverage, key id or payload digest")
		}
		return checkDueUpdates(r.Due)
	}
	switch attest.Coverage(r.Coverage) {
	case attest.CoverageFull:
		if r.Fingerprints == nil {
			return errors.New("full-coverage round has no fingerprints")
		}
	case attest.CoverageAuthRequired:
		if r.Fingerprints != nil {
			return errors.New("auth_required round has fingerprints")
		}
	default:
		return fmt.Errorf("signed round has coverage %q, not one of %v", r.Coverage, attest.Coverages)
	}
	switch {
	case len(r.Envelope) == 0:
		return errors.New("signed round has an empty envelope")
	case r.KeyID == "":
		return errors.New("signed round has no key id")
	case !payloadDigestPattern.MatchString(r.PayloadDigest):
		return errors.New("signed round's payload digest is not 64 lowercase hex digits")
	case r.UnsignedReason != "":
		return errors.New("signed round has an unsigned reason")
	}
	return checkDueUpdates(r.Due)
}

func checkDueUpdates(us []DueUpdate) error {
	for _, u := range us {
		if err := checkReason(u.Reason); err != nil {
			return err
		}
	}
	return nil
}

// checkDay refuses a day that is not YYYY-MM-DD.
func checkDay(day string) error {
	if _, err := time.Parse(time.DateOnly, day); err != nil || len(day) != len(time.DateOnly) {
		return fmt.Errorf("day %q is not YYYY-MM-DD", day)
	}
	return nil
}

// utcDay is the UTC day of t, YYYY-MM-DD.
func utcDay(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// uptimeCounts are the rounds of one entry on one day, by uptime class.
type uptimeCounts struct {
	Answered, NoAnswer, Inconclusive int
}

// add counts one round of class c.
func (u *uptimeCounts) add(c UptimeClass) {
	switch c {
	case UptimeAnswered:
		u.Answered++
	case UptimeNoAnswer:
		u.NoAnswer++
	case UptimeInconclusive:
		u.Inconclusive++
	}
}

// status is the day's status: offline when any round found no answer, else online when
// any answered, else not counted.
func (u uptimeCounts) status() string {
	switch {
	case u.NoAnswer > 0:
		return DayOffline
	case u.Answered > 0:
		return DayOnline
	default:
		return DayNotCounted
	}
}

// uptimeDelta is how a day's change of status from before to after ("" for a day
// without rounds) changes an entry's online and counted days.
func uptimeDelta(before, after string) (online, counted int) {
	value := func(s string) (int, int) {
		switch s {
		case DayOnline:
			return 1, 1
		case DayOffline:
			return 0, 1
		}
		return 0, 0
	}
	o1, c1 := value(before)
	o2, c2 := value(after)
	return o2 - o1, c2 - c1
}

// freeSlug returns base when it is not in taken, else base-N for the smallest N ≥ 2
// not in taken. taken holds the slugs that are base or start with base + "-".
func freeSlug(base string, taken []string) string {
	used := make(map[int]bool, len(taken))
	for _, s := range taken {
		if s == base {
			used[1] = true
			continue
		}
		suffix, ok := strings.CutPrefix(s, base+"-")
		if !ok || suffix == "" || suffix[0] == '0' {
			continue
		}
		if n, err := strconv.Atoi(suffix); err == nil && n >= 2 {
			used[n] = true
		}
	}
	if !used[1] {
		return base
	}
	for n := 2; ; n++ {
		if !used[n] {
			return base + "-" + strconv.Itoa(n)
		}
	}
}
