package web

import (
	"encoding/json"
	"fmt"
	"html/template"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/probity-dev/probity/attest"
)

// referenceTools reads a surface with encoding/json into maps (exact member names, the
// last of a name wins, as attest reads a tool): name, title (else annotations.title) and
// description by jsonText, as the site did before scanSurface.
func referenceTools(t *testing.T, doc []byte) [][3]string {
	t.Helper()
	out, err := referenceOf(doc)
	if err != nil {
		t.Fatalf("reference: %v", err)
	}
	return out
}

func referenceOf(doc []byte) ([][3]string, error) {
	var tools []map[string]json.RawMessage
	if err := json.Unmarshal(doc, &tools); err != nil {
		return nil, err
	}
	out := make([][3]string, len(tools))
	for i, tl := range tools {
		if tl == nil {
			return nil, fmt.Errorf("tool %d is null", i)
		}
		title := jsonText(tl["title"])
		if title == "" {
			var ann map[string]json.RawMessage
			if json.Unmarshal(tl["annotations"], &ann) == nil {
				title = jsonText(ann["title"])
			}
		}
		out[i] = [3]string{jsonText(tl["name"]), title, jsonText(tl["description"])}
	}
	return out, nil
}

// hostileTexts are strings that exercise escapes, invisible characters, surrogates
// and the cut at maxShown.
var hostileTexts = []string{
	"", "plain", `<script>alert("x")</script> & 'q'`, "zero\u200bwidth\u202e", "tab\tnew\nline\r",
	"\x00\x01\x1f\x7f", "emoji 😀 and tag \U000e0041", "CJK 検索ツール", `back\slash /slash`,
	strings.Repeat("<", maxShown+10), strings.Repeat("\x01", maxShown+3), strings.Repeat("é", maxShown),
	strings.Repeat("\u200b", 2000), strings.Repeat("a", maxShown-1) + "é",
}

func randomText(r *rand.Rand) string {
	var b strings.Builder
	for range r.IntN(40) {
		h := hostileTexts[r.IntN(len(hostileTexts))]
		b.WriteString(h[:min(r.IntN(64), len(h))])
	}
	if r.IntN(8) == 0 {
		b.WriteString(hostileTexts[r.IntN(len(hostileTexts))])
	}
	return strings.ToValidUTF8(b.String(), "?")
}

// scanned reads doc with scanSurface.
func scanned(t *testing.T, doc []byte) ([][3]string, []int) {
	t.Helper()
	var out [][3]string
	var costs []int
	if err := scanSurface(doc, func(tl *scannedTool) {
		n, ti, d := tl.texts()
		out = append(out, [3]string{string(n), string(ti), string(d)})
		costs = append(costs, tl.cost())
	}); err != nil {
		t.Fatalf("scanSurface: %v\n%.300s", err, doc)
	}
	return out, costs
}

// scanSurface reads what encoding/json reads, from canonical surfaces and from JSON
// written otherwise (whitespace, \u escapes, surrogate pairs, lone surrogates, odd
// values).
func TestScanSurfaceMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var raws []json.RawMessage
	var texts []string
	for i := range 300 {
		m := map[string]any{"name": fmt.Sprintf("t%03d %s", i, randomText(r)), "inputSchema": map[string]any{"type": "object", "description": randomText(r)}}
		switch i % 4 {
		case 0:
			m["title"] = randomText(r)
		case 1:
			m["annotations"] = map[string]any{"title": randomText(r), "readOnlyHint": true}
		case 2:
			m["title"], m["annotations"] = "", map[string]any{"title": randomText(r)}
		}
		if i%3 != 0 {
			m["description"] = randomText(r)
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		raws = append(raws, b)
		texts = append(texts, string(b))
	}
	canonical, err := attest.SurfaceDocument(raws)
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string][]byte{
		"canonical":     canonical,
		"encoding/json": []byte("[\n " + strings.Join(texts, " ,\n\t") + " \r\n]"),
		"odd": []byte(`[{"name":"a\u0062\/c\ud83d\ude00\ud800x\udc00","title":null,"description":12.5e3},` +
			`{"name":{"x":[1,2,{"y":"z"}]},"title":true,"annotations":{"title":"ann \"q\""},"description":"d\\"},` +
			`{"name":"dup","name":"last","annotations":{"title":"first"},"annotations":{"other":1}},` +
			`{"name":"ann","annotations":{"title":"first"},"annotations":"x"},{"name":"ann2","annotations":[{"title":"no"}]},` +
			`{"description":"\u003cb\u003e \u00e9 \t"},{}]`),
		"empty": []byte(` [ ] `),
	}
	for name, doc := range docs {
		want := referenceTools(t, doc)
		got, costs := scanned(t, doc)
		if len(got) != len(want) {
			t.Fatalf("%s: %d tools, want %d", name, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: tool %d = %q, want %q", name, i, got[i], want[i])
			}
			// The cost bounds every encoding of the view.
			v := toolViewOf([]byte(want[i][0]), []byte(want[i][1]), []byte(want[i][2]))
			if enc := encodedSize(t, v); costs[i] < enc {
				t.Errorf("%s: tool %d costs %d, but takes %d bytes encoded", name, i, costs[i], enc)
			}
			if c := toolCost(textCost([]byte(want[i][0])), textCost([]byte(want[i][1])), textCost([]byte(want[i][2]))); c != costs[i] && !strings.ContainsAny(string(doc), `\`) {
				t.Errorf("%s: tool %d: cost from the document %d, from its text %d", name, i, costs[i], c)
			}
		}
	}
}

// encodedSize is the most bytes v's text takes in the page, the JSON or the Markdown.
func encodedSize(t *testing.T, v toolView) int {
	t.Helper()
	j, err := json.Marshal(toolJSON(v))
	if err != nil {
		t.Fatal(err)
	}
	h := len(template.HTMLEscapeString(v.Name)) + len(template.HTMLEscapeString(v.Title)) + len(template.HTMLEscapeString(v.Description))
	md := len(markdown(v.Name)) + len(markdown(v.Title)) + len(markdown(v.Description))
	return max(len(j), h, md)
}

// Malformed documents are errors, never a panic.
func TestScanSurfaceMalformed(t *testing.T) {
	for _, doc := range []string{``, `{}`, `[`, `[{]`, `[{"name":}]`, `[{"name":"x}]`, `[{"name":"\x"}]`, `[{"name":"\u12"}]`,
		`[{"name":"x"},]`, `[{"name":"x"}] x`, `[{"name":tru}]`, `[{"name":-}]`, "[{\"name\":\"a\x01\"}]", `[1]`, `[{"a":[1,}]`,
		`[{"name":"x"` + strings.Repeat("[", 20000) + `}]`, `[{"name":"\`} {
		if err := scanSurface([]byte(doc), func(*scannedTool) {}); err == nil {
			t.Errorf("scanSurface(%.60q) = nil, want an error", doc)
		}
	}
}

func FuzzScanSurface(f *testing.F) {
	f.Add([]byte(`[{"name":"a\ud83d\ude00","title":null,"annotations":{"title":"x"},"description":"<\"d\">"}]`))
	f.Add([]byte(`[{"NAME":"x","name":"y","name":"z"},{"description":12}]`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		want, refErr := referenceOf(doc)
		var got [][3]string
		err := scanSurface(doc, func(tl *scannedTool) {
			n, ti, d := tl.texts()
			got = append(got, [3]string{string(n), string(ti), string(d)})
			_ = tl.cost()
		})
		if refErr != nil || err != nil {
			return // the two may disagree on what is malformed; neither may panic
		}
		if len(got) != len(want) {
			t.Fatalf("%d tools, want %d", len(got), len(want))
		}
		for i := range want {
			if want[i] != got[i] {
				t.Errorf("tool %d = %q, want %q", i, got[i], want[i])
			}
		}
	})
}
