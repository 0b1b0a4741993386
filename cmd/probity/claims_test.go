package main

import (
	"context"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/probity-dev/probity/claims"
	"github.com/probity-dev/probity/mail/sink"
)

// TestServeClaims runs `probity serve --accounts` and claims an entry over HTTP as a
// browser would: sign in with a code from the e-mail, open the entry's Claim page,
// get a token for the well-known file, check before it is served (why not), serve
// it, check again: claimed, and the entry page says so without naming anyone. The
// token never appears in serve's log.
func TestServeClaims(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	var mu sync.Mutex
	body := ""
	origin := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		b := body
		mu.Unlock()
		if r.URL.Path != claims.WellKnownPath || b == "" {
			http.NotFound(w, r)
			return
		}
		_, _ = io.WriteString(w, b)
	}))
	defer origin.Close()
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	mails, err := sink.Start("127.0.0.1:0", filepath.Join(dir, "mail"), sink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer mails.Close()
	env := []string{"DATABASE_URL=", "PROBITY_KEY_DIR=", "GITHUB_TOKEN="}
	// The well-known file is a proof over https only: serve trusts the origin's
	// certificate (--ca-file).
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: origin.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	target := origin.URL + "/mcp"
	if code, out, errOut := probity(t, env, "targets", "import", "--data-dir", dataDir, writeTargetURLs(t, dir, []string{target})); code != 0 {
		t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
	}
	addr := freeAddr(t)
	cmd := exec.Command(probityBinary(t), "serve", "--allow-loopback", "--data-dir", dataDir, "--listen", addr, "--tick", "1s", "--poll", "100ms",
		"--accounts", "--smtp-host", mails.Host(), "--smtp-port", strconv.Itoa(mails.Port()), "--smtp-security", "none",
		"--smtp-from", "Probity test <notify@probity.test>", "--claim-recheck", "24h", "--ca-file", caFile)
	cmd.Env = append(os.Environ(), env...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve exited with %v\n%s", err, tail(stderr.String(), 2000))
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Error("serve did not stop within 30 s")
		}
	}()
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: 20 * time.Second}
	base := "http://" + addr
	do := func(path string, form url.Values) (int, string) {
		t.Helper()
		var resp *http.Response
		var err error
		if form == nil {
			resp, err = client.Get(base + path)
		} else {
			resp, err = client.PostForm(base+path, form)
		}
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	field := func(name, page string) string {
		t.Helper()
		m := regexp.MustCompile(`name="` + name + `" value="([^"]+)"`).FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("no %s field in %.800s", name, page)
		}
		return m[1]
	}
	slug := slugOf(t, target)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if code, _ := do("/s/"+slug, nil); code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not publish the entry within 60 s\n%s", tail(stderr.String(), 2000))
		}
		time.Sleep(200 * time.Millisecond)
	}

	// Sign in, coming back to the Claim page.
	claim := "/s/" + slug + "/claim"
	code, page := do("/signin?return="+url.QueryEscape(claim), nil)
	if code != 200 {
		t.Fatalf("GET /signin: %d", code)
	}
	if code, page = do("/signin/code", url.Values{"csrf": {field("csrf", page)}, "return": {claim}, "email": {"maintainer@example.org"}}); code != 200 {
		t.Fatalf("POST /signin/code: %d %.500s", code, page)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := mails.Wait(ctx, 1); err != nil {
		t.Fatalf("no sign-in e-mail arrived: %v", err)
	}
	m := regexp.MustCompile(`\b(\d{8})\b`).FindSubmatch(mails.Messages()[0].Data)
	if m == nil {
		t.Fatal("no code in the e-mail")
	}
	code, page = do("/signin/verify", url.Values{"csrf": {field("csrf", page)}, "return": {claim}, "email": {"maintainer@example.org"}, "code": {string(m[1])}})
	if code != 200 || !strings.Contains(page, "Get a token") {
		t.Fatalf("after the code, the Claim page: %d %.800s", code, page)
	}
	csrf := field("csrf", page)
	code, page = do(claim, url.Values{"csrf": {csrf}, "method": {claims.MethodWellKnown}, "target": {target}})
	if code != 200 {
		t.Fatalf("POST claim: %d %.800s", code, page)
	}
	token := field("token", page)
	if code, page = do(claim+"/check", url.Values{"csrf": {csrf}, "token": {token}}); code != http.StatusUnprocessableEntity || !strings.Contains(page, "HTTP 404") {
		t.Fatalf("check before serving the token: %d %.800s", code, page)
	}
	mu.Lock()
	body = token + "\n"
	mu.Unlock()
	// At once: the checks of a token are spaced (claims.CheckEvery); 429, Retry-After.
	if code, page = do(claim+"/check", url.Values{"csrf": {csrf}, "token": {token}}); code != http.StatusTooManyRequests || !strings.Contains(page, "Too many checks") {
		t.Fatalf("check at once: %d %.800s", code, page)
	}
	time.Sleep(claims.CheckEvery)
	if code, page = do(claim+"/check", url.Values{"csrf": {csrf}, "token": {token}}); code != 200 || !strings.Contains(page, "You are a maintainer") {
		t.Fatalf("check: %d %.800s", code, page)
	}
	if code, page = do("/s/"+slug, nil); code != 200 || !strings.Contains(page, "state-claimed") || strings.Contains(page, "maintainer@example.org") {
		t.Errorf("the claimed entry's page: %d %.800s", code, page)
	}
	if strings.Contains(stderr.String(), token) || strings.Contains(stderr.String(), token[len(claims.TokenPrefix):]) {
		t.Error("the claim token appears in serve's log")
	}
}
