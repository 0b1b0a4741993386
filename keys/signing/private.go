package signing

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// MaxPrivateKeyFileSize is the largest private key file LoadPrivateKey reads, in bytes.
const MaxPrivateKeyFileSize = 64 << 10

const pemTypePrivateKey = "PRIVATE KEY"

// MarshalPrivateKey encodes priv as a PKCS#8 PEM block of type "PRIVATE KEY".
func MarshalPrivateKey(priv ed25519.PrivateKey) ([]byte, error) {
	if err := checkPrivateKey(priv); err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("encoding private key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: pemTypePrivateKey, Bytes: der}), nil
}

// ParsePrivateKey decodes data holding exactly one PEM block of type "PRIVATE KEY" with a
// PKCS#8 Ed25519 private key, and nothing else but surrounding white space.
func ParsePrivateKey(data []byte) (ed25519.PrivateKey, error) {
	trimmed := bytes.TrimSpace(data)
	block, rest := pem.Decode(trimmed)
	if block == nil || !bytes.HasPrefix(trimmed, []byte("-----BEGIN ")) {
		return nil, errors.New("not a PEM file (want one \"PRIVATE KEY\" block)")
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return nil, errors.New("has data after the PEM block (want exactly one \"PRIVATE KEY\" block)")
	}
	if block.Type != pemTypePrivateKey {
		return nil, fmt.Errorf("PEM block is of type %q (want %q)", block.Type, pemTypePrivateKey)
	}
	if len(block.Headers) != 0 {
		return nil, errors.New("PEM block has headers (encrypted keys are not supported)")
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("not a PKCS#8 private key: %v", err)
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("holds a %T, not an Ed25519 private key", k)
	}
	if err := checkPrivateKey(priv); err != nil {
		return nil, err
	}
	return priv, nil
}

// checkPrivateKey verifies that priv has the right size and that its public half is
// the one its seed derives.
func checkPrivateKey(priv ed25519.PrivateKey) error {
	if len(priv) != ed25519.PrivateKeySize {
		return fmt.Errorf("ed25519 private key is %d bytes, want %d", len(priv), ed25519.PrivateKeySize)
	}
	if !bytes.Equal(ed25519.NewKeyFromSeed(priv.Seed()), priv) {
		return errors.New("ed25519 private key is inconsistent: its public half does not match its seed")
	}
	return nil
}

// WritePrivateKey writes priv to path as PKCS#8 PEM with mode 0600, atomically (a
// temporary file in the same directory, fsync, then link into place). It never replaces
// an existing file: if path exists it fails with an error wrapping fs.ErrExist.
func WritePrivateKey(path string, priv ed25519.PrivateKey) error {
	data, err := MarshalPrivateKey(priv)
	if err != nil {
		return err
	}
	return writeFileAtomic(path, data, 0o600, false)
}

// LoadPrivateKey reads the PKCS#8 PEM Ed25519 private key at path. It refuses a file that
// grants any permission to group or others, a file larger than MaxPrivateKeyFileSize and
// anything but exactly one "PRIVATE KEY" block.
func LoadPrivateKey(path string) (ed25519.PrivateKey, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("couldn't load private key: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("couldn't load private key: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("key file %q is not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("key file %q is readable by group or others (mode %04o); run: chmod 600 %q", path, perm, path)
	}
	if fi.Size() > MaxPrivateKeyFileSize {
		return nil, fmt.Errorf("key file %q is larger than %d bytes", path, MaxPrivateKeyFileSize)
	}
	// The size checked above may grow before the read: read one byte more than allowed.
	data, err := io.ReadAll(io.LimitReader(f, MaxPrivateKeyFileSize+1))
	if err == nil && len(data) > MaxPrivateKeyFileSize {
		clear(data)
		err = fmt.Errorf("file is larger than %d bytes", MaxPrivateKeyFileSize)
	}
	if err != nil {
		return nil, fmt.Errorf("couldn't load private key %q: %w", path, err)
	}
	defer clear(data)
	priv, err := ParsePrivateKey(data)
	if err != nil {
		return nil, fmt.Errorf("key file %q: %w", path, err)
	}
	return priv, nil
}

// writeFileAtomic writes data to path with mode perm through a temporary file in the same
// directory that is fsynced before it takes path's place; the directory is fsynced
// afterwards. With replace false an existing path is never touched and the error wraps
// fs.ErrExist; with replace true it is replaced by rename.
func writeFileAtomic(path string, data []byte, perm fs.FileMode, replace bool) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if !replace {
		if _, err := os.Lstat(path); err == nil {
			return fmt.Errorf("%s already exists; refusing to overwrite it: %w", path, fs.ErrExist)
		}
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*") // created with mode 0600
	if err != nil {
		return err
	}
	tmpName := tmp.Name()
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmpName)
		}
	}()
	if err := tmp.Chmod(perm); err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if replace {
		if err := os.Rename(tmpName, path); err != nil {
			return err
		}
	} else {
		// A hard link fails if path exists, so a file created since the check above is
		// not clobbered either.
		if err := os.Link(tmpName, path); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("%s already exists; refusing to overwrite it: %w", path, fs.ErrExist)
			}
			// File systems without hard links: fall back to rename after the check above.
			if _, statErr := os.Lstat(path); statErr == nil {
				return fmt.Errorf("%s already exists; refusing to overwrite it: %w", path, fs.ErrExist)
			}
			if err := os.Rename(tmpName, path); err != nil {
				return err
			}
		} else {
			os.Remove(tmpName)
		}
	}
	return syncDir(dir)
}

// syncDir fsyncs a directory so that renames and links in it are durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return err
	}
	return nil
}
