package rounds

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/checks/supply"
	"github.com/probity-dev/probity/store"
)

// cannedCollector returns prepared facts, as the sources would after reading a
// well-kept npm package, and records the targets it was given.
type cannedCollector struct {
	mu      sync.Mutex
	version string
	calls   int
	targets []supply.Target
}

func (c *cannedCollector) Collect(ctx context.Context, t supply.Target, tools []json.RawMessage, ep *supply.EndpointFacts) *supply.Facts {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	c.targets = append(c.targets, t)
	now := time.Now().UTC()
	ok := supply.Source{Outcome: supply.SourceOK, FetchedAt: now, URL: "https://registry.npmjs.org/acme-weather-mcp"}
	repo := "https://github.com/acme/weather-mcp"
	return &supply.Facts{
		Kind: t.Kind, Locator: t.Locator,
		Package: &supply.PackageFacts{Source: ok, Ecosystem: "npm", Name: "acme-weather-mcp", Latest: c.version,
			PublishedAt: now.Add(-24 * time.Hour), RepositoryURL: repo, License: "MIT", README: "Weather tools."},
		Repo: &supply.RepoFacts{Source: supply.Source{Outcome: supply.SourceOK, FetchedAt: now, URL: repo}, URL: repo, Owner: "acme",
			Name: "weather-mcp", Exists: true, LicenseSPDX: "MIT", LastPush: now.Add(-48 * time.Hour), LastCommit: now.Add(-48 * time.Hour),
			HeadCommit: "0123456789abcdef0123456789abcdef01234567"},
		Scorecard: &supply.ScorecardFacts{Source: supply.Source{Outcome: supply.SourceOK, FetchedAt: now}, Score: 7.5,
			Commit: "0123456789abcdef0123456789abcdef01234567", From: "deps.dev"},
		Advisories: &supply.AdvisoryFacts{Source: supply.Source{Outcome: supply.SourceOK, FetchedAt: now}, Version: c.version, Dependencies: 12},
		Tools:      []json.RawMessage{json.RawMessage(`{"name":"get_forecast","description":"Get the forecast for a city.","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`)},
	}
}

type recordedVersions struct {
	mu       sync.Mutex
	versions []string
}

func (r *recordedVersions) RecordManifest(ctx context.Context, entryID int64, tools []json.RawMessage, runID int64, payloadDigest string, at time.Time) (int, error) {
	return 0, nil
}

func (r *recordedVersions) RecordPackageVersion(ctx context.Context, entryID int64, version string, at time.Time) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.versions = append(r.versions, version)
	return true, nil
}

// TestRunSupply runs the supply checks of a package entry with canned facts: the run is
// scored, signed and stored with its next weekly due time, the daily check stores
// nothing while version and README stay, a new version runs them again and reaches the
// history, and the export verifies.
func TestRunSupply(t *testing.T) {
	ctx := context.Background()
	env := newTestEnv(t, nil, Schedule{})
	col := &cannedCollector{version: "1.2.0"}
	versions := &recordedVersions{}
	env.r.cfg.Collector, env.r.cfg.SupplyHistory = col, versions
	e := env.add(t, store.KindNPM, "pkg:npm/acme-weather-mcp")

	out, err := env.r.RunSupply(ctx, e, false)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Ran || out.Score < 80 || !out.Verified {
		t.Fatalf("supply run of a well-kept package: %+v", out)
	}
	runs, err := env.st.SupplyRuns(ctx, e.ID, 0)
	if err != nil || len(runs) != 1 || runs[0].LatestVersion != "1.2.0" || runs[0].Envelope == nil {
		t.Fatalf("stored runs %+v, %v", runs, err)
	}
	// The signed statement's subject digest is the digest of the stored facts.
	envl, _, err := attest.ParseEnvelope(runs[0].Envelope)
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := attest.DecodeBase64(envl.Payload)
	ds, err := attest.DecodeStatement(payload)
	if err != nil || ds.Supply == nil || ds.Supply.Score != out.Score || ds.Supply.Verified != out.Verified {
		t.Fatalf("statement %+v, %v", ds, err)
	}
	if "sha256:"+ds.Subject[0].Digest["sha256"] != attest.Digest(runs[0].Facts) {
		t.Errorf("subject digest does not pin the stored facts")
	}
	dues, _ := env.st.DueTimes(ctx, e.ID)
	var weekly bool
	for _, d := range dues {
		if d.Reason == store.ReasonSupply && time.Until(d.At) > 6*24*time.Hour {
			weekly = true
		}
	}
	if !weekly {
		t.Errorf("no weekly supply due time: %+v", dues)
	}

	// The daily check with nothing changed stores nothing.
	if out, err := env.r.RunSupply(ctx, e, true); err != nil || out.Ran {
		t.Fatalf("unchanged daily check: %+v, %v", out, err)
	}
	// A new version runs the checks again and reaches the history.
	col.version = "1.3.0"
	if out, err := env.r.RunSupply(ctx, e, true); err != nil || !out.Ran {
		t.Fatalf("daily check after a new version: %+v, %v", out, err)
	}
	if runs, _ := env.st.SupplyRuns(ctx, e.ID, 0); len(runs) != 2 {
		t.Fatalf("%d runs, want 2", len(runs))
	}
	if len(versions.versions) != 2 || versions.versions[1] != "1.3.0" {
		t.Errorf("versions given to the history: %v", versions.versions)
	}
	sum := env.verifyExport(t)
	if sum.Verified != 2 {
		t.Errorf("verified %d envelopes, want the 2 supply runs", sum.Verified)
	}
}

// listingStore is the store with the listing and parts of some entries set by the test.
type listingStore struct {
	Store
	listings map[int64]store.Listing
	parts    map[int64][]store.Part
}

func (s *listingStore) EntryListing(ctx context.Context, id int64) (store.Listing, []store.Part, error) {
	if p, ok := s.parts[id]; ok {
		return s.listings[id], p, nil
	}
	return s.Store.EntryListing(ctx, id)
}

func withParts(env *testEnv) *listingStore {
	ls := &listingStore{Store: env.r.cfg.Store, listings: map[int64]store.Listing{}, parts: map[int64][]store.Part{}}
	env.r.cfg.Store = ls
	return ls
}

// TestSupplyTarget builds the server the supply checks read from an entry's parts.
func TestSupplyTarget(t *testing.T) {
	remote := store.Entry{Kind: store.KindRemote, Locator: "https://weather.example.com/mcp"}
	for _, tc := range []struct {
		note   string
		e      store.Entry
		l      store.Listing
		parts  []store.Part
		want   supply.Target
		linked bool
	}{
		{"bare remote, no parts stored", remote, store.Listing{}, nil,
			supply.Target{Kind: "remote", Locator: remote.Locator, Remote: remote.Locator}, false},
		{"linked server", remote, store.Listing{ServerName: "io.github.acme/weather"}, []store.Part{
			{Kind: store.KindRemote, Locator: remote.Locator, Transport: "streamable-http"},
			{Kind: store.KindRemote, Locator: "https://weather.example.com/sse", Transport: "sse"},
			{Kind: store.KindNPM, Locator: "pkg:npm/%40acme/weather-mcp", Version: "1.2.0"},
			{Kind: store.KindPyPI, Locator: "pkg:pypi/acme-weather"},
			{Kind: store.PartOCI, Locator: "docker.io/acme/weather:1.2.0"},
			{Kind: store.KindGitHub, Locator: "https://github.com/acme/weather-mcp"},
		}, supply.Target{Kind: "remote", Locator: remote.Locator, Remote: remote.Locator, ServerName: "io.github.acme/weather",
			Package: &supply.PackageRef{Ecosystem: "npm", Name: "@acme/weather-mcp"}, Repository: "https://github.com/acme/weather-mcp",
			Unchecked: []supply.PartRef{{Kind: "pypi", Locator: "pkg:pypi/acme-weather"}, {Kind: "oci", Locator: "docker.io/acme/weather:1.2.0"}}}, true},
		{"remote listing a GitLab repository", remote, store.Listing{Document: []byte(`{"name":"io.gitlab.acme/w","repository":{"url":"https://gitlab.com/acme/w","source":"gitlab"}}`)},
			[]store.Part{{Kind: store.KindRemote, Locator: remote.Locator}},
			supply.Target{Kind: "remote", Locator: remote.Locator, Remote: remote.Locator, Repository: "https://gitlab.com/acme/w"}, true},
		{"package entry", store.Entry{Kind: store.KindPyPI, Locator: "pkg:pypi/mcp-server-fetch"}, store.Listing{},
			[]store.Part{{Kind: store.KindPyPI, Locator: "pkg:pypi/mcp-server-fetch"}},
			supply.Target{Kind: "pypi", Locator: "pkg:pypi/mcp-server-fetch", Package: &supply.PackageRef{Ecosystem: "pypi", Name: "mcp-server-fetch"}}, true},
		{"repository entry", store.Entry{Kind: store.KindGitHub, Locator: "https://github.com/acme/bundle"}, store.Listing{}, nil,
			supply.Target{Kind: "github", Locator: "https://github.com/acme/bundle", Repository: "https://github.com/acme/bundle"}, true},
	} {
		got := supplyTarget(tc.e, tc.l, tc.parts)
		if !reflect.DeepEqual(got, tc.want) || hasSupplyParts(got) != tc.linked {
			t.Errorf("%s:\n got %+v (package %+v)\nwant %+v (package %+v)", tc.note, got, got.Package, tc.want, tc.want.Package)
		}
	}
}

// TestRunSupplyLinkedRemote: a remote server with a linked package and repository gets
// the whole supply run, from the schedule (RunSupply) and after its round in `probity
// round` (supplyAfterRound); a remote-only server's round runs none.
func TestRunSupplyLinkedRemote(t *testing.T) {
	ctx := context.Background()
	env := newTestEnv(t, nil, Schedule{})
	col := &cannedCollector{version: "1.2.0"}
	env.r.cfg.Collector = col
	ls := withParts(env)
	e := env.add(t, store.KindRemote, "https://weather.example.com/mcp")
	ls.listings[e.ID] = store.Listing{ServerName: "io.github.acme/weather"}
	ls.parts[e.ID] = []store.Part{
		{Kind: store.KindRemote, Locator: e.Locator},
		{Kind: store.KindNPM, Locator: "pkg:npm/acme-weather-mcp"},
		{Kind: store.KindGitHub, Locator: "https://github.com/acme/weather-mcp"},
	}
	out, err := env.r.RunSupply(ctx, e, false)
	if err != nil || !out.Ran || out.Retry {
		t.Fatalf("RunSupply: %+v, %v", out, err)
	}
	got := col.targets[0]
	if got.Kind != "remote" || got.Remote != e.Locator || got.Package == nil || got.Package.Name != "acme-weather-mcp" ||
		got.Repository != "https://github.com/acme/weather-mcp" || got.ServerName != "io.github.acme/weather" {
		t.Errorf("target %+v", got)
	}

	// In `probity round`, after the round.
	runDue := time.Now().UTC().Truncate(time.Millisecond)
	if err := env.r.supplyAfterRound(ctx, e, RoundReport{Outcome: SignedFull}, runDue); err != nil || col.calls != 2 {
		t.Fatalf("after the round: %v, %d collects", err, col.calls)
	}
	// A resumed run whose supply run is already stored does not repeat it.
	if err := env.r.supplyAfterRound(ctx, e, RoundReport{Outcome: AlreadyDone}, runDue); err != nil || col.calls != 2 {
		t.Fatalf("resumed: %v, %d collects", err, col.calls)
	}
	// A remote-only server's round runs no supply checks.
	bare := env.add(t, store.KindRemote, "https://bare.example.com/mcp")
	ls.parts[bare.ID] = []store.Part{{Kind: store.KindRemote, Locator: bare.Locator}}
	if err := env.r.supplyAfterRound(ctx, bare, RoundReport{Outcome: SignedFull}, runDue); err != nil || col.calls != 2 {
		t.Fatalf("remote-only: %v, %d collects", err, col.calls)
	}
	runs, err := env.st.SupplyRuns(ctx, e.ID, 0)
	if err != nil || len(runs) != 2 {
		t.Fatalf("%d runs, %v", len(runs), err)
	}
	// A server's second remote (Entry.Parent) runs none: its server's run reads the
	// whole server, and its weekly due time is cleared.
	second := env.add(t, store.KindRemote, "https://weather.example.com/sse")
	if err := env.st.SetDue(ctx, second.ID, store.DueUpdate{Reason: store.ReasonSupply, At: runDue}); err != nil {
		t.Fatal(err)
	}
	second.Parent = e.ID
	if out, err := env.r.RunSupply(ctx, second, false); err != nil || out.Ran || col.calls != 2 {
		t.Fatalf("a server's second remote: %+v, %v, %d collects", out, err, col.calls)
	}
	if ds, err := env.st.DueTimes(ctx, second.ID); err != nil || slices.ContainsFunc(ds, func(d store.Due) bool { return d.Reason == store.ReasonSupply }) {
		t.Errorf("due times of a server's second remote = %+v, %v", ds, err)
	}
}

// troubledCollector answers like cannedCollector, but GitHub could not be read.
type troubledCollector struct{ cannedCollector }

func (c *troubledCollector) Collect(ctx context.Context, t supply.Target, tools []json.RawMessage, ep *supply.EndpointFacts) *supply.Facts {
	f := c.cannedCollector.Collect(ctx, t, tools, ep)
	f.Repo.Source = supply.Source{Outcome: supply.SourceFailed, FetchedAt: time.Now(), Error: "GitHub: quota exhausted until 13:00"}
	return f
}

// TestRunSupplyRetry: a run with a check not run through Probity's own trouble is stored
// as it is (not_run shown, signed as skipped) and the next run is due within hours,
// backing off while the trouble lasts, not in a week.
func TestRunSupplyRetry(t *testing.T) {
	ctx := context.Background()
	env := newTestEnv(t, nil, Schedule{})
	env.r.cfg.Collector = &troubledCollector{cannedCollector{version: "1.2.0"}}
	e := env.add(t, store.KindNPM, "pkg:npm/acme-weather-mcp")
	dueIn := func() time.Duration {
		t.Helper()
		dues, err := env.st.DueTimes(ctx, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range dues {
			if d.Reason == store.ReasonSupply {
				return time.Until(d.At)
			}
		}
		t.Fatal("no supply due time")
		return 0
	}
	for i, want := range []time.Duration{time.Hour, 2 * time.Hour, 4 * time.Hour} {
		out, err := env.r.RunSupply(ctx, e, false)
		if err != nil || !out.Ran || !out.Retry || out.Verified {
			t.Fatalf("run %d: %+v, %v", i, out, err)
		}
		if d := dueIn(); d < want-time.Minute || d > want+want/10+time.Minute {
			t.Errorf("run %d: next supply run in %s, want %s (+10 %%)", i, d, want)
		}
	}
	runs, err := env.st.SupplyRuns(ctx, e.ID, 1)
	if err != nil || len(runs) != 1 {
		t.Fatal(runs, err)
	}
	v, err := supply.DecodeVerdict(runs[0].Verdict)
	if err != nil || !slices.Equal(v.NotRun(), []string{supply.CheckSourceRepository, supply.CheckMaintenance}) {
		t.Errorf("stored verdict: not run %v, %v", v.NotRun(), err)
	}
	// Once the source reads again, the weekly cadence returns.
	env.r.cfg.Collector = &cannedCollector{version: "1.2.0"}
	if out, err := env.r.RunSupply(ctx, e, false); err != nil || out.Retry || !out.Verified {
		t.Fatalf("recovered: %+v, %v", out, err)
	}
	if d := dueIn(); d < 6*24*time.Hour {
		t.Errorf("after recovery the next supply run is in %s, want a week", d)
	}
	env.verifyExport(t)
}

// TestSupplyChanged: the daily check runs the checks again for a new version or README,
// never for a source Probity could not read this time.
func TestSupplyChanged(t *testing.T) {
	facts := func(version, readme string, pkgOK, repoOK, readmeFailed bool) *supply.Facts {
		f := &supply.Facts{Kind: "npm", Locator: "pkg:npm/acme",
			Package: &supply.PackageFacts{Latest: version, Source: supply.Source{Outcome: supply.SourceOK}},
			Repo:    &supply.RepoFacts{README: readme, READMEFailed: readmeFailed, Source: supply.Source{Outcome: supply.SourceOK}}}
		if !pkgOK {
			f.Package = &supply.PackageFacts{Source: supply.Source{Outcome: supply.SourceFailed}}
		}
		if !repoOK {
			f.Repo = &supply.RepoFacts{Source: supply.Source{Outcome: supply.SourceFailed}}
		}
		return f
	}
	prev, err := json.Marshal(facts("1.0.0", "hello", true, true, false))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		now  *supply.Facts
		want bool
	}{
		{"same", facts("1.0.0", "hello", true, true, false), false},
		{"new version", facts("1.1.0", "hello", true, true, false), true},
		{"new README", facts("1.0.0", "hello again", true, true, false), true},
		{"package not read", facts("", "hello", false, true, false), false},
		{"repository not read", facts("1.0.0", "", true, false, false), false},
		{"README not read", facts("1.0.0", "", true, true, true), false},
	} {
		if got := supplyChanged(prev, c.now); got != c.want {
			t.Errorf("%s: changed %v, want %v", c.name, got, c.want)
		}
	}
}
