package signing

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/keys"
)

// legacyDir makes a key directory as Probity wrote it before key document versions: a
// format_version 1 keys.json (edited by edit, if not nil) and signing-key.pem (seed 1),
// no log key and no versions.
func legacyDir(t *testing.T, issuer string, from time.Time, edit func(*keys.Document)) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "keys")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	d := &keys.Document{FormatVersion: keys.FormatVersion1, Issuer: issuer, Keys: []keys.Key{testKey(t, 1, from)}}
	if edit != nil {
		edit(d)
	}
	data, err := keys.MarshalDocument(d)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, keys.DocumentFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WritePrivateKey(filepath.Join(dir, PrivateKeyFile), seedKey(1)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestGenerateDirHistory: a new key directory has a log key named for its issuer's log,
// listed in keys.json, and version 1 of the document signed by the signing key.
func TestGenerateDirHistory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keys")
	d, err := GenerateDir(dir, "https://probity.dev", t0, seedReader(1))
	if err != nil {
		t.Fatal(err)
	}
	if d.FormatVersion != 2 || d.Log == nil || d.Log.Origin != "probity.dev/log" || !strings.HasPrefix(d.Log.Key, "probity.dev/log+") {
		t.Fatalf("document log %+v (format %d)", d.Log, d.FormatVersion)
	}
	if got := fileMode(t, filepath.Join(dir, LogKeyFile)); got != 0o600 {
		t.Errorf("%s mode %04o, want 0600", LogKeyFile, got)
	}
	signer, vkey, err := LoadLogSigner(dir)
	if err != nil {
		t.Fatal(err)
	}
	if vkey != d.Log.Key || signer.Name() != "probity.dev/log" {
		t.Fatalf("log signer %s, vkey %s", signer.Name(), vkey)
	}
	// A note the log key signs opens with the listed verifier key.
	v, err := d.Log.Verifier()
	if err != nil {
		t.Fatal(err)
	}
	msg, err := note.Sign(&note.Note{Text: "probity.dev/log\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n"}, signer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := note.Open(msg, note.VerifierList(v)); err != nil {
		t.Fatalf("checkpoint signed by the log key does not open: %v", err)
	}

	vs, err := Versions(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1 {
		t.Fatalf("%d versions, want 1", len(vs))
	}
	v1 := vs[0]
	digest, _ := keys.DocumentDigest(d)
	if v1.Version != 1 || v1.Event != attest.KeysEventGenerated || !v1.IssuedAt.Equal(t0) || v1.DocumentDigest != "sha256:"+digest || len(v1.PayloadDigest) != 64 || v1.KeyID != d.Keys[0].KeyID || !keys.SameDocument(v1.Document, d) {
		t.Fatalf("version 1: %+v", v1)
	}
	file, err := os.ReadFile(filepath.Join(dir, VersionsDir, "000001.dsse"))
	if err != nil || !bytes.Equal(file, v1.Envelope) {
		t.Fatalf("versions/000001.dsse: %v", err)
	}
	// The envelope verifies as a keys/v1 statement.
	_, payload, err := attest.ParseEnvelope(v1.Envelope)
	if err != nil {
		t.Fatal(err)
	}
	st, err := attest.DecodeStatement(payload)
	if err != nil || st.PredicateType != attest.KeysPredicateType || st.Subject[0].Name != "https://probity.dev" || st.Subject[0].Digest["sha256"] != digest {
		t.Fatalf("version 1 statement %+v: %v", st, err)
	}
	// Either the log key or a version alone blocks generate.
	other := filepath.Join(t.TempDir(), "k")
	if err := os.MkdirAll(filepath.Join(other, VersionsDir), 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(other, LogKeyFile), []byte("x"), 0o600)
	if _, err := GenerateDir(other, "https://probity.dev", t0, nil); err == nil || !strings.Contains(err.Error(), LogKeyFile) {
		t.Fatalf("GenerateDir with a log key present = %v", err)
	}
}

// TestDirHistory: generate, rotate and revoke each add a version, in order, each
// authorized as a verifier requires; keys.json is always the latest version's document.
func TestDirHistory(t *testing.T) {
	dir := t.TempDir()
	d0, err := GenerateDir(dir, "https://probity.dev", t0, seedReader(1))
	if err != nil {
		t.Fatal(err)
	}
	first := d0.Keys[0].KeyID
	_, k2, err := RotateDir(dir, t1, seedReader(2))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := RevokeDir(dir, first, "retired laptop", t1.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	vs, err := Versions(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		event, keyID string
		at           time.Time
	}{{"generated", first, t0}, {"rotated", first, t1}, {"revoked", k2.KeyID, t1.Add(time.Minute)}}
	if len(vs) != len(want) {
		t.Fatalf("%d versions", len(vs))
	}
	for i, w := range want {
		if vs[i].Version != i+1 || vs[i].Event != w.event || vs[i].KeyID != w.keyID || !vs[i].IssuedAt.Equal(w.at) {
			t.Errorf("version %d: %s by %s at %s, want %s by %s at %s", vs[i].Version, vs[i].Event, vs[i].KeyID, vs[i].IssuedAt, w.event, w.keyID, w.at)
		}
	}
	// The rotation is signed by the old key and the new one.
	env, _, _ := attest.ParseEnvelope(vs[1].Envelope)
	if len(env.Signatures) != 2 || env.Signatures[0].KeyID != first || env.Signatures[1].KeyID != k2.KeyID {
		t.Errorf("rotation signatures %+v", env.Signatures)
	}
	onDisk, err := keys.Load(filepath.Join(dir, keys.DocumentFile))
	if err != nil || !keys.SameDocument(onDisk, vs[2].Document) {
		t.Fatalf("keys.json is not the latest version: %v", err)
	}
	// OpenDir changes nothing in a directory whose history is whole.
	if _, _, err := OpenDir(dir, t1.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if again, _ := Versions(dir); len(again) != 3 {
		t.Fatalf("OpenDir added versions: %d", len(again))
	}
}

// TestOpenDirUpgradesLegacy: a key directory from before key document versions gets a
// log key and version 1 of its document, with the log, when opened.
func TestOpenDirUpgradesLegacy(t *testing.T) {
	dir := legacyDir(t, "https://example.com:8443/probity/", t0, func(d *keys.Document) {
		// An older, retired key stays listed.
		old := testKey(t, 7, t0.Add(-time.Hour))
		old.ValidUntil = ptr(t0)
		d.Keys = append([]keys.Key{old}, d.Keys...)
	})
	doc, signer, err := OpenDir(dir, t1)
	if err != nil {
		t.Fatal(err)
	}
	if doc.FormatVersion != 2 || doc.Log == nil || doc.Log.Origin != "example.com:8443/probity/log" || len(doc.Keys) != 2 {
		t.Fatalf("upgraded document %+v", doc)
	}
	vs, err := Versions(dir)
	if err != nil || len(vs) != 1 || vs[0].Event != "generated" || !vs[0].IssuedAt.Equal(t1) || vs[0].KeyID != signer.ID() {
		t.Fatalf("versions after upgrade: %+v, %v", vs, err)
	}
	if _, vkey, err := LoadLogSigner(dir); err != nil || vkey != doc.Log.Key {
		t.Fatalf("LoadLogSigner = %s, %v", vkey, err)
	}
	// Opening again changes nothing.
	again, _, err := OpenDir(dir, t1.Add(time.Hour))
	if err != nil || !keys.SameDocument(again, doc) {
		t.Fatalf("second OpenDir: %v", err)
	}
	if vs, _ := Versions(dir); len(vs) != 1 {
		t.Fatalf("%d versions after a second OpenDir", len(vs))
	}

	// A crash after the log key was written, before the version: the next OpenDir uses
	// that log key rather than making another.
	dir2 := legacyDir(t, "https://probity.dev", t0, nil)
	data, log, err := newLogKey(seedReader(5), "probity.dev/log")
	if err != nil {
		t.Fatal(err)
	}
	if err := writeFileAtomic(filepath.Join(dir2, LogKeyFile), data, 0o600, false); err != nil {
		t.Fatal(err)
	}
	doc2, _, err := OpenDir(dir2, t1)
	if err != nil || doc2.Log.Key != log.Key {
		t.Fatalf("OpenDir after a crash in the upgrade: %+v, %v", doc2, err)
	}
	// A crash after version 1, before keys.json: completed.
	dir3 := legacyDir(t, "https://probity.dev", t0, nil)
	s, err := loadState(dir3)
	if err != nil {
		t.Fatal(err)
	}
	up := cloneDocument(s.doc)
	up.FormatVersion, up.Log = keys.FormatVersion, log
	if err := writeFileAtomic(filepath.Join(dir3, LogKeyFile), data, 0o600, false); err != nil {
		t.Fatal(err)
	}
	v1, err := SignVersion(nil, up, "generated", t1, NewSigner(seedKey(1)))
	if err != nil {
		t.Fatal(err)
	}
	if err := writeVersion(dir3, v1); err != nil {
		t.Fatal(err)
	}
	doc3, _, err := OpenDir(dir3, t1.Add(time.Second))
	if err != nil || !keys.SameDocument(doc3, up) {
		t.Fatalf("OpenDir after a crash before keys.json: %v", err)
	}
	onDisk, _ := keys.Load(filepath.Join(dir3, keys.DocumentFile))
	if !keys.SameDocument(onDisk, up) {
		t.Fatal("keys.json not completed from version 1")
	}
	// Rotate and revoke also upgrade a legacy directory first.
	dir4 := legacyDir(t, "https://probity.dev", t0, nil)
	if _, _, err := RotateDir(dir4, t1, seedReader(2)); err != nil {
		t.Fatal(err)
	}
	if vs, err := Versions(dir4); err != nil || len(vs) != 2 || vs[0].Event != "generated" || vs[1].Event != "rotated" {
		t.Fatalf("legacy rotate: %d versions, %v", len(vs), err)
	}
}

// TestKeysJSONEditedRefused: keys.json changes only through a signed version; a hand
// edit (a key added, a window moved back) is refused, and so is a log key that is not the
// listed one or a missing one.
func TestKeysJSONEditedRefused(t *testing.T) {
	for name, edit := range map[string]func(*keys.Document){
		"key added":          func(d *keys.Document) { d.Keys = append(d.Keys, testKey(t, 9, t0)) },
		"valid_from earlier": func(d *keys.Document) { d.Keys[0].ValidFrom = t0.Add(-24 * time.Hour) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			d, err := GenerateDir(dir, "https://probity.dev", t0, seedReader(1))
			if err != nil {
				t.Fatal(err)
			}
			edit(d)
			data, err := keys.MarshalDocument(d)
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(dir, keys.DocumentFile), data, 0o644)
			for op, f := range map[string]func() error{
				"OpenDir":   func() error { _, _, err := OpenDir(dir, t1); return err },
				"RotateDir": func() error { _, _, err := RotateDir(dir, t1, seedReader(2)); return err },
				"RevokeDir": func() error { _, err := RevokeDir(dir, d.Keys[0].KeyID, "x", t1); return err },
			} {
				if err := f(); err == nil || !strings.Contains(err.Error(), "differs from the latest signed key document version") {
					t.Errorf("%s = %v", op, err)
				}
			}
		})
	}
	t.Run("log key replaced", func(t *testing.T) {
		dir := t.TempDir()
		if _, err := GenerateDir(dir, "https://probity.dev", t0, seedReader(1)); err != nil {
			t.Fatal(err)
		}
		data, _, _ := newLogKey(seedReader(4), "probity.dev/log")
		if err := writeFileAtomic(filepath.Join(dir, LogKeyFile), data, 0o600, true); err != nil {
			t.Fatal(err)
		}
		if _, _, err := OpenDir(dir, t1); err == nil || !strings.Contains(err.Error(), "is not the one") {
			t.Errorf("OpenDir = %v", err)
		}
		if _, _, err := LoadLogSigner(dir); err == nil || !strings.Contains(err.Error(), "is not the one") {
			t.Errorf("LoadLogSigner = %v", err)
		}
		os.Chmod(filepath.Join(dir, LogKeyFile), 0o644)
		if _, _, err := LoadLogSigner(dir); err == nil || !strings.Contains(err.Error(), "chmod 600") {
			t.Errorf("LoadLogSigner(0644) = %v", err)
		}
		os.Remove(filepath.Join(dir, LogKeyFile))
		if _, _, err := OpenDir(dir, t1); err == nil {
			t.Error("OpenDir accepted a missing log key")
		}
	})
	t.Run("version removed", func(t *testing.T) {
		dir := t.TempDir()
		if _, err := GenerateDir(dir, "https://probity.dev", t0, seedReader(1)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := RotateDir(dir, t1, seedReader(2)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := RotateDir(dir, t1.Add(time.Hour), seedReader(3)); err != nil {
			t.Fatal(err)
		}
		os.Remove(versionPath(dir, 2))
		if _, err := Versions(dir); err == nil || !strings.Contains(err.Error(), "a version is missing") {
			t.Errorf("Versions without version 2 = %v", err)
		}
	})
}

// TestRotateDirRefusesInvalidSigner: a signing key whose window has ended cannot sign a
// rotation, so RotateDir refuses rather than write a version a verifier would refuse.
func TestRotateDirRefusesInvalidSigner(t *testing.T) {
	dir := legacyDir(t, "https://probity.dev", t0, func(d *keys.Document) { d.Keys[0].ValidUntil = ptr(t1) })
	if _, _, err := RotateDir(dir, t1.Add(time.Hour), seedReader(2)); err == nil || !strings.Contains(err.Error(), "cannot sign") {
		t.Fatalf("RotateDir with an expired signing key = %v", err)
	}
	if vs, _ := Versions(dir); len(vs) != 0 {
		t.Fatalf("%d versions written", len(vs))
	}
}

func TestLogOriginRule(t *testing.T) {
	for issuer, want := range map[string]string{
		"https://probity.dev":                 "probity.dev/log",
		"https://probity.dev/":                "probity.dev/log",
		"http://localhost:8080":               "localhost:8080/log",
		"https://example.com:8443/probity/":   "example.com:8443/probity/log",
		"https://example.com/a/b?x=1#frag":    "example.com/a/b/log",
		"https://probity.test":                "probity.test/log",
		"https://Probity.DEV/Path":            "probity.dev/Path/log",
		"probity.dev":                         "probity.dev/log",
		"https://probity.dev/with%20space/ok": "probity.dev/with%20space/ok/log",
	} {
		if got, err := keys.LogOrigin(issuer); err != nil || got != want {
			t.Errorf("LogOrigin(%q) = %q, %v; want %q", issuer, got, err, want)
		}
	}
	for _, bad := range []string{"", "https://", "https:///path", "a b"} {
		if got, err := keys.LogOrigin(bad); err == nil {
			t.Errorf("LogOrigin(%q) = %q, want an error", bad, got)
		}
	}
}

// TestOpenDirUpgradeConcurrent: processes opening one legacy key directory at the same
// moment all end with the same log key and one version 1.
func TestOpenDirUpgradeConcurrent(t *testing.T) {
	dir := legacyDir(t, "https://probity.dev", t0, nil)
	const n = 8
	errs := make(chan error, n)
	docs := make(chan *keys.Document, n)
	for range n {
		go func() {
			d, _, err := OpenDir(dir, t1)
			errs <- err
			docs <- d
		}()
	}
	var first *keys.Document
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
		if d := <-docs; d != nil {
			if first == nil {
				first = d
			} else if !keys.SameDocument(first, d) {
				t.Error("two processes ended with different documents")
			}
		}
	}
	if vs, err := Versions(dir); err != nil || len(vs) != 1 {
		t.Fatalf("Versions = %d, %v", len(vs), err)
	}
	if _, vkey, err := LoadLogSigner(dir); err != nil || first == nil || vkey != first.Log.Key {
		t.Fatalf("LoadLogSigner = %v", err)
	}
}
