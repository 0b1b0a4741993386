package signing

import (
	"bytes"
	"crypto/ed25519"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/keys"
)

var (
	t0 = mustTime("2026-08-22T00:00:00.000Z")
	t1 = mustTime("2026-11-01T12:00:00.000Z")
)

func mustTime(s string) time.Time {
	t, err := attest.ParseTime(s)
	if err != nil {
		panic(err)
	}
	return t
}

// seedKey returns a deterministic private key; different n give different keys.
func seedKey(n byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{n}, ed25519.SeedSize))
}

func ptr[T any](v T) *T { return &v }

func testKey(t *testing.T, n byte, from time.Time) keys.Key {
	t.Helper()
	k, err := keys.NewKey(seedKey(n).Public().(ed25519.PublicKey), from)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
