package checks

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/probity-dev/probity/attest"
)

// goldenSuiteDigest pins the catalog's data. When a change to the catalog's ids, groups,
// statuses, reason keys or parameters is deliberate, bump SuiteVersion and update this
// value; an unintended change to the suite fails here.
const goldenSuiteDigest = "sha256:e1dd55192df73e0a43655ef19e21ed2871182ba28a5c39e8a243ab973c208db8"

func TestSuiteDigestGolden(t *testing.T) {
	if got := SuiteDigest(); got != goldenSuiteDigest {
		t.Fatalf("SuiteDigest() = %s, golden %s: if the catalog change is deliberate, bump SuiteVersion and update goldenSuiteDigest", got, goldenSuiteDigest)
	}
	if again := digestOf(Catalog()); again != goldenSuiteDigest {
		t.Fatalf("recomputed digest %s differs", again)
	}
}

func TestSuiteDigestCoversDataNotWording(t *testing.T) {
	base := digestOf(Catalog())
	if base != SuiteDigest() {
		t.Fatal("digestOf(Catalog()) differs from SuiteDigest()")
	}
	mutations := []struct {
		name    string
		mutate  func(cs []Check)
		changes bool
	}{
		{"title", func(cs []Check) { cs[0].Title = "other words" }, false},
		{"text", func(cs []Check) { cs[0].Reasons[0].Text = "other words." }, false},
		{"id", func(cs []Check) { cs[0].ID = "reach" }, true},
		{"group", func(cs []Check) { cs[0].Group = GroupSec }, true},
		{"key", func(cs []Check) { cs[0].Reasons[0].Key = "ok" }, true},
		{"status", func(cs []Check) { cs[0].Reasons[0].Status = attest.StatusFailed }, true},
		{"param name", func(cs []Check) { cs[0].Reasons[0].Params[0].Name = "code" }, true},
		{"param kind", func(cs []Check) { cs[0].Reasons[0].Params[0].Kind = KindToken }, true},
		{"order", func(cs []Check) { cs[0], cs[1] = cs[1], cs[0] }, true},
	}
	for _, mu := range mutations {
		cs := Catalog()
		mu.mutate(cs)
		if got := digestOf(cs) != base; got != mu.changes {
			t.Errorf("changing the %s changes the digest: %v, want %v", mu.name, got, mu.changes)
		}
	}
}

func TestCatalogOrderAndGroups(t *testing.T) {
	want := []struct{ id, group string }{
		{"reachability", "reach"}, {"latency", "reach"}, {"tls_certificate", "reach"},
		{"transport", "proto"}, {"protocol_revision", "proto"}, {"discovery_handshake", "proto"},
		{"tools_list", "proto"}, {"error_taxonomy", "proto"},
		{"redirect_policy", "sec"}, {"auth_metadata", "sec"}, {"hidden_instructions", "sec"}, {"destructive_annotations", "sec"},
		{"toolset_fingerprint", "drift"}, {"schema_fingerprint", "drift"}, {"surface_fingerprint", "drift"},
		{"toolset_unchanged_vs_approved", "drift"}, {"schema_unchanged_vs_approved", "drift"}, {"surface_unchanged_vs_approved", "drift"},
	}
	cs := Catalog()
	if len(cs) != len(want) {
		t.Fatalf("%d checks, want %d", len(cs), len(want))
	}
	for i, w := range want {
		if cs[i].ID != w.id || cs[i].Group != w.group {
			t.Errorf("check %d = %s/%s, want %s/%s", i, cs[i].Group, cs[i].ID, w.group, w.id)
		}
	}
	if !slices.Equal(CheckIDs(), func() []string {
		var ids []string
		for _, w := range want {
			ids = append(ids, w.id)
		}
		return ids
	}()) {
		t.Error("CheckIDs disagrees with the catalog")
	}
	for _, id := range attest.AuthRequiredChecks {
		if _, ok := checkByID(id); !ok {
			t.Errorf("auth_required check %s is not in the catalog", id)
		}
	}
}

var placeholder = regexp.MustCompile(`\{([^{}]*)\}`)

func TestCatalogData(t *testing.T) {
	ids := map[string]bool{}
	for _, c := range Catalog() {
		if ids[c.ID] {
			t.Errorf("duplicate id %s", c.ID)
		}
		ids[c.ID] = true
		if !keyPattern.MatchString(c.ID) || c.Title == "" || c.run == nil {
			t.Errorf("%s: bad id, title or run", c.ID)
		}
		keys := map[string]bool{}
		var statuses []attest.CheckStatus
		for _, r := range c.Reasons {
			if keys[r.Key] {
				t.Errorf("%s: duplicate reason %s", c.ID, r.Key)
			}
			keys[r.Key] = true
			if !keyPattern.MatchString(r.Key) {
				t.Errorf("%s: reason key %q does not match the schema", c.ID, r.Key)
			}
			if !slices.Contains(attest.Statuses, r.Status) {
				t.Errorf("%s/%s: status %q", c.ID, r.Key, r.Status)
			}
			if !slices.Contains(statuses, r.Status) {
				statuses = append(statuses, r.Status)
			}
			if len(r.Params) > 8 {
				t.Errorf("%s/%s: %d params exceed the schema's 8", c.ID, r.Key, len(r.Params))
			}
			names := map[string]bool{}
			for _, p := range r.Params {
				if !paramNamePattern.MatchString(p.Name) || names[p.Name] {
					t.Errorf("%s/%s: param name %q invalid or repeated", c.ID, r.Key, p.Name)
				}
				names[p.Name] = true
				if p.Kind != KindInt && p.Kind != KindToken && p.Kind != KindBool {
					t.Errorf("%s/%s: param %s kind %q", c.ID, r.Key, p.Name, p.Kind)
				}
			}
			used := map[string]bool{}
			for _, m := range placeholder.FindAllStringSubmatch(r.Text, -1) {
				used[m[1]] = true
				if !names[m[1]] {
					t.Errorf("%s/%s: text names {%s}, not a param", c.ID, r.Key, m[1])
				}
			}
			for n := range names {
				if !used[n] {
					t.Errorf("%s/%s: param %s not in the text", c.ID, r.Key, n)
				}
			}
			if r.Text == "" || r.Text[len(r.Text)-1] != '.' {
				t.Errorf("%s/%s: text should be a sentence", c.ID, r.Key)
			}
		}
		slices.SortFunc(statuses, func(a, b attest.CheckStatus) int {
			return slices.Index(attest.Statuses, a) - slices.Index(attest.Statuses, b)
		})
		if !slices.Equal(statuses, c.Statuses) {
			t.Errorf("%s: Statuses %v, reasons give %v", c.ID, c.Statuses, statuses)
		}
		_, hasCred := c.Reason(attest.ReasonCredentialRequired)
		if hasCred == slices.Contains(attest.AuthRequiredChecks, c.ID) {
			t.Errorf("%s: credential_required declared = %v", c.ID, hasCred)
		}
		if !slices.ContainsFunc(c.Reasons, func(r ReasonSpec) bool { return r.Status == attest.StatusUnverified }) {
			t.Errorf("%s: no UNVERIFIED reason: a check must be able to say it could not observe", c.ID)
		}
	}
}

func TestCatalogIsACopy(t *testing.T) {
	a := Catalog()
	a[0].ID = "changed"
	a[0].Statuses[0] = "X"
	a[0].Reasons[0].Key = "changed"
	a[0].Reasons[0].Params[0].Name = "changed"
	b := Catalog()
	if b[0].ID != "reachability" || b[0].Statuses[0] != attest.StatusVerified || b[0].Reasons[0].Key != "answered" || b[0].Reasons[0].Params[0].Name != "status" {
		t.Fatal("Catalog() shares memory with the catalog")
	}
}

func TestDescribe(t *testing.T) {
	tests := []struct {
		r    Result
		want string
	}{
		{runCheck(t, "tls_certificate", with(nil2)), "The certificate chain is trusted, matches the host name and expires in 90 days; the connection used TLS1.3."},
		{runCheck(t, "latency", fullObs()), "The handshake took 120 ms and reading the tool list took 80 ms."},
		{Result{ID: "hidden_instructions", Status: R, Reason: &attest.CheckReason{Key: "invisible_characters", Params: m{"tools": int64(2), "findings": int64(3), "instructions": true}}},
			"3 runs of invisible characters (zero-width, bidi controls, tag characters, private use, escapes or other controls) were found in 2 tools (server instructions affected: yes)."},
		{Result{ID: "latency", Status: U, Reason: &attest.CheckReason{Key: "credential_required"}},
			"The endpoint asked for a login (HTTP 401) before this could be observed; Probity never sends credentials."},
		{Result{ID: "latency", Status: V, Reason: &attest.CheckReason{Key: "measured"}}, "The handshake took ? ms and reading the tool list took ? ms."},
		{Result{ID: "latency", Status: U, Reason: &attest.CheckReason{Key: "nope"}}, "latency: UNVERIFIED (nope)"},
		{Result{ID: "latency", Status: V}, "How long the handshake and the tool list took: VERIFIED"},
		{Result{ID: "other", Status: V}, "other: VERIFIED"},
	}
	for _, tt := range tests {
		if got := Describe(tt.r); got != tt.want {
			t.Errorf("Describe(%s %+v)\n got %q\nwant %q", tt.r.ID, tt.r.Reason, got, tt.want)
		}
	}
}

func nil2(*Observation) {}

func TestDescribeSingular(t *testing.T) {
	r := Result{ID: "tools_list", Status: "VERIFIED", Reason: &attest.CheckReason{Key: "complete", Params: map[string]any{"pages": 1, "tools": 1}}}
	if got := Describe(r); strings.Contains(got, "1 pages") || strings.Contains(got, "1 tools") || !strings.Contains(got, "1 page") {
		t.Errorf("Describe = %q", got)
	}
	r.Reason.Params = map[string]any{"pages": 3, "tools": 12}
	if got := Describe(r); !strings.Contains(got, "3 pages") || !strings.Contains(got, "12 tools") {
		t.Errorf("Describe = %q", got)
	}
}

// TestDescribeSingularVerb: the verb after a count of one agrees with it.
func TestDescribeSingularVerb(t *testing.T) {
	for _, c := range []struct {
		r    Result
		want string
	}{
		{Result{ID: "destructive_annotations", Status: "RISK", Reason: &attest.CheckReason{Key: "missing_destructive_hint", Params: map[string]any{"tools": 1, "contradictory": 1}}},
			"1 tool is named like destructive operations (delete, drop, exec and the like) without declaring destructiveHint true; 1 tool has contradictory hints."},
		{Result{ID: "destructive_annotations", Status: "RISK", Reason: &attest.CheckReason{Key: "contradictory_hints", Params: map[string]any{"tools": 1}}},
			"1 tool declares both readOnlyHint and destructiveHint true."},
		{Result{ID: "destructive_annotations", Status: "RISK", Reason: &attest.CheckReason{Key: "contradictory_hints", Params: map[string]any{"tools": 2}}},
			"2 tools declare both readOnlyHint and destructiveHint true."},
	} {
		if got := Describe(c.r); got != c.want {
			t.Errorf("Describe(%v) =\n %q\nwant\n %q", c.r.Reason.Params, got, c.want)
		}
	}
}

func TestDescribeStoredParams(t *testing.T) {
	// Results read back from stored JSON carry numbers as float64.
	for _, r := range Catalog() {
		for _, rs := range r.Reasons {
			if len(rs.Params) == 0 {
				continue
			}
			params := map[string]any{}
			for _, p := range rs.Params {
				switch p.Kind {
				case KindInt:
					params[p.Name] = float64(3)
				default:
					params[p.Name] = "x"
				}
			}
			got := Describe(Result{ID: r.ID, Status: rs.Status, Reason: &attest.CheckReason{Key: rs.Key, Params: params}})
			if strings.Contains(got, "?") && !strings.Contains(rs.Text, "?") {
				t.Errorf("%s/%s with stored params: %q", r.ID, rs.Key, got)
			}
		}
	}
}
