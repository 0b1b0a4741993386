package keys

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// WebhookPublicKeyPrefix starts a Standard Webhooks public key ("whpk_" + standard base64
// of the 32-byte Ed25519 public key), the form the key document's webhook member and
// receivers use.
const WebhookPublicKeyPrefix = "whpk_"

// webhookPublicKeyLen is the length of an encoded webhook public key: the prefix and 44
// base64 characters.
const webhookPublicKeyLen = len(WebhookPublicKeyPrefix) + 44

// Webhook is the key document's webhook member (format_version 3): the Ed25519 public
// key that signs the issuer's webhook deliveries (Standard Webhooks, signature scheme
// v1a; package notify/webhook), so that a receiver verifies them with the published
// document and no shared secret.
type Webhook struct {
	PublicKey string `json:"public_key"` // "whpk_" + standard base64 of the 32-byte key
}

// EncodeWebhookPublicKey returns pub in the Standard Webhooks form "whpk_" + standard
// base64 (padded) of the 32 raw key bytes.
func EncodeWebhookPublicKey(pub ed25519.PublicKey) (string, error) {
	if len(pub) != ed25519.PublicKeySize {
		return "", fmt.Errorf("ed25519 public key is %d bytes, want %d", len(pub), ed25519.PublicKeySize)
	}
	return WebhookPublicKeyPrefix + base64.StdEncoding.EncodeToString(pub), nil
}

// ParseWebhookPublicKey decodes a Standard Webhooks public key, "whpk_" followed by the
// canonical standard base64 of 32 bytes, and nothing else.
func ParseWebhookPublicKey(s string) (ed25519.PublicKey, error) {
	rest, ok := strings.CutPrefix(s, WebhookPublicKeyPrefix)
	if !ok {
		return nil, errors.New(`is not a webhook public key: it does not start with "whpk_"`)
	}
	if len(s) != webhookPublicKeyLen {
		return nil, fmt.Errorf("is %d bytes long; a webhook public key is %d", len(s), webhookPublicKeyLen)
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(rest)
	if err != nil || base64.StdEncoding.EncodeToString(raw) != rest || len(raw) != ed25519.PublicKeySize {
		return nil, errors.New(`is not "whpk_" and the canonical standard base64 of a 32-byte Ed25519 key`)
	}
	return ed25519.PublicKey(raw), nil
}

// Key returns the webhook public key, or an error if PublicKey is malformed.
func (w *Webhook) Key() (ed25519.PublicKey, error) {
	pub, err := ParseWebhookPublicKey(w.PublicKey)
	if err != nil {
		return nil, docErr("webhook.public_key", "%v", err)
	}
	return pub, nil
}

// validate checks the webhook member as part of d: a well-formed key that is not also
// one of d's record signing keys (a key has one use).
func (w *Webhook) validate(d *Document) error {
	pub, err := w.Key()
	if err != nil {
		return err
	}
	for i := range d.Keys {
		if p, _, err := parseSPKI(d.Keys[i].SPKI); err == nil && bytes.Equal(p, pub) {
			return docErr("webhook.public_key", "is the key of keys[%d] (key_id %s); the webhook key must be a key of its own", i, d.Keys[i].KeyID)
		}
	}
	return nil
}

// decodeWebhook decodes the webhook member: an object with exactly public_key.
func decodeWebhook(data json.RawMessage) (*Webhook, error) {
	members, err := decodeObject(data, []string{"public_key"})
	if err != nil {
		return nil, docErr("webhook", "must be an object with public_key: %v", err)
	}
	w := new(Webhook)
	if err := decodeString(members["public_key"], &w.PublicKey); err != nil {
		return nil, docErr("webhook.public_key", "%v", err)
	}
	return w, nil
}
