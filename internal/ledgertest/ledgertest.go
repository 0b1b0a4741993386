// Package ledgertest makes real signed records for tests of the ledger, its migration
// and its export: probe, change, supply and baseline statements, each signed with the one key of
// a key document that `probity verify` accepts. The key derives from a public seed, so
// nothing it signs is worth anything outside a test.
package ledgertest

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/keys/signing"
)

// probePayload is the payload of the verifier's test vector good_full.json: a probe/v1
// statement of a full round, which Probe re-signs with another round id and time.
//
//go:embed probe_payload.json
var probePayload []byte

// Signer signs test records with one key, valid from 2026-01-01.
type Signer struct {
	Doc    *keys.Document
	KeyID  string
	signer *signing.Signer
}

// NewSigner returns the signer of the seed, and its key document.
func NewSigner(seed string) (*Signer, error) {
	sum := sha256.Sum256([]byte("probity ledgertest " + seed))
	s := signing.NewSigner(ed25519.NewKeyFromSeed(sum[:]))
	k, err := keys.NewKey(s.Public().(ed25519.PublicKey), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		return nil, err
	}
	doc := &keys.Document{FormatVersion: 1, Issuer: "probity ledgertest (insecure: the key derives from a public seed)", Keys: []keys.Key{k}}
	if err := doc.Validate(); err != nil {
		return nil, err
	}
	return &Signer{Doc: doc, KeyID: s.ID(), signer: s}, nil
}

// Record is a signed record: the envelope as stored and the hex SHA-256 of its payload.
type Record struct {
	Envelope      []byte
	PayloadDigest string
}

// Probe signs the test vector's round statement with roundID and observedAt.
func (s *Signer) Probe(ctx context.Context, roundID string, observedAt time.Time) (Record, error) {
	var st map[string]any
	if err := json.Unmarshal(probePayload, &st); err != nil {
		return Record{}, err
	}
	pred, ok := st["predicate"].(map[string]any)
	if !ok {
		return Record{}, fmt.Errorf("the probe vector has no predicate")
	}
	pred["roundId"], pred["observedAt"] = roundID, attest.FormatTime(observedAt)
	raw, err := json.Marshal(st)
	if err != nil {
		return Record{}, err
	}
	payload, err := attest.Canonicalize(raw)
	if err != nil {
		return Record{}, err
	}
	env, err := attest.SignPayload(ctx, payload, s.signer)
	if err != nil {
		return Record{}, err
	}
	return s.record(env, payload)
}

// Change signs change number of the remote entry slug, recorded at recordedAt.
func (s *Signer) Change(ctx context.Context, slug string, number int64, recordedAt time.Time) (Record, error) {
	n := 2
	st, err := attest.NewChangeStatement(&attest.ChangePredicate{
		Entry:       attest.ChangeEntry{Kind: "remote", Slug: slug, URL: "https://" + slug + ".example.com/mcp"},
		Number:      number,
		RecordedAt:  attest.FormatTime(recordedAt),
		Origin:      attest.OriginAutomatic,
		Kind:        attest.ChangeTools,
		Summary:     "1 tool added",
		Badges:      []string{},
		Before:      &attest.ChangeState{RoundID: "before", PayloadDigest: attest.Digest([]byte("1")), Surface: attest.Digest([]byte("s1")), ToolCount: &n},
		After:       attest.ChangeState{RoundID: "after", PayloadDigest: attest.Digest([]byte("2")), Surface: attest.Digest([]byte("s2"))},
		ToolVersion: "0.1.0",
	})
	if err != nil {
		return Record{}, err
	}
	env, payload, err := attest.Sign(ctx, st, s.signer)
	if err != nil {
		return Record{}, err
	}
	return s.record(env, payload)
}

// Supply signs a passing supply run of the npm entry slug, evaluated at at.
func (s *Signer) Supply(ctx context.Context, slug string, at time.Time) (Record, error) {
	checks := make([]attest.SupplyCheck, len(attest.SupplyCheckIDs))
	for i, id := range attest.SupplyCheckIDs {
		checks[i] = attest.SupplyCheck{ID: id, Weight: attest.SupplyWeights[i], Status: attest.SupplyPassed, PointsMilli: attest.SupplyWeights[i] * 1000}
	}
	st := attest.NewSupplyStatement(&attest.SupplyPredicate{
		Checks: checks, Entry: attest.ChangeEntry{Kind: "npm", Slug: slug, Package: "pkg:npm/" + slug},
		EvaluatedAt: attest.FormatTime(at), Score: 100, WeightRan: 100, Verified: true,
		SuiteVersion: "2026.11", ToolVersion: "0.1.0",
	}, attest.Digest([]byte("facts of " + slug))[len("sha256:"):])
	env, payload, err := attest.Sign(ctx, st, s.signer)
	if err != nil {
		return Record{}, err
	}
	return s.record(env, payload)
}

// Withdrawal signs withdrawal record number of the npm entry slug, withdrawing (or, for
// action restored, restoring) the Verified of its supply run of sequence number
// supplySeq and payload digest supplyDigest (hex), decided at at.
func (s *Signer) Withdrawal(ctx context.Context, slug string, number int64, action, reason string, supplySeq int64, supplyDigest string, at time.Time) (Record, error) {
	st := attest.NewWithdrawalStatement(attest.ChangeEntry{Kind: "npm", Slug: slug, Package: "pkg:npm/" + slug}, number,
		action, reason, at, attest.WithdrawalSupply{Seq: supplySeq, PayloadDigest: "sha256:" + supplyDigest}, "0.1.0")
	env, payload, err := attest.Sign(ctx, st, s.signer)
	if err != nil {
		return Record{}, err
	}
	return s.record(env, payload)
}

// Baseline signs baseline number of the remote entry slug, approved at at.
func (s *Signer) Baseline(ctx context.Context, slug string, number int64, at time.Time) (Record, error) {
	entry := attest.ChangeEntry{Kind: "remote", Slug: slug, URL: "https://" + slug + ".example.com/mcp"}
	fp := attest.Fingerprints{Toolset: attest.Digest([]byte("t")), Schema: attest.Digest([]byte("s")), Surface: attest.Digest([]byte("u"))}
	st := attest.NewBaselineStatement(attest.NewBaselinePredicate(entry, number, at, "round", attest.Digest([]byte("1")), fp, 2, "0.1.0"))
	env, payload, err := attest.Sign(ctx, st, s.signer)
	if err != nil {
		return Record{}, err
	}
	return s.record(env, payload)
}

func (s *Signer) record(env *attest.Envelope, payload []byte) (Record, error) {
	raw, err := attest.EncodeEnvelope(env)
	if err != nil {
		return Record{}, err
	}
	sum := sha256.Sum256(payload)
	return Record{Envelope: raw, PayloadDigest: hex.EncodeToString(sum[:])}, nil
}

// Dispute signs dispute number of the remote entry slug, contesting a check of the
// round record roundSeq (whose payload digest is derived from the seq), opened at at.
func (s *Signer) Dispute(ctx context.Context, slug string, number, roundSeq int64, at time.Time) (Record, error) {
	p := attest.NewDisputePredicate(attest.ChangeEntry{Kind: "remote", Slug: slug, URL: "https://" + slug + ".example.com/mcp"}, number, at,
		attest.Finding{Record: attest.RecordRef{Seq: roundSeq, PayloadDigest: attest.Digest(fmt.Appendf(nil, "round %d", roundSeq))},
			CheckID: "destructive_annotations", Status: attest.StatusFailed},
		"The tool is read-only.", "", "0.1.0")
	env, payload, err := attest.Sign(ctx, attest.NewDisputeStatement(p), s.signer)
	if err != nil {
		return Record{}, err
	}
	return s.record(env, payload)
}

// Outcome signs the rejection of dispute number of the remote entry slug, whose record
// is disputeSeq with payload digest disputeDigest (hex), decided at at.
func (s *Signer) Outcome(ctx context.Context, slug string, number, disputeSeq int64, disputeDigest string, at time.Time) (Record, error) {
	p := attest.NewOutcomePredicate(attest.ChangeEntry{Kind: "remote", Slug: slug, URL: "https://" + slug + ".example.com/mcp"},
		attest.OutcomeDispute{Number: number, Record: attest.RecordRef{Seq: disputeSeq, PayloadDigest: "sha256:" + disputeDigest}},
		attest.DecisionRejected, "", "The signed round shows no annotation.", at, "0.1.0")
	env, payload, err := attest.Sign(ctx, attest.NewOutcomeStatement(p), s.signer)
	if err != nil {
		return Record{}, err
	}
	return s.record(env, payload)
}
