package web

import (
	"context"
	"encoding/json"
	"html/template"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/checks"
	"github.com/probity-dev/probity/checks/supply"
	"github.com/probity-dev/probity/store"
)

// The tabs of an entry besides the overview (site.go) and the history (the history
// page): Setup, Checks, Supply chain, Verify and FAQ, each at /s/{slug}/{tab} and as
// JSON at /s/{slug}/{tab}.json. Each shows the entry's card on top (entrycard.go).

// tabPage is what a tab shows: the top every tab has, and the tab's own part (one of
// the others is set).
type tabPage struct {
	Head *entryHead
	// Round is the newest round (Checks), nil when none.
	Round *roundView
	// ChecksHTML is the newest round's checks grouped, findings first (Checks);
	// SupplyHTML the newest supply run (Supply chain); both rendered once per round and
	// run.
	ChecksHTML, SupplyHTML template.HTML
	// Groups and Supply are the same as views, for the tab's JSON.
	Groups []checkGroup
	Supply *supplyView
	// Parts are the entry's parts (Supply chain: which are checked).
	Parts  []partView
	Setup  *setupView
	Verify *verifyView
	FAQ    *faqView
	// Limits is "what the checks do not tell you" (FAQ, Verify).
	Limits []string
	// Disputes are the entry's disputes (Checks); Contest the links to contest each
	// check result of the signed round shown (the route decides who may).
	Disputes []disputeView
	Contest  []contestLink
}

// contestLink is the link to contest one check result.
type contestLink struct{ CheckID, Status, Href string }

// entryTab builds tab (tabSetup, tabChecks, tabSupply, tabVerify or tabFAQ) of slug;
// json leaves the rendered sections out and fills the views instead.
func (s *site) entryTab(ctx context.Context, slug, tab string, json bool) (*tabPage, error) {
	d, err := s.st.EntryDigest(ctx, slug, store.EntryQuery{Changes: cardChanges})
	if err != nil {
		return nil, err
	}
	e := d.Entry
	p := &tabPage{Limits: limitations}
	if p.Head, err = s.head(ctx, &d, tab); err != nil {
		return nil, err
	}
	switch tab {
	case tabSetup:
		p.Setup = setupOf(e, d.Parts)
	case tabChecks:
		// The checks of the round the card counts (its links point here): the newest
		// signed one, or the newest round when none is signed.
		r := p.Head.signed
		if r == nil {
			r = d.Round
		}
		if r == nil {
			break
		}
		p.Round = &roundView{RoundID: visibleLine(r.RoundID), StartedAt: r.StartedAt, Coverage: r.Coverage, Signed: r.Signed,
			UnsignedReason: visibleLine(r.UnsignedReason), ToolCount: r.ToolCount}
		groups := func() ([]checkGroup, error) {
			cv, err := s.roundChecks(ctx, e.Slug, r)
			if err != nil {
				return nil, err
			}
			return checkGroupsOf(cv), nil
		}
		if json {
			p.Groups, err = groups()
		} else {
			p.ChecksHTML, err = section(s, s.checksHTML, r.ID, "check-groups", groups)
		}
		if err != nil {
			return nil, err
		}
		if p.Disputes, err = s.disputesOf(ctx, e.ID); err != nil {
			return nil, err
		}
		if r.Signed && !json {
			cv, err := s.roundChecks(ctx, e.Slug, r)
			if err != nil {
				return nil, err
			}
			for _, c := range cv {
				p.Contest = append(p.Contest, contestLink{CheckID: c.ID, Status: c.Status,
					Href: "/s/" + e.Slug + "/contest?round=" + strconv.FormatInt(r.ID, 10) + "&check=" + url.QueryEscape(c.ID)})
			}
		}
	case tabSupply:
		p.Parts = partViews(e, d.Parts, d.Remotes)
		run := d.Supply
		if run == nil {
			break
		}
		view := func() (*supplyView, error) { return s.supplyViewOfRun(ctx, e, run.ID) }
		if json {
			p.Supply, err = view()
		} else {
			p.SupplyHTML, err = section(s, s.supplyHTML, run.ID, "supply", view)
		}
		if err != nil {
			return nil, err
		}
	case tabVerify:
		p.Verify = s.verifyOf(p.Head)
	case tabFAQ:
		p.FAQ = faqOf()
	default:
		return nil, errNotFound
	}
	return p, nil
}

// cardChanges is how many of the newest changes a tab reads for the card's last
// change: a baseline or two among them leaves others.
const cardChanges = 10

// --- Checks ---

// checkGroup is the checks of a round with one status.
type checkGroup struct {
	Status string // attest.CheckStatus
	Title  string // "Failed", …
	Class  string // the status label's class suffix (status-…)
	Checks []checkView
}

// checkGroupOrder is the groups in the order the Checks tab shows them: findings first.
var checkGroupOrder = []checkGroup{
	{Status: string(attest.StatusFailed), Title: "Failed", Class: cardFailed},
	{Status: string(attest.StatusObservedRisk), Title: "Observed risk", Class: cardRisk},
	{Status: string(attest.StatusUnverified), Title: "Could not be checked", Class: cardNone},
	{Status: string(attest.StatusVerified), Title: "Verified", Class: cardOK},
}

// checkGroupsOf groups a round's checks by status, findings first (FAILED, then
// OBSERVED_RISK), each group in the round's order; a status no group names comes last.
// Empty groups are left out.
func checkGroupsOf(cs []checkView) []checkGroup {
	var out []checkGroup
	known := make(map[string]bool)
	for _, g := range checkGroupOrder {
		known[g.Status] = true
		for _, c := range cs {
			if c.Status == g.Status {
				g.Checks = append(g.Checks, c)
			}
		}
		if len(g.Checks) > 0 {
			out = append(out, g)
		}
	}
	other := checkGroup{Status: "", Title: "Other", Class: cardNone}
	for _, c := range cs {
		if !known[c.Status] {
			other.Checks = append(other.Checks, c)
		}
	}
	if len(other.Checks) > 0 {
		out = append(out, other)
	}
	return out
}

// markInvisible returns an evidence sample (checks.Evidence.Sample: ASCII, escaped in
// the manner of strconv.QuoteToASCII) as HTML with every escape of a character that
// hides text (hides: zero-width, bidi and tag characters, controls …) wrapped in
// <mark class="mark-invisible">. Every piece is HTML-escaped; an escaped backslash
// (\\) is text, never the start of an escape, so a server cannot forge a mark. A sample
// that is not ASCII (not one the checks wrote) is only escaped.
func markInvisible(sample string) template.HTML {
	if sample == "" || !isASCII(sample) {
		return template.HTML(template.HTMLEscapeString(sample))
	}
	var b strings.Builder
	b.Grow(len(sample) + 32)
	plain := 0 // the start of the text not yet written
	for i := 0; i < len(sample); {
		if sample[i] != '\\' || i+1 == len(sample) {
			i++
			continue
		}
		n, marked := escapeAt(sample[i:])
		if marked {
			b.WriteString(template.HTMLEscapeString(sample[plain:i]))
			b.WriteString(`<mark class="mark-invisible">`)
			b.WriteString(template.HTMLEscapeString(sample[i : i+n]))
			b.WriteString(`</mark>`)
			plain = i + n
		}
		i += n
	}
	b.WriteString(template.HTMLEscapeString(sample[plain:]))
	return template.HTML(b.String()) // built from escaped pieces and our own tags
}

// escapeAt reads the escape at the start of s (s[0] is a backslash) and returns its
// length and whether it stands for a character that hides text.
func escapeAt(s string) (int, bool) {
	hex := func(n int) (rune, bool) {
		if len(s) < 2+n {
			return 0, false
		}
		v, err := strconv.ParseUint(s[2:2+n], 16, 32)
		return rune(v), err == nil
	}
	switch s[1] {
	case 'u':
		if r, ok := hex(4); ok {
			return 6, hides(r)
		}
	case 'U':
		if r, ok := hex(8); ok {
			return 10, r > utf8.MaxRune || hides(r)
		}
	case 'x':
		if _, ok := hex(2); ok {
			return 4, true // a control character or an invalid byte
		}
	case 'a', 'b', 'f', 'v':
		return 2, true
	}
	return 2, false // \\, \", \t, \n, \r: text
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// --- Setup ---

// setupView says how to add the server to an MCP client, from its listing's parts.
type setupView struct {
	Remotes  []remoteSetup  `json:"remotes"`
	Packages []packageSetup `json:"packages"`
	// Other are the parts that are listed but not installed from here (repositories,
	// OCI images, NuGet packages, bundles).
	Other []partView `json:"-"`
}

// remoteSetup is how to connect a client to one remote.
type remoteSetup struct {
	URL       string `json:"url"`
	Transport string `json:"transport,omitempty"`
	// Config is a client configuration (mcpServers) for it, Command the Claude Code
	// line; both "" when the address is not an http(s) URL fit for them.
	Config  string `json:"config,omitempty"`
	Command string `json:"claudeCode,omitempty"`
}

// packageSetup is how to run one package as a local server.
type packageSetup struct {
	Label   string `json:"kind"`
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	Link    string `json:"link,omitempty"`
	// Run is the line that runs it (npx, uvx), Config a client configuration, Command
	// the Claude Code line.
	Run     string `json:"run,omitempty"`
	Config  string `json:"config,omitempty"`
	Command string `json:"claudeCode,omitempty"`
}

// setupOf builds the Setup tab from an entry's parts (its primary part when none are
// stored). The server's name in the snippets is the entry's slug, which needs no
// quoting anywhere; a remote's URL is quoted for the shell when it needs it.
func setupOf(e store.Entry, parts []store.Part) *setupView {
	v := &setupView{}
	name := e.Slug
	for _, p := range partViews(e, parts, nil) {
		switch p.Kind {
		case store.KindRemote:
			rs := remoteSetup{URL: p.Text, Transport: p.Transport}
			u := httpLink(p.Text)
			if u == "" {
				v.Remotes = append(v.Remotes, rs)
				continue
			}
			typ := "http"
			if strings.EqualFold(p.Transport, "sse") {
				typ = "sse"
			}
			rs.Config = mcpConfig(name, map[string]any{"type": typ, "url": u})
			rs.Command = "claude mcp add --transport " + typ + " " + name + " " + shellWord(u)
			v.Remotes = append(v.Remotes, rs)
		case store.KindNPM, store.KindPyPI:
			ps := packageSetup{Label: p.Label, Version: p.Version, Link: p.Link}
			ref, cmd, args := packageRun(p.Kind, p.Text, p.Version)
			ps.Name = ref
			if cmd != "" {
				ps.Run = cmd + " " + strings.Join(args, " ")
				ps.Config = mcpConfig(name, map[string]any{"command": cmd, "args": args})
				ps.Command = "claude mcp add " + name + " -- " + ps.Run
			}
			v.Packages = append(v.Packages, ps)
		default:
			v.Other = append(v.Other, p)
		}
	}
	return v
}

// packageRun is how a client runs a package as a local server: its name (with the
// listed version, when it is one the registry's addresses take), the command and its
// arguments; command "" when the name is not one a shell line can carry as it is.
func packageRun(kind, purl, version string) (ref, command string, args []string) {
	if version != "" && (len(version) > 100 || !linkVersion.MatchString(version)) {
		version = ""
	}
	switch kind {
	case store.KindNPM:
		name := strings.Replace(strings.TrimPrefix(purl, "pkg:npm/"), "%40", "@", 1)
		if !strings.HasPrefix(purl, "pkg:npm/") || !npmName.MatchString(name) {
			return purl, "", nil
		}
		ref = name
		if version != "" {
			ref += "@" + version
		}
		return ref, "npx", []string{"-y", ref}
	case store.KindPyPI:
		name := strings.TrimPrefix(purl, "pkg:pypi/")
		if !strings.HasPrefix(purl, "pkg:pypi/") || !pypiName.MatchString(name) {
			return purl, "", nil
		}
		ref = name
		if version != "" {
			ref += "@" + version
		}
		return ref, "uvx", []string{ref}
	}
	return purl, "", nil
}

// mcpConfig is the mcpServers object of an MCP client's configuration with one server.
func mcpConfig(name string, server map[string]any) string {
	b, err := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{name: server}}, "", "  ")
	if err != nil {
		return ""
	}
	return string(b)
}

// shellWord is s as one word for a POSIX shell: as it is when it holds only characters
// no shell treats specially, else in single quotes.
func shellWord(s string) string {
	safe := s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@%+=,", r))
	})
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

// --- Verify ---

// verifyModule is the module path `go install` fetches probity-verify from, and
// verifyRepo the repository to clone.
const (
	verifyModule = "github.com/probity-dev/probity"
	verifyRepo   = "https://github.com/probity-dev/probity.git"
)

// verifyView is the Verify tab: how to get probity-verify, the files to download, the
// commands, and the key fingerprints to pin.
type verifyView struct {
	// Install and Clone are the two ways to get probity-verify; Download fetches the
	// key document and the entry's envelopes, Check verifies them.
	Install  string `json:"install"`
	Clone    string `json:"clone"`
	Download string `json:"download"`
	Check    string `json:"verify"`
	// BundleDownload and BundleCheck verify the newest signed round with its log proof
	// ("" when no log is served or no round is signed).
	BundleDownload string `json:"bundleDownload,omitempty"`
	BundleCheck    string `json:"bundleVerify,omitempty"`
	// Inspect recomputes the key fingerprints from the downloaded key document
	// (probity-verify inspect is probity inspect).
	Inspect      string `json:"inspect"`
	KeysURL      string `json:"keys"`
	EnvelopesURL string `json:"envelopes"`
	// Keys are the signing keys valid now, with their fingerprints; LogOrigin and
	// LogKey name the transparency log ("" when the document names none).
	Keys      []keyPin `json:"signingKeys"`
	LogOrigin string   `json:"logOrigin,omitempty"`
	LogKey    string   `json:"logKey,omitempty"`
}

// keyPin is one signing key of the key document as the Verify tab shows it.
type keyPin struct {
	KeyID      string     `json:"keyId"`
	SPKISHA256 string     `json:"spki_sha256"`
	ValidFrom  time.Time  `json:"validFrom"`
	ValidUntil *time.Time `json:"validUntil"`
}

// verifyOf builds the Verify tab of the entry h heads.
func (s *site) verifyOf(h *entryHead) *verifyView {
	l := h.Links
	verify := verifyCommands(l)
	v := &verifyView{
		Install:  "go install " + verifyModule + "/cmd/probity-verify@latest",
		Clone:    "git clone " + verifyRepo + "\ncd probity\ngo install ./cmd/probity-verify\ncd ..",
		Download: strings.Join(verify[:2], "\n"),
		Check:    verify[2],
		Inspect:  "probity-verify inspect keys.json",
		KeysURL:  l.Keys, EnvelopesURL: l.Envelopes,
	}
	if r := h.Card.SignedRound; r != nil && s.log != nil && roundIDPattern.MatchString(r.RoundID) {
		v.BundleDownload = "curl -fsSo round.bundle.json " + l.Page + "/r/" + r.RoundID + ".bundle.json"
		v.BundleCheck = "probity-verify --keys keys.json --require-log round.bundle.json"
	}
	if d := s.keyDoc; d != nil {
		now := s.now()
		for _, k := range d.Keys {
			if k.Revoked() || !k.ValidAt(now) {
				continue
			}
			v.Keys = append(v.Keys, keyPin{KeyID: visibleLine(k.KeyID), SPKISHA256: k.SPKISHA256, ValidFrom: k.ValidFrom, ValidUntil: k.ValidUntil})
		}
		if d.Log != nil {
			v.LogOrigin, v.LogKey = visibleLine(d.Log.Origin), visibleLine(d.Log.Key)
		}
	}
	return v
}

// --- FAQ ---

// faqView is what the FAQ tab lists from the catalogs: every check of a round and
// every supply-chain check, with their titles.
type faqView struct {
	Checks []faqCheck `json:"checks"`
	Supply []faqCheck `json:"supplyChecks"`
	// MinScore and MinWeight are the Verified rule's thresholds (supply).
	MinScore  int `json:"verifiedMinScore"`
	MinWeight int `json:"verifiedMinWeightRan"`
}

type faqCheck struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Group string `json:"group"`
}

// checkGroupTitles name the catalog's groups.
var checkGroupTitles = map[string]string{
	checks.GroupReach: "Reachability", checks.GroupProto: "Protocol", checks.GroupSec: "Security", checks.GroupDrift: "Drift",
}

func faqOf() *faqView {
	v := &faqView{MinScore: supply.VerifiedMinScore, MinWeight: supply.VerifiedMinWeightRan}
	for _, c := range checks.Catalog() {
		v.Checks = append(v.Checks, faqCheck{ID: c.ID, Title: c.Title, Group: checkGroupTitles[c.Group]})
	}
	for _, c := range supply.Catalog() {
		v.Supply = append(v.Supply, faqCheck{ID: c.ID, Title: c.Title, Group: c.Group})
	}
	return v
}

// tabHead reads the top of tab of slug alone: for a page that builds the rest itself
// (the History tab).
func (s *site) tabHead(ctx context.Context, slug, tab string) (*entryHead, error) {
	d, err := s.st.EntryDigest(ctx, slug, store.EntryQuery{Changes: cardChanges})
	if err != nil {
		return nil, err
	}
	return s.head(ctx, &d, tab)
}

// --- JSON ---

// tabJSON is a tab as JSON: the card, and the tab's own part.
type tabJSON struct {
	Slug   string           `json:"slug"`
	Tab    string           `json:"tab"`
	Page   string           `json:"page"`
	Card   cardJSON         `json:"card"`
	Round  *roundJSON       `json:"round,omitempty"`
	Groups []checkGroupJSON `json:"groups,omitempty"`
	Supply *supplyJSON      `json:"supply,omitempty"`
	Parts  []partJSON       `json:"parts,omitempty"`
	Setup  *setupView       `json:"setup,omitempty"`
	Verify *verifyView      `json:"verify,omitempty"`
	FAQ    *faqView         `json:"faq,omitempty"`
	Limits []string         `json:"whatTheChecksDoNotTellYou,omitempty"`
}

// cardJSON is the summary card as JSON.
type cardJSON struct {
	Sentence     string     `json:"sentence"`
	Status       string     `json:"status"`
	Label        string     `json:"label"`
	Failed       int        `json:"failed"`
	ObservedRisk int        `json:"observedRisk"`
	Checks       int        `json:"checks"`
	Findings     []string   `json:"findings"`
	SignedRound  *roundRef  `json:"signedRound"`
	Verified     bool       `json:"verified"`
	Score        *int       `json:"supplyScore"`
	VerifiedText string     `json:"verifiedText"`
	Uptime       string     `json:"uptime"`
	LastChangeAt *time.Time `json:"lastChangeAt"`
	LastChange   string     `json:"lastChange,omitempty"`
	Coverage     string     `json:"coverage"`
	LastReadAt   *time.Time `json:"lastReadAt"`
}

type checkGroupJSON struct {
	Status string      `json:"status"`
	Checks []checkJSON `json:"checks"`
}

func cardJSONOf(c cardView) cardJSON {
	j := cardJSON{Sentence: c.Sentence, Status: c.Status, Label: c.Label, Failed: c.Failed, ObservedRisk: c.ObservedRisk,
		Checks: c.Checks, Findings: []string{}, SignedRound: c.SignedRound, Verified: c.Verified, VerifiedText: c.VerifiedText,
		Uptime: c.UptimeText, LastChangeAt: timeOrNil(c.LastChangeAt), Coverage: c.Coverage, LastReadAt: timeOrNil(c.LastRead)}
	for _, f := range c.Findings {
		j.Findings = append(j.Findings, f.ID)
	}
	if c.Score >= 0 {
		score := c.Score
		j.Score = &score
	}
	if c.LastChange != nil {
		j.LastChange = c.LastChange.Link
	}
	return j
}

func tabJSONOf(p *tabPage) tabJSON {
	h := p.Head
	j := tabJSON{Slug: h.Slug, Tab: h.Tab, Page: h.Links.Page + tabPath(h.Tab), Card: cardJSONOf(h.Card),
		Setup: p.Setup, Verify: p.Verify, FAQ: p.FAQ}
	if r := p.Round; r != nil {
		j.Round = &roundJSON{RoundID: r.RoundID, StartedAt: r.StartedAt, Coverage: r.Coverage, Signed: r.Signed,
			UnsignedReason: r.UnsignedReason, ToolCount: r.ToolCount}
	}
	for _, g := range p.Groups {
		gj := checkGroupJSON{Status: g.Status, Checks: []checkJSON{}}
		for _, c := range g.Checks {
			gj.Checks = append(gj.Checks, checkJSONOf(c))
		}
		j.Groups = append(j.Groups, gj)
	}
	if sv := p.Supply; sv != nil {
		j.Supply = supplyJSONOf(sv)
	}
	for _, pt := range p.Parts {
		j.Parts = append(j.Parts, partJSONOf(pt))
	}
	if p.FAQ != nil || p.Verify != nil {
		j.Limits = p.Limits
	}
	return j
}

// tabPath is the path of tab after /s/{slug}.
func tabPath(tab string) string {
	for _, t := range entryTabs {
		if t.ID == tab {
			return t.Path
		}
	}
	return ""
}
