package keys

import (
	"bytes"
	"crypto/ed25519"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
)

const testLogKey = "probity.dev/log+4fb7b9f2+ARl/ayPhbIUyxqvIOPrNXqeJvgx2spIDNAOb+os9No1h"

func testDoc2(t *testing.T) *Document {
	t.Helper()
	d := testDoc(t)
	d.FormatVersion = FormatVersion
	d.Log = &Log{Origin: "probity.dev/log", Key: testLogKey}
	return d
}

// TestFormatVersion2: the log member, written last, round-trips; null is allowed; a
// format_version 1 document has no log member and still parses.
func TestFormatVersion2(t *testing.T) {
	d := testDoc2(t)
	data, err := MarshalDocument(d)
	if err != nil {
		t.Fatal(err)
	}
	wantTail := `  ],
  "log": {
    "origin": "probity.dev/log",
    "key": "` + testLogKey + `"
  }
}
`
	if !strings.HasPrefix(string(data), "{\n  \"format_version\": 2,\n") || !strings.HasSuffix(string(data), wantTail) {
		t.Fatalf("MarshalDocument:\n%s", data)
	}
	parsed, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if parsed.Log == nil || *parsed.Log != *d.Log || !SameDocument(parsed, d) {
		t.Fatalf("log not round-tripped: %+v", parsed.Log)
	}
	if again, _ := MarshalDocument(parsed); !bytes.Equal(again, data) {
		t.Fatal("round trip changed the document")
	}
	v, err := parsed.Log.Verifier()
	if err != nil || v.Name() != "probity.dev/log" {
		t.Fatalf("Verifier = %v", err)
	}
	// null log.
	d.Log = nil
	data, err = MarshalDocument(d)
	if err != nil || !strings.HasSuffix(string(data), "  ],\n  \"log\": null\n}\n") {
		t.Fatalf("null log: %v\n%s", err, data)
	}
	if p, err := Parse(data); err != nil || p.Log != nil {
		t.Fatalf("Parse(null log) = %v", err)
	}
	// format_version 1: three members, no log.
	d1 := testDoc(t)
	data, err = MarshalDocument(d1)
	if err != nil || strings.Contains(string(data), "log") {
		t.Fatalf("format 1: %v\n%s", err, data)
	}
	if _, err := Parse(data); err != nil {
		t.Fatal(err)
	}
	d1.Log = &Log{Origin: "probity.dev/log", Key: testLogKey}
	if _, err := MarshalDocument(d1); err == nil || !strings.Contains(err.Error(), "log is not a member of format_version 1") {
		t.Fatalf("format 1 with a log = %v", err)
	}
	// Canonical form and digest.
	c, err := CanonicalDocument(testDoc2(t))
	if err != nil || !bytes.HasPrefix(c, []byte(`{"format_version":2,"issuer":"https://probity.dev","keys":[{"algorithm":"Ed25519",`)) {
		t.Fatalf("CanonicalDocument = %s, %v", c, err)
	}
	if dg, err := DocumentDigest(testDoc2(t)); err != nil || len(dg) != 64 {
		t.Fatalf("DocumentDigest = %s, %v", dg, err)
	}
}

func TestParseLogStrict(t *testing.T) {
	good, err := MarshalDocument(testDoc2(t))
	if err != nil {
		t.Fatal(err)
	}
	valid := string(good)
	otherName, _ := note.NewEd25519VerifierKey("other.example/log", ed25519.NewKeyFromSeed(bytes.Repeat([]byte{42}, 32)).Public().(ed25519.PublicKey))
	for name, tc := range map[string]struct{ doc, want string }{
		"format 2 without log": {strings.Replace(valid, ",\n  \"log\": {", ",\n  \"x\": {", 1), `has unknown member "x"`},
		"format 2 missing log": {valid[:strings.Index(valid, ",\n  \"log\"")] + "\n}", `is missing member "log"`},
		"format 1 with log":    {strings.Replace(valid, `"format_version": 2`, `"format_version": 1`, 1), `has unknown member "log"`},
		"log a string":         {valid[:strings.Index(valid, "\"log\": ")] + `"log": "x"}`, "log must be null or an object"},
		"log extra member":     {strings.Replace(valid, `"origin": "probity.dev/log"`, `"origin": "probity.dev/log", "x": 1`, 1), `has unknown member "x"`},
		"log missing key": {strings.Replace(valid, `,
    "key": "`+testLogKey+`"`, "", 1), `is missing member "key"`},
		"origin number":       {strings.Replace(valid, `"origin": "probity.dev/log"`, `"origin": 1`, 1), "log.origin must be a string"},
		"origin with space":   {strings.Replace(valid, `"origin": "probity.dev/log"`, `"origin": "probity.dev /log"`, 1), "log.origin must be printable ASCII"},
		"origin with plus":    {strings.Replace(valid, `"origin": "probity.dev/log"`, `"origin": "probity+dev/log"`, 1), `log.origin must not contain "+"`},
		"key not a vkey":      {strings.Replace(valid, testLogKey, "garbage", 1), "log.key is not a signed-note verifier key"},
		"key bad hash":        {strings.Replace(valid, "+4fb7b9f2+", "+4fb7b9f3+", 1), "log.key is not a signed-note verifier key"},
		"key upper-case hash": {strings.Replace(valid, "+4fb7b9f2+", "+4FB7B9F2+", 1), "lower-case"},
		"key named otherwise": {strings.Replace(valid, testLogKey, otherName, 1), "is named \"other.example/log\", not the log's origin"},
		"key wrong origin":    {strings.Replace(valid, `"origin": "probity.dev/log"`, `"origin": "probity.dev/log2"`, 1), "not the log's origin"},
	} {
		_, err := Parse([]byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Parse = %v, want %q", name, err, tc.want)
		}
	}
}
