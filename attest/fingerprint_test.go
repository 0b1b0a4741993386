package attest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"

	"golang.org/x/text/unicode/norm"
)

// fingerprintVector is one case of testdata/fingerprints/vectors.json, which gen.py
// computes with an independent Python implementation of the fingerprints.
type fingerprintVector struct {
	Name        string            `json:"name"`
	Note        string            `json:"note"`
	Document    string            `json:"document"`
	Projections map[string]string `json:"projections"`
	SameAs      string            `json:"same_as"`
	DiffersFrom string            `json:"differs_from"`
	Fingerprints
}

func loadFingerprintVectors(t testing.TB) []fingerprintVector {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "fingerprints", "vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Cases []fingerprintVector `json:"cases"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Cases) < 20 {
		t.Fatalf("only %d vectors", len(file.Cases))
	}
	return file.Cases
}

func fingerprintDocument(doc []byte) (Fingerprints, error) {
	tools, ins, err := ParseToolsDocument(doc)
	if err != nil {
		return Fingerprints{}, err
	}
	return ComputeFingerprints(tools, ins)
}

func TestFingerprintVectors(t *testing.T) {
	vectors := loadFingerprintVectors(t)
	got := make(map[string]Fingerprints)
	for _, v := range vectors {
		t.Run(v.Name, func(t *testing.T) {
			// The vector file is self-consistent: each digest is that of its projection.
			for name, want := range map[string]string{"toolset": v.Toolset, "schema": v.Schema, "surface": v.Surface, "instructions": v.Instructions} {
				p, ok := v.Projections[name]
				if !ok || Digest([]byte(p)) != want {
					t.Fatalf("vectors.json: %s digest does not match its projection", name)
				}
				if !IsCanonical([]byte(p)) {
					t.Errorf("vectors.json: %s projection %q is not canonical by Go", name, p)
				}
			}
			fp, err := fingerprintDocument([]byte(v.Document))
			if err != nil {
				t.Fatalf("fingerprint: %v", err)
			}
			got[v.Name] = fp
			check := func(name, got, want string) {
				if got != want {
					t.Errorf("%s = %s\nwant %s, the digest of\n%s", name, got, want, v.Projections[name])
				}
			}
			check("toolset", fp.Toolset, v.Toolset)
			check("schema", fp.Schema, v.Schema)
			check("surface", fp.Surface, v.Surface)
			check("instructions", fp.Instructions, v.Instructions)

			// Tool order never matters.
			tools, ins, _ := ParseToolsDocument([]byte(v.Document))
			slices.Reverse(tools)
			if fp2, err := ComputeFingerprints(tools, ins); err != nil || fp2 != fp {
				t.Errorf("reversed tools: %+v, %v; want %+v", fp2, err, fp)
			}
		})
	}
	for _, v := range vectors {
		if v.SameAs != "" && got[v.Name] != got[v.SameAs] {
			t.Errorf("%s and %s differ", v.Name, v.SameAs)
		}
		if v.DiffersFrom != "" && got[v.Name] == got[v.DiffersFrom] {
			t.Errorf("%s and %s are equal", v.Name, v.DiffersFrom)
		}
	}
}

// TestFingerprintUTF16Order checks the name order against a brute-force sort of UTF-16
// encodings, over names that UTF-8 byte order would sort differently.
func TestFingerprintUTF16Order(t *testing.T) {
	names := []string{
		"\uff21", "\U0001F600", "a", "\ue000", "\ud7ff", "\U00010000", "\uffff", "Z", "\U0010FFFF",
		"\uff21\U0001F600", "\U0001F600\uff21", "a\U0001F600", "a\uff21", "", "\u00e9", "e\u0301",
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
		var tools []json.RawMessage
		for _, n := range names {
			b, _ := json.Marshal(map[string]string{"name": n})
			tools = append(tools, b)
		}
		fp, err := ComputeFingerprints(tools, nil)
		if err != nil {
			t.Fatal(err)
		}
		sorted := make([]string, len(names))
		for i, n := range names {
			sorted[i] = norm.NFC.String(n)
		}
		slices.SortStableFunc(sorted, func(a, b string) int {
			return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
		})
		want, err := Marshal(sorted)
		if err != nil {
			t.Fatal(err)
		}
		if fp.Toolset != Digest(want) {
			t.Fatalf("toolset fingerprint is not over %q", want)
		}
	}
	// UTF-8 byte order would put U+FF21 first.
	a, _ := fingerprintDocument([]byte("[{\"name\":\"\U0001F600\"},{\"name\":\"\uff21\"}]"))
	if a.Toolset != Digest([]byte("[\"\U0001F600\",\"\uff21\"]")) {
		t.Error("U+1F600 must sort before U+FF21")
	}
}

func TestFingerprintErrors(t *testing.T) {
	tooMany := func(n int) string {
		return "[" + strings.TrimSuffix(strings.Repeat(`{"name":"t"},`, n), ",") + "]"
	}
	tests := []struct {
		name, doc string
	}{
		{"invalid JSON", `{"tools":[`},
		{"empty document", ``},
		{"trailing data", `{"tools":[]} x`},
		{"duplicate top-level key", `{"tools":[],"tools":[]}`},
		{"duplicate tool key", `{"tools":[{"name":"a","name":"b"}]}`},
		{"NFC collision in tool", "{\"tools\":[{\"name\":\"a\",\"\u00c5\":1,\"A\u030a\":2}]}"},
		{"lone surrogate", `{"tools":[{"name":"a","description":"\ud800"}]}`},
		{"invalid UTF-8", "{\"tools\":[{\"name\":\"a\xff\"}]}"},
		{"non-finite number in schema", `{"tools":[{"name":"a","inputSchema":{"maximum":1e400}}]}`},
		{"too deep", `{"tools":[{"name":"a","inputSchema":` + strings.Repeat("[", 62) + strings.Repeat("]", 62) + `}]}`},
		{"tool is a number", `{"tools":[1]}`},
		{"tool is a string", `{"tools":["search"]}`},
		{"tool is null", `{"tools":[null]}`},
		{"tool is an array", `[[{"name":"a"}]]`},
		{"name missing", `{"tools":[{"title":"no name"}]}`},
		{"name missing second", `[{"name":"a"},{"description":"x"}]`},
		{"name is a number", `{"tools":[{"name":1}]}`},
		{"name is null", `{"tools":[{"name":null}]}`},
		{"name is an array", `{"tools":[{"name":["a"]}]}`},
		{"name is an object", `{"tools":[{"name":{}}]}`},
		{"tools missing", `{}`},
		{"tools missing in result", `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"JSON-RPC error", `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}`},
		{"result not an object", `{"jsonrpc":"2.0","id":1,"result":[]}`},
		{"tools is an object", `{"tools":{}}`},
		{"tools is null", `{"tools":null}`},
		{"tools is a string", `{"tools":"a"}`},
		{"instructions is a number", `{"tools":[],"instructions":1}`},
		{"instructions is an object", `{"tools":[],"instructions":{}}`},
		{"instructions is null", `{"tools":[],"instructions":null}`},
		{"top-level string", `"tools"`},
		{"top-level number", `1`},
		{"top-level null", `null`},
		{"more than MaxTools", tooMany(MaxTools + 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if fp, err := fingerprintDocument([]byte(tt.doc)); err == nil {
				t.Errorf("fingerprint(%.80q) = %+v, want an error", tt.doc, fp)
			}
		})
	}
	if _, err := fingerprintDocument([]byte(tooMany(MaxTools))); err != nil {
		t.Errorf("%d tools: %v", MaxTools, err)
	}
	// ComputeFingerprints bounds its input itself.
	tools := make([]json.RawMessage, MaxTools+1)
	for i := range tools {
		tools[i] = json.RawMessage(`{"name":"t"}`)
	}
	if _, err := ComputeFingerprints(tools, nil); err == nil {
		t.Error("ComputeFingerprints accepted more than MaxTools tools")
	}
	bad := "\xff"
	if _, err := ComputeFingerprints(nil, &bad); err == nil {
		t.Error("ComputeFingerprints accepted instructions with invalid UTF-8")
	}
}

func TestFingerprintInstructions(t *testing.T) {
	ins := "Caf\u00e9"
	nfd := "Cafe\u0301"
	a, err := ComputeFingerprints(nil, &ins)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ComputeFingerprints(nil, &nfd)
	if err != nil {
		t.Fatal(err)
	}
	if a != b || a.Instructions != Digest([]byte("\"Caf\u00e9\"")) {
		t.Errorf("instructions: %s, %s", a.Instructions, b.Instructions)
	}
	empty := ""
	c, _ := ComputeFingerprints(nil, &empty)
	d, _ := ComputeFingerprints(nil, nil)
	if c != d || c.Instructions != Digest([]byte(`""`)) {
		t.Errorf("absent and empty instructions differ: %+v, %+v", c, d)
	}
	if c.Toolset != Digest([]byte("[]")) || c.Schema != Digest([]byte("[]")) || c.Surface != Digest([]byte("[]")) {
		t.Errorf("empty list: %+v", c)
	}
}

var digestPattern = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

func TestDigest(t *testing.T) {
	if got := Digest(nil); got != "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Errorf("Digest(nil) = %s", got)
	}
	if got := Digest([]byte("[]")); got != "sha256:4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945" {
		t.Errorf(`Digest("[]") = %s`, got)
	}
	if !digestPattern.MatchString(Digest([]byte("x"))) {
		t.Error("Digest format")
	}
}

// omap is a JSON object that keeps its members in the order given, as servers send
// them: rarely sorted.
type omap []omapMember

type omapMember struct {
	k string
	v any
}

func (m omap) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, kv := range m {
		if i > 0 {
			b = append(b, ',')
		}
		k, err := json.Marshal(kv.k)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(kv.v)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
}

// benchTools returns a realistic tools/list response of n tools: names, titles, one to
// three sentence descriptions, input schemas of two to five properties with nested
// objects and enums, and annotations on some tools, members in the order MCP SDKs
// write them.
func benchTools(n int) []byte {
	r := rand.New(rand.NewPCG(42, 7))
	verbs := []string{"get", "list", "create", "update", "delete", "search", "sync", "export"}
	nouns := []string{"issue", "repository", "file", "comment", "user", "deployment", "invoice", "calendar_event", "ticket", "branch"}
	sentences := []string{
		"Returns the matching records ordered by last modification time.",
		"Requires the caller to have write access to the target workspace.",
		"Results are paginated; pass the cursor from the previous response to continue.",
		"Use this tool when the user asks about recent activity in a project.",
		"The operation is idempotent and safe to retry after a network failure.",
		"Large payloads are truncated to the first 10,000 characters.",
	}
	type o = omap
	props := []func() omapMember{
		func() omapMember {
			return omapMember{"query", o{{"type", "string"}, {"description", "Free-text search query."}, {"minLength", 1}}}
		},
		func() omapMember {
			return omapMember{"limit", o{{"type", "integer"}, {"minimum", 1}, {"maximum", 100}, {"default", 20}}}
		},
		func() omapMember {
			return omapMember{"state", o{{"type", "string"}, {"enum", []string{"open", "closed", "all"}}, {"default", "open"}}}
		},
		func() omapMember {
			return omapMember{"owner", o{{"type", "object"}, {"properties", o{
				{"login", o{{"type", "string"}}}, {"id", o{{"type", "integer"}}},
			}}, {"required", []string{"login"}}}}
		},
		func() omapMember {
			return omapMember{"labels", o{{"type", "array"}, {"items", o{{"type", "string"}}}, {"maxItems", 20}}}
		},
		func() omapMember {
			return omapMember{"since", o{{"type", "string"}, {"format", "date-time"}, {"description", "Only items updated after this time."}}}
		},
		func() omapMember {
			return omapMember{"sort", o{{"type", "object"}, {"properties", o{
				{"field", o{{"type", "string"}, {"enum", []string{"created", "updated", "priority"}}}},
				{"direction", o{{"type", "string"}, {"enum", []string{"asc", "desc"}}}},
			}}}}
		},
	}
	tools := make([]omap, 0, n)
	for i := range n {
		verb, noun := verbs[i%len(verbs)], nouns[(i/len(verbs)+i)%len(nouns)]
		name := fmt.Sprintf("%s_%s", verb, noun)
		if i >= len(verbs)*len(nouns)/2 {
			name += fmt.Sprint("_v", i)
		}
		var desc []string
		for range 1 + r.IntN(3) {
			desc = append(desc, sentences[r.IntN(len(sentences))])
		}
		var properties omap
		var required []string
		for _, k := range r.Perm(len(props))[:2+r.IntN(4)] {
			p := props[k]()
			properties = append(properties, p)
			if len(required) < 2 && r.IntN(2) == 0 {
				required = append(required, p.k)
			}
		}
		schema := o{{"type", "object"}, {"properties", properties}}
		if required != nil {
			schema = append(schema, omapMember{"required", required})
		}
		schema = append(schema, omapMember{"additionalProperties", false})
		tool := o{
			{"name", name},
			{"title", strings.ToUpper(verb[:1]) + verb[1:] + " " + strings.ReplaceAll(noun, "_", " ")},
			{"description", strings.Join(desc, " ")},
			{"inputSchema", schema},
		}
		switch {
		case verb == "delete":
			tool = append(tool, omapMember{"annotations", o{{"destructiveHint", true}, {"idempotentHint", true}}})
		case i%3 == 0:
			tool = append(tool, omapMember{"annotations", o{{"readOnlyHint", verb == "get" || verb == "list"}, {"openWorldHint", false}}})
		}
		tools = append(tools, tool)
	}
	r.Shuffle(len(tools), func(i, j int) { tools[i], tools[j] = tools[j], tools[i] })
	doc, err := json.Marshal(o{{"jsonrpc", "2.0"}, {"id", 2}, {"result", o{{"tools", tools}}}})
	if err != nil {
		panic(err)
	}
	return doc
}

func TestBenchToolsRealistic(t *testing.T) {
	doc := benchTools(50)
	tools, _, err := ParseToolsDocument(doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 50 {
		t.Fatalf("%d tools", len(tools))
	}
	if per := len(doc) / 50; per < 500 || per > 800 {
		t.Errorf("%d bytes per tool, want 500-800", per)
	}
	if _, err := ComputeFingerprints(tools, nil); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkFingerprint50Tools fingerprints a realistic 50-tool tools/list response from
// its raw bytes, as "probity fingerprint" does. Goal: ≥ 5,000 per second on one core.
func BenchmarkFingerprint50Tools(b *testing.B) {
	doc := benchTools(50)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := FingerprintDocument(doc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFingerprint50ToolsSplit is the path a probe takes with tools it parsed from the
// raw pages itself: ParseToolsDocument, then ComputeFingerprints (two scans).
func BenchmarkFingerprint50ToolsSplit(b *testing.B) {
	doc := benchTools(50)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		tools, ins, err := ParseToolsDocument(doc)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ComputeFingerprints(tools, ins); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCanonicalizeStatement(b *testing.B) {
	fp, err := fingerprintDocument(benchTools(50))
	if err != nil {
		b.Fatal(err)
	}
	st := realisticStatement(fp)
	doc, err := Marshal(st)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("Canonicalize", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Canonicalize(doc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Marshal(st); err != nil {
				b.Fatal(err)
			}
		}
	})
	if !bytes.Equal(doc, must(Canonicalize(doc))) {
		b.Fatal("statement is not canonical")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// checkSplit compares the splitting functions, which trust their input, with
// encoding/json on a document CheckJSON accepts.
func checkSplit(t testing.TB, doc []byte) {
	t.Helper()
	doc = bytes.TrimSpace(doc)
	switch doc[0] {
	case '[':
		var want []json.RawMessage
		if err := json.Unmarshal(doc, &want); err != nil {
			t.Fatal(err)
		}
		got, end := splitArray(doc)
		if end != len(doc) {
			t.Fatalf("splitArray(%q) ends at %d, want %d", doc, end, len(doc))
		}
		if len(got) != len(want) {
			t.Fatalf("splitArray(%q): %d elements, want %d", doc, len(got), len(want))
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("splitArray(%q)[%d] = %q, want %q", doc, i, got[i], want[i])
			}
		}
	case '{':
		var want map[string]json.RawMessage
		if err := json.Unmarshal(doc, &want); err != nil {
			t.Fatal(err)
		}
		got := make(map[string]json.RawMessage)
		forEachMember(doc, func(key, val []byte) {
			k, err := decodeString(key)
			if err != nil {
				t.Fatal(err)
			}
			got[k] = val
		})
		if len(got) != len(want) {
			t.Fatalf("forEachMember(%q): %d members, want %d", doc, len(got), len(want))
		}
		for k, v := range want {
			if !bytes.Equal(got[k], v) {
				t.Fatalf("forEachMember(%q)[%q] = %q, want %q", doc, k, got[k], v)
			}
		}
		if end := walkMembers(doc, func(_ []byte, at int) int { return SkipJSONValue(doc, at) }); end != len(doc) {
			t.Fatalf("walkMembers(%q) ends at %d, want %d", doc, end, len(doc))
		}
	default:
		if end := SkipJSONValue(doc, 0); end != len(doc) {
			t.Fatalf("SkipJSONValue(%q) = %d, want %d", doc, end, len(doc))
		}
	}
}

func TestSplit(t *testing.T) {
	docs := []string{
		`[]`, `[ ]`, `{}`, `{ }`, `[1]`, ` [ 1 , -2.5e3 ,true,false , null ] `,
		`["a","b\"]","c\\","\\\"","[{","}]"]`,
		`{"a\"b":1,"c\\":"\\","":[{}],"\u0074ools":{"x":[1,{"y":"]"}]}}`,
		"{\n\t\"a\" :\r\n [ \"x\" ] , \"b\":{ \"c\" : 0 }\n}",
		`[[[]],[{}],{"a":[[]]},"\\\\"]`,
		`"\\"`, `"a\"b"`, `123`, `-0.5E+7`, `true`, `null`,
		`{"e\u0301":1,"f":2}`,
	}
	for _, d := range docs {
		if err := CheckJSON([]byte(d)); err != nil {
			t.Fatalf("%q: %v", d, err)
		}
		checkSplit(t, []byte(d))
	}
}

// TestComputeFingerprintsChecksTools covers tools passed to ComputeFingerprints directly,
// not through ParseToolsDocument: each must pass the canonical profile itself.
func TestComputeFingerprintsChecksTools(t *testing.T) {
	for _, raw := range []string{
		`{"name":"a","name":"b"}`, `{"name":"a","x":1,"x":2}`, `{"name":"\ud800"}`, "{\"name\":\"\xff\"}",
		`{"name":"a"} {}`, `{"name":"a",}`, ``, `{"name":"a","inputSchema":9007199254740993}`,
	} {
		if fp, err := ComputeFingerprints([]json.RawMessage{json.RawMessage(raw)}, nil); err == nil {
			t.Errorf("ComputeFingerprints(%q) = %+v, want an error", raw, fp)
		}
	}
	a, err := ComputeFingerprints([]json.RawMessage{json.RawMessage(" {\"name\" : \"e\u0301\", \"title\":null} ")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := fingerprintDocument([]byte("[{\"title\":null,\"name\":\"\u00e9\"}]"))
	if err != nil || a != b {
		t.Errorf("direct %+v, from a document %+v, %v", a, b, err)
	}
}

// TestParseToolsDocumentCopies checks that the tools do not alias the caller's buffer.
func TestParseToolsDocumentCopies(t *testing.T) {
	doc := []byte(`{"tools":[{"name":"a"},{"name":"b"}]}`)
	tools, _, err := ParseToolsDocument(doc)
	if err != nil {
		t.Fatal(err)
	}
	for i := range doc {
		doc[i] = ' '
	}
	if string(tools[0]) != `{"name":"a"}` || string(tools[1]) != `{"name":"b"}` {
		t.Errorf("tools changed with the document: %q", tools)
	}
	_ = append(tools[0], 'x')
	if string(tools[1]) != `{"name":"b"}` {
		t.Errorf("appending to one tool overwrote the next: %q", tools[1])
	}
}
