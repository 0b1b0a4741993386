package supply

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestParseManifest(t *testing.T) {
	tests := []struct {
		name    string
		json    string
		wantErr error // nil: accepted
		check   func(*Manifest) bool
	}{
		{"bundle", `{"manifest_version":"0.3","name":"n","version":"1.0.0","server":{"type":"node"},"tools":[{"name":"a","description":"A"},{"name":"b"}],"tools_generated":true}`, nil,
			func(m *Manifest) bool {
				return m.ManifestVersion == "0.3" && m.Name == "n" && m.Version == "1.0.0" && len(m.Tools) == 2 && m.ToolsGenerated
			}},
		{"older dxt_version", `{"dxt_version":"0.1","server":{"type":"python"}}`, nil,
			func(m *Manifest) bool { return m.ManifestVersion == "0.1" && len(m.Tools) == 0 && !m.ToolsGenerated }},
		{"numeric version", `{"manifest_version":1,"server":{}}`, nil, func(m *Manifest) bool { return m.ManifestVersion == "1" }},
		{"tools null", `{"manifest_version":"0.2","server":{},"tools":null}`, nil, func(m *Manifest) bool { return len(m.Tools) == 0 }},
		{"tool keeps its raw object", `{"manifest_version":"0.2","server":{},"tools":[{"name":"x","description":"<IMPORTANT>","extra":[1,2]}]}`, nil,
			func(m *Manifest) bool {
				return string(m.Tools[0]) == `{"name":"x","description":"<IMPORTANT>","extra":[1,2]}`
			}},
		{"chrome extension manifest", `{"manifest_version":3,"name":"ext","version":"1.0","action":{}}`, errNotBundle, nil},
		{"no version", `{"name":"x","server":{}}`, errNotBundle, nil},
		{"empty version", `{"manifest_version":"","server":{}}`, errNotBundle, nil},
		{"server not an object", `{"manifest_version":"0.3","server":"node"}`, errNotBundle, nil},
		{"server null", `{"manifest_version":"0.3","server":null}`, errNotBundle, nil},
		{"not JSON", `manifest`, errMalformed, nil},
		{"array", `[{"manifest_version":"0.3","server":{}}]`, errMalformed, nil},
		{"name not a string", `{"manifest_version":"0.3","server":{},"name":5}`, errMalformed, nil},
		{"tools not an array", `{"manifest_version":"0.3","server":{},"tools":{}}`, errMalformed, nil},
		{"tool not an object", `{"manifest_version":"0.3","server":{},"tools":["a"]}`, errMalformed, nil},
		{"tool without a name", `{"manifest_version":"0.3","server":{},"tools":[{"description":"d"}]}`, errMalformed, nil},
		{"tools_generated not a bool", `{"manifest_version":"0.3","server":{},"tools_generated":"yes"}`, errMalformed, nil},
		{"trailing data", `{"manifest_version":"0.3","server":{}} {}`, errMalformed, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseManifest([]byte(tt.json))
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil || !tt.check(m) {
				t.Fatalf("got %+v, %v", m, err)
			}
		})
	}
}

func TestParseManifestBounds(t *testing.T) {
	tool := `{"name":"t"}`
	many := `{"manifest_version":"0.3","server":{},"tools":[` + strings.Repeat(tool+",", MaxManifestTools) + tool + `]}`
	if _, err := ParseManifest([]byte(many)); !errors.Is(err, errMalformed) || !strings.Contains(err.Error(), fmt.Sprint(MaxManifestTools)) {
		t.Errorf("%d tools: %v", MaxManifestTools+1, err)
	}
	exact := `{"manifest_version":"0.3","server":{},"tools":[` + strings.Repeat(tool+",", MaxManifestTools-1) + tool + `]}`
	if m, err := ParseManifest([]byte(exact)); err != nil || len(m.Tools) != MaxManifestTools {
		t.Errorf("%d tools: %v", MaxManifestTools, err)
	}
	big := `{"manifest_version":"0.3","server":{},"description":"` + strings.Repeat("x", MaxManifestSize) + `"}`
	if _, err := ParseManifest([]byte(big)); !errors.Is(err, errMalformed) {
		t.Errorf("oversize: %v", err)
	}
	for arr, want := range map[string]int{`[]`: 0, ` [ ] `: 0, `[1]`: 1, `[{"a":[1,2]},"x,y",3]`: 3, `[[],[]]`: 2} {
		if got := countTopLevel([]byte(arr)); got != want {
			t.Errorf("countTopLevel(%s) = %d, want %d", arr, got, want)
		}
	}
}

func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(`{"manifest_version":"0.3","server":{},"tools":[{"name":"a"}],"tools_generated":true}`))
	f.Add([]byte(`{"dxt_version":"0.1","server":{"type":"node"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseManifest(data)
		if err == nil && (m.ManifestVersion == "" || len(m.Tools) > MaxManifestTools) {
			t.Fatalf("accepted %+v", m)
		}
	})
}
