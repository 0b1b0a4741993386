package notify

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/history/diff"
	"github.com/probity-dev/probity/store"
)

// The rules of seed 000 ("Einem Eintrag folgen") as pure functions of the changes, the
// entry's current version and the clock. Planning and composing both apply them, so an
// e-mail says exactly what planning found worth telling, as the store holds it when the
// e-mail is sent.

// MaxAge is how old a change may be and still be e-mailed (seed 000: "keine, die älter
// als 7 Tage sind").
const MaxAge = 7 * 24 * time.Hour

// HourlyGap is the least time between two e-mails of an hourly account.
const HourlyGap = time.Hour

// maxRuleChanges bounds the changes of one entry the rules look at, the newest ones:
// history records at most three tool changes and one version change a day, so seven
// days hold at most 28 of them, and operator edits are few. A longer run is cut to its
// newest maxRuleChanges (the windows of starts before them are those of the first
// kept change).
const maxRuleChanges = 64

// Change is one change as the rules see it.
type Change struct {
	Number     int64
	RecordedAt time.Time
	// Seq is the number of the change's ledger record: its place in commit order.
	Seq  int64
	Kind string // attest.ChangeTools, ChangeVersion or ChangeOperatorEdit (baselines are never e-mailed)
	// Details are the change's decoded details (nil when they did not decode: the
	// change then counts as "changed", without counts).
	Details *history.ChangeDetails
	// Before and After are the states of the rounds a tools change compares.
	Before, After store.ChangeRound
	// DiffersFromApproved says the tools change left the surface the maintainers
	// approved (the badge history.BadgeDiffersFromApproved).
	DiffersFromApproved bool
	// CheckID, Round and Decision are a dispute's or an outcome's (Kind "dispute" or
	// "outcome"; Number is then the dispute's number): Probity's own ids and words.
	CheckID, Round, Decision string
}

// ChangeOf decodes a stored change for the rules.
func ChangeOf(c *store.NotifyChange) Change {
	ch := Change{Number: c.Number, RecordedAt: c.RecordedAt, Seq: c.Seq, Kind: c.Kind, Before: c.Before, After: c.After,
		CheckID: c.CheckID, Round: c.Round, Decision: c.Decision, DiffersFromApproved: slices.Contains(c.Badges, history.BadgeDiffersFromApproved)}
	if d, err := history.DecodeChangeDetails(c.Details); err == nil {
		ch.Details = d
	}
	return ch
}

// Summary is the net effect of an entry's changes since the last e-mail: what an
// e-mail says about the entry. It holds counts, fixed words and version numbers only:
// never a tool name, description or any other text of the server.
type Summary struct {
	// Notable says the changes are worth an e-mail: their net effect is not nothing,
	// and not a version alone that did not increase.
	Notable bool
	// Tools is the net change of the tool list in words ("2 tools added, 1 removed"),
	// "" when the tools came back to where they were.
	Tools string
	// VersionFrom and VersionTo are set when the version increased (the numbers
	// only: major.minor.patch and a pre-release of digits and dots).
	VersionFrom, VersionTo string
	// Edited are the listing fields the operator edited (in words, e.g. "setup
	// notes"), sorted, those edited back to their text left out.
	Edited []string
	// NewBaseline says a maintainer approved a new baseline (the operator edit of
	// field history.FieldApprovedBaseline), which Edited leaves out.
	NewBaseline bool
	// DiffersFromApproved says the tools, as the newest tools change left them, differ
	// from the approved baseline (told only with a net tools change).
	DiffersFromApproved bool
	// Last is the number of the newest change (the #ch-N an e-mail links; 0 when only
	// disputes are told).
	Last int64
	// Disputes say in Probity's words what was contested or decided, oldest first
	// ("a maintainer contested the check X of round R"): never the maintainer's
	// statement or the operator's reason. LastDispute is the newest one's number (the
	// #dispute-N an e-mail links when no change is told).
	Disputes    []string
	LastDispute int64
}

// Text is the summary in one line: "2 tools added, 1 removed; version 1.2.0 → 1.3.0".
func (s Summary) Text() string {
	var parts []string
	if s.Tools != "" {
		t := s.Tools
		if s.DiffersFromApproved {
			t += " (differs from the approved baseline)"
		}
		parts = append(parts, t)
	}
	if s.VersionTo != "" {
		parts = append(parts, "version "+s.VersionFrom+" → "+s.VersionTo)
	}
	if len(s.Edited) > 0 {
		parts = append(parts, "listing edited by the operator: "+strings.Join(s.Edited, ", "))
	}
	if s.NewBaseline {
		parts = append(parts, "new approved baseline")
	}
	parts = append(parts, s.Disputes...)
	if len(parts) == 0 {
		return "changed"
	}
	return strings.Join(parts, "; ")
}

// Summarize returns the net effect of changes, oldest first, the visible changes of
// one entry that are not baselines. current is the entry's version now (the history
// state's; "" when unknown): a version that went back silently (history follows a
// version seen within the week without recording it) cancels the change that left it.
func Summarize(changes []Change, current string) Summary {
	var s Summary
	if len(changes) == 0 {
		return s
	}
	for i := range changes {
		switch c := &changes[i]; c.Kind {
		case store.RecordDispute.String():
			s.Disputes = append(s.Disputes, fmt.Sprintf("a maintainer contested the check %s of round %s (dispute %d)", plainID(c.CheckID), plainID(c.Round), c.Number))
			s.LastDispute = c.Number
		case store.RecordOutcome.String():
			s.Disputes = append(s.Disputes, fmt.Sprintf("an operator decided dispute %d on the check %s: %s", c.Number, plainID(c.CheckID), decisionWords(c.Decision)))
			s.LastDispute = c.Number
		default:
			s.Last = c.Number
		}
	}

	// Tools: the net of the tool changes, and whether the list came back.
	var (
		firstTools, lastTools *Change
		added                 = map[string]bool{}
		removed               = map[string]bool{}
		changed               = map[string]*toolNet{}
		instrSeen             bool
		instrBefore           *string
		instrAfter            *string
		uncounted             bool
	)
	// Versions: the first before, the last after.
	var versionFrom, versionTo string
	// Edits: per field, the first text before and the last after.
	type edit struct {
		before, after *string
	}
	edits := map[string]*edit{}

	for i := range changes {
		c := &changes[i]
		switch c.Kind {
		case attest.ChangeTools:
			if firstTools == nil {
				firstTools = c
			}
			lastTools = c
			if c.Details == nil || c.Details.Diff == nil {
				uncounted = true
				continue
			}
			d := c.Details.Diff
			for _, r := range d.Removed {
				if added[r.Name] {
					delete(added, r.Name)
				} else {
					removed[r.Name] = true
				}
				delete(changed, r.Name)
			}
			for _, a := range d.Added {
				if removed[a.Name] {
					delete(removed, a.Name) // back again
				} else {
					added[a.Name] = true
				}
			}
			for j := range d.Changed {
				tc := &d.Changed[j]
				if added[tc.Name] {
					continue // new since the last e-mail: counted as added
				}
				m := changed[tc.Name]
				if m == nil {
					m = newToolNet(tc.Name)
					changed[tc.Name] = m
				}
				m.fold(tc, retyped(d, tc.Name))
			}
			if d.InstructionsChanged {
				if !instrSeen {
					instrSeen, instrBefore = true, d.InstructionsBefore
				}
				instrAfter = d.InstructionsAfter
			}
		case attest.ChangeVersion:
			if c.Details == nil {
				continue
			}
			if versionFrom == "" {
				versionFrom = c.Details.VersionBefore
			}
			versionTo = c.Details.VersionAfter
		case attest.ChangeOperatorEdit:
			field := "listing"
			if c.Details != nil && editField.MatchString(c.Details.Field) {
				field = c.Details.Field
			}
			e := edits[field]
			if e == nil {
				e = &edit{}
				if c.Details != nil {
					e.before = c.Details.Before
				}
				edits[field] = e
			}
			e.after = nil
			if c.Details != nil {
				e.after = c.Details.After
			}
		}
	}

	if firstTools != nil {
		back := firstTools.Before.Surface != "" && firstTools.Before.Surface == lastTools.After.Surface &&
			firstTools.Before.Instructions == lastTools.After.Instructions
		if !back {
			net := diff.Change{
				Added:   make([]diff.ToolRef, len(added)),
				Removed: make([]diff.ToolRef, len(removed)),
			}
			for _, name := range slices.Sorted(maps.Keys(changed)) {
				if tc, ok := changed[name].net(); ok {
					net.Changed = append(net.Changed, tc)
				}
			}
			if instrSeen && !sameText(instrBefore, instrAfter) {
				net.InstructionsChanged, net.InstructionsBefore, net.InstructionsAfter = true, instrBefore, instrAfter
			}
			// diff's own wording of a change: counts and fixed words only (its
			// Summary never names a tool).
			if w := net.Summary(); w != "no change" {
				s.Tools = w
			} else if uncounted || firstTools.Before.Surface != "" {
				// The fingerprints differ but nothing counted: a tool that went and came
				// back different, or details that did not decode.
				s.Tools = "tool list changed"
			}
			s.DiffersFromApproved = s.Tools != "" && lastTools.DiffersFromApproved
		}
	}
	if current != "" && versionTo != "" {
		versionTo = current
	}
	if versionFrom != "" && versionTo != "" && compareVersions(versionTo, versionFrom) > 0 {
		s.VersionFrom, s.VersionTo = shownVersion(versionFrom), shownVersion(versionTo)
	}
	for field, e := range edits {
		if e.before != nil && e.after != nil && *e.before == *e.after {
			continue // edited back
		}
		if field == history.FieldApprovedBaseline {
			s.NewBaseline = true
			continue
		}
		s.Edited = append(s.Edited, strings.ReplaceAll(field, "_", " "))
	}
	slices.Sort(s.Edited)
	s.Notable = s.Tools != "" || s.VersionTo != "" || len(s.Edited) > 0 || s.NewBaseline || len(s.Disputes) > 0
	return s
}

// plainID is a check or round id as an e-mail may carry it: Probity's own ids are
// [A-Za-z0-9_-]; anything else is left out.
func plainID(s string) string {
	if s == "" || len(s) > 64 || strings.ContainsFunc(s, func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r == '-')
	}) {
		return "?"
	}
	return s
}

// decisionWords says an outcome's decision in words.
func decisionWords(d string) string {
	switch d {
	case attest.DecisionUpheld:
		return "upheld, the finding was wrong"
	case attest.DecisionRejected:
		return "rejected, the finding stands"
	case attest.DecisionCorrected:
		return "corrected in a new check suite version"
	}
	return "decided"
}

// editField is an operator edit's field name as history records it.
var editField = regexp.MustCompile(`^[a-z][a-z_]{0,39}$`)

func sameText(a, b *string) bool {
	as, bs := "", ""
	if a != nil {
		as = *a
	}
	if b != nil {
		bs = *b
	}
	return as == bs
}

// toolNet is the net change of one remaining tool over the tool changes since the last
// e-mail: what Summary counts of it, from the first state before to the last after, so
// a part that changed and changed back (a description A → B → A, a parameter added and
// removed, a hint flipped and back) is not told. Texts are compared as the changes
// hold them; a part recorded without its states (parameter descriptions, schemas other
// than parameters added or removed, invisible characters) counts once it changed.
type toolNet struct {
	name                                 string
	titleSeen, descSeen                  bool
	titleBefore, titleAfter              string
	descBefore, descAfter                string
	params                               map[string]int // +1 added, -1 removed, 0 removed and back
	newlyRequired, paramDescs            map[string]bool
	schemaOther, outputSchema, invisible bool
	hints                                map[string]*diff.HintChange // first Before, last After
}

func newToolNet(name string) *toolNet {
	return &toolNet{name: name, params: map[string]int{}, newlyRequired: map[string]bool{},
		paramDescs: map[string]bool{}, hints: map[string]*diff.HintChange{}}
}

// fold adds a later change of the tool. retyped says the change found a parameter of
// the tool whose type changed.
func (n *toolNet) fold(tc *diff.ToolChange, retyped bool) {
	if tc.TitleChanged {
		if !n.titleSeen {
			n.titleSeen, n.titleBefore = true, tc.TitleBefore
		}
		n.titleAfter = tc.TitleAfter
	}
	if tc.DescriptionChanged {
		if !n.descSeen {
			n.descSeen, n.descBefore = true, tc.DescriptionBefore
		}
		n.descAfter = tc.DescriptionAfter
	}
	for _, p := range tc.ParamsRemoved {
		if st, ok := n.params[p]; ok && st == 1 {
			delete(n.params, p) // added and removed again
		} else {
			n.params[p] = -1
		}
		n.drop(p)
	}
	for _, p := range tc.ParamsAdded {
		if st, ok := n.params[p]; ok && st == -1 {
			// Back, perhaps not as it was: its schema counts as changed.
			n.params[p] = 0
			n.schemaOther = true
		} else {
			n.params[p] = 1
		}
	}
	for _, p := range tc.ParamsNewlyRequired {
		n.newlyRequired[p] = true
	}
	for _, p := range tc.ParamDescriptionsChanged {
		n.paramDescs[p] = true
	}
	// diff sets InputSchemaChanged for parameters added or removed too: it counts on
	// its own only without them, or with a parameter's type changed.
	params := len(tc.ParamsAdded) > 0 || len(tc.ParamsRemoved) > 0 || len(tc.ParamsNewlyRequired) > 0
	n.schemaOther = n.schemaOther || (tc.InputSchemaChanged && (!params || retyped))
	n.outputSchema = n.outputSchema || tc.OutputSchemaChanged
	n.invisible = n.invisible || tc.InvisibleNew
	for _, h := range tc.Hints {
		m := n.hints[h.Hint]
		if m == nil {
			m = &diff.HintChange{Hint: h.Hint, Before: h.Before}
			n.hints[h.Hint] = m
		}
		m.After = h.After
	}
}

// drop forgets what was told of the parameter p and those inside it, now removed.
func (n *toolNet) drop(p string) {
	under := func(q string) bool {
		return q == p || strings.HasPrefix(q, p+".") || strings.HasPrefix(q, p+"[")
	}
	maps.DeleteFunc(n.newlyRequired, func(q string, _ bool) bool { return under(q) })
	maps.DeleteFunc(n.paramDescs, func(q string, _ bool) bool { return under(q) })
}

// net returns the tool's net change, false when it came back to where it was in every
// part the changes hold the states of and nothing else changed.
func (n *toolNet) net() (diff.ToolChange, bool) {
	tc := diff.ToolChange{Name: n.name}
	tc.TitleChanged = n.titleSeen && n.titleBefore != n.titleAfter
	tc.DescriptionChanged = n.descSeen && n.descBefore != n.descAfter
	for _, p := range slices.Sorted(maps.Keys(n.params)) {
		switch n.params[p] {
		case 1:
			tc.ParamsAdded = append(tc.ParamsAdded, p)
		case -1:
			tc.ParamsRemoved = append(tc.ParamsRemoved, p)
		}
	}
	tc.ParamsNewlyRequired = slices.Sorted(maps.Keys(n.newlyRequired))
	tc.ParamDescriptionsChanged = slices.Sorted(maps.Keys(n.paramDescs))
	tc.InputSchemaChanged = n.schemaOther || len(tc.ParamsAdded) > 0 || len(tc.ParamsRemoved) > 0
	tc.OutputSchemaChanged = n.outputSchema
	for _, name := range slices.Sorted(maps.Keys(n.hints)) {
		if h := n.hints[name]; !sameHint(h.Before, h.After) {
			tc.Hints = append(tc.Hints, *h)
		}
	}
	tc.InvisibleNew = n.invisible
	return tc, tc.TitleChanged || tc.DescriptionChanged || len(tc.ParamsAdded) > 0 || len(tc.ParamsRemoved) > 0 ||
		len(tc.ParamsNewlyRequired) > 0 || len(tc.ParamDescriptionsChanged) > 0 || tc.InputSchemaChanged ||
		tc.OutputSchemaChanged || len(tc.Hints) > 0 || tc.InvisibleNew
}

// retyped reports whether d found a parameter of the tool whose type changed.
func retyped(d *diff.Change, tool string) bool {
	for _, b := range d.Breaking {
		if b.Tool == tool && b.Kind == diff.BreakingParamTypeChanged {
			return true
		}
	}
	return false
}

func sameHint(a, b *bool) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// version is a parsed semantic version: its numbers and pre-release identifiers
// (build metadata is dropped: semver gives it no precedence).
type version struct {
	core [3]uint64
	pre  []string
}

var versionRe = regexp.MustCompile(`^v?(0|[1-9][0-9]{0,18})\.(0|[1-9][0-9]{0,18})\.(0|[1-9][0-9]{0,18})(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$`)

func parseVersion(v string) (version, bool) {
	if len(v) > 64 {
		return version{}, false
	}
	m := versionRe.FindStringSubmatch(v)
	if m == nil {
		return version{}, false
	}
	var p version
	for i := range 3 {
		n, err := strconv.ParseUint(m[i+1], 10, 64)
		if err != nil {
			return version{}, false
		}
		p.core[i] = n
	}
	if m[4] != "" {
		p.pre = strings.Split(m[4], ".")
	}
	return p, true
}

// compareVersions compares two semantic versions by semver precedence (build metadata
// ignored: 1.2.0+build2 equals 1.2.0): -1, 0 or +1; 0 as well when either is not a
// version (then no increase is seen).
func compareVersions(a, b string) int {
	va, oka := parseVersion(a)
	vb, okb := parseVersion(b)
	if !oka || !okb {
		return 0
	}
	for i := range 3 {
		if va.core[i] != vb.core[i] {
			if va.core[i] < vb.core[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(va.pre) == 0 && len(vb.pre) == 0:
		return 0
	case len(va.pre) == 0:
		return 1 // a release ranks above its pre-releases
	case len(vb.pre) == 0:
		return -1
	}
	for i := 0; i < len(va.pre) && i < len(vb.pre); i++ {
		if c := comparePre(va.pre[i], vb.pre[i]); c != 0 {
			return c
		}
	}
	switch {
	case len(va.pre) < len(vb.pre):
		return -1
	case len(va.pre) > len(vb.pre):
		return 1
	}
	return 0
}

func comparePre(a, b string) int {
	na, ea := strconv.ParseUint(a, 10, 64)
	nb, eb := strconv.ParseUint(b, 10, 64)
	switch {
	case ea == nil && eb == nil:
		switch {
		case na < nb:
			return -1
		case na > nb:
			return 1
		}
		return 0
	case ea == nil:
		return -1 // numeric identifiers rank below alphanumeric ones
	case eb == nil:
		return 1
	}
	return strings.Compare(a, b)
}

// shownVersion is a version as an e-mail shows it: its numbers, and a pre-release only
// when it is digits and dots or a common word (alpha, beta, rc, …) with digits: a
// server's version string is its text, and a pre-release such as "see.example.com"
// would turn into a link in a mail reader.
func shownVersion(v string) string {
	p, ok := parseVersion(v)
	if !ok {
		return ""
	}
	out := strconv.FormatUint(p.core[0], 10) + "." + strconv.FormatUint(p.core[1], 10) + "." + strconv.FormatUint(p.core[2], 10)
	if len(p.pre) > 0 {
		pre := strings.Join(p.pre, ".")
		if preShown.MatchString(pre) {
			out += "-" + pre
		} else {
			out += " (pre-release)"
		}
	}
	return out
}

var preShown = regexp.MustCompile(`^(?:(?:alpha|beta|rc|pre|preview|dev|next|canary)(?:\.?[0-9]{1,9})?|[0-9]{1,9})(?:\.[0-9]{1,9}){0,3}$`)

// Windows works out, for one entry's changes (by number, all recorded after the plan's
// oldest time and numbered at or below its ThroughSeq), for which starts an account has
// something to be told. An account's pending changes of the entry are those numbered
// after its covered number c and recorded after f, the later of its follow's start
// and the plan's oldest time; a window says that they are Notable for every c in
// [SeqFrom, SeqTo) and f in [From, To). The starts that matter fall between the
// changes' numbers and between their recorded times, so the windows are found by
// summarizing each such pair's changes; windows that touch are merged, the first ones
// with SeqFrom 0 and a zero From (any start before them). When numbers follow the
// recorded order (changes committed in order) they are one row: a window per run of
// starts, as by time alone.
func Windows(entryID int64, changes []Change, current string) []store.NotifyWindow {
	if len(changes) > maxRuleChanges {
		changes = changes[len(changes)-maxRuleChanges:]
	}
	seqs := make([]int64, 0, len(changes))
	times := make([]time.Time, 0, len(changes))
	for i := range changes {
		seqs = append(seqs, changes[i].Seq)
		times = append(times, changes[i].RecordedAt)
	}
	slices.Sort(seqs)
	seqs = slices.Compact(seqs)
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	times = slices.CompactFunc(times, time.Time.Equal)

	var (
		ws      []store.NotifyWindow
		prevRow []int // indexes in ws of the windows of the previous seq interval
		subset  = make([]Change, 0, len(changes))
	)
	for k, seqTo := range seqs {
		var seqFrom int64
		if k > 0 {
			seqFrom = seqs[k-1]
		}
		var row []store.NotifyWindow
		for m, to := range times {
			var from time.Time
			if m > 0 {
				from = times[m-1]
			}
			// The changes told to a start in [seqFrom, seqTo) × [from, to): numbered at
			// or after seqTo, recorded at or after to.
			subset = subset[:0]
			for i := range changes {
				if changes[i].Seq >= seqTo && !changes[i].RecordedAt.Before(to) {
					subset = append(subset, changes[i])
				}
			}
			if len(subset) == 0 || !Summarize(subset, current).Notable {
				continue
			}
			if n := len(row); n > 0 && row[n-1].To.Equal(from) {
				row[n-1].To = to
				continue
			}
			row = append(row, store.NotifyWindow{EntryID: entryID, SeqFrom: seqFrom, SeqTo: seqTo, From: from, To: to})
		}
		// A window of this interval that has the same times as one of the previous
		// interval extends it.
		var thisRow []int
		for _, w := range row {
			merged := false
			for _, p := range prevRow {
				if ws[p].SeqTo == seqFrom && ws[p].From.Equal(w.From) && ws[p].To.Equal(w.To) {
					ws[p].SeqTo = seqTo
					thisRow = append(thisRow, p)
					merged = true
					break
				}
			}
			if !merged {
				ws = append(ws, w)
				thisRow = append(thisRow, len(ws)-1)
			}
		}
		prevRow = thisRow
	}
	return ws
}

// PlanTimes are the times one planning step works with.
type PlanTimes struct {
	Now time.Time
	// Oldest is Now - MaxAge: no change recorded before it is e-mailed.
	Oldest time.Time
	// HourlyBefore is Now - HourlyGap: an hourly account whose last e-mail was at or
	// before it is due.
	HourlyBefore time.Time
	// Daily is the newest daily summary time at or before Now: a daily account whose
	// last window closed before it is due.
	Daily time.Time
	// DailyReady is Daily plus the settling time: the daily summaries are planned
	// from then on, so that a change recorded just before the summary time, and
	// committed a little after it, is in them.
	DailyReady time.Time
}

// Times returns the planning times at now, with the settling time and the hour of the
// day (UTC, 0–23) daily summaries are made at.
func Times(now time.Time, settle time.Duration, dailyHour int) PlanTimes {
	now = now.UTC()
	daily := time.Date(now.Year(), now.Month(), now.Day(), dailyHour, 0, 0, 0, time.UTC)
	if daily.After(now) {
		daily = daily.AddDate(0, 0, -1)
	}
	return PlanTimes{
		Now: now, Oldest: now.Add(-MaxAge),
		HourlyBefore: now.Add(-HourlyGap), Daily: daily, DailyReady: daily.Add(settle),
	}
}

// Due reports whether an account with settings st is due for an e-mail at the plan's
// times: hourly when its last e-mail was an hour ago or more, daily when its last
// window closed before the day's summary time, never when off. It is the condition
// store.PlanEmails applies in SQL (which also waits for an e-mail of the account still
// pending or sending), stated for tests and the Followed page.
func Due(st store.NotifySettings, t PlanTimes) bool {
	switch st.Mode {
	case store.MailHourly:
		return st.LastEmailAt.IsZero() || !st.LastEmailAt.After(t.HourlyBefore)
	case store.MailDaily:
		return st.CoveredThrough.IsZero() || st.CoveredThrough.Before(t.Daily)
	}
	return false
}
