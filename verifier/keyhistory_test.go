package verifier

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/keys/signing"
)

var (
	khT0 = time.Date(2026, 8, 22, 0, 0, 0, 0, time.UTC)
	khT1 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	khT2 = time.Date(2026, 11, 2, 12, 0, 0, 0, time.UTC)
	khT3 = time.Date(2026, 11, 3, 12, 0, 0, 0, time.UTC)
)

func khPriv(n byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{n}, ed25519.SeedSize))
}

func khKey(t *testing.T, n byte, from time.Time) keys.Key {
	t.Helper()
	k, err := keys.NewKey(khPriv(n).Public().(ed25519.PublicKey), from)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func khID(t *testing.T, n byte) string { return khKey(t, n, khT0).KeyID }

// khSign signs doc as version n with the previous digest prev ("" for none), with the
// keys of the given seeds.
func khSign(t *testing.T, doc *keys.Document, n int, event string, at time.Time, prev string, seeds ...byte) []byte {
	t.Helper()
	canon, err := keys.CanonicalDocument(doc)
	if err != nil {
		t.Fatal(err)
	}
	st, err := attest.NewKeysStatement(doc.Issuer, n, event, at, canon, prev)
	if err != nil {
		t.Fatal(err)
	}
	var ss []attest.Signer
	for _, s := range seeds {
		ss = append(ss, signing.NewSigner(khPriv(s)))
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

func khDigest(t *testing.T, d *keys.Document) string {
	t.Helper()
	s, err := keys.DocumentDigest(d)
	if err != nil {
		t.Fatal(err)
	}
	return "sha256:" + s
}

func khClone(d *keys.Document) *keys.Document {
	c := *d
	c.Keys = append([]keys.Key(nil), d.Keys...)
	return &c
}

const khLogKey = "probity.dev/log+4fb7b9f2+ARl/ayPhbIUyxqvIOPrNXqeJvgx2spIDNAOb+os9No1h"

// khDocs returns the documents of a good history: v1 key A (seed 1) from t0; v2 rotated
// to key B (seed 2) at t1; v3 revokes A at t2, signed by B.
func khDocs(t *testing.T) (v1, v2, v3 *keys.Document) {
	t.Helper()
	log := &keys.Log{Origin: "probity.dev/log", Key: khLogKey}
	v1 = &keys.Document{FormatVersion: keys.FormatVersion, Issuer: "https://probity.dev", Keys: []keys.Key{khKey(t, 1, khT0)}, Log: log}
	v2 = khClone(v1)
	v2.Keys[0].ValidUntil = &khT1
	v2.Keys = append(v2.Keys, khKey(t, 2, khT1))
	v3 = khClone(v2)
	reason := "retired laptop"
	v3.Keys[0].RevokedAt, v3.Keys[0].RevocationReason = &khT2, &reason
	return v1, v2, v3
}

func khGood(t *testing.T) ([]LoggedKeyVersion, [3]*keys.Document) {
	t.Helper()
	d1, d2, d3 := khDocs(t)
	return []LoggedKeyVersion{
		{LogIndex: 0, Envelope: khSign(t, d1, 1, "generated", khT0, "", 1)},
		{LogIndex: 5, Envelope: khSign(t, d2, 2, "rotated", khT1, khDigest(t, d1), 1, 2)},
		{LogIndex: 9, Envelope: khSign(t, d3, 3, "revoked", khT2, khDigest(t, d2), 2)},
	}, [3]*keys.Document{d1, d2, d3}
}

func TestKeyHistoryGood(t *testing.T) {
	if _, err := (&keys.Log{Origin: "probity.dev/log", Key: khLogKey}).Verifier(); err != nil {
		t.Fatalf("test log key: %v", err)
	}
	vs, docs := khGood(t)
	h, err := NewKeyHistory(vs)
	if err != nil {
		t.Fatal(err)
	}
	if h.Len() != 3 || !keys.SameDocument(h.Latest(), docs[2]) {
		t.Fatalf("history of %d versions", h.Len())
	}
	for idx, want := range map[int64]*keys.Document{0: docs[0], 1: docs[0], 5: docs[0], 6: docs[1], 9: docs[1], 10: docs[2], 1 << 40: docs[2]} {
		if got := h.InForce(idx); !keys.SameDocument(got, want) {
			t.Errorf("InForce(%d) is not the expected version", idx)
		}
	}
	if v, idx, ok := h.Version(2); !ok || idx != 5 || v.Event != "rotated" || v.AuthorizedBy != khID(t, 1) {
		t.Errorf("Version(2) = %+v, %d", v, idx)
	}
	if err := h.CheckServed(docs[2]); err != nil {
		t.Fatalf("CheckServed(latest) = %v", err)
	}
	// Append builds the same history one version at a time, and leaves it unchanged
	// when a version does not extend it.
	var inc KeyHistory
	for _, lv := range vs {
		if err := inc.Append(lv); err != nil {
			t.Fatal(err)
		}
		if err := inc.Append(lv); err == nil {
			t.Fatal("Append accepted the same version twice")
		}
	}
	if inc.Len() != 3 || !keys.SameDocument(inc.Latest(), docs[2]) {
		t.Fatalf("incremental history of %d versions", inc.Len())
	}
	// The same document as keys.json writes it (indented, member order) is the same.
	pretty, _ := keys.MarshalDocument(docs[2])
	parsed, err := keys.Parse(pretty)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.CheckServed(parsed); err != nil {
		t.Fatalf("CheckServed(parsed latest) = %v", err)
	}
}

func khReason(t *testing.T, err error) FailureReason {
	t.Helper()
	var he *KeyHistoryError
	if !errors.As(err, &he) {
		t.Fatalf("error %v is not a *KeyHistoryError", err)
	}
	return he.Reason
}

// TestKeyHistoryServed: a served key document that is not the latest logged version is
// caught — "add a key to the key document without logging it".
func TestKeyHistoryServed(t *testing.T) {
	vs, docs := khGood(t)
	h, err := NewKeyHistory(vs)
	if err != nil {
		t.Fatal(err)
	}
	extra := khClone(docs[2])
	extra.Keys = append(extra.Keys, khKey(t, 9, khT0))
	backdated := khClone(docs[2])
	backdated.Keys[1].ValidFrom = khT0
	unrevoked := khClone(docs[2])
	unrevoked.Keys[0].RevokedAt, unrevoked.Keys[0].RevocationReason = nil, nil
	laterRevoked := khClone(docs[2])
	laterRevoked.Keys[0].RevokedAt = &khT3
	legacy := khClone(docs[2])
	legacy.FormatVersion, legacy.Log = keys.FormatVersion1, nil
	other := khClone(docs[2])
	other.Issuer = "https://evil.example"
	for name, tc := range map[string]struct {
		doc    *keys.Document
		reason FailureReason
		detail string
	}{
		"extra key":          {extra, ReasonKeyDocumentNotLogged, "lists key " + khID(t, 9) + ", which no logged version lists"},
		"valid_from earlier": {backdated, ReasonKeyDocumentNotLogged, "another window"},
		"revocation removed": {unrevoked, ReasonKeyDocumentStale, "is version 2; version 3 is logged"},
		"revocation later":   {laterRevoked, ReasonKeyDocumentNotLogged, "another revocation"},
		"log removed":        {legacy, ReasonKeyDocumentNotLogged, "differs from the latest logged version"},
		"older version":      {docs[1], ReasonKeyDocumentStale, "is version 2; version 3 is logged"},
		"other issuer":       {other, ReasonKeyDocumentIssuerChanged, "evil.example"},
		"none":               {nil, ReasonKeyDocumentNotLogged, "no key document"},
	} {
		err := h.CheckServed(tc.doc)
		if err == nil {
			t.Errorf("%s: CheckServed accepted it", name)
			continue
		}
		if r := khReason(t, err); r != tc.reason || !strings.Contains(err.Error(), tc.detail) {
			t.Errorf("%s: CheckServed = %v, want %s containing %q", name, err, tc.reason, tc.detail)
		}
	}
}

// TestKeyHistoryTamper: every rule of the chain, each broken once.
func TestKeyHistoryTamper(t *testing.T) {
	d1, d2, d3 := khDocs(t)
	g1 := khSign(t, d1, 1, "generated", khT0, "", 1)
	g2 := khSign(t, d2, 2, "rotated", khT1, khDigest(t, d1), 1, 2)
	at := func(idx int64, env []byte) LoggedKeyVersion { return LoggedKeyVersion{LogIndex: idx, Envelope: env} }

	// v4 documents for the cases after version 3.
	d4 := khClone(d3)
	d4.Keys[1].ValidUntil = &khT3
	d4.Keys = append(d4.Keys, khKey(t, 3, khT3))
	g3 := khSign(t, d3, 3, "revoked", khT2, khDigest(t, d2), 2)
	// Revoking B, the only valid key, signed by B itself.
	selfRevoked := khClone(d2)
	reason := "lost"
	selfRevoked.Keys[1].RevokedAt, selfRevoked.Keys[1].RevocationReason = &khT2, &reason
	// A rotation adding a key valid before the version was issued.
	backdated := khClone(d1)
	backdated.Keys[0].ValidUntil = &khT1
	backdated.Keys = append(backdated.Keys, khKey(t, 2, khT0.Add(time.Hour)))
	// A key removed.
	removed := khClone(d2)
	removed.Keys = removed.Keys[1:]
	// A rotation whose old key's window is moved into the past.
	shortened := khClone(d2)
	early := khT1.Add(-time.Hour)
	shortened.Keys[0].ValidUntil = &early
	// The issuer changed.
	reissued := khClone(d2)
	reissued.Issuer = "https://other.example"

	// One signature byte flipped, the base64 kept canonical.
	env, _, err := attest.ParseEnvelope(g2)
	if err != nil {
		t.Fatal(err)
	}
	sig, _ := attest.DecodeBase64(env.Signatures[0].Sig)
	sig[0] ^= 1
	env.Signatures[0].Sig = base64.StdEncoding.EncodeToString(sig)
	badSig, err := attest.EncodeEnvelope(env)
	if err != nil {
		t.Fatal(err)
	}

	for name, tc := range map[string]struct {
		versions []LoggedKeyVersion
		reason   FailureReason
		version  int
	}{
		"empty":                      {nil, ReasonKeyHistoryEmpty, 0},
		"gap":                        {[]LoggedKeyVersion{at(0, g1), at(3, g3)}, ReasonKeyVersionGap, 3},
		"starts at 2":                {[]LoggedKeyVersion{at(0, g2)}, ReasonKeyVersionGap, 2},
		"wrong previous":             {[]LoggedKeyVersion{at(0, g1), at(1, khSign(t, d2, 2, "rotated", khT1, khDigest(t, d3), 1, 2))}, ReasonKeyVersionPrevious, 2},
		"signed only by the new key": {[]LoggedKeyVersion{at(0, g1), at(1, khSign(t, d2, 2, "rotated", khT1, khDigest(t, d1), 2))}, ReasonKeyVersionUnauthorized, 2},
		"signed by a revoked key": {[]LoggedKeyVersion{at(0, g1), at(1, g2), at(2, g3),
			at(3, khSign(t, d4, 4, "rotated", khT3, khDigest(t, d3), 1, 3))}, ReasonKeyVersionRevokedSigner, 4},
		"signed outside the window":     {[]LoggedKeyVersion{at(0, g1), at(1, g2), at(2, khSign(t, d3, 3, "revoked", khT2, khDigest(t, d2), 1))}, ReasonKeyVersionOutsideWindow, 3},
		"signs its own revocation":      {[]LoggedKeyVersion{at(0, g1), at(1, g2), at(2, khSign(t, selfRevoked, 3, "revoked", khT2, khDigest(t, d2), 2))}, ReasonKeyVersionRevokedSigner, 3},
		"version 1 by an unlisted key":  {[]LoggedKeyVersion{at(0, khSign(t, d1, 1, "generated", khT0, "", 5))}, ReasonKeyVersionBadSignature, 1},
		"version 1 before its key":      {[]LoggedKeyVersion{at(0, khSign(t, d1, 1, "generated", khT0.Add(-time.Second), "", 1))}, ReasonKeyVersionOutsideWindow, 1},
		"bad signature":                 {[]LoggedKeyVersion{at(0, g1), at(1, badSig)}, ReasonKeyVersionBadSignature, 2},
		"logged out of order":           {[]LoggedKeyVersion{at(4, g1), at(4, g2)}, ReasonKeyVersionLogOrder, 2},
		"logged before its predecessor": {[]LoggedKeyVersion{at(4, g1), at(2, g2)}, ReasonKeyVersionLogOrder, 2},
		"issued before the previous":    {[]LoggedKeyVersion{at(0, g1), at(1, g2), at(2, khSign(t, d3, 3, "revoked", khT1.Add(-time.Millisecond), khDigest(t, d2), 2))}, ReasonKeyVersionIssuedEarlier, 3},
		"back-dated new key":            {[]LoggedKeyVersion{at(0, g1), at(1, khSign(t, backdated, 2, "rotated", khT1, khDigest(t, d1), 1))}, ReasonKeyVersionInvalidChange, 2},
		"key removed":                   {[]LoggedKeyVersion{at(0, g1), at(1, khSign(t, removed, 2, "rotated", khT1, khDigest(t, d1), 1, 2))}, ReasonKeyVersionInvalidChange, 2},
		"window ended in the past":      {[]LoggedKeyVersion{at(0, g1), at(1, khSign(t, shortened, 2, "rotated", khT1, khDigest(t, d1), 1, 2))}, ReasonKeyVersionInvalidChange, 2},
		"issuer changed":                {[]LoggedKeyVersion{at(0, g1), at(1, khSign(t, reissued, 2, "rotated", khT1, khDigest(t, d1), 1, 2))}, ReasonKeyVersionInvalidChange, 2},
		"event does not fit":            {[]LoggedKeyVersion{at(0, g1), at(1, khSign(t, d2, 2, "revoked", khT1, khDigest(t, d1), 1, 2))}, ReasonKeyVersionInvalidChange, 2},
		"not an envelope":               {[]LoggedKeyVersion{at(0, []byte(`{}`))}, ReasonKeyVersionMalformed, 1},
		"negative index":                {[]LoggedKeyVersion{at(-1, g1)}, ReasonKeyVersionMalformed, 1},
	} {
		_, err := NewKeyHistory(tc.versions)
		if err == nil {
			t.Errorf("%s: NewKeyHistory accepted it", name)
			continue
		}
		var he *KeyHistoryError
		if !errors.As(err, &he) || he.Reason != tc.reason || (tc.version != 0 && he.Version != tc.version) {
			t.Errorf("%s: NewKeyHistory = %v, want %s at version %d", name, err, tc.reason, tc.version)
		}
		if he != nil && he.Failure().Reason != he.Reason {
			t.Errorf("%s: Failure() reason %s", name, he.Failure().Reason)
		}
	}
}

// TestKeyHistoryFromKeyDirectory: the versions package keys/signing writes for generate,
// rotate and revoke form a history the verifier accepts, and its keys.json is the
// latest logged version.
func TestKeyHistoryFromKeyDirectory(t *testing.T) {
	dir := t.TempDir()
	d0, err := signing.GenerateDir(dir, "https://probity.dev", khT0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := signing.RotateDir(dir, khT1, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := signing.RevokeDir(dir, d0.Keys[0].KeyID, "retired", khT2); err != nil {
		t.Fatal(err)
	}
	if _, _, err := signing.RotateDir(dir, khT3, nil); err != nil {
		t.Fatal(err)
	}
	svs, err := signing.Versions(dir)
	if err != nil {
		t.Fatal(err)
	}
	var lvs []LoggedKeyVersion
	for i, v := range svs {
		lvs = append(lvs, LoggedKeyVersion{LogIndex: int64(10 * i), Envelope: v.Envelope})
	}
	h, err := NewKeyHistory(lvs)
	if err != nil {
		t.Fatal(err)
	}
	served, err := keys.Load(dir + "/" + keys.DocumentFile)
	if err != nil {
		t.Fatal(err)
	}
	if h.Len() != 4 {
		t.Fatalf("%d versions", h.Len())
	}
	if err := h.CheckServed(served); err != nil {
		t.Fatal(err)
	}
	// Each version's envelope also verifies as a record under the document in force
	// after it (its signers are listed there and valid at issuedAt).
	for i, v := range svs {
		if _, err := Verify(v.Envelope, h.InForce(int64(10*i)+1), DefaultPolicy()); err != nil {
			t.Errorf("version %d does not verify as an envelope: %v", v.Version, err)
		}
	}
}
