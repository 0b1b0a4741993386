package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/web"
)

// TestDirectoryCacheLag: a directory page is rendered again once it is older than
// Config.DirectoryCacheTTL (a second by default), so an entry added to the store shows
// after that time plus one rendering and not before; with a negative TTL it shows at
// once.
func TestDirectoryCacheLag(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		ttl  time.Duration
		lag  time.Duration // how long the new entry stays unseen
	}{
		{"default", 0, web.DefaultDirectoryCacheTTL},
		{"3s", 3 * time.Second, 3 * time.Second},
		{"off", -1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := &fakeClock{t: time.Date(2026, 12, 2, 6, 0, 0, 0, time.UTC)}
			st, doc, _ := openStore(t, clk.now())
			h, err := web.New(web.Config{Store: st, Keys: doc, BaseURL: "https://probity.test", Now: clk.now, DirectoryCacheTTL: tc.ttl})
			if err != nil {
				t.Fatal(err)
			}
			get := func(path string) string {
				t.Helper()
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
				if rec.Code != http.StatusOK {
					t.Fatalf("GET %s: %d", path, rec.Code)
				}
				return rec.Body.String()
			}
			if strings.Contains(get("/"), "fresh-entry") {
				t.Fatal("the entry is listed before it is added")
			}
			if _, _, err := st.AddEntry(ctx, store.NewEntry{SlugBase: "fresh-entry", Kind: store.KindRemote,
				Locator: "https://fresh.example/mcp", Name: "fresh-entry", Source: "import"}); err != nil {
				t.Fatal(err)
			}
			if tc.lag > 0 {
				clk.add(tc.lag - time.Millisecond)
				if strings.Contains(get("/"), "fresh-entry") {
					t.Errorf("the entry shows %v after it was added, within the time to live %v", tc.lag-time.Millisecond, tc.lag)
				}
				if !strings.Contains(get("/?sort=name"), "fresh-entry") {
					t.Error("another query's page, rendered now, does not show the entry")
				}
				clk.add(time.Millisecond)
			}
			// Past the time to live the kept page is served once more while it is
			// rendered again in the background; then the new one.
			deadline := time.Now().Add(10 * time.Second)
			for !strings.Contains(get("/"), "fresh-entry") {
				if time.Now().After(deadline) {
					t.Fatalf("the entry does not show %v after it was added", tc.lag)
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
}
