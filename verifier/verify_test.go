package verifier_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/verifier"
)

func loadVectorKeys(t testing.TB) *keys.Document {
	t.Helper()
	doc, err := keys.Load("testdata/keys.json")
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func readVector(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func reasonOf(err error) verifier.FailureReason {
	var f *verifier.Failure
	if errors.As(err, &f) {
		return f.Reason
	}
	return ""
}

// TestTamper changes every byte of a good envelope's payload and signature, one at a
// time, and requires every change to be rejected.
func TestTamper(t *testing.T) {
	doc := loadVectorKeys(t)
	good := readVector(t, "good_full.json")
	var env attest.Envelope
	if err := json.Unmarshal(good, &env); err != nil {
		t.Fatal(err)
	}
	payload, _ := base64.StdEncoding.DecodeString(env.Payload)
	sig, _ := base64.StdEncoding.DecodeString(env.Signatures[0].Sig)
	rebuild := func(p, s []byte) []byte {
		e := attest.Envelope{PayloadType: env.PayloadType, Payload: base64.StdEncoding.EncodeToString(p),
			Signatures: []attest.Signature{{KeyID: env.Signatures[0].KeyID, Sig: base64.StdEncoding.EncodeToString(s)}}}
		b, _ := attest.EncodeEnvelope(&e)
		return b
	}
	if _, err := verifier.Verify(rebuild(payload, sig), doc, verifier.DefaultPolicy()); err != nil {
		t.Fatalf("the untampered rebuild fails: %v", err)
	}
	n := 0
	for i := range payload {
		for _, x := range []byte{0x01, 0x80} {
			p := bytes.Clone(payload)
			p[i] ^= x
			if _, err := verifier.Verify(rebuild(p, sig), doc, verifier.DefaultPolicy()); err == nil {
				t.Fatalf("payload byte %d ^ %#x verified", i, x)
			}
			n++
		}
	}
	for i := range sig {
		for v := range 256 {
			if byte(v) == sig[i] {
				continue
			}
			s := bytes.Clone(sig)
			s[i] = byte(v)
			if _, err := verifier.Verify(rebuild(payload, s), doc, verifier.DefaultPolicy()); err == nil {
				t.Fatalf("signature byte %d = %#x verified", i, v)
			}
			n++
		}
	}
	// Every single-byte change to the envelope text itself.
	for i := range good {
		for _, x := range []byte{0x01} {
			e := bytes.Clone(good)
			e[i] ^= x
			if _, err := verifier.Verify(e, doc, verifier.DefaultPolicy()); err == nil && !bytes.Equal(bytes.TrimSpace(e), bytes.TrimSpace(good)) {
				t.Fatalf("envelope byte %d ^ %#x verified: %q", i, x, e[max(0, i-10):min(len(e), i+10)])
			}
			n++
		}
	}
	t.Logf("%d tampered envelopes rejected", n)
}

func TestPolicy(t *testing.T) {
	doc := loadVectorKeys(t)
	two := readVector(t, "good_two_keys.json")
	one := readVector(t, "good_full.json")
	for _, p := range []verifier.Policy{{}, {Threshold: 5}, {Threshold: 1, PredicateTypes: []string{"https://example.com/other/v1"}}} {
		if _, err := verifier.Verify(one, doc, p); !errors.Is(err, verifier.ErrPolicy) {
			t.Errorf("policy %+v: want ErrPolicy, got %v", p, err)
		}
	}
	if _, err := verifier.Verify(one, nil, verifier.DefaultPolicy()); !errors.Is(err, verifier.ErrPolicy) {
		t.Errorf("nil key document: want ErrPolicy, got %v", err)
	}
	p2 := verifier.Policy{Threshold: 2}
	if _, err := verifier.Verify(two, doc, p2); err != nil {
		t.Errorf("two keys, threshold 2: %v", err)
	}
	if _, err := verifier.Verify(one, doc, p2); reasonOf(err) != verifier.ReasonPolicy {
		t.Errorf("one key, threshold 2: want %s, got %v", verifier.ReasonPolicy, err)
	}
	probe := verifier.Policy{Threshold: 1, PredicateTypes: []string{attest.ProbePredicateType}}
	if _, err := verifier.Verify(one, doc, probe); err != nil {
		t.Errorf("probe predicate allowed: %v", err)
	}
}

func TestResultRecordsWhatWasVerified(t *testing.T) {
	doc := loadVectorKeys(t)
	res, err := verifier.Verify(readVector(t, "good_two_keys.json"), doc, verifier.DefaultPolicy())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Signatures) != 2 || res.Signatures[0].KeyID == res.Signatures[1].KeyID {
		t.Errorf("signatures: %+v", res.Signatures)
	}
	if res.PredicateType != attest.ProbePredicateType || res.Coverage != attest.CoverageFull ||
		attest.FormatTime(res.ObservedAt) != inWindow || res.Statement == nil || res.Statement.Probe == nil {
		t.Errorf("result: %+v", res)
	}
	// A failing result keeps what was learned and says why, per signature.
	res, err = verifier.Verify(readVector(t, "bad_revoked_key__signed_before_revocation.json"), doc, verifier.DefaultPolicy())
	if err == nil || res.Failure == nil || res.Signatures[0].Outcome != verifier.SignatureOutcome(verifier.ReasonRevokedKey) || res.Subject == nil {
		t.Errorf("revoked result: %+v, %v", res, err)
	}
}

// TestVerifierDependencies holds the auditor's binary to its promise: nothing from
// storage, web, scheduling or MCP, and of this module only the format (attest), the public
// key document (keys, not the private-key side keys/signing) and the verifier itself;
// beyond the standard library, jcs and go-securesystemslib only golang.org/x/crypto,
// text and sync, and golang.org/x/mod's sumdb/note and sumdb/tlog.
func TestVerifierDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/probity-dev/probity/cmd/probity-verify").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const module = "github.com/probity-dev/probity/"
	for _, dep := range strings.Fields(string(out)) {
		if !strings.Contains(strings.Split(dep, "/")[0], ".") {
			continue // standard library
		}
		ok := false
		if name, own := strings.CutPrefix(dep, module); own {
			switch name {
			case "attest", "keys", "verifier", "verifier/cli", "cmd/probity-verify":
				ok = true
			}
		} else {
			for _, allowed := range []string{
				"golang.org/x/crypto/",
				"golang.org/x/text/",
				"golang.org/x/sync/",
				"github.com/gowebpki/jcs",
				"github.com/secure-systems-lab/go-securesystemslib/",
			} {
				if strings.HasPrefix(dep, allowed) {
					ok = true
				}
			}
			// The log's proofs and signed notes (issue 15): these two packages of
			// golang.org/x/mod, nothing else of it.
			switch dep {
			case "golang.org/x/mod/sumdb/note", "golang.org/x/mod/sumdb/tlog":
				ok = true
			}
		}
		if !ok {
			t.Errorf("cmd/probity-verify depends on %s", dep)
		}
	}
}

// TestVerifierDoesNoIO keeps package verifier pure verification: bytes and a key
// document in, a typed result out. Reading files, directories and streams is
// verifier/cli's.
func TestVerifierDoesNoIO(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, "github.com/probity-dev/probity/verifier").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, imp := range strings.Fields(string(out)) {
		switch {
		case imp == "os", imp == "io", imp == "bufio", imp == "path/filepath", imp == "runtime", imp == "sync",
			strings.HasPrefix(imp, "io/"), strings.HasPrefix(imp, "os/"), strings.HasPrefix(imp, "net"),
			strings.HasPrefix(imp, "golang.org/x/sync"):
			t.Errorf("package verifier imports %s", imp)
		}
	}
}

// A hand-built, unvalidated key document with a broken key is a usage error, not a panic.
func TestVerifyUnvalidatedDocument(t *testing.T) {
	doc := loadVectorKeys(t)
	k := doc.Keys[1]
	bad := &keys.Document{FormatVersion: 1, Issuer: "x", Keys: []keys.Key{{KeyID: k.KeyID, Algorithm: "Ed25519", SPKI: "garbage", ValidFrom: k.ValidFrom}}}
	if _, err := verifier.Verify(readVector(t, "good_full.json"), bad, verifier.DefaultPolicy()); !errors.Is(err, verifier.ErrPolicy) {
		t.Errorf("want ErrPolicy, got %v", err)
	}
}
