package verifier_test

import (
	"bytes"
	"crypto/ed25519"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/verifier"
)

// FuzzParseEnvelope: parsing never panics, and whatever parses re-encodes to an envelope
// that parses to the same values.
func FuzzParseEnvelope(f *testing.F) {
	f.Add([]byte(`{"payloadType":"a","payload":"","signatures":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		env, payload, err := attest.ParseEnvelope(data)
		if err != nil {
			return
		}
		again, err := attest.EncodeEnvelope(env)
		if err != nil {
			t.Fatal(err)
		}
		env2, payload2, err := attest.ParseEnvelope(again)
		if err != nil || env2.PayloadType != env.PayloadType || !bytes.Equal(payload, payload2) || len(env2.Signatures) != len(env.Signatures) {
			t.Fatalf("re-encoded envelope differs: %v", err)
		}
	})
}

// FuzzVerify: Verify never panics, and whatever verifies is canonical, decodes, and
// carries only valid signatures by listed keys.
func FuzzVerify(f *testing.F) {
	vk := newVectorKeys()
	f.Add(sign(fullStatement(inWindow), vk.active))
	f.Add(sign(authRequiredStatement(inWindow), vk.active))
	fp := attest.Fingerprints{Toolset: attest.Digest([]byte("t")), Schema: attest.Digest([]byte("s")), Surface: attest.Digest([]byte("u"))}
	f.Add(sign(attest.NewBaselineStatement(attest.NewBaselinePredicate(attest.ChangeEntry{Kind: "remote", Slug: "mcp-example-com-mcp", URL: vectorURL},
		1, time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), "c1", attest.Digest([]byte("round")), fp, 2, "0.1.0")), vk.active))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := verifier.Verify(data, vk.doc, verifier.DefaultPolicy())
		if res == nil {
			t.Fatalf("nil result: %v", err)
		}
		if err != nil {
			if res.OK() || res.Failure == nil {
				t.Fatalf("error %v but result OK", err)
			}
			return
		}
		env, payload, perr := attest.ParseEnvelope(data)
		if perr != nil || !attest.IsCanonical(payload) {
			t.Fatalf("verified an envelope that does not parse or is not canonical")
		}
		if _, derr := attest.DecodeStatement(payload); derr != nil {
			t.Fatalf("verified a statement that does not decode: %v", derr)
		}
		for _, s := range env.Signatures {
			k, ok := vk.doc.Lookup(s.KeyID)
			sig, _ := attest.DecodeBase64(s.Sig)
			if !ok || !ed25519.Verify(k.PublicKey(), attest.PAE(payload), sig) {
				t.Fatalf("verified with an invalid signature")
			}
		}
	})
}
