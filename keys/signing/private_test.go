package signing

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPrivateKeyRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "signing-key.pem")
	priv := seedKey(3)
	if err := WritePrivateKey(path, priv); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %04o, want 0600", fi.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	block, rest := pem.Decode(data)
	if block == nil || block.Type != "PRIVATE KEY" || len(rest) != 0 {
		t.Fatalf("not a single PRIVATE KEY block:\n%s", data)
	}
	if _, err := x509.ParsePKCS8PrivateKey(block.Bytes); err != nil {
		t.Fatalf("not PKCS#8: %v", err)
	}
	got, err := LoadPrivateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(priv) {
		t.Fatal("loaded key differs")
	}
	assertNoTempFiles(t, dir)

	// Never overwrites.
	err = WritePrivateKey(path, seedKey(4))
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("WritePrivateKey over an existing file = %v, want fs.ErrExist", err)
	}
	if again, _ := os.ReadFile(path); !bytes.Equal(again, data) {
		t.Fatal("existing key file was changed")
	}
	assertNoTempFiles(t, dir)

	if err := WritePrivateKey(filepath.Join(dir, "short.pem"), priv[:10]); err == nil {
		t.Fatal("WritePrivateKey accepted a short key")
	}
}

func TestLoadPrivateKeyPermissions(t *testing.T) {
	for _, mode := range []fs.FileMode{0o644, 0o640, 0o604, 0o660, 0o601} {
		t.Run(fmt.Sprintf("%04o", mode), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "signing-key.pem")
			if err := WritePrivateKey(path, seedKey(3)); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, mode); err != nil {
				t.Fatal(err)
			}
			_, err := LoadPrivateKey(path)
			want := fmt.Sprintf("key file %q is readable by group or others (mode %04o); run: chmod 600 %q", path, mode, path)
			if err == nil || err.Error() != want {
				t.Fatalf("LoadPrivateKey = %v\nwant %s", err, want)
			}
		})
	}
	path := filepath.Join(t.TempDir(), "signing-key.pem")
	if err := WritePrivateKey(path, seedKey(3)); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o400); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadPrivateKey(path); err != nil {
		t.Fatalf("LoadPrivateKey(0400) = %v", err)
	}
}

func TestLoadPrivateKeyRejects(t *testing.T) {
	good, err := MarshalPrivateKey(seedKey(3))
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ecDER, err := x509.MarshalPKCS8PrivateKey(ecKey)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(good)

	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "not a PEM file"},
		{"not PEM", []byte("hello"), "not a PEM file"},
		{"leading text", append([]byte("comment\n"), good...), "not a PEM file"},
		{"two blocks", append(bytes.Clone(good), good...), "data after the PEM block"},
		{"trailing text", append(bytes.Clone(good), "junk\n"...), "data after the PEM block"},
		{"wrong type", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: block.Bytes}), `PEM block is of type "EC PRIVATE KEY"`},
		{"headers", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Headers: map[string]string{"Proc-Type": "4,ENCRYPTED"}, Bytes: block.Bytes}), "headers"},
		{"not PKCS#8", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte{0x30, 0}}), "not a PKCS#8 private key"},
		{"ECDSA", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: ecDER}), "not an Ed25519 private key"},
		{"too large", append(bytes.Clone(good), bytes.Repeat([]byte("\n"), MaxPrivateKeyFileSize)...), "larger than 65536 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "k.pem")
			if err := os.WriteFile(path, tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := LoadPrivateKey(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("LoadPrivateKey = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	// Surrounding white space is fine.
	path := filepath.Join(t.TempDir(), "k.pem")
	if err := os.WriteFile(path, append(append([]byte("\n\n"), good...), "\n\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadPrivateKey(path); err != nil {
		t.Fatalf("LoadPrivateKey(padded) = %v", err)
	}
	if _, err := LoadPrivateKey(t.TempDir()); err == nil {
		t.Fatal("LoadPrivateKey accepted a directory")
	}
}

func TestCheckPrivateKeyInconsistent(t *testing.T) {
	priv := bytes.Clone(seedKey(3))
	priv[40] ^= 1 // public half no longer matches the seed
	if _, err := MarshalPrivateKey(priv); err == nil || !strings.Contains(err.Error(), "inconsistent") {
		t.Fatalf("MarshalPrivateKey(inconsistent) = %v", err)
	}
}

func TestWriteFileAtomicReplace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "keys.json")
	if err := writeFileAtomic(path, []byte("one"), 0o644, false); err != nil {
		t.Fatal(err)
	}
	if err := writeFileAtomic(path, []byte("two"), 0o644, true); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	fi, _ := os.Stat(path)
	if string(data) != "two" || fi.Mode().Perm() != 0o644 {
		t.Fatalf("got %q mode %04o", data, fi.Mode().Perm())
	}
	assertNoTempFiles(t, dir)
}

// assertNoTempFiles fails if dir holds leftovers of atomic writes.
func assertNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") || strings.HasSuffix(e.Name(), ".new") {
			t.Errorf("leftover file %s", e.Name())
		}
	}
}
