package main

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/probity-dev/probity/checks/fixtures"
	"github.com/probity-dev/probity/mail/sink"
)

// TestServeAccounts runs `probity serve --accounts` with a real SMTP server on loopback
// (mail/sink) and walks the wired write paths over HTTP as a browser would: ask for a
// sign-in code, read it from the received e-mail, sign in, follow an entry, see it on
// the Followed page, and find the webhook key in the published key document.
func TestServeAccounts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	fleet, err := fixtures.StartFleet(fixtures.FleetConfig{N: 1, Seed: 47})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	mails, err := sink.Start("127.0.0.1:0", filepath.Join(dir, "mail"), sink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer mails.Close()
	env := []string{"DATABASE_URL=", "PROBITY_KEY_DIR="}
	if code, out, errOut := probity(t, env, "targets", "import", "--data-dir", dataDir, "--first-spread", "1s", writeTargets(t, dir, fleet)); code != 0 {
		t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
	}
	addr := freeAddr(t)
	cmd := exec.Command(probityBinary(t), "serve", "--allow-loopback", "--data-dir", dataDir, "--listen", addr, "--tick", "1s", "--poll", "100ms",
		"--accounts", "--smtp-host", mails.Host(), "--smtp-port", strconv.Itoa(mails.Port()), "--smtp-security", "none",
		"--smtp-from", "Probity test <notify@probity.test>")
	cmd.Env = append(os.Environ(), env...)
	stderr := &syncBuffer{} // read while serve writes it
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
	client := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	base := "http://" + addr
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := client.Get(base + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	post := func(path string, form url.Values) (int, string) {
		t.Helper()
		resp, err := client.PostForm(base+path, form)
		if err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	field := func(page string) string {
		t.Helper()
		m := csrf.FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("no csrf field in %.500s", page)
		}
		return m[1]
	}
	slug := slugOf(t, fleet.URL(0))
	deadline := time.Now().Add(60 * time.Second)
	for {
		if code, _ := get("/s/" + slug); code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not publish the entry within 60 s\n%s", tail(stderr.String(), 2000))
		}
		time.Sleep(200 * time.Millisecond)
	}

	// The key document lists the webhook key.
	if _, doc := get("/.well-known/probity-keys.json"); !strings.Contains(doc, `"webhook"`) || !strings.Contains(doc, "whpk_") {
		t.Errorf("the key document lists no webhook key: %.400s", doc)
	}

	// Sign in with a code from the e-mail.
	code, page := get("/signin?return=/s/" + slug)
	if code != 200 {
		t.Fatalf("GET /signin: %d %.300s", code, page)
	}
	if code, page = post("/signin/code", url.Values{"csrf": {field(page)}, "return": {"/s/" + slug}, "email": {"Follower@Example.org"}}); code != 200 {
		t.Fatalf("POST /signin/code: %d %.500s", code, page)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := mails.Wait(ctx, 1); err != nil {
		t.Fatalf("no sign-in e-mail arrived: %v\n%s", err, tail(stderr.String(), 2000))
	}
	msg := mails.Messages()[0]
	if len(msg.To) != 1 || !strings.EqualFold(msg.To[0], "Follower@Example.org") {
		t.Errorf("the code went to %v", msg.To)
	}
	m := regexp.MustCompile(`\b(\d{8})\b`).FindSubmatch(msg.Data)
	if m == nil {
		t.Fatalf("no 8-digit code in the e-mail:\n%s", msg.Data)
	}
	code, page = post("/signin/verify", url.Values{"csrf": {field(page)}, "return": {"/s/" + slug}, "email": {"Follower@Example.org"}, "code": {string(m[1])}})
	if code != 200 || !strings.Contains(page, "/unfollow") && !strings.Contains(page, `action="/s/`+slug+`/follow"`) {
		t.Fatalf("after the code, the entry page with its Follow button: %d %.800s", code, page)
	}

	// Follow, and the Followed page lists it.
	if code, page = post("/s/"+slug+"/follow", url.Values{"csrf": {field(page)}, "return": {"/s/" + slug}}); code != 200 || !strings.Contains(page, "You follow this entry") {
		t.Fatalf("POST follow: %d %.800s", code, page)
	}
	if code, page = get("/followed"); code != 200 || !strings.Contains(page, "/s/"+slug) {
		t.Errorf("GET /followed: %d, no link to the entry: %.800s", code, page)
	}
	// A cross-origin follow (another site's form) is refused.
	req, _ := http.NewRequest(http.MethodPost, base+"/s/"+slug+"/unfollow", strings.NewReader("csrf="+url.QueryEscape(field(page))))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "http://evil.example")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a cross-origin unfollow: %d, want 403", resp.StatusCode)
	}
	if _, page = get("/followed"); !strings.Contains(page, "/s/"+slug) {
		t.Error("the cross-origin unfollow took effect")
	}
	if strings.Contains(stderr.String(), string(m[1])) {
		t.Error("the sign-in code appears in serve's log")
	}
}

// TestWebhooksLoopbackOnlyOnLoopbackSites: --allow-loopback (for probing local mirrors)
// lets webhooks reach loopback only when the site itself is on loopback.
func TestWebhooksLoopbackOnlyOnLoopbackSites(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": true, "localhost": true, "LOCALHOST": true, "::1": true, "127.8.9.10": true,
		"probity.example": false, "10.0.0.1": false, "192.168.1.1": false, "": false, "localhost.example": false,
	} {
		if got := loopbackHost(host); got != want {
			t.Errorf("loopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}
