package diff

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
)

// benchNow is the day the benchmark's later read is taken.
var benchNow = time.Date(2026, 12, 1, 6, 45, 0, 0, time.UTC)

// benchSurfaces returns two reads of a realistic server with n tools, as stored surface
// documents parsed back: 1–6 parameters per tool, nested objects and arrays,
// descriptions with fixed dates, a few tools that stamp the date of the read, and in
// the later read about 5% of the tools changed in various ways (descriptions, parameters
// added, removed or newly required, types narrowed, hints, tools added and removed).
// It is deterministic.
func benchSurfaces(tb testing.TB, n int) (before, after Surface) {
	r := rand.New(rand.NewPCG(1, 2))
	verbs := []string{"get", "list", "create", "update", "delete", "search", "sync", "export"}
	nouns := []string{"issue", "pull_request", "file", "branch", "comment", "label", "release", "workflow", "user", "team"}
	sentences := []string{
		"Returns at most 100 items per page; use the cursor to fetch more.",
		"Requires the repository to exist and the token to have read access.",
		"Dates are in ISO 8601, e.g. 2020-01-01T00:00:00Z.",
		"Supported since API version 2024-06-01.",
		"Archived repositories are read-only.",
		"Results are sorted by last update, newest first.",
	}
	type o = map[string]any
	param := func(k int) (string, o) {
		switch k % 8 {
		case 0:
			return "owner", o{"type": "string", "description": "The account owner of the repository."}
		case 1:
			return "limit", o{"type": "integer", "minimum": 1, "maximum": 100, "default": 20}
		case 2:
			return "ratio", o{"type": "number", "description": "A threshold between 0 and 1."}
		case 3:
			return "state", o{"type": "string", "enum": []string{"open", "closed", "all"}, "default": "open"}
		case 4:
			return "opts", o{"type": "object", "properties": o{
				"depth":  o{"type": "number", "description": "How deep to recurse."},
				"filter": o{"type": "object", "properties": o{"label": o{"type": "string"}, "since": o{"type": "string", "format": "date-time"}}},
			}, "required": []string{"depth"}}
		case 5:
			return "files", o{"type": "array", "items": o{"type": "object", "properties": o{
				"path": o{"type": "string", "description": "Path relative to the repository root."},
				"mode": o{"type": "string", "enum": []string{"100644", "100755"}},
			}, "required": []string{"path"}}}
		case 6:
			return "labels", o{"type": "array", "items": o{"type": "string"}, "maxItems": 20}
		}
		return "since", o{"type": "string", "format": "date-time", "description": "Only items updated after this time."}
	}
	type spec struct {
		name, title, desc string
		params            map[string]o
		required          []string
		annots            o
		stamped           bool // stamps the date and time of each read
	}
	specs := make([]spec, n)
	for i := range specs {
		s := &specs[i]
		verb, noun := verbs[i%len(verbs)], nouns[(i/len(verbs))%len(nouns)]
		s.name = fmt.Sprintf("%s_%s_%d", verb, noun, i)
		s.stamped = i%25 == 3
		if i%4 == 0 {
			s.title = strings.ToUpper(verb[:1]) + verb[1:] + " " + strings.ReplaceAll(noun, "_", " ")
		}
		var desc []string
		for range 1 + r.IntN(3) {
			desc = append(desc, sentences[r.IntN(len(sentences))])
		}
		s.desc = fmt.Sprintf("%s the %s. %s", strings.ToUpper(verb[:1])+verb[1:], noun, strings.Join(desc, " "))
		s.params = map[string]o{}
		for _, k := range r.Perm(8)[:1+r.IntN(6)] {
			name, p := param(k)
			s.params[name] = p
			if len(s.required) < 2 && r.IntN(3) == 0 {
				s.required = append(s.required, name)
			}
		}
		switch {
		case verb == "delete":
			s.annots = o{"destructiveHint": true, "idempotentHint": true}
		case verb == "get" || verb == "list" || verb == "search":
			s.annots = o{"readOnlyHint": true, "openWorldHint": false}
		}
	}
	build := func(specs []spec, stamp time.Time) Surface {
		var tools []json.RawMessage
		for _, s := range specs {
			t := o{"name": s.name, "description": s.desc}
			if s.stamped {
				t["description"] = s.desc + " Current date: " + stamp.Format("2006-01-02") + ". Data as of " +
					stamp.Format("January 2, 2006 15:04 MST") + "."
			}
			if s.title != "" {
				t["title"] = s.title
			}
			schema := o{"type": "object", "properties": s.params}
			if len(s.required) > 0 {
				schema["required"] = s.required
			}
			t["inputSchema"] = schema
			if s.annots != nil {
				t["annotations"] = s.annots
			}
			raw, err := json.Marshal(t)
			if err != nil {
				tb.Fatal(err)
			}
			tools = append(tools, raw)
		}
		doc, err := attest.SurfaceDocument(tools)
		if err != nil {
			tb.Fatal(err)
		}
		s, err := Parse(doc, nil, "1.2.0")
		if err != nil {
			tb.Fatal(err)
		}
		return s
	}
	before = build(specs, benchNow.AddDate(0, 0, -1))

	// The later read: about 5% of the tools changed, one way each in turn.
	later := make([]spec, 0, n)
	for i, s := range specs {
		s.params = cloneParams(s.params)
		s.required = append([]string(nil), s.required...)
		if i%20 == 7 {
			switch (i / 20) % 8 {
			case 0:
				s.desc += " Now also returns draft items."
			case 1:
				s.params["page"] = o{"type": "integer", "description": "Page number."}
			case 2:
				delete(s.params, slices.Sorted(maps.Keys(s.params))[0])
			case 3:
				s.params["cursor"] = o{"type": "string"}
				s.required = append(s.required, "cursor")
			case 4:
				s.params["ratio"] = o{"type": "integer", "description": "A threshold between 0 and 1."}
			case 5:
				s.annots = o{"readOnlyHint": false, "destructiveHint": true}
			case 6:
				s.name += "_v2" // renamed
			case 7:
				continue // removed
			}
		}
		later = append(later, s)
	}
	for i := range n / 100 {
		later = append(later, spec{name: fmt.Sprintf("new_tool_%d", i), desc: "A new tool.", params: map[string]o{"q": {"type": "string"}}})
	}
	r.Shuffle(len(later), func(i, j int) { later[i], later[j] = later[j], later[i] })
	after = build(later, benchNow)
	return before, after
}

func cloneParams(m map[string]map[string]any) map[string]map[string]any {
	c := make(map[string]map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// BenchmarkCompare500 compares two reads of a realistic 500-tool server, about 5% of its
// tools changed. Goal: at most 5 ms per Compare on one core.
func BenchmarkCompare500(b *testing.B) {
	before, after := benchSurfaces(b, 500)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compare(before, after, Options{Now: benchNow}); err != nil {
			b.Fatal(err)
		}
	}
}
