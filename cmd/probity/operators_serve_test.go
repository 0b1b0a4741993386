package main

import (
	"context"
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
	"syscall"
	"testing"
	"time"

	"github.com/probity-dev/probity/mail/sink"
)

// TestServeOperators runs `probity serve --accounts` and uses the console as an
// operator would: signed in, the console is refused until `probity operators add`
// grants the role (from the command line, beside the running service); then the
// operator deletes an entry through the confirmation form, and the audit log shows
// the grant by "cli" and the deletion by the operator. The public pages never name
// the operator.
func TestServeOperators(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	origin := httptest.NewServer(http.NotFoundHandler())
	defer origin.Close()
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	mails, err := sink.Start("127.0.0.1:0", filepath.Join(dir, "mail"), sink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer mails.Close()
	env := []string{"DATABASE_URL=", "PROBITY_KEY_DIR=", "GITHUB_TOKEN="}
	target := origin.URL + "/mcp"
	if code, out, errOut := probity(t, env, "targets", "import", "--data-dir", dataDir, writeTargetURLs(t, dir, []string{target})); code != 0 {
		t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
	}
	addr := freeAddr(t)
	cmd := exec.Command(probityBinary(t), "serve", "--allow-loopback", "--data-dir", dataDir, "--listen", addr, "--tick", "1s", "--poll", "100ms",
		"--accounts", "--smtp-host", mails.Host(), "--smtp-port", strconv.Itoa(mails.Port()), "--smtp-security", "none",
		"--smtp-from", "Probity test <notify@probity.test>")
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

	// Anonymous: sign in first, coming back to the console.
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if code, _ := do("/ops", nil); code != http.StatusSeeOther {
		t.Fatalf("anonymous GET /ops: %d, want 303", code)
	}
	client.CheckRedirect = nil

	// Sign in with a code from the e-mail.
	const email = "operator@example.org"
	code, page := do("/signin?return=%2Fops", nil)
	if code != 200 {
		t.Fatalf("GET /signin: %d", code)
	}
	if code, page = do("/signin/code", url.Values{"csrf": {field("csrf", page)}, "return": {"/account"}, "email": {email}}); code != 200 {
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
	if code, page = do("/signin/verify", url.Values{"csrf": {field("csrf", page)}, "return": {"/account"}, "email": {email}, "code": {string(m[1])}}); code != 200 {
		t.Fatalf("after the code: %d %.800s", code, page)
	}
	if code, _ := do("/ops", nil); code != http.StatusForbidden {
		t.Fatalf("GET /ops before the role: %d, want 403", code)
	}

	// The role, from the command line beside the running service.
	if code, out, errOut := probity(t, env, "operators", "add", email, "--data-dir", dataDir); code != 0 || !strings.Contains(out, "is an operator now") {
		t.Fatalf("operators add: exit %d\n%s%s", code, out, errOut)
	}
	if code, page = do("/ops", nil); code != 200 || !strings.Contains(page, "Operator console") {
		t.Fatalf("GET /ops as an operator: %d %.800s", code, page)
	}
	code, page = do("/ops/entries/"+slug+"/delete", nil)
	if code != 200 {
		t.Fatalf("GET the deletion page: %d %.800s", code, page)
	}
	if code, page = do("/ops/entries/"+slug+"/delete", url.Values{"csrf": {field("csrf", page)}, "confirm": {slug}, "reason": {"listed by mistake"}}); code != 200 || !strings.Contains(page, "Deleted") {
		t.Fatalf("POST the deletion: %d %.800s", code, page)
	}
	if code, _ := do("/s/"+slug, nil); code != http.StatusNotFound {
		t.Errorf("the deleted entry's page: %d, want 404", code)
	}
	code, page = do("/ops/audit", nil)
	for _, want := range []string{"operator.add", "entry.delete", "listed by mistake", slug, ">cli<"} {
		if code != 200 || !strings.Contains(page, want) {
			t.Errorf("the audit log lacks %q: %d %.1500s", want, code, page)
		}
	}
	for _, path := range []string{"/", "/changes"} {
		if _, page := do(path, nil); strings.Contains(page, email) || strings.Contains(page, "/ops") {
			t.Errorf("%s names the operator or links the console", path)
		}
	}
}
