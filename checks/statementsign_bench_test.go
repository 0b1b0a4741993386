package checks

import (
	"context"
	"crypto/ed25519"
	"testing"
)

type benchSigner struct{ priv ed25519.PrivateKey }

func (s benchSigner) Sign(_ context.Context, d []byte) ([]byte, error) {
	return ed25519.Sign(s.priv, d), nil
}
func (s benchSigner) KeyID() (string, error) { return "0123456789abcdef", nil }

// BenchmarkStatementAndSign builds the statement of a signed round (checks.Statement, which
// checks it once) and signs it (attest.Checked.Sign), as the round builder does.
func BenchmarkStatementAndSign(b *testing.B) {
	o := fullObs()
	results, coverage, _ := Evaluate(o)
	s := benchSigner{ed25519.NewKeyFromSeed(make([]byte, 32))}
	ctx := context.Background()
	for b.Loop() {
		st, err := Statement(o, results, coverage, testProbe, "r-1")
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := st.Sign(ctx, s); err != nil {
			b.Fatal(err)
		}
	}
}
