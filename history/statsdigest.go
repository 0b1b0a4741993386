package history

import (
	"bytes"
	"encoding/json"
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
	for i, raw := range tools {
		var members map[string]json.RawMessage
		if err := json.Unmarshal(raw, &members); err != nil {
			return diff.Surface{}, "", fmt.Errorf("tools[%d]: %w", i, err)
		}
		var b bytes.Buffer
		b.WriteByte('{')
		for _, m := range seedMembers {
			v, ok := members[m]
			if !ok {
				continue
			}
			if b.Len() > 1 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%q:", m)
			b.Write(v)
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
