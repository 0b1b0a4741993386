package attest

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// keysVectorDocument is the key document of the keys predicate's test vector (package
// doc, "Keys predicate"), not yet canonical: as keys.MarshalDocument would write it,
// compact.
const keysVectorDocument = `{"format_version":2,"issuer":"https://probity.dev","keys":[{"key_id":"a050837d85070582","algorithm":"Ed25519","spki":"MCowBQYDK2VwAyEAA6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg=","spki_sha256":"a050837d85070582ccf7394b0988847cc312cb88259b894899f6f239cf1791a5","valid_from":"2026-11-30T12:00:00.000Z","valid_until":null,"revoked_at":null,"revocation_reason":null}],"log":{"origin":"probity.dev/log","key":"probity.dev/log+4fb7b9f2+ARl/ayPhbIUyxqvIOPrNXqeJvgx2spIDNAOb+os9No1h"}}`

const (
	keysVectorCanonical = `{"format_version":2,"issuer":"https://probity.dev","keys":[{"algorithm":"Ed25519","key_id":"a050837d85070582","revocation_reason":null,"revoked_at":null,"spki":"MCowBQYDK2VwAyEAA6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg=","spki_sha256":"a050837d85070582ccf7394b0988847cc312cb88259b894899f6f239cf1791a5","valid_from":"2026-11-30T12:00:00.000Z","valid_until":null}],"log":{"key":"probity.dev/log+4fb7b9f2+ARl/ayPhbIUyxqvIOPrNXqeJvgx2spIDNAOb+os9No1h","origin":"probity.dev/log"}}`
	keysVectorDigest    = "69ca53e56cb1f231b4e5f43e68281f93b81062850af2f88b805a4b387b3e8c39"
	keysVectorSig       = "3AiDkq4m+JhzIrbatMgD4GhbI0cQJwuxoa/EhKT30x+zYL6d6v0BsA3LWjEkZy6lCP6T4erDogoOhYOJGejoAA=="
)

var keysVectorAt = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

type seedSigner struct {
	priv ed25519.PrivateKey
	id   string
}

func (s seedSigner) Sign(_ context.Context, d []byte) ([]byte, error) {
	return ed25519.Sign(s.priv, d), nil
}
func (s seedSigner) KeyID() (string, error) { return s.id, nil }

func workedExampleSigner() seedSigner {
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = byte(i)
	}
	return seedSigner{ed25519.NewKeyFromSeed(seed), "a050837d85070582"}
}

// TestKeysVector rebuilds the keys predicate's test vector of the package doc: the
// canonical document, its digest, the statement's canonical bytes and the signature.
func TestKeysVector(t *testing.T) {
	st, err := NewKeysStatement("https://probity.dev", 1, KeysEventGenerated, keysVectorAt, []byte(keysVectorDocument), "")
	if err != nil {
		t.Fatal(err)
	}
	p := st.Predicate.(*KeysPredicate)
	if string(p.Document) != keysVectorCanonical || len(p.Document) != 478 {
		t.Fatalf("canonical document (%d bytes)\n%s", len(p.Document), p.Document)
	}
	if d := KeysDocumentDigest(p.Document); d != keysVectorDigest || st.Subject[0].Digest["sha256"] != d {
		t.Fatalf("document digest %s", d)
	}
	env, payload, err := Sign(context.Background(), st, workedExampleSigner())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"_type":"https://in-toto.io/Statement/v1","predicate":{"document":` + keysVectorCanonical +
		`,"event":"generated","issuedAt":"2026-11-30T12:00:00.000Z","version":1},"predicateType":"https://probity.dev/attestation/keys/v1","subject":[{"digest":{"sha256":"` +
		keysVectorDigest + `"},"name":"https://probity.dev"}]}`
	if string(payload) != want || len(payload) != 805 {
		t.Fatalf("payload (%d bytes)\n%s\nwant\n%s", len(payload), payload, want)
	}
	if env.Signatures[0].Sig != keysVectorSig {
		t.Fatalf("signature %s", env.Signatures[0].Sig)
	}
	doc := packageDoc(t)
	for name, v := range map[string]string{"document": keysVectorCanonical, "digest": keysVectorDigest, "signature": keysVectorSig} {
		if !strings.Contains(doc, v) {
			t.Errorf("doc.go does not show the keys vector's %s", name)
		}
	}
	ds, err := DecodeStatement(payload)
	if err != nil {
		t.Fatal(err)
	}
	if ds.Keys == nil || ds.Keys.Version != 1 || ds.Keys.Event != "generated" || !ds.ObservedAt.Equal(keysVectorAt) || !bytes.Equal(ds.Keys.Document, p.Document) {
		t.Fatalf("decoded %+v", ds.Keys)
	}
}

// packageDoc returns doc.go's text joined without its wrapping, for vector lookups.
func packageDoc(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(data), "\n//\t", "")
}

// TestKeysStatementRules: the rules the keys schema cannot express, and the schema's own
// bounds, each broken once.
func TestKeysStatementRules(t *testing.T) {
	prev := "sha256:" + strings.Repeat("ab", 32)
	build := func(version int, event, previous string, edit func(*Statement)) *Statement {
		st, err := NewKeysStatement("https://probity.dev", version, event, keysVectorAt, []byte(keysVectorDocument), previous)
		if err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			edit(st)
		}
		return st
	}
	doc := func(f func(string) string) func(*Statement) {
		return func(st *Statement) {
			p := st.Predicate.(*KeysPredicate)
			p.Document = json.RawMessage(f(string(p.Document)))
			st.Subject[0].Digest["sha256"] = KeysDocumentDigest(p.Document)
		}
	}
	for name, tc := range map[string]struct {
		st   *Statement
		want string
	}{
		"version 1":                  {build(1, "generated", "", nil), ""},
		"version 2":                  {build(2, "rotated", prev, nil), ""},
		"version 1 with previous":    {build(1, "generated", prev, nil), "version 1 has no previous version"},
		"version 2 without previous": {build(2, "rotated", "", nil), "must name the previous version's digest"},
		"version 2 generated":        {build(2, "generated", prev, nil), "only version 1, is generated"},
		"version 1 rotated":          {build(1, "rotated", "", nil), "only version 1, is generated"},
		"version 0":                  {build(0, "generated", "", nil), "below the minimum"},
		"unknown event":              {build(2, "renamed", prev, nil), "/predicate/event"},
		"previous not a digest":      {build(2, "rotated", "sha256:ABC", nil), "/predicate/previous"},
		"subject not the issuer":     {build(1, "generated", "", func(st *Statement) { st.Subject[0].Name = "https://other.example" }), "the document's issuer"},
		"subject digest wrong":       {build(1, "generated", "", func(st *Statement) { st.Subject[0].Digest["sha256"] = strings.Repeat("0", 64) }), "sha256 of the canonical document"},
		"document format 1":          {build(1, "generated", "", doc(func(s string) string { return strings.Replace(s, `"format_version":2`, `"format_version":1`, 1) })), "/predicate/document/format_version"},
		"document without log":       {build(1, "generated", "", doc(func(s string) string { return s[:strings.Index(s, `,"log"`)] + "}" })), `"log" is missing`},
		"document with null log":     {build(1, "generated", "", doc(func(s string) string { return s[:strings.Index(s, `,"log"`)] + `,"log":null}` })), ""},
		"document unknown member": {build(1, "generated", "", doc(func(s string) string {
			return strings.Replace(s, `{"format_version"`, `{"extra":1,"format_version"`, 1)
		})), "/predicate/document/extra"},
		"key unknown member":             {build(1, "generated", "", doc(func(s string) string { return strings.Replace(s, `{"algorithm"`, `{"x":1,"algorithm"`, 1) })), "/predicate/document/keys/0/x"},
		"key bad algorithm":              {build(1, "generated", "", doc(func(s string) string { return strings.Replace(s, `"Ed25519"`, `"RSA"`, 1) })), "/predicate/document/keys/0/algorithm"},
		"issuedAt not in the one layout": {build(1, "generated", "", func(st *Statement) { st.Predicate.(*KeysPredicate).IssuedAt = "2026-11-30T12:00:00Z" }), "/predicate/issuedAt"},
	} {
		_, err := Check(tc.st)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: Check = %v", name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: Check = %v, want an error containing %q", name, err, tc.want)
		}
		var se *StatementError
		var sch *SchemaError
		if err != nil && !errors.As(err, &se) && !errors.As(err, &sch) {
			t.Errorf("%s: error %T is neither a StatementError nor a SchemaError", name, err)
		}
	}
	if _, err := NewKeysStatement("https://probity.dev", 1, "generated", keysVectorAt, []byte(`{"a":1,"a":2}`), ""); err == nil {
		t.Error("NewKeysStatement accepted a document with a duplicate key")
	}
}

// TestKeysSchemaMatchesTypes keeps the keys schema and KeysPredicate in lockstep: the
// predicate's members are the struct's JSON names, required exactly when not omitempty,
// the event enum is KeysEvents, and the version bound is MaxKeysVersion.
func TestKeysSchemaMatchesTypes(t *testing.T) {
	if _, ok := PredicateSchema(KeysPredicateType); !ok {
		t.Fatal("keys predicate type not registered")
	}
	var root map[string]any
	if err := json.Unmarshal(keysSchemaJSON, &root); err != nil {
		t.Fatal(err)
	}
	if root["additionalProperties"] != false {
		t.Error("schema allows additional members")
	}
	props := root["properties"].(map[string]any)
	var names, required []string
	typ := reflect.TypeFor[KeysPredicate]()
	for i := range typ.NumField() {
		tag := typ.Field(i).Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		names = append(names, name)
		if opts != "omitempty" {
			required = append(required, name)
		}
	}
	var schemaNames []string
	for k := range props {
		schemaNames = append(schemaNames, k)
	}
	var schemaRequired []string
	for _, r := range root["required"].([]any) {
		schemaRequired = append(schemaRequired, r.(string))
	}
	sort.Strings(schemaNames)
	sort.Strings(schemaRequired)
	sort.Strings(required)
	if !slices.Equal(schemaNames, names) { // names are declared in RFC 8785 order: sorted
		t.Errorf("schema members %v, Go %v", schemaNames, names)
	}
	if !slices.Equal(schemaRequired, required) {
		t.Errorf("schema requires %v, Go %v", schemaRequired, required)
	}
	var events []string
	for _, e := range props["event"].(map[string]any)["enum"].([]any) {
		events = append(events, e.(string))
	}
	if !slices.Equal(events, KeysEvents) {
		t.Errorf("event enum %v, KeysEvents %v", events, KeysEvents)
	}
	if got := props["version"].(map[string]any)["maximum"].(float64); got != MaxKeysVersion {
		t.Errorf("version maximum %v, MaxKeysVersion %d", got, MaxKeysVersion)
	}
	if !bytes.Equal(KeysSchemaJSON(), keysSchemaJSON) {
		t.Error("KeysSchemaJSON differs")
	}
}
