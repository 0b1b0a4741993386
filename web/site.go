package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/checks"
	"github.com/probity-dev/probity/checks/supply"
	"github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/history/diff"
	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/web/badge"
	"github.com/probity-dev/probity/web/feed"
)

// site reads the store and builds what the handlers show. Its methods take decoded,
// bounded requests and return view values whose server-supplied text is already made
// visible; escaping is left to the output (html/template, encoding/json, markdown).
type site struct {
	st       Store
	log      Log // nil: no transparency log served
	keysJSON []byte
	keyDoc   *keys.Document // the key document keysJSON encodes (the Verify tab's fingerprints)
	base     string
	feed     feed.Config
	now      func() time.Time
	stats    statsCache // the computed statistics (stats.go)
	// tools and checks remember the views of immutable data for the entry's JSON and
	// Markdown: a page of a surface's tools by its fingerprint and page number
	// (toolpages.go), a stored round's checks by its id (memo.go).
	tools  *memo[toolPageKey, toolPage]
	checks *memo[int64, []checkView]
	// supplyViews remembers the view of a stored supply run by its id: the card's
	// "Verified or why not" and the Supply chain tab read it.
	supplyViews *memo[int64, *supplyView]
	toolBuilds  *toolBuilder
	// The entry page's sections of immutable data, rendered once (fragment): a page of
	// its tools by surface fingerprint and page, its checks by round id, its
	// supply checks by run id.
	toolsHTML  *memo[toolPageKey, template.HTML]
	checksHTML *memo[int64, template.HTML]
	supplyHTML *memo[int64, template.HTML]
	// uptimeHTML is the uptime section by its content (uptimeKey): many entries share
	// one, such as thirty days online.
	uptimeHTML *memo[string, template.HTML]
	// dirFeed is the last directory feed rendered (published.go).
	dirFeed lastFeed
	// dirProtocols are the protocol versions the directory's filter offers.
	dirProtocols protocolList
	// fragments holds the templates of those sections ("tools", "checks", "supply",
	// "uptime").
	fragments *template.Template
}

// newSite returns a site with its memos; fragments are the entry page's templates.
func newSite(st Store, fragments *template.Template) *site {
	return &site{
		st:          st,
		fragments:   fragments,
		tools:       newMemo[toolPageKey](16<<20, toolPageSize),
		checks:      newMemo[int64](16<<20, checksSize),
		supplyViews: newMemo[int64](8<<20, supplySize),
		toolBuilds:  newToolBuilder(),
		toolsHTML:   newMemo[toolPageKey](48<<20, htmlSize),
		checksHTML:  newMemo[int64](48<<20, htmlSize),
		supplyHTML:  newMemo[int64](32<<20, htmlSize),
		uptimeHTML:  newMemo[string](8<<20, htmlSize),
	}
}

// memoStats reports the site's memos by name, for /metrics.
func (s *site) memoStats() map[string]memoStats {
	return map[string]memoStats{
		"tools": s.tools.stats(), "checks": s.checks.stats(), "supply": s.supplyViews.stats(),
		"tools_html": s.toolsHTML.stats(), "checks_html": s.checksHTML.stats(), "supply_html": s.supplyHTML.stats(),
		"uptime_html": s.uptimeHTML.stats(),
	}
}

func htmlSize(h template.HTML) int { return len(h) }

func toolsSize(ts []toolView) int {
	n := 0
	for _, t := range ts {
		n += 48 + len(t.Name) + len(t.Title) + len(t.Description)
	}
	return n
}

func checksSize(cs []checkView) int {
	n := 0
	for _, c := range cs {
		n += 64 + len(c.ID) + len(c.Title) + len(c.Status) + len(c.Reason)
		for _, e := range c.Evidence {
			n += 72 + len(e.Tool) + len(e.Field) + len(e.Sample) + len(e.Note)
		}
	}
	return n
}

// section returns the entry page's section name for key from m, rendering it from the
// view that view returns on a miss. An error, ErrNotFound included, is not remembered.
func section[K comparable, V any](s *site, m *memo[K, template.HTML], key K, name string, view func() (V, error)) (template.HTML, error) {
	return m.get(key, func() (template.HTML, error) {
		v, err := view()
		if err != nil {
			return "", err
		}
		return s.fragment(name, v)
	})
}

// fragment renders the entry page's section name with data.
func (s *site) fragment(name string, data any) (template.HTML, error) {
	var b strings.Builder
	if err := s.fragments.ExecuteTemplate(&b, name, data); err != nil {
		return "", err
	}
	return template.HTML(b.String()), nil // html/template escaped it
}

const (
	pageSize        = 100 // directory rows and history changes per page
	detailedChanges = 10  // the newest changes of the history shown with details
	recentChanges   = 50  // /changes
	jsonChanges     = 30  // the history object of an entry's JSON
	markdownChanges = 5   // the changes in an entry's Markdown
	uptimeDays      = 30  // the recent days shown
	recentWindow    = 7 * 24 * time.Hour
	// maxDetails bounds a change's details JSON that is decoded for display.
	maxDetails = 4 << 20
)

// Bounds of the history page.
const (
	// maxNames bounds the tools a change lists on the history page (each of added,
	// removed and changed, and the names of an older change); the rest are counted.
	maxNames = 50
	// historyDetailsCost bounds the details one history page shows (fitDetails): the
	// newest changes show theirs until it is spent, cut to what fits.
	historyDetailsCost = 512 << 10
)

// Badge states, as the directory and the entry page show them.
const (
	stateVerified = "Verified"
	stateSigned   = "signed"
	stateUnsigned = "unsigned"
)

// summaryOf is what the directory and the entry's header show of an entry's state.
type summaryOf struct {
	State    string // stateVerified, stateSigned or stateUnsigned
	Coverage string // "full", "auth_required", or "" (no signed round)
	Score    int    // of the newest supply run; -1 when none
	LastSeen time.Time
}

// stateOf is the summary of e with the state of its newest round and supply run.
func stateOf(e store.Entry, round store.RoundState, run store.SupplyState) summaryOf {
	sum := summaryOf{State: stateUnsigned, Score: -1, LastSeen: e.LastRoundAt}
	if round.Present && round.Signed {
		sum.State, sum.Coverage = stateSigned, round.Coverage
	}
	if run.Present {
		sum.Score = run.Score
		if run.Signed && !round.Present {
			// Without a round the signed record of the server is its supply run: a
			// package or repository is never probed, and a remote's supply run can come
			// before its first round. Its parts were checked; it is signed, not "not yet
			// probed".
			sum.State = stateSigned
		}
		if store.IsVerified(run.Passed, run.Signed, run.Withdrawn || e.VerifiedWithdrawn) {
			sum.State = stateVerified
		}
	}
	return sum
}

// digestState is the state of an entry's newest round (with its newest signed round's
// findings) and supply run as EntryDigest reads them: what a directory row holds of
// the entry.
func digestState(d *store.EntryDigest) (store.RoundState, store.SupplyState) {
	var (
		round store.RoundState
		run   store.SupplyState
	)
	if r := d.Round; r != nil {
		round = store.RoundState{Present: true, Signed: r.Signed, Coverage: r.Coverage, Uptime: r.Uptime}
	}
	if r := d.SignedRound; r != nil && r.Signed {
		round.SignedRound, round.Failed, round.ObservedRisk = true, r.Failed, r.ObservedRisk
		round.ToolCount, round.ProtocolVersion = r.ToolCount, r.ProtocolVersion
	}
	if r := d.Supply; r != nil {
		run = store.SupplyState{Present: true, Score: r.Score, Passed: r.Verified, Signed: d.SupplySigned, Withdrawn: d.Entry.VerifiedWithdrawn}
	}
	return round, run
}

// --- Directory ---

// The directory's orders (?sort=), by their parameter values; "" is the id order.
var dirSorts = map[string]store.DirectoryOrder{
	"": store.ByID, "name": store.ByName, "change": store.ByLastChange,
	"findings": store.ByFindings, "uptime": store.ByUptime,
}

// dirSortLinks are the sort links the page offers, in order.
var dirSortLinks = []struct{ Value, Label string }{
	{"", "added"}, {"name", "name"}, {"change", "last change"}, {"findings", "findings"}, {"uptime", "uptime"},
}

// dirQuery is a decoded directory request.
type dirQuery struct {
	Q        string
	Kind     string
	Verified bool
	Changed  bool   // a last change (baselines excluded) in the last 7 days
	Offline  bool   // the newest round got no answer
	Findings bool   // the newest signed round has findings
	Protocol string // the newest signed round's protocol version; "" any
	Sort     string // a key of dirSorts
	Page     int    // 1-based
}

// values is q as URL parameters, without its defaults, for page page (1: none).
func (q dirQuery) values(page int) url.Values {
	v := url.Values{}
	set := func(k, x string) {
		if x != "" {
			v.Set(k, x)
		}
	}
	flag := func(k string, b bool, x string) {
		if b {
			v.Set(k, x)
		}
	}
	set("q", q.Q)
	set("kind", q.Kind)
	flag("verified", q.Verified, "1")
	flag("changed", q.Changed, "7d")
	flag("offline", q.Offline, "1")
	flag("findings", q.Findings, "1")
	set("protocol", q.Protocol)
	set("sort", q.Sort)
	if page > 1 {
		v.Set("page", strconv.Itoa(page))
	}
	return v
}

// dirRow is one entry of the directory with what it shows of its state.
type dirRow struct {
	// Name is the listed title when the server has one, else the entry's name; Listed
	// is the entry's name under it when a title is shown ("" otherwise).
	Slug, Name, Listed, Kind, KindLabel, Locator string
	summaryOf
	// Verdict and VerdictLabel are the entry's verdict (verdictOf), as the badge and
	// the entry's card say it: the label's class suffix and its words.
	Verdict, VerdictLabel string
	// Checked: the entry has a signed round, whose Failed and Risks (OBSERVED_RISK)
	// findings and Tools count are shown.
	Checked       bool
	Failed, Risks int
	Tools         int
	// Supply says Verified with its score, or why not.
	Supply string
	// Uptime is the 30-day uptime ("98.3 %"; "" without counted days).
	Uptime     string
	LastChange time.Time
}

type dirPage struct {
	Query     dirQuery
	Rows      []dirRow
	Matches   int
	Page      int
	HasNext   bool
	PrevLink  template.URL // the previous and next pages ("" when none)
	NextLink  template.URL
	Kinds     []string
	Protocols []string
	Sorts     []dirSortLink
}

// dirSortLink is one of the page's sort links.
type dirSortLink struct {
	Label   string
	Link    template.URL
	Current bool
}

// dirLink is the directory's URL with parameters v. It is a template.URL because
// url.Values.Encode escaped every value already: html/template would escape the
// separators again.
func dirLink(v url.Values) template.URL {
	if len(v) == 0 {
		return "/"
	}
	return template.URL("/?" + v.Encode())
}

// maxProtocolOptions bounds the protocol versions the directory's filter offers.
const maxProtocolOptions = 20

// protocolList remembers the directory's protocol versions for a minute: they change
// with rounds, rarely, and reading them reads every entry.
type protocolList struct {
	mu   sync.Mutex
	at   time.Time
	list []string
}

// protocolsFresh is how long the directory's protocol versions are reused.
const protocolsFresh = time.Minute

// get returns the list and whether it is fresh.
func (p *protocolList) get() ([]string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.list, !p.at.IsZero() && time.Since(p.at) < protocolsFresh
}

func (p *protocolList) set(list []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.list, p.at = list, time.Now()
}

// kindLabel says what an entry of kind k is.
func kindLabel(k string) string {
	switch k {
	case store.KindNPM:
		return "npm package"
	case store.KindPyPI:
		return "PyPI package"
	case store.KindGitHub:
		return "GitHub repository"
	}
	return k
}

// supplyText is the directory's Verified column: Verified with the score, or why not.
func supplyText(run store.SupplyState, verified bool) string {
	switch {
	case !run.Present:
		return "no supply checks"
	case verified:
		return fmt.Sprintf("Verified %d", run.Score)
	case run.Passed:
		return fmt.Sprintf("score %d, passed but unsigned", run.Score)
	}
	return fmt.Sprintf("score %d, not verified", run.Score)
}

// uptimeText is online of counted days as a percentage with one decimal ("" when none
// counted).
func uptimeText(online, counted int) string {
	if counted == 0 {
		return ""
	}
	return strconv.FormatFloat(100*float64(online)/float64(counted), 'f', 1, 64) + " %"
}

// directory lists the entries matching q in q's order, pageSize a page: one
// store.Directory query, which searches, filters, sorts, counts and pages in SQL and
// returns each row with its state, and one more row to know whether another page
// follows.
func (s *site) directory(ctx context.Context, q dirQuery) (*dirPage, error) {
	page := &dirPage{Query: q, Page: q.Page, Kinds: []string{store.KindRemote, store.KindNPM, store.KindPyPI, store.KindGitHub}}
	now := s.now().UTC()
	dq := store.DirectoryQuery{Search: q.Q, Kind: q.Kind, Offset: (q.Page - 1) * pageSize, Limit: pageSize + 1,
		Offline: q.Offline, HasFindings: q.Findings, Protocol: q.Protocol, Order: dirSorts[q.Sort],
		UptimeTo: now.Format(time.DateOnly), CountMatches: true}
	if q.Verified {
		dq.Verified = store.OnlyVerified
	}
	if q.Changed {
		dq.ChangedSince = now.Add(-recentWindow)
	}
	protocols, fresh := s.dirProtocols.get()
	dq.ListProtocols = !fresh
	res, err := s.st.Directory(ctx, dq)
	if err != nil {
		return nil, err
	}
	if !fresh {
		// The versions are what servers answered: only those a filter can select
		// (protocolPattern), and a bounded list of them, are offered.
		protocols = nil
		for _, p := range res.Protocols {
			if protocolPattern.MatchString(p) && len(protocols) < maxProtocolOptions {
				protocols = append(protocols, p)
			}
		}
		s.dirProtocols.set(protocols)
	}
	page.Protocols, page.Matches = protocols, res.Matches
	rows := res.Rows
	if len(rows) > pageSize {
		page.HasNext, rows = true, rows[:pageSize]
	}
	for _, r := range rows {
		e := r.Entry
		row := dirRow{Slug: e.Slug, Name: displayName(e), Kind: e.Kind, KindLabel: kindLabel(e.Kind), Locator: visibleLine(e.Locator),
			summaryOf: stateOf(e, r.Round, r.Supply), Checked: r.Round.SignedRound,
			Failed: r.Round.Failed, Risks: r.Round.ObservedRisk, Tools: r.Round.ToolCount,
			Supply: supplyText(r.Supply, r.Verified), Uptime: uptimeText(e.Uptime30OnlineDays, e.Uptime30CountedDays),
			LastChange: e.LastChangeAt}
		row.Verdict, row.VerdictLabel = verdictLabel(verdictOf(r.Round, r.Supply), r.Round, r.Supply)
		if name := visibleLine(e.Name); row.Name != name {
			row.Listed = name
		}
		page.Rows = append(page.Rows, row)
	}
	if q.Page > 1 {
		page.PrevLink = dirLink(q.values(q.Page - 1))
	}
	if page.HasNext {
		page.NextLink = dirLink(q.values(q.Page + 1))
	}
	for _, l := range dirSortLinks {
		sq := q
		sq.Sort = l.Value
		page.Sorts = append(page.Sorts, dirSortLink{Label: l.Label, Link: dirLink(sq.values(1)), Current: l.Value == q.Sort})
	}
	return page, nil
}

// --- Entry page ---

type entryView struct {
	// Name is the listed title when the server has one, else the entry's name.
	Slug, Name, Kind, Locator string
	summaryOf
	Observe string // what Probity can observe of this entry: Case.Text
	// Server is what the server's listing says, Parts its linked parts (the primary
	// one first).
	Server listingView
	Parts  []partView
	// ServerOf is, for one of a server's later remotes, its server's entry (nil
	// otherwise).
	ServerOf *entryRef
	// Operator is what a maintainer of the entry wrote about it (nil: nothing), shown
	// next to the registry's listing (listing.go).
	Operator *operatorListingView
	// Case is which of seed 000's cases applies and when the tools were last fetched.
	Case caseView
	// LastToolsRead is when the tools were last fetched (Case.ToolsReadAt).
	LastToolsRead time.Time
	// PendingAt is when a tool list differing from the one shown was read, not yet
	// confirmed by a second read (zero: none is pending).
	PendingAt    time.Time
	LastToolsChg *changeView // the newest visible tools change
	ChangedWeek  bool        // LastToolsChg is within the last 7 days
	Round        *roundView
	Checks       []checkView
	Supply       *supplyView
	Tools        []toolView // ToolsPage's tools
	ToolsPage    toolPage   // the page of the tools shown (entry; entryPage leaves both empty)
	ToolsFrom    string     // the round id of the surface the tools come from
	Uptime       uptimeView
	History      []changeView // the newest jsonChanges visible changes (entryPage: markdownChanges)
	Recent       []changeView // the newest markdownChanges of them
	// Disputes are the entry's disputes with their outcomes, newest first (dispute.go).
	Disputes []disputeView
	Links    links
	// Head is the top of every tab: the tabs and the summary card (entrycard.go).
	Head *entryHead

	// The sections of the entry page, rendered by html/template from the views above
	// (entryPage, which leaves those views empty but Uptime; entry leaves these empty).
	ChecksHTML, SupplyHTML, ToolsHTML, UptimeHTML template.HTML
}

type links struct {
	Page, History, JSON, Markdown, Envelopes, Keys, Feed, Badge string
}

type roundView struct {
	RoundID         string
	StartedAt       time.Time
	Coverage        string
	Signed          bool
	UnsignedReason  string
	ProtocolVersion string
	ServerName      string
	ServerVersion   string
	ToolCount       int
	EnvelopeURL     string
	BundleURL       string // the envelope with its inclusion proof; "" when no log is served
}

type checkView struct {
	ID, Title, Status, Reason string
	Evidence                  []evidenceView
}

type evidenceView struct {
	Tool, Field, Sample, Note string
	Offset                    int
}

type supplyView struct {
	RanAt       time.Time
	Score       int
	Verified    bool // the one Verified rule: Passed and Signed (store.IsVerified)
	Passed      bool // the run's own decision, before the signature counts
	Signed      bool
	NotVerified []string
	Results     []supplyResultView
}

type supplyResultView struct {
	// Status is the check's status token (a class name), StatusText it in words
	// ("not run, retried").
	ID, Title, Group, Status, StatusText, Reason, SourceURL string
	Weight                                                  int
	Points                                                  float64
	Serious                                                 bool
	Evidence                                                []supplyEvidenceView
}

type supplyEvidenceView struct {
	What   string `json:"what"`
	Sample string `json:"sample,omitempty"`
	Link   string `json:"link,omitempty"`
}

type toolView struct {
	Name, Title, Description string
}

type uptimeView struct {
	Online, Counted int
	Rate            string // "97.5%", or "" when no day counted
	Days            []store.UptimeDay
}

func (s *site) links(slug string) links {
	p := s.base + "/s/" + slug
	return links{
		Page: p, History: p + "/history", JSON: p + ".json", Markdown: p + ".md",
		Envelopes: p + "/envelopes.jsonl", Keys: s.base + "/.well-known/probity-keys.json",
		Feed: p + "/history.xml", Badge: s.base + "/badge/" + slug + ".svg",
	}
}

// entry builds the view of slug for its JSON and Markdown: with Checks, Supply and
// page toolsPage of its Tools (errNotFound past the last page).
func (s *site) entry(ctx context.Context, slug string, toolsPage int) (*entryView, error) {
	return s.entryOf(ctx, slug, toolsPage, false)
}

// entryPage builds the view of slug for its HTML page: with ChecksHTML, SupplyHTML and
// page toolsPage of its tools as ToolsHTML, each rendered once per round, supply run
// and surface page.
func (s *site) entryPage(ctx context.Context, slug string, toolsPage int) (*entryView, error) {
	return s.entryOf(ctx, slug, toolsPage, true)
}

func (s *site) entryOf(ctx context.Context, slug string, toolsPage int, html bool) (*entryView, error) {
	to := s.now().UTC()
	d, err := s.st.EntryDigest(ctx, slug, store.EntryQuery{
		Changes:    pageSize,
		UptimeFrom: to.AddDate(0, 0, -(uptimeDays - 1)).Format(time.DateOnly),
		UptimeTo:   to.Format(time.DateOnly),
	})
	if err != nil {
		return nil, err
	}
	e, round, run := d.Entry, d.Round, d.Supply
	hist, err := s.historyState(ctx, e)
	if err != nil {
		return nil, err
	}
	roundState, runState := digestState(&d)
	sum := stateOf(e, roundState, runState)
	v := &entryView{
		Slug: e.Slug, Name: displayName(e), Kind: e.Kind, Locator: visibleLine(e.Locator),
		summaryOf: sum, Links: s.links(e.Slug),
		Server: listingViewOf(e, d.Listing), Parts: partViews(e, d.Parts, d.Remotes),
		Case: caseOf(&d, &hist),
	}
	v.Observe, v.LastToolsRead = v.Case.Text, v.Case.ToolsReadAt
	if d.Server != nil {
		v.ServerOf = &entryRef{Slug: d.Server.Slug, Name: displayName(*d.Server)}
	}
	ml, err := s.st.MaintainerListing(ctx, e.ID)
	if err != nil {
		return nil, err
	}
	v.Operator = operatorListingOf(ml)
	if hist.Pending != nil {
		v.PendingAt = hist.Pending.At
	}
	if round != nil {
		v.Round = &roundView{
			RoundID: round.RoundID, StartedAt: round.StartedAt, Coverage: round.Coverage, Signed: round.Signed,
			UnsignedReason: round.UnsignedReason, ProtocolVersion: visibleLine(round.ProtocolVersion),
			ServerName: visibleLine(round.ServerName), ServerVersion: visibleLine(round.ServerVersion), ToolCount: round.ToolCount,
		}
		if round.Signed {
			v.Round.EnvelopeURL = v.Links.Page + "/r/" + round.RoundID + ".json"
			if s.log != nil {
				v.Round.BundleURL = v.Links.Page + "/r/" + round.RoundID + ".bundle.json"
			}
		}
		if !html {
			if v.Checks, err = s.roundChecks(ctx, e.Slug, round); err != nil {
				return nil, err
			}
		}
	}
	if run != nil && !html {
		if v.Supply, err = s.supplyViewOfRun(ctx, e, run.ID); err != nil {
			return nil, err
		}
	}
	if v.Disputes, err = s.disputesOf(ctx, e.ID); err != nil {
		return nil, err
	}
	// The page's checks and supply checks are tabs of their own (tabs.go); the top of
	// every tab is the card.
	if v.Head, err = s.head(ctx, &d, tabOverview); err != nil {
		return nil, err
	}
	// The tools: a page of the confirmed surface (shownSurface). A surface that is not
	// stored shows as no list.
	surface := shownSurface(e, &hist)
	if html {
		v.ToolsHTML, err = s.toolsPageHTML(ctx, surface, toolsPage)
		if errors.Is(err, store.ErrNotFound) && surface != "" {
			v.ToolsHTML, err = s.toolsPageHTML(ctx, "", toolsPage)
		}
		if err != nil {
			return nil, err
		}
	} else {
		if surface != "" {
			v.ToolsPage, err = s.toolsPage(ctx, surface, toolsPage)
			if errors.Is(err, store.ErrNotFound) {
				surface, err = "", nil
			}
			if err != nil {
				return nil, err
			}
		}
		if surface == "" {
			if toolsPage != 1 {
				return nil, errNotFound
			}
			v.ToolsPage = toolPage{Page: 1, Pages: 1}
		}
		v.Tools = v.ToolsPage.Tools
	}
	cs := d.Changes
	keep := jsonChanges // the JSON's history object
	if html {
		keep = markdownChanges // the page shows as many as the Markdown
	}
	for i := range cs {
		if cs[i].Hidden {
			continue
		}
		cs[i].EntrySlug = e.Slug
		if len(v.History) < keep {
			v.History = append(v.History, s.changeView(&cs[i], false))
		}
		if v.LastToolsChg == nil && cs[i].Kind == attest.ChangeTools {
			cv := s.changeView(&cs[i], false)
			v.LastToolsChg = &cv
			v.ChangedWeek = s.now().Sub(cs[i].RecordedAt) <= recentWindow
		}
	}
	v.Recent = v.History[:min(len(v.History), markdownChanges)]
	v.Uptime = uptimeOf(e, d.Uptime)
	if html {
		uptime := func() (uptimeView, error) { return v.Uptime, nil }
		if v.UptimeHTML, err = section(s, s.uptimeHTML, uptimeKey(v.Uptime), "uptime", uptime); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// --- The server: its listing, its parts, and what its history observes ---

// displayName is what pages call an entry: the listed title when the server has one,
// else the entry's name.
func displayName(e store.Entry) string {
	if t := visibleLine(e.Title); strings.TrimSpace(t) != "" {
		return cut(t, maxListingLine)
	}
	return visibleLine(e.Name)
}

// Bounds of the listing's text on the pages: it is third-party text (the registry's or
// the publisher's), shown as plain text.
const (
	maxListingLine = 200  // a name, title, version or website
	maxDescription = 2000 // the description
	maxIcons       = 8    // icon addresses listed
	maxParts       = 64   // parts shown
	maxPartText    = 500  // a part's locator
)

// listingView is what a server's listing says. Every field is visible text; Website is
// set only when the address is an http(s) URL fit for a link, WebsiteText otherwise.
type listingView struct {
	ServerName, Title, Description string
	Website, WebsiteText           string
	Version                        string
	// Icons are the addresses of the listed icons, shown as text and never loaded
	// (the pages load nothing from third parties).
	Icons []string
	// Unlisted says the registry deprecated or deleted the server.
	Unlisted bool
	Status   string
}

// partView is one linked part of a server.
type partView struct {
	Kind  string // store.Kind* or store.Part*
	Label string // "remote", "npm package", …
	// Text is the part's locator as text; Link, when set, is the part's public page (a
	// registry's package page, the repository), an https URL.
	Text, Link         string
	Transport, Version string
	// Checked says Probity checks this kind of part; the others are listed, not checked.
	Checked bool
	Primary bool
	// Entry is the slug of the part's own entry: a server's later remote, probed with
	// its own rounds and history ("" otherwise).
	Entry string
}

// entryRef names another entry on a page.
type entryRef struct{ Slug, Name string }

// partLabels name the kinds of parts.
var partLabels = map[string]string{
	store.KindRemote: "remote", store.KindNPM: "npm package", store.KindPyPI: "PyPI package",
	store.KindGitHub: "repository", store.PartOCI: "OCI image", store.PartNuGet: "NuGet package",
	store.PartMCPB: "MCP bundle",
}

// listingViewOf is the view of an entry's listing.
func listingViewOf(e store.Entry, l store.Listing) listingView {
	v := listingView{
		ServerName:  cut(visibleLine(l.ServerName), maxListingLine),
		Title:       cut(visibleLine(l.Title), maxListingLine),
		Description: cut(visibleLine(l.Description), maxDescription),
		Version:     cut(visibleLine(l.Version), maxListingLine),
		Unlisted:    !l.Listed(),
	}
	if v.ServerName == "" {
		v.ServerName = cut(visibleLine(e.ServerName), maxListingLine)
	}
	if v.Title == "" {
		v.Title = cut(visibleLine(e.Title), maxListingLine)
	}
	if v.Unlisted {
		v.Status = visibleLine(l.Status)
	}
	if l.Website != "" {
		if u := httpLink(l.Website); u != "" && len(u) <= maxListingLine*4 {
			v.Website = u
		} else {
			v.WebsiteText = cut(visibleLine(l.Website), maxListingLine)
		}
	}
	v.Icons = iconsOf(l.Document)
	return v
}

// iconsOf returns the addresses of the icons a server.json lists (at most maxIcons),
// as text; nil when it lists none or is not a JSON object.
func iconsOf(doc []byte) []string {
	if len(doc) == 0 {
		return nil
	}
	var d struct {
		Icons []struct {
			Src string `json:"src"`
		} `json:"icons"`
	}
	if json.Unmarshal(doc, &d) != nil {
		return nil
	}
	var out []string
	for _, ic := range d.Icons {
		if len(out) == maxIcons {
			break
		}
		if ic.Src != "" {
			out = append(out, cut(visibleLine(ic.Src), maxListingLine*2))
		}
	}
	return out
}

// partViews are the views of an entry's parts, the primary one first, each later
// remote with its own entry among remotes. An entry whose parts are not stored (parts
// is empty) shows its primary part, its Kind and Locator.
func partViews(e store.Entry, parts []store.Part, remotes []store.Entry) []partView {
	if len(parts) == 0 {
		parts = []store.Part{{Kind: e.Kind, Locator: e.Locator}}
	}
	out := make([]partView, 0, min(len(parts), maxParts))
	for i, p := range parts {
		if i == maxParts {
			break
		}
		v := partView{
			Kind: visibleLine(p.Kind), Label: partLabels[p.Kind], Text: cut(visibleLine(p.Locator), maxPartText),
			Transport: cut(visibleLine(p.Transport), maxListingLine), Version: cut(visibleLine(p.Version), maxListingLine),
			Primary: p.Kind == e.Kind && p.Locator == e.Locator,
		}
		if v.Label == "" {
			v.Label = v.Kind
		}
		switch p.Kind {
		case store.KindRemote:
			v.Checked = true
			for _, r := range remotes {
				if r.Locator == p.Locator {
					v.Entry = r.Slug
				}
			}
		case store.KindNPM, store.KindPyPI:
			v.Checked, v.Link = true, packagePage(p.Kind, p.Locator, p.Version)
		case store.KindGitHub:
			v.Checked = true
			if strings.HasPrefix(p.Locator, "https://github.com/") {
				v.Link = httpsLink(p.Locator)
			}
		}
		out = append(out, v)
	}
	return out
}

var (
	npmName     = regexp.MustCompile(`^(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*$`)
	pypiName    = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$`)
	linkVersion = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+!-]*$`)
)

// packagePage is the registry page of a package, by its purl (store.Part.Locator:
// pkg:npm/%40scope/name, pkg:pypi/name) and listed version ("" : the package's
// page); "" when the name is not one the registry's addresses take as it is.
func packagePage(kind, purl, version string) string {
	if len(purl) > 300 || len(version) > 100 || (version != "" && !linkVersion.MatchString(version)) {
		return ""
	}
	switch kind {
	case store.KindNPM:
		name, ok := strings.CutPrefix(purl, "pkg:npm/")
		if !ok {
			return ""
		}
		name = strings.Replace(name, "%40", "@", 1)
		if !npmName.MatchString(name) {
			return ""
		}
		if version != "" {
			return "https://www.npmjs.com/package/" + name + "/v/" + version
		}
		return "https://www.npmjs.com/package/" + name
	case store.KindPyPI:
		name, ok := strings.CutPrefix(purl, "pkg:pypi/")
		if !ok || !pypiName.MatchString(name) {
			return ""
		}
		if version != "" {
			return "https://pypi.org/project/" + name + "/" + version + "/"
		}
		return "https://pypi.org/project/" + name + "/"
	}
	return ""
}

// Seed 000's cases: what the history of an entry can observe.
const (
	caseRemote     = "remote"     // a remote that lists its tools without a login
	caseLogin      = "login"      // a remote that asks for a login first: no tool list
	caseManifest   = "manifest"   // the tools of an MCP bundle manifest
	casePackage    = "package"    // a package: its version only, no tool list
	caseRepository = "repository" // a repository without a bundle manifest read: no tool list
	caseUnread     = "unread"     // a remote whose tools have not been read yet
)

// caseTexts say what each case means for the history.
var caseTexts = map[string]string{
	caseRemote:     "A remote server that lists its tools without a login: every round performs the MCP handshake and reads tools/list, and the history records changes to its tools, its instructions and the version it reports.",
	caseLogin:      "A remote server that asks for a login or an API key before it lists its tools: there is no tool list Probity can observe. The history records the version it reports when it can be read, and changes by the server's operator.",
	caseManifest:   "A server whose tools are described in an MCP bundle manifest: Probity reads manifest.json in its repository again at the newest commit, and the history records changes to those tools.",
	casePackage:    "A local server published as a package, without a bundle manifest: Probity follows the newest published version and never runs the server, so there is no tool list to observe. The history records new versions and changes by the server's operator.",
	caseRepository: "A repository without an MCP bundle manifest that Probity could read: there is no tool list to observe. The history records changes by the server's operator.",
	caseUnread:     "A remote server whose tool list has not been read yet: the first round has not run, or the server has not answered it with a complete list without a login.",
}

// caseView is which of seed 000's cases applies to an entry, shown at the top of its
// history and on its page.
type caseView struct {
	Case, Text string
	// ToolsReadAt is when the tools were last fetched (zero: never); HasTools says the
	// case has a tool list at all.
	ToolsReadAt time.Time
	HasTools    bool
	// Version is the version the history follows ("" when none was read).
	Version string
	// CheckedAt is when the newest supply run read the server's packages and
	// repository (zero: none ran).
	CheckedAt time.Time
	// Label names the case in a few words (caseLabels).
	Label string
}

// caseOf decides which of seed 000's cases applies to the entry of d, with its history
// state st:
//
//   - a remote entry (its primary part is a remote) whose newest round was signed
//     with coverage auth_required asks for a login; one whose rounds read a whole
//     tool list (EntryDigest.ToolsReadAt) lists its tools without a login; otherwise
//     its tools have not been read yet;
//   - an entry whose history holds a bundle manifest's read (a read of a supply run,
//     round id "s…") has a manifest;
//   - a package entry follows its version only, a repository entry has no tool list.
func caseOf(d *store.EntryDigest, st *history.State) caseView {
	c := caseView{Version: cut(visibleLine(st.Version), maxListingLine)}
	if d.Supply != nil {
		c.CheckedAt = d.Supply.RanAt
	}
	manifestAt := manifestRead(st)
	switch {
	case d.Entry.Kind == store.KindRemote && d.Round != nil && d.Round.Signed && d.Round.Coverage == badge.CoverageAuthRequired:
		c.Case, c.ToolsReadAt = caseLogin, d.ToolsReadAt
	case d.Entry.Kind == store.KindRemote && !d.ToolsReadAt.IsZero():
		c.Case, c.ToolsReadAt, c.HasTools = caseRemote, d.ToolsReadAt, true
	case d.Entry.Kind == store.KindRemote:
		c.Case = caseUnread
	case !manifestAt.IsZero():
		// EntryDigest.ToolsReadAt counts rounds only today; should it count manifest
		// reads too, the newer of the two is when the manifest was last read.
		c.Case, c.ToolsReadAt, c.HasTools = caseManifest, manifestAt, true
		if d.ToolsReadAt.After(manifestAt) {
			c.ToolsReadAt = d.ToolsReadAt
		}
	case d.Entry.Kind == store.KindNPM || d.Entry.Kind == store.KindPyPI:
		c.Case = casePackage
	default:
		c.Case = caseRepository
	}
	c.Text, c.Label = caseTexts[c.Case], caseLabels[c.Case]
	return c
}

// manifestRead is when a bundle manifest's tools were last fetched: the newest of the
// history's last manifest read (State.ManifestReadAt, also a cheap read that found the
// recorded tools) and its recorded and pending reads made by a supply run; zero when
// it never read one.
func manifestRead(st *history.State) time.Time {
	at := st.ManifestReadAt
	for _, r := range []*history.Read{st.Recorded, st.Pending} {
		if r != nil && strings.HasPrefix(r.RoundID, "s") && r.At.After(at) {
			at = r.At
		}
	}
	return at
}

// historyState reads and decodes an entry's history state (the zero State when none
// is stored).
func (s *site) historyState(ctx context.Context, e store.Entry) (history.State, error) {
	raw, _, err := s.st.HistoryState(ctx, e.ID)
	if err != nil {
		return history.State{}, err
	}
	st, err := history.DecodeState(raw)
	if err != nil {
		return history.State{}, fmt.Errorf("history state of %s: %w", e.Slug, err)
	}
	return st, nil
}

// shownSurface is the surface whose tools an entry shows: the confirmed one, the tool
// list its history last recorded (seed 000: "Ist eine Änderung bestätigt, zeigt der
// Eintrag sofort die neue Tool-Liste"), never a newer read that is not confirmed yet.
// Before the history has recorded a baseline, the newest round's surface is shown:
// the history has not processed that read yet, and the first complete read becomes the
// baseline as it is.
func shownSurface(e store.Entry, st *history.State) string {
	if st.Recorded != nil && st.Recorded.OK {
		return st.Recorded.Surface
	}
	return e.LastSurface
}

// supplyRun reads supply run id of the entry with its documents (EntryDigest leaves
// them out): the newest, or one of the newest MaxSupplyRuns when a newer one was
// stored meanwhile.
func (s *site) supplyRun(ctx context.Context, entryID, id int64) (*store.SupplyRecord, error) {
	runs, err := s.st.SupplyRuns(ctx, entryID, 1)
	if err == nil && (len(runs) == 0 || runs[0].ID != id) {
		runs, err = s.st.SupplyRuns(ctx, entryID, store.MaxSupplyRuns)
	}
	if err != nil {
		return nil, err
	}
	for i := range runs {
		if runs[i].ID == id {
			return &runs[i], nil
		}
	}
	return nil, fmt.Errorf("no longer among the newest %d runs", store.MaxSupplyRuns)
}

// uptimeKey is everything the uptime section shows of u.
func uptimeKey(u uptimeView) string {
	var b strings.Builder
	b.Grow(16 + len(u.Days)*24)
	fmt.Fprintf(&b, "%d/%d/%s", u.Online, u.Counted, u.Rate)
	for _, d := range u.Days {
		b.WriteString("|" + d.Day + "=" + d.Status)
	}
	return b.String()
}

// uptimeOf is e's uptime with its recent days (oldest first), shown newest first.
func uptimeOf(e store.Entry, days []store.UptimeDay) uptimeView {
	u := uptimeView{Online: e.UptimeOnlineDays, Counted: e.UptimeCountedDays}
	if u.Counted > 0 {
		u.Rate = fmt.Sprintf("%.1f%%", 100*float64(u.Online)/float64(u.Counted))
	}
	for i := len(days) - 1; i >= 0; i-- {
		u.Days = append(u.Days, days[i])
	}
	return u
}

// maxEvidence bounds the evidence shown per check.
const maxEvidence = 64

// checkViews reads a round's stored results (checks.EncodeResults) into their views.
func checkViews(raw []byte) ([]checkView, error) {
	rs, err := checks.DecodeResults(raw)
	if err != nil {
		return nil, err
	}
	titles := make(map[string]string)
	for _, c := range checks.Catalog() {
		titles[c.ID] = c.Title
	}
	out := make([]checkView, 0, len(rs))
	for _, r := range rs {
		cv := checkView{
			ID: visibleLine(r.ID), Title: titles[r.ID], Status: visibleLine(string(r.Status)),
			Reason: visibleLine(checks.Describe(r)),
		}
		for i, ev := range r.Evidence {
			if i == maxEvidence {
				break
			}
			cv.Evidence = append(cv.Evidence, evidenceView{
				Tool: visibleLine(ev.Tool), Field: visibleLine(ev.Field), Sample: visibleLine(ev.Sample),
				Note: visibleLine(ev.Note), Offset: ev.Offset,
			})
		}
		out = append(out, cv)
	}
	return out, nil
}

// supplyViewOf reads a supply run with its stored verdict (supply.EncodeVerdict) into
// its view. Verified is the run's own (it is remembered by the run's id); withdrawnView
// applies the entry's withdrawal.
func supplyViewOf(run *store.SupplyRecord) (*supplyView, error) {
	v, err := supply.DecodeVerdict(run.Verdict)
	if err != nil {
		return nil, err
	}
	titles := make(map[string]string)
	for _, c := range supply.Catalog() {
		titles[c.ID] = c.Title
	}
	signed := run.Envelope != nil
	sv := &supplyView{RanAt: run.RanAt, Score: run.Score, Verified: store.IsVerified(run.Verified, signed, false), Passed: run.Verified, Signed: signed}
	for _, n := range v.NotVerified {
		sv.NotVerified = append(sv.NotVerified, visibleLine(n))
	}
	for _, r := range v.Results {
		rv := supplyResultView{
			ID: visibleLine(r.ID), Title: titles[r.ID], Group: visibleLine(r.Group), Status: visibleLine(string(r.Status)),
			StatusText: supply.StatusText(r.Status), Reason: visibleLine(r.Reason), SourceURL: httpsLink(r.SourceURL), Weight: r.Weight, Points: r.Points, Serious: r.Serious,
		}
		for i, ev := range r.Evidence {
			if i == maxEvidence {
				break
			}
			rv.Evidence = append(rv.Evidence, supplyEvidenceView{What: visibleLine(ev.What), Sample: visibleLine(ev.Sample), Link: httpsLink(ev.Link)})
		}
		sv.Results = append(sv.Results, rv)
	}
	return sv, nil
}

// httpsLink returns u when it is a plain https URL fit for a link, else "".
func httpsLink(u string) string {
	if !strings.HasPrefix(u, "https://") {
		return ""
	}
	return httpLink(u)
}

// httpLink returns u when it is a plain http or https URL fit for a link (with a host,
// no spaces, controls or hidden characters, at most 2048 bytes), else "".
func httpLink(u string) string {
	rest, ok := strings.CutPrefix(u, "https://")
	if !ok {
		rest, ok = strings.CutPrefix(u, "http://")
	}
	if !ok || rest == "" || rest[0] == '/' || len(u) > 2048 || strings.ContainsFunc(u, func(r rune) bool { return r <= ' ' || r == 0x7F || hides(r) }) {
		return ""
	}
	return u
}

// jsonText is a JSON value as text: a string as it is, null or absent as "", anything
// else as its JSON.
func jsonText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	return string(raw)
}

// --- History ---

type changeView struct {
	Number   int64
	Anchor   string // "ch-N"
	Link     string // the history page's address with #ch-N
	At       time.Time
	Origin   string // "automatic check" or "server operator"
	Kind     string
	Summary  string
	Badges   []string
	Names    []string // the tools concerned (older changes show these), at most maxNames
	More     int      // the tools concerned beyond Names
	Slug     string
	Details  *detailView
	Detailed bool

	// Baseline says the change is the entry's first read, where observation began: it
	// is shown as such, not as a change (changeLabel).
	Baseline bool
	// Label names the change on pages: "Change N", or "First read (baseline)".
	Label string
}

type detailView struct {
	ToolCount *int
	// BaselineVersion is the version a package's observation started at (its
	// baseline, which has no tool list).
	BaselineVersion string
	Added, Removed  []toolRefView    // at most maxNames each
	Changed         []toolChangeView // at most maxNames
	// MoreAdded, MoreRemoved and MoreChanged count the tools beyond those lists.
	MoreAdded, MoreRemoved, MoreChanged int
	InstructionsChanged                 bool
	InstructionsBefore                  string
	InstructionsAfter                   string
	VersionBefore, VersionAfter         string
	Breaking                            []string
	EditField                           string
	EditBefore, EditAfter               string
	EditHasText                         bool

	// InstructionsMarks and EditMarks are the instructions and the edited text before
	// and after with the changed words marked (markDetails; nil when not marked).
	InstructionsMarks, EditMarks *markedText
}

type toolRefView struct{ Name, Title string }

type toolChangeView struct {
	Name                                string
	TitleChanged, DescriptionChanged    bool
	TitleBefore, TitleAfter             string
	DescriptionBefore, DescriptionAfter string
	ParamsAdded, ParamsRemoved          []string
	ParamsNewlyRequired                 []string
	ParamDescriptionsChanged            []string
	InputSchemaChanged                  bool
	OutputSchemaChanged                 bool
	Hints                               []hintView
	InvisibleNew                        bool

	// DescriptionMarks is the description before and after with the changed words
	// marked (markDetails; nil when not marked).
	DescriptionMarks *markedText
}

type hintView struct{ Hint, Before, After string }

var originLabel = map[string]string{attest.OriginAutomatic: "automatic check", attest.OriginOperator: "server operator"}

var badgeLabel = map[string]string{
	diff.BadgeNoLongerReadOnly:       "no longer read-only",
	diff.BadgeNewlyDestructive:       "newly destructive",
	diff.BadgeNewDestructiveTool:     "new destructive tool",
	diff.BadgeNewlyRequiredParam:     "newly required parameter",
	diff.BadgeInvisibleChars:         "invisible characters",
	diff.BadgeNewInstructions:        "new instructions",
	history.BadgeDiffersFromApproved: "differs from the approved baseline",
}

// changeView turns a visible change into its view; with detailed, its details
// (history.ChangeDetails) are decoded in full, otherwise only the names of the tools
// concerned.
func (s *site) changeView(c *store.ChangeRecord, detailed bool) changeView {
	cv := changeView{
		Number: c.Number, Anchor: fmt.Sprintf("ch-%d", c.Number), At: c.RecordedAt.UTC(),
		Origin: originLabel[c.Origin], Kind: visibleLine(c.Kind), Summary: visibleLine(c.Summary), Slug: c.EntrySlug,
		Detailed: detailed, Baseline: c.Kind == attest.ChangeBaseline,
	}
	cv.Label = changeLabel(c.Number, cv.Baseline)
	if cv.Origin == "" {
		cv.Origin = visibleLine(c.Origin)
	}
	cv.Link = s.base + "/s/" + c.EntrySlug + "/history#" + cv.Anchor
	for _, b := range c.Badges {
		if l, ok := badgeLabel[b]; ok {
			cv.Badges = append(cv.Badges, l)
		} else {
			cv.Badges = append(cv.Badges, visibleLine(b))
		}
	}
	if len(c.Details) == 0 || len(c.Details) > maxDetails {
		return cv
	}
	d, err := history.DecodeChangeDetails(c.Details)
	if err != nil {
		return cv // the summary still stands; the details are not shown
	}
	dv := &detailView{ToolCount: d.ToolCount, VersionBefore: visibleLine(d.VersionBefore), VersionAfter: visibleLine(d.VersionAfter)}
	if c.Kind == attest.ChangeBaseline && d.ToolCount == nil && d.VersionBefore == "" && d.VersionAfter != "" {
		dv.BaselineVersion, dv.VersionAfter = dv.VersionAfter, ""
	}
	if d.Field != "" {
		dv.EditField = visibleLine(d.Field)
		if d.Before != nil || d.After != nil {
			dv.EditHasText = true
			dv.EditBefore, dv.EditAfter = visible(deref(d.Before)), visible(deref(d.After))
		}
	}
	name := func(n string) {
		if len(cv.Names) < maxNames {
			cv.Names = append(cv.Names, visibleLine(n))
		} else {
			cv.More++
		}
	}
	if c := d.Diff; c != nil {
		for i, t := range c.Added {
			name(t.Name)
			if i >= maxNames {
				dv.MoreAdded++
				continue
			}
			dv.Added = append(dv.Added, toolRefView{visibleLine(t.Name), visibleLine(t.Title)})
		}
		for i, t := range c.Removed {
			name(t.Name)
			if i >= maxNames {
				dv.MoreRemoved++
				continue
			}
			dv.Removed = append(dv.Removed, toolRefView{visibleLine(t.Name), visibleLine(t.Title)})
		}
		for i, t := range c.Changed {
			name(t.Name)
			if i >= maxNames {
				dv.MoreChanged++
				continue
			}
			tv := toolChangeView{
				Name: visibleLine(t.Name), TitleChanged: t.TitleChanged, DescriptionChanged: t.DescriptionChanged,
				TitleBefore: visibleLine(t.TitleBefore), TitleAfter: visibleLine(t.TitleAfter),
				DescriptionBefore: visible(t.DescriptionBefore), DescriptionAfter: visible(t.DescriptionAfter),
				ParamsAdded: visibleAll(t.ParamsAdded), ParamsRemoved: visibleAll(t.ParamsRemoved),
				ParamsNewlyRequired: visibleAll(t.ParamsNewlyRequired), ParamDescriptionsChanged: visibleAll(t.ParamDescriptionsChanged),
				InputSchemaChanged: t.InputSchemaChanged, OutputSchemaChanged: t.OutputSchemaChanged, InvisibleNew: t.InvisibleNew,
			}
			for _, h := range t.Hints {
				tv.Hints = append(tv.Hints, hintView{visibleLine(h.Hint), hintValue(h.Before), hintValue(h.After)})
			}
			dv.Changed = append(dv.Changed, tv)
		}
		if c.InstructionsChanged {
			dv.InstructionsChanged = true
			dv.InstructionsBefore, dv.InstructionsAfter = visible(deref(c.InstructionsBefore)), visible(deref(c.InstructionsAfter))
		}
		if c.VersionChanged {
			dv.VersionBefore, dv.VersionAfter = visibleLine(c.VersionBefore), visibleLine(c.VersionAfter)
		}
		for _, b := range c.Breaking {
			dv.Breaking = append(dv.Breaking, visibleLine(strings.ReplaceAll(b.Kind, "_", " ")+": "+b.Path))
		}
	}
	if detailed {
		cv.Details = dv
	}
	return cv
}

// fitDetails cuts d to budget bytes of text on the page, every character escaped at
// worst (&#34; and the like): the tools added, removed and changed are kept in order
// while they fit, the rest counted in MoreAdded, MoreRemoved and MoreChanged. It
// returns the cost of what is kept, and false when not even the change's own text
// (instructions, version, edit, breaking findings) fits.
func fitDetails(d *detailView, budget int) (int, bool) {
	cost := func(ss ...string) int {
		n := 0
		for _, s := range ss {
			n += 64 + 6*len(s)
		}
		return n
	}
	n := cost(d.InstructionsBefore, d.InstructionsAfter, d.VersionBefore, d.VersionAfter, d.EditField, d.EditBefore, d.EditAfter) + cost(d.Breaking...)
	// Texts whose changed words are marked (markDetails) cost twice: a pair of tags
	// per run of changed words adds less than the escaping.
	n += cost(d.InstructionsBefore, d.InstructionsAfter, d.EditBefore, d.EditAfter)
	if n > budget {
		return 0, false
	}
	keep := func(count int, itemCost func(int) int) int {
		for i := range count {
			c := itemCost(i)
			if n+c > budget {
				return i
			}
			n += c
		}
		return count
	}
	k := keep(len(d.Added), func(i int) int { return cost(d.Added[i].Name, d.Added[i].Title) })
	d.MoreAdded += len(d.Added) - k
	d.Added = d.Added[:k]
	k = keep(len(d.Removed), func(i int) int { return cost(d.Removed[i].Name, d.Removed[i].Title) })
	d.MoreRemoved += len(d.Removed) - k
	d.Removed = d.Removed[:k]
	k = keep(len(d.Changed), func(i int) int {
		t := &d.Changed[i]
		c := cost(t.Name, t.TitleBefore, t.TitleAfter, t.DescriptionBefore, t.DescriptionAfter, t.DescriptionBefore, t.DescriptionAfter) +
			cost(t.ParamsAdded...) + cost(t.ParamsRemoved...) + cost(t.ParamsNewlyRequired...) + cost(t.ParamDescriptionsChanged...)
		for _, h := range t.Hints {
			c += cost(h.Hint)
		}
		return c
	})
	d.MoreChanged += len(d.Changed) - k
	d.Changed = d.Changed[:k]
	return n, true
}

func visibleAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = visibleLine(s)
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func hintValue(b *bool) string {
	switch {
	case b == nil:
		return "absent"
	case *b:
		return "true"
	}
	return "false"
}

type historyView struct {
	Slug, Name, Kind string
	// Case is which of seed 000's cases applies and when the tools were last fetched:
	// the top of the history says it.
	Case    caseView
	Changes []changeView
	Page    int
	HasNext bool
	Links   links
	// HasChanges says the page shows a change other than a baseline.
	HasChanges bool
}

// history returns page (1-based) of the visible changes of slug, newest first; the
// newest detailedChanges of the whole history carry their details.
//
// The store pages changes by number only (BeforeNumber), so a page is read as the
// newest page×pageSize+1 changes with the earlier pages dropped; maxPage bounds it.
func (s *site) history(ctx context.Context, slug string, page int) (*historyView, error) {
	d, err := s.st.EntryDigest(ctx, slug, store.EntryQuery{})
	if err != nil {
		return nil, err
	}
	e := d.Entry
	hist, err := s.historyState(ctx, e)
	if err != nil {
		return nil, err
	}
	cs, err := s.st.Changes(ctx, store.ChangeFilter{EntryID: e.ID, Limit: page*pageSize + 1, WithoutEnvelopes: true})
	if err != nil {
		return nil, err
	}
	v := &historyView{Slug: e.Slug, Name: displayName(e), Kind: e.Kind, Case: caseOf(&d, &hist), Page: page, Links: s.links(e.Slug)}
	if len(cs) > page*pageSize {
		v.HasNext = true
		cs = cs[:page*pageSize]
	}
	start := (page - 1) * pageSize
	if start >= len(cs) && page > 1 {
		return nil, errNotFound
	}
	budget, cells := historyDetailsCost, historyDiffCells
	for i := start; i < len(cs); i++ {
		if cs[i].Hidden {
			continue // Changes leaves them out; this is belt and braces
		}
		cs[i].EntrySlug = e.Slug
		cv := s.changeView(&cs[i], i < detailedChanges && budget > 0)
		if cv.Details != nil {
			if cost, ok := fitDetails(cv.Details, budget); ok {
				budget -= cost
				markDetails(cv.Details, &cells)
			} else {
				cv.Details, cv.Detailed = nil, false
			}
		}
		v.Changes = append(v.Changes, cv)
		v.HasChanges = v.HasChanges || !cv.Baseline
	}
	return v, nil
}

// recent returns the newest visible changes across the directory.
func (s *site) recent(ctx context.Context) ([]changeView, error) {
	cs, err := s.st.Changes(ctx, store.ChangeFilter{Limit: recentChanges, WithoutEnvelopes: true})
	if err != nil {
		return nil, err
	}
	out := make([]changeView, 0, len(cs))
	for i := range cs {
		if !cs[i].Hidden {
			out = append(out, s.changeView(&cs[i], false))
		}
	}
	return out, nil
}
