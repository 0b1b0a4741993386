package attest

import (
	"context"
	"testing"
)

func precomputedFingerprints() Fingerprints {
	return Fingerprints{Toolset: Digest([]byte("t")), Schema: Digest([]byte("s")), Surface: Digest([]byte("u")), Instructions: Digest([]byte("i"))}
}

// BenchmarkCanonicalizeAndSign is the signing goal's measure: encode one realistic
// statement (one result per catalog check, fingerprints precomputed) to canonical bytes
// and sign them as a DSSE envelope. Goal: ≥ 20,000 per second on one core (-cpu 1).
func BenchmarkCanonicalizeAndSign(b *testing.B) {
	st := realisticStatement(precomputedFingerprints())
	s := newTestSigner(exampleSeed())
	ctx := context.Background()
	for b.Loop() {
		payload, err := Marshal(st)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := SignPayload(ctx, payload, s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSignChecked is what the service calls: Sign also decodes the canonical bytes
// and applies every verifier rule before signing.
func BenchmarkSignChecked(b *testing.B) {
	st := realisticStatement(precomputedFingerprints())
	s := newTestSigner(exampleSeed())
	ctx := context.Background()
	for b.Loop() {
		if _, _, err := Sign(ctx, st, s); err != nil {
			b.Fatal(err)
		}
	}
}
