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

func TestDisputeSchemaMatchesTypes(t *testing.T) {
	var root map[string]any
	if err := json.Unmarshal(disputeSchemaJSON, &root); err != nil {
		t.Fatal(err)
	}
	compare(t, root, root, reflect.TypeFor[DisputePredicate](), "")
}

func TestOutcomeSchemaMatchesTypes(t *testing.T) {
	var root map[string]any
	if err := json.Unmarshal(outcomeSchemaJSON, &root); err != nil {
		t.Fatal(err)
	}
	compare(t, root, root, reflect.TypeFor[OutcomePredicate](), "")
}

// The worked example of doc.go's "Dispute and outcome predicates".
var (
	exampleDisputeEntry = ChangeEntry{Kind: "remote", Slug: "mcp-example-com", URL: "https://mcp.example.com/mcp"}
	exampleRoundRecord  = RecordRef{Seq: 41, PayloadDigest: "sha256:" + strings.Repeat("0a", 32)}
)

func sampleDispute() *DisputePredicate {
	return NewDisputePredicate(exampleDisputeEntry, 1, time.Date(2026, 12, 2, 9, 30, 0, 0, time.UTC),
		Finding{Record: exampleRoundRecord, CheckID: "destructive_annotations", Status: StatusFailed},
		"The tool delete_note asks for confirmation.\nSee the linked source.", "https://github.com/example/mcp/blob/main/notes.go", "0.1.0")
}

const exampleDisputePayload = `{"_type":"https://in-toto.io/Statement/v1","predicate":{"entry":{"kind":"remote","slug":"mcp-example-com","url":"https://mcp.example.com/mcp"},"evidence":"https://github.com/example/mcp/blob/main/notes.go","finding":{"checkId":"destructive_annotations","record":{"payloadDigest":"sha256:0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a","seq":41},"status":"FAILED"},"number":1,"openedAt":"2026-12-02T09:30:00.000Z","statement":"The tool delete_note asks for confirmation.\nSee the linked source.","toolVersion":"0.1.0"},"predicateType":"https://probity.dev/attestation/dispute/v1","subject":[{"digest":{"sha256":"0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a"},"name":"https://mcp.example.com/mcp"}]}`

func TestDisputeWorkedExample(t *testing.T) {
	c, err := Check(NewDisputeStatement(sampleDispute()))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(c.Payload()); got != exampleDisputePayload {
		t.Fatalf("payload\n%s\nwant\n%s", got, exampleDisputePayload)
	}
	env, _, err := c.Sign(context.Background(), newTestSigner(exampleSeed()))
	if err != nil {
		t.Fatal(err)
	}
	payload, err := env.DecodeB64Payload()
	if err != nil {
		t.Fatal(err)
	}
	ds, err := DecodeStatement(payload)
	if err != nil || ds.Dispute == nil {
		t.Fatalf("DecodeStatement = %v", err)
	}
	if ds.Dispute.Statement != sampleDispute().Statement || !ds.ObservedAt.Equal(time.Date(2026, 12, 2, 9, 30, 0, 0, time.UTC)) {
		t.Errorf("decoded %+v at %v", ds.Dispute, ds.ObservedAt)
	}

	// The outcome of that dispute, corrected in suite version 2026.12.
	disputeDigest := Digest(payload)
	o := NewOutcomePredicate(exampleDisputeEntry, OutcomeDispute{Number: 1, Record: RecordRef{Seq: 57, PayloadDigest: disputeDigest}},
		DecisionCorrected, "2026.12", "The check now reads the confirmation annotation.", time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC), "0.1.0")
	oc, err := Check(NewOutcomeStatement(o))
	if err != nil {
		t.Fatal(err)
	}
	if oc.Decoded().Outcome == nil {
		t.Fatal("no outcome decoded")
	}
	if err := CheckOutcomeLink(oc.Decoded().Outcome, ds.Dispute, disputeDigest, 57); err != nil {
		t.Errorf("CheckOutcomeLink = %v", err)
	}
	var le *OutcomeLinkError
	if err := CheckOutcomeLink(oc.Decoded().Outcome, ds.Dispute, disputeDigest, 58); !errors.As(err, &le) {
		t.Errorf("another seq: %v", err)
	}
	other := *ds.Dispute
	other.Entry.Slug = "other"
	if err := CheckOutcomeLink(oc.Decoded().Outcome, &other, disputeDigest, 0); !errors.As(err, &le) {
		t.Errorf("another entry: %v", err)
	}
	if err := CheckOutcomeLink(oc.Decoded().Outcome, ds.Dispute, "sha256:"+strings.Repeat("0", 64), 0); !errors.As(err, &le) {
		t.Errorf("another digest: %v", err)
	}
}

func TestDisputeStatementRules(t *testing.T) {
	bad := map[string]func(p *DisputePredicate){
		"empty statement":     func(p *DisputePredicate) { p.Statement = "" },
		"long statement":      func(p *DisputePredicate) { p.Statement = strings.Repeat("ä", MaxDisputeText+1) },
		"tab in statement":    func(p *DisputePredicate) { p.Statement = "a\tb" },
		"escape in statement": func(p *DisputePredicate) { p.Statement = "a\x1b[31mb" },
		"http evidence":       func(p *DisputePredicate) { p.Evidence = "http://example.com/" },
		"javascript evidence": func(p *DisputePredicate) { p.Evidence = "javascript:alert(1)" },
		"space in evidence":   func(p *DisputePredicate) { p.Evidence = "https://a.example/ b" },
		"long evidence":       func(p *DisputePredicate) { p.Evidence = "https://a.example/" + strings.Repeat("a", MaxEvidenceURL) },
		"bad check id":        func(p *DisputePredicate) { p.Finding.CheckID = "Bad-Check" },
		"bad status":          func(p *DisputePredicate) { p.Finding.Status = "WRONG" },
		"number 0":            func(p *DisputePredicate) { p.Number = 0 },
		"seq 0":               func(p *DisputePredicate) { p.Finding.Record.Seq = 0 },
		"remote with package": func(p *DisputePredicate) { p.Entry.Package = "pkg:npm/x" },
		"package without one": func(p *DisputePredicate) { p.Entry.Kind = "npm" },
		"bad digest":          func(p *DisputePredicate) { p.Finding.Record.PayloadDigest = "sha256:00" },
		"no tool version":     func(p *DisputePredicate) { p.ToolVersion = "" },
		"openedAt not UTC ms": func(p *DisputePredicate) { p.OpenedAt = "2026-12-02T09:30:00Z" },
	}
	for name, mutate := range bad {
		p := sampleDispute()
		mutate(p)
		if _, err := Check(NewDisputeStatement(p)); err == nil {
			t.Errorf("%s: Check accepted it", name)
		}
	}
	// A subject that does not pin the contested round.
	st := NewDisputeStatement(sampleDispute())
	st.Subject[0].Digest["sha256"] = strings.Repeat("0b", 32)
	var se *StatementError
	if _, err := Check(st); !errors.As(err, &se) || se.Path != "/subject" {
		t.Errorf("wrong subject digest: %v", err)
	}
	// A member the format does not have: the maintainer's account.
	canon, err := Marshal(NewDisputeStatement(sampleDispute()))
	if err != nil {
		t.Fatal(err)
	}
	extra := strings.Replace(string(canon), `"number":1,`, `"account":7,"number":1,`, 1)
	if _, err := DecodeStatement([]byte(extra)); err == nil {
		t.Error("a dispute with an account member decoded")
	}
}

func TestOutcomeStatementRules(t *testing.T) {
	good := func() *OutcomePredicate {
		return NewOutcomePredicate(exampleDisputeEntry, OutcomeDispute{Number: 1, Record: RecordRef{Seq: 57, PayloadDigest: "sha256:" + strings.Repeat("0c", 32)}},
			DecisionRejected, "", "The annotation is missing in the signed round.", time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC), "0.1.0")
	}
	for _, d := range []string{DecisionUpheld, DecisionRejected} {
		p := good()
		p.Decision = d
		if _, err := Check(NewOutcomeStatement(p)); err != nil {
			t.Errorf("%s: %v", d, err)
		}
	}
	bad := map[string]func(p *OutcomePredicate){
		"corrected without suite": func(p *OutcomePredicate) { p.Decision = DecisionCorrected },
		"rejected with suite":     func(p *OutcomePredicate) { p.SuiteVersion = "2026.12" },
		"unknown decision":        func(p *OutcomePredicate) { p.Decision = "withdrawn" },
		"empty reason":            func(p *OutcomePredicate) { p.Reason = "" },
		"long reason":             func(p *OutcomePredicate) { p.Reason = strings.Repeat("x", MaxDisputeText+1) },
		"control in reason":       func(p *OutcomePredicate) { p.Reason = "a\rb" },
		"bad suite version":       func(p *OutcomePredicate) { p.Decision, p.SuiteVersion = DecisionCorrected, "2026 12" },
	}
	for name, mutate := range bad {
		p := good()
		mutate(p)
		if _, err := Check(NewOutcomeStatement(p)); err == nil {
			t.Errorf("%s: Check accepted it", name)
		}
	}
}
