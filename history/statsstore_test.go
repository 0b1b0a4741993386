package history_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/probity-dev/probity/checks"
	"github.com/probity-dev/probity/checks/probe"
	"github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/history/stats"
	"github.com/probity-dev/probity/keys/signing"
	"github.com/probity-dev/probity/rounds"
	"github.com/probity-dev/probity/store"
)

// The known-answer tests of the drift and toolset tables from the store: rounds of real
// probes of loopback MCP servers are stored by the rounds runner (with the history
// processor), then history.LoadStats and stats.Compute read them back, on SQLite and,
// when PROBITY_TEST_DATABASE_URL is set (or under CI), on PostgreSQL.

// statsBackends runs f on a fresh migrated SQLite store and on a fresh PostgreSQL one.
func statsBackends(t *testing.T, f func(t *testing.T, st store.Store)) {
	t.Run("sqlite", func(t *testing.T) {
		st, err := store.Open(t.Context(), store.Config{SQLitePath: filepath.Join(t.TempDir(), "probity.db")})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if err := st.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
		f(t, st)
	})
	t.Run("postgres", func(t *testing.T) {
		admin := os.Getenv("PROBITY_TEST_DATABASE_URL")
		if admin == "" && os.Getenv("CI") == "true" {
			admin = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
		}
		if admin == "" {
			t.Skip("set PROBITY_TEST_DATABASE_URL to run against PostgreSQL")
		}
		var b [8]byte
		_, _ = rand.Read(b[:])
		name := "probity_t_" + hex.EncodeToString(b[:])
		exec := func(ctx context.Context, sql string) {
			t.Helper()
			conn, err := pgx.Connect(ctx, admin)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			if _, err := conn.Exec(ctx, sql); err != nil {
				t.Fatalf("%s: %v", sql, err)
			}
		}
		exec(t.Context(), "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
		})
		u, err := url.Parse(admin)
		if err != nil {
			t.Fatal(err)
		}
		u.Path = "/" + name
		st, err := store.Open(t.Context(), store.Config{DatabaseURL: u.String()})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if err := st.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
		f(t, st)
	})
}

// liveServer is a loopback MCP server (the go-sdk's streamable HTTP) whose tools the
// test replaces between rounds.
type liveServer struct {
	srv   *mcp.Server
	http  *httptest.Server
	names []string
}

func newLiveServer(t *testing.T) *liveServer {
	s := mcp.NewServer(&mcp.Implementation{Name: "drifting", Version: "1.0.0"}, nil)
	ls := &liveServer{srv: s}
	ls.http = httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(ls.http.Close)
	return ls
}

// set replaces the server's tools by the given tool objects.
func (ls *liveServer) set(t *testing.T, tools ...string) {
	t.Helper()
	ls.srv.RemoveTools(ls.names...)
	ls.names = nil
	for _, raw := range tools {
		var tool mcp.Tool
		if err := json.Unmarshal([]byte(raw), &tool); err != nil {
			t.Fatalf("tool %s: %v", raw, err)
		}
		ls.srv.AddTool(&tool, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
		ls.names = append(ls.names, tool.Name)
	}
}

// clockProber probes for real and dates the observation by the test's clock.
type clockProber struct {
	real rounds.Prober
	mu   sync.Mutex
	now  time.Time
	// tools, when set, replace the observed tools (for lists no SDK server sends, such as
	// a name listed twice).
	tools []json.RawMessage
}

func (p *clockProber) Probe(ctx context.Context, u string) (*checks.Observation, error) {
	obs, err := p.real.Probe(ctx, u)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	obs.StartedAt = p.now
	if p.tools != nil {
		obs.Tools.Tools = p.tools
	}
	return obs, nil
}

// statsRig stores rounds of real probes at chosen times.
type statsRig struct {
	t      *testing.T
	st     store.Store
	prober *clockProber
	runner *rounds.Runner
}

func newStatsRig(t *testing.T, st store.Store) *statsRig {
	keyDir := filepath.Join(t.TempDir(), "keys")
	since := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := signing.GenerateDir(keyDir, "https://probity.test", since, nil); err != nil {
		t.Fatal(err)
	}
	_, signer, err := signing.OpenDir(keyDir, since.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	proc, err := history.NewProcessor(history.Config{Store: st, Signer: signer, ToolVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	rig := &statsRig{t: t, st: st, prober: &clockProber{real: probe.New(probe.Config{Version: "test", AllowLoopback: true})}}
	rig.runner, err = rounds.NewRunner(rounds.Config{Store: st, Prober: rig.prober, Signer: signer, ToolVersion: "test", History: proc,
		Now: func() time.Time { rig.prober.mu.Lock(); defer rig.prober.mu.Unlock(); return rig.prober.now }})
	if err != nil {
		t.Fatal(err)
	}
	return rig
}

func (r *statsRig) entry(slug, locator string) store.Entry {
	r.t.Helper()
	e, _, err := r.st.AddEntry(r.t.Context(), store.NewEntry{SlugBase: slug, Kind: store.KindRemote, Locator: locator, Source: "import"})
	if err != nil {
		r.t.Fatal(err)
	}
	return e
}

// round stores one signed full round of e at at.
func (r *statsRig) round(e store.Entry, at time.Time, replace []json.RawMessage) {
	r.t.Helper()
	r.prober.mu.Lock()
	r.prober.now, r.prober.tools = at, replace
	r.prober.mu.Unlock()
	o, err := r.runner.RunEntry(r.t.Context(), e, store.Due{EntryID: e.ID, Reason: store.ReasonCadence, At: at}, "")
	if err != nil {
		r.t.Fatal(err)
	}
	if o.Outcome != rounds.SignedFull {
		r.t.Fatalf("round of %s at %s: %s", e.Slug, at, o.Outcome)
	}
}

// The tools of server A, version by version (see TestStatsFromStoreKnownAnswers).
const (
	weather3   = `{"name":"get_weather","description":"Returns the weather for 3 cities.","inputSchema":{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"number"}}}}`
	weather5   = `{"name":"get_weather","description":"Returns the weather for 5 cities.","inputSchema":{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"number"}}}}`
	weather5i  = `{"name":"get_weather","description":"Returns the weather for 5 cities.","inputSchema":{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}}}}`
	time0      = `{"name":"get_time","description":"Returns the time.","inputSchema":{"type":"object","properties":{"zone":{"type":"string"}}}}`
	time0Title = `{"name":"get_time","title":"Time","description":"Returns the time.","inputSchema":{"type":"object","properties":{"zone":{"type":"string"}}},"annotations":{"readOnlyHint":true}}`
	time2      = `{"name":"get_time","title":"Time","description":"Returns  the time.","inputSchema":{"type":"object","properties":{"zone":{"type":"string"}}}}`
	time2Hint  = `{"name":"get_time","title":"Time","description":"Returns  the time.","inputSchema":{"type":"object","properties":{"zone":{"type":"string"}}},"annotations":{"openWorldHint":false}}`
	time4      = `{"name":"get_time","description":"Returns the current time.","inputSchema":{"type":"object","properties":{"zone":{"type":"integer"}}}}`
	deleteCity = `{"name":"delete_city","description":"Deletes a city.","inputSchema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}`
)

// statsNow is the cut-off of the store tests: the 30-day window starts 2026-10-31
// 12:00, the 7-day one 2026-11-23 12:00, and the daily table runs from 2026-11-09 to
// 2026-11-29.
var statsNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func nov(day, hour int) time.Time { return time.Date(2026, 11, day, hour, 0, 0, 0, time.UTC) }

// storeScenario stores the rounds of two servers:
//
// A, a live loopback server, read six times:
//
//	r0 Oct 30  get_weather (3 cities, days: number), get_time                 before the windows
//	r1 Nov 10  get_time gets a title and readOnlyHint                         no change in the seeds' digest
//	r2 Nov 11  "3 cities" → "5 cities"; "the time" → "the  time"              2 descriptions: numbers only, white space only
//	r3 Nov 12  days: number → integer; delete_city added                      1 added, 1 schema, number → integer
//	r4 Nov 13  delete_city removed; get_time "Returns the current time.",    1 removed, 1 description, 1 schema, other type
//	           zone: string → integer; title and hint gone
//	r5 Nov 14  back to r3's names, descriptions and schemas, another hint     1 added, 1 description, 1 schema, other type;
//	                                                                          a return to an earlier list (r3's)
//	r6 Nov 25  as r5                                                          no change
//
// B, the same kind of server, its list replaced by one naming "x" twice, then once:
//
//	b0 Oct 30  x, x
//	b1 Nov 11 06:00  x                                                        a change from a repeated name alone; 1 removed
func storeScenario(t *testing.T, st store.Store) {
	rig := newStatsRig(t, st)
	a := newLiveServer(t)
	ea := rig.entry("drifting-a", a.http.URL)
	b := newLiveServer(t)
	b.set(t, `{"name":"x","inputSchema":{"type":"object"}}`)
	eb := rig.entry("drifting-b", b.http.URL)

	oct30 := time.Date(2026, 10, 30, 0, 0, 0, 0, time.UTC)
	x := json.RawMessage(`{"name":"x","description":"X.","inputSchema":{"type":"object"}}`)
	rig.round(eb, oct30, []json.RawMessage{x, x})
	rig.round(eb, nov(11, 6), []json.RawMessage{x})

	a.set(t, weather3, time0)
	rig.round(ea, oct30, nil)
	a.set(t, weather3, time0Title)
	rig.round(ea, nov(10, 0), nil)
	a.set(t, weather5, time2)
	rig.round(ea, nov(11, 0), nil)
	a.set(t, weather5i, time2, deleteCity)
	rig.round(ea, nov(12, 0), nil)
	a.set(t, weather5i, time4)
	rig.round(ea, nov(13, 0), nil)
	a.set(t, weather5i, time2Hint, deleteCity)
	rig.round(ea, nov(14, 0), nil)
	rig.round(ea, nov(25, 0), nil)
}

func loadReport(t *testing.T, st store.Store) *stats.Report {
	t.Helper()
	opt := stats.Options{Now: statsNow}
	ss, err := history.LoadStats(t.Context(), st, opt)
	if err != nil {
		t.Fatal(err)
	}
	return stats.Compute(ss, opt)
}

// TestStatsCompareTheSeedsDigest: a change only in a title or annotations is no change in
// the drift tables, and a list equal to an earlier one in names, descriptions and input
// schemas is a return to it, whatever its annotations.
func TestStatsCompareTheSeedsDigest(t *testing.T) {
	statsBackends(t, func(t *testing.T, st store.Store) {
		storeScenario(t, st)
		r := loadReport(t, st)
		wantActivity := stats.DriftActivity{Days: 30, From: statsNow.AddDate(0, 0, -30), To: statsNow,
			ServersRead: 2, ServersChanged: 2, ChangedLists: 5, ReturnsToEarlier: 1}
		if r.DriftActivity != wantActivity {
			t.Errorf("DriftActivity\n got %+v\nwant %+v", r.DriftActivity, wantActivity)
		}
		d30 := r.Drift[1]
		if d30.Servers != 2 || d30.AnyChange.Count != 2 || d30.ToolsAddedOrRemoved.Count != 2 || d30.DescriptionOnly.Count != 0 || d30.Breaking.Count != 1 {
			t.Errorf("30-day drift %+v", d30)
		}
		if d7 := r.Drift[0]; d7.Servers != 1 || d7.AnyChange.Count != 0 {
			t.Errorf("7-day drift %+v", d7)
		}
		// Names versus surface: A's names changed 3 times; its descriptions and schemas
		// alone once (r2; r1 is no change).
		nv := r.NamesVsSurface
		if nv.SurfaceOnly != (stats.ServerChanges{Servers: 1, Changes: 1}) {
			t.Errorf("NamesVsSurface %+v", nv)
		}
	})
}

// TestStatsFromStoreKnownAnswers: seed 003's per-tool tallies and seed 001's daily rates
// and duplicate check, from the stored rounds of storeScenario.
func TestStatsFromStoreKnownAnswers(t *testing.T) {
	statsBackends(t, func(t *testing.T, st store.Store) {
		storeScenario(t, st)
		r := loadReport(t, st)
		one := func(n int) stats.ServerCount { return stats.ServerCount{Servers: 1, Count: n} }
		want := stats.ToolChanges{Days: 30, From: statsNow.AddDate(0, 0, -30), To: statsNow, ChangedLists: 5,
			Added:                      one(2),                                  // r3, r5
			Removed:                    stats.ServerCount{Servers: 2, Count: 2}, // r4; B's second x
			Descriptions:               one(4),                                  // r2 ×2, r4, r5
			DescriptionsNumbersOnly:    one(1),
			DescriptionsWhitespaceOnly: one(1),
			Schemas:                    one(3), // r3, r4, r5
			NumberToInteger:            one(1), // r3
			OtherTypeChanges:           one(2), // r4, r5
			OnlyTextLists:              1,      // r2
		}
		if r.ToolChanges != want {
			t.Errorf("ToolChanges\n got %+v\nwant %+v", r.ToolChanges, want)
		}

		// Toolset changes: A's r3, r4, r5 and B's b1 (a repeated name alone).
		ct := r.ChangeTypes
		if ct.Changes != 4 || ct.OnlyAdded.Count != 2 || ct.OnlyRemoved.Count != 1 || ct.Both.Count != 0 || ct.DuplicatesOnly.Count != 1 {
			t.Errorf("ChangeTypes %+v", ct)
		}
		if got := ct.DuplicateCheck(); !strings.HasPrefix(got, "1 change came only from a repeated name") {
			t.Errorf("DuplicateCheck: %q", got)
		}

		wantDays := []stats.DayChanges{
			{Day: "2026-11-10", Reads: 1},
			{Day: "2026-11-11", Reads: 2, Changed: 1, PerThousand: 500, MaxHourChanged: 1}, // A's r2 (no toolset change), B's b1
			{Day: "2026-11-12", Reads: 1, Changed: 1, PerThousand: 1000, MaxHourChanged: 1},
			{Day: "2026-11-13", Reads: 1, Changed: 1, PerThousand: 1000, MaxHourChanged: 1},
			{Day: "2026-11-14", Reads: 1, Changed: 1, PerThousand: 1000, MaxHourChanged: 1},
			{Day: "2026-11-25", Reads: 1},
		}
		dc := r.DailyChanges
		if dc.From != "2026-11-09" || dc.To != "2026-11-29" || dc.Min != 0 || dc.MinDay != "2026-11-10" || dc.Max != 1000 || dc.MaxDay != "2026-11-12" {
			t.Errorf("DailyChanges range %+v", dc)
		}
		if len(dc.Days) != len(wantDays) {
			t.Fatalf("DailyChanges days %+v", dc.Days)
		}
		for i := range wantDays {
			if dc.Days[i] != wantDays[i] {
				t.Errorf("day %d: got %+v, want %+v", i, dc.Days[i], wantDays[i])
			}
		}

		md := r.Markdown()
		for _, s := range []string{
			stats.DigestNote,
			"| … differing only in numbers | 1 | 1 |",
			"| Parameter types number → integer | 1 | 1 |",
			"On the 6 days with reads, 0 to 1000 of every 1,000 successful reads differed from the previous read",
			"1 change came only from a repeated name",
		} {
			if !strings.Contains(md, s) {
				t.Errorf("Markdown lacks %q", s)
			}
		}
		if strings.Contains(md, "only the first page was compared") {
			t.Error("Markdown still says only the first page was compared")
		}
	})
}
