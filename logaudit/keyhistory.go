package logaudit

import (
	"errors"

	"github.com/probity-dev/probity/keys"
)

// keyHistory is what the audit needs of the key history built from the log's keys
// records (verifier.KeyHistory): add verifies one keys record at its index as the next
// version, inForce gives the key document to verify the record at an index under, and
// checkServed says whether the served document is the latest logged version. add is
// called in index order; inForce only for indices whose earlier keys records were all
// added.
type keyHistory interface {
	add(index int64, envelope []byte) error
	inForce(index int64) *keys.Document
	checkServed(doc *keys.Document) error
	versions() int
	// needsVersion1 reports that records seen before the first keys record must wait
	// for it (they are verified under version 1).
	needsVersion1() bool
}

// newKeyHistory starts the key history of a log whose site serves doc (nil: none).
func newKeyHistory(doc *keys.Document) keyHistory { return servedOnly{doc} }

// servedOnly is the key history of a log whose keys records this build cannot read
// yet: every record is verified under the served document.
type servedOnly struct{ doc *keys.Document }

var errNoKeyHistory = errors.New("this build cannot verify keys records")

func (s servedOnly) add(int64, []byte) error          { return errNoKeyHistory }
func (s servedOnly) inForce(int64) *keys.Document     { return s.doc }
func (s servedOnly) checkServed(*keys.Document) error { return nil }
func (s servedOnly) versions() int                    { return 0 }
func (s servedOnly) needsVersion1() bool              { return false }
