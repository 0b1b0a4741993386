package web

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/probity-dev/probity/store"
)

// --- Entry JSON ---

type entryJSON struct {
	Slug    string     `json:"slug"`
	Name    string     `json:"name"`
	Kind    string     `json:"kind"`
	Locator string     `json:"locator"`
	Page    string     `json:"page"`
	Server  serverJSON `json:"server"`
	// Operator is what a maintainer of the entry wrote (null: nothing), apart from the
	// registry's listing in Server.
	Operator *operatorJSON `json:"operator"`
	Parts    []partJSON    `json:"parts"`
	Badge    badgeJSON     `json:"badge"`
	// Card is the summary card every tab of the entry's page shows on top.
	Card          *cardJSON       `json:"card,omitempty"`
	Observes      string          `json:"observes"`
	Observation   observationJSON `json:"observation"`
	LastToolsRead *time.Time      `json:"lastToolsRead"`
	Round         *roundJSON      `json:"round"`
	Checks        []checkJSON     `json:"checks"`
	Supply        *supplyJSON     `json:"supply"`
	Tools         []toolJSON      `json:"tools"`
	ToolsPage     toolsPageJSON   `json:"toolsPage"`
	Uptime        uptimeJSON      `json:"uptime"`
	History       historyJSON     `json:"history"`
	Verify        verifyJSON      `json:"verify"`
	Limits        []string        `json:"whatTheChecksDoNotTellYou"`
	// Disputes are the entry's disputes with their outcomes, newest first: each a
	// signed record (seq, bundle), its statement and reason people's text.
	Disputes []disputeView `json:"disputes"`
	// Withdrawn is set while an operator's withdrawal of Verified stands.
	Withdrawn *withdrawnJSON `json:"verifiedWithdrawn,omitempty"`
}

// operatorJSON is a maintainer's listing: plain text, links https only.
type operatorJSON struct {
	Description string             `json:"description"`
	SetupNotes  string             `json:"setupNotes"`
	Links       []operatorLinkJSON `json:"links"`
}

type operatorLinkJSON struct {
	Label string `json:"label"`
	URL   string `json:"url"`
}

// withdrawnJSON is an entry's withdrawn Verified (withdrawnNote).
type withdrawnJSON struct {
	At     time.Time `json:"at"`
	Reason string    `json:"reason"`
	Number int64     `json:"number"`
	Bundle string    `json:"bundle,omitempty"`
}

// serverJSON is what the server's listing says (empty strings: not listed).
type serverJSON struct {
	Name        string   `json:"name,omitempty"`
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description,omitempty"`
	Version     string   `json:"version,omitempty"`
	Website     string   `json:"website,omitempty"`
	Icons       []string `json:"icons,omitempty"`
	Listed      bool     `json:"listed"`
	Status      string   `json:"status,omitempty"`
}

// partJSON is one linked part of the server; checked is false for the kinds that are
// listed, not checked (oci, nuget, mcpb).
type partJSON struct {
	Kind      string `json:"kind"`
	Locator   string `json:"locator"`
	Transport string `json:"transport,omitempty"`
	Version   string `json:"version,omitempty"`
	Link      string `json:"link,omitempty"`
	Checked   bool   `json:"checked"`
	Primary   bool   `json:"primary"`
}

// observationJSON is which of seed 000's cases applies to the entry (remote, login,
// manifest, package, repository, unread) and when its tools were last fetched.
type observationJSON struct {
	Case             string     `json:"case"`
	HasTools         bool       `json:"hasToolList"`
	ToolsLastFetched *time.Time `json:"toolsLastFetched"`
	Version          string     `json:"version,omitempty"`
	SupplyCheckedAt  *time.Time `json:"supplyCheckedAt"`
	// PendingSince is when a differing tool list was read that is not confirmed yet;
	// the tools shown are the confirmed ones.
	PendingSince *time.Time `json:"unconfirmedToolsReadAt,omitempty"`
}

type badgeJSON struct {
	State    string `json:"state"`
	Coverage string `json:"coverage"`
	Score    *int   `json:"supplyScore"`
}

type roundJSON struct {
	RoundID         string    `json:"roundId"`
	StartedAt       time.Time `json:"startedAt"`
	Coverage        string    `json:"coverage"`
	Signed          bool      `json:"signed"`
	UnsignedReason  string    `json:"unsignedReason,omitempty"`
	ProtocolVersion string    `json:"protocolVersion,omitempty"`
	ServerName      string    `json:"serverName,omitempty"`
	ServerVersion   string    `json:"serverVersion,omitempty"`
	ToolCount       int       `json:"toolCount"`
	Envelope        string    `json:"envelope,omitempty"`
}

type checkJSON struct {
	ID       string         `json:"id"`
	Status   string         `json:"status"`
	Reason   string         `json:"reason"`
	Evidence []evidenceJSON `json:"evidence,omitempty"`
}

type evidenceJSON struct {
	Tool   string `json:"tool,omitempty"`
	Field  string `json:"field,omitempty"`
	Offset int    `json:"offset"`
	Sample string `json:"sample,omitempty"`
	Note   string `json:"note,omitempty"`
}

type supplyJSON struct {
	RanAt       time.Time          `json:"ranAt"`
	Score       int                `json:"score"`
	Verified    bool               `json:"verified"`
	Signed      bool               `json:"signed"`
	NotVerified []string           `json:"notVerified,omitempty"`
	Results     []supplyResultJSON `json:"results"`
}

type supplyResultJSON struct {
	ID        string               `json:"id"`
	Status    string               `json:"status"`
	Weight    int                  `json:"weight"`
	Points    float64              `json:"points"`
	Reason    string               `json:"reason"`
	SourceURL string               `json:"sourceUrl,omitempty"`
	Evidence  []supplyEvidenceView `json:"evidence,omitempty"`
}

type toolJSON struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
}

// toolsPageJSON says which page of the tools "tools" holds and links its neighbours.
type toolsPageJSON struct {
	Page  int `json:"page"`
	Pages int `json:"pages"`
	Total int `json:"total"`
	// First is the 1-based position of the page's first tool, 0 without tools.
	First int `json:"first"`
	// Prev and Next are the addresses of the neighbouring pages, absent at the ends.
	Prev string `json:"prev,omitempty"`
	Next string `json:"next,omitempty"`
}

type uptimeJSON struct {
	OnlineDays  int               `json:"onlineDays"`
	CountedDays int               `json:"countedDays"`
	Recent      []store.UptimeDay `json:"recent"`
}

type historyJSON struct {
	Page    string       `json:"page"`
	Feed    string       `json:"feed"`
	Changes []changeJSON `json:"changes"`
}

type changeJSON struct {
	Number     int64     `json:"number"`
	RecordedAt time.Time `json:"recordedAt"`
	Origin     string    `json:"origin"`
	Kind       string    `json:"kind"`
	Summary    string    `json:"summary"`
	Badges     []string  `json:"badges"`
	Link       string    `json:"link"`
	// Baseline says the change is the entry's first read, where observation began,
	// not a change; Label names it as the pages do (changeLabel).
	Baseline bool   `json:"baseline"`
	Label    string `json:"label"`
}

type verifyJSON struct {
	Envelopes string   `json:"envelopes"`
	Keys      string   `json:"keys"`
	Commands  []string `json:"commands"`
}

// entryJSON returns the entry's JSON with page toolsPage of its tools
// (encoding/json escapes <, > and & as \u003c …).
func (s *site) entryJSON(ctx context.Context, slug string, toolsPage int) ([]byte, error) {
	v, err := s.entry(ctx, slug, toolsPage)
	if err != nil {
		return nil, err
	}
	j := entryJSON{
		Slug: v.Slug, Name: v.Name, Kind: v.Kind, Locator: v.Locator, Page: v.Links.Page,
		Badge: badgeJSON{State: v.State, Coverage: v.Coverage}, Observes: v.Observe,
		Checks: []checkJSON{}, Tools: []toolJSON{},
		Uptime:   uptimeJSON{OnlineDays: v.Uptime.Online, CountedDays: v.Uptime.Counted, Recent: v.Uptime.Days},
		History:  historyJSON{Page: v.Links.History, Feed: v.Links.Feed, Changes: []changeJSON{}},
		Verify:   verifyJSON{Envelopes: v.Links.Envelopes, Keys: v.Links.Keys, Commands: verifyCommands(v.Links)},
		Limits:   limitations,
		Disputes: v.Disputes,
	}
	if v.Score >= 0 {
		score := v.Score
		j.Badge.Score = &score
	}
	if !v.LastToolsRead.IsZero() {
		t := v.LastToolsRead
		j.LastToolsRead = &t
	}
	sv := v.Server
	j.Server = serverJSON{Name: sv.ServerName, Title: sv.Title, Description: sv.Description, Version: sv.Version,
		Website: sv.Website, Icons: sv.Icons, Listed: !sv.Unlisted, Status: sv.Status}
	if j.Server.Website == "" {
		j.Server.Website = sv.WebsiteText
	}
	if o := v.Operator; o != nil {
		j.Operator = &operatorJSON{Description: o.Description, SetupNotes: o.SetupNotes, Links: []operatorLinkJSON{}}
		for _, k := range o.Links {
			j.Operator.Links = append(j.Operator.Links, operatorLinkJSON{Label: k.Label, URL: k.URL})
		}
	}
	j.Parts = make([]partJSON, 0, len(v.Parts))
	for _, p := range v.Parts {
		j.Parts = append(j.Parts, partJSONOf(p))
	}
	j.Observation = observationJSON{Case: v.Case.Case, HasTools: v.Case.HasTools, Version: v.Case.Version,
		ToolsLastFetched: timeOrNil(v.Case.ToolsReadAt), SupplyCheckedAt: timeOrNil(v.Case.CheckedAt), PendingSince: timeOrNil(v.PendingAt)}
	if r := v.Round; r != nil {
		j.Round = &roundJSON{RoundID: r.RoundID, StartedAt: r.StartedAt, Coverage: r.Coverage, Signed: r.Signed,
			UnsignedReason: r.UnsignedReason, ProtocolVersion: r.ProtocolVersion, ServerName: r.ServerName,
			ServerVersion: r.ServerVersion, ToolCount: r.ToolCount, Envelope: r.EnvelopeURL}
	}
	for _, c := range v.Checks {
		j.Checks = append(j.Checks, checkJSONOf(c))
	}
	if sv := v.Supply; sv != nil {
		j.Supply = supplyJSONOf(sv)
	}
	if v.Head != nil {
		card := cardJSONOf(v.Head.Card)
		j.Card = &card
		if w := v.Head.Withdrawn; w != nil {
			j.Withdrawn = &withdrawnJSON{At: w.At.UTC(), Reason: w.Reason, Number: w.Number}
			if w.Bundle != "" {
				j.Withdrawn.Bundle = s.base + w.Bundle
			}
		}
	}
	for _, t := range v.Tools {
		j.Tools = append(j.Tools, toolJSON(t))
	}
	tp := v.ToolsPage
	j.ToolsPage = toolsPageJSON{Page: tp.Page, Pages: tp.Pages, Total: tp.Total, First: tp.First}
	if p := tp.Prev(); p > 0 {
		j.ToolsPage.Prev = v.Links.JSON + "?tools=" + strconv.Itoa(p)
	}
	if n := tp.Next(); n > 0 {
		j.ToolsPage.Next = v.Links.JSON + "?tools=" + strconv.Itoa(n)
	}
	for _, c := range v.History {
		j.History.Changes = append(j.History.Changes, changeJSONOf(c))
	}
	return marshalJSON(j)
}

func partJSONOf(p partView) partJSON {
	return partJSON{Kind: p.Kind, Locator: p.Text, Transport: p.Transport, Version: p.Version, Link: p.Link, Checked: p.Checked, Primary: p.Primary}
}

func checkJSONOf(c checkView) checkJSON {
	cj := checkJSON{ID: c.ID, Status: c.Status, Reason: c.Reason}
	for _, e := range c.Evidence {
		cj.Evidence = append(cj.Evidence, evidenceJSON{Tool: e.Tool, Field: e.Field, Offset: e.Offset, Sample: e.Sample, Note: e.Note})
	}
	return cj
}

func supplyJSONOf(sv *supplyView) *supplyJSON {
	j := &supplyJSON{RanAt: sv.RanAt, Score: sv.Score, Verified: sv.Verified, Signed: sv.Signed, NotVerified: sv.NotVerified, Results: []supplyResultJSON{}}
	for _, r := range sv.Results {
		j.Results = append(j.Results, supplyResultJSON{ID: r.ID, Status: r.Status, Weight: r.Weight,
			Points: r.Points, Reason: r.Reason, SourceURL: r.SourceURL, Evidence: r.Evidence})
	}
	return j
}

// timeOrNil is t, or nil when it is zero.
func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func changeJSONOf(c changeView) changeJSON {
	badges := c.Badges
	if badges == nil {
		badges = []string{}
	}
	return changeJSON{Number: c.Number, RecordedAt: c.At, Origin: c.Origin, Kind: c.Kind, Summary: c.Summary, Badges: badges, Link: c.Link,
		Baseline: c.Baseline, Label: c.Label}
}

// marshalJSON encodes v indented, with <, > and & escaped, and a final newline.
func marshalJSON(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// --- Entry Markdown ---

// entryMarkdown returns the entry as Markdown with page toolsPage of its tools and its
// last markdownChanges changes. Every piece of server-supplied text goes through
// markdown(); the rest is this package's own text and addresses built from slugs
// ([a-z0-9-]) and the BaseURL.
func (s *site) entryMarkdown(ctx context.Context, slug string, toolsPage int) ([]byte, error) {
	v, err := s.entry(ctx, slug, toolsPage)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("# %s\n\n", markdown(v.Name))
	if sv := v.Server; sv.ServerName != "" {
		p("- Registry name: %s\n", markdown(sv.ServerName))
	}
	if d := v.Server.Description; d != "" {
		p("- Description: %s\n", markdown(d))
	}
	if w := v.Server.Website; w != "" {
		p("- Website: <%s>\n", markdownURL(w))
	} else if w := v.Server.WebsiteText; w != "" {
		p("- Website: %s\n", markdown(w))
	}
	if o := v.Operator; o != nil {
		// The maintainer's text, quoted line by line and escaped: never Markdown.
		p("- From the server's operator (a maintainer of this entry; who, is never shown):\n")
		if o.Description != "" {
			p("  - Description: %s\n", markdown(visibleLine(o.Description)))
		}
		if o.SetupNotes != "" {
			p("  - Setup notes: %s\n", markdown(visibleLine(o.SetupNotes)))
		}
		for _, k := range o.Links {
			p("  - Link: %s <%s>\n", markdown(k.Label), markdownURL(k.URL))
		}
	}
	p("- Kind: %s\n", markdown(v.Kind))
	p("- Address: %s\n", markdown(v.Locator))
	p("- State: %s", v.State)
	if v.Coverage != "" {
		p(" (coverage %s)", markdown(v.Coverage))
	}
	p("\n")
	if v.Score >= 0 {
		p("- Supply-chain score: %d of 100\n", v.Score)
	}
	if !v.LastToolsRead.IsZero() {
		p("- Tools last fetched: %s\n", utc(v.LastToolsRead))
	}
	p("- Page: <%s>\n\n", v.Links.Page)
	p("%s\n\n", v.Case.Text)
	p("## Parts\n\n")
	for _, pt := range v.Parts {
		p("- %s: %s", pt.Label, markdown(pt.Text))
		if pt.Transport != "" {
			p(" (%s)", markdown(pt.Transport))
		}
		if pt.Version != "" {
			p(", version %s", markdown(pt.Version))
		}
		if pt.Link != "" {
			p(", <%s>", markdownURL(pt.Link))
		}
		if !pt.Checked {
			p(", listed, not checked")
		}
		p("\n")
	}
	p("\n")

	if len(v.Checks) > 0 {
		p("## Checks of round %s\n\n", markdown(v.Round.RoundID))
		for _, c := range v.Checks {
			p("- %s: **%s**. %s\n", markdown(c.ID), markdown(c.Status), markdown(c.Reason))
		}
		p("\n")
	}
	if tp := v.ToolsPage; len(v.Tools) > 0 {
		p("## Tools (%d)\n\n", tp.Total)
		if tp.Pages > 1 {
			p("Tools %d to %d, page %d of %d.", tp.First, tp.Last(), tp.Page, tp.Pages)
			if n := tp.Prev(); n > 0 {
				p(" Previous page: <%s?tools=%d>.", v.Links.Markdown, n)
			}
			if n := tp.Next(); n > 0 {
				p(" Next page: <%s?tools=%d>.", v.Links.Markdown, n)
			}
			p("\n\n")
		}
		for _, t := range v.Tools {
			p("- %s", markdown(t.Name))
			if t.Title != "" {
				p(": %s", markdown(t.Title))
			}
			p("\n")
		}
		p("\n")
	}
	p("## Last %d changes\n\n", markdownChanges)
	if len(v.Recent) == 0 {
		p("No changes recorded yet.\n")
	}
	for _, c := range v.Recent {
		p("- %s, %s, %s (%s): %s", markdown(c.Label), utc(c.At), markdown(c.Origin), markdown(c.Anchor), markdown(c.Summary))
		if len(c.Badges) > 0 {
			p(" [badges: %s]", markdown(strings.Join(c.Badges, ", ")))
		}
		p("\n")
	}
	p("\nFull history: <%s>\n\n", v.Links.History)
	p("## Verify it yourself\n\n```\n%s\n```\n", strings.Join(verifyCommands(v.Links), "\n"))
	p("\n## What the checks do not tell you\n\n")
	for _, l := range limitations {
		p("- %s\n", l)
	}
	return []byte(b.String()), nil
}

func utc(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

// verifyCommands are the exact commands that verify an entry's envelopes offline with
// probity-verify: the two downloads, then the check. The Overview, the Markdown view and
// the Verify tab (which says how to get probity-verify) all show these.
func verifyCommands(l links) []string {
	return []string{
		"curl -fsSo keys.json " + l.Keys,
		"curl -fsSo envelopes.jsonl " + l.Envelopes,
		"probity-verify --keys keys.json envelopes.jsonl",
	}
}

// limitations say what the checks do not tell (seed 004 as a guide, in our words).
var limitations = []string{
	"The checks read public data and talk to a remote endpoint the way a client would, without logging in. They never run a server's code and do not review what its tools actually do.",
	"A server can pass every check and still do something you do not want; a well-built server can fail one because the data a check needs is not published.",
	"A server can show us one tool list and your client another, or show tools only after you log in. Before you enable a server's tools, and again after an update, read the tool list your client shows: that is what your model gets.",
	"A change made and undone between two of our reads can go unseen, and a read that fails records nothing.",
	"A local server runs with your permissions: read its source, prefer servers published by the product's own vendor, and give it a token with the least access it needs.",
	"Verified means no obvious problem was found in public data by automated checks; it is not a security audit and guarantees nothing.",
}

// --- Envelopes ---

var errStop = errors.New("stop")

// roundIDPattern is attest's pattern of a round id.
var roundIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// roundEnvelope returns the envelope of one signed round of slug, with its ledger
// sequence number. The store has no lookup by round id, so the entry's envelopes are
// walked until it is found.
func (s *site) roundEnvelope(ctx context.Context, slug, roundID string) (store.EnvelopeRecord, error) {
	if !roundIDPattern.MatchString(roundID) {
		return store.EnvelopeRecord{}, errNotFound
	}
	if _, err := s.st.Entry(ctx, slug); err != nil {
		return store.EnvelopeRecord{}, err
	}
	var found *store.EnvelopeRecord
	err := s.st.Envelopes(ctx, store.EnvelopeFilter{EntrySlug: slug}, func(r store.EnvelopeRecord) error {
		if r.RoundID == roundID {
			found = &r
			return errStop
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return store.EnvelopeRecord{}, err
	}
	if found == nil {
		return store.EnvelopeRecord{}, errNotFound
	}
	return *found, nil
}

// envelopes prepares the JSONL of an entry's signed records: every round envelope, the
// envelopes of its visible changes and of its stored supply runs, one per line. Hidden
// changes are left out (their envelopes stay in `probity export`). The entry is looked
// up first, so a missing one is an error before anything is written; write then streams.
func (s *site) envelopes(ctx context.Context, slug string) (func(io.Writer) error, error) {
	e, err := s.st.Entry(ctx, slug)
	if err != nil {
		return nil, err
	}
	return func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 64<<10)
		line := func(env []byte) error {
			if strings.ContainsAny(string(env), "\r\n") {
				return errors.New("a stored envelope spans lines")
			}
			bw.Write(env)
			return bw.WriteByte('\n')
		}
		err := s.st.Envelopes(ctx, store.EnvelopeFilter{EntrySlug: e.Slug}, func(r store.EnvelopeRecord) error {
			return line(r.Envelope)
		})
		if err != nil {
			return err
		}
		var before int64
		for {
			cs, err := s.st.Changes(ctx, store.ChangeFilter{EntryID: e.ID, BeforeNumber: before, Limit: 500})
			if err != nil {
				return err
			}
			for _, c := range cs {
				if c.Envelope != nil && !c.Hidden {
					if err := line(c.Envelope); err != nil {
						return err
					}
				}
				if before == 0 || c.Number < before {
					before = c.Number
				}
			}
			if len(cs) < 500 || before <= 1 {
				break
			}
		}
		runs, err := s.st.SupplyRuns(ctx, e.ID, store.MaxSupplyRuns)
		if err != nil {
			return err
		}
		for _, r := range runs {
			if r.Envelope != nil {
				if err := line(r.Envelope); err != nil {
					return err
				}
			}
		}
		return bw.Flush()
	}, nil
}

// health checks that the store answers.
func (s *site) health(ctx context.Context) error {
	_, err := s.st.Entries(ctx, 0, 1)
	return err
}

// parsePage decodes ?page= (1 when absent); anything else than 1..maxPage is invalid.
func parsePage(v string) (int, bool) {
	if v == "" {
		return 1, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxPage {
		return 0, false
	}
	return n, true
}
