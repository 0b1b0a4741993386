package attest

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// checkCases are statements of every predicate type, valid and broken by one rule each
// (canonical bytes, schema, subject, the probe, change and supply rules).
func checkCases() map[string]*Statement {
	fp := precomputedFingerprints()
	probe := func(f func(*ProbePredicate, *Statement)) *Statement {
		st := realisticStatement(fp)
		f(st.Predicate.(*ProbePredicate), st)
		return st
	}
	change := func(f func(*ChangePredicate)) *Statement {
		p := sampleChange()
		f(p)
		st, err := NewChangeStatement(p)
		if err != nil {
			panic(err)
		}
		return st
	}
	supply := func(f func(*SupplyPredicate)) *Statement {
		p := sampleSupply("ppppppppppp")
		f(p)
		return NewSupplyStatement(p, strings.Repeat("ab", 32))
	}
	return map[string]*Statement{
		"probe":                    probe(func(*ProbePredicate, *Statement) {}),
		"probe NFC when encoded":   probe(func(p *ProbePredicate, _ *Statement) { p.ServerInfo.Name = "e\u0301" }),
		"probe unknown type":       probe(func(_ *ProbePredicate, st *Statement) { st.PredicateType = "https://example.com/x" }),
		"probe wrong _type":        probe(func(_ *ProbePredicate, st *Statement) { st.Type = "x" }),
		"probe schema":             probe(func(p *ProbePredicate, _ *Statement) { p.RoundID = "has spaces" }),
		"probe no tool version":    probe(func(p *ProbePredicate, _ *Statement) { p.Probe.ToolVersion = "" }),
		"probe subject digest":     probe(func(_ *ProbePredicate, st *Statement) { st.Subject[0].Digest["sha256"] = strings.Repeat("0", 64) }),
		"probe two subjects":       probe(func(_ *ProbePredicate, st *Statement) { st.Subject = append(st.Subject, st.Subject[0]) }),
		"probe duplicate check":    probe(func(p *ProbePredicate, _ *Statement) { p.Checks[1].ID = p.Checks[0].ID }),
		"probe unverified reason":  probe(func(p *ProbePredicate, _ *Statement) { p.Checks[0].Status, p.Checks[0].Reason = StatusUnverified, nil }),
		"probe full no protocol":   probe(func(p *ProbePredicate, _ *Statement) { p.ProtocolVersion = "" }),
		"probe bad time":           probe(func(p *ProbePredicate, _ *Statement) { p.ObservedAt = "2026-02-30T00:00:00.000Z" }),
		"change":                   change(func(*ChangePredicate) {}),
		"change operator origin":   change(func(p *ChangePredicate) { p.Origin = OriginOperator }),
		"change badge twice":       change(func(p *ChangePredicate) { p.Badges = []string{"a", "a"} }),
		"change round half":        change(func(p *ChangePredicate) { p.After.PayloadDigest = "" }),
		"supply":                   supply(func(*SupplyPredicate) {}),
		"supply verified not so":   supply(func(p *SupplyPredicate) { p.Checks[0].Status, p.Checks[0].PointsMilli = SupplyFailed, 0 }),
		"supply score":             supply(func(p *SupplyPredicate) { p.Score = 99 }),
		"supply weight":            supply(func(p *SupplyPredicate) { p.Checks[2].Weight = 11 }),
		"supply serious unfailing": supply(func(p *SupplyPredicate) { p.Checks[2].Serious = true }),
	}
}

// TestCheckIsDecodeStatement: Check accepts exactly the statements whose canonical bytes
// DecodeStatement (the verifier) accepts, with the same error, and Sign refuses the
// others; so nothing is signed that the verifier would refuse, and a checked statement
// is signed without a second check.
func TestCheckIsDecodeStatement(t *testing.T) {
	signer := newTestSigner(exampleSeed())
	valid := 0
	for name, st := range checkCases() {
		t.Run(name, func(t *testing.T) {
			payload, err := Marshal(st)
			if err != nil {
				t.Fatal(err)
			}
			ds, decodeErr := DecodeStatement(payload)
			c, checkErr := Check(st)
			if (decodeErr == nil) != (checkErr == nil) {
				t.Fatalf("DecodeStatement: %v; Check: %v", decodeErr, checkErr)
			}
			_, _, signErr := Sign(context.Background(), st, signer)
			if decodeErr != nil {
				if !errors.Is(checkErr, decodeErr) && !strings.HasSuffix(checkErr.Error(), decodeErr.Error()) {
					t.Errorf("Check: %v, want %v", checkErr, decodeErr)
				}
				if signErr == nil || !strings.Contains(signErr.Error(), "refusing to sign") {
					t.Errorf("Sign signed a statement the verifier refuses (%v): %v", decodeErr, signErr)
				}
				return
			}
			valid++
			if signErr != nil {
				t.Fatal(signErr)
			}
			if !bytes.Equal(c.Payload(), payload) || !reflect.DeepEqual(c.Decoded(), ds) || c.Statement() != st {
				t.Errorf("Check kept other bytes or another decoding")
			}
			env, signed, err := c.Sign(context.Background(), signer)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(signed, payload) {
				t.Errorf("signed payload differs from the checked one")
			}
			if got, err := DecodeBase64(env.Payload); err != nil || !bytes.Equal(got, payload) {
				t.Errorf("envelope payload differs: %v", err)
			}
			// The checked bytes cannot be changed from outside.
			c.Payload()[0] = 'X'
			if _, again, _ := c.Sign(context.Background(), signer); !bytes.Equal(again, payload) {
				t.Errorf("Payload returned the checked bytes themselves")
			}
		})
	}
	if valid != 4 {
		t.Errorf("%d valid statements, want 4", valid)
	}
}

func TestCheckNil(t *testing.T) {
	if _, err := Check(nil); err == nil {
		t.Fatal("Check(nil) passed")
	}
}

// TestNewProbeStatement: the constructor puts together the statement of the worked
// example (a golden vector) and the auth_required subject, and refuses what is not signed.
func TestNewProbeStatement(t *testing.T) {
	fp := precomputedFingerprints()
	want := exampleStatement(fp)
	got, err := NewProbeStatement(want.Predicate.(*ProbePredicate))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("NewProbeStatement = %+v, want %+v", got, want)
	}
	auth := *want.Predicate.(*ProbePredicate)
	auth.Coverage, auth.Fingerprints, auth.ProtocolVersion, auth.ServerInfo, auth.ToolCount, auth.Pages = CoverageAuthRequired, nil, "", nil, 0, 0
	auth.Checks = []CheckResult{{ID: "reachability", Status: StatusVerified}, {ID: "tools_listed", Status: StatusUnverified, Reason: &CheckReason{Key: ReasonCredentialRequired}}}
	st, err := NewProbeStatement(&auth)
	if err != nil {
		t.Fatal(err)
	}
	if d := st.Subject[0].Digest["sha256"]; d != AuthRequiredDigest(auth.Target.URL) {
		t.Errorf("auth_required subject digest %s", d)
	}
	if _, err := Check(st); err != nil {
		t.Errorf("auth_required statement refused: %v", err)
	}
	for name, p := range map[string]*ProbePredicate{
		"nil":             nil,
		"package target":  {Target: Target{Kind: "npm", Package: "pkg:npm/x"}, Coverage: CoverageFull, Fingerprints: &fp},
		"unsigned":        {Target: Target{Kind: "remote", URL: "https://x.example/"}},
		"no fingerprints": {Target: Target{Kind: "remote", URL: "https://x.example/"}, Coverage: CoverageFull},
	} {
		if _, err := NewProbeStatement(p); err == nil {
			t.Errorf("%s: built", name)
		}
	}
}

func TestNewTimings(t *testing.T) {
	if got := NewTimings(-1, 700000, MaxMillis); got != (Timings{HandshakeMs: 0, ToolsListMs: MaxMillis, TotalMs: MaxMillis}) {
		t.Fatalf("NewTimings = %+v", got)
	}
}

// BenchmarkCheck is Check alone: encode the statement and apply the verifier's rules.
func BenchmarkCheck(b *testing.B) {
	st := realisticStatement(precomputedFingerprints())
	for b.Loop() {
		if _, err := Check(st); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSignCheckedOnce is the round's path since issue 13: the statement is checked
// once where it is built (Check) and signed with Checked.Sign. Before, checks.Statement
// decoded it and attest.Sign encoded and decoded it again.
func BenchmarkSignCheckedOnce(b *testing.B) {
	st := realisticStatement(precomputedFingerprints())
	s := newTestSigner(exampleSeed())
	ctx := context.Background()
	for b.Loop() {
		c, err := Check(st)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := c.Sign(ctx, s); err != nil {
			b.Fatal(err)
		}
	}
}

func TestCheckedMarshalsAsItsPayload(t *testing.T) {
	c, err := Check(realisticStatement(precomputedFingerprints()))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Marshal(c)
	if err != nil || !bytes.Equal(got, c.Payload()) {
		t.Fatalf("Marshal(Checked) = %.60s…, %v", got, err)
	}
}

// TestSchemaErrorPathAfterSiblings: the pointer of a violation names the value, also
// after siblings that were valid (the path is a stack of segments, rendered on error).
func TestSchemaErrorPathAfterSiblings(t *testing.T) {
	s, err := CompileSchema([]byte(`{"type":"object","properties":{
		"a":{"type":"object","properties":{"b":{"type":"integer"}}},
		"c":{"type":"object","properties":{"d":{"type":"integer"}}},
		"l":{"type":"array","items":{"type":"object","additionalProperties":{"type":"integer"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for doc, want := range map[string]string{
		`{"a":{"b":1},"c":{"d":"x"}}`:                     "/c/d",
		`{"a":{"b":1},"l":[{"p":1,"q":2},{"x/y~":"s"}]}`:  "/l/1/x~1y~0",
		`{"a":{"b":1},"c":{"d":2},"l":[{},{},{"z":1.5}]}`: "/l/2/z",
	} {
		var se *SchemaError
		if err := s.ValidateJSON([]byte(doc)); !errors.As(err, &se) || se.Path != want {
			t.Errorf("%s: %v, want a violation at %s", doc, err, want)
		}
	}
}
