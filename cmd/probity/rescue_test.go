package main

import (
	"bytes"
	"context"
	"database/sql"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
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
	"github.com/probity-dev/probity/store"
)

// stallGate sits in front of a fleet: while closed it holds every request until the
// gate opens or the client goes away, and records which servers were asked; once open
// it passes requests through to the fleet.
type stallGate struct {
	srv   *httptest.Server
	proxy *httputil.ReverseProxy
	open  chan struct{}
	once  sync.Once

	mu   sync.Mutex
	seen map[string]bool
}

func newStallGate(t *testing.T, fleet *fixtures.Fleet) *stallGate {
	t.Helper()
	target, err := url.Parse("http://" + fleet.Addr())
	if err != nil {
		t.Fatal(err)
	}
	g := &stallGate{proxy: httputil.NewSingleHostReverseProxy(target), open: make(chan struct{}), seen: map[string]bool{}}
	// Requests of the killed process end when it dies; no log of each.
	g.proxy.ErrorLog = log.New(io.Discard, "", 0)
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-g.open:
		default:
			g.mu.Lock()
			g.seen[r.URL.Path] = true
			g.mu.Unlock()
			select {
			case <-g.open:
			case <-r.Context().Done():
				return
			}
		}
		g.proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(g.srv.Close)
	return g
}

// stalled is how many servers have a request held at the gate or had one.
func (g *stallGate) stalled() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.seen)
}

func (g *stallGate) release() { g.once.Do(func() { close(g.open) }) }

// TestServeRescuesRoundsOfKilledProcess kills `probity serve` with SIGKILL while every
// entry's round is in flight (the servers stall), checks that the killed process left
// those probe jobs running in River's table, then starts serve again and requires
// every entry to get its stored round within the rescue delay plus River's rescuer
// interval (30 s) and leader handover (15 s). Without RescueStuckJobsAfter River would
// leave the jobs running for an hour, and the unique jobs would block new ones for the
// same due times. It runs on SQLite and on PostgreSQL.
func TestServeRescuesRoundsOfKilledProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds, kills and restarts the binary")
	}
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) { testServeRescue(t, backend) })
	}
}

func testServeRescue(t *testing.T, backend string) {
	const servers = 6
	// The job timeout only has to outlast the moments between the probes starting and
	// the kill; the rescue delay is short so the test stays short. Production keeps
	// the defaults (2 min and 3 min).
	const jobTimeout, rescueAfter = 10 * time.Second, 15 * time.Second
	// River's leader looks for stuck jobs every 30 s and a killed leader's term
	// expires within 15 s; a rescued job is retried within about a second and promoted
	// by River's scheduler within 5 s.
	const bound = rescueAfter + 30*time.Second + 15*time.Second + 20*time.Second

	fleet, err := fixtures.StartFleet(fixtures.FleetConfig{N: servers, Seed: 51})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	gate := newStallGate(t, fleet)
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	env := []string{"DATABASE_URL=", "PROBITY_KEY_DIR=" + filepath.Join(dir, "keys")}
	var dbURL string
	if backend == "postgres" {
		dbURL = testDatabase(t)
		env[0] = "DATABASE_URL=" + dbURL
	}
	var lines []string
	for i := range servers {
		u, err := url.Parse(fleet.URL(i))
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, gate.srv.URL+u.Path)
	}
	if code, out, errOut := probity(t, env, "targets", "import", "--data-dir", dataDir, "--first-spread", "1s", writeTargetURLs(t, dir, lines)); code != 0 {
		t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
	}
	ctx := context.Background()
	storeCfg := store.Config{DatabaseURL: dbURL, SQLitePath: filepath.Join(dataDir, "probity.db")}

	serve := func() (*exec.Cmd, *bytes.Buffer, chan error) {
		// Cadence 1 h: nothing falls due twice within the test.
		cmd := exec.Command(probityBinary(t), "serve", "--allow-loopback", "--data-dir", dataDir, "--listen", "",
			"--cadence", "1h", "--first-spread", "1s", "--tick", "1s", "--poll", "100ms", "--concurrency", "16",
			"--job-timeout", jobTimeout.String(), "--rescue-after", rescueAfter.String())
		cmd.Env = append(os.Environ(), env...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		return cmd, &stderr, done
	}

	// 1. Every entry's round starts and stalls; then serve is killed.
	cmd, stderr, done := serve()
	deadline := time.Now().Add(60 * time.Second)
	for gate.stalled() < servers {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-done
			t.Fatalf("after 60 s only %d of %d servers were asked\n%s", gate.stalled(), servers, tail(stderr.String(), 3000))
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	<-done
	killed := time.Now()

	// 2. The killed process left the probe jobs running and stored no round.
	if n := runningProbeJobs(t, backend, dbURL, storeCfg.SQLitePath); n != servers {
		t.Fatalf("%d probity_probe jobs running after the kill, want %d\n%s", n, servers, tail(stderr.String(), 3000))
	}
	st, err := store.Open(ctx, storeCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if s, err := st.Stats(ctx); err != nil || s.Rounds != 0 {
		t.Fatalf("stats %+v (%v): the killed process stored rounds; the kill came too late", s, err)
	}

	// 3. The servers answer again; a restarted serve probes every entry within the bound.
	gate.release()
	cmd, stderr, done = serve()
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve exited with %v\n%s", err, tail(stderr.String(), 2000))
			}
		case <-time.After(90 * time.Second):
			cmd.Process.Kill()
			t.Error("serve did not stop within 90 s")
		}
	}()
	var stats store.Stats
	for {
		stats, err = st.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if stats.Rounds >= servers {
			break
		}
		if time.Since(killed) > bound {
			t.Fatalf("%s after the kill only %d of %d entries have a round; %d probe jobs still running\n%s",
				bound, stats.Rounds, servers, runningProbeJobs(t, backend, dbURL, storeCfg.SQLitePath), tail(stderr.String(), 3000))
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("%s: every entry probed again %.1f s after the kill (rescue after %s, bound %s)", backend, time.Since(killed).Seconds(), rescueAfter, bound)
	entries, err := st.Entries(ctx, 0, 0)
	if err != nil || len(entries) != servers {
		t.Fatalf("%d entries (%v)", len(entries), err)
	}
	for _, e := range entries {
		rs, err := st.Rounds(ctx, e.ID, 5)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != 1 || rs[0].Reason != store.ReasonCadence || !rs[0].Signed {
			t.Errorf("%s: rounds %+v, want one signed cadence round", e.Slug, rs)
		}
	}
}

// runningProbeJobs counts River's probity_probe jobs in state running.
func runningProbeJobs(t *testing.T, backend, dbURL, sqlitePath string) int {
	t.Helper()
	const q = "SELECT count(*) FROM river_job WHERE kind = 'probity_probe' AND state = 'running'"
	var n int
	if backend == "postgres" {
		conn, err := pgx.Connect(context.Background(), dbURL)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		if err := conn.QueryRow(context.Background(), q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	db, err := sql.Open("sqlite", sqlitePath+"?_pragma=busy_timeout(5000)&_query_only=1")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRow(q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestServeRescueFlags: a rescue delay that would run live rounds twice is refused.
func TestServeRescueFlags(t *testing.T) {
	env := []string{"DATABASE_URL=", "PROBITY_KEY_DIR="}
	for _, args := range [][]string{
		{"--job-timeout", "10s", "--rescue-after", "5s"},
		{"--job-timeout", "10s", "--rescue-after", "10s"},
		{"--job-timeout", "0s"},
		{"--rescue-after", "-1s"},
	} {
		code, _, errOut := probity(t, env, append([]string{"serve", "--data-dir", t.TempDir(), "--listen", ""}, args...)...)
		if code != 2 || !strings.Contains(errOut, "--rescue-after longer than it") {
			t.Errorf("serve %v: exit %d\n%s", args, code, tail(errOut, 500))
		}
	}
}
