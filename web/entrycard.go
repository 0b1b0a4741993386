package web

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/history/stats"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/web/badge"
)

// The top of every tab of an entry (issue 16, "the entry page leads with the answer"):
// the entry's name, the tabs, and a summary card whose lead sentence says what was
// observed, followed by Verified or why not, the 30-day uptime, the last change, the
// coverage and when the entry was last read.

// The tabs of an entry, each its own address (no script switches them).
const (
	tabOverview = "overview"
	tabSetup    = "setup"
	tabChecks   = "checks"
	tabSupply   = "supply"
	tabHistory  = "history"
	tabVerify   = "verify"
	tabFAQ      = "faq"
)

// entryTabs are the tabs in the order the navigation shows them, each with its label
// and the path after /s/{slug}.
var entryTabs = []struct{ ID, Label, Path string }{
	{tabOverview, "Overview", ""},
	{tabSetup, "Setup", "/setup"},
	{tabChecks, "Checks", "/checks"},
	{tabSupply, "Supply chain", "/supply"},
	{tabHistory, "History", "/history"},
	{tabVerify, "Verify", "/verify"},
	{tabFAQ, "FAQ", "/faq"},
}

// tabLink is one link of the tabs' navigation.
type tabLink struct {
	Label, Href string
	Current     bool
}

// entryHead is what every tab of an entry shows on top: its name, where it lives, the
// tabs, and the summary card. Templates read it as .Head ("entry-tabs", "entry-card").
type entryHead struct {
	Slug, Name, Kind, Locator string
	// ServerName is the listed server name ("" when none).
	ServerName string
	// State is the badge's state (stateVerified, stateSigned, stateUnsigned).
	State string
	Tab   string // the current tab (tab*)
	Tabs  []tabLink
	Card  cardView
	Links links
	// signed is the newest signed round (EntryDigest.SignedRound; nil when none): the
	// round the card counts, and the one the Checks tab shows.
	signed *store.RoundSummary
	// entryID is the entry's id (the Follow button's).
	entryID int64
	// Claimed is whether the entry has a maintainer (never who: seed 000).
	Claimed bool
	// Verified is whether the entry is Verified now (the report link's condition);
	// Withdrawn, when set, is its withdrawn Verified.
	Verified  bool
	Withdrawn *withdrawnNote
	// Follow is the Follow button for the request's viewer (follow.go), set by the
	// handler; nil when the site has no follows.
	Follow *followButton `json:"-"`
}

// Card statuses: the suffix of the status label's class (status-…), which the label's
// text says in words too.
const (
	cardFailed   = "failed"
	cardRisk     = "risk"
	cardOK       = "ok"
	cardVerified = "verified"
	cardOffline  = "offline"
	cardLogin    = "login"
	cardNone     = "none"
)

// cardView is the summary card. Its text is this package's own, but for the round id
// and the change's summary, which are made visible like any other stored text.
type cardView struct {
	// Status is one of card*; Label says it in a few words ("2 risks", "offline").
	Status, Label string
	// Lead is the card's sentence without its findings; Findings are named after it,
	// each linked to its check on the Checks tab. Sentence is the whole sentence as
	// plain text (the JSON's and the tests').
	Lead     string
	Findings []findingView
	Sentence string
	// Failed and ObservedRisk count the findings of the newest signed round, Checks its
	// check results; SignedRound is that round (nil when none is signed).
	Failed, ObservedRisk, Checks int
	// Unverified counts the checks of that round that could not observe (UNVERIFIED).
	Unverified  int
	SignedRound *roundRef
	// SignedRoundNote, when set, says what the newest signed round found where the
	// sentence speaks of a newer round (offline, unsigned).
	SignedRoundNote string
	// BaselineNote, when set, says that the newest signed round's tools differ from
	// the approved baseline (a *_unchanged_vs_approved check found the change).
	BaselineNote string
	// Verified is the one Verified rule (summaryOf.State); VerifiedText says it with
	// the score, or why not.
	Verified     bool
	Score        int // -1: no supply run
	VerifiedText string
	// UptimeText is the 30-day uptime in words.
	UptimeText string
	// LastChange is the newest visible change that is not a baseline (nil: none among
	// the changes read); LastChangeAt its time, or Entry.LastChangeAt.
	LastChange   *changeView
	LastChangeAt time.Time
	// Coverage is the newest signed round's coverage ("" none), CoverageText it in
	// words.
	Coverage, CoverageText string
	// LastRead is when Probity last read the entry, LastReadWhat by what.
	LastRead     time.Time
	LastReadWhat string
}

// findingView is one finding named by the card: a check that FAILED or found an
// OBSERVED_RISK, by its id (the anchor on the Checks tab) and a short name.
type findingView struct {
	ID, Name, Status string
}

// roundRef names a stored round on a page.
type roundRef struct {
	RoundID   string    `json:"roundId"`
	StartedAt time.Time `json:"startedAt"`
	Coverage  string    `json:"coverage"`
}

// findingNames are the short names of the checks' findings, as the card's sentence
// says them ("2 risks found …: hidden instructions, a destructive tool without a
// hint"); the Checks tab shows each check's catalog title. A check not named here is
// called by its id.
var findingNames = map[string]string{
	"reachability":                  "the endpoint does not answer",
	"latency":                       "slow answers",
	"tls_certificate":               "a TLS certificate problem",
	"transport":                     "the transport",
	"protocol_revision":             "an unknown protocol version",
	"discovery_handshake":           "a broken handshake",
	"tools_list":                    "an incomplete tool list",
	"error_taxonomy":                "a wrong answer to an unknown tool",
	"redirect_policy":               "redirects off the host or to http",
	"auth_metadata":                 "inconsistent login metadata",
	"hidden_instructions":           "hidden instructions",
	"destructive_annotations":       "a destructive tool without a hint",
	"toolset_unchanged_vs_approved": "tool names differ from the approved baseline",
	"schema_unchanged_vs_approved":  "tool schemas differ from the approved baseline",
	"surface_unchanged_vs_approved": "the tool surface differs from the approved baseline",
}

// findingName is the short name of check id's finding.
func findingName(id string) string {
	if n, ok := findingNames[id]; ok {
		return n
	}
	return strings.ReplaceAll(id, "_", " ")
}

// signedRound returns the newest signed round of the entry of d (EntryDigest's
// SignedRound; nil when none) with its check views.
func (s *site) signedRound(ctx context.Context, d *store.EntryDigest) (*store.RoundSummary, []checkView, error) {
	r := d.SignedRound
	if r == nil {
		return nil, nil, nil
	}
	cv, err := s.roundChecks(ctx, d.Entry.Slug, r)
	if err != nil {
		return nil, nil, err
	}
	return r, cv, nil
}

// roundChecks returns the check views of a stored round, remembered by its id.
func (s *site) roundChecks(ctx context.Context, slug string, r *store.RoundSummary) ([]checkView, error) {
	return s.checks.get(r.ID, func() ([]checkView, error) {
		raw, err := s.st.RoundResults(ctx, r.ID)
		if err != nil {
			return nil, err
		}
		cv, err := checkViews(raw)
		if err != nil {
			return nil, fmt.Errorf("couldn't read the results of round %s of %s: %w", r.RoundID, slug, err)
		}
		return cv, nil
	})
}

// supplyViewOfRun returns the view of the entry's supply run id, remembered by its id.
func (s *site) supplyViewOfRun(ctx context.Context, e store.Entry, id int64) (*supplyView, error) {
	sv, err := s.supplyViews.get(id, func() (*supplyView, error) {
		full, err := s.supplyRun(ctx, e.ID, id)
		if err != nil {
			return nil, fmt.Errorf("couldn't read supply run %d of %s: %w", id, e.Slug, err)
		}
		sv, err := supplyViewOf(full)
		if err != nil {
			return nil, fmt.Errorf("couldn't read supply run %d of %s: %w", id, e.Slug, err)
		}
		return sv, nil
	})
	return withdrawnView(sv, e), err
}

// withdrawnView is sv as entry e shows it: not Verified while an operator's withdrawal
// stands (store.IsVerified), whatever the run found. sv is shared: it is copied.
func withdrawnView(sv *supplyView, e store.Entry) *supplyView {
	if sv == nil || !e.VerifiedWithdrawn || !sv.Verified {
		return sv
	}
	c := *sv
	c.Verified = false
	return &c
}

func supplySize(sv *supplyView) int {
	n := 128
	for _, s := range sv.NotVerified {
		n += 16 + len(s)
	}
	for _, r := range sv.Results {
		n += 128 + len(r.ID) + len(r.Title) + len(r.Group) + len(r.Status) + len(r.StatusText) + len(r.Reason) + len(r.SourceURL)
		for _, e := range r.Evidence {
			n += 48 + len(e.What) + len(e.Sample) + len(e.Link)
		}
	}
	return n
}

// head builds the top of tab of the entry of d.
func (s *site) head(ctx context.Context, d *store.EntryDigest, tab string) (*entryHead, error) {
	e := d.Entry
	h := &entryHead{Slug: e.Slug, Name: displayName(e), Kind: e.Kind, Locator: visibleLine(e.Locator), Tab: tab, Links: s.links(e.Slug), entryID: e.ID, Claimed: e.Claimed}
	if n := visibleLine(d.Listing.ServerName); n != "" {
		h.ServerName = cut(n, maxListingLine)
	} else {
		h.ServerName = cut(visibleLine(e.ServerName), maxListingLine)
	}
	for _, t := range entryTabs {
		h.Tabs = append(h.Tabs, tabLink{Label: t.Label, Href: "/s/" + e.Slug + t.Path, Current: t.ID == tab})
	}
	signed, checks, err := s.signedRound(ctx, d)
	if err != nil {
		return nil, err
	}
	var sv *supplyView
	if d.Supply != nil {
		if sv, err = s.supplyViewOfRun(ctx, e, d.Supply.ID); err != nil {
			return nil, err
		}
	}
	roundState, runState := digestState(d)
	sum := stateOf(e, roundState, runState)
	h.State = sum.State
	h.Card = cardOf(d, sum, signed, checks, sv)
	h.signed = signed
	for i := range d.Changes {
		c := &d.Changes[i]
		if c.Hidden || c.Kind == attest.ChangeBaseline {
			continue
		}
		c.EntrySlug = e.Slug
		cv := s.changeView(c, false)
		h.Card.LastChange, h.Card.LastChangeAt = &cv, cv.At
		break
	}
	if h.Card.LastChange == nil && !e.LastChangeAt.IsZero() {
		h.Card.LastChangeAt = e.LastChangeAt.UTC()
	}
	if e.VerifiedWithdrawn {
		if h.Withdrawn, err = s.withdrawnNote(ctx, e); err != nil {
			return nil, err
		}
		h.Card.VerifiedText = "No: an operator withdrew Verified on " + h.Withdrawn.At.UTC().Format(time.DateOnly) + " (see above)."
	}
	h.Verified = h.State == stateVerified
	return h, nil
}

// withdrawnNote is what the entry's page says of its withdrawn Verified: its newest
// withdrawal record, with the reason (shown as plain text) and the record's bundle.
func (s *site) withdrawnNote(ctx context.Context, e store.Entry) (*withdrawnNote, error) {
	ws, err := s.st.Withdrawals(ctx, e.ID)
	if err != nil {
		return nil, fmt.Errorf("couldn't read the withdrawals of %s: %w", e.Slug, err)
	}
	if len(ws) == 0 {
		return nil, fmt.Errorf("entry %s is withdrawn without a withdrawal record", e.Slug)
	}
	w := ws[len(ws)-1]
	n := &withdrawnNote{At: w.At, Reason: plainLines(w.Reason), Number: w.Number, Seq: w.Seq}
	if w.Seq > 0 {
		n.Bundle = "/bundle/" + strconv.FormatInt(w.Seq, 10) + ".json"
	}
	return n, nil
}

// withdrawnNote says that an operator withdrew an entry's Verified (a withdrawal/v1
// record): when, why (an operator's plain text), and the record.
type withdrawnNote struct {
	At     time.Time
	Reason string
	Number int64
	Seq    int64  // the record's ledger number (0 while pending)
	Bundle string // its bundle's address ("" while pending)
}

// plainLines is text with every character made visible but line feeds and tabs, for a
// page that shows it as plain text (html/template escapes it).
func plainLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = visibleLine(l)
	}
	return strings.Join(lines, "\n")
}

// cardOf decides the summary card of the entry of d: sum is its state, signed its
// newest signed round (nil: none) with that round's checks, sv its newest supply run's
// view (nil: none).
//
// Its status label is the entry's verdict (verdict.go: what its badge and its directory
// row say too). The sentence says it: that nothing was checked yet; that the newest
// round got no answer (offline), with what the newest signed round found; the findings
// of the newest signed round, named; that the server asks for a login; and otherwise
// what the rounds found without findings (none, or the newest round not signed, or no
// round signed yet), or for a package or repository, which is never run, what the
// supply-chain checks found.
func cardOf(d *store.EntryDigest, sum summaryOf, signed *store.RoundSummary, checks []checkView, sv *supplyView) cardView {
	e := d.Entry
	roundState, runState := digestState(d)
	verdict := verdictOf(roundState, runState)
	c := cardView{Score: sum.Score, Verified: sum.State == stateVerified, Coverage: sum.Coverage}
	c.Status, c.Label = verdictLabel(verdict, roundState, runState)
	if signed != nil {
		c.SignedRound = &roundRef{RoundID: visibleLine(signed.RoundID), StartedAt: signed.StartedAt.UTC(), Coverage: signed.Coverage}
		// The findings are counted where the badge and the directory count them; the
		// round's checks name them.
		c.Failed, c.ObservedRisk = roundState.Failed, roundState.ObservedRisk
		c.Checks = len(checks)
		for _, cv := range checks {
			switch attest.CheckStatus(cv.Status) {
			case attest.StatusFailed, attest.StatusObservedRisk:
				c.Findings = append(c.Findings, findingView{ID: cv.ID, Name: findingName(cv.ID), Status: cv.Status})
				if strings.HasSuffix(cv.ID, "_unchanged_vs_approved") {
					c.BaselineNote = "The current tools differ from the approved baseline."
				}
			case attest.StatusUnverified:
				c.Unverified++
			}
		}
		// FAILED before OBSERVED_RISK, each in the catalog's order.
		failedFirst(c.Findings)
	}
	round := d.Round
	switch verdict {
	case badge.NotYetChecked:
		c.Lead = "Not yet checked"
		if e.Kind == store.KindRemote {
			c.Lead = "Not yet checked: no round has read this server yet"
		}
		c.Findings = nil
	case badge.Offline:
		c.Lead = "Offline: the newest round got no answer (" + reachText(round) + ")"
		c.SignedRoundNote = signedNote(&c)
		c.Findings = nil
	case badge.Risks:
		c.Lead = findingsPhrase(c.Failed, c.ObservedRisk) + " in the newest signed round"
		if !round.Signed {
			c.SignedRoundNote = "The newest round was not signed (" + visibleLine(round.UnsignedReason) + "); the findings are those of the newest signed round."
		}
	case badge.LoginRequired:
		c.Lead = fmt.Sprintf("Login required: the server asks for a login before it lists its tools; no findings in the newest signed round (%s, %d of them unable to look behind the login)",
			stats.Plural(c.Checks, "check", "checks"), c.Unverified)
	default:
		// No findings: Verified, a supply run only, unsigned, none found, or checked.
		switch {
		case round == nil: // a package or repository, or a remote before its first round: its supply run only
			what := "package"
			switch {
			case e.Kind == store.KindGitHub:
				what = "repository"
			case e.Kind == store.KindRemote:
				what = "server"
			}
			c.Lead = fmt.Sprintf("The supply-chain checks of this %s scored %d of 100", what, sum.Score)
			if !runState.Signed {
				c.Lead += ", unsigned"
			}
			if e.Kind == store.KindRemote {
				c.Lead += "; no round has read its tools yet"
			} else {
				c.Lead += "; Probity never runs it, so no tool list was checked"
			}
		case !round.Signed && signed == nil:
			c.Lead = "No signed round yet: the newest round was not signed (" + visibleLine(round.UnsignedReason) + ")"
		case !round.Signed:
			c.Lead = "The newest round was not signed (" + visibleLine(round.UnsignedReason) + ")"
			c.SignedRoundNote = signedNote(&c)
		case verdict == badge.Checked:
			c.Lead = fmt.Sprintf("No findings in the newest signed round (%s), whose coverage %q this site does not know",
				stats.Plural(c.Checks, "check", "checks"), visibleLine(round.Coverage))
		default:
			c.Lead = fmt.Sprintf("No findings in the newest signed round (%s)", stats.Plural(c.Checks, "check", "checks"))
		}
	}
	c.Sentence = c.Lead
	for i, f := range c.Findings {
		if i == 0 {
			c.Sentence += ": "
		} else {
			c.Sentence += ", "
		}
		c.Sentence += f.Name
	}
	c.VerifiedText = verifiedText(sum, sv)
	c.UptimeText = cardUptime(e)
	c.CoverageText = coverageText(sum.Coverage)
	c.LastRead, c.LastReadWhat = e.LastRoundAt.UTC(), "its newest round"
	if e.LastRoundAt.IsZero() {
		c.LastReadWhat = ""
	}
	if d.Supply != nil && d.Supply.RanAt.After(e.LastRoundAt) {
		c.LastRead, c.LastReadWhat = d.Supply.RanAt.UTC(), "its newest supply-chain checks"
	}
	return c
}

// failedFirst orders findings FAILED first, keeping the order within each status.
func failedFirst(fs []findingView) {
	var failed, risk []findingView
	for _, f := range fs {
		if f.Status == string(attest.StatusFailed) {
			failed = append(failed, f)
		} else {
			risk = append(risk, f)
		}
	}
	copy(fs, append(failed, risk...))
}

// findingsPhrase counts findings in words: "2 risks found", "1 check failed", "1 check
// failed and 2 risks found".
func findingsPhrase(failed, risks int) string {
	var parts []string
	if failed > 0 {
		parts = append(parts, stats.Plural(failed, "check", "checks")+" failed")
	}
	if risks > 0 {
		parts = append(parts, stats.Plural(risks, "risk", "risks")+" found")
	}
	return strings.Join(parts, " and ")
}

// signedNote says what the newest signed round found, for a card whose sentence is
// about a newer round; "" when no round is signed.
func signedNote(c *cardView) string {
	if c.SignedRound == nil {
		return "No round of this server has been signed yet."
	}
	if n := c.Failed + c.ObservedRisk; n > 0 {
		names := make([]string, len(c.Findings))
		for i, f := range c.Findings {
			names[i] = f.Name
		}
		return "The newest signed round, at " + utc(c.SignedRound.StartedAt) + ": " + findingsPhrase(c.Failed, c.ObservedRisk) + " (" + strings.Join(names, ", ") + ")."
	}
	return "The newest signed round, at " + utc(c.SignedRound.StartedAt) + ", found nothing (" + stats.Plural(c.Checks, "check", "checks") + ")."
}

// reachText says why a round got no answer: the probe's reach failure in words, else
// its unsigned reason.
func reachText(r *store.RoundSummary) string {
	switch r.Reach {
	case "dns":
		return "the name did not resolve"
	case "connect":
		return "connection refused or unreachable"
	case "timeout":
		return "timeout"
	case "tls":
		return "the TLS handshake failed"
	case "http_5xx":
		if r.HTTPStatus > 0 {
			return "HTTP " + strconv.Itoa(r.HTTPStatus)
		}
		return "an HTTP 5xx error"
	case "":
		if r.UnsignedReason != "" {
			return visibleLine(r.UnsignedReason)
		}
		return "no answer"
	}
	return strings.ReplaceAll(visibleLine(r.Reach), "_", " ")
}

// verifiedText answers "Verified?" with the score, and why not.
func verifiedText(sum summaryOf, sv *supplyView) string {
	switch {
	case sum.State == stateVerified:
		return fmt.Sprintf("Yes: the signed supply-chain checks passed, score %d of 100.", sum.Score)
	case sv == nil:
		return "No: the supply-chain checks have not run yet."
	}
	t := fmt.Sprintf("No, score %d of 100: not Verified", sv.Score)
	if !sv.Signed {
		// As the supply checks' section says it.
		t += " (unsigned"
		if sv.Passed {
			t += ": its checks passed, but only a signed run counts"
		}
		t += ")"
	}
	why := sv.NotVerified
	if len(why) > 3 {
		why = append(why[:3:3], "…")
	}
	if len(why) > 0 {
		t += ": " + strings.Join(why, "; ")
	}
	return t + "."
}

// cardUptime is the entry's uptime over the 30 days up to its newest counted day, as
// the directory counts it (uptimeText).
func cardUptime(e store.Entry) string {
	if e.Kind != store.KindRemote {
		return "Not measured: only remote servers are probed."
	}
	on, counted := e.Uptime30OnlineDays, e.Uptime30CountedDays
	if counted == 0 {
		return "No day counted in the last 30 days."
	}
	return fmt.Sprintf("Online on %d of %s in the last 30 days (%s).", on, stats.Plural(counted, "counted day", "counted days"), uptimeText(on, counted))
}

// coverageText says what a coverage means.
func coverageText(coverage string) string {
	switch coverage {
	case badge.CoverageFull:
		return "full: every check ran on the whole tool list"
	case badge.CoverageAuthRequired:
		return "auth_required: the server asks for a login, so only the checks that need no tool list ran"
	case "":
		return "none: no round is signed"
	}
	return visibleLine(coverage)
}
