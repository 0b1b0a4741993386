package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/web/ratelimit"
	"github.com/probity-dev/probity/web/refusals"
)

// batchOf is a JSON-RPC batch of n tools/list requests.
func batchOf(n int) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, i+1)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// A batch, however it is dressed, gets 400 and one JSON-RPC error; a lone request
// still works.
func TestBatchRefused(t *testing.T) {
	f := newFixture(t)
	h := newHandler(t, Config{Store: f.st, BaseURL: baseURL, Burst: 100})
	cases := map[string][]byte{
		"20,000 tools/list":      batchOf(20000),
		"one tools/list":         batchOf(1),
		"whitespace first":       append([]byte(" \r\n\t"), batchOf(2)...),
		"empty batch":            []byte(`[]`),
		"with protocol version":  batchOf(3),
		"initialize in a batch":  []byte(`[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}]`),
		"notifications in batch": []byte(`[{"jsonrpc":"2.0","method":"notifications/initialized"}]`),
	}
	n := 0
	for name, body := range cases {
		var hdr http.Header
		if name == "with protocol version" {
			hdr = http.Header{"Mcp-Protocol-Version": {"2025-03-26"}}
		}
		w := post(h, "203.0.113.7:4000", bytes.NewReader(body), hdr)
		n++
		if w.Code != http.StatusBadRequest || w.Body.String() != batchRefusal || w.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %q %q, want 400 with the batch refusal", name, w.Code, w.Header().Get("Content-Type"), w.Body)
			continue
		}
		var resp struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil || resp.JSONRPC != "2.0" || string(resp.ID) != "null" || resp.Error.Code != -32600 {
			t.Errorf("%s: body %s (%v), want a JSON-RPC -32600 error with id null", name, w.Body, err)
		}
	}
	if got := h.Refusals()["batch"]; got != uint64(n) {
		t.Errorf("Refusals()[batch] = %d, want %d", got, n)
	}
	// One message is answered, a notification with 202 and no body.
	w := post(h, "203.0.113.7:4000", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), nil)
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"get_history"`) {
		t.Errorf("tools/list = %d %.200s, want 200 with the tools", w.Code, w.Body)
	}
	w = post(h, "203.0.113.7:4000", strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil)
	if w.Code != http.StatusAccepted || w.Body.Len() != 0 {
		t.Errorf("a notification = %d %q, want 202 without a body", w.Code, w.Body)
	}
}

// Over the wire, a 1 MiB batch costs a few hundred bytes of answer.
func TestBatchRefusedOverHTTP(t *testing.T) {
	f := newFixture(t)
	h := newHandler(t, Config{Store: f.st, BaseURL: baseURL})
	srv := httptest.NewServer(h)
	defer srv.Close()
	body := batchOf(20000)
	req, _ := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusBadRequest || string(b) != batchRefusal {
		t.Errorf("%d-byte batch = %d, %d bytes %.200q; want 400 and the batch refusal", len(body), resp.StatusCode, len(b), b)
	}
}

// capped runs guard in front of next and returns the answer to a request with id 7.
func capped(t *testing.T, next http.Handler) (*httptest.ResponseRecorder, *refusals.Log) {
	t.Helper()
	ref := refusals.New(nil, nil)
	lim, err := ratelimit.New(ratelimit.Config{PerSecond: 100, Burst: 100, MaxClients: 10})
	if err != nil {
		t.Fatal(err)
	}
	g := guard(lim, ref, slog.New(slog.DiscardHandler), next)
	return post(g, "203.0.113.7:4000", strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call"}`), nil), ref
}

// An answer larger than MaxResponse is replaced by a JSON-RPC error for the request.
func TestResponseCap(t *testing.T) {
	big := bytes.Repeat([]byte("x"), MaxResponse+1)
	w, ref := capped(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(len(big)))
		if _, err := w.Write(big); err == nil {
			t.Error("a write past the cap succeeded")
		}
	}))
	var resp struct {
		ID    json.RawMessage `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil || w.Code != http.StatusOK || string(resp.ID) != "7" ||
		resp.Error.Code != -32603 || !strings.Contains(resp.Error.Message, "4 MiB") || w.Header().Get("Content-Length") != "" {
		t.Errorf("answer past the cap = %d %q (%v), want 200 with a -32603 error for id 7", w.Code, w.Body, err)
	}
	if got := ref.Counts()["response_too_large"]; got != 1 {
		t.Errorf("response_too_large counted %d, want 1", got)
	}

	// An answer at the cap goes out whole; a stream passing it is cut.
	w, _ = capped(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write(big[:MaxResponse])
	}))
	if w.Code != http.StatusAccepted || w.Body.Len() != MaxResponse {
		t.Errorf("answer at the cap = %d, %d bytes; want 202, %d bytes", w.Code, w.Body.Len(), MaxResponse)
	}
	w, _ = capped(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write(big[:10])
		http.NewResponseController(w).Flush()
		if _, err := w.Write(big[:MaxResponse]); err == nil {
			t.Error("a stream's write past the cap succeeded")
		}
	}))
	if w.Code != http.StatusOK || w.Body.Len() != 10 || !w.Flushed {
		t.Errorf("stream past the cap = %d, %d bytes, flushed %v; want 200, 10 bytes, flushed", w.Code, w.Body.Len(), w.Flushed)
	}
}

// addBigHistory adds an entry "huge-diffs" with n changes of size bytes of details each
// and, as number bigAt, one of 600 KB; the details are mostly "<", which encoding
// escapes.
func addBigHistory(t *testing.T, st store.Store, n, size int, bigAt int64) {
	t.Helper()
	ctx := t.Context()
	e, _, err := st.AddEntry(ctx, store.NewEntry{SlugBase: "huge-diffs", Kind: store.KindRemote, Locator: "https://huge.example/mcp", Name: "Huge", Source: "import"})
	if err != nil {
		t.Fatal(err)
	}
	o, err := st.SaveRound(ctx, &store.Round{EntryID: e.ID, DueAt: t0, Reason: store.ReasonCadence, RoundID: "r-huge",
		StartedAt: t0, FinishedAt: t0.Add(time.Second), UnsignedReason: "no_handshake", Reach: "timeout", Uptime: store.UptimeNoAnswer, Results: []byte(`[]`)})
	if err != nil {
		t.Fatal(err)
	}
	details := func(size int) []byte {
		return []byte(`{"diff":{"added":[{"name":"` + strings.Repeat("<", size) + `"}]}}`)
	}
	var cs []store.ChangeRecord
	for i := int64(1); i <= int64(n); i++ {
		d := details(size)
		if i == bigAt {
			d = details(600 << 10)
		}
		cs = append(cs, store.ChangeRecord{EntryID: e.ID, Number: i, RecordedAt: t0.Add(time.Duration(i) * time.Minute),
			Origin: "automatic", Kind: "tools", Summary: fmt.Sprintf("change %d", i), Details: d, AfterRound: o})
	}
	if err := st.SaveHistory(ctx, store.HistoryUpdate{EntryID: e.ID, Processed: o, State: []byte(`{}`), Changes: cs}); err != nil {
		t.Fatal(err)
	}
}

// get_history answers stay far below the cap however large the changes, and paging
// still returns every change once.
func TestHistoryBounded(t *testing.T) {
	f := newFixture(t)
	const n, size, bigAt = 40, 20 << 10, 35
	addBigHistory(t, f.st, n, size, bigAt)
	h := newHandler(t, Config{Store: f.st, BaseURL: baseURL, Burst: 1000})

	seen := map[int64]bool{}
	before := int64(0)
	for page := 0; ; page++ {
		if page > n {
			t.Fatal("paging does not end")
		}
		args := `{"slug":"huge-diffs","limit":100}`
		if before > 0 {
			args = fmt.Sprintf(`{"slug":"huge-diffs","limit":100,"before_number":%d}`, before)
		}
		w := post(h, "203.0.113.7:4000", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_history","arguments":`+args+`}}`), nil)
		if w.Code != http.StatusOK {
			t.Fatalf("page %d: %d %.300s", page, w.Code, w.Body)
		}
		t.Logf("page %d: %d bytes", page, w.Body.Len())
		if w.Body.Len() > 2<<20 {
			t.Errorf("page %d: %d bytes of answer, want at most 2 MiB", page, w.Body.Len())
		}
		var resp struct {
			Result struct {
				IsError           bool          `json:"isError"`
				StructuredContent HistoryOutput `json:"structuredContent"`
			} `json:"result"`
			Error json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil || resp.Error != nil || resp.Result.IsError {
			t.Fatalf("page %d: %.300s (%v)", page, w.Body, err)
		}
		out := resp.Result.StructuredContent
		if len(out.Changes) == 0 {
			t.Fatalf("page %d is empty", page)
		}
		for _, c := range out.Changes {
			if seen[c.Number] {
				t.Errorf("change %d twice", c.Number)
			}
			seen[c.Number] = true
			if big := c.Number == bigAt; big != c.DetailsOmitted || big == (len(c.Details) > 0) {
				t.Errorf("change %d: details_omitted %v with %d bytes of details", c.Number, c.DetailsOmitted, len(c.Details))
			}
		}
		if out.NextBeforeNumber == 0 {
			break
		}
		before = out.NextBeforeNumber
	}
	if len(seen) != n {
		t.Errorf("paging returned %d changes, want %d", len(seen), n)
	}
}

// A flood of 429s writes at most one log line per client per minute, and every refusal
// is counted.
func TestRefusalsLoggedOncePerMinute(t *testing.T) {
	f := newFixture(t)
	clk := &clock{t: t0}
	var mu sync.Mutex
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return buf.Write(p)
	}), nil))
	h := newHandler(t, Config{Store: f.st, BaseURL: baseURL, RateLimit: 0.001, Burst: 1, Now: clk.now, Logger: log})
	const seconds, perSecond = 180, 50
	refused := 0
	for range seconds {
		for range perSecond {
			if w := post(h, "203.0.113.7:4000", nil, nil); w.Code == http.StatusTooManyRequests {
				refused++
			}
		}
		clk.add(time.Second)
	}
	lines := strings.Count(buf.String(), `msg="request refused"`)
	if lines > seconds/60 || lines == 0 {
		t.Errorf("%d refusal lines in %d minutes for one client, want 1 to %d:\n%s", lines, seconds/60, seconds/60, buf.String())
	}
	if got := h.Refusals()["rate_limited"]; got != uint64(refused) || refused < seconds*perSecond-2 {
		t.Errorf("Refusals()[rate_limited] = %d, %d refused", got, refused)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
