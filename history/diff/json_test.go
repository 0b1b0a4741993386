package diff

import "testing"

// TestRawToolNameTruncated: rawToolName reads the name past escaped quotes and skipped
// values, and every truncated prefix of a tool gives an error or the name, never a
// panic from an index past the end (attest.SkipJSONString and SkipJSONValue return
// len(raw) for a string or container that does not end).
func TestRawToolNameTruncated(t *testing.T) {
	tool := ` {"description":"say \"name\": x\\","inputSchema":{"properties":{"name":{"type":"string"}}},"name":"tool_a"}`
	if name, err := rawToolName([]byte(tool)); err != nil || name != "tool_a" {
		t.Fatalf("rawToolName = %q, %v", name, err)
	}
	for _, bad := range []string{`{"name`, `{"n\"ame":`, `{"a":"x\"`, `{"a":{"b":"}"`, `{"a":[1,2`, `{"a":1`, `{"name":"x`, `{"name":`} {
		if name, err := rawToolName([]byte(bad)); err == nil {
			t.Errorf("rawToolName(%q) = %q, accepted it", bad, name)
		}
	}
	for n := range len(tool) {
		cut := []byte(tool[:n])
		name, err := rawToolName(cut)
		if err == nil && name != "tool_a" {
			t.Errorf("rawToolName(%q) = %q", cut, name)
		}
	}
}
