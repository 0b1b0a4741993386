package web_test

import (
	"context"
	"encoding/json"
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

// bigDescription is a 3 KB tool description in which most characters need escaping
// in HTML and JSON, as a hostile server's would.
var bigDescription = func() string {
	const unit = `<a href="x">&'</a> `
	return strings.Repeat(unit, 3000/len(unit)+1)[:3000]
}()

// bigEntry is a store holding the entry "big" whose newest round listed n tools with
// 3 KB descriptions, and a site over it.
type bigEntry struct {
	st    store.Store
	entry store.Entry
	obs   int64               // the round's observation
	new   func() http.Handler // a site with fresh memos
}

func newBigEntry(tb testing.TB, n int) *bigEntry {
	tb.Helper()
	ctx := context.Background()
	start := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	st, doc, _ := openStore(tb, start)
	e, _, err := st.AddEntry(ctx, store.NewEntry{SlugBase: "big", Kind: store.KindRemote, Locator: "https://big.example/mcp", Name: "Big", Source: "import"})
	if err != nil {
		tb.Fatal(err)
	}
	type tool struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	tools := make([]json.RawMessage, n)
	for i := range tools {
		b, err := json.Marshal(tool{Name: fmt.Sprintf("tool_%05d", i), Description: bigDescription, InputSchema: json.RawMessage(`{"type":"object"}`)})
		if err != nil {
			tb.Fatal(err)
		}
		tools[i] = b
	}
	// The stored form, as rounds stores it: canonical JSON.
	surface, err := attest.SurfaceDocument(tools)
	if err != nil {
		tb.Fatal(err)
	}
	obs, err := st.SaveRound(ctx, &store.Round{
		EntryID: e.ID, DueAt: start, Reason: store.ReasonCadence, RoundID: "r-big",
		StartedAt: start, FinishedAt: start.Add(time.Second),
		Coverage: "full", HTTPStatus: 200, Uptime: store.UptimeAnswered,
		ProtocolVersion: "2025-11-25", ServerName: "big", ServerVersion: "1.0.0", ToolCount: n, Pages: 1,
		Fingerprints: &attest.Fingerprints{
			Surface: attest.Digest(surface), Toolset: attest.Digest([]byte("toolset")),
			Schema: attest.Digest([]byte("schema")), Instructions: attest.Digest([]byte(`""`)),
		},
		Surface: surface, Results: []byte(`[]`), Timings: []byte(`{}`),
		Envelope: []byte(`{"payloadType":"application/vnd.in-toto+json","payload":"eyJhIjoxfQ==","signatures":[{"keyid":"a050837d85070582","sig":"c2ln"}]}`),
		KeyID:    "a050837d85070582", PayloadDigest: strings.Repeat("ab", 32),
	})
	if err != nil {
		tb.Fatal(err)
	}
	return &bigEntry{st: st, entry: e, obs: obs, new: func() http.Handler {
		h, err := web.New(web.Config{Store: st, Keys: doc, BaseURL: "https://probity.test", Now: func() time.Time { return start.Add(time.Hour) },
			Logger: slog.New(slog.DiscardHandler), RateLimit: web.RateLimit{PerSecond: 1e9, Burst: 1 << 30}})
		if err != nil {
			tb.Fatal(err)
		}
		return h
	}}
}

func getBig(tb testing.TB, h http.Handler, path string) *httptest.ResponseRecorder {
	tb.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	if rec.Code != http.StatusOK {
		tb.Fatalf("GET %s: %d %.300s", path, rec.Code, rec.Body)
	}
	return rec
}

// BenchmarkBigEntry serves the page, JSON and Markdown of an entry with 7,000 tools of
// 3 KB: warm (the sections remembered) and cold (a fresh site: the first view after a
// start or a new round). It reports the answer's size as B/answer.
func BenchmarkBigEntry(b *testing.B) {
	be := newBigEntry(b, 7000)
	for _, path := range []string{"/s/big", "/s/big.json", "/s/big.md"} {
		b.Run("warm"+path, func(b *testing.B) {
			h := be.new()
			n := getBig(b, h, path).Body.Len()
			b.ResetTimer()
			for b.Loop() {
				getBig(b, h, path)
			}
			b.ReportMetric(float64(n), "B/answer")
		})
	}
	b.Run("cold/s/big", func(b *testing.B) {
		var n int
		for b.Loop() {
			b.StopTimer()
			h := be.new()
			b.StartTimer()
			n = getBig(b, h, "/s/big").Body.Len()
		}
		b.ReportMetric(float64(n), "B/answer")
	})
}
