package webhook

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/keys"
)

// The worked example of the package documentation.
const (
	workedPublicKey = "whpk_A6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg="
	workedID        = "msg_1_2_3"
	workedTimestamp = 1795000000
	workedBody      = `{"type":"entry.changed"}`
	workedSignature = "v1a,JqEC2tlxMBoMWn1OTw7Di09fEqNQ9yOvCA1Eg2pALMKAp9U6V1+StyVA5TMORODwkUcMxBro3LnMHoUfzzxBAw=="
)

func workedKey() ed25519.PrivateKey {
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = byte(i)
	}
	return ed25519.NewKeyFromSeed(seed)
}

func TestWorkedExample(t *testing.T) {
	priv := workedKey()
	pk, err := keys.EncodeWebhookPublicKey(priv.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	h, err := Sign(priv, workedID, time.Unix(workedTimestamp, 0), []byte(workedBody))
	if err != nil {
		t.Fatal(err)
	}
	if pk != workedPublicKey || h.Signature != workedSignature || h.Timestamp != strconv.Itoa(workedTimestamp) || h.ID != workedID {
		t.Errorf("worked example: public key %s, headers %+v", pk, h)
	}
	if got := string(SignedContent(workedID, workedTimestamp, []byte(workedBody))); got != `msg_1_2_3.1795000000.{"type":"entry.changed"}` {
		t.Errorf("signed content %q", got)
	}
	hdr := http.Header{}
	h.Set(hdr)
	v := &Verifier{Key: priv.Public().(ed25519.PublicKey), Now: func() time.Time { return time.Unix(workedTimestamp+60, 0) }}
	got, err := v.Verify(hdr, []byte(workedBody))
	if err != nil || got.ID != workedID || got.Timestamp.Unix() != workedTimestamp {
		t.Errorf("Verify = %+v, %v", got, err)
	}
}

// TestVerify: a delivery verifies with the published key and fails when its body,
// timestamp or id changes, when it is signed by another key, too old or too new, or its
// headers are missing, repeated or malformed.
func TestVerify(t *testing.T) {
	priv := workedKey()
	pub := priv.Public().(ed25519.PublicKey)
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	body := []byte(`{"type":"entry.changed","data":{}}`)
	signed := func() http.Header {
		h, err := Sign(priv, "msg_7_42_3", at, body)
		if err != nil {
			t.Fatal(err)
		}
		hdr := http.Header{}
		h.Set(hdr)
		return hdr
	}
	other, err := Sign(ed25519.NewKeyFromSeed(make([]byte, 32)), "msg_7_42_3", at, body)
	if err != nil {
		t.Fatal(err)
	}
	v := &Verifier{Key: pub, Now: func() time.Time { return at }}
	if _, err := v.Verify(signed(), body); err != nil {
		t.Fatalf("a good delivery: %v", err)
	}
	edit := func(f func(http.Header)) http.Header { h := signed(); f(h); return h }
	for name, tc := range map[string]struct {
		h    http.Header
		body []byte
		want error
	}{
		"body changed":      {signed(), []byte(`{"type":"entry.changed","data":{} }`), ErrSignature},
		"body empty":        {signed(), nil, ErrSignature},
		"timestamp changed": {edit(func(h http.Header) { h.Set(HeaderTimestamp, strconv.FormatInt(at.Unix()+1, 10)) }), body, ErrSignature},
		"id changed":        {edit(func(h http.Header) { h.Set(HeaderID, "msg_7_42_4") }), body, ErrSignature},
		"another key":       {edit(func(h http.Header) { h.Set(HeaderSignature, other.Signature) }), body, ErrSignature},
		"v1 (symmetric) only": {edit(func(h http.Header) {
			h.Set(HeaderSignature, "v1,"+strings.TrimPrefix(h.Get(HeaderSignature), "v1a,"))
		}), body, ErrSignature},
		"signature truncated": {edit(func(h http.Header) { s := h.Get(HeaderSignature); h.Set(HeaderSignature, s[:len(s)-4]) }), body, ErrSignature},
		"id missing":          {edit(func(h http.Header) { h.Del(HeaderID) }), body, ErrMissingHeader},
		"id with a full stop": {edit(func(h http.Header) { h.Set(HeaderID, "msg.1") }), body, ErrMissingHeader},
		"timestamp missing":   {edit(func(h http.Header) { h.Del(HeaderTimestamp) }), body, ErrMissingHeader},
		"timestamp not a number": {edit(func(h http.Header) {
			h.Set(HeaderTimestamp, "1e9")
		}), body, ErrMissingHeader},
		"timestamp negative": {edit(func(h http.Header) { h.Set(HeaderTimestamp, "-1") }), body, ErrMissingHeader},
		"signature missing":  {edit(func(h http.Header) { h.Del(HeaderSignature) }), body, ErrMissingHeader},
		"signature twice": {edit(func(h http.Header) {
			h.Add(HeaderSignature, other.Signature)
		}), body, ErrMissingHeader},
		"too many signatures": {edit(func(h http.Header) {
			h.Set(HeaderSignature, strings.Repeat(other.Signature+" ", 20)+h.Get(HeaderSignature))
		}), body, ErrMissingHeader},
	} {
		_, err := v.Verify(tc.h, tc.body)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
	}
	// The timestamp is checked against the tolerance both ways.
	for _, d := range []time.Duration{-DefaultTolerance - time.Second, DefaultTolerance + time.Second} {
		late := &Verifier{Key: pub, Now: func() time.Time { return at.Add(d) }}
		if _, err := late.Verify(signed(), body); !errors.Is(err, ErrTimestamp) {
			t.Errorf("verified %s from the signing time: %v", d, err)
		}
	}
	edge := &Verifier{Key: pub, Now: func() time.Time { return at.Add(DefaultTolerance) }}
	if _, err := edge.Verify(signed(), body); err != nil {
		t.Errorf("at the tolerance's edge: %v", err)
	}
	// Among several signatures, one v1a that verifies is enough; others are skipped.
	several := edit(func(h http.Header) {
		h.Set(HeaderSignature, "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4= "+other.Signature+" "+h.Get(HeaderSignature))
	})
	if _, err := v.Verify(several, body); err != nil {
		t.Errorf("several signatures: %v", err)
	}
	// Verify with the whpk_ form.
	pk, _ := keys.EncodeWebhookPublicKey(pub)
	now := time.Now()
	h, err := Sign(priv, "msg_1", now, body)
	if err != nil {
		t.Fatal(err)
	}
	hdr := http.Header{}
	h.Set(hdr)
	if _, err := Verify(pk, hdr, body); err != nil {
		t.Errorf("Verify(whpk_…): %v", err)
	}
	if _, err := Verify("whsk_"+base64.StdEncoding.EncodeToString(priv), hdr, body); err == nil {
		t.Error("Verify accepted a secret key as the public key")
	}
}

func TestSignRefusesBadIDs(t *testing.T) {
	for _, id := range []string{"", "a.b", "a b", strings.Repeat("x", 257), "é"} {
		if _, err := Sign(workedKey(), id, time.Now(), nil); err == nil {
			t.Errorf("Sign accepted id %q", id)
		}
	}
}

// FuzzVerify: Verify never panics on any headers and body, and never accepts a delivery
// it did not see signed.
func FuzzVerify(f *testing.F) {
	priv := workedKey()
	at := time.Unix(workedTimestamp, 0)
	good, err := Sign(priv, workedID, at, []byte(workedBody))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good.ID, good.Timestamp, good.Signature, []byte(workedBody))
	f.Add("msg_1", "1795000000", "v1a,"+strings.Repeat("A", 86)+"==", []byte("{}"))
	f.Add("", "", "", []byte(nil))
	f.Add("a.b", "-1", "v1a, v1a,,", []byte("x"))
	v := &Verifier{Key: priv.Public().(ed25519.PublicKey), Now: func() time.Time { return at }}
	f.Fuzz(func(t *testing.T, id, ts, sig string, body []byte) {
		h := http.Header{}
		h.Set(HeaderID, id)
		h.Set(HeaderTimestamp, ts)
		h.Set(HeaderSignature, sig)
		got, err := v.Verify(h, body)
		if err != nil {
			return
		}
		sec, _ := strconv.ParseInt(ts, 10, 64)
		if !anyVerifies(priv.Public().(ed25519.PublicKey), SignedContent(id, sec, body), sig) || got.ID != id {
			t.Fatalf("accepted id %q ts %q sig %q body %q", id, ts, sig, body)
		}
	})
}

// anyVerifies reports whether some v1a entry of a webhook-signature value verifies.
func anyVerifies(pub ed25519.PublicKey, content []byte, header string) bool {
	for _, e := range strings.Split(header, " ") {
		if b, ok := strings.CutPrefix(e, "v1a,"); ok {
			if sig, err := base64.StdEncoding.DecodeString(b); err == nil && ed25519.Verify(pub, content, sig) {
				return true
			}
		}
	}
	return false
}
