package signing

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/probity-dev/probity/keys"
)

// EnsureDir makes sure the key directory dir exists, creating it with a new signing key
// for issuer, valid from now, if it does not (see GenerateDir; rand nil means
// crypto/rand). It returns the new key document when this call created the directory,
// and nil when dir already existed or another process created it first; it does not
// check an existing directory's contents, which OpenDir does (and OpenDir gives an
// existing directory without a log key or versions both).
//
// Crash and race safety: the key directory is generated in a fresh sibling directory
// (".keys-new-*", mode 0700, in dir's parent, which is created with mode 0700 if missing)
// and renamed into place. A crash or a second process starting at the same moment can
// therefore never leave a half-made key directory at dir: the first rename wins, and the
// others leave its key alone and remove their own. A crash can at most leave a
// ".keys-new-*" sibling behind, which is never used.
func EnsureDir(dir, issuer string, now time.Time, rand io.Reader) (*keys.Document, error) {
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(parent, ".keys-new-")
	if err != nil {
		return nil, fmt.Errorf("couldn't create a signing key: %w", err)
	}
	defer os.RemoveAll(tmp)
	doc, err := GenerateDir(tmp, issuer, now, rand)
	if err != nil {
		return nil, fmt.Errorf("couldn't create a signing key: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(dir); serr == nil {
			return nil, nil // another process created it first
		}
		return nil, fmt.Errorf("couldn't create the key directory %s: %w", dir, err)
	}
	if err := syncDir(parent); err != nil {
		return nil, fmt.Errorf("couldn't create the key directory %s: %w", dir, err)
	}
	return doc, nil
}
