package probe

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/checks"
)

// everythingRecording is one recorded session with the official TypeScript reference
// server (testdata/server-everything/README.md says where, which version and how).
type everythingRecording struct {
	Capabilities map[string]json.RawMessage `json:"capabilities"`
	Exchanges    []struct {
		Name    string `json:"name"`
		Request struct {
			Body string `json:"body"`
		} `json:"request"`
		Response struct {
			Status  int               `json:"status"`
			Headers map[string]string `json:"headers"`
			Body    string            `json:"body"`
		} `json:"response"`
	} `json:"exchanges"`
}

func loadEverything(t *testing.T, name string) *everythingRecording {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "server-everything", name))
	if err != nil {
		t.Fatal(err)
	}
	var rec everythingRecording
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return &rec
}

// exchange returns the recorded exchange of a JSON-RPC method.
func (r *everythingRecording) exchange(method string) (status int, headers map[string]string, body string, ok bool) {
	for _, ex := range r.Exchanges {
		if ex.Name == method {
			return ex.Response.Status, ex.Response.Headers, ex.Response.Body, true
		}
	}
	return 0, nil, "", false
}

// toolsResult is the recorded tools/list result object, as the server sent it.
func (r *everythingRecording) toolsResult(t *testing.T) []byte {
	t.Helper()
	_, _, body, _ := r.exchange("tools/list")
	for _, line := range strings.Split(body, "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok && strings.HasPrefix(data, "{") {
			return []byte(data)
		}
	}
	t.Fatal("no tools/list response in the recording")
	return nil
}

// replayEverything answers like the recorded server: initialize picks the recording whose
// client capabilities the request declares (roots or none, as the server's conditional
// tools do), and every later request of that session is answered from it, with the
// recorded status, headers and body, only the JSON-RPC id set to the request's.
func replayEverything(t *testing.T, none, roots *everythingRecording) (*httptest.Server, func() []json.RawMessage) {
	var mu sync.Mutex
	sessions := map[string]*everythingRecording{}
	var declared []json.RawMessage
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Capabilities json.RawMessage `json:"capabilities"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &req) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		mu.Lock()
		rec := sessions[r.Header.Get("Mcp-Session-Id")]
		if req.Method == "initialize" {
			declared = append(declared, req.Params.Capabilities)
			var caps map[string]json.RawMessage
			_ = json.Unmarshal(req.Params.Capabilities, &caps)
			rec = none
			if _, ok := caps["roots"]; ok {
				rec = roots
			}
			_, h, _, _ := rec.exchange("initialize")
			sessions[h["mcp-session-id"]] = rec
		}
		mu.Unlock()
		if rec == nil {
			rec = none // no session yet: server/discover, answered alike by both
		}
		status, headers, recorded, ok := rec.exchange(req.Method)
		if !ok {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		for _, h := range []string{"content-type", "mcp-session-id", "cache-control"} {
			if v, ok := headers[h]; ok {
				w.Header().Set(h, v)
			}
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, withID(recorded, req.ID))
	}))
	t.Cleanup(srv.Close)
	return srv, func() []json.RawMessage {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(declared)
	}
}

// withID sets the id of every JSON-RPC response in a recorded event stream to id; other
// bodies are returned as recorded.
func withID(body string, id json.RawMessage) string {
	if id == nil {
		return body
	}
	lines := strings.Split(body, "\n")
	for i, line := range lines {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || !strings.HasPrefix(data, "{") {
			continue
		}
		var msg map[string]json.RawMessage
		if json.Unmarshal([]byte(data), &msg) != nil || (msg["result"] == nil && msg["error"] == nil) {
			continue
		}
		msg["id"] = id
		b, _ := json.Marshal(msg)
		lines[i] = "data: " + string(b)
	}
	return strings.Join(lines, "\n")
}

// TestServerEverythingReplay probes the recorded answers of the official TypeScript
// reference server: the probe must see the tool list a client without capabilities
// sees (13 tools, not the 14 a client declaring roots sees), with that client's toolset
// fingerprint, and judge the isError result for the unknown tool OBSERVED_RISK.
func TestServerEverythingReplay(t *testing.T) {
	none, roots := loadEverything(t, "capabilities-none.json"), loadEverything(t, "capabilities-roots.json")
	srv, declared := replayEverything(t, none, roots)
	obs := probe(t, prober(), srv.URL+"/mcp")

	want, _, err := attest.ParseToolsDocument(none.toolsResult(t))
	if err != nil {
		t.Fatal(err)
	}
	withRoots, _, _ := attest.ParseToolsDocument(roots.toolsResult(t))
	if len(want) != 13 || len(withRoots) != 14 {
		t.Fatalf("the recordings list %d and %d tools; want 13 without capabilities and 14 with roots", len(want), len(withRoots))
	}
	for _, caps := range declared() {
		if !bytes.Equal(bytes.TrimSpace(caps), []byte("{}")) {
			t.Errorf("initialize declared the capabilities %s; want {}", caps)
		}
	}
	if !obs.Tools.Complete || len(obs.Tools.Tools) != len(want) {
		t.Fatalf("the probe read %d tools (complete %v); a capability-less client sees %d", len(obs.Tools.Tools), obs.Tools.Complete, len(want))
	}
	got, err := checks.Fingerprints(obs)
	if err != nil || got == nil {
		t.Fatalf("Fingerprints: %v", err)
	}
	ref, err := attest.ComputeFingerprints(want, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Toolset != ref.Toolset || got.Schema != ref.Schema || got.Surface != ref.Surface {
		t.Errorf("fingerprints %s %s %s; a capability-less client's are %s %s %s", got.Toolset, got.Schema, got.Surface, ref.Toolset, ref.Schema, ref.Surface)
	}
	results, coverage, _ := checks.Evaluate(obs)
	if coverage != attest.CoverageFull {
		t.Errorf("coverage %q; want full", coverage)
	}
	for _, r := range results {
		if r.ID == "error_taxonomy" && (r.Status != attest.StatusObservedRisk || r.Reason.Key != "result_is_error") {
			t.Errorf("error_taxonomy %s %s; the TypeScript SDK's isError result is OBSERVED_RISK result_is_error", r.Status, r.Reason.Key)
		}
	}
}
