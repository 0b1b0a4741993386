package history

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/history/diff"
	"github.com/probity-dev/probity/history/stats"
)

// seedMembers are the members of a tool the seeds' digest covers (stats package doc,
// What drift compares), in canonical (sorted) order.
var seedMembers = [...]string{"description", "inputSchema", "name"}

// seedSurface returns the seeds' view of a stored surface: each tool reduced to its
// name, description and input schema (members it lacks stay absent), and the digest
// of the reduced tools in canonical form, sorted, so that neither the order of the tools
// nor any other member changes it.
func seedSurface(tools []json.RawMessage) (diff.Surface, string, error) {
	reduced := make([]json.RawMessage, len(tools))
	var b bytes.Buffer
	for i, raw := range tools {
		var vals [len(seedMembers)][]byte
		err := eachMember(raw, func(key, v []byte) {
			k := string(key)
			if bytes.IndexByte(key, '\\') >= 0 {
				if json.Unmarshal(key, &k) != nil {
					return
				}
			} else {
				k = k[1 : len(k)-1]
			}
			for j, m := range seedMembers {
				if k == m {
					vals[j] = v
				}
			}
		})
		if err != nil {
			return diff.Surface{}, "", fmt.Errorf("tools[%d]: %w", i, err)
		}
		b.Reset()
		b.WriteByte('{')
		for j, m := range seedMembers {
			if vals[j] == nil {
				continue
			}
			if b.Len() > 1 {
				b.WriteByte(',')
			}
			b.WriteString(`"` + m + `":`)
			b.Write(vals[j])
		}
		b.WriteByte('}')
		canon, err := attest.Canonicalize(b.Bytes())
		if err != nil {
			return diff.Surface{}, "", fmt.Errorf("tools[%d]: %w", i, err)
		}
		reduced[i] = canon
	}
	sorted := make([][]byte, len(reduced))
	for i, t := range reduced {
		sorted[i] = t
	}
	slices.SortFunc(sorted, bytes.Compare)
	doc := append([]byte{'['}, bytes.Join(sorted, []byte{','})...)
	doc = append(doc, ']')
	return diff.Surface{Tools: reduced}, attest.Digest(doc), nil
}

// eachMember calls f with the key (with its quotes) and value of every member of the
// JSON object obj, in order, or fails when obj is not an object. obj has passed
// attest.CheckJSON (diff.Parse checks every surface), so the scan only finds the
// boundaries of values; it still never reads past obj.
func eachMember(obj []byte, f func(key, value []byte)) error {
	bad := errors.New("tool is not a well-formed JSON object")
	i := attest.SkipJSONSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return bad
	}
	i = attest.SkipJSONSpace(obj, i+1)
	for i < len(obj) && obj[i] != '}' {
		if obj[i] != '"' {
			return bad
		}
		kEnd := attest.SkipJSONString(obj, i)
		j := attest.SkipJSONSpace(obj, kEnd)
		if j >= len(obj) || obj[j] != ':' {
			return bad
		}
		vStart := attest.SkipJSONSpace(obj, j+1)
		vEnd := attest.SkipJSONValue(obj, vStart)
		// A member's value is always followed by at least the closing brace, so a value
		// that reaches the end of obj (attest.SkipJSONValue returns len(obj) for a string
		// or container that does not end) is truncated input, refused before f sees it.
		if vEnd <= vStart || vEnd >= len(obj) {
			return bad
		}
		f(obj[i:kEnd], obj[vStart:vEnd])
		i = attest.SkipJSONSpace(obj, vEnd)
		if i < len(obj) && obj[i] == ',' {
			i = attest.SkipJSONSpace(obj, i+1)
		}
	}
	if i >= len(obj) {
		return bad
	}
	return nil
}

// toolCounts returns the per-tool counts of a change between two seed surfaces.
func toolCounts(c *diff.Change) stats.ToolCounts {
	t := stats.ToolCounts{Added: len(c.Added), Removed: len(c.Removed)}
	for i := range c.Changed {
		tc := &c.Changed[i]
		if tc.DescriptionChanged {
			t.Descriptions++
			switch stats.ClassifyText(tc.DescriptionBefore, tc.DescriptionAfter) {
			case stats.TextNumbersOnly:
				t.DescriptionsNumbersOnly++
			case stats.TextWhitespaceOnly:
				t.DescriptionsWhitespaceOnly++
			}
		}
		if len(tc.ParamDescriptionsChanged) > 0 {
			t.ParamDescriptions++
		}
		if tc.InputSchemaChanged {
			t.Schemas++
		}
	}
	for _, b := range c.Breaking {
		if b.Kind != diff.BreakingParamTypeChanged {
			continue
		}
		if numberToInteger(b.Before, b.After) {
			t.NumberToInteger++
		} else {
			t.OtherTypeChanges++
		}
	}
	return t
}

// numberToInteger reports whether a declared type went from number to integer and
// nothing else changed ("number" → "integer", "number|null" → "integer|null").
func numberToInteger(before, after string) bool {
	names := strings.Split(before, "|")
	if !slices.Contains(names, "number") || slices.Contains(names, "integer") {
		return false
	}
	for i, n := range names {
		if n == "number" {
			names[i] = "integer"
		}
	}
	slices.SortFunc(names, func(a, b string) int {
		// The diff's order: sorted, "null" last.
		switch {
		case a == b:
			return 0
		case a == "null":
			return 1
		case b == "null":
			return -1
		}
		return strings.Compare(a, b)
	})
	return strings.Join(names, "|") == after
}
