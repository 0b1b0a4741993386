package keys

import (
	"context"
	"crypto/ed25519"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
)

type histSigner struct{ priv ed25519.PrivateKey }

func (s histSigner) Sign(_ context.Context, d []byte) ([]byte, error) {
	return ed25519.Sign(s.priv, d), nil
}
func (s histSigner) KeyID() (string, error) {
	k, err := NewKey(s.priv.Public().(ed25519.PublicKey), t0)
	return k.KeyID, err
}

func signVersion(t *testing.T, d *Document, n int, event string, at time.Time, prev string, seeds ...byte) []byte {
	t.Helper()
	c, err := CanonicalDocument(d)
	if err != nil {
		t.Fatal(err)
	}
	st, err := attest.NewKeysStatement(d.Issuer, n, event, at, c, prev)
	if err != nil {
		t.Fatal(err)
	}
	var ss []attest.Signer
	for _, s := range seeds {
		ss = append(ss, histSigner{seedKey(s)})
	}
	env, _, err := attest.Sign(context.Background(), st, ss...)
	if err != nil {
		t.Fatal(err)
	}
	data, err := attest.EncodeEnvelope(env)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestOpenVersionVector: the keys predicate's test vector (attest's package doc) opens as
// version 1: its document is the vector's, its digest the vector's.
func TestOpenVersionVector(t *testing.T) {
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = byte(i)
	}
	priv := ed25519.NewKeyFromSeed(seed)
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	k, err := NewKey(priv.Public().(ed25519.PublicKey), at)
	if err != nil {
		t.Fatal(err)
	}
	d := &Document{FormatVersion: FormatVersion, Issuer: "https://probity.dev", Keys: []Key{k}, Log: &Log{Origin: "probity.dev/log", Key: testLogKey}}
	c, _ := CanonicalDocument(d)
	st, err := attest.NewKeysStatement(d.Issuer, 1, attest.KeysEventGenerated, at, c, "")
	if err != nil {
		t.Fatal(err)
	}
	env, _, err := attest.Sign(context.Background(), st, histSigner{priv})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := attest.EncodeEnvelope(env)
	v, err := OpenVersion(nil, data)
	if err != nil {
		t.Fatal(err)
	}
	if v.DocumentDigest != "69ca53e56cb1f231b4e5f43e68281f93b81062850af2f88b805a4b387b3e8c39" || v.AuthorizedBy != "a050837d85070582" ||
		env.Signatures[0].Sig != "3AiDkq4m+JhzIrbatMgD4GhbI0cQJwuxoa/EhKT30x+zYL6d6v0BsA3LWjEkZy6lCP6T4erDogoOhYOJGejoAA==" {
		t.Fatalf("vector: digest %s, signer %s, sig %s", v.DocumentDigest, v.AuthorizedBy, env.Signatures[0].Sig)
	}
	if !SameDocument(v.Document, d) || v.Number != 1 || v.Previous != "" || len(v.PayloadDigest) != 64 {
		t.Fatalf("version %+v", v)
	}
	// Not a keys statement: malformed.
	if _, err := OpenVersion(nil, []byte(`{"payloadType":"x","payload":"","signatures":[]}`)); !isReason(err, HistoryMalformed) {
		t.Fatalf("OpenVersion(garbage) = %v", err)
	}
}

func isReason(err error, r HistoryReason) bool {
	var he *HistoryError
	return errors.As(err, &he) && he.Reason == r
}

// TestCheckChange: each rule of a version's change, kept and broken.
func TestCheckChange(t *testing.T) {
	base := testDoc2(t) // keys[0] retired at t1, keys[1] current from t1
	base.Keys[0].ValidUntil = nil
	base.Keys = base.Keys[:1]
	at := t1
	clone := func(edit func(*Document)) *Document {
		c := *base
		c.Keys = append([]Key(nil), base.Keys...)
		l := *base.Log
		c.Log = &l
		edit(&c)
		return &c
	}
	rotated := clone(func(d *Document) { d.Keys[0].ValidUntil = ptr(at); d.Keys = append(d.Keys, testKey(t, 2, at)) })
	revoked := clone(func(d *Document) { d.Keys[0].RevokedAt, d.Keys[0].RevocationReason = ptr(at), ptr("x") })
	for name, tc := range map[string]struct {
		next  *Document
		event string
		want  string
	}{
		"rotation":               {rotated, "rotated", ""},
		"revocation":             {revoked, "revoked", ""},
		"back-dated revocation":  {clone(func(d *Document) { d.Keys[0].RevokedAt, d.Keys[0].RevocationReason = ptr(t0), ptr("x") }), "revoked", ""},
		"future revocation":      {clone(func(d *Document) { d.Keys[0].RevokedAt, d.Keys[0].RevocationReason = ptr(at.Add(time.Hour)), ptr("x") }), "revoked", "is after issuedAt"},
		"rotation called revoke": {rotated, "revoked", `event "revoked" does not describe the change`},
		"nothing changes":        {clone(func(*Document) {}), "rotated", "does not describe the change"},
		"log added":              {clone(func(d *Document) {}), "log_key_added", "does not describe the change"},
		"issuer":                 {clone(func(d *Document) { d.Issuer = "https://x.example" }), "rotated", "the issuer changes"},
		"key removed":            {clone(func(d *Document) { d.Keys = nil }), "rotated", "keys are removed"},
		"key replaced":           {clone(func(d *Document) { d.Keys[0] = testKey(t, 3, t0) }), "rotated", "is replaced or its valid_from changed"},
		"valid_from moved back":  {clone(func(d *Document) { d.Keys[0].ValidFrom = t0.Add(-time.Hour) }), "rotated", "is replaced or its valid_from changed"},
		"new key back-dated":     {clone(func(d *Document) { d.Keys = append(d.Keys, testKey(t, 2, at.Add(-time.Millisecond))) }), "rotated", "a new key's valid_from"},
		"new key revoked": {clone(func(d *Document) {
			k := testKey(t, 2, at)
			k.RevokedAt, k.RevocationReason = ptr(at), ptr("x")
			d.Keys = append(d.Keys, k)
		}), "rotated", "a new key is revoked"},
		"window ends in the past": {clone(func(d *Document) {
			d.Keys[0].ValidUntil = ptr(at.Add(-time.Hour))
			d.Keys = append(d.Keys, testKey(t, 2, at))
		}), "rotated", "is before issuedAt"},
		"log replaced": {clone(func(d *Document) { d.Log.Origin = "other/log" }), "log_key_added", "the log is replaced"},
		"log removed":  {clone(func(d *Document) { d.Log = nil }), "rotated", "the log is replaced or removed"},
	} {
		err := CheckChange(base, tc.next, tc.event, at)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: CheckChange = %v", name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrInvalidChange)):
			t.Errorf("%s: CheckChange = %v, want %q", name, err, tc.want)
		}
	}
	// Windows: extended or removed, and a revocation undone.
	ended := clone(func(d *Document) { d.Keys[0].ValidUntil = ptr(at.Add(time.Hour)) })
	for name, tc := range map[string]struct {
		next *Document
		want string
	}{
		"extended": {clone(func(d *Document) {
			d.Keys[0].ValidUntil = ptr(at.Add(2 * time.Hour))
			d.Keys = append(d.Keys, testKey(t, 2, at))
		}), "valid_until is extended"},
		"removed": {clone(func(d *Document) { d.Keys = append(d.Keys, testKey(t, 2, at)) }), "valid_until is removed"},
	} {
		if err := CheckChange(ended, tc.next, "rotated", at); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: CheckChange = %v, want %q", name, err, tc.want)
		}
	}
	unrevoked := clone(func(*Document) {})
	if err := CheckChange(revoked, unrevoked, "rotated", at); err == nil || !strings.Contains(err.Error(), "revocation is changed or undone") {
		t.Errorf("revocation undone: %v", err)
	}
	// A log added to a history without one.
	nolog := clone(func(d *Document) { d.Log = nil })
	if err := CheckChange(nolog, base, "log_key_added", at); err != nil {
		t.Errorf("log_key_added: %v", err)
	}
}

// TestOpenVersionChain: a rotation opens after version 1 and is authorized by the old
// key; the same rotation signed only by the new key is refused.
func TestOpenVersionChain(t *testing.T) {
	d1 := testDoc2(t)
	d1.Keys = d1.Keys[:1]
	d1.Keys[0].ValidUntil = nil
	v1, err := OpenVersion(nil, signVersion(t, d1, 1, "generated", t0, "", 1))
	if err != nil {
		t.Fatal(err)
	}
	d2 := testDoc2(t) // keys[0] until t1, keys[1] from t1
	v2, err := OpenVersion(v1, signVersion(t, d2, 2, "rotated", t1, v1.PreviousDigest(), 1, 2))
	if err != nil {
		t.Fatal(err)
	}
	if v2.AuthorizedBy != d1.Keys[0].KeyID || len(v2.KeyIDs) != 2 {
		t.Fatalf("v2 authorized by %s, signed by %v", v2.AuthorizedBy, v2.KeyIDs)
	}
	if _, err := OpenVersion(v1, signVersion(t, d2, 2, "rotated", t1, v1.PreviousDigest(), 2)); !isReason(err, HistoryUnauthorized) {
		t.Fatalf("signed only by the new key: %v", err)
	}
	if _, err := OpenVersion(v1, signVersion(t, d2, 2, "rotated", t1, v1.PreviousDigest(), 1, 1)); !isReason(err, HistoryBadSignature) {
		t.Fatalf("one key signing twice: %v", err)
	}
	var he *HistoryError
	_, err = OpenVersion(v1, signVersion(t, d2, 3, "rotated", t1, v1.PreviousDigest(), 1, 2))
	if !errors.As(err, &he) || he.Reason != HistoryVersionGap || he.Version != 3 || !strings.Contains(he.Error(), "key document version 3: version_gap") {
		t.Fatalf("gap: %v", err)
	}
}

// TestRetiredKeyAuthorizesNothing: a rotation ends the old key's window at its issuedAt,
// and the next version may be issued at that same instant; the retired key (whose
// private key the rotation deleted, or a copy of it stolen) must not authorize it, or it
// could add a key of its own choosing for good.
func TestRetiredKeyAuthorizesNothing(t *testing.T) {
	d1 := testDoc2(t)
	d1.Keys = d1.Keys[:1]
	d1.Keys[0].ValidUntil = nil
	v1, err := OpenVersion(nil, signVersion(t, d1, 1, "generated", t0, "", 1))
	if err != nil {
		t.Fatal(err)
	}
	d2 := testDoc2(t) // keys[0] until t1, keys[1] from t1
	v2, err := OpenVersion(v1, signVersion(t, d2, 2, "rotated", t1, v1.PreviousDigest(), 1, 2))
	if err != nil {
		t.Fatal(err)
	}
	d3 := testDoc2(t)
	d3.Keys = append(d3.Keys, testKey(t, 3, t1))
	if _, err := OpenVersion(v2, signVersion(t, d3, 3, "rotated", t1, v2.PreviousDigest(), 1, 3)); !isReason(err, HistorySignerOutsideWindow) {
		t.Fatalf("a version signed by the key retired at its issuedAt: %v", err)
	}
	// The key that replaced it may.
	if _, err := OpenVersion(v2, signVersion(t, d3, 3, "rotated", t1, v2.PreviousDigest(), 2, 3)); err != nil {
		t.Fatal(err)
	}
}
