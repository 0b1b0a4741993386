package signing

import (
	"bytes"
	"crypto/ed25519"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/keys"
)

// WebhookKeyFile holds the webhook signing key, which signs webhook deliveries (package
// notify/webhook), beside the record signing key: one line, the Standard Webhooks
// secret key form (WebhookSecretKeyPrefix + standard base64 of the 64-byte Ed25519
// private key, seed then public key), and a newline; mode 0600. The key document lists
// its public key as webhook.public_key (format_version 3).
const WebhookKeyFile = "webhook-key.whsk"

// WebhookSecretKeyPrefix starts a Standard Webhooks secret key ("whsk_").
const WebhookSecretKeyPrefix = "whsk_"

// maxWebhookKeyFileSize bounds the webhook key file; the key line is 94 bytes.
const maxWebhookKeyFileSize = 1 << 10

// EncodeWebhookSecretKey returns priv in the Standard Webhooks form "whsk_" + standard
// base64 of the 64-byte Ed25519 private key (the seed, then the public key).
func EncodeWebhookSecretKey(priv ed25519.PrivateKey) (string, error) {
	if err := checkPrivateKey(priv); err != nil {
		return "", err
	}
	return WebhookSecretKeyPrefix + base64.StdEncoding.EncodeToString(priv), nil
}

// ParseWebhookSecretKey decodes a Standard Webhooks secret key: "whsk_" and the canonical
// standard base64 of either the 64-byte private key (seed then public key, whose public
// half must be the seed's) or the 32-byte seed alone, the two forms implementations
// write.
func ParseWebhookSecretKey(s string) (ed25519.PrivateKey, error) {
	rest, ok := strings.CutPrefix(s, WebhookSecretKeyPrefix)
	if !ok {
		return nil, errors.New(`not a webhook secret key: it does not start with "whsk_"`)
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(rest)
	defer clear(raw)
	if err != nil || base64.StdEncoding.EncodeToString(raw) != rest {
		return nil, errors.New(`not a webhook secret key: not canonical standard base64 after "whsk_"`)
	}
	switch len(raw) {
	case ed25519.SeedSize:
		return ed25519.NewKeyFromSeed(raw), nil
	case ed25519.PrivateKeySize:
		priv := ed25519.NewKeyFromSeed(raw[:ed25519.SeedSize])
		if subtle.ConstantTimeCompare(priv[ed25519.SeedSize:], raw[ed25519.SeedSize:]) != 1 {
			clear(priv)
			return nil, errors.New("not a webhook secret key: its public half is not its seed's")
		}
		return priv, nil
	}
	return nil, fmt.Errorf("not a webhook secret key: %d bytes, want %d (private key) or %d (seed)", len(raw), ed25519.PrivateKeySize, ed25519.SeedSize)
}

// readWebhookKey loads the webhook key file at path, refusing one readable by group or
// others.
func readWebhookKey(path string) (ed25519.PrivateKey, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("couldn't load the webhook key: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("webhook key file %q is not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("webhook key file %q is readable by group or others (mode %04o); run: chmod 600 %q", path, perm, path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxWebhookKeyFileSize+1))
	defer clear(data)
	if err == nil && len(data) > maxWebhookKeyFileSize {
		err = fmt.Errorf("file is larger than %d bytes", maxWebhookKeyFileSize)
	}
	if err != nil {
		return nil, fmt.Errorf("couldn't load the webhook key %q: %w", path, err)
	}
	line, ok := bytes.CutSuffix(data, []byte("\n"))
	if !ok || bytes.ContainsAny(line, "\r\n") {
		return nil, fmt.Errorf("webhook key file %q: not one whsk_ key line", path)
	}
	priv, err := ParseWebhookSecretKey(string(line))
	if err != nil {
		return nil, fmt.Errorf("webhook key file %q: %w", path, err)
	}
	return priv, nil
}

// publicWebhook is the key document's webhook member for priv.
func publicWebhook(priv ed25519.PrivateKey) (*keys.Webhook, error) {
	pk, err := keys.EncodeWebhookPublicKey(priv.Public().(ed25519.PublicKey))
	if err != nil {
		return nil, err
	}
	return &keys.Webhook{PublicKey: pk}, nil
}

// EnsureWebhookKey gives the key directory dir a webhook signing key if it has none:
// it writes WebhookKeyFile (mode 0600) and then a signed key document version (event
// webhook_key_added, issued at now, signed by the signing key, format_version 3) that
// lists its public key, and keys.json from it. It returns the key document, which
// lists the webhook key, whether this call added it or it was there. rand supplies the
// key's seed; nil means crypto/rand.
//
// The directory must have its history and log key (OpenDir gives an older directory
// both; call it first). As with the log key, the key file is written before the version
// that publishes it: a crash in between leaves a key that has signed nothing, and the
// next call publishes that key rather than making another.
//
// Several processes starting at once may call it together: a file another one wrote
// first (the key, or the version) is read and used, as OpenDir does. It must not run
// concurrently with rotate or revoke on the same directory.
func EnsureWebhookKey(dir string, now time.Time, rand io.Reader) (*keys.Document, error) {
	d, err := ensureWebhookKey(dir, now, rand)
	for try := 0; errors.Is(err, fs.ErrExist) && try < 10; try++ {
		d, err = ensureWebhookKey(dir, now, rand)
	}
	return d, err
}

func ensureWebhookKey(dir string, now time.Time, rand io.Reader) (*keys.Document, error) {
	s, err := loadState(dir)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, WebhookKeyFile)
	if s.doc.Webhook != nil {
		if _, _, err := LoadWebhookSigner(dir); err != nil {
			return nil, err
		}
		return s.doc, nil
	}
	if s.latest() == nil || s.doc.Log == nil {
		return nil, fmt.Errorf("key directory %s has no signed history or log key yet; open it first (signing.OpenDir)", dir)
	}
	priv, err := readWebhookKey(path)
	if errors.Is(err, fs.ErrNotExist) {
		if priv, err = generateKey(rand); err != nil {
			return nil, err
		}
		line, eerr := EncodeWebhookSecretKey(priv)
		if eerr != nil {
			clear(priv)
			return nil, eerr
		}
		data := []byte(line + "\n")
		err = writeFileAtomic(path, data, 0o600, false)
		clear(data)
	}
	if err != nil {
		return nil, err
	}
	defer clear(priv)
	wh, err := publicWebhook(priv)
	if err != nil {
		return nil, err
	}

	key, err := LoadPrivateKey(filepath.Join(dir, PrivateKeyFile))
	if err != nil {
		return nil, err
	}
	signer := NewSigner(key)
	clear(key)
	now = now.UTC().Truncate(time.Millisecond)
	if !s.doc.AuthorizesAt(signer.ID(), now) {
		return nil, fmt.Errorf("the signing key %s cannot sign the key document at %s (not listed, revoked or outside its window)", signer.ID(), attest.FormatTime(now))
	}
	next := cloneDocument(s.doc)
	next.FormatVersion, next.Webhook = keys.FormatVersion3, wh
	v, err := SignVersion(s.latest(), next, attest.KeysEventWebhookKeyAdded, now, signer)
	if err != nil {
		return nil, err
	}
	if err := s.commit(dir, v); err != nil {
		return nil, err
	}
	return next, nil
}

// LoadWebhookSigner loads the webhook signing key of the key directory dir and the key
// document's webhook member that publishes it. It refuses a key the key document does
// not list (run EnsureWebhookKey first) and a key file readable by group or others.
func LoadWebhookSigner(dir string) (ed25519.PrivateKey, *keys.Webhook, error) {
	doc, err := keys.Load(filepath.Join(dir, keys.DocumentFile))
	if err != nil {
		return nil, nil, err
	}
	if doc.Webhook == nil {
		return nil, nil, fmt.Errorf("the key document in %s lists no webhook key; add one first (signing.EnsureWebhookKey)", dir)
	}
	priv, err := readWebhookKey(filepath.Join(dir, WebhookKeyFile))
	if err != nil {
		return nil, nil, err
	}
	wh, err := publicWebhook(priv)
	if err != nil {
		clear(priv)
		return nil, nil, err
	}
	if *wh != *doc.Webhook {
		clear(priv)
		return nil, nil, fmt.Errorf("the webhook key in %s (%s) is not the one %s lists (%s)", dir, wh.PublicKey, keys.DocumentFile, doc.Webhook.PublicKey)
	}
	w := *doc.Webhook
	return priv, &w, nil
}
