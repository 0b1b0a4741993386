package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/keys"
)

// keysRun runs "probity keys args..." at the given time with deterministic key seeds.
func keysRun(t *testing.T, now time.Time, seed byte, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	c := &keysCLI{
		now:    func() time.Time { return now },
		rand:   bytes.NewReader(bytes.Repeat([]byte{seed}, 64)),
		stdout: &out,
		stderr: &errOut,
	}
	code = c.run(args)
	// Private key material never reaches the terminal.
	for _, s := range []string{out.String(), errOut.String()} {
		if strings.Contains(s, "PRIVATE KEY") || strings.Contains(s, "MC4CAQAwBQYDK2Vw") {
			t.Fatalf("output contains private key material:\n%s", s)
		}
	}
	return code, out.String(), errOut.String()
}

var (
	cliT0 = time.Date(2026, 8, 22, 0, 0, 0, 0, time.UTC)
	cliT1 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
)

func TestKeysHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}} {
		code, out, _ := keysRun(t, cliT0, 1, args...)
		if code != 0 {
			t.Fatalf("keys %v: exit %d", args, code)
		}
		for _, sub := range []string{"generate", "rotate", "revoke", "show"} {
			if !strings.Contains(out, "\t"+sub+" ") {
				t.Errorf("keys %v does not list %s:\n%s", args, sub, out)
			}
		}
	}
	for _, sub := range []string{"generate", "rotate", "revoke", "show"} {
		code, out, _ := keysRun(t, cliT0, 1, sub, "-h")
		if code != 0 || !strings.HasPrefix(out, "Usage: probity keys "+sub) {
			t.Errorf("keys %s -h: exit %d\n%s", sub, code, out)
		}
	}
	if _, out, _ := keysRun(t, cliT0, 1, "rotate", "-h"); !strings.Contains(out, "private key is deleted, not archived") {
		t.Errorf("rotate help does not say the old private key is deleted:\n%s", out)
	}
	if code, _, errOut := keysRun(t, cliT0, 1); code != 2 || !strings.Contains(errOut, "Usage: probity keys") {
		t.Errorf("keys without arguments: exit %d\n%s", code, errOut)
	}
}

func TestKeysUsageErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bogus"}, `error: unknown keys subcommand "bogus"`},
		{[]string{"generate"}, "error: --dir is required"},
		{[]string{"generate", "--dir"}, "error: flag needs an argument"},
		{[]string{"generate", "--nope"}, "error: flag provided but not defined: -nope"},
		{[]string{"generate", "--dir", dir, "extra"}, `error: unexpected argument "extra"`},
		{[]string{"rotate"}, "error: --dir is required"},
		{[]string{"revoke", "--dir", dir, "--reason", "x"}, "error: --key-id is required"},
		{[]string{"revoke", "--dir", dir, "--key-id", "0123456789abcdef"}, "error: --reason is required"},
		{[]string{"show"}, "error: --dir or --keys is required"},
		{[]string{"show", "--dir", dir, "--keys", "x"}, "error: give either --dir or --keys, not both"},
	} {
		code, _, errOut := keysRun(t, cliT0, 1, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "\nhint: ") {
			t.Errorf("keys %v: exit %d, stderr:\n%s\nwant %q and a hint", tc.args, code, errOut, tc.want)
		}
	}
}

func TestKeysLifecycle(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "k")
	keyPath, docPath := filepath.Join(dir, "signing-key.pem"), filepath.Join(dir, "keys.json")

	// generate
	code, out, errOut := keysRun(t, cliT0, 1, "generate", "--dir", dir)
	if code != 0 {
		t.Fatalf("generate: exit %d\n%s", code, errOut)
	}
	d, err := keys.Load(docPath)
	if err != nil {
		t.Fatal(err)
	}
	first := d.Keys[0].KeyID
	if d.Issuer != "https://probity.dev" || !strings.Contains(out, first) || !strings.Contains(out, keyPath) || !strings.Contains(out, docPath) {
		t.Fatalf("generate output:\n%s", out)
	}
	for path, want := range map[string]os.FileMode{keyPath: 0o600, docPath: 0o644} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
			t.Fatalf("%s: %v mode %v, want %04o", path, err, fi.Mode(), want)
		}
	}

	// generate again refuses, hinting at rotate.
	code, _, errOut = keysRun(t, cliT0, 2, "generate", "--dir", dir, "--issuer", "https://other.example")
	if code != 2 || !strings.Contains(errOut, "already exists") || !strings.Contains(errOut, "hint: to replace the signing key, run: probity keys rotate --dir "+dir) {
		t.Fatalf("second generate: exit %d\n%s", code, errOut)
	}

	// show
	code, out, _ = keysRun(t, cliT0, 1, "show", "--dir", dir)
	if code != 0 || !strings.Contains(out, "issuer: https://probity.dev") || !hasLine(out, first, "2026-08-22T00:00:00.000Z", "-", "active") {
		t.Fatalf("show: exit %d\n%s", code, out)
	}

	// rotate
	code, out, errOut = keysRun(t, cliT1, 2, "rotate", "--dir", dir)
	if code != 0 {
		t.Fatalf("rotate: exit %d\n%s", code, errOut)
	}
	d, _ = keys.Load(docPath)
	second := d.Keys[1].KeyID
	if len(d.Keys) != 2 || !strings.Contains(out, second) || !strings.Contains(out, "previous key: "+first+", valid until 2026-11-01T12:00:00.000Z") {
		t.Fatalf("rotate output:\n%s", out)
	}
	later := cliT1.Add(time.Hour)
	_, out, _ = keysRun(t, later, 1, "show", "--dir", dir)
	if !hasLine(out, first, "2026-08-22T00:00:00.000Z", "2026-11-01T12:00:00.000Z", "retired") ||
		!hasLine(out, second, "2026-11-01T12:00:00.000Z", "-", "active") {
		t.Fatalf("show after rotate:\n%s", out)
	}

	// revoke the retired key: no hint.
	code, out, errOut = keysRun(t, later, 1, "revoke", "--dir", dir, "--key-id", first, "--reason", "laptop stolen")
	if code != 0 || !strings.Contains(out, "revoked key "+first+" at 2026-11-01T13:00:00.000Z (reason: laptop stolen)") || errOut != "" {
		t.Fatalf("revoke: exit %d\n%s\n%s", code, out, errOut)
	}
	// revoke it again fails.
	if code, _, errOut = keysRun(t, later, 1, "revoke", "--dir", dir, "--key-id", first, "--reason", "x"); code != 2 || !strings.Contains(errOut, "already revoked") {
		t.Fatalf("second revoke: exit %d\n%s", code, errOut)
	}
	// The signing key cannot sign its own revocation (the next version of the key
	// document must be signed by a key that stays valid): rotate first.
	code, _, errOut = keysRun(t, later, 1, "revoke", "--dir", dir, "--key-id", second, "--reason", "compromised")
	if code != 2 || !strings.Contains(errOut, "rotate first (probity keys rotate), then revoke "+second) {
		t.Fatalf("revoke signing key: exit %d\n%s", code, errOut)
	}
	_, out, _ = keysRun(t, later, 1, "show", "--keys", docPath)
	if !hasLine(out, first, "2026-08-22T00:00:00.000Z", "2026-11-01T12:00:00.000Z", "revoked 2026-11-01T13:00:00.000Z: laptop stolen") ||
		!hasLine(out, second, "2026-11-01T12:00:00.000Z", "-", "active") {
		t.Fatalf("show after revoke:\n%s", out)
	}

	// show --json prints the document exactly as stored.
	code, out, _ = keysRun(t, later, 1, "show", "--dir", dir, "--json")
	stored, _ := os.ReadFile(docPath)
	if code != 0 || out != string(stored) {
		t.Fatalf("show --json: exit %d\n%s\nwant\n%s", code, out, stored)
	}

	// A world-readable private key is refused with a chmod hint.
	if err := os.Chmod(keyPath, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = keysRun(t, later.Add(time.Hour), 3, "rotate", "--dir", dir)
	if code != 2 || !strings.Contains(errOut, "readable by group or others (mode 0644); run: chmod 600") {
		t.Fatalf("rotate with a 0644 key: exit %d\n%s", code, errOut)
	}
}

func TestKeysShowInvalid(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.json")
	if err := os.WriteFile(path, []byte(`{"format_version":4,"issuer":"x","keys":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := keysRun(t, cliT0, 1, "show", "--keys", path)
	if code != 2 || out != "" || !strings.Contains(errOut, "error: couldn't load key document") || !strings.Contains(errOut, "format_version 4 is not supported") {
		t.Fatalf("show invalid: exit %d\n%s\n%s", code, out, errOut)
	}
}

// hasLine reports whether some line of out consists of exactly fields, in order,
// separated by white space.
func hasLine(out string, fields ...string) bool {
	want := strings.Join(strings.Fields(strings.Join(fields, " ")), " ")
	for _, line := range strings.Split(out, "\n") {
		if strings.Join(strings.Fields(line), " ") == want {
			return true
		}
	}
	return false
}
