package attest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Bounds of a tombstone document (ParseTombstoneDocument).
const (
	// MaxTombstoneRemoved bounds the records one tombstone document names.
	MaxTombstoneRemoved = 100_000
	// MaxTombstoneDocument bounds a tombstone document in bytes: MaxTombstoneRemoved
	// records of at most 160 bytes each, and the rest.
	MaxTombstoneDocument = 16 << 20
	// maxTombstoneReason and maxTombstoneEntry bound the reason (in characters) and the
	// entry's slug (in bytes), as the store does.
	maxTombstoneReason = 200
	maxTombstoneEntry  = 100
)

// A TombstoneError says why bytes are not a tombstone document.
type TombstoneError struct{ Msg string }

func (e *TombstoneError) Error() string { return "tombstone document: " + e.Msg }

func tombstoneErr(format string, args ...any) error {
	return &TombstoneError{Msg: fmt.Sprintf(format, args...)}
}

// ParseTombstoneDocument is the one parser of a tombstone document (TombstoneDocument,
// the body of a tombstone's log leaf), strict: it accepts exactly the bytes Marshal
// writes for a document that keeps these rules, and refuses anything else with a
// *TombstoneError:
//
//   - at most MaxTombstoneDocument bytes of strict JSON (CheckJSON), in canonical form
//     (nfc-jcs/v1), with exactly the members deletedAt, entry, reason and removed, and
//     in each removed record exactly kind, payloadDigest and seq;
//   - deletedAt a time in TimeLayout; entry a slug (1 to 100 of a-z, 0-9 and -, not
//     starting with -); reason one line of 1 to 200 characters (no control character
//     U+0001 to U+001F, no DEL);
//   - at most MaxTombstoneRemoved removed records, in increasing sequence order (each
//     seq at least 1, none twice), each with a record kind (a leaf kind other than
//     tombstone: a deletion removes records, never a tombstone) and a payload digest
//     "sha256:" followed by 64 lower-case hex digits.
//
// Whether the records it names are the log's earlier leaves is the auditor's question
// (package logaudit), not the format's.
func ParseTombstoneDocument(data []byte) (TombstoneDocument, error) {
	if len(data) > MaxTombstoneDocument {
		return TombstoneDocument{}, tombstoneErr("%d bytes, more than %d", len(data), MaxTombstoneDocument)
	}
	if err := CheckJSON(data); err != nil {
		return TombstoneDocument{}, tombstoneErr("%v", err)
	}
	var raw struct {
		DeletedAt *string `json:"deletedAt"`
		Entry     *string `json:"entry"`
		Reason    *string `json:"reason"`
		Removed   *[]struct {
			Kind          *string `json:"kind"`
			PayloadDigest *string `json:"payloadDigest"`
			Seq           *int64  `json:"seq"`
		} `json:"removed"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return TombstoneDocument{}, tombstoneErr("%v", err)
	}
	if raw.DeletedAt == nil || raw.Entry == nil || raw.Reason == nil || raw.Removed == nil {
		return TombstoneDocument{}, tombstoneErr("deletedAt, entry, reason and removed are all required")
	}
	var doc TombstoneDocument
	var err error
	if doc.DeletedAt, err = ParseTime(*raw.DeletedAt); err != nil {
		return TombstoneDocument{}, tombstoneErr("deletedAt: %v", err)
	}
	if doc.Entry = *raw.Entry; !isSlug(doc.Entry) {
		return TombstoneDocument{}, tombstoneErr("entry %q is not a slug (1 to %d of a-z, 0-9 and -, not starting with -)", clipText(doc.Entry), maxTombstoneEntry)
	}
	if doc.Reason = *raw.Reason; !isReason(doc.Reason) {
		return TombstoneDocument{}, tombstoneErr("reason %q is not one line of 1 to %d characters", clipText(doc.Reason), maxTombstoneReason)
	}
	removed := *raw.Removed
	if len(removed) > MaxTombstoneRemoved {
		return TombstoneDocument{}, tombstoneErr("names %d records, more than %d", len(removed), MaxTombstoneRemoved)
	}
	doc.Removed = make([]RemovedRef, 0, len(removed))
	var last int64
	for i, r := range removed {
		if r.Kind == nil || r.PayloadDigest == nil || r.Seq == nil {
			return TombstoneDocument{}, tombstoneErr("removed record %d: kind, payloadDigest and seq are all required", i)
		}
		ref := RemovedRef{Seq: *r.Seq, Kind: *r.Kind}
		switch {
		case ref.Seq < 1:
			return TombstoneDocument{}, tombstoneErr("removed record %d: seq %d is not at least 1", i, ref.Seq)
		case ref.Seq <= last:
			return TombstoneDocument{}, tombstoneErr("removed record %d: seq %d does not follow %d (records go in increasing sequence order)", i, ref.Seq, last)
		case !isLeafKind(ref.Kind) || ref.Kind == LeafKindTombstone:
			return TombstoneDocument{}, tombstoneErr("removed record %d: kind %q is not a record kind", i, clipText(ref.Kind))
		}
		last = ref.Seq
		hexText, ok := strings.CutPrefix(*r.PayloadDigest, "sha256:")
		if !ok || !isLowerHex256(hexText) {
			return TombstoneDocument{}, tombstoneErr("removed record %d: payloadDigest %q is not sha256: and 64 lower-case hex digits", i, clipText(*r.PayloadDigest))
		}
		ref.PayloadDigestHex = hexText
		doc.Removed = append(doc.Removed, ref)
	}
	canon, err := doc.Marshal()
	if err != nil {
		return TombstoneDocument{}, tombstoneErr("%v", err)
	}
	if !bytes.Equal(canon, data) {
		return TombstoneDocument{}, tombstoneErr("not in its canonical form (nfc-jcs/v1: members sorted, no spaces, no trailing newline)")
	}
	return doc, nil
}

// isSlug reports whether s is an entry's slug: 1 to 100 of a-z, 0-9 and -, not
// starting with -.
func isSlug(s string) bool {
	if len(s) == 0 || len(s) > maxTombstoneEntry || s[0] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// isReason reports whether s is a deletion's reason: one line of 1 to 200 characters,
// no control character U+0001 to U+001F and no DEL.
func isReason(s string) bool {
	n := utf8.RuneCountInString(s)
	if n < 1 || n > maxTombstoneReason || !utf8.ValidString(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

// isLowerHex256 reports whether s is 64 lower-case hex digits.
func isLowerHex256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// clipText cuts s for an error message.
func clipText(s string) string {
	if len(s) > 64 {
		s = s[:64]
		for len(s) > 0 && !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
		return s + "…"
	}
	return s
}
