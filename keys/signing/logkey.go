package signing

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/mod/sumdb/note"

	"github.com/probity-dev/probity/keys"
)

// LogKeyFile holds the log key, which signs the transparency log's checkpoints: a C2SP
// signed-note signer key ("PRIVATE+KEY+origin+hash+base64") and a newline, mode 0600.
const LogKeyFile = "log-key.note"

// maxLogKeyFileSize bounds the log key file; a signer key is about 100 bytes.
const maxLogKeyFileSize = 4 << 10

// newLogKey derives a log key named origin from a seed read from rand (crypto/rand if
// nil) and returns the signer key file's contents and the document's log member.
func newLogKey(rand io.Reader, origin string) ([]byte, *keys.Log, error) {
	priv, err := generateKey(rand)
	if err != nil {
		return nil, nil, err
	}
	defer clear(priv)
	vkey, err := note.NewEd25519VerifierKey(origin, priv.Public().(ed25519.PublicKey))
	if err != nil {
		return nil, nil, fmt.Errorf("log key: %w", err)
	}
	// The signer key spells the same name and hash as the verifier key, with the seed.
	parts := strings.SplitN(vkey, "+", 3)
	skey := "PRIVATE+KEY+" + origin + "+" + parts[1] + "+" + base64.StdEncoding.EncodeToString(append([]byte{0x01}, priv.Seed()...))
	if _, err := note.NewSigner(skey); err != nil {
		return nil, nil, fmt.Errorf("log key: %w", err)
	}
	return []byte(skey + "\n"), &keys.Log{Origin: origin, Key: vkey}, nil
}

// parseLogKey reads a log key file's contents: one signer key and a newline.
func parseLogKey(data []byte) (note.Signer, string, error) {
	skey, ok := bytes.CutSuffix(data, []byte("\n"))
	if !ok || bytes.ContainsAny(skey, "\r\n") {
		return nil, "", fmt.Errorf("not one signed-note signer key line")
	}
	s, err := note.NewSigner(string(skey))
	if err != nil {
		return nil, "", fmt.Errorf("not a signed-note signer key: %v", err)
	}
	parts := strings.SplitN(string(skey), "+", 5) // the base64 may hold "+" too
	if len(parts) != 5 {
		return nil, "", fmt.Errorf("not a signed-note signer key")
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(parts[4])
	if err != nil || len(raw) != 1+ed25519.SeedSize || raw[0] != 0x01 {
		clear(raw)
		return nil, "", fmt.Errorf("not an Ed25519 signed-note signer key")
	}
	pub := ed25519.NewKeyFromSeed(raw[1:]).Public().(ed25519.PublicKey)
	clear(raw)
	vkey, err := note.NewEd25519VerifierKey(s.Name(), pub)
	if err != nil {
		return nil, "", err
	}
	return s, vkey, nil
}

// readLogKey loads the log key file at path, refusing one readable by group or others.
func readLogKey(path string) (note.Signer, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", fmt.Errorf("couldn't load the log key: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, "", err
	}
	if !fi.Mode().IsRegular() {
		return nil, "", fmt.Errorf("log key file %q is not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, "", fmt.Errorf("log key file %q is readable by group or others (mode %04o); run: chmod 600 %q", path, perm, path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxLogKeyFileSize+1))
	defer clear(data)
	if err == nil && len(data) > maxLogKeyFileSize {
		err = fmt.Errorf("file is larger than %d bytes", maxLogKeyFileSize)
	}
	if err != nil {
		return nil, "", fmt.Errorf("couldn't load the log key %q: %w", path, err)
	}
	s, vkey, err := parseLogKey(data)
	if err != nil {
		return nil, "", fmt.Errorf("log key file %q: %w", path, err)
	}
	return s, vkey, nil
}

// LoadLogSigner loads the log key of the key directory dir: the signed-note signer that
// signs the log's checkpoints, and its verifier key, which the key document lists as
// log.key. It refuses a log key the key document does not list.
func LoadLogSigner(dir string) (note.Signer, string, error) {
	doc, err := keys.Load(filepath.Join(dir, keys.DocumentFile))
	if err != nil {
		return nil, "", err
	}
	s, vkey, err := readLogKey(filepath.Join(dir, LogKeyFile))
	if err != nil {
		return nil, "", err
	}
	if doc.Log == nil || doc.Log.Key != vkey {
		return nil, "", fmt.Errorf("the log key in %s (%s) is not the one %s lists; open the key directory (signing.OpenDir) first", dir, vkey, keys.DocumentFile)
	}
	return s, vkey, nil
}
