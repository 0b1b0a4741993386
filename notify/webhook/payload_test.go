package webhook

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/store"
)

// versionChange is a version change as history records it: the stored summary holds
// the versions as the server gave them, the details too.
func versionChange(t *testing.T, before, after string) store.ChangeRecord {
	t.Helper()
	d, err := history.EncodeChangeDetails(&history.ChangeDetails{VersionBefore: before, VersionAfter: after})
	if err != nil {
		t.Fatal(err)
	}
	return store.ChangeRecord{Kind: attest.ChangeVersion, Summary: "version " + before + " → " + after, Details: d}
}

// TestSummaryProbitysWordsOnly: the payload's summary is Probity's words: a version as
// the e-mails show it or "version changed", a tools summary of Probity's forms or
// "tool list changed"; no server text gets through, whatever the stored summary holds.
func TestSummaryProbitysWordsOnly(t *testing.T) {
	tools := func(s string) store.ChangeRecord { return store.ChangeRecord{Kind: attest.ChangeTools, Summary: s} }
	edit := func(s string) store.ChangeRecord {
		return store.ChangeRecord{Kind: attest.ChangeOperatorEdit, Summary: s}
	}
	for _, c := range []struct {
		name string
		c    store.ChangeRecord
		want string
	}{
		{"good_version", versionChange(t, "1.2.0", "1.3.0"), "version 1.2.0 → 1.3.0"},
		{"good_version_normalized", versionChange(t, "v1.2.0+build.4", "v1.3.0-rc.1"), "version 1.2.0 → 1.3.0-rc.1"},
		{"good_version_odd_prerelease", versionChange(t, "1.2.0", "1.3.0-visit-evil-example-now"), "version 1.2.0 → 1.3.0 (pre-release)"},
		{"good_version_from_nonsemver", versionChange(t, "2024-12-01 nightly", "1.0.0"), "version 1.0.0"},
		{"fail_version_to_nonsemver", versionChange(t, "1.0.0", "IGNORE PREVIOUS INSTRUCTIONS"), "version changed"},
		{"fail_version_with_words", versionChange(t, "1.0.0", "2.0.0; 5 tools removed"), "version changed"},
		{"fail_version_same_shown", versionChange(t, "1.0.0+a", "1.0.0+b"), "version changed"},
		{"fail_version_html", versionChange(t, "1.0.0", "<script>alert(1)</script>"), "version changed"},
		{"fail_version_no_details", store.ChangeRecord{Kind: attest.ChangeVersion, Summary: "version 1.0.0 → 2.0.0"}, "version changed"},
		{"fail_version_bad_details", store.ChangeRecord{Kind: attest.ChangeVersion, Summary: "version 1.0.0 → 2.0.0", Details: []byte(`{"versionAfter":"2.0.0","note":"x"}`)}, "version changed"},
		{"good_tools", tools("2 tools added, 1 removed"), "2 tools added, 1 removed"},
		{"good_tools_changed", tools("1 tool removed; 3 tools changed: title, parameters, hints; instructions added"), "1 tool removed; 3 tools changed: title, parameters, hints; instructions added"},
		{"good_tools_version", tools("1 tool added; version v1.0.0 → 2.0.0-IGNORE-PREVIOUS"), "1 tool added; version 1.0.0 → 2.0.0 (pre-release)"},
		{"good_tools_version_alone", tools("1 tool added; version 2.0.0"), "1 tool added; version 2.0.0"},
		{"good_tools_version_changed", tools("instructions changed; version changed"), "instructions changed; version changed"},
		{"good_tool_list", tools("tool list changed"), "tool list changed"},
		{"fail_tools_name", tools("1 tool added: exfiltrate_keys"), "tool list changed"},
		{"fail_tools_words", tools("2 tools added; visit https://evil.example"), "tool list changed"},
		{"fail_tools_zero", tools("0 tools added"), "tool list changed"},
		{"fail_tools_empty", tools(""), "tool list changed"},
		{"fail_tools_long", tools(strings.Repeat("instructions changed; ", 30) + "instructions changed"), "tool list changed"},
		{"good_edit", edit("setup notes edited by the operator"), "setup notes edited by the operator"},
		{"fail_edit", edit("Call 555-0100 edited by the operator"), "listing edited by the operator"},
		{"fail_kind", store.ChangeRecord{Kind: "baseline", Summary: "observation started at version <b>x</b>"}, "changed"},
	} {
		if got := Summary(c.c); got != c.want {
			t.Errorf("%s: Summary = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestVersionPayloadHasNoServerText: a version change whose version text is a server's
// words is delivered with Probity's words only.
func TestVersionPayloadHasNoServerText(t *testing.T) {
	f := newFixture(t, true)
	ctx := context.Background()
	rcv := f.receiver(func() int { return http.StatusOK })
	if _, err := f.svc.Register(ctx, f.accounts[0], rcv.URL+"/hook"); err != nil {
		t.Fatal(err)
	}
	f.plan()
	f.now = f.now.Add(time.Minute)
	for i, after := range []string{"2.0.0 IGNORE PREVIOUS INSTRUCTIONS", "3.0.0-click-https-evil-example"} {
		c := versionChange(t, "1.0.0", after)
		c.EntryID, c.EntrySlug, c.Number, c.RecordedAt, c.Origin = 42, "acme", int64(i+1), f.now, "automatic"
		f.st.add(c)
	}
	if n := f.plan(); n != 2 {
		t.Fatalf("planned %d", n)
	}
	if n := f.deliver(); n != 2 {
		t.Fatalf("%d attempts", n)
	}
	want := map[int64]string{1: "version changed", 2: "version 1.0.0 → 3.0.0 (pre-release)"}
	for _, body := range rcv.bodies {
		for _, bad := range []string{"IGNORE", "evil", "click"} {
			if strings.Contains(string(body), bad) {
				t.Errorf("the payload holds server text %q: %s", bad, body)
			}
		}
		var p Payload
		if err := json.Unmarshal(body, &p); err != nil {
			t.Fatal(err)
		}
		if p.Data.Change.Summary != want[p.Data.Change.Number] {
			t.Errorf("change %d: summary %q, want %q", p.Data.Change.Number, p.Data.Change.Summary, want[p.Data.Change.Number])
		}
	}
}
