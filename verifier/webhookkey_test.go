package verifier_test

import (
	"crypto/ed25519"
	"path/filepath"
	"testing"
	"time"

	"github.com/probity-dev/probity/internal/ledgertest"
	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/keys/signing"
	"github.com/probity-dev/probity/verifier"
)

// TestVerifyWithWebhookKeyDocument: a record verifies with the key document that lists a
// webhook key (format_version 3) as with the format 1 document it was signed under; the
// webhook key itself authorizes no record.
func TestVerifyWithWebhookKeyDocument(t *testing.T) {
	s, err := ledgertest.NewSigner("webhook")
	if err != nil {
		t.Fatal(err)
	}
	rec, err := s.Probe(t.Context(), "round-1", time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	pk, err := keys.EncodeWebhookPublicKey(ed25519.NewKeyFromSeed(make([]byte, 32)).Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	v3 := *s.Doc
	v3.FormatVersion, v3.Webhook = keys.FormatVersion3, &keys.Webhook{PublicKey: pk}
	data, err := keys.MarshalDocument(&v3)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := keys.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range []*keys.Document{s.Doc, parsed} {
		if res, err := verifier.Verify(rec.Envelope, doc, verifier.DefaultPolicy()); err != nil || res.Failure != nil {
			t.Errorf("format %d document: %+v, %v", doc.FormatVersion, res, err)
		}
	}
	d, err := verifier.Describe(data, time.Now())
	if err != nil || d.KeyDocument == nil || d.KeyDocument.WebhookKey != pk || d.KeyDocument.FormatVersion != 3 {
		t.Errorf("Describe = %+v, %v", d, err)
	}
}

// TestKeyHistoryWithWebhookKey: a history whose second version adds the webhook key
// checks as a chain, and the served document is its latest version.
func TestKeyHistoryWithWebhookKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keys")
	t0 := time.Date(2026, 8, 22, 0, 0, 0, 0, time.UTC)
	if _, err := signing.GenerateDir(dir, "https://probity.dev", t0, nil); err != nil {
		t.Fatal(err)
	}
	doc, err := signing.EnsureWebhookKey(dir, t0.Add(time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := signing.Versions(dir)
	if err != nil {
		t.Fatal(err)
	}
	var logged []verifier.LoggedKeyVersion
	for i, v := range vs {
		logged = append(logged, verifier.LoggedKeyVersion{LogIndex: int64(i * 10), Envelope: v.Envelope})
	}
	h, err := verifier.NewKeyHistory(logged)
	if err != nil {
		t.Fatal(err)
	}
	if h.Len() != 2 || h.Latest().Webhook == nil {
		t.Fatalf("history of %d versions, latest webhook %+v", h.Len(), h.Latest().Webhook)
	}
	if err := h.CheckServed(doc); err != nil {
		t.Errorf("CheckServed: %v", err)
	}
	if h.InForce(5).Webhook != nil || h.InForce(11).Webhook == nil {
		t.Error("InForce: the webhook key is in force from its version's log index on")
	}
}
