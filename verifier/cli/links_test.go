package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/internal/ledgertest"
	"github.com/probity-dev/probity/keys"
)

// TestOutcomeLinks: given a dispute and its outcome, verify checks the link; an outcome
// of another dispute fails the run; an outcome alone is noted, not checked.
func TestOutcomeLinks(t *testing.T) {
	ctx := context.Background()
	s, err := ledgertest.NewSigner("cli-links")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	doc, err := keys.MarshalDocument(s.Doc)
	if err != nil {
		t.Fatal(err)
	}
	keysFile := filepath.Join(dir, "keys.json")
	at := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	d1, err := s.Dispute(ctx, "entry-1", 1, 7, at)
	if err != nil {
		t.Fatal(err)
	}
	d2, err := s.Dispute(ctx, "entry-1", 2, 7, at)
	if err != nil {
		t.Fatal(err)
	}
	o1, err := s.Outcome(ctx, "entry-1", 1, 8, d1.PayloadDigest, at.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	wrong, err := s.Outcome(ctx, "entry-1", 1, 8, d2.PayloadDigest, at.Add(time.Hour)) // number 1, digest of dispute 2
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"keys.json": doc, "d1.json": d1.Envelope, "d2.json": d2.Envelope, "o1.json": o1.Envelope, "wrong.json": wrong.Envelope} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := func(n string) string { return filepath.Join(dir, n) }

	code, out, errs := run(t, "--keys", keysFile, p("d1.json"), p("o1.json"))
	if code != 0 || !strings.Contains(out, "OK    "+p("o1.json")+"  decides dispute 1 of entry-1 ("+p("d1.json")+")") ||
		!strings.Contains(out, "dispute=1 check=destructive_annotations record=7") || !strings.Contains(out, "outcome=rejected dispute=1 record=8") {
		t.Errorf("dispute and outcome: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, _ = run(t, "--keys", keysFile, p("d1.json"), p("d2.json"), p("wrong.json"))
	if code != 1 || !strings.Contains(out, "FAIL  "+p("wrong.json")+"  outcome_link_mismatch") {
		t.Errorf("an outcome of another dispute: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, "--keys", keysFile, p("o1.json"))
	if code != 0 || !strings.Contains(out, "NOTE  "+p("o1.json")+"  its dispute 1 (record 8) was not given") {
		t.Errorf("an outcome alone: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, "--keys", keysFile, "--json", p("d1.json"), p("o1.json"))
	if code != 0 || !strings.Contains(out, `"links":[{"outcome":"`+p("o1.json")+`","dispute":"`+p("d1.json")+`","checked":true,"ok":true`) {
		t.Errorf("--json: exit %d\n%s", code, out)
	}
}
