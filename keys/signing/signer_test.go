package signing

import (
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"testing"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"

	"github.com/probity-dev/probity/keys"
)

var _ dsse.SignerVerifier = (*Signer)(nil)

func TestSignerKeyID(t *testing.T) {
	priv := seedKey(5)
	s := NewSigner(priv)
	der, err := x509.MarshalPKIXPublicKey(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.KeyID()
	if err != nil {
		t.Fatal(err)
	}
	k := testKey(t, 5, t0)
	if id != keys.KeyID(der) || s.ID() != id || k.KeyID != id {
		t.Fatalf("KeyID() = %s, ID() = %s, KeyID(spki) = %s, NewKey = %s", id, s.ID(), keys.KeyID(der), k.KeyID)
	}
	if pub, ok := s.Public().(ed25519.PublicKey); !ok || !pub.Equal(priv.Public()) {
		t.Fatalf("Public() = %#v", s.Public())
	}
}

func TestSignerDSSE(t *testing.T) {
	ctx := context.Background()
	s := NewSigner(seedKey(5))
	es, err := dsse.NewEnvelopeSigner(s)
	if err != nil {
		t.Fatal(err)
	}
	env, err := es.SignPayload(ctx, "application/vnd.in-toto+json", []byte(`{"_type":"https://in-toto.io/Statement/v1"}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(env.Signatures) != 1 || env.Signatures[0].KeyID != s.ID() {
		t.Fatalf("signatures = %+v", env.Signatures)
	}
	ev, err := dsse.NewEnvelopeVerifier(s)
	if err != nil {
		t.Fatal(err)
	}
	accepted, err := ev.Verify(ctx, env)
	if err != nil || len(accepted) != 1 || accepted[0].KeyID != s.ID() {
		t.Fatalf("Verify = %+v, %v", accepted, err)
	}
	// The signature is plain Ed25519 over the PAE.
	sig, _ := base64.StdEncoding.DecodeString(env.Signatures[0].Sig)
	payload, _ := env.DecodeB64Payload()
	if !ed25519.Verify(seedKey(5).Public().(ed25519.PublicKey), dsse.PAE(env.PayloadType, payload), sig) {
		t.Fatal("signature is not Ed25519 over the PAE")
	}
	// Tampering is caught.
	env.Payload = base64.StdEncoding.EncodeToString([]byte(`{}`))
	if _, err := ev.Verify(ctx, env); err == nil {
		t.Fatal("tampered envelope verified")
	}
	if err := s.Verify(ctx, []byte("a"), sig); err == nil {
		t.Fatal("Verify accepted a wrong signature")
	}
	// Another key does not verify.
	other, _ := dsse.NewEnvelopeVerifier(NewSigner(seedKey(6)))
	env.Payload = base64.StdEncoding.EncodeToString(payload)
	if _, err := other.Verify(ctx, env); err == nil {
		t.Fatal("envelope verified under another key")
	}
}

func TestSignerBadKey(t *testing.T) {
	s := NewSigner(ed25519.PrivateKey(make([]byte, 10)))
	if _, err := s.Sign(context.Background(), []byte("x")); err == nil {
		t.Error("Sign with a bad key succeeded")
	}
	if _, err := s.KeyID(); err == nil || s.ID() != "" || s.Public() != nil {
		t.Error("bad key has an ID or public key")
	}
	if err := s.Verify(context.Background(), nil, nil); err == nil {
		t.Error("Verify with a bad key succeeded")
	}
}
