package web_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
)

// TestMeasureParallelViews measures the peak RSS that 8 parallel first views of an
// entry with 7,000 tools of 3 KB add (its page, JSON and Markdown, different pages of
// its tools), on a fresh site: the "8 parallel views took serve to 1 GB". It
// only runs with PROBITY_MEASURE=1 (it resets the process's peak RSS, Linux only) and
// prints the figures.
func TestMeasureParallelViews(t *testing.T) {
	if os.Getenv("PROBITY_MEASURE") != "1" {
		t.Skip("set PROBITY_MEASURE=1 to measure")
	}
	be := newBigEntry(t, 7000)
	for _, same := range []bool{false, true} {
		measureViews(t, be.new(), same)
	}
}

// measureViews measures 8 parallel first views on h: of one page when same, else of
// the page, JSON and Markdown with different pages of the tools.
func measureViews(t *testing.T, h http.Handler, same bool) {
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Skipf("cannot reset the peak RSS: %v", err)
	}
	before := procStatus(t, "VmHWM")
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for i := range 8 {
		path := []string{"/s/big", "/s/big.json", "/s/big.md"}[i%3] + fmt.Sprintf("?tools=%d", i+1)
		if same {
			path = "/s/big"
		}
		wg.Go(func() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
			mu.Lock()
			total += rec.Body.Len()
			mu.Unlock()
		})
	}
	wg.Wait()
	after := procStatus(t, "VmHWM")
	what := "different pages"
	if same {
		what = "/s/big"
	}
	fmt.Printf("8 parallel first views (%s): peak RSS %d kB -> %d kB (+%d MB), %d bytes answered\n", what, before, after, (after-before)/1024, total)
}

func procStatus(t *testing.T, key string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, key+":"); ok {
			var n int
			fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(v), " kB"), &n)
			return n
		}
	}
	t.Skipf("no %s", key)
	return 0
}
