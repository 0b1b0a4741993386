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
	"strings"
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

// GenerateDir creates a key directory: a new signing key in dir/signing-key.pem, a new
// log key in dir/log-key.note (its origin is keys.LogOrigin(issuer)), a key document for
// issuer listing both, with the signing key valid from now (UTC, truncated to the
// millisecond), in dir/keys.json, and that document's signed version 1 (event
// generated, issued at now, signed by the signing key) in dir/versions/000001.dsse. dir
// is created with mode 0700 if missing. It refuses, with an error wrapping fs.ErrExist,
// if keys.json, signing-key.pem, log-key.note or any version already exists; use
// RotateDir to replace a signing key. rand supplies the keys' seeds, the signing key's
// first; nil means crypto/rand.
//
// The version and keys.json are written before the private keys, so a crash in between
// leaves at most listed public keys without private keys, never an unlisted signing key.
func GenerateDir(dir, issuer string, now time.Time, rand io.Reader) (*keys.Document, error) {
	keyPath, docPath := filepath.Join(dir, PrivateKeyFile), filepath.Join(dir, keys.DocumentFile)
	logPath, v1Path := filepath.Join(dir, LogKeyFile), versionPath(dir, 1)
	for _, p := range []string{keyPath, docPath, logPath, v1Path} {
		if _, err := os.Lstat(p); err == nil {
			return nil, fmt.Errorf("%s already exists; refusing to replace it: %w", p, fs.ErrExist)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	// The issuer's own rules first, for their clearer errors.
	if err := (&keys.Document{FormatVersion: keys.FormatVersion, Issuer: issuer}).Validate(); err != nil && strings.HasPrefix(err.Error(), "issuer") {
		return nil, err
	}
	origin, err := keys.LogOrigin(issuer)
	if err != nil {
		return nil, err
	}
	priv, err := generateKey(rand)
	if err != nil {
		return nil, err
	}
	defer clear(priv)
	logData, log, err := newLogKey(rand, origin)
	if err != nil {
		return nil, err
	}
	defer clear(logData)
	now = now.UTC().Truncate(time.Millisecond)
	k, err := keys.NewKey(priv.Public().(ed25519.PublicKey), now)
	if err != nil {
		return nil, err
	}
	d := &keys.Document{FormatVersion: keys.FormatVersion, Issuer: issuer, Keys: []keys.Key{k}, Log: log}
	docData, err := keys.MarshalDocument(d)
	if err != nil {
		return nil, err
	}
	v1, err := SignVersion(nil, d, attest.KeysEventGenerated, now, NewSigner(priv))
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
	// What this call created is removed again on failure: without its private keys
	// the rest is useless.
	undo := func() {
		os.Remove(logPath)
		os.Remove(docPath)
		os.Remove(v1Path)
		os.Remove(filepath.Join(dir, VersionsDir))
	}
	if err := writeVersion(dir, v1); err != nil {
		undo()
		return nil, err
	}
	if err := writeFileAtomic(docPath, docData, 0o644, false); err != nil {
		undo()
		return nil, err
	}
	if err := writeFileAtomic(logPath, logData, 0o600, false); err != nil {
		undo()
		return nil, err
	}
	if err := writeFileAtomic(keyPath, keyData, 0o600, false); err != nil {
		undo()
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
// The new document is a signed version (event rotated, issued at now) signed by the old
// key, which authorizes it, and by the new one. So the old key must be unrevoked and
// valid at now: a revoked or expired signing key cannot pass the history on, which is
// why a signing key is rotated before it is revoked. rand supplies the new key's seed;
// nil means crypto/rand.
//
// Crash safety: the new private key is first written to signing-key.pem.new, then the
// new version, then keys.json (now listing it) replaces the old document, then
// signing-key.pem.new is renamed over signing-key.pem. Whatever the point of a crash,
// signing-key.pem holds a key listed in keys.json. If RotateDir finds a version that
// keys.json does not have yet, it completes keys.json (as OpenDir does); if it then finds a
// signing-key.pem.new whose key keys.json lists, an earlier rotation was interrupted
// after its version was written: it completes that rotation (returning its key) instead
// of starting another. An unlisted signing-key.pem.new is left from a rotation
// interrupted earlier and is deleted.
//
// RotateDir must not run concurrently with other changes to the same directory.
func RotateDir(dir string, now time.Time, rand io.Reader) (*keys.Document, keys.Key, error) {
	keyPath, docPath := filepath.Join(dir, PrivateKeyFile), filepath.Join(dir, keys.DocumentFile)
	pendingPath := filepath.Join(dir, pendingKeyFile)
	s, err := loadState(dir)
	if err != nil {
		return nil, keys.Key{}, err
	}
	d := s.doc
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
	oldSigner := NewSigner(priv)
	clear(priv)
	oldID := oldSigner.ID()
	if _, ok := d.Lookup(oldID); !ok {
		return nil, keys.Key{}, fmt.Errorf("the signing key in %s (key_id %s) is not listed in %s", keyPath, oldID, docPath)
	}
	now = now.UTC().Truncate(time.Millisecond)
	if err := s.ensureHistory(dir, oldSigner, now, rand); err != nil {
		return nil, keys.Key{}, err
	}
	d = cloneDocument(s.doc)
	cur, _ := d.Lookup(oldID)
	if !now.After(cur.ValidFrom) {
		return nil, keys.Key{}, fmt.Errorf("cannot rotate at %s: the signing key %s is valid only from %s", attest.FormatTime(now), oldID, attest.FormatTime(cur.ValidFrom))
	}
	switch {
	case cur.Revoked():
		return nil, keys.Key{}, fmt.Errorf("cannot rotate at %s: the signing key %s was revoked at %s, and a rotation must be signed by a key valid now (rotate before revoking)", attest.FormatTime(now), oldID, attest.FormatTime(*cur.RevokedAt))
	case !cur.ValidAt(now):
		return nil, keys.Key{}, fmt.Errorf("cannot rotate at %s: the signing key %s is not valid then, and a rotation must be signed by a key valid now", attest.FormatTime(now), oldID)
	}
	if cur.ValidUntil == nil || cur.ValidUntil.After(now) {
		until := now
		cur.ValidUntil = &until
	}

	newPriv, err := generateKey(rand)
	if err != nil {
		return nil, keys.Key{}, err
	}
	defer clear(newPriv)
	nk, err := keys.NewKey(newPriv.Public().(ed25519.PublicKey), now)
	if err != nil {
		return nil, keys.Key{}, err
	}
	d.Keys = append(d.Keys, nk)
	v, err := SignVersion(s.latest(), d, attest.KeysEventRotated, now, oldSigner, NewSigner(newPriv))
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
	// 2. The signed version and the document listing both keys.
	if err := s.commit(dir, v); err != nil {
		if _, statErr := os.Lstat(versionPath(dir, v.Number)); errors.Is(statErr, fs.ErrNotExist) {
			os.Remove(pendingPath)
		}
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
// millisecond) for reason, and returns the updated document. The new document is a
// signed version (event revoked, issued at now) signed by the signing key, which must be
// another key than the one revoked: a revocation is authorized by a key that remains
// valid. To revoke the signing key itself, rotate first (RotateDir), then revoke the old
// key. It fails if the key is not listed or already revoked, or if reason is empty or
// longer than keys.MaxReasonLen bytes.
//
// RevokeDir must not run concurrently with other changes to the same directory.
func RevokeDir(dir, keyID, reason string, now time.Time) (*keys.Document, error) {
	if err := keys.CheckRevocationReason(reason); err != nil {
		return nil, err
	}
	docPath := filepath.Join(dir, keys.DocumentFile)
	s, err := loadState(dir)
	if err != nil {
		return nil, err
	}
	if k, ok := s.doc.Lookup(keyID); !ok {
		return nil, fmt.Errorf("no key with key_id %q in %s", keyID, docPath)
	} else if k.Revoked() {
		return nil, fmt.Errorf("key %s was already revoked at %s (reason: %s)", keyID, attest.FormatTime(*k.RevokedAt), *k.RevocationReason)
	}
	priv, err := LoadPrivateKey(filepath.Join(dir, PrivateKeyFile))
	if err != nil {
		return nil, err
	}
	signer := NewSigner(priv)
	clear(priv)
	if signer.ID() == keyID {
		return nil, fmt.Errorf("key %s is the signing key: a revocation must be signed by a key that stays valid; rotate first (probity keys rotate), then revoke %s", keyID, keyID)
	}
	at := now.UTC().Truncate(time.Millisecond)
	if !s.doc.AuthorizesAt(signer.ID(), at) {
		return nil, fmt.Errorf("the signing key %s cannot sign the revocation at %s (not listed, revoked or outside its window)", signer.ID(), attest.FormatTime(at))
	}
	if err := s.ensureHistory(dir, signer, at, nil); err != nil {
		return nil, err
	}
	d := cloneDocument(s.doc)
	k, _ := d.Lookup(keyID)
	k.RevokedAt, k.RevocationReason = &at, &reason
	v, err := SignVersion(s.latest(), d, attest.KeysEventRevoked, at, signer)
	if err != nil {
		return nil, err
	}
	if err := s.commit(dir, v); err != nil {
		return nil, err
	}
	return d, nil
}

// cloneDocument copies d deeply enough to change its keys' windows and revocations.
func cloneDocument(d *keys.Document) *keys.Document {
	c := *d
	c.Keys = append([]keys.Key(nil), d.Keys...)
	if d.Log != nil {
		l := *d.Log
		c.Log = &l
	}
	if d.Webhook != nil {
		w := *d.Webhook
		c.Webhook = &w
	}
	return &c
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
//
// It also keeps the directory's history whole: it completes keys.json from a version a
// crash left ahead of it, refuses a keys.json that differs from the latest signed
// version otherwise, finishes a rotation whose new key keys.json already lists, and gives
// a directory made before key document versions existed a log key (log-key.note) and
// version 1 of its document with the log member, issued at now and signed by its signing
// key (event generated; or log_key_added when a history without the log exists).
func OpenDir(dir string, now time.Time) (*keys.Document, *Signer, error) {
	s, err := loadState(dir)
	if err != nil {
		return nil, nil, err
	}
	keyPath, pendingPath := filepath.Join(dir, PrivateKeyFile), filepath.Join(dir, pendingKeyFile)
	if pending, err := LoadPrivateKey(pendingPath); err == nil {
		if _, ok := s.doc.Lookup(NewSigner(pending).ID()); ok {
			if err := os.Rename(pendingPath, keyPath); err != nil {
				return nil, nil, err
			}
			if err := syncDir(dir); err != nil {
				return nil, nil, err
			}
		}
		clear(pending)
	}
	priv, err := LoadPrivateKey(keyPath)
	if err != nil {
		return nil, nil, err
	}
	signer := NewSigner(priv)
	clear(priv)
	id, err := signer.KeyID()
	if err != nil {
		return nil, nil, err
	}
	doc := s.doc
	k, ok := doc.Lookup(id)
	switch {
	case !ok:
		return nil, nil, fmt.Errorf("the signing key %s in %s is not listed in %s", id, dir, keys.DocumentFile)
	case k.Revoked():
		return nil, nil, fmt.Errorf("the signing key %s in %s is revoked, and a revoked key cannot sign the key document's next version: rotate before revoking; now make a new key directory (\"probity keys generate\")", id, dir)
	case !k.ValidAt(now):
		return nil, nil, fmt.Errorf("the signing key %s in %s is not valid at %s", id, dir, attest.FormatTime(now))
	}
	err = s.ensureHistory(dir, signer, now, nil)
	// Another process starting at the same moment may write the log key or version 1
	// first, between our reading and writing: read what it wrote, and go on from there.
	for try := 0; errors.Is(err, fs.ErrExist) && try < 10; try++ {
		if s, err = loadState(dir); err == nil {
			err = s.ensureHistory(dir, signer, now, nil)
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("key directory %s: %w", dir, err)
	}
	return s.doc, signer, nil
}
