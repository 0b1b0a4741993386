package web_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/checks/fixtures"
	"github.com/probity-dev/probity/checks/probe"
	"github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/rounds"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/web"
)

// rig is a SQLite store with a signing key, a history processor and a round runner
// whose prober answers with a scripted observation at the rig's clock: entries are
// added and read step by step, and the site is built over the store at any point.
type rig struct {
	ctx    context.Context
	st     store.Store
	doc    *keys.Document
	proc   *history.Processor
	runner *rounds.Runner
	prober *scripted
	start  time.Time
	now    time.Time
	fleet  *fixtures.Fleet
}

func newRig(t *testing.T) *rig {
	t.Helper()
	ctx := context.Background()
	r := &rig{ctx: ctx, start: time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)}
	r.now = r.start
	st, doc, signer := openStore(t, r.start)
	r.st, r.doc = st, doc
	fleet, err := fixtures.StartFleet(fixtures.FleetConfig{N: 1, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fleet.Close() })
	r.fleet = fleet
	tmpl, err := probe.New(probe.Config{Version: "test", AllowLoopback: true}).Probe(ctx, fleet.URL(0))
	if err != nil {
		t.Fatal(err)
	}
	r.prober = &scripted{template: tmpl, now: &r.now}
	if r.proc, err = history.NewProcessor(history.Config{Store: st, Signer: signer, ToolVersion: "test"}); err != nil {
		t.Fatal(err)
	}
	r.runner, err = rounds.NewRunner(rounds.Config{Store: st, Prober: r.prober, Signer: signer, ToolVersion: "test", History: r.proc,
		Collector: canned{}, Now: func() time.Time { return r.now }})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// handler is the site over the rig's store at the rig's clock.
func (r *rig) handler(t *testing.T) http.Handler {
	t.Helper()
	h, err := web.New(web.Config{Store: r.st, Keys: r.doc, BaseURL: "https://probity.test", Now: func() time.Time { return r.now },
		Logger: slog.New(slog.DiscardHandler), RateLimit: generous})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func (r *rig) add(t *testing.T, slug, kind, locator string) store.Entry {
	t.Helper()
	e, _, err := r.st.AddEntry(r.ctx, store.NewEntry{SlugBase: slug, Kind: kind, Locator: locator, Name: slug, Source: "import"})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// round runs a round of e at start+at whose tool list is tools, and wants outcome.
func (r *rig) round(t *testing.T, e store.Entry, at time.Duration, want rounds.RoundOutcome, tools ...json.RawMessage) {
	t.Helper()
	r.now = r.start.Add(at)
	r.prober.tools = tools
	o, err := r.runner.RunEntry(r.ctx, e, store.Due{EntryID: e.ID, Reason: store.ReasonCadence, At: r.now}, "")
	if err != nil {
		t.Fatal(err)
	}
	if o.Outcome != want {
		t.Fatalf("round at %v: %s, want %s", at, o.Outcome, want)
	}
}

func (r *rig) supply(t *testing.T, e store.Entry, at time.Duration) {
	t.Helper()
	r.now = r.start.Add(at)
	e, err := r.st.EntryByID(r.ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := r.runner.RunSupply(r.ctx, e, false); err != nil || !rep.Ran {
		t.Fatalf("supply run of %s: %+v, %v", e.Slug, rep, err)
	}
}

func fetch(t *testing.T, h http.Handler, path string) string {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("%s: %d\n%s", path, rec.Code, rec.Body.String())
	}
	return rec.Body.String()
}

// entryDoc is the part of an entry's JSON these tests read.
type entryDoc struct {
	Name   string
	Badge  struct{ State string }
	Server struct {
		Name, Title, Description, Version, Website string
		Icons                                      []string
		Listed                                     bool
	}
	Parts []struct {
		Kind, Locator, Transport, Version, Link string
		Checked, Primary                        bool
	}
	Observation struct {
		Case                   string
		HasToolList            bool
		ToolsLastFetched       *time.Time
		Version                string
		SupplyCheckedAt        *time.Time
		UnconfirmedToolsReadAt *time.Time
	}
	LastToolsRead *time.Time
	Tools         []struct{ Name, Description string }
}

func entryJSON(t *testing.T, h http.Handler, slug string) entryDoc {
	t.Helper()
	var d entryDoc
	if err := json.Unmarshal([]byte(fetch(t, h, "/s/"+slug+".json")), &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// toolsSection is the tools section of an entry page (its checks name tools too).
func toolsSection(page string) string {
	_, s, _ := strings.Cut(page, `<section id="tools">`)
	s, _, _ = strings.Cut(s, "</section>")
	return s
}

// markdownTools is the tools section of an entry's Markdown ("" when it has none).
func markdownTools(md string) string {
	_, s, ok := strings.Cut(md, "## Tools")
	if !ok {
		return ""
	}
	s, _, _ = strings.Cut(s, "\n## ")
	return s
}

func toolNames(d entryDoc) string {
	var names []string
	for _, tl := range d.Tools {
		names = append(names, tl.Name)
	}
	return strings.Join(names, ",")
}

// TestShownToolsAreConfirmed: a drifted tool list read once is not shown, the
// confirmed one is, with a note that a different list awaits confirmation; the
// confirming read shows the new list at once (seed 000).
func TestShownToolsAreConfirmed(t *testing.T) {
	r := newRig(t)
	e := r.add(t, "drift", store.KindRemote, r.fleet.URL(0))
	r.round(t, e, 0, rounds.SignedFull, tool("search", "Search the catalog."))

	r.round(t, e, time.Hour, rounds.SignedFull, tool("search", "Search the catalog."), tool("delete_all", "Deletes everything."))
	h := r.handler(t)
	d := entryJSON(t, h, e.Slug)
	if got := toolNames(d); got != "search" {
		t.Fatalf("after one unconfirmed read the entry shows tools %q, want the confirmed %q", got, "search")
	}
	if p := d.Observation.UnconfirmedToolsReadAt; p == nil || !p.Equal(r.start.Add(time.Hour)) {
		t.Errorf("unconfirmedToolsReadAt = %v, want %v", p, r.start.Add(time.Hour))
	}
	page := toolsSection(fetch(t, h, "/s/"+e.Slug))
	if strings.Contains(page, "delete_all") || !strings.Contains(page, "<code>search</code>") {
		t.Errorf("the page shows the unconfirmed read's tools:\n%s", page)
	}
	if !strings.Contains(page, "It is not confirmed yet") {
		t.Errorf("the page does not say a different list awaits confirmation")
	}
	if md := markdownTools(fetch(t, h, "/s/"+e.Slug+".md")); strings.Contains(md, "delete") || !strings.Contains(md, "- search") {
		t.Errorf("the Markdown shows the unconfirmed read's tools:\n%s", md)
	}

	// The confirming read, two minutes later: the new list at once, on every format.
	r.round(t, e, time.Hour+2*time.Minute, rounds.SignedFull, tool("search", "Search the catalog."), tool("delete_all", "Deletes everything."))
	h = r.handler(t) // a new site: nothing remembered from before
	d = entryJSON(t, h, e.Slug)
	if got := toolNames(d); got != "search,delete_all" && got != "delete_all,search" {
		t.Fatalf("after the confirming read the entry shows tools %q, want search and delete_all", got)
	}
	if d.Observation.UnconfirmedToolsReadAt != nil {
		t.Errorf("still an unconfirmed read after the confirmation: %v", d.Observation.UnconfirmedToolsReadAt)
	}
	page = toolsSection(fetch(t, h, "/s/"+e.Slug))
	if !strings.Contains(page, "<code>delete_all</code>") || strings.Contains(page, "It is not confirmed yet") {
		t.Errorf("the page does not show the confirmed new list:\n%s", page)
	}
	if md := markdownTools(fetch(t, h, "/s/"+e.Slug+".md")); !strings.Contains(md, "- delete_all") {
		t.Errorf("the Markdown does not show the confirmed new list:\n%s", md)
	}
}

// TestHistoryTopSaysCase: the top of each history says which of seed 000's cases
// applies and when the tools were last fetched, for every case.
func TestHistoryTopSaysCase(t *testing.T) {
	r := newRig(t)
	ctx := r.ctx

	// A remote that lists its tools without a login.
	remote := r.add(t, "listing", store.KindRemote, r.fleet.URL(0))
	r.round(t, remote, 0, rounds.SignedFull, tool("search", "Search the catalog."))
	r.round(t, remote, 3*time.Hour, rounds.SignedFull, tool("search", "Search the catalog."))

	// A remote that asks for a login before it lists its tools.
	fx, ok := fixtures.ByName("auth-valid-metadata")
	if !ok {
		t.Fatal("no auth-valid-metadata fixture")
	}
	inst, err := fx.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(inst.Close)
	authObs, err := probe.New(probe.Config{Version: "test", AllowLoopback: true}).Probe(ctx, inst.URL)
	if err != nil {
		t.Fatal(err)
	}
	login := r.add(t, "login", store.KindRemote, inst.URL)
	fleetObs := r.prober.template
	r.prober.template = authObs
	r.round(t, login, 10*time.Minute, rounds.SignedAuth)
	r.prober.template = fleetObs

	// A remote never read yet.
	unread := r.add(t, "unread", store.KindRemote, "https://mcp.example.com/mcp")

	// A repository with an MCP bundle manifest whose tools were read.
	manifest := r.add(t, "bundle", store.KindGitHub, "https://github.com/acme/bundle")
	manifestAt := r.start.Add(20 * time.Minute)
	if _, err := r.proc.RecordManifest(ctx, manifest.ID, []json.RawMessage{tool("convert", "Convert a file.")}, 7, "sha256:"+strings.Repeat("0", 64), manifestAt); err != nil {
		t.Fatal(err)
	}
	// A cheap read two hours later finds the same tools: they were fetched then.
	cheapAt := manifestAt.Add(2 * time.Hour)
	if news, err := r.proc.ManifestRead(ctx, manifest.ID, []json.RawMessage{tool("convert", "Convert a file.")}, cheapAt); err != nil || news {
		t.Fatalf("ManifestRead of the same tools: news %v, %v", news, err)
	}

	// A package whose version only is followed.
	pkg := r.add(t, "pkg", store.KindNPM, "pkg:npm/%40acme/search-mcp")
	if _, err := r.proc.RecordPackageVersion(ctx, pkg.ID, "1.4.2", r.start.Add(30*time.Minute)); err != nil {
		t.Fatal(err)
	}
	r.supply(t, pkg, 31*time.Minute)

	// A repository without a manifest.
	repo := r.add(t, "repo", store.KindGitHub, "https://github.com/acme/plain")

	r.now = r.start.Add(4 * time.Hour)
	h := r.handler(t)
	cases := []struct {
		e                store.Entry
		wantCase, phrase string
		fetched          time.Time // zero: never
		tools            string
	}{
		{remote, "remote", "lists its tools without a login", r.start.Add(3 * time.Hour), "search"},
		{login, "login", "asks for a login or an API key before it lists its tools", time.Time{}, ""},
		{unread, "unread", "has not been read yet", time.Time{}, ""},
		{manifest, "manifest", "MCP bundle manifest", cheapAt, "convert"},
		{pkg, "package", "follows the newest published version", time.Time{}, ""},
		{repo, "repository", "without an MCP bundle manifest", time.Time{}, ""},
	}
	for _, c := range cases {
		t.Run(c.wantCase, func(t *testing.T) {
			hist := fetch(t, h, "/s/"+c.e.Slug+"/history")
			top, _, _ := strings.Cut(hist, `<section id="changes"`)
			if !strings.Contains(top, c.phrase) {
				t.Errorf("the top of the history does not say %q:\n%s", c.phrase, top)
			}
			wantFetched := "Tools last fetched: never"
			if !c.fetched.IsZero() {
				wantFetched = "Tools last fetched: <time>" + c.fetched.UTC().Format("2006-01-02 15:04:05 UTC") + "</time>"
			}
			if !strings.Contains(top, wantFetched) {
				t.Errorf("the top of the history does not say %q:\n%s", wantFetched, top)
			}
			d := entryJSON(t, h, c.e.Slug)
			if d.Observation.Case != c.wantCase {
				t.Errorf("observation.case = %q, want %q", d.Observation.Case, c.wantCase)
			}
			if got := d.Observation.ToolsLastFetched; (got == nil) != c.fetched.IsZero() || (got != nil && !got.Equal(c.fetched)) {
				t.Errorf("observation.toolsLastFetched = %v, want %v", got, c.fetched)
			}
			if got := toolNames(d); got != c.tools {
				t.Errorf("tools %q, want %q", got, c.tools)
			}
			if page := fetch(t, h, "/s/"+c.e.Slug); !strings.Contains(page, c.phrase) {
				t.Errorf("the entry page does not say %q", c.phrase)
			}
		})
	}
	if hist := fetch(t, h, "/s/"+pkg.Slug+"/history"); !strings.Contains(hist, "Observation started at version 1.4.2; nothing before it counts as a change.") || strings.Contains(hist, "Version: none") {
		t.Errorf("the package's baseline on its history page:\n%s", hist)
	}
	if d := entryJSON(t, h, pkg.Slug); d.Observation.Version != "1.4.2" || d.Observation.SupplyCheckedAt == nil {
		t.Errorf("package observation: %+v", d.Observation)
	}
}

// TestCheckedServerNotUnprobed: badges and pages never say "not yet probed" for a
// server whose parts have been checked: a package with a signed supply run and no
// round, and a remote whose supply run came before its first round. An entry checked
// in no way still says so.
func TestCheckedServerNotUnprobed(t *testing.T) {
	r := newRig(t)
	pkg := r.add(t, "pkg", store.KindNPM, "pkg:npm/%40acme/search-mcp")
	r.supply(t, pkg, 0)
	remote := r.add(t, "early", store.KindRemote, r.fleet.URL(0))
	r.supply(t, remote, time.Minute)
	fresh := r.add(t, "fresh", store.KindPyPI, "pkg:pypi/acme-fresh")
	h := r.handler(t)

	type shields struct{ Message, Color string }
	badgeOf := func(slug string) shields {
		var b shields
		if err := json.Unmarshal([]byte(fetch(t, h, "/badge/"+slug+".json")), &b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, e := range []store.Entry{pkg, remote} {
		runs, err := r.st.SupplyRuns(r.ctx, e.ID, 1)
		if err != nil || len(runs) != 1 || runs[0].Envelope == nil {
			t.Fatalf("%s: supply runs %d, %v (want one signed)", e.Slug, len(runs), err)
		}
		want := "score " + strconv.Itoa(runs[0].Score)
		if runs[0].Verified {
			want = "verified"
		}
		if b := badgeOf(e.Slug); b.Message != want {
			t.Errorf("%s: badge %q, want %q", e.Slug, b.Message, want)
		}
		// The directory row says the same verdict, in the pages' words.
		_, rows := dirRows(t, fetch(t, h, "/"))
		if label := strings.Replace(want, "verified", "Verified", 1); !strings.Contains(rows[e.Slug], "</a> <span class=\"status status-") ||
			!strings.Contains(rows[e.Slug], ">"+label) {
			t.Errorf("%s: the directory row does not say %q:\n%s", e.Slug, label, rows[e.Slug])
		}
		if svg := fetch(t, h, "/badge/"+e.Slug+".svg"); strings.Contains(svg, "not yet probed") || strings.Contains(svg, "not yet checked") {
			t.Errorf("%s: the SVG badge says not yet checked", e.Slug)
		}
		if d := entryJSON(t, h, e.Slug); d.Badge.State == "unsigned" {
			t.Errorf("%s: state %q, want signed or Verified", e.Slug, d.Badge.State)
		}
		for _, p := range []string{"/s/" + e.Slug, "/s/" + e.Slug + ".md", "/s/" + e.Slug + "/history", "/"} {
			if body := fetch(t, h, p); strings.Contains(body, "not yet probed") {
				t.Errorf("%s says not yet probed", p)
			}
		}
	}
	dir := fetch(t, h, "/")
	if strings.Count(dir, "not yet checked") != 1 {
		t.Errorf("directory: want one entry not yet checked")
	}
	if b := badgeOf(fresh.Slug); b.Message != "not yet checked" {
		t.Errorf("an entry checked in no way: badge %q, want not yet checked", b.Message)
	}
}

// listedTitle and listedDescription are listing text with markup: third-party text,
// shown escaped.
const (
	listedTitle       = `Acme <b>Search</b>`
	listedDescription = `Searches. <script>alert(1)</script><img src=x onerror=alert(1)>`
)

// TestServerPage: an entry is a server. Its page, JSON and Markdown show the listing
// (name, title, description, website, icons as text) and its linked parts; the
// directory row shows the title; every listing text is escaped; nothing is loaded from
// a third party; a website that is not http(s) is plain text.
func TestServerPage(t *testing.T) {
	r := newRig(t)
	doc, _ := json.Marshal(map[string]any{
		"name": "io.github.acme/search", "title": listedTitle, "description": listedDescription, "version": "1.2.0",
		"websiteUrl": "https://acme.example/search",
		"icons":      []map[string]any{{"src": "https://cdn.acme.example/icon.png", "mimeType": "image/png"}},
	})
	remote := r.fleet.URL(0)
	res, err := r.st.UpsertServer(r.ctx, store.ServerUpsert{
		SlugBase: "acme-search", Name: "io.github.acme/search", Source: "registry",
		Listing: store.Listing{ServerName: "io.github.acme/search", Title: listedTitle, Description: listedDescription,
			Website: "https://acme.example/search", Version: "1.2.0", Document: doc, Status: store.StatusActive},
		Parts: []store.Part{
			{Kind: store.KindRemote, Locator: remote, Transport: "streamable-http"},
			{Kind: store.KindNPM, Locator: "pkg:npm/%40acme/search-mcp", Version: "1.2.0"},
			{Kind: store.KindPyPI, Locator: "pkg:pypi/acme-search", Version: "1.2.0"},
			{Kind: store.KindGitHub, Locator: "https://github.com/acme/search-mcp"},
			{Kind: store.PartOCI, Locator: "docker.io/acme/search-mcp:1.2.0"},
			{Kind: store.PartNuGet, Locator: "Acme.Search.Mcp", Version: "1.2.0"},
			{Kind: store.PartMCPB, Locator: "https://github.com/acme/search-mcp/releases/download/v1.2.0/search.mcpb"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	e := res.Entry
	r.round(t, e, 0, rounds.SignedFull, tool("search", "Search the catalog."))
	// A second server whose website is not an http(s) address.
	res2, err := r.st.UpsertServer(r.ctx, store.ServerUpsert{
		SlugBase: "odd", Name: "io.github.acme/odd", Source: "registry",
		Listing: store.Listing{ServerName: "io.github.acme/odd", Website: "javascript:alert(1)"},
		Parts:   []store.Part{{Kind: store.KindNPM, Locator: "pkg:npm/odd-mcp"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := r.handler(t)

	page := fetch(t, h, "/s/"+e.Slug)
	for _, want := range []string{
		"<h1>Acme &lt;b&gt;Search&lt;/b&gt; ",
		"Searches. &lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;",
		"<code>io.github.acme/search</code>",
		`<a href="https://acme.example/search" rel="nofollow ugc noopener">https://acme.example/search</a>`,
		"<code>https://cdn.acme.example/icon.png</code>",
		"<code>" + remote + "</code> · streamable-http",
		`<a href="https://www.npmjs.com/package/@acme/search-mcp/v/1.2.0" rel="nofollow ugc noopener"><code>pkg:npm/%40acme/search-mcp</code></a>`,
		`<a href="https://pypi.org/project/acme-search/1.2.0/" rel="nofollow ugc noopener">`,
		`<a href="https://github.com/acme/search-mcp" rel="nofollow ugc noopener">`,
		"OCI image</td>\n<td><code>docker.io/acme/search-mcp:1.2.0</code></td>\n<td>listed, not checked</td>",
		"NuGet package</td>\n<td><code>Acme.Search.Mcp</code> · version 1.2.0</td>\n<td>listed, not checked</td>",
		"MCP bundle</td>\n<td><code>https://github.com/acme/search-mcp/releases/download/v1.2.0/search.mcpb</code></td>\n<td>listed, not checked</td>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	for _, bad := range []string{"<script>alert", "<img src=x", "<b>Search", `src="https://cdn.acme.example`, "<img src=\"https://"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}

	d := entryJSON(t, h, e.Slug)
	if d.Name != listedTitle || d.Server.Name != "io.github.acme/search" || d.Server.Title != listedTitle ||
		d.Server.Description != listedDescription || d.Server.Website != "https://acme.example/search" ||
		len(d.Server.Icons) != 1 || !d.Server.Listed || d.Server.Version != "1.2.0" {
		t.Errorf("server: %+v", d.Server)
	}
	if len(d.Parts) != 7 || !d.Parts[0].Primary || d.Parts[0].Kind != store.KindRemote || d.Parts[0].Transport != "streamable-http" {
		t.Fatalf("parts: %+v", d.Parts)
	}
	for _, p := range d.Parts {
		checked := p.Kind != store.PartOCI && p.Kind != store.PartNuGet && p.Kind != store.PartMCPB
		if p.Checked != checked {
			t.Errorf("part %s checked = %v, want %v", p.Kind, p.Checked, checked)
		}
	}
	if body := fetch(t, h, "/s/"+e.Slug+".json"); strings.Contains(body, "<script>") {
		t.Error("the JSON holds a raw <script>")
	}

	md := fetch(t, h, "/s/"+e.Slug+".md")
	for _, want := range []string{
		"# Acme &lt;b>Search&lt;/b>",
		"- Registry name: io.github.acme/search",
		"- Website: <https://acme.example/search>",
		"- npm package: pkg:npm/%40acme/search-mcp, version 1.2.0, <https://www.npmjs.com/package/@acme/search-mcp/v/1.2.0>",
		"- OCI image: docker.io/acme/search-mcp:1.2.0, listed, not checked",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "<script") || strings.Contains(md, "<b>") {
		t.Error("the Markdown holds raw markup")
	}

	dir := fetch(t, h, "/")
	if !strings.Contains(dir, `<a href="/s/`+e.Slug+`">Acme &lt;b&gt;Search&lt;/b&gt;</a>`) {
		t.Error("the directory row does not show the title")
	}
	if strings.Contains(dir, "<b>Search") {
		t.Error("the directory holds the title's markup")
	}

	odd := fetch(t, h, "/s/"+res2.Entry.Slug)
	if strings.Contains(odd, `href="javascript`) || !strings.Contains(odd, "<dt>Website</dt><dd>javascript:alert(1)</dd>") {
		t.Error("a website that is not http(s) is not shown as plain text")
	}
}

// TestServerRemotesPages: a server with two remotes has its second remote probed as an
// entry of its own; the server's page links the remote's part to that entry, the
// remote's page names its server, and the directory lists the server alone.
func TestServerRemotesPages(t *testing.T) {
	r := newRig(t)
	res, err := r.st.UpsertServer(r.ctx, store.ServerUpsert{
		SlugBase: "twin", Name: "Twin", Source: "registry",
		Listing: store.Listing{ServerName: "com.example/twin", Title: "Twin"},
		Parts: []store.Part{
			{Kind: store.KindRemote, Locator: "https://twin.example.com/mcp", Transport: "streamable-http"},
			{Kind: store.KindRemote, Locator: "https://twin.example.com/sse", Transport: "sse"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := r.handler(t)
	page := fetch(t, h, "/s/"+res.Entry.Slug)
	if !strings.Contains(page, `<a href="/s/twin-remote">its own entry and history</a>`) {
		t.Errorf("the server's page does not link its second remote to its entry:\n%s", page)
	}
	remote := fetch(t, h, "/s/twin-remote")
	if !strings.Contains(remote, `One of the remotes of <a href="/s/twin">Twin</a>`) {
		t.Errorf("the second remote's page does not name its server:\n%s", remote)
	}
	if dir := fetch(t, h, "/"); strings.Contains(dir, "/s/twin-remote") || !strings.Contains(dir, "/s/twin") {
		t.Errorf("the directory lists the second remote, or not the server:\n%s", dir)
	}
}
