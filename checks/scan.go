package checks

import "encoding/json"

// TextScan is what the hidden_instructions detectors found in one text or one tool,
// for callers outside this package (the supply-chain checks scan READMEs and bundle
// manifests with it) that have no Observation to evaluate.
type TextScan struct {
	// Findings counts every finding, including those past the evidence cap.
	Findings int
	// Invisible and Directed say which kinds were found: invisible characters, and
	// model-directed text (override phrases, pseudo-system tags, concealment from the
	// user, sensitive paths next to an exfiltration directive).
	Invisible, Directed bool
	// Evidence holds the first findings (at most 64), escaped and bounded exactly as the
	// hidden_instructions check's evidence.
	Evidence []Evidence
	// Incomplete says the text was too large to be scanned whole for model-directed text.
	Incomplete bool
}

func (s *hiddenScan) result() TextScan {
	return TextScan{
		Findings:   s.findings,
		Invisible:  s.kinds&kindInvisible != 0,
		Directed:   s.kinds&kindDirected != 0,
		Evidence:   s.evidence,
		Incomplete: s.incomplete,
	}
}

// ScanText runs the hidden_instructions detectors (invisible characters and
// model-directed text, as documented on that check) over text; field names the text in
// the evidence, e.g. "readme".
func ScanText(field, text string) TextScan {
	s := &hiddenScan{}
	s.scanText(-1, field, text, true)
	return s.result()
}

// ScanTool runs the hidden_instructions detectors over one raw tool object exactly as
// the check does: its name, title, description, annotations.title, every description
// and title at any depth of its input and output schemas, and (for invisible characters
// only) its parameter names. The evidence names the tool by its escaped name, or as
// "tools[index]" when it has no string name.
func ScanTool(index int, raw json.RawMessage) TextScan {
	s := &hiddenScan{}
	s.scanTool(index, raw)
	return s.result()
}

// DestructiveTool applies the destructive_annotations rule to one raw tool: destructive
// reports whether the tool is named like a destructive operation (delete_*, drop_*,
// exec*, run_command and the like); when it is and does not declare destructiveHint
// true, missing is the evidence saying so. A tool that is not an object or has no string
// name is neither.
func DestructiveTool(raw json.RawMessage) (destructive bool, missing *Evidence) {
	tm := parseToolMeta(raw)
	if !tm.hasName {
		return false, nil
	}
	seg := destructiveSegment(tm.name)
	if seg == "" {
		return false, nil
	}
	if tm.destructive != nil && *tm.destructive {
		return true, nil
	}
	note := "named like a destructive operation (" + seg + ") but destructiveHint is "
	if tm.destructive == nil {
		note += "absent"
	} else {
		note += "false"
	}
	return true, &Evidence{Tool: toolLabel(0, tm.name, true), Field: "annotations.destructiveHint", Note: note}
}

// Escape returns s escaped in the manner of strconv.QuoteToASCII without the quotes
// (invalid bytes as \x escapes), cut to at most n bytes with "..." marking the cut; it
// is how every check renders third-party text.
func Escape(s string, n int) string { return escape(s, n) }
