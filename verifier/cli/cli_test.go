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

const (
	vectors    = "../testdata/"
	logVectors = "../testdata/log/"
)

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
		{[]string{"--keys", keysFile, "--log-key", logVectors + "log.vkey", "--witness-key", logVectors + "witness-1.vkey", "--witness-key", logVectors + "witness-2.vkey", "--min-witnesses", "2", vectors}, 1, "53 envelopes: 14 verified, 39 failed"},
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

// TestBundles runs the log vectors (verifier/testdata/log) through the command: bundles
// verify with their inclusion proofs, checkpoints and witnesses, each bad one fails with
// the reason in its name, and the policy flags change the outcome.
func TestBundles(t *testing.T) {
	w1, w2 := logVectors+"witness-1.vkey", logVectors+"witness-2.vkey"
	witnesses := []string{"--witness-key", w1, "--witness-key", w2, "--min-witnesses", "2"}
	code, out, errs := run(t, append([]string{"--keys", logVectors + "keys.json"}, append(witnesses, logVectors)...)...)
	if code != 1 || !strings.Contains(out, "19 envelopes: 7 verified, 12 failed") {
		t.Fatalf("log vectors: exit %d\n%s%s", code, out, errs)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		name, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(line, "FAIL  "), "OK    "), " ")
		base := filepath.Base(name)
		switch {
		case strings.HasPrefix(line, "OK ") && strings.HasPrefix(base, "bad_"):
			t.Errorf("a bad vector passed: %s", line)
		case strings.HasPrefix(line, "FAIL ") && strings.HasPrefix(base, "bad_"):
			reason, _, _ := strings.Cut(strings.TrimPrefix(base, "bad_"), "__")
			if !strings.Contains(line, "  "+reason+": ") {
				t.Errorf("want reason %s: %s", reason, line)
			}
		case strings.HasPrefix(line, "FAIL "):
			t.Errorf("a good vector failed: %s", line)
		}
	}
	if !strings.Contains(out, "good_record_with_previous.bundle.json  key=") || !strings.Contains(out, "log=4/6 witnessedAt=2026-11-30T12:05:00.000Z witnesses=witness.test/w1,witness.test/w2") {
		t.Errorf("a verified bundle's line lacks its log index, checkpoint and witnesses:\n%s", out)
	}

	// --require-log fails the export's bare envelope, and only it.
	code, out, _ = run(t, append([]string{"--require-log", "--keys", logVectors + "keys.json"}, append(witnesses, logVectors+"export.jsonl")...)...)
	if code != 1 || !strings.Contains(out, "4 envelopes: 3 verified, 1 failed") || !strings.Contains(out, "export.jsonl:4  policy_not_met") {
		t.Errorf("--require-log: exit %d\n%s", code, out)
	}
	// Without witness keys the bundles verify on the log's signature alone, but nothing
	// shows the revoked key's record was logged before the revocation.
	if code, out, _ := run(t, "--keys", logVectors+"keys.json", logVectors+"export.jsonl"); code != 1 || !strings.Contains(out, "3 verified, 1 failed") || !strings.Contains(out, "export.jsonl:3  revoked_key") {
		t.Errorf("no witness keys: exit %d\n%s", code, out)
	}
	if code, out, _ := run(t, "-q", "--keys", logVectors+"keys.json", "--witness-key", w1, logVectors+"bad_too_few_witnesses__one_of_two.bundle.json"); code != 0 {
		t.Errorf("one witness required: exit %d\n%s", code, out)
	}
	// A key document without the log needs --log-key, given as text or a file.
	code, _, errs = run(t, "--keys", vectors+"keys.json", logVectors+"export.jsonl")
	if code != 2 || !strings.Contains(errs, "--log-key") {
		t.Errorf("no log key: exit %d, %s", code, errs)
	}
	vkey, _ := os.ReadFile(logVectors + "log.vkey")
	for _, k := range []string{logVectors + "log.vkey", strings.TrimSpace(string(vkey))} {
		if code, out, errs := run(t, append([]string{"--keys", vectors + "keys.json", "--log-key", k}, append(witnesses, logVectors+"export.jsonl")...)...); code != 0 {
			t.Errorf("--log-key %s: exit %d\n%s%s", k, code, out, errs)
		}
	}
	// --max-backdate widens the tolerance.
	backdated := logVectors + "bad_backdated__two_hours_before_previous.bundle.json"
	if code, _, _ := run(t, append([]string{"--keys", logVectors + "keys.json", "--max-backdate", "3h"}, append(witnesses, backdated)...)...); code != 0 {
		t.Errorf("--max-backdate 3h: exit %d", code)
	}

	// JSON: the log part of the result.
	code, out, _ = run(t, append([]string{"--json", "--keys", logVectors + "keys.json"}, append(witnesses, logVectors+"good_record_with_previous.bundle.json")...)...)
	var rep struct {
		Results []struct {
			OK     bool `json:"ok"`
			Result struct {
				Log struct {
					LogIndex       int64 `json:"logIndex"`
					CheckpointSize int64 `json:"checkpointSize"`
					Cosignatures   []struct {
						Witness string `json:"witness"`
					} `json:"cosignatures"`
					PreviousSize int64 `json:"previousSize"`
				} `json:"log"`
			} `json:"result"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || len(rep.Results) != 1 {
		t.Fatalf("--json: %d %v\n%s", code, err, out)
	}
	if l := rep.Results[0].Result.Log; l.LogIndex != 4 || l.CheckpointSize != 6 || len(l.Cosignatures) != 2 || l.PreviousSize != 4 {
		t.Errorf("--json log: %+v", l)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--keys", logVectors + "keys.json", "--witness-key", "nonsense", logVectors}, "witness key"},
		{[]string{"--keys", logVectors + "keys.json", "--witness-key", w1, "--min-witnesses", "2", logVectors}, "2 witnesses required of the 1"},
		{[]string{"--keys", logVectors + "keys.json", "--log-key", "nonsense", logVectors}, "log key"},
		{[]string{"--keys", logVectors + "keys.json", "--max-backdate", "-1h", logVectors}, "MaxBackdate"},
	} {
		if code, out, errs := run(t, tc.args...); code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, want 2 and %q\n%s%s", tc.args, code, tc.want, out, errs)
		}
	}
}

// TestConsistencyFlags checks a saved checkpoint against a newer one.
func TestConsistencyFlags(t *testing.T) {
	c4, c6, fork, proof := logVectors+"checkpoint-4.txt", logVectors+"checkpoint-6.txt", logVectors+"checkpoint-6-fork.txt", logVectors+"proof-4-6.txt"
	empty := filepath.Join(t.TempDir(), "empty.txt")
	os.WriteFile(empty, nil, 0o644)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--keys", logVectors + "keys.json", "--checkpoint", c4, "--newer", c6, "--proof", proof}, 0, "OK    consistency  probity.test/log: the checkpoint of size 6 extends the saved one of size 4"},
		{[]string{"--log-key", logVectors + "log.vkey", "--witness-key", logVectors + "witness-1.vkey", "--checkpoint", c4, "--newer", c6, "--proof", proof}, 0, "witnesses=witness.test/w1@2026-11-30T12:05:00.000Z"},
		{[]string{"--log-key", logVectors + "log.vkey", "--checkpoint", c6, "--newer", c6, "--proof", empty}, 0, "size 6 extends the saved one of size 6"},
		{[]string{"--log-key", logVectors + "log.vkey", "--checkpoint", c4, "--newer", fork, "--proof", proof}, 1, "FAIL  consistency  inconsistent_checkpoints"},
		{[]string{"--log-key", logVectors + "log.vkey", "--checkpoint", fork, "--newer", c6, "--proof", empty}, 1, "inconsistent_checkpoints: two checkpoints of size 6"},
		{[]string{"--log-key", logVectors + "log.vkey", "--checkpoint", c6, "--newer", c4, "--proof", proof}, 1, "inconsistent_checkpoints"},
		{[]string{"--log-key", logVectors + "witness-1.vkey", "--checkpoint", c4, "--newer", c6, "--proof", proof}, 2, "log key"},
		{[]string{"--checkpoint", c4, "--newer", c6, "--proof", proof}, 2, "--log-key"},
		{[]string{"--log-key", logVectors + "log.vkey", "--checkpoint", c4, "--newer", c6}, 2, "come together"},
		{[]string{"--log-key", logVectors + "log.vkey", "--checkpoint", c4, "--newer", c6, "--proof", c4}, 2, "not a base64 32-byte hash"},
		{[]string{"--keys", logVectors + "keys.json", "--witness-key", logVectors + "witness-1.vkey", "--checkpoint", c4, "--newer", c6, "--proof", proof, logVectors + "export.jsonl"}, 0, "4 envelopes: 4 verified"},
	} {
		code, out, errs := run(t, tc.args...)
		if code != tc.code || !strings.Contains(out+errs, tc.want) {
			t.Errorf("%v: exit %d (want %d)\n%s%s\nwant %q", tc.args, code, tc.code, out, errs, tc.want)
		}
	}
	if _, out, _ := run(t, "--log-key", logVectors+"log.vkey", "--checkpoint", c4, "--newer", c6, "--proof", proof); strings.Contains(out, "envelopes") {
		t.Errorf("a consistency check alone prints an envelope summary:\n%s", out)
	}
	code, out, _ := run(t, "--json", "--log-key", logVectors+"log.vkey", "--checkpoint", c4, "--newer", fork, "--proof", proof)
	var rep struct {
		Consistency struct {
			OK      bool `json:"ok"`
			Failure struct {
				Reason string `json:"reason"`
			} `json:"failure"`
		} `json:"consistency"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 1 || rep.Consistency.OK || rep.Consistency.Failure.Reason != "inconsistent_checkpoints" {
		t.Errorf("--json consistency: %d %v\n%s", code, err, out)
	}
}

func TestIsBundle(t *testing.T) {
	for in, want := range map[string]bool{
		`{"bundle":"x"}`: true, ` { "logIndex": 1, "bundle": "x" }`: true, `{"envelope":{"bundle":1},"bundle":2}`: true,
		`{"payloadType":"a","payload":"","signatures":[{"keyid":"bundle","sig":""}]}`: false,
		`{}`: false, `[]`: false, ``: false, `{"a":`: false, `{"a":1 "bundle":2}`: false, `"bundle"`: false,
	} {
		if got := IsBundle([]byte(in)); got != want {
			t.Errorf("IsBundle(%s) = %v", in, got)
		}
	}
}
