package diff

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// fuzzSurface reads b as a surface document or, when it is not one, as a single raw
// tool, so Compare's own checks are fuzzed as well as Parse's.
func fuzzSurface(b []byte, instructions string) Surface {
	ins := &instructions
	if instructions == "" {
		ins = nil
	}
	if s, err := Parse(b, ins, "1.0.0"); err == nil {
		return s
	}
	return Surface{Tools: []json.RawMessage{b}, Instructions: ins, Version: "1.0.0"}
}

// FuzzCompare checks that Compare never panics, that a surface compared with itself, or
// with its tools in reverse order, is no change, and that summaries hold no server text.
func FuzzCompare(f *testing.F) {
	f.Add([]byte(`[{"name":"a","description":"A. 2026-11-30"}]`), []byte(`[{"name":"a","description":"A. 2026-12-01"},{"name":"b"}]`), "hi")
	f.Fuzz(func(t *testing.T, before, after []byte, instructions string) {
		sb, sa := fuzzSurface(before, instructions), fuzzSurface(after, "")
		for _, s := range []Surface{sb, sa} {
			c, err := Compare(s, s, Options{Now: testNow})
			if err != nil {
				continue
			}
			if !c.Empty() {
				t.Fatalf("Compare(x, x) is not empty: %s", dump(c))
			}
			r := s
			r.Tools = slices.Clone(s.Tools)
			slices.Reverse(r.Tools)
			if c, err := Compare(s, r, Options{Now: testNow}); err != nil || !c.Empty() {
				t.Fatalf("reversed tools: %v, %v", c, err)
			}
		}
		for _, pair := range [][2]Surface{{sb, sa}, {sa, sb}} {
			c, err := Compare(pair[0], pair[1], Options{Now: testNow})
			if err != nil {
				continue
			}
			c.Kinds()
			if s := c.Summary(); strings.Trim(s, "abcdefghijklmnopqrstuvwxyz0123456789 ,;:.→") != "" {
				t.Fatalf("summary %q holds more than counts and words", s)
			}
			for _, b := range c.Breaking {
				if !strings.HasPrefix(b.Path, segment(b.Tool)) {
					t.Fatalf("breaking path %q does not start with tool %q", b.Path, b.Tool)
				}
			}
		}
	})
}
