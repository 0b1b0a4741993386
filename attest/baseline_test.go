package attest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestBaselineSchemaMatchesTypes(t *testing.T) {
	var root map[string]any
	if err := json.Unmarshal(baselineSchemaJSON, &root); err != nil {
		t.Fatal(err)
	}
	compare(t, root, root, reflect.TypeFor[BaselinePredicate](), "")
}

// The baseline vector of doc.go ("Baseline predicate"): baseline 1 of a remote entry,
// approved from the round of the probe worked example.
var (
	baselineVectorAt = time.Date(2026, 11, 30, 12, 30, 0, 0, time.UTC)
	baselineVectorFP = Fingerprints{
		Toolset: "sha256:" + strings.Repeat("1", 64),
		Schema:  "sha256:" + strings.Repeat("2", 64),
		Surface: "sha256:" + strings.Repeat("3", 64),
	}
	baselineVectorPayload = `{"_type":"https://in-toto.io/Statement/v1","predicate":{"approvedAt":"2026-11-30T12:30:00.000Z","basis":{"payloadDigest":"sha256:` +
		strings.Repeat("4", 64) + `","roundId":"c20261130T120000000Z-e1"},"entry":{"kind":"remote","slug":"mcp-example-com-mcp","url":"https://mcp.example.com/mcp"},"fingerprints":{"schema":"sha256:` +
		strings.Repeat("2", 64) + `","surface":"sha256:` + strings.Repeat("3", 64) + `","toolset":"sha256:` + strings.Repeat("1", 64) +
		`"},"number":1,"toolCount":3,"toolVersion":"0.1.0"},"predicateType":"https://probity.dev/attestation/baseline/v1","subject":[{"digest":{"sha256":"` +
		strings.Repeat("3", 64) + `"},"name":"https://mcp.example.com/mcp"}]}`
	baselineVectorSig = "M7LtlT4CGOQjW9L3jO61nSsSMciouPHOtIx7arR9GKBNzFCPaKKTfiFwESMMb2E8qTWqf7KHZLqnSmhCZe8oDQ=="
)

func sampleBaseline() *BaselinePredicate {
	entry := EntryRef("remote", "mcp-example-com-mcp", "https://mcp.example.com/mcp")
	return NewBaselinePredicate(entry, 1, baselineVectorAt, "c20261130T120000000Z-e1", "sha256:"+strings.Repeat("4", 64), baselineVectorFP, 3, "0.1.0")
}

// TestBaselineVector rebuilds the worked example of doc.go's baseline section byte for
// byte, signs it with the worked example's key and decodes it back.
func TestBaselineVector(t *testing.T) {
	env, payload, err := Sign(context.Background(), NewBaselineStatement(sampleBaseline()), workedExampleSigner())
	if err != nil {
		t.Fatal(err)
	}
	if string(payload) != baselineVectorPayload {
		t.Fatalf("payload (%d bytes)\n%s\nwant\n%s", len(payload), payload, baselineVectorPayload)
	}
	if env.Signatures[0].Sig != baselineVectorSig {
		t.Fatalf("signature %s", env.Signatures[0].Sig)
	}
	doc := packageDoc(t)
	if !strings.Contains(doc, baselineVectorSig) || !strings.Contains(doc, `"approvedAt":"2026-11-30T12:30:00.000Z"`) {
		t.Errorf("doc.go does not show the baseline vector")
	}
	ds, err := DecodeStatement(payload)
	if err != nil {
		t.Fatal(err)
	}
	if ds.Baseline == nil || ds.Baseline.Number != 1 || !ds.ObservedAt.Equal(baselineVectorAt) || *ds.Baseline.Fingerprints.Fingerprints() != baselineVectorFP {
		t.Fatalf("decoded %+v", ds.Baseline)
	}
}

// TestBaselineRules: the rules beyond the schema, and the schema's own bounds, refuse
// what a verifier must refuse.
func TestBaselineRules(t *testing.T) {
	for name, tc := range map[string]struct {
		edit func(p *BaselinePredicate, st *Statement)
		path string
	}{
		"subject digest not the surface": {func(p *BaselinePredicate, st *Statement) {
			st.Subject[0].Digest["sha256"] = strings.Repeat("5", 64)
		}, "/subject"},
		"subject not the url":   {func(p *BaselinePredicate, st *Statement) { st.Subject[0].Name = "https://other.example/mcp" }, "/subject"},
		"two subjects":          {func(p *BaselinePredicate, st *Statement) { st.Subject = append(st.Subject, st.Subject[0]) }, "/subject"},
		"remote with a package": {func(p *BaselinePredicate, st *Statement) { p.Entry.Package = "pkg:npm/x" }, "/predicate/entry"},
		"package without one":   {func(p *BaselinePredicate, st *Statement) { p.Entry.Kind = "npm" }, "/predicate/entry"},
		"no tools":              {func(p *BaselinePredicate, st *Statement) { p.ToolCount = 0 }, "/predicate/toolCount"},
		"number 0":              {func(p *BaselinePredicate, st *Statement) { p.Number = 0 }, "/predicate/number"},
		"bad surface":           {func(p *BaselinePredicate, st *Statement) { p.Fingerprints.Schema = "sha256:XYZ" }, "/predicate/fingerprints/schema"},
		"no basis digest":       {func(p *BaselinePredicate, st *Statement) { p.Basis.PayloadDigest = "" }, "/predicate/basis/payloadDigest"},
		"bad time":              {func(p *BaselinePredicate, st *Statement) { p.ApprovedAt = "2026-11-30T12:30:00Z" }, "/predicate/approvedAt"},
	} {
		t.Run(name, func(t *testing.T) {
			p := sampleBaseline()
			st := NewBaselineStatement(p)
			tc.edit(p, st)
			_, err := Check(st)
			var se *StatementError
			var sce *SchemaError
			switch {
			case errors.As(err, &se):
				if se.Path != tc.path {
					t.Errorf("path %s, want %s: %v", se.Path, tc.path, err)
				}
			case errors.As(err, &sce):
				if !strings.HasPrefix(sce.Path, tc.path) {
					t.Errorf("path %s, want %s: %v", sce.Path, tc.path, err)
				}
			default:
				t.Fatalf("accepted or wrong error: %v", err)
			}
		})
	}
	// A package entry's baseline is well formed too.
	p := sampleBaseline()
	p.Entry = EntryRef("npm", "npm-acme-mcp", "pkg:npm/%40acme/mcp")
	if _, err := Check(NewBaselineStatement(p)); err != nil {
		t.Fatal(err)
	}
}
