package main

import (
	"context"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/http/httputil"
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

	"github.com/probity-dev/probity/checks/fixtures"
	"github.com/probity-dev/probity/claims"
	"github.com/probity-dev/probity/mail/sink"
)

// TestServeListing runs `probity serve --accounts --recheck-interval 2m` with a local
// MCP server behind an origin that also serves a claim token: a browser signs in,
// claims the entry, edits its listing (on the entry page as the server's operator's
// text, in the history as an edit by the operator, never naming who), and asks for a
// re-check: the manual round is on the entry page within a minute, and a second
// re-check is 429 with Retry-After.
func TestServeListing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	fleet, err := fixtures.StartFleet(fixtures.FleetConfig{N: 1, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	fleetURL, err := url.Parse(fleet.URL(0))
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: fleetURL.Scheme, Host: fleetURL.Host})
	var mu sync.Mutex
	body := ""
	// The well-known file is a proof over https only: the origin is a TLS server whose
	// certificate serve trusts (--ca-file), for the claim and the rounds alike.
	origin := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == claims.WellKnownPath {
			mu.Lock()
			b := body
			mu.Unlock()
			if b == "" {
				http.NotFound(w, r)
				return
			}
			_, _ = io.WriteString(w, b)
			return
		}
		proxy.ServeHTTP(w, r)
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
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: origin.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	target := origin.URL + fleetURL.Path
	if code, out, errOut := probity(t, env, "targets", "import", "--data-dir", dataDir, writeTargetURLs(t, dir, []string{target})); code != 0 {
		t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
	}
	addr := freeAddr(t)
	cmd := exec.Command(probityBinary(t), "serve", "--allow-loopback", "--data-dir", dataDir, "--listen", addr, "--tick", "1s", "--poll", "100ms",
		"--first-spread", "1h", "--accounts", "--smtp-host", mails.Host(), "--smtp-port", strconv.Itoa(mails.Port()), "--smtp-security", "none",
		"--smtp-from", "Probity test <notify@probity.test>", "--recheck-interval", "2m", "--ca-file", caFile)
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
	type answer struct {
		code int
		page string
		h    http.Header
	}
	do := func(path string, form url.Values) answer {
		t.Helper()
		var resp *http.Response
		var err error
		if form == nil {
			resp, err = client.Get(base + path)
		} else {
			resp, err = client.PostForm(base+path, form)
		}
		if err != nil {
			return answer{page: err.Error()}
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return answer{resp.StatusCode, string(b), resp.Header}
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
	for deadline := time.Now().Add(60 * time.Second); do("/s/"+slug, nil).code != 200; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("serve did not publish the entry within 60 s\n%s", tail(stderr.String(), 2000))
		}
	}

	// Sign in, coming back to the edit page: not a maintainer yet.
	edit := "/s/" + slug + "/edit"
	a := do("/signin?return="+url.QueryEscape(edit), nil)
	if a.code != 200 {
		t.Fatalf("GET /signin: %d", a.code)
	}
	signin := field("csrf", a.page)
	if a = do("/signin/code", url.Values{"csrf": {signin}, "return": {edit}, "email": {"maintainer@example.org"}}); a.code != 200 {
		t.Fatalf("POST /signin/code: %d %.500s", a.code, a.page)
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
	if a = do("/signin/verify", url.Values{"csrf": {signin}, "return": {edit}, "email": {"maintainer@example.org"}, "code": {string(m[1])}}); a.code != http.StatusForbidden || !strings.Contains(a.page, "Claim this entry") {
		t.Fatalf("the edit page before claiming: %d %.800s", a.code, a.page)
	}

	// Claim the entry with the well-known file.
	claim := "/s/" + slug + "/claim"
	a = do(claim, nil)
	csrf := field("csrf", a.page)
	if a = do(claim, url.Values{"csrf": {csrf}, "method": {claims.MethodWellKnown}, "target": {target}}); a.code != 200 {
		t.Fatalf("POST claim: %d %.800s", a.code, a.page)
	}
	token := field("token", a.page)
	mu.Lock()
	body = token + "\n"
	mu.Unlock()
	if a = do(claim+"/check", url.Values{"csrf": {csrf}, "token": {token}}); a.code != 200 {
		t.Fatalf("check: %d %.800s", a.code, a.page)
	}

	// Edit the listing.
	if a = do(edit, nil); a.code != 200 || !strings.Contains(a.page, `name="description"`) {
		t.Fatalf("GET edit: %d %.800s", a.code, a.page)
	}
	if a = do(edit, url.Values{"csrf": {csrf}, "description": {"Operated by us <b>since 2026</b>."}, "setup_notes": {"private setup"},
		"link_label_1": {"Docs"}, "link_url_1": {"https://docs.example/"}}); a.code != 200 || !strings.Contains(a.page, "Listing saved") {
		t.Fatalf("POST edit: %d %.800s", a.code, a.page)
	}
	page := do("/s/"+slug, nil).page
	if !strings.Contains(page, "Operated by us &lt;b&gt;since 2026&lt;/b&gt;.") || !strings.Contains(page, `rel="nofollow ugc noopener"`) || strings.Contains(page, "maintainer@example.org") {
		t.Errorf("the entry page after the edit: %.2000s", page)
	}
	hist := do("/s/"+slug+"/history", nil).page
	if !strings.Contains(hist, "description edited by the operator") || strings.Contains(hist, "private setup") || strings.Contains(hist, "maintainer@example.org") {
		t.Errorf("the history after the edit: %.2000s", hist)
	}

	// Re-check now: the manual round is on the page within a minute.
	asked := time.Now()
	if a = do("/s/"+slug+"/recheck", url.Values{"csrf": {csrf}}); a.code != http.StatusAccepted {
		t.Fatalf("POST recheck: %d %.800s", a.code, a.page)
	}
	manual := regexp.MustCompile(`Newest round: <code>r\d{8}T\d{9}Z-e\d+</code>`)
	for !manual.MatchString(do("/s/"+slug, nil).page) {
		if time.Since(asked) > time.Minute {
			t.Fatalf("no manual round on the entry page a minute after the re-check\n%s", tail(stderr.String(), 2000))
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Logf("the re-check's round was on the page %v after it was asked for", time.Since(asked).Round(time.Millisecond))
	if a = do("/s/"+slug+"/recheck", url.Values{"csrf": {csrf}}); a.code != http.StatusTooManyRequests || a.h.Get("Retry-After") == "" {
		t.Errorf("a second re-check: %d, Retry-After %q", a.code, a.h.Get("Retry-After"))
	}
}

// TestRecheckIntervalFlag: --recheck-interval takes 1m to 24h.
func TestRecheckIntervalFlag(t *testing.T) {
	for d, ok := range map[time.Duration]bool{59 * time.Second: false, time.Minute: true, 10 * time.Minute: true, 24 * time.Hour: true, 25 * time.Hour: false} {
		if err := (&listingFlags{recheck: d}).check(); (err == nil) != ok {
			t.Errorf("--recheck-interval %v: %v", d, err)
		}
	}
}
