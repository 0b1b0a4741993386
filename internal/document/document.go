// Package document holds the one decoding rule of the JSON documents Probity stores:
// a round's check results (checks), a change's details and the history state
// (history), a supply run's verdict (checks/supply). Each document's Go type and its
// Encode and Decode functions live in the package that writes it; the store keeps the
// bytes and never looks inside.
//
// The writers are Probity's own, so a stored document is read strictly: exactly one
// JSON value, every object member known to the Go type, values of the declared types.
// A member the type does not know is an error, not silently dropped, so a document
// written by a newer shape is never read as if it said less. When a shape changes, its
// type must go on accepting the older stored form (and say so in its doc comment).
package document

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Decode decodes the stored JSON document data into v (a pointer), strictly: data must
// hold exactly one JSON value (surrounding white space aside) and no object member
// that v's type does not declare.
func Decode(data []byte, v any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return errors.New("empty document")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			return fmt.Errorf("data after the document at offset %d", dec.InputOffset())
		}
		return fmt.Errorf("data after the document: %w", err)
	}
	return nil
}
