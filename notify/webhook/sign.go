package webhook

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/probity-dev/probity/keys"
)

// The Standard Webhooks headers and signature identifier.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
	// SignatureVersion is the Standard Webhooks identifier of an asymmetric (Ed25519)
	// signature.
	SignatureVersion = "v1a"
	// DefaultTolerance is how far a delivery's timestamp may be from the receiver's
	// clock, either way, for Verify to accept it.
	DefaultTolerance = 5 * time.Minute
)

// Bounds Verify applies before any work.
const (
	maxIDLen         = 256 // bytes of a webhook-id
	maxTimestampLen  = 19  // digits of a webhook-timestamp
	maxSignatureLen  = 4096
	maxSignatures    = 16 // entries of a webhook-signature header
	encodedSigLength = 88 // standard base64 of a 64-byte signature
)

// Errors Verify returns (wrapped, with the detail); receivers branch on them.
var (
	// ErrMissingHeader: webhook-id, webhook-timestamp or webhook-signature is missing,
	// repeated or malformed.
	ErrMissingHeader = errors.New("webhook: missing or malformed Standard Webhooks header")
	// ErrTimestamp: webhook-timestamp is further from now than the tolerance (a replay,
	// or a clock far off).
	ErrTimestamp = errors.New("webhook: timestamp outside the tolerance")
	// ErrSignature: no v1a signature in webhook-signature verifies with the key.
	ErrSignature = errors.New("webhook: no valid v1a signature")
)

// SignedContent returns the bytes a delivery's signature covers, exactly as Standard
// Webhooks defines them: the message id, ".", the timestamp in decimal Unix seconds, ".",
// and the body as sent.
func SignedContent(msgID string, timestamp int64, body []byte) []byte {
	ts := strconv.FormatInt(timestamp, 10)
	b := make([]byte, 0, len(msgID)+1+len(ts)+1+len(body))
	b = append(b, msgID...)
	b = append(b, '.')
	b = append(b, ts...)
	b = append(b, '.')
	return append(b, body...)
}

// Headers are the three Standard Webhooks headers of one attempt.
type Headers struct {
	ID        string // webhook-id
	Timestamp string // webhook-timestamp: decimal Unix seconds
	Signature string // webhook-signature: "v1a," + base64 signature
}

// Set sets the headers on h.
func (s Headers) Set(h http.Header) {
	h.Set(HeaderID, s.ID)
	h.Set(HeaderTimestamp, s.Timestamp)
	h.Set(HeaderSignature, s.Signature)
}

// Sign signs one attempt of the delivery msgID with body at time at: webhook-signature
// is "v1a," followed by the standard base64 (padded) of the Ed25519 signature by priv
// of SignedContent(msgID, at in Unix seconds, body). msgID must be 1 to 256 bytes of
// printable ASCII without "." or spaces (it is the project's own, never a user's).
func Sign(priv ed25519.PrivateKey, msgID string, at time.Time, body []byte) (Headers, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return Headers{}, fmt.Errorf("webhook: signing key is %d bytes, want %d", len(priv), ed25519.PrivateKeySize)
	}
	if err := checkID(msgID); err != nil {
		return Headers{}, err
	}
	ts := at.Unix()
	sig := ed25519.Sign(priv, SignedContent(msgID, ts, body))
	return Headers{
		ID:        msgID,
		Timestamp: strconv.FormatInt(ts, 10),
		Signature: SignatureVersion + "," + base64.StdEncoding.EncodeToString(sig),
	}, nil
}

// checkID reports what is wrong with a webhook-id.
func checkID(id string) error {
	if id == "" || len(id) > maxIDLen {
		return fmt.Errorf("%w: webhook-id is %d bytes; 1 to %d are allowed", ErrMissingHeader, len(id), maxIDLen)
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c <= ' ' || c >= 0x7f || c == '.' {
			return fmt.Errorf("%w: webhook-id holds a character other than printable ASCII without spaces and \".\"", ErrMissingHeader)
		}
	}
	return nil
}

// Verified is what Verify checked: the delivery's id (the receiver's idempotency key)
// and the time it was signed.
type Verified struct {
	ID        string
	Timestamp time.Time
}

// Verifier verifies deliveries signed with one public key.
type Verifier struct {
	// Key is the issuer's webhook public key (PublicKeyFromDocument, or
	// keys.ParseWebhookPublicKey of a "whpk_" string).
	Key ed25519.PublicKey
	// Tolerance is how far webhook-timestamp may be from Now; 0 means
	// DefaultTolerance.
	Tolerance time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Verify checks a delivery as Standard Webhooks says a receiver must: the three headers
// present once each, webhook-timestamp within the tolerance of now, and at least one
// "v1a" entry of webhook-signature (a space-separated list; other identifiers are
// skipped) that verifies with v.Key over SignedContent(id, timestamp, body). body must
// be the request body exactly as received, before any JSON parsing. Errors wrap
// ErrMissingHeader, ErrTimestamp or ErrSignature.
func (v *Verifier) Verify(h http.Header, body []byte) (*Verified, error) {
	if len(v.Key) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("webhook: verifying key is %d bytes, want %d", len(v.Key), ed25519.PublicKeySize)
	}
	id, err := oneHeader(h, HeaderID)
	if err != nil {
		return nil, err
	}
	if err := checkID(id); err != nil {
		return nil, err
	}
	tsText, err := oneHeader(h, HeaderTimestamp)
	if err != nil {
		return nil, err
	}
	if len(tsText) > maxTimestampLen || strings.TrimLeft(tsText, "0123456789") != "" || (len(tsText) > 1 && tsText[0] == '0') {
		return nil, fmt.Errorf("%w: webhook-timestamp is not decimal Unix seconds", ErrMissingHeader)
	}
	ts, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("%w: webhook-timestamp is not decimal Unix seconds", ErrMissingHeader)
	}
	sigs, err := oneHeader(h, HeaderSignature)
	if err != nil {
		return nil, err
	}
	if len(sigs) > maxSignatureLen {
		return nil, fmt.Errorf("%w: webhook-signature is longer than %d bytes", ErrMissingHeader, maxSignatureLen)
	}
	now := time.Now
	if v.Now != nil {
		now = v.Now
	}
	tol := v.Tolerance
	if tol <= 0 {
		tol = DefaultTolerance
	}
	at := time.Unix(ts, 0).UTC()
	if d := now().Sub(at); d > tol || d < -tol {
		return nil, fmt.Errorf("%w: signed at %s, %s from now (tolerance %s)", ErrTimestamp, at.Format(time.RFC3339), d.Round(time.Second), tol)
	}
	entries := strings.Split(sigs, " ")
	if len(entries) > maxSignatures {
		return nil, fmt.Errorf("%w: webhook-signature lists %d signatures; at most %d are read", ErrMissingHeader, len(entries), maxSignatures)
	}
	content := SignedContent(id, ts, body)
	for _, e := range entries {
		version, enc, ok := strings.Cut(e, ",")
		if !ok || version != SignatureVersion || len(enc) != encodedSigLength {
			continue
		}
		sig, err := base64.StdEncoding.Strict().DecodeString(enc)
		if err != nil || len(sig) != ed25519.SignatureSize {
			continue
		}
		if ed25519.Verify(v.Key, content, sig) {
			return &Verified{ID: id, Timestamp: at}, nil
		}
	}
	return nil, ErrSignature
}

// oneHeader returns the one value of the header name.
func oneHeader(h http.Header, name string) (string, error) {
	vs := h.Values(name)
	switch {
	case len(vs) == 0 || vs[0] == "":
		return "", fmt.Errorf("%w: %s is missing", ErrMissingHeader, name)
	case len(vs) > 1:
		return "", fmt.Errorf("%w: %s is given %d times", ErrMissingHeader, name, len(vs))
	}
	return vs[0], nil
}

// Verify verifies a delivery with the issuer's webhook public key in its "whpk_" form
// (the key document's webhook.public_key) at the current time, with the default
// tolerance: Verifier.Verify.
func Verify(publicKey string, h http.Header, body []byte) (*Verified, error) {
	pub, err := keys.ParseWebhookPublicKey(publicKey)
	if err != nil {
		return nil, fmt.Errorf("webhook: public key %v", err)
	}
	return (&Verifier{Key: pub}).Verify(h, body)
}

// PublicKeyFromDocument returns the webhook public key a key document publishes (parse
// and check the document with keys.Parse or keys.Load first); an error if it lists none.
func PublicKeyFromDocument(doc *keys.Document) (ed25519.PublicKey, error) {
	if doc == nil || doc.Webhook == nil {
		return nil, errors.New("webhook: the key document lists no webhook key (format_version 3 member webhook)")
	}
	return doc.Webhook.Key()
}
