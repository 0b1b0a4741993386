package logaudit

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// checkpoint is a parsed C2SP tlog-checkpoint.
type checkpoint struct {
	Origin string
	Size   int64
	Root   tlog.Hash
	Note   []byte // the whole signed note, cosignatures included
}

// parseCheckpointBody parses the signed text of a checkpoint: origin, size, root hash,
// optional extension lines.
func parseCheckpointBody(text string) (checkpoint, error) {
	lines := strings.SplitN(text, "\n", 4)
	if len(lines) < 4 || !strings.HasSuffix(text, "\n") {
		return checkpoint{}, errors.New("fewer than three lines")
	}
	c := checkpoint{Origin: lines[0]}
	if c.Origin == "" {
		return checkpoint{}, errors.New("empty origin")
	}
	n, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != lines[1] {
		return checkpoint{}, fmt.Errorf("size %q is not a decimal without leading zeros", clip(lines[1]))
	}
	c.Size = n
	h, err := base64.StdEncoding.Strict().DecodeString(lines[2])
	if err != nil || len(h) != tlog.HashSize {
		return checkpoint{}, fmt.Errorf("root hash %q is not 32 bytes of base64", clip(lines[2]))
	}
	copy(c.Root[:], h)
	for rest := lines[3]; rest != ""; {
		line, after, found := strings.Cut(rest, "\n")
		if line == "" || !found {
			return checkpoint{}, errors.New("empty extension line")
		}
		rest = after
	}
	return c, nil
}

// cosignatureV1 is the signature type byte of C2SP tlog-cosignature/v1 keys.
const cosignatureV1 = 0x04

// witnessKey is a witness's tlog-cosignature/v1 public key, from a vkey
// "name+hash+base64(0x04 || key)".
type witnessKey struct {
	Name string
	Hash uint32
	Key  ed25519.PublicKey
	VKey string
}

// parseWitnessKey parses a tlog-cosignature/v1 verifier key.
func parseWitnessKey(vkey string) (witnessKey, error) {
	name, rest, ok1 := strings.Cut(vkey, "+")
	hashText, keyText, ok2 := strings.Cut(rest, "+")
	if !ok1 || !ok2 || !validName(name) || len(hashText) != 8 {
		return witnessKey{}, fmt.Errorf("witness key %q is not name+hash+key", clip(vkey))
	}
	h, err := strconv.ParseUint(hashText, 16, 32)
	if err != nil {
		return witnessKey{}, fmt.Errorf("witness key %q: key hash is not 8 hex digits", clip(vkey))
	}
	k, err := base64.StdEncoding.Strict().DecodeString(keyText)
	if err != nil || len(k) != 1+ed25519.PublicKeySize || k[0] != cosignatureV1 {
		return witnessKey{}, fmt.Errorf("witness key %q is not a tlog-cosignature/v1 (type 0x04) Ed25519 key", clip(vkey))
	}
	if keyHash(name, k) != uint32(h) {
		return witnessKey{}, fmt.Errorf("witness key %q: key hash does not match name and key", clip(vkey))
	}
	return witnessKey{Name: name, Hash: uint32(h), Key: ed25519.PublicKey(k[1:]), VKey: vkey}, nil
}

func keyHash(name string, key []byte) uint32 {
	h := sha256.New()
	h.Write([]byte(name + "\n"))
	h.Write(key)
	return binary.BigEndian.Uint32(h.Sum(nil))
}

func validName(name string) bool {
	return name != "" && utf8.ValidString(name) && strings.IndexFunc(name, unicode.IsSpace) < 0 && !strings.Contains(name, "+")
}

// Cosignature is one witness's cosignature as the audit found it.
type Cosignature struct {
	Witness string    `json:"witness"` // the witness key's name
	Time    time.Time `json:"time"`    // the witness's timestamp (tlog-cosignature/v1)
	Valid   bool      `json:"valid"`
}

// checkNote verifies a checkpoint note: the log's signature with logKey, and the
// cosignatures of the trusted witnesses. Unknown signatures are ignored. It returns the
// parsed checkpoint, the trusted witnesses' cosignatures (valid or not), and a failure
// when the log's signature is missing or invalid or the text is not a checkpoint.
func checkNote(text []byte, logKey note.Verifier, witnesses []witnessKey) (checkpoint, []Cosignature, *Failure) {
	n, err := note.Open(text, note.VerifierList(logKey))
	if err != nil {
		var unverified *note.UnverifiedNoteError
		var invalid *note.InvalidSignatureError
		switch {
		case errors.As(err, &unverified):
			return checkpoint{}, nil, &Failure{Index: -1, Reason: ReasonCheckpointSignature, Detail: "no signature by the log key " + logKey.Name()}
		case errors.As(err, &invalid):
			return checkpoint{}, nil, &Failure{Index: -1, Reason: ReasonCheckpointSignature, Detail: "the log's signature does not verify: " + err.Error()}
		default:
			return checkpoint{}, nil, &Failure{Index: -1, Reason: ReasonCheckpointMalformed, Detail: "not a signed note: " + err.Error()}
		}
	}
	c, err := parseCheckpointBody(n.Text)
	if err != nil {
		return checkpoint{}, nil, &Failure{Index: -1, Reason: ReasonCheckpointMalformed, Detail: err.Error()}
	}
	c.Note = bytes.Clone(text)
	if c.Origin != logKey.Name() {
		return c, nil, &Failure{Index: -1, Reason: ReasonCheckpointOrigin, Detail: fmt.Sprintf("origin %q is not the log key's name %q", clip(c.Origin), logKey.Name())}
	}
	var cos []Cosignature
	for _, s := range n.UnverifiedSigs {
		for _, w := range witnesses {
			if s.Name != w.Name || s.Hash != w.Hash {
				continue
			}
			raw, err := base64.StdEncoding.DecodeString(s.Base64)
			co := Cosignature{Witness: w.Name}
			// raw is key hash (4) || timestamp (8) || Ed25519 signature (64).
			if err == nil && len(raw) == 4+8+ed25519.SignatureSize {
				t := binary.BigEndian.Uint64(raw[4:])
				msg := fmt.Appendf(nil, "cosignature/v1\ntime %d\n%s", t, n.Text)
				co.Valid = t <= 1<<62 && ed25519.Verify(w.Key, msg, raw[12:])
				co.Time = time.Unix(int64(t&(1<<62-1)), 0).UTC()
			}
			cos = append(cos, co)
		}
	}
	return c, cos, nil
}

// clip bounds text from the source echoed in reports.
func clip(s string) string {
	if len(s) <= 64 {
		return strings.ToValidUTF8(s, "?")
	}
	return strings.ToValidUTF8(s[:64], "?") + "…"
}
