package checks

import (
	"strings"
	"testing"
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
}
