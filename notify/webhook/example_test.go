package webhook_test

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/notify/webhook"
)

// A receiver's handler: verify the body as received with the webhook key of Probity's
// key document (webhook.public_key of /.well-known/probity-keys.json), then parse it.
func ExampleVerify() {
	const probityWebhookKey = "whpk_…" // from the key document, fetched once and pinned
	http.HandleFunc("/probity-hook", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		d, err := webhook.Verify(probityWebhookKey, r.Header, body)
		if err != nil {
			http.Error(w, "not signed by Probity", http.StatusUnauthorized)
			return
		}
		fmt.Println("delivery", d.ID) // deduplicate on d.ID: a retry has the same id
		w.WriteHeader(http.StatusNoContent)
	})
}

// verifyPlain is the README's verification in plain Go (standard library only): what a
// receiver writes without importing Probity.
func verifyPlain(r *http.Request, body []byte, whpk string) error {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(whpk, "whpk_"))
	if err != nil || len(key) != ed25519.PublicKeySize {
		return errors.New("not a whpk_ key")
	}
	id, ts := r.Header.Get("webhook-id"), r.Header.Get("webhook-timestamp")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if id == "" || err != nil {
		return errors.New("missing webhook-id or webhook-timestamp")
	}
	if d := time.Since(time.Unix(sec, 0)); d > 5*time.Minute || d < -5*time.Minute {
		return errors.New("webhook-timestamp too far from now")
	}
	signed := []byte(id + "." + ts + "." + string(body))
	for _, s := range strings.Fields(r.Header.Get("webhook-signature")) {
		if b64, ok := strings.CutPrefix(s, "v1a,"); ok {
			sig, err := base64.StdEncoding.DecodeString(b64)
			if err == nil && ed25519.Verify(key, signed, sig) {
				return nil
			}
		}
	}
	return errors.New("no valid v1a signature")
}

// TestPlainVerification: the README's plain-Go verification accepts a signed delivery
// and refuses a tampered one.
func TestPlainVerification(t *testing.T) {
	_, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	whpk, err := keys.EncodeWebhookPublicKey(priv.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"type":"entry.changed"}`)
	h, err := webhook.Sign(priv, "msg_1_2_3", time.Now(), body)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/probity-hook", nil)
	h.Set(req.Header)
	if err := verifyPlain(req, body, whpk); err != nil {
		t.Errorf("plain verification: %v", err)
	}
	if err := verifyPlain(req, []byte(`{"type":"entry.changed "}`), whpk); err == nil {
		t.Error("plain verification accepted a tampered body")
	}
	if _, err := webhook.Verify(whpk, req.Header, body); err != nil {
		t.Errorf("webhook.Verify: %v", err)
	}
}
