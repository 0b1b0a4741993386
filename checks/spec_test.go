package checks

import (
	"strings"
	"testing"

	"github.com/probity-dev/probity/attest"
)

// A round whose handshake repeats a member name is not signed: the protocol version,
// server name and instructions a statement would carry depend on the parser.
func TestDuplicateHandshakeMemberNotSigned(t *testing.T) {
	o := fullObs()
	if _, coverage, signed := Evaluate(o); coverage == "" || !signed {
		t.Fatalf("the clean round is not signed: coverage %q", coverage)
	}
	o.Handshake.DuplicateMember = "serverInfo.name"
	results, coverage, signed := Evaluate(o)
	if coverage != "" || signed {
		t.Errorf("coverage %q signed %v; a handshake with a repeated member must not be signed", coverage, signed)
	}
	for _, r := range results {
		if r.ID == "discovery_handshake" && (r.Status != F || r.Reason.Key != "duplicate_member") {
			t.Errorf("discovery_handshake %s %s", r.Status, r.Reason.Key)
		}
	}
}

// The reasons name what was observed: the failing page of a list, and for a server
// without destructive-named tools no "every one of the 0 tools".
func TestDescribeObserved(t *testing.T) {
	o := with(func(o *Observation) { o.Tools.Complete = false; o.Tools.Partial = PartialError; o.Tools.Pages = 2 })
	if got := Describe(runCheck(t, "tools_list", o)); !strings.HasPrefix(got, "Page 3 of tools/list was malformed") {
		t.Errorf("tools_list: %q; page 3 failed after 2 pages were read", got)
	}
	o = with(func(o *Observation) { o.Tools.Tools = rawTools(`{"name":"get_weather"}`, `{"name":"list_files"}`) })
	got := Describe(runCheck(t, "destructive_annotations", o))
	if strings.Contains(got, "0 tools") || strings.Contains(got, "Every one") || !strings.Contains(got, "None of the 2 tools") {
		t.Errorf("destructive_annotations: %q", got)
	}
	// Tokens a sentence reads better spelled out are spelled out; counts agree in number.
	for _, c := range []struct {
		r    Result
		want string
	}{
		{Result{ID: "transport", Status: attest.StatusVerified, Reason: &attest.CheckReason{Key: "detected", Params: map[string]any{"transport": "streamable_http", "evidence": "handshake_response"}}},
			"The endpoint was observed speaking the Streamable HTTP transport: a handshake POSTed to it got its JSON-RPC answer. This stands even when a login was asked for afterwards."},
		{Result{ID: "transport", Status: attest.StatusVerified, Reason: &attest.CheckReason{Key: "detected", Params: map[string]any{"transport": "sse", "evidence": "sse_endpoint_event"}}},
			"The endpoint was observed speaking the legacy HTTP+SSE transport: a GET opened an event stream whose first event named the message endpoint. This stands even when a login was asked for afterwards."},
		{Result{ID: "tools_list", Status: attest.StatusVerified, Reason: &attest.CheckReason{Key: "complete", Params: map[string]any{"pages": 1, "tools": 3}}},
			"Every page of tools/list was read (1 page): 3 tools."},
	} {
		if got := Describe(c.r); got != c.want {
			t.Errorf("Describe(%s %v):\n got %q\nwant %q", c.r.ID, c.r.Reason.Params, got, c.want)
		}
	}
}
