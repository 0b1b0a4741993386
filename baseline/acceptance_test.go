package baseline_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"github.com/probity-dev/probity/notify"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/baseline"
	"github.com/probity-dev/probity/checks/probe"
	"github.com/probity-dev/probity/export"
	"github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/keys/signing"
	"github.com/probity-dev/probity/rounds"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/verifier"
	"github.com/probity-dev/probity/verifier/cli"
)

// forEachStore runs fn on a fresh, migrated store of each backend: SQLite, and
// PostgreSQL when PROBITY_TEST_DATABASE_URL is set (or under CI), in a database of its
// own.
func forEachStore(t *testing.T, fn func(t *testing.T, st store.Store)) {
	t.Run("sqlite", func(t *testing.T) {
		st, err := store.Open(t.Context(), store.Config{SQLitePath: filepath.Join(t.TempDir(), "probity.db")})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		if err := st.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
		fn(t, st)
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
		exec := func(ctx context.Context, q string) {
			t.Helper()
			conn, err := pgx.Connect(ctx, admin)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			if _, err := conn.Exec(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
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
		t.Cleanup(func() { st.Close() })
		if err := st.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
		fn(t, st)
	})
}

// maintainers is a set of {account, entry} pairs: the claims service's answer.
type maintainers struct {
	mu sync.Mutex
	m  map[[2]int64]bool
}

func (f *maintainers) IsMaintainer(ctx context.Context, account, entry int64) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.m[[2]int64{account, entry}], nil
}

// clock is the rounds' settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// mcpServer is a real MCP server (go-sdk, Streamable HTTP) on a loopback port whose
// tools a test changes between rounds.
func mcpServer(t *testing.T) (*mcp.Server, string) {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "baseline-test", Version: "1.0.0"}, nil)
	add := func(name, desc string) {
		s.AddTool(&mcp.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
	}
	add("get_weather", "Returns the weather for a city.")
	add("get_time", "Returns the current time in a city.")
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{JSONResponse: true}))
	t.Cleanup(srv.Close)
	return s, srv.URL + "/mcp"
}

var baselineChecks = []string{"toolset_unchanged_vs_approved", "schema_unchanged_vs_approved", "surface_unchanged_vs_approved"}

// TestBaselineTurnsChecks is the acceptance test of "Approve a baseline" (issue 18),
// with real rounds (the probe, the runner, the history) against a local MCP server on
// each backend: before any approval the three *_unchanged_vs_approved checks are
// UNVERIFIED (no_baseline); a maintainer approves the newest round's tool surface
// (another account cannot); the next round's checks are VERIFIED (unchanged); after the
// server's tools drift they report the change, with the status the check catalog gives
// it (FAILED, reason changed); approving the drifted surface is baseline 2 and
// verifies again. Each approval is a change of the history ("new approved baseline"),
// and everything the ledger holds, baselines included, verifies offline.
func TestBaselineTurnsChecks(t *testing.T) {
	forEachStore(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		srv, endpoint := mcpServer(t)
		now := time.Now().UTC()
		clk := &clock{now: now}
		keyDir := filepath.Join(t.TempDir(), "keys")
		if _, err := signing.GenerateDir(keyDir, "https://probity.test", now.Add(-time.Hour), nil); err != nil {
			t.Fatal(err)
		}
		doc, signer, err := signing.OpenDir(keyDir, now)
		if err != nil {
			t.Fatal(err)
		}
		proc, err := history.NewProcessor(history.Config{Store: st, Signer: signer, ToolVersion: "test", Baselines: baseline.Approvals{Store: st}})
		if err != nil {
			t.Fatal(err)
		}
		runner, err := rounds.NewRunner(rounds.Config{Store: st, Prober: probe.New(probe.Config{Version: "test", AllowLoopback: true, Now: clk.Now}),
			Signer: signer, ToolVersion: "test", History: proc, Baselines: baseline.Approvals{Store: st}, Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		maint := &maintainers{m: map[[2]int64]bool{}}
		svc, err := baseline.New(baseline.Config{Store: st, Maintainers: maint, Signer: signer, History: proc, ToolVersion: "test", Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		e, _, err := st.AddEntry(ctx, store.NewEntry{SlugBase: "weather", Kind: store.KindRemote, Locator: endpoint, Name: "Weather", Source: "import"})
		if err != nil {
			t.Fatal(err)
		}
		ada, _, err := st.EmailAccount(ctx, "ada@example.com", "ada@example.com", now)
		if err != nil {
			t.Fatal(err)
		}
		bob, _, err := st.EmailAccount(ctx, "bob@example.com", "bob@example.com", now)
		if err != nil {
			t.Fatal(err)
		}
		maint.m[[2]int64{ada.ID, e.ID}] = true

		n := 0
		round := func(want attest.CheckStatus, reason string) {
			t.Helper()
			n++
			clk.add(2 * time.Minute) // past the history's confirmation delay
			rep, err := runner.RunEntry(ctx, e, store.Due{EntryID: e.ID, Reason: store.ReasonCadence, At: clk.Now()}, "")
			if err != nil || rep.Outcome != rounds.SignedFull {
				t.Fatalf("round %d: %+v, %v", n, rep, err)
			}
			raw, err := st.RoundResults(ctx, rep.ID)
			if err != nil {
				t.Fatal(err)
			}
			var results []struct {
				ID     string              `json:"id"`
				Status attest.CheckStatus  `json:"status"`
				Reason *attest.CheckReason `json:"reason"`
			}
			if err := json.Unmarshal(raw, &results); err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, r := range results {
				if r.Reason != nil {
					got[r.ID] = string(r.Status) + " " + r.Reason.Key
				}
			}
			for _, id := range baselineChecks {
				if got[id] != string(want)+" "+reason {
					t.Errorf("round %d: %s is %q, want %s %s", n, id, got[id], want, reason)
				}
			}
		}

		// No baseline: nothing to compare with.
		round(attest.StatusUnverified, "no_baseline")
		if _, err := svc.Approve(ctx, bob.ID, e.Slug); !errors.Is(err, baseline.ErrNotMaintainer) {
			t.Fatalf("Approve by a non-maintainer = %v, want ErrNotMaintainer", err)
		}
		if _, err := svc.Approve(ctx, ada.ID, "no-such-entry"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Approve of no entry = %v, want ErrNotFound", err)
		}
		b1, err := svc.Approve(ctx, ada.ID, e.Slug)
		if err != nil || b1.Number != 1 || b1.ToolCount != 2 {
			t.Fatalf("Approve = %+v, %v", b1, err)
		}
		if _, err := svc.Approve(ctx, ada.ID, e.Slug); !errors.Is(err, baseline.ErrAlreadyApproved) {
			t.Fatalf("Approve again = %v, want ErrAlreadyApproved", err)
		}

		// The next round compares with it.
		round(attest.StatusVerified, "unchanged")

		// The server's tools drift: a tool is added.
		srv.AddTool(&mcp.Tool{Name: "delete_city", Description: "Deletes a city.", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
		round(attest.StatusFailed, "changed")
		round(attest.StatusFailed, "changed") // the history confirms the change
		status, err := svc.Status(ctx, ada.ID, e.Slug)
		if err != nil || !status.Differs || status.Approval != nil || status.Newest.ToolCount != 3 {
			t.Fatalf("Status after the drift = %+v, %v", status, err)
		}

		// The maintainer approves the new surface: baseline 2, and the checks agree again.
		b2, err := svc.Approve(ctx, ada.ID, e.Slug)
		if err != nil || b2.Number != 2 || b2.ToolCount != 3 || b2.Fingerprints.Surface == b1.Fingerprints.Surface {
			t.Fatalf("Approve after the drift = %+v, %v", b2, err)
		}
		round(attest.StatusVerified, "unchanged")

		// Each approval is a change of the history, by the operator, without a name.
		cs, err := st.Changes(ctx, store.ChangeFilter{EntryID: e.ID})
		if err != nil {
			t.Fatal(err)
		}
		// The drift is a tools change flagged as differing from the approved baseline.
		approvals, flagged := 0, 0
		for _, c := range cs {
			if c.Kind == attest.ChangeOperatorEdit && c.Summary == "new approved baseline" {
				approvals++
			}
			if c.Kind == attest.ChangeTools && slices.Contains(c.Badges, history.BadgeDiffersFromApproved) {
				flagged++
			}
		}
		if approvals != 2 || flagged != 1 {
			for _, c := range cs {
				t.Logf("change %d: %s %q %v", c.Number, c.Kind, c.Summary, c.Badges)
			}
			t.Errorf("%d approvals and %d flagged changes in the history, want 2 and 1", approvals, flagged)
		}
		// Followers are told so: the drift's change, as the e-mail planner reads it, sums
		// up as tools that differ from the approved baseline.
		var told []notify.Change
		if err := st.NotifyChanges(ctx, store.NotifyRange{ThroughSeq: 1 << 40}, func(group []store.NotifyChange) error {
			for i := range group {
				if group[i].Kind == attest.ChangeTools {
					told = append(told, notify.ChangeOf(&group[i]))
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if got := notify.Summarize(told, "").Text(); !strings.Contains(got, "(differs from the approved baseline)") {
			t.Errorf("the followers' summary of the drift is %q, want it to say it differs from the approved baseline", got)
		}

		// Everything verifies offline: rounds, changes and the two baselines.
		out := t.TempDir()
		counts, err := export.Write(ctx, st, doc, out, store.EnvelopeFilter{}, nil, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := cli.VerifyPaths(ctx, []string{out}, cli.StreamConfig{Keys: doc, Policy: verifier.DefaultPolicy()})
		if err != nil || sum.Failed != 0 || counts.Other != 2 || sum.Verified != counts.Rounds+counts.Changes+counts.Other {
			t.Fatalf("export %+v verified %+v (%v)", counts, sum, err)
		}
	})
}
