package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/probity-dev/probity/checks/fixtures"
	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/keys/signing"
	"github.com/probity-dev/probity/logaudit"
	"github.com/probity-dev/probity/rounds"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/targets"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// probityBinary builds cmd/probity once per test process.
func probityBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "probity-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "probity")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// probity runs the binary to completion and returns its exit code, stdout and stderr.
func probity(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(probityBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stdout.String(), stderr.String()
}

func writeTargets(t *testing.T, dir string, fleet *fixtures.Fleet) string {
	t.Helper()
	return writeTargetURLs(t, dir, fleet.URLs())
}

// writeTargetURLs writes a targets file listing urls in dir and returns its path.
func writeTargetURLs(t *testing.T, dir string, urls []string) string {
	t.Helper()
	path := filepath.Join(dir, "targets.txt")
	if err := os.WriteFile(path, []byte("# the fleet\n"+strings.Join(urls, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// exportAndVerify exports the store with the binary and verifies the export offline
// (round and change envelopes); it returns the number of round envelopes verified.
func exportAndVerify(t *testing.T, env []string, dataDir string) int {
	t.Helper()
	out := filepath.Join(t.TempDir(), "export.jsonl")
	code, stdout, stderr := probity(t, env, "export", "--data-dir", dataDir, "--out", out)
	if code != 0 {
		t.Fatalf("export: exit %d\n%s%s", code, stdout, stderr)
	}
	var rounds, changes, supplyRuns, keyVersions int
	if _, err := fmt.Sscanf(stdout, "exported %d round, %d change, %d supply and %d key document envelopes", &rounds, &changes, &supplyRuns, &keyVersions); err != nil {
		t.Fatalf("export said %q: %v", stdout, err)
	}
	code, stdout, stderr = probity(t, nil, "verify", "--keys", filepath.Join(filepath.Dir(out), keys.DocumentFile), out)
	if code != 0 {
		t.Fatalf("verify: exit %d\n%s%s", code, stdout, stderr)
	}
	var total, n, failed int
	if _, err := fmt.Sscanf(lastLine(stdout), "%d envelopes: %d verified, %d failed", &total, &n, &failed); err != nil || failed != 0 {
		t.Fatalf("verify summary %q: %v", lastLine(stdout), err)
	}
	if n != rounds+changes+supplyRuns+keyVersions || keyVersions < 1 {
		t.Fatalf("verified %d envelopes; the export wrote %d rounds, %d changes, %d supply runs and %d key document versions", n, rounds, changes, supplyRuns, keyVersions)
	}
	// Like Sunlight's harness, end by auditing the log as a monitor would: every tile,
	// leaf, envelope and key document version. The commands that sign (round) append
	// before they end, so the log holds every record exported.
	rep := auditLog(t, env, dataDir)
	if rep.Size < int64(n) {
		t.Fatalf("the log holds %d records, the export %d", rep.Size, n)
	}
	return rounds
}

// auditLog runs the monitor (logaudit) over DATA-DIR/log with the key directory env
// names and fails the test on any finding.
func auditLog(t *testing.T, env []string, dataDir string) *logaudit.Report {
	t.Helper()
	keyDir := filepath.Join(dataDir, "keys")
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PROBITY_KEY_DIR="); ok && v != "" {
			keyDir = v
		}
	}
	rep, err := logaudit.Run(t.Context(), logaudit.Config{Source: filepath.Join(dataDir, "log"), KeysFile: filepath.Join(keyDir, keys.DocumentFile)})
	if err != nil {
		t.Fatalf("log audit: %v", err)
	}
	if !rep.OK() {
		t.Fatalf("log audit of %d leaves found %d failures, the first: %+v", rep.Size, len(rep.Failures), rep.Failures[0])
	}
	t.Logf("log audit: %d leaves, %d envelopes verified, counts %v", rep.Size, rep.Verified, rep.Counts)
	return rep
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// TestRoundSurvivesKills kills `probity round` with SIGKILL at random moments, again and
// again, then lets it finish, and checks that nothing was lost or stored twice: one
// round per entry for the run, an envelope for every signed observation and none
// without, every server probed once per stored attempt, and an export that verifies.
func TestRoundSurvivesKills(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the binary")
	}
	const servers, concurrency = 300, 8
	fleet, err := fixtures.StartFleet(fixtures.FleetConfig{N: servers, Seed: 11, Latency: 15 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	targets := writeTargets(t, dir, fleet)
	env := []string{"DATABASE_URL=", "PROBITY_KEY_DIR="}
	if code, out, errOut := probity(t, env, "targets", "import", "--data-dir", dataDir, targets); code != 0 {
		t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
	}

	rng := rand.New(rand.NewPCG(1, 2))
	kills := 0
	for kills < 25 {
		cmd := exec.Command(probityBinary(t), "round", "--allow-loopback", "--data-dir", dataDir, "--concurrency", fmt.Sprint(concurrency))
		cmd.Env = append(os.Environ(), env...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("round exited on its own with %v\n%s", err, stderr.String())
			}
			t.Logf("round finished on its own after %d kills", kills)
			goto finished
		case <-time.After(time.Duration(50+rng.IntN(450)) * time.Millisecond):
			cmd.Process.Signal(syscall.SIGKILL)
			<-done
			kills++
		}
	}
	if code, out, errOut := probity(t, env, "round", "--allow-loopback", "--data-dir", dataDir); code != 0 {
		t.Fatalf("final round: exit %d\n%s%s", code, out, errOut)
	} else if !strings.Contains(out, "stored earlier in this run") {
		t.Errorf("the killed invocations stored nothing; the kills came too early:\n%s", out)
	} else if !strings.Contains(out, "(resumed)") {
		t.Errorf("the final round did not resume the killed run:\n%s", out)
	} else {
		t.Logf("final round:\n%s", out)
	}
finished:
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{SQLitePath: filepath.Join(dataDir, "probity.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.UnfinishedRun(ctx); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a run is still unfinished: %v", err)
	}
	entries, err := st.Entries(ctx, 0, 0)
	if err != nil || len(entries) != servers {
		t.Fatalf("%d entries (%v)", len(entries), err)
	}
	repeated := 0
	for _, e := range entries {
		rs, err := st.Rounds(ctx, e.ID, 5)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != 1 {
			t.Fatalf("%s: %d rounds, want exactly 1", e.Slug, len(rs))
		}
		n, err := st.Attempts(ctx, e.ID, rs[0].DueAt)
		if err != nil {
			t.Fatal(err)
		}
		i := indexOf(fleet, e.Locator)
		if reads := fleet.Reads(i); reads == 0 || reads > uint64(n) {
			t.Errorf("%s: %d tools/list reads for %d recorded attempts", e.Slug, reads, n)
		}
		repeated += n - 1
	}
	if repeated > kills*concurrency {
		t.Errorf("%d repeated attempts after %d kills of %d probes in flight", repeated, kills, concurrency)
	}
	stats, err := st.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Signed != stats.Envelopes || stats.Rounds != servers {
		t.Fatalf("stats %+v: want %d observations and an envelope for every signed one", stats, servers)
	}
	t.Logf("%d kills, %d repeated attempts, %+v", kills, repeated, stats)
	if kills < 5 {
		t.Errorf("only %d kills landed before the round finished; the test proves little", kills)
	}
	if n := exportAndVerify(t, env, dataDir); int64(n) != stats.Signed {
		t.Fatalf("verified %d envelopes, the store signed %d", n, stats.Signed)
	}
}

func indexOf(f *fixtures.Fleet, url string) int {
	for i, u := range f.URLs() {
		if u == url {
			return i
		}
	}
	return -1
}

// testDatabase creates a fresh PostgreSQL database for a test and returns its URL. It
// skips without PROBITY_TEST_DATABASE_URL, unless CI=true, where it must run.
func testDatabase(t *testing.T) string {
	t.Helper()
	base := os.Getenv("PROBITY_TEST_DATABASE_URL")
	if base == "" {
		if os.Getenv("CI") != "true" {
			t.Skip("set PROBITY_TEST_DATABASE_URL to run the PostgreSQL service tests")
		}
		base = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("couldn't connect to PostgreSQL: %v", err)
	}
	defer conn.Close(ctx)
	name := fmt.Sprintf("probity_svc_%x", rand.Uint64())
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), base)
		if err != nil {
			return
		}
		defer conn.Close(context.Background())
		conn.Exec(context.Background(), "DROP DATABASE "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// TestServeThreeWorkers runs three `probity serve` processes on one PostgreSQL database
// over 500 fleet servers and checks that they share the work and probe each entry
// exactly once for its due time.
func TestServeThreeWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dbURL := testDatabase(t)
	const servers = 500
	fleet, err := fixtures.StartFleet(fixtures.FleetConfig{N: servers, Seed: 21})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	env := []string{"DATABASE_URL=" + dbURL, "PROBITY_KEY_DIR=" + filepath.Join(dir, "keys")}
	if code, out, errOut := probity(t, env, "migrate"); code != 0 {
		t.Fatalf("migrate: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := probity(t, env, "targets", "import", "--data-dir", dataDir, "--first-spread", "5s", writeTargets(t, dir, fleet)); code != 0 {
		t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{DatabaseURL: dbURL})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	type worker struct {
		cmd    *exec.Cmd
		stderr *bytes.Buffer
		done   chan error
	}
	var workers []*worker
	for range 3 {
		// Cadence 1 h: nothing is due twice within the test; first rounds spread over 5 s.
		cmd := exec.Command(probityBinary(t), "serve", "--allow-loopback", "--data-dir", dataDir, "--listen", "",
			"--cadence", "1h", "--first-spread", "5s", "--tick", "1s", "--concurrency", "16")
		cmd.Env = append(os.Environ(), env...)
		w := &worker{cmd: cmd, stderr: &bytes.Buffer{}, done: make(chan error, 1)}
		cmd.Stderr = w.stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { w.done <- cmd.Wait() }()
		workers = append(workers, w)
	}
	stopAll := func() {
		for _, w := range workers {
			w.cmd.Process.Signal(syscall.SIGTERM)
		}
		for i, w := range workers {
			select {
			case err := <-w.done:
				if err != nil {
					t.Errorf("worker %d: %v\n%s", i, err, tail(w.stderr.String(), 2000))
				}
			case <-time.After(90 * time.Second):
				w.cmd.Process.Kill()
				t.Errorf("worker %d did not stop within 90 s", i)
			}
		}
	}
	deadline := time.Now().Add(150 * time.Second)
	var stats store.Stats
	for time.Now().Before(deadline) {
		stats, err = st.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if stats.Rounds >= servers {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	time.Sleep(3 * time.Second) // room for any duplicate to show up
	stopAll()
	if stats.Rounds < servers {
		t.Fatalf("after 150 s only %d of %d entries have a round", stats.Rounds, servers)
	}
	entries, err := st.Entries(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		rs, err := st.Rounds(ctx, e.ID, 5)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != 1 || rs[0].Reason != store.ReasonCadence {
			t.Fatalf("%s: rounds %+v, want exactly one cadence round", e.Slug, rs)
		}
		n, err := st.Attempts(ctx, e.ID, rs[0].DueAt)
		if err != nil || n != 1 {
			t.Errorf("%s: %d attempts (%v), want 1", e.Slug, n, err)
		}
		if reads := fleet.Reads(indexOf(fleet, e.Locator)); reads != 1 {
			t.Errorf("%s: probed %d times, want exactly once", e.Slug, reads)
		}
	}
	for i, w := range workers {
		if n := strings.Count(w.stderr.String(), "msg=round "); n == 0 {
			t.Errorf("worker %d stored no round:\n%s", i, tail(w.stderr.String(), 2000))
		} else {
			t.Logf("worker %d stored %d rounds", i, n)
		}
	}
	if n := exportAndVerify(t, env, dataDir); n != servers {
		t.Fatalf("verified %d envelopes, want %d", n, servers)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// TestHistoryAndStatsCommands runs two rounds over a small fleet, then reads the history
// and the statistics through the CLI, hides a change, and verifies the export.
func TestHistoryAndStatsCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	fleet, err := fixtures.StartFleet(fixtures.FleetConfig{N: 4, Seed: 31})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	env := []string{"DATABASE_URL=", "PROBITY_KEY_DIR="}
	for range 2 {
		if code, out, errOut := probity(t, env, "round", "--allow-loopback", "--data-dir", dataDir, "--targets", writeTargets(t, dir, fleet)); code != 0 {
			t.Fatalf("round: exit %d\n%s%s", code, out, errOut)
		}
	}
	code, out, errOut := probity(t, env, "targets", "list", "--data-dir", dataDir)
	if code != 0 {
		t.Fatalf("targets list: exit %d\n%s", code, errOut)
	}
	slug := strings.Fields(strings.Split(out, "\n")[1])[0]

	code, out, errOut = probity(t, env, "history", "--data-dir", dataDir, slug)
	if code != 0 || !strings.Contains(out, "ch-1") || !strings.Contains(out, "observation started with") {
		t.Fatalf("history: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := probity(t, env, "history", "hide", "--data-dir", dataDir, slug, "1"); code != 2 {
		t.Errorf("hide without a reason: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := probity(t, env, "history", "hide", "--data-dir", dataDir, "--reason", "test", slug, "1"); code != 0 {
		t.Fatalf("hide: exit %d\n%s%s", code, out, errOut)
	}
	if _, out, _ := probity(t, env, "history", "--data-dir", dataDir, slug); strings.Contains(out, "ch-1") {
		t.Errorf("a hidden change is listed:\n%s", out)
	}
	if _, out, _ := probity(t, env, "history", "--data-dir", dataDir, "--hidden", slug); !strings.Contains(out, "ch-1 (hidden)") {
		t.Errorf("--hidden does not list the hidden change:\n%s", out)
	}

	code, out, errOut = probity(t, env, "stats", "--data-dir", dataDir)
	if code != 0 || !strings.Contains(out, "# Probity statistics") || !strings.Contains(out, "## How often toolsets change") {
		t.Fatalf("stats: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = probity(t, env, "stats", "--json", "--data-dir", dataDir)
	var rep map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep["dataset"] == nil {
		t.Fatalf("stats --json: exit %d\n%.500s%s", code, out, errOut)
	}
	// 8 rounds and 4 baselines (one hidden, still exported and verifiable).
	if n := exportAndVerify(t, env, dataDir); n != 8 {
		t.Fatalf("verified %d round envelopes, want 8", n)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestServePublishes runs `probity serve` on the embedded store with the directory on a
// loopback port and checks that it publishes what the rounds produce, with /mcp mounted.
func TestServePublishes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	fleet, err := fixtures.StartFleet(fixtures.FleetConfig{N: 3, Seed: 41})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	env := []string{"DATABASE_URL=", "PROBITY_KEY_DIR="}
	if code, out, errOut := probity(t, env, "targets", "import", "--data-dir", dataDir, "--first-spread", "1s", writeTargets(t, dir, fleet)); code != 0 {
		t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
	}
	addr := freeAddr(t)
	cmd := exec.Command(probityBinary(t), "serve", "--allow-loopback", "--data-dir", dataDir, "--listen", addr, "--tick", "1s", "--poll", "100ms")
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve exited with %v\n%s", err, tail(stderr.String(), 2000))
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Error("serve did not stop within 30 s")
		}
	}()
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	deadline := time.Now().Add(60 * time.Second)
	var body string
	for {
		var code int
		code, body = get("/s/" + slugOf(t, fleet.URL(0)) + ".json")
		if code == 200 && strings.Contains(body, "observation started") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s the entry's JSON is %d %.300s\n%s", code, body, tail(stderr.String(), 2000))
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, path := range []string{"/", "/healthz", "/.well-known/probity-keys.json", "/changes.xml", "/badge/" + slugOf(t, fleet.URL(0)) + ".svg"} {
		if code, b := get(path); code != 200 {
			t.Errorf("GET %s: %d %.200s", path, code, b)
		}
	}
	req := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`
	r, _ := http.NewRequest("POST", "http://"+addr+"/mcp", strings.NewReader(req))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"probity"`) {
		t.Errorf("POST /mcp initialize: %d %.300s", resp.StatusCode, b)
	}
}

// slugOf is the slug targets import gives a fleet URL.
func slugOf(t *testing.T, url string) string {
	t.Helper()
	return targets.Slug("remote", url)
}

// TestServePublishOnly: serve --publish-only publishes what a round stored with only the
// key document at hand (no private key), probes nothing, and refuses to start without
// the key document instead of creating a key.
func TestServePublishOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	fleet, err := fixtures.StartFleet(fixtures.FleetConfig{N: 2, Seed: 43})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	env := []string{"DATABASE_URL=", "PROBITY_KEY_DIR=" + filepath.Join(dir, "keys")}
	if code, out, errOut := probity(t, env, "round", "--data-dir", dataDir, "--allow-loopback", "--targets", writeTargets(t, dir, fleet)); code != 0 {
		t.Fatalf("round: exit %d\n%s%s", code, out, errOut)
	}
	// The replica's key directory holds the key document only.
	pubKeys := filepath.Join(dir, "pubkeys")
	if err := os.MkdirAll(pubKeys, 0o700); err != nil {
		t.Fatal(err)
	}
	docBytes, err := os.ReadFile(filepath.Join(dir, "keys", keys.DocumentFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pubKeys, keys.DocumentFile), docBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	rounds := func() int64 {
		st, err := store.Open(context.Background(), store.Config{SQLitePath: filepath.Join(dataDir, "probity.db")})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		s, err := st.Stats(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return s.Rounds
	}
	before := rounds()
	if before != 2 {
		t.Fatalf("%d rounds stored, want 2", before)
	}

	addr := freeAddr(t)
	cmd := exec.Command(probityBinary(t), "serve", "--publish-only", "--data-dir", dataDir, "--key-dir", pubKeys, "--listen", addr)
	cmd.Env = append(os.Environ(), "DATABASE_URL=", "PROBITY_KEY_DIR=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if code, _ := get("/healthz"); code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no /healthz after 20 s\n%s", tail(stderr.String(), 2000))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code, body := get("/.well-known/probity-keys.json"); code != 200 || body != string(docBytes) {
		t.Errorf("key document: %d %.200s", code, body)
	}
	if code, body := get("/s/" + slugOf(t, fleet.URL(0)) + ".json"); code != 200 || !strings.Contains(body, `"checks"`) {
		t.Errorf("entry JSON: %d %.300s", code, body)
	}
	time.Sleep(2 * time.Second) // a scheduler would have enqueued the first due rounds by now
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve --publish-only exited with %v\n%s", err, tail(stderr.String(), 2000))
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("serve --publish-only did not stop within 20 s")
	}
	if after := rounds(); after != before {
		t.Errorf("%d rounds after publishing only, %d before: it probed", after, before)
	}
	if !strings.Contains(stderr.String(), "publishing only") {
		t.Errorf("stderr:\n%s", tail(stderr.String(), 2000))
	}

	// Without the key document it refuses, and creates no key.
	empty := filepath.Join(dir, "nokeys")
	code, _, errOut := probity(t, []string{"DATABASE_URL=", "PROBITY_KEY_DIR="}, "serve", "--publish-only", "--data-dir", dataDir, "--key-dir", empty, "--listen", freeAddr(t))
	if code != 2 || !strings.Contains(errOut, "key document") {
		t.Errorf("without a key document: exit %d\n%s", code, errOut)
	}
	if _, err := os.Stat(empty); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the key directory %s was created: %v", empty, err)
	}
}

// TestServeScheduleFlags: the cadence settings are checked before anything starts, with
// an error naming the flag and its bounds.
func TestServeScheduleFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--cadence", "30s"}, "the cadence is 30s; it must be from 2m0s to 168h0m0s"},
		{[]string{"--cadence", "200h"}, "the cadence is 200h0m0s; it must be from 2m0s to 168h0m0s"},
		{[]string{"--cadence", "0s"}, "--cadence 0s: a cadence must be positive"},
		{[]string{"--claimed-cadence", "-1m"}, "--claimed-cadence -1m0s: a cadence must be positive"},
		{[]string{"--claimed-cadence", "4h"}, "the claimed cadence (4h0m0s) is longer than the cadence (3h0m0s)"},
		{[]string{"--cadence", "10m", "--claimed-cadence", "15m"}, "the claimed cadence (15m0s) is longer than the cadence (10m0s)"},
		{[]string{"--first-spread", "48h"}, "the first spread is 48h0m0s; it must be at most 24h0m0s"},
		{[]string{"--registry-url", "https://registry.example.com", "--registry-interval", "1s"}, "--registry-interval 1s: want 5m to 168h"},
		{[]string{"--registry-url", "ftp://registry.example.com"}, "--registry-url: "},
		{[]string{"--accounts", "--base-url", "https://probity.example"}, "--accounts on an https site needs --trusted-proxy"},
		{[]string{"--accounts", "--publish-only"}, "a --publish-only replica publishes read-only"},
	} {
		var stdout, stderr bytes.Buffer
		code := runServe(append([]string{"--data-dir", t.TempDir(), "--listen", ""}, c.args...), &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("serve %v: exit %d, stderr %q; want 2 and %q", c.args, code, tail(stderr.String(), 300), c.want)
		}
	}
	// --cadence alone, shorter than the default claimed cadence, is the claimed one too
	// (the flag's zero is the schedule's default).
	s := rounds.Schedule{Cadence: 10 * time.Minute}
	if err := validateSchedule(s); err != nil || s.CadenceOf(store.Entry{Claimed: true}) != 10*time.Minute {
		t.Errorf("--cadence 10m alone: claimed cadence %s, %v", s.CadenceOf(store.Entry{Claimed: true}), err)
	}
	var stdout bytes.Buffer
	if code := runServe([]string{"-h"}, &stdout, io.Discard); code != 0 ||
		!strings.Contains(stdout.String(), "--cadence D          time between reads of unclaimed entries") ||
		!strings.Contains(stdout.String(), "(default 3h; 2m to 168h)") || !strings.Contains(stdout.String(), "--claimed-cadence D  time between reads of claimed entries (default 15m") ||
		!strings.Contains(stdout.String(), "--cadence when that is shorter") {
		t.Errorf("serve -h does not document the cadence settings:\n%s", stdout.String())
	}
}

// TestServeWatchesItsOwnMCPServer: with a public URL, serve lists Probity's own MCP
// server (BASE-URL/mcp) as an entry, once however often it starts, and a round reads
// it like any other entry (loopback allowed here).
func TestServeWatchesItsOwnMCPServer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	st, err := store.Open(ctx, store.Config{SQLitePath: filepath.Join(dir, "probity.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	keyDir := filepath.Join(dir, "keys")
	if _, err := signing.GenerateDir(keyDir, "https://probity.test", time.Now().Add(-time.Minute), nil); err != nil {
		t.Fatal(err)
	}
	doc, signer, err := signing.OpenDir(keyDir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	base := "http://" + addr
	schedule := rounds.Schedule{}
	now := time.Now()
	first, created, err := watchOwnServer(ctx, st, base, schedule, now)
	if err != nil || !created {
		t.Fatalf("first start: %+v, created %v, %v", first, created, err)
	}
	again, created, err := watchOwnServer(ctx, st, base+"/", schedule, now.Add(time.Hour)) // a restart
	if err != nil || created || again.ID != first.ID {
		t.Fatalf("second start: %+v, created %v, %v; want entry %d unchanged", again, created, err, first.ID)
	}
	if first.Slug != ownServerSlug || first.Name != ownServerName || first.Kind != store.KindRemote || first.Locator != base+"/mcp" || !first.Listed {
		t.Errorf("own entry %+v", first)
	}
	if entries, err := st.Entries(ctx, 0, 0); err != nil || len(entries) != 1 {
		t.Fatalf("entries %+v, %v; want the one own entry", entries, err)
	}
	dues, err := st.DueTimes(ctx, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	var cadence store.Due
	for _, d := range dues {
		if d.Reason == store.ReasonCadence {
			cadence = d
		}
	}
	if cadence.At.IsZero() || cadence.At.Sub(now) > 15*time.Minute {
		t.Fatalf("own entry's due times %+v: want its first round within the first spread", dues)
	}

	logger := slog.New(slog.DiscardHandler)
	srv, err := publish(ctx, st, doc, filepath.Join(t.TempDir(), "log"), addr, base, siteOptions{}, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	ef := envFlags{allowLoopback: true, concurrency: 1}
	r, err := ef.runner(st, signer, schedule, logger)
	if err != nil {
		t.Fatal(err)
	}
	o, err := r.RunEntry(ctx, first, cadence, "")
	if err != nil || o.Outcome != rounds.SignedFull {
		t.Fatalf("round of the own MCP server: %+v, %v; want signed with full coverage", o, err)
	}
	rs, err := st.Rounds(ctx, first.ID, 10)
	if err != nil || len(rs) != 1 || rs[0].ToolCount == 0 || !rs[0].Signed {
		t.Fatalf("rounds %+v, %v", rs, err)
	}
}
