package attest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"
)

// The log leaf format (see "Log leaf" in the package documentation).
const (
	// LeafFormat is the first line of every leaf.
	LeafFormat = "probity.dev/log-leaf/v1"
	// MaxLeafSize is the largest leaf: a tlog-tiles entry is at most 65,535 bytes (its
	// length is a big-endian uint16 in an entry bundle).
	MaxLeafSize = 1<<16 - 1
	// LeafKindTombstone is the kind of a tombstone's leaf.
	LeafKindTombstone = "tombstone"
	// maxLeafKind bounds a kind's length.
	maxLeafKind = 32
)

// LeafBody says what a leaf holds after its kind line.
type LeafBody string

// The four bodies of a leaf.
const (
	// LeafEnvelope holds a signed record's DSSE envelope, byte for byte as stored.
	LeafEnvelope LeafBody = "envelope"
	// LeafEnvelopeDigest holds the SHA-256 of a record's envelope, for an envelope too
	// large to fit (RecordLeaf decides, by size alone).
	LeafEnvelopeDigest LeafBody = "envelope-sha256"
	// LeafTombstone holds a tombstone document (TombstoneDocument).
	LeafTombstone LeafBody = "tombstone"
	// LeafTombstoneDigest holds the SHA-256 of a tombstone document too large to fit
	// (the deletion of an entry with hundreds of records; TombstoneLeaf decides, by
	// size alone).
	LeafTombstoneDigest LeafBody = "tombstone-sha256"
	// LeafRemoved holds the payload digest of a record that an entry's deletion removed
	// from the ledger before it was logged: its envelope is gone, its tombstone names it.
	LeafRemoved LeafBody = "removed"
)

// Leaf is a parsed log leaf.
type Leaf struct {
	Seq  int64  // the ledger sequence number; the leaf's log index is Seq-1
	Kind string // the record's kind (probe, change, supply, keys, …) or LeafKindTombstone
	Body LeafBody
	// Data is the envelope (LeafEnvelope) or the tombstone document (LeafTombstone).
	Data []byte
	// Digest is the envelope's SHA-256 (LeafEnvelopeDigest), the tombstone document's
	// (LeafTombstoneDigest) or the removed record's payload SHA-256 (LeafRemoved), 32
	// bytes.
	Digest []byte
}

// LeafError reports bytes that are not a leaf of this format.
type LeafError struct{ Msg string }

func (e *LeafError) Error() string { return "log leaf: " + e.Msg }

func leafErr(format string, args ...any) error {
	return &LeafError{Msg: fmt.Sprintf(format, args...)}
}

// leafHeader writes the first three lines of a leaf.
func leafHeader(seq int64, kind string) ([]byte, error) {
	if seq < 1 {
		return nil, leafErr("sequence number %d is not positive", seq)
	}
	if !isLeafKind(kind) {
		return nil, leafErr("kind %q is not 1 to %d of a-z, 0-9 and _, starting with a letter", kind, maxLeafKind)
	}
	b := make([]byte, 0, 64)
	b = append(b, LeafFormat...)
	b = append(b, "\nseq "...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, "\nkind "...)
	b = append(b, kind...)
	b = append(b, '\n')
	return b, nil
}

// RecordLeaf is the leaf of a signed ledger record: its envelope inline when the leaf
// fits in MaxLeafSize, else the envelope's SHA-256. The choice depends on the size alone,
// so a verifier holding the envelope rebuilds the same leaf. kind must not be
// LeafKindTombstone.
func RecordLeaf(seq int64, kind string, envelope []byte) ([]byte, error) {
	if kind == LeafKindTombstone {
		return nil, leafErr("a record cannot have the kind %q", kind)
	}
	if len(envelope) == 0 {
		return nil, leafErr("empty envelope")
	}
	b, err := leafHeader(seq, kind)
	if err != nil {
		return nil, err
	}
	inline := append(b, "envelope "...)
	inline = strconv.AppendInt(inline, int64(len(envelope)), 10)
	inline = append(inline, '\n')
	if len(inline)+len(envelope) <= MaxLeafSize {
		return append(inline, envelope...), nil
	}
	sum := sha256.Sum256(envelope)
	b = append(b[:len(b):len(b)], "envelope-sha256 "...)
	b = hex.AppendEncode(b, sum[:])
	return append(b, '\n'), nil
}

// TombstoneLeaf is the leaf of a tombstone: doc is its TombstoneDocument, inline when
// the leaf fits in MaxLeafSize, else its SHA-256 (a deletion is not bounded: each record
// it removes adds about 100 bytes to the document).
func TombstoneLeaf(seq int64, doc []byte) ([]byte, error) {
	if len(doc) == 0 {
		return nil, leafErr("empty tombstone")
	}
	b, err := leafHeader(seq, LeafKindTombstone)
	if err != nil {
		return nil, err
	}
	inline := append(b, "tombstone "...)
	inline = strconv.AppendInt(inline, int64(len(doc)), 10)
	inline = append(inline, '\n')
	if len(inline)+len(doc) <= MaxLeafSize {
		return append(inline, doc...), nil
	}
	sum := sha256.Sum256(doc)
	b = append(b[:len(b):len(b)], "tombstone-sha256 "...)
	b = hex.AppendEncode(b, sum[:])
	return append(b, '\n'), nil
}

// RemovedLeaf is the leaf of a record removed from the ledger (with its entry) before
// it was logged: its kind and the hex SHA-256 of its payload, as its tombstone lists it.
func RemovedLeaf(seq int64, kind, payloadDigestHex string) ([]byte, error) {
	if kind == LeafKindTombstone {
		return nil, leafErr("a record cannot have the kind %q", kind)
	}
	d, err := hex.DecodeString(payloadDigestHex)
	if err != nil || len(d) != sha256.Size || hex.EncodeToString(d) != payloadDigestHex {
		return nil, leafErr("payload digest %q is not 64 lower-case hex digits", payloadDigestHex)
	}
	b, err := leafHeader(seq, kind)
	if err != nil {
		return nil, err
	}
	b = append(b, "removed payload-sha256 "...)
	b = append(b, payloadDigestHex...)
	return append(b, '\n'), nil
}

// ParseLeaf parses a leaf strictly: exactly one of the forms RecordLeaf, TombstoneLeaf
// and RemovedLeaf write, and nothing else. Data aliases leaf.
func ParseLeaf(leaf []byte) (*Leaf, error) {
	if len(leaf) > MaxLeafSize {
		return nil, leafErr("%d bytes, more than %d", len(leaf), MaxLeafSize)
	}
	rest, ok := bytes.CutPrefix(leaf, []byte(LeafFormat+"\n"))
	if !ok {
		return nil, leafErr("does not start with %q", LeafFormat)
	}
	line, rest, ok := cutLine(rest)
	seqText, found := bytes.CutPrefix(line, []byte("seq "))
	if !ok || !found {
		return nil, leafErr("second line is not \"seq N\"")
	}
	seq, err := strconv.ParseInt(string(seqText), 10, 64)
	if err != nil || seq < 1 || strconv.FormatInt(seq, 10) != string(seqText) {
		return nil, leafErr("sequence number %q is not a positive decimal without leading zeros", clipBytes(seqText))
	}
	line, rest, ok = cutLine(rest)
	kind, found := bytes.CutPrefix(line, []byte("kind "))
	if !ok || !found || !isLeafKind(string(kind)) {
		return nil, leafErr("third line is not \"kind K\" with a valid kind")
	}
	l := &Leaf{Seq: seq, Kind: string(kind)}
	line, rest, ok = cutLine(rest)
	if !ok {
		return nil, leafErr("no body line")
	}
	word, arg, _ := bytes.Cut(line, []byte(" "))
	l.Body = LeafBody(word)
	tomb := l.Kind == LeafKindTombstone
	switch {
	case l.Body == LeafEnvelope && !tomb, l.Body == LeafTombstone && tomb:
		n, err := strconv.Atoi(string(arg))
		if err != nil || n < 1 || strconv.Itoa(n) != string(arg) || n != len(rest) {
			return nil, leafErr("%s length %q does not match the %d bytes that follow", l.Body, clipBytes(arg), len(rest))
		}
		l.Data = rest
		return l, nil
	case l.Body == LeafEnvelopeDigest && !tomb, l.Body == LeafTombstoneDigest && tomb:
		l.Digest, err = hexDigest(arg)
	case l.Body == LeafRemoved && !tomb:
		hexText, found := bytes.CutPrefix(arg, []byte("payload-sha256 "))
		if !found {
			return nil, leafErr("removed line does not name payload-sha256")
		}
		l.Digest, err = hexDigest(hexText)
	default:
		return nil, leafErr("body %q is not one a %s leaf may have", clipBytes(word), l.Kind)
	}
	if err != nil {
		return nil, err
	}
	if len(rest) != 0 {
		return nil, leafErr("%d bytes after the body line", len(rest))
	}
	return l, nil
}

// EnvelopeMatches reports whether the leaf is the RecordLeaf of envelope: inline and
// equal, or in digest form with the envelope's SHA-256 and an envelope too large to be
// inline.
func (l *Leaf) EnvelopeMatches(envelope []byte) bool {
	want, err := RecordLeaf(l.Seq, l.Kind, envelope)
	if err != nil {
		return false
	}
	got, err := l.Marshal()
	return err == nil && bytes.Equal(got, want)
}

// Marshal re-encodes a parsed leaf.
func (l *Leaf) Marshal() ([]byte, error) {
	switch l.Body {
	case LeafEnvelope:
		return RecordLeaf(l.Seq, l.Kind, l.Data)
	case LeafTombstone:
		return TombstoneLeaf(l.Seq, l.Data)
	case LeafRemoved:
		return RemovedLeaf(l.Seq, l.Kind, hex.EncodeToString(l.Digest))
	case LeafEnvelopeDigest, LeafTombstoneDigest:
		if len(l.Digest) != sha256.Size {
			return nil, leafErr("digest of %d bytes", len(l.Digest))
		}
		b, err := leafHeader(l.Seq, l.Kind)
		if err != nil {
			return nil, err
		}
		b = append(b, l.Body...)
		b = append(b, ' ')
		b = hex.AppendEncode(b, l.Digest)
		return append(b, '\n'), nil
	}
	return nil, leafErr("unknown body %q", l.Body)
}

func cutLine(b []byte) (line, rest []byte, ok bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return nil, nil, false
	}
	return b[:i], b[i+1:], true
}

func hexDigest(b []byte) ([]byte, error) {
	d, err := hex.DecodeString(string(b))
	if err != nil || len(d) != sha256.Size || hex.EncodeToString(d) != string(b) {
		return nil, leafErr("digest %q is not 64 lower-case hex digits", clipBytes(b))
	}
	return d, nil
}

func isLeafKind(k string) bool {
	if len(k) == 0 || len(k) > maxLeafKind || k[0] < 'a' || k[0] > 'z' {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

func clipBytes(b []byte) string {
	if len(b) > 64 {
		b = b[:64]
	}
	return string(b)
}

// TombstoneDocument is what a tombstone's leaf holds: the deletion of an entry's signed
// records, as canonical JSON (nfc-jcs/v1) with exactly these members:
//
//	{"deletedAt":"2026-12-01T10:00:00.000Z","entry":"weather","reason":"…",
//	 "removed":[{"kind":"probe","payloadDigest":"sha256:…","seq":3},…]}
//
// Marshal writes it; ParseTombstoneDocument, the one parser every reader uses (the
// auditor, probity inspect), reads it and states the rules of its members.
type TombstoneDocument struct {
	DeletedAt time.Time
	Entry     string // the entry's slug
	Reason    string
	Removed   []RemovedRef // in sequence order
}

// RemovedRef is one record a tombstone removed.
type RemovedRef struct {
	Seq              int64
	Kind             string
	PayloadDigestHex string // hex SHA-256 of the record's payload
}

// Marshal encodes the document canonically.
func (t TombstoneDocument) Marshal() ([]byte, error) {
	type removed struct {
		Kind          string `json:"kind"`
		PayloadDigest string `json:"payloadDigest"`
		Seq           int64  `json:"seq"`
	}
	doc := struct {
		DeletedAt string    `json:"deletedAt"`
		Entry     string    `json:"entry"`
		Reason    string    `json:"reason"`
		Removed   []removed `json:"removed"`
	}{DeletedAt: FormatTime(t.DeletedAt), Entry: t.Entry, Reason: t.Reason, Removed: []removed{}}
	for _, r := range t.Removed {
		doc.Removed = append(doc.Removed, removed{Kind: r.Kind, PayloadDigest: "sha256:" + r.PayloadDigestHex, Seq: r.Seq})
	}
	return Marshal(doc)
}
