package signing

import (
	"crypto/ed25519"
	cryptorand "crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/keys"
)

// File names inside a key directory, beside keys.DocumentFile.
const (
	// PrivateKeyFile holds the current signing key as PKCS#8 PEM, mode 0600.
	PrivateKeyFile = "signing-key.pem"
	// pendingKeyFile holds a new signing key while a rotation is in progress.
	pendingKeyFile = PrivateKeyFile + ".new"
)

// GenerateDir creates a key directory: a new signing key in dir/signing-key.pem and a key
// document for issuer listing it, valid from now (UTC, truncated to the millisecond), in
// dir/keys.json. dir is created with mode 0700 if missing. It refuses, with an error
// wrapping fs.ErrExist, if either file already exists; use RotateDir to replace a
// signing key. rand supplies the key's seed; nil means crypto/rand.
//
// keys.json is written before signing-key.pem, so a crash in between leaves at most a
// listed public key without a private key, never an unlisted signing key.
func GenerateDir(dir, issuer string, now time.Time, rand io.Reader) (*keys.Document, error) {
	keyPath, docPath := filepath.Join(dir, PrivateKeyFile), filepath.Join(dir, keys.DocumentFile)
	for _, p := range []string{keyPath, docPath} {
		if _, err := os.Lstat(p); err == nil {
			return nil, fmt.Errorf("%s already exists; refusing to replace it: %w", p, fs.ErrExist)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	priv, err := generateKey(rand)
	if err != nil {
		return nil, err
	}
	k, err := keys.NewKey(priv.Public().(ed25519.PublicKey), now)
	if err != nil {
		return nil, err
	}
	d := &keys.Document{FormatVersion: keys.FormatVersion, Issuer: issuer, Keys: []keys.Key{k}}
	docData, err := keys.MarshalDocument(d)
	if err != nil {
		return nil, err
	}
	keyData, err := MarshalPrivateKey(priv)
	if err != nil {
		return nil, err
	}
	defer clear(keyData)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := writeFileAtomic(docPath, docData, 0o644, false); err != nil {
		return nil, err
	}
	if err := writeFileAtomic(keyPath, keyData, 0o600, false); err != nil {
		os.Remove(docPath) // we created it above; without the private key it is useless
		return nil, err
	}
	return d, nil
}

// RotateDir replaces the signing key of the key directory dir with a new one, valid from
// now (UTC, truncated to the millisecond), and returns the updated document and the new
// key. The key matching the old signing-key.pem gets valid_until = now unless it already
// ends earlier, and stays listed so that statements it signed keep verifying. The two
// windows share the instant now: both ends are inclusive, so a statement observed at
// exactly the rotation millisecond verifies under either key. The old private key is
// deleted (replaced), not archived: a retired key that still exists is a forgery risk.
// rand supplies the new key's seed; nil means crypto/rand.
//
// Crash safety: the new private key is first written to signing-key.pem.new, then
// keys.json (now listing it) replaces the old document, then signing-key.pem.new is renamed
// over signing-key.pem. Whatever the point of a crash, signing-key.pem holds a key listed
// in keys.json. If RotateDir finds a signing-key.pem.new whose key keys.json lists, an
// earlier rotation was interrupted after its document was written: it completes that
// rotation (returning its key) instead of starting another. An unlisted
// signing-key.pem.new is left from a rotation interrupted earlier and is deleted.
//
// RotateDir must not run concurrently with other changes to the same directory.
func RotateDir(dir string, now time.Time, rand io.Reader) (*keys.Document, keys.Key, error) {
	keyPath, docPath := filepath.Join(dir, PrivateKeyFile), filepath.Join(dir, keys.DocumentFile)
	pendingPath := filepath.Join(dir, pendingKeyFile)
	d, err := keys.Load(docPath)
	if err != nil {
		return nil, keys.Key{}, err
	}
	if _, err := os.Lstat(pendingPath); err == nil {
		pending, err := LoadPrivateKey(pendingPath)
		if err != nil {
			return nil, keys.Key{}, fmt.Errorf("found %s from an interrupted rotation: %w", pendingPath, err)
		}
		if k, ok := d.Lookup(NewSigner(pending).ID()); ok {
			if err := os.Rename(pendingPath, keyPath); err != nil {
				return nil, keys.Key{}, err
			}
			if err := syncDir(dir); err != nil {
				return nil, keys.Key{}, err
			}
			return d, *k, nil
		}
		if err := os.Remove(pendingPath); err != nil {
			return nil, keys.Key{}, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, keys.Key{}, err
	}

	priv, err := LoadPrivateKey(keyPath)
	if err != nil {
		return nil, keys.Key{}, err
	}
	oldID := NewSigner(priv).ID()
	clear(priv)
	cur, ok := d.Lookup(oldID)
	if !ok {
		return nil, keys.Key{}, fmt.Errorf("the signing key in %s (key_id %s) is not listed in %s", keyPath, oldID, docPath)
	}
	now = now.UTC().Truncate(time.Millisecond)
	if !now.After(cur.ValidFrom) {
		return nil, keys.Key{}, fmt.Errorf("cannot rotate at %s: the signing key %s is valid only from %s", attest.FormatTime(now), oldID, attest.FormatTime(cur.ValidFrom))
	}
	if cur.ValidUntil == nil || cur.ValidUntil.After(now) {
		until := now
		cur.ValidUntil = &until
	}

	newPriv, err := generateKey(rand)
	if err != nil {
		return nil, keys.Key{}, err
	}
	nk, err := keys.NewKey(newPriv.Public().(ed25519.PublicKey), now)
	if err != nil {
		return nil, keys.Key{}, err
	}
	d.Keys = append(d.Keys, nk)
	docData, err := keys.MarshalDocument(d)
	if err != nil {
		return nil, keys.Key{}, err
	}
	keyData, err := MarshalPrivateKey(newPriv)
	if err != nil {
		return nil, keys.Key{}, err
	}
	defer clear(keyData)

	// 1. The new private key, not yet in use.
	if err := writeFileAtomic(pendingPath, keyData, 0o600, false); err != nil {
		return nil, keys.Key{}, err
	}
	// 2. The document listing both keys.
	if err := writeFileAtomic(docPath, docData, 0o644, true); err != nil {
		os.Remove(pendingPath)
		return nil, keys.Key{}, err
	}
	// 3. The new key takes the old one's place; the old private key is gone.
	if err := os.Rename(pendingPath, keyPath); err != nil {
		return nil, keys.Key{}, fmt.Errorf("%s lists the new key but it is still in %s (run rotate again to finish): %w", docPath, pendingPath, err)
	}
	if err := syncDir(dir); err != nil {
		return nil, keys.Key{}, err
	}
	return d, d.Keys[len(d.Keys)-1], nil
}

// RevokeDir marks the key keyID in dir/keys.json revoked at now (UTC, truncated to the
// millisecond) for reason, and returns the updated document. It fails if the key is not
// listed or already revoked, or if reason is empty or longer than keys.MaxReasonLen bytes.
// It does not touch signing-key.pem: if the revoked key is the signing key, rotate next.
//
// RevokeDir must not run concurrently with other changes to the same directory.
func RevokeDir(dir, keyID, reason string, now time.Time) (*keys.Document, error) {
	if err := keys.CheckRevocationReason(reason); err != nil {
		return nil, err
	}
	docPath := filepath.Join(dir, keys.DocumentFile)
	d, err := keys.Load(docPath)
	if err != nil {
		return nil, err
	}
	k, ok := d.Lookup(keyID)
	if !ok {
		return nil, fmt.Errorf("no key with key_id %q in %s", keyID, docPath)
	}
	if k.Revoked() {
		return nil, fmt.Errorf("key %s was already revoked at %s (reason: %s)", keyID, attest.FormatTime(*k.RevokedAt), *k.RevocationReason)
	}
	at := now.UTC().Truncate(time.Millisecond)
	k.RevokedAt, k.RevocationReason = &at, &reason
	docData, err := keys.MarshalDocument(d)
	if err != nil {
		return nil, err
	}
	if err := writeFileAtomic(docPath, docData, 0o644, true); err != nil {
		return nil, err
	}
	return d, nil
}

// generateKey derives an Ed25519 key from a 32-byte seed read from rand (crypto/rand if
// nil).
func generateKey(rand io.Reader) (ed25519.PrivateKey, error) {
	if rand == nil {
		rand = cryptorand.Reader
	}
	seed := make([]byte, ed25519.SeedSize)
	defer clear(seed)
	if _, err := io.ReadFull(rand, seed); err != nil {
		return nil, fmt.Errorf("generating key: %w", err)
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

// OpenDir loads a key directory for signing: the key document and a Signer for the
// signing key in it. It refuses a signing key the document does not list, or lists as
// revoked or not valid at now, so that nothing is ever signed that the published key
// document cannot verify.
func OpenDir(dir string, now time.Time) (*keys.Document, *Signer, error) {
	doc, err := keys.Load(filepath.Join(dir, keys.DocumentFile))
	if err != nil {
		return nil, nil, err
	}
	priv, err := LoadPrivateKey(filepath.Join(dir, PrivateKeyFile))
	if err != nil {
		return nil, nil, err
	}
	signer := NewSigner(priv)
	id, err := signer.KeyID()
	if err != nil {
		return nil, nil, err
	}
	k, ok := doc.Lookup(id)
	switch {
	case !ok:
		return nil, nil, fmt.Errorf("the signing key %s in %s is not listed in %s", id, dir, keys.DocumentFile)
	case k.Revoked():
		return nil, nil, fmt.Errorf("the signing key %s in %s is revoked; rotate it with \"probity keys rotate\"", id, dir)
	case !k.ValidAt(now):
		return nil, nil, fmt.Errorf("the signing key %s in %s is not valid at %s", id, dir, attest.FormatTime(now))
	}
	return doc, signer, nil
}
