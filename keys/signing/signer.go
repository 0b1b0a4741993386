package signing

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/x509"
	"errors"

	"github.com/probity-dev/probity/keys"
)

// Signer signs and verifies DSSE pre-authentication encodings with an Ed25519 key. It
// implements dsse.SignerVerifier from github.com/secure-systems-lab/go-securesystemslib
// (asserted in the tests, so that this package need not import dsse). Its key ID is the
// key_id of the key document entry for its public key.
type Signer struct {
	priv ed25519.PrivateKey
	pub  ed25519.PublicKey
	id   string
	err  error // non-nil if the private key given to NewSigner was unusable
}

// NewSigner returns a Signer for priv, which it copies. If priv is not a well-formed
// Ed25519 private key, every Sign, Verify and KeyID call returns an error and ID returns "".
func NewSigner(priv ed25519.PrivateKey) *Signer {
	if err := checkPrivateKey(priv); err != nil {
		return &Signer{err: err}
	}
	priv = bytes.Clone(priv)
	pub := priv.Public().(ed25519.PublicKey)
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return &Signer{err: err}
	}
	return &Signer{priv: priv, pub: pub, id: keys.KeyID(der)}
}

// Sign returns the Ed25519 signature of data.
func (s *Signer) Sign(_ context.Context, data []byte) ([]byte, error) {
	if s.err != nil {
		return nil, s.err
	}
	return ed25519.Sign(s.priv, data), nil
}

// Verify checks that sig is the signer's Ed25519 signature of data.
func (s *Signer) Verify(_ context.Context, data, sig []byte) error {
	if s.err != nil {
		return s.err
	}
	if !ed25519.Verify(s.pub, data, sig) {
		return errors.New("ed25519 signature does not verify")
	}
	return nil
}

// KeyID returns the signer's key_id (see keys.KeyID).
func (s *Signer) KeyID() (string, error) {
	if s.err != nil {
		return "", s.err
	}
	return s.id, nil
}

// ID returns the signer's key_id, or "" if the signer's key is unusable.
func (s *Signer) ID() string {
	return s.id
}

// Public returns the signer's ed25519.PublicKey (nil if its key is unusable).
func (s *Signer) Public() crypto.PublicKey {
	if s.err != nil {
		return nil
	}
	return ed25519.PublicKey(bytes.Clone(s.pub))
}
