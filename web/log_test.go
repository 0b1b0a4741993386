package web_test

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/fstest"
	"time"

	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/web"
)

// fakeLog is a log directory in memory and a bundle per sequence number.
type fakeLog struct {
	files   fstest.MapFS
	bundles map[int64]string
	pending int64 // a record not in a checkpoint yet
}

func (l *fakeLog) Open(name string) (fs.File, error) { return l.files.Open(name) }

func (l *fakeLog) Bundle(_ context.Context, seq int64) ([]byte, error) {
	if seq == l.pending {
		return nil, fmt.Errorf("record %d: %w", seq, web.ErrNotLoggedYet)
	}
	b, ok := l.bundles[seq]
	if !ok {
		return nil, fmt.Errorf("record %d: %w", seq, store.ErrNotFound)
	}
	return []byte(b), nil
}

func logSite(t *testing.T, lg web.Log, rl web.RateLimit) http.Handler {
	t.Helper()
	now := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	st, doc, _ := openStore(t, now)
	h, err := web.New(web.Config{Store: st, Keys: doc, BaseURL: "https://probity.test", Now: func() time.Time { return now }, Log: lg, RateLimit: rl})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func serve(h http.Handler, path, remote string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("GET", path, nil)
	if remote != "" {
		req.RemoteAddr = remote
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// TestLogServed checks /log/ serves exactly the tlog-tiles names, tiles as immutable
// and the checkpoint briefly cached, and nothing else of the directory.
func TestLogServed(t *testing.T) {
	lg := &fakeLog{files: fstest.MapFS{
		"checkpoint":                 {Data: []byte("probity.test/log\n300000000\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n— probity.test/log sig\n")},
		"tile/1/000.p/2":             {Data: make([]byte, 64)},
		"tile/0/x002/x000/000":       {Data: make([]byte, 8192)}, // leaves 512,000,000 on: beyond the checkpoint
		"tile/2/x001/000":            {Data: make([]byte, 8192)}, // 256^3 leaves each: beyond too
		"tile/entries/x001/x171/874": {Data: []byte("entries")},  // ends at 300,000,000 exactly
		"tile/entries/x001/x171/875": {Data: []byte("entries")},  // one bundle further
		"tile/0/000.p/3":             {Data: make([]byte, 96)},
		"tile/0/x001/x002/003":       {Data: make([]byte, 8192)},
		"tile/entries/000.p/3":       {Data: []byte("entries")},
		"tile/entries/x001/234.p/17": {Data: []byte("entries")},
		".state/treeState":           {Data: []byte("state")},
		".probity-appender.lock":     {Data: []byte("")},
		"tile/0/001":                 {Mode: fs.ModeDir},
	}, bundles: map[int64]string{1: `{"bundle":"probity.dev/log-bundle/v1"}`}, pending: 2}
	h := logSite(t, lg, web.RateLimit{})

	cp := serve(h, "/log/checkpoint", "")
	if cp.Code != 200 || cp.Header().Get("Cache-Control") != "public, max-age=5" || cp.Header().Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Fatalf("checkpoint: %d %q %q", cp.Code, cp.Header().Get("Cache-Control"), cp.Header().Get("Content-Type"))
	}
	for _, p := range []string{"/log/tile/0/000.p/3", "/log/tile/0/x001/x002/003", "/log/tile/entries/000.p/3", "/log/tile/entries/x001/234.p/17",
		"/log/tile/1/000.p/2", "/log/tile/entries/x001/x171/874"} {
		rec := serve(h, p, "")
		if rec.Code != 200 || rec.Header().Get("Cache-Control") != "public, max-age=31536000, immutable" || rec.Header().Get("Content-Type") != "application/octet-stream" {
			t.Errorf("%s: %d %q", p, rec.Code, rec.Header().Get("Cache-Control"))
		}
	}
	for _, p := range []string{
		"/log/", "/log/.state/treeState", "/log/.probity-appender.lock", "/log/tile/0/001", // a directory
		"/log/tile/0/x001/../000.p/3", "/log/tile/64/000", "/log/tile/0/1234", "/log/tile/0/000.p/0",
		"/log/tile/0/000.p/256", "/log/tile/0/x01/000", "/log/tile/0/000/", "/log/checkpoint.bak", "/log/tile/entries/0000",
		"/log/tile/0/000.p/03", "/log/tile/0/999", // well-formed but absent
		"/log/tile/0/x002/x000/000", "/log/tile/2/x001/000", "/log/tile/entries/x001/x171/875", // written, but beyond the published checkpoint
	} {
		if rec := serve(h, p, ""); rec.Code != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", p, rec.Code)
		}
	}

	if rec := serve(h, "/bundle/1.json", ""); rec.Code != 200 || rec.Header().Get("Cache-Control") != "public, max-age=300" {
		t.Errorf("bundle: %d %q", rec.Code, rec.Header().Get("Cache-Control"))
	}
	if rec := serve(h, "/bundle/2.json", ""); rec.Code != 404 || rec.Header().Get("Retry-After") != "60" || rec.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("bundle not yet logged: %d %q", rec.Code, rec.Header())
	}
	for _, p := range []string{"/bundle/3.json", "/bundle/0.json", "/bundle/01.json", "/bundle/-1.json", "/bundle/1", "/bundle/x.json", "/bundle/99999999999999999999.json"} {
		if rec := serve(h, p, ""); rec.Code != 404 {
			t.Errorf("%s: %d", p, rec.Code)
		}
	}
	for _, m := range []string{"POST", "PUT", "DELETE"} {
		req := httptest.NewRequest(m, "/log/checkpoint", nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusMethodNotAllowed {
			t.Errorf("%s /log/checkpoint: %d", m, rec.Code)
		}
	}
}

// TestLogWithoutLog checks a site without a log serves none of it.
func TestLogWithoutLog(t *testing.T) {
	h := logSite(t, nil, web.RateLimit{})
	for _, p := range []string{"/log/checkpoint", "/bundle/1.json"} {
		if rec := serve(h, p, ""); rec.Code != 404 {
			t.Errorf("%s: %d", p, rec.Code)
		}
	}
}

// TestLogRateLimitApart checks /log/ has its own bucket: a client the site limits can
// still read the log, and the log's bucket limits too.
func TestLogRateLimitApart(t *testing.T) {
	lg := &fakeLog{files: fstest.MapFS{"checkpoint": {Data: []byte("cp\n")}}}
	h := logSite(t, lg, web.RateLimit{PerSecond: 0.1, Burst: 1})
	const client = "192.0.2.1:1000"
	serve(h, "/", client)
	if rec := serve(h, "/", client); rec.Code != http.StatusTooManyRequests {
		t.Fatalf("site not limited: %d", rec.Code)
	}
	n := 0
	for ; n < 1000; n++ {
		if rec := serve(h, "/log/checkpoint", client); rec.Code != 200 {
			if rec.Code != http.StatusTooManyRequests {
				t.Fatalf("log read %d: %d", n, rec.Code)
			}
			break
		}
	}
	if n != web.DefaultLogRateLimit.Burst {
		t.Errorf("the log's bucket let %d reads through, want its burst %d", n, web.DefaultLogRateLimit.Burst)
	}
}
