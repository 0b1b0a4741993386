package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// cliRegistry is a registry on loopback serving list pages of 10 by cursor (the page
// number), from server.json documents built on the registry's own with-remote example;
// status and updatedAt can be changed between syncs, and one request can be faulted.
type cliRegistry struct {
	mu     sync.Mutex
	docs   []map[string]any
	status []string
	at     []time.Time
	fault  func(w http.ResponseWriter, page int) bool
}

func newCLIRegistry(t *testing.T, n int) (*cliRegistry, string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "registry", "testdata", "examples", "with-remote.json"))
	if err != nil {
		t.Fatal(err)
	}
	r := &cliRegistry{}
	base := time.Date(2025, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		s := strings.NewReplacer("{host}", fmt.Sprintf("h%02d.example.com", i),
			"modelcontextprotocol/servers", fmt.Sprintf("probity-test/cli-%02d", i)).Replace(string(b))
		var doc map[string]any
		if err := json.Unmarshal([]byte(s), &doc); err != nil {
			t.Fatal(err)
		}
		doc["name"] = fmt.Sprintf("io.github.probity-test/cli-%02d", i)
		r.docs = append(r.docs, doc)
		r.status = append(r.status, "active")
		r.at = append(r.at, base.Add(time.Duration(i)*time.Minute))
	}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return r, srv.URL
}

func (r *cliRegistry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	q := req.URL.Query()
	var since time.Time
	if s := q.Get("updated_since"); s != "" {
		since, _ = time.Parse(time.RFC3339Nano, s)
	}
	var items []any
	for i, doc := range r.docs {
		if r.at[i].After(since) {
			items = append(items, map[string]any{"server": doc, "_meta": map[string]any{"io.modelcontextprotocol.registry/official": map[string]any{
				"status": r.status[i], "isLatest": true, "publishedAt": r.at[i].Format(time.RFC3339), "updatedAt": r.at[i].Format(time.RFC3339)}}})
		}
	}
	page := 0
	fmt.Sscan(q.Get("cursor"), &page)
	if r.fault != nil && r.fault(w, page) {
		return
	}
	lo, hi := min(page*10, len(items)), min(page*10+10, len(items))
	meta := map[string]any{"count": hi - lo}
	if hi < len(items) {
		meta["nextCursor"] = fmt.Sprint(page + 1)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"servers": items[lo:hi], "metadata": meta})
}

// TestRegistrySync: `probity registry sync` lists each server of a registry as one
// entry with its parts, reports progress and a summary, syncs only what changed the
// second time, unlists a deleted server, resumes after a refused page without losing
// what it imported, and refuses a loopback registry without --allow-loopback.
func TestRegistrySync(t *testing.T) {
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	env := []string{"DATABASE_URL=", "PROBITY_KEY_DIR="}
	reg, url := newCLIRegistry(t, 25)
	sync := func(extra ...string) (int, string, string) {
		return probity(t, env, append([]string{"registry", "sync", "--data-dir", dataDir, "--url", url}, extra...)...)
	}

	// The egress guard refuses loopback unless allowed; nothing is imported.
	if code, out, errOut := sync(); code != 1 || !strings.Contains(errOut, "loopback") {
		t.Fatalf("without --allow-loopback: exit %d\n%s%s", code, out, errOut)
	}

	// The refused walk is resumed: from its first page, with nothing stored yet.
	code, out, errOut := sync("--allow-loopback")
	if code != 0 || !strings.Contains(out, "3 pages, 25 servers read") || !strings.Contains(out, "25 entries added") ||
		!strings.Contains(errOut, "page 3: 25 servers read") || !strings.Contains(errOut, ": resuming the sync started") {
		t.Fatalf("first sync: exit %d\n%s%s", code, out, errOut)
	}
	code, list, errOut := probity(t, env, "targets", "list", "--data-dir", dataDir)
	if code != 0 || strings.Count(list, "io.github.probity-test/cli-") != 25 || strings.Count(strings.TrimSpace(list), "\n") != 25 {
		t.Fatalf("list: exit %d\n%s%s", code, list, errOut)
	}
	for _, line := range strings.Split(list, "\n")[1:2] {
		// remote (primary) + repository.
		if f := strings.Fields(line); len(f) < 5 || f[1] != "remote" || f[4] != "2" {
			t.Errorf("list line %q: want a remote entry with 2 parts", line)
		}
	}

	// The registry deletes one server and updates another: the next sync reads those
	// (and the overlap) only.
	reg.mu.Lock()
	reg.status[3], reg.at[3] = "deleted", reg.at[24].Add(time.Hour)
	reg.docs[7]["description"], reg.at[7] = "A new description", reg.at[24].Add(time.Hour)
	reg.mu.Unlock()
	code, out, errOut = sync("--allow-loopback")
	if code != 0 || !strings.Contains(out, "0 entries added, 2 updated") || !strings.Contains(out, "1 unlisted") || !strings.Contains(errOut, "updates since") {
		t.Fatalf("second sync: exit %d\n%s%s", code, out, errOut)
	}
	_, list, _ = probity(t, env, "targets", "list", "--data-dir", dataDir)
	if !strings.Contains(list, "io.github.probity-test/cli-03 (unlisted)") || strings.Count(list, "(unlisted)") != 1 {
		t.Errorf("the deleted server is not unlisted:\n%s", list)
	}

	// A full sync whose second page is refused keeps the first and resumes after it.
	reg.mu.Lock()
	reg.fault = func(w http.ResponseWriter, page int) bool {
		if page == 1 {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"servers": "not a list"}`))
			return true
		}
		return false
	}
	reg.mu.Unlock()
	code, out, errOut = sync("--allow-loopback", "--full")
	if code != 1 || !strings.Contains(errOut, "malformed page") || !strings.Contains(errOut, "hint: run the same command again") || !strings.Contains(out, "1 page, 10 servers read") {
		t.Fatalf("refused page: exit %d\n%s%s", code, out, errOut)
	}
	reg.mu.Lock()
	reg.fault = nil
	reg.mu.Unlock()
	code, out, errOut = sync("--allow-loopback")
	if code != 0 || !strings.Contains(errOut, "resuming the sync started") || !strings.Contains(out, "2 pages, 15 servers read") || !strings.Contains(out, "0 entries added") {
		t.Fatalf("resumed sync: exit %d\n%s%s", code, out, errOut)
	}
	if _, list2, _ := probity(t, env, "targets", "list", "--data-dir", dataDir); list2 != list {
		t.Errorf("a refused page and its resumption changed the entries:\n%s\nwant\n%s", list2, list)
	}

	// Usage errors.
	for _, args := range [][]string{{"registry"}, {"registry", "pull"}, {"registry", "sync", "extra"}, {"registry", "sync", "--url", "ftp://x"}} {
		if code, out, errOut := probity(t, env, append(args, "--data-dir", dataDir)...); code != 2 {
			t.Errorf("%q: exit %d\n%s%s", args, code, out, errOut)
		}
	}
}

// TestServeSyncsRegistry: serve --registry-url syncs the registry at start (one entry
// per server) as its periodic job, beside the rounds.
func TestServeSyncsRegistry(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	_, base := newCLIRegistry(t, 4)
	dataDir := filepath.Join(t.TempDir(), "data")
	env := []string{"DATABASE_URL=", "PROBITY_KEY_DIR="}
	cmd := exec.Command(probityBinary(t), "serve", "--allow-loopback", "--data-dir", dataDir, "--listen", "",
		"--registry-url", base, "--tick", "1s", "--poll", "100ms")
	cmd.Env = append(os.Environ(), env...)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Error("serve did not stop within 30 s")
		}
	}()
	deadline := time.Now().Add(60 * time.Second)
	for {
		code, out, _ := probity(t, env, "targets", "list", "--data-dir", dataDir)
		if code == 0 && strings.Count(out, "io.github.probity-test/cli-") == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s serve has not synced the 4 servers:\n%s\n%s", out, tail(stderr.String(), 2000))
		}
		time.Sleep(300 * time.Millisecond)
	}
}
