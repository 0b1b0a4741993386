package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/probity-dev/probity/checks/fixtures"
	"github.com/probity-dev/probity/claims"
	"github.com/probity-dev/probity/export"
)

// syncBuffer is a bytes.Buffer a child process writes to while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// demoRun is a running `probity demo`.
type demoRun struct {
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	done           chan error
}

// startDemo runs `probity demo` and waits until it has printed its guide (after the
// second round) and its directory answers.
func startDemo(t *testing.T, env []string, dataDir, listen, fixturesAddr string) *demoRun {
	t.Helper()
	d := &demoRun{stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan error, 1)}
	d.cmd = exec.Command(probityBinary(t), "demo", "--data-dir", dataDir, "--listen", listen, "--fixtures", fixturesAddr)
	d.cmd.Env = append(os.Environ(), env...)
	d.cmd.Stdout, d.cmd.Stderr = d.stdout, d.stderr
	start := time.Now()
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.done <- d.cmd.Wait() }()
	t.Cleanup(func() {
		if d.cmd.ProcessState == nil {
			d.cmd.Process.Kill()
			<-d.done
		}
	})
	for {
		code, _ := httpGet("http://" + listen + "/")
		if code == http.StatusOK && strings.Contains(d.stdout.String(), "Ctrl-C stops the demo") {
			break
		}
		select {
		case err := <-d.done:
			t.Fatalf("the demo exited early (%v)\n%s%s", err, d.stdout, d.stderr)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Since(start) > 60*time.Second {
			t.Fatalf("the demo was not up after 60 s\n%s%s", d.stdout, tail(d.stderr.String(), 2000))
		}
	}
	t.Logf("the demo was up after %v", time.Since(start).Round(time.Millisecond))
	return d
}

// interrupt sends SIGINT and expects exit status 0 within 10 s.
func (d *demoRun) interrupt(t *testing.T) {
	t.Helper()
	if err := d.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-d.done:
		if err != nil {
			t.Fatalf("after SIGINT the demo exited with %v\n%s", err, tail(d.stderr.String(), 2000))
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the demo did not stop within 10 s of SIGINT\n%s", tail(d.stderr.String(), 2000))
	}
}

func httpGet(url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	return resp.StatusCode, string(b)
}

// TestDemo runs `probity demo` twice on one data directory: the first run creates the
// key, the store and the entries, and publishes pages in which the drifting server's
// second round shows the drift; SIGINT stops it with status 0. The second run reuses the
// entries (same slugs, none added). Last, the export and verify commands the demo prints
// are run and must verify every envelope.
//
// The test does not wait for the confirmation round a minute after the second round,
// which records the drift as a change of tools: that rule is history's, tested with a
// fake clock (TestHistoryFromRounds and the rules tests in package history).
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dataDir := filepath.Join(t.TempDir(), "data")
	// The audit keeps its saved checkpoint in the user's config directory: a temporary one here.
	env := []string{"DATABASE_URL=", "PROBITY_KEY_DIR=", "XDG_CONFIG_HOME=" + t.TempDir()}
	listen, fixturesAddr := freeAddr(t), freeAddrPair(t)
	slug := slugOf(t, "https://"+nextPort(t, fixturesAddr)+"/drifting")

	d := startDemo(t, env, dataDir, listen, fixturesAddr)
	if !strings.Contains(d.stderr.String(), "notice: created a new signing key") {
		t.Errorf("the first run did not announce a new key:\n%s", d.stderr)
	}
	if !strings.Contains(d.stderr.String(), "entries: 11 added, 0 already listed") {
		t.Errorf("the first run did not add the 11 entries:\n%s", d.stderr)
	}
	site := "http://" + listen
	// The follower: its e-mails go to DATA-DIR/mail, and the site has sign-in.
	if want := "the follower follower@demo.probity.test follows " + slug + ": its e-mails arrive in " + filepath.Join(dataDir, "mail"); !strings.Contains(d.stdout.String(), want) {
		t.Errorf("the guide does not say %q:\n%s", want, d.stdout)
	}
	if code, body := httpGet(site + "/signin"); code != http.StatusOK || !strings.Contains(body, `action="/signin/code"`) {
		t.Errorf("GET /signin: %d %.300s", code, body)
	}
	for _, path := range []string{"/s/" + slug, "/s/" + slug + "/history", "/changes.xml", "/badge/" + slug + ".svg", "/.well-known/probity-keys.json"} {
		if code, body := httpGet(site + path); code != http.StatusOK {
			t.Errorf("GET %s: %d %.200s", path, code, body)
		}
		if !strings.Contains(d.stdout.String(), site+path) {
			t.Errorf("the guide does not name %s:\n%s", site+path, d.stdout)
		}
	}
	// The listed servers: a remote, a package and a repository linked as one entry,
	// read from the demo's source fixtures: one Verified, one not, with the reasons.
	var weather, notes string
	for line := range strings.Lines(d.stdout.String()) {
		switch {
		case strings.Contains(line, "dev.probity.demo/weather"):
			weather = line
		case strings.Contains(line, "dev.probity.demo/notes"):
			notes = line
		}
	}
	if !strings.Contains(weather, " Verified, score 100 of 100") {
		t.Errorf("the demo's Weather server is not Verified: %q\n%s", weather, d.stdout)
	}
	if !strings.Contains(notes, "not Verified") || !strings.Contains(d.stdout.String(), "a serious finding in the Hidden instructions check") ||
		!strings.Contains(d.stdout.String(), "package_repository: The package's metadata names github.com/someone-else/notes-fork") {
		t.Errorf("the demo's Notes server is not shown as not Verified with its reasons: %q\n%s", notes, d.stdout)
	}
	weatherSlug := slugOf(t, "https://"+nextPort(t, fixturesAddr)+"/healthy")
	if code, body := httpGet(site + "/s/" + weatherSlug + ".json"); code != http.StatusOK ||
		!strings.Contains(body, `"pkg:npm/%40probity-demo/weather-mcp"`) || !strings.Contains(body, "https://github.com/probity-demo/weather-mcp") {
		t.Errorf("GET /s/%s.json does not show the linked package and repository: %d %.600s", weatherSlug, code, body)
	}

	code, body := httpGet(site + "/s/" + slug + ".json")
	if code != http.StatusOK {
		t.Fatalf("GET /s/%s.json: %d %.300s", slug, code, body)
	}
	var entry struct {
		Slug  string `json:"slug"`
		Round struct {
			ToolCount int `json:"toolCount"`
		} `json:"round"`
		History struct {
			Changes []struct {
				Kind    string `json:"kind"`
				Summary string `json:"summary"`
			} `json:"changes"`
		} `json:"history"`
	}
	if err := json.Unmarshal([]byte(body), &entry); err != nil {
		t.Fatalf("the entry's JSON: %v\n%.300s", err, body)
	}
	if entry.Round.ToolCount != 3 {
		t.Errorf("the newest round of %s lists %d tools; after the drift it lists 3", slug, entry.Round.ToolCount)
	}
	if n := len(entry.History.Changes); n == 0 || entry.History.Changes[n-1].Kind != "baseline" {
		t.Errorf("the history of %s does not start with the baseline: %+v", slug, entry.History.Changes)
	}
	checkDemoMaintainer(t, d, site, slug)
	d.interrupt(t)

	d = startDemo(t, env, dataDir, listen, fixturesAddr)
	if strings.Contains(d.stderr.String(), "notice: created") {
		t.Errorf("the second run created a new key:\n%s", d.stderr)
	}
	if !strings.Contains(d.stderr.String(), "entries: 0 added, 11 already listed") {
		t.Errorf("the second run did not reuse the 11 entries:\n%s", d.stderr)
	}
	if !strings.Contains(d.stdout.String(), "/s/"+slug+"\n") {
		t.Errorf("the second run's guide names another slug than %s:\n%s", slug, d.stdout)
	}
	// The claim, the baseline and the dispute are found again, not made twice.
	for _, want := range []string{"claim: " + demoMaintainer + " maintains " + slug + " already",
		"baseline: " + slug + " has baseline 1 already", "dispute: " + slug + " has open dispute 1 already"} {
		if !strings.Contains(d.stderr.String(), want) {
			t.Errorf("the second run does not say %q:\n%s", want, d.stderr)
		}
	}
	checkDemoMaintainer(t, d, site, slug)
	// The demo's operator signs in with a code from the demo's mail sink and sees the
	// open dispute in the console.
	ops := demoSignIn(t, site, filepath.Join(dataDir, "mail"), demoOperator)
	if code, page := ops("/ops/disputes", nil); code != http.StatusOK || !strings.Contains(page, slug) || !strings.Contains(page, demoContested) {
		t.Errorf("GET /ops/disputes as the demo's operator: %d %.1500s", code, page)
	}
	maint := demoSignIn(t, site, filepath.Join(dataDir, "mail"), demoMaintainer)
	if code, page := maint("/s/"+slug+"/baseline", nil); code != http.StatusOK || !strings.Contains(page, "The newest round's tools differ from the approved baseline.") {
		t.Errorf("GET /s/%s/baseline as the demo's maintainer: %d %.1500s", slug, code, page)
	}
	if code, _ := ops("/s/"+slug+"/baseline", nil); code != http.StatusForbidden {
		t.Errorf("GET /s/%s/baseline as the demo's operator (no claim): %d, want 403", slug, code)
	}
	// The commands the guide prints, as printed, while the demo serves (the audit reads
	// its site): export, verify every record with its log proof and the built-in
	// witness's cosignature, and audit the whole log.
	var commands [][]string
	for line := range strings.Lines(d.stdout.String()) {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "probity" {
			commands = append(commands, f[1:])
		}
	}
	if len(commands) != 3 || commands[0][0] != "export" || commands[1][0] != "verify" || commands[2][0] != "log" {
		t.Fatalf("the guide's commands: %q", commands)
	}
	for _, args := range commands {
		code, out, errOut := probity(t, env, args...)
		if code != 0 {
			t.Fatalf("probity %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
		switch args[0] {
		case "export":
			var r, c, sup, k, other int
			if _, err := fmt.Sscanf(out, "exported %d round, %d change, %d supply and %d key document envelopes and %d others", &r, &c, &sup, &k, &other); err != nil ||
				!strings.Contains(out, fmt.Sprintf("(%d as bundles", r+c+sup+k+other)) {
				t.Errorf("not every record was exported as a bundle: %s (%v)", out, err)
			}
			// After two runs the ledger holds one baseline and one dispute of the
			// drifting server: the second run made neither again.
			var outDir string
			for i, a := range args {
				if a == "--out" && i+1 < len(args) {
					outDir = args[i+1]
				}
			}
			index, err := os.ReadFile(export.IndexName(outDir))
			if err != nil {
				t.Fatal(err)
			}
			kinds := map[string]int{}
			for line := range strings.Lines(string(index)) {
				if f := strings.Split(line, "\t"); len(f) > 2 && f[2] == slug {
					kinds[f[1]]++
				}
			}
			if kinds["baseline"] != 1 || kinds["dispute"] != 1 || other != 2 {
				t.Errorf("the ledger's records of %s: %v (want one baseline and one dispute; %d others in all)", slug, kinds, other)
			}
		case "verify":
			var total, verified, failed int
			if _, err := fmt.Sscanf(lastLine(out), "%d envelopes: %d verified, %d failed", &total, &verified, &failed); err != nil || failed != 0 || verified == 0 {
				t.Errorf("verify: %s (%v)", lastLine(out), err)
			}
		case "log":
			t.Logf("log audit:\n%s", out)
		}
	}
	d.interrupt(t)

	code, out, errOut := probity(t, env, "targets", "list", "--data-dir", dataDir)
	if code != 0 {
		t.Fatalf("targets list: exit %d\n%s%s", code, out, errOut)
	}
	if lines := strings.Count(strings.TrimSpace(out), "\n"); lines != 11 || strings.Contains(out, "-2 ") {
		t.Errorf("after two runs the store lists %d entries (want 11, none with a -2 slug):\n%s", lines, out)
	}
}

// checkDemoMaintainer checks the demo's claimed entry: claimed, its baseline approved
// (the three *_unchanged_vs_approved checks report the drift against it), the
// maintainer's listing in its history, and one open dispute of round 2, on its Checks
// tab and in its JSON; and the guide says where each is and how to sign in.
func checkDemoMaintainer(t *testing.T, d *demoRun, site, slug string) {
	t.Helper()
	if fixtures.DemoClaimPath != claims.WellKnownPath {
		t.Fatalf("the demo serves its claim token at %s, the claims read %s", fixtures.DemoClaimPath, claims.WellKnownPath)
	}
	guide := d.stdout.String()
	for _, want := range []string{site + "/s/" + slug + "/checks", site + "/ops/disputes", site + "/signin",
		demoMaintainer, demoOperator, "dispute 1, open"} {
		if !strings.Contains(guide, want) {
			t.Errorf("the guide does not say %q:\n%s", want, guide)
		}
	}
	if code, page := httpGet(site + "/s/" + slug); code != http.StatusOK || !strings.Contains(page, `class="state state-claimed">claimed<`) {
		t.Errorf("the entry page of %s does not say claimed: %d %.800s", slug, code, page)
	}
	code, body := httpGet(site + "/s/" + slug + ".json")
	var entry struct {
		Checks []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"checks"`
		History struct {
			Changes []struct {
				Kind    string `json:"kind"`
				Summary string `json:"summary"`
			} `json:"changes"`
		} `json:"history"`
		Operator struct {
			Description string `json:"description"`
		} `json:"operator"`
		Disputes []struct {
			Number    int64           `json:"number"`
			CheckID   string          `json:"checkId"`
			Statement string          `json:"statement"`
			Seq       int64           `json:"seq"`
			Outcome   json.RawMessage `json:"outcome"`
		} `json:"disputes"`
	}
	if code != http.StatusOK {
		t.Fatalf("GET /s/%s.json: %d %.300s", slug, code, body)
	}
	if err := json.Unmarshal([]byte(body), &entry); err != nil {
		t.Fatalf("the entry's JSON: %v", err)
	}
	approved := false
	for _, c := range entry.History.Changes {
		approved = approved || c.Summary == "new approved baseline"
	}
	if !approved || entry.Operator.Description != demoListing.Description {
		t.Errorf("the history of %s lacks the approved baseline or the listing: %+v %+v", slug, entry.History.Changes, entry.Operator)
	}
	if len(entry.Disputes) != 1 || entry.Disputes[0].CheckID != demoContested || entry.Disputes[0].Seq == 0 ||
		string(entry.Disputes[0].Outcome) != "null" || entry.Disputes[0].Statement != demoStatement {
		t.Errorf("the disputes of %s: %+v (want one open dispute of %s, in the log)", slug, entry.Disputes, demoContested)
	}
	code, page := httpGet(site + "/s/" + slug + "/checks")
	if code != http.StatusOK || !strings.Contains(page, "Dispute 1") {
		t.Errorf("the Checks tab of %s does not show the dispute: %d %.800s", slug, code, page)
	}
	code, body = httpGet(site + "/s/" + slug + "/checks.json")
	for _, id := range []string{"toolset_unchanged_vs_approved", "schema_unchanged_vs_approved", "surface_unchanged_vs_approved"} {
		if code != http.StatusOK || !regexp.MustCompile(`"id":\s*"`+id+`",[^}]*"status":\s*"FAILED"`).MatchString(body) {
			t.Errorf("%s of %s is not FAILED against the approved baseline: %d", id, slug, code)
		}
	}
}

// demoSignIn signs in to the demo's site as email with a code from the demo's mail
// sink (mailDir) and returns a client of the session.
func demoSignIn(t *testing.T, site, mailDir, email string) func(path string, form url.Values) (int, string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: 20 * time.Second}
	do := func(path string, form url.Values) (int, string) {
		var resp *http.Response
		var err error
		if form == nil {
			resp, err = client.Get(site + path)
		} else {
			resp, err = client.PostForm(site+path, form)
		}
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
		return resp.StatusCode, string(b)
	}
	field := func(page string) string {
		m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("no csrf field in %.800s", page)
		}
		return m[1]
	}
	seen := map[string]bool{}
	if old, err := os.ReadDir(mailDir); err == nil {
		for _, f := range old {
			seen[f.Name()] = true
		}
	}
	_, page := do("/signin", nil)
	if code, p := do("/signin/code", url.Values{"csrf": {field(page)}, "email": {email}}); code != http.StatusOK {
		t.Fatalf("POST /signin/code for %s: %d %.500s", email, code, p)
	}
	var code []byte
	for deadline := time.Now().Add(20 * time.Second); code == nil; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no sign-in code for %s arrived in %s", email, mailDir)
		}
		files, _ := os.ReadDir(mailDir)
		for _, f := range files {
			if seen[f.Name()] {
				continue
			}
			data, err := os.ReadFile(filepath.Join(mailDir, f.Name()))
			if err != nil || !bytes.Contains(data, []byte(email)) {
				continue
			}
			if m := regexp.MustCompile(`\b(\d{8})\b`).FindSubmatch(data); m != nil {
				code = m[1]
			}
		}
	}
	if c, p := do("/signin/verify", url.Values{"csrf": {field(page)}, "email": {email}, "code": {string(code)}}); c != http.StatusOK {
		t.Fatalf("POST /signin/verify for %s: %d %.500s", email, c, p)
	}
	return do
}

// freeAddrPair returns a loopback address whose port and the port after it are free:
// the demo serves its TLS endpoints on the next port.
func freeAddrPair(t *testing.T) string {
	t.Helper()
	for range 50 {
		a := freeAddr(t)
		ln, err := net.Listen("tcp", nextPort(t, a))
		if err == nil {
			ln.Close()
			return a
		}
	}
	t.Fatal("no two free ports in a row on 127.0.0.1")
	return ""
}

// nextPort is addr with the port after its own.
func nextPort(t *testing.T, addr string) string {
	t.Helper()
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return netip.AddrPortFrom(ap.Addr(), ap.Port()+1).String()
}
