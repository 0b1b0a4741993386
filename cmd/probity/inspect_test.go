package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/keys/signing"
)

// inspectKey is a test key from a public seed, valid from 2026-01-01, with its key
// document written to dir/keys.json.
func inspectKey(t *testing.T, dir, seed string) (*signing.Signer, string, []byte) {
	t.Helper()
	sum := sha256.Sum256([]byte("probity inspect test " + seed))
	priv := ed25519.NewKeyFromSeed(sum[:])
	k, err := keys.NewKey(priv.Public().(ed25519.PublicKey), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	doc := &keys.Document{FormatVersion: 1, Issuer: "probity inspect test (insecure: public seed)", Keys: []keys.Key{k}}
	b, err := keys.MarshalDocument(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, seed+"-keys.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	return signing.NewSigner(priv), path, der
}

// inspectEnvelope signs an auth_required round of url whose server named itself name
// (the schema lets C1 controls and invisible format characters through: they must be
// escaped when shown).
func inspectEnvelope(t *testing.T, s *signing.Signer, url, roundID, name string) []byte {
	t.Helper()
	p := &attest.ProbePredicate{
		Checks: []attest.CheckResult{
			{ID: "reachability", Status: attest.StatusVerified},
			{ID: "transport", Status: attest.StatusVerified},
			{ID: "redirect_policy", Status: attest.StatusVerified},
			{ID: "auth_metadata", Status: attest.StatusObservedRisk, Reason: &attest.CheckReason{Key: "metadata_missing", Params: map[string]any{"status": 401}}},
		},
		Coverage:   attest.CoverageAuthRequired,
		ObservedAt: "2026-11-30T12:00:00.000Z",
		Probe:      attest.ProbeInfo{SuiteDigest: attest.Digest([]byte("suite")), SuiteVersion: "2026.11", ToolVersion: "0.1.0"},
		RoundID:    roundID,
		ServerInfo: &attest.ServerInfo{Name: name, Version: "1.0.0"},
		Target:     attest.Target{Kind: "remote", URL: url},
		Timings:    attest.NewTimings(120, 0, 160),
	}
	st, err := attest.NewProbeStatement(p)
	if err != nil {
		t.Fatal(err)
	}
	env, _, err := attest.Sign(context.Background(), st, s)
	if err != nil {
		t.Fatal(err)
	}
	b, err := attest.EncodeEnvelope(env)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func runInspectArgs(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(append([]string{"inspect"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

func writeFile(t *testing.T, path string, b []byte) string {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestInspect reads envelopes the test signs, with and without --keys, as text and JSON,
// a JSONL export cut at --limit, a key document (spki_sha256 recomputed), log bundles,
// and a tombstone; server-supplied text comes out with control and invisible characters
// escaped.
func TestInspect(t *testing.T) {
	dir := t.TempDir()
	signer, keysPath, der := inspectKey(t, dir, "a")
	_, otherKeys, _ := inspectKey(t, dir, "b")
	hostileName := "evil\u202egpj.exe\u200b\u009b2J"
	env := inspectEnvelope(t, signer, "https://mcp.example.com/mcp", "r-inspect-1", hostileName)
	envPath := writeFile(t, filepath.Join(dir, "round.json"), env)
	keyID := keys.KeyID(der)

	code, out, errOut := runInspectArgs("--keys", keysPath, envPath)
	if code != 0 {
		t.Fatalf("inspect --keys: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		"round.json: envelope",
		"statement          https://in-toto.io/Statement/v1",
		"predicate type     https://probity.dev/attestation/probe/v1",
		"subject            https://mcp.example.com/mcp",
		"sha256             " + attest.AuthRequiredDigest("https://mcp.example.com/mcp"),
		"entry              remote https://mcp.example.com/mcp",
		"round              r-inspect-1",
		"coverage           auth_required",
		"observedAt         2026-11-30T12:00:00.000Z",
		"checks             4: 3 VERIFIED, 1 OBSERVED_RISK",
		"auth_metadata      OBSERVED_RISK  reason metadata_missing (status=401)",
		"fingerprints       none (coverage auth_required)",
		"signed by          " + keyID,
		"verification       VERIFIED: signed by " + keyID,
		`server             evil\u202egpj.exe\u200b\u009b2J 1.0.0`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect output lacks %q:\n%s", want, out)
		}
	}
	// Findings come before the checks that passed.
	if strings.Index(out, "auth_metadata") > strings.Index(out, "reachability") {
		t.Errorf("the finding is not listed first:\n%s", out)
	}
	for _, r := range []rune{'\u202e', '\u200b', '\u009b'} {
		if strings.ContainsRune(out, r) {
			t.Errorf("the output holds %U unescaped:\n%s", r, out)
		}
	}

	// Without --keys: the same reading, and it says nothing was verified.
	code, out, _ = runInspectArgs(envPath)
	if code != 0 || !strings.Contains(out, "verification       not checked: give --keys keys.json") {
		t.Errorf("inspect without --keys: exit %d\n%s", code, out)
	}

	// Another issuer's key document: the record reads, the verification fails, exit 1.
	code, out, _ = runInspectArgs("--keys", otherKeys, envPath)
	if code != 1 || !strings.Contains(out, "verification       FAILED: unknown_key") || !strings.Contains(out, "round              r-inspect-1") {
		t.Errorf("inspect with the wrong key document: exit %d (want 1)\n%s", code, out)
	}

	// JSON: the description, with the verifier's result.
	code, out, errOut = runInspectArgs("--keys", keysPath, "--json", envPath)
	var rep struct {
		Records []struct {
			Source      string `json:"source"`
			Description struct {
				Form          string `json:"form"`
				PredicateType string `json:"predicateType"`
				Probe         struct {
					RoundID    string `json:"roundId"`
					ServerInfo struct {
						Name string `json:"name"`
					} `json:"serverInfo"`
				} `json:"probe"`
				KeyIDs       []string `json:"keyIds"`
				Verification struct {
					Verified bool `json:"verified"`
					Result   struct {
						Signatures []struct {
							KeyID   string `json:"keyId"`
							Outcome string `json:"outcome"`
						} `json:"signatures"`
					} `json:"result"`
				} `json:"verification"`
			} `json:"description"`
		} `json:"records"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || len(rep.Records) != 1 {
		t.Fatalf("inspect --json: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	if d := rep.Records[0].Description; d.Form != "envelope" || d.PredicateType != attest.ProbePredicateType || d.Probe.RoundID != "r-inspect-1" ||
		d.Probe.ServerInfo.Name != hostileName || !d.Verification.Verified || len(d.Verification.Result.Signatures) != 1 ||
		d.Verification.Result.Signatures[0].Outcome != "valid" || d.KeyIDs[0] != keyID {
		t.Errorf("inspect --json: %+v", d)
	}

	// A JSONL export of 30 records: the first --limit only.
	var jsonl bytes.Buffer
	for i := range 30 {
		jsonl.Write(inspectEnvelope(t, signer, "https://mcp.example.com/mcp", "r-inspect-"+string(rune('a'+i%26)), "ok"))
		jsonl.WriteByte('\n')
	}
	jsonlPath := writeFile(t, filepath.Join(dir, "envelopes.jsonl"), jsonl.Bytes())
	code, out, _ = runInspectArgs("--keys", keysPath, "--limit", "5", jsonlPath)
	if code != 0 || strings.Count(out, ": envelope\n") != 5 || !strings.Contains(out, "envelopes.jsonl:5: envelope") ||
		!strings.Contains(out, "(stopped after 5 records; --limit N shows more)") {
		t.Errorf("inspect --limit 5 of 30: exit %d\n%s", code, out)
	}
	code, out, _ = runInspectArgs(jsonlPath)
	if code != 0 || strings.Count(out, ": envelope\n") != 20 {
		t.Errorf("inspect of 30 records shows %d by default (want 20), exit %d", strings.Count(out, ": envelope\n"), code)
	}

	// The key document: key_id and spki_sha256 computed from the spki.
	sum := sha256.Sum256(der)
	code, out, _ = runInspectArgs(keysPath)
	if code != 0 || !strings.Contains(out, "key "+keyID+" valid now") || !strings.Contains(out, "spki_sha256        "+hex.EncodeToString(sum[:])) ||
		!strings.Contains(out, "valid from         2026-01-01T00:00:00.000Z") {
		t.Errorf("inspect keys.json: exit %d\n%s", code, out)
	}
	// A spki_sha256 that is not the key's is refused, not shown.
	tampered := bytes.Replace(mustRead(t, keysPath), []byte(hex.EncodeToString(sum[:])), []byte(strings.Repeat("0", 64)), 1)
	code, _, errOut = runInspectArgs(writeFile(t, filepath.Join(dir, "tampered-keys.json"), tampered))
	if code != 2 || !strings.Contains(errOut, "does not match the SHA-256 of spki") {
		t.Errorf("inspect of a key document with a wrong spki_sha256: exit %d (want 2)\n%s", code, errOut)
	}

	// Log bundles (the verifier's vectors): what the bundle claims, and with the keys
	// and witnesses what was verified; a postdated record fails.
	logDir := filepath.Join("..", "..", "verifier", "testdata", "log")
	logArgs := []string{"--keys", filepath.Join(logDir, "keys.json"), "--witness-key", filepath.Join(logDir, "witness-1.vkey"), "--witness-key", filepath.Join(logDir, "witness-2.vkey"), "--min-witnesses", "2"}
	code, out, errOut = runInspectArgs(append(logArgs, filepath.Join(logDir, "good_record_with_previous.bundle.json"))...)
	for _, want := range []string{
		"good_record_with_previous.bundle.json: bundle",
		"log (as claimed)   index 4, kind probe",
		"checkpoint         origin probity.test/log, size 6",
		"previous           checkpoint of size 4",
		"verification       VERIFIED",
		"in the log         index 4, proven against the checkpoint of size 6 signed by the log key of probity.test/log",
		"witness            witness.test/w1 saw it at",
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("inspect of a good bundle: exit %d, lacks %q\n%s%s", code, want, out, errOut)
		}
	}
	code, out, _ = runInspectArgs(append(logArgs, filepath.Join(logDir, "bad_postdated__after_witnessed.bundle.json"))...)
	if code != 1 || !strings.Contains(out, "verification       FAILED: postdated") {
		t.Errorf("inspect of a postdated bundle: exit %d (want 1)\n%s", code, out)
	}

	// A tombstone document.
	tomb, err := attest.TombstoneDocument{DeletedAt: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), Entry: "weather", Reason: "gone for good",
		Removed: []attest.RemovedRef{{Seq: 3, Kind: "probe", PayloadDigestHex: strings.Repeat("ab", 32)}}}.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	code, out, _ = runInspectArgs(writeFile(t, filepath.Join(dir, "tombstone.json"), tomb))
	if code != 0 || !strings.Contains(out, `reason             gone for good`) || !strings.Contains(out, "seq 3              probe sha256:abab") {
		t.Errorf("inspect of a tombstone: exit %d\n%q", code, out)
	}
	// One whose reason holds a terminal escape, which no store writes (its CHECK, and
	// attest.ParseTombstoneDocument, allow one line without control characters): refused,
	// the escape shown escaped.
	tomb, err = attest.TombstoneDocument{DeletedAt: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), Entry: "weather", Reason: "gone \x1b[2J now",
		Removed: []attest.RemovedRef{{Seq: 3, Kind: "probe", PayloadDigestHex: strings.Repeat("ab", 32)}}}.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runInspectArgs(writeFile(t, filepath.Join(dir, "tombstone-escape.json"), tomb))
	if code != 2 || !strings.Contains(errOut, "is not one line of 1 to 200 characters") || strings.Contains(out+errOut, "\x1b") {
		t.Errorf("inspect of a tombstone with an escape in its reason: exit %d\n%q\n%q", code, out, errOut)
	}
}

// TestInspectHostile: input that is not a record is refused with a clear error and exit
// 2, without reading more than the bound, and names from the input are escaped.
func TestInspectHostile(t *testing.T) {
	dir := t.TempDir()
	signer, keysPath, _ := inspectKey(t, dir, "a")
	env := inspectEnvelope(t, signer, "https://mcp.example.com/mcp", "r-inspect-1", "ok")
	var e map[string]any
	if err := json.Unmarshal(env, &e); err != nil {
		t.Fatal(err)
	}
	mutate := func(k string, v any) []byte {
		m := map[string]any{}
		for kk, vv := range e {
			m[kk] = vv
		}
		m[k] = v
		b, _ := json.Marshal(m)
		return b
	}
	huge := append([]byte(`{"payloadType":"application/vnd.in-toto+json","payload":"`), bytes.Repeat([]byte("A"), 5<<20)...)
	huge = append(huge, `","signatures":[]}`...)
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"huge.json", huge, "longer than 4194304 bytes"},
		{"wrong-type.json", mutate("payloadType", "text/plain"), `payloadType "text/plain" is not application/vnd.in-toto+json`},
		{"bad-base64.json", mutate("payload", "not base64!"), "not a DSSE envelope"},
		{"url-base64.json", mutate("payload", strings.NewReplacer("+", "-", "/", "_").Replace(e["payload"].(string))+"-_"), "not a DSSE envelope"},
		{"not-json.json", []byte("hello\x1b[2J"), "not strict JSON"},
		{"array.json", []byte(`[1,2]`), "not a JSON object"},
		{"other.json", []byte(`{"hello":"world"}`), "neither a DSSE envelope, a bundle, a key document nor a tombstone document"},
		{"duplicate.json", []byte(`{"payloadType":"a","payloadType":"b"}`), "not strict JSON"},
		{"name\x1b[31m.json", []byte(`{}`), `name\u001b[31m.json`},
	} {
		path := writeFile(t, filepath.Join(dir, tc.name), tc.data)
		code, out, errOut := runInspectArgs("--keys", keysPath, path)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d (want 2), stderr lacks %q\n%s%s", tc.name, code, tc.want, out, errOut)
		}
		if strings.Contains(out+errOut, "\x1b") {
			t.Errorf("%q: the output holds a raw escape: %q", tc.name, out+errOut)
		}
	}
	for _, args := range [][]string{{}, {"--limit", "0", keysPath}, {"--limit", "10001", keysPath}, {"--witness-key", "x", keysPath}, {filepath.Join(dir, "missing.json")}} {
		if code, out, errOut := runInspectArgs(args...); code != 2 {
			t.Errorf("inspect %q: exit %d (want 2)\n%s%s", args, code, out, errOut)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
