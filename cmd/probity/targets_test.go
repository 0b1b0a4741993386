package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/probity-dev/probity/store"
)

// TestTargetsRemove: `probity targets remove` asks first, keeps the entry unless told
// yes, deletes it with its history when told, records a tombstone with the reason, and
// says clearly when there is no such entry or the reason is not one line.
func TestTargetsRemove(t *testing.T) {
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	env := []string{"DATABASE_URL=", "PROBITY_KEY_DIR="}
	file := writeTargetURLs(t, dir, []string{"https://alpha.example.com/mcp", "https://beta.example.com/mcp"})
	if code, out, errOut := probity(t, env, "targets", "import", "--data-dir", dataDir, file); code != 0 {
		t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
	}
	slugs := func() string {
		t.Helper()
		code, out, errOut := probity(t, env, "targets", "list", "--data-dir", dataDir)
		if code != 0 {
			t.Fatalf("list: exit %d\n%s%s", code, out, errOut)
		}
		return out
	}
	before := slugs()
	var slug string
	for _, line := range strings.Split(before, "\n") {
		if strings.Contains(line, "alpha.example.com") {
			slug = strings.Fields(line)[0]
		}
	}
	if slug == "" {
		t.Fatalf("no alpha entry listed:\n%s", before)
	}

	// Declined at the prompt, or no answer at all: kept, exit 1.
	for _, answer := range []string{"n\n", "", "maybe\n"} {
		cmd := exec.Command(probityBinary(t), "targets", "remove", "--data-dir", dataDir, slug)
		cmd.Env = append(os.Environ(), env...)
		cmd.Stdin = strings.NewReader(answer)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Errorf("answer %q: %v, want exit 1\n%s%s", answer, err, stdout.String(), stderr.String())
		}
		if !strings.Contains(stdout.String(), "[y/N]") || !strings.Contains(stdout.String(), slug+" is kept") {
			t.Errorf("answer %q: output does not ask and say it kept the entry:\n%s", answer, stdout.String())
		}
	}
	if got := slugs(); got != before {
		t.Fatalf("a declined remove changed the list:\n%s\nwant\n%s", got, before)
	}

	// A reason that is not one line: refused, nothing deleted.
	if code, out, errOut := probity(t, env, "targets", "remove", "--data-dir", dataDir, "--yes", "--reason", "two\nlines", slug); code != 2 {
		t.Errorf("two-line reason: exit %d, want 2\n%s%s", code, out, errOut)
	}
	if got := slugs(); got != before {
		t.Fatalf("a refused remove changed the list:\n%s", got)
	}

	// --yes deletes it and records why.
	code, out, errOut := probity(t, env, "targets", "remove", "--data-dir", dataDir, "--yes", "--reason", "listed by mistake", slug)
	if code != 0 || !strings.Contains(out, "deleted "+slug) {
		t.Fatalf("remove --yes: exit %d\n%s%s", code, out, errOut)
	}
	after := slugs()
	if strings.Contains(after, slug) || !strings.Contains(after, "beta.example.com") {
		t.Errorf("after removing %s the list is:\n%s", slug, after)
	}
	st, err := store.Open(context.Background(), store.Config{SQLitePath: filepath.Join(dataDir, "probity.db")})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := st.Tombstones(context.Background(), 0)
	st.Close()
	if err != nil || len(ts) != 1 || ts[0].EntrySlug != slug || ts[0].Reason != "listed by mistake" {
		t.Errorf("tombstones = %+v, %v; want one for %s with its reason", ts, err, slug)
	}

	// Gone: a second remove says there is no such entry.
	code, _, errOut = probity(t, env, "targets", "remove", "--data-dir", dataDir, "--yes", slug)
	if code != 1 || !strings.Contains(errOut, "no entry") {
		t.Errorf("second remove: exit %d, want 1 with \"no entry\"\n%s", code, errOut)
	}
}

// TestTargetsImportServers: a server.json is one entry with all its parts; importing it
// again changes nothing, and a changed listing updates the entry (same slug, no history);
// a bare reference to one of its parts is that entry; a second server listing a part the
// first has is told which entry holds it.
func TestTargetsImportServers(t *testing.T) {
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	env := []string{"DATABASE_URL=", "PROBITY_KEY_DIR="}
	doc, err := os.ReadFile(filepath.Join("..", "..", "targets", "testdata", "good_server_packages.json"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	importFile := func(path string) (int, string, string) {
		return probity(t, env, "targets", "import", "--data-dir", dataDir, path)
	}
	list := func() string {
		t.Helper()
		code, out, errOut := probity(t, env, "targets", "list", "--data-dir", dataDir)
		if code != 0 {
			t.Fatalf("list: exit %d\n%s%s", code, out, errOut)
		}
		return out
	}

	// One document: one entry (npm first, then PyPI, the OCI image and the repository),
	// the package on a private registry reported (exit 1).
	first := write("server.json", string(doc))
	code, out, errOut := importFile(first)
	if code != 1 || !strings.Contains(out, "1 entry added, 0 updated, 0 already listed") || !strings.Contains(errOut, "only the public registry") {
		t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
	}
	l := list()
	if strings.Count(strings.TrimSpace(l), "\n") != 1 ||
		!regexpMatch(`npm-lumen-notes-mcp-server +npm +pkg:npm/%40lumen-notes/mcp-server +io\.github\.lumen-notes/notes-server +4 `, l) {
		t.Fatalf("list after import:\n%s", l)
	}

	// Again: nothing changes. With a new description: updated, same entry.
	if code, out, errOut := importFile(first); code != 1 || !strings.Contains(out, "0 entries added, 0 updated, 1 already listed") {
		t.Errorf("re-import: exit %d\n%s%s", code, out, errOut)
	}
	changed := write("changed.json", strings.Replace(string(doc), "Search and edit Markdown notes", "Search Markdown notes", 1))
	if code, out, errOut := importFile(changed); code != 1 || !strings.Contains(out, "0 entries added, 1 updated") {
		t.Errorf("changed listing: exit %d\n%s%s", code, out, errOut)
	}
	if got := list(); got != l {
		t.Errorf("the update changed the entry's row:\n%s\nwant\n%s", got, l)
	}

	// A bare reference to one of its parts is the same entry.
	if code, out, errOut := importFile(write("refs.txt", "pypi:lumen-notes-mcp\nhttps://github.com/lumen-notes/notes-server\n")); code != 0 ||
		!strings.Contains(out, "0 entries added, 0 updated, 2 already listed") {
		t.Errorf("bare references: exit %d\n%s%s", code, out, errOut)
	}

	// Another server listing its npm package: added with its own remote, told who holds
	// the package.
	fork := write("fork.json", `{"name":"io.github.someone/fork","remotes":[{"type":"streamable-http","url":"https://fork.example.com/mcp"}],`+
		`"packages":[{"registryType":"npm","identifier":"@lumen-notes/mcp-server","version":"1.0.0"}]}`)
	code, out, errOut = importFile(fork)
	if code != 0 || !strings.Contains(out, "1 entry added") || !strings.Contains(out, "1 part held by other entries") ||
		!strings.Contains(errOut, "line 1: npm:@lumen-notes/mcp-server is already part of entry npm-lumen-notes-mcp-server") {
		t.Errorf("fork: exit %d\n%s%s", code, out, errOut)
	}
	if l := list(); !regexpMatch(`fork-example-com-mcp +remote +https://fork\.example\.com/mcp +io\.github\.someone/fork +1 `, l) {
		t.Errorf("list:\n%s", l)
	}
}

func regexpMatch(pattern, s string) bool { return regexp.MustCompile(pattern).MatchString(s) }
