package attest_test

import (
	"encoding/json"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
)

// tombstoneCases are testdata/tombstones.json: valid tombstone documents, and malformed
// ones with why each is refused. The tests of the parser's callers (verifier's Describe,
// logaudit's audit) read the same file.
type tombstoneCases struct {
	Valid     []string `json:"valid"`
	Malformed []struct {
		Why string `json:"why"`
		Doc string `json:"doc"`
	} `json:"malformed"`
}

func readTombstoneCases(t *testing.T) tombstoneCases {
	t.Helper()
	b, err := os.ReadFile("testdata/tombstones.json")
	if err != nil {
		t.Fatal(err)
	}
	var c tombstoneCases
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Valid) == 0 || len(c.Malformed) == 0 {
		t.Fatal("testdata/tombstones.json holds no cases")
	}
	return c
}

// TestParseTombstoneDocument: every valid document parses, and Marshal writes it again
// byte for byte; every malformed one is refused with a *TombstoneError; the worked
// example of the package documentation reads as it says.
func TestParseTombstoneDocument(t *testing.T) {
	c := readTombstoneCases(t)
	for _, doc := range c.Valid {
		td, err := attest.ParseTombstoneDocument([]byte(doc))
		if err != nil {
			t.Errorf("%s: %v", doc, err)
			continue
		}
		if b, err := td.Marshal(); err != nil || string(b) != doc {
			t.Errorf("%s: Marshal of the parsed document = %s, %v", doc, b, err)
		}
	}
	for _, m := range c.Malformed {
		td, err := attest.ParseTombstoneDocument([]byte(m.Doc))
		var te *attest.TombstoneError
		if !errors.As(err, &te) {
			t.Errorf("%s: %+v, %v; want a *TombstoneError", m.Why, td, err)
		}
	}

	td, err := attest.ParseTombstoneDocument([]byte(c.Valid[0]))
	if err != nil {
		t.Fatal(err)
	}
	want := attest.TombstoneDocument{DeletedAt: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), Entry: "example", Reason: "the operator removed the server",
		Removed: []attest.RemovedRef{{Seq: 1, Kind: "probe", PayloadDigestHex: "d6709818060ec01433c73eb48ac52102d36baa1955b9f9db2ebd9bbaa5c2db42"}}}
	if !td.DeletedAt.Equal(want.DeletedAt) || td.Entry != want.Entry || td.Reason != want.Reason || len(td.Removed) != 1 || td.Removed[0] != want.Removed[0] {
		t.Errorf("the worked example reads %+v, want %+v", td, want)
	}
}

// TestParseTombstoneDocumentBounds: a document of more than MaxTombstoneDocument bytes,
// or naming more than MaxTombstoneRemoved records, is refused before it is decoded.
func TestParseTombstoneDocumentBounds(t *testing.T) {
	big := make([]byte, attest.MaxTombstoneDocument+1)
	if _, err := attest.ParseTombstoneDocument(big); err == nil {
		t.Error("a document over the size bound parsed")
	}
	doc := attest.TombstoneDocument{DeletedAt: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), Entry: "e", Reason: "r"}
	for i := range attest.MaxTombstoneRemoved + 1 {
		doc.Removed = append(doc.Removed, attest.RemovedRef{Seq: int64(i + 1), Kind: "probe", PayloadDigestHex: "d6709818060ec01433c73eb48ac52102d36baa1955b9f9db2ebd9bbaa5c2db42"})
	}
	b, err := doc.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > attest.MaxTombstoneDocument {
		t.Fatalf("%d records make %d bytes, over the size bound: the bound is too small", len(doc.Removed), len(b))
	}
	if _, err := attest.ParseTombstoneDocument(b); err == nil {
		t.Errorf("a document naming %d records parsed", len(doc.Removed))
	}
	doc.Removed = doc.Removed[:attest.MaxTombstoneRemoved]
	if b, err = doc.Marshal(); err != nil {
		t.Fatal(err)
	}
	if _, err := attest.ParseTombstoneDocument(b); err != nil {
		t.Errorf("a document naming %d records: %v", len(doc.Removed), err)
	}
}
