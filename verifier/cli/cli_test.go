package cli

import (
	"bytes"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/probity-dev/probity/keys"
)

const vectors = "../testdata/"

func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main("probity-verify", args, &out, &errb)
	return code, out.String(), errb.String()
}

func vector(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(vectors + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestExitCodes(t *testing.T) {
	keysFile := vectors + "keys.json"
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--keys", keysFile, vectors + "good_full.json"}, 0, "1 envelopes: 1 verified, 0 failed"},
		{[]string{"--keys", keysFile, vectors + "good_full.json", vectors + "bad_revoked_key__signed_before_revocation.json"}, 1, "FAIL  ../testdata/bad_revoked_key__signed_before_revocation.json  revoked_key"},
		{[]string{"--keys", keysFile, vectors}, 1, "34 envelopes: 7 verified, 27 failed"},
		{[]string{"--keys", keysFile}, 2, "no PATH"},
		{[]string{vectors + "good_full.json"}, 2, "exactly one of --keys and --pubkey"},
		{[]string{"--keys", keysFile, "--pubkey", "x", vectors + "good_full.json"}, 2, "exactly one of"},
		{[]string{"--keys", keysFile, vectors + "missing.json"}, 2, "missing.json"},
		{[]string{"--keys", vectors + "good_full.json", vectors + "good_full.json"}, 2, "key document"},
		{[]string{"--keys", keysFile, "--threshold", "0", vectors + "good_full.json"}, 2, "threshold"},
		{[]string{"--bogus"}, 2, "flag provided but not defined"},
		{[]string{"--keys", keysFile, t.TempDir()}, 2, "no envelopes found"},
	} {
		code, out, errs := run(t, tc.args...)
		if code != tc.code || !strings.Contains(out+errs, tc.want) {
			t.Errorf("%v: exit %d (want %d)\nstdout: %s\nstderr: %s\nwant text %q", tc.args, code, tc.code, out, errs, tc.want)
		}
	}
	if code, out, _ := run(t, "-h"); code != 0 || !strings.Contains(out, "Exit status") {
		t.Errorf("-h: %d %s", code, out)
	}
}

func TestJSONLExport(t *testing.T) {
	dir := t.TempDir()
	var b bytes.Buffer
	b.Write(vector(t, "good_full.json"))
	b.WriteString("\n   \n")
	b.WriteString("not json at all\n")
	b.Write(vector(t, "good_two_keys.json"))
	b.WriteString(strings.Repeat("x", 4<<20+10) + "\n") // over-long line
	b.Write(vector(t, "bad_bad_signature__tampered_payload.json"))
	path := filepath.Join(dir, "export.jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, "--json", "--keys", vectors+"keys.json", path)
	if code != 1 {
		t.Fatalf("exit %d, stderr %s", code, errs)
	}
	var rep struct {
		Results []struct {
			Source string `json:"source"`
			OK     bool   `json:"ok"`
			Error  string `json:"error"`
		} `json:"results"`
		Summary struct{ Total, Verified, Failed int } `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json output is not JSON: %v\n%s", err, out)
	}
	want := []struct {
		line string
		ok   bool
	}{{":1", true}, {":4", false}, {":5", true}, {":6", false}, {":7", false}}
	if len(rep.Results) != len(want) || rep.Summary.Total != 5 || rep.Summary.Verified != 2 || rep.Summary.Failed != 3 {
		t.Fatalf("report: %+v", rep)
	}
	for i, w := range want {
		if !strings.HasSuffix(rep.Results[i].Source, w.line) || rep.Results[i].OK != w.ok {
			t.Errorf("result %d: %+v, want line %s ok=%v", i, rep.Results[i], w.line, w.ok)
		}
	}
	if !strings.Contains(rep.Results[3].Error, "longer than") {
		t.Errorf("over-long line: %s", rep.Results[3].Error)
	}
}

func TestPubkey(t *testing.T) {
	doc, err := keys.Load(vectors + "keys.json")
	if err != nil {
		t.Fatal(err)
	}
	k, _ := doc.Lookup("11e967d4104ef56c")
	der, _ := x509.MarshalPKIXPublicKey(k.PublicKey())
	b64 := base64.StdEncoding.EncodeToString(der)
	pemFile := filepath.Join(t.TempDir(), "pub.pem")
	os.WriteFile(pemFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o644)
	for _, arg := range []string{b64, pemFile} {
		if code, out, errs := run(t, "--pubkey", arg, vectors+"good_full.json"); code != 0 {
			t.Errorf("--pubkey %s: exit %d\n%s%s", arg, code, out, errs)
		}
		// A key without a document has no window and no revocation, but still refuses
		// envelopes it did not sign.
		if code, _, _ := run(t, "--pubkey", arg, vectors+"good_retired_key_in_window.json"); code != 1 {
			t.Errorf("--pubkey %s accepted another key's envelope", arg)
		}
	}
	if code, _, errs := run(t, "--pubkey", "bm90IGEga2V5", vectors+"good_full.json"); code != 2 || !strings.Contains(errs, "SPKI") {
		t.Errorf("bad --pubkey: %d %s", code, errs)
	}
}

func TestQuietAndStdin(t *testing.T) {
	old := os.Stdin
	defer func() { os.Stdin = old }()
	r, w, _ := os.Pipe()
	os.Stdin = r
	go func() {
		w.Write(vector(t, "good_full.json"))
		w.Write(vector(t, "bad_unknown_key__unlisted_signer.json"))
		w.Close()
	}()
	code, out, _ := run(t, "-q", "--keys", vectors+"keys.json", "-")
	if code != 1 || strings.Contains(out, "OK ") || !strings.Contains(out, "FAIL  -:2  unknown_key") {
		t.Errorf("quiet stdin: %d\n%s", code, out)
	}
}
