package checks

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/probity-dev/probity/attest"
)

var normalizedURL = regexp.MustCompile(`^https?://[^\s]+$`)

var testProbe = attest.ProbeInfo{ToolVersion: "0.1.0"}

// buildStatement evaluates obs, builds its statement and decodes the canonical bytes
// with the verifier's rules.
func buildStatement(t testing.TB, obs *Observation) (*attest.Statement, *attest.DecodedStatement) {
	t.Helper()
	results, coverage, signed := Evaluate(obs)
	if !signed {
		t.Fatalf("observation is not signed")
	}
	checked, err := Statement(obs, results, coverage, testProbe, "r-1")
	if err != nil {
		t.Fatalf("Statement: %v", err)
	}
	st := checked.Statement()
	payload, err := attest.Marshal(st)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	ds, err := attest.DecodeStatement(payload)
	if err != nil {
		t.Fatalf("DecodeStatement: %v\n%s", err, payload)
	}
	return st, ds
}

// TestStatementsOfAllTestObservations: every signed test observation yields a statement
// the verifier accepts; every unsigned one is refused.
func TestStatementsOfAllTestObservations(t *testing.T) {
	obs := []*Observation{fullObs(), authObs()}
	for _, tc := range allCases() {
		obs = append(obs, tc.obs)
	}
	var full, auth, unsigned int
	for i, o := range obs {
		results, coverage, signed := Evaluate(o)
		if !signed {
			unsigned++
			if _, err := Statement(o, results, attest.CoverageFull, testProbe, "r-1"); err == nil {
				t.Errorf("observation %d: unsigned round got a full statement", i)
			}
			continue
		}
		if !normalizedURL.MatchString(o.URL) {
			// The probe normalizes URLs; a statement about any other refuses to build.
			if _, err := Statement(o, results, coverage, testProbe, "r-1"); err == nil {
				t.Errorf("observation %d: statement about %q", i, o.URL)
			}
			continue
		}
		_, ds := buildStatement(t, o)
		p := ds.Probe
		if ds.Subject[0].Name != o.URL || p.Target.URL != o.URL || p.ObservedAt != attest.FormatTime(o.StartedAt) {
			t.Errorf("observation %d: subject %+v target %+v", i, ds.Subject, p.Target)
		}
		if p.Probe.SuiteDigest != SuiteDigest() || p.Probe.SuiteVersion != SuiteVersion || len(p.Checks) != len(catalog) {
			t.Errorf("observation %d: probe %+v, %d checks", i, p.Probe, len(p.Checks))
		}
		switch coverage {
		case attest.CoverageFull:
			full++
			fp, _ := Fingerprints(o)
			if *p.Fingerprints != *fp || ds.Subject[0].Digest["sha256"] != strings.TrimPrefix(fp.Surface, "sha256:") ||
				p.ToolCount != len(o.Tools.Tools) || p.Pages != o.Tools.Pages || p.ProtocolVersion != o.Handshake.ProtocolVersion {
				t.Errorf("observation %d: full predicate %+v", i, p)
			}
		case attest.CoverageAuthRequired:
			auth++
			if p.Fingerprints != nil || p.ToolCount != 0 || p.Pages != 0 || p.ServerInfo != nil || p.ProtocolVersion != "" ||
				ds.Subject[0].Digest["sha256"] != attest.AuthRequiredDigest(o.URL) {
				t.Errorf("observation %d: auth_required predicate %+v", i, p)
			}
		}
	}
	if full < 50 || auth < 20 || unsigned < 20 {
		t.Fatalf("only %d full, %d auth_required, %d unsigned statements exercised", full, auth, unsigned)
	}
}

func TestStatementServerInfo(t *testing.T) {
	long := strings.Repeat("é", 300)
	tests := []struct {
		name, version string
		want          *attest.ServerInfo
	}{
		{"example", "1.0.0", &attest.ServerInfo{Name: "example", Version: "1.0.0"}},
		{"", "", nil},
		{"a\x00b\nc\x1b[31m\x7fd\u0085", "v\t1", &attest.ServerInfo{Name: "abc[31md", Version: "v1"}},
		{"bad\xffutf8", "", &attest.ServerInfo{Name: "bad\uFFFDutf8"}},
		{"e\u0301", "", &attest.ServerInfo{Name: "\u00e9"}},
		{long, strings.Repeat("v", 257), &attest.ServerInfo{Name: strings.Repeat("é", 256), Version: strings.Repeat("v", 256)}},
		{strings.Repeat("e\u0301", 300), "", &attest.ServerInfo{Name: strings.Repeat("é", 256)}},
	}
	for _, tt := range tests {
		o := with(func(o *Observation) { o.Handshake.ServerName, o.Handshake.ServerVersion = tt.name, tt.version })
		st, ds := buildStatement(t, o)
		got := st.Predicate.(*attest.ProbePredicate).ServerInfo
		if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
			t.Errorf("serverInfo(%q, %q) = %+v, want %+v", tt.name, tt.version, got, tt.want)
		}
		if got != nil && (utf8.RuneCountInString(ds.Probe.ServerInfo.Name) > 256 || ds.Probe.ServerInfo.Name != got.Name) {
			t.Errorf("signed name %q", ds.Probe.ServerInfo.Name)
		}
	}
}

func TestStatementTimingsClamped(t *testing.T) {
	o := with(func(o *Observation) {
		o.Timings = attest.Timings{HandshakeMs: -1, ToolsListMs: 700000, TotalMs: 600000}
	})
	_, ds := buildStatement(t, o)
	if got := ds.Probe.Timings; got != (attest.Timings{HandshakeMs: 0, ToolsListMs: 600000, TotalMs: 600000}) {
		t.Fatalf("timings %+v", got)
	}
}

func TestStatementFillsAndChecksSuite(t *testing.T) {
	o := fullObs()
	results, coverage, _ := Evaluate(o)
	checked, err := Statement(o, results, coverage, attest.ProbeInfo{ToolVersion: "1.2.3"}, "r-2")
	if err != nil {
		t.Fatal(err)
	}
	if p := checked.Statement().Predicate.(*attest.ProbePredicate).Probe; p.SuiteVersion != SuiteVersion || p.SuiteDigest != SuiteDigest() || p.ToolVersion != "1.2.3" {
		t.Fatalf("probe %+v", p)
	}
	same := attest.ProbeInfo{ToolVersion: "1.2.3", SuiteVersion: SuiteVersion, SuiteDigest: SuiteDigest()}
	if _, err := Statement(o, results, coverage, same, "r-2"); err != nil {
		t.Fatal(err)
	}
}

func TestStatementErrors(t *testing.T) {
	o := fullObs()
	results, coverage, _ := Evaluate(o)
	swapped := append([]Result(nil), results...)
	swapped[0], swapped[1] = swapped[1], swapped[0]
	authResults, _, _ := Evaluate(authObs())
	tests := []struct {
		name     string
		obs      *Observation
		results  []Result
		coverage attest.Coverage
		probe    attest.ProbeInfo
		round    string
		wantErr  string
	}{
		{"nil observation", nil, results, coverage, testProbe, "r", "no observation"},
		{"too few results", o, results[1:], coverage, testProbe, "r", "results for"},
		{"out of order", o, swapped, coverage, testProbe, "r", "want"},
		{"other suite", o, results, coverage, attest.ProbeInfo{ToolVersion: "1", SuiteVersion: "2020.1"}, "r", "suite"},
		{"other digest", o, results, coverage, attest.ProbeInfo{ToolVersion: "1", SuiteDigest: attest.Digest(nil)}, "r", "suite"},
		{"coverage the observation lacks", authObs(), authResults, attest.CoverageFull, testProbe, "r", "supports"},
		{"unsigned coverage", &Observation{}, authResults, "", testProbe, "r", "not signed"},
		{"results of another coverage", authObs(), results, attest.CoverageAuthRequired, testProbe, "r", "credential_required"},
		{"bad round id", o, results, coverage, testProbe, "round id with spaces", "roundId"},
		{"no tool version", o, results, coverage, attest.ProbeInfo{}, "r", "toolVersion"},
		{"no URL", with(func(o *Observation) { o.URL = "" }), results, coverage, testProbe, "r", "name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Statement(tt.obs, tt.results, tt.coverage, tt.probe, tt.round)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err %v, want one mentioning %q", err, tt.wantErr)
			}
		})
	}
}
