package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestFingerprintCommand(t *testing.T) {
	code, out, errs := runCmd(t, "fingerprint", "../../examples/tools-list.json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 {
		t.Fatalf("want 4 lines, got %q", out)
	}
	for i, name := range []string{"toolset", "schema", "surface", "instructions"} {
		if !strings.HasPrefix(lines[i], name+" sha256:") || len(lines[i]) != len(name)+1+7+64 {
			t.Errorf("line %d: %q", i, lines[i])
		}
	}
	// The bare tools array gives the same fingerprints as the JSON-RPC response.
	dir := t.TempDir()
	bare := filepath.Join(dir, "bare.json")
	os.WriteFile(bare, []byte(`[{"name":"get_item","description":"Fetch one item by id.","inputSchema":{"required":["id"],"type":"object","properties":{"id":{"type":"integer"}}}},
		{"name":"search","title":"Search","description":"Search the catalog.","inputSchema":{"type":"object","properties":{"q":{"type":"string","description":"Query text"}},"required":["q"]},"annotations":{"readOnlyHint":true}}]`), 0o644)
	if _, out2, _ := runCmd(t, "fingerprint", bare); out2 != out {
		t.Errorf("bare array:\n%s\nJSON-RPC response:\n%s", out2, out)
	}
	if code, out, _ := runCmd(t, "fingerprint", "--json", bare); code != 0 || !strings.HasPrefix(out, `{"toolset":"sha256:`) {
		t.Errorf("--json: %d %s", code, out)
	}
}

func TestFingerprintCanonical(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.json")
	os.WriteFile(in, []byte("{ \"b\": [1.0, 1e2, \"A\u030a\"],\n \"a\": -0 }\n"), 0o644)
	code, out, errs := runCmd(t, "fingerprint", "--canonical", in)
	if code != 0 || out != `{"a":0,"b":[1,100,"Å"]}` {
		t.Errorf("exit %d, out %q, err %s", code, out, errs)
	}
	os.WriteFile(in, []byte(`{"a":1,"a":2}`), 0o644)
	if code, out, errs := runCmd(t, "fingerprint", "--canonical", in); code != 2 || out != "" || !strings.Contains(errs, "duplicate key") {
		t.Errorf("duplicate key: exit %d, out %q, err %s", code, out, errs)
	}
}

func TestFingerprintUsage(t *testing.T) {
	for _, args := range [][]string{{"fingerprint"}, {"fingerprint", "a", "b"}, {"fingerprint", "--json", "--canonical", "x"}, {"fingerprint", "/nonexistent"}} {
		if code, _, errs := runCmd(t, args...); code != 2 || !strings.HasPrefix(errs, "error: ") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
	}
	if code, out, _ := runCmd(t, "fingerprint", "-h"); code != 0 || !strings.Contains(out, "--canonical") {
		t.Errorf("-h: %d", code)
	}
}

func TestDispatch(t *testing.T) {
	if code, _, errs := runCmd(t, "frobnicate"); code != 2 || !strings.Contains(errs, "unknown command") {
		t.Errorf("unknown command: %d %s", code, errs)
	}
	if code, out, _ := runCmd(t, "help"); code != 0 || !strings.Contains(out, "verify") || !strings.Contains(out, "keys") {
		t.Errorf("help: %d %s", code, out)
	}
	if code, _, _ := runCmd(t); code != 2 {
		t.Errorf("no arguments: exit %d", code)
	}
	if code, out, _ := runCmd(t, "verify", "--keys", "../../examples/keys.json", "../../examples/envelopes.jsonl"); code != 0 || !strings.Contains(out, "6 verified, 0 failed") {
		t.Errorf("README main command: exit %d\n%s", code, out)
	}
}

func TestFingerprintStdin(t *testing.T) {
	old := os.Stdin
	defer func() { os.Stdin = old }()
	r, w, _ := os.Pipe()
	os.Stdin = r
	go func() {
		w.Write([]byte(`{"b":2,"a":[1.0]}`))
		w.Close()
	}()
	if code, out, errs := runCmd(t, "fingerprint", "--canonical", "-"); code != 0 || out != `{"a":[1],"b":2}` {
		t.Errorf("stdin: exit %d, out %q, err %s", code, out, errs)
	}
}
