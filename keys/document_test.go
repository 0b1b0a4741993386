package keys

import (
	"bytes"
	"crypto/ecdh"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
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

func ptr[T any](v T) *T { return &v }

// seedKey returns a deterministic private key; different n give different keys.
func seedKey(n byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{n}, ed25519.SeedSize))
}

func testKey(t *testing.T, n byte, from time.Time) Key {
	t.Helper()
	k, err := NewKey(seedKey(n).Public().(ed25519.PublicKey), from)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// testDoc returns a valid document: keys[0] retired at t1, keys[1] current from t1.
func testDoc(t *testing.T) *Document {
	t.Helper()
	k0 := testKey(t, 1, t0)
	k0.ValidUntil = ptr(t1)
	return &Document{FormatVersion: 1, Issuer: "https://probity.dev", Keys: []Key{k0, testKey(t, 2, t1)}}
}

// rawJSON encodes d without validating it.
func rawJSON(t *testing.T, d *Document) []byte {
	t.Helper()
	data, err := encodeJSON(d.wire(), "  ")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestKeyID(t *testing.T) {
	k := testKey(t, 1, t0)
	der, _ := base64.StdEncoding.DecodeString(k.SPKI)
	sum := sha256.Sum256(der)
	if got, want := KeyID(der), hex.EncodeToString(sum[:8]); got != want || k.KeyID != want {
		t.Fatalf("KeyID = %s, Key.KeyID = %s, want %s", got, k.KeyID, want)
	}
	if k.SPKISHA256 != hex.EncodeToString(sum[:]) || len(der) != 44 {
		t.Fatalf("spki_sha256 = %s, spki length %d", k.SPKISHA256, len(der))
	}
}

func TestNewKey(t *testing.T) {
	pub := seedKey(1).Public().(ed25519.PublicKey)
	k, err := NewKey(pub, time.Date(2026, 8, 22, 2, 0, 0, 1_999_999, time.FixedZone("x", 7200)))
	if err != nil {
		t.Fatal(err)
	}
	if !k.ValidFrom.Equal(t0.Add(time.Millisecond)) || k.ValidFrom.Location() != time.UTC {
		t.Errorf("ValidFrom = %v, want %v UTC", k.ValidFrom, t0.Add(time.Millisecond))
	}
	if !k.PublicKey().Equal(pub) || k.Algorithm != "Ed25519" || k.ValidUntil != nil || k.Revoked() {
		t.Errorf("unexpected key %+v", k)
	}
	if _, err := NewKey(pub[:31], t0); err == nil {
		t.Error("NewKey accepted a short key")
	}
	if _, err := NewKey(pub, time.Time{}); err == nil {
		t.Error("NewKey accepted a zero valid_from")
	}
}

func TestMarshalDocumentFormat(t *testing.T) {
	d := testDoc(t)
	d.Keys[0].RevokedAt = ptr(t1.Add(time.Hour))
	d.Keys[0].RevocationReason = ptr("key <leaked> & rotated")
	got, err := MarshalDocument(d)
	if err != nil {
		t.Fatal(err)
	}
	k0, k1 := d.Keys[0], d.Keys[1]
	want := fmt.Sprintf(`{
  "format_version": 1,
  "issuer": "https://probity.dev",
  "keys": [
    {
      "key_id": "%s",
      "algorithm": "Ed25519",
      "spki": "%s",
      "spki_sha256": "%s",
      "valid_from": "2026-08-22T00:00:00.000Z",
      "valid_until": "2026-11-01T12:00:00.000Z",
      "revoked_at": "2026-11-01T13:00:00.000Z",
      "revocation_reason": "key <leaked> & rotated"
    },
    {
      "key_id": "%s",
      "algorithm": "Ed25519",
      "spki": "%s",
      "spki_sha256": "%s",
      "valid_from": "2026-11-01T12:00:00.000Z",
      "valid_until": null,
      "revoked_at": null,
      "revocation_reason": null
    }
  ]
}
`, k0.KeyID, k0.SPKI, k0.SPKISHA256, k1.KeyID, k1.SPKI, k1.SPKISHA256)
	if string(got) != want {
		t.Fatalf("MarshalDocument:\n%s\nwant:\n%s", got, want)
	}

	// Round trip: Parse then MarshalDocument gives identical bytes.
	parsed, err := Parse(got)
	if err != nil {
		t.Fatal(err)
	}
	again, err := MarshalDocument(parsed)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, got) {
		t.Fatalf("round trip changed the document:\n%s", again)
	}
	if !parsed.Keys[1].PublicKey().Equal(seedKey(2).Public()) {
		t.Error("parsed public key differs")
	}
	if *parsed.Keys[0].RevocationReason != "key <leaked> & rotated" || !parsed.Keys[0].RevokedAt.Equal(t1.Add(time.Hour)) {
		t.Errorf("revocation not round-tripped: %+v", parsed.Keys[0])
	}
}

func TestMarshalDocumentValidates(t *testing.T) {
	d := testDoc(t)
	d.Issuer = ""
	if _, err := MarshalDocument(d); err == nil || !strings.Contains(err.Error(), "issuer") {
		t.Fatalf("MarshalDocument(invalid) error = %v", err)
	}
}

func TestValidate(t *testing.T) {
	x25519, err := ecdh.X25519().NewPrivateKey(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	x25519DER, err := x509.MarshalPKIXPublicKey(x25519.PublicKey())
	if err != nil {
		t.Fatal(err)
	}
	id1 := testKey(t, 2, t1).KeyID
	k1 := "keys[1] (key_id " + id1 + "): "

	tests := []struct {
		name   string
		mutate func(d *Document)
		want   string // substring of the error, which includes the offending path
	}{
		{"format_version 4", func(d *Document) { d.FormatVersion = 4 }, "format_version 4 is not supported (want 1, 2 or 3)"},
		{"format_version 0", func(d *Document) { d.FormatVersion = 0 }, "format_version 0 is not supported"},
		{"empty issuer", func(d *Document) { d.Issuer = "" }, "issuer is empty"},
		{"long issuer", func(d *Document) { d.Issuer = strings.Repeat("a", 257) }, "issuer is 257 bytes long; at most 256"},
		{"issuer control character", func(d *Document) { d.Issuer = "https://probity.dev\n" }, "issuer contains a control character"},
		{"no keys", func(d *Document) { d.Keys = []Key{} }, "keys has 0 entries; want 1 to 64"},
		{"too many keys", func(d *Document) {
			d.Keys = nil
			for i := range 65 {
				d.Keys = append(d.Keys, testKey(t, byte(i+10), t0))
			}
		}, "keys has 65 entries; want 1 to 64"},
		{"algorithm", func(d *Document) { d.Keys[1].Algorithm = "ed25519" }, k1 + `algorithm "ed25519" is not supported (want "Ed25519")`},
		{"spki not base64", func(d *Document) { d.Keys[1].SPKI = "!!!!" }, k1 + "spki is not canonical standard base64"},
		{"spki unpadded", func(d *Document) { d.Keys[1].SPKI = strings.TrimRight(d.Keys[1].SPKI, "=") }, k1 + "spki is not canonical standard base64"},
		{"spki nonzero padding bits", func(d *Document) {
			const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
			s := d.Keys[1].SPKI // 44 bytes: 60 characters ending in one '='
			i := strings.IndexByte(alphabet, s[len(s)-2])
			d.Keys[1].SPKI = s[:len(s)-2] + string(alphabet[i|1]) + "="
		}, k1 + "spki is not canonical standard base64"},
		{"spki with newline", func(d *Document) { d.Keys[1].SPKI = d.Keys[1].SPKI[:10] + "\n" + d.Keys[1].SPKI[10:] }, k1 + "spki is not canonical standard base64"},
		{"spki URL alphabet", func(d *Document) {
			der, _ := base64.StdEncoding.DecodeString(d.Keys[1].SPKI)
			d.Keys[1].SPKI = base64.URLEncoding.EncodeToString(der)
			if d.Keys[1].SPKI == base64.StdEncoding.EncodeToString(der) {
				d.Keys[1].SPKI = "-" + d.Keys[1].SPKI[1:] // make sure it differs
			}
		}, k1 + "spki is not canonical standard base64"},
		{"spki wrong length", func(d *Document) {
			d.Keys[1].SPKI = base64.StdEncoding.EncodeToString(make([]byte, 45))
		}, k1 + "spki decodes to 45 bytes; an Ed25519 SubjectPublicKeyInfo is 44"},
		{"spki garbage", func(d *Document) {
			d.Keys[1].SPKI = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0x30}, 44))
		}, k1 + "spki is not a DER SubjectPublicKeyInfo"},
		{"spki X25519", func(d *Document) { d.Keys[1].SPKI = base64.StdEncoding.EncodeToString(x25519DER) }, k1 + "spki holds a *ecdh.PublicKey, not an Ed25519 public key"},
		{"spki_sha256 upper case", func(d *Document) { d.Keys[1].SPKISHA256 = strings.ToUpper(d.Keys[1].SPKISHA256) }, k1 + "spki_sha256 "},
		{"spki_sha256 of other key", func(d *Document) { d.Keys[1].SPKISHA256 = d.Keys[0].SPKISHA256 }, k1 + "spki_sha256 " + `"` + testDoc(t).Keys[0].SPKISHA256 + `" does not match the SHA-256 of spki`},
		{"key_id of other key", func(d *Document) { d.Keys[1].KeyID = d.Keys[0].KeyID }, "keys[1] (key_id " + testDoc(t).Keys[0].KeyID + "): key_id \"" + testDoc(t).Keys[0].KeyID + "\" does not match the key_id derived from spki (" + id1 + ")"},
		{"key_id too long", func(d *Document) { d.Keys[1].KeyID += "0" }, "keys[1]: key_id \"" + id1 + "0\" does not match"},
		{"valid_from zero", func(d *Document) { d.Keys[1].ValidFrom = time.Time{} }, k1 + "valid_from is not set"},
		{"valid_from sub-millisecond", func(d *Document) { d.Keys[1].ValidFrom = t1.Add(time.Microsecond) }, k1 + "valid_from 2026-11-01 12:00:00.000001 +0000 UTC cannot be written exactly"},
		{"revoked_at year 10000", func(d *Document) {
			d.Keys[1].RevokedAt = ptr(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))
			d.Keys[1].RevocationReason = ptr("x")
		}, k1 + "revoked_at 10000-01-01 00:00:00 +0000 UTC cannot be written exactly"},
		{"valid_until equal", func(d *Document) { d.Keys[1].ValidUntil = ptr(t1) }, k1 + "valid_until 2026-11-01T12:00:00.000Z is not after valid_from 2026-11-01T12:00:00.000Z"},
		{"valid_until before", func(d *Document) {
			d.Keys[1].ValidFrom = mustTime("2026-02-01T00:00:00.000Z")
			d.Keys[1].ValidUntil = ptr(mustTime("2026-01-01T00:00:00.000Z"))
		}, k1 + "valid_until 2026-01-01T00:00:00.000Z is not after valid_from 2026-02-01T00:00:00.000Z"},
		{"revoked without reason", func(d *Document) { d.Keys[1].RevokedAt = ptr(t1) }, k1 + "revocation_reason is null but revoked_at is set"},
		{"reason without revoked_at", func(d *Document) { d.Keys[1].RevocationReason = ptr("leaked") }, k1 + "revoked_at is null but revocation_reason is set"},
		{"empty reason", func(d *Document) {
			d.Keys[1].RevokedAt, d.Keys[1].RevocationReason = ptr(t1), ptr("")
		}, k1 + "revocation_reason is empty"},
		{"long reason", func(d *Document) {
			d.Keys[1].RevokedAt, d.Keys[1].RevocationReason = ptr(t1), ptr(strings.Repeat("é", 101))
		}, k1 + "revocation_reason is 202 bytes long; at most 200"},
		{"reason control character", func(d *Document) {
			d.Keys[1].RevokedAt, d.Keys[1].RevocationReason = ptr(t1), ptr("a\x1b[31mb")
		}, k1 + "revocation_reason contains a control character"},
		{"duplicate key", func(d *Document) { d.Keys[1] = d.Keys[0] }, "keys[1] (key_id " + testDoc(t).Keys[0].KeyID + "): spki is the same key as keys[0]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := testDoc(t)
			tc.mutate(d)
			err := d.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate error = %v\nwant it to contain %q", err, tc.want)
			}
			var de *DocumentError
			if !errors.As(err, &de) {
				t.Fatalf("Validate error is %T, want *DocumentError", err)
			}
			// The same document, encoded, fails Parse too (unless it cannot be
			// represented in JSON exactly, like a sub-millisecond time).
			if strings.Contains(tc.want, "cannot be written exactly") || strings.Contains(tc.want, "is not set") {
				return
			}
			if _, err := Parse(rawJSON(t, d)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse error = %v\nwant it to contain %q", err, tc.want)
			}
		})
	}
}

func TestDocumentErrorPath(t *testing.T) {
	d := testDoc(t)
	d.Keys[1].ValidUntil = ptr(t0)
	var de *DocumentError
	if err := d.Validate(); !errors.As(err, &de) || de.Path != "keys[1].valid_until" || de.KeyID != d.Keys[1].KeyID {
		t.Fatalf("error = %#v", err)
	}
	for _, tc := range []struct {
		e    DocumentError
		want string
	}{
		{DocumentError{"", "", "key document is empty"}, "key document is empty"},
		{DocumentError{"issuer", "", "is empty"}, "issuer is empty"},
		{DocumentError{"keys[3]", "", "must be an object"}, "keys[3]: must be an object"},
		{DocumentError{"keys[3]", "0123456789abcdef", "x"}, "keys[3] (key_id 0123456789abcdef): x"},
		{DocumentError{"keys[3].spki", "0123456789abcdef", "is bad"}, "keys[3] (key_id 0123456789abcdef): spki is bad"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}

// TestParseStrict covers what Parse rejects before Validate: JSON syntax, member names
// and JSON types.
func TestParseStrict(t *testing.T) {
	valid := string(rawJSON(t, testDoc(t)))
	id1 := testKey(t, 2, t1).KeyID
	k1 := "keys[1] (key_id " + id1 + "): "
	// edit replaces the n-th (0-based) occurrence of old in the valid document.
	edit := func(old, new string, n int) string {
		parts := strings.SplitN(valid, old, n+2)
		if len(parts) < n+2 {
			t.Fatalf("%q occurs fewer than %d times", old, n+1)
		}
		return strings.Join(parts[:n+1], old) + new + strings.Join(parts[n+1:], old)
	}
	validUntil1 := `"valid_until": null,`
	tests := []struct {
		name, doc, want string
	}{
		{"empty", "", "invalid JSON"},
		{"array", "[]", "key document must be an object, not an array"},
		{"null", "null", "key document must be an object, not null"},
		{"trailing data", valid + "{}", "invalid JSON"},
		{"duplicate member", strings.Replace(valid, `"format_version": 1,`, `"format_version": 1, "format_version": 1,`, 1), "duplicate key"},
		{"invalid UTF-8", strings.Replace(valid, "probity.dev", "probity\xff.dev", 1), "invalid JSON"},
		{"lone surrogate", strings.Replace(valid, "probity.dev", `probity\ud800.dev`, 1), "invalid JSON"},
		{"missing format_version", strings.Replace(valid, `"format_version": 1,`, "", 1), `key document is missing member "format_version"`},
		{"unknown top-level member", strings.Replace(valid, `"format_version": 1,`, `"format_version": 1, "extra": 1,`, 1), `key document has unknown member "extra"`},
		{"case-variant member", strings.Replace(valid, `"issuer"`, `"Issuer"`, 1), `key document has unknown member "Issuer"`},
		{"format_version string", strings.Replace(valid, `"format_version": 1`, `"format_version": "1"`, 1), "format_version must be an integer, not a string"},
		{"format_version float", strings.Replace(valid, `"format_version": 1`, `"format_version": 1.0`, 1), "format_version must be an integer"},
		{"format_version exponent", strings.Replace(valid, `"format_version": 1`, `"format_version": 1e0`, 1), "format_version must be an integer"},
		{"format_version null", strings.Replace(valid, `"format_version": 1`, `"format_version": null`, 1), "format_version must be an integer, not null"},
		{"issuer number", strings.Replace(valid, `"https://probity.dev"`, `5`, 1), "issuer must be a string, not a number"},
		{"issuer null", strings.Replace(valid, `"https://probity.dev"`, `null`, 1), "issuer must be a string, not null"},
		{"keys null", `{"format_version":1,"issuer":"x","keys":null}`, "keys must be an array, not null"},
		{"keys object", `{"format_version":1,"issuer":"x","keys":{}}`, "keys must be an array, not an object"},
		{"format_version 4 first", `{"format_version":4,"issuer":"","keys":[]}`, "format_version 4 is not supported"},
		{"keys empty", `{"format_version":1,"issuer":"x","keys":[]}`, "keys has 0 entries"},
		{"key not object", `{"format_version":1,"issuer":"x","keys":[[]]}`, "keys[0]: must be an object, not an array"},
		{"key null", `{"format_version":1,"issuer":"x","keys":[null]}`, "keys[0]: must be an object, not null"},
		{"missing valid_until", edit(validUntil1, "", 0), k1 + `is missing member "valid_until"`},
		{"missing revocation_reason", edit(`,
      "revocation_reason": null`, "", 1), k1 + `is missing member "revocation_reason"`},
		{"unknown key member", edit(validUntil1, validUntil1+` "comment": "x",`, 0), k1 + `has unknown member "comment"`},
		{"case-variant key member", edit(`"key_id"`, `"KEY_ID"`, 1), `keys[1]: has unknown member "KEY_ID"`},
		{"key_id number", edit(`"key_id": "`+id1+`"`, `"key_id": 7`, 0), "keys[1]: key_id must be a string, not a number"},
		{"algorithm null", edit(`"algorithm": "Ed25519"`, `"algorithm": null`, 1), k1 + "algorithm must be a string, not null"},
		{"spki array", edit(`"spki": "`, `"spki": ["`, 1), "invalid JSON"},
		{"spki_sha256 bool", edit(`"spki_sha256": "`+testKey(t, 2, t1).SPKISHA256+`"`, `"spki_sha256": true`, 0), k1 + "spki_sha256 must be a string, not a boolean"},
		{"valid_from null", edit(`"valid_from": "2026-11-01T12:00:00.000Z"`, `"valid_from": null`, 0), k1 + "valid_from must be a string, not null"},
		{"valid_from seconds", edit(`"valid_from": "2026-11-01T12:00:00.000Z"`, `"valid_from": "2026-11-01T12:00:00Z"`, 0), k1 + `valid_from timestamp "2026-11-01T12:00:00Z" is not RFC 3339 UTC with milliseconds`},
		{"valid_from offset", edit(`"valid_from": "2026-11-01T12:00:00.000Z"`, `"valid_from": "2026-11-01T12:00:00.000+00:00"`, 0), k1 + "valid_from timestamp"},
		{"valid_from lower case", edit(`"valid_from": "2026-11-01T12:00:00.000Z"`, `"valid_from": "2026-11-01t12:00:00.000z"`, 0), k1 + "valid_from timestamp"},
		{"valid_until number", edit(validUntil1, `"valid_until": 0,`, 0), k1 + "valid_until must be a string or null, not a number"},
		{"valid_until bad", edit(validUntil1, `"valid_until": "tomorrow",`, 0), k1 + `valid_until timestamp "tomorrow"`},
		{"revoked_at object", edit(`"revoked_at": null`, `"revoked_at": {}`, 1), k1 + "revoked_at must be a string or null, not an object"},
		{"revocation_reason bool", edit(`"revocation_reason": null`, `"revocation_reason": false`, 1), k1 + "revocation_reason must be a string or null, not a boolean"},
		{"too large", `{"format_version":1,"issuer":"` + strings.Repeat("a", MaxDocumentSize) + `","keys":[]}`, "larger than 1048576 bytes"},
		{"too deep", strings.Repeat("[", 100) + strings.Repeat("]", 100), "invalid JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse error = %v\nwant it to contain %q", err, tc.want)
			}
		})
	}
	if _, err := Parse([]byte(valid)); err != nil {
		t.Fatalf("Parse(valid) = %v", err)
	}
}

func TestKeyUnmarshalJSON(t *testing.T) {
	data := rawJSON(t, testDoc(t))
	var d Document
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	if !d.Keys[0].PublicKey().Equal(seedKey(1).Public()) || !d.Keys[0].ValidUntil.Equal(t1) {
		t.Errorf("decoded key %+v", d.Keys[0])
	}
	var k Key
	err := json.Unmarshal([]byte(`{"key_id":"x"}`), &k)
	if err == nil || !strings.Contains(err.Error(), "missing member") {
		t.Errorf("Unmarshal(incomplete key) = %v", err)
	}
	// A hand-built Key without the cached public key still yields it.
	k = testDoc(t).Keys[1]
	k.pub = nil
	if !k.PublicKey().Equal(seedKey(2).Public()) {
		t.Error("PublicKey without cache")
	}
	k.SPKI = "bad"
	if k.PublicKey() != nil {
		t.Error("PublicKey of bad SPKI is not nil")
	}
}

func TestValidAt(t *testing.T) {
	k := testKey(t, 1, t0)
	k.ValidUntil = ptr(t1)
	for _, tc := range []struct {
		at   time.Time
		want bool
	}{
		{t0.Add(-time.Millisecond), false},
		{t0.Add(-time.Microsecond), false}, // 23:59:59.999999 is in millisecond .999
		{t0, true},
		{t0.Add(time.Microsecond), true},
		{t1, true},
		{t1.Add(999 * time.Microsecond), true}, // same millisecond as valid_until
		{t1.Add(time.Millisecond), false},
		{t1.In(time.FixedZone("x", -3600)), true},
	} {
		if got := k.ValidAt(tc.at); got != tc.want {
			t.Errorf("ValidAt(%s) = %v, want %v", tc.at.Format(time.RFC3339Nano), got, tc.want)
		}
	}
	k.ValidUntil = nil
	if !k.ValidAt(t1.AddDate(100, 0, 0)) {
		t.Error("open-ended key not valid far in the future")
	}
}

func TestLookupAndCurrent(t *testing.T) {
	d := testDoc(t)
	if k, ok := d.Lookup(d.Keys[1].KeyID); !ok || k != &d.Keys[1] {
		t.Fatal("Lookup failed")
	}
	if _, ok := d.Lookup("0000000000000000"); ok {
		t.Fatal("Lookup found a missing key")
	}
	check := func(at time.Time, want *Key) {
		t.Helper()
		got, ok := d.Current(at)
		if got != want || ok != (want != nil) {
			t.Errorf("Current(%s) = %v, %v; want %v", attest.FormatTime(at), got, ok, want)
		}
	}
	check(t0.Add(-time.Millisecond), nil)
	check(t0, &d.Keys[0])
	check(t1, &d.Keys[1]) // both valid at the rotation instant: the newer wins
	check(t1.Add(time.Millisecond), &d.Keys[1])
	d.Keys[1].RevokedAt, d.Keys[1].RevocationReason = ptr(t1), ptr("leaked")
	check(t1, &d.Keys[0])
	check(t1.Add(time.Millisecond), nil)
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/keys.json"
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), `couldn't load key document "`+path+`"`) {
		t.Fatalf("Load(missing) = %v", err)
	}
	d := testDoc(t)
	data, err := MarshalDocument(d)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Issuer != d.Issuer || len(got.Keys) != 2 {
		t.Fatalf("Load = %+v", got)
	}
	if err := os.WriteFile(path, bytes.Repeat([]byte(" "), MaxDocumentSize+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("Load(huge) = %v", err)
	}
}
