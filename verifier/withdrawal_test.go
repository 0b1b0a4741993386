package verifier_test

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/internal/ledgertest"
	"github.com/probity-dev/probity/verifier"
	"github.com/probity-dev/probity/verifier/cli"
)

// TestWithdrawalRecord: a signed withdrawal/v1 record verifies offline under its key
// document, with its log kind withdrawal; one whose reason was altered fails; describe
// and inspect name it and print its reason as plain text.
func TestWithdrawalRecord(t *testing.T) {
	s, err := ledgertest.NewSigner("verifier-withdrawal")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	rec, err := s.Withdrawal(t.Context(), "acme", 1, attest.WithdrawalWithdrawn, "It uploads\nfiles \x1b[31m", 42, strings.Repeat("ab", 32), at)
	if err == nil {
		t.Fatal("a reason with an escape character was signed")
	}
	rec, err = s.Withdrawal(t.Context(), "acme", 1, attest.WithdrawalWithdrawn, "It uploads\nthe files it reads.", 42, strings.Repeat("ab", 32), at)
	if err != nil {
		t.Fatal(err)
	}
	res, err := verifier.Verify(rec.Envelope, s.Doc, verifier.Policy{Threshold: 1})
	if err != nil || res.Failure != nil || res.Statement.Withdrawal == nil || verifier.RecordKind(res.PredicateType) != "withdrawal" {
		t.Fatalf("Verify = %+v, %v", res, err)
	}
	env, payload, err := attest.ParseEnvelope(rec.Envelope)
	if err != nil {
		t.Fatal(err)
	}
	env.Payload = base64.StdEncoding.EncodeToString(bytes.Replace(payload, []byte("uploads"), []byte("archives"), 1))
	bad, err := attest.EncodeEnvelope(env)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := verifier.Verify(bad, s.Doc, verifier.Policy{Threshold: 1}); err == nil && res.Failure == nil {
		t.Fatal("a tampered withdrawal verified")
	}
	d, err := verifier.Describe(rec.Envelope, at)
	if err != nil || d.Withdrawal == nil || d.RecordKind != "withdrawal" || len(d.Times) != 1 || d.Times[0].Name != "at" {
		t.Fatalf("Describe = %+v, %v", d, err)
	}
	file := filepath.Join(t.TempDir(), "w.json")
	if err := os.WriteFile(file, rec.Envelope, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := cli.Inspect("probity-verify inspect", []string{file}, &out, &errOut); code != 0 {
		t.Fatalf("inspect: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	if o := out.String(); !strings.Contains(o, "a withdrawal") || !strings.Contains(o, "reason             It uploads") || strings.Contains(o, "It uploads\nthe") || !strings.Contains(o, "seq 42") {
		t.Errorf("inspect:\n%s", o)
	}
}
