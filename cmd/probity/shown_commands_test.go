package main

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"

	"github.com/probity-dev/probity/attest"
)

// The rule for the README: every line of a fenced code block whose info string is empty
// or sh, shell, bash or console is a command (a line ending in a backslash continues on
// the next; blank lines and lines starting with # are not commands). Its first word must
// be one of shownPrograms or a program in the current directory (./NAME), or the test fails: a new command is either run here or listed
// in shownSkipped with its reason.
var shownPrograms = map[string]bool{
	"go": true, "probity": true, "probity-verify": true, "mcpfleet": true, "curl": true,
	"git": true, "cd": true, "sha256sum": true,
}

// shownSkipped lists the README commands this test does not run, by prefix, each with
// its reason.
var shownSkipped = []struct{ prefix, reason string }{
	{"go test", "the test suite (this test is part of it) and its benchmarks: .ci/run runs the suite, and a benchmark's figure is measured, not asserted"},
	{"npm install", "it reaches the npm registry (tests are offline); .ci/run installs the same pinned axe-core before the suite"},
	{"PROBITY_AXE_JS=", "the browser tests, which are part of the suite (go test), with axe-core and screenshots"},
}

// shownSubstitutions are applied to every command before it runs; each says why.
var shownSubstitutions = []struct{ from, to, why string }{
	{"go run ./cmd/probity ", "probity ", "the binary built once from the same source, instead of compiling it again per line"},
	{"go run ./cmd/mcpfleet ", "mcpfleet ", "the binary built once from the same source"},
	{"http://127.0.0.1:8080", "$PROBITY_SITE", "the test's demo listens on a free loopback port"},
	{"https://github.com/probity-dev/probity.git", "$PROBITY_REPO", "the clone is made from this repository (offline)"},
	{"https://github.com/probity-dev/probity", "$PROBITY_REPO", "the clone is made from this repository (offline)"},
}

// shownInputs are files the README names as a command's input without a command that
// makes them ("probity-verify --keys probity-keys.json envelopes.jsonl"): the test puts
// them in the block's directory, from the running demo, before the block runs.
var shownInputs = []string{"probity-keys.json", "envelopes.jsonl", "statement.json", "tools-list.json"}

type shownCommand struct {
	source string // README.md:LINE or the page
	text   string
}

// readmeBlocks returns the commands of each shell block of a Markdown file.
func readmeBlocks(t *testing.T, path string) [][]shownCommand {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var blocks [][]shownCommand
	var cur []shownCommand
	in, shell := false, false
	cont := ""
	contLine := 0
	for i, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		if fence, ok := strings.CutPrefix(trimmed, "```"); ok {
			if !in {
				in = true
				switch strings.TrimSpace(fence) {
				case "", "sh", "shell", "bash", "console":
					shell = true
				default:
					shell = false
				}
				cur = nil
			} else {
				in = false
				if shell && len(cur) > 0 {
					blocks = append(blocks, cur)
				}
			}
			continue
		}
		if !in || !shell {
			continue
		}
		if cont == "" && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if cont == "" {
			contLine = i + 1
		}
		if body, ok := strings.CutSuffix(trimmed, "\\"); ok {
			cont += body + " "
			continue
		}
		cur = append(cur, shownCommand{source: fmt.Sprintf("%s:%d", filepath.Base(path), contLine), text: strings.Join(strings.Fields(cont+trimmed), " ")})
		cont = ""
	}
	return blocks
}

// pageCommands returns the commands of an HTML page: the text of every
// <code class="command"> element, unescaped, one command per line.
func pageCommands(page string) []shownCommand {
	var out []shownCommand
	tag := regexp.MustCompile(`<[^>]*>`)
	for i, m := range regexp.MustCompile(`(?s)<code class="command">(.*?)</code>`).FindAllStringSubmatch(page, -1) {
		text := html.UnescapeString(tag.ReplaceAllString(m[1], ""))
		cont := ""
		for line := range strings.Lines(text) {
			line = strings.TrimSpace(line)
			if body, ok := strings.CutSuffix(line, "\\"); ok {
				cont += body + " "
				continue
			}
			if line = strings.Join(strings.Fields(cont+line), " "); line != "" && !strings.HasPrefix(line, "#") {
				out = append(out, shownCommand{source: fmt.Sprintf("command block %d", i+1), text: line})
			}
			cont = ""
		}
	}
	return out
}

// stripComment drops a trailing " # comment" outside quotes.
func stripComment(s string) string {
	quote := rune(0)
	for i, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote == 0 && (r == '"' || r == '\''):
			quote = r
		case quote == 0 && r == '#' && i > 0 && (s[i-1] == ' ' || s[i-1] == '\t'):
			return strings.TrimSpace(s[:i])
		}
	}
	return s
}

// shownEnv is the environment every shown command runs in.
type shownEnv struct {
	bin, repo, site string
	env             []string
}

// localGoProxy writes a Go module proxy (the GOPROXY file layout) serving this module's
// working tree (tracked and untracked files that git does not ignore) as @latest, at a
// version named after the zip's digest, and returns the version and the environment that
// makes "go install github.com/probity-dev/probity/cmd/probity-verify@latest" run
// offline: this proxy first, then the module cache's download directory (which holds
// every dependency the build needs) as a second file proxy, no checksum database. The
// module cache is the usual one, so the dependencies are compiled already; what the
// install adds to it (this version) is removed when the test ends.
func localGoProxy(t *testing.T, repo, dir, bin string) (string, []string) {
	t.Helper()
	const modPath = "github.com/probity-dev/probity"
	out, err := exec.Command("git", "-C", repo, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	var files []modzip.File
	for name := range strings.SplitSeq(strings.TrimRight(string(out), "\x00"), "\x00") {
		if fi, err := os.Lstat(filepath.Join(repo, name)); err == nil && fi.Mode().IsRegular() {
			files = append(files, zipFile{repo, filepath.ToSlash(name)})
		}
	}
	// The zip's own digest names the version, so a changed tree is a new version.
	var zbuf bytes.Buffer
	if err := modzip.Create(&zbuf, module.Version{Path: modPath, Version: "v0.0.0-20261202000000-000000000000"}, files); err != nil {
		t.Fatalf("the module zip: %v", err)
	}
	version := "v0.0.0-20261202000000-" + attest.Digest(zbuf.Bytes())[len("sha256:"):][:12]
	zbuf.Reset()
	if err := modzip.Create(&zbuf, module.Version{Path: modPath, Version: version}, files); err != nil {
		t.Fatalf("the module zip: %v", err)
	}
	vdir := filepath.Join(dir, "proxy", modPath, "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(repo, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	info := fmt.Sprintf(`{"Version":%q,"Time":"2026-12-02T00:00:00Z"}`, version)
	for name, data := range map[string][]byte{
		filepath.Join(vdir, "list"):                     nil,
		filepath.Join(vdir, version+".info"):            []byte(info),
		filepath.Join(vdir, version+".mod"):             gomod,
		filepath.Join(vdir, version+".zip"):             zbuf.Bytes(),
		filepath.Join(dir, "proxy", modPath, "@latest"): []byte(info),
	} {
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gomodcache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOMODCACHE: %v", err)
	}
	modcache := strings.TrimSpace(string(gomodcache))
	download := filepath.Join(modcache, "cache", "download")
	ours := filepath.Join(download, modPath)
	_, statErr := os.Stat(ours)
	t.Cleanup(func() {
		os.RemoveAll(filepath.Join(modcache, modPath+"@"+version))
		if os.IsNotExist(statErr) {
			os.RemoveAll(ours)
			return
		}
		matches, _ := filepath.Glob(filepath.Join(ours, "@v", version+".*"))
		for _, m := range matches {
			os.Remove(m)
		}
	})
	return version, []string{
		"GOPROXY=file://" + filepath.ToSlash(filepath.Join(dir, "proxy")) + ",file://" + filepath.ToSlash(download),
		"GOSUMDB=off", "GONOSUMDB=*", "GONOSUMCHECK=1", "GOWORK=off", "GOTOOLCHAIN=local",
		"GOFLAGS=-modcacherw -buildvcs=false", "GOBIN=" + bin,
	}
}

// zipFile is one file of the module zip.
type zipFile struct{ root, name string }

func (f zipFile) Path() string                 { return f.name }
func (f zipFile) Lstat() (fs.FileInfo, error)  { return os.Lstat(filepath.Join(f.root, f.name)) }
func (f zipFile) Open() (io.ReadCloser, error) { return os.Open(filepath.Join(f.root, f.name)) }

// runShown runs one command with bash (pipefail) in dir and fails the test unless it
// exits 0. A command ending in & is started in the background and stopped when the test
// ends; the next command waits until it has printed its first lines.
func (e *shownEnv) runShown(t *testing.T, c shownCommand, dir string) {
	t.Helper()
	text := stripComment(c.text)
	background := false
	if body, ok := strings.CutSuffix(text, "&"); ok && !strings.HasSuffix(body, "&") {
		text, background = strings.TrimSpace(body), true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	cmd := exec.CommandContext(ctx, "bash", "-o", "pipefail", "-c", text)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), e.env...)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	start := time.Now()
	if background {
		if err := cmd.Start(); err != nil {
			t.Fatalf("%s: %s: %v", c.source, text, err)
		}
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		t.Cleanup(func() { cancel(); <-done })
		// Wait for its first lines and then for a quiet moment.
		last, quietSince := "", time.Now()
		for time.Since(start) < 30*time.Second {
			select {
			case <-done:
				t.Fatalf("%s: the background command %s exited early:\n%s", c.source, text, out)
			case <-time.After(100 * time.Millisecond):
			}
			if s := out.String(); s != last {
				last, quietSince = s, time.Now()
			} else if s != "" && time.Since(quietSince) > 500*time.Millisecond {
				break
			}
		}
		t.Logf("%s: started in the background: %s\n%s", c.source, text, out)
		return
	}
	defer cancel()
	err := cmd.Run()
	t.Logf("%s: %s (%v)\n%s", c.source, text, time.Since(start).Round(time.Millisecond), tail(out.String(), 1500))
	if err != nil {
		t.Fatalf("%s: %s: %v\n%s", c.source, text, err, tail(out.String(), 4000))
	}
}

// prepared reports what a command is: skipped (with the reason), the demo (which the
// test runs itself), or to run (with the substitutions applied).
func (e *shownEnv) prepare(t *testing.T, c shownCommand) (run shownCommand, skip string, demo bool) {
	t.Helper()
	text := c.text
	for _, s := range shownSkipped {
		if strings.HasPrefix(text, s.prefix) {
			return c, s.reason, false
		}
	}
	for _, s := range shownSubstitutions {
		text = strings.ReplaceAll(text, s.from, s.to)
	}
	if f := strings.Fields(text); f[0] == "probity" && len(f) > 1 && f[1] == "demo" {
		return c, "", true
	}
	if first := strings.Fields(text)[0]; !shownPrograms[first] && !strings.HasPrefix(first, "./") {
		t.Errorf("%s: %q is neither run by this test nor listed as skipped (shownPrograms, shownSkipped)", c.source, c.text)
		return c, "unknown program", false
	}
	return shownCommand{c.source, text}, "", false
}

// TestShownCommands runs every command shown in the README and on an entry's Verify tab
// (/s/SLUG/verify), in order, as a reader would on a fresh machine: probity-verify comes
// from "go install …@latest" through a local module proxy that serves this working tree
// (offline), and the demo on loopback is the Probity site the commands download from.
// The README's blocks run one after another in the demo's directory (a clone of this
// repository, beside the demo's probity-data), as in one terminal, each block starting
// there; a block that runs a round of its own (probity round) runs in a clone of its own,
// so that its store is not the demo's. The Verify tab's commands run in an empty
// directory. Every command must exit 0; the rules, skips and substitutions are the
// variables above.
func TestShownCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries, runs the demo and every shown command")
	}
	for _, tool := range []string{"bash", "git", "curl", "sha256sum"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the shown commands need %s: %v", tool, err)
		}
	}
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	readme := os.Getenv("PROBITY_SHOWN_README") // another Markdown file to read, for proposed text
	if readme == "" {
		readme = filepath.Join(repo, "README.md")
	}
	start := time.Now()
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	// A copy: a shown "go install …/cmd/probity@latest" replaces it in bin.
	if b, err := os.ReadFile(probityBinary(t)); err != nil {
		t.Fatal(err)
	} else if err := os.WriteFile(filepath.Join(bin, "probity"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	// The repository under the name a clone of the GitHub URL has, so that
	// "git clone URL" makes the directory the README goes on with.
	named := filepath.Join(tmp, "github.com", "probity-dev", "probity")
	if err := os.MkdirAll(filepath.Dir(named), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(repo, named); err != nil {
		t.Fatal(err)
	}
	e := &shownEnv{bin: bin, repo: repo}
	version, goEnv := localGoProxy(t, repo, tmp, bin)
	e.env = append(goEnv,
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"PROBITY_REPO="+named, "DATABASE_URL=", "PROBITY_KEY_DIR=", "XDG_CONFIG_HOME="+filepath.Join(tmp, "config"))

	// The demo: the site the commands read, in a directory of its own.
	demoDir := filepath.Join(tmp, "demo")
	if out, err := exec.Command("git", "clone", "--quiet", repo, demoDir).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	listen, fixturesAddr := freeAddr(t), freeAddrPair(t)
	e.site = "http://" + listen
	e.env = append(e.env, "PROBITY_SITE="+e.site)
	d := startDemo(t, []string{"DATABASE_URL=", "PROBITY_KEY_DIR=", "XDG_CONFIG_HOME=" + filepath.Join(tmp, "config")}, filepath.Join(demoDir, "probity-data"), listen, fixturesAddr)
	defer d.interrupt(t)
	slug := slugOf(t, "https://"+nextPort(t, fixturesAddr)+"/drifting")

	blocks := readmeBlocks(t, readme)
	// probity-verify on PATH before the README's "go install" replaces it, for commands
	// shown before that line.
	for _, name := range []string{"probity-verify", "mcpfleet"} {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, name), filepath.Join(repo, "cmd", name)).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", name, err, out)
		}
	}

	ran, skipped := 0, 0
	for i, b := range blocks {
		dir := demoDir
		var text strings.Builder
		for _, c := range b {
			text.WriteString(c.text + "\n")
		}
		if strings.Contains(text.String(), "probity round ") {
			dir = filepath.Join(tmp, fmt.Sprintf("block-%d", i+1))
			if out, err := exec.Command("git", "clone", "--quiet", repo, dir).CombinedOutput(); err != nil {
				t.Fatalf("git clone: %v\n%s", err, out)
			}
		}
		e.prepareInputs(t, text.String(), dir, slug)
		for _, c := range b {
			run, skip, demo := e.prepare(t, c)
			switch {
			case demo:
				t.Logf("%s: %s: the demo this test runs (on %s)", c.source, c.text, e.site)
				ran++
				continue
			case skip != "":
				t.Logf("%s: %s: skipped: %s", c.source, c.text, skip)
				skipped++
				continue
			}
			if f := strings.Fields(run.text); f[0] == "cd" && len(f) == 2 {
				dir = filepath.Join(dir, f[1])
				continue
			}
			e.runShown(t, run, dir)
			ran++
			if strings.HasPrefix(run.text, "go install github.com/probity-dev/probity/") {
				out, err := exec.Command("go", "version", "-m", filepath.Join(bin, "probity-verify")).CombinedOutput()
				if err != nil || !strings.Contains(string(out), version) {
					t.Errorf("go install did not install probity-verify from the local proxy: %v\n%s", err, out)
				}
			}
		}
	}
	t.Logf("README: %d commands ran, %d skipped (%v so far)", ran, skipped, time.Since(start).Round(time.Millisecond))

	t.Run("VerifyTab", func(t *testing.T) {
		code, page := httpGet(e.site + "/s/" + slug + "/verify")
		if code != http.StatusOK {
			t.Fatalf("GET /s/%s/verify: %d %.300s", slug, code, page)
		}
		cmds := pageCommands(page)
		var all strings.Builder
		for _, c := range cmds {
			all.WriteString(c.text + "\n")
		}
		if !strings.Contains(all.String(), e.site) || !strings.Contains(all.String(), "probity-verify ") || !strings.Contains(all.String(), "curl ") {
			t.Errorf("the Verify tab's commands do not download from %s and verify with probity-verify:\n%s", e.site, all.String())
		}
		dir := filepath.Join(tmp, "page")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, c := range cmds {
			run, skip, demo := e.prepare(t, c)
			if skip != "" || demo {
				t.Errorf("%s: the Verify tab shows %q, which a reader cannot run as shown", c.source, c.text)
				continue
			}
			if f := strings.Fields(run.text); f[0] == "cd" && len(f) == 2 {
				dir = filepath.Join(dir, f[1])
				continue
			}
			e.runShown(t, run, dir)
		}
		t.Logf("the Verify tab: %d commands ran", len(cmds))
	})
	t.Logf("every shown command ran in %v", time.Since(start).Round(time.Millisecond))
}

// prepareInputs puts the shownInputs a block names, and no command of it makes, into
// dir, from the demo.
func (e *shownEnv) prepareInputs(t *testing.T, block, dir, slug string) {
	t.Helper()
	for _, name := range shownInputs {
		if !regexp.MustCompile(`(^|\s)`+regexp.QuoteMeta(name)+`(\s|$)`).MatchString(block) ||
			regexp.MustCompile(`(>|-o)\s*`+regexp.QuoteMeta(name)+`(\s|$)`).MatchString(block) {
			continue
		}
		var data []byte
		switch name {
		case "probity-keys.json":
			data = e.get(t, "/.well-known/probity-keys.json")
		case "envelopes.jsonl":
			data = e.get(t, "/s/"+slug+"/envelopes.jsonl")
		case "statement.json":
			line, _, _ := bytes.Cut(e.get(t, "/s/"+slug+"/envelopes.jsonl"), []byte("\n"))
			_, payload, err := attest.ParseEnvelope(line)
			if err != nil {
				t.Fatalf("the demo's first envelope: %v", err)
			}
			data = payload
		case "tools-list.json":
			var err error
			if data, err = os.ReadFile(filepath.Join(e.repo, "examples", "tools-list.json")); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: prepared from the demo for the README's commands", name)
	}
}

func (e *shownEnv) get(t *testing.T, path string) []byte {
	t.Helper()
	resp, err := http.Get(e.site + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
	}
	return b
}

// TestShownCommandRules: the README's blocks are read as the rule says (continuations,
// comments, fences), and a page's command blocks are unescaped.
func TestShownCommandRules(t *testing.T) {
	md := filepath.Join(t.TempDir(), "r.md")
	writeFile(t, md, []byte("text\n```sh\n# a comment\ngo run ./cmd/probity demo\nprobity-verify --keys k.json \\\n    x.jsonl\n```\n```json\n{\"not\": \"a command\"}\n```\n```\nmcpfleet --n 2 &   # two servers\n```\n"))
	got := readmeBlocks(t, md)
	want := [][]string{{"go run ./cmd/probity demo", "probity-verify --keys k.json x.jsonl"}, {"mcpfleet --n 2 & # two servers"}}
	if len(got) != len(want) {
		t.Fatalf("blocks: %+v", got)
	}
	for i := range want {
		for j, w := range want[i] {
			if got[i][j].text != w {
				t.Errorf("block %d command %d: %q, want %q", i, j, got[i][j].text, w)
			}
		}
	}
	if s := stripComment(`mcpfleet --n 2 & # two servers`); s != "mcpfleet --n 2 &" {
		t.Errorf("stripComment: %q", s)
	}
	if s := stripComment(`probity log audit --witness-key "$(cat a#b)" x`); s != `probity log audit --witness-key "$(cat a#b)" x` {
		t.Errorf("stripComment inside quotes: %q", s)
	}
	page := `<pre><code class="command">curl -s http://127.0.0.1:1/x &gt; keys.json</code></pre><p>x</p><pre><code class="command">probity-verify --keys keys.json \
  a.jsonl
probity inspect keys.json</code></pre>`
	cmds := pageCommands(page)
	if len(cmds) != 3 || cmds[0].text != "curl -s http://127.0.0.1:1/x > keys.json" || cmds[1].text != "probity-verify --keys keys.json a.jsonl" || cmds[2].text != "probity inspect keys.json" {
		t.Errorf("page commands: %+v", cmds)
	}
}
