package supply

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Bounds of an MCP bundle manifest.
const (
	MaxManifestSize  = 1 << 20 // bytes
	MaxManifestTools = 10000
)

// errNotBundle marks a manifest.json that is well-formed JSON but not an MCP bundle
// manifest (no manifest_version / dxt_version, or no server object).
var errNotBundle = errors.New("not an MCP bundle manifest")

func isNotBundle(err error) bool { return errors.Is(err, errNotBundle) }

// Manifest is the part of an MCP bundle manifest (manifest.json, formerly DXT) the
// checks read.
type Manifest struct {
	// ManifestVersion is manifest_version, or the older dxt_version.
	ManifestVersion string
	Name            string
	Version         string
	// ToolsGenerated is tools_generated: the server creates tools at run time, so
	// Tools is incomplete.
	ToolsGenerated bool
	// Tools are the raw tool objects (name, description, …), each a JSON object with a
	// string name.
	Tools []json.RawMessage
}

// ParseManifest parses an MCP bundle manifest. It accepts only a JSON object of at
// most MaxManifestSize bytes with a manifest_version (or dxt_version) and a server
// object, with at most MaxManifestTools tools; name, version and tools_generated, when
// present, must have their types.
func ParseManifest(data []byte) (*Manifest, error) {
	if len(data) > MaxManifestSize {
		return nil, fmt.Errorf("%w: manifest exceeds %d bytes", errMalformed, MaxManifestSize)
	}
	var raw struct {
		ManifestVersion json.RawMessage `json:"manifest_version"`
		DXTVersion      json.RawMessage `json:"dxt_version"`
		Server          json.RawMessage `json:"server"`
		Name            *string         `json:"name"`
		Version         *string         `json:"version"`
		ToolsGenerated  *bool           `json:"tools_generated"`
		Tools           json.RawMessage `json:"tools"`
	}
	if err := decodeJSON(data, '{', &raw); err != nil {
		return nil, err
	}
	m := &Manifest{}
	for _, v := range []json.RawMessage{raw.ManifestVersion, raw.DXTVersion} {
		if s := versionString(v); s != "" {
			m.ManifestVersion = s
			break
		}
	}
	if m.ManifestVersion == "" {
		return nil, fmt.Errorf("%w: no manifest_version or dxt_version", errNotBundle)
	}
	if s := bytes.TrimSpace(raw.Server); len(s) == 0 || s[0] != '{' {
		return nil, fmt.Errorf("%w: no server object", errNotBundle)
	}
	if raw.Name != nil {
		m.Name = clip(*raw.Name, 214)
	}
	if raw.Version != nil {
		m.Version = clip(*raw.Version, 100)
	}
	if raw.ToolsGenerated != nil {
		m.ToolsGenerated = *raw.ToolsGenerated
	}
	if t := bytes.TrimSpace(raw.Tools); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		if t[0] != '[' {
			return nil, fmt.Errorf("%w: tools is not an array", errMalformed)
		}
		// Count before decoding the elements: a cheap scan of the array's top level.
		if n := countTopLevel(t); n > MaxManifestTools {
			return nil, fmt.Errorf("%w: more than %d tools", errMalformed, MaxManifestTools)
		}
		var tools []json.RawMessage
		if err := json.Unmarshal(t, &tools); err != nil {
			return nil, fmt.Errorf("%w: tools: %v", errMalformed, err)
		}
		for i, tool := range tools {
			var probe struct {
				Name *string `json:"name"`
			}
			if tt := bytes.TrimSpace(tool); len(tt) == 0 || tt[0] != '{' {
				return nil, fmt.Errorf("%w: tools[%d] is not an object", errMalformed, i)
			}
			if err := json.Unmarshal(tool, &probe); err != nil || probe.Name == nil || *probe.Name == "" {
				return nil, fmt.Errorf("%w: tools[%d] has no string name", errMalformed, i)
			}
			m.Tools = append(m.Tools, tool)
		}
	}
	return m, nil
}

// versionString reads a manifest version: a non-empty string, or a number.
func versionString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return clip(strings.TrimSpace(s), 40)
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return clip(n.String(), 40)
	}
	return ""
}

// countTopLevel counts the elements of a JSON array (valid or not: an upper bound good
// enough to refuse huge arrays before decoding them).
func countTopLevel(arr []byte) int {
	depth, n, inStr, esc, empty := 0, 0, false, false, true
	for _, c := range arr {
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
			if depth == 1 {
				empty = false
			}
		case '[', '{':
			if depth == 1 {
				empty = false
			}
			depth++
		case ']', '}':
			depth--
		case ',':
			if depth == 1 {
				n++
			}
		case ' ', '\t', '\r', '\n':
		default:
			if depth == 1 {
				empty = false
			}
		}
	}
	if empty {
		return 0
	}
	return n + 1
}
