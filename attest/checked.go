package attest

import (
	"bytes"
	"context"
	"fmt"
)

// Checked is a statement in canonical form that passed every rule of the format, the
// rules DecodeStatement applies for a verifier. Only Check makes one, so a Checked can be
// signed without checking it again: each statement is validated once, where it is built.
type Checked struct {
	st      *Statement
	payload []byte
	decoded *DecodedStatement
}

// Check encodes st canonically (Marshal) and applies the verifier's rules to the bytes.
// It fails with the error DecodeStatement would give for them.
//
// Marshal's output is Canonicalize's, and Canonicalize is idempotent (FuzzCanonicalize
// holds it to that), so the bytes are their own canonical form and Check skips
// DecodeStatement's re-encoding to compare; every other rule runs on the bytes as a
// verifier reads them (decodeCanonical), not on the Go value, so nothing is signed that
// the verifier would refuse.
func Check(st *Statement) (*Checked, error) {
	if st == nil {
		return nil, fmt.Errorf("attest: refusing to sign: no statement")
	}
	payload, err := Marshal(st)
	if err != nil {
		return nil, err
	}
	ds, err := decodeCanonical(payload)
	if err != nil {
		return nil, fmt.Errorf("attest: refusing to sign: %w", err)
	}
	return &Checked{st: st, payload: payload, decoded: ds}, nil
}

// Statement returns the statement Check was given. Sign signs Payload, the bytes it was
// checked as; a later change to the returned value changes neither.
func (c *Checked) Statement() *Statement { return c.st }

// Payload returns a copy of the canonical bytes that were checked and that Sign signs.
func (c *Checked) Payload() []byte { return bytes.Clone(c.payload) }

// Decoded returns the statement as a verifier decodes it.
func (c *Checked) Decoded() *DecodedStatement { return c.decoded }

// MarshalJSON returns the checked canonical bytes, so that encoding a Checked gives the
// statement it holds.
func (c *Checked) MarshalJSON() ([]byte, error) { return bytes.Clone(c.payload), nil }

// Sign signs the checked canonical bytes with each signer, as SignPayload does. It
// returns the envelope and the canonical payload.
func (c *Checked) Sign(ctx context.Context, signers ...Signer) (*Envelope, []byte, error) {
	env, err := SignPayload(ctx, c.payload, signers...)
	if err != nil {
		return nil, nil, err
	}
	return env, bytes.Clone(c.payload), nil
}
