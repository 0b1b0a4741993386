package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/probity-dev/probity/checks"
	"github.com/probity-dev/probity/checks/fixtures"
	"github.com/probity-dev/probity/checks/probe"
	"github.com/probity-dev/probity/checks/supply"
	"github.com/probity-dev/probity/checks/supply/sourcefixtures"
	"github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/keys/signing"
	"github.com/probity-dev/probity/rounds"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/targets"
	"github.com/probity-dev/probity/web"
)

// The load database (web/testdata/load/README.md): 6,000 entries whose rounds, changes
// and supply runs were made by Probity's own code — rounds.Runner with the real checks,
// signatures and history processor — from observations the real probe took of
// simulated servers. Built once by BenchmarkLoadDatabase (about 75 minutes on two
// cores; -v shows its progress) and reused, like the statistics benchmark's database:
//
//	PROBITY_TEST_DATABASE_URL='postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable' \
//	  go test ./web -run X -bench LoadDatabase -benchtime 1x -timeout 120m -v
//
// Entries are load-0 … load-5999: load-0 … load-5399 remote endpoints, load-5400 …
// load-5799 npm packages, load-5800 … load-5999 PyPI packages. The remote entries with
// i%180 == 7 (load-7, load-187, …, 30 of them) are claimed and change every few hours
// for 40 days, so their histories have more than 100 changes.
const (
	loadDatabase = "probity_bench_web_v1"
	loadRemote   = 5400
	loadNPM      = 400
	loadPyPI     = 200
	loadEntries  = loadRemote + loadNPM + loadPyPI
	loadWorkers  = 12
	// loadFleetSeed fixes the simulated servers, so a rebuild makes the same surfaces.
	loadFleetSeed = 20261130
)

// loadEnd is when the simulated rounds end; loadSpan is how long ordinary entries are
// watched before it, loadHeavySpan the heavily changing ones.
var (
	loadEnd       = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	loadSpan      = 14 * 24 * time.Hour
	loadHeavySpan = 40 * 24 * time.Hour
)

// loadDataDir is the --data-dir of `probity serve` for the load database: its keys/
// subdirectory holds the key that signed every envelope in it. PROBITY_LOAD_DIR
// overrides the default, $TMPDIR/probity-webload.
func loadDataDir() string {
	if d := os.Getenv("PROBITY_LOAD_DIR"); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), "probity-webload")
}

// BenchmarkLoadDatabase builds the load database when it is missing or incomplete, logs
// what it holds, and measures reading those counts.
func BenchmarkLoadDatabase(b *testing.B) {
	ld := openLoadDatabase(b)
	ctx := context.Background()
	var c loadCounts
	for b.Loop() {
		var err error
		if c, err = countLoad(ctx, ld.dsn); err != nil {
			b.Fatal(err)
		}
	}
	c.log(b)
	b.ReportMetric(float64(c.rounds), "rounds")
	b.ReportMetric(float64(c.changes), "changes")
}

// BenchmarkEntryPage measures the entry pages of the load database in process (no
// network, no rate limit), cycling over all its entries as entry.lua does.
func BenchmarkEntryPage(b *testing.B) {
	benchLoadPages(b, func(i int) string { return "/s/load-" + strconv.Itoa(i%loadEntries) })
}

// BenchmarkHistoryPage measures the history pages of the remote entries.
func BenchmarkHistoryPage(b *testing.B) {
	benchLoadPages(b, func(i int) string { return "/s/load-" + strconv.Itoa(i%loadRemote) + "/history" })
}

// BenchmarkEntryFeed measures the Atom feeds of all entries.
func BenchmarkEntryFeed(b *testing.B) {
	benchLoadPages(b, func(i int) string { return "/s/load-" + strconv.Itoa(i%loadEntries) + "/history.xml" })
}

// BenchmarkDirectoryFeed measures the directory's feed, /changes.xml.
func BenchmarkDirectoryFeed(b *testing.B) {
	benchLoadPages(b, func(int) string { return "/changes.xml" })
}

func benchLoadPages(b *testing.B, path func(i int) string) {
	ld := openLoadDatabase(b)
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{DatabaseURL: ld.dsn, MaxConns: 16})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	h, err := web.New(web.Config{Store: st, Keys: ld.doc, BaseURL: "http://127.0.0.1:8091",
		RateLimit: web.RateLimit{PerSecond: 1e9, Burst: 1 << 30}})
	if err != nil {
		b.Fatal(err)
	}
	var n atomic.Int64
	var bytesOut atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := int(n.Add(1))
			req := httptest.NewRequest(http.MethodGet, path(i), nil)
			req.RemoteAddr = "127.0.0.1:1234"
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				b.Errorf("GET %s: %d", req.URL, rec.Code)
				return
			}
			bytesOut.Add(int64(rec.Body.Len()))
		}
	})
	b.ReportMetric(float64(bytesOut.Load())/float64(max(n.Load(), 1)), "bytes/page")
}

// loadDB is the opened load database.
type loadDB struct {
	dsn string
	doc *keys.Document
}

var (
	loadOnce sync.Once
	loadRes  loadDB
	loadErr  error
)

// openLoadDatabase returns the load database, building it first when needed. It skips
// without PROBITY_TEST_DATABASE_URL.
func openLoadDatabase(b *testing.B) loadDB {
	base := os.Getenv("PROBITY_TEST_DATABASE_URL")
	if base == "" {
		b.Skip("PROBITY_TEST_DATABASE_URL not set")
	}
	loadOnce.Do(func() { loadRes, loadErr = ensureLoadDatabase(b, base) })
	if loadErr != nil {
		b.Fatal(loadErr)
	}
	return loadRes
}

// ensureLoadDatabase returns the load database when it is complete and signed by the
// key in loadDataDir(). Otherwise it builds a new one under a staging name and, once
// it is complete, drops the old one and renames the new one into place: a `probity
// serve` connected to the old database (its scheduler always runs) never sees a
// database whose due times are not cleared yet, so it cannot probe the entries while
// they are built.
func ensureLoadDatabase(b *testing.B, base string) (loadDB, error) {
	ctx := context.Background()
	keyDir := filepath.Join(loadDataDir(), "keys")
	dsn, err := loadDatabaseURL(base, loadDatabase)
	if err != nil {
		return loadDB{}, err
	}
	exists, err := loadDatabaseExists(ctx, base, loadDatabase)
	if err != nil {
		return loadDB{}, err
	}
	if exists {
		doc, ok, why := loadComplete(ctx, dsn, keyDir)
		if ok {
			return loadDB{dsn: dsn, doc: doc}, nil
		}
		b.Logf("rebuilding %s: %s", loadDatabase, why)
	}
	staging := loadDatabase + "_build"
	stagingDSN, err := loadDatabaseURL(base, staging)
	if err != nil {
		return loadDB{}, err
	}
	if err := execAdmin(ctx, base, "DROP DATABASE IF EXISTS "+pgx.Identifier{staging}.Sanitize()+" WITH (FORCE)",
		"CREATE DATABASE "+pgx.Identifier{staging}.Sanitize()); err != nil {
		return loadDB{}, err
	}
	doc, signer, err := loadKeys(keyDir)
	if err != nil {
		return loadDB{}, err
	}
	start := time.Now()
	if err := buildLoad(b, stagingDSN, signer); err != nil {
		return loadDB{}, err
	}
	if _, ok, why := loadComplete(ctx, stagingDSN, keyDir); !ok {
		return loadDB{}, fmt.Errorf("the new %s is not complete: %s", staging, why)
	}
	if err := execAdmin(ctx, base, "DROP DATABASE IF EXISTS "+pgx.Identifier{loadDatabase}.Sanitize()+" WITH (FORCE)",
		"ALTER DATABASE "+pgx.Identifier{staging}.Sanitize()+" RENAME TO "+pgx.Identifier{loadDatabase}.Sanitize()); err != nil {
		return loadDB{}, err
	}
	b.Logf("built %s in %v", loadDatabase, time.Since(start).Round(time.Second))
	c, err := countLoad(ctx, dsn)
	if err != nil {
		return loadDB{}, err
	}
	c.log(b)
	return loadDB{dsn: dsn, doc: doc}, nil
}

func loadDatabaseURL(base, name string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

func loadDatabaseExists(ctx context.Context, base, name string) (bool, error) {
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return false, err
	}
	defer conn.Close(ctx)
	var exists bool
	err = conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists)
	return exists, err
}

// execAdmin runs statements (names quoted by the caller) on the base database.
func execAdmin(ctx context.Context, base string, stmts ...string) error {
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	for _, q := range stmts {
		if _, err := conn.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

// loadComplete reports whether the database holds every entry, no due time (the
// build's last step clears them), nothing dated after loadEnd (which a `probity serve`
// that found due times would have added) and only envelopes signed by the key in
// keyDir.
func loadComplete(ctx context.Context, dsn, keyDir string) (*keys.Document, bool, string) {
	doc, signer, err := signing.OpenDir(keyDir, time.Now())
	if err != nil {
		return nil, false, fmt.Sprintf("no usable key in %s (%v)", keyDir, err)
	}
	keyID, err := signer.KeyID()
	if err != nil {
		return nil, false, err.Error()
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, false, err.Error()
	}
	defer conn.Close(ctx)
	var entries, due, late, otherKeys int64
	err = conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM entries), (SELECT count(*) FROM due),
			(SELECT count(*) FROM rounds WHERE started_at > $2) + (SELECT count(*) FROM supply_runs WHERE ran_at > $2),
			(SELECT count(*) FROM ledger WHERE key_id <> $1)`,
		keyID, loadEnd.Add(time.Hour)).Scan(&entries, &due, &late, &otherKeys)
	switch {
	case err != nil:
		return nil, false, err.Error()
	case entries != loadEntries || due != 0:
		return nil, false, fmt.Sprintf("incomplete (%d entries, %d due times)", entries, due)
	case late != 0:
		return nil, false, fmt.Sprintf("%d rounds and supply runs after %s: not made by the build", late, loadEnd.Format(time.DateOnly))
	case otherKeys != 0:
		return nil, false, fmt.Sprintf("%d envelopes are not signed by the key in %s", otherKeys, keyDir)
	}
	return doc, true, ""
}

// loadKeys opens the key directory, creating it with a key valid from before the
// first simulated round.
func loadKeys(dir string) (*keys.Document, *signing.Signer, error) {
	if _, err := os.Stat(filepath.Join(dir, keys.DocumentFile)); errors.Is(err, fs.ErrNotExist) {
		if _, err := signing.GenerateDir(dir, "https://probity.dev", loadEnd.Add(-loadHeavySpan-24*time.Hour), nil); err != nil {
			return nil, nil, fmt.Errorf("couldn't create the load key: %w", err)
		}
	}
	return signing.OpenDir(dir, time.Now())
}

// loadPlan is what one entry is and how it behaves, derived from its index alone.
type loadPlan struct {
	i       int
	kind    string
	profile string // remote: healthy, auth, hidden, destructive
	claimed bool
	heavy   bool
	http    bool // a plain-http endpoint
	start   time.Time
	// steps are the times the server's surface or version changes.
	steps []time.Time
	// latency is the endpoint's typical round-trip time in ms.
	latency float64
	// outageFrom and outageTo bound a stretch without answers (zero: none).
	outageFrom, outageTo time.Time
	// pkg is the package name of a package entry; template the fixture package whose
	// recorded facts it gets.
	pkg, template string
}

// npmTemplates and pypiTemplates are the packages with recorded or documented source
// fixtures (checks/supply/testdata/fixtures); package entries take their facts.
var (
	npmTemplates = []string{
		"@modelcontextprotocol/server-filesystem", "@modelcontextprotocol/server-filesystem",
		"@modelcontextprotocol/sdk", "@probity-fixtures/attested", "express", "left-pad", "colors",
		"hoek", "json-schema", "tunnel-agent", "zlib", "node-uuid", "sax",
	}
	pypiTemplates = []string{"mcp-server-fetch", "mcp-server-fetch", "probity-fixture-classic"}
)

func planLoad(i int) loadPlan {
	r := rand.New(rand.NewPCG(loadFleetSeed, uint64(i)))
	p := loadPlan{i: i, kind: store.KindRemote}
	p.start = loadEnd.Add(-loadSpan + time.Duration(r.Int64N(int64(12*time.Hour))))
	switch {
	case i >= loadRemote+loadNPM:
		p.kind = store.KindPyPI
		p.pkg = fmt.Sprintf("mcp-load-%d", i)
		p.template = pypiTemplates[i%len(pypiTemplates)]
		return p
	case i >= loadRemote:
		p.kind = store.KindNPM
		p.pkg = fmt.Sprintf("mcp-server-load-%d", i)
		if i%2 == 0 {
			p.pkg = fmt.Sprintf("@loadbench/server-%d", i)
		}
		p.template = npmTemplates[i%len(npmTemplates)]
		return p
	}
	p.heavy = i%180 == 7
	switch n := r.IntN(100); {
	case p.heavy || n < 78:
		p.profile = "healthy"
	case n < 85:
		p.profile = "auth"
	case n < 90:
		p.profile = "hidden"
	default:
		p.profile = "destructive"
	}
	p.http = !p.heavy && r.IntN(200) == 0
	p.claimed = p.heavy || r.IntN(100) == 0
	p.latency = 30 * math.Pow(400.0/30, r.Float64()) // 30 to 400 ms, log-uniform
	if r.IntN(20) == 0 {
		p.latency = 800 + 1700*r.Float64()
	}
	if r.IntN(40) == 0 { // an outage of one to three days
		from := p.start.Add(time.Duration(r.Int64N(int64(loadSpan - 4*24*time.Hour))))
		p.outageFrom, p.outageTo = from, from.Add(24*time.Hour+time.Duration(r.Int64N(int64(48*time.Hour))))
	}
	switch {
	case p.heavy:
		p.start = loadEnd.Add(-loadHeavySpan)
		for t := p.start.Add(5 * time.Hour); t.Before(loadEnd); t = t.Add(4*time.Hour + time.Duration(r.Int64N(int64(4*time.Hour)))) {
			p.steps = append(p.steps, t)
		}
	case p.profile != "auth" && r.IntN(3) == 0:
		n := 2 + r.IntN(9)
		if r.IntN(4) == 0 {
			n = 1
		}
		span := loadEnd.Sub(p.start) - 24*time.Hour
		for range n {
			p.steps = append(p.steps, p.start.Add(12*time.Hour+time.Duration(r.Int64N(int64(span)))))
		}
		slices.SortFunc(p.steps, func(a, b time.Time) int { return a.Compare(b) })
	}
	return p
}

// ref is the entry as a line of an import list (package targets.Parse): the
// endpoint's URL, whose host under example.com never resolves, or the package.
func (p *loadPlan) ref(serverName string) string {
	switch p.kind {
	case store.KindNPM:
		return "npm:" + p.pkg
	case store.KindPyPI:
		return "pypi:" + p.pkg
	}
	host := strings.TrimSuffix(serverName, "-mcp")
	if host == "" {
		host = "mcp"
	}
	scheme := "https"
	if p.http {
		scheme = "http"
	}
	return fmt.Sprintf("%s://%s-%d.example.com/mcp", scheme, host, p.i)
}

// displayName turns a server name such as "acme-github-mcp" into "Acme Github MCP".
func displayName(serverName string) string {
	words := strings.Split(serverName, "-")
	for k, w := range words {
		switch {
		case w == "mcp":
			words[k] = "MCP"
		case w != "":
			words[k] = strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return strings.Join(words, " ")
}

// loadTemplates are real observations the probe took of the demo's fixtures, and what
// the build reuses of them.
type loadTemplates struct {
	auth        *checks.Observation // 401 with RFC 9728 metadata
	refused     *checks.Observation // connection refused
	http5xx     *checks.Observation // 502 on the handshake
	hiddenTool  json.RawMessage     // a description with a zero-width space and an instruction to the model
	destructive json.RawMessage     // delete_file without destructiveHint
}

// captureTemplates probes the demo's /auth, /hidden and /destructive, a closed port and
// a server answering 502, and returns what the build reuses, with a function that stops
// the servers.
func captureTemplates(ctx context.Context, pr *probe.Prober) (*loadTemplates, func(), error) {
	demo, err := fixtures.StartDemo("127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "upstream unavailable", http.StatusBadGateway)
	}))
	cleanup := func() { demo.Close(); bad.Close() }
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	refusedURL := "http://" + closed.Addr().String() + "/mcp"
	closed.Close()
	t := &loadTemplates{}
	get := func(u string) (*checks.Observation, error) {
		o, err := pr.Probe(ctx, u)
		if err != nil {
			return nil, fmt.Errorf("couldn't probe %s: %w", u, err)
		}
		o.Exchanges = nil
		return o, nil
	}
	tool := func(o *checks.Observation, name string) (json.RawMessage, error) {
		for _, raw := range o.Tools.Tools {
			var t struct{ Name string }
			if json.Unmarshal(raw, &t) == nil && t.Name == name {
				return raw, nil
			}
		}
		return nil, fmt.Errorf("%s lists no tool %s", o.URL, name)
	}
	var hidden, destructive *checks.Observation
	for _, s := range []struct {
		u   string
		dst **checks.Observation
	}{
		{demo.URL(fixtures.DemoAuth), &t.auth}, {demo.URL(fixtures.DemoHidden), &hidden},
		{demo.URL(fixtures.DemoDestructive), &destructive}, {refusedURL, &t.refused}, {bad.URL + "/mcp", &t.http5xx},
	} {
		if *s.dst, err = get(s.u); err != nil {
			cleanup()
			return nil, nil, err
		}
	}
	if t.hiddenTool, err = tool(hidden, "find_user"); err == nil {
		t.destructive, err = tool(destructive, "delete_file")
	}
	switch {
	case err != nil:
	case !t.auth.Handshake.Unauthorized:
		err = errors.New("the demo's /auth was not answered with 401")
	case t.refused.Reach.Failure != checks.ReachConnect:
		err = fmt.Errorf("a closed port gave reach %q", t.refused.Reach.Failure)
	case t.http5xx.Reach.Failure != checks.ReachHTTP5xx:
		err = fmt.Errorf("a 502 gave reach %q", t.http5xx.Reach.Failure)
	}
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	return t, cleanup, nil
}

// rebase replaces the origin and path of old in s by those of new: the template's
// loopback URLs become the entry's.
func rebase(s, oldURL, newURL string) string {
	if s == "" {
		return s
	}
	o, err1 := url.Parse(oldURL)
	n, err2 := url.Parse(newURL)
	if err1 != nil || err2 != nil {
		return s
	}
	s = strings.ReplaceAll(s, o.Scheme+"://"+o.Host, n.Scheme+"://"+n.Host)
	if o.Path != "" && strings.HasSuffix(s, o.Path) {
		s = strings.TrimSuffix(s, o.Path) + n.Path
	}
	return s
}

// relocate returns a copy of the template as if it had been taken of locator: the
// URLs it names are the entry's, and TLS is what the entry's endpoint showed.
func relocate(t *checks.Observation, locator string, tls *checks.TLSFacts) *checks.Observation {
	o := *t
	o.URL = locator
	o.Exchanges = nil
	o.TLS = tls
	if strings.HasPrefix(locator, "http://") {
		o.TLS = nil
	}
	o.Auth.MetadataURL = rebase(t.Auth.MetadataURL, t.URL, locator)
	o.Auth.Resource = rebase(t.Auth.Resource, t.URL, locator)
	o.Auth.Challenges = nil
	for _, c := range t.Auth.Challenges {
		params := map[string]string{}
		for k, v := range c.Params {
			params[k] = rebase(v, t.URL, locator)
		}
		o.Auth.Challenges = append(o.Auth.Challenges, checks.Challenge{Scheme: c.Scheme, Params: params})
	}
	if ou, err := url.Parse(t.URL); err == nil {
		if nu, err := url.Parse(locator); err == nil {
			o.Reach.Detail = strings.ReplaceAll(t.Reach.Detail, ou.Host, nu.Host)
		}
	}
	return &o
}

// instructionVariants are what a changing server's instructions become, one after the
// other.
var instructionVariants = []string{
	"Results are paginated: pass the cursor from the previous call to continue.",
	"Rate limit: 60 requests per minute per API key; on 429 wait for the time the error names.",
	"Write tools act immediately. Ask the user to confirm before calling any of them.",
	"Search first to find IDs: the get_* tools need an exact ID and fail on names.",
	"On the free plan this server is read-only and write tools answer with an error.",
	"Prefer the batch tools for more than ten items; they count as one request.",
	"Large results are truncated to 100 items; narrow the query instead of paging through everything.",
}

// loadSim is one remote entry's simulated server during the build: the real probe's
// observation of its current fleet surface, with the changes applied since.
type loadSim struct {
	plan    loadPlan
	loc     string
	base    *checks.Observation // the newest real probe, relocated
	applied int                 // steps taken into base and the overlays
	rng     *rand.Rand
	hints   map[string]bool // tools whose readOnlyHint is flipped
	instr   int             // instruction variant (0: the server's own)
	bumps   int             // patch releases since the fleet's version
	tls     *checks.TLSFacts
}

// loadWorker builds entries one at a time with its own clock and Runner.
type loadWorker struct {
	st       store.Store
	pr       *probe.Prober
	stable   *fixtures.Fleet
	drift    *fixtures.Fleet
	tmpl     *loadTemplates
	runner   *rounds.Runner
	schedule rounds.Schedule
	clock    time.Time
	sim      *loadSim
	stats    *loadProgress
}

// Probe is the worker's rounds.Prober: the entry's simulated server at the worker's
// clock. A probe takes the synthetic round-trip time off the clock.
func (w *loadWorker) Probe(ctx context.Context, u string) (*checks.Observation, error) {
	s := w.sim
	if s == nil || u != s.loc {
		return nil, fmt.Errorf("no simulated server at %s", u)
	}
	at := w.clock
	r := rand.New(rand.NewPCG(uint64(s.plan.i), uint64(at.UnixMilli())))
	scale := 0.7 + 0.9*r.Float64()
	lat := int64(s.plan.latency * scale)
	var o *checks.Observation
	switch {
	case !s.plan.outageFrom.IsZero() && !at.Before(s.plan.outageFrom) && at.Before(s.plan.outageTo),
		r.IntN(60) == 0:
		if r.IntN(3) == 0 {
			o = relocate(w.tmpl.http5xx, s.loc, s.tls)
			o.Timings.HandshakeMs = 2 * lat
		} else {
			o = relocate(w.tmpl.refused, s.loc, nil)
			o.Timings.HandshakeMs, o.Timings.ToolsListMs = 0, 0
		}
		o.Timings.TotalMs = 2*lat + 5
	case s.plan.profile == "auth":
		o = relocate(w.tmpl.auth, s.loc, s.tls)
		o.Timings.HandshakeMs = 2*lat + int64(r.IntN(20))
		o.Timings.TotalMs = o.Timings.HandshakeMs + lat + 10
	default:
		for s.applied < len(s.plan.steps) && !s.plan.steps[s.applied].After(at) {
			if err := w.step(ctx); err != nil {
				return nil, err
			}
		}
		o = w.render()
		o.Timings.HandshakeMs = 2*lat + int64(r.IntN(30))
		o.Timings.ToolsListMs = lat + int64(len(o.Tools.Tools))*int64(1+r.IntN(3))
		o.Timings.TotalMs = o.Timings.HandshakeMs + o.Timings.ToolsListMs + lat + 15
	}
	o.StartedAt = at
	w.clock = at.Add(time.Duration(o.Timings.TotalMs) * time.Millisecond)
	return o, nil
}

// fleetProbe probes the entry's server in a fleet: the real probe over TLS.
func (w *loadWorker) fleetProbe(ctx context.Context, f *fixtures.Fleet, i int) (*checks.Observation, error) {
	o, err := w.pr.Probe(ctx, f.URL(i))
	if err != nil {
		return nil, err
	}
	if o.Reach.Failure != checks.ReachOK || !o.Tools.Complete {
		return nil, fmt.Errorf("fleet server %d: reach %q, tools complete %v", i, o.Reach.Failure, o.Tools.Complete)
	}
	return o, nil
}

// step applies the next change of the entry's server: most often the fleet's own drift
// (a tool added or removed, a description or parameter changed), read by probing the
// drifting fleet again; otherwise a hint flipped, new instructions or a patch release.
func (w *loadWorker) step(ctx context.Context) error {
	s := w.sim
	s.applied++
	switch n := s.rng.IntN(100); {
	case n < 62:
		o, err := w.fleetProbe(ctx, w.drift, s.plan.i)
		if err != nil {
			return err
		}
		s.base = relocate(o, s.loc, s.tls)
	case n < 75:
		tools := s.base.Tools.Tools
		var t struct{ Name string }
		if json.Unmarshal(tools[s.rng.IntN(len(tools))], &t) == nil {
			s.hints[t.Name] = !s.hints[t.Name]
		}
	case n < 87:
		s.instr++
	default:
		s.bumps++
	}
	return nil
}

// render is the observation of the entry's server as it is now.
func (w *loadWorker) render() *checks.Observation {
	s := w.sim
	o := *s.base
	o.Tools.Tools = make([]json.RawMessage, 0, len(s.base.Tools.Tools)+1)
	names := map[string]bool{}
	for _, raw := range s.base.Tools.Tools {
		var t struct{ Name string }
		_ = json.Unmarshal(raw, &t)
		names[t.Name] = true
		if s.hints[t.Name] {
			raw = flipReadOnly(raw)
		}
		o.Tools.Tools = append(o.Tools.Tools, raw)
	}
	extra := map[string]json.RawMessage{"hidden": w.tmpl.hiddenTool, "destructive": w.tmpl.destructive}[s.plan.profile]
	if extra != nil {
		var t struct{ Name string }
		if json.Unmarshal(extra, &t) == nil && !names[t.Name] {
			o.Tools.Tools = append(o.Tools.Tools, extra)
		}
	}
	if s.instr > 0 {
		text := instructionVariants[(s.instr-1)%len(instructionVariants)]
		if own := s.base.Handshake.Instructions; own != nil && *own != "" {
			text = *own + " " + text
		}
		o.Handshake.Instructions = &text
	}
	if s.bumps > 0 {
		o.Handshake.ServerVersion = bumpPatch(s.base.Handshake.ServerVersion, s.bumps)
	}
	return &o
}

// flipReadOnly flips a tool's readOnlyHint (absent counts as false).
func flipReadOnly(raw json.RawMessage) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var t map[string]any
	if dec.Decode(&t) != nil {
		return raw
	}
	ann, _ := t["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
	}
	ro, _ := ann["readOnlyHint"].(bool)
	ann["readOnlyHint"] = !ro
	t["annotations"] = ann
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(t) != nil {
		return raw
	}
	return bytes.TrimSpace(buf.Bytes())
}

// bumpPatch adds n to the patch number of a version a.b.c.
func bumpPatch(v string, n int) string {
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return fmt.Sprintf("1.0.%d", n)
	}
	p, err := strconv.Atoi(parts[2])
	if err != nil {
		return fmt.Sprintf("1.0.%d", n)
	}
	return parts[0] + "." + parts[1] + "." + strconv.Itoa(p+n)
}

// loadProgress counts what the build did.
type loadProgress struct {
	start   time.Time
	b       *testing.B
	rounds  atomic.Int64
	supply  atomic.Int64
	watch   atomic.Int64
	entries atomic.Int64
	nextLog atomic.Int64
}

func (p *loadProgress) round() {
	n := p.rounds.Add(1)
	if next := p.nextLog.Load(); n >= next && p.nextLog.CompareAndSwap(next, next+10000) {
		el := time.Since(p.start)
		p.b.Logf("%7d rounds, %6d supply runs, %6d package reads, %4d entries done, %v (%.0f rounds/s)",
			n, p.supply.Load(), p.watch.Load(), p.entries.Load(), el.Round(time.Second), float64(n)/el.Seconds())
	}
}

// build runs entry i from its creation to loadEnd: every due time the real schedule sets,
// in order, as the service's worker would run it.
func (w *loadWorker) build(ctx context.Context, i int) (string, error) {
	p := planLoad(i)
	w.clock = p.start
	w.sim = nil
	serverName := ""
	if p.kind == store.KindRemote {
		f := w.stable
		if len(p.steps) > 0 {
			f = w.drift
		}
		o, err := w.fleetProbe(ctx, f, i)
		if err != nil {
			return "", err
		}
		serverName = o.Handshake.ServerName
		w.sim = &loadSim{plan: p, rng: rand.New(rand.NewPCG(uint64(i), 7)), hints: map[string]bool{}, tls: o.TLS, base: o}
	}
	// The entry is what `probity targets import` would make of the line, under the slug
	// load-<i>.
	ts, bad, err := targets.Parse(strings.NewReader(p.ref(serverName)))
	if err != nil || len(bad) > 0 || len(ts) != 1 {
		return "", fmt.Errorf("couldn't parse %q: %v %v", p.ref(serverName), err, bad)
	}
	t := ts[0]
	ne := store.NewEntry{SlugBase: "load-" + strconv.Itoa(i), Kind: t.Kind, Locator: t.Locator, Name: t.Name,
		Source: t.Source}
	if s := w.sim; s != nil {
		ne.Name = displayName(serverName)
		s.loc = t.Locator
		s.base = relocate(s.base, s.loc, s.tls)
	}
	ne.Due = w.schedule.FirstDue(store.Entry{Kind: ne.Kind, Locator: ne.Locator, Claimed: p.claimed}, p.start)
	e, _, err := w.st.AddEntry(ctx, ne)
	if err != nil {
		return "", err
	}
	if p.claimed {
		if err := claimEntry(ctx, w.st, e); err != nil { // only a claim claims an entry
			return "", err
		}
	}
	for {
		dues, err := w.st.DueTimes(ctx, e.ID)
		if err != nil {
			return "", err
		}
		var next *store.Due
		for k := range dues {
			if d := &dues[k]; d.At.Before(loadEnd) && (next == nil || d.At.Before(next.At)) {
				next = d
			}
		}
		if next == nil {
			return e.Slug, nil
		}
		due := store.Due{EntryID: e.ID, Reason: next.Reason, At: next.At}
		// The worker picks the job up a little after its due time.
		w.clock = due.At.Add(time.Duration(1+rand.New(rand.NewPCG(uint64(i), uint64(due.At.UnixMilli()))).IntN(20)) * time.Second)
		if e, err = w.st.EntryByID(ctx, e.ID); err != nil {
			return "", err
		}
		if err := w.work(ctx, e, due); err != nil {
			return "", err
		}
	}
}

// work does what rounds.Service does with a due job (service.go, work): supply runs for
// the supply reason and a package's status check, no round for a remote entry's status
// check on a day it already had one, otherwise a round.
func (w *loadWorker) work(ctx context.Context, e store.Entry, due store.Due) error {
	switch {
	case due.Reason == store.ReasonSupply, due.Reason == store.ReasonStatus && e.Kind != store.KindRemote:
		out, err := w.runner.RunSupply(ctx, e, due.Reason == store.ReasonStatus)
		if err != nil {
			return fmt.Errorf("supply run of %s: %w", e.Slug, err)
		}
		if out.Ran {
			w.stats.supply.Add(1)
		}
		return nil
	case e.Kind != store.KindRemote:
		// A package's cadence and confirmation read its newest version (service.go,
		// workPart); RunEntry has no round for it and would leave the due time where
		// it is, due again at once.
		if due.Reason != store.ReasonCadence && due.Reason != store.ReasonConfirm {
			return fmt.Errorf("%s of %s: no such due time for a package", due.Reason, e.Slug)
		}
		if _, err := w.runner.Watch(ctx, e, due); err != nil {
			return fmt.Errorf("watch of %s: %w", e.Slug, err)
		}
		w.stats.watch.Add(1)
		return nil
	case due.Reason == store.ReasonStatus && sameDay(e.LastRoundAt, w.clock):
		next := due.At.Add(24 * time.Hour)
		for !next.After(w.clock) {
			next = next.Add(24 * time.Hour)
		}
		return w.st.SetDue(ctx, e.ID, store.DueUpdate{Reason: store.ReasonStatus, At: next.Truncate(time.Millisecond)})
	}
	out, err := w.runner.RunEntry(ctx, e, due, "")
	if err != nil {
		return err
	}
	if out.Outcome == rounds.AlreadyDone || out.Outcome == rounds.Failed {
		return fmt.Errorf("round %s of %s: %s", due.Reason, e.Slug, out.Outcome)
	}
	w.stats.round()
	return nil
}

func sameDay(a, b time.Time) bool {
	if a.IsZero() {
		return false
	}
	return a.UTC().Format(time.DateOnly) == b.UTC().Format(time.DateOnly)
}

// buildLoad fills the (new, empty) database.
func buildLoad(b *testing.B, dsn string, signer *signing.Signer) error {
	ctx := context.Background()
	// Commits need not wait for the disk while building: a crash means a rebuild.
	st, err := store.Open(ctx, store.Config{DatabaseURL: dsn + "&synchronous_commit=off", MaxConns: 16})
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		return err
	}
	stable, err := fixtures.StartFleet(fixtures.FleetConfig{N: loadRemote, Seed: loadFleetSeed, TLS: true})
	if err != nil {
		return err
	}
	defer stable.Close()
	drift, err := fixtures.StartFleet(fixtures.FleetConfig{N: loadRemote, Seed: loadFleetSeed, TLS: true, Drift: 1})
	if err != nil {
		return err
	}
	defer drift.Close()
	roots := stable.CertPool()
	roots.AppendCertsFromPEM(drift.CAPEM())
	pr := probe.New(probe.Config{Version: "0.1.0", AllowLoopback: true, RootCAs: roots})
	tmpl, cleanup, err := captureTemplates(ctx, pr)
	if err != nil {
		return err
	}
	defer cleanup()
	proc, err := history.NewProcessor(history.Config{Store: st, Signer: signer, ToolVersion: "0.1.0"})
	if err != nil {
		return err
	}
	verifier, err := supply.NewVerifier(supply.DefaultTrustedRoot())
	if err != nil {
		return err
	}
	transport, err := newFixtureTransport(filepath.Join("..", "checks", "supply", "testdata", "fixtures"))
	if err != nil {
		return err
	}

	prog := &loadProgress{start: time.Now(), b: b}
	prog.nextLog.Store(10000)
	work := make(chan int)
	slugs := make([]string, loadEntries)
	var wg sync.WaitGroup
	var firstErr error
	var errOnce sync.Once
	fail := func(err error) { errOnce.Do(func() { firstErr = err }) }
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range loadWorkers {
		w := &loadWorker{st: st, pr: pr, stable: stable, drift: drift, tmpl: tmpl, stats: prog}
		now := func() time.Time { return w.clock }
		client := supply.NewClient(supply.ClientConfig{Transport: transport, Now: now,
			UserAgent: "probity/0.1.0 (+https://probity.dev/probe)"})
		coll := supply.NewCollector(supply.CollectorConfig{
			Client:       client,
			NPM:          supply.NewNPM(supply.NPMConfig{Client: client}),
			PyPI:         supply.NewPyPI(supply.PyPIConfig{Client: client}),
			GitHub:       supply.NewGitHub(supply.GitHubConfig{Client: client}),
			DepsDev:      supply.NewDepsDev(supply.DepsDevConfig{Client: client}),
			ScorecardAPI: supply.NewScorecardAPI(supply.ScorecardAPIConfig{Client: client}),
			OSV:          supply.NewOSV(supply.OSVConfig{Client: client}),
			Provenance:   verifier,
			Now:          now,
		})
		w.runner, err = rounds.NewRunner(rounds.Config{Store: st, Prober: w, Signer: signer, ToolVersion: "0.1.0",
			History: proc, SupplyHistory: proc, Collector: packageTemplates{coll}, Schedule: w.schedule, Now: now})
		if err != nil {
			return err
		}
		wg.Go(func() {
			for i := range work {
				slug, err := w.build(cctx, i)
				if err != nil {
					fail(fmt.Errorf("entry %d: %w", i, err))
					cancel()
					continue
				}
				slugs[i] = slug
				prog.entries.Add(1)
			}
		})
	}
	// The long histories first, so that they do not finish last on one worker.
	var order []int
	for i := range loadEntries {
		if planLoad(i).heavy {
			order = append(order, i)
		}
	}
	for i := range loadEntries {
		if !planLoad(i).heavy {
			order = append(order, i)
		}
	}
	for _, i := range order {
		if cctx.Err() != nil {
			break
		}
		work <- i
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	for i, s := range slugs {
		if want := "load-" + strconv.Itoa(i); s != want {
			return fmt.Errorf("entry %d got the slug %q, want %q", i, s, want)
		}
	}
	b.Logf("%d rounds, %d supply runs and %d package reads in %v; clearing the due times", prog.rounds.Load(),
		prog.supply.Load(), prog.watch.Load(), time.Since(prog.start).Round(time.Second))
	// No due time is left, so that `probity serve` on this database (which always runs
	// its scheduler) finds nothing to probe and the load test measures the pages only.
	for {
		dues, err := st.DueBefore(ctx, time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), 5000)
		if err != nil {
			return err
		}
		if len(dues) == 0 {
			break
		}
		for _, d := range dues {
			if err := st.SetDue(ctx, d.EntryID, store.DueUpdate{Reason: d.Reason}); err != nil {
				return err
			}
		}
	}
	return nil
}

// packageTemplates is the supply Collector of the build: a package entry's facts are
// those the real collector reads from the source fixtures for its template package
// (there are fixtures for 14 packages, not 600), with the entry's locator and name.
type packageTemplates struct{ c *supply.Collector }

func (p packageTemplates) Collect(ctx context.Context, t supply.Target, tools []json.RawMessage, ep *supply.EndpointFacts) *supply.Facts {
	kind, locator := t.Kind, t.Locator
	if kind != store.KindNPM && kind != store.KindPyPI {
		return p.c.Collect(ctx, t, tools, ep)
	}
	var i int
	if _, err := fmt.Sscanf(locator[strings.LastIndex(locator, "-")+1:], "%d", &i); err != nil {
		return p.c.Collect(ctx, t, tools, ep)
	}
	plan := planLoad(i)
	f := p.c.Collect(ctx, supply.TargetOf(kind, "pkg:"+kind+"/"+strings.Replace(plan.template, "@", "%40", 1)), tools, ep)
	f.Locator = locator
	if f.Package != nil {
		f.Package.Name = plan.pkg
	}
	return f
}

// fixtureTransport answers the supply sources' requests from the recorded and
// documented responses in checks/supply/testdata/fixtures (package sourcefixtures), by
// host: nothing goes to the network.
type fixtureTransport struct {
	routes map[string][]*sourcefixtures.Fixture // "GET /npm/<path>" → fixtures in order
}

var fixtureHosts = map[string]string{
	"registry.npmjs.org": "npm", "pypi.org": "pypi", "api.github.com": "github",
	"api.deps.dev": "depsdev", "api.osv.dev": "osv", "api.securityscorecards.dev": "scorecard",
}

func newFixtureTransport(dir string) (*fixtureTransport, error) {
	fs, err := sourcefixtures.Load(dir)
	if err != nil {
		return nil, err
	}
	// Answers given a limited number of times (a 429 before the 200) are for the retry
	// tests; the build takes the lasting answer.
	fs = slices.DeleteFunc(fs, func(f *sourcefixtures.Fixture) bool { return f.Meta.Times > 0 })
	t := &fixtureTransport{routes: sourcefixtures.Routes(fs)}
	if len(t.routes) < 40 {
		return nil, fmt.Errorf("only %d fixture routes in %s", len(t.routes), dir)
	}
	return t, nil
}

func (t *fixtureTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		defer r.Body.Close()
	}
	svc, ok := fixtureHosts[r.URL.Host]
	if !ok {
		return nil, fmt.Errorf("no fixtures for host %s", r.URL.Host)
	}
	path := r.URL.EscapedPath()
	if r.URL.RawQuery != "" {
		path += "?" + r.URL.RawQuery
	}
	var reqBody any
	if r.Body != nil {
		if b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20)); err == nil && len(b) > 0 {
			_ = json.Unmarshal(b, &reqBody)
		}
	}
	resp := &http.Response{StatusCode: http.StatusNotFound, Header: http.Header{}, Request: r,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Body: io.NopCloser(strings.NewReader(`{"error":"no fixture"}`))}
	for _, f := range t.routes[r.Method+" /"+svc+path] {
		if f.Request != nil && !reflect.DeepEqual(f.Request, reqBody) {
			continue
		}
		for k, v := range f.Meta.Headers {
			resp.Header.Set(k, v)
		}
		if etag := f.Meta.Headers["ETag"]; etag != "" && r.Header.Get("If-None-Match") == etag {
			resp.StatusCode, resp.Body = http.StatusNotModified, http.NoBody
			return resp, nil
		}
		resp.StatusCode, resp.Body = f.Meta.Status, io.NopCloser(bytes.NewReader(f.Body))
		resp.ContentLength = int64(len(f.Body))
		return resp, nil
	}
	return resp, nil
}

// loadCounts is what the load database holds.
type loadCounts struct {
	kinds                           map[string]int64
	rounds, signedFull, signedAuth  int64
	unsigned, withResults, offline  int64
	changes, toolChanges, versions  int64
	perEntry                        [5]int64 // 0, 1 (the baseline), 2–10, 11–100, over 100 changes
	maxChanges                      int64
	supplyRuns, supplyPackage       int64
	surfaces, upDays, offlineDays   int64
	heavySlugs                      []string
	roundsByReason                  map[string]int64
	entriesWithOfflineDays, dbBytes int64
}

func countLoad(ctx context.Context, dsn string) (loadCounts, error) {
	c := loadCounts{kinds: map[string]int64{}, roundsByReason: map[string]int64{}}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return c, err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT kind, count(*) FROM entries GROUP BY kind`)
	if err != nil {
		return c, err
	}
	for rows.Next() {
		var k string
		var n int64
		if err := rows.Scan(&k, &n); err != nil {
			return c, err
		}
		c.kinds[k] = n
	}
	if err := rows.Err(); err != nil {
		return c, err
	}
	rows, err = conn.Query(ctx, `SELECT reason, count(*) FROM rounds GROUP BY reason`)
	if err != nil {
		return c, err
	}
	for rows.Next() {
		var k string
		var n int64
		if err := rows.Scan(&k, &n); err != nil {
			return c, err
		}
		c.roundsByReason[k] = n
	}
	if err := rows.Err(); err != nil {
		return c, err
	}
	err = conn.QueryRow(ctx, `SELECT count(*),
			count(*) FILTER (WHERE coverage = 'full'), count(*) FILTER (WHERE coverage = 'auth_required'),
			count(*) FILTER (WHERE NOT signed), count(*) FILTER (WHERE results IS NOT NULL AND results <> '[]'::bytea),
			count(*) FILTER (WHERE uptime = 'no_answer')
		FROM rounds`).Scan(&c.rounds, &c.signedFull, &c.signedAuth, &c.unsigned, &c.withResults, &c.offline)
	if err != nil {
		return c, err
	}
	err = conn.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE kind = 'tools'), count(*) FILTER (WHERE kind = 'version')
		FROM changes`).Scan(&c.changes, &c.toolChanges, &c.versions)
	if err != nil {
		return c, err
	}
	err = conn.QueryRow(ctx, `SELECT
			count(*) FILTER (WHERE n = 0), count(*) FILTER (WHERE n = 1), count(*) FILTER (WHERE n BETWEEN 2 AND 10),
			count(*) FILTER (WHERE n BETWEEN 11 AND 100), count(*) FILTER (WHERE n > 100), coalesce(max(n), 0)
		FROM (SELECT e.id, count(c.id) AS n FROM entries e LEFT JOIN changes c ON c.entry_id = e.id GROUP BY e.id) t`).
		Scan(&c.perEntry[0], &c.perEntry[1], &c.perEntry[2], &c.perEntry[3], &c.perEntry[4], &c.maxChanges)
	if err != nil {
		return c, err
	}
	err = conn.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE e.kind <> 'remote')
		FROM supply_runs s JOIN entries e ON e.id = s.entry_id`).Scan(&c.supplyRuns, &c.supplyPackage)
	if err != nil {
		return c, err
	}
	err = conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM surfaces), (SELECT count(*) FROM uptime_days),
			(SELECT count(*) FROM uptime_days WHERE no_answer > 0), (SELECT count(DISTINCT entry_id) FROM uptime_days WHERE no_answer > 0),
			pg_database_size(current_database())`).
		Scan(&c.surfaces, &c.upDays, &c.offlineDays, &c.entriesWithOfflineDays, &c.dbBytes)
	if err != nil {
		return c, err
	}
	rows, err = conn.Query(ctx, `SELECT e.slug FROM entries e JOIN changes c ON c.entry_id = e.id
		GROUP BY e.slug HAVING count(*) > 100 ORDER BY e.slug`)
	if err != nil {
		return c, err
	}
	c.heavySlugs, err = pgx.CollectRows(rows, pgx.RowTo[string])
	return c, err
}

func (c loadCounts) log(b *testing.B) {
	b.Logf("entries: %v", c.kinds)
	b.Logf("rounds: %d %v (full %d, auth_required %d, unsigned %d; %d with check results; %d no answer)",
		c.rounds, c.roundsByReason, c.signedFull, c.signedAuth, c.unsigned, c.withResults, c.offline)
	b.Logf("changes: %d (tools %d, version %d); entries with 0 / 1 / 2–10 / 11–100 / >100 changes: %v; most %d",
		c.changes, c.toolChanges, c.versions, c.perEntry, c.maxChanges)
	b.Logf("supply runs: %d (%d of packages); surfaces: %d; uptime days: %d, %d with no answer, on %d entries; %d MB",
		c.supplyRuns, c.supplyPackage, c.surfaces, c.upDays, c.offlineDays, c.entriesWithOfflineDays, c.dbBytes>>20)
	b.Logf("entries with over 100 changes: %s", strings.Join(c.heavySlugs, " "))
}
