package rounds

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/checks/supply"
	"github.com/probity-dev/probity/store"
)

// cannedCollector returns prepared facts, as the sources would after reading a
// well-kept npm package.
type cannedCollector struct {
	mu      sync.Mutex
	version string
	calls   int
}

func (c *cannedCollector) Collect(ctx context.Context, kind, locator string, tools []json.RawMessage, ep *supply.EndpointFacts) *supply.Facts {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	now := time.Now().UTC()
	ok := supply.Source{Outcome: supply.SourceOK, FetchedAt: now, URL: "https://registry.npmjs.org/acme-weather-mcp"}
	repo := "https://github.com/acme/weather-mcp"
	return &supply.Facts{
		Kind: kind, Locator: locator,
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
