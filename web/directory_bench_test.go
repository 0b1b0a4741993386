package web_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/web"
)

// dirBenchEntries is how many entries BenchmarkDirectory's SQLite store holds.
const dirBenchEntries = 3000

// directorySite is a site over a SQLite store of directory entries.
type directorySite struct {
	st store.Store
	h  http.Handler
}

// newDirectorySite returns a site over a SQLite store of n entries server-0 … server-(n-1):
// a quarter of each kind; every remote entry with a round, signed but for every 40th
// entry's, which found no answer (offline); of the signed rounds, those of entries 4,
// 16, 28, … (i % 12 == 4) found 1 FAILED and 2 OBSERVED_RISK, those of 8, 20, 32, …
// (i % 12 == 8) 1 OBSERVED_RISK, and those of i % 8 == 4 negotiated protocol version
// 2025-06-18, the others 2025-11-25; every third entry with a supply run that passed
// for even entries and is signed for every ninth (so every 18th entry is Verified, and
// entries 6, 12, 24, … passed unsigned and are not); every 20th entry with a change a
// day ago.
func newDirectorySite(tb testing.TB, n int) *directorySite {
	tb.Helper()
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	st, doc, _ := openStore(tb, now)
	env := func(s string) []byte {
		return []byte(`{"payloadType":"application/vnd.in-toto+json","payload":"eyJhIjoxfQ==","signatures":[{"keyid":"a050837d85070582","sig":"` + base64.StdEncoding.EncodeToString([]byte(s)) + `"}]}`)
	}
	for i := range n {
		ne := store.NewEntry{SlugBase: fmt.Sprintf("server-%d", i), Name: fmt.Sprintf("Server %d", i), Source: "import"}
		switch i % 4 {
		case 0:
			ne.Kind, ne.Locator = store.KindRemote, fmt.Sprintf("https://s%d.example.com/mcp", i)
		case 1:
			ne.Kind, ne.Locator = store.KindNPM, fmt.Sprintf("pkg:npm/server-%d", i)
		case 2:
			ne.Kind, ne.Locator = store.KindPyPI, fmt.Sprintf("pkg:pypi/server-%d", i)
		case 3:
			ne.Kind, ne.Locator = store.KindGitHub, fmt.Sprintf("https://github.com/o/server-%d", i)
		}
		e, _, err := st.AddEntry(ctx, ne)
		if err != nil {
			tb.Fatal(err)
		}
		if ne.Kind == store.KindRemote {
			at := now.Add(-time.Duration(i%50) * time.Minute)
			r := &store.Round{
				EntryID: e.ID, DueAt: at, Reason: store.ReasonCadence, RoundID: fmt.Sprintf("r-%d", i),
				StartedAt: at, FinishedAt: at.Add(time.Second), Uptime: store.UptimeAnswered, Results: []byte(`[]`),
			}
			if i%40 == 0 {
				r.UnsignedReason, r.Reach, r.Uptime = "no_handshake", "timeout", store.UptimeNoAnswer
			} else {
				doc, fp := []byte(`[{"name":"echo"}]`), &attest.Fingerprints{}
				fp.Surface, fp.Toolset = attest.Digest(doc), attest.Digest([]byte("toolset"))
				fp.Schema, fp.Instructions = attest.Digest([]byte("schema")), attest.Digest([]byte(`""`))
				r.Coverage, r.HTTPStatus, r.ToolCount, r.Pages, r.Fingerprints, r.Surface = "full", 200, 1, 1, fp, doc
				r.ProtocolVersion = "2025-11-25"
				if i%8 == 4 {
					r.ProtocolVersion = "2025-06-18"
				}
				switch i % 12 {
				case 4:
					r.Results = []byte(`[{"id":"a","status":"FAILED"},{"id":"b","status":"OBSERVED_RISK"},{"id":"c","status":"OBSERVED_RISK"},{"id":"d","status":"VERIFIED"}]`)
				case 8:
					r.Results = []byte(`[{"id":"b","status":"OBSERVED_RISK"},{"id":"d","status":"VERIFIED"}]`)
				}
				r.Envelope, r.KeyID, r.PayloadDigest = env(r.RoundID), "a050837d85070582", strings.Repeat("ab", 32)[:62]+fmt.Sprintf("%02x", i%256)
			}
			if _, err := st.SaveRound(ctx, r); err != nil {
				tb.Fatal(err)
			}
		}
		if i%3 == 0 {
			run := store.SupplyRecord{EntryID: e.ID, RanAt: now.Add(-time.Hour), Score: 50 + i%50, Verified: i%2 == 0,
				Facts: []byte(`{}`), Verdict: []byte(`{}`)}
			if i%9 == 0 {
				run.Envelope, run.KeyID = env(fmt.Sprintf("s%d", i)), "a050837d85070582"
			}
			if _, err := st.SaveSupply(ctx, run, nil); err != nil {
				tb.Fatal(err)
			}
		}
		if i%20 == 0 {
			if err := st.SaveHistory(ctx, store.HistoryUpdate{EntryID: e.ID, State: []byte(`{}`), Changes: []store.ChangeRecord{{
				EntryID: e.ID, Number: 1, RecordedAt: now.Add(-24 * time.Hour), Origin: "automatic", Kind: "tools",
				Summary: "1 tool added", Details: []byte(`{}`),
			}}}); err != nil {
				tb.Fatal(err)
			}
		}
	}
	h, err := web.New(web.Config{Store: st, Keys: doc, BaseURL: "https://probity.test", Now: func() time.Time { return now },
		Logger: slog.New(slog.DiscardHandler), RateLimit: web.RateLimit{PerSecond: 1e9, Burst: 1 << 30}})
	if err != nil {
		tb.Fatal(err)
	}
	return &directorySite{st: st, h: h}
}

// BenchmarkDirectory serves directory pages and /api/v1/servers over a SQLite store of
// dirBenchEntries entries: unfiltered pages, a search, and each filter.
func BenchmarkDirectory(b *testing.B) {
	h := newDirectorySite(b, dirBenchEntries).h
	for _, path := range []string{
		"/", "/?page=25", "/?q=server-29", "/?q=nothing-matches", "/?kind=npm&page=5",
		"/?verified=1", "/?changed=7d", "/?offline=1", "/?findings=1", "/?protocol=2025-06-18",
		"/?sort=name", "/?sort=change", "/?sort=findings&page=5", "/?sort=uptime",
		"/api/v1/servers?verified=true&limit=100",
	} {
		b.Run(strings.NewReplacer("/", "_", "?", "", "&", "+").Replace(path), func(b *testing.B) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
			if rec.Code != http.StatusOK {
				b.Fatalf("GET %s: %d %.300s", path, rec.Code, rec.Body)
			}
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
				if rec.Code != http.StatusOK {
					b.Fatalf("GET %s: %d", path, rec.Code)
				}
			}
		})
	}
}
