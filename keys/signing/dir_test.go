package signing

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/keys"
)

// seedReader returns a deterministic "random" source yielding seed byte n repeatedly.
func seedReader(n byte) *bytes.Reader {
	return bytes.NewReader(bytes.Repeat([]byte{n}, 1024))
}

func fileMode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func signingKeyID(t *testing.T, dir string) string {
	t.Helper()
	priv, err := LoadPrivateKey(filepath.Join(dir, PrivateKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	return NewSigner(priv).ID()
}

func TestGenerateDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keys")
	now := t0.Add(1234567 * time.Nanosecond) // truncated to .001
	d, err := GenerateDir(dir, "https://example.test", now, seedReader(9))
	if err != nil {
		t.Fatal(err)
	}
	if got := fileMode(t, dir); got != 0o700 {
		t.Errorf("dir mode %04o, want 0700", got)
	}
	if got := fileMode(t, filepath.Join(dir, PrivateKeyFile)); got != 0o600 {
		t.Errorf("%s mode %04o, want 0600", PrivateKeyFile, got)
	}
	if got := fileMode(t, filepath.Join(dir, keys.DocumentFile)); got != 0o644 {
		t.Errorf("%s mode %04o, want 0644", keys.DocumentFile, got)
	}
	assertNoTempFiles(t, dir)

	data, err := os.ReadFile(filepath.Join(dir, keys.DocumentFile))
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := keys.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := keys.MarshalDocument(d); !bytes.Equal(data, want) {
		t.Errorf("written document differs from the returned one")
	}
	if parsed.Issuer != "https://example.test" || len(parsed.Keys) != 1 {
		t.Fatalf("document %+v", parsed)
	}
	k := parsed.Keys[0]
	if !k.ValidFrom.Equal(t0.Add(time.Millisecond)) || k.ValidUntil != nil || k.Revoked() {
		t.Errorf("key %+v", k)
	}
	if id := signingKeyID(t, dir); id != k.KeyID {
		t.Errorf("signing key %s, listed key %s", id, k.KeyID)
	}
	if !k.PublicKey().Equal(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, 32)).Public()) {
		t.Error("key not derived from the rand reader")
	}
	if cur, ok := parsed.Current(now); !ok || cur.KeyID != k.KeyID {
		t.Error("generated key is not current")
	}

	// A second generate refuses and changes nothing.
	before, _ := os.ReadFile(filepath.Join(dir, PrivateKeyFile))
	_, err = GenerateDir(dir, "https://example.test", now, seedReader(10))
	if !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("second GenerateDir = %v", err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, PrivateKeyFile))
	if !bytes.Equal(before, after) {
		t.Fatal("signing key changed")
	}
	// Either file alone blocks generate.
	os.Remove(filepath.Join(dir, PrivateKeyFile))
	if _, err := GenerateDir(dir, "https://example.test", now, seedReader(10)); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("GenerateDir with keys.json present = %v", err)
	}
}

func TestGenerateDirBadIssuer(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keys")
	if _, err := GenerateDir(dir, "", t0, seedReader(9)); err == nil || !strings.Contains(err.Error(), "issuer is empty") {
		t.Fatalf("GenerateDir(empty issuer) = %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("directory created despite the error")
	}
	if _, err := GenerateDir(dir, "x", t0, bytes.NewReader(nil)); err == nil {
		t.Fatal("GenerateDir with an empty rand succeeded")
	}
}

func TestRotateDir(t *testing.T) {
	dir := t.TempDir()
	d0, err := GenerateDir(dir, "https://probity.dev", t0, seedReader(1))
	if err != nil {
		t.Fatal(err)
	}
	oldID := d0.Keys[0].KeyID
	d, nk, err := RotateDir(dir, t1, seedReader(2))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Keys) != 2 || d.Keys[0].KeyID != oldID || d.Keys[1].KeyID != nk.KeyID {
		t.Fatalf("keys after rotate: %+v", d.Keys)
	}
	old := d.Keys[0]
	if old.ValidUntil == nil || !old.ValidUntil.Equal(t1) || !nk.ValidFrom.Equal(t1) || nk.ValidUntil != nil {
		t.Fatalf("windows: old until %v, new from %v", old.ValidUntil, nk.ValidFrom)
	}
	// Both verify at the rotation instant; the new one is current.
	if !old.ValidAt(t1) || !nk.ValidAt(t1) || old.ValidAt(t1.Add(time.Millisecond)) {
		t.Error("windows do not touch at the rotation instant")
	}
	if cur, _ := d.Current(t1); cur.KeyID != nk.KeyID {
		t.Error("new key is not current")
	}
	if id := signingKeyID(t, dir); id != nk.KeyID {
		t.Errorf("signing key is %s, want the new key %s", id, nk.KeyID)
	}
	onDisk, err := keys.Load(filepath.Join(dir, keys.DocumentFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(onDisk.Keys) != 2 || !onDisk.Keys[0].ValidUntil.Equal(t1) {
		t.Fatalf("keys.json after rotate: %+v", onDisk.Keys)
	}
	if fileMode(t, filepath.Join(dir, PrivateKeyFile)) != 0o600 || fileMode(t, filepath.Join(dir, keys.DocumentFile)) != 0o644 {
		t.Error("modes changed by rotate")
	}
	assertNoTempFiles(t, dir)

	// Rotating again within the same millisecond as the new key's start is refused.
	if _, _, err := RotateDir(dir, t1.Add(500*time.Microsecond), seedReader(3)); err == nil || !strings.Contains(err.Error(), "cannot rotate") {
		t.Fatalf("RotateDir at the same instant = %v", err)
	}
	// A third key: the second key's window closes, the first's is untouched.
	t2 := t1.Add(time.Hour)
	d, k3, err := RotateDir(dir, t2, seedReader(3))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Keys) != 3 || !d.Keys[0].ValidUntil.Equal(t1) || !d.Keys[1].ValidUntil.Equal(t2) || d.Keys[2].KeyID != k3.KeyID {
		t.Fatalf("keys after second rotate: %+v", d.Keys)
	}
}

func TestRotateDirErrors(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := RotateDir(dir, t1, seedReader(2)); err == nil || !strings.Contains(err.Error(), "couldn't load key document") {
		t.Fatalf("RotateDir(empty dir) = %v", err)
	}
	if _, err := GenerateDir(dir, "https://probity.dev", t0, seedReader(1)); err != nil {
		t.Fatal(err)
	}
	keyPath := filepath.Join(dir, PrivateKeyFile)
	os.Chmod(keyPath, 0o644)
	if _, _, err := RotateDir(dir, t1, seedReader(2)); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("RotateDir(0644 key) = %v", err)
	}
	os.Chmod(keyPath, 0o600)
	// A signing key that keys.json does not list.
	os.Remove(keyPath)
	if err := WritePrivateKey(keyPath, seedKey(7)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := RotateDir(dir, t1, seedReader(2)); err == nil || !strings.Contains(err.Error(), "is not listed in") {
		t.Fatalf("RotateDir(unlisted key) = %v", err)
	}
}

// TestRotateDirRecovery simulates crashes between the steps of a rotation.
func TestRotateDirRecovery(t *testing.T) {
	// Steps 1 and 2 of a rotation by hand: the new key in signing-key.pem.new, its
	// signed version written, and keys.json too when withDoc.
	crash := func(t *testing.T, withDoc bool) (string, keys.Key) {
		dir := t.TempDir()
		if _, err := GenerateDir(dir, "https://probity.dev", t0, seedReader(1)); err != nil {
			t.Fatal(err)
		}
		s, err := loadState(dir)
		if err != nil {
			t.Fatal(err)
		}
		d := cloneDocument(s.doc)
		nk := testKey(t, 2, t1)
		d.Keys[0].ValidUntil = ptr(t1)
		d.Keys = append(d.Keys, nk)
		if err := WritePrivateKey(filepath.Join(dir, pendingKeyFile), seedKey(2)); err != nil {
			t.Fatal(err)
		}
		v, err := SignVersion(s.latest(), d, "rotated", t1, NewSigner(seedKey(1)), NewSigner(seedKey(2)))
		if err != nil {
			t.Fatal(err)
		}
		if err := writeVersion(dir, v); err != nil {
			t.Fatal(err)
		}
		if withDoc {
			data, err := keys.MarshalDocument(d)
			if err != nil {
				t.Fatal(err)
			}
			if err := writeFileAtomic(filepath.Join(dir, keys.DocumentFile), data, 0o644, true); err != nil {
				t.Fatal(err)
			}
			// The invariant holds: the signing key is listed.
			if _, ok := d.Lookup(signingKeyID(t, dir)); !ok {
				t.Fatal("signing key not listed")
			}
		}
		return dir, nk
	}
	for _, withDoc := range []bool{true, false} {
		name := "after keys.json"
		if !withDoc {
			name = "after the version"
		}
		t.Run(name, func(t *testing.T) {
			dir, nk := crash(t, withDoc)
			got, k, err := RotateDir(dir, t1.Add(time.Hour), seedReader(3))
			if err != nil {
				t.Fatal(err)
			}
			if k.KeyID != nk.KeyID || len(got.Keys) != 2 || signingKeyID(t, dir) != nk.KeyID {
				t.Fatalf("interrupted rotation not completed: key %s, %d keys", k.KeyID, len(got.Keys))
			}
			if vs, err := Versions(dir); err != nil || len(vs) != 2 {
				t.Fatalf("Versions = %d, %v", len(vs), err)
			}
			onDisk, err := keys.Load(filepath.Join(dir, keys.DocumentFile))
			if err != nil || !keys.SameDocument(onDisk, got) {
				t.Fatalf("keys.json not completed: %v", err)
			}
			assertNoTempFiles(t, dir)
		})
		t.Run(name+", then OpenDir", func(t *testing.T) {
			dir, nk := crash(t, withDoc)
			doc, signer, err := OpenDir(dir, t1.Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			if signer.ID() != nk.KeyID || len(doc.Keys) != 2 {
				t.Fatalf("OpenDir after a crash: signer %s, %d keys", signer.ID(), len(doc.Keys))
			}
		})
	}
	t.Run("before keys.json", func(t *testing.T) {
		dir := t.TempDir()
		if _, err := GenerateDir(dir, "https://probity.dev", t0, seedReader(1)); err != nil {
			t.Fatal(err)
		}
		// Step 1 done only: an unlisted signing-key.pem.new.
		if err := WritePrivateKey(filepath.Join(dir, pendingKeyFile), seedKey(2)); err != nil {
			t.Fatal(err)
		}
		got, k, err := RotateDir(dir, t1, seedReader(3))
		if err != nil {
			t.Fatal(err)
		}
		if k.KeyID != testKey(t, 3, t1).KeyID || len(got.Keys) != 2 || signingKeyID(t, dir) != k.KeyID {
			t.Fatalf("rotation after a stale pending key: key %s, %d keys", k.KeyID, len(got.Keys))
		}
		if _, ok := got.Lookup(testKey(t, 2, t1).KeyID); ok {
			t.Fatal("stale pending key was listed")
		}
		assertNoTempFiles(t, dir)
	})
}

func TestRevokeDir(t *testing.T) {
	dir := t.TempDir()
	d0, err := GenerateDir(dir, "https://probity.dev", t0, seedReader(1))
	if err != nil {
		t.Fatal(err)
	}
	id := d0.Keys[0].KeyID
	for _, tc := range []struct{ id, reason, want string }{
		{id, "", "revocation reason is empty"},
		{id, strings.Repeat("x", 201), "revocation reason is 201 bytes long"},
		{"0000000000000000", "leaked", `no key with key_id "0000000000000000"`},
	} {
		if _, err := RevokeDir(dir, tc.id, tc.reason, t1); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("RevokeDir(%q, %q) = %v, want %q", tc.id, tc.reason, err, tc.want)
		}
	}
	// The signing key cannot sign its own revocation: rotate first.
	if _, err := RevokeDir(dir, id, "key leaked", t1); err == nil || !strings.Contains(err.Error(), "rotate first") {
		t.Fatalf("RevokeDir(signing key) = %v", err)
	}
	if _, _, err := RotateDir(dir, t1.Add(-time.Hour), seedReader(2)); err != nil {
		t.Fatal(err)
	}
	at := t1.Add(123 * time.Microsecond)
	d, err := RevokeDir(dir, id, "key leaked", at)
	if err != nil {
		t.Fatal(err)
	}
	k := d.Keys[0]
	if !k.Revoked() || !k.RevokedAt.Equal(t1) || *k.RevocationReason != "key leaked" {
		t.Fatalf("revoked key %+v", k)
	}
	onDisk, err := keys.Load(filepath.Join(dir, keys.DocumentFile))
	if err != nil {
		t.Fatal(err)
	}
	if !onDisk.Keys[0].Revoked() || *onDisk.Keys[0].RevocationReason != "key leaked" {
		t.Fatal("revocation not written")
	}
	if cur, ok := onDisk.Current(t1); !ok || cur.KeyID == id {
		t.Fatal("revoked key is current")
	}
	if fileMode(t, filepath.Join(dir, keys.DocumentFile)) != 0o644 {
		t.Error("keys.json mode changed")
	}
	if _, err := RevokeDir(dir, id, "again", t1); err == nil || !strings.Contains(err.Error(), "already revoked at 2026-11-01T12:00:00.000Z") {
		t.Fatalf("second RevokeDir = %v", err)
	}
	// Rotation goes on after the old key's revocation.
	if _, nk, err := RotateDir(dir, t1.Add(time.Second), seedReader(3)); err != nil || signingKeyID(t, dir) != nk.KeyID {
		t.Fatalf("RotateDir after revoke = %v", err)
	}
	if vs, err := Versions(dir); err != nil || len(vs) != 4 || vs[2].Event != "revoked" {
		t.Fatalf("Versions after generate, rotate, revoke, rotate: %d, %v", len(vs), err)
	}
	assertNoTempFiles(t, dir)
}

func TestOpenDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "k")
	now := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	doc, err := GenerateDir(dir, "https://probity.example", now, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, signer, err := OpenDir(dir, now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := signer.KeyID(); id != doc.Keys[0].KeyID || len(got.Keys) != 1 {
		t.Fatalf("OpenDir: key %s, document %+v", id, got)
	}
	if _, _, err := OpenDir(dir, now.Add(-time.Hour)); err == nil {
		t.Error("OpenDir accepted a time before the key's valid_from")
	}
	// A revoked signing key: only a directory from before key document versions can
	// have one (RevokeDir refuses to revoke the signing key).
	legacy := legacyDir(t, "https://probity.example", now, func(d *keys.Document) {
		d.Keys[0].RevokedAt, d.Keys[0].RevocationReason = ptr(now.Add(time.Minute)), ptr("test")
	})
	if _, _, err := OpenDir(legacy, now.Add(time.Hour)); err == nil || !strings.Contains(err.Error(), "is revoked") {
		t.Errorf("OpenDir accepted a revoked signing key: %v", err)
	}
}
