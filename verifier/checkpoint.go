package verifier

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// Checkpoint is the body of a C2SP tlog-checkpoint: the log's origin, the tree size and
// root hash, and any extension lines.
type Checkpoint struct {
	Origin     string
	Size       int64
	Hash       tlog.Hash
	Extensions []string
}

// Cosignature is one trusted witness's verified tlog-cosignature/v1 on a checkpoint: the
// witness's key name and the time it states it saw the checkpoint (whole seconds).
type Cosignature struct {
	Witness string    `json:"witness"`
	Time    time.Time `json:"time"`
}

// VerifiedCheckpoint is a checkpoint whose log signature verified, with the cosignatures
// of trusted witnesses that verified, earliest first.
type VerifiedCheckpoint struct {
	Checkpoint
	Cosignatures []Cosignature
}

// Earliest returns the earliest trusted cosignature time, or the zero time when none.
func (c *VerifiedCheckpoint) Earliest() time.Time {
	if len(c.Cosignatures) == 0 {
		return time.Time{}
	}
	return c.Cosignatures[0].Time
}

// Latest returns the latest trusted cosignature time, or the zero time when none.
func (c *VerifiedCheckpoint) Latest() time.Time {
	if len(c.Cosignatures) == 0 {
		return time.Time{}
	}
	return c.Cosignatures[len(c.Cosignatures)-1].Time
}

// maxCheckpointSize bounds a checkpoint note: a few lines and at most 100 signatures
// (note.Open's own bound) fit well within it.
const maxCheckpointSize = 64 << 10

// ParseCheckpoint parses a checkpoint body (the note text, up to and including its last
// newline, without signatures) strictly per C2SP tlog-checkpoint: a non-empty origin,
// the size in decimal without leading zeros, the root hash in standard base64 of 32
// bytes, then non-empty extension lines.
func ParseCheckpoint(text string) (Checkpoint, error) {
	var c Checkpoint
	if !strings.HasSuffix(text, "\n") {
		return c, errors.New("checkpoint: body does not end in a newline")
	}
	lines := strings.Split(text[:len(text)-1], "\n")
	if len(lines) < 3 {
		return c, errors.New("checkpoint: fewer than three lines")
	}
	for _, l := range lines {
		if l == "" {
			return c, errors.New("checkpoint: empty line in the body")
		}
	}
	c.Origin = lines[0]
	n, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != lines[1] {
		return c, fmt.Errorf("checkpoint: tree size %q is not a decimal without leading zeros", clip(lines[1]))
	}
	c.Size = n
	h, err := base64.StdEncoding.Strict().DecodeString(lines[2])
	if err != nil || len(h) != tlog.HashSize || base64.StdEncoding.EncodeToString(h) != lines[2] {
		return c, fmt.Errorf("checkpoint: root hash %q is not base64 of 32 bytes", clip(lines[2]))
	}
	copy(c.Hash[:], h)
	if len(lines) > 3 {
		c.Extensions = lines[3:]
	}
	return c, nil
}

// cosignature/v1 (C2SP tlog-cosignature): the vkey type byte, and the signed message's
// header line.
const (
	algCosignatureV1 = 0x04
	cosignatureV1    = "cosignature/v1\n"
)

// CosignatureVerifier verifies Ed25519 tlog-cosignature/v1 cosignatures of one witness.
// It is a note.Verifier: the signature it is given is the timestamped_signature (an
// 8-byte big-endian POSIX timestamp, then 64 bytes of Ed25519) and the message the note
// text; it verifies Ed25519 over "cosignature/v1\ntime T\n" followed by the text.
type CosignatureVerifier struct {
	name string
	hash uint32
	pub  ed25519.PublicKey
}

// NewCosignatureVerifier parses a witness's verifier key, a C2SP signed-note vkey
// "name+hash+base64(0x04 || 32-byte Ed25519 public key)" whose hash is the first four
// bytes of SHA-256(name || "\n" || 0x04 || public key), big-endian, in hex.
func NewCosignatureVerifier(vkey string) (*CosignatureVerifier, error) {
	name, rest, ok1 := strings.Cut(vkey, "+")
	hash16, key64, ok2 := strings.Cut(rest, "+")
	if !ok1 || !ok2 || !validKeyName(name) || len(hash16) != 8 {
		return nil, fmt.Errorf("witness key %q is not name+hash+key", clip(vkey))
	}
	hash, err := strconv.ParseUint(hash16, 16, 32)
	if err != nil {
		return nil, fmt.Errorf("witness key %q: hash is not 8 hex digits", clip(vkey))
	}
	key, err := base64.StdEncoding.Strict().DecodeString(key64)
	if err != nil || len(key) != 1+ed25519.PublicKeySize {
		return nil, fmt.Errorf("witness key %q: key is not base64 of a type byte and 32 bytes", clip(vkey))
	}
	if key[0] != algCosignatureV1 {
		return nil, fmt.Errorf("witness key %q: type byte %#02x, want %#02x (Ed25519 cosignature/v1)", clip(vkey), key[0], algCosignatureV1)
	}
	if uint32(hash) != keyHash(name, key) {
		return nil, fmt.Errorf("witness key %q: hash does not match the name and key", clip(vkey))
	}
	return &CosignatureVerifier{name: name, hash: uint32(hash), pub: ed25519.PublicKey(key[1:])}, nil
}

// Name returns the witness's key name.
func (v *CosignatureVerifier) Name() string { return v.name }

// KeyHash returns the key's 32-bit id.
func (v *CosignatureVerifier) KeyHash() uint32 { return v.hash }

// Verify reports whether sig is a valid timestamped cosignature of msg.
func (v *CosignatureVerifier) Verify(msg, sig []byte) bool {
	if len(sig) != 8+ed25519.SignatureSize {
		return false
	}
	t := binary.BigEndian.Uint64(sig)
	if t > math.MaxInt64 {
		return false
	}
	return ed25519.Verify(v.pub, CosignedMessage(msg, int64(t)), sig[8:])
}

// CosignedMessage is what a cosignature/v1 signs for a checkpoint body at POSIX time t.
func CosignedMessage(body []byte, t int64) []byte {
	m := make([]byte, 0, len(cosignatureV1)+32+len(body))
	m = append(m, cosignatureV1...)
	m = append(m, "time "...)
	m = strconv.AppendInt(m, t, 10)
	m = append(m, '\n')
	return append(m, body...)
}

// CosignatureTime returns the timestamp of a cosignature line's signature (base64 of
// key hash, timestamp and signature), as a note.Signature holds it.
func CosignatureTime(sig note.Signature) (time.Time, error) {
	b, err := base64.StdEncoding.DecodeString(sig.Base64)
	if err != nil || len(b) != 4+8+ed25519.SignatureSize {
		return time.Time{}, errors.New("not a cosignature/v1 signature")
	}
	t := binary.BigEndian.Uint64(b[4:])
	if t > math.MaxInt64 {
		return time.Time{}, errors.New("cosignature timestamp beyond 2^63-1")
	}
	return time.Unix(int64(t), 0).UTC(), nil
}

func keyHash(name string, key []byte) uint32 {
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte("\n"))
	h.Write(key)
	return binary.BigEndian.Uint32(h.Sum(nil))
}

// validKeyName is signed-note's rule for key names: non-empty UTF-8 without spaces or +.
func validKeyName(name string) bool {
	return name != "" && utf8.ValidString(name) && strings.IndexFunc(name, unicode.IsSpace) < 0 && !strings.Contains(name, "+")
}

// trustedKeys are a policy's parsed log and witness keys, with what was verified with
// them: checkpoints by note text (notes) and by the JSON string text a bundle held them
// in (raw).
type trustedKeys struct {
	log       note.Verifier // nil: none given
	witnesses []note.Verifier
	notes     memo[string, *checkpointEntry]
	raw       memo[string, *checkpointEntry]
	// logKey and witnessKeys are the keys as given, for lastKeys.
	logKey      string
	witnessKeys []string
}

// OpenCheckpoint verifies a checkpoint note: the log's signature by logKey (a signed-note
// vkey, Ed25519), the origin (the log key's name), and the cosignatures of the witnesses
// whose keys are given (NewCosignatureVerifier). Signatures by other keys are ignored, as
// signed-note requires; a signature by a listed witness that does not verify fails. It
// returns a *Failure for a note that does not verify and an error wrapping ErrPolicy for
// keys that do not parse.
func OpenCheckpoint(text []byte, logKey string, witnessKeys []string) (*VerifiedCheckpoint, error) {
	tk, err := parseTrusted(logKey, witnessKeys)
	if err != nil {
		return nil, err
	}
	if tk.log == nil {
		return nil, fmt.Errorf("%w: no log key", ErrPolicy)
	}
	return cloneResult(openCheckpoint(text, tk))
}

// clone copies a verified checkpoint, which the memo shares, for a caller to keep.
func (c *VerifiedCheckpoint) clone() *VerifiedCheckpoint {
	if c == nil {
		return nil
	}
	d := *c
	d.Extensions = slices.Clone(c.Extensions)
	d.Cosignatures = slices.Clone(c.Cosignatures)
	return &d
}

func cloneResult(c *VerifiedCheckpoint, err error) (*VerifiedCheckpoint, error) {
	return c.clone(), err
}

func parseTrusted(logKey string, witnessKeys []string) (*trustedKeys, error) {
	if tk := lastKeys.Load(); tk != nil && tk.logKey == logKey && slices.Equal(tk.witnessKeys, witnessKeys) {
		return tk, nil
	}
	id := logKey + "\x00" + strings.Join(witnessKeys, "\x00")
	if tk, ok := keyMemo.get(id); ok {
		lastKeys.Store(tk)
		return tk, nil
	}
	tk := &trustedKeys{notes: memo[string, *checkpointEntry]{max: 1024}, raw: memo[string, *checkpointEntry]{max: 1024},
		logKey: logKey, witnessKeys: slices.Clone(witnessKeys)}
	if logKey != "" {
		v, err := note.NewVerifier(logKey)
		if err != nil {
			return nil, fmt.Errorf("%w: log key %q: %v", ErrPolicy, clip(logKey), err)
		}
		tk.log = v
	}
	// A cosignature/v1 signature does not cover the witness's name: one key listed
	// under two names would count one witness twice towards MinWitnesses.
	seen := map[string]bool{}
	for _, k := range witnessKeys {
		v, err := NewCosignatureVerifier(k)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrPolicy, err)
		}
		if seen[string(v.pub)] {
			return nil, fmt.Errorf("%w: witness key %q is listed twice (the same public key, under this or another name)", ErrPolicy, clip(k))
		}
		seen[string(v.pub)] = true
		tk.witnesses = append(tk.witnesses, v)
	}
	keyMemo.put(id, tk)
	lastKeys.Store(tk)
	return tk, nil
}

// openCheckpoint verifies a checkpoint note once per distinct text and keys: bundles of
// one log name a few hundred checkpoints between them, and each is verified once.
func openCheckpoint(text []byte, tk *trustedKeys) (*VerifiedCheckpoint, error) {
	if len(text) > maxCheckpointSize {
		// Not remembered: the memo's entries stay small however hostile the input.
		cp, fail := openCheckpointUncached(text, tk)
		return (&checkpointEntry{cp: cp, fail: fail}).result()
	}
	if e, ok := getBytes(&tk.notes, text); ok {
		return e.result()
	}
	cp, fail := openCheckpointUncached(text, tk)
	e := &checkpointEntry{cp: cp, fail: fail}
	tk.notes.put(string(text), e)
	return e.result()
}

type checkpointEntry struct {
	cp   *VerifiedCheckpoint
	fail *Failure
}

func (e *checkpointEntry) result() (*VerifiedCheckpoint, error) {
	if e.fail != nil {
		f := *e.fail // the caller's to keep; the memo's stays as it is
		return nil, &f
	}
	return e.cp, nil
}

// checkpointOpens counts the checkpoint notes verified (memo misses), for tests.
var checkpointOpens atomic.Int64

func openCheckpointUncached(text []byte, tk *trustedKeys) (*VerifiedCheckpoint, *Failure) {
	checkpointOpens.Add(1)
	failf := func(reason FailureReason, format string, args ...any) (*VerifiedCheckpoint, *Failure) {
		return nil, &Failure{Reason: reason, Detail: fmt.Sprintf(format, args...)}
	}
	if len(text) > maxCheckpointSize {
		return failf(ReasonMalformedBundle, "checkpoint of %d bytes, more than %d", len(text), maxCheckpointSize)
	}
	n, err := note.Open(text, note.VerifierList(tk.log))
	var invalid *note.InvalidSignatureError
	var unverified *note.UnverifiedNoteError
	switch {
	case errors.As(err, &invalid):
		return failf(ReasonCheckpointSignature, "the log's signature on the checkpoint does not verify")
	case errors.As(err, &unverified):
		return failf(ReasonCheckpointSignature, "the checkpoint carries no signature by the log key %s", tk.log.Name())
	case err != nil:
		return failf(ReasonMalformedBundle, "checkpoint: %v", err)
	}
	c, err := ParseCheckpoint(n.Text)
	if err != nil {
		return failf(ReasonMalformedBundle, "%v", err)
	}
	if c.Origin != tk.log.Name() {
		return failf(ReasonWrongOrigin, "checkpoint origin %q is not the log's %q", clip(c.Origin), tk.log.Name())
	}
	vc := &VerifiedCheckpoint{Checkpoint: c}
	if len(tk.witnesses) == 0 {
		return vc, nil
	}
	wn, err := note.Open(text, note.VerifierList(tk.witnesses...))
	switch {
	case errors.As(err, &invalid):
		return failf(ReasonBadCosignature, "the cosignature of witness %s does not verify", clip(invalid.Name))
	case errors.As(err, &unverified):
		return vc, nil // no trusted witness cosigned
	case err != nil:
		return failf(ReasonMalformedBundle, "checkpoint: %v", err)
	}
	for _, s := range wn.Sigs {
		t, err := CosignatureTime(s)
		if err != nil {
			return failf(ReasonBadCosignature, "witness %s: %v", clip(s.Name), err)
		}
		vc.Cosignatures = append(vc.Cosignatures, Cosignature{Witness: s.Name, Time: t})
	}
	slices.SortStableFunc(vc.Cosignatures, func(a, b Cosignature) int { return a.Time.Compare(b.Time) })
	return vc, nil
}

// memo is a bounded, concurrency-safe map for pure functions of their key: what it holds
// depends on nothing but the key, so dropping everything when it is full (rather than
// tracking recency) costs only recomputation. Reads are one atomic load; a write copies
// the map, which is cheap because writes are rare (one per distinct checkpoint or key
// set) and the map small. (Package verifier does without package sync, which
// TestVerifierDoesNoIO keeps for verifier/cli's streaming.)
type memo[K comparable, V any] struct {
	m   atomic.Pointer[map[K]V]
	max int
}

func (c *memo[K, V]) get(k K) (V, bool) {
	if m := c.m.Load(); m != nil {
		v, ok := (*m)[k]
		return v, ok
	}
	var zero V
	return zero, false
}

func (c *memo[K, V]) put(k K, v V) {
	for {
		old := c.m.Load()
		var next map[K]V
		if old == nil || len(*old) >= c.max {
			next = map[K]V{k: v}
		} else {
			next = make(map[K]V, len(*old)+1)
			for ok, ov := range *old {
				next[ok] = ov
			}
			next[k] = v
		}
		if c.m.CompareAndSwap(old, &next) {
			return
		}
	}
}

// getBytes is get for a string key given as bytes, without copying them.
func getBytes[V any](c *memo[string, V], k []byte) (V, bool) {
	if m := c.m.Load(); m != nil {
		v, ok := (*m)[string(k)]
		return v, ok
	}
	var zero V
	return zero, false
}

var (
	keyMemo     = &memo[string, *trustedKeys]{max: 64}
	consistMemo = &memo[treePair, *consistencyEntry]{max: 1024}
	// lastKeys is the key set parseTrusted returned last: a run verifies every bundle
	// under one policy, and comparing its keys costs less than naming them for keyMemo.
	lastKeys atomic.Pointer[trustedKeys]
)

// treePair names two tree heads, for consistMemo.
type treePair struct {
	older, newer         tlog.Hash
	olderSize, newerSize int64
}

// consistencyEntry is the outcome of checking one proof between a treePair.
type consistencyEntry struct {
	proof []tlog.Hash
	err   error
}

// checkConsistency checks a consistency proof from older to newer, once per distinct
// pair of tree heads and proof.
func checkConsistency(older, newer Checkpoint, proof []tlog.Hash) error {
	k := treePair{older: older.Hash, newer: newer.Hash, olderSize: older.Size, newerSize: newer.Size}
	if e, ok := consistMemo.get(k); ok && slices.Equal(e.proof, proof) {
		return e.err
	}
	var err error
	switch {
	case older.Size > newer.Size:
		err = fmt.Errorf("the older checkpoint has %d leaves, the newer %d", older.Size, newer.Size)
	case older.Size == newer.Size:
		if older.Hash != newer.Hash {
			err = fmt.Errorf("two checkpoints of size %d with different root hashes", older.Size)
		} else if len(proof) != 0 {
			err = errors.New("a consistency proof between equal checkpoints must be empty")
		}
	case older.Size == 0:
		if len(proof) != 0 {
			err = errors.New("a consistency proof from the empty tree must be empty")
		}
	default:
		if e := tlog.CheckTree(proof, newer.Size, newer.Hash, older.Size, older.Hash); e != nil {
			err = fmt.Errorf("consistency proof from size %d to %d: %v", older.Size, newer.Size, e)
		}
	}
	consistMemo.put(k, &consistencyEntry{proof: slices.Clone(proof), err: err})
	return err
}
