package history_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/checks/fixtures"
	"github.com/probity-dev/probity/checks/probe"
	"github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/history/stats"
	"github.com/probity-dev/probity/keys/signing"
	"github.com/probity-dev/probity/locator"
	"github.com/probity-dev/probity/rounds"
	"github.com/probity-dev/probity/store"
)

// The known-answer test of seed 003's handshake-path and login tables from the store: a
// manual round of real probes over loopback fixture servers (every handshake path and
// answer, every place a 401 can come, every kind of challenge and metadata verdict) is
// stored by the rounds runner, then history.LoadStats and stats.Compute read it back.

// handshakeLoginFixtures are the fixtures of the round, with what each adds to the
// tables: the handshake path and answer, or where the 401 came, its challenge and the
// auth_metadata verdict.
var handshakeLoginFixtures = []string{
	"healthy-sdk-discover",             // server/discover, proposing 2026-07-28: answered 2026-07-28
	"healthy-raw-discover-2026-07-28",  // server/discover: 2026-07-28
	"healthy-sdk-initialize",           // initialize, proposing 2025-11-25: 2025-11-25
	"healthy-raw-2025-06-18",           // initialize: older, 2025-06-18
	"healthy-sdk-2025-06-18",           // initialize: older, 2025-06-18
	"healthy-raw-2024-11-05",           // initialize: older, 2024-11-05
	"proto-newer-than-proposed",        // initialize: newer, 2026-07-28
	"proto-unknown-version",            // initialize: newer, 2099-01-01 (a date; the round is not signed)
	"auth-valid-metadata",              // 401 at the handshake; metadata URL; consistent
	"auth-scope-contradiction",         // handshake; metadata URL; scope contradiction
	"auth-metadata-500",                // handshake; metadata URL; HTTP error
	"auth-metadata-404-from-challenge", // handshake; metadata URL; HTTP error
	"auth-metadata-blocked",            // handshake; a metadata URL the egress guard refuses: metadata_not_fetched
	"auth-resource-mismatch",           // handshake; metadata URL; resource_mismatch
	"auth-valid-well-known",            // handshake; a challenge without a metadata URL
	"auth-401-without-header",          // handshake; no challenge
	"auth-challenge-unparseable",       // handshake; a header that does not parse
	"auth-tools-list-only",             // initialize 2025-11-25, then 401 at tools/list; metadata URL; consistent
	"auth-tools-call-only",             // initialize 2025-11-25, tools listed, 401 only to tools/call; metadata URL; consistent
}

// draftServer answers initialize with the protocol version "draft" (not a date), which
// the client refuses after the handshake: the round answered with a version it cannot
// recognize.
func draftServer(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if json.Unmarshal(body, &req) != nil || req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		resp := map[string]any{"jsonrpc": "2.0", "id": req.ID}
		if req.Method == "initialize" {
			resp["result"] = map[string]any{"protocolVersion": "draft", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "draft", "version": "0.1"}}
		} else {
			resp["error"] = map[string]any{"code": -32601, "message": "method not found"}
		}
		_ = json.NewEncoder(w).Encode(resp)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// TestHandshakeLoginFromStore: the handshake-path and login tables of a round of real
// probes, stored and read back, have the answers the fixtures define.
func TestHandshakeLoginFromStore(t *testing.T) {
	urls := []string{draftServer(t)} // initialize: unrecognized, "draft"
	coverage := map[string]int{}
	for _, name := range handshakeLoginFixtures {
		fx, ok := fixtures.ByName(name)
		if !ok {
			t.Fatalf("no fixture %s", name)
		}
		inst, err := fx.Start(t.Context())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Cleanup(inst.Close)
		u, err := locator.NormalizeURL(inst.URL)
		if err != nil {
			t.Fatal(err)
		}
		urls = append(urls, u)
		if strings.HasPrefix(name, "auth-") {
			coverage[fx.Coverage]++
		}
	}
	// The fixtures declare their coverage; the table's breakdown follows it.
	if coverage[fixtures.CoverageAuthRequired] != 10 || coverage[fixtures.CoverageFull] != 1 {
		t.Fatalf("the auth fixtures' coverage changed: %v; update the expected login table", coverage)
	}

	statsBackends(t, func(t *testing.T, st store.Store) {
		ctx := t.Context()
		now := time.Now().UTC()
		keyDir := filepath.Join(t.TempDir(), "keys")
		if _, err := signing.GenerateDir(keyDir, "https://probity.test", now.Add(-time.Hour), nil); err != nil {
			t.Fatal(err)
		}
		_, signer, err := signing.OpenDir(keyDir, now)
		if err != nil {
			t.Fatal(err)
		}
		r, err := rounds.NewRunner(rounds.Config{Store: st, Prober: probe.New(probe.Config{Version: "test", AllowLoopback: true}),
			Signer: signer, ToolVersion: "test"})
		if err != nil {
			t.Fatal(err)
		}
		for i, u := range urls {
			if _, _, err := st.AddEntry(ctx, store.NewEntry{SlugBase: "e" + strings.Repeat("x", i), Kind: store.KindRemote, Locator: u, Source: "import"}); err != nil {
				t.Fatal(err)
			}
		}
		sum, err := r.RunAll(ctx, rounds.RunOptions{Concurrency: 4})
		if err != nil || sum.Failed != 0 || sum.Probed != len(urls) {
			t.Fatalf("round: %+v, %v", sum, err)
		}
		opt := stats.Options{Now: time.Now().UTC()}
		servers, err := history.LoadStats(ctx, st, opt)
		if err != nil {
			t.Fatal(err)
		}
		rep := stats.Compute(servers, opt)

		wantPaths := stats.HandshakePaths{
			Paths: []stats.PathRow{
				{Method: "server/discover", Proposed: "2026-07-28", Answered: 2, Same: 2},
				{Method: "initialize", Proposed: "2025-11-25", Answered: 9, Same: 3, Older: 3, Newer: 2, Unrecognized: 1},
			},
			Total:           stats.PathRow{Answered: 11, Same: 5, Older: 3, Newer: 2, Unrecognized: 1},
			MostCommonOlder: "2025-06-18", MostCommonOlderCount: 2,
		}
		if !reflect.DeepEqual(rep.HandshakePaths, wantPaths) {
			t.Errorf("handshake paths:\n got %+v\nwant %+v", rep.HandshakePaths, wantPaths)
		}
		// The nine entries that asked for a login at the handshake answered no version.
		if pv := rep.ProtocolVersions; pv.Servers != 11 || pv.NoVersion != 9 || pv.AuthRequired != 9 {
			t.Errorf("protocol versions: %d with a version, %d without, %d of them authentication required; want 11, 9, 9",
				pv.Servers, pv.NoVersion, pv.AuthRequired)
		}
		part := func(n, of int) stats.Part { return stats.Part{Count: n, Share: float64(n) / float64(of)} }
		wantLogin := stats.Login{
			Unauthorized:           11,
			AtHandshakeOrToolsList: part(10, 11), SignedAuthRequired: 10,
			OnlyToolsCall: part(1, 11), OnlyToolsCallSignedFull: 1,
			OtherRequest:  stats.Part{},
			WithChallenge: 9, WithMetadataURL: part(8, 9), MetadataConsistent: 3, ScopeContradiction: 1, MetadataHTTPError: 2,
			MetadataOther:      []stats.ReasonCount{{Reason: "metadata_not_fetched", Count: 1}, {Reason: "resource_mismatch", Count: 1}},
			WithoutMetadataURL: part(1, 9), Unparseable: 1, WithoutChallenge: 1,
		}
		if !reflect.DeepEqual(rep.Login, wantLogin) {
			t.Errorf("login:\n got %+v\nwant %+v", rep.Login, wantLogin)
		}
		md := rep.Markdown()
		for _, want := range []string{
			"| `server/discover`, proposing 2026-07-28 | 2 | 2 | 0 | 0 | 0 |\n",
			"| `initialize`, proposing 2025-11-25 | 9 | 3 | 3 | 2 | 1 |\n",
			"| Total | 11 | 5 | 3 | 2 | 1 |\n",
			"| Answered one of our requests with HTTP 401 | 11 |  |\n",
			"| – at the handshake or tools/list | 10 | 90.9% |\n",
			"| – only to the call of a nonexistent tool (tools listed without credentials) | 1 | 9.1% |\n",
			"| – with an RFC 9728 metadata URL | 8 | 88.9% |\n",
			"| 401 without a challenge | 1 | 9.1% |\n",
		} {
			if !strings.Contains(md, want) {
				t.Errorf("Markdown lacks %q", want)
			}
		}
		if strings.Contains(md, stats.NotRecordedPath) || strings.Contains(md, "not counted.") {
			t.Error("Markdown says some facts were not recorded")
		}
	})
}
