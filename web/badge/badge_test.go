package badge

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite the golden SVG files under testdata/golden")

// forCases are the cases of Decide and For, one golden SVG each: every row of the
// package documentation's table, and the order between them. This is the one test of
// the verdicts' precedence, which the badge, the entry's card and its directory row
// share.
var forCases = []struct {
	name    string
	state   State
	want    Badge
	verdict Verdict // Decide's
}{
	{"not_yet_checked", State{},
		Badge{"probity", "not yet checked", ColorNotYetChecked}, NotYetChecked},
	{"not_yet_checked_ignores_round_fields", State{Offline: true, Coverage: CoverageFull, Signed: true, Findings: 3},
		Badge{"probity", "not yet checked", ColorNotYetChecked}, NotYetChecked},
	{"offline", State{Probed: true, Offline: true},
		Badge{"probity", "offline", ColorOffline}, Offline},
	// An offline entry is offline, whatever its older signed round found and
	// whatever its supply run decided.
	{"offline_over_risks", State{Probed: true, Offline: true, Findings: 2, HasSupply: true, Verified: true},
		Badge{"probity", "offline", ColorOffline}, Offline},
	{"offline_no_score", State{Probed: true, Offline: true, HasSupply: true, Score: 87},
		Badge{"probity", "offline", ColorOffline}, Offline},
	{"one_risk", State{Probed: true, Signed: true, Coverage: CoverageFull, Findings: 1},
		Badge{"probity", "1 risk", ColorRisks}, Risks},
	{"risks", State{Probed: true, Signed: true, Coverage: CoverageFull, Findings: 12, HasSupply: true, Score: 87},
		Badge{"probity", "12 risks", ColorRisks}, Risks},
	// Verified never hides a finding.
	{"risks_over_verified", State{Probed: true, Signed: true, Coverage: CoverageFull, Findings: 2, HasSupply: true, Verified: true, Score: 95},
		Badge{"probity", "2 risks", ColorRisks}, Risks},
	// The newest round is unsigned (say, no handshake): the findings of the
	// older signed round stay.
	{"risks_of_older_signed_round", State{Probed: true, Findings: 3},
		Badge{"probity", "3 risks", ColorRisks}, Risks},
	{"risks_behind_login", State{Probed: true, Signed: true, Coverage: CoverageAuthRequired, Findings: 1},
		Badge{"probity", "1 risk", ColorRisks}, Risks},
	{"login_required", State{Probed: true, Signed: true, Coverage: CoverageAuthRequired},
		Badge{"probity", "login required", ColorLoginNeeded}, LoginRequired},
	{"login_required_over_verified", State{Probed: true, Signed: true, Coverage: CoverageAuthRequired, HasSupply: true, Verified: true, Score: 95},
		Badge{"probity", "login required", ColorLoginNeeded}, LoginRequired},
	{"login_required_score", State{Probed: true, Signed: true, Coverage: CoverageAuthRequired, HasSupply: true, Score: 87},
		Badge{"probity", "login required | score 87", ColorLoginNeeded}, LoginRequired},
	{"verified", State{Verified: true, HasSupply: true, Score: 91, Coverage: CoverageFull, Signed: true, Probed: true},
		Badge{"probity", "verified", ColorVerified}, Verified},
	{"verified_unsigned_round", State{Verified: true, HasSupply: true, Score: 80, Probed: true},
		Badge{"probity", "verified", ColorVerified}, Verified},
	{"verified_without_supply", State{Verified: true, Coverage: CoverageFull, Signed: true, Probed: true},
		Badge{"probity", "no risks found", ColorHealthy}, NoRisksFound},
	{"unsigned", State{Probed: true},
		Badge{"probity", "unsigned", ColorUnsigned}, Unsigned},
	{"unsigned_score", State{HasSupply: true, Score: 87, Probed: true},
		Badge{"probity", "unsigned | score 87", ColorUnsigned}, Unsigned},
	{"unsigned_score_out_of_range", State{HasSupply: true, Score: 101, Probed: true},
		Badge{"probity", "unsigned", ColorUnsigned}, Unsigned},
	{"no_risks_found", State{Coverage: CoverageFull, Signed: true, Probed: true},
		Badge{"probity", "no risks found", ColorHealthy}, NoRisksFound},
	{"no_risks_found_score", State{HasSupply: true, Score: 87, Coverage: CoverageFull, Signed: true, Probed: true},
		Badge{"probity", "no risks found | score 87", ColorHealthy}, NoRisksFound},
	// An unsigned supply run is no verdict: no score.
	{"no_risks_found_unsigned_supply", State{Checked: true, Score: 87, Coverage: CoverageFull, Signed: true, Probed: true},
		Badge{"probity", "no risks found", ColorHealthy}, NoRisksFound},
	// A signed round that claims a coverage not known here is never taken for
	// full coverage.
	{"coverage_unknown", State{Coverage: "partial", Signed: true, Probed: true},
		Badge{"probity", "checked", ColorLoginNeeded}, Checked},
	// A server whose parts were checked without a round (a package, a
	// repository, a remote before its first round) is never "not yet checked"
	// (issue 14).
	{"supply_only_score", State{HasSupply: true, Score: 0},
		Badge{"probity", "score 0", ColorHealthy}, SupplyScore},
	{"supply_only_verified", State{HasSupply: true, Verified: true, Score: 95},
		Badge{"probity", "verified", ColorVerified}, Verified},
	{"supply_only_unsigned", State{Checked: true, Score: 60},
		Badge{"probity", "unsigned", ColorUnsigned}, Unsigned},
	{"supply_only_signed_checked", State{HasSupply: true, Checked: true, Score: 87},
		Badge{"probity", "score 87", ColorHealthy}, SupplyScore},
	{"supply_only_score_out_of_range", State{HasSupply: true, Checked: true, Score: -1},
		Badge{"probity", "checked", ColorHealthy}, SupplyScore},
}

func TestFor(t *testing.T) {
	for _, tc := range forCases {
		t.Run(tc.name, func(t *testing.T) {
			if v := Decide(tc.state); v != tc.verdict {
				t.Errorf("Decide(%+v) = %s, want %s", tc.state, v, tc.verdict)
			}
			got := For(tc.state)
			if got != tc.want {
				t.Fatalf("For(%+v) = %+v, want %+v", tc.state, got, tc.want)
			}
			svg := SVG(got)
			checkSVG(t, svg, got)
			path := filepath.Join("testdata", "golden", tc.name+".svg")
			if *update {
				if err := os.WriteFile(path, svg, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("couldn't read golden file (run with -update to create it): %v", err)
			}
			if !bytes.Equal(svg, want) {
				t.Errorf("SVG differs from %s (run with -update if intended)\ngot:  %s\nwant: %s", path, svg, want)
			}
		})
	}
}

// TestMatchesShields compares SVG with badges that shields.io's own
// renderer drew: testdata/shields holds the output of badge-maker 6.0.0
// (npm), makeBadge({label, message, color, style: 'flat'}), for the cases
// below; testdata/shields/make.js writes them again. The table of text
// widths, the geometry, the colors of text on light backgrounds and the
// escaping must all agree for these to be equal.
func TestMatchesShields(t *testing.T) {
	cases := map[string]Badge{
		"build-passing":  {"build", "passing", "#4c1"},
		"verified":       {"probity", "verified", "#4c1"},
		"signed":         {"probity", "signed", "#007ec6"},
		"login":          {"probity", "signed: login required", "#5d7a91"},
		"unsigned-score": {"probity", "unsigned | score 87", "#777"},
		"not-yet-probed": {"probity", "not yet probed", "#9f9f9f"},
		"light":          {"probity", "Wide WWW text %@ ~", "#eee"},
		"no-label":       {"", "message only", "#007ec6"},
		"escape":         {"a&b", "<x y=\"1\">'", "#e05d44"},
		// The messages and colors of For (issue 16).
		"not-yet-checked":      {Label, "not yet checked", ColorNotYetChecked},
		"offline":              {Label, "offline", ColorOffline},
		"one-risk":             {Label, "1 risk", ColorRisks},
		"risks":                {Label, "12 risks", ColorRisks},
		"login-required":       {Label, "login required", ColorLoginNeeded},
		"login-required-score": {Label, "login required | score 87", ColorLoginNeeded},
		"no-risks-found":       {Label, "no risks found", ColorHealthy},
		"no-risks-found-score": {Label, "no risks found | score 87", ColorHealthy},
		"score":                {Label, "score 87", ColorHealthy},
		"checked":              {Label, "checked", ColorLoginNeeded},
		"unsigned":             {Label, "unsigned", ColorUnsigned},
	}
	for name, b := range cases {
		want, err := os.ReadFile(filepath.Join("testdata", "shields", name+".svg"))
		if err != nil {
			t.Fatal(err)
		}
		if got := SVG(b); !bytes.Equal(got, want) {
			t.Errorf("%s: SVG(%+v) differs from badge-maker's\ngot:  %s\nwant: %s", name, b, got, want)
		}
	}
}

// TestTextWidth checks the width table against widths of shields.io badges
// (from badge-maker 6.0.0; "build | passing" is shields.io's best-known
// badge, 88 px wide: 37 for the label, 51 for the message).
func TestTextWidth(t *testing.T) {
	for _, tc := range []struct {
		text string
		want int
	}{
		{"build", 27},
		{"passing", 41},
		{"probity", 39},
		{"verified", 41},
		{"signed", 35},
		{"", 1},
		{"m", 11},    // 10.7, truncated to 10, rounded up to odd
		{"é", 11},    // the fallback: the width of "m"
		{"ii", 7},    // 6.04
		{"WWWW", 43}, // 43.52
		// 8.53+10.7+6.77 is 26 in decimals but 25.999999999999996 when
		// added left to right in float64, as JavaScript adds it; badge-maker
		// truncates that to 25, which is odd.
		{"GmY", 25},
		{"YmG", 27},  // the same runes in another order: 26 exactly
		{"0CmI", 29}, // 29.999999999999996
	} {
		if got := textWidth(tc.text); got != tc.want {
			t.Errorf("textWidth(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
	// Every printable ASCII width is within Verdana 11 px's range: the
	// narrowest glyph is "'" (2.95 px), the widest "%" (11.84 px).
	for i, w := range verdanaASCII {
		if w < 2.9 || w > 11.9 {
			t.Errorf("width of %q = %v, outside [2.9, 11.9]", rune(i+0x20), w)
		}
	}
	if verdanaASCII['m'-0x20] != fallbackWidth {
		t.Errorf("fallback width %v is not the width of m (%v)", fallbackWidth, verdanaASCII['m'-0x20])
	}
	if verdanaASCII['0'-0x20] != verdanaASCII['9'-0x20] {
		t.Errorf("Verdana's digits are tabular, but 0 and 9 differ")
	}
}

// hostile are texts that try to break out of the SVG.
var hostile = []string{
	`<script>alert(1)</script>`,
	`"><img src=x onerror=alert(1)>`,
	`' onload='alert(1)`,
	`]]><![CDATA[x`,
	`&amp; &#x3c; &lt;`,
	`<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e "e">]>&e;`,
	"nul\x00 bell\x07 esc\x1b del\x7f c1\u0085 tab\t nl\n cr\r",
	"invalid \xff\xfe utf-8 \xc3",
	"zero\u200bwidth bidi\u202eoverride bom\ufeff",
	"nonchar \ufffe \uffff \U0010ffff",
	strings.Repeat("W", 10_000),
}

func TestEscaping(t *testing.T) {
	for _, s := range hostile {
		for _, b := range []Badge{{s, "ok", "#4c1"}, {"probity", s, "#4c1"}, {"probity", "ok", s}} {
			svg := SVG(b)
			checkSVG(t, svg, b)
			if bytes.Contains(svg, []byte("<script")) || bytes.Contains(svg, []byte("<img")) ||
				bytes.Contains(svg, []byte("<!")) || bytes.Contains(svg, []byte("<?")) {
				t.Errorf("SVG(%q) lets markup through: %s", b, svg)
			}
			if !bytes.Contains(svg, []byte(`<text`)) {
				t.Errorf("SVG(%q) has no text", b)
			}
		}
	}
	got := SVG(Badge{`a&b`, `<x y="1">'`, "#4c1"})
	want := `aria-label="a&amp;b: &lt;x y=&quot;1&quot;&gt;&apos;"`
	if !bytes.Contains(got, []byte(want)) {
		t.Errorf("SVG does not contain %s:\n%s", want, got)
	}
	// A bad color never reaches the SVG.
	got = SVG(Badge{"probity", "x", `red" onload="alert(1)`})
	if bytes.Contains(got, []byte("onload")) || !bytes.Contains(got, []byte(`fill="`+ColorNotYetChecked+`"`)) {
		t.Errorf("bad color was not replaced: %s", got)
	}
}

func TestClean(t *testing.T) {
	for in, want := range map[string]string{
		"verified":               "verified",
		"a\x00b":                 "a\ufffdb",
		"\xff":                   "\ufffd",
		"zero\u200bwidth":        "zero\ufffdwidth",
		"tab\tnl\n":              "tab\ufffdnl\ufffd",
		"héllo wörld ✓":          "héllo wörld ✓",
		strings.Repeat("a", 100): strings.Repeat("a", 100),
		strings.Repeat("a", 101): strings.Repeat("a", 99) + "…",
	} {
		if got := clean(in); got != want {
			t.Errorf("clean(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestShieldsJSON(t *testing.T) {
	got := ShieldsJSON(For(State{Verified: true, HasSupply: true, Probed: true, Signed: true, Coverage: CoverageFull}))
	want := `{"schemaVersion":1,"label":"probity","message":"verified","color":"#4c1","cacheSeconds":300}`
	if string(got) != want {
		t.Errorf("ShieldsJSON = %s, want %s", got, want)
	}
	for _, tc := range forCases {
		checkShieldsJSON(t, ShieldsJSON(tc.want), tc.want)
	}
	for _, s := range hostile {
		checkShieldsJSON(t, ShieldsJSON(Badge{s, s, s}), Badge{s, s, s})
	}
	if !strings.Contains(CacheControl, "max-age=300,") {
		t.Errorf("CacheControl %q does not match cacheSeconds %d", CacheControl, cacheSeconds)
	}
}

// checkShieldsJSON checks out against shields.io's endpoint schema: exactly
// the five fields, schemaVersion 1, a non-empty message, a cacheSeconds of at
// least 300, and the texts of b as SVG draws them.
func checkShieldsJSON(t *testing.T, out []byte, b Badge) {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("ShieldsJSON(%q) is not JSON: %v: %s", b, err, out)
	}
	if len(m) != 5 {
		t.Errorf("ShieldsJSON(%q) has %d fields, want 5: %s", b, len(m), out)
	}
	if m["schemaVersion"] != json.Number("1") || m["cacheSeconds"] != json.Number("300") {
		t.Errorf("ShieldsJSON(%q): bad schemaVersion or cacheSeconds: %s", b, out)
	}
	for key, want := range map[string]string{"label": clean(b.Label), "message": clean(b.Message), "color": svgColor(b.Color)} {
		if got, ok := m[key].(string); !ok || got != want {
			t.Errorf("ShieldsJSON(%q): %s = %#v, want %q", b, key, m[key], want)
		}
	}
	if msg, _ := m["message"].(string); msg == "" && b.Message != "" {
		t.Errorf("ShieldsJSON(%q): empty message", b)
	}
}

// checkSVG walks svg with encoding/xml's strict decoder and checks that it
// is one <svg> element whose aria-label and <title> both say
// "label: message" as cleaned.
func checkSVG(t *testing.T, svg []byte, b Badge) {
	t.Helper()
	if err := xmlWellFormed(svg); err != nil {
		t.Fatalf("SVG(%q) is not well-formed XML: %v\n%s", b, err, svg)
	}
	want := clean(b.Message)
	if l := clean(b.Label); l != "" {
		want = l + ": " + want
	}
	var doc struct {
		XMLName   xml.Name `xml:"http://www.w3.org/2000/svg svg"`
		Role      string   `xml:"role,attr"`
		AriaLabel string   `xml:"aria-label,attr"`
		Title     string   `xml:"title"`
	}
	if err := xml.Unmarshal(svg, &doc); err != nil {
		t.Fatalf("SVG(%q): %v", b, err)
	}
	if doc.Role != "img" || doc.AriaLabel != want || doc.Title != want {
		t.Errorf("SVG(%q): role %q, aria-label %q, title %q; want img and %q", b, doc.Role, doc.AriaLabel, doc.Title, want)
	}
}

// xmlWellFormed reports the first error of a strict XML decoder reading
// doc to its end, or an error if doc is not exactly one element.
func xmlWellFormed(doc []byte) error {
	if !utf8.Valid(doc) {
		return errors.New("not UTF-8")
	}
	dec := xml.NewDecoder(bytes.NewReader(doc))
	dec.Strict = true
	depth, roots := 0, 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		switch tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				roots++
			}
			depth++
		case xml.EndElement:
			depth--
		case xml.Directive, xml.ProcInst:
			return errors.New("unexpected directive or processing instruction")
		}
	}
	if roots != 1 || depth != 0 {
		return errors.New("not exactly one root element")
	}
	return nil
}

func FuzzSVG(f *testing.F) {
	// More seeds are in testdata/fuzz/FuzzSVG.
	f.Add("probity", "verified", "#4c1")
	f.Add("", "", "")
	f.Fuzz(func(t *testing.T, label, message, color string) {
		b := Badge{label, message, color}
		svg := SVG(b)
		if err := xmlWellFormed(svg); err != nil {
			t.Fatalf("SVG(%q) is not well-formed XML: %v\n%s", b, err, svg)
		}
		if !json.Valid(ShieldsJSON(b)) {
			t.Fatalf("ShieldsJSON(%q) is not JSON", b)
		}
	})
}

func BenchmarkSVG(b *testing.B) {
	badge := For(State{HasSupply: true, Score: 87, Coverage: CoverageAuthRequired, Signed: true, Probed: true})
	b.ReportAllocs()
	for b.Loop() {
		SVG(badge)
	}
}

func BenchmarkShieldsJSON(b *testing.B) {
	badge := For(State{Verified: true, HasSupply: true, Probed: true})
	b.ReportAllocs()
	for b.Loop() {
		ShieldsJSON(badge)
	}
}
