package checks

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
)

// Test observations are built from fullObs, the observation of a healthy round, with
// one change per case.

var testStart = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

const testURL = "https://mcp.example.com/mcp"

func strp(s string) *string { return &s }

func rawTools(tools ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(tools))
	for i, t := range tools {
		out[i] = json.RawMessage(t)
	}
	return out
}

const (
	echoTool   = `{"name":"echo","description":"Echoes the input.","inputSchema":{"type":"object","properties":{"text":{"type":"string","description":"The text to echo."}},"required":["text"]}}`
	deleteTool = `{"name":"delete_file","title":"Delete a file","description":"Deletes a file.","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}},"annotations":{"destructiveHint":true}}`
)

func fullObs() *Observation {
	return &Observation{
		URL:       testURL,
		StartedAt: testStart,
		Reach:     Reach{FirstStatus: 200},
		TLS: &TLSFacts{
			Version: "TLS1.3", ChainVerified: true, HostnameVerified: true,
			NotAfter: testStart.Add(90*24*time.Hour + time.Hour),
		},
		Transport: TransportStreamableHTTP,
		Handshake: Handshake{
			DiscoverTried: true, DiscoverOK: true, Method: "server/discover",
			ProposedVersion: "2026-07-28", ProtocolVersion: "2026-07-28",
			ServerName: "example", ServerVersion: "1.0.0",
			Instructions: strp("Use echo to repeat text."),
		},
		Tools: ToolsList{
			Attempted: true, Complete: true, Pages: 1,
			Tools: rawTools(echoTool, deleteTool),
		},
		ErrorProbe: ErrorProbe{Attempted: true, JSONRPCError: true, Code: -32602, HTTPStatus: 200},
		Timings:    attest.Timings{HandshakeMs: 120, ToolsListMs: 80, TotalMs: 260},
	}
}

func with(f func(o *Observation)) *Observation {
	o := fullObs()
	f(o)
	return o
}

// authObs is a round stopped by a 401 at the handshake.
func authObs() *Observation {
	return with(func(o *Observation) {
		o.Reach.FirstStatus = 401
		o.Handshake = Handshake{DiscoverTried: true, ProposedVersion: "2026-07-28", Unauthorized: true}
		o.Tools = ToolsList{}
		o.ErrorProbe = ErrorProbe{}
		o.Auth = Auth{
			Challenged: true,
			Challenges: []Challenge{{Scheme: "Bearer", Params: map[string]string{
				"resource_metadata": "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
				"scope":             "files:read",
			}}},
			MetadataURL:          "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
			MetadataFetched:      true,
			MetadataStatus:       200,
			Resource:             testURL,
			AuthorizationServers: []string{"https://auth.example.com"},
			ScopesSupported:      []string{"files:read", "files:write"},
		}
	})
}

// checkCase is one observation and the result one check must give for it.
type checkCase struct {
	name   string
	check  string
	obs    *Observation
	status attest.CheckStatus
	key    string
	params map[string]any // when set, exactly the expected parameters
}

// runCheck runs one check alone, without Evaluate's coverage override.
func runCheck(t testing.TB, id string, obs *Observation) Result {
	t.Helper()
	c, ok := checkByID(id)
	if !ok {
		t.Fatalf("no check %q", id)
	}
	r := c.run(newInput(obs))
	r.ID = id
	return r
}

func runCases(t *testing.T, cases []checkCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.check+"/"+tc.name, func(t *testing.T) {
			r := runCheck(t, tc.check, tc.obs)
			if r.Status != tc.status || r.Reason == nil || r.Reason.Key != tc.key {
				t.Fatalf("got %s %+v, want %s %s", r.Status, r.Reason, tc.status, tc.key)
			}
			if tc.params != nil && !sameParams(r.Reason.Params, tc.params) {
				t.Fatalf("params %v, want %v", r.Reason.Params, tc.params)
			}
			assertResultValid(t, r)
		})
	}
}

func sameParams(got, want map[string]any) bool {
	if len(got) != len(want) {
		return false
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			return false
		}
		if wi, isInt := w.(int); isInt {
			w = int64(wi)
		}
		if g != w {
			return false
		}
	}
	return true
}

var (
	paramNamePattern = regexp.MustCompile(`^[a-z][A-Za-z0-9_]{0,31}$`)
	keyPattern       = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	tokenPattern     = regexp.MustCompile(`^[A-Za-z0-9_.:+/-]{1,64}$`)
)

// assertResultValid holds a result to the catalog and the schema: its reason is declared
// by its check with its status, its parameters are exactly the declared ones with the
// declared kinds, the signed form validates against the predicate schema, and its
// evidence is bounded, escaped and absent from the parameters.
func assertResultValid(t testing.TB, r Result) {
	t.Helper()
	c, ok := checkByID(r.ID)
	if !ok {
		t.Fatalf("result for unknown check %q", r.ID)
	}
	if r.Reason == nil {
		t.Fatalf("%s: no reason", r.ID)
	}
	spec, ok := c.Reason(r.Reason.Key)
	if !ok {
		t.Fatalf("%s: reason %q not in the catalog", r.ID, r.Reason.Key)
	}
	if spec.Status != r.Status {
		t.Fatalf("%s/%s: status %s, catalog says %s", r.ID, r.Reason.Key, r.Status, spec.Status)
	}
	if len(r.Reason.Params) != len(spec.Params) {
		t.Fatalf("%s/%s: params %v, declared %v", r.ID, r.Reason.Key, r.Reason.Params, spec.Params)
	}
	for _, p := range spec.Params {
		v, ok := r.Reason.Params[p.Name]
		if !ok {
			t.Fatalf("%s/%s: param %s missing", r.ID, r.Reason.Key, p.Name)
		}
		switch p.Kind {
		case KindInt:
			n, isInt := v.(int64)
			if !isInt || n > maxSafeInt || n < -maxSafeInt {
				t.Fatalf("%s/%s: param %s = %#v is not an int64 within ±2^53", r.ID, r.Reason.Key, p.Name, v)
			}
		case KindToken:
			s, isStr := v.(string)
			if !isStr || !tokenPattern.MatchString(s) {
				t.Fatalf("%s/%s: param %s = %#v is not a token", r.ID, r.Reason.Key, p.Name, v)
			}
		case KindBool:
			if _, isBool := v.(bool); !isBool {
				t.Fatalf("%s/%s: param %s = %#v is not a bool", r.ID, r.Reason.Key, p.Name, v)
			}
		}
	}
	validateSigned(t, r.Signed())
	for _, e := range r.Evidence {
		for _, s := range []string{e.Sample, e.Tool, e.Field} {
			if len(s) > 200 || !printableASCII(s) {
				t.Fatalf("%s: evidence string %q is not short printable ASCII", r.ID, s)
			}
		}
		if len(e.Sample) > MaxSampleLen {
			t.Fatalf("%s: sample of %d bytes", r.ID, len(e.Sample))
		}
		if e.Sample == "" {
			continue
		}
		for name, v := range r.Reason.Params {
			if s, isStr := v.(string); isStr && (s == e.Sample || len(e.Sample) >= 4 && strings.Contains(s, e.Sample)) {
				t.Fatalf("%s: evidence sample %q appears in param %s = %q", r.ID, e.Sample, name, s)
			}
		}
	}
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// validateSigned validates one signed check result against the predicate schema, inside
// an otherwise minimal valid predicate.
func validateSigned(t testing.TB, cr attest.CheckResult) {
	t.Helper()
	if !keyPattern.MatchString(cr.ID) || (cr.Reason != nil && !keyPattern.MatchString(cr.Reason.Key)) {
		t.Fatalf("id or key of %+v does not match the schema", cr)
	}
	if cr.Reason != nil {
		for name := range cr.Reason.Params {
			if !paramNamePattern.MatchString(name) {
				t.Fatalf("param name %q does not match the schema", name)
			}
		}
	}
	pred := &attest.ProbePredicate{
		Probe:      attest.ProbeInfo{ToolVersion: "0.0.0-test", SuiteVersion: SuiteVersion, SuiteDigest: SuiteDigest()},
		Target:     attest.Target{Kind: "remote", URL: testURL},
		ObservedAt: attest.FormatTime(testStart),
		RoundID:    "r-test",
		Coverage:   attest.CoverageAuthRequired,
		Checks:     []attest.CheckResult{cr},
	}
	b, err := attest.Marshal(pred)
	if err != nil {
		t.Fatalf("marshal %+v: %v", cr, err)
	}
	schema, _ := attest.PredicateSchema(attest.ProbePredicateType)
	if err := schema.ValidateJSON(b); err != nil {
		t.Fatalf("signed result %+v: %v", cr, err)
	}
}
