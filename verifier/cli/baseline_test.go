package cli

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/keys/signing"
)

// TestInspectBaseline: inspect names a baseline/v1 envelope, its kind, approvedAt,
// number, basis round and the three fingerprints.
func TestInspectBaseline(t *testing.T) {
	sum := sha256.Sum256([]byte("inspect baseline"))
	signer := signing.NewSigner(ed25519.NewKeyFromSeed(sum[:]))
	fp := attest.Fingerprints{Toolset: attest.Digest([]byte("t")), Schema: attest.Digest([]byte("s")), Surface: attest.Digest([]byte("u"))}
	at := time.Date(2026, 11, 30, 12, 30, 0, 0, time.UTC)
	st := attest.NewBaselineStatement(attest.NewBaselinePredicate(attest.ChangeEntry{Kind: "remote", Slug: "weather", URL: "https://weather.example/mcp"},
		3, at, "f20261130T120000000Z-e1", attest.Digest([]byte("round")), fp, 4, "0.1.0"))
	env, _, err := attest.Sign(context.Background(), st, signer)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := attest.EncodeEnvelope(env)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "baseline.json")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := Inspect("probity inspect", []string{path}, &out, &errb); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{attest.BaselinePredicateType + " (an approved baseline", "2026-11-30T12:30:00.000Z",
		"3 of weather (4 tools)", "round f20261130T120000000Z-e1", fp.Toolset, fp.Schema, fp.Surface} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("inspect output lacks %q:\n%s", want, out.String())
		}
	}
}
