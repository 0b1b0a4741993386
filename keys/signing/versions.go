package signing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/keys"
)

// VersionsDir is the directory, inside a key directory, of the signed key document
// versions: one DSSE envelope (keys/v1, one line, no newline) per version, named by
// its number, versions/000001.dsse, versions/000002.dsse, …
const VersionsDir = "versions"

// maxVersionFileSize bounds a version file: an envelope of at most attest's payload bound.
const maxVersionFileSize = 4 << 20

func versionPath(dir string, n int) string {
	return filepath.Join(dir, VersionsDir, fmt.Sprintf("%06d.dsse", n))
}

// SignedVersion is one signed version of the key document, as the service logs it: its
// fields are store.KeyDocumentVersion's, in the store's conventions, for
// store.SaveKeyDocumentVersion.
type SignedVersion struct {
	Version        int
	Event          string // attest.KeysEvent*
	IssuedAt       time.Time
	DocumentDigest string // "sha256:" + hex SHA-256 of the canonical document (the next version's previous)
	PayloadDigest  string // hex SHA-256 of the DSSE payload, as the ledger records it
	Envelope       []byte // the DSSE envelope, exactly as in the version file
	KeyID          string // the key that authorizes the version (keys.Version.AuthorizedBy)
	Document       *keys.Document
}

// Versions reads the signed key document versions of the key directory dir, in order,
// and checks them as a history (keys.OpenVersion: numbers 1..n without a gap, each
// previous digest, each signature rule). A directory without versions gives none; OpenDir
// makes version 1 of such a directory. Versions does not check keys.json against the
// latest version; OpenDir does.
func Versions(dir string) ([]SignedVersion, error) {
	vs, err := readVersions(dir)
	if err != nil {
		return nil, err
	}
	out := make([]SignedVersion, len(vs))
	for i, v := range vs {
		out[i] = SignedVersion{
			Version:        v.Number,
			Event:          v.Event,
			IssuedAt:       v.IssuedAt,
			DocumentDigest: v.PreviousDigest(),
			PayloadDigest:  v.PayloadDigest,
			Envelope:       v.Envelope,
			KeyID:          v.AuthorizedBy,
			Document:       v.Document,
		}
	}
	return out, nil
}

// readVersions opens dir/versions/* as a history.
func readVersions(dir string) ([]*keys.Version, error) {
	entries, err := os.ReadDir(filepath.Join(dir, VersionsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") { // a temporary file left by a crash
			continue
		}
		num, ok := strings.CutSuffix(name, ".dsse")
		n, err := strconv.Atoi(num)
		if !ok || err != nil || len(num) != 6 || n < 1 {
			return nil, fmt.Errorf("unexpected file %s in %s", name, filepath.Join(dir, VersionsDir))
		}
		names = append(names, name) // os.ReadDir sorts by name: by number
	}
	var out []*keys.Version
	var prev *keys.Version
	for i, name := range names {
		if want := fmt.Sprintf("%06d.dsse", i+1); name != want {
			return nil, fmt.Errorf("key document versions in %s: %s follows version %d (a version is missing)", filepath.Join(dir, VersionsDir), name, i)
		}
		data, err := readFileLimited(filepath.Join(dir, VersionsDir, name), maxVersionFileSize)
		if err != nil {
			return nil, err
		}
		v, err := keys.OpenVersion(prev, data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, VersionsDir, name), err)
		}
		out = append(out, v)
		prev = v
	}
	return out, nil
}

func readFileLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return data, nil
}

// SignVersion signs doc as the key document version after prev (nil: version 1)
// recording event at issuedAt, with signers in order (the authorizing key first), and
// checks the result as a verifier will (keys.OpenVersion), so that no version is made
// that the history would refuse. Its Envelope is the keys record the service logs.
func SignVersion(prev *keys.Version, doc *keys.Document, event string, issuedAt time.Time, signers ...attest.Signer) (*keys.Version, error) {
	canon, err := keys.CanonicalDocument(doc)
	if err != nil {
		return nil, err
	}
	n, previous := 1, ""
	if prev != nil {
		n, previous = prev.Number+1, prev.PreviousDigest()
	}
	st, err := attest.NewKeysStatement(doc.Issuer, n, event, issuedAt, canon, previous)
	if err != nil {
		return nil, err
	}
	env, _, err := attest.Sign(context.Background(), st, signers...)
	if err != nil {
		return nil, err
	}
	data, err := attest.EncodeEnvelope(env)
	if err != nil {
		return nil, err
	}
	v, err := keys.OpenVersion(prev, data)
	if err != nil {
		return nil, fmt.Errorf("refusing to make key document version %d: %w", n, err)
	}
	return v, nil
}

// writeVersion writes v's envelope as its version file; it never replaces one.
func writeVersion(dir string, v *keys.Version) error {
	if err := os.MkdirAll(filepath.Join(dir, VersionsDir), 0o700); err != nil {
		return err
	}
	return writeFileAtomic(versionPath(dir, v.Number), v.Envelope, 0o644, false)
}

// state is a key directory read for a change: its key document and its history.
type state struct {
	doc      *keys.Document
	versions []*keys.Version
}

func (s *state) latest() *keys.Version {
	if len(s.versions) == 0 {
		return nil
	}
	return s.versions[len(s.versions)-1]
}

// loadState reads keys.json and the versions of dir and brings keys.json up to date
// with the latest version when a crash came between writing the version and keys.json
// (keys.json then holds the previous version's document, or for version 1 the document
// it was made from). Any other difference is refused: keys.json changes only through
// a signed version.
func loadState(dir string) (*state, error) {
	docPath := filepath.Join(dir, keys.DocumentFile)
	doc, err := keys.Load(docPath)
	if err != nil {
		return nil, err
	}
	vs, err := readVersions(dir)
	if err != nil {
		return nil, err
	}
	s := &state{doc: doc, versions: vs}
	last := s.latest()
	if last == nil || keys.SameDocument(doc, last.Document) {
		return s, nil
	}
	behind := false
	if len(vs) >= 2 {
		behind = keys.SameDocument(doc, vs[len(vs)-2].Document)
	} else {
		up := *doc
		up.FormatVersion, up.Log = keys.FormatVersion, last.Document.Log
		behind = keys.SameDocument(&up, last.Document)
	}
	if !behind {
		return nil, fmt.Errorf("%s differs from the latest signed key document version (%s): the key document changes only through probity keys rotate and revoke", docPath, versionPath(dir, last.Number))
	}
	data, err := keys.MarshalDocument(last.Document)
	if err != nil {
		return nil, err
	}
	if err := writeFileAtomic(docPath, data, 0o644, true); err != nil {
		return nil, err
	}
	s.doc = last.Document
	return s, nil
}

// commit writes a new version, then keys.json from it.
func (s *state) commit(dir string, v *keys.Version) error {
	if err := writeVersion(dir, v); err != nil {
		return err
	}
	data, err := keys.MarshalDocument(v.Document)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(dir, keys.DocumentFile), data, 0o644, true); err != nil {
		return err
	}
	s.doc, s.versions = v.Document, append(s.versions, v)
	return nil
}

// ensureHistory makes sure dir has a log key and a signed history whose latest version
// lists it, signing with signer at now: a directory without versions gets version 1
// (generated) of its document with the log member; one whose history lacks the log gets
// a log_key_added version. The log key file is written first: until a version lists
// it, it has signed nothing, and a later call uses it rather than making another.
func (s *state) ensureHistory(dir string, signer *Signer, now time.Time, rand io.Reader) error {
	logPath := filepath.Join(dir, LogKeyFile)
	if s.doc.Log != nil && s.latest() != nil {
		_, vkey, err := readLogKey(logPath)
		if err != nil {
			return err
		}
		if vkey != s.doc.Log.Key {
			return fmt.Errorf("the log key in %s (%s) is not the one %s lists (%s)", logPath, vkey, keys.DocumentFile, s.doc.Log.Key)
		}
		return nil
	}
	log := s.doc.Log
	_, vkey, err := readLogKey(logPath)
	switch {
	case err == nil && log != nil && vkey != log.Key:
		return fmt.Errorf("the log key in %s (%s) is not the one %s lists (%s)", logPath, vkey, keys.DocumentFile, log.Key)
	case err == nil && log == nil:
		origin, oerr := keys.LogOrigin(s.doc.Issuer)
		if oerr != nil {
			return oerr
		}
		if !strings.HasPrefix(vkey, origin+"+") {
			return fmt.Errorf("the log key in %s is named for another origin than %s", logPath, origin)
		}
		log = &keys.Log{Origin: origin, Key: vkey}
	case err != nil && errors.Is(err, fs.ErrNotExist) && log == nil:
		origin, oerr := keys.LogOrigin(s.doc.Issuer)
		if oerr != nil {
			return oerr
		}
		data, l, gerr := newLogKey(rand, origin)
		if gerr != nil {
			return gerr
		}
		werr := writeFileAtomic(logPath, data, 0o600, false)
		clear(data)
		if werr != nil {
			return werr
		}
		log = l
	case err != nil:
		return err
	}
	if now = now.UTC().Truncate(time.Millisecond); !s.doc.AuthorizesAt(signer.ID(), now) {
		return fmt.Errorf("the signing key %s cannot sign the key document at %s (revoked or outside its window)", signer.ID(), attest.FormatTime(now))
	}
	next := *s.doc
	next.Keys = append([]keys.Key(nil), s.doc.Keys...)
	next.FormatVersion, next.Log = keys.FormatVersion, log
	event := attest.KeysEventGenerated
	if s.latest() != nil {
		event = attest.KeysEventLogKeyAdded
	}
	v, err := SignVersion(s.latest(), &next, event, now, signer)
	if err != nil {
		return err
	}
	return s.commit(dir, v)
}
