package attest

import (
	"encoding/json"
	"errors"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

// withdrawalExample is the worked example of the package documentation ("Withdrawal
// predicate").
func withdrawalExample() *Statement {
	return NewWithdrawalStatement(EntryRef("remote", "acme-files", "https://mcp.acme.example/mcp"), 1,
		WithdrawalWithdrawn, "The server uploads the files it reads to a third party.",
		time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC),
		WithdrawalSupply{Seq: 42, PayloadDigest: "sha256:" + strings.Repeat("ab", 32)}, "probity-0.9.0")
}

// withdrawalExamplePayload is the canonical payload of withdrawalExample, as the package
// documentation shows it.
const withdrawalExamplePayload = `{"_type":"https://in-toto.io/Statement/v1","predicate":{"action":"withdrawn","at":"2026-03-02T10:00:00.000Z","entry":{"kind":"remote","slug":"acme-files","url":"https://mcp.acme.example/mcp"},"number":1,"reason":"The server uploads the files it reads to a third party.","supply":{"payloadDigest":"sha256:abababababababababababababababababababababababababababababababab","seq":42},"toolVersion":"probity-0.9.0"},"predicateType":"https://probity.dev/attestation/withdrawal/v1","subject":[{"digest":{"sha256":"abababababababababababababababababababababababababababababababab"},"name":"https://mcp.acme.example/mcp"}]}`

func TestWithdrawalWorkedExample(t *testing.T) {
	c, err := Check(withdrawalExample())
	if err != nil {
		t.Fatal(err)
	}
	payload := c.Payload()
	if string(payload) != withdrawalExamplePayload {
		t.Fatalf("payload\n got %s\nwant %s", payload, withdrawalExamplePayload)
	}
	ds, err := DecodeStatement(payload)
	if err != nil {
		t.Fatal(err)
	}
	if ds.Withdrawal == nil || ds.Withdrawal.Action != WithdrawalWithdrawn || ds.Withdrawal.Supply.Seq != 42 ||
		!ds.ObservedAt.Equal(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)) {
		t.Fatalf("decoded %+v", ds.Withdrawal)
	}
	// A package entry names its package.
	st := NewWithdrawalStatement(EntryRef("npm", "acme", "pkg:npm/acme"), 2, WithdrawalRestored, "Fixed in 1.2.",
		time.Date(2026, 3, 3, 10, 0, 0, 0, time.UTC), WithdrawalSupply{Seq: 7, PayloadDigest: "sha256:" + strings.Repeat("0", 64)}, "probity-0.9.0")
	if _, err := Check(st); err != nil {
		t.Fatal(err)
	}
}

func TestWithdrawalRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(st *Statement, p *WithdrawalPredicate)
	}{
		{"fail_action", func(_ *Statement, p *WithdrawalPredicate) { p.Action = "hidden" }},
		{"fail_blank_reason", func(_ *Statement, p *WithdrawalPredicate) { p.Reason = "  \n " }},
		{"fail_empty_reason", func(_ *Statement, p *WithdrawalPredicate) { p.Reason = "" }},
		{"fail_long_reason", func(_ *Statement, p *WithdrawalPredicate) { p.Reason = strings.Repeat("x", MaxWithdrawalReason+1) }},
		{"fail_control_reason", func(_ *Statement, p *WithdrawalPredicate) { p.Reason = "bad\x1b[31m" }},
		{"fail_number", func(_ *Statement, p *WithdrawalPredicate) { p.Number = 0 }},
		{"fail_seq", func(_ *Statement, p *WithdrawalPredicate) { p.Supply.Seq = 0 }},
		{"fail_digest", func(_ *Statement, p *WithdrawalPredicate) { p.Supply.PayloadDigest = "sha256:AB" }},
		{"fail_subject_digest", func(st *Statement, _ *WithdrawalPredicate) {
			st.Subject[0].Digest = DigestSet{"sha256": strings.Repeat("cd", 32)}
		}},
		{"fail_subject_name", func(st *Statement, _ *WithdrawalPredicate) { st.Subject[0].Name = "https://other.example/mcp" }},
		{"fail_remote_package", func(_ *Statement, p *WithdrawalPredicate) { p.Entry.Package = "pkg:npm/x" }},
		{"fail_package_url", func(_ *Statement, p *WithdrawalPredicate) {
			p.Entry = ChangeEntry{Kind: "npm", Slug: "x", URL: "https://mcp.acme.example/mcp"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := withdrawalExample()
			tc.edit(st, st.Predicate.(*WithdrawalPredicate))
			_, err := Check(st)
			var se *StatementError
			var sch *SchemaError
			if err == nil || !errors.As(err, &se) && !errors.As(err, &sch) {
				t.Fatalf("Check = %v, want a statement or schema error", err)
			}
		})
	}
	// A multi-line reason is plain text and allowed.
	st := withdrawalExample()
	st.Predicate.(*WithdrawalPredicate).Reason = "line one\nline two\tand a tab"
	if _, err := Check(st); err != nil {
		t.Fatal(err)
	}
}

// TestWithdrawalSchemaMatchesTypes keeps the withdrawal schema and WithdrawalPredicate in
// lockstep: the members are the struct's JSON names, all required.
func TestWithdrawalSchemaMatchesTypes(t *testing.T) {
	if _, ok := PredicateSchema(WithdrawalPredicateType); !ok {
		t.Fatal("withdrawal predicate type not registered")
	}
	var root map[string]any
	if err := json.Unmarshal(withdrawalSchemaJSON, &root); err != nil {
		t.Fatal(err)
	}
	var names, schemaNames, required []string
	typ := reflect.TypeFor[WithdrawalPredicate]()
	for i := range typ.NumField() {
		names = append(names, typ.Field(i).Tag.Get("json"))
	}
	for k := range root["properties"].(map[string]any) {
		schemaNames = append(schemaNames, k)
	}
	for _, r := range root["required"].([]any) {
		required = append(required, r.(string))
	}
	sort.Strings(schemaNames)
	sort.Strings(required)
	if !reflect.DeepEqual(names, schemaNames) || !reflect.DeepEqual(names, required) {
		t.Fatalf("struct %v, schema %v, required %v", names, schemaNames, required)
	}
	props := root["properties"].(map[string]any)
	if got := props["reason"].(map[string]any)["maxLength"].(float64); int(got) != MaxWithdrawalReason {
		t.Errorf("reason maxLength %v, want %d", got, MaxWithdrawalReason)
	}
	if got := props["number"].(map[string]any)["maximum"].(float64); int(got) != MaxWithdrawalNumber {
		t.Errorf("number maximum %v, want %d", got, MaxWithdrawalNumber)
	}
	if got := props["action"].(map[string]any)["enum"].([]any); len(got) != 2 || got[0] != WithdrawalWithdrawn || got[1] != WithdrawalRestored {
		t.Errorf("action enum %v", got)
	}
}
