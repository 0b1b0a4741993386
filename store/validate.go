package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/probity-dev/probity/attest"
)

// This file holds what both backends share: the input rules they apply before opening a
// transaction, so that a bad input is refused the same way, with nothing written, on
// either; and the bookkeeping rules of uptime days and free slugs.

var (
	slugBasePattern      = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,79}$`)
	fingerprintPattern   = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	payloadDigestPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)
	reasonKeyPattern     = regexp.MustCompile(`^[a-z0-9_]{1,64}$`)
)

var (
	entryKinds = []string{KindRemote, KindNPM, KindPyPI, KindGitHub}
	// dueReasons are the reasons a due time can have; roundReasons those of a round,
	// all but ReasonSupply: a supply run is stored by SaveSupply, not as a round.
	dueReasons    = []DueReason{ReasonCadence, ReasonConfirm, ReasonStatus, ReasonManual, ReasonSupply}
	roundReasons  = []DueReason{ReasonCadence, ReasonConfirm, ReasonStatus, ReasonManual}
	uptimeClasses = []UptimeClass{UptimeAnswered, UptimeNoAnswer, UptimeInconclusive}
	// handshakeMethods are a round's HandshakeMethod values; loginPlaces and
	// loginChallenges its Login's, "" (no 401) aside.
	handshakeMethods = []string{"", "server/discover", "initialize"}
	loginPlaces      = []string{LoginAtHandshake, LoginAtToolsList, LoginAtToolsCall, LoginAtOther}
	loginChallenges  = []string{ChallengeWithMetadata, ChallengeWithoutMetadata, ChallengeUnparseable, ChallengeNone}
)

// maxVersionLen bounds a round's proposed protocol version.
const maxVersionLen = 64

// checkHandshakeLogin refuses a round's handshake path or login facts that the
// rounds table's constraints (migration 0005) would refuse.
func checkHandshakeLogin(r *Round) error {
	if !slices.Contains(handshakeMethods, r.HandshakeMethod) {
		return fmt.Errorf("handshake method %q is not one of %q", r.HandshakeMethod, handshakeMethods)
	}
	if len(r.ProposedVersion) > maxVersionLen {
		return fmt.Errorf("proposed version is longer than %d bytes", maxVersionLen)
	}
	l := r.Login
	if l.Unauthorized == "" {
		if l.Challenge != "" || l.Metadata != "" {
			return errors.New("login facts without a 401 have a challenge or metadata outcome")
		}
		return nil
	}
	if !slices.Contains(loginPlaces, l.Unauthorized) {
		return fmt.Errorf("login 401 place %q is not one of %q", l.Unauthorized, loginPlaces)
	}
	if !slices.Contains(loginChallenges, l.Challenge) {
		return fmt.Errorf("login challenge %q is not one of %q", l.Challenge, loginChallenges)
	}
	if l.Metadata != "" && !reasonKeyPattern.MatchString(l.Metadata) {
		return fmt.Errorf("login metadata outcome %q is not a reason key", l.Metadata)
	}
	return nil
}

// checkReason refuses a due reason that is not one of dueReasons.
func checkReason(r DueReason) error {
	if !slices.Contains(dueReasons, r) {
		return fmt.Errorf("due reason %q is not one of %v", r, dueReasons)
	}
	return nil
}

// checkRoundReason refuses a round's reason that is not one of roundReasons.
func checkRoundReason(r DueReason) error {
	if !slices.Contains(roundReasons, r) {
		return fmt.Errorf("round reason %q is not one of %v", r, roundReasons)
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
	if err := checkRoundReason(r.Reason); err != nil {
		return err
	}
	if !slices.Contains(uptimeClasses, r.Uptime) {
		return fmt.Errorf("uptime class %q is not one of %v", r.Uptime, uptimeClasses)
	}
	if r.HTTPStatus < 0 || r.HTTPStatus > 999 || r.ToolCount < 0 || r.Pages < 0 || r.RetryAfter < 0 {
		return errors.New("round has a negative count or duration, or an HTTP status outside 0-999")
	}
	if err := checkHandshakeLogin(r); err != nil {
		return err
	}
	if err := checkResults(r.Results); err != nil {
		return err
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
		if r.Instructions != nil && attest.Digest(r.Instructions) != fp.Instructions {
			return errors.New("instructions document does not have the round's instructions fingerprint")
		}
	} else if r.Instructions != nil {
		return errors.New("round has an instructions document without fingerprints")
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

// Bounds of what SaveHistory and HideChange accept. The summary and badge rules are
// those of the change/v1 predicate (attest/schema/change-v1.schema.json), which a signed
// change carries.
const (
	maxChangeSummary    = 200      // characters
	maxChangeBadges     = 6        // badges of one change
	maxHiddenReason     = 500      // characters
	maxChangeKeyID      = 128      // characters
	maxChangesPerUpdate = 1000     // changes of one HistoryUpdate
	maxChangeDetails    = 8 << 20  // bytes of one change's details JSON
	maxChangeEnvelope   = 1 << 20  // bytes of one change's envelope
	maxHistoryState     = 16 << 20 // bytes of an entry's history state
)

var (
	changeOrigins = []string{attest.OriginAutomatic, attest.OriginOperator}
	changeKinds   = []string{attest.ChangeBaseline, attest.ChangeTools, attest.ChangeVersion, attest.ChangeOperatorEdit}
	badgePattern  = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
)

// checkLine refuses text that is not one line of 1 to limit characters of valid UTF-8
// without control characters.
func checkLine(what, s string, limit int) error {
	switch n := utf8.RuneCountInString(s); {
	case n == 0:
		return fmt.Errorf("%s is empty", what)
	case n > limit:
		return fmt.Errorf("%s is %d characters, more than %d", what, n, limit)
	case !utf8.ValidString(s):
		return fmt.Errorf("%s is not valid UTF-8", what)
	case strings.ContainsFunc(s, unicode.IsControl):
		return fmt.Errorf("%s holds a control character", what)
	}
	return nil
}

// checkHistoryUpdate refuses an update SaveHistory cannot store, before any transaction:
// everything but what depends on the stored history (checkHistoryBase).
func checkHistoryUpdate(u *HistoryUpdate) error {
	switch {
	case u.EntryID <= 0:
		return fmt.Errorf("history update has entry id %d", u.EntryID)
	case u.ExpectProcessed < 0 || u.Processed < u.ExpectProcessed:
		return fmt.Errorf("history update goes from processed round %d to %d", u.ExpectProcessed, u.Processed)
	case u.State == nil:
		return errors.New("history update has no state")
	case len(u.State) > maxHistoryState:
		return fmt.Errorf("history state is %d bytes, more than %d", len(u.State), maxHistoryState)
	case len(u.Changes) > maxChangesPerUpdate:
		return fmt.Errorf("history update has %d changes, more than %d", len(u.Changes), maxChangesPerUpdate)
	}
	for i := range u.Changes {
		c := &u.Changes[i]
		if c.EntryID != u.EntryID {
			return fmt.Errorf("change %d is of entry %d, not %d", c.Number, c.EntryID, u.EntryID)
		}
		if i > 0 && c.Number != u.Changes[i-1].Number+1 {
			return fmt.Errorf("change %d follows change %d: numbers must be consecutive", c.Number, u.Changes[i-1].Number)
		}
		if err := checkChange(c); err != nil {
			return fmt.Errorf("change %d: %w", c.Number, err)
		}
	}
	if u.Listing != nil {
		if err := checkListingUpdate(u.Listing); err != nil {
			return err
		}
	}
	return checkDueUpdates(u.Due)
}

// checkChange refuses a change that cannot be stored as it is; its envelope, key id and
// payload digest are checked by newChangeRows (signedDigest), which parses the envelope
// once.
func checkChange(c *ChangeRecord) error {
	switch {
	case c.Number < 1:
		return errors.New("number below 1")
	case c.RecordedAt.IsZero():
		return errors.New("no recorded time")
	case !slices.Contains(changeOrigins, c.Origin):
		return fmt.Errorf("origin %q is not one of %v", c.Origin, changeOrigins)
	case !slices.Contains(changeKinds, c.Kind):
		return fmt.Errorf("kind %q is not one of %v", c.Kind, changeKinds)
	case len(c.Details) > maxChangeDetails:
		return fmt.Errorf("details are %d bytes, more than %d", len(c.Details), maxChangeDetails)
	case !json.Valid(c.Details):
		return errors.New("details are not valid JSON")
	case len(c.Badges) > maxChangeBadges:
		return fmt.Errorf("%d badges, more than %d", len(c.Badges), maxChangeBadges)
	case c.BeforeRound < 0 || c.AfterRound < 0:
		return errors.New("negative round id")
	case c.Hidden || c.HiddenReason != "":
		return errors.New("a new change is visible: hide it with HideChange")
	}
	if err := checkLine("summary", c.Summary, maxChangeSummary); err != nil {
		return err
	}
	if c.KeyID != "" {
		if err := checkLine("key id", c.KeyID, maxChangeKeyID); err != nil {
			return err
		}
	}
	for i, b := range c.Badges {
		if !badgePattern.MatchString(b) {
			return fmt.Errorf("badge %q does not match %s", b, badgePattern)
		}
		if slices.Contains(c.Badges[:i], b) {
			return fmt.Errorf("badge %q twice", b)
		}
	}
	return nil
}

// checkHistoryBase refuses a checked update that does not continue the stored history:
// ErrConflict when the stored processed id (0 without a state) is not the one the update
// was computed from, an error naming the numbers when its first change is not the
// entry's next (last is the entry's highest change number, 0 without changes), and an
// error when its changes name rounds of another entry (own of the distinct
// round ids the changes name belong to the entry).
func checkHistoryBase(u *HistoryUpdate, processed, last int64, own, named int) error {
	if processed != u.ExpectProcessed {
		return fmt.Errorf("computed from processed round %d, stored %d: %w", u.ExpectProcessed, processed, ErrConflict)
	}
	if len(u.Changes) > 0 && u.Changes[0].Number != last+1 {
		return fmt.Errorf("changes %d to %d do not follow the entry's last change, %d",
			u.Changes[0].Number, u.Changes[len(u.Changes)-1].Number, last)
	}
	if own != named {
		return fmt.Errorf("changes name %d rounds of other entries or of none", named-own)
	}
	return nil
}

// changeRounds returns the distinct round ids the changes name.
func changeRounds(cs []ChangeRecord) []int64 {
	ids := []int64{}
	for _, c := range cs {
		for _, id := range []int64{c.BeforeRound, c.AfterRound} {
			if id != 0 && !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// checkHideReason refuses the reason of HideChange: hiding needs one; showing again
// clears it, and any reason given must still be one line.
func checkHideReason(hidden bool, reason string) error {
	if !hidden && reason == "" {
		return nil
	}
	return checkLine("reason", reason, maxHiddenReason)
}

// checkChangeFilter refuses a filter that asks for what Changes cannot answer.
func checkChangeFilter(f ChangeFilter) error {
	switch {
	case f.EntryID < 0 || f.BeforeNumber < 0:
		return errors.New("negative entry id or change number")
	case f.BeforeNumber > 0 && f.EntryID == 0:
		return errors.New("BeforeNumber pages one entry's changes: it needs an EntryID")
	}
	return nil
}

// Bounds of what SaveSupply accepts.
const (
	maxSupplyFacts    = 4 << 20 // bytes of a run's facts JSON
	maxSupplyVerdict  = 1 << 20 // bytes of a run's verdict JSON
	maxSupplyEnvelope = 1 << 20 // bytes of a run's envelope
	maxSupplyVersion  = 256     // characters of a run's latest version
	maxSupplyKeyID    = 128     // characters of a run's key id
)

// checkSupply refuses a supply run SaveSupply cannot store as it is, and its due
// updates; whether the entry exists is left to the transaction.
func checkSupply(r *SupplyRecord, due []DueUpdate) error {
	switch {
	case r.ID != 0:
		return fmt.Errorf("supply run has id %d: SaveSupply assigns it", r.ID)
	case r.RanAt.IsZero():
		return errors.New("supply run has no time")
	case r.Score < 0 || r.Score > 100:
		return fmt.Errorf("supply run has score %d, not 0-100", r.Score)
	case len(r.Facts) > maxSupplyFacts:
		return fmt.Errorf("supply facts are %d bytes, more than %d", len(r.Facts), maxSupplyFacts)
	case !json.Valid(r.Facts):
		return errors.New("supply facts are not valid JSON")
	case len(r.Verdict) > maxSupplyVerdict:
		return fmt.Errorf("supply verdict is %d bytes, more than %d", len(r.Verdict), maxSupplyVerdict)
	case !json.Valid(r.Verdict):
		return errors.New("supply verdict is not valid JSON")
	}
	digest, err := signedDigest(r.Envelope, r.KeyID, r.PayloadDigest, maxSupplyEnvelope)
	if err != nil {
		return fmt.Errorf("supply %w", err)
	}
	r.PayloadDigest = digest
	if r.LatestVersion != "" {
		if err := checkLine("latest version", r.LatestVersion, maxSupplyVersion); err != nil {
			return err
		}
	}
	if r.KeyID != "" {
		if err := checkLine("key id", r.KeyID, maxSupplyKeyID); err != nil {
			return err
		}
	}
	return checkDueUpdates(due)
}

// checkSurfaceDoc checks a content-addressed document against its fingerprint.
func checkSurfaceDoc(fingerprint string, doc []byte) error {
	switch {
	case !fingerprintPattern.MatchString(fingerprint):
		return fmt.Errorf("fingerprint %q is not sha256: and 64 lowercase hex digits", fingerprint)
	case len(doc) == 0 || len(doc) > 32<<20:
		return errors.New("document is empty or larger than 32 MiB")
	case attest.Digest(doc) != fingerprint:
		return errors.New("document does not have its fingerprint")
	}
	return nil
}

// checkEntryQuery refuses uptime bounds that are not two days, or only one of them.
func checkEntryQuery(q EntryQuery) error {
	if q.UptimeFrom == "" && q.UptimeTo == "" {
		return nil
	}
	return errors.Join(checkDay(q.UptimeFrom), checkDay(q.UptimeTo))
}

// checkResults refuses round results that are not a JSON array: the stored round's
// findings (RoundSummary.Failed, ObservedRisk) are counted from its elements, by status,
// by the schema (migration 0010) as the round is inserted.
func checkResults(results []byte) error {
	if results == nil {
		return nil
	}
	var rs []json.RawMessage
	if err := json.Unmarshal(results, &rs); err != nil {
		return fmt.Errorf("round results are not a JSON array: %w", err)
	}
	return nil
}
