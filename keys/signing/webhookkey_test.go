package signing

import (
	"crypto/ed25519"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/keys"
)

func TestWebhookSecretKeyEncoding(t *testing.T) {
	priv := seedKey(5)
	s, err := EncodeWebhookSecretKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s, "whsk_") || len(s) != 5+88 {
		t.Fatalf("EncodeWebhookSecretKey = %q", s)
	}
	for _, form := range []string{s, "whsk_" + base64.StdEncoding.EncodeToString(priv.Seed())} {
		back, err := ParseWebhookSecretKey(form)
		if err != nil || !back.Equal(priv) {
			t.Errorf("ParseWebhookSecretKey(%.12s…) = %v", form, err)
		}
	}
	mismatched := append(append([]byte(nil), priv.Seed()...), seedKey(6).Public().(ed25519.PublicKey)...)
	for name, bad := range map[string]string{
		"public prefix":       "whpk_" + s[5:],
		"no prefix":           s[5:],
		"31 bytes":            "whsk_" + base64.StdEncoding.EncodeToString(priv.Seed()[:31]),
		"mismatched public":   "whsk_" + base64.StdEncoding.EncodeToString(mismatched),
		"not canonical":       "whsk_" + strings.TrimRight(s[5:], "="),
		"url-safe characters": strings.ReplaceAll(strings.ReplaceAll(s, "+", "-"), "/", "_") + "-",
	} {
		if _, err := ParseWebhookSecretKey(bad); err == nil {
			t.Errorf("%s parsed", name)
		}
	}
}

// TestEnsureWebhookKey: the webhook key is made once, kept 0600 beside the signing key,
// published by a signed webhook_key_added version (format 3), survives a rotation, and
// the history verifies; a crash between the key file and its version publishes the key
// already written.
func TestEnsureWebhookKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keys")
	if _, err := GenerateDir(dir, "https://probity.dev", t0, seedReader(1)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadWebhookSigner(dir); err == nil {
		t.Error("LoadWebhookSigner found a key before EnsureWebhookKey")
	}
	at := t0.Add(time.Hour)
	d, err := EnsureWebhookKey(dir, at, seedReader(7))
	if err != nil {
		t.Fatal(err)
	}
	if d.FormatVersion != keys.FormatVersion3 || d.Webhook == nil {
		t.Fatalf("document %+v", d)
	}
	if got := fileMode(t, filepath.Join(dir, WebhookKeyFile)); got != 0o600 {
		t.Errorf("%s mode %04o, want 0600", WebhookKeyFile, got)
	}
	priv, wh, err := LoadWebhookSigner(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := keys.EncodeWebhookPublicKey(priv.Public().(ed25519.PublicKey)); wh.PublicKey != want || want != d.Webhook.PublicKey {
		t.Errorf("webhook key %s, document lists %s", want, d.Webhook.PublicKey)
	}
	if priv.Equal(seedKey(1)) {
		t.Error("the webhook key is the signing key")
	}
	loaded, err := keys.Load(filepath.Join(dir, keys.DocumentFile))
	if err != nil || !keys.SameDocument(loaded, d) {
		t.Fatalf("keys.json = %+v, %v", loaded, err)
	}
	// Idempotent.
	again, err := EnsureWebhookKey(dir, at.Add(time.Hour), seedReader(8))
	if err != nil || !keys.SameDocument(again, d) {
		t.Errorf("second EnsureWebhookKey = %+v, %v", again, err)
	}
	// A rotation keeps the webhook key; OpenDir accepts the directory.
	if _, _, err := RotateDir(dir, at.Add(2*time.Hour), seedReader(3)); err != nil {
		t.Fatal(err)
	}
	doc, _, err := OpenDir(dir, at.Add(3*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if doc.Webhook == nil || *doc.Webhook != *d.Webhook {
		t.Errorf("after rotation the webhook member is %+v", doc.Webhook)
	}
	vs, err := Versions(dir)
	if err != nil || len(vs) != 3 {
		t.Fatalf("versions = %d, %v", len(vs), err)
	}
	if vs[1].Event != attest.KeysEventWebhookKeyAdded || vs[1].Document.FormatVersion != keys.FormatVersion3 || vs[0].Document.FormatVersion != keys.FormatVersion {
		t.Errorf("version 2 = %s (format %d), version 1 format %d", vs[1].Event, vs[1].Document.FormatVersion, vs[0].Document.FormatVersion)
	}

	// The key file is refused when others can read it.
	if err := os.Chmod(filepath.Join(dir, WebhookKeyFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadWebhookSigner(dir); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a 0644 webhook key: %v", err)
	}
}

func TestEnsureWebhookKeyAfterCrash(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keys")
	if _, err := GenerateDir(dir, "https://probity.dev", t0, seedReader(1)); err != nil {
		t.Fatal(err)
	}
	// A crash after writing the key file, before its version.
	line, err := EncodeWebhookSecretKey(seedKey(4))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, WebhookKeyFile), []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := EnsureWebhookKey(dir, t0.Add(time.Minute), seedReader(7))
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := keys.EncodeWebhookPublicKey(seedKey(4).Public().(ed25519.PublicKey)); d.Webhook.PublicKey != want {
		t.Errorf("published %s, want the key already written %s", d.Webhook.PublicKey, want)
	}
	// A directory without a history is refused: OpenDir first.
	legacy := legacyDir(t, "https://probity.dev", t0, nil)
	if _, err := EnsureWebhookKey(legacy, t0.Add(time.Minute), nil); err == nil || !strings.Contains(err.Error(), "OpenDir") {
		t.Errorf("a directory without history: %v", err)
	}
}

// TestEnsureWebhookKeyRace: processes starting at once all end with the one key the
// document lists.
func TestEnsureWebhookKeyRace(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keys")
	if _, err := GenerateDir(dir, "https://probity.dev", t0, seedReader(1)); err != nil {
		t.Fatal(err)
	}
	docs := make(chan *keys.Document, 4)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			d, err := EnsureWebhookKey(dir, t0.Add(time.Minute), nil)
			docs <- d
			errs <- err
		}()
	}
	var first *keys.Document
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
		d := <-docs
		if first == nil {
			first = d
		} else if !keys.SameDocument(first, d) {
			t.Errorf("two documents: %+v and %+v", first.Webhook, d.Webhook)
		}
	}
	if vs, err := Versions(dir); err != nil || len(vs) != 2 {
		t.Errorf("versions = %d, %v", len(vs), err)
	}
	if _, _, err := LoadWebhookSigner(dir); err != nil {
		t.Error(err)
	}
}
